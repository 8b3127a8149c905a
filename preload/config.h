/*
 * Recorder configuration, read once from the environment.
 * Context: the thread that initializes the recorder (inside cuInit); the
 * path expansion is also used by unit tests.
 */
#ifndef GP_CONFIG_H
#define GP_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define GP_PATH_MAX 4096

struct gp_config {
	char output[GP_PATH_MAX];  /* template, GPUPROF_OUTPUT */
	char session_file[GP_PATH_MAX]; /* GPUPROF_SESSION_FILE */
	char capture_range[512];   /* GPUPROF_CAPTURE_RANGE, parsed by cupti/capture.c */
	char capture_end[64];      /* GPUPROF_CAPTURE_RANGE_END */
	char cupti_path[GP_PATH_MAX]; /* GPUPROF_CUPTI_PATH */
	char libunwind_path[GP_PATH_MAX]; /* GPUPROF_LIBUNWIND */
	char cuda_home[GP_PATH_MAX];  /* CUDA_HOME, where else to look for CUPTI */
	char cuda_injection[GP_PATH_MAX]; /* CUDA_INJECTION64_PATH, once this library claimed it */
	char metrics[2048];        /* GPUPROF_METRICS: "roofline" or names; "" off */
	char metrics_kernels[512]; /* GPUPROF_METRICS_KERNELS: regex, "" any */
	char metrics_nvtx[512];    /* GPUPROF_METRICS_NVTX: regex, "" anywhere */
	char metrics_cache[GP_PATH_MAX]; /* GPUPROF_METRICS_CACHE: directory, "" none */
	uint32_t metrics_launches; /* GPUPROF_METRICS_LAUNCHES: N per kernel and
				    * configuration (first = 1), or UINT32_MAX (all) */
	uint32_t metrics_replay;   /* GPUPROF_METRICS_REPLAY: 0 kernel, 1 launches */
	char gpu_metrics[1024];    /* GPUPROF_GPU_METRICS: "default" or names; "" off */
	uint32_t gpu_metrics_us;   /* GPUPROF_GPU_METRICS_INTERVAL_US: sampling interval */
	uint32_t gpu_telemetry_ms; /* GPUPROF_GPU_TELEMETRY: NVML polling period, 0 off */
	uint32_t gpu_telemetry_extra; /* GPUPROF_GPU_TELEMETRY's GP_GPU_TELEMETRY_UTIL, _GPM */
	uint32_t trace;            /* GP_TRACE_* */
	uint32_t graph_mode;       /* 0 per node, 1 whole graph */
	uint32_t backtrace;        /* 0 none, 1 kernel launches, 2 all traced API calls */
	uint32_t pystack;          /* GP_PYSTACK_*: Python frames at kernel launches */
	uint32_t flush_ms;
	uint32_t buffer_kib;       /* CUPTI activity buffer size */
	uint32_t ring_chunks;      /* chunks of 1 MiB */
	uint32_t rank;             /* RANK, OMPI_COMM_WORLD_RANK, ...; UINT32_MAX if none */
	char control_dir[GP_PATH_MAX]; /* GPUPROF_CONTROL_DIR, "" for the default */
	char dump_on_nvtx[256];    /* GPUPROF_DUMP_ON nvtx:NAME, "" if none */
	uint64_t flight_bytes;     /* GPUPROF_FLIGHT_RECORDER, 0 when off */
	int dump_on_error;         /* GPUPROF_DUMP_ON cuda-error */
	int dump_signal;           /* GPUPROF_DUMP_SIGNAL, 0 none */
	int dormant;               /* GPUPROF_START=dormant (implied by GPUPROF_SAMPLE) */
	uint32_t sample_window_ms; /* GPUPROF_SAMPLE=WINDOW/PERIOD, 0 off */
	uint32_t sample_period_ms;
	char spool[GP_PATH_MAX];   /* GPUPROF_SPOOL: directory of the sampled windows */
	uint64_t spool_max;        /* GPUPROF_SPOOL_MAX: bytes kept there (oldest go first) */
	int detach;                /* GPUPROF_DETACH: CUPTI let go of between windows (default 1) */
	int control;               /* listen on the control socket */
	int force;
	int disabled;
	int verbose;
};

/* gp_config.pystack (GPUPROF_BACKTRACE=python|mixed). */
#define GP_PYSTACK_OFF 0
#define GP_PYSTACK_PYTHON 1          /* Python frames only */
#define GP_PYSTACK_MIXED 2           /* native frames, Python frames in place of the interpreter's */

