// Capture ranges: known launches before, inside and after ranges opened by
// cudaProfilerStart/Stop or by an NVTX range named "capture" (with a nested
// range inside it), and a second range later.
//   capture profiler|nvtx stop|repeat|all
// prints as TRUTH only what the recorder must keep: the launches inside the
// first range (stop), inside both ranges (repeat), or everything (all):
// their kernels and their API calls (api.count.cudaLaunchKernel), which a
// range records as a run without one does.
// NVCCFLAGS: -cudart shared
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "common.h"

extern "C" __global__ void k_outside(int *p) { p[threadIdx.x] += 1; }
extern "C" __global__ void k_inside(int *p) { p[threadIdx.x] += 2; }
extern "C" __global__ void k_nested(int *p) { p[threadIdx.x] += 3; }

static int counting;
static int all_mode;

static void launch(void (*k)(int *), const char *name, int n, int *d)
{
	for (int i = 0; i < n; i++) {
		k<<<1, 32>>>(d);
		CK(cudaGetLastError());
		if (counting || all_mode) {
			truth_kernel(name, 1);
			truth_add("api.count.cudaLaunchKernel", 1);
		}
	}
}

static void open_range(int nvtx)
{
	if (nvtx)
		nvtxRangePushA("capture");
	else
		CK(cudaProfilerStart());
}

static void close_range(int nvtx)
{
	if (nvtx)
		nvtxRangePop();
	else
		CK(cudaProfilerStop());
}

int main(int argc, char **argv)
{
	int nvtx, repeat, *d;

	if (argc < 3) {
		fprintf(stderr, "usage: capture profiler|nvtx stop|repeat|all\n");
		return 2;
	}
	nvtx = !strcmp(argv[1], "nvtx");
	repeat = !strcmp(argv[2], "repeat");
	all_mode = !strcmp(argv[2], "all");
	CK(cudaMalloc(&d, 32 * sizeof(int)));
	launch(k_outside, "k_outside", 5, d);
	CK(cudaDeviceSynchronize());

	open_range(nvtx);
	counting = 1;
	launch(k_inside, "k_inside", 7, d);
	nvtxRangePushA("inner");
	launch(k_nested, "k_nested", 3, d);
	nvtxRangePop();
	counting = 0;
	close_range(nvtx);

	launch(k_outside, "k_outside", 4, d);
	CK(cudaDeviceSynchronize());

	open_range(nvtx);
	counting = repeat;
	launch(k_inside, "k_inside", 2, d);
	counting = 0;
	close_range(nvtx);
	launch(k_outside, "k_outside", 1, d);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	truth_print();
	return 0;
}
