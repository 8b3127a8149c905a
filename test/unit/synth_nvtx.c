/*
 * Synthetic NVTX, API and activity records (see synth_nvtx.h).  Test
 * code, runs offline only.
 */
#include "synth_nvtx.h"

#include <string.h>

static void nvtx_rec(struct synth *s, uint16_t type, uint32_t name, uint32_t domain,
		     uint64_t start, uint64_t end, uint32_t tid_start, uint32_t tid_end, uint64_t id,
		     uint32_t aux)
{
	struct gp_rec_nvtx r;

	memset(&r, 0, sizeof(r));
	r.h.type = type;
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

void synth_nvtx_range(struct synth *s, uint32_t name, uint32_t domain, uint64_t start,
		      uint64_t end, uint32_t tid_start, uint32_t tid_end, uint64_t id,
		      uint32_t aux)
{
	nvtx_rec(s, GP_REC_NVTX_RANGE, name, domain, start, end, tid_start, tid_end, id, aux);
}

void synth_nvtx_open(struct synth *s, uint32_t name, uint32_t domain, uint64_t start,
		     uint32_t tid, uint64_t id)
{
	nvtx_rec(s, GP_REC_NVTX_OPEN, name, domain, start, 0, tid, tid, id, GP_NVTX_PUSHPOP);
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
	synth_api_corr_ret(s, name, start, end, tid, correlation, domain, 0);
}

void synth_api_corr_ret(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
			uint32_t tid, uint32_t correlation, uint32_t domain, int32_t ret)
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
	r.ret = ret;
	synth_rec(s, &r, sizeof(r));
}

void synth_kernel_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		       uint32_t device, uint32_t correlation, uint32_t graph_id,
		       uint64_t graph_node)
{
	struct gp_rec_kernel r;

	synth_kernel_init(&r, name, start, end, device, 7, correlation);
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

	synth_memcpy_init(&r, kind, bytes, start, end, device, 7, correlation);
	r.src_device = r.dst_device = device;
	synth_rec(s, &r, sizeof(r));
}


static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

void synth_kernel_replayed(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
			   uint32_t stream, uint32_t correlation)
{
	struct gp_rec_kernel r;

	synth_kernel_init(&r, name, start, end, 0, stream, correlation);
	r.grid[0] = r.grid[1] = r.grid[2] = 1;
	r.block[0] = r.block[1] = r.block[2] = 1;
	r.flags = GP_ACT_REPLAYED;
	synth_rec(s, &r, sizeof(r));
}

void synth_random_app(const char *path, uint32_t pid, uint64_t t0, uint64_t grid, uint64_t span,
		      int startend)
{
	struct synth *s = synth_open(path);
	uint32_t api, rg, k, dom;

	synth_process(s, pid, "host", "./app", UINT32_MAX, t0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	api = synth_string(s, "cudaLaunchKernel");
	rg = synth_string(s, "r");
	k = synth_string(s, "_Z1kv");
	dom = synth_string(s, "D");
	for (uint32_t i = 0; i < 3000; i++) {
		uint64_t t = t0 + 1000 + grid * rnd(span / grid);
		uint64_t len = grid * rnd((i % 10 ? 2000 : span / 5) / grid);

		switch (rnd(4)) {
		case 0:
			synth_api_corr(s, api, t, t + len, 7, i + 1, GP_API_RUNTIME);
			break;
		case 1:
			synth_kernel_at_corr(s, k, t, t + len, 0, 3, i + 1);
			break;
		default:
			synth_nvtx_range(s, rg, rnd(2) ? dom : 0, t, t + len, 7, 7, i + 1,
					 !startend || rnd(8) ? GP_NVTX_PUSHPOP : 0);
			break;
		}
	}
	synth_end(s, t0 + 2000000, 0);
	synth_close(s, NULL, NULL);
}
