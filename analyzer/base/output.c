/*
 * Safe output files (see output.h).  Runs offline only.
 */
#include "base/output.h"
#include "base/handoff.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * The kernel's protected_symlinks rule, applied whatever the system's
 * setting: in a sticky, world-writable directory (/tmp) a symlink is
 * followed only when its owner is the caller or the directory's owner.
 * Another user's link there must never send our output where they choose.
 */
static int may_follow(const struct stat *dir, const struct stat *link)
{
	if ((dir->st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 1;
	return link->st_uid == geteuid() || link->st_uid == dir->st_uid;
}

/* Appends "/name" (len bytes) to the resolved path res; -1 when too long. */
static int res_push(char *res, const char *name, size_t len)
{
	size_t n = strlen(res);

	if (n + len + 2 > PATH_MAX)
		return -1;
	if (n > 1 || res[0] != '/')
		res[n++] = '/';
	memcpy(res + n, name, len);
	res[n + len] = 0;
	return 0;
}

/*
 * Walks path one component at a time, never letting the kernel follow a
 * symlink: each one met is checked with may_follow() and followed here.
 * On success *dirfd is the directory the output goes in (O_PATH), *base
 * (malloc'd) its name there, and res the directory's path.  A name that
 * does not exist yet is fine for the last component.  Returns 0, or -1
 * after printing why.
 */
static int walk(const char *path, int *dirfd, char **base, char *res)
{
	char *rest = NULL, *tgt = NULL, *p, *q;
	struct stat dst, lst;
	int cur, nfd, links = 0;
	size_t len;

	*base = NULL;
	if (path[0] == '/') {
		strcpy(res, "/");
	} else if (!getcwd(res, PATH_MAX)) {
		fprintf(stderr, "gpuprof: %s: the current directory: %s\n", path, strerror(errno));
		return -1;
	}
	cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	rest = strdup(path);
	tgt = malloc(PATH_MAX);
	if (cur < 0 || !rest || !tgt)
		goto sys;
	p = rest;
	for (;;) {
		while (*p == '/')
			p++;
		q = p + strcspn(p, "/");
		len = (size_t)(q - p);
		if (!len) {
			fprintf(stderr, "gpuprof: %s: is a directory\n", path);
			goto fail;
		}
		while (*q == '/')
			q++;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
			if (!*q) {
				fprintf(stderr, "gpuprof: %s: is a directory\n", path);
				goto fail;
			}
			if (len == 2) {
				nfd = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (nfd < 0)
					goto sys;
				close(cur);
				cur = nfd;
				if (strrchr(res, '/') == res)
					res[1] = 0;
				else
					*strrchr(res, '/') = 0;
			}
			p = q;
			continue;
		}
		p[len] = 0;
		if (fstatat(cur, p, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode)) {
			ssize_t n;
			char *next;

			if (++links > 40) {
				errno = ELOOP;
				goto sys;
			}
			if (fstat(cur, &dst) < 0)
				goto sys;
			if (!may_follow(&dst, &lst)) {
				fprintf(stderr, "gpuprof: %s: %s/%s is a symlink of another user (uid %u) "
					"in the sticky directory %s; refusing to follow it\n",
					path, strcmp(res, "/") ? res : "", p, (unsigned)lst.st_uid, res);
				goto fail;
			}
			n = readlinkat(cur, p, tgt, PATH_MAX - 1);
			if (n < 0)
				goto sys;
			tgt[n] = 0;
			/* Go on with the link's target, then what followed the link. */
			next = malloc((size_t)n + strlen(q) + 2);
			if (!next)
				goto sys;
			sprintf(next, "%s%s%s", tgt, *q ? "/" : "", q);
			free(rest);
			rest = p = next;
			if (tgt[0] == '/') {
				nfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (nfd < 0)
					goto sys;
				close(cur);
				cur = nfd;
				strcpy(res, "/");
			}
			continue;
		}
		if (!*q) {
			*base = strdup(p);
			if (!*base)
				goto sys;
			*dirfd = cur;
			free(rest);
			free(tgt);
			return 0;
		}
		nfd = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			fprintf(stderr, "gpuprof: %s: cannot create a file in %s/%s: %s\n", path,
				strcmp(res, "/") ? res : "", p, strerror(errno));
			goto fail;
		}
		if (res_push(res, p, len) < 0) {
			close(nfd);
			fprintf(stderr, "gpuprof: %s: name too long\n", path);
			goto fail;
		}
		close(cur);
		cur = nfd;
		p = q;
	}
sys:
	fprintf(stderr, "gpuprof: %s: %s\n", path, strerror(errno));
fail:
	if (cur >= 0)
		close(cur);
	free(rest);
	free(tgt);
	return -1;
}

