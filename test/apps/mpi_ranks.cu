// NVCCFLAGS: -cudart shared
/*
 * One rank of a small job started by mpirun (no MPI calls: the launcher's
 * environment is all it needs).  The rank comes from OMPI_COMM_WORLD_RANK
 * (else RANK, else 0).  Every rank runs 3 steps, each an NVTX range "step"
 * holding 20 rank_work kernels and one 64 KiB host-to-device copy; rank 1
 * runs 60 kernels in step 1, so a merged report names it the slowest there.
 * Both ranks may share one GPU.
 *
 * Prints "TRUTH rank.<r>.kernels <n>" and "TRUTH rank.<r>.steps 3" in one
 * write (ranks share the launcher's stdout).
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "common.h"

extern "C" __global__ void rank_work(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		for (int k = 0; k < 64; k++)
			p[i] = p[i] * 0.999f + 1.0f;
}

int main(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	int rank = r ? atoi(r) : getenv("RANK") ? atoi(getenv("RANK")) : 0;
	const int n = 1 << 16;
	static float host[1 << 14];
	float *d = NULL;
	long long kernels = 0;
	char line[128];
	int len;

	CK(cudaMalloc(&d, n * sizeof(float)));
	for (int step = 0; step < 3; step++) {
		int k = (rank == 1 && step == 1) ? 60 : 20;

		nvtxRangePushA("step");
		CK(cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice));
		for (int i = 0; i < k; i++) {
			rank_work<<<n / 256, 256>>>(d, n);
			CK(cudaGetLastError());
		}
		kernels += k;
		CK(cudaDeviceSynchronize());
		nvtxRangePop();
	}
	CK(cudaFree(d));
	len = snprintf(line, sizeof(line), "TRUTH rank.%d.kernels %lld\nTRUTH rank.%d.steps 3\n",
		       rank, kernels, rank);
	fflush(stdout);
	if (write(1, line, (size_t)len) != len)
		return 1;
	return 0;
}
