/*
 * Unit tests of hardware metrics in traces: the version-2 records
 * (GP_REC_METRICS, GP_REC_DEVICE_PEAKS, GP_REC_METRICS_INFO, the
 * replayed-kernel flag) written and read back, the device ceilings and
 * the roofline arithmetic, the report's roofline table and the JSON
 * export.  Test code, runs offline only, needs no GPU.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gpuprof/peaks.h"
#include "model/hwmetrics.h"
#include "model/model.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

static int near(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fabs(b);
}

static void test_peaks(void)
{
	struct gp_rec_device_peaks p;

	tap_begin("device ceilings from SM count, clocks, bus width");
	synth_h100_peaks(&p);
	CHECK(gp_peaks_compute(&p) == 1);
	/* 132 SMs x 1.98 GHz x 256 FLOP/cycle/SM */
	CHECKF(near(p.flops[GP_PEAK_FP32], 66.908e12, 1e-4), "fp32 %g", p.flops[GP_PEAK_FP32]);
	CHECKF(near(p.flops[GP_PEAK_FP64], 33.454e12, 1e-4), "fp64 %g", p.flops[GP_PEAK_FP64]);
	CHECKF(near(p.flops[GP_PEAK_FP16], 133.82e12, 1e-4), "fp16 %g", p.flops[GP_PEAK_FP16]);
	CHECKF(near(p.flops[GP_PEAK_TENSOR_FP16], 1070.5e12, 1e-4), "tc %g",
	       p.flops[GP_PEAK_TENSOR_FP16]);
	CHECKF(near(p.flops[GP_PEAK_TENSOR_FP8], 2141.1e12, 1e-4), "fp8 %g",
	       p.flops[GP_PEAK_TENSOR_FP8]);
	/* 2 x 2.619 GHz x 640 bytes */
	CHECKF(near(p.dram_bw, 3.35232e12, 1e-6), "dram %g", p.dram_bw);
	/* An architecture missing from the table: bandwidth only, no FLOP ceilings. */
	p.cc_major = 12;
	p.cc_minor = 7;
	CHECK(gp_peaks_compute(&p) == 0);
	CHECK(p.flops[GP_PEAK_FP32] == 0 && p.dram_bw > 3e12);
	tap_end();
}

