/*
 * Hardware metrics of kernel launches (see metrics.h): CUPTI's range
 * profiler in auto-range, kernel-replay mode, started at the ENTER
 * callback of a selected launch and stopped at its EXIT, so the launch
 * call itself runs every pass (CUPTI saves and restores the memory the
 * kernel writes between passes).  The metric configuration is built per
 * chip with the profiler host API (metrics-config.c; what the two files
 * share is metrics-int.h); the profiler object and its counter data image
 * live per context.
 *
 * --metrics-replay=launches replays nothing: the set is split into groups
 * of one pass each, and a session (Start ... Stop, user replay, auto range:
 * every launch of the context in between is one range, in launch order)
 * takes up to sess_cap() launches under one group's configuration;
 * each kernel and configuration gets one group per launch and one merged
 * result (struct acc) when all are in.  SASS-only groups use single-pass
 * kernel replay instead, since under activity tracing they read zero in
 * user replay; a profiler object configured for one group reads NaN under
 * another, so a group change makes a new object, whose first Start costs
 * 150 to 350 ms: groups go in phases (phase.h), one object each.
 *
 * Threads and contracts:
 *  - launch callbacks (application threads): decide under prof_lock,
 *    which a profiled launch holds from ENTER to EXIT so that no other
 *    thread's launch becomes part of its range; sub_lock (below) keeps
 *    work other threads decided on before from being submitted under
 *    counters started meanwhile.  Results go into a slot
 *    (a fixed ring, published with a release store of its state); no
 *    producer lock, no stdio (gp_log only), allocation only the first
 *    time a context or chip is set up or a kernel's name is demangled,
 *    and when a thread matches a pattern while every kept match slot is
 *    in use (regex.h keeps up to GP_REGEX_POOL: --metrics-kernels here,
 *    --metrics-nvtx in NVTX pushes).  A match is bounded (GP_REGEX_RECORDER).
 *  - gp_metrics_claims / _kernel / _drain: producer lock held; they read
 *    slot states with acquire loads and free slots with release stores.
 *  - Launches inside a stream capture are never profiled (the profiler
 *    would invalidate the capture), nor are graph launches (wrapping them
 *    corrupts the program's results): they are counted.
 *
 * libcupti is bound at run time: the entry points (metrics-int.h) are
 * looked up in the library tracer.c loaded.  cupti_profiler_host.h
 * includes <string>, which C lacks; the Makefile puts cupti/cshim (an
 * empty "string") first on the include path.
 */
#include "metrics.h"
#include "metrics-int.h"

#include "cupti_api.h"
#include "mcache.h"
#include "nvtx_tool.h"
#include "phase.h"

#include "../preload/lifecycle.h"
#include "../preload/log.h"
#include "../preload/recorder.h"

#include <gpuprof/regex.h>

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSLOTS 192
#define SLOT_NAME 2048
#define NKEYS 4096
#define MAX_REPLAY_LOGS 8
#define BUSY_WAIT_MS 2000
#define SESSION_RANGES 32   /* launches per user-replay session in the launches mode */
#define NACC 256            /* kernels measured at once in the launches mode */

struct gp_mx_profiler gp_mx_pf;

typedef CUresult (*stream_is_capturing_fn)(CUstream, CUstreamCaptureStatus *);
typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
typedef CUresult (*device_name_fn)(char *, int, CUdevice);
typedef CUresult (*driver_version_fn)(int *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*mem_info_fn)(size_t *, size_t *);

static stream_is_capturing_fn cu_stream_is_capturing;
static demangle_fn cxa_demangle;
static device_name_fn cu_device_name;
static ctx_push_fn cu_ctx_push;
static ctx_pop_fn cu_ctx_pop;
static mem_info_fn cu_mem_info;
device_get_fn gp_mx_cu_device_get;
device_attr_fn gp_mx_cu_device_attr;


enum { M_OFF = 0, M_ON = 1 };

static _Atomic int mstate;
static uint32_t launches_per_key;
int gp_mx_spread;                          /* --metrics-replay=launches */
#define END_WORDS 16
static uint64_t end_ids[END_WORDS];        /* driver callback ids of cuMemset*, cuMemcpy* */
/* PCRE2, linked in statically and hidden; limits GP_REGEX_RECORDER (regex.h). */
static struct gp_regex kernel_re, nvtx_re;
static int have_kernel_re, have_nvtx_re;

/* Per context: the range profiler object and its counter data image. */
struct ctxprof {
	CUcontext ctx;
	uint32_t ctx_id, device;
	struct chip *chip;
	char gpu[96];              /* device name, for the metrics cache */
	CUpti_RangeProfiler_Object *obj;
	uint8_t *image;
	size_t image_size;
	int state;                 /* 1 ready, -1 unusable */
	/* The launches mode: one counter data image per group, one session at a time. */
	uint8_t *gimage[MAX_GROUPS];
	size_t gimage_size[MAX_GROUPS];
	int sess;                  /* group of the open session, -1 none */
	int cfg_group;             /* group the profiler object was configured for, -1 none */
	int sess_n, sess_idle;
	uint32_t since_want;       /* launches still lacking groups since one wanted cfg_group */
	uint64_t sess_t0, sess_started;
	/* Per group, measured: Start of an existing object, Stop and decode, a launch (ns). */
	uint64_t cost_start[MAX_GROUPS], cost_stop[MAX_GROUPS], cost_launch[MAX_GROUPS];
	struct slot *sess_slot[SESSION_RANGES];
};
static struct ctxprof ctxs[MAX_CTXS];

/* Launch keys: function and configuration, with the launches profiled. */
struct key {
	CUfunction f;
	uint32_t grid[3], block[3], smem;
	uint32_t profiled;
	_Atomic int redo;          /* a cached value proved stale: profile once more */
	int8_t selected;           /* name filter result, 0 unknown, 1 yes, -1 no */
	/* The launches mode: groups measured, groups in the open session, failures. */
	uint8_t gdone, gpend, gfail;
	struct acc *acc;
	uint64_t last_ns;          /* its last duration measured, for ranges without one */
};
static struct key *keys;

enum { S_FREE = 0, S_BUSY, S_RESULT, S_FAILED };

struct slot {
	_Atomic int state;
	uint32_t correlation, context, device, passes;
	uint32_t grid[3], block[3];
	uint64_t start, duration, cost_ns;
	uint64_t t0_mono, t_started;
	struct chip *chip;
	int cached;                /* values from the metrics cache, no replay */
	uint64_t verify_module;    /* cached: image hash to confirm before emitting, 0 none */
	uint64_t name_hash;        /* of the kernel name, for that check */
	struct key *key;
	size_t nvalues;
	double values[MAX_METRICS];
	int range;                 /* launches mode: a launch of a session, time only */
	int wanted;                /* range: its group goes to the key's values */
	int merged;                /* launches mode: a kernel's values, no launch of its own */
	const char *vname[MAX_METRICS]; /* merged: the values' names (else the chip's) */
	int timed;                 /* merged: start and duration are its kernel record's */
	uint64_t t_exit;           /* launches mode: trace clock when the launch call returned */
	uint64_t in_call;          /* launches mode: ns inside the launch call */
	char name[SLOT_NAME];
	/* Producer lock: */
	int kernel_seen;
	struct gp_rec_kernel krec;
};
static struct slot *slots;
static uint32_t next_slot;

/* The launches mode: a kernel's values as its groups come in (prof_lock). */
struct acc {
	struct key *key;
	struct chip *chip;
	uint32_t correlation, context, device, smem;
	uint32_t grid[3], block[3];
	uint64_t start, duration, cost_ns;
	uint8_t have[MAX_METRICS];
	double values[MAX_METRICS];
	char gpu[96];
	char name[SLOT_NAME];
	int used;
};
static struct acc *accs;

/*
 * Times of profiled launches by correlation id, for kernel records that
 * CUPTI delivers after the launch's metrics went out (it may hold them
 * until a buffer fills or the trace ends).  Written at EXIT under
 * prof_lock: corr cleared, times written, corr set (release); read under
 * the producer lock, corr checked before and after the times.
 */
#define NTIMES 4096
static struct {
	_Atomic uint32_t corr;
	_Atomic uint64_t start, duration;
} times[NTIMES];

static void times_put(uint32_t corr, uint64_t start, uint64_t duration);
static int times_find(uint32_t corr, uint64_t *start, uint64_t *duration);
static _Atomic int slots_used;

static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int captures;               /* stream captures under way */

/* Counts for GP_REC_METRICS_INFO. */
static _Atomic uint64_t n_profiled, n_capture, n_graph, n_failed, n_other, n_cost, n_cached;
static _Atomic uint64_t n_sessions, n_own;  /* launches mode: sessions, CUPTI's kernels left out */
static _Atomic uint64_t n_objects;          /* launches mode: profiler objects (one per phase) */
static uint32_t nkeys_selected;             /* launch keys the name filter took (prof_lock) */
static _Atomic int n_untimed;               /* merged results waiting for their kernel's times */
static _Atomic uint32_t mstatus;
static int replay_logs;

/* prof_lock held: the metrics-cache key of the launch being profiled. */
static struct gp_mcache_key cur_key;
static int cur_key_ok;

/*
 * Values measured before their kernel's module image was reported (CUPTI
 * reports a lazily loaded module after the launch that loaded it): stored
 * once it is.  prof_lock held.
 */
#define NPENDING 16
static struct pending {
	struct gp_mcache_key key;
	double values[MAX_METRICS];
	size_t n;
	uint64_t duration;
	uint32_t passes;
	int used;
} *pending;
static int npending;
static _Atomic uint64_t n_stale;

static __thread struct {
	int active;
	uint32_t correlation;
	struct slot *slot;
	struct ctxprof *cp;
	int held;                  /* sub_lock: 0, 1 read, 2 write */
	uint32_t held_corr;        /* ... since the ENTER of this call */
	CUpti_CallbackId held_cbid;
} tl;

/*
 * Work submitted against counters started.  A launch callback decides
 * before the driver submits the work, so another thread's counters could
 * start in between and take that work in: it would come back from CUPTI
 * without a time and spoil the range count.  So every launch, copy, memset
 * and graph launch holds sub_lock for reading from its ENTER to its EXIT,
 * and a thread that starts counters (a launch profiled by kernel replay,
 * a session opened in the launches mode) holds it for writing, from the
 * decision to the launch's EXIT.  Always taken before prof_lock, never
 * waited for while holding it; writers first, so that launches on other
 * threads cannot keep a profiled launch waiting.
 */
