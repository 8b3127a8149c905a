/*
 * A small streaming writer of Protocol Buffers wire format: varints,
 * fixed 64-bit values, length-delimited strings and nested messages, into
 * a buffer that the caller hands to a FILE between top-level messages
 * (ga_pbw_flush()).  A nested message reserves one byte for its length
 * and moves its contents when the length needs more (messages of 128
 * bytes or more, which are rare here), so nothing is written twice in the
 * common case.  Running out of memory or nesting too deep is remembered
 * in err; write errors stay on the FILE (ferror) for its closer to report.
 * Knows no schema: field numbers come from the caller.  Runs offline only.
 */
#ifndef GA_BASE_PBW_H
#define GA_BASE_PBW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define GA_PBW_DEPTH 16

struct ga_pbw {
	uint8_t *p;
	size_t len, cap;
	size_t open[GA_PBW_DEPTH]; /* offset of each open message's length byte */
	unsigned depth;
	int err;                   /* out of memory, or nesting too deep */
};

/* Wire types. */
#define GA_PB_VARINT 0u
#define GA_PB_FIXED64 1u
#define GA_PB_LEN 2u

void ga_pbw_init(struct ga_pbw *w);
void ga_pbw_free(struct ga_pbw *w);

/* Room for n more bytes: 0, or -1 (err set) when memory runs out.  The slow path. */
int ga_pbw_grow(struct ga_pbw *w, size_t n);

static inline int ga_pbw_room(struct ga_pbw *w, size_t n)
{
	return !w->err && w->len + n <= w->cap ? 0 : ga_pbw_grow(w, n);
}

/*
 * A varint at o, room for it made; returns the byte after it.  For
 * writers that hold their place in a local pointer: a byte stored through
 * w->p may alias w->len, which the compiler then reloads and stores again
 * at every byte.
 */
static inline uint8_t *ga_pbw_varint_at(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* A fixed 64-bit value at o, little-endian whatever the host's order; the byte after it. */
static inline uint8_t *ga_pbw_le64_at(uint8_t *o, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(o, &v, sizeof(v));
#else
	for (int i = 0; i < 8; i++)
		o[i] = (uint8_t)(v >> (8 * i));
#endif
	return o + 8;
}

/* A varint at the end, room for it made. */
static inline void ga_pbw_put_varint(struct ga_pbw *w, uint64_t v)
{
	w->len = (size_t)(ga_pbw_varint_at(w->p + w->len, v) - w->p);
}

/* A field of wire type varint: uint64, uint32, bool, enum.  Inline: most fields are. */
static inline void ga_pbw_varint(struct ga_pbw *w, uint32_t field, uint64_t v)
{
	if (ga_pbw_room(w, 20))
		return;
	ga_pbw_put_varint(w, (uint64_t)field << 3 | GA_PB_VARINT);
	ga_pbw_put_varint(w, v);
}
/* int32 and int64 fields: negative values take ten bytes, as the format says. */
void ga_pbw_int(struct ga_pbw *w, uint32_t field, int64_t v);
void ga_pbw_fixed64(struct ga_pbw *w, uint32_t field, uint64_t v);
void ga_pbw_double(struct ga_pbw *w, uint32_t field, double v);
/* A string or bytes field. */
void ga_pbw_bytes(struct ga_pbw *w, uint32_t field, const void *s, size_t n);
void ga_pbw_str(struct ga_pbw *w, uint32_t field, const char *s);

/* The slow paths of ga_pbw_open() and ga_pbw_close(). */
void ga_pbw_open_slow(struct ga_pbw *w, uint32_t field);
void ga_pbw_close_slow(struct ga_pbw *w);

/* Open a nested message as field; close it with ga_pbw_close(). */
static inline void ga_pbw_open(struct ga_pbw *w, uint32_t field)
{
	if (field >= 16 || w->depth >= GA_PBW_DEPTH || ga_pbw_room(w, 2)) {
		ga_pbw_open_slow(w, field);
		return;
	}
	w->p[w->len++] = (uint8_t)(field << 3 | GA_PB_LEN);
	w->open[w->depth++] = w->len;
	w->p[w->len++] = 0;        /* the length, one byte until known */
}

static inline void ga_pbw_close(struct ga_pbw *w)
{
	size_t n;

	if (w->err || !w->depth || (n = w->len - w->open[w->depth - 1] - 1) >= 0x80) {
		ga_pbw_close_slow(w);
		return;
	}
	w->p[w->open[--w->depth]] = (uint8_t)n;
}

/*
 * With no message open, write what is buffered to f once it holds at
 * least min bytes (0: always).  Returns 0, or -1 when the write failed.
 */
int ga_pbw_flush(struct ga_pbw *w, FILE *f, size_t min);

/* Bytes a varint of v takes (1 to 10). */
unsigned ga_pbw_varint_len(uint64_t v);

#endif
