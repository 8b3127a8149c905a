/*
 * A libcupti in front of the real one, for the GPU tests of what the GPU
 * machines cannot produce (test/gpu/metrics.py loads it as
 * GPUPROF_CUPTI_PATH).  It links the real libcupti, so a lookup in its
 * handle finds everything else there; it defines only:
 *
 *   CUPTIDENY=privileges   cuptiRangeProfilerEnable fails with
 *                          CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as where
 *                          the driver restricts the counters to admins;
 *   CUPTIDENY=unsupported  cuptiProfilerDeviceSupported reports the
 *                          device's architecture unsupported.
 *
 * Test code; runs only inside programs the GPU tests start.
 */
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The real entry point, from the libcupti this library links. */
static void *real_sym(const char *name)
{
	void *h = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);

	return h ? dlsym(h, name) : NULL;
}

static int denied(const char *what)
{
	const char *v = getenv("CUPTIDENY");

	return v && !strcmp(v, what);
}

EXPORT CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p)
{
	CUptiResult (*real)(CUpti_RangeProfiler_Enable_Params *) =
		(CUptiResult(*)(CUpti_RangeProfiler_Enable_Params *))real_sym("cuptiRangeProfilerEnable");

	if (denied("privileges"))
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	return real ? real(p) : CUPTI_ERROR_NOT_INITIALIZED;
}

EXPORT CUptiResult cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *p)
{
	CUptiResult (*real)(CUpti_Profiler_DeviceSupported_Params *) =
		(CUptiResult(*)(CUpti_Profiler_DeviceSupported_Params *))real_sym("cuptiProfilerDeviceSupported");
	CUptiResult r = real ? real(p) : CUPTI_ERROR_NOT_INITIALIZED;

	if (r == CUPTI_SUCCESS && denied("unsupported")) {
		p->isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
		p->architecture = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
	}
	return r;
}
