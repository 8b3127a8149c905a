/*
 * Aggregation of trace records into the report model (see model.h): string
 * and device ids resolved across files, statistics per kernel, copy kind,
 * graph and API function, kept up to date while records stream by.
 * Runs offline only.
 */
#include "model/model.h"
#include "model/align.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* File string ids below this map through an array, above through a hash. */
#define API_CACHE 256
#define STREAM_CACHE 16

/* Per-file state while one trace streams through. */
struct fctx {
	struct ga_model *m;
	uint32_t file, proc;
	int started;
	struct ga_strmap smap;     /* file string id -> strtab id */
	struct ga_map devmap;      /* device id -> devrow index + 1 */
	uint32_t last_dev_id, last_devrow;
	int have_last_dev;
	/*
	 * Streams known to be in stream_set:
	 * (proc << 32 | device) + 1, (context << 32 | stream).
	 */
	uint64_t stream_cache[STREAM_CACHE][2];
	uint64_t api_cache[API_CACHE][2]; /* (astat + 1, tid) pairs already counted */
	uint32_t unknown_str;
	uint32_t nvtx;             /* the keep hook's nvtx for the activity being added */
	uint64_t serial;           /* records read */
	uint64_t leg_serial;       /* the record leg_pair was found for */
	struct ga_staged_pair *leg_pair;
	/* Pair index + 1 and correlation of a pair both legs of which were read, to release. */
	uint32_t done_pair, done_corr;
	/* Observers of activities: bit i, fan_act[i] reads the file's (act_ask()). */
	int act_asked;
	unsigned act_mask;
	struct ga_fan_act acts[GA_MODEL_FAN]; /* those of act_mask, the last registered first */
	uint32_t nacts;
	uint64_t act_from; /* counts[GA_ACT_KERNEL] when they were asked */
};

static const char *const copy_names[] = {
	[GP_COPY_UNKNOWN] = "unknown", [GP_COPY_HTOD] = "HtoD",
	[GP_COPY_DTOH] = "DtoH", [GP_COPY_HTOA] = "HtoA", [GP_COPY_ATOH] = "AtoH",
	[GP_COPY_ATOA] = "AtoA", [GP_COPY_ATOD] = "AtoD", [GP_COPY_DTOA] = "DtoA",
	[GP_COPY_DTOD] = "DtoD", [GP_COPY_HTOH] = "HtoH", [GP_COPY_PTOP] = "PtoP",
	[GA_COPY_STAGED_PEER] = "PtoP-staged",
};

const char *ga_model_act_kind(unsigned kind)
{
	static const char *const names[GA_ACT_KIND_COUNT] = {
		[GA_ACT_KERNEL] = "kernel", [GA_ACT_MEMCPY] = "memcpy",
		[GA_ACT_MEMSET] = "memset", [GA_ACT_GRAPH] = "graph",
	};

	return kind < GA_ACT_KIND_COUNT ? names[kind] : "unknown";
}

const char *ga_model_copy_kind(unsigned kind, char *buf, size_t n)
{
	if (kind < sizeof(copy_names) / sizeof(copy_names[0]) && copy_names[kind])
		return copy_names[kind];
	snprintf(buf, n, "kind %u", kind);
	return buf;
}

const char *ga_model_str(const struct ga_model *m, uint32_t id)
{
	return ga_strtab_get(&m->strs, id);
}

uint32_t ga_model_device_label(struct ga_model *m, uint32_t proc, uint32_t device)
{
	char buf[32];

	for (size_t j = 0; j < m->ndevrows; j++)
		if (m->devrows[j].proc == proc && m->devrows[j].id == device)
			return m->devrows[j].label;
	snprintf(buf, sizeof(buf), "cuda:%u", device);
	return ga_strtab_intern(&m->strs, buf, strlen(buf));
}

/* Several host names among the processes. */
static int several_hosts(const struct ga_model *m)
{
	for (size_t i = 1; i < m->nprocs; i++)
		if (m->procs[i].host != m->procs[0].host)
			return 1;
	return 0;
}

const char *ga_ranks_proc_name(const struct ga_model *m, uint32_t proc, char *buf, size_t n)
{
	const struct ga_proc *p = &m->procs[proc];
	int dup = 0, len;

	if (p->rank == GA_NO_RANK) {
		snprintf(buf, n, "%u", p->pid);
		return buf;
	}
	for (size_t i = 0; i < m->nprocs && !dup; i++)
		dup = i != proc && m->procs[i].rank == p->rank;
	len = snprintf(buf, n, "rank %u", p->rank);
	if (len > 0 && (size_t)len < n && p->host && several_hosts(m))
		len += snprintf(buf + len, n - (size_t)len, "@%.64s", ga_model_str(m, p->host));
	if (len > 0 && (size_t)len < n && dup)
		snprintf(buf + len, n - (size_t)len, ", pid %u", p->pid);
	return buf;
}

int ga_model_init(struct ga_model *m)
{
	memset(m, 0, sizeof(*m));
	m->first_start = UINT64_MAX;
	return ga_strtab_init(&m->strs);
}

int ga_model_observe(struct ga_model *m, void *ctx,
		     int (*rec)(void *ctx, struct ga_model *m, uint32_t proc,
				const struct gp_rec *rec),
		     uint64_t types,
		     int (*act)(void *ctx, struct ga_model *m, const struct ga_act *a))
{
	if ((rec && m->nfan_rec == GA_MODEL_FAN) || (act && m->nfan_act == GA_MODEL_FAN))
		return -1;
	if (rec) {
		for (unsigned t = 0; t < GP_REC_TYPE_COUNT; t++)
			if (types >> t & 1)
				m->fan_route[t] |= (uint8_t)(1u << m->nfan_rec);
		m->fan_rec[m->nfan_rec++] = (struct ga_fan_rec){ ctx, rec };
	}
	if (act)
		m->fan_act[m->nfan_act++] = (struct ga_fan_act){ ctx, act, NULL, NULL };
	return 0;
}

void ga_model_act_idle(struct ga_model *m, void *ctx,
		       int (*idle)(void *ctx, const struct ga_model *m, uint32_t proc),
		       uint64_t *kernels)
{
	for (uint32_t i = m->nfan_act; i-- > 0;)
		if (m->fan_act[i].ctx == ctx) {
			m->fan_act[i].idle = idle;
			m->fan_act[i].idle_kernels = kernels;
			return;
		}
}

/*
 * The kernels of the file read since its observers of activities were
 * last asked, added to the counts of those it skipped.
 */
static void act_idle_count(struct fctx *f)
{
	struct ga_model *m = f->m;
	uint64_t n = m->counts[GA_ACT_KERNEL] - f->act_from;

	for (uint32_t i = 0; f->act_asked && i < m->nfan_act; i++)
		if (!(f->act_mask >> i & 1) && m->fan_act[i].idle_kernels)
			*m->fan_act[i].idle_kernels += n;
	f->act_asked = 0;
}

/* Which observers of activities the file's activities go to (struct ga_fan_act's idle). */
static __attribute__((noinline)) void act_ask(struct fctx *f)
{
	struct ga_model *m = f->m;

	act_idle_count(f);
	f->act_mask = 0;
	f->nacts = 0;
	for (uint32_t i = m->nfan_act; i-- > 0;)
		if (!m->fan_act[i].idle || !m->fan_act[i].idle(m->fan_act[i].ctx, m, f->proc)) {
			f->act_mask |= 1u << i;
			f->acts[f->nacts++] = m->fan_act[i];
		}
	f->act_from = m->counts[GA_ACT_KERNEL];
	f->act_asked = 1;
}

int ga_model_on_file_done(struct ga_model *m, void *ctx,
			  int (*fn)(void *ctx, struct ga_model *m, uint32_t proc))
{
	if (m->nfan_done == GA_MODEL_FAN)
		return -1;
	m->fan_done[m->nfan_done++] = (struct ga_fan_done){ ctx, fn };
	return 0;
}

/*
 * The file of process proc read to its end, the next about to be read:
 * every device's busy time so far closes where it retires (a GPU met again
 * in a later file is busy_shared: exact while its intervals come after),
 * and the observers let go of what only more of proc's records could join.
 * Traces read together then keep no window of each trace's last intervals
 * until the end.  0, or -1 out of memory.
 */
static int file_done(struct ga_model *m, uint32_t proc)
{
	/* Its devices: the devrows made while it was read, the last ones. */
	for (size_t i = m->ndevrows; m->busy_retire && !m->busy_keep && i-- > 0 &&
				     m->devrows[i].proc == proc;) {
		struct ga_busy *b = &m->devs[m->devrows[i].dev].busy;

		if ((b->niv || b->nbatch || b->capiv) && ga_busy_close(b))
			return -1;
	}
	for (uint32_t i = 0; i < m->nfan_done; i++)
		if (m->fan_done[i].fn(m->fan_done[i].ctx, m, proc))
			return -1;
	return 0;
}

/*
 * A record the model hands to observers: the chain, then those of the
 * model's own analyses that read its type, the last registered first.
 */
static int observe_rec(struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	unsigned route = rec->type < GP_REC_TYPE_COUNT ? m->fan_route[rec->type] : 0;

	if (m->obs.rec && m->obs.rec(m->obs.ctx, m, proc, rec))
		return -1;
	while (route) {
		unsigned i = 31u - (unsigned)__builtin_clz(route);

		route &= ~(1u << i);
		if (m->fan_rec[i].fn(m->fan_rec[i].ctx, m, proc, rec))
			return -1;
	}
	return 0;
}

