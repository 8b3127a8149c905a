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

#define XS_PBUF (256u << 10) /* packed bytes gathered before a write */
#define XS_FHEAD 8           /* a packed frame's head: its bytes and records, 32 bits each */
#define XS_WORDS 15          /* a packed record's words at most (a nibble each in 64 bits) */

void ga_xsort_init(struct ga_xsort *x, size_t rsize, size_t cap)
{
	memset(x, 0, sizeof(*x));
	x->rsize = rsize < 8 ? 8 : rsize;
	x->cap = cap ? cap : 1;
	/* The packing stores and loads words as little-endian bytes. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x->packed = x->rsize % 8 == 0 && x->rsize <= 8 * XS_WORDS;
#endif
}

/* Records of a frame: as many as a block holds. */
static size_t frame_recs(const struct ga_xsort *x)
{
	return XS_BLOCK / x->rsize;
}

/* The most bytes a packed frame's records take: a nibble of length per word, and every word whole. */
static size_t frame_max(const struct ga_xsort *x)
{
	return frame_recs(x) * ((x->rsize / 8 + 1) / 2 + x->rsize);
}

/* pbuf: frames gathered for a write, or one frame, the next one's head and room for 8-byte loads. */
static int pbuf_get(struct ga_xsort *x)
{
	if (x->pbuf)
		return 0;
	x->pcap = XS_PBUF + XS_FHEAD + frame_max(x) + XS_FHEAD + 8;
	if (!(x->pbuf = malloc(x->pcap))) {
		snprintf(x->err, sizeof(x->err), "out of memory");
		return -1;
	}
	return 0;
}

/*
 * One record packed at o, prev the words of the record before (zeros at a
 * frame's start), updated: a nibble of each word's length in bytes, then
 * each word's difference in that many bytes (at least 1), little-endian; the key
 * subtracted (the run is in key order: small), the others XORed (mostly
 * the same as before: nothing).  8 bytes of room past the end for the
 * whole-word stores.  Returns the end.  Inlined where words is a
 * constant, so that its loop unrolls.
 */
static inline __attribute__((always_inline)) unsigned char *
pack(unsigned char *o, const unsigned char *rec, size_t words, uint64_t *prev)
{
	unsigned char *h = o;
	uint64_t head = 0;
	size_t j;

	o += (words + 1) / 2;
#pragma GCC unroll 8
	for (j = 0; j < words; j++) {
		uint64_t w, d;
		unsigned len;

		memcpy(&w, rec + 8 * j, 8);
		d = j ? w ^ prev[j] : w - prev[j];
		prev[j] = w;
		/* A word of nothing takes a byte too: no branch on it. */
		len = ((unsigned)(63 ^ __builtin_clzll(d | 1)) + 8) >> 3;
		head |= (uint64_t)len << (4 * j);
		memcpy(o, &d, 8);
		o += len;
	}
#pragma GCC unroll 8
	for (j = 0; j < (words + 1) / 2; j++)
		h[j] = (unsigned char)(head >> (8 * j));
	return o;
}

/* A length nibble's mask; 9 to 15 (never packed) mark the frame damaged. */
static const uint64_t len_mask[16] = {
	0, 0xff, 0xffff, 0xffffff, 0xffffffffull, 0xffffffffffull, 0xffffffffffffull,
	0xffffffffffffffull, ~0ull, 0, 0, 0, 0, 0, 0, 0,
};

/*
 * n records unpacked from p (len bytes, 8 bytes readable past them) into
 * out.  0, or -1 when the bytes do not make exactly n records.
 */
static inline __attribute__((always_inline)) int
unpack_w(const unsigned char *p, size_t len, size_t n, unsigned char *out, size_t words)
{
	const unsigned char *end = p + len;
	size_t hb = (words + 1) / 2;
	uint64_t prev[XS_WORDS] = { 0 };
	/* Each nibble's low three bits, and its top bit. */
	uint64_t bad = 0, low = 0x7777777777777777ull & ((1ull << (4 * words)) - 1);
	uint64_t top = low + (low & 0x1111111111111111ull);

	for (size_t i = 0; i < n; i++) {
		uint64_t head = 0;

#pragma GCC unroll 8
		for (size_t j = 0; j < hb; j++)
			head |= (uint64_t)p[j] << (8 * j);
		p += hb;
		/* A nibble above 8: its top bit and one of the others (their sum with 7 carries into it). */
		bad |= head & ((head & low) + low) & top;
#pragma GCC unroll 8
		for (size_t j = 0; j < words; j++) {
			unsigned l = head >> (4 * j) & 15;
			uint64_t v;

			memcpy(&v, p, 8);
			v &= len_mask[l];
			p += l;
			prev[j] = j ? prev[j] ^ v : prev[j] + v;
			memcpy(out + 8 * j, &prev[j], 8);
		}
		if (p > end)
			return -1;
		out += 8 * words;
	}
	return p == end && !bad ? 0 : -1;
}

static int unpack(const struct ga_xsort *x, const unsigned char *p, size_t len, size_t n,
		  unsigned char *out)
{
	/* The timeline's rows are 4 words, memory in use's events 5. */
	switch (x->rsize / 8) {
	case 4:
		return unpack_w(p, len, n, out, 4);
	case 5:
		return unpack_w(p, len, n, out, 5);
	default:
		return unpack_w(p, len, n, out, x->rsize / 8);
	}
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

static int write_err(struct ga_xsort *x)
{
	snprintf(x->err, sizeof(x->err), "writing a temporary file: %s",
		 errno ? strerror(errno) : "short write");
	return -1;
}

/*
 * The sorted run appended packed, in frames of at most frame_recs()
 * records, each a head (its packed bytes, its records) and its records;
 * the run keeps its first frame's head, each frame read brings the next
 * one's.
 */
static int spill_packed(struct ga_xsort *x)
{
	size_t per = frame_recs(x), words = x->rsize / 8, i = 0, at = 0;
	uint64_t start = x->fsize;
	uint32_t flen0 = 0, fcnt0 = 0;
	struct ga_xsort_run *r;

	if (pbuf_get(x))
		return -1;
	while (i < x->n) {
		size_t k = x->n - i < per ? x->n - i : per;
		unsigned char *head = x->pbuf + at, *o = head + XS_FHEAD;
		uint64_t prev[XS_WORDS] = { 0 };
		uint32_t len, cnt = (uint32_t)k;

		for (size_t e = i + k; i < e; i++) {
			const unsigned char *rec = x->buf + (x->inorder ? i : x->idx[i].end) * x->rsize;

			/* The timeline's rows are 4 words, memory in use's events 5. */
			if (words == 4)
				o = pack(o, rec, 4, prev);
			else if (words == 5)
				o = pack(o, rec, 5, prev);
			else
				o = pack(o, rec, words, prev);
		}
		len = (uint32_t)(o - head - XS_FHEAD);
		memcpy(head, &len, 4);
		memcpy(head + 4, &cnt, 4);
		if (!fcnt0) {
			flen0 = len;
			fcnt0 = cnt;
		}
		at += XS_FHEAD + len;
		x->fsize += XS_FHEAD + len;
		if (at >= XS_PBUF || i == x->n) {
			errno = 0;
			if (write_all(x->fd1 - 1, x->pbuf, at))
				return write_err(x);
			at = 0;
		}
	}
	r = &x->runs[x->nruns++];
	memset(r, 0, sizeof(*r));
	/* The first frame's head is kept here: reading starts at its records. */
	r->off = start + XS_FHEAD;
	r->flen = flen0;
	r->fcnt = fcnt0;
	r->left = x->n;
	x->n = 0;
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
	if (x->n) {
		uint64_t first = x->inorder ? key_of(x->buf) : x->idx[0].start;

		/* Runs one after the other by key (records added in order) read one at a time. */
		if (x->nruns && first < x->last_key)
			x->apart = 1;
		x->last_key = x->inorder ? key_of(x->buf + (x->n - 1) * x->rsize) :
					   x->idx[x->n - 1].start;
	}
	if (x->packed)
		return spill_packed(x);
	/*
	 * A run in order already goes out as it is, a block at a time: one
	 * write of the whole run took the kernel eight times as long.
	 */
	for (; x->inorder && i < x->n; i += per) {
		size_t k = x->n - i < per ? x->n - i : per;

		errno = 0;
		if (write_all(x->fd1 - 1, x->buf + i * x->rsize, k * x->rsize))
			return write_err(x);
	}
	while (i < x->n) {
		size_t k = 0;

		for (; k < per && i < x->n; k++, i++)
			memcpy(blk + k * x->rsize, x->buf + x->idx[i].end * x->rsize, x->rsize);
		errno = 0;
		if (write_all(x->fd1 - 1, blk, k * x->rsize))
			return write_err(x);
	}
	r = &x->runs[x->nruns++];
	memset(r, 0, sizeof(*r));
	r->off = x->fsize;
	r->left = x->n;
	x->fsize += (uint64_t)x->n * x->rsize;
	x->n = 0;
	return 0;
}

void *ga_xsort_slot_more(struct ga_xsort *x)
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

static int read_at(struct ga_xsort *x, void *p, size_t bytes, uint64_t off)
{
	ssize_t got;

	do
		got = pread(x->fd1 - 1, p, bytes, (off_t)off);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)bytes) {
		snprintf(x->err, sizeof(x->err), "reading a temporary file: %s",
			 got < 0 ? strerror(errno) : "short read");
		return -1;
	}
	return 0;
}

