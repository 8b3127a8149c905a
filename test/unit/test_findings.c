/*
 * Unit tests of the findings (analyzer/model/findings.c): for each rule a
 * synthetic trace with the problem and its fixed twin, written the way a
 * GPU would have recorded them; the rule must fire on the first, with its
 * time at stake and its places (the launch site's file:line, the host
 * call), and not on the twin.  Then the report's section, --findings,
 * --fail-on and the JSON export.  Test code, runs offline only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/analysis.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "synth_stacks.h"
#include "tap.h"
#include "gpuprof/peaks.h"

#define T0 1700000000000000000ull
#define US 1000ull
#define ITERS 20
#define PAGEABLE 1
#define PINNED 2
#define DEVMEM 3

static char dir[64];

enum scenario {
	STARVE, HOST_SYNC, SYNC_COPY, PAGEABLE_COPY, LAUNCH_BOUND, TINY, ALLOC, LOST,
	SCENARIOS
};

static const char *const names[SCENARIOS] = {
	"starve", "sync", "copy", "pageable", "launch", "tiny", "alloc", "lost",
};

static void copy_rec(struct synth *s, uint64_t start, uint64_t end, uint64_t bytes,
		     unsigned kind, unsigned src, unsigned dst, int async, uint32_t corr)
{
	struct gp_rec_memcpy r;

	synth_memcpy_init(&r, kind, bytes, start, end, 0, 7, corr);
	r.src_kind = (uint8_t)src;
	r.dst_kind = (uint8_t)dst;
	r.flags = async ? GP_ACT_ASYNC : 0;
	synth_rec(s, &r, sizeof(r));
}

/*
 * Each iteration launches a 200 us kernel from train.cu:42 (stack 1);
 * copies come from train.cu:57 (stack 2).  The problem keeps the device
 * idle for 100 us or more per iteration for the scenario's reason; the
 * twin ("fixed") queues the same work without it.
 */
/* The first string id write_trace() gives, 0: 1 (as recorders number them). */
static uint32_t string_base;

static void write_trace(const char *path, enum scenario sc, int fixed)
{
	struct synth *s = synth_open(path);
	uint32_t kname, launch, sync, memcpy_s, memcpy_a, mfree, mmalloc, app, file, fn;
	uint64_t t = T0 + 1000 * US, pcs[2];
	uint32_t corr = 1000;

	if (string_base)
		s->next_string = string_base;
	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_MEMCPY, 0, 1);
	kname = synth_string(s, "_Z4stepPf");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	sync = synth_string(s, "cudaDeviceSynchronize_v3020");
	memcpy_s = synth_string(s, "cudaMemcpy_v3020");
	memcpy_a = synth_string(s, "cudaMemcpyAsync_v3020");
	mfree = synth_string(s, "cudaFree_v3020");
	mmalloc = synth_string(s, "cudaMalloc_v3020");
	app = synth_string(s, "/work/train");
	file = synth_string(s, "train.cu");
	fn = synth_string(s, "_Z5trainv");
	synth_frame(s, 0x401000, 0x1000, app, fn, 0x20, file, 42);
	synth_frame(s, 0x402000, 0x2000, app, fn, 0x40, file, 57);
	pcs[0] = 0x401000;
	synth_stack(s, 1, pcs, 1);
	pcs[0] = 0x402000;
	synth_stack(s, 2, pcs, 1);

	if (sc == LOST)
		synth_lost(s, GP_LOST_RING_FULL, fixed ? 0 : 1234);
	if (sc == LAUNCH_BOUND) {
		/* 200 kernels of 3 us: 6 us apart (launch-bound), or 0.5 us (a graph). */
		uint64_t gap = fixed ? 500 : 6 * US;

		for (int i = 0; i < 200; i++, corr++) {
			synth_api_at_corr(s, launch, t - 4 * US, t - 1 * US, 1, corr);
			synth_corr_stack(s, corr, 1);
			synth_kernel_at_corr(s, kname, t, t + 3 * US, 0, 7, corr);
			t += 3 * US + gap;
		}
		goto end;
	}
	if (sc == TINY) {
		/*
		 * 200 copies of 4 KiB, or (fixed 1) one of 800 KiB; fixed 2: the
		 * 200 with a 0.5 us kernel in each gap.
		 */
		for (int i = 0; i < (fixed == 1 ? 1 : 200); i++, corr++) {
			uint64_t d = fixed == 1 ? 40 * US : 2 * US;

			synth_api_at_corr(s, memcpy_a, t - 3 * US, t - 1 * US, 1, corr);
			synth_corr_stack(s, corr, 2);
			copy_rec(s, t, t + d, fixed == 1 ? 800 << 10 : 4 << 10, GP_COPY_HTOD, PINNED,
				 DEVMEM, 1, corr);
			if (fixed == 2)
				synth_kernel_at_corr(s, kname, t + d + 250, t + d + 750, 0, 7, 0);
			t += d + 1 * US;
		}
		goto end;
	}
	for (int i = 0; i < ITERS; i++, corr += 2) {
		uint64_t k0 = t + 5 * US, k1 = k0 + 200 * US, next;

		synth_api_at_corr(s, launch, t, t + 4 * US, 1, corr);
		synth_corr_stack(s, corr, 1);
		synth_kernel_at_corr(s, kname, k0, k1, 0, 7, corr);
		next = k1 + 100 * US;     /* the problem: 100 us of host time exposed */
		if (fixed) {
			/* The next launch is queued before this kernel ends. */
			next = k1;
			if (sc == SYNC_COPY || sc == PAGEABLE_COPY) {
				synth_api_at_corr(s, memcpy_a, t + 5 * US, t + 8 * US, 1, corr + 1);
				synth_corr_stack(s, corr + 1, 2);
				copy_rec(s, k1, k1 + 2 * US, sc == PAGEABLE_COPY ? 1 << 20 : 4,
					 GP_COPY_DTOH, DEVMEM, PINNED, 1, corr + 1);
				next = k1 + 2 * US;
			}
		} else if (sc == HOST_SYNC) {
			synth_api(s, sync, t + 6 * US, k1 + 3 * US, 1, 0);
		} else if (sc == SYNC_COPY || sc == PAGEABLE_COPY) {
			/* Waits for the kernel, copies, returns 2 us later. */
			synth_api_at_corr(s, sc == SYNC_COPY ? memcpy_s : memcpy_a, t + 6 * US,
					  k1 + 12 * US, 1, corr + 1);
			synth_corr_stack(s, corr + 1, 2);
			copy_rec(s, k1, k1 + 10 * US, sc == PAGEABLE_COPY ? 1 << 20 : 4, GP_COPY_DTOH,
				 DEVMEM, sc == PAGEABLE_COPY ? PAGEABLE : PINNED,
				 sc == PAGEABLE_COPY, corr + 1);
			next = k1 + 10 * US + 100 * US;
		} else if (sc == ALLOC) {
			/* cudaFree waits for the device, then cudaMalloc. */
			synth_api(s, mfree, t + 6 * US, k1 + 2 * US, 1, 0);
			synth_api(s, mmalloc, k1 + 3 * US, k1 + 95 * US, 1, 0);
		} else if (sc == LOST) {
			next = k1;
		}
		t = next - 5 * US;
	}
