/*
 * Unit tests of the ring of blocks consumed on a thread (analyzer/base/
 * ring.c): every block consumed once, in order, on the thread or inline;
 * a failure stops the consuming and comes back from the pushes after it,
 * the drain and the stop.  Test code, runs offline only.
 */
#include "tap.h"

#include "base/handoff.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sink {
	unsigned char *buf;
	size_t len, cap;
	unsigned calls;
	unsigned fail_at; /* the call that fails (from 1), or 0 */
	pthread_t caller;
	int on_caller; /* calls made on the caller's thread */
};

static int consume(void *ctx, void *blk, size_t len)
{
	struct sink *k = ctx;

	k->calls++;
	k->on_caller += pthread_equal(pthread_self(), k->caller) != 0;
	if (k->fail_at && k->calls == k->fail_at)
		return 28;
	if (k->len + len > k->cap)
		return 12;
	memcpy(k->buf + k->len, blk, len);
	k->len += len;
	return 0;
}

/* Pushes n blocks of pattern bytes, sizes varying; the bytes pushed, or SIZE_MAX if a push failed. */
static size_t fill(struct ga_handoff *r, unsigned n, int *err)
{
	size_t total = 0;

	*err = 0;
	for (unsigned i = 0; i < n && !*err; i++) {
		unsigned char *b = ga_handoff_block(r);
		size_t m = 1 + (i * 7919u) % r->bsize;

		if (!b)
			return SIZE_MAX;
		for (size_t j = 0; j < m; j++)
			b[j] = (unsigned char)((total + j) * 31u >> 3);
		r->fill = m;
		total += m;
		*err = ga_handoff_push(r);
	}
	return total;
}

static int pattern_ok(const struct sink *k, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (k->buf[j] != (unsigned char)(j * 31u >> 3))
			return 0;
	return 1;
}

static void run(int inline_only)
{
	struct sink k = { .cap = 1 << 22, .caller = pthread_self() };
	struct ga_handoff r;
	size_t total;
	int err;

	k.buf = malloc(k.cap);
	CHECK(k.buf != NULL);
	CHECK(ga_handoff_init(&r, 4096, inline_only, consume, &k) == 0);
	total = fill(&r, 300, &err);
	CHECK(err == 0);
	if (inline_only)
		CHECKF(k.calls == 300, "%u blocks consumed at once", k.calls);
	/* A partly filled block goes at the stop. */
	memset(ga_handoff_block(&r), 0, 10);
	r.fill = 0;
	CHECK(ga_handoff_stop(&r) == 0);
	CHECKF(k.calls == 300 && k.len == total && pattern_ok(&k, total),
	       "%u calls, %zu of %zu bytes", k.calls, k.len, total);
	CHECKF(inline_only ? k.on_caller == 300 : k.on_caller == 0, "%d on the caller's thread",
	       k.on_caller);
	free(k.buf);
}

static void run_failure(int inline_only)
{
	struct sink k = { .cap = 1 << 22, .fail_at = 3, .caller = pthread_self() };
	struct ga_handoff r;
	int err = 0;
	unsigned pushes = 0;

	k.buf = malloc(k.cap);
	CHECK(k.buf != NULL);
	CHECK(ga_handoff_init(&r, 4096, inline_only, consume, &k) == 0);
	/* The failure comes back within the blocks the ring holds. */
	while (!err && pushes < 3 + GA_HANDOFF_BLOCKS + 2) {
		memset(ga_handoff_block(&r), 1, 100);
		r.fill = 100;
		err = ga_handoff_push(&r);
		pushes++;
	}
	CHECKF(err == 28, "error %d after %u pushes", err, pushes);
	CHECK(ga_handoff_err(&r) == 28);
	CHECK(ga_handoff_drain(&r) == 28);
	CHECK(ga_handoff_stop(&r) == 28);
	/* Nothing consumed after the failure. */
	CHECKF(k.calls == 3 && k.len == 200, "%u calls, %zu bytes", k.calls, k.len);
	free(k.buf);
}

/* Less than a block, then the stop: consumed by the caller, no thread started. */
static void run_small(void)
{
	struct sink k = { .cap = 1 << 16, .caller = pthread_self() };
	struct ga_handoff r;
	unsigned char *b;

	k.buf = malloc(k.cap);
	CHECK(k.buf != NULL);
	CHECK(ga_handoff_init(&r, 4096, 0, consume, &k) == 0);
	b = ga_handoff_block(&r);
	CHECK(b != NULL);
	for (size_t j = 0; b && j < 1000; j++)
		b[j] = (unsigned char)(j * 31u >> 3);
	r.fill = 1000;
	CHECK(ga_handoff_drain(&r) == 0);
	CHECK(!r.started);
	CHECK(ga_handoff_stop(&r) == 0);
	CHECKF(k.calls == 1 && k.on_caller == 1 && k.len == 1000 && pattern_ok(&k, 1000),
	       "%u calls, %d on the caller's thread, %zu bytes", k.calls, k.on_caller, k.len);
	free(k.buf);
}

int main(void)
{
	tap_begin("handoff: blocks consumed on a thread, each once, in order");
	run(0);
	tap_end();
	tap_begin("handoff: inline, each block consumed by its push");
	run(1);
	tap_end();
	tap_begin("handoff: less than a block consumed by the caller at the drain, no thread");
	run_small();
	tap_end();
	tap_begin("handoff: a failure stops the consuming, every call after returns it");
	run_failure(0);
	run_failure(1);
	tap_end();
	return tap_exit();
}
