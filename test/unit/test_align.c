/*
 * Unit tests of clock alignment (analyzer/model/align.c): synthetic 2- and
 * 4-rank jobs whose ranks' clocks are skewed by known amounts, with NCCL
 * collectives that end together (give or take a few hundred ns), a few
 * late outliers, point-to-point kernels that must not count, and two
 * communicators on streams of their own; the corrections must come back
 * within 1 us.  Traces of several hosts move by their clock sync records.
 * Test code, runs offline only.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "helpers.h"
#include "model/analysis.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define AR "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE"
#define AG "ncclDevKernel_AllGather_RING_LL"
#define SR "_Z22ncclDevKernel_SendRecvP24ncclDevKernelArgsStorageILm4096EE"
#define NCOLL 40

static char dir[64];
static int ncoll = NCOLL; /* collectives of communicator A a rank writes */

/* Deterministic noise: a small linear congruential generator. */
static uint64_t rng = 12345;

static int64_t noise(int64_t span)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (int64_t)((rng >> 33) % (uint64_t)(2 * span + 1)) - span;
}

static int64_t iabs(int64_t v)
{
	return v < 0 ? -v : v;
}

/*
 * One rank whose clock reads true time + skew.  Collective i of
 * communicator A (AllReduce) ends at true time T0 + 1 ms + 50 us * i,
 * give or take 400 ns; with two_comms, communicator B (another AllReduce,
 * on a second stream) ends 3 us later, so that the two interleave
 * differently on each rank by start.  Every 11th collective of ranks
 * other than 0 ends 30 us late (an outlier).  SendRecv kernels end 200 us
 * apart from one rank to the next (they must not count).  Compute
 * kernels sit between collectives.
 */
static void write_rank(const char *path, uint32_t rank, const char *host, int64_t skew,
		       int two_comms, int64_t sync_off)
{
	struct synth *s = synth_open(path);
	uint32_t ar, ag, sr, gemm;
	uint32_t sa = 20 + 2 * rank, sb = 21 + 2 * rank;

	synth_process(s, 900 + rank, host, "./train", rank, (uint64_t)((int64_t)T0 + skew));
	if (sync_off)
		synth_clock_sync(s, (uint64_t)((int64_t)T0 + skew),
				 (uint64_t)((int64_t)T0 + skew + sync_off), 1000);
	else
		synth_clock_sync(s, (uint64_t)((int64_t)T0 + skew), (uint64_t)((int64_t)T0 + skew),
				 1000);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1, (uint8_t)(0x10 + rank));
	ar = synth_string(s, AR);
	ag = synth_string(s, AG);
	sr = synth_string(s, SR);
	gemm = synth_string(s, "_Z4gemmv");
	for (int i = 0; i < ncoll; i++) {
		int64_t base = (int64_t)T0 + 1000000 + 50000 * (int64_t)i + skew;
		int64_t end = base + noise(400) + (rank && i % 11 == 3 ? 30000 : 0);
		int64_t start = end - 2000 - iabs(noise(13000));

		synth_kernel(s, gemm, (uint64_t)(base - 30000), (uint64_t)(base - 20000), 0, 7, 0, 0);
		synth_kernel(s, ar, (uint64_t)start, (uint64_t)end, 0, sa, 0, 0);
		if (two_comms) {
			end = base + 3000 + noise(400);
			start = end - 2000 - iabs(noise(13000));
			synth_kernel(s, ar, (uint64_t)start, (uint64_t)end, 0, sb, 0, 0);
		}
		if (i % 4 == 0) {
			end = base + 10000 + 200000 * (int64_t)rank;
			synth_kernel(s, sr, (uint64_t)(end - 5000), (uint64_t)end, 0, sa, 0, 0);
			synth_kernel(s, sr, (uint64_t)(end - 4000), (uint64_t)end + 1000, 0, sa, 0,
				     0);
		}
		if (i % 10 == 9) {
			end = base + 20000 + noise(300);
			synth_kernel(s, ag, (uint64_t)(end - 3000), (uint64_t)end, 0, sa, 0, 0);
		}
	}
	synth_end(s, (uint64_t)((int64_t)T0 + skew + 10000000), 0);
	synth_close(s, NULL, NULL);
}

