/*
 * NVTX ranges in the analyzer: which ranges were open on the launching
 * thread when each GPU activity's API call was made, and the statistics
 * built on that (range table, range tree, per-activity innermost range).
 * Runs offline only.
 *
 * Attribution: activity.correlation -> the outermost (earliest) API record
 * of that correlation in the same file -> (tid, api.start) -> the ranges
 * with tid_start == tid and start <= api.start < end.  The innermost is the
 * one that started last.  Graph nodes with a GP_REC_GRAPH_NODE record use
 * the range recorded there; others fall back to the correlation, which is
 * the graph launch's.  Activities without an API record are "unattributed".
 *
 * Use: ga_ranges_scan() over the files before the model reads them (the
 * ranges usually come last in a file, after the activities they enclose),
 * then ga_ranges_account() for each activity as the model reads it (the
 * report filter does this, unless nothing needs it: see from_model), then
 * ga_ranges_finish().  A single trace's scan may instead ride in the
 * model's read of it, the model waiting for it (pace, below).
 *
 * Other threads: attribution is per thread, as nsys's; a range's key and
 * tree node also count, apart and each kernel once, the kernels that other
 * threads of its process launched while it was open (PyTorch's autograd
 * launches backward kernels from a thread of its own while "backward" is
 * open on the main thread).  Processes with more than
 * GA_RANGES_OTHER_THREADS threads that have ranges are left out of that
 * (other_skipped); folded, what was counted of one before the fold met
 * its next thread is taken back then.  Memory, folded (fold, below: a report's, where each
 * thread's ranges nest): the ranges and launches of
 * the open end of the trace only, bounded, a file's launches' innermost
 * ranges in a temporary file (1 MiB of it in memory), the ranks' steps
 * in another past the newest GA_RANGES_STEPS_MEM (24 bytes each on disk).
 * Else: 49 bytes per range (73 with the details the
 * Chrome and SQLite exports write; GPU time of nested ranges is summed per name
 * path, not per range), 8 bytes per correlation id of the files that
 * have ranges and traced API calls while they are scanned, then 4 where
 * the launching thread and time are not needed again (a process whose
 * ranges are all on one thread and nest, the launches all made there; 16
 * otherwise, and for launches; those of a trace read once, 8, for the
 * last GA_RANGES_LWIN ids of a process: struct ga_ranges_dense; an id far
 * ahead of the others, as only a damaged or crafted trace has, in the
 * hash, about 40 bytes, not 8 for each id up to it: ranges.c
 * dense_takes()).  Both: 16 MiB at most for API records waiting
 * for their activities (while a file is scanned); traces recorded without
 * NVTX are not even read whole.
 */
#ifndef GA_MODEL_RANGES_H
#define GA_MODEL_RANGES_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "base/util.h"
#include "base/xsort.h"

#define GA_RANGES_NONE UINT32_MAX            /* no range open */
#define GA_RANGES_UNATTR (UINT32_MAX - 1)    /* no API record to go by */
#define GA_RANGES_FOLDED (UINT32_MAX - 2)    /* in a range folded into the tree (fold) */
#define GA_RANGES_OTHER_THREADS 64           /* threads of ranges per process, for other threads' kernels */

/* A range as a window of the GPU samples' averages (ga_ranges gsw): start first, the sort's key. */
struct ga_ranges_window {
	uint64_t start, end, id;
	uint32_t proc, tid;
	uint32_t label; /* its key's label (strtab id) */
	uint32_t pad;
};

#define GA_RANGES_GSW_RUN (1u << 16) /* windows sorted in memory at once (2.5 MiB) */

struct ga_ranges_range {
	uint64_t start, end;       /* end >= start; exit time when unterminated */
	uint64_t id;               /* the recorder's range id, unique per file */
	uint32_t proc, tid;        /* tid: the thread that opened it */
	uint32_t key;              /* index into keys: (domain, name) */
	uint32_t parent;           /* innermost range open at start on the thread, or NONE */
	uint32_t node;             /* tree node of this range's name path */
	uint8_t flags;             /* GP_NVTX_UNTERMINATED from the record */
	uint8_t pushpop;           /* a push/pop range (else start/end) */
	uint16_t reserved;
};

/* A range a folded scan keeps (fold_keep): what the ranks read of a step. */
struct ga_ranges_step {
	uint64_t start, end;
	uint32_t proc, key;
};

/*
 * What only the Chrome and SQLite exports write of a range: kept, by range
 * index, when asked (keep_details); else every field reads 0.
 */
