/*
 * Kernels of exactly known work, for hardware metrics (--metrics):
 *
 *   fma_f64 / fma_f32 / fma_f16   CHAINS independent FMA chains of ITERS
 *                                 steps per thread (fma, fmaf, __hfma2)
 *   stream_copy                   dst[i] = src[i] over COPY_BYTES
 *   mma_f16f32 / mma_bf16f32 /    MMA_CHAINS independent mma.sync chains of
 *   mma_f16f16 / mma_tf32         MMA_ITERS steps per warp (tensor cores
 *                                 without wgmma: m16n8k16, m16n8k8 for tf32)
 *
 * FLOPs count an FMA as 2 and an HFMA2 as 4 (two half lanes), as Nsight
 * Compute does.  Each FMA kernel is launched twice with the same
 * configuration (only the first launch is profiled by default), and one
 * small kernel is captured into a graph and launched from it (never
 * profiled).  The program prints the bits of its results, so runs with and
 * without --metrics can be compared byte for byte.
 *
 * METRICS_TRUTH_REPS=R launches every kernel but the graph's R times as
 * often; METRICS_TRUTH_THREADS=T runs the kernels on T threads at once,
 * each with its own buffers and stream (results compared between them:
 * "RESULT threads_agree 1"); METRICS_TRUTH_BALLAST=F first allocates the
 * fraction F (0 < F < 1) of the free device memory and keeps it.
 *
 * Truth: kernel.count.*, kernel.total, memset.*, and
 *   flops.fma_f64 / flops.fma_f32 / flops.fma_f16   per launch
 *   flops.mma_*                                     per launch (2*M*N*K per mma)
 *   bytes.stream_copy.read / .write                 per launch (DRAM)
 *   graph.launches                                  cudaGraphLaunch calls
 *   graph_nodes.step.nodes / .kernels               the captured graph's shape
 *   memcpy.DtoH.*                                   the copies of the results
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

#define BLOCKS 528                 /* 4 per SM on an H100/H200 */
#define THREADS 256
#define ITERS 4096
#define CHAINS 4
#define COPY_N (256u << 20)        /* floats: 1 GiB per buffer */
#define GRAPH_LAUNCHES 2
#define MMA_THREADS 128            /* 4 warps */
#define MMA_ITERS 1024
#define MMA_CHAINS 4
#define MAX_THREADS 16

extern "C" __global__ void fma_f64(double *out, double b, double c)
{
	double a[CHAINS];

	size_t at = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * CHAINS;

	for (int k = 0; k < CHAINS; k++)
		a[k] = out[at + k];
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int k = 0; k < CHAINS; k++)
			a[k] = fma(a[k], b, c);
	for (int k = 0; k < CHAINS; k++)
		out[at + k] = a[k];
}

extern "C" __global__ void fma_f32(float *out, float b, float c)
{
	float a[CHAINS];

	size_t at = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * CHAINS;

	for (int k = 0; k < CHAINS; k++)
		a[k] = out[at + k];
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int k = 0; k < CHAINS; k++)
			a[k] = fmaf(a[k], b, c);
	for (int k = 0; k < CHAINS; k++)
		out[at + k] = a[k];
}

extern "C" __global__ void fma_f16(__half2 *out, __half2 b, __half2 c)
{
	__half2 a[CHAINS];

	size_t at = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * CHAINS;

	for (int k = 0; k < CHAINS; k++)
		a[k] = out[at + k];
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int k = 0; k < CHAINS; k++)
			a[k] = __hfma2(a[k], b, c);
	for (int k = 0; k < CHAINS; k++)
		out[at + k] = a[k];
}

extern "C" __global__ void stream_copy(float *dst, const float *src, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		dst[i] = src[i];
}

/*
 * mma.sync chains: each warp keeps MMA_CHAINS accumulator tiles and adds
 * A*B to each MMA_ITERS times.  A and B fragments come from memory, each
 * word read by one thread only (so the kernel's memory traffic does not
 * depend on L1 hit timing); one m16n8k16 is 2*16*8*16 FLOPs, m16n8k8 half.
 */
