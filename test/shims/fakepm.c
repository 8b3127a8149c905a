/*
 * A stand-in for CUDA and CUPTI's PM sampling, for unit tests of the GPU
 * sampler (cupti/gpusample.c, test/unit/test_gpusample.c): the profiler
 * host and PM sampling entry points the sampler looks up in libcupti, and
 * the few driver calls it makes (cuDeviceGetCount, cuDeviceGet,
 * cuDeviceGetPCIBusId) under the soname libcuda.so.1, so that the
 * sampler's dlopen("libcuda.so.1", RTLD_NOLOAD) finds it once the test
 * has loaded it.  Like the driver, cuInit registers a teardown with
 * atexit: from then on a PM call aborts the process (as a call into the
 * freed state of a torn-down driver does), and with strict_teardown the
 * teardown itself fails the process (exit status 86) while a PM session
 * is still enabled.  Every call is counted in fake_pm (fakepm.h), which
 * the test reads with dlsym; DecodeData waits while block_decode is set,
 * then writes into the caller's counter data image.  With
 * runtime_teardown the first Start registers the teardown again (after
 * the sampler's first exit handler, as the CUDA runtime may register its
 * own with the program's first context).  Test code.
 */
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakepm.h"

#define EXPORT __attribute__((visibility("default")))
#define API EXPORT CUptiResult CUPTIAPI
#define MAXDEV 16

EXPORT struct fake_pm fake_pm = { .ndev = 1 };

static char objs[MAXDEV];
static char host;
static uint64_t clock_ns = 1000000000ull;

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Every PM call: counted; after the teardown, the process ends as a real one would. */
static void call(const char *name)
{
	static const char msg[] = "fakepm: a PM call after the driver's teardown: ";

	atomic_fetch_add(&fake_pm.calls, 1);
	if (!atomic_load(&fake_pm.torn_down))
		return;
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, name, strlen(name)) < 0 ||
	    write(2, "\n", 1) < 0)
		(void)0;
	abort();
}

static void teardown(void)
{
	atomic_store(&fake_pm.torn_down, 1);
	if (fake_pm.strict_teardown && atomic_load(&fake_pm.enable) != atomic_load(&fake_pm.disable)) {
		static const char msg[] = "fakepm: the driver tears down under an enabled PM session\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			(void)0;
		_exit(86);
	}
}

EXPORT CUresult CUDAAPI cuInit(unsigned int flags)
{
	(void)flags;
	if (!atomic_exchange(&fake_pm.inited, 1))
		atexit(teardown);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *n)
{
	if (!atomic_load(&fake_pm.inited))
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = fake_pm.ndev;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *d, int i)
{
	*d = i;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char *bus, int len, CUdevice d)
{
	snprintf(bus, (size_t)len, "0000:%02x:00.0", d + 1);
	return CUDA_SUCCESS;
}

API cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
	(void)p;
	call(__func__);
	return CUPTI_SUCCESS;
}

API cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
	call(__func__);
	p->pChipName = "FAKE";
	return CUPTI_SUCCESS;
}

API cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
	call(__func__);
	p->pHostObject = (CUpti_Profiler_Host_Object *)&host;
	return CUPTI_SUCCESS;
}

API cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
	(void)p;
	call(__func__);
	return CUPTI_SUCCESS;
}

API cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
	(void)p;
	call(__func__);
	return CUPTI_SUCCESS;
}

API cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
	call(__func__);
	p->configImageSize = 64;
	return CUPTI_SUCCESS;
}

API cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
	call(__func__);
	memset(p->pConfigImage, 7, p->configImageSize);
	return CUPTI_SUCCESS;
}

API cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
	call(__func__);
	p->numOfPasses = 1;
	return CUPTI_SUCCESS;
}

API cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
	call(__func__);
	atomic_fetch_add(&fake_pm.evaluate, 1);
	for (size_t i = 0; i < p->numMetrics; i++)
		p->pMetricValues[i] = (double)(i + 1);
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
	call(__func__);
	if (p->pCounterAvailabilityImage)
		memset(p->pCounterAvailabilityImage, 1, p->counterAvailabilityImageSize);
	else
		p->counterAvailabilityImageSize = 64;
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
	call(__func__);
	atomic_fetch_add(&fake_pm.enable, 1);
	p->pPmSamplingObject = (CUpti_PmSampling_Object *)&objs[p->deviceIndex % MAXDEV];
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
	(void)p;
	call(__func__);
	atomic_fetch_add(&fake_pm.disable, 1);
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
	call(__func__);
	p->counterDataSize = 4096;
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
	call(__func__);
	memset(p->pCounterData, 0, p->counterDataSize);
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
	(void)p;
	call(__func__);
	atomic_fetch_add(&fake_pm.setconfig, 1);
	if (fake_pm.setconfig_ms)
		nap_ms(fake_pm.setconfig_ms);
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
	(void)p;
	call(__func__);
	if (atomic_fetch_add(&fake_pm.start, 1) == 0 && fake_pm.runtime_teardown)
		atexit(teardown);
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
	(void)p;
	call(__func__);
	atomic_fetch_add(&fake_pm.stop, 1);
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
	call(__func__);
	atomic_fetch_add(&fake_pm.decode, 1);
	atomic_store(&fake_pm.in_decode, 1);
	while (atomic_load(&fake_pm.block_decode))
		nap_ms(1);
	/* The decoder writes into the caller's image: it must still be there. */
	memset(p->pCounterDataImage, 3, p->counterDataImageSize);
	atomic_store(&fake_pm.in_decode, 0);
	p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
	p->overflow = 0;
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
	call(__func__);
	p->numCompletedSamples = 3;
	return CUPTI_SUCCESS;
}

API cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
	struct timespec ts;
	uint64_t now;

	call(__func__);
	/* On CLOCK_REALTIME (the trace clock without CUPTI): samples of 100 us up to now. */
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (clock_ns + 300000 < now)
		clock_ns = now - 300000;
	p->startTimestamp = clock_ns;
	p->endTimestamp = clock_ns + 100000;
	clock_ns += 100000;
	return CUPTI_SUCCESS;
}
