/*
 * Hardware metrics of profiled kernel launches (gpuprof run --metrics):
 * the aggregate per kernel, the devices' ceilings, how the launches were
 * profiled, and the roofline arithmetic.  Fed by the model's observer
 * (GP_REC_METRICS, GP_REC_DEVICE_PEAKS, GP_REC_METRICS_INFO), chained in
 * front of any observer already bound.  Runs offline only.
 */
#ifndef GA_MODEL_HWMETRICS_H
#define GA_MODEL_HWMETRICS_H

#include <stdint.h>
#include <stdio.h>

#include "gpuprof/peaks.h"
#include "model/model.h"

/* Work classes of the roofline: enum gp_peak order (gpuprof/trace.h). */
#define GA_MX_PREC GP_PEAK_COUNT

/*
 * Each class's name in the report's tables ("TC-FP16") and its label on
 * the roofline chart ("Tensor FP16/BF16"); its key in the exports is
 * gp_peak_key[] (gpuprof/peaks.h).
 */
struct ga_mx_prec_name {
	const char *name, *label;
};
extern const struct ga_mx_prec_name ga_mx_prec[GA_MX_PREC];

/* Per kernel (name, process, device): sums over its profiled launches. */
struct ga_mx_kernel {
	uint32_t name;             /* strtab id, mangled */
	uint32_t proc, device;     /* model process, CUDA ordinal */
	uint64_t launches;
	uint64_t cached;           /* of them, values from the metrics cache */
	uint64_t time_ns;          /* sum of gpu__time_duration */
	uint64_t cost_ns;          /* host time of the profiled launch calls */
	uint32_t passes;           /* the last record's: replay passes, or groups measured */
	uint64_t spread;           /* of its records, GP_METRICS_F_LAUNCHES */
	double flops[GA_MX_PREC];
	double dram_read, dram_write, dram_total, l2, l1;
	double sm_hz;              /* sum of the measured SM clocks */
	uint64_t sm_hz_n;
	unsigned have;             /* GA_MX_HAVE_* */
	double *vals;              /* per metric name (ga_mx.names), summed; NAN: not measured */
};

#define GA_MX_HAVE_TIME 1u
#define GA_MX_HAVE_FLOPS 2u
#define GA_MX_HAVE_DRAM 4u
#define GA_MX_HAVE_L2 8u
#define GA_MX_HAVE_L1 16u

struct ga_mx_peaks {
	uint32_t proc, device;
	struct gp_rec_device_peaks p;  /* the ceilings in use */
	uint32_t chip;             /* strtab id */
	/*
	 * Peaks measured by gpuprof calibrate (model/peaks-measured.h), applied
	 * over the recorded ones: which ceilings they replaced, the L2
	 * bandwidth (measured only), when, and the recorded ceilings.
	 */
	unsigned measured;         /* bit c: flops[c]; GA_MX_MEAS_DRAM */
	double l2_bw;              /* bytes/s, 0 unknown */
	char measured_on[32];      /* "2026-11-24T18:01:02Z" */
	struct gp_rec_device_peaks spec;
};

#define GA_MX_MEAS_DRAM (1u << GP_PEAK_COUNT)

struct ga_mx {
	struct ga_mx_kernel *k;
	size_t nk, capk;
	struct ga_map kmap;        /* (proc << 32 | device, name) -> index + 1 */
	uint32_t *names;           /* metric names, strtab ids, in order of first use */
	size_t nnames, capnames;
	struct ga_mx_peaks *peaks;
	size_t npeaks, cappeaks;
	/* GP_REC_METRICS_INFO, summed over processes. */
	int has_info;
	uint32_t set, passes, status, launches;
	uint64_t profiled, skipped_capture, skipped_graph, failed, skipped_other, cost_ns;
	uint64_t records;          /* GP_REC_METRICS seen */
	uint64_t cached;           /* of them, GP_METRICS_F_CACHED */
	uint64_t spread;           /* of them, GP_METRICS_F_LAUNCHES */
	uint64_t bad;              /* malformed ones skipped */
	int oom;
};

void ga_mx_init(struct ga_mx *mx);
void ga_mx_free(struct ga_mx *mx);

/* Observes m's records (model.h ga_model_observe).  0, or -1 (the fan is full). */
int ga_mx_bind(struct ga_mx *mx, struct ga_model *m);

/* 1 when the traces asked for metrics (info or metrics records). */
int ga_mx_any(const struct ga_mx *mx);

/*
 * Kernels measured over successive launches in fewer groups than the set
 * has (their launches stopped before every group came round).
 */
uint64_t ga_mx_partial(const struct ga_mx *mx);

/* The ceilings of (proc, device), NULL if unknown. */
const struct ga_mx_peaks *ga_mx_peaks_of(const struct ga_mx *mx, uint32_t proc, uint32_t device);

/*
 * The roofline of one kernel: achieved rates from summed work and time,
 * its dominant work class, arithmetic intensity against DRAM, and where
 * it sits under the roof of that class.
 */
enum ga_roof_verdict {
	GA_ROOF_UNKNOWN = 0,       /* no time, or neither FLOPs nor bytes, or no ceilings */
	GA_ROOF_MEMORY,            /* left of the ridge, at >= half the DRAM bandwidth */
	GA_ROOF_COMPUTE,           /* right of the ridge, at >= half the compute peak */
	GA_ROOF_NEITHER,           /* under half of the roof that applies: latency, occupancy */
};

#define GA_ROOF_BOUND_FRACTION 0.5

struct ga_roof {
	double flop_s[GA_MX_PREC]; /* achieved, per class */
	double flops;              /* all classes */
	double dram_bw;            /* achieved bytes/s */
	double ai;                 /* FLOP per DRAM byte; INFINITY without DRAM bytes */
	int dominant;              /* class with most FLOPs, -1 if none */
	double peak;               /* ceiling of the dominant class, 0 unknown */
	double ridge;              /* peak / peak DRAM bandwidth */
	double pct;                /* % of the roof at ai (compute or memory side) */
	int memory_side;           /* ai < ridge */
	enum ga_roof_verdict verdict;
};

/*
 * flops[GA_MX_PREC] and dram_bytes over time_ns; peaks may be NULL.
 * Returns 0, or -1 when time_ns is 0 (out is then all unknown).
 */
int ga_roof_eval(const double *flops, double dram_bytes, uint64_t time_ns,
		 const struct gp_rec_device_peaks *peaks, struct ga_roof *out);

/* "memory-bound", "compute-bound", "neither", "-". */
const char *ga_roof_verdict_name(enum ga_roof_verdict v);

/* FLOPs per count of a metric name's work class (*prec), or 0 when it is no work metric. */
double ga_mx_flop_weight(const char *metric, int *prec);

/*
 * One profiled launch's work, as the roofline counts it: *flops (all
 * precisions) and *dram_bytes (read plus write, else dram__bytes.sum), from
 * a GP_REC_METRICS record being read (its string ids resolved through m).
 * Returns GA_MX_HAVE_FLOPS | GA_MX_HAVE_DRAM for what the record had.
 */
unsigned ga_mx_launch_work(struct ga_model *m, const struct gp_rec_metrics *r, double *flops,
			   double *dram_bytes);

/* Kernel indices by total profiled time, descending; NULL out of memory. */
uint32_t *ga_mx_order(const struct ga_mx *mx, const struct ga_model *m);

#endif
