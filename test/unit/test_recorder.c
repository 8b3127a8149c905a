/*
 * Unit tests of the recorder's CUPTI-free parts: output templates, trace
 * selection, string interning, the chunk ring (order, bounded memory,
 * counted drops) and the writer thread, read back through the analyzer's
 * reader.  No GPU needed.
 */
#include "helpers.h"
#include "tap.h"

#include "config.h"
#include "intern.h"
#include "recorder.h"
#include "ring.h"
#include "tracefile.h"

#include "read/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

/*
 * The writer's pwrite(2), replaced in this test program by one that fails
 * like a disk or a network file system with I/O errors: once eio_after
 * bytes have been written through it, the next eio_calls calls fail with
 * EIO (a negative eio_calls: every later call).  eio_after < 0: never.
 */
static _Atomic long long eio_after = -1, pwritten;
static _Atomic int eio_calls;

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	long r;

	if (atomic_load(&eio_after) >= 0 && atomic_load(&pwritten) >= atomic_load(&eio_after) &&
	    atomic_load(&eio_calls) != 0) {
		if (atomic_load(&eio_calls) > 0)
			atomic_fetch_sub(&eio_calls, 1);
		errno = EIO;
		return -1;
	}
	r = syscall(SYS_pwrite64, fd, buf, n, off);
	if (r > 0)
		atomic_fetch_add(&pwritten, r);
	return (ssize_t)r;
}

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
	TAP_CHECK("unknown escapes, a trailing '%' and %q without a name are errors",
		  gp_config_expand("x%y", 1, 1, out, sizeof(out), &uses_n) == -EINVAL &&
		  gp_config_expand("x%", 1, 1, out, sizeof(out), &uses_n) == -EINVAL &&
		  gp_config_expand("x%q{}", 1, 1, out, sizeof(out), &uses_n) == -EINVAL &&
		  gp_config_expand("x%q{1A}", 1, 1, out, sizeof(out), &uses_n) == -EINVAL &&
		  gp_config_expand("x%qA", 1, 1, out, sizeof(out), &uses_n) == -EINVAL, "check failed");
	{
		struct gp_config c;
		const char *old = getenv("GPUPROF_OUTPUT");
		char saved[300] = "";

		if (old)
			snprintf(saved, sizeof(saved), "%s", old);
		setenv("GPUPROF_OUTPUT", "bad-%y", 1);
		gp_config_load(&c);
		TAP_CHECK("an invalid GPUPROF_OUTPUT falls back to the default",
			  !strcmp(c.output, "gpuprof-%p"), "got %s", c.output);
		if (old)
			setenv("GPUPROF_OUTPUT", saved, 1);
		else
			unsetenv("GPUPROF_OUTPUT");
	}
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
	TAP_CHECK("memory is a trace word",
		  gp_config_parse_trace("kernel,memory", &bits) == 0 &&
			  bits == (GP_TRACE_KERNEL | GP_TRACE_MEMORY), "bits %x", bits);
	TAP_CHECK("cuda is kernels, copies, sets, graphs and the API (as nsys)",
		  gp_config_parse_trace("cuda,nvtx", &bits) == 0 &&
			  bits == (GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET |
				   GP_TRACE_GRAPH | GP_TRACE_API | GP_TRACE_NVTX), "bits %x", bits);
	{
		struct gp_config c;
		const char *old = getenv("GPUPROF_TRACE");
		char saved[300] = "";

		if (old)
			snprintf(saved, sizeof(saved), "%s", old);
		unsetenv("GPUPROF_TRACE");
		gp_config_load(&c);
		TAP_CHECK("memory is off by default", !(c.trace & GP_TRACE_MEMORY) &&
			  (c.trace & GP_TRACE_KERNEL), "trace %x", c.trace);
		setenv("GPUPROF_TRACE", "kernel,memory", 1);
		gp_config_load(&c);
		TAP_CHECK("GPUPROF_TRACE takes memory", c.trace == (GP_TRACE_KERNEL | GP_TRACE_MEMORY),
			  "trace %x", c.trace);
		if (old)
			setenv("GPUPROF_TRACE", saved, 1);
		else
			unsetenv("GPUPROF_TRACE");
	}
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
	uint64_t lost_by[GP_LOST_CAUSE_COUNT];
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
	case GP_REC_LOST: {
		const struct gp_rec_lost *l = (const void *)rec;

		c->lost += l->count;
		if (l->cause < GP_LOST_CAUSE_COUNT)
			c->lost_by[l->cause] += l->count;
		break;
	}
	case GP_REC_END:
		c->end++;
		break;
	}
	return 0;
}