void ga_model_free(struct ga_model *m)
{
	size_t i;

	for (i = 0; i < m->nfiles; i++)
		free(m->files[i].path);
	for (i = 0; i < m->ndevs; i++)
		ga_busy_free(&m->devs[i].busy);
	for (i = 0; i < m->nkstats; i++)
		ga_quant_free(&m->kstats[i].durs);
	for (i = 0; i < m->nastats; i++)
		ga_quant_free(&m->astats[i].durs);
	for (i = 0; i < m->nmemops; i++)
		ga_quant_free(&m->memops[i].durs);
	free(m->memops);
	ga_map_free(&m->memop_map);
	free(m->files);
	free(m->procs);
	free(m->windows);
	free(m->devs);
	ga_map_free(&m->gpu_map);
	free(m->devrows);
	free(m->kstats);
	free(m->str2k);
	free(m->labels);
	ga_map_free(&m->label_map);
	free(m->corr_window);
	ga_map_free(&m->staged);
	free(m->pairs);
	ga_map_free(&m->copy_api_names);
	free(m->graphs);
	ga_map_free(&m->graph_map);
	ga_map_free(&m->gnode_set);
	free(m->astats);
	free(m->str2a);
	ga_map_free(&m->api_names);
	ga_map_free(&m->api_tids);
	ga_map_free(&m->stream_set);
	ga_map_free(&m->thread_names);
	ga_xsort_free(&m->rows);
	ga_strtab_free(&m->strs);
	memset(m, 0, sizeof(*m));
}

/* *a += v, stopping at UINT64_MAX; 1 when it stopped there (a count saturated). */
static int sat_add(uint64_t *a, uint64_t v)
{
	if (*a > UINT64_MAX - v) {
		*a = UINT64_MAX;
		return 1;
	}
	*a += v;
	return 0;
}

static int nomem(struct fctx *f)
{
	struct ga_model *m = f->m;

	snprintf(m->err, sizeof(m->err), "%s: out of memory", m->files[f->file].path);
	return -1;
}

/* Intern a label string; returns its label index or UINT32_MAX. */
static uint32_t label_get(struct ga_model *m, const char *s)
{
	uint32_t id = ga_strtab_intern(&m->strs, s, strlen(s)), *slot;
	int r;

	if (id == GA_STR_NOMEM)
		return UINT32_MAX;
	r = ga_map_insert(&m->label_map, id, 0, &slot);
	if (r < 0)
		return UINT32_MAX;
	if (r == 1) {
		if (ga_util_grow(&m->labels, &m->caplabels, m->nlabels + 1, sizeof(*m->labels)))
			return UINT32_MAX;
		memset(&m->labels[m->nlabels], 0, sizeof(*m->labels));
		m->labels[m->nlabels].str = id;
		*slot = (uint32_t)m->nlabels++;
	}
	return *slot;
}

/* fstr() past the dense array's defined ids. */
static __attribute__((noinline)) uint32_t fstr_slow(struct fctx *f, uint32_t id)
{
	uint32_t g;

	if (id == 0)
		return GA_STR_NONE;
	if ((g = ga_strmap_get(&f->smap, id)) != GA_STR_NOMEM) {
		if (!(g & GA_STR_GROUPED))
			return g;
		/* An op name, its string not kept (group_ops): read again keeping it. */
		f->m->names_lost = 1;
		return f->unknown_str;
	}
	f->m->bad_refs++;
	return f->unknown_str;
}

/* Global id of file string id; undefined ids count as bad references. */
static inline uint32_t fstr(struct fctx *f, uint32_t id)
{
	/* Once a record or more: the dense array's ids first (strtab.h ga_strmap_get()). */
	if (id && id < f->smap.n && f->smap.dense[id])
		return f->smap.dense[id];
	return fstr_slow(f, id);
}

static int on_string(struct fctx *f, const struct gp_rec_string *s)
{
	if (ga_strmap_add(&f->smap, &f->m->strs, s->id, (const char *)(s + 1), s->len))
		return nomem(f);
	return 0;
}

static uint32_t new_device(struct ga_model *m, uint32_t proc, uint32_t id)
{
	struct ga_device *d;

	if (ga_util_grow(&m->devs, &m->capdevs, m->ndevs + 1, sizeof(*m->devs)))
		return UINT32_MAX;
	d = &m->devs[m->ndevs];
	memset(d, 0, sizeof(*d));
	d->proc = proc;
	d->host = m->procs[proc].host;
	d->id = id;
	d->busy.keep_max = m->busy_keep;
	return (uint32_t)m->ndevs++;
}

static uint32_t new_devrow(struct ga_model *m, uint32_t proc, uint32_t dev, uint32_t id)
{
	struct ga_devrow *r;

	if (ga_util_grow(&m->devrows, &m->capdevrows, m->ndevrows + 1, sizeof(*m->devrows)))
		return UINT32_MAX;
	r = &m->devrows[m->ndevrows];
	memset(r, 0, sizeof(*r));
	r->proc = proc;
	r->dev = dev;
	r->id = id;
	return (uint32_t)m->ndevrows++;
}

static int fdev_slow(struct fctx *f, uint32_t id, uint32_t *devrow)
{
	struct ga_model *m = f->m;
	uint32_t *slot, dev, row;
	int r;

	r = ga_map_insert(&f->devmap, id, 0, &slot);
	if (r < 0)
		return nomem(f);
	if (r == 1) {
		dev = new_device(m, f->proc, id);
		row = dev == UINT32_MAX ? UINT32_MAX : new_devrow(m, f->proc, dev, id);
		if (row == UINT32_MAX)
			return nomem(f);
		*slot = row + 1;
	}
	f->last_dev_id = id;
	f->last_devrow = *slot - 1;
	f->have_last_dev = 1;
	*devrow = *slot - 1;
	return 0;
}

/* Devrow of a device id of this file; a placeholder until described. */
static inline int fdev(struct fctx *f, uint32_t id, uint32_t *devrow)
{
	if (f->have_last_dev && f->last_dev_id == id) {
		*devrow = f->last_devrow;
		return 0;
	}
	return fdev_slow(f, id, devrow);
}

static int uuid_zero(const uint8_t *u)
{
	static const uint8_t zero[16];

	return memcmp(u, zero, 16) == 0;
}

static void describe(struct fctx *f, struct ga_device *d, const struct gp_rec_device *r)
{
	d->name = fstr(f, r->name);
	memcpy(d->uuid, r->uuid, 16);
	d->cc_major = r->cc_major;
	d->cc_minor = r->cc_minor;
	d->sm_count = r->sm_count;
	d->core_clock_khz = r->core_clock_khz;
	d->global_mem = r->global_mem;
	d->mem_bandwidth = r->mem_bandwidth;
	d->l2_size = r->l2_size;
	d->flags = r->flags;
	if (r->h.size >= sizeof(*r)) {
		d->max_warps_per_sm = r->max_warps_per_sm;
		d->max_blocks_per_sm = r->max_blocks_per_sm;
		d->max_smem_per_sm = r->max_smem_per_sm;
		d->max_regs_per_sm = r->max_regs_per_sm;
	}
	d->described = 1;
}

/*
 * Fold placeholder device `from` (activities seen before the device was
 * described) into `to`, the same GPU already known from another process.
 */
static int merge_device(struct ga_model *m, uint32_t from, uint32_t to)
{
	struct ga_device *a = &m->devs[from], *b = &m->devs[to];

	if (ga_busy_merge(&b->busy, &a->busy))
		return -1;
	a->count = a->total = 0;
	a->dead = 1;
	return 0;
}

/* Key of a GPU in gpu_map: its UUID, the first half mixed with the host. */
static uint64_t gpu_key(uint32_t host, const uint8_t *uuid, uint64_t *b)
{
	uint64_t a;

	memcpy(&a, uuid, 8);
	memcpy(b, uuid + 8, 8);
	return a ^ (uint64_t)host * 0x9e3779b97f4a7c15ull;
}

static int same_gpu(const struct ga_device *d, uint32_t host, const uint8_t *uuid)
{
	return d->described && !d->dead && d->host == host && memcmp(d->uuid, uuid, 16) == 0;
}

/* The described device of this UUID on host, or UINT32_MAX: a lookup, not a scan of every device. */
static uint32_t gpu_find(const struct ga_model *m, uint32_t host, const uint8_t *uuid)
{
	uint64_t b, a = gpu_key(host, uuid, &b);
	const uint32_t *v = ga_map_find(&m->gpu_map, a, b);

	return v && *v < m->ndevs && same_gpu(&m->devs[*v], host, uuid) ? *v : UINT32_MAX;
}

/* Lists a device just described under its UUID (the first one stays).  0 or -1. */
static int gpu_note(struct ga_model *m, uint32_t dev)
{
	const struct ga_device *d = &m->devs[dev];
	uint64_t b, a;
	uint32_t *slot;
	int r;

	if (uuid_zero(d->uuid))
		return 0;
	a = gpu_key(d->host, d->uuid, &b);
	r = ga_map_insert(&m->gpu_map, a, b, &slot);
	if (r < 0)
		return -1;
	if (r == 1 || *slot >= m->ndevs || !same_gpu(&m->devs[*slot], d->host, d->uuid))
		*slot = dev;
	return 0;
}

