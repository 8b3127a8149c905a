/*
 * synth_job: writes a synthetic trace of one rank of a training job with
 * nested NVTX ranges, for timing the analyzer without a GPU (make
 * bench-analyzer).  Runs offline, as a program of its own.
 *
 *     synth_job [--rank R] [--sync] [--open[-unannounced]] [--flat] [--autograd[-ranges]] [--graphs]
 *               [--emit] [--nccl] [--gpu-samples] [--threads K] N OUT.gpuprof
 *
 * About N records: steps (an NVTX push/pop range "step") of 8 layers
 * ("layer") of 4 ops ("attn", "mlp", ...), each op launching 4 kernels
 * (a cudaLaunchKernel API record and its kernel, same correlation, on one
 * of 4 streams); every 16th launch is followed by a cudaMemcpyAsync and its
 * copy.  The record mix is about 43% kernels, 45% API calls, 12% NVTX
 * ranges, the one of the analyzer's issue figures.  Ranges are written
 * when they close, after what they enclose, as the recorder writes them.
 * R (default 0) is the rank in the PROCESS record; pid and timing vary
 * with it so that rank traces differ; each rank has a GPU of its own (its
 * UUID).  With --sync, each step also has host code after its first layer
 * and ends in a cudaDeviceSynchronize and more host code, so that the GPU
 * idles (findings: GPU starvation, synchronizations).  With --open, a
 * range "main" opened before the first step is still open at exit: the
 * recorder announces it open at its first drain (GP_REC_NVTX_OPEN) and
 * writes it last, unterminated; --open-unannounced writes it last only, as
 * the recorder did before announcements (a single trace's NVTX pass then
 * cannot ride in the report's read: docs/USAGE.md, Large jobs).  One step
 * in five is announced open with its first layer and op (a drain in it).  With
 * --flat, no range at all, NVTX traced (as the recorder's default traces a
 * program without NVTX).  With --autograd, each step's last half of its
 * layers is its backward pass, as PyTorch runs it: a range "backward" on
 * the main thread while another thread (autograd's) launches their
 * kernels, that thread without ranges of its own; with --autograd-ranges,
 * their layers' and ops' ranges on that thread too (as
 * torch.autograd.profiler.emit_nvtx() writes them).  With --graphs, a
 * CUDA graph of GRAPH_NODES kernels is captured in a range "capture"
 * before the first step (a GP_REC_GRAPH_NODE record per node, naming that
 * range) and launched at each step's end in a range "optimizer" (its
 * kernels count in "capture", where they were captured).  With --emit,
 * each op's range is named as PyTorch's emit_nvtx() names it, a string of
 * its own each call ("attn, seq = N, op_id = M, sizes = [[...]]").  With
 * --nccl, each step ends in an NCCL AllReduce on a stream of its own that
 * starts once the step's kernels are done and ends, on every rank, at the
 * same time of a fixed schedule (NCCL_PERIOD a step; a rank that runs late
 * ends later): what --align nccl matches; NCCL's ranges (domain "NCCL") as
 * a PyTorch job's: "ncclAllReduce" around each call, and the communicator's
 * "ncclCommInitRankConfig", opened at the first and open at exit (it does
 * not nest in the first step).  With --gpu-samples, the CONFIG
 * says --gpu-metrics was on, and a PM series of two metrics has a sample
 * every 100 us from the first step on, written after each step (the GPU
 * over time's averages over the ranges).  With --threads K, each step, its
 * ranges and launches, runs on one of K threads in turn (a server's pool of
 * workers; K past 64: other threads' kernels are not counted into ranges).
 * The writer is test/unit/synth.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define NKERN 12
#define GS_INTERVAL 100000ull /* --gpu-samples: PM sampling every 100 us */
#define LAYERS 8
#define OPS 4
#define LAUNCHES 4
#define TID 100
#define AUTOGRAD_TID 101 /* --autograd: the backward pass's launching thread */
#define GRAPH_NODES 8    /* --graphs */
#define GRAPH_ID 3
#define NCCL_PERIOD 4000000ull      /* --nccl: ns a step, whatever the rank */
#define NCCL_PERIOD_SYNC 24000000ull /* ... with --sync's host code */
#define NCCL_STREAM 13

