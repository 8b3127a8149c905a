/*
 * Trace file output (see tracefile.h).  The writer thread is the only code
 * in the recorder that compresses or writes chunks; the file is created on
 * the recorder's start path and closed on its stop path.
 *
 * Disk space: before each chunk the writer allocates room for the chunk
 * plus GP_TAIL_RESERVE bytes beyond it (fallocate, file size unchanged).
 * When that fails the chunk is not written but counted as lost, and so is
 * every later data chunk; the last chunk (GP_CHUNK_F_LAST: the LOST and END
 * records) still fits into the room reserved earlier, so even a full disk
 * leaves a finished trace that says what it lost.
 *
 * The descriptor is the program's to close or replace (daemons close every
 * descriptor, some programs dup2 over them): before each write the writer
 * checks that it still refers to the file it created, and otherwise reopens
 * that file by path (never following a symlink), so it never writes into a
 * file of the program's.
 *
 * Creation: the new file gets its header and its reserved room under a
 * name of its own beside the trace's name, and its name only when that is
 * done, so a failure (a full disk) never costs an old trace of that name.
 * The writer holds a record lock on its file; a recorder told to replace
 * a name (-f) refuses one that another recorder is still writing.  In
 * gpuprof run's session file each new file is named with its identity
 * (so the run never reports a file that has since become another's), and
 * each one that could not be made with the reason.
 */
#include "tracefile.h"
#include "config.h"
#include "log.h"

#include <gpuprof/delta.h>
#include <gpuprof/trace.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

/* Room kept past the last chunk for the final one (LOST and END records). */
#define GP_TAIL_RESERVE 4096
/* Descriptors at or above this number are rarely the target of a dup2. */
#define GP_FD_FLOOR 200

static int alloc_compressor(struct gp_tracefile *t);

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Moves fd above GP_FD_FLOOR when the limit allows; returns the one to use. */
static int raise_fd(int fd)
{
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, GP_FD_FLOOR);

	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

/*
 * A new file beside path (same directory, so that a rename stays in one
 * file system), under a name no one else uses: O_EXCL, never following a
 * symlink.  Its name goes to tmp.  Returns the descriptor or -errno.
 */
static int create_tmp(const char *path, char *tmp, size_t size)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".";
	struct timespec ts;
	int fd = -EEXIST;

	for (unsigned k = 0; k < 16 && fd == -EEXIST; k++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (snprintf(tmp, size, "%.*s/.gpuprof-%d-%lx%x.tmp", dlen, dir, (int)getpid(),
			     (unsigned long)ts.tv_nsec, k) >= (int)size)
			return -ENAMETOOLONG;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0)
			fd = -errno;
	}
	return fd;
}

/*
 * The writer's lock on its file (a POSIX record lock: per process, so a
 * forked child does not inherit it): a recorder told to replace a name
 * (force) leaves alone a file another recorder is still writing.
 */
static int lock_file(int fd, short type)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	return fcntl(fd, F_SETLK, &fl) < 0 ? -errno : 0;
}

/* Gives tmp the name path unless that name exists (-EEXIST). */
static int publish_new(const char *tmp, const char *path)
{
	struct stat st;

	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP && errno != EPERM)
		return -errno;
	/* A file system (or sandbox) without RENAME_NOREPLACE: link(2) never replaces either. */
	if (link(tmp, path) == 0) {
		unlink(tmp);
		return 0;
	}
	if (errno != EPERM && errno != ENOTSUP && errno != ENOSYS)
		return -errno;
	/* Nor hard links (FAT, some FUSE): a name checked free, then taken. */
	if (lstat(path, &st) == 0 || errno != ENOENT)
		return -EEXIST;
	return rename(tmp, path) < 0 ? -errno : 0;
}

/*
 * Renames tmp over path.  A regular file there that another recorder is
 * writing (it holds the lock) stays: -EBUSY.  Any other file is replaced,
 * never written through; a directory stays (-EISDIR).  Whoever replaces a
 * file holds its lock meanwhile, and a new name is only taken when it is
 * free, so two recorders never both take one name.
 */
