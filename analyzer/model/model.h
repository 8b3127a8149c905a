/*
 * The analyzer's model of one or more traces (processes of one job): what
 * ran where, for how long, aggregated while the reader streams records.
 * Per-record memory is bounded: 4 bytes per kernel and per API call
 * (medians), busy time as a streamed union (busy.h), and the rows of a
 * timeline only when a caller asks for one: 32 bytes each, in a bounded
 * run sorted and spilled to a temporary file when full (base/xsort.h).  Exporters that need every activity
 * get them through hooks as they stream by.  Runs offline only.
 */
#ifndef GA_ANALYZER_MODEL_H
#define GA_ANALYZER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/busy.h"
#include "model/quantile.h"
#include "gpuprof/trace.h"
#include "read/reader.h"
#include "base/sort.h"
#include "base/xsort.h"
#include "model/strtab.h"
#include "base/util.h"

enum ga_act_kind {
	GA_ACT_KERNEL,
	GA_ACT_MEMCPY,
	GA_ACT_MEMSET,
	GA_ACT_GRAPH,
	GA_ACT_KIND_COUNT
};

#define GA_NO_RANK UINT32_MAX
#define GA_COPY_KIND_MAX 256
/*
 * A peer copy between GPUs without peer access, which the driver stages
 * through the host: CUPTI reports it as a DtoH leg on the source device and
 * an HtoD leg on the destination, both with the copy's bytes and the API
 * call's correlation id.  The model counts such a pair as one copy of this
 * kind (an analyzer-side kind; traces never hold it).
 */
#define GA_COPY_STAGED_PEER 255
/*
 * Correlation ids of a process a copy leg, or a copy function's call,
 * waits for the rest of its correlation (a power of two): the model keeps
 * them in a window of this many slots, slot correlation % GA_CORR_WINDOW,
 * and one of an id this many or more later takes the slot.
 */
#define GA_CORR_WINDOW (1u << 16)

/* One GPU activity, ids resolved to the model's; handed to hooks. */
struct ga_act {
	uint64_t start, end;       /* end >= start */
	uint64_t bytes;            /* memcpy, memset */
	uint64_t graph_node;
	uint32_t kind;             /* enum ga_act_kind */
	uint32_t proc;             /* index into model procs */
	uint32_t dev;              /* index into model devs */
	uint32_t devrow;           /* index into model devrows (process, device) */
	uint32_t label;            /* index into model labels */
	uint32_t name;             /* strtab id of the mangled kernel name, else 0 */
	uint32_t device_id, context, stream, correlation, graph_id;
	uint32_t copy_kind;
	uint32_t nvtx;             /* strtab id of the innermost NVTX range's label, 0 none */
	uint32_t nvtx_range;       /* kernels: innermost NVTX range index (ranges.h) + 1, 0 none */
	/* The record it came from (launch configuration, memory kinds), or NULL. */
	const struct gp_rec *rec;
};

/* One API call, handed to hooks. */
struct ga_api_call {
	uint64_t start, end;
	uint32_t proc, tid, name, correlation, cbid, domain;
	int32_t ret;
};

struct ga_model;

struct ga_hooks {
	void *ctx;
	/* Return non-zero to stop reading (an output error, say). */
	int (*act)(void *ctx, struct ga_model *m, const struct ga_act *a);
	int (*api)(void *ctx, struct ga_model *m, const struct ga_api_call *c);
};

/*
 * An observer beside the hooks (launch call stacks: sites.h).  rec sees
 * the records of types the model skips, and API records after the model
 * counted them, and may resolve their string ids
 * with ga_model_fstr(); act sees every kept GPU activity, before
 * hooks.act.  Both return non-zero to stop reading (out of memory).
 */
struct ga_observer {
	void *ctx;
	int (*rec)(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec);
	int (*act)(void *ctx, struct ga_model *m, const struct ga_act *a);
};

