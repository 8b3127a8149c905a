/*
 * Unit tests of the trace file's creation (preload/tracefile.c): a full
 * disk never costs the old trace of the name (-f), two recorders never
 * both take one name, names with a newline are refused, and every failure
 * is told to gpuprof run through its session file.  No GPU needed.
 */
#include "helpers.h"
#include "tap.h"

#include "config.h"
#include "tracefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256], session[300];

/* The recorder's fallocate(2), failing with ENOSPC while enospc is set (a full disk). */
static _Atomic int enospc;

int fallocate(int fd, int mode, off_t off, off_t len)
{
	if (atomic_load(&enospc)) {
		errno = ENOSPC;
		return -1;
	}
	return (int)syscall(SYS_fallocate, fd, mode, off, len);
}

/* Files in dir other than the session file: "name name ..." (sorted by readdir). */
static int count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || strlen(e->d_name) > 2)
			n++;
	closedir(d);
	return n - 1; /* the session file */
}

static int session_has(const char *text)
{
	char buf[8192] = { 0 };
	int fd = open(session, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && strstr(buf, text) != NULL;
}

static int is_trace(const char *path)
{
	char magic[8] = { 0 };
	int fd = open(path, O_RDONLY), ok;

	if (fd < 0)
		return 0;
	ok = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, GP_FILE_MAGIC, sizeof(magic));
	close(fd);
	return ok;
}

static void test_full_disk(void)
{
	struct gp_tracefile t;
	char path[400], tmpl[400];
	int rc;

	tap_begin("-f on a full disk keeps the old trace, leaves no file behind, says why");
	snprintf(path, sizeof(path), "%s/full.gpuprof", dir);
	snprintf(tmpl, sizeof(tmpl), "%s/full", dir);
	helpers_put(path, "old trace");
	atomic_store(&enospc, 1);
	rc = gp_tracefile_open(&t, tmpl, 1, 0, 0);
	atomic_store(&enospc, 0);
	CHECKF(rc == -ENOSPC, "rc %d", rc);
	CHECKF(helpers_file_is(path, "old trace"), "the old trace was replaced or removed");
	CHECKF(count_files() == 1, "%d files in %s (a temporary one left?)", count_files(), dir);
	CHECK(session_has("!cannot create ") && session_has("full.gpuprof: No space left on device\n"));
	/* A new name on a full disk: no file at all. */
	snprintf(tmpl, sizeof(tmpl), "%s/newname", dir);
	atomic_store(&enospc, 1);
	rc = gp_tracefile_open(&t, tmpl, 0, 0, 0);
	atomic_store(&enospc, 0);
	CHECKF(rc == -ENOSPC && count_files() == 1, "rc %d, %d files", rc, count_files());
	/* With room, -f replaces it. */
	rc = gp_tracefile_open(&t, path, 1, 0, 0);
	CHECKF(rc == 0 && is_trace(path), "rc %d", rc);
	if (rc == 0)
		gp_tracefile_stop(&t, 1000);
	CHECKF(count_files() == 1, "%d files", count_files());
	tap_end();

	tap_begin("a new trace is named in the session file with its identity");
	{
		struct stat st;
		char want[600];

		CHECK(stat(path, &st) == 0);
		snprintf(want, sizeof(want), "@%llu:%llu %s\n", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino, path);
		CHECKF(session_has(want), "no line %s", want);
	}
	unlink(path);
	tap_end();
}

static void test_two_writers(void)
{
	struct gp_tracefile t;
	char path[400];
	int p[2], q[2], rc, status;
	pid_t pid;
	char c = 0;

	tap_begin("-f: a trace another recorder is writing is never taken over");
	snprintf(path, sizeof(path), "%s/same.gpuprof", dir);
	helpers_put(path, "stale");
	if (pipe(p) || pipe(q)) {
		CHECK(0);
		tap_end();
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* The first recorder: replaces the stale file, writes until told to stop. */
		rc = gp_tracefile_open(&t, path, 1, 0, 0);
		if (write(p[1], &rc, sizeof(rc)) < 0 || read(q[0], &c, 1) < 0)
			_exit(2);
		if (rc == 0)
			gp_tracefile_stop(&t, 1000);
		_exit(0);
	}
	if (read(p[0], &rc, sizeof(rc)) != (ssize_t)sizeof(rc))
		rc = -1;
	CHECKF(rc == 0 && is_trace(path), "first recorder: rc %d", rc);
	rc = gp_tracefile_open(&t, path, 1, 0, 0);
	CHECKF(rc == -EBUSY, "second recorder: rc %d, expected -EBUSY", rc);
	CHECK(session_has("same.gpuprof: another process is writing a trace under that name\n"));
	CHECKF(count_files() == 1, "%d files", count_files());
	/* Without -f, and with %n, the name is not free either. */
	rc = gp_tracefile_open(&t, path, 0, 0, 0);
	CHECKF(rc == -EEXIST, "no -f: rc %d", rc);
	CHECK(session_has("same.gpuprof: it exists (use -f to overwrite)\n"));
	if (write(q[1], &c, 1) < 0)
		CHECK(0);
	waitpid(pid, &status, 0);
	/* Once that recorder is done, -f replaces its trace. */
	rc = gp_tracefile_open(&t, path, 1, 0, 0);
	CHECKF(rc == 0, "after the first ended: rc %d", rc);
	if (rc == 0)
		gp_tracefile_stop(&t, 1000);
	unlink(path);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	tap_end();
}

static void test_names(void)
{
	struct gp_tracefile t;
	char tmpl[1000], want[600];
	int rc;

	tap_begin("names with a newline, too long or in a missing directory: refused and told");
	setenv("GP_TEST_RANK", "1\nx", 1);
	snprintf(tmpl, sizeof(tmpl), "%s/nl-%%q{GP_TEST_RANK}", dir);
	rc = gp_tracefile_open(&t, tmpl, 0, 0, 0);
	CHECKF(rc == -EINVAL, "newline in %%q: rc %d", rc);
	CHECK(session_has(": the name would hold a newline\n"));
	snprintf(tmpl, sizeof(tmpl), "%s/a\nb", dir);
	rc = gp_tracefile_open(&t, tmpl, 0, 0, 0);
	CHECKF(rc == -EINVAL, "newline in the template: rc %d", rc);
	CHECKF(count_files() == 0, "%d files", count_files());
	memset(want, 'n', 300);
	want[300] = 0;
	snprintf(tmpl, sizeof(tmpl), "%.400s/%s", dir, want);
	rc = gp_tracefile_open(&t, tmpl, 0, 0, 0);
	CHECKF(rc == -ENAMETOOLONG, "name too long: rc %d", rc);
	CHECK(session_has(": File name too long\n"));
	CHECKF(count_files() == 0, "%d files", count_files());
	snprintf(tmpl, sizeof(tmpl), "%s/missing/x", dir);
	rc = gp_tracefile_open(&t, tmpl, 0, 0, 0);
	CHECKF(rc == -ENOENT, "missing directory: rc %d", rc);
	snprintf(want, sizeof(want), "!cannot create %s/missing/x.gpuprof: No such file or directory\n",
		 dir);
	CHECK(session_has(want));
	tap_end();
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/gp-tracefile.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(session, sizeof(session), "%s/session", dir);
	close(open(session, O_WRONLY | O_CREAT, 0600));
	setenv("GPUPROF_SESSION_FILE", session, 1);
	gp_config_get();
	test_full_disk();
	test_two_writers();
	test_names();
	unlink(session);
	rmdir(dir);
	return tap_exit();
}
