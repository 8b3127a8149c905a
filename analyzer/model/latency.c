/*
 * Launch latency per kernel (see latency.h).  Runs offline only.
 */
#include "model/latency.h"

#include <stdlib.h>
#include <string.h>


void ga_latency_init(struct ga_latency *l)
{
	memset(l, 0, sizeof(*l));
}

void ga_latency_free(struct ga_latency *l)
{
	for (size_t i = 0; i < l->nk; i++)
		ga_quant_free(&l->k[i].q);
	free(l->k);
	free(l->w);
	free(l->direct);
	ga_map_free(&l->kmap);
	ga_map_free(&l->waiting);
	ga_map_free(&l->is_launch);
	memset(l, 0, sizeof(*l));
}

static int count(struct ga_latency *l, uint32_t name, uint64_t lat)
{
	struct ga_latency_k *k;
	uint32_t *slot, *rc = l->recent_k[name % GA_LAT_RECENT];
	int r;

	/* A recent name's index + 1 (0: the entry is empty). */
	if (rc[1] && rc[0] == name) {
		slot = &rc[1];
		goto counted;
	}
	r = ga_map_insert(&l->kmap, name, 0, &slot);
	if (r < 0)
		return -1;
	if (r == 1) {
		if (ga_util_grow(&l->k, &l->capk, l->nk + 1, sizeof(*l->k))) {
			ga_map_remove(&l->kmap, name, 0);
			return -1;
		}
		k = &l->k[l->nk];
		memset(k, 0, sizeof(*k));
		k->name = name;
		k->min = UINT64_MAX;
		k->q.limit = l->quant_limit;
		*slot = (uint32_t)++l->nk;
	}
	rc[0] = name;
	rc[1] = *slot;
counted:
	k = &l->k[*slot - 1];
	if (ga_quant_add(&k->q, lat))
		return -1;
	k->count++;
	k->total += lat;
	if (lat < k->min)
		k->min = lat;
	if (lat > k->max)
		k->max = lat;
	return 0;
}

/*
 * A launch call at t matched with its kernel, started at start.  A kernel
 * profiled by kernel replay has no GPU start (its start is derived from
 * its launch call's return and the profiler's duration), and one that
 * starts before its call tells that the clocks disagree: neither has a
 * latency, each is counted apart.
 */
static int matched(struct ga_latency *l, uint32_t name, uint64_t t, uint64_t start,
		   int replayed)
{
	if (replayed) {
		l->replayed++;
		return 0;
	}
	if (start < t) {
		l->early++;
		return 0;
	}
	return count(l, name, start - t);
}

/* Correlation ids rise: those waiting at once take consecutive slots. */
static inline uint32_t direct_of(const struct ga_latency *l, uint64_t key)
{
	return (uint32_t)(key ^ (key >> 32) * 0x9e3779b1u) & l->dmask;
}

/* The waiting entry of key: its index + 1, 0 when none waits. */
static inline uint32_t wfind(const struct ga_latency *l, uint64_t key)
{
	uint32_t d;
	const uint32_t *v;

	if (!l->direct)
		return 0;
	d = l->direct[direct_of(l, key)];
	if (d && l->w[d - 1].key == key)
		return d;
	if (!l->waiting.n || !(v = ga_map_find(&l->waiting, key, 0)))
		return 0;
	return *v;
}

/* Wait entry i leaves. */
static void unwait(struct ga_latency *l, uint32_t i)
{
	struct ga_latency_wait *x = &l->w[i];
	uint32_t *d = &l->direct[direct_of(l, x->key)];

	if (*d == i + 1)
		*d = 0;
	else
		ga_map_remove(&l->waiting, x->key, 0);
	l->nwaiting--;
	x->used = 0;
	x->next_free = l->free_head;
	l->free_head = i + 1;
}

/* An entry leaves: a kernel counts, with its call or as unmatched. */
static int leave(struct ga_latency *l, uint32_t i)
{
	struct ga_latency_wait x = l->w[i];

	unwait(l, i);
	if (!x.kernel)
		return 0;
	if (x.call == UINT64_MAX) {
		l->unmatched++;
		return 0;
	}
	return matched(l, x.name, x.call, x.start, x.replayed);
}

/* Lets go of what waited through a whole generation. */
static int next_generation(struct ga_latency *l)
{
	for (size_t i = 0; i < l->nw; i++)
		if (l->w[i].used && l->w[i].gen != l->gen && leave(l, (uint32_t)i))
			return -1;
	l->gen++;
	l->gen_entries = 0;
	return 0;
}

