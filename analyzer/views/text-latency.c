/*
 * Launch latency per kernel (model/latency.h): from the API call's start
 * to the kernel's start on the GPU, with the statistics of the kernel
 * table.  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/text.h"

static int want(const struct ga_text *r)
{
	return r->an->lat.nk > 0;
}

static int print(struct ga_text *r, FILE *out)
{
	const struct ga_latency *l = &r->an->lat;
	char b[6][48], nb[4 * GA_TEXT_NAME_WIDTH + 8];
	const char *est;
	struct ga_table t;
	uint32_t *ord = ga_latency_order(l);
	size_t i, n;
	int rc = 0;

	if (!ord)
		return -1;
	n = r->o.top && (size_t)r->o.top < l->nk ? (size_t)r->o.top : l->nk;
	ga_table_init(&t, 8 + GA_TEXT_PCT_COLS);
	ga_table_col(&t, 0, "Count", 1, 0);
	ga_table_col(&t, 1, "Avg", 1, 0);
	ga_table_col(&t, 2, "Med", 1, 0);
	ga_table_col(&t, 3, "Min", 1, 0);
	ga_table_col(&t, 4, "Max", 1, 0);
	ga_table_col(&t, 5, "StdDev", 1, 0);
	ga_text_pct_cols(&t, 6);
	ga_table_col(&t, 6 + GA_TEXT_PCT_COLS, "Total", 1, 0);
	ga_table_col(&t, 7 + GA_TEXT_PCT_COLS, "Name", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct ga_latency_k *k = &l->k[ord[i]];

		est = k->med_est ? "~" : "";
		rc |= ga_table_addf(&t, "%" PRIu64, k->count);
		rc |= ga_table_add(&t, ga_fmt_time(b[0], sizeof(b[0]), k->total / k->count));
		rc |= ga_table_addf(&t, "%s%s", est, ga_fmt_time(b[1], sizeof(b[1]), k->med));
		rc |= ga_table_add(&t, ga_fmt_time(b[2], sizeof(b[2]), k->min));
		rc |= ga_table_add(&t, ga_fmt_time(b[3], sizeof(b[3]), k->max));
		rc |= ga_table_add(&t, ga_fmt_time(b[4], sizeof(b[4]), k->stddev));
		rc |= ga_text_pct_row(&t, k->p90, k->p99, k->med_est);
		rc |= ga_table_add(&t, ga_fmt_time(b[5], sizeof(b[5]), k->total));
		rc |= ga_table_add(&t, ga_text_name_cut(r, nb, sizeof(nb),
							ga_strtab_full(&r->m->strs, k->name)));
	}
	if (!rc) {
		fputs("Launch latency (API call start to kernel start; graph kernels excluded):\n", out);
		ga_table_print(&t, out);
		ga_text_more_line(out, n, l->nk, "kernels");
		if (l->unmatched)
			fprintf(out, "%" PRIu64 " kernel%s without their API call in the trace (API "
				"tracing off, or records lost)\n", l->unmatched,
				l->unmatched == 1 ? "" : "s");
		if (l->replayed)
			fprintf(out, "%" PRIu64 " kernel%s profiled by kernel replay left out (no GPU "
				"start time)\n", l->replayed, l->replayed == 1 ? "" : "s");
		if (l->early)
			fprintf(out, "%" PRIu64 " kernel%s left out: %s before %s API call (host and "
				"GPU clocks disagree)\n", l->early, l->early == 1 ? "" : "s",
				l->early == 1 ? "starts" : "start", l->early == 1 ? "its" : "their");
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

const struct ga_text_section ga_text_latency = { "latency", want, print };