static pthread_rwlock_t sub_lock;
static _Atomic int sub_broken;

/*
 * Waits for sub_lock at most SUB_WAIT_READ_S (a call waits for a profiled
 * launch) or SUB_WAIT_WRITE_S (a profiled launch waits for calls, such as
 * a long synchronous copy); after a wait that long nobody waits for it
 * again, so that nothing is held up for good: a call whose EXIT never
 * came, or work that cannot finish before another thread's call is made
 * (a collective waiting on a thread of its library), costs one wait and
 * leaves the race open.  0, or -1 not taken.
 */
#define SUB_WAIT_READ_S 2
#define SUB_WAIT_WRITE_S 10

static int sub_take(int write)
{
	struct timespec ts;
	int r;

	if (atomic_load_explicit(&sub_broken, memory_order_relaxed))
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += write ? SUB_WAIT_WRITE_S : SUB_WAIT_READ_S;
	r = write ? pthread_rwlock_timedwrlock(&sub_lock, &ts) : pthread_rwlock_timedrdlock(&sub_lock, &ts);
	if (r == 0)
		return 0;
	if (!atomic_exchange(&sub_broken, 1))
		gp_debug("metrics: waited %d s for %s; counters no longer wait for other threads' calls",
			 write ? SUB_WAIT_WRITE_S : SUB_WAIT_READ_S,
			 write ? "other threads' calls" : "a profiled launch");
	return -1;
}

/* A callback's ENTER: this thread's submission holds sub_lock (nested calls: the outer one). */
static void sub_enter(const CUpti_CallbackData *cd, CUpti_CallbackId cbid)
{
	if (tl.held || sub_take(0) < 0)
		return;
	tl.held = 1;
	tl.held_corr = cd->correlationId;
	tl.held_cbid = cbid;
}

/* Its EXIT, after prof_lock was let go. */
static void sub_exit(const CUpti_CallbackData *cd, CUpti_CallbackId cbid)
{
	if (!tl.held || tl.held_cbid != cbid || tl.held_corr != cd->correlationId)
		return;
	tl.held = 0;
	pthread_rwlock_unlock(&sub_lock);
}

/*
 * prof_lock not held: this thread's read hold becomes a write hold, once
 * the work other threads are submitting is in (the caller decides again:
 * things may have changed meanwhile).
 */
static void sub_upgrade(void)
{
	pthread_rwlock_unlock(&sub_lock);
	tl.held = sub_take(1) < 0 ? 0 : 2;
}

int gp_metrics_holding(void)
{
	return tl.held;
}

static const char *err(CUptiResult r)
{
	return gp_cupti_error(r);
}

void gp_mx_go_off(uint32_t why)
{
	uint32_t zero = GP_METRICS_OK;

	atomic_compare_exchange_strong(&mstatus, &zero, why);
	atomic_store(&mstate, M_OFF);
}

/* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES from any profiler call: how to enable the counters. */
void gp_mx_no_permission(void)
{
	MX_OFF("GPU performance counters are restricted to admin users (ERR_NVGPUCTRPERM); run as root or with CAP_SYS_ADMIN, or load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)");
	gp_mx_go_off(GP_METRICS_NO_PERMISSION);
}

/* ---- configuration ---- */

/*
 * 1 when name matches re.  Any thread (an NVTX push, a launch's ENTER):
 * no allocation once the expression's pool holds a slot per thread that
 * matches at once.  A match stopped by a limit counts as no match; the
 * first of each option is logged, the name cut and its control characters
 * replaced.
 */
static int matches(struct gp_regex *re, const char *opt, const char *name)
{
	char cut[81], why[96];
	size_t i;
	int rc = gp_regex_match(re, name, strlen(name));

	if (rc != GP_REGEX_LIMIT_FIRST)
		return rc == 1;
	for (i = 0; i < sizeof(cut) - 1 && name[i]; i++)
		cut[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
	cut[i] = 0;
	gp_log("%s: matching '%s%s' stopped (%s); it and any other name the limits stop count "
	       "as not matching", opt, cut, name[i] ? "..." : "", gp_regex_why(re, why, sizeof(why)));
	return 0;
}

static int nvtx_match(const char *message)
{
	return matches(&nvtx_re, "--metrics-nvtx", message);
}

/* At attach: a pattern PCRE2 cannot compile turns metrics off, saying where. */
static int compile(struct gp_regex *re, const char *opt, const char *var, const char *s)
{
	char msg[200];

	if (!gp_regex_compile(re, s, GP_REGEX_RECORDER, msg, sizeof(msg)))
		return 0;
	gp_log("%s (%s): bad regular expression '%s': %s; metrics are off", opt, var, s, msg);
	return -1;
}

int gp_metrics_attach(const struct gp_config *cfg)
{
	if (!cfg->metrics[0])
		return 0;
#define RESOLVE(name)                                                              \
	gp_mx_pf.name = (__typeof__(gp_mx_pf.name))dlsym(gp_cu.handle, #name);     \
	if (!gp_mx_pf.name) {                                                      \
		MX_OFF("%s lacks %s (CUPTI 13 or later is needed)", \
		       gp_cu.path, #name);                                         \
		return 0;                                                          \
	}
	PROFILER_FUNCS(RESOLVE)
#undef RESOLVE
	{
		/* A static cudart opens the driver privately: ask the driver library itself. */
		void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (!cuda)
			cuda = RTLD_DEFAULT;
		cu_stream_is_capturing = (stream_is_capturing_fn)dlsym(cuda, "cuStreamIsCapturing");
		gp_mx_cu_device_get = (device_get_fn)dlsym(cuda, "cuDeviceGet");
		gp_mx_cu_device_attr = (device_attr_fn)dlsym(cuda, "cuDeviceGetAttribute");
		cu_device_name = (device_name_fn)dlsym(cuda, "cuDeviceGetName");
		cu_ctx_push = (ctx_push_fn)dlsym(cuda, "cuCtxPushCurrent_v2");
		cu_ctx_pop = (ctx_pop_fn)dlsym(cuda, "cuCtxPopCurrent_v2");
		cu_mem_info = (mem_info_fn)dlsym(cuda, "cuMemGetInfo_v2");
		if (!gp_mx_cu_device_get || !gp_mx_cu_device_attr)
			gp_debug("metrics: no driver entry points; device ceilings unknown");
	}
	cxa_demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (gp_mx_parse_names(cfg->metrics) < 0)
		return 0;
	if (cfg->metrics_kernels[0] &&
	    compile(&kernel_re, "--metrics-kernels", "GPUPROF_METRICS_KERNELS", cfg->metrics_kernels) < 0)
		return 0;
	have_kernel_re = cfg->metrics_kernels[0] != 0;
	if (cfg->metrics_nvtx[0]) {
		if (!(cfg->trace & GP_TRACE_NVTX)) {
			gp_log("GPUPROF_METRICS_NVTX needs NVTX tracing (--trace with nvtx); metrics are off");
			return 0;
		}
		if (compile(&nvtx_re, "--metrics-nvtx", "GPUPROF_METRICS_NVTX", cfg->metrics_nvtx) < 0)
			return 0;
		have_nvtx_re = 1;
		gp_nvtxtool_set_match(nvtx_match);
	}
	launches_per_key = cfg->metrics_launches ? cfg->metrics_launches : 1;
	gp_mx_spread = cfg->metrics_replay == 1;
	keys = calloc(NKEYS, sizeof(*keys));
	slots = calloc(NSLOTS, sizeof(*slots));
	if (gp_mx_spread && !(accs = calloc(NACC, sizeof(*accs))))
		gp_mx_spread = 0;
	if (!keys || !slots) {
		gp_log("out of memory for metrics; metrics are off");
		return 0;
	}
	if (cfg->metrics_cache[0]) {
		void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		driver_version_fn dv = (driver_version_fn)dlsym(cuda ? cuda : RTLD_DEFAULT,
								 "cuDriverGetVersion");
		uint32_t cv = 0;
		int v = 0;

		if (!dv || dv(&v) != CUDA_SUCCESS)
			v = 0;
		if (gp_cu.cuptiGetVersion(&cv) != CUPTI_SUCCESS)
			cv = 0;
		if (gp_mcache_open(cfg->metrics_cache, cv, v) == 0 &&
		    !(pending = calloc(NPENDING, sizeof(*pending))))
			gp_log("out of memory for the metrics cache; values of kernels whose module loads lazily are not cached");
	}
	{
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&sub_lock, &ra);
		pthread_rwlockattr_destroy(&ra);
	}
	atomic_store(&mstate, M_ON);
	return 1;
}

void gp_metrics_enable_callbacks(CUpti_SubscriberHandle sub)
{
	static const CUpti_CallbackId capture[] = {
		GP_CAPTURE_BEGIN_CBIDS(GP_CBID) GP_CAPTURE_END_CBIDS(GP_CBID)
	};

	if (atomic_load(&mstate) != M_ON)
		return;
	for (size_t i = 0; i < gp_cupti_nlaunch_cbids; i++)
		gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, gp_cupti_launch_cbids[i]);
	for (size_t i = 0; i < sizeof(capture) / sizeof(capture[0]); i++)
		gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, capture[i]);
	for (CUpti_CallbackId id = 1; gp_mx_spread && id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++) {
		const char *name = NULL;

		if (gp_cu.cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) == CUPTI_SUCCESS &&
		    name && (!strncmp(name, "cuMemset", 8) || !strncmp(name, "cuMemcpy", 8)) &&
		    id < 64 * END_WORDS) {
			end_ids[id / 64] |= 1ull << id % 64;
			gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
		}
	}
	gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CU_INIT_FINISHED);
	gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
				  CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (gp_mcache_on())
		gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
					  CUPTI_CBID_RESOURCE_MODULE_LOADED);
}

/* ---- per context ---- */

static void ctx_release(struct ctxprof *cp)
{
	if (cp->obj) {
		CUpti_RangeProfiler_Disable_Params d = {
			.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE,
			.pRangeProfilerObject = cp->obj,
		};

		gp_mx_pf.cuptiRangeProfilerDisable(&d);
	}
	for (int g = 0; g < MAX_GROUPS; g++)
		free(cp->gimage[g]);
	free(cp->image);
	memset(cp, 0, sizeof(*cp));
}

