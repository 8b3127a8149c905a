/*
 * Unit tests of the trace reader: format round trip, salvage of files cut
 * at every byte, bit flips, foreign and newer files, skipped records.
 * Test code, runs offline only, needs no GPU.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/reader.h"
#include "gpuprof/delta.h"
#include "synth.h"
#include "tap.h"
#include "base/util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Callback that appends every record's bytes to a buffer. */
static int collect(void *ctx, const struct gp_rec *rec)
{
	return ga_buf_put(ctx, rec, rec->size);
}

static int count(void *ctx, const struct gp_rec *rec)
{
	(void)rec;
	++*(uint64_t *)ctx;
	return 0;
}

static void test_crc(void)
{
	unsigned char buf[1024 + 8];
	size_t i, off, len;

	tap_begin("crc32c: the hardware and portable forms agree");
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)rnd();
#if defined(__x86_64__)
	if (gp_crc32c_have_hw())
		for (off = 0; off < 8; off++)
			for (len = 0; len < 1024; len += 1 + len / 3)
				CHECKF(gp_crc32c_hw(0, buf + off, len) ==
				       gp_crc32c_sw(0, buf + off, len), "off %zu len %zu", off, len);
#endif
	/* Chaining over two pieces equals one pass. */
	CHECK(gp_crc32c(gp_crc32c(0, buf, 100), buf + 100, 300) == gp_crc32c(0, buf, 400));
	CHECK(gp_crc32c_sw(gp_crc32c_sw(0, buf, 100), buf + 100, 300) == gp_crc32c_sw(0, buf, 400));
	/* The check value of CRC-32C. */
	CHECK(gp_crc32c(0, "123456789", 9) == 0xe3069283u);
	CHECK(gp_crc32c_sw(0, "123456789", 9) == 0xe3069283u);
	tap_end();
}

/*
 * Records of every type with varied contents.  ref receives the bytes the
 * reader must hand back (PAD and unknown types excluded).
 */
static void write_every_type(struct synth *s, struct ga_buf *ref, int n)
{
	int i, t;

	for (i = 0; i < n; i++) {
		for (t = 0; t < GP_REC_TYPE_COUNT + 1; t++) {
			unsigned char rec[256];
			struct gp_rec *h = (struct gp_rec *)(void *)rec;
			size_t size, k;

			memset(rec, 0, sizeof(rec));
			switch (t) {
			case GP_REC_STRING: {
				struct gp_rec_string *st = (void *)rec;
				size_t len = (size_t)(i * 7 + 3) % 40;

				st->id = (uint32_t)(1 + i);
				st->len = (uint32_t)len;
				for (k = 0; k < len; k++)
					rec[sizeof(*st) + k] = (unsigned char)('a' + (k + (size_t)i) % 26);
				size = gp_rec_align((uint32_t)(sizeof(*st) + len));
				break;
			}
			case GP_REC_PROCESS: size = sizeof(struct gp_rec_process); break;
			case GP_REC_CLOCK_SYNC: size = sizeof(struct gp_rec_clock_sync); break;
			case GP_REC_DEVICE: size = sizeof(struct gp_rec_device); break;
			case GP_REC_CONTEXT: size = sizeof(struct gp_rec_context); break;
			case GP_REC_STREAM: size = sizeof(struct gp_rec_stream); break;
			case GP_REC_THREAD: size = sizeof(struct gp_rec_thread); break;
			case GP_REC_KERNEL: size = sizeof(struct gp_rec_kernel); break;
			case GP_REC_MEMCPY: size = sizeof(struct gp_rec_memcpy); break;
			case GP_REC_MEMSET: size = sizeof(struct gp_rec_memset); break;
			case GP_REC_GRAPH: size = sizeof(struct gp_rec_graph); break;
			case GP_REC_API: size = sizeof(struct gp_rec_api); break;
			case GP_REC_NVTX_RANGE: size = sizeof(struct gp_rec_nvtx); break;
			case GP_REC_NVTX_MARK: size = sizeof(struct gp_rec_nvtx); break;
			case GP_REC_NVTX_OPEN:
				size = sizeof(struct gp_rec_nvtx);
				break;
			case GP_REC_STACK:
				size = sizeof(struct gp_rec_stack) + 8 * (size_t)(i % 5);
				break;
			case GP_REC_FRAME: size = sizeof(struct gp_rec_frame); break;
			case GP_REC_CORR_STACK: size = sizeof(struct gp_rec_corr_stack); break;
			case GP_REC_GRAPH_NODE: size = sizeof(struct gp_rec_graph_node); break;
			case GP_REC_CAPTURE_RANGE: size = sizeof(struct gp_rec_capture_range); break;
			case GP_REC_LOST: size = sizeof(struct gp_rec_lost); break;
			case GP_REC_OVERHEAD: size = sizeof(struct gp_rec_overhead); break;
			case GP_REC_CONFIG: size = sizeof(struct gp_rec_config); break;
			case GP_REC_END: size = sizeof(struct gp_rec_end); break;
			case GP_REC_METRICS:
				size = sizeof(struct gp_rec_metrics) +
				       sizeof(struct gp_metric_value) * (size_t)(i % 4);
				break;
			case GP_REC_DEVICE_PEAKS: size = sizeof(struct gp_rec_device_peaks); break;
			case GP_REC_METRICS_INFO: size = sizeof(struct gp_rec_metrics_info); break;
			case GP_REC_FLIGHT: size = sizeof(struct gp_rec_flight); break;
			case GP_REC_MEMORY: size = sizeof(struct gp_rec_memory); break;
			case GP_REC_PYFRAME: size = sizeof(struct gp_rec_pyframe); break;
			case GP_REC_MODULE:
				size = sizeof(struct gp_rec_module) + 8 * (size_t)(i % 3);
				break;
			case GP_REC_GPU_SERIES:
				size = sizeof(struct gp_rec_gpu_series) + 8 * (size_t)(i % 3);
				break;
			case GP_REC_GPU_SAMPLE:
				size = sizeof(struct gp_rec_gpu_sample) + 8 * (size_t)(i % 3);
				break;
			case GP_REC_PAD: size = 8 * (size_t)(1 + i % 3); break;
			default: size = 24; break;  /* a type from the future */
			}
			if (t != GP_REC_STRING && t != GP_REC_PAD)
				for (k = sizeof(*h); k < size; k++)
					rec[k] = (unsigned char)rnd();
			h->type = (uint16_t)(t == GP_REC_TYPE_COUNT ? 999 : t);
			h->size = (uint16_t)size;
			h->aux = t == GP_REC_STACK ? (uint32_t)(i % 5)
				 : t == GP_REC_METRICS ? (uint32_t)(i % 4)
				 : t == GP_REC_MODULE ? (uint32_t)(8 * (i % 3) - i % 2 * (i % 3 != 0))
				 : t == GP_REC_GPU_SERIES ? (uint32_t)(2 * (i % 3)) /* 4-byte names */
				 : t == GP_REC_GPU_SAMPLE ? (uint32_t)(i % 3)       /* 8-byte values */
				 : (uint32_t)i;
			synth_rec(s, rec, size);
			if (t != GP_REC_PAD && t != GP_REC_TYPE_COUNT)
				ga_buf_put(ref, rec, size);
		}
	}
}