/*
 * The direct-mapped index at n slots, the entries waiting put in it again
 * (those whose slot another holds in the map).  0, or -1 out of memory.
 */
static int direct_make(struct ga_latency *l, uint32_t n)
{
	uint32_t *d = calloc(n, sizeof(*d)), *slot;

	if (!d)
		return -1;
	free(l->direct);
	l->direct = d;
	l->dmask = n - 1;
	ga_map_free(&l->waiting);
	for (size_t i = 0; i < l->nw; i++) {
		uint32_t *e;

		if (!l->w[i].used)
			continue;
		e = &l->direct[direct_of(l, l->w[i].key)];
		if (!*e) {
			*e = (uint32_t)i + 1;
			continue;
		}
		if (ga_map_add_absent(&l->waiting, l->w[i].key, 0, &slot) < 0)
			return -1;
		*slot = (uint32_t)i + 1;
	}
	return 0;
}

/* A new waiting entry for key (not in the map). */
static int wait(struct ga_latency *l, uint64_t key, uint64_t call, uint64_t start,
		uint32_t name, int kernel, int replayed)
{
	struct ga_latency_wait *x;
	uint32_t i, *slot, *d;

	if (++l->gen_entries > GA_LAT_GENERATION && next_generation(l))
		return -1;
	if (!l->direct && direct_make(l, GA_LAT_DIRECT))
		return -1;
	/* Its slot held while half as many wait as there are slots: twice the slots. */
	if (l->direct[direct_of(l, key)] && l->nwaiting >= (l->dmask + 1) / 2 &&
	    l->dmask + 1 < GA_LAT_DIRECT_MAX && direct_make(l, 2 * (l->dmask + 1)))
		return -1;
	if (l->free_head) {
		i = l->free_head - 1;
		l->free_head = l->w[i].next_free;
	} else {
		if (ga_util_grow(&l->w, &l->capw, l->nw + 1, sizeof(*l->w)))
			return -1;
		i = (uint32_t)l->nw++;
	}
	x = &l->w[i];
	x->call = call;
	x->start = start;
	x->key = key;
	x->name = name;
	x->gen = l->gen;
	x->kernel = (uint8_t)kernel;
	x->replayed = (uint8_t)replayed;
	x->used = 1;
	/* Both callers looked key up and found it absent; a generation only removes. */
	d = &l->direct[direct_of(l, key)];
	if (!*d) {
		*d = i + 1;
	} else {
		if (ga_map_add_absent(&l->waiting, key, 0, &slot) < 0) {
			x->used = 0;
			x->next_free = l->free_head;
			l->free_head = i + 1;
			return -1;
		}
		*slot = i + 1;
	}
	if (++l->nwaiting > l->max_waiting)
		l->max_waiting = l->nwaiting;
	return 0;
}

/*
 * 1 when the API function named by strtab id launches a kernel, 3 when it
 * is the runtime's (cudaLaunch*: the outermost call of a launch).
 */
static int launch_call(struct ga_latency *l, struct ga_model *m, uint32_t name, int *err)
{
	uint32_t *slot, *rc = l->recent_launch[name % GA_LAT_RECENT];
	int r;

	if (rc[1] && rc[0] == name)
		return rc[1] == 2 ? 0 : (int)rc[1];
	r = ga_map_insert(&l->is_launch, name, 0, &slot);
	if (r < 0) {
		*err = 1;
		return 0;
	}
	if (r == 1) {
		const char *s = ga_model_str(m, name);

		/* cudaLaunchKernel, cuLaunchKernelEx, ...; not graphs or host functions. */
		*slot = strstr(s, "HostFunc")         ? 2 :
			!strncmp(s, "cudaLaunch", 10) ? 3 :
			!strncmp(s, "cuLaunch", 8)    ? 1 :
							2;
	}
	rc[0] = name;
	rc[1] = *slot;
	return *slot == 2 ? 0 : (int)*slot;
}

