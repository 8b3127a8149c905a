/*
 * The model layer's one entry point: everything a view reads, built from
 * the traces named on the command line.  Building is two reads of each
 * trace: an index pass (model/ranges.c: NVTX ranges, the API records that
 * place activities in them, graph nodes, staged peer-copy legs; and, when
 * a streaming view needs sites ahead, model/sites.c's stacks and frames),
 * then the aggregate pass, which builds every aggregate at once (the
 * model's activity, API, graph and device statistics, busy time, range
 * accounting, launch-site counts, memory in use, the facts of the
 * findings) while streaming views
 * see each activity through the model's hooks.  A trace recorded without
 * NVTX is read once where no view streams: its index rides as a
 * look-ahead in the aggregate pass's read (ranges.h: one_pass).  Each read
 * decodes on ga_reader_jobs threads (read/reader.h).  Nothing here prints a table; errors
 * go to stderr as "gpuprof: FILE: byte N: ...".  Runs offline only.
 */
#ifndef GA_MODEL_ANALYSIS_H
#define GA_MODEL_ANALYSIS_H

#include <stddef.h>

#include "model/align.h"
#include "model/filter.h"
#include "model/gpusamples.h"
#include "model/findings.h"
#include "model/latency.h"
#include "model/launchcfg.h"
#include "model/memuse.h"
#include "model/hwmetrics.h"
#include "model/model.h"
#include "model/ranges.h"
#include "model/ranks.h"
#include "model/sites.h"

struct ga_analysis_opts {
	unsigned stack_depth;      /* frames of a collapsed launch site */
	int symbolize;             /* look frames up in their modules' files (libdw) */
	const char *symbol_path;   /* --symbol-path: directories to look in, or NULL */
	int observe_sites;         /* count kernels into launch sites */
	int list_frames;           /* sites list their frames (JSON) */
	int sites_ahead;           /* read stacks before the activities stream (CSV) */
	size_t keep_rows;          /* rows kept for a timeline */
	uint64_t quant_limit;      /* durations a table row keeps exactly (model/quantile.h):
				      0 the default, GA_QUANT_NO_LIMIT all (--exact) */
	int launches;              /* index each activity's API call (Chrome flows) */
	int marks;                 /* keep each NVTX mark, not only their counts */
	int range_details;         /* keep each range's details (struct ga_ranges_detail) */
	int spill_ranges;          /* ranges to their external sort, not kept (ranges.h spill);
				      2: and each activity's launch found (launches) */
	int align;                 /* enum ga_align_mode: ranks' clocks by NCCL collectives */
	int two_reads;             /* scan every trace whole before the model reads it
				      (the one-pass read's reference, in tests) */
	int lean;                  /* a timeline export: no findings, launch latency,
				      launch configurations or ranks (none is written), and
				      the GPU samples without their averages over kernels */
	int pace;                  /* a single trace's NVTX scan may ride in the model's
				      read (model/ranges.h pace): ga_analysis_build() may
				      then return GA_ANALYSIS_AGAIN */
	int no_fold;               /* keep every NVTX range (ranges.h fold): where the
				      paced read's fold gave up for good (fold_lasting) */
	int no_retire;             /* busy time keeps every interval (findings.h
				      retire_after 0): where processes of traces read
				      together used a GPU at once (model.h busy_shared) */
	int keep_op_names;         /* keep every PyTorch op call's name string (model.h
				      group_ops): where one was read as another name */
	int quiet;                 /* nothing said under GPUPROF_VERBOSE (a trace of several) */
	int keep_samples;          /* a view writes each GPU sample: none is spilled
				      (model/gpusamples.h keep_samples) */
	int busy_bound_ok;         /* nothing written needs busy time (a lean export
				      of several traces): where their processes used a
				      GPU at once, its busy time is a lower bound
				      instead of a read again (model.h busy_bound_ok) */
};

/*
 * ga_analysis_build() of a paced read that stopped (model/ranges.h pace):
 * ga_analysis_again(), set up what the caller set after init again, and
 * build.
 */
#define GA_ANALYSIS_AGAIN 2

struct ga_analysis {
	struct ga_model m;
	struct ga_ranges rg;
	struct ga_sites st;
	struct ga_mx mx;           /* hardware metrics of profiled launches */
	struct ga_latency lat;     /* launch latency per kernel */
	struct ga_launchcfg lc;    /* launch configurations and occupancy */
	struct ga_ranks rk;        /* ranks of a multi-process job */
	struct ga_memuse mu;       /* memory in use per device (memory records) */
	struct ga_gpusamples gs;   /* the GPU over time: sampled metrics and telemetry */
	struct ga_align al;        /* clock corrections of the traces, by file */
	struct ga_findings fd;     /* what to fix (findings.h): ga_analysis_findings() */
	int64_t *shifts;           /* the same, as the readers take them */
	struct ga_filter *flt;     /* the activity filter (never NULL) */
	struct ga_analysis_opts o;
	/*
	 * Set before the build by a view that needs the traces' first time
	 * at its first activity (the Chrome and Perfetto exports' time base):
	 * first_ns is then, once the model reads, the earliest time of the
	 * records the NVTX scan read (traces read twice) and of the chunk
	 * headers' t_min of the traces read once (a look-ahead has not seen
	 * the whole trace when the first activity streams out; the recorder
	 * writes t_min as the earliest start of the chunk's activity records).
	 * A trace whose chunk headers give no time is then read twice.
	 */
	int want_first;
	uint64_t first_ns;         /* UINT64_MAX: none */
};

/* Returns 0, or -1 when memory runs out (an is then freed). */
int ga_analysis_init(struct ga_analysis *an, const struct ga_analysis_opts *o,
		     struct ga_filter *flt);

/*
 * After GA_ANALYSIS_AGAIN: an freed and initialized again with *o turned
 * to two reads (no pace; no fold where the paced fold gave up for good,
 * model/ranges.h fold_lasting) and no retiring where processes of the
 * traces used a GPU at once (no_retire), flt's counts forgotten.  0, or -1 when
 * memory runs out (an is then cleared: ga_analysis_free() may still be
 * called on it).
 */
int ga_analysis_again(struct ga_analysis *an, struct ga_analysis_opts *o,
		      struct ga_filter *flt);

/*
 * Read paths[0..n) (standard input and pipes too) and finish every
 * aggregate.  The model's hooks, set before, see each kept activity and
 * API call.  Returns 0, -1 after printing why, or GA_ANALYSIS_AGAIN (with
 * o.pace, or with the findings' retire_after where processes of the traces
 * used a GPU at once: model.h busy_shared) having printed nothing.
 */
int ga_analysis_build(struct ga_analysis *an, char *const *paths, int n);

/*
 * The findings (model/findings.h), run once on first use, after the
 * launch sites are finished.  Returns 0, or -1 when memory runs out.
 */
int ga_analysis_findings(struct ga_analysis *an);

/* Non-zero when a filter option was given. */
int ga_analysis_filtered(const struct ga_analysis *an);

void ga_analysis_free(struct ga_analysis *an);

#endif
