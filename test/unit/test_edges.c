/*
 * Unit tests of a window's edges (cupti/edges.h), without CUPTI: which
 * work, API calls and allocations a window keeps by the rule (a launch
 * belongs to the window its call began in), at the opening (calls that
 * entered before the watch, before the start, after it) and at the close
 * (calls begun before the end are waited for, those begun at or after it
 * left out), without windows (everything kept), with a full table, and
 * with threads launching while the edges pass: every call entered while
 * an edge was watched is classified by its start alone, and the close is
 * settled only once every call begun before the end has returned.  Test
 * code, runs offline only.
 */
#include "tap.h"

#include "../../cupti/edges.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct gp_edges e;
static uint64_t fixed_t;

static uint64_t fixed_now(void)
{
	return fixed_t;
}

/* A watched call entering at trace time t. */
static void enter_at(uint32_t corr, uint64_t t)
{
	fixed_t = t;
	gp_edges_enter(&e, corr, fixed_now);
}

static void single(void)
{
	tap_begin("edges: without windows every record is kept");
	memset(&e, 0, sizeof(e));
	CHECK(gp_edges_keep_work(&e, 7));
	CHECK(gp_edges_keep_api(&e, 7, 5));
	CHECK(gp_edges_in_window(&e, 1));
	tap_end();

	tap_begin("edges: the opening keeps the calls that began at or after the start");
	gp_edges_opening(&e);
	gp_edges_exit(&e, 10); /* entered before the watch: began before */
	enter_at(11, 100);     /* began before the start (200) */
	gp_edges_exit(&e, 11);
	enter_at(12, 250); /* began after the start, before OPEN was told */
	enter_at(14, 200); /* began at the start */
	gp_edges_open(&e, 200);
	gp_edges_off(&e);
	enter_at(13, 300); /* not watched */
	gp_edges_exit(&e, 12);
	CHECK(!gp_edges_keep_work(&e, 10));
	CHECK(!gp_edges_keep_work(&e, 11));
	CHECK(gp_edges_keep_work(&e, 12));
	CHECK(gp_edges_keep_work(&e, 14));
	CHECK(gp_edges_keep_work(&e, 13));
	CHECK(gp_edges_keep_work(&e, 99));
	/* API records: a watched call's go with its work; others by their start. */
	CHECK(!gp_edges_keep_api(&e, 11, 150));
	CHECK(!gp_edges_keep_api(&e, 11, 250));
	CHECK(gp_edges_keep_api(&e, 12, 190));
	CHECK(!gp_edges_keep_api(&e, 50, 199));
	CHECK(gp_edges_keep_api(&e, 51, 200));
	CHECK(gp_edges_keep_api(&e, 52, 0));
	CHECK(!gp_edges_in_window(&e, 199) && gp_edges_in_window(&e, 200));
	CHECKF(e.dropped == 5, "%llu dropped", (unsigned long long)e.dropped);
	tap_end();

	tap_begin("edges: the close keeps the calls begun before the end and waits for them");
	gp_edges_closing(&e);
	enter_at(20, 900); /* before the end: waited for */
	CHECK(!gp_edges_settled(&e));
	gp_edges_close(&e, 1000);
	enter_at(21, 1000); /* at the end: out, not waited for */
	enter_at(22, 1200);
	CHECK(!gp_edges_settled(&e));
	gp_edges_exit(&e, 21);
	CHECK(!gp_edges_settled(&e));
	gp_edges_exit(&e, 20);
	CHECK(gp_edges_settled(&e));
	gp_edges_exit(&e, 20);
	CHECK(gp_edges_settled(&e) && atomic_load(&e.inflight) == 0);
	gp_edges_exit(&e, 23); /* entered before the close's watch: began inside */
	gp_edges_off(&e);
	CHECK(gp_edges_keep_work(&e, 20));
	CHECK(!gp_edges_keep_work(&e, 21));
	CHECK(!gp_edges_keep_work(&e, 22));
	CHECK(gp_edges_keep_work(&e, 23));
	CHECK(gp_edges_keep_work(&e, 12));
	CHECK(!gp_edges_keep_api(&e, 60, 1000) && gp_edges_keep_api(&e, 61, 999));
	tap_end();

	tap_begin("edges: a second window; between them nothing is kept");
	gp_edges_opening(&e);
	enter_at(30, 1900);
	enter_at(31, 2000);
	gp_edges_open(&e, 2000);
	gp_edges_off(&e);
	CHECK(!gp_edges_keep_work(&e, 30) && gp_edges_keep_work(&e, 31));
	CHECK(!gp_edges_keep_api(&e, 70, 1500) && gp_edges_keep_api(&e, 71, 500) &&
	      gp_edges_keep_api(&e, 72, 2500));
	/* A window that began with the trace (no OPEN) ends at its CLOSE: [0, end). */
	memset(&e, 0, sizeof(e));
	gp_edges_close(&e, 500);
	CHECK(gp_edges_in_window(&e, 0) && gp_edges_in_window(&e, 499) && !gp_edges_in_window(&e, 500));
	tap_end();

	tap_begin("edges: a full table counts the calls it has no room for, and keeps their work");
	memset(&e, 0, sizeof(e));
	gp_edges_opening(&e);
	for (uint32_t c = 1; c <= GP_EDGES_SLOTS + 100; c++)
		enter_at(c, 10);
	gp_edges_open(&e, 20);
	gp_edges_off(&e);
	CHECKF(atomic_load(&e.full) >= 100, "%u not watched", atomic_load(&e.full));
	{
		unsigned out = 0, kept = 0;

		for (uint32_t c = 1; c <= GP_EDGES_SLOTS + 100; c++)
			if (gp_edges_keep_work(&e, c))
				kept++;
			else
				out++;
		CHECKF(kept == atomic_load(&e.full) && out + kept == GP_EDGES_SLOTS + 100,
		       "%u kept, %u left out, %u not watched", kept, out, atomic_load(&e.full));
	}
	tap_end();
}

