/*
 * The GPU over time (see gpusample.h): per device, CUPTI PM sampling of
 * hardware counters at --gpu-metrics-interval, NVML telemetry every
 * --gpu-telemetry milliseconds and GPM metrics (at least GP_GPM_MIN_MS
 * apart), as GP_REC_GPU_SERIES and GP_REC_GPU_SAMPLE records.
 *
 * Threads and contracts:
 *  - The sampler thread (started by enable, ended at exit by the handler
 *    it registers, else by flush(final)) makes every CUPTI PM sampling and
 *    NVML call.  This is the one source with a
 *    thread of its own, and the exception is deliberate: configuring PM
 *    sampling takes 0.3 to 0.8 s per device, each DecodeData 1 to 90 ms of
 *    CPU, and an NVML query can stall in the driver; on the flusher, which
 *    hands chunks to the writer, that would let the ring fill.  It never
 *    takes the producer lock, writes no file and calls no stdio except
 *    through gp_log: finished records go into a private queue (q_lock,
 *    taken only by this thread and by drain), bounded by QUEUE_MAX, whose
 *    overflow counts as GP_LOST_RING_FULL.
 *  - drain (flusher or exit path, producer lock held) moves the queue into
 *    the ring, after the SERIES records the samples need; preamble emits
 *    every series again for a new file.
 *  - set_tracing only flips an atomic the thread reads (PM sampling is
 *    stopped and started there, NVML and GPM are polled only while on):
 *    the sampler pauses between windows (gpuprof start/stop, --sample)
 *    and resumes at the next.  window (flusher) notes each window's start
 *    and end on the trace clock, and drain drops a sample that does not
 *    begin inside one (the first of a resumed NVML poll, the last PM
 *    samples, decoded after the window ended).  Only the end of the trace
 *    (flush with GP_FLUSH_END, or the exit handler) ends the thread; the
 *    end of a window's own file (GP_FLUSH_FILE) does not.  forked makes
 *    the child's copy passive (the thread does not exist in the child).
 *  - Program threads never run anything here.
 *
 * The end.  CUDA tears itself down at exit in a handler it registers
 * inside cuInit, and CUPTI's profiler and the driver free their state
 * then: a PM call after that (Stop, DecodeData, Disable) runs into freed
 * memory.  So once CUDA answers (cuInit has returned), and before its
 * first CUPTI or NVML call, the thread registers an exit handler of its
 * own, which runs before CUDA's (atexit is last in, first out) and before
 * the recorder's end of the trace; it registers it again at the first PM
 * Start, after the handlers the CUDA runtime may add with the program's
 * first context (the later one runs first, the other finds the work
 * done).  The handler asks the thread to stop and waits
 * at most EXIT_WAIT_MS for the sessions' Stop, last decode and Disable.
 * Every wait is bounded; a stop request wakes the thread, and it is
 * checked between devices and decode rounds.  If the thread has not
 * finished in time, the exit gives it up (abandoned): each CUPTI or NVML
 * call of the thread is bracketed by in_call and made only while not
 * abandoned (a store, then a load, seq_cst on both sides, so either the
 * thread sees abandoned or the exit sees in_call), the exit waits a
 * little more for a call in progress, and nothing the thread may touch is
 * ever freed (its images, queue and NVML state are left to the process's
 * end).  The thread's own end gives the PM counters back (Disable) but
 * tears nothing of NVML down (neither nvmlShutdown, since the process is
 * ending and the program's own NVML user shares its reference count, nor
 * the GPM samples' frees).
 *
 * Timestamps: PM samples carry CUPTI's timestamps, which the CUDA source's
 * timestamp callback puts on the trace clock (the same axis as kernel
 * records, within half a sampling interval); a sample covers
 * [startTimestamp, endTimestamp).  NVML and GPM samples cover the time from
 * the previous poll to this one, read with cuptiGetTimestamp.  The first
 * PM sample of a session (it starts at configuration time) is dropped.
 *
 * PM sampling and the range profiler (--metrics) cannot share a device's
 * counters: the configuration turns --gpu-metrics off when --metrics is
 * given.  Counters restricted to admin users: one line, GPM takes over
 * where NVML offers it, tracing goes on.
 */
#include "gpusample.h"

#include "cupti_api.h"
#include "telemetry.h"

#include "../preload/log.h"
#include "../preload/recorder.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEVICES 16
#define MAX_SERIES (3 * MAX_DEVICES)
#define MAX_PM_METRICS 32
#define QUEUE_MAX (16u << 20)        /* bytes of records waiting for drain */
#define PM_HW_BUFFER (64u << 20)     /* hardware buffer per device */
#define PM_PER_DECODE 250u           /* samples between two decodes, at most */
#define PM_DECODE_MS 250u            /* decode period at intervals of 1 ms and more */
#define ENABLE_TRIES 50              /* 100 ms apart, before a device gives up */
#define EXIT_WAIT_MS 2500            /* the exit handler's wait for the thread */
#define FLUSH_WAIT_MS 3000           /* flush(final)'s, when the exit handler did not run */
#define CALL_WAIT_MS 250             /* for a call in progress once given up */

const char gp_gpusample_default_set[] =
	"sm__cycles_active.avg.pct_of_peak_sustained_elapsed,"
	"sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed,"
	"dram__bytes_read.sum.per_second,"
	"dram__bytes_write.sum.per_second,"
	"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,"
	"lts__t_bytes.sum.per_second,"
	"pcie__read_bytes.sum.per_second,"
	"pcie__write_bytes.sum.per_second,"
	"nvlrx__bytes.sum.per_second,"
	"nvltx__bytes.sum.per_second";

