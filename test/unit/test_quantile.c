/*
 * Unit tests of the quantile module (analyzer/model/quantile.c): exact
 * ranks, medians and percentiles equal those of a sort while a quantile
 * holds at most its limit of values (long ones of 2^32 ns and more
 * included); past the limit every rank is within the stated 1/256 of the
 * exact value of that rank on adversarial distributions (constant, two
 * spikes, a heavy tail, values of 2^32 and more, 1 ns to 10^12 ns); merges
 * in every order and grouping give the same histogram and quantiles, and
 * values added as an array the same as one by one; the
 * memory a quantile holds stays bounded past its limit; --exact's
 * GA_QUANT_NO_LIMIT keeps everything; the standard deviation taken at the
 * end is the running variance's while exact and the exact sums' past the
 * limit.  Test code, runs offline only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/quantile.h"
#include "tap.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Uniform in (0, 1]. */
static double unit(void)
{
	return ((double)(next() >> 11) + 1.0) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

enum dist { CONSTANT, SPIKES, HEAVY, LONG, WIDE, SMALL, NDIST };
static const char *const dist_name[NDIST] = {
	"constant", "two spikes", "heavy tail", "2^32 and more", "1 ns to 10^12 ns", "below 128",
};

static uint64_t draw(enum dist d, size_t i)
{
	switch (d) {
	case CONSTANT:
		return 123457;
	case SPIKES:
		/* 1% far above the rest: p99 sits on the edge between them. */
		return i % 100 == 7 ? 987654321987ull : 2048 + (next() % 3);
	case HEAVY: {
		double u = unit();

		return (uint64_t)(1000.0 / (u * u));
	}
	case LONG:
		return (1ull << 32) + next() % (1ull << 40);
	case WIDE: {
		/* Log-uniform over 1 ns .. 2^40 ns (about 10^12). */
		unsigned e = (unsigned)(next() % 40);

		return (1ull << e) + next() % (1ull << e);
	}
	case SMALL:
	default:
		return next() % 128;
	}
}

static uint64_t exact_median(const uint64_t *s, size_t n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void test_exact(void)
{
	static const unsigned pm[] = { 1, 100, 500, 900, 990, 999, 1000 };
	int bad = 0;

	tap_begin("exact up to the limit: every rank, median and percentile as a sort");
	for (int trial = 0; trial < 40 && !bad; trial++) {
		size_t n = trial < 5 ? (size_t)trial + 1 : 1 + next() % 3000;
		enum dist d = (enum dist)(trial % NDIST);
		struct ga_quant q = { .limit = 3000 };
		uint64_t *v = malloc(n * sizeof(*v)), *out = malloc(n * sizeof(*out));

		for (size_t i = 0; i < n; i++) {
			v[i] = draw(d, i);
			CHECK(ga_quant_add(&q, v[i]) == 0);
		}
		CHECK(!ga_quant_estimated(&q) && ga_quant_count(&q) == n);
		/* The values in arrival order, as summaries take them. */
		ga_quant_values(&q, out);
		CHECK(!memcmp(out, v, n * sizeof(*v)));
		qsort(v, n, sizeof(*v), cmp_u64);
		for (size_t r = 0; r < n; r += 1 + n / 97)
			bad += ga_quant_rank(&q, r) != v[r];
		bad += ga_quant_median(&q) != exact_median(v, n);
		for (size_t k = 0; k < sizeof(pm) / sizeof(pm[0]); k++)
			bad += ga_quant_pctl(&q, pm[k]) != v[ga_quant_pctl_rank(n, pm[k])];
		/* Nearest rank: p90 of 1..10 is 9, p99 is 10. */
		ga_quant_free(&q);
		free(v);
		free(out);
	}
	{
		struct ga_quant q = { 0 };

		for (uint64_t i = 1; i <= 10; i++)
			ga_quant_add(&q, i);
		CHECKF(ga_quant_pctl(&q, 900) == 9 && ga_quant_pctl(&q, 990) == 10 &&
		       ga_quant_median(&q) == 5, "p90 %llu p99 %llu",
		       (unsigned long long)ga_quant_pctl(&q, 900),
		       (unsigned long long)ga_quant_pctl(&q, 990));
		ga_quant_free(&q);
	}
	CHECKF(bad == 0, "%d values differ from the sort", bad);
	tap_end();
}

/*
 * ga_quant_mp: the median, p90 and p99 as each alone gives them, for few
 * values (sorted once) and many, 32-bit and past, exact and histograms.
 */
static void test_mp(void)
{
	int bad = 0;

	tap_begin("median, p90 and p99 at once: as each alone");
	for (int trial = 0; trial < 400; trial++) {
		size_t n = trial < 140 ? (size_t)trial % 70 : 1 + next() % 200000;
		enum dist d = (enum dist)(trial % NDIST);
		struct ga_quant q = { .limit = trial % 3 == 0 ? 50 : 0 };
		uint64_t m, a, b;

		for (size_t i = 0; i < n; i++)
			ga_quant_add(&q, trial % 7 == 3 && i % 5 == 0 ? (1ull << 33) + i : draw(d, i));
		ga_quant_mp(&q, &m, &a, &b);
		bad += m != ga_quant_median(&q) || a != ga_quant_pctl(&q, 900) ||
		       b != ga_quant_pctl(&q, 990);
		ga_quant_free(&q);
	}
	CHECKF(bad == 0, "%d of 400 differ", bad);
	tap_end();
}

/* |got - want| within want/256 (+ slack ns). */
static int within(uint64_t got, uint64_t want, uint64_t slack)
{
	uint64_t d = got > want ? got - want : want - got;

	return d <= want / 256 + slack;
}

static void test_estimates(void)
{
	char why[256] = "";
	int bad = 0;

	tap_begin("past the limit: every rank within 1/256 of the exact one");
	for (int d = 0; d < NDIST; d++) {
		size_t n = 200000;
		struct ga_quant q = { .limit = 1000 };
		uint64_t *v = malloc(n * sizeof(*v));

		for (size_t i = 0; i < n; i++) {
			v[i] = draw((enum dist)d, i);
			CHECK(ga_quant_add(&q, v[i]) == 0);
		}
		qsort(v, n, sizeof(*v), cmp_u64);
		CHECK(ga_quant_estimated(&q) && ga_quant_count(&q) == n);
		for (size_t r = 0; r < n; r++) {
			uint64_t got = ga_quant_rank(&q, r);

			if (!within(got, v[r], 0)) {
				if (!bad++)
					snprintf(why, sizeof(why), "%s: rank %zu: %llu, exact %llu",
						 dist_name[d], r, (unsigned long long)got,
						 (unsigned long long)v[r]);
			}
		}
		if (!within(ga_quant_median(&q), exact_median(v, n), 1) ||
		    !within(ga_quant_pctl(&q, 900), v[ga_quant_pctl_rank(n, 900)], 0) ||
		    !within(ga_quant_pctl(&q, 990), v[ga_quant_pctl_rank(n, 990)], 0))
			if (!bad++)
				snprintf(why, sizeof(why), "%s: median or percentile", dist_name[d]);
		/* The ends are the exact minimum and maximum. */
		CHECK(ga_quant_rank(&q, 0) == v[0] && ga_quant_rank(&q, n - 1) == v[n - 1]);
		if (d == CONSTANT || d == SMALL)
			CHECK(ga_quant_median(&q) == exact_median(v, n));
		ga_quant_free(&q);
		free(v);
	}
	CHECKF(bad == 0, "%d off: %s", bad, why);
	tap_end();
}

struct bk {
	uint32_t b[GA_QUANT_BUCKETS];
	uint64_t c[GA_QUANT_BUCKETS];
	size_t n;
};

static void collect(void *ctx, uint32_t b, uint64_t count)
{
	struct bk *k = ctx;

	k->b[k->n] = b;
	k->c[k->n++] = count;
}

/* 1 when a and b hold the same: counts, bounds, buckets or sorted values, quantiles. */
static int same(const struct ga_quant *a, const struct ga_quant *b)
{
	static struct bk x, y;
	uint64_t n = ga_quant_count(a);

	if (n != ga_quant_count(b) || ga_quant_estimated(a) != ga_quant_estimated(b))
		return 0;
	if (ga_quant_estimated(a)) {
		x.n = y.n = 0;
		ga_quant_buckets(a, collect, &x);
		ga_quant_buckets(b, collect, &y);
		if (x.n != y.n || memcmp(x.b, y.b, x.n * sizeof(x.b[0])) ||
		    memcmp(x.c, y.c, x.n * sizeof(x.c[0])) || a->min != b->min || a->max != b->max ||
		    a->sum != b->sum || a->sumsq != b->sumsq)
			return 0;
	}
	for (uint64_t r = 0; r < n; r += 1 + n / 50)
		if (ga_quant_rank(a, r) != ga_quant_rank(b, r))
			return 0;
	return ga_quant_median(a) == ga_quant_median(b) &&
	       ga_quant_pctl(a, 990) == ga_quant_pctl(b, 990);
}

/* Part i of four: n values of distribution d, seeded by i. */
static void part(struct ga_quant *q, uint64_t limit, int d, int i, size_t n)
{
	memset(q, 0, sizeof(*q));
	q->limit = limit;
	rng = 0x1234567ull * (uint64_t)(i + 1);
	for (size_t k = 0; k < n; k++)
		ga_quant_add(q, draw((enum dist)d, k));
}

static void test_merge(void)
{
	static const int perm[6][4] = { { 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 2, 0, 3, 1 },
					{ 1, 3, 0, 2 }, { 0, 2, 1, 3 }, { 3, 0, 2, 1 } };
	int bad = 0;

	tap_begin("merges in every order and grouping: the same histogram and quantiles");
	for (int d = 0; d < NDIST; d++) {
		/* 4 x 600 under a limit of 1000: parts exact, merges past the limit. */
		for (int mode = 0; mode < 2; mode++) {
			uint64_t limit = mode ? 1000 : 5000;
			struct ga_quant ref, q[4], l, r;

			for (int p = 0; p < 6; p++) {
				for (int i = 0; i < 4; i++)
					part(&q[perm[p][i]], limit, d, perm[p][i], 600);
				if (p % 2) {
					/* ((a b) (c d)) */
					l = q[perm[p][0]];
					r = q[perm[p][2]];
					bad += ga_quant_merge(&l, &q[perm[p][1]]) != 0;
					bad += ga_quant_merge(&r, &q[perm[p][3]]) != 0;
					bad += ga_quant_merge(&l, &r) != 0;
				} else {
					/* (((a b) c) d) */
					l = q[perm[p][0]];
					for (int i = 1; i < 4; i++)
						bad += ga_quant_merge(&l, &q[perm[p][i]]) != 0;
				}
				if (!p) {
					ref = l;
					bad += ga_quant_estimated(&ref) != (mode == 1);
					continue;
				}
				bad += !same(&ref, &l);
				ga_quant_free(&l);
			}
			ga_quant_free(&ref);
		}
	}
	CHECKF(bad == 0, "%d merges differ", bad);
	tap_end();
}

/*
 * ga_quant_add_array() of arrays, into an empty quantile, an exact one and
 * a histogram, against ga_quant_add() of each value: the same buckets,
 * moments and ranks; sums that saturate included.
 */
static void test_add_array(void)
{
	int bad = 0;

	tap_begin("values added as an array: the histogram of adding them one by one");
	for (int d = 0; d < NDIST; d++) {
		for (int start = 0; start < 3; start++) {
			struct ga_quant a = { .limit = 100 }, b = { .limit = 100 };
			uint64_t v[700];

			/* Before: nothing, 50 exact values, or a histogram of 300. */
			for (int i = 0; i < (start == 1 ? 50 : start == 2 ? 300 :
									    0);
			     i++) {
				uint64_t x = draw((enum dist)d, (size_t)i);

				bad += ga_quant_add(&a, x) != 0;
				bad += ga_quant_add(&b, x) != 0;
			}
			for (int part = 0; part < 3; part++) {
				size_t n = part == 1 ? 1 : 700;

				for (size_t i = 0; i < n; i++)
					v[i] = d == LONG && part == 2 ? UINT64_MAX - next() % 1000 :
									draw((enum dist)d, i);
				for (size_t i = 0; i < n; i++)
					bad += ga_quant_add(&a, v[i]) != 0;
				bad += ga_quant_add_array(&b, v, n) != 0;
			}
			bad += !ga_quant_estimated(&b) || !same(&a, &b);
			ga_quant_free(&a);
			ga_quant_free(&b);
		}
	}
	CHECKF(bad == 0, "%d differ", bad);
	tap_end();
}

static void test_bounded(void)
{
	struct ga_quant q = { 0 }, all = { .limit = GA_QUANT_NO_LIMIT };
	size_t n = 3 * GA_QUANT_EXACT_DEFAULT;
	uint64_t *v = malloc(n * sizeof(*v));
	int ok = 1;

	tap_begin("memory bounded past the limit; GA_QUANT_NO_LIMIT keeps every value");
	for (size_t i = 0; i < n; i++) {
		uint64_t x = 1000 + i % 5000;

		v[i] = x;
		ok &= ga_quant_add(&q, x) == 0 && ga_quant_add(&all, x) == 0;
		if (i + 1 == GA_QUANT_EXACT_DEFAULT)
			CHECK(!ga_quant_estimated(&q) && q.capv <= GA_QUANT_EXACT_DEFAULT);
	}
	CHECK(ok);
	/* The default limit: a histogram of 1000..5999 ns, not 3 x 65536 values. */
	CHECKF(ga_quant_estimated(&q) && !q.v && q.ncnt < 400 && ga_quant_count(&q) == n,
	       "estimated %d, %u buckets", ga_quant_estimated(&q), q.ncnt);
	CHECK(!ga_quant_estimated(&all) && ga_quant_count(&all) == n);
	qsort(v, n, sizeof(*v), cmp_u64);
	CHECK(ga_quant_median(&all) == exact_median(v, n) &&
	      ga_quant_pctl(&all, 990) == v[ga_quant_pctl_rank(n, 990)]);
	CHECK(within(ga_quant_median(&q), exact_median(v, n), 1));
	free(v);
	/* Buckets past a 64-bit value's last are refused. */
	CHECK(ga_quant_add_bucket(&q, GA_QUANT_BUCKETS, 1) < 0);
	CHECK(ga_quant_bucket_of(UINT64_MAX) == GA_QUANT_BUCKETS - 1);
	CHECK(ga_quant_add(&q, UINT64_MAX) == 0 && ga_quant_pctl(&q, 1000) == UINT64_MAX);
	CHECK(q.ncnt <= GA_QUANT_BUCKETS);
	ga_quant_free(&q);
	ga_quant_free(&all);
	tap_end();
}

/* Welford's running variance updated value by value, as the model did per record. */
static uint64_t welford_sd(const uint64_t *v, size_t n)
{
	struct ga_welford w = { 0 };

	for (size_t i = 0; i < n; i++)
		ga_welford_add(&w, i + 1, v[i]);
	return ga_welford_stddev(&w, n);
}

/*
 * The exact standard deviation: n*sumsq - sum^2 over n(n-1), in 128 bits;
 * UINT64_MAX where those overflow (the heavy tail's squares).
 */
static uint64_t exact_sd(const uint64_t *v, size_t n)
{
	unsigned __int128 s = 0, sq = 0, num, x2;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		x2 = (unsigned __int128)v[i] * v[i];
		if (s + v[i] > UINT64_MAX || sq + x2 < sq)
			return UINT64_MAX;
		s += v[i];
		sq += x2;
	}
	if (sq > ~(unsigned __int128)0 / n)
		return UINT64_MAX;
	num = (unsigned __int128)n * sq - s * s;
	return (uint64_t)(sqrtl((long double)num / ((long double)n * (long double)(n - 1))) + 0.5L);
}

/*
 * The standard deviation taken at the end: while exact, the same bytes as
 * a running variance updated per value; past the limit, the exact sums'
 * value (as a summary gives it), within 1 ns of the running variance.  A
 * histogram's buckets, bounds and sums are the same whether the values
 * went through ga_quant_add's inline bucket count or ga_quant_add_slow.
 */
static void test_stddev(void)
{
	size_t n = 3 * 65536 + 17;
	uint64_t *v = malloc(n * sizeof(*v));
	int ok_exact = 1, ok_est = 1, ok_same = 1;

	tap_begin("standard deviation at the end, inline histogram counts");
	for (int d = 0; d < NDIST; d++) {
		for (size_t lim = 0; lim < 2; lim++) {
			struct ga_quant q = { .limit = lim ? GA_QUANT_NO_LIMIT : 0 }, slow = { 0 };

			for (size_t i = 0; i < n; i++) {
				v[i] = draw((enum dist)d, i);
				CHECK(ga_quant_add(&q, v[i]) == 0 && ga_quant_add_slow(&slow, v[i]) == 0);
			}
			if (lim) {
				uint64_t got = ga_quant_stddev(&q), want = welford_sd(v, n);

				if (got != want) {
					ok_exact = 0;
					printf("# %s exact: %llu, Welford %llu\n", dist_name[d],
					       (unsigned long long)got, (unsigned long long)want);
				}
				for (size_t k = 0; k < 40; k++)
					if (ga_quant_stddev(&(struct ga_quant){ .v = q.v, .nv = k, .big = q.big }) !=
					    welford_sd(v, k))
						ok_exact = 0;
			} else {
				uint64_t got = ga_quant_stddev(&q), want = exact_sd(v, n),
					 w = welford_sd(v, n);

				/* Sums past 128 bits: close to the running variance's. */
				if ((want != UINT64_MAX && got != want) ||
				    !within(got, w, 1 + w / 1000000)) {
					ok_est = 0;
					printf("# %s histogram: %llu, exact %llu, Welford %llu\n",
					       dist_name[d], (unsigned long long)got,
					       (unsigned long long)want, (unsigned long long)w);
				}
				if (!same(&q, &slow))
					ok_same = 0;
			}
			ga_quant_free(&q);
			ga_quant_free(&slow);
		}
	}
	CHECK(ok_exact);
	CHECK(ok_est);
	CHECK(ok_same);
	{
		/* Sums past 128 bits: a finite deviation, no wrap to a small one. */
		struct ga_quant q = { .limit = 1 };

		for (size_t i = 0; i < 4; i++)
			CHECK(ga_quant_add(&q, i % 2 ? UINT64_MAX : 0) == 0);
		CHECKF(ga_quant_stddev(&q) > UINT64_MAX / 4, "%llu",
		       (unsigned long long)ga_quant_stddev(&q));
		ga_quant_free(&q);
	}
	free(v);
	tap_end();
}

int main(void)
{
	test_exact();
	test_mp();
	test_estimates();
	test_merge();
	test_add_array();
	test_bounded();
	test_stddev();
	return tap_exit();
}
