/*
 * Regular expressions of both sides: the recorder's --metrics-kernels and
 * --metrics-nvtx, the analyzer's --kernel and --nvtx.  PCRE2 (the syntax of
 * Python's re; docs/USAGE.md lists the differences), in UTF-8 mode; a name
 * that is not valid UTF-8 is matched too, its invalid bytes matching
 * nothing (a second compiled form, PCRE2_MATCH_INVALID_UTF, used only then).
 *
 * Compiling costs little whatever the pattern: PCRE2 sizes the compiled
 * form before building it and refuses one over its limit (64 KiB of code
 * with the default link size, 250 nested parentheses), so a pattern that
 * does not compile is refused quickly, with PCRE2's message and the offset
 * in the pattern where it failed.
 *
 * Matching is bounded.  At each starting position PCRE2 counts backtracking
 * steps, their nesting and their memory (pcre2_set_match_limit,
 * _depth_limit, _heap_limit); but it counts anew at every position, so a
 * pattern that backtracks a little less than the limit at each of thousands
 * of positions would still run for minutes.  The search therefore goes
 * through the name a window of starting positions per call (an offset
 * limit; GP_REGEX_WINDOW, doubling up to window_max) and stops once the
 * whole match has taken longer than its budget.  A match stopped by any
 * limit counts as no match; the first such stop of an expression is
 * returned as GP_REGEX_LIMIT_FIRST so that the caller reports it once.
 *
 * Threads: gp_regex_compile() and gp_regex_free() run alone (before the
 * first match, after the last).  gp_regex_match() may run on any number of
 * threads at once: each match takes a slot (match data and match context)
 * from a small pool with an atomic exchange (acquire, pairing with the
 * release that gave it back) and returns it with a release compare-exchange;
 * a thread that finds the pool empty allocates a slot, which then joins the
 * pool or is freed.  A slot keeps PCRE2's backtracking memory between
 * matches, so a steady state allocates nothing.  No stdio, no locks, no
 * signals: the recorder matches on the traced program's threads.
 * Header-only; the recorder links PCRE2 statically and hides it, the
 * analyzer links libpcre2-8.
 */
#ifndef GPUPROF_REGEX_H
#define GPUPROF_REGEX_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Starting positions of the first call; each call that finds nothing doubles it. */
#define GP_REGEX_WINDOW 32
/* Slots kept for matches running at the same time. */
#define GP_REGEX_POOL 8

/* gp_regex_match(): stopped by a limit, counts as no match. */
#define GP_REGEX_LIMIT (-1)
/* The same, the first time for this expression: the caller reports it. */
#define GP_REGEX_LIMIT_FIRST (-2)
/* first_error of a match stopped by the budget (PCRE2's error codes are negative). */
#define GP_REGEX_ERROR_BUDGET 1

struct gp_regex_limits {
	uint32_t steps;        /* backtracking steps at one starting position */
	uint32_t depth;        /* nested backtracking points at one position */
	uint32_t heap_kib;     /* their memory, KiB */
	uint32_t window_max;   /* starting positions per call, at most */
	uint32_t budget_us;    /* one match in all, checked between calls */
};

/*
 * A match costs at most its budget plus one call: window_max positions of
 * up to `steps` steps each (about 10 ns a step).  Inside the traced
 * program, on its threads (an NVTX push, a kernel's first launch): about
 * 10 + 6 ms at worst.
 */
#define GP_REGEX_RECORDER ((struct gp_regex_limits){ 10000, 10000, 1024, 64, 10000 })
/* Offline, once per distinct name: about 100 + 130 ms at worst. */
#define GP_REGEX_ANALYZER ((struct gp_regex_limits){ 50000, 50000, 16384, 256, 100000 })

struct gp_regex_slot {
	pcre2_match_data *md;
	pcre2_match_context *mc;
};

