// CUDA graph replay: a graph of NODES small kernels built by stream capture,
// replayed REPLAYS times.
//
//   graph_replay [REPLAYS] [NODES]      defaults 2000 and 100
//
// Prints "BENCH us_per_replay X": host wall time of the timed replays,
// including the final synchronization, divided by REPLAYS, after WARMUP
// untimed replays.  "BENCH launched N" counts kernel nodes executed.
#include "common.cuh"

#define WARMUP 50

__global__ void small_kernel(float *p, int i)
{
	p[threadIdx.x] += (float)i;
}

int main(int argc, char **argv)
{
	long replays = argc > 1 ? parse_count(argv[1]) : 2000;
	long nodes = argc > 2 ? parse_count(argv[2]) : 100;
	cudaStream_t s;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	float *buf;
	double t0, t1;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&buf, 32 * sizeof(float)));
	CK(cudaMemsetAsync(buf, 0, 32 * sizeof(float), s));
	CK(cudaStreamSynchronize(s));

	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (long i = 0; i < nodes; i++)
		small_kernel<<<1, 32, 0, s>>>(buf, (int)i);
	CK(cudaStreamEndCapture(s, &graph));
	CK(cudaGraphInstantiate(&exec, graph, 0));

	for (int i = 0; i < WARMUP; i++)
		CK(cudaGraphLaunch(exec, s));
	CK(cudaStreamSynchronize(s));
	t0 = now_s();
	for (long i = 0; i < replays; i++)
		CK(cudaGraphLaunch(exec, s));
	CK(cudaStreamSynchronize(s));
	t1 = now_s();
	printf("BENCH us_per_replay %.4f\n", (t1 - t0) * 1e6 / (double)replays);
	printf("BENCH loop_s %.4f\n", t1 - t0);
	printf("BENCH launched %ld\n", (replays + WARMUP) * nodes);
	printf("BENCH graph_launches %ld\n", replays + WARMUP);
	fflush(stdout);

	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(graph));
	CK(cudaFree(buf));
	CK(cudaStreamDestroy(s));
	return 0;
}
