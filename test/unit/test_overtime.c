/*
 * Unit tests of the GPU over time (analyzer/model/gpusamples.c and its
 * views) and of the recorder's NVML-less path (cupti/telemetry.c): a
 * synthetic trace with a PM sampling series (DRAM read bandwidth, SM
 * active) and an NVML series (power, clock event reasons) on one device,
 * kernels and an NVTX range over them, written in time order and with the
 * samples shuffled over chunks; the per-device statistics, the time
 * throttled, the averages over kernels and ranges with their sample
 * counts, and the report, the CSV tables (gpu_samples, gpu_metrics), the
 * SQLite tables (gpu_series, gpu_samples), the Chrome counters and diff.  Test code,
 * runs offline only.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cupti/telemetry.h"
#include "cmd/cmd.h"
#include "model/analysis.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define US 1000ull

static char dir[64];
static char ordered[128], shuffled[128], halved[128];
static double dram_scale = 1;      /* the DRAM values written, times this */

static void series(struct synth *s, uint32_t id, uint32_t source, uint64_t iv,
		   const char *a, const char *b)
{
	struct {
		struct gp_rec_gpu_series r;
		uint32_t names[2];
	} x;

	memset(&x, 0, sizeof(x));
	x.names[0] = synth_string(s, a);
	x.names[1] = synth_string(s, b);
	x.r.h.type = GP_REC_GPU_SERIES;
	x.r.h.size = sizeof(x);
	x.r.h.aux = 2;
	x.r.id = id;
	x.r.device = 0;
	x.r.source = source;
	x.r.interval_ns = iv;
	synth_rec(s, &x, sizeof(x));
}

static void sample(struct synth *s, uint32_t id, uint64_t start, uint64_t end, double a, double b)
{
	struct {
		struct gp_rec_gpu_sample r;
		double v[2];
	} x;

	memset(&x, 0, sizeof(x));
	x.r.h.type = GP_REC_GPU_SAMPLE;
	x.r.h.size = sizeof(x);
	x.r.h.aux = 2;
	x.r.start = start;
	x.r.end = end;
	x.r.series = id;
	x.v[0] = a;
	x.v[1] = b;
	synth_rec(s, &x, sizeof(x));
}

/*
 * PM series 1, samples of 1 us from T0 to T0 + 10 us: the first five read
 * DRAM 2 TB/s and SM active 50 %, the last five 0 B/s and 100 %.
 * NVML series 2: [T0, T0 + 5 us) 300 W with the software power cap
 * (0x4), [T0 + 5 us, T0 + 10 us) 100 W idle (0x1, not throttling).
 * Kernels: copy 0.5 to 4.5 us (five samples, DRAM 2 TB/s), fma 5 to 9 us
 * (four samples, SM 100 %), mix 4.5 to 5.5 us (half of two samples: DRAM
 * 1 TB/s, SM 75 %).  NVTX range "phase" over all 10 us.
 */
static void write_trace(const char *path, int shuffle)
{
	struct synth *s = synth_open(path);
	uint32_t copy, fma, mix, phase;
	int order[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	if (shuffle) {
		int o[10] = { 7, 2, 9, 0, 5, 3, 8, 1, 6, 4 };

		memcpy(order, o, sizeof(o));
	}
	synth_process(s, 4242, "node1", "./overtime", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU0", 9, 0, 132, 80ull << 30, 0x10);
	series(s, 1, GP_GPU_SRC_PM, US, "dram__bytes_read.sum.per_second",
	       "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
	series(s, 2, GP_GPU_SRC_NVML, 5 * US, "nvml.power_w", "nvml.clock_event_reasons");
	copy = synth_string(s, "copy");
	fma = synth_string(s, "fma");
	mix = synth_string(s, "mix");
	phase = synth_string(s, "phase");
	synth_kernel(s, copy, T0 + 500, T0 + 4500, 0, 7, 0, 0);
	synth_kernel(s, fma, T0 + 5000, T0 + 9000, 0, 7, 0, 0);
	synth_kernel(s, mix, T0 + 4500, T0 + 5500, 0, 8, 0, 0);
	for (int i = 0; i < 10; i++) {
		int k = order[i];

		sample(s, 1, T0 + k * US, T0 + (k + 1) * US, k < 5 ? 2e12 * dram_scale : 0,
		       k < 5 ? 50 : 100);
		if (shuffle && i % 3 == 2)
			synth_flush_chunk(s);
	}
	sample(s, 2, T0 + 5 * US, T0 + 10 * US, 100, 1);
	sample(s, 2, T0, T0 + 5 * US, 300, 4);
	synth_nvtx_range(s, phase, 0, T0, T0 + 10 * US, 11, 11, 1, GP_NVTX_PUSHPOP);
	synth_end(s, T0 + 20 * US, 0);
	synth_close(s, NULL, NULL);
}

#define run(out, err, ...) synth_run(dir, out, err, __VA_ARGS__)

static const struct ga_gs_attr *find(const struct ga_analysis *an, const struct ga_gs_attr *a,
				     size_t n, const char *name, uint32_t series)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].series == series && !strcmp(ga_model_str(&an->m, a[i].key), name))
			return &a[i];
	return NULL;
}

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(b) + 1);
}