static void test_writer(void)
{
	char tmpl[300], err[512];
	struct ga_read_info info;
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
	gp_tracefile_stop(&gp_rec.file, 5000);

	TAP_CHECK("writer kept up (nothing dropped)", gp_rec.ring.dropped == 0, "dropped %llu",
		  (unsigned long long)gp_rec.ring.dropped);
	rc = ga_reader_read_file(gp_rec.file.path, count_cb, &cnt, &info, err, sizeof(err));
	TAP_CHECK("written trace reads whole", rc == GA_READ_OK && !info.damaged && info.finished,
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
			gp_tracefile_stop(&t2, 5000);
		snprintf(fixed, sizeof(fixed), "%s/fixed", tmpdir);
		rc = gp_tracefile_open(&t2, fixed, 0, 0, 0);
		if (!rc)
			gp_tracefile_stop(&t2, 5000);
		TAP_CHECK("existing file is not overwritten",
			  gp_tracefile_open(&t2, fixed, 0, 0, 0) == -EEXIST, "check failed");
		rc = gp_tracefile_open(&t2, fixed, 1, 0, 0);
		TAP_CHECK("force overwrites", rc == 0, "rc %d", rc);
		if (!rc)
			gp_tracefile_stop(&t2, 5000);
	}
	gp_intern_free(&gp_rec.strings);
	gp_ring_destroy(&gp_rec.ring);
}


static void test_expand_sanitised(void)
{
	static const struct {
		const char *val, *want;
	} cases[] = {
		{ "../../x", "out/.._.._x.gpuprof" },
		{ "/tmp/abs", "out/_tmp_abs.gpuprof" },
		{ "..", "out/_.gpuprof" },
		{ ".", "out/_.gpuprof" },
		{ "a..b", "out/a..b.gpuprof" },
	};
	char out[256];
	int uses_n;

	tap_begin("%q values cannot add path components");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("GP_TEST_RANK", cases[i].val, 1);
		CHECKF(gp_config_expand("out/%q{GP_TEST_RANK}", 1, 1, out, sizeof(out), &uses_n) == 0 &&
			       !strcmp(out, cases[i].want),
		       "%s gives %s", cases[i].val, out);
	}
	unsetenv("GP_TEST_RANK");
	tap_end();
}

static void test_intern_undo(void)
{
	struct gp_intern in;
	uint32_t a, b, a2;
	int added;

	gp_intern_init(&in);
	a = gp_intern(&in, "first", 5, &added);
	b = gp_intern(&in, "dropped", 7, &added);
	gp_intern_undo(&in, b);
	a2 = gp_intern(&in, "dropped", 7, &added);
	TAP_CHECK("an undone string is added again under the same id",
		  a == 1 && b == 2 && a2 == 2 && added, "a %u b %u again %u added %d", a, b, a2, added);
	gp_intern_undo(&in, a); /* not the newest: ignored */
	a2 = gp_intern(&in, "first", 5, &added);
	TAP_CHECK("only the newest string can be undone", a2 == a && !added, "got %u added %d", a2,
		  added);
	gp_intern_free(&in);
}

/* Starts a recorder writing to path (template); 0 or -errno. */
static int start_rec(const char *tmpl, int force)
{
	int rc;

	memset(&gp_rec, 0, sizeof(gp_rec));
	gp_ring_init(&gp_rec.ring, 64 << 10, 4, 5000);
	gp_intern_init(&gp_rec.strings);
	rc = gp_tracefile_open(&gp_rec.file, tmpl, force, GP_CLOCK_REALTIME, 1);
	if (rc)
		return rc;
	gp_tracefile_start(&gp_rec.file, &gp_rec.ring);
	atomic_store(&gp_rec.state, GP_ACTIVE);
	gp_ring_lock(&gp_rec.ring);
	gp_emit_process(1, 0);
	gp_ring_unlock(&gp_rec.ring);
	return 0;
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 11;
}

