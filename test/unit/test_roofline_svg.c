/*
 * Unit tests of measured peaks and the roofline chart: the peaks file of
 * gpuprof calibrate (gpuprof/peakfile.h) read, found by model and driver
 * and applied to a trace's ceilings; report --peaks-dir / --spec-peaks;
 * report --roofline-svg with its ceilings and one dot per kernel.  Test
 * code, runs offline only, needs no GPU.
 *
 *   test_roofline_svg [DIR]    keeps the trace and the chart in DIR
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gpuprof/peakfile.h"
#include "gpuprof/peaks.h"
#include "model/peaks-measured.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define MODEL "NVIDIA H100 80GB HBM3"

static char dir[256];

static void put_metrics(struct synth *s, uint32_t corr, uint32_t kernel, uint64_t dur,
			const uint32_t *names, const double *vals, uint32_t n)
{
	unsigned char buf[sizeof(struct gp_rec_metrics) + 16 * sizeof(struct gp_metric_value)];
	struct gp_rec_metrics *m = (void *)buf;
	struct gp_metric_value *v = (void *)(m + 1);

	memset(buf, 0, sizeof(buf));
	m->h.type = GP_REC_METRICS;
	m->h.size = (uint16_t)(sizeof(*m) + n * sizeof(*v));
	m->h.aux = n;
	m->start = T0 + corr * 1000;
	m->duration = dur;
	m->correlation = corr;
	m->kernel = kernel;
	m->passes = 2;
	for (uint32_t i = 0; i < n; i++) {
		v[i].name = names[i];
		v[i].value = vals[i];
	}
	synth_rec(s, buf, m->h.size);
}

/* Kernels of several kinds: names, time, tensor and fp32 FLOP counts, DRAM bytes. */
static const struct {
	const char *name;
	double ns, tensor, fp32_fma, fp32_add, dram;
} kern[] = {
	{ "_Z9gemm_fp16v", 4e6, 2.0 * 8192 * 8192 * 8192 * 0.45, 0, 0, 3 * 128e6 },
	{ "_Z11gemm_smallv", 3e5, 2.0 * 1024 * 1024 * 1024 * 0.9, 0, 0, 8e6 },
	{ "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_", 2e6, 0, 0,
	  1.6e9, 6.4e9 },
	{ "_Z9layernormPfPKfi", 9e5, 0, 3e8, 2e8, 2.4e9 },
	{ "_Z4copyPfPKfm", 1.3e6, 0, 0, 0, 4.2e9 },
	{ "_Z5tinyv", 4e3, 0, 1e3, 0, 0 },
	{ "_Z7softmaxPfi", 5e5, 0, 1e8, 1.2e8, 0.9e9 },
};
#define NK (sizeof(kern) / sizeof(kern[0]))

