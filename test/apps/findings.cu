// NVCCFLAGS: -cudart shared -g -Xlinker --export-dynamic -lcuda
/*
 * Findings: one problem per mode and its fixed twin, for the rules of
 * gpuprof report's Findings (test/gpu/findings.py):
 *
 *   starve  200 x (300 us of host work, then a 200 us kernel): the GPU
 *           idles ~100 us per step.  Fixed: 150 us of host work (hidden
 *           behind the kernel).                         -> gpu-starvation
 *   sync    200 x (200 us kernel, cudaDeviceSynchronize, 100 us of host
 *           work).  Fixed: no synchronization.          -> host-sync
 *   copy    200 x (200 us kernel, cudaMemcpy of its 4-byte result into
 *           pageable memory, 100 us of host work), the kernels on a
 *           blocking stream, so that cudaMemcpy (the legacy default
 *           stream) waits for each: the GPU idles ~100 us per step.
 *           Fixed: the same copy with cudaMemcpyAsync into pinned memory
 *           on the kernels' stream, queued behind the kernel, read after
 *           the loop: the host queues the next kernel while the GPU runs.
 *                                                       -> sync-copy
 *   pageable  90 x (600 us kernel, cudaMemcpyAsync of its 4-byte result
 *           into pageable memory on the kernel's stream, 500 us of host
 *           work): a copy to pageable memory returns only once done, so
 *           the host waits for the kernel and the GPU idles through the
 *           host work.  Fixed: the same copy into cudaMallocHost memory
 *           returns at once; the host work hides behind the kernel.  90
 *           steps: below tiny-copies' 100 copies.     -> pageable-copy
 *   tiny    20000 cudaMemcpyAsync of 1 KiB from pinned memory to the
 *           device, one after another.  Fixed: one copy of the 20000 KiB.
 *                                                       -> tiny-copies
 *   launch  2000 x (8 us of host work, a 1 us kernel launched): the GPU
 *           waits for each launch.  Fixed: the same 2000 x 8 us of host
 *           work, the kernels replayed from a CUDA graph of 100 kernels,
 *           one graph launch per 100 steps: what a graph saves is the
 *           launch calls, not the host's own work.      -> launch-bound
 *   serial  100 x (200 us kernel on blocking stream A, 2 us kernel on the
 *           legacy default stream, 200 us kernel on blocking stream B,
 *           2 us kernel on the legacy default stream): the legacy default
 *           stream waits for A and B and they for it, so nothing overlaps.
 *           Fixed: the 2 us kernels on a non-blocking stream: A and B run
 *           side by side.                               -> serialized-streams
 *   alloc   200 x (200 us kernel, cudaFree and cudaMalloc of 64 MiB): the
 *           free waits for the kernel, the device idles while the host
 *           allocates.  Fixed: allocated once before the loop.
 *                                                       -> alloc-churn
 *   occupancy  20 x a kernel of 8 blocks per SM, 256 threads, each block
 *           1 ms, with 96 KiB of dynamic shared memory per block: 2 blocks
 *           fit an SM (25% occupancy), the grid runs in 4 rounds.  Fixed:
 *           no shared memory, 8 blocks an SM, one round.  -> occupancy
 *   tail    20 x a grid of 1.1 waves (wave: SMs x resident blocks of 256
 *           threads), each block 1 ms: the last 0.1 wave takes a second
 *           round.  Fixed: one wave, each block 1.1 ms (the same block
 *           time in all).                              -> tail-effect
 *   startup 8 modules of PTX loaded with cuModuleLoadData (JIT-compiled
 *           by the driver; run with CUDA_CACHE_DISABLE=1), then a kernel of
 *           each launched.  Fixed: the same PTX with the JIT cache warm
 *           (CUDA_CACHE_PATH, filled by an earlier run).   -> startup
 *   rank    10 NVTX "step" ranges of 1 ms kernels; the rank comes from
 *           RANK: rank 1 runs 3 per step, rank 0 one.  Fixed: both run 2.
 *                                                       -> straggler
 *   chase   3 x one thread following 200000 dependent random pointers in
 *           1 GiB: neither memory- nor compute-bound (record --metrics).
 *           Fixed ("chase fixed"): the 1 GiB read by every SM, coalesced:
 *           memory-bound.                              -> below-roof;
 *           the fixed twin is memory-bound's problem   -> memory-bound
 *
 * Usage: findings MODE [fixed].  Truth: findings.loop_ns (host time of
 * the steady-state loop, to its last kernel's or copy's end),
 * findings.line.launch (the line of the kernel launch in the loop),
 * findings.line.copy (the copy call's line in the loop), findings.line.legacy (serial: the launch on the
 * legacy default stream), findings.steps, findings.wave (tail: blocks in
 * one wave), findings.rank, findings.module_ns (startup: the time in
 * cuModuleLoadData).
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common.h"

extern "C" __global__ void spin(unsigned long long ns, int *out)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
	if (out)
		*out = (int)(t - t0);
}

/* Each block spins ns; dynamic shared memory only takes room (occupancy). */
extern "C" __global__ void __launch_bounds__(256) block_spin(unsigned long long ns, int *out)
{
	unsigned long long t0, t;

	/* The dynamic shared memory is never touched: with none (the fixed twins) a
	 * write to it is out of bounds. */
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
	if (out && threadIdx.x == 0 && blockIdx.x == 0)
		*out = (int)(t - t0);
}

