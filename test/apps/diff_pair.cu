/*
 * Two kernels of known duration, for gpuprof diff: spin_a and spin_b each
 * spin on %globaltimer, ROUNDS times.  With the argument "slow", spin_b
 * spins twice as long, so a diff of the two runs' traces names spin_b
 * with a ratio of 2.
 *
 * Truth: kernel.count.spin_a, kernel.count.spin_b, diff.spin_b_ns.
 */
#include <cuda_runtime.h>
#include <string.h>

#include "common.h"

#define SPIN_NS 100000ULL     /* 100 us */
#define ROUNDS 20

extern "C" __global__ void spin_a(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

extern "C" __global__ void spin_b(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

int main(int argc, char **argv)
{
	int slow = argc > 1 && !strcmp(argv[1], "slow");
	unsigned long long b_ns = slow ? 2 * SPIN_NS : SPIN_NS;

	CK(cudaSetDevice(0));
	for (int i = 0; i < ROUNDS; i++) {
		spin_a<<<1, 1>>>(SPIN_NS);
		spin_b<<<1, 1>>>(b_ns);
	}
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	truth_kernel("spin_a", ROUNDS);
	truth_kernel("spin_b", ROUNDS);
	truth_set("diff.spin_b_ns", (long long)b_ns);
	truth_print();
	return 0;
}
