/*
 * Busy-time union (see busy.h).  Runs offline only.
 */
#include "model/busy.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* First interval whose end is at or after t (ends ascend, like starts). */
static size_t first_ending_from(const struct ga_busy *b, uint64_t t)
{
	size_t lo = 0, hi = b->niv;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->iv[mid].end < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* [start, end] merged anywhere in the list. */
static int insert(struct ga_busy *b, uint64_t start, uint64_t end)
{
	size_t k = first_ending_from(b, start), j;

	if (k == b->niv || end < b->iv[k].start) {
		/* Touches nothing: a new interval at k. */
		if (ga_util_grow(&b->iv, &b->capiv, b->niv + 1, sizeof(*b->iv)))
			return -1;
		memmove(b->iv + k + 1, b->iv + k, (b->niv - k) * sizeof(*b->iv));
		b->iv[k].start = start;
		b->iv[k].end = end;
		b->niv++;
		return 0;
	}
	if (start < b->iv[k].start)
		b->iv[k].start = start;
	if (end > b->iv[k].end)
		b->iv[k].end = end;
	/* Swallow the intervals it now reaches. */
	for (j = k + 1; j < b->niv && b->iv[j].start <= b->iv[k].end; j++)
		if (b->iv[j].end > b->iv[k].end)
			b->iv[k].end = b->iv[j].end;
	if (j > k + 1) {
		memmove(b->iv + k + 1, b->iv + j, (b->niv - j) * sizeof(*b->iv));
		b->niv -= j - (k + 1);
	}
	return 0;
}

int ga_busy_flush(struct ga_busy *b)
{
	size_t i;

	ga_sort_iv_by_start(b->batch, b->nbatch);
	for (i = 0; i < b->nbatch; i++) {
		const struct ga_iv *p = &b->batch[i];
		struct ga_iv *last = b->niv ? &b->iv[b->niv - 1] : NULL;

		if (last && p->start >= last->start && p->start <= last->end) {
			if (p->end > last->end)
				last->end = p->end;
		} else if (!last || p->start > last->end) {
			if (ga_util_grow(&b->iv, &b->capiv, b->niv + 1, sizeof(*b->iv)))
				return -1;
			b->iv[b->niv++] = *p;
		} else if (insert(b, p->start, p->end)) {
			return -1;
		}
	}
	b->nbatch = 0;
	return 0;
}

int ga_busy_add_slow(struct ga_busy *b, uint64_t start, uint64_t end)
{
	if (!b->batch && !(b->batch = malloc(GA_BUSY_BATCH * sizeof(*b->batch))))
		return -1;
	if (b->nbatch == GA_BUSY_BATCH && ga_busy_flush(b))
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