/* Emits n kernels; random fields make them compress poorly. */
static void emit_kernels(int n, uint64_t *seed, uint64_t *start)
{
	gp_ring_lock(&gp_rec.ring);
	for (int i = 0; i < n; i++) {
		uint32_t name = gp_emit_string("kernel_a");
		struct gp_rec_kernel *k = gp_emit(GP_REC_KERNEL, sizeof(*k));

		if (k) {
			k->start = (*start)++;
			k->end = k->start + lcg(seed);
			k->correlation = (uint32_t)lcg(seed);
			k->grid[0] = (uint32_t)lcg(seed);
			k->name = name;
		}
	}
	gp_ring_unlock(&gp_rec.ring);
}

static void stop_rec(void)
{
	gp_ring_lock(&gp_rec.ring);
	gp_emit_final(2000000, 5000);
	gp_ring_unlock(&gp_rec.ring);
	gp_tracefile_stop(&gp_rec.file, 5000);
	gp_intern_free(&gp_rec.strings);
	gp_ring_destroy(&gp_rec.ring);
}

/* Counts a trace's records; -1 if it does not read whole and finished. */
static int read_counts(const char *path, struct counts *cnt, char *why, size_t whysz)
{
	struct ga_read_info info;
	char err[512];
	int rc;

	memset(cnt, 0, sizeof(*cnt));
	cnt->next_start = 1000;
	rc = ga_reader_read_file(path, count_cb, cnt, &info, err, sizeof(err));
	if (rc != GA_READ_OK || info.damaged || !info.finished) {
		snprintf(why, whysz, "rc %d damaged %d finished %d: %s %s", rc, info.damaged,
			 info.finished, info.reason, err);
		return -1;
	}
	return 0;
}

/*
 * A full disk: a file size limit (RLIMIT_FSIZE fails writes and fallocate
 * just as ENOSPC does) far below the trace's size.  The trace still ends
 * with its END record and counts every record it could not write.
 */
static void test_disk_full(void)
{
	char tmpl[300], path[300], why[1400] = "";
	struct counts cnt;
	const int nk = 100000;
	int status = 0;
	pid_t pid;

	snprintf(tmpl, sizeof(tmpl), "%s/full", tmpdir);
	snprintf(path, sizeof(path), "%s/full.gpuprof", tmpdir);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 256 << 10, 256 << 10 };
		uint64_t seed = 1, start = 1000;
		int fd;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		/* gp_log's one line goes to a file, not the test's output. */
		fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		if (start_rec(tmpl, 0))
			_exit(2);
		emit_kernels(nk, &seed, &start);
		stop_rec();
		_exit(gp_rec.file.failed ? 0 : 3);
	}
	waitpid(pid, &status, 0);
	tap_begin("full disk: the trace ends with its losses counted");
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "recorder child status %#x", status);
	if (read_counts(path, &cnt, why, sizeof(why)) < 0)
		CHECKF(0, "%s", why);
	CHECKF(cnt.kernels < (uint64_t)nk && cnt.lost > 0, "kernels %llu lost %llu",
	       (unsigned long long)cnt.kernels, (unsigned long long)cnt.lost);
	CHECKF(cnt.kernels + cnt.lost == (uint64_t)nk, "kernels %llu + lost %llu != %d",
	       (unsigned long long)cnt.kernels, (unsigned long long)cnt.lost, nk);
	CHECKF(cnt.end == 1, "end records %llu", (unsigned long long)cnt.end);
	tap_end();
}

/*
 * Writes fail with EIO mid-run: once (the file system recovers, as after
 * a transient error) or from then on.  Once: the trace ends with its END
 * record and counts every record it could not write, as write errors.
 * From then on: the last chunk cannot be written either; the file holds
 * whole chunks only (the partial one is cut), so it reads to its last one.
 */
