/*
 * Device memory in use: cudaMalloc/cudaFree and cudaMallocAsync/
 * cudaFreeAsync (the device's default memory pool) of exact sizes, each
 * allocation touched by a kernel, for --trace=...,memory.
 *
 * Sizes are distinct multiples of 2 MiB, so that no allocation granularity
 * can change them and a test can tell the program's allocations from any
 * the CUDA runtime makes.  In use after each step (MiB):
 *
 *     cudaMalloc A 6 -> 6; cudaMalloc B 10 -> 16; cudaFree A -> 10;
 *     cudaMallocAsync C 14 -> 24; cudaMallocAsync D 4 -> 28 (the peak);
 *     cudaFreeAsync C -> 14; stream synchronized; cudaFree B -> 4;
 *     cudaMalloc E 2 -> 6 (final: D and E are never freed).
 *
 * B is freed before E is allocated, after the stream finished, so the peak
 * is the same whatever the order of the stream-ordered records' times and
 * the host calls' times.  Without memory pools it prints "SKIP <reason>".
 *
 * Truth: memuse.peak_bytes, memuse.final_bytes, memuse.allocs,
 * memuse.frees, memuse.size.<bytes> (allocations of that size),
 * memuse.async_size.<bytes> (stream-ordered ones), kernel.count.touch,
 * kernel.total.  The truth is counted as the calls are made.
 */
#include <cuda_runtime.h>

#include "common.h"

#define MIB (1ull << 20)

static long long in_use, peak;

extern "C" __global__ void touch(unsigned char *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (unsigned char)i;
}

static void counted_alloc(size_t bytes, int async)
{
	char key[TRUTH_KEY_MAX];

	in_use += (long long)bytes;
	if (in_use > peak)
		peak = in_use;
	truth_add("memuse.allocs", 1);
	snprintf(key, sizeof(key), "memuse.size.%zu", bytes);
	truth_add(key, 1);
	if (async) {
		snprintf(key, sizeof(key), "memuse.async_size.%zu", bytes);
		truth_add(key, 1);
	}
}

static void counted_free(size_t bytes)
{
	in_use -= (long long)bytes;
	truth_add("memuse.frees", 1);
}

static unsigned char *dmalloc(size_t bytes)
{
	unsigned char *p;

	CK(cudaMalloc(&p, bytes));
	counted_alloc(bytes, 0);
	LAUNCH(touch, 64, 256, 0, 0, p, bytes);
	return p;
}

static void dfree(unsigned char *p, size_t bytes)
{
	CK(cudaFree(p));
	counted_free(bytes);
}

static unsigned char *dmalloc_async(size_t bytes, cudaStream_t s)
{
	unsigned char *p;

	CK(cudaMallocAsync(&p, bytes, s));
	counted_alloc(bytes, 1);
	LAUNCH(touch, 64, 256, 0, s, p, bytes);
	return p;
}

static void dfree_async(unsigned char *p, size_t bytes, cudaStream_t s)
{
	CK(cudaFreeAsync(p, s));
	counted_free(bytes);
}

int main(void)
{
	const size_t a = 6 * MIB, b = 10 * MIB, c = 14 * MIB, d = 4 * MIB, e = 2 * MIB;
	unsigned char *pa, *pb, *pc, *kept[2];
	int pools = 0;
	cudaStream_t s;

	CK(cudaSetDevice(0));
	CK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
	if (!pools) {
		printf("SKIP device 0 has no memory pools (cudaMallocAsync)\n");
		return 0;
	}
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	pa = dmalloc(a);
	pb = dmalloc(b);
	CK(cudaDeviceSynchronize());
	dfree(pa, a);
	pc = dmalloc_async(c, s);
	kept[0] = dmalloc_async(d, s);
	dfree_async(pc, c, s);
	CK(cudaStreamSynchronize(s));
	dfree(pb, b);
	kept[1] = dmalloc(e);
	CK(cudaDeviceSynchronize());
	REQUIRE(kept[0] && kept[1], "no address for D or E");

	truth_set("memuse.peak_bytes", peak);
	truth_set("memuse.final_bytes", in_use);
	truth_print();
	return 0;
}
