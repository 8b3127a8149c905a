/*
 * The streaming JSON writer (see jsonw.h).  Output goes through a buffer
 * of the writer's own, handed to stdio in large pieces: exports of large
 * traces write tens of millions of small tokens.  Runs offline only.
 */
#include "base/jsonw.h"

#include <stdarg.h>
#include <string.h>

/* Separators of each layout: before the first element, before the others, before the close. */
static const struct {
	const char *first, *later, *close;
	unsigned char nfirst, nlater; /* their lengths */
} seps[GA_JW_LAYOUT_COUNT] = {
	[GA_JW_COMPACT] = { "", ",", "", 0, 1 },
	[GA_JW_LINES] = { "\n  ", ",\n  ", "", 3, 4 },
	[GA_JW_KEYLINES] = { "", ",\n", "", 0, 2 },
	[GA_JW_SPACED] = { "", ", ", "", 0, 2 },
	[GA_JW_EVENTS] = { "\n", ",\n", "\n", 1, 2 },
};

const char ga_jw_digits2[200] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

const uint64_t ga_jw_pow10[20] = {
	1ull,
	10ull,
	100ull,
	1000ull,
	10000ull,
	100000ull,
	1000000ull,
	10000000ull,
	100000000ull,
	1000000000ull,
	10000000000ull,
	100000000000ull,
	1000000000000ull,
	10000000000000ull,
	100000000000000ull,
	1000000000000000ull,
	10000000000000000ull,
	100000000000000000ull,
	1000000000000000000ull,
	10000000000000000000ull,
};

void ga_jw_init(struct ga_jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

/* A short write leaves the FILE's error flag set, which its closer reports. */
void ga_jw_flush(struct ga_jw *w)
{
	if (w->n) {
		fwrite(w->buf, 1, w->n, w->f);
		/* Only after a write: a writer that never wrote may have no FILE (sqlite). */
		w->ferr = ferror(w->f);
	}
	w->out += w->n;
	w->n = 0;
}

void ga_jw_free(struct ga_jw *w)
{
	ga_jw_flush(w);
	ga_buf_free(&w->esc);
}

static inline void put(struct ga_jw *w, const char *s, size_t len)
{
	if (len <= 4 && w->n + 4 <= sizeof(w->buf)) {
		/* Separators and punctuation: no call to memcpy for a byte or two. */
		for (size_t i = 0; i < len; i++)
			w->buf[w->n + i] = s[i];
		w->n += len;
		return;
	}
	if (w->n + len > sizeof(w->buf)) {
		ga_jw_flush(w);
		if (len > sizeof(w->buf)) {
			fwrite(s, 1, len, w->f);
			w->ferr = ferror(w->f);
			return;
		}
	}
	memcpy(w->buf + w->n, s, len);
	w->n += len;
}

static inline void putch(struct ga_jw *w, char c)
{
	if (w->n == sizeof(w->buf))
		ga_jw_flush(w);
	w->buf[w->n++] = c;
}

static void puts_(struct ga_jw *w, const char *s)
{
	put(w, s, strlen(s));
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
	/* The separators' lengths, known: a strlen per value showed in the profile. */
	if (w->count[d]++)
		put(w, seps[w->layout[d]].later, seps[w->layout[d]].nlater);
	else
		put(w, seps[w->layout[d]].first, seps[w->layout[d]].nfirst);
}

static void open_c(struct ga_jw *w, enum ga_jw_layout layout, int obj)
{
	sep(w);
	putch(w, obj ? '{' : '[');
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
	puts_(w, seps[w->layout[d]].close);
	putch(w, w->obj[d] ? '}' : ']');
	w->depth--;
}

void ga_jw_layout(struct ga_jw *w, enum ga_jw_layout layout)
{
	w->layout[w->depth] = (uint8_t)layout;
}

/* Plain ASCII without quotes, backslashes or controls: written as it is. */
static int plain(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			return 0;
	}
	return 1;
}

static void put_str(struct ga_jw *w, const char *s, size_t len)
{
	if (plain(s, len)) {
		putch(w, '"');
		put(w, s, len);
		putch(w, '"');
		return;
	}
	w->esc.len = 0;
	if (ga_json_escape(&w->esc, s, len) == 0) {
		put(w, w->esc.p, w->esc.len);
	} else {
		put(w, "\"\"", 2);
		w->err = 1;
	}
}

void ga_jw_key(struct ga_jw *w, const char *key)
{
	sep(w);
	/* Keys are the program's own identifiers, never data: no escaping. */
	putch(w, '"');
	puts_(w, key);
	put(w, "\":", 2);
	w->after_key = 1;
}

void ga_jw_key_str(struct ga_jw *w, const char *key, size_t len)
{
	sep(w);
	put_str(w, key, len);
	putch(w, ':');
	w->after_key = 1;
}

/* Decimal digits of v, without printf's parsing. */
static void put_u64(struct ga_jw *w, uint64_t v)
{
	char b[24];
	int i = (int)sizeof(b);

	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(w, b + i, sizeof(b) - (size_t)i);
}

char *ga_jw_direct_any(struct ga_jw *w, size_t n)
{
	if (n > sizeof(w->buf))
		return NULL;
	sep(w);
	if (w->n + n > sizeof(w->buf))
		ga_jw_flush(w);
	return w->buf + w->n;
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
	put_u64(w, v);
}

void ga_jw_i64(struct ga_jw *w, int64_t v)
{
	sep(w);
	if (v < 0) {
		putch(w, '-');
		put_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(w, (uint64_t)v);
	}
}

void ga_jw_milli(struct ga_jw *w, uint64_t v)
{
	char d[4];

	sep(w);
	put_u64(w, v / 1000);
	d[0] = '.';
	d[1] = (char)('0' + v / 100 % 10);
	d[2] = (char)('0' + v / 10 % 10);
	d[3] = (char)('0' + v % 10);
	put(w, d, 4);
}

void ga_jw_bool(struct ga_jw *w, int v)
{
	sep(w);
	puts_(w, v ? "true" : "false");
}

void ga_jw_null(struct ga_jw *w)
{
	sep(w);
	put(w, "null", 4);
}

void ga_jw_rawf(struct ga_jw *w, const char *fmt, ...)
{
	char b[256];
	va_list ap;
	int n;

	sep(w);
	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(b)) {
		w->err = 1;
		return;
	}
	put(w, b, (size_t)n);
}

void ga_jw_raw(struct ga_jw *w, const char *s)
{
	puts_(w, s);
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
