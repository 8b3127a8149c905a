/*
 * Summaries: what the report and "export -t json" print of some traces,
 * kept in a small file ("gpuprof summarize TRACE... -o PART") that merges
 * with other summaries and traces.  A summary holds the files, processes,
 * devices (with their busy intervals), the activity and device summaries,
 * the kernel, memory, memset, graph and API tables, the loss counts,
 * each process's per-rank figures with its step work (model/ranks.h), and
 * the NVTX range and mark tables and the range tree (model/ranges.h),
 * launch latency and launch configurations, each trace's NCCL collectives
 * as --align nccl matches them (model/align.h), and the findings' state
 * (model/findings.h after ga_findings_settle(): per device the idle gaps
 * by cause, launch-bound runs, streams, places of gaps by text; per copy
 * kind the copies; host calls by cause), merged so that the rules run once
 * on the whole (as for traces read together, where each GPU is one part's;
 * a GPU in several parts is said in a warning, and the report's pool reads
 * such traces together instead).  Version 4 summaries, without that state,
 * are read: their findings are said missing.
 * Durations of each table row are kept exactly while the whole merge holds
 * at most the row's exact limit of them (GA_SUM_EXACT_DEFAULT, or none with
 * --exact); beyond, a log-bucketed histogram whose median is within
 * GA_SUM_REL_ERR_TEXT of the exact one.  Counts, sums, minimums, maximums
 * and sums of squares are always exact, so merging is associative and
 * commutative: any grouping and order of the same parts gives the same
 * result, byte for byte.  The tables listed by GA_SUM_MISSING are not in
 * summaries yet; a report of summaries says so.  The file layout is
 * docs/FORMAT.md section "Summaries".  Runs offline only.
 */
#ifndef GA_MODEL_SUMMARY_H
#define GA_MODEL_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "model/analysis.h"
#include "model/quantile.h"

#define GA_SUM_MAGIC "GPUPSUM\0"   /* 8 bytes, NUL included */
#define GA_SUM_VERSION 8u
#define GA_SUM_VERSION_MIN 4u      /* version 4: no findings' state */
#define GA_SUM_HEADER_SIZE 32u
/* A decompressed body larger than this is refused (a damaged size). */
#define GA_SUM_RAW_MAX (1ull << 36)

/*
 * Busy intervals a summary carries per device and part (16 bytes each
 * while read); past it, the device's busy time and span only, exact for a
 * GPU that one part used (the union of a GPU of several parts then needs
 * the traces read together).
 */
#define GA_SUM_BUSY_KEEP 8192u

/* Durations a row keeps exactly by default (0 in the file: no limit). */
#define GA_SUM_EXACT_DEFAULT GA_QUANT_EXACT_DEFAULT

/*
 * The histogram is model/quantile.h's: at most 1/256 of the value off,
 * plus 1 ns of rounding where two middle values are averaged.
 */
#define GA_SUM_SUB_BITS GA_QUANT_SUB_BITS
#define GA_SUM_REL_ERR_TEXT GA_QUANT_REL_ERR_TEXT

/* What summaries do not hold yet, as the report and docs/USAGE.md name it. */
#define GA_SUM_MISSING \
	"timeline"

/* Said too where a part is of version 6 or earlier. */
#define GA_SUM_MISSING_SITES \
	"launch sites, hardware metrics, memory in use and the GPU over time (in summaries of version 7 on)"

struct ga_sum;

/* 1 when the file at path starts with GA_SUM_MAGIC, else 0 ("-" is never one). */
int ga_summary_is(const char *path);

/* 1 when one of paths[0..n) is a summary. */
int ga_summary_any(char *const *paths, int n);

/*
 * The summary of a built analysis (ga_analysis_build() done, with the
 * ranks' collect set before it: model/ranks.h).  exact_limit:
 * durations a row keeps exactly, 0 for no limit.  origin names these traces
 * in merges (the first trace's path).  NULL when memory runs out.
 */
struct ga_sum *ga_summary_from_analysis(struct ga_analysis *an, uint64_t exact_limit,
					const char *origin);

/*
 * Read the summary at path.  NULL with err set to "PATH: byte N: ..."
 * when it cannot be read or is not a summary this reader knows.
 */
struct ga_sum *ga_summary_read(const char *path, char *err, size_t errlen);

/* Merge from into into; from is freed in any case.  0, or -1 out of memory. */
int ga_summary_merge(struct ga_sum *into, struct ga_sum *from);

/* Encode s (canonical order, compressed).  0, or -1 out of memory; *out is malloc'd. */
int ga_summary_encode(struct ga_sum *s, unsigned char **out, size_t *len);

/* The number of parts merged into s (traces analyzed together count as one). */
uint64_t ga_summary_parts(const struct ga_sum *s);

/*
 * Fill an (initialised, nothing read) with s, finished as ga_analysis_build()
 * leaves it for the views of the tables summaries hold.  0, or -1 out of memory.
 */
int ga_summary_apply(struct ga_sum *s, struct ga_analysis *an);

void ga_summary_free(struct ga_sum *s);

/*
 * ga_analysis_build() for inputs that may be summaries: without one it is
 * ga_analysis_build(); with one, the traces among paths are analyzed
 * together and summarized (keeping an's quant_limit of durations exactly),
 * merged with the summaries, and the result applied to an.  Filters refuse summaries.  Returns 0, or -1 after
 * printing why.
 */
int ga_summary_build(struct ga_analysis *an, char *const *paths, int n);

/*
 * The report's read of several traces on a pool of threads (-j above 1,
 * ga_reader_jobs): each file analyzed alone into a summary keeping every
 * duration, the summaries merged and applied to an (initialised, nothing
 * read), shown as traces (sum_parts 0): the same tables as
 * ga_analysis_build() of the traces together.  Only where every table the
 * report prints is carried: files only, in sorted order (the order merged
 * summaries list them in), no filter, --align, timeline (but
 * an automatic one of at most rows_max rows, not shown), stream hooks, launches or
 * marks, and no trace with launch sites, hardware metrics, memory records
 * or GPU samples; with findings on (an->fd.off 0), no GPU in two traces.
 * The findings then come from the merged state.  Returns 0 when an is
 * built, 1 when the traces are to be read as before (an untouched), -1
 * after printing why.
 */
int ga_summary_build_parallel(struct ga_analysis *an, char *const *paths, int n,
			       uint64_t rows_max);

/* Summarize and merge paths[0..n) (traces and summaries) into one.  NULL after printing why. */
struct ga_sum *ga_summary_collect(char *const *paths, int n, uint64_t exact_limit);

#endif