#define run(out, err, ...) synth_run(dir, out, err, __VA_ARGS__)

static int build(struct ga_analysis *an, struct ga_filter *flt, int align, char **paths, int n)
{
	struct ga_analysis_opts o = { .stack_depth = 4, .align = align };

	ga_filter_init(flt);
	if (ga_analysis_init(an, &o, flt))
		return -1;
	return ga_analysis_build(an, paths, n);
}

static void done(struct ga_analysis *an, struct ga_filter *flt)
{
	ga_analysis_free(an);
	ga_filter_free(flt);
}

static void test_names(void)
{
	size_t n = 0;

	tap_begin("collectives are told from NCCL kernel names; SendRecv is none");
	CHECK(ga_align_collective(AR, &n) && !strcmp(ga_align_collective(AR, NULL), "AllReduce") &&
	      n == 9);
	CHECK(ga_align_collective(AG, NULL) && !strcmp(ga_align_collective(AG, NULL), "AllGather"));
	CHECK(ga_align_collective("_Z34ncclSymkDevKernel_ReduceScatter_LLv", NULL) &&
	      !strcmp(ga_align_collective("_Z34ncclSymkDevKernel_ReduceScatter_LLv", NULL),
		      "ReduceScatter"));
	CHECK(ga_align_collective("ncclKernel_Broadcast_RING_LL_Sum_int8_t", NULL));
	CHECK(!ga_align_collective(SR, NULL));
	CHECK(!ga_align_collective("ncclDevKernel_Generic", NULL));
	CHECK(!ga_align_collective("_Z4gemmv", NULL));
	CHECK(!ga_align_collective("my_ncclDevKernel_AllReduce", NULL));
	tap_end();
}

static void test_shift_rec(void)
{
	struct gp_rec_kernel k;
	struct gp_rec_lost l;

	tap_begin("a record's time fields move; 0 (unknown) stays 0");
	memset(&k, 0, sizeof(k));
	k.h.type = GP_REC_KERNEL;
	k.h.size = sizeof(k);
	k.start = 1000;
	k.end = 2000;
	k.correlation = 77;
	CHECK(ga_align_shift_rec(&k.h, -300) == 1 && k.start == 700 && k.end == 1700 &&
	      k.correlation == 77);
	memset(&l, 0, sizeof(l));
	l.h.type = GP_REC_LOST;
	l.h.size = sizeof(l);
	l.count = 5;
	CHECK(ga_align_shift_rec(&l.h, 1000) == 1 && l.time == 0 && l.count == 5);
	k.h.type = GP_REC_STRING;
	CHECK(ga_align_shift_rec(&k.h, 1000) == 0);
	tap_end();
}