/*
 * The model's own analyses beside it (launch latency, launch
 * configurations, ranks, ...) observe it apart from the chain in obs,
 * registered by ga_model_observe(), so that a record or an activity
 * reaches only those with something to do with it: records by type (each
 * names the GP_REC_* types it reads, at most GA_MODEL_FAN of them read
 * records), activities by process: each that reads activities (at most
 * GA_MODEL_FAN) may say, by idle, which processes' activities it has
 * nothing to do with, as far as the process's records read so far say
 * (asked at a file's first activity, and again at the first after a
 * CONFIG or PROCESS record); the model then skips it for that file's
 * activities, adding the kernels skipped to *idle_kernels where that is
 * set (ga_model_act_idle()).  The model calls them after the chain in
 * obs, one after another, the last registered first.  Same contract as
 * struct ga_observer.
 */
#define GA_MODEL_FAN 8
struct ga_fan_rec {
	void *ctx;
	int (*fn)(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec);
};
struct ga_fan_act {
	void *ctx;
	int (*fn)(void *ctx, struct ga_model *m, const struct ga_act *a);
	int (*idle)(void *ctx, const struct ga_model *m, uint32_t proc);
	uint64_t *idle_kernels;
};

/*
 * A look-ahead beside the model's read of a file, over the same decoded
 * chunks (read/reader.h's ga_reader_read_ahead), GA_MODEL_AHEAD chunks
 * before the model: begin(ctx, proc, &actx, &types) returns the reader
 * callback of file proc's look-ahead, to be called with actx for the
 * record types in types (bit 1 << type), or NULL for none; pace, where
 * set, paces the model's read by it (ga_reader_read_paced()).  The NVTX scan
 * folds its read of traces without NVTX in here (model/ranges.h), so that
 * such a trace is decoded once.
 */
struct ga_ahead {
	void *ctx;
	ga_reader_fn (*begin)(void *ctx, uint32_t proc, void **actx, uint64_t *types,
			      const struct ga_reader_pace **pace);
};

#define GA_MODEL_AHEAD 8

struct ga_file {
	char *path;
	struct ga_read_info info;
	uint32_t proc;
	/*
	 * The first PROCESS record's host and the first CLOCK_SYNC's offset
	 * (realtime - trace clock), as align.c's scan of the file reads them:
	 * a summary of one trace takes them from here (summary.c), not from a
	 * second read.  Here, not in struct ga_proc, which the hot paths index.
	 */
	int first_process, first_sync;
	int64_t first_sync_ns;
	char first_host[128];
};

struct ga_proc {
	uint32_t file;
	uint32_t pid, ppid;
	uint32_t host, exe, cmdline; /* strtab ids */
	uint32_t rank;             /* GA_NO_RANK when unknown */
	uint32_t cupti_version, cuda_driver, clock_id;
	uint64_t start_ns, end_ns; /* process start; END's end_ns, 0 without END */
	uint64_t end_records, end_lost;
	uint64_t lost_sum;         /* this file's LOST records, all causes */
	uint64_t chunk_lost;       /* this file's chunk-header counts */
	int has_process, finished, has_config;
	struct gp_rec_config config;
	uint64_t clock_syncs;
	uint64_t activities, api_calls;
	size_t nwindows;           /* its capture ranges (model windows[]) */
	uint64_t gaps, gap_ns;     /* hand-overs to the program's CUPTI profiler, their time */
	uint64_t gap_start;        /* trace clock of an open one */
	int gap_open;
	int has_flight;            /* a flight-recorder dump: flight holds what it covers */
	struct gp_rec_flight flight;
};

/* A capture range: a window the recorder was told to record. */
struct ga_window {
	uint64_t start, end;       /* trace clock of its process */
	uint32_t proc, kind;       /* GP_CAPTURE_* */
	uint32_t name;             /* strtab id of the NVTX range name, else 0 */
};

struct ga_device {
	uint32_t proc;             /* first process that used it */
	uint32_t host;             /* strtab id */
	uint32_t id;               /* CUDA ordinal in that process */
	uint32_t name;             /* strtab id, 0 if never described */
	uint8_t uuid[16];
	int described, dead;       /* dead: a placeholder merged into another */
	uint32_t cc_major, cc_minor, sm_count, core_clock_khz, l2_size, flags;
	uint64_t global_mem, mem_bandwidth;
	/* Per-SM limits from the trace (0: an older trace; see ga_model_limits). */
	uint32_t max_warps_per_sm, max_blocks_per_sm, max_smem_per_sm, max_regs_per_sm;
	struct ga_busy busy;       /* union of activity intervals */
	uint64_t busy_ns;          /* its length, set by ga_model_finish() */
	int busy_bound;            /* busy_ns is a lower bound: summaries of a GPU
				      several parts used, one past the intervals
				      they carry (model/summary.h) */
	int shared;                /* met in the files of several processes (busy_shared) */
	uint64_t count, total;     /* summed up by ga_model_finish() */
};

