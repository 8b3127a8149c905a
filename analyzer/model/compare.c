/*
 * Two analyses compared (see compare.h).  Runs offline only.
 */
#include "model/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ga_diff_kind_name(enum ga_diff_kind k)
{
	static const char *const names[GA_DIFF_KIND_COUNT] = {
		[GA_DIFF_KERNEL] = "kernel", [GA_DIFF_MEMORY] = "memory",
		[GA_DIFF_MEMUSE] = "memory_usage", [GA_DIFF_NVTX] = "nvtx", [GA_DIFF_API] = "api",
		[GA_DIFF_FINDING] = "finding",
	};

	return (unsigned)k < GA_DIFF_KIND_COUNT ? names[k] : "?";
}

int ga_diff_kind_bytes(enum ga_diff_kind k)
{
	return k == GA_DIFF_MEMUSE;
}

/* FNV-1a of the kind and name, for the matching map. */
static uint64_t key_of(enum ga_diff_kind k, const char *s)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)k;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct builder {
	struct ga_diff *d;
	struct ga_map map;         /* (hash, collision index) -> item index */
	struct ga_map gmap;        /* (hash of device and metric, collision index) -> gpu index */
};

/*
 * Adds count and time to side `side` of item (kind, name).  A name of the
 * analyses' string tables (they outlive the diff) is not copied: kernel
 * names may be long and many; copy says name is the caller's buffer.
 */
static int add_name(struct builder *b, int side, enum ga_diff_kind kind, const char *name,
		    int copy, uint64_t count, uint64_t ns)
{
	struct ga_diff *d = b->d;
	uint64_t h = key_of(kind, name);
	struct ga_diff_item *it;
	uint32_t *slot;
	uint64_t i;
	int r;

	/* Equal hashes of different names take the next collision index. */
	for (i = 0;; i++) {
		r = ga_map_insert(&b->map, h, i, &slot);
		if (r < 0)
			return -1;
		if (r == 1)
			break;
		it = &d->v[*slot];
		if (it->kind == kind && !strcmp(it->name, name))
			goto found;
	}
	if (ga_util_grow(&d->v, &d->cap, d->n + 1, sizeof(*d->v))) {
		ga_map_remove(&b->map, h, i);
		return -1;
	}
	it = &d->v[d->n];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->own_name = copy;
	it->name = copy ? strdup(name) : (char *)name;
	if (!it->name) {
		ga_map_remove(&b->map, h, i);
		return -1;
	}
	*slot = (uint32_t)d->n++;
found:
	it->count[side] += count;
	it->ns[side] += ns;
	it->present[side] = 1;
	return 0;
}

static int add(struct builder *b, int side, enum ga_diff_kind kind, const char *name,
	       uint64_t count, uint64_t ns)
{
	return add_name(b, side, kind, name, 0, count, ns);
}

/* Adds a sampled metric's value x ns and ns to side `side` of (device, metric). */
static int add_gpu(struct builder *b, int side, const char *device, const char *metric,
		   uint64_t samples, double wsum, double w)
{
	struct ga_diff *d = b->d;
	uint64_t h = key_of(GA_DIFF_KIND_COUNT, device) * 31 ^ key_of(GA_DIFF_KIND_COUNT, metric);
	struct ga_diff_gpu *x;
	uint32_t *slot;
	uint64_t i;
	int r;

	for (i = 0;; i++) {
		r = ga_map_insert(&b->gmap, h, i, &slot);
		if (r < 0)
			return -1;
		if (r == 1)
			break;
		x = &d->gpu[*slot];
		if (!strcmp(x->device, device) && !strcmp(x->metric, metric))
			goto found;
	}
	if (ga_util_grow(&d->gpu, &d->capgpu, d->ngpu + 1, sizeof(*d->gpu))) {
		ga_map_remove(&b->gmap, h, i);
		return -1;
	}
	x = &d->gpu[d->ngpu];
	memset(x, 0, sizeof(*x));
	x->device = device;
	x->metric = metric;
	*slot = (uint32_t)d->ngpu++;
found:
	x->samples[side] += samples;
	x->wsum[side] += wsum;
	x->w[side] += w;
	x->present[side] = 1;
	return 0;
}