static void test_round_trip(int delta)
{
	struct ga_buf ref = { 0 }, got = { 0 };
	struct ga_read_info info;
	char err[256], path[] = "/tmp/gpuprof-test-XXXXXX";
	unsigned char *buf = NULL;
	size_t len = 0;
	struct synth *s;
	int rc, fd, i;

	tap_begin(delta ? "round trip of every record type, delta-coded chunks" :
		  "round trip of every record type");
	s = synth_open(NULL);
	CHECK(s != NULL);
	if (!s) {
		tap_end();
		return;
	}
	s->chunk_limit = 2000;     /* many chunks */
	s->delta = delta;
	write_every_type(s, &ref, 50);
	CHECK(synth_close(s, &buf, &len) == 0);
	rc = ga_reader_read_mem("mem", buf, len, collect, &got, &info, err, sizeof(err));
	CHECKF(rc == GA_READ_OK, "rc %d: %s", rc, err);
	CHECK(!info.damaged);
	CHECK(info.finished);
	CHECK(info.chunks > 10);
	CHECK(info.unknown == 50);
	CHECK(info.malformed == 0);
	CHECK(info.records == 50u * (GP_REC_TYPE_COUNT - 1));
	for (i = 1; i < GP_REC_TYPE_COUNT; i++)
		CHECKF(info.by_type[i] == 50, "type %d: %llu", i,
		       (unsigned long long)info.by_type[i]);
	CHECKF(got.len == ref.len, "got %zu bytes, wrote %zu", got.len, ref.len);
	CHECK(got.len == ref.len && memcmp(got.p, ref.p, ref.len) == 0);
	CHECK(info.file_size == len && info.stop_offset == len && info.bytes_unread == 0);

	/* The same bytes through a file read the same. */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, buf, len) == (ssize_t)len);
		close(fd);
		got.len = 0;
		rc = ga_reader_read_file(path, collect, &got, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK, "rc %d: %s", rc, err);
		CHECK(got.len == ref.len && memcmp(got.p, ref.p, ref.len) == 0);
		CHECK(info.finished && !info.damaged && info.file_size == len);
		unlink(path);
	}
	free(buf);
	ga_buf_free(&ref);
	ga_buf_free(&got);
	tap_end();
}

/*
 * A trace of every record type, 600 rounds in 16 KiB chunks, delta
 * coded: into *buf (*len bytes) and a new file (path: a mkstemp(3)
 * template), its records into ref.  -1 when no trace could be begun.
 */
static int long_trace(struct ga_buf *ref, unsigned char **buf, size_t *len, char *path)
{
	struct synth *s = synth_open(NULL);
	int fd;

	CHECK(s != NULL);
	if (!s)
		return -1;
	s->chunk_limit = 16384;
	s->delta = 1;
	write_every_type(s, ref, 600);
	CHECK(synth_close(s, buf, len) == 0);
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, *buf, *len) == (ssize_t)*len);
	if (fd >= 0)
		close(fd);
	return 0;
}

/*
 * A trace long enough for helper threads (over 512 KiB), read with every
 * -j: 1 (the caller alone), 2, 7 and the most; from memory and from a
 * file.  The records arrive whole and in file order each time.
 */
static void test_jobs(void)
{
	static const unsigned jobs[] = { 1, 2, 7, GA_READER_JOBS_MAX, 0 };
	struct ga_buf ref = { 0 }, got = { 0 };
	struct ga_read_info info;
	char err[256], path[] = "/tmp/gpuprof-test-XXXXXX";
	unsigned char *buf = NULL;
	size_t len = 0, j;
	int rc;

	tap_begin("decoding threads (-j): every record, in file order, with 1 to 64 threads");
	if (long_trace(&ref, &buf, &len, path)) {
		tap_end();
		return;
	}
	CHECKF(len > (600u << 10), "%zu bytes", len);
	CHECK(ga_reader_cpus() >= 1 && ga_reader_cpus() <= GA_READER_JOBS_MAX);
	for (j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
		ga_reader_jobs = jobs[j];
		got.len = 0;
		rc = ga_reader_read_mem("mem", buf, len, collect, &got, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && info.finished && info.chunks > 40, "-j %u: rc %d",
		       jobs[j], rc);
		CHECKF(got.len == ref.len && memcmp(got.p, ref.p, ref.len) == 0,
		       "-j %u: records differ", jobs[j]);
		got.len = 0;
		rc = ga_reader_read_file(path, collect, &got, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && got.len == ref.len && memcmp(got.p, ref.p, ref.len) == 0,
		       "-j %u, file: rc %d", jobs[j], rc);
	}
	ga_reader_jobs = 0;
	unlink(path);
	free(buf);
	ga_buf_free(&ref);
	ga_buf_free(&got);
	tap_end();
}

/* Both cursors of ga_reader_read_ahead: what each saw, and how far ahead the first was. */
struct two {
	struct ga_buf ahead, behind;
	uint64_t nahead, nbehind;
	uint64_t ahead_at_first;   /* records the look-ahead had when the callback got its first */
	int stop_behind_at;        /* stop the callback at this record (1-based), 0 never */
};

static int on_ahead(void *ctx, const struct gp_rec *rec)
{
	struct two *t = ctx;

	t->nahead++;
	return ga_buf_put(&t->ahead, rec, rec->size);
}

