/*
 * The GPU over time (GP_REC_GPU_SERIES, GP_REC_GPU_SAMPLE): each device's
 * sampled counters (PM sampling), NVML telemetry and GPM metrics.  For
 * every series: each metric's time-weighted average, minimum and maximum
 * over its samples; for NVML series the time spent with the clocks held
 * back, by reason; and the metrics averaged over each kernel's execution
 * (by kernel name) and over each NVTX range (by range name), weighted by
 * how much of each sample falls inside, with the number of samples behind
 * each average.
 *
 * Fed during the aggregate pass as an observer of the model (it passes
 * every call on to the observer it replaced): series and samples from
 * rec, kernels from act.  Kernel executions are kept (32 bytes each) until
 * finish, up to GA_GS_KERNELS_MAX in all, beyond that only for processes
 * whose samples were already seen, never for a process whose trace says
 * no sampler was on (the CONFIG record's bits); the ranges come from the
 * NVTX index.
 * Kept kernels go in blocks of GA_GS_KERNELS_BLOCK to an unlinked
 * temporary file ($TMPDIR, else /tmp), read at finish only if a series
 * came (most traces have none), through an external sort by start
 * (base/xsort.h, runs of GA_GS_KERNELS_SORT_RUN): memory does not grow
 * with the kernels.  A series' samples
 * go, GA_GS_SAMPLES_BLOCK at a time, to another such file where no view
 * reads them after the analysis (the report, JSON, summaries) and each
 * starts after the one before it ended (as samplers write them); the
 * finish reads them back a block at a time, in the same order, for the
 * same sums.  A series whose samples overlap is read back whole and kept.
 * Runs offline only.
 */
#ifndef GA_MODEL_GPUSAMPLES_H
#define GA_MODEL_GPUSAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct ga_ranges;

#define GA_GS_KERNELS_MAX (4u << 20)
#define GA_GS_KERNELS_BLOCK 16384u /* kernels in memory before a spill */
#define GA_GS_SAMPLES_BLOCK 512u   /* a series' samples in memory before a spill */
#define GA_GS_KERNELS_SORT_RUN (1u << 18) /* kernels a run of their sort at finish */
#define GA_GS_REASONS 16           /* clock event reason bits kept */
/*
 * Reasons that hold the clocks back (nvmlClocksEventReasons): software
 * power cap 0x4, hardware slowdown 0x8, sync boost 0x10, software thermal
 * 0x20, hardware thermal 0x40, power brake 0x80.  GPU idle 0x1, the
 * application clock setting 0x2 and the display clock setting 0x100 are
 * not throttling.
 */
#define GA_GS_THROTTLE_MASK 0xfcull

/* One metric of a series over the whole trace. */
struct ga_gs_metric {
	uint32_t name;             /* strtab id, as the recorder named it */
	uint64_t samples;          /* samples with a value */
	uint64_t last_end;         /* end of the last sample with a value (finish) */
	double avg, min, max;      /* time-weighted average (finish) */
	double wsum, w;            /* sum of value x ns, ns */
};

struct ga_gs_sample {
	uint64_t start, end;
	size_t vi;                 /* values[vi .. vi + n) */
};

/* A block of GA_GS_SAMPLES_BLOCK samples in the spill file: start, end, n values each. */
struct ga_gs_block {
	uint64_t off, last_end;
};

