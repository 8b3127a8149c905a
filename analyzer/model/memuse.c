/*
 * Memory in use per device (see memuse.h): the observer that sorts the
 * devices' allocations and frees as they are read (base/xsort.h), and the
 * replay in time order that gives the bytes in use, the peak, the largest
 * allocations and the counter samples.
 * Runs offline only.
 */
#include "model/memuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUpti_ActivityMemoryKind values of host memory. */
#define KIND_PAGEABLE 1
#define KIND_PINNED 2

void ga_memuse_init(struct ga_memuse *mu)
{
	memset(mu, 0, sizeof(*mu));
}

static struct ga_memuse_dev *dev_get(struct ga_memuse *mu, uint32_t proc, uint32_t device)
{
	uint32_t *slot;
	int r = ga_map_insert(&mu->map, proc, device, &slot);
	struct ga_memuse_dev *d;

	if (r < 0)
		return NULL;
	if (r == 0)
		return &mu->devs[*slot - 1];
	if (ga_util_grow(&mu->devs, &mu->capdevs, mu->ndevs + 1, sizeof(*mu->devs))) {
		ga_map_remove(&mu->map, proc, device);
		return NULL;
	}
	d = &mu->devs[mu->ndevs];
	memset(d, 0, sizeof(*d));
	d->proc = proc;
	d->device = device;
	d->first = (uint32_t)mu->ndevs;
	*slot = (uint32_t)++mu->ndevs;
	return d;
}

static int on_memory(struct ga_memuse *mu, uint32_t proc, const struct gp_rec_memory *r)
{
	struct ga_memuse_dev *d;
	struct ga_memuse_event *e;

	mu->records++;
	if (r->operation != GP_MEM_ALLOC && r->operation != GP_MEM_FREE)
		return 0;
	if (r->mem_kind == KIND_PAGEABLE || r->mem_kind == KIND_PINNED) {
		mu->host_records++;
		return 0;
	}
	d = dev_get(mu, proc, r->device);
	if (!d)
		return -1;
	if (!mu->ev.rsize)
		ga_xsort_init(&mu->ev, sizeof(*e), mu->run ? mu->run : GA_MEMUSE_RUN);
	e = ga_xsort_slot(&mu->ev);
	if (!e) {
		/* The model says only "out of memory" of an observer's failure. */
		fprintf(stderr, "gpuprof: memory in use: %s\n", mu->ev.err);
		return -1;
	}
	memset(e, 0, sizeof(*e));
	e->t = r->timestamp;
	e->address = r->address;
	e->bytes = r->bytes;
	e->correlation = r->correlation;
	e->dev = d->first;
	e->op = r->operation;
	e->kind = r->mem_kind;
	e->flags = r->flags;
	d->events++;
	if (r->operation == GP_MEM_ALLOC) {
		d->allocs++;
		d->alloc_bytes += r->bytes;
	} else {
		d->frees++;
	}
	return 0;
}

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_memuse *mu = ctx;

	(void)m;
	return rec->type == GP_REC_MEMORY && on_memory(mu, proc, (const void *)rec) ? -1 : 0;
}

int ga_memuse_bind(struct ga_memuse *mu, struct ga_model *m)
{
	return ga_model_observe(m, mu, obs_rec, 1ull << GP_REC_MEMORY, NULL);
}

