/*
 * Unit tests of trace input: long traces, whose chunks are decoded on
 * several threads, read in order and stop where the damage is; traces on
 * a pipe or standard input load like the same bytes in memory (copied into
 * a temporary file, or into memory where none can be made); a named
 * FIFO without a writer is given up after a bound, a device refused.  Test
 * code, runs offline only, needs no GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/load.h"
#include "model/model.h"
#include "read/reader.h"
#include "synth.h"
#include "tap.h"

/* Kernels of the long trace: enough compressed chunks for helper threads. */
#define LONG_KERNELS 300000
#define HELPERS_MIN_BYTES (512u << 10)

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

struct trace {
	unsigned char *buf;
	size_t len;
	uint64_t *chunk_off;       /* chunk k starts at chunk_off[k] */
	size_t nchunks;
};

/* A delta-coded trace of LONG_KERNELS kernels with random durations and gaps. */
static int make_long(struct trace *t)
{
	struct synth *s = synth_open(NULL);
	uint64_t ts = 1000000;
	uint32_t names[4];
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!s)
		return -1;
	s->delta = 1;
	s->hdr.features = GP_FEAT_DELTA;
	synth_process(s, 77, "host", "long", UINT32_MAX, 1);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 1);
	for (i = 0; i < 4; i++) {
		char nm[32];

		snprintf(nm, sizeof(nm), "_Z7kernel%zuv", i);
		names[i] = synth_string(s, nm);
	}
	for (i = 0; i < LONG_KERNELS; i++) {
		uint32_t r = rnd();

		synth_kernel(s, names[r & 3], ts, ts + 1000 + (r >> 12), 0, 7 + (r >> 2 & 3), 0, 0);
		ts += 500 + (rnd() & 0xfff);
	}
	synth_end(s, ts, 0);
	/* Flush first: chunk_off lists every chunk then. */
	synth_flush_chunk(s);
	t->nchunks = s->nchunks;
	t->chunk_off = malloc(t->nchunks * sizeof(*t->chunk_off));
	if (t->chunk_off)
		memcpy(t->chunk_off, s->chunk_off, t->nchunks * sizeof(*t->chunk_off));
	if (synth_close(s, &t->buf, &t->len) || !t->chunk_off) {
		free(t->buf);
		free(t->chunk_off);
		return -1;
	}
	return 0;
}

/* Records in order: kernel starts never go back. */
struct order {
	uint64_t n, kernels, last_start;
	uint64_t stop_at;          /* stop the read at this record (1-based), 0 never */
	int out_of_order;
};

static int check_order(void *ctx, const struct gp_rec *rec)
{
	struct order *o = ctx;

	o->n++;
	if (rec->type == GP_REC_KERNEL) {
		const struct gp_rec_kernel *k = (const void *)rec;

		if (k->start < o->last_start)
			o->out_of_order = 1;
		o->last_start = k->start;
		o->kernels++;
	}
	return o->stop_at && o->n == o->stop_at;
}

static uint64_t records_before(const struct trace *t, size_t k)
{
	struct ga_read_info info;
	struct order o = { 0 };
	char err[256];

	ga_reader_read_mem("t", t->buf, t->chunk_off[k], check_order, &o, &info, err,
			   sizeof(err));
	return o.n;
}

static void test_long(const struct trace *t)
{
	struct ga_read_info info;
	struct order o = { 0 };
	char err[256];
	int rc;

	tap_begin("a long trace reads whole and in order");
	CHECKF(t->len >= HELPERS_MIN_BYTES, "trace of %zu bytes: too short for helpers", t->len);
	rc = ga_reader_read_mem("long", t->buf, t->len, check_order, &o, &info, err, sizeof(err));
	CHECKF(rc == GA_READ_OK, "rc %d: %s", rc, err);
	CHECKF(o.kernels == LONG_KERNELS, "%llu kernels", (unsigned long long)o.kernels);
	CHECK(!o.out_of_order);
	CHECK(info.records == o.n && info.by_type[GP_REC_KERNEL] == LONG_KERNELS);
	CHECKF(info.chunks == t->nchunks, "%u chunks of %zu", info.chunks, t->nchunks);
	CHECK(info.finished && !info.damaged);
	CHECK(info.stop_offset == t->len && info.file_size == t->len && !info.bytes_unread);
	tap_end();
}

