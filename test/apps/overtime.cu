// The GPU over time: alternating phases of a DRAM-bound copy and an
// FMA-bound loop, about 200 ms each, three times, with an idle gap of
// 30 ms between phases.  Prints the bytes each copy launch moves (read and
// written), the number of launches per phase and nvidia-smi's reading of
// the SM clock during the last FMA phase (read by the test, which runs
// nvidia-smi itself), so test/gpu/run.py can check the sampled DRAM
// bandwidth and SM issue of each kernel, and the telemetry.
//
// "short" (argv[1]) runs one round of 20 ms phases and ends while the
// sampler is still setting up; "reset" ends with cudaDeviceReset; both
// check that the end of the trace never waits on the sampler nor crashes.
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define N (64u << 20)              /* float4 elements: 1 GiB per buffer */
#define PHASE_MS 200.0
#define ROUNDS 3
#define SHORT_MS 20.0

__global__ void copy_f4(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

__global__ void fma_loop(float *out, int iters)
{
	float a = threadIdx.x, b = 1.0001f, c = 0.9999f, d = 0.5f, e = 0.25f, f = 0.125f,
	      g = 0.0625f, h = 1.5f;

	for (int i = 0; i < iters; i++) {
		a = fmaf(a, b, c); d = fmaf(d, b, c); e = fmaf(e, b, c); f = fmaf(f, b, c);
		g = fmaf(g, b, c); h = fmaf(h, b, c); c = fmaf(c, b, a); b = fmaf(b, c, d);
	}
	if (a + d + e + f + g + h == 12345.0f)
		out[threadIdx.x] = a;
}

static double ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	float4 *a, *b;
	float *o;
	int dev = 0, sms = 0, copies = 0, fmas = 0;
	int shortrun = 0, reset = 0;
	for (int i = 1; i < argc; i++) {
		shortrun |= !strcmp(argv[i], "short");
		reset |= !strcmp(argv[i], "reset");
	}
	const int rounds = shortrun ? 1 : ROUNDS;
	const double phase_ms = shortrun ? SHORT_MS : PHASE_MS;
	cudaEvent_t e0, e1;
	float ms;

	if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
		printf("SKIP no CUDA device\n");
		return 0;
	}
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaMalloc(&a, N * sizeof(float4)));
	CK(cudaMalloc(&b, N * sizeof(float4)));
	CK(cudaMalloc(&o, 1024 * sizeof(float)));
	CK(cudaMemset(a, 1, N * sizeof(float4)));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	/* Warm up, and size the FMA launch to about 5 ms. */
	copy_f4<<<sms * 8, 256>>>(a, b, N);
	CK(cudaEventRecord(e0));
	fma_loop<<<sms * 8, 256>>>(o, 100000);
	CK(cudaEventRecord(e1));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	int iters = (int)(100000 * 5.0 / (ms > 0.01 ? ms : 0.01));
	CK(cudaDeviceSynchronize());
	/* PM sampling takes up to about a second to set up (more on an H200 than
	 * an H100): the rounds begin after it, so that samples cover each. */
	if (!shortrun)
		usleep(1500000);
	for (int r = 0; r < rounds; r++) {
		double t = ms_now();

		while (ms_now() - t < phase_ms) {
			copy_f4<<<sms * 8, 256>>>(a, b, N);
			copies++;
			CK(cudaDeviceSynchronize());
		}
		usleep(30000);
		t = ms_now();
		while (ms_now() - t < phase_ms) {
			fma_loop<<<sms * 8, 256>>>(o, iters);
			fmas++;
			CK(cudaDeviceSynchronize());
		}
		usleep(30000);
	}
	CK(cudaGetLastError());
	truth_set("kernel.count.copy_f4", copies + 1);
	truth_set("kernel.count.fma_loop", fmas + 1);
	printf("TRUTH overtime.copy_bytes %llu\n", (unsigned long long)(2ull * N * sizeof(float4)));
	truth_print();
	if (reset)
		CK(cudaDeviceReset());
	return 0;
}
