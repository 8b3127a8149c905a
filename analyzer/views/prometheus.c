/*
 * "export --format prometheus": the traces' figures in Prometheus's text
 * exposition format (version 0.0.4), as node-exporter's textfile
 * collector and "gpuprof serve" (cmd/serve.c) hand them on.  Every value
 * is a gauge: it describes the traces (a sampling window's, say), not a
 * count since the process started.
 *
 * Label sets are bounded whatever the traces hold:
 *   device     one per GPU (cuda:N as the first process numbered it)
 *   kernel     the top kernels by GPU time (--top N, default 10, at most
 *              100), by short name (cut to 120 bytes), and "other" for the
 *              rest: at most N + 1 values
 *   direction  the copy kinds (HtoD, DtoH, DtoD, HtoH, PtoP, ...): at most
 *              a dozen
 *   cause      the causes of lost records (docs/FORMAT.md): eight
 * No label names a process, a file, a stack or a stream.  Runs offline only.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/formats.h"
#include "views/pprof.h"

#define LABEL_MAX 120              /* bytes of a kernel's name in its label */

/* Bytes of s up to max, not cutting a UTF-8 sequence. */
static size_t cut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return n;
}

/* A label value: backslash, quote and newline escaped, cut at max bytes. */
static int label(struct ga_buf *b, const char *s, size_t max)
{
	size_t n = cut(s, max), i;
	for (i = 0; i < n; i++) {
		const char *e = s[i] == '\\' ? "\\\\" : s[i] == '"' ? "\\\"" : s[i] == '\n' ? "\\n" :
										   NULL;

		if (e ? ga_buf_put(b, e, strlen(e)) : ga_buf_put(b, s + i, 1))
			return -1;
	}
	return 0;
}

static int head(struct ga_buf *b, const char *name, const char *help)
{
	return ga_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static int sample_u(struct ga_buf *b, const char *name, const char *lname, const char *lval,
		    uint64_t v)
{
	if (!lname)
		return ga_buf_printf(b, "%s %" PRIu64 "\n", name, v);
	return ga_buf_printf(b, "%s{%s=\"", name, lname) || label(b, lval, LABEL_MAX) ||
	       ga_buf_printf(b, "\"} %" PRIu64 "\n", v);
}

static int sample_s(struct ga_buf *b, const char *name, const char *lname, const char *lval,
		    uint64_t ns)
{
	if (!lname)
		return ga_buf_printf(b, "%s %" PRIu64 ".%09" PRIu64 "\n", name, ns / 1000000000u,
				     ns % 1000000000u);
	return ga_buf_printf(b, "%s{%s=\"", name, lname) || label(b, lval, LABEL_MAX) ||
	       ga_buf_printf(b, "\"} %" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000u,
			     ns % 1000000000u);
}

/* The kernels by label: the top o->top distinct short names, then "other". */
struct klab {
	uint32_t str;              /* strtab id of the label value */
	uint64_t ns, count;
};

static int kernels(struct ga_analysis *an, unsigned top, struct ga_buf *b)
{
	struct ga_model *m = &an->m;
	uint32_t *ord = ga_model_order_kernels(m);
	struct klab *k = calloc((size_t)top + 1, sizeof(*k));
	struct ga_map lm = { 0 };
	size_t i, nk = 0;
	int rc = -1;

	if (!ord || !k)
		goto out;
	for (i = 0; i < m->nkstats; i++) {
		const struct ga_kstat *s = &m->kstats[ord[i]];
		const char *name = ga_strtab_short(&m->strs, s->name);
		size_t len = cut(name, LABEL_MAX);
		/* Names that differ only past the cut share a label. */
		uint32_t str = ga_strtab_intern(&m->strs, name, len), *slot;
		int ins;

		/* A kernel named "other" is not the rest. */
		if (str != GA_STR_NOMEM && !strcmp(ga_model_str(m, str), "other"))
			str = ga_strtab_intern(&m->strs, "other (kernel)", 14);
		if (str == GA_STR_NOMEM)
			goto out;
		ins = ga_map_insert(&lm, str, 0, &slot);
		if (ins < 0)
			goto out;
		if (ins) {
			/* Beyond the top: "other" (index top). */
			*slot = nk < top ? (uint32_t)nk++ : top;
			if (*slot < top)
				k[*slot].str = str;
		}
		k[*slot].ns += s->total;
		k[*slot].count += s->count;
	}
	if (head(b, "gpuprof_kernel_seconds",
		 "GPU time of kernels, the top kernels by name and \"other\" for the rest."))
		goto out;
	for (i = 0; i <= top; i++)
		if ((i < nk || (i == top && k[top].count)) &&
		    sample_s(b, "gpuprof_kernel_seconds", "kernel",
			     i == top ? "other" : ga_model_str(m, k[i].str), k[i].ns))
			goto out;
	if (head(b, "gpuprof_kernel_launches", "Kernels that ran, by the same kernel label."))
		goto out;
	for (i = 0; i <= top; i++)
		if ((i < nk || (i == top && k[top].count)) &&
		    sample_u(b, "gpuprof_kernel_launches", "kernel",
			     i == top ? "other" : ga_model_str(m, k[i].str), k[i].count))
			goto out;
	rc = 0;
out:
	free(ord);
	free(k);
	ga_map_free(&lm);
	return rc;
}

static int copies(struct ga_model *m, struct ga_buf *b)
{
	static const struct {
		const char *name, *help;
		int what;
	} fam[] = {
		{ "gpuprof_memcpy_seconds", "GPU time of memory copies, by direction.", 0 },
		{ "gpuprof_memcpy_operations", "Memory copies, by direction.", 1 },
		{ "gpuprof_memcpy_bytes", "Bytes copied, by direction.", 2 },
	};
	char kb[16];
	size_t f;
	unsigned k;

	for (f = 0; f < 3; f++) {
		if (head(b, fam[f].name, fam[f].help))
			return -1;
		for (k = 0; k < GA_COPY_KIND_MAX; k++) {
			const struct ga_memstat *c = &m->copy[k];
			const char *dir = k == GA_COPY_STAGED_PEER ? "PtoP_staged" :
					  ga_model_copy_kind(k, kb, sizeof(kb));
			int rc;

			if (!c->count)
				continue;
			rc = fam[f].what == 0 ? sample_s(b, fam[f].name, "direction", dir, c->total) :
			     sample_u(b, fam[f].name, "direction", dir,
				      fam[f].what == 1 ? c->count : c->bytes);
			if (rc)
				return -1;
		}
	}
	return head(b, "gpuprof_memset_seconds", "GPU time of memsets.") ||
	       sample_s(b, "gpuprof_memset_seconds", NULL, NULL, m->memset_st.total) ||
	       head(b, "gpuprof_memset_operations", "Memsets.") ||
	       sample_u(b, "gpuprof_memset_operations", NULL, NULL, m->memset_st.count) ||
	       head(b, "gpuprof_memset_bytes", "Bytes set by memsets.") ||
	       sample_u(b, "gpuprof_memset_bytes", NULL, NULL, m->memset_st.bytes);
}

/* Time the windows of process proc cover, 0 when it has none. */
static uint64_t window_ns(const struct ga_model *m, uint32_t proc)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < m->nwindows; i++)
		if (m->windows[i].proc == proc && m->windows[i].end > m->windows[i].start)
			t += m->windows[i].end - m->windows[i].start;
	return t;
}