/* PM sampling and profiler host entry points, looked up in tracer.c's libcupti. */
#define PM_FUNCS(X)                                     \
	X(cuptiProfilerInitialize)                      \
	X(cuptiDeviceGetChipName)                       \
	X(cuptiProfilerHostInitialize)                  \
	X(cuptiProfilerHostDeinitialize)                \
	X(cuptiProfilerHostConfigAddMetrics)            \
	X(cuptiProfilerHostGetConfigImageSize)          \
	X(cuptiProfilerHostGetConfigImage)              \
	X(cuptiProfilerHostGetNumOfPasses)              \
	X(cuptiProfilerHostEvaluateToGpuValues)         \
	X(cuptiPmSamplingEnable)                        \
	X(cuptiPmSamplingDisable)                       \
	X(cuptiPmSamplingSetConfig)                     \
	X(cuptiPmSamplingStart)                         \
	X(cuptiPmSamplingStop)                          \
	X(cuptiPmSamplingDecodeData)                    \
	X(cuptiPmSamplingGetCounterAvailability)        \
	X(cuptiPmSamplingGetCounterDataSize)            \
	X(cuptiPmSamplingCounterDataImageInitialize)    \
	X(cuptiPmSamplingGetCounterDataInfo)            \
	X(cuptiPmSamplingCounterDataGetSampleInfo)

static struct {
#define PM_PTR(name) __typeof__(&name) name;
	PM_FUNCS(PM_PTR)
#undef PM_PTR
} pm;

/* One series as the trace names it; its names are interned at drain. */
struct series {
	uint32_t id, device, source, status;
	uint64_t interval_ns;
	uint32_t n;
	const char *names[MAX_PM_METRICS];
	int emitted;               /* in the current file (producer lock) */
	int status_dirty;          /* status changed since emitted (q_lock) */
};

/* A device's PM sampling session (sampler thread only). */
struct pmdev {
	int state;                 /* PM_* below */
	int tries;
	struct series *s;
	CUpti_PmSampling_Object *obj;
	CUpti_Profiler_Host_Object *host;
	uint8_t *avail, *config, *image;
	size_t config_size, image_size;
	char chip[64];
	const char *names[MAX_PM_METRICS];
	size_t n;
	int running;               /* between Start and Stop */
	int first;                 /* the session's first sample is still to come */
};

enum { PM_WANT, PM_ON, PM_OFF };

struct teldev {
	void *nvml;
	struct series *s, *g;
	struct gp_gpm *gpm;
	struct gp_telem_want want; /* the getters this device's samples call */
	unsigned names;            /* the values of the series s (bit i: value i) */
	uint64_t last, glast;      /* trace clock of the previous poll */
};

static struct series series[MAX_SERIES];
static uint32_t nseries;             /* written by the thread before publishing via q_lock */
static struct pmdev pmd[MAX_DEVICES];
static struct teldev tel[MAX_DEVICES];
static int ndev;
static char pm_names_buf[1024];
static const char *pm_want[MAX_PM_METRICS];
static size_t npm_want;

static pthread_t thread;
static atomic_int thread_started, joined;
static pid_t owner;                  /* the process that started the thread */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static atomic_int stop_req, thread_done, tracing, passive, gpm_fallback;
/* Bumped under wake_lock by set_tracing: a change the thread has not seen yet. */
static atomic_uint tracing_gen;
/* The exit gave the thread up / the thread is inside CUPTI or NVML (see "The end"). */
static atomic_int abandoned, in_call;

/* Records built by the thread, waiting for drain. */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *q;
static size_t q_len, q_cap;
static uint32_t q_series;            /* series published to drain */
/*
 * The windows on the trace clock (q_lock): the last WINDOWS of them, the
 * newest open (off UINT64_MAX) while it lasts; none without windows (all
 * samples kept).  A sample is kept when it begins inside one (the records
 * of one file may span several windows).
 */
#define WINDOWS 8
static struct {
	uint64_t on, off;
} win[WINDOWS];
static unsigned nwin; /* windows so far; win[(nwin - 1) % WINDOWS] the newest */

/*
 * Before each CUPTI, NVML or CUDA call of the thread: 0 once the exit has
 * given the thread up (no call then).  seq_cst: either this load sees
 * abandoned, or give_up's load of in_call sees this store.
 */
static int call_begin(void)
{
	atomic_store(&in_call, 1);
	if (!atomic_load(&abandoned))
		return 1;
	atomic_store(&in_call, 0);
	return 0;
}

static void call_end(void)
{
	atomic_store(&in_call, 0);
}

/* A PM sampling or profiler host call (one params struct each), gated. */
#define PM(name, params)                                                      \
	__extension__({                                                       \
		CUptiResult r_ = CUPTI_ERROR_NOT_INITIALIZED;                 \
		if (call_begin()) {                                           \
			r_ = pm.name(params);                                 \
			call_end();                                           \
		}                                                             \
		r_;                                                           \
	})

static uint64_t now_ns(void)
{
	uint64_t t = 0;
	CUptiResult r = CUPTI_ERROR_NOT_INITIALIZED;

	if (gp_cu.cuptiGetTimestamp && call_begin()) {
		r = gp_cu.cuptiGetTimestamp(&t);
		call_end();
	}
	if (r != CUPTI_SUCCESS)
		t = gp_now_realtime();
	return t;
}

static int stopping(void)
{
	return atomic_load(&stop_req) || atomic_load(&abandoned);
}

static const char *err(CUptiResult r)
{
	return gp_cupti_error(r);
}

/* ---- the queue (sampler thread side) ---- */

static struct series *series_new(uint32_t device, uint32_t source, uint64_t interval_ns)
{
	struct series *s;

	if (nseries >= MAX_SERIES)
		return NULL;
	s = &series[nseries];
	memset(s, 0, sizeof(*s));
	s->id = nseries + 1;
	s->device = device;
	s->source = source;
	s->interval_ns = interval_ns;
	nseries++;
	return s;
}

/* Publishes the series made so far (their SERIES records go out at the next drain). */
static void series_publish(void)
{
	pthread_mutex_lock(&q_lock);
	q_series = nseries;
	pthread_mutex_unlock(&q_lock);
}

static void series_status(struct series *s, uint32_t status)
{
	pthread_mutex_lock(&q_lock);
	if (s->status != status) {
		s->status = status;
		s->status_dirty = 1;
	}
	pthread_mutex_unlock(&q_lock);
}

