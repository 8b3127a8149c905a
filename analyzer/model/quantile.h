/*
 * Quantiles of durations in bounded memory: the medians, p90 and p99 of
 * the kernel, API and memory tables, of launch latency and of summaries.
 *
 * A struct ga_quant keeps its values exactly, in arrival order, while it
 * holds at most its limit of them (GA_QUANT_EXACT_DEFAULT unless set;
 * GA_QUANT_NO_LIMIT keeps everything): 4 bytes a value, 8 more for each
 * value of 2^32 - 1 and above.  Past the limit it turns into a histogram
 * of log-spaced buckets: values below 2^GA_QUANT_SUB_BITS have a bucket
 * each; above, each power of two is cut into 2^GA_QUANT_SUB_BITS buckets,
 * at most GA_QUANT_BUCKETS of them (8 bytes each, only the span between
 * the lowest and highest used is allocated).  Counts stay exact, so a
 * rank's bucket is the bucket of the exact value of that rank; the bucket
 * stands for its middle, clamped to the minimum and maximum seen (the
 * first and last ranks are those, exactly): at most
 * 1/256 of the value off (GA_QUANT_REL_ERR_TEXT), plus 1 ns of rounding
 * where a median averages two values.  Merging two quantiles is exact
 * while both are exact and the sum fits the limit, and bucket counts add
 * otherwise, so any grouping and order of merges gives the same histogram.
 * Runs offline only; not thread-safe (one owner per struct).
 */
#ifndef GA_MODEL_QUANTILE_H
#define GA_MODEL_QUANTILE_H

#include <stddef.h>
#include <stdint.h>

/* Values a quantile keeps exactly when its limit is 0 (the default). */
#define GA_QUANT_EXACT_DEFAULT 65536u
/* A limit that keeps every value exactly (memory grows with the values). */
#define GA_QUANT_NO_LIMIT UINT64_MAX

#define GA_QUANT_SUB_BITS 7
/* Bucket indices are below this. */
#define GA_QUANT_BUCKETS (((64u - GA_QUANT_SUB_BITS + 1u) << GA_QUANT_SUB_BITS))
/* The relative error of an estimated quantile, as the docs and help state it. */
#define GA_QUANT_REL_ERR_TEXT "0.4%"

/* Marks, in v, a value kept in big. */
#define GA_QUANT_BIG UINT32_MAX

struct ga_quant {
	uint64_t limit;            /* values kept exactly; 0: GA_QUANT_EXACT_DEFAULT */
	/* Exact: every value in arrival order, GA_QUANT_BIG for the next of big. */
	uint32_t *v;
	size_t nv, capv;
	uint64_t *big;
	size_t nbig, capbig;
	/* Histogram (sketch set): counts of buckets lo .. lo + ncnt - 1. */
	int sketch;
	uint64_t n, min, max;      /* values, smallest and largest (sketch only) */
	uint64_t sum;              /* their sum and sum of squares, saturating (sketch only) */
	unsigned __int128 sumsq;
	uint64_t *cnt;
	uint32_t lo, ncnt;
};

/* The bucket of x, and the value bucket b stands for (its middle). */
static inline uint32_t ga_quant_bucket_of(uint64_t x)
{
	unsigned e;

	if (x < (1u << GA_QUANT_SUB_BITS))
		return (uint32_t)x;
	e = 63u - (unsigned)__builtin_clzll(x);
	return (uint32_t)(((e - GA_QUANT_SUB_BITS + 1) << GA_QUANT_SUB_BITS) +
			  ((x >> (e - GA_QUANT_SUB_BITS)) - (1u << GA_QUANT_SUB_BITS)));
}
uint64_t ga_quant_bucket_value(uint32_t b);

/* Adds x out of line: growth, long values, the histogram.  0, or -1 out of memory. */
int ga_quant_add_slow(struct ga_quant *q, uint64_t x);

/*
 * Adds x.  A zeroed struct is an empty quantile with the default limit.
 * 0, or -1 out of memory (q is left as it was).
 */
