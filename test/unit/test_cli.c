/*
 * Unit tests of the report and export subcommands, run in-process on
 * synthetic traces: the Warp-format tables, timeline rules, exit codes,
 * warnings, and well-formed JSON / CSV / Chrome output.  Test code, runs
 * offline only, needs no GPU.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

/* Run a subcommand with stdout and stderr captured (malloc'd strings). */
#define run(out, err, ...) synth_run(dir, out, err, __VA_ARGS__)

/* The program of Warp's documentation example, as a trace. */
static void write_warp_trace(const char *path, int finish)
{
	static const uint64_t dur[2][3] = {
		{ 163840, 306176, 451584 }, { 374784, 707584, 1042432 },
	};
	struct synth *s = synth_open(path);
	uint32_t k, a1, a2;
	int d, i;

	synth_process(s, 1234, "node1", "python3 demo.py", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET | GP_TRACE_API, 0, 0);
	synth_device(s, 0, "NVIDIA GeForce RTX 4090", 8, 9, 128, 24ull << 30, 0x10);
	synth_device(s, 1, "NVIDIA GeForce RTX 3090", 8, 6, 82, 24ull << 30, 0x40);
	k = synth_string(s, "_Z8inc_loopPfi");
	a1 = synth_string(s, "cudaLaunchKernel");
	a2 = synth_string(s, "cudaMemcpyAsync");
	for (d = 0; d < 2; d++) {
		uint64_t b = T0 + 1000000 + (uint64_t)d * 10000000;

		synth_memset(s, 40000000, b, b + (d ? 51200 : 21504), (uint32_t)d, 7);
		b += 100000;
		for (i = 0; i < 3; i++) {
			synth_api(s, a1, b - 5000, b - 1000, 1234, 0);
			synth_kernel(s, k, b, b + dur[d][i], (uint32_t)d, 7, 0, 0);
			b += dur[d][i] + 1000;
		}
		synth_api(s, a2, b - 5000, b - 1000, 1234, d);
		synth_memcpy(s, GP_COPY_DTOH, 40000000, b, b + (d ? 2136096 : 2455520),
			     (uint32_t)d, 7);
		synth_flush_chunk(s);
	}
	if (finish)
		synth_end(s, T0 + 50000000, 0);
	synth_close(s, NULL, NULL);
}

/* ---- a small JSON syntax checker ---- */

