/*
 * Ordering helpers for the analyzer's per-activity arrays.  They hold up
 * to one entry per record of a long trace, so nothing here allocates a
 * second copy (memory budget) or goes through qsort's comparator calls
 * (time budget): an in-place MSD radix sort with an early exit for input
 * already in order, which activity streams usually nearly are, and a
 * radix selection for medians.  Runs offline only.
 */
#ifndef GA_ANALYZER_SORT_H
#define GA_ANALYZER_SORT_H

#include <stddef.h>
#include <stdint.h>

/* A time interval, end >= start. */
struct ga_iv {
	uint64_t start, end;
};

/* Sort by start time. */
void ga_sort_iv_by_start(struct ga_iv *a, size_t n);

/* Sort ascending. */
void ga_sort_u32(uint32_t *a, size_t n);
void ga_sort_u64(uint64_t *a, size_t n);

/*
 * The value of rank r (0-based) among a[0..n), r < n, without reordering
 * a: one pass for the highest bit set, then counting passes over 11-bit
 * digits from there down (two for values below 2^22), no writes to a.
 */
uint32_t ga_rank_u32(const uint32_t *a, size_t n, size_t r);

/*
 * The values of ranks r and r + 1 (r + 1 < n) into v[0], v[1]: the two
 * middle values of a median, in the passes of one rank unless they differ
 * in a high digit.
 */
void ga_rank2_u32(const uint32_t *a, size_t n, size_t r, uint32_t v[2]);

#endif
