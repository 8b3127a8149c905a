/*
 * base/jsonw: numbers written in place (ga_jw_put_u64(), ga_jw_put_milli(),
 * and their forms with room after them, ga_jw_digits8()'s lanes) are
 * printf's digits at every length; a value written through
 * ga_jw_direct() gets the separators the writer's own calls would give it;
 * what was written reads back at its place (ga_jw_pos(), ga_jw_at()) until
 * the buffer is flushed; write errors are seen at the flush.
 * Test code, runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"
#include "tap.h"

static int same_u64(uint64_t v)
{
	char b[32], r[32], c[40];

	*ga_jw_put_u64(b, v) = '\0';
	snprintf(r, sizeof(r), "%" PRIu64, v);
	/* With room after the digits: what follows overwrites the rest. */
	memset(c, 'x', sizeof(c));
	*ga_jw_put_u64_room(c, v) = '\0';
	return !strcmp(b, r) && !strcmp(c, r);
}

static void test_digits(void)
{
	uint64_t x = 1, p = 1, bad = 0;
	int fails = 0;
	char b[40], r[40];

	tap_begin("jsonw: digits in place are printf's, at every length and power of ten");
	for (int k = 0; k < 20; k++, p *= 10)
		for (int d = -1; d <= 1; d++)
			if (!same_u64(p + (uint64_t)d) && !fails++)
				bad = p + (uint64_t)d;
	for (int i = 0; i < 1000000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (!same_u64(x >> (x & 63)) && !fails++)
			bad = x >> (x & 63);
	}
	fails += !same_u64(0) + !same_u64(UINT64_MAX);
	/* Where the digits go from 64-bit to 32-bit division. */
	fails += !same_u64(UINT32_MAX) + !same_u64((uint64_t)UINT32_MAX + 1) +
		 !same_u64((uint64_t)UINT32_MAX * 100 + 99) + !same_u64((uint64_t)UINT32_MAX * 100);
	CHECKF(!fails, "%d numbers differ, the first %" PRIu64, fails, bad);
	/* Every value below 10^7, where ga_jw_digits8() splits its lanes. */
	for (uint64_t v = 0; v < 10000000; v++)
		if (!same_u64(v) && !fails++)
			bad = v;
	fails += !same_u64(99999999) + !same_u64(100000000) + !same_u64(100000001);
	CHECKF(!fails, "%d numbers differ, the first %" PRIu64, fails, bad);
	for (int i = 0; i < 1000000; i++) {
		uint64_t v;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		v = x >> (x & 63);
		memset(r, 'x', sizeof(r));
		*ga_jw_put_milli(b, v) = '\0';
		*ga_jw_put_milli_room(r, v) = '\0';
		if (strcmp(b, r) && !fails++)
			bad = v;
	}
	CHECKF(!fails, "milli with room differs at %" PRIu64, bad);
	*ga_jw_put_milli(b, 1234567) = '\0';
	CHECKF(!strcmp(b, "1234.567"), "milli: %s", b);
	*ga_jw_put_milli(b, 7) = '\0';
	snprintf(r, sizeof(r), "0.007");
	CHECKF(!strcmp(b, r), "milli: %s", b);
	tap_end();
}

/*
 * Events of an events array, through the calls or straight into the
 * buffer: enough of them, with room asked for of varying sizes, that the
 * buffer fills at every kind of place (the inline path and the other).
 */
static char *events(int direct)
{
	struct ga_jw w;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ga_jw_init(&w, f);
	ga_jw_obj(&w, GA_JW_COMPACT);
	ga_jw_key(&w, "traceEvents");
	ga_jw_arr(&w, GA_JW_EVENTS);
	for (int i = 0; i < 5000; i++) {
		if (direct) {
			char *p = ga_jw_direct(&w, 64 + (size_t)(i % 97) * 40);

			p = GA_JW_LIT(p, "{\"ts\":");
			p = ga_jw_put_milli(p, 1000u * (unsigned)i + 5);
			p = GA_JW_LIT(p, ",\"n\":");
			p = ga_jw_put_u64(p, (uint64_t)i * 100);
			p = GA_JW_LIT(p, "}");
			ga_jw_wrote(&w, p);
		} else {
			ga_jw_obj(&w, GA_JW_COMPACT);
			ga_jw_key(&w, "ts");
			ga_jw_milli(&w, 1000u * (unsigned)i + 5);
			ga_jw_ku64(&w, "n", (uint64_t)i * 100);
			ga_jw_end(&w);
		}
	}
	ga_jw_end(&w);
	ga_jw_end(&w);
	ga_jw_free(&w);
	fclose(f);
	return out;
}

static void test_direct(void)
{
	char *a = events(0), *b = events(1);
	struct ga_jw w;

	tap_begin("jsonw: values written straight into the buffer get the writer's separators");
	CHECKF(a && b && !strcmp(a, b), "calls:\n%s\ndirect:\n%s", a ? a : "", b ? b : "");
	ga_jw_init(&w, stdout);
	CHECK(ga_jw_direct(&w, sizeof(w.buf) + 1) == NULL);
	tap_end();
	free(a);
	free(b);
}

/* A place in the output (ga_jw_pos()) reads back while in the buffer, not once flushed. */
static void test_pos(void)
{
	FILE *f = fopen("/dev/null", "w");
	struct ga_jw w;
	uint64_t pos;
	const char *at;
	char *p;

	tap_begin("jsonw: what was written reads back at its place until the buffer is flushed");
	ga_jw_init(&w, f);
	ga_jw_arr(&w, GA_JW_EVENTS);
	ga_jw_u64(&w, 1);
	p = ga_jw_direct(&w, 64);
	pos = ga_jw_pos(&w, p);
	ga_jw_wrote(&w, GA_JW_LIT(p, "12345.678,more"));
	at = ga_jw_at(&w, pos, 9);
	CHECK(at && !memcmp(at, "12345.678", 9));
	CHECK(ga_jw_at(&w, pos, 15) == NULL); /* past what was written */
	ga_jw_flush(&w);
	CHECK(ga_jw_at(&w, pos, 9) == NULL);
	ga_jw_u64(&w, 2);
	CHECK(ga_jw_at(&w, pos, 1) == NULL);
	CHECK(ga_jw_pos(&w, w.buf) == pos + 14);
	ga_jw_free(&w);
	fclose(f);
	tap_end();
}

/*
 * Write errors are seen at the flush (ga_jw_failed()), not per value; a
 * writer without a FILE that never wrote is flushed and freed safely.
 */
static void test_failed(void)
{
	struct ga_jw *w = malloc(sizeof(*w));
	FILE *full = fopen("/dev/full", "w");

	tap_begin("jsonw: a failed write is seen at the flush; no FILE, nothing written, no harm");
	if (!w) {
		CHECK(!"out of memory");
		tap_end();
		return;
	}
	ga_jw_init(w, NULL);
	ga_jw_flush(w);
	CHECK(!ga_jw_failed(w));
	ga_jw_free(w);
	if (full) {
		setvbuf(full, NULL, _IONBF, 0);
		ga_jw_init(w, full);
		ga_jw_arr(w, GA_JW_COMPACT);
		for (int i = 0; i < 100000 && !ga_jw_failed(w); i++)
			ga_jw_u64(w, (uint64_t)i);
		CHECKF(ga_jw_failed(w), "100000 numbers written to /dev/full and no error seen");
		ga_jw_free(w);
		fclose(full);
	}
	free(w);
	tap_end();
}

int main(void)
{
	test_digits();
	test_direct();
	test_pos();
	test_failed();
	return tap_exit();
}
