/*
 * A burst of launches, then the program ends the way its arguments say:
 *
 *   sig_after_burst N exit              returns from main
 *   sig_after_burst N SIGNAME           dies of the signal: SEGV (a null
 *                                       write), ABRT (abort), BUS, FPE, ILL,
 *                                       TERM, HUP, INT, QUIT (sent to itself)
 *   sig_after_burst N TERM own          its own SIGTERM handler (installed
 *                                       before CUDA starts) prints HANDLER and
 *                                       exits 7
 *
 * All N launches have finished (cudaDeviceSynchronize) and the truth is
 * printed and flushed before the end, so the trace must hold every launch
 * and its end record.
 *
 * Truth: kernel.count.burst_inc, kernel.total.
 */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

extern "C" __global__ void burst_inc(int *x)
{
	if (threadIdx.x == 0)
		x[blockIdx.x] += 1;
}

static void own_handler(int sig)
{
	(void)sig;
	static const char msg[] = "HANDLER\n";
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(8);
	exit(7);
}

static const struct {
	const char *name;
	int sig;
} sigs[] = {
	{ "SEGV", SIGSEGV }, { "ABRT", SIGABRT }, { "BUS", SIGBUS }, { "FPE", SIGFPE },
	{ "ILL", SIGILL },   { "TERM", SIGTERM }, { "HUP", SIGHUP }, { "INT", SIGINT },
	{ "QUIT", SIGQUIT },
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	const char *how = argc > 2 ? argv[2] : "exit";
	int sig = 0, *d;

	REQUIRE(n > 0, "bad count %s", argv[1]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(how, sigs[i].name))
			sig = sigs[i].sig;
	REQUIRE(sig || !strcmp(how, "exit"), "unknown ending %s", how);
	if (argc > 3 && !strcmp(argv[3], "own"))
		signal(sig, own_handler);

	CK(cudaMalloc(&d, 64 * sizeof(int)));
	for (int i = 0; i < n; i++)
		burst_inc<<<1, 32>>>(d);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	printf("TRUTH kernel.count.burst_inc %d\n", n);
	printf("TRUTH kernel.total %d\n", n);
	fflush(stdout);
	if (sig == SIGSEGV) {
		volatile int *volatile nowhere = NULL;
		*nowhere = 1;
	} else if (sig == SIGABRT) {
		abort();
	} else if (sig) {
		kill(getpid(), sig);
		sleep(10); /* a handled signal returns here; it never should */
		return 9;
	}
	return 0;
}
