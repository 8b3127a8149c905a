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

#include "base/xsort.h"
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

/* Bytes of one spilled sample of s: start, end, its values. */
static size_t srec_size(const struct ga_gs_series *s)
{
	return 2 * sizeof(uint64_t) + (size_t)s->n * sizeof(double);
}

/*
 * The samples of s in memory (a full block, in order) to the end of the
 * spill file.  Without a file they stay.  0, or -1 when it cannot be
 * written.
 */
static int spill_samples(struct ga_gpusamples *g, struct ga_gs_series *s)
{
	size_t rs = srec_size(s), i;
	unsigned char *b;
	off_t off;

	if (!g->sspill && !g->sspill_failed && !(g->sspill = ga_util_tmpfile("gss", NULL)))
		g->sspill_failed = 1;
	if (!g->sspill)
		return 0;
	if (ga_util_grow(&s->blk, &s->capblk, s->nblk + 1, sizeof(*s->blk)) ||
	    !(b = malloc(rs * s->nmem)))
		return -1;
	for (i = 0; i < s->nmem; i++) {
		memcpy(b + i * rs, &s->s[i].start, sizeof(uint64_t));
		memcpy(b + i * rs + 8, &s->s[i].end, sizeof(uint64_t));
		memcpy(b + i * rs + 16, s->values + s->s[i].vi, (size_t)s->n * sizeof(double));
	}
	if ((off = ftello(g->sspill)) < 0 || fwrite(b, rs, s->nmem, g->sspill) != s->nmem) {
		free(b);
		fputs("gpuprof: writing a temporary file of GPU samples failed\n", stderr);
		return -1;
	}
	free(b);
	s->blk[s->nblk++] = (struct ga_gs_block){ (uint64_t)off, s->s[s->nmem - 1].end };
	s->nmem = 0;
	s->nvalues = 0;
	return 0;
}

/* Block k of s's spilled samples into buf (GA_GS_SAMPLES_BLOCK records).  0, or -1. */
static int read_block(const struct ga_gpusamples *g, const struct ga_gs_series *s, size_t k,
		      unsigned char *buf)
{
	size_t len = srec_size(s) * GA_GS_SAMPLES_BLOCK;

	if (!g->sspill || pread(fileno(g->sspill), buf, len, (off_t)s->blk[k].off) != (ssize_t)len) {
		fputs("gpuprof: reading a temporary file of GPU samples failed\n", stderr);
		return -1;
	}
	return 0;
}

/*
 * Every sample of s in memory again, the spilled ones first: a sample
 * that overlaps the one before (never written so by the samplers) leaves
 * s as it was before the spill.  0, or -1.
 */
