/*
 * T host threads, each with S non-blocking streams of its own, launching a
 * known number of kernels, memsets and copies on every stream.
 *
 * Checks that activity from several threads and streams is neither lost
 * nor attributed to the wrong stream or thread.  Each worker counts in its
 * own slot; main adds the slots up after joining.
 *
 * Truth: kernel.count.{ms_work,ms_tail}, memcpy.DtoH.*, memset.*, and
 *   streams.min                     distinct streams with activity (>= T*S)
 *   api_threads.min                 distinct threads calling CUDA (>= T)
 *   api.count.cudaLaunchKernel      runtime launches (exact: only workers launch)
 *   api.threads.cudaLaunchKernel    threads that launched (exact: T)
 */
#include <cuda_runtime.h>
#include <pthread.h>

#include "common.h"

#define T 4           /* worker threads */
#define S 3           /* streams per worker */
#define K 20          /* ms_work launches per stream */
#define N (1 << 16)   /* floats per stream buffer */

extern "C" __global__ void ms_work(float *x, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += v;
}

extern "C" __global__ void ms_tail(float *x)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		x[0] += 1000.0f;
}

struct worker {
	int id;
	long long kernels_work, kernels_tail, launches;
	long long memsets, memset_bytes, copies, copy_bytes;
};

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	cudaStream_t st[S];
	float *d[S], *h;

	CK(cudaSetDevice(0));
	CK(cudaMallocHost(&h, S * N * sizeof(float)));
	for (int s = 0; s < S; s++) {
		CK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
		CK(cudaMalloc(&d[s], N * sizeof(float)));
	}
	for (int s = 0; s < S; s++) {
		CK(cudaMemsetAsync(d[s], 0, N * sizeof(float), st[s]));
		w->memsets++;
		w->memset_bytes += N * sizeof(float);
		for (int k = 0; k < K; k++) {
			ms_work<<<N / 256, 256, 0, st[s]>>>(d[s], N, 1.0f);
			CK(cudaGetLastError());
			w->kernels_work++;
		}
	}
	ms_tail<<<1, 32, 0, st[0]>>>(d[0]);
	CK(cudaGetLastError());
	w->kernels_tail++;
	for (int s = 0; s < S; s++) {
		CK(cudaMemcpyAsync(h + s * N, d[s], N * sizeof(float),
				   cudaMemcpyDeviceToHost, st[s]));
		w->copies++;
		w->copy_bytes += N * sizeof(float);
	}
	for (int s = 0; s < S; s++)
		CK(cudaStreamSynchronize(st[s]));
	w->launches = w->kernels_work + w->kernels_tail;

	for (int s = 0; s < S; s++) {
		float want = (float)K + (s == 0 ? 1000.0f : 0.0f);
		REQUIRE(h[s * N] == want, "worker %d stream %d: %g, want %g",
			w->id, s, (double)h[s * N], (double)want);
		REQUIRE(h[s * N + N - 1] == (float)K, "worker %d stream %d tail",
			w->id, s);
		CK(cudaStreamDestroy(st[s]));
		CK(cudaFree(d[s]));
	}
	CK(cudaFreeHost(h));
	return NULL;
}

int main(void)
{
	pthread_t th[T];
	struct worker w[T];
	long long launches = 0;

	/* create the context before the workers race to do it */
	CK(cudaSetDevice(0));
	CK(cudaFree(0));

	memset(w, 0, sizeof(w));
	for (int i = 0; i < T; i++) {
		w[i].id = i;
		REQUIRE(!pthread_create(&th[i], NULL, worker_main, &w[i]),
			"pthread_create");
	}
	for (int i = 0; i < T; i++) {
		REQUIRE(!pthread_join(th[i], NULL), "pthread_join");
		truth_kernel("ms_work", w[i].kernels_work);
		truth_kernel("ms_tail", w[i].kernels_tail);
		truth_add("memset.count", w[i].memsets);
		truth_add("memset.bytes", w[i].memset_bytes);
		truth_add("memcpy.DtoH.count", w[i].copies);
		truth_add("memcpy.DtoH.bytes", w[i].copy_bytes);
		launches += w[i].launches;
	}
	truth_set("streams.min", T * S);
	truth_set("api_threads.min", T);
	truth_set("api.count.cudaLaunchKernel", launches);
	truth_set("api.threads.cudaLaunchKernel", T);
	truth_print();
	return 0;
}
