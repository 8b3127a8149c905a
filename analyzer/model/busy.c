/*
 * Busy-time union (see busy.h).  Runs offline only.
 */
#include "model/busy.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define BATCH_FIRST 4

/* Grows a list of intervals by one place: from 2 (a device may have one interval), doubling. */
static __attribute__((noinline)) int grow(struct ga_iv **v, size_t *cap)
{
	size_t ncap = *cap ? *cap * 2 : 2;
	struct ga_iv *p = ncap > SIZE_MAX / sizeof(*p) ? NULL : realloc(*v, ncap * sizeof(*p));

	if (!p)
		return -1;
	*v = p;
	*cap = ncap;
	return 0;
}

/* Appends [start, end] to a list of disjoint intervals ordered by start, merging with its last. */
static inline int append(struct ga_iv **v, size_t *n, size_t *cap, uint64_t start, uint64_t end)
{
	if (*n && start <= (*v)[*n - 1].end) {
		if (end > (*v)[*n - 1].end)
			(*v)[*n - 1].end = end;
		return 0;
	}
	if (*n == *cap && grow(v, cap))
		return -1;
	(*v)[*n].start = start;
	(*v)[*n].end = end;
	(*n)++;
	return 0;
}

/*
 * Intervals that join or precede the retired ones: what follows the last
 * retired end stays, counted as late.  The total stays exact where the
 * clipped part was covered by the retired intervals; the span stays exact.
 */
static void clip_late(struct ga_busy *b)
{
	size_t i, k = 0;

	for (i = 0; i < b->nbatch; i++) {
		struct ga_iv x = b->batch[i];

		if (x.start <= b->frontier) {
			b->late++;
			if (x.start < b->first)
				b->first = x.start;
			if (x.end <= b->frontier)
				continue;
			x.start = b->frontier;
		}
		b->batch[k++] = x;
	}
	b->nbatch = k;
}

/*
 * Sorts a batch by start.  Streams that run side by side leave it nearly
 * in order, each interval a few places from its own: insertion moves
 * those few, where the radix sort would pass over all of it.  A batch far
 * from order (more moves than a few per interval) goes to the radix sort.
 * Intervals of equal start may end in any order: the union is the same.
 */
static void sort_batch(struct ga_iv *a, size_t n)
{
	size_t i, j, moves = 0, budget = 8 * n;

	for (i = 1; i < n; i++) {
		struct ga_iv v = a[i];

		for (j = i; j > 0 && a[j - 1].start > v.start; j--)
			a[j] = a[j - 1];
		a[j] = v;
		/* Checked once an interval: past the budget by one interval's moves at most. */
		moves += i - j;
		if (moves > budget) {
			ga_sort_iv_by_start(a, n);
			return;
		}
	}
}