static int publish_over(const char *tmp, const char *path)
{
	struct stat st, cur;
	int rc = -EBUSY, old;

	for (int tries = 0; tries < 64; tries++) {
		if (lstat(path, &st) < 0) {
			if (errno != ENOENT)
				return -errno;
			rc = publish_new(tmp, path);
			if (rc != -EEXIST)
				return rc;
			continue; /* someone took the name meanwhile */
		}
		if (!S_ISREG(st.st_mode))
			return rename(tmp, path) < 0 ? -errno : 0;
		old = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (old < 0) {
			if (errno == ENOENT || errno == ELOOP)
				continue; /* changed meanwhile */
			/* Not ours to write (read-only): no recorder writes it. */
			return rename(tmp, path) < 0 ? -errno : 0;
		}
		rc = lock_file(old, F_WRLCK);
		if (rc == -EAGAIN || rc == -EACCES) {
			close(old);
			return -EBUSY;
		}
		/* Still the file locked (it may have been replaced meanwhile)? */
		if (fstat(old, &st) < 0 || lstat(path, &cur) < 0 || st.st_dev != cur.st_dev ||
		    st.st_ino != cur.st_ino) {
			close(old);
			continue;
		}
		rc = rename(tmp, path) < 0 ? -errno : 0;
		close(old);
		return rc;
	}
	return rc;
}

/*
 * Appends one line to gpuprof run's session file, when there is one (one
 * write with O_APPEND: lines of concurrent processes stay whole).  The
 * line is cut to one: a control byte in it is shown as '?'.
 */
static void session_line(char *line, int n, int size)
{
	const char *sf = gp_config_get()->session_file;
	struct stat st;
	int fd;

	if (!sf[0] || n < 1)
		return;
	if (n >= size)
		n = size - 1;
	for (int i = 0; i < n - 1; i++)
		if ((unsigned char)line[i] < 0x20)
			line[i] = '?';
	line[n - 1] = '\n';
	fd = open(sf, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if (write(fd, line, (size_t)n) < 0)
		(void)0;
	close(fd);
}

/* "!cannot create PATH: WHY": gpuprof run says why no trace has that name. */
static void note_failure(const char *path, int err)
{
	char line[GP_PATH_MAX + 160];
	const char *why;

	switch (err) {
	case -EEXIST:
		why = "it exists (use -f to overwrite)";
		break;
	case -EBUSY:
		why = "another process is writing a trace under that name";
		break;
	case -EINVAL:
		why = "the name would hold a newline";
		break;
	default:
		why = strerror(-err);
	}
	session_line(line, snprintf(line, sizeof(line), "!cannot create %s: %s\n", path, why),
		     (int)sizeof(line));
}

/*
 * "@DEV:INO PATH": the file this process made under PATH, so that
 * gpuprof run reports a trace only while that name is still this file.
 */
static void note_created(const char *path, const struct stat *st)
{
	char line[GP_PATH_MAX + 64];

	session_line(line, snprintf(line, sizeof(line), "@%llu:%llu %s\n",
				    (unsigned long long)st->st_dev,
				    (unsigned long long)st->st_ino, path),
		     (int)sizeof(line));
}

/* Makes a relative path absolute against the directory the program started in. */
static int absolute(char *path, size_t size)
{
	char tmp[GP_PATH_MAX];
	const char *cwd = gp_config_start_dir();

	if (path[0] == '/' || !cwd[0])
		return 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", cwd, path) >= sizeof(tmp) ||
	    strlen(tmp) >= size)
		return -ENAMETOOLONG;
	strcpy(path, tmp);
	return 0;
}

