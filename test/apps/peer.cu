/*
 * Peer-to-peer copies between GPUs 0 and 1 with peer access enabled.
 *
 * Without two GPUs that can access each other it prints "SKIP <reason>"
 * and exits 0; the test then reports a skip.  Without peer access the
 * runtime would stage copies through the host and the truth would not hold.
 *
 * Truth: memcpy.PtoP.{count,bytes}, memset.*, kernel.count.peer_inc,
 * devices.min.
 */
#include <cuda_runtime.h>

#include "common.h"

#define N (1 << 20) /* 4 MiB of floats */

extern "C" __global__ void peer_inc(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

int main(void)
{
	const size_t bytes = N * sizeof(float);
	int ndev = 0, can01 = 0, can10 = 0;
	float *d0, *d1, h = 0;
	cudaStream_t s0;

	CK(cudaGetDeviceCount(&ndev));
	if (ndev < 2) {
		printf("SKIP need 2 GPUs, found %d\n", ndev);
		return 0;
	}
	CK(cudaDeviceCanAccessPeer(&can01, 0, 1));
	CK(cudaDeviceCanAccessPeer(&can10, 1, 0));
	if (!can01 || !can10) {
		printf("SKIP GPUs 0 and 1 cannot access each other as peers\n");
		return 0;
	}

	CK(cudaSetDevice(1));
	CK(cudaDeviceEnablePeerAccess(0, 0));
	CK(cudaMalloc(&d1, bytes));
	set_sync(d1, 0, bytes);

	CK(cudaSetDevice(0));
	CK(cudaDeviceEnablePeerAccess(1, 0));
	CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
	CK(cudaMalloc(&d0, bytes));
	set_sync(d0, 0, bytes);
	LAUNCH(peer_inc, N / 256, 256, 0, 0, d0, N);
	CK(cudaDeviceSynchronize());

	/* 0 -> 1 three times synchronously, 1 -> 0 twice asynchronously */
	for (int i = 0; i < 3; i++) {
		CK(cudaMemcpyPeer(d1, 1, d0, 0, bytes));
		truth_memcpy("PtoP", bytes);
	}
	CK(cudaSetDevice(1));
	LAUNCH(peer_inc, N / 256, 256, 0, 0, d1, N);
	CK(cudaDeviceSynchronize());
	CK(cudaSetDevice(0));
	for (int i = 0; i < 2; i++) {
		CK(cudaMemcpyPeerAsync(d0, 0, d1, 1, bytes / 2, s0));
		truth_memcpy("PtoP", bytes / 2);
	}
	CK(cudaStreamSynchronize(s0));

	copy_sync(&h, d0, sizeof(float), cudaMemcpyDeviceToHost);
	REQUIRE(h == 2.0f, "d0[0] = %g, want 2", (double)h);

	CK(cudaStreamDestroy(s0));
	CK(cudaFree(d0));
	CK(cudaSetDevice(1));
	CK(cudaFree(d1));
	truth_set("devices.min", 2);
	truth_print();
	return 0;
}
