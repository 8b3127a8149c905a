/*
 * A burst of launches between two pauses, for tests that time a fault of
 * the recorder (a stalled writer) against the program's work:
 *
 *   burst_paced N WARM_MS AFTER_MS
 *
 * One launch, cudaDeviceSynchronize and a sleep of WARM_MS: the recorder
 * has the device, context and kernel name records by then.  Then N
 * launches of the same kernel, cudaDeviceSynchronize, "BURST_DONE" on
 * stdout, a sleep of AFTER_MS, and exit status 0.
 *
 * Truth: kernel.count.paced_inc, kernel.total (both N + 1).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

extern "C" __global__ void paced_inc(int *x)
{
	if (threadIdx.x == 0)
		x[blockIdx.x] += 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	int n, *d;
	long warm, after;

	REQUIRE(argc == 4, "usage: burst_paced N WARM_MS AFTER_MS");
	n = atoi(argv[1]);
	warm = atol(argv[2]);
	after = atol(argv[3]);
	REQUIRE(n > 0 && warm >= 0 && after >= 0, "bad arguments");

	CK(cudaMalloc(&d, 64 * sizeof(int)));
	paced_inc<<<1, 32>>>(d);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	sleep_ms(warm);
	for (int i = 0; i < n; i++)
		paced_inc<<<1, 32>>>(d);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	printf("BURST_DONE\n");
	printf("TRUTH kernel.count.paced_inc %d\n", n + 1);
	printf("TRUTH kernel.total %d\n", n + 1);
	fflush(stdout);
	sleep_ms(after);
	return 0;
}
