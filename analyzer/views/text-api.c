/*
 * The CUDA API summary: time share, count, statistics and errors per
 * function.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

static int print_api(const struct ga_model *m, const struct ga_text *r, FILE *out)
{
	struct ga_table t;
	uint32_t *ord;
	size_t i, n;
	int rc = 0;

	if (!m->nastats) {
		size_t k;

		fputs("CUDA API summary: none", out);
		for (k = 0; k < m->nprocs; k++)
			if (m->procs[k].has_config && !(m->procs[k].config.trace & GP_TRACE_API)) {
				fputs(" (API tracing was off)", out);
				break;
			}
		fputc('\n', out);
		return 0;
	}
	ord = ga_model_order_api(m);
	if (!ord)
		return -1;
	n = r->o.top && (size_t)r->o.top < m->nastats ? (size_t)r->o.top : m->nastats;
	ga_table_init(&t, GA_TEXT_STAT_COLS + GA_TEXT_PCT_COLS + 2);
	ga_text_stat_cols(&t);
	ga_text_pct_cols(&t, GA_TEXT_STAT_COLS);
	ga_table_col(&t, GA_TEXT_STAT_COLS + GA_TEXT_PCT_COLS, "Errors", 1, 0);
	ga_table_col(&t, GA_TEXT_STAT_COLS + GA_TEXT_PCT_COLS + 1, "Name", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct ga_astat *a = &m->astats[ord[i]];

		rc |= ga_text_stat_row_est(&t, a->total, m->api_total, a->count, a->med,
					   a->med_est, a->min, a->max, a->stddev);
		rc |= ga_text_pct_row(&t, a->p90, a->p99, a->med_est);
		rc |= ga_table_addf(&t, "%" PRIu64, a->errors);
		rc |= ga_table_add(&t, ga_model_str(m, a->name));
	}
	if (!rc) {
		fputs("CUDA API summary:\n", out);
		ga_table_print(&t, out);
		ga_text_more_line(out, n, m->nastats, "API functions");
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

static int print(struct ga_text *r, FILE *out)
{
	return print_api(r->m, r, out);
}

const struct ga_text_section ga_text_api = { "api", NULL, print };
