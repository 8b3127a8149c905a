/*
 * The GPU over time (see gpusamples.h): the observer that keeps each
 * series and its samples, and the finish that computes each metric's
 * statistics, the time throttled, and the averages over kernels and NVTX
 * ranges.  Runs offline only.
 */
#include "model/gpusamples.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ranges.h"

void ga_gs_init(struct ga_gpusamples *g)
{
	memset(g, 0, sizeof(*g));
}

int ga_gs_any(const struct ga_gpusamples *g)
{
	return g->nseries != 0;
}

const char *ga_gs_source(uint32_t source)
{
	switch (source) {
	case GP_GPU_SRC_PM: return "pm";
	case GP_GPU_SRC_NVML: return "nvml";
	case GP_GPU_SRC_GPM: return "gpm";
	default: return "?";
	}
}

const char *ga_gs_status(uint32_t status)
{
	switch (status) {
	case GP_GPU_OK: return "";
	case GP_GPU_NO_PERMISSION: return "counters restricted to admin users";
	case GP_GPU_UNSUPPORTED: return "not supported on this device";
	case GP_GPU_ERROR: return "stopped by an error";
	case GP_GPU_BUSY: return "counters held by another profiler";
	case GP_GPU_NO_LIBRARY: return "library missing";
	case GP_GPU_OVERFLOW: return "samples lost to a buffer overflow";
	default: return "unknown status";
	}
}

const char *ga_gs_reason(unsigned b)
{
	static const char *const names[GA_GS_REASONS] = {
		"gpu idle", "application clocks", "sw power cap", "hw slowdown",
		"sync boost", "sw thermal", "hw thermal", "power brake",
		"display clocks",
	};

	return b < GA_GS_REASONS && names[b] ? names[b] : "other";
}

void ga_gs_describe(const char *name, struct ga_gs_unit *u)
{
	static const struct {
		const char *name;
		struct ga_gs_unit u;
	} known[] = {
		{ "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", { "SM active", "%", 1 } },
		{ "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
		  { "SM issue", "%", 1 } },
		{ "sm__throughput.avg.pct_of_peak_sustained_elapsed", { "SM throughput", "%", 1 } },
		{ "dram__bytes_read.sum.per_second", { "DRAM read", "GB/s", 1e-9 } },
		{ "dram__bytes_write.sum.per_second", { "DRAM write", "GB/s", 1e-9 } },
		{ "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
		  { "tensor active", "%", 1 } },
		{ "lts__t_bytes.sum.per_second", { "L2", "GB/s", 1e-9 } },
		{ "pcie__read_bytes.sum.per_second", { "PCIe read", "GB/s", 1e-9 } },
		{ "pcie__write_bytes.sum.per_second", { "PCIe write", "GB/s", 1e-9 } },
		{ "nvlrx__bytes.sum.per_second", { "NVLink rx", "GB/s", 1e-9 } },
		{ "nvltx__bytes.sum.per_second", { "NVLink tx", "GB/s", 1e-9 } },
		{ "gpc__cycles_elapsed.avg.per_second", { "GPC clock", "MHz", 1e-6 } },
		{ "nvml.power_w", { "power", "W", 1 } },
		{ "nvml.sm_clock_mhz", { "SM clock", "MHz", 1 } },
		{ "nvml.mem_clock_mhz", { "memory clock", "MHz", 1 } },
		{ "nvml.temperature_c", { "temperature", "C", 1 } },
		{ "nvml.memory_used_bytes", { "memory used", "GiB", 1.0 / (1u << 30) } },
		{ "nvml.clock_event_reasons", { "clock event reasons", "mask", 1 } },
		/* Not recorded: the time held back by the reasons, as diff compares it. */
		{ "nvml.throttled_pct", { "time throttled", "%", 1 } },
		{ "nvml.gpu_util_pct", { "GPU busy", "%", 1 } },
		{ "gpm.sm_util_pct", { "GPM SM util", "%", 1 } },
		{ "gpm.sm_occupancy_pct", { "GPM occupancy", "%", 1 } },
		{ "gpm.tensor_util_pct", { "GPM tensor util", "%", 1 } },
		{ "gpm.dram_bw_util_pct", { "GPM DRAM bw", "%", 1 } },
		{ "gpm.fp32_util_pct", { "GPM FP32 util", "%", 1 } },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].name, name)) {
			*u = known[i].u;
			return;
		}
	u->label = name;
	u->unit = "";
	u->scale = 1;
}

