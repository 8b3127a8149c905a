/*
 * Unit tests of the busy-time union (analyzer/model/busy.c): the union
 * kept whole is the one of all intervals sorted at once, in any order they
 * come; and of its retiring form (ga_busy_add_stream): random activities on several
 * streams, each stream in start order, the streams interleaved at random,
 * give the same total, span and intervals retiring as kept whole, with
 * the list bounded; closed (ga_busy_close), every interval retired in
 * order and nothing held; a stream held back keeps what it may still join; an
 * interval that comes after its place was retired is clipped and counted;
 * and the report without findings, which retires, prints what the report
 * that keeps every interval prints.  Test code, runs offline only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/busy.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define NSTREAMS 5

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

/* What the retiring union handed over, in order. */
struct got {
	struct ga_iv *iv;
	size_t n, cap;
	int disorder;
};

static void on_retire(void *ctx, uint64_t start, uint64_t end)
{
	struct got *g = ctx;

	if (g->n && start <= g->iv[g->n - 1].end)
		g->disorder = 1;
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->iv = realloc(g->iv, g->cap * sizeof(*g->iv));
		if (!g->iv)
			abort();
	}
	g->iv[g->n].start = start;
	g->iv[g->n].end = end;
	g->n++;
}

/*
 * n activities on NSTREAMS streams, each stream's in start order with gaps
 * of 0 to 300 us and lengths of 10 to 200 us, handed over in a random
 * interleaving of the streams: to `whole` with ga_busy_add, to `ret` with
 * ga_busy_add_stream.  idle_after: stream 0 stops after that many (its
 * last start then holds the watermark back), 0: never.
 */
static void feed(struct ga_busy *whole, struct ga_busy *ret, size_t n, size_t idle_after,
		 size_t *most)
{
	uint64_t next[NSTREAMS];
	size_t count0 = 0;

	for (int s = 0; s < NSTREAMS; s++)
		next[s] = T0 + rnd() % 5000;
	*most = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t s = rnd() % NSTREAMS;
		uint64_t start, end;

		if (s == 0 && idle_after && count0 >= idle_after)
			s = 1 + rnd() % (NSTREAMS - 1);
		if (s == 0)
			count0++;
		start = next[s];
		end = start + 10000 + rnd() % 190000;
		next[s] = end + rnd() % 300000;
		CHECK(ga_busy_add(whole, start, end) == 0);
		CHECK(ga_busy_add_stream(ret, 1, 7, 10 + s, start, end) == 0);
		if (ret->niv + ret->nbatch > *most)
			*most = ret->niv + ret->nbatch;
	}
}

static void test_retire_same(void)
{
	struct ga_busy whole = { 0 }, ret = { 0 };
	struct got g = { 0 };
	uint64_t f1, l1, f2, l2;
	size_t most, i;
	const size_t n = 200000;
	double span;

	tap_begin("busy union: retiring gives the total, span and intervals of the whole union");
	ret.on_retire = on_retire;
	ret.retire_ctx = &g;
	feed(&whole, &ret, n, 0, &most);
	CHECK(ga_busy_flush(&whole) == 0 && ga_busy_flush(&ret) == 0);
	CHECKF(ga_busy_total(&whole) == ga_busy_total(&ret), "total %llu, retiring %llu",
	       (unsigned long long)ga_busy_total(&whole), (unsigned long long)ga_busy_total(&ret));
	CHECK(ga_busy_span(&whole, &f1, &l1) == 1 && ga_busy_span(&ret, &f2, &l2) == 1);
	CHECKF(f1 == f2 && l1 == l2, "span %llu..%llu, retiring %llu..%llu",
	       (unsigned long long)f1, (unsigned long long)l1, (unsigned long long)f2,
	       (unsigned long long)l2);
	CHECKF(ret.late == 0 && !g.disorder, "late %llu", (unsigned long long)ret.late);
	CHECKF(ret.nretired == g.n && g.n + ret.niv == whole.niv && g.n > whole.niv / 2,
	       "%zu retired + %zu kept, %zu in the union", g.n, ret.niv, whole.niv);
	for (i = 0; i < whole.niv && i < g.n + ret.niv; i++) {
		const struct ga_iv *a = i < g.n ? &g.iv[i] : &ret.iv[i - g.n];

		if (a->start != whole.iv[i].start || a->end != whole.iv[i].end)
			break;
	}
	CHECKF(i == whole.niv, "interval %zu differs", i);
	/*
	 * Bounded by time, not by count: what GA_BUSY_LAG (1 s) of this trace
	 * holds (about 10 s in all), plus a retire's worth.
	 */
	span = (double)(l1 - f1) / 1e9;
	CHECKF(span > 5 && (double)most <= (double)whole.niv / span * 1.5 + 2 * GA_BUSY_RETIRE_AT,
	       "%zu intervals kept at most of %zu over %.1f s", most, whole.niv, span);
	ga_busy_free(&whole);
	ga_busy_free(&ret);
	free(g.iv);
	tap_end();
}

