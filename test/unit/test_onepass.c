/*
 * Unit tests of the one-pass read (model/ranges.h: one_pass; read/reader.h:
 * ga_reader_read_ahead): a trace without NVTX is decoded once, its scan
 * (copy pairing, the first time) done by the look-ahead of the model's
 * read, with the same results as the two reads it replaces: staged peer
 * copies paired, the first time found, clock shifts applied; a trace with
 * NVTX is still scanned whole first; legs of a staged copy further apart
 * than the look-ahead are not paired (the bounded window), and are where
 * the two reads remain (two_reads, the reference); the streaming exports
 * read once too: each activity's API call found by the look-ahead (Chrome
 * and Perfetto flows), the first time from the chunk headers, or two reads
 * where a trace's chunk headers give none; the look-ahead's launch index
 * (each id's earliest call, whichever comes first of call and activity, no
 * launch for a call whose activity has not come) as the whole scan's.
 * Test code, runs offline only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/analysis.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

/*
 * Three staged peer copies (a DtoH leg on device 0, an HtoD leg on device
 * 1, same correlation and bytes), the legs of the third `gap` chunks apart;
 * a kernel before them all.  nvtx: NVTX traced, with one range.
 */
static void write_trace(const char *path, unsigned gap, int nvtx, const char *host,
			uint64_t sync)
{
	struct synth *s = synth_open(path);
	uint32_t k, n;

	synth_process(s, 77, host, "peer", 0, T0);
	if (sync)
		synth_clock_sync(s, T0, T0 + sync, 1000);
	synth_device(s, 0, "GPU A", 9, 0, 132, 1ull << 36, 1);
	synth_device(s, 1, "GPU B", 9, 0, 132, 1ull << 36, 2);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | (nvtx ? GP_TRACE_NVTX : 0), 0, 0);
	k = synth_string(s, "_Z1kv");
	n = synth_string(s, "r");
	synth_flush_chunk(s);
	synth_kernel_corr(s, k, T0 + 500000, T0 + 600000, 0, 800, 0, 0);
	for (uint32_t i = 0; i < 3; i++) {
		uint64_t t = T0 + 1000000 + i * 100000;

		synth_memcpy_corr(s, GP_COPY_DTOH, 4000000, t, t + 1000, 0, 900 + i);
		if (i == 2)
			for (unsigned c = 0; c < gap; c++) {
				synth_flush_chunk(s);
				synth_kernel_corr(s, k, t + 100 + c, t + 200 + c, 0, 1000 + c, 0, 0);
			}
		synth_memcpy_corr(s, GP_COPY_HTOD, 4000000, t + 2000, t + 2500, 1, 900 + i);
	}
	if (nvtx)
		synth_nvtx_range(s, n, 0, T0 + 100, T0 + 200, 5, 5, 1, GP_NVTX_PUSHPOP);
	synth_end(s, T0 + 3000000, 0);
	synth_close(s, NULL, NULL);
}

struct run {
	struct ga_analysis an;
	struct ga_filter flt;
	int ok;
};

/* Build the analysis of paths; two: scan each trace whole first (the reference). */
static void build(struct run *r, char **paths, int n, int two)
{
	struct ga_analysis_opts o = { .stack_depth = 3, .two_reads = two };

	ga_filter_init(&r->flt);
	r->ok = ga_analysis_init(&r->an, &o, &r->flt) == 0 &&
		ga_analysis_build(&r->an, paths, n) == 0;
}

static void done(struct run *r)
{
	ga_analysis_free(&r->an);
	ga_filter_free(&r->flt);
}

static uint64_t staged_count(const struct ga_model *m)
{
	return m->copy[GA_COPY_STAGED_PEER].count;
}

static void test_one_read(void)
{
	char path[128], *paths[1] = { path };
	struct run a, b;

	tap_begin("one pass: a trace without NVTX is scanned in the model's read");
	snprintf(path, sizeof(path), "%s/peer.gpuprof", dir);
	write_trace(path, 3, 0, "h", 0);
	build(&a, paths, 1, 0);
	CHECK(a.ok);
	/* The scan stopped at CONFIG and left the trace to the look-ahead. */
	CHECK(a.an.rg.one_pass && a.an.rg.ahead_procs && a.an.rg.ahead_procs[0] == 1);
	CHECKF(staged_count(&a.an.m) == 3, "%llu staged", (unsigned long long)staged_count(&a.an.m));
	/* Its first time is the chunk headers' (test_streaming), not the look-ahead's. */
	/* Two reads: the same. */
	build(&b, paths, 1, 1);
	CHECK(b.ok && !b.an.rg.one_pass);
	CHECK(staged_count(&b.an.m) == 3 && b.an.rg.first_ns == T0 + 500000);
	CHECK(a.an.m.copy[GP_COPY_DTOH].count == 0 && b.an.m.copy[GP_COPY_DTOH].count == 0);
	done(&a);
	done(&b);
	tap_end();
}