/* ---- the observer ---- */

/* The trace of proc says no sampler was on: it holds no samples. */
static int proc_unsampled(const struct ga_model *m, uint32_t proc)
{
	const struct ga_proc *p = &m->procs[proc];

	return p->has_config && (p->config.trace & GP_TRACE_SAMPLERS_SAID) &&
	       !(p->config.trace & (GP_TRACE_GPU_METRICS | GP_TRACE_GPU_TELEMETRY));
}

static int on_series(struct ga_gpusamples *g, struct ga_model *m, uint32_t proc,
		     const struct gp_rec_gpu_series *r)
{
	const uint32_t *ids = (const void *)(r + 1);
	struct ga_gs_series *s;
	uint32_t *slot;
	int ins = ga_map_insert(&g->smap, proc, r->id, &slot);

	if (ins < 0)
		return -1;
	if (ins == 0) {
		/* Again at a new file or with a new status: the status is the news. */
		s = &g->series[*slot - 1];
		if (r->status != GP_GPU_OK)
			s->status = r->status;
		return 0;
	}
	if (ga_util_grow(&g->series, &g->capseries, g->nseries + 1, sizeof(*g->series))) {
		ga_map_remove(&g->smap, proc, r->id);
		return -1;
	}
	s = &g->series[g->nseries];
	memset(s, 0, sizeof(*s));
	g->series_unasked += proc < m->nprocs && proc_unsampled(m, proc);
	s->proc = proc;
	s->id = r->id;
	s->device = r->device;
	s->source = r->source;
	s->status = r->status;
	s->interval_ns = r->interval_ns;
	s->n = r->h.aux;
	s->reasons_at = -1;
	s->m = calloc(s->n ? s->n : 1, sizeof(*s->m));
	if (!s->m) {
		ga_map_remove(&g->smap, proc, r->id);
		return -1;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		const char *name;

		s->m[i].name = ga_model_fstr(m, ids[i]);
		s->m[i].min = INFINITY;
		s->m[i].max = -INFINITY;
		name = ga_model_str(m, s->m[i].name);
		if (name && !strcmp(name, "nvml.clock_event_reasons"))
			s->reasons_at = (int)i;
	}
	*slot = (uint32_t)++g->nseries;
	return 0;
}

static int on_sample(struct ga_gpusamples *g, uint32_t proc, const struct gp_rec_gpu_sample *r)
{
	uint32_t *slot = ga_map_find(&g->smap, proc, r->series);
	const double *v = (const void *)(r + 1);
	struct ga_gs_series *s;
	struct ga_gs_sample *x;

	if (!slot || r->end < r->start) {
		g->malformed++;
		return 0;
	}
	s = &g->series[*slot - 1];
	if (r->h.aux != s->n) {
		g->malformed++;
		return 0;
	}
	if (ga_util_grow(&s->s, &s->caps, s->ns + 1, sizeof(*s->s)) ||
	    ga_util_grow(&s->values, &s->capvalues, s->nvalues + s->n, sizeof(*s->values)))
		return -1;
	x = &s->s[s->ns++];
	x->start = r->start;
	x->end = r->end;
	x->vi = s->nvalues;
	memcpy(s->values + s->nvalues, v, s->n * sizeof(double));
	s->nvalues += s->n;
	return 0;
}

static int proc_has_series(const struct ga_gpusamples *g, uint32_t proc)
{
	for (size_t i = 0; i < g->nseries; i++)
		if (g->series[i].proc == proc)
			return 1;
	return 0;
}

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_gpusamples *g = ctx;
	int rc = 0;

	if (rec->type == GP_REC_GPU_SERIES)
		rc = on_series(g, m, proc, (const void *)rec);
	else if (rec->type == GP_REC_GPU_SAMPLE)
		rc = on_sample(g, proc, (const void *)rec);
	return rc ? -1 : 0;
}

