/*
 * --dask ADDRESS of report and export: the summarize map of many traces as
 * Dask tasks.  The analyzer runs scripts/gpuprof-dask.py (installed beside
 * it, run by Debian's /usr/bin/python3 through its first line), which
 * summarizes each trace on the cluster's workers, merges the summaries by a
 * tree reduce and writes the result to a temporary file; the command then
 * reads that summary as it reads any.  Runs offline only, in the analyzer
 * process; the driver is a child it waits for.
 */
#include "cmd/dask.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DRIVER "gpuprof-dask.py"

/* The driver beside this executable.  0, or -1 after printing why. */
static int driver_path(char *buf, size_t n)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (k <= 0) {
		fprintf(stderr, "gpuprof: --dask: cannot find this program's directory: %s\n",
			strerror(errno));
		return -1;
	}
	exe[k] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(buf, n, "%s/%s", exe, DRIVER) >= n)
		return -1;
	if (access(buf, X_OK)) {
		fprintf(stderr, "gpuprof: --dask: %s: %s (it is installed beside "
			"gpuprof-analyze)\n", buf, strerror(errno));
		return -1;
	}
	return 0;
}

int ga_dask_summarize(struct ga_dask *d, const char *address, char *const *paths, int n)
{
	char driver[PATH_MAX], exe[PATH_MAX];
	char **argv;
	ssize_t k;
	pid_t pid;
	int st, i, a = 0;

	memset(d, 0, sizeof(*d));
	if (driver_path(driver, sizeof(driver)))
		return -1;
	k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k <= 0)
		return -1;
	exe[k] = 0;
	snprintf(d->dir, sizeof(d->dir), "/tmp/gpuprof-dask.XXXXXX");
	if (!mkdtemp(d->dir)) {
		fprintf(stderr, "gpuprof: --dask: cannot make a temporary directory: %s\n",
			strerror(errno));
		d->dir[0] = 0;
		return -1;
	}
	snprintf(d->part, sizeof(d->part), "%s/merged.sum", d->dir);
	if (!(argv = calloc((size_t)n + 10, sizeof(*argv)))) {
		ga_dask_done(d);
		return -1;
	}
	argv[a++] = driver;
	argv[a++] = "--analyze";
	argv[a++] = exe;
	argv[a++] = "--scheduler";
	argv[a++] = (char *)address;
	argv[a++] = "-o";
	argv[a++] = d->part;
	argv[a++] = "--";
	for (i = 0; i < n; i++)
		argv[a++] = paths[i];
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gpuprof: --dask: cannot start %s: %s\n", driver, strerror(errno));
		free(argv);
		ga_dask_done(d);
		return -1;
	}
	if (pid == 0) {
		execv(driver, argv);
		fprintf(stderr, "gpuprof: --dask: cannot run %s: %s\n", driver, strerror(errno));
		_exit(127);
	}
	free(argv);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			ga_dask_done(d);
			return -1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3 && access(d->part, R_OK) == 0) {
		d->missing = 1;
		return 0;
	}
	if (WIFSIGNALED(st))
		fprintf(stderr, "gpuprof: --dask: %s killed by signal %d\n", driver, WTERMSIG(st));
	ga_dask_done(d);
	return -1;
}

void ga_dask_done(struct ga_dask *d)
{
	if (d->part[0])
		unlink(d->part);
	if (d->dir[0])
		rmdir(d->dir);
	d->part[0] = d->dir[0] = 0;
}
