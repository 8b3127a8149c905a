/*
 * Hardware metrics of selected kernel launches, from CUPTI's range
 * profiler (auto range, kernel replay), and the devices' roofline
 * ceilings.  Off unless GPUPROF_METRICS is set; then the CUDA source
 * (tracer.c) forwards launch, capture, graph-launch and context
 * callbacks here, hands over the activity records of profiled launches
 * (which CUPTI leaves without timestamps) and calls the drain.
 *
 * Context:
 *  - gp_metrics_attach / gp_metrics_enable_callbacks: the thread inside
 *    cuInit, once.
 *  - gp_metrics_callback: application threads.  A profiled launch blocks
 *    in its launch call while CUPTI replays it (tens of ms); every launch
 *    callback takes one process-wide mutex while metrics are on, so that
 *    no other launch falls inside a profiled range.  No stdio: errors are
 *    one gp_log line each.
 *  - gp_metrics_claims / gp_metrics_kernel / gp_metrics_drain: producer
 *    lock held (CUPTI completion path, flusher, exit path).
 */
#ifndef GP_METRICS_H
#define GP_METRICS_H

#include "../preload/config.h"

#include <gpuprof/trace.h>

#include <cupti.h>
#include <stdint.h>

/*
 * Resolves the profiler entry points and parses cfg's metric settings.
 * Returns 1 when metrics are on, 0 when off (not asked for, or a problem
 * already logged); tracing goes on either way.
 */
int gp_metrics_attach(const struct gp_config *cfg);

/* Enables the callbacks metrics need on the tracer's subscriber. */
void gp_metrics_enable_callbacks(CUpti_SubscriberHandle sub);

/* Every callback of the tracer's subscriber; ignores the ones it does not need. */
void gp_metrics_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);

/*
 * Producer lock held: 1 for a kernel record of CUPTI's own (the wait
 * kernel the range profiler puts between the launches of a session in
 * the launches mode), which the trace leaves out.
 */
int gp_metrics_own_kernel(const char *name);

/* Lock held: 1 when the kernel activity of this correlation is a profiled launch's. */
int gp_metrics_claims(uint32_t correlation);

/*
 * Lock held: takes the kernel record of a profiled launch (filled as the
 * tracer would emit it, start and end possibly 0) and emits it, with the
 * launch's time and GP_ACT_REPLAYED, once its metrics are in.
 */
void gp_metrics_kernel(const struct gp_rec_kernel *k);

/*
 * No lock (the flusher, and the exit path with final): a progress line of
 * the launches profiled, on a terminal only, a few a second at most; final
 * clears it.
 */
void gp_metrics_progress(int final);

/* Lock held: emits finished results and device ceilings; final: everything, and the summary. */
void gp_metrics_drain(int final);

/* Goes passive (forked child, tracing stopped); any thread. */
void gp_metrics_off(void);

/*
 * Nonzero while this thread is inside a call (a launch, copy, memset or
 * graph launch) whose ENTER took a lock of the metrics: its EXIT must reach
 * gp_metrics_callback even if the recorder stopped in between.
 */
int gp_metrics_holding(void);

#endif
