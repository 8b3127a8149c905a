/*
 * Unit tests of the launches mode's group phases (cupti/phase.h): the
 * choice per launch, and whole programs simulated launch by launch (a
 * training loop, rounds of a few kernels, a kernel first seen late): every
 * kernel gets every group, with one group change per group where the
 * program repeats its kernels.  Test code, runs offline only, needs no GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../cupti/phase.h"
#include "tap.h"

#define MAXK 256

/* A program's launches, replayed through phase_pick as metrics.c does without sessions. */
struct sim {
	int ngroups, cur;
	uint32_t idle, nkeys;
	unsigned done[MAXK];
	int seen[MAXK];
	int changes;               /* group changes after the first group */
	long launches, measured;
};

static void sim_init(struct sim *s, int ngroups)
{
	memset(s, 0, sizeof(*s));
	s->ngroups = ngroups;
	s->cur = -1;
}

static void sim_launch(struct sim *s, int key)
{
	unsigned all = (1u << s->ngroups) - 1, missing;
	int g;

	if (!s->seen[key]) {
		s->seen[key] = 1;
		s->nkeys++;
	}
	s->launches++;
	missing = all & ~s->done[key];
	g = phase_pick(missing, s->cur, s->ngroups, s->idle, phase_exhausted(s->nkeys));
	if (g < 0) {
		s->idle++;
		return;
	}
	if (s->cur >= 0 && g != s->cur)
		s->changes++;
	s->cur = g;
	s->idle = 0;
	s->done[key] |= 1u << g;
	s->measured++;
}

static int sim_complete(const struct sim *s, int nkeys)
{
	for (int k = 0; k < nkeys; k++)
		if (s->done[k] != (1u << s->ngroups) - 1)
			return 0;
	return 1;
}

/* One step of a training loop: layers repeating the same kernels, then an optimizer. */
static void train_step(struct sim *s, int layers)
{
	for (int l = 0; l < layers; l++)
		for (int k = 0; k < 20; k++)
			sim_launch(s, k);              /* forward, per layer */
	sim_launch(s, 20);                         /* loss */
	for (int l = 0; l < layers; l++)
		for (int k = 21; k < 51; k++)
			sim_launch(s, k);              /* backward, per layer */
	for (int k = 51; k < 61; k++)
		sim_launch(s, k);                  /* optimizer */
}

int main(void)
{
	struct sim s;
	int steps;

	tap_begin("phase_pick: one launch");
	CHECK(phase_pick(0x7, -1, 3, 0, 64) == 0);          /* nothing configured yet: lowest */
	CHECK(phase_pick(0x6, -1, 3, 0, 64) == 1);
	CHECK(phase_pick(0x7, 1, 3, 0, 64) == 1);           /* lacks the current group */
	CHECK(phase_pick(0x5, 1, 3, 63, 64) == -1);         /* has it, phase not over: waits */
	CHECK(phase_pick(0x5, 1, 3, 0, 64) == -1);
	CHECK(phase_pick(0x5, 1, 3, 64, 64) == 2);          /* phase over: next group, cyclic */
	CHECK(phase_pick(0x1, 2, 3, 64, 64) == 0);          /* wraps round */
	CHECK(phase_pick(0x0, 0, 3, 100, 64) == -1);        /* nothing missing */
	CHECK(phase_pick(0x1, 0, 0, 0, 64) == -1);          /* no groups */
	CHECK(phase_exhausted(1) == 128 && phase_exhausted(16) == 128 && phase_exhausted(73) == 584);
	tap_end();

	tap_begin("phase_idle_max: a session stays open while idle launches cost less than a restart");
	CHECK(phase_idle_max(0, 0, 0, 0) == PHASE_IDLE_USER);     /* nothing measured yet */
	CHECK(phase_idle_max(0, 0, 0, 1) == 0);
	CHECK(phase_idle_max(3800000, 41000000, 7000000, 0) == 12);  /* DRAM and L2 group */
	CHECK(phase_idle_max(1300000, 3500000, 1500000, 0) == 3);    /* mma.sync group */
	CHECK(phase_idle_max(15000000, 6000000, 0, 1) == 0);         /* SASS, kernel replay */
	CHECK(phase_idle_max(1000, 10000000, 0, 0) == PHASE_IDLE_MAX);
	tap_end();

	tap_begin("training loop: every kernel complete, few group changes");
	for (int layers = 1; layers <= 24; layers++) {
		long step = 20L * layers + 1 + 30L * layers + 10;

		sim_init(&s, 3);
		for (steps = 0; steps < 60 && !sim_complete(&s, 61); steps++)
			train_step(&s, layers);
		CHECKF(sim_complete(&s, 61), "%d layers: incomplete after %d steps", layers, steps);
		CHECKF(s.measured == 61 * 3, "%d layers: %ld measurements, expected %d", layers,
		       s.measured, 61 * 3);
		/* Phases last `exhausted` launches past the last demand, a step at most. */
		CHECKF(s.launches <= 3 * (phase_exhausted(61) + step), "%d layers: %ld launches to complete",
		       layers, s.launches);
		/*
		 * Many layers repeat kernels before the rest of the step's kernels
		 * were seen: those may come in a later phase, and need a second round.
		 */
		CHECKF(s.changes <= 2 * (3 - 1) + 1, "%d layers: %d group changes", layers, s.changes);
	}
	sim_init(&s, 3);
	for (steps = 0; steps < 40 && !sim_complete(&s, 61); steps++)
		train_step(&s, 4);
	CHECKF(s.changes == 2, "4 layers: %d group changes, expected 2", s.changes);
	tap_end();

	tap_begin("rounds of eight kernels (the metrics truth program)");
	sim_init(&s, 3);
	{
		static const int round[] = { 0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7 };
		int rounds;

		for (rounds = 0; rounds < 100 && !sim_complete(&s, 8); rounds++)
			for (size_t i = 0; i < sizeof(round) / sizeof(round[0]); i++)
				sim_launch(&s, round[i]);
		CHECKF(sim_complete(&s, 8), "incomplete after %d rounds", rounds);
		/* Three phases of 128 launches (12 rounds) past the last demand. */
		CHECKF(rounds <= 36, "%d rounds to complete", rounds);
		CHECKF(s.changes == 2, "%d group changes", s.changes);
	}
	tap_end();

	tap_begin("a kernel first seen after the others completed");
	sim_init(&s, 3);
	for (steps = 0; steps < 40 && !sim_complete(&s, 61); steps++)
		train_step(&s, 4);
	{
		int n;

		for (n = 0; n < 1000 && !sim_complete(&s, 62); n++) {
			train_step(&s, 4);
			sim_launch(&s, 61);
		}
		CHECKF(sim_complete(&s, 62), "late kernel incomplete after %d steps", n);
		/* Its own launches lack groups: each later phase waits for exhausted of them. */
		CHECKF(n <= 2 * (int)phase_exhausted(62) + 2, "late kernel took %d launches", n);
		CHECKF(s.changes == 2 + 2, "%d group changes", s.changes);
	}
	tap_end();

	return tap_exit();
}