/* An unlinked temporary file in $TMPDIR (else /tmp), or NULL. */
static FILE *spill_file(void)
{
	return ga_util_tmpfile("gs", NULL);
}

/*
 * Moves the kernels kept in memory (a full block) to the spill file while
 * no series is known: most traces have none, and then the file is never
 * read.  Without a file they stay in memory, as they would with a series.
 * 0, or -1 when the file cannot be written.
 */
static int spill(struct ga_gpusamples *g)
{
	if (!g->spill && !g->spill_failed && !(g->spill = spill_file()))
		g->spill_failed = 1;
	if (!g->spill)
		return 0;
	if (fwrite(g->k, sizeof(*g->k), g->nk, g->spill) != g->nk) {
		fputs("gpuprof: writing a temporary file of kernels failed\n", stderr);
		return -1;
	}
	g->nspilled += g->nk;
	g->nk = 0;
	return 0;
}

/* The kernels spilled before those in memory, in the order they came.  0, or -1. */
static int unspill(struct ga_gpusamples *g)
{
	struct ga_gs_kernel *k;
	size_t n;

	if (!g->spill || !g->nspilled)
		return 0;
	n = g->nspilled + g->nk;
	if (n > SIZE_MAX / sizeof(*k) || !(k = malloc(n * sizeof(*k))))
		return -1;
	if (fflush(g->spill) || fseeko(g->spill, 0, SEEK_SET) ||
	    fread(k, sizeof(*k), g->nspilled, g->spill) != g->nspilled) {
		fputs("gpuprof: reading a temporary file of kernels failed\n", stderr);
		free(k);
		return -1;
	}
	if (g->nk)
		memcpy(k + g->nspilled, g->k, g->nk * sizeof(*k));
	free(g->k);
	g->k = k;
	g->nk = g->capk = n;
	g->nspilled = 0;
	fclose(g->spill);
	g->spill = NULL;
	return 0;
}

static void spill_close(struct ga_gpusamples *g)
{
	if (g->spill)
		fclose(g->spill);
	g->spill = NULL;
	g->nspilled = 0;
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_gpusamples *g = ctx;

	/* Not called for a process recorded without samples (act_idle()). */
	(void)m;
	if (a->kind == GA_ACT_KERNEL) {
		if (g->nk + g->nspilled < GA_GS_KERNELS_MAX || proc_has_series(g, a->proc)) {
			struct ga_gs_kernel *k;

			if (g->nk == GA_GS_KERNELS_BLOCK && g->nseries == 0 && spill(g))
				return -1;
			if (ga_util_grow(&g->k, &g->capk, g->nk + 1, sizeof(*g->k)))
				return -1;
			k = &g->k[g->nk++];
			k->start = a->start;
			k->end = a->end;
			k->proc = a->proc;
			k->device = a->device_id;
			k->name = a->name;
			k->reserved = 0;
		} else {
			g->kernels_unkept++;
		}
	}
	return 0;
}

/* A process recorded without samples (proc_unsampled()): its kernels only counted, by the model. */
static int act_idle(void *ctx, const struct ga_model *m, uint32_t proc)
{
	(void)ctx;
	return proc_unsampled(m, proc);
}

int ga_gs_bind(struct ga_gpusamples *g, struct ga_model *m)
{
	if (ga_model_observe(m, g, obs_rec,
			     (1ull << GP_REC_GPU_SERIES) | (1ull << GP_REC_GPU_SAMPLE),
			     g->samples_only ? NULL : obs_act))
		return -1;
	if (!g->samples_only)
		ga_model_act_idle(m, g, act_idle, &g->kernels_unsampled);
	return 0;
}

/* ---- finish ---- */

