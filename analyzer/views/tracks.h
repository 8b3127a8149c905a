/*
 * The layout of the timeline exports' tracks, shared by the Chrome JSON
 * (chrome.c) and Perfetto protobuf (perfetto.c) exports: lanes of a track
 * that keep its slices nested, the tracks of NVTX push/pop ranges, a pid
 * of its own for every process however many share one, and a process's
 * name.  Tracks are numbered as thread ids within their process: a host
 * thread's own track is its tid; tracks of no thread of their own (NVTX
 * domains, lanes) and GPU tracks get numbers above any Linux tid.  Runs
 * offline only.
 */
#ifndef GA_VIEWS_TRACKS_H
#define GA_VIEWS_TRACKS_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "model/memuse.h"
#include "model/model.h"
#include "model/ranges.h"

/* GPU streams get thread ids above any Linux tid (pid_max <= 2^22). */
#define GA_GPU_TID_BASE 0x40000000u
/* Host tracks of no thread of their own (NVTX domains, lanes): also above. */
#define GA_HOST_TID_BASE 0x20000000u
/* Top-level slices a lane keeps to check the next ones against. */
#define GA_LANE_KEEP 8

/* Room of a lane's window: the kept slices slide along it, moved back only when it is full. */
#define GA_LANE_ROOM (2 * GA_LANE_KEEP + 1)

/*
 * One lane of a track: a thread id and the last top-level slices on it,
 * disjoint, by start, at s[off..off + n), e[off..off + n); the first may
 * be the span of all older ones.  The window slides (off) rather than
 * moving what it keeps at every slice put after the others.
 */
struct ga_lane {
	uint32_t tid;
	uint32_t next;             /* the track's next lane: index + 1, 0 none */
	uint32_t n, off;
	uint64_t s[GA_LANE_ROOM], e[GA_LANE_ROOM];
};

struct ga_lanes {
	struct ga_lane *v;
	size_t n, cap;
};

/*
 * A new lane on thread id tid, after lane last of its track (-1: the
 * first of a new track).  Its index, or -1 out of memory.
 */
long ga_lanes_add(struct ga_lanes *ls, long last, uint32_t tid);

/*
 * Whether [s, e) may go on lane l: against each slice kept, disjoint, or
 * (nest: host tracks) containing it; on GPU tracks nothing may overlap.  A
 * slice inside a kept one does not fit, as the kept one's children are
 * forgotten and it might cross one; in the usual order (a call's record
 * comes after those of the calls it makes, activities of a stream one
 * after the other) that does not happen.  strict, for formats whose
 * slices are begin and end events sorted by time with ties in file order
 * (Perfetto's protobuf), also refuses what such a reader would pair
 * wrongly: a slice that ends where a kept one (written before it) begins,
 * and one that contains a kept one beginning at the same time.
 */
int ga_lane_fits(const struct ga_lane *l, int nest, int strict, uint64_t s, uint64_t e);

/* Put [s, e), which fits, on lane l: it replaces what it contains. */
void ga_lane_put(struct ga_lane *l, uint64_t s, uint64_t e);

/* Whether a slice starting at s comes after everything on lane l (then it fits). */
static inline int ga_lane_after(const struct ga_lane *l, uint64_t s)
{
	return !l->n || s >= l->e[l->off + l->n - 1];
}

/* ga_lane_put() of [s, e) after everything on l (ga_lane_after()), the usual case, inline. */
static inline void ga_lane_append(struct ga_lane *l, uint64_t s, uint64_t e)
{
	uint32_t i = l->off + l->n;

	if (!l->n || i >= GA_LANE_ROOM || s <= l->s[i - 1]) {
		ga_lane_put(l, s, e);
		return;
	}
	l->s[i] = s;
	l->e[i] = e;
	if (l->n < GA_LANE_KEEP) {
		l->n++;
		return;
	}
	/* As ga_lane_put(): the two first become one span. */
	i = l->off + 1;
	l->e[i] = l->e[i] > l->e[i - 1] ? l->e[i] : l->e[i - 1];
	l->s[i] = l->s[i - 1];
	l->off++;
}

/*
 * The first lane of the track whose first lane is head (an index) where
 * [s, e) fits (the first lane only when first_ok), or -1 when none does;
 * *last is then the track's last lane.
 */
long ga_lanes_find(const struct ga_lanes *ls, long head, int nest, int strict, int first_ok,
		   uint64_t s, uint64_t e, long *last);

void ga_lanes_free(struct ga_lanes *ls);

/* A lane of ranges while they are laid out: the ends of the ranges open on it. */
struct ga_nest {
	uint64_t *end;
	size_t n, cap;
	uint32_t tid;
	uint32_t domain;           /* strtab id, 0 the default domain */
};

/*
 * Whether a range [s, e), the ranges before it by start, the longer first,
 * goes on lane l: its ranges ended by s are closed, and it nests in the
 * innermost one still open, or none is.
 */
int ga_nest_fits(struct ga_nest *l, uint64_t s, uint64_t e);