static int same_as_input(const struct stat *out, char *const *inputs, int n)
{
	for (int i = 0; i < n; i++) {
		struct stat st;

		if (!strcmp(inputs[i], "-") || stat(inputs[i], &st) < 0)
			continue;
		if (st.st_dev == out->st_dev && st.st_ino == out->st_ino)
			return i;
	}
	return -1;
}

/*
 * Temporary outputs not yet in place, removed by a signal that ends the
 * process (SIGINT, SIGTERM, SIGHUP, where they would end it: not where
 * the caller set them ignored or handled), which then ends it as it
 * would have: an export cut short with ^C leaves no hidden file of its
 * size behind.  Slots are taken and let go of by the thread that opens
 * and closes outputs; the handler only reads them.
 */
#define PENDING_MAX 4
static struct pending {
	volatile sig_atomic_t used;
	int dirfd;
	char name[64];
} pending[PENDING_MAX];

static void on_fatal_signal(int sig)
{
	int e = errno;

	for (int i = 0; i < PENDING_MAX; i++)
		if (pending[i].used)
			unlinkat(pending[i].dirfd, pending[i].name, 0);
	errno = e;
	/* SA_RESETHAND made the disposition the default again, SA_NODEFER lets it in now. */
	raise(sig);
}

static void pending_add(struct ga_output *o)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	/* At each output: a signal set back to its default since is caught again. */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old, sa;

		if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
	for (int i = 0; i < PENDING_MAX; i++) {
		if (pending[i].used || strlen(o->tmpname) >= sizeof(pending[i].name))
			continue;
		pending[i].dirfd = o->dirfd;
		strcpy(pending[i].name, o->tmpname);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		pending[i].used = 1;
		o->pending = i + 1;
		return;
	}
}

static void pending_drop(struct ga_output *o)
{
	if (o->pending)
		pending[o->pending - 1].used = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	o->pending = 0;
}