static void queue_sample(const struct series *s, uint64_t start, uint64_t end, const double *v)
{
	uint32_t size = (uint32_t)(sizeof(struct gp_rec_gpu_sample) + s->n * sizeof(double));
	struct gp_rec_gpu_sample *r;

	pthread_mutex_lock(&q_lock);
	if (q_len + size > QUEUE_MAX) {
		pthread_mutex_unlock(&q_lock);
		gp_lost_add(GP_LOST_RING_FULL, 1);
		return;
	}
	if (q_len + size > q_cap) {
		size_t cap = q_cap ? q_cap * 2 : 65536;
		uint8_t *p;

		while (cap < q_len + size)
			cap *= 2;
		p = realloc(q, cap);
		if (!p) {
			pthread_mutex_unlock(&q_lock);
			gp_lost_add(GP_LOST_RING_FULL, 1);
			return;
		}
		q = p;
		q_cap = cap;
	}
	r = (void *)(q + q_len);
	memset(r, 0, sizeof(*r));
	r->h.type = GP_REC_GPU_SAMPLE;
	r->h.size = size;
	r->h.aux = (uint16_t)s->n;
	r->start = start;
	r->end = end;
	r->series = s->id;
	memcpy(r + 1, v, s->n * sizeof(double));
	q_len += size;
	pthread_mutex_unlock(&q_lock);
}

/* ---- devices ---- */

typedef CUresult (*dev_count_fn)(int *);
typedef CUresult (*dev_get_fn)(CUdevice *, int);
typedef CUresult (*pci_fn)(char *, int, CUdevice);

/* The CUDA devices and their PCI bus ids; 0 once CUDA answers, -1 before. */
static int find_devices(char pci[][32])
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	dev_count_fn count;
	dev_get_fn get;
	pci_fn bus;
	int n = 0, i;

	if (!cuda)
		return -1;
	count = (dev_count_fn)dlsym(cuda, "cuDeviceGetCount");
	get = (dev_get_fn)dlsym(cuda, "cuDeviceGet");
	bus = (pci_fn)dlsym(cuda, "cuDeviceGetPCIBusId");
	if (!count || !get || !bus || count(&n) != CUDA_SUCCESS) {
		dlclose(cuda);
		return -1;
	}
	if (n > MAX_DEVICES)
		n = MAX_DEVICES;
	for (i = 0; i < n; i++) {
		CUdevice d;

		pci[i][0] = 0;
		if (get(&d, i) == CUDA_SUCCESS)
			bus(pci[i], 32, d);
	}
	dlclose(cuda);
	ndev = n;
	return 0;
}

/* ---- PM sampling ---- */

static int pm_bind(char *why, size_t whysz)
{
#define PM_SYM(name)                                                          \
	pm.name = (__typeof__(pm.name))dlsym(gp_cu.handle, #name);            \
	if (!pm.name) {                                                       \
		snprintf(why, whysz, "%.160s lacks %s (CUPTI before 12.6?)", gp_cu.path, #name); \
		return -1;                                                    \
	}
	PM_FUNCS(PM_SYM)
#undef PM_SYM
	return 0;
}

static void pm_off(struct pmdev *d, uint32_t status)
{
	d->state = PM_OFF;
	if (d->s)
		series_status(d->s, status);
}

static void no_permission(void)
{
	static int said;

	if (said++)
		return;
	gp_log("GPU metrics over time are off: GPU performance counters are restricted to admin "
	       "users (ERR_NVGPUCTRPERM); run as root or load the nvidia module with "
	       "NVreg_RestrictProfilingToAdminUsers=0; GPM metrics stand in where the GPU "
	       "offers them; tracing goes on");
	atomic_store(&gpm_fallback, 1);
}

static void exit_handler_again(int kind);

/* A config image of names[0..n) for the chip: 0 and one pass, else a CUPTI error. */
static CUptiResult pm_config(struct pmdev *d, const char **names, size_t n, int keep)
{
	CUpti_Profiler_Host_Initialize_Params hi = {
		.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
		.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING,
		.pChipName = d->chip,
		.pCounterAvailabilityImage = d->avail,
	};
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
		.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE,
		.ppMetricNames = names,
		.numMetrics = n,
	};
	CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
		.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE,
	};
	CUpti_Profiler_Host_GetConfigImage_Params ci = {
		.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE,
	};
	CUpti_Profiler_Host_GetNumOfPasses_Params np = {
		.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE,
	};
	CUpti_Profiler_Host_Deinitialize_Params di = {
		.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE,
	};
	uint8_t *img = NULL;
	CUptiResult r = PM(cuptiProfilerHostInitialize, &hi);

	exit_handler_again(1);
	if (r != CUPTI_SUCCESS)
		return r;
	am.pHostObject = cs.pHostObject = ci.pHostObject = di.pHostObject =
		hi.pHostObject;
	r = PM(cuptiProfilerHostConfigAddMetrics, &am);
	if (r == CUPTI_SUCCESS)
		r = PM(cuptiProfilerHostGetConfigImageSize, &cs);
	if (r == CUPTI_SUCCESS && !(img = malloc(cs.configImageSize)))
		r = CUPTI_ERROR_OUT_OF_MEMORY;
	if (r == CUPTI_SUCCESS) {
		ci.configImageSize = cs.configImageSize;
		ci.pConfigImage = img;
		r = PM(cuptiProfilerHostGetConfigImage, &ci);
	}
	if (r == CUPTI_SUCCESS) {
		np.configImageSize = cs.configImageSize;
		np.pConfigImage = img;
		r = PM(cuptiProfilerHostGetNumOfPasses, &np);
		if (r == CUPTI_SUCCESS && np.numOfPasses != 1)
			r = CUPTI_ERROR_NOT_SUPPORTED;
	}
	if (r == CUPTI_SUCCESS && keep) {
		free(d->config);
		d->config = img;
		d->config_size = cs.configImageSize;
		d->host = hi.pHostObject;
		return r;
	}
	free(img);
	PM(cuptiProfilerHostDeinitialize, &di);
	return r;
}