static CUptiResult set_config(struct ctxprof *cp)
{
	CUpti_RangeProfiler_SetConfig_Params sc = {
		.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
		.pRangeProfilerObject = cp->obj,
		.configSize = cp->chip->config_size,
		.pConfig = cp->chip->config,
		.counterDataImageSize = cp->image_size,
		.pCounterDataImage = cp->image,
		.range = CUPTI_AutoRange,
		.replayMode = CUPTI_KernelReplay,
		.maxRangesPerPass = 1,
		.numNestingLevels = 1,
		.minNestingLevel = 1,
		.passIndex = 0,
		.targetNestingLevel = 1,
	};

	return gp_mx_pf.cuptiRangeProfilerSetConfig(&sc);
}

static CUptiResult image_init(struct ctxprof *cp)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ii = {
		.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
		.pRangeProfilerObject = cp->obj,
		.counterDataSize = cp->image_size,
		.pCounterData = cp->image,
	};

	return gp_mx_pf.cuptiRangeProfilerCounterDataImageInitialize(&ii);
}

static const char *level(CUpti_Profiler_Support_Level l)
{
	return l == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "disabled" : "unsupported";
}

/* prof_lock held: the context's profiler, set up on first use; NULL if unusable. */
static struct ctxprof *ctx_get(CUcontext ctx)
{
	struct ctxprof *cp = NULL;
	uint32_t device = 0, ctx_id = 0;
	CUptiResult r;
	const char *step;

	for (int i = 0; i < MAX_CTXS; i++) {
		if (ctxs[i].ctx == ctx)
			return ctxs[i].state > 0 ? &ctxs[i] : NULL;
		if (!cp && !ctxs[i].ctx)
			cp = &ctxs[i];
	}
	if (!cp)
		return NULL;
	cp->ctx = ctx;
	cp->state = -1;
	if (gp_mx_pf.cuptiGetDeviceId(ctx, &device) != CUPTI_SUCCESS)
		return NULL;
	gp_mx_pf.cuptiGetContextId(ctx, &ctx_id);
	cp->device = device;
	cp->ctx_id = ctx_id;
	if (!(cp->chip = gp_mx_chip_of(device)))
		return NULL;
	if (gp_mx_cu_device_get) {
		CUpti_Profiler_DeviceSupported_Params ds = {
			.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE,
			.api = CUPTI_PROFILER_RANGE_PROFILING,
		};

		if (gp_mx_cu_device_get(&ds.cuDevice, (int)device) == CUDA_SUCCESS &&
		    gp_mx_pf.cuptiProfilerDeviceSupported(&ds) == CUPTI_SUCCESS &&
		    ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
			const char *why = ds.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "its architecture"
				: ds.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "vGPU profiling is off"
				: ds.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "confidential computing"
				: ds.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "WSL"
				: ds.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "SLI"
				: ds.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "a mining processor"
				: "the configuration";

			MX_OFF("device %u (%s) does not support the CUPTI profiler (%s: %s)",
			       device, cp->chip->name, why, level(ds.isSupported));
			gp_mx_go_off(GP_METRICS_UNSUPPORTED);
			return NULL;
		}
	}
	gp_mx_note_peaks(device, cp->chip);
	{
		CUdevice dev;

		if (!gp_mx_cu_device_get || !cu_device_name ||
		    gp_mx_cu_device_get(&dev, (int)device) != CUDA_SUCCESS ||
		    cu_device_name(cp->gpu, (int)sizeof(cp->gpu), dev) != CUDA_SUCCESS)
			snprintf(cp->gpu, sizeof(cp->gpu), "%s", cp->chip->name);
		cp->gpu[sizeof(cp->gpu) - 1] = 0;
	}
	{
		CUpti_RangeProfiler_Enable_Params en = {
			.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE,
			.ctx = ctx,
		};

		r = gp_mx_pf.cuptiRangeProfilerEnable(&en);
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
			gp_mx_no_permission();
			return NULL;
		}
		if (r == CUPTI_ERROR_HARDWARE_BUSY) {
			MX_OFF("the GPU's counters are in use by another tool (DCGM, Nsight, another profiler)");
			gp_mx_go_off(GP_METRICS_BUSY);
			return NULL;
		}
		if (r != CUPTI_SUCCESS) {
			MX_OFF("cannot enable the range profiler on device %u (%s)", device,
			       err(r));
			gp_mx_go_off(GP_METRICS_ERROR);
			return NULL;
		}
		cp->obj = en.pRangeProfilerObject;
	}
	if (gp_mx_spread) {
		/* Counter data images per group, made at their first session. */
		cp->sess = -1;
		cp->cfg_group = -1;
		cp->state = 1;
		atomic_fetch_add(&n_objects, 1);
		gp_debug("metrics: range profiler on context %u (device %u, %s), %d groups over successive launches",
			 ctx_id, device, cp->chip->name, cp->chip->ngroups);
		return cp;
	}
	{
		CUpti_RangeProfiler_GetCounterDataSize_Params gs = {
			.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
			.pRangeProfilerObject = cp->obj,
			.pMetricNames = cp->chip->names,
			.numMetrics = cp->chip->nnames,
			.maxNumOfRanges = 1,
			.maxNumRangeTreeNodes = 1,
		};

		step = "GetCounterDataSize";
		r = gp_mx_pf.cuptiRangeProfilerGetCounterDataSize(&gs);
		if (r == CUPTI_SUCCESS && !(cp->image = calloc(1, gs.counterDataSize)))
			r = CUPTI_ERROR_OUT_OF_MEMORY;
		cp->image_size = gs.counterDataSize;
	}
	if (r == CUPTI_SUCCESS) {
		step = "CounterDataImageInitialize";
		r = image_init(cp);
	}
	if (r == CUPTI_SUCCESS) {
		step = "SetConfig";
		r = set_config(cp);
	}
	if (r != CUPTI_SUCCESS) {
		MX_OFF("range profiler %s failed on device %u (%s)", step, device, err(r));
		ctx_release(cp);
		cp->ctx = ctx;
		cp->state = -1;
		gp_mx_go_off(GP_METRICS_ERROR);
		return NULL;
	}
	cp->state = 1;
	gp_debug("metrics: range profiler on context %u (device %u, %s), counter data %zu bytes",
		 ctx_id, device, cp->chip->name, cp->image_size);
	return cp;
}

/* ---- launch selection ---- */

struct launch {
	CUfunction f;
	CUstream stream;
	uint32_t grid[3], block[3], smem;
	int ptsz;
};

static int launch_params(CUpti_CallbackId cbid, const void *params, struct launch *l)
{
	memset(l, 0, sizeof(*l));
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		l->ptsz = 1;
		/* fallthrough */
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel: {
		/* The cooperative form's parameters are a prefix of this one. */
		const cuLaunchKernel_params *p = params;

		l->f = p->f;
		l->stream = p->hStream;
		l->grid[0] = p->gridDimX, l->grid[1] = p->gridDimY, l->grid[2] = p->gridDimZ;
		l->block[0] = p->blockDimX, l->block[1] = p->blockDimY, l->block[2] = p->blockDimZ;
		l->smem = p->sharedMemBytes;
		return 0;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		l->ptsz = 1;
		/* fallthrough */
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
		const cuLaunchKernelEx_params *p = params;
		const CUlaunchConfig *c = p->config;

		if (!c)
			return -1;
		l->f = p->f;
		l->stream = c->hStream;
		l->grid[0] = c->gridDimX, l->grid[1] = c->gridDimY, l->grid[2] = c->gridDimZ;
		l->block[0] = c->blockDimX, l->block[1] = c->blockDimY, l->block[2] = c->blockDimZ;
		l->smem = c->sharedMemBytes;
		return 0;
	}
	default:
		return -1;
	}
}

static int name_selected(const char *name)
{
	char *dem;
	int status = -1, hit;

	if (!have_kernel_re)
		return 1;
	if (!name)
		return 0;
	if (matches(&kernel_re, "--metrics-kernels", name))
		return 1;
	/* Once per kernel and configuration: the demangler allocates. */
	if (!cxa_demangle || !(dem = cxa_demangle(name, NULL, NULL, &status)) || status)
		return 0;
	hit = matches(&kernel_re, "--metrics-kernels", dem);
	free(dem);
	return hit;
}

/* prof_lock held: the launch's key (NULL when the table is full). */
static struct key *key_of(const struct launch *l)
{
	uint64_t h = (uint64_t)(uintptr_t)l->f * 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 3; i++)
		h = (h ^ l->grid[i] ^ (uint64_t)l->block[i] << 32) * 0x100000001b3ull;
	h ^= l->smem;
	for (uint32_t i = 0; i < 64; i++) {
		struct key *k = &keys[(h + i) % NKEYS];

		if (!k->f) {
			k->f = l->f;
			memcpy(k->grid, l->grid, sizeof(k->grid));
			memcpy(k->block, l->block, sizeof(k->block));
			k->smem = l->smem;
			return k;
		}
		if (k->f == l->f && !memcmp(k->grid, l->grid, sizeof(k->grid)) &&
		    !memcmp(k->block, l->block, sizeof(k->block)) && k->smem == l->smem)
			return k;
	}
	return NULL;
}

static int stream_capturing(const struct launch *l)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUstream s = l->stream;

	if (atomic_load(&captures) > 0)
		return 1;
	if (!cu_stream_is_capturing)
		return 0;
	if (!s && l->ptsz)
		s = CU_STREAM_PER_THREAD;
	if (cu_stream_is_capturing(s, &st) != CUDA_SUCCESS)
		return 1; /* e.g. cudaErrorStreamCaptureImplicit: a capture is under way */
	return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/*
 * Kernel replay of more than one pass saves the device memory in use before
 * the first pass and restores it before each later one: in device memory
 * while it fits beside the data, about 4 ms per GiB on an H100 for three
 * passes; beyond that through host memory, seconds per launch at 40 GiB of
 * 80 and minutes at 60, with as much host memory.  0 when the launch can be
 * replayed; else the GiB in use and free (logged), and the launch runs
 * unprofiled.  The context is current.
 */
#define SAVE_HEADROOM ((size_t)512 << 20)