static void test_roof(void)
{
	struct gp_rec_device_peaks p;
	double f[GA_MX_PREC] = { 0 };
	struct ga_roof r;
	int prec = -2;

	synth_h100_peaks(&p);
	gp_peaks_compute(&p);

	tap_begin("roofline: memory-bound copy");
	/* 2 GiB moved in 883.296 us, no FLOPs: 2431 GB/s, 72.5% of 3352 GB/s. */
	CHECK(ga_roof_eval(f, 2147483648.0, 883296, &p, &r) == 0);
	CHECK(r.dominant == -1 && r.flops == 0 && r.ai == 0);
	CHECKF(near(r.dram_bw, 2431.2e9, 1e-3), "bw %g", r.dram_bw);
	CHECK(r.memory_side && r.verdict == GA_ROOF_MEMORY);
	CHECKF(near(r.pct, 72.52, 1e-3), "pct %g", r.pct);
	tap_end();

	tap_begin("roofline: compute-bound FMA loop");
	/* 4,429,185,024 FP32 FLOPs in 71.008 us = 62.38 TFLOP/s, 93% of 66.9. */
	f[GP_PEAK_FP32] = 4429185024.0;
	f[GP_PEAK_FP16] = 540672.0; /* HFMA2.MMA register moves */
	CHECK(ga_roof_eval(f, 16384.0, 71008, &p, &r) == 0);
	CHECK(r.dominant == GP_PEAK_FP32);
	CHECKF(near(r.flop_s[GP_PEAK_FP32], 62.376e12, 1e-4), "%g", r.flop_s[GP_PEAK_FP32]);
	CHECKF(near(r.ai, (4429185024.0 + 540672.0) / 16384.0, 1e-12), "ai %g", r.ai);
	CHECK(!r.memory_side && r.verdict == GA_ROOF_COMPUTE);
	CHECKF(near(r.pct, 100 * (4429185024.0 + 540672.0) / 71008e-9 / p.flops[GP_PEAK_FP32], 1e-9),
	       "pct %g", r.pct);
	CHECKF(near(r.ridge, p.flops[GP_PEAK_FP32] / p.dram_bw, 1e-12), "ridge %g", r.ridge);
	tap_end();

	tap_begin("roofline: neither, unknown, no DRAM bytes, no ceilings");
	/* Low rate on the compute side: neither. */
	CHECK(ga_roof_eval(f, 16384.0, 71008 * 10, &p, &r) == 0 && r.verdict == GA_ROOF_NEITHER);
	CHECKF(r.pct < 10 && r.pct > 9, "pct %g", r.pct);
	/* Left of the ridge at a low bandwidth: neither. */
	memset(f, 0, sizeof(f));
	f[GP_PEAK_FP64] = 1e6;
	CHECK(ga_roof_eval(f, 1e8, 1000000, &p, &r) == 0);
	CHECK(r.memory_side && r.verdict == GA_ROOF_NEITHER && near(r.ai, 0.01, 1e-12));
	/* No time: unknown. */
	CHECK(ga_roof_eval(f, 1e8, 0, &p, &r) < 0 && r.verdict == GA_ROOF_UNKNOWN);
	/* FLOPs and no DRAM bytes: infinite intensity, the compute roof. */
	CHECK(ga_roof_eval(f, 0, 1000, &p, &r) == 0 && isinf(r.ai) && !r.memory_side);
	/* No ceilings: rates, no verdict. */
	CHECK(ga_roof_eval(f, 1e8, 1000000, NULL, &r) == 0 && r.verdict == GA_ROOF_UNKNOWN &&
	      near(r.dram_bw, 1e11, 1e-12));
	/* Tensor work picks the tensor ceiling. */
	memset(f, 0, sizeof(f));
	f[GP_PEAK_TENSOR_FP16] = 137438953472.0;
	f[GP_PEAK_FP32] = 1e9;
	CHECK(ga_roof_eval(f, 1e8, 156400, &p, &r) == 0 && r.dominant == GP_PEAK_TENSOR_FP16 &&
	      r.verdict == GA_ROOF_COMPUTE && r.peak == p.flops[GP_PEAK_TENSOR_FP16]);
	tap_end();

	tap_begin("FLOP weights by metric name");
	CHECK(ga_mx_flop_weight("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", &prec) == 2 &&
	      prec == GP_PEAK_FP64);
	CHECK(ga_mx_flop_weight("sm__sass_thread_inst_executed_op_hfma_pred_on.sum", &prec) == 4 &&
	      prec == GP_PEAK_FP16);
	CHECK(ga_mx_flop_weight("sm__sass_thread_inst_executed_op_hadd_pred_on.sum", &prec) == 2);
	CHECK(ga_mx_flop_weight("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", &prec) == 1 &&
	      prec == GP_PEAK_FP32);
	CHECK(ga_mx_flop_weight("sm__ops_path_tensor_src_fp8_sparsity_off.sum", &prec) == 1 &&
	      prec == GP_PEAK_TENSOR_FP8);
	/* mma.sync (HMMA): tensor FLOPs the wgmma counters do not see. */
	CHECK(ga_mx_flop_weight("sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
				&prec) == 1 && prec == GP_PEAK_TENSOR_FP16);
	CHECK(ga_mx_flop_weight("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
				&prec) == 1 && prec == GP_PEAK_TENSOR_FP16);
	CHECK(ga_mx_flop_weight("sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
				&prec) == 1 && prec == GP_PEAK_TENSOR_TF32);
	CHECK(ga_mx_flop_weight("dram__bytes_read.sum", &prec) == 0 && prec == -1);
	tap_end();
}

