/*
 * The NVTX range table (count, CPU time, GPU time and kernels inclusive of
 * nested ranges, and those of the kernels other threads launched while a
 * range was open, where there are some) and the mark table.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

static int print_marks(const struct ga_ranges *nx, struct ga_model *m, size_t width, FILE *out)
{
	struct ga_table t;
	char nb[1024];
	size_t i, j, *ord;
	int rc = 0;

	if (!nx->nmarks)
		return 0;
	ord = malloc(nx->nmarks * sizeof(*ord));
	if (!ord)
		return -1;
	/* Most frequent first; few rows, so insertion sort. */
	for (i = 0; i < nx->nmarks; i++) {
		for (j = i; j > 0 && (nx->marks[ord[j - 1]].count < nx->marks[i].count ||
				      (nx->marks[ord[j - 1]].count == nx->marks[i].count &&
				       strcmp(ga_model_str(m, nx->marks[ord[j - 1]].label),
					      ga_model_str(m, nx->marks[i].label)) > 0)); j--)
			ord[j] = ord[j - 1];
		ord[j] = i;
	}
	ga_table_init(&t, 2);
	ga_table_col(&t, 0, "Count", 1, 0);
	ga_table_col(&t, 1, "Mark", 0, 0);
	for (i = 0; i < nx->nmarks && !rc; i++) {
		const struct ga_ranges_mark *k = &nx->marks[ord[i]];

		rc |= ga_table_addf(&t, "%" PRIu64, k->count);
		rc |= ga_table_add(&t, ga_text_cut(nb, sizeof(nb), ga_model_str(m, k->label), width));
	}
	if (!rc) {
		fputs("NVTX marks:\n", out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

static int print_table(const struct ga_ranges *nx, struct ga_model *m, int filtered,
			size_t width, FILE *out)
{
	char b[7][48], nb[1024];
	struct ga_table t;
	uint32_t *ord;
	size_t i, rows = 0;
	/* Columns of the kernels other threads launched inside, where there are some. */
	int other = nx->other_kernels > 0, name_col = other ? 10 : 8;
	int rc = 0;

	if (nx->nkeys) {
		ord = ga_ranges_order_keys(nx, m);
		if (!ord)
			return -1;
		ga_table_init(&t, (size_t)name_col + 1);
		ga_table_col(&t, 0, "Count", 1, 0);
		ga_table_col(&t, 1, "CPU total", 1, 0);
		ga_table_col(&t, 2, "CPU avg", 1, 0);
		ga_table_col(&t, 3, "CPU min", 1, 0);
		ga_table_col(&t, 4, "CPU max", 1, 0);
		ga_table_col(&t, 5, "CPU stddev", 1, 0);
		ga_table_col(&t, 6, "GPU time", 1, 0);
		ga_table_col(&t, 7, "Kernels", 1, 0);
		if (other) {
			ga_table_col(&t, 8, "Other threads", 1, 0);
			ga_table_col(&t, 9, "Their kernels", 1, 0);
		}
		ga_table_col(&t, name_col, "Range", 0, 0);
		for (i = 0; i < nx->nkeys && !rc; i++) {
			const struct ga_ranges_key *k = &nx->keys[ord[i]];

			/* Under a filter, ranges that kept nothing are noise. */
			if (!k->count || (filtered && !k->acts))
				continue;
			rows++;
			rc |= ga_table_addf(&t, "%" PRIu64, k->count);
			rc |= ga_table_add(&t, ga_fmt_time(b[0], sizeof(b[0]), k->cpu_total));
			rc |= ga_table_add(&t, ga_fmt_time(b[1], sizeof(b[1]), k->cpu_total / k->count));
			rc |= ga_table_add(&t, ga_fmt_time(b[2], sizeof(b[2]), k->cpu_min));
			rc |= ga_table_add(&t, ga_fmt_time(b[3], sizeof(b[3]), k->cpu_max));
			rc |= ga_table_add(&t, ga_fmt_time(b[5], sizeof(b[5]),
							   ga_welford_stddev(&k->cpu_var, k->count)));
			rc |= ga_table_add(&t, ga_fmt_time(b[4], sizeof(b[4]), k->gpu_ns));
			rc |= ga_table_addf(&t, "%" PRIu64, k->kernels);
			if (other) {
				rc |= ga_table_add(&t, ga_fmt_time(b[6], sizeof(b[6]), k->other_ns));
				rc |= ga_table_addf(&t, "%" PRIu64, k->other_kernels);
			}
			rc |= ga_table_add(&t, ga_text_cut(nb, sizeof(nb), ga_model_str(m, k->label), width));
		}
		if (!rc && rows) {
			fputs("NVTX ranges (GPU time and kernels include nested ranges):\n", out);
			ga_table_print(&t, out);
		} else if (!rc) {
			fputs("NVTX ranges: none with GPU activity kept by the filters\n", out);
		}
		ga_table_free(&t);
		free(ord);
		if (rc)
			return -1;
		if (nx->acts)
			fprintf(out, "%" PRIu64 " of %" PRIu64 " GPU activities were launched inside "
				"a range", nx->in_range, nx->acts);
		if (nx->acts && nx->unattributed)
			fprintf(out, "; %" PRIu64 " cannot be placed (no API record: API tracing "
				"off or records lost)", nx->unattributed);
		if (nx->acts)
			fputc('\n', out);
		if (nx->unterminated)
			fprintf(out, "%" PRIu64 " range%s still open at exit: CPU time counted to "
				"the exit\n", nx->unterminated, nx->unterminated == 1 ? " was" : "s were");
		if (other)
			fputs("GPU time and Kernels: launched by the range's own thread.  Other threads: "
			      "the GPU time of the kernels that\nother threads of the process launched "
			      "while the range was open (PyTorch's backward runs on autograd's thread).\n",
			      out);
		if (nx->other_skipped)
			fprintf(out, "%" PRIu64 " kernels of processes with more than %d threads of "
				"ranges are not counted into other threads' ranges\n",
				nx->other_skipped, GA_RANGES_OTHER_THREADS);
	}
	if (nx->nmarks) {
		if (nx->nkeys)
			fputc('\n', out);
		return print_marks(nx, m, width, out);
	}
	return 0;
}

static int want(const struct ga_text *r)
{
	return r->an->rg.nkeys || r->an->rg.nmarks;
}

static int print(struct ga_text *r, FILE *out)
{
	return print_table(&r->an->rg, r->m, ga_analysis_filtered(r->an),
			   r->o.full_names ? 0 : GA_TEXT_NAME_WIDTH, out);
}

const struct ga_text_section ga_text_ranges = { "ranges", want, print };