/*
 * The device's set: the metrics asked for that it offers, kept in order
 * while they fit one pass (each is tried alone after the whole set fails).
 */
static CUptiResult pm_choose(struct pmdev *d)
{
	CUptiResult r;
	size_t i;

	d->n = 0;
	if (pm_config(d, pm_want, npm_want, 1) == CUPTI_SUCCESS) {
		memcpy(d->names, pm_want, npm_want * sizeof(*pm_want));
		d->n = npm_want;
		return CUPTI_SUCCESS;
	}
	for (i = 0; i < npm_want && !stopping(); i++) {
		d->names[d->n] = pm_want[i];
		r = pm_config(d, d->names, d->n + 1, 0);
		if (r == CUPTI_SUCCESS)
			d->n++;
		else
			gp_debug("gpu-metrics: device %d leaves out %s (%s)", (int)(d - pmd),
				 pm_want[i], err(r));
	}
	if (!d->n)
		return CUPTI_ERROR_INVALID_METRIC_NAME;
	return pm_config(d, d->names, d->n, 1);
}

static uint32_t pm_max_samples(void)
{
	return 2 * PM_PER_DECODE + 64;
}

static uint64_t pm_decode_ns(void)
{
	uint64_t iv = (uint64_t)gp_rec.cfg.gpu_metrics_us * 1000;
	uint64_t p = iv * PM_PER_DECODE;

	return p < PM_DECODE_MS * 1000000ull ? p : PM_DECODE_MS * 1000000ull;
}

/* Sets a device up and starts sampling; -1 to try again later. */
static int pm_setup(int dev)
{
	struct pmdev *d = &pmd[dev];
	CUpti_Device_GetChipName_Params cn = {
		.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
		.deviceIndex = (size_t)dev,
	};
	CUpti_PmSampling_GetCounterAvailability_Params ga = {
		.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE,
		.deviceIndex = (size_t)dev,
	};
	CUpti_PmSampling_Enable_Params en = {
		.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE,
		.deviceIndex = (size_t)dev,
	};
	CUpti_PmSampling_GetCounterDataSize_Params gs = {
		.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE,
	};
	CUpti_PmSampling_CounterDataImage_Initialize_Params ii = {
		.structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE,
	};
	CUpti_PmSampling_SetConfig_Params sc = {
		.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE,
	};
	CUptiResult r;

	if (!d->avail) {
		r = PM(cuptiDeviceGetChipName, &cn);
		exit_handler_again(3);
		if (r != CUPTI_SUCCESS || !cn.pChipName)
			goto retry;
		snprintf(d->chip, sizeof(d->chip), "%s", cn.pChipName);
		r = PM(cuptiPmSamplingGetCounterAvailability, &ga);
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
			goto denied;
		if (r != CUPTI_SUCCESS)
			goto retry;
		if (!(d->avail = malloc(ga.counterAvailabilityImageSize)))
			goto fail;
		ga.pCounterAvailabilityImage = d->avail;
		r = PM(cuptiPmSamplingGetCounterAvailability, &ga);
		exit_handler_again(4);
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
			goto denied;
		if (r != CUPTI_SUCCESS) {
			free(d->avail);
			d->avail = NULL;
			goto retry;
		}
		r = pm_choose(d);
		if (stopping())
			return 0;
		if (r != CUPTI_SUCCESS) {
			gp_log("GPU metrics over time are off on device %d (%s): none of the metrics "
			       "fits one pass there (%s); tracing goes on", dev, d->chip, err(r));
			pm_off(d, GP_GPU_UNSUPPORTED);
			return 0;
		}
		/* drain reads the names under q_lock: a series is written once it has them. */
		pthread_mutex_lock(&q_lock);
		memcpy(d->s->names, d->names, d->n * sizeof(*d->names));
		d->s->n = (uint32_t)d->n;
		pthread_mutex_unlock(&q_lock);
		series_publish();
	}
	r = PM(cuptiPmSamplingEnable, &en);
	exit_handler_again(2);
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		goto denied;
	if (r == CUPTI_ERROR_NOT_SUPPORTED) {
		gp_log("GPU metrics over time are off on device %d (%s): PM sampling is not "
		       "supported there; tracing goes on", dev, d->chip);
		pm_off(d, GP_GPU_UNSUPPORTED);
		return 0;
	}
	if (r != CUPTI_SUCCESS)
		goto retry;
	d->obj = en.pPmSamplingObject;
	gs.pPmSamplingObject = ii.pPmSamplingObject = sc.pPmSamplingObject = d->obj;
	gs.pMetricNames = d->names;
	gs.numMetrics = d->n;
	gs.maxSamples = pm_max_samples();
	r = PM(cuptiPmSamplingGetCounterDataSize, &gs);
	if (r == CUPTI_SUCCESS && !d->image) {
		if (!(d->image = malloc(gs.counterDataSize)))
			r = CUPTI_ERROR_OUT_OF_MEMORY;
		d->image_size = gs.counterDataSize;
	}
	if (r == CUPTI_SUCCESS) {
		ii.counterDataSize = d->image_size;
		ii.pCounterData = d->image;
		r = PM(cuptiPmSamplingCounterDataImageInitialize, &ii);
	}
	if (r == CUPTI_SUCCESS) {
		sc.pConfig = d->config;
		sc.configSize = d->config_size;
		sc.hardwareBufferSize = PM_HW_BUFFER;
		sc.samplingInterval = (uint64_t)gp_rec.cfg.gpu_metrics_us * 1000;
		sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
		sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
		r = PM(cuptiPmSamplingSetConfig, &sc);
	}
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		goto denied;
	if (r != CUPTI_SUCCESS && atomic_load(&abandoned))
		return 0;
	if (r != CUPTI_SUCCESS) {
		CUpti_PmSampling_Disable_Params dp = {
			.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE,
			.pPmSamplingObject = d->obj,
		};

		PM(cuptiPmSamplingDisable, &dp);
		d->obj = NULL;
		gp_log("GPU metrics over time are off on device %d (%s): cannot configure PM "
		       "sampling (%s); tracing goes on", dev, d->chip, err(r));
		pm_off(d, r == CUPTI_ERROR_HARDWARE_BUSY ? GP_GPU_BUSY : GP_GPU_ERROR);
		return 0;
	}
	d->state = PM_ON;
	return 0;
denied:
	no_permission();
	pm_off(d, GP_GPU_NO_PERMISSION);
	return 0;
retry:
	if (stopping())
		return 0;
	if (++d->tries < ENABLE_TRIES)
		return -1;
	gp_log("GPU metrics over time are off on device %d: PM sampling did not start (%s); "
	       "tracing goes on", dev, err(r));
	pm_off(d, GP_GPU_ERROR);
	return 0;
fail:
	pm_off(d, GP_GPU_ERROR);
	return 0;
}

