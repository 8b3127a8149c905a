/*
 * Delta coding of chunk payloads (GP_CHUNK_F_DELTA), shared by the recorder
 * (encodes in the writer thread, before compression) and the reader
 * (decodes after decompression).  See docs/FORMAT.md, "Delta coding".
 *
 * For the timed activity types (kernel, memcpy, memset, graph, API), within
 * one chunk and per record type:
 *     start       -> start - previous start of that type (0 before the first)
 *     end         -> end - start
 *     correlation -> correlation - previous correlation of that type
 * all modulo 2^64 / 2^32, so any input round-trips.  Consecutive activities
 * then differ by small numbers, which zstd compresses about twice as well.
 * Records too short for their type and all other types are left alone.
 */
#ifndef GPUPROF_DELTA_H
#define GPUPROF_DELTA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace.h"

struct gp_delta_field {
	uint16_t ts;               /* offset of start (end follows at ts + 8) */
	uint16_t corr;             /* offset of correlation */
	uint16_t min_size;         /* record size needed to hold both */
};

static inline int gp_delta_fields(uint16_t type, struct gp_delta_field *f)
{
#define GP_DELTA_CASE(T, S)                                        \
	case T:                                                    \
		f->ts = offsetof(struct S, start);                 \
		f->corr = offsetof(struct S, correlation);         \
		f->min_size = sizeof(struct S);                    \
		return 1;
	switch (type) {
	GP_DELTA_CASE(GP_REC_KERNEL, gp_rec_kernel)
	GP_DELTA_CASE(GP_REC_MEMCPY, gp_rec_memcpy)
	GP_DELTA_CASE(GP_REC_MEMSET, gp_rec_memset)
	GP_DELTA_CASE(GP_REC_GRAPH, gp_rec_graph)
	GP_DELTA_CASE(GP_REC_API, gp_rec_api)
	default:
		return 0;
	}
#undef GP_DELTA_CASE
}

/* What a chunk's coding carries from one record to the next of its type. */
struct gp_delta_state {
	uint64_t prev_t[GP_REC_TYPE_COUNT];
	uint32_t prev_c[GP_REC_TYPE_COUNT];
};

/*
 * The records of buf from off on, each whole within len, coded (decode = 0)
 * or decoded (1) in place, st carried from the records before off.
 * Returns the offset it stopped at: len, or that of a record not whole
 * within len or of a malformed size (the end of a chunk's coding), so that
 * a chunk is decoded a piece at a time as it is decompressed (the reader's
 * head of a trace) as it is at once.
 */
static inline size_t gp_delta_run(unsigned char *buf, size_t off, size_t len, int decode,
				  struct gp_delta_state *st)
{
	struct gp_delta_field f;
	struct gp_rec h;

	while (off + sizeof(h) <= len) {
		uint64_t s, e;
		uint32_t c;

		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || (h.size & 7u) || h.size > len - off)
			return off;
		if (h.type < GP_REC_TYPE_COUNT && gp_delta_fields(h.type, &f) && h.size >= f.min_size) {
			unsigned char *p = buf + off;

			memcpy(&s, p + f.ts, 8);
			memcpy(&e, p + f.ts + 8, 8);
			memcpy(&c, p + f.corr, 4);
			if (decode) {
				s += st->prev_t[h.type];
				e += s;
				c += st->prev_c[h.type];
				st->prev_t[h.type] = s;
				st->prev_c[h.type] = c;
			} else {
				uint64_t ds = s - st->prev_t[h.type];
				uint32_t dc = c - st->prev_c[h.type];

				st->prev_t[h.type] = s;
				st->prev_c[h.type] = c;
				e -= s;
				s = ds;
				c = dc;
			}
			memcpy(p + f.ts, &s, 8);
			memcpy(p + f.ts + 8, &e, 8);
			memcpy(p + f.corr, &c, 4);
		}
		off += h.size;
	}
	return off;
}

/* decode = 0: encode a chunk in place; 1: decode it in place.  Stops at a malformed size. */
static inline void gp_delta_apply(unsigned char *buf, size_t len, int decode)
{
	struct gp_delta_state st;

	memset(&st, 0, sizeof(st));
	(void)gp_delta_run(buf, 0, len, decode, &st);
}

#endif /* GPUPROF_DELTA_H */
