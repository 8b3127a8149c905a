/*
 * Memory in use per device, from the allocations and frees the recorder
 * traced with --trace=...,memory (GP_REC_MEMORY): for each (process,
 * device), the allocations replayed in time order give the bytes in use
 * after each one, its peak and when it was reached, what was still in use
 * at the end, and the largest allocations with whether and when they were
 * freed.  Fed during the aggregate pass as an observer of the model (it
 * passes every call on to the observer it replaced).  Runs offline only.
 *
 * Records arrive in buffer order, not time order: every device's
 * allocations and frees go through one external merge sort by time
 * (base/xsort.h: a run of at most GA_MEMUSE_RUN events in memory, full runs
 * spilled to an unlinked temporary file), replayed in that order at finish;
 * the replay keeps each device's live allocations only.  So memory grows
 * with the devices and the allocations live at once, not with the records.
 * The samples of the memory counter tracks (the bytes in use after each
 * change) are kept only when an export asks for them (samples), through a
 * second such sort, by device then time.
 * Device memory only: allocations of pageable or pinned host memory
 * (cudaMallocHost) are counted in host_records and left out.  A free
 * pairs with the live allocation at its address; a free whose allocation
 * the trace does not hold (made before tracing started, or its record
 * lost) changes nothing and is counted in unmatched_frees, so "in use" is
 * the memory allocated while tracing and not yet freed.
 */
#ifndef GA_MODEL_MEMUSE_H
#define GA_MODEL_MEMUSE_H

#include <stddef.h>
#include <stdint.h>

#include "base/xsort.h"
#include "model/model.h"

#define GA_MEMUSE_TOP 20           /* largest allocations kept per device */

/*
 * One allocation or free, as the sort keeps it: its time first, the key
 * the events are ordered by (equal times keep the order they were read in).
 */
struct ga_memuse_event {
	uint64_t t;                /* trace clock of its process */
	uint64_t address, bytes;
	uint32_t correlation;
	uint32_t dev;              /* index of its device as first met */
	uint8_t op;                /* GP_MEM_ALLOC or GP_MEM_FREE */
	uint8_t kind;              /* CUpti_ActivityMemoryKind */
	uint8_t flags;             /* GP_MEM_F_* */
	uint8_t reserved[5];
};

/* Events a run of the sort holds in memory (4 MiB of them). */
#define GA_MEMUSE_RUN ((4u << 20) / sizeof(struct ga_memuse_event))

/*
 * A sample of a device's memory counter: the bytes in use after the last
 * event at time t, where they changed from the sample before (the first
 * always).  Device first, the key of their sort.
 */
struct ga_memuse_sample {
	uint64_t dev;              /* index into devs (after finish) */
	uint64_t t;                /* trace clock */
	uint64_t in_use;
};

/* One allocation among the largest. */
struct ga_memuse_alloc {
	uint64_t address, bytes;
	uint64_t alloc_ns;         /* trace clock */
	uint64_t free_ns;          /* trace clock; 0 when never freed in the trace */
	uint32_t correlation;      /* of the allocating call */
	uint8_t kind, flags;
	uint8_t freed;
};

struct ga_memuse_dev {
	uint32_t proc;             /* model process */
	uint32_t device;           /* CUDA ordinal in that process */
	uint32_t label;            /* strtab id: the device summary's "cuda:0 [...]" (finish) */
	uint64_t allocs, frees;    /* records */
	uint64_t alloc_bytes;      /* bytes of all allocations */
	uint64_t unmatched_frees;  /* frees without their allocation in the trace */
	uint64_t peak;             /* most bytes in use at once (finish) */
	uint64_t peak_ns;          /* trace clock: when the peak was first reached */
	uint64_t final;            /* bytes in use after the last event (finish) */
	uint64_t live;             /* allocations never freed in the trace (finish) */
	uint64_t events;           /* allocations and frees of device memory */
	uint32_t first;            /* index as first met: its events' dev */
	struct ga_memuse_alloc top[GA_MEMUSE_TOP]; /* by bytes, descending (finish) */
	size_t ntop;
};

struct ga_memuse {
	struct ga_map map;         /* (proc, device) -> devs index + 1 */
	struct ga_memuse_dev *devs; /* by process, then device, after finish */
	size_t ndevs, capdevs;
	uint64_t records;          /* MEMORY records read */
	uint64_t host_records;     /* of those, host memory (pageable, pinned): left out */
	struct ga_xsort ev;        /* every device's events by time, until finish */
	size_t ev_runs;            /* runs the events were sorted in, 0 in memory (finish) */
	size_t run;                /* events a run holds; 0: GA_MEMUSE_RUN (tests) */
	int samples;               /* keep the counter samples: set before the read */
	struct ga_xsort smp;       /* the samples by device, then time (samples) */
	const struct ga_memuse_sample *peek; /* read from smp, not yet given back */
	char err[256];             /* why the last call failed */
};

void ga_memuse_init(struct ga_memuse *mu);

/* Observe m's records (model.h ga_model_observe).  0, or -1 (the fan is full). */
int ga_memuse_bind(struct ga_memuse *mu, struct ga_model *m);

/*
 * After the model is finished: order, replay, peaks, and the samples when
 * asked for.  0, or -1 (err says why: memory, or the temporary file).
 */
int ga_memuse_finish(struct ga_memuse *mu, struct ga_model *m);

void ga_memuse_free(struct ga_memuse *mu);

/* An allocation among the largest: devs[dev].top[i]. */
struct ga_memuse_ref {
	uint32_t dev, i;
};

/*
 * Every device's largest allocations, largest first (equal sizes by
 * allocation time): a malloc'd array of *n, or NULL with *n 0 when there
 * is none or memory ran out (*n then SIZE_MAX).
 */
struct ga_memuse_ref *ga_memuse_order_largest(const struct ga_memuse *mu, size_t *n);

/*
 * The next counter sample of devs[dev] in time order (mu->samples set
 * before the read), valid until the next call; NULL when the device has no
 * more.  Devices are read in order, each at most once; a device skipped
 * loses its samples.  A read error of the temporary file gives NULL with
 * mu->err set.
 */
const struct ga_memuse_sample *ga_memuse_sample_next(struct ga_memuse *mu, uint32_t dev);

/* Non-zero when the traces hold memory records. */
int ga_memuse_any(const struct ga_memuse *mu);

#endif
