/*
 * The interface between the recorder (preload/) and its record sources
 * (cupti/: CUDA activity and callbacks, NVTX, call stacks; later others).
 *
 * The recorder owns the lifecycle: configuration, the chunk ring, the
 * trace file and its writer thread, the flusher thread, exit, signals and
 * fork.  A source knows nothing of files or threads: it is attached and
 * enabled once, asked to hand over what it buffered (flush, drain), and
 * told when the trace ends or the process forks.  Sources emit records
 * with the emitters of recorder.h, under the ring's producer lock.
 *
 * Context of each hook: attach and detach on the thread that starts the
 * recorder (inside cuInit); enable there, or for a dormant recorder on the
 * flusher thread at its first window; set_tracing there or on the flusher
 * thread (windows opened from outside); flush on the flusher thread or the
 * exit path, without the producer lock; drain with the producer lock held;
 * forked in a forked child (async-signal context rules apply).
 */
#ifndef GP_SOURCE_H
#define GP_SOURCE_H

#include "config.h"

#include <stddef.h>
#include <stdint.h>

/* flush()'s final: the trace ends with the process / a file ends, the process goes on. */
#define GP_FLUSH_END 1
#define GP_FLUSH_FILE 2

/* window()'s what. */
#define GP_WINDOW_OPENING 1
#define GP_WINDOW_OPEN 2
#define GP_WINDOW_CLOSING 3
#define GP_WINDOW_CLOSE 4

struct gp_source {
	const char *name;
	/*
	 * Before the trace file exists: claim what the source needs (CUPTI
	 * subscription).  Returns 0, or -1 with a reason in why: the recorder
	 * then stays passive and creates no file.  May adjust cfg (what
	 * could not be enabled) and set *version (recorded in the trace).
	 */
	int (*attach)(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz);
	/*
	 * The recorder is set up: claim what must exist from the start (CUPTI's
	 * device and context records), nothing on the program's hot path.
	 * A dormant recorder (cfg->dormant at attach) calls it at its first
	 * window instead, long after cuInit; attach then claims only what
	 * costs the program nothing.  0, or -1 with why (a dormant recorder
	 * stays dormant and tries again at the next window).
	 */
	int (*enable)(char *why, size_t whysz);
	/*
	 * Start (on) or stop (off) recording: activity kinds and the callbacks
	 * on the program's launch paths.  Called after enable when tracing
	 * starts at once, else for each window that gpuprof start/stop opens
	 * and closes; on the recorder's own threads, never twice at once.
	 * 0, or -1 with why.
	 */
	int (*set_tracing)(int on, char *why, size_t whysz);
	/*
	 * A window's edges (gpuprof start/stop, --sample), on the flusher, no
	 * lock: GP_WINDOW_OPENING before set_tracing(1), GP_WINDOW_OPEN with
	 * the window's start t on the trace clock once it returned;
	 * GP_WINDOW_CLOSING, then GP_WINDOW_CLOSE with the window's end t,
	 * then set_tracing(0).  A source keeps of the work it records what
	 * began inside [start, end) (the rule of docs/USAGE.md, "Which work a
	 * window holds"); between OPENING and OPEN, and from CLOSING until
	 * tracing is off, it tells which work began before an edge and which
	 * after.  A window cut by the process's end gets no CLOSE.  NULL: the
	 * source records whatever comes while tracing is on.
	 */
	void (*window)(int what, uint64_t t);
	/*
	 * On the flusher, no lock: the recorder is dormant again after a
	 * window whose file has ended (its records handed over by flush
	 * GP_FLUSH_FILE and drained), and no window is open.  A source may let
	 * go of what costs the program until the next window, whose OPENING
	 * edge comes first (the CUDA source lets CUPTI go).  NULL: nothing.
	 */
	void (*idle)(void);
	/*
	 * Lock held: a new trace file (or a flight-recorder dump) begins;
	 * emit again what it needs from before it (devices, contexts).
	 */
	void (*preamble)(void);
	/* Undoes attach (and enable) after a failure. */
	void (*detach)(void);
	/*
	 * No lock: hand buffered records over.  final 0: what is ready (the
	 * periodic flush); GP_FLUSH_FILE: everything, since a file ends while
	 * the process goes on (a window's own file): nothing is stopped, the
	 * next window records again; GP_FLUSH_END: everything, the trace ends
	 * with the process (exit, a fatal signal): what runs may stop.
	 */
	void (*flush)(int final);
	/* Lock held: emit what is buffered; final: also close what is open at t. */
	void (*drain)(uint64_t t, int final);
	/* In a forked child: make no further calls into libraries. */
	void (*forked)(void);
	/* The trace clock, or NULL (the recorder then uses CLOCK_REALTIME). */
	uint64_t (*now)(void);
	/*
	 * 1: create the trace file only when the source calls
	 * gp_recorder_need_file() (lifecycle.h); a process that never does
	 * leaves no file.  Records are kept in the ring until then.
	 */
	int file_on_demand;
};

/* The sources, NULL-terminated; defined on the sources' side. */
extern const struct gp_source *const gp_sources[];

#endif
