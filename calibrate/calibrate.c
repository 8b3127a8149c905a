/*
 * gpuprof-calibrate (`gpuprof calibrate`): measures what each GPU really
 * reaches with the micro-kernels of kernels.cu, prints it beside the
 * peaks from specifications that the roofline uses otherwise
 * (gpuprof/peaks.h), and stores the measured peaks per GPU model and
 * driver (gpuprof/peakfile.h) for later reports.  Runs as a program of
 * its own, never inside a traced one.
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuprof/peakfile.h"
#include "gpuprof/peaks.h"
#include "calibrate.h"

static void help(FILE *f)
{
	fputs("usage: gpuprof calibrate [options]\n\n"
	      "Measure the peak throughputs of each GPU with bundled micro-kernels\n"
	      "(FMA chains in fp64, fp32, fp16 and bf16; tensor-core MMA with fp16\n"
	      "inputs and fp32 accumulation; a streaming copy for DRAM bandwidth;\n"
	      "L2-resident reads), print them beside the peaks from specifications,\n"
	      "and store them per GPU model and CUDA driver.  Later reports of traces\n"
	      "of such a GPU draw their roofline with the measured peaks\n"
	      "(gpuprof report --spec-peaks ignores them).  Takes a few seconds per\n"
	      "GPU; run it on an otherwise idle GPU.\n\n"
	      "Options:\n"
	      "  --device N      measure only CUDA device N (default: every device)\n"
	      "  --peaks-dir DIR where to store the measured peaks (default:\n"
	      "                  $GPUPROF_PEAKS_DIR, else $XDG_CACHE_HOME/gpuprof/peaks,\n"
	      "                  else ~/.cache/gpuprof/peaks)\n"
	      "  --no-save       measure and print only\n"
	      "  -h, --help      show this help\n\n"
	      "Exit status: 0 when every device was measured and stored, 1 when there\n"
	      "is no GPU or a measurement or the file failed, 2 on bad usage.\n", f);
}

static const struct {
	enum gpc_kind kind;
	int item;                   /* enum gp_peakfile_item: its key in the peaks file */
	const char *label;
	int spec;                   /* enum gp_peak, -1: none; GP_PEAK_COUNT: DRAM */
	int bytes;
} rows[] = {
	{ GPC_FP64, GP_PF_FP64, "FP64 FMA", GP_PEAK_FP64, 0 },
	{ GPC_FP32, GP_PF_FP32, "FP32 FMA", GP_PEAK_FP32, 0 },
	{ GPC_FP16, GP_PF_FP16, "FP16 HFMA2", GP_PEAK_FP16, 0 },
	{ GPC_BF16, GP_PF_BF16, "BF16 HFMA2", GP_PEAK_FP16, 0 },
	{ GPC_TC_MMA, GP_PF_TENSOR_FP16_MMA, "Tensor FP16 (mma.sync)", GP_PEAK_TENSOR_FP16, 0 },
	{ GPC_DRAM, GP_PF_DRAM, "DRAM (copy)", GP_PEAK_COUNT, 1 },
	{ GPC_L2, GP_PF_L2, "L2 (reads)", -1, 1 },
	/* Last: a fault here would end the device's context for the others. */
	{ GPC_TC_WGMMA, GP_PF_TENSOR_FP16_WGMMA, "Tensor FP16 (wgmma)", GP_PEAK_TENSOR_FP16, 0 },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* mkdir -p, new directories private to the user. */
static int make_dirs(const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	struct stat st;
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen, "bad directory name '%s'", path);
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0700) && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", buf, strerror(errno));
			return -1;
		}
		buf[i] = i == n ? 0 : '/';
	}
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", path);
		return -1;
	}
	return 0;
}

/*
 * Writes the file through a temporary file in the same directory, then
 * renames it over the old one: a reader sees the old file or the new one,
 * never a part.
 */
