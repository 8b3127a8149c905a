/*
 * Unit tests of summaries (model/summary.h): medians from the histogram
 * within 1/256 of the exact ones over durations from 1 ns to 10^12 ns;
 * three parts merged in every grouping and order encode to the same bytes;
 * and a summary whose body is changed at random (a byte set, a number made
 * large, a cut), then compressed and checksummed again so that only the
 * decoder stands between it and the views, is refused with the file and a
 * byte offset, or read into a model whose references all hold; crafted
 * summaries (a body size claimed far beyond the frame's, inconsistent
 * tiny-copy counters of the findings' state (and two summaries whose copy
 * time saturates when merged print the largest time), a pid beyond 32 bits,
 * histograms of two far buckets a row that would take gigabytes, a label
 * without a name) are refused the same way, and 300000 labels are applied
 * in linear time.  A trace of more busy intervals than a summary carries:
 * its summary reports its busy time and span as the trace does; two such
 * traces of one GPU go to the report's pool read together, and their
 * summaries say that GPU's busy time is a lower bound.  A summary's rows
 * finished on four threads give the figures one thread gives, and those
 * of the trace read directly.  Test code, runs offline only, needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <zstd.h>

#include <gpuprof/crc32c.h>

#include "helpers.h"
#include "cmd/cmd.h"
#include "model/findings.h"
#include "model/summary.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull

/* Address-space limits in children, except under AddressSanitizer (its shadow needs more). */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__has_feature)
#define GP_TEST_LIMIT_AS 1
#elif defined(__has_feature)
#if !__has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define GP_TEST_LIMIT_AS 1
#endif
#endif

static char dir[64];
static unsigned long long rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A trace of pid's process: kernel k with n durations from durs(i). */
static void write_trace(const char *path, uint32_t pid, const char *kname, size_t n,
			uint64_t (*dur)(size_t))
{
	struct synth *s = synth_open(path);
	uint32_t k, api;
	uint64_t t = T0 + 1000;

	synth_process(s, pid, "node1", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, (uint8_t)pid);
	k = synth_string(s, kname);
	api = synth_string(s, "cudaLaunchKernel");
	for (size_t i = 0; i < n; i++) {
		uint64_t d = dur(i);

		synth_api(s, api, t, t + 1000 + i % 7, 1, 0);
		synth_kernel(s, k, t + 2000, t + 2000 + d, 0, 7, 0, 0);
		t += d + 5000;
	}
	synth_end(s, t, 0);
	synth_close(s, NULL, NULL);
}

/* Durations spread over twelve orders of magnitude. */
static uint64_t wide(size_t i)
{
	uint64_t x = rnd();

	return 1 + (x >> (24 + (i * 7919 + (x & 31)) % 40));
}

static uint64_t small(size_t i)
{
	return 1000 + (i * 37) % 900;
}

static struct ga_sum *collect(char **paths, int n, uint64_t limit)
{
	return ga_summary_collect(paths, n, limit);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_histogram(void)
{
	char path[128];
	char *paths[1] = { path };
	int bad = 0;

	tap_begin("histogram medians within 1/256 from 1 ns to 10^12 ns");
	for (int trial = 0; trial < 12; trial++) {
		size_t n = 3 + (size_t)trial * 41;
		uint64_t *v = malloc(n * sizeof(*v)), seed = rng, exact;
		struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH };
		struct ga_analysis an;
		struct ga_filter flt;
		struct ga_sum *s;

		snprintf(path, sizeof(path), "%s/h%d.gpuprof", dir, trial);
		write_trace(path, 100 + (uint32_t)trial, "k", n, wide);
		rng = seed;
		for (size_t i = 0; i < n; i++)
			v[i] = wide(i);
		qsort(v, n, sizeof(*v), cmp_u64);
		exact = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		s = collect(paths, 1, 2);
		ga_filter_init(&flt);
		CHECK(s && !ga_analysis_init(&an, &ao, &flt));
		if (!s)
			break;
		CHECK(!ga_summary_apply(s, &an));
		CHECK(an.m.nkstats == 1 && an.m.kstats[0].med_est && an.m.kstats[0].count == n);
		if (an.m.nkstats == 1) {
			double got = (double)an.m.kstats[0].med, want = (double)exact;

			if (got < want - want / 256 - 1 || got > want + want / 256 + 1)
				bad++;
			CHECK(an.m.kstats[0].min == v[0] && an.m.kstats[0].max == v[n - 1]);
		}
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		ga_summary_free(s);
		free(v);
	}
	CHECKF(bad == 0, "%d medians off by more than 1/256", bad);
	tap_end();
}

static int encode(struct ga_sum *s, unsigned char **buf, size_t *len)
{
	int rc = ga_summary_encode(s, buf, len);

	ga_summary_free(s);
	return rc;
}

