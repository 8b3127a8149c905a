// NVCCFLAGS: -cudart shared -g -Xlinker --export-dynamic -lcublas
/*
 * fp32-gemm with a fair twin, for test/gpu/findings.py: the same matrix
 * products through cuBLAS, on CUDA cores and on tensor cores.
 *
 *   gemm        GEMM_REPS x cublasSgemm of two N x N FP32 matrices with
 *               cuBLAS's default math: FP32 FMAs on CUDA cores.
 *   gemm fixed  the same calls with CUBLAS_TF32_TENSOR_OP_MATH: cuBLAS runs
 *               them on TF32 tensor cores (FP32 in and out, the fix
 *               torch.backends.cuda.matmul.allow_tf32 makes).  -> fp32-gemm
 *
 * One warm-up call before the loop (cuBLAS loads its kernels at the first).
 * Prints the truth: the loop's host time, the call's line (the launch site
 * the rule must name: libcublas's own frames are the library's, not the
 * program's), the products made.
 */
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

#define GEMM_N 4096
#define GEMM_REPS 12

#define CB(call)                                                                        \
	do {                                                                            \
		cublasStatus_t st_ = (call);                                            \
		if (st_ != CUBLAS_STATUS_SUCCESS) {                                     \
			fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, \
				#call, (int)st_);                                       \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

extern "C" __global__ void fill(float *p, size_t n, float v)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v * (float)(i % 17) / 17.0f;
}

int main(int argc, char **argv)
{
	const size_t n = GEMM_N, elems = n * n;
	const float one = 1.0f, zero = 0.0f;
	const int m = GEMM_N;
	int fixed, launch_line = 0;
	cublasStatus_t st;
	unsigned long long t0, t1;
	cublasHandle_t h;
	cudaStream_t s;
	float *a, *b, *c;

	if (argc < 2 || strcmp(argv[1], "gemm") != 0) {
		fprintf(stderr, "usage: findings_blas gemm [fixed]\n");
		return 2;
	}
	fixed = argc > 2 && !strcmp(argv[2], "fixed");
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&a, elems * sizeof(float)));
	CK(cudaMalloc(&b, elems * sizeof(float)));
	CK(cudaMalloc(&c, elems * sizeof(float)));
	fill<<<(unsigned)((elems + 255) / 256), 256, 0, s>>>(a, elems, 1.0f);
	fill<<<(unsigned)((elems + 255) / 256), 256, 0, s>>>(b, elems, 0.5f);
	CK(cudaGetLastError());
	CB(cublasCreate(&h));
	CB(cublasSetStream(h, s));
	CB(cublasSetMathMode(h, fixed ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
	CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m, b, m, &zero, c, m));
	CK(cudaStreamSynchronize(s));
	t0 = now_ns();
	for (int i = 0; i < GEMM_REPS; i++) {
		/* One line: the call's line is the launch site the rule must name. */
		launch_line = __LINE__ + 1;
		st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, m, b, m, &zero, c, m);
		CB(st);
	}
	CK(cudaStreamSynchronize(s));
	t1 = now_ns();
	CB(cublasDestroy(h));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	CK(cudaStreamDestroy(s));
	truth_set("findings.loop_ns", (long long)(t1 - t0));
	truth_set("findings.line.launch", launch_line);
	truth_set("findings.steps", GEMM_REPS + 1);
	truth_set("findings.gemm_n", GEMM_N);
	truth_print();
	return 0;
}
