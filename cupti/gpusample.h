/*
 * The GPU over time: a record source (preload/source.h) that samples each
 * device's hardware counters with CUPTI PM sampling (--gpu-metrics) and its
 * NVML telemetry and GPM metrics (--gpu-telemetry) into GP_REC_GPU_SERIES
 * and GP_REC_GPU_SAMPLE records.  See gpusample.c for the threads.
 */
#ifndef GP_GPUSAMPLE_H
#define GP_GPUSAMPLE_H

#include "../preload/source.h"

extern const struct gp_source gp_gpusample_source;

/*
 * The default set of --gpu-metrics, comma-separated, as CUPTI names the
 * metrics; those a device does not offer are left out there.
 */
extern const char gp_gpusample_default_set[];

/*
 * Stops the sampler thread: its sessions' last samples are queued for the
 * next drain, the counters given back.  Waits at most wait_ms; past that
 * the thread is given up (it makes no further CUPTI or NVML call, and
 * nothing it uses is freed) and one line says so.  Runs once (the
 * thread's own exit handler, else flush(final)); any thread of the
 * process that started it; a no-op in a forked child.
 */
void gp_gpusample_stop(int wait_ms);

#endif
