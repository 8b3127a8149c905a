/*
 * The stand-in PM sampling library's state (test/shims/fakepm.c), shared
 * with the unit test that drives it (test/unit/test_gpusample.c).  Test code.
 */
#ifndef GPUPROF_TEST_FAKEPM_H
#define GPUPROF_TEST_FAKEPM_H

#include <stdatomic.h>

struct fake_pm {
	/* Set by the test. */
	int ndev;                  /* devices cuDeviceGetCount answers (after cuInit) */
	int setconfig_ms;          /* how long each cuptiPmSamplingSetConfig takes */
	int strict_teardown;       /* the teardown fails the process under an enabled session */
	int runtime_teardown;      /* the first Start registers a second teardown, as the
				    * CUDA runtime may with the first context */
	atomic_int block_decode;   /* DecodeData waits while set */
	/* Counted by the library. */
	atomic_int inited, torn_down, in_decode;
	atomic_int calls;          /* every PM sampling and profiler call */
	atomic_int enable, disable, start, stop, decode, setconfig, evaluate;
};

#endif
