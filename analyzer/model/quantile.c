/*
 * Quantiles of durations in bounded memory (see quantile.h): exact values
 * up to a limit, then a histogram of log-spaced buckets.  Runs offline
 * only; one owner per struct.
 */
#include "model/quantile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "base/util.h"

/* Slack, in buckets, a histogram grows by past the bucket that needed it. */
#define SPAN_SLACK 64u

typedef unsigned __int128 u128;

static u128 sat128(u128 a, u128 b)
{
	return a + b < a ? ~(u128)0 : a + b;
}

static uint64_t limit_of(const struct ga_quant *q)
{
	return q->limit ? q->limit : GA_QUANT_EXACT_DEFAULT;
}

static uint64_t sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The lowest value of bucket b, and its width. */
static uint64_t bucket_low(uint32_t b, uint64_t *width)
{
	unsigned e;

	if (b < (1u << GA_QUANT_SUB_BITS)) {
		*width = 1;
		return b;
	}
	e = (b >> GA_QUANT_SUB_BITS) + GA_QUANT_SUB_BITS - 1;
	*width = 1ull << (e - GA_QUANT_SUB_BITS);
	return ((uint64_t)((b & ((1u << GA_QUANT_SUB_BITS) - 1)) + (1u << GA_QUANT_SUB_BITS)))
	       << (e - GA_QUANT_SUB_BITS);
}

uint64_t ga_quant_bucket_value(uint32_t b)
{
	uint64_t w, lo = bucket_low(b, &w);

	return lo + w / 2;
}

/* Makes the histogram's span hold bucket b.  0, or -1 out of memory. */
static int cover(struct ga_quant *q, uint32_t b)
{
	uint32_t lo, hi, oldhi = q->lo + q->ncnt;
	uint64_t *c;

	if (q->ncnt && b >= q->lo && b < oldhi)
		return 0;
	if (!q->ncnt) {
		lo = b;
		hi = b + 1;
	} else if (b < q->lo) {
		lo = b > SPAN_SLACK ? b - SPAN_SLACK : 0;
		hi = oldhi;
	} else {
		lo = q->lo;
		hi = b + 1 + SPAN_SLACK;
		if (hi > GA_QUANT_BUCKETS)
			hi = GA_QUANT_BUCKETS;
	}
	if (!(c = calloc(hi - lo, sizeof(*c))))
		return -1;
	if (q->ncnt)
		memcpy(c + (q->lo - lo), q->cnt, q->ncnt * sizeof(*c));
	free(q->cnt);
	q->cnt = c;
	q->lo = lo;
	q->ncnt = hi - lo;
	return 0;
}

int ga_quant_add_bucket(struct ga_quant *q, uint32_t b, uint64_t count)
{
	uint64_t w, low;

	if (b >= GA_QUANT_BUCKETS)
		return -1;
	if (!count)
		return 0;
	if (!q->sketch && ga_quant_to_sketch(q))
		return -1;
	if (cover(q, b))
		return -1;
	q->cnt[b - q->lo] = sat(q->cnt[b - q->lo], count);
	low = bucket_low(b, &w);
	if (!q->n || low < q->min)
		q->min = low;
	if (!q->n || low + (w - 1) > q->max)
		q->max = low + (w - 1);
	q->n = sat(q->n, count);
	/* The bucket's middle stands for its values in the sums too. */
	{
		uint64_t v = ga_quant_bucket_value(b);
		u128 c = count;

		q->sum = c * v > UINT64_MAX ? UINT64_MAX : sat(q->sum, count * v);
		q->sumsq = sat128(q->sumsq, v && c * v > ~(u128)0 / v ? ~(u128)0 : c * v * v);
	}
	return 0;
}

int ga_quant_add_array(struct ga_quant *q, const uint64_t *v, size_t n)
{
	uint64_t mn = UINT64_MAX, mx = 0, sum;
	u128 sumsq;
	size_t i;

	if (!n)
		return 0;
	if (!q->sketch && ga_quant_to_sketch(q))
		return -1;
	for (i = 0; i < n; i++) {
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
	}
	if (cover(q, ga_quant_bucket_of(mn)) || cover(q, ga_quant_bucket_of(mx)))
		return -1;
	sum = q->sum;
	sumsq = q->sumsq;
	for (i = 0; i < n; i++) {
		q->cnt[ga_quant_bucket_of(v[i]) - q->lo]++;
		sum = sat(sum, v[i]);
		sumsq = sat128(sumsq, (u128)v[i] * v[i]);
	}
	if (!q->n || mn < q->min)
		q->min = mn;
	if (!q->n || mx > q->max)
		q->max = mx;
	q->n = sat(q->n, n);
	q->sum = sum;
	q->sumsq = sumsq;
	return 0;
}