static void stop_at_exit(void);

/*
 * libcupti builds the static state of its profiler and PM sampling on their
 * first calls, and registers its destructors then: after this thread's exit
 * handler, so they would run first and a setup call still in progress read
 * freed maps (std::out_of_range at exit, seen on an H100 when the program
 * ended during the setup).  Registered again after each first call of a
 * kind, the handler runs before those destructors; it runs once (a later
 * run finds the thread stopped).  Sampler thread only.
 */
static void exit_handler_again(int kind)
{
	static unsigned done;

	if (kind < 0 || kind >= 32 || (done & (1u << kind)))
		return;
	done |= 1u << kind;
	if (atexit(stop_at_exit) != 0)
		gp_debug("gpu-over-time: no exit handler after setup step %d", kind);
}

static void pm_run(struct pmdev *d, int on)
{
	CUpti_PmSampling_Start_Params st = {
		.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE,
		.pPmSamplingObject = d->obj,
	};
	CUpti_PmSampling_Stop_Params sp = {
		.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE,
		.pPmSamplingObject = d->obj,
	};

	if (d->state != PM_ON || d->running == on)
		return;
	if (on) {
		if (PM(cuptiPmSamplingStart, &st) == CUPTI_SUCCESS) {
			static int again;

			d->running = 1;
			d->first = 1;
			/*
			 * Registered again, after whatever exit handlers the CUDA
			 * runtime set up with the program's first context (it runs
			 * first; the earlier registration then finds it done).
			 */
			if (!again++ && atexit(stop_at_exit) != 0)
				gp_debug("gpu-over-time: no second exit handler");
		}
	} else {
		PM(cuptiPmSamplingStop, &sp);
		d->running = 0;
	}
}

static void pm_teardown(struct pmdev *d)
{
	CUpti_PmSampling_Disable_Params dp = {
		.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE,
		.pPmSamplingObject = d->obj,
	};

	if (d->obj)
		PM(cuptiPmSamplingDisable, &dp);
	d->obj = NULL;
	d->running = 0;
}

/*
 * Everything the hardware buffer holds: decode into the image until the
 * end of the records, evaluate each completed sample, re-initialize.
 * The image holds two decode periods, so it does not fill in one call.
 */
static void pm_decode(int dev)
{
	struct pmdev *d = &pmd[dev];
	double v[MAX_PM_METRICS];
	int rounds;

	if (d->state != PM_ON || !d->obj)
		return;
	for (rounds = 0; rounds < 8; rounds++) {
		CUpti_PmSampling_DecodeData_Params dd = {
			.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE,
			.pPmSamplingObject = d->obj,
			.pCounterDataImage = d->image,
			.counterDataImageSize = d->image_size,
		};
		CUpti_PmSampling_GetCounterDataInfo_Params gi = {
			.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE,
			.pCounterDataImage = d->image,
			.counterDataImageSize = d->image_size,
		};
		CUpti_PmSampling_CounterDataImage_Initialize_Params ii = {
			.structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE,
			.pPmSamplingObject = d->obj,
			.counterDataSize = d->image_size,
			.pCounterData = d->image,
		};
		CUptiResult r = PM(cuptiPmSamplingDecodeData, &dd);
		size_t i;

		if (atomic_load(&abandoned))
			return;
		if (r != CUPTI_SUCCESS || dd.overflow) {
			/* KEEP_OLDEST lost the buffer's content: the session starts over. */
			gp_log("GPU metrics over time: device %d's sampling buffer overflowed (%s); "
			       "samples were lost, sampling starts over", dev,
			       dd.overflow ? "the decoder fell behind" : err(r));
			series_status(d->s, GP_GPU_OVERFLOW);
			pm_run(d, 0);
			pm_teardown(d);
			d->state = PM_WANT;
			d->tries = 0;
			return;
		}
		if (PM(cuptiPmSamplingGetCounterDataInfo, &gi) != CUPTI_SUCCESS)
			break;
		for (i = 0; i < gi.numCompletedSamples && !atomic_load(&abandoned); i++) {
			CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
				.structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE,
				.pPmSamplingObject = d->obj,
				.pCounterDataImage = d->image,
				.counterDataImageSize = d->image_size,
				.sampleIndex = i,
			};
			CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
				.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
				.pHostObject = d->host,
				.pCounterDataImage = d->image,
				.counterDataImageSize = d->image_size,
				.rangeIndex = i,
				.ppMetricNames = d->names,
				.numMetrics = d->n,
				.pMetricValues = v,
			};

			if (PM(cuptiPmSamplingCounterDataGetSampleInfo, &si) != CUPTI_SUCCESS ||
			    !si.startTimestamp || si.endTimestamp <= si.startTimestamp)
				continue;
			if (d->first) {
				d->first = 0;
				continue;
			}
			if (PM(cuptiProfilerHostEvaluateToGpuValues, &ev) != CUPTI_SUCCESS)
				continue;
			queue_sample(d->s, si.startTimestamp, si.endTimestamp, v);
		}
		PM(cuptiPmSamplingCounterDataImageInitialize, &ii);
		if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
			break;
	}
}

