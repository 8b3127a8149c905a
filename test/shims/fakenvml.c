/*
 * A stand-in NVML (soname libnvidia-ml.so.1) for unit tests of the GPU
 * sampler's telemetry (cupti/telemetry.c through cupti/gpusample.c,
 * test/unit/test_gpusample.c): the entry points telemetry.c looks up,
 * each counted in fake_nvml (fakenvml.h), with the values of one device;
 * nvmlDeviceGetTemperature takes temp_sleep_us.  Once the test has loaded
 * it by path, telemetry.c's dlopen("libnvidia-ml.so.1") finds it.  The
 * structs are NVML's ABI as telemetry.c declares it.  Test code.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "fakenvml.h"

#define EXPORT __attribute__((visibility("default")))
#define API EXPORT int

EXPORT struct fake_nvml fake_nvml;

static char device, samples[8];

struct memory { unsigned long long total, free, used; };
struct util { unsigned int gpu, memory; };
struct field {
	unsigned int field_id, scope_id;
	long long timestamp, latency_us;
	int value_type, ret;
	union { double d; unsigned int ui; unsigned long long ull; } value;
};
struct gpm_support { unsigned int version, supported; };
struct gpm_metric { unsigned int id; int ret; double value; char *names[3]; };
struct gpm_get { unsigned int version, num; void *s1, *s2; struct gpm_metric m[]; };

/* NVML's entry points, as telemetry.c calls them. */
API nvmlInit_v2(void);
API nvmlShutdown(void);
API nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev);
API nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw);
API nvmlDeviceGetFieldValues(void *dev, int n, struct field *f);
API nvmlDeviceGetClockInfo(void *dev, int which, unsigned int *mhz);
API nvmlDeviceGetTemperature(void *dev, int which, unsigned int *c);
API nvmlDeviceGetMemoryInfo(void *dev, struct memory *m);
API nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r);
API nvmlDeviceGetUtilizationRates(void *dev, struct util *u);
API nvmlGpmQueryDeviceSupport(void *dev, struct gpm_support *s);
API nvmlGpmSampleAlloc(void **s);
API nvmlGpmSampleFree(void *s);
API nvmlGpmSampleGet(void *dev, void *s);
API nvmlGpmMetricsGet(struct gpm_get *g);

API nvmlInit_v2(void) { atomic_fetch_add(&fake_nvml.init, 1); return 0; }
API nvmlShutdown(void) { atomic_fetch_add(&fake_nvml.shutdown, 1); return 0; }

API nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
	(void)bus;
	atomic_fetch_add(&fake_nvml.handle, 1);
	*dev = &device;
	return 0;
}

API nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw)
{
	(void)dev;
	atomic_fetch_add(&fake_nvml.power, 1);
	*mw = 250000;
	return 0;
}

API nvmlDeviceGetFieldValues(void *dev, int n, struct field *f)
{
	(void)dev;
	atomic_fetch_add(&fake_nvml.fields, 1);
	for (int i = 0; i < n; i++) {
		f[i].ret = 0;
		f[i].value_type = 1;
		f[i].value.ui = 300000;
	}
	return 0;
}

API nvmlDeviceGetClockInfo(void *dev, int which, unsigned int *mhz)
{
	(void)dev;
	atomic_fetch_add(&fake_nvml.clock, 1);
	*mhz = which == 1 ? 1980 : 2619;
	return 0;
}

API nvmlDeviceGetTemperature(void *dev, int which, unsigned int *c)
{
	(void)dev, (void)which;
	atomic_fetch_add(&fake_nvml.temp, 1);
	if (fake_nvml.temp_sleep_us) {
		struct timespec ts = { 0, fake_nvml.temp_sleep_us * 1000L };

		nanosleep(&ts, NULL);
	}
	*c = 55;
	return 0;
}

API nvmlDeviceGetMemoryInfo(void *dev, struct memory *m)
{
	(void)dev;
	atomic_fetch_add(&fake_nvml.mem, 1);
	m->total = 80ull << 30;
	m->used = 1ull << 30;
	m->free = m->total - m->used;
	return 0;
}

API nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r)
{
	(void)dev;
	atomic_fetch_add(&fake_nvml.reasons, 1);
	*r = 0;
	return 0;
}

API nvmlDeviceGetUtilizationRates(void *dev, struct util *u)
{
	(void)dev;
	atomic_fetch_add(&fake_nvml.util, 1);
	u->gpu = 50;
	u->memory = 10;
	return 0;
}

API nvmlGpmQueryDeviceSupport(void *dev, struct gpm_support *s)
{
	(void)dev;
	atomic_fetch_add(&fake_nvml.gpm_support, 1);
	s->supported = 1;
	return 0;
}

API nvmlGpmSampleAlloc(void **s)
{
	int i = atomic_fetch_add(&fake_nvml.gpm_alloc, 1);

	*s = &samples[i % 8];
	return 0;
}

API nvmlGpmSampleFree(void *s)
{
	(void)s;
	atomic_fetch_add(&fake_nvml.gpm_free, 1);
	return 0;
}

API nvmlGpmSampleGet(void *dev, void *s)
{
	(void)dev, (void)s;
	atomic_fetch_add(&fake_nvml.gpm_get, 1);
	return 0;
}

API nvmlGpmMetricsGet(struct gpm_get *g)
{
	atomic_fetch_add(&fake_nvml.gpm_metrics, 1);
	for (unsigned i = 0; i < g->num; i++) {
		g->m[i].ret = 0;
		g->m[i].value = 10.0 * (i + 1);
	}
	return 0;
}
