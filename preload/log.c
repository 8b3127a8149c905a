/*
 * Logger of the recorder (see log.h).  Runs on application threads, the
 * CUPTI worker and our own threads: no malloc, no stdio, errno preserved.
 */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static int verbose;

void gp_log_set_verbose(int on)
{
	verbose = on;
}

static void vlog(const char *fmt, va_list ap)
{
	char buf[512];
	int saved = errno;
	int n = snprintf(buf, sizeof(buf), "gpuprof: ");
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

void gp_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}