/* The names of GPUPROF_GPU_METRICS ("default": the default set). */
static void pm_parse(void)
{
	const char *set = gp_rec.cfg.gpu_metrics;
	char *p, *save = NULL;

	if (!strcmp(set, "default") || !strcmp(set, "1"))
		set = gp_gpusample_default_set;
	snprintf(pm_names_buf, sizeof(pm_names_buf), "%s", set);
	npm_want = 0;
	for (p = strtok_r(pm_names_buf, ",", &save); p && npm_want < MAX_PM_METRICS;
	     p = strtok_r(NULL, ",", &save))
		if (*p)
			pm_want[npm_want++] = p;
}

/* ---- the thread ---- */

/* Sleeps until wake_mono, a stop request or a change of tracing after gen was read. */
static void sleep_until(uint64_t wake_mono, unsigned gen)
{
	struct timespec ts = { (time_t)(wake_mono / 1000000000ull), (long)(wake_mono % 1000000000ull) };

	pthread_mutex_lock(&wake_lock);
	if (!stopping() && atomic_load(&tracing_gen) == gen)
		pthread_cond_timedwait(&wake_cond, &wake_lock, &ts);
	pthread_mutex_unlock(&wake_lock);
}

/* NVML loaded and initialized (once; the first try says why not). */
static int nvml_open(void)
{
	static int state;          /* 0 not tried, 1 open, -1 failed */
	char why[256];

	if (state || !call_begin())
		return state > 0;
	state = gp_telemetry_open(NULL, why, sizeof(why)) < 0 ? -1 : 1;
	call_end();
	if (state < 0)
		gp_log("GPU telemetry is off: %s; tracing goes on", why);
	return state > 0;
}

/* NVML's handles of the devices, and the telemetry series (--gpu-telemetry). */
static void telemetry_setup(char pci[][32], int want_tel)
{
	unsigned want = GP_TELEM_DEFAULT_WANT;
	int i, any = 0;

	if (gp_rec.cfg.gpu_telemetry_extra & GP_GPU_TELEMETRY_UTIL)
		want |= 1u << GP_TELEM_GPU_UTIL_PCT;
	for (i = 0; i < ndev && !stopping(); i++) {
		struct teldev *t = &tel[i];

		if (!t->nvml && pci[i][0] && call_begin()) {
			t->nvml = gp_telemetry_device(pci[i]);
			call_end();
		}
		if (!t->nvml)
			continue;
		any = 1;
		if (want_tel && !t->s) {
			t->s = series_new((uint32_t)i, GP_GPU_SRC_NVML,
					  gp_rec.cfg.gpu_telemetry_ms * 1000000ull);
			if (t->s) {
				t->want.want = t->names = want;
				t->s->n = gp_telemetry_names_of(want, t->s->names);
			}
		}
	}
	if (!any && !stopping())
		gp_log("GPU telemetry is off: NVML knows none of the CUDA devices; tracing goes on");
	series_publish();
}

static void gpm_setup(void)
{
	uint32_t ms = gp_rec.cfg.gpu_telemetry_ms > GP_GPM_MIN_MS ? gp_rec.cfg.gpu_telemetry_ms
								  : GP_GPM_MIN_MS;

	for (int i = 0; i < ndev && !stopping(); i++) {
		struct teldev *t = &tel[i];

		if (!t->nvml || t->gpm || !call_begin())
			continue;
		t->gpm = gp_gpm_open(t->nvml);
		call_end();
		if (!t->gpm)
			continue;
		/* Without a series the GPM state is left as is (never freed: see "The end"). */
		t->g = series_new((uint32_t)i, GP_GPU_SRC_GPM, ms * 1000000ull);
		if (!t->g)
			continue;
		memcpy(t->g->names, gp_gpm_names, sizeof(gp_gpm_names));
		t->g->n = GP_GPM_COUNT;
	}
	series_publish();
}

/* At exit, before CUDA's own handler: the thread stops while CUDA is whole. */
static void stop_at_exit(void)
{
	gp_gpusample_stop(EXIT_WAIT_MS);
}