static int replay_too_costly(const struct chip *c, const char *kernel)
{
	size_t free_b = 0, total_b = 0;

	if (c->passes < 2 || !cu_mem_info || cu_mem_info(&free_b, &total_b) != CUDA_SUCCESS ||
	    total_b < free_b || total_b - free_b + SAVE_HEADROOM <= free_b)
		return 0;
	atomic_fetch_add(&n_failed, 1);
	if (replay_logs++ < MAX_REPLAY_LOGS)
		gp_log("metrics: not replaying a launch of %.200s: %.1f GiB of device memory in use, "
		       "%.1f GiB free; kernel replay saves the memory in use, through host memory when "
		       "it does not fit (seconds to minutes per launch); the launch ran unprofiled. "
		       "--metrics-replay=launches saves nothing%s",
		       kernel, (double)(total_b - free_b) / (1u << 30), (double)free_b / (1u << 30),
		       replay_logs == MAX_REPLAY_LOGS ? " (further ones only counted)" : "");
	return 1;
}

static void replay_failed(const char *kernel, const char *step, CUptiResult r)
{
	atomic_fetch_add(&n_failed, 1);
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
		gp_mx_no_permission();
		return;
	}
	if (replay_logs++ < MAX_REPLAY_LOGS)
		gp_log("metrics: cannot replay a launch of %.200s: %s failed (%s); the launch ran unprofiled%s",
		       kernel, step, err(r),
		       replay_logs == MAX_REPLAY_LOGS ? " (further failures only counted)" : "");
}

/* prof_lock held: stores the values waiting for their module; final: drops the rest. */
static void pending_store(int final)
{
	for (int i = 0; i < NPENDING && npending; i++) {
		struct pending *p = &pending[i];
		uint64_t m;

		if (!p->used)
			continue;
		m = gp_mcache_module(p->key.name);
		if (!m && !final)
			continue;
		if (m && m != GP_MCACHE_AMBIGUOUS) {
			p->key.module = m;
			gp_mcache_put(&p->key, p->values, p->n, p->duration, p->passes);
		}
		p->used = 0;
		npending--;
	}
}

/* prof_lock held: keeps a result of cur_key until its module is known. */
static void pending_add(const struct slot *s)
{
	for (int i = 0; pending && i < NPENDING; i++) {
		struct pending *p = &pending[i];

		if (p->used)
			continue;
		memcpy(&p->key, &cur_key, sizeof(p->key));
		memcpy(p->values, s->values, s->nvalues * sizeof(double));
		p->n = s->nvalues;
		p->duration = s->duration;
		p->passes = s->passes;
		p->used = 1;
		npending++;
		return;
	}
	gp_debug("metrics cache: too many values waiting for their module; %.60s not cached", s->name);
}

/*
 * Start; another process profiling this GPU holds the counters while it
 * replays one launch (tens of ms): wait for it, up to BUSY_WAIT_MS.
 */
static CUptiResult range_start(CUpti_RangeProfiler_Object *obj)
{
	CUpti_RangeProfiler_Start_Params st = {
		.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
		.pRangeProfilerObject = obj,
	};
	CUptiResult r = gp_mx_pf.cuptiRangeProfilerStart(&st);

	for (uint64_t waited = 0, d = 1; r == CUPTI_ERROR_HARDWARE_BUSY && waited < BUSY_WAIT_MS;
	     waited += d, d = d < 32 ? d * 2 : d) {
		struct timespec ts = { 0, (long)d * 1000000 };

		nanosleep(&ts, NULL);
		r = gp_mx_pf.cuptiRangeProfilerStart(&st);
	}
	return r;
}

#define BUSY_STEP "range profiler Start (counters busy: another process profiling this GPU)"

/*
 * Stop, DecodeData and the range count, which must be nranges: CUPTI_SUCCESS,
 * or an error with *step naming what failed.
 */
static CUptiResult range_collect(CUpti_RangeProfiler_Object *obj, const uint8_t *image,
				 size_t size, size_t nranges, const char **step)
{
	CUpti_RangeProfiler_Stop_Params sp = {
		.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
		.pRangeProfilerObject = obj,
	};
	CUpti_RangeProfiler_DecodeData_Params dd = {
		.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE,
		.pRangeProfilerObject = obj,
	};
	CUpti_RangeProfiler_GetCounterDataInfo_Params gi = {
		.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE,
		.pCounterDataImage = image,
		.counterDataImageSize = size,
	};
	CUptiResult r;

	*step = "Stop";
	r = gp_mx_pf.cuptiRangeProfilerStop(&sp);
	if (r == CUPTI_SUCCESS && !sp.isAllPassSubmitted) {
		*step = "Stop (passes left over)";
		return CUPTI_ERROR_UNKNOWN;
	}
	if (r != CUPTI_SUCCESS)
		return r;
	*step = "DecodeData";
	r = gp_mx_pf.cuptiRangeProfilerDecodeData(&dd);
	if (r == CUPTI_SUCCESS && dd.numOfRangeDropped) {
		*step = "DecodeData (ranges dropped)";
		return CUPTI_ERROR_UNKNOWN;
	}
	if (r != CUPTI_SUCCESS)
		return r;
	*step = "GetCounterDataInfo";
	r = gp_mx_pf.cuptiRangeProfilerGetCounterDataInfo(&gi);
	if (r == CUPTI_SUCCESS && gi.numTotalRanges != nranges) {
		*step = gi.numTotalRanges ? "GetCounterDataInfo (range count differs from the launches seen)"
					  : "GetCounterDataInfo (no range: the launch failed?)";
		return CUPTI_ERROR_UNKNOWN;
	}
	return r;
}

/*
 * prof_lock held: the slot is the launch's until its EXIT callback, which
 * this thread reaches with the lock still held.
 */
static void slot_busy(struct slot *s, const CUpti_CallbackData *cd, struct ctxprof *cp)
{
	atomic_fetch_add(&slots_used, 1);
	atomic_store_explicit(&s->state, S_BUSY, memory_order_release);
	tl.active = 1;
	tl.correlation = cd->correlationId;
	tl.slot = s;
	tl.cp = cp;
}

/* prof_lock held: a slot for a launch, taken. */
static void slot_fill(struct slot *s, const CUpti_CallbackData *cd, const struct ctxprof *cp,
		      const struct launch *l, struct key *k)
{
	next_slot++;
	s->correlation = cd->correlationId;
	s->context = cp->ctx_id;
	s->device = cp->device;
	s->passes = (uint32_t)cp->chip->passes;
	memcpy(s->grid, l->grid, sizeof(s->grid));
	memcpy(s->block, l->block, sizeof(s->block));
	s->chip = cp->chip;
	s->cached = 0;
	s->range = 0;
	s->merged = 0;
	s->nvalues = 0;
	s->duration = 0;
	s->t_exit = 0;
	snprintf(s->name, sizeof(s->name), "%s", cd->symbolName ? cd->symbolName : "<unknown>");
	s->kernel_seen = 0;
	if (gp_cu.cuptiGetTimestamp(&s->start) != CUPTI_SUCCESS)
		s->start = 0;
	s->t0_mono = mono_ns();
	s->verify_module = 0;
	s->key = k;
}

/*
 * prof_lock held: 1 when the metrics cache has the launch's values (the
 * slot then holds them and is published); else 0, with cur_key set for
 * storing what the launch measures.
 */
static int cache_serve(struct ctxprof *cp, struct key *k, const CUpti_CallbackData *cd,
		       const struct launch *l, struct slot *s)
{
	uint32_t passes = 0;
	uint64_t module = 0;

	if (npending)
		pending_store(0);
	cur_key_ok = gp_mcache_on() &&
		     gp_mcache_key(&cur_key, cp->gpu, cp->chip->name, cd->symbolName, l->grid,
				   l->block, l->smem, cp->chip->set_hash) >= 0;
	if (!cur_key_ok ||
	    !gp_mcache_get(&cur_key, s->values, cp->chip->nnames, &s->duration, &passes, &module))
		return 0;
	/*
	 * The launch runs as it would without metrics; its record keeps its
	 * times.  Values read before the module image was reported wait in
	 * the slot until the drain sees that it is the one they came from.
	 */
	s->cached = 1;
	s->verify_module = cur_key.module ? 0 : module;
	s->name_hash = cur_key.name;
	s->nvalues = cp->chip->nnames;
	s->passes = passes;
	s->cost_ns = mono_ns() - s->t0_mono;
	cur_key_ok = 0;
	k->profiled++;
	atomic_fetch_add(&n_cached, 1);
	atomic_fetch_add(&slots_used, 1);
	atomic_store_explicit(&s->state, S_RESULT, memory_order_release);
	return 1;
}

/* ---- the launches mode: sessions of launches under one single-pass configuration ---- */

static uint8_t groups_all(const struct chip *c)
{
	return (uint8_t)((1u << c->ngroups) - 1);
}

/* prof_lock held: a free slot, or NULL. */
static struct slot *slot_free_one(void)
{
	for (int i = 0; i < NSLOTS; i++) {
		struct slot *s = &slots[(next_slot + (uint32_t)i) % NSLOTS];

		if (atomic_load_explicit(&s->state, memory_order_acquire) == S_FREE) {
			next_slot += (uint32_t)i;
			return s;
		}
	}
	return NULL;
}

/* prof_lock held: the key's accumulator, made at its first group; NULL when none is free. */
static struct acc *acc_of(struct key *k, const struct ctxprof *cp, const CUpti_CallbackData *cd,
			  const struct launch *l)
{
	struct acc *a;

	if (k->acc)
		return k->acc;
	for (int i = 0; i < NACC; i++) {
		a = &accs[i];
		if (a->used)
			continue;
		memset(a, 0, offsetof(struct acc, name));
		a->used = 1;
		a->key = k;
		a->chip = cp->chip;
		a->context = cp->ctx_id;
		a->device = cp->device;
		a->smem = l->smem;
		memcpy(a->grid, l->grid, sizeof(a->grid));
		memcpy(a->block, l->block, sizeof(a->block));
		snprintf(a->gpu, sizeof(a->gpu), "%s", cp->gpu);
		snprintf(a->name, sizeof(a->name), "%s", cd->symbolName ? cd->symbolName : "<unknown>");
		k->acc = a;
		return a;
	}
	return NULL;
}

/*
 * prof_lock held: a kernel's values, complete or (at the end) partial, go
 * out as one result in a slot of their own, tied to the launch whose
 * duration was measured.
 */
