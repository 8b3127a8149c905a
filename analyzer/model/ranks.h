/*
 * Ranks of a multi-process job (torchrun, mpirun, srun): how each process
 * is named in merged views ("rank N", with its host when the job spans
 * several), their order (by rank), and the per-rank comparison the report
 * prints: GPU busy time, compute and communication (NCCL kernels) time,
 * communication not hidden behind compute on the same device, and, when
 * the program marks its steps with NVTX ranges, the slowest rank of each
 * step.  Fed during the aggregate pass as an observer of the model (it
 * passes every call on to the observer it replaced).  Runs offline only.
 *
 * A step range is an NVTX range named "ProfilerStep#N" (torch.profiler),
 * or whose name starts with "step", "train_step" or "iteration"
 * (any case), followed by nothing, a digit or one of " #_:-.".  On each
 * process the outermost such ranges, in start order, are its steps 0, 1,
 * ...; step k of every rank is compared with step k of the others by the
 * rank's work in it: from the step's start to the end of its last compute
 * (non-NCCL) kernel in the step.  Steps that end in a collective end
 * together on every rank, so their lengths cannot tell who kept the others
 * waiting; the rank that reached the collective last has the most work.
 *
 * Memory: each device's busy unions (all, compute, NCCL, every kernel),
 * once one holds 1024 intervals, retire them behind their streams'
 * watermark (model/busy.h: each stream's activities in start order, as
 * the model's retiring busy time has them; one out of order is clipped
 * and counted late), and the steps, taken from the NVTX scan (the model's
 * look-ahead, ranges.h) at the first activity, are answered from each
 * compute interval as it retires (struct ga_rank_cur).  What stays is each union's
 * unretired tail and, where two processes or more have steps (to compare
 * step k of each) or a summary carries them, per step its label,
 * process, span and work (32 bytes; a step holds at least its launches);
 * where one process alone has them, only their count (counts): a folded
 * scan's steps are read from its temporary file in the order they
 * folded, which is theirs, and not held.
 * A read without the scan's steps keeps every compute interval until
 * ga_ranks_finish() gets them.
 */
#ifndef GA_MODEL_RANKS_H
#define GA_MODEL_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/align.h"
#include "model/busy.h"
#include "model/model.h"
#include "model/ranges.h"

struct ga_ranks;
struct ga_rank_span;          /* a step's start and end (ranks.c) */

/*
 * A device's place in its process's steps (ranks.c): work[first ..], n of
 * them, the next not answered (k), and the end of the last compute
 * interval taken (have: one was).
 */
struct ga_rank_cur {
	struct ga_ranks *rk;
	size_t first, n, k;
	uint64_t pe;
	int have;
};

/* Busy time of one device as one process used it, made on its first activity. */
struct ga_rank_unions {
	struct ga_busy all, compute, comm;
	/*
	 * Every kernel: compute and NCCL (exposed time).  Where compute
	 * retires as kern does (steps_early), kern starts at the device's
	 * first NCCL kernel as a copy of compute, which until then held the
	 * same kernels (kern_on 0 before: kern would equal compute).
	 */
	struct ga_busy kern;
	int kern_on;
	struct ga_rank_cur cur;    /* the compute union's on_retire context: not moved */
	/*
	 * A summary's trace read paced (model/ranges.h pace): its steps are
	 * known at the end only, so the compute intervals retired before are
	 * kept until then, in order: the first nfiled in a temporary file
	 * (spill_fd1 - 1), the rest in spill (GA_RANKS_SPILL_MEM at most,
	 * more where no file can be made).
	 */
	struct ga_iv *spill;
	size_t nspill, capspill;
	uint64_t nfiled;
	int spill_fd1;
};

#define GA_RANKS_SPILL_MEM 4096

/* One device as one process used it (a model devrow). */
struct ga_rank_dev {
	struct ga_rank_unions *u;  /* NULL: no activity (a trace may name thousands of devices) */
	uint64_t kernels, nccl_kernels;
	uint64_t all_ns, compute_ns, comm_ns, exposed_ns; /* set by ga_ranks_finish() */
};

