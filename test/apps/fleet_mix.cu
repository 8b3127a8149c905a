// NVCCFLAGS: -cudart shared
/*
 * A known kernel mix for fleet mode (--sample): for SECONDS seconds,
 * fleet_a every 2 ms, fleet_b every 10 ms and a 64 KiB host-to-device
 * copy every 50 ms, each launch's CLOCK_REALTIME time taken just before
 * its call and written to LOG ("a|b|c NS" lines) at the end, for the test
 * to count per window.
 *
 *   fleet_mix SECONDS LOG
 *
 * Truth: kernel.count.fleet_a, kernel.count.fleet_b, memcpy.count.HtoD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vector>

#include "common.h"

__global__ void fleet_a(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void fleet_b(float *x) { x[threadIdx.x] *= 0.5f; }

static long long now_ns(int clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	const char *log = argc > 2 ? argv[2] : "/dev/null";
	std::vector<std::pair<char, long long> > ev;
	float *d, *h;
	long long start = now_ns(CLOCK_MONOTONIC), next = start;
	long long i = 0;

	CK(cudaMalloc(&d, 65536));
	CK(cudaMallocHost(&h, 65536));
	ev.reserve((size_t)(seconds * 700) + 16);
	while (now_ns(CLOCK_MONOTONIC) - start < (long long)(seconds * 1e9)) {
		ev.push_back(std::make_pair('a', now_ns(CLOCK_REALTIME)));
		fleet_a<<<1, 32>>>(d);
		if (i % 5 == 0) {
			ev.push_back(std::make_pair('b', now_ns(CLOCK_REALTIME)));
			fleet_b<<<1, 32>>>(d);
		}
		if (i % 25 == 0) {
			ev.push_back(std::make_pair('c', now_ns(CLOCK_REALTIME)));
			CK(cudaMemcpyAsync(d, h, 65536, cudaMemcpyHostToDevice, 0));
		}
		i++;
		next += 2000000;
		CK(cudaStreamSynchronize(0));
		while (now_ns(CLOCK_MONOTONIC) < next)
			;
	}
	CK(cudaDeviceSynchronize());
	FILE *f = fopen(log, "w");
	long long na = 0, nb = 0, nc = 0;
	for (size_t k = 0; k < ev.size(); k++) {
		if (f)
			fprintf(f, "%c %lld\n", ev[k].first, ev[k].second);
		na += ev[k].first == 'a';
		nb += ev[k].first == 'b';
		nc += ev[k].first == 'c';
	}
	if (f)
		fclose(f);
	truth_set("kernel.count.fleet_a", na);
	truth_set("kernel.count.fleet_b", nb);
	truth_set("memcpy.count.HtoD", nc);
	truth_print();
	return 0;
}