/* A device as one process saw it: the rows of the device summary. */
struct ga_devrow {
	uint32_t proc, dev;
	uint32_t id;               /* CUDA ordinal in this process */
	uint32_t label;            /* strtab id: "cuda:0", or "cuda:0 [1234]" */
	uint64_t count, total;
};

#define GA_KEY_NONE UINT32_MAX

/*
 * Kernel statistics.  Durations go to durs (model/quantile.h): exact up to
 * the model's quant_limit, then a histogram; med, p90 and p99 are set by
 * ga_model_finish() from it, and med_est says they are estimates.
 */
struct ga_kstat {
	uint32_t name;             /* strtab id, mangled */
	uint32_t label;            /* label index: "kernel <short name>" */
	uint64_t count, total, min, max, med, in_graph;
	uint64_t p90, p99;         /* set by ga_model_finish() */
	uint64_t stddev;           /* set by ga_model_finish() */
	struct ga_quant durs;
	int med_est;               /* med, p90, p99 are estimates (histogram or summary) */
};

/* Per activity label: the CUDA activity summary. */
struct ga_label {
	uint32_t str;
	uint64_t count, total;     /* summed up by ga_model_finish() */
};

struct ga_memstat {
	uint64_t count, bytes, total;
	uint32_t label;            /* label index + 1, 0 until first use */
};

/*
 * Memory operations by kind and memory kinds, with the statistics of the
 * kernel table: copies by (copy kind, source kind, destination kind),
 * memsets by (GA_MEMOP_MEMSET, 0, memory kind).  Kinds are
 * CUpti_ActivityMemoryKind values (0 unknown, 1 pageable, 2 pinned,
 * 3 device, 4 array, 5 managed, 6 device static, 7 managed static).
 */
#define GA_MEMOP_MEMSET 254u
struct ga_memop {
	uint32_t kind, src, dst;
	uint64_t count, bytes, total, min, max, med, stddev;
	struct ga_quant durs;
	int med_est;               /* med is an estimate (histogram or summary) */
};

struct ga_gstat {
	uint32_t proc, graph_id;
	uint32_t label;            /* label index + 1, 0 until first launch */
	uint64_t launches, total;  /* whole-graph records */
	uint64_t kernels, nodes;   /* kernels carrying this graph_id; distinct nodes */
};

struct ga_astat {
	uint32_t name;             /* without CUPTI's "_v7000" version suffix */
	uint64_t count, total, min, max, med, errors, threads;
	uint64_t p90, p99;         /* set by ga_model_finish() */
	uint64_t stddev;           /* set by ga_model_finish() */
	struct ga_quant durs;
	int med_est;               /* med, p90, p99 are estimates (histogram or summary) */
};

/* A timeline row; start first: the key the rows are ordered by (base/xsort.h). */
struct ga_row {
	uint64_t start, dur;
	uint32_t label, devrow;    /* label index, devrow index */
	uint32_t nvtx;             /* as in struct ga_act */
	uint32_t pad;
};

#define GA_ROWS_RUN (1u << 19) /* timeline rows sorted in memory at once (16 MiB) */

