// Call stacks with the static CUDA runtime (nvcc's default): one templated
// kernel launched from three functions with known counts, two with <<<>>>
// and one with cudaLaunchKernel.  Between those functions and the driver
// sit, in this executable, the runtime's own functions, the launch stub
// and the host function nvcc makes for the kernel: a launch site must
// start at site_a, site_b or site_c all the same.  Built as users build:
// no exported symbols, so the analyzer names the frames from the binary's
// symbol table (test/golden/callsites_static.gpuprof was recorded from the
// repository root, so its module path is relative to it).
// NVCCFLAGS: -cudart static -g
#include <cuda_runtime.h>

#include "common.h"

template <typename T> __global__ void scale(T *p, T f)
{
	p[threadIdx.x] *= f;
}

#define NA 7
#define NB 13
#define NC 5

extern "C" __attribute__((noinline)) void site_a(float *d)
{
	for (int i = 0; i < NA; i++)
		scale<float><<<1, 32>>>(d, 1.0f);
	CK(cudaGetLastError());
}

extern "C" __attribute__((noinline)) void site_b(float *d)
{
	for (int i = 0; i < NB; i++)
		scale<float><<<1, 32>>>(d, 1.0f);
	CK(cudaGetLastError());
}

extern "C" __attribute__((noinline)) void site_c(float *d)
{
	float f = 1.0f;
	void *args[] = { &d, &f };

	for (int i = 0; i < NC; i++)
		CK(cudaLaunchKernel((const void *)scale<float>, dim3(1), dim3(32), args, 0, 0));
}

int main(void)
{
	float *d;

	CK(cudaMalloc(&d, 32 * sizeof(float)));
	site_a(d);
	site_b(d);
	site_c(d);
	CK(cudaDeviceSynchronize());
	truth_kernel("scale", NA + NB + NC);
	truth_set("stack.site_a", NA);
	truth_set("stack.site_b", NB);
	truth_set("stack.site_c", NC);
	truth_print();
	return 0;
}
