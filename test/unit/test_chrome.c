/*
 * Unit tests of the Chrome export (analyzer/views/chrome.c) on synthetic
 * traces: more than 1024 processes that share one pid (every rank of a
 * containerized job is pid 1) each get a pid of their own, in bounded
 * time.  Test code, runs offline only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

/* A one-kernel trace of pid on host. */
static void write_proc(const char *path, uint32_t pid, const char *host)
{
	struct synth *s = synth_open(path);

	synth_process(s, pid, host, "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_kernel(s, synth_string(s, "_Z1kv"), T0 + 100, T0 + 200, 0, 7, 0, 0);
	synth_end(s, T0 + 1000, 0);
	synth_close(s, NULL, NULL);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/*
 * The pids of the export's processes (process_name events) into pids[],
 * at most max; returns how many, or -1 when one is not a number.
 */
static long process_pids(const char *out, uint64_t *pids, size_t max)
{
	static const char key[] = "{\"name\":\"process_name\",\"ph\":\"M\",\"cat\":\"__metadata\","
				  "\"pid\":";
	const char *p = out;
	size_t n = 0;

	while ((p = strstr(p, key)) != NULL) {
		char *end;

		p += sizeof(key) - 1;
		if (n == max)
			return -1;
		pids[n++] = strtoull(p, &end, 10);
		if (end == p || *end != ',')
			return -1;
	}
	return (long)n;
}

/*
 * 1100 processes of pid 1 (the pid += 1 << 22 of before went round after
 * 1024 and never ended), 3 of pid 1 + (1 << 22) and one of pid 5 + 2^32 -
 * (1 << 22) among them: every process a pid of its own, all JSON numbers
 * below 2^32.
 */
static void test_shared_pids(void)
{
	enum { N = 1100, EXTRA = 4 };
	char **argv = calloc(N + EXTRA + 4, sizeof(*argv));
	uint64_t *pids = calloc(N + EXTRA + 1, sizeof(*pids));
	char *out = NULL, *err = NULL, host[32];
	long n;
	int argc = 0, rc, dup = 0, big = 0;

	tap_begin("chrome: more than 1024 processes of one pid each get a pid of their own");
	if (!argv || !pids) {
		CHECK(!"out of memory");
		tap_end();
		return;
	}
	argv[argc++] = "export";
	argv[argc++] = "-t";
	argv[argc++] = "chrome";
	for (int i = 0; i < N + EXTRA; i++) {
		uint32_t pid = i < N ? 1 : i < N + 3 ? 1 + (1u << 22) : 5u - (1u << 22);

		argv[argc] = malloc(128);
		if (!argv[argc])
			break;
		snprintf(argv[argc], 128, "%s/p%d.gpuprof", dir, i);
		snprintf(host, sizeof(host), "node%d", i);
		write_proc(argv[argc++], pid, host);
	}
	/* Before, the export never ended: fail the test instead of hanging it. */
	alarm(120);
	rc = synth_capture(dir, &out, &err, cmd_export, argc, argv);
	alarm(0);
	n = out ? process_pids(out, pids, N + EXTRA + 1) : -1;
	CHECKF(rc == 0 && n == N + EXTRA, "export exited %d, %ld processes: %.300s", rc, n,
	       err ? err : "");
	if (n > 0) {
		qsort(pids, (size_t)n, sizeof(*pids), cmp_u64);
		for (long i = 0; i < n; i++) {
			dup += i && pids[i] == pids[i - 1];
			big += pids[i] > UINT32_MAX;
		}
	}
	CHECKF(!dup && !big, "%d pids shared, %d not below 2^32", dup, big);
	/* The first of each pid keeps it. */
	CHECK(n > 0 && pids[0] == 1);
	free(out);
	free(err);
	for (int i = 3; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(pids);
	tap_end();
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-chrome-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_shared_pids();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
