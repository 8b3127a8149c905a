// Call stacks: one kernel launched from two functions with known counts,
// and a graph captured in a third function and replayed.  Built with
// --export-dynamic so the recorder's dladdr names the functions.
// NVCCFLAGS: -cudart shared -g -Xlinker --export-dynamic
#include <cuda_runtime.h>

#include "common.h"

extern "C" __global__ void same_kernel(int *p) { p[threadIdx.x] += 1; }

#define NA 7
#define NB 13
#define NODES 3
#define REPLAYS 4

extern "C" __attribute__((noinline)) void site_a(int *d)
{
	for (int i = 0; i < NA; i++)
		same_kernel<<<1, 32>>>(d);
	CK(cudaGetLastError());
}

extern "C" __attribute__((noinline)) void site_b(int *d)
{
	for (int i = 0; i < NB; i++)
		same_kernel<<<1, 32>>>(d);
	CK(cudaGetLastError());
}

extern "C" __attribute__((noinline)) cudaGraphExec_t capture_site(int *d, cudaStream_t s)
{
	cudaGraph_t g;
	cudaGraphExec_t ge;

	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < NODES; i++)
		same_kernel<<<1, 32, 0, s>>>(d);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	return ge;
}

int main(void)
{
	cudaStream_t s;
	cudaGraphExec_t ge;
	int *d;

	CK(cudaMalloc(&d, 32 * sizeof(int)));
	CK(cudaStreamCreate(&s));
	site_a(d);
	site_b(d);
	ge = capture_site(d, s);
	for (int i = 0; i < REPLAYS; i++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaDeviceSynchronize());
	truth_kernel("same_kernel", NA + NB + NODES * REPLAYS);
	truth_set("graph_nodes.capture.nodes", NODES);
	truth_set("graph_nodes.capture.kernels", NODES * REPLAYS);
	truth_set("stack.site_a", NA);
	truth_set("stack.site_b", NB);
	truth_set("stack.capture_site", NODES * REPLAYS);
	truth_print();
	return 0;
}
