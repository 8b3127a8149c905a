/*
 * Two analyses compared ("gpuprof diff BASE NEW"): per kernel, memory
 * operation kind, NVTX range and API function, the count and total time
 * on each side, matched by name, sorted by the absolute change in time;
 * and per device of traces with allocation records, the peak of memory in
 * use (bytes instead of time, allocations as the count); and per device
 * and metric of traces sampled over time (--gpu-metrics, --gpu-telemetry),
 * each side's time-weighted average (struct ga_diff_gpu).
 * Names point into the analyses' string tables (kernel names may be long
 * and many): free the diff before the analyses.
 * Runs offline only; prints nothing.
 */
#ifndef GA_MODEL_COMPARE_H
#define GA_MODEL_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "model/analysis.h"

enum ga_diff_kind {
	GA_DIFF_KERNEL,            /* by demangled name */
	GA_DIFF_MEMORY,            /* "memcpy HtoD", ..., "memset device", ... */
	GA_DIFF_MEMUSE,            /* device label ("cuda:0"); ns[]: peak bytes in use,
				      count[]: allocations */
	GA_DIFF_NVTX,              /* "name" or "domain:name"; time: CPU time of the ranges */
	GA_DIFF_API,               /* function name */
	GA_DIFF_FINDING,           /* "RULE SUBJECT" ("host-sync cuda:0"); time: at stake,
				      count: 1 where it fired */
	GA_DIFF_KIND_COUNT
};

struct ga_diff_item {
	enum ga_diff_kind kind;
	char *name;                /* the analyses' string unless own_name */
	int own_name;
	uint64_t count[2], ns[2];  /* [0] base, [1] new; 0 where a side lacks the item;
				      ns[] holds bytes for GA_DIFF_MEMUSE */
	int present[2];
};

/*
 * A metric sampled over time on one device, both sides: its values x ns
 * and ns over all the side's samples (all series of the device and metric).
 * The clock event reasons come as "nvml.throttled_pct": the percent of
 * the sampled time the clocks were held back (GA_GS_THROTTLE_MASK).
 */
struct ga_diff_gpu {
	const char *device;        /* the device's label, "cuda:0" (the analyses' string) */
	const char *metric;        /* as recorded ("dram__bytes_read.sum.per_second") */
	uint64_t samples[2];
	double wsum[2], w[2];
	int present[2];
};

struct ga_diff {
	struct ga_diff_item *v;    /* by |ns[1] - ns[0]| descending, then kind, then name */
	size_t n, cap;
	struct ga_diff_gpu *gpu;   /* by device, then metric */
	size_t ngpu, capgpu;
	/*
	 * A side was built from summaries (model/summary.h): only what they
	 * hold is compared, on both sides (no NVTX ranges, memory in use,
	 * findings or GPU metrics).
	 */
	int summaries;
};

/* "kernel", "memory", "memory_usage", "nvtx", "api". */
const char *ga_diff_kind_name(enum ga_diff_kind k);

/* 1 when the kind's ns[] are bytes (GA_DIFF_MEMUSE), 0 for times. */
int ga_diff_kind_bytes(enum ga_diff_kind k);

/* Fills d from two finished analyses.  Returns 0, or -1 out of memory (d then freed). */
int ga_diff_build(struct ga_diff *d, struct ga_analysis *base, struct ga_analysis *nw);
void ga_diff_free(struct ga_diff *d);

/* New time minus base time, in ns (signed); bytes for GA_DIFF_MEMUSE. */
int64_t ga_diff_delta(const struct ga_diff_item *it);

/*
 * Percent change in time, new over base: +100 is twice as long.  An item
 * absent from (or without time in) the base and present in the new side
 * is +infinity; no time on either side is 0.
 */
double ga_diff_change_pct(const struct ga_diff_item *it);

/* New time over base time; +infinity without base time, 1 with none on either side. */
double ga_diff_ratio(const struct ga_diff_item *it);

/* 1 when |change in time| >= pct percent, or pct <= 0. */
int ga_diff_shown(const struct ga_diff_item *it, double pct);

/* A side's average of a sampled metric; NaN when that side has no sample of it. */
double ga_diff_gpu_avg(const struct ga_diff_gpu *x, int side);

/* Percent change of the averages, new over base; NaN unless both sides have a non-zero base. */
double ga_diff_gpu_change_pct(const struct ga_diff_gpu *x);

/* Items whose time grew by more than pct percent (new items included). */
size_t ga_diff_grown(const struct ga_diff *d, double pct);

#endif