static void test_two_ranks(void)
{
	char p0[128], p1[128], *paths[2] = { p0, p1 }, *out = NULL, *err = NULL;
	const int64_t skew = 37400;   /* rank 1's clock is 37.4 us ahead */
	struct ga_analysis an;
	struct ga_filter flt;
	int rc;

	snprintf(p0, sizeof(p0), "%s/r0.gpuprof", dir);
	snprintf(p1, sizeof(p1), "%s/r1.gpuprof", dir);
	write_rank(p0, 0, "node1", 0, 0, 0);
	write_rank(p1, 1, "node1", skew, 0, 0);

	tap_begin("2 ranks: --align nccl recovers a 37.4 us skew within 1 us");
	rc = build(&an, &flt, GA_ALIGN_NCCL, paths, 2);
	CHECK(rc == 0 && an.al.n == 2);
	if (!rc && an.al.n == 2) {
		const struct ga_align_file *f0 = &an.al.f[0], *f1 = &an.al.f[1];

		CHECK(f0->reference && f0->nccl_ns == 0 && !f1->reference);
		CHECKF(iabs(f1->nccl_ns + skew) < 1000, "correction %lld, skew %lld",
		       (long long)f1->nccl_ns, (long long)skew);
		/* 40 AllReduce + 4 AllGather; 4 outliers (i % 11 == 3) left out. */
		CHECKF(f1->matched == NCOLL + NCOLL / 10 && f1->used == f1->matched - 4,
		       "matched %llu used %llu", (unsigned long long)f1->matched,
		       (unsigned long long)f1->used);
		CHECK(!an.al.clock_applied && f1->clock_ns == 0 && an.al.hosts == 1);
		CHECK(ga_align_shift(&an.al, 1) == f1->nccl_ns);
		/* The model read rank 1's times moved: both ranks' first kernels agree. */
		CHECKF(iabs((int64_t)(an.m.first_start - (T0 + 1000000 - 30000))) < 1000,
		       "first %llu", (unsigned long long)(an.m.first_start - T0));
	}
	done(&an, &flt);
	tap_end();

	tap_begin("2 ranks: without --align the times are as recorded");
	rc = build(&an, &flt, GA_ALIGN_NONE, paths, 2);
	CHECK(rc == 0 && ga_align_shift(&an.al, 1) == 0 && !ga_align_active(&an.al));
	CHECK(rc == 0 && an.m.last_end > T0 + (uint64_t)skew + 1000000 + 50000 * (NCOLL - 1));
	done(&an, &flt);
	tap_end();

	tap_begin("report and JSON say the correction per rank");
	rc = run(&out, &err, cmd_report, "report", "--align", "nccl", p1, p0, NULL);
	CHECKF(rc == 0 && out && strstr(out, "Clock alignment ("), "rc %d %s", rc, err ? err : "");
	CHECKF(out && strstr(out, " reference |"), "%s", out ? out : "");
	CHECK(out && strstr(out, "\nrank 1 | -37."));
	CHECK(out && !strstr(out, "Warnings:"));
	free(out);
	free(err);
	out = err = NULL;
	rc = run(&out, &err, cmd_export, "export", "--format", "json", "--align", "nccl", p0, p1,
		 NULL);
	CHECK(rc == 0 && out && strstr(out, "\"clock_alignment\":{"));
	CHECK(out && strstr(out, "\"method\":\"nccl\""));
	CHECK(out && strstr(out, "\"name\":\"rank 1\",\"pid\":901,\"correction_ns\":-37"));
	CHECK(out && strstr(out, "\"clock_correction_ns\":-37"));
	free(out);
	free(err);
	out = err = NULL;
	rc = run(&out, &err, cmd_report, "report", "--align", "sideways", p0, p1, NULL);
	CHECK(rc == 2 && err && strstr(err, "--align takes nccl or none"));
	free(out);
	free(err);
	tap_end();
}

static void test_four_ranks(void)
{
	static const uint32_t order[4] = { 2, 0, 3, 1 };
	static const int64_t skew[4] = { 0, -250000, 1200000, 13700 };
	char p[4][128], *paths[4];
	struct ga_analysis an;
	struct ga_filter flt;
	int rc;

	for (int i = 0; i < 4; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/q%u.gpuprof", dir, order[i]);
		write_rank(p[i], order[i], "node1", skew[order[i]], 1, 0);
		paths[i] = p[i];
	}
	tap_begin("4 ranks, two communicators: every skew recovered within 1 us");
	rc = build(&an, &flt, GA_ALIGN_NCCL, paths, 4);
	CHECK(rc == 0 && an.al.n == 4 && an.al.by_stream);
	for (int i = 0; !rc && i < 4 && an.al.n == 4; i++) {
		const struct ga_align_file *f = &an.al.f[i];
		uint32_t r = order[i];

		CHECKF(f->rank == r, "file %d rank %u", i, f->rank);
		CHECKF(f->reference == (r == 0), "file %d reference %d", i, f->reference);
		CHECKF(iabs(f->nccl_ns + skew[r]) < 1000, "rank %u: correction %lld, skew %lld", r,
		       (long long)f->nccl_ns, (long long)skew[r]);
		if (r)
			CHECKF(f->matched == 2 * NCOLL + NCOLL / 10, "rank %u matched %llu", r,
			       (unsigned long long)f->matched);
	}
	done(&an, &flt);
	tap_end();
}

