/*
 * Unit tests of "gpuprof diff" on two synthetic runs of one program where
 * one kernel takes twice as long in the second: it must come first with
 * ratio 2.00, unchanged items must hide under --threshold, memsets and
 * the peak of memory in use per device must be compared, and
 * --fail-above must set exit status 3 only when something grew by more
 * than its percentage; long names are cut as in the report unless
 * --full-names, and --top limits the rows of each kind; with -j 2 the two
 * sides are read at once and print what -j 1 prints, warnings in side
 * order.  Test code, runs offline only, needs no GPU.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

#define run(out, err, ...) synth_run(dir, out, err, cmd_diff, __VA_ARGS__)

/*
 * alpha: 10 x 1000 ns; beta: 10 x beta_ns; 20 launch calls of 2000 ns; one
 * copy; one memset; allocations of 1 MiB and alloc_bytes, both freed.
 */
static void write_run_of(const char *path, uint64_t beta_ns, uint64_t alloc_bytes, int steps,
			 int end)
{
	struct synth *s = synth_open(path);
	uint32_t a, b, api;
	uint64_t t = T0 + 1000000;

	synth_process(s, 4242, "node1", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET | GP_TRACE_API |
		     GP_TRACE_MEMORY, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	a = synth_string(s, "_Z5alphav");
	b = synth_string(s, "_Z4betav");
	api = synth_string(s, "cudaLaunchKernel");
	synth_memory(s, GP_MEM_ALLOC, t, 0x100000, 1 << 20, 0, 3, 0);
	synth_memory(s, GP_MEM_ALLOC, t + 10, 0x900000, alloc_bytes, 0, 3, 0);
	synth_memcpy(s, GP_COPY_HTOD, 1 << 20, t, t + 5000, 0, 7);
	synth_memset(s, 1 << 20, t + 6000, t + 7000, 0, 7);
	synth_memory(s, GP_MEM_FREE, t + 8000, 0x100000, 1 << 20, 0, 3, 0);
	synth_memory(s, GP_MEM_FREE, t + 8010, 0x900000, alloc_bytes, 0, 3, 0);
	t += 10000;
	for (int i = 0; i < steps; i++) {
		synth_api(s, api, t, t + 2000, 100, 0);
		synth_kernel(s, a, t + 3000, t + 4000, 0, 7, 0, 0);
		t += 10000;
		synth_api(s, api, t, t + 2000, 100, 0);
		synth_kernel(s, b, t + 3000, t + 3000 + beta_ns, 0, 7, 0, 0);
		t += 10000;
	}
	if (end)
		synth_end(s, t, 0);
	synth_close(s, NULL, NULL);
}

static void write_run(const char *path, uint64_t beta_ns, uint64_t alloc_bytes)
{
	write_run_of(path, beta_ns, alloc_bytes, 10, 1);
}

/* 25 kernels of 300-character names, kernel i taking (i + 1) * scale ns. */
static void write_long_names(const char *path, uint64_t scale)
{
	struct synth *s = synth_open(path);
	uint64_t t = T0 + 1000000;
	char name[320];

	synth_process(s, 4242, "node1", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	for (int i = 0; i < 25; i++) {
		snprintf(name, sizeof(name), "kernel_%02d_%0290d", i, 0);
		synth_kernel(s, synth_string(s, name), t, t + (uint64_t)(i + 1) * scale, 0, 7, 0, 0);
		t += 100000;
	}
	synth_end(s, t, 0);
	synth_close(s, NULL, NULL);
}

/* The longest line of s, in bytes. */
static size_t longest_line(const char *s)
{
	size_t best = 0;

	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (n > best)
			best = n;
		s += n + (e != NULL);
	}
	return best;
}

/* The first table row of the text output (after title, rule, header, rule). */
static const char *first_row(const char *out, char *buf, size_t n)
{
	const char *p = out;

	for (int i = 0; i < 4 && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return "";
	snprintf(buf, n, "%.*s", (int)(strchr(p, '\n') ? strchr(p, '\n') - p : (long)strlen(p)), p);
	return buf;
}

int main(void)
{
	char base[128], nw[128], big[128], row[512], cmd[128], *out = NULL, *err = NULL;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-diff-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(base, sizeof(base), "%s/base.gpuprof", dir);
	snprintf(nw, sizeof(nw), "%s/new.gpuprof", dir);
	snprintf(big, sizeof(big), "%s/big.gpuprof", dir);
	write_run(base, 500, 1 << 20);
	write_run(nw, 1000, 1 << 20);
	write_run(big, 500, 3 << 20);

	tap_begin("diff: the kernel made twice as long comes first, ratio 2.00");
	rc = run(&out, &err, "diff", base, nw, NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, err);
	first_row(out, row, sizeof(row));
	CHECKF(strstr(row, "kernel") && strstr(row, "beta()") && strstr(row, "2.00") &&
	       strstr(row, "+100.0%") && strstr(row, "+5.000 µs"), "first row: %s", row);
	CHECKF(strstr(out, "alpha()") && strstr(out, "memcpy HtoD") && strstr(out, "cudaLaunchKernel") &&
	       strstr(out, "memset unknown") && strstr(out, "memory_usage"), "%s", out);
	free(out);
	free(err);
	tap_end();

	tap_begin("diff --threshold hides unchanged items");
	rc = run(&out, &err, "diff", "--threshold", "10", base, nw, NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, err);
	CHECKF(strstr(out, "beta()") && !strstr(out, "alpha()") && !strstr(out, "memcpy HtoD") &&
	       strstr(out, "1 of 6 items"), "%s", out);
	free(out);
	free(err);
	tap_end();

	tap_begin("diff --json");
	rc = run(&out, &err, "diff", "--json", base, nw, NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, err);
	CHECKF(strstr(out, "\"items\":[\n  {\"kind\":\"kernel\",\"name\":\"beta()\"") &&
	       strstr(out, "\"base_ns\":5000,\"new_ns\":10000,\"delta_ns\":5000,\"change_pct\":100,"
			   "\"ratio\":2}"), "%s", out);
	free(out);
	free(err);
	tap_end();

	tap_begin("diff: the peak of memory in use per device, in bytes");
	rc = run(&out, &err, "diff", base, big, NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, err);
	row[0] = 0;
	for (const char *p = out; (p = strstr(p, "memory_usage")); p++)
		snprintf(row, sizeof(row), "%.*s", (int)(strchr(p, '\n') - p), p);
	CHECKF(strstr(row, "2.00 MiB") && strstr(row, "4.00 MiB") && strstr(row, "+2.00 MiB") &&
	       strstr(row, "+100.0%") && strstr(row, "cuda:0"), "memory_usage row: %s", row);
	free(out);
	free(err);
	rc = run(&out, &err, "diff", "--json", base, big, NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, err);
	CHECKF(strstr(out, "{\"kind\":\"memory_usage\",\"name\":\"cuda:0\",\"in_base\":true,"
			   "\"in_new\":true,\"base_count\":2,\"new_count\":2,\"base_bytes\":2097152,"
			   "\"new_bytes\":4194304,\"delta_bytes\":2097152,\"change_pct\":100,"
			   "\"ratio\":2}") && strstr(out, "\"schema\":2"), "%s", out);
	free(out);
	free(err);
	rc = run(&out, &err, "diff", "--fail-above", "50", base, big, NULL);
	CHECKF(rc == 3, "peak memory grew 100%% over --fail-above 50: exit %d", rc);
	free(out);
	free(err);
	tap_end();

	tap_begin("diff --fail-above: exit status 3 only past the percentage");
	rc = run(&out, &err, "diff", "--fail-above", "50", base, nw, NULL);
	CHECKF(rc == 3, "grew 100%% over --fail-above 50: exit %d", rc);
	CHECKF(strstr(out, "1 item grew by more than 50% (--fail-above)"), "%s", out);
	free(out);
	free(err);
	rc = run(&out, &err, "diff", "--fail-above", "150", base, nw, NULL);
	CHECKF(rc == 0, "grew 100%% under --fail-above 150: exit %d", rc);
	free(out);
	free(err);
	rc = run(&out, &err, "diff", "--fail-above", "0", nw, base, NULL);
	CHECKF(rc == 0, "nothing grew from new to base: exit %d: %s", rc, out);
	free(out);
	free(err);
	tap_end();

	tap_begin("diff: several traces a side with --");
	rc = run(&out, &err, "diff", "--json", base, base, "--", nw, NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, err);
	CHECKF(strstr(out, "{\"kind\":\"kernel\",\"name\":\"alpha()\",\"in_base\":true,\"in_new\":true,"
			   "\"base_count\":20,\"new_count\":10,\"base_ns\":20000,\"new_ns\":10000"),
	       "%s", out);
	free(out);
	free(err);
	tap_end();

	tap_begin("diff cuts long names and shows --top rows per kind");
	{
		char lb[128], ln[128];

		snprintf(lb, sizeof(lb), "%s/long-base.gpuprof", dir);
		snprintf(ln, sizeof(ln), "%s/long-new.gpuprof", dir);
		write_long_names(lb, 1000);
		write_long_names(ln, 2000);
		rc = run(&out, &err, "diff", lb, ln, NULL);
		CHECKF(rc == 0, "exit %d: %s", rc, err);
		CHECKF(longest_line(out) < 250 && strstr(out, "kernel_24_") &&
		       !strstr(out, "kernel_04_") &&
		       strstr(out, "\xe2\x80\xa6 5 more kernels (use --top 0 for all)") &&
		       /* 25 kernels, and the finding of the idle time between them */
		       strstr(out, "21 of 26 items") && strstr(out, "gpu-starvation cuda:0"),
		       "longest line %zu: %s", longest_line(out), out);
		free(out);
		free(err);
		rc = run(&out, &err, "diff", "--full-names", "--top", "0", lb, ln, NULL);
		CHECKF(rc == 0 && longest_line(out) > 300 && strstr(out, "kernel_00_") &&
		       strstr(out, "26 of 26 items") && !strstr(out, "more kernels"),
		       "exit %d, longest line %zu: %s", rc, longest_line(out), out);
		free(out);
		free(err);
		rc = run(&out, &err, "diff", "--top", "2", lb, ln, NULL);
		CHECKF(rc == 0 && strstr(out, "kernel_24_") && strstr(out, "kernel_23_") &&
		       !strstr(out, "kernel_22_") && strstr(out, "23 more kernels"), "%s", out);
		free(out);
		free(err);
		rc = run(&out, &err, "diff", "--top", "-1", lb, ln, NULL);
		CHECKF(rc == 2 && strstr(err, "--top needs a number"), "exit %d: %s", rc, err);
		free(out);
		free(err);
	}
	tap_end();

	/*
	 * Both sides at once (-j 2): the same output as one after the other,
	 * and their warnings (no END record) base first, though the base, 20000
	 * times larger, is read last.
	 */
	tap_begin("diff -j 2 reads both sides at once: the same output, warnings in side order");
	{
		char ob[128], on[128], *out2 = NULL, *err2 = NULL;
		const char *wb, *wn;
		int rc2;

		snprintf(ob, sizeof(ob), "%s/open-base.gpuprof", dir);
		snprintf(on, sizeof(on), "%s/open-new.gpuprof", dir);
		write_run_of(ob, 500, 1 << 20, 200000, 0);
		write_run_of(on, 1000, 1 << 20, 10, 0);
		rc = run(&out, &err, "diff", "-j", "1", ob, on, NULL);
		rc2 = run(&out2, &err2, "diff", "-j", "2", ob, on, NULL);
		CHECKF(rc == 0 && rc2 == 0, "exit %d, %d: %s %s", rc, rc2, err, err2);
		CHECK(out && out2 && !strcmp(out, out2));
		CHECKF(err && err2 && !strcmp(err, err2), "-j 1: %s\n-j 2: %s", err, err2);
		wb = err2 ? strstr(err2, "open-base.gpuprof: no end record") : NULL;
		wn = err2 ? strstr(err2, "open-new.gpuprof: no end record") : NULL;
		CHECKF(wb && wn && wb < wn, "%s", err2 ? err2 : "");
		free(out);
		free(err);
		free(out2);
		free(err2);
	}
	tap_end();

	tap_begin("diff: usage and read errors");
	rc = run(&out, &err, "diff", base, NULL);
	CHECKF(rc == 2 && strstr(err, "two traces"), "one trace: exit %d: %s", rc, err);
	free(out);
	free(err);
	rc = run(&out, &err, "diff", "--threshold", "x", base, nw, NULL);
	CHECKF(rc == 2 && strstr(err, "percentage"), "bad threshold: exit %d: %s", rc, err);
	free(out);
	free(err);
	rc = run(&out, &err, "diff", base, "/nonexistent.gpuprof", NULL);
	CHECKF(rc == 1 && strstr(err, "/nonexistent.gpuprof"), "missing trace: exit %d: %s", rc, err);
	free(out);
	free(err);
	tap_end();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
