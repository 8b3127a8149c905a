/*
 * fork() and fork()+exec() from a process that has initialized CUDA.
 *
 *   1. parent: CUDA work (kernels, memset)
 *   2. fork(); the child makes no CUDA call and exits normally with exit(),
 *      so inherited atexit handlers run in it; it must not hang
 *   3. fork() + exec of this program with the argument "child"; the new
 *      image does its own CUDA work and must be traced into its own file
 *   4. parent: more CUDA work after both children ended
 *
 * The parent waits for each child at most CHILD_TIMEOUT_S seconds, then
 * kills it and fails, so a hang shows up as a clear error.
 *
 * Truth: the parent's counts under the usual keys; the exec'd child prints
 * its own under "child."; pid, fork_child.pid and exec_child.pid name the
 * three processes so the test can tell the trace files apart.
 */
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define N (1 << 18)
#define CHILD_TIMEOUT_S 60

extern "C" __global__ void fe_parent(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

extern "C" __global__ void fe_child(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 2.0f;
}

/* Waits for pid up to CHILD_TIMEOUT_S; exits 1 if it hangs or fails. */
static void wait_child(pid_t pid, const char *what)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	int status;

	for (int i = 0; i < CHILD_TIMEOUT_S * 100; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		REQUIRE(r >= 0, "waitpid(%s)", what);
		if (r == pid) {
			REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				"%s ended with status 0x%x", what, status);
			return;
		}
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fprintf(stderr, "%s did not exit within %d s (hung)\n", what,
		CHILD_TIMEOUT_S);
	exit(1);
}

/* The exec'd image: its own CUDA work, truth under "child.". */
static int child_main(void)
{
	float *d, *h = (float *)malloc(N * sizeof(float));

	REQUIRE(h, "out of memory");
	for (int i = 0; i < N; i++)
		h[i] = 1.0f;
	CK(cudaMalloc(&d, N * sizeof(float)));
	copy_sync(d, h, N * sizeof(float), cudaMemcpyHostToDevice);
	for (int i = 0; i < 17; i++)
		LAUNCH(fe_child, N / 256, 256, 0, 0, d, N);
	set_sync(d + N / 2, 0, N / 2 * sizeof(float));
	copy_sync(h, d, N * sizeof(float), cudaMemcpyDeviceToHost);
	REQUIRE(h[0] == 35.0f && h[N - 1] == 0.0f, "child result %g %g",
		(double)h[0], (double)h[N - 1]);
	CK(cudaFree(d));
	free(h);
	truth_print_prefixed("child.");
	return 0;
}

int main(int argc, char **argv)
{
	float *d, h0 = 0;
	pid_t fork_child, exec_child;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child_main();

	CK(cudaMalloc(&d, N * sizeof(float)));
	set_sync(d, 0, N * sizeof(float));
	for (int i = 0; i < 9; i++)
		LAUNCH(fe_parent, N / 256, 256, 0, 0, d, N);
	CK(cudaDeviceSynchronize());
	fflush(stdout);

	/* 2. plain fork: no CUDA in the child, normal exit */
	fork_child = fork();
	REQUIRE(fork_child >= 0, "fork");
	if (fork_child == 0) {
		long sum = 0;
		for (int i = 0; i < 1000; i++)
			sum += i;
		exit(sum == 499500 ? 0 : 2);
	}
	wait_child(fork_child, "forked child");

	/* 3. fork + exec of this program */
	exec_child = fork();
	REQUIRE(exec_child >= 0, "fork");
	if (exec_child == 0) {
		char *const args[] = { argv[0], (char *)"child", NULL };
		execv("/proc/self/exe", args);
		perror("execv");
		_exit(127);
	}
	wait_child(exec_child, "exec'd child");

	/* 4. the parent keeps working after its children */
	for (int i = 0; i < 4; i++)
		LAUNCH(fe_parent, N / 256, 256, 0, 0, d, N);
	copy_sync(&h0, d, sizeof(float), cudaMemcpyDeviceToHost);
	REQUIRE(h0 == 13.0f, "parent result %g", (double)h0);
	CK(cudaFree(d));

	truth_set("pid", getpid());
	truth_set("fork_child.pid", fork_child);
	truth_set("exec_child.pid", exec_child);
	truth_print();
	return 0;
}