/*
 * ga_busy_close(): every interval handed to on_retire in order, the same
 * total and span as the whole union, nothing held; an interval added
 * after it is clipped behind what retired (late), and one after that
 * counts in full.
 */
static void test_close(void)
{
	struct ga_busy whole = { 0 }, ret = { 0 };
	struct got g = { 0 };
	uint64_t f1, l1, f2, l2, total;
	size_t most;

	tap_begin("busy union: closed, every interval retired in order and its memory let go");
	ret.on_retire = on_retire;
	ret.retire_ctx = &g;
	feed(&whole, &ret, 50000, 0, &most);
	CHECK(ret.niv > 0 && ga_busy_close(&ret) == 0 && ga_busy_flush(&whole) == 0);
	CHECKF(!ret.niv && !ret.nbatch && !ret.iv && !ret.batch && !ret.st && !ret.capiv,
	       "%zu intervals, %zu batched, %zu streams held after closing", ret.niv, ret.nbatch,
	       ret.nst);
	CHECKF(g.n == whole.niv && !g.disorder && ret.nretired == g.n,
	       "%zu retired of %zu in the union", g.n, whole.niv);
	total = ga_busy_total(&ret);
	CHECKF(total == ga_busy_total(&whole), "total %llu, closed %llu",
	       (unsigned long long)ga_busy_total(&whole), (unsigned long long)total);
	CHECK(ga_busy_span(&whole, &f1, &l1) == 1 && ga_busy_span(&ret, &f2, &l2) == 1);
	CHECKF(f1 == f2 && l1 == l2, "span %llu..%llu, closed %llu..%llu", (unsigned long long)f1,
	       (unsigned long long)l1, (unsigned long long)f2, (unsigned long long)l2);
	/* After closing: one from before its end (clipped), one after it. */
	CHECK(ga_busy_add_stream(&ret, 1, 7, 10, l2 - 1000, l2 + 500) == 0);
	CHECK(ga_busy_add_stream(&ret, 1, 7, 10, l2 + 10000, l2 + 12000) == 0);
	CHECK(ga_busy_flush(&ret) == 0);
	CHECKF(ret.late == 1 && ga_busy_total(&ret) == total + 500 + 2000,
	       "late %llu, total %llu more", (unsigned long long)ret.late,
	       (unsigned long long)(ga_busy_total(&ret) - total));
	ga_busy_free(&whole);
	ga_busy_free(&ret);
	free(g.iv);
	tap_end();
}

static void test_held_back(void)
{
	struct ga_busy whole = { 0 }, ret = { 0 };
	size_t most;

	tap_begin("busy union: a stream that stopped holds the intervals it may still join");
	feed(&whole, &ret, 50000, 100, &most);
	CHECK(ga_busy_flush(&whole) == 0 && ga_busy_flush(&ret) == 0);
	CHECK(ga_busy_total(&whole) == ga_busy_total(&ret) && ret.late == 0);
	/* Stream 0 stopped early: nothing after its last start retired. */
	CHECKF(ret.nretired < 150 && ret.nretired + ret.niv == whole.niv, "%llu retired",
	       (unsigned long long)ret.nretired);
	/* Its next start lets everything before it go. */
	CHECK(ga_busy_add_stream(&ret, 1, 7, 10, whole.iv[whole.niv - 1].end + 10,
				 whole.iv[whole.niv - 1].end + 20) == 0);
	CHECK(ga_busy_retire(&ret, whole.iv[whole.niv - 1].end + 10) == 0);
	CHECKF(ret.nretired == whole.niv && ret.niv == 1, "%llu retired, %zu kept",
	       (unsigned long long)ret.nretired, ret.niv);
	CHECK(ga_busy_total(&ret) == ga_busy_total(&whole) + 10);
	ga_busy_free(&whole);
	ga_busy_free(&ret);
	tap_end();
}

