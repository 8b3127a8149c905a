/*
 * The report's first section: findings (model/findings.h), most time at
 * stake first.  --findings=top (the default) lists those above info, five
 * at most; --findings=all lists every one; --findings=none leaves the
 * section out.  Each finding reads: severity, rule, time at stake and its
 * share of the run; what was seen; where (launch sites, NVTX range,
 * stream, process); the evidence; how the time at stake was estimated.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "views/text.h"

#define TOP 5

static int want(const struct ga_text *r)
{
	/* Summaries without the findings' state (an older version's) have none. */
	return r->o.findings != GA_FINDINGS_NONE && (!r->m->sum_parts || r->an->fd.settled);
}

/* "LABEL from SITE", the label or the site alone, or NULL for none. */
static const char *place(const struct ga_text *r, uint32_t site, uint32_t label, char *buf,
			 size_t n)
{
	char l[4 * GA_TEXT_NAME_WIDTH + 8], st[4 * GA_TEXT_NAME_WIDTH + 8];

	if (!site && !label)
		return NULL;
	if (!site)
		return ga_text_name_cut(r, buf, n, ga_model_str(r->m, label));
	if (!label)
		return ga_text_name_cut(r, buf, n, ga_model_str(r->m, site));
	snprintf(buf, n, "%s from %s", ga_text_name_cut(r, l, sizeof(l), ga_model_str(r->m, label)),
		 ga_text_name_cut(r, st, sizeof(st), ga_model_str(r->m, site)));
	return buf;
}

static void print_where(const struct ga_text *r, const struct ga_where *w, FILE *out)
{
	char b1[8 * GA_TEXT_NAME_WIDTH + 16], b2[8 * GA_TEXT_NAME_WIDTH + 16];
	char b3[4 * GA_TEXT_NAME_WIDTH + 8], t[32];
	const char *before = place(r, w->site_before, w->label_before, b1, sizeof(b1));
	const char *after = place(r, w->site_after, w->label_after, b2, sizeof(b2));

	fprintf(out, "     where: %s", ga_fmt_time(t, sizeof(t), w->ns));
	if (w->count > 1 || !w->step)
		fprintf(out, " in %" PRIu64, w->count);
	if (w->step)
		fprintf(out, " in step %u", w->step - 1);
	if (w->call)
		fprintf(out, ", host in %s", ga_model_str(r->m, w->call));
	if (w->call && w->site_call)
		fprintf(out, " from %s",
			ga_text_name_cut(r, b3, sizeof(b3), ga_model_str(r->m, w->site_call)));
	fputc('\n', out);
	if (before && after)
		fprintf(out, "       after  %s\n", before);
	if (after)
		fprintf(out, "       %s%s\n", before ? "before " : "", after);
	if (w->nvtx || w->stream != UINT32_MAX || (w->proc != UINT32_MAX && r->m->nprocs > 1)) {
		int sep = 0;

		fputs("       ", out);
		if (w->nvtx) {
			fprintf(out, "NVTX range \"%s\"",
				ga_text_name_cut(r, b1, sizeof(b1), ga_model_str(r->m, w->nvtx)));
			sep = 1;
		}
		if (w->stream != UINT32_MAX) {
			fprintf(out, "%sstream %u", sep ? ", " : "", w->stream);
			sep = 1;
		}
		if (w->proc != UINT32_MAX && r->m->nprocs > 1)
			fprintf(out, "%s%s", sep ? ", " : "",
				ga_ranks_proc_name(r->m, w->proc, b1, sizeof(b1)));
		fputc('\n', out);
	}
}

/* An evidence time in range whatever a summary held: a double of 2^64 has no uint64_t. */
static uint64_t ns_of(double v)
{
	if (!(v > 0))
		return 0;
	return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

static void print_evidence(const struct ga_finding *f, FILE *out)
{
	fputs("     evidence:", out);
	for (size_t i = 0; i < f->nev; i++) {
		const struct ga_evidence *e = &f->ev[i];
		char name[48], v[48];
		size_t len = strlen(e->name);

		snprintf(name, sizeof(name), "%s", e->name);
		if (len > 3 && !strcmp(name + len - 3, "_ns"))
			name[len - 3] = 0;
		for (char *p = name; *p; p++)
			if (*p == '_')
				*p = ' ';
		if (e->unit == 'n')
			ga_fmt_time(v, sizeof(v), ns_of(e->v));
		else if (e->unit == 'b')
			ga_fmt_bytes(v, sizeof(v), e->v);
		else if (e->unit == '%')
			snprintf(v, sizeof(v), "%.1f%%", e->v);
		else if (e->unit == 'f')
			snprintf(v, sizeof(v), "%.2f", e->v);
		else
			snprintf(v, sizeof(v), "%.0f", e->v);
		fprintf(out, "%s %s %s", i ? "," : "", name, v);
	}
	fputc('\n', out);
}

void ga_text_finding(const struct ga_text *r, const struct ga_finding *f, size_t n, FILE *out)
{
	const struct ga_rule_info *ri = &ga_rules[f->rule];
	char t[32];

	fprintf(out, "%2zu. [%s] %s: %s\n", n, ga_severity_name(f->severity), ri->id, ri->title);
	if (f->stake_ns)
		fprintf(out, "     at stake: %s (%.1f%% of the run)\n",
			ga_fmt_time(t, sizeof(t), f->stake_ns), f->stake_pct);
	else
		fputs("     at stake: not estimated\n", out);
	fprintf(out, "     %s\n", f->summary);
	for (size_t i = 0; i < f->nwhere; i++)
		print_where(r, &f->where[i], out);
	if (f->nev)
		print_evidence(f, out);
	fprintf(out, "     estimate: %s\n", ri->how);
	if (f->incomplete)
		fputs("     (the trace lost records: this may be less than what happened)\n", out);
}

static int print(struct ga_text *r, FILE *out)
{
	const struct ga_findings *fd = &r->an->fd;
	size_t shown = 0, above = 0;

	if (ga_analysis_findings(r->an))
		return -1;
	for (size_t i = 0; i < fd->nf; i++)
		above += fd->f[i].severity > GA_SEV_INFO;
	fputs("Findings (most time at stake first):\n", out);
	for (size_t i = 0; i < fd->nf; i++) {
		const struct ga_finding *f = &fd->f[i];

		if (r->o.findings == GA_FINDINGS_TOP &&
		    (f->severity == GA_SEV_INFO || shown == TOP))
			continue;
		ga_text_finding(r, f, ++shown, out);
	}
	if (!fd->nf)
		fputs("no findings\n", out);
	else if (!shown)
		fprintf(out, "no findings above info; %zu at info (--findings=all lists them)\n",
			fd->nf);
	else if (shown < fd->nf)
		fprintf(out, "%s%zu more finding%s%s (--findings=all lists every one)\n",
			shown ? "… " : "", fd->nf - shown, fd->nf - shown == 1 ? "" : "s",
			above > shown ? "" : " at info");
	return 0;
}

const struct ga_text_section ga_text_findings = {
	.name = "findings",
	.want = want,
	.print = print,
};
