/*
 * The flight recorder's memory: the most recent compressed chunks, within
 * a byte budget.  The writer thread puts each chunk it compressed here
 * instead of into a file; when the budget is used up the oldest chunks
 * are dropped (by design: counted apart from losses).  A dump copies the
 * chunks out one at a time, so the writer is never held up for long.
 *
 * Memory: one buffer of size bytes (its pages become resident as the ring
 * first fills, then stay) and a fixed table of chunk descriptors.
 * Context: gp_flight_put on the writer thread; the dump functions on the
 * recorder's flusher or exit path; status reads on the control thread.
 * One mutex, held for a memcpy at most.
 */
#ifndef GP_FLIGHT_H
#define GP_FLIGHT_H

#include <gpuprof/trace.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct gp_flight_chunk {
	uint64_t id;               /* 1, 2, ... in the order put */
	uint64_t off;              /* of the frame in mem */
	struct gp_chunk_header h;  /* seq and checksum are set when dumped */
	uint64_t lost_counted;     /* counts of its LOST records */
};

struct gp_flight {
	pthread_mutex_t lock;
	unsigned char *mem;
	uint64_t size;
	struct gp_flight_chunk *d; /* descriptor ring */
	uint32_t nd;               /* its capacity */
	uint32_t head;             /* index of the oldest */
	uint32_t count;
	uint64_t next_id;
	uint64_t wpos;             /* where the next frame goes */
	uint64_t used;             /* bytes of the chunks kept */
	uint64_t records;          /* records in the chunks kept */
	uint64_t dropped_records, dropped_bytes;
	uint32_t dropped_chunks;
	uint64_t dropped_t_max;    /* latest time in a dropped chunk */
};

/* Returns 0 or -ENOMEM. */
int gp_flight_init(struct gp_flight *f, uint64_t size);
void gp_flight_free(struct gp_flight *f);

/*
 * Writer thread: keeps a compressed chunk (header h without seq and
 * checksum, comp_size bytes of frame), dropping the oldest as needed.
 */
void gp_flight_put(struct gp_flight *f, const struct gp_chunk_header *h, const void *frame,
		   uint64_t lost_counted);

/* What a dump starts from: the ids kept now, and the counts of what was dropped. */
struct gp_flight_view {
	uint64_t first, last;      /* ids; first > last when empty */
	uint64_t t_min;            /* earliest chunk time kept, 0 if unknown */
	uint64_t dropped_records, dropped_bytes;
	uint32_t dropped_chunks;
};
void gp_flight_view(struct gp_flight *f, struct gp_flight_view *v);

/*
 * Copies chunk id out: header into *h, the counts of its LOST records into
 * *lost_counted, frame into buf (cap bytes).  Returns 0, or -ENOENT when
 * it was dropped since the view was taken.
 */
int gp_flight_copy(struct gp_flight *f, uint64_t id, struct gp_chunk_header *h,
		   uint64_t *lost_counted, void *buf, size_t cap);

#endif
