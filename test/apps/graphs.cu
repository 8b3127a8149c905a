/*
 * CUDA graphs, built both ways, launched a known number of times, next to
 * kernels launched outside any graph.
 *
 *   graph A (stream capture): g_step, g_mul, g_step, g_mul, g_step kernels
 *            and one memset node; launched RA times
 *   graph B (explicit cudaGraphAddKernelNode): g_explicit -> g_explicit;
 *            launched RB times
 *   outside: one memset, OUTSIDE launches of g_outside, one DtoH copy
 *
 * Launches made during capture do not execute and produce no activity, so
 * they are not counted.  The truth differs per graph-trace mode, so keys
 * carry a mode prefix; keys without one hold in both modes:
 *
 *   node.*   per-node records: every kernel/memset node of every launch is
 *            an activity record carrying its graph id;
 *            node.graph_nodes.<label>.{nodes,kernels} describe each graph:
 *            distinct node ids seen (kernel and memset nodes) and kernel
 *            records; labels only pair the two numbers.
 *   graph.*  whole-graph records: one record per graph launch and no
 *            records for anything inside a graph;
 *            graph.graphs.<label>.launches per graph.
 */
#include <cuda_runtime.h>

#include "common.h"

#define N 4096
#define RA 20      /* launches of graph A */
#define RB 7       /* launches of graph B */
#define OUTSIDE 11 /* g_outside launches outside graphs */

extern "C" __global__ void g_step(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

extern "C" __global__ void g_mul(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= 1.0f;
}

extern "C" __global__ void g_explicit(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 2.0f;
}

extern "C" __global__ void g_outside(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 3.0f;
}

/* Counts n launches of a kernel node of a graph: records in node mode only. */
static void graph_kernels(const char *name, long long n)
{
	truth_add3("node.kernel.count.", name, "", n);
	truth_add3("node.kernel.in_graph.", name, "", n);
	truth_add("node.kernel.total", n);
}

/* Counts launches outside graphs: records in both modes. */
static void outside_kernels(const char *name, long long n)
{
	truth_add3("node.kernel.count.", name, "", n);
	truth_add3("node.kernel.in_graph.", name, "", 0);
	truth_add3("graph.kernel.count.", name, "", n);
	truth_add3("graph.kernel.in_graph.", name, "", 0);
	truth_add("node.kernel.total", n);
	truth_add("graph.kernel.total", n);
}

static void memsets(int in_graph, long long n, long long bytes)
{
	truth_add("node.memset.count", n);
	truth_add("node.memset.bytes", n * bytes);
	if (!in_graph) {
		truth_add("graph.memset.count", n);
		truth_add("graph.memset.bytes", n * bytes);
	}
}

int main(void)
{
	const int block = 256, grid = N / block;
	float *d_a, *d_b, h[N];
	cudaStream_t s;
	cudaGraph_t ga, gb;
	cudaGraphExec_t ea, eb;
	cudaGraphNode_t nb[2];

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d_a, N * sizeof(float)));
	CK(cudaMalloc(&d_b, N * sizeof(float)));

	/* Graph A by capture.  Its memset zeroes the second half of d_a before
	 * three +1 steps, so after RA launches the first half holds 3 * RA and
	 * the second half 3. */
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMemsetAsync(d_a + N / 2, 0, N / 2 * sizeof(float), s));
	g_step<<<grid, block, 0, s>>>(d_a, N);
	g_mul<<<grid, block, 0, s>>>(d_a, N);
	g_step<<<grid, block, 0, s>>>(d_a, N);
	g_mul<<<grid, block, 0, s>>>(d_a, N);
	g_step<<<grid, block, 0, s>>>(d_a, N);
	CK(cudaGetLastError());
	CK(cudaStreamEndCapture(s, &ga));
	CK(cudaGraphInstantiate(&ea, ga, 0));

	/* Graph B by hand: two dependent g_explicit nodes on d_b. */
	{
		int n = N;
		void *args[] = { &d_b, &n };
		cudaKernelNodeParams p;

		memset(&p, 0, sizeof(p));
		p.func = (void *)g_explicit;
		p.gridDim = dim3(grid);
		p.blockDim = dim3(block);
		p.kernelParams = args;
		CK(cudaGraphCreate(&gb, 0));
		CK(cudaGraphAddKernelNode(&nb[0], gb, NULL, 0, &p));
		CK(cudaGraphAddKernelNode(&nb[1], gb, &nb[0], 1, &p));
		CK(cudaGraphInstantiate(&eb, gb, 0));
	}

	/* Outside any graph: zero both buffers. */
	CK(cudaMemsetAsync(d_a, 0, N * sizeof(float), s));
	memsets(0, 1, N * sizeof(float));
	CK(cudaMemsetAsync(d_b, 0, N * sizeof(float), s));
	memsets(0, 1, N * sizeof(float));

	for (int r = 0; r < RA; r++)
		CK(cudaGraphLaunch(ea, s));
	graph_kernels("g_step", 3LL * RA);
	graph_kernels("g_mul", 2LL * RA);
	memsets(1, RA, N / 2 * sizeof(float));

	for (int r = 0; r < RB; r++)
		CK(cudaGraphLaunch(eb, s));
	graph_kernels("g_explicit", 2LL * RB);

	for (int i = 0; i < OUTSIDE; i++) {
		g_outside<<<grid, block, 0, s>>>(d_b, N);
		CK(cudaGetLastError());
	}
	outside_kernels("g_outside", OUTSIDE);

	copy_async(h, d_a, sizeof(h), cudaMemcpyDeviceToHost, s);
	CK(cudaStreamSynchronize(s));
	REQUIRE(h[0] == 3.0f * RA, "a[0] = %g", (double)h[0]);
	REQUIRE(h[N - 1] == 3.0f, "a[N-1] = %g", (double)h[N - 1]);
	CK(cudaMemcpy(h, d_b, sizeof(h), cudaMemcpyDeviceToHost));
	truth_memcpy("DtoH", sizeof(h));
	REQUIRE(h[7] == 4.0f * RB + 3.0f * OUTSIDE, "b[7] = %g", (double)h[7]);

	/* graph shapes: A has 5 kernel nodes + 1 memset node, B 2 kernel nodes */
	truth_set("node.graph_nodes.A.nodes", 6);
	truth_set("node.graph_nodes.A.kernels", 5LL * RA);
	truth_set("node.graph_nodes.B.nodes", 2);
	truth_set("node.graph_nodes.B.kernels", 2LL * RB);
	truth_set("node.count.graph", 0);
	truth_set("graph.graphs.A.launches", RA);
	truth_set("graph.graphs.B.launches", RB);
	truth_set("graph.count.graph", RA + RB);

	CK(cudaGraphExecDestroy(ea));
	CK(cudaGraphExecDestroy(eb));
	CK(cudaGraphDestroy(ga));
	CK(cudaGraphDestroy(gb));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d_a));
	CK(cudaFree(d_b));
	truth_print();
	return 0;
}