static const char *jv(const char *p, int depth);

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *jstring(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				int i;

				for (i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *jv(const char *p, int depth)
{
	p = ws(p);
	if (depth > 64)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = jstring(ws(p));
				if (!p || *(p = ws(p)) != ':')
					return NULL;
				p++;
			}
			p = jv(p, depth + 1);
			if (!p)
				return NULL;
			p = ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return jstring(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		char *end;

		strtod(p, &end);
		return end > p ? end : NULL;
	}
	return NULL;
}

static int json_ok(const char *s)
{
	const char *e = s ? jv(s, 0) : NULL;

	return e && *ws(e) == '\0';
}

static size_t lines(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static void test_report_warp(const char *trace)
{
	static const char timeline[] =
		"CUDA timeline:\n"
		"----------------+---------+----------------\n"
		"Duration        | Device  | Activity\n"
		"----------------+---------+----------------\n"
		"    0.021504 ms | cuda:0  | memset\n"
		"    0.163840 ms | cuda:0  | kernel inc_loop\n"
		"    0.306176 ms | cuda:0  | kernel inc_loop\n"
		"    0.451584 ms | cuda:0  | kernel inc_loop\n"
		"    2.455520 ms | cuda:0  | memcpy DtoH\n"
		"    0.051200 ms | cuda:1  | memset\n"
		"    0.374784 ms | cuda:1  | kernel inc_loop\n"
		"    0.707584 ms | cuda:1  | kernel inc_loop\n"
		"    1.042432 ms | cuda:1  | kernel inc_loop\n"
		"    2.136096 ms | cuda:1  | memcpy DtoH\n";
	static const char summaries[] =
		"CUDA activity summary:\n"
		"----------------+---------+----------------\n"
		"Total time      | Count   | Activity\n"
		"----------------+---------+----------------\n"
		"    4.591616 ms |       2 | memcpy DtoH\n"
		"    3.046400 ms |       6 | kernel inc_loop\n"
		"    0.072704 ms |       2 | memset\n"
		"\n"
		"CUDA device summary:\n"
		"----------------+---------+----------------\n"
		"Total time      | Count   | Device\n"
		"----------------+---------+----------------\n"
		"    3.398624 ms |       5 | cuda:0\n"
		"    4.312096 ms |       5 | cuda:1\n";
	char *out, *err;
	int rc;

	tap_begin("report prints Warp's CUDA timeline and summaries");
	rc = run(&out, &err, cmd_report, "report", trace, NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err);
	CHECKF(out && strstr(out, timeline), "%s", out ? out : "");
	CHECK(out && strstr(out, summaries));
	CHECK(out && strstr(out, "Lost records: none\n"));
	CHECK(out && strstr(out, "GPU busy:     23.7% cuda:0, 30.0% cuda:1\n"));
	CHECK(out && strstr(out, "Records:      6 kernel, 2 memcpy, 2 memset, 0 graph, 8 API"));
	CHECK(out && strstr(out, "cuda:0  NVIDIA GeForce RTX 4090, cc 8.9, 128 SMs, 24.00 GiB, "
			    "GPU-10111213\n"));
	/* StdDev: the sample deviation of the six durations; P90, P99: the 6th of 6. */
	CHECK(out && strstr(out, "| 507.733 \xc2\xb5s | 413.184 \xc2\xb5s | 163.840 \xc2\xb5s "
			    "| 1.042 ms | 317.981 \xc2\xb5s | 1.042 ms | 1.042 ms | "
			    "inc_loop(float*, int)\n"));
	CHECK(out && strstr(out, "|  76.29 MiB |   17.42 GB/s | memcpy DtoH (unknown \xe2\x86\x92 "
			    "unknown)\n"));
	CHECK(out && strstr(out, "|      1 | cudaMemcpyAsync\n"));
	CHECK(err && !*err);
	free(out);
	free(err);

	rc = run(&out, &err, cmd_report, "report", "--no-timeline", trace, NULL);
	CHECK(rc == 0 && out && !strstr(out, "CUDA timeline:") && strstr(out, summaries));
	free(out);
	free(err);

	rc = run(&out, &err, cmd_report, "report", "--top", "1", trace, trace, NULL);
	CHECK(rc == 0 && out && strstr(out, "\xe2\x80\xa6 1 more API functions (use --top 0 for all)"));
	/* The same file twice reads as two processes with the same pid. */
	CHECK(out && strstr(out, "    0.021504 ms | cuda:0 [1234] | memset\n"));
	free(out);
	free(err);
	tap_end();
}

static void test_report_rules(const char *trace)
{
	char *out, *err, path[128], cut[128];
	unsigned char *buf;
	size_t len;
	struct synth *s;
	uint32_t k;
	int rc, i;
	FILE *f;

	tap_begin("report exit codes, warnings and timeline rules");
	rc = run(&out, &err, cmd_report, "report", NULL);
	CHECK(rc == 2 && err && strstr(err, "no trace file given"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--bogus", trace, NULL);
	CHECK(rc == 2 && err && strstr(err, "unknown option '--bogus'"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--top", "x", trace, NULL);
	CHECK(rc == 2);
	free(out);
	free(err);
	/* -j: a number of decoding threads, 0 (one per CPU) to 64; the report is the same. */
	{
		char *o1 = NULL, *o3 = NULL;

		rc = run(&o1, &err, cmd_report, "report", "-j", "1", trace, NULL);
		CHECK(rc == 0 && o1);
		free(err);
		rc = run(&o3, &err, cmd_report, "report", "--jobs", "3", trace, NULL);
		CHECK(rc == 0 && o1 && o3 && !strcmp(o1, o3));
		free(err);
		free(o1);
		free(o3);
		rc = run(&out, &err, cmd_report, "report", "-j", "65", trace, NULL);
		CHECK(rc == 2 && err && strstr(err, "-j needs a number from 0 (one per CPU) to 64, "
						   "not '65'"));
		free(out);
		free(err);
		rc = run(&out, &err, cmd_export, "export", "-t", "json", "-j", "x", trace, NULL);
		CHECK(rc == 2 && err && strstr(err, "gpuprof export: -j needs a number"));
		free(out);
		free(err);
		rc = run(&out, &err, cmd_report, "report", trace, "-j", NULL);
		CHECK(rc == 2 && err && strstr(err, "needs a value"));
		free(out);
		free(err);
		ga_reader_jobs = 0;
	}
	rc = run(&out, &err, cmd_report, "report", "--help", NULL);
	CHECK(rc == 0 && out && strstr(out, "usage: gpuprof report"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "/etc/hostname", NULL);
	CHECK(rc == 1 && err && strstr(err, "gpuprof: /etc/hostname: byte 0: "));
	free(out);
	free(err);

	/* A cut trace still reports, with a warning in the header and on stderr. */
	buf = synth_slurp(trace, &len);
	if (buf) {
		/* Cut inside the second chunk, the one with cuda:1's work. */
		struct gp_chunk_header ch;
		size_t second;

		memcpy(&ch, buf + sizeof(struct gp_file_header), sizeof(ch));
		second = sizeof(struct gp_file_header) + sizeof(ch) + ch.comp_size;
		len = second + sizeof(ch) + 5;
	}
	snprintf(cut, sizeof(cut), "%s/cut.gpuprof", dir);
	f = fopen(cut, "wb");
	CHECK(buf && f && fwrite(buf, 1, len, f) == len);
	if (f)
		fclose(f);
	free(buf);
	rc = run(&out, &err, cmd_report, "report", cut, NULL);
	CHECKF(rc == 0, "rc %d", rc);
	CHECK(err && strstr(err, "gpuprof: warning: ") && strstr(err, "trace truncated at byte "));
	CHECK(out && strstr(out, "Warnings:     ") && strstr(out, "bytes not read"));
	CHECK(out && strstr(out, "    0.163840 ms | cuda:0  | kernel inc_loop\n"));
	CHECK(out && !strstr(out, "cuda:1  | kernel"));
	free(out);
	free(err);

	/* More than 50 activities: no timeline unless asked for. */
	snprintf(path, sizeof(path), "%s/many.gpuprof", dir);
	s = synth_open(path);
	k = synth_string(s, "_Z4longIiEvv");
	for (i = 0; i < 51; i++)
		synth_kernel(s, k, T0 + (uint64_t)i * 10, T0 + (uint64_t)i * 10 + 5, 0, 1, 0, 0);
	synth_close(s, NULL, NULL);
	rc = run(&out, &err, cmd_report, "report", path, NULL);
	CHECK(rc == 0 && out && !strstr(out, "CUDA timeline:"));
	CHECK(err && strstr(err, "no end record"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--timeline", path, NULL);
	CHECK(rc == 0 && out && strstr(out, "CUDA timeline:") && lines(out) > 51);
	CHECK(out && strstr(out, "| kernel long<int>\n"));
	free(out);
	free(err);
	tap_end();
}

static void test_report_losses(void)
{
	char *out, *err, path[128];
	struct synth *s;
	int rc;

	tap_begin("report states losses by cause and what avoids them");
	snprintf(path, sizeof(path), "%s/lost.gpuprof", dir);
	s = synth_open(path);
	synth_kernel(s, synth_string(s, "k"), T0, T0 + 10, 0, 1, 0, 0);
	synth_lost(s, GP_LOST_CUPTI_DROPPED, 7);
	synth_lost(s, GP_LOST_RING_FULL, 3);
	synth_lost(s, GP_LOST_NO_TIMESTAMP, 1);
	synth_end(s, T0 + 100, 11);
	synth_close(s, NULL, NULL);
	rc = run(&out, &err, cmd_report, "report", path, NULL);
	CHECK(rc == 0);
	CHECKF(out && strstr(out, "Lost records: 11 (dropped by CUPTI: 7, recorder ring full: 3, "
			     "no timestamp: 1)\n"), "%s", out ? out : "");
	CHECK(out && strstr(out, "GPUPROF_BUFFER_KIB") && strstr(out, "GPUPROF_RING_CHUNKS"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "-t", "json", path, NULL);
	CHECK(rc == 0 && out && strstr(out, "\"lost\":{\"total\":11,\"cupti_dropped\":7,"
				       "\"ring_full\":3,\"no_timestamp\":1,"));
	free(out);
	free(err);
	tap_end();
}

static void test_export(const char *trace)
{
	char *out, *err, path[128];
	unsigned char *buf;
	size_t len;
	int rc;

	tap_begin("export json, csv and chrome");
	rc = run(&out, &err, cmd_export, "export", "--format", "json", trace, NULL);
	CHECKF(rc == 0, "rc %d %s", rc, err);
	CHECKF(json_ok(out), "bad JSON: %s", out ? out : "");
	CHECK(out && strstr(out, "\"counts\":{\"kernel\":6,\"memcpy\":2,\"memset\":2,\"graph\":0,"
			    "\"api\":8"));
	CHECK(out && strstr(out, "{\"name\":\"inc_loop(float*, int)\""));
	CHECK(out && strstr(out, "\"mangled\":\"_Z8inc_loopPfi\",\"count\":6,\"total_ns\":3046400,"
			    "\"avg_ns\":507733,\"med_ns\":413184,\"min_ns\":163840,\"max_ns\":1042432,"
			    "\"stddev_ns\":317981,\"p90_ns\":1042432,\"p99_ns\":1042432,\"in_graph\":0}"));
	CHECK(out && strstr(out, "{\"kind\":\"DtoH\",\"count\":2,\"bytes\":80000000,"
			    "\"total_ns\":4591616}"));
	CHECK(out && strstr(out, "\"uuid\":\"GPU-10111213-1415-1617-1819-1a1b1c1d1e1f\",\"cc\":\"8.9\""));
	CHECK(out && strstr(out, "\"rank\":null"));
	CHECK(out && strstr(out, "\"lost\":{\"total\":0,"));
	CHECK(out && strstr(out, "\"streams\":2, \"api_threads\":1, \"span_ns\":14363896"));
	free(out);
	free(err);

	rc = run(&out, &err, cmd_export, "export", "--format", "csv", trace, NULL);
	CHECK(rc == 0 && out && lines(out) == 11);
	CHECK(out && !strncmp(out, "kind,name,start_ns,end_ns,duration_ns,device,context,stream,"
			      "correlation,bytes,copy_kind,graph_id,graph_node,pid\n", 60));
	CHECK(out && strstr(out, "\nkernel,\"inc_loop(float*, int)\",1700000000001100000,"
			    "1700000000001263840,163840,0,1,7,"));
	CHECK(out && strstr(out, ",40000000,DtoH,0,0,1234,"));
	free(out);
	free(err);

	snprintf(path, sizeof(path), "%s/trace.json", dir);
	rc = run(&out, &err, cmd_export, "export", "-t", "chrome", "-o", path, trace, NULL);
	CHECK(rc == 0 && out && !*out);
	buf = synth_slurp(path, &len);
	if (buf)
		buf[len] = '\0';
	CHECKF(buf && json_ok((char *)buf), "bad chrome JSON");
	/* Times relative to the whole second before the first record, exact. */
	CHECK(buf && strstr((char *)buf, "\"ph\":\"X\",\"pid\":1234,\"tid\":1073741824,"
			    "\"ts\":1100.000,\"dur\":163.840"));
	CHECK(buf && strstr((char *)buf, "\"gpuprof_time_base_ns\":\"1700000000000000000\""));
	CHECK(buf && strstr((char *)buf, "\"cat\":\"__metadata\""));
	CHECK(buf && strstr((char *)buf, "\"name\":\"thread_name\""));
	CHECK(buf && strstr((char *)buf, "\"cat\":\"api\",\"ph\":\"X\",\"pid\":1234,\"tid\":1234"));
	free(buf);
	free(out);
	free(err);

	rc = run(&out, &err, cmd_export, "export", "--format", "xml", trace, NULL);
	CHECK(rc == 2);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", trace, NULL);
	CHECK(rc == 2 && err && strstr(err, "--format"));
	free(out);
	free(err);
	tap_end();
}

static int file_equals(const char *path, const char *want, size_t n)
{
	unsigned char *buf;
	size_t len;
	int same;

	buf = synth_slurp(path, &len);
	same = buf && len == n && !memcmp(buf, want, n);
	free(buf);
	return same;
}

/* export -o never destroys what it was pointed at when something fails. */
static void test_export_output_safety(const char *trace)
{
	char *out, *err, path[128], link[128], target[128], copy[128];
	unsigned char *orig;
	size_t olen;
	struct stat st;
	int rc, fd;

	tap_begin("export -o keeps the old output when an input cannot be read");
	snprintf(path, sizeof(path), "%s/old.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "old", 3) == 3);
	close(fd);
	rc = run(&out, &err, cmd_export, "export", "-t", "json", "-o", path, "/nonexistent", NULL);
	CHECKF(rc == 1 && file_equals(path, "old", 3), "rc %d, old output changed", rc);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "-t", "json", "-o", path, trace, NULL);
	CHECKF(rc == 0 && !file_equals(path, "old", 3), "rc %d, output not replaced", rc);
	free(out);
	free(err);
	tap_end();

	tap_begin("export -o through a symlink: target kept on failure, written on success");
	snprintf(target, sizeof(target), "%s/target.txt", dir);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
	close(fd);
	CHECK(symlink(target, link) == 0);
	rc = run(&out, &err, cmd_export, "export", "-t", "json", "-o", link, "/nonexistent", NULL);
	CHECKF(rc == 1 && file_equals(target, "keep", 4) && lstat(link, &st) == 0 &&
		       S_ISLNK(st.st_mode),
	       "rc %d: the link or its target was touched", rc);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "-t", "csv", "-o", link, trace, NULL);
	CHECKF(rc == 0 && lstat(link, &st) == 0 && S_ISLNK(st.st_mode) &&
		       !file_equals(target, "keep", 4),
	       "rc %d: the target was not written through the link", rc);
	free(out);
	free(err);
	tap_end();

	tap_begin("export -o naming an input is refused, the input intact");
	snprintf(copy, sizeof(copy), "%s/input.gpuprof", dir);
	orig = synth_slurp(trace, &olen);
	fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(orig && fd >= 0 && write(fd, orig, olen) == (ssize_t)olen);
	close(fd);
	rc = run(&out, &err, cmd_export, "export", "-t", "json", "-o", copy, copy, NULL);
	CHECKF(rc == 1 && err && strstr(err, "is the input") && file_equals(copy, (char *)orig, olen),
	       "rc %d: %s", rc, err ? err : "");
	free(out);
	free(err);
	free(orig);
	tap_end();

	/* Usage errors after a filter: nothing leaks (LeakSanitizer in SAN builds). */
	tap_begin("usage errors after a filter option free the filter");
	rc = run(&out, &err, cmd_report, "report", "--kernel", "foo", "--top", "x", trace, NULL);
	CHECKF(rc == 2, "report --top x: rc %d", rc);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--kernel", "foo", "--format", "xml", trace, NULL);
	CHECKF(rc == 2, "export --format xml: rc %d", rc);
	free(out);
	free(err);
	tap_end();

	/* -f is --force (gpuprof run, as nsys); export's format is -t/--format/--type. */
	tap_begin("export: -t, --format and --type name the format; -f says so");
	rc = run(&out, &err, cmd_export, "export", "--type", "csv", "--table", "list", NULL);
	CHECKF(rc == 0 && strstr(out, "kernels"), "export --type csv: rc %d: %s", rc, err);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--format=csv", "--table", "list", NULL);
	CHECKF(rc == 0 && strstr(out, "kernels"), "export --format=csv: rc %d: %s", rc, err);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "-f", "json", trace, NULL);
	CHECKF(rc == 2 && strstr(err, "-f is not the format") && strstr(err, "-t FORMAT"),
	       "export -f json: rc %d: %s", rc, err);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--stats=true", "-t", "json", trace, NULL);
	CHECKF(rc == 2 && strstr(err, "unknown option '--stats=true'"),
	       "export --stats=true: rc %d: %s", rc, err);
	free(out);
	free(err);
	tap_end();

	tap_begin("--version after any option of report, export and diff");
	rc = run(&out, &err, cmd_report, "report", "--top", "3", "--version", NULL);
	CHECKF(rc == 0 && !strncmp(out, "gpuprof ", 8), "report --version: rc %d: %s", rc, out);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "-t", "json", "--version", NULL);
	CHECKF(rc == 0 && !strncmp(out, "gpuprof ", 8), "export --version: rc %d: %s", rc, out);
	free(out);
	free(err);
	rc = run(&out, &err, cmd_diff, "diff", "--json", "--version", NULL);
	CHECKF(rc == 0 && !strncmp(out, "gpuprof ", 8), "diff --version: rc %d: %s", rc, out);
	free(out);
	free(err);
	tap_end();

	tap_begin("a device is refused before it is read");
	/* Read whole before this was fixed: /dev/zero grew without end. */
	rc = run(&out, &err, cmd_report, "report", "/dev/zero", NULL);
	CHECKF(rc == 1 && err && strstr(err, "/dev/zero: a device, not a trace: refused"),
	       "rc %d: %s", rc, err ? err : "");
	free(out);
	free(err);
	tap_end();

	tap_begin("export -o /dev/null with a bad input leaves the device alone");
	rc = run(&out, &err, cmd_export, "export", "-t", "json", "-o", "/dev/null", "/nonexistent",
		 NULL);
	CHECKF(rc == 1 && stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
	       "rc %d, /dev/null is gone or changed", rc);
	free(out);
	free(err);
	tap_end();
}

/*
 * Three peer copies of 4 MB between GPUs without peer access, staged by
 * the driver through the host: each a DtoH leg on device 0 and an HtoD leg
 * on device 1 with one correlation id.  Besides, one real DtoH and one real
 * HtoD.  The memory table counts three peer copies of 12 MB, each taking
 * its two legs' whole span, and the one DtoH and one HtoD.
 */
static void test_staged_peer(void)
{
	char path[128], *out, *err;
	struct synth *s;
	int rc;

	snprintf(path, sizeof(path), "%s/staged.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 77, "h", "peer", 0, T0);
	synth_device(s, 0, "GPU A", 9, 0, 132, 1ull << 36, 1);
	synth_device(s, 1, "GPU B", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY, 0, 0);
	for (uint32_t i = 0; i < 3; i++) {
		uint64_t t = T0 + 1000000 + i * 100000;

		synth_memcpy_corr(s, GP_COPY_DTOH, 4000000, t, t + 1000, 0, 900 + i);
		synth_memcpy_corr(s, GP_COPY_HTOD, 4000000, t + 2000, t + 2500, 1, 900 + i);
	}
	synth_memcpy_corr(s, GP_COPY_DTOH, 100, T0 + 2000000, T0 + 2000100, 0, 950);
	synth_memcpy_corr(s, GP_COPY_HTOD, 100, T0 + 2000200, T0 + 2000300, 1, 951);
	synth_end(s, T0 + 3000000, 0);
	synth_close(s, NULL, NULL);

	tap_begin("peer copies staged through the host count once, as peer copies");
	rc = run(&out, &err, cmd_export, "export", "--format", "json", path, NULL);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	CHECKF(out && strstr(out, "{\"kind\":\"PtoP-staged\",\"count\":3,\"bytes\":12000000,"
			       "\"total_ns\":7500}"), "%s", out ? out : "");
	CHECKF(out && strstr(out, "{\"kind\":\"DtoH\",\"count\":1,\"bytes\":100,\"total_ns\":100}") &&
		       strstr(out, "{\"kind\":\"HtoD\",\"count\":1,\"bytes\":100,\"total_ns\":100}"),
	       "%s", out ? out : "");
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", "--timeline", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, "memcpy PtoP-staged") &&
		       strstr(out, "|     3 |") && strstr(out, "|  11.44 MiB |"),
	       "%s", out ? out : "");
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--format", "csv", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, ",4000000,PtoP-staged,") && lines(out) == 9,
	       "%s", out ? out : "");
	free(out);
	free(err);
	tap_end();
}

/* A 64-rank job: 64 traces of 1000 kernels each merge into one report. */
static void test_merge_64(void)
{
	enum { NT = 64, NK = 1000 };
	char *paths[NT], *argv[NT + 4], *out = NULL, *err = NULL;
	int rc, argc = 0;

	for (int r = 0; r < NT; r++) {
		struct synth *s;
		uint32_t name;

		paths[r] = malloc(128);
		snprintf(paths[r], 128, "%s/rank%02d.gpuprof", dir, r);
		s = synth_open(paths[r]);
		synth_process(s, 1000 + (uint32_t)r, "node", "python3 train.py", (uint32_t)r, T0);
		/* A GPU each; rank r's kernels r ns longer, its process r us longer. */
		synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, (uint8_t)(1 + r));
		synth_config(s, GP_TRACE_KERNEL, 0, 0);
		name = synth_string(s, "_Z4stepv");
		for (int k = 0; k < NK; k++)
			synth_kernel(s, name, T0 + 1000000 + (uint64_t)k * 1000,
				     T0 + 1000500 + (uint64_t)r + (uint64_t)k * 1000, 0, 7, 0, 0);
		synth_end(s, T0 + 9000000 + (uint64_t)r * 1000, 0);
		synth_close(s, NULL, NULL);
	}
	tap_begin("64 traces of a 64-rank job merge; the report sums up its header and tables");
	argv[argc++] = "export";
	argv[argc++] = "--format";
	argv[argc++] = "json";
	for (int r = 0; r < NT; r++)
		argv[argc++] = paths[r];
	argv[argc] = NULL;
	rc = synth_capture(dir, &out, &err, cmd_export, argc, argv);
	CHECKF(rc == 0 && out && strstr(out, "\"counts\":{\"kernel\":64000,"), "rc %d %s", rc,
	       err ? err : "");
	CHECKF(out && strstr(out, "\"rank\":63") && strstr(out, "\"rank\":0"), "ranks missing");
	free(out);
	free(err);
	argv[0] = "report";
	argv[1] = paths[0];
	argv[2] = paths[1];
	for (int r = 2; r < NT; r++)
		argv[r + 1] = paths[r];
	argv[NT + 1] = NULL;
	rc = synth_capture(dir, &out, &err, cmd_report, NT + 1, argv);
	CHECKF(rc == 0 && out && strstr(out, "64000 kernel"), "rc %d %s", rc, err ? err : "");
	/* More than 16 of each: the header sums them up, the tables list the top 20. */
	CHECKF(out && strstr(out, "Files:        64 traces, ") && strstr(out, "rank00.gpuprof to ") &&
		       strstr(out, "rank63.gpuprof (--top 0 lists each)\n") &&
		       !strstr(out, "rank01.gpuprof") &&
		       strstr(out, "Processes:    64, ranks 0 to 63, on node: python3 train.py\n") &&
		       strstr(out, "GPU:          64 GPUs: GPU, cc 9.0, 132 SMs, 64.00 GiB\n") &&
		       strstr(out, "Process time: 9.031 ms median, 9.000 ms to 9.063 ms (64 processes, "
				   "recorder start to end)\n") &&
		       strstr(out, "GPU busy:     53.2% median, 50.0% cuda:0 [rank 0] to 56.3% cuda:0 "
				   "[rank 63] (64 GPUs)\n") &&
		       strstr(out, "\xe2\x80\xa6 44 more devices (use --top 0 for all)\n") &&
		       strstr(out, "\xe2\x80\xa6 44 more ranks (use --top 0 for all)\n"),
	       "%s", out ? out : "");
	free(out);
	free(err);
	/* --top 0: each one, as before. */
	memmove(argv + 2, argv + 1, NT * sizeof(*argv));
	argv[1] = "--top=0";
	argv[NT + 2] = NULL;
	rc = synth_capture(dir, &out, &err, cmd_report, NT + 2, argv);
	CHECKF(rc == 0 && out && strstr(out, "rank01.gpuprof (") &&
		       strstr(out, "9.063 ms (rank 63, recorder start to end)\n") &&
		       strstr(out, "56.3% cuda:0 [rank 63]\n") && strstr(out, "rank 62 ") &&
		       !strstr(out, "more ranks"),
	       "rc %d %s", rc, out ? out : "");
	free(out);
	free(err);
	tap_end();
	for (int r = 0; r < NT; r++)
		free(paths[r]);
}

/*
 * Windows (capture ranges from gpuprof start/stop) and a flight-recorder
 * dump: the report names them, and what the dump dropped by design is not
 * a loss.
 */
static void test_windows_and_flight(void)
{
	char path[128];
	char *out = NULL, *err = NULL;
	struct synth *s;
	struct gp_rec_capture_range cr;
	struct gp_rec_flight fl;
	uint32_t k;
	int rc;

	snprintf(path, sizeof(path), "%s/windows.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4321, "node1", "./server", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "NVIDIA H100", 9, 0, 132, 80ull << 30, 0x10);
	k = synth_string(s, "_Z8inc_loopPfi");
	synth_kernel(s, k, T0 + 1500000000ull, T0 + 1500001000ull, 0, 7, 0, 0);
	synth_kernel(s, k, T0 + 4500000000ull, T0 + 4500001000ull, 0, 7, 0, 0);
	memset(&cr, 0, sizeof(cr));
	cr.h.type = GP_REC_CAPTURE_RANGE;
	cr.h.size = sizeof(cr);
	cr.kind = GP_CAPTURE_CONTROL;
	cr.start = T0 + 1000000000ull;
	cr.end = T0 + 2000000000ull;
	synth_rec(s, &cr, sizeof(cr));
	cr.start = T0 + 4000000000ull;
	cr.end = T0 + 5500000000ull;
	synth_rec(s, &cr, sizeof(cr));
	memset(&fl, 0, sizeof(fl));
	fl.h.type = GP_REC_FLIGHT;
	fl.h.size = sizeof(fl);
	fl.start = T0 + 3000000000ull;
	fl.end = T0 + 6000000000ull;
	fl.dropped_records = 123456;
	fl.dropped_chunks = 7;
	fl.dropped_bytes = 3ull << 20;
	fl.size = 16ull << 20;
	fl.trigger = GP_DUMP_SIGNAL;
	fl.detail = 12;
	fl.dump = 2;
	synth_rec(s, &fl, sizeof(fl));
	synth_end(s, T0 + 6000000000ull, 0);
	synth_close(s, NULL, NULL);

	tap_begin("report: windows and a flight-recorder dump, dropped records not lost");
	rc = run(&out, &err, cmd_report, "report", path, NULL);
	CHECKF(rc == 0 && out, "rc %d: %s", rc, err ? err : "");
	CHECKF(out && strstr(out, "Windows:      2 (gpuprof start/stop), 2.500 s in all: "
			      "1.000-2.000 s, 4.000-5.500 s after the recorder started\n"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "Flight dump:  dump 2, on SIGUSR2 (12); covers the last 3.000 s "
			      "(3.000-6.000 s after the recorder started)\n"), "%s", out ? out : "");
	CHECKF(out && strstr(out, "123456 older records (7 chunks, 3.00 MiB compressed) dropped by "
			      "design to stay within 16.00 MiB; not counted as lost\n"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "Lost records: none"), "%s", out ? out : "");
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--format", "json", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, "\"capture_ranges\":[{\"kind\":\"control\","
			      "\"start_ns\":1700000001000000000,\"end_ns\":1700000002000000000}"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "\"flight\":{\"dump\":2,\"trigger\":\"signal\",\"detail\":12,"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "\"dropped_records\":123456"), "%s", out ? out : "");
	free(out);
	free(err);
	tap_end();
}

/* A small rank trace of rank r at path: kernels of r + 1 us. */
static void write_rank(const char *path, int r)
{
	struct synth *s = synth_open(path);
	uint32_t name;

	synth_process(s, 2000 + (uint32_t)r, "node", "python3 train.py", (uint32_t)r, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, (uint8_t)(100 + r));
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	name = synth_string(s, "_Z4stepv");
	for (int k = 0; k < 10; k++)
		synth_kernel(s, name, T0 + 1000000 + (uint64_t)k * 10000,
			     T0 + 1001000 + (uint64_t)r * 1000 + (uint64_t)k * 10000, 0, 7, 0, 0);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

/*
 * A directory stands for its *.gpuprof (or *.sum) files, in name order,
 * not its subdirectories': report, summarize, export and each side of diff;
 * one with neither, or with both, is refused with its name.
 */
static void test_dirs(void)
{
	char job[96], other[96], empty[96], p[256], sum[256], *o1 = NULL, *o2 = NULL, *err = NULL;
	int rc;

	tap_begin("a directory stands for the traces in it: report, summarize, export, diff");
	snprintf(job, sizeof(job), "%s/job", dir);
	snprintf(other, sizeof(other), "%s/job2", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(p, sizeof(p), "%s/job/sub", dir);
	CHECK(mkdir(job, 0755) == 0 && mkdir(other, 0755) == 0 && mkdir(empty, 0755) == 0 &&
	      mkdir(p, 0755) == 0);
	for (int r = 0; r < 3; r++) {
		snprintf(p, sizeof(p), "%s/rank%d.gpuprof", job, r);
		write_rank(p, r);
		snprintf(p, sizeof(p), "%s/rank%d.gpuprof", other, r);
		write_rank(p, r + 1);
	}
	/* Not read: a subdirectory's trace, a file of another name. */
	snprintf(p, sizeof(p), "%s/job/sub/rank9.gpuprof", dir);
	write_rank(p, 9);
	snprintf(p, sizeof(p), "%s/job/notes.txt", dir);
	{
		FILE *f = fopen(p, "w");

		CHECK(f && fputs("x", f) >= 0 && fclose(f) == 0);
	}
	rc = run(&o1, &err, cmd_report, "report", job, NULL);
	free(err);
	{
		char a[3][160];

		for (int r = 0; r < 3; r++)
			snprintf(a[r], sizeof(a[r]), "%s/rank%d.gpuprof", job, 2 - r);
		rc |= run(&o2, &err, cmd_report, "report", a[0], a[1], a[2], NULL);
	}
	CHECKF(rc == 0 && o1 && o2 && !strcmp(o1, o2) && strstr(o1, "rank0.gpuprof (") &&
		       strstr(o1, "rank2.gpuprof (") && !strstr(o1, "rank9") && strstr(o1, "30 kernel"),
	       "rc %d: %s", rc, o1 ? o1 : "");
	free(o1);
	free(o2);
	free(err);
	/* A directory of summaries: the same report's kernel table. */
	snprintf(sum, sizeof(sum), "%s/parts", dir);
	CHECK(mkdir(sum, 0755) == 0);
	snprintf(sum, sizeof(sum), "%s/parts/all.sum", dir);
	rc = run(&o1, &err, cmd_summarize, "summarize", "-o", sum, job, NULL);
	CHECKF(rc == 0, "summarize: rc %d: %s", rc, err ? err : "");
	free(o1);
	free(err);
	snprintf(p, sizeof(p), "%s/parts", dir);
	rc = run(&o1, &err, cmd_export, "export", "-t", "json", p, NULL);
	CHECKF(rc == 0 && o1 && strstr(o1, "\"kernel\":30,"), "rc %d: %s %s", rc, o1 ? o1 : "",
	       err ? err : "");
	free(o1);
	free(err);
	/* Each side of diff a directory, named by it. */
	rc = run(&o1, &err, cmd_diff, "diff", job, other, NULL);
	snprintf(p, sizeof(p), "base %s, new %s", job, other);
	CHECKF(rc == 0 && o1 && strstr(o1, p) && strstr(o1, "step"), "rc %d: %s %s", rc,
	       o1 ? o1 : "", err ? err : "");
	free(o1);
	free(err);
	/* Refused, named: a directory without traces, and one with traces and summaries. */
	rc = run(&o1, &err, cmd_report, "report", empty, NULL);
	CHECKF(rc != 0 && err && strstr(err, empty) && strstr(err, "without *.gpuprof"), "rc %d: %s",
	       rc, err ? err : "");
	free(o1);
	free(err);
	snprintf(p, sizeof(p), "%s/extra.sum", job);
	rc = run(&o1, &err, cmd_summarize, "summarize", "-o", p, other, NULL);
	free(o1);
	free(err);
	rc = run(&o1, &err, cmd_report, "report", job, NULL);
	CHECKF(rc != 0 && err && strstr(err, "both traces") && strstr(err, job), "rc %d: %s", rc,
	       err ? err : "");
	free(o1);
	free(err);
	tap_end();
}

/*
 * The summed-up header of a mixed job: 18 processes, half of them ranked,
 * on two hosts, of two command lines, on GPUs of two models.
 */
static void test_header_mixed(void)
{
	char paths[18][128], *argv[20], *out = NULL, *err = NULL;
	int rc;

	tap_begin("the header sums up a mixed job: ranks, hosts, command lines, GPU models");
	argv[0] = "report";
	for (int r = 0; r < 18; r++) {
		struct synth *s;
		uint32_t name;

		snprintf(paths[r], sizeof(paths[r]), "%s/mixed%02d.gpuprof", dir, r);
		s = synth_open(paths[r]);
		synth_process(s, 3000 + (uint32_t)r, r < 12 ? "hostA" : "hostB",
			      r % 3 ? "python3 train.py" : "python3 eval.py",
			      r % 2 ? UINT32_MAX : (uint32_t)r / 2, T0);
		synth_device(s, 0, r < 4 ? "GPU small" : "GPU big", 9, 0, r < 4 ? 66 : 132,
			     1ull << 36, (uint8_t)(200 + r));
		synth_config(s, GP_TRACE_KERNEL, 0, 0);
		name = synth_string(s, "_Z4stepv");
		synth_kernel(s, name, T0 + 1000000, T0 + 1000500, 0, 7, 0, 0);
		synth_end(s, T0 + 9000000, 0);
		synth_close(s, NULL, NULL);
		argv[r + 1] = paths[r];
	}
	argv[19] = NULL;
	rc = synth_capture(dir, &out, &err, cmd_report, 19, argv);
	CHECKF(rc == 0 && out &&
		       strstr(out, "Processes:    18, 9 of them ranks 0 to 8, on 2 hosts: 2 command "
				   "lines, 12 processes ran python3 train.py\n") &&
		       strstr(out, "GPU:          18 GPUs\n              4: GPU small, cc 9.0, 66 "
				   "SMs, 64.00 GiB\n              14: GPU big, cc 9.0, 132 SMs, "
				   "64.00 GiB\n") &&
		       strstr(out, "Process time: 9.000 ms median, 9.000 ms to 9.000 ms (18 processes"),
	       "rc %d: %s", rc, out ? out : "");
	free(out);
	free(err);
	tap_end();
}

int main(void)
{
	char trace[128], cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-cli-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(trace, sizeof(trace), "%s/warp.gpuprof", dir);
	write_warp_trace(trace, 1);
	test_report_warp(trace);
	test_report_rules(trace);
	test_report_losses();
	test_export(trace);
	test_export_output_safety(trace);
	test_staged_peer();
	test_windows_and_flight();
	test_merge_64();
	test_dirs();
	test_header_mixed();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