static void test_groupings(void)
{
	char p[3][128], q[128];
	char *paths[3] = { p[0], p[1], p[2] };
	static const int ord[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
				       { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	unsigned char *ref = NULL, *b;
	size_t rlen = 0, len;

	tap_begin("three parts in every order and grouping: the same bytes");
	for (int i = 0; i < 3; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/g%d.gpuprof", dir, i);
		write_trace(p[i], 200 + (uint32_t)i, i == 2 ? "other" : "k", 20 + (size_t)i * 30,
			    small);
	}
	CHECK(!encode(collect(paths, 3, 0), &ref, &rlen));
	for (int o = 0; o < 6; o++) {
		char *op[3] = { paths[ord[o][0]], paths[ord[o][1]], paths[ord[o][2]] };
		char *two[2] = { q, op[2] };
		FILE *f;

		/* Flat, then (a b) c through a summary file. */
		CHECK(!encode(collect(op, 3, 0), &b, &len));
		CHECK(len == rlen && !memcmp(b, ref, len));
		free(b);
		snprintf(q, sizeof(q), "%s/ab%d.sum", dir, o);
		CHECK(!encode(collect(op, 2, 0), &b, &len));
		f = fopen(q, "wb");
		CHECK(f && fwrite(b, 1, len, f) == len && !fclose(f));
		free(b);
		CHECK(!encode(collect(two, 2, 0), &b, &len));
		CHECK(len == rlen && !memcmp(b, ref, len));
		free(b);
	}
	free(ref);
	tap_end();
}

/* LEB128 of v into p; its length. */
static size_t leb(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n] = v & 0x7f;
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

static void test_mutations(void)
{
	char src[128], path[128];
	char *paths[1] = { src };
	unsigned char *enc, *raw, *mut, *out;
	size_t elen, rawlen, crashes = 0, read_ok = 0, refused = 0, bad_msg = 0;
	char err[640];

	tap_begin("mutated summaries: refused with file and byte, or read consistently");
	snprintf(src, sizeof(src), "%s/m.gpuprof", dir);
	snprintf(path, sizeof(path), "%s/mut.sum", dir);
	write_trace(src, 300, "k", 40, small);
	CHECK(!encode(collect(paths, 1, 8), &enc, &elen));
	rawlen = (size_t)ZSTD_getFrameContentSize(enc + GA_SUM_HEADER_SIZE, elen - GA_SUM_HEADER_SIZE);
	raw = malloc(rawlen);
	mut = malloc(rawlen + 64);
	out = malloc(GA_SUM_HEADER_SIZE + ZSTD_compressBound(rawlen + 64));
	CHECK(ZSTD_decompress(raw, rawlen, enc + GA_SUM_HEADER_SIZE, elen - GA_SUM_HEADER_SIZE) ==
	      rawlen);
	for (int it = 0; it < 3000; it++) {
		size_t mlen = rawlen, at = rnd() % rawlen, c;
		struct ga_sum *s;
		FILE *f;
		uint32_t crc;

		memcpy(mut, raw, rawlen);
		switch (it % 4) {
		case 0:
			mut[at] = (unsigned char)rnd();
			break;
		case 1: { /* a number made large: ten bytes of LEB128 where one was */
			unsigned char tmp[10];
			size_t k = leb(tmp, rnd() >> (rnd() % 64));

			if (at + k > rawlen)
				at = rawlen - k;
			memcpy(mut + at, tmp, k);
			break;
		}
		case 2:
			mlen = at;
			break;
		default:
			mut[at] ^= (unsigned char)(1u << (rnd() % 8));
			mut[rnd() % rawlen] = 0;
			break;
		}
		memcpy(out, enc, GA_SUM_HEADER_SIZE);
		c = ZSTD_compress(out + GA_SUM_HEADER_SIZE, ZSTD_compressBound(mlen), mut, mlen, 1);
		for (int i = 0; i < 8; i++)
			out[16 + i] = (unsigned char)((uint64_t)mlen >> (8 * i));
		crc = gp_crc32c(0, out + GA_SUM_HEADER_SIZE, c);
		for (int i = 0; i < 4; i++)
			out[24 + i] = (unsigned char)(crc >> (8 * i));
		f = fopen(path, "wb");
		if (!f || fwrite(out, 1, GA_SUM_HEADER_SIZE + c, f) != GA_SUM_HEADER_SIZE + c ||
		    fclose(f)) {
			crashes++;
			continue;
		}
		s = ga_summary_read(path, err, sizeof(err));
		if (!s) {
			refused++;
			if (strncmp(err, path, strlen(path)) || !strstr(err, ": byte "))
				bad_msg++;
			continue;
		}
		{
			struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH };
			struct ga_analysis an;
			struct ga_filter flt;
			const struct ga_model *m = &an.m;
			int ok = 1;

			ga_filter_init(&flt);
			if (ga_analysis_init(&an, &ao, &flt) || ga_summary_apply(s, &an)) {
				ga_summary_free(s);
				ga_filter_free(&flt);
				continue;
			}
			for (size_t i = 0; i < m->nkstats; i++)
				ok &= m->kstats[i].count > 0 && m->kstats[i].label < m->nlabels;
			for (size_t i = 0; i < m->nastats; i++)
				ok &= m->astats[i].count > 0;
			for (size_t i = 0; i < m->nmemops; i++)
				ok &= m->memops[i].count > 0;
			for (size_t i = 0; i < m->ndevrows; i++)
				ok &= m->devrows[i].dev < m->ndevs && m->devrows[i].proc < m->nprocs;
			for (size_t i = 0; i < m->ndevs; i++)
				ok &= m->devs[i].proc < m->nprocs;
			for (size_t i = 0; i < m->nprocs; i++)
				ok &= m->procs[i].file < m->nfiles;
			for (size_t i = 0; i < m->ngraphs; i++)
				ok &= m->graphs[i].proc < m->nprocs && m->graphs[i].label <= m->nlabels;
			for (size_t i = 0; i < m->nwindows; i++)
				ok &= m->windows[i].proc < m->nprocs;
			crashes += !ok;
			read_ok++;
			ga_analysis_free(&an);
			ga_filter_free(&flt);
			ga_summary_free(s);
		}
	}
	CHECKF(!crashes, "%zu inconsistent models", crashes);
	CHECKF(!bad_msg, "%zu errors without the file and a byte offset", bad_msg);
	CHECKF(refused > 1000, "only %zu of 3000 refused", refused);
	printf("# %zu read, %zu refused\n", read_ok, refused);
	free(enc);
	free(raw);
	free(mut);
	free(out);
	tap_end();
}

/*
 * Writes a summary of version ver: header, then body[0..len) compressed and
 * checksummed, the header saying claim bytes of body.
 */
static int write_sum(const char *path, uint32_t ver, const unsigned char *body, size_t len,
		     uint64_t claim)
{
	size_t bound = ZSTD_compressBound(len), c;
	unsigned char *out = calloc(1, GA_SUM_HEADER_SIZE + bound);
	uint32_t crc;
	FILE *f;
	int rc = -1;

	if (!out)
		return -1;
	c = ZSTD_compress(out + GA_SUM_HEADER_SIZE, bound, body, len, 1);
	if (!ZSTD_isError(c)) {
		memcpy(out, GA_SUM_MAGIC, 8);
		crc = gp_crc32c(0, out + GA_SUM_HEADER_SIZE, c);
		for (int i = 0; i < 4; i++) {
			out[8 + i] = (unsigned char)(ver >> (8 * i));
			out[12 + i] = (unsigned char)(GA_SUM_HEADER_SIZE >> (8 * i));
			out[24 + i] = (unsigned char)(crc >> (8 * i));
		}
		for (int i = 0; i < 8; i++)
			out[16 + i] = (unsigned char)(claim >> (8 * i));
		f = fopen(path, "wb");
		if (f && fwrite(out, 1, GA_SUM_HEADER_SIZE + c, f) == GA_SUM_HEADER_SIZE + c && !fclose(f))
			rc = 0;
		else if (f)
			fclose(f);
	}
	free(out);
	return rc;
}

/* The decompressed body of a summary of a small trace; its length in *len. */
static unsigned char *sample_body(size_t *len)
{
	char src[128];
	char *paths[1] = { src };
	unsigned char *enc, *raw = NULL;
	size_t elen;

	snprintf(src, sizeof(src), "%s/body.gpuprof", dir);
	write_trace(src, 400, "k", 30, small);
	if (encode(collect(paths, 1, 0), &enc, &elen))
		return NULL;
	*len = (size_t)ZSTD_getFrameContentSize(enc + GA_SUM_HEADER_SIZE, elen - GA_SUM_HEADER_SIZE);
	if ((raw = malloc(*len)) &&
	    ZSTD_decompress(raw, *len, enc + GA_SUM_HEADER_SIZE, elen - GA_SUM_HEADER_SIZE) != *len) {
		free(raw);
		raw = NULL;
	}
	free(enc);
	return raw;
}

/* 1 when err names path and a byte offset and says why. */
static int named(const char *err, const char *path, const char *why)
{
	return !strncmp(err, path, strlen(path)) && strstr(err, ": byte ") && strstr(err, why);
}

/*
 * A version 5 body's parts between its strings and its labels, empty: no
 * exact limit, 128 zero scalars (more than known: skipped), no files,
 * processes, windows, devices or device rows (with their widths).
 */
static size_t empty_tables(unsigned char *b)
{
	size_t n = 0;

	n += leb(b + n, 0);
	n += leb(b + n, 128);
	for (int i = 0; i < 128; i++)
		b[n++] = 0;
	n += leb(b + n, 0); /* files */
	n += leb(b + n, 0); /* processes, 38 numbers each */
	n += leb(b + n, 38);
	n += leb(b + n, 0); /* windows */
	n += leb(b + n, 0); /* devices, 17 numbers each */
	n += leb(b + n, 17);
	n += leb(b + n, 0); /* device rows */
	return n;
}

/*
 * path read in a child whose address space is limited to as_bytes (not
 * under AddressSanitizer): 1 when it is refused with an error naming the
 * file, a byte offset and why.
 */
static int refused_in_child(const char *path, unsigned long long as_bytes, const char *why)
{
	char err[512];
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct ga_sum *s;
#ifdef GP_TEST_LIMIT_AS
		struct rlimit rl = { as_bytes, as_bytes };

		if (setrlimit(RLIMIT_AS, &rl))
			_exit(3);
#else
		(void)as_bytes;
#endif
		s = ga_summary_read(path, err, sizeof(err));
		if (s)
			_exit(4);
		printf("# %s\n", err);
		fflush(stdout);
		_exit(named(err, path, why) ? 0 : 5);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		printf("# child status %d\n", st);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/*
 * A header claiming a body far larger than its frames hold: refused as a
 * size mismatch after decompressing what is there, without allocating the
 * claim first (in a child limited to 2 GiB of address space, the claim of
 * 8 GiB would have failed as "refused").  The address-space limit is left
 * out under AddressSanitizer, whose shadow memory needs more.
 */
static void test_claimed_size(void)
{
	char path[128], err[640];
	unsigned char *body;
	size_t len;

	tap_begin("a body size claimed in the header is not allocated before it is decompressed");
	snprintf(path, sizeof(path), "%s/claim.sum", dir);
	body = sample_body(&len);
	CHECK(body && !write_sum(path, GA_SUM_VERSION, body, len, 8ull << 30));
	CHECK(refused_in_child(path, 2ull << 30, "less than the header says"));
	/* The size said exactly still reads; one byte off either way does not. */
	{
		struct ga_sum *s = ga_summary_read(path, err, sizeof(err));

		CHECK(!s);
		CHECK(!write_sum(path, GA_SUM_VERSION, body, len, len));
		s = ga_summary_read(path, err, sizeof(err));
		CHECKF(s != NULL, "%s", err);
		ga_summary_free(s);
		CHECK(!write_sum(path, GA_SUM_VERSION, body, len, len - 1));
		CHECK(!ga_summary_read(path, err, sizeof(err)));
		CHECKF(named(err, path, "more than the header says"), "%s", err);
	}
	free(body);
	tap_end();
}

/* Section 17's counters (docs/FORMAT.md), as summary.c lays them out. */
#define FS_N (5 + 2 * GA_CAUSE_COUNT + GA_COPY_KIND_MAX * 10)
#define FS_COPY(k) (5 + 2 * GA_CAUSE_COUNT + (k)*10)

static size_t get_leb(const unsigned char *p, size_t len, size_t *off, uint64_t *v)
{
	unsigned sh = 0;

	*v = 0;
	while (*off < len && sh < 64) {
		unsigned char b = p[(*off)++];

		*v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return 1;
		sh += 7;
	}
	return 0;
}

/*
 * Where the findings' counters start in body (their count's offset), the
 * counters into fs and the offset past them into *end; 0 when not found.
 * They are known by their count and, for each copy kind without tiny
 * copies, the shortest at UINT64_MAX.
 */
static size_t find_fs(const unsigned char *body, size_t len, uint64_t *fs, size_t *end)
{
	for (size_t at = len; at-- > 0;) {
		size_t off = at, i, ok = 1;
		uint64_t v;

		if (!get_leb(body, len, &off, &v) || v != FS_N)
			continue;
		for (i = 0; i < FS_N && ok; i++)
			ok = get_leb(body, len, &off, &fs[i]);
		for (i = 0; i < GA_COPY_KIND_MAX && ok; i++)
			ok = fs[FS_COPY(i)] || fs[FS_COPY(i) + 3] == UINT64_MAX;
		if (ok) {
			*end = off;
			return at ? at : 1;
		}
	}
	return 0;
}

/*
 * Tiny copies of a kind whose shortest is the "none yet" UINT64_MAX, or
 * whose times exist without copies: refused (the tiny-copies finding
 * printed 18446744073.710 s of a made-up shortest copy, and its evidence
 * overflowed the conversion of that time back to an integer).
 */
static void test_copy_state(void)
{
	char path[128], err[640];
	unsigned char *body, *mut;
	uint64_t fs[FS_N], w[FS_N];
	size_t len, at = 0, end = 0;
	static const struct {
		size_t k, field;
		uint64_t v;
		int bad;
	} cases[] = {
		{ 0, 0, 0, 0 },                 /* as is */
		{ 1, 0, 300, 1 },               /* 300 copies, shortest "none" */
		{ 7, 2, 5000, 1 },              /* time of no copies */
		{ 7, 1, 64, 1 },                /* bytes of no copies */
		{ 7, 4, 9, 1 },                 /* gaps of no copies */
		{ 2, 3, 5, 1 },                 /* a shortest of no copies */
		{ SIZE_MAX, 0, 0, 0 },          /* no part with state: all 0 */
		{ SIZE_MAX, 0, UINT64_MAX, 1 }, /* no part with state, yet shortests */
	};

	tap_begin("the findings' copy counters of a summary are consistent or refused");
	snprintf(path, sizeof(path), "%s/copy.sum", dir);
	body = sample_body(&len);
	CHECK(body != NULL);
	if (body)
		at = find_fs(body, len, fs, &end);
	CHECK(at > 0);
	mut = malloc(len + FS_N * 10 + 16);
	for (size_t c = 0; at && mut && c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = at;
		struct ga_sum *s;

		memcpy(w, fs, sizeof(w));
		if (cases[c].k == SIZE_MAX) {
			w[0] = 0; /* parts with findings' state */
			for (size_t k = 0; k < GA_COPY_KIND_MAX; k++)
				w[FS_COPY(k) + 3] = cases[c].v;
		} else if (c) {
			w[FS_COPY(cases[c].k) + cases[c].field] = cases[c].v;
		}
		memcpy(mut, body, at);
		n += leb(mut + n, FS_N);
		for (size_t i = 0; i < FS_N; i++)
			n += leb(mut + n, w[i]);
		memcpy(mut + n, body + end, len - end);
		n += len - end;
		CHECK(!write_sum(path, GA_SUM_VERSION, mut, n, n));
		s = ga_summary_read(path, err, sizeof(err));
		if (cases[c].bad) {
			CHECKF(!s, "case %zu read", c);
			CHECKF(s || named(err, path, "malformed"), "case %zu: %s", c, err);
		} else {
			CHECKF(s != NULL, "%s", err);
		}
		ga_summary_free(s);
	}
	free(mut);
	free(body);
	tap_end();
}

/* The report of paths[0..n), every finding, into out (stdout and stderr); its exit status. */
/* Runs report with argv (argc of them, "report" first), its output and errors to out. */
static int report_argv(const char *out, int argc, char **argv)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), so, se, rc;

	if (fd < 0)
		return -1;
	fflush(NULL);
	so = dup(1);
	se = dup(2);
	dup2(fd, 1);
	dup2(fd, 2);
	optind = 0;
	rc = cmd_report(argc, argv);
	fflush(NULL);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fd);
	return rc;
}