static void test_write_eio(int persistent)
{
	char tmpl[300], path[320], why[1400] = "", err[512];
	struct ga_read_info info;
	struct counts cnt;
	const int nk = 100000;
	int status = 0, rc;
	pid_t pid;

	snprintf(tmpl, sizeof(tmpl), "%s/eio%d", tmpdir, persistent);
	snprintf(path, sizeof(path), "%s.gpuprof", tmpl);
	pid = fork();
	if (pid == 0) {
		uint64_t seed = 3, start = 1000;
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 2); /* gp_log's one line */
		atomic_store(&eio_calls, persistent ? -1 : 1);
		atomic_store(&pwritten, 0);
		atomic_store(&eio_after, 256 << 10);
		if (start_rec(tmpl, 0))
			_exit(2);
		emit_kernels(nk, &seed, &start);
		stop_rec();
		/* Said once; every record of the run is written or counted. */
		_exit(!gp_rec.file.failed || gp_rec.file.error != EIO ? 3
		      : gp_rec.file.records_written + gp_rec.file.records_lost != gp_rec.records ? 4
		      : 0);
	}
	waitpid(pid, &status, 0);
	if (!persistent) {
		tap_begin("EIO once: the trace ends with its losses counted as write errors");
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "recorder child status %#x",
		       status);
		if (read_counts(path, &cnt, why, sizeof(why)) < 0)
			CHECKF(0, "%s", why);
		CHECKF(cnt.kernels > 0 && cnt.kernels < (uint64_t)nk, "kernels %llu",
		       (unsigned long long)cnt.kernels);
		CHECKF(cnt.lost_by[GP_LOST_WRITE_ERROR] == cnt.lost && cnt.lost > 0,
		       "write errors %llu of %llu lost", (unsigned long long)cnt.lost_by[GP_LOST_WRITE_ERROR],
		       (unsigned long long)cnt.lost);
		CHECKF(cnt.kernels + cnt.lost == (uint64_t)nk, "kernels %llu + lost %llu != %d",
		       (unsigned long long)cnt.kernels, (unsigned long long)cnt.lost, nk);
		CHECKF(cnt.end == 1 && cnt.bad_order == 0, "end records %llu, out of order %llu",
		       (unsigned long long)cnt.end, (unsigned long long)cnt.bad_order);
		tap_end();
		return;
	}
	tap_begin("EIO from then on: the trace reads to its last whole chunk");
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "recorder child status %#x", status);
	memset(&cnt, 0, sizeof(cnt));
	cnt.next_start = 1000;
	rc = ga_reader_read_file(path, count_cb, &cnt, &info, err, sizeof(err));
	CHECKF(rc == GA_READ_OK && !info.damaged && !info.finished && info.bytes_unread == 0,
	       "rc %d damaged %d finished %d unread %llu: %s %s", rc, info.damaged, info.finished,
	       (unsigned long long)info.bytes_unread, info.reason, err);
	CHECKF(cnt.kernels > 0 && cnt.kernels < (uint64_t)nk && cnt.bad_order == 0,
	       "kernels %llu, out of order %llu", (unsigned long long)cnt.kernels,
	       (unsigned long long)cnt.bad_order);
	tap_end();
}

/* A LOST record that finds the ring full is retried, not counted as lost. */
static void test_lost_retried(void)
{
	struct gp_chunk *c;
	const struct gp_rec_lost *l;
	int kept = 0;

	memset(&gp_rec, 0, sizeof(gp_rec));
	gp_ring_init(&gp_rec.ring, 1024, 2, 10);
	gp_ring_lock(&gp_rec.ring);
	for (int i = 0; i < 40; i++)
		kept += gp_ring_reserve(&gp_rec.ring, 64) != NULL;
	gp_lost_add(GP_LOST_NO_TIMESTAMP, 3);
	gp_emit_lost(0);
	gp_emit_lost(0);
	gp_ring_unlock(&gp_rec.ring);
	tap_begin("LOST records retried while the ring is full, counted once");
	CHECKF(kept == 32 && gp_rec.ring.dropped == 8, "kept %d dropped %llu", kept,
	       (unsigned long long)gp_rec.ring.dropped);
	CHECK(gp_ring_reserve_retried(&gp_rec.ring, 64) == NULL && gp_rec.ring.dropped == 8);
	c = gp_ring_pop(&gp_rec.ring, 0);
	if (c)
		gp_ring_release(&gp_rec.ring, c);
	gp_ring_lock(&gp_rec.ring);
	gp_emit_lost(0);
	gp_ring_unlock(&gp_rec.ring);
	c = gp_rec.ring.cur;
	CHECKF(c && c->nrec == 2 && c->lost == 8, "records %u, chunk lost %u", c ? c->nrec : 0,
	       c ? c->lost : 0);
	if (c && c->nrec == 2) {
		l = (const void *)c->buf;
		CHECKF(l->cause == GP_LOST_RING_FULL && l->count == 8, "cause %u count %llu", l->cause,
		       (unsigned long long)l->count);
		l = (const void *)(c->buf + l->h.size);
		CHECKF(l->cause == GP_LOST_NO_TIMESTAMP && l->count == 3, "cause %u count %llu",
		       l->cause, (unsigned long long)l->count);
	}
	CHECKF(gp_rec.ring.dropped == 8, "dropped %llu", (unsigned long long)gp_rec.ring.dropped);
	tap_end();
	gp_ring_destroy(&gp_rec.ring);
}