/* Open a range ending at e on lane l.  0, or -1 out of memory. */
int ga_nest_push(struct ga_nest *l, uint64_t e);

/* A new lane, empty, at the end of *st (*n of *cap).  0, or -1 out of memory. */
int ga_nests_add(struct ga_nest **st, size_t *n, size_t *cap);

/* Free the ends of lanes st[0..n). */
void ga_nests_clear(struct ga_nest *st, size_t n);

/* A track of ranges that is no thread's own: "NVTX D [tid T]" or an overlapping lane. */
struct ga_range_track {
	uint32_t proc, tid;        /* tid: the track's */
	uint32_t thread;           /* the thread whose ranges it holds */
	uint32_t domain;           /* strtab id, 0 the default domain */
	int overlapping;           /* a lane after the first */
};

/* The ranges on one thread's own track, for its API calls to nest with. */
struct ga_range_seg {
	uint64_t off, n;  /* into by_start and by_end */
	uint64_t fing[2]; /* the last answers of the searches by start and by end */
};

/*
 * (start, end) pairs of ranges (w 3: and a third word), written in order,
 * read back by index: in memory up to GA_PAIRS_WBUF of them, past that in
 * a temporary file (written GA_PAIRS_WBUF at a time) read through a cache
 * of GA_PAIRS_CACHE blocks of GA_PAIRS_BLK.
 */
#define GA_PAIRS_BLK 256
#define GA_PAIRS_CACHE 128
#define GA_PAIRS_WBUF 2048
struct ga_pairs {
	int fd1; /* the file's descriptor + 1, 0 none (all in wbuf) */
	int w;   /* 3: entries of three words; else two */
	uint64_t n;
	uint64_t *wbuf; /* GA_PAIRS_WBUF pairs: all of them, or those on their way to the file */
	size_t wn;
	uint64_t *blk; /* GA_PAIRS_CACHE blocks of 2 * GA_PAIRS_BLK words */
	uint64_t *tag; /* each block's index + 1, 0 none */
};

/*
 * Every range's (start, end, parent | key << 32) by range index, each
 * thread's ranges a segment of segs (seg_map); while it is built, the
 * ranges of the thread being read that are still open (index, end).
 */
struct ga_range_ix {
	struct ga_pairs p;
	struct ga_range_seg *segs;
	size_t nsegs, capsegs;
	struct ga_map seg_map; /* (proc, tid) -> segs index + 1 */
	uint64_t (*open)[2];
	size_t nopen, capopen;
	uint64_t off; /* the thread's first range */
	uint32_t proc, tid;
	int any;
};

/*
 * The tracks of the push/pop NVTX ranges (ga_range_layout_build()): per
 * thread, the default domain on the thread's own track, every other domain
 * on a track of its own; in each, a range goes on the first lane where it
 * nests in the innermost range still open there, or on a new lane.  The
 * ranges come in their order (by process, thread, start, the longer
 * first) from the scan's external sort (ranges.h spill), or from the
 * ranges kept; they go, each with its track, to an external sort of their
 * own, read back in the same order (ga_range_layout_next()); the threads'
 * own tracks' ranges, by start and by end, to struct ga_pairs.  Memory: a
 * little per thread and track, the lanes' open ranges, the sorts' runs.
 */
struct ga_range_layout {
	int want_async;         /* asked before: ga_range_layout_next_async() */
	struct ga_xsort out;    /* every range, track set, by index (its key) */
	struct ga_xsort async;  /* start/end ranges by start (want_async) */
	struct ga_xsort async2; /* then by process */
	int out_done, async_done;
	struct ga_ranges_srec *grp; /* ranges of the same key in a row, sorted in memory */
	size_t ngrp, capgrp, igrp;
	struct ga_ranges_srec held; /* the first of the next group */
	int has_held;
	struct ga_pairs by_start, by_end; /* ranges on their thread's own track, per thread */
	struct ga_range_seg *segs;
	size_t nsegs, capsegs;
	struct ga_map seg_map;     /* (proc, tid) -> segs index + 1 */
	struct ga_range_track *tracks; /* the range tracks that are no thread's own */
	size_t ntracks, captracks;
	/*
	 * Asked before ga_range_layout_build() (or built by
	 * ga_range_layout_index() instead of the layout): the index of every
	 * range, for ga_range_layout_innermost().
	 */
	int want_index;
	struct ga_range_ix ix;
	char err[224]; /* why the last call failed: "out of memory" where not set */
};

/*
 * Lay out rg's push/pop ranges (its external sort is read: once); new
 * tracks get thread ids GA_HOST_TID_BASE + (*nhost)++.  0, or -1 (err,
 * said on stderr).
 */
int ga_range_layout_build(struct ga_range_layout *rl, struct ga_ranges *rg, uint32_t *nhost);