static void *sampler_main(void *arg)
{
	char pci[MAX_DEVICES][32];
	char why[256];
	int want_pm = gp_rec.cfg.gpu_metrics[0] != 0;
	int want_tel = gp_rec.cfg.gpu_telemetry_ms != 0;
	int want_gpm = want_tel && (gp_rec.cfg.gpu_telemetry_extra & GP_GPU_TELEMETRY_GPM);
	int gpm_on = 0, tel_on = 0, was_on = 0, i, tries, r;
	uint64_t next_pm = 0, next_tel = 0, next_gpm = 0;
	uint64_t tel_ns = (uint64_t)gp_rec.cfg.gpu_telemetry_ms * 1000000ull;
	uint64_t gpm_ns = (gp_rec.cfg.gpu_telemetry_ms > GP_GPM_MIN_MS ? gp_rec.cfg.gpu_telemetry_ms
									: GP_GPM_MIN_MS) * 1000000ull;

	(void)arg;
	/* NVML needs no CUDA: loaded and initialized while the program starts CUDA. */
	if (want_tel)
		want_tel = nvml_open();
	/* CUDA answers once cuInit has returned to the program. */
	for (tries = 0;; tries++) {
		if (!call_begin())
			goto out;
		r = find_devices(pci);
		call_end();
		if (r == 0)
			break;
		if (tries == 100 || stopping())
			goto out;
		sleep_until(gp_now_monotonic() + 100000000ull, atomic_load(&tracing_gen));
	}
	/*
	 * CUDA registered its exit handler inside cuInit, which has returned:
	 * this one runs before it.  Not registered: flush(final) stops the
	 * thread, as late as the recorder's own exit handler runs.
	 */
	if (atexit(stop_at_exit) != 0)
		gp_debug("gpu-over-time: no exit handler of its own");
	if (want_pm && pm_bind(why, sizeof(why)) < 0) {
		gp_log("GPU metrics over time are off: %s; tracing goes on", why);
		want_pm = 0;
	}
	if (want_pm && !stopping()) {
		CUpti_Profiler_Initialize_Params pi = {
			.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE,
		};
		CUptiResult rc = PM(cuptiProfilerInitialize, &pi);

		exit_handler_again(0);

		if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
			no_permission();
			want_pm = 0;
		} else if (rc != CUPTI_SUCCESS && !stopping()) {
			gp_log("GPU metrics over time are off: cannot initialize the CUPTI profiler "
			       "(%s); tracing goes on", err(rc));
			want_pm = 0;
		}
	}
	pm_parse();
	for (i = 0; want_pm && i < ndev; i++) {
		pmd[i].s = series_new((uint32_t)i, GP_GPU_SRC_PM,
				      (uint64_t)gp_rec.cfg.gpu_metrics_us * 1000);
		pmd[i].state = pmd[i].s ? PM_WANT : PM_OFF;
	}
	if (want_tel) {
		telemetry_setup(pci, 1);
		tel_on = 1;
	}
	/* PM sampling's restriction is known once a device is tried. */
	while (!stopping()) {
		uint64_t t = gp_now_monotonic(), wake = t + 1000000000ull;
		unsigned gen = atomic_load(&tracing_gen);
		int on = atomic_load(&tracing);

		/* A device's setup takes most of a second: a stop request ends the round. */
		for (i = 0; want_pm && i < ndev && !stopping(); i++) {
			struct pmdev *d = &pmd[i];

			if (d->state == PM_WANT && pm_setup(i) < 0)
				wake = t + 100000000ull;
			if (!stopping())
				pm_run(d, on);
		}
		/* GPM: asked for, or standing in for restricted counters (NVML loaded then). */
		if (!gpm_on && (want_gpm || atomic_load(&gpm_fallback)) && !stopping()) {
			if (!tel_on && nvml_open()) {
				telemetry_setup(pci, 0);
				tel_on = 1;
			}
			if (tel_on)
				gpm_setup();
			gpm_on = 1;
		}
		/* Paused: what the hardware holds of the window now, while its file is open. */
		if (was_on && !on)
			next_pm = 0;
		was_on = on;
		if (want_pm && t >= next_pm) {
			for (i = 0; i < ndev && !stopping(); i++)
				pm_decode(i);
			next_pm = t + pm_decode_ns();
		}
		if (want_pm && next_pm < wake)
			wake = next_pm;
		if (want_tel && t >= next_tel) {
			uint64_t now = now_ns();

			for (i = 0; i < ndev && !stopping(); i++) {
				struct teldev *d = &tel[i];
				double v[GP_TELEM_COUNT], out[GP_TELEM_COUNT];
				unsigned k, n = 0;
				int got = 0;

				if (!d->s)
					continue;
				if (on && d->last && call_begin()) {
					got = gp_telemetry_read(d->nvml, &d->want, v);
					call_end();
				}
				/* The series' values in its order; a getter dropped as slow reads NaN. */
				if (got > 0) {
					for (k = 0; k < GP_TELEM_COUNT; k++)
						if (d->names & (1u << k))
							out[n++] = v[k];
					queue_sample(d->s, d->last, now, out);
				}
				d->last = on ? now : 0;
			}
			next_tel = t + tel_ns;
		}
		if (want_tel && next_tel < wake)
			wake = next_tel;
		if (gpm_on && t >= next_gpm) {
			uint64_t now = now_ns();

			for (i = 0; i < ndev && !stopping(); i++) {
				struct teldev *d = &tel[i];
				double v[GP_GPM_COUNT];

				if (!d->g)
					continue;
				if (!on) {
					d->glast = 0;
					continue;
				}
				r = -1;
				if (call_begin()) {
					r = gp_gpm_read(d->gpm, v);
					call_end();
				}
				if (r > 0 && d->glast)
					queue_sample(d->g, d->glast, now, v);
				d->glast = r >= 0 ? now : 0;
			}
			next_gpm = t + gpm_ns;
		}
		if (gpm_on && next_gpm < wake)
			wake = next_gpm;
		sleep_until(wake, gen);
	}
	/*
	 * The end: what the hardware still holds, then the counters go back
	 * (each call gated: given up, the thread makes none).  NVML and the
	 * GPM samples are left as they are (see "The end").
	 */
	for (i = 0; want_pm && i < ndev && !atomic_load(&abandoned); i++) {
		pm_run(&pmd[i], 0);
		pm_decode(i);
		pm_teardown(&pmd[i]);
	}
out:
	pthread_mutex_lock(&wake_lock);
	atomic_store(&thread_done, 1);
	pthread_cond_broadcast(&wake_cond);
	pthread_mutex_unlock(&wake_lock);
	return NULL;
}

/*
 * Stops the thread and waits for it at most wait_ms; given up then (see
 * "The end").  Any thread of the process that started it; runs once to
 * the end (later calls return at once).  Never frees anything.
 */
