/*
 * Busy time of a device: the union of its activities' intervals, built as
 * records arrive instead of from a stored copy of every activity.  New
 * intervals collect in a small batch; a full batch is sorted and merged
 * into a list of disjoint intervals ordered by start.  Records come nearly
 * in order, so merging mostly extends or appends at the end; an interval
 * that starts earlier is merged where it belongs (a batch with such
 * intervals is merged with the list in one linear pass), so the union is
 * exact in any order.  Memory: the batch (small at first: a trace may name
 * many devices) plus one entry per idle gap.
 * Runs offline only.
 */
#ifndef GA_ANALYZER_BUSY_H
#define GA_ANALYZER_BUSY_H

#include <stddef.h>
#include <stdint.h>

#include "base/sort.h"

#define GA_BUSY_BATCH 4096

struct ga_busy {
	struct ga_iv *iv;          /* disjoint, ascending start */
	size_t niv, capiv;
	struct ga_iv *batch;       /* not merged yet, any order */
	size_t nbatch, capbatch;   /* capbatch grows to GA_BUSY_BATCH: devices may be many */
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

/* Merges the batch into the disjoint list.  0, or -1 out of memory. */
int ga_busy_flush(struct ga_busy *b);
/* Adds everything of `from` to `to` and empties `from`.  0, or -1. */
int ga_busy_merge(struct ga_busy *to, struct ga_busy *from);
/* After ga_busy_flush: total covered time, first start, last end (0s if empty). */
uint64_t ga_busy_total(const struct ga_busy *b);
void ga_busy_free(struct ga_busy *b);

#endif