/*
 * Whether an API call [s, t) of thread (proc, tid) would cross a range on
 * the thread's own track: one that starts inside it and ends after, or
 * ends inside it and started before (strict: as ga_lane_fits(), also one
 * that ends where the call begins, or begins with it and ends after it).
 * A thread is inside its call while it makes it, so no range should start
 * or end there: past a few such boundaries it counts as crossing.  A read
 * error of the temporary files counts as crossing (err set).
 */
int ga_range_layout_crosses_any(struct ga_range_layout *rl, uint32_t proc, uint32_t tid,
				uint64_t s, uint64_t t, int strict);

/* ga_range_layout_crosses_any(), inline where no thread has ranges (a trace without NVTX). */
static inline int ga_range_layout_crosses(struct ga_range_layout *rl, uint32_t proc, uint32_t tid,
					  uint64_t s, uint64_t t, int strict)
{
	return rl->nsegs && ga_range_layout_crosses_any(rl, proc, tid, s, t, strict);
}

/*
 * Every range laid out, in range order (process, thread, start, the longer
 * first), its track in track (push/pop ranges); NULL at the end, or on an
 * error (err set).  Valid until the next call.
 */
const struct ga_ranges_srec *ga_range_layout_next(struct ga_range_layout *rl);

/*
 * With want_async: the start/end ranges by (process, start, the longer
 * first, range order); NULL at the end or on an error (err set).
 */
const struct ga_ranges_srec *ga_range_layout_next_async(struct ga_range_layout *rl);

/*
 * Instead of the layout, for an export that names each activity's
 * innermost range by its index (the SQLite export): rg's ranges (its
 * external sort, read once) in range order, each handed to row with its
 * index (x->seq) and the index of its parent (the innermost range open at
 * its start on its thread, GA_RANGES_NONE none: as ranges.c links them
 * when it keeps them), and indexed for ga_range_layout_innermost() (as
 * ga_range_layout_build() does with want_index).  Each range's graph
 * nodes are placed too (ranges.h ga_ranges_spilled_index()).  Memory: a
 * little per thread, the open ranges of one, the sort's runs, the index's
 * cache.  0, or -1 (err set; row's own -1 too), said on stderr.
 */
int ga_range_layout_index(struct ga_range_layout *rl, struct ga_ranges *rg,
			  int (*row)(void *ctx, const struct ga_ranges_srec *x, uint32_t parent),
			  void *ctx);

/*
 * After ga_range_layout_index(): the index of the innermost range open at
 * t on thread (proc, tid) (the last to start at or before t that ends
 * after it, on the chain of its parents), GA_RANGES_NONE none; on a read
 * error of the index's file GA_RANGES_NONE too, err set.  Galloping from
 * the thread's last answer: a thread's calls come mostly in time order.
 */
uint32_t ga_range_layout_innermost(struct ga_range_layout *rl, uint32_t proc, uint32_t tid,
				   uint64_t t);

/*
 * rg's spilled ranges served from rl's index to ranges.c (ranges.h ix:
 * ga_ranges_attribute(), ga_ranges_walk(), for a filter and the SQLite
 * export): ready(ready_ctx) builds the index once the scan is done.
 */
void ga_range_layout_serve(struct ga_range_layout *rl, struct ga_ranges *rg,
			   int (*ready)(void *ready_ctx), void *ready_ctx);

void ga_range_layout_free(struct ga_range_layout *rl);

/* A range track's name, "NVTX D [tid T]" or "tid T (overlapping)", into name. */
void ga_range_track_name(const struct ga_model *m, const struct ga_range_track *t, char *name,
			 size_t size);

/*
 * Pids of the export's processes, each unique: the process's own, else,
 * as long as those are free, its own plus k << 22 for k = 1..1023 (above
 * any Linux pid, same low bits), else the first free one counting up.
 * Processes of different hosts or containers share pids (every rank may
 * be pid 1), and viewers must not merge them.
 */
struct ga_pids {
	struct ga_map map;         /* (0, pid) taken; (1, pid) -> its next k */
	uint32_t spare;            /* the last pid tried once a pid's k were used up */
};

/* A unique pid for a process of pid.  0, or -1 out of memory. */
int ga_pids_for(struct ga_pids *p, uint32_t pid, uint32_t *out);
void ga_pids_free(struct ga_pids *p);

/* Per process of the model (by index): whether the export has met it, and its unique pid. */
struct ga_proc_pids {
	uint8_t *seen;
	uint32_t *pid;             /* sized alongside seen */
	size_t cap;
	struct ga_pids pids;       /* unique pids (ga_pids_for()) */
};

/*
 * Process index proc, of pid own_pid, met: its unique pid into *out.  1 the
 * first time (the caller then describes the process), 0 after, -1 out of
 * memory.
 */
int ga_proc_pids_see(struct ga_proc_pids *pp, uint32_t proc, uint32_t own_pid, uint32_t *out);
void ga_proc_pids_free(struct ga_proc_pids *pp);

/* "rank 1: python3 train.py [4242] on node7" into b.  0, or -1 out of memory. */
int ga_track_proc_name(const struct ga_model *m, const struct ga_proc *p, struct ga_buf *b);

#endif
