/*
 * The timeline exports' track layout (see tracks.h).  Runs offline only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "views/tracks.h"

/* Range boundaries inside one API call looked at before giving up (its thread is in the call). */
#define CROSS_LOOK 64

long ga_lanes_add(struct ga_lanes *ls, long last, uint32_t tid)
{
	struct ga_lane *l;

	if (ls->n >= UINT32_MAX - 1 || ga_util_grow(&ls->v, &ls->cap, ls->n + 1, sizeof(*ls->v)))
		return -1;
	l = &ls->v[ls->n];
	memset(l, 0, sizeof(*l));
	l->tid = tid;
	if (last >= 0)
		ls->v[last].next = (uint32_t)ls->n + 1;
	return (long)ls->n++;
}

int ga_lane_fits(const struct ga_lane *l, int nest, int strict, uint64_t s, uint64_t e)
{
	const uint64_t *ks = l->s + l->off, *ke = l->e + l->off;

	/* Kept slices are disjoint and by start: the last ends last. */
	if (!l->n || s >= ke[l->n - 1])
		return 1;
	for (uint32_t i = 0; i < l->n; i++) {
		if (ke[i] <= s)
			continue;
		if (e <= ks[i]) {
			/* Its end would come after the kept one's begin at that time. */
			if (strict && e == ks[i] && ks[i] > s)
				return 0;
			continue;
		}
		if (nest && s <= ks[i] && ke[i] <= e) {
			/* The kept one's begin comes first: it would be the outer one. */
			if (strict && s == ks[i] && ke[i] != e)
				return 0;
			continue;
		}
		return 0;
	}
	return 1;
}

void ga_lane_put(struct ga_lane *l, uint64_t s, uint64_t e)
{
	uint64_t *ks, *ke;
	uint32_t i, j = 0;

	if (l->off + l->n >= GA_LANE_ROOM) {
		/* The window is at the end of its room: what it keeps goes back to the start. */
		memmove(l->s, l->s + l->off, l->n * sizeof(l->s[0]));
		memmove(l->e, l->e + l->off, l->n * sizeof(l->e[0]));
		l->off = 0;
	}
	ks = l->s + l->off;
	ke = l->e + l->off;
	if (!l->n || s > ks[l->n - 1]) {
		/*
		 * After every kept start (a stream's next kernel): it holds none
		 * of them and goes last.
		 */
		ks[l->n] = s;
		ke[l->n] = e;
		j = l->n;
		goto put;
	}
	for (i = 0; i < l->n; i++) {
		if (s <= ks[i] && ke[i] <= e)
			continue;
		ks[j] = ks[i];
		ke[j] = ke[i];
		j++;
	}
	/*
	 * By start, then end: a slice of no length at the start of a kept one
	 * goes before it, so that the last kept still ends last.
	 */
	for (i = j; i > 0 && (ks[i - 1] > s || (ks[i - 1] == s && ke[i - 1] > e)); i--) {
		ks[i] = ks[i - 1];
		ke[i] = ke[i - 1];
	}
	ks[i] = s;
	ke[i] = e;
put:
	l->n = j + 1;
	if (l->n > GA_LANE_KEEP) {
		/* The two first become one span: disjoint, by start, it ends before the third. */
		ke[1] = ke[1] > ke[0] ? ke[1] : ke[0];
		ks[1] = ks[0];
		l->off++;
		l->n = GA_LANE_KEEP;
	}
}

long ga_lanes_find(const struct ga_lanes *ls, long head, int nest, int strict, int first_ok,
		   uint64_t s, uint64_t e, long *last)
{
	long i;

	*last = -1;
	for (i = head; i >= 0; i = (long)ls->v[i].next - 1) {
		*last = i;
		if ((i != head || first_ok) && ga_lane_fits(&ls->v[i], nest, strict, s, e))
			return i;
	}
	return -1;
}

