// NVCCFLAGS: -cudart shared
/*
 * A known kernel mix for fleet mode (--sample): for SECONDS seconds, on
 * one thread and the legacy stream, every 2 ms fleet_a, every 10 ms
 * fleet_b, every 20 ms a 4 KiB memset, every 50 ms a 64 KiB host-to-device
 * copy, then a stream synchronize.  Each call's CLOCK_REALTIME (the trace
 * clock) is read just before and just after it, and every call is
 * written to LOG at the end, one line each:
 *
 *   KIND BEFORE_NS AFTER_NS      KIND: a fleet_a, b fleet_b, c copy,
 *                                s memset, y cudaStreamSynchronize
 *
 * so that a test can count, for any interval, the calls that began
 * inside it (the rule of windows: the call's start lies between BEFORE
 * and AFTER) and those in progress at its edges.
 *
 *   fleet_mix SECONDS LOG
 *
 * Truth: kernel.count.fleet_a, kernel.count.fleet_b, memcpy.count.HtoD,
 * memset.count.
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

struct call {
	char kind;
	long long before, after;
};

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	const char *log = argc > 2 ? argv[2] : "/dev/null";
	std::vector<call> ev;
	float *d, *h;
	long long start = now_ns(CLOCK_MONOTONIC), next = start;
	long long i = 0;

	CK(cudaMalloc(&d, 65536));
	CK(cudaMallocHost(&h, 65536));
	ev.reserve((size_t)(seconds * 1200) + 16);
	while (now_ns(CLOCK_MONOTONIC) - start < (long long)(seconds * 1e9)) {
		call c;

		c.kind = 'a';
		c.before = now_ns(CLOCK_REALTIME);
		fleet_a<<<1, 32>>>(d);
		c.after = now_ns(CLOCK_REALTIME);
		ev.push_back(c);
		if (i % 5 == 0) {
			c.kind = 'b';
			c.before = now_ns(CLOCK_REALTIME);
			fleet_b<<<1, 32>>>(d);
			c.after = now_ns(CLOCK_REALTIME);
			ev.push_back(c);
		}
		if (i % 10 == 0) {
			c.kind = 's';
			c.before = now_ns(CLOCK_REALTIME);
			CK(cudaMemsetAsync(d, 0, 4096, 0));
			c.after = now_ns(CLOCK_REALTIME);
			ev.push_back(c);
		}
		if (i % 25 == 0) {
			c.kind = 'c';
			c.before = now_ns(CLOCK_REALTIME);
			CK(cudaMemcpyAsync(d, h, 65536, cudaMemcpyHostToDevice, 0));
			c.after = now_ns(CLOCK_REALTIME);
			ev.push_back(c);
		}
		c.kind = 'y';
		c.before = now_ns(CLOCK_REALTIME);
		CK(cudaStreamSynchronize(0));
		c.after = now_ns(CLOCK_REALTIME);
		ev.push_back(c);
		i++;
		next += 2000000;
		while (now_ns(CLOCK_MONOTONIC) < next)
			;
	}
	CK(cudaDeviceSynchronize());
	FILE *f = fopen(log, "w");
	long long na = 0, nb = 0, nc = 0, ns = 0;
	for (size_t k = 0; k < ev.size(); k++) {
		if (f)
			fprintf(f, "%c %lld %lld\n", ev[k].kind, ev[k].before, ev[k].after);
		na += ev[k].kind == 'a';
		nb += ev[k].kind == 'b';
		nc += ev[k].kind == 'c';
		ns += ev[k].kind == 's';
	}
	if (f)
		fclose(f);
	truth_set("kernel.count.fleet_a", na);
	truth_set("kernel.count.fleet_b", nb);
	truth_set("memcpy.count.HtoD", nc);
	truth_set("memset.count", ns);
	truth_print();
	return 0;
}
