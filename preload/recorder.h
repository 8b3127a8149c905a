/*
 * The recorder's process-wide state and the record emitters shared by
 * preload/ and cupti/.
 * Context: emitters run with the ring's producer lock held (gp_ring_lock),
 * on the CUPTI completion path or the recorder's control paths; they never
 * compress, write or block beyond the ring's bounded wait.
 */
#ifndef GP_RECORDER_H
#define GP_RECORDER_H

#include "config.h"
#include "intern.h"
#include "ring.h"
#include "tracefile.h"

#include <gpuprof/trace.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum gp_state {
	GP_OFF = 0,        /* not initialized, or gave up */
	GP_ACTIVE = 1,     /* tracing */
	GP_STOPPING = 2,   /* exit flush under way */
	GP_STOPPED = 3,    /* file closed */
	GP_DORMANT = 4,    /* initialized, no file open: records are not kept */
};

struct gp_recorder {
	struct gp_config cfg;
	struct gp_ring ring;
	struct gp_tracefile file;
	struct gp_intern strings;  /* producer lock */
	_Atomic int state;
	_Atomic int disabled;      /* forked child, fatal error: no CUPTI calls */
	int pid;
	_Atomic uint64_t lost[GP_LOST_CAUSE_COUNT];
	uint64_t lost_reported[GP_LOST_CAUSE_COUNT]; /* producer lock */
	uint64_t lost_base[GP_LOST_CAUSE_COUNT]; /* counts when this file began */
	struct gp_ring *emit_to;   /* where gp_emit reserves; NULL: ring (lock held) */
	uint64_t records;          /* records emitted, producer lock */
	_Atomic uint64_t late_records; /* delivered after the trace was closed */
	uint32_t cuda_driver;      /* cuDriverGetVersion(), set by the CUDA source at attach */
	uint32_t cupti_version;    /* set by the CUDA source at attach (or its late attach) */
};

extern struct gp_recorder gp_rec;

/* Counts n lost records of a cause; any thread. */
void gp_lost_add(enum gp_lost_cause cause, uint64_t n);

/*
 * Lock held: reserves a record of `size` bytes (rounded up to 8), zeroes
 * it and fills the header.  NULL when the ring dropped it (counted).
 */
void *gp_emit(uint16_t type, uint32_t size);

/*
 * Lock held: id of s (emitting its GP_REC_STRING first if new); 0 if s is
 * NULL or its STRING record was dropped (counted; emitted again next time).
 */
uint32_t gp_emit_string(const char *s);
uint32_t gp_emit_string_n(const char *s, size_t len);

/*
 * Lock held: a THREAD record naming host thread tid (its /proc comm), the
 * first time tid is met.  Off the program's threads: reads /proc once per
 * thread.
 */
void gp_emit_thread(uint32_t tid);

/*
 * Lock held: a new trace file begins: its record count starts at zero and
 * only losses from now on are its own.
 */
void gp_emit_begin_file(void);

/* Lock held: a STRING record for every string interned so far. */
void gp_emit_strings_all(void);

/*
 * Lock held: LOST records for every cause that grew since the last call.
 * One that finds the ring full is emitted by a later call (with what has
 * been added since) and is not itself counted as lost.
 */
void gp_emit_lost(uint64_t now);

/* Lock held: the identity/config/clock records. */
void gp_emit_process(uint64_t start_ns, uint32_t cupti_version);
void gp_emit_config(void);
void gp_emit_clock_sync(uint64_t trace_ns);
void gp_emit_end(uint64_t end_ns);

/*
 * Lock held: ends the record stream.  Seals the open chunk, waits (up to
 * wait_ms) until the writer has handled every chunk so that its count of
 * records it could not write is final, emits the LOST and END records,
 * sets GP_STOPPED and seals the last chunk (GP_CHUNK_F_LAST).
 */
void gp_emit_final(uint64_t end_ns, int wait_ms);

/* Monotonic and realtime clocks in ns. */
uint64_t gp_now_realtime(void);
uint64_t gp_now_monotonic(void);

#endif
