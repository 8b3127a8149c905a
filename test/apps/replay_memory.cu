/*
 * Kernel replay and memory of every kind: one read-modify-write kernel
 * (x = x * 1.5 + 0.25) per kind of memory the kernel writes: cudaMalloc,
 * cudaMallocAsync (the device's default pool), cudaMallocManaged, mapped
 * host memory (cudaHostAlloc) and cuMemCreate/cuMemMap (as PyTorch's
 * expandable segments).  Each kernel has a name of its own, so that the
 * first launch of each is profiled; a replay pass that ran on memory left
 * unrestored changes the sums printed as "RESULT <kind> <sum>".  Without
 * memory pools or virtual memory management it prints "SKIP <reason>".
 *
 * Truth: kernel.count.rmw_<kind> (1 each), kernel.total.
 */
// LIBS: -lcuda
#include <cuda.h>
#include <cuda_runtime.h>

#include "common.h"

#define N (1 << 20)

#define RMW(name)                                                            \
	extern "C" __global__ void name(float *x)                            \
	{                                                                    \
		size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;    \
		if (i < N)                                                   \
			x[i] = x[i] * 1.5f + 0.25f;                          \
	}
RMW(rmw_malloc)
RMW(rmw_pool)
RMW(rmw_managed)
RMW(rmw_mapped)
RMW(rmw_vmm)

static float host[N];

static void run(const char *kind, const char *kname, void (*k)(float *), float *d)
{
	double sum = 0;

	for (int i = 0; i < N; i++)
		host[i] = (float)(i % 1000) * 0.001f;
	CK(cudaMemcpy(d, host, sizeof(host), cudaMemcpyDefault));
	k<<<N / 256, 256>>>(d);
	CK(cudaGetLastError());
	truth_kernel(kname, 1);
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(host, d, sizeof(host), cudaMemcpyDefault));
	for (int i = 0; i < N; i++)
		sum += host[i];
	printf("RESULT %s %.6f\n", kind, sum);
}

int main(void)
{
	CUdevice dev;
	int pools = 0, vmm = 0;
	float *d, *p, *m, *hm, *hd;
	cudaStream_t s;

	CK(cudaFree(0));
	CU(cuCtxGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, (int)dev));
	CU(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
	if (!pools || !vmm) {
		printf("SKIP memory pools %d, virtual memory management %d\n", pools, vmm);
		return 0;
	}
	CK(cudaMalloc(&d, sizeof(host)));
	run("cudaMalloc", "rmw_malloc", rmw_malloc, d);

	CK(cudaStreamCreate(&s));
	CK(cudaMallocAsync((void **)&p, sizeof(host), s));
	CK(cudaStreamSynchronize(s));
	run("cudaMallocAsync", "rmw_pool", rmw_pool, p);

	CK(cudaMallocManaged(&m, sizeof(host)));
	run("cudaMallocManaged", "rmw_managed", rmw_managed, m);

	CK(cudaHostAlloc((void **)&hm, sizeof(host), cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer((void **)&hd, hm, 0));
	run("cudaHostAllocMapped", "rmw_mapped", rmw_mapped, hd);

	{
		CUmemAllocationProp pr;
		CUmemAccessDesc ad;
		CUmemGenericAllocationHandle h;
		CUdeviceptr va;
		size_t gran, size;

		memset(&pr, 0, sizeof(pr));
		pr.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		pr.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		pr.location.id = (int)dev;
		CU(cuMemGetAllocationGranularity(&gran, &pr, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
		size = (sizeof(host) + gran - 1) / gran * gran;
		CU(cuMemCreate(&h, size, &pr, 0));
		CU(cuMemAddressReserve(&va, size, 0, 0, 0));
		CU(cuMemMap(va, size, 0, h, 0));
		memset(&ad, 0, sizeof(ad));
		ad.location = pr.location;
		ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		CU(cuMemSetAccess(va, size, &ad, 1));
		run("cuMemCreate", "rmw_vmm", rmw_vmm, (float *)va);
	}
	truth_print();
	return 0;
}
