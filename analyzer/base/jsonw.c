/*
 * The streaming JSON writer (see jsonw.h).  Runs offline only.
 */
#include "base/jsonw.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

/* Separators of each layout: before the first element, before the others, before the close. */
static const struct {
	const char *first, *later, *close;
} seps[GA_JW_LAYOUT_COUNT] = {
	[GA_JW_COMPACT] = { "", ",", "" },
	[GA_JW_LINES] = { "\n  ", ",\n  ", "" },
	[GA_JW_KEYLINES] = { "", ",\n", "" },
	[GA_JW_SPACED] = { "", ", ", "" },
	[GA_JW_EVENTS] = { "\n", ",\n", "\n" },
};

void ga_jw_init(struct ga_jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

void ga_jw_free(struct ga_jw *w)
{
	ga_buf_free(&w->esc);
}

/* Before a value or a key: the separator its container wants. */
static void sep(struct ga_jw *w)
{
	int d = w->depth;

	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (d == 0)
		return;
	fputs(w->count[d] ? seps[w->layout[d]].later : seps[w->layout[d]].first, w->f);
	w->count[d]++;
}

static void open_c(struct ga_jw *w, enum ga_jw_layout layout, int obj)
{
	sep(w);
	fputc(obj ? '{' : '[', w->f);
	if (w->depth + 1 >= GA_JW_DEPTH) {
		w->err = 1;
		return;
	}
	w->depth++;
	w->layout[w->depth] = (uint8_t)layout;
	w->obj[w->depth] = (uint8_t)obj;
	w->count[w->depth] = 0;
}

void ga_jw_obj(struct ga_jw *w, enum ga_jw_layout layout)
{
	open_c(w, layout, 1);
}

void ga_jw_arr(struct ga_jw *w, enum ga_jw_layout layout)
{
	open_c(w, layout, 0);
}

void ga_jw_end(struct ga_jw *w)
{
	int d = w->depth;

	if (d == 0) {
		w->err = 1;
		return;
	}
	fputs(seps[w->layout[d]].close, w->f);
	fputc(w->obj[d] ? '}' : ']', w->f);
	w->depth--;
}

void ga_jw_layout(struct ga_jw *w, enum ga_jw_layout layout)
{
	w->layout[w->depth] = (uint8_t)layout;
}

static void put_str(struct ga_jw *w, const char *s, size_t len)
{
	w->esc.len = 0;
	if (ga_json_escape(&w->esc, s, len) == 0) {
		fwrite(w->esc.p, 1, w->esc.len, w->f);
	} else {
		fputs("\"\"", w->f);
		w->err = 1;
	}
}

void ga_jw_key(struct ga_jw *w, const char *key)
{
	sep(w);
	put_str(w, key, strlen(key));
	fputc(':', w->f);
	w->after_key = 1;
}

void ga_jw_str(struct ga_jw *w, const char *s, size_t len)
{
	sep(w);
	put_str(w, s, len);
}

void ga_jw_cstr(struct ga_jw *w, const char *s)
{
	ga_jw_str(w, s, strlen(s));
}

void ga_jw_u64(struct ga_jw *w, uint64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRIu64, v);
}

void ga_jw_i64(struct ga_jw *w, int64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRId64, v);
}

void ga_jw_bool(struct ga_jw *w, int v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void ga_jw_null(struct ga_jw *w)
{
	sep(w);
	fputs("null", w->f);
}

void ga_jw_rawf(struct ga_jw *w, const char *fmt, ...)
{
	va_list ap;

	sep(w);
	va_start(ap, fmt);
	vfprintf(w->f, fmt, ap);
	va_end(ap);
}

void ga_jw_kstr(struct ga_jw *w, const char *key, const char *s, size_t len)
{
	ga_jw_key(w, key);
	ga_jw_str(w, s, len);
}

void ga_jw_kcstr(struct ga_jw *w, const char *key, const char *s)
{
	ga_jw_key(w, key);
	ga_jw_cstr(w, s);
}

void ga_jw_ku64(struct ga_jw *w, const char *key, uint64_t v)
{
	ga_jw_key(w, key);
	ga_jw_u64(w, v);
}

void ga_jw_ki64(struct ga_jw *w, const char *key, int64_t v)
{
	ga_jw_key(w, key);
	ga_jw_i64(w, v);
}

void ga_jw_kbool(struct ga_jw *w, const char *key, int v)
{
	ga_jw_key(w, key);
	ga_jw_bool(w, v);
}
