/*
 * Unit tests of the recorder's CUPTI-free parts: output templates, trace
 * selection, string interning, the chunk ring (order, bounded memory,
 * counted drops) and the writer thread, read back through the analyzer's
 * reader.  No GPU needed.
 */
#include "tap.h"

#include "config.h"
#include "intern.h"
#include "recorder.h"
#include "ring.h"
#include "tracefile.h"

#include "reader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

static void test_expand(void)
{
	char out[300], want[300], host[256];
	int uses_n;

	gp_config_expand("run-%p", 1234, 1, out, sizeof(out), &uses_n);
	TAP_CHECK("expand %p", !strcmp(out, "run-1234.gpuprof") && !uses_n, "got %s", out);
	gp_config_expand("a%%b-%n.gpuprof", 1, 7, out, sizeof(out), &uses_n);
	TAP_CHECK("expand %% and %n, keeps extension", !strcmp(out, "a%b-7.gpuprof") && uses_n,
		  "got %s", out);
	setenv("GP_TEST_RANK", "3", 1);
	gp_config_expand("r%q{GP_TEST_RANK}-%q{GP_TEST_UNSET}", 1, 1, out, sizeof(out), &uses_n);
	TAP_CHECK("expand %q{VAR}", !strcmp(out, "r3-.gpuprof"), "got %s", out);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	snprintf(want, sizeof(want), "%s.gpuprof", host);
	gp_config_expand("%h", 1, 1, out, sizeof(out), &uses_n);
	TAP_CHECK("expand %h", !strcmp(out, want), "got %s want %s", out, want);
	TAP_CHECK("malformed %q is an error",
		  gp_config_expand("x%q{NOCLOSE", 1, 1, out, sizeof(out), &uses_n) == -EINVAL, "check failed");
	TAP_CHECK("overlong expansion is an error",
		  gp_config_expand("0123456789012345678901234567890123456789", 1, 1, out, 16,
				   &uses_n) == -ENAMETOOLONG, "check failed");
}

static void test_trace_words(void)
{
	uint32_t bits = 0;

	TAP_CHECK("trace list parses",
		  gp_config_parse_trace("kernel,memset", &bits) == 0 &&
			  bits == (GP_TRACE_KERNEL | GP_TRACE_MEMSET), "bits %x", bits);
	TAP_CHECK("api-all implies api",
		  gp_config_parse_trace("api-all", &bits) == 0 &&
			  bits == (GP_TRACE_API | GP_TRACE_API_ALL), "bits %x", bits);
	TAP_CHECK("unknown trace word rejected", gp_config_parse_trace("kernel,bogus", &bits) == -EINVAL, "check failed");
}

static void test_intern(void)
{
	struct gp_intern in;
	char buf[32];
	int added, ok = 1;
	uint32_t a, b, c;

	gp_intern_init(&in);
	a = gp_intern(&in, "alpha", 5, &added);
	ok &= a == 1 && added;
	b = gp_intern(&in, "beta", 4, &added);
	ok &= b == 2 && added;
	c = gp_intern(&in, "alpha", 5, &added);
	ok &= c == a && !added;
	for (int i = 0; i < 20000 && ok; i++) {
		int n = snprintf(buf, sizeof(buf), "s%d", i);
		uint32_t id = gp_intern(&in, buf, (size_t)n, &added);

		ok &= id == (uint32_t)i + 3 && added;
	}
	for (int i = 0; i < 20000 && ok; i++) {
		int n = snprintf(buf, sizeof(buf), "s%d", i);

		ok &= gp_intern(&in, buf, (size_t)n, &added) == (uint32_t)i + 3 && !added;
	}
	TAP_CHECK("interning gives stable ids across growth", ok, "check failed");
	gp_intern_free(&in);
}

static void test_ring(void)
{
	struct gp_ring r;
	struct gp_chunk *c;
	int ok = 1, n = 0;

	TAP_CHECK("ring init", gp_ring_init(&r, 1024, 3, 10) == 0, "check failed");
	gp_ring_lock(&r);
	/* 3 chunks of 16 records of 64 bytes; the 49th record finds no chunk. */
	for (int i = 0; i < 60; i++) {
		uint64_t *p = gp_ring_reserve(&r, 64);

		if (p)
			*p = (uint64_t)i;
		else
			n++;
	}
	gp_ring_unlock(&r);
	TAP_CHECK("full ring drops and counts", n == 60 - 48 && r.dropped == (uint64_t)n,
		  "dropped %d counted %llu", n, (unsigned long long)r.dropped);
	for (int i = 0; i < 2; i++) {
		c = gp_ring_pop(&r, 0);
		ok &= c && c->nrec == 16 && *(uint64_t *)c->buf == (uint64_t)i * 16;
		if (c)
			gp_ring_release(&r, c);
	}
	TAP_CHECK("sealed chunks come out in order", ok, "check failed");
	gp_ring_lock(&r);
	gp_ring_seal(&r, 0);
	TAP_CHECK("next chunk carries the drop count",
		  gp_ring_reserve(&r, 64) && r.cur && r.cur->lost == (uint32_t)n, "lost %u",
		  r.cur ? r.cur->lost : 0);
	gp_ring_unlock(&r);
	c = gp_ring_pop(&r, 0);
	TAP_CHECK("partial chunk sealed on demand", c && c->nrec == 16 && *(uint64_t *)c->buf == 32, "check failed");
	if (c)
		gp_ring_release(&r, c);
	gp_ring_close(&r);
	TAP_CHECK("closed empty ring pops nothing", gp_ring_pop(&r, 1000) == NULL, "check failed");
	gp_ring_lock(&r);
	gp_ring_seal(&r, 0);
	TAP_CHECK("closed ring refuses records", gp_ring_reserve(&r, 64) == NULL, "check failed");
	gp_ring_unlock(&r);
	gp_ring_destroy(&r);
}

