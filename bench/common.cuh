// Helpers shared by the benchmark workloads.
#ifndef GPUPROF_BENCH_COMMON_CUH
#define GPUPROF_BENCH_COMMON_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                     \
	do {                                                                         \
		cudaError_t ck_err_ = (call);                                        \
		if (ck_err_ != cudaSuccess) {                                        \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
				cudaGetErrorString(ck_err_));                        \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// CLOCK_REALTIME in nanoseconds: the trace clock, so that the benchmark can
// place the timed loop among a trace's records (samples, windows).
static inline long long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// Sleeps BENCH_SETTLE_S seconds (fractional; unset or 0: not at all), so
// that what a profiler sets up on threads of its own after the context
// exists is done before a timed loop starts.
static inline void settle(void)
{
	const char *v = getenv("BENCH_SETTLE_S");
	double s = v ? strtod(v, NULL) : 0.0;
	struct timespec ts;

	if (!(s > 0.0) || s > 60.0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0)
		;
}

// Parses a positive count; exits on garbage.
static inline long parse_count(const char *s)
{
	char *end = NULL;
	long v = strtol(s, &end, 10);

	if (!end || *end || v <= 0) {
		fprintf(stderr, "bad count '%s'\n", s);
		exit(2);
	}
	return v;
}

// Peak resident set size of this process (VmHWM) in KiB, -1 if unknown.
static inline long vm_hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0) {
			v = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

#endif