/* Adds x to a histogram.  0 or -1. */
static int hist_add(struct ga_quant *q, uint64_t x)
{
	uint32_t b = ga_quant_bucket_of(x);

	if (cover(q, b))
		return -1;
	q->cnt[b - q->lo]++;
	if (!q->n || x < q->min)
		q->min = x;
	if (!q->n || x > q->max)
		q->max = x;
	q->n = sat(q->n, 1);
	q->sum = sat(q->sum, x);
	q->sumsq = sat128(q->sumsq, (u128)x * x);
	return 0;
}

int ga_quant_to_sketch(struct ga_quant *q)
{
	uint64_t mn = UINT64_MAX, mx = 0, x;
	size_t i, bi = 0;
	uint32_t lo, hi;

	if (q->sketch)
		return 0;
	for (i = 0; i < q->nv; i++) {
		x = q->v[i] == GA_QUANT_BIG ? q->big[bi++] : q->v[i];
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
	}
	if (q->nv) {
		lo = ga_quant_bucket_of(mn);
		hi = ga_quant_bucket_of(mx) + 1;
		if (!(q->cnt = calloc(hi - lo, sizeof(*q->cnt))))
			return -1;
		q->lo = lo;
		q->ncnt = hi - lo;
	}
	q->sum = 0;
	q->sumsq = 0;
	for (bi = 0, i = 0; i < q->nv; i++) {
		x = q->v[i] == GA_QUANT_BIG ? q->big[bi++] : q->v[i];
		q->cnt[ga_quant_bucket_of(x) - q->lo]++;
		q->sum = sat(q->sum, x);
		q->sumsq = sat128(q->sumsq, (u128)x * x);
	}
	q->n = q->nv;
	q->min = q->nv ? mn : 0;
	q->max = mx;
	free(q->v);
	free(q->big);
	q->v = NULL;
	q->big = NULL;
	q->nv = q->capv = q->nbig = q->capbig = 0;
	q->sketch = 1;
	return 0;
}

int ga_quant_add_slow(struct ga_quant *q, uint64_t x)
{
	uint64_t lim;

	if (q->sketch)
		return hist_add(q, x);
	lim = limit_of(q);
	if (q->nv >= lim) {
		if (ga_quant_to_sketch(q))
			return -1;
		return hist_add(q, x);
	}
	if (x >= GA_QUANT_BIG && q->nbig == q->capbig) {
		size_t cap = q->capbig ? q->capbig * 2 : 4;
		uint64_t *b = realloc(q->big, cap * sizeof(*b));

		if (!b)
			return -1;
		q->big = b;
		q->capbig = cap;
	}
	if (q->nv == q->capv) {
		size_t cap = q->capv ? q->capv * 2 : 16;
		uint32_t *v;

		if (cap > lim)
			cap = (size_t)lim;
		if (!(v = realloc(q->v, cap * sizeof(*v))))
			return -1;
		q->v = v;
		q->capv = cap;
	}
	if (x >= GA_QUANT_BIG) {
		q->big[q->nbig++] = x;
		q->v[q->nv++] = GA_QUANT_BIG;
	} else {
		q->v[q->nv++] = (uint32_t)x;
	}
	return 0;
}

uint64_t ga_quant_count(const struct ga_quant *q)
{
	return q->sketch ? q->n : q->nv;
}

int ga_quant_estimated(const struct ga_quant *q)
{
	return q->sketch;
}

void ga_quant_moments(const struct ga_quant *q, uint64_t *n, uint64_t *sum, u128 *sumsq,
		      uint64_t *min, uint64_t *max)
{
	size_t bi = 0;
	uint64_t x;

	if (q->sketch) {
		*n = q->n;
		*sum = q->sum;
		*sumsq = q->sumsq;
		*min = q->min;
		*max = q->max;
		return;
	}
	*n = q->nv;
	*sum = 0;
	*sumsq = 0;
	*min = q->nv ? UINT64_MAX : 0;
	*max = 0;
	for (size_t i = 0; i < q->nv; i++) {
		x = q->v[i] == GA_QUANT_BIG ? q->big[bi++] : q->v[i];
		*sum = sat(*sum, x);
		*sumsq = sat128(*sumsq, (u128)x * x);
		*min = x < *min ? x : *min;
		*max = x > *max ? x : *max;
	}
}