static int on_behind(void *ctx, const struct gp_rec *rec)
{
	struct two *t = ctx;

	if (!t->nbehind++)
		t->ahead_at_first = t->nahead;
	if (t->stop_behind_at && t->nbehind == (uint64_t)t->stop_behind_at)
		return 1;
	return ga_buf_put(&t->behind, rec, rec->size);
}

/*
 * One read, two cursors: the look-ahead and the callback see every record
 * in file order, the look-ahead lag chunks first, with -j 1 and several
 * threads, from memory and a file; a cut file gives both the same prefix
 * and counts it once; a callback's stop ends the read.
 */
static void test_ahead(void)
{
	struct ga_buf ref = { 0 };
	struct ga_read_info info, plain;
	char err[256], path[] = "/tmp/gpuprof-test-XXXXXX";
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc;

	tap_begin("read ahead: two cursors over one decoding, lag chunks apart");
	if (long_trace(&ref, &buf, &len, path)) {
		tap_end();
		return;
	}
	for (unsigned j = 1; j <= 4; j += 3) {
		for (int file = 0; file < 2; file++) {
			uint64_t prev = 0;

			/* 0, 3, ..., 15: beyond GA_READER_LAG_MAX it is that. */
			for (unsigned lag = 0; lag <= GA_READER_LAG_MAX; lag += 3) {
				struct two t;

				memset(&t, 0, sizeof(t));
				ga_reader_jobs = j;
				rc = ga_reader_read_ahead(file ? path : "mem", file ? NULL : buf, len,
							  on_ahead, &t, ~0ull, lag, on_behind, &t, &info,
							  err, sizeof(err));
				CHECKF(rc == GA_READ_OK && info.finished && !info.damaged,
				       "-j %u lag %u: rc %d %s", j, lag, rc, err);
				CHECKF(t.ahead.len == ref.len && !memcmp(t.ahead.p, ref.p, ref.len) &&
				       t.behind.len == ref.len && !memcmp(t.behind.p, ref.p, ref.len),
				       "-j %u lag %u: records differ", j, lag);
				CHECKF(info.records == t.nbehind, "-j %u lag %u: %llu counted", j, lag,
				       (unsigned long long)info.records);
				/* The chunk itself and lag more: the further, the more. */
				CHECKF(t.ahead_at_first > prev && t.ahead_at_first < t.nahead,
				       "-j %u lag %u: %llu ahead at the first (%llu at lag - 3)", j,
				       lag, (unsigned long long)t.ahead_at_first,
				       (unsigned long long)prev);
				prev = t.ahead_at_first;
				ga_buf_free(&t.ahead);
				ga_buf_free(&t.behind);
			}
		}
	}
	ga_reader_jobs = 0;
	/* Cut in the middle of a chunk: both cursors get the whole chunks before it. */
	{
		struct two t;
		size_t cut = len * 2 / 3;

		memset(&t, 0, sizeof(t));
		rc = ga_reader_read_mem("cut", buf, cut, NULL, NULL, &plain, err, sizeof(err));
		rc |= ga_reader_read_ahead("cut", buf, cut, on_ahead, &t, ~0ull, 4, on_behind, &t, &info,
					   err, sizeof(err));
		CHECKF(rc == GA_READ_OK && info.damaged && plain.damaged &&
		       info.stop_offset == plain.stop_offset && info.records == plain.records &&
		       info.chunks == plain.chunks && t.nahead == t.nbehind &&
		       t.nbehind == plain.records, "cut: %llu/%llu records, %llu ahead",
		       (unsigned long long)info.records, (unsigned long long)plain.records,
		       (unsigned long long)t.nahead);
		ga_buf_free(&t.ahead);
		ga_buf_free(&t.behind);
		/* The callback stops: the read ends there. */
		memset(&t, 0, sizeof(t));
		t.stop_behind_at = 100;
		rc = ga_reader_read_ahead(path, NULL, 0, on_ahead, &t, ~0ull, 4, on_behind, &t, &info,
					  err, sizeof(err));
		CHECKF(rc == GA_READ_ECALLBACK && t.nbehind == 100 && strstr(err, "stopped while"),
		       "stop: rc %d, %llu", rc, (unsigned long long)t.nbehind);
		ga_buf_free(&t.ahead);
		ga_buf_free(&t.behind);
	}
	/* A look-ahead of one type: handed those records only, the callback every one. */
	{
		struct two t;
		uint64_t want = 0, off = 0;

		for (; off + sizeof(struct gp_rec) <= ref.len;) {
			const struct gp_rec *r = (const void *)(ref.p + off);

			want += r->type == GP_REC_KERNEL;
			off += r->size;
		}
		memset(&t, 0, sizeof(t));
		rc = ga_reader_read_ahead(path, NULL, 0, on_ahead, &t, 1ull << GP_REC_KERNEL, 4,
					  on_behind, &t, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && want > 0 && t.nahead == want &&
			       t.behind.len == ref.len && !memcmp(t.behind.p, ref.p, ref.len) &&
			       info.records == t.nbehind,
		       "kernels only ahead: rc %d, %llu of %llu kernels, %llu records",
		       rc, (unsigned long long)t.nahead, (unsigned long long)want,
		       (unsigned long long)t.nbehind);
		ga_buf_free(&t.ahead);
		ga_buf_free(&t.behind);
	}
	unlink(path);
	free(buf);
	ga_buf_free(&ref);
	tap_end();
}

/* A small file of nchunks chunks with known record counts per chunk. */
struct small {
	unsigned char *buf;
	size_t len;
	uint64_t off[16];          /* chunk offsets; off[n] = file end */
	uint64_t recs[16];         /* records in chunk i */
	size_t n;
};

