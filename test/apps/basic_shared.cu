// NVCCFLAGS: -cudart shared
/*
 * Basic runtime-API program linked against the shared cudart.
 *
 * Issues a known number of launches of three kernels, memcpys of every
 * direction (pageable and pinned host memory, synchronous and asynchronous)
 * and memsets (cudaMemset and cudaMemsetAsync), all with exact byte counts,
 * then checks the result on the host so the kernels provably ran.
 *
 * Truth: kernel.count.{fill_iota,scale,axpy}, kernel.total,
 * memcpy.{HtoD,DtoH,DtoD}.{count,bytes}, memset.{count,bytes}.
 */
#include <cuda_runtime.h>

#include "common.h"

#define N (1 << 20) /* floats per buffer: 4 MiB */

extern "C" __global__ void fill_iota(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = (float)(i & 1023);
}

extern "C" __global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

extern "C" __global__ void axpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

int main(void)
{
	const size_t bytes = N * sizeof(float);
	const int block = 256, grid = (N + block - 1) / block;
	float *d_a, *d_b, *d_c, *pinned, *pageable;
	cudaStream_t s;

	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d_a, bytes));
	CK(cudaMalloc(&d_b, bytes));
	CK(cudaMalloc(&d_c, bytes));
	CK(cudaMallocHost(&pinned, bytes));
	pageable = (float *)malloc(bytes);
	REQUIRE(pageable, "out of memory");

	for (int i = 0; i < N; i++)
		pageable[i] = 1.0f;

	/* memsets: two synchronous of 4 KiB, three asynchronous of 64 KiB */
	set_sync(d_c, 0, 4096);
	set_sync(d_c + 4096, 0, 4096);
	for (int i = 0; i < 3; i++)
		set_async(d_c + 16384 * i, 0, 65536, s);

	/* HtoD: pageable synchronous (3 x 4 MiB), pinned asynchronous (2 x 1 MiB) */
	for (int i = 0; i < 3; i++)
		copy_sync(d_a, pageable, bytes, cudaMemcpyHostToDevice);
	memcpy(pinned, pageable, bytes);
	copy_async(d_b, pinned, bytes / 4, cudaMemcpyHostToDevice, s);
	copy_async(d_b + N / 4, pinned, bytes / 4, cudaMemcpyHostToDevice, s);
	CK(cudaStreamSynchronize(s));

	/* kernels: 5 fill_iota, 100 scale, 37 axpy on two streams */
	for (int i = 0; i < 5; i++)
		LAUNCH(fill_iota, grid, block, 0, s, d_b, N);
	CK(cudaStreamSynchronize(s));
	for (int i = 0; i < 100; i++) {
		/* s does not synchronize with the legacy stream: separate data */
		if (i % 2)
			LAUNCH(scale, grid, block, 0, s, d_b, 1.0f, N);
		else
			LAUNCH(scale, grid, block, 0, 0, d_a, 1.0f, N);
	}
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < 37; i++)
		LAUNCH(axpy, grid, block, 0, 0, d_a, d_b, 1.0f, N);

	/* DtoD: three synchronous of 4 MiB, one asynchronous of 1 MiB */
	for (int i = 0; i < 3; i++)
		copy_sync(d_c, d_a, bytes, cudaMemcpyDeviceToDevice);
	CK(cudaDeviceSynchronize()); /* DtoD cudaMemcpy does not block the host */
	copy_async(d_c, d_a, bytes / 4, cudaMemcpyDeviceToDevice, s);
	CK(cudaStreamSynchronize(s));

	/* DtoH: pageable synchronous (4 MiB), pinned asynchronous (2 x 512 KiB) */
	copy_sync(pageable, d_c, bytes, cudaMemcpyDeviceToHost);
	copy_async(pinned, d_c, bytes / 8, cudaMemcpyDeviceToHost, s);
	copy_async(pinned + N / 8, d_c + N / 8, bytes / 8,
		   cudaMemcpyDeviceToHost, s);
	CK(cudaStreamSynchronize(s));

	/* a = 1 (scale by 1 keeps it), then += 37 * (i & 1023) */
	for (int i = 0; i < N; i += 4099) {
		float want = 1.0f + 37.0f * (float)(i & 1023);
		REQUIRE(pageable[i] == want, "a[%d] = %g, want %g", i,
			(double)pageable[i], (double)want);
		if (i < N / 4)
			REQUIRE(pinned[i] == want, "pinned[%d] = %g, want %g", i,
				(double)pinned[i], (double)want);
	}

	CK(cudaStreamDestroy(s));
	CK(cudaFree(d_a));
	CK(cudaFree(d_b));
	CK(cudaFree(d_c));
	CK(cudaFreeHost(pinned));
	free(pageable);
	truth_print();
	return 0;
}
