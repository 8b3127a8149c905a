/*
 * Safe output files (see output.h).  Runs offline only.
 */
#include "base/output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir_of(const char *path)
{
	char *copy = strdup(path), *d;

	if (!copy)
		return NULL;
	d = strdup(dirname(copy));
	free(copy);
	return d;
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

/* need_file: the writer needs a regular file's name (ga_output_open_file). */
static int open_output(struct ga_output *o, const char *path, char *const *inputs, int n,
		       int need_file)
{
	struct stat st, lst;
	char *dir = NULL;
	mode_t um;
	int fd, i;

	memset(o, 0, sizeof(*o));
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
	if (stat(path, &st) == 0) {
		if ((i = same_as_input(&st, inputs, n)) >= 0) {
			fprintf(stderr, "gpuprof: %s: the output is the input %s; refusing to overwrite it\n",
				path, inputs[i]);
			goto fail;
		}
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "gpuprof: %s: is a directory\n", path);
			goto fail;
		}
		if (!S_ISREG(st.st_mode) && need_file) {
			fprintf(stderr, "gpuprof: %s: not a regular file (this output needs one)\n",
				path);
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			/* A device, pipe or socket: write through, never remove. */
			o->f = fopen(path, "w");
			if (!o->f) {
				fprintf(stderr, "gpuprof: %s: cannot open: %s\n", path, strerror(errno));
				goto fail;
			}
			return 0;
		}
	}
	/* A regular file or a new name: replace it only once all is written. */
	o->dest = NULL;
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		char real[PATH_MAX];

		if (realpath(path, real))
			o->dest = strdup(real);
	}
	if (!o->dest)
		o->dest = strdup(path);
	if (!o->dest || !(dir = dir_of(o->dest)))
		goto nomem;
	um = umask(0);
	umask(um);
	o->mode = stat(o->dest, &st) == 0 ? (int)(st.st_mode & 07777) : (int)(0666 & ~um);
	o->tmp = malloc(strlen(dir) + 32);
	if (!o->tmp)
		goto nomem;
	sprintf(o->tmp, "%s/.gpuprof-out.XXXXXX", dir);
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		fprintf(stderr, "gpuprof: %s: cannot create a file in %s: %s\n", path, dir,
			strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	if (need_file) {
		/* The writer opens it by name; an empty file is an empty database. */
		if (close(fd) != 0) {
			fprintf(stderr, "gpuprof: %s: %s\n", o->tmp, strerror(errno));
			goto fail;
		}
		free(dir);
		return 0;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		goto nomem;
	}
	free(dir);
	return 0;
nomem:
	fprintf(stderr, "gpuprof: out of memory\n");
fail:
	if (o->tmp)
		unlink(o->tmp);
	free(dir);
	free(o->tmp);
	free(o->dest);
	free(o->path);
	memset(o, 0, sizeof(*o));
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

int ga_output_close(struct ga_output *o, int ok)
{
	const char *name = o->path ? o->path : "standard output";
	int err = 0, rc = 0;

	if (!o->f && !o->tmp)
		return ok ? 0 : -1;
	if (o->f && (fflush(o->f) != 0 || ferror(o->f)))
		err = errno ? errno : EIO;
	if (o->f && o->f != stdout && fclose(o->f) != 0 && !err)
		err = errno ? errno : EIO;
	if (err) {
		fprintf(stderr, "gpuprof: %s: error writing: %s\n", name, strerror(err));
		rc = -1;
	}
	if (o->tmp) {
		if (ok && !rc && fchmodat(AT_FDCWD, o->tmp, (mode_t)o->mode, 0) == 0 &&
		    rename(o->tmp, o->dest) == 0) {
			free(o->tmp);
			o->tmp = NULL;
		} else {
			if (ok && !rc) {
				fprintf(stderr, "gpuprof: %s: cannot put the output in place: %s\n", name,
					strerror(errno));
				rc = -1;
			}
			unlink(o->tmp);
		}
	}
	free(o->tmp);
	free(o->dest);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return ok ? rc : -1;
}