static int report_to(const char *out, char **paths, int n)
{
	char *argv[8] = { "report", "--findings=all" };

	for (int i = 0; i < n && i < 5; i++)
		argv[2 + i] = paths[i];
	return report_argv(out, 2 + (n < 5 ? n : 5), argv);
}

/*
 * Two valid summaries whose tiny copies of a kind took 2^63 + 1000 ns each:
 * merged, their time saturates at 2^64 - 1 ns, which the tiny-copies
 * finding's evidence holds as a double; that rounds to 2^64, which did not
 * convert back to 64-bit nanoseconds (undefined; on x86 it printed
 * 9223372036.855 s), and is now the largest time that does.
 */
static void test_saturated_evidence(void)
{
	char path[2][128], out[128], line[1024];
	char *paths[2] = { path[0], path[1] };
	unsigned char *body, *mut;
	uint64_t fs[FS_N];
	size_t len, at = 0, end = 0, n;
	int found = 0;
	FILE *f;

	tap_begin("merged summaries' saturated copy time prints as the largest time");
	body = sample_body(&len);
	if (body)
		at = find_fs(body, len, fs, &end);
	CHECK(at > 0);
	mut = malloc(len + FS_N * 10 + 16);
	if (!at || !mut) {
		free(mut);
		free(body);
		tap_end();
		return;
	}
	fs[FS_COPY(1) + 0] = 200; /* tiny copies of kind 1 */
	fs[FS_COPY(1) + 1] = 200 * 100;
	fs[FS_COPY(1) + 2] = (1ull << 63) + 1000;
	fs[FS_COPY(1) + 3] = 10;
	n = at;
	memcpy(mut, body, at);
	n += leb(mut + n, FS_N);
	for (size_t i = 0; i < FS_N; i++)
		n += leb(mut + n, fs[i]);
	memcpy(mut + n, body + end, len - end);
	n += len - end;
	for (int i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/sat%d.sum", dir, i);
		CHECK(!write_sum(path[i], GA_SUM_VERSION, mut, n, n));
	}
	snprintf(out, sizeof(out), "%s/sat.txt", dir);
	CHECK(report_to(out, paths, 2) == 0);
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "evidence: copies 400,"))
			found = !!strstr(line, "copy 18446744073.7");
	if (f)
		fclose(f);
	CHECKF(found, "no evidence of 400 copies taking 18446744073.7 s in %s", out);
	if (!found) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "head -c 3000 %s >&2; echo >&2", out);
		if (system(cmd)) {
		}
	}
	free(mut);
	free(body);
	tap_end();
}

