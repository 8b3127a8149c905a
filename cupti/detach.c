/*
 * CUPTI let go of between windows (dynamic detach).  Once CUPTI has been
 * attached, a program launches slower for the rest of its life even with
 * every activity kind and callback off and the subscriber gone (on an
 * H200, CUDA 13.0: +0.7 to 1.2 us a launch); only cuptiFinalize gives the
 * launch path back.  CUPTI allows cuptiFinalize only from an API-exit
 * callback, so it is asked for: the runtime and driver callback domains go
 * on, and the first API exit, on whichever program thread, finalizes.
 * After it the recorder calls nothing of CUPTI until the next window
 * attaches again as the first did (cupti/tracer.c).
 *
 * The state (GP_DETACH_*) is one atomic word.  Only the flusher moves it
 * from ATTACHED to REQUESTED, takes a request back (REQUESTED to ATTACHED)
 * and brings it back after a detach or a failure; a program thread in a
 * callback moves it from REQUESTED to FINALIZING (a compare-and-swap: one
 * finalize, and never once the flusher took the request back), then to
 * DETACHED or FAILED.  The recorder's other CUPTI calls (flushes, the
 * dropped-record count, callback and kind switches) test
 * gp_detach_cupti_ok, which only the flusher makes true again.
 *
 * Threads: see detach.h.  The callback does the finalize and atomics
 * only: no lock, no allocation, no output (a failure is said by the
 * flusher, gp_detach_poll).
 */
#include "detach.h"
#include "cupti_api.h"

#include "../preload/log.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int state;
static atomic_uint finalized;
static _Atomic uint64_t last_ns;
static atomic_int failed_rc;
static int given_up;
static CUpti_SubscriberHandle req_sub;
static CUptiResult(CUPTIAPI *finalize_fn)(void);

int gp_detach_cupti_ok(void)
{
	/* Acquire: pairs with the flusher's release stores back to ATTACHED. */
	return atomic_load_explicit(&state, memory_order_acquire) == GP_DETACH_ATTACHED;
}

int gp_detach_state(void)
{
	return atomic_load(&state);
}

unsigned gp_detach_count(void)
{
	return atomic_load(&finalized);
}

uint64_t gp_detach_last_ns(void)
{
	return atomic_load(&last_ns);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int gp_detach_wanted(const struct gp_config *cfg, unsigned keep)
{
	return cfg->detach && cfg->dormant && !cfg->gpu_metrics[0] && !cfg->metrics[0] && !keep;
}

static void domains(int on, CUpti_SubscriberHandle sub)
{
	gp_cu.cuptiEnableDomain((uint32_t)on, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	gp_cu.cuptiEnableDomain((uint32_t)on, sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

int gp_detach_request(CUpti_SubscriberHandle sub)
{
	if (given_up || atomic_load(&state) != GP_DETACH_ATTACHED || !gp_cu.handle ||
	    !gp_cu.cuptiEnableDomain)
		return -1;
	/* libcupti's own: guest.c exports a cuptiFinalize of its own for the program. */
	if (!finalize_fn)
		finalize_fn = (CUptiResult(CUPTIAPI *)(void))dlsym(gp_cu.handle, "cuptiFinalize");
	if (!finalize_fn)
		return -1;
	req_sub = sub;
	/* Seq-cst: the state is REQUESTED before any callback of the domains can come. */
	atomic_store(&state, GP_DETACH_REQUESTED);
	domains(1, sub);
	return 0;
}

void gp_detach_callback(CUpti_CallbackDomain domain, const void *data)
{
	const CUpti_CallbackData *cd = data;
	int want = GP_DETACH_REQUESTED;
	CUptiResult rc;
	uint64_t t0;

	if ((domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) || !cd ||
	    cd->callbackSite != CUPTI_API_EXIT)
		return;
	if (atomic_load_explicit(&state, memory_order_relaxed) != GP_DETACH_REQUESTED ||
	    !atomic_compare_exchange_strong(&state, &want, GP_DETACH_FINALIZING))
		return;
	t0 = mono_ns();
	rc = finalize_fn();
	atomic_store(&last_ns, mono_ns() - t0);
	if (rc == CUPTI_SUCCESS) {
		atomic_fetch_add(&finalized, 1);
		/* Release: pairs with gp_detach_resume's acquire. */
		atomic_store_explicit(&state, GP_DETACH_DETACHED, memory_order_release);
	} else {
		atomic_store(&failed_rc, (int)rc);
		atomic_store_explicit(&state, GP_DETACH_FAILED, memory_order_release);
	}
}

int gp_detach_poll(void)
{
	if (atomic_load_explicit(&state, memory_order_acquire) != GP_DETACH_FAILED)
		return 0;
	given_up = 1;
	domains(0, req_sub);
	gp_log("cannot let CUPTI go between windows (%s); it stays attached",
	       gp_cupti_error((CUptiResult)atomic_load(&failed_rc)));
	atomic_store_explicit(&state, GP_DETACH_ATTACHED, memory_order_release);
	return 1;
}

int gp_detach_resume(uint64_t wait_ns)
{
	int want = GP_DETACH_REQUESTED;
	struct timespec t0, now;

	/* No API exit came since the request: taken back, CUPTI still held. */
	if (atomic_compare_exchange_strong(&state, &want, GP_DETACH_ATTACHED)) {
		domains(0, req_sub);
		return GP_DETACH_ATTACHED;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load_explicit(&state, memory_order_acquire) == GP_DETACH_FINALIZING) {
		struct timespec ts = { 0, 1000000 };

		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((uint64_t)(now.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)now.tv_nsec -
			    (uint64_t)t0.tv_nsec >=
		    wait_ns)
			return -1;
		nanosleep(&ts, NULL);
	}
	if (gp_detach_poll())
		return GP_DETACH_ATTACHED;
	want = atomic_load_explicit(&state, memory_order_acquire);
	return want == GP_DETACH_FORKED ? -1 : want;
}

void gp_detach_forked(void)
{
	int want = GP_DETACH_REQUESTED;

	atomic_compare_exchange_strong(&state, &want, GP_DETACH_FORKED);
}

void gp_detach_attached(void)
{
	atomic_store_explicit(&state, GP_DETACH_ATTACHED, memory_order_release);
}
