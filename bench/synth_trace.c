/*
 * synth_trace: writes a valid gpuprof trace holding N kernel records, for
 * timing the analyzer on large inputs without a GPU.
 *
 *     synth_trace [--mix] N OUT.gpuprof
 *
 * The file has what the recorder writes for a kernel-only run: a PROCESS
 * record, a CONFIG, one DEVICE, a STRING per kernel name (20 names), N
 * kernel records on 4 streams with increasing timestamps and varied
 * durations, and an END record, in chunks of at most 1 MiB of raw records,
 * delta-coded and each one zstd frame (level 1) with its CRC-32C, as the
 * recorder writes them (the format of include/gpuprof/trace.h, written by
 * the writer in test/unit/synth.c).  With --mix, about N records of a
 * training step instead (see mixed() below): launches with their API calls,
 * copies, memsets, allocations and frees, and hardware metrics.
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

int main(int argc, char **argv)
{
	uint32_t ids[NNAMES];
	uint64_t t, start_ns = 1790000000000000000ull;
	unsigned long long n, i;
	struct synth *s;
	char *end = NULL;
	unsigned long long written;
	int mix = 0;

	if (argc == 4 && !strcmp(argv[1], "--mix")) {
		mix = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: %s [--mix] N OUT.gpuprof\n", argv[0]);
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
	synth_process(s, 4242, "bench-host", "./train --synthetic", UINT32_MAX, start_ns);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET |
		     (mix ? GP_TRACE_API | GP_TRACE_MEMORY : 0), 0, 0);
	synth_device(s, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85ull << 30, 0x10);
	for (i = 0; i < NNAMES; i++)
		ids[i] = synth_string(s, names[i]);

	t = start_ns + 1000000;
	if (mix) {
		mixed(s, n, t, ids);
		goto close;
	}
	for (i = 0; i < n; i++) {
		uint32_t r = rnd();
		/* Skewed name choice: a few kernels dominate, as in real runs. */
		uint32_t name = ids[(r & 0xff) < 160 ? r % 4 : r % NNAMES];
		uint64_t dur = 1500 + (r >> 8) % 48000;           /* 1.5 to 50 us */
		uint32_t stream = 7 + (uint32_t)(i % 4);

		synth_kernel(s, name, t, t + dur, 0, stream, 0, 0);
		t += 800 + (rnd() % 4000) + dur / 4;               /* launches overlap across streams */
	}
	synth_end(s, t + 1000000, 0);
close:
	written = s->records;
	if (synth_close(s, NULL, NULL) != 0) {
		fprintf(stderr, "synth_trace: writing %s failed\n", argv[2]);
		return 1;
	}
	if (mix)
		fprintf(stderr, "synth_trace: %llu records in %s\n", (unsigned long long)written, argv[2]);
	else
		fprintf(stderr, "synth_trace: %llu kernel records in %s\n", n, argv[2]);
	return 0;
}
