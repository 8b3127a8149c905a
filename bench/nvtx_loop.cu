// NVTX call cost: N push/pop pairs (and N/10 start/end ranges) on one
// thread after CUDA is up, with no GPU work in between.
//
//   nvtx_loop [N]      (default 1000000)
//
// Prints "BENCH ns_per_pair X": wall time of the push/pop loop divided by N.
#include <nvtx3/nvToolsExt.h>

#include "common.cuh"

int main(int argc, char **argv)
{
	long n = argc > 1 ? parse_count(argv[1]) : 1000000;
	double t0, t1;

	CK(cudaFree(0));
	for (long i = 0; i < 1000; i++) {
		nvtxRangePushA("warm");
		nvtxRangePop();
	}
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("step");
		nvtxRangePop();
	}
	t1 = now_s();
	for (long i = 0; i < n / 10; i++)
		nvtxRangeEnd(nvtxRangeStartA("io"));
	printf("BENCH ns_per_pair %.1f\n", (t1 - t0) * 1e9 / (double)n);
	return 0;
}
