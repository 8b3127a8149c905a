/*
 * Peaks measured by `gpuprof calibrate`, one text file per GPU model and
 * CUDA driver version, read back by `gpuprof report` (docs/USAGE.md,
 * "Measured peaks").  The file is lines of "KEY VALUE":
 *
 *   gpuprof-peaks 1            first line: the format and its version
 *   model NAME                 the device name as CUDA reports it
 *   driver N                   cuDriverGetVersion()
 *   date YYYY-MM-DDTHH:MM:SSZ  when it was measured (UTC)
 *   cc M.m, sm_count N         what the device reported
 *   fp64, fp32, fp16, bf16, tensor_fp16, tensor_fp16_mma, tensor_fp16_wgmma
 *                              FLOP/s (tensor_fp16: the best of the two MMA kernels)
 *   dram, l2                   bytes/s (streaming copy; L2-resident reads)
 *
 * '#' starts a comment line; unknown keys are ignored.  Pure functions.
 */
#ifndef GPUPROF_PEAKFILE_H
#define GPUPROF_PEAKFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GP_PEAKFILE_MAGIC "gpuprof-peaks"
#define GP_PEAKFILE_VERSION 1
#define GP_PEAKFILE_SUFFIX ".peaks"

/*
 * The file name (no directory) for a model and driver:
 * "NVIDIA_H100_80GB_HBM3-cuda13000.peaks".  Characters other than
 * letters, digits, '.' and '-' become '_'.  Returns the length, or -1
 * when it does not fit in n bytes.
 */
static inline int gp_peakfile_name(char *buf, size_t n, const char *model, uint32_t driver)
{
	size_t i = 0;
	int k;

	for (const char *s = model; *s && i + 1 < n; s++, i++) {
		char c = *s;

		buf[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-') ? c : '_';
	}
	if (i + 1 >= n)
		return -1;
	k = snprintf(buf + i, n - i, "-cuda%u" GP_PEAKFILE_SUFFIX, (unsigned)driver);
	return k < 0 || (size_t)k >= n - i ? -1 : (int)(i + (size_t)k);
}

#endif