static void test_long_damage(struct trace *t)
{
	size_t ks[3], i;

	tap_begin("damage in a long trace stops at the damaged chunk");
	ks[0] = 1;
	ks[1] = t->nchunks / 2;
	ks[2] = t->nchunks - 1;
	for (i = 0; i < 3; i++) {
		size_t k = ks[i], pos = t->chunk_off[k] + sizeof(struct gp_chunk_header) + 5;
		uint64_t want = records_before(t, k);
		struct ga_read_info info;
		struct order o = { 0 };
		char err[256];
		int rc;

		t->buf[pos] ^= 0x10;
		rc = ga_reader_read_mem("flip", t->buf, t->len, check_order, &o, &info, err,
					sizeof(err));
		t->buf[pos] ^= 0x10;
		CHECKF(rc == GA_READ_OK, "chunk %zu: rc %d %s", k, rc, err);
		CHECKF(info.damaged && strstr(info.reason, "checksum mismatch"), "chunk %zu: %s",
		       k, info.reason);
		CHECKF(info.stop_offset == t->chunk_off[k], "chunk %zu: stop at %llu", k,
		       (unsigned long long)info.stop_offset);
		CHECKF(o.n == want, "chunk %zu: %llu records, want %llu", k,
		       (unsigned long long)o.n, (unsigned long long)want);
		CHECK(info.chunks == k && !o.out_of_order);
		CHECK(info.file_size == t->len && info.bytes_unread == t->len - t->chunk_off[k]);

		/* Cut inside the same chunk: the same stop, fewer bytes. */
		memset(&o, 0, sizeof(o));
		rc = ga_reader_read_mem("cut", t->buf, pos, check_order, &o, &info, err,
					sizeof(err));
		CHECKF(rc == GA_READ_OK && info.damaged && strstr(info.reason, "cut short"),
		       "cut in chunk %zu: %s", k, info.reason);
		CHECK(info.stop_offset == t->chunk_off[k] && o.n == want);
		CHECK(info.file_size == pos);
	}
	tap_end();
}

static void test_long_stop(const struct trace *t)
{
	static const uint64_t stops[] = { 1, 5000, LONG_KERNELS / 2, LONG_KERNELS };
	size_t i;

	tap_begin("a callback stops a long read where it asks");
	for (i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		struct ga_read_info info;
		struct order o = { 0 };
		char err[256];
		int rc;

		o.stop_at = stops[i];
		rc = ga_reader_read_mem("stop", t->buf, t->len, check_order, &o, &info, err,
					sizeof(err));
		CHECKF(rc == GA_READ_ECALLBACK, "stop at %llu: rc %d",
		       (unsigned long long)stops[i], rc);
		CHECKF(o.n == stops[i], "stop at %llu: %llu records",
		       (unsigned long long)stops[i], (unsigned long long)o.n);
		CHECKF(strstr(err, "stopped while processing chunk") != NULL, "%s", err);
	}
	tap_end();
}

struct feeder {
	int fd;
	const unsigned char *buf;
	size_t len;
};

