/*
 * Basic runtime-API program with nvcc's default static cudart.
 *
 * Unlike basic_shared it uses C++ kernel names (a function template with two
 * instantiations, a kernel in a namespace), the __constant__ symbol copies
 * (cudaMemcpyToSymbol is an HtoD memcpy, cudaMemcpyFromSymbol a DtoH one)
 * and the legacy default stream only.
 *
 * Kernel truth keys use the demangled base name: "tscale" covers both
 * void tscale<float>(...) and void tscale<double>(...), "gp::reduce_sum"
 * the namespaced kernel.
 */
#include <cuda_runtime.h>

#include "common.h"

#define N (1 << 18)
#define NCOEF 64

__constant__ float coef[NCOEF];

template <typename T> __global__ void tscale(T *x, T a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

namespace gp {
__global__ void reduce_sum(const float *x, float *out, int n)
{
	float v = 0.0f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		v += x[i];
	atomicAdd(out, v);
}
} // namespace gp

extern "C" __global__ void use_coef(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = coef[i % NCOEF];
}

int main(void)
{
	const int block = 256, grid = (N + block - 1) / block;
	float h_coef[NCOEF], h_back[NCOEF], sum = 0.0f;
	float *h = (float *)malloc(N * sizeof(float));
	float *d_f, *d_sum;
	double *d_d;

	REQUIRE(h, "out of memory");
	CK(cudaMalloc(&d_f, N * sizeof(float)));
	CK(cudaMalloc(&d_d, N * sizeof(double)));
	CK(cudaMalloc(&d_sum, sizeof(float)));

	for (int i = 0; i < NCOEF; i++)
		h_coef[i] = (float)i;
	CK(cudaMemcpyToSymbol(coef, h_coef, sizeof(h_coef)));
	truth_memcpy("HtoD", sizeof(h_coef));
	CK(cudaMemcpyFromSymbol(h_back, coef, sizeof(h_back)));
	truth_memcpy("DtoH", sizeof(h_back));
	REQUIRE(!memcmp(h_coef, h_back, sizeof(h_coef)), "symbol round trip");

	set_sync(d_d, 0, N * sizeof(double));
	set_sync(d_sum, 0, sizeof(float));

	/* x[i] = i % 64 */
	LAUNCH(use_coef, grid, block, 0, 0, d_f, N);

	/* 12 x tscale<float>(1), 8 x tscale<double>(2) */
	for (int i = 0; i < 12; i++) {
		tscale<float><<<grid, block>>>(d_f, 1.0f, N);
		CK(cudaGetLastError());
		truth_kernel("tscale", 1);
	}
	for (int i = 0; i < 8; i++) {
		tscale<double><<<grid, block>>>(d_d, 2.0, N);
		CK(cudaGetLastError());
		truth_kernel("tscale", 1);
	}

	/* 3 reductions of x into *d_sum */
	for (int i = 0; i < 3; i++) {
		gp::reduce_sum<<<64, block>>>(d_f, d_sum, N);
		CK(cudaGetLastError());
		truth_kernel("gp::reduce_sum", 1);
	}

	copy_sync(&sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost);
	copy_sync(h, d_f, N * sizeof(float), cudaMemcpyDeviceToHost);
	for (int i = 0; i < N; i += 257)
		REQUIRE(h[i] == (float)(i % NCOEF), "x[%d] = %g", i, (double)h[i]);
	/* sum of x = (N / 64) * (0 + ... + 63), three times.  Exact in float:
	 * each thread adds 16 equal values (its stride is a multiple of 64),
	 * so every partial and running sum is a multiple of 16 below 2^28. */
	REQUIRE(sum == 3.0f * (N / NCOEF) * (NCOEF * (NCOEF - 1) / 2),
		"sum = %g", (double)sum);

	copy_sync(d_f, h, N * sizeof(float), cudaMemcpyHostToDevice);
	copy_sync(d_d, d_f, N * sizeof(float), cudaMemcpyDeviceToDevice);
	CK(cudaDeviceSynchronize());

	CK(cudaFree(d_f));
	CK(cudaFree(d_d));
	CK(cudaFree(d_sum));
	free(h);
	truth_print();
	return 0;
}
