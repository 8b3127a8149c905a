/*
 * Trace file output (see tracefile.h).  The writer thread is the only code
 * in the recorder that compresses or calls write(2) on the trace.
 * Context: writer thread; open/stop on the recorder's control paths.
 */
#include "tracefile.h"
#include "config.h"
#include "log.h"

#include <gpuprof/delta.h>
#include <gpuprof/trace.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int create(const char *path, int force)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
	int fd = open(path, flags, 0644);

	return fd < 0 ? -errno : fd;
}

int gp_tracefile_open(struct gp_tracefile *t, const char *tmpl, int force,
		      uint32_t clock_id, uint64_t created_ns)
{
	struct gp_file_header h;
	int uses_n = 0, fd = -EEXIST, rc;
	unsigned n;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	for (n = 1; n < 100000 && fd == -EEXIST; n++) {
		rc = gp_config_expand(tmpl, (int)getpid(), n, t->path,
				      sizeof(t->path), &uses_n);
		if (rc)
			return rc;
		/* %n means "first free number": never overwrite then. */
		fd = create(t->path, force && !uses_n);
		if (!uses_n)
			break;
	}
	if (fd < 0)
		return fd;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GP_FILE_MAGIC, sizeof(h.magic));
	h.version = GP_FORMAT_VERSION;
	h.min_reader = GP_MIN_READER_VERSION;
	h.header_size = sizeof(h);
	h.endian = GP_ENDIAN_MARKER;
	h.clock_id = clock_id;
	h.features = GP_FEAT_DELTA;
	h.created_ns = created_ns;
	h.pid = (uint32_t)getpid();
	rc = write_all(fd, &h, sizeof(h));
	if (rc) {
		close(fd);
		unlink(t->path);
		return rc;
	}
	t->fd = fd;
	t->offset = sizeof(h);
	/* Level 1: on delta-coded records it compresses as well as 3-9, faster. */
	t->level = 1;
	t->ccap = ZSTD_compressBound(GP_CHUNK_RAW_MAX);
	t->cbuf = malloc(t->ccap);
	t->cctx = ZSTD_createCCtx();
	if (!t->cbuf || !t->cctx) {
		free(t->cbuf);
		ZSTD_freeCCtx(t->cctx);
		close(fd);
		unlink(t->path);
		return -ENOMEM;
	}
	return 0;
}

int gp_tracefile_write_chunk(struct gp_tracefile *t, struct gp_chunk *c)
{
	struct gp_chunk_header ch;
	size_t csz;
	int rc;

	if (t->failed) {
		t->records_lost += c->nrec;
		return -EIO;
	}
	/* The chunk is ours until released: delta-code it in place. */
	gp_delta_apply(c->buf, c->used, 0);
	csz = ZSTD_compressCCtx(t->cctx, t->cbuf, t->ccap, c->buf, c->used,
				t->level);
	if (ZSTD_isError(csz)) {
		gp_log("compression failed (%s); %u records lost",
		       ZSTD_getErrorName(csz), c->nrec);
		t->records_lost += c->nrec;
		return -EIO;
	}
	memset(&ch, 0, sizeof(ch));
	ch.magic = GP_CHUNK_MAGIC;
	ch.seq = t->seq;
	ch.comp_size = (uint32_t)csz;
	ch.raw_size = c->used;
	ch.nrecords = c->nrec;
	ch.flags = c->flags | GP_CHUNK_F_DELTA;
	ch.t_min = c->t_min;
	ch.t_max = c->t_max;
	ch.lost = c->lost;
	ch.checksum = gp_chunk_checksum(&ch, t->cbuf, csz);
	rc = write_all(t->fd, &ch, sizeof(ch));
	if (!rc)
		rc = write_all(t->fd, t->cbuf, csz);
	if (rc) {
		/* Cut the partial chunk so the file stays readable to here. */
		if (ftruncate(t->fd, (off_t)t->offset) < 0)
			(void)0;
		gp_log("writing %s failed (%s); tracing continues without output",
		       t->path, strerror(-rc));
		t->failed = 1;
		t->records_lost += c->nrec;
		return rc;
	}
	t->seq++;
	t->offset += sizeof(ch) + csz;
	t->records_written += c->nrec;
	t->bytes_raw += c->used;
	return 0;
}

static void *writer_main(void *arg)
{
	struct gp_tracefile *t = arg;
	struct gp_chunk *c;

	while ((c = gp_ring_pop(t->ring, -1))) {
		gp_tracefile_write_chunk(t, c);
		gp_ring_release(t->ring, c);
	}
	return NULL;
}

int gp_tracefile_start(struct gp_tracefile *t, struct gp_ring *r)
{
	sigset_t all, old;
	int rc;

	t->ring = r;
	/* The writer must never take the application's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->thread, NULL, writer_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	t->thread_started = 1;
	return 0;
}

void gp_tracefile_stop(struct gp_tracefile *t)
{
	struct gp_chunk *c;

	if (t->ring) {
		gp_ring_close(t->ring);
		if (t->thread_started)
			pthread_join(t->thread, NULL);
		else
			while ((c = gp_ring_pop(t->ring, 0))) {
				gp_tracefile_write_chunk(t, c);
				gp_ring_release(t->ring, c);
			}
		t->thread_started = 0;
	}
	if (t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
	}
	ZSTD_freeCCtx(t->cctx);
	t->cctx = NULL;
	free(t->cbuf);
	t->cbuf = NULL;
}
