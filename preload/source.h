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
	 * Lock held: a new trace file (or a flight-recorder dump) begins;
	 * emit again what it needs from before it (devices, contexts).
	 */
	void (*preamble)(void);
	/* Undoes attach (and enable) after a failure. */
	void (*detach)(void);
	/* No lock: hand buffered records over (final: everything, at the end). */
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
