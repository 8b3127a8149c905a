// LIBS: -lcuda
// Context lifecycles and child processes the recorder must live through.
//
//   lifecycle_mix reset    kernels, cudaDeviceReset, more kernels
//   lifecycle_mix ctxloop  driver API: 5 times create a context, launch,
//                          destroy it; then two contexts on device 0 at once
//   lifecycle_mix spawn    kernels, then posix_spawn /bin/true, vfork+exec
//                          /bin/true, fork a child that forks again (both
//                          _exit without CUDA); waits for all; more kernels
//   lifecycle_mix alldev   a kernel on every GPU
//
// Truth: kernel.count.mix_inc, kernel.total.
#include <cuda.h>
#include <cuda_runtime.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char **environ;

extern "C" __global__ void mix_inc(int *x)
{
	if (threadIdx.x == 0)
		x[blockIdx.x] += 1;
}

static int launches;

static void work(int n)
{
	int *d;

	CK(cudaMalloc(&d, 64 * sizeof(int)));
	for (int i = 0; i < n; i++)
		mix_inc<<<1, 32>>>(d);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	launches += n;
}

static void ctx_work(CUcontext c, CUfunction f, int n)
{
	CUdeviceptr d;
	void *args[] = { &d };

	CU(cuCtxPushCurrent(c));
	CU(cuMemAlloc(&d, 64 * sizeof(int)));
	for (int i = 0; i < n; i++)
		CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, 0));
	CU(cuCtxSynchronize());
	CU(cuMemFree(d));
	CU(cuCtxPopCurrent(NULL));
	launches += n;
}

static CUfunction get_fn(CUcontext c)
{
	CUfunction f;
	cudaKernel_t k;

	/* The runtime's kernel, loaded into this context. */
	CU(cuCtxPushCurrent(c));
	CK(cudaGetKernel(&k, (const void *)mix_inc));
	CU(cuKernelGetFunction(&f, (CUkernel)k));
	CU(cuCtxPopCurrent(NULL));
	return f;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "reset";

	if (!strcmp(mode, "reset")) {
		work(100);
		CK(cudaDeviceReset());
		work(50);
	} else if (!strcmp(mode, "ctxloop")) {
		CUdevice dev;
		CUcontext a, b;

		CU(cuInit(0));
		CU(cuDeviceGet(&dev, 0));
		for (int i = 0; i < 5; i++) {
			CU(cuCtxCreate(&a, NULL, 0, dev));
			CU(cuCtxPopCurrent(NULL));
			ctx_work(a, get_fn(a), 10);
			CU(cuCtxDestroy(a));
		}
		CU(cuCtxCreate(&a, NULL, 0, dev));
		CU(cuCtxPopCurrent(NULL));
		CU(cuCtxCreate(&b, NULL, 0, dev));
		CU(cuCtxPopCurrent(NULL));
		ctx_work(a, get_fn(a), 20);
		ctx_work(b, get_fn(b), 30);
		CU(cuCtxDestroy(a));
		CU(cuCtxDestroy(b));
	} else if (!strcmp(mode, "spawn")) {
		char *tv[] = { (char *)"true", NULL };
		pid_t p, q;
		int st;

		work(40);
		REQUIRE(posix_spawn(&p, "/bin/true", NULL, NULL, tv, environ) == 0, "posix_spawn");
		REQUIRE(waitpid(p, &st, 0) == p && WIFEXITED(st), "spawned child");
		p = vfork();
		if (p == 0) {
			execve("/bin/true", tv, environ);
			_exit(127);
		}
		REQUIRE(waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st), "vfork child");
		p = fork();
		if (p == 0) {
			q = fork();
			if (q == 0)
				_exit(0);
			waitpid(q, &st, 0);
			_exit(0);
		}
		REQUIRE(waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st), "fork child");
		work(60);
	} else if (!strcmp(mode, "alldev")) {
		int n = 0;

		CK(cudaGetDeviceCount(&n));
		for (int i = 0; i < n; i++) {
			CK(cudaSetDevice(i));
			work(10);
		}
		printf("TRUTH devices.min %d\n", n);
	} else {
		REQUIRE(0, "unknown mode %s", mode);
	}
	printf("TRUTH kernel.count.mix_inc %d\n", launches);
	printf("TRUTH kernel.total %d\n", launches);
	return 0;
}