static void test_late(void)
{
	struct ga_busy b = { 0 }, other = { 0 };
	uint64_t f, l;

	tap_begin("busy union: an interval behind the retired ones is clipped and counted late");
	CHECK(ga_busy_add(&b, 100, 200) == 0 && ga_busy_add(&b, 300, 400) == 0 &&
	      ga_busy_add(&b, 500, 600) == 0);
	CHECK(ga_busy_retire(&b, 450) == 0);
	CHECK(b.nretired == 2 && b.frontier == 400 && b.niv == 1);
	/* Inside what was retired: nothing to add; across its end: the part after it. */
	CHECK(ga_busy_add(&b, 150, 180) == 0 && ga_busy_add(&b, 350, 450) == 0);
	CHECK(ga_busy_flush(&b) == 0);
	CHECKF(b.late == 2 && ga_busy_total(&b) == 100 + 100 + 50 + 100, "late %llu, total %llu",
	       (unsigned long long)b.late, (unsigned long long)ga_busy_total(&b));
	CHECK(ga_busy_span(&b, &f, &l) == 1 && f == 100 && l == 600);
	/* Merged into another union, the retired ones are gone: late, totals kept. */
	CHECK(ga_busy_add(&other, 1000, 1100) == 0 && ga_busy_merge(&other, &b) == 0);
	CHECK(ga_busy_flush(&other) == 0);
	CHECK(ga_busy_total(&other) == 450 && other.late == 4);
	CHECK(ga_busy_span(&other, &f, &l) == 1 && f == 100 && l == 1100);
	CHECK(ga_busy_span(&b, &f, &l) == 0);
	ga_busy_free(&other);
	tap_end();
}

/* A line of text that starts with prefix, up to its end; "" none. */
static void line_of(const char *text, const char *prefix, char *buf, size_t len)
{
	const char *p = text ? strstr(text, prefix) : NULL;
	size_t n = 0;

	while (p && p[n] && p[n] != '\n' && n + 1 < len)
		n++;
	memcpy(buf, p ? p : "", n);
	buf[n] = '\0';
}

