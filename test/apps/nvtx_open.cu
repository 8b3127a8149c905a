// NVTX ranges that enclose a whole run: "train" is pushed before the first
// CUDA call and popped at the end, around 3 "epoch" ranges of 100 "step"
// ranges, each step 3 launches and 5 ms of host time, so that the run spans
// many flush intervals (the test sets GPUPROF_FLUSH_MS=100): the recorder
// announces "train" and each "epoch" open (GP_REC_NVTX_OPEN) at the first
// drain that finds them, long before their own records; "left_open" is
// pushed last and never popped (unterminated at exit).  Prints TRUTH lines
// for the kernels (checked strictly) and nvtx.* lines for the ranges.
// NVCCFLAGS: -cudart shared
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "common.h"

extern "C" __global__ void open_kernel(int *p) { p[threadIdx.x] += 1; }

int main(void)
{
	int *d;

	nvtxRangePushA("train"); /* before any CUDA call */
	CK(cudaMalloc(&d, 32 * sizeof(int)));
	for (int e = 0; e < 3; e++) {
		nvtxRangePushA("epoch");
		for (int s = 0; s < 100; s++) {
			nvtxRangePushA("step");
			for (int k = 0; k < 3; k++)
				LAUNCH(open_kernel, 1, 32, 0, 0, d);
			CK(cudaDeviceSynchronize());
			usleep(5000);
			nvtxRangePop();
		}
		nvtxRangePop();
	}
	CK(cudaDeviceSynchronize());
	nvtxRangePop();
	nvtxRangePushA("left_open");
	LAUNCH(open_kernel, 1, 32, 0, 0, d);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	truth_print();
	printf("TRUTH nvtx.train.count 1\nTRUTH nvtx.train.kernels 900\n"
	       "TRUTH nvtx.epoch.count 3\nTRUTH nvtx.epoch.kernels 900\n"
	       "TRUTH nvtx.step.count 300\nTRUTH nvtx.step.kernels 900\n"
	       "TRUTH nvtx.left_open.count 1\nTRUTH nvtx.left_open.kernels 1\n");
	return 0;
}
