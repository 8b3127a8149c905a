/*
 * Logger of the recorder (see log.h).  Runs on application threads, the
 * CUPTI worker and our own threads: no malloc, no stdio, errno preserved.
 */
#include "log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CLEAR "\r\x1b[K"         /* to the line's start, erase it */

static int verbose;
static _Atomic int tty = -1;       /* stderr is a terminal; -1 not looked up yet */
static _Atomic int shown;          /* a progress line is on it */

void gp_log_set_verbose(int on)
{
	verbose = on;
}

static void vlog(const char *fmt, va_list ap)
{
	char buf[512];
	int saved = errno;
	/* A progress line is overwritten, not followed. */
	int n = snprintf(buf, sizeof(buf), "%sgpuprof: ", atomic_exchange(&shown, 0) ? CLEAR : "");
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);

	if (m < 0)
		m = 0;
	if ((size_t)(n + m) > sizeof(buf) - 2)
		m = (int)sizeof(buf) - 2 - n;
	buf[n + m] = '\n';
	/* One write so lines from several processes do not interleave. */
	if (write(STDERR_FILENO, buf, (size_t)(n + m + 1)) < 0)
		(void)0;
	errno = saved;
}

void gp_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

static int on_tty(void)
{
	int t = atomic_load(&tty);

	if (t < 0) {
		int saved = errno;

		t = isatty(STDERR_FILENO) == 1;
		errno = saved;
		atomic_store(&tty, t);
	}
	return t;
}

void gp_log_progress(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int saved = errno, n, m;

	if (!on_tty())
		return;
	n = snprintf(buf, sizeof(buf), "\rgpuprof: ");
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 4, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	if ((size_t)(n + m) > sizeof(buf) - 4)
		m = (int)sizeof(buf) - 4 - n;
	memcpy(buf + n + m, "\x1b[K", 3);
	atomic_store(&shown, 1);
	if (write(STDERR_FILENO, buf, (size_t)(n + m + 3)) < 0)
		(void)0;
	errno = saved;
}

void gp_log_progress_end(void)
{
	int saved = errno;

	if (atomic_exchange(&shown, 0) && write(STDERR_FILENO, CLEAR, sizeof(CLEAR) - 1) < 0)
		(void)0;
	errno = saved;
}

void gp_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}