static void test_window(void)
{
	char path[128], *paths[1] = { path };
	struct run a, b;

	tap_begin("one pass: legs further apart than the look-ahead are not paired");
	snprintf(path, sizeof(path), "%s/far.gpuprof", dir);
	write_trace(path, GA_MODEL_AHEAD + 2, 0, "h", 0);
	build(&a, paths, 1, 0);
	build(&b, paths, 1, 1);
	CHECK(a.ok && b.ok);
	/* The far pair's legs count as a DtoH and an HtoD copy, once each. */
	CHECKF(staged_count(&a.an.m) == 2 && a.an.m.copy[GP_COPY_DTOH].count == 1 &&
	       a.an.m.copy[GP_COPY_HTOD].count == 1 && a.an.m.leg_st[0].count == 2 &&
	       a.an.m.leg_st[1].count == 2, "one pass: %llu staged, %llu DtoH, %llu HtoD",
	       (unsigned long long)staged_count(&a.an.m),
	       (unsigned long long)a.an.m.copy[GP_COPY_DTOH].count,
	       (unsigned long long)a.an.m.copy[GP_COPY_HTOD].count);
	CHECKF(staged_count(&b.an.m) == 3, "two reads: %llu staged",
	       (unsigned long long)staged_count(&b.an.m));
	done(&a);
	done(&b);
	/*
	 * A third leg of a pair, beyond the window: the pair was read as one
	 * already and stands; the third counts as a copy of its own.  (Read
	 * twice, three legs are no pair at all.)
	 */
	{
		struct synth *s = synth_open(path);
		uint32_t k;

		synth_process(s, 77, "h", "peer", 0, T0);
		synth_device(s, 0, "GPU A", 9, 0, 132, 1ull << 36, 1);
		synth_device(s, 1, "GPU B", 9, 0, 132, 1ull << 36, 2);
		synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY, 0, 0);
		k = synth_string(s, "_Z1kv");
		synth_memcpy_corr(s, GP_COPY_DTOH, 64, T0 + 1000, T0 + 1100, 0, 7);
		synth_memcpy_corr(s, GP_COPY_HTOD, 64, T0 + 1200, T0 + 1300, 1, 7);
		for (unsigned c = 0; c < GA_MODEL_AHEAD + 2; c++) {
			synth_flush_chunk(s);
			synth_kernel_corr(s, k, T0 + 2000 + c, T0 + 2100 + c, 0, 100 + c, 0, 0);
		}
		synth_memcpy_corr(s, GP_COPY_DTOH, 64, T0 + 9000, T0 + 9100, 0, 7);
		synth_end(s, T0 + 10000, 0);
		synth_close(s, NULL, NULL);
	}
	build(&a, paths, 1, 0);
	build(&b, paths, 1, 1);
	CHECK(a.ok && b.ok);
	CHECKF(staged_count(&a.an.m) == 1 && a.an.m.copy[GP_COPY_DTOH].count == 1 &&
	       a.an.m.copy[GP_COPY_HTOD].count == 0 && a.an.m.leg_st[0].count == 1 &&
	       a.an.m.leg_st[1].count == 1, "one pass, third leg: %llu staged, %llu DtoH",
	       (unsigned long long)staged_count(&a.an.m),
	       (unsigned long long)a.an.m.copy[GP_COPY_DTOH].count);
	CHECK(staged_count(&b.an.m) == 0 && b.an.m.copy[GP_COPY_DTOH].count == 2 &&
	      b.an.m.copy[GP_COPY_HTOD].count == 1);
	done(&a);
	done(&b);
	/* Just inside the window: paired. */
	write_trace(path, GA_MODEL_AHEAD - 1, 0, "h", 0);
	build(&a, paths, 1, 0);
	CHECK(a.ok && staged_count(&a.an.m) == 3);
	done(&a);
	tap_end();
}

