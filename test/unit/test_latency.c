/*
 * Unit tests of launch latency (analyzer/model/latency.c): from the start
 * of the launch call (the outermost of its records) to the kernel's start,
 * matched by correlation in one pass whether the call or the kernel comes
 * first in the trace; the median, odd and even, with latencies of 2^32 ns
 * and more; kernels without their call counted apart, and apart from them
 * kernels profiled by kernel replay or started before their call, each
 * said in the report only when there are some; calls that launch no
 * kernel never kept; the entries waiting at once bounded by the
 * launches in flight, not by the trace, more of them than the direct-mapped
 * index of waiting entries holds; and many kernel and call names,
 * launch calls and others interleaved, each counted as its own; a lean
 * analysis (the Chrome and Perfetto exports') has the same kernels and no
 * launch latency, configurations, rank devices or findings.  Test code, runs offline only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/analysis.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

/* The analysis of path (lean: a timeline export's); 0 when it was built. */
static int analyze_as(const char *path, struct ga_analysis *an, struct ga_filter *flt, int lean)
{
	char *argv[1] = { (char *)path };
	struct ga_analysis_opts o = { .stack_depth = 4, .lean = lean };

	ga_filter_init(flt);
	if (ga_analysis_init(an, &o, flt))
		return -1;
	return ga_analysis_build(an, argv, 1);
}

static int analyze(const char *path, struct ga_analysis *an, struct ga_filter *flt)
{
	return analyze_as(path, an, flt, 0);
}

static void done(struct ga_analysis *an, struct ga_filter *flt)
{
	ga_analysis_free(an);
	ga_filter_free(flt);
}

static const struct ga_latency_k *named(const struct ga_analysis *an, const char *mangled)
{
	for (size_t i = 0; i < an->lat.nk; i++)
		if (!strcmp(ga_model_str(&an->m, an->lat.k[i].name), mangled))
			return &an->lat.k[i];
	return NULL;
}

static struct synth *open_trace(const char *path, uint32_t trace)
{
	struct synth *s = synth_open(path);

