/*
 * The GPU over time (model/gpusamples.h), for traces recorded with
 * --gpu-metrics or --gpu-telemetry: per device and source, each metric's
 * time-weighted average, minimum and maximum and how many samples back
 * them; the time the clocks were held back and why; then the metrics
 * averaged over the NVTX ranges and over the kernels that took the most
 * time, with the samples behind each row.  Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views/text.h"

#define ROW_METRICS 4              /* metrics per row of the range and kernel tables */

static int want(const struct ga_text *r)
{
	return ga_gs_any(&r->an->gs);
}

/*
 * Metrics whose values ended before their series did: said, not left to
 * the Samples column.  The recorder stops calling an NVML getter that was
 * slower than 2 ms twice (cupti/telemetry.h GP_TELEM_SLOW_US).
 */
static void stopped(struct ga_text *r, const struct ga_gs_series *s, FILE *out)
{
	const char *sep = "";
	char b[2][48];

	for (uint32_t i = 0; i < s->n; i++) {
		const struct ga_gs_metric *mt = &s->m[i];
		struct ga_gs_unit u;

		if (!mt->samples || mt->samples >= s->ns || mt->last_end >= s->last)
			continue;
		ga_gs_describe(ga_model_str(r->m, mt->name), &u);
		fprintf(out, "%s%s: no values after %s of %s (%" PRIu64 " of %zu samples)", sep,
			(int)i == s->reasons_at ? "clock reasons" : u.label,
			ga_fmt_time(b[0], sizeof(b[0]), mt->last_end - s->first),
			ga_fmt_time(b[1], sizeof(b[1]), s->last - s->first), mt->samples, s->ns);
		sep = "; ";
	}
	if (!*sep)
		return;
	fputs(s->source == GP_GPU_SRC_NVML ? " (the recorder stops calling an NVML getter slower "
					     "than 2 ms twice)\n" :
					     "\n",
	      out);
}

static int series_table(struct ga_text *r, const struct ga_gs_series *s, FILE *out)
{
	struct ga_table t;
	char b[3][48];
	int rc = 0;

	fprintf(out, "%s, %s", ga_model_str(r->m, s->label), ga_gs_source(s->source));
	if (s->interval_ns)
		fprintf(out, " every %s", ga_fmt_time(b[0], sizeof(b[0]), s->interval_ns));
	fprintf(out, ", %zu sample%s over %s%s%s:\n", s->ns, s->ns == 1 ? "" : "s",
		ga_fmt_time(b[1], sizeof(b[1]), s->last > s->first ? s->last - s->first : 0),
		s->status ? "; " : "", ga_gs_status(s->status));
	if (!s->ns)
		return 0;
	ga_table_init(&t, 6);
	ga_table_col(&t, 0, "Metric", 0, 0);
	ga_table_col(&t, 1, "Unit", 0, 0);
	ga_table_col(&t, 2, "Average", 1, 0);
	ga_table_col(&t, 3, "Min", 1, 0);
	ga_table_col(&t, 4, "Max", 1, 0);
	ga_table_col(&t, 5, "Samples", 1, 0);
	for (uint32_t i = 0; i < s->n && !rc; i++) {
		const struct ga_gs_metric *mt = &s->m[i];
		struct ga_gs_unit u;

		if ((int)i == s->reasons_at)
			continue;
		ga_gs_describe(ga_model_str(r->m, mt->name), &u);
		rc |= ga_table_add(&t, u.label);
		rc |= ga_table_add(&t, u.unit);
		rc |= ga_table_add(&t, ga_text_avg(b[0], sizeof(b[0]), mt->avg, u.scale));
		rc |= ga_table_add(&t, ga_text_avg(b[1], sizeof(b[1]), mt->min, u.scale));
		rc |= ga_table_add(&t, ga_text_avg(b[2], sizeof(b[2]), mt->max, u.scale));
		rc |= ga_table_addf(&t, "%" PRIu64, mt->samples);
	}
	if (!rc)
		ga_table_print(&t, out);
	ga_table_free(&t);
	if (!rc && s->reasons_at >= 0 && s->sampled_ns) {
		fprintf(out, "clocks held back %s of %s (%.1f%%)",
			ga_fmt_time(b[0], sizeof(b[0]), s->throttled_ns),
			ga_fmt_time(b[1], sizeof(b[1]), s->sampled_ns),
			100.0 * (double)s->throttled_ns / (double)s->sampled_ns);
		for (unsigned bit = 0, first = 1; bit < GA_GS_REASONS; bit++)
			if (s->reason_ns[bit] && ((1ull << bit) & GA_GS_THROTTLE_MASK)) {
				fprintf(out, "%s%s %s", first ? ": " : ", ", ga_gs_reason(bit),
					ga_fmt_time(b[2], sizeof(b[2]), s->reason_ns[bit]));
				first = 0;
			}
		fputc('\n', out);
	}
	if (!rc)
		stopped(r, s, out);
	return rc ? -1 : 0;
}