/* The GPU over time: each device's metrics, and the time throttled. */
static int add_gpu_side(struct builder *b, int side, struct ga_analysis *an)
{
	const struct ga_gpusamples *g = &an->gs;

	for (size_t i = 0; i < g->nseries; i++) {
		const struct ga_gs_series *s = &g->series[i];
		const char *dev = ga_model_str(&an->m, s->label);

		for (uint32_t k = 0; k < s->n; k++) {
			const struct ga_gs_metric *mt = &s->m[k];

			if ((int)k == s->reasons_at || !mt->samples)
				continue;
			/* Samples of no width count plainly, as in the report. */
			if (add_gpu(b, side, dev, ga_model_str(&an->m, mt->name), mt->samples,
				    mt->w > 0 ? mt->wsum : mt->avg, mt->w > 0 ? mt->w : 1))
				return -1;
		}
		if (s->reasons_at >= 0 && s->sampled_ns &&
		    add_gpu(b, side, dev, "nvml.throttled_pct", s->m[s->reasons_at].samples,
			    100.0 * (double)s->throttled_ns, (double)s->sampled_ns))
			return -1;
	}
	return 0;
}

double ga_diff_gpu_avg(const struct ga_diff_gpu *x, int side)
{
	return x->present[side] && x->w[side] > 0 ? x->wsum[side] / x->w[side] : NAN;
}

double ga_diff_gpu_change_pct(const struct ga_diff_gpu *x)
{
	double a = ga_diff_gpu_avg(x, 0), b = ga_diff_gpu_avg(x, 1);

	return isnan(a) || isnan(b) || a == 0 ? NAN : (b - a) * 100.0 / fabs(a);
}

static int cmp_gpu(const void *pa, const void *pb)
{
	const struct ga_diff_gpu *a = pa, *b = pb;
	int c = strcmp(a->device, b->device);

	return c ? c : strcmp(a->metric, b->metric);
}

static int add_side(struct builder *b, int side, struct ga_analysis *an, int summaries)
{
	struct ga_model *m = &an->m;
	struct ga_ranges *rg = &an->rg;
	char name[64], kb[16];
	size_t i;

	for (i = 0; i < m->nkstats; i++) {
		const struct ga_kstat *k = &m->kstats[i];

		if (k->count && add(b, side, GA_DIFF_KERNEL, ga_strtab_full(&m->strs, k->name),
				    k->count, k->total))
			return -1;
	}
	for (i = 0; i < GA_COPY_KIND_MAX; i++) {
		const struct ga_memstat *s = &m->copy[i];

		if (!s->count)
			continue;
		snprintf(name, sizeof(name), "memcpy %s", ga_model_copy_kind((unsigned)i, kb, sizeof(kb)));
		if (add_name(b, side, GA_DIFF_MEMORY, name, 1, s->count, s->total))
			return -1;
	}
	/* Memsets by the memory kind they set, as the report's memory table. */
	for (i = 0; i < m->nmemops; i++) {
		const struct ga_memop *o = &m->memops[i];

		if (o->kind != GA_MEMOP_MEMSET || !o->count)
			continue;
		snprintf(name, sizeof(name), "memset %s", ga_model_mem_kind(o->dst));
		if (add_name(b, side, GA_DIFF_MEMORY, name, 1, o->count, o->total))
			return -1;
	}
	/* Peak memory in use per device (traces with allocation records). */
	for (i = 0; i < an->mu.ndevs && !summaries; i++) {
		const struct ga_memuse_dev *u = &an->mu.devs[i];

		if (add(b, side, GA_DIFF_MEMUSE, ga_model_str(m, u->label), u->allocs, u->peak))
			return -1;
	}
	for (i = 0; i < rg->nkeys && !summaries; i++) {
		const struct ga_ranges_key *k = &rg->keys[i];

		if (k->count && add(b, side, GA_DIFF_NVTX, ga_model_str(m, k->label), k->count,
				    k->cpu_total))
			return -1;
	}
	for (i = 0; i < m->nastats; i++) {
		const struct ga_astat *a = &m->astats[i];

		if (a->count && add(b, side, GA_DIFF_API, ga_model_str(m, a->name), a->count, a->total))
			return -1;
	}
	if (summaries)
		return 0;
	/* Findings by rule and subject: new, gone, or grown in time at stake. */
	if (ga_analysis_findings(an))
		return -1;
	for (i = 0; i < an->fd.nf; i++) {
		const struct ga_finding *f = &an->fd.f[i];
		char key[160];
		uint32_t id;

		snprintf(key, sizeof(key), "%s %s", ga_rules[f->rule].id, f->subject);
		id = ga_strtab_intern(&m->strs, key, strlen(key));
		if (id == GA_STR_NOMEM ||
		    add(b, side, GA_DIFF_FINDING, ga_model_str(m, id), 1, f->stake_ns))
			return -1;
	}
	return add_gpu_side(b, side, an);
}