struct ga_ranges_detail {
	uint64_t payload;          /* raw bits */
	uint32_t tid_end;          /* the thread that closed it */
	uint32_t category, color;  /* NVTX category, ARGB color (0: none) */
	uint32_t payload_kind;     /* GP_NVTX_PAYLOAD_* */
	uint32_t reserved;
};

/*
 * A range handed to an external sort instead of kept (ga_ranges spill):
 * the range, its details and recorded name, the order it was read in.
 * The Chrome and Perfetto exports lay the ranges out from the sort
 * (views/tracks.h), key and track theirs to set.
 */
struct ga_ranges_srec {
	uint64_t key;             /* the sort's: start as the scan adds it */
	struct ga_ranges_range r; /* parent and node: GA_RANGES_NONE */
	struct ga_ranges_detail d;
	uint32_t raw;   /* the name as recorded, where it is not its key's; else 0 */
	uint32_t track; /* a push/pop range's track (views/tracks.c), else 0 */
	uint64_t seq;   /* its range index: the order read, then sorted */
};

#define GA_RANGES_SPILL_RUN (1u << 15) /* spilled ranges sorted in memory at once (3.3 MiB) */

/*
 * Spilled ranges (ga_ranges spill) served, by index, to
 * ga_ranges_attribute() and ga_ranges_walk() by the export that reads them
 * back (views/tracks.c ga_range_layout_serve()); unset, activities have no
 * range.  ready(ready_ctx), called once the scan is done, builds the index
 * (0, or -1 said on stderr); innermost() is the innermost range open on a
 * thread at a time, GA_RANGES_NONE none; range() a range's start, end,
 * parent and key (0, or -1 on a read error); the export says its read
 * errors when it ends.
 */
struct ga_ranges_ix {
	void *ctx, *ready_ctx;
	int (*ready)(void *ready_ctx);
	uint32_t (*innermost)(void *ctx, uint32_t proc, uint32_t tid, uint64_t t);
	int (*range)(void *ctx, uint32_t i, uint64_t *start, uint64_t *end, uint32_t *parent,
		     uint32_t *key);
};

/* A graph node captured in NVTX range nvtx of process proc (ga_ranges spill_gn). */
struct ga_ranges_gnode {
	uint64_t node, nvtx;
	uint32_t proc;
};

/* Ranges of one (domain, name), over all their instances and processes. */
struct ga_ranges_key {
	uint32_t name, domain;     /* strtab ids; domain 0: the default domain */
	uint32_t label;            /* strtab id: "name" or "domain:name" */
	uint32_t match;            /* the --nvtx filter's verdict: 0 not asked, 1 kept, 2 not */
	uint64_t count, unterminated;
	uint64_t cpu_total, cpu_min, cpu_max;  /* end - start */
	struct ga_welford cpu_var;
	uint64_t gpu_ns, acts, kernels;        /* inclusive: nested ranges count too */
	uint64_t stamp;            /* last activity counted, so a name nested in itself counts once */
	/* Kernels other threads of the process launched while one was open, each once. */
	uint64_t other_ns, other_kernels, other_stamp;
	/*
	 * Whether the name is a ranks' step (fold_keep, ga_ranks_is_step, or
	 * the ranks asking it): 0 not asked, 1 yes, 2 no.
	 */
	uint8_t fold_kept;
};

struct ga_ranges_mark {
	uint32_t name, domain, label;
	uint64_t count;
};

enum ga_ranges_node_kind {
	GA_RANGES_N_RANGE,           /* id: key index */
	GA_RANGES_N_NORANGE,         /* root "(no range)" */
	GA_RANGES_N_UNATTR,          /* root "(unattributed)" */
	GA_RANGES_N_KERNEL,          /* leaf, id: kernel name strtab id */
	GA_RANGES_N_MEMCPY,          /* leaf, id: copy kind */
	GA_RANGES_N_MEMSET,          /* leaf */
	GA_RANGES_N_GRAPH,           /* leaf, id: graph id */
	GA_RANGES_N_SITE,            /* under a kernel leaf, id: its launch site's strtab id */
};

/* A node of the range tree: activities aggregated by range name path. */
struct ga_ranges_node {
	uint32_t parent;           /* node index, GA_RANGES_NONE for roots */
	uint32_t kind;             /* enum ga_ranges_node_kind */
	uint32_t id;
	uint32_t child, next;      /* first child, next sibling (after finish) */
	uint64_t instances;        /* ranges: instances; leaves: activities */
	uint64_t gpu_ns, acts, kernels;   /* the whole subtree (the node's own until finish) */
	uint64_t other_ns, other_kernels, other_stamp;  /* as the key's, per name path */
};

