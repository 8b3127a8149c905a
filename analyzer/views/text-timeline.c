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

#include "base/jsonw.h"
#include "views/text.h"

/* Spaces enough to pad the duration's cell: its column is never wider (GA_TEXT_DUR_PAD). */
static const char spaces[] = "                                ";
#define GA_TEXT_DUR_PAD (sizeof(spaces) - 1)

/*
 * The duration cell, Warp's format (ga_text_warp_ms()) without printf,
 * "M.UUUUUU ms" right-aligned to width w as ga_table_cell() pads it
 * (digits, one column each), at o; returns its end.  Room at o: w or the
 * text's length, whichever is more, plus GA_TEXT_DUR_PAD.
 */
static char *put_dur(char *o, uint64_t ns, size_t w)
{
	uint64_t ms = ns / 1000000, v;
	unsigned frac = (unsigned)(ns % 1000000);
	size_t n = 1 + 6 + 3, digits = 1;
	char *q;

	/* Its length first, to write it in place from its end (no copy of it). */
	for (v = ms; v >= 10; v /= 10)
		digits++;
	n += digits;
	if (w > n) {
		/* A fixed-size copy, then only as far as the padding goes. */
		if (w - n <= GA_TEXT_DUR_PAD)
			memcpy(o, spaces, GA_TEXT_DUR_PAD);
		else
			memset(o, ' ', w - n);
		o += w - n;
	}
	q = o + n;
	memcpy(q - 3, " ms", 3);
	memcpy(q - 5, ga_jw_digits2 + frac % 100 * 2, 2);
	memcpy(q - 7, ga_jw_digits2 + frac / 100 % 100 * 2, 2);
	memcpy(q - 9, ga_jw_digits2 + frac / 10000 * 2, 2);
	q[-10] = '.';
	q -= 10;
	do {
		*--q = (char)('0' + ms % 10);
		ms /= 10;
	} while (ms);
	return o + n;
}

/*
 * len bytes from s at o in 16-byte pieces, no call: both ends have 15
 * bytes to spare after them (CELL_SLACK), which the pieces may overrun.
 */
#define CELL_SLACK 16
static inline char *put_cell(char *o, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i += CELL_SLACK)
		memcpy(o + i, s + i, CELL_SLACK);
	return o + len;
}

/* A cell made: its offset in text + 1 (0: not made yet) and length. */
struct cell {
	size_t off, len;
};

/* The cells made once per devrow, label or NVTX name, by index. */
struct cells {
	struct ga_buf text;
	struct cell *e;
	size_t cap;
};

/* Index i's cell if made: its text and *len; else NULL. */
static inline const char *cached(const struct cells *c, size_t i, size_t *len)
{
	if (i >= c->cap || !c->e[i].off)
		return NULL;
	*len = c->e[i].len;
	return c->text.p + c->e[i].off - 1;
}

/* Index i's cell of column col, made from s; NULL out of memory. */
static const char *cell(const struct ga_table *t, int col, struct cells *c, size_t i,
			const char *s, size_t *len)
{
	if (i >= c->cap) {
		size_t old = c->cap;

		if (ga_util_grow(&c->e, &c->cap, i + 1, sizeof(*c->e)))
			return NULL;
		memset(c->e + old, 0, (c->cap - old) * sizeof(*c->e));
	}
	if (!c->e[i].off) {
		size_t at = c->text.len;

		/* Room after the text for put_cell()'s last piece. */
		if (ga_table_cell(t, col, s, &c->text) ||
		    ga_util_grow(&c->text.p, &c->text.cap, c->text.len + CELL_SLACK, 1))
			return NULL;
		c->e[i].off = at + 1;
		c->e[i].len = c->text.len - at;
	}
	*len = c->e[i].len;
	return c->text.p + c->e[i].off - 1;
}

static void cells_free(struct cells *c)
{
	ga_buf_free(&c->text);
	free(c->e);
}

/* An NVTX column's text: the range's name, cut, or "-". */
static const char *nvtx_name(const struct ga_model *m, const struct ga_text *r, uint32_t id,
			     char *buf, size_t n)
{
	return id ? ga_text_name_cut(r, buf, n, ga_model_str(m, id)) : "-";
}

/*
 * The rows come from the model's sorted runs (model.h, rows), one at a
 * time; each is built in a buffer written out in large blocks.  The cells
 * of devices, labels and NVTX names are made once each.
 */
static int print_timeline(struct ga_model *m, const struct ga_text *r,
			  const struct ga_warp_cols *c, int nvtx, FILE *out)
{
	struct ga_table t;
	char lb[4 * GA_TEXT_NAME_WIDTH + 8];
	struct cells dev = { 0 }, lab = { 0 }, nv = { 0 };
	struct ga_buf line = { 0 };
	const struct ga_row *row;
	int rc = 0;

	fputs("CUDA timeline:\n", out);
	ga_text_warp_table(&t, c, "Duration", "Device", "Activity", 0);
	if (nvtx) {
		/* The innermost NVTX range each activity was launched in. */
		t.ncols = 4;
		ga_table_col(&t, 3, "NVTX", 0, 0);
	}
	ga_table_print_head(&t, out);
	while (m->nrows && (row = ga_xsort_next(&m->rows))) {
		const char *d, *l, *v = "-";
		size_t dl, ll, vl = 1, need;
		char *o;

		if (!(d = cached(&dev, row->devrow, &dl)))
			d = cell(&t, 1, &dev, row->devrow,
				 ga_model_str(m, m->devrows[row->devrow].label), &dl);
		if (!(l = cached(&lab, row->label, &ll)))
			l = cell(&t, 2, &lab, row->label,
				 ga_text_label(m, r, row->label, lb, sizeof(lb)), &ll);
		if (nvtx && !(v = cached(&nv, row->nvtx, &vl)))
			v = cell(&t, 3, &nv, row->nvtx, nvtx_name(m, r, row->nvtx, lb, sizeof(lb)),
				 &vl);
		/* The duration: at most 20 digits of ms, ".", 6 digits, " ms". */
		need = line.len + t.width[0] + 30 + GA_TEXT_DUR_PAD + 3 + dl + ll + vl + 1 + CELL_SLACK;
		if (!d || !l || !v || (need > line.cap && ga_util_grow(&line.p, &line.cap, need, 1))) {
			rc = -1;
			break;
		}
		o = put_dur(line.p + line.len, row->dur, t.width[0]);
		memcpy(o, " | ", 3);
		o += 3;
		o = put_cell(o, d, dl);
		o = put_cell(o, l, ll);
		if (nvtx)
			o = put_cell(o, v, vl);
		line.len = (size_t)(o - line.p);
		if (line.len >= (64u << 10)) {
			fwrite(line.p, 1, line.len, out);
			line.len = 0;
		}
	}
	if (line.len)
		fwrite(line.p, 1, line.len, out);
	ga_buf_free(&line);
	cells_free(&dev);
	cells_free(&lab);
	cells_free(&nv);
	ga_table_free(&t);
	if (m->rows.err[0]) {
		fprintf(stderr, "gpuprof: the timeline's rows: %s\n", m->rows.err);
		return -1;
	}
	if (m->rows_seen > m->nrows)
		fprintf(out, "\xe2\x80\xa6 %" PRIu64 " more activities not shown\n",
			m->rows_seen - m->nrows);
	return rc;
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
	return print_timeline(&r->an->m, r, &r->wc, r->an->rg.nranges > 0, out);
}

const struct ga_text_section ga_text_timeline = { "timeline", want, print };