static void make_small(struct small *sm)
{
	struct synth *s = synth_open(NULL);
	uint32_t name;
	size_t c, i;

	memset(sm, 0, sizeof(*sm));
	if (!s)
		return;
	for (c = 0; c < 5; c++) {
		uint64_t before = s->records;

		if (c == 0) {
			synth_process(s, 77, "host", "./app", UINT32_MAX, 1000);
			synth_device(s, 0, "Test GPU", 9, 0, 132, 80ull << 30, 0x10);
		}
		name = synth_string(s, "_Z6kernelv");
		for (i = 0; i < 3 + c; i++)
			synth_kernel(s, name, 1000 * (c * 10 + i), 1000 * (c * 10 + i) + 500, 0, 7, 0, 0);
		if (c == 4)
			synth_end(s, 99999, 0);
		sm->recs[c] = s->records - before;
		synth_flush_chunk(s);
	}
	sm->n = s->nchunks;
	for (c = 0; c < sm->n; c++)
		sm->off[c] = s->chunk_off[c];
	synth_close(s, &sm->buf, &sm->len);
	sm->off[sm->n] = sm->len;
}

static void test_salvage(void)
{
	struct small sm;
	struct ga_read_info info;
	char err[256];
	size_t cut, k;

	tap_begin("salvage of a file cut at every byte");
	make_small(&sm);
	CHECK(sm.buf && sm.n == 5);
	for (cut = 0; sm.buf && cut <= sm.len; cut++) {
		uint64_t n = 0, want = 0;
		int rc = ga_reader_read_mem("cut", sm.buf, cut, count, &n, &info, err, sizeof(err));

		if (cut < sizeof(struct gp_file_header)) {
			CHECKF(rc == GA_READ_EFORMAT, "cut %zu: rc %d", cut, rc);
			CHECKF(strstr(err, "cut: byte 0: file too short for a gpuprof header") != NULL,
			       "cut %zu: %s", cut, err);
			continue;
		}
		CHECKF(rc == GA_READ_OK, "cut %zu: rc %d %s", cut, rc, err);
		for (k = 0; k < sm.n && sm.off[k + 1] <= cut; k++)
			want += sm.recs[k];
		CHECKF(n == want, "cut %zu: %llu records, want %llu", cut,
		       (unsigned long long)n, (unsigned long long)want);
		CHECKF(info.chunks == k, "cut %zu: %u chunks, want %zu", cut, info.chunks, k);
		CHECK(info.file_size == cut);
		if (cut == (k ? sm.off[k] : sizeof(struct gp_file_header)) || cut == sm.off[k]) {
			CHECKF(!info.damaged, "cut %zu at a boundary: %s", cut, info.reason);
			CHECK(info.stop_offset == cut && info.bytes_unread == 0);
		} else {
			CHECKF(info.damaged, "cut %zu inside chunk %zu not reported", cut, k);
			CHECKF(info.stop_offset == sm.off[k], "cut %zu: stop %llu, want %llu", cut,
			       (unsigned long long)info.stop_offset, (unsigned long long)sm.off[k]);
			CHECK(info.bytes_unread == cut - sm.off[k]);
		}
		CHECK(info.finished == (cut == sm.len));
	}
	free(sm.buf);
	tap_end();
}

static void test_bit_flips(void)
{
	struct small sm;
	struct ga_read_info info;
	char err[256];
	size_t pos, k;

	tap_begin("bit flips in chunks stop at the damaged chunk");
	make_small(&sm);
	CHECK(sm.buf != NULL);
	for (pos = sizeof(struct gp_file_header); sm.buf && pos < sm.len; pos++) {
		uint64_t n = 0, want = 0;
		int rc, bit = (int)(pos % 8);

		for (k = 0; sm.off[k + 1] <= pos; k++)
			want += sm.recs[k];
		sm.buf[pos] ^= (unsigned char)(1u << bit);
		rc = ga_reader_read_mem("flip", sm.buf, sm.len, count, &n, &info, err, sizeof(err));
		sm.buf[pos] ^= (unsigned char)(1u << bit);
		CHECKF(rc == GA_READ_OK, "pos %zu: rc %d", pos, rc);
		CHECKF(info.damaged, "flip at %zu undetected", pos);
		CHECKF(info.stop_offset == sm.off[k], "flip at %zu: stop %llu, chunk at %llu",
		       pos, (unsigned long long)info.stop_offset, (unsigned long long)sm.off[k]);
		CHECKF(n == want, "flip at %zu: %llu records, want %llu", pos,
		       (unsigned long long)n, (unsigned long long)want);
		CHECK(info.bytes_unread == sm.len - sm.off[k]);
		/* Payload flips (past the checksum's own field) are checksum errors. */
		if (pos >= sm.off[k] + sizeof(struct gp_chunk_header))
			CHECKF(strstr(info.reason, "checksum mismatch") != NULL, "pos %zu: %s",
			       pos, info.reason);
	}
	if (sm.buf) {
		char line[512];

		sm.buf[sm.off[2] + sizeof(struct gp_chunk_header) + 3] ^= 0x40;
		ga_reader_read_mem("t.gpuprof", sm.buf, sm.len, NULL, NULL, &info, err, sizeof(err));
		ga_reader_describe(&info, line, sizeof(line));
		snprintf(err, sizeof(err), "trace truncated at byte %llu of %zu (chunk 2: "
			 "checksum mismatch); %llu bytes not read", (unsigned long long)sm.off[2],
			 sm.len, (unsigned long long)(sm.len - sm.off[2]));
		CHECKF(strncmp(line, err, strlen(err)) == 0, "'%s'", line);
	}
	free(sm.buf);
	tap_end();
}

static int read_err(const void *buf, size_t len, char *err, size_t n)
{
	struct ga_read_info info;

	return ga_reader_read_mem("f", buf, len, NULL, NULL, &info, err, n);
}

