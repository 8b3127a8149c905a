/*
 * Ends without cudaDeviceReset, the way most programs end.
 *
 *   no_reset          work, cudaDeviceSynchronize, return 0 from main
 *   no_reset exit3    the same work, then exit(3) from a helper function
 *
 * The trace must be complete either way (all activity, a clean end), and
 * the exit status must pass through the wrapper unchanged.
 *
 * Truth: kernel.count.nr_work, memcpy.*, memset.*, exit_status.
 */
#include <cuda_runtime.h>

#include "common.h"

#define N (1 << 20)

extern "C" __global__ void nr_work(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

static void finish_with(int status)
{
	truth_set("exit_status", status);
	truth_print();
	exit(status);
}

int main(int argc, char **argv)
{
	int use_exit = argc > 1 && !strcmp(argv[1], "exit3");
	float *d, *h;

	CK(cudaMallocHost(&h, N * sizeof(float)));
	CK(cudaMalloc(&d, N * sizeof(float)));
	set_sync(d, 0, N * sizeof(float));
	for (int i = 0; i < 25; i++)
		LAUNCH(nr_work, N / 256, 256, 0, 0, d, N);
	copy_async(h, d, N * sizeof(float), cudaMemcpyDeviceToHost, 0);
	CK(cudaDeviceSynchronize());
	/* x -> x/2 + 1 from 0 is 2 - 2^(1-k) after k steps (float rounds the
	 * last ones to 2) */
	REQUIRE(h[0] > 1.99f && h[0] <= 2.0f, "x = %g", (double)h[0]);

	/* no cudaFree, no cudaDeviceReset */
	if (use_exit)
		finish_with(3);
	truth_set("exit_status", 0);
	truth_print();
	return 0;
}