/* The report's "GPU busy" and "Wall span", kept whole and retiring. */
static void test_report(void)
{
	char dir[] = "/tmp/gpuprof-busy-XXXXXX", path[64], cmd[96];
	char busy[2][128], span[2][128];
	struct synth *s;
	uint32_t name;
	uint64_t t[3] = { T0, T0, T0 };

	tap_begin("busy union: the report without findings (retiring) prints the same busy time");
	if (!mkdtemp(dir)) {
		CHECK(0);
		tap_end();
		return;
	}
	snprintf(path, sizeof(path), "%s/t.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4242, "node1", "./busy", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "GPU0", 9, 0, 132, 80ull << 30, 0x10);
	name = synth_string(s, "k");
	for (int i = 0; i < 30000; i++) {
		uint32_t st = rnd() % 3;
		uint64_t len = 500 + rnd() % 3000;

		synth_kernel(s, name, t[st], t[st] + len, 0, 7 + st, 0, 0);
		t[st] += len + rnd() % 4000;
	}
	synth_end(s, T0 + 1000000000ull, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
	for (int k = 0; k < 2; k++) {
		char *out = NULL, *err = NULL;

		CHECK(synth_run(dir, &out, &err, cmd_report, "report",
				k ? "--findings=none" : "--findings=all", path, (char *)NULL) == 0);
		line_of(out, "GPU busy:", busy[k], sizeof(busy[k]));
		line_of(out, "Wall span:", span[k], sizeof(span[k]));
		free(out);
		free(err);
	}
	CHECKF(busy[0][0] && span[0][0] && !strcmp(busy[0], busy[1]) && !strcmp(span[0], span[1]),
	       "kept: '%s' '%s', retiring: '%s' '%s'", busy[0], span[0], busy[1], span[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	tap_end();
}

static int cmp_iv(const void *pa, const void *pb)
{
	const struct ga_iv *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * The union kept whole equals the union of all intervals sorted at once,
 * interval for interval, whatever the order they come in: nearly in order
 * (a batch a few places out of order), late by up to `back` ns behind the
 * latest (a batch merged into the list's tail), or at random (a batch
 * reaching back to the list's start).
 */
static void test_union_exact(void)
{
	static const uint64_t backs[] = { 0, 2000, 300000, 50000000, UINT64_MAX };
	const size_t n = 60000;
	struct ga_iv *all = malloc(n * sizeof(*all)), *want = malloc(n * sizeof(*want));

	tap_begin("busy union: kept whole, the union of all intervals sorted at once, in any order");
	CHECK(all && want);
	for (size_t bi = 0; all && want && bi < sizeof(backs) / sizeof(backs[0]); bi++) {
		struct ga_busy b = { 0 };
		uint64_t t = T0;
		size_t nw = 0, same = 1;

		for (size_t i = 0; i < n; i++) {
			uint64_t back = backs[bi] == UINT64_MAX ? t - T0 : backs[bi];
			uint64_t start = t - (back ? rnd() % (back + 1) : 0);

			if (start < T0)
				start = T0;
			all[i].start = start;
			all[i].end = start + rnd() % 3000;
			t += 1000 + rnd() % 2000;
			CHECK(ga_busy_add(&b, all[i].start, all[i].end) == 0);
			/* Flushes of every size: batches cut at random places too. */
			if (rnd() % 5000 == 0)
				CHECK(ga_busy_flush(&b) == 0);
		}
		CHECK(ga_busy_flush(&b) == 0);
		qsort(all, n, sizeof(*all), cmp_iv);
		for (size_t i = 0; i < n; i++) {
			if (nw && all[i].start <= want[nw - 1].end) {
				if (all[i].end > want[nw - 1].end)
					want[nw - 1].end = all[i].end;
			} else {
				want[nw++] = all[i];
			}
		}
		if (b.niv != nw)
			same = 0;
		for (size_t i = 0; same && i < nw; i++)
			same = b.iv[i].start == want[i].start && b.iv[i].end == want[i].end;
		CHECKF(same, "coming up to %llu ns behind: %zu intervals, sorted at once %zu",
		       (unsigned long long)backs[bi], b.niv, nw);
		ga_busy_free(&b);
	}
	free(all);
	free(want);
	tap_end();
}

/*
 * A copy made halfway (ga_busy_copy, what the ranks' union of every kernel
 * starts from at a device's first NCCL kernel), then fed what the original
 * is fed, and more: the original and the copy each end with the total of a
 * union fed everything; the copy calls no on_retire of the original's.
 */
static void test_copy(void)
{
	struct ga_busy whole = { 0 }, ret = { 0 }, copy = { 0 }, more = { 0 };
	struct got g = { 0 };
	size_t most;
	uint64_t extra;

	tap_begin("busy union: a copy made halfway, fed the same, reaches the same total");
	ret.on_retire = on_retire;
	ret.retire_ctx = &g;
	feed(&whole, &ret, 50000, 0, &most);
	CHECK(ga_busy_copy(&copy, &ret) == 0);
	CHECKF(ret.nretired > 0 && copy.nst == ret.nst && copy.st_map.n == ret.st_map.n &&
		       copy.on_retire == NULL,
	       "%llu retired, %zu streams", (unsigned long long)ret.nretired, copy.nst);
	/* The rest of the streams' activities to the original and the copy alike. */
	for (size_t i = 0; i < 50000; i++) {
		uint32_t s = rnd() % NSTREAMS;
		uint64_t start = ret.max_start + 1000 + rnd() % 300000, end = start + 10000 + rnd() % 190000;

		CHECK(ga_busy_add(&whole, start, end) == 0);
		CHECK(ga_busy_add_stream(&ret, 1, 7, 10 + s, start, end) == 0);
		CHECK(ga_busy_add_stream(&copy, 1, 7, 10 + s, start, end) == 0);
	}
	/* Past the original's end, on a stream of the copy's own (the NCCL kernels). */
	extra = ret.max_start + 10000000;
	CHECK(ga_busy_add(&more, extra, extra + 5000) == 0);
	CHECK(ga_busy_add_stream(&copy, 1, 7, 99, extra, extra + 5000) == 0);
	CHECK(ga_busy_flush(&whole) == 0 && ga_busy_flush(&ret) == 0 && ga_busy_flush(&copy) == 0 &&
	      ga_busy_flush(&more) == 0);
	CHECKF(ga_busy_total(&ret) == ga_busy_total(&whole) &&
		       ga_busy_total(&copy) == ga_busy_total(&whole) + ga_busy_total(&more),
	       "total %llu, original %llu, copy %llu", (unsigned long long)ga_busy_total(&whole),
	       (unsigned long long)ga_busy_total(&ret), (unsigned long long)ga_busy_total(&copy));
	CHECKF(ret.late == 0 && copy.late == 0 && !g.disorder, "late %llu and %llu",
	       (unsigned long long)ret.late, (unsigned long long)copy.late);
	ga_busy_free(&whole);
	ga_busy_free(&ret);
	ga_busy_free(&copy);
	ga_busy_free(&more);
	free(g.iv);
	tap_end();
}

int main(void)
{
	test_union_exact();
	test_copy();
	test_retire_same();
	test_close();
	test_held_back();
	test_late();
	test_report();
	return tap_exit();
}
