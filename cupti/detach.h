/*
 * CUPTI let go of between windows (dynamic detach), see detach.c.
 *
 * Context: gp_detach_request, gp_detach_resume, gp_detach_poll on the
 * recorder's flusher (or the exit path once it has ended), never two at
 * once; gp_detach_callback in CUPTI callbacks on program threads (atomics
 * and cuptiFinalize only); gp_detach_cupti_ok anywhere.
 */
#ifndef GP_CUPTI_DETACH_H
#define GP_CUPTI_DETACH_H

#include "../preload/config.h"

#include <cupti.h>
#include <stdint.h>

/* States (gp_detach_state). */
#define GP_DETACH_ATTACHED 0   /* CUPTI held: the recorder calls it freely */
#define GP_DETACH_REQUESTED 1  /* the next API exit finalizes; nothing else calls CUPTI */
#define GP_DETACH_FINALIZING 2 /* cuptiFinalize runs on a program thread */
#define GP_DETACH_DETACHED 3   /* finalized: the next window attaches again */
#define GP_DETACH_FAILED 4     /* cuptiFinalize refused: still attached (gp_detach_poll) */
#define GP_DETACH_FORKED 5     /* a forked child's copy of a request: nothing happens */

/* What keeps CUPTI attached between windows besides the configuration (gp_detach_wanted). */
#define GP_DETACH_KEEP_GUEST 1u   /* the program's own CUPTI user is served (guest.c) */
#define GP_DETACH_KEEP_MULTI 2u   /* CUPTI 13.3's several subscribers: finalize does nothing */
#define GP_DETACH_KEEP_METRICS 4u /* hardware metrics: their callbacks and sessions */
#define GP_DETACH_KEEP_CAPTURE 8u /* capture ranges: their callbacks open them */
#define GP_DETACH_KEEP_BUSY 16u   /* tracing on, an edge watched, another subscriber waited for */

/*
 * Whether CUPTI is let go of now that the recorder is dormant after a
 * window: only a dormant recorder (GPUPROF_START=dormant, --sample), not
 * with GPUPROF_DETACH=0, hardware metrics or the GPU over time (their PM
 * sessions would end), nor with any of keep (GP_DETACH_KEEP_*).
 */
int gp_detach_wanted(const struct gp_config *cfg, unsigned keep);

/*
 * Flusher, tracing off, every record handed over: asks the next API exit
 * (any thread) to finalize CUPTI, by turning on the runtime and driver
 * callback domains of sub.  0 asked, -1 not (finalize refused once before,
 * or CUPTI has no cuptiFinalize): CUPTI stays attached.
 */
int gp_detach_request(CUpti_SubscriberHandle sub);

/*
 * A CUPTI callback while the state is not GP_DETACH_ATTACHED (the caller
 * tests gp_detach_cupti_ok first and does nothing else): at the first
 * runtime or driver API exit, cuptiFinalize once.
 */
void gp_detach_callback(CUpti_CallbackDomain domain, const void *data);

/* Whether the recorder may call CUPTI now (GP_DETACH_ATTACHED). */
int gp_detach_cupti_ok(void);
int gp_detach_state(void);

/*
 * Flusher, before a window: takes a request back that no API exit has
 * carried out yet (the domains off again: the caller turns on again the
 * callbacks it needs), waits up to wait_ns for a finalize under way.
 * Returns GP_DETACH_ATTACHED (CUPTI still held), GP_DETACH_DETACHED (the
 * caller attaches as at the first window, then calls gp_detach_attached),
 * or -1 (a finalize still running after the wait, or a forked child).
 */
int gp_detach_resume(uint64_t wait_ns);
/* Flusher: attached again after GP_DETACH_DETACHED. */
void gp_detach_attached(void);

/*
 * Flusher: a finalize that failed is taken back (the domains off, one
 * line said, no further request).  Returns 1 when it did so, the caller
 * then turns on again the callbacks it needs; 0 otherwise.
 */
int gp_detach_poll(void);

/*
 * A forked child (async-signal-safe): a request inherited from the parent
 * is never carried out (CUPTI's threads did not come along).
 */
void gp_detach_forked(void);

/* Finalizes done so far (status, tests). */
unsigned gp_detach_count(void);

/* How long the last finalize took on the program's thread, ns (the verbose log). */
uint64_t gp_detach_last_ns(void);

#endif
