/*
 * Synthetic NVTX, API and activity records (see synth_nvtx.h).  Test
 * code, runs offline only.
 */
#include "synth_nvtx.h"

#include <string.h>

void synth_nvtx_range(struct synth *s, uint32_t name, uint32_t domain, uint64_t start,
		      uint64_t end, uint32_t tid_start, uint32_t tid_end, uint64_t id,
		      uint32_t aux)
{
	struct gp_rec_nvtx r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_NVTX_RANGE;
	r.h.size = sizeof(r);
	r.h.aux = aux;
	r.start = start;
	r.end = end;
	r.id = id;
	r.tid_start = tid_start;
	r.tid_end = tid_end;
	r.name = name;
	r.domain = domain;
	synth_rec(s, &r, sizeof(r));
}

void synth_nvtx_mark(struct synth *s, uint32_t name, uint32_t domain, uint64_t t,
		     uint32_t tid, uint64_t id)
{
	struct gp_rec_nvtx r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_NVTX_MARK;
	r.h.size = sizeof(r);
	r.start = r.end = t;
	r.id = id;
	r.tid_start = r.tid_end = tid;
	r.name = name;
	r.domain = domain;
	synth_rec(s, &r, sizeof(r));
}

void synth_api_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		    uint32_t tid, uint32_t correlation, uint32_t domain)
{
	struct gp_rec_api r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_API;
	r.h.size = sizeof(r);
	r.start = start;
	r.end = end;
	r.correlation = correlation;
	r.tid = tid;
	r.name = name;
	r.cbid = domain == GP_API_DRIVER ? 307 : 211;
	r.domain = domain;
	synth_rec(s, &r, sizeof(r));
}

void synth_kernel_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		       uint32_t device, uint32_t correlation, uint32_t graph_id,
		       uint64_t graph_node)
{
	struct gp_rec_kernel r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_KERNEL;
	r.h.size = sizeof(r);
	r.start = start;
	r.end = end;
	r.correlation = correlation;
	r.name = name;
	r.device = device;
	r.context = 1;
	r.stream = 7;
	r.grid[0] = r.grid[1] = r.grid[2] = 1;
	r.block[0] = 128;
	r.block[1] = r.block[2] = 1;
	r.graph_id = graph_id;
	r.graph_node = graph_node;
	synth_rec(s, &r, sizeof(r));
}

void synth_memcpy_corr(struct synth *s, unsigned kind, uint64_t bytes, uint64_t start,
		       uint64_t end, uint32_t device, uint32_t correlation)
{
	struct gp_rec_memcpy r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_MEMCPY;
	r.h.size = sizeof(r);
	r.start = start;
	r.end = end;
	r.bytes = bytes;
	r.correlation = correlation;
	r.device = device;
	r.context = 1;
	r.stream = 7;
	r.copy_kind = (uint8_t)kind;
	r.src_device = r.dst_device = device;
	synth_rec(s, &r, sizeof(r));
}