static void test_nvtx_and_shift(void)
{
	char p0[128], p1[128], *paths[2] = { p0, p1 };
	struct run a, b;

	tap_begin("one pass: traces with NVTX are scanned first; shifted clocks alike");
	snprintf(p0, sizeof(p0), "%s/nvtx.gpuprof", dir);
	snprintf(p1, sizeof(p1), "%s/other-host.gpuprof", dir);
	write_trace(p0, 0, 1, "h", 7000);
	write_trace(p1, 1, 0, "g", 5000);
	build(&a, paths, 2, 0);
	build(&b, paths, 2, 1);
	CHECK(a.ok && b.ok);
	CHECK(a.ok && a.an.rg.ahead_procs[0] == 0 && a.an.rg.ahead_procs[1] == 1);
	CHECK(a.an.rg.nranges == 1 && staged_count(&a.an.m) == 6 && staged_count(&b.an.m) == 6);
	/* Two hosts: times moved by their clocks, the same either way. */
	CHECK(a.an.shifts && a.an.shifts[1] != a.an.shifts[0]);
	CHECK(a.an.m.first_start == b.an.m.first_start && a.an.m.last_end == b.an.m.last_end);
	done(&a);
	done(&b);
	tap_end();
}

/*
 * The streaming exports' trace: kernels on correlations 100.. with their
 * API calls (thread 5) before them, one (corr 200) whose call comes in the
 * next chunk, one (corr 300) whose call comes GA_MODEL_AHEAD + 2 chunks
 * later, and in the last chunk a call (corr 400, no activity) earlier than
 * everything else: the first time.  tmin0: chunk headers without t_min.
 */
static void write_stream(const char *path, int tmin0)
{
	struct synth *s = synth_open(path);
	uint32_t k, f;

	synth_process(s, 78, "h", "stream", 0, T0);
	synth_device(s, 0, "GPU A", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 0);
	k = synth_string(s, "_Z1kv");
	f = synth_string(s, "cudaLaunchKernel");
	for (uint32_t c = 0; c < 3; c++) {
		uint64_t t = T0 + 5000000000ull + c * 1000;

		if (tmin0)
			s->t_min = 0;
		synth_flush_chunk(s);
		synth_api_at_corr(s, f, t, t + 10, 5, 100 + c);
		synth_kernel_at_corr(s, k, t + 20, t + 30, 0, 7, 100 + c);
	}
	synth_kernel_at_corr(s, k, T0 + 5000010000ull, T0 + 5000010100ull, 0, 7, 200);
	synth_kernel_at_corr(s, k, T0 + 5000020000ull, T0 + 5000020100ull, 0, 7, 300);
	for (unsigned c = 0; c < GA_MODEL_AHEAD + 2; c++) {
		if (tmin0)
			s->t_min = 0;
		synth_flush_chunk(s);
		if (c == 0)
			synth_api_at_corr(s, f, T0 + 5000009000ull, T0 + 5000009010ull, 5, 200);
		synth_kernel_at_corr(s, k, T0 + 5000030000ull + c, T0 + 5000030010ull + c, 0, 7,
				     500 + c);
	}
	synth_api_at_corr(s, f, T0 + 5000019000ull, T0 + 5000019010ull, 5, 300);
	/* Earlier than all: another second. */
	synth_api_at_corr(s, f, T0 + 4000000000ull, T0 + 4000000010ull, 5, 400);
	synth_end(s, T0 + 6000000000ull, 0);
	if (tmin0)
		s->t_min = 0;
	synth_close(s, NULL, NULL);
}

/* What the streaming exports ask: each activity's API call as it streams. */
struct streamed {
	struct ga_analysis *an;
	uint32_t corr[64], tid[64];
	uint64_t t[64], first[64];
	int found[64], n;
};

static int on_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct streamed *x = ctx;

	(void)m;
	if (x->n < 64) {
		x->corr[x->n] = a->correlation;
		x->found[x->n] = ga_ranges_launch(&x->an->rg, a, &x->tid[x->n], &x->t[x->n]);
		x->first[x->n] = x->an->first_ns;
		x->n++;
	}
	return 0;
}