static int cmp_sample(const void *pa, const void *pb)
{
	const struct ga_gs_sample *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_series(const void *pa, const void *pb)
{
	const struct ga_gs_series *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void series_stats(struct ga_gs_series *s)
{
	for (size_t j = 0; j < s->ns; j++) {
		const struct ga_gs_sample *x = &s->s[j];
		const double *v = s->values + x->vi;
		double w = (double)(x->end - x->start);

		if (!j || x->start < s->first)
			s->first = x->start;
		if (x->end > s->last)
			s->last = x->end;
		for (uint32_t i = 0; i < s->n; i++) {
			struct ga_gs_metric *mt = &s->m[i];

			if (isnan(v[i]))
				continue;
			mt->samples++;
			if (x->end > mt->last_end)
				mt->last_end = x->end;
			mt->wsum += v[i] * w;
			mt->w += w;
			if (v[i] < mt->min)
				mt->min = v[i];
			if (v[i] > mt->max)
				mt->max = v[i];
		}
		if (s->reasons_at >= 0 && !isnan(v[s->reasons_at]) && v[s->reasons_at] >= 0) {
			uint64_t bits = (uint64_t)v[s->reasons_at];

			s->sampled_ns += x->end - x->start;
			if (bits & GA_GS_THROTTLE_MASK)
				s->throttled_ns += x->end - x->start;
			for (unsigned b = 0; b < GA_GS_REASONS; b++)
				if (bits & (1ull << b))
					s->reason_ns[b] += x->end - x->start;
		}
	}
	for (uint32_t i = 0; i < s->n; i++) {
		struct ga_gs_metric *mt = &s->m[i];

		if (!mt->samples) {
			mt->avg = mt->min = mt->max = NAN;
			continue;
		}
		/* Samples of no width (none expected) count plainly. */
		mt->avg = mt->w > 0 ? mt->wsum / mt->w : mt->min;
	}
}

/* First sample of s that ends after t (samples by start, contiguous or apart). */
static size_t first_after(const struct ga_gs_series *s, uint64_t t)
{
	size_t lo = 0, hi = s->ns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->s[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A long sample before a short one can still reach past t. */
	while (lo > 0 && s->s[lo - 1].end > t)
		lo--;
	return lo;
}

/* Adds the window [a, b) of series s to attr x. */
static void window(const struct ga_gs_series *s, struct ga_gs_attr *x, uint64_t a, uint64_t b)
{
	x->count++;
	x->time_ns += b - a;
	for (size_t j = first_after(s, a); j < s->ns && s->s[j].start < b; j++) {
		const struct ga_gs_sample *y = &s->s[j];
		const double *v = s->values + y->vi;
		uint64_t lo = y->start > a ? y->start : a, hi = y->end < b ? y->end : b;
		/* A zero-length window (a mark, an instant kernel) takes the sample whole. */
		double w = hi > lo ? (double)(hi - lo) : (a == b ? 1.0 : 0.0);

		if (w <= 0)
			continue;
		x->samples++;
		for (uint32_t i = 0; i < s->n; i++)
			if (!isnan(v[i])) {
				x->wsum[i] += v[i] * w;
				x->w[i] += w;
			}
	}
}

struct attrs {
	struct ga_gs_attr *a;
	size_t n, cap;
	struct ga_map map;         /* (series, key) -> index + 1 */
};

static struct ga_gs_attr *attr_get(struct attrs *t, const struct ga_gs_series *s, uint32_t si,
				   uint32_t key)
{
	uint32_t *slot;
	int r = ga_map_insert(&t->map, si, key, &slot);
	struct ga_gs_attr *x;

	if (r < 0)
		return NULL;
	if (r == 0)
		return &t->a[*slot - 1];
	if (ga_util_grow(&t->a, &t->cap, t->n + 1, sizeof(*t->a)))
		return NULL;
	x = &t->a[t->n];
	memset(x, 0, sizeof(*x));
	x->key = key;
	x->series = si;
	x->wsum = calloc(2 * (size_t)(s->n ? s->n : 1), sizeof(double));
	if (!x->wsum)
		return NULL;
	x->w = x->wsum + s->n;
	*slot = (uint32_t)++t->n;
	return x;
}

int ga_gs_cmp_attr(const void *pa, const void *pb, void *m)
{
	const struct ga_gs_attr *a = pa, *b = pb;

	if (a->series != b->series)
		return a->series < b->series ? -1 : 1;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	return a->key == b->key ? 0 : strcmp(ga_model_str(m, a->key), ga_model_str(m, b->key));
}

static int cmp_kernel(const void *pa, const void *pb)
{
	const struct ga_gs_kernel *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int attribute(struct ga_gpusamples *g, struct ga_model *m, const struct ga_ranges *rg)
{
	struct attrs kt = { 0 }, rt = { 0 };
	int rc = -1;
	size_t i, j;

	if (g->nk > 1)
		qsort(g->k, g->nk, sizeof(*g->k), cmp_kernel);
	for (i = 0; i < g->nseries; i++) {
		const struct ga_gs_series *s = &g->series[i];

		if (!s->ns)
			continue;
		for (j = 0; j < g->nk; j++) {
			const struct ga_gs_kernel *k = &g->k[j];
			struct ga_gs_attr *x;

			if (k->proc != s->proc || k->device != s->device)
				continue;
			if (k->end <= s->first || k->start >= s->last)
				continue;
			if (!(x = attr_get(&kt, s, (uint32_t)i, k->name)))
				goto out;
			window(s, x, k->start, k->end);
		}
		for (j = 0; rg && j < rg->nranges; j++) {
			const struct ga_ranges_range *r = &rg->ranges[j];
			struct ga_gs_attr *x;

			if (r->proc != s->proc || r->end <= s->first || r->start >= s->last)
				continue;
			if (!(x = attr_get(&rt, s, (uint32_t)i, rg->keys[r->key].label)))
				goto out;
			window(s, x, r->start, r->end);
		}
	}
	rc = 0;
out:
	ga_map_free(&kt.map);
	ga_map_free(&rt.map);
	if (kt.n > 1)
		qsort_r(kt.a, kt.n, sizeof(*kt.a), ga_gs_cmp_attr, m);
	if (rt.n > 1)
		qsort_r(rt.a, rt.n, sizeof(*rt.a), ga_gs_cmp_attr, m);
	g->kern = kt.a;
	g->nkern = kt.n;
	g->ranges = rt.a;
	g->nranges = rt.n;
	return rc;
}

int ga_gs_finish(struct ga_gpusamples *g, struct ga_model *m, const struct ga_ranges *rg)
{
	size_t i;

	ga_map_free(&g->smap);
	if (!g->nseries) {
		spill_close(g);
		free(g->k);
		g->k = NULL;
		g->nk = 0;
		return 0;
	}
	if (g->nseries > 1)
		qsort(g->series, g->nseries, sizeof(*g->series), cmp_series);
	for (i = 0; i < g->nseries; i++) {
		struct ga_gs_series *s = &g->series[i];

		if (s->ns > 1)
			qsort(s->s, s->ns, sizeof(*s->s), cmp_sample);
		series_stats(s);
		if ((s->label = ga_model_device_label(m, s->proc, s->device)) == GA_STR_NOMEM)
			return -1;
	}
	if (unspill(g) || attribute(g, m, rg))
		return -1;
	free(g->k);
	g->k = NULL;
	g->nk = 0;
	return 0;
}

void ga_gs_free(struct ga_gpusamples *g)
{
	size_t i;

	for (i = 0; i < g->nseries; i++) {
		free(g->series[i].m);
		free(g->series[i].s);
		free(g->series[i].values);
	}
	for (i = 0; i < g->nkern; i++)
		free(g->kern[i].wsum);
	for (i = 0; i < g->nranges; i++)
		free(g->ranges[i].wsum);
	free(g->series);
	free(g->kern);
	free(g->ranges);
	free(g->k);
	spill_close(g);
	ga_map_free(&g->smap);
	memset(g, 0, sizeof(*g));
}
