/*
 * "gpuprof diff" as text: one table of kernels, memory operations, peak
 * memory in use per device, NVTX ranges and API functions, the biggest
 * change first (Base, New and Delta are times, bytes for memory in use).
 * Names are cut as in the report (--full-names keeps them), and each kind
 * shows its first --top rows.  Traces sampled over time add a second
 * table: per device and metric, the averages of both sides and the change.
 * Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/diffviews.h"
#include "views/table.h"
#include "views/text.h"

/* A time, or bytes for the peak of memory in use. */
static const char *amount(char *buf, size_t n, int bytes, uint64_t v)
{
	return bytes ? ga_fmt_bytes(buf, n, (double)v) : ga_fmt_time(buf, n, v);
}

/* "+1.234 ms", "-812 ns", "0 ns"; "+2.00 MiB". */
static const char *signed_amount(char *buf, size_t n, int bytes, int64_t d)
{
	char t[32];

	amount(t, sizeof(t), bytes, d < 0 ? (uint64_t)-(d + 1) + 1 : (uint64_t)d);
	snprintf(buf, n, "%s%s", d > 0 ? "+" : d < 0 ? "-" : "", t);
	return buf;
}

/* The GPU over time: per device and metric, each side's average; --threshold applies. */
static int print_gpu(FILE *out, const struct ga_diff *d, const struct ga_diff_view *v)
{
	struct ga_table t;
	char b[48];
	size_t i, shown = 0;
	int rc = 0;

	ga_table_init(&t, 8);
	ga_table_col(&t, 0, "Device", 0, 0);
	ga_table_col(&t, 1, "Metric", 0, 0);
	ga_table_col(&t, 2, "Unit", 0, 0);
	ga_table_col(&t, 3, "Base", 1, 0);
	ga_table_col(&t, 4, "New", 1, 0);
	ga_table_col(&t, 5, "Change", 1, 0);
	ga_table_col(&t, 6, "Base samples", 1, 0);
	ga_table_col(&t, 7, "New samples", 1, 0);
	for (i = 0; i < d->ngpu && !rc; i++) {
		const struct ga_diff_gpu *x = &d->gpu[i];
		double pct = ga_diff_gpu_change_pct(x);
		struct ga_gs_unit u;

		if (v->threshold > 0 && !isnan(pct) && fabs(pct) < v->threshold)
			continue;
		ga_gs_describe(x->metric, &u);
		rc |= ga_table_add(&t, x->device);
		rc |= ga_table_add(&t, u.label);
		rc |= ga_table_add(&t, u.unit);
		rc |= ga_table_add(&t, ga_text_avg(b, sizeof(b), ga_diff_gpu_avg(x, 0), u.scale));
		rc |= ga_table_add(&t, ga_text_avg(b, sizeof(b), ga_diff_gpu_avg(x, 1), u.scale));
		if (isnan(pct))
			rc |= ga_table_add(&t, !x->present[0] ? "new" : !x->present[1] ? "gone" : "-");
		else
			rc |= ga_table_addf(&t, "%+.1f%%", pct);
		rc |= x->present[0] ? ga_table_addf(&t, "%" PRIu64, x->samples[0]) : ga_table_add(&t, "-");
		rc |= x->present[1] ? ga_table_addf(&t, "%" PRIu64, x->samples[1]) : ga_table_add(&t, "-");
		shown++;
	}
	if (!rc && shown) {
		fputs("\nThe GPU over time (time-weighted averages):\n", out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	return rc ? -1 : 0;
}

int ga_diff_print_text(FILE *out, const struct ga_diff *d, const struct ga_diff_view *v)
{
	/* The report's name cutting, with only --full-names of its options. */
	struct ga_text r = { .o = { .full_names = v->full_names } };
	size_t per_kind[GA_DIFF_KIND_COUNT] = { 0 }, more[GA_DIFF_KIND_COUNT] = { 0 };
	static const char *const what[GA_DIFF_KIND_COUNT] = {
		[GA_DIFF_KERNEL] = "kernels", [GA_DIFF_MEMORY] = "memory operations",
		[GA_DIFF_MEMUSE] = "devices", [GA_DIFF_NVTX] = "NVTX ranges",
		[GA_DIFF_API] = "API functions", [GA_DIFF_FINDING] = "findings",
	};
	const struct ga_diff_item **rows = malloc((d->n ? d->n : 1) * sizeof(*rows));
	const char **names = malloc((d->n ? d->n : 1) * sizeof(*names));
	char **cut = NULL;
	struct ga_table t;
	char b[48];
	size_t i, shown = 0;
	int rc = 0, k;

	if (!rows || !names) {
		free(rows);
		free(names);
		return -1;
	}
	for (i = 0; i < d->n; i++) {
		const struct ga_diff_item *it = &d->v[i];

		if (!ga_diff_shown(it, v->threshold))
			continue;
		if (v->top > 0 && per_kind[it->kind] >= (size_t)v->top) {
			more[it->kind]++;
			continue;
		}
		per_kind[it->kind]++;
		names[shown] = it->name;
		rows[shown++] = it;
	}
	if (ga_text_cut_unique(&r, names, shown, &cut)) {
		free(rows);
		free(names);
		return -1;
	}
	fprintf(out, "gpuprof diff: base %s, new %s\n", v->base, v->nw);
	if (d->summaries)
		fputs("A side is a summary: kernels, memory operations and API functions "
		      "compared; NVTX ranges, memory in use, findings and GPU metrics are "
		      "not in summaries yet\n", out);
	ga_table_init(&t, 9);
	ga_table_col(&t, 0, "Kind", 0, 0);
	ga_table_col(&t, 1, "Base count", 1, 0);
	ga_table_col(&t, 2, "New count", 1, 0);
	ga_table_col(&t, 3, "Base", 1, 0);
	ga_table_col(&t, 4, "New", 1, 0);
	ga_table_col(&t, 5, "Delta", 1, 0);
	ga_table_col(&t, 6, "Change", 1, 0);
	ga_table_col(&t, 7, "Ratio", 1, 0);
	ga_table_col(&t, 8, "Name", 0, 0);
	for (i = 0; i < shown && !rc; i++) {
		const struct ga_diff_item *it = rows[i];
		double pct = ga_diff_change_pct(it), ratio = ga_diff_ratio(it);
		int bytes = ga_diff_kind_bytes(it->kind);

		rc |= ga_table_add(&t, ga_diff_kind_name(it->kind));
		rc |= it->present[0] ? ga_table_addf(&t, "%" PRIu64, it->count[0]) : ga_table_add(&t, "-");
		rc |= it->present[1] ? ga_table_addf(&t, "%" PRIu64, it->count[1]) : ga_table_add(&t, "-");
		rc |= ga_table_add(&t, amount(b, sizeof(b), bytes, it->ns[0]));
		rc |= ga_table_add(&t, amount(b, sizeof(b), bytes, it->ns[1]));
		rc |= ga_table_add(&t, signed_amount(b, sizeof(b), bytes, ga_diff_delta(it)));
		if (isinf(pct))
			rc |= ga_table_add(&t, it->present[0] ? "+inf" : "new");
		else
			rc |= ga_table_addf(&t, "%+.1f%%", pct);
		rc |= isinf(ratio) ? ga_table_add(&t, "-") : ga_table_addf(&t, "%.2f", ratio);
		rc |= ga_table_add(&t, cut[i]);
	}
	if (!rc && shown)
		ga_table_print(&t, out);
	ga_table_free(&t);
	ga_text_cut_free(cut, shown);
	free(rows);
	free(names);
	if (rc)
		return -1;
	for (k = 0; k < GA_DIFF_KIND_COUNT; k++)
		ga_text_more_line(out, 0, more[k], what[k]);
	if (!shown)
		fputs("No differences", out);
	else
		fprintf(out, "%zu of %zu items", shown, d->n);
	if (v->threshold > 0)
		fprintf(out, " (changes under %g%% hidden)", v->threshold);
	fputc('\n', out);
	if (v->fail_above >= 0) {
		size_t g = ga_diff_grown(d, v->fail_above);

		if (g)
			fprintf(out, "%zu item%s grew by more than %g%% (--fail-above)\n", g,
				g == 1 ? "" : "s", v->fail_above);
		else
			fprintf(out, "Nothing grew by more than %g%% (--fail-above)\n", v->fail_above);
	}
	return print_gpu(out, d, v);
}
