/*
 * In-place MSD radix sort (American flag sort) and quickselect; see
 * sort.h.  Runs offline only.
 */
#include "sort.h"

#include <string.h>

#define SMALL 48

/*
 * The sort is written once as a macro over the element type and its key so
 * that the key is computed inline in the hot loops.
 */
#define DEFINE_RADIX(NAME, T, KEY)                                            \
static void NAME##_insertion(T *a, size_t n)                                  \
{                                                                             \
	size_t i, j;                                                          \
	for (i = 1; i < n; i++) {                                             \
		T v = a[i];                                                   \
		uint64_t k = KEY(v);                                          \
		for (j = i; j > 0 && KEY(a[j - 1]) > k; j--)                  \
			a[j] = a[j - 1];                                      \
		a[j] = v;                                                     \
	}                                                                     \
}                                                                             \
                                                                              \
static void NAME##_radix(T *a, size_t n)                                      \
{                                                                             \
	size_t cnt[256], next[256], end[256], i, b;                           \
	uint64_t lo, hi, diff;                                                \
	int shift;                                                            \
                                                                              \
	if (n < SMALL) {                                                      \
		NAME##_insertion(a, n);                                       \
		return;                                                       \
	}                                                                     \
	lo = hi = KEY(a[0]);                                                  \
	for (i = 1; i < n; i++) {                                             \
		uint64_t k = KEY(a[i]);                                       \
		if (k < lo)                                                   \
			lo = k;                                               \
		if (k > hi)                                                   \
			hi = k;                                               \
	}                                                                     \
	diff = lo ^ hi;                                                       \
	if (!diff)                                                            \
		return;                                                       \
	/* Start at the highest byte where the keys differ. */               \
	shift = (63 - __builtin_clzll(diff)) / 8 * 8;                         \
	memset(cnt, 0, sizeof(cnt));                                          \
	for (i = 0; i < n; i++)                                               \
		cnt[(KEY(a[i]) >> shift) & 255]++;                            \
	for (i = 0, b = 0; b < 256; b++) {                                    \
		next[b] = i;                                                  \
		i += cnt[b];                                                  \
		end[b] = i;                                                   \
	}                                                                     \
	for (b = 0; b < 256; b++) {                                           \
		while (next[b] < end[b]) {                                    \
			T v = a[next[b]];                                     \
			size_t d = (KEY(v) >> shift) & 255;                   \
			while (d != b) {                                      \
				T t = a[next[d]];                             \
				a[next[d]++] = v;                             \
				v = t;                                        \
				d = (KEY(v) >> shift) & 255;                  \
			}                                                     \
			a[next[b]++] = v;                                     \
		}                                                             \
	}                                                                     \
	if (shift == 0)                                                       \
		return;                                                       \
	for (i = 0, b = 0; b < 256; b++) {                                    \
		if (cnt[b] > 1)                                               \
			NAME##_radix(a + i, cnt[b]);                          \
		i += cnt[b];                                                  \
	}                                                                     \
}                                                                             \
                                                                              \
static void NAME(T *a, size_t n)                                              \
{                                                                             \
	size_t i;                                                             \
	for (i = 1; i < n; i++)                                               \
		if (KEY(a[i - 1]) > KEY(a[i]))                                \
			break;                                                \
	if (i >= n)                                                           \
		return;                                                       \
	NAME##_radix(a, n);                                                   \
}

#define KEY_U32(v) ((uint64_t)(v))
#define KEY_START(v) ((v).start)

DEFINE_RADIX(sort_u32, uint32_t, KEY_U32)
DEFINE_RADIX(sort_start, struct gp_span, KEY_START)

void gp_sort_spans_by_start(struct gp_span *a, size_t n)
{
	sort_start(a, n);
}

void gp_sort_u32(uint32_t *a, size_t n)
{
	sort_u32(a, n);
}

static void swap32(uint32_t *a, size_t i, size_t j)
{
	uint32_t t = a[i];

	a[i] = a[j];
	a[j] = t;
}

uint32_t gp_select_u32(uint32_t *a, size_t n, size_t r)
{
	size_t lo = 0, hi = n - 1, rounds = 0, limit = 64;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		uint32_t p;

		if (hi - lo < SMALL || ++rounds > limit) {
			/* Small ranges, and inputs that defeat the pivots, just sort. */
			sort_u32(a + lo, hi - lo + 1);
			return a[r];
		}
		/* Median of three as the pivot, parked at lo. */
		if (a[mid] < a[lo])
			swap32(a, mid, lo);
		if (a[hi] < a[lo])
			swap32(a, hi, lo);
		if (a[hi] < a[mid])
			swap32(a, hi, mid);
		swap32(a, lo, mid);
		p = a[lo];
		/* Hoare partition; equal keys split evenly between both sides. */
		i = lo;
		j = hi + 1;
		for (;;) {
			do
				i++;
			while (i <= hi && a[i] < p);
			do
				j--;
			while (a[j] > p);
			if (i >= j)
				break;
			swap32(a, i, j);
		}
		swap32(a, lo, j);
		if (j == r)
			return a[r];
		if (r < j)
			hi = j - 1;
		else
			lo = j + 1;
	}
	return a[r];
}