#define MMA_F32_ACC(shape, types)                                                       \
	asm volatile("mma.sync.aligned." shape ".row.col." types                       \
		     " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"           \
		     : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])        \
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#define MMA_KERNEL_F32(name, shape, types)                                              \
	extern "C" __global__ void name(float *out, const uint32_t *in)                \
	{                                                                              \
		size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;              \
		uint32_t a[4], b[2];                                                   \
		float d[MMA_CHAINS][4];                                                \
                                                                                       \
		for (int i = 0; i < 4; i++)                                            \
			a[i] = in[t * 6 + i];                                          \
		for (int i = 0; i < 2; i++)                                            \
			b[i] = in[t * 6 + 4 + i];                                      \
		for (int k = 0; k < MMA_CHAINS; k++)                                   \
			for (int i = 0; i < 4; i++)                                    \
				d[k][i] = 0;                                           \
		for (int it = 0; it < MMA_ITERS; it++)                                 \
			_Pragma("unroll") for (int k = 0; k < MMA_CHAINS; k++)         \
				MMA_F32_ACC(shape, types);                             \
		for (int k = 0; k < MMA_CHAINS; k++)                                   \
			for (int i = 0; i < 4; i++)                                    \
				out[(t * MMA_CHAINS + k) * 4 + i] = d[k][i];           \
	}

MMA_KERNEL_F32(mma_f16f32, "m16n8k16", "f32.f16.f16.f32")
MMA_KERNEL_F32(mma_bf16f32, "m16n8k16", "f32.bf16.bf16.f32")
MMA_KERNEL_F32(mma_tf32, "m16n8k8", "f32.tf32.tf32.f32")

extern "C" __global__ void mma_f16f16(uint32_t *out, const uint32_t *in)
{
	size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t a[4], b[2], d[MMA_CHAINS][2];

	for (int i = 0; i < 4; i++)
		a[i] = in[t * 6 + i];
	for (int i = 0; i < 2; i++)
		b[i] = in[t * 6 + 4 + i];
	for (int k = 0; k < MMA_CHAINS; k++)
		d[k][0] = d[k][1] = 0;
	for (int it = 0; it < MMA_ITERS; it++)
#pragma unroll
		for (int k = 0; k < MMA_CHAINS; k++)
			asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"
				     " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
				     : "+r"(d[k][0]), "+r"(d[k][1])
				     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
	for (int k = 0; k < MMA_CHAINS; k++)
		for (int i = 0; i < 2; i++)
			out[(t * MMA_CHAINS + k) * 2 + i] = d[k][i];
}

extern "C" __global__ void graph_step(int *x)
{
	x[threadIdx.x] += 1;
}

static uint64_t fnv(const unsigned char *h, size_t bytes)
{
	uint64_t d = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < bytes; i++)
		d = (d ^ h[i]) * 0x100000001b3ull;
	return d;
}

/* FNV-1a over the bytes of a device buffer, copied back. */
static uint64_t digest(const void *dev, size_t bytes)
{
	unsigned char *h = (unsigned char *)malloc(bytes);
	uint64_t d;

	REQUIRE(h, "out of memory");
	copy_sync(h, dev, bytes, cudaMemcpyDeviceToHost);
	d = fnv(h, bytes);
	free(h);
	return d;
}

#define NMMA 4

/*
 * One thread's kernels: its buffers and stream, its results, and what it
 * did for the truth table (which main adds: the table is single-threaded).
 */
struct work {
	double *d64;
	float *d32, *src, *dst, *mma_out;
	__half2 *d16;
	uint32_t *mma_in;
	cudaStream_t st;
	int reps, print;
	long long memsets, memset_bytes, dtoh, dtoh_bytes;
	uint64_t mma[NMMA];        /* digests of the mma outputs (last repetition) */
	uint64_t res[4];           /* digests of d64, d32, d16, dst at the end */
};

static void w_set(struct work *w, void *p, int v, size_t n)
{
	CK(cudaMemsetAsync(p, v, n, w->st));
	w->memsets++;
	w->memset_bytes += (long long)n;
}

static uint64_t w_digest(struct work *w, const void *dev, size_t bytes)
{
	unsigned char *h = (unsigned char *)malloc(bytes);
	uint64_t d;

	REQUIRE(h, "out of memory");
	CK(cudaStreamSynchronize(w->st));
	CK(cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost));
	w->dtoh++;
	w->dtoh_bytes += (long long)bytes;
	d = fnv(h, bytes);
	free(h);
	return d;
}

static const size_t n_threads_ = (size_t)BLOCKS * THREADS;
static const size_t mma_threads_ = (size_t)BLOCKS * MMA_THREADS;