struct ga_rank_row {
	uint32_t proc;             /* model process */
	uint32_t rank;             /* GA_NO_RANK when unknown */
	uint32_t devices;          /* devices it used */
	uint64_t busy_ns;          /* sum over its devices of each one's busy union */
	uint64_t compute_ns;       /* union of non-NCCL kernels, summed over devices */
	uint64_t comm_ns;          /* union of NCCL kernels, summed over devices */
	uint64_t exposed_ns;       /* comm time with no compute kernel on that device */
	uint64_t kernels, nccl_kernels;
	uint64_t steps;            /* step ranges it had */
	uint64_t slowest;          /* steps (held by 2+ ranks) in which it was slowest */
	uint64_t lag_ns;           /* sum over those steps of its work minus the least */
	size_t work;               /* its first step in ga_ranks.work (steps of them) */
};

/* A process's step: its range's label and the rank's work in it (see the top). */
struct ga_rank_work {
	uint32_t label;            /* strtab id of the step range's label */
	uint32_t proc;             /* model process (ranks.c, while reading) */
	uint64_t work_ns;
};

struct ga_rank_step {
	uint32_t index;            /* step k of every rank */
	uint32_t name;             /* strtab id of the range label on the first rank */
	uint32_t ranks;            /* ranks that had step k */
	uint32_t slowest, fastest; /* row indices */
	uint64_t slowest_ns, fastest_ns, median_ns; /* work in the step (see above) */
};

struct ga_ranks {
	int inputs;                /* traces on the command line, set before reading */
	struct ga_rank_dev *devs;  /* by model devrow */
	size_t ndevs, capdevs;
	/*
	 * By kernel name strtab id: bits 0-1 are 1 NCCL, 2 other (0 not
	 * asked); bits 2-4 its collective (model/align.h ga_align_coll_index()).
	 */
	uint8_t *nccl;
	size_t capnccl;
	struct ga_rank_row *rows;  /* by rank, then host and pid (after finish) */
	size_t nrows;
	uint32_t *row_of;          /* model process -> row index */
	struct ga_rank_step *steps;
	size_t nsteps, capsteps;
	struct ga_rank_work *work; /* each process's steps, in start order */
	size_t nwork, capwork;
	struct ga_rank_span *spans; /* by work index, until ga_ranks_finish() */
	/*
	 * Steps a process had, by model process, where one process alone
	 * had any (nothing to compare: work and spans are not made).
	 */
	uint64_t *counts;
	size_t ncounts, capcounts;
	char err[320];             /* why steps could not be read, "" out of memory */
	int steps_known;           /* work and spans made (from the scan's ranges) */
	int steps_early;           /* ... before the activities: compute intervals retire */
	int spill_retired;         /* ... into each device's spill, the steps not known yet */
	int spill_oom;             /* a spill ran out of memory */
	int looked;                /* the scan's ranges looked for, at the first activity */
	size_t nhosts;             /* distinct host names */
	int any_rank;              /* some process has a rank */
	int collect;               /* collect even one trace without a rank (summaries) */
	/*
	 * With collect, each file's NCCL collectives as --align nccl keeps
	 * them (model/align.h), on the file's own clock: by model file.
	 */
	struct ga_align_keep *keep;
	size_t nkeep;
};

void ga_ranks_init(struct ga_ranks *rk);

/* Observe m's activities (model.h ga_model_observe).  0, or -1 (the fan is full). */
int ga_ranks_bind(struct ga_ranks *rk, struct ga_model *m);

/*
 * After the model is finished and the ranges scanned: per-rank figures,
 * order and steps.  0, or -1 when memory runs out.
 */
int ga_ranks_finish(struct ga_ranks *rk, const struct ga_model *m, struct ga_ranges *rg);

/*
 * The per-rank table from rows filled by process: rows[i] is process i's
 * (nrows == m->nprocs), its step work in work[rows[i].work ..] (rows[i].steps
 * of them).  Orders the rows, counts the hosts and compares step k of every
 * rank.  ga_ranks_finish() ends with it; a report of summaries
 * (model/summary.c) calls it with the figures they carry.  0, or -1 when
 * memory runs out.
 */
int ga_ranks_compare(struct ga_ranks *rk, const struct ga_model *m);

void ga_ranks_free(struct ga_ranks *rk);

/* Non-zero when the views show ranks: several processes, or a known rank. */
int ga_ranks_wanted(const struct ga_ranks *rk);

/* 1 when the mangled or plain kernel name is an NCCL kernel (ncclDevKernel_*, ...). */
int ga_ranks_is_nccl(const char *name);

/* 1 when an NVTX range label names a step (see the top of this file). */
int ga_ranks_is_step(const char *name);

#endif
