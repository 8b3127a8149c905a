/*
 * The micro-kernels of gpuprof-calibrate: FMA chains per precision, tensor
 * core MMA (mma.sync everywhere from sm_80, wgmma on sm_90a), a streaming
 * copy for DRAM bandwidth and L2-resident reads.  Each kernel's work is
 * counted from its launch configuration; results are stored only so the
 * compiler keeps the work.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <type_traits>

#include "calibrate.h"

#define CHAINS 8            /* independent FMA chains per thread */
#define FMA_THREADS 256
#define FMA_BLOCKS_PER_SM 8
#define TRIALS 5

template <typename T> struct fma_op;
template <> struct fma_op<double> {
	static constexpr double flops = 2;
	__device__ static double init(int i) { return 1.0 + i * 1e-3; }
	__device__ static double step(double a, double b, double c) { return fma(a, b, c); }
	__device__ static bool nonzero(double a) { return a != 0.0; }
};
template <> struct fma_op<float> {
	static constexpr double flops = 2;
	__device__ static float init(int i) { return 1.0f + i * 1e-3f; }
	__device__ static float step(float a, float b, float c) { return fmaf(a, b, c); }
	__device__ static bool nonzero(float a) { return a != 0.0f; }
};
template <> struct fma_op<__half2> {
	static constexpr double flops = 4;
	__device__ static __half2 init(int i) { return __float2half2_rn(1.0f + i * 1e-3f); }
	__device__ static __half2 step(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
	__device__ static bool nonzero(__half2 a) { return __low2float(a) != 0.0f; }
};
template <> struct fma_op<__nv_bfloat162> {
	static constexpr double flops = 4;
	__device__ static __nv_bfloat162 init(int i) { return __float2bfloat162_rn(1.0f + i * 1e-3f); }
	__device__ static __nv_bfloat162 step(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c)
	{
		return __hfma2(a, b, c);
	}
	__device__ static bool nonzero(__nv_bfloat162 a) { return __low2float(a) != 0.0f; }
};

template <typename T>
__global__ void __launch_bounds__(FMA_THREADS) fma_chains(T *out, T b, T c, int iters)
{
	T a[CHAINS];

#pragma unroll
	for (int k = 0; k < CHAINS; k++)
		a[k] = fma_op<T>::init(k + threadIdx.x);
	for (int i = 0; i < iters; i++)
#pragma unroll
		for (int k = 0; k < CHAINS; k++)
			a[k] = fma_op<T>::step(a[k], b, c);
	T s = a[0];
#pragma unroll
	for (int k = 1; k < CHAINS; k++)
		s = fma_op<T>::step(s, b, a[k]);
	/* Never true for these inputs, but the compiler cannot know. */
	if (!fma_op<T>::nonzero(s))
		out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/* mma.sync m16n8k16 (fp16 in, fp32 accumulate): 4096 FLOPs per warp instruction. */
#define MMA_CHAINS 8
#define MMA_THREADS 256
__global__ void __launch_bounds__(MMA_THREADS) mma_chains(float *out, int iters)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	uint32_t a[4], b[2];
	float d[MMA_CHAINS][4];

	for (int i = 0; i < 4; i++) {
		__half2 h = __floats2half2_rn(1e-3f * (threadIdx.x + i), 1e-3f * i);
		a[i] = *(uint32_t *)&h;
	}
	for (int i = 0; i < 2; i++) {
		__half2 h = __floats2half2_rn(1e-3f * i, 1e-3f * threadIdx.x);
		b[i] = *(uint32_t *)&h;
	}
#pragma unroll
	for (int k = 0; k < MMA_CHAINS; k++)
		for (int j = 0; j < 4; j++)
			d[k][j] = 0;
	for (int i = 0; i < iters; i++)
#pragma unroll
		for (int k = 0; k < MMA_CHAINS; k++)
			asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
				     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
				     : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])
				     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
	float s = 0;
#pragma unroll
	for (int k = 0; k < MMA_CHAINS; k++)
		s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
	if (s == -1.0f)
		out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

