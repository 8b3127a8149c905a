/*
 * Launch latency per kernel: from the start of the API call that launched
 * a kernel (the outermost call of its correlation: the runtime's, when
 * both runtime and driver were traced) to the kernel's start on the GPU,
 * as nsys's cuda_kern_exec_sum reports it: queueing behind earlier work
 * plus the launch itself.
 *
 * Computed in the aggregate pass, with memory bounded by the launches in
 * flight: each launch API call (cudaLaunch*, cuLaunch*, not graph launches
 * or host functions) waits in a hash by (process, correlation) until its
 * kernel's record comes, which takes it out; a kernel record that comes
 * first waits for its call's records the same way, and is counted when
 * its entry leaves: at its runtime call's record (no record of the call
 * starts before it: a driver call runs inside it), else at the end of the
 * generation after its own (when GA_LAT_GENERATION more entries came), or
 * at the end.  A call left
 * waiting that long (its kernel filtered out or lost) is dropped; a kernel
 * without its call (not traced) counts as unmatched.  A kernel profiled by
 * kernel replay (GP_ACT_REPLAYED: its start is no GPU time) and one that
 * starts before its call (clocks that disagree) have no latency and are
 * counted apart.  Latencies go to a quantile per kernel (model/quantile.h,
 * as the kernel table's durations): exact up to the model's quant_limit,
 * then a histogram, for the median, p90 and p99.  Runs offline only.
 */
#ifndef GA_MODEL_LATENCY_H
#define GA_MODEL_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "model/model.h"
#include "model/quantile.h"

/* Entries a waiting one outlives before it is dropped (see above). */
#define GA_LAT_GENERATION (1u << 20)

struct ga_latency_k {
	uint32_t name;             /* strtab id of the kernel name */
	uint64_t count, total, min, max, med, stddev;
	uint64_t p90, p99;         /* set by ga_latency_finish() */
	int med_est;               /* med, p90, p99 are estimates (a histogram) */
	struct ga_quant q;         /* the latencies; freed by ga_latency_finish() */
};

/*
 * A launch call waiting for its kernel, or a kernel whose record came
 * first: it waits for its call's records, all of them (runtime and
 * driver: the outermost starts first), until its generation ends.
 */
struct ga_latency_wait {
	uint64_t call;             /* the call's start (earliest of its records), UINT64_MAX none */
	uint64_t start;            /* the kernel's start (kernels) */
	uint64_t key;              /* proc << 32 | correlation */
	uint32_t name;             /* the kernel's name (kernels) */
	uint32_t gen;              /* generation it came in */
	uint8_t kernel;            /* 1 the kernel's record came */
	uint8_t replayed;          /* the kernel was profiled by kernel replay (GP_ACT_REPLAYED) */
	uint8_t used;
	uint32_t next_free;        /* free list: index + 1 */
};

#define GA_LAT_RECENT 64
/*
 * Slots of the waiting entries' direct-mapped index at first, and at most
 * (powers of two): it doubles when an entry finds its slot held and half
 * as many wait as it has slots.
 */
#define GA_LAT_DIRECT 4096u
#define GA_LAT_DIRECT_MAX (1u << 21)

struct ga_latency {
	struct ga_latency_k *k;
	size_t nk, capk;
	struct ga_map kmap;        /* kernel name -> index + 1 */
	/*
	 * The waiting entries by key (proc << 32 | correlation): wait index + 1
	 * in the direct-mapped slot of the key, else in the map (its slot held
	 * by another key); correlation ids mostly rise, so the map stays small
	 * and the entries waiting at once take consecutive slots (no lookup
	 * strays far in memory: kernels that come before their calls wait here
	 * by the hundred thousand).
	 */
	uint32_t *direct;      /* made at the first entry */
	uint32_t dmask;        /* its slots - 1 */
	struct ga_map waiting; /* (key, 0) -> wait index + 1 */
	size_t nwaiting;       /* entries waiting, in either */
	struct ga_latency_wait *w;
	size_t nw, capw;
	uint32_t free_head;        /* first free wait entry + 1, 0 none */
	struct ga_map is_launch;   /* API name strtab id -> 1 a launch, 3 the runtime's, 2 not */
	/* Names met lately, sparing a map lookup per record: (name, value) pairs. */
	uint32_t recent_k[GA_LAT_RECENT][2];      /* kernel name -> index + 1 */
	uint32_t recent_launch[GA_LAT_RECENT][2]; /* API name -> is_launch's value */
	uint32_t gen;
	uint64_t gen_entries;      /* entries added in this generation */
	size_t max_waiting;        /* most entries waiting at once */
	uint64_t unmatched;        /* kernels without their API call */
	uint64_t replayed;         /* kernels with their call, profiled by kernel replay: no GPU start */
	uint64_t early;            /* kernels with their call that start before it (clocks disagree) */
	uint64_t quant_limit;      /* latencies a kernel keeps exactly: the model's */
	int keep_values;           /* ga_latency_finish() keeps each kernel's q, its median
				      and percentiles left 0 (summaries) */
	int oom;
};

void ga_latency_init(struct ga_latency *l);
void ga_latency_free(struct ga_latency *l);

/*
 * Observe m's kept activities and API records (model.h ga_model_observe);
 * latencies keep m's quant_limit, so set it first.  0, or -1 (the fan is full).
 */
int ga_latency_bind(struct ga_latency *l, struct ga_model *m);

/*
 * After the model is finished: medians, p90, p99 and deviations; the
 * latencies themselves are freed unless keep_values.  0, or -1 out of memory.
 */
int ga_latency_finish(struct ga_latency *l);

/* Kernel indices by total latency, descending; NULL out of memory. */
uint32_t *ga_latency_order(const struct ga_latency *l);

#endif
