/*
 * The "findings" member of "export --format json": every finding of
 * model/findings.h, most time at stake first (docs/JSON.md).  Runs
 * offline only.
 */
#include <math.h>

#include "views/formats.h"

static void str_or_null(struct ga_jw *w, const struct ga_model *m, const char *key, uint32_t id)
{
	ga_jw_key(w, key);
	if (id)
		ga_jw_cstr(w, ga_model_str(m, id));
	else
		ga_jw_null(w);
}

static void where(struct ga_jw *w, const struct ga_model *m, const struct ga_where *p)
{
	char b[192];

	ga_jw_obj(w, GA_JW_SPACED);
	ga_jw_ku64(w, "ns", p->ns);
	ga_jw_ku64(w, "count", p->count);
	str_or_null(w, m, "site_before", p->site_before);
	str_or_null(w, m, "activity_before", p->label_before);
	str_or_null(w, m, "site_after", p->site_after);
	str_or_null(w, m, "activity_after", p->label_after);
	str_or_null(w, m, "host_call", p->call);
	str_or_null(w, m, "site_call", p->site_call);
	str_or_null(w, m, "nvtx", p->nvtx);
	ga_jw_key(w, "stream");
	if (p->stream != UINT32_MAX)
		ga_jw_u64(w, p->stream);
	else
		ga_jw_null(w);
	ga_jw_key(w, "process");
	if (p->proc != UINT32_MAX)
		ga_jw_cstr(w, ga_ranks_proc_name(m, p->proc, b, sizeof(b)));
	else
		ga_jw_null(w);
	ga_jw_key(w, "step");
	if (p->step)
		ga_jw_u64(w, p->step - 1);
	else
		ga_jw_null(w);
	ga_jw_end(w);
}

int ga_json_findings(struct ga_jw *w, struct ga_analysis *an)
{
	const struct ga_findings *fd = &an->fd;
	const struct ga_model *m = &an->m;

	if (m->sum_parts && !fd->settled) {
		/* Summaries of an older version hold no findings' state. */
		ga_jw_key(w, "findings");
		ga_jw_null(w);
		return 0;
	}
	if (ga_analysis_findings(an))
		return -1;
	ga_jw_key(w, "findings");
	ga_jw_arr(w, GA_JW_LINES);
	for (size_t i = 0; i < fd->nf; i++) {
		const struct ga_finding *f = &fd->f[i];
		const struct ga_rule_info *ri = &ga_rules[f->rule];

		ga_jw_obj(w, GA_JW_KEYLINES);
		ga_jw_kcstr(w, "rule", ri->id);
		ga_jw_kcstr(w, "title", ri->title);
		ga_jw_kcstr(w, "severity", ga_severity_name(f->severity));
		ga_jw_ku64(w, "stake_ns", f->stake_ns);
		ga_jw_key(w, "stake_pct");
		ga_jw_rawf(w, "%.2f", f->stake_pct);
		ga_jw_kcstr(w, "estimate", ri->how);
		ga_jw_kcstr(w, "threshold", ri->threshold);
		ga_jw_kcstr(w, "subject", f->subject);
		ga_jw_kcstr(w, "summary", f->summary);
		ga_jw_kbool(w, "incomplete", f->incomplete);
		ga_jw_key(w, "evidence");
		ga_jw_obj(w, GA_JW_SPACED);
		for (size_t j = 0; j < f->nev; j++) {
			double v = f->ev[j].v;

			ga_jw_key(w, f->ev[j].name);
			if (f->ev[j].unit == '%' || f->ev[j].unit == 'f')
				ga_jw_rawf(w, "%.2f", v);
			else
				ga_jw_u64(w, v > 0 ? (uint64_t)llround(v) : 0);
		}
		ga_jw_end(w);
		ga_jw_key(w, "where");
		ga_jw_arr(w, GA_JW_LINES);
		for (size_t j = 0; j < f->nwhere; j++)
			where(w, m, &f->where[j]);
		ga_jw_end(w);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	return 0;
}