static inline int ga_quant_add(struct ga_quant *q, uint64_t x)
{
	if (q->nv < q->capv && x < GA_QUANT_BIG) {
		q->v[q->nv++] = (uint32_t)x;
		return 0;
	}
	/* A histogram's bucket within its span: counted here, sums saturating. */
	if (q->sketch && q->n) {
		uint32_t b = ga_quant_bucket_of(x) - q->lo;

		if (b < q->ncnt) {
			unsigned __int128 sq = (unsigned __int128)x * x;
			uint64_t s = q->sum + x;

			q->cnt[b]++;
			if (x < q->min)
				q->min = x;
			if (x > q->max)
				q->max = x;
			q->n += q->n != UINT64_MAX;
			q->sum = s < x ? UINT64_MAX : s;
			q->sumsq = q->sumsq + sq < sq ? ~(unsigned __int128)0 : q->sumsq + sq;
			return 0;
		}
	}
	return ga_quant_add_slow(q, x);
}

/*
 * Adds the n values at v to q as ga_quant_add() of each would, q a
 * histogram (made one first if not): its span covered once, then each
 * value counted without a test of it.  0, or -1 out of memory.
 */
int ga_quant_add_array(struct ga_quant *q, const uint64_t *v, size_t n);

/*
 * Adds count values in bucket b (b < GA_QUANT_BUCKETS) to a histogram (a
 * histogram read back).  Its minimum, maximum and sums then count the
 * bucket's bounds and middle; a caller that knows them exactly sets them.
 * 0, or -1 out of memory or b out of range.
 */
int ga_quant_add_bucket(struct ga_quant *q, uint32_t b, uint64_t count);

/* The number of values added (saturating). */
uint64_t ga_quant_count(const struct ga_quant *q);

/* 1 when q's quantiles are estimates (it holds a histogram), else 0. */
int ga_quant_estimated(const struct ga_quant *q);

/* Turns q into a histogram now.  0, or -1 out of memory (q unchanged). */
int ga_quant_to_sketch(struct ga_quant *q);

/*
 * The number, sum and sum of squares (both saturating) of the values,
 * their minimum and maximum (0 when empty).
 */
void ga_quant_moments(const struct ga_quant *q, uint64_t *n, uint64_t *sum,
		      unsigned __int128 *sumsq, uint64_t *min, uint64_t *max);

/*
 * Sample standard deviation of the values (0 for fewer than two), rounded
 * to ns: while exact, the running variance (base/util.h ga_welford) over
 * the values in arrival order, as if it had been updated value by value;
 * a histogram's from its exact sums, n*sumsq - sum^2 over n(n-1) with one
 * rounding, as a summary's.  So no division is paid per value added.
 */
uint64_t ga_quant_stddev(const struct ga_quant *q);

/* A deep copy of src into dst (overwritten).  0, or -1 out of memory (dst empty). */
int ga_quant_copy(struct ga_quant *dst, const struct ga_quant *src);

/* Copies q's exact values, in arrival order, to out[0 .. count) (q not a histogram). */
void ga_quant_values(const struct ga_quant *q, uint64_t *out);

/*
 * Merges b into a (b is freed either way): b's values come after a's.
 * Exact when both are and the sum fits a's limit.  0, or -1 out of memory.
 */
int ga_quant_merge(struct ga_quant *a, struct ga_quant *b);

/* The value of 0-based rank r < count: exact, or its bucket's (see above). */
uint64_t ga_quant_rank(const struct ga_quant *q, uint64_t r);

/* Median: the middle value, or the mean of the two middle ones; 0 when empty. */
uint64_t ga_quant_median(const struct ga_quant *q);

/* ga_quant_median() and ga_quant_pctl() at 900 and 990 of q, at once. */
void ga_quant_mp(const struct ga_quant *q, uint64_t *med, uint64_t *p90, uint64_t *p99);

/*
 * The permille-th percentile by nearest rank: the value of rank
 * ceil(count * permille / 1000) - 1 (p90: 900, p99: 990); 0 when empty.
 */
uint64_t ga_quant_pctl(const struct ga_quant *q, unsigned permille);

/* The rank ga_quant_pctl() takes for count values (count > 0). */
uint64_t ga_quant_pctl_rank(uint64_t count, unsigned permille);

/* Calls f for each used bucket in ascending order (histograms only). */
void ga_quant_buckets(const struct ga_quant *q,
		      void (*f)(void *ctx, uint32_t b, uint64_t count), void *ctx);

/* The number of used buckets (histograms only). */
size_t ga_quant_nbuckets(const struct ga_quant *q);

void ga_quant_free(struct ga_quant *q);

#endif