/*
 * GPU g, of a file read before, is also this file's: busy_shared, and its
 * busy time is exact while no interval comes behind those it retired
 * (shared_late()).
 */
static void shared_gpu(struct fctx *f, uint32_t g)
{
	struct ga_model *m = f->m;

	if (m->procs[m->devs[g].proc].file == f->file)
		return;
	m->busy_shared = 1;
	m->devs[g].shared = 1;
}

/*
 * Shared GPU g's union clipped an interval behind those retired (busy.h
 * late): not exact.  0 where it is (or its busy time may be a lower
 * bound: busy_bound_ok), else -1 with ahead_retry set, to be built again
 * without retiring.
 */
static int shared_late(struct ga_model *m, uint32_t g)
{
	struct ga_device *d = &m->devs[g];

	if (!d->shared || !d->busy.late)
		return 0;
	if (m->busy_bound_ok) {
		d->busy_bound = 1;
		return 0;
	}
	m->ahead_retry = 1;
	return -1;
}

static int on_device(struct fctx *f, const struct gp_rec_device *r)
{
	struct ga_model *m = f->m;
	uint32_t host = m->procs[f->proc].host, g = UINT32_MAX, *slot, row;

	/* The same GPU seen by several processes of a host is one device. */
	if (!uuid_zero(r->uuid))
		g = gpu_find(m, host, r->uuid);
	slot = ga_map_find(&f->devmap, r->id, 0);
	if (slot) {
		struct ga_devrow *dr = &m->devrows[*slot - 1];
		struct ga_device *cur = &m->devs[dr->dev];

		if (g != UINT32_MAX && g != dr->dev && !cur->described) {
			shared_gpu(f, g);
			if (merge_device(m, dr->dev, g))
				return nomem(f);
			dr->dev = g;
		} else if (g == UINT32_MAX || g == dr->dev || !cur->described) {
			describe(f, cur, r);
			if (gpu_note(m, dr->dev))
				return nomem(f);
		}
		return 0;
	}
	if (g == UINT32_MAX) {
		g = new_device(m, f->proc, r->id);
		if (g == UINT32_MAX)
			return nomem(f);
		describe(f, &m->devs[g], r);
		if (gpu_note(m, g))
			return nomem(f);
	} else {
		shared_gpu(f, g);
	}
	row = new_devrow(m, f->proc, g, r->id);
	if (row == UINT32_MAX || ga_map_insert(&f->devmap, r->id, 0, &slot) < 0)
		return nomem(f);
	*slot = row + 1;
	f->have_last_dev = 0;
	return 0;
}

/*
 * Everything common to GPU activities; a->kind, label, devrow, times set.
 * Inlined into each caller: a call per activity shows in the profile.
 */
static inline __attribute__((always_inline)) int
add_activity(struct fctx *f, struct ga_act *a)
{
	struct ga_model *m = f->m;
	struct ga_devrow *dr = &m->devrows[a->devrow];
	uint64_t dur = a->end - a->start;

	/* Label, device and process totals are summed up in ga_model_finish(). */
	if (!f->act_asked)
		act_ask(f);
	m->counts[a->kind]++;
	dr->count++;
	dr->total += dur;
	if (m->busy_retire ? ga_busy_add_stream(&m->devs[dr->dev].busy, f->proc, a->context,
						a->stream, a->start, a->end) :
			     ga_busy_add(&m->devs[dr->dev].busy, a->start, a->end))
		return nomem(f);
	if (m->busy_shared && shared_late(m, dr->dev))
		return -1;

	{
		uint64_t sa = (uint64_t)f->proc << 32 | a->device_id;
		uint64_t sb = (uint64_t)a->context << 32 | a->stream;
		uint32_t *slot;

		/* Streams interleave: a few recent ones spare most hash lookups. */
		uint64_t *c = f->stream_cache[(a->stream ^ a->device_id * 7u) % STREAM_CACHE];

		if (c[0] != sa + 1 || c[1] != sb) {
			if (ga_map_insert(&m->stream_set, sa, sb, &slot) < 0)
				return nomem(f);
			c[0] = sa + 1;
			c[1] = sb;
		}
	}

	if (m->rows_seen++ < m->keep_rows) {
		struct ga_row *r;

		if (!m->rows.rsize)
			ga_xsort_init(&m->rows, sizeof(*r), m->rows_run ? m->rows_run : GA_ROWS_RUN);
		if (!(r = ga_xsort_slot(&m->rows))) {
			snprintf(m->err, sizeof(m->err), "%s: the timeline's rows: %s",
				 m->files[f->file].path, m->rows.err);
			return -1;
		}
		r->start = a->start;
		r->dur = dur;
		r->label = a->label;
		r->devrow = a->devrow;
		r->nvtx = f->nvtx;
		r->pad = 0;
		m->nrows++;
	}
	a->dev = dr->dev;
	a->proc = f->proc;
	a->nvtx = f->nvtx;
	if (m->obs.act && m->obs.act(m->obs.ctx, m, a))
		return nomem(f);
	for (uint32_t k = 0; k < f->nacts; k++)
		if (f->acts[k].fn(f->acts[k].ctx, m, a))
			return nomem(f);
	if (m->hooks.act && m->hooks.act(m->hooks.ctx, m, a)) {
		snprintf(m->err, sizeof(m->err), "%s: stopped by an output error",
			 m->files[f->file].path);
		return -1;
	}
	return 0;
}

static void times(struct ga_act *a, uint64_t start, uint64_t end)
{
	a->start = start;
	/* A reversed interval counts as instantaneous rather than huge. */
	a->end = end >= start ? end : start;
}

/* Graph statistics of (process, graph id). */
static struct ga_gstat *graph_get(struct fctx *f, uint32_t graph_id)
{
	struct ga_model *m = f->m;
	uint32_t *slot;
	int r = ga_map_insert(&m->graph_map, f->proc, graph_id, &slot);

	if (r < 0)
		return NULL;
	if (r == 1) {
		if (ga_util_grow(&m->graphs, &m->capgraphs, m->ngraphs + 1, sizeof(*m->graphs))) {
			/* Leave no dangling map entry behind. */
			*slot = UINT32_MAX;
			return NULL;
		}
		memset(&m->graphs[m->ngraphs], 0, sizeof(*m->graphs));
		m->graphs[m->ngraphs].proc = f->proc;
		m->graphs[m->ngraphs].graph_id = graph_id;
		*slot = (uint32_t)m->ngraphs++;
	}
	if (*slot == UINT32_MAX)
		return NULL;
	return &m->graphs[*slot];
}

/*
 * Counts a graph node (kernel, memcpy or memset) once per (process, graph,
 * node), and kernels inside graphs.  Returns 0, or -1 when out of memory.
 */
static int graph_node_seen(struct fctx *f, uint32_t graph_id, uint64_t node, int kernel)
{
	struct ga_gstat *g = graph_get(f, graph_id);
	uint32_t *slot;
	int r;

	if (!g)
		return nomem(f);
	g->kernels += kernel ? 1u : 0u;
	r = ga_map_insert(&f->m->gnode_set, (uint64_t)f->proc << 32 | graph_id, node, &slot);
	if (r < 0)
		return nomem(f);
	g->nodes += (uint64_t)r;
	return 0;
}

static int keep_ask(struct fctx *f, struct ga_act *a);

/* The activity is built once, for the keep hook and then for counting. */
static int on_kernel(struct fctx *f, const struct gp_rec_kernel *k)
{
	struct ga_model *m = f->m;
	struct ga_act a;
	struct ga_kstat *ks;
	uint32_t name = fstr(f, k->name), ki;
	uint64_t dur;

	if (name == GA_STR_NONE)
		name = f->unknown_str;
	/* Each field once: a memset first and the fields after doubled the stores. */
	a = (struct ga_act){
		.graph_node = k->graph_node, .kind = GA_ACT_KERNEL, .proc = f->proc,
		.name = name, .device_id = k->device, .context = k->context,
		.stream = k->stream, .correlation = k->correlation, .graph_id = k->graph_id,
		.rec = &k->h,
	};
	times(&a, k->start, k->end);
	if (m->keep) {
		int keep = keep_ask(f, &a);

		if (keep <= 0)
			return keep;
	}
	if (name >= m->capstr2k || !m->str2k[name]) {
		if (name >= m->capstr2k) {
			size_t old = m->capstr2k;

			if (ga_util_grow(&m->str2k, &m->capstr2k, (size_t)name + 1, sizeof(*m->str2k)))
				return nomem(f);
			memset(m->str2k + old, 0, (m->capstr2k - old) * sizeof(*m->str2k));
		}
		if (m->nkstats >= GA_KEY_NONE - 1 ||
		    ga_util_grow(&m->kstats, &m->capkstats, m->nkstats + 1, sizeof(*m->kstats)))
			return nomem(f);
		ks = &m->kstats[m->nkstats];
		memset(ks, 0, sizeof(*ks));
		ks->name = name;
		ks->min = UINT64_MAX;
		ks->durs.limit = m->quant_limit;
		{
			const char *sn = ga_strtab_short(&m->strs, name);
			struct ga_buf b = { 0 };

			/* Put, not printf: names run to hundreds of bytes, printf's a byte a step. */
			if (ga_buf_put(&b, "kernel ", 7) || ga_buf_put(&b, sn, strlen(sn))) {
				ga_buf_free(&b);
				return nomem(f);
			}
			ks->label = label_get(m, b.p);
			ga_buf_free(&b);
			if (ks->label == UINT32_MAX)
				return nomem(f);
		}
		m->str2k[name] = (uint32_t)++m->nkstats;
	}
	ki = m->str2k[name] - 1;
	ks = &m->kstats[ki];

	dur = a.end - a.start;
	ks->count++;
	ks->total += dur;
	if (dur < ks->min)
		ks->min = dur;
	if (dur > ks->max)
		ks->max = dur;
	m->kernel_total += dur;
	if (k->graph_id) {
		ks->in_graph++;
		if (graph_node_seen(f, k->graph_id, k->graph_node, 1) < 0)
			return -1;
	}
	a.label = ks->label;
	if (fdev(f, k->device, &a.devrow))
		return -1;
	if (ga_quant_add(&ks->durs, dur))
		return nomem(f);
	return add_activity(f, &a);
}