uint64_t ga_quant_stddev(const struct ga_quant *q)
{
	long double var;

	if (!q->sketch) {
		struct ga_welford w = { 0 };
		size_t bi = 0;

		for (size_t i = 0; i < q->nv; i++)
			ga_welford_add(&w, i + 1, q->v[i] == GA_QUANT_BIG ? q->big[bi++] : q->v[i]);
		return ga_welford_stddev(&w, q->nv);
	}
	if (q->n < 2)
		return 0;
	if (q->sumsq != ~(u128)0 && q->sum != UINT64_MAX && q->sumsq <= ~(u128)0 / q->n) {
		u128 s = q->sum, num = (u128)q->n * q->sumsq - s * s;

		var = (long double)num / ((long double)q->n * (long double)(q->n - 1));
	} else {
		/* Sums past 128 bits (durations of hours, billions of them): close enough. */
		long double mean = (long double)q->sum / (long double)q->n;

		var = ((long double)q->sumsq / (long double)q->n - mean * mean) *
		      ((long double)q->n / (long double)(q->n - 1));
		if (var < 0)
			var = 0;
	}
	return (uint64_t)(sqrtl(var) + 0.5L);
}

int ga_quant_copy(struct ga_quant *dst, const struct ga_quant *src)
{
	*dst = *src;
	dst->v = NULL;
	dst->big = NULL;
	dst->cnt = NULL;
	if ((src->nv && !(dst->v = malloc(src->capv * sizeof(*dst->v)))) ||
	    (src->nbig && !(dst->big = malloc(src->capbig * sizeof(*dst->big)))) ||
	    (src->ncnt && !(dst->cnt = malloc(src->ncnt * sizeof(*dst->cnt))))) {
		ga_quant_free(dst);
		return -1;
	}
	if (!src->nv)
		dst->capv = 0;
	if (!src->nbig)
		dst->capbig = 0;
	if (src->nv)
		memcpy(dst->v, src->v, src->nv * sizeof(*dst->v));
	if (src->nbig)
		memcpy(dst->big, src->big, src->nbig * sizeof(*dst->big));
	if (src->ncnt)
		memcpy(dst->cnt, src->cnt, src->ncnt * sizeof(*dst->cnt));
	return 0;
}

void ga_quant_values(const struct ga_quant *q, uint64_t *out)
{
	size_t bi = 0;

	for (size_t i = 0; i < q->nv; i++)
		out[i] = q->v[i] == GA_QUANT_BIG ? q->big[bi++] : q->v[i];
}

void ga_quant_free(struct ga_quant *q)
{
	uint64_t limit = q->limit;

	free(q->v);
	free(q->big);
	free(q->cnt);
	memset(q, 0, sizeof(*q));
	q->limit = limit;
}

int ga_quant_merge(struct ga_quant *a, struct ga_quant *b)
{
	int rc = 0;

	if (!ga_quant_count(b))
		goto out;
	if (!a->sketch && !b->sketch && a->nv + b->nv <= limit_of(a)) {
		if (a->nv + b->nv > a->capv) {
			uint32_t *v = realloc(a->v, (a->nv + b->nv) * sizeof(*v));

			if (!v)
				return -1;
			a->v = v;
			a->capv = a->nv + b->nv;
		}
		if (b->nbig && a->nbig + b->nbig > a->capbig) {
			uint64_t *g = realloc(a->big, (a->nbig + b->nbig) * sizeof(*g));

			if (!g)
				return -1;
			a->big = g;
			a->capbig = a->nbig + b->nbig;
		}
		memcpy(a->v + a->nv, b->v, b->nv * sizeof(*a->v));
		a->nv += b->nv;
		if (b->nbig)
			memcpy(a->big + a->nbig, b->big, b->nbig * sizeof(*a->big));
		a->nbig += b->nbig;
		goto out;
	}
	if (ga_quant_to_sketch(a) || ga_quant_to_sketch(b))
		return -1;
	if (cover(a, b->lo) || cover(a, b->lo + b->ncnt - 1))
		return -1;
	for (uint32_t i = 0; i < b->ncnt; i++)
		a->cnt[b->lo + i - a->lo] = sat(a->cnt[b->lo + i - a->lo], b->cnt[i]);
	if (!a->n || b->min < a->min)
		a->min = b->min;
	if (!a->n || b->max > a->max)
		a->max = b->max;
	a->n = sat(a->n, b->n);
	a->sum = sat(a->sum, b->sum);
	a->sumsq = sat128(a->sumsq, b->sumsq);
out:
	ga_quant_free(b);
	return rc;
}

/* Rank r among the long values (sorted in a copy); the largest long when out of memory. */
static uint64_t big_rank(const struct ga_quant *q, size_t r)
{
	uint64_t *s, out = GA_QUANT_BIG;
	size_t i;

	if (!(s = malloc(q->nbig * sizeof(*s)))) {
		for (i = 0; i < q->nbig; i++)
			out = q->big[i] > out ? q->big[i] : out;
		return out;
	}
	memcpy(s, q->big, q->nbig * sizeof(*s));
	ga_sort_u64(s, q->nbig);
	out = s[r];
	free(s);
	return out;
}

