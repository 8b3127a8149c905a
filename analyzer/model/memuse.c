/*
 * Memory in use per device (see memuse.h): the observer that keeps each
 * device's allocations and frees as they are read, and the replay in time
 * order that gives the bytes in use, the peak and the largest allocations.
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
	if (!d || ga_util_grow(&d->ev, &d->capev, d->nev + 1, sizeof(*d->ev)))
		return -1;
	e = &d->ev[d->nev];
	memset(e, 0, sizeof(*e));
	e->t = r->timestamp;
	e->address = r->address;
	e->bytes = r->bytes;
	e->seq = d->nev++;
	e->correlation = r->correlation;
	e->op = r->operation;
	e->kind = r->mem_kind;
	e->flags = r->flags;
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

	if (rec->type == GP_REC_MEMORY && on_memory(mu, proc, (const void *)rec))
		return -1;
	return mu->next.rec ? mu->next.rec(mu->next.ctx, m, proc, rec) : 0;
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_memuse *mu = ctx;

	return mu->next.act ? mu->next.act(mu->next.ctx, m, a) : 0;
}

void ga_memuse_bind(struct ga_memuse *mu, struct ga_model *m)
{
	mu->next = m->obs;
	m->obs.ctx = mu;
	m->obs.rec = obs_rec;
	m->obs.act = obs_act;
}

static int cmp_event(const void *pa, const void *pb)
{
	const struct ga_memuse_event *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
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

/* Replays d's events in time order.  0, or -1 out of memory. */
static int replay(struct ga_memuse_dev *d)
{
	struct ga_map live = { 0 };          /* address -> index into open + 1 */
	struct ga_memuse_alloc *open = NULL; /* allocations, by event order */
	size_t nopen = 0, capopen = 0, i;
	uint64_t in_use = 0;
	int sorted = 1;

	for (i = 1; i < d->nev && sorted; i++)
		sorted = cmp_event(&d->ev[i - 1], &d->ev[i]) <= 0;
	if (!sorted)
		qsort(d->ev, d->nev, sizeof(*d->ev), cmp_event);
	for (i = 0; i < d->nev; i++) {
		struct ga_memuse_event *e = &d->ev[i];
		uint32_t *slot;

		if (e->op == GP_MEM_ALLOC) {
			struct ga_memuse_alloc *a;

			if (ga_map_insert(&live, e->address, 0, &slot) < 0)
				goto oom;
			if (*slot) {
				/* The address is reused: its free was not traced. */
				a = &open[*slot - 1];
				in_use -= a->bytes;
				a->freed = 1;
				a->free_ns = e->t;
				top_add(d, a);
			}
			if (ga_util_grow(&open, &capopen, nopen + 1, sizeof(*open)))
				goto oom;
			a = &open[nopen];
			memset(a, 0, sizeof(*a));
			a->address = e->address;
			a->bytes = e->bytes;
			a->alloc_ns = e->t;
			a->correlation = e->correlation;
			a->kind = e->kind;
			a->flags = e->flags;
			*slot = (uint32_t)++nopen;
			in_use += e->bytes;
			if (in_use > d->peak) {
				d->peak = in_use;
				d->peak_ns = e->t;
			}
		} else {
			slot = ga_map_find(&live, e->address, 0);
			if (!slot) {
				d->unmatched_frees++;
			} else {
				struct ga_memuse_alloc *a = &open[*slot - 1];

				in_use -= a->bytes;
				a->freed = 1;
				a->free_ns = e->t;
				top_add(d, a);
				ga_map_remove(&live, e->address, 0);
			}
		}
		e->in_use = in_use;
	}
	d->final = in_use;
	for (i = 0; i < live.cap; i++)
		if (live.e[i].used) {
			top_add(d, &open[live.e[i].val - 1]);
			d->live++;
		}
	ga_map_free(&live);
	free(open);
	return 0;
oom:
	ga_map_free(&live);
	free(open);
	return -1;
}

int ga_memuse_finish(struct ga_memuse *mu, struct ga_model *m)
{
	size_t i, j;

	if (mu->ndevs > 1)
		qsort(mu->devs, mu->ndevs, sizeof(*mu->devs), cmp_dev);
	ga_map_free(&mu->map);
	for (i = 0; i < mu->ndevs; i++) {
		struct ga_memuse_dev *d = &mu->devs[i];
		char buf[32];

		if (replay(d))
			return -1;
		/* The device summary's name of it, where the model has the device. */
		for (j = 0; j < m->ndevrows; j++)
			if (m->devrows[j].proc == d->proc && m->devrows[j].id == d->device)
				break;
		if (j < m->ndevrows) {
			d->label = m->devrows[j].label;
		} else {
			snprintf(buf, sizeof(buf), "cuda:%u", d->device);
			d->label = ga_strtab_intern(&m->strs, buf, strlen(buf));
			if (d->label == GA_STR_NOMEM)
				return -1;
		}
	}
	return 0;
}

void ga_memuse_free(struct ga_memuse *mu)
{
	for (size_t i = 0; i < mu->ndevs; i++)
		free(mu->devs[i].ev);
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
