/*
 * synth_trace: writes a valid gpuprof trace holding N kernel records, for
 * timing the analyzer on large inputs without a GPU.
 *
 *     synth_trace [--gpu G] [--names K] [--api-late LAG] [--mix | --same] N OUT.gpuprof
 *     synth_trace --gpu-samples ROUNDS OUT.gpuprof
 *
 * The file has what the recorder writes for a kernel-only run: a PROCESS
 * record, a CONFIG, one DEVICE, a STRING per kernel name (20 names), N
 * kernel records on 4 streams with increasing timestamps and varied
 * durations, and an END record, in chunks of at most 1 MiB of raw records,
 * delta-coded and each one zstd frame (level 1) with its CRC-32C, as the
 * recorder writes them (the format of include/gpuprof/trace.h, written by
 * the writer in test/unit/synth.c).  With --mix, about N records of a
 * training step instead (see mixed() below): launches with their API calls,
 * copies, memsets, allocations and frees, and hardware metrics.  With
 * --gpu-samples, the program of test/apps/overtime.cu over ROUNDS rounds
 * and the GPU over time as --gpu-metrics and --gpu-telemetry record it
 * (see gpu_samples() below).  With --same, N kernel records that differ
 * only by a constant step (one name, one stream, 1 us each, 2 us apart,
 * correlation ids counting up): after delta coding every record is the same
 * bytes, so zstd shrinks 1e8 of them to about 2.4 MB, a compression bomb
 * for the analyzer's memory.  --gpu G (0 to 255, default 0) writes process
 * 4242 + G on a GPU of its own (its UUID's first byte 0x10 + G): the ranks
 * of a job, one GPU each.  --names K (kernel-only traces) draws each
 * kernel's name from K distinct templated C++ names of about 140 bytes
 * instead of 20: the cost of many names (their demangling, the tables).
 * --api-late LAG (kernel-only traces) gives each kernel its
 * cudaLaunchKernel record, LAG launches after the kernel's (activity
 * buffers can reach a trace before the API records of the same launches):
 * 2N records.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define NNAMES 20

static const char *const names[NNAMES] = {
	"_Z12empty_kernelv",
	"_Z10vector_addPKfS0_Pfi",
	"_Z6reducePfS_i",
	"_Z9transposePfPKfii",
	"_Z11softmax_fwdPKfPfii",
	"_Z10layer_normPKfS0_S0_Pfii",
	"_Z4geluPKfPfi",
	"_Z9copy_fp16P6__halfPKS_i",
	"_Z8sgemm_ntiiiPKfS0_Pf",
	"_Z13attention_fwdPK6__halfS1_S1_PS_iii",
	"_Z13attention_bwdPK6__halfS1_S1_PS_iii",
	"_Z9adam_stepPfS_S_PKfffffi",
	"_Z11embeddingfwPKiPKfPfii",
	"_Z13cross_entropyPKfPKiPfii",
	"_Z10dropout_fwPKfPfPhfi",
	"_Z7scatterPKfPKiPfi",
	"_Z6gatherPKfPKiPfi",
	"_Z11fill_kernelPffi",
	"_Z13bias_add_reluPfPKfii",
	"_Z16allreduce_kernelPfPKfi",
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* Metrics of the mixed trace's profiled launches. */
#define NMETRICS 4
static const char *const metric_names[NMETRICS] = {
	"gpu__time_duration.sum",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
};

static void put_metrics(struct synth *s, uint32_t corr, uint32_t kernel, uint64_t start,
			uint64_t dur, const uint32_t *mn, uint32_t r)
{
	unsigned char buf[sizeof(struct gp_rec_metrics) + NMETRICS * sizeof(struct gp_metric_value)];
	struct gp_rec_metrics *m = (void *)buf;
	struct gp_metric_value *v = (void *)(m + 1);
	/* 5% to 80% of an H100's DRAM bandwidth and FP32 peak, split by r. */
	double mem = (double)dur * 3350.0 * (0.05 + (r % 76) / 100.0);
	double flop = (double)dur * 66900.0 * (0.05 + (r / 76 % 76) / 100.0);
	double vals[NMETRICS] = { (double)dur, 0.75 * mem, 0.25 * mem, flop / 2 };

	memset(buf, 0, sizeof(buf));
	m->h.type = GP_REC_METRICS;
	m->h.size = (uint16_t)sizeof(buf);
	m->h.aux = NMETRICS;
	m->start = start;
	m->duration = dur;
	m->cost_ns = 40 * dur;
	m->correlation = corr;
	m->kernel = kernel;
	m->grid[0] = 1024;
	m->grid[1] = m->grid[2] = 1;
	m->block[0] = 256;
	m->block[1] = m->block[2] = 1;
	m->passes = 2;
	for (uint32_t i = 0; i < NMETRICS; i++) {
		v[i].name = mn[i];
		v[i].value = vals[i];
	}
	synth_rec(s, buf, sizeof(buf));
}