/* What an activity was attributed to: see ga_ranges_attribute(). */
struct ga_ranges_attr {
	uint32_t inner;            /* range index, GA_RANGES_NONE, GA_RANGES_UNATTR or
				      GA_RANGES_FOLDED */
	uint64_t t;                /* when it was launched (API start) */
	uint32_t tid;              /* the launching thread, GA_RANGES_NONE unknown */
	uint32_t node;             /* GA_RANGES_FOLDED: the innermost range's tree node */
	/*
	 * Folded: the innermost ranges open on other threads of the process
	 * when it was launched, as the fold coded them (ranges.c CODE_PAIR),
	 * GA_RANGES_NONE none (ranges.h: Other threads).
	 */
	uint32_t others;
	/*
	 * Folded, where the launching thread's ranges do not nest: the
	 * index + 1 of the keys of its ranges open then (ranges.c CODE_WALK),
	 * counted in place of node's name path; 0 else.
	 */
	uint32_t walk;
	/* Folded: its launch is known (where a kept range's attribution has tid). */
	uint32_t launched;
};

struct ga_ranges_thread {
	uint32_t lo, hi;           /* its ranges: ranges[lo..hi) */
};

/* An activity correlation's launch: see corr codes in ranges.c. */
struct ga_ranges_corr {
	uint64_t t;                /* start of the earliest API record, UINT64_MAX none */
	uint32_t tid;              /* the thread of that API record */
	uint32_t code;             /* 0: no activity; else the innermost range at t, coded */
};

/* One NVTX mark, kept when the index is asked for them (keep_marks). */
struct ga_ranges_mark_event {
	uint64_t t;
	uint32_t proc, tid;
	uint32_t mark;             /* index into marks */
	uint32_t reserved;
};

/* A mark spilled (ga_ranges spill), key its index: read back in order. */
struct ga_ranges_mark_srec {
	uint64_t key;
	struct ga_ranges_mark_event e;
};

/* A recent node lookup: (parent + 1, kind << 32 | id) -> node; a == 0: empty. */
struct ga_ranges_nref {
	uint64_t a, b;
	uint32_t node;
};

#define GA_RANGES_NREF_CACHE 256

/*
 * Correlation ids count up from 1 in a process: arrays by id beat a hash.
 * While the traces are scanned, 8 bytes an id: x, 0 no activity of the
 * id, 1 no API record, else the launching thread's index in tids + 2; and
 * t, the start of its launching API call, less its block's base (blocks
 * of GA_RANGES_TBLOCK ids; a block whose times span more than 2^32 ns
 * keeps them whole, in wide).  Once the ranges are known, each id's
 * innermost range, coded (ranges.c), in code; or, where neither the
 * launching thread nor the time is needed again (resolve_proc() in
 * ranges.c), in x alone, the times freed: 4 bytes an id.
 */
#define GA_RANGES_TBLOCK 4096
/*
 * In x, a trace scanned in the model's read with launches asked (one_pass,
 * want_launches): an API call's thread and time kept for its id before
 * any activity of it came (ranges.c ahead_api()).
 */
#define GA_RANGES_XPEND (1u << 31)
/*
 * Those launches kept for the last GA_RANGES_LWIN correlation ids of a
 * process (ring, below): its first ids by id, then, once an id reaches
 * GA_RANGES_LWIN, id j in slot j % GA_RANGES_LWIN, each block of slots
 * holding the ids of one generation (j >> GA_RANGES_LWIN_BITS, gen): a
 * block taken by a newer generation is emptied first (ids that jump past
 * GA_RANGES_LWIN before half of it came go to the hash, corr_map, instead:
 * ranges.c launch_slot()).  An activity whose call is that many ids older
 * than the newest id read has no launch (ga_ranges lwin_lost counts them):
 * 8 bytes a slot, 32 MiB at most a process however many ids it had.
 */
#define GA_RANGES_LWIN_BITS 22
#define GA_RANGES_LWIN (1u << GA_RANGES_LWIN_BITS)
struct ga_ranges_dense {
	uint32_t *t;     /* NULL once compacted */
	uint64_t *base;  /* per block, UINT64_MAX none yet */
	uint64_t **wide; /* per block, NULL where t holds its times */
	uint32_t *x;
	uint32_t *code; /* resolved and not compacted */
	size_t n, cap;  /* cap: a multiple of GA_RANGES_TBLOCK */
	/*
	 * Launches of a trace read once (ranges.c ahead_api()) past
	 * GA_RANGES_LWIN ids: per block of slots, the generation its ids
	 * are of (n == cap == GA_RANGES_LWIN then); NULL before.
	 */
	uint16_t *gen;
	size_t nact; /* ids an activity put here (ranges.c dense_takes()) */
};