int ga_prom_write(struct ga_analysis *an, const struct ga_prom_opts *o, struct ga_buf *b)
{
	struct ga_model *m = &an->m;
	uint64_t span = m->last_end > m->first_start ? m->last_end - m->first_start : 0;
	uint64_t win = 0, lost_other;
	unsigned top = o->top ? o->top : GA_PROM_TOP_DEFAULT;
	char lab[32];
	size_t i;

	if (top > GA_PROM_TOP_MAX)
		top = GA_PROM_TOP_MAX;
	for (i = 0; i < m->nprocs; i++)
		win += window_ns(m, (uint32_t)i);
	if (head(b, "gpuprof_gpu_busy_ratio",
		 "Fraction of the time covered (the windows, else first to last GPU activity) "
		 "in which the GPU ran work of the traced processes."))
		return -1;
	for (i = 0; i < m->ndevs; i++) {
		const struct ga_device *d = &m->devs[i];
		uint64_t den = window_ns(m, d->proc);

		if (d->dead || !d->count)
			continue;
		if (!den)
			den = span;
		snprintf(lab, sizeof(lab), "cuda:%u", d->id);
		if (ga_buf_printf(b, "gpuprof_gpu_busy_ratio{device=\"%s\"} %.6f\n", lab,
				  den ? (double)d->busy_ns / (double)den : 0.0))
			return -1;
	}
	if (kernels(an, top, b) || copies(m, b))
		return -1;
	if (head(b, "gpuprof_records_lost", "Records the recorder lost, by cause."))
		return -1;
	/* Chunk-header counts without a cause go with "other". */
	lost_other = m->lost[0] + ga_model_lost_unattributed(m);
	for (i = 0; i < GP_LOST_CAUSE_COUNT; i++)
		if (sample_u(b, "gpuprof_records_lost", "cause", ga_model_lost_key((unsigned)i),
			     i ? m->lost[i] : lost_other))
			return -1;
	if (head(b, "gpuprof_recorder_overhead_seconds",
		 "Time CUPTI reported spending on its own work (buffer flushes, "
		 "instrumentation) in the traced processes.") ||
	    sample_s(b, "gpuprof_recorder_overhead_seconds", NULL, NULL, m->overhead_ns) ||
	    head(b, "gpuprof_windows", "Windows the figures cover (gpuprof start/stop, --sample).") ||
	    sample_u(b, "gpuprof_windows", NULL, NULL, o->windows ? o->windows : m->nwindows) ||
	    head(b, "gpuprof_window_seconds", "Time the windows cover, all processes summed.") ||
	    sample_s(b, "gpuprof_window_seconds", NULL, NULL, win) ||
	    head(b, "gpuprof_processes", "Traced processes the figures come from.") ||
	    sample_u(b, "gpuprof_processes", NULL, NULL, m->nprocs))
		return -1;
	return 0;
}

/* ---- the export format ---- */

static int fmt_end(struct ga_export *e)
{
	struct ga_prom_opts o = { .top = GA_PROM_TOP_DEFAULT };
	struct ga_buf b = { 0 };
	int rc = ga_prom_write(e->an, &o, &b);

	/* A failed write shows at the output's close, which says so. */
	if (!rc && b.len && fwrite(b.p, 1, b.len, e->out) != b.len)
		rc = 0;
	ga_buf_free(&b);
	return rc;
}

const struct ga_format ga_format_prometheus = {
	.name = "prometheus",
	.help = "Prometheus text exposition (node-exporter textfile collector):\n"
		"GPU busy, top kernels, copies, losses, windows (docs/USAGE.md,\n"
		"Fleet mode, lists the metrics and their labels)",
	.end = fmt_end,
};