struct ga_gs_series {
	uint32_t proc, id, device, source, status;
	uint32_t label;            /* strtab id: the device's label ("cuda:0 [...]"), finish */
	uint64_t interval_ns;
	uint32_t n;                /* metrics */
	struct ga_gs_metric *m;
	struct ga_gs_sample *s;    /* by start after finish */
	size_t ns, caps;           /* ns: its samples, spilled ones included */
	/*
	 * Samples spilled where no view reads them after the analysis
	 * (keep_samples unset) and each starts after the one before ended:
	 * the first nblk * GA_GS_SAMPLES_BLOCK in blocks of the spill file,
	 * the other nmem in s[] (all of them, nblk 0, otherwise).
	 */
	size_t nmem;
	struct ga_gs_block *blk;
	size_t nblk, capblk;
	int overlap;                   /* a sample started before the one before it ended */
	uint64_t last_start, last_end; /* of the last sample */
	double *values;
	size_t nvalues, capvalues;
	int reasons_at;            /* index of nvml.clock_event_reasons, -1 none */
	uint64_t sampled_ns;       /* NVML: time covered by samples with reasons */
	uint64_t throttled_ns;     /* of which any GA_GS_THROTTLE_MASK reason */
	uint64_t reason_ns[GA_GS_REASONS];
	uint64_t first, last;      /* trace clock of the first start, last end */
};

/* Metrics of one series averaged over a kernel's executions or a range's instances. */
struct ga_gs_attr {
	uint32_t key;              /* strtab id: kernel name or range label */
	uint32_t series;           /* index into series */
	uint64_t count;            /* executions or instances */
	uint64_t samples;          /* samples overlapping them (a sample counts once per one) */
	uint64_t time_ns;          /* their time */
	double *wsum, *w;          /* per metric: value x overlap ns, overlap ns */
};

struct ga_gs_kernel {
	uint64_t start, end;
	uint32_t proc, device, name, reserved;
};

struct ga_gpusamples {
	struct ga_gs_series *series;
	size_t nseries, capseries;
	struct ga_map smap;        /* (proc, id) -> series index + 1 */
	struct ga_gs_kernel *k;
	size_t nk, capk;
	FILE *spill;               /* kernels kept before k's, while no series was known */
	size_t nspilled;
	int spill_failed;          /* no temporary file: kept in memory */
	uint64_t kernels_unkept;
	/*
	 * Kernels of processes whose trace says no sampler was on (CONFIG
	 * GP_TRACE_SAMPLERS_SAID): not kept, never averaged; series from such
	 * a process (a trace that contradicts itself) are kept without them.
	 */
	uint64_t kernels_unsampled;
	uint64_t series_unasked;
	struct ga_gs_attr *kern, *ranges;  /* finish: by series, then time descending */
	size_t nkern, nranges;
	uint64_t malformed;        /* samples whose series or value count did not match */
	int samples_only;          /* set before binding: no kernels kept, so no averages
				      over them (a lean analysis: the samples as counters) */
	int keep_samples;          /* set before binding: a view reads every sample after
				      the analysis, so none is spilled */
	FILE *sspill;              /* the series' blocks of samples (struct ga_gs_block) */
	int sspill_failed;         /* no temporary file: samples kept in memory */
};

void ga_gs_init(struct ga_gpusamples *g);
/* Observe m's records and kernels (model.h ga_model_observe).  0, or -1 (the fan is full). */
int ga_gs_bind(struct ga_gpusamples *g, struct ga_model *m);
/* After the model and the NVTX ranges are finished.  0, or -1 out of memory. */
int ga_gs_finish(struct ga_gpusamples *g, struct ga_model *m, const struct ga_ranges *rg);
void ga_gs_free(struct ga_gpusamples *g);

/* Averages' rows by series, then time descending, then by name (qsort_r, m the model). */
int ga_gs_cmp_attr(const void *a, const void *b, void *m);

/* Non-zero when the traces hold a GPU series. */
int ga_gs_any(const struct ga_gpusamples *g);

/* "pm", "nvml", "gpm" (GP_GPU_SRC_*). */
const char *ga_gs_source(uint32_t source);
/* What a GP_GPU_* status says, "" for OK. */
const char *ga_gs_status(uint32_t status);
/* The name of clock event reason bit b (0..GA_GS_REASONS). */
const char *ga_gs_reason(unsigned b);

/*
 * How a metric reads: a short label and unit, and the factor from the
 * recorded value to the unit (metrics gpuprof does not know: their name, 1).
 */
struct ga_gs_unit {
	const char *label, *unit;
	double scale;
};
void ga_gs_describe(const char *name, struct ga_gs_unit *u);

#endif