/* Sampling of the GPU over time (GPUPROF_GPU_METRICS_INTERVAL_US, GPUPROF_GPU_TELEMETRY). */
#define GP_GPU_METRICS_US_DEFAULT 1000u
#define GP_GPU_METRICS_US_MIN 20u      /* below it PM sampling loses samples */
#define GP_GPU_METRICS_US_MAX 1000000u
#define GP_GPU_TELEMETRY_MS_DEFAULT 100u /* what gpuprof run --gpu-telemetry asks for */
#define GP_GPU_TELEMETRY_MS_MIN 10u
#define GP_GPU_TELEMETRY_MS_MAX 60000u
/* Opt-in queries of GPUPROF_GPU_TELEMETRY ("100,util,gpm"). */
#define GP_GPU_TELEMETRY_UTIL 1u     /* nvmlDeviceGetUtilizationRates */
#define GP_GPU_TELEMETRY_GPM 2u      /* GPM metrics (Hopper and later) */

/* Sampled windows (GPUPROF_SAMPLE, GPUPROF_SPOOL_MAX). */
#define GP_SAMPLE_WINDOW_MIN_MS 10u
#define GP_SAMPLE_PERIOD_MAX_MS (24u * 3600u * 1000u)
#define GP_SPOOL_MAX_DEFAULT (256ull << 20)
#define GP_SPOOL_MAX_MIN (1ull << 20)

/*
 * Parses WINDOW/PERIOD ("1s/60s", "500ms/1m"): durations in ms, s, m or h;
 * the window at least GP_SAMPLE_WINDOW_MIN_MS and shorter than the period,
 * the period at most a day.  0, or -EINVAL.
 */
int gp_config_parse_sample(const char *s, uint32_t *window_ms, uint32_t *period_ms);

/* Flight-recorder sizes the recorder accepts (GPUPROF_FLIGHT_RECORDER). */
#define GP_FLIGHT_MIN (1ull << 20)
#define GP_FLIGHT_MAX (1ull << 40)

/*
 * Fills *c from the environment: every variable the recorder reads, read
 * here and nowhere else.  A variable set to "" counts as unset.  Unknown
 * values are reported with gp_log and replaced by defaults.  Returns 0.
 */
int gp_config_load(struct gp_config *c);

/* The process's configuration, loaded once on first use (thread-safe). */
const struct gp_config *gp_config_get(void);

/*
 * Expands an output template (the grammar of include/gpuprof/template.h)
 * for this process: pid, host name, environment, n for %n.
 * Returns 0, or -ENAMETOOLONG / -EINVAL (invalid template).  *uses_n tells
 * whether %n appeared, so the caller can search for a free number.
 */
int gp_config_expand(const char *tmpl, int pid, unsigned n, char *out,
		     size_t outsz, int *uses_n);

/* 1 when the variable is set to anything but "" or "0". */
int gp_config_flag(const char *name);

/*
 * The working directory when the library was loaded (noted by its
 * constructor, before the program's main): relative output names keep
 * their meaning after the program changes directory.
 */
void gp_config_note_start_dir(void);
const char *gp_config_start_dir(void);

/*
 * Points the injection variable var at self when it is unset or empty and
 * returns NULL; otherwise returns its value (which may name self).
 */
const char *gp_config_claim(const char *var, const char *self);

/* Parses first|all|N (N >= 1) into *out; -EINVAL otherwise. */
int gp_config_parse_launches(const char *s, uint32_t *out);
/*
 * Parses GPUPROF_GPU_TELEMETRY: comma-separated, a period in ms (0: off;
 * below GP_GPU_TELEMETRY_MS_MIN: that minimum) and the opt-in queries
 * util and gpm (GP_GPU_TELEMETRY_*); without a period, the default.
 * -EINVAL for anything else (*ms and *extra then unchanged).
 */
int gp_config_parse_telemetry(const char *s, uint32_t *ms, uint32_t *extra);
/* Parses "256M", "1G", "1048576" (K, M, G, T: powers of 1024); -EINVAL. */
int gp_config_parse_size(const char *s, uint64_t *out);

/* Parses a signal: "USR2", "SIGUSR2" or a number; 0 when not one. */
int gp_config_parse_signal(const char *s);

/* Parses "kernel,memcpy,..." into GP_TRACE_* bits; -EINVAL on an unknown word. */
int gp_config_parse_trace(const char *s, uint32_t *out);

#endif
