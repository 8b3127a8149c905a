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

static int run(char **out, char **err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, err);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return synth_capture(dir, out, err, cmd_export, argc, argv);
}

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

int main(void)
{
	char trace[128], cmd[128], *out = NULL, *err = NULL;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-csvt-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(trace, sizeof(trace), "%s/t.gpuprof", dir);
	write_trace(trace);

	tap_begin("csv --table kernels, memory, api, devices");
	rc = run(&out, &err, "export", "-f", "csv", "--table", "kernels", trace, NULL);
	/* StdDev: the sample deviation of 1000, 2000 and 3000 ns. */
	CHECKF(rc == 0 && !strcmp(out, "name,short_name,mangled,count,total_ns,avg_ns,med_ns,min_ns,"
				  "max_ns,in_graph,stddev_ns\nalpha(),alpha,_Z5alphav,3,6000,2000,2000,"
				  "1000,3000,0,1000\n"), "exit %d: %s%s", rc, out, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-f", "csv", "--table", "memory", trace, NULL);
	CHECKF(rc == 0 && !strncmp(out, "operation,copy_kind,src_kind,dst_kind,count,bytes,total_ns,"
				   "avg_ns,med_ns,min_ns,max_ns,stddev_ns\nmemcpy,HtoD,unknown,unknown,2,"
				   "8192,1000,500,", 111) && strstr(out, "\nmemset,,,unknown,1,64,100,100,"
							       "100,100,100,0\n"), "%s%s", out, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-f", "csv", "--table", "api", trace, NULL);
	CHECKF(rc == 0 && !strcmp(out, "name,count,total_ns,avg_ns,med_ns,min_ns,max_ns,errors,"
				  "threads,stddev_ns\ncudaLaunchKernel,3,300,100,100,100,100,1,1,0\n"),
	       "%s%s", out, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-f", "csv", "--table", "devices", trace, NULL);
	CHECKF(rc == 0 && strstr(out, "host,rank,pid,file,device,name,activities,total_ns,busy_ns\n"
				    "node9,3,77,") && strstr(out, ",0,GPU,6,7100,7100\n"),
	       "%s%s", out, err);
	free(out);
	free(err);
	tap_end();

	tap_begin("csv activities: default, host, rank and file columns");
	rc = run(&out, &err, "export", "-f", "csv", trace, NULL);
	CHECKF(rc == 0 && !strncmp(out, "kind,name,start_ns,end_ns,duration_ns,device,context,stream,"
				   "correlation,bytes,copy_kind,graph_id,graph_node,pid,nvtx,stack,"
				   "host,rank,file\n", 115), "%s%s", out, err);
	CHECKF(strstr(out, ",77,,,node9,3,") && strstr(out, "t.gpuprof\n"), "%s", out);
	free(out);
	free(err);
	tap_end();

	tap_begin("csv --table list and errors");
	rc = run(&out, &err, "export", "-f", "csv", "--table", "list", NULL);
	CHECKF(rc == 0 && strstr(out, "activities ") && strstr(out, "\nkernels ") &&
	       strstr(out, "\nnvtx ") && strstr(out, "\nsites ") && strstr(out, "\ndevices "),
	       "%s", out);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-f", "csv", "--table", "bogus", trace, NULL);
	CHECKF(rc == 2 && strstr(err, "bogus"), "exit %d: %s", rc, err);
	free(out);
	free(err);
	rc = run(&out, &err, "export", "-f", "json", "--table", "kernels", trace, NULL);
	CHECKF(rc == 2 && strstr(err, "no tables"), "exit %d: %s", rc, err);
	free(out);
	free(err);
	tap_end();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