static void test_foreign(void)
{
	struct gp_file_header h;
	unsigned char junk[4096];
	char err[256];
	unsigned char *elf;
	size_t len = 0, i;
	int rc;
	struct ga_read_info info;

	tap_begin("foreign files get clear errors");
	rc = read_err(NULL, 0, err, sizeof(err));
	CHECK(rc == GA_READ_EFORMAT);
	CHECKF(!strcmp(err, "f: byte 0: file too short for a gpuprof header (0 bytes)"), "%s", err);

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rnd();
	rc = read_err(junk, sizeof(junk), err, sizeof(err));
	CHECK(rc == GA_READ_EFORMAT);
	CHECKF(!strcmp(err, "f: byte 0: not a gpuprof trace"), "%s", err);

	elf = synth_slurp("/proc/self/exe", &len);
	if (!elf)
		elf = synth_slurp("/bin/sh", &len);
	CHECK(elf != NULL);
	if (elf) {
		rc = read_err(elf, len, err, sizeof(err));
		CHECK(rc == GA_READ_EFORMAT && strstr(err, "not a gpuprof trace"));
		free(elf);
	}
	rc = read_err("GPUPROF\0\1", 9, err, sizeof(err));
	CHECKF(!strcmp(err, "f: byte 0: file too short for a gpuprof header (9 bytes)"), "%s", err);

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GP_FILE_MAGIC, 8);
	h.version = GP_FORMAT_VERSION + 2;
	h.min_reader = GP_FORMAT_VERSION + 1;
	h.header_size = sizeof(h);
	h.endian = GP_ENDIAN_MARKER;
	rc = read_err(&h, sizeof(h), err, sizeof(err));
	CHECK(rc == GA_READ_EFORMAT);
	{
		char want[160];

		snprintf(want, sizeof(want), "f: byte 10: written by a newer gpuprof: format version %d "
			 "needs a reader of version %d or later; this reader is version %d",
			 GP_FORMAT_VERSION + 2, GP_FORMAT_VERSION + 1, GP_FORMAT_VERSION);
		CHECKF(!strcmp(err, want), "%s", err);
	}

	/* The header's checksum, when the writer set one. */
	h.version = 1;
	h.min_reader = 1;
	h.features = GP_FEAT_HEADER_CRC;
	h.header_crc = gp_header_checksum(&h);
	rc = ga_reader_read_mem("f", &h, sizeof(h), NULL, NULL, &info, err, sizeof(err));
	CHECKF(rc == GA_READ_OK, "a right header checksum refused: %s", err);
	h.created_ns ^= 1; /* one flipped bit */
	rc = read_err(&h, sizeof(h), err, sizeof(err));
	CHECKF(rc == GA_READ_EFORMAT && strstr(err, "f: byte 36: file header checksum mismatch") == err,
	       "%s", err);
	h.features = 0;
	h.header_crc = 0;
	h.created_ns = 0;
	h.version = 3;
	h.min_reader = 2;

	/* A newer writer that old readers may still read: accepted. */
	h.min_reader = 1;
	rc = ga_reader_read_mem("f", &h, sizeof(h), NULL, NULL, &info, err, sizeof(err));
	CHECKF(rc == GA_READ_OK, "%s", err);
	CHECK(!info.damaged && !info.finished && info.chunks == 0);

	h.version = 1;
	h.endian = 0x0201;
	rc = read_err(&h, sizeof(h), err, sizeof(err));
	CHECK(rc == GA_READ_EFORMAT && strstr(err, "big-endian"));
	h.endian = GP_ENDIAN_MARKER;
	h.header_size = 32;
	rc = read_err(&h, sizeof(h), err, sizeof(err));
	CHECK(rc == GA_READ_EFORMAT && strstr(err, "bad header size"));

	rc = ga_reader_read_file("/nonexistent/x.gpuprof", NULL, NULL, &info, err, sizeof(err));
	CHECK(rc == GA_READ_EOPEN);
	CHECKF(strstr(err, "/nonexistent/x.gpuprof: byte 0: cannot open") == err, "%s", err);
	rc = ga_reader_read_file("/tmp", NULL, NULL, &info, err, sizeof(err));
	CHECK(rc == GA_READ_EOPEN);
	tap_end();
}

static void test_header_and_chunk_rules(void)
{
	struct ga_read_info info;
	char err[256];
	unsigned char *buf;
	size_t len;
	struct synth *s;
	uint64_t n;
	uint32_t name;
	int rc;

	tap_begin("longer headers, sequence gaps, delta chunks");
	/* A longer header from a newer writer is skipped. */
	s = synth_open(NULL);
	s->hdr.header_size = 96;
	name = synth_string(s, "k");
	synth_kernel(s, name, 1, 2, 0, 0, 0, 0);
	synth_end(s, 3, 0);
	synth_close(s, &buf, &len);
	n = 0;
	rc = ga_reader_read_mem("f", buf, len, count, &n, &info, err, sizeof(err));
	CHECKF(rc == GA_READ_OK && n == 3 && info.finished && !info.damaged, "rc %d n %llu %s",
	       rc, (unsigned long long)n, err);
	free(buf);

	/* A missing chunk (sequence gap) stops the read there. */
	s = synth_open(NULL);
	name = synth_string(s, "k");
	synth_flush_chunk(s);
	s->seq = 2;
	synth_kernel(s, name, 1, 2, 0, 0, 0, 0);
	synth_flush_chunk(s);
	{
		uint64_t off1 = s->chunk_off[1];

		synth_close(s, &buf, &len);
		n = 0;
		rc = ga_reader_read_mem("f", buf, len, count, &n, &info, err, sizeof(err));
		CHECK(rc == GA_READ_OK && n == 1 && info.damaged && info.stop_offset == off1);
		CHECKF(strstr(info.reason, "sequence") != NULL, "%s", info.reason);
		free(buf);
	}

	/*
	 * Delta coding round-trips any record stream, leaves other types and
	 * short records alone, and turns sorted timestamps into small numbers.
	 * (Delta-coded chunks through the reader: test_recorder's writer test.)
	 */
	{
		struct gp_rec_kernel ks[4];
		struct gp_rec_string str = { { GP_REC_STRING, sizeof(str), 0 }, 9, 0 };
		unsigned char dbuf[sizeof(ks) + sizeof(str)], orig[sizeof(dbuf)];

		memset(ks, 0, sizeof(ks));
		for (int i = 0; i < 4; i++) {
			ks[i].h.type = GP_REC_KERNEL;
			ks[i].h.size = sizeof(ks[i]);
			ks[i].start = 1700000000000000000ull + (uint64_t)i * 1000 - (i == 3 ? 5000 : 0);
			ks[i].end = ks[i].start + 700;
			ks[i].correlation = 40 + (uint32_t)i;
		}
		memcpy(dbuf, &ks[0], 2 * sizeof(ks[0]));
		memcpy(dbuf + 2 * sizeof(ks[0]), &str, sizeof(str));
		memcpy(dbuf + 2 * sizeof(ks[0]) + sizeof(str), &ks[2], 2 * sizeof(ks[0]));
		memcpy(orig, dbuf, sizeof(dbuf));
		gp_delta_apply(dbuf, sizeof(dbuf), 0);
		{
			struct gp_rec_kernel k1;

			memcpy(&k1, dbuf + sizeof(ks[0]), sizeof(k1));
			CHECKF(k1.start == 1000 && k1.end == 700 && k1.correlation == 1,
			       "encoded start %llu end %llu corr %u", (unsigned long long)k1.start,
			       (unsigned long long)k1.end, k1.correlation);
		}
		CHECK(!memcmp(dbuf + 2 * sizeof(ks[0]), &str, sizeof(str)));
		gp_delta_apply(dbuf, sizeof(dbuf), 1);
		CHECK(!memcmp(dbuf, orig, sizeof(dbuf)));
	}
	(void)name;
	tap_end();
}

