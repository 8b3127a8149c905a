/*
 * Capture ranges (see capture.h).
 * Context: CUPTI callbacks on application threads.  State changes are
 * serialized by one mutex (cuptiActivityEnable is not thread-safe); the
 * common path of an NVTX push that does not match costs a string compare.
 */
#define NVTX_NO_IMPL
#include "capture.h"
#include "cupti_api.h"
#include "nvtx_tool.h"

#include "../preload/log.h"
#include "../preload/recorder.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum mode { MODE_NONE, MODE_PROFILER_API, MODE_NVTX };

static enum mode mode;
static char range_name[256];
static char range_domain[256];    /* empty: any domain */
static uint32_t max_ranges;       /* 0: unlimited (repeat) */
static uint32_t ranges_done;
static int capturing;
static uint64_t capture_start;
static struct gp_capture_ops ops;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* NVTX push/pop nesting per thread: depth and the depth that opened a capture. */
static __thread int nvtx_depth;
static __thread int nvtx_capture_depth = -1;

/* "N" of repeat:N: decimal digits only, 1 to UINT32_MAX; 0 when not. */
static uint32_t range_count(const char *s)
{
	uint64_t n = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > UINT32_MAX)
			return 0;
	}
	return (uint32_t)n;
}

int gp_capture_init(const struct gp_config *cfg, const struct gp_capture_ops *o)
{
	const char *r = cfg->capture_range;
	const char *e = cfg->capture_end;

	ops = *o;
	mode = MODE_NONE;
	range_name[0] = range_domain[0] = 0;
	max_ranges = 1;
	ranges_done = 0;
	capturing = 0;
	if (!*r)
		return 0;
	if (!strcmp(r, "cudaProfilerApi")) {
		mode = MODE_PROFILER_API;
	} else if (!strncmp(r, "nvtx:", 5) && r[5] && r[5] != '@') {
		const char *at = strrchr(r + 5, '@');
		size_t n = at ? (size_t)(at - (r + 5)) : strlen(r + 5);

		if (n >= sizeof(range_name) || (at && strlen(at + 1) >= sizeof(range_domain))) {
			gp_log("GPUPROF_CAPTURE_RANGE=%s: name too long; recording everything", r);
			return -1;
		}
		memcpy(range_name, r + 5, n);
		range_name[n] = 0;
		if (at)
			strcpy(range_domain, at + 1);
		mode = MODE_NVTX;
	} else {
		gp_log("GPUPROF_CAPTURE_RANGE=%s: expected cudaProfilerApi or nvtx:NAME[@DOMAIN]; recording everything",
		       r);
		return -1;
	}
	if (*e) {
		if (!strcmp(e, "stop"))
			max_ranges = 1;
		else if (!strcmp(e, "repeat"))
			max_ranges = 0;
		else if (!strncmp(e, "repeat:", 7) && (max_ranges = range_count(e + 7)))
			;
		else {
			gp_log("GPUPROF_CAPTURE_RANGE_END=%s: expected stop, repeat or repeat:N (N from 1 to %u); using stop",
			       e, UINT32_MAX);
			max_ranges = 1;
		}
	}
	return 1;
}

static void nvtx_push(const char *domain, const char *message);
static void nvtx_pop(void);

void gp_capture_enable_callbacks(CUpti_SubscriberHandle sub)
{
	static const struct gp_nvtxtool_capture_hooks hooks = { nvtx_push, nvtx_pop };

	if (mode == MODE_PROFILER_API) {
		gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
					  CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
		gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
					  CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
	} else if (mode == MODE_NVTX) {
		/* NVTX calls reach gpuprof's own NVTX handlers (nvtx_tool.h). */
		gp_nvtxtool_set_capture_hooks(&hooks);
	}
}

static void emit_range(uint64_t end)
{
	struct gp_rec_capture_range *r;
	uint32_t name;

	gp_ring_lock(&gp_rec.ring);
	name = mode == MODE_NVTX ? gp_emit_string(range_name) : 0;
	r = gp_emit(GP_REC_CAPTURE_RANGE, sizeof(*r));
	if (r) {
		r->start = capture_start;
		r->end = end;
		r->kind = mode == MODE_NVTX ? GP_CAPTURE_NVTX : GP_CAPTURE_PROFILER_API;
		r->name = name;
	}
	gp_ring_unlock(&gp_rec.ring);
}

static void start_capture(void)
{
	pthread_mutex_lock(&lock);
	if (!capturing && (!max_ranges || ranges_done < max_ranges)) {
		capturing = 1;
		capture_start = ops.now();
		ops.set_tracing(1);
		gp_debug("capture range opened");
	}
	pthread_mutex_unlock(&lock);
}

static void stop_capture(void)
{
	pthread_mutex_lock(&lock);
	if (capturing) {
		/* Let launched work finish so its records are complete. */
		ops.sync();
		ops.set_tracing(0);
		capturing = 0;
		ranges_done++;
		emit_range(ops.now());
		gp_debug("capture range closed (%u so far)", ranges_done);
	}
	pthread_mutex_unlock(&lock);
}

/* NVTX push on the calling thread; domain NULL is the default domain.
 * Without @DOMAIN any domain matches. */
static void nvtx_push(const char *domain, const char *message)
{
	if (nvtx_capture_depth < 0 && message && !strcmp(message, range_name) &&
	    (!range_domain[0] || (domain && !strcmp(domain, range_domain)))) {
		nvtx_capture_depth = nvtx_depth;
		start_capture();
	}
	nvtx_depth++;
}

static void nvtx_pop(void)
{
	if (!nvtx_depth)
		return;
	nvtx_depth--;
	if (nvtx_depth == nvtx_capture_depth) {
		nvtx_capture_depth = -1;
		stop_capture();
	}
}

int gp_capture_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	if (mode == MODE_PROFILER_API && domain == CUPTI_CB_DOMAIN_DRIVER_API &&
	    (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ||
	     cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
		const CUpti_CallbackData *cd = data;

		/* Open after the start call, close before the stop call. */
		if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && cd->callbackSite == CUPTI_API_EXIT)
			start_capture();
		else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop &&
			 cd->callbackSite == CUPTI_API_ENTER)
			stop_capture();
		return 1;
	}
	return 0;
}

void gp_capture_finish(uint64_t now)
{
	struct gp_rec_capture_range *r;
	uint32_t name;

	if (!capturing)
		return;
	capturing = 0;
	name = mode == MODE_NVTX ? gp_emit_string(range_name) : 0;
	r = gp_emit(GP_REC_CAPTURE_RANGE, sizeof(*r));
	if (r) {
		r->start = capture_start;
		r->end = now;
		r->kind = mode == MODE_NVTX ? GP_CAPTURE_NVTX : GP_CAPTURE_PROFILER_API;
		r->name = name;
	}
}