static void acc_finish(struct key *k)
{
	struct acc *a = k->acc;
	struct slot *s;
	size_t n = 0;
	int complete = k->gdone == groups_all(a->chip);
	uint32_t groups = (uint32_t)__builtin_popcount(k->gdone);

	k->acc = NULL;
	a->used = 0;
	if (complete) {
		k->profiled++;
		k->gdone = 0; /* for --metrics-launches above one */
	}
	for (size_t i = 0; i < a->chip->nnames; i++)
		n += a->have[i];
	if (!n)
		return;
	if (!(s = slot_free_one())) {
		atomic_fetch_add(&n_other, 1);
		gp_debug("metrics: no free slot for the values of %.60s", a->name);
		return;
	}
	next_slot++;
	memset(s, 0, offsetof(struct slot, name));
	s->kernel_seen = 0;
	s->merged = 1;
	s->correlation = a->correlation;
	s->context = a->context;
	s->device = a->device;
	s->passes = groups;        /* groups measured: all, unless its launches stopped first */
	memcpy(s->grid, a->grid, sizeof(s->grid));
	memcpy(s->block, a->block, sizeof(s->block));
	s->chip = a->chip;
	s->start = a->start;
	s->duration = a->duration;
	s->cost_ns = a->cost_ns;
	s->key = k;
	for (size_t i = 0; i < a->chip->nnames; i++)
		if (a->have[i]) {
			s->vname[s->nvalues] = a->chip->names[i];
			s->values[s->nvalues++] = a->values[i];
		}
	snprintf(s->name, sizeof(s->name), "%s", a->name);
	if (complete && gp_mcache_on()) {
		struct gp_mcache_key ck;

		if (gp_mcache_key(&ck, a->gpu, a->chip->name, a->name, a->grid, a->block, a->smem,
				  a->chip->set_hash) >= 0 &&
		    (ck.module = gp_mcache_module(ck.name)) && ck.module != GP_MCACHE_AMBIGUOUS)
			gp_mcache_put(&ck, a->values, a->chip->nnames, a->duration,
				      (uint32_t)a->chip->ngroups);
	}
	atomic_fetch_add(&n_profiled, 1);
	atomic_fetch_add(&slots_used, 1);
	atomic_fetch_add(&n_untimed, 1);
	atomic_store_explicit(&s->state, S_RESULT, memory_order_release);
}

/* A running mean that follows a cost as it changes (weight 1/4 to the new value). */
static uint64_t ewma(uint64_t mean, uint64_t x)
{
	return mean ? mean - mean / 4 + x / 4 : x;
}

/*
 * Launches a session of the group holds.  CUPTI sizes its buffers by it:
 * on an H100 each range of capacity added about 1.1 ms to a new object's
 * first Start and, in kernel replay, 0.08 ms to every launch (a launch
 * took 11 ms with room for 128 ranges, 0.65 ms with room for one), so a
 * kernel-replay session holds one launch (its Start and Stop cost under
 * 0.1 ms) and a user-replay one enough to share its 40 ms Start.
 */
static int sess_cap(const struct group *gr)
{
	return gr->kernel_replay ? 1 : SESSION_RANGES;
}

/*
 * prof_lock held: whether an idle launch may take a slot.  A launch of a
 * session keeps its slot until its kernel record comes from CUPTI (at a
 * flush); idle launches leave a quarter of the slots to launches that
 * need measuring, and past half in use a flush is asked for early.
 */
static int slots_spare(void)
{
	int used = atomic_load_explicit(&slots_used, memory_order_relaxed);

	if (used > NSLOTS / 2)
		gp_recorder_flush_soon();
	return used < NSLOTS - NSLOTS / 4;
}

/* prof_lock held: idle launches a session of group g stays open for. */
static int idle_max_of(const struct ctxprof *cp, int g)
{
	return phase_idle_max(cp->cost_launch[g], cp->cost_start[g], cp->cost_stop[g],
			      cp->chip->groups[g].kernel_replay);
}

/* prof_lock held: starts a session of group g on the context; 0, or -1 (logged). */
static int sess_open(struct ctxprof *cp, int g, const char *kernel)
{
	struct group *gr = &cp->chip->groups[g];
	const char *step = "GetCounterDataSize";
	CUptiResult r = CUPTI_SUCCESS;
	uint64_t t0 = mono_ns();
	int new_object = cp->cfg_group != g;

	if (cp->cfg_group >= 0 && cp->cfg_group != g) {
		/*
		 * A profiler object configured once gives NaN for every value
		 * under another configuration: a new object for each group.
		 */
		CUpti_RangeProfiler_Disable_Params d = {
			.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE,
			.pRangeProfilerObject = cp->obj,
		};
		CUpti_RangeProfiler_Enable_Params en = {
			.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE,
			.ctx = cp->ctx,
		};

		gp_mx_pf.cuptiRangeProfilerDisable(&d);
		cp->obj = NULL;
		cp->cfg_group = -1;
		step = "Enable";
		r = gp_mx_pf.cuptiRangeProfilerEnable(&en);
		atomic_fetch_add(&n_objects, 1);
		gp_debug("metrics: new profiler object for group %d: %.2f ms", g, (double)(mono_ns() - t0) / 1e6);
		if (r != CUPTI_SUCCESS) {
			MX_OFF("cannot enable the range profiler again on device %u (%s)",
			       cp->device, err(r));
			cp->state = -1;
			gp_mx_go_off(GP_METRICS_ERROR);
			return -1;
		}
		cp->obj = en.pRangeProfilerObject;
	}
	if (cp->cfg_group != g) {
		/* A new object knows the group's names only from this call. */
		CUpti_RangeProfiler_GetCounterDataSize_Params gs = {
			.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
			.pRangeProfilerObject = cp->obj,
			.pMetricNames = gr->names,
			.numMetrics = gr->n,
			.maxNumOfRanges = (size_t)sess_cap(gr),
			.maxNumRangeTreeNodes = (size_t)sess_cap(gr),
		};

		r = gp_mx_pf.cuptiRangeProfilerGetCounterDataSize(&gs);
		if (r == CUPTI_SUCCESS && gs.counterDataSize != cp->gimage_size[g]) {
			free(cp->gimage[g]);
			cp->gimage_size[g] = 0;
			if (!(cp->gimage[g] = calloc(1, gs.counterDataSize)))
				r = CUPTI_ERROR_OUT_OF_MEMORY;
			else
				cp->gimage_size[g] = gs.counterDataSize;
		}
	}
	if (r == CUPTI_SUCCESS) {
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params ii = {
			.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
			.pRangeProfilerObject = cp->obj,
			.counterDataSize = cp->gimage_size[g],
			.pCounterData = cp->gimage[g],
		};

		step = "CounterDataImageInitialize";
		r = gp_mx_pf.cuptiRangeProfilerCounterDataImageInitialize(&ii);
	}
	if (r == CUPTI_SUCCESS) {
		CUpti_RangeProfiler_SetConfig_Params sc = {
			.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
			.pRangeProfilerObject = cp->obj,
			.configSize = gr->config_size,
			.pConfig = gr->config,
			.counterDataImageSize = cp->gimage_size[g],
			.pCounterDataImage = cp->gimage[g],
			.range = CUPTI_AutoRange,
			.replayMode = gr->kernel_replay ? CUPTI_KernelReplay : CUPTI_UserReplay,
			.maxRangesPerPass = (size_t)sess_cap(gr),
			.numNestingLevels = 1,
			.minNestingLevel = 1,
			.passIndex = 0,
			.targetNestingLevel = 1,
		};

		step = "SetConfig";
		r = gp_mx_pf.cuptiRangeProfilerSetConfig(&sc);
		if (r == CUPTI_SUCCESS)
			cp->cfg_group = g;
	}
	if (r == CUPTI_SUCCESS) {
		gp_debug("metrics: group %d configured: %.2f ms", g, (double)(mono_ns() - t0) / 1e6);
		step = "range profiler Start";
		r = range_start(cp->obj);
		if (r == CUPTI_ERROR_HARDWARE_BUSY)
			step = BUSY_STEP;
	}
	if (r != CUPTI_SUCCESS) {
		replay_failed(kernel, step, r);
		return -1;
	}
	cp->sess_started = mono_ns();
	if (!new_object)
		cp->cost_start[g] = ewma(cp->cost_start[g], cp->sess_started - t0);
	gp_debug("metrics: group %d (%s replay) started: %.2f ms", g, gr->kernel_replay ? "kernel" : "user",
		 (double)(cp->sess_started - t0) / 1e6);
	cp->sess = g;
	cp->sess_n = 0;
	cp->sess_idle = 0;
	cp->sess_t0 = t0;
	atomic_fetch_add(&n_sessions, 1);
	return 0;
}

/*
 * prof_lock held: ends the context's session.  Range i is the session's
 * i-th launch (CUPTI serializes them in launch order); when the counts
 * differ (work CUPTI ranged that never passed the launch callbacks), every
 * value of the session is dropped rather than given to the wrong launch.
 */