/* One thread follows steps dependent pointers: latency-bound. */
extern "C" __global__ void chase(const unsigned long long *next, unsigned long long steps,
				 unsigned long long *out)
{
	unsigned long long i = 0;

	for (unsigned long long k = 0; k < steps; k++)
		i = next[i];
	*out = i;
}

/* Every thread reads n words, coalesced: memory-bound. */
extern "C" __global__ void stream_sum(const unsigned long long *p, size_t n, unsigned long long *out)
{
	unsigned long long s = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		s += p[i];
	if (s == 42)
		*out = s;
}

/*
 * next[i] = (a i + c) mod n, n a power of 2: with c odd and a = 1 mod 4 a
 * full-period generator (Hull-Dobell), so a chase from 0 visits n words
 * before it repeats, in no order a cache or prefetcher follows.
 */
extern "C" __global__ void chase_init(unsigned long long *next, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		next[i] = (i * 2862933555777941757ull + 3037000493ull) & (n - 1);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Host work: a busy loop of ns (the CPU side of a step: Python, data preparation). */
static void host_work(unsigned long long ns)
{
	unsigned long long t0 = now_ns();

	while (now_ns() - t0 < ns)
		;
}

#define US 1000ull
#define MS 1000000ull
#define STEPS 200
#define TINY 2000
#define GRAPH_KERNELS 100
#define MODULES 8
#define FMAS 12000
#define RANK_STEPS 10
#define CHASE_WORDS (1ull << 27) /* 1 GiB of 8-byte words */
#define CHASE_STEPS 200000ull
#define PAGEABLE_STEPS 90
#define TINY_COPIES 20000
#define TINY_BYTES 1024

/* A PTX module of one kernel jit_kI: FMAS dependent FMAs, constants unique to i. */
static char *make_ptx(int i)
{
	size_t cap = (size_t)FMAS * 64 + 4096, n = 0;
	char *p = (char *)malloc(cap);

	REQUIRE(p, "out of memory");
	n += (size_t)snprintf(p + n, cap - n,
			      ".version 7.0\n.target sm_70\n.address_size 64\n"
			      ".visible .entry jit_k%d(.param .u64 p)\n{\n"
			      ".reg .f32 %%f<4>;\n.reg .b64 %%rd<3>;\n"
			      "ld.param.u64 %%rd1, [p];\ncvta.to.global.u64 %%rd2, %%rd1;\n"
			      "ld.global.f32 %%f1, [%%rd2];\nld.global.f32 %%f2, [%%rd2+4];\n", i);
	for (int k = 0; k < FMAS; k++)
		n += (size_t)snprintf(p + n, cap - n, "fma.rn.f32 %%f1, %%f1, %%f2, 0f%08X;\n",
				      0x3F800000u + (unsigned)(i * FMAS + k));
	n += (size_t)snprintf(p + n, cap - n, "st.global.f32 [%%rd2], %%f1;\nret;\n}\n");
	return p;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int fixed = argc > 2 && !strcmp(argv[2], "fixed");
	int *d, *pinned, pageable = 0;
	unsigned long long t0, t1, module_ns = 0;
	cudaStream_t s, bs;
	int launch_line = 0, copy_line = 0, legacy_line = 0, steps = 0, wave = 0, rank = 0;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreate(&bs));
	CK(cudaMalloc(&d, sizeof(int)));
	CK(cudaMallocHost(&pinned, sizeof(int)));
	/* Warm up: module loading and the first launch stay out of the loop. */
	spin<<<1, 1, 0, s>>>(1000, d);
	CK(cudaStreamSynchronize(s));
	if (!strcmp(mode, "copy")) {
		/* And the copies' first use (staging buffers): out of the loop too. */
		CK(cudaMemcpy(&pageable, d, sizeof(int), cudaMemcpyDeviceToHost));
		CK(cudaMemcpyAsync(pinned, d, sizeof(int), cudaMemcpyDeviceToHost, bs));
		CK(cudaStreamSynchronize(bs));
	}
	if (!strcmp(mode, "pageable")) {
		CK(cudaMemcpyAsync(&pageable, d, sizeof(int), cudaMemcpyDeviceToHost, s));
		CK(cudaMemcpyAsync(pinned, d, sizeof(int), cudaMemcpyDeviceToHost, s));
		CK(cudaStreamSynchronize(s));
	}

	t0 = now_ns();
	if (!strcmp(mode, "starve")) {
		for (int i = 0; i < STEPS; i++, steps++) {
			host_work(fixed ? 150 * US : 300 * US);
			launch_line = __LINE__ + 1;
			spin<<<1, 1, 0, s>>>(200 * US, d);
		}
	} else if (!strcmp(mode, "sync")) {
		for (int i = 0; i < STEPS; i++, steps++) {
			launch_line = __LINE__ + 1;
			spin<<<1, 1, 0, s>>>(200 * US, d);
			if (!fixed)
				CK(cudaDeviceSynchronize());
			host_work(100 * US);
		}
	} else if (!strcmp(mode, "copy")) {
		/*
		 * On the non-blocking stream s, cudaMemcpy would not wait for the
		 * kernel (and would copy a stale result beside it): the kernels go
		 * on bs, which the legacy default stream waits for.
		 */
		for (int i = 0; i < STEPS; i++, steps++) {
			launch_line = __LINE__ + 1;
			spin<<<1, 1, 0, bs>>>(200 * US, d);
			if (!fixed) {
				copy_line = __LINE__ + 1;
				CK(cudaMemcpy(&pageable, d, sizeof(int), cudaMemcpyDeviceToHost));
			} else {
				copy_line = __LINE__ + 1;
				CK(cudaMemcpyAsync(pinned, d, sizeof(int), cudaMemcpyDeviceToHost, bs));
			}
			host_work(100 * US);
		}
	} else if (!strcmp(mode, "pageable")) {
		for (int i = 0; i < PAGEABLE_STEPS; i++, steps++) {
			launch_line = __LINE__ + 1;
			spin<<<1, 1, 0, s>>>(600 * US, d);
			if (!fixed) {
				copy_line = __LINE__ + 1;
				CK(cudaMemcpyAsync(&pageable, d, sizeof(int), cudaMemcpyDeviceToHost, s));
			} else {
				copy_line = __LINE__ + 1;
				CK(cudaMemcpyAsync(pinned, d, sizeof(int), cudaMemcpyDeviceToHost, s));
			}
			host_work(500 * US);
		}
	} else if (!strcmp(mode, "tiny")) {
		const size_t all = (size_t)TINY_COPIES * TINY_BYTES;
		char *hbuf, *dbuf;

		CK(cudaMallocHost(&hbuf, all));
		CK(cudaMalloc(&dbuf, all));
		memset(hbuf, 1, all);
		/* Warm up both sizes of copy (and fault the pinned pages in). */
		CK(cudaMemcpyAsync(dbuf, hbuf, all, cudaMemcpyHostToDevice, s));
		CK(cudaMemcpyAsync(dbuf, hbuf, TINY_BYTES, cudaMemcpyHostToDevice, s));
		CK(cudaStreamSynchronize(s));
		t0 = now_ns();
		if (!fixed) {
			for (int i = 0; i < TINY_COPIES; i++, steps++) {
				copy_line = __LINE__ + 1;
				CK(cudaMemcpyAsync(dbuf + (size_t)i * TINY_BYTES, hbuf + (size_t)i * TINY_BYTES,
						   TINY_BYTES, cudaMemcpyHostToDevice, s));
			}
		} else {
			copy_line = __LINE__ + 1;
			CK(cudaMemcpyAsync(dbuf, hbuf, all, cudaMemcpyHostToDevice, s));
			steps++;
		}
		CK(cudaStreamSynchronize(s));
		/* The buffers stay until exit: freeing pinned memory is no part of the loop. */
	} else if (!strcmp(mode, "launch")) {
		if (!fixed) {
			for (int i = 0; i < TINY; i++, steps++) {
				host_work(8 * US);
				launch_line = __LINE__ + 1;
				spin<<<1, 1, 0, s>>>(1 * US, NULL);
			}
		} else {
			cudaGraph_t g;
			cudaGraphExec_t ge;

			/* Captured before the clock starts: the replays are the loop. */
			CK(cudaStreamSynchronize(s));
			CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
			for (int i = 0; i < GRAPH_KERNELS; i++) {
				launch_line = __LINE__ + 1;
				spin<<<1, 1, 0, s>>>(1 * US, NULL);
			}
			CK(cudaStreamEndCapture(s, &g));
			CK(cudaGraphInstantiate(&ge, g, 0));
			/* One upload and replay first: the graph's own first-use cost stays out. */
			CK(cudaGraphLaunch(ge, s));
			CK(cudaStreamSynchronize(s));
			t0 = now_ns();
			/*
			 * The same host work per step; each group of 100 steps' kernels
			 * is launched once, at its start, and runs while the host works.
			 */
			for (int i = 0; i < TINY; i++, steps++) {
				if (i % GRAPH_KERNELS == 0)
					CK(cudaGraphLaunch(ge, s));
				host_work(8 * US);
			}
		}
	} else if (!strcmp(mode, "serial")) {
		cudaStream_t sa, sb, sz;

		CK(cudaStreamCreate(&sa));
		CK(cudaStreamCreate(&sb));
		CK(cudaStreamCreateWithFlags(&sz, cudaStreamNonBlocking));
		spin<<<1, 1, 0, sa>>>(1000, NULL);
		spin<<<1, 1, 0, sb>>>(1000, NULL);
		CK(cudaDeviceSynchronize());
		t0 = now_ns();
		for (int i = 0; i < STEPS / 2; i++, steps++) {
			launch_line = __LINE__ + 1;
			spin<<<1, 1, 0, sa>>>(200 * US, NULL);
			legacy_line = __LINE__ + 1;
			spin<<<1, 1, 0, fixed ? sz : 0>>>(2 * US, NULL);
			spin<<<1, 1, 0, sb>>>(200 * US, NULL);
			spin<<<1, 1, 0, fixed ? sz : 0>>>(2 * US, NULL);
		}
		CK(cudaDeviceSynchronize());
	} else if (!strcmp(mode, "alloc")) {
		const size_t bytes = 64ull << 20;
		void *buf;

		CK(cudaMalloc(&buf, bytes));
		for (int i = 0; i < STEPS; i++, steps++) {
			launch_line = __LINE__ + 1;
			spin<<<1, 1, 0, s>>>(200 * US, NULL);
			if (!fixed) {
				CK(cudaFree(buf));
				CK(cudaMalloc(&buf, bytes));
			}
		}
		CK(cudaStreamSynchronize(s));
		CK(cudaFree(buf));
	} else if (!strcmp(mode, "occupancy") || !strcmp(mode, "tail")) {
		int sms = 0, per_sm = 0, blocks;
		size_t smem = !strcmp(mode, "occupancy") && !fixed ? 96u << 10 : 0;
		unsigned long long ns = 1 * MS;

		CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
		CK(cudaFuncSetAttribute(block_spin, cudaFuncAttributeMaxDynamicSharedMemorySize,
					96 << 10));
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, block_spin, 256, smem));
		REQUIRE(per_sm > 0, "no block of block_spin fits an SM");
		wave = sms * per_sm;
		if (!strcmp(mode, "occupancy")) {
			/* 8 blocks an SM: 4 rounds at 2 resident, one at 8. */
			blocks = sms * 8;
		} else if (!fixed) {
			blocks = wave + wave / 10;
		} else {
			blocks = wave;
			ns = ns * 11 / 10;
		}
		block_spin<<<blocks, 256, smem, s>>>(1000, NULL);
		CK(cudaStreamSynchronize(s));
		t0 = now_ns();
		for (int i = 0; i < 20; i++, steps++) {
			launch_line = __LINE__ + 1;
			block_spin<<<blocks, 256, smem, s>>>(ns, d);
		}
		truth_set("findings.blocks", blocks);
		truth_set("findings.per_sm", per_sm);
	} else if (!strcmp(mode, "startup")) {
		CUmodule mod[MODULES];
		CUfunction fn;
		float *f2;
		CUdeviceptr p;
		void *args[] = { &p };
		char *ptx[MODULES];

		CK(cudaMalloc(&f2, 2 * sizeof(float)));
		CK(cudaMemset(f2, 0, 2 * sizeof(float)));
		p = (CUdeviceptr)(uintptr_t)f2;
		for (int i = 0; i < MODULES; i++)
			ptx[i] = make_ptx(i);
		CK(cudaDeviceSynchronize());
		t0 = now_ns();
		for (int i = 0; i < MODULES; i++) {
			unsigned long long m0 = now_ns();
			char name[32];

			CU(cuModuleLoadData(&mod[i], ptx[i]));
			module_ns += now_ns() - m0;
			snprintf(name, sizeof(name), "jit_k%d", i);
			CU(cuModuleGetFunction(&fn, mod[i], name));
			launch_line = __LINE__ + 1;
			CU(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL));
			steps++;
		}
		CK(cudaStreamSynchronize(s));
		for (int i = 0; i < MODULES; i++) {
			CU(cuModuleUnload(mod[i]));
			free(ptx[i]);
		}
		CK(cudaFree(f2));
	} else if (!strcmp(mode, "rank")) {
		const char *r = getenv("RANK");

		rank = r ? atoi(r) : 0;
		for (int st = 0; st < RANK_STEPS; st++, steps++) {
			int n = fixed ? 2 : rank == 1 ? 3 : 1;

			nvtxRangePushA("step");
			for (int k = 0; k < n; k++) {
				launch_line = __LINE__ + 1;
				spin<<<1, 1, 0, s>>>(1 * MS, NULL);
			}
			CK(cudaStreamSynchronize(s));
			nvtxRangePop();
		}
	} else if (!strcmp(mode, "chase")) {
		unsigned long long *next, *out;
		int sms = 0;

		CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
		CK(cudaMalloc(&next, CHASE_WORDS * sizeof(*next)));
		CK(cudaMalloc(&out, sizeof(*out)));
		chase_init<<<(unsigned)(CHASE_WORDS / 256), 256, 0, s>>>(next, CHASE_WORDS);
		CK(cudaStreamSynchronize(s));
		t0 = now_ns();
		for (int i = 0; i < 3; i++, steps++) {
			if (!fixed) {
				launch_line = __LINE__ + 1;
				chase<<<1, 1, 0, s>>>(next, CHASE_STEPS, out);
			} else {
				launch_line = __LINE__ + 1;
				stream_sum<<<sms * 4, 512, 0, s>>>(next, CHASE_WORDS, out);
			}
		}
		CK(cudaStreamSynchronize(s));
		CK(cudaFree(next));
		CK(cudaFree(out));
	} else {
		fprintf(stderr, "usage: findings starve|sync|copy|pageable|tiny|launch|serial|alloc|"
			"occupancy|tail|startup|rank|chase [fixed]\n");
		return 2;
	}
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamSynchronize(bs));
	CK(cudaDeviceSynchronize());
	t1 = now_ns();
	truth_set("findings.loop_ns", (long long)(t1 - t0));
	truth_set("findings.line.launch", launch_line);
	truth_set("findings.line.copy", copy_line);
	truth_set("findings.line.legacy", legacy_line);
	truth_set("findings.steps", steps);
	truth_set("findings.wave", wave);
	truth_set("findings.rank", rank);
	truth_set("findings.module_ns", (long long)module_ns);
	truth_print();
	return 0;
}