	synth_process(s, 4242, "host", "./app", UINT32_MAX, T0);
	synth_config(s, trace, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	return s;
}

/*
 * alpha: 3 launches, latencies 1000, 3000, 2000 ns; each call traced twice
 * (cudaLaunchKernel, then cuLaunchKernel inside it, 100 ns later); the
 * second kernel's record comes before its calls.  beta: latencies 1000 and
 * 5e9 ns.  gamma: latencies 7e9, 6e9, 100 ns.  delta: a kernel without its
 * call.  A graph kernel (never counted) and 50 copies with their calls.
 */
static void write_exact(const char *path)
{
	struct synth *s = open_trace(path, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_API);
	uint32_t a = synth_string(s, "_Z5alphav"), b = synth_string(s, "_Z4betav");
	uint32_t g = synth_string(s, "_Z5gammav"), d = synth_string(s, "_Z5deltav");
	uint32_t rt = synth_string(s, "cudaLaunchKernel_v7000");
	uint32_t drv = synth_string(s, "cuLaunchKernel");
	uint32_t cp = synth_string(s, "cudaMemcpyAsync_v3020");
	uint64_t t = T0 + 1000000, lat[3] = { 1000, 3000, 2000 };

	for (uint32_t i = 0; i < 3; i++, t += 100000) {
		if (i == 1)
			synth_kernel_at_corr(s, a, t + lat[i], t + lat[i] + 500, 0, 7, 10 + i);
		synth_api_at_corr(s, drv, t + 100, t + 400, 1, 10 + i);
		synth_api_at_corr(s, rt, t, t + 500, 1, 10 + i);
		if (i != 1)
			synth_kernel_at_corr(s, a, t + lat[i], t + lat[i] + 500, 0, 7, 10 + i);
	}
	synth_api_at_corr(s, rt, t, t + 500, 1, 20);
	synth_kernel_at_corr(s, b, t + 1000, t + 1500, 0, 7, 20);
	synth_api_at_corr(s, rt, t + 1000, t + 1500, 1, 21);
	synth_kernel_at_corr(s, b, t + 1000 + 5000000000ull, t + 5000002000ull, 0, 7, 21);
	t += 10000000000ull;
	synth_api_at_corr(s, rt, t, t + 500, 1, 30);
	synth_api_at_corr(s, rt, t + 1000, t + 1500, 1, 31);
	synth_api_at_corr(s, rt, t + 2000, t + 2500, 1, 32);
	synth_kernel_at_corr(s, g, t + 7000000000ull, t + 7000000100ull, 0, 8, 30);
	synth_kernel_at_corr(s, g, t + 6000001000ull, t + 6000001100ull, 0, 9, 31);
	synth_kernel_at_corr(s, g, t + 2100, t + 2200, 0, 7, 32);
	synth_kernel_at_corr(s, d, t + 3000, t + 3100, 0, 7, 40);
	synth_kernel(s, a, t + 4000, t + 4100, 0, 7, 5, 1);
	for (uint32_t i = 0; i < 50; i++) {
		synth_api_at_corr(s, cp, t + 5000 + i * 100, t + 5050 + i * 100, 1, 100 + i);
		synth_memcpy_at_corr(s, GP_COPY_HTOD, 64, t + 5060 + i * 100, t + 5070 + i * 100, 0, 7,
				     100 + i);
	}
	synth_end(s, t + 8000000000ull, 0);
	synth_close(s, NULL, NULL);
}

/*
 * Kernels that have their call but no latency: eta's 3 launches were
 * profiled by kernel replay, one placed before its call's start, one after,
 * one with its record before its call's; theta starts 2 us before its call
 * (clocks that disagree); iota is measured (1 us) and zeta has no call.
 */
static void write_replayed(const char *path)
{
	struct synth *s = open_trace(path, GP_TRACE_KERNEL | GP_TRACE_API);
	uint32_t e = synth_string(s, "_Z3etav"), th = synth_string(s, "_Z5thetav");
	uint32_t io = synth_string(s, "_Z4iotav"), z = synth_string(s, "_Z4zetav");
	uint32_t rt = synth_string(s, "cudaLaunchKernel"), ex = synth_string(s, "cuLaunchKernelEx");
	uint64_t t = T0 + 1000000;

	synth_api_at_corr(s, ex, t, t + 50000, 1, 1);
	synth_kernel_replayed(s, e, t - 3000, t - 1000, 7, 1);
	synth_api_at_corr(s, rt, t + 100000, t + 150000, 1, 2);
	synth_kernel_replayed(s, e, t + 120000, t + 121000, 7, 2);
	synth_kernel_replayed(s, e, t + 219000, t + 221000, 7, 3);
	synth_api_at_corr(s, rt, t + 200000, t + 250000, 1, 3);
	synth_api_at_corr(s, rt, t + 300000, t + 300500, 1, 4);
	synth_kernel_at_corr(s, th, t + 298000, t + 299000, 0, 7, 4);
	synth_api_at_corr(s, rt, t + 400000, t + 400500, 1, 5);
	synth_kernel_at_corr(s, io, t + 401000, t + 402000, 0, 7, 5);
	synth_kernel_at_corr(s, z, t + 500000, t + 501000, 0, 7, 6);
	synth_end(s, t + 1000000, 0);
	synth_close(s, NULL, NULL);
}

/* n launches, each kernel's record `behind` launches after its call's. */
static void write_stream(const char *path, uint32_t n, uint32_t behind, uint32_t trace)
{
	struct synth *s = open_trace(path, trace);
	uint32_t k = synth_string(s, "_Z1kv"), rt = synth_string(s, "cudaLaunchKernel");
	uint64_t t = T0 + 1000000;

	for (uint32_t i = 0; i < n + behind; i++) {
		if (i < n && (trace & GP_TRACE_API))
			synth_api_at_corr(s, rt, t + i * 1000ull, t + i * 1000ull + 300, 1, 1 + i);
		if (i >= behind)
			synth_kernel_at_corr(s, k, t + (i - behind) * 1000ull + 5000,
					     t + (i - behind) * 1000ull + 5500, 0, 7, 1 + i - behind);
	}
	synth_end(s, t + (n + behind) * 1000ull + 10000, 0);
	synth_close(s, NULL, NULL);
}

/*
 * n launches whose kernel records come `ahead` launches before their
 * call's record (as a recorder's activity buffers can reach the trace
 * before its API records), by call (a runtime or a driver function).
 */
static void write_kernels_first(const char *path, uint32_t n, uint32_t ahead, const char *call)
{
	struct synth *s = open_trace(path, GP_TRACE_KERNEL | GP_TRACE_API);
	uint32_t k = synth_string(s, "_Z1kv"), c = synth_string(s, call);
	uint64_t t = T0 + 1000000;

	for (uint32_t i = 0; i < n + ahead; i++) {
		if (i < n)
			synth_kernel_at_corr(s, k, t + i * 1000ull + 5000, t + i * 1000ull + 5500, 0, 7,
					     1 + i);
		if (i >= ahead)
			synth_api_at_corr(s, c, t + (i - ahead) * 1000ull,
					  t + (i - ahead) * 1000ull + 300, 1, 1 + i - ahead);
	}
	synth_end(s, t + (n + ahead) * 1000ull + 10000, 0);
	synth_close(s, NULL, NULL);
}

/*
 * A launch whose kernel comes after 2^21 + 1000 more launch calls whose
 * kernels never come (lost): its call left with its generation's next, so
 * it is unmatched; then 5 launches with their kernels.
 */
static void write_late(const char *path)
{
	struct synth *s = open_trace(path, GP_TRACE_KERNEL | GP_TRACE_API);
	uint32_t k = synth_string(s, "_Z1kv"), c = synth_string(s, "cudaLaunchKernel");
	uint64_t t = T0 + 1000000;
	uint32_t n = 2 * GA_LAT_GENERATION + 1000, i;

	for (i = 0; i < n; i++)
		synth_api_at_corr(s, c, t + i * 1000ull, t + i * 1000ull + 300, 1, 1 + i);
	synth_kernel_at_corr(s, k, t + n * 1000ull, t + n * 1000ull + 500, 0, 7, 1);
	for (i = n; i < n + 5; i++) {
		synth_api_at_corr(s, c, t + i * 1000ull + 2000, t + i * 1000ull + 2300, 1, 1 + i);
		synth_kernel_at_corr(s, k, t + i * 1000ull + 4000, t + i * 1000ull + 4500, 0, 7,
				     1 + i);
	}
	synth_end(s, t + (n + 10) * 1000ull, 0);
	synth_close(s, NULL, NULL);
}

/*
 * 150 kernel names, each launched ROUNDS times by a call of its own name:
 * even ones by launch calls (latency 1000 + 10 j ns), odd ones by calls
 * that launch nothing (their kernels unmatched), names interleaved so that
 * many share each slot of the recently-met names.
 */
#define NAMES 150
#define ROUNDS 20

/* The mangled name of kernel j of write_names: _Z2k7v, _Z3k42v, _Z4k123v. */
static void kernel_name(char *buf, size_t n, uint32_t j)
{
	int digits = 1 + (j >= 10) + (j >= 100);

	snprintf(buf, n, "_Z%dk%uv", digits + 1, j);
}

static void write_names(const char *path)
{
	struct synth *s = open_trace(path, GP_TRACE_KERNEL | GP_TRACE_API);
	uint32_t kn[NAMES], an[NAMES];
	uint64_t t = T0 + 1000000;
	char buf[64];

	for (uint32_t j = 0; j < NAMES; j++) {
		kernel_name(buf, sizeof(buf), j);
		kn[j] = synth_string(s, buf);
		snprintf(buf, sizeof(buf), j % 2 ? "cudaStreamQuery%u" : "cudaLaunchKernel%u", j);
		an[j] = synth_string(s, buf);
	}
	for (uint32_t r = 0; r < ROUNDS; r++)
		for (uint32_t j = 0; j < NAMES; j++, t += 10000) {
			uint32_t corr = r * 1000 + j + 1;

			synth_api_at_corr(s, an[j], t, t + 300, 1, corr);
			synth_kernel_at_corr(s, kn[j], t + 1000 + 10 * j, t + 2000 + 10 * j, 0, 7, corr);
		}
	synth_end(s, t + 10000, 0);
	synth_close(s, NULL, NULL);
}

int main(void)
{
	char path[128], cmd[128];
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_latency_k *k;

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-lat-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}

