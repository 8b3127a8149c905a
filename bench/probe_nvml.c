/*
 * The NVML getters' cost, from a process of its own: calls one getter (or
 * the default set of --gpu-telemetry) on device 0 every INTERVAL_MS for
 * SECONDS, and prints how many calls it made and their median, p99 and
 * largest time.  Run beside bench/launch_loop without a tool to see whether
 * NVML slows the launches (bench/RESULTS.md, "--gpu-telemetry on the launch
 * loop, probed").  NVML is loaded with dlopen, as the recorder loads it.
 *
 *   probe_nvml all|power|powerusage|clocks|temp|mem|reasons|util INTERVAL_MS SECONDS
 *
 * Built with -DPROBE_NVML_PRELOAD as bench/libprobe_nvml.so: the same
 * getters from a thread inside the program it is preloaded into
 * (PROBE_NVML=GETTER, PROBE_NVML_MS), to tell NVML's cost to another
 * thread of the launching process from its cost across processes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
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

static struct {
	int (*init)(void), (*by_index)(unsigned int, nvml_dev *);
	int (*fields)(nvml_dev, int, struct nvml_field *), (*power)(nvml_dev, unsigned int *);
	int (*clock)(nvml_dev, int, unsigned int *), (*temp)(nvml_dev, int, unsigned int *);
	int (*mem)(nvml_dev, unsigned long long *), (*reasons)(nvml_dev, unsigned long long *);
	int (*util)(nvml_dev, unsigned int *);
	nvml_dev d;
} nv;

static double took[MAX_CALLS];
static size_t ncalls;

/* NVML loaded and device 0 found: 0, or 1 with a line on stderr. */
static int probe_open(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "probe_nvml: cannot load libnvidia-ml.so.1: %s\n", dlerror());
		return 1;
	}
	if (!SYM(nv.init, "nvmlInit_v2") || !SYM(nv.by_index, "nvmlDeviceGetHandleByIndex_v2") ||
	    !SYM(nv.fields, "nvmlDeviceGetFieldValues") ||
	    !SYM(nv.power, "nvmlDeviceGetPowerUsage") || !SYM(nv.clock, "nvmlDeviceGetClockInfo") ||
	    !SYM(nv.temp, "nvmlDeviceGetTemperature") || !SYM(nv.mem, "nvmlDeviceGetMemoryInfo") ||
	    !SYM(nv.reasons, "nvmlDeviceGetCurrentClocksEventReasons") ||
	    !SYM(nv.util, "nvmlDeviceGetUtilizationRates")) {
		fprintf(stderr, "probe_nvml: this NVML lacks a getter\n");
		return 1;
	}
	if (nv.init() || nv.by_index(0, &nv.d)) {
		fprintf(stderr, "probe_nvml: NVML has no device 0\n");
		return 1;
	}
	return 0;
}

/* Getter g (or every default one: all) every `every` seconds until `end`. */
static void probe_loop(const char *g, double every, double end)
{
	int all = !strcmp(g, "all");

	while (now() < end && ncalls < MAX_CALLS) {
		double t0 = now(), left;
		unsigned long long m[3], r;
		unsigned int u, uu[2];
		struct nvml_field f;

		if (all || !strcmp(g, "power")) {
			memset(&f, 0, sizeof(f));
			f.field_id = NVML_FI_DEV_POWER_INSTANT;
			nv.fields(nv.d, 1, &f);
		}
		if (!strcmp(g, "powerusage"))
			nv.power(nv.d, &u);
		if (all || !strcmp(g, "clocks")) {
			nv.clock(nv.d, 1, &u);
			nv.clock(nv.d, 2, &u);
		}
		if (all || !strcmp(g, "temp"))
			nv.temp(nv.d, 0, &u);
		if (all || !strcmp(g, "mem"))
			nv.mem(nv.d, m);
		if (all || !strcmp(g, "reasons"))
			nv.reasons(nv.d, &r);
		if (!strcmp(g, "util"))
			nv.util(nv.d, uu);
		took[ncalls] = (now() - t0) * 1e6;
		__atomic_store_n(&ncalls, ncalls + 1, __ATOMIC_RELEASE);
		left = t0 + every - now();
		if (left > 0) {
			struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };

			nanosleep(&ts, NULL);
		}
	}
}

/* The calls made so far (a copy: preloaded, the thread may still be calling). */
static void probe_say(FILE *out, const char *g, const char *ms)
{
	static double t[MAX_CALLS];
	size_t n = __atomic_load_n(&ncalls, __ATOMIC_ACQUIRE);

	memcpy(t, took, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_double);
	fprintf(out, "NVML %s every %s ms: %zu calls, median %.1f us, p99 %.1f us, max %.1f us\n",
		g, ms, n, n ? t[n / 2] : 0.0, n ? t[n * 99 / 100] : 0.0, n ? t[n - 1] : 0.0);
}

#ifdef PROBE_NVML_PRELOAD
/*
 * Preloaded (libprobe_nvml.so): the same getters from a thread of the
 * traced program itself, PROBE_NVML=GETTER every PROBE_NVML_MS (default
 * 100), for the life of the process; the summary goes to stderr at exit.
 */
static const char *pre_g, *pre_ms;

static void *pre_main(void *arg)
{
	(void)arg;
	probe_loop(pre_g, atof(pre_ms) / 1000.0, 1e300);
	return NULL;
}

__attribute__((constructor)) static void pre_start(void)
{
	pthread_t t;

	pre_g = getenv("PROBE_NVML");
	pre_ms = getenv("PROBE_NVML_MS");
	if (!pre_ms || !*pre_ms)
		pre_ms = "100";
	if (!pre_g || !*pre_g || !strcmp(pre_g, "none") || probe_open())
		return;
	if (!pthread_create(&t, NULL, pre_main, NULL))
		pthread_detach(t);
}

__attribute__((destructor)) static void pre_end(void)
{
	if (pre_g && *pre_g && strcmp(pre_g, "none"))
		probe_say(stderr, pre_g, pre_ms);
}
#else
int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s all|power|powerusage|clocks|temp|mem|reasons|util "
				"INTERVAL_MS SECONDS\n",
			argv[0]);
		return 2;
	}
	if (probe_open())
		return 1;
	probe_loop(argv[1], atof(argv[2]) / 1000.0, now() + atof(argv[3]));
	probe_say(stdout, argv[1], argv[2]);
	return 0;
}
#endif