/* As an export: hooks, launches; want_first as Chrome and Perfetto. */
/* r's analysis as an export's: launches asked for; 0, or -1 (r->ok 0). */
static int init_launches(struct run *r, int two)
{
	struct ga_analysis_opts o = { .stack_depth = 3, .two_reads = two, .launches = 1 };

	ga_filter_init(&r->flt);
	r->ok = ga_analysis_init(&r->an, &o, &r->flt) == 0;
	return r->ok ? 0 : -1;
}

static void build_stream(struct run *r, struct streamed *x, char *path, int two, int want_first)
{
	char *paths[1] = { path };

	memset(x, 0, sizeof(*x));
	if (init_launches(r, two))
		return;
	x->an = &r->an;
	r->an.m.hooks.ctx = x;
	r->an.m.hooks.act = on_act;
	r->an.want_first = want_first;
	r->ok = ga_analysis_build(&r->an, paths, 1) == 0;
}

static void test_streaming(void)
{
	char path[128];
	struct streamed xa, xb;
	struct run a, b;
	int far = 0;

	tap_begin("one pass: streaming exports (hooks, launches, the first time)");
	snprintf(path, sizeof(path), "%s/stream.gpuprof", dir);
	write_stream(path, 0);
	build_stream(&a, &xa, path, 0, 1);
	build_stream(&b, &xb, path, 1, 1);
	CHECK(a.ok && b.ok);
	CHECK(a.an.rg.one_pass && a.an.rg.ahead_procs && a.an.rg.ahead_procs[0] == 1);
	CHECK(!b.an.rg.one_pass);
	/* The first time at the first activity: the chunk headers', as two reads find it. */
	CHECKF(xa.n && xa.first[0] == T0 + 4000000000ull && xb.first[0] == xa.first[0],
	       "first %llu vs %llu", (unsigned long long)(xa.first[0] - T0),
	       (unsigned long long)(xb.first[0] - T0));
	CHECKF(xa.n == xb.n && xa.n == 15, "%d vs %d activities", xa.n, xb.n);
	for (int i = 0; i < xa.n && i < xb.n; i++) {
		CHECK(xa.corr[i] == xb.corr[i]);
		if (xa.corr[i] == 300) {
			/* Its call GA_MODEL_AHEAD + 2 chunks later: found only by two reads. */
			far = 1;
			CHECK(!xa.found[i] && xb.found[i]);
			continue;
		}
		CHECKF(xa.found[i] == xb.found[i] && (!xa.found[i] || (xa.tid[i] == xb.tid[i] &&
								       xa.t[i] == xb.t[i])),
		       "corr %u: %d %u %llu vs %d %u %llu", xa.corr[i], xa.found[i], xa.tid[i],
		       (unsigned long long)xa.t[i], xb.found[i], xb.tid[i],
		       (unsigned long long)xb.t[i]);
		/* Calls before their activity, and one in the next chunk. */
		CHECK(xa.found[i] == (xa.corr[i] < 500));
	}
	CHECK(far);
	done(&a);
	done(&b);
	/* Chunk headers without a time: the first time needs two reads. */
	write_stream(path, 1);
	build_stream(&a, &xa, path, 0, 1);
	CHECK(a.ok && !a.an.rg.one_pass && xa.n && xa.first[0] == T0 + 4000000000ull);
	done(&a);
	/* Without want_first (CSV, SQLite): once. */
	build_stream(&a, &xa, path, 0, 0);
	CHECK(a.ok && a.an.rg.one_pass && a.an.rg.ahead_procs[0] == 1);
	done(&a);
	tap_end();
}

/*
 * The launch index the look-ahead builds for the flows (ranges.c
 * ahead_api(), ahead_corr()): each id's earliest call, whichever of
 * call and activity comes first, and nothing for a call whose activity
 * has not come.  Ids in order of the cases: 10 a call, its activity,
 * then an earlier call of it on another thread (the runtime's, recorded
 * after the driver's); 11 the activity before its call; 12 two calls
 * starting together (the first recorded wins); 13 a call without an
 * activity; 14 an activity without a call; 15 a memset and a copy of
 * one call; 40 after a gap of ids; 5000 and 5001 in the next block of
 * ids, 5001's call 20 s later than the block's first time (its times
 * kept whole); 2^26 + 5 a large id (the hash); 2^23 + 7, an id that jumps
 * past GA_RANGES_LWIN, and 2^21 + 9, one that jumps far ahead of the
 * records read (read once: the hash too, not slots for each id up to them).
 */
