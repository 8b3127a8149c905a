/*
 * The external merge sort of fixed-size records (see xsort.h).  Runs
 * offline only.
 */
#include "base/xsort.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XS_BLOCK (64u << 10) /* bytes written or read at once per run */

void ga_xsort_init(struct ga_xsort *x, size_t rsize, size_t cap)
{
	memset(x, 0, sizeof(*x));
	x->rsize = rsize < 8 ? 8 : rsize;
	x->cap = cap ? cap : 1;
}

static uint64_t key_of(const unsigned char *r)
{
	uint64_t k;

	memcpy(&k, r, 8);
	return k;
}

/*
 * The run in key order; equal keys, which the radix sort may swap, back in
 * their order.  Returns 0, or -1 out of memory.
 */
static int sort_run(struct ga_xsort *x)
{
	size_t i, j;

	/* Records mostly come in order (a trace's buffers): a run already in order stays as it is. */
	x->inorder = 1;
	for (i = 1; i < x->n; i++) {
		if (key_of(x->buf + i * x->rsize) < key_of(x->buf + (i - 1) * x->rsize)) {
			x->inorder = 0;
			break;
		}
	}
	if (x->inorder)
		return 0;
	if (ga_util_grow(&x->idx, &x->capidx, x->n, sizeof(*x->idx))) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	for (i = 0; i < x->n; i++) {
		x->idx[i].start = key_of(x->buf + i * x->rsize);
		x->idx[i].end = i;
	}
	ga_sort_iv_by_start(x->idx, x->n);
	for (i = 1; i < x->n; i++) {
		struct ga_iv v = x->idx[i];

		if (v.start != x->idx[i - 1].start || v.end > x->idx[i - 1].end)
			continue;
		for (j = i; j > 0 && x->idx[j - 1].start == v.start && x->idx[j - 1].end > v.end; j--)
			x->idx[j] = x->idx[j - 1];
		x->idx[j] = v;
	}
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The spill file, made at the first spill: unlinked at once, so never left behind. */
static int spill_open(struct ga_xsort *x)
{
	const char *dir;

	x->fd1 = ga_util_tmpfd("sort", &dir) + 1;
	if (!x->fd1) {
		snprintf(x->err, sizeof(x->err), "a temporary file in %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* The full run, sorted, appended to the spill file as a run of its own. */
static int spill(struct ga_xsort *x)
{
	unsigned char blk[XS_BLOCK];
	size_t per = sizeof(blk) / x->rsize, i = 0;
	struct ga_xsort_run *r;

	if (!x->fd1 && spill_open(x))
		return -1;
	if (ga_util_grow(&x->runs, &x->capruns, x->nruns + 1, sizeof(*x->runs))) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	if (sort_run(x))
		return -1;
	/*
	 * A run in order already goes out as it is, a block at a time: one
	 * write of the whole run took the kernel eight times as long.
	 */
	for (; x->inorder && i < x->n; i += per) {
		size_t k = x->n - i < per ? x->n - i : per;

		errno = 0;
		if (write_all(x->fd1 - 1, x->buf + i * x->rsize, k * x->rsize)) {
			snprintf(x->err, sizeof(x->err), "writing a temporary file: %s",
				 errno ? strerror(errno) : "short write");
			return -1;
		}
	}
	while (i < x->n) {
		size_t k = 0;

		for (; k < per && i < x->n; k++, i++)
			memcpy(blk + k * x->rsize, x->buf + x->idx[i].end * x->rsize, x->rsize);
		errno = 0;
		if (write_all(x->fd1 - 1, blk, k * x->rsize)) {
			snprintf(x->err, sizeof(x->err), "writing a temporary file: %s",
				 errno ? strerror(errno) : "short write");
			return -1;
		}
	}
	r = &x->runs[x->nruns++];
	memset(r, 0, sizeof(*r));
	r->off = x->fsize;
	r->left = x->n;
	x->fsize += (uint64_t)x->n * x->rsize;
	x->n = 0;
	return 0;
}

void *ga_xsort_slot(struct ga_xsort *x)
{
	if (x->n == x->cap && spill(x))
		return NULL;
	/* The run grows as records come: a short timeline takes little. */
	if (ga_util_grow(&x->buf, &x->capbuf, x->n + 1, x->rsize)) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return NULL;
	}
	x->total++;
	return x->buf + x->n++ * x->rsize;
}

/* The run's next block; 0, or -1 on a read error. */
static int refill(struct ga_xsort *x, struct ga_xsort_run *r)
{
	size_t want = XS_BLOCK / x->rsize, bytes;
	ssize_t got;

	if (want > r->left)
		want = (size_t)r->left;
	bytes = want * x->rsize;
	do
		got = pread(x->fd1 - 1, r->blk, bytes, (off_t)r->off);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)bytes) {
		snprintf(x->err, sizeof(x->err), "reading a temporary file: %s",
			 got < 0 ? strerror(errno) : "short read");
		return -1;
	}
	r->off += bytes;
	r->left -= want;
	r->pos = 0;
	r->n = want;
	return 0;
}

/* a before b: a smaller key, equal keys in run (added) order. */
static inline int before(const struct ga_xsort_top *a, const struct ga_xsort_top *b)
{
	return a->key != b->key ? a->key < b->key : a->run < b->run;
}

static void sift_down(struct ga_xsort *x, size_t i)
{
	struct ga_xsort_top *h = x->heap;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < x->nheap && before(&h[l], &h[m]))
			m = l;
		if (l + 1 < x->nheap && before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct ga_xsort_top t = h[i];

		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * The heap in order again after its top changed, and the least of the
 * others, which the top run's records come before until one does not
 * (runs of a trace mostly cover times one after the other: most records
 * then need no sifting at all).
 */
static void settle(struct ga_xsort *x)
{
	sift_down(x, 0);
	x->second.key = UINT64_MAX;
	x->second.run = UINT32_MAX;
	if (x->nheap > 1)
		x->second = x->heap[1];
	if (x->nheap > 2 && before(&x->heap[2], &x->second))
		x->second = x->heap[2];
}

int ga_xsort_done(struct ga_xsort *x)
{
	size_t i;

	x->done = 1;
	if (!x->nruns)
		return sort_run(x);
	if (x->n && spill(x))
		return -1;
	/* The run buffer is done with: its memory becomes the runs' blocks. */
	free(x->buf);
	free(x->idx);
	x->buf = NULL;
	x->capbuf = 0;
	x->idx = NULL;
	x->capidx = 0;
	x->heap = malloc(x->nruns * sizeof(*x->heap));
	if (!x->heap) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	for (i = 0; i < x->nruns; i++) {
		struct ga_xsort_run *r = &x->runs[i];

		/* A short run needs no more than itself. */
		r->blk = malloc(r->left < XS_BLOCK / x->rsize ? (size_t)r->left * x->rsize : XS_BLOCK);
		if (!r->blk) {
			snprintf(x->err, sizeof(x->err), "out of memory");
			return -1;
		}
		if (refill(x, r))
			return -1;
		x->heap[x->nheap].key = key_of(r->blk);
		x->heap[x->nheap++].run = (uint32_t)i;
	}
	for (i = x->nheap / 2; i-- > 0;)
		sift_down(x, i);
	settle(x);
	return 0;
}

const void *ga_xsort_next(struct ga_xsort *x)
{
	struct ga_xsort_top *top;
	struct ga_xsort_run *r;
	const void *rec;

	if (!x->nruns) {
		if (x->next >= x->n)
			return NULL;
		if (x->inorder)
			return x->buf + x->next++ * x->rsize;
		return x->buf + x->idx[x->next++].end * x->rsize;
	}
	if (!x->nheap || x->err[0])
		return NULL;
	top = &x->heap[0];
	r = &x->runs[top->run];
	if (r->pos == r->n) {
		/* The record given back last was this block's last: read on. */
		if (r->left) {
			if (refill(x, r))
				return NULL;
			top->key = key_of(r->blk);
		} else {
			*top = x->heap[--x->nheap];
			if (!x->nheap)
				return NULL;
		}
		settle(x);
		top = &x->heap[0];
		r = &x->runs[top->run];
	}
	rec = r->blk + r->pos * x->rsize;
	/*
	 * The top moves on to its run's next record; the block is not read
	 * over before the next call (rec stays valid), at pos == n.
	 */
	if (++r->pos < r->n) {
		top->key = key_of(r->blk + r->pos * x->rsize);
		if (!before(top, &x->second))
			settle(x);
	}
	return rec;
}

void ga_xsort_free(struct ga_xsort *x)
{
	size_t i;

	for (i = 0; i < x->nruns; i++)
		free(x->runs[i].blk);
	free(x->runs);
	free(x->heap);
	free(x->buf);
	free(x->idx);
	if (x->fd1)
		close(x->fd1 - 1);
	memset(x, 0, sizeof(*x));
}
