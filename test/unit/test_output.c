/*
 * Unit tests of the analyzer's output files (analyzer/base/output.c)
 * against another user: in a sticky world-writable directory their
 * symlink (at the name or on the way to it) is never followed, and their
 * FIFO never written into, whatever fs.protected_symlinks says; one's own
 * links, and the directory owner's, still are.  The other user is a real
 * one made with useradd (as root; skipped with a reason otherwise).  And
 * the writes on a thread of their own (ga_output_async): the bytes and
 * their order are those written, a failed write stops the caller.  And a
 * signal that ends the process leaves no temporary file behind.
 * Test code, runs offline only.
 */
#include "helpers.h"
#include "tap.h"

#include "base/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256], sticky[300], safe[300], user[32];

static int entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	while (dp && (e = readdir(dp)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (dp)
		closedir(dp);
	return n;
}

/* Writes text to path through ga_output; 0 when it was written. */
static int write_out(const char *path, const char *text, int by_name)
{
	struct ga_output o;
	FILE *f;

	if ((by_name ? ga_output_open_file : ga_output_open)(&o, path, NULL, 0))
		return -1;
	if (by_name) {
		f = fopen(o.tmp, "w");
		if (f) {
			fputs(text, f);
			fclose(f);
		}
	} else {
		fputs(text, o.f);
	}
	return ga_output_close(&o, 1);
}

/* Runs a shell command as the other user. */
static int as_other(const char *cmd)
{
	char line[2200];

	snprintf(line, sizeof(line), "setpriv --reuid=%s --regid=%s --clear-groups sh -c '%s'",
		 user, user, cmd);
	return system(line);
}

static void test_own_links(void)
{
	char link[400], target[400];

	tap_begin("output: one's own symlink in a sticky world-writable directory is followed");
	snprintf(target, sizeof(target), "%s/mine.json", safe);
	snprintf(link, sizeof(link), "%s/mylink.json", sticky);
	helpers_put(target, "old");
	CHECK(symlink(target, link) == 0);
	CHECKF(write_out(link, "new", 0) == 0 && helpers_file_is(target, "new"), "target: not written");
	unlink(link);
	unlink(target);
	tap_end();
}

static void test_other_user(void)
{
	char cmd[2000], link[400], target[400], path[400], secret[400];

	snprintf(secret, sizeof(secret), "%s/app.conf", safe);
	helpers_put(secret, "root only");
	chmod(secret, 0600);

	tap_begin("output: another user's symlink in a sticky directory is not followed");
	snprintf(link, sizeof(link), "%s/trace.json", sticky);
	snprintf(cmd, sizeof(cmd), "ln -s %s %s", secret, link);
	CHECK(as_other(cmd) == 0);
	CHECKF(write_out(link, "export", 0) < 0, "written through the link");
	CHECKF(write_out(link, "export", 1) < 0, "written through the link (by name)");
	CHECKF(helpers_file_is(secret, "root only"), "the link's target changed");
	CHECKF(entries(safe) == 1, "%d files beside the target", entries(safe));
	CHECKF(entries(sticky) == 1, "%d files in the sticky directory", entries(sticky));
	tap_end();

	tap_begin("output: nor one on the way to the name");
	snprintf(link, sizeof(link), "%s/d", sticky);
	snprintf(cmd, sizeof(cmd), "ln -s %s %s", safe, link);
	CHECK(as_other(cmd) == 0);
	snprintf(path, sizeof(path), "%s/d/app.conf", sticky);
	CHECKF(write_out(path, "export", 0) < 0, "written through the directory link");
	snprintf(path, sizeof(path), "%s/d/../d/new.json", sticky);
	CHECKF(write_out(path, "export", 0) < 0, "written through the directory link");
	CHECKF(helpers_file_is(secret, "root only") && entries(safe) == 1, "the target directory changed");
	tap_end();

	tap_begin("output: another user's FIFO in a sticky directory is refused, at once");
	snprintf(path, sizeof(path), "%s/fifo.json", sticky);
	snprintf(cmd, sizeof(cmd), "mkfifo %s", path);
	CHECK(as_other(cmd) == 0);
	alarm(10); /* a blocked open ends the test rather than hanging it */
	CHECKF(write_out(path, "export", 0) < 0, "written into the FIFO");
	alarm(0);
	tap_end();

	tap_begin("output: the links of the directory's owner are followed (the kernel's rule)");
	snprintf(path, sizeof(path), "%s/owned", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -m 1777 %s && chown %s %s", path, user, path);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "ln -s %s/mine.json %s/l.json", safe, path);
	CHECK(as_other(cmd) == 0);
	snprintf(target, sizeof(target), "%s/mine.json", safe);
	snprintf(link, sizeof(link), "%s/owned/l.json", dir);
	CHECKF(write_out(link, "via owner", 0) == 0 && helpers_file_is(target, "via owner"),
	       "the owner's link was not followed");
	unlink(target);
	tap_end();
}

/* The n-th byte of the async test's pattern. */
static unsigned char pat(size_t n)
{
	return (unsigned char)((n * 2654435761u) >> 13);
}

static void test_async(void)
{
	char path[400], *got = NULL;
	size_t total = 0, len = 0, step = 1;
	struct ga_output o;
	unsigned char *buf = malloc(300000);
	FILE *f;
	int rc, during, base = entries("/proc/self/task");

	tap_begin("output: written on a thread, the bytes and their order are those written");
	snprintf(path, sizeof(path), "%s/async.out", dir);
	CHECK(buf != NULL);
	CHECK(ga_output_open(&o, path, NULL, 0) == 0);
	/* Buffered in the stream before the thread takes it over: first in the file. */
	fputs("head,", o.f);
	CHECK(ga_output_async(&o) == 0);
	CHECK(o.aw != NULL && o.real != NULL && o.f != o.real);
	CHECK(ga_output_async(&o) == -1);
	/* Less than a block: no thread yet. */
	fputs("x", o.f);
	fflush(o.f);
	CHECK(entries("/proc/self/task") == base);
	/* Pieces of 1 byte to 280 KB: within a block, across blocks, several blocks. */
	while (buf && total < 13u * 1000 * 1000) {
		size_t n = step % 280000 + 1;

		for (size_t i = 0; i < n; i++)
			buf[i] = pat(total + i);
		CHECK(fwrite(buf, 1, n, o.f) == n);
		total += n;
		step = step * 7 + 3;
	}
	/* A thread now, gone at the close (a sanitizer's own may have started beside). */
	during = entries("/proc/self/task");
	CHECK(during > base);
	rc = ga_output_close(&o, 1);
	CHECK(rc == 0);
	CHECK(entries("/proc/self/task") == during - 1);
	f = fopen(path, "r");
	if (f) {
		got = malloc(total + 16);
		len = got ? fread(got, 1, total + 16, f) : 0;
		fclose(f);
	}
	CHECKF(len == total + 6, "%zu bytes, not %zu", len, total + 6);
	if (got && len == total + 6) {
		size_t bad = SIZE_MAX;

		CHECK(!memcmp(got, "head,x", 6));
		for (size_t i = 0; i < total && bad == SIZE_MAX; i++)
			if ((unsigned char)got[6 + i] != pat(i))
				bad = i;
		CHECKF(bad == SIZE_MAX, "byte %zu differs", bad);
	}
	free(got);
	tap_end();

	if (SANITIZED)
		printf("skip - output: without memory for a block # a sanitizer build: no "
		       "address-space limit\n");
	else
		tap_begin("output: without memory for a block, the caller writes, the bytes in order");
	if (!SANITIZED) {
		pid_t pid = fork();
		int st = -1;

		if (pid == 0) {
			struct rlimit rl;
			long kb = 0;
			char line[256];
			FILE *sf = fopen("/proc/self/status", "r");
			size_t w = 0;

			while (sf && fgets(line, sizeof(line), sf))
				if (!strncmp(line, "VmSize:", 7))
					kb = atol(line + 7);
			if (sf)
				fclose(sf);
			if (!buf || ga_output_open(&o, path, NULL, 0) || ga_output_async(&o))
				_exit(2);
			fputs("head,", o.f);
			/* Room for the stream's buffer, not for a block of the ring. */
			rl.rlim_cur = rl.rlim_max = (rlim_t)(kb + 512) * 1024;
			if (!kb || setrlimit(RLIMIT_AS, &rl))
				_exit(3);
			for (size_t i = 0; i < 300000; i++)
				buf[i] = pat(i);
			for (int k = 0; k < 20; k++)
				w += fwrite(buf, 1, 300000, o.f);
			_exit(w == 20 * 300000 && ga_output_close(&o, 1) == 0 ? 0 : 4);
		}
		if (pid > 0)
			waitpid(pid, &st, 0);
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
		f = fopen(path, "r");
		got = malloc(6000010);
		len = f && got ? fread(got, 1, 6000010, f) : 0;
		if (f)
			fclose(f);
		CHECKF(len == 6000005, "%zu bytes", len);
		if (len == 6000005) {
			size_t bad = SIZE_MAX;

			CHECK(!memcmp(got, "head,", 5));
			for (size_t i = 0; i < 6000000 && bad == SIZE_MAX; i++)
				if ((unsigned char)got[5 + i] != pat(i % 300000))
					bad = i;
			CHECKF(bad == SIZE_MAX, "byte %zu differs", bad);
		}
		free(got);
		tap_end();
	}

	tap_begin("output: a failed write on the thread stops the writer, named at the close");
	if (ga_output_open(&o, "/dev/full", NULL, 0) == 0) {
		size_t wrote = 0;

		CHECK(ga_output_async(&o) == 0);
		/* The thread's first block fails; the caller learns it within the blocks ahead. */
		while (buf && !ferror(o.f) && wrote < 64u * GA_OUTPUT_AHEAD) {
			memset(buf, 'x', 65536);
			wrote += fwrite(buf, 1, 65536, o.f);
		}
		CHECKF(ferror(o.f), "no error after %zu bytes", wrote);
		CHECKF(wrote <= 3 * GA_OUTPUT_AHEAD, "%zu bytes taken after the failure", wrote);
		/* Once failed, what passes the stream's buffer fails at once. */
		CHECK(fwrite(buf, 1, 280000, o.f) < 280000);
		CHECK(ga_output_close(&o, 1) == -1);
	} else {
		CHECK(!"/dev/full opens");
	}
	tap_end();
	free(buf);
}

/*
 * In a child: opens dir/sig.out through ga_output, writes, then raises sig
 * (ignored first when ign); exits 0 after a close that put the file in place.
 */
static void signal_child(int sig, int ign)
{
	struct ga_output o;
	char path[400];

	snprintf(path, sizeof(path), "%s/sig/sig.out", dir);
	signal(sig, ign ? SIG_IGN : SIG_DFL);
	if (ga_output_open(&o, path, NULL, 0))
		_exit(2);
	fputs("new\n", o.f);
	fflush(o.f);
	raise(sig);
	_exit(ga_output_close(&o, 1) == 0 ? 0 : 3);
}

static void test_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	char sdir[320], path[400], cmd[400];

	tap_begin("output: a signal that ends the process removes the temporary file, the old one kept");
	snprintf(sdir, sizeof(sdir), "%s/sig", dir);
	mkdir(sdir, 0755);
	snprintf(path, sizeof(path), "%s/sig.out", sdir);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		FILE *f = fopen(path, "w");
		char line[16] = "";
		pid_t pid;
		int st = 0;

		if (f) {
			fputs("old\n", f);
			fclose(f);
		}
		pid = fork();
		if (pid == 0)
			signal_child(sigs[i], 0);
		waitpid(pid, &st, 0);
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "signal %d: status %d", sigs[i], st);
		CHECKF(entries(sdir) == 1, "signal %d: %d files left", sigs[i], entries(sdir));
		f = fopen(path, "r");
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
		}
		CHECKF(!strcmp(line, "old\n"), "signal %d: the old file holds %s", sigs[i], line);
	}
	tap_end();

	tap_begin("output: a signal the caller ignored leaves the output to finish");
	{
		pid_t pid = fork();
		int st = -1;
		char line[16] = "";
		FILE *f;

		if (pid == 0)
			signal_child(SIGHUP, 1);
		waitpid(pid, &st, 0);
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
		}
		CHECKF(!strcmp(line, "new\n"), "the file holds %s", line);
		CHECK(entries(sdir) == 1);
	}
	tap_end();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", sdir);
}

int main(void)
{
	char cmd[600];
	int have_user = 0;

	snprintf(dir, sizeof(dir), "%s/gp-output.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(dir, 0755);
	snprintf(sticky, sizeof(sticky), "%s/shared", dir);
	snprintf(safe, sizeof(safe), "%s/rootonly", dir);
	mkdir(sticky, 0777);
	chmod(sticky, 01777);
	mkdir(safe, 0755);
	test_own_links();
	test_async();
	test_signals();
	if (geteuid() != 0) {
		printf("skip - output: another user's links and FIFOs # needs root (useradd)\n");
	} else {
		snprintf(user, sizeof(user), "gpout%d", (int)getpid() % 100000);
		snprintf(cmd, sizeof(cmd),
			 "command -v setpriv >/dev/null && useradd -M -d /nonexistent -s /usr/sbin/nologin %s",
			 user);
		have_user = system(cmd) == 0;
		if (have_user)
			test_other_user();
		else
			printf("skip - output: another user's links and FIFOs # useradd or setpriv failed\n");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	if (have_user) {
		snprintf(cmd, sizeof(cmd), "userdel %s", user);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove user %s\n", user);
	}
	return tap_exit();
}
