/*
 * Memory operations by kind and memory kinds (model.h's struct ga_memop),
 * with the statistics of the kernel table, bytes and throughput, as nsys's
 * cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum show them.  Staged peer
 * copies count once, with the span of their two legs.  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/text.h"

/* "memcpy HtoD (pageable → device)", "memset (device)". */
static int op_name(const struct ga_memop *o, char *buf, size_t n)
{
	char kb[16];

	if (o->kind == GA_MEMOP_MEMSET)
		return snprintf(buf, n, "memset (%s)", ga_model_mem_kind(o->dst));
	return snprintf(buf, n, "memcpy %s (%s \xe2\x86\x92 %s)",
			o->kind == GA_COPY_STAGED_PEER ? "PtoP-staged" :
			ga_model_copy_kind(o->kind, kb, sizeof(kb)),
			ga_model_mem_kind(o->src), ga_model_mem_kind(o->dst));
}

static int print(struct ga_text *r, FILE *out)
{
	const struct ga_model *m = r->m;
	char b[2][48], name[96];
	struct ga_table t;
	uint64_t all = 0;
	uint32_t *ord;
	size_t i;
	int rc = 0;

	if (!m->nmemops) {
		fputs("Memory operations: none\n", out);
		return 0;
	}
	ord = ga_model_order_memops(m);
	if (!ord)
		return -1;
	for (i = 0; i < m->nmemops; i++)
		all += m->memops[i].total;
	ga_table_init(&t, GA_TEXT_STAT_COLS + 3);
	ga_text_stat_cols(&t);
	ga_table_col(&t, GA_TEXT_STAT_COLS, "Total size", 1, 0);
	ga_table_col(&t, GA_TEXT_STAT_COLS + 1, "Throughput", 1, 0);
	ga_table_col(&t, GA_TEXT_STAT_COLS + 2, "Operation", 0, 0);
	for (i = 0; i < m->nmemops && !rc; i++) {
		const struct ga_memop *o = &m->memops[ord[i]];

		rc |= ga_text_stat_row_est(&t, o->total, all, o->count, o->med, o->med_est,
					   o->min, o->max, o->stddev);
		rc |= ga_table_add(&t, ga_fmt_bytes(b[0], sizeof(b[0]), (double)o->bytes));
		if (o->total)
			rc |= ga_table_addf(&t, "%.2f GB/s", (double)o->bytes / (double)o->total);
		else
			rc |= ga_table_add(&t, "-");
		op_name(o, name, sizeof(name));
		rc |= ga_table_add(&t, name);
	}
	if (!rc) {
		fputs("Memory operations:\n", out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

const struct ga_text_section ga_text_memory = { "memory", NULL, print };