static void test_skipped_records(void)
{
	struct ga_read_info info;
	char err[256];
	unsigned char *buf, rec[128];
	struct gp_rec *h = (struct gp_rec *)(void *)rec;
	struct gp_rec_string *st = (struct gp_rec_string *)(void *)rec;
	size_t len;
	struct synth *s;
	uint64_t n = 0;
	int rc;

	tap_begin("unknown and malformed records are skipped");
	s = synth_open(NULL);
	memset(rec, 0, sizeof(rec));
	h->type = 300;
	h->size = 40;
	synth_rec(s, rec, 40);      /* unknown type: skipped, counted */
	h->type = GP_REC_KERNEL;
	h->size = 32;
	synth_rec(s, rec, 32);      /* too short for a kernel */
	memset(rec, 0, sizeof(rec));
	st->h.type = GP_REC_STRING;
	st->h.size = 24;
	st->id = 1;
	st->len = 100;              /* longer than its record */
	synth_rec(s, rec, 24);
	st->id = 0;                 /* id 0 is reserved */
	st->len = 0;
	synth_rec(s, rec, 24);
	memset(rec, 0, sizeof(rec));
	h->type = GP_REC_MODULE;
	h->size = 32;
	h->aux = 9;                 /* a build-id longer than its record */
	synth_rec(s, rec, 32);
	h->size = 96;
	h->aux = 65;                /* longer than any build-id recorded */
	synth_rec(s, rec, 96);
	memset(rec, 0, sizeof(rec));
	h->type = GP_REC_MEMCPY;
	h->size = 40; /* too short for a copy */
	synth_rec(s, rec, 40);
	h->type = GP_REC_GPU_SAMPLE;
	h->size = (uint32_t)sizeof(struct gp_rec_gpu_sample) + 8;
	h->aux = 2; /* two values in the room of one */
	synth_rec(s, rec, h->size);
	synth_string(s, "fine");
	synth_close(s, &buf, &len);
	rc = ga_reader_read_mem("f", buf, len, count, &n, &info, err, sizeof(err));
	CHECK(rc == GA_READ_OK && !info.damaged);
	CHECK(n == 1 && info.unknown == 1 && info.malformed == 7);
	free(buf);

	/* A record whose size breaks the framing makes the chunk unusable. */
	s = synth_open(NULL);
	synth_string(s, "before");
	synth_flush_chunk(s);
	memset(rec, 0, sizeof(rec));
	h->type = GP_REC_PAD;
	h->size = 12;               /* not a multiple of 8 */
	synth_rec(s, rec, 16);
	synth_close(s, &buf, &len);
	n = 0;
	rc = ga_reader_read_mem("f", buf, len, count, &n, &info, err, sizeof(err));
	CHECK(rc == GA_READ_OK && n == 1 && info.damaged && strstr(info.reason, "bad size 12"));
	free(buf);
	tap_end();
}

static void test_random_damage(void)
{
	struct small sm;
	struct ga_read_info info;
	char err[256];
	unsigned char *copy;
	int iter, j;

	tap_begin("random damage never crashes the reader");
	make_small(&sm);
	copy = malloc(sm.len);
	CHECK(sm.buf && copy);
	for (iter = 0; sm.buf && copy && iter < 3000; iter++) {
		uint64_t n = 0;
		size_t cut = (size_t)(rnd() % (sm.len + 1));

		memcpy(copy, sm.buf, sm.len);
		for (j = 0; j < 1 + iter % 8; j++)
			copy[sizeof(struct gp_file_header) + rnd() % (sm.len - 64)] = (unsigned char)rnd();
		ga_reader_read_mem("r", copy, cut, count, &n, &info, err, sizeof(err));
		CHECK(info.stop_offset <= cut || cut < 64);
	}
	free(copy);
	free(sm.buf);
	tap_end();
}

/* A paced look-ahead's callbacks: what they were asked, and when the callback may read. */
struct paced {
	struct two t;
	uint32_t ahead_chunk;   /* the chunk the look-ahead reads */
	uint32_t ready_from;    /* ready() says yes once the look-ahead is this many chunks on */
	int never;              /* ready() never says yes: all wait for the end */
	int ends;               /* end() calls */
	uint64_t behind_at_end; /* records the callback had at end() */
	int bad_order;          /* ready() asked of a chunk the look-ahead had not read */
};

static void paced_chunk(void *ctx, uint32_t seq)
{
	((struct paced *)ctx)->ahead_chunk = seq;
}

static int paced_ready(void *ctx, uint32_t seq)
{
	struct paced *p = ctx;

	p->bad_order |= seq > p->ahead_chunk;
	return !p->never && p->ahead_chunk >= seq + p->ready_from;
}

static int paced_end(void *ctx)
{
	struct paced *p = ctx;

	p->ends++;
	p->behind_at_end = p->t.nbehind;
	return 0;
}

static int paced_ahead(void *ctx, const struct gp_rec *rec)
{
	return on_ahead(&((struct paced *)ctx)->t, rec);
}

static int paced_behind(void *ctx, const struct gp_rec *rec)
{
	return on_behind(&((struct paced *)ctx)->t, rec);
}

/*
 * A paced look-ahead: the callback reads a chunk lag chunks behind once
 * ready() says it may, all of them after end() where it never does; both
 * see every record in file order, with -j 1 and several threads, from a
 * file and memory; a bound on what is held stops the read (GA_READ_EHOLD).
 */