/*
 * The shared tail of memcpy and memset records: a (filled in by the caller
 * except times and label) is counted into ms, its graph node and device,
 * and added as an activity.
 */
/* CUpti_ActivityMemoryKind values: the report's name, the exports' key. */
static const struct {
	const char *name, *key;
} mem_kinds[] = {
	{ "unknown", "unknown" }, { "pageable", "pageable" }, { "pinned", "pinned" },
	{ "device", "device" }, { "array", "array" }, { "managed", "managed" },
	{ "device static", "device_static" }, { "managed static", "managed_static" },
};

const char *ga_model_mem_kind(unsigned kind)
{
	return kind < sizeof(mem_kinds) / sizeof(mem_kinds[0]) ? mem_kinds[kind].name : "unknown";
}

const char *ga_model_mem_kind_key(unsigned kind)
{
	return kind < sizeof(mem_kinds) / sizeof(mem_kinds[0]) ? mem_kinds[kind].key : "unknown";
}

/* One memory operation of kind (copy kind, GA_COPY_STAGED_PEER or GA_MEMOP_MEMSET). */
static int memop_count(struct ga_model *m, unsigned kind, const struct gp_rec *rec,
		       uint64_t bytes, uint64_t dur)
{
	uint32_t src = 0, dst = 0, *slot;
	struct ga_memop *o;
	int r;

	if (rec && rec->type == GP_REC_MEMCPY) {
		src = ((const struct gp_rec_memcpy *)(const void *)rec)->src_kind;
		dst = ((const struct gp_rec_memcpy *)(const void *)rec)->dst_kind;
	} else if (rec && rec->type == GP_REC_MEMSET) {
		dst = ((const struct gp_rec_memset *)(const void *)rec)->mem_kind;
	}
	r = ga_map_insert(&m->memop_map, kind, src << 8 | dst, &slot);
	if (r < 0)
		return -1;
	if (r == 1) {
		if (m->nmemops >= GA_KEY_NONE - 1 ||
		    ga_util_grow(&m->memops, &m->capmemops, m->nmemops + 1, sizeof(*m->memops))) {
			ga_map_remove(&m->memop_map, kind, src << 8 | dst);
			return -1;
		}
		o = &m->memops[m->nmemops];
		memset(o, 0, sizeof(*o));
		o->kind = kind;
		o->src = src;
		o->dst = dst;
		o->min = UINT64_MAX;
		o->durs.limit = m->quant_limit;
		*slot = (uint32_t)++m->nmemops;
	}
	o = &m->memops[*slot - 1];
	o->count++;
	o->bytes += bytes;
	o->total += dur;
	if (dur < o->min)
		o->min = dur;
	if (dur > o->max)
		o->max = dur;
	return ga_quant_add(&o->durs, dur);
}

static int add_memop(struct fctx *f, struct ga_memstat *ms, struct ga_act *a,
		     uint64_t start, uint64_t end)
{
	times(a, start, end);
	ms->count++;
	ms->bytes += a->bytes;
	ms->total += a->end - a->start;
	if (memop_count(f->m, a->kind == GA_ACT_MEMSET ? GA_MEMOP_MEMSET : a->copy_kind, a->rec,
			a->bytes, a->end - a->start))
		return nomem(f);
	a->label = ms->label - 1;
	if (a->graph_id && graph_node_seen(f, a->graph_id, a->graph_node, 0) < 0)
		return -1;
	if (fdev(f, a->device_id, &a->devrow))
		return -1;
	return add_activity(f, a);
}

/*
 * The window's slot of (proc, corr): NULL where another correlation holds
 * it and take is 0; with take, that one's place given to this one (a leg
 * waiting there pairs no more; a pair found stays in model staged).  The
 * window starts at 1024 slots and doubles past the ids put in, up to
 * GA_CORR_WINDOW: holding only ids below its size, it gives a slot up
 * where the full one would (the same id), and a trace pays for the ids it
 * has, not 2.5 MiB of zeros (the report's pool makes one for every trace).
 */
static struct ga_corr_slot *corr_slot(struct ga_model *m, uint32_t proc, uint32_t corr, int take)
{
	struct ga_corr_slot *w;

	if (corr >= m->corr_cap && m->corr_cap < GA_CORR_WINDOW) {
		uint32_t nc = m->corr_cap ? m->corr_cap : 1024;

		if (!take)
			return NULL;
		while (nc <= corr && nc < GA_CORR_WINDOW)
			nc *= 2;
		if (!(w = calloc(nc, sizeof(*w))))
			return NULL;
		for (uint32_t i = 0; i < m->corr_cap; i++)
			if (m->corr_window[i].state != GA_CORR_EMPTY)
				w[m->corr_window[i].corr & (nc - 1)] = m->corr_window[i];
		free(m->corr_window);
		m->corr_window = w;
		m->corr_cap = nc;
	}
	w = &m->corr_window[corr & (m->corr_cap - 1)];
	if (w->state != GA_CORR_EMPTY && w->proc == proc && w->corr == corr)
		return w;
	if (!take)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->proc = proc;
	w->corr = corr;
	return w;
}

/* The pair of (proc, corr) the model has not released, or NULL. */
static struct ga_staged_pair *pair_find(struct ga_model *m, uint32_t proc, uint32_t corr)
{
	const uint32_t *x = ga_map_find(&m->staged, proc, corr);

	return x ? &m->pairs[*x - 1] : NULL;
}

int ga_model_note_copy(struct ga_model *m, uint32_t proc, const struct gp_rec_memcpy *c)
{
	struct ga_corr_slot *w;
	struct ga_staged_pair *p;
	uint32_t *x, i;

	if ((c->copy_kind != GP_COPY_DTOH && c->copy_kind != GP_COPY_HTOD) || !c->correlation)
		return 0;
	if (!(w = corr_slot(m, proc, c->correlation, 1)))
		return -1;
	switch (w->state) {
	case GA_CORR_PAIRED:
		/* A third leg: one API call that made more than a peer copy. */
		if ((p = pair_find(m, proc, c->correlation)))
			p->legs++;
		return 0;
	case GA_CORR_DONE:
		return 0;
	case GA_CORR_LEG:
		/* The other leg of one API call, on another device: a staged peer copy. */
		w->state = GA_CORR_DONE;
		if (w->kind == c->copy_kind || w->device == c->device || w->bytes != c->bytes)
			return 0;
		if (m->pair_free) {
			i = m->pair_free - 1;
		} else {
			if (m->npairs >= UINT32_MAX - 1 ||
			    ga_util_grow(&m->pairs, &m->cappairs, m->npairs + 1, sizeof(*m->pairs)))
				return -1;
			i = (uint32_t)m->npairs;
		}
		if (ga_map_insert(&m->staged, proc, c->correlation, &x) < 0)
			return -1;
		if (m->pair_free)
			m->pair_free = m->pairs[i].file;
		else
			m->npairs++;
		p = &m->pairs[i];
		p->start = w->start < c->start ? w->start : c->start;
		p->end = w->end > c->end ? w->end : c->end;
		p->file = 0;
		p->legs = 2;
		p->seen = 0;
		p->api = w->api;
		*x = i + 1;
		w->state = GA_CORR_PAIRED;
		m->staged_pairs++;
		return 0;
	default:
		w->state = GA_CORR_LEG;
		w->bytes = c->bytes;
		w->start = c->start;
		w->end = c->end;
		w->device = c->device;
		w->kind = (uint8_t)c->copy_kind;
		return 0;
	}
}

int ga_model_note_string(struct ga_model *m, uint32_t proc, const struct gp_rec_string *r)
{
	const char *t = (const char *)(r + 1);
	uint32_t *slot;

	/* Only copy functions are remembered: cudaMemcpy*, cuMemcpy*. */
	if (r->len < 6 || (!memmem(t, r->len, "Memcpy", 6) && !memmem(t, r->len, "memcpy", 6)))
		return 0;
	if (ga_map_insert(&m->copy_api_names, proc, r->id, &slot) < 0)
		return -1;
	memset(m->copy_api_recent, 0, sizeof(m->copy_api_recent));
	*slot = memmem(t, r->len, "Peer", 4) ? GA_COPY_API_PEER : GA_COPY_API_OTHER;
	return 0;
}

