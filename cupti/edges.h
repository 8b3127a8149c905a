/*
 * A window's edges (preload/source.h, window; docs/USAGE.md, "Which work a
 * window holds"), kept free of CUPTI for the unit tests (test_edges.c).
 *
 * The rule: a kernel, copy, memset or graph launch belongs to the window
 * in which its launch call began; an API call or an allocation to the one
 * in which it began.  CUPTI's activity kinds go on and off over
 * milliseconds while the program goes on launching, so the CUDA source
 * (tracer.c) watches each edge: from OPENING until OPEN (the window's
 * start, taken once tracing is on), and from CLOSING (before the window's
 * end is taken) until tracing is off, the runtime and driver calls that
 * launch, copy or set are seen at ENTER and EXIT (gp_edges_enter,
 * gp_edges_exit), and each call's start (its first ENTER: a runtime call
 * and the driver call inside it share the id) is kept by correlation id.  When records are
 * translated, work whose call began outside every window is left out
 * (gp_edges_keep_work), so are API calls and allocations that began
 * outside (gp_edges_keep_api, gp_edges_in_window); a watched call's API
 * records go with its work.  At the end, the source waits (boundedly)
 * until the calls begun before it have returned (gp_edges_settled), so
 * that their work was submitted while the kinds were on.
 *
 * What the watch cannot tell: a call that entered before the watch began
 * and was still inside the driver when it ended (blocked on a full launch
 * queue for the whole opening) is taken as begun inside; a call begun
 * before the end still blocked after the bounded wait may be missing; and
 * when the table is full (GP_EDGES_SLOTS calls at one edge), the calls it
 * has no room for are taken as begun inside (counted in `full`).
 *
 * Threads: gp_edges_enter and gp_edges_exit on program threads (atomics
 * only: no lock, no allocation, no system call); the edges themselves on
 * the recorder's flusher, never two at once; the window list (win, nwin)
 * under the producer lock, read when records are translated.
 */
#ifndef GP_EDGES_H
#define GP_EDGES_H

#include <stdatomic.h>
#include <stdint.h>

#define GP_EDGES_SLOTS 65536u
#define GP_EDGES_PROBES 64u
#define GP_EDGES_WINDOWS 8u
#define GP_EDGES_BEFORE 1ull /* start of a call that entered before the watch */
#define GP_EDGES_HEAD 1
#define GP_EDGES_TAIL 2

struct gp_edge_ent {
	atomic_uint corr;       /* correlation id, 0 free */
	atomic_uint counted;    /* began before the end and still inside its call */
	_Atomic uint64_t start; /* trace clock; 0 not yet written */
};

struct gp_edges {
	struct gp_edge_ent tab[GP_EDGES_SLOTS];
	atomic_int phase;     /* 0, GP_EDGES_HEAD, GP_EDGES_TAIL */
	atomic_int inflight;  /* calls begun before the end, not yet returned */
	_Atomic uint64_t end; /* the window's end, UINT64_MAX until taken */
	atomic_uint full;     /* calls the table had no room for */
	struct {
		uint64_t on, off; /* [on, off); off UINT64_MAX while open */
	} win[GP_EDGES_WINDOWS];
	unsigned nwin;    /* windows so far; none: everything is kept */
	uint64_t dropped; /* records left out by the rule */
};

/* The slot of correlation id corr; claim: take a free one.  NULL: none (full, or corr 0). */
static inline struct gp_edge_ent *gp_edges_slot(struct gp_edges *e, uint32_t corr, int claim)
{
	uint32_t h = corr * 2654435761u;

	if (!corr)
		return 0;
	for (uint32_t i = 0; i < GP_EDGES_PROBES; i++) {
		struct gp_edge_ent *s = &e->tab[(h + i) % GP_EDGES_SLOTS];
		unsigned c = atomic_load_explicit(&s->corr, memory_order_acquire);

		if (c == corr)
			return s;
		if (c)
			continue;
		if (!claim)
			return 0;
		if (atomic_compare_exchange_strong(&s->corr, &c, corr) || c == corr)
			return s;
	}
	return 0;
}

/* Flusher, before tracing goes on: the table emptied, the opening watched. */
static inline void gp_edges_opening(struct gp_edges *e)
{
	for (unsigned i = 0; i < GP_EDGES_SLOTS; i++) {
		atomic_store_explicit(&e->tab[i].start, 0, memory_order_relaxed);
		atomic_store_explicit(&e->tab[i].counted, 0, memory_order_relaxed);
		atomic_store_explicit(&e->tab[i].corr, 0, memory_order_relaxed);
	}
	atomic_store(&e->inflight, 0);
	atomic_store(&e->full, 0);
	atomic_store(&e->phase, GP_EDGES_HEAD);
}

/* Producer lock: a window begins at t (after tracing went on). */
static inline void gp_edges_open(struct gp_edges *e, uint64_t t)
{
	e->win[e->nwin % GP_EDGES_WINDOWS].on = t;
	e->win[e->nwin % GP_EDGES_WINDOWS].off = UINT64_MAX;
	e->nwin++;
}

/* Flusher, before the window's end is taken: the close watched. */
static inline void gp_edges_closing(struct gp_edges *e)
{
	atomic_store(&e->end, UINT64_MAX);
	atomic_store(&e->inflight, 0);
	atomic_store(&e->phase, GP_EDGES_TAIL);
}

