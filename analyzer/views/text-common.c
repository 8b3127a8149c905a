/*
 * Pieces shared by the text report's sections: name cutting, Warp's
 * duration format and column widths, averages of sampled metrics (the
 * over-time table and diff's), the statistics columns of the nsys-style
 * tables.  Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

void ga_text_field(FILE *out, const char *label)
{
	fprintf(out, "%-*s", GA_TEXT_LABEL_WIDTH, label);
}

const char *ga_text_cut(char *buf, size_t n, const char *s, size_t width)
{
	return width ? ga_fmt_trunc(buf, n, s, width) : s;
}

/* s itself with --full-names, else s cut to GA_TEXT_NAME_WIDTH columns in buf. */
const char *ga_text_name_cut(const struct ga_text *r, char *buf, size_t n, const char *s)
{
	return r->o.full_names ? s : ga_fmt_trunc(buf, n, s, GA_TEXT_NAME_WIDTH);
}

const char *ga_text_avg(char *b, size_t n, double v, double scale)
{
	double x = v * scale;

	if (isnan(v))
		return "-";
	if (fabs(x) >= 100 || x == 0)
		snprintf(b, n, "%.0f", x);
	else if (fabs(x) >= 10)
		snprintf(b, n, "%.1f", x);
	else
		snprintf(b, n, "%.2f", x);
	return b;
}

/* Warp's duration format: milliseconds with six decimals, exact for ns. */
const char *ga_text_warp_ms(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%" PRIu64 ".%06" PRIu64 " ms", ns / 1000000, ns % 1000000);
	return buf;
}

double ga_text_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void ga_text_warp_widths(const struct ga_model *m, const struct ga_text *r, struct ga_warp_cols *c)
{
	char buf[4 * GA_TEXT_NAME_WIDTH + 8], t[48];
	size_t i, w;

	c->time_w = 15;            /* "%12.6f ms", as Warp prints it */
	c->dev_w = 7;
	c->act_w = 8;
	for (i = 0; i < m->nlabels; i++) {
		w = ga_fmt_width(ga_text_name_cut(r, buf, sizeof(buf), ga_model_str(m, m->labels[i].str)));
		if (w > c->act_w)
			c->act_w = w;
		w = strlen(ga_text_warp_ms(t, sizeof(t), m->labels[i].total));
		if (w > c->time_w)
			c->time_w = w;
	}
	for (i = 0; i < m->ndevrows; i++) {
		w = ga_fmt_width(ga_model_str(m, m->devrows[i].label));
		if (w > c->dev_w)
			c->dev_w = w;
		w = strlen(ga_text_warp_ms(t, sizeof(t), m->devrows[i].total));
		if (w > c->time_w)
			c->time_w = w;
	}
}

void ga_text_warp_table(struct ga_table *t, const struct ga_warp_cols *c, const char *h0,
		       const char *h1, const char *h2, int count_col)
{
	ga_table_init(t, 3);
	ga_table_col(t, 0, h0, 1, c->time_w);
	ga_table_col(t, 1, h1, count_col, c->dev_w);
	ga_table_col(t, 2, h2, 0, c->act_w);
}

const char *ga_text_label(const struct ga_model *m, const struct ga_text *r,
			      uint32_t label, char *buf, size_t n)
{
	return ga_text_name_cut(r, buf, n, ga_model_str(m, m->labels[label].str));
}

void ga_text_more_line(FILE *out, size_t shown, size_t n, const char *what)
{
	if (shown < n)
		fprintf(out, "\xe2\x80\xa6 %zu more %s (use --top 0 for all)\n", n - shown, what);
}

/* The columns Time(%) .. Max shared by the kernel and API tables (0-6). */
void ga_text_stat_cols(struct ga_table *t)
{
	static const char *const names[GA_TEXT_STAT_COLS] = {
		"Time(%)", "Total", "Count", "Avg", "Med", "Min", "Max", "StdDev",
	};

	for (int i = 0; i < GA_TEXT_STAT_COLS; i++)
		ga_table_col(t, i, names[i], 1, 0);
}

int ga_text_stat_row(struct ga_table *t, uint64_t total, uint64_t all, uint64_t count,
		     uint64_t med, uint64_t min, uint64_t max, uint64_t stddev)
{
	return ga_text_stat_row_est(t, total, all, count, med, 0, min, max, stddev);
}

int ga_text_stat_row_est(struct ga_table *t, uint64_t total, uint64_t all, uint64_t count,
			 uint64_t med, int med_est, uint64_t min, uint64_t max, uint64_t stddev)
{
	char b[6][48];
	int rc = 0;

	rc |= ga_table_addf(t, "%.1f", ga_text_pct(total, all));
	rc |= ga_table_add(t, ga_fmt_time(b[0], sizeof(b[0]), total));
	rc |= ga_table_addf(t, "%" PRIu64, count);
	rc |= ga_table_add(t, ga_fmt_time(b[1], sizeof(b[1]), count ? total / count : 0));
	if (med_est)
		rc |= ga_table_addf(t, "~%s", ga_fmt_time(b[2], sizeof(b[2]), med));
	else
		rc |= ga_table_add(t, ga_fmt_time(b[2], sizeof(b[2]), med));
	rc |= ga_table_add(t, ga_fmt_time(b[3], sizeof(b[3]), min));
	rc |= ga_table_add(t, ga_fmt_time(b[4], sizeof(b[4]), max));
	rc |= ga_table_add(t, ga_fmt_time(b[5], sizeof(b[5]), stddev));
	return rc;
}