/* A packed run's next frame, unpacked into its block, and the head of the one after it. */
static int refill_packed(struct ga_xsort *x, struct ga_xsort_run *r)
{
	size_t more = r->left > r->fcnt ? XS_FHEAD : 0, bytes = (size_t)r->flen + more;

	if (!r->fcnt || r->fcnt > r->left || r->fcnt > frame_recs(x) || r->flen > frame_max(x) ||
	    read_at(x, x->pbuf, bytes, r->off) || unpack(x, x->pbuf, r->flen, r->fcnt, r->blk)) {
		if (!x->err[0])
			snprintf(x->err, sizeof(x->err), "reading a temporary file: a damaged frame");
		return -1;
	}
	r->off += bytes;
	r->left -= r->fcnt;
	r->pos = 0;
	r->n = r->fcnt;
	if (more) {
		memcpy(&r->flen, x->pbuf + r->flen, 4);
		memcpy(&r->fcnt, x->pbuf + bytes - 4, 4);
	}
	return 0;
}

/* The run's next block; 0, or -1 on a read error. */
static int refill(struct ga_xsort *x, struct ga_xsort_run *r)
{
	size_t want = XS_BLOCK / x->rsize, bytes;

	if (x->packed)
		return refill_packed(x, r);

	if (want > r->left)
		want = (size_t)r->left;
	bytes = want * x->rsize;
	if (read_at(x, r->blk, bytes, r->off))
		return -1;
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
	/* Runs in sequence: one block, handed from each run to the next (top_run()). */
	x->in_sequence = !x->apart;
	for (i = 0; i < (x->in_sequence ? 1 : x->nruns); i++) {
		struct ga_xsort_run *r = &x->runs[i];

		/* A short run needs no more than itself. */
		r->blk = malloc(r->left < XS_BLOCK / x->rsize && !x->in_sequence ?
					(size_t)r->left * x->rsize :
					XS_BLOCK);
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

/*
 * The top run, its block read on first if the record given back last was
 * that block's last (rec stayed valid until this call); NULL at the end or
 * on a read error.
 */
static struct ga_xsort_run *top_run(struct ga_xsort *x)
{
	struct ga_xsort_top *top;
	struct ga_xsort_run *r;

	if (!x->nheap || x->err[0])
		return NULL;
	top = &x->heap[0];
	r = &x->runs[top->run];
	if (r->pos == r->n) {
		if (!r->left && x->in_sequence && top->run + 1 < x->nruns) {
			/* The next run in sequence takes the block over. */
			x->runs[top->run + 1].blk = r->blk;
			r->blk = NULL;
			r = &x->runs[++top->run];
		}
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
		r = &x->runs[x->heap[0].run];
	}
	return r;
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
	if (!(r = top_run(x)))
		return NULL;
	top = &x->heap[0];
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

const void *ga_xsort_next_n(struct ga_xsort *x, size_t *n)
{
	struct ga_xsort_top *top;
	struct ga_xsort_run *r;
	const unsigned char *rec;
	size_t p;

	if (!x->nruns) {
		if (x->next >= x->n)
			return NULL;
		if (!x->inorder) {
			*n = 1;
			return x->buf + x->idx[x->next++].end * x->rsize;
		}
		*n = x->n - x->next;
		x->next = x->n;
		return x->buf + (x->next - *n) * x->rsize;
	}
	if (!(r = top_run(x)))
		return NULL;
	top = &x->heap[0];
	rec = r->blk + r->pos * x->rsize;
	/* The top run's records up to the first that the least of the others comes before. */
	for (p = r->pos + 1; p < r->n; p++) {
		uint64_t k = key_of(r->blk + p * x->rsize);

		if (k > x->second.key || (k == x->second.key && top->run >= x->second.run))
			break;
	}
	*n = p - r->pos;
	r->pos = p;
	if (p < r->n) {
		top->key = key_of(r->blk + p * x->rsize);
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
	free(x->pbuf);
	if (x->fd1)
		close(x->fd1 - 1);
	memset(x, 0, sizeof(*x));
}