static void sess_close(struct ctxprof *cp)
{
	int g = cp->sess;
	struct group *gr = &cp->chip->groups[g];
	const char *step;
	CUptiResult r;
	uint64_t wall, share;
	int n = cp->sess_n, ok;

	cp->sess = -1;
	wall = mono_ns();
	r = range_collect(cp->obj, cp->gimage[g], cp->gimage_size[g], (size_t)n, &step);
	if (n) {
		/*
		 * What a launch costs in a session is the time inside its call;
		 * the program's own work between launches goes on as without.
		 */
		uint64_t incall = 0;

		for (int i = 0; i < n; i++)
			incall += cp->sess_slot[i]->in_call;
		cp->cost_launch[g] = ewma(cp->cost_launch[g], incall / (uint64_t)n + 1);
		cp->cost_stop[g] = ewma(cp->cost_stop[g], mono_ns() - wall);
	}
	gp_debug("metrics: group %d: session %.2f ms after its start, Stop and decode %.2f ms", g,
		 (double)(wall - cp->sess_t0) / 1e6, (double)(mono_ns() - wall) / 1e6);
	ok = r == CUPTI_SUCCESS;
	if (!ok && n)
		replay_failed(cp->sess_slot[0]->name, step, r);
	wall = mono_ns() - cp->sess_t0;
	share = n ? wall / (uint64_t)n : 0;
	atomic_fetch_add(&n_cost, wall);
	for (int i = 0; i < n; i++) {
		struct slot *s = cp->sess_slot[i];
		struct key *k = s->wanted ? s->key : NULL;
		double v[MAX_METRICS];
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
			.pHostObject = gr->host,
			.pCounterDataImage = cp->gimage[g],
			.counterDataImageSize = cp->gimage_size[g],
			.rangeIndex = (size_t)i,
			.ppMetricNames = gr->names,
			.numMetrics = gr->n,
			.pMetricValues = v,
		};
		CUptiResult er = ok ? gp_mx_pf.cuptiProfilerHostEvaluateToGpuValues(&ev) : r;
		int good = er == CUPTI_SUCCESS;
		uint64_t dur = 0;

		if (ok && !good)
			gp_debug("metrics: group %d, range %d (%.60s): EvaluateToGpuValues failed (%s)", g, i,
				 s->name, err(er));

		if (k)
			k->gpend = 0;
		s->cost_ns = share;
		if (!good) {
			if (k && ++k->gfail >= 2)
				k->selected = -1; /* twice: leave it unprofiled */
			atomic_store_explicit(&s->state, S_FAILED, memory_order_release);
			continue;
		}
		if (gr->time_at >= 0 && isfinite(v[gr->time_at]) && v[gr->time_at] > 0)
			dur = (uint64_t)(v[gr->time_at] + 0.5);
		/* A group without the duration: the one measured last for the same kernel. */
		if (dur && s->key)
			s->key->last_ns = dur;
		else if (!dur && s->key)
			dur = s->key->last_ns;
		/* The launch call returns when the kernel has run: it ended by then. */
		if (dur && s->t_exit > s->start + dur)
			s->start = s->t_exit - dur;
		else if (!dur && s->t_exit > s->start)
			dur = s->t_exit - s->start;
		s->duration = dur;
		times_put(s->correlation, s->start, dur);
		if (k && k->acc) {
			struct acc *a = k->acc;

			if (gr->time_at >= 0 || !a->correlation) {
				a->correlation = s->correlation;
				a->start = s->start;
				a->duration = dur;
			}
			for (size_t j = 0; j < gr->n; j++) {
				if (!isfinite(v[j]))
					continue;
				a->values[gr->at[j]] = v[j];
				a->have[gr->at[j]] = 1;
			}
			a->cost_ns += share;
			k->gdone |= (uint8_t)(1u << g);
			if (k->gdone == groups_all(cp->chip))
				acc_finish(k);
		}
		atomic_store_explicit(&s->state, S_RESULT, memory_order_release);
	}
	cp->sess_n = 0;
	gp_debug("metrics: session of group %d: %d launches, %.2f ms; a launch call %.2f ms, next idle limit %d", g,
		 n, (double)wall / 1e6, (double)cp->cost_launch[g] / 1e6, idle_max_of(cp, g));
}

/* prof_lock held: the context's session takes the launch as its next range; the lock stays held until EXIT. */
static void sess_add(struct ctxprof *cp, struct slot *s, const CUpti_CallbackData *cd,
		     const struct launch *l, struct key *k, int wanted)
{
	slot_fill(s, cd, cp, l, k);
	s->range = 1;
	s->wanted = wanted;
	s->passes = 1;
	s->t_started = mono_ns();
	cp->sess_slot[cp->sess_n++] = s;
	if (wanted) {
		k->gpend |= (uint8_t)(1u << cp->sess);
		cp->sess_idle = 0;
	} else {
		cp->sess_idle++;
	}
	slot_busy(s, cd, cp);
}

/* prof_lock held: the context's state, or NULL (never creates one). */
static struct ctxprof *ctx_find(CUcontext ctx)
{
	for (int i = 0; i < MAX_CTXS; i++)
		if (ctxs[i].ctx == ctx)
			return ctxs[i].state > 0 ? &ctxs[i] : NULL;
	return NULL;
}

/* prof_lock held: closes a session from a thread that may not have its context current. */
static void sess_close_any(struct ctxprof *cp)
{
	CUcontext prev = NULL;
	int pushed = cu_ctx_push && cu_ctx_pop && cu_ctx_push(cp->ctx) == CUDA_SUCCESS;

	sess_close(cp);
	if (pushed)
		cu_ctx_pop(&prev);
}

static void on_enter_spread(const CUpti_CallbackData *cd, const struct launch *l)
{
	struct ctxprof *cp;
	struct key *k;
	struct slot *s;
	int need, g, counted = 0;

	pthread_mutex_lock(&prof_lock);
	if (atomic_load(&mstate) != M_ON)
		goto unlock;
	k = key_of(l);
	if (k && !k->selected) {
		k->selected = name_selected(cd->symbolName) ? 1 : -1;
		nkeys_selected += k->selected > 0;
	}
	if (k && atomic_load_explicit(&k->redo, memory_order_relaxed) && atomic_exchange(&k->redo, 0) &&
	    k->profiled)
		k->profiled--;
	need = k && k->selected > 0 &&
	       (launches_per_key == GP_METRICS_LAUNCHES_ALL || k->profiled < launches_per_key) &&
	       (!have_nvtx_re || gp_nvtxtool_inside_match());
	cp = ctx_find(cd->context);
	if (cp && cp->sess >= 0) {
		uint8_t bit = (uint8_t)(1u << cp->sess);
		int capturing = stream_capturing(l);
		int wants = need && !capturing && !(k->gdone & bit) && !(k->gpend & bit) &&
			    acc_of(k, cp, cd, l);

		int idle_max = idle_max_of(cp, cp->sess);

		if (wants) {
			cp->since_want = 0;
		} else if (k && k->selected > 0 && !capturing) {
			cp->since_want++;
			counted = 1;
		}
		if (!capturing && cp->sess_n < sess_cap(&cp->chip->groups[cp->sess]) &&
		    (wants || (cp->sess_idle < idle_max && slots_spare())) && (s = slot_free_one())) {
			sess_add(cp, s, cd, l, k, wants);
			return; /* prof_lock stays held until EXIT */
		}
		sess_close(cp);
		if (capturing) {
			atomic_fetch_add(&n_capture, 1);
			goto unlock;
		}
		/* The close may have completed this very kernel. */
		need = need && (launches_per_key == GP_METRICS_LAUNCHES_ALL ||
				k->profiled < launches_per_key);
	}
	if (!k) {
		atomic_fetch_add(&n_other, 1);
		goto unlock;
	}
	if (!need) {
		/* Measured already, or outside the NVTX ranges: time goes by for the phase. */
		if (cp && k->selected > 0 && !counted)
			cp->since_want++;
		goto unlock;
	}
	if (stream_capturing(l)) {
		atomic_fetch_add(&n_capture, 1);
		goto unlock;
	}
	if (!(cp = ctx_get(cd->context)))
		goto unlock;
	if (!(s = slot_free_one())) {
		atomic_fetch_add(&n_other, 1);
		gp_recorder_flush_soon();
		goto unlock;
	}
	if (!k->acc && !k->gdone) {
		slot_fill(s, cd, cp, l, k);
		if (cache_serve(cp, k, cd, l, s))
			goto unlock;
		cur_key_ok = 0;
	}
	g = phase_pick((unsigned)(groups_all(cp->chip) & ~k->gdone & ~k->gpend), cp->cfg_group,
		       cp->chip->ngroups, cp->since_want, phase_exhausted(nkeys_selected));
	if (g < 0) {
		/* Its groups wait for their phases. */
		if (!counted)
			cp->since_want++;
		goto unlock;
	}
	if (!acc_of(k, cp, cd, l)) {
		atomic_fetch_add(&n_other, 1);
		goto unlock;
	}
	if (tl.held == 1) {
		/* A session opens only once other threads' submissions are in: decide again then. */
		pthread_mutex_unlock(&prof_lock);
		sub_upgrade();
		on_enter_spread(cd, l);
		return;
	}
	if (sess_open(cp, g, cd->symbolName ? cd->symbolName : "<unknown>") < 0)
		goto unlock;
	cp->since_want = 0;
	sess_add(cp, s, cd, l, k, 1);
	return;
unlock:
	pthread_mutex_unlock(&prof_lock);
}

static void on_exit_spread(void)
{
	struct slot *s = tl.slot;

	tl.active = 0;
	if (gp_cu.cuptiGetTimestamp(&s->t_exit) != CUPTI_SUCCESS)
		s->t_exit = 0;
	s->in_call = mono_ns() - s->t_started;
	pthread_mutex_unlock(&prof_lock);
}

static void on_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cd)
{
	struct launch l;
	struct key *k;
	struct ctxprof *cp;
	struct slot *s;
	CUptiResult r;

	if (launch_params(cbid, cd->functionParams, &l) < 0)
		return;
	if (tl.active) {
		atomic_fetch_add(&n_other, 1); /* a launch inside a profiled launch */
		return;
	}
	if (gp_mx_spread) {
		on_enter_spread(cd, &l);
		return;
	}
	/* Every launch while a capture is under way, selected or not, is counted. */
	if (atomic_load(&captures) > 0) {
		atomic_fetch_add(&n_capture, 1);
		return;
	}
again:
	pthread_mutex_lock(&prof_lock);
	if (atomic_load(&mstate) != M_ON)
		goto unlock;
	if (!(k = key_of(&l))) {
		atomic_fetch_add(&n_other, 1);
		goto unlock;
	}
	if (!k->selected)
		k->selected = name_selected(cd->symbolName) ? 1 : -1;
	if (atomic_load_explicit(&k->redo, memory_order_relaxed) && atomic_exchange(&k->redo, 0) &&
	    k->profiled)
		k->profiled--;
	if (k->selected < 0 || (launches_per_key != GP_METRICS_LAUNCHES_ALL &&
				k->profiled >= launches_per_key))
		goto unlock;
	if (have_nvtx_re && !gp_nvtxtool_inside_match())
		goto unlock;
	if (stream_capturing(&l)) {
		atomic_fetch_add(&n_capture, 1);
		goto unlock;
	}
	if (!(cp = ctx_get(cd->context)))
		goto unlock;
	if (tl.held == 1) {
		/* Counters start only once other threads' submissions are in. */
		pthread_mutex_unlock(&prof_lock);
		sub_upgrade();
		goto again;
	}
	s = &slots[next_slot % NSLOTS];
	if (atomic_load_explicit(&s->state, memory_order_acquire) != S_FREE) {
		atomic_fetch_add(&n_other, 1);
		goto unlock;
	}
	slot_fill(s, cd, cp, &l, k);
	if (cache_serve(cp, k, cd, &l, s))
		goto unlock;
	if (replay_too_costly(s->chip, s->name))
		goto unlock;
	r = range_start(cp->obj);
	if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_HARDWARE_BUSY) {
		/* The image may need its configuration again: once more. */
		if (image_init(cp) == CUPTI_SUCCESS && set_config(cp) == CUPTI_SUCCESS)
			r = range_start(cp->obj);
		if (r == CUPTI_SUCCESS)
			gp_debug("metrics: Start needed SetConfig again");
	}
	if (r != CUPTI_SUCCESS) {
		replay_failed(s->name, r == CUPTI_ERROR_HARDWARE_BUSY ? BUSY_STEP : "range profiler Start",
			      r);
		goto unlock;
	}
	s->t_started = mono_ns();
	k->profiled++;
	slot_busy(s, cd, cp);
	return; /* prof_lock stays held until EXIT */