#define BIG_CORR ((1u << 26) + 5)
#define JUMP_CORR ((1u << 23) + 7)
#define JUMP2_CORR ((1u << 21) + 9)
static void write_launches(const char *path)
{
	struct synth *s = synth_open(path);
	uint64_t t = T0 + 1000000000ull;
	uint32_t k, f;

	synth_process(s, 79, "h", "launches", 0, T0);
	synth_device(s, 0, "GPU A", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_API, 0, 0);
	k = synth_string(s, "_Z1kv");
	f = synth_string(s, "cuLaunchKernel");
	synth_flush_chunk(s);
	synth_api_at_corr(s, f, t + 100, t + 110, 5, 10);
	synth_kernel_at_corr(s, k, t + 1000, t + 1100, 0, 7, 10);
	synth_api_at_corr(s, f, t + 50, t + 120, 6, 10);
	synth_kernel_at_corr(s, k, t + 2000, t + 2100, 0, 7, 11);
	synth_api_at_corr(s, f, t + 200, t + 210, 7, 11);
	synth_api_at_corr(s, f, t + 300, t + 310, 8, 12);
	synth_api_at_corr(s, f, t + 300, t + 320, 9, 12);
	synth_kernel_at_corr(s, k, t + 3000, t + 3100, 0, 7, 12);
	synth_api_at_corr(s, f, t + 400, t + 410, 5, 13);
	synth_flush_chunk(s);
	synth_kernel_at_corr(s, k, t + 4000, t + 4100, 0, 7, 14);
	synth_api_at_corr(s, f, t + 500, t + 510, 5, 15);
	synth_memset_at_corr(s, 64, t + 5000, t + 5100, 0, 7, 15, 2);
	synth_memcpy_at_corr(s, GP_COPY_HTOD, 64, t + 5200, t + 5300, 0, 7, 15);
	synth_api_at_corr(s, f, t + 600, t + 610, 5, 40);
	synth_kernel_at_corr(s, k, t + 6000, t + 6100, 0, 7, 40);
	synth_api_at_corr(s, f, t + 700, t + 710, 5, 5000);
	synth_kernel_at_corr(s, k, t + 7000, t + 7100, 0, 7, 5000);
	synth_api_at_corr(s, f, t + 20000000000ull, t + 20000000010ull, 5, 5001);
	synth_kernel_at_corr(s, k, t + 20000001000ull, t + 20000001100ull, 0, 7, 5001);
	synth_api_at_corr(s, f, t + 800, t + 810, 5, BIG_CORR);
	synth_kernel_at_corr(s, k, t + 8000, t + 8100, 0, 7, BIG_CORR);
	synth_kernel_at_corr(s, k, t + 9000, t + 9100, 0, 7, JUMP_CORR);
	synth_api_at_corr(s, f, t + 900, t + 910, 5, JUMP_CORR);
	synth_api_at_corr(s, f, t + 950, t + 960, 5, JUMP2_CORR);
	synth_kernel_at_corr(s, k, t + 9500, t + 9600, 0, 7, JUMP2_CORR);
	synth_end(s, t + 30000000000ull, 0);
	synth_close(s, NULL, NULL);
}

/* Activities as streamed() records them, and the calls as the Perfetto export asks. */
struct launches {
	struct streamed acts;
	uint32_t corr[32];
	int launch[32], n; /* the call is its id's launch (the flow's start) */
};

static int on_act2(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	return on_act(&((struct launches *)ctx)->acts, m, a);
}

static int on_api(void *ctx, struct ga_model *m, const struct ga_api_call *c)
{
	struct launches *x = ctx;
	uint32_t tid;
	uint64_t t;

	(void)m;
	if (x->n < 32) {
		x->corr[x->n] = c->correlation;
		x->launch[x->n] = ga_ranges_launch_of(&x->acts.an->rg, c->proc, c->correlation,
						      &tid, &t) &&
				  tid == c->tid && t == c->start;
		x->n++;
	}
	return 0;
}

static void build_launches(struct run *r, struct launches *x, char *path, int two)
{
	char *paths[1] = { path };

	memset(x, 0, sizeof(*x));
	if (init_launches(r, two))
		return;
	x->acts.an = &r->an;
	r->an.m.hooks.ctx = x;
	r->an.m.hooks.act = on_act2;
	r->an.m.hooks.api = on_api;
	r->an.want_first = 1;
	r->ok = ga_analysis_build(&r->an, paths, 1) == 0;
}