/* A new file in dirfd under a name no one else uses: its name goes to o->tmpname. */
static int create_tmp(struct ga_output *o)
{
	struct timespec ts;
	int fd = -1;

	o->tmpname = malloc(64);
	if (!o->tmpname)
		return -1;
	for (unsigned k = 0; k < 100 && fd < 0; k++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(o->tmpname, 64, ".gpuprof-out.%d.%lx%x", (int)getpid(),
			 (unsigned long)ts.tv_nsec ^ (unsigned long)random(), k);
		fd = openat(o->dirfd, o->tmpname,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		free(o->tmpname);
		o->tmpname = NULL;
	} else {
		pending_add(o);
	}
	return fd;
}

/* need_file: the writer needs a regular file's name (ga_output_open_file). */
static int open_output(struct ga_output *o, const char *path, char *const *inputs, int n,
		       int need_file)
{
	char res[PATH_MAX];
	struct stat st, dst;
	mode_t um;
	int fd, i;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->fd = -1;
	if (need_file && (!path || !strcmp(path, "-"))) {
		fprintf(stderr, "gpuprof: this output cannot go to standard output: "
			"name a file with -o\n");
		return -1;
	}
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path)
		goto nomem;
	if (walk(path, &o->dirfd, &o->dest, res))
		goto fail;
	if (fstatat(o->dirfd, o->dest, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if ((i = same_as_input(&st, inputs, n)) >= 0) {
			fprintf(stderr, "gpuprof: %s: the output is the input %s; refusing to overwrite it\n",
				path, inputs[i]);
			goto fail;
		}
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "gpuprof: %s: is a directory\n", path);
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			fprintf(stderr, "gpuprof: %s: changed while it was being opened\n", path);
			goto fail;
		}
		if (!S_ISREG(st.st_mode) && need_file) {
			fprintf(stderr, "gpuprof: %s: not a regular file (this output needs one)\n",
				path);
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			/*
			 * A device, pipe or socket: written through, never
			 * removed; in a sticky world-writable directory only
			 * one of ours or of the directory's owner (the
			 * kernel's protected_fifos rule).
			 */
			if (fstat(o->dirfd, &dst) == 0 && !may_follow(&dst, &st)) {
				fprintf(stderr, "gpuprof: %s: belongs to another user (uid %u) in the "
					"sticky directory %s; refusing to write into it\n",
					path, (unsigned)st.st_uid, res);
				goto fail;
			}
			fd = openat(o->dirfd, o->dest, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			o->f = fd < 0 ? NULL : fdopen(fd, "w");
			if (!o->f) {
				fprintf(stderr, "gpuprof: %s: cannot open: %s\n", path, strerror(errno));
				if (fd >= 0)
					close(fd);
				goto fail;
			}
			close(o->dirfd);
			o->dirfd = -1;
			free(o->dest);
			o->dest = NULL;
			return 0;
		}
	}
	/*
	 * A regular file or a new name: the output is written beside it under
	 * a name of its own and renamed over it once all is written.  The
	 * old file's permissions are kept when it is ours.
	 */
	um = umask(0);
	umask(um);
	o->mode = fstatat(o->dirfd, o->dest, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
			  st.st_uid == geteuid()
		  ? (int)(st.st_mode & 07777)
		  : (int)(0666 & ~um);
	fd = create_tmp(o);
	if (fd < 0) {
		fprintf(stderr, "gpuprof: %s: cannot create a file in %s: %s\n", path, res,
			strerror(errno));
		goto fail;
	}
	if (need_file) {
		/* The writer opens it by name; an empty file is an empty database. */
		o->fd = fd;
		o->tmp = malloc(strlen(res) + strlen(o->tmpname) + 2);
		if (!o->tmp)
			goto nomem;
		sprintf(o->tmp, "%s/%s", strcmp(res, "/") ? res : "", o->tmpname);
		return 0;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		goto nomem;
	}
	return 0;
nomem:
	fprintf(stderr, "gpuprof: out of memory\n");
fail:
	pending_drop(o);
	if (o->tmpname)
		unlinkat(o->dirfd, o->tmpname, 0);
	if (o->fd >= 0)
		close(o->fd);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmpname);
	free(o->tmp);
	free(o->dest);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->fd = -1;
	return -1;
}

int ga_output_open(struct ga_output *o, const char *path, char *const *inputs, int n)
{
	return open_output(o, path, inputs, n, 0);
}

int ga_output_open_file(struct ga_output *o, const char *path, char *const *inputs, int n)
{
	return open_output(o, path, inputs, n, 1);
}

/*
 * The writer of ga_output_async(): a ring of blocks (base/handoff.h) whose
 * thread writes them to fd, starting with the first full block: an output
 * smaller than one is written at the close, by the caller.  Without
 * memory for a block, the caller writes from then on, in order, after
 * what the thread holds.
 */
#define AW_BLOCK (GA_OUTPUT_AHEAD / GA_HANDOFF_BLOCKS)

struct ga_awriter {
	int fd;
	int sync; /* a block could not be had: the caller writes */
	struct ga_handoff ring;
};

static int aw_consume(void *ctx, void *blk, size_t len)
{
	return ga_util_write_all(((struct ga_awriter *)ctx)->fd, blk, len);
}

