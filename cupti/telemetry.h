/*
 * NVML device telemetry (power, clocks, temperature, memory used, clock
 * event reasons, utilization) and GPM metrics, for the GPU over time
 * (gpusample.c).  libnvidia-ml.so.1 is loaded with dlopen at run time;
 * no NVML header is needed (the few types used are declared in
 * telemetry.c, from NVML's stable ABI).  CUPTI-free, so unit tests drive
 * it with a stand-in library.
 *
 * Context: the GPU sampler's thread only (gpusample.c); never a program
 * thread.  NVML calls may block in the driver: nothing here runs under a
 * recorder lock.
 */
#ifndef GP_TELEMETRY_H
#define GP_TELEMETRY_H

#include <stddef.h>

/* Values of one telemetry sample, in this order (names: gp_telemetry_names). */
enum gp_telem {
	GP_TELEM_POWER_W = 0,        /* instantaneous board power, W */
	GP_TELEM_SM_CLOCK_MHZ,
	GP_TELEM_MEM_CLOCK_MHZ,
	GP_TELEM_TEMP_C,             /* GPU die temperature */
	GP_TELEM_MEM_USED_BYTES,     /* device memory in use, all processes */
	GP_TELEM_CLOCK_REASONS,      /* nvmlClocksEventReasons bit mask, as a number */
	GP_TELEM_GPU_UTIL_PCT,       /* busy-time fraction over the driver's last period */
	GP_TELEM_COUNT
};

/* GPM metrics (Hopper and later), in this order (names: gp_gpm_names). */
enum gp_gpm_metric {
	GP_GPM_SM_UTIL = 0,
	GP_GPM_SM_OCCUPANCY,
	GP_GPM_TENSOR_UTIL,
	GP_GPM_DRAM_BW_UTIL,
	GP_GPM_FP32_UTIL,
	GP_GPM_COUNT
};

/* GPM samples closer than this read zeros or lag (NVML's refresh rate). */
#define GP_GPM_MIN_MS 200u

extern const char *const gp_telemetry_names[GP_TELEM_COUNT];
extern const char *const gp_gpm_names[GP_GPM_COUNT];

/*
 * Loads lib (NULL: "libnvidia-ml.so.1") and initializes NVML.  0, or -1
 * with a reason in why (the library missing, a symbol missing, nvmlInit
 * failing).  Idempotent once it succeeded.
 */
int gp_telemetry_open(const char *lib, char *why, size_t whysz);

/* NVML's handle of the device at a PCI bus id ("0000:17:00.0"), or NULL. */
void *gp_telemetry_device(const char *pci_bus_id);

/*
 * One sample of dev: v[GP_TELEM_COUNT], NaN for what the device does not
 * report.  Returns how many values were read.
 */
int gp_telemetry_read(void *dev, double *v);

struct gp_gpm;

/* GPM state of dev, or NULL when GPM is not supported (or memory is short). */
struct gp_gpm *gp_gpm_open(void *dev);

/*
 * Takes a GPM sample; from the second on, fills v[GP_GPM_COUNT] over the
 * time since the previous one and returns 1; 0 for the first, -1 on an
 * error (NaN for a metric that failed alone).
 */
int gp_gpm_read(struct gp_gpm *g, double *v);

void gp_gpm_close(struct gp_gpm *g);

/* Shuts NVML down (the library stays loaded). */
void gp_telemetry_close(void);

#endif