/* Producer lock: the window ends at t (one that began with the trace: [0, t)). */
static inline void gp_edges_close(struct gp_edges *e, uint64_t t)
{
	if (!e->nwin || e->win[(e->nwin - 1) % GP_EDGES_WINDOWS].off != UINT64_MAX) {
		e->win[e->nwin % GP_EDGES_WINDOWS].on = 0;
		e->nwin++;
	}
	e->win[(e->nwin - 1) % GP_EDGES_WINDOWS].off = t;
	/* Seq-cst: a call entering after this store, begun at or after t, is not waited for. */
	if (atomic_load(&e->phase) == GP_EDGES_TAIL)
		atomic_store(&e->end, t);
}

/* Flusher: whether every call begun before the end has returned. */
static inline int gp_edges_settled(struct gp_edges *e)
{
	return atomic_load(&e->inflight) <= 0;
}

/*
 * Program threads: a watched call enters; now reads the trace clock.
 * Returns the call's start.  At the close, the call is counted in flight
 * before its time is read, so that a call begun before the end is seen in
 * flight by the close's first check after the end was taken.
 */
static inline uint64_t gp_edges_enter(struct gp_edges *e, uint32_t corr, uint64_t (*now)(void))
{
	int phase = atomic_load_explicit(&e->phase, memory_order_acquire), pre = 0;
	struct gp_edge_ent *s;
	uint64_t t;

	if (!phase)
		return 0;
	/* Seq-cst, paired with gp_edges_close's store of the end and gp_edges_settled's load. */
	if (phase == GP_EDGES_TAIL) {
		atomic_fetch_add(&e->inflight, 1);
		pre = 1;
	}
	t = now();
	s = gp_edges_slot(e, corr, 1);
	if (!s)
		atomic_fetch_add_explicit(&e->full, 1, memory_order_relaxed);
	/* A driver call inside another of the same launch keeps the first's start. */
	if (!s || atomic_load_explicit(&s->start, memory_order_relaxed)) {
		if (pre)
			atomic_fetch_sub(&e->inflight, 1);
		return t;
	}
	if (pre && (t >= atomic_load(&e->end) || atomic_exchange(&s->counted, 1)))
		atomic_fetch_sub(&e->inflight, 1);
	atomic_store_explicit(&s->start, t < GP_EDGES_BEFORE + 1 ? GP_EDGES_BEFORE + 1 : t,
			      memory_order_release);
	return t;
}

/* Program threads: a watched call returns; one whose ENTER came before the opening's watch began before it. */
static inline void gp_edges_exit(struct gp_edges *e, uint32_t corr)
{
	int phase = atomic_load_explicit(&e->phase, memory_order_acquire);
	struct gp_edge_ent *s;

	if (!phase || !(s = gp_edges_slot(e, corr, phase == GP_EDGES_HEAD)))
		return;
	if (phase == GP_EDGES_HEAD) {
		uint64_t zero = 0;

		atomic_compare_exchange_strong(&s->start, &zero, GP_EDGES_BEFORE);
	}
	if (atomic_exchange(&s->counted, 0))
		atomic_fetch_sub(&e->inflight, 1);
}

/* Flusher, once tracing is off (or on, after the opening): nothing watched. */
static inline void gp_edges_off(struct gp_edges *e)
{
	atomic_store(&e->phase, 0);
}

/* Producer lock: whether trace time t lies inside a window (without windows: yes). */
static inline int gp_edges_in_window(const struct gp_edges *e, uint64_t t)
{
	if (!e->nwin)
		return 1;
	for (unsigned i = 0; i < e->nwin && i < GP_EDGES_WINDOWS; i++) {
		unsigned k = (e->nwin - 1 - i) % GP_EDGES_WINDOWS;

		if (t >= e->win[k].on && t < e->win[k].off)
			return 1;
	}
	return 0;
}

/* The start the watch saw of call corr: 0 when it was not seen (it began between the edges). */
static inline uint64_t gp_edges_start(struct gp_edges *e, uint32_t corr)
{
	struct gp_edge_ent *s = e->nwin ? gp_edges_slot(e, corr, 0) : 0;

	return s ? atomic_load_explicit(&s->start, memory_order_acquire) : 0;
}

/* Producer lock: whether the work of call corr is kept (its call began inside a window). */
static inline int gp_edges_keep_work(struct gp_edges *e, uint32_t corr)
{
	uint64_t st = gp_edges_start(e, corr);

	if (!st || (st != GP_EDGES_BEFORE && gp_edges_in_window(e, st)))
		return 1;
	e->dropped++;
	return 0;
}

/*
 * Producer lock: whether an API record of call corr that began at start
 * is kept: a watched call's goes with its work (the runtime call around a
 * driver launch too), any other by its own start (0: no time, kept for
 * the loss count).
 */
static inline int gp_edges_keep_api(struct gp_edges *e, uint32_t corr, uint64_t start)
{
	if (gp_edges_start(e, corr))
		return gp_edges_keep_work(e, corr);
	if (!start || gp_edges_in_window(e, start))
		return 1;
	e->dropped++;
	return 0;
}

#endif
