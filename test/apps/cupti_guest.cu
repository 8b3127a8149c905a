// LIBS: -ldl
/*
 * A program with its own CUPTI user that never subscribes, as Kineto does
 * from 2026 on (torch.profiler behind it): libcupti is loaded at run time
 * and its entry points resolved the way the dynamic linker binds Kineto's
 * imports (global scope first, so a preloaded library that defines them is
 * found before libcupti), then
 *
 *   phase 1, before any CUDA call: cuptiGetVersion, a timestamp callback
 *            (CLOCK_MONOTONIC, not CUPTI's own clock), buffer callbacks,
 *            CONCURRENT_KERNEL and MEMCPY on; then guest_a x 40, guest_b x 25
 *            and 3 copies; forced flush; both kinds off;
 *   phase 2: nothing on; guest_c x 20; flush (not forced);
 *   phase 3: CONCURRENT_KERNEL on again; guest_a x 10; forced flush; off;
 *   phase 4: KERNEL (the serializing kind) on; guest_d x 15; off; forced flush;
 *   then guest_e x 5 with nothing on.
 *
 * With CUPTI_GUEST_SUBSCRIBE=1 it also subscribes, first of all (before
 * CUDA is initialized, as an older Kineto started early does), with the
 * runtime API callbacks of cudaLaunchKernel on, counts their ENTER calls
 * ("GUEST callbacks.launch <count>") and unsubscribes before guest_e,
 * 600 ms before launching it.
 *
 * Prints the usual TRUTH lines (what it launched) and, per phase, what its
 * own buffers received: "GUEST phaseN.<kernel> <count>", "GUEST
 * phase1.memcpy <count>", "GUEST phaseN.in_window 1" when every kernel it
 * received lies inside the phase on its own clock, and "GUEST
 * phase4.enable_rc <CUptiResult>".
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

extern "C" __global__ void guest_a(int *p) { p[threadIdx.x] += 1; }
extern "C" __global__ void guest_b(int *p) { p[threadIdx.x] += 2; }
extern "C" __global__ void guest_c(int *p) { p[threadIdx.x] += 3; }
extern "C" __global__ void guest_d(int *p) { p[threadIdx.x] += 4; }
extern "C" __global__ void guest_e(int *p) { p[threadIdx.x] += 5; }

static const char *const names[] = { "guest_a", "guest_b", "guest_c", "guest_d", "guest_e" };
#define NNAMES 5

static struct {
	CUptiResult (*GetVersion)(uint32_t *);
	CUptiResult (*RegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*RegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
					 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*Enable)(CUpti_ActivityKind);
	CUptiResult (*Disable)(CUpti_ActivityKind);
	CUptiResult (*FlushAll)(uint32_t);
	CUptiResult (*GetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				      CUpti_CallbackId);
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
} api;

static long long cb_launches;

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;

	(void)ud;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 && cd->callbackSite == CUPTI_API_ENTER)
		__atomic_add_fetch(&cb_launches, 1, __ATOMIC_RELAXED);
}

/* What the buffers brought, since the last reset. */
static long long got[NNAMES], memcpys, buffers;
static uint64_t min_start = UINT64_MAX, max_end;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t CUPTIAPI guest_clock(void)
{
	return mono_ns();
}

/* This program's clock for the phases: its own, or CUPTI's default (CLOCK_REALTIME). */
static int own_clock;

static uint64_t phase_ns(void)
{
	struct timespec ts;

	if (own_clock)
		return mono_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void CUPTIAPI req(uint8_t **buf, size_t *size, size_t *max)
{
	void *p = NULL;

	if (posix_memalign(&p, 8, 1 << 20) != 0)
		p = NULL;
	*buf = (uint8_t *)p;
	*size = p ? 1 << 20 : 0;
	*max = 0;
}

static void CUPTIAPI done(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	buffers++;
	while (valid && api.GetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;

			for (int i = 0; i < NNAMES; i++)
				if (k->name && !strcmp(k->name, names[i]))
					got[i]++;
			if (k->start < min_start)
				min_start = k->start;
			if (k->end > max_end)
				max_end = k->end;
		} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
			memcpys++;
		}
	}
	free(buf);
}

static void reset(void)
{
	memset(got, 0, sizeof(got));
	memcpys = 0;
	min_start = UINT64_MAX;
	max_end = 0;
}

/* What the phase received; its kernels inside [t0, t1] on this program's clock. */
static void report(int phase, uint64_t t0, uint64_t t1, int with_times)
{
	for (int i = 0; i < NNAMES; i++)
		if (got[i])
			printf("GUEST phase%d.%s %lld\n", phase, names[i], got[i]);
	if (phase == 1)
		printf("GUEST phase1.memcpy %lld\n", memcpys);
	if (with_times)
		printf("GUEST phase%d.in_window %d\n", phase,
		       min_start != UINT64_MAX && min_start + 200000 >= t0 && max_end <= t1 + 200000);
	reset();
}