static const char *const kernels[NKERN] = {
	"_Z8sgemm_ntiiiPKfS0_Pf",
	"_Z13attention_fwdPK6__halfS1_S1_PS_iii",
	"_Z11softmax_fwdPKfPfii",
	"_Z10layer_normPKfS0_S0_Pfii",
	"_Z4geluPKfPfi",
	"_Z13bias_add_reluPfPKfii",
	"_Z10dropout_fwPKfPfPhfi",
	"_Z13attention_bwdPK6__halfS1_S1_PS_iii",
	"_Z9adam_stepPfS_S_PKfffffi",
	"_Z16allreduce_kernelPfPKfi",
	"_Z9transposePfPKfii",
	"_Z6reducePfS_i",
};

static const char *const opnames[OPS] = { "attn", "mlp", "norm", "residual" };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

static uint32_t rec_domain; /* the domain of the NVTX records written (0: the default) */

/* An NVTX record of type (GP_REC_NVTX_RANGE, or _OPEN: end 0) with aux flags. */
static void nvtx_rec(struct synth *s, uint16_t type, uint32_t name, uint64_t start, uint64_t end,
		     uint64_t id, uint32_t depth, uint32_t aux, uint32_t tid)
{
	struct gp_rec_nvtx r;

	memset(&r, 0, sizeof(r));
	r.domain = rec_domain;
	r.h.type = type;
	r.h.size = sizeof(r);
	r.h.aux = (uint16_t)aux;
	r.start = start;
	r.end = end;
	r.id = id;
	r.tid_start = r.tid_end = tid;
	r.name = name;
	r.depth = depth;
	synth_rec(s, &r, sizeof(r));
}

static void range_aux(struct synth *s, uint32_t name, uint64_t start, uint64_t end, uint64_t id,
		      uint32_t depth, uint32_t aux, uint32_t tid)
{
	nvtx_rec(s, GP_REC_NVTX_RANGE, name, start, end, id, depth, aux, tid);
}

static int flat; /* --flat: no ranges */

/* Op o's name of layer l as emit_nvtx() writes it (seq: its call's), a string of its own. */
static uint32_t emit_name(struct synth *s, int o, int l, uint64_t seq)
{
	char name[96];

	snprintf(name, sizeof(name), "%s, seq = %llu, op_id = %llu, sizes = [[%d, 1024]]",
		 opnames[o], (unsigned long long)seq, (unsigned long long)(seq + 7),
		 l % 2 ? 512 : 256);
	return synth_string(s, name);
}

/* A range still open as the recorder drains (GP_REC_NVTX_OPEN): before what it holds. */
static void announce(struct synth *s, uint32_t name, uint64_t start, uint64_t id, uint32_t depth,
		     uint32_t tid)
{
	if (!flat)
		nvtx_rec(s, GP_REC_NVTX_OPEN, name, start, 0, id, depth, GP_NVTX_PUSHPOP, tid);
}

static void range(struct synth *s, uint32_t name, uint64_t start, uint64_t end, uint64_t id,
		  uint32_t depth, uint32_t tid)
{
	if (!flat)
		range_aux(s, name, start, end, id, depth, GP_NVTX_PUSHPOP, tid);
}