static double avg(const struct ga_gs_attr *x, int i)
{
	return x && x->w[i] > 0 ? x->wsum[i] / x->w[i] : NAN;
}

static void check_model(const char *path, const char *what)
{
	char *argv[1] = { (char *)path };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_gpusamples *g = &an.gs;
	const struct ga_gs_attr *x;
	char name[96];

	snprintf(name, sizeof(name), "the GPU over time from samples %s", what);
	tap_begin(name);
	ga_filter_init(&flt);
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	CHECK(ga_analysis_build(&an, argv, 1) == 0);
	CHECKF(g->nseries == 2, "%zu series", g->nseries);
	if (g->nseries == 2) {
		const struct ga_gs_series *pm = &g->series[0], *nv = &g->series[1];

		CHECK(pm->source == GP_GPU_SRC_PM && nv->source == GP_GPU_SRC_NVML);
		CHECK(!strcmp(ga_model_str(&an.m, pm->label), "cuda:0"));
		CHECK(pm->ns == 10 && pm->first == T0 && pm->last == T0 + 10 * US);
		CHECKF(near(pm->m[0].avg, 1e12) && pm->m[0].min == 0 && pm->m[0].max == 2e12 &&
		       pm->m[0].samples == 10, "dram avg %g", pm->m[0].avg);
		CHECKF(near(pm->m[1].avg, 75) && pm->m[1].min == 50 && pm->m[1].max == 100,
		       "sm avg %g", pm->m[1].avg);
		CHECKF(near(nv->m[0].avg, 200) && nv->reasons_at == 1, "power %g", nv->m[0].avg);
		CHECKF(nv->sampled_ns == 10 * US && nv->throttled_ns == 5 * US &&
		       nv->reason_ns[2] == 5 * US && nv->reason_ns[0] == 5 * US,
		       "throttled %llu of %llu", (unsigned long long)nv->throttled_ns,
		       (unsigned long long)nv->sampled_ns);
		x = find(&an, g->kern, g->nkern, "copy", 0);
		CHECKF(x && x->count == 1 && x->samples == 5 && near(avg(x, 0), 2e12) &&
		       near(avg(x, 1), 50), "copy: %llu samples, dram %g",
		       x ? (unsigned long long)x->samples : 0ull, avg(x, 0));
		x = find(&an, g->kern, g->nkern, "fma", 0);
		CHECKF(x && x->samples == 4 && near(avg(x, 0), 0) && near(avg(x, 1), 100),
		       "fma: %llu samples", x ? (unsigned long long)x->samples : 0ull);
		x = find(&an, g->kern, g->nkern, "mix", 0);
		CHECKF(x && x->samples == 2 && near(avg(x, 0), 1e12) && near(avg(x, 1), 75),
		       "mix: %llu samples, dram %g", x ? (unsigned long long)x->samples : 0ull,
		       avg(x, 0));
		x = find(&an, g->kern, g->nkern, "mix", 1);
		CHECKF(x && x->samples == 2 && near(avg(x, 0), 200), "mix power %g", avg(x, 0));
		x = find(&an, g->ranges, g->nranges, "phase", 0);
		CHECKF(x && x->count == 1 && x->samples == 10 && near(avg(x, 0), 1e12) &&
		       near(avg(x, 1), 75), "phase: %llu samples", x ? (unsigned long long)x->samples : 0ull);
		/* Kernels by time, longest first, within a series. */
		CHECK(g->nkern == 6 && g->kern[0].series == 0 && g->kern[0].time_ns == 4000);
	}
	ga_analysis_free(&an);
	/* A lean analysis (Chrome, Perfetto): the same series, no kernels kept for averages. */
	o.lean = 1;
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	CHECK(ga_analysis_build(&an, argv, 1) == 0);
	CHECKF(g->nseries == 2 && g->series[0].ns == 10 && near(g->series[0].m[0].avg, 1e12) &&
		       g->nkern == 0 && g->kernels_unkept == 0,
	       "lean: %zu series, %zu kernel rows", g->nseries, g->nkern);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();
}

/*
 * More kernels than the model keeps in memory before any series (they go
 * to a temporary file, GA_GS_KERNELS_BLOCK at a time), then the series and
 * its samples: every kernel is averaged, read back from the file.  Kernel
 * i runs [T0 + 200i, T0 + 200i + 100) inside sample i / 5 of 1 us, whose
 * DRAM value is 30 for even samples and 10 for odd ones: average 20.
 */
