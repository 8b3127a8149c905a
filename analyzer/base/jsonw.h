/*
 * A small streaming JSON writer: containers are opened and closed, keys
 * and values written, and the writer puts the separators.  Each container
 * has a layout (compact, one element per line, ...) so that large exports
 * stay readable and diffable without a pretty-printer.  Output is buffered
 * in the writer: call ga_jw_flush() before writing to the FILE directly.
 * Keys are the program's identifiers and are written unescaped.  Running
 * out of memory while escaping, or nesting too deep, is remembered in
 * err; write errors stay on the FILE (ferror) for its closer to report.
 * Runs offline only.
 */
#ifndef GA_BASE_JSONW_H
#define GA_BASE_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

enum ga_jw_layout {
	GA_JW_COMPACT,             /* a,b,c */
	GA_JW_LINES,               /* each element on a line of its own, indented by two */
	GA_JW_KEYLINES,            /* members after the first on lines of their own */
	GA_JW_SPACED,              /* a, b, c */
	GA_JW_EVENTS,              /* each element on a line of its own, the close too */
	GA_JW_LAYOUT_COUNT
};

#define GA_JW_DEPTH 32

struct ga_jw {
	FILE *f;
	struct ga_buf esc;
	int depth;
	int after_key;             /* a key was written: its value needs no separator */
	uint8_t layout[GA_JW_DEPTH];
	uint8_t obj[GA_JW_DEPTH];
	uint64_t count[GA_JW_DEPTH];
	int err;                   /* out of memory, or nesting too deep */
	int ferr;                  /* the FILE's error flag after the last flush */
	uint64_t out;              /* bytes handed to the FILE before those in buf */
	size_t n;                  /* bytes in buf */
	char buf[1 << 16];
};

void ga_jw_init(struct ga_jw *w, FILE *f);
/* Hand what is buffered to the FILE. */
void ga_jw_flush(struct ga_jw *w);
/* Flush and release. */
void ga_jw_free(struct ga_jw *w);

/*
 * Nonzero once out of memory, nesting too deep, or the FILE failed a write
 * of the writer's (its error flag read at each flush, not per call: the
 * hot events of large exports ask after each one).
 */
static inline int ga_jw_failed(const struct ga_jw *w)
{
	return w->err || w->ferr;
}

/* Open an object or an array with the given layout; close the innermost. */
void ga_jw_obj(struct ga_jw *w, enum ga_jw_layout layout);
void ga_jw_arr(struct ga_jw *w, enum ga_jw_layout layout);
void ga_jw_end(struct ga_jw *w);

/* Change the layout of the innermost container from its next element on. */
void ga_jw_layout(struct ga_jw *w, enum ga_jw_layout layout);

/* A member's key (a C string, escaped); the value follows. */
void ga_jw_key(struct ga_jw *w, const char *key);
/* A key that is data (a metric name, say): escaped like a string value. */
void ga_jw_key_str(struct ga_jw *w, const char *key, size_t len);