int ga_model_note_api(struct ga_model *m, uint32_t proc, const struct gp_rec_api *r)
{
	const uint32_t *name;
	struct ga_corr_slot *w;
	uint32_t *rc;

	if (!r->correlation)
		return 0;
	/* A few functions make most calls: their answer is kept. */
	rc = m->copy_api_recent[(r->name ^ proc * 31u) % 64];
	if (rc[3] && rc[0] == proc && rc[1] == r->name) {
		name = rc[2] ? &rc[2] : NULL;
	} else {
		name = ga_map_find(&m->copy_api_names, proc, r->name);
		rc[0] = proc;
		rc[1] = r->name;
		rc[2] = name ? *name : 0;
		rc[3] = 1;
	}
	/*
	 * Copy functions are noted whenever they come; any other call only
	 * once a copy leg of its correlation was seen (the API record usually
	 * follows the copy's activity records; every call of a trace would
	 * cost a slot each).
	 */
	w = corr_slot(m, proc, r->correlation, 0);
	if (!name && (!w || w->state == GA_CORR_CALL))
		return 0;
	if (!w) {
		if (!(w = corr_slot(m, proc, r->correlation, 1)))
			return -1;
		w->state = GA_CORR_CALL;
	}
	if (w->state == GA_CORR_PAIRED) {
		struct ga_staged_pair *p = pair_find(m, proc, r->correlation);

		if (p)
			p->api |= (uint8_t)(name ? *name : GA_COPY_API_OTHER);
		return 0;
	}
	w->api |= (uint8_t)(name ? *name : GA_COPY_API_OTHER);
	return 0;
}

/* Forget the pair at index i of correlation corr of f's process: the model's read is done with it. */
static void pair_release(struct fctx *f, uint32_t i, uint32_t corr)
{
	struct ga_model *m = f->m;

	ga_map_remove(&m->staged, f->proc, corr);
	m->pairs[i].file = m->pair_free;
	m->pairs[i].seen = 3;
	m->pair_free = i + 1;
}

/*
 * The staged peer copy the MEMCPY record being read is a leg of, or NULL;
 * asked again for the same record, the same answer.  The first leg read
 * decides for the pair (ga_staged_pair.seen); a leg read as a copy of its
 * own leaves its correlation no pair to make with a leg noted later.  A
 * pair is released once decided against, or after the record of its second
 * leg: a leg of its correlation read later is a copy of its own.
 */
static struct ga_staged_pair *staged_pair(struct fctx *f, const struct gp_rec_memcpy *c)
{
	struct ga_model *m = f->m;
	const uint32_t *x;
	struct ga_staged_pair *p;
	struct ga_corr_slot *w;

	if (f->leg_serial == f->serial)
		return f->leg_pair;
	f->leg_serial = f->serial;
	f->leg_pair = NULL;
	if (f->done_pair) {
		/* The record that read its second leg is past. */
		pair_release(f, f->done_pair - 1, f->done_corr);
		f->done_pair = 0;
	}
	if ((c->copy_kind != GP_COPY_DTOH && c->copy_kind != GP_COPY_HTOD) || !c->correlation)
		return NULL;
	if (!m->staged_pairs || !(x = ga_map_find(&m->staged, f->proc, c->correlation))) {
		if ((w = corr_slot(m, f->proc, c->correlation, 0)) && w->state == GA_CORR_LEG)
			w->state = GA_CORR_DONE;
		return NULL;
	}
	p = &m->pairs[*x - 1];
	if (p->seen == 1) {
		p->seen = 2;
		f->done_pair = *x;
		f->done_corr = c->correlation;
		return f->leg_pair = p;
	}
	if (p->seen)
		return NULL;
	/* The call behind both legs, where the trace has it, copies between peers. */
	if (p->legs != 2 || (p->api && !(p->api & GA_COPY_API_PEER))) {
		pair_release(f, *x - 1, c->correlation);
		return NULL;
	}
	p->seen = 1;
	return f->leg_pair = p;
}

/* The copy kind a MEMCPY record counts under. */
static unsigned copy_kind_of(struct fctx *f, const struct gp_rec_memcpy *c)
{
	return staged_pair(f, c) ? GA_COPY_STAGED_PEER : c->copy_kind;
}

/*
 * Label index + 1 of a MEMCPY record's activity (a staged peer copy's leg:
 * "memcpy PtoP-staged (DtoH leg)"), or with kind GA_COPY_KIND_MAX, of the
 * staged peer copies' memory-table row; 0 when out of memory.
 */
static uint32_t act_label(struct ga_model *m, struct ga_memstat *ms, unsigned kind,
			  unsigned leg_kind)
{
	char buf[48], kb[16];
	uint32_t *lp = &ms->label, l;

	if (kind == GA_COPY_STAGED_PEER)
		lp = &m->leg_label[leg_kind == GP_COPY_HTOD];
	if (*lp)
		return *lp;
	if (kind == GA_COPY_STAGED_PEER)
		snprintf(buf, sizeof(buf), "memcpy PtoP-staged (%s leg)",
			 leg_kind == GP_COPY_HTOD ? "HtoD" : "DtoH");
	else
		snprintf(buf, sizeof(buf), "memcpy %s",
			 ga_model_copy_kind(kind == GA_COPY_KIND_MAX ? GA_COPY_STAGED_PEER : kind,
					    kb, sizeof(kb)));
	l = label_get(m, buf);
	if (l == UINT32_MAX)
		return 0;
	*lp = l + 1;
	return *lp;
}

static int on_memcpy(struct fctx *f, const struct gp_rec_memcpy *c)
{
	struct ga_model *m = f->m;
	struct ga_staged_pair *p = staged_pair(f, c);
	unsigned kind = p ? GA_COPY_STAGED_PEER : c->copy_kind;
	struct ga_memstat *ms = &m->copy[kind];
	struct ga_act a;
	uint32_t leg;
	int rc;

	if (!ms->label && !act_label(m, ms, kind == GA_COPY_STAGED_PEER ? GA_COPY_KIND_MAX : kind,
				     kind))
		return nomem(f);
	leg = act_label(m, ms, kind, c->copy_kind);
	if (!leg)
		return nomem(f);
	memset(&a, 0, sizeof(a));
	a.kind = GA_ACT_MEMCPY;
	a.bytes = c->bytes;
	a.copy_kind = kind;
	a.device_id = c->device;
	a.context = c->context;
	a.stream = c->stream;
	a.correlation = c->correlation;
	a.graph_id = c->graph_id;
	a.graph_node = c->graph_node;
	a.rec = &c->h;
	if (!p)
		return add_memop(f, ms, &a, c->start, c->end);
	/*
	 * A staged peer copy is one copy of its bytes, taking the whole span
	 * of its two legs; whichever leg comes first (or is kept by a filter)
	 * counts it.  Each leg stays an activity of its own device, labelled
	 * as a leg, so busy time and the timeline stay per device.
	 */
	times(&a, c->start, c->end);
	a.label = leg - 1;
	if (a.graph_id && graph_node_seen(f, a.graph_id, a.graph_node, 0) < 0)
		return -1;
	if (fdev(f, a.device_id, &a.devrow))
		return -1;
	rc = add_activity(f, &a);
	if (!rc) {
		struct ga_memstat *ls = &m->leg_st[c->copy_kind == GP_COPY_HTOD];

		ls->count++;
		ls->bytes += c->bytes;
		ls->total += a.end - a.start;
	}
	if (!rc && p->file != f->file + 1) {
		p->file = f->file + 1;
		ms->count++;
		ms->bytes += c->bytes;
		ms->total += p->end - p->start;
		if (memop_count(m, GA_COPY_STAGED_PEER, &c->h, c->bytes, p->end - p->start))
			return nomem(f);
	}
	return rc;
}

static int on_memset(struct fctx *f, const struct gp_rec_memset *s)
{
	struct ga_model *m = f->m;
	struct ga_memstat *ms = &m->memset_st;
	struct ga_act a;

	if (!ms->label) {
		uint32_t l = label_get(m, "memset");

		if (l == UINT32_MAX)
			return nomem(f);
		ms->label = l + 1;
	}
	memset(&a, 0, sizeof(a));
	a.kind = GA_ACT_MEMSET;
	a.bytes = s->bytes;
	a.device_id = s->device;
	a.context = s->context;
	a.stream = s->stream;
	a.correlation = s->correlation;
	a.graph_id = s->graph_id;
	a.graph_node = s->graph_node;
	a.rec = &s->h;
	return add_memop(f, ms, &a, s->start, s->end);
}

static int on_graph(struct fctx *f, const struct gp_rec_graph *g)
{
	struct ga_model *m = f->m;
	struct ga_gstat *gs = graph_get(f, g->graph_id);
	struct ga_act a;

	if (!gs)
		return nomem(f);
	if (!gs->label) {
		char buf[32];
		uint32_t l;

		snprintf(buf, sizeof(buf), "graph %u", g->graph_id);
		l = label_get(m, buf);
		if (l == UINT32_MAX)
			return nomem(f);
		gs->label = l + 1;
	}
	memset(&a, 0, sizeof(a));
	times(&a, g->start, g->end);
	gs->launches++;
	gs->total += a.end - a.start;
	a.kind = GA_ACT_GRAPH;
	a.label = gs->label - 1;
	a.device_id = g->device;
	a.context = g->context;
	a.stream = g->stream;
	a.correlation = g->correlation;
	a.graph_id = g->graph_id;
	if (fdev(f, g->device, &a.devrow))
		return -1;
	return add_activity(f, &a);
}

/*
 * Length of an API function name without the version suffix CUPTI's
 * callback names carry ("cudaLaunchKernel_v7000"), as nsys shows them.
 * Driver symbols that really end in "_v2" keep it: the suffix stripped
 * has at least four digits.
 */