static void *run_work(void *arg)
{
	struct work *w = (struct work *)arg;
	const size_t n = n_threads_, mma_threads = mma_threads_;
	static const struct {
		const char *name;
		void (*fn)(float *, const uint32_t *);
	} mma[] = {
		{ "mma_f16f32", mma_f16f32 },
		{ "mma_bf16f32", mma_bf16f32 },
		{ "mma_tf32", mma_tf32 },
	};
	const size_t out_bytes = mma_threads * MMA_CHAINS * 4 * sizeof(float);

	CK(cudaMalloc(&w->d64, n * CHAINS * sizeof(double)));
	CK(cudaMalloc(&w->d32, n * CHAINS * sizeof(float)));
	CK(cudaMalloc(&w->d16, n * CHAINS * sizeof(__half2)));
	CK(cudaMalloc(&w->src, (size_t)COPY_N * sizeof(float)));
	CK(cudaMalloc(&w->dst, (size_t)COPY_N * sizeof(float)));
	CK(cudaMalloc(&w->mma_in, mma_threads * 6 * sizeof(uint32_t)));
	CK(cudaMalloc(&w->mma_out, out_bytes));
	w_set(w, w->d64, 0, n * CHAINS * sizeof(double));
	w_set(w, w->d32, 0, n * CHAINS * sizeof(float));
	w_set(w, w->d16, 0x3c, n * CHAINS * sizeof(__half2));
	w_set(w, w->src, 0x41, (size_t)COPY_N * sizeof(float));
	w_set(w, w->dst, 0, (size_t)COPY_N * sizeof(float));
	w_set(w, w->mma_in, 0x10, mma_threads * 6 * sizeof(uint32_t)); /* small values in every format */
	CK(cudaStreamSynchronize(w->st));

	for (int r = 0; r < w->reps; r++) {
		for (int rep = 0; rep < 2; rep++) {
			fma_f64<<<BLOCKS, THREADS, 0, w->st>>>(w->d64, 1.0000001, 0.5);
			fma_f32<<<BLOCKS, THREADS, 0, w->st>>>(w->d32, 0.999f, 0.25f);
			fma_f16<<<BLOCKS, THREADS, 0, w->st>>>(w->d16, __floats2half2_rn(0.5f, 0.25f),
							      __floats2half2_rn(0.125f, 0.5f));
			CK(cudaGetLastError());
		}
		stream_copy<<<BLOCKS * 4, THREADS, 0, w->st>>>(w->dst, w->src, (size_t)COPY_N);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(w->st));

		/* Tensor cores through mma.sync; each output compared after the next launch. */
		for (size_t i = 0; i < sizeof(mma) / sizeof(mma[0]); i++) {
			mma[i].fn<<<BLOCKS, MMA_THREADS, 0, w->st>>>(w->mma_out, w->mma_in);
			CK(cudaGetLastError());
			w->mma[i] = w_digest(w, w->mma_out, out_bytes);
			if (w->print)
				printf("RESULT %s %016llx\n", mma[i].name, (unsigned long long)w->mma[i]);
		}
		mma_f16f16<<<BLOCKS, MMA_THREADS, 0, w->st>>>((uint32_t *)w->mma_out, w->mma_in);
		CK(cudaGetLastError());
		w->mma[3] = w_digest(w, w->mma_out, mma_threads * MMA_CHAINS * 2 * sizeof(uint32_t));
		if (w->print)
			printf("RESULT mma_f16f16 %016llx\n", (unsigned long long)w->mma[3]);
	}
	w->res[0] = w_digest(w, w->d64, n * CHAINS * sizeof(double));
	w->res[1] = w_digest(w, w->d32, n * CHAINS * sizeof(float));
	w->res[2] = w_digest(w, w->d16, n * CHAINS * sizeof(__half2));
	w->res[3] = w_digest(w, w->dst, (size_t)COPY_N * sizeof(float));
	return NULL;
}