static int unspill_samples(struct ga_gpusamples *g, struct ga_gs_series *s)
{
	size_t rs = srec_size(s), nsp = s->nblk * GA_GS_SAMPLES_BLOCK, n = nsp + s->nmem, i, k;
	struct ga_gs_sample *x;
	double *v;
	unsigned char *b;

	if (!s->nblk)
		return 0;
	if (g->sspill && fflush(g->sspill))
		return -1;
	x = malloc((n + 1) * sizeof(*x));
	v = malloc(((size_t)n * s->n + 1) * sizeof(*v));
	b = malloc(rs * GA_GS_SAMPLES_BLOCK);
	if (!x || !v || !b)
		goto fail;
	for (k = 0; k < s->nblk; k++) {
		if (read_block(g, s, k, b))
			goto fail;
		for (i = 0; i < GA_GS_SAMPLES_BLOCK; i++) {
			struct ga_gs_sample *y = &x[k * GA_GS_SAMPLES_BLOCK + i];

			memcpy(&y->start, b + i * rs, sizeof(uint64_t));
			memcpy(&y->end, b + i * rs + 8, sizeof(uint64_t));
			y->vi = (k * GA_GS_SAMPLES_BLOCK + i) * s->n;
			memcpy(v + y->vi, b + i * rs + 16, (size_t)s->n * sizeof(double));
		}
	}
	for (i = 0; i < s->nmem; i++) {
		x[nsp + i] = s->s[i];
		x[nsp + i].vi = (nsp + i) * s->n;
		memcpy(v + x[nsp + i].vi, s->values + s->s[i].vi, (size_t)s->n * sizeof(double));
	}
	free(b);
	free(s->s);
	free(s->values);
	free(s->blk);
	s->s = x;
	s->values = v;
	s->caps = n + 1;
	s->capvalues = (size_t)n * s->n + 1;
	s->nvalues = (size_t)n * s->n;
	s->nmem = n;
	s->blk = NULL;
	s->nblk = s->capblk = 0;
	return 0;
fail:
	free(x);
	free(v);
	free(b);
	return -1;
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
	/* In order, one after another, as samplers write them: else all in memory. */
	if (s->ns && !s->overlap && (r->start <= s->last_start || r->start < s->last_end)) {
		s->overlap = 1;
		if (unspill_samples(g, s))
			return -1;
	}
	if (ga_util_grow(&s->s, &s->caps, s->nmem + 1, sizeof(*s->s)) ||
	    ga_util_grow(&s->values, &s->capvalues, s->nvalues + s->n, sizeof(*s->values)))
		return -1;
	x = &s->s[s->nmem++];
	s->ns++;
	x->start = r->start;
	x->end = r->end;
	x->vi = s->nvalues;
	memcpy(s->values + s->nvalues, v, s->n * sizeof(double));
	s->nvalues += s->n;
	s->last_start = r->start;
	s->last_end = r->end;
	if (!g->keep_samples && !s->overlap && s->nmem == GA_GS_SAMPLES_BLOCK)
		return spill_samples(g, s);
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

			if (g->nk == GA_GS_KERNELS_BLOCK && spill(g))
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

/*
 * A spilled series' samples read back in order, a block at a time (the two
 * last read kept): sample j by its place, wherever it is.
 */
struct scur {
	const struct ga_gpusamples *g;
	const struct ga_gs_series *s;
	size_t rs;
	unsigned char *buf[2];
	size_t blk[2]; /* the block in buf[i], SIZE_MAX none */
	unsigned next; /* the buffer read into next */
	int err;
};

static int scur_init(struct scur *c, const struct ga_gpusamples *g, const struct ga_gs_series *s)
{
	memset(c, 0, sizeof(*c));
	c->g = g;
	c->s = s;
	c->rs = srec_size(s);
	c->blk[0] = c->blk[1] = SIZE_MAX;
	if (!s->nblk)
		return 0;
	c->buf[0] = malloc(2 * c->rs * GA_GS_SAMPLES_BLOCK);
	c->buf[1] = c->buf[0] ? c->buf[0] + c->rs * GA_GS_SAMPLES_BLOCK : NULL;
	return c->buf[0] ? 0 : -1;
}

static void scur_free(struct scur *c)
{
	free(c->buf[0]);
	c->buf[0] = c->buf[1] = NULL;
}

/* Sample j: its start, end and values (until the next call), NULL when it cannot be read. */
static const double *sget(struct scur *c, size_t j, uint64_t *start, uint64_t *end)
{
	const struct ga_gs_series *s = c->s;
	size_t nsp = s->nblk * GA_GS_SAMPLES_BLOCK, k, i;
	const unsigned char *r;

	if (j >= nsp) {
		const struct ga_gs_sample *x = &s->s[j - nsp];

		*start = x->start;
		*end = x->end;
		return s->values + x->vi;
	}
	k = j / GA_GS_SAMPLES_BLOCK;
	for (i = 0; i < 2 && c->blk[i] != k; i++)
		;
	if (i == 2) {
		i = c->next;
		c->next ^= 1;
		c->blk[i] = SIZE_MAX;
		if (c->err || read_block(c->g, s, k, c->buf[i])) {
			c->err = 1;
			return NULL;
		}
		c->blk[i] = k;
	}
	r = c->buf[i] + (j % GA_GS_SAMPLES_BLOCK) * c->rs;
	memcpy(start, r, sizeof(*start));
	memcpy(end, r + 8, sizeof(*end));
	return (const double *)(const void *)(r + 16);
}

/* Sample [start, end) with values v into s's statistics; first: s's first sample. */
static void stat_sample(struct ga_gs_series *s, int first, uint64_t start, uint64_t end,
			const double *v)
{
	double w = (double)(end - start);

	if (first || start < s->first)
		s->first = start;
	if (end > s->last)
		s->last = end;
	for (uint32_t i = 0; i < s->n; i++) {
		struct ga_gs_metric *mt = &s->m[i];

		if (isnan(v[i]))
			continue;
		mt->samples++;
		if (end > mt->last_end)
			mt->last_end = end;
		mt->wsum += v[i] * w;
		mt->w += w;
		if (v[i] < mt->min)
			mt->min = v[i];
		if (v[i] > mt->max)
			mt->max = v[i];
	}
	if (s->reasons_at >= 0 && !isnan(v[s->reasons_at]) && v[s->reasons_at] >= 0) {
		uint64_t bits = (uint64_t)v[s->reasons_at];

		s->sampled_ns += end - start;
		if (bits & GA_GS_THROTTLE_MASK)
			s->throttled_ns += end - start;
		for (unsigned b = 0; b < GA_GS_REASONS; b++)
			if (bits & (1ull << b))
				s->reason_ns[b] += end - start;
	}
}

/* Each metric's statistics over s's samples, in start order.  0, or -1 (c could not read). */
static int series_stats(struct ga_gs_series *s, struct scur *c)
{
	for (size_t j = 0; j < s->ns; j++) {
		uint64_t start, end;
		const double *v = sget(c, j, &start, &end);

		if (!v)
			return -1;
		stat_sample(s, !j, start, end, v);
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
	return 0;
}

/*
 * First sample of s that ends after t (samples by start, contiguous or
 * apart; spilled ones end in order, each block's last end noted).
 */
static size_t first_after(struct scur *c, uint64_t t)
{
	const struct ga_gs_series *s = c->s;
	size_t lo = 0, hi = s->nblk;
	uint64_t start, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->blk[mid].last_end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nblk) {
		hi = (lo + 1) * GA_GS_SAMPLES_BLOCK;
		lo *= GA_GS_SAMPLES_BLOCK;
	} else {
		lo = s->nblk * GA_GS_SAMPLES_BLOCK;
		hi = s->ns;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (!sget(c, mid, &start, &end))
			return s->ns;
		if (end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A long sample before a short one can still reach past t (none spilled). */
	while (lo > 0 && !s->nblk && s->s[lo - 1].end > t)
		lo--;
	return lo;
}

/* Adds the window [a, b) of c's series to attr x. */
static void window(struct scur *c, struct ga_gs_attr *x, uint64_t a, uint64_t b)
{
	const struct ga_gs_series *s = c->s;
	uint64_t start, end;
	const double *v;

	x->count++;
	x->time_ns += b - a;
	for (size_t j = first_after(c, a); j < s->ns && (v = sget(c, j, &start, &end)) && start < b;
	     j++) {
		uint64_t lo = start > a ? start : a, hi = end < b ? end : b;
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

/*
 * The kernels kept, spilled ones first, into x: an external sort by start
 * (equal starts in the order they came).  0, or -1.
 */
static int kernels_sorted(struct ga_gpusamples *g, struct ga_xsort *x)
{
	struct ga_gs_kernel blk[1024];
	size_t left = g->nspilled, n, i;
	void *slot;

	/* Without a temporary file nothing was spilled, and the sort needs none. */
	ga_xsort_init(x, sizeof(struct ga_gs_kernel),
		      g->spill_failed ? g->nk + 1 : GA_GS_KERNELS_SORT_RUN);
	if (g->spill && (fflush(g->spill) || fseeko(g->spill, 0, SEEK_SET))) {
		fputs("gpuprof: reading a temporary file of kernels failed\n", stderr);
		return -1;
	}
	while (left) {
		n = left < 1024 ? left : 1024;
		if (fread(blk, sizeof(*blk), n, g->spill) != n) {
			fputs("gpuprof: reading a temporary file of kernels failed\n", stderr);
			return -1;
		}
		for (i = 0; i < n; i++) {
			if (!(slot = ga_xsort_slot(x)))
				goto fail;
			memcpy(slot, &blk[i], sizeof(blk[i]));
		}
		left -= n;
	}
	spill_close(g);
	for (i = 0; i < g->nk; i++) {
		if (!(slot = ga_xsort_slot(x)))
			goto fail;
		memcpy(slot, &g->k[i], sizeof(g->k[i]));
	}
	free(g->k);
	g->k = NULL;
	g->nk = g->capk = 0;
	if (!ga_xsort_done(x))
		return 0;
fail:
	fprintf(stderr, "gpuprof: sorting the kernels for the GPU over time: %s\n", x->err);
	return -1;
}

/* Windows of ranges by start, then as the ranges' index orders them (ranges.c cmp_range()). */
static int cmp_window(const void *pa, const void *pb)
{
	const struct ga_ranges_window *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Range window w into each series of its process (series sorted by process).  0, or -1. */
static int window_range(struct ga_gpusamples *g, struct scur *c, struct attrs *rt,
			const struct ga_ranges_window *w)
{
	size_t lo = 0, hi = g->nseries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->series[mid].proc < w->proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < g->nseries && g->series[lo].proc == w->proc; lo++) {
		const struct ga_gs_series *s = &g->series[lo];
		struct ga_gs_attr *a;

		if (!s->ns || w->end <= s->first || w->start >= s->last)
			continue;
		if (!(a = attr_get(rt, s, (uint32_t)lo, w->label)))
			return -1;
		window(&c[lo], a, w->start, w->end);
		if (c[lo].err)
			return -1;
	}
	return 0;
}

/* Windows of one start, sorted, each into its series.  0, or -1. */
static int window_group(struct ga_gpusamples *g, struct scur *c, struct attrs *rt,
			struct ga_ranges_window *grp, size_t ng)
{
	if (ng > 1)
		qsort(grp, ng, sizeof(*grp), cmp_window);
	for (size_t k = 0; k < ng; k++)
		if (window_range(g, c, rt, &grp[k]))
			return -1;
	return 0;
}

/*
 * The averages over ranges: every range (folded, the windows the scan
 * sorted by start as they came, rg->gsw; else the ranges kept) in one
 * order, by start, then as the ranges' index orders them, each into the
 * series of its process.  0, or -1.
 */
static int attribute_ranges(struct ga_gpusamples *g, const struct ga_ranges *rg, struct scur *c,
			    struct attrs *rt)
{
	struct ga_ranges_window *grp = NULL;
	const struct ga_ranges_window *w;
	/* The windows are read once, here: the sort's state moves as they are. */
	struct ga_xsort *x = (struct ga_xsort *)&rg->gsw;
	size_t n, ng = 0, capg = 0, i;
	int rc = -1;

	if (!rg->folded) {
		/* Every range kept: the same order through an index of them. */
		struct ga_ranges_window *v = malloc((rg->nranges ? rg->nranges : 1) * sizeof(*v));

		if (!v)
			return -1;
		for (i = 0; i < rg->nranges; i++) {
			const struct ga_ranges_range *r = &rg->ranges[i];

			v[i] = (struct ga_ranges_window){ r->start, r->end, r->id, r->proc, r->tid,
							  rg->keys[r->key].label, 0 };
		}
		qsort(v, rg->nranges, sizeof(*v), cmp_window);
		for (i = 0; i < rg->nranges; i++)
			if (window_range(g, c, rt, &v[i]))
				break;
		free(v);
		return i < rg->nranges ? -1 : 0;
	}
	if (!x->rsize)
		return 0;
	if (ga_xsort_done(x)) {
		fprintf(stderr, "gpuprof: sorting NVTX ranges for the GPU over time: %s\n", x->err);
		return -1;
	}
	/* Equal starts came in the order they closed: sorted among themselves. */
	while ((w = (const struct ga_ranges_window *)ga_xsort_next_n(x, &n))) {
		for (i = 0; i < n; i++) {
			if (ng && w[i].start != grp[0].start) {
				if (window_group(g, c, rt, grp, ng))
					goto out;
				ng = 0;
			}
			if (ga_util_grow(&grp, &capg, ng + 1, sizeof(*grp)))
				goto out;
			grp[ng++] = w[i];
		}
	}
	if (window_group(g, c, rt, grp, ng))
		goto out;
	if (x->err[0]) {
		fprintf(stderr, "gpuprof: sorting NVTX ranges for the GPU over time: %s\n", x->err);
		goto out;
	}
	rc = 0;
out:
	free(grp);
	return rc;
}

/*
 * The averages over kernels (kernel by kernel in start order, each into
 * the series of its process and device; a series' kernels thus come in
 * start order, equal starts in the order they came) and over ranges
 * (attribute_ranges()).
 */
static int attribute(struct ga_gpusamples *g, struct ga_model *m, const struct ga_ranges *rg)
{
	struct attrs kt = { 0 }, rt = { 0 };
	struct scur *c = calloc(g->nseries + 1, sizeof(*c));
	struct ga_map dev = { 0 };
	struct ga_xsort x = { 0 };
	const struct ga_gs_kernel *k;
	int rc = -1, err = 0;
	size_t i, j, n;

	if (!c)
		return -1;
	/* Series by process and device (cmp_series()): each pair's first. */
	for (i = 0; i < g->nseries; i++) {
		uint32_t *slot;
		int ins = ga_map_insert(&dev, g->series[i].proc, g->series[i].device, &slot);

		if (ins < 0 || scur_init(&c[i], g, &g->series[i]))
			goto out;
		if (ins == 1)
			*slot = (uint32_t)i;
	}
	if (kernels_sorted(g, &x))
		goto out;
	while (!err && (k = ga_xsort_next_n(&x, &n))) {
		for (j = 0; j < n && !err; j++, k++) {
			const uint32_t *slot = ga_map_find(&dev, k->proc, k->device);

			for (i = slot ? *slot : g->nseries;
			     i < g->nseries && g->series[i].proc == k->proc &&
			     g->series[i].device == k->device;
			     i++) {
				const struct ga_gs_series *s = &g->series[i];
				struct ga_gs_attr *a;

				if (!s->ns || k->end <= s->first || k->start >= s->last)
					continue;
				if (!(a = attr_get(&kt, s, (uint32_t)i, k->name))) {
					err = 1;
					break;
				}
				window(&c[i], a, k->start, k->end);
				err |= c[i].err;
			}
		}
	}
	if (err || x.err[0])
		goto out;
	if (rg && attribute_ranges(g, rg, c, &rt))
		goto out;
	rc = 0;
out:
	for (i = 0; i < g->nseries; i++)
		scur_free(&c[i]);
	free(c);
	ga_map_free(&dev);
	ga_xsort_free(&x);
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
	if (g->sspill && fflush(g->sspill)) {
		fputs("gpuprof: writing a temporary file of GPU samples failed\n", stderr);
		return -1;
	}
	for (i = 0; i < g->nseries; i++) {
		struct ga_gs_series *s = &g->series[i];
		struct scur c;
		int rc;

		/* Spilled ones came in order (on_sample()). */
		if (!s->nblk && s->nmem > 1)
			qsort(s->s, s->nmem, sizeof(*s->s), cmp_sample);
		if (scur_init(&c, g, s))
			return -1;
		rc = series_stats(s, &c);
		scur_free(&c);
		if (rc || (s->label = ga_model_device_label(m, s->proc, s->device)) == GA_STR_NOMEM)
			return -1;
	}
	if (attribute(g, m, rg))
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
		free(g->series[i].blk);
	}
	if (g->sspill)
		fclose(g->sspill);
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