#define NLIVE 8

/*
 * A trace of about n records with what a training step records: each kernel
 * launch an API call and its kernel (same correlation id, queued behind its
 * stream's earlier work), copies and memsets with their API calls, stream-
 * ordered allocations and frees (at most NLIVE live), and hardware metrics
 * of each kernel's first launch with the device's ceilings.
 */
static void mixed(struct synth *s, unsigned long long n, uint64_t t, const uint32_t *ids)
{
	uint32_t mnames[NMETRICS], launch, copy, set, alloc, release;
	uint64_t stream_end[4] = { 0, 0, 0, 0 }, live_addr[NLIVE], live_bytes[NLIVE];
	uint32_t corr = 1000, nlive = 0, oldest = 0, profiled = 0;
	unsigned char seen[NNAMES] = { 0 };
	struct gp_rec_device_peaks p;
	struct gp_rec_metrics_info info;
	unsigned long long i;

	launch = synth_string(s, "cudaLaunchKernel");
	copy = synth_string(s, "cudaMemcpyAsync");
	set = synth_string(s, "cudaMemsetAsync");
	alloc = synth_string(s, "cudaMallocAsync");
	release = synth_string(s, "cudaFreeAsync");
	for (i = 0; i < NMETRICS; i++)
		mnames[i] = synth_string(s, metric_names[i]);
	synth_h100_peaks(&p);
	p.flops[GP_PEAK_FP32] = 66.9e12;
	p.flops[GP_PEAK_FP64] = 33.5e12;
	p.dram_bw = 3.35e12;
	synth_rec(s, &p, sizeof(p));
	/* Memory from before tracing freed (no allocation to match), and pinned host memory. */
	synth_memory(s, GP_MEM_FREE, t, 0x7e0000000000ull, 1 << 20, 0, 3, 0);
	synth_memory(s, GP_MEM_ALLOC, t + 10, 0x200000000ull, 64 << 20, 0, 2, 0);
	for (i = 0; s->records < n; i++) {
		uint32_t r = rnd(), st = (uint32_t)(i % 4), k = (r & 0xff) < 160 ? r % 4 : r % NNAMES;
		uint64_t dur = 1500 + (r >> 8) % 48000, call = 2000 + r % 3000, start;

		/* A launch blocks while its stream has 200 us of work queued (the launch queue). */
		if (stream_end[st] > t + 200000)
			t = stream_end[st] - 200000;
		if (!seen[k]) {
			/*
			 * The kernel's first launch is profiled by kernel replay: the
			 * device idle first, the kernel record at the launch call's
			 * time with the profiler's duration, as the recorder writes it.
			 */
			struct gp_rec_kernel kr;

			seen[k] = 1;
			for (int j = 0; j < 4; j++)
				if (stream_end[j] > t)
					t = stream_end[j];
			synth_api_at_corr(s, launch, t, t + call, 100, corr);
			memset(&kr, 0, sizeof(kr));
			kr.h.type = GP_REC_KERNEL;
			kr.h.size = sizeof(kr);
			kr.start = t;
			kr.end = t + dur;
			kr.correlation = corr;
			kr.name = ids[k];
			kr.context = 1;
			kr.stream = 7 + st;
			kr.grid[0] = 1024;
			kr.grid[1] = kr.grid[2] = 1;
			kr.block[0] = 256;
			kr.block[1] = kr.block[2] = 1;
			kr.registers = 32;
			kr.flags = GP_ACT_REPLAYED;
			synth_rec(s, &kr, sizeof(kr));
			put_metrics(s, corr, ids[k], t, dur, mnames, r);
			stream_end[st] = t + dur + 100;
			profiled++;
		} else {
			/* The launch: the API call, then its kernel once the stream is free. */
			synth_api_at_corr(s, launch, t, t + call, 100, corr);
			start = t + call + 2500 + rnd() % 2000;
			if (start < stream_end[st])
				start = stream_end[st];
			synth_kernel_at_corr(s, ids[k], start, start + dur, 0, 7 + st, corr);
			stream_end[st] = start + dur + 100;
		}
		corr++;
		t += call + 500 + rnd() % 1500;
		if (i % 64 == 63) {
			uint64_t b = (uint64_t)(r % 256 + 1) << 14, d = 1000 + b / 20;

			synth_api_at_corr(s, copy, t, t + 3000, 100, corr);
			start = t + 4000 > stream_end[st] ? t + 4000 : stream_end[st];
			synth_memcpy_at_corr(s, i % 128 == 63 ? GP_COPY_HTOD : GP_COPY_DTOH, b, start,
					     start + d, 0, 7 + st, corr);
			stream_end[st] = start + d + 100;
			corr++;
			t += 3500;
		}
		if (i % 128 == 100) {
			uint64_t b = (uint64_t)(r % 64 + 1) << 16;

			synth_api_at_corr(s, set, t, t + 2000, 100, corr);
			start = t + 3000 > stream_end[st] ? t + 3000 : stream_end[st];
			synth_memset_at_corr(s, b, start, start + 900 + b / 200, 0, 7 + st, corr, 3 /* device */);
			stream_end[st] = start + 1000 + b / 200;
			corr++;
			t += 2500;
		}
		if (i % 32 == 5) {
			/* Stream-ordered memory: a new block, the oldest freed when NLIVE are live. */
			if (nlive == NLIVE) {
				synth_api_at_corr(s, release, t, t + 1500, 100, corr++);
				synth_memory(s, GP_MEM_FREE, t + 1000, live_addr[oldest],
					     live_bytes[oldest], 0, 3, GP_MEM_F_ASYNC | GP_MEM_F_POOL);
				live_addr[oldest] = 0x7f0000000000ull + (uint64_t)i * 0x200000ull;
				live_bytes[oldest] = (uint64_t)(r % 512 + 1) << 12;
				synth_api_at_corr(s, alloc, t + 2000, t + 4000, 100, corr++);
				synth_memory(s, GP_MEM_ALLOC, t + 3000, live_addr[oldest],
					     live_bytes[oldest], 0, 3, GP_MEM_F_ASYNC | GP_MEM_F_POOL);
				oldest = (oldest + 1) % NLIVE;
			} else {
				live_addr[nlive] = 0x7f0000000000ull + (uint64_t)i * 0x200000ull;
				live_bytes[nlive] = (uint64_t)(r % 512 + 1) << 12;
				synth_api_at_corr(s, alloc, t, t + 2000, 100, corr++);
				synth_memory(s, GP_MEM_ALLOC, t + 1000, live_addr[nlive],
					     live_bytes[nlive], 0, 3, GP_MEM_F_ASYNC | GP_MEM_F_POOL);
				nlive++;
			}
			t += 4500;
		}
	}
	memset(&info, 0, sizeof(info));
	info.h.type = GP_REC_METRICS_INFO;
	info.h.size = sizeof(info);
	info.set = synth_string(s, "roofline");
	info.launches = 1;
	info.passes = 2;
	info.profiled = profiled;
	synth_rec(s, &info, sizeof(info));
	for (i = 0; i < 4; i++)
		if (stream_end[i] > t)
			t = stream_end[i];
	synth_end(s, t + 1000000, 0);
}