/* GPU work of the activities launched innermost in ranges of one name path (ga_ranges_account). */
struct ga_ranges_self {
	uint64_t gpu_ns, acts, kernels;
};

struct ga_ranges {
	/*
	 * Set by the caller before the scan to put launch sites under the
	 * tree's kernels (report --tree): a kernel's site strtab id, 0 none,
	 * GA_STR_NOMEM out of memory.  Activities are then counted one by one.
	 */
	uint32_t (*site_of)(void *ctx, const struct ga_act *a);
	void *site_ctx;
	struct ga_ranges_range *ranges;   /* by (proc, tid, start, end descending) */
	size_t nranges, capranges;
	struct ga_ranges_detail *details; /* by range index, with keep_details; else NULL */
	size_t capdetails;
	/*
	 * Per range: 1 when every range on its parent chain ends no earlier
	 * than it does (nesting), so that all of them are open wherever it is;
	 * the activities launched in such a range are summed in self, by the
	 * range's tree node (its name path, the keys of its chain), and
	 * counted into the keys of that path once, at finish, instead of each
	 * walking the chain (deep nesting made that cost depth x activities).
	 */
	uint8_t *nested;
	size_t capnested;
	struct ga_ranges_self *self; /* per tree node, made on first use */
	size_t nself;
	struct ga_ranges_key *keys;
	size_t nkeys, capkeys;
	struct ga_map key_map;     /* (domain, name) -> key index */
	/*
	 * PyTorch's emit_nvtx() names each op's range "NAME, seq = N, op_id =
	 * M[, sizes = [...]][, input_op_ids = [...]]", a name of its own: keys
	 * go by the name without its seq, op_id and input_op_ids (group_name(),
	 * ranges.c), the op's; each kept range its name as recorded in raw
	 * (ga_ranges_name()), 0 where it is its key's.
	 */
	uint32_t *raw;
	size_t capraw;
	struct ga_ranges_mark *marks;
	size_t nmarks, capmarks;
	struct ga_map mark_map;
	struct ga_ranges_thread *threads;
	size_t nthreads, capthreads;
	struct ga_map thread_map;  /* (proc, tid) -> thread index */
	struct ga_ranges_corr *corrs; /* of large correlation ids (corr_map) */
	size_t ncorrs, capcorrs;
	struct ga_ranges_dense *dense; /* per process: correlation -> its launch */
	/* dense where launches are asked (want_launches), else NULL: ga_ranges_launch_of() */
	const struct ga_ranges_dense *launches;
	uint32_t *tids;                /* launching threads of dense's x */
	size_t ntids, captids;
	struct ga_map tid_map;     /* (proc, tid) -> index in tids */
	struct ga_map corr_map;    /* (proc, correlation) -> corr index + 1, large ids */
	struct ga_map gnode_map;   /* (proc, graph node) -> range index + 1, UINT32_MAX none */
	/*
	 * Spilled: graph nodes captured in a range, whose index is known only
	 * when the ranges are read back in range order (ga_ranges_spilled_index());
	 * spill_gid: (proc, range id) -> that index, UINT32_MAX not yet.
	 */
	struct ga_ranges_gnode *spill_gn;
	size_t nspill_gn, capspill_gn;
	struct ga_map spill_gid;
	struct ga_ranges_node *nodes;
	size_t nnodes, capnodes;
	struct ga_map node_map;    /* (parent + 1, kind << 32 | id) -> node index */
	/* Every activity looks its leaf up: a few kernels make most of them. */
	struct ga_ranges_nref nref[GA_RANGES_NREF_CACHE];
	uint32_t root;             /* first root of the tree (after finish) */
	uint8_t *proc_ranges;      /* per process: it has ranges */
	size_t nprocs;
	uint32_t proc_base;        /* model process of the first file scanned */
	uint64_t serial;
	uint64_t acts, in_range, no_range, unattributed;  /* activities accounted */
	uint64_t other_kernels;    /* kernels counted into other threads' ranges */
	uint64_t other_skipped;    /* kernels of processes with too many threads of ranges */
	/* Activities of a trace read once whose calls the launches' ring had let go (dense gen). */
	uint64_t lwin_lost;
	uint64_t unterminated;
	int indexed;
	/*
	 * No ranges and nothing filtered: every activity is "(no range)" and
	 * ga_ranges_finish() takes the tree's counts from the model's totals
	 * instead of ga_ranges_account() being called per activity.
	 */
	int from_model;
	/*
	 * Asked before the scan: launches (every activity's API call, for
	 * API-to-activity flows; 16 bytes per correlation id of processes
	 * that traced API calls; a trace scanned in the model's read keeps
	 * each call in dense by its id as it comes, GA_RANGES_XPEND until
	 * its activity does, with no ring between: ga_ranges_launch_of(),
	 * inline, is a few loads), marks (each mark, 24 bytes each) and
	 * details (each range's, 24 bytes each).
	 */
	int want_launches, keep_marks, keep_details;
	/*
	 * With want_launches, asked before the scan: launches only of the
	 * processes whose ranges the scan read (the SQLite export's spilled
	 * ranges, views/tracks.c ga_range_layout_innermost()); ga_ranges_launch()
	 * of any other process finds none.
	 */
	int launches_ranged;
	/*
	 * Asked before the scan, not folded (the Chrome, Perfetto and SQLite
	 * exports, views/tracks.c): each range and its details go to spilled, an
	 * external sort by start (struct ga_ranges_srec: 104 bytes a range,
	 * packed where spilled), instead of ranges, which stays
	 * empty: memory does not grow with the ranges.  nspilled: their count.
	 */
	int spill;
	/*
	 * Spilling given up (then every range kept): PyTorch's op ranges in a
	 * process with Python frames, whose seqs launch sites read through
	 * each activity's range (sites.c nvtx_seqs()), as the fold gives up.
	 */
	int spill_gave_up;
	struct ga_ranges_ix ix;
	struct ga_xsort spilled;
	uint64_t nspilled;
	uint32_t spill_proc, spill_tid; /* the first spilled range's thread */
	int spill_threads;              /* spilled ranges of another thread too */
	/* So do the marks, with keep_marks: in the order read (ga_ranges_next_mark()). */
	struct ga_xsort marks_spilled;
	/*
	 * Asked before the scan (summaries, which carry each name's CPU
	 * durations): each key's durations, end - start of each range, in
	 * cpu[key], cpu_limit of them exactly (model/quantile.h; 0 the
	 * default), as they come, folded or not.
	 */
	int keep_cpu;
	uint64_t cpu_limit;
	struct ga_quant *cpu;
	size_t capcpu;
	/*
	 * Asked before the scan: a trace without NVTX, whose scan only pairs
	 * copies and finds the first time, is scanned in the model's read of
	 * it instead (ga_ranges_ahead(), bound to the model's look-ahead), so
	 * that it is decoded once.  The look-ahead is GA_MODEL_AHEAD chunks:
	 * legs of a staged copy further apart than that are not paired, and
	 * with launches, an activity whose API call comes that many chunks
	 * after it has none (ga_ranges_launch() is asked as the model reads
	 * the activity); first_ns then covers only the traces read twice
	 * (model/analysis.h: first_ns).
	 */
	int one_pass;
	/*
	 * Asked before the scan (report; with one_pass and fold): a single
	 * trace with NVTX whose CONFIG comes before its other records and
	 * says API calls were traced is not read whole first: its scan
	 * rides in the model's read of it (paced, ahead_procs 2), so that it
	 * is decoded once.  The model reads each chunk once the launches of
	 * its activities are coded (the reader's pace: read/reader.h), the
	 * chunks in between held decoded, GA_RANGES_PACE_HOLD bytes of them
	 * at most.  Where the fold gives up in that read, or the held chunks
	 * would pass that, the read stops and the model says to build again
	 * without it (model.h ahead_retry).
	 */
	int pace;
	size_t pace_hold;         /* bytes held at most, 0: GA_RANGES_PACE_HOLD (tests) */
	uint64_t pace_recs;       /* records after an outermost range before it may fold
				      (with two newer), 0: ranges.c FOLD_PACE_RECS (tests) */
	uint64_t fold_quiet;      /* records after a thread's last range before it is taken to
				      hold none open, 0: ranges.c FOLD_QUIET (tests) */
	uint64_t fold_lag;        /* ns a fold stays behind the newest times, 0: two of the
				      trace's flush intervals, UINT64_MAX: none (tests) */
	int paced;                /* a trace was left to the paced read */
	/*
	 * The paced read's fold gave up where a fold before the model's read
	 * gives up too (it had folded the same ranges): built again, keep
	 * every range from the start (analysis.h no_fold).
	 */
	int fold_lasting;
	uint64_t paced_recs;      /* its records the scan read (and noted) before CONFIG */
	struct ga_reader_pace pc; /* the model's read of it, paced by its scan */
	/*
	 * Asked before the scan where nothing reads single ranges after it
	 * (no launches, marks or details, no filter, no launch sites in the
	 * tree; a summary's CPU durations are kept as they come, keep_cpu):
	 * fold.  A file's ranges then fold into the table
	 * and the tree as they close, once FOLD_ROOTS (ranges.c) newer
	 * outermost ranges have come, and with them the launches inside them,
	 * each launch's innermost range's tree node written to a temporary
	 * file by correlation id (4 bytes an id on disk, 1 MiB of them in
	 * memory); what stays in memory is the open end of the trace, not the
	 * ranges and launches before it.  Only a file's first range stays in
	 * ranges, with no parent; the ranges fold_keep() names (the ranks'
	 * steps) are kept, 24 bytes each, the newest GA_RANGES_STEPS_MEM in
	 * memory and the others in a temporary file, until the ranks take
	 * them (ga_ranges_each_step(), ga_ranges_drop_steps()).
	 * Ranges on several threads of a process (at most FOLD_THREADS,
	 * ranges.c) fold each thread's apart, up to a time by which every
	 * thread's are taken to be known, and a launch made while a range of
	 * another thread was open is coded with that range's tree node too
	 * (while the process has ranges on GA_RANGES_OTHER_THREADS threads at
	 * most: Other threads, above).
	 * A fold stays two of the trace's flush intervals behind the newest
	 * range end or call start (fold_lag), as the recorder hands ranges and
	 * calls over once an interval.  Graph nodes' kernels go by the code of
	 * the range their node names, taken as it is placed in the tree.
	 * Ranges of a thread that do not nest (two domains, start/end ranges)
	 * fold in groups that overlap, and a launch whose thread's open
	 * ranges are not its innermost range's name path is coded with them
	 * (ranges.c CODE_WALK), as ga_ranges_walk() reads them (graph nodes
	 * too, from their range's start).  Where folding cannot give what
	 * keeping every range gives (a range or launch that comes after the ranges
	 * around it folded, more than FOLD_THREADS threads of ranges, a graph
	 * node naming a range that does not come or folded before its record,
	 * paced a node's record after its kernels, GPU samples after ranges
	 * of a trace whose CONFIG did not ask for them (else its ranges go to
	 * gsw as they come), PyTorch's op ranges in a process with Python frames (sites.c reads
	 * their seq), more than FOLD_PENDING launches waiting), the scan
	 * starts again keeping every range (fold_why says why): never a
	 * different result, only more memory.
	 */
	int fold;
	/*
	 * Folding, PyTorch's emit_nvtx() op names interned as their op's, each
	 * call's string not kept (strtab.h group_ops): where nothing but the
	 * folded table and tree reads a range's recorded name.  One read as
	 * anything but a range's name gives the fold up.
	 */
	int group_ops;
	int (*fold_keep)(const char *name);
	int folded;                /* the scan folded: ga_ranges_attribute() reads the codes */
	/*
	 * Folded: the ranges fold_keep() named, as they folded
	 * (ga_ranges_each_step()): the first nfiled in the temporary file
	 * steps_fd1 - 1, the newer nsteps (GA_RANGES_STEPS_MEM at most,
	 * unless no temporary file could be made) in steps.
	 */
	struct ga_ranges_step *steps;
	size_t nsteps, capsteps;
	int steps_fd1;             /* the file's descriptor + 1, 0: none yet */
	uint64_t nfiled;
	int steps_nofile;          /* no temporary file could be made: all in steps */
	const char *fold_why;      /* why a fold asked for was given up, NULL none */
	void *fstate;              /* the fold's state and codes (ranges.c) */
	/*
	 * Folded, the ranges of files with GPU samples (their CONFIG asked for
	 * them, or the samples came before any range) as windows for the
	 * samples' averages over ranges (gpusamples.c), in an external sort by
	 * start: memory bounded, 40 bytes a range on disk.
	 */
	struct ga_xsort gsw;
	uint8_t *ahead_procs;      /* per process: scanned in the model's read */
	void *ahead;               /* that scan's state (ranges.c) */
	struct ga_ranges_mark_event *mark_events;
	size_t nmark_events, capmark_events;
	uint64_t first_ns;         /* earliest time of any record the scan saw, UINT64_MAX none */
	char err[320];
};