int main(void)
{
	const double threads = (double)n_threads_;
	const double mma_warps = (double)mma_threads_ / 32;
	static const char *const kernels[] = { "fma_f64", "fma_f32", "fma_f16" };
	static const char *const mmas[] = { "mma_f16f32", "mma_bf16f32", "mma_tf32", "mma_f16f16" };
	static struct work w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	int *gx;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	int agree = 1;

	/* METRICS_TRUTH_REPS=R: every kernel but the graph's launched R times as often. */
	const char *reps_env = getenv("METRICS_TRUTH_REPS");
	const int reps = reps_env && atoi(reps_env) > 0 ? atoi(reps_env) : 1;
	const char *nt_env = getenv("METRICS_TRUTH_THREADS");
	const int nt = nt_env && atoi(nt_env) > 1 ? (atoi(nt_env) < MAX_THREADS ? atoi(nt_env) : MAX_THREADS)
						  : 1;

	/* METRICS_TRUTH_BALLAST=F: first hold the fraction F of the free device memory. */
	const char *ballast_env = getenv("METRICS_TRUTH_BALLAST");
	if (ballast_env && atof(ballast_env) > 0 && atof(ballast_env) < 1) {
		size_t free_b, total_b;
		void *ballast;

		CK(cudaMemGetInfo(&free_b, &total_b));
		CK(cudaMalloc(&ballast, (size_t)(atof(ballast_env) * (double)free_b)));
	}
	CK(cudaMalloc(&gx, 32 * sizeof(int)));
	set_sync(gx, 0, 32 * sizeof(int));
	CK(cudaDeviceSynchronize());
	for (int t = 0; t < nt; t++) {
		w[t].reps = reps;
		w[t].print = t == 0;
		if (nt > 1)
			CK(cudaStreamCreateWithFlags(&w[t].st, cudaStreamNonBlocking));
	}
	if (nt == 1) {
		run_work(&w[0]); /* the legacy default stream, on the main thread */
	} else {
		for (int t = 0; t < nt; t++)
			REQUIRE(pthread_create(&th[t], NULL, run_work, &w[t]) == 0, "pthread_create");
		for (int t = 0; t < nt; t++)
			pthread_join(th[t], NULL);
	}
	for (int t = 0; t < nt; t++) {
		for (int i = 0; i < 3; i++)
			truth_kernel(kernels[i], 2 * reps);
		truth_kernel("stream_copy", reps);
		for (int i = 0; i < NMMA; i++)
			truth_kernel(mmas[i], reps);
		truth_add("memset.count", w[t].memsets);
		truth_add("memset.bytes", w[t].memset_bytes);
		truth_add("memcpy.DtoH.count", w[t].dtoh);
		truth_add("memcpy.DtoH.bytes", w[t].dtoh_bytes);
		agree &= !memcmp(w[t].res, w[0].res, sizeof(w[0].res)) &&
			 !memcmp(w[t].mma, w[0].mma, sizeof(w[0].mma));
	}

	/* A captured launch and graph launches: never profiled. */
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	graph_step<<<1, 32, 0, s>>>(gx);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int i = 0; i < GRAPH_LAUNCHES; i++) {
		CK(cudaGraphLaunch(ge, s));
		truth_kernel("graph_step", 1);
	}
	CK(cudaStreamSynchronize(s));

	printf("RESULT fma_f64 %016llx\n", (unsigned long long)w[0].res[0]);
	printf("RESULT fma_f32 %016llx\n", (unsigned long long)w[0].res[1]);
	printf("RESULT fma_f16 %016llx\n", (unsigned long long)w[0].res[2]);
	printf("RESULT stream_copy %016llx\n", (unsigned long long)w[0].res[3]);
	if (nt > 1)
		printf("RESULT threads_agree %d\n", agree);
	printf("RESULT graph_step %016llx\n", (unsigned long long)digest(gx, 32 * sizeof(int)));

	truth_set("flops.fma_f64", (long long)(2.0 * threads * ITERS * CHAINS));
	truth_set("flops.fma_f32", (long long)(2.0 * threads * ITERS * CHAINS));
	truth_set("flops.fma_f16", (long long)(4.0 * threads * ITERS * CHAINS));
	truth_set("bytes.stream_copy.read", (long long)COPY_N * (long long)sizeof(float));
	truth_set("bytes.stream_copy.write", (long long)COPY_N * (long long)sizeof(float));
	truth_set("flops.mma_f16f32", (long long)(mma_warps * MMA_ITERS * MMA_CHAINS * 2 * 16 * 8 * 16));
	truth_set("flops.mma_bf16f32", (long long)(mma_warps * MMA_ITERS * MMA_CHAINS * 2 * 16 * 8 * 16));
	truth_set("flops.mma_f16f16", (long long)(mma_warps * MMA_ITERS * MMA_CHAINS * 2 * 16 * 8 * 16));
	truth_set("flops.mma_tf32", (long long)(mma_warps * MMA_ITERS * MMA_CHAINS * 2 * 16 * 8 * 8));
	truth_set("graph.launches", GRAPH_LAUNCHES);
	truth_set("graph_nodes.step.nodes", 1);
	truth_set("graph_nodes.step.kernels", GRAPH_LAUNCHES);
	truth_print();

	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	for (int t = 0; t < nt; t++) {
		CK(cudaFree(w[t].d64));
		CK(cudaFree(w[t].d32));
		CK(cudaFree(w[t].d16));
		CK(cudaFree(w[t].src));
		CK(cudaFree(w[t].dst));
		CK(cudaFree(w[t].mma_in));
		CK(cudaFree(w[t].mma_out));
		if (nt > 1)
			CK(cudaStreamDestroy(w[t].st));
	}
	CK(cudaFree(gx));
	return 0;
}
