/*
 * Dies by SIGKILL after its work, so no exit handler runs.
 *
 * All work completes before a 2.5 s sleep, which outlasts several periodic
 * flushes (the test sets GPUPROF_FLUSH_MS=200), so everything it did must be
 * readable from the trace even though the file never got its end record.
 *
 * Truth: kernel.count.crash_work, memset.*, memcpy.*.
 */
#include <cuda_runtime.h>
#include <signal.h>
#include <unistd.h>

#include "common.h"

#define N (1 << 16)

extern "C" __global__ void crash_work(int *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1;
}

int main(void)
{
	int *d, h = 0;

	CK(cudaMalloc(&d, N * sizeof(int)));
	set_sync(d, 0, N * sizeof(int));
	for (int i = 0; i < 30; i++)
		LAUNCH(crash_work, N / 256, 256, 0, 0, d, N);
	copy_sync(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
	REQUIRE(h == 30, "x = %d", h);

	truth_print();
	usleep(2500 * 1000);
	raise(SIGKILL);
	return 0;
}