static int on_api(struct ga_latency *l, struct ga_model *m, uint32_t proc,
		  const struct gp_rec_api *r)
{
	uint64_t key = (uint64_t)proc << 32 | r->correlation;
	uint32_t name = ga_model_fstr(m, r->name), v;
	int err = 0, launch;

	if (!name || !r->correlation || !(launch = launch_call(l, m, name, &err)))
		return err ? -1 : 0;
	v = wfind(l, key);
	if (!v)
		return wait(l, key, r->start, 0, 0, 0, 0);
	/* Another record of the call (runtime and driver): the outermost starts first. */
	if (r->start < l->w[v - 1].call)
		l->w[v - 1].call = r->start;
	/*
	 * A kernel that came first waits for its call's records, but no
	 * record of it starts before the runtime's (the driver call runs
	 * inside it): counted now, with the latency its generation's end
	 * would give it.
	 */
	if (l->w[v - 1].kernel && launch == 3)
		return leave(l, v - 1);
	return 0;
}

static int on_kernel(struct ga_latency *l, struct ga_model *m, const struct ga_act *a)
{
	uint64_t key = (uint64_t)a->proc << 32 | a->correlation;
	const struct ga_proc *p = &m->procs[a->proc];
	/* Nothing waiting (a trace without API calls): no look-up. */
	uint32_t v = l->nwaiting ? wfind(l, key) : 0;
	int replayed;

	if (!v && (!a->correlation || (p->has_config && !(p->config.trace & GP_TRACE_API)))) {
		l->unmatched++;
		return 0;
	}
	replayed = a->rec && a->rec->type == GP_REC_KERNEL &&
		   (((const struct gp_rec_kernel *)(const void *)a->rec)->flags & GP_ACT_REPLAYED);
	if (v && !l->w[v - 1].kernel) {
		uint64_t t = l->w[v - 1].call;

		unwait(l, v - 1);
		return matched(l, a->name, t, a->start, replayed);
	}
	/* Wait for the call only where API calls were traced. */
	if (v || !a->correlation || (p->has_config && !(p->config.trace & GP_TRACE_API))) {
		l->unmatched++;
		return 0;
	}
	return wait(l, key, UINT64_MAX, a->start, a->name, 1, replayed);
}

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_latency *l = ctx;

	if (rec->type == GP_REC_API && rec->size >= sizeof(struct gp_rec_api) &&
	    on_api(l, m, proc, (const void *)rec)) {
		l->oom = 1;
		return -1;
	}
	return 0;
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_latency *l = ctx;

	/* A graph's kernels were launched by the graph launch: not counted here. */
	if (a->kind == GA_ACT_KERNEL && !a->graph_id && on_kernel(l, m, a)) {
		l->oom = 1;
		return -1;
	}
	return 0;
}

/*
 * A kernel a filter dropped: its call, where it waits, goes uncounted now
 * rather than a generation later (a filter that keeps few kernels would
 * leave most calls waiting).
 */
static void on_drop(void *ctx, const struct ga_act *a)
{
	struct ga_latency *l = ctx;
	uint32_t v;

	if (a->kind != GA_ACT_KERNEL || a->graph_id || !l->nwaiting)
		return;
	v = wfind(l, (uint64_t)a->proc << 32 | a->correlation);
	if (v && !l->w[v - 1].kernel)
		unwait(l, v - 1);
}

int ga_latency_bind(struct ga_latency *l, struct ga_model *m)
{
	l->quant_limit = m->quant_limit;
	m->on_drop = on_drop;
	m->on_drop_ctx = l;
	return ga_model_observe(m, l, obs_rec, 1ull << GP_REC_API, obs_act);
}

int ga_latency_finish(struct ga_latency *l)
{
	/* Kernels still waiting count now, with their call's records or unmatched. */
	for (size_t i = 0; i < l->nw; i++)
		if (l->w[i].used && leave(l, (uint32_t)i))
			return -1;
	free(l->w);
	l->w = NULL;
	l->nw = l->capw = 0;
	l->free_head = 0;
	ga_map_free(&l->waiting);
	free(l->direct);
	l->direct = NULL;
	l->dmask = 0;
	l->nwaiting = 0;
	for (size_t i = 0; i < l->nk; i++) {
		struct ga_latency_k *k = &l->k[i];

		/* A summary keeps the values: the merged summary takes these from them. */
		if (l->keep_values)
			continue;
		ga_quant_mp(&k->q, &k->med, &k->p90, &k->p99);
		k->med_est = ga_quant_estimated(&k->q);
		k->stddev = ga_quant_stddev(&k->q);
		/* The values are no longer needed. */
		ga_quant_free(&k->q);
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