/* v to 3 significant digits: samples that compress like a GPU's (whose noise is real). */
static double sig3(double v)
{
	char b[32];

	snprintf(b, sizeof(b), "%.3g", v);
	return strtod(b, NULL);
}

struct span {
	uint64_t start, end;
	int fma;
};

/*
 * Nanoseconds of [a, b) covered by kernels k[0..n) of kind fma (sorted,
 * apart); windows asked in increasing order of a, *at the first kernel
 * that may reach one (the caller's cursor, 0 to begin).
 */
static uint64_t busy(const struct span *k, size_t n, uint64_t a, uint64_t b, int fma,
		     size_t *at)
{
	uint64_t t = 0;

	while (*at < n && k[*at].end <= a)
		(*at)++;
	for (size_t i = *at; i < n && k[i].start < b; i++) {
		uint64_t lo = k[i].start > a ? k[i].start : a, hi = k[i].end < b ? k[i].end : b;

		if (k[i].fma == fma && hi > lo)
			t += hi - lo;
	}
	return t;
}

#define GS_MS 1000000ull
#define GS_PHASE (120 * GS_MS)
#define GS_IDLE (30 * GS_MS)
#define GS_NVML (50 * GS_MS)

/*
 * test/apps/overtime.cu's program, shortened: ROUNDS rounds of a copy
 * phase (copy_f4, 2 ms launches) and an FMA phase (fma_loop, 5 ms), 120 ms
 * each, 30 ms idle after each, each phase in an NVTX range; PM samples
 * every 1 ms from 100 ms into the run (PM sampling's set-up), each value
 * what the kernels under it do for the part of it they cover (the copy
 * moves 1.6 TB/s each way at 4.5 % SM issue, the loop 82 % issue), with
 * a little noise; NVML every 50 ms: power, clocks, temperature, memory
 * used, utilization and the clock event reasons: idle (0x1) between
 * phases, and in the last FMA phase the software power cap (0x4) with the
 * SM clock held at 1755 MHz instead of 1980.
 */