/* Write the trace into the pipe, then close it: the reader sees its end. */
static void *feed(void *arg)
{
	struct feeder *fe = arg;
	size_t off = 0;

	while (off < fe->len) {
		ssize_t k = write(fe->fd, fe->buf + off, fe->len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	close(fe->fd);
	return NULL;
}

/*
 * in holds t's bytes: in memory, or (a pipe's, as loading makes it) in
 * the unlinked temporary file it was copied into, which the reader reads
 * under the input's name.
 */
static int holds(const struct ga_input *in, const struct trace *t)
{
	unsigned char *b;
	int ok;

	if (in->mem)
		return in->len == t->len && !memcmp(in->buf, t->buf, t->len);
	if (!in->fd1 || !(b = malloc(t->len + 1)))
		return 0;
	ok = pread(in->fd1 - 1, b, t->len + 1, 0) == (ssize_t)t->len && !memcmp(b, t->buf, t->len);
	free(b);
	return ok;
}

/* Load the trace from a pipe named path ("-": on standard input). */
static int load_pipe(struct ga_model *m, const struct trace *t, const char *path, int use_stdin)
{
	struct feeder fe;
	struct ga_input in;
	pthread_t th;
	char name[64];
	char *paths[1];
	int p[2], saved = -1, rc;

	if (pipe(p))
		return -1;
	if (use_stdin) {
		saved = dup(STDIN_FILENO);
		if (saved < 0 || dup2(p[0], STDIN_FILENO) < 0)
			return -1;
		close(p[0]);
		snprintf(name, sizeof(name), "%s", path);
	} else {
		snprintf(name, sizeof(name), "/proc/self/fd/%d", p[0]);
	}
	fe.fd = p[1];
	fe.buf = t->buf;
	fe.len = t->len;
	if (pthread_create(&th, NULL, feed, &fe))
		return -1;
	paths[0] = name;
	rc = ga_load_open(&in, paths, 1);
	pthread_join(th, NULL);
	if (use_stdin) {
		dup2(saved, STDIN_FILENO);
		close(saved);
	} else {
		close(p[0]);
	}
	if (rc)
		return -1;
	rc = holds(&in, t) && !in.mem ? 0 : -1;
	if (!rc)
		rc = ga_load_inputs(m, &in, 1);
	ga_load_close(&in, 1);
	return rc;
}

static void test_pipes(const struct trace *t)
{
	struct ga_model ref, pm, sm;

	tap_begin("a trace on a pipe or standard input loads like the file");
	CHECK(ga_model_init(&ref) == 0 && ga_model_init(&pm) == 0 && ga_model_init(&sm) == 0);
	CHECK(ga_model_add_mem(&ref, "mem", t->buf, t->len) == GA_READ_OK);
	CHECK(ga_model_finish(&ref) == 0);
	CHECK(load_pipe(&pm, t, NULL, 0) == 0);
	CHECK(load_pipe(&sm, t, "-", 1) == 0);
	CHECK(pm.nfiles == 1 && sm.nfiles == 1);
	CHECKF(sm.nfiles == 1 && !strcmp(sm.files[0].path, "(stdin)"), "stdin named %s",
	       sm.nfiles ? sm.files[0].path : "nothing");
	CHECK(pm.counts[GA_ACT_KERNEL] == LONG_KERNELS && sm.counts[GA_ACT_KERNEL] == LONG_KERNELS);
	CHECK(pm.kernel_total == ref.kernel_total && sm.kernel_total == ref.kernel_total);
	CHECK(pm.nkstats == ref.nkstats && sm.nkstats == ref.nkstats);
	CHECK(pm.ndevs == 1 && pm.devs[0].busy_ns == ref.devs[0].busy_ns);
	CHECK(pm.nfiles == 1 && pm.files[0].info.file_size == t->len && pm.files[0].info.finished);
	ga_model_free(&ref);
	ga_model_free(&pm);
	ga_model_free(&sm);
	tap_end();
}

/* A FIFO's writer: opens it after 200 ms (the reader is waiting), then feeds it. */
struct fifo_writer {
	const char *path;
	const struct trace *t;
};

static void *fifo_write(void *arg)
{
	struct fifo_writer *w = arg;
	struct feeder fe = { .buf = w->t->buf, .len = w->t->len };

	usleep(200 * 1000);
	fe.fd = open(w->path, O_WRONLY | O_CLOEXEC);
	if (fe.fd >= 0)
		feed(&fe);
	return NULL;
}

/* ga_load_open() of path with stderr in err (truncated to size); its result. */
static int open_capturing(struct ga_input *in, const char *path, char *err, size_t size)
{
	char tmpl[] = "/tmp/gpuprof-input-err-XXXXXX";
	char *paths[1] = { (char *)path };
	int fd = mkstemp(tmpl), saved = dup(STDERR_FILENO), rc;
	ssize_t k;

	err[0] = '\0';
	if (fd < 0 || saved < 0)
		return -2;
	unlink(tmpl);
	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	rc = ga_load_open(in, paths, 1);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	k = pread(fd, err, size - 1, 0);
	err[k > 0 ? k : 0] = '\0';
	close(fd);
	return rc;
}

/*
 * A named FIFO: without a writer, refused after the bound with a message
 * (before, opening it waited forever); with a writer that comes later,
 * read whole.  A device is refused.
 */
static void test_fifo(const struct trace *t)
{
	char dir[] = "/tmp/gpuprof-fifo-XXXXXX", path[64], err[512];
	struct fifo_writer w = { .path = path, .t = t };
	struct ga_input in;
	struct timespec a, b;
	pthread_t th;
	unsigned saved = ga_load_fifo_wait_ms;
	int rc;

	tap_begin("a FIFO without a writer is given up after a bound; a device is refused");
	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		tap_end();
		return;
	}
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(mkfifo(path, 0600) == 0);
	ga_load_fifo_wait_ms = 300;
	/* Before, the open waited forever: fail instead of hanging the suite. */
	alarm(60);
	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = open_capturing(&in, path, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECKF(rc == -1 && strstr(err, path) && strstr(err, "a FIFO that nothing wrote to"),
	       "rc %d: %s", rc, err);
	CHECKF(b.tv_sec - a.tv_sec < 10, "waited %ld s", (long)(b.tv_sec - a.tv_sec));
	ga_load_fifo_wait_ms = 10000;
	CHECK(pthread_create(&th, NULL, fifo_write, &w) == 0);
	rc = open_capturing(&in, path, err, sizeof(err));
	pthread_join(th, NULL);
	CHECKF(rc == 0 && holds(&in, t) && !in.mem, "rc %d: %s", rc, err);
	if (rc == 0)
		ga_load_close(&in, 1);
	/* No temporary file can be made: the pipe is read into memory instead. */
	{
		const char *td = getenv("TMPDIR");
		char *keep = td ? strdup(td) : NULL;

		setenv("TMPDIR", "/nonexistent/gpuprof-test", 1);
		CHECK(pthread_create(&th, NULL, fifo_write, &w) == 0);
		rc = open_capturing(&in, path, err, sizeof(err));
		pthread_join(th, NULL);
		CHECKF(rc == 0 && in.mem && holds(&in, t), "no temporary file: rc %d: %s", rc, err);
		if (rc == 0)
			ga_load_close(&in, 1);
		if (keep)
			setenv("TMPDIR", keep, 1);
		else
			unsetenv("TMPDIR");
		free(keep);
	}
	rc = open_capturing(&in, "/dev/null", err, sizeof(err));
	CHECKF(rc == -1 && strstr(err, "/dev/null: a device, not a trace"), "rc %d: %s", rc, err);
	if (rc == 0)
		ga_load_close(&in, 1);
	alarm(0);
	ga_load_fifo_wait_ms = saved;
	unlink(path);
	rmdir(dir);
	tap_end();
}

int main(void)
{
	struct trace t;

	if (make_long(&t)) {
		TAP_CHECK("a long trace can be written", 0, "synth failed");
		return tap_exit();
	}
	test_long(&t);
	test_long_damage(&t);
	test_long_stop(&t);
	test_pipes(&t);
	test_fifo(&t);
	free(t.buf);
	free(t.chunk_off);
	return tap_exit();
}
