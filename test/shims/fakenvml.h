/*
 * The stand-in NVML's state (test/shims/fakenvml.c), shared with the unit
 * test that drives it (test/unit/test_gpusample.c).  Test code.
 */
#ifndef GPUPROF_TEST_FAKENVML_H
#define GPUPROF_TEST_FAKENVML_H

#include <stdatomic.h>

struct fake_nvml {
	/* Set by the test. */
	int temp_sleep_us;         /* how long nvmlDeviceGetTemperature takes */
	/* Counted by the library. */
	atomic_int init, shutdown, handle;
	atomic_int power, fields, clock, temp, mem, reasons, util;
	atomic_int gpm_support, gpm_alloc, gpm_free, gpm_get, gpm_metrics;
};

#endif
