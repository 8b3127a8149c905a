/*
 * Chunk ring (see ring.h).  Producer side runs in the CUPTI completion
 * callback (CUPTI's worker thread, or an application thread inside
 * cuptiActivityFlushAll) and at recorder start/stop; consumer side is the
 * writer thread.  No allocation after gp_ring_init.
 */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int gp_ring_init(struct gp_ring *r, uint32_t chunk_size, uint32_t nchunks,
		 uint32_t wait_ms)
{
	memset(r, 0, sizeof(*r));
	r->chunks = calloc(nchunks, sizeof(*r->chunks));
	r->mem = malloc((size_t)chunk_size * nchunks);
	if (!r->chunks || !r->mem) {
		free(r->chunks);
		free(r->mem);
		return -ENOMEM;
	}
	r->chunk_size = chunk_size;
	r->nchunks = nchunks;
	r->wait_ms = wait_ms;
	for (uint32_t i = 0; i < nchunks; i++) {
		r->chunks[i].buf = r->mem + (size_t)i * chunk_size;
		r->chunks[i].next = r->free_list;
		r->free_list = &r->chunks[i];
	}
	r->nfree = nchunks;
	pthread_mutex_init(&r->prod_lock, NULL);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->nonempty, NULL);
	pthread_cond_init(&r->freed, NULL);
	return 0;
}

void gp_ring_destroy(struct gp_ring *r)
{
	pthread_mutex_destroy(&r->prod_lock);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->nonempty);
	pthread_cond_destroy(&r->freed);
	free(r->chunks);
	free(r->mem);
	memset(r, 0, sizeof(*r));
}

void gp_ring_lock(struct gp_ring *r)
{
	pthread_mutex_lock(&r->prod_lock);
}

void gp_ring_unlock(struct gp_ring *r)
{
	pthread_mutex_unlock(&r->prod_lock);
}

static void deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* r->lock held. */
static void push_full(struct gp_ring *r, struct gp_chunk *c)
{
	c->next = NULL;
	if (r->full_tail)
		r->full_tail->next = c;
	else
		r->full_head = c;
	r->full_tail = c;
	pthread_cond_signal(&r->nonempty);
}

void gp_ring_seal(struct gp_ring *r, uint32_t flags)
{
	struct gp_chunk *c = r->cur;

	if (!c || !c->used)
		return;
	c->flags |= flags;
	r->cur = NULL;
	pthread_mutex_lock(&r->lock);
	push_full(r, c);
	pthread_mutex_unlock(&r->lock);
}

/* prod_lock held: open a fresh chunk, waiting for the writer if needed. */
static struct gp_chunk *open_chunk(struct gp_ring *r)
{
	struct gp_chunk *c;
	struct timespec ts;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	/*
	 * Wait for the writer once per stall: after a wait ran out, records
	 * are dropped at once until the writer gives a chunk back, so a stuck
	 * writer costs the producer one wait, not one per record.
	 */
	if (!r->stalled) {
		deadline(&ts, (int)r->wait_ms);
		while (!r->free_list && !r->closed && rc != ETIMEDOUT)
			rc = pthread_cond_timedwait(&r->freed, &r->lock, &ts);
		if (!r->free_list)
			r->stalled = 1;
	}
	c = r->closed ? NULL : r->free_list;
	if (c) {
		r->free_list = c->next;
		r->nfree--;
	}
	pthread_mutex_unlock(&r->lock);
	if (!c)
		return NULL;
	c->used = 0;
	c->nrec = 0;
	c->t_min = c->t_max = 0;
	c->flags = 0;
	c->lost_counted = 0;
	c->lost = r->dropped_pending;
	r->dropped_pending = 0;
	return c;
}

/* Room for a record; a record that finds none is counted when `counted`. */
static void *reserve(struct gp_ring *r, uint32_t size, int counted)
{
	struct gp_chunk *c = r->cur;
	void *p;

	if (size > r->chunk_size || (size & 7u))
		goto drop;
	if (c && c->used + size > r->chunk_size) {
		gp_ring_seal(r, 0);
		c = NULL;
	}
	if (!c) {
		c = r->cur = open_chunk(r);
		if (!c)
			goto drop;
	}
	p = c->buf + c->used;
	c->used += size;
	c->nrec++;
	r->reserved_records++;
	return p;
drop:
	if (counted) {
		r->dropped++;
		r->dropped_pending++;
	}
	return NULL;
}

void *gp_ring_reserve(struct gp_ring *r, uint32_t size)
{
	return reserve(r, size, 1);
}

void *gp_ring_reserve_retried(struct gp_ring *r, uint32_t size)
{
	return reserve(r, size, 0);
}

void gp_ring_note_time(struct gp_ring *r, uint64_t t0, uint64_t t1)
{
	struct gp_chunk *c = r->cur;

	if (!c)
		return;
	if (!c->t_min || t0 < c->t_min)
		c->t_min = t0;
	if (t1 > c->t_max)
		c->t_max = t1;
}

struct gp_chunk *gp_ring_pop(struct gp_ring *r, int wait_ms)
{
	struct gp_chunk *c;
	struct timespec ts;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	if (wait_ms >= 0)
		deadline(&ts, wait_ms);
	while (!r->full_head && !r->closed && rc != ETIMEDOUT) {
		if (wait_ms < 0)
			pthread_cond_wait(&r->nonempty, &r->lock);
		else
			rc = pthread_cond_timedwait(&r->nonempty, &r->lock, &ts);
	}
	c = r->full_head;
	if (c) {
		r->full_head = c->next;
		if (!r->full_head)
			r->full_tail = NULL;
	}
	pthread_mutex_unlock(&r->lock);
	return c;
}

void gp_ring_release(struct gp_ring *r, struct gp_chunk *c)
{
	pthread_mutex_lock(&r->lock);
	c->next = r->free_list;
	r->free_list = c;
	r->nfree++;
	r->stalled = 0;
	pthread_cond_broadcast(&r->freed);
	pthread_mutex_unlock(&r->lock);
}

int gp_ring_wait_drained(struct gp_ring *r, int wait_ms)
{
	struct timespec ts;
	int rc = 0, busy;

	pthread_mutex_lock(&r->lock);
	deadline(&ts, wait_ms);
	/* The producer's open chunk (if any) is not the writer's to give back. */
	while ((busy = r->nfree + (r->cur ? 1u : 0u) < r->nchunks) && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&r->freed, &r->lock, &ts);
	pthread_mutex_unlock(&r->lock);
	return busy ? -ETIMEDOUT : 0;
}

void gp_ring_close(struct gp_ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->closed = 1;
	pthread_cond_broadcast(&r->nonempty);
	pthread_cond_broadcast(&r->freed);
	pthread_mutex_unlock(&r->lock);
}

void gp_ring_reopen(struct gp_ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->closed = 0;
	r->stalled = 0;
	pthread_mutex_unlock(&r->lock);
}
