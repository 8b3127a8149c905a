// NVCCFLAGS: -cudart shared -g -Xlinker --export-dynamic
/*
 * Always-on recording: a long-running program for the dormant recorder
 * and the flight recorder.
 *
 *   always_on windows   reads commands on stdin and answers each with one
 *                       line "done": "in N" or "out N" launch N kernels
 *                       aon_work and wait for them (the test says whether a
 *                       window is open: it runs gpuprof start/stop between
 *                       commands), "quit" prints the truth and exits.
 *                       Truth: kernel.count.aon_work, the launches made
 *                       inside windows, and their API calls:
 *                       api.count.cudaLaunchKernel (one a launch, made
 *                       into a capture too) and api.count.cudaDeviceSynchronize
 *                       (one a command).  Every launch is made in
 *                       aon_launch (exported: the recorder's dladdr names
 *                       it in call stacks).  "in capture N" / "out capture
 *                       N" capture N launches into a graph and launch it
 *                       once; "in graph" / "out graph" launch that graph
 *                       again (its N kernels count as launches).
 *   always_on crash N   N memsets in sequence, the i-th (from 0) setting
 *                       4 * (i + 1) bytes, waits for them, prints
 *                       "TRUTH memset.sequence N" and dies of SIGSEGV.  A
 *                       flight recorder's dump must hold the last memsets
 *                       of the sequence, in order.
 *
 *   always_on launcher  asks for the device count only (no CUDA context,
 *                       as torchrun's launcher), prints "ready"; then
 *                       "gpu N" makes a context (once) and launches N
 *                       kernels aon_work, answering "done"; "quit" prints
 *                       the truth kernel.count.aon_work (all launches).
 *
 *   always_on trigger nvtx|cuda-error
 *                       100 memsets, then the trigger: an NVTX mark named
 *                       "dump_here", or a cudaMalloc too large to succeed
 *                       (the CUDA call fails, the program goes on); then
 *                       100 more memsets and a normal exit.  Truth:
 *                       trigger.error, the failed call's error code.
 *
 * Prints "ready" once CUDA is initialized (the recorder then exists).
 */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "common.h"

extern "C" __global__ void aon_work(int *x)
{
	if (threadIdx.x == 0)
		x[blockIdx.x] += 1;
}

extern "C" __attribute__((noinline)) void aon_launch(int *d, int n, cudaStream_t s)
{
	for (int i = 0; i < n; i++)
		aon_work<<<64, 32, 0, s>>>(d);
	CK(cudaGetLastError());
}

static int windows(void)
{
	char line[128];
	int *d, inside = 0, graph_n = 0, launch_calls = 0, syncs = 0;
	cudaStream_t gs;
	cudaGraph_t g;
	cudaGraphExec_t ge = NULL;

	CK(cudaMalloc(&d, 64 * sizeof(int)));
	CK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
	CK(cudaDeviceSynchronize());
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		int n = 0;

		if (!strncmp(line, "quit", 4))
			break;
		if (!strncmp(line + 3, "capture ", 8)) {
			if (sscanf(line + 11, "%d", &n) != 1 || n < 0 || ge)
				return 2;
			CK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeGlobal));
			aon_launch(d, n, gs);
			CK(cudaStreamEndCapture(gs, &g));
			CK(cudaGraphInstantiate(&ge, g, 0));
			graph_n = n;
			CK(cudaGraphLaunch(ge, gs));
		} else if (!strncmp(line + 3, "graph", 5)) {
			if (!ge)
				return 2;
			n = graph_n;
			CK(cudaGraphLaunch(ge, gs));
		} else {
			if (sscanf(line + 3, "%d", &n) != 1 || n < 0)
				return 2;
			aon_launch(d, n, 0);
		}
		CK(cudaDeviceSynchronize());
		if (!strncmp(line, "in ", 3)) {
			inside += n;
			syncs++;
			/* Launch calls: one a kernel, made now or into the capture. */
			if (strncmp(line + 3, "graph", 5))
				launch_calls += n;
		}
		printf("done\n");
		fflush(stdout);
	}
	if (ge) {
		CK(cudaGraphExecDestroy(ge));
		CK(cudaGraphDestroy(g));
	}
	CK(cudaStreamDestroy(gs));
	CK(cudaFree(d));
	printf("TRUTH kernel.count.aon_work %d\n", inside);
	printf("TRUTH api.count.cudaLaunchKernel %d\n", launch_calls);
	printf("TRUTH api.count.cudaDeviceSynchronize %d\n", syncs);
	fflush(stdout);
	return 0;
}

static int launcher(void)
{
	char line[128];
	int n = 0, total = 0, *d = NULL;

	CK(cudaGetDeviceCount(&n));
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "quit", 4))
			break;
		if (sscanf(line, "gpu %d", &n) != 1 || n < 0)
			return 2;
		if (!d)
			CK(cudaMalloc(&d, 64 * sizeof(int)));
		aon_launch(d, n, 0);
		CK(cudaDeviceSynchronize());
		total += n;
		printf("done\n");
		fflush(stdout);
	}
	if (d)
		CK(cudaFree(d));
	printf("TRUTH kernel.count.aon_work %d\n", total);
	fflush(stdout);
	return 0;
}

static int crash(long n)
{
	char *d;

	CK(cudaMalloc(&d, (size_t)4 * (size_t)(n + 1)));
	CK(cudaDeviceSynchronize());
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; i < n; i++)
		CK(cudaMemsetAsync(d, (int)(i & 0xff), (size_t)4 * (size_t)(i + 1), 0));
	CK(cudaDeviceSynchronize());
	printf("TRUTH memset.sequence %ld\n", n);
	fflush(stdout);
	raise(SIGSEGV);
	return 0;
}

static int trigger(const char *how)
{
	char *d, *huge = NULL;
	cudaError_t err = cudaSuccess;

	CK(cudaMalloc(&d, 4096));
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < 100; i++)
		CK(cudaMemsetAsync(d, i, 4096, 0));
	CK(cudaDeviceSynchronize());
	if (!strcmp(how, "nvtx")) {
		nvtxMarkA("dump_here");
	} else {
		err = cudaMalloc((void **)&huge, (size_t)1 << 50);
		(void)cudaGetLastError();   /* the error is expected: clear it */
	}
	for (int i = 0; i < 100; i++)
		CK(cudaMemsetAsync(d, i, 4096, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	printf("TRUTH trigger.error %d\n", (int)err);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "trigger"))
		return trigger(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "windows"))
		return windows();
	if (argc == 2 && !strcmp(argv[1], "launcher"))
		return launcher();
	if (argc == 3 && !strcmp(argv[1], "crash"))
		return crash(atol(argv[2]));
	fprintf(stderr, "usage: always_on windows | always_on launcher | always_on crash N | always_on trigger nvtx|cuda-error\n");
	return 2;
}
