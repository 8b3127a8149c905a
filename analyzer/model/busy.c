/*
 * Busy-time union (see busy.h).  Runs offline only.
 */
#include "model/busy.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define BATCH_FIRST 4

/* Appends [start, end] to a list of disjoint intervals ordered by start, merging with its last. */
static int append(struct ga_iv **v, size_t *n, size_t *cap, uint64_t start, uint64_t end)
{
	if (*n && start <= (*v)[*n - 1].end) {
		if (end > (*v)[*n - 1].end)
			(*v)[*n - 1].end = end;
		return 0;
	}
	if (*n == *cap) {
		/* From 2 (a device may have one interval), not the 16 of ga_util_grow. */
		size_t ncap = *cap ? *cap * 2 : 2;
		struct ga_iv *p = ncap > SIZE_MAX / sizeof(*p) ? NULL : realloc(*v, ncap * sizeof(*p));

		if (!p)
			return -1;
		*v = p;
		*cap = ncap;
	}
	(*v)[*n].start = start;
	(*v)[*n].end = end;
	(*n)++;
	return 0;
}

int ga_busy_flush(struct ga_busy *b)
{
	struct ga_iv *v = NULL;
	size_t i = 0, j = 0, n = 0, cap = 0;

	if (!b->nbatch)
		return 0;
	ga_sort_iv_by_start(b->batch, b->nbatch);
	if (!b->niv || b->batch[0].start >= b->iv[b->niv - 1].start) {
		/* In order (the usual case): extend or append at the end. */
		for (i = 0; i < b->nbatch; i++)
			if (append(&b->iv, &b->niv, &b->capiv, b->batch[i].start, b->batch[i].end))
				return -1;
		b->nbatch = 0;
		return 0;
	}
	/* Earlier intervals: merge both sorted lists in one pass, not one move each. */
	while (i < b->niv || j < b->nbatch) {
		const struct ga_iv *p = j == b->nbatch || (i < b->niv && b->iv[i].start <= b->batch[j].start) ?
					&b->iv[i++] : &b->batch[j++];

		if (append(&v, &n, &cap, p->start, p->end)) {
			free(v);
			return -1;
		}
	}
	free(b->iv);
	b->iv = v;
	b->niv = n;
	b->capiv = cap;
	b->nbatch = 0;
	return 0;
}

int ga_busy_add_slow(struct ga_busy *b, uint64_t start, uint64_t end)
{
	if (b->nbatch == b->capbatch && b->capbatch < GA_BUSY_BATCH) {
		size_t cap = b->capbatch ? b->capbatch * 2 : BATCH_FIRST;
		struct ga_iv *p = realloc(b->batch, cap * sizeof(*p));

		if (!p)
			return -1;
		b->batch = p;
		b->capbatch = cap;
	}
	if (b->nbatch == b->capbatch && ga_busy_flush(b))
		return -1;
	return ga_busy_add(b, start, end);
}

int ga_busy_merge(struct ga_busy *to, struct ga_busy *from)
{
	size_t i;

	if (ga_busy_flush(from))
		return -1;
	for (i = 0; i < from->niv; i++)
		if (ga_busy_add(to, from->iv[i].start, from->iv[i].end))
			return -1;
	ga_busy_free(from);
	return 0;
}

uint64_t ga_busy_total(const struct ga_busy *b)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < b->niv; i++)
		t += b->iv[i].end - b->iv[i].start;
	return t;
}

void ga_busy_free(struct ga_busy *b)
{
	free(b->iv);
	free(b->batch);
	memset(b, 0, sizeof(*b));
}