void ga_text_pct_cols(struct ga_table *t, int col)
{
	ga_table_col(t, col, "P90", 1, 0);
	ga_table_col(t, col + 1, "P99", 1, 0);
}

int ga_text_pct_row(struct ga_table *t, uint64_t p90, uint64_t p99, int est)
{
	char b[2][48];
	int rc = 0;

	rc |= ga_table_addf(t, "%s%s", est ? "~" : "", ga_fmt_time(b[0], sizeof(b[0]), p90));
	rc |= ga_table_addf(t, "%s%s", est ? "~" : "", ga_fmt_time(b[1], sizeof(b[1]), p99));
	return rc;
}

/* head…tail of s in at most width columns. */
static char *middle_cut(const char *s, size_t width)
{
	size_t len = strlen(s), cols = ga_fmt_width(s), keep_head = (width - 1) / 2,
	       keep_tail = width - 1 - keep_head, c, head, tail;
	char *out;

	if (cols <= width || width < 3)
		return strdup(s);
	/* head: start of the first code point not kept. */
	for (head = 0, c = 0; head < len; head++)
		if (((unsigned char)s[head] & 0xc0) != 0x80 && c++ == keep_head)
			break;
	for (tail = len, c = 0; tail > head; tail--)
		if (((unsigned char)s[tail - 1] & 0xc0) != 0x80 && ++c == keep_tail) {
			tail--;
			break;
		}
	out = malloc(head + 3 + (len - tail) + 1);
	if (!out)
		return NULL;
	memcpy(out, s, head);
	memcpy(out + head, "\xe2\x80\xa6", 3);
	memcpy(out + head + 3, s + tail, len - tail);
	out[head + 3 + len - tail] = 0;
	return out;
}

struct cut_ref {
	const char *cut, *full;
	size_t i;
};

static int cmp_cut(const void *pa, const void *pb)
{
	const struct cut_ref *a = pa, *b = pb;
	int c = strcmp(a->cut, b->cut);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/* Marks in dup[] the names whose cut equals another's while the names differ. */
static int find_dups(char **cut, const char *const *full, size_t n, uint8_t *dup)
{
	struct cut_ref *v = malloc((n ? n : 1) * sizeof(*v));
	size_t i, j, any = 0;

	if (!v)
		return -1;
	for (i = 0; i < n; i++) {
		v[i].cut = cut[i];
		v[i].full = full[i];
		v[i].i = i;
		dup[i] = 0;
	}
	qsort(v, n, sizeof(*v), cmp_cut);
	for (i = 0; i < n; i = j) {
		int differ = 0;

		for (j = i + 1; j < n && !strcmp(v[j].cut, v[i].cut); j++)
			differ |= strcmp(v[j].full, v[i].full) != 0;
		if (differ) {
			for (size_t k = i; k < j; k++)
				dup[v[k].i] = 1;
			any = 1;
		}
	}
	free(v);
	return (int)any;
}

int ga_text_cut_unique(const struct ga_text *r, const char *const *full, size_t n, char ***out)
{
	char **cut = calloc(n ? n : 1, sizeof(*cut)), buf[4 * GA_TEXT_NAME_WIDTH + 8];
	uint8_t *dup = malloc(n ? n : 1);
	size_t i, k = 0;
	int d;

	*out = NULL;
	if (!cut || !dup)
		goto oom;
	for (i = 0; i < n; i++)
		if (!(cut[i] = strdup(ga_text_name_cut(r, buf, sizeof(buf), full[i]))))
			goto oom;
	/* Names cut alike: keep their ends instead, where they usually differ. */
	if ((d = find_dups(cut, full, n, dup)) < 0)
		goto oom;
	for (i = 0; d && i < n; i++)
		if (dup[i]) {
			free(cut[i]);
			if (!(cut[i] = middle_cut(full[i], GA_TEXT_NAME_WIDTH)))
				goto oom;
		}
	/* Still alike: number them. */
	if (d && (d = find_dups(cut, full, n, dup)) < 0)
		goto oom;
	for (i = 0; d && i < n; i++)
		if (dup[i]) {
			char *x = malloc(strlen(cut[i]) + 24);

			if (!x)
				goto oom;
			sprintf(x, "%s [%zu]", cut[i], ++k);
			free(cut[i]);
			cut[i] = x;
		}
	free(dup);
	*out = cut;
	return 0;
oom:
	for (i = 0; cut && i < n; i++)
		free(cut[i]);
	free(cut);
	free(dup);
	return -1;
}

void ga_text_cut_free(char **cut, size_t n)
{
	for (size_t i = 0; cut && i < n; i++)
		free(cut[i]);
	free(cut);
}