static char *write_trace(void)
{
	static const char *const mn[] = {
		"gpu__time_duration.sum",
		"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
		"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
		"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
		"dram__bytes_read.sum",
	};
	char *path = malloc(512);
	struct synth *s;
	struct gp_rec_device_peaks p;
	uint32_t names[5];

	snprintf(path, 512, "%s/roof.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4242, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, MODEL, 9, 0, 132, 80ull << 30, 1);
	for (int i = 0; i < 5; i++)
		names[i] = synth_string(s, mn[i]);
	synth_h100_peaks(&p);
	gp_peaks_compute(&p);
	p.chip = synth_string(s, "GH100");
	synth_rec(s, &p, sizeof(p));
	for (uint32_t i = 0; i < NK; i++) {
		uint32_t k = synth_string(s, kern[i].name);
		double v[5] = { kern[i].ns, kern[i].tensor, kern[i].fp32_fma, kern[i].fp32_add,
				kern[i].dram };
		uint64_t at = T0 + 10000000ull * (i + 1);

		put_metrics(s, 100 + i, k, (uint64_t)kern[i].ns, names, v, 5);
		synth_kernel(s, k, at, at + (uint64_t)kern[i].ns, 0, 7, 0, 0);
		synth_kernel(s, k, at + 5000000, at + 5000000 + (uint64_t)kern[i].ns, 0, 7, 0, 0);
	}
	synth_end(s, T0 + 10000000ull * (NK + 2), 0);
	if (synth_close(s, NULL, NULL)) {
		free(path);
		return NULL;
	}
	return path;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void test_name(void)
{
	char b[64];

	tap_begin("peaks file name per model and driver");
	CHECK(gp_peakfile_name(b, sizeof(b), MODEL, 13000) > 0 &&
	      !strcmp(b, "NVIDIA_H100_80GB_HBM3-cuda13000.peaks"));
	CHECK(gp_peakfile_name(b, sizeof(b), "a/../b c", 1) > 0 && !strcmp(b, "a_.._b_c-cuda1.peaks"));
	CHECK(gp_peakfile_name(b, 12, MODEL, 13000) == -1);
	tap_end();
}

static void test_read(char *pdir)
{
	struct ga_measured me;
	char path[600], err[700];

	tap_begin("peaks files read and found");
	snprintf(pdir, 300, "%s/peaks", dir);
	CHECK(mkdir(pdir, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/NVIDIA_H100_80GB_HBM3-cuda12080.peaks", pdir);
	CHECK(write_file(path, "gpuprof-peaks 1\n# old\nmodel " MODEL "\ndriver 12080\n"
			 "date 2026-01-02T03:04:05Z\nfp32 5.0e13\ndram 2.9e12\n") == 0);
	snprintf(path, sizeof(path), "%s/NVIDIA_H100_80GB_HBM3-cuda13000.peaks", pdir);
	CHECK(write_file(path, "gpuprof-peaks 1\nmodel " MODEL "\ndriver 13000\n"
			 "date 2026-11-24T18:00:00Z\nfp64 5.9e13\nfp32 6.1e13\nfp16 1.2e14\nbf16 1.2e14\n"
			 "tensor_fp16_mma 6.2e14\ntensor_fp16_wgmma 7.4e14\ntensor_fp16 7.4e14\n"
			 "dram 2.95e12\nl2 9.8e12\nfuture_key 3\n") == 0);
	CHECK(ga_peakfile_read(path, &me, err, sizeof(err)) == 0);
	CHECK(!strcmp(me.model, MODEL) && me.driver == 13000 && me.flops[GP_PEAK_FP32] == 6.1e13 &&
	      me.flops[GP_PEAK_TENSOR_FP16] == 7.4e14 && me.dram_bw == 2.95e12 && me.l2_bw == 9.8e12 &&
	      me.flops[GP_PEAK_TENSOR_TF32] == 0);
	/* Exact driver first; else the newest of the model; never another model. */
	CHECK(ga_peakfile_find(pdir, MODEL, 12080, &me) == 1 && me.driver == 12080);
	CHECK(ga_peakfile_find(pdir, MODEL, 99999, &me) == 1 && me.driver == 13000);
	CHECK(ga_peakfile_find(pdir, "NVIDIA H200", 13000, &me) == 0);
	CHECK(ga_peakfile_find(NULL, MODEL, 13000, &me) == 0);
	/* Broken files: a clear error naming file and line. */
	snprintf(path, sizeof(path), "%s/bad.peaks", pdir);
	CHECK(write_file(path, "gpuprof-peaks 1\nmodel x\nfp32 fast\n") == 0);
	CHECKF(ga_peakfile_read(path, &me, err, sizeof(err)) == -1 && strstr(err, "bad.peaks:3: bad value 'fast'"),
	       "%s", err);
	CHECK(write_file(path, "something else\n") == 0);
	CHECK(ga_peakfile_read(path, &me, err, sizeof(err)) == -1 && strstr(err, "not a gpuprof peaks file"));
	unlink(path);
	tap_end();
}

/*
 * Every value of the one table of keys, written the way calibrate writes
 * it (gp_peakfile_key), is read back into what the table says it sets;
 * the ones for people only change nothing.
 */
static void test_keys(void)
{
	struct ga_measured me;
	char path[600], err[700], text[2048];
	int pos, seen[GP_PEAK_COUNT] = { 0 };

	tap_begin("peaks file keys: one table, written and read alike");
	pos = snprintf(text, sizeof(text), "%s %d\nmodel %s\n", GP_PEAKFILE_MAGIC, GP_PEAKFILE_VERSION,
		       MODEL);
	for (int k = 0; k < GP_PF_COUNT; k++)
		pos += snprintf(text + pos, sizeof(text) - (size_t)pos, "%s %d.0e12\n",
				gp_peakfile_key(k), k + 1);
	snprintf(path, sizeof(path), "%s/keys.peaks", dir);
	CHECK(write_file(path, text) == 0);
	CHECKF(ga_peakfile_read(path, &me, err, sizeof(err)) == 0, "%s", err);
	for (int k = 0; k < GP_PF_COUNT; k++) {
		int sets = gp_peakfile_keys[k].sets;
		double want = (k + 1) * 1e12;

		CHECKF(gp_peakfile_key(k) && strchr(gp_peakfile_key(k), ' ') == NULL, "key %d", k);
		if (sets >= 0) {
			CHECKF(me.flops[sets] == want, "%s: %g", gp_peakfile_key(k), me.flops[sets]);
			CHECK(!strcmp(gp_peakfile_key(k), gp_peak_key[sets]));
			seen[sets] = 1;
		} else if (sets == GP_PEAKFILE_DRAM) {
			CHECK(me.dram_bw == want);
		} else if (sets == GP_PEAKFILE_L2) {
			CHECK(me.l2_bw == want);
		} else {
			CHECK(sets == GP_PEAKFILE_NONE);
		}
	}
	for (int c = 0; c < GP_PEAK_COUNT; c++)
		CHECKF(seen[c] || me.flops[c] == 0, "%s set by no key", gp_peak_key[c]);
	unlink(path);
	tap_end();
}

static void test_report(const char *trace, const char *pdir)
{
	char *argv[8], *out = NULL, *err = NULL, svg[600];
	unsigned char *doc;
	size_t len;
	int rc;

	tap_begin("report with measured peaks, and --spec-peaks");
	argv[0] = "report";
	argv[1] = "--peaks-dir";
	argv[2] = (char *)pdir;
	argv[3] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_report, 4, argv);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	/* The trace's process has no driver version: the newest file of the model. */
	CHECKF(out && strstr(out, "L2 9800 GB/s; measured by gpuprof calibrate on 2026-11-24 "
			   "(TC-TF32, TC-FP8, TC-FP64 from specifications)"), "%s", out);
	CHECK(out && strstr(out, "FP32 61.0, FP16 120.0, TC-FP16 740.0") && strstr(out, "DRAM 2950 GB/s"));
	free(out);
	free(err);
	argv[3] = "--spec-peaks";
	argv[4] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_report, 5, argv);
	CHECK(rc == 0 && out && strstr(out, "DRAM 3352 GB/s; from specifications") &&
	      !strstr(out, "measured by"));
	free(out);
	free(err);
	tap_end();

	tap_begin("export --format json with measured peaks, and --spec-peaks");
	argv[0] = "export";
	argv[1] = "--format";
	argv[2] = "json";
	argv[3] = "--peaks-dir";
	argv[4] = (char *)pdir;
	argv[5] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_export, 6, argv);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	CHECKF(out && strstr(out, "\"peak_dram_bytes_s\":2950000000000,\"peak_l2_bytes_s\":9800000000000,"
			   "\"measured\":[\"fp64\",\"fp32\",\"fp16\",\"tensor_fp16\",\"dram\"],"
			   "\"measured_on\":\"2026-11-24"), "%.300s", out && strstr(out, "peak_dram") ? strstr(out, "peak_dram") : "");
	free(out);
	free(err);
	argv[3] = "--spec-peaks";
	argv[4] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_export, 5, argv);
	CHECKF(rc == 0 && out && strstr(out, "\"peak_l2_bytes_s\":null,\"measured\":[],\"measured_on\":null") &&
	       !strstr(out, "2950000000000"),
	       "%.300s", out && strstr(out, "peak_dram") ? strstr(out, "peak_dram") : "");
	free(out);
	free(err);
	argv[0] = "report";
	tap_end();

	tap_begin("report --roofline-svg");
	snprintf(svg, sizeof(svg), "%s/roof.svg", dir);
	argv[1] = "--roofline-svg";
	argv[2] = svg;
	argv[3] = "--peaks-dir";
	argv[4] = (char *)pdir;
	argv[5] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_report, 6, argv);
	CHECKF(rc == 0 && out && strstr(out, "Roofline"), "rc %d %s", rc, err ? err : "");
	doc = synth_slurp(svg, &len);
	CHECK(doc != NULL);
	if (doc) {
		const char *s = (const char *)doc, *at = s;
		int dots = 0;

		while ((at = strstr(at, "<circle class=\"kernel\""))) {
			dots++;
			at++;
		}
		CHECKF(dots == (int)NK, "%d dots", dots);
		CHECK(strstr(s, "data-ceiling=\"DRAM\" data-value=\"2.95e+12\""));
		CHECK(strstr(s, "data-ceiling=\"L2\""));
		CHECK(strstr(s, "data-ceiling=\"Tensor FP16/BF16\" data-value=\"7.4e+14\""));
		CHECK(strstr(s, "data-ceiling=\"FP32\"") && strstr(s, "data-ceiling=\"FP64\""));
		CHECK(strstr(s, "peaks measured by gpuprof calibrate on 2026-11-24"));
		CHECK(strstr(s, "Roofline: " MODEL " (GH100)"));
		CHECK(!strstr(s, "nan") && !strstr(s, "inf\""));
		CHECK(len > 100 && !strcmp(s + len - 7, "</svg>\n"));
	}
	free(doc);
	free(out);
	free(err);
	/* Standard output: the chart only. */
	argv[2] = "-";
	rc = synth_capture(dir, &out, &err, cmd_report, 6, argv);
	CHECK(rc == 0 && out && !strncmp(out, "<?xml", 5) && !strstr(out, "Roofline (profiled"));
	free(out);
	free(err);
	/* The output is never one of the inputs. */
	argv[2] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_report, 6, argv);
	CHECK(rc == GA_EXIT_FAIL);
	free(out);
	free(err);
	tap_end();
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; s && (s = strstr(s, what)); s++)
		n++;
	return n;
}