static void test_paced(void)
{
	struct ga_buf ref = { 0 };
	struct ga_read_info info;
	char err[256], path[] = "/tmp/gpuprof-test-XXXXXX";
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc;

	tap_begin("read paced: the callback waits for the look-ahead's word");
	if (long_trace(&ref, &buf, &len, path)) {
		tap_end();
		return;
	}
	for (unsigned j = 1; j <= 4; j += 3) {
		for (int file = 0; file < 2; file++) {
			for (int mode = 0; mode < 3; mode++) {
				/* 0: ready at once (the lag alone); 1: 5 chunks later; 2: never. */
				struct paced p;
				struct ga_reader_pace pc = { paced_chunk, paced_ready, paced_end, 2,
							     SIZE_MAX };

				memset(&p, 0, sizeof(p));
				p.ready_from = mode == 1 ? 5 : 0;
				p.never = mode == 2;
				ga_reader_jobs = j;
				rc = ga_reader_read_paced(file ? path : "mem", file ? NULL : buf, len,
							  paced_ahead, &p, ~0ull, &pc, paced_behind,
							  &p, &info, err, sizeof(err));
				CHECKF(rc == GA_READ_OK && info.finished && !info.damaged &&
					       p.t.ahead.len == ref.len &&
					       !memcmp(p.t.ahead.p, ref.p, ref.len) &&
					       p.t.behind.len == ref.len &&
					       !memcmp(p.t.behind.p, ref.p, ref.len) &&
					       info.records == p.t.nbehind && p.ends == 1 && !p.bad_order,
				       "-j %u mode %d: rc %d %s, %d ends", j, mode, rc, err, p.ends);
				/* Never ready: nothing before the end; else it read most before. */
				CHECKF(mode == 2 ? p.behind_at_end == 0 && info.held_max == info.raw_bytes :
						   p.behind_at_end > 0 && info.held_max < info.raw_bytes,
				       "-j %u mode %d: %llu read before the end, %llu of %llu held", j,
				       mode, (unsigned long long)p.behind_at_end,
				       (unsigned long long)info.held_max,
				       (unsigned long long)info.raw_bytes);
				CHECKF(mode == 2 || p.t.ahead_at_first > 0, "-j %u mode %d: ahead", j, mode);
				ga_buf_free(&p.t.ahead);
				ga_buf_free(&p.t.behind);
				/* Held past the bound: the read stops, saying so. */
				if (mode == 2) {
					memset(&p, 0, sizeof(p));
					p.never = 1;
					pc.hold_max = info.raw_bytes / 2;
					rc = ga_reader_read_paced(file ? path : "mem", file ? NULL : buf,
								  len, paced_ahead, &p, ~0ull, &pc,
								  paced_behind, &p, &info, err, sizeof(err));
					CHECKF(rc == GA_READ_EHOLD && p.t.nbehind == 0 && !p.ends &&
						       strstr(err, "held more than"),
					       "-j %u: bound: rc %d %s", j, rc, err);
					ga_buf_free(&p.t.ahead);
					ga_buf_free(&p.t.behind);
				}
			}
		}
	}
	ga_reader_jobs = 0;
	/* Cut in the middle of a chunk: the end at the damage, the chunks before it read. */
	{
		struct paced p;
		struct ga_reader_pace pc = { paced_chunk, paced_ready, paced_end, 2, SIZE_MAX };
		struct ga_read_info plain;
		size_t cut = len * 2 / 3;

		memset(&p, 0, sizeof(p));
		rc = ga_reader_read_mem("cut", buf, cut, NULL, NULL, &plain, err, sizeof(err));
		rc |= ga_reader_read_paced("cut", buf, cut, paced_ahead, &p, ~0ull, &pc, paced_behind,
					   &p, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && info.damaged && plain.damaged &&
			       info.stop_offset == plain.stop_offset && info.records == plain.records &&
			       p.t.nbehind == plain.records && p.t.nahead == plain.records && p.ends == 1,
		       "cut: rc %d, %llu/%llu records, %d ends", rc, (unsigned long long)info.records,
		       (unsigned long long)plain.records, p.ends);
		ga_buf_free(&p.t.ahead);
		ga_buf_free(&p.t.behind);
	}
	/* Many tiny chunks: each costs more than its records against the bound. */
	{
		struct ga_buf small = { 0 };
		struct synth *sy = synth_open(NULL);
		unsigned char *tb = NULL;
		size_t tl = 0;
		struct paced p;
		struct ga_reader_pace pc = { paced_chunk, paced_ready, paced_end, 2, SIZE_MAX };

		CHECK(sy != NULL);
		if (sy) {
			sy->chunk_limit = 64;
			write_every_type(sy, &small, 40);
			CHECK(synth_close(sy, &tb, &tl) == 0);
			memset(&p, 0, sizeof(p));
			p.never = 1;
			rc = ga_reader_read_paced("tiny", tb, tl, paced_ahead, &p, ~0ull, &pc,
						  paced_behind, &p, &info, err, sizeof(err));
			CHECKF(rc == GA_READ_OK && info.chunks > 100 && info.held_max == info.raw_bytes,
			       "tiny chunks: rc %d, %u chunks", rc, info.chunks);
			ga_buf_free(&p.t.ahead);
			ga_buf_free(&p.t.behind);
			/* A bound the records alone fit in twice, their entries not. */
			memset(&p, 0, sizeof(p));
			p.never = 1;
			pc.hold_max = 2 * info.raw_bytes;
			if (pc.hold_max < (uint64_t)info.chunks * 256)
				rc = ga_reader_read_paced("tiny", tb, tl, paced_ahead, &p, ~0ull, &pc,
							  paced_behind, &p, &info, err, sizeof(err));
			CHECKF(rc == GA_READ_EHOLD && !p.t.nbehind,
			       "tiny chunks against a bound of twice their records: rc %d", rc);
			ga_buf_free(&p.t.ahead);
			ga_buf_free(&p.t.behind);
		}
		free(tb);
		ga_buf_free(&small);
	}
	unlink(path);
	free(buf);
	ga_buf_free(&ref);
	tap_end();
}

/* Collects records until the stop_at-th (1-based, 0 never), which stops the read. */
struct stopper {
	struct ga_buf got;
	uint64_t n, stop_at;
};