static void test_spilled(uint32_t said, int samples)
{
	char path[128], name[200];
	struct synth *s;
	uint32_t k;
	const uint32_t n = 5 * GA_GS_KERNELS_BLOCK / 2;
	char *argv[1] = { path };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_gs_attr *x;
	/* The trace says which samplers were on (else it is older than those bits). */
	int unsampled = said && !(said & (GP_TRACE_GPU_METRICS | GP_TRACE_GPU_TELEMETRY));

	snprintf(name, sizeof(name), "the GPU over time: kernels before the first series%s%s",
		 !said     ? ", spilled and read back" :
		 unsampled ? " of a trace that says no sampler was on: not kept" :
			     " of a trace that says --gpu-metrics was on: read back",
		 samples ? "" : " (no samples)");
	tap_begin(name);
	snprintf(path, sizeof(path), "%s/spilled.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4242, "node1", "./overtime", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | said, 0, 0);
	synth_device(s, 0, "GPU0", 9, 0, 132, 80ull << 30, 0x10);
	k = synth_string(s, "early");
	for (uint32_t i = 0; i < n; i++)
		synth_kernel(s, k, T0 + 200ull * i, T0 + 200ull * i + 100, 0, 7, 0, 0);
	if (samples) {
		series(s, 1, GP_GPU_SRC_PM, US, "dram__bytes_read.sum.per_second",
		       "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
		for (uint32_t j = 0; j < n / 5; j++)
			sample(s, 1, T0 + j * US, T0 + (j + 1) * US, j % 2 ? 10 : 30, 50);
	}
	synth_end(s, T0 + 200ull * n + US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
	ga_filter_init(&flt);
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	CHECK(ga_analysis_build(&an, argv, 1) == 0);
	x = find(&an, an.gs.kern, an.gs.nkern, "early", 0);
	CHECKF(an.gs.kernels_unsampled == (unsampled ? n : 0), "%llu kernels not kept",
	       (unsigned long long)an.gs.kernels_unsampled);
	CHECKF(an.gs.series_unasked == (unsampled && samples), "%llu series unasked",
	       (unsigned long long)an.gs.series_unasked);
	if (samples && !unsampled)
		CHECKF(x && x->count == n && x->samples == n && near(avg(x, 0), 20) &&
			       x->time_ns == 100ull * n,
		       "%llu of %u kernels, %llu samples, dram %g",
		       x ? (unsigned long long)x->count : 0ull, n,
		       x ? (unsigned long long)x->samples : 0ull, avg(x, 0));
	else
		CHECKF(!x && an.gs.nkern == 0, "%zu kernel rows", an.gs.nkern);
	/* A trace that contradicts itself: its series still shown, its kernels not averaged. */
	if (samples && unsampled)
		CHECKF(an.gs.nseries == 1 && an.gs.series[0].ns == n / 5 &&
			       near(an.gs.series[0].m[0].avg, 20),
		       "%zu series", an.gs.nseries);
	CHECK(!an.gs.spill && !an.gs.nspilled);
	ga_analysis_free(&an);
	if (samples && unsampled) {
		char *out = NULL, *err = NULL;
		int rc = run(&out, &err, cmd_report, "report", "--findings=none", path, NULL);

		CHECKF(rc == 0 && out && strstr(out, "1 series from processes whose trace says no "
						     "sampling was on: their kernels are not in the "
						     "averages\n"),
		       "rc %d: %s", rc, out ? out : "(no output)");
		free(out);
		free(err);
	}
	ga_filter_free(&flt);
	tap_end();
}

/*
 * A series of 3000 samples of 1 us (every 7th DRAM value NaN) and one of
 * 60 of 50 us, kernels of every length (none, inside a sample, across
 * samples and blocks of them, before and after the samples), ranges over
 * them, one over all: a report's analysis spills the samples in blocks
 * (GA_GS_SAMPLES_BLOCK) and reads them back; every statistic and average
 * is bit for bit that of an analysis that keeps them (a view's).  With a
 * sample that starts before the one before it ended (overlap), the
 * series is read back whole at it and kept, with the same results.
 */
static void write_long(const char *path, int overlap)
{
	struct synth *s = synth_open(path);
	uint32_t k[4], r[3];

	synth_process(s, 4242, "node1", "./overtime", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU0", 9, 0, 132, 80ull << 30, 0x10);
	series(s, 1, GP_GPU_SRC_PM, US, "dram__bytes_read.sum.per_second",
	       "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
	series(s, 2, GP_GPU_SRC_NVML, 50 * US, "nvml.power_w", "nvml.clock_event_reasons");
	k[0] = synth_string(s, "short");
	k[1] = synth_string(s, "long");
	k[2] = synth_string(s, "instant");
	k[3] = synth_string(s, "outside");
	r[0] = synth_string(s, "all");
	r[1] = synth_string(s, "step");
	r[2] = synth_string(s, "inner");
	synth_kernel(s, k[3], T0 - 5 * US, T0 - 4 * US, 0, 7, 0, 0);
	for (uint32_t i = 0; i < 3000; i++) {
		uint64_t a = T0 + i * US;

		sample(s, 1, a, a + US, i % 7 == 3 ? NAN : 1e9 * (double)(i % 13), 10 + i % 90);
		if (overlap && i == 1800)
			sample(s, 1, a + US / 2, a + 3 * US / 2, 5e9, 33);
		if (i % 50 == 0)
			sample(s, 2, a, a + 50 * US, 100 + i % 300, i % 100 == 0 ? 4 : 1);
		if (i % 3 == 0)
			synth_kernel(s, k[0], a + 100, a + 700, 0, 7, 0, 0);
		if (i % 97 == 5)
			synth_kernel(s, k[1], a + 300, a + 1300 * US, 0, 8, 0, 0);
		if (i % 11 == 2)
			synth_kernel(s, k[2], a + 400, a + 400, 0, 9, 0, 0);
		if (i % 100 == 99) {
			synth_nvtx_range(s, r[2], 0, a - 40 * US, a - 10 * US, 1000 + i, 1000 + i, 2,
					 GP_NVTX_PUSHPOP);
			synth_nvtx_range(s, r[1], 0, a - 99 * US, a + US, 2000 + i, 2000 + i, 1,
					 GP_NVTX_PUSHPOP);
		}
	}
	synth_kernel(s, k[3], T0 + 3100 * US, T0 + 3200 * US, 0, 7, 0, 0);
	synth_nvtx_range(s, r[0], 0, T0 - 10 * US, T0 + 3300 * US, 1, 1, 0, GP_NVTX_PUSHPOP);
	synth_end(s, T0 + 4000 * US, 0);
	synth_close(s, NULL, NULL);
}

static int same_double(double a, double b)
{
	return !memcmp(&a, &b, sizeof(a));
}

static int same_attrs(const struct ga_gs_attr *a, const struct ga_gs_attr *b, size_t n,
		      const struct ga_gpusamples *g)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t nm = g->series[a[i].series].n;

		if (a[i].key != b[i].key || a[i].series != b[i].series || a[i].count != b[i].count ||
		    a[i].samples != b[i].samples || a[i].time_ns != b[i].time_ns)
			return 0;
		for (uint32_t j = 0; j < nm; j++)
			if (!same_double(a[i].wsum[j], b[i].wsum[j]) || !same_double(a[i].w[j], b[i].w[j]))
				return 0;
	}
	return 1;
}

static void test_samples_spilled(int overlap)
{
	char path[128], name[160];
	char *argv[1] = { path };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an[2];
	struct ga_filter flt;
	int ok = 1;

	snprintf(name, sizeof(name), "the GPU over time: samples spilled in blocks and read back%s",
		 overlap ? ", an overlapping one reads them back whole" : "");
	tap_begin(name);
	snprintf(path, sizeof(path), "%s/long%d.gpuprof", dir, overlap);
	write_long(path, overlap);
	ga_filter_init(&flt);
	for (int i = 0; i < 2; i++) {
		o.keep_samples = i;
		CHECK(ga_analysis_init(&an[i], &o, &flt) == 0);
		CHECK(ga_analysis_build(&an[i], argv, 1) == 0);
	}
	CHECKF(an[0].gs.nseries == 2 && an[1].gs.nseries == 2, "%zu series", an[0].gs.nseries);
	if (an[0].gs.nseries == 2 && an[1].gs.nseries == 2) {
		const struct ga_gs_series *a = &an[0].gs.series[0], *b = &an[1].gs.series[0];

		/* Spilled (3000 samples: 5 blocks) unless one overlapped; kept for a view. */
		CHECKF(overlap ? a->nblk == 0 && a->overlap && a->nmem == 3001 : a->nblk == 5,
		       "%zu blocks", a->nblk);
		CHECK(b->nblk == 0 && b->ns == a->ns && a->ns == 3000u + (unsigned)overlap);
		for (size_t i = 0; i < 2; i++) {
			a = &an[0].gs.series[i];
			b = &an[1].gs.series[i];
			ok &= a->first == b->first && a->last == b->last && a->ns == b->ns &&
			      a->sampled_ns == b->sampled_ns && a->throttled_ns == b->throttled_ns;
			for (uint32_t j = 0; j < a->n; j++)
				ok &= a->m[j].samples == b->m[j].samples &&
				      a->m[j].last_end == b->m[j].last_end &&
				      same_double(a->m[j].avg, b->m[j].avg) &&
				      same_double(a->m[j].min, b->m[j].min) &&
				      same_double(a->m[j].max, b->m[j].max);
		}
		CHECKF(ok, "series statistics differ");
		CHECKF(an[0].gs.nkern == an[1].gs.nkern && an[0].gs.nkern == 6 &&
			       same_attrs(an[0].gs.kern, an[1].gs.kern, an[0].gs.nkern, &an[0].gs),
		       "averages over kernels differ (%zu, %zu rows)", an[0].gs.nkern,
		       an[1].gs.nkern);
		CHECKF(an[0].gs.nranges == an[1].gs.nranges && an[0].gs.nranges == 6 &&
			       same_attrs(an[0].gs.ranges, an[1].gs.ranges, an[0].gs.nranges,
					  &an[0].gs),
		       "averages over ranges differ (%zu, %zu rows)", an[0].gs.nranges,
		       an[1].gs.nranges);
	}
	for (int i = 0; i < 2; i++)
		ga_analysis_free(&an[i]);
	ga_filter_free(&flt);
	tap_end();
}

/*
 * A trace of GPU samples and NVTX ranges that nest on two threads (steps of
 * layers of ops, some of one name opened at the same time on both), the
 * kernels launched inside the ops.  said: its CONFIG asks for GPU metrics;
 * else the samples' series come before the first range (early) or after
 * the first step (late).
 */
static void write_ranged(const char *path, int said, int early)
{
	struct synth *s = synth_open(path);
	uint32_t k, launch, r[4], corr = 1;
	uint64_t id = 1;

	synth_process(s, 4242, "node1", "./ranged", UINT32_MAX, T0);
	synth_config(s,
		     GP_TRACE_KERNEL | GP_TRACE_NVTX | GP_TRACE_API |
			     (said ? GP_TRACE_GPU_METRICS : 0u),
		     0, 0);
	synth_device(s, 0, "GPU0", 9, 0, 132, 80ull << 30, 0x10);
	k = synth_string(s, "gemm");
	launch = synth_string(s, "cudaLaunchKernel");
	r[0] = synth_string(s, "step");
	r[1] = synth_string(s, "layer");
	r[2] = synth_string(s, "op");
	r[3] = synth_string(s, "loader");
	if (said || early)
		series(s, 1, GP_GPU_SRC_PM, US, "dram__bytes_read.sum.per_second",
		       "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
	for (uint32_t st = 0; st < 400; st++) {
		uint64_t t0 = T0 + (uint64_t)st * 40 * US;

		if (st == 1 && !said && !early)
			series(s, 1, GP_GPU_SRC_PM, US, "dram__bytes_read.sum.per_second",
			       "sm__cycles_active.avg.pct_of_peak_sustained_elapsed");
		for (uint32_t i = 0; i < 40 && (st || said || early); i++) {
			uint64_t a = t0 + i * US;

			sample(s, 1, a, a + US, i % 9 == 4 ? NAN : 1e9 * (double)((st + i) % 17),
			       5 + (st * 7 + i) % 90);
		}
		for (uint32_t l = 0; l < 3; l++) {
			uint64_t l0 = t0 + 1000 + l * 12 * US;

			for (uint32_t o = 0; o < 3; o++) {
				uint64_t o0 = l0 + 500 + o * 4 * US;

				synth_api_corr(s, launch, o0 + 100, o0 + 300, 7, corr, GP_API_RUNTIME);
				synth_kernel_corr(s, k, o0 + 2000, o0 + 2000 + (st % 5 + 1) * 300, 0,
						  corr++, 0, 0);
				synth_nvtx_range(s, r[2], 0, o0, o0 + 3 * US, 7, 7, id++,
						 GP_NVTX_PUSHPOP);
			}
			synth_nvtx_range(s, r[1], 0, l0, l0 + 11 * US + 800, 7, 7, id++,
					 GP_NVTX_PUSHPOP);
		}
		/* The loader thread: an op opened when the step's first is. */
		synth_nvtx_range(s, r[2], 0, t0 + 1500, t0 + 3000, 9, 9, id++, GP_NVTX_PUSHPOP);
		synth_nvtx_range(s, r[3], 0, t0 + 1000, t0 + 30 * US, 9, 9, id++, GP_NVTX_PUSHPOP);
		synth_nvtx_range(s, r[0], 0, t0 + 500, t0 + 38 * US, 7, 7, id++, GP_NVTX_PUSHPOP);
	}
	synth_end(s, T0 + 400 * 40 * US + 10 * US, 0);
	synth_close(s, NULL, NULL);
}

/* same_attrs() of two analyses' averages over ranges, their names compared as strings. */
static int same_range_attrs(const struct ga_analysis *a, const struct ga_analysis *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ga_gs_attr x = b->gs.ranges[i];

		if (strcmp(ga_model_str(&a->m, a->gs.ranges[i].key), ga_model_str(&b->m, x.key)))
			return 0;
		x.key = a->gs.ranges[i].key;
		if (!same_attrs(&a->gs.ranges[i], &x, 1, &a->gs))
			return 0;
	}
	return 1;
}

/*
 * The GPU samples' averages over NVTX ranges where the ranges fold: the
 * windows of the ranges come from the fold, bit for bit those of every
 * range kept; only samples after ranges of a trace whose CONFIG did not
 * ask for them give the fold up (the same averages).
 */
static void test_ranges_folded(void)
{
	static const struct {
		int said, early, folds;
		const char *what;
	} cases[] = {
		{ 1, 0, 1, "asked for in the CONFIG" },
		{ 0, 1, 1, "not asked for, before the first range" },
		{ 0, 0, 0, "not asked for, after ranges" },
	};

	tap_begin("the GPU over time: averages over NVTX ranges where the ranges fold");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char path[128];
		char *argv[1] = { path };
		struct ga_analysis an[2];
		struct ga_filter flt;
		uint64_t ops = 0;

		snprintf(path, sizeof(path), "%s/ranged%zu.gpuprof", dir, c);
		write_ranged(path, cases[c].said, cases[c].early);
		ga_filter_init(&flt);
		for (int i = 0; i < 2; i++) {
			struct ga_analysis_opts o = { .stack_depth = 4, .no_fold = i, .pace = 1 };
			int rc;

			CHECK(ga_analysis_init(&an[i], &o, &flt) == 0);
			rc = ga_analysis_build(&an[i], argv, 1);
			/* A paced fold given up: the report's read again (cmd/report.c). */
			if (rc == GA_ANALYSIS_AGAIN) {
				CHECK(ga_analysis_again(&an[i], &o, &flt) == 0);
				rc = ga_analysis_build(&an[i], argv, 1);
			}
			CHECKF(rc == 0, "%s: build %d: %d", cases[c].what, i, rc);
		}
		CHECKF(an[0].rg.folded == cases[c].folds && !an[1].rg.folded &&
			       (cases[c].folds ? an[0].rg.nranges == 1 && !an[0].rg.fold_why :
						 an[0].rg.nranges == 400 * 15),
		       "%s: folded %d (%s), %zu ranges kept", cases[c].what, an[0].rg.folded,
		       an[0].rg.fold_why ? an[0].rg.fold_why : "-", an[0].rg.nranges);
		CHECKF(an[1].rg.nranges == 400 * 15, "%s: %zu ranges", cases[c].what,
		       an[1].rg.nranges);
		/* step, layer, op, loader: one series. */
		CHECKF(an[0].gs.nranges == 4 && an[1].gs.nranges == 4 &&
			       same_range_attrs(&an[0], &an[1], 4),
		       "%s: averages over ranges differ (%zu, %zu rows)", cases[c].what,
		       an[0].gs.nranges, an[1].gs.nranges);
		/* The ops of both threads: 10 a step, in the samples' span. */
		for (size_t q = 0; q < an[0].gs.nranges; q++)
			if (!strcmp(ga_model_str(&an[0].m, an[0].gs.ranges[q].key), "op"))
				ops = an[0].gs.ranges[q].count;
		CHECKF(ops == (cases[c].said || cases[c].early ? 4000u : 3990u), "%s: %llu ops",
		       cases[c].what, (unsigned long long)ops);
		for (int i = 0; i < 2; i++)
			ga_analysis_free(&an[i]);
		ga_filter_free(&flt);
	}
	tap_end();
}

static void test_report(void)
{
	char *out = NULL, *err = NULL;
	int rc;

	tap_begin("the report's over-time tables");
	rc = run(&out, &err, cmd_report, "report", "--findings=none", shuffled, NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	CHECKF(out && strstr(out, "The GPU over time (time-weighted over samples):\n"
			      "cuda:0, pm every 1.000 µs, 10 samples over 10.000 µs:\n"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "DRAM read | GB/s |    1000 |    0 | 2000 |      10\n"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "clocks held back 5.000 µs of 10.000 µs (50.0%): sw power cap 5.000 µs\n"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "cuda:0, pm averaged over each kernel's executions"), "%s",
	       out ? out : "");
	CHECKF(out && strstr(out, "10.000 µs |         1 |      10 |           1000 |        75.0 | phase\n") &&
	       strstr(out, "1.000 µs |    1 |       2 |           1000 |        75.0 | mix\n") &&
	       strstr(out, "Time     | Runs | Samples | DRAM read GB/s | SM active % | Kernel\n"),
	       "%s", out ? out : "");
	free(out);
	free(err);
	tap_end();
}

/*
 * The CSV tables: gpu_samples, a row per sample and metric by series then
 * start (the shuffled chunks sorted back), values as recorded; gpu_metrics,
 * the report's statistics in recorded units.
 */
static void test_csv(void)
{
	char *out = NULL, *err = NULL, want[1024];
	int rc, rows = 0;

	tap_begin("CSV tables of the GPU samples");
	rc = run(&out, &err, cmd_export, "export", "-t", "csv", "--table", "gpu_samples", shuffled,
		 NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	for (const char *p = out; p && (p = strchr(p, '\n')); p++)
		rows++;
	/* 10 PM samples x 2 metrics, 2 NVML samples x 2 metrics, the header. */
	CHECKF(rows == 25, "%d lines:\n%s", rows, out ? out : "");
	snprintf(want, sizeof(want),
		 "host,rank,pid,file,device,source,metric,start_ns,end_ns,value\n"
		 "node1,,4242,%s,0,pm,dram__bytes_read.sum.per_second,"
		 "1700000000000000000,1700000000000001000,2000000000000\n"
		 "node1,,4242,%s,0,pm,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,"
		 "1700000000000000000,1700000000000001000,50\n"
		 "node1,,4242,%s,0,pm,dram__bytes_read.sum.per_second,"
		 "1700000000000001000,1700000000000002000,2000000000000\n", shuffled, shuffled,
		 shuffled);
	CHECKF(out && !strncmp(out, want, strlen(want)), "%s", out ? out : "");
	snprintf(want, sizeof(want),
		 "node1,,4242,%s,0,nvml,nvml.clock_event_reasons,"
		 "1700000000000000000,1700000000000005000,4\n"
		 "node1,,4242,%s,0,nvml,nvml.power_w,"
		 "1700000000000005000,1700000000000010000,100\n", shuffled, shuffled);
	CHECKF(out && strstr(out, want), "%s", out ? out : "");
	free(out);
	free(err);
	out = err = NULL;
	rc = run(&out, &err, cmd_export, "export", "-t", "csv", "--table", "gpu_metrics", shuffled,
		 NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	snprintf(want, sizeof(want),
		 "host,rank,pid,file,device,source,metric,samples,avg,min,max,first_ns,last_ns,"
		 "status\n"
		 "node1,,4242,%s,0,pm,dram__bytes_read.sum.per_second,10,1000000000000,0,"
		 "2000000000000,1700000000000000000,1700000000000010000,\n", shuffled);
	CHECKF(out && !strncmp(out, want, strlen(want)), "%s", out ? out : "");
	CHECKF(out && strstr(out, ",0,nvml,nvml.power_w,2,200,100,300,"), "%s", out ? out : "");
	free(out);
	free(err);
	tap_end();
}

/* One integer or real the query returns (its first row's first column); NAN if none. */
static double sql1(sqlite3 *db, const char *q)
{
	sqlite3_stmt *st = NULL;
	double v = NAN;

	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_double(st, 0);
	if (!st)
		fprintf(stderr, "# %s: %s\n", q, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return v;
}

/* The SQLite tables: gpu_series and gpu_samples, the report's averages by SQL. */
static void test_sqlite(void)
{
	char *out = NULL, *err = NULL, path[160];
	sqlite3 *db = NULL;
	int rc;

	tap_begin("SQLite tables of the GPU samples");
	snprintf(path, sizeof(path), "%s/samples.sqlite", dir);
	rc = run(&out, &err, cmd_export, "export", "-t", "sqlite", "-o", path, shuffled, NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK(sql1(db, "SELECT count(*) FROM gpu_series") == 2);
	CHECK(sql1(db, "SELECT count(*) FROM gpu_samples") == 24);
	CHECK(sql1(db, "SELECT samples FROM gpu_series WHERE source = 'pm' AND ordinal = 0 AND"
		   " status = 'ok' AND interval_ns = 1000") == 10);
	CHECK(sql1(db, "SELECT value FROM meta WHERE key = 'schema_version'") == 3);
	/* The time-weighted average the report prints, from the rows. */
	CHECKF(near(sql1(db, "SELECT sum(g.value * (end_ns - start_ns)) / sum(end_ns - start_ns)"
			 " FROM gpu_samples g JOIN strings s ON s.id = g.name_id"
			 " WHERE s.value = 'dram__bytes_read.sum.per_second'"), 1e12), "dram");
	CHECK(sql1(db, "SELECT sum(end_ns - start_ns) FROM gpu_samples g JOIN strings s ON"
		   " s.id = g.name_id JOIN gpu_series r ON r.id = g.series WHERE r.source = 'nvml'"
		   " AND s.value = 'nvml.clock_event_reasons' AND (CAST(g.value AS INTEGER) & 252) != 0")
	      == 5000);
	sqlite3_close(db);
	free(out);
	free(err);
	tap_end();
}

/*
 * The Chrome export: a counter per device and metric at each sample's
 * start, the value as recorded, none for a value not read.
 */
static void test_chrome(void)
{
	char *out = NULL, *err = NULL;
	int rc, n = 0;

	tap_begin("Chrome counters of the GPU samples");
	rc = run(&out, &err, cmd_export, "export", "-t", "chrome", shuffled, NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	for (const char *p = out; p && (p = strstr(p, "\"cat\":\"gpu_samples\",\"ph\":\"C\"")); p++)
		n++;
	CHECKF(n == 24, "%d counter samples", n);
	/* The fifth PM sample (from T0 + 4 us) read 2 TB/s, the sixth 0; the base is T0's second. */
	CHECKF(out && strstr(out, "{\"name\":\"cuda:0 dram__bytes_read.sum.per_second\","
			      "\"cat\":\"gpu_samples\",\"ph\":\"C\",\"pid\":4242,\"ts\":4.000,"
			      "\"args\":{\"value\":2000000000000}}") &&
	       strstr(out, "{\"name\":\"cuda:0 dram__bytes_read.sum.per_second\","
			   "\"cat\":\"gpu_samples\",\"ph\":\"C\",\"pid\":4242,\"ts\":5.000,"
			   "\"args\":{\"value\":0}}") &&
	       strstr(out, "{\"name\":\"cuda:0 nvml.clock_event_reasons\",\"cat\":\"gpu_samples\","
			   "\"ph\":\"C\",\"pid\":4242,\"ts\":5.000,\"args\":{\"value\":1}}"),
	       "%s", out ? out : "");
	free(out);
	free(err);
	tap_end();
}

/*
 * diff of two traces with samples: per device and metric both averages
 * and the change (DRAM read halved, the rest equal), the time throttled
 * compared as a metric; --threshold hides the unchanged; --json has them
 * in recorded units.
 */
static void test_diff(void)
{
	char *out = NULL, *err = NULL;
	int rc;

	tap_begin("diff of the GPU over time");
	rc = run(&out, &err, cmd_diff, "diff", ordered, halved, NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	CHECKF(out && strstr(out, "\nThe GPU over time (time-weighted averages):\n") &&
	       strstr(out, "Device | Metric         | Unit | Base | New  | Change | Base samples | "
			   "New samples\n") &&
	       strstr(out, "cuda:0 | DRAM read      | GB/s | 1000 |  500 | -50.0% |           10 |"
			   "          10\n") &&
	       strstr(out, "cuda:0 | SM active      | %    | 75.0 | 75.0 |  +0.0% |") &&
	       strstr(out, "cuda:0 | time throttled | %    | 50.0 | 50.0 |  +0.0% |            2 |           2\n") &&
	       strstr(out, "cuda:0 | power          | W    |  200 |  200 |  +0.0% |"),
	       "%s", out ? out : "");
	free(out);
	free(err);
	out = err = NULL;
	rc = run(&out, &err, cmd_diff, "diff", "--threshold", "1", "--json", ordered, halved, NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	CHECKF(out && strstr(out, "\"items\":[],\n\"gpu_metrics\":[\n"
			      "  {\"device\":\"cuda:0\",\"metric\":\"dram__bytes_read.sum.per_second\","
			      "\"in_base\":true,\"in_new\":true,\"base_samples\":10,\"new_samples\":10,"
			      "\"base_avg\":1e+12,\"new_avg\":5e+11,\"change_pct\":-50}]}"),
	       "%s", out ? out : "");
	free(out);
	free(err);
	tap_end();
}

static void test_nvml_missing(void)
{
	char why[256] = "";
	double v[GP_TELEM_COUNT];

	tap_begin("telemetry without NVML: a reason naming the library, no values");
	CHECK(gp_telemetry_open("/nonexistent/libnvidia-ml.so.1", why, sizeof(why)) < 0);
	CHECKF(strstr(why, "cannot load /nonexistent/libnvidia-ml.so.1"), "%s", why);
	CHECK(gp_telemetry_device("0000:17:00.0") == NULL);
	CHECK(gp_telemetry_read(NULL, NULL, v) == 0 && isnan(v[GP_TELEM_POWER_W]));
	CHECK(gp_gpm_open(NULL) == NULL);
	tap_end();
}

/*
 * An NVML metric whose values end before its series does (the recorder
 * stops calling a getter slower than 2 ms twice): the report says after
 * what time and how many samples, not only through its Samples column.
 */
static void test_stopped(void)
{
	char path[128], *out = NULL, *err = NULL;
	struct synth *s;
	int rc;

	tap_begin("the GPU over time: a metric whose values stopped is named, with when");
	snprintf(path, sizeof(path), "%s/stopped.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4242, "node1", "./overtime", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_SAMPLERS_SAID | GP_TRACE_GPU_TELEMETRY, 0, 0);
	synth_device(s, 0, "GPU0", 9, 0, 132, 80ull << 30, 0x10);
	series(s, 2, GP_GPU_SRC_NVML, US, "nvml.power_w", "nvml.memory_used_bytes");
	for (int k = 0; k < 10; k++)
		sample(s, 2, T0 + k * US, T0 + (k + 1) * US, 100 + k, k < 3 ? 4e9 : NAN);
	synth_end(s, T0 + 20 * US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
	rc = run(&out, &err, cmd_report, "report", "--findings=none", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, "memory used: no values after 3.000 µs of 10.000 µs (3 "
					     "of 10 samples) (the recorder stops calling an NVML "
					     "getter slower than 2 ms twice)\n") &&
		       !strstr(out, "power: no values"),
	       "rc %d: %s", rc, out ? out : "");
	free(out);
	free(err);
	tap_end();
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-overtime-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(ordered, sizeof(ordered), "%s/ordered.gpuprof", dir);
	snprintf(shuffled, sizeof(shuffled), "%s/shuffled.gpuprof", dir);
	write_trace(ordered, 0);
	write_trace(shuffled, 1);
	snprintf(halved, sizeof(halved), "%s/halved.gpuprof", dir);
	dram_scale = 0.5;
	write_trace(halved, 0);
	dram_scale = 1;
	check_model(ordered, "in time order");
	check_model(shuffled, "shuffled over chunks");
	test_stopped();
	test_spilled(0, 1);
	test_spilled(GP_TRACE_SAMPLERS_SAID | GP_TRACE_GPU_METRICS, 1);
	test_spilled(GP_TRACE_SAMPLERS_SAID, 0);
	test_spilled(GP_TRACE_SAMPLERS_SAID, 1);
	test_samples_spilled(0);
	test_samples_spilled(1);
	test_ranges_folded();
	test_report();
	test_csv();
	test_sqlite();
	test_chrome();
	test_diff();
	test_nvml_missing();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
