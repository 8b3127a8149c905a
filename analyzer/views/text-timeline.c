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
 * len bytes from s at o in 32-byte pieces, no call: both ends have 31
 * bytes to spare after them (CELL_SLACK), which the pieces may overrun.
 */
#define CELL_SLACK 32
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

/*
 * A row's line but for its duration's digits, by the three indexes of its
 * cells: the duration cell of a duration under 10 ms ("0.000000 ms", put
 * right-aligned as put_dur() does), " | ", then the device, label and NVTX
 * cells.  A few recent ones, each slot its own text (CELL_SLACK to spare
 * after it), so that most rows copy one piece of text and write 7 digits
 * in it; dur is where the duration cell ends (the rest is the row's after
 * any duration's cell).
 */
#define TAILS 256

/* "000 " to "999 ": three digits and the space after the duration's (one 4-byte copy each). */
static char digits3[4000];

static void digits3_make(void)
{
	for (unsigned i = 0; i < 1000; i++) {
		digits3[4 * i] = (char)('0' + i / 100);
		digits3[4 * i + 1] = (char)('0' + i / 10 % 10);
		digits3[4 * i + 2] = (char)('0' + i % 10);
		digits3[4 * i + 3] = ' ';
	}
}
#define DUR_SHORT 10000000u /* below 10 ms: the duration cell as the template has it */
#define DUR_TEXT 11         /* its length, "0.000000 ms" */
struct tail {
	uint32_t devrow, label, nvtx, used;
	char *text;
	size_t len, cap, dur;
};

static inline size_t tail_slot(uint32_t devrow, uint32_t label, uint32_t nvtx)
{
	return (size_t)((devrow * 0x9e3779b1u ^ label * 0x85ebca77u ^ nvtx * 0xc2b2ae3du) >> 24) %
	       TAILS;
}

/*
 * Slot t made for d, l and v (v only with nvtx), the duration column w
 * wide; -1 out of memory.
 */
static int tail_make(struct tail *t, size_t w, const char *d, size_t dl, const char *l,
		     size_t ll, const char *v, size_t vl, int nvtx)
{
	size_t pad = w > DUR_TEXT ? w - DUR_TEXT : 0, len = pad + DUR_TEXT + 3 + dl + ll;
	char *o;

	len += nvtx ? vl : 0;
	if (ga_util_grow(&t->text, &t->cap, len + CELL_SLACK, 1))
		return -1;
	memset(t->text, ' ', pad);
	memcpy(t->text + pad, "0.000000 ms | ", DUR_TEXT + 3);
	t->dur = pad + DUR_TEXT;
	o = t->text + t->dur + 3;
	memcpy(o, d, dl);
	memcpy(o + dl, l, ll);
	if (nvtx)
		memcpy(o + dl + ll, v, vl);
	t->len = len;
	return 0;
}

/* An NVTX column's text: the range's name, cut, or "-". */
static const char *nvtx_name(const struct ga_model *m, const struct ga_text *r, uint32_t id,
			     char *buf, size_t n)
{
	return id ? ga_text_name_cut(r, buf, n, ga_model_str(m, id)) : "-";
}

/*
 * The rows come from the model's sorted runs (model.h, rows), as many at a
 * time as are in order one after the other; each is built in a buffer
 * written out in large blocks.  The cells of devices, labels and NVTX
 * names are made once each, and a row's three as one text in a small
 * cache of recent ones.
 */
static int print_timeline(struct ga_model *m, const struct ga_text *r,
			  const struct ga_warp_cols *c, int nvtx, FILE *out)
{
	struct ga_table t;
	char lb[4 * GA_TEXT_NAME_WIDTH + 8];
	struct cells dev = { 0 }, lab = { 0 }, nv = { 0 };
	struct tail *tails = NULL;
	struct ga_buf line = { 0 };
	const struct ga_row *row = NULL;
	size_t span = 0, dmax;
	int rc = 0;

	fputs("CUDA timeline:\n", out);
	ga_text_warp_table(&t, c, "Duration", "Device", "Activity", 0);
	if (nvtx) {
		/* The innermost NVTX range each activity was launched in. */
		t.ncols = 4;
		ga_table_col(&t, 3, "NVTX", 0, 0);
	}
	ga_table_print_head(&t, out);
	/* The duration: at most 20 digits of ms, ".", 6 digits, " ms", padded; then " | ". */
	dmax = t.width[0] + 30 + GA_TEXT_DUR_PAD + 3;
	if (!digits3[0])
		digits3_make();
	if (m->nrows && !(tails = calloc(TAILS, sizeof(*tails))))
		rc = -1;
	while (!rc && m->nrows && (span || (row = ga_xsort_next_n(&m->rows, &span)))) {
		const char *d, *l, *v = "-";
		size_t dl, ll, vl = 1, need;
		struct tail *tl = &tails[tail_slot(row->devrow, row->label, row->nvtx)];
		char *o;

		span--;
		if (!tl->used || tl->devrow != row->devrow || tl->label != row->label ||
		    tl->nvtx != row->nvtx) {
			if (!(d = cached(&dev, row->devrow, &dl)))
				d = cell(&t, 1, &dev, row->devrow,
					 ga_model_str(m, m->devrows[row->devrow].label), &dl);
			if (!(l = cached(&lab, row->label, &ll)))
				l = cell(&t, 2, &lab, row->label,
					 ga_text_label(m, r, row->label, lb, sizeof(lb)), &ll);
			if (nvtx && !(v = cached(&nv, row->nvtx, &vl)))
				v = cell(&t, 3, &nv, row->nvtx,
					 nvtx_name(m, r, row->nvtx, lb, sizeof(lb)), &vl);
			if (!d || !l || !v || tail_make(tl, t.width[0], d, dl, l, ll, v, vl, nvtx)) {
				rc = -1;
				break;
			}
			tl->devrow = row->devrow;
			tl->label = row->label;
			tl->nvtx = row->nvtx;
			tl->used = 1;
		}
		need = line.len + dmax + tl->len + CELL_SLACK;
		if (need > line.cap && ga_util_grow(&line.p, &line.cap, need, 1)) {
			rc = -1;
			break;
		}
		o = line.p + line.len;
		if (row->dur < DUR_SHORT) {
			/*
			 * The template, then its digits: "M.UUUUUU" ends 3
			 * before the cell; the last three digits' copy ends
			 * with the space after them, so it goes after the first.
			 */
			unsigned ns = (unsigned)row->dur, frac = ns % 1000000;
			char *q = put_cell(o, tl->text, tl->len);

			o += tl->dur - DUR_TEXT;
			o[0] = (char)('0' + ns / 1000000);
			memcpy(o + 2, digits3 + frac / 1000 * 4, 4);
			memcpy(o + 5, digits3 + frac % 1000 * 4, 4);
			o = q;
		} else {
			o = put_dur(o, row->dur, t.width[0]);
			memcpy(o, " | ", 3);
			o = put_cell(o + 3, tl->text + tl->dur + 3, tl->len - tl->dur - 3);
		}
		line.len = (size_t)(o - line.p);
		if (line.len >= (256u << 10)) {
			fwrite(line.p, 1, line.len, out);
			line.len = 0;
		}
		row++;
	}
	if (line.len)
		fwrite(line.p, 1, line.len, out);
	ga_buf_free(&line);
	for (size_t i = 0; tails && i < TAILS; i++)
		free(tails[i].text);
	free(tails);
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
