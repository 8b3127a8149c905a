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
	size_t n;                  /* bytes in buf */
	char buf[1 << 16];
};

void ga_jw_init(struct ga_jw *w, FILE *f);
/* Hand what is buffered to the FILE. */
void ga_jw_flush(struct ga_jw *w);
/* Flush and release. */
void ga_jw_free(struct ga_jw *w);

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

/* key and value in one call. */
void ga_jw_kstr(struct ga_jw *w, const char *key, const char *s, size_t len);
void ga_jw_kcstr(struct ga_jw *w, const char *key, const char *s);
void ga_jw_ku64(struct ga_jw *w, const char *key, uint64_t v);
void ga_jw_ki64(struct ga_jw *w, const char *key, int64_t v);
void ga_jw_kbool(struct ga_jw *w, const char *key, int v);

#endif