#define R(field, name)                                                        \
	do {                                                                  \
		api.field = (__typeof__(api.field))dlsym(RTLD_DEFAULT, #name); \
		REQUIRE(api.field != NULL, "no %s", #name);                    \
	} while (0)

static void *load_cupti(void)
{
	static const char *const paths[] = {
		"libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
		"/usr/local/cuda/lib/libcupti.so.13",
	};
	const char *env = getenv("CUPTI_LIB");
	void *h = env ? dlopen(env, RTLD_NOW | RTLD_GLOBAL) : NULL;

	for (size_t i = 0; !h && i < sizeof(paths) / sizeof(paths[0]); i++)
		h = dlopen(paths[i], RTLD_NOW | RTLD_GLOBAL);
	return h;
}

static void launch(void (*k)(int *), const char *name, int n, int *p)
{
	for (int i = 0; i < n; i++) {
		k<<<1, 32>>>(p);
		CK(cudaGetLastError());
	}
	truth_kernel(name, n);
}

int main(void)
{
	uint32_t version = 0;
	uint64_t t0, t1;
	int host[32] = { 0 }, *d = NULL;
	CUptiResult rc;
	const char *sub_env = getenv("CUPTI_GUEST_SUBSCRIBE");
	CUpti_SubscriberHandle sub = NULL;

	if (!load_cupti()) {
		printf("SKIP libcupti.so.13 cannot be loaded (%s)\n", dlerror());
		return 0;
	}
	R(GetVersion, cuptiGetVersion);
	R(RegisterTimestampCallback, cuptiActivityRegisterTimestampCallback);
	R(RegisterCallbacks, cuptiActivityRegisterCallbacks);
	R(Enable, cuptiActivityEnable);
	R(Disable, cuptiActivityDisable);
	R(FlushAll, cuptiActivityFlushAll);
	R(GetNextRecord, cuptiActivityGetNextRecord);
	if (sub_env && atoi(sub_env)) {
		R(Subscribe, cuptiSubscribe);
		R(EnableCallback, cuptiEnableCallback);
		R(Unsubscribe, cuptiUnsubscribe);
		REQUIRE(api.Subscribe(&sub, on_callback, NULL) == CUPTI_SUCCESS, "subscribe");
		REQUIRE(api.EnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
					   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == CUPTI_SUCCESS,
			"launch callbacks on");
	}

	/* Phase 1: set up before CUDA is initialized, as a profiler started early. */
	REQUIRE(api.GetVersion(&version) == CUPTI_SUCCESS, "cuptiGetVersion");
	/* Kineto goes on without its clock when CUPTI refuses it; so does this. */
	rc = api.RegisterTimestampCallback(guest_clock);
	own_clock = rc == CUPTI_SUCCESS;
	printf("GUEST clock_rc %d\n", (int)rc);
	REQUIRE(api.RegisterCallbacks(req, done) == CUPTI_SUCCESS, "buffer callbacks");
	REQUIRE(api.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS, "kernels on");
	REQUIRE(api.Enable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS, "memcpy on");
	t0 = phase_ns();
	CK(cudaMalloc(&d, sizeof(host)));
	for (int i = 0; i < 3; i++)
		copy_sync(d, host, sizeof(host), cudaMemcpyHostToDevice);
	launch(guest_a, "guest_a", 40, d);
	launch(guest_b, "guest_b", 25, d);
	CK(cudaDeviceSynchronize());
	t1 = phase_ns();
	REQUIRE(api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS, "flush");
	api.Disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	api.Disable(CUPTI_ACTIVITY_KIND_MEMCPY);
	api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	report(1, t0, t1, 1);

	/* Phase 2: the profiler is off. */
	launch(guest_c, "guest_c", 20, d);
	CK(cudaDeviceSynchronize());
	api.FlushAll(0);
	api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	report(2, 0, 0, 0);

	/* Phase 3: a second session. */
	REQUIRE(api.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS, "kernels on");
	t0 = phase_ns();
	launch(guest_a, "guest_a", 10, d);
	CK(cudaDeviceSynchronize());
	t1 = phase_ns();
	api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	api.Disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	report(3, t0, t1, 1);

	/* Phase 4: the serializing kernel kind. */
	rc = api.Enable(CUPTI_ACTIVITY_KIND_KERNEL);
	printf("GUEST phase4.enable_rc %d\n", (int)rc);
	launch(guest_d, "guest_d", 15, d);
	CK(cudaDeviceSynchronize());
	api.Disable(CUPTI_ACTIVITY_KIND_KERNEL);
	api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	report(4, 0, 0, 0);

	if (sub) {
		/* Let go of CUPTI; a tool waiting for it has time to take it. */
		printf("GUEST callbacks.launch %lld\n", __atomic_load_n(&cb_launches, __ATOMIC_RELAXED));
		REQUIRE(api.Unsubscribe(sub) == CUPTI_SUCCESS, "unsubscribe");
		fflush(stdout);
		usleep(600 * 1000);
	}
	launch(guest_e, "guest_e", 5, d);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	printf("GUEST buffers %lld\n", buffers);
	truth_print();
	return 0;
}
