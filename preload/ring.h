/*
 * Bounded ring of fixed-size record chunks between the CUPTI completion
 * callback (producer) and the writer thread (consumer).
 *
 * Contract: producers hold the producer lock (gp_ring_lock) while they
 * reserve and fill records; they never compress or write.  The writer pops
 * sealed chunks in FIFO order and gives them back.  Memory is fixed at init:
 * nchunks * chunk_size bytes, whatever the run length.  When no chunk is
 * free, a producer waits up to wait_ms for the writer, then drops the record
 * and counts it (gp_ring.dropped); until the writer frees a chunk, later
 * records are dropped without waiting.
 */
#ifndef GP_RING_H
#define GP_RING_H

#include <pthread.h>
#include <stdint.h>

struct gp_chunk {
	unsigned char *buf;
	uint32_t used;             /* bytes of records */
	uint32_t nrec;
	uint64_t t_min, t_max;     /* span of timed records, 0 if none */
	uint32_t lost;             /* drops counted before this chunk opened */
	uint32_t flags;
	uint64_t lost_counted;     /* sum of the counts of its LOST records */
	struct gp_chunk *next;
};

struct gp_ring {
	pthread_mutex_t prod_lock; /* serializes producers */
	pthread_mutex_t lock;      /* guards the lists below */
	pthread_cond_t nonempty;   /* signalled when a chunk is sealed or on close */
	pthread_cond_t freed;      /* signalled when the writer gives one back */
	struct gp_chunk *chunks;   /* all of them, one allocation */
	unsigned char *mem;
	struct gp_chunk *free_list;
	struct gp_chunk *full_head, *full_tail;
	struct gp_chunk *cur;      /* producer's open chunk, prod_lock */
	uint32_t chunk_size;
	uint32_t nchunks;
	uint32_t wait_ms;          /* producer patience when full */
	uint32_t nfree;            /* chunks on free_list */
	int stalled;               /* a wait ran out; no waiting until a release */
	int closed;
	uint64_t dropped;          /* records dropped because the ring was full */
	uint32_t dropped_pending;  /* not yet stamped on a chunk header */
	uint64_t reserved_records; /* records successfully reserved */
};

/* Returns 0 or -ENOMEM. */
int gp_ring_init(struct gp_ring *r, uint32_t chunk_size, uint32_t nchunks,
		 uint32_t wait_ms);
void gp_ring_destroy(struct gp_ring *r);

void gp_ring_lock(struct gp_ring *r);
void gp_ring_unlock(struct gp_ring *r);

/*
 * Producer, lock held: room for one record of size bytes (multiple of 8,
 * <= chunk_size).  Returns NULL when the ring stayed full or is closed; the
 * record is then counted in r->dropped.
 */
void *gp_ring_reserve(struct gp_ring *r, uint32_t size);
/*
 * The same for a record its producer emits again when it finds no room (a
 * LOST record carries its counts over to the next one): NULL is not
 * counted as a drop, so drops count only records that never reach a chunk.
 */
void *gp_ring_reserve_retried(struct gp_ring *r, uint32_t size);
/* Producer, lock held: widen the open chunk's time span. */
void gp_ring_note_time(struct gp_ring *r, uint64_t t0, uint64_t t1);
/* Producer, lock held: hand the open chunk (if not empty) to the writer. */
void gp_ring_seal(struct gp_ring *r, uint32_t flags);

/*
 * Consumer: the oldest sealed chunk, waiting up to wait_ms (negative: until
 * one arrives or the ring closes).  NULL on timeout, or when closed and empty.
 */
struct gp_chunk *gp_ring_pop(struct gp_ring *r, int wait_ms);
void gp_ring_release(struct gp_ring *r, struct gp_chunk *c);
/*
 * Producer, lock held (so no chunk is being filled or sealed meanwhile):
 * waits up to wait_ms until the writer has given back every sealed chunk.
 * Returns 0, or -ETIMEDOUT.
 */
int gp_ring_wait_drained(struct gp_ring *r, int wait_ms);
/* Wakes the consumer; pops then drain what is left and return NULL. */
void gp_ring_close(struct gp_ring *r);
/* After gp_ring_close and a drained consumer: usable again (a new file). */
void gp_ring_reopen(struct gp_ring *r);

#endif