static int cmp_dev(const void *pa, const void *pb)
{
	const struct ga_memuse_dev *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

/* Larger first; equal sizes by allocation time, then address. */
static int bigger(const struct ga_memuse_alloc *a, const struct ga_memuse_alloc *b)
{
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes;
	if (a->alloc_ns != b->alloc_ns)
		return a->alloc_ns < b->alloc_ns;
	return a->address < b->address;
}

/* Keep a among the GA_MEMUSE_TOP largest of d. */
static void top_add(struct ga_memuse_dev *d, const struct ga_memuse_alloc *a)
{
	size_t i = d->ntop;

	if (i == GA_MEMUSE_TOP) {
		if (!bigger(a, &d->top[GA_MEMUSE_TOP - 1]))
			return;
		i--;
	} else {
		d->ntop++;
	}
	while (i > 0 && bigger(a, &d->top[i - 1])) {
		d->top[i] = d->top[i - 1];
		i--;
	}
	d->top[i] = *a;
}

/*
 * A device's state while the events are replayed: its allocations live at
 * that point (open, by the live map; the slots of freed ones reused), the
 * bytes in use, and its counter sample not yet known to be the last at its
 * time.
 */
struct replay {
	struct ga_map live;          /* address -> index into open + 1 */
	struct ga_memuse_alloc *open;
	size_t nopen, capopen;
	size_t reuse;                /* a freed slot of open + 1, chained through its address */
	uint64_t in_use;
	uint64_t pend_t, pend_in_use, last_in_use; /* the sample held back, the last written */
	int pend, wrote;
};

/* The sample held back of devs[dev], written where it changed the counter.  0, or -1 (err). */
static int sample_flush(struct ga_memuse *mu, struct replay *r, uint32_t dev)
{
	struct ga_memuse_sample *s;

	if (!r->pend)
		return 0;
	r->pend = 0;
	if (r->wrote && r->pend_in_use == r->last_in_use)
		return 0;
	if (!mu->smp.rsize)
		ga_xsort_init(&mu->smp, sizeof(*s), mu->run ? mu->run : GA_MEMUSE_RUN);
	if (!(s = ga_xsort_slot(&mu->smp))) {
		snprintf(mu->err, sizeof(mu->err), "memory in use: the counter samples: %s",
			 mu->smp.err);
		return -1;
	}
	s->dev = dev;
	s->t = r->pend_t;
	s->in_use = r->pend_in_use;
	r->wrote = 1;
	r->last_in_use = r->pend_in_use;
	return 0;
}

/* An allocation ends (freed, or its address reused): no longer in use. */
static void retire(struct ga_memuse_dev *d, struct replay *r, struct ga_memuse_alloc *a, uint64_t t)
{
	r->in_use -= a->bytes;
	a->freed = 1;
	a->free_ns = t;
	top_add(d, a);
}

/* Event e of devs[dev] in time order.  0, or -1 (err). */
static int replay_one(struct ga_memuse *mu, struct replay *r, uint32_t dev,
		      const struct ga_memuse_event *e)
{
	struct ga_memuse_dev *d = &mu->devs[dev];
	uint32_t *slot;

	if (e->op == GP_MEM_ALLOC) {
		struct ga_memuse_alloc *a;

		if (ga_map_insert(&r->live, e->address, 0, &slot) < 0)
			goto oom;
		if (*slot) {
			/* The address is reused: its free was not traced.  Its slot is the new one's. */
			a = &r->open[*slot - 1];
			retire(d, r, a, e->t);
		} else if (r->reuse) {
			a = &r->open[r->reuse - 1];
			r->reuse = (size_t)a->address;
			*slot = (uint32_t)(a - r->open) + 1;
		} else {
			if (r->nopen == UINT32_MAX ||
			    ga_util_grow(&r->open, &r->capopen, r->nopen + 1, sizeof(*r->open))) {
				ga_map_remove(&r->live, e->address, 0);
				goto oom;
			}
			a = &r->open[r->nopen];
			*slot = (uint32_t)++r->nopen;
		}
		memset(a, 0, sizeof(*a));
		a->address = e->address;
		a->bytes = e->bytes;
		a->alloc_ns = e->t;
		a->correlation = e->correlation;
		a->kind = e->kind;
		a->flags = e->flags;
		r->in_use += e->bytes;
		if (r->in_use > d->peak) {
			d->peak = r->in_use;
			d->peak_ns = e->t;
		}
	} else {
		slot = ga_map_find(&r->live, e->address, 0);
		if (!slot) {
			d->unmatched_frees++;
		} else {
			size_t i = *slot - 1;

			retire(d, r, &r->open[i], e->t);
			r->open[i].address = r->reuse;
			r->reuse = i + 1;
			ga_map_remove(&r->live, e->address, 0);
		}
	}
	if (mu->samples) {
		/* The last event at a time gives its sample. */
		if (r->pend && r->pend_t != e->t && sample_flush(mu, r, dev))
			return -1;
		r->pend = 1;
		r->pend_t = e->t;
		r->pend_in_use = r->in_use;
	}
	return 0;
oom:
	snprintf(mu->err, sizeof(mu->err), "memory in use: out of memory");
	return -1;
}

/*
 * Every device's events in time order (one sort for all: each device's
 * own are in order within it), from rank[first index] = index after the
 * devices were sorted.  0, or -1 (err).
 */
static int replay(struct ga_memuse *mu, const uint32_t *rank)
{
	struct replay *st = calloc(mu->ndevs ? mu->ndevs : 1, sizeof(*st));
	const struct ga_memuse_event *e;
	size_t i, j;
	int rc = -1;

	if (!st) {
		snprintf(mu->err, sizeof(mu->err), "memory in use: out of memory");
		return -1;
	}
	if (mu->ev.rsize) {
		if (ga_xsort_done(&mu->ev)) {
			snprintf(mu->err, sizeof(mu->err), "memory in use: %s", mu->ev.err);
			goto out;
		}
		mu->ev_runs = mu->ev.nruns;
		while ((e = ga_xsort_next(&mu->ev)))
			if (replay_one(mu, &st[rank[e->dev]], rank[e->dev], e))
				goto out;
		if (mu->ev.err[0]) {
			snprintf(mu->err, sizeof(mu->err), "memory in use: %s", mu->ev.err);
			goto out;
		}
	}
	for (i = 0; i < mu->ndevs; i++) {
		struct ga_memuse_dev *d = &mu->devs[i];
		struct replay *r = &st[i];

		if (sample_flush(mu, r, (uint32_t)i))
			goto out;
		d->final = r->in_use;
		for (j = 0; j < r->live.cap; j++)
			if (r->live.e[j].used) {
				top_add(d, &r->open[r->live.e[j].val - 1]);
				d->live++;
			}
	}
	if (mu->smp.rsize && ga_xsort_done(&mu->smp)) {
		snprintf(mu->err, sizeof(mu->err), "memory in use: the counter samples: %s",
			 mu->smp.err);
		goto out;
	}
	rc = 0;
out:
	/* The events are read: their memory and temporary file go now. */
	ga_xsort_free(&mu->ev);
	for (i = 0; i < mu->ndevs; i++) {
		ga_map_free(&st[i].live);
		free(st[i].open);
	}
	free(st);
	return rc;
}

int ga_memuse_finish(struct ga_memuse *mu, struct ga_model *m)
{
	uint32_t *rank = NULL;
	size_t i;

	if (mu->ndevs > 1)
		qsort(mu->devs, mu->ndevs, sizeof(*mu->devs), cmp_dev);
	ga_map_free(&mu->map);
	rank = malloc((mu->ndevs ? mu->ndevs : 1) * sizeof(*rank));
	if (!rank) {
		snprintf(mu->err, sizeof(mu->err), "memory in use: out of memory");
		return -1;
	}
	for (i = 0; i < mu->ndevs; i++)
		rank[mu->devs[i].first] = (uint32_t)i;
	if (replay(mu, rank)) {
		free(rank);
		return -1;
	}
	free(rank);
	for (i = 0; i < mu->ndevs; i++) {
		struct ga_memuse_dev *d = &mu->devs[i];

		/* The device summary's name of it, where the model has the device. */
		d->label = ga_model_device_label(m, d->proc, d->device);
		if (d->label == GA_STR_NOMEM) {
			snprintf(mu->err, sizeof(mu->err), "memory in use: out of memory");
			return -1;
		}
	}
	return 0;
}

const struct ga_memuse_sample *ga_memuse_sample_next(struct ga_memuse *mu, uint32_t dev)
{
	const struct ga_memuse_sample *s;

	if (!mu->smp.rsize)
		return NULL;
	for (;;) {
		if (!mu->peek && !(mu->peek = ga_xsort_next(&mu->smp))) {
			if (mu->smp.err[0])
				snprintf(mu->err, sizeof(mu->err), "memory in use: the counter samples: %s",
					 mu->smp.err);
			return NULL;
		}
		if (mu->peek->dev >= dev)
			break;
		mu->peek = NULL;        /* a device skipped */
	}
	if (mu->peek->dev != dev)
		return NULL;
	s = mu->peek;
	mu->peek = NULL;
	return s;
}

void ga_memuse_free(struct ga_memuse *mu)
{
	ga_xsort_free(&mu->ev);
	ga_xsort_free(&mu->smp);
	free(mu->devs);
	ga_map_free(&mu->map);
	memset(mu, 0, sizeof(*mu));
}

static int cmp_ref(const void *pa, const void *pb, void *ctx)
{
	const struct ga_memuse *mu = ctx;
	const struct ga_memuse_ref *a = pa, *b = pb;
	const struct ga_memuse_alloc *x = &mu->devs[a->dev].top[a->i];
	const struct ga_memuse_alloc *y = &mu->devs[b->dev].top[b->i];

	if (bigger(x, y))
		return -1;
	if (bigger(y, x))
		return 1;
	return a->dev < b->dev ? -1 : a->dev > b->dev;
}

struct ga_memuse_ref *ga_memuse_order_largest(const struct ga_memuse *mu, size_t *n)
{
	struct ga_memuse_ref *r;
	size_t k = 0;

	*n = 0;
	for (size_t i = 0; i < mu->ndevs; i++)
		k += mu->devs[i].ntop;
	if (!k)
		return NULL;
	r = malloc(k * sizeof(*r));
	if (!r) {
		*n = SIZE_MAX;
		return NULL;
	}
	k = 0;
	for (size_t i = 0; i < mu->ndevs; i++)
		for (size_t j = 0; j < mu->devs[i].ntop; j++) {
			r[k].dev = (uint32_t)i;
			r[k++].i = (uint32_t)j;
		}
	qsort_r(r, k, sizeof(*r), cmp_ref, (void *)mu);
	*n = k;
	return r;
}

int ga_memuse_any(const struct ga_memuse *mu)
{
	return mu->records > 0;
}
