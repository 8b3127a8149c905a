/*
 * "gpuprof diff" as text: one table of kernels, memory operations, peak
 * memory in use per device, NVTX ranges and API functions, the biggest
 * change first (Base, New and Delta are times, bytes for memory in use).  Runs
 * offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "views/diff.h"
#include "views/table.h"

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

int ga_diff_print_text(FILE *out, const struct ga_diff *d, const struct ga_diff_view *v)
{
	struct ga_table t;
	char b[48];
	size_t i, shown = 0;
	int rc = 0;

	fprintf(out, "gpuprof diff: base %s, new %s\n", v->base, v->nw);
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
	for (i = 0; i < d->n && !rc; i++) {
		const struct ga_diff_item *it = &d->v[i];
		double pct = ga_diff_change_pct(it), ratio = ga_diff_ratio(it);
		int bytes = ga_diff_kind_bytes(it->kind);

		if (!ga_diff_shown(it, v->threshold))
			continue;
		shown++;
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
		rc |= ga_table_add(&t, it->name);
	}
	if (!rc && shown)
		ga_table_print(&t, out);
	ga_table_free(&t);
	if (rc)
		return -1;
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
	return 0;
}