/* Exact values of ranks r and r + 1 (r + 1 < nv when two), one selection where both are short. */
static void exact_ranks(const struct ga_quant *q, size_t r, int two, uint64_t out[2])
{
	size_t nsmall = q->nv - q->nbig;
	uint32_t v[2];

	if (r + (size_t)two < nsmall) {
		if (q->nv <= 64) {
			uint32_t tmp[64];

			memcpy(tmp, q->v, q->nv * sizeof(*tmp));
			ga_sort_u32(tmp, q->nv);
			v[0] = tmp[r];
			v[1] = two ? tmp[r + 1] : 0;
		} else if (two) {
			ga_rank2_u32(q->v, q->nv, r, v);
		} else {
			v[0] = ga_rank_u32(q->v, q->nv, r);
		}
		out[0] = v[0];
		out[1] = v[1];
		return;
	}
	for (int k = 0; k <= two; k++) {
		size_t rk = r + (size_t)k;

		out[k] = rk < nsmall ? ga_rank_u32(q->v, q->nv, rk) : big_rank(q, rk - nsmall);
	}
}

uint64_t ga_quant_rank(const struct ga_quant *q, uint64_t r)
{
	uint64_t seen = 0, v, out[2];

	if (!q->sketch) {
		if (r >= q->nv)
			return 0;
		exact_ranks(q, (size_t)r, 0, out);
		return out[0];
	}
	/* The ends are known exactly. */
	if (r == 0)
		return q->min;
	if (r >= q->n - 1)
		return q->max;
	for (uint32_t i = 0; i < q->ncnt; i++) {
		seen = sat(seen, q->cnt[i]);
		if (seen > r) {
			v = ga_quant_bucket_value(q->lo + i);
			return v < q->min ? q->min : v > q->max ? q->max : v;
		}
	}
	return q->max;
}

uint64_t ga_quant_median(const struct ga_quant *q)
{
	uint64_t n = ga_quant_count(q), mid[2];

	if (!n)
		return 0;
	if (n % 2)
		return ga_quant_rank(q, n / 2);
	if (!q->sketch) {
		exact_ranks(q, (size_t)(n / 2 - 1), 1, mid);
		return (mid[0] + mid[1]) / 2;
	}
	return (ga_quant_rank(q, n / 2 - 1) + ga_quant_rank(q, n / 2)) / 2;
}

void ga_quant_mp(const struct ga_quant *q, uint64_t *med, uint64_t *p90, uint64_t *p99)
{
	uint64_t n = ga_quant_count(q);

	/*
	 * A few exact values of 32 bits: sorted once for the three (each
	 * alone copies and sorts them, exact_ranks()); else each as alone.
	 */
	if (!q->sketch && !q->nbig && n > 0 && n <= 64) {
		uint32_t tmp[64];

		memcpy(tmp, q->v, (size_t)n * sizeof(*tmp));
		ga_sort_u32(tmp, (size_t)n);
		*med = n % 2 ? tmp[n / 2] : ((uint64_t)tmp[n / 2 - 1] + tmp[n / 2]) / 2;
		*p90 = tmp[ga_quant_pctl_rank(n, 900)];
		*p99 = tmp[ga_quant_pctl_rank(n, 990)];
		return;
	}
	*med = ga_quant_median(q);
	*p90 = ga_quant_pctl(q, 900);
	*p99 = ga_quant_pctl(q, 990);
}

uint64_t ga_quant_pctl_rank(uint64_t count, unsigned permille)
{
	u128 k;

	if (permille > 1000)
		permille = 1000;
	k = ((u128)count * permille + 999) / 1000;
	return k ? (uint64_t)k - 1 : 0;
}

uint64_t ga_quant_pctl(const struct ga_quant *q, unsigned permille)
{
	uint64_t n = ga_quant_count(q);

	return n ? ga_quant_rank(q, ga_quant_pctl_rank(n, permille)) : 0;
}

void ga_quant_buckets(const struct ga_quant *q,
		      void (*f)(void *ctx, uint32_t b, uint64_t count), void *ctx)
{
	for (uint32_t i = 0; i < q->ncnt; i++)
		if (q->cnt[i])
			f(ctx, q->lo + i, q->cnt[i]);
}

size_t ga_quant_nbuckets(const struct ga_quant *q)
{
	size_t n = 0;

	for (uint32_t i = 0; i < q->ncnt; i++)
		n += q->cnt[i] != 0;
	return n;
}