/*
 * A pid of 2^32 + N (a field the model keeps in 32 bits): refused, where it
 * was read as pid N.  The trace's pid, 0x1fedcba9, is five bytes of LEB128
 * in the body, as 0x11fedcba9 is.
 */
static void test_narrow_fields(void)
{
	char src[128], path[128], err[640];
	char *paths[1] = { src };
	unsigned char *enc = NULL, *raw = NULL, pat[10], big[10];
	size_t elen = 0, len = 0, k = leb(pat, 0x1fedcba9u), found = 0, at = 0;
	struct ga_sum *s;

	tap_begin("a process's 32-bit fields beyond 32 bits are refused, not cut");
	snprintf(src, sizeof(src), "%s/pid.gpuprof", dir);
	snprintf(path, sizeof(path), "%s/pid.sum", dir);
	write_trace(src, 0x1fedcba9u, "k", 10, small);
	CHECK(!encode(collect(paths, 1, 0), &enc, &elen));
	len = (size_t)ZSTD_getFrameContentSize(enc + GA_SUM_HEADER_SIZE, elen - GA_SUM_HEADER_SIZE);
	CHECK((raw = malloc(len)) != NULL);
	CHECK(raw && ZSTD_decompress(raw, len, enc + GA_SUM_HEADER_SIZE, elen - GA_SUM_HEADER_SIZE) ==
			     len);
	CHECK(leb(big, 0x11fedcba9ull) == k);
	for (size_t i = 0; raw && i + k <= len; i++)
		if (!memcmp(raw + i, pat, k))
			found++, at = i;
	CHECKF(found == 1, "the pid found %zu times", found);
	if (raw && found == 1) {
		CHECK(!write_sum(path, GA_SUM_VERSION, raw, len, len));
		s = ga_summary_read(path, err, sizeof(err));
		CHECKF(s != NULL, "%s", err);
		ga_summary_free(s);
		memcpy(raw + at, big, k);
		CHECK(!write_sum(path, GA_SUM_VERSION, raw, len, len));
		s = ga_summary_read(path, err, sizeof(err));
		CHECK(!s);
		CHECKF(s || named(err, path, "malformed"), "%s", err);
		ga_summary_free(s);
	}
	free(raw);
	free(enc);
	tap_end();
}

/*
 * A body of 20000 kernel rows whose histograms have two buckets each, 1 ns
 * and 2^63 ns: 34 bytes a row, 58 KiB of buckets in memory, 1.1 GiB in
 * all.  Refused once its histograms pass their bound; it was read until
 * memory ran out (in a child limited to 1 GiB of address space: "out of
 * memory" then, "malformed" now).  The limit is left out under
 * AddressSanitizer, whose shadow memory needs more.
 */
static void test_histogram_span(void)
{
	char path[128];
	size_t cap = 1 << 20, n = 0, rows = 20000;
	unsigned char *b = malloc(cap);

	tap_begin("histograms of a summary take memory in proportion to its body");
	snprintf(path, sizeof(path), "%s/hist.sum", dir);
	CHECK(b != NULL);
	if (!b) {
		tap_end();
		return;
	}
	n += leb(b + n, 1); /* strings: "k" */
	n += leb(b + n, 1);
	b[n++] = 'k';
	n += empty_tables(b + n);
	n += leb(b + n, 0);    /* labels */
	n += leb(b + n, rows); /* kernels */
	for (size_t i = 0; i < rows; i++) {
		n += leb(b + n, 1); /* name, label */
		n += leb(b + n, 1);
		n += leb(b + n, 0); /* in graphs */
		n += leb(b + n, 2); /* count, sum, min, max, sum of squares */
		n += leb(b + n, (1ull << 63) + 1);
		n += leb(b + n, 1);
		n += leb(b + n, 1ull << 63);
		n += leb(b + n, 1ull << 62);
		n += leb(b + n, 1);
		n += leb(b + n, 1); /* a histogram of two buckets */
		n += leb(b + n, 2);
		n += leb(b + n, 1);
		n += leb(b + n, 1);
		n += leb(b + n, ((64u - GA_QUANT_SUB_BITS) << GA_QUANT_SUB_BITS) - 1);
		n += leb(b + n, 1);
	}
	CHECK(n < cap && !write_sum(path, GA_SUM_VERSION, b, n, n));
	free(b);
	CHECK(refused_in_child(path, 1ull << 30, "malformed"));
	tap_end();
}

/*
 * A version 4 body, complete, of nlab strings "l000000"... and a label of
 * each, the first label's string id first (0: none); its length.
 */
static size_t label_body_ks(unsigned char *b, size_t nlab, uint64_t first, size_t nks,
			    const unsigned char *ks, size_t kslen, size_t chain);

