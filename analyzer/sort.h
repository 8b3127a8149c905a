/*
 * In-place sorts for the analyzer's per-activity arrays.  They hold up to
 * one entry per record of a long trace, so the sorts must neither allocate
 * a second copy (memory budget) nor go through qsort's comparator calls
 * (time budget): MSD radix, in place, with an early exit for input that is
 * already sorted, which activity streams usually nearly are.  Runs offline
 * only.
 */
#ifndef GP_ANALYZER_SORT_H
#define GP_ANALYZER_SORT_H

#include <stddef.h>
#include <stdint.h>

/*
 * One timed activity on a device: 16 bytes.  dur saturates at
 * GP_DUR_BIG; the exact value of such rare long activities is kept aside.
 */
struct gp_span {
	uint64_t start;
	uint32_t dur;
	uint32_t key;              /* kernel statistics index, or GP_KEY_NONE */
};

#define GP_DUR_BIG UINT32_MAX
#define GP_KEY_NONE UINT32_MAX

/* Sort ascending. */
void gp_sort_u64(uint64_t *a, size_t n);

/* By start time. */
void gp_sort_spans_by_start(struct gp_span *a, size_t n);

/* By (key, dur). */
void gp_sort_spans_by_key(struct gp_span *a, size_t n);

#endif
