// A program that takes CUPTI's single subscriber slot itself before CUDA
// starts (as an early profiler would), linked to libcupti.  Preloaded,
// the recorder serves its subscription and traces beside it; either way the
// program must run unchanged: the kernel results are checked here, the
// exit status by the test.
// NVCCFLAGS: -cudart shared
// LIBS: -lcupti -Xlinker -rpath=/usr/local/cuda/lib64
#include <cuda_runtime.h>
#include <cupti.h>

#include "common.h"

extern "C" __global__ void busy_inc(int *p) { p[threadIdx.x] += 1; }

static void CUPTIAPI on_cb(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

int main(void)
{
	CUpti_SubscriberHandle sub;
	int *d, h[32];

	if (cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL) != CUPTI_SUCCESS) {
		fprintf(stderr, "could not take the CUPTI slot\n");
		return 1;
	}
	CK(cudaMalloc(&d, sizeof(h)));
	CK(cudaMemset(d, 0, sizeof(h)));
	for (int i = 0; i < 10; i++)
		busy_inc<<<1, 32>>>(d);
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 32; i++)
		REQUIRE(h[i] == 10, "h[%d] = %d", i, h[i]);
	printf("busy: results correct\n");
	truth_kernel("busy_inc", 10);
	truth_memset(sizeof(h));
	truth_memcpy("DtoH", sizeof(h));
	truth_print();
	cuptiUnsubscribe(sub);
	return 0;
}
