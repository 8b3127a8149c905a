/*
 * Unit tests of "export --format csv --table NAME": each table's header
 * (units in the column names) and numbers on a synthetic trace with known
 * contents, --table list, and the usage errors.  Test code, runs offline
 * only, needs no GPU.
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

#define run(out, err, ...) synth_run(dir, out, err, cmd_export, __VA_ARGS__)

/* 3 x alpha (1000, 2000, 3000 ns), 2 copies HtoD of 4096 bytes (500 ns), 1 memset, 3 API calls. */
static void write_trace(const char *path)
{
	struct synth *s = synth_open(path);
	uint32_t a, api;
	uint64_t t = T0 + 1000000;

	synth_process(s, 77, "node9", "./app", 3, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET | GP_TRACE_API, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	a = synth_string(s, "_Z5alphav");
	api = synth_string(s, "cudaLaunchKernel");
	for (int i = 1; i <= 3; i++) {
		synth_api(s, api, t, t + 100, 5, i == 3 ? 1 : 0);
		synth_kernel(s, a, t + 200, t + 200 + 1000u * (unsigned)i, 0, 7, 0, 0);
		t += 10000;
	}
	synth_memcpy(s, GP_COPY_HTOD, 4096, t, t + 500, 0, 7);
	synth_memcpy(s, GP_COPY_HTOD, 4096, t + 1000, t + 1500, 0, 7);
	synth_memset(s, 64, t + 2000, t + 2100, 0, 7);
	synth_end(s, t + 10000, 0);
	synth_close(s, NULL, NULL);
}

/*
 * n kernels with shuffled starts, two by two at equal starts (the pair in
 * correlation order), from process pid, the starts offset by off ns.
 */
static void write_shuffled(const char *path, uint32_t pid, unsigned n, uint64_t off)
{
	struct synth *s = synth_open(path);
	uint32_t a;

	synth_process(s, pid, "node9", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	a = synth_string(s, "_Z5alphav");
	for (unsigned i = 0; i < n; i++) {
		uint64_t t = T0 + off + (uint64_t)(i / 2) * 48271u % (n / 2) * 1000;

		synth_kernel(s, a, t, t + 100, 0, 7, 0, 0);
	}
	synth_end(s, T0 + off + (uint64_t)n * 1000, 0);
	synth_close(s, NULL, NULL);
}

/*
 * The activities' rows: how many, whether sorted by start_ns with equal
 * starts in correlation order, and how many shared a start.
 */
static void scan_rows(const char *csv, unsigned *rows, int *sorted, unsigned *ties)
{
	unsigned long long prev = 0, start;
	unsigned prev_corr = 0, corr;
	const char *p = strchr(csv, '\n');

	*rows = *ties = 0;
	*sorted = 1;
	while (p && p[1]) {
		const char *f = p + 1;

		/* kind,name,start_ns,end_ns,duration_ns,device,context,stream,correlation */
		for (int c = 0; c < 2 && f; c++)
			f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
		if (!f || sscanf(f, "%llu,%*u,%*u,%*u,%*u,%*u,%u", &start, &corr) != 2) {
			*sorted = 0;
			return;
		}
		if (*rows && (start < prev || (start == prev && corr <= prev_corr)))
			*sorted = 0;
		*ties += *rows && start == prev;
		prev = start;
		prev_corr = corr;
		(*rows)++;
		p = strchr(f, '\n');
	}
}

int main(void)
{
	char trace[128], shuf[128], shuf2[128], cmd[128], *out = NULL, *err = NULL;
	unsigned rows, ties;
	int sorted;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-csvt-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(trace, sizeof(trace), "%s/t.gpuprof", dir);
	write_trace(trace);

	tap_begin("csv --table kernels, memory, api, devices");
	rc = run(&out, &err, "export", "-t", "csv", "--table", "kernels", trace, NULL);
	/* StdDev: the sample deviation of 1000, 2000 and 3000 ns. */
	CHECKF(rc == 0 && !strcmp(out, "name,short_name,mangled,count,total_ns,avg_ns,med_ns,min_ns,"
				  "max_ns,in_graph,stddev_ns,p90_ns,p99_ns,med_estimated\nalpha(),alpha,"
				  "_Z5alphav,3,6000,2000,2000,1000,3000,0,1000,3000,3000,0\n"), "exit %d: %s%s", rc, out, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-t", "csv", "--table", "memory", trace, NULL);
	CHECKF(rc == 0 && !strncmp(out, "operation,copy_kind,src_kind,dst_kind,count,bytes,total_ns,"
				   "avg_ns,med_ns,min_ns,max_ns,stddev_ns\nmemcpy,HtoD,unknown,unknown,2,"
				   "8192,1000,500,", 111) && strstr(out, "\nmemset,,,unknown,1,64,100,100,"
							       "100,100,100,0\n"), "%s%s", out, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-t", "csv", "--table", "api", trace, NULL);
	CHECKF(rc == 0 && !strcmp(out, "name,count,total_ns,avg_ns,med_ns,min_ns,max_ns,errors,"
				  "threads,stddev_ns,p90_ns,p99_ns,med_estimated\ncudaLaunchKernel,3,300,100,"
				  "100,100,100,1,1,0,100,100,0\n"),
	       "%s%s", out, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-t", "csv", "--table", "devices", trace, NULL);
	CHECKF(rc == 0 && strstr(out, "host,rank,pid,file,device,name,activities,total_ns,busy_ns\n"
				    "node9,3,77,") && strstr(out, ",0,GPU,6,7100,7100\n"),
	       "%s%s", out, err);
	free(out);
	free(err);
	tap_end();

	tap_begin("csv activities: default, host, rank and file columns");
	rc = run(&out, &err, "export", "-t", "csv", trace, NULL);
	CHECKF(rc == 0 && !strncmp(out, "kind,name,start_ns,end_ns,duration_ns,device,context,stream,"
				   "correlation,bytes,copy_kind,graph_id,graph_node,pid,nvtx,stack,"
				   "host,rank,file\n", 115), "%s%s", out, err);
	CHECKF(strstr(out, ",77,,,node9,3,") && strstr(out, "t.gpuprof\n"), "%s", out);
	free(out);
	free(err);
	tap_end();

	/*
	 * Over 8 MiB of rows (72 bytes each as they are sorted): sorted in runs
	 * spilled to a temporary file, then merged; a $TMPDIR that cannot hold
	 * them is named.
	 */
	tap_begin("csv activities sorted by start time, equal starts in the order read");
	snprintf(shuf, sizeof(shuf), "%s/shuf.gpuprof", dir);
	snprintf(shuf2, sizeof(shuf2), "%s/shuf2.gpuprof", dir);
	write_shuffled(shuf, 77, 240000, 1000000);
	write_shuffled(shuf2, 78, 2000, 1500500);
	rc = run(&out, &err, "export", "-t", "csv", shuf, shuf2, NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, err);
	scan_rows(out ? out : "", &rows, &sorted, &ties);
	CHECKF(rows == 242000 && rows > 2 * ((8u << 20) / 72) && sorted && ties == 121000,
	       "%u rows, sorted %d, %u equal starts", rows, sorted, ties);
	free(out);
	free(err);
	{
		const char *env = getenv("TMPDIR");
		char *keep = env ? strdup(env) : NULL;

		setenv("TMPDIR", "/nonexistent/gpuprof-csv", 1);
		rc = run(&out, &err, "export", "-t", "csv", shuf, NULL);
		CHECKF(rc != 0 && err && strstr(err, "sorting the CSV rows") &&
			       strstr(err, "/nonexistent/gpuprof-csv"),
		       "no temporary file: exit %d: %s", rc, err ? err : "");
		if (keep)
			setenv("TMPDIR", keep, 1);
		else
			unsetenv("TMPDIR");
		free(keep);
		free(out);
		free(err);
	}
	rc = run(&out, &err, "export", "-t", "csv", trace, NULL);
	scan_rows(out ? out : "", &rows, &sorted, &ties);
	CHECKF(rc == 0 && rows == 6 && sorted, "small trace: exit %d, %u rows, sorted %d", rc, rows,
	       sorted);
	free(out);
	free(err);
	/* No activity at all: the header alone. */
	{
		char empty[128];
		struct synth *s;

		snprintf(empty, sizeof(empty), "%s/empty.gpuprof", dir);
		s = synth_open(empty);
		synth_process(s, 79, "node9", "./app", UINT32_MAX, T0);
		synth_config(s, GP_TRACE_KERNEL, 0, 0);
		synth_end(s, T0 + 1000, 0);
		synth_close(s, NULL, NULL);
		rc = run(&out, &err, "export", "-t", "csv", empty, NULL);
		scan_rows(out ? out : "", &rows, &sorted, &ties);
		CHECKF(rc == 0 && rows == 0 && out && strchr(out, '\n'),
		       "empty trace: exit %d, %u rows: %s", rc, rows, out ? out : "");
		free(out);
		free(err);
	}
	tap_end();

	tap_begin("csv --table list and errors");
	rc = run(&out, &err, "export", "-t", "csv", "--table", "list", NULL);
	CHECKF(rc == 0 && strstr(out, "activities ") && strstr(out, "\nkernels ") &&
	       strstr(out, "\nnvtx ") && strstr(out, "\nsites ") && strstr(out, "\ndevices "),
	       "%s", out);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-t", "csv", "--table", "bogus", trace, NULL);
	CHECKF(rc == 2 && strstr(err, "bogus"), "exit %d: %s", rc, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-t", "json", "--table", "kernels", trace, NULL);
	CHECKF(rc == 2 && strstr(err, "no tables"), "exit %d: %s", rc, err);
	free(out);
	free(err);
	tap_end();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
