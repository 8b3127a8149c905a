/*
 * Kernels of known duration, each bracketed by a pair of CUDA events on the
 * same stream, so the traced kernel durations can be compared with an
 * independent clock.
 *
 *   spin_ns       one thread spins on %globaltimer for SPIN_NS ns
 *   stream_copy   memory-bound copy of COPY_N floats
 *
 * Event pairs bracket each kernel, so the event time of a launch is at least
 * its kernel time (plus launch gaps and event granularity, ~0.5 us).
 *
 * Truth: kernel.count.*, kernel.total, memset.*, and
 *   event_ms.<kernel>       sum of the event times around that kernel (ms)
 *   event_max_ms.<kernel>   the longest of those event times (ms)
 *   kernel.min_ns.spin_ns   lower bound for every spin_ns duration: SPIN_NS
 *                           less 2 us of %globaltimer granularity
 */
#include <cuda_runtime.h>

#include "common.h"

#define SPIN_NS 200000ULL     /* 200 us */
#define SPINS 40
#define COPY_N (32 << 20)     /* 128 MiB per buffer */
#define COPIES 20

extern "C" __global__ void spin_ns(unsigned long long ns, int *out)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
	if (threadIdx.x == 0)
		*out += 1;
}

extern "C" __global__ void stream_copy(float *dst, const float *src, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		dst[i] = src[i];
}

struct timed {
	const char *name;
	double total_ms, max_ms;
};

/* Times one launch (already enqueued by the caller between e0 and e1). */
static void account(struct timed *t, cudaEvent_t e0, cudaEvent_t e1)
{
	float ms;

	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	t->total_ms += ms;
	if (ms > t->max_ms)
		t->max_ms = ms;
}

int main(void)
{
	struct timed spin = { "spin_ns", 0, 0 }, copy = { "stream_copy", 0, 0 };
	cudaEvent_t e0[SPINS + COPIES], e1[SPINS + COPIES];
	cudaFuncAttributes fa;
	cudaStream_t s;
	float *a, *b;
	int *counter, launched = 0, h_counter;
	int sms;

	CK(cudaSetDevice(0));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&a, COPY_N * sizeof(float)));
	CK(cudaMalloc(&b, COPY_N * sizeof(float)));
	CK(cudaMalloc(&counter, sizeof(int)));
	for (int i = 0; i < SPINS + COPIES; i++) {
		CK(cudaEventCreate(&e0[i]));
		CK(cudaEventCreate(&e1[i]));
	}
	/* Load both kernels now: with lazy module loading the first launch
	 * would load them between its two events and inflate that event time. */
	CK(cudaFuncGetAttributes(&fa, spin_ns));
	CK(cudaFuncGetAttributes(&fa, stream_copy));

	set_async(a, 0, COPY_N * sizeof(float), s);
	set_async(counter, 0, sizeof(int), s);
	CK(cudaStreamSynchronize(s));

	/* Enqueue everything, then read the events: the host runs ahead, so
	 * each event pair brackets one kernel with no host gap inside. */
	for (int i = 0; i < SPINS + COPIES; i++) {
		CK(cudaEventRecord(e0[i], s));
		if (i % 3 == 2 && launched < COPIES) {
			LAUNCH(stream_copy, 4 * sms, 512, 0, s, b, a, COPY_N);
			launched++;
		} else {
			LAUNCH(spin_ns, 1, 32, 0, s, SPIN_NS, counter);
		}
		CK(cudaEventRecord(e1[i], s));
	}
	launched = 0;
	for (int i = 0; i < SPINS + COPIES; i++) {
		if (i % 3 == 2 && launched < COPIES) {
			account(&copy, e0[i], e1[i]);
			launched++;
		} else {
			account(&spin, e0[i], e1[i]);
		}
	}
	copy_sync(&h_counter, counter, sizeof(int), cudaMemcpyDeviceToHost);
	REQUIRE(h_counter == SPINS, "spin counter %d, want %d", h_counter,
		SPINS);

	for (int i = 0; i < SPINS + COPIES; i++) {
		CK(cudaEventDestroy(e0[i]));
		CK(cudaEventDestroy(e1[i]));
	}
	CK(cudaStreamDestroy(s));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(counter));

	truth_set("kernel.min_ns.spin_ns", (long long)SPIN_NS - 2000);
	truth_print();
	printf("TRUTH event_ms.%s %.6f\n", spin.name, spin.total_ms);
	printf("TRUTH event_max_ms.%s %.6f\n", spin.name, spin.max_ms);
	printf("TRUTH event_ms.%s %.6f\n", copy.name, copy.total_ms);
	printf("TRUTH event_max_ms.%s %.6f\n", copy.name, copy.max_ms);
	return 0;
}
