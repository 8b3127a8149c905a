/*
 * Unit tests of summaries (model/summary.h): medians from the histogram
 * within 1/256 of the exact ones over durations from 1 ns to 10^12 ns;
 * three parts merged in every grouping and order encode to the same bytes;
 * and a summary whose body is changed at random (a byte set, a number made
 * large, a cut), then compressed and checksummed again so that only the
 * decoder stands between it and the views, is refused with the file and a
 * byte offset, or read into a model whose references all hold.  Test code,
 * runs offline only, needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include <gpuprof/crc32c.h>

#include "cmd/cmd.h"
#include "model/summary.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull

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
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", dir);
	}
	return tap_exit();
}