static void test_hosts(void)
{
	char p0[128], p1[128], *paths[2] = { p0, p1 }, *out = NULL, *err = NULL;
	const int64_t off = 5000000;  /* host b's trace clock is 5 ms behind CLOCK_REALTIME */
	struct ga_analysis an;
	struct ga_filter flt;
	int rc;

	snprintf(p0, sizeof(p0), "%s/ha.gpuprof", dir);
	snprintf(p1, sizeof(p1), "%s/hb.gpuprof", dir);
	write_rank(p0, 0, "hosta", 0, 0, 0);
	write_rank(p1, 1, "hostb", -off, 0, off);

	tap_begin("several hosts: each trace moves to CLOCK_REALTIME by its clock sync");
	rc = build(&an, &flt, GA_ALIGN_NONE, paths, 2);
	CHECK(rc == 0 && an.al.hosts == 2 && an.al.clock_applied);
	CHECK(rc == 0 && an.al.f[0].clock_ns == 0 && an.al.f[1].clock_ns == off);
	CHECK(rc == 0 && an.m.first_start == T0 + 1000000 - 30000);
	done(&an, &flt);
	rc = run(&out, &err, cmd_report, "report", p0, p1, NULL);
	CHECK(rc == 0 && out && strstr(out, "Clock alignment (traces of several hosts"));
	CHECK(out && strstr(out, "rank 1@hostb"));
	free(out);
	free(err);
	tap_end();

	tap_begin("several hosts and --align nccl: clock sync, then NCCL ends");
	write_rank(p1, 1, "hostb", -off + 21000, 0, off);
	rc = build(&an, &flt, GA_ALIGN_NCCL, paths, 2);
	CHECK(rc == 0 && an.al.f[1].clock_ns == off);
	CHECKF(rc == 0 && iabs(an.al.f[1].nccl_ns + 21000) < 1000, "nccl %lld",
	       (long long)an.al.f[1].nccl_ns);
	done(&an, &flt);
	tap_end();

	tap_begin("one host: clock sync records leave the traces as they are");
	write_rank(p1, 1, "hosta", -off, 0, off);
	rc = build(&an, &flt, GA_ALIGN_NONE, paths, 2);
	CHECK(rc == 0 && an.al.hosts == 1 && !an.al.clock_applied && ga_align_shift(&an.al, 1) == 0);
	done(&an, &flt);
	tap_end();
}

/* A TAP comment on standard error. */
static void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The first line where a and b differ, as a TAP comment. */
static void diag_first_diff(const char *what, const char *a, const char *b)
{
	size_t i = 0, l = 0;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '\n')
			l = i + 1;
		i++;
	}
	diag("%s: reports differ at:\n#  traces:    %.*s\n#  summaries: %.*s", what,
	     (int)strcspn(a + l, "\n"), a + l, (int)strcspn(b + l, "\n"), b + l);
}

/* out without its "Summaries:" line (a report of summaries says they were merged). */
static void drop_summaries_line(char *out)
{
	char *p = out ? strstr(out, "\nSummaries:") : NULL, *e;

	if (p && (e = strchr(p + 1, '\n')))
		memmove(p, e, strlen(e) + 1);
}

/* The JSON export's clock_alignment object (to its closing bracket of ranks), or "". */
static const char *clock_json(char *out, size_t *len)
{
	char *p = out ? strstr(out, "\"clock_alignment\":") : NULL, *e = p ? strstr(p, "]") : NULL;

	*len = e ? (size_t)(e - p) : 0;
	return e ? p : "";
}

/*
 * Reports of summaries with --align nccl: the corrections and every table
 * as the traces read together give them, also where parts merge several
 * traces; the report's pool the same.
 */