static ssize_t aw_cookie_write(void *cookie, const char *buf, size_t size)
{
	struct ga_awriter *a = cookie;
	struct ga_handoff *r = &a->ring;
	size_t done = 0;
	int err = ga_handoff_err(r);

	while (!err && done < size) {
		size_t n = size - done < AW_BLOCK - r->fill ? size - done : AW_BLOCK - r->fill;
		char *b = a->sync ? NULL : ga_handoff_block(r);

		if (!b) {
			/* Out of memory: written here, once the thread has written what it holds. */
			a->sync = 1;
			if (!(err = ga_handoff_drain(r)))
				err = ga_util_write_all(a->fd, buf + done, size - done);
			break;
		}
		memcpy(b + r->fill, buf + done, n);
		r->fill += n;
		done += n;
		if (r->fill == AW_BLOCK)
			err = ga_handoff_push(r);
	}
	if (err) {
		errno = err;
		return 0;
	}
	return (ssize_t)size;
}

/* Writes what is left and stops the thread; -1 with errno of the first failed write. */
static int aw_cookie_close(void *cookie)
{
	struct ga_awriter *a = cookie;
	int err = ga_handoff_stop(&a->ring);

	free(a);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int ga_output_async(struct ga_output *o)
{
	cookie_io_functions_t io = { .write = aw_cookie_write, .close = aw_cookie_close };
	struct ga_awriter *a;
	FILE *f;

	if (!o->f || o->aw || isatty(fileno(o->f)) || fflush(o->f) || ferror(o->f))
		return -1;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -1;
	a->fd = fileno(o->f);
	if (ga_handoff_init(&a->ring, AW_BLOCK, 0, aw_consume, a)) {
		free(a);
		return -1;
	}
	f = fopencookie(a, "w", io);
	if (!f) {
		aw_cookie_close(a);
		return -1;
	}
	/* Whole pieces of the writers' own buffers go straight to the blocks. */
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	o->real = o->f;
	o->f = f;
	o->aw = a;
	return 0;
}

/* Ends ga_output_async(): everything written (or failed); o->f the stream again. 0 or errno. */
static int async_end(struct ga_output *o)
{
	int err = 0;

	if (!o->aw)
		return 0;
	if (fclose(o->f) != 0)
		err = errno ? errno : EIO;
	o->f = o->real;
	o->real = NULL;
	o->aw = NULL;
	return err;
}

int ga_output_close(struct ga_output *o, int ok)
{
	const char *name = o->path ? o->path : "standard output";
	int err = 0, rc = 0;

	if (!o->f && !o->tmpname)
		return ok ? 0 : -1;
	err = async_end(o);
	if (o->f && (fflush(o->f) != 0 || ferror(o->f)) && !err)
		err = errno ? errno : EIO;
	if (o->f && o->tmpname && ok && !err && fchmod(fileno(o->f), (mode_t)o->mode) != 0)
		err = errno;
	if (o->f && o->f != stdout && fclose(o->f) != 0 && !err)
		err = errno ? errno : EIO;
	if (o->fd >= 0) {
		if (ok && !err && fchmod(o->fd, (mode_t)o->mode) != 0)
			err = errno;
		close(o->fd);
	}
	if (err) {
		fprintf(stderr, "gpuprof: %s: error writing: %s\n", name, strerror(err));
		rc = -1;
	}
	if (o->tmpname) {
		/* In place or removed from here: a signal now leaves it be. */
		pending_drop(o);
		if (ok && !rc && renameat(o->dirfd, o->tmpname, o->dirfd, o->dest) == 0) {
			free(o->tmpname);
			o->tmpname = NULL;
		} else {
			if (ok && !rc) {
				fprintf(stderr, "gpuprof: %s: cannot put the output in place: %s\n", name,
					strerror(errno));
				rc = -1;
			}
			unlinkat(o->dirfd, o->tmpname, 0);
		}
	}
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmpname);
	free(o->tmp);
	free(o->dest);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->fd = -1;
	return ok ? rc : -1;
}