struct counts {
	uint64_t kernels, bad_order, strings, lost, end, next_start;
};

static int count_cb(void *ctx, const struct gp_rec *rec)
{
	struct counts *c = ctx;

	switch (rec->type) {
	case GP_REC_KERNEL: {
		const struct gp_rec_kernel *k = (const void *)rec;

		if (k->start != c->next_start)
			c->bad_order++;
		c->next_start = k->start + 1;
		c->kernels++;
		break;
	}
	case GP_REC_STRING:
		c->strings++;
		break;
	case GP_REC_LOST:
		c->lost += ((const struct gp_rec_lost *)rec)->count;
		break;
	case GP_REC_END:
		c->end++;
		break;
	}
	return 0;
}

static void test_writer(void)
{
	char tmpl[300], err[512];
	struct gp_read_info info;
	struct counts cnt = { .next_start = 1000 };
	const int nk = 200000;
	int rc;

	snprintf(tmpl, sizeof(tmpl), "%s/w-%%n", tmpdir);
	memset(&gp_rec, 0, sizeof(gp_rec));
	gp_ring_init(&gp_rec.ring, 64 << 10, 4, 5000);
	gp_intern_init(&gp_rec.strings);
	rc = gp_tracefile_open(&gp_rec.file, tmpl, 0, GP_CLOCK_REALTIME, 1);
	TAP_CHECK("trace file created", rc == 0, "rc %d", rc);
	if (rc)
		return;
	gp_tracefile_start(&gp_rec.file, &gp_rec.ring);
	gp_ring_lock(&gp_rec.ring);
	gp_emit_process(1, 0);
	for (int i = 0; i < nk; i++) {
		uint32_t name = gp_emit_string(i % 2 ? "kernel_b" : "kernel_a");
		struct gp_rec_kernel *k = gp_emit(GP_REC_KERNEL, sizeof(*k));

		if (k) {
			k->start = 1000 + (uint64_t)i;
			k->end = k->start + 10;
			k->name = name;
			gp_ring_note_time(&gp_rec.ring, k->start, k->end);
		}
	}
	gp_lost_add(GP_LOST_NO_TIMESTAMP, 5);
	gp_emit_lost(0);
	gp_emit_end(2000000);
	gp_ring_seal(&gp_rec.ring, GP_CHUNK_F_LAST);
	gp_ring_unlock(&gp_rec.ring);
	gp_tracefile_stop(&gp_rec.file);

	TAP_CHECK("writer kept up (nothing dropped)", gp_rec.ring.dropped == 0, "dropped %llu",
		  (unsigned long long)gp_rec.ring.dropped);
	rc = gp_reader_read_file(gp_rec.file.path, count_cb, &cnt, &info, err, sizeof(err));
	TAP_CHECK("written trace reads whole", rc == GP_READ_OK && !info.damaged && info.finished,
		  "rc %d damaged %d: %s %s", rc, info.damaged, info.reason, err);
	TAP_CHECK("every record arrives once, in order",
		  cnt.kernels == (uint64_t)nk && cnt.bad_order == 0 && cnt.end == 1,
		  "kernels %llu bad %llu", (unsigned long long)cnt.kernels,
		  (unsigned long long)cnt.bad_order);
	TAP_CHECK("strings written once each", cnt.strings == 2 + 3 /* host, exe, cmdline */ ||
							cnt.strings == 2 + 2,
		  "strings %llu", (unsigned long long)cnt.strings);
	TAP_CHECK("loss counted into the trace", cnt.lost == 5, "lost %llu",
		  (unsigned long long)cnt.lost);
	TAP_CHECK("several chunks written", info.chunks > 4, "chunks %u", info.chunks);

	/* %n takes the first free number; a fixed name is never overwritten. */
	{
		struct gp_tracefile t2;
		char fixed[300];

		rc = gp_tracefile_open(&t2, tmpl, 0, 0, 0);
		TAP_CHECK("%n picks the next free number",
			  rc == 0 && strstr(t2.path, "/w-2.gpuprof") != NULL, "path %.200s", t2.path);
		if (!rc)
			gp_tracefile_stop(&t2);
		snprintf(fixed, sizeof(fixed), "%s/fixed", tmpdir);
		rc = gp_tracefile_open(&t2, fixed, 0, 0, 0);
		if (!rc)
			gp_tracefile_stop(&t2);
		TAP_CHECK("existing file is not overwritten",
			  gp_tracefile_open(&t2, fixed, 0, 0, 0) == -EEXIST, "check failed");
		rc = gp_tracefile_open(&t2, fixed, 1, 0, 0);
		TAP_CHECK("force overwrites", rc == 0, "rc %d", rc);
		if (!rc)
			gp_tracefile_stop(&t2);
	}
	gp_intern_free(&gp_rec.strings);
	gp_ring_destroy(&gp_rec.ring);
}

int main(void)
{
	char cmd[300];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gpuprof-unit-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_expand();
	test_trace_words();
	test_intern();
	test_ring();
	test_writer();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return tap_exit();
}
