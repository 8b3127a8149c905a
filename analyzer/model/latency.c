/*
 * Launch latency per kernel (see latency.h).  Runs offline only.
 */
#include "model/latency.h"

#include <stdlib.h>
#include <string.h>

void ga_latency_init(struct ga_latency *l, const struct ga_ranges *rg)
{
	memset(l, 0, sizeof(*l));
	l->rg = rg;
}

void ga_latency_free(struct ga_latency *l)
{
	size_t i;

	for (i = 0; i < l->nk; i++)
		free(l->k[i].v);
	free(l->k);
	ga_map_free(&l->kmap);
	memset(l, 0, sizeof(*l));
}

static int count(struct ga_latency *l, const struct ga_act *a, uint64_t lat)
{
	struct ga_latency_k *k;
	uint32_t *slot;
	int r = ga_map_insert(&l->kmap, a->name, 0, &slot);

	if (r < 0)
		return -1;
	if (r == 1) {
		if (ga_util_grow(&l->k, &l->capk, l->nk + 1, sizeof(*l->k))) {
			ga_map_remove(&l->kmap, a->name, 0);
			return -1;
		}
		k = &l->k[l->nk];
		memset(k, 0, sizeof(*k));
		k->name = a->name;
		k->min = UINT64_MAX;
		*slot = (uint32_t)++l->nk;
	}
	k = &l->k[*slot - 1];
	if (ga_util_grow(&k->v, &k->capv, k->nv + 1, sizeof(*k->v)))
		return -1;
	k->v[k->nv++] = lat;
	k->count++;
	k->total += lat;
	ga_welford_add(&k->var, k->count, lat);
	if (lat < k->min)
		k->min = lat;
	if (lat > k->max)
		k->max = lat;
	return 0;
}

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_latency *l = ctx;

	return l->next.rec ? l->next.rec(l->next.ctx, m, proc, rec) : 0;
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_latency *l = ctx;
	uint64_t t;
	uint32_t tid;

	if (a->kind == GA_ACT_KERNEL) {
		/* A graph's kernels were launched by the graph launch: not counted here. */
		if (!a->graph_id && ga_ranges_launch(l->rg, a, &tid, &t) && a->start >= t) {
			if (count(l, a, a->start - t)) {
				l->oom = 1;
				return -1;
			}
		} else if (!a->graph_id) {
			l->unmatched++;
		}
	}
	return l->next.act ? l->next.act(l->next.ctx, m, a) : 0;
}

void ga_latency_bind(struct ga_latency *l, struct ga_model *m)
{
	l->next = m->obs;
	m->obs.ctx = l;
	m->obs.rec = obs_rec;
	m->obs.act = obs_act;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

int ga_latency_finish(struct ga_latency *l)
{
	size_t i;

	for (i = 0; i < l->nk; i++) {
		struct ga_latency_k *k = &l->k[i];

		qsort(k->v, k->nv, sizeof(*k->v), cmp_u64);
		k->med = k->nv % 2 ? k->v[k->nv / 2] : (k->v[k->nv / 2 - 1] + k->v[k->nv / 2]) / 2;
		k->stddev = ga_welford_stddev(&k->var, k->count);
		/* The values are no longer needed. */
		free(k->v);
		k->v = NULL;
		k->nv = k->capv = 0;
	}
	return 0;
}

static int cmp_total(const void *pa, const void *pb, void *ctx)
{
	const struct ga_latency *l = ctx;
	const struct ga_latency_k *a = &l->k[*(const uint32_t *)pa];
	const struct ga_latency_k *b = &l->k[*(const uint32_t *)pb];

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return a->name < b->name ? -1 : a->name > b->name;
}

uint32_t *ga_latency_order(const struct ga_latency *l)
{
	uint32_t *o = malloc((l->nk ? l->nk : 1) * sizeof(*o));
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < l->nk; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, l->nk, sizeof(*o), cmp_total, (void *)l);
	return o;
}