static void test_launch_index(void)
{
	static const struct {
		uint32_t corr, tid;
		uint64_t t; /* after T0 + 1 s; tid 0: none */
	} want[] = {
		{ 10, 6, 50 },
		{ 11, 7, 200 },
		{ 12, 8, 300 },
		{ 14, 0, 0 },
		{ 15, 5, 500 },
		{ 15, 5, 500 },
		{ 40, 5, 600 },
		{ 5000, 5, 700 },
		{ 5001, 5, 20000000000ull },
		{ BIG_CORR, 5, 800 },
		{ JUMP_CORR, 5, 900 },
		{ JUMP2_CORR, 5, 950 },
	};
	/* The calls in order (10, 10, 11, 12, 12, 13, 15, 40, 5000, 5001, big, jumps): a launch? */
	static const int want_calls[] = { 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1 };
	char path[128];
	struct launches xa, xb;
	struct run a, b;
	size_t i;

	tap_begin("one pass: the flows' launch index (earliest call, pending calls, id blocks)");
	snprintf(path, sizeof(path), "%s/launches.gpuprof", dir);
	write_launches(path);
	build_launches(&a, &xa, path, 0);
	build_launches(&b, &xb, path, 1);
	CHECK(a.ok && b.ok && a.an.rg.one_pass && !b.an.rg.one_pass);
	CHECKF(a.an.rg.dense && a.an.rg.dense[0].n == 5002 && !a.an.rg.dense[0].gen,
	       "read once: %zu ids' slots", a.an.rg.dense ? a.an.rg.dense[0].n : 0);
	CHECKF(xa.acts.n == (int)(sizeof(want) / sizeof(want[0])) && xb.acts.n == xa.acts.n,
	       "%d and %d activities", xa.acts.n, xb.acts.n);
	for (i = 0; i < sizeof(want) / sizeof(want[0]) && (int)i < xa.acts.n; i++) {
		const struct streamed *x = &xa.acts;
		uint64_t t = want[i].t + T0 + 1000000000ull;

		CHECKF(x->corr[i] == want[i].corr && x->found[i] == (want[i].tid != 0) &&
			       (!x->found[i] || (x->tid[i] == want[i].tid && x->t[i] == t)),
		       "corr %u: %d %u %llu", x->corr[i], x->found[i], x->tid[i],
		       (unsigned long long)(x->t[i] - T0));
		/* As the whole scan before the read finds them. */
		CHECK(xb.acts.found[i] == x->found[i] &&
		      (!x->found[i] || (xb.acts.tid[i] == x->tid[i] && xb.acts.t[i] == x->t[i])));
	}
	CHECKF(xa.n == (int)(sizeof(want_calls) / sizeof(want_calls[0])) && xb.n == xa.n,
	       "%d and %d calls", xa.n, xb.n);
	for (i = 0; i < sizeof(want_calls) / sizeof(want_calls[0]) && (int)i < xa.n; i++)
		CHECKF(xa.launch[i] == want_calls[i] && xb.launch[i] == want_calls[i],
		       "call %zu (corr %u): %d %d", i, xa.corr[i], xa.launch[i], xb.launch[i]);
	done(&a);
	done(&b);
	tap_end();
}

/*
 * The launch index past GA_RANGES_LWIN ids (ranges.h: a ring of that many,
 * once half as many ids came): GA_RANGES_LWIN / 2 + 16 calls without
 * activities, one an id; then, with ids jumping ahead as a long run's would
 * have come: P (GA_RANGES_LWIN - 5000, the last block of the first
 * generation), G (GA_RANGES_LWIN + 100: the next generation takes block 0)
 * and R (GA_RANGES_LWIN + 200); then the activities of Q (id 100: its call
 * in block 0 went with it, counted lost), P and R (in the ring), and a
 * call of S (id 50, block 0) that comes only now, and its activity (the
 * calls' ring, as before the ring), and G's.  The whole scan (two reads)
 * finds the same: its calls wait for their activities in a ring of 2^20
 * ids (ranges.c API_RING_MAX), which lets Q's go too, uncounted.
 */
