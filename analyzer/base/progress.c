/*
 * The progress line of long reads (see progress.h).  Runs offline only.
 */
#include "base/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLEAR "\r\x1b[K"         /* to the line's start, erase it */
#define PERIOD_NS (1000000000ull / GA_PROGRESS_HZ)

static FILE *dest;                 /* NULL: stderr */
static int tty = -1;               /* dest is a terminal; -1 not looked up yet */
static uint64_t (*clock_fn)(void);
static const char *cur;            /* the input being read */
static uint64_t began, last;       /* its read's start, the last line's time */
static int shown;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ga_progress_redirect(FILE *out, int as_tty, uint64_t (*now_ns)(void))
{
	dest = out;
	tty = out ? as_tty != 0 : -1;
	clock_fn = now_ns;
	cur = NULL;
	shown = 0;
}

static void clear(FILE *out)
{
	if (shown) {
		fputs(CLEAR, out);
		fflush(out);
		shown = 0;
	}
}

void ga_progress_read(const char *name, uint64_t done, uint64_t total, int end)
{
	FILE *out = dest ? dest : stderr;
	uint64_t now;

	if (tty < 0)
		tty = isatty(fileno(out)) == 1;
	if (!tty)
		return;
	if (end) {
		clear(out);
		cur = NULL;
		return;
	}
	now = clock_fn ? clock_fn() : mono_ns();
	if (name != cur) {
		cur = name;
		began = last = now;
		return;
	}
	if (now - began < PERIOD_NS || now - last < PERIOD_NS)
		return;
	last = now;
	if (total)
		fprintf(out, "\rgpuprof: reading %s: %.1f of %.1f MiB (%.0f%%)\x1b[K", name,
			(double)done / 1048576.0, (double)total / 1048576.0,
			100.0 * (double)done / (double)total);
	else
		fprintf(out, "\rgpuprof: reading %s: %.1f MiB\x1b[K", name,
			(double)done / 1048576.0);
	fflush(out);
	shown = 1;
}
