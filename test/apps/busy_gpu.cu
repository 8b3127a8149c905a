/*
 * Keeps the GPU busy without a pause until it is killed: kernels of about
 * 1 ms each, back to back on one stream, with about 20 always queued.
 *
 * Every 10 kernels it waits for the kernel queued 20 launches earlier and
 * prints "COMPLETED <kernels finished> <ms since start>", flushed, so a test
 * that kills it knows how many kernels had finished by when.  The periodic
 * flush must hand those to the trace within one flush interval even though
 * the GPU is never idle.
 *
 * Usage: busy_gpu SECONDS (stops by itself after that many seconds, exit 0)
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common.h"

extern "C" __global__ void busy_spin(long long cycles, int *sink)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		atomicAdd(sink, 1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5.0, t0;
	cudaEvent_t ev[32];
	int *sink, rate_khz = 0;
	long long launched = 0;

	CK(cudaMalloc(&sink, sizeof(int)));
	CK(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
	for (int i = 0; i < 32; i++)
		CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
	t0 = now_ms();
	while (now_ms() - t0 < secs * 1000) {
		busy_spin<<<1, 32>>>((long long)rate_khz, sink); /* ~1 ms */
		CK(cudaGetLastError());
		launched++;
		if (launched % 10 == 0) {
			int slot = (int)(launched / 10) % 32;

			CK(cudaEventRecord(ev[slot], 0));
			if (launched >= 30) {
				/* the event recorded 20 launches ago */
				int old = (int)(launched / 10 - 2) % 32;

				CK(cudaEventSynchronize(ev[old]));
				printf("COMPLETED %lld %.1f\n", launched - 20, now_ms() - t0);
				fflush(stdout);
			}
		}
	}
	CK(cudaDeviceSynchronize());
	printf("TRUTH kernel.count.busy_spin %lld\n", launched);
	return 0;
}
