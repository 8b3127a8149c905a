/*
 * Capture ranges: record only between cudaProfilerStart/cuProfilerStart and
 * the matching stop, or inside a named NVTX range.  Outside a range the
 * device activity kinds are disabled, so the program runs at (nearly) its
 * unprofiled speed; only the few callbacks that open a range stay enabled.
 * Context: CUPTI callbacks on application threads (profiler start/stop,
 * NVTX push/pop); they may call cuCtxSynchronize and cuptiActivity*.
 */
#ifndef GP_CAPTURE_H
#define GP_CAPTURE_H

#include "../preload/config.h"

#include <cupti.h>
#include <stdint.h>

struct gp_capture_ops {
	void (*set_tracing)(int on);    /* enable/disable the device kinds */
	void (*sync)(void);             /* finish in-flight work */
	uint64_t (*now)(void);
};

/*
 * Parses the capture range of the configuration (GPUPROF_CAPTURE_RANGE,
 * GPUPROF_CAPTURE_RANGE_END).  Returns 1 when
 * a capture range is configured (tracing then starts off), 0 when not, -1
 * on a malformed value (logged; treated as not configured).
 */
int gp_capture_init(const struct gp_config *cfg, const struct gp_capture_ops *ops);
/* Enables the callbacks that open and close ranges. */
void gp_capture_enable_callbacks(CUpti_SubscriberHandle sub);
/* Returns 1 when the callback was a capture-range one (handled). */
int gp_capture_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);
/* At exit: closes an open range (emits its record).  Producer lock held. */
void gp_capture_finish(uint64_t now);

#endif