static void gpu_samples(struct synth *s, unsigned long long rounds, uint64_t t0, uint64_t *endp)
{
	static const char *const pm[] = {
		"sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
		"sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
		"dram__bytes_read.sum.per_second",
		"dram__bytes_write.sum.per_second",
		"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
		"lts__t_bytes.sum.per_second",
	};
	static const char *const nv[] = {
		"nvml.power_w", "nvml.sm_clock_mhz", "nvml.mem_clock_mhz", "nvml.temperature_c",
		"nvml.memory_used_bytes", "nvml.clock_event_reasons", "nvml.gpu_util_pct",
	};
	size_t nk = 0, cap = 1024, at = 0;
	struct span *k = malloc(cap * sizeof(*k));
	uint32_t copy = synth_string(s, "_Z7copy_f4PK6float4PS_m");
	uint32_t fma = synth_string(s, "_Z8fma_loopPfi");
	uint32_t rcopy = synth_string(s, "copy phase"), rfma = synth_string(s, "fma phase");
	uint64_t t = t0, last_fma = 0, id = 1;
	double v[8];

	if (!k)
		return;
	synth_gpu_series(s, 1, GP_GPU_SRC_PM, GS_MS, pm, 6);
	synth_gpu_series(s, 2, GP_GPU_SRC_NVML, GS_NVML, nv, 7);
	for (unsigned long long r = 0; r < rounds; r++) {
		for (int f = 0; f < 2; f++) {
			uint64_t p0 = t, dur = f ? 5 * GS_MS : 2 * GS_MS;
			struct gp_rec_nvtx n;

			while (t - p0 < GS_PHASE) {
				uint64_t d = dur + rnd() % 20000;

				if (nk == cap) {
					struct span *x = realloc(k, 2 * cap * sizeof(*k));

					if (!x) {
						free(k);
						return;
					}
					k = x;
					cap *= 2;
				}
				k[nk].start = t;
				k[nk].end = t + d;
				k[nk++].fma = f;
				synth_kernel(s, f ? fma : copy, t, t + d, 0, 7, 0, 0);
				t += d + 15000 + rnd() % 10000;    /* the launch after a synchronize */
			}
			memset(&n, 0, sizeof(n));
			n.h.type = GP_REC_NVTX_RANGE;
			n.h.size = sizeof(n);
			n.h.aux = GP_NVTX_PUSHPOP;
			n.start = p0 - 5000;
			n.end = t;
			n.id = id++;
			n.tid_start = n.tid_end = 1;
			n.name = f ? rfma : rcopy;
			synth_rec(s, &n, sizeof(n));
			if (f && r + 1 == rounds)
				last_fma = p0;
			t += GS_IDLE;
		}
	}
	/* PM samples, 1 ms each, from 100 ms in to 20 ms past the last kernel. */
	for (uint64_t a = t0 + 100 * GS_MS; a < t + 20 * GS_MS - GS_IDLE; a += GS_MS) {
		double c = (double)busy(k, nk, a, a + GS_MS, 0, &at) / GS_MS;
		double f = (double)busy(k, nk, a, a + GS_MS, 1, &at) / GS_MS;
		double noise = 1 + ((double)(rnd() % 200) - 100) / 10000;   /* +-1 % */

		v[0] = sig3((c * 95 + f * 99) * noise);
		v[1] = sig3((c * 4.5 + f * 82) * noise);
		v[2] = sig3((c * 1.6e12 + f * 2e9 + 1e8) * noise);
		v[3] = sig3((c * 1.6e12 + f * 1e9 + 1e8) * noise);
		v[4] = 0;
		v[5] = sig3((c * 3.4e12 + f * 2e10 + 1e9) * noise);
		synth_gpu_sample(s, 1, a, a + GS_MS, v, 6);
	}
	/* NVML every 50 ms over the whole run. */
	at = 0;
	for (uint64_t a = t0, i = 0; a < t; a += GS_NVML, i++) {
		double c = (double)busy(k, nk, a, a + GS_NVML, 0, &at) / GS_NVML;
		double f = (double)busy(k, nk, a, a + GS_NVML, 1, &at) / GS_NVML;
		int capped = last_fma && a + GS_NVML > last_fma && a < last_fma + GS_PHASE;

		v[0] = sig3(90 + c * 260 + f * 560);
		v[1] = capped ? 1755 : 1980;
		v[2] = 2619;
		v[3] = 40 + (double)(i < 20 ? i : 20);
		v[4] = 2.25 * (1u << 30);
		v[5] = capped ? 4 : c + f < 0.5 ? 1 : 0;
		v[6] = sig3(100 * (c + f));
		synth_gpu_sample(s, 2, a, a + GS_NVML, v, 7);
	}
	free(k);
	*endp = t;
}

