/*
 * Memory operations by kind: time, count, bytes and throughput.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

static int print_memory(const struct ga_model *m, FILE *out)
{
	const struct ga_memstat *rows[GA_COPY_KIND_MAX + 1];
	char b[4][48], kb[16];
	struct ga_table t;
	size_t n = 0, i, j;
	int rc = 0;

	for (i = 0; i < GA_COPY_KIND_MAX; i++)
		if (m->copy[i].count)
			rows[n++] = &m->copy[i];
	/* Most time first, as in the other tables. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && rows[j - 1]->total < rows[j]->total; j--) {
			const struct ga_memstat *x = rows[j];

			rows[j] = rows[j - 1];
			rows[j - 1] = x;
		}
	if (m->memset_st.count)
		rows[n++] = &m->memset_st;
	if (!n) {
		fputs("Memory operations: none\n", out);
		return 0;
	}
	ga_table_init(&t, 6);
	ga_table_col(&t, 0, "Total time", 1, 0);
	ga_table_col(&t, 1, "Count", 1, 0);
	ga_table_col(&t, 2, "Total size", 1, 0);
	ga_table_col(&t, 3, "Avg size", 1, 0);
	ga_table_col(&t, 4, "Throughput", 1, 0);
	ga_table_col(&t, 5, "Operation", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct ga_memstat *s = rows[i];

		rc |= ga_table_add(&t, ga_fmt_time(b[0], sizeof(b[0]), s->total));
		rc |= ga_table_addf(&t, "%" PRIu64, s->count);
		rc |= ga_table_add(&t, ga_fmt_bytes(b[1], sizeof(b[1]), (double)s->bytes));
		rc |= ga_table_add(&t, ga_fmt_bytes(b[2], sizeof(b[2]),
						    (double)s->bytes / (double)s->count));
		if (s->total)
			rc |= ga_table_addf(&t, "%.2f GB/s", (double)s->bytes / (double)s->total);
		else
			rc |= ga_table_add(&t, "-");
		rc |= ga_table_add(&t, s->label ? ga_model_str(m, m->labels[s->label - 1].str) :
				   ga_model_copy_kind(0, kb, sizeof(kb)));
	}
	if (!rc) {
		fputs("Memory operations:\n", out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	return rc ? -1 : 0;
}

static int print(struct ga_text *r, FILE *out)
{
	return print_memory(r->m, out);
}

const struct ga_text_section ga_text_memory = { "memory", NULL, print };