void ga_jw_str(struct ga_jw *w, const char *s, size_t len);
void ga_jw_cstr(struct ga_jw *w, const char *s);
void ga_jw_u64(struct ga_jw *w, uint64_t v);
void ga_jw_i64(struct ga_jw *w, int64_t v);
/* v thousandths as a number with three decimals (nanoseconds as microseconds). */
void ga_jw_milli(struct ga_jw *w, uint64_t v);
void ga_jw_bool(struct ga_jw *w, int v);
void ga_jw_null(struct ga_jw *w);
/* A value written as formatted (a number in a fixed format, say). */
void ga_jw_rawf(struct ga_jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Text written as it is, outside the separators' logic (a newline, say). */
void ga_jw_raw(struct ga_jw *w, const char *s);

/*
 * Room for one value of at most n bytes, written straight into the
 * buffer (the hot events of large exports): the separator its container
 * wants is written, and the place to write at returned; hand the end of
 * what was written to ga_jw_wrote().  NULL when n is more than the buffer
 * holds: write the value through the calls above.
 */
char *ga_jw_direct_any(struct ga_jw *w, size_t n);

/*
 * ga_jw_direct_any(), the usual case inline: an element after the first
 * of a GA_JW_EVENTS array, whose separator is ",\n", with room for it.
 */
static inline char *ga_jw_direct(struct ga_jw *w, size_t n)
{
	int d = w->depth;

	/* Written so that no term wraps (the compiler then sees every index in bounds). */
	if (!w->after_key && d > 0 && w->count[d] && w->layout[d] == GA_JW_EVENTS &&
	    n <= sizeof(w->buf) - 2 && w->n <= sizeof(w->buf) - 2 - n) {
		w->count[d]++;
		w->buf[w->n] = ',';
		w->buf[w->n + 1] = '\n';
		w->n += 2;
		return w->buf + w->n;
	}
	return ga_jw_direct_any(w, n);
}

static inline void ga_jw_wrote(struct ga_jw *w, char *end)
{
	w->n = (size_t)(end - w->buf);
}

/* Where p, in the buffer, is in the whole output (a place that stays the same across flushes). */
static inline uint64_t ga_jw_pos(const struct ga_jw *w, const char *p)
{
	return w->out + (uint64_t)(p - w->buf);
}

/*
 * The n bytes written at pos (ga_jw_pos()) while they are still in the
 * buffer, to copy again; NULL once flushed.
 */
static inline const char *ga_jw_at(const struct ga_jw *w, uint64_t pos, size_t n)
{
	return pos >= w->out && n <= w->n && pos - w->out <= w->n - n ? w->buf + (pos - w->out) : NULL;
}

/* Text of known length at p; returns the end. */
static inline char *ga_jw_put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

/* A string literal at p (its length known at compile time). */
#define GA_JW_LIT(p, s) ga_jw_put((p), (s), sizeof(s) - 1)

extern const char ga_jw_digits2[200];
extern const uint64_t ga_jw_pow10[20];

/*
 * v's decimal digits at p, written in place from the last, four at a time
 * below 2^32 (each pair of digits one 2-byte copy from ga_jw_digits2; a
 * variable-length copy of each number cost more than its digits);
 * returns the end.
 */
static inline char *ga_jw_put_u64(char *p, uint64_t v)
{
	/* Digits: from the bit length, corrected by one comparison. */
	unsigned n = (unsigned)((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
	char *end, *q;
	uint32_t u;

	n += v >= ga_jw_pow10[n];
	n += !n;
	end = q = p + n;
	while (v > UINT32_MAX) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		q -= 2;
		memcpy(q, ga_jw_digits2 + d, 2);
	}
	/* The rest in 32 bits: a division by a constant there is one multiply and a shift. */
	u = (uint32_t)v;
	while (u >= 10000) {
		uint32_t r = u % 10000, hi = r / 100;

		u /= 10000;
		q -= 4;
		memcpy(q, ga_jw_digits2 + hi * 2, 2);
		memcpy(q + 2, ga_jw_digits2 + (r - hi * 100) * 2, 2);
	}
	if (u >= 100) {
		uint32_t hi = u / 100;

		q -= 2;
		memcpy(q, ga_jw_digits2 + (u - hi * 100) * 2, 2);
		u = hi;
	}
	if (u >= 10)
		memcpy(q - 2, ga_jw_digits2 + u * 2, 2);
	else
		q[-1] = (char)('0' + u);
	return end;
}

/*
 * v (below 10^8) as eight decimal digits, leading zeros included, in one
 * word whose lowest byte is the first digit (so little-endian memory
 * holds them in order): each step splits every lane of the word in two
 * (a multiply and a shift divide all lanes at once).
 */
static inline uint64_t ga_jw_digits8(uint32_t v)
{
	uint64_t x = v / 10000 | (uint64_t)(v % 10000) << 32, h;

	h = (x * 10486) >> 20 & 0x0000007f0000007full; /* / 100 in each 32-bit lane (< 10^4) */
	x = h | (x - h * 100) << 16;
	h = (x * 103) >> 10 & 0x000f000f000f000full; /* / 10 in each 16-bit lane (< 100) */
	x = h | (x - h * 10) << 8;
	return x | 0x3030303030303030ull;
}

/*
 * ga_jw_put_u64()'s digits of v, where p has 8 bytes of room more than v's
 * digits: from 100 to 10^8, one store of ga_jw_digits8() (the bytes after
 * the digits are left for what follows to overwrite); above, the digits
 * before the last eight (or sixteen) so, then eight at a time (times in
 * nanoseconds since the epoch have 19 digits); returns the end.
 */
static inline __attribute__((always_inline)) char *ga_jw_put_u64_room(char *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t lo = 0, mid = 0, d;
	int k = 0;

	if (v >= 100000000) {
		lo = v % 100000000;
		v /= 100000000;
		k = 1;
		if (v >= 100000000) {
			mid = v % 100000000;
			v /= 100000000;
			k = 2;
		}
	}
	if (v < 100) {
		/* Durations of a few microseconds: a digit or a pair. */
		if (v < 10) {
			*p++ = (char)('0' + v);
		} else {
			memcpy(p, ga_jw_digits2 + v * 2, 2);
			p += 2;
		}
	} else {
		unsigned n = (unsigned)((64 - __builtin_clzll(v)) * 1233) >> 12;

		n += v >= ga_jw_pow10[n];
		d = ga_jw_digits8((uint32_t)v) >> (8 * (8 - n));
		memcpy(p, &d, 8);
		p += n;
	}
	if (k == 2) {
		d = ga_jw_digits8((uint32_t)mid);
		memcpy(p, &d, 8);
		p += 8;
	}
	if (k) {
		d = ga_jw_digits8((uint32_t)lo);
		memcpy(p, &d, 8);
		p += 8;
	}
	return p;
#else
	return ga_jw_put_u64(p, v);
#endif
}

/* ".ddd" of r < 1000 at p. */
static inline char *ga_jw_put_frac3(char *p, unsigned r)
{
	unsigned hi = r / 100;

	p[0] = '.';
	p[1] = (char)('0' + hi);
	memcpy(p + 2, ga_jw_digits2 + (r - hi * 100) * 2, 2);
	return p + 4;
}

/* v thousandths with three decimals at p, as ga_jw_milli() writes them. */
static inline char *ga_jw_put_milli(char *p, uint64_t v)
{
	uint64_t us = v / 1000;

	return ga_jw_put_frac3(ga_jw_put_u64(p, us), (unsigned)(v - us * 1000));
}

/* ga_jw_put_milli() where p has 8 bytes of room more (ga_jw_put_u64_room()). */
static inline char *ga_jw_put_milli_room(char *p, uint64_t v)
{
	uint64_t us = v / 1000;

	return ga_jw_put_frac3(ga_jw_put_u64_room(p, us), (unsigned)(v - us * 1000));
}

/* key and value in one call. */
void ga_jw_kstr(struct ga_jw *w, const char *key, const char *s, size_t len);
void ga_jw_kcstr(struct ga_jw *w, const char *key, const char *s);
void ga_jw_ku64(struct ga_jw *w, const char *key, uint64_t v);
void ga_jw_ki64(struct ga_jw *w, const char *key, int64_t v);
void ga_jw_kbool(struct ga_jw *w, const char *key, int v);

#endif
