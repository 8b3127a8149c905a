/*
 * The nsys-style kernel table: time share, total, count and statistics
 * per kernel, demangled.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

static int print_kernels(struct ga_model *m, const struct ga_text *r, FILE *out)
{
	const char **full;
	char **cut = NULL;
	struct ga_table t;
	uint32_t *ord;
	size_t i, n;
	int rc = 0;

	if (!m->nkstats) {
		fputs("Kernels: none\n", out);
		return 0;
	}
	ord = ga_model_order_kernels(m);
	if (!ord)
		return -1;
	n = r->o.top && (size_t)r->o.top < m->nkstats ? (size_t)r->o.top : m->nkstats;
	full = malloc(n * sizeof(*full));
	for (i = 0; full && i < n; i++)
		full[i] = ga_strtab_full(&m->strs, m->kstats[ord[i]].name);
	if (!full || ga_text_cut_unique(r, full, n, &cut)) {
		free(full);
		free(ord);
		return -1;
	}
	ga_table_init(&t, GA_TEXT_STAT_COLS + GA_TEXT_PCT_COLS + 1);
	ga_text_stat_cols(&t);
	ga_text_pct_cols(&t, GA_TEXT_STAT_COLS);
	ga_table_col(&t, GA_TEXT_STAT_COLS + GA_TEXT_PCT_COLS, "Name", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct ga_kstat *k = &m->kstats[ord[i]];

		rc |= ga_text_stat_row_est(&t, k->total, m->kernel_total, k->count, k->med,
					   k->med_est, k->min, k->max, k->stddev);
		rc |= ga_text_pct_row(&t, k->p90, k->p99, k->med_est);
		rc |= ga_table_add(&t, cut[i]);
	}
	if (!rc) {
		fputs("Kernels:\n", out);
		ga_table_print(&t, out);
		ga_text_more_line(out, n, m->nkstats, "kernels");
	}
	ga_table_free(&t);
	ga_text_cut_free(cut, n);
	free(full);
	free(ord);
	return rc ? -1 : 0;
}

static int print(struct ga_text *r, FILE *out)
{
	return print_kernels(r->m, r, out);
}

const struct ga_text_section ga_text_kernels = { "kernels", NULL, print };