static int same_reports(const char *what, char **traces, int n, char **parts, int nparts)
{
	/* The traces read by one model (not the pool, which merges summaries too). */
	char *a[16] = { "report", "--align", "nccl", "-j", "1" };
	char *b[16] = { "export", "--format", "json", "--align", "nccl", "-j", "1" };
	char *ta = NULL, *tb = NULL, *ja = NULL, *jb = NULL, *e = NULL;
	const char *ca, *cb;
	size_t la, lb;
	int rc, i, ok = 1;

	for (i = 0; i < n; i++)
		a[5 + i] = b[7 + i] = traces[i];
	a[5 + n] = b[7 + n] = NULL;
	setenv("GPUPROF_READ_TOGETHER", "1", 1);
	rc = synth_capture(dir, &ta, &e, cmd_report, 5 + n, a);
	free(e);
	rc |= synth_capture(dir, &ja, &e, cmd_export, 7 + n, b);
	free(e);
	unsetenv("GPUPROF_READ_TOGETHER");
	for (i = 0; i < nparts; i++)
		a[5 + i] = b[7 + i] = parts[i];
	a[5 + nparts] = b[7 + nparts] = NULL;
	rc |= synth_capture(dir, &tb, &e, cmd_report, 5 + nparts, a);
	if (rc)
		diag("%s: %s", what, e ? e : "");
	free(e);
	rc |= synth_capture(dir, &jb, &e, cmd_export, 7 + nparts, b);
	free(e);
	drop_summaries_line(tb);
	ca = clock_json(ja, &la);
	cb = clock_json(jb, &lb);
	if (rc || !ta || !tb || strcmp(ta, tb)) {
		diag_first_diff(what, ta ? ta : "", tb ? tb : "");
		ok = 0;
	}
	if (!la || la != lb || memcmp(ca, cb, la)) {
		diag("%s: JSON clock_alignment differs: %.*s | %.*s", what, (int)la, ca, (int)lb, cb);
		ok = 0;
	}
	free(ta);
	free(tb);
	free(ja);
	free(jb);
	return ok;
}

static int summarize(char *out, char **traces, int n)
{
	char *a[16], *o = NULL, *e = NULL;
	int rc, i;

	a[0] = "summarize";
	for (i = 0; i < n; i++)
		a[1 + i] = traces[i];
	a[1 + n] = "-o";
	a[2 + n] = out;
	a[3 + n] = NULL;
	rc = synth_capture(dir, &o, &e, cmd_summarize, 3 + n, a);
	if (rc)
		diag("summarize %s: %s", out, e ? e : "");
	free(o);
	free(e);
	return rc;
}