	tap_begin("launch latency: outermost call to kernel start, either record first");
	snprintf(path, sizeof(path), "%s/exact.gpuprof", dir);
	write_exact(path);
	CHECK(analyze(path, &an, &flt) == 0);
	k = named(&an, "_Z5alphav");
	CHECKF(k && k->count == 3 && k->total == 6000 && k->min == 1000 && k->max == 3000 &&
	       k->med == 2000, "alpha: %s", k ? "wrong statistics" : "missing");
	k = named(&an, "_Z4betav");
	CHECKF(k && k->count == 2 && k->med == (1000 + 5000000000ull) / 2 && k->max == 5000000000ull,
	       "beta: count %llu med %llu", k ? (unsigned long long)k->count : 0ull,
	       k ? (unsigned long long)k->med : 0ull);
	{
		/* What the Chrome and Perfetto exports ask: the same activities, nothing else. */
		struct ga_analysis lean;
		struct ga_filter lflt;
		int same = 1;

		CHECK(analyze_as(path, &lean, &lflt, 1) == 0);
		same = lean.m.nkstats == an.m.nkstats && an.m.nkstats > 0;
		for (size_t i = 0; same && i < an.m.nkstats; i++)
			same = lean.m.kstats[i].count == an.m.kstats[i].count &&
			       lean.m.kstats[i].total == an.m.kstats[i].total &&
			       lean.m.kstats[i].name == an.m.kstats[i].name;
		CHECKF(same && lean.lat.nk == 0 && an.lat.nk > 0 && lean.lc.nc == 0 && an.lc.nc > 0 &&
			       lean.rk.ndevs == 0 && lean.fd.off && !an.fd.off,
		       "lean: %zu kernel rows (%zu), latency rows %zu, configurations %zu, rank devices %zu",
		       lean.m.nkstats, an.m.nkstats, lean.lat.nk, lean.lc.nc, lean.rk.ndevs);
		done(&lean, &lflt);
	}
	k = named(&an, "_Z5gammav");
	CHECKF(k && k->count == 3 && k->med == 6000000000ull && k->min == 100 &&
	       k->max == 7000000000ull, "gamma: med %llu", k ? (unsigned long long)k->med : 0ull);
	CHECKF(an.lat.nk == 3 && an.lat.unmatched == 1, "%zu kernels, %llu unmatched", an.lat.nk,
	       (unsigned long long)an.lat.unmatched);
	/* The copies' calls launch no kernel: they never wait. */
	CHECKF(an.lat.max_waiting <= 4, "%zu entries waited at once", an.lat.max_waiting);
	done(&an, &flt);
	tap_end();