end:
	synth_end(s, t + 1000 * US, sc == LOST && !fixed ? 1234 : 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/* One profiled launch: its duration and DRAM bytes, FP32 FMAs or TF32 tensor ops. */
static void put_metrics(struct synth *s, uint32_t corr, uint32_t kernel, uint64_t start,
			uint64_t dur, double ffma, double tf32, double bytes)
{
	unsigned char buf[sizeof(struct gp_rec_metrics) + 5 * sizeof(struct gp_metric_value)];
	struct gp_rec_metrics *m = (void *)buf;
	struct gp_metric_value *v = (void *)(m + 1);
	const char *mnames[5] = {
		"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
		"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
		"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
	};
	double vals[5] = { (double)dur, bytes / 2, bytes / 2, ffma, tf32 };

	memset(buf, 0, sizeof(buf));
	m->h.type = GP_REC_METRICS;
	m->h.size = (uint16_t)(sizeof(*m) + 5 * sizeof(*v));
	m->h.aux = 5;
	m->start = start;
	m->duration = dur;
	m->correlation = corr;
	m->kernel = kernel;
	m->grid[0] = 528;
	m->grid[1] = m->grid[2] = 1;
	m->block[0] = 256;
	m->block[1] = m->block[2] = 1;
	m->passes = 2;
	for (uint32_t i = 0; i < 5; i++) {
		v[i].name = synth_string(s, mnames[i]);
		v[i].value = vals[i];
	}
	synth_rec(s, buf, m->h.size);
}

/* A process on an H100 whose kernels have hardware metrics: its peaks into *p. */
static void h100_metrics_head(struct synth *s, struct gp_rec_device_peaks *p)
{
	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_h100_peaks(p);
	gp_peaks_compute(p);
	synth_rec(s, p, sizeof(*p));
}

/*
 * Hardware metrics on an H100: a GEMM-named kernel doing FP32 FMAs at 75%
 * of the FP32 roof (the twin: the same FLOPs on TF32 tensor cores), and a
 * kernel at under 1% of its roof (the twin: at 75%).  1 ms each, 10 times.
 */
static void write_metrics(const char *path, int fixed)
{
	struct synth *s = synth_open(path);
	struct gp_rec_device_peaks p;
	uint32_t gemm, slow;
	uint64_t t = T0 + 1000 * US;

	h100_metrics_head(s, &p);
	gemm = synth_string(s, "_Z10sgemm_fp32PfS_S_");
	slow = synth_string(s, "_Z4slowPf");
	for (int i = 0; i < 10; i++) {
		double fp32 = 0.75 * p.flops[GP_PEAK_FP32] * 1e-3;   /* FLOPs in 1 ms */
		double tc = 0.75 * p.flops[GP_PEAK_TENSOR_TF32] * 1e-3;

		synth_kernel(s, gemm, t, t + 1000 * US, 0, 7, 0, 0);
		if (fixed)
			put_metrics(s, 1, gemm, t, 1000 * US, 0, tc, 1e6);
		else
			put_metrics(s, 1, gemm, t, 1000 * US, fp32 / 2, 0, 1e6);
		t += 1000 * US;
		synth_kernel(s, slow, t, t + 1000 * US, 0, 7, 0, 0);
		put_metrics(s, 2, slow, t, 1000 * US, fixed ? fp32 / 2 : fp32 / 200, 0, 1e6);
		t += 1000 * US;
	}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * Occupancy beside hardware metrics: 10 launches of 1 ms of 2112 blocks of
 * 128 threads of 121 registers (4 blocks an SM on 132 SMs: 4 rounds, 1
 * with the limit lifted), measured at pct% of the FP32 roof.
 */
static void write_occ_roof(const char *path, double pct)
{
	struct synth *s = synth_open(path);
	struct gp_rec_device_peaks p;
	uint32_t kname;
	uint64_t t = T0 + 1000 * US;

	h100_metrics_head(s, &p);
	kname = synth_string(s, "_Z5densePf");
	for (uint32_t i = 0; i < 10; i++, t += 1000 * US) {
		struct gp_rec_kernel r;

		synth_kernel_init(&r, kname, t, t + 1000 * US, 0, 7, 100 + i);
		r.grid[0] = 2112;
		r.grid[1] = r.grid[2] = 1;
		r.block[0] = 128;
		r.block[1] = r.block[2] = 1;
		r.registers = 121;
		synth_rec(s, &r, sizeof(r));
		/* FMAs: 2 FLOPs each; 1 MB of DRAM traffic keeps it right of the ridge. */
		put_metrics(s, 100 + i, kname, t, 1000 * US,
			    pct / 100 * p.flops[GP_PEAK_FP32] * 1e-3 / 2, 0, 1e6);
	}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/* Start-up: 12 module loads of 3 ms (JIT), or of 0.1 ms (cubins for the GPU), then work. */
static void write_startup(const char *path, int fixed)
{
	struct synth *s = synth_open(path);
	uint32_t load = 0, kname;
	uint64_t t = T0 + 1000 * US, d = fixed ? 100 * US : 3000 * US;

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 0);
	load = synth_string(s, "cuModuleLoadData");
	kname = synth_string(s, "_Z4stepPf");
	for (int i = 0; i < 12; i++, t += d + 10 * US)
		synth_api(s, load, t, t + d, 1, 0);
	synth_kernel(s, kname, t, t + 100 * US, 0, 7, 0, 0);
	synth_end(s, t + 1000 * US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * Rank `rank` of a 2-rank job: 10 NVTX steps, each a compute kernel (1 ms;
 * rank 1: 1.5 ms unless fixed) then an NCCL all-reduce of 0.5 ms, alone on
 * the device (fixed: beside a compute kernel on another stream).
 */
static void write_rank(const char *path, uint32_t rank, int fixed)
{
	struct synth *s = synth_open(path);
	uint32_t gemm, nccl, step;
	uint64_t t = T0 + 1000 * US;

	synth_process(s, 500 + rank, "node1", "python3 train.py", rank, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, (uint8_t)(0x40 + rank));
	gemm = synth_string(s, "_Z4gemmv");
	nccl = synth_string(s, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE");
	step = synth_string(s, "train_step");
	for (int i = 0; i < 10; i++, t += 3000 * US) {
		uint64_t c = rank == 1 && !fixed ? 1500 * US : 1000 * US;

		synth_kernel(s, gemm, t, t + c, 0, 7, 0, 0);
		synth_kernel(s, nccl, t + 1600 * US, t + 2100 * US, 0, 9, 0, 0);
		if (fixed)
			synth_kernel(s, gemm, t + 1600 * US, t + 2100 * US, 0, 8, 0, 0);
		synth_nvtx_range(s, step, 0, t, t + 2500 * US, 1, 1, (uint64_t)i + 1, GP_NVTX_PUSHPOP);
	}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * Rank `rank` of a 2-rank job bound by communication: 10 times a compute
 * kernel of `compute` then an NCCL all-reduce of 500 us, alone; from the
 * 4th on, a compute kernel of 100 us runs beside the all-reduce.
 */
static void write_comm_rank(const char *path, uint32_t rank, uint64_t compute)
{
	struct synth *s = synth_open(path);
	uint32_t gemm, nccl;
	uint64_t t = T0 + 1000 * US;

	synth_process(s, 600 + rank, "node1", "python3 train.py", rank, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, (uint8_t)(0x60 + rank));
	gemm = synth_string(s, "_Z4gemmv");
	nccl = synth_string(s, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE");
	for (int i = 0; i < 10; i++, t += 2000 * US) {
		synth_kernel(s, gemm, t, t + compute, 0, 7, 0, 0);
		synth_kernel(s, nccl, t + compute, t + compute + 500 * US, 0, 9, 0, 0);
		if (i >= 3)
			synth_kernel(s, gemm, t + compute, t + compute + 100 * US, 0, 8, 0, 0);
	}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/* Two streams of 20 kernels of 100 us each: one after another, or side by side (fixed). */
static void write_streams(const char *path, int fixed)
{
	struct synth *s = synth_open(path);
	uint32_t a, b;
	uint64_t t = T0 + 1000 * US;

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	a = synth_string(s, "_Z5left_v");
	b = synth_string(s, "_Z6right_v");
	for (int i = 0; i < 20; i++) {
		synth_kernel(s, a, t, t + 100 * US, 0, 13, 0, 0);
		if (!fixed)
			t += 100 * US;
		synth_kernel(s, b, t, t + 100 * US, 0, 14, 0, 0);
		t += 100 * US;
	}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * Eleven streams of one device, kernels interleaved in an order that
 * changes every round (30 rounds), stream j's kernels (j + 1) us long;
 * streams 1, 17, 33 and 49 and streams 2 and 18 share a slot of the
 * device's stream look-up.
 */
static const uint32_t many_streams[11] = { 1, 17, 33, 49, 2, 18, 3, 5, 7, 9, 11 };

static void write_many_streams(const char *path)
{
	struct synth *s = synth_open(path);
	uint32_t a;
	uint64_t t = T0 + 1000 * US;

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	a = synth_string(s, "_Z4stepv");
	for (int r = 0; r < 30; r++)
		for (int i = 0; i < 11; i++) {
			int j = (i * 5 + r) % 11;

			synth_kernel(s, a, t, t + (uint64_t)(j + 1) * US, 0, many_streams[j], 0, 0);
			t += 20 * US;
		}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * Streams 13 and 14 of 20 kernels of 100 us each, a 2 us kernel on the
 * context's legacy default stream 9 (from train.cu:57) between each two:
 * none overlaps.  legacy 0: the context says its NULL stream is 3.
 */
static void write_legacy(const char *path, int legacy)
{
	struct synth *s = synth_open(path);
	struct gp_rec_context c;
	uint32_t a, b, z, launch, app, file, fn, corr = 100;
	uint64_t t = T0 + 1000 * US, pcs[2] = { 0x401000, 0x402000 };

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 1);
	memset(&c, 0, sizeof(c));
	c.h.type = GP_REC_CONTEXT;
	c.h.size = sizeof(c);
	c.id = 1;
	c.null_stream = legacy ? 9 : 3;
	synth_rec(s, &c, sizeof(c));
	a = synth_string(s, "_Z5left_v");
	b = synth_string(s, "_Z6right_v");
	z = synth_string(s, "_Z4zerov");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	app = synth_string(s, "/work/train");
	file = synth_string(s, "train.cu");
	fn = synth_string(s, "_Z5trainv");
	synth_frame(s, 0x401000, 0x1000, app, fn, 0x20, file, 42);
	synth_frame(s, 0x402000, 0x2000, app, fn, 0x40, file, 57);
	synth_stack(s, 1, &pcs[0], 1);
	synth_stack(s, 2, &pcs[1], 1);
	for (int i = 0; i < 40; i++) {
		synth_api_at_corr(s, launch, t - 5 * US, t - 4 * US, 1, ++corr);
		synth_corr_stack(s, corr, 1);
		synth_kernel_at_corr(s, i % 2 ? b : a, t, t + 100 * US, 0, i % 2 ? 14 : 13, corr);
		t += 100 * US;
		synth_api_at_corr(s, launch, t - 5 * US, t - 4 * US, 1, ++corr);
		synth_corr_stack(s, corr, 2);
		synth_kernel_at_corr(s, z, t, t + 2 * US, 0, 9, corr);
		t += 2 * US;
	}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/* 8 peer copies of 1 MiB between two GPUs: staged through the host (two legs), or direct. */
static void write_peer(const char *path, int fixed)
{
	struct synth *s = synth_open(path);
	uint32_t peer;
	uint64_t t = T0 + 1000 * US;

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_device(s, 1, "GPU", 9, 0, 132, 80ull << 30, 0x11);
	synth_config(s, GP_TRACE_MEMCPY | GP_TRACE_API, 0, 0);
	peer = synth_string(s, "cudaMemcpyPeerAsync");
	for (uint32_t i = 0; i < 8; i++, t += 1000 * US) {
		synth_api_at_corr(s, peer, t - 10 * US, t - 5 * US, 1, 500 + i);
		if (fixed) {
			synth_memcpy_at_corr(s, GP_COPY_PTOP, 1 << 20, t, t + 100 * US, 0, 1, 500 + i);
			continue;
		}
		synth_memcpy_at_corr(s, GP_COPY_DTOH, 1 << 20, t, t + 200 * US, 0, 1, 500 + i);
		synth_memcpy_at_corr(s, GP_COPY_HTOD, 1 << 20, t + 200 * US, t + 400 * US, 1, 1,
				     500 + i);
	}
	synth_end(s, t, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * Fixed twins as a GPU records them, each with what a naive rule mistakes
 * for a problem; 200 kernels of 200 us from train.cu:42.
 *  0: the host queues every kernel ahead (one each 100 us) and waits at the
 *     end in cudaStreamSynchronize while the device runs the queue 1.2 us
 *     apart; before the loop, one 200 us gap of host code (the pipeline
 *     filling: 0.5% of the device's span);
 *  1: a cudaDeviceSynchronize per step that returns 1 us after the kernel,
 *     the next kernel 3 us after it: gaps shorter than a host round trip;
 *  2: (with syncs = N) N steps of the 200 drain the device for 100 us in
 *     cudaDeviceSynchronize: 3 are under 1% of the device's span, 5 above.
 */
static void write_twinlike(const char *path, int variant, int syncs)
{
	struct synth *s = synth_open(path);
	uint32_t kname, launch, ssync, dsync, app, file, fn, corr = 100;
	uint64_t t = T0 + 1000 * US, host = t, k0, pcs[1];

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 1);
	kname = synth_string(s, "_Z4stepPf");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	ssync = synth_string(s, "cudaStreamSynchronize_v3020");
	dsync = synth_string(s, "cudaDeviceSynchronize_v3020");
	app = synth_string(s, "/work/train");
	file = synth_string(s, "train.cu");
	fn = synth_string(s, "_Z5trainv");
	synth_frame(s, 0x401000, 0x1000, app, fn, 0x20, file, 42);
	pcs[0] = 0x401000;
	synth_stack(s, 1, pcs, 1);

	/* The warm-up kernel, and the host's work before the loop. */
	synth_kernel(s, kname, t, t + 1 * US, 0, 7, 0, 0);
	k0 = t + 1 * US + (variant == 0 ? 200 * US : 5 * US);
	host = k0 - 5 * US;
	for (int i = 0; i < 200; i++, corr++) {
		uint64_t k1 = k0 + 200 * US, next = k1 + 1200;

		synth_api_at_corr(s, launch, host, host + 4 * US, 1, corr);
		synth_corr_stack(s, corr, 1);
		synth_kernel_at_corr(s, kname, k0, k1, 0, 7, corr);
		if (variant == 0) {
			host += 100 * US;
		} else if (variant == 1) {
			synth_api(s, dsync, host + 5 * US, k1 + 1 * US, 1, 0);
			next = k1 + 3 * US;
			host = k1 + 1 * US;
		} else if (i % (200 / syncs) == 0 && i / (200 / syncs) < syncs) {
			synth_api(s, dsync, host + 5 * US, k1 + 2 * US, 1, 0);
			next = k1 + 100 * US;
			host = next - 5 * US;
		} else {
			host = k1 - 5 * US;
		}
		k0 = next;
	}
	if (variant == 0)
		synth_api(s, ssync, host, k0 + 2 * US, 1, 0);
	synth_end(s, k0 + 1000 * US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * 200 kernels of 3 us from train.cu:42.  variant 0: the host falls behind,
 * gaps of 40 and 70 us in turn (astride the 50 us of host gaps), each
 * launch call 30 us, after a first launch of 5 ms and a pause; 1: the same kernels replayed from a graph, 6 us apart
 * (one graph launch); 2: no launch calls traced, 6 us apart; 3: as 2 with
 * launch calls of 3 us, written after all the kernels.
 */
static void write_launch(const char *path, int variant)
{
	struct synth *s = synth_open(path);
	uint32_t kname, launch, glaunch, app, file, fn, corr = 100;
	uint64_t t = T0 + 1000 * US, pc = 0x401000;

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | (variant == 2 ? 0 : GP_TRACE_API), 0, 1);
	kname = synth_string(s, "_Z4stepPf");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	glaunch = synth_string(s, "cudaGraphLaunch_v10000");
	app = synth_string(s, "/work/train");
	file = synth_string(s, "train.cu");
	fn = synth_string(s, "_Z5trainv");
	synth_frame(s, 0x401000, 0x1000, app, fn, 0x20, file, 42);
	synth_stack(s, 1, &pc, 1);
	if (variant == 1)
		synth_api_at_corr(s, glaunch, t - 10 * US, t - 5 * US, 1, corr);
	if (variant == 0) {
		/* A first launch that loads its module (5 ms), 5 ms before the loop: no run's. */
		synth_api_at_corr(s, launch, t - 5001 * US, t - 1 * US, 1, ++corr);
		synth_kernel_at_corr(s, kname, t, t + 3 * US, 0, 7, corr);
		t += 5000 * US;
	}
	for (int i = 0; i < 200; i++) {
		uint64_t gap = variant == 0 ? (i % 2 ? 70 * US : 40 * US) : 6 * US;

		if (variant == 0) {
			synth_api_at_corr(s, launch, t - 31 * US, t - 1 * US, 1, ++corr);
			synth_corr_stack(s, corr, 1);
			synth_kernel_at_corr(s, kname, t, t + 3 * US, 0, 7, corr);
		} else if (variant == 1) {
			struct gp_rec_kernel r;

			synth_kernel_init(&r, kname, t, t + 3 * US, 0, 7, corr);
			r.graph_id = 5;
			synth_rec(s, &r, sizeof(r));
		} else {
			synth_kernel_at_corr(s, kname, t, t + 3 * US, 0, 7, ++corr);
		}
		t += 3 * US + gap;
	}
	/* variant 3: the launch calls after their kernels, in a buffer of their own. */
	for (int i = 0, c = 100; variant == 3 && i < 200; i++)
		synth_api_at_corr(s, launch, T0 + 1000 * US + (uint64_t)i * 9 * US - 4 * US,
				  T0 + 1000 * US + (uint64_t)i * 9 * US - 1 * US, 1, ++c);
	synth_end(s, t + 1000 * US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/* One kernel configuration of dur 20 times: grid blocks of block threads and regs registers. */
static void write_grid(const char *path, uint32_t grid, uint32_t block, uint16_t regs,
		       uint64_t dur)
{
	struct synth *s = synth_open(path);
	uint32_t kname, launch, app, file, fn, corr = 100;
	uint64_t t = T0 + 1000 * US, pc = 0x401000;

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 1);
	kname = synth_string(s, "_Z4gridPf");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	app = synth_string(s, "/work/train");
	file = synth_string(s, "train.cu");
	fn = synth_string(s, "_Z5trainv");
	synth_frame(s, 0x401000, 0x1000, app, fn, 0x20, file, 42);
	synth_stack(s, 1, &pc, 1);
	for (int i = 0; i < 20; i++, corr++) {
		struct gp_rec_kernel r;

		synth_api_at_corr(s, launch, t - 5 * US, t - 1 * US, 1, corr);
		synth_corr_stack(s, corr, 1);
		synth_kernel_init(&r, kname, t, t + dur, 0, 7, corr);
		r.grid[0] = grid;
		r.grid[1] = r.grid[2] = 1;
		r.block[0] = block;
		r.block[1] = r.block[2] = 1;
		r.registers = regs;
		synth_rec(s, &r, sizeof(r));
		t += dur;
	}
	synth_end(s, t + 1000 * US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/*
 * A long loop (STREAM_ITERS steps, over 4096 busy intervals, so the busy
 * union retires them as it reads and the findings scan their gaps in the
 * same pass): each step launches a 200 us kernel from train.cu:42, then in
 * turn 100 us of host code, a synchronization, a synchronous copy from
 * train.cu:57 (its stack recorded), cudaFree + cudaMalloc, or 40 kernels
 * of 3 us 6 us apart (launch-bound).  The API records of STREAM_API_LATE
 * steps (about 1.5 s, more than the busy union's lag) are written after
 * their activities, as a recorder's buffers may come: gaps wait for them.
 */
#define STREAM_API_LATE 4096
#define STREAM_ITERS 40000

struct pending_api {
	uint32_t name, corr;
	uint64_t start, end;
};

static void write_stream(const char *path)
{
	struct synth *s = synth_open(path);
	uint32_t kname, sname, launch, sync, memcpy_s, mfree, mmalloc, app, file, fn, corr = 100;
	uint64_t t = T0 + 1000 * US, pcs[1];
	struct pending_api *api = malloc(STREAM_API_LATE * 48 * sizeof(*api));
	size_t napi = 0;

	CHECK(api != NULL);
	if (!api)
		return;

	synth_process(s, 4242, "host", "./train", UINT32_MAX, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_MEMCPY, 0, 1);
	kname = synth_string(s, "_Z4stepPf");
	sname = synth_string(s, "_Z5smallPf");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	sync = synth_string(s, "cudaDeviceSynchronize_v3020");
	memcpy_s = synth_string(s, "cudaMemcpy_v3020");
	mfree = synth_string(s, "cudaFree_v3020");
	mmalloc = synth_string(s, "cudaMalloc_v3020");
	app = synth_string(s, "/work/train");
	file = synth_string(s, "train.cu");
	fn = synth_string(s, "_Z5trainv");
	synth_frame(s, 0x401000, 0x1000, app, fn, 0x20, file, 42);
	synth_frame(s, 0x402000, 0x2000, app, fn, 0x40, file, 57);
	pcs[0] = 0x401000;
	synth_stack(s, 1, pcs, 1);
	pcs[0] = 0x402000;
	synth_stack(s, 2, pcs, 1);
	for (int i = 0; i < STREAM_ITERS; i++, corr += 2) {
		uint64_t k0 = t + 5 * US, k1 = k0 + 200 * US, next = k1 + 100 * US;

		api[napi++] = (struct pending_api){ launch, corr, t, t + 4 * US };
		synth_corr_stack(s, corr, 1);
		synth_kernel_at_corr(s, kname, k0, k1, 0, 7, corr);
		switch (i % 5) {
		case 1:
			api[napi++] = (struct pending_api){ sync, 0, t + 6 * US, k1 + 3 * US };
			break;
		case 2:
			api[napi++] = (struct pending_api){ memcpy_s, corr + 1, t + 6 * US, k1 + 12 * US };
			synth_corr_stack(s, corr + 1, 2);
			copy_rec(s, k1, k1 + 10 * US, 4, GP_COPY_DTOH, DEVMEM, PINNED, 0, corr + 1);
			next = k1 + 110 * US;
			break;
		case 3:
			api[napi++] = (struct pending_api){ mfree, 0, t + 6 * US, k1 + 2 * US };
			api[napi++] = (struct pending_api){ mmalloc, 0, k1 + 3 * US, k1 + 95 * US };
			break;
		case 4:
			for (int k = 0; k < 40; k++) {
				uint64_t h = k1 + (uint64_t)k * 9 * US, ks = k1 + 5 * US + (uint64_t)k * 9 * US;

				corr++;
				api[napi++] = (struct pending_api){ launch, corr, h, h + 4 * US };
				synth_kernel_at_corr(s, sname, ks, ks + 3 * US, 0, 7, corr);
			}
			next = k1 + 40 * 9 * US + 100 * US;
			break;
		}
		t = next - 5 * US;
		if (i % STREAM_API_LATE == STREAM_API_LATE - 1 || i == STREAM_ITERS - 1) {
			for (size_t k = 0; k < napi; k++)
				synth_api_at_corr(s, api[k].name, api[k].start, api[k].end, 1, api[k].corr);
			napi = 0;
		}
	}
	synth_end(s, t + 1000 * US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
	free(api);
}

/*
 * Rank f of two processes on one GPU: 20000 kernels of 1 ms, 2 ms apart,
 * the second rank's in the first one's gaps (the GPU always busy), 40 s.
 */
static void write_shared(const char *path, int f)
{
	struct synth *s = synth_open(path);
	uint64_t t = T0 + 1000 * US + (uint64_t)f * 1000 * US;
	uint32_t k;

	synth_process(s, 100 + (uint32_t)f, "host", "./train", (uint32_t)f, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	k = synth_string(s, "_Z4stepPf");
	for (int i = 0; i < 20000; i++, t += 2000 * US)
		synth_kernel(s, k, t, t + 1000 * US, 0, 7, 0, 0);
	synth_end(s, t + 1000 * US, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
}

/* The findings of an as text, strtab ids as their strings. */
static char *findings_text(const struct ga_analysis *an)
{
	struct ga_buf b = { 0 };

	for (size_t i = 0; i < an->fd.nf; i++) {
		const struct ga_finding *f = &an->fd.f[i];

		ga_buf_printf(&b, "%u %u %llu %.6f %s | %s\n", f->rule, f->severity,
			      (unsigned long long)f->stake_ns, f->stake_pct, f->subject, f->summary);
		for (size_t e = 0; e < f->nev; e++)
			ga_buf_printf(&b, "  %s %.6g %c\n", f->ev[e].name, f->ev[e].v, f->ev[e].unit);
		for (size_t w = 0; w < f->nwhere; w++) {
			const struct ga_where *x = &f->where[w];
			const struct ga_model *m = &an->m;

			ga_buf_printf(&b, "  @ %s|%s|%s|%s|%s|%s|%s %u %u %u %llu %llu\n",
				      ga_model_str(m, x->site_before), ga_model_str(m, x->site_after),
				      ga_model_str(m, x->site_call), ga_model_str(m, x->label_before),
				      ga_model_str(m, x->label_after), ga_model_str(m, x->call),
				      ga_model_str(m, x->nvtx), x->stream, x->proc, x->step,
				      (unsigned long long)x->ns, (unsigned long long)x->count);
		}
	}
	return b.p ? b.p : strdup("");
}

/* Builds the analysis of path, busy intervals retired as read or not, without its findings. */
static int analyze_retire(const char *path, struct ga_analysis *an, struct ga_filter *flt,
			  int retire)
{
	char *argv[1] = { (char *)path };
	/* Without retiring: every interval kept and scanned at finish. */
	struct ga_analysis_opts o = { .stack_depth = 3, .observe_sites = 1, .no_retire = !retire };

	ga_filter_init(flt);
	if (ga_analysis_init(an, &o, flt))
		return -1;
	an->m.busy_retire = retire;
	return ga_analysis_build(an, argv, 1);
}

static int analyze(const char *path, struct ga_analysis *an, struct ga_filter *flt)
{
	if (analyze_retire(path, an, flt, 1))
		return -1;
	return ga_analysis_findings(an);
}

static const struct ga_finding *find(const struct ga_analysis *an, unsigned rule)
{
	for (size_t i = 0; i < an->fd.nf; i++)
		if (an->fd.f[i].rule == rule)
			return &an->fd.f[i];
	return NULL;
}

/* Any place of f whose site (before or after) has text needle. */
static int site_has(const struct ga_analysis *an, const struct ga_finding *f, int after,
		    const char *needle)
{
	for (size_t i = 0; i < f->nwhere; i++) {
		uint32_t id = after ? f->where[i].site_after : f->where[i].site_before;

		if (id && strstr(ga_model_str(&an->m, id), needle))
			return 1;
	}
	return 0;
}

static int call_is(const struct ga_analysis *an, const struct ga_finding *f, const char *name)
{
	return f->nwhere && f->where[0].call && !strcmp(ga_model_str(&an->m, f->where[0].call), name);
}

static uint64_t within(uint64_t v, uint64_t want, uint64_t tol)
{
	return v + tol >= want && v <= want + tol;
}

#define run(out, err, ...) synth_run(dir, out, err, __VA_ARGS__)

int main(void)
{
	char path[SCENARIOS][2][128];
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_finding *f;
	char *out = NULL, *err = NULL;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-find-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (int sc = 0; sc < SCENARIOS; sc++)
		for (int fx = 0; fx < 2; fx++) {
			snprintf(path[sc][fx], sizeof(path[sc][fx]), "%s/%s%s.gpuprof", dir,
				 names[sc], fx ? "_fixed" : "");
			write_trace(path[sc][fx], (enum scenario)sc, fx);
		}

	/* Problem: 19 gaps of 100 us. */
	tap_begin("findings: gpu-starvation fires on host gaps, with the launch site after them");
	CHECK(analyze(path[STARVE][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_STARVATION);
	CHECKF(f && within(f->stake_ns, 19 * 100 * US, 2 * US), "stake %llu",
	       f ? (unsigned long long)f->stake_ns : 0ull);
	CHECKF(f && site_has(&an, f, 1, "train.cu:42"), "no site train.cu:42");
	CHECK(f && f->severity >= GA_SEV_WARNING);
	CHECK(!find(&an, GA_RULE_HOST_SYNC) && !find(&an, GA_RULE_SYNC_COPY));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[STARVE][1], &an, &flt) == 0);
	CHECKF(!find(&an, GA_RULE_STARVATION), "fires on the fixed twin");
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();

	tap_begin("findings: host-sync fires on gaps begun in cudaDeviceSynchronize");
	CHECK(analyze(path[HOST_SYNC][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_HOST_SYNC);
	CHECKF(f && within(f->stake_ns, 19 * 100 * US, 2 * US), "stake %llu",
	       f ? (unsigned long long)f->stake_ns : 0ull);
	CHECK(f && call_is(&an, f, "cudaDeviceSynchronize"));
	CHECK(f && site_has(&an, f, 0, "train.cu:42") && site_has(&an, f, 1, "train.cu:42"));
	CHECK(!find(&an, GA_RULE_STARVATION));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[HOST_SYNC][1], &an, &flt) == 0);
	CHECK(!find(&an, GA_RULE_HOST_SYNC) && !find(&an, GA_RULE_STARVATION));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	/*
	 * The same with string ids far up (a crafted trace): the calls' names
	 * cached apart, not a byte and a word for each id up to them, and
	 * ids past 2^28 classified too.
	 */
	for (uint32_t base = 0x0fff0000u; base; base = base == 0x0fff0000u ? 0xfff00000u : 0) {
		char p2[160];
		struct rusage ru0, ru1;

		snprintf(p2, sizeof(p2), "%s/host_sync_far.gpuprof", dir);
		string_base = base;
		write_trace(p2, HOST_SYNC, 0);
		string_base = 0;
		getrusage(RUSAGE_SELF, &ru0);
		CHECK(analyze(p2, &an, &flt) == 0);
		getrusage(RUSAGE_SELF, &ru1);
		f = find(&an, GA_RULE_HOST_SYNC);
		CHECKF(f && within(f->stake_ns, 19 * 100 * US, 2 * US) &&
			       call_is(&an, f, "cudaDeviceSynchronize"),
		       "string ids from %#x: stake %llu", base,
		       f ? (unsigned long long)f->stake_ns : 0ull);
		CHECKF(ru1.ru_maxrss - ru0.ru_maxrss < 64 * 1024,
		       "string ids from %#x: peak RSS %ld KiB more", base,
		       ru1.ru_maxrss - ru0.ru_maxrss);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		unlink(p2);
	}
	tap_end();

	tap_begin("findings: sync-copy fires on gaps begun in cudaMemcpy, at the copy's site");
	CHECK(analyze(path[SYNC_COPY][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_SYNC_COPY);
	CHECKF(f && within(f->stake_ns, 19 * 100 * US, 2 * US), "stake %llu",
	       f ? (unsigned long long)f->stake_ns : 0ull);
	CHECK(f && call_is(&an, f, "cudaMemcpy"));
	CHECKF(f && site_has(&an, f, 0, "train.cu:57"), "no copy site train.cu:57");
	CHECKF(f && f->where[0].site_call &&
	       strstr(ga_model_str(&an.m, f->where[0].site_call), "train.cu:57"),
	       "the call's own site is not train.cu:57");
	CHECK(!find(&an, GA_RULE_STARVATION) && !find(&an, GA_RULE_PAGEABLE_COPY));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[SYNC_COPY][1], &an, &flt) == 0);
	CHECK(!find(&an, GA_RULE_SYNC_COPY) && !find(&an, GA_RULE_STARVATION));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();

	tap_begin("findings: pageable-copy fires on asynchronous copies of pageable memory");
	CHECK(analyze(path[PAGEABLE_COPY][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_PAGEABLE_COPY);
	CHECKF(f && within(f->stake_ns, 19 * 100 * US, 2 * US), "stake %llu",
	       f ? (unsigned long long)f->stake_ns : 0ull);
	CHECK(f && call_is(&an, f, "cudaMemcpyAsync"));
	CHECK(!find(&an, GA_RULE_SYNC_COPY));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[PAGEABLE_COPY][1], &an, &flt) == 0);
	CHECK(!find(&an, GA_RULE_PAGEABLE_COPY));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();

	/*
	 * 199 gaps of 6 us, 1 us of each left by a graph: at most 995 us; the
	 * host's 200 launch calls of 3 us are what a graph saves, 600 us.
	 */
	tap_begin("findings: launch-bound fires on short kernels 6 us apart, not 0.5 us");
	CHECK(analyze(path[LAUNCH_BOUND][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_LAUNCH_BOUND);
	CHECKF(f && f->stake_ns == 200 * 3 * US, "stake %llu",
	       f ? (unsigned long long)f->stake_ns : 0ull);
	CHECK(f && site_has(&an, f, 1, "train.cu:42"));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[LAUNCH_BOUND][1], &an, &flt) == 0);
	CHECK(!find(&an, GA_RULE_LAUNCH_BOUND));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();

	tap_begin("findings: launch-bound's estimate: launch calls, runs over long host gaps");
	{
		char lp[4][128];

		for (int v = 0; v < 4; v++) {
			snprintf(lp[v], sizeof(lp[v]), "%s/launch_v%d.gpuprof", dir, v);
			write_launch(lp[v], v);
		}
		/* One run of 200 kernels in spite of the 70 us gaps; 200 calls of 30 us. */
		CHECK(analyze(lp[0], &an, &flt) == 0);
		f = find(&an, GA_RULE_LAUNCH_BOUND);
		CHECKF(f && f->stake_ns == 200 * 30 * US, "stake %llu",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		CHECK(f && f->nev >= 7 && !strcmp(f->ev[1].name, "kernels") && f->ev[1].v == 200);
		CHECK(f && site_has(&an, f, 1, "train.cu:42"));
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		/* A graph's kernels: no launch calls to save. */
		CHECK(analyze(lp[1], &an, &flt) == 0);
		CHECK(!find(&an, GA_RULE_LAUNCH_BOUND));
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		/* No launch calls traced: the gaps less 1 us each. */
		CHECK(analyze(lp[2], &an, &flt) == 0);
		f = find(&an, GA_RULE_LAUNCH_BOUND);
		CHECKF(f && f->stake_ns == 199 * 5 * US, "stake %llu",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		/* Launch calls after their kernels still meet them: 200 kernels x 3 us. */
		CHECK(analyze(lp[3], &an, &flt) == 0);
		f = find(&an, GA_RULE_LAUNCH_BOUND);
		CHECKF(f && f->stake_ns == 200 * 3 * US, "stake %llu",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		for (int v = 0; v < 4; v++)
			unlink(lp[v]);
	}
	tap_end();

	/*
	 * H100 (132 SMs), 256 threads of 16 registers: 8 blocks an SM, a wave
	 * of 1056 blocks.  1200 blocks: 1.14 waves, the second 14% full.
	 */
	tap_begin("findings: tail-effect on 0.25 and 1.14 waves, not 0.5, 1, 1.25 or 3, nor on 20 us kernels; "
		  "occupancy at its site, staked by its rounds of blocks, not where they stay one");
	{
		static const struct {
			uint32_t grid, block;
			uint16_t regs;
			int tail, occ;
			uint64_t dur;
		} g[] = {
			{ 264, 256, 16, 1, 0, 2000 * US },
			{ 1200, 256, 16, 1, 0, 2000 * US },
			{ 1056, 256, 16, 0, 0, 2000 * US },
			{ 3168, 256, 16, 0, 0, 2000 * US },
			{ 528, 256, 16, 0, 0, 2000 * US },
			{ 1320, 256, 16, 0, 0, 2000 * US },
			{ 2112, 128, 121, 0, 1, 2000 * US },
			{ 528, 128, 121, 0, 0, 2000 * US },
			{ 264, 256, 16, 0, 0, 20 * US },
		};
		char gp[128];

		snprintf(gp, sizeof(gp), "%s/grid.gpuprof", dir);
		for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
			double waves = g[i].grid / 1056.0;
			uint64_t want = (uint64_t)(20.0 * (double)g[i].dur *
						   (1 - waves / (waves < 1 ? 1 : 2)));

			write_grid(gp, g[i].grid, g[i].block, g[i].regs, g[i].dur);
			CHECK(analyze(gp, &an, &flt) == 0);
			f = find(&an, GA_RULE_TAIL);
			CHECKF(!!f == g[i].tail, "grid %u: tail %d", g[i].grid, !!f);
			if (f && g[i].tail) {
				CHECKF(within(f->stake_ns, want, 1000), "grid %u: stake %llu, want %llu",
				       g[i].grid, (unsigned long long)f->stake_ns,
				       (unsigned long long)want);
				CHECK(site_has(&an, f, 1, "train.cu:42"));
			}
			f = find(&an, GA_RULE_OCCUPANCY);
			CHECKF(!!f == g[i].occ, "grid %u: occupancy %d", g[i].grid, !!f);
			/*
			 * 121 registers: 4 blocks of 128 threads an SM (25%); lifted,
			 * 16 (the warps bind): 2112 blocks in 4 rounds, then 1, so 3/4
			 * of the time; 528 blocks are one round either way (no finding).
			 */
			if (f && g[i].occ) {
				CHECK(site_has(&an, f, 1, "train.cu:42"));
				CHECKF(within(f->stake_ns, 20 * g[i].dur * 3 / 4, 1000),
				       "occupancy stake %llu", (unsigned long long)f->stake_ns);
			}
			ga_analysis_free(&an);
			ga_filter_free(&flt);
			unlink(gp);
		}
	}
	tap_end();

	/*
	 * 200 copies of 4 KiB (800 KiB: one batch), 2 us each at least, 1 us
	 * apart: each costs 2 us + 199 us / 200 of gaps, 199 of them are saved.
	 */
	tap_begin("findings: tiny-copies fires on 200 copies of 4 KiB, not on one of 800 KiB");
	CHECK(analyze(path[TINY][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_TINY_COPIES);
	CHECKF(f && f->stake_ns == 199 * (2 * US + 199 * US / 200), "stake %llu",
	       f ? (unsigned long long)f->stake_ns : 0ull);
	CHECK(f && !strcmp(f->subject, "memcpy HtoD"));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[TINY][1], &an, &flt) == 0);
	CHECK(!find(&an, GA_RULE_TINY_COPIES));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();

	/* A kernel between copies: the gaps are not the copies' cost, 2 us each is. */
	tap_begin("findings: tiny-copies counts no gap with a kernel between the copies");
	{
		char tp[128];

		snprintf(tp, sizeof(tp), "%s/tiny_kernels.gpuprof", dir);
		write_trace(tp, TINY, 2);
		CHECK(analyze(tp, &an, &flt) == 0);
		f = find(&an, GA_RULE_TINY_COPIES);
		CHECKF(f && f->stake_ns == 199 * 2 * US, "stake %llu",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		unlink(tp);
	}
	tap_end();

	tap_begin("findings: alloc-churn fires on gaps begun in cudaFree");
	CHECK(analyze(path[ALLOC][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_ALLOC_CHURN);
	CHECKF(f && within(f->stake_ns, 19 * 100 * US, 2 * US), "stake %llu",
	       f ? (unsigned long long)f->stake_ns : 0ull);
	CHECK(f && call_is(&an, f, "cudaFree"));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[ALLOC][1], &an, &flt) == 0);
	CHECK(!find(&an, GA_RULE_ALLOC_CHURN));
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();

	tap_begin("findings: incomplete-trace says records were lost");
	CHECK(analyze(path[LOST][0], &an, &flt) == 0);
	f = find(&an, GA_RULE_INCOMPLETE);
	CHECK(f && f->severity == GA_SEV_WARNING && f->nev && f->ev[0].v == 1234);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	CHECK(analyze(path[LOST][1], &an, &flt) == 0);
	CHECK(!find(&an, GA_RULE_INCOMPLETE) && an.fd.nf == 0);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();

	/*
	 * Lifting the register limit would cut 4 rounds to 1 (3/4 of 10 ms),
	 * but a kernel at 75% of its roof is limited by the roof (no finding),
	 * one at 40% can gain at most 60% (6 ms), one at 1% the rounds' 7.5 ms.
	 */
	tap_begin("findings: occupancy with --metrics: not at 50%+ of the roof, staked at most "
		  "the time above it");
	{
		static const struct {
			double pct;
			uint64_t want;
		} o[] = { { 75, 0 }, { 40, 6000 * US }, { 1, 7500 * US } };
		char op[128];

		snprintf(op, sizeof(op), "%s/occ_roof.gpuprof", dir);
		for (size_t i = 0; i < sizeof(o) / sizeof(o[0]); i++) {
			write_occ_roof(op, o[i].pct);
			CHECK(analyze(op, &an, &flt) == 0);
			f = find(&an, GA_RULE_OCCUPANCY);
			CHECKF(o[i].want ? f && within(f->stake_ns, o[i].want, 20 * US) : !f,
			       "%.0f%% of the roof: stake %lld, want %llu", o[i].pct,
			       f ? (long long)f->stake_ns : -1ll, (unsigned long long)o[i].want);
			ga_analysis_free(&an);
			ga_filter_free(&flt);
			unlink(op);
		}
	}
	tap_end();

	tap_begin("findings: fp32-gemm and below-roof from hardware metrics");
	{
		char mp[2][128];
		const struct ga_finding *g;

		for (int fx = 0; fx < 2; fx++) {
			snprintf(mp[fx], sizeof(mp[fx]), "%s/metrics%d.gpuprof", dir, fx);
			write_metrics(mp[fx], fx);
		}
		CHECK(analyze(mp[0], &an, &flt) == 0);
		g = find(&an, GA_RULE_FP32_GEMM);
		/* 10 ms of FP32 GEMM; the TF32 tensor peak of an H100 is several times FP32's. */
		CHECKF(g && g->stake_ns > 5000 * US && g->stake_ns < 10000 * US &&
		       strstr(g->subject, "sgemm_fp32"), "fp32-gemm %s %llu", g ? g->subject : "-",
		       g ? (unsigned long long)g->stake_ns : 0ull);
		f = find(&an, GA_RULE_BELOW_ROOF);
		CHECKF(f && strstr(f->subject, "slow") && f->stake_ns > 9800 * US &&
		       f->stake_ns <= 10000 * US, "below-roof %s %llu", f ? f->subject : "-",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		CHECK(analyze(mp[1], &an, &flt) == 0);
		CHECK(!find(&an, GA_RULE_FP32_GEMM) && !find(&an, GA_RULE_BELOW_ROOF));
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		unlink(mp[0]);
		unlink(mp[1]);
	}
	tap_end();

	tap_begin("findings: startup fires on 36 ms of module loading, not on 1.2 ms");
	{
		char sp[2][128];

		for (int fx = 0; fx < 2; fx++) {
			snprintf(sp[fx], sizeof(sp[fx]), "%s/startup%d.gpuprof", dir, fx);
			write_startup(sp[fx], fx);
		}
		CHECK(analyze(sp[0], &an, &flt) == 0);
		f = find(&an, GA_RULE_STARTUP);
		CHECKF(f && f->stake_ns == 36000 * US && f->nev && f->ev[0].v == 12, "stake %llu",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		CHECK(analyze(sp[1], &an, &flt) == 0);
		CHECK(!find(&an, GA_RULE_STARTUP));
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		unlink(sp[0]);
		unlink(sp[1]);
	}
	tap_end();

	tap_begin("findings: straggler and nccl-exposed on a 2-rank job");
	{
		char rp[2][2][128];

		for (int fx = 0; fx < 2; fx++)
			for (uint32_t r = 0; r < 2; r++) {
				snprintf(rp[fx][r], sizeof(rp[fx][r]), "%s/rank%d-%u.gpuprof", dir, fx, r);
				write_rank(rp[fx][r], r, fx);
			}
		for (int fx = 0; fx < 2; fx++) {
			char *argv[2] = { rp[fx][0], rp[fx][1] };
			struct ga_analysis_opts o = { .stack_depth = 3 };
			const struct ga_finding *x;

			ga_filter_init(&flt);
			CHECK(ga_analysis_init(&an, &o, &flt) == 0);
			CHECK(ga_analysis_build(&an, argv, 2) == 0 && ga_analysis_findings(&an) == 0);
			f = find(&an, GA_RULE_STRAGGLER);
			x = find(&an, GA_RULE_NCCL_EXPOSED);
			if (!fx) {
				CHECKF(f && f->nwhere && an.m.procs[f->where[0].proc].rank == 1 &&
				       f->stake_ns > 0 && f->stake_ns <= 10 * 500 * US,
				       "straggler %llu", f ? (unsigned long long)f->stake_ns : 0ull);
				CHECKF(x && x->stake_ns == 10 * 500 * US, "nccl-exposed %llu",
				       x ? (unsigned long long)x->stake_ns : 0ull);
				/* Its place: the NCCL kernel, the job's time of it. */
				CHECKF(x && x->nwhere == 1 &&
				       strstr(ga_model_str(&an.m, x->where[0].label_after), "ncclDevKernel") &&
				       x->where[0].count == 20 && x->where[0].ns == 20 * 500 * US,
				       "nccl-exposed's place: %u, %s", x ? x->nwhere : 0,
				       x && x->nwhere ? ga_model_str(&an.m, x->where[0].label_after) : "");
			} else {
				CHECK(!f && !x);
			}
			ga_analysis_free(&an);
			ga_filter_free(&flt);
		}
		for (int fx = 0; fx < 2; fx++)
			for (int r = 0; r < 2; r++)
				unlink(rp[fx][r]);
	}
	tap_end();

	tap_begin("findings: nccl-exposed stakes the shorter of NCCL alone and compute alone");
	{
		/* Per rank: exposed 4.3 ms (5 ms of NCCL, 0.7 ms beside compute). */
		static const uint64_t us[2][2] = { { 200, 300 }, { 1000, 200 } };
		static const uint64_t want[2] = { 3000 * US, 4300 * US };
		static const uint32_t who[2] = { 1, 0 };
		char rp[2][128];

		for (int j = 0; j < 2; j++) {
			char *argv[2] = { rp[0], rp[1] };
			struct ga_analysis_opts o = { .stack_depth = 3 };
			const struct ga_finding *x;
			double alone = -1;

			for (uint32_t r = 0; r < 2; r++) {
				snprintf(rp[r], sizeof(rp[r]), "%s/comm%d-%u.gpuprof", dir, j, r);
				write_comm_rank(rp[r], r, us[j][r] * US);
			}
			ga_filter_init(&flt);
			CHECK(ga_analysis_init(&an, &o, &flt) == 0);
			CHECK(ga_analysis_build(&an, argv, 2) == 0 && ga_analysis_findings(&an) == 0);
			x = find(&an, GA_RULE_NCCL_EXPOSED);
			for (size_t e = 0; x && e < x->nev; e++)
				if (!strcmp(x->ev[e].name, "compute_alone_ns"))
					alone = x->ev[e].v;
			CHECKF(x && x->stake_ns == want[j], "nccl-exposed %llu, expected %llu",
			       x ? (unsigned long long)x->stake_ns : 0ull,
			       (unsigned long long)want[j]);
			CHECKF(x && (uint32_t)atoi(x->subject + 5) == who[j] &&
			       !strncmp(x->subject, "rank ", 5) &&
			       !strncmp(x->summary, x->subject, strlen(x->subject)),
			       "subject %s, summary %s", x ? x->subject : "-", x ? x->summary : "-");
			CHECKF(alone == (double)(10 * us[j][who[j]] * US), "compute alone %.0f", alone);
			ga_analysis_free(&an);
			ga_filter_free(&flt);
			for (int r = 0; r < 2; r++)
				unlink(rp[r]);
		}
	}
	tap_end();

	tap_begin("findings: serialized-streams fires on two streams one after another");
	{
		char sp[2][128];

		for (int fx = 0; fx < 2; fx++) {
			snprintf(sp[fx], sizeof(sp[fx]), "%s/streams%d.gpuprof", dir, fx);
			write_streams(sp[fx], fx);
		}
		CHECK(analyze(sp[0], &an, &flt) == 0);
		f = find(&an, GA_RULE_SERIAL_STREAMS);
		CHECKF(f && f->stake_ns == 2000 * US, "stake %llu",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		CHECK(analyze(sp[1], &an, &flt) == 0);
		CHECK(!find(&an, GA_RULE_SERIAL_STREAMS));
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		unlink(sp[0]);
		unlink(sp[1]);
	}
	tap_end();

	tap_begin("findings: a device's streams counted apart, in the order first seen, "
		  "the ninth on in other_ns, whatever their order and look-up slots");
	{
		char mp[128];
		const struct ga_fdev *v;
		/* Round 0 meets stream j = i * 5 % 11 i-th: 0 5 10 4 9 3 8 2, then 7 1 6. */
		static const int first[8] = { 0, 5, 10, 4, 9, 3, 8, 2 };
		uint64_t other = 30 * (8 + 2 + 7) * US, sum = 0;

		snprintf(mp, sizeof(mp), "%s/manystreams.gpuprof", dir);
		write_many_streams(mp);
		CHECK(analyze(mp, &an, &flt) == 0);
		CHECK(an.fd.ndevs >= 1);
		v = an.fd.ndevs ? &an.fd.devs[0] : NULL;
		CHECKF(v && v->nstreams == GA_FIND_STREAMS, "%u streams", v ? v->nstreams : 0);
		for (int k = 0; v && k < (int)v->nstreams && k < 8; k++) {
			int j = first[k];

			CHECKF(v->stream[k].key == many_streams[j] &&
				       v->stream[k].count == 30 &&
				       v->stream[k].ns == 30 * (uint64_t)(j + 1) * US,
			       "slot %d: stream %llu, %llu kernels, %llu ns", k,
			       (unsigned long long)v->stream[k].key,
			       (unsigned long long)v->stream[k].count,
			       (unsigned long long)v->stream[k].ns);
		}
		for (int j = 0; j < 11; j++)
			sum += 30 * (uint64_t)(j + 1) * US;
		CHECKF(v && v->other_ns == other && v->sum == sum, "other %llu, sum %llu",
		       v ? (unsigned long long)v->other_ns : 0ull,
		       v ? (unsigned long long)v->sum : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		unlink(mp);
	}
	tap_end();

	tap_begin("findings: serialized-streams names the legacy default stream and its site");
	{
		char sp[128];

		snprintf(sp, sizeof(sp), "%s/legacy.gpuprof", dir);
		for (int legacy = 1; legacy >= 0; legacy--) {
			write_legacy(sp, legacy);
			CHECK(analyze(sp, &an, &flt) == 0);
			f = find(&an, GA_RULE_SERIAL_STREAMS);
			/* All but the busiest stream: 2000 us and the 80 us between. */
			CHECKF(f && f->stake_ns == 2080 * US, "stake %llu",
			       f ? (unsigned long long)f->stake_ns : 0ull);
			CHECKF(f && !!strstr(f->summary, "legacy default stream") == legacy, "%s",
			       f ? f->summary : "");
			CHECKF(f && f->nwhere == 3 && f->where[0].stream == (legacy ? 9u : 13u),
			       "stream %u", f && f->nwhere ? f->where[0].stream : 0);
			if (f && f->nwhere && legacy) {
				uint32_t id = f->where[0].site_after;

				CHECK(id && strstr(ga_model_str(&an.m, id), "train.cu:57"));
				CHECK(f->where[0].count == 40 && f->where[0].ns == 80 * US);
			}
			ga_analysis_free(&an);
			ga_filter_free(&flt);
			unlink(sp);
		}
	}
	tap_end();

	tap_begin("findings: staged-peer-copy fires on copies staged through the host, not on P2P");
	{
		char pp[2][128];

		for (int fx = 0; fx < 2; fx++) {
			snprintf(pp[fx], sizeof(pp[fx]), "%s/peer%d.gpuprof", dir, fx);
			write_peer(pp[fx], fx);
		}
		CHECK(analyze(pp[0], &an, &flt) == 0);
		f = find(&an, GA_RULE_STAGED_PEER);
		/* 8 pairs over 400 us each: half of it. */
		CHECKF(f && f->stake_ns == 8 * 200 * US && f->nev && f->ev[0].v == 8, "stake %llu",
		       f ? (unsigned long long)f->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		CHECK(analyze(pp[1], &an, &flt) == 0);
		CHECK(!find(&an, GA_RULE_STAGED_PEER));
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		unlink(pp[0]);
		unlink(pp[1]);
	}
	tap_end();

	tap_begin("findings: twins stay silent: gaps inside a sync, under 5 us, under 1% of the span");
	{
		char tp[4][128];
		const struct ga_finding *g;

		for (int v = 0; v < 4; v++) {
			snprintf(tp[v], sizeof(tp[v]), "%s/twinlike%d.gpuprof", dir, v);
			write_twinlike(tp[v], v < 2 ? v : 2, v == 2 ? 3 : 5);
		}
		/* Gaps of 1.2 us the device left while the host waited; one of 200 us at the start. */
		CHECK(analyze(tp[0], &an, &flt) == 0);
		CHECKF(an.fd.nf == 0, "%zu findings, the first %s", an.fd.nf,
		       an.fd.nf ? ga_rules[an.fd.f[0].rule].id : "-");
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		rc = run(&out, &err, cmd_report, "report", "--fail-on=host-sync,gpu-starvation",
			 tp[0], NULL);
		CHECKF(rc == 0, "rc %d", rc);
		free(out);
		free(err);
		/* 199 gaps of 3 us begun in a sync that returned: 0.6 ms, 1.5% of the span. */
		CHECK(analyze(tp[1], &an, &flt) == 0);
		CHECKF(an.fd.nf == 0, "%zu findings, the first %s", an.fd.nf,
		       an.fd.nf ? ga_rules[an.fd.f[0].rule].id : "-");
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		/* 3 drains of 100 us in ~40 ms: under 1%; 5: over it. */
		CHECK(analyze(tp[2], &an, &flt) == 0);
		CHECK(!find(&an, GA_RULE_HOST_SYNC) && !find(&an, GA_RULE_STARVATION));
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		CHECK(analyze(tp[3], &an, &flt) == 0);
		g = find(&an, GA_RULE_HOST_SYNC);
		CHECKF(g && within(g->stake_ns, 5 * 100 * US, 2 * US) && call_is(&an, g,
		       "cudaDeviceSynchronize"), "stake %llu",
		       g ? (unsigned long long)g->stake_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		for (int v = 0; v < 4; v++)
			unlink(tp[v]);
	}
	tap_end();

	tap_begin("findings: the report's first section, --findings, --fail-on");
	rc = run(&out, &err, cmd_report, "report", path[HOST_SYNC][0], NULL);
	CHECKF(rc == 0 && out && !strncmp(out, "Findings", 8), "rc %d: %.200s", rc, out ? out : "");
	CHECK(out && strstr(out, "host-sync") && strstr(out, "host in cudaDeviceSynchronize") &&
	      strstr(out, "train.cu:42"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--findings=none", path[HOST_SYNC][0], NULL);
	CHECK(rc == 0 && out && !strstr(out, "Findings") && !strncmp(out, "File:", 5));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--findings=all", path[STARVE][1], NULL);
	CHECK(rc == 0 && out && strstr(out, "no findings\n"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--fail-on=host-sync,sync-copy",
		 path[HOST_SYNC][0], NULL);
	CHECKF(rc == 3 && err && strstr(err, "--fail-on"), "rc %d", rc);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--fail-on=host-sync", path[HOST_SYNC][1], NULL);
	CHECKF(rc == 0, "rc %d on the twin", rc);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--fail-on=warning", path[SYNC_COPY][0], NULL);
	CHECKF(rc == 3, "rc %d", rc);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--fail-on=critical", path[TINY][1], NULL);
	CHECKF(rc == 0, "rc %d", rc);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--fail-on=no-such-rule", path[TINY][1], NULL);
	CHECK(rc == 2 && err && strstr(err, "no-such-rule"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--findings=some", path[TINY][1], NULL);
	CHECK(rc == 2);
	free(out);
	free(err);
	tap_end();

	tap_begin("findings: the JSON export lists them with evidence and places");
	rc = run(&out, &err, cmd_export, "export", "--format", "json", path[SYNC_COPY][0], NULL);
	CHECK(rc == 0 && out && strstr(out, "\"findings\":[") &&
	      strstr(out, "\"rule\":\"sync-copy\"") && strstr(out, "\"host_call\":\"cudaMemcpy\"") &&
	      strstr(out, "\"gaps\":19") && strstr(out, "\"site_call\":\"train (train.cu:57)"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--format", "json", path[STARVE][1], NULL);
	CHECK(rc == 0 && out && strstr(out, "\"findings\":[]"));
	free(out);
	free(err);
	tap_end();

	/* Two traces on one GPU: busy time is their exact union, findings on or off. */
	tap_begin("findings: busy time of a GPU two traces share, with findings on");
	{
		char a[128], b[128];

		snprintf(a, sizeof(a), "%s/shared0.gpuprof", dir);
		snprintf(b, sizeof(b), "%s/shared1.gpuprof", dir);
		write_shared(a, 0);
		write_shared(b, 1);
		rc = run(&out, &err, cmd_report, "report", a, b, NULL);
		CHECKF(rc == 0 && out && strstr(out, "GPU busy:     100.0% cuda:0"), "rc %d: %s", rc,
		       out ? out : "");
		free(out);
		free(err);
		rc = run(&out, &err, cmd_report, "report", "--findings=none", a, b, NULL);
		CHECKF(rc == 0 && out && strstr(out, "GPU busy:     100.0% cuda:0"), "rc %d: %s", rc,
		       out ? out : "");
		free(out);
		free(err);
		if (!getenv("GPUPROF_TEST_KEEP")) {
			unlink(a);
			unlink(b);
		}
	}
	tap_end();

	tap_begin("findings: gpuprof diff lists findings new, gone or grown");
	rc = run(&out, &err, cmd_diff, "diff", path[HOST_SYNC][1], path[HOST_SYNC][0], NULL);
	CHECKF(rc == 0 && out && strstr(out, "finding ") && strstr(out, "host-sync cuda:0") &&
	       strstr(out, " new "), "rc %d: %s", rc, out ? out : "");
	free(out);
	free(err);
	rc = run(&out, &err, cmd_diff, "diff", "--json", path[HOST_SYNC][0], path[HOST_SYNC][1],
		 NULL);
	CHECK(rc == 0 && out && strstr(out, "\"kind\":\"finding\",\"name\":\"host-sync cuda:0\","
					 "\"in_base\":true,\"in_new\":false"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_diff, "diff", "--fail-above", "50", path[STARVE][1],
		 path[STARVE][0], NULL);
	CHECKF(rc == 3, "rc %d", rc);
	free(out);
	free(err);
	tap_end();

	/* Streamed: the same findings as with every interval scanned at finish, with less kept. */
	tap_begin("findings: gaps scanned as the busy union retires them, the same findings");
	{
		char sp[128];
		char *streamed = NULL, *whole = NULL;
		size_t kept_calls, kept_cands, wait;

		snprintf(sp, sizeof(sp), "%s/stream.gpuprof", dir);
		write_stream(sp);
		CHECK(analyze_retire(sp, &an, &flt, 1) == 0);
		kept_calls = an.fd.ncalls;
		kept_cands = an.fd.ncands;
		wait = an.fd.npend + an.m.devs[0].busy.niv;
		CHECK(ga_analysis_findings(&an) == 0);
		streamed = findings_text(&an);
		ga_analysis_free(&an);
		CHECK(analyze_retire(sp, &an, &flt, 0) == 0);
		/*
		 * 15 s of steps: what is kept at the end is the last 1.5 s
		 * (the API records' delay), not all of them.
		 */
		CHECKF(kept_calls * 4 < an.fd.ncalls && kept_cands * 4 < an.fd.ncands &&
		       wait * 4 < an.m.devs[0].busy.niv,
		       "kept %zu calls of %zu, %zu candidates of %zu, %zu intervals of %zu",
		       kept_calls, an.fd.ncalls, kept_cands, an.fd.ncands, wait,
		       an.m.devs[0].busy.niv);
		CHECK(ga_analysis_findings(&an) == 0);
		whole = findings_text(&an);
		CHECK(find(&an, GA_RULE_STARVATION) && find(&an, GA_RULE_HOST_SYNC) &&
		      find(&an, GA_RULE_SYNC_COPY) && find(&an, GA_RULE_ALLOC_CHURN) &&
		      find(&an, GA_RULE_LAUNCH_BOUND));
		CHECK(strstr(whole, "train.cu:57") && strstr(whole, "train.cu:42"));
		ga_analysis_free(&an);
		CHECKF(streamed && whole && !strcmp(streamed, whole), "streamed:\n%s\nat finish:\n%s",
		       streamed ? streamed : "", whole ? whole : "");
		free(streamed);
		free(whole);
		if (!getenv("GPUPROF_TEST_KEEP"))
			unlink(sp);
	}
	tap_end();

	if (!getenv("GPUPROF_TEST_KEEP")) {
		for (int sc = 0; sc < SCENARIOS; sc++)
			for (int fx = 0; fx < 2; fx++)
				unlink(path[sc][fx]);
		rmdir(dir);
	}
	return tap_done();
}