int gp_tracefile_open(struct gp_tracefile *t, const char *tmpl, int force,
		      uint32_t clock_id, uint64_t created_ns)
{
	char tmp[GP_PATH_MAX + 64];
	struct gp_file_header h;
	struct stat st;
	int uses_n = 0, fd, rc;
	unsigned n;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	rc = gp_config_expand(tmpl, (int)getpid(), 1, t->path, sizeof(t->path), &uses_n);
	if (!rc)
		rc = absolute(t->path, sizeof(t->path));
	if (rc) {
		note_failure(t->path[0] ? t->path : tmpl, rc);
		return rc;
	}
	/*
	 * The new file is made complete (header, room for the end) under a
	 * name of its own and only then given its name: a full disk or any
	 * other failure leaves what had that name as it was.
	 */
	fd = create_tmp(t->path, tmp, sizeof(tmp));
	if (fd < 0) {
		note_failure(t->path, fd);
		return fd;
	}
	fd = raise_fd(fd);
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto fail;
	}
	t->dev = (uint64_t)st.st_dev;
	t->ino = (uint64_t)st.st_ino;
	if (lock_file(fd, F_WRLCK) < 0)
		(void)0; /* no locks on this file system: nothing to protect with */

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GP_FILE_MAGIC, sizeof(h.magic));
	h.version = GP_FORMAT_VERSION;
	h.min_reader = GP_MIN_READER_VERSION;
	h.header_size = sizeof(h);
	h.endian = GP_ENDIAN_MARKER;
	h.clock_id = clock_id;
	h.features = GP_FEAT_DELTA | GP_FEAT_HEADER_CRC;
	h.created_ns = created_ns;
	h.pid = (uint32_t)getpid();
	h.header_crc = gp_header_checksum(&h);
	t->reserve = 1;
	/* The header and the room for a final chunk, or no trace at all. */
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, sizeof(h) + GP_TAIL_RESERVE) < 0) {
		rc = -errno;
		if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG)
			goto fail;
		t->reserve = 0; /* file system without fallocate */
	}
	rc = pwrite_all(fd, &h, sizeof(h), 0);
	if (rc)
		goto fail;
	rc = alloc_compressor(t);
	if (rc)
		goto fail;
	/* %n means "first free number": never overwrite then. */
	for (n = 1;; n++) {
		rc = force && !uses_n ? publish_over(tmp, t->path) : publish_new(tmp, t->path);
		if (rc != -EEXIST || !uses_n || n + 1 >= 100000)
			break;
		rc = gp_config_expand(tmpl, (int)getpid(), n + 1, t->path, sizeof(t->path), &uses_n);
		if (!rc)
			rc = absolute(t->path, sizeof(t->path));
		if (rc)
			break;
	}
	if (rc) {
		free(t->cbuf);
		ZSTD_freeCCtx(t->cctx);
		t->cbuf = NULL;
		t->cctx = NULL;
		goto fail;
	}
	t->fd = fd;
	t->offset = sizeof(h);
	note_created(t->path, &st);
	return 0;
fail:
	close(fd);
	unlink(tmp);
	note_failure(t->path, rc);
	return rc;
}

static int alloc_compressor(struct gp_tracefile *t)
{
	/* Level 1: on delta-coded records it compresses as well as 3-9, faster. */
	t->level = 1;
	t->ccap = ZSTD_compressBound(GP_CHUNK_RAW_MAX);
	t->cbuf = malloc(t->ccap);
	t->cctx = ZSTD_createCCtx();
	if (!t->cbuf || !t->cctx) {
		free(t->cbuf);
		ZSTD_freeCCtx(t->cctx);
		t->cbuf = NULL;
		t->cctx = NULL;
		return -ENOMEM;
	}
	return 0;
}

int gp_tracefile_open_memory(struct gp_tracefile *t, struct gp_flight *f)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->flight = f;
	return alloc_compressor(t);
}

void *gp_tracefile_frame_buf(struct gp_tracefile *t, size_t *cap)
{
	*cap = t->ccap;
	return t->cbuf;
}

/*
 * 0 when t->fd is still the trace file; otherwise reopens the file by its
 * path (the program closed or replaced the descriptor).  -errno when the
 * file itself is gone or replaced.
 */
static int check_fd(struct gp_tracefile *t)
{
	struct stat st;
	int fd;

	if (fstat(t->fd, &st) == 0 && (uint64_t)st.st_dev == t->dev &&
	    (uint64_t)st.st_ino == t->ino)
		return 0;
	/* Not ours any more: never close it, it may be the program's now. */
	fd = open(t->path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != t->dev ||
	    (uint64_t)st.st_ino != t->ino) {
		close(fd);
		return -ESTALE;
	}
	t->fd = raise_fd(fd);
	/* Closing any descriptor of the file dropped the process's lock on it. */
	if (lock_file(t->fd, F_WRLCK) < 0)
		(void)0;
	t->reopened++;
	return 0;
}

/* Says once why output stopped; every record not written is counted. */
static void fail(struct gp_tracefile *t, int err)
{
	if (t->failed)
		return;
	t->failed = 1;
	t->error = -err;
	gp_log("cannot write %s (%s); records from now on are counted as lost in it",
	       t->path, strerror(-err));
}