struct ga_model {
	struct ga_strtab strs;
	struct ga_hooks hooks;
	struct ga_observer obs;
	struct ga_fan_rec fan_rec[GA_MODEL_FAN];
	uint32_t nfan_rec;
	uint8_t fan_route[GP_REC_TYPE_COUNT]; /* bit i: fan_rec[i] reads the type */
	struct ga_fan_act fan_act[GA_MODEL_FAN]; /* called the last first */
	uint32_t nfan_act;
	/* Told of each file read to its end but the last (ga_model_on_file_done). */
	struct ga_fan_done {
		void *ctx;
		int (*fn)(void *ctx, struct ga_model *m, uint32_t proc);
	} fan_done[GA_MODEL_FAN];
	uint32_t nfan_done;
	struct ga_ahead ahead;
	/*
	 * A paced look-ahead stopped the read (the fold given up, or too much
	 * held), or a shared GPU's interval came behind those its busy time
	 * retired (busy_shared): the analysis is to be built again without
	 * pacing (model/ranges.h pace), or without retiring.
	 */
	int ahead_retry;
	/*
	 * PyTorch's emit_nvtx() op names interned as their op's, each call's
	 * string not kept (strtab.h group_ops; analysis.c sets it where the
	 * NVTX ranges folded); one read as anything but a range's name sets
	 * names_lost, and the read ends in ahead_retry (built again keeping
	 * every string: analysis.h keep_op_names).
	 */
	int group_ops;
	int names_lost;
	void *reading;             /* the file being read (model.c's state), else NULL */
	const int64_t *shifts;     /* clock correction of file i's times (model/align.h) */
	size_t nshifts;
	size_t keep_rows;          /* rows to keep for a timeline; 0 none */
	int warnings_later;        /* ga_load_inputs() leaves its warnings to the caller
				      (the pool prints the merged summary's, once) */
	/*
	 * A summary's model (summary.c): the rows' medians, percentiles and
	 * deviations are the merged summary's to take from their durations;
	 * ga_model_finish() leaves them 0.
	 */
	int no_row_stats;
	/*
	 * Set when nothing needs every busy interval (the findings scan them
	 * as they retire): devices' unions retire intervals behind their
	 * streams (model/busy.h), keeping the total and span only.  May be
	 * turned on while reading (the findings do, findings.h's
	 * retire_after); never off.
	 */
	int busy_retire;
	/*
	 * A GPU of one file's process came in another file's (struct
	 * ga_device shared).  Its busy time goes on retiring, each file's
	 * closed once read (ga_model_on_file_done): files of one process's
	 * windows, one after another in time, join exactly.  Where an
	 * interval comes behind those retired (processes that used it at
	 * once; busy.h late), the read stops (ahead_retry) and is built
	 * again without retiring (analysis.h no_retire), or, where nothing
	 * written needs busy time (busy_bound_ok), it is a lower bound.
	 */
	int busy_shared;
	/*
	 * Set before reading where nothing written needs busy time (a lean
	 * export, which cannot read again what it has written): a shared
	 * GPU's interval behind those retired leaves its busy time a lower
	 * bound (struct ga_device busy_bound) instead of stopping the read.
	 */
	int busy_bound_ok;
	/*
	 * Set before reading, 0 none: the retired intervals each device keeps
	 * at most (busy.h keep_max; past it, none): a summary carries them.
	 */
	size_t busy_keep;
	/*
	 * Optional filter, asked before a GPU activity counts anywhere, with
	 * kind, proc, start, end, name, bytes, copy_kind, device_id, context,
	 * stream, correlation, graph_id and graph_node set; it may set nvtx.
	 * Returns 1 to keep, 0 to drop (counted in dropped), -1 to stop.
	 */
	int (*keep)(void *ctx, struct ga_model *m, struct ga_act *a);
	void *keep_ctx;
	uint64_t dropped;
	/*
	 * Told of each activity the keep hook dropped, which no observer sees:
	 * what waits for it may go (launch latency's calls).
	 */
	void (*on_drop)(void *ctx, const struct ga_act *a);
	void *on_drop_ctx;

	struct ga_file *files;
	size_t nfiles, capfiles;
	struct ga_proc *procs;
	size_t nprocs, capprocs;
	struct ga_device *devs;
	size_t ndevs, capdevs;
	struct ga_map gpu_map;     /* (uuid ^ host, uuid) -> described device: one GPU per host */
	struct ga_devrow *devrows;
	size_t ndevrows, capdevrows;

	struct ga_kstat *kstats;
	size_t nkstats, capkstats;
	uint32_t *str2k;           /* strtab id -> kstat index + 1, 0 none */
	size_t capstr2k;