struct gp_regex {
	pcre2_code *code;          /* for names of valid UTF-8, checked once per match */
	pcre2_code *code_any;      /* for the others: invalid sequences never match */
	pcre2_match_context *mc;   /* the limits, copied into each slot */
	uint64_t budget_ns;
	size_t window_max;
	int anchored;              /* only one starting position: no windows */
	struct gp_regex_slot *_Atomic pool[GP_REGEX_POOL];
	_Atomic int first_error;   /* why the first stopped match stopped; 0: none yet */
};

/*
 * Compile pattern with the limits lim.  Returns 0, or -1 with err set to
 * "MESSAGE at offset N" (PCRE2's message, N the byte offset in the pattern
 * where compiling failed) or "out of memory".  re is zeroed first; after a
 * failure it holds nothing to free.
 */
static inline int gp_regex_compile(struct gp_regex *re, const char *pattern,
				   struct gp_regex_limits lim, char *err, size_t n)
{
	const uint32_t opts = PCRE2_UTF | PCRE2_NEVER_BACKSLASH_C | PCRE2_USE_OFFSET_LIMIT;
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE off = 0;
	int code = 0;

	memset(re, 0, sizeof(*re));
	re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &code, &off,
				 NULL);
	if (!re->code) {
		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", code);
		snprintf(err, n, "%s at offset %zu", (const char *)msg, (size_t)off);
		return -1;
	}
	re->code_any = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
				     opts | PCRE2_MATCH_INVALID_UTF, &code, &off, NULL);
	re->mc = pcre2_match_context_create(NULL);
	if (!re->code_any || !re->mc) {
		pcre2_match_context_free(re->mc);
		pcre2_code_free(re->code_any);
		pcre2_code_free(re->code);
		memset(re, 0, sizeof(*re));
		snprintf(err, n, "out of memory");
		return -1;
	}
	{
		uint32_t all = 0;

		pcre2_pattern_info(re->code, PCRE2_INFO_ALLOPTIONS, &all);
		re->anchored = (all & PCRE2_ANCHORED) != 0;
	}
	pcre2_set_match_limit(re->mc, lim.steps);
	pcre2_set_depth_limit(re->mc, lim.depth);
	pcre2_set_heap_limit(re->mc, lim.heap_kib);
	re->budget_ns = (uint64_t)lim.budget_us * 1000u;
	re->window_max = lim.window_max > GP_REGEX_WINDOW ? lim.window_max : GP_REGEX_WINDOW;
	return 0;
}

static inline void gp_regex_slot_free(struct gp_regex_slot *sl)
{
	if (!sl)
		return;
	pcre2_match_data_free(sl->md);
	pcre2_match_context_free(sl->mc);
	free(sl);
}

/* Free what gp_regex_compile() made (nothing after a failure); re is zeroed. */
static inline void gp_regex_free(struct gp_regex *re)
{
	for (int i = 0; i < GP_REGEX_POOL; i++)
		gp_regex_slot_free(atomic_exchange_explicit(&re->pool[i], NULL,
							    memory_order_acquire));
	pcre2_match_context_free(re->mc);
	pcre2_code_free(re->code_any);
	pcre2_code_free(re->code);
	memset(re, 0, sizeof(*re));
}

static inline uint64_t gp_regex_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline struct gp_regex_slot *gp_regex_take(struct gp_regex *re)
{
	struct gp_regex_slot *sl;

	for (int i = 0; i < GP_REGEX_POOL; i++) {
		sl = atomic_exchange_explicit(&re->pool[i], NULL, memory_order_acquire);
		if (sl)
			return sl;
	}
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return NULL;
	sl->md = pcre2_match_data_create(1, NULL);
	sl->mc = pcre2_match_context_copy(re->mc);
	if (!sl->md || !sl->mc) {
		gp_regex_slot_free(sl);
		return NULL;
	}
	return sl;
}