	tap_begin("launch latency: replayed kernels and kernels before their call have their "
		  "call, no latency");
	snprintf(path, sizeof(path), "%s/replayed.gpuprof", dir);
	write_replayed(path);
	CHECK(analyze(path, &an, &flt) == 0);
	k = named(&an, "_Z4iotav");
	CHECKF(k && k->count == 1 && k->min == 1000, "iota: %s", k ? "wrong statistics" : "missing");
	CHECKF(an.lat.nk == 1 && an.lat.replayed == 3 && an.lat.early == 1 && an.lat.unmatched == 1,
	       "%zu kernels, %llu replayed, %llu early, %llu unmatched", an.lat.nk,
	       (unsigned long long)an.lat.replayed, (unsigned long long)an.lat.early,
	       (unsigned long long)an.lat.unmatched);
	done(&an, &flt);
	{
		char *out = NULL, *err = NULL;
		int rc = synth_run(dir, &out, &err, cmd_report, "report", "--no-symbolize", path,
				   (char *)NULL);

		CHECKF(rc == 0 && out &&
		       strstr(out, "\n1 kernel without their API call in the trace (API tracing off, "
				   "or records lost)\n") &&
		       strstr(out, "\n3 kernels profiled by kernel replay left out (no GPU start "
				   "time)\n") &&
		       strstr(out, "\n1 kernel left out: starts before its API call (host and GPU "
				   "clocks disagree)\n"),
		       "report exited %d: %s%s", rc, out ? out : "", err ? err : "");
		free(out);
		free(err);
	}
	snprintf(path, sizeof(path), "%s/exact.gpuprof", dir);
	{
		char *out = NULL, *err = NULL;
		int rc = synth_run(dir, &out, &err, cmd_report, "report", "--no-symbolize", path,
				   (char *)NULL);

		/* Only what is true is said: every kernel there has its call but delta. */
		CHECKF(rc == 0 && out && strstr(out, "\n1 kernel without their API call") &&
		       !strstr(out, "kernel replay") && !strstr(out, "clocks disagree"),
		       "report exited %d: %s%s", rc, out ? out : "", err ? err : "");
		free(out);
		free(err);
	}
	tap_end();

	tap_begin("launch latency: memory bounded by the launches in flight");
	snprintf(path, sizeof(path), "%s/stream.gpuprof", dir);
	write_stream(path, 200000, 64, GP_TRACE_KERNEL | GP_TRACE_API);
	CHECK(analyze(path, &an, &flt) == 0);
	k = named(&an, "_Z1kv");
	CHECKF(k && k->count == 200000 && k->min == 5000 && k->max == 5000 && an.lat.unmatched == 0,
	       "count %llu", k ? (unsigned long long)k->count : 0ull);
	CHECKF(an.lat.max_waiting >= 64 && an.lat.max_waiting <= 66, "%zu entries waited at once",
	       an.lat.max_waiting);
	done(&an, &flt);
	tap_end();