unlock:
	pthread_mutex_unlock(&prof_lock);
}

static void on_exit_launch(const CUpti_CallbackData *cd)
{
	struct slot *s = tl.slot;
	struct ctxprof *cp = tl.cp;
	CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
		.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE,
		.pHostObject = s->chip->host,
		.pCounterDataImage = cp->image,
		.counterDataImageSize = cp->image_size,
		.rangeIndex = 0,
		.ppMetricNames = s->chip->names,
		.numMetrics = s->chip->nnames,
		.pMetricValues = s->values,
	};
	const char *step;
	CUptiResult r;
	int state = S_FAILED;

	(void)cd;
	tl.active = 0;
	uint64_t t_exit = mono_ns(), t_decode = 0, t_eval = 0, t_ret = 0;

	if (gp_cu.cuptiGetTimestamp(&t_ret) != CUPTI_SUCCESS)
		t_ret = 0;
	r = range_collect(cp->obj, cp->image, cp->image_size, 1, &step);
	t_decode = mono_ns();
	if (r == CUPTI_SUCCESS) {
		step = "EvaluateToGpuValues";
		r = gp_mx_pf.cuptiProfilerHostEvaluateToGpuValues(&ev);
		t_eval = mono_ns();
	}
	if (r == CUPTI_SUCCESS) {
		s->nvalues = s->chip->nnames;
		for (size_t i = 0; i < s->nvalues; i++)
			if (!strcmp(s->chip->names[i], DURATION_METRIC) && s->values[i] > 0)
				s->duration = (uint64_t)(s->values[i] + 0.5);
		/*
		 * The last pass ran just before the launch call returned, after the
		 * work queued before it: the kernel is placed to end there.
		 */
		if (s->duration && t_ret > s->start + s->duration)
			s->start = t_ret - s->duration;
		state = S_RESULT;
		atomic_fetch_add(&n_profiled, 1);
	} else {
		replay_failed(s->name, step, r);
	}
	/* Ready for the next launch whatever happened. */
	r = image_init(cp);
	if (t_eval)
		gp_debug("metrics: %.60s: Start %.2f ms, launch with %u passes %.2f ms, Stop and "
			 "DecodeData %.2f ms, Evaluate %.2f ms, image reset %.2f ms", s->name,
			 (double)(s->t_started - s->t0_mono) / 1e6, s->passes,
			 (double)(t_exit - s->t_started) / 1e6, (double)(t_decode - t_exit) / 1e6,
			 (double)(t_eval - t_decode) / 1e6, (double)(mono_ns() - t_eval) / 1e6);
	if (r != CUPTI_SUCCESS) {
		MX_OFF("range profiler CounterDataImageInitialize failed (%s)", err(r));
		gp_mx_go_off(GP_METRICS_ERROR);
	}
	if (state == S_RESULT)
		times_put(s->correlation, s->start, s->duration);
	if (state == S_RESULT && cur_key_ok) {
		if (!cur_key.module)
			cur_key.module = gp_mcache_module(cur_key.name);
		if (cur_key.module && cur_key.module != GP_MCACHE_AMBIGUOUS)
			gp_mcache_put(&cur_key, s->values, s->nvalues, s->duration, s->passes);
		else if (!cur_key.module)
			pending_add(s);
	}
	cur_key_ok = 0;
	s->cost_ns = mono_ns() - s->t0_mono;
	atomic_fetch_add(&n_cost, s->cost_ns);
	atomic_store_explicit(&s->state, state, memory_order_release);
	pthread_mutex_unlock(&prof_lock);
}

/* prof_lock held. */
static void times_put(uint32_t corr, uint64_t start, uint64_t duration)
{
	uint32_t at = corr % NTIMES;

	for (uint32_t i = 0; i < 8; i++)
		if (!atomic_load_explicit(&times[(corr + i) % NTIMES].corr, memory_order_relaxed)) {
			at = (corr + i) % NTIMES;
			break;
		}
	atomic_store_explicit(&times[at].corr, 0, memory_order_release);
	atomic_store_explicit(&times[at].start, start, memory_order_relaxed);
	atomic_store_explicit(&times[at].duration, duration, memory_order_relaxed);
	atomic_store_explicit(&times[at].corr, corr, memory_order_release);
}

/* Producer lock held: the entry of corr, or -1. */
static int times_find(uint32_t corr, uint64_t *start, uint64_t *duration)
{
	for (uint32_t i = 0; i < 8; i++) {
		uint32_t at = (corr + i) % NTIMES;

		if (atomic_load_explicit(&times[at].corr, memory_order_acquire) != corr)
			continue;
		*start = atomic_load_explicit(&times[at].start, memory_order_relaxed);
		*duration = atomic_load_explicit(&times[at].duration, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&times[at].corr, memory_order_relaxed) != corr)
			return -1; /* overwritten meanwhile */
		return (int)at;
	}
	return -1;
}

static void on_context_destroy(const CUpti_ResourceData *rd)
{
	pthread_mutex_lock(&prof_lock);
	for (int i = 0; i < MAX_CTXS; i++)
		if (ctxs[i].ctx == rd->context) {
			if (ctxs[i].state > 0 && ctxs[i].sess >= 0)
				sess_close_any(&ctxs[i]);
			/* Profiler objects go before their context does. */
			ctx_release(&ctxs[i]);
			break;
		}
	pthread_mutex_unlock(&prof_lock);
}

/* At the end of cuInit: check the names on device 0's chip, so that a wrong name shows at start. */
static void on_init_finished(void)
{
	pthread_mutex_lock(&prof_lock);
	if (atomic_load(&mstate) == M_ON && !gp_mx_chip_count())
		gp_mx_chip_of(0);
	pthread_mutex_unlock(&prof_lock);
}

/* Work that CUPTI would range without a launch callback: the context's session ends first. */
static void sess_end(CUcontext ctx)
{
	struct ctxprof *cp;

	if (!gp_mx_spread || tl.active)
		return;
	pthread_mutex_lock(&prof_lock);
	if ((cp = ctx_find(ctx)) && cp->sess >= 0)
		sess_close(cp);
	pthread_mutex_unlock(&prof_lock);
}

void gp_metrics_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cd = data;

	if (atomic_load_explicit(&mstate, memory_order_relaxed) != M_ON && !tl.active && !tl.held)
		return;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			on_context_destroy(data);
		} else if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
			const CUpti_ModuleResourceData *md =
				((const CUpti_ResourceData *)data)->resourceDescriptor;

			if (md)
				gp_mcache_module_loaded(md->pCubin, md->cubinSize);
		}
		else if (cbid == CUPTI_CBID_RESOURCE_CU_INIT_FINISHED)
			on_init_finished();
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	switch (cbid) {
	GP_KERNEL_LAUNCH_CBIDS(GP_CBID_CASE)
		if (cd->callbackSite == CUPTI_API_ENTER) {
			sub_enter(cd, cbid);
			on_enter(cbid, cd);
			break;
		}
		if (tl.active && cd->correlationId == tl.correlation && gp_mx_spread)
			on_exit_spread();
		else if (tl.active && cd->correlationId == tl.correlation)
			on_exit_launch(cd);
		sub_exit(cd, cbid);
		break;
	GP_GRAPH_LAUNCH_CBIDS(GP_CBID_CASE)
		if (cd->callbackSite == CUPTI_API_ENTER) {
			atomic_fetch_add(&n_graph, 1);
			sub_enter(cd, cbid);
			sess_end(cd->context);
		} else {
			sub_exit(cd, cbid);
		}
		break;
	GP_CAPTURE_END_CBIDS(GP_CBID_CASE)
		/* The capture ends even when the call fails. */
		if (cd->callbackSite == CUPTI_API_EXIT && atomic_load(&captures) > 0)
			atomic_fetch_sub(&captures, 1);
		break;
	GP_CAPTURE_BEGIN_CBIDS(GP_CBID_CASE)
		/* Counted once the capture has begun. */
		if (cd->callbackSite == CUPTI_API_ENTER)
			sess_end(cd->context);
		if (cd->callbackSite == CUPTI_API_EXIT && cd->functionReturnValue &&
		    *(const CUresult *)cd->functionReturnValue == CUDA_SUCCESS)
			atomic_fetch_add(&captures, 1);
		break;
	default:
		/*
		 * Memsets, which the driver may run as kernels of its own, and
		 * copies, which come back without a time from a session.
		 */
		if (cbid >= 64 * END_WORDS || !(end_ids[cbid / 64] >> cbid % 64 & 1))
			break;
		if (cd->callbackSite == CUPTI_API_ENTER) {
			sub_enter(cd, cbid);
			sess_end(cd->context);
		} else {
			sub_exit(cd, cbid);
		}
		break;
	}
}

/* ---- producer side ---- */

/* Producer lock held: the slot waiting for this correlation's kernel record, or NULL. */
static struct slot *slot_of(uint32_t correlation, int *state)
{
	if (!atomic_load_explicit(&slots_used, memory_order_acquire))
		return NULL;
	for (int i = 0; i < NSLOTS; i++) {
		struct slot *s = &slots[i];

		*state = atomic_load_explicit(&s->state, memory_order_acquire);
		/* A cached launch ran unreplayed: its kernel record is the tracer's. */
		if (*state != S_FREE && s->correlation == correlation && !s->kernel_seen &&
		    !s->cached && !s->merged)
			return s;
	}
	return NULL;
}