static inline void gp_regex_give(struct gp_regex *re, struct gp_regex_slot *sl)
{
	for (int i = 0; i < GP_REGEX_POOL; i++) {
		struct gp_regex_slot *none = NULL;

		if (atomic_compare_exchange_strong_explicit(&re->pool[i], &none, sl,
							    memory_order_release,
							    memory_order_relaxed))
			return;
	}
	gp_regex_slot_free(sl);
}

/* Note why a match stopped: GP_REGEX_LIMIT_FIRST the first time. */
static inline int gp_regex_stopped(struct gp_regex *re, int why)
{
	int none = 0;

	return atomic_compare_exchange_strong_explicit(&re->first_error, &none, why,
						       memory_order_relaxed,
						       memory_order_relaxed)
		       ? GP_REGEX_LIMIT_FIRST
		       : GP_REGEX_LIMIT;
}

/*
 * Match s (len bytes) anywhere.  Returns 1 on a match, 0 on none,
 * GP_REGEX_LIMIT or GP_REGEX_LIMIT_FIRST when a limit stopped the match
 * (or memory ran out): no match either way.
 */
static inline int gp_regex_match(struct gp_regex *re, const char *s, size_t len)
{
	struct gp_regex_slot *sl = gp_regex_take(re);
	uint64_t t0 = len >= GP_REGEX_WINDOW ? gp_regex_now() : 0;
	const pcre2_code *code = re->code;
	uint32_t check = 0;
	size_t at = 0, window = GP_REGEX_WINDOW;
	int rc, over = 0;

	if (!sl)
		return gp_regex_stopped(re, PCRE2_ERROR_NOMEMORY);
	for (;;) {
		size_t last = at + window - 1;

		/* The last window runs to the end: one call for a short name. */
		if (re->anchored || last >= len)
			last = len;
		pcre2_set_offset_limit(sl->mc, last < len ? (PCRE2_SIZE)last : PCRE2_UNSET);
		rc = pcre2_match(code, (PCRE2_SPTR)s, len, at, check, sl->md, sl->mc);
		if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21 &&
		    code == re->code) {
			/* Not UTF-8: again from the start, invalid sequences as barriers. */
			code = re->code_any;
			at = 0;
			window = GP_REGEX_WINDOW;
			continue;
		}
		if (rc != PCRE2_ERROR_NOMATCH || last >= len)
			break;
		/*
		 * The first call checked the whole name (from offset 0): the
		 * others skip that check, which would cost the rest of the
		 * name each time.
		 */
		if (code == re->code)
			check = PCRE2_NO_UTF_CHECK;
		if (gp_regex_now() - t0 > re->budget_ns) {
			over = 1;
			break;
		}
		/*
		 * Next window, from the start of a character, twice as wide:
		 * each call looks ahead through the rest of the name for what
		 * a match must start with or contain, so narrow windows would
		 * cost a long name the square of its length.
		 */
		at = last + 1;
		if (window < re->window_max)
			window *= 2;
		while (at < len && ((unsigned char)s[at] & 0xc0) == 0x80)
			at++;
	}
	gp_regex_give(re, sl);
	if (over)
		return gp_regex_stopped(re, GP_REGEX_ERROR_BUDGET);
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc < 0)
		return gp_regex_stopped(re, rc);
	/* 0: a match whose captures did not fit the one pair asked for. */
	return 1;
}

/* Why the first stopped match of re stopped ("match limit exceeded", ...). */
static inline const char *gp_regex_why(struct gp_regex *re, char *buf, size_t n)
{
	int why = atomic_load_explicit(&re->first_error, memory_order_relaxed);

	if (why == GP_REGEX_ERROR_BUDGET)
		snprintf(buf, n, "over %u ms in all", (unsigned)(re->budget_ns / 1000000u));
	else if (pcre2_get_error_message(why, (PCRE2_UCHAR *)buf, n) < 0)
		snprintf(buf, n, "error %d", why);
	return buf;
}

#endif
