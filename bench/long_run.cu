// Long launch run: does the tracer's memory stay flat and does it keep up?
//
//   long_run [N]        N empty launches (default 5000000) in batches of
//                       100000, synchronizing after each batch
//
// Prints "BENCH us_per_launch X" (whole run, syncs included), this process's
// peak RSS (VmHWM) after 200k launches and at the end as
// "BENCH rss_kib_200k N" / "BENCH rss_kib_end N", and every million as
// "BENCH rss_kib_<K>k N".
#include "common.cuh"

#define BATCH 100000L
#define WARMUP 1000

__global__ void empty_kernel(void) {}

int main(int argc, char **argv)
{
	long n = argc > 1 ? parse_count(argv[1]) : 5000000L;
	long done = 0;
	double t0, t1;

	CK(cudaFree(0));
	for (int i = 0; i < WARMUP; i++)
		empty_kernel<<<1, 32>>>();
	CK(cudaDeviceSynchronize());
	t0 = now_s();
	while (done < n) {
		long b = n - done < BATCH ? n - done : BATCH;

		for (long i = 0; i < b; i++)
			empty_kernel<<<1, 32>>>();
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		done += b;
		if (done == 2 * BATCH)
			printf("BENCH rss_kib_200k %ld\n", vm_hwm_kib());
		if (done % 1000000L == 0)
			printf("BENCH rss_kib_%ldk %ld\n", done / 1000, vm_hwm_kib());
		fflush(stdout);
	}
	t1 = now_s();
	printf("BENCH us_per_launch %.4f\n", (t1 - t0) * 1e6 / (double)n);
	printf("BENCH loop_s %.4f\n", t1 - t0);
	printf("BENCH launched %ld\n", n + WARMUP);
	printf("BENCH rss_kib_end %ld\n", vm_hwm_kib());
	fflush(stdout);
	return 0;
}
