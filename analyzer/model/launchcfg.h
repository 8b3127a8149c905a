/*
 * Launch configurations: each kernel's distinct (grid, block, registers,
 * shared memory), with how often and how long it ran, and
 * its theoretical occupancy: the share of the SM's warp slots its blocks
 * can fill, limited by warps, blocks, registers or shared memory per SM,
 * as the CUDA occupancy calculator computes it.  The device limits come
 * from the trace (DEVICE records of version 2) or, for older traces, from
 * the compute capability.  Shared memory is taken at the largest carveout
 * the SM offers, so the figure is the best the configuration allows.
 * Runs offline only.
 */
#ifndef GA_MODEL_LAUNCHCFG_H
#define GA_MODEL_LAUNCHCFG_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

enum ga_occ_limit {
	GA_OCC_UNKNOWN,            /* no limits known for the device */
	GA_OCC_WARPS,
	GA_OCC_BLOCKS,
	GA_OCC_REGISTERS,
	GA_OCC_SHARED,
};

/* Per-SM limits of a device, as the occupancy calculation needs them. */
struct ga_sm_limits {
	uint32_t warps, blocks, regs, smem;
	uint32_t reg_unit;         /* registers are allocated per warp in units of this */
	uint32_t smem_unit;        /* shared memory per block is rounded up to this */
	uint32_t smem_reserved;    /* shared memory the system reserves per block */
};

struct ga_lcfg {
	uint32_t name;             /* strtab id of the kernel name */
	uint32_t dev;              /* model devrow of its first launch: whose limits count */
	uint32_t grid[3], block[3];
	uint32_t regs, static_smem, dynamic_smem;
	uint64_t count, total;
	double occupancy;          /* 0..1 after finish; < 0 unknown */
	uint32_t active_blocks;    /* blocks per SM */
	uint32_t limit;            /* enum ga_occ_limit */
};

#define GA_LCFG_RECENT 1024 /* names that launch in turn: a PyTorch step has hundreds */

struct ga_launchcfg {
	struct ga_lcfg *c;
	size_t nc, capc;
	struct ga_map map;         /* (hash of the configuration, k) -> index + 1 */
	uint32_t recent[GA_LCFG_RECENT]; /* index + 1 of configurations met lately, by name */
	int oom;
};

void ga_launchcfg_init(struct ga_launchcfg *l);
void ga_launchcfg_free(struct ga_launchcfg *l);
/* Observe m's kernels (model.h ga_model_observe).  0, or -1 (the fan is full). */
int ga_launchcfg_bind(struct ga_launchcfg *l, struct ga_model *m);

/* After the model is finished: occupancy of every configuration. */
void ga_launchcfg_finish(struct ga_launchcfg *l, const struct ga_model *m);

/*
 * Indices by total time, descending, then by count, descending, then by
 * kernel name and configuration (an order of their own, whichever order
 * they came in: summaries and traces alike); NULL out of memory.
 */
uint32_t *ga_launchcfg_order(const struct ga_launchcfg *l, const struct ga_model *m);

/*
 * The SM limits of device d: from the trace, else from its compute
 * capability.  Returns 0, or -1 when neither is known.
 */
int ga_sm_limits(const struct ga_device *d, struct ga_sm_limits *out);

/*
 * Theoretical occupancy (0..1) of blocks of `threads` threads using `regs`
 * registers per thread and `smem` bytes of shared memory per block; sets
 * *blocks (active blocks per SM) and *limit.  0 when a block cannot run.
 */
double ga_occupancy(const struct ga_sm_limits *lim, uint32_t threads, uint32_t regs,
		    uint32_t smem, uint32_t *blocks, uint32_t *limit);

/* "warps", "blocks", "registers", "shared memory", "-". */
const char *ga_occ_limit_name(uint32_t limit);

#endif