int gp_metrics_own_kernel(const char *name)
{
	if (!atomic_load_explicit(&n_sessions, memory_order_relaxed) || !name)
		return 0;
	if (strcmp(name, "WaitNs") && strncmp(name, "_Z6WaitNs", 9))
		return 0;
	atomic_fetch_add(&n_own, 1);
	return 1;
}

int gp_metrics_claims(uint32_t correlation)
{
	uint64_t a, b;
	int st;

	if (!slots || (!atomic_load_explicit(&n_profiled, memory_order_relaxed) &&
		       !atomic_load_explicit(&slots_used, memory_order_relaxed)))
		return 0;
	return slot_of(correlation, &st) || times_find(correlation, &a, &b) >= 0;
}

static void slot_free(struct slot *s)
{
	atomic_fetch_sub(&slots_used, 1);
	atomic_store_explicit(&s->state, S_FREE, memory_order_release);
}

/* Lock held: a profiled launch's kernel record, timed by the profiler when CUPTI gave no time. */
static void emit_replayed(const struct gp_rec_kernel *src, uint64_t start, uint64_t duration)
{
	struct gp_rec_kernel *k = gp_emit(GP_REC_KERNEL, sizeof(*k));

	if (!k)
		return;
	memcpy((char *)k + sizeof(k->h), (const char *)src + sizeof(k->h), sizeof(*k) - sizeof(k->h));
	if (!k->start || !k->end || k->end < k->start) {
		/* Replayed (or ranged) by the profiler: the time it measured. */
		k->start = start;
		k->end = start + duration;
		k->flags |= GP_ACT_REPLAYED;
	}
	gp_ring_note_time(&gp_rec.ring, k->start, k->end);
	/* A kernel's merged values take the times of the launch they are tied to. */
	for (int i = 0; atomic_load_explicit(&n_untimed, memory_order_acquire) && i < NSLOTS; i++) {
		struct slot *s = &slots[i];

		if (s->merged && !s->timed && s->correlation == k->correlation &&
		    atomic_load_explicit(&s->state, memory_order_acquire) == S_RESULT) {
			s->start = k->start;
			s->duration = k->end - k->start;
			s->timed = 1;
			atomic_fetch_sub(&n_untimed, 1);
		}
	}
}

/* Lock held: the kernel record (when seen) and the metrics record of a result. */
static void emit_result(struct slot *s)
{
	struct gp_rec_metrics *m;
	struct gp_metric_value *v;
	uint32_t name, ids[MAX_METRICS];

	if (s->kernel_seen) {
		uint64_t a, b;
		int at = times_find(s->correlation, &a, &b);

		emit_replayed(&s->krec, s->start, s->duration);
		if (at >= 0)
			atomic_store_explicit(&times[at].corr, 0, memory_order_release);
	}
	if (s->range) {
		/* A launch of a session: its time only; its kernel's values go out merged. */
		slot_free(s);
		return;
	}
	name = gp_emit_string(s->name);
	for (size_t i = 0; i < s->nvalues; i++)
		ids[i] = gp_emit_string(s->merged ? s->vname[i] : s->chip->names[i]);
	m = gp_emit(GP_REC_METRICS, (uint32_t)(sizeof(*m) + s->nvalues * sizeof(*v)));
	if (m) {
		m->h.aux = (uint32_t)s->nvalues;
		m->start = s->start;
		m->duration = s->duration;
		m->cost_ns = s->cost_ns;
		m->correlation = s->correlation;
		m->kernel = name;
		m->device = s->device;
		m->context = s->context;
		memcpy(m->grid, s->grid, sizeof(m->grid));
		memcpy(m->block, s->block, sizeof(m->block));
		m->passes = s->passes;
		m->flags = (s->cached ? GP_METRICS_F_CACHED : 0) | (s->merged ? GP_METRICS_F_LAUNCHES : 0);
		v = (struct gp_metric_value *)(m + 1);
		for (size_t i = 0; i < s->nvalues; i++) {
			v[i].name = ids[i];
			v[i].value = s->values[i];
		}
		gp_ring_note_time(&gp_rec.ring, s->start, s->start + s->duration);
	}
	slot_free(s);
}

/* Lock held: a launch not profiled after all: its activity as it came, if it has a time. */
static void emit_failed(struct slot *s)
{
	const struct gp_rec_kernel *k = &s->krec;
	struct gp_rec_kernel *r;

	if (!s->kernel_seen) {
		/* Its record, still to come, is the tracer's. */
	} else if (!k->start || !k->end || k->end < k->start) {
		gp_lost_add(GP_LOST_NO_TIMESTAMP, 1);
		gp_debug("metrics: %.80s (correlation %u): not measured, and CUPTI gave it no time: left out",
			 s->name, s->correlation);
	} else if ((r = gp_emit(GP_REC_KERNEL, sizeof(*r)))) {
		memcpy((char *)r + sizeof(r->h), (const char *)k + sizeof(r->h),
		       sizeof(*r) - sizeof(r->h));
		gp_ring_note_time(&gp_rec.ring, k->start, k->end);
	}
	slot_free(s);
}

void gp_metrics_kernel(const struct gp_rec_kernel *k)
{
	struct slot *s;
	uint64_t start, duration;
	int st, at;

	if (!(s = slot_of(k->correlation, &st))) {
		/* Its metrics went out already: the time is in the table. */
		if ((at = times_find(k->correlation, &start, &duration)) >= 0) {
			emit_replayed(k, start, duration);
			atomic_store_explicit(&times[at].corr, 0, memory_order_release);
		}
		return;
	}
	s->krec = *k;
	s->kernel_seen = 1;
	if (st == S_RESULT) {
		emit_result(s);
	} else if (st == S_FAILED) {
		emit_failed(s);
	}
}

static void emit_info(void)
{
	struct gp_rec_metrics_info *r;
	uint32_t set = gp_emit_string(gp_rec.cfg.metrics);

	r = gp_emit(GP_REC_METRICS_INFO, sizeof(*r));
	if (!r)
		return;
	r->set = set;
	r->launches = launches_per_key;
	r->passes = gp_mx_first_passes();
	r->status = atomic_load(&mstatus);
	r->profiled = atomic_load(&n_profiled);
	r->skipped_capture = atomic_load(&n_capture);
	r->skipped_graph = atomic_load(&n_graph);
	r->failed = atomic_load(&n_failed);
	r->skipped_other = atomic_load(&n_other);
	r->cost_ns = atomic_load(&n_cost);
}

/*
 * The progress line (log.h: a terminal only): launches profiled so far,
 * from the counters the launch path bumps, at most every PROGRESS_NS and
 * only when the count moved.  The flusher (tracer.c's flush hook), no
 * lock; the final call clears it.
 */
#define PROGRESS_NS 250000000ull
void gp_metrics_progress(int final)
{
	static _Atomic int busy;
	static uint64_t last_ns, last_n;
	struct timespec ts;
	uint64_t n, now;

	if (final) {
		gp_log_progress_end();
		return;
	}
	if (atomic_exchange(&busy, 1))
		return;
	n = atomic_load_explicit(&n_profiled, memory_order_relaxed);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (n != last_n && (!last_ns || now - last_ns >= PROGRESS_NS)) {
		uint64_t failed = atomic_load_explicit(&n_failed, memory_order_relaxed);

		last_n = n;
		last_ns = now;
		if (failed)
			gp_log_progress("metrics: %" PRIu64 " launches profiled by %s, %" PRIu64
					" not", n, gp_mx_spread ? "later launches" : "kernel replay",
					failed);
		else
			gp_log_progress("metrics: %" PRIu64 " launches profiled by %s", n,
					gp_mx_spread ? "later launches" : "kernel replay");
	}
	atomic_store(&busy, 0);
}

void gp_metrics_drain(int final)
{
	if (!slots)
		return;
	if (final && gp_mx_spread && pthread_mutex_trylock(&prof_lock) == 0) {
		/* Open sessions end; kernels measured in part go out with what they have. */
		for (int i = 0; i < MAX_CTXS; i++)
			if (ctxs[i].state > 0 && ctxs[i].sess >= 0)
				sess_close_any(&ctxs[i]);
		for (int i = 0; i < NACC; i++)
			if (accs[i].used)
				acc_finish(accs[i].key);
		pthread_mutex_unlock(&prof_lock);
	}
	gp_mx_emit_peaks();
	for (int i = 0; i < NSLOTS; i++) {
		struct slot *s = &slots[i];
		int st = atomic_load_explicit(&s->state, memory_order_acquire);

		if (st != S_RESULT && st != S_FAILED)
			continue;
		if (st == S_RESULT && s->cached && s->verify_module) {
			/* Cached values read before their module was reported: the same image? */
			uint64_t m = gp_mcache_module(s->name_hash);

			if (!m && !final)
				continue;
			if (m != s->verify_module) {
				gp_debug("metrics cache: %.60s: its module changed since the values were cached; "
					 "profiled again at its next launch", s->name);
				atomic_fetch_add(&n_stale, 1);
				atomic_fetch_sub(&n_cached, 1);
				atomic_fetch_add(&n_other, 1);
				atomic_store(&s->key->redo, 1);
				slot_free(s);
				continue;
			}
		}
		/* Merged values wait for the kernel record of their launch. */
		if (st == S_RESULT && s->merged && !s->timed) {
			if (!final)
				continue;
			s->timed = 1; /* its kernel record never came: the profiler's times */
			atomic_fetch_sub(&n_untimed, 1);
		}
		/* A kernel record still to come finds its time in the table. */
		if (st == S_RESULT)
			emit_result(s);
		else
			emit_failed(s);
	}
	if (final && pending && pthread_mutex_trylock(&prof_lock) == 0) {
		pending_store(1);
		pthread_mutex_unlock(&prof_lock);
	}
	if (final) {
		emit_info();
		if (atomic_load(&n_sessions))
			gp_debug("metrics: %" PRIu64 " sessions, %" PRIu64 " profiler objects; %" PRIu64
				 " wait kernels of CUPTI's left out",
				 atomic_load(&n_sessions), atomic_load(&n_objects), atomic_load(&n_own));
	}
}

void gp_metrics_off(void)
{
	atomic_store(&mstate, M_OFF);
}
