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
 * '#' starts a comment line; unknown keys are ignored.  The measured keys
 * are gp_peakfile_keys[] below, which calibrate writes and the analyzer
 * reads.  Pure functions.
 */
#ifndef GPUPROF_PEAKFILE_H
#define GPUPROF_PEAKFILE_H

#include "peaks.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GP_PEAKFILE_MAGIC "gpuprof-peaks"
#define GP_PEAKFILE_VERSION 1
#define GP_PEAKFILE_SUFFIX ".peaks"

/* The measured values of the file. */
enum gp_peakfile_item {
	GP_PF_FP64, GP_PF_FP32, GP_PF_FP16, GP_PF_TENSOR_FP16,   /* the roofline's ceilings */
	GP_PF_DRAM, GP_PF_L2,
	GP_PF_BF16, GP_PF_TENSOR_FP16_MMA, GP_PF_TENSOR_FP16_WGMMA, /* for people only */
	GP_PF_COUNT
};

/* What a value sets in the analyzer: a ceiling of enum gp_peak, or these. */
#define GP_PEAKFILE_DRAM (-1)
#define GP_PEAKFILE_L2 (-2)
#define GP_PEAKFILE_NONE (-3)

/* Each value's key (NULL: the precision's, gp_peak_key[]) and what it sets. */
static const struct gp_peakfile_key {
	const char *key;
	int sets;                  /* enum gp_peak, GP_PEAKFILE_DRAM, _L2 or _NONE */
} gp_peakfile_keys[GP_PF_COUNT] = {
	[GP_PF_FP64] = { NULL, GP_PEAK_FP64 },
	[GP_PF_FP32] = { NULL, GP_PEAK_FP32 },
	[GP_PF_FP16] = { NULL, GP_PEAK_FP16 },
	[GP_PF_TENSOR_FP16] = { NULL, GP_PEAK_TENSOR_FP16 },
	[GP_PF_DRAM] = { "dram", GP_PEAKFILE_DRAM },
	[GP_PF_L2] = { "l2", GP_PEAKFILE_L2 },
	[GP_PF_BF16] = { "bf16", GP_PEAKFILE_NONE },
	[GP_PF_TENSOR_FP16_MMA] = { "tensor_fp16_mma", GP_PEAKFILE_NONE },
	[GP_PF_TENSOR_FP16_WGMMA] = { "tensor_fp16_wgmma", GP_PEAKFILE_NONE },
};

/* The key of value i (enum gp_peakfile_item) in the file. */
static inline const char *gp_peakfile_key(int i)
{
	return gp_peakfile_keys[i].key ? gp_peakfile_keys[i].key : gp_peak_key[gp_peakfile_keys[i].sets];
}

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
