/*
 * Launch latency per kernel: from the start of the API call that launched
 * a kernel (the outermost call of its correlation: the runtime's, when
 * both runtime and driver were traced) to the kernel's start on the GPU,
 * as nsys's cuda_kern_exec_sum reports it: queueing behind earlier work
 * plus the launch itself.  Needs the launch index of model/ranges.h
 * (want_launches); kernels whose API call is not in the trace are
 * counted apart.  Memory: 8 bytes per kernel launch (for the median).
 * Runs offline only.
 */
#ifndef GA_MODEL_LATENCY_H
#define GA_MODEL_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "model/model.h"
#include "model/ranges.h"

struct ga_latency_k {
	uint32_t name;             /* strtab id of the kernel name */
	uint64_t count, total, min, max, med, stddev;
	struct ga_welford var;
	uint64_t *v;               /* every latency, for the median */
	size_t nv, capv;
};

struct ga_latency {
	struct ga_observer next;   /* the observer bound before */
	const struct ga_ranges *rg;
	struct ga_latency_k *k;
	size_t nk, capk;
	struct ga_map kmap;        /* kernel name -> index + 1 */
	uint64_t unmatched;        /* kernels without their API call */
	int oom;
};

void ga_latency_init(struct ga_latency *l, const struct ga_ranges *rg);
void ga_latency_free(struct ga_latency *l);

/* Observe m's kept activities (after any observer already bound). */
void ga_latency_bind(struct ga_latency *l, struct ga_model *m);

/* After the model is finished: medians and deviations.  0, or -1 out of memory. */
int ga_latency_finish(struct ga_latency *l);

/* Kernel indices by total latency, descending; NULL out of memory. */
uint32_t *ga_latency_order(const struct ga_latency *l);

#endif
