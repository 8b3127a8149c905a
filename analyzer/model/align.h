/*
 * Clocks of the traces of one job, put on one time line before the model
 * reads them.  Every trace records its trace clock against CLOCK_REALTIME
 * (CLOCK_SYNC records, FORMAT.md section 8).  Processes of one host share
 * their clocks and are read as they are; when the traces come from several
 * hosts (or a trace clock is not CLOCK_REALTIME), each trace's times are
 * moved to CLOCK_REALTIME by the offset of its first CLOCK_SYNC.
 *
 * With GA_ALIGN_NCCL, ranks are then aligned by their NCCL collectives,
 * which finish together on every rank: the k-th kernel of one collective
 * (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, ...; point-to-
 * point SendRecv kernels are left out) on one rank is matched with the
 * k-th of the same collective on the reference rank (the lowest rank),
 * per communicator where the traces tell them apart: NCCL runs each
 * communicator on a stream of its own, so when every rank has the same
 * number of streams with NCCL kernels, the j-th such stream of each rank
 * (in the order of their first NCCL kernel) is taken for the same
 * communicator.  A rank's correction is the median of the differences of
 * the matched ends (reference minus rank), after leaving out differences
 * farther from the first median than 5 scaled median absolute deviations
 * (at least 2 us).  The correction is added to every time of that rank's
 * trace.  Of each stream's kernels of one collective, the first
 * GA_ALIGN_KEEP by start are kept (ga_align_keep): matching uses the first
 * GA_ALIGN_KEEP of each key, which they hold, so memory does not grow with
 * the collectives.
 *
 * The scan reads each trace once before the analysis (only its first chunk
 * without GA_ALIGN_NCCL); the readers of the analysis then go through
 * ga_align_reader(), which shifts the time fields of every record.
 * Summaries carry each trace's kept collectives on its own clock, and the
 * report of summaries computes the same corrections from them
 * (ga_align_nccl()).  Runs offline only.
 */
#ifndef GA_MODEL_ALIGN_H
#define GA_MODEL_ALIGN_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprof/trace.h"
#include "base/util.h"
#include "read/reader.h"

enum ga_align_mode {
	GA_ALIGN_NONE = 0,
	GA_ALIGN_NCCL = 1,
};

/* The value of --align ("nccl", "none"): 0, or -1 when it is neither. */
int ga_align_parse(const char *s, int *mode);

/* One trace of the job. */
struct ga_align_file {
	uint32_t rank;             /* from its PROCESS record, UINT32_MAX none */
	uint32_t pid;
	int has_sync;              /* it holds a CLOCK_SYNC */
	int64_t sync_ns;           /* realtime - trace clock of its first CLOCK_SYNC */
	int64_t clock_ns;          /* correction from CLOCK_SYNC (0 when not applied) */
	int64_t nccl_ns;           /* correction from NCCL collectives */
	uint64_t matched;          /* collectives matched with the reference */
	uint64_t used;             /* of those, not left out as outliers */
	uint64_t spread_ns;        /* median absolute deviation of the differences */
	int reference;             /* the reference of the NCCL alignment */
	char host[128];
};

struct ga_align {
	int mode;                  /* enum ga_align_mode */
	size_t n;
	struct ga_align_file *f;
	int hosts;                 /* distinct host names */
	int clock_applied;         /* CLOCK_SYNC offsets moved the traces */
	int by_stream;             /* NCCL collectives matched per communicator stream */
	char err[320];
};

/* One input: a path, or a trace in memory (buf non-NULL). */
struct ga_align_src {
	const char *path;
	const void *buf;
	size_t len;
};

void ga_align_init(struct ga_align *al, int mode);
void ga_align_free(struct ga_align *al);

/*
 * Read the n traces and compute each one's correction.  Unreadable traces
 * get none (the model reports them).  0, or -1 out of memory (err set).
 */
int ga_align_scan(struct ga_align *al, const struct ga_align_src *src, size_t n);

/* The correction of trace i in nanoseconds (0 when none or out of range). */
int64_t ga_align_shift(const struct ga_align *al, size_t i);

/* Non-zero when some correction is not 0 or an alignment was asked for. */
int ga_align_active(const struct ga_align *al);

/*
 * Reading with a correction: set fn, ctx and shift, then pass
 * ga_align_reader_fn and the struct to the reader.  Records with time
 * fields reach fn as shifted copies; others as they are.
 */
struct ga_align_reader {
	ga_reader_fn fn;
	void *ctx;
	int64_t shift;
	uint64_t buf[8192];        /* a shifted record (any record fits: size is 16 bits) */
};

int ga_align_reader_fn(void *ctx, const struct gp_rec *rec);

/*
 * Shift the time fields of rec (its type's struct, rec->size bytes) by
 * delta; 0 stays 0 (time unknown).  1 when the type has time fields.
 */
int ga_align_shift_rec(struct gp_rec *rec, int64_t delta);

/* The collective of an NCCL kernel name ("AllReduce"), or NULL (SendRecv, not NCCL). */
const char *ga_align_collective(const char *name, size_t *len);

/* Its index + 1 (at most GA_ALIGN_COLLS), 0 for none. */
unsigned ga_align_coll_index(const char *name);
#define GA_ALIGN_COLLS 5u

/* Kernels of one stream and collective kept per trace; matching uses this many of each key. */
#define GA_ALIGN_KEEP 1024u

/* One trace's NCCL collectives as the alignment reads them (times on its own clock). */
struct ga_align_group {
	uint64_t stream; /* device << 32 | stream */
	uint32_t coll;   /* ga_align_coll_index() */
	uint64_t *v;     /* start, end pairs; at most 2 * GA_ALIGN_KEEP */
	size_t n, cap;
	int full; /* once cut: pairs after lim are never kept */
	uint64_t lim_start, lim_end;
};

struct ga_align_keep {
	struct ga_align_group *g;
	size_t n, cap;
	struct ga_map idx; /* (stream, coll) -> group index + 1 */
};

/* A kernel of collective coll (1..GA_ALIGN_COLLS) on stream.  0, or -1 out of memory. */
int ga_align_keep_add(struct ga_align_keep *k, uint64_t stream, uint32_t coll, uint64_t start,
		      uint64_t end);
/* Each group's first GA_ALIGN_KEEP by start, then end, in order; groups by stream, collective. */
int ga_align_keep_finish(struct ga_align_keep *k);
void ga_align_keep_free(struct ga_align_keep *k);

/*
 * The NCCL corrections of al's al->n traces (rank, clock_ns set) from
 * their kept collectives keep[0..al->n): nccl_ns, matched, used,
 * spread_ns, reference and by_stream.  0, or -1 out of memory.
 */
int ga_align_nccl(struct ga_align *al, struct ga_align_keep *keep);

#endif
