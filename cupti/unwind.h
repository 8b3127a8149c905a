/*
 * Launch-site call stacks (--backtrace).  On entry to a launch API call the
 * application thread unwinds itself with libunwind (loaded at run time:
 * without it stacks are off and the recorder says so once), interns the
 * stack in a lock-free table and notes correlation id -> stack id.  Stacks
 * and their symbolized frames are written later, off the hot path.  With
 * --backtrace=python or mixed the thread also reads its own Python frames
 * (pystack.h): Python frames alone, or in place of the interpreter's
 * native frames.
 *
 * Contexts:
 *   gp_unwind_on_api      application threads, inside CUPTI API callbacks:
 *                         no malloc, no locks, no I/O (only the unwinder).
 *   gp_unwind_on_resource application threads, graph node creation (rare;
 *                         with --backtrace or NVTX tracing):
 *                         may take the ring's producer lock.
 *   gp_unwind_corr        completion callback, producer lock held.
 *   gp_unwind_emit        flusher thread or exit, producer lock held.
 *   gp_unwind_preamble    the same (a new file or dump), producer lock held.
 */
#ifndef GP_UNWIND_H
#define GP_UNWIND_H

#include <cupti.h>
#include <stdint.h>

/* Loads libunwind and maps the tables.  Returns 0, or -1 (logged once). */
int gp_unwind_init(void);
/* The Python frames recorded after gp_unwind_init: GP_PYSTACK_* (config.h). */
int gp_unwind_py_mode(void);
/* Enables the launch callbacks (all API calls when `all`). */
void gp_unwind_enable_callbacks(CUpti_SubscriberHandle sub, int all);
/* Turns the launch-path callbacks of gp_unwind_enable_callbacks off again. */
void gp_unwind_disable_callbacks(CUpti_SubscriberHandle sub, int all);
void gp_unwind_on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		      const CUpti_CallbackData *cd);
void gp_unwind_on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd);
/* Emits GP_REC_CORR_STACK for a correlation id that has a stack. */
void gp_unwind_corr(uint32_t correlation);
/* Emits STACK and FRAME records for stacks interned since the last call. */
void gp_unwind_emit(void);
/*
 * Producer lock held: a new file or flight dump begins.  Emits again the
 * FRAME and STACK records emitted so far (their strings come with the
 * file's other strings), so that every stack its records name is in it.
 */
void gp_unwind_preamble(void);

#endif
