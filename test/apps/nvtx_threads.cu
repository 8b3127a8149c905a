// NVTX with known structure, for attribution checks:
//   "outer" (push/pop) holds 4 launches and a nested "inner" with 6;
//   "xthread" is started on the main thread (5 launches there while it is
//   open, 3 more from a second thread that must not count) and ended on
//   another thread; "dom_range" is pushed in domain "mydomain" around 2
//   launches, with a category, a color and a payload; one mark.  "app" is pushed before the first CUDA call (NVTX
//   before cuInit) and holds everything on the main thread.  A graph of 3
//   kernels is captured inside "graph_capture" and replayed twice inside
//   "graph_replay": its kernels belong to the capture site's ranges.
//   Prints TRUTH lines for the kernels (checked strictly) and nvtx.* lines
//   for the ranges.
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

	nvtxRangePushA("app"); /* before any CUDA call */
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
	a.category = 3;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff00ff00u;
	a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = 42;
	nvtxDomainRangePushEx(dom, &a);
	launch(2);
	nvtxDomainRangePop(dom);
	nvtxMarkA("done");

	{
		cudaStream_t s;
		cudaGraph_t g;
		cudaGraphExec_t ge;

		CK(cudaStreamCreate(&s));
		nvtxRangePushA("graph_capture");
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		for (int i = 0; i < 3; i++)
			nv_kernel<<<1, 32, 0, s>>>(d);
		CK(cudaStreamEndCapture(s, &g));
		nvtxRangePop();
		CK(cudaGraphInstantiate(&ge, g, 0));
		nvtxRangePushA("graph_replay");
		for (int i = 0; i < 2; i++)
			CK(cudaGraphLaunch(ge, s));
		nvtxRangePop();
		CK(cudaStreamSynchronize(s));
		truth_kernel("nv_kernel", 6);
		truth_set("graph_nodes.capture.nodes", 3);
		truth_set("graph_nodes.capture.kernels", 6);
	}
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	nvtxRangePop();

	truth_print();
	printf("TRUTH nvtx.outer.kernels 10\nTRUTH nvtx.inner.kernels 6\n"
	       "TRUTH nvtx.xthread.kernels 5\nTRUTH nvtx.dom_range.kernels 2\n"
	       "TRUTH nvtx.outer.count 1\nTRUTH nvtx.xthread.count 1\n"
	       "TRUTH nvtx.app.kernels 23\nTRUTH nvtx.app.count 1\n"
	       "TRUTH nvtx.graph_capture.kernels 6\nTRUTH nvtx.graph_replay.kernels 0\n"
	       "TRUTH nvtxattr.dom_range.category 3\nTRUTH nvtxattr.dom_range.payload 42\n"
	       "TRUTH nvtxattr.dom_range.color %d\n", 0x00ff00);
	return 0;
}
