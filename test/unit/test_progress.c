/*
 * Progress lines on stderr: the recorder's (preload/log.c's
 * gp_log_progress, which --metrics replay uses) and the analyzer's for
 * long reads (base/progress.c, called by the reader).  Each is run in a
 * child whose stderr is a pseudo-terminal, where the line must appear,
 * rewritten with \r and cleared at the end, and in a child whose stderr is
 * a pipe, where it must never appear.  The analyzer's rate limit is
 * checked against a clock the test moves.  Test code, runs offline only,
 * needs no GPU.
 */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/progress.h"
#include "read/reader.h"
#include "synth.h"
#include "tap.h"
#include "../../preload/log.h"

#define T0 1700000000000000000ull

static char trace[64];

/* A clock that moves 100 ms a call. */
static uint64_t fake_ns;
static uint64_t fake_clock(void)
{
	return fake_ns += 100000000ull;
}

static int no_rec(void *ctx, const struct gp_rec *rec)
{
	(void)ctx;
	(void)rec;
	return 0;
}

/* What the child does with its stderr: log through the recorder's logger, or read a trace. */
static void child_recorder(void)
{
	gp_log_progress("metrics: %d launches profiled by kernel replay", 3);
	gp_log_progress("metrics: %d launches profiled by kernel replay", 4);
	gp_log("a line");
	gp_log_progress("metrics: %d launches profiled by kernel replay", 5);
	gp_log_progress_end();
}

static void child_reader(void)
{
	struct ga_read_info info;
	char err[256];

	ga_progress_redirect(NULL, 0, fake_clock);
	ga_reader_read_file(trace, no_rec, NULL, &info, err, sizeof(err));
}

/*
 * Run fn in a child whose stderr is a terminal (tty) or a pipe, and return
 * what it wrote there (malloc'd, NUL-terminated; NULL on failure).
 */
static char *capture(void (*fn)(void), int tty)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, pfd[2], st;
	pid_t pid;

	if (tty) {
		pid = forkpty(&fd, NULL, NULL, NULL);
	} else {
		if (pipe(pfd))
			return NULL;
		pid = fork();
		fd = pfd[0];
		if (pid == 0) {
			dup2(pfd[1], STDERR_FILENO);
			close(pfd[0]);
			close(pfd[1]);
		}
	}
	if (pid < 0)
		return NULL;
	if (pid == 0) {
		fn();
		_exit(0);
	}
	if (!tty)
		close(pfd[1]);
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 10000) <= 0)
			break;
		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb)
				break;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)        /* EOF, or EIO from a pty whose child is gone */
			break;
		len += (size_t)n;
	}
	close(fd);
	waitpid(pid, &st, 0);
	if (!buf && (buf = malloc(1)) == NULL)
		return NULL;
	buf[len] = 0;
	return buf;
}

static int ends_with(const char *s, const char *end)
{
	size_t a = strlen(s), b = strlen(end);

	return a >= b && !memcmp(s + a - b, end, b);
}

static void test_recorder(void)
{
	char *t, *p;

	tap_begin("progress: the recorder's line on a terminal, never in a pipe");
	t = capture(child_recorder, 1);
	CHECKF(t && strstr(t, "\rgpuprof: metrics: 3 launches profiled by kernel replay\x1b[K"
			      "\rgpuprof: metrics: 4 launches profiled by kernel replay\x1b[K") &&
		       /* the next line clears it; the terminal turns \n into \r\n */
		       strstr(t, "\r\x1b[Kgpuprof: a line\r\n") &&
		       ends_with(t, "\rgpuprof: metrics: 5 launches profiled by kernel replay\x1b[K"
				    "\r\x1b[K"),
	       "%s", t ? t : "(no output)");
	p = capture(child_recorder, 0);
	CHECKF(p && !strcmp(p, "gpuprof: a line\n"), "%s", p ? p : "(no output)");
	free(t);
	free(p);
	tap_end();
}

static void test_reader(void)
{
	char *t, *p;

	tap_begin("progress: the analyzer's read of a trace on a terminal, never in a pipe");
	t = capture(child_reader, 1);
	CHECKF(t && strstr(t, "\rgpuprof: reading ") && strstr(t, " MiB (") &&
		       strstr(t, "%)\x1b[K") && ends_with(t, "\r\x1b[K"),
	       "%s", t ? t : "(no output)");
	p = capture(child_reader, 0);
	CHECKF(p && !*p, "%s", p ? p : "(no output)");
	free(t);
	free(p);
	tap_end();
}

/* The rate: nothing in the first period, then one line a period at most. */
static uint64_t step_ns;
static uint64_t step_clock(void)
{
	return step_ns;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; s && (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static void test_rate(void)
{
	static const char name[] = "t.gpuprof";
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	tap_begin("progress: at most 4 lines a second, none for a short read, cleared at the end");
	ga_progress_redirect(f, 1, step_clock);
	/* A read of 200 ms: nothing. */
	for (step_ns = 0; step_ns <= 200000000ull; step_ns += 10000000ull)
		ga_progress_read(name, step_ns, 1000000000ull, 0);
	ga_progress_read(name, 0, 0, 1);
	fflush(f);
	CHECKF(len == 0, "%s", out);
	/* A read of 2 s, a chunk every 10 ms: 7 lines (250, 500, ... 1750 ms), then cleared. */
	for (step_ns = 0; step_ns < 2000000000ull; step_ns += 10000000ull)
		ga_progress_read(name, step_ns / 2, 1000000000ull, 0);
	ga_progress_read(name, 0, 0, 1);
	fflush(f);
	CHECKF(count(out, "\rgpuprof: reading t.gpuprof: ") == 7 && ends_with(out, "%)\x1b[K\r\x1b[K") &&
		       strstr(out, "reading t.gpuprof: 119.2 of 953.7 MiB (12%)"),
	       "%zu: %s", count(out, "\rgpuprof: reading"), out);
	/* Not a terminal: nothing. */
	fclose(f);
	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	ga_progress_redirect(f, 0, step_clock);
	for (step_ns = 0; step_ns < 2000000000ull; step_ns += 10000000ull)
		ga_progress_read(name, step_ns / 2, 1000000000ull, 0);
	ga_progress_read(name, 0, 0, 1);
	fflush(f);
	CHECK(len == 0);
	ga_progress_redirect(NULL, 0, NULL);
	fclose(f);
	free(out);
	tap_end();
}

int main(void)
{
	char dir[] = "/tmp/gpuprof-progress-XXXXXX";
	struct synth *s;
	uint32_t k;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(trace, sizeof(trace), "%s/t.gpuprof", dir);
	/* 20 chunks of 2000 kernels: the fake clock passes 250 ms every 3 chunks. */
	s = synth_open(trace);
	synth_process(s, 1, "h", "app", 0, T0);
	k = synth_string(s, "k");
	for (int c = 0; c < 20; c++) {
		for (int i = 0; i < 2000; i++) {
			uint64_t t = T0 + 1000000 + ((uint64_t)c * 2000 + (uint64_t)i) * 100;

			synth_kernel(s, k, t, t + 50, 0, 7, 0, 0);
		}
		synth_flush_chunk(s);
	}
	synth_end(s, T0 + 100000000, 0);
	synth_close(s, NULL, NULL);
	test_recorder();
	test_reader();
	test_rate();
	unlink(trace);
	rmdir(dir);
	return tap_exit();
}