/*
 * The model's look-ahead (model.h's struct ga_ahead, ctx nx) of process
 * proc: the scan of a trace without NVTX that ga_ranges_scan() left for
 * the model's read (one_pass), its context in *actx and the record types
 * it reads in *types (bit 1 << type), and in *pace how the model's read
 * waits for it where it is paced (else NULL); else NULL.
 */
ga_reader_fn ga_ranges_ahead(void *nx, uint32_t proc, void **actx, uint64_t *types,
			     const struct ga_reader_pace **pace);

/* Decoded chunks a paced scan holds for the model at most (ranges.h pace). */
#define GA_RANGES_PACE_HOLD ((size_t)64 << 20)

/* Non-zero when the ranges nx (a struct ga_ranges) left a trace to the paced read. */
int ga_ranges_paced(const void *nx);

void ga_ranges_init(struct ga_ranges *nx);
/* The steps a folded scan holds in memory; past them, they go to a temporary file. */
#define GA_RANGES_STEPS_MEM 4096

/*
 * Calls fn(ctx, step) for each step of a folded scan (fold_keep), in the
 * order they folded: by file, and in a file by start, the longer first
 * (each range enclosing the ranges it holds folds before them), those of
 * one thread (steps on several threads of a process may come out of that
 * order: the ranks sort them).  Returns
 * 0, fn's value where it is non-zero, or -1 where the temporary file
 * cannot be read (nx->err says so).
 */
