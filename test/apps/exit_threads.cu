/*
 * exit() while other threads are still launching kernels: 4 threads launch
 * in a loop until the process ends; main lets them run 300 ms, then calls
 * exit(0).  The recorder's exit handler must finish the trace without
 * hanging, whatever the other threads do meanwhile.
 *
 * Truth: kernel.total.min 1 (the launch count at exit is not knowable).
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <unistd.h>

#include "common.h"

extern "C" __global__ void spin_inc(int *x)
{
	if (threadIdx.x == 0)
		atomicAdd(x, 1);
}

static int *d;

static void *launcher(void *arg)
{
	(void)arg;
	for (;;) {
		spin_inc<<<1, 32>>>(d);
		if (cudaGetLastError() != cudaSuccess)
			break; /* the runtime is going away */
	}
	return NULL;
}

int main(void)
{
	pthread_t t[4];

	CK(cudaMalloc(&d, sizeof(int)));
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, launcher, NULL);
	usleep(300 * 1000);
	printf("TRUTH kernel.total.min 1\n");
	fflush(stdout);
	exit(0);
}
