// The program `make demo` profiles: the activity pattern of Warp's
// ScopedTimer example (zero an array, three increment loops of growing
// length, copy back to pinned host memory) on every visible GPU, plus a
// short upload and a reduction so the tables have some variety.
// NVCCFLAGS: -cudart shared
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
			return 1;                                              \
		}                                                              \
	} while (0)

__global__ void inc_loop(float *a, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		for (int j = 0; j < iters; j++)
			a[i] += 1.0f;
}

template <typename T>
__global__ void block_sum(const T *a, int n, T *out)
{
	__shared__ T s[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	s[threadIdx.x] = i < n ? a[i] : T(0);
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(out, s[0]);
}

int main(void)
{
	const int n = 10 * 1000 * 1000;
	int ndev = 0;

	CHECK(cudaGetDeviceCount(&ndev));
	for (int d = 0; d < ndev; d++) {
		float *a, *sum, *host;

		CHECK(cudaSetDevice(d));
		CHECK(cudaMallocHost(&host, n * sizeof(float)));
		CHECK(cudaMalloc(&a, n * sizeof(float)));
		CHECK(cudaMalloc(&sum, sizeof(float)));
		CHECK(cudaMemset(a, 0, n * sizeof(float)));
		for (int iters = 500; iters <= 1500; iters += 500)
			inc_loop<<<(n + 255) / 256, 256>>>(a, n, iters);
		CHECK(cudaMemcpy(host, a, n * sizeof(float), cudaMemcpyDeviceToHost));
		CHECK(cudaMemcpy(a, host, n / 4 * sizeof(float), cudaMemcpyHostToDevice));
		CHECK(cudaMemset(sum, 0, sizeof(float)));
		block_sum<float><<<(n + 255) / 256, 256>>>(a, n, sum);
		CHECK(cudaGetLastError());
		CHECK(cudaDeviceSynchronize());
		printf("cuda:%d: a[0] = %.0f (expected 3000)\n", d, host[0]);
		CHECK(cudaFree(a));
		CHECK(cudaFree(sum));
		CHECK(cudaFreeHost(host));
	}
	return 0;
}
