/*
 * The program's own CUPTI user (torch.profiler's Kineto, or any library
 * that calls libcupti), served beside the recorder: see guest.c.
 *
 * Context: gp_guest_attach/start on the thread inside cuInit (recorder
 * start); gp_guest_copy on whichever thread CUPTI hands a buffer to the
 * recorder (no recorder lock held); gp_guest_dispatch and the ownership
 * tests in CUPTI callbacks on application threads (no locks, no malloc).
 */
#ifndef GP_CUPTI_GUEST_H
#define GP_CUPTI_GUEST_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/*
 * After libcupti is loaded: keeps the real entry points for the guest and
 * routes the recorder's own enables through shims that note what the
 * recorder itself asked for.
 */
void gp_guest_attach(void);
/* The recorder holds the real subscription sub: guests are served from now on. */
void gp_guest_start(CUpti_SubscriberHandle sub);
/* Producer lock held (the CUDA source's drain): the gap marks of hand-overs. */
void gp_guest_drain(void);
/*
 * A gap from t0 to t1 (trace clock) while another CUPTI user held CUPTI
 * and the recorder saw nothing: marked like a hand-over's, written by the
 * drain.  Any thread.
 */
void gp_guest_gap(uint64_t t0, uint64_t t1);
/*
 * A forked child, the recorder gave up, or it lets CUPTI go between windows
 * (detach.h; gp_guest_start serves again): pass every guest call through.
 */
void gp_guest_stop(void);
/* Whether the recorder holds a subscriber of CUPTI 13.3's multi-subscriber path. */
int gp_guest_multi(void);

/* Non-zero once a guest enabled anything (the recorder then filters its own stream). */
extern int gp_guest_seen;

/* Copies the records of buf the guest asked for into its buffers. */
void gp_guest_copy(uint8_t *buf, size_t valid);

/* 1 when the recorder itself enabled what produced rec (always 1 without a guest). */
int gp_guest_own_record(const CUpti_Activity *rec);

/*
 * A CUPTI callback: calls the guest's when it asked for it; returns 1
 * when the recorder itself enabled (domain, cbid) and should handle it.
 */
int gp_guest_dispatch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);

#endif