/* Threads launching while the edges pass. */
#define THREADS 4
#define CALLS 60000

static atomic_ullong clk = 1000; /* the trace clock: every read advances it */
static atomic_uint next_corr = 1;
static atomic_ullong seq; /* orders events across threads */
static atomic_int go_on = 1;
static struct call {
	uint32_t corr;
	uint64_t t, enter_seq, exit_seq;
} calls[THREADS][CALLS];
static int ncalls[THREADS];

static void spin(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

static uint64_t tick(void)
{
	return atomic_fetch_add(&clk, 1);
}

static void *launcher(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (int i = 0; i < CALLS && atomic_load(&go_on); i++) {
		struct call *c = &calls[id][i];

		c->corr = atomic_fetch_add(&next_corr, 1);
		c->enter_seq = atomic_fetch_add(&seq, 1);
		c->t = gp_edges_enter(&e, c->corr, tick);
		if (!c->t)
			c->t = tick();
		spin(i % 7 == 0 ? 20000 : 1000); /* some calls stay in the driver a while */
		/* Its work submitted, then the EXIT callback. */
		c->exit_seq = atomic_fetch_add(&seq, 1);
		gp_edges_exit(&e, c->corr);
		ncalls[id] = i + 1;
		spin(100);
	}
	return NULL;
}

static void nap_us(int us)
{
	struct timespec ts = { 0, us * 1000L };

	nanosleep(&ts, NULL);
}

/* Waits (at most 10 s) until the threads made n more events. */
static void calls_meanwhile(uint64_t n)
{
	uint64_t until = atomic_load(&seq) + n;

	for (int i = 0; i < 1000000 && atomic_load(&seq) < until; i++)
		nap_us(10);
}

static void threaded(void)
{
	pthread_t th[THREADS];
	uint64_t opening_seq, open_t, closing_seq, close_t, settle_seq = 0;
	int wrong_head = 0, wrong_tail = 0, unsettled = 0, watched = 0, side[2][2] = { { 0 } };

	memset(&e, 0, sizeof(e));
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, launcher, (void *)(intptr_t)i);
	/* Each step waits for the threads to have made calls meanwhile. */
	calls_meanwhile(400);
	opening_seq = atomic_fetch_add(&seq, 1);
	gp_edges_opening(&e);
	calls_meanwhile(400); /* the kinds going on */
	open_t = tick();
	calls_meanwhile(400);
	gp_edges_open(&e, open_t);
	gp_edges_off(&e);
	calls_meanwhile(400);
	closing_seq = atomic_fetch_add(&seq, 1);
	gp_edges_closing(&e);
	calls_meanwhile(400);
	close_t = tick();
	gp_edges_close(&e, close_t);
	for (int i = 0; i < 2000000 && !settle_seq; i++)
		if (gp_edges_settled(&e))
			settle_seq = atomic_fetch_add(&seq, 1);
		else
			nap_us(10);
	calls_meanwhile(400); /* the kinds going off */
	gp_edges_off(&e);
	atomic_store(&go_on, 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < THREADS; i++)
		for (int k = 0; k < ncalls[i]; k++) {
			struct call *c = &calls[i][k];
			int keep = gp_edges_keep_work(&e, c->corr);

			/* Entered while the opening was watched: kept by its start alone. */
			if (c->enter_seq > opening_seq && c->enter_seq < closing_seq) {
				if (gp_edges_start(&e, c->corr)) {
					watched++;
					side[0][keep]++;
					wrong_head += keep != (c->t >= open_t);
				}
			}
			/* Entered while the close was watched: kept iff begun before the end. */
			if (c->enter_seq > closing_seq && gp_edges_start(&e, c->corr)) {
				watched++;
				side[1][keep]++;
				wrong_tail += keep != (c->t < close_t);
				unsettled += c->t < close_t && (!settle_seq || c->exit_seq > settle_seq);
			}
			/* In a call across the opening's watch: began before the start. */
			if (c->enter_seq < opening_seq && c->exit_seq > opening_seq && c->t < open_t)
				wrong_head += keep && gp_edges_start(&e, c->corr) != 0;
		}
	tap_begin("edges: threads launching across the edges: each call by its start, the close waited for");
	CHECKF(side[0][0] && side[0][1] && side[1][0] && side[1][1],
	       "calls watched on each side of the start: %d before, %d after; of the end: %d, %d",
	       side[0][0], side[0][1], side[1][1], side[1][0]);
	CHECKF(wrong_head == 0 && wrong_tail == 0, "%d wrong at the opening, %d at the close", wrong_head,
	       wrong_tail);
	CHECKF(settle_seq && unsettled == 0, "settled %llu, %d calls begun before the end returned after",
	       (unsigned long long)settle_seq, unsettled);
	CHECKF(atomic_load(&e.full) == 0, "%u calls not watched", atomic_load(&e.full));
	tap_end();
}

int main(void)
{
	single();
	threaded();
	return tap_done();
}
