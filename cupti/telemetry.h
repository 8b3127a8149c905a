/*
 * NVML device telemetry (power, clocks, temperature, memory used, clock
 * event reasons, and on request utilization) and GPM metrics, for the GPU
 * over time (gpusample.c).  libnvidia-ml.so.1 is loaded with dlopen at run
 * time; no NVML header is needed (the few types used are declared in
 * telemetry.c, from NVML's stable ABI).  CUPTI-free, so unit tests drive
 * it with a stand-in library.
 *
 * Cost: gp_telemetry_open (dlopen, nvmlInit: about 8 ms) and the device
 * handles are set up once, on the sampler's thread as it starts.  A sample
 * is one NVML getter per value (0.3 to 5 us each on an H100); a getter
 * that takes longer than GP_TELEM_SLOW_US twice is not called again on
 * that device (its value reads NaN from then on), so a sample's calls
 * stay bounded whatever the driver does.  GPM (nvmlGpmSampleGet, about
 * 35 us of driver time and a snapshot of the GPU's performance monitors
 * per sample) is opt-in.
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

/* The values sampled unless asked otherwise: all but utilization (bit i: value i). */
#define GP_TELEM_DEFAULT_WANT (((1u << GP_TELEM_COUNT) - 1) & ~(1u << GP_TELEM_GPU_UTIL_PCT))

/* A getter slower than this twice on a device is not called there again. */
#define GP_TELEM_SLOW_US 2000u

/* What a device's samples read: the values wanted, and the getters found slow once. */
struct gp_telem_want {
	unsigned want;             /* bit i: value i (enum gp_telem) */
	unsigned slow;             /* bit i: value i's getter was slow once */
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
 * One sample of dev: v[GP_TELEM_COUNT], NaN for what w->want leaves out
 * and what the device does not report.  Each getter is timed; one slower
 * than GP_TELEM_SLOW_US a second time leaves w->want (w may be NULL: the
 * default set, untimed).  Returns how many values were read.
 */
int gp_telemetry_read(void *dev, struct gp_telem_want *w, double *v);

/*
 * The names of the values w->want holds, in enum order, into names[]
 * (GP_TELEM_COUNT slots); returns how many.
 */
unsigned gp_telemetry_names_of(unsigned want, const char **names);

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
