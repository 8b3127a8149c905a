/*
 * Synthetic NVTX, API and activity records with explicit correlation ids,
 * for the NVTX attribution tests (synth.h numbers correlations itself).
 * Test code, runs offline only.
 */
#ifndef GP_TEST_SYNTH_NVTX_H
#define GP_TEST_SYNTH_NVTX_H

#include <stdint.h>

#include "synth.h"

/* A range (aux: GP_NVTX_* bits) opened on tid_start, closed on tid_end. */
void synth_nvtx_range(struct synth *s, uint32_t name, uint32_t domain, uint64_t start,
		      uint64_t end, uint32_t tid_start, uint32_t tid_end, uint64_t id,
		      uint32_t aux);
void synth_nvtx_mark(struct synth *s, uint32_t name, uint32_t domain, uint64_t t,
		     uint32_t tid, uint64_t id);
/* An API call of domain GP_API_RUNTIME or GP_API_DRIVER. */
void synth_api_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		    uint32_t tid, uint32_t correlation, uint32_t domain);
void synth_kernel_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		       uint32_t device, uint32_t correlation, uint32_t graph_id,
		       uint64_t graph_node);
void synth_memcpy_corr(struct synth *s, unsigned kind, uint64_t bytes, uint64_t start,
		       uint64_t end, uint32_t device, uint32_t correlation);

#endif