static int stop_at(void *ctx, const struct gp_rec *rec)
{
	struct stopper *st = ctx;

	if (ga_buf_put(&st->got, rec, rec->size))
		return 1;
	return ++st->n == st->stop_at;
}

/*
 * A head read (ga_reader_read_head): the records of a read at once, in
 * order, delta-coded chunks or not, from memory and a file, with and
 * without decoding threads after the first chunk; a callback's stop in
 * the first chunk leaves the rest of it undecoded: where its frame's tail
 * is damaged (the checksum made right again), a read at once hands over
 * none of the chunk, the head read the records before the stop.
 */
static void test_head(void)
{
	static const unsigned jobs[] = { 1, 0 };
	struct ga_buf ref = { 0 };
	struct stopper st = { 0 };
	struct ga_read_info info, once;
	char err[256], path[] = "/tmp/gpuprof-test-XXXXXX";
	unsigned char *buf = NULL;
	size_t len = 0, j;
	struct synth *s;
	int rc, delta;

	tap_begin("head read: the records of a read at once; a stop in the first chunk decodes no more");
	if (long_trace(&ref, &buf, &len, path)) {
		tap_end();
		return;
	}
	for (j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
		ga_reader_jobs = jobs[j];
		st.got.len = 0;
		rc = ga_reader_read_head(path, NULL, 0, collect, &st.got, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && st.got.len == ref.len &&
			       !memcmp(st.got.p, ref.p, ref.len),
		       "-j %u, file: rc %d, %zu of %zu bytes", jobs[j], rc, st.got.len, ref.len);
		ga_reader_read_file(path, NULL, NULL, &once, err, sizeof(err));
		CHECK(info.records == once.records && info.chunks == once.chunks &&
		      info.raw_bytes == once.raw_bytes && info.finished && !info.damaged &&
		      info.file_size == len);
		st.got.len = 0;
		rc = ga_reader_read_head("mem", buf, len, collect, &st.got, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && st.got.len == ref.len &&
			       !memcmp(st.got.p, ref.p, ref.len),
		       "-j %u, memory: rc %d", jobs[j], rc);
	}
	ga_reader_jobs = 0;
	unlink(path);
	free(buf);

	/* One large first chunk (many pieces), coded and not: its records, then a stop. */
	for (delta = 0; delta <= 1; delta++) {
		struct gp_chunk_header ch;
		uint64_t off;
		int n;

		ref.len = 0;
		s = synth_open(NULL);
		CHECK(s != NULL);
		if (!s)
			break;
		s->chunk_limit = 1u << 20;
		s->delta = delta;
		write_every_type(s, &ref, 200);
		CHECK(synth_close(s, &buf, &len) == 0);
		st.got.len = 0;
		rc = ga_reader_read_head("mem", buf, len, collect, &st.got, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && st.got.len == ref.len &&
			       !memcmp(st.got.p, ref.p, ref.len) && info.finished,
		       "delta %d: rc %d, %zu of %zu bytes", delta, rc, st.got.len, ref.len);
		off = ((const struct gp_file_header *)(const void *)buf)->header_size;
		memcpy(&ch, buf + off, sizeof(ch));
		CHECKF(ch.raw_size > 8 * (16u << 10), "delta %d: first chunk of %u bytes", delta,
		       ch.raw_size);
		/* Stopped at its second record: those two, and the read says it stopped. */
		st.got.len = 0;
		st.n = 0;
		st.stop_at = 2;
		rc = ga_reader_read_head("mem", buf, len, stop_at, &st, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_ECALLBACK && st.n == 2, "delta %d: rc %d after %llu", delta,
		       rc, (unsigned long long)st.n);
		/* The frame's last bytes garbled, the checksum made right: no record at once. */
		for (n = 1; n <= 16; n++)
			buf[off + sizeof(ch) + ch.comp_size - (size_t)n] ^= 0x5a;
		ch.checksum = gp_chunk_checksum(&ch, buf + off + sizeof(ch), ch.comp_size);
		memcpy(buf + off, &ch, sizeof(ch));
		st.got.len = 0;
		st.n = 0;
		rc = ga_reader_read_mem("mem", buf, len, stop_at, &st, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && st.n == 0 && info.damaged, "delta %d: at once, rc %d, %llu records",
		       delta, rc, (unsigned long long)st.n);
		rc = ga_reader_read_head("mem", buf, len, stop_at, &st, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_ECALLBACK && st.n == 2, "delta %d: head, rc %d, %llu records",
		       delta, rc, (unsigned long long)st.n);
		/* Read on past the fault: the records before it, then the damage. */
		st.n = 0;
		st.stop_at = 0;
		rc = ga_reader_read_head("mem", buf, len, stop_at, &st, &info, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && info.damaged && st.n > 2 && info.chunks == 0,
		       "delta %d: head to the fault, rc %d, %llu records", delta, rc,
		       (unsigned long long)st.n);
		free(buf);
	}
	/* Empty chunks (a raw size of 0, no buffer for them): read as a read at once reads them. */
	s = synth_open(NULL);
	CHECK(s != NULL);
	if (s) {
		int nch = 5;

		for (int c = 0; c < nch; c++)
			synth_empty_chunk(s);
		CHECK(synth_close(s, &buf, &len) == 0);
		st.got.len = 0;
		rc = ga_reader_read_head("mem", buf, len, collect, &st.got, &info, err, sizeof(err));
		ga_reader_read_mem("mem", buf, len, NULL, NULL, &once, err, sizeof(err));
		CHECKF(rc == GA_READ_OK && st.got.len == 0 && info.chunks == (uint64_t)nch &&
			       once.chunks == info.chunks && !info.damaged && !once.damaged,
		       "empty chunks: rc %d, %llu chunks", rc, (unsigned long long)info.chunks);
		free(buf);
	}
	ga_buf_free(&st.got);
	ga_buf_free(&ref);
	tap_end();
}

int main(void)
{
	test_crc();
	test_round_trip(0);
	test_round_trip(1);
	test_jobs();
	test_ahead();
	test_paced();
	test_salvage();
	test_bit_flips();
	test_foreign();
	test_header_and_chunk_rules();
	test_skipped_records();
	test_random_damage();
	test_head();
	return tap_exit();
}
