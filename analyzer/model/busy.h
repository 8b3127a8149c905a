/*
 * Busy time of a device: the union of its activities' intervals, built as
 * records arrive instead of from a stored copy of every activity.  New
 * intervals collect in a small batch; a full batch is sorted and merged
 * into a list of disjoint intervals ordered by start.  Records come nearly
 * in order, so merging mostly extends or appends at the end; an interval
 * that starts earlier is merged where it belongs (a batch with such
 * intervals is merged in one linear pass with the list's tail, from the
 * first interval it may join), so the union is exact in any order.  Memory: the batch (small at first: a trace may name
 * many devices) plus one entry per idle gap.
 *
 * Retiring (ga_busy_add_stream instead of ga_busy_add, for owners that need
 * the total and the span but not every interval): each stream's activities
 * come in start order, so no later one starts before the watermark, the
 * earliest of the streams' last starts (and GA_BUSY_LAG before the latest
 * start, for a stream whose first record comes late); intervals that end
 * before it can no longer be joined and leave the list, summed into
 * retired_ns and handed to on_retire when set.  Memory is then the
 * intervals behind the slowest stream plus one entry per stream.  An
 * interval that still comes before the retired ones (a stream out of
 * order) is clipped to what follows them and counted in late: with late 0
 * the total is exact.  An owner that needs the intervals too, up to a
 * bound (a summary: model.h's busy_keep), sets keep_max: retired intervals
 * are then kept in order in kept[], up to keep_max, and past it all are
 * dropped (kept_over set).
 * Runs offline only.
 */
#ifndef GA_ANALYZER_BUSY_H
#define GA_ANALYZER_BUSY_H

#include <stddef.h>
#include <stdint.h>

#include "base/sort.h"
#include "base/util.h"

#define GA_BUSY_BATCH 4096
#define GA_BUSY_RETIRE_AT 4096     /* intervals kept before a retiring owner retires */
#define GA_BUSY_LAG 1000000000ull  /* ns behind the latest start a watermark stays */

#define GA_BUSY_STREAM_CACHE 8

/* A stream's last start, for the watermark of ga_busy_add_stream. */
struct ga_busy_stream {
	uint64_t last;
};

/* A stream looked up lately: (proc << 32 | context, stream) -> st index + 1, 0 none. */
struct ga_busy_scache {
	uint64_t a, b;
	uint32_t i;
};

struct ga_busy {
	struct ga_iv *iv;          /* disjoint, ascending start; retiring: the unretired tail */
	size_t niv, capiv;
	struct ga_iv *batch;       /* not merged yet, any order */
	size_t nbatch, capbatch;   /* capbatch grows to GA_BUSY_BATCH: devices may be many */
	/* Retiring (ga_busy_add_stream, ga_busy_retire). */
	struct ga_busy_stream *st;
	size_t nst, capst;
	struct ga_map st_map;      /* (proc << 32 | context, stream) -> st index + 1 */
	/* Streams interleave: recent ones by stream, sparing most map lookups. */
	struct ga_busy_scache st_cache[GA_BUSY_STREAM_CACHE];
	uint64_t max_start;        /* latest start seen by ga_busy_add_stream */
	size_t retire_at;          /* niv at which to retire next */
	uint64_t nretired;         /* intervals retired */
	uint64_t retired_ns;       /* their covered time */
	uint64_t first;            /* start of the first retired one */
	uint64_t frontier;         /* end of the last retired one */
	uint64_t late;             /* intervals that came before it (clipped) */
	void (*on_retire)(void *ctx, uint64_t start, uint64_t end);
	void *retire_ctx;
	/* Retired intervals kept, in order, while no more than keep_max (0: none kept). */
	struct ga_iv *kept;
	size_t nkept, capkept, keep_max;
	int kept_over; /* more retired than keep_max (or merged): kept[] dropped */
};

int ga_busy_add_slow(struct ga_busy *b, uint64_t start, uint64_t end);

/* Adds [start, end] (end >= start).  0, or -1 out of memory. */
static inline int ga_busy_add(struct ga_busy *b, uint64_t start, uint64_t end)
{
	if (b->nbatch) {
		struct ga_iv *l = &b->batch[b->nbatch - 1];

		/*
		 * Overlapping or touching the last one added (streams that run
		 * together): one interval of the union, as the merge would make
		 * it, and no batch entry of its own.
		 */
		if (start <= l->end && end >= l->start) {
			if (start < l->start)
				l->start = start;
			if (end > l->end)
				l->end = end;
			return 0;
		}
	}
	if (b->nbatch < b->capbatch) {
		b->batch[b->nbatch].start = start;
		b->batch[b->nbatch].end = end;
		b->nbatch++;
		return 0;
	}
	return ga_busy_add_slow(b, start, end);
}

/*
 * Adds [start, end] of stream (proc, context, stream) and retires what
 * its watermark allows (see the top of this file).  0, or -1 out of memory.
 */
int ga_busy_add_stream(struct ga_busy *b, uint32_t proc, uint32_t context, uint32_t stream,
		       uint64_t start, uint64_t end);
/*
 * Retires the intervals that end before wm: no interval added later may
 * start before wm.  0, or -1 out of memory.
 */
int ga_busy_retire(struct ga_busy *b, uint64_t wm);
/*
 * Retires every interval (ga_busy_retire at the end of time: handed to
 * on_retire, kept up to keep_max) and frees what only more intervals
 * would use, where no more are to come (a file read to its end): the
 * total and span stay.  One added after all the same is clipped behind
 * the retired ones (late).  0, or -1 out of memory.
 */
int ga_busy_close(struct ga_busy *b);
/* Merges the batch into the disjoint list.  0, or -1 out of memory. */
int ga_busy_flush(struct ga_busy *b);
/*
 * Adds everything of `from` to `to` and empties `from`.  0, or -1.  What
 * either had retired counts as late in `to`: its intervals are gone (and
 * no longer kept: `to`'s kept_over is set).
 */
int ga_busy_merge(struct ga_busy *to, struct ga_busy *from);
/* After ga_busy_flush: total covered time, retired intervals included. */
uint64_t ga_busy_total(const struct ga_busy *b);
/* After ga_busy_flush: the first start and the last end; 0 when empty. */
int ga_busy_span(const struct ga_busy *b, uint64_t *first, uint64_t *last);
/*
 * to becomes a copy of from (to's own state is not freed), without from's
 * on_retire: fed the same intervals from now on, each reaches the same
 * total.  0, or -1 out of memory (to then empty).
 */
int ga_busy_copy(struct ga_busy *to, const struct ga_busy *from);
void ga_busy_free(struct ga_busy *b);

#endif
