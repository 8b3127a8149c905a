/*
 * A ring of blocks consumed on a thread of its own (see handoff.h).  Runs
 * offline only.
 */
#include "base/handoff.h"

#include <stdlib.h>
#include <string.h>

int ga_handoff_init(struct ga_handoff *r, size_t bsize, int inline_only,
		    int (*consume)(void *ctx, void *blk, size_t len), void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->bsize = bsize;
	r->inline_only = inline_only;
	r->consume = consume;
	r->ctx = ctx;
	if (pthread_mutex_init(&r->mu, NULL))
		return -1;
	if (pthread_cond_init(&r->cv, NULL)) {
		pthread_mutex_destroy(&r->mu);
		return -1;
	}
	return 0;
}

void *ga_handoff_block_new(struct ga_handoff *r)
{
	return r->blk[r->cur] = malloc(r->bsize);
}

static void set_err(struct ga_handoff *r, int err)
{
	if (!r->err)
		__atomic_store_n(&r->err, err, __ATOMIC_RELAXED);
}

static void *consumer(void *arg)
{
	struct ga_handoff *r = arg;
	int err = 0;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		unsigned i;

		while (!r->full && !r->done)
			pthread_cond_wait(&r->cv, &r->mu);
		if (!r->full)
			break;
		i = r->head;
		pthread_mutex_unlock(&r->mu);
		/* After a failure the rest is let go of: the caller stops at its next push. */
		if (!err)
			err = r->consume(r->ctx, r->blk[i], r->len[i]);
		pthread_mutex_lock(&r->mu);
		if (err)
			set_err(r, err);
		r->head = (r->head + 1) % GA_HANDOFF_BLOCKS;
		r->full--;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* ga_handoff_push(), starting no thread where start is 0 (the caller consumes). */
static int push(struct ga_handoff *r, int start)
{
	int err;

	if (start && !r->started && !r->inline_only && !r->err) {
		pthread_attr_t at;

		/* Its work is a write or an insert: a stack of 1 MiB, not the default 8. */
		if (pthread_attr_init(&at) == 0) {
			pthread_attr_setstacksize(&at, 1 << 20);
			r->started = pthread_create(&r->th, &at, consumer, r) == 0;
			pthread_attr_destroy(&at);
		}
		/* No thread: the caller consumes, from here on. */
		r->inline_only = !r->started;
	}
	if (!r->started) {
		if (!r->err && r->fill)
			set_err(r, r->consume(r->ctx, r->blk[r->cur], r->fill));
		r->fill = 0;
		return r->err;
	}
	pthread_mutex_lock(&r->mu);
	r->len[r->cur] = r->fill;
	r->full++;
	r->cur = (r->cur + 1) % GA_HANDOFF_BLOCKS;
	r->fill = 0;
	pthread_cond_broadcast(&r->cv);
	while (r->full == GA_HANDOFF_BLOCKS)
		pthread_cond_wait(&r->cv, &r->mu);
	err = r->err;
	pthread_mutex_unlock(&r->mu);
	return err;
}

int ga_handoff_push(struct ga_handoff *r)
{
	return push(r, 1);
}

int ga_handoff_drain(struct ga_handoff *r)
{
	int err;

	/* What was never a full block is consumed here, where no thread started. */
	if (r->fill && (err = push(r, 0)))
		return err;
	if (!r->started)
		return r->err;
	pthread_mutex_lock(&r->mu);
	while (r->full)
		pthread_cond_wait(&r->cv, &r->mu);
	err = r->err;
	pthread_mutex_unlock(&r->mu);
	return err;
}

int ga_handoff_stop(struct ga_handoff *r)
{
	int err = ga_handoff_drain(r);

	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->done = 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->th, NULL);
		r->started = 0;
	}
	err = err ? err : r->err;
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	for (unsigned i = 0; i < GA_HANDOFF_BLOCKS; i++)
		free(r->blk[i]);
	memset(r, 0, sizeof(*r));
	return err;
}