static size_t api_name_len(const char *s, size_t len)
{
	size_t i = len;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (len - i >= 4 && i >= 3 && s[i - 1] == 'v' && s[i - 2] == '_')
		return i - 2;
	return len;
}

/* Statistics index for API name string id name, created on first use. */
static int api_stat(struct fctx *f, uint32_t name, uint32_t *out)
{
	struct ga_model *m = f->m;
	const char *raw = ga_model_str(m, name);
	size_t len = ga_strtab_len(&m->strs, name), keep = api_name_len(raw, len);
	uint32_t sid = keep == len ? name : ga_strtab_intern(&m->strs, raw, keep), *slot;
	int r;

	if (sid == GA_STR_NOMEM)
		return -1;
	r = ga_map_insert(&m->api_names, sid, 0, &slot);
	if (r < 0)
		return -1;
	if (r == 1) {
		struct ga_astat *as;

		if (m->nastats >= UINT32_MAX - 1 ||
		    ga_util_grow(&m->astats, &m->capastats, m->nastats + 1, sizeof(*m->astats)))
			return -1;
		as = &m->astats[m->nastats];
		memset(as, 0, sizeof(*as));
		as->name = sid;
		as->min = UINT64_MAX;
		as->durs.limit = m->quant_limit;
		*slot = (uint32_t)m->nastats++;
	}
	*out = *slot;
	return 0;
}

static int on_api(struct fctx *f, const struct gp_rec_api *r)
{
	struct ga_model *m = f->m;
	uint32_t name = fstr(f, r->name), si;
	struct ga_astat *as;
	uint64_t end = r->end >= r->start ? r->end : r->start, dur = end - r->start;
	uint64_t tidkey = (uint64_t)f->proc << 32 | r->tid;
	size_t ci;

	if (name == GA_STR_NONE)
		name = f->unknown_str;
	if (name >= m->capstr2a || !m->str2a[name]) {
		if (name >= m->capstr2a) {
			size_t old = m->capstr2a;

			if (ga_util_grow(&m->str2a, &m->capstr2a, (size_t)name + 1, sizeof(*m->str2a)))
				return nomem(f);
			memset(m->str2a + old, 0, (m->capstr2a - old) * sizeof(*m->str2a));
		}
		if (api_stat(f, name, &si))
			return nomem(f);
		m->str2a[name] = si + 1;
	}
	si = m->str2a[name] - 1;
	as = &m->astats[si];
	as->count++;
	as->total += dur;
	if (dur < as->min)
		as->min = dur;
	if (dur > as->max)
		as->max = dur;
	if (r->ret != 0)
		as->errors++;
	m->api_count++;
	m->api_total += dur;
	m->procs[f->proc].api_calls++;

	if (ga_quant_add(&as->durs, dur))
		return nomem(f);

	/* Threads per function: a small cache spares most hash lookups. */
	ci = (si * 31u + r->tid * 17u) % API_CACHE;
	if (f->api_cache[ci][0] != si + 1 || f->api_cache[ci][1] != tidkey) {
		uint32_t *slot;
		int ins = ga_map_insert(&m->api_tids, si, tidkey, &slot);

		if (ins < 0)
			return nomem(f);
		as->threads += (uint64_t)ins;
		f->api_cache[ci][0] = si + 1;
		f->api_cache[ci][1] = tidkey;
	}

	if (m->hooks.api) {
		struct ga_api_call c;

		c.start = r->start;
		c.end = end;
		c.proc = f->proc;
		c.tid = r->tid;
		c.name = as->name;
		c.correlation = r->correlation;
		c.cbid = r->cbid;
		c.domain = r->domain;
		c.ret = r->ret;
		if (m->hooks.api(m->hooks.ctx, m, &c)) {
			snprintf(m->err, sizeof(m->err), "%s: stopped by an output error",
				 m->files[f->file].path);
			return -1;
		}
	}
	return 0;
}

static void on_process(struct fctx *f, const struct gp_rec_process *r)
{
	struct ga_proc *p = &f->m->procs[f->proc];
	struct ga_file *fi = &f->m->files[f->file];

	p->pid = r->pid;
	p->ppid = r->ppid;
	p->host = fstr(f, r->host);
	p->exe = fstr(f, r->exe);
	p->cmdline = fstr(f, r->cmdline);
	p->cupti_version = r->cupti_version;
	p->start_ns = r->start_ns;
	p->cuda_driver = r->cuda_driver;
	p->rank = r->rank;
	p->has_process = 1;
	act_idle_count(f);
	/* As align.c's scan: file ids under 2^26, strings of 127 bytes at most. */
	if (!fi->first_process) {
		const char *h = r->host && r->host < (1u << 26) ? ga_model_str(f->m, p->host) : "";

		fi->first_process = 1;
		if (strlen(h) < sizeof(fi->first_host))
			snprintf(fi->first_host, sizeof(fi->first_host), "%s", h);
	}
}

/*
 * Ask the keep hook about a before anything counts it.  Returns 1 keep,
 * 0 dropped, -1 stop.
 */
static int keep_ask(struct fctx *f, struct ga_act *a)
{
	struct ga_model *m = f->m;
	int r = m->keep(m->keep_ctx, m, a);

	if (r < 0) {
		snprintf(m->err, sizeof(m->err), "%s: out of memory", m->files[f->file].path);
		return -1;
	}
	if (!r) {
		m->dropped++;
		if (m->on_drop)
			m->on_drop(m->on_drop_ctx, a);
	}
	f->nvtx = a->nvtx;
	return r;
}

/* The same for the memcpy, memset or graph record rec (kernels ask in on_kernel). */
static int keep_act(struct fctx *f, const struct gp_rec *rec)
{
	struct ga_act a;

	memset(&a, 0, sizeof(a));
	a.proc = f->proc;
	switch (rec->type) {
	case GP_REC_MEMCPY: {
		const struct gp_rec_memcpy *c = (const void *)rec;

		a.kind = GA_ACT_MEMCPY;
		times(&a, c->start, c->end);
		a.bytes = c->bytes;
		a.copy_kind = copy_kind_of(f, c);
		a.device_id = c->device;
		a.context = c->context;
		a.stream = c->stream;
		a.correlation = c->correlation;
		a.graph_id = c->graph_id;
		a.graph_node = c->graph_node;
		break;
	}
	case GP_REC_MEMSET: {
		const struct gp_rec_memset *c = (const void *)rec;

		a.kind = GA_ACT_MEMSET;
		times(&a, c->start, c->end);
		a.bytes = c->bytes;
		a.device_id = c->device;
		a.context = c->context;
		a.stream = c->stream;
		a.correlation = c->correlation;
		a.graph_id = c->graph_id;
		a.graph_node = c->graph_node;
		break;
	}
	default: {
		const struct gp_rec_graph *g = (const void *)rec;

		a.kind = GA_ACT_GRAPH;
		times(&a, g->start, g->end);
		a.device_id = g->device;
		a.context = g->context;
		a.stream = g->stream;
		a.correlation = g->correlation;
		a.graph_id = g->graph_id;
		break;
	}
	}
	return keep_ask(f, &a);
}

/* A host thread's name: the last one given wins (threads rename themselves). */
static int on_thread(struct fctx *f, const struct gp_rec_thread *r)
{
	uint32_t name = fstr(f, r->name), *slot;

	if (name == GA_STR_NONE)
		return 0;
	if (ga_map_insert(&f->m->thread_names, f->proc, r->tid, &slot) < 0)
		return nomem(f);
	*slot = name;
	return 0;
}

/* A hand-over to the program's CUPTI profiler ends (or the trace does). */
static void close_gap(struct ga_model *m, struct ga_proc *p, uint64_t t)
{
	uint64_t d = t > p->gap_start ? t - p->gap_start : 0;

	p->gap_open = 0;
	p->gaps++;
	p->gap_ns += d;
	m->gaps++;
	m->gap_ns += d;
}

