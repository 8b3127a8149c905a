/*
 * In-place MSD radix sort (American flag sort) and radix selection; see
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

uint32_t gp_rank_u32(const uint32_t *a, size_t n, size_t r)
{
	static const int shift[3] = { 21, 10, 0 };
	static const uint32_t mask[3] = { 0x7ff, 0x7ff, 0x3ff };
	size_t cnt[2048], i, d;
	uint32_t prefix = 0, pmask = 0;
	int pass;

	/* Each pass counts the next digit among values sharing the prefix. */
	for (pass = 0; pass < 3; pass++) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			if ((a[i] & pmask) == prefix)
				cnt[(a[i] >> shift[pass]) & mask[pass]]++;
		for (d = 0; d <= mask[pass] && cnt[d] <= r; d++)
			r -= cnt[d];
		if (d > mask[pass])
			d = mask[pass];        /* unreachable for r < n */
		prefix |= (uint32_t)d << shift[pass];
		pmask |= mask[pass] << shift[pass];
	}
	return prefix;
}
