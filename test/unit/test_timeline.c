/*
 * The text timeline's rows (analyzer/views/text-timeline.c): each
 * duration cell is Warp's format (ga_text_warp_ms()) right-aligned to the
 * column, from 0 ns to days, and the rows come in start order through the
 * sort's runs whether they were added in order or not.  Test code, runs
 * offline only.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "synth.h"
#include "tap.h"
#include "views/text.h"

#define T0 1700000000000000000ull

static char dir[64];

/* The i-th kernel's duration: the awkward ones first, then a spread of them. */
static uint64_t dur_of(uint32_t i)
{
	static const uint64_t edge[] = { 0, 1, 9, 10, 999,
					 1000, 999999, 1000000, 1000001, 9999999,
					 10000000, 12345678, 123456789012ull, 86400000000000ull };

	if (i < sizeof(edge) / sizeof(edge[0]))
		return edge[i];
	return (uint64_t)i * 7919u % 5000000u;
}

/*
 * n kernels, durations dur_of(i); shuffled: added in a scrambled order,
 * so that the rows must be sorted by start.
 */
static void check(uint32_t n, int shuffled)
{
	char path[128], want[64], *out = NULL, *err = NULL;
	struct synth *s;
	uint32_t name, bad = 0, rows = 0;
	const char *p;
	size_t col = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/t%u-%d.gpuprof", dir, n, shuffled);
	s = synth_open(path);
	synth_process(s, 77, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	name = synth_string(s, "_Z1kv");
	for (uint32_t j = 0; j < n; j++) {
		uint32_t i = shuffled ? (uint32_t)((uint64_t)j * 7 % n) : j;
		uint64_t st = T0 + (uint64_t)i * 100000000000000ull;

		synth_kernel(s, name, st, st + dur_of(i), 0, 7 + i % 3, 0, 0);
	}
	synth_end(s, T0 + (uint64_t)n * 100000000000000ull + 1000, 0);
	synth_close(s, NULL, NULL);
	rc = synth_run(dir, &out, &err, cmd_report, "report", "--timeline", "--no-symbolize", path,
		       (char *)NULL);
	CHECKF(rc == 0 && out, "report exited %d: %.300s", rc, err ? err : "");
	p = out ? strstr(out, "CUDA timeline:\n") : NULL;
	CHECK(p);
	/* Past the title, the rule, the head and the rule. */
	for (int k = 0; p && k < 4; k++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	for (; p && rows < n; rows++) {
		const char *bar = strstr(p, " | "), *nl = strchr(p, '\n'), *c = p;

		if (!bar || !nl || bar > nl)
			break;
		if (!col)
			col = (size_t)(bar - p);
		while (*c == ' ')
			c++;
		ga_text_warp_ms(want, sizeof(want), dur_of(rows));
		if ((size_t)(bar - p) != col || (size_t)(bar - c) != strlen(want) ||
		    strncmp(c, want, strlen(want))) {
			if (!bad++)
				CHECKF(0, "row %u: %.*s, want %s right-aligned to %zu", rows,
				       (int)(nl - p), p, want, col);
		}
		p = nl + 1;
	}
	CHECKF(rows == n && !bad, "%u rows of %u, %u wrong", rows, n, bad);
	free(out);
	free(err);
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-timeline-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	tap_begin("timeline: Warp's durations right-aligned, rows in start order");
	check(14, 0);
	check(3001, 0);
	check(3001, 1);
	tap_end();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
