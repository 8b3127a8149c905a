/*
 * The Warp-style CUDA timeline: one line per GPU activity, its duration
 * first, in the order the activities started on the GPU (ties in the order
 * read), with the innermost NVTX range where the traces have ranges.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

static void print_timeline(const struct ga_model *m, const struct ga_text *r,
			   const struct ga_warp_cols *c, int nvtx, FILE *out)
{
	struct ga_table t;
	char tb[48], lb[4 * GA_TEXT_NAME_WIDTH + 8], nb[4 * GA_TEXT_NAME_WIDTH + 8];
	const char *cells[4];
	size_t i;

	fputs("CUDA timeline:\n", out);
	ga_text_warp_table(&t, c, "Duration", "Device", "Activity", 0);
	if (nvtx) {
		/* The innermost NVTX range each activity was launched in. */
		t.ncols = 4;
		ga_table_col(&t, 3, "NVTX", 0, 0);
	}
	ga_table_print_head(&t, out);
	for (i = 0; i < m->nrows; i++) {
		const struct ga_row *row = &m->rows[i];

		cells[0] = ga_text_warp_ms(tb, sizeof(tb), row->dur);
		cells[1] = ga_model_str(m, m->devrows[row->devrow].label);
		cells[2] = ga_text_label(m, r, row->label, lb, sizeof(lb));
		cells[3] = row->nvtx ? ga_text_name_cut(r, nb, sizeof(nb),
							ga_model_str(m, row->nvtx)) : "-";
		ga_table_print_row(&t, out, cells);
	}
	ga_table_free(&t);
	if (m->rows_seen > m->nrows)
		fprintf(out, "\xe2\x80\xa6 %" PRIu64 " more activities not shown\n",
			m->rows_seen - m->nrows);
}

static int want(const struct ga_text *r)
{
	/* Summaries hold no single activities: the header says so. */
	return !r->m->sum_parts &&
	       (r->o.timeline == 1 || (r->o.timeline == -1 && r->m->rows_seen > 0 &&
				       r->m->rows_seen <= GA_TEXT_AUTO_TIMELINE_MAX));
}

static int print(struct ga_text *r, FILE *out)
{
	print_timeline(r->m, r, &r->wc, r->an->rg.nranges > 0, out);
	return 0;
}

const struct ga_text_section ga_text_timeline = { "timeline", want, print };