static size_t label_body(unsigned char *b, size_t nlab, uint64_t first)
{
	return label_body_ks(b, nlab, first, 0, NULL, 0, 0);
}

/*
 * The same with nks kernel rows, ks[0..kslen), and an NVTX tree of a
 * "(no range)" root and chain graph nodes, each under the one before.
 */
static size_t label_body_ks(unsigned char *b, size_t nlab, uint64_t first, size_t nks,
			    const unsigned char *ks, size_t kslen, size_t chain)
{
	size_t n = 0;

	n += leb(b + n, nlab); /* strings */
	for (size_t i = 0; i < nlab; i++) {
		n += leb(b + n, 7);
		n += (size_t)sprintf((char *)b + n, "l%06zu", i);
	}
	n += empty_tables(b + n);
	n += leb(b + n, nlab); /* labels: string id, count, time */
	for (size_t i = 0; i < nlab; i++) {
		n += leb(b + n, i ? i + 1 : first);
		n += leb(b + n, 1);
		n += leb(b + n, 10);
	}
	n += leb(b + n, nks); /* kernels */
	if (kslen)
		memcpy(b + n, ks, kslen);
	n += kslen;
	n += leb(b + n, 0); /* memory operations */
	for (int i = 0; i < (GA_COPY_KIND_MAX + 3) * 4; i++)
		b[n++] = 0; /* copies by kind, memset, the two legs */
	n += leb(b + n, 0); /* graphs */
	n += leb(b + n, 0); /* API */
	n += leb(b + n, 0); /* ranks, 7 numbers each */
	n += leb(b + n, 7);
	n += leb(b + n, 7); /* NVTX: 7 counters, ranges, marks, tree */
	for (int i = 0; i < 7; i++)
		b[n++] = 0;
	n += leb(b + n, 0);
	n += leb(b + n, 6);
	n += leb(b + n, 0);
	n += leb(b + n, chain ? chain + 1 : 0); /* nodes: parent + 1, kind, id, 6 numbers */
	n += leb(b + n, 6);
	for (size_t i = 0; chain && i <= chain; i++) {
		n += leb(b + n, i);
		n += leb(b + n, i ? GA_RANGES_N_GRAPH : GA_RANGES_N_NORANGE);
		n += leb(b + n, i);
		n += leb(b + n, 1);
		n += leb(b + n, 1000 + i);
		for (int j = 0; j < 4; j++)
			b[n++] = 0;
	}
	n += leb(b + n, 3); /* launches: 3 counters, latency, configurations */
	for (int i = 0; i < 3; i++)
		b[n++] = 0;
	n += leb(b + n, 0);
	n += leb(b + n, 0);
	n += leb(b + n, 14);
	return n;
}

/* Apply s to a fresh analysis, freed; 0 or -1 as ga_summary_apply(). */
static int apply_once(struct ga_sum *s)
{
	struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH };
	struct ga_analysis an;
	struct ga_filter flt;
	int rc;

	ga_filter_init(&flt);
	rc = ga_analysis_init(&an, &ao, &flt) ? -1 : ga_summary_apply(s, &an);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	return rc;
}

/*
 * Seconds to read the summary at path and apply it once (printed with
 * what), or -1 when it is refused or fails.
 */
