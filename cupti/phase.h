/*
 * The launches mode's choice of counter group for a launch, kept free of
 * CUPTI for the unit tests.
 *
 * Changing group costs a new range-profiler object, whose first Start
 * takes 150 to 350 ms on an H100 (a later Start of the same object about
 * 40 ms), so groups go in phases: a launch whose kernel lacks the current
 * group is measured in it; a launch whose kernel has it but lacks others
 * waits, and the phase ends only when `exhausted` launches (of the
 * kernels selected for metrics, measured or not) went by without one
 * wanting the current group.
 * Then the next group (in cyclic order) that launch lacks begins.  A
 * program that repeats its kernels (a training loop) changes group about
 * once per group; one whose kernels stop before all phases came round
 * leaves them partly measured.
 */
#ifndef GPUPROF_PHASE_H
#define GPUPROF_PHASE_H

#include <stdint.h>

/*
 * Launches without demand for the current group that end its phase: eight
 * per kernel seen (a program's first pass through its loop meets kernels
 * it repeats before all its kernels were seen), at least 128 (set-up
 * loops, such as a model's weight initialisation, repeat a few kernels
 * before the rest of the program's kernels appear).
 */
static inline uint32_t phase_exhausted(uint32_t kernels)
{
	return kernels > 16 ? 8 * kernels : 128;
}

/*
 * missing: the groups (bit g) the launch's kernel still lacks; cur: the
 * group the profiler object is configured for, -1 none yet; idle: launches
 * of selected kernels since one wanted cur.  Returns the group to measure the launch in, or -1
 * to let it go by unmeasured.
 */
static inline int phase_pick(unsigned missing, int cur, int ngroups, uint32_t idle,
			     uint32_t exhausted)
{
	if (!missing || ngroups <= 0)
		return -1;
	if (cur >= 0 && (missing >> cur & 1u))
		return cur;
	if (cur >= 0 && idle < exhausted)
		return -1;
	for (int i = 1; i <= ngroups; i++) {
		int g = (cur + i) % ngroups;

		if (missing >> g & 1u)
			return g;
	}
	return -1;
}

/*
 * Launches needing nothing before an open session closes.  Keeping it
 * open costs each such launch what a launch costs in a session (rent);
 * closing it costs a Stop, and a Start when the next launch needs the
 * group (buy): a session stays open for as many idle launches as a Stop
 * and a Start cost.  These differ by group: on an H100 in a PyTorch
 * process a user-replay session of the DRAM and L2 counters took 41 ms
 * to start again and 3.8 ms per launch, one of the mma.sync counters
 * 3.5 ms and 1.3 ms; a kernel-replay (SASS) session holds one launch
 * (metrics.c, sess_cap) and costs under 0.1 ms to start.  Costs in ns, 0
 * not yet measured: then PHASE_IDLE_USER for user replay, none for kernel
 * replay.
 */
#define PHASE_IDLE_USER 8
#define PHASE_IDLE_MAX 64

static inline int phase_idle_max(uint64_t launch, uint64_t start, uint64_t stop, int kernel_replay)
{
	if (!launch || !start)
		return kernel_replay ? 0 : PHASE_IDLE_USER;
	return (start + stop) / launch > PHASE_IDLE_MAX ? PHASE_IDLE_MAX
							: (int)((start + stop) / launch);
}

#endif