static int on_record(void *ctx, const struct gp_rec *rec)
{
	struct fctx *f = ctx;
	struct ga_model *m = f->m;
	struct ga_proc *p = &m->procs[f->proc];
	int keep;

	f->serial++;
	if (!f->started) {
		/* The header is known once records flow; the PROCESS record may not be. */
		const struct gp_file_header *h = &m->files[f->file].info.header;

		f->started = 1;
		p->pid = h->pid;
		p->clock_id = h->clock_id;
	}
	/* Kernels first: they are most of a trace. */
	if (rec->type == GP_REC_KERNEL)
		return on_kernel(f, (const void *)rec);
	if (m->keep && rec->type >= GP_REC_MEMCPY && rec->type <= GP_REC_GRAPH &&
	    (keep = keep_act(f, rec)) <= 0)
		return keep;
	switch (rec->type) {
	case GP_REC_STRING:
		return on_string(f, (const void *)rec);
	case GP_REC_PROCESS:
		on_process(f, (const void *)rec);
		return 0;
	case GP_REC_CLOCK_SYNC:
		if (!p->clock_syncs++) {
			const struct gp_rec_clock_sync *c = (const void *)rec;

			m->files[f->file].first_sync = 1;
			m->files[f->file].first_sync_ns = (int64_t)(c->realtime_ns - c->trace_ns);
		}
		return 0;
	case GP_REC_DEVICE:
		return on_device(f, (const void *)rec);
	case GP_REC_KERNEL:
		return on_kernel(f, (const void *)rec);
	case GP_REC_MEMCPY:
		return on_memcpy(f, (const void *)rec);
	case GP_REC_MEMSET:
		return on_memset(f, (const void *)rec);
	case GP_REC_GRAPH:
		return on_graph(f, (const void *)rec);
	case GP_REC_API:
		/* Observers see API records too (launch latency). */
		if (on_api(f, (const void *)rec))
			return -1;
		if (observe_rec(m, f->proc, rec))
			return nomem(f);
		return 0;
	case GP_REC_THREAD:
		return on_thread(f, (const void *)rec);
	case GP_REC_OVERHEAD: {
		const struct gp_rec_overhead *o = (const void *)rec;

		if (o->end > o->start)
			m->overhead_ns += o->end - o->start;
		m->overheads++;
		return 0;
	}
	case GP_REC_LOST: {
		const struct gp_rec_lost *l = (const void *)rec;
		uint32_t cause = l->cause < GP_LOST_CAUSE_COUNT ? l->cause : 0;

		m->lost_saturated |= sat_add(&m->lost[cause], l->count) |
				     sat_add(&m->lost_records_total, l->count) |
				     sat_add(&p->lost_sum, l->count);
		if (cause == GP_LOST_HANDOVER && l->h.aux == GP_LOST_GAP_START && !p->gap_open) {
			p->gap_open = 1;
			p->gap_start = l->time;
		} else if (cause == GP_LOST_HANDOVER && l->h.aux == GP_LOST_GAP_END && p->gap_open) {
			close_gap(m, p, l->time);
		}
		return 0;
	}
	case GP_REC_CONFIG:
		memcpy(&p->config, rec, sizeof(p->config));
		p->has_config = 1;
		act_idle_count(f);
		return 0;
	case GP_REC_CAPTURE_RANGE: {
		const struct gp_rec_capture_range *c = (const void *)rec;
		struct ga_window *w;

		if (ga_util_grow(&m->windows, &m->capwindows, m->nwindows + 1, sizeof(*w)))
			return nomem(f);
		w = &m->windows[m->nwindows++];
		w->start = c->start;
		w->end = c->end >= c->start ? c->end : c->start;
		w->proc = f->proc;
		w->kind = c->kind;
		w->name = c->name ? fstr(f, c->name) : 0;
		p->nwindows++;
		return 0;
	}
	case GP_REC_FLIGHT:
		memcpy(&p->flight, rec, sizeof(p->flight));
		p->has_flight = 1;
		return 0;
	case GP_REC_END: {
		const struct gp_rec_end *e = (const void *)rec;

		if (p->gap_open)
			close_gap(m, p, e->end_ns);
		p->finished = 1;
		p->end_ns = e->end_ns;
		p->end_records = e->records;
		p->end_lost = e->lost;
		return 0;
	}
	default:
		if (observe_rec(m, f->proc, rec))
			return nomem(f);
		return 0;
	}
}

uint32_t ga_model_fstr(struct ga_model *m, uint32_t id)
{
	return m->reading ? fstr(m->reading, id) : GA_STR_NONE;
}

static int add(struct ga_model *m, const char *path, const void *buf, size_t len, int mem)
{
	struct fctx f;
	struct ga_file *file;
	struct ga_proc *p;
	struct ga_align_reader *ar = NULL, *aar = NULL;
	ga_reader_fn fn = on_record, afn = NULL;
	void *ctx = &f, *actx = NULL;
	uint64_t atypes = 0;
	const struct ga_reader_pace *pace = NULL;
	char err[sizeof(m->err)];
	int rc;

	if (m->finished) {
		snprintf(m->err, sizeof(m->err), "%s: model already finished", path);
		return GA_READ_EOPEN;
	}
	if (ga_util_grow(&m->files, &m->capfiles, m->nfiles + 1, sizeof(*m->files)) ||
	    ga_util_grow(&m->procs, &m->capprocs, m->nprocs + 1, sizeof(*m->procs)))
		goto oom;
	file = &m->files[m->nfiles];
	memset(file, 0, sizeof(*file));
	file->path = strdup(path);
	if (!file->path)
		goto oom;
	file->proc = (uint32_t)m->nprocs;
	p = &m->procs[m->nprocs];
	memset(p, 0, sizeof(*p));
	p->file = (uint32_t)m->nfiles;
	p->rank = GA_NO_RANK;

	memset(&f, 0, sizeof(f));
	f.m = m;
	f.smap.group_ops = m->group_ops ? GA_STRMAP_GROUP : 0;
	f.file = (uint32_t)m->nfiles;
	f.proc = (uint32_t)m->nprocs;
	m->nfiles++;
	m->nprocs++;
	f.unknown_str = ga_strtab_intern(&m->strs, "(unknown)", 9);
	if (f.unknown_str == GA_STR_NOMEM)
		goto oom;
	m->err[0] = '\0';
	if (f.file && file_done(m, m->files[f.file - 1].proc))
		goto oom;
	if (f.file < m->nshifts && m->shifts[f.file]) {
		/* Times moved onto the job's common clock as they are read. */
		ar = malloc(sizeof(*ar));
		if (!ar)
			goto oom;
		ar->fn = on_record;
		ar->ctx = &f;
		ar->shift = m->shifts[f.file];
		fn = ga_align_reader_fn;
		ctx = ar;
	}
	if (m->ahead.begin && (!mem || buf))
		afn = m->ahead.begin(m->ahead.ctx, f.proc, &actx, &atypes, &pace);
	if (afn && ar) {
		/* The look-ahead reads the same times. */
		aar = malloc(sizeof(*aar));
		if (!aar) {
			free(ar);
			goto oom;
		}
		aar->fn = afn;
		aar->ctx = actx;
		aar->shift = ar->shift;
		afn = ga_align_reader_fn;
		actx = aar;
	}
	m->reading = &f;
	if (afn && pace && ar) {
		/* A paced scan reads times as the file has them (ranges.c pace: no shift). */
		snprintf(err, sizeof(err), "%s: a paced scan of a shifted trace", path);
		rc = GA_READ_ECALLBACK;
		m->ahead_retry = 1;
	} else if (afn && pace) {
		rc = ga_reader_read_paced(path, mem ? buf : NULL, len, afn, actx, atypes, pace, fn,
					  ctx, &file->info, err, sizeof(err));
		/* Stopped by the look-ahead, not by the model's own error. */
		if (rc == GA_READ_EHOLD || (rc == GA_READ_ECALLBACK && !m->err[0]))
			m->ahead_retry = 1;
	} else if (afn)
		rc = ga_reader_read_ahead(path, mem ? buf : NULL, len, afn, actx, atypes, GA_MODEL_AHEAD, fn,
					  ctx, &file->info, err, sizeof(err));
	else if (mem)
		rc = ga_reader_read_mem(path, buf, len, fn, ctx, &file->info, err, sizeof(err));
	else
		rc = ga_reader_read_file(path, fn, ctx, &file->info, err, sizeof(err));
	free(ar);
	free(aar);
	m->reading = NULL;
	act_idle_count(&f);
	if (rc != GA_READ_OK && !(rc == GA_READ_ECALLBACK && m->err[0]))
		snprintf(m->err, sizeof(m->err), "%s", err);
	if (m->names_lost && rc == GA_READ_OK) {
		/* Built again keeping every string (analysis.h keep_op_names): no error. */
		snprintf(m->err, sizeof(m->err), "%s: an op name read as another name", path);
		m->ahead_retry = 1;
		rc = GA_READ_ECALLBACK;
	}
	if (f.done_pair)
		pair_release(&f, f.done_pair - 1, f.done_corr);
	ga_strmap_free(&f.smap);
	ga_map_free(&f.devmap);

	file = &m->files[f.file];
	p = &m->procs[f.proc];
	if (!f.started)
		p->pid = file->info.header.pid;
	p->chunk_lost = file->info.chunk_lost;
	m->lost_saturated |= sat_add(&m->chunk_lost, file->info.chunk_lost);
	m->records += file->info.records;
	m->unknown += file->info.unknown;
	m->malformed += file->info.malformed;
	return rc;
oom:
	snprintf(m->err, sizeof(m->err), "%s: out of memory", path);
	return GA_READ_EOPEN;
}

int ga_model_add_file(struct ga_model *m, const char *path)
{
	return add(m, path, NULL, 0, 0);
}

int ga_model_add_mem(struct ga_model *m, const char *name, const void *buf, size_t len)
{
	return add(m, name, buf, len, 1);
}

uint64_t ga_model_lost_unattributed(const struct ga_model *m)
{
	uint64_t u = 0;
	size_t i;

	/*
	 * Chunk headers and the END record may count losses that no LOST
	 * record attributes to a cause; the larger count wins per file.
	 */
	for (i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];
		uint64_t t = p->chunk_lost > p->end_lost ? p->chunk_lost : p->end_lost;

		if (t > p->lost_sum)
			sat_add(&u, t - p->lost_sum);
	}
	return u;
}