	/* More waiting at once than the direct-mapped index has slots: the map holds the rest. */
	tap_begin("launch latency: 10000 calls waiting at once, each matched with its kernel");
	snprintf(path, sizeof(path), "%s/many.gpuprof", dir);
	write_stream(path, 30000, 10000, GP_TRACE_KERNEL | GP_TRACE_API);
	CHECK(analyze(path, &an, &flt) == 0);
	k = named(&an, "_Z1kv");
	CHECKF(k && k->count == 30000 && k->min == 5000 && k->max == 5000 && an.lat.unmatched == 0 &&
		       an.lat.nwaiting == 0,
	       "count %llu, %llu unmatched", k ? (unsigned long long)k->count : 0ull,
	       (unsigned long long)an.lat.unmatched);
	CHECKF(an.lat.max_waiting >= 10000 && an.lat.max_waiting <= 10002,
	       "%zu entries waited at once", an.lat.max_waiting);
	done(&an, &flt);
	tap_end();

	/*
	 * Kernels before their calls: a runtime call is the outermost record,
	 * so the kernel counts at it; under a driver call alone it waits for a
	 * runtime record that may come, until the end here.
	 */
	tap_begin("launch latency: kernels whose record comes first count at their runtime call");
	snprintf(path, sizeof(path), "%s/kfirst.gpuprof", dir);
	write_kernels_first(path, 30000, 1000, "cudaLaunchKernel");
	CHECK(analyze(path, &an, &flt) == 0);
	k = named(&an, "_Z1kv");
	CHECKF(k && k->count == 30000 && k->min == 5000 && k->max == 5000 && an.lat.unmatched == 0,
	       "count %llu", k ? (unsigned long long)k->count : 0ull);
	CHECKF(an.lat.max_waiting >= 1000 && an.lat.max_waiting <= 1002,
	       "%zu entries waited at once", an.lat.max_waiting);
	done(&an, &flt);
	write_kernels_first(path, 30000, 1000, "cuLaunchKernel");
	CHECK(analyze(path, &an, &flt) == 0);
	k = named(&an, "_Z1kv");
	CHECKF(k && k->count == 30000 && k->min == 5000 && k->max == 5000 && an.lat.unmatched == 0,
	       "driver: count %llu", k ? (unsigned long long)k->count : 0ull);
	CHECKF(an.lat.max_waiting == 30000, "driver: %zu entries waited at once",
	       an.lat.max_waiting);
	done(&an, &flt);
	tap_end();

	tap_begin("launch latency: a call waits two generations at most, then leaves");
	snprintf(path, sizeof(path), "%s/late.gpuprof", dir);
	write_late(path);
	CHECK(analyze(path, &an, &flt) == 0);
	k = named(&an, "_Z1kv");
	CHECKF(k && k->count == 5 && k->min == 2000 && k->max == 2000 && an.lat.unmatched == 1,
	       "count %llu, %llu unmatched", k ? (unsigned long long)k->count : 0ull,
	       (unsigned long long)an.lat.unmatched);
	done(&an, &flt);
	tap_end();

	tap_begin("launch latency: kernels of a trace without API calls wait for none");
	snprintf(path, sizeof(path), "%s/noapi.gpuprof", dir);
	write_stream(path, 5000, 0, GP_TRACE_KERNEL);
	CHECK(analyze(path, &an, &flt) == 0);
	CHECKF(an.lat.nk == 0 && an.lat.unmatched == 5000 && an.lat.max_waiting == 0,
	       "%zu kernels, %llu unmatched, %zu waited", an.lat.nk,
	       (unsigned long long)an.lat.unmatched, an.lat.max_waiting);
	done(&an, &flt);
	tap_end();

	tap_begin("launch latency: many kernel and call names, each counted as its own");
	snprintf(path, sizeof(path), "%s/names.gpuprof", dir);
	write_names(path);
	CHECK(analyze(path, &an, &flt) == 0);
	for (uint32_t j = 0; j < NAMES; j++) {
		char buf[64];

		kernel_name(buf, sizeof(buf), j);
		k = named(&an, buf);
		if (j % 2)
			CHECKF(!k, "%s launched by no launch call has a latency", buf);
		else
			CHECKF(k && k->count == ROUNDS && k->total == ROUNDS * (1000ull + 10 * j) &&
				       k->min == 1000ull + 10 * j && k->max == k->min,
			       "%s: %llu latencies, %llu ns", buf, k ? (unsigned long long)k->count : 0ull,
			       k ? (unsigned long long)k->total : 0ull);
	}
	CHECKF(an.lat.nk == NAMES / 2 && an.lat.unmatched == NAMES / 2 * ROUNDS,
	       "%zu kernels, %llu unmatched", an.lat.nk, (unsigned long long)an.lat.unmatched);
	done(&an, &flt);
	tap_end();

	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
