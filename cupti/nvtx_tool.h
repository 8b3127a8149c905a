/*
 * NVTX: gpuprof is the NVTX tool itself.  InitializeInjectionNvtx2 fills
 * each NVTX instance's function table with the handlers in nvtx_tool.c, so
 * every range, mark, domain and registered string reaches us directly, on
 * the calling thread, from the program's first NVTX call (before cuInit
 * too) and whichever thread ends a start/end range.
 *
 * Context:
 *  - handlers: application threads.  They append a small event to a
 *    per-thread block (no lock, no syscall beyond the first call of a
 *    thread; a pool lock only when a block fills) and return.
 *  - gp_nvtxtool_drain / gp_nvtxtool_close_all: the recorder's flusher or exit
 *    path, with the ring's producer lock held.  They pair opens and closes
 *    by range id (across threads, in any order) and emit whole ranges.
 */
#ifndef GP_NVTX_TOOL_H
#define GP_NVTX_TOOL_H

#include <stdint.h>

/* What the handlers do; set once, by InitializeInjectionNvtx2. */
#define GP_NVTX_RECORD 1u      /* record ranges and marks */
#define GP_NVTX_CAPTURE 2u     /* feed push/pop to the capture-range hooks */
#define GP_NVTX_LATER 4u       /* install the handlers; record once told to */

/* Capture-range hooks (capture.c), called on the application thread. */
struct gp_nvtxtool_capture_hooks {
	void (*push)(const char *domain, const char *message);
	void (*pop)(void);
};

/*
 * Installs the handlers into the calling NVTX instance's tables.
 * get_export_table is NVTX's NvtxGetExportTableFunc_t.  Returns 1 when the
 * handlers are installed, 0 to leave that NVTX instance a no-op.
 */
int gp_nvtxtool_inject(const void *get_export_table, unsigned what);

/* Set before the capture range is armed; NULL hooks switch it off. */
void gp_nvtxtool_set_capture_hooks(const struct gp_nvtxtool_capture_hooks *h);

/*
 * A predicate run on the message of every push/pop range opened while
 * recording (application thread); NULL: none.  gp_nvtxtool_inside_match
 * tells whether the calling thread has an open range it accepted.
 */
void gp_nvtxtool_set_match(int (*fn)(const char *message));
int gp_nvtxtool_inside_match(void);

/* Innermost push/pop range open on the calling thread; 0 if none. */
uint64_t gp_nvtxtool_current(void);

/* Producer lock held: turns buffered events into NVTX records. */
void gp_nvtxtool_drain(void);

/* Producer lock held, at exit: drains, then emits the ranges still open,
 * ending at `now`, flagged unterminated.  Handlers stop recording. */
void gp_nvtxtool_close_all(uint64_t now);

/*
 * Windows (gpuprof start/stop): handlers record (on) or not (off).  Ranges
 * pushed before a window opens are not known to it: each thread's push/pop
 * nesting starts afresh.  The recorder's threads only.
 */
void gp_nvtxtool_set_recording(int on);

/* Handlers stop recording (tracer gave up, forked child); any thread. */
void gp_nvtxtool_off(void);

#endif
