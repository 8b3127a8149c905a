/*
 * Peer copies between GPUs 0 and 1 without peer access enabled: the
 * driver stages each through the host, and CUPTI reports a DtoH leg on
 * device 0 and an HtoD leg on device 1 for each.  The trace must show them
 * as what the program did: peer copies, each counted once.
 *
 * Peer access is not enabled, so this holds whether or not the GPUs could
 * access each other.  Without two GPUs it prints "SKIP <reason>", exits 0.
 *
 * Truth: memcpy.PtoP-staged.{count,bytes}, count.memcpy (legs),
 * kernel.count.staged_touch.
 */
#include <cuda_runtime.h>

#include "common.h"

#define N (1 << 20) /* 4 MiB of floats */
#define COPIES 8

extern "C" __global__ void staged_touch(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

int main(void)
{
	const size_t bytes = N * sizeof(float);
	int ndev = 0, can01 = 0, can10 = 0;
	float *d0, *d1;

	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 2) {
		printf("SKIP need 2 GPUs, found %d\n", ndev);
		return 0;
	}
	CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
	CK(cudaDeviceCanAccessPeer(&can10, 1, 0));
	/*
	 * Peer access is never enabled here, so the copies are staged whether
	 * or not the GPUs could access each other (seen on two H200s that
	 * can: 8 DtoH legs on GPU 0, 8 HtoD legs on GPU 1).
	 */
	(void)can01;
	(void)can10;
	CK(cudaSetDevice(1));
	CK(cudaMalloc(&d1, bytes));
	CK(cudaSetDevice(0));
	CK(cudaMalloc(&d0, bytes));
	staged_touch<<<N / 256, 256>>>(d0);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < COPIES; i++)
		CK(cudaMemcpyPeer(d1, 1, d0, 0, bytes));
	CK(cudaDeviceSynchronize());
	printf("TRUTH kernel.count.staged_touch 1\n");
	printf("TRUTH memcpy.PtoP-staged.count %d\n", COPIES);
	printf("TRUTH memcpy.PtoP-staged.bytes %zu\n", COPIES * bytes);
	/* Records stay what the GPUs did: two legs, one on each device, per copy. */
	printf("TRUTH count.memcpy %d\n", 2 * COPIES);
	printf("TRUTH devices.min 2\n");
	return 0;
}
