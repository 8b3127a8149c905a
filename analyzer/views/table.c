/*
 * Warp-style text tables (see table.h).  Runs offline only.
 */
#include "views/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ga_table_init(struct ga_table *t, int ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols < GA_TABLE_MAXCOLS ? ncols : GA_TABLE_MAXCOLS;
}

void ga_table_free(struct ga_table *t)
{
	ga_buf_free(&t->text);
	free(t->off);
	t->off = NULL;
	t->ncells = t->capoff = 0;
}

void ga_table_col(struct ga_table *t, int col, const char *title, int right,
		  size_t min_width)
{
	size_t w = ga_fmt_width(title);

	if (col < 0 || col >= t->ncols)
		return;
	t->title[col] = title;
	t->right[col] = right;
	t->width[col] = w > min_width ? w : min_width;
}

int ga_table_add(struct ga_table *t, const char *cell)
{
	size_t w = ga_fmt_width(cell);
	int col = (int)(t->ncells % (size_t)t->ncols);

	if (ga_util_grow(&t->off, &t->capoff, t->ncells + 1, sizeof(*t->off)))
		return -1;
	t->off[t->ncells] = t->text.len;
	if (ga_buf_put(&t->text, cell, strlen(cell) + 1))
		return -1;
	t->ncells++;
	if (w > t->width[col])
		t->width[col] = w;
	return 0;
}

int ga_table_addf(struct ga_table *t, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return ga_table_add(t, buf);
}

static void pad(FILE *f, size_t n)
{
	static const char sp[] = "                                ";

	while (n > 0) {
		size_t k = n < sizeof(sp) - 1 ? n : sizeof(sp) - 1;

		fwrite(sp, 1, k, f);
		n -= k;
	}
}

static void rule(const struct ga_table *t, FILE *f)
{
	int c;
	size_t i, n;

	for (c = 0; c < t->ncols; c++) {
		/* One dash per padding space: " | " puts a space on each side. */
		n = t->width[c] + (c == 0 || c == t->ncols - 1 ? 1 : 2);
		if (t->ncols == 1)
			n = t->width[c] + 1;
		for (i = 0; i < n; i++)
			fputc('-', f);
		if (c < t->ncols - 1)
			fputc('+', f);
	}
	fputc('\n', f);
}

static void row(const struct ga_table *t, FILE *f, const char *const *cells, int header)
{
	int c;

	for (c = 0; c < t->ncols; c++) {
		const char *s = cells[c] ? cells[c] : "";
		size_t w = ga_fmt_width(s), gap = t->width[c] > w ? t->width[c] - w : 0;
		int last = c == t->ncols - 1;

		if (t->right[c] && !header)
			pad(f, gap);
		ga_fmt_put(f, s);
		if (!last && (!t->right[c] || header))
			pad(f, gap);
		if (!last)
			fputs(" | ", f);
	}
	fputc('\n', f);
}

void ga_table_print_head(const struct ga_table *t, FILE *f)
{
	rule(t, f);
	row(t, f, t->title, 1);
	rule(t, f);
}

void ga_table_print_row(const struct ga_table *t, FILE *f, const char *const *cells)
{
	row(t, f, cells, 0);
}

static int spaces(struct ga_buf *b, size_t n)
{
	static const char sp[] = "                                ";

	while (n > 0) {
		size_t k = n < sizeof(sp) - 1 ? n : sizeof(sp) - 1;

		if (ga_buf_put(b, sp, k))
			return -1;
		n -= k;
	}
	return 0;
}

int ga_table_cell(const struct ga_table *t, int col, const char *s, struct ga_buf *b)
{
	size_t w = ga_fmt_width(s), gap = t->width[col] > w ? t->width[col] - w : 0;
	int last = col == t->ncols - 1;
	const char *run = s;

	if (t->right[col] && spaces(b, gap))
		return -1;
	for (; *s; s++) {
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			continue;
		if (ga_buf_put(b, run, (size_t)(s - run)) || ga_buf_put(b, "?", 1))
			return -1;
		run = s + 1;
	}
	if (ga_buf_put(b, run, (size_t)(s - run)))
		return -1;
	if (last)
		return ga_buf_put(b, "\n", 1);
	if (!t->right[col] && spaces(b, gap))
		return -1;
	return ga_buf_put(b, " | ", 3);
}

void ga_table_print(const struct ga_table *t, FILE *f)
{
	const char *cells[GA_TABLE_MAXCOLS];
	size_t i;
	int c;

	ga_table_print_head(t, f);
	for (i = 0; i + (size_t)t->ncols <= t->ncells; i += (size_t)t->ncols) {
		for (c = 0; c < t->ncols; c++)
			cells[c] = t->text.p + t->off[i + (size_t)c];
		row(t, f, cells, 0);
	}
}