int64_t ga_diff_delta(const struct ga_diff_item *it)
{
	return (int64_t)(it->ns[1] - it->ns[0]);
}

double ga_diff_change_pct(const struct ga_diff_item *it)
{
	if (!it->ns[0])
		return it->ns[1] ? INFINITY : 0.0;
	return ((double)it->ns[1] - (double)it->ns[0]) * 100.0 / (double)it->ns[0];
}

double ga_diff_ratio(const struct ga_diff_item *it)
{
	if (!it->ns[0])
		return it->ns[1] ? INFINITY : 1.0;
	return (double)it->ns[1] / (double)it->ns[0];
}

int ga_diff_shown(const struct ga_diff_item *it, double pct)
{
	return pct <= 0 || fabs(ga_diff_change_pct(it)) >= pct;
}

size_t ga_diff_grown(const struct ga_diff *d, double pct)
{
	size_t i, n = 0;

	for (i = 0; i < d->n; i++)
		if (ga_diff_change_pct(&d->v[i]) > pct)
			n++;
	return n;
}

static uint64_t absdelta(const struct ga_diff_item *it)
{
	return it->ns[1] > it->ns[0] ? it->ns[1] - it->ns[0] : it->ns[0] - it->ns[1];
}

/*
 * GPU work first (kernels, then memory operations and the peak of memory
 * in use), then NVTX ranges and
 * API functions: host-side times (a device's first cudaSetDevice, say)
 * vary by more between runs than the GPU work a change is about.  Within
 * a kind, the biggest absolute change first.
 */
static int cmp_item(const void *pa, const void *pb)
{
	const struct ga_diff_item *a = pa, *b = pb;
	uint64_t x = absdelta(a), y = absdelta(b);

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(a->name, b->name);
}

int ga_diff_build(struct ga_diff *d, struct ga_analysis *base, struct ga_analysis *nw)
{
	struct builder b = { d, { 0 }, { 0 } };

	memset(d, 0, sizeof(*d));
	d->summaries = base->m.sum_parts || nw->m.sum_parts;
	if (add_side(&b, 0, base, d->summaries) || add_side(&b, 1, nw, d->summaries)) {
		ga_map_free(&b.map);
		ga_map_free(&b.gmap);
		ga_diff_free(d);
		return -1;
	}
	ga_map_free(&b.map);
	ga_map_free(&b.gmap);
	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), cmp_item);
	if (d->ngpu > 1)
		qsort(d->gpu, d->ngpu, sizeof(*d->gpu), cmp_gpu);
	return 0;
}

void ga_diff_free(struct ga_diff *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].own_name)
			free(d->v[i].name);
	free(d->v);
	free(d->gpu);
	memset(d, 0, sizeof(*d));
}