int ga_ranges_each_step(struct ga_ranges *nx, int (*fn)(void *ctx, const struct ga_ranges_step *st),
			void *ctx);
/* Frees the folded scan's steps once the ranks took them: nothing else reads them. */
void ga_ranges_drop_steps(struct ga_ranges *nx);
void ga_ranges_free(struct ga_ranges *nx);

/* A trace to scan: the file at path, or len bytes at buf (path names them). */
struct ga_ranges_src {
	const char *path;
	const void *buf;
	size_t len;
	int64_t shift;             /* clock correction of its times (model/align.h) */
};

/*
 * Scan traces for ranges, marks, graph nodes and the API records of
 * activities, before the model reads them: they must then be added to m in
 * this order, as its next processes.  Reads each file once: an API record
 * seen before its correlation's activity waits in a ring of the last 2^20
 * correlation ids (an activity whose call is older than that is
 * unattributed), and the innermost range of each launch is looked up once
 * its file's ranges are known, before the next file is read.  Files that
 * cannot be read are left for the model to report.  Returns 0, or -1 when
 * memory runs out (nx->err says so).
 */
int ga_ranges_scan(struct ga_ranges *nx, struct ga_model *m, const struct ga_ranges_src *src,
		 size_t n);

/* Correlation ids from here on are kept in a hash (corr_map), below it by id (dense). */
#define GA_RANGES_CORR_DENSE (1u << 26)