static int save(const char *dir, const char *model, uint32_t driver, int ccma, int ccmi, int sms,
		const double *val, const int *ok, char *path, size_t pathlen, char *err, size_t errlen)
{
	char name[512], tmp[PATH_MAX], date[32];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;
	int fd, rc = 0;

	if (make_dirs(dir, err, errlen))
		return -1;
	if (gp_peakfile_name(name, sizeof(name), model, driver) < 0 ||
	    snprintf(path, pathlen, "%s/%s", dir, name) >= (int)pathlen ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "file name too long in %s", dir);
		return -1;
	}
	if ((fd = mkstemp(tmp)) < 0) {
		snprintf(err, errlen, "cannot create a file in %s: %s", dir, strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0644) || !(f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(f, GP_PEAKFILE_MAGIC " %d\n", GP_PEAKFILE_VERSION);
	fprintf(f, "# measured by gpuprof calibrate; FLOP/s and bytes/s\n");
	fprintf(f, "model %s\ndriver %u\ndate %s\ncc %d.%d\nsm_count %d\n", model, driver, date, ccma,
		ccmi, sms);
	double tc = 0;
	for (size_t i = 0; i < NROWS; i++) {
		if (!ok[i])
			continue;
		fprintf(f, "%s %.6e\n", gp_peakfile_key(rows[i].item), val[i]);
		if (rows[i].kind == GPC_TC_MMA || rows[i].kind == GPC_TC_WGMMA)
			tc = val[i] > tc ? val[i] : tc;
	}
	if (tc > 0)
		fprintf(f, "%s %.6e\n", gp_peakfile_key(GP_PF_TENSOR_FP16), tc);
	if (fflush(f) || fsync(fd) || ferror(f))
		rc = -1;
	if (fclose(f))
		rc = -1;
	if (!rc && rename(tmp, path))
		rc = -1;
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	return rc;
}

static void print_rate(double v, int bytes)
{
	if (v <= 0)
		printf("  %12s", "-");
	else if (bytes)
		printf("  %8.0f GB/s", v / 1e9);
	else
		printf("  %7.1f TF/s", v / 1e12);
}

static int attr(int *v, enum cudaDeviceAttr a, int dev)
{
	return cudaDeviceGetAttribute(v, a, dev) == cudaSuccess ? 0 : -1;
}

static int calibrate(int dev, const char *dir, int nosave)
{
	struct cudaDeviceProp prop;
	struct gp_rec_device_peaks spec;
	int ccma, ccmi, sms, clk, mclk, bus, drv = 0, failed = 0;
	double val[NROWS];
	int ok[NROWS];
	char err[PATH_MAX + 256], path[PATH_MAX];

	if (cudaSetDevice(dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
	    attr(&ccma, cudaDevAttrComputeCapabilityMajor, dev) ||
	    attr(&ccmi, cudaDevAttrComputeCapabilityMinor, dev) ||
	    attr(&sms, cudaDevAttrMultiProcessorCount, dev) || attr(&clk, cudaDevAttrClockRate, dev) ||
	    attr(&mclk, cudaDevAttrMemoryClockRate, dev) ||
	    attr(&bus, cudaDevAttrGlobalMemoryBusWidth, dev)) {
		fprintf(stderr, "gpuprof calibrate: cuda:%d: %s\n", dev,
			cudaGetErrorString(cudaGetLastError()));
		return -1;
	}
	cudaDriverGetVersion(&drv);
	memset(&spec, 0, sizeof(spec));
	spec.cc_major = (uint32_t)ccma;
	spec.cc_minor = (uint32_t)ccmi;
	spec.sm_count = (uint32_t)sms;
	spec.sm_clock_khz = (uint32_t)clk;
	spec.mem_clock_khz = (uint32_t)mclk;
	spec.bus_width = (uint32_t)bus;
	gp_peaks_compute(&spec);
	printf("cuda:%d %s (cc %d.%d, %d SMs at %.0f MHz, %.0f MHz memory, %d-bit bus; CUDA driver %d.%d)\n",
	       dev, prop.name, ccma, ccmi, sms, clk / 1e3, mclk / 1e3, bus, drv / 1000, drv % 1000 / 10);
	printf("  %-24s  %12s  %12s  %8s\n", "ceiling", "measured", "spec", "of spec");
	fflush(stdout);
	memset(ok, 0, sizeof(ok));
	for (size_t i = 0; i < NROWS && !failed; i++) {
		double s = rows[i].spec < 0 ? 0 : rows[i].spec == GP_PEAK_COUNT ? spec.dram_bw
										 : spec.flops[rows[i].spec];
		int rc = gpc_measure(rows[i].kind, &val[i], err, sizeof(err));

		ok[i] = rc == 0 && val[i] > 0;
		printf("  %-24s", rows[i].label);
		print_rate(ok[i] ? val[i] : 0, rows[i].bytes);
		print_rate(s, rows[i].bytes);
		if (ok[i] && s > 0)
			printf("  %7.0f%%", 100 * val[i] / s);
		else
			printf("  %8s", "-");
		if (rc)
			printf("  (%s)", err);
		putchar('\n');
		fflush(stdout);
		if (rc < 0) {
			fprintf(stderr, "gpuprof calibrate: cuda:%d: %s: %s\n", dev, rows[i].label, err);
			failed = 1;
		}
	}
	if (nosave) {
		printf("  not stored (--no-save)\n");
		return failed ? -1 : 0;
	}
	if (!dir) {
		fprintf(stderr, "gpuprof calibrate: no place to store the peaks: give --peaks-dir "
			"(or set GPUPROF_PEAKS_DIR, XDG_CACHE_HOME or HOME)\n");
		return -1;
	}
	if (save(dir, prop.name, (uint32_t)drv, ccma, ccmi, sms, val, ok, path, sizeof(path), err,
		 sizeof(err))) {
		fprintf(stderr, "gpuprof calibrate: %s\n", err);
		return -1;
	}
	printf("  stored in %s%s\n", path, failed ? " (without the measurements that failed)" : "");
	return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "peaks-dir", required_argument, NULL, 'p' },
		{ "no-save", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	long only = -1;
	int c, ndev = 0, nosave = 0, rc = 0;
	cudaError_t e;
	char *end;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			only = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || only < 0 || only > INT_MAX) {
				fprintf(stderr, "gpuprof calibrate: --device needs a device number, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			if (!*optarg) {
				fputs("gpuprof calibrate: --peaks-dir needs a directory\n", stderr);
				return 2;
			}
			dir = optarg;
			break;
		case 'n':
			nosave = 1;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			if (optopt)
				fprintf(stderr, "gpuprof calibrate: option '%s' %s\n", argv[optind - 1],
					strchr(argv[optind - 1], '=') ? "takes no value" : "needs a value");
			else
				fprintf(stderr, "gpuprof calibrate: unknown option '%s'\n", argv[optind - 1]);
			fputs("Try 'gpuprof calibrate --help'.\n", stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpuprof calibrate: unexpected argument '%s'\n"
			"Try 'gpuprof calibrate --help'.\n", argv[optind]);
		return 2;
	}
	if ((e = cudaGetDeviceCount(&ndev)) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "gpuprof calibrate: no CUDA GPU to measure (%s)\n",
			e != cudaSuccess ? cudaGetErrorString(e) : "no device");
		return 1;
	}
	if (only >= ndev) {
		fprintf(stderr, "gpuprof calibrate: no device %ld (there %s %d)\n", only,
			ndev == 1 ? "is" : "are", ndev);
		return 1;
	}
	for (int d = 0; d < ndev; d++) {
		if (only >= 0 && d != only)
			continue;
		if (calibrate(d, dir, nosave))
			rc = 1;
	}
	return rc;
}