/* Loss causes (GP_LOST_*): the exports' key, the report's name; [0] is any cause this reader does not know. */
static const struct {
	const char *key, *name;
} lost_causes[GP_LOST_CAUSE_COUNT] = {
	[0] = { "other", "unknown cause" },
	[GP_LOST_CUPTI_DROPPED] = { "cupti_dropped", "dropped by CUPTI" },
	[GP_LOST_RING_FULL] = { "ring_full", "recorder ring full" },
	[GP_LOST_NO_TIMESTAMP] = { "no_timestamp", "no timestamp" },
	[GP_LOST_WRITE_ERROR] = { "write_error", "write error" },
	[GP_LOST_NO_BUFFER] = { "no_buffer", "no CUPTI buffer" },
	[GP_LOST_CUPTI_ERROR] = { "cupti_error", "CUPTI error" },
	[GP_LOST_HANDOVER] = { "handover", "taken by the program's CUPTI profiler" },
};

const char *ga_model_lost_key(unsigned cause)
{
	return lost_causes[cause < GP_LOST_CAUSE_COUNT ? cause : 0].key;
}

const char *ga_model_lost_name(unsigned cause)
{
	return lost_causes[cause < GP_LOST_CAUSE_COUNT ? cause : 0].name;
}

uint64_t ga_model_lost_total(const struct ga_model *m)
{
	uint64_t t = m->lost_records_total;

	sat_add(&t, ga_model_lost_unattributed(m));
	return t;
}

int ga_model_lost_saturated(const struct ga_model *m)
{
	return m->lost_saturated || ga_model_lost_total(m) == UINT64_MAX;
}

int ga_model_times_implausible(const struct ga_model *m)
{
	if (m->last_end > m->first_start && m->last_end - m->first_start > GA_MODEL_PLAUSIBLE_NS)
		return 1;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];

		if (p->finished && p->has_process && p->end_ns > p->start_ns &&
		    p->end_ns - p->start_ns > GA_MODEL_PLAUSIBLE_NS)
			return 1;
	}
	return 0;
}

/* ---- finishing: busy time, medians, labels ---- */

int ga_model_busy_finish(struct ga_model *m, uint32_t di)
{
	struct ga_device *d = &m->devs[di];
	uint64_t first, last;

	if (ga_busy_flush(&d->busy))
		return -1;
	d->busy_ns = ga_busy_total(&d->busy);
	if (ga_busy_span(&d->busy, &first, &last)) {
		if (first < m->first_start)
			m->first_start = first;
		if (last > m->last_end)
			m->last_end = last;
	}
	return 0;
}

/* Totals per label, device and process, from the per-row counts. */
static void sum_totals(struct ga_model *m)
{
	size_t i;

	for (i = 0; i < m->nlabels; i++)
		m->labels[i].count = m->labels[i].total = 0;
	for (i = 0; i < m->nkstats; i++) {
		m->labels[m->kstats[i].label].count += m->kstats[i].count;
		m->labels[m->kstats[i].label].total += m->kstats[i].total;
	}
	for (i = 0; i < GA_COPY_KIND_MAX; i++) {
		/* Staged peer copies are activities as their legs, one per device. */
		if (!m->copy[i].label || i == GA_COPY_STAGED_PEER)
			continue;
		m->labels[m->copy[i].label - 1].count += m->copy[i].count;
		m->labels[m->copy[i].label - 1].total += m->copy[i].total;
	}
	for (i = 0; i < 2; i++) {
		if (!m->leg_label[i])
			continue;
		m->labels[m->leg_label[i] - 1].count += m->leg_st[i].count;
		m->labels[m->leg_label[i] - 1].total += m->leg_st[i].total;
	}
	if (m->memset_st.label) {
		m->labels[m->memset_st.label - 1].count += m->memset_st.count;
		m->labels[m->memset_st.label - 1].total += m->memset_st.total;
	}
	for (i = 0; i < m->ngraphs; i++) {
		if (!m->graphs[i].label)
			continue;
		m->labels[m->graphs[i].label - 1].count += m->graphs[i].launches;
		m->labels[m->graphs[i].label - 1].total += m->graphs[i].total;
	}
	for (i = 0; i < m->ndevs; i++)
		m->devs[i].count = m->devs[i].total = 0;
	for (i = 0; i < m->nprocs; i++)
		m->procs[i].activities = 0;
	for (i = 0; i < m->ndevrows; i++) {
		const struct ga_devrow *r = &m->devrows[i];

		m->devs[r->dev].count += r->count;
		m->devs[r->dev].total += r->total;
		m->procs[r->proc].activities += r->count;
	}
}

int ga_model_finish(struct ga_model *m)
{
	struct ga_map tids = { 0 };
	size_t i;

	if (m->finished)
		return 0;
	m->finished = 1;
	sum_totals(m);
	for (i = 0; i < m->ndevs; i++)
		if (ga_model_busy_finish(m, (uint32_t)i) || shared_late(m, (uint32_t)i))
			return -1;
	for (i = 0; i < m->nkstats && !m->no_row_stats; i++) {
		struct ga_kstat *k = &m->kstats[i];

		ga_quant_mp(&k->durs, &k->med, &k->p90, &k->p99);
		k->med_est = ga_quant_estimated(&k->durs);
		k->stddev = ga_quant_stddev(&k->durs);
	}
	for (i = 0; i < m->nmemops && !m->no_row_stats; i++) {
		m->memops[i].med = ga_quant_median(&m->memops[i].durs);
		m->memops[i].med_est = ga_quant_estimated(&m->memops[i].durs);
		m->memops[i].stddev = ga_quant_stddev(&m->memops[i].durs);
	}
	for (i = 0; i < m->nastats && !m->no_row_stats; i++) {
		struct ga_astat *a = &m->astats[i];

		ga_quant_mp(&a->durs, &a->med, &a->p90, &a->p99);
		a->med_est = ga_quant_estimated(&a->durs);
		a->stddev = ga_quant_stddev(&a->durs);
	}
	if (m->rows.rsize && ga_xsort_done(&m->rows)) {
		snprintf(m->err, sizeof(m->err), "the timeline's rows: %s", m->rows.err);
		return -1;
	}

	for (i = 0; i < m->ndevrows; i++) {
		struct ga_devrow *r = &m->devrows[i];
		char buf[256], who[192];

		if (m->nprocs > 1)
			snprintf(buf, sizeof(buf), "cuda:%u [%s]", r->id,
				 ga_ranks_proc_name(m, r->proc, who, sizeof(who)));
		else
			snprintf(buf, sizeof(buf), "cuda:%u", r->id);
		r->label = ga_strtab_intern(&m->strs, buf, strlen(buf));
		if (r->label == GA_STR_NOMEM)
			return -1;
	}

	m->streams = m->stream_set.n;
	for (i = 0; i < m->api_tids.cap; i++) {
		uint32_t *slot;

		if (!m->api_tids.e[i].used)
			continue;
		if (ga_map_insert(&tids, m->api_tids.e[i].b, 0, &slot) < 0) {
			ga_map_free(&tids);
			return -1;
		}
	}
	m->api_threads = tids.n;
	ga_map_free(&tids);
	if (m->first_start == UINT64_MAX)
		m->first_start = m->last_end = 0;
	return 0;
}

/* ---- orderings for tables ---- */

/* Most time first, then by name: the order of every statistics table. */
static int by_total(const struct ga_model *m, uint64_t ta, uint32_t na, uint64_t tb, uint32_t nb)
{
	if (ta != tb)
		return ta > tb ? -1 : 1;
	return strcmp(ga_model_str(m, na), ga_model_str(m, nb));
}

static int cmp_kstat(const void *pa, const void *pb, void *ctx)
{
	const struct ga_model *m = ctx;
	const struct ga_kstat *a = &m->kstats[*(const uint32_t *)pa];
	const struct ga_kstat *b = &m->kstats[*(const uint32_t *)pb];

	return by_total(m, a->total, a->name, b->total, b->name);
}

static int cmp_astat(const void *pa, const void *pb, void *ctx)
{
	const struct ga_model *m = ctx;
	const struct ga_astat *a = &m->astats[*(const uint32_t *)pa];
	const struct ga_astat *b = &m->astats[*(const uint32_t *)pb];

	return by_total(m, a->total, a->name, b->total, b->name);
}

static int cmp_label(const void *pa, const void *pb, void *ctx)
{
	const struct ga_model *m = ctx;
	const struct ga_label *a = &m->labels[*(const uint32_t *)pa];
	const struct ga_label *b = &m->labels[*(const uint32_t *)pb];

	return by_total(m, a->total, a->str, b->total, b->str);
}

static uint32_t *order(const struct ga_model *m, size_t n,
		       int (*cmp)(const void *, const void *, void *))
{
	uint32_t *o = malloc((n ? n : 1) * sizeof(*o));
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < n; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, n, sizeof(*o), cmp, (void *)m);
	return o;
}

uint32_t *ga_model_order_kernels(const struct ga_model *m)
{
	return order(m, m->nkstats, cmp_kstat);
}

uint32_t *ga_model_order_api(const struct ga_model *m)
{
	return order(m, m->nastats, cmp_astat);
}

static int cmp_memop(const void *pa, const void *pb, void *ctx)
{
	const struct ga_model *m = ctx;
	const struct ga_memop *a = &m->memops[*(const uint32_t *)pa];
	const struct ga_memop *b = &m->memops[*(const uint32_t *)pb];

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return (a->src << 8 | a->dst) < (b->src << 8 | b->dst) ? -1 : 1;
}

uint32_t *ga_model_order_memops(const struct ga_model *m)
{
	return order(m, m->nmemops, cmp_memop);
}

uint32_t *ga_model_order_labels(const struct ga_model *m)
{
	return order(m, m->nlabels, cmp_label);
}