/* The launch time of id j of d (x[j] >= 2; its times not compacted). */
static inline uint64_t ga_ranges_time_get(const struct ga_ranges_dense *d, size_t j)
{
	const uint64_t *w = d->wide[j / GA_RANGES_TBLOCK];

	return w ? w[j % GA_RANGES_TBLOCK] : d->base[j / GA_RANGES_TBLOCK] + d->t[j];
}

/* ga_ranges_launch_of() of an id its process's dense ids do not hold: the hash (corr_map). */
int ga_ranges_launch_big(const struct ga_ranges *nx, uint32_t proc, uint32_t corr, uint32_t *tid,
			 uint64_t *t);

/*
 * With want_launches: the API call that launched correlation corr of
 * process proc (its thread and start; the earliest API record of the
 * correlation, where an activity of it was seen), 1 when the traces have
 * it, else 0.  Inline: the Chrome and Perfetto exports ask it for each
 * activity and API call; an id held by id or in the ring is a few loads.
 */
static inline __attribute__((always_inline)) int
ga_ranges_launch_of(const struct ga_ranges *nx, uint32_t proc, uint32_t corr, uint32_t *tid,
		    uint64_t *t)
{
	const struct ga_ranges_dense *d = nx->launches;
	uint32_t x, pi = proc - nx->proc_base; /* below proc_base: wraps past nprocs */

	if (!d || pi >= nx->nprocs)
		return 0;
	/* Launches keep their times (t). */
	d += pi;
	if (d->gen) {
		/* A ring (ga_ranges_dense): the id's slot, if its block holds its generation. */
		uint32_t j = corr & (GA_RANGES_LWIN - 1);

		if (d->gen[j / GA_RANGES_TBLOCK] != corr >> GA_RANGES_LWIN_BITS)
			return ga_ranges_launch_big(nx, proc, corr, tid, t);
		corr = j;
	} else if (corr >= d->n) {
		/* Large ids, and in a trace read once ids that jumped ahead: the hash. */
		return ga_ranges_launch_big(nx, proc, corr, tid, t);
	}
	/* x below 2 (no activity, or no call) or pending (GA_RANGES_XPEND): none. */
	if ((x = d->x[corr]) - 2 >= GA_RANGES_XPEND - 2)
		/* 0: its activity's id may have gone to the hash (ranges.c dense_takes()). */
		return !x && nx->ncorrs && ga_ranges_launch_big(nx, proc, corr, tid, t);
	*tid = nx->tids[x - 2];
	*t = ga_ranges_time_get(d, corr);
	return 1;
}