int main(int argc, char **argv)
{
	uint32_t ids[NNAMES];
	uint64_t t, start_ns = 1790000000000000000ull;
	unsigned long long n, i;
	struct synth *s;
	char *end = NULL;
	unsigned long long written;
	int mix = 0, gs = 0, same = 0;
	unsigned gpu = 0, nnames = 0;
	unsigned long late = 0;
	uint64_t *calls = NULL;
	uint32_t launch = 0;
	uint32_t *many = NULL;

	if (argc >= 5 && !strcmp(argv[1], "--gpu")) {
		gpu = (unsigned)strtoul(argv[2], &end, 10);
		if (!end || *end || gpu > 255) {
			fprintf(stderr, "synth_trace: bad GPU '%s' (0 to 255)\n", argv[2]);
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc >= 5 && !strcmp(argv[1], "--names")) {
		unsigned long k = strtoul(argv[2], &end, 10);

		if (!end || *end || k == 0 || k > 10000000) {
			fprintf(stderr, "synth_trace: bad name count '%s' (1 to 10000000)\n", argv[2]);
			return 2;
		}
		nnames = (unsigned)k;
		argv += 2;
		argc -= 2;
	}
	if (argc >= 5 && !strcmp(argv[1], "--api-late")) {
		late = strtoul(argv[2], &end, 10);
		if (!end || *end || late == 0 || late > 10000000) {
			fprintf(stderr, "synth_trace: bad lag '%s' (1 to 10000000)\n", argv[2]);
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc == 4 && !strcmp(argv[1], "--mix")) {
		mix = 1;
		argv++;
		argc--;
	} else if (argc == 4 && !strcmp(argv[1], "--same")) {
		same = 1;
		argv++;
		argc--;
	} else if (argc == 4 && !strcmp(argv[1], "--gpu-samples")) {
		gs = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: %s [--gpu G] [--names K] [--api-late LAG] [--mix | --same] N "
				"OUT.gpuprof\n"
				"       %s --gpu-samples ROUNDS OUT.gpuprof\n",
			argv[0], argv[0]);
		return 2;
	}
	if ((nnames || late) && (mix || same || gs)) {
		fputs("synth_trace: --names and --api-late are for kernel-only traces\n", stderr);
		return 2;
	}
	n = strtoull(argv[1], &end, 10);
	if (!end || *end || n == 0) {
		fprintf(stderr, "synth_trace: bad record count '%s'\n", argv[1]);
		return 2;
	}
	s = synth_open(argv[2]);
	if (!s) {
		perror(argv[2]);
		return 1;
	}
	s->chunk_limit = (size_t)1 << 20;
	s->delta = 1;
	s->hdr.features = GP_FEAT_DELTA;
	synth_process(s, 4242 + gpu, "bench-host", "./train --synthetic", UINT32_MAX, start_ns);
	/* As the recorder writes it: which samplers were on said too. */
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET | (mix ? GP_TRACE_API | GP_TRACE_MEMORY : 0) | (late ? GP_TRACE_API : 0) | (gs ? GP_TRACE_NVTX | GP_TRACE_GPU_METRICS | GP_TRACE_GPU_TELEMETRY : 0) | GP_TRACE_SAMPLERS_SAID, 0, 0);
	synth_device(s, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85ull << 30, (uint8_t)(0x10 + gpu));
	for (i = 0; i < NNAMES; i++)
		ids[i] = synth_string(s, names[i]);
	if (nnames) {
		char b[256];

		if (!(many = malloc(nnames * sizeof(*many)))) {
			fputs("synth_trace: out of memory\n", stderr);
			return 1;
		}
		/* Templated names as PyTorch's elementwise kernels have them, each its own. */
		for (i = 0; i < nnames; i++) {
			snprintf(b, sizeof(b),
				 "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctor"
				 "IfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm%lluEEEEviT0_T1_",
				 i);
			many[i] = synth_string(s, b);
		}
	}

	if (late) {
		launch = synth_string(s, "cudaLaunchKernel");
		if (!(calls = malloc(late * sizeof(*calls)))) {
			fputs("synth_trace: out of memory\n", stderr);
			return 1;
		}
	}
	t = start_ns + 1000000;
	if (gs) {
		gpu_samples(s, n, t, &t);
		synth_end(s, t + 1000000, 0);
		goto close;
	}
	if (mix) {
		mixed(s, n, t, ids);
		goto close;
	}
	if (same) {
		for (i = 0; i < n; i++, t += 2000)
			synth_kernel(s, ids[0], t, t + 1000, 0, 7, 0, 0);
		synth_end(s, t + 1000000, 0);
		goto close;
	}
	for (i = 0; i < n; i++) {
		uint32_t r = rnd();
		/* Skewed name choice: a few kernels dominate, as in real runs. */
		uint32_t name = many ? many[rnd() % nnames] : ids[(r & 0xff) < 160 ? r % 4 : r % NNAMES];
		uint64_t dur = 1500 + (r >> 8) % 48000;           /* 1.5 to 50 us */
		uint32_t stream = 7 + (uint32_t)(i % 4);

		if (!late) {
			synth_kernel(s, name, t, t + dur, 0, stream, 0, 0);
		} else {
			/*
			 * Each launch's cudaLaunchKernel record LAG launches after its
			 * kernel's, as activity buffers can reach a trace before the
			 * API records of the same launches.
			 */
			synth_kernel_at_corr(s, name, t, t + dur, 0, stream, (uint32_t)(1 + i));
			if (i >= late)
				synth_api_at_corr(s, launch, calls[i % late], calls[i % late] + 2000, 100,
						  (uint32_t)(1 + i - late));
			calls[i % late] = t - 4000;
		}
		t += 800 + (rnd() % 4000) + dur / 4;               /* launches overlap across streams */
	}
	for (i = n > late ? n - late : 0; late && i < n; i++)
		synth_api_at_corr(s, launch, calls[i % late], calls[i % late] + 2000, 100,
				  (uint32_t)(1 + i));
	synth_end(s, t + 1000000, 0);
close:
	free(many);
	free(calls);
	written = s->records;
	if (synth_close(s, NULL, NULL) != 0) {
		fprintf(stderr, "synth_trace: writing %s failed\n", argv[2]);
		return 1;
	}
	if (mix || gs)
		fprintf(stderr, "synth_trace: %llu records in %s\n", (unsigned long long)written, argv[2]);
	else
		fprintf(stderr, "synth_trace: %llu kernel records in %s\n", n, argv[2]);
	return 0;
}