	struct ga_label *labels;
	size_t nlabels, caplabels;
	struct ga_map label_map;   /* strtab id -> label index */

	struct ga_memstat copy[GA_COPY_KIND_MAX];
	struct ga_memstat memset_st;
	struct ga_memop *memops;
	size_t nmemops, capmemops;
	struct ga_map memop_map;   /* (kind, src << 8 | dst) -> memop index + 1 */

	struct ga_gstat *graphs;
	size_t ngraphs, capgraphs;
	struct ga_map graph_map;   /* (proc, graph_id) -> graph index */
	struct ga_map gnode_set;   /* ((proc, graph_id), node) */

	struct ga_astat *astats;
	size_t nastats, capastats;
	uint32_t *str2a;           /* strtab id -> astat index + 1 */
	size_t capstr2a;
	struct ga_map api_names;   /* display name strtab id -> astat index */
	struct ga_map api_tids;    /* (astat index, proc << 32 | tid) */
	/*
	 * Durations each kernel, API and memory row keeps exactly before its
	 * histogram (model/quantile.h): 0 GA_QUANT_EXACT_DEFAULT,
	 * GA_QUANT_NO_LIMIT all (--exact).  Set before reading.
	 */
	uint64_t quant_limit;

	struct ga_map stream_set;  /* (proc << 32 | device, context << 32 | stream) */
	struct ga_map thread_names; /* (proc, tid) -> strtab id of the thread's name */

	/*
	 * Staged peer copies, found before the model reads the records (the
	 * NVTX scan's first pass, or the look-ahead, calls
	 * ga_model_note_copy/_string/_api): the correlations in the window,
	 * and the pairs found until the model's read is done with both legs.
	 */
	struct ga_corr_slot *corr_window; /* corr_cap slots, NULL until a copy */
	uint32_t corr_cap;                /* above every id put in, or GA_CORR_WINDOW */
	struct ga_map staged;      /* (proc, correlation) -> pair index + 1 */
	struct ga_staged_pair *pairs;
	size_t npairs, cappairs;
	uint32_t pair_free;        /* index + 1 of a released pair (its file links the next) */
	uint64_t staged_pairs;
	struct ga_map copy_api_names; /* (proc, file string id) -> GA_COPY_API_* */
	/*
	 * API names looked up in copy_api_names lately: proc, name, the value
	 * found (0 none) and 1 where the entry holds one; emptied whenever a
	 * name is added.
	 */
	uint32_t copy_api_recent[64][4];
	uint32_t leg_label[2];     /* label index + 1 of the DtoH and HtoD legs */
	struct ga_memstat leg_st[2]; /* those legs as activities (activity summary) */

	struct ga_window *windows; /* in file order */
	size_t nwindows, capwindows;

	/*
	 * The timeline's rows (struct ga_row), in start order after
	 * ga_model_finish(): read them with ga_xsort_next(&m->rows).
	 */
	struct ga_xsort rows;
	size_t rows_run; /* rows a run holds; 0: GA_ROWS_RUN */
	uint64_t nrows;  /* rows kept */
	uint64_t rows_seen;

	uint64_t counts[GA_ACT_KIND_COUNT];
	uint64_t api_count;
	uint64_t records, unknown, malformed;
	uint64_t lost[GP_LOST_CAUSE_COUNT];  /* [0]: causes this reader does not know */
	uint64_t lost_records_total;
	int lost_saturated;        /* a loss count reached UINT64_MAX: counts are lower bounds */
	uint64_t gaps, gap_ns;     /* all processes' hand-overs (GP_LOST_HANDOVER marks) */
	uint64_t chunk_lost;
	uint64_t first_start, last_end;      /* span of all activities */
	uint64_t kernel_total, api_total;
	uint64_t overhead_ns, overheads;     /* CUPTI's own overhead records */
	uint64_t streams, api_threads;
	uint64_t bad_refs;         /* references to strings never defined */
	int finished;              /* ga_model_finish() ran */
	uint64_t sum_parts;        /* built from summaries: parts merged (model/summary.h) */
	int sum_no_sites;          /* one of them without launch sites (version 6 or earlier) */

	char err[320];
};

