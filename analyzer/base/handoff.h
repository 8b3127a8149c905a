/*
 * A ring of blocks the caller fills and a thread of its own consumes:
 * the output's writes (base/output.c) and the SQLite export's inserts
 * (views/sqlite.c) leave the thread that reads the traces.  The caller
 * fills the block ga_handoff_block() gives (r->fill bytes of it), hands it
 * over with ga_handoff_push(), and waits only when every block is full; the
 * thread, started at the first push, consumes the oldest full block and
 * hands it back.  Inline (the caller consumes each block as it pushes it)
 * where asked, or where no thread starts.  The first failure of consume
 * is kept: the thread lets go of the blocks after it unconsumed, and
 * every push and drain after it returns it.  Runs offline only.
 */
#ifndef GA_ANALYZER_HANDOFF_H
#define GA_ANALYZER_HANDOFF_H

#include <pthread.h>
#include <stddef.h>

#define GA_HANDOFF_BLOCKS 4

struct ga_handoff {
	/* Consumes len bytes of blk; 0, or a failure (an errno, a format's code). */
	int (*consume)(void *ctx, void *blk, size_t len);
	void *ctx;
	size_t bsize;    /* bytes a block */
	int inline_only; /* the caller consumes: no thread */
	int started;     /* the thread runs */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	void *blk[GA_HANDOFF_BLOCKS]; /* allocated as first filled */
	size_t len[GA_HANDOFF_BLOCKS];
	unsigned head, full; /* the oldest full block, how many are full (under mu) */
	unsigned cur;        /* the block after them, the caller's alone */
	size_t fill;         /* the caller's bytes in it */
	int done;            /* no more blocks: consume what is full, stop */
	int err;             /* the first failure (set under mu, atomically) */
};

/* 0, or -1 (no mutex): r unusable, nothing to free. */
int ga_handoff_init(struct ga_handoff *r, size_t bsize, int inline_only,
		    int (*consume)(void *ctx, void *blk, size_t len), void *ctx);

/* The block the caller fills (r->fill bytes in it so far), or NULL out of memory. */
void *ga_handoff_block_new(struct ga_handoff *r);
static inline void *ga_handoff_block(struct ga_handoff *r)
{
	return r->blk[r->cur] ? r->blk[r->cur] : ga_handoff_block_new(r);
}

/* The first failure so far, or 0 (read without waiting). */
static inline int ga_handoff_err(const struct ga_handoff *r)
{
	return __atomic_load_n(&r->err, __ATOMIC_RELAXED);
}

/* Hands the block being filled over (consumed here when inline); as ga_handoff_err(). */
int ga_handoff_push(struct ga_handoff *r);

/*
 * Hands the block being filled over and waits until every block handed
 * over is consumed (the block consumed here if no thread started: an
 * output smaller than a block starts none); as ga_handoff_err().
 */
int ga_handoff_drain(struct ga_handoff *r);

/* Hands what is filled over, waits for all of it, stops the thread, frees; as ga_handoff_err(). */
int ga_handoff_stop(struct ga_handoff *r);

#endif
