/*
 * Directories on the command line (see dirs.h).  Runs offline only.
 */
#include "cmd/dirs.h"

#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a > b && !strcmp(s + a - b, tail);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Room for one more path in d->paths and d->owned.  0, or -1 out of memory. */
static int room(struct ga_dirs *d, size_t *cap, size_t *capo)
{
	return ga_util_grow(&d->paths, cap, (size_t)d->n + 1, sizeof(*d->paths)) ||
	       ga_util_grow(&d->owned, capo, (size_t)d->nowned + 1, sizeof(*d->owned));
}

/* The files of directory dir appended to d, sorted.  0, or -1 after printing why. */
static int add_dir(struct ga_dirs *d, const char *cmd, const char *dir, size_t *cap,
		   size_t *capo)
{
	DIR *h = opendir(dir);
	struct dirent *e;
	int first = d->n, found = 0, sums = 0;
	size_t dl = strlen(dir);

	if (!h) {
		fprintf(stderr, "gpuprof %s: %s: %s\n", cmd, dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(h))) {
		struct stat st;
		char *p;

		if (e->d_name[0] == '.' ||
		    (!ends_with(e->d_name, ".gpuprof") && !ends_with(e->d_name, ".sum")))
			continue;
		if (room(d, cap, capo) || !(p = malloc(dl + strlen(e->d_name) + 2))) {
			closedir(h);
			fputs("gpuprof: out of memory\n", stderr);
			return -1;
		}
		sprintf(p, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", e->d_name);
		d->owned[d->nowned++] = p;
		/* Regular files only (followed through links): not subdirectories. */
		if (stat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		d->paths[d->n++] = p;
		found++;
		sums += ends_with(e->d_name, ".sum");
	}
	closedir(h);
	if (!found) {
		fprintf(stderr, "gpuprof %s: %s: a directory without *.gpuprof or *.sum files\n",
			cmd, dir);
		return -1;
	}
	/* A summary beside its traces would count them twice. */
	if (sums && sums < found) {
		fprintf(stderr, "gpuprof %s: %s: a directory of both traces (*.gpuprof) and "
			"summaries (*.sum): name the files to read\n", cmd, dir);
		return -1;
	}
	qsort(d->paths + first, (size_t)found, sizeof(*d->paths), cmp_str);
	return 0;
}

int ga_dirs_expand(struct ga_dirs *d, const char *cmd, char *const *in, int n)
{
	size_t cap = 0, capo = 0;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < n; i++) {
		struct stat st;

		if (strcmp(in[i], "-") && !stat(in[i], &st) && S_ISDIR(st.st_mode)) {
			if (add_dir(d, cmd, in[i], &cap, &capo)) {
				ga_dirs_free(d);
				return -1;
			}
			continue;
		}
		if (room(d, &cap, &capo)) {
			fputs("gpuprof: out of memory\n", stderr);
			ga_dirs_free(d);
			return -1;
		}
		d->paths[d->n++] = in[i];
	}
	return 0;
}

void ga_dirs_free(struct ga_dirs *d)
{
	for (int i = 0; i < d->nowned; i++)
		free(d->owned[i]);
	free(d->owned);
	free(d->paths);
	memset(d, 0, sizeof(*d));
}
