// NVTX with known structure, for attribution checks:
//   "outer" (push/pop) holds 4 launches and a nested "inner" with 6;
//   "xthread" is started on the main thread (5 launches there while it is
//   open, 3 more from a second thread that must not count) and ended on
//   another thread; "dom_range" is pushed in domain "mydomain" around 2
//   launches; one mark.  Prints TRUTH lines for the kernels (checked
//   strictly) and nvtx.* lines for the ranges.
// NVCCFLAGS: -cudart shared
// LIBS: -lpthread
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>

#include "common.h"

extern "C" __global__ void nv_kernel(int *p) { p[threadIdx.x] += 1; }

static int *d;

static void launch(int n)
{
	for (int i = 0; i < n; i++)
		LAUNCH(nv_kernel, 1, 32, 0, 0, d);
}

static void *other_thread_launches(void *arg)
{
	(void)arg;
	launch(3);
	CK(cudaDeviceSynchronize());
	return NULL;
}

static void *end_range(void *arg)
{
	nvtxRangeEnd(*(nvtxRangeId_t *)arg);
	return NULL;
}

int main(void)
{
	pthread_t t;
	nvtxRangeId_t id;
	nvtxDomainHandle_t dom;
	nvtxEventAttributes_t a;

	CK(cudaMalloc(&d, 32 * sizeof(int)));
	CK(cudaDeviceSynchronize());

	nvtxRangePushA("outer");
	launch(4);
	nvtxRangePushA("inner");
	launch(6);
	nvtxRangePop();
	nvtxRangePop();

	id = nvtxRangeStartA("xthread");
	launch(5);
	pthread_create(&t, NULL, other_thread_launches, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, end_range, &id);
	pthread_join(t, NULL);

	dom = nvtxDomainCreateA("mydomain");
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "dom_range";
	nvtxDomainRangePushEx(dom, &a);
	launch(2);
	nvtxDomainRangePop(dom);
	nvtxMarkA("done");
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));

	truth_print();
	printf("TRUTH nvtx.outer.kernels 10\nTRUTH nvtx.inner.kernels 6\n"
	       "TRUTH nvtx.xthread.kernels 5\nTRUTH nvtx.dom_range.kernels 2\n"
	       "TRUTH nvtx.outer.count 1\nTRUTH nvtx.xthread.count 1\n");
	return 0;
}