static void test_summaries(void)
{
	static const uint32_t order[4] = { 2, 0, 3, 1 };
	static const int64_t skew[4] = { 0, -250000, 1200000, 13700 };
	char p[4][128], s[4][128], *paths[4], *parts[4], *out = NULL, *err = NULL, *out1 = NULL, *out2 = NULL;
	int rc;

	tap_begin("summaries carry the collectives: --align nccl as the traces give it");
	for (int i = 0; i < 4; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/s%u.gpuprof", dir, i);
		snprintf(s[i], sizeof(s[i]), "%s/s%u.sum", dir, i);
		write_rank(p[i], order[i], "node1", skew[order[i]], i < 2, 0);
		paths[i] = p[i];
		parts[i] = s[i];
	}
	/* Two ranks on one communicator, each trace a part, given in another order. */
	CHECK(!summarize(s[0], &paths[2], 1) && !summarize(s[1], &paths[3], 1));
	CHECK(same_reports("2 ranks", &paths[2], 2, (char *[]){ s[1], s[0] }, 2));
	/* Four ranks, two communicators on half of them: parts of two traces each. */
	CHECK(!summarize(s[2], (char *[]){ p[3], p[0] }, 2) &&
	      !summarize(s[3], (char *[]){ p[1], p[2] }, 2));
	CHECK(same_reports("4 ranks", paths, 4, (char *[]){ s[3], s[2] }, 2));
	tap_end();

	tap_begin("the report's pool aligns by the collectives its summaries carry");
	/* -j 1 on one thread, -j 2 on two: the traces read together the reference. */
	setenv("GPUPROF_READ_TOGETHER", "1", 1);
	rc = run(&out, &err, cmd_report, "report", "-j", "1", "--align", "nccl", p[0], p[1], p[2],
		 p[3], NULL);
	unsetenv("GPUPROF_READ_TOGETHER");
	free(err);
	err = NULL;
	rc |= run(&out2, &err, cmd_report, "report", "-j", "1", "--align", "nccl", p[0], p[1],
		  p[2], p[3], NULL);
	CHECKF(rc == 0 && out && out2 && !strcmp(out, out2), "%s\n---\n%s", out ? out : "",
	       out2 ? out2 : err);
	free(err);
	err = NULL;
	rc |= run(&out1, &err, cmd_report, "report", "-j", "2", "--align", "nccl", p[0], p[1],
		  p[2], p[3], NULL);
	CHECKF(rc == 0 && out && out1 && !strcmp(out, out1), "%s\n---\n%s", out ? out : "",
	       out1 ? out1 : err);
	CHECK(out && strstr(out, "Clock alignment ("));
	free(out);
	free(out1);
	free(out2);
	free(err);
	out = out1 = out2 = err = NULL;
	tap_end();

	tap_begin("report -j 1 --align nccl reads each trace once (the pool on one thread)");
	{
		unsigned long long size = 0, r0, r1, r2;
		struct stat st;

		/* Traces of several chunks: the pool's look at their heads reads the first. */
		ncoll = 3000;
		for (int i = 0; i < 4; i++) {
			snprintf(p[i], sizeof(p[i]), "%s/big%u.gpuprof", dir, i);
			write_rank(p[i], order[i], "node1", skew[order[i]], i < 2, 0);
			size += stat(p[i], &st) ? 0 : (unsigned long long)st.st_size;
		}
		ncoll = NCOLL;
		setenv("GPUPROF_READ_TOGETHER", "1", 1);
		r0 = helpers_rchar();
		rc = run(&out, &err, cmd_report, "report", "--no-timeline", "-j", "1",
			 "--align", "nccl", p[0], p[1],
			 p[2], p[3], NULL);
		unsetenv("GPUPROF_READ_TOGETHER");
		free(out);
		free(err);
		out = err = NULL;
		r1 = helpers_rchar();
		rc |= run(&out, &err, cmd_report, "report", "--no-timeline", "-j", "1",
			  "--align", "nccl", p[0], p[1],
			  p[2], p[3], NULL);
		r2 = helpers_rchar();
		CHECK(rc == 0 && size > 0 && r0 && r1 > r0 && r2 > r1);
		/*
		 * The traces read together: the alignment's scan, then the
		 * analysis; the pool: each trace's head, then its analysis alone.
		 */
		CHECKF(r1 - r0 >= 2 * size && r2 - r1 + size / 2 <= r1 - r0,
		       "%llu bytes of traces: read together %llu, the pool %llu",
		       size, r1 - r0, r2 - r1);
		free(out);
		free(err);
		out = err = NULL;
	}
	tap_end();

	tap_begin("summaries of several hosts: clock sync, then NCCL ends");
	write_rank(p[0], 0, "hosta", 0, 0, 0);
	write_rank(p[1], 1, "hostb", -5000000 + 21000, 0, 5000000);
	CHECK(!summarize(s[0], &paths[0], 1) && !summarize(s[1], &paths[1], 1));
	CHECK(same_reports("2 hosts", paths, 2, parts, 2));
	tap_end();

	tap_begin("the first 1024 collectives of each stream and kind are matched");
	ncoll = 1500;
	write_rank(p[0], 0, "node1", 0, 0, 0);
	write_rank(p[1], 1, "node1", 52000, 0, 0);
	ncoll = NCOLL;
	{
		struct ga_analysis an;
		struct ga_filter flt;

		rc = build(&an, &flt, GA_ALIGN_NCCL, paths, 2);
		CHECK(rc == 0 && an.al.n == 2);
		if (!rc && an.al.n == 2) {
			/* 1024 AllReduce of 1500, 150 AllGather; 93 of those AllReduce late. */
			CHECKF(an.al.f[0].matched == 1174 && an.al.f[1].matched == 1174 &&
				       an.al.f[1].used == 1174 - 93,
			       "matched %llu %llu used %llu", (unsigned long long)an.al.f[0].matched,
			       (unsigned long long)an.al.f[1].matched,
			       (unsigned long long)an.al.f[1].used);
			CHECKF(iabs(an.al.f[1].nccl_ns + 52000) < 1000, "correction %lld",
			       (long long)an.al.f[1].nccl_ns);
		}
		done(&an, &flt);
	}
	CHECK(!summarize(s[0], &paths[0], 1) && !summarize(s[1], &paths[1], 1));
	CHECK(same_reports("1500 collectives", paths, 2, (char *[]){ s[1], s[0] }, 2));
	tap_end();
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gp_align_XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_names();
	test_shift_rec();
	test_two_ranks();
	test_four_ranks();
	test_hosts();
	test_summaries();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return tap_exit();
}