/*
 * wgmma m64n256k16 (fp16 in, fp32 accumulate), both operands in shared
 * memory: 2*64*256*16 FLOPs per warpgroup instruction.  Only the sm_90a
 * build has it; elsewhere the kernel reports that it did nothing.
 */
#define WG_THREADS 128
#define WG_BATCH 4
#define WG_SMEM_HALVES 16384
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPC_HAVE_WGMMA 1
#define WGMMA_64x256x16(d, da, db) \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n" \
		"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" \
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63," \
		"%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79," \
		"%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95," \
		"%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111," \
		"%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
		"}, %128, %129, p, 1, 1, 0, 0;\n}\n" \
		: \
		"+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
		"+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
		"+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
		"+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
		"+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
		"+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
		"+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
		"+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
		"+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
		"+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
		"+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
		"+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
		"+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
		"+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
		"+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
		"+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
		: "l"(da), "l"(db))

/* Shared-memory matrix descriptor, no swizzle: start, leading and stride byte offsets. */
__device__ static uint64_t wg_desc(const void *smem, uint32_t lbo, uint32_t sbo)
{
	uint64_t addr = (uint64_t)__cvta_generic_to_shared(smem);

	return ((addr & 0x3FFFF) >> 4) | (uint64_t)((lbo & 0x3FFFF) >> 4) << 16 |
	       (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
}
#endif

__global__ void __launch_bounds__(WG_THREADS) wgmma_chains(float *out, int *ran, int iters)
{
#ifdef GPC_HAVE_WGMMA
	__shared__ __align__(1024) __half sm[WG_SMEM_HALVES];
	float d[128];

	for (int i = threadIdx.x; i < WG_SMEM_HALVES; i += blockDim.x)
		sm[i] = __float2half(1e-3f * (float)(i % 61));
	/* The stores above are read by the tensor cores' async proxy. */
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	__syncthreads();
#pragma unroll
	for (int i = 0; i < 128; i++)
		d[i] = 0;
	/* A: 64x16 at the start, B: 256x16 after it (8x8 core matrices, 128 B each). */
	uint64_t da = wg_desc(sm, 128, 256), db = wg_desc(sm + 2048, 128, 256);

	for (int i = 0; i < iters; i++) {
		asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
		for (int k = 0; k < WG_BATCH; k++)
			WGMMA_64x256x16(d, da, db);
		asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
	}
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
	float s = 0;
#pragma unroll
	for (int i = 0; i < 128; i++)
		s += d[i];
	if (s == -1.0f)
		out[blockIdx.x * blockDim.x + threadIdx.x] = s;
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*ran = 1;
#endif
}

__global__ void stream_copy(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		dst[i] = src[i];
}

/* Reads n float4 reps times through L2 only (ld.global.cg). */
__global__ void l2_read(const float4 *__restrict__ src, size_t n, int reps, float *out)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	float s = 0;

	for (int r = 0; r < reps; r++)
		for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
			float4 v = __ldcg(&src[i]);
			s += v.x + v.y + v.z + v.w;
		}
	if (s == -1.0f)
		out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/* ---- timing ---- */

#define TRY(call)                                                                      \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != cudaSuccess) {                                               \
			snprintf(err, errlen, "%s: %s", #call, cudaGetErrorString(e_)); \
			rc = -1;                                                       \
			goto out;                                                      \
		}                                                                      \
	} while (0)

/* Best seconds of TRIALS runs of launch() after one warm-up run. */
template <typename F>
static int best_time(F launch, double *secs, char *err, size_t errlen)
{
	cudaEvent_t t0 = NULL, t1 = NULL;
	float ms, best = 0;
	int rc = 0;

	TRY(cudaEventCreate(&t0));
	TRY(cudaEventCreate(&t1));
	launch();
	TRY(cudaGetLastError());
	TRY(cudaDeviceSynchronize());
	for (int t = 0; t < TRIALS; t++) {
		TRY(cudaEventRecord(t0));
		launch();
		TRY(cudaGetLastError());
		TRY(cudaEventRecord(t1));
		TRY(cudaEventSynchronize(t1));
		TRY(cudaEventElapsedTime(&ms, t0, t1));
		if (t == 0 || ms < best)
			best = ms;
	}
	*secs = best * 1e-3;
out:
	if (t0)
		cudaEventDestroy(t0);
	if (t1)
		cudaEventDestroy(t1);
	return rc;
}

