/*
 * The NVML getters' cost, from a process of its own: calls one getter (or
 * the default set of --gpu-telemetry) on device 0 every INTERVAL_MS for
 * SECONDS, and prints how many calls it made and their median, p99 and
 * largest time.  Run beside bench/launch_loop without a tool to see whether
 * NVML slows the launches (bench/RESULTS.md, "--gpu-telemetry on the launch
 * loop, probed").  NVML is loaded with dlopen, as the recorder loads it.
 *
 *   probe_nvml all|power|powerusage|clocks|temp|mem|reasons|util INTERVAL_MS SECONDS
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *nvml_dev;

/* nvmlFieldValue_t */
struct nvml_field {
	unsigned int field_id, scope_id;
	long long timestamp, latency_us;
	int value_type, ret;
	union {
		double d;
		unsigned long long ull;
	} value;
};

#define NVML_FI_DEV_POWER_INSTANT 186
#define MAX_CALLS 1000000

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

#define SYM(f, name) (*(void **)&(f) = dlsym(h, name))

int main(int argc, char **argv)
{
	static double took[MAX_CALLS];
	int (*init)(void), (*by_index)(unsigned int, nvml_dev *);
	int (*fields)(nvml_dev, int, struct nvml_field *), (*power)(nvml_dev, unsigned int *);
	int (*clock)(nvml_dev, int, unsigned int *), (*temp)(nvml_dev, int, unsigned int *);
	int (*mem)(nvml_dev, unsigned long long *), (*reasons)(nvml_dev, unsigned long long *);
	int (*util)(nvml_dev, unsigned int *);
	const char *g;
	double every, end;
	size_t n = 0;
	nvml_dev d;
	void *h;
	int all;

	if (argc != 4) {
		fprintf(stderr, "usage: %s all|power|powerusage|clocks|temp|mem|reasons|util "
				"INTERVAL_MS SECONDS\n",
			argv[0]);
		return 2;
	}
	g = argv[1];
	all = !strcmp(g, "all");
	every = atof(argv[2]) / 1000.0;
	if (!(h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "probe_nvml: cannot load libnvidia-ml.so.1: %s\n", dlerror());
		return 1;
	}
	if (!SYM(init, "nvmlInit_v2") || !SYM(by_index, "nvmlDeviceGetHandleByIndex_v2") ||
	    !SYM(fields, "nvmlDeviceGetFieldValues") || !SYM(power, "nvmlDeviceGetPowerUsage") ||
	    !SYM(clock, "nvmlDeviceGetClockInfo") || !SYM(temp, "nvmlDeviceGetTemperature") ||
	    !SYM(mem, "nvmlDeviceGetMemoryInfo") ||
	    !SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons") ||
	    !SYM(util, "nvmlDeviceGetUtilizationRates")) {
		fprintf(stderr, "probe_nvml: this NVML lacks a getter\n");
		return 1;
	}
	if (init() || by_index(0, &d)) {
		fprintf(stderr, "probe_nvml: NVML has no device 0\n");
		return 1;
	}
	end = now() + atof(argv[3]);
	while (now() < end && n < MAX_CALLS) {
		double t0 = now(), left;
		unsigned long long m[3], r;
		unsigned int u, uu[2];
		struct nvml_field f;

		if (all || !strcmp(g, "power")) {
			memset(&f, 0, sizeof(f));
			f.field_id = NVML_FI_DEV_POWER_INSTANT;
			fields(d, 1, &f);
		}
		if (!strcmp(g, "powerusage"))
			power(d, &u);
		if (all || !strcmp(g, "clocks")) {
			clock(d, 1, &u);
			clock(d, 2, &u);
		}
		if (all || !strcmp(g, "temp"))
			temp(d, 0, &u);
		if (all || !strcmp(g, "mem"))
			mem(d, m);
		if (all || !strcmp(g, "reasons"))
			reasons(d, &r);
		if (!strcmp(g, "util"))
			util(d, uu);
		took[n++] = (now() - t0) * 1e6;
		left = t0 + every - now();
		if (left > 0) {
			struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };

			nanosleep(&ts, NULL);
		}
	}
	qsort(took, n, sizeof(*took), cmp_double);
	printf("NVML %s every %s ms: %zu calls, median %.1f us, p99 %.1f us, max %.1f us\n", g,
	       argv[2], n, n ? took[n / 2] : 0.0, n ? took[n * 99 / 100] : 0.0,
	       n ? took[n - 1] : 0.0);
	return 0;
}