int main(int argc, char **argv)
{
	uint32_t kid[NKERN], op[OPS], step_name, layer_name, launch, copy, rank = 0, dsync = 0;
	int sync = 0, open = 0, autograd = 0, graphs = 0, emit = 0, nccl = 0, gs = 0;
	uint32_t threads = 1;
	uint64_t nstep = 0;
	uint64_t gs_next = 0;
	uint64_t steps = 0, nccl_t0 = 0, init_id = 0, init_start = 0;
	uint32_t nccl_domain = 0, nccl_ar = 0, nccl_init = 0;
	uint32_t allreduce = 0;
	uint64_t seq = 0;
	uint64_t t, stream_end[4] = { 0, 0, 0, 0 }, range_id = 1, main_start = 0, main_id = 0;
	uint32_t main_name = 0, backward_name = 0, glaunch = 0, opt_name = 0;
	uint8_t uuid[16];
	unsigned long long n, launches = 0;
	uint32_t corr = 1;
	struct synth *s;
	char *end = NULL;

	for (;;) {
		if (argc >= 5 && !strcmp(argv[1], "--rank")) {
			rank = (uint32_t)strtoul(argv[2], NULL, 10);
			argv += 2;
			argc -= 2;
		} else if (argc >= 4 && !strcmp(argv[1], "--sync")) {
			sync = 1;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--open")) {
			open = 1;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--open-unannounced")) {
			open = 2;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--flat")) {
			flat = 1;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--autograd")) {
			autograd = 1;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--autograd-ranges")) {
			autograd = 2;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--graphs")) {
			graphs = 1;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--emit")) {
			emit = 1;
			argv++;
			argc--;
		} else if (argc >= 4 && !strcmp(argv[1], "--nccl")) {
			nccl = 1;
			argv++;
			argc--;
		} else if (argc >= 5 && !strcmp(argv[1], "--threads")) {
			threads = (uint32_t)strtoul(argv[2], NULL, 10);
			if (threads < 1 || threads > 100000) {
				fprintf(stderr, "synth_job: --threads takes 1 to 100000\n");
				return 2;
			}
			argv += 2;
			argc -= 2;
		} else if (argc >= 4 && !strcmp(argv[1], "--gpu-samples")) {
			gs = 1;
			argv++;
			argc--;
		} else {
			break;
		}
	}
	if (argc != 3) {
		fprintf(stderr,
			"usage: %s [--rank R] [--sync] [--open[-unannounced]] [--flat] [--autograd[-ranges]] "
			"[--graphs] [--emit] [--nccl] [--gpu-samples] [--threads K] N OUT.gpuprof\n",
			argv[0]);
		return 2;
	}
	n = strtoull(argv[1], &end, 10);
	if (!end || *end || n == 0) {
		fprintf(stderr, "synth_job: bad record count '%s'\n", argv[1]);
		return 2;
	}
	rng += rank * 0x100000001b3ull;
	s = synth_open(argv[2]);
	if (!s) {
		fprintf(stderr, "synth_job: cannot open %s\n", argv[2]);
		return 1;
	}
	s->delta = 1;
	s->hdr.features = GP_FEAT_DELTA;
	t = 1700000000000000000ull;
	synth_process(s, 5000 + rank, "bench-host", "python train.py --synthetic", rank, t);
	/* As the recorder starts: its clocks read together (what aligns ranks). */
	synth_clock_sync(s, t, t, t - 1690000000000000000ull);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET | GP_TRACE_API | GP_TRACE_NVTX | GP_TRACE_SAMPLERS_SAID | (gs ? GP_TRACE_GPU_METRICS : 0u), 0, 0);
	/*
	 * Each rank its own GPU (UUID), as the ranks of a job have: bytes
	 * 0x10 + rank + i, past 255 ranks the rank's higher bytes in the last three.
	 */
	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)((0x10 + rank + (uint32_t)i) ^ (i >= 13 ? rank >> (8 * (i - 12)) : 0));
	synth_device_uuid(s, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85ull << 30, uuid);
	for (int i = 0; i < NKERN; i++)
		kid[i] = synth_string(s, kernels[i]);
	for (int i = 0; i < OPS; i++)
		op[i] = synth_string(s, opnames[i]);
	step_name = synth_string(s, "step");
	layer_name = synth_string(s, "layer");
	launch = synth_string(s, "cudaLaunchKernel");
	copy = synth_string(s, "cudaMemcpyAsync");
	if (sync)
		dsync = synth_string(s, "cudaDeviceSynchronize");
	if (autograd)
		backward_name = synth_string(s, "backward");
	t += 1000000;
	if (open) {
		main_start = t;
		main_id = range_id++;
		main_name = synth_string(s, "main");
		/* The recorder's first drain finds it open. */
		if (open == 1)
			announce(s, main_name, main_start, main_id, 0, TID);
	}
	if (graphs) {
		/* The capture: one launch (no activity) and one node record per node. */
		uint64_t cap_start = t, cap_id = range_id++;

		glaunch = synth_string(s, "cudaGraphLaunch");
		opt_name = synth_string(s, "optimizer");
		t += 500;
		for (uint32_t i = 0; i < GRAPH_NODES; i++) {
			synth_api_at_corr(s, launch, t, t + 2000, TID, corr);
			synth_graph_node(s, 100 + i, GRAPH_ID, corr++, 0, cap_id);
			t += 2500;
		}
		range(s, synth_string(s, "capture"), cap_start, t, cap_id, 0, TID);
		t += 1000;
	}
	if (nccl) {
		allreduce = synth_string(s, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
		nccl_domain = synth_string(s, "NCCL");
		nccl_ar = synth_string(s, "ncclAllReduce");
		nccl_init = synth_string(s, "ncclCommInitRankConfig");
	}
	nccl_t0 = t;
	while (s->records < n) {
		uint64_t step_start = t, step_id = range_id++, bw_start = 0, bw_id = 0;
		/* --threads K: each step on one of K threads (a pool's), in turn: TID, 1001, 1002... */
		uint32_t step_tid = nstep % threads ? 1000 + (uint32_t)(nstep % threads) : TID;
		/* A drain inside the first op of one step in five: it, its layer and step open. */
		int in_drain = nstep++ % 5 == 2;

		for (int l = 0; l < LAYERS; l++) {
			uint64_t layer_start = t, layer_id = range_id++;
			/* --autograd: the backward layers' launches from autograd's thread. */
			int bw = autograd && l >= LAYERS / 2;
			uint32_t tid = bw ? AUTOGRAD_TID : step_tid;

			if (bw && l == LAYERS / 2) {
				bw_start = t;
				bw_id = range_id++;
			}

			for (int o = 0; o < OPS; o++) {
				uint64_t op_start = t, op_id = range_id++;
				uint32_t op_name = 0; /* --emit: its call's name, once announced */

				t += 300;
				if (in_drain && l == 0 && o == 0) {
					announce(s, step_name, step_start, step_id, 0, tid);
					announce(s, layer_name, layer_start, layer_id, 1, tid);
					op_name = emit ? emit_name(s, o, l, seq) : 0;
					announce(s, emit ? op_name : op[o], op_start, op_id, 2, tid);
				}
				for (int k = 0; k < LAUNCHES; k++) {
					uint32_t r = rnd(), st = r % 4, kn = (uint32_t)(o * 3 + k % 3);
					uint64_t call = 2000 + r % 3000, dur = 1500 + (r >> 8) % 48000;
					uint64_t start;

					if (stream_end[st] > t + 200000)
						t = stream_end[st] - 200000;
					synth_api_at_corr(s, launch, t, t + call, tid, corr);
					start = t + call + 2500 + rnd() % 2000;
					if (start < stream_end[st])
						start = stream_end[st];
					synth_kernel_at_corr(s, kid[kn % NKERN], start, start + dur, 0,
							     7 + st, corr);
					stream_end[st] = start + dur + 100;
					corr++;
					t += call + 500 + rnd() % 1500;
					if (++launches % 16 == 0) {
						uint64_t b = (uint64_t)(r % 256 + 1) << 14, d = 1000 + b / 20;

						synth_api_at_corr(s, copy, t, t + 3000, tid, corr);
						start = t + 4000 > stream_end[st] ? t + 4000 : stream_end[st];
						synth_memcpy_at_corr(s, launches % 32 ? GP_COPY_DTOH :
								     GP_COPY_HTOD, b, start, start + d, 0,
								     7 + st, corr);
						stream_end[st] = start + d + 100;
						corr++;
						t += 3500;
					}
				}
				if ((!bw || autograd == 2) && emit) {
					/* Each call's own name, as emit_nvtx() writes it. */
					range(s, op_name ? op_name : emit_name(s, o, l, seq), op_start, t,
					      op_id, bw ? 1 : 2, tid);
					seq++;
				} else if (!bw || autograd == 2) {
					range(s, op[o], op_start, t, op_id, bw ? 1 : 2, tid);
				}
				t += 200;
			}
			if (!bw || autograd == 2)
				range(s, layer_name, layer_start, t, layer_id, bw ? 0 : 1, tid);
			t += 200;
			/* --sync: host code (data, Python) between the first layers: the GPU starves. */
			if (sync && l == 0)
				t += 1000000 + rnd() % 1000000;
		}
		if (autograd)
			range(s, backward_name, bw_start, t - 100, bw_id, 1, step_tid);
		if (graphs) {
			/* The optimizer: the captured graph launched, its kernels in a row on stream 7. */
			uint64_t opt_start = t, opt_id = range_id++, start;

			t += 300;
			synth_api_at_corr(s, glaunch, t, t + 4000, TID, corr);
			start = t + 6000 > stream_end[0] ? t + 6000 : stream_end[0];
			for (uint32_t i = 0; i < GRAPH_NODES; i++) {
				struct gp_rec_kernel k;
				uint64_t dur = 2000 + rnd() % 8000;

				synth_kernel_init(&k, kid[8], start, start + dur, 0, 7, corr);
				k.graph_id = GRAPH_ID;
				k.graph_node = 100 + i;
				synth_rec(s, &k, sizeof(k));
				start += dur + 200;
			}
			stream_end[0] = start;
			corr++;
			t += 4500;
			range(s, opt_name, opt_start, t, opt_id, 1, step_tid);
			t += 200;
		}
		if (nccl) {
			/* The step's gradients all-reduced once its kernels are done; the host waits. */
			uint64_t drained = t + 5000, due, start;

			for (int i = 0; i < 4; i++)
				if (stream_end[i] > drained)
					drained = stream_end[i];
			due = nccl_t0 + ++steps * (sync ? NCCL_PERIOD_SYNC : NCCL_PERIOD);
			/*
			 * NCCL's own ranges (domain "NCCL"): the communicator's, made at
			 * the first collective and open at exit (announced open, as a
			 * drain writes it: it does not nest in the first step), and one
			 * around each collective's call.
			 */
			rec_domain = nccl_domain;
			if (!init_id) {
				init_id = range_id++;
				init_start = t;
				announce(s, nccl_init, t, init_id, 1, step_tid);
				t += 2000;
			}
			range(s, nccl_ar, t, t + 4500, range_id++, 2, step_tid);
			rec_domain = 0;
			synth_api_at_corr(s, launch, t, t + 4000, TID, corr);
			start = drained;
			synth_kernel_at_corr(s, allreduce, start, due > start + 20000 ? due : start + 20000,
					     0, NCCL_STREAM, corr++);
			t = (due > start + 20000 ? due : start + 20000) + 1000;
		}
		range(s, step_name, step_start, t, step_id, 0, step_tid);
		t += 1000;
		/* --gpu-samples: the step's PM samples, written as a drain writes them. */
		if (gs && !gs_next) {
			static const char *const pm[] = {
				"sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
				"dram__bytes_read.sum.per_second",
			};

			synth_gpu_series(s, 1, GP_GPU_SRC_PM, GS_INTERVAL, pm, 2);
			gs_next = step_start;
		}
		for (; gs && gs_next + GS_INTERVAL <= t; gs_next += GS_INTERVAL) {
			double v[2] = { (double)(rnd() % 1000) / 10, (double)(rnd() % 3000) * 1e9 };

			synth_gpu_sample(s, 1, gs_next, gs_next + GS_INTERVAL, v, 2);
		}
		/* --sync: the step ends in a synchronization (a loss read back), then host code. */
		if (sync) {
			uint64_t drained = t;

			for (int i = 0; i < 4; i++)
				if (stream_end[i] > drained)
					drained = stream_end[i];
			synth_api_at_corr(s, dsync, t, drained + 2000, TID, corr++);
			t = drained + 2000 + 500000 + rnd() % (1000000 + 500000 * rank);
		}
	}
	for (int i = 0; i < 4; i++)
		if (stream_end[i] > t)
			t = stream_end[i];
	if (open)
		range_aux(s, main_name, main_start, t + 1000000, main_id, 0,
			  GP_NVTX_PUSHPOP | GP_NVTX_UNTERMINATED, TID);
	if (init_id && !flat) {
		rec_domain = nccl_domain;
		range_aux(s, nccl_init, init_start, t + 1000000, init_id, 1,
			  GP_NVTX_PUSHPOP | GP_NVTX_UNTERMINATED, TID);
		rec_domain = 0;
	}
	synth_end(s, t + 1000000, 0);
	if (synth_close(s, NULL, NULL)) {
		fprintf(stderr, "synth_job: writing %s failed\n", argv[2]);
		return 1;
	}
	return 0;
}