static double timed_apply(const char *path, const char *what)
{
	char err[640];
	struct ga_sum *s = ga_summary_read(path, err, sizeof(err));
	struct timespec t0, t1;
	double secs;
	int rc;

	if (!s) {
		printf("# %s\n", err);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = apply_once(s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ga_summary_free(s);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("# %s applied in %.3f s\n", what, secs);
	return rc ? -1 : secs;
}

/*
 * Labels: one without a string is refused when read (it was read, and its
 * report failed with "out of memory"); 300000 of them are applied in a
 * moment (each was looked for among the others: minutes).
 */
static void test_labels(void)
{
	char path[128], err[640];
	size_t nlab = 300000, n;
	unsigned char *b = malloc(nlab * 14 + 8192);
	struct ga_sum *s;
	double secs;

	tap_begin("summary labels: none without a name, many applied in linear time; "
		  "histogram counts do not wrap; a deep NVTX tree is put in order in n log n");
	snprintf(path, sizeof(path), "%s/labels.sum", dir);
	CHECK(b != NULL);
	if (!b) {
		tap_end();
		return;
	}
	n = label_body(b, 3, 1);
	CHECK(!write_sum(path, GA_SUM_VERSION_MIN, b, n, n));
	s = ga_summary_read(path, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	CHECK(s && !apply_once(s));
	ga_summary_free(s);
	n = label_body(b, 3, 0);
	CHECK(!write_sum(path, GA_SUM_VERSION_MIN, b, n, n));
	s = ga_summary_read(path, err, sizeof(err));
	CHECK(!s);
	CHECKF(s || named(err, path, "malformed"), "%s", err);
	ga_summary_free(s);
	/*
	 * A kernel's histogram of two buckets of 2^63 + 1 durations each, said
	 * to hold 2: refused (the counts wrapped to the row's count and it was read).
	 */
	for (int wrap = 0; wrap < 2; wrap++) {
		unsigned char ks[64];
		size_t k = 0;
		uint64_t c = wrap ? (1ull << 63) + 1 : 1;

		k += leb(ks + k, 1); /* name, label, in graphs */
		k += leb(ks + k, 1);
		k += leb(ks + k, 0);
		k += leb(ks + k, 2); /* count, sum, min, max, sum of squares */
		k += leb(ks + k, 3000);
		k += leb(ks + k, 1000);
		k += leb(ks + k, 2000);
		k += leb(ks + k, 0);
		k += leb(ks + k, 5000000);
		k += leb(ks + k, 1); /* a histogram: buckets of 1000 and 2000 */
		k += leb(ks + k, 2);
		k += leb(ks + k, 506);
		k += leb(ks + k, c);
		k += leb(ks + k, 128);
		k += leb(ks + k, c);
		n = label_body_ks(b, 3, 1, 1, ks, k, 0);
		CHECK(!write_sum(path, GA_SUM_VERSION_MIN, b, n, n));
		s = ga_summary_read(path, err, sizeof(err));
		if (wrap) {
			CHECK(!s);
			CHECKF(s || named(err, path, "malformed"), "%s", err);
		} else {
			CHECKF(s != NULL, "%s", err);
		}
		ga_summary_free(s);
	}
	/* An NVTX tree as deep as it has nodes (it was put in order level by level). */
	n = label_body_ks(b, 3, 1, 0, NULL, 0, 200000);
	CHECK(!write_sum(path, GA_SUM_VERSION_MIN, b, n, n));
	secs = timed_apply(path, "a tree 200000 deep");
	CHECKF(secs >= 0 && secs < 10, "a tree 200000 deep took %.1f s", secs);
	n = label_body(b, nlab, 1);
	CHECK(!write_sum(path, GA_SUM_VERSION_MIN, b, n, n));
	secs = timed_apply(path, "300000 labels");
	CHECKF(secs >= 0 && secs < 10, "%zu labels took %.1f s", nlab, secs);
	free(b);
	tap_end();
}

/*
 * A trace of pid's process on GPU uuid: n kernels of period / 4 ns, one
 * every period ns from T0 + offset, each behind an idle gap.
 */
static void write_gappy(const char *path, uint32_t pid, uint8_t uuid, size_t n, uint64_t offset,
			uint64_t period)
{
	struct synth *s = synth_open(path);
	uint32_t k, api;

	synth_process(s, pid, "node1", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, uuid);
	k = synth_string(s, "gappy");
	api = synth_string(s, "cudaLaunchKernel");
	for (size_t i = 0; i < n; i++) {
		uint64_t t = T0 + offset + period * i;

		synth_api_at_corr(s, api, t - 500, t - 200, 1, (uint32_t)i + 1);
		synth_kernel_at_corr(s, k, t, t + period / 4, 0, 7, (uint32_t)i + 1);
	}
	synth_end(s, T0 + offset + period * n, 0);
	synth_close(s, NULL, NULL);
}

/* The first line of path that holds what, into line; 1 found, else 0. */
static int line_of(const char *path, const char *what, char *line, size_t size)
{
	FILE *f = fopen(path, "r");
	int found = 0;

	while (f && !found && fgets(line, (int)size, f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	if (!found)
		line[0] = 0;
	return found;
}

/*
 * Busy intervals past GA_SUM_BUSY_KEEP: a summary carries the device's busy
 * time and span instead, and reports as its trace does; two traces of one
 * GPU (their kernels interleaved, the union twice each's time) whose
 * summaries carry no intervals: the report's pool reads them together (its
 * bytes those of -j 1), and a report of their summaries warns that the GPU's
 * busy time is a lower bound, the longest part's.
 */
static void test_busy_dropped(void)
{
	size_t n = GA_SUM_BUSY_KEEP + 1000;
	char tr[3][128], sum[3][128], out[4][128], a[256], b[256], cmd[700];
	char *sa[] = { "summarize", "-o", sum[0], tr[0], NULL };

	tap_begin("summaries past their busy intervals: busy time exact for one part, a lower bound said for a shared GPU");
	for (int i = 0; i < 3; i++) {
		snprintf(tr[i], sizeof(tr[i]), "%s/gappy%d.gpuprof", dir, i);
		snprintf(sum[i], sizeof(sum[i]), "%s/gappy%d.sum", dir, i);
		snprintf(out[i], sizeof(out[i]), "%s/gappy%d.txt", dir, i);
	}
	snprintf(out[3], sizeof(out[3]), "%s/gappy3.txt", dir);
	write_gappy(tr[0], 11, 7, n, 1000, 4000);
	write_gappy(tr[1], 12, 9, n, 1000, 4000); /* a GPU of its own */
	write_gappy(tr[2], 13, 9, n, 3000, 4000); /* tr[1]'s GPU, between its kernels */
	for (int i = 0; i < 3; i++) {
		sa[2] = sum[i];
		sa[3] = tr[i];
		optind = 0;
		CHECKF(cmd_summarize(4, sa) == 0, "summarize %s", tr[i]);
	}
	/* One part: the busy line and span of the trace's own report. */
	{
		char *r1[] = { "report", tr[0] }, *r2[] = { "report", sum[0] };

		CHECK(report_argv(out[0], 2, r1) == 0 && report_argv(out[1], 2, r2) == 0);
		CHECK(line_of(out[0], "GPU busy:", a, sizeof(a)) && line_of(out[1], "GPU busy:", b, sizeof(b)));
		CHECKF(!strcmp(a, b) && strstr(a, "25.0%"), "busy '%s' vs '%s'", a, b);
		CHECK(line_of(out[0], "Wall span:", a, sizeof(a)) && line_of(out[1], "Wall span:", b, sizeof(b)));
		CHECKF(!strcmp(a, b), "span '%s' vs '%s'", a, b);
	}
	/* Two traces of one GPU, findings off: the pool reads them together. */
	{
		char *p2[] = { "report", "--findings=none", "-j", "2", tr[1], tr[2] };
		char *p1[] = { "report", "--findings=none", "-j", "1", tr[1], tr[2] };

		setenv("GPUPROF_READ_TOGETHER", "1", 1);
		CHECK(report_argv(out[1], 6, p1) == 0);
		unsetenv("GPUPROF_READ_TOGETHER");
		CHECK(report_argv(out[0], 6, p2) == 0);
		snprintf(cmd, sizeof(cmd), "cmp -s %s %s", out[0], out[1]);
		CHECKF(system(cmd) == 0, "the pool's report differs from the traces read together: %s %s",
		       out[0], out[1]);
		CHECKF(line_of(out[1], "GPU busy:", a, sizeof(a)) && strstr(a, "50.0%"),
		       "the union: '%s'", a);
	}
	/* Their summaries: the longest part's busy time, said to be a lower bound. */
	{
		char *rs[] = { "report", "--findings=none", sum[1], sum[2] };

		CHECK(report_argv(out[2], 4, rs) == 0);
		CHECKF(line_of(out[2], "GPU busy:", a, sizeof(a)) && strstr(a, "at least 25.0%"), "'%s'",
		       a);
		CHECKF(line_of(out[2], "a lower bound", b, sizeof(b)) &&
			       strstr(b, "1 GPU is in several parts"),
		       "no warning: '%s'", b);
		/* A GPU of its own says nothing. */
		rs[2] = sum[0];
		rs[3] = sum[1];
		CHECK(report_argv(out[3], 4, rs) == 0);
		CHECKF(!line_of(out[3], "a lower bound", b, sizeof(b)), "'%s'", b);
	}
	/* JSON marks the shared GPU's busy time as a lower bound, and only it. */
	{
		char *ej[] = { "export", "-t", "json", "-o", out[2], sum[1], sum[2] };
		char *ek[] = { "export", "-t", "json", "-o", out[3], sum[0], sum[1] };

		optind = 0;
		CHECK(cmd_export(7, ej) == 0);
		optind = 0;
		CHECK(cmd_export(7, ek) == 0);
		CHECKF(line_of(out[2], "\"busy_lower_bound\":true", a, sizeof(a)),
		       "no busy_lower_bound in %s", out[2]);
		CHECKF(!line_of(out[3], "busy_lower_bound", a, sizeof(a)), "'%s'", a);
	}
	tap_end();
}

/*
 * Traces read together whose processes share a GPU, the first past the
 * activities after which busy time retires (findings.h retire_after): the
 * model reads them again without retiring (model.h busy_shared), so the
 * union of their busy time is exact, in report -j 1 and export -t json as
 * in the pool; GPUs of their own retire.
 */
static void test_shared_retired(void)
{
	size_t n = GA_FIND_RETIRE_AFTER + 4000;
	char tr[4][128], out[2][128], a[256], cmd[400];

	tap_begin("traces read together that share a GPU past retiring: read again, their busy union exact");
	for (int i = 0; i < 4; i++)
		snprintf(tr[i], sizeof(tr[i]), "%s/shared%d.gpuprof", dir, i);
	for (int i = 0; i < 2; i++)
		snprintf(out[i], sizeof(out[i]), "%s/shared%d.txt", dir, i);
	/* 20 us apart: past the union's lag of a second (busy.h GA_BUSY_LAG), intervals retire. */
	write_gappy(tr[0], 21, 40, n, 1000, 20000);
	write_gappy(tr[1], 22, 40, n, 11000, 20000); /* tr[0]'s GPU, between its kernels */
	write_gappy(tr[2], 23, 50, n, 1000, 20000);
	write_gappy(tr[3], 24, 60, n, 11000, 20000);
	{
		char *r1[] = { "report", "-j", "1", tr[0], tr[1] };
		char *r2[] = { "report", "-j", "1", "--findings=none", tr[0], tr[1] };
		char *r3[] = { "report", "-j", "1", tr[2], tr[3] };

		unsigned long long r0, rt, rp, size = 0;
		struct stat sb;

		for (int i = 0; i < 2; i++)
			size += stat(tr[i], &sb) ? 0 : (unsigned long long)sb.st_size;
		setenv("GPUPROF_READ_TOGETHER", "1", 1);
		r0 = helpers_rchar();
		CHECK(report_argv(out[0], 5, r1) == 0);
		rt = helpers_rchar() - r0;
		unsetenv("GPUPROF_READ_TOGETHER");
		/*
		 * The pool sees the GPU in both traces' heads and reads them
		 * together at once: not summarized first (a quarter of a trace
		 * more at most, for the heads).
		 */
		r0 = helpers_rchar();
		CHECK(report_argv(out[1], 5, r1) == 0);
		rp = helpers_rchar() - r0;
		CHECKF(size && rp <= rt + size / 8, "%llu bytes of traces: read together %llu, the pool %llu",
		       size, rt, rp);
		snprintf(cmd, sizeof(cmd), "cmp -s %s %s", out[0], out[1]);
		CHECKF(system(cmd) == 0, "the pool's -j 1 differs: %s %s", out[0], out[1]);
		CHECKF(line_of(out[0], "GPU busy:", a, sizeof(a)) && strstr(a, "50.0%") &&
			       !strstr(a, "25.0%"),
		       "the union with findings: '%s'", a);
		CHECK(report_argv(out[1], 6, r2) == 0);
		CHECKF(line_of(out[1], "GPU busy:", a, sizeof(a)) && strstr(a, "50.0%") &&
			       !strstr(a, "25.0%"),
		       "the union without findings: '%s'", a);
		/* Two GPUs of their own: each busy a quarter of the time. */
		CHECK(report_argv(out[1], 5, r3) == 0);
		CHECKF(line_of(out[1], "GPU busy:", a, sizeof(a)) && strstr(a, "25.0%") &&
			       !strstr(a, "50.0%"),
		       "GPUs of their own: '%s'", a);
		/* The pool (-j 1 and 2) reads the shared pair together too: the same bytes. */
		for (int j = 1; j <= 2; j++) {
			r1[2] = j == 1 ? "1" : "2";
			CHECK(report_argv(out[1], 5, r1) == 0);
			snprintf(cmd, sizeof(cmd), "cmp -s %s %s", out[0], out[1]);
			CHECKF(system(cmd) == 0, "-j %d differs from the traces read together: %s %s",
			       j, out[0], out[1]);
		}
	}
	/*
	 * SQLite writes as it reads, so it cannot read again: its busy time
	 * retires, and the GPU's comes from its activity rows, the union's.
	 */
	{
		char db[160];
		char *ex[] = { "export", "-t", "sqlite", "-o", db, tr[0], tr[1] };
		sqlite3 *h = NULL;
		sqlite3_stmt *st = NULL;
		long long busy = -1;

		snprintf(db, sizeof(db), "%s/shared.db", dir);
		optind = 0;
		CHECK(cmd_export(7, ex) == 0);
		if (sqlite3_open(db, &h) == SQLITE_OK &&
		    sqlite3_prepare_v2(h, "SELECT busy_ns FROM devices", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			busy = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(h);
		CHECKF(busy == 2LL * (long long)n * 5000, "busy_ns %lld, the union %lld", busy,
		       2LL * (long long)n * 5000);
	}
	tap_end();
}

/* Read paths[0..n) into an (retiring unless no_retire); the build's return. */
static int build_two(struct ga_analysis *an, struct ga_filter *flt, char **paths, int no_retire)
{
	struct ga_analysis_opts o = { .stack_depth = 3, .observe_sites = 1, .no_retire = no_retire };

	ga_filter_init(flt);
	if (ga_analysis_init(an, &o, flt))
		return -1;
	return ga_analysis_build(an, paths, 2);
}

/*
 * Two files of one GPU one after the other in time (one process's
 * windows, say): its busy time retires across both, each file's closed
 * once read, and the union is exact without a second read (model.h
 * busy_shared): the same busy time and findings as keeping every interval.
 */
static void test_shared_in_turn(void)
{
	size_t n = GA_FIND_RETIRE_AFTER + 4000;
	char tr[2][128], *paths[2] = { tr[0], tr[1] };
	struct ga_analysis a, b;
	struct ga_filter fa, fb;
	int ra, rb;

	tap_begin("two files of one GPU in turn: busy time retires across them, exact, read once");
	for (int i = 0; i < 2; i++)
		snprintf(tr[i], sizeof(tr[i]), "%s/turn%d.gpuprof", dir, i);
	write_gappy(tr[0], 31, 70, n, 1000, 20000);
	/* 5 ms after the first file's last kernel. */
	write_gappy(tr[1], 32, 70, n, 1000 + 20000 * (uint64_t)n + 5000000, 20000);
	ra = build_two(&a, &fa, paths, 0);
	rb = build_two(&b, &fb, paths, 1);
	CHECKF(ra == 0 && rb == 0, "builds: %d %d", ra, rb);
	if (ra == 0 && rb == 0) {
		const struct ga_device *d = &a.m.devs[0];

		CHECKF(a.m.ndevs == 1 && a.m.busy_shared && d->shared && a.m.busy_retire &&
			       d->busy.nretired > n && !d->busy.late && !d->busy_bound,
		       "devices %zu, shared %d, retired %llu, late %llu", a.m.ndevs, a.m.busy_shared,
		       (unsigned long long)d->busy.nretired, (unsigned long long)d->busy.late);
		CHECKF(d->busy_ns == 2 * (uint64_t)n * 5000 && d->busy_ns == b.m.devs[0].busy_ns,
		       "busy %llu, kept whole %llu, expected %llu", (unsigned long long)d->busy_ns,
		       (unsigned long long)b.m.devs[0].busy_ns,
		       (unsigned long long)(2 * (uint64_t)n * 5000));
		CHECK(ga_analysis_findings(&a) == 0 && ga_analysis_findings(&b) == 0);
		CHECKF(a.fd.nf == b.fd.nf, "findings %zu, kept whole %zu", a.fd.nf, b.fd.nf);
		for (size_t i = 0; i < a.fd.nf && i < b.fd.nf; i++)
			CHECKF(a.fd.f[i].rule == b.fd.f[i].rule &&
				       a.fd.f[i].stake_ns == b.fd.f[i].stake_ns,
			       "finding %zu: rule %u %u, stake %llu %llu", i, a.fd.f[i].rule,
			       b.fd.f[i].rule, (unsigned long long)a.fd.f[i].stake_ns,
			       (unsigned long long)b.fd.f[i].stake_ns);
	}
	if (ra >= 0)
		ga_analysis_free(&a);
	if (rb >= 0)
		ga_analysis_free(&b);
	ga_filter_free(&fa);
	ga_filter_free(&fb);
	tap_end();
}

/*
 * A trace's clock offset and host in its summary come from its one read
 * (model.h first_sync, first_host), not from a second read of the file:
 * the same summary where the file is gone by then.
 */
static void test_sync_from_read(void)
{
	char path[160], *paths[1] = { path };
	unsigned char *b[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };

	tap_begin("a summary takes a trace's clock offset and host from its one read");
	snprintf(path, sizeof(path), "%s/sync.gpuprof", dir);
	{
		struct synth *w = synth_open(path);
		uint32_t k;

		synth_process(w, 77, "nodeB", "./app", 3, T0);
		synth_clock_sync(w, T0, T0 + 123456789ull, T0 + 5);
		synth_config(w, GP_TRACE_KERNEL, 0, 0);
		synth_device(w, 0, "GPU", 9, 0, 132, 80ull << 30, 0x42);
		k = synth_string(w, "k");
		for (uint64_t i = 0; i < 100; i++)
			synth_kernel(w, k, T0 + 1000 * i, T0 + 1000 * i + 500, 0, 7, 0, 0);
		synth_end(w, T0 + 200000, 0);
		synth_close(w, NULL, NULL);
	}
	for (int pass = 0; pass < 2; pass++) {
		struct ga_analysis_opts o = { .stack_depth = 3, .observe_sites = 1 };
		struct ga_analysis an;
		struct ga_filter flt;
		struct ga_sum *sm = NULL;

		ga_filter_init(&flt);
		CHECK(!ga_analysis_init(&an, &o, &flt) && ga_analysis_build(&an, paths, 1) == 0);
		/* The second time the file is gone once read. */
		if (pass)
			CHECK(unlink(path) == 0);
		sm = ga_summary_from_analysis(&an, 0, path);
		CHECK(sm && encode(sm, &b[pass], &len[pass]) == 0);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
	}
	CHECKF(len[0] && len[0] == len[1] && !memcmp(b[0], b[1], len[0]),
	       "the summary differs where the trace is gone: %zu and %zu bytes", len[0], len[1]);
	free(b[0]);
	free(b[1]);
	tap_end();
}

/* The rows' figures of an analysis: kernels', API calls' and launch latency's. */
struct rowfig {
	uint64_t med, p90, p99, sd;
};

static size_t figures(const struct ga_analysis *an, struct rowfig *f, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < an->m.nkstats && n < cap; i++, n++)
		f[n] = (struct rowfig){ an->m.kstats[i].med, an->m.kstats[i].p90,
					an->m.kstats[i].p99, an->m.kstats[i].stddev };
	for (size_t i = 0; i < an->m.nastats && n < cap; i++, n++)
		f[n] = (struct rowfig){ an->m.astats[i].med, an->m.astats[i].p90,
					an->m.astats[i].p99, an->m.astats[i].stddev };
	for (size_t i = 0; i < an->lat.nk && n < cap; i++, n++)
		f[n] = (struct rowfig){ an->lat.k[i].med, an->lat.k[i].p90, an->lat.k[i].p99,
					an->lat.k[i].stddev };
	return n;
}

/*
 * A summary's rows finished on threads (summary.c sq_finish_rows()): 300
 * kernel names, their launch latencies, each row's median, p90, p99 and
 * deviation the same with 1 thread and with 4, exact rows and histograms,
 * and the exact ones those of the trace read directly.
 */
static void test_rows_threads(void)
{
	enum { NAMES = 300,
	       CAP = 2 * NAMES + 8 };
	static struct rowfig direct[CAP], one[CAP], four[CAP];
	char path[160], *paths[1] = { path };
	size_t nd = 0, n1 = 0, n4 = 0, diff = 0;
	unsigned saved = ga_reader_jobs;

	tap_begin("a summary's rows finished on threads: the same figures as on one, and as read");
	snprintf(path, sizeof(path), "%s/rows.gpuprof", dir);
	{
		struct synth *w = synth_open(path);
		uint32_t k[NAMES], api, corr = 1;
		uint64_t t = T0 + 1000;

		synth_process(w, 78, "node1", "./app", UINT32_MAX, T0);
		synth_config(w, GP_TRACE_KERNEL | GP_TRACE_API, 0, 0);
		synth_device(w, 0, "GPU", 9, 0, 132, 80ull << 30, 0x43);
		api = synth_string(w, "cudaLaunchKernel");
		for (int i = 0; i < NAMES; i++) {
			char name[32];

			snprintf(name, sizeof(name), "kernel_%03d", i);
			k[i] = synth_string(w, name);
		}
		/* Row i: 10 + i % 90 launches, durations and latencies of their own. */
		for (int i = 0; i < NAMES; i++)
			for (int j = 0; j < 10 + i % 90; j++) {
				uint64_t d = 1000 + rnd() % (1000u + 97u * (unsigned)i);

				synth_api_at_corr(w, api, t, t + 800 + rnd() % 3000, 1, corr);
				synth_kernel_at_corr(w, k[i], t + 4000 + rnd() % 5000, t + 9000 + d, 0, 7,
						     corr++);
				t += d + 20000;
			}
		synth_end(w, t, 0);
		synth_close(w, NULL, NULL);
	}
	{
		struct ga_analysis_opts o = { .stack_depth = GA_SITES_DEPTH };
		struct ga_analysis an;
		struct ga_filter flt;

		ga_filter_init(&flt);
		CHECK(!ga_analysis_init(&an, &o, &flt) && ga_analysis_build(&an, paths, 1) == 0);
		nd = figures(&an, direct, CAP);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
	}
	/* Exact, then histograms past 20 values a row. */
	for (int pass = 0; pass < 2; pass++) {
		struct ga_sum *s = collect(paths, 1, pass ? 20 : 0);

		CHECK(s != NULL);
		if (!s)
			break;
		for (int t = 0; t < 2; t++) {
			struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH };
			struct ga_analysis an;
			struct ga_filter flt;

			ga_reader_jobs = t ? 4 : 1;
			ga_filter_init(&flt);
			CHECK(!ga_analysis_init(&an, &ao, &flt) && !ga_summary_apply(s, &an));
			if (t)
				n4 = figures(&an, four, CAP);
			else
				n1 = figures(&an, one, CAP);
			ga_analysis_free(&an);
			ga_filter_free(&flt);
		}
		CHECKF(n1 == n4 && n1 >= 2 * NAMES, "pass %d: %zu and %zu rows", pass, n1, n4);
		CHECKF(!memcmp(one, four, n1 * sizeof(*one)), "pass %d: rows differ on 4 threads",
		       pass);
		if (!pass) {
			CHECKF(nd == n1, "%zu rows read, %zu summarized", nd, n1);
			for (size_t i = 0; i < nd && i < n1; i++)
				diff += memcmp(&direct[i], &one[i], sizeof(*one)) != 0;
			CHECKF(diff == 0, "%zu of %zu rows differ from the trace's", diff, nd);
		}
		ga_summary_free(s);
	}
	ga_reader_jobs = saved;
	tap_end();
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gpuprof-sumtest-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_histogram();
	test_groupings();
	test_mutations();
	test_claimed_size();
	test_copy_state();
	test_saturated_evidence();
	test_narrow_fields();
	test_histogram_span();
	test_labels();
	test_busy_dropped();
	test_shared_retired();
	test_shared_in_turn();
	test_sync_from_read();
	test_rows_threads();
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", dir);
	}
	return tap_exit();
}