/* ga_ranges_launch_of() of an activity's process and correlation. */
static inline int ga_ranges_launch(const struct ga_ranges *nx, const struct ga_act *a,
				   uint32_t *tid, uint64_t *t)
{
	return ga_ranges_launch_of(nx, a->proc, a->correlation, tid, t);
}

/*
 * Spilled ranges (spill) read back in range order by an export that names
 * them by index (views/tracks.c ga_range_layout_index()): range r has
 * index i, and the graph nodes captured in it go to it once every range
 * had its index (ga_ranges_spilled_indexed(): gnode_map, as when kept).
 */
void ga_ranges_spilled_index(struct ga_ranges *nx, const struct ga_ranges_range *r, uint32_t i);
void ga_ranges_spilled_indexed(struct ga_ranges *nx);

/* Range i's key: kept, or spilled and served (ix; a read error: key 0, ix.err set). */
uint32_t ga_ranges_key_of(const struct ga_ranges *nx, uint32_t i);

/* The range an activity was launched in (see the top of this file). */
struct ga_ranges_attr ga_ranges_attribute(const struct ga_ranges *nx, const struct ga_act *a);

/*
 * Call fn(ctx, range index) for each range open at the attribution's
 * launch, the innermost first.  Stops and returns fn's value when that is
 * non-zero, else returns 0.
 */
int ga_ranges_walk(struct ga_ranges *nx, const struct ga_ranges_attr *at,
		 int (*fn)(void *ctx, uint32_t range), void *ctx);

/*
 * Count a kept activity into the range table and tree; returns the
 * strtab id of its innermost range's label (0 none), or GA_STR_NOMEM.
 */
uint32_t ga_ranges_account(struct ga_ranges *nx, const struct ga_act *a,
			 const struct ga_ranges_attr *at);

/*
 * After the model has read everything (and ga_model_finish()): with
 * from_model, count the activities into the tree; link the tree, biggest
 * first; hide_empty leaves out nodes no kept activity reached (under a
 * filter).  Returns 0, or -1 when memory runs out.
 */
int ga_ranges_finish(struct ga_ranges *nx, const struct ga_model *m, int hide_empty);

/*
 * Link the tree (each node's child and next), biggest first, from nodes
 * whose counts are their whole subtree's: ga_ranges_finish() ends with it,
 * and a report of summaries (model/summary.c) calls it on the nodes they
 * carry.  hide_empty as above.  Returns 0, or -1 when memory runs out.
 */
int ga_ranges_link(struct ga_ranges *nx, const struct ga_model *m, int hide_empty);

/* Key indices by GPU time, then CPU time, descending; NULL out of memory. */
uint32_t *ga_ranges_order_keys(const struct ga_ranges *nx, const struct ga_model *m);

/* Range i's name as recorded (a key's name may leave PyTorch's seq and op_id out). */
static inline uint32_t ga_ranges_name(const struct ga_ranges *nx, size_t i)
{
	return nx->raw && i < nx->nranges && nx->raw[i] ? nx->raw[i] : nx->keys[nx->ranges[i].key].name;
}

/*
 * The marks kept (keep_marks), in the order read, from *i (0 first):
 * NULL at the end, or when the spilled ones cannot be read back
 * (marks_spilled.err says why).  Valid until the next call.
 */
const struct ga_ranges_mark_event *ga_ranges_next_mark(struct ga_ranges *nx, size_t *i);

/* A spilled range's name as recorded (ga_ranges_name()). */
static inline uint32_t ga_ranges_srec_name(const struct ga_ranges *nx,
					   const struct ga_ranges_srec *x)
{
	return x->raw ? x->raw : nx->keys[x->r.key].name;
}

/* The details of range i: kept with keep_details, else all 0. */
static inline struct ga_ranges_detail ga_ranges_detail_of(const struct ga_ranges *nx, size_t i)
{
	struct ga_ranges_detail d = { 0 };

	return nx->details && i < nx->nranges ? nx->details[i] : d;
}

/* The "(no range)" and "(unattributed)" roots, which sort last. */
static inline int ga_ranges_pseudo_root(const struct ga_ranges_node *n)
{
	return n->kind == GA_RANGES_N_NORANGE || n->kind == GA_RANGES_N_UNATTR;
}

#endif