static int sm_count(int *n, char *err, size_t errlen)
{
	int dev, rc = 0;

	TRY(cudaGetDevice(&dev));
	TRY(cudaDeviceGetAttribute(n, cudaDevAttrMultiProcessorCount, dev));
out:
	return rc;
}

template <typename T>
static int measure_fma(double *rate, int iters, char *err, size_t errlen)
{
	int sms, rc;
	T *out = NULL;
	double secs;
	T b, c;

	if ((rc = sm_count(&sms, err, errlen)))
		return rc;
	int blocks = sms * FMA_BLOCKS_PER_SM;
	TRY(cudaMalloc(&out, (size_t)blocks * FMA_THREADS * sizeof(T)));
	/* b close to 1, c small: the chains stay finite. */
	{
		float bf = 0.999f, cf = 1e-3f;
		if constexpr (std::is_same<T, double>::value) {
			b = (T)bf;
			c = (T)cf;
		} else if constexpr (std::is_same<T, float>::value) {
			b = bf;
			c = cf;
		} else if constexpr (std::is_same<T, __half2>::value) {
			b = __float2half2_rn(bf);
			c = __float2half2_rn(cf);
		} else {
			b = __float2bfloat162_rn(bf);
			c = __float2bfloat162_rn(cf);
		}
	}
	if ((rc = best_time([&] { fma_chains<T><<<blocks, FMA_THREADS>>>(out, b, c, iters); }, &secs,
			    err, errlen)))
		goto out;
	*rate = fma_op<T>::flops * CHAINS * (double)iters * blocks * FMA_THREADS / secs;
out:
	if (out)
		cudaFree(out);
	return rc;
}

static int measure_mma(double *rate, char *err, size_t errlen)
{
	int sms, rc, iters = 1024, dev, major;
	float *out = NULL;
	double secs;

	if ((rc = sm_count(&sms, err, errlen)))
		return rc;
	TRY(cudaGetDevice(&dev));
	TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	if (major < 8) {
		snprintf(err, errlen, "mma.sync m16n8k16 needs compute capability 8.0 or later");
		return 1;
	}
	{
		int blocks = sms * 4;
		TRY(cudaMalloc(&out, (size_t)blocks * MMA_THREADS * sizeof(float)));
		if ((rc = best_time([&] { mma_chains<<<blocks, MMA_THREADS>>>(out, iters); }, &secs,
				    err, errlen)))
			goto out;
		*rate = 4096.0 * MMA_CHAINS * iters * ((double)blocks * MMA_THREADS / 32) / secs;
	}
out:
	if (out)
		cudaFree(out);
	return rc;
}

static int measure_wgmma(double *rate, char *err, size_t errlen)
{
	int sms, rc, iters = 256, dev, major, minor, ran = 0;
	float *out = NULL;
	int *dran = NULL;
	double secs;

	if ((rc = sm_count(&sms, err, errlen)))
		return rc;
	TRY(cudaGetDevice(&dev));
	TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
	if (major != 9 || minor != 0) {
		snprintf(err, errlen, "wgmma is measured on compute capability 9.0 only");
		return 1;
	}
	{
		int blocks = sms * 2;
		TRY(cudaMalloc(&out, (size_t)blocks * WG_THREADS * sizeof(float)));
		TRY(cudaMalloc(&dran, sizeof(int)));
		TRY(cudaMemset(dran, 0, sizeof(int)));
		/* A short probe: the sm_90a code may not be the one loaded. */
		wgmma_chains<<<1, WG_THREADS>>>(out, dran, 1);
		TRY(cudaGetLastError());
		TRY(cudaMemcpy(&ran, dran, sizeof(int), cudaMemcpyDeviceToHost));
		if (!ran) {
			snprintf(err, errlen, "this build has no sm_90a code for wgmma");
			rc = 1;
			goto out;
		}
		if ((rc = best_time([&] { wgmma_chains<<<blocks, WG_THREADS>>>(out, dran, iters); },
				    &secs, err, errlen)))
			goto out;
		*rate = 2.0 * 64 * 256 * 16 * WG_BATCH * (double)iters * blocks / secs;
	}
out:
	if (out)
		cudaFree(out);
	if (dran)
		cudaFree(dran);
	return rc;
}

