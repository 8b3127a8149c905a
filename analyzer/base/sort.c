/*
 * In-place MSD radix sort (American flag sort) and radix selection; see
 * sort.h.  Runs offline only.
 */
#include "base/sort.h"

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
#define KEY_U64(v) (v)
#define KEY_START(v) ((v).start)

DEFINE_RADIX(sort_u32, uint32_t, KEY_U32)
DEFINE_RADIX(sort_u64, uint64_t, KEY_U64)
DEFINE_RADIX(sort_start, struct ga_iv, KEY_START)

void ga_sort_iv_by_start(struct ga_iv *a, size_t n)
{
	sort_start(a, n);
}

void ga_sort_u32(uint32_t *a, size_t n)
{
	sort_u32(a, n);
}

void ga_sort_u64(uint64_t *a, size_t n)
{
	sort_u64(a, n);
}

#define DIGIT_BITS 11

/* Bits below the highest bit set in any of a[0..n), 0 when all are 0. */
static int value_bits(const uint32_t *a, size_t n)
{
	uint32_t any = 0;
	size_t i;

	for (i = 0; i < n; i++)
		any |= a[i];
	return any ? 32 - __builtin_clz(any) : 0;
}

/*
 * Count the digit of width w at shift among the values matching prefix
 * under pmask, and find the digit holding rank *r (reduced to a rank
 * among the values with that digit).  Returns the digit; cnt keeps the
 * counts.
 */
static uint32_t digit_of(const uint32_t *a, size_t n, uint32_t prefix, uint32_t pmask,
			 int shift, uint32_t dmask, size_t *cnt, size_t *r)
{
	uint32_t d;
	size_t i;

	memset(cnt, 0, ((size_t)dmask + 1) * sizeof(*cnt));
	if (!pmask) {
		for (i = 0; i < n; i++)
			cnt[(a[i] >> shift) & dmask]++;
	} else {
		for (i = 0; i < n; i++)
			if ((a[i] & pmask) == prefix)
				cnt[(a[i] >> shift) & dmask]++;
	}
	for (d = 0; d < dmask && cnt[d] <= *r; d++)
		*r -= cnt[d];
	return d;
}

/* Rank r among the values matching prefix under pmask, bits below shift left. */
static uint32_t rank_rest(const uint32_t *a, size_t n, size_t r, uint32_t prefix, uint32_t pmask,
			  int bits)
{
	size_t cnt[1u << DIGIT_BITS];

	while (bits > 0) {
		int w = bits < DIGIT_BITS ? bits : DIGIT_BITS, shift = bits - w;
		uint32_t dmask = (1u << w) - 1;
		uint32_t d = digit_of(a, n, prefix, pmask, shift, dmask, cnt, &r);

		prefix |= d << shift;
		pmask |= dmask << shift;
		bits = shift;
	}
	return prefix;
}

uint32_t ga_rank_u32(const uint32_t *a, size_t n, size_t r)
{
	return rank_rest(a, n, r, 0, 0, value_bits(a, n));
}

void ga_rank2_u32(const uint32_t *a, size_t n, size_t r, uint32_t v[2])
{
	size_t cnt[1u << DIGIT_BITS];
	uint32_t prefix = 0, pmask = 0;
	int bits = value_bits(a, n);

	/* Both ranks share each digit until one counts past the other's bucket. */
	while (bits > 0) {
		int w = bits < DIGIT_BITS ? bits : DIGIT_BITS, shift = bits - w;
		uint32_t dmask = (1u << w) - 1;
		size_t r0 = r;
		uint32_t d = digit_of(a, n, prefix, pmask, shift, dmask, cnt, &r0);

		if (r0 + 1 >= cnt[d]) {
			/* Rank r + 1 is the smallest value of a later bucket. */
			uint32_t e = d + 1;

			while (!cnt[e])
				e++;
			pmask |= dmask << shift;
			v[0] = rank_rest(a, n, r0, prefix | d << shift, pmask, shift);
			v[1] = rank_rest(a, n, 0, prefix | e << shift, pmask, shift);
			return;
		}
		r = r0;
		prefix |= d << shift;
		pmask |= dmask << shift;
		bits = shift;
	}
	v[0] = v[1] = prefix;
}