static void test_tree_csv(const char *trace)
{
	char *argv[8], *out = NULL, *err = NULL;
	int rc;

	tap_begin("report --tree: metrics under each kernel");
	argv[0] = "report";
	argv[1] = "--tree";
	argv[2] = "--spec-peaks";
	argv[3] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_report, 4, argv);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	/* Each kernel node: a roofline line, then its non-zero metrics, the last with an elbow. */
	CHECKF(count(out, "\xe2\x94\x80\xe2\x94\x80 roofline: 1 profiled") == (int)NK, "%s", out);
	CHECK(strstr(out, "\xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 roofline: 1 profiled, 4.000 ms, "
			  "123.70 TFLOP/s TC-FP16, DRAM 96.0 GB/s, 1.29e+03 FLOP/B, 12% of TC-FP16 roof: neither"));
	CHECK(strstr(out, "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 dram__bytes_read.sum = 3.84e+08"));
	CHECK(strstr(out, "Under each kernel: its hardware metrics"));
	free(out);
	free(err);
	tap_end();

	tap_begin("export csv: roofline and metrics tables");
	argv[0] = "export";
	argv[1] = "--format";
	argv[2] = "csv";
	argv[3] = "--table";
	argv[4] = "roofline";
	argv[5] = (char *)trace;
	rc = synth_capture(dir, &out, &err, cmd_export, 6, argv);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	CHECK(count(out, "\n") == (int)NK + 1);
	CHECK(strstr(out, ",_Z4copyPfPKfm,1,1300000,0,2,0,0,0,0,0,0,0,4200000000,0,4200000000,,,,0,"
			  "3230769230769.2305,0,,96.37412987928451,memory-bound\n"));
	free(out);
	free(err);
	argv[4] = "metrics";
	rc = synth_capture(dir, &out, &err, cmd_export, 6, argv);
	CHECKF(rc == 0 && out, "rc %d %s", rc, err ? err : "");
	/* Every value of every kernel: 5 metrics each. */
	CHECK(count(out, "\n") == 5 * (int)NK + 1);
	CHECK(strstr(out, "host,rank,pid,file,device,name,mangled,launches,metric,sum,avg\n"));
	CHECK(strstr(out, ",_Z11gemm_smallv,1,sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum,"
			  "1932735283.2,1932735283.2\n"));
	free(out);
	free(err);
	tap_end();
}

int main(int argc, char **argv)
{
	char pdir[300], path[600];
	char *trace;
	int keep = argc > 1;

	if (keep) {
		snprintf(dir, sizeof(dir), "%s", argv[1]);
		mkdir(dir, 0700);
	}
	else {
		snprintf(dir, sizeof(dir), "/tmp/gp-roofsvg-XXXXXX");
		if (!mkdtemp(dir))
			return 1;
	}
	test_name();
	test_read(pdir);
	test_keys();
	trace = write_trace();
	CHECK(trace != NULL);
	if (trace) {
		test_report(trace, pdir);
		test_tree_csv(trace);
	}
	if (!keep) {
		snprintf(path, sizeof(path), "%s/NVIDIA_H100_80GB_HBM3-cuda12080.peaks", pdir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/NVIDIA_H100_80GB_HBM3-cuda13000.peaks", pdir);
		unlink(path);
		rmdir(pdir);
		snprintf(path, sizeof(path), "%s/roof.svg", dir);
		unlink(path);
		if (trace)
			unlink(trace);
		rmdir(dir);
	}
	free(trace);
	return tap_exit();
}