/* Averages of one table (ranges or kernels) for series si: the first rows by time. */
static int attr_table(struct ga_text *r, const char *what, const struct ga_gs_attr *a, size_t n,
		      size_t si, FILE *out)
{
	const struct ga_gpusamples *g = &r->an->gs;
	const struct ga_gs_series *s = &g->series[si];
	uint32_t cols[ROW_METRICS];
	unsigned nc = 0;
	struct ga_table t;
	char b[64], name[GA_TEXT_NAME_WIDTH * 4 + 8], titles[ROW_METRICS][96];
	size_t i, lo, rows = 0, limit = r->o.top > 0 ? (size_t)r->o.top : SIZE_MAX;
	int rc = 0;

	for (lo = 0; lo < n && a[lo].series != si; lo++)
		;
	if (lo == n)
		return 0;
	for (uint32_t i2 = 0; i2 < s->n && nc < ROW_METRICS; i2++)
		if ((int)i2 != s->reasons_at && s->m[i2].samples)
			cols[nc++] = i2;
	ga_table_init(&t, 4 + (int)nc);
	ga_table_col(&t, 0, "Time", 1, 0);
	ga_table_col(&t, 1, what[0] == 'k' ? "Runs" : "Instances", 1, 0);
	ga_table_col(&t, 2, "Samples", 1, 0);
	for (unsigned c = 0; c < nc; c++) {
		struct ga_gs_unit u;

		/* The table keeps the pointer: one buffer per column. */
		ga_gs_describe(ga_model_str(r->m, s->m[cols[c]].name), &u);
		snprintf(titles[c], sizeof(titles[c]), "%s%s%s", u.label, *u.unit ? " " : "", u.unit);
		ga_table_col(&t, 3 + (int)c, titles[c], 1, 1);
	}
	ga_table_col(&t, 3 + (int)nc, what[0] == 'k' ? "Kernel" : "Range", 0, 0);
	for (i = lo; i < n && a[i].series == si && rows < limit && !rc; i++, rows++) {
		const struct ga_gs_attr *x = &a[i];
		const char *nm = ga_model_str(r->m, x->key);

		rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), x->time_ns));
		rc |= ga_table_addf(&t, "%" PRIu64, x->count);
		rc |= ga_table_addf(&t, "%" PRIu64, x->samples);
		for (unsigned c = 0; c < nc; c++) {
			struct ga_gs_unit u;
			uint32_t k = cols[c];

			ga_gs_describe(ga_model_str(r->m, s->m[k].name), &u);
			rc |= ga_table_add(&t, ga_text_avg(b, sizeof(b),
							   x->w[k] > 0 ? x->wsum[k] / x->w[k] : NAN, u.scale));
		}
		rc |= ga_table_add(&t, r->o.full_names ? (nm ? nm : "?")
				       : ga_fmt_trunc(name, sizeof(name), nm ? nm : "?",
						      GA_TEXT_NAME_WIDTH));
	}
	if (!rc) {
		fprintf(out, "\n%s, %s averaged over each %s (weighted by overlap):\n",
			ga_model_str(r->m, s->label), ga_gs_source(s->source),
			what[0] == 'k' ? "kernel's executions" : "NVTX range's instances");
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	return rc ? -1 : 0;
}

static int print(struct ga_text *r, FILE *out)
{
	const struct ga_gpusamples *g = &r->an->gs;
	size_t i;

	fputs("The GPU over time (time-weighted over samples):\n", out);
	for (i = 0; i < g->nseries; i++) {
		if (i)
			fputc('\n', out);
		if (series_table(r, &g->series[i], out))
			return -1;
	}
	for (i = 0; i < g->nseries; i++) {
		if (attr_table(r, "ranges", g->ranges, g->nranges, i, out) ||
		    attr_table(r, "kernels", g->kern, g->nkern, i, out))
			return -1;
	}
	if (g->malformed)
		fprintf(out, "%" PRIu64 " sample%s without their series, left out\n", g->malformed,
			g->malformed == 1 ? "" : "s");
	if (g->series_unasked)
		fprintf(out, "%" PRIu64 " series from processes whose trace says no sampling was on: "
			     "their kernels are not in the averages\n",
			g->series_unasked);
	if (g->kernels_unkept)
		fprintf(out, "%" PRIu64 " kernel%s read before their process's samples and beyond "
			"%u kept: not in the averages\n", g->kernels_unkept,
			g->kernels_unkept == 1 ? "" : "s", GA_GS_KERNELS_MAX);
	return 0;
}

const struct ga_text_section ga_text_overtime = { "overtime", want, print };
