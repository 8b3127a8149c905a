/*
 * gpuprof-calibrate: the micro-kernels (kernels.cu, CUDA C++) measured
 * for the main program (calibrate.c, C11).  Each measurement runs on the
 * current device and returns its best rate over a few timed trials.
 */
#ifndef GPUPROF_CALIBRATE_H
#define GPUPROF_CALIBRATE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum gpc_kind {
	GPC_FP64,           /* DFMA chains: FLOP/s (an FMA is 2 FLOPs) */
	GPC_FP32,           /* FFMA chains */
	GPC_FP16,           /* HFMA2 chains (4 FLOPs each) */
	GPC_BF16,           /* HFMA2.BF16 chains */
	GPC_TC_MMA,         /* mma.sync m16n8k16, fp16 in, fp32 accumulate */
	GPC_TC_WGMMA,       /* wgmma m64n256k16, fp16 in, fp32 accumulate (sm_90a) */
	GPC_DRAM,           /* streaming copy: bytes read + written per second */
	GPC_L2,             /* reads of a buffer that fits in L2, L1 bypassed */
	GPC_KINDS
};

/*
 * Sets *rate (FLOP/s or bytes/s).  Returns 0, 1 when the kind cannot run
 * on this device or build (why in err), -1 on a CUDA error (in err; the
 * device may be unusable after it).
 */
int gpc_measure(enum gpc_kind kind, double *rate, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
