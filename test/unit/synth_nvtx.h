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
/* A push/pop range announced open (GP_REC_NVTX_OPEN), as the recorder's drain writes it. */
void synth_nvtx_open(struct synth *s, uint32_t name, uint32_t domain, uint64_t start,
		     uint32_t tid, uint64_t id);
void synth_nvtx_mark(struct synth *s, uint32_t name, uint32_t domain, uint64_t t,
		     uint32_t tid, uint64_t id);
/* An API call of domain GP_API_RUNTIME or GP_API_DRIVER. */
void synth_api_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		    uint32_t tid, uint32_t correlation, uint32_t domain);
/* The same with its return value (CUresult or cudaError_t, negative ones too). */
void synth_api_corr_ret(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
			uint32_t tid, uint32_t correlation, uint32_t domain, int32_t ret);
void synth_kernel_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		       uint32_t device, uint32_t correlation, uint32_t graph_id,
		       uint64_t graph_node);
void synth_memcpy_corr(struct synth *s, unsigned kind, uint64_t bytes, uint64_t start,
		       uint64_t end, uint32_t device, uint32_t correlation);

/* A kernel profiled by kernel replay (GP_ACT_REPLAYED): no GPU timestamps of its own. */
void synth_kernel_replayed(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
			   uint32_t stream, uint32_t correlation);

/*
 * A trace at path of one process (pid, "./app" on "host", from t0)
 * tracing kernels, API calls and NVTX, with one device: 3000 API calls,
 * kernels (stream 3) and ranges (thread 7; the default domain or "D") in
 * random order, starting in [t0 + 1000, t0 + 1000 + span), one in ten up
 * to span / 5 long, the others up to 2 us.  grid: the ns between the
 * times drawn (1: any); startend: one range in eight is start/end, not
 * push/pop.  The same trace for the same calls in a process.
 */
void synth_random_app(const char *path, uint32_t pid, uint64_t t0, uint64_t grid, uint64_t span,
		      int startend);

#endif
