// NVCCFLAGS: -cudart shared -g -Xlinker --export-dynamic
/*
 * Findings: one problem per mode and its fixed twin, for the rules of
 * gpuprof report's Findings (test/gpu/run.py t_findings_*):
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
 *   launch  2000 x (8 us of host work, a 1 us kernel): launch-bound.
 *           Fixed: the same kernels replayed from CUDA graphs of 100
 *           kernels.                                    -> launch-bound
 *
 * Usage: findings MODE [fixed].  Truth: findings.loop_ns (host time of
 * the steady-state loop, to its last kernel's end), findings.line.launch
 * (the line of the kernel launch in the loop), findings.line.copy (the
 * cudaMemcpy's line), findings.steps.
 */
#include <cuda_runtime.h>
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
#define STEPS 200
#define TINY 2000
#define GRAPH_KERNELS 100

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int fixed = argc > 2 && !strcmp(argv[2], "fixed");
	int *d, *pinned, pageable = 0;
	unsigned long long t0, t1;
	cudaStream_t s, bs;
	int launch_line = 0, copy_line = 0, steps = 0;

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
			t0 = now_ns();
			for (int i = 0; i < TINY / GRAPH_KERNELS; i++, steps += GRAPH_KERNELS)
				CK(cudaGraphLaunch(ge, s));
		}
	} else {
		fprintf(stderr, "usage: findings starve|sync|copy|launch [fixed]\n");
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
	truth_set("findings.steps", steps);
	truth_print();
	return 0;
}