/* What a slot of the correlation window holds (ga_corr_slot.state). */
enum {
	GA_CORR_EMPTY,
	GA_CORR_CALL,              /* a copy function's call, no leg yet */
	GA_CORR_LEG,               /* one leg, waiting for the other */
	GA_CORR_PAIRED,            /* two legs that pair: model staged holds the pair */
	GA_CORR_DONE               /* legs that make no pair, or a leg the model read alone */
};

/* One correlation of the window: its first leg (a DtoH or HtoD copy) and calls. */
struct ga_corr_slot {
	uint64_t bytes, start, end;
	uint32_t proc, corr;
	uint32_t device;
	uint8_t state;             /* GA_CORR_* */
	uint8_t kind;              /* the leg's copy kind */
	uint8_t api;               /* GA_COPY_API_* of the calls noted */
};

/* A staged peer copy: its two legs' whole span. */
struct ga_staged_pair {
	uint64_t start, end;
	uint32_t file;             /* model file index + 1 of the leg that counted it, 0 */
	uint8_t legs;              /* legs seen: 2 is a pair, more is none */
	/*
	 * What the model's read made of it: 0 not yet, 1 its first leg was
	 * read as a leg of this pair, 2 both were, 3 no pair.  The first leg
	 * read decides for both, so that a look-ahead (struct ga_ahead) that
	 * sees a third leg or the call only later changes nothing read.
	 */
	uint8_t seen;
	uint8_t api;               /* GA_COPY_API_* of the calls of its correlation noted */
};

/* What the API calls of a correlation were named (ga_model_note_api). */
#define GA_COPY_API_PEER  1u       /* a copy function with "Peer" in its name */
#define GA_COPY_API_OTHER 2u       /* any other function */

/* Returns 0, or -1 when memory runs out. */
int ga_model_init(struct ga_model *m);

/*
 * Before the model reads the files (the NVTX scan's first pass): notes a
 * MEMCPY record of process proc, pairing the DtoH and HtoD legs of copies
 * staged through the host (GA_COPY_STAGED_PEER): same process and
 * correlation, one DtoH and one HtoD on different devices, same bytes, and
 * where the trace has the API call of that correlation, a name containing
 * "Peer".  Legs and calls pair within GA_CORR_WINDOW correlation ids; a
 * pair is kept until the model has read both legs.  0, or -1 out of memory.
 */
int ga_model_note_copy(struct ga_model *m, uint32_t proc, const struct gp_rec_memcpy *c);

/* Same pass: a STRING and an API record of process proc.  0, or -1 out of memory. */
int ga_model_note_string(struct ga_model *m, uint32_t proc, const struct gp_rec_string *r);
int ga_model_note_api(struct ga_model *m, uint32_t proc, const struct gp_rec_api *r);
void ga_model_free(struct ga_model *m);

/*
 * Read a trace file into the model.  Returns GA_READ_OK (see the file's
 * info for damage) or a GA_READ_E* code with m->err set to
 * "PATH: byte OFFSET: message".
 */
int ga_model_add_file(struct ga_model *m, const char *path);

/* The same from memory (tests, fuzzing); name stands for the path. */
int ga_model_add_mem(struct ga_model *m, const char *name, const void *buf, size_t len);

/*
 * After the last file: medians, busy time, labels, sorted rows.
 * Returns 0, or -1 when memory runs out.
 */
int ga_model_finish(struct ga_model *m);

/*
 * Device dev's busy time from its union (busy_ns), its span widening the
 * model's first_start and last_end (ga_model_finish() does it for every
 * device).  0, or -1 out of memory.
 */
int ga_model_busy_finish(struct ga_model *m, uint32_t dev);

/*
 * Registers one of the model's own analyses (see struct ga_fan_rec): rec
 * for the records of the types whose bits (1 << GP_REC_*) types sets,
 * act for activities; either may be NULL.  0, or -1 when GA_MODEL_FAN
 * observers of records, or of activities, are registered.
 */
int ga_model_observe(struct ga_model *m, void *ctx,
		     int (*rec)(void *ctx, struct ga_model *m, uint32_t proc,
				const struct gp_rec *rec),
		     uint64_t types,
		     int (*act)(void *ctx, struct ga_model *m, const struct ga_act *a));