static int measure_dram(double *rate, char *err, size_t errlen)
{
	size_t freeb = 0, total = 0, bytes = (size_t)1 << 30;
	float4 *a = NULL, *b = NULL;
	double secs;
	int sms, rc;

	if ((rc = sm_count(&sms, err, errlen)))
		return rc;
	TRY(cudaMemGetInfo(&freeb, &total));
	while (bytes > ((size_t)64 << 20) && 2 * bytes > freeb / 2)
		bytes /= 2;
	TRY(cudaMalloc(&a, bytes));
	TRY(cudaMalloc(&b, bytes));
	TRY(cudaMemset(a, 0, bytes));
	{
		size_t n = bytes / sizeof(float4);
		if ((rc = best_time([&] { stream_copy<<<sms * 8, 512>>>(a, b, n); }, &secs, err, errlen)))
			goto out;
		*rate = 2.0 * (double)bytes / secs;
	}
out:
	if (a)
		cudaFree(a);
	if (b)
		cudaFree(b);
	return rc;
}

static int measure_l2(double *rate, char *err, size_t errlen)
{
	int sms, rc, dev, l2 = 0, reps = 256;
	float4 *a = NULL;
	float *out = NULL;
	double secs;

	if ((rc = sm_count(&sms, err, errlen)))
		return rc;
	TRY(cudaGetDevice(&dev));
	TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
	if (l2 < (1 << 20)) {
		snprintf(err, errlen, "L2 size unknown");
		return 1;
	}
	{
		/* A third of L2: resident even where L2 is split in two partitions. */
		size_t bytes = ((size_t)l2 / 3) & ~(size_t)0xFFFF, n = bytes / sizeof(float4);
		int blocks = sms * 4, threads = 512;

		TRY(cudaMalloc(&a, bytes));
		TRY(cudaMemset(a, 0, bytes));
		TRY(cudaMalloc(&out, (size_t)blocks * threads * sizeof(float)));
		if ((rc = best_time([&] { l2_read<<<blocks, threads>>>(a, n, reps, out); }, &secs, err,
				    errlen)))
			goto out;
		*rate = (double)bytes * reps / secs;
	}
out:
	if (a)
		cudaFree(a);
	if (out)
		cudaFree(out);
	return rc;
}

extern "C" int gpc_measure(enum gpc_kind kind, double *rate, char *err, size_t errlen)
{
	*rate = 0;
	err[0] = 0;
	switch (kind) {
	case GPC_FP64:
		return measure_fma<double>(rate, 8192, err, errlen);
	case GPC_FP32:
		return measure_fma<float>(rate, 16384, err, errlen);
	case GPC_FP16:
		return measure_fma<__half2>(rate, 16384, err, errlen);
	case GPC_BF16:
		return measure_fma<__nv_bfloat162>(rate, 16384, err, errlen);
	case GPC_TC_MMA:
		return measure_mma(rate, err, errlen);
	case GPC_TC_WGMMA:
		return measure_wgmma(rate, err, errlen);
	case GPC_DRAM:
		return measure_dram(rate, err, errlen);
	case GPC_L2:
		return measure_l2(rate, err, errlen);
	default:
		snprintf(err, errlen, "unknown measurement");
		return 1;
	}
}