int ga_busy_flush(struct ga_busy *b)
{
	struct ga_iv *v = NULL;
	size_t i = 0, j = 0, n = 0, cap = 0;

	if (b->nretired)
		clip_late(b);
	if (!b->nbatch)
		return 0;
	sort_batch(b->batch, b->nbatch);
	if (!b->niv || b->batch[0].start >= b->iv[b->niv - 1].start) {
		/* In order (the usual case): extend or append at the end. */
		int rc = 0;

		v = b->iv;
		n = b->niv;
		cap = b->capiv;
		for (i = 0; i < b->nbatch && !rc; i++)
			rc = append(&v, &n, &cap, b->batch[i].start, b->batch[i].end);
		b->iv = v;
		b->niv = n;
		b->capiv = cap;
		if (rc)
			return -1;
		b->nbatch = 0;
		return 0;
	}
	/*
	 * Earlier intervals: merge both sorted lists in one pass, not one move
	 * each.  The list's intervals that end before the batch's first start
	 * stay as they are (disjoint, not touching what follows), so only the
	 * tail from the first that may join is merged: streams that interleave
	 * put a batch a little behind the list's end, and a merge of the whole
	 * list at every batch grew with the list.
	 */
	{
		size_t lo = 0, hi = b->niv;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (b->iv[mid].end < b->batch[0].start)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
		/* Both lists' intervals at most: allocated once, no append's growth per interval. */
		cap = b->niv - lo + b->nbatch;
		if (cap > SIZE_MAX / sizeof(*v) || !(v = malloc(cap * sizeof(*v))))
			return -1;
		while (i < b->niv || j < b->nbatch) {
			struct ga_iv x;

			if (j == b->nbatch || (i < b->niv && b->iv[i].start <= b->batch[j].start))
				x = b->iv[i++];
			else
				x = b->batch[j++];
			if (n && x.start <= v[n - 1].end) {
				if (x.end > v[n - 1].end)
					v[n - 1].end = x.end;
			} else {
				v[n++] = x;
			}
		}
		if (lo + n > b->capiv) {
			size_t ncap = b->capiv ? b->capiv : 2;
			struct ga_iv *p;

			while (ncap < lo + n)
				ncap *= 2;
			if (ncap > SIZE_MAX / sizeof(*p) || !(p = realloc(b->iv, ncap * sizeof(*p)))) {
				free(v);
				return -1;
			}
			b->iv = p;
			b->capiv = ncap;
		}
		memcpy(b->iv + lo, v, n * sizeof(*v));
		free(v);
		b->niv = lo + n;
	}
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

/* More retired than keep_max, or merged: kept[] dropped for good. */
static void kept_drop(struct ga_busy *b)
{
	free(b->kept);
	b->kept = NULL;
	b->nkept = b->capkept = 0;
	b->kept_over = 1;
}

int ga_busy_retire(struct ga_busy *b, uint64_t wm)
{
	size_t i, k;

	if (ga_busy_flush(b))
		return -1;
	for (k = 0; k < b->niv && b->iv[k].end < wm; k++)
		;
	if (!k)
		return 0;
	if (!b->nretired)
		b->first = b->iv[0].start;
	if (b->keep_max && !b->kept_over) {
		if (b->nkept + k > b->keep_max) {
			kept_drop(b);
		} else {
			if (ga_util_grow(&b->kept, &b->capkept, b->nkept + k, sizeof(*b->kept)))
				return -1;
			memcpy(b->kept + b->nkept, b->iv, k * sizeof(*b->kept));
			b->nkept += k;
		}
	}
	for (i = 0; i < k; i++) {
		b->retired_ns += b->iv[i].end - b->iv[i].start;
		if (b->on_retire)
			b->on_retire(b->retire_ctx, b->iv[i].start, b->iv[i].end);
	}
	b->nretired += k;
	b->frontier = b->iv[k - 1].end;
	memmove(b->iv, b->iv + k, (b->niv - k) * sizeof(*b->iv));
	b->niv -= k;
	return 0;
}

/* The earliest last start of the streams, and no later than GA_BUSY_LAG before the latest. */
static uint64_t watermark(const struct ga_busy *b)
{
	uint64_t wm = b->max_start > GA_BUSY_LAG ? b->max_start - GA_BUSY_LAG : 0;

	for (size_t i = 0; i < b->nst; i++)
		if (b->st[i].last < wm)
			wm = b->st[i].last;
	return wm;
}

int ga_busy_add_stream(struct ga_busy *b, uint32_t proc, uint32_t context, uint32_t stream,
		       uint64_t start, uint64_t end)
{
	uint64_t ka = (uint64_t)proc << 32 | context;
	struct ga_busy_scache *c = &b->st_cache[stream % GA_BUSY_STREAM_CACHE];
	struct ga_busy_stream *st;

	if (!c->i || c->a != ka || c->b != stream) {
		uint32_t *slot;
		int r = ga_map_insert(&b->st_map, ka, stream, &slot);

		if (r < 0)
			return -1;
		if (r > 0) {
			if (ga_util_grow(&b->st, &b->capst, b->nst + 1, sizeof(*b->st)))
				return -1;
			b->st[b->nst].last = start;
			*slot = (uint32_t)++b->nst;
		}
		c->a = ka;
		c->b = stream;
		c->i = *slot;
	}
	st = &b->st[c->i - 1];
	if (start > st->last)
		st->last = start;
	if (start > b->max_start)
		b->max_start = start;
	if (ga_busy_add(b, start, end))
		return -1;
	if (b->niv + b->nbatch < (b->retire_at ? b->retire_at : GA_BUSY_RETIRE_AT))
		return 0;
	if (ga_busy_retire(b, watermark(b)))
		return -1;
	/* Held back by a slow stream: the next try once the list doubled. */
	b->retire_at = b->niv * 2 > GA_BUSY_RETIRE_AT ? b->niv * 2 : GA_BUSY_RETIRE_AT;
	return 0;
}

int ga_busy_merge(struct ga_busy *to, struct ga_busy *from)
{
	size_t i;

	if (ga_busy_flush(from))
		return -1;
	for (i = 0; i < from->niv; i++)
		if (ga_busy_add(to, from->iv[i].start, from->iv[i].end))
			return -1;
	/* Merged before from's retired ones count: they are late, not its kept ones. */
	if (from->nretired && ga_busy_flush(to))
		return -1;
	if (from->nretired) {
		if (!to->nretired || from->first < to->first)
			to->first = from->first;
		if (from->frontier > to->frontier)
			to->frontier = from->frontier;
		to->retired_ns += from->retired_ns;
		to->nretired += from->nretired;
		to->late += from->nretired;
	}
	if ((from->nretired || from->kept_over) && to->keep_max)
		kept_drop(to);
	to->late += from->late;
	ga_busy_free(from);
	return 0;
}

uint64_t ga_busy_total(const struct ga_busy *b)
{
	uint64_t t = b->retired_ns;
	size_t i;

	for (i = 0; i < b->niv; i++)
		t += b->iv[i].end - b->iv[i].start;
	return t;
}

int ga_busy_span(const struct ga_busy *b, uint64_t *first, uint64_t *last)
{
	if (!b->nretired && !b->niv) {
		*first = *last = 0;
		return 0;
	}
	*first = b->nretired ? b->first : b->iv[0].start;
	*last = b->niv ? b->iv[b->niv - 1].end : b->frontier;
	return 1;
}

/* A copy of n elements of size each at p, with room for cap (NULL p: NULL, 0). */
static int dup_array(void **out, const void *p, size_t n, size_t cap, size_t size)
{
	*out = NULL;
	if (!p)
		return 0;
	if (!(*out = malloc((cap ? cap : 1) * size)))
		return -1;
	memcpy(*out, p, n * size);
	return 0;
}

int ga_busy_copy(struct ga_busy *to, const struct ga_busy *from)
{
	void *iv, *batch, *st, *kept = NULL;

	*to = *from;
	to->on_retire = NULL;
	to->retire_ctx = NULL;
	memset(&to->st_map, 0, sizeof(to->st_map));
	if (dup_array(&iv, from->iv, from->niv, from->capiv, sizeof(*from->iv)) ||
	    dup_array(&batch, from->batch, from->nbatch, from->capbatch, sizeof(*from->batch))) {
		free(iv);
		memset(to, 0, sizeof(*to));
		return -1;
	}
	if (dup_array(&st, from->st, from->nst, from->capst, sizeof(*from->st)) ||
	    dup_array(&kept, from->kept, from->nkept, from->capkept, sizeof(*from->kept)) ||
	    ga_map_copy(&to->st_map, &from->st_map)) {
		free(iv);
		free(batch);
		free(st);
		free(kept);
		memset(to, 0, sizeof(*to));
		return -1;
	}
	to->iv = iv;
	to->batch = batch;
	to->st = st;
	to->kept = kept;
	return 0;
}

int ga_busy_close(struct ga_busy *b)
{
	if (ga_busy_retire(b, UINT64_MAX))
		return -1;
	free(b->iv);
	free(b->batch);
	free(b->st);
	ga_map_free(&b->st_map);
	b->iv = b->batch = NULL;
	b->niv = b->capiv = b->nbatch = b->capbatch = 0;
	b->st = NULL;
	b->nst = b->capst = 0;
	memset(b->st_cache, 0, sizeof(b->st_cache));
	b->retire_at = 0;
	return 0;
}

void ga_busy_free(struct ga_busy *b)
{
	free(b->iv);
	free(b->batch);
	free(b->st);
	free(b->kept);
	ga_map_free(&b->st_map);
	memset(b, 0, sizeof(*b));
}