static int put_chunk(struct gp_tracefile *t, const struct gp_chunk_header *ch, size_t csz,
		     int last)
{
	uint64_t need = sizeof(*ch) + csz;
	int rc;

	rc = check_fd(t);
	if (rc)
		return rc;
	/*
	 * Data chunks take room for themselves and the final chunk; the final
	 * one writes into what the chunk before it left reserved.
	 */
	if (t->reserve && !last &&
	    fallocate(t->fd, FALLOC_FL_KEEP_SIZE, (off_t)t->offset,
		      (off_t)(need + GP_TAIL_RESERVE)) < 0) {
		if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
			return -errno;
		t->reserve = 0;
	}
	rc = pwrite_all(t->fd, ch, sizeof(*ch), t->offset);
	if (!rc)
		rc = pwrite_all(t->fd, t->cbuf, csz, t->offset + sizeof(*ch));
	if (rc) {
		/* Cut the partial chunk so the file stays readable to here. */
		if (ftruncate(t->fd, (off_t)t->offset) < 0)
			(void)0;
		return rc;
	}
	t->offset += need;
	return 0;
}

int gp_tracefile_write_chunk(struct gp_tracefile *t, struct gp_chunk *c)
{
	struct gp_chunk_header ch;
	int last = !!(c->flags & GP_CHUNK_F_LAST);
	size_t csz;
	int rc;

	if (t->failed && !last) {
		t->records_lost += c->nrec;
		return -t->error;
	}
	/* The chunk is ours until released: delta-code it in place. */
	gp_delta_apply(c->buf, c->used, 0);
	csz = ZSTD_compressCCtx(t->cctx, t->cbuf, t->ccap, c->buf, c->used,
				t->level);
	if (ZSTD_isError(csz)) {
		/* Counted under write errors: the records never reach the file. */
		t->records_lost += c->nrec;
		t->compress_errors++;
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
	if (t->flight) {
		/* Sequence number and checksum are given when a dump writes it. */
		gp_flight_put(t->flight, &ch, t->cbuf, c->lost_counted);
		t->records_written += c->nrec;
		t->bytes_raw += c->used;
		return 0;
	}
	ch.checksum = gp_chunk_checksum(&ch, t->cbuf, csz);
	rc = put_chunk(t, &ch, csz, last);
	if (rc) {
		fail(t, rc);
		t->records_lost += c->nrec;
		return rc;
	}
	t->seq++;
	t->records_written += c->nrec;
	t->bytes_raw += c->used;
	return 0;
}

int gp_tracefile_put_frame(struct gp_tracefile *t, const struct gp_chunk_header *h)
{
	struct gp_chunk_header ch = *h;
	int rc;

	if (t->failed) {
		t->records_lost += ch.nrecords;
		return -t->error;
	}
	ch.seq = t->seq;
	ch.flags &= ~GP_CHUNK_F_LAST;
	ch.checksum = gp_chunk_checksum(&ch, t->cbuf, ch.comp_size);
	rc = put_chunk(t, &ch, ch.comp_size, 0);
	if (rc) {
		fail(t, rc);
		t->records_lost += ch.nrecords;
		return rc;
	}
	t->seq++;
	t->records_written += ch.nrecords;
	t->bytes_raw += ch.raw_size;
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

/* Waits up to ms for the writer to end; 0 if it did. */
static int join_writer(struct gp_tracefile *t, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t->thread, NULL, &ts);
}

int gp_tracefile_stop(struct gp_tracefile *t, int wait_ms)
{
	struct gp_chunk *c;
	int hung = 0;

	if (t->ring) {
		gp_ring_close(t->ring);
		if (t->thread_started) {
			/*
			 * A writer stuck in write(2) (a hung network file
			 * system) must not hold the program at exit.
			 */
			if (join_writer(t, wait_ms)) {
				pthread_detach(t->thread);
				hung = 1;
			}
		} else {
			while ((c = gp_ring_pop(t->ring, 0))) {
				gp_tracefile_write_chunk(t, c);
				gp_ring_release(t->ring, c);
			}
		}
		t->thread_started = 0;
	}
	if (hung)
		return -ETIMEDOUT; /* the writer still owns the file and buffers */
	/* A descriptor that is no longer the trace file is the program's now. */
	if (t->fd >= 0 && check_fd(t) == 0) {
		/* Give back the room reserved past the end. */
		if (ftruncate(t->fd, (off_t)t->offset) < 0)
			(void)0;
		close(t->fd);
	}
	t->fd = -1;
	ZSTD_freeCCtx(t->cctx);
	t->cctx = NULL;
	free(t->cbuf);
	t->cbuf = NULL;
	return 0;
}