/* The program closes or dup2s over the trace descriptor mid-run. */
static void test_fd_taken(int dup_over)
{
	char tmpl[300], mine[400], why[1400] = "", buf[64];
	struct counts cnt;
	uint64_t seed = 7, start = 1000;
	int pfd, n, rc;

	snprintf(tmpl, sizeof(tmpl), "%s/fd%d", tmpdir, dup_over);
	snprintf(mine, sizeof(mine), "%s/program-file-%d", tmpdir, dup_over);
	tap_begin(dup_over ? "a program's dup2 over the trace descriptor"
			   : "a program closing the trace descriptor");
	rc = start_rec(tmpl, 0);
	CHECKF(rc == 0, "open: %d", rc);
	if (rc) {
		tap_end();
		return;
	}
	emit_kernels(20000, &seed, &start);
	gp_ring_lock(&gp_rec.ring);
	gp_ring_seal(&gp_rec.ring, 0);
	gp_ring_wait_drained(&gp_rec.ring, 5000);
	gp_ring_unlock(&gp_rec.ring);
	/* What a daemon does: its own file takes the descriptor's number. */
	close(gp_rec.file.fd);
	pfd = open(mine, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (dup_over) {
		dup2(pfd, gp_rec.file.fd);
		close(pfd);
		pfd = gp_rec.file.fd;
	}
	if (write(pfd, "program data", 12) != 12)
		CHECKF(0, "write: %s", strerror(errno));
	emit_kernels(20000, &seed, &start);
	stop_rec();
	n = (int)pread(pfd, buf, sizeof(buf), 0);
	close(pfd);
	CHECKF(n == 12 && !memcmp(buf, "program data", 12),
	       "the program's file holds %d bytes", n);
	snprintf(mine, sizeof(mine), "%s.gpuprof", tmpl);
	if (read_counts(mine, &cnt, why, sizeof(why)) < 0)
		CHECKF(0, "%s", why);
	CHECKF(cnt.kernels == 40000 && cnt.lost == 0 && cnt.bad_order == 0,
	       "kernels %llu lost %llu", (unsigned long long)cnt.kernels,
	       (unsigned long long)cnt.lost);
	tap_end();
}

static int is_regular(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Symlinks, FIFOs and directories where the trace goes, with and without force. */
static void test_hostile_paths(void)
{
	char tmpl[300], path[320], target[300], dangling[300];
	struct gp_tracefile t;
	int fd, rc;

	snprintf(tmpl, sizeof(tmpl), "%s/hostile", tmpdir);
	snprintf(path, sizeof(path), "%s.gpuprof", tmpl);
	snprintf(target, sizeof(target), "%s/target", tmpdir);
	snprintf(dangling, sizeof(dangling), "%s/nowhere", tmpdir);
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (write(fd, "keep me", 7) != 7)
		(void)0;
	close(fd);

	tap_begin("a symlink at the output is never written through");
	CHECKF(symlink(target, path) == 0, "symlink: %s", strerror(errno));
	CHECKF(gp_tracefile_open(&t, tmpl, 0, 0, 0) == -EEXIST, "no -EEXIST without force");
	rc = gp_tracefile_open(&t, tmpl, 1, 0, 0);
	CHECKF(rc == 0, "force: %d", rc);
	if (!rc)
		gp_tracefile_stop(&t, 5000);
	CHECKF(is_regular(path), "the link was not replaced by a file");
	CHECKF(helpers_file_is(target, "keep me"), "the link's target changed");
	unlink(path);

	CHECKF(symlink(dangling, path) == 0, "symlink: %s", strerror(errno));
	CHECKF(gp_tracefile_open(&t, tmpl, 0, 0, 0) == -EEXIST, "dangling: no -EEXIST");
	rc = gp_tracefile_open(&t, tmpl, 1, 0, 0);
	if (!rc)
		gp_tracefile_stop(&t, 5000);
	CHECKF(rc == 0 && is_regular(path) && access(dangling, F_OK) < 0,
	       "dangling link: rc %d, file elsewhere %d", rc, access(dangling, F_OK) == 0);
	unlink(path);
	tap_end();

	tap_begin("a FIFO at the output never blocks");
	mkfifo(path, 0644);
	CHECKF(gp_tracefile_open(&t, tmpl, 0, 0, 0) == -EEXIST, "no -EEXIST without force");
	rc = gp_tracefile_open(&t, tmpl, 1, 0, 0);
	if (!rc)
		gp_tracefile_stop(&t, 5000);
	CHECKF(rc == 0 && is_regular(path), "force: rc %d", rc);
	unlink(path);
	tap_end();

	tap_begin("a directory at the output is left alone");
	mkdir(path, 0755);
	CHECKF(gp_tracefile_open(&t, tmpl, 0, 0, 0) == -EEXIST, "no -EEXIST without force");
	rc = gp_tracefile_open(&t, tmpl, 1, 0, 0);
	CHECKF(rc == -EISDIR, "force: rc %d", rc);
	{
		struct stat st;

		CHECKF(lstat(path, &st) == 0 && S_ISDIR(st.st_mode), "the directory is gone");
	}
	rmdir(path);
	tap_end();
}

/* A relative output name means the directory the program started in. */
static void test_relative_after_chdir(void)
{
	char old[512], want[600];
	struct gp_tracefile t;
	int rc;

	if (!getcwd(old, sizeof(old)) || chdir(tmpdir) < 0) {
		TAP_CHECK("relative output after chdir", 0, "cannot chdir");
		return;
	}
	gp_config_note_start_dir();
	if (chdir("/") < 0)
		(void)0;
	rc = gp_tracefile_open(&t, "rel-out", 0, 0, 0);
	if (!rc)
		gp_tracefile_stop(&t, 5000);
	snprintf(want, sizeof(want), "%s/rel-out.gpuprof", tmpdir);
	TAP_CHECK("relative output stays where the program started",
		  rc == 0 && is_regular(want) && !strcmp(t.path, want), "rc %d path %.300s", rc,
		  t.path);
	if (chdir(old) < 0)
		(void)0;
}

/* A stuck writer costs the producer one wait, not one per record. */
static void test_ring_stall(void)
{
	struct gp_ring r;
	struct gp_chunk *c;
	int got = 0;

	gp_ring_init(&r, 1024, 2, 20);
	gp_ring_lock(&r);
	for (int i = 0; i < 3 * 1024 / 64; i++)
		got += gp_ring_reserve(&r, 64) != NULL;
	gp_ring_unlock(&r);
	tap_begin("a stalled writer: drops without waiting, until a chunk is back");
	CHECKF(got == 2 * 1024 / 64 && r.stalled, "kept %d stalled %d", got, r.stalled);
	c = gp_ring_pop(&r, 0);
	CHECKF(c != NULL, "no sealed chunk");
	if (c)
		gp_ring_release(&r, c);
	CHECKF(!r.stalled, "release did not end the stall");
	gp_ring_lock(&r);
	CHECKF(gp_ring_reserve(&r, 64) != NULL, "no room after the release");
	gp_ring_unlock(&r);
	tap_end();
	gp_ring_destroy(&r);
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
	test_expand_sanitised();
	test_intern_undo();
	test_ring_stall();
	test_disk_full();
	test_write_eio(0);
	test_write_eio(1);
	test_lost_retried();
	test_fd_taken(0);
	test_fd_taken(1);
	test_hostile_paths();
	test_relative_after_chdir();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return tap_exit();
}