#define RING_P (GA_RANGES_LWIN - 5000)
#define RING_G (GA_RANGES_LWIN + 100)
#define RING_R (GA_RANGES_LWIN + 200)
static void write_ring(const char *path)
{
	struct synth *s = synth_open(path);
	uint64_t t = T0 + 1000000000ull;
	uint32_t k, f, q, i;

	synth_process(s, 80, "h", "ring", 0, T0);
	synth_device(s, 0, "GPU A", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 0);
	k = synth_string(s, "_Z1kv");
	f = synth_string(s, "cuLaunchKernel");
	q = synth_string(s, "cuStreamQuery");
	synth_flush_chunk(s);
	for (i = 1; i <= GA_RANGES_LWIN / 2 + 16; i++)
		synth_api_at_corr(s, i == 100 ? f : q, t + i * 10ull, t + i * 10ull + 5, 5, i);
	t += 100000000ull;
	synth_api_at_corr(s, f, t + 10, t + 15, 5, RING_P);
	synth_api_at_corr(s, f, t + 20, t + 25, 5, RING_G);
	synth_api_at_corr(s, f, t + 30, t + 35, 5, RING_R);
	synth_kernel_at_corr(s, k, t + 100, t + 200, 0, 7, 100);
	synth_kernel_at_corr(s, k, t + 300, t + 400, 0, 7, RING_P);
	synth_kernel_at_corr(s, k, t + 500, t + 600, 0, 7, RING_R);
	synth_api_at_corr(s, f, t + 700, t + 705, 5, 50);
	synth_kernel_at_corr(s, k, t + 800, t + 900, 0, 7, 50);
	synth_kernel_at_corr(s, k, t + 1000, t + 1100, 0, 7, RING_G);
	synth_end(s, t + 2000, 0);
	synth_close(s, NULL, NULL);
}

static void test_launch_ring(void)
{
	static const struct {
		uint32_t corr;
		uint64_t t; /* the call's start after T0 + 1.1 s; 0: no launch in one pass */
	} want[] = {
		{ 100, 0 },
		{ RING_P, 10 },
		{ RING_R, 30 },
		{ 50, 700 },
		{ RING_G, 20 },
	};
	char path[128];
	struct streamed xa, xb;
	struct run a, b;
	size_t i;

	tap_begin("one pass: the flows' launch index past 2^22 ids (a ring, ids let go counted)");
	snprintf(path, sizeof(path), "%s/ring.gpuprof", dir);
	write_ring(path);
	build_stream(&a, &xa, path, 0, 1);
	build_stream(&b, &xb, path, 1, 1);
	CHECK(a.ok && b.ok && a.an.rg.one_pass && !b.an.rg.one_pass);
	CHECKF(a.an.rg.dense && a.an.rg.dense[0].gen && a.an.rg.dense[0].n == GA_RANGES_LWIN,
	       "a ring of %zu slots", a.an.rg.dense ? a.an.rg.dense[0].n : 0);
	CHECKF(a.an.rg.lwin_lost == 1 && b.an.rg.lwin_lost == 0, "%llu and %llu lost",
	       (unsigned long long)a.an.rg.lwin_lost, (unsigned long long)b.an.rg.lwin_lost);
	CHECKF(xa.n == (int)(sizeof(want) / sizeof(want[0])) && xb.n == xa.n,
	       "%d and %d activities", xa.n, xb.n);
	for (i = 0; i < sizeof(want) / sizeof(want[0]) && (int)i < xa.n; i++) {
		uint64_t t = want[i].t + T0 + 1100000000ull;

		CHECKF(xa.corr[i] == want[i].corr && xa.found[i] == (want[i].t != 0) &&
			       (!xa.found[i] || (xa.tid[i] == 5 && xa.t[i] == t)),
		       "corr %u: %d %u %llu", xa.corr[i], xa.found[i], xa.tid[i],
		       (unsigned long long)(xa.t[i] - T0));
		CHECKF(xb.corr[i] == xa.corr[i] && xb.found[i] == xa.found[i] &&
			       (!xb.found[i] || (xb.tid[i] == 5 && xb.t[i] == t)),
		       "two reads, corr %u: %d %llu", xb.corr[i], xb.found[i],
		       (unsigned long long)(xb.t[i] - T0));
	}
	done(&a);
	done(&b);
	tap_end();
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-onepass-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_one_read();
	test_window();
	test_nvtx_and_shift();
	test_streaming();
	test_launch_index();
	test_launch_ring();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
