/*
 * What the two halves of the hardware metrics share, and nothing else
 * includes: metrics.c (attach, the launch callbacks, the producer side)
 * and metrics-config.c (the metric names checked against a chip's list,
 * each chip's configuration and its single-pass groups, the devices'
 * ceilings, the roofline set).  Context: as each function below says;
 * metrics.c's header describes the locks.
 */
#ifndef GP_METRICS_INT_H
#define GP_METRICS_INT_H

#include "../preload/log.h"

#include <cupti.h>

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* One line on stderr: why metrics are off; the trace goes on without them. */
#define MX_OFF(fmt, ...) gp_log("metrics are off: " fmt "; tracing goes on", ##__VA_ARGS__)

#define MAX_METRICS 64
#define MAX_NAME 256
#define MAX_CHIPS 4
#define MAX_CTXS 32
#define MAX_GROUPS 8        /* single-pass groups of the launches mode */

/* Profiled launches take their time from it. */
#define DURATION_METRIC "gpu__time_duration.sum"

/* The profiler's entry points, looked up at attach in the library tracer.c loaded. */
#define PROFILER_FUNCS(X)                               \
	X(cuptiProfilerInitialize)                      \
	X(cuptiDeviceGetChipName)                       \
	X(cuptiProfilerDeviceSupported)                 \
	X(cuptiProfilerHostInitialize)                  \
	X(cuptiProfilerHostDeinitialize)                \
	X(cuptiProfilerHostGetBaseMetrics)              \
	X(cuptiProfilerHostGetSubMetrics)               \
	X(cuptiProfilerHostConfigAddMetrics)            \
	X(cuptiProfilerHostGetConfigImageSize)          \
	X(cuptiProfilerHostGetConfigImage)              \
	X(cuptiProfilerHostGetNumOfPasses)              \
	X(cuptiProfilerHostEvaluateToGpuValues)         \
	X(cuptiRangeProfilerEnable)                     \
	X(cuptiRangeProfilerDisable)                    \
	X(cuptiRangeProfilerSetConfig)                  \
	X(cuptiRangeProfilerStart)                      \
	X(cuptiRangeProfilerStop)                       \
	X(cuptiRangeProfilerDecodeData)                 \
	X(cuptiRangeProfilerGetCounterDataSize)         \
	X(cuptiRangeProfilerCounterDataImageInitialize) \
	X(cuptiRangeProfilerGetCounterDataInfo)         \
	X(cuptiGetDeviceId)                             \
	X(cuptiGetContextId)

struct gp_mx_profiler {
#define GP_MX_PTR(name) __typeof__(&name) name;
	PROFILER_FUNCS(GP_MX_PTR)
#undef GP_MX_PTR
};
extern struct gp_mx_profiler gp_mx_pf;          /* metrics.c, set at attach */

typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*device_attr_fn)(int *, CUdevice_attribute, CUdevice);
extern device_get_fn gp_mx_cu_device_get;       /* metrics.c, set at attach; NULL: none */
extern device_attr_fn gp_mx_cu_device_attr;

/* --metrics-replay=launches; cleared (prof_lock held) when a chip cannot be split in groups. */
extern int gp_mx_spread;

/*
 * The launches mode's single-pass groups: each its own configuration,
 * measured over a session of launches; a kernel's values come from one
 * launch per group.
 */
struct group {
	CUpti_Profiler_Host_Object *host;
	uint8_t *config;
	size_t config_size;
	const char *names[MAX_METRICS];
	uint8_t at[MAX_METRICS];   /* each name's index in the chip's list */
	size_t n;
	int time_at;               /* index of DURATION_METRIC, -1 none */
	int kernel_replay;         /* SASS counters only: replayed per launch (one pass) */
};

/* Per chip: the metric list it supports, its host object and config image. */
struct chip {
	char name[32];
	CUpti_Profiler_Host_Object *host;
	uint8_t *config;
	size_t config_size;
	size_t passes;
	const char *names[MAX_METRICS];
	size_t nnames;
	uint64_t set_hash;         /* of the names, for the metrics cache */
	struct group groups[MAX_GROUPS];
	int ngroups;               /* launches mode */
	int ok;
};

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* metrics.c, any thread: metrics go off for good, why (GP_METRICS_*) noted once. */
void gp_mx_go_off(uint32_t why);

/* metrics.c: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES from any profiler call: logged, metrics off. */
void gp_mx_no_permission(void);

/* metrics-config.c, at attach: GPUPROF_METRICS's names, or the roofline set.  0, or -1 (logged). */
int gp_mx_parse_names(const char *s);

/* metrics-config.c, prof_lock held: the chip of a device, configured; NULL when unusable. */
struct chip *gp_mx_chip_of(uint32_t device);

/* metrics-config.c, prof_lock held: the chips seen so far. */
int gp_mx_chip_count(void);

/* metrics-config.c: the replay passes (or groups) of the first chip configured, 0 none yet. */
uint32_t gp_mx_first_passes(void);

/* metrics-config.c, prof_lock held: the device's ceilings, for the drain to emit. */
void gp_mx_note_peaks(uint32_t device, const struct chip *c);

/* metrics-config.c, producer lock held: emits the ceilings noted and not yet emitted. */
void gp_mx_emit_peaks(void);

#endif
