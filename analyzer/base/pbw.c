/*
 * Protocol Buffers wire format writer (see pbw.h).  Runs offline only.
 */
#include <stdlib.h>
#include <string.h>

#include "base/pbw.h"

void ga_pbw_init(struct ga_pbw *w)
{
	memset(w, 0, sizeof(*w));
}

void ga_pbw_free(struct ga_pbw *w)
{
	free(w->p);
	memset(w, 0, sizeof(*w));
}

unsigned ga_pbw_varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int ga_pbw_grow(struct ga_pbw *w, size_t n)
{
	size_t cap;
	uint8_t *np;

	if (w->err)
		return -1;
	if (w->len + n <= w->cap)
		return 0;
	cap = w->cap ? w->cap : 4096;
	while (cap < w->len + n)
		cap *= 2;
	np = realloc(w->p, cap);
	if (!np) {
		w->err = 1;
		return -1;
	}
	w->p = np;
	w->cap = cap;
	return 0;
}

void ga_pbw_int(struct ga_pbw *w, uint32_t field, int64_t v)
{
	ga_pbw_varint(w, field, (uint64_t)v);
}

void ga_pbw_fixed64(struct ga_pbw *w, uint32_t field, uint64_t v)
{
	if (ga_pbw_room(w, 18))
		return;
	ga_pbw_put_varint(w, (uint64_t)field << 3 | GA_PB_FIXED64);
	/* Little-endian, whatever the host's order. */
	for (int i = 0; i < 8; i++)
		w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

void ga_pbw_double(struct ga_pbw *w, uint32_t field, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	ga_pbw_fixed64(w, field, u);
}

void ga_pbw_bytes(struct ga_pbw *w, uint32_t field, const void *s, size_t n)
{
	if (ga_pbw_room(w, 20 + n))
		return;
	ga_pbw_put_varint(w, (uint64_t)field << 3 | GA_PB_LEN);
	ga_pbw_put_varint(w, n);
	if (n)
		memcpy(w->p + w->len, s, n);
	w->len += n;
}

void ga_pbw_str(struct ga_pbw *w, uint32_t field, const char *s)
{
	ga_pbw_bytes(w, field, s, strlen(s));
}

void ga_pbw_open_slow(struct ga_pbw *w, uint32_t field)
{
	if (w->depth >= GA_PBW_DEPTH) {
		w->err = 1;
		return;
	}
	if (ga_pbw_room(w, 11))
		return;
	ga_pbw_put_varint(w, (uint64_t)field << 3 | GA_PB_LEN);
	w->open[w->depth++] = w->len;
	w->p[w->len++] = 0;        /* the length, one byte until known */
}

void ga_pbw_close_slow(struct ga_pbw *w)
{
	size_t at, n;
	unsigned k;

	if (w->err || !w->depth)
		return;
	at = w->open[--w->depth];
	n = w->len - at - 1;
	k = ga_pbw_varint_len(n);
	if (k > 1) {
		if (ga_pbw_room(w, k - 1))
			return;
		memmove(w->p + at + k, w->p + at + 1, n);
		w->len += k - 1;
	}
	for (unsigned i = 0; i + 1 < k; i++) {
		w->p[at + i] = (uint8_t)(n | 0x80);
		n >>= 7;
	}
	w->p[at + k - 1] = (uint8_t)n;
}

int ga_pbw_flush(struct ga_pbw *w, FILE *f, size_t min)
{
	if (w->depth || w->len < min || !w->len)
		return 0;
	if (fwrite(w->p, 1, w->len, f) != w->len)
		return -1;
	w->len = 0;
	return 0;
}