void gp_gpusample_stop(int wait_ms)
{
	static atomic_int once;
	struct timespec ts;
	uint64_t until;

	if (!atomic_load(&thread_started) || atomic_load(&passive) || getpid() != owner ||
	    atomic_exchange(&once, 1))
		return;
	until = gp_now_monotonic() + (uint64_t)wait_ms * 1000000ull;
	ts.tv_sec = (time_t)(until / 1000000000ull);
	ts.tv_nsec = (long)(until % 1000000000ull);
	pthread_mutex_lock(&wake_lock);
	atomic_store(&stop_req, 1);
	pthread_cond_broadcast(&wake_cond);
	while (!atomic_load(&thread_done))
		if (pthread_cond_timedwait(&wake_cond, &wake_lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&wake_lock);
	if (atomic_load(&thread_done)) {
		if (!atomic_exchange(&joined, 1))
			pthread_join(thread, NULL);
		return;
	}
	/* Given up: no further call; one in progress is waited for a little. */
	atomic_store(&abandoned, 1);
	until = gp_now_monotonic() + CALL_WAIT_MS * 1000000ull;
	while (atomic_load(&in_call) && gp_now_monotonic() < until) {
		struct timespec tick = { 0, 1000000 };

		nanosleep(&tick, NULL);
	}
	gp_log("the GPU sampler did not stop in %.1f s%s; its last samples are not in the trace",
	       wait_ms / 1000.0,
	       atomic_load(&in_call) ? " (a CUPTI or NVML call does not return; it is left to it)"
				     : "; it makes no further call");
}

/* ---- source hooks ---- */

static int gs_attach(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	(void)cfg;
	(void)version;
	(void)why;
	(void)whysz;
	return 0;
}

static int gs_enable(char *why, size_t whysz)
{
	(void)why;
	(void)whysz;
	if (atomic_load(&thread_started) || atomic_load(&passive) || !gp_cu.handle ||
	    (!gp_rec.cfg.gpu_metrics[0] && !gp_rec.cfg.gpu_telemetry_ms))
		return 0;
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&wake_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	{
		/* The program's signals are never delivered to the sampler. */
		sigset_t all, old;
		int rc;

		owner = getpid();
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&thread, NULL, sampler_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc == 0)
			atomic_store(&thread_started, 1);
		else
			gp_log("the GPU over time is off: cannot start its thread (%s); tracing goes on",
			       strerror(rc));
	}
	return 0;
}

static int gs_set_tracing(int on, char *why, size_t whysz)
{
	(void)why;
	(void)whysz;
	pthread_mutex_lock(&wake_lock);
	atomic_store(&tracing, on);
	atomic_fetch_add(&tracing_gen, 1);
	pthread_cond_broadcast(&wake_cond);
	pthread_mutex_unlock(&wake_lock);
	return 0;
}

/* A window's start (OPEN) and end (CLOSE); a CLOSE without OPEN began with the trace. */
static void gs_window(int what, uint64_t t)
{
	pthread_mutex_lock(&q_lock);
	if (what == GP_WINDOW_OPEN) {
		win[nwin % WINDOWS].on = t;
		win[nwin % WINDOWS].off = UINT64_MAX;
		nwin++;
	} else if (what == GP_WINDOW_CLOSE) {
		if (!nwin || win[(nwin - 1) % WINDOWS].off != UINT64_MAX) {
			win[nwin % WINDOWS].on = 0;
			nwin++;
		}
		win[(nwin - 1) % WINDOWS].off = t;
	}
	pthread_mutex_unlock(&q_lock);
}

/* q_lock held: whether a sample beginning at start falls inside a window (any, without windows). */
static int in_window(uint64_t start)
{
	if (!nwin)
		return 1;
	for (unsigned i = 0; i < nwin && i < WINDOWS; i++) {
		unsigned k = (nwin - 1 - i) % WINDOWS;

		if (start >= win[k].on && start < win[k].off)
			return 1;
	}
	return 0;
}

/* Lock held. */
static void emit_series(struct series *s)
{
	struct gp_rec_gpu_series *r;
	uint32_t ids[MAX_PM_METRICS];
	uint32_t i, size = gp_rec_align((uint32_t)(sizeof(*r) + s->n * 4));

	/* A PM series before its device's metrics are chosen: written later. */
	if (!s->n && s->status == GP_GPU_OK)
		return;
	for (i = 0; i < s->n; i++)
		if (!(ids[i] = gp_emit_string(s->names[i])))
			return;
	r = gp_emit(GP_REC_GPU_SERIES, size);
	if (!r)
		return;
	r->h.aux = (uint16_t)s->n;
	r->id = s->id;
	r->device = s->device;
	r->source = s->source;
	r->status = s->status;
	r->interval_ns = s->interval_ns;
	memcpy(r + 1, ids, s->n * 4);
	s->emitted = 1;
}

static void gs_preamble(void)
{
	pthread_mutex_lock(&q_lock);
	for (uint32_t i = 0; i < q_series; i++)
		emit_series(&series[i]);
	pthread_mutex_unlock(&q_lock);
}

static void gs_flush(int final)
{
	/*
	 * The end of the trace: the exit handler stopped the thread already,
	 * unless it never ran.  A window's file that ends (GP_FLUSH_FILE)
	 * leaves it paused, for the next window.
	 */
	if (final == GP_FLUSH_END)
		gp_gpusample_stop(FLUSH_WAIT_MS);
}

static void gs_drain(uint64_t t, int final)
{
	size_t off = 0;
	uint32_t i;

	(void)t;
	(void)final;
	if (atomic_load(&passive))
		return;
	pthread_mutex_lock(&q_lock);
	for (i = 0; i < q_series; i++)
		if (!series[i].emitted || series[i].status_dirty) {
			series[i].status_dirty = 0;
			emit_series(&series[i]);
		}
	while (off < q_len) {
		const struct gp_rec_gpu_sample *s = (const void *)(q + off);
		void *r;

		off += s->h.size;
		/* Outside every window (decoded after its file closed): not this file's. */
		if (!in_window(s->start))
			continue;
		r = gp_emit(GP_REC_GPU_SAMPLE, s->h.size);
		if (r) {
			memcpy((uint8_t *)r + sizeof(struct gp_rec), (const uint8_t *)s + sizeof(struct gp_rec),
			       s->h.size - sizeof(struct gp_rec));
			((struct gp_rec *)r)->aux = s->h.aux;
			gp_ring_note_time(&gp_rec.ring, s->start, s->end);
		}
	}
	q_len = 0;
	pthread_mutex_unlock(&q_lock);
}

static void gs_forked(void)
{
	atomic_store(&passive, 1);
	atomic_store(&thread_started, 0);
}

const struct gp_source gp_gpusample_source = {
	.name = "gpu-over-time",
	.attach = gs_attach,
	.enable = gs_enable,
	.set_tracing = gs_set_tracing,
	.window = gs_window,
	.preamble = gs_preamble,
	.flush = gs_flush,
	.drain = gs_drain,
	.forked = gs_forked,
};
