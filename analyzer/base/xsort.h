/*
 * Fixed-size records ordered by a 64-bit key in bounded memory: an
 * external merge sort.  Records are added one at a time into a run of at
 * most cap records; a full run is sorted (stable: equal keys keep the
 * order they were added in) and spilled to an unlinked temporary file in
 * $TMPDIR (else /tmp), so nothing is left behind whatever way the program
 * ends.  At the end the runs are merged through a heap, reading each in
 * blocks; a trace whose records fit in one run is never spilled.  Records
 * of a size that is a multiple of 8 bytes (at most 120) are spilled packed:
 * in frames of up to a block's records, each 8-byte word as its difference
 * from the record before (the key subtracted, the others XORed) in as few
 * bytes as it needs, a nibble of length per word (a trace's timeline rows
 * take about a quarter of their size).  Memory: one run (at most cap
 * records, grown as they come, and 16 bytes of index each) while adding, a
 * block per run while merging (one block where the runs follow each other
 * by key: records added in order); disk: every record once.  Runs offline
 * only.
 */
#ifndef GA_BASE_XSORT_H
#define GA_BASE_XSORT_H

#include <stddef.h>
#include <stdint.h>

#include "base/sort.h"

struct ga_xsort_run {
	uint64_t off, left; /* the run's next byte in the file, records not yet read */
	uint32_t flen, fcnt; /* packed: the next frame's bytes and records */
	unsigned char *blk;  /* records read ahead */
	size_t pos, n;
};

/* A run by its current record's key, in the merge's heap. */
struct ga_xsort_top {
	uint64_t key;
	uint32_t run;
};

struct ga_xsort {
	size_t rsize;       /* record size; the record begins with its uint64_t key */
	size_t cap;         /* records per run */
	unsigned char *buf; /* the run being filled */
	size_t n, capbuf;
	struct ga_iv *idx; /* (key, place in buf) of the run, sorted */
	size_t capidx;
	size_t next;       /* the next record given back of an unspilled run */
	int inorder;       /* the run last sorted was in key order already: idx not made */
	int fd1;           /* the spill file's descriptor + 1, 0 none */
	uint64_t fsize;
	int packed;          /* runs spilled packed (rsize a multiple of 8, at most 120) */
	unsigned char *pbuf; /* packed frames on their way to or from the file */
	size_t pcap;
	struct ga_xsort_run *runs;
	size_t nruns, capruns;
	struct ga_xsort_top *heap, second; /* the heap; the least run after its top */
	size_t nheap;
	uint64_t last_key; /* of the run spilled last */
	int apart;         /* a run began before the one spilled before it ended */
	int in_sequence;   /* merged: runs read one after another, through one block */
	int done;       /* ga_xsort_done() called */
	uint64_t total; /* records added */
	char err[192];  /* why the last call failed */
};

/*
 * An empty sorter of records of rsize bytes (>= 8), cap records a run
 * (>= 1).  A zeroed struct is an empty sorter to init or free.
 */
void ga_xsort_init(struct ga_xsort *x, size_t rsize, size_t cap);

/*
 * Room for the next record, to be filled before the next call; spills
 * the run first when it is full (ga_xsort_slot_more(): the same, called
 * when the run or its memory is full).  NULL (err says why) when memory or the
 * spill file fails.
 */
void *ga_xsort_slot_more(struct ga_xsort *x);
static inline void *ga_xsort_slot(struct ga_xsort *x)
{
	/* Room in the run and its memory: no call (one a timeline row showed in profiles). */
	if (x->n < x->cap && x->n < x->capbuf) {
		x->total++;
		return x->buf + x->n++ * x->rsize;
	}
	return ga_xsort_slot_more(x);
}

/* No more records: order what was added.  0, or -1 (err). */
int ga_xsort_done(struct ga_xsort *x);

/*
 * The next record in key order (equal keys in the order added), valid
 * until the next call; NULL at the end, or on a read error (err set).
 */
const void *ga_xsort_next(struct ga_xsort *x);

/*
 * The next records in key order, one after the other in memory: *n of
 * them (at least 1), valid until the next call; NULL at the end, or on a
 * read error (err set).  The same records as ga_xsort_next() gives, in
 * as few calls as their order allows.
 */
const void *ga_xsort_next_n(struct ga_xsort *x, size_t *n);

/* Free the memory and close (so remove) the spill file. */
void ga_xsort_free(struct ga_xsort *x);

#endif
