/*
 * Roofline ceilings of a GPU from what the driver reports about it: SM
 * count, peak SM clock, peak memory clock and memory bus width, and the
 * FLOPs per cycle per SM of its architecture.  The recorder fills
 * GP_REC_DEVICE_PEAKS with gp_peaks_compute(); the analyzer and the unit
 * tests use the same arithmetic.  Pure functions; any context.
 *
 * Per-SM rates are dense (no structured sparsity) and count an FMA as two
 * FLOPs.  FP16 is the HFMA2 pipe: 2 lanes x 2 FLOPs per instruction.
 * Architectures missing from the table get 0 ("unknown"), never a guess.
 */
#ifndef GPUPROF_PEAKS_H
#define GPUPROF_PEAKS_H

#include "trace.h"

#include <stdint.h>

struct gp_arch_rate {
	uint16_t cc_major, cc_minor;
	uint16_t per_sm[GP_PEAK_COUNT];    /* FLOP per cycle per SM, enum gp_peak order */
};

/*
 * Each precision's key, enum gp_peak order: in the JSON and CSV exports
 * and, for those gpuprof calibrate measures, in the peaks file
 * (peakfile.h).
 */
static const char *const gp_peak_key[GP_PEAK_COUNT] = {
	[GP_PEAK_FP64] = "fp64", [GP_PEAK_FP32] = "fp32", [GP_PEAK_FP16] = "fp16",
	[GP_PEAK_TENSOR_FP16] = "tensor_fp16", [GP_PEAK_TENSOR_TF32] = "tensor_tf32",
	[GP_PEAK_TENSOR_FP8] = "tensor_fp8", [GP_PEAK_TENSOR_FP64] = "tensor_fp64",
};

/* FP64, FP32, FP16, tensor fp16/bf16, tensor tf32, tensor fp8, tensor fp64. */
static const struct gp_arch_rate gp_arch_rates[] = {
	{ 7, 0, { 64, 128, 256, 1024, 0, 0, 0 } },        /* V100 */
	{ 7, 5, { 4, 128, 256, 1024, 0, 0, 0 } },         /* Turing */
	{ 8, 0, { 64, 128, 512, 2048, 1024, 0, 128 } },   /* A100 */
	{ 8, 6, { 4, 256, 256, 1024, 512, 0, 0 } },       /* GA10x */
	{ 8, 9, { 4, 256, 256, 1024, 512, 2048, 0 } },    /* Ada */
	{ 9, 0, { 128, 256, 512, 4096, 2048, 8192, 256 } }, /* H100, H200 */
};

/*
 * Fills p->flops[] and p->dram_bw from p's cc, sm_count, sm_clock_khz,
 * mem_clock_khz and bus_width.  Returns 1 when the architecture is in
 * the table, 0 when only the DRAM bandwidth is known (flops stay 0).
 * DRAM transfers twice per memory clock (as the driver reports it for
 * HBM and GDDR alike).
 */
static inline int gp_peaks_compute(struct gp_rec_device_peaks *p)
{
	double sm_hz = (double)p->sm_clock_khz * 1e3 * (double)p->sm_count;
	int known = 0;

	for (int i = 0; i < GP_PEAK_COUNT; i++)
		p->flops[i] = 0;
	for (size_t a = 0; a < sizeof(gp_arch_rates) / sizeof(gp_arch_rates[0]); a++) {
		if (gp_arch_rates[a].cc_major != p->cc_major ||
		    gp_arch_rates[a].cc_minor != p->cc_minor)
			continue;
		for (int i = 0; i < GP_PEAK_COUNT; i++)
			p->flops[i] = sm_hz * gp_arch_rates[a].per_sm[i];
		known = 1;
	}
	p->dram_bw = 2.0 * (double)p->mem_clock_khz * 1e3 * (double)p->bus_width / 8.0;
	return known;
}

#endif