/* A GP_REC_METRICS record with n values named names[] (string ids). */
static void put_metrics_flags(struct synth *s, uint32_t corr, uint32_t kernel, uint64_t start,
			      uint64_t dur, const uint32_t *names, const double *vals, uint32_t n,
			      uint32_t flags, uint32_t passes)
{
	unsigned char buf[sizeof(struct gp_rec_metrics) + 32 * sizeof(struct gp_metric_value)];
	struct gp_rec_metrics *m = (void *)buf;
	struct gp_metric_value *v = (void *)(m + 1);

	memset(buf, 0, sizeof(buf));
	m->h.type = GP_REC_METRICS;
	m->h.size = (uint16_t)(sizeof(*m) + n * sizeof(*v));
	m->h.aux = n;
	m->start = start;
	m->duration = dur;
	m->cost_ns = 60000000;
	m->correlation = corr;
	m->kernel = kernel;
	m->grid[0] = 528;
	m->grid[1] = m->grid[2] = 1;
	m->block[0] = 256;
	m->block[1] = m->block[2] = 1;
	m->passes = passes;
	m->flags = flags;
	for (uint32_t i = 0; i < n; i++) {
		v[i].name = names[i];
		v[i].value = vals[i];
	}
	synth_rec(s, buf, m->h.size);
}

static void put_metrics(struct synth *s, uint32_t corr, uint32_t kernel, uint64_t start,
			uint64_t dur, const uint32_t *names, const double *vals, uint32_t n)
{
	put_metrics_flags(s, corr, kernel, start, dur, names, vals, n, 0, 2);
}

