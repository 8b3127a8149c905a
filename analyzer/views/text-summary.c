/*
 * The Warp-style CUDA activity summary and device summary.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "views/text.h"

/* Devices by process in rank order (ranks.h), then ordinal. */
static int cmp_devrow(const void *pa, const void *pb, void *ctx)
{
	const struct ga_analysis *an = ctx;
	const struct ga_model *m = &an->m;
	const struct ga_devrow *a = &m->devrows[*(const uint32_t *)pa];
	const struct ga_devrow *b = &m->devrows[*(const uint32_t *)pb];
	uint32_t pa_ = a->proc, pb_ = b->proc;

	if (an->rk.nrows == m->nprocs) {
		pa_ = an->rk.row_of[a->proc];
		pb_ = an->rk.row_of[b->proc];
	}
	if (pa_ != pb_)
		return pa_ < pb_ ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static int print_summaries(const struct ga_model *m, const struct ga_text *r,
			   const struct ga_warp_cols *c, FILE *out)
{
	char tb[48], lb[4 * GA_TEXT_NAME_WIDTH + 8];
	struct ga_table t;
	const char *cells[3];
	char cnt[32];
	uint32_t *ord;
	size_t i, k, shown;
	uint64_t cut = 0;
	int cutting = 0;

	if (!m->nlabels) {
		fputs("CUDA activity summary: no GPU activity\n", out);
		return 0;
	}
	ord = ga_model_order_labels(m);
	if (!ord)
		return -1;
	fputs("CUDA activity summary:\n", out);
	ga_text_warp_table(&t, c, "Total time", "Count", "Activity", 1);
	ga_table_print_head(&t, out);
	for (i = 0; i < m->nlabels; i++) {
		const struct ga_label *l = &m->labels[ord[i]];

		if (!l->count)
			continue;
		snprintf(cnt, sizeof(cnt), "%" PRIu64, l->count);
		cells[0] = ga_text_warp_ms(tb, sizeof(tb), l->total);
		cells[1] = cnt;
		cells[2] = ga_text_label(m, r, ord[i], lb, sizeof(lb));
		ga_table_print_row(&t, out, cells);
	}
	ga_table_free(&t);
	free(ord);

	ord = malloc((m->ndevrows ? m->ndevrows : 1) * sizeof(*ord));
	if (!ord)
		return -1;
	for (i = 0; i < m->ndevrows; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, m->ndevrows, sizeof(*ord), cmp_devrow, (void *)r->an);
	/* More devices than --top: those of the most time, in the same order. */
	for (i = 0, shown = 0; i < m->ndevrows; i++)
		shown += m->devrows[i].count != 0;
	if (r->o.top > 0 && shown > (size_t)r->o.top) {
		uint64_t *tot = malloc(shown * sizeof(*tot));
		size_t n = 0;

		if (!tot) {
			free(ord);
			return -1;
		}
		for (i = 0; i < m->ndevrows; i++)
			if (m->devrows[i].count)
				tot[n++] = m->devrows[i].total;
		ga_sort_u64(tot, n);
		cut = tot[n - (size_t)r->o.top];
		cutting = 1;
		free(tot);
	}
	fputs("\nCUDA device summary", out);
	if (cutting)
		fprintf(out, " (the %ld of the most time, in order)", r->o.top);
	fputs(":\n", out);
	ga_text_warp_table(&t, c, "Total time", "Count", "Device", 1);
	ga_table_print_head(&t, out);
	for (i = 0, k = 0; i < m->ndevrows; i++) {
		const struct ga_devrow *dr = &m->devrows[ord[i]];

		if (!dr->count || dr->total < cut || (cutting && k == (size_t)r->o.top))
			continue;
		k++;
		snprintf(cnt, sizeof(cnt), "%" PRIu64, dr->count);
		cells[0] = ga_text_warp_ms(tb, sizeof(tb), dr->total);
		cells[1] = cnt;
		cells[2] = ga_model_str(m, dr->label);
		ga_table_print_row(&t, out, cells);
	}
	ga_table_free(&t);
	free(ord);
	if (cutting)
		ga_text_more_line(out, k, shown, "devices");
	return 0;
}

static int print(struct ga_text *r, FILE *out)
{
	return print_summaries(r->m, r, &r->wc, out);
}

const struct ga_text_section ga_text_summary = { "summary", NULL, print };