void ga_lanes_free(struct ga_lanes *ls)
{
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

int ga_nest_fits(struct ga_nest *l, uint64_t s, uint64_t e)
{
	while (l->n && l->end[l->n - 1] <= s)
		l->n--;
	return !l->n || l->end[l->n - 1] >= e;
}

int ga_nest_push(struct ga_nest *l, uint64_t e)
{
	if (ga_util_grow(&l->end, &l->cap, l->n + 1, sizeof(uint64_t)))
		return -1;
	l->end[l->n++] = e;
	return 0;
}

int ga_nests_add(struct ga_nest **st, size_t *n, size_t *cap)
{
	if (ga_util_grow(st, cap, *n + 1, sizeof(**st)))
		return -1;
	memset(&(*st)[*n], 0, sizeof(**st));
	(*n)++;
	return 0;
}

void ga_nests_clear(struct ga_nest *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(st[i].end);
}

/* Order of two ranges read together with the same sort key: the longer first, then index. */
static int cmp_srec(const void *pa, const void *pb)
{
	const struct ga_ranges_srec *a = pa, *b = pb;

	if (a->r.end != b->r.end)
		return a->r.end > b->r.end ? -1 : 1;
	if (a->r.id != b->r.id)
		return a->r.id < b->r.id ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The same for start/end ranges of a process (range order: seq). */
static int cmp_srec_async(const void *pa, const void *pb)
{
	const struct ga_ranges_srec *a = pa, *b = pb;

	if (a->r.end != b->r.end)
		return a->r.end > b->r.end ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int layout_err(struct ga_range_layout *rl, const char *what, const char *why)
{
	if (!rl->err[0])
		snprintf(rl->err, sizeof(rl->err), "%s: %s", what, why && why[0] ? why : "out of memory");
	return -1;
}

/*
 * The next record of x (sorted by a key that is the first part of the
 * order), the records of one key in a row given in the order cmp puts
 * them (in memory: as many as share a key).  NULL at the end or on an
 * error (err set).
 */
static const struct ga_ranges_srec *grouped_next(struct ga_range_layout *rl, struct ga_xsort *x,
						 int (*cmp)(const void *, const void *),
						 int (*same)(const struct ga_ranges_srec *,
							     const struct ga_ranges_srec *))
{
	const struct ga_ranges_srec *r;

	if (rl->igrp < rl->ngrp)
		return &rl->grp[rl->igrp++];
	rl->ngrp = rl->igrp = 0;
	if (!rl->has_held) {
		if (!(r = ga_xsort_next(x))) {
			if (x->err[0])
				layout_err(rl, "NVTX ranges read back", x->err);
			return NULL;
		}
		rl->held = *r;
	}
	rl->has_held = 0;
	for (;;) {
		if (ga_util_grow(&rl->grp, &rl->capgrp, rl->ngrp + 1, sizeof(*rl->grp))) {
			layout_err(rl, "NVTX ranges", NULL);
			return NULL;
		}
		rl->grp[rl->ngrp++] = rl->held;
		if (!(r = ga_xsort_next(x))) {
			if (x->err[0]) {
				layout_err(rl, "NVTX ranges read back", x->err);
				return NULL;
			}
			break;
		}
		rl->held = *r;
		if (!same(r, &rl->grp[0])) {
			rl->has_held = 1;
			break;
		}
	}
	if (rl->ngrp > 1)
		qsort(rl->grp, rl->ngrp, sizeof(*rl->grp), cmp);
	return &rl->grp[rl->igrp++];
}

static int same_thread_start(const struct ga_ranges_srec *a, const struct ga_ranges_srec *b)
{
	return a->r.proc == b->r.proc && a->r.tid == b->r.tid && a->r.start == b->r.start;
}

static int same_proc_start(const struct ga_ranges_srec *a, const struct ga_ranges_srec *b)
{
	return a->r.proc == b->r.proc && a->r.start == b->r.start;
}

/* Words an entry of p: 2, or 3 where asked (w). */
static inline size_t pairs_w(const struct ga_pairs *p)
{
	return p->w == 3 ? 3 : 2;
}

static int pairs_open(struct ga_range_layout *rl, struct ga_pairs *p)
{
	const char *dir;

	if (!(p->fd1 = ga_util_tmpfd("nvtx", &dir) + 1)) {
		snprintf(rl->err, sizeof(rl->err), "a temporary file in %s: %s", dir,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* The pairs gathered, appended to the file.  0, or -1 (rl->err). */
static int pairs_flush(struct ga_range_layout *rl, struct ga_pairs *p)
{
	const char *b = (const char *)p->wbuf;
	size_t left = p->wn * pairs_w(p) * sizeof(*p->wbuf);

	while (left) {
		ssize_t w = write(p->fd1 - 1, b, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return layout_err(rl, "writing a temporary file",
					  w ? strerror(errno) : "short write");
		b += w;
		left -= (size_t)w;
	}
	p->wn = 0;
	return 0;
}

/* An entry (s, e, and c where p->w is 3) appended to p.  0, or -1 (rl->err). */
static int pairs_put3(struct ga_range_layout *rl, struct ga_pairs *p, uint64_t s, uint64_t e,
		      uint64_t c)
{
	uint64_t *v;

	if (!p->wbuf && !(p->wbuf = malloc(GA_PAIRS_WBUF * pairs_w(p) * sizeof(*p->wbuf))))
		return layout_err(rl, "NVTX ranges", NULL);
	/* A full buffer: the file, made at the first. */
	if (p->wn == GA_PAIRS_WBUF && ((!p->fd1 && pairs_open(rl, p)) || pairs_flush(rl, p)))
		return -1;
	v = p->wbuf + pairs_w(p) * p->wn++;
	v[0] = s;
	v[1] = e;
	if (p->w == 3)
		v[2] = c;
	p->n++;
	return 0;
}

static int pairs_put(struct ga_range_layout *rl, struct ga_pairs *p, uint64_t s, uint64_t e)
{
	return pairs_put3(rl, p, s, e, 0);
}

/* Pair i of p (written and flushed), or NULL on a read error (rl->err). */
static const uint64_t *pairs_at(struct ga_range_layout *rl, struct ga_pairs *p, uint64_t i)
{
	uint64_t b = i / GA_PAIRS_BLK, *v;
	size_t slot = (size_t)((b * 0x9e3779b97f4a7c15ull) >> 57) % GA_PAIRS_CACHE;

	if (!p->fd1)
		return p->wbuf + pairs_w(p) * i; /* all in memory */
	v = p->blk + slot * pairs_w(p) * GA_PAIRS_BLK;
	if (p->tag[slot] != b + 1) {
		uint64_t first = b * GA_PAIRS_BLK, n = p->n - first < GA_PAIRS_BLK ? p->n - first :
										     GA_PAIRS_BLK;
		size_t want = (size_t)n * pairs_w(p) * sizeof(uint64_t), got = 0;

		while (got < want) {
			ssize_t r = pread(p->fd1 - 1, (char *)v + got, want - got,
					  (off_t)(first * pairs_w(p) * sizeof(uint64_t) + got));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				p->tag[slot] = 0;
				layout_err(rl, "reading a temporary file",
					   r ? strerror(errno) : "short read");
				return NULL;
			}
			got += (size_t)r;
		}
		p->tag[slot] = b + 1;
	}
	return v + pairs_w(p) * (i % GA_PAIRS_BLK);
}

static int pairs_ready(struct ga_range_layout *rl, struct ga_pairs *p)
{
	if (!p->fd1)
		return 0; /* all in memory */
	if (pairs_flush(rl, p))
		return -1;
	free(p->wbuf);
	p->wbuf = NULL;
	p->blk = malloc((size_t)GA_PAIRS_CACHE * pairs_w(p) * GA_PAIRS_BLK * sizeof(*p->blk));
	p->tag = calloc(GA_PAIRS_CACHE, sizeof(*p->tag));
	if (!p->blk || !p->tag)
		return layout_err(rl, "NVTX ranges", NULL);
	return 0;
}

static void pairs_free(struct ga_pairs *p)
{
	if (p->fd1)
		close(p->fd1 - 1);
	free(p->wbuf);
	free(p->blk);
	free(p->tag);
	memset(p, 0, sizeof(*p));
}

/*
 * Where the ranges come from, in range order: the scan's external sort by
 * start, sorted again by thread (stable: by thread, start, order read),
 * each thread's ranges of one start put in order in memory; or the ranges
 * kept.
 */
struct lsrc {
	struct ga_ranges *rg;
	size_t i;                  /* kept: the next range */
	struct ga_xsort by_thread; /* spilled, of several threads */
	struct ga_xsort *x;        /* spilled: by_thread, or rg's sort of one thread's */
	uint64_t seq;
	struct ga_ranges_srec one;
};

static int lsrc_begin(struct ga_range_layout *rl, struct lsrc *q)
{
	const struct ga_ranges_srec *r;
	struct ga_ranges *rg = q->rg;

	if (!rg->spill || !rg->spilled.rsize)
		return 0;
	if (ga_xsort_done(&rg->spilled))
		return layout_err(rl, "NVTX ranges sorted", rg->spilled.err);
	if (!rg->spill_threads) {
		/* One thread's: by start already. */
		q->x = &rg->spilled;
		return 0;
	}
	q->x = &q->by_thread;
	ga_xsort_init(&q->by_thread, sizeof(*r), GA_RANGES_SPILL_RUN);
	while ((r = ga_xsort_next(&rg->spilled))) {
		struct ga_ranges_srec *x = ga_xsort_slot(&q->by_thread);

		if (!x)
			return layout_err(rl, "NVTX ranges sorted", q->by_thread.err);
		*x = *r;
		x->key = (uint64_t)r->r.proc << 32 | r->r.tid;
	}
	if (rg->spilled.err[0])
		return layout_err(rl, "NVTX ranges read back", rg->spilled.err);
	ga_xsort_free(&rg->spilled);
	if (ga_xsort_done(&q->by_thread))
		return layout_err(rl, "NVTX ranges sorted", q->by_thread.err);
	return 0;
}

static const struct ga_ranges_srec *lsrc_next(struct ga_range_layout *rl, struct lsrc *q)
{
	const struct ga_ranges *rg = q->rg;
	struct ga_ranges_srec *x = &q->one;

	if (q->x) {
		const struct ga_ranges_srec *r = grouped_next(rl, q->x, cmp_srec, same_thread_start);

		if (!r)
			return NULL;
		*x = *r;
		x->seq = q->seq++;
		return x;
	}
	if (q->i >= rg->nranges)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->r = rg->ranges[q->i];
	x->d = ga_ranges_detail_of(rg, q->i);
	x->raw = rg->raw && rg->raw[q->i] ? rg->raw[q->i] : 0;
	x->seq = q->i++;
	return x;
}

/*
 * The ranges read (rc 0), or not (-1: said on stderr): the sorts' blocks
 * go (the model's read comes after).  rc.
 */
static int lsrc_end(struct ga_range_layout *rl, struct lsrc *q, int rc)
{
	if (rc && !rl->err[0])
		layout_err(rl, "NVTX ranges", NULL);
	if (rc)
		fprintf(stderr, "gpuprof: %s\n", rl->err);
	if (q->x == &q->rg->spilled)
		ga_xsort_free(&q->rg->spilled);
	ga_xsort_free(&q->by_thread);
	return rc;
}

/*
 * A thread's own track's ranges, by start: those still open (ending after
 * the next one starts) on a stack; closed ones go to by_end, by end.
 * Ranges on one lane nest: the stack's ends only grow towards its bottom,
 * so what is popped comes by end.  (Of one end, any order: a call's check
 * reads all of them or none.)
 */
struct ownstack {
	uint64_t (*v)[2];
	size_t n, cap;
};

static int own_close(struct ga_range_layout *rl, struct ownstack *o, uint64_t before, int all)
{
	for (; o->n && (all || o->v[o->n - 1][1] <= before); o->n--)
		if (pairs_put(rl, &rl->by_end, o->v[o->n - 1][0], o->v[o->n - 1][1]))
			return -1;
	return 0;
}

/* Thread (proc, tid)'s own track's ranges (by_start from off on) as a segment. */
static int seg_end(struct ga_range_layout *rl, struct ownstack *o, uint32_t proc, uint32_t tid,
		   uint64_t off)
{
	uint32_t *slot;

	if (rl->by_start.n == off)
		return 0;
	if (own_close(rl, o, 0, 1))
		return -1;
	if (ga_util_grow(&rl->segs, &rl->capsegs, rl->nsegs + 1, sizeof(*rl->segs)) ||
	    ga_map_insert(&rl->seg_map, proc, tid, &slot) < 0)
		return layout_err(rl, "NVTX ranges", NULL);
	rl->segs[rl->nsegs].off = off;
	rl->segs[rl->nsegs].n = rl->by_start.n - off;
	*slot = (uint32_t)++rl->nsegs;
	return 0;
}

/* Push/pop range x's track on its thread's lanes st (*nst of *capst). */
static int place(struct ga_range_layout *rl, struct ga_nest **st, size_t *nst, size_t *capst,
		 struct ownstack *o, struct ga_ranges_srec *x, const struct ga_ranges *rg,
		 uint32_t *nhost)
{
	const struct ga_ranges_range *r = &x->r;
	uint32_t dom = rg->keys[r->key].domain;
	size_t l, first = SIZE_MAX;

	for (l = 0; l < *nst; l++) {
		if ((*st)[l].domain != dom)
			continue;
		if (first == SIZE_MAX)
			first = l;
		if (ga_nest_fits(&(*st)[l], r->start, r->end))
			break;
	}
	if (l == *nst) {
		struct ga_nest *n;

		if (ga_nests_add(st, nst, capst))
			return layout_err(rl, "NVTX ranges", NULL);
		n = &(*st)[l];
		n->domain = dom;
		if (first == SIZE_MAX && !dom) {
			n->tid = r->tid;
		} else {
			struct ga_range_track *t;

			/* Named by the export: the process may not be read yet. */
			if (ga_util_grow(&rl->tracks, &rl->captracks, rl->ntracks + 1,
					 sizeof(*rl->tracks)))
				return layout_err(rl, "NVTX ranges", NULL);
			n->tid = GA_HOST_TID_BASE + (*nhost)++;
			t = &rl->tracks[rl->ntracks++];
			t->proc = r->proc;
			t->tid = n->tid;
			t->thread = r->tid;
			t->domain = dom;
			t->overlapping = first != SIZE_MAX;
		}
	}
	if (ga_nest_push(&(*st)[l], r->end))
		return layout_err(rl, "NVTX ranges", NULL);
	x->track = (*st)[l].tid;
	if (x->track != r->tid)
		return 0;
	if (own_close(rl, o, r->start, 0) || pairs_put(rl, &rl->by_start, r->start, r->end) ||
	    ga_util_grow(&o->v, &o->cap, o->n + 1, sizeof(*o->v)))
		return layout_err(rl, "NVTX ranges", NULL);
	o->v[o->n][0] = r->start;
	o->v[o->n++][1] = r->end;
	return 0;
}

/* The thread being indexed (x->ix's proc, tid from off on) as a segment. */
static int ix_seg(struct ga_range_layout *rl)
{
	struct ga_range_ix *x = &rl->ix;
	uint32_t *slot;

	if (ga_util_grow(&x->segs, &x->capsegs, x->nsegs + 1, sizeof(*x->segs)) ||
	    ga_map_insert(&x->seg_map, x->proc, x->tid, &slot) < 0)
		return layout_err(rl, "NVTX ranges", NULL);
	memset(&x->segs[x->nsegs], 0, sizeof(x->segs[x->nsegs]));
	x->segs[x->nsegs].off = x->off;
	x->segs[x->nsegs].n = x->p.n - x->off;
	*slot = (uint32_t)++x->nsegs;
	return 0;
}

/*
 * Range r (index i, in range order) into the index; *parent: the first
 * on the chain of the thread's range before it still open at its start,
 * as ranges.c links ranges it keeps (the open ones are that chain).
 */
static int ix_add(struct ga_range_layout *rl, struct ga_ranges *rg, const struct ga_ranges_range *r,
		  uint64_t i, uint32_t *parent)
{
	struct ga_range_ix *x = &rl->ix;

	if (i >= GA_RANGES_FOLDED)
		return layout_err(rl, "NVTX ranges", "more than 4294967293 of them");
	if (!x->any || r->proc != x->proc || r->tid != x->tid) {
		if (x->any && ix_seg(rl))
			return -1;
		x->nopen = 0;
		x->off = x->p.n;
		x->proc = r->proc;
		x->tid = r->tid;
		x->any = 1;
	}
	while (x->nopen && x->open[x->nopen - 1][1] <= r->start)
		x->nopen--;
	*parent = x->nopen ? (uint32_t)x->open[x->nopen - 1][0] : GA_RANGES_NONE;
	if (ga_util_grow(&x->open, &x->capopen, x->nopen + 1, sizeof(*x->open)))
		return layout_err(rl, "NVTX ranges", NULL);
	x->open[x->nopen][0] = i;
	x->open[x->nopen++][1] = r->end;
	x->p.w = 3;
	if (pairs_put3(rl, &x->p, r->start, r->end, (uint64_t)r->key << 32 | *parent))
		return -1;
	ga_ranges_spilled_index(rg, r, (uint32_t)i);
	return 0;
}

/* Every range indexed: the last thread's segment, the file read from here on. */
static int ix_done(struct ga_range_layout *rl, struct ga_ranges *rg)
{
	struct ga_range_ix *x = &rl->ix;

	if ((x->any && ix_seg(rl)) || pairs_ready(rl, &x->p))
		return -1;
	free(x->open);
	x->open = NULL;
	x->nopen = x->capopen = 0;
	ga_ranges_spilled_indexed(rg);
	return 0;
}

int ga_range_layout_build(struct ga_range_layout *rl, struct ga_ranges *rg, uint32_t *nhost)
{
	struct lsrc q = { .rg = rg };
	struct ga_nest *st = NULL;
	struct ownstack o = { 0 };
	struct ga_ranges_srec *x;
	size_t nst = 0, capst = 0;
	uint64_t off = 0, index = 0;
	uint32_t proc = 0, tid = 0, parent;
	int rc = -1, any = 0;

	ga_xsort_init(&rl->out, sizeof(*x), GA_RANGES_SPILL_RUN);
	if (rl->want_async)
		ga_xsort_init(&rl->async, sizeof(*x), GA_RANGES_SPILL_RUN);
	if (lsrc_begin(rl, &q))
		goto out;
	while ((x = (struct ga_ranges_srec *)lsrc_next(rl, &q))) {
		struct ga_ranges_srec *y;

		if (!any || x->r.proc != proc || x->r.tid != tid) {
			if (any && seg_end(rl, &o, proc, tid, off))
				goto out;
			ga_nests_clear(st, nst);
			nst = 0;
			o.n = 0;
			off = rl->by_start.n;
			proc = x->r.proc;
			tid = x->r.tid;
			any = 1;
		}
		x->track = 0;
		if (rl->want_index && ix_add(rl, rg, &x->r, x->seq, &parent))
			goto out;
		if (x->r.pushpop && place(rl, &st, &nst, &capst, &o, x, rg, nhost))
			goto out;
		if (!x->r.pushpop && rl->want_async) {
			if (!(y = ga_xsort_slot(&rl->async))) {
				layout_err(rl, "NVTX ranges sorted", rl->async.err);
				goto out;
			}
			*y = *x;
			y->key = x->r.start;
		}
		if (!(y = ga_xsort_slot(&rl->out))) {
			layout_err(rl, "NVTX ranges sorted", rl->out.err);
			goto out;
		}
		*y = *x;
		y->key = index++;
	}
	if (rl->err[0] || (any && seg_end(rl, &o, proc, tid, off)) ||
	    pairs_ready(rl, &rl->by_start) || pairs_ready(rl, &rl->by_end) ||
	    (rl->want_index && ix_done(rl, rg)))
		goto out;
	rc = 0;
out:
	ga_nests_clear(st, nst);
	free(st);
	free(o.v);
	return lsrc_end(rl, &q, rc);
}

/* Whether word k of pair i is before s (strict: s itself is not): 1, 0, or -1 (rl->err). */
static int pair_before(struct ga_range_layout *rl, struct ga_pairs *p, uint64_t i, int k,
		       uint64_t s, int strict)
{
	const uint64_t *a = pairs_at(rl, p, i);

	if (!a)
		return -1;
	return a[k] < s || (!strict && a[k] == s);
}

/*
 * The first of the n pairs of p from off whose word k is not before s
 * (pair_before()), galloping from *fing, the last answer (an API call's
 * thread makes its calls one after another: the next answer is near), then
 * set to it.  0, or -1 on a read error.
 */
static int seg_find(struct ga_range_layout *rl, struct ga_pairs *p, uint64_t off, uint64_t n,
		    int k, uint64_t s, int strict, uint64_t *fing, uint64_t *res)
{
	uint64_t f = *fing < n ? *fing : n, lo, hi, step = 1;
	int r = f ? pair_before(rl, p, off + f - 1, k, s, strict) : 1;

	if (r < 0)
		return -1;
	if (r) {
		/* At f or after: probe f, f + 1, f + 3, ... */
		for (lo = f, hi = n; lo < n; step *= 2) {
			uint64_t i = lo + step - 1 < n ? lo + step - 1 : n - 1;

			if ((r = pair_before(rl, p, off + i, k, s, strict)) < 0)
				return -1;
			if (!r) {
				hi = i;
				break;
			}
			lo = i + 1;
		}
	} else {
		/* Before f: pair f - 1 is not before s; probe back from it. */
		for (lo = 0, hi = f - 1; hi > 0; step *= 2) {
			uint64_t i = hi >= step ? hi - step : 0;

			if ((r = pair_before(rl, p, off + i, k, s, strict)) < 0)
				return -1;
			if (r) {
				lo = i + 1;
				break;
			}
			hi = i;
		}
	}
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if ((r = pair_before(rl, p, off + mid, k, s, strict)) < 0)
			return -1;
		if (r)
			lo = mid + 1;
		else
			hi = mid;
	}
	*fing = *res = lo;
	return 0;
}

int ga_range_layout_crosses_any(struct ga_range_layout *rl, uint32_t proc, uint32_t tid,
				uint64_t s, uint64_t t, int strict)
{
	const uint32_t *v = ga_map_find(&rl->seg_map, proc, tid);
	struct ga_pairs *p[2] = { &rl->by_start, &rl->by_end };
	struct ga_range_seg *g;
	uint64_t lo, n, off, look = 0;
	const uint64_t *a;

	if (!v)
		return 0;
	g = &rl->segs[*v - 1];
	n = g->n;
	off = g->off;
	/*
	 * Pass 0: ranges starting inside (strict: at its start too), by start;
	 * pass 1: ranges ending inside (strict: at its start too), by end.
	 */
	for (int k = 0; k < 2; k++) {
		if (seg_find(rl, p[k], off, n, k, s, strict, &g->fing[k], &lo))
			return 1;
		for (; lo < n; lo++) {
			if (!(a = pairs_at(rl, p[k], off + lo)))
				return 1;
			if (a[k] >= t)
				break;
			if (++look > CROSS_LOOK || (k ? a[0] < s : a[1] > t))
				return 1;
		}
	}
	return 0;
}

int ga_range_layout_index(struct ga_range_layout *rl, struct ga_ranges *rg,
			  int (*row)(void *ctx, const struct ga_ranges_srec *x, uint32_t parent),
			  void *ctx)
{
	struct lsrc q = { .rg = rg };
	const struct ga_ranges_srec *x;
	uint32_t parent;
	int rc = -1;

	if (lsrc_begin(rl, &q))
		goto out;
	while ((x = lsrc_next(rl, &q))) {
		if (ix_add(rl, rg, &x->r, x->seq, &parent))
			goto out;
		if (row(ctx, x, parent)) {
			layout_err(rl, "NVTX ranges", "not written");
			goto out;
		}
	}
	if (rl->err[0] || ix_done(rl, rg))
		goto out;
	rc = 0;
out:
	return lsrc_end(rl, &q, rc);
}

uint32_t ga_range_layout_innermost(struct ga_range_layout *rl, uint32_t proc, uint32_t tid,
				   uint64_t t)
{
	const uint32_t *v = ga_map_find(&rl->ix.seg_map, proc, tid);
	struct ga_range_seg *g;
	const uint64_t *a;
	uint64_t lo;
	uint32_t c;

	if (!v)
		return GA_RANGES_NONE;
	g = &rl->ix.segs[*v - 1];
	/* The first range starting after t; the one before it, and its chain. */
	if (seg_find(rl, &rl->ix.p, g->off, g->n, 0, t, 0, &g->fing[0], &lo) || !lo)
		return GA_RANGES_NONE;
	for (c = (uint32_t)(g->off + lo - 1); c != GA_RANGES_NONE; c = (uint32_t)a[2]) {
		if (!(a = pairs_at(rl, &rl->ix.p, c)))
			return GA_RANGES_NONE;
		if (a[1] > t)
			return c;
		/* A parent comes before its child: anything else is no chain (a damaged file). */
		if ((uint32_t)a[2] >= c && (uint32_t)a[2] != GA_RANGES_NONE)
			return GA_RANGES_NONE;
	}
	return GA_RANGES_NONE;
}

static uint32_t serve_innermost(void *ctx, uint32_t proc, uint32_t tid, uint64_t t)
{
	return ga_range_layout_innermost(ctx, proc, tid, t);
}

static int serve_range(void *ctx, uint32_t i, uint64_t *start, uint64_t *end, uint32_t *parent,
		       uint32_t *key)
{
	struct ga_range_layout *rl = ctx;
	const uint64_t *a = i < rl->ix.p.n ? pairs_at(rl, &rl->ix.p, i) : NULL;

	if (!a)
		return -1;
	*start = a[0];
	*end = a[1];
	*parent = (uint32_t)a[2];
	*key = (uint32_t)(a[2] >> 32);
	return 0;
}

void ga_range_layout_serve(struct ga_range_layout *rl, struct ga_ranges *rg,
			   int (*ready)(void *ready_ctx), void *ready_ctx)
{
	rg->ix.ctx = rl;
	rg->ix.ready = ready;
	rg->ix.ready_ctx = ready_ctx;
	rg->ix.innermost = serve_innermost;
	rg->ix.range = serve_range;
}

const struct ga_ranges_srec *ga_range_layout_next(struct ga_range_layout *rl)
{
	const struct ga_ranges_srec *r;

	if (!rl->out.rsize)
		return NULL;
	if (!rl->out_done) {
		rl->out_done = 1;
		if (ga_xsort_done(&rl->out)) {
			layout_err(rl, "NVTX ranges sorted", rl->out.err);
			return NULL;
		}
	}
	if (!(r = ga_xsort_next(&rl->out)) && rl->out.err[0])
		layout_err(rl, "NVTX ranges read back", rl->out.err);
	return r;
}

const struct ga_ranges_srec *ga_range_layout_next_async(struct ga_range_layout *rl)
{
	const struct ga_ranges_srec *r;

	if (!rl->async_done) {
		if (!rl->async.rsize)
			return NULL;
		rl->async_done = 1;
		rl->ngrp = rl->igrp = 0;
		rl->has_held = 0;
		/* By start (stable: in range order), then by process. */
		if (ga_xsort_done(&rl->async)) {
			layout_err(rl, "NVTX ranges sorted", rl->async.err);
			return NULL;
		}
		ga_xsort_init(&rl->async2, sizeof(*r), GA_RANGES_SPILL_RUN);
		while ((r = ga_xsort_next(&rl->async))) {
			struct ga_ranges_srec *x = ga_xsort_slot(&rl->async2);

			if (!x) {
				layout_err(rl, "NVTX ranges sorted", rl->async2.err);
				return NULL;
			}
			*x = *r;
			x->key = r->r.proc;
		}
		if (rl->async.err[0] || ga_xsort_done(&rl->async2)) {
			layout_err(rl, "NVTX ranges sorted",
				   rl->async.err[0] ? rl->async.err : rl->async2.err);
			return NULL;
		}
		ga_xsort_free(&rl->async);
	}
	return grouped_next(rl, &rl->async2, cmp_srec_async, same_proc_start);
}

void ga_range_layout_free(struct ga_range_layout *rl)
{
	ga_xsort_free(&rl->out);
	ga_xsort_free(&rl->async);
	ga_xsort_free(&rl->async2);
	free(rl->grp);
	pairs_free(&rl->by_start);
	pairs_free(&rl->by_end);
	pairs_free(&rl->ix.p);
	free(rl->ix.segs);
	ga_map_free(&rl->ix.seg_map);
	free(rl->ix.open);
	free(rl->segs);
	ga_map_free(&rl->seg_map);
	free(rl->tracks);
	memset(rl, 0, sizeof(*rl));
}

void ga_range_track_name(const struct ga_model *m, const struct ga_range_track *t, char *name,
			 size_t size)
{
	if (t->domain)
		snprintf(name, size, "NVTX %.100s [tid %u]%s", ga_model_str(m, t->domain), t->thread,
			 t->overlapping ? " (overlapping)" : "");
	else
		snprintf(name, size, "tid %u (overlapping)", t->thread);
}

int ga_pids_for(struct ga_pids *p, uint32_t pid, uint32_t *out)
{
	uint32_t *next = NULL, k, cand = pid;
	int r;

	/* Each pid's next k and the counter are kept: n processes of one pid cost O(n) lookups. */
	for (;;) {
		if (!ga_map_find(&p->map, 0, cand))
			break;
		if (!next) {
			r = ga_map_insert(&p->map, 1, pid, &next);
			if (r < 0)
				return -1;
			if (r == 1)
				*next = 1;
		}
		k = *next;
		if (k < 1024) {
			*next = k + 1;
			cand = pid + (k << 22);
		} else {
			cand = ++p->spare;   /* from 1: pid 0 is no process */
		}
	}
	r = ga_map_insert(&p->map, 0, cand, &next);
	if (r < 0)
		return -1;
	*out = cand;
	return 0;
}

void ga_pids_free(struct ga_pids *p)
{
	ga_map_free(&p->map);
	memset(p, 0, sizeof(*p));
}

int ga_proc_pids_see(struct ga_proc_pids *pp, uint32_t proc, uint32_t own_pid, uint32_t *out)
{
	if (proc < pp->cap && pp->seen[proc]) {
		*out = pp->pid[proc];
		return 0;
	}
	if (proc >= pp->cap) {
		size_t old = pp->cap;
		uint32_t *np;

		if (ga_util_grow(&pp->seen, &pp->cap, (size_t)proc + 1, 1))
			return -1;
		memset(pp->seen + old, 0, pp->cap - old);
		np = realloc(pp->pid, pp->cap * sizeof(*np));
		if (!np)
			return -1;
		pp->pid = np;
	}
	if (ga_pids_for(&pp->pids, own_pid, out))
		return -1;
	pp->seen[proc] = 1;
	pp->pid[proc] = *out;
	return 1;
}

void ga_proc_pids_free(struct ga_proc_pids *pp)
{
	free(pp->seen);
	free(pp->pid);
	ga_pids_free(&pp->pids);
	memset(pp, 0, sizeof(*pp));
}

int ga_track_proc_name(const struct ga_model *m, const struct ga_proc *p, struct ga_buf *b)
{
	int rc = 0;

	if (p->rank != GA_NO_RANK)
		rc |= ga_buf_printf(b, "rank %u: ", p->rank);
	if (p->cmdline)
		rc |= ga_buf_printf(b, "%.200s [%u]", ga_model_str(m, p->cmdline), p->pid);
	else
		rc |= ga_buf_printf(b, "pid %u", p->pid);
	if (p->host)
		rc |= ga_buf_printf(b, " on %s", ga_model_str(m, p->host));
	return rc;
}