static char *write_trace(void)
{
	static const char *const mn[] = {
		"gpu__time_duration.sum",
		"dram__bytes_read.sum",
		"dram__bytes_write.sum",
		"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
		"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
		"lts__t_bytes.sum",
	};
	char *path = malloc(128);
	struct synth *s;
	struct gp_rec_device_peaks p;
	struct gp_rec_metrics_info info;
	struct gp_rec_kernel k;
	uint32_t names[6], kf, kc, set;
	double v1[6] = { 71008, 8192, 8192, 2214592512.0, 0, 1e6 };
	double v2[6] = { 70992, 8192, 8192, 2214592512.0, 0, 1e6 };
	double vc[6] = { 883296, 1073773824.0, 1073891584.0, 0, 0, 3.2e9 };

	snprintf(path, 128, "%s/m.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4242, "host", "./metrics_truth", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 80ull << 30, 1);
	for (int i = 0; i < 6; i++)
		names[i] = synth_string(s, mn[i]);
	kf = synth_string(s, "fma_f32");
	kc = synth_string(s, "_Z11stream_copyPfPKfm");
	set = synth_string(s, "roofline");
	synth_h100_peaks(&p);
	gp_peaks_compute(&p);
	p.chip = synth_string(s, "GH100");
	synth_rec(s, &p, sizeof(p));
	/* A replayed launch: its kernel record carries the profiler's time and the flag. */
	memset(&k, 0, sizeof(k));
	k.h.type = GP_REC_KERNEL;
	k.h.size = sizeof(k);
	k.start = T0 + 1000;
	k.end = T0 + 1000 + 71008;
	k.correlation = 900;
	k.name = kf;
	k.flags = GP_ACT_REPLAYED;
	synth_rec(s, &k, sizeof(k));
	put_metrics(s, 900, kf, T0 + 1000, 71008, names, v1, 6);
	put_metrics(s, 901, kf, T0 + 500000, 70992, names, v2, 6);
	put_metrics(s, 902, kc, T0 + 900000, 883296, names, vc, 6);
	synth_kernel(s, kf, T0 + 2000000, T0 + 2070000, 0, 7, 0, 0);
	memset(&info, 0, sizeof(info));
	info.h.type = GP_REC_METRICS_INFO;
	info.h.size = sizeof(info);
	info.set = set;
	info.launches = 1;
	info.passes = 2;
	info.profiled = 3;
	info.skipped_capture = 1;
	info.skipped_graph = 2;
	info.cost_ns = 180000000;
	synth_rec(s, &info, sizeof(info));
	synth_end(s, T0 + 3000000, 0);
	if (synth_close(s, NULL, NULL)) {
		free(path);
		return NULL;
	}
	return path;
}

static const struct ga_mx_kernel *mx_named(struct ga_mx *mx, struct ga_model *m, const char *n)
{
	for (size_t i = 0; i < mx->nk; i++)
		if (!strcmp(ga_model_str(m, mx->k[i].name), n))
			return &mx->k[i];
	return NULL;
}

static void test_round_trip(const char *path)
{
	struct ga_model m;
	struct ga_mx mx;
	const struct ga_mx_kernel *f, *c;
	const struct ga_mx_peaks *pk;

	tap_begin("metrics records round trip");
	CHECK(path != NULL);
	if (!path || ga_model_init(&m)) {
		tap_end();
		return;
	}
	ga_mx_init(&mx);
	ga_mx_bind(&mx, &m);
	CHECK(ga_model_add_file(&m, path) == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	CHECKF(mx.records == 3 && !mx.bad && !mx.oom, "records %llu", (unsigned long long)mx.records);
	CHECK(mx.has_info && mx.profiled == 3 && mx.skipped_capture == 1 && mx.skipped_graph == 2 &&
	      mx.passes == 2 && mx.cost_ns == 180000000);
	CHECK(mx.set && !strcmp(ga_model_str(&m, mx.set), "roofline"));
	f = mx_named(&mx, &m, "fma_f32");
	c = mx_named(&mx, &m, "_Z11stream_copyPfPKfm");
	CHECK(mx.nk == 2 && f && c);
	if (f && c) {
		CHECK(f->launches == 2 && f->time_ns == 71008 + 70992);
		CHECKF(f->flops[GP_PEAK_FP32] == 2 * 2 * 2214592512.0, "%g", f->flops[GP_PEAK_FP32]);
		CHECK(f->flops[GP_PEAK_FP64] == 0 && f->dram_total == 4 * 8192.0);
		CHECK(c->launches == 1 && c->dram_read == 1073773824.0 &&
		      c->dram_write == 1073891584.0 && c->l2 == 3.2e9);
		CHECK((c->have & (GA_MX_HAVE_TIME | GA_MX_HAVE_DRAM | GA_MX_HAVE_L2)) ==
		      (GA_MX_HAVE_TIME | GA_MX_HAVE_DRAM | GA_MX_HAVE_L2));
		CHECK(mx.nnames == 6 && c->vals[1] == 1073773824.0);
	}
	pk = ga_mx_peaks_of(&mx, 0, 0);
	CHECK(pk && pk->p.sm_count == 132 && near(pk->p.dram_bw, 3.35232e12, 1e-6) && pk->chip &&
	      !strcmp(ga_model_str(&m, pk->chip), "GH100"));
	/* The replayed kernel is in the kernel table with its profiled duration. */
	CHECK(m.nkstats == 1 && m.kstats[0].count == 2 && m.kstats[0].max == 71008);
	CHECK(ga_model_lost_total(&m) == 0);
	ga_mx_free(&mx);
	ga_model_free(&m);
	tap_end();
}

static void test_report_json(const char *path)
{
	char *argv[6], *out = NULL, *err = NULL;
	int rc;

	tap_begin("report roofline table and header");
	argv[0] = "report";
	argv[1] = (char *)path;
	argv[2] = NULL;
	rc = synth_capture(dir, &out, &err, cmd_report, 2, argv);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	if (out) {
		CHECKF(strstr(out, "Metrics:      roofline: 3 launches profiled by kernel replay (2 passes each, 180.0 ms"),
		       "%s", out);
		CHECK(strstr(out, "not profiled: 1 launch during stream capture, 2 graph launches"));
		CHECK(strstr(out, "Roofline (profiled launches"));
		CHECKF(strstr(out, "62.38 |"), "fp32 rate missing");
		CHECK(strstr(out, "memory-bound") && strstr(out, "compute-bound"));
		CHECK(strstr(out, "73% DRAM") && strstr(out, "93% FP32"));
		CHECK(strstr(out, "Ceilings of cuda:0 (GH100, cc 9.0, 132 SMs at 1980 MHz"));
	}
	free(out);
	free(err);
	out = err = NULL;
	tap_end();

	tap_begin("export json metrics object");
	argv[0] = "export";
	argv[1] = "--format";
	argv[2] = "json";
	argv[3] = (char *)path;
	argv[4] = NULL;
	rc = synth_capture(dir, &out, &err, cmd_export, 4, argv);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	if (out) {
		CHECK(strstr(out, "\"metrics\":{\"set\":\"roofline\",\"status\":0,\"passes\":2,"
				  "\"launches_per_config\":1,\"profiled\":3,"));
		CHECK(strstr(out, "\"name\":\"stream_copy(float*, float const*, unsigned long)\""));
		CHECK(strstr(out, "\"dram_read\":1073773824,"));
		CHECK(strstr(out, "\"bound\":\"memory-bound\""));
		CHECK(strstr(out, "\"fp32\":8858370048,"));
		CHECK(strstr(out, "\"peak_dram_bytes_s\":3352320000000"));
	}
	free(out);
	free(err);
	tap_end();
}

/*
 * A trace of kernels a (correlation 7) and b (8), one metrics record each
 * with flags and passes, and a METRICS_INFO record of info_passes groups
 * (none when 0); loaded into *m and *mx.  Returns the path written.
 */
static const char *two_kernels(struct ga_model *m, struct ga_mx *mx, const char *file,
			       const char *a, uint32_t fa, uint32_t pa, const char *b, uint32_t fb,
			       uint32_t pb, uint32_t info_passes)
{
	static char path[128];
	struct synth *s;
	uint32_t name, ka, kb;
	double v = 4096;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	s = synth_open(path);
	synth_process(s, 4243, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	name = synth_string(s, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
	ka = synth_string(s, a);
	kb = synth_string(s, b);
	synth_kernel(s, ka, T0 + 100, T0 + 200, 0, 7, 0, 0);
	synth_kernel(s, kb, T0 + 300, T0 + 400, 0, 8, 0, 0);
	put_metrics_flags(s, 7, ka, T0 + 100, 100, &name, &v, 1, fa, pa);
	put_metrics_flags(s, 8, kb, T0 + 300, 100, &name, &v, 1, fb, pb);
	if (info_passes) {
		struct gp_rec_metrics_info info;

		memset(&info, 0, sizeof(info));
		info.h.type = GP_REC_METRICS_INFO;
		info.h.size = sizeof(info);
		info.set = synth_string(s, "roofline");
		info.launches = 1;
		info.passes = info_passes;
		info.profiled = 2;
		synth_rec(s, &info, sizeof(info));
	}
	synth_end(s, T0 + 1000, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
	CHECK(ga_model_init(m) == 0);
	ga_mx_init(mx);
	ga_mx_bind(mx, m);
	CHECK(ga_model_add_file(m, path) == GA_READ_OK);
	CHECK(ga_model_finish(m) == 0);
	return path;
}

/* The report (json 0) or JSON export (1) of path; NULL on failure (checked). */
static char *show(const char *path, int json)
{
	char *argv[] = { json ? "export" : "report", "--format", "json", (char *)path, NULL };
	char *out = NULL, *err = NULL;
	int rc;

	if (json) {
		rc = synth_capture(dir, &out, &err, cmd_export, 4, argv);
	} else {
		argv[1] = (char *)path;
		argv[2] = NULL;
		rc = synth_capture(dir, &out, &err, cmd_report, 2, argv);
	}
	CHECKF(rc == 0 && out, "%s: rc %d %s", argv[0], rc, err ? err : "");
	free(err);
	if (rc) {
		free(out);
		out = NULL;
	}
	return out;
}

/* Values from the metrics cache: counted apart, marked in the report and the JSON. */
static void test_cached(void)
{
	struct ga_model m;
	struct ga_mx mx;
	const char *path;
	char *out;

	tap_begin("values from the metrics cache: counted and marked");
	path = two_kernels(&m, &mx, "cached.gpuprof", "kernel_from_cache", GP_METRICS_F_CACHED, 2,
			   "kernel_replayed", 0, 2, 0);
	CHECKF(mx.records == 2 && mx.cached == 1, "records %llu cached %llu",
	       (unsigned long long)mx.records, (unsigned long long)mx.cached);
	{
		const struct ga_mx_kernel *a = mx_named(&mx, &m, "kernel_from_cache"),
					  *b = mx_named(&mx, &m, "kernel_replayed");

		CHECK(a && b && a->cached == 1 && a->launches == 1 && b->cached == 0);
	}
	ga_mx_free(&mx);
	ga_model_free(&m);
	if ((out = show(path, 0))) {
		CHECKF(strstr(out, ", 1 from the metrics cache"), "%s", out);
		CHECK(strstr(out, "(cached) kernel_from_cache"));
		CHECK(!strstr(out, "(cached) kernel_replayed"));
	}
	free(out);
	if ((out = show(path, 1))) {
		CHECK(strstr(out, "\"records\":2,\"cached\":1,"));
		CHECK(strstr(out, "\"name\":\"kernel_from_cache\"") &&
		      strstr(out, "\"launches\":1,\"cached\":1,"));
	}
	free(out);
	unlink(path);
	tap_end();
}

/* Values over successive launches: kernels whose launches stopped before every group. */
static void test_partial(void)
{
	struct ga_model m;
	struct ga_mx mx;
	const char *path;
	char *out;

	tap_begin("values over successive launches: kernels measured in only some groups");
	path = two_kernels(&m, &mx, "partial.gpuprof", "kernel_all_groups", GP_METRICS_F_LAUNCHES, 3,
			   "kernel_two_groups", GP_METRICS_F_LAUNCHES, 2, 3);
	CHECKF(mx.spread == 2 && ga_mx_partial(&mx) == 1, "spread %llu partial %llu",
	       (unsigned long long)mx.spread, (unsigned long long)ga_mx_partial(&mx));
	ga_mx_free(&mx);
	ga_model_free(&m);
	out = show(path, 0);
	CHECKF(out && strstr(out, "2 kernels measured over successive launches (3 single-pass "
				  "groups, one launch each), 1 of them in only some groups"),
	       "%s", out ? out : "");
	free(out);
	out = show(path, 1);
	CHECK(out && strstr(out, "\"replay\":\"launches\",\"partial\":1,"));
	free(out);
	unlink(path);
	tap_end();
}

static void test_version_one(void)
{
	struct synth *s = synth_open(NULL);
	unsigned char *buf = NULL;
	size_t len = 0;
	struct ga_model m;
	struct ga_mx mx;
	uint32_t k;

	tap_begin("version 1 traces still read; a metrics record with a bad count is skipped");
	s->hdr.version = 1;
	s->hdr.min_reader = 1;
	synth_process(s, 1, "h", "x", UINT32_MAX, T0);
	k = synth_string(s, "k");
	synth_kernel(s, k, T0, T0 + 10, 0, 7, 0, 0);
	{
		struct gp_rec_metrics r;

		memset(&r, 0, sizeof(r));
		r.h.type = GP_REC_METRICS;
		r.h.size = sizeof(r);
		r.h.aux = 3; /* claims values that are not there */
		r.kernel = k;
		synth_rec(s, &r, sizeof(r));
	}
	synth_end(s, T0 + 20, 0);
	CHECK(synth_close(s, &buf, &len) == 0);
	CHECK(ga_model_init(&m) == 0);
	ga_mx_init(&mx);
	ga_mx_bind(&mx, &m);
	CHECK(ga_model_add_mem(&m, "v1", buf, len) == GA_READ_OK);
	CHECK(m.nkstats == 1 && mx.records == 0 && !ga_mx_any(&mx));
	CHECK(m.files[0].info.malformed == 1);
	ga_mx_free(&mx);
	ga_model_free(&m);
	free(buf);
	tap_end();
}

int main(void)
{
	char *path;

	snprintf(dir, sizeof(dir), "/tmp/gp-metrics-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_peaks();
	test_roof();
	path = write_trace();
	test_round_trip(path);
	if (path)
		test_report_json(path);
	test_version_one();
	test_cached();
	test_partial();
	if (path)
		unlink(path);
	free(path);
	rmdir(dir);
	return tap_exit();
}