/*
 * The observer of activities registered last, with ctx: idle says which
 * processes' activities it has nothing to do with; its act is not called
 * for them, and the kernels skipped are added to *kernels (NULL: not
 * counted).
 */
void ga_model_act_idle(struct ga_model *m, void *ctx,
		       int (*idle)(void *ctx, const struct ga_model *m, uint32_t proc),
		       uint64_t *kernels);

/*
 * Registers fn, called with ctx as the next file's read begins for the
 * process of the file read before it (every record of it read): what only
 * more of that process's records could join may go (its busy unions
 * close, busy.h ga_busy_close).  The model's own busy time does so then
 * too, where it retires (busy_retire; not for a summary, busy_keep).  0,
 * or -1 when GA_MODEL_FAN are registered.
 */
int ga_model_on_file_done(struct ga_model *m, void *ctx,
			  int (*fn)(void *ctx, struct ga_model *m, uint32_t proc));

/*
 * Strtab id of string id of the file being read, for an observer's rec;
 * 0 for id 0 or between files.
 */
uint32_t ga_model_fstr(struct ga_model *m, uint32_t id);

/* Text of a strtab id. */
/*
 * The device summary's name of (process, CUDA ordinal) ("cuda:0 [...]"),
 * where the model has the device, else "cuda:N": a strtab id, GA_STR_NOMEM
 * out of memory.
 */
uint32_t ga_model_device_label(struct ga_model *m, uint32_t proc, uint32_t device);

const char *ga_model_str(const struct ga_model *m, uint32_t id);

/*
 * Name of model process proc in merged views: "rank N", "rank N@host" when
 * the processes are on several hosts, with ", pid P" when another process
 * has the same rank; "P" (the pid) without a rank.  Returns buf.
 */
const char *ga_ranks_proc_name(const struct ga_model *m, uint32_t proc, char *buf, size_t n);

/* "kernel", "memcpy", "memset", "graph" (enum ga_act_kind). */
const char *ga_model_act_kind(unsigned kind);

/* "HtoD", "DtoH", ..., "AtoH", "PtoP", or "kind N". */
const char *ga_model_copy_kind(unsigned kind, char *buf, size_t n);

/* Total lost records, all causes (including chunk-header counts not
 * attributed to a cause). */
uint64_t ga_model_lost_total(const struct ga_model *m);

/* Lost records counted only in chunk headers, without a LOST record. */
uint64_t ga_model_lost_unattributed(const struct ga_model *m);

/* A loss cause (GP_LOST_*) as the exports' key ("ring_full"; 0 and unknown ones "other"). */
const char *ga_model_lost_key(unsigned cause);

/* A loss cause as the report names it ("recorder ring full"; 0 and unknown ones "unknown cause"). */
const char *ga_model_lost_name(unsigned cause);

/*
 * 1 when a loss count stopped at UINT64_MAX: sums saturate instead of
 * wrapping, so the total is never less than any sum of its causes, and
 * each is then a lower bound.
 */
int ga_model_lost_saturated(const struct ga_model *m);

/* Longest span of times a trace can plausibly have: a year. */
#define GA_MODEL_PLAUSIBLE_NS (365ull * 86400 * 1000000000)

/*
 * 1 when the traces' times cannot all be right: GPU activities, or a
 * process from recorder start to end, spanning more than
 * GA_MODEL_PLAUSIBLE_NS (a damaged or forged trace, or clocks that
 * disagree).  After ga_model_finish().
 */
int ga_model_times_implausible(const struct ga_model *m);

/* Index order of kstats / astats / labels / devrows by total, descending. */
uint32_t *ga_model_order_kernels(const struct ga_model *m);
uint32_t *ga_model_order_api(const struct ga_model *m);
uint32_t *ga_model_order_labels(const struct ga_model *m);
uint32_t *ga_model_order_memops(const struct ga_model *m);

/* "pageable", "pinned", "device", ..., "device static", "unknown". */
const char *ga_model_mem_kind(unsigned kind);

/* The same as the exports' keys: "pageable", ..., "device_static", "unknown". */
const char *ga_model_mem_kind_key(unsigned kind);

#endif
