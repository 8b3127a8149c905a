/*
 * A stand-in libcupti for unit tests of cupti/guest.c (test/unit/test_guest.c):
 * the entry points the guest layer resolves, with the multi-subscriber ones
 * of CUPTI 13.3 (cuptiSubscribe_v2 and the subscriber-scoped activity
 * functions).  Every call is counted in fake_state, which the test reads
 * with dlsym; fake_state.version is what cuptiGetVersion answers.  Activity
 * "records" are 16 bytes (kind, then padding); fake_deliver() hands a
 * subscriber (v2) or the one registered pair (v1) a buffer of n of them.
 * CUPTI_ACTIVITY_KIND_KERNEL is refused (NOT_COMPATIBLE) while
 * CONCURRENT_KERNEL is on, as the real CUPTI does.  fake_api_call() is a
 * program's CUDA call: the v1 subscriber's callback at its ENTER and EXIT
 * when its domain or that call is on.  cuptiFinalize (answering
 * fake_state.finalize_rc) forgets the subscriber, the buffer functions,
 * the kinds and the callbacks, as the real one does, and counts whether it
 * came from inside a callback.  Test code.
 */
#include <cupti.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fakecupti.h"

#define REC 16

__attribute__((visibility("default"))) struct fake_state fake_state = { .version = 130300 };

#define API __attribute__((visibility("default"))) CUptiResult CUPTIAPI

API cuptiGetVersion(uint32_t *v)
{
	*v = fake_state.version;
	return CUPTI_SUCCESS;
}

API cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR";
	return CUPTI_SUCCESS;
}

API cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud)
{
	fake_state.subscribe++;
	fake_state.subs[0].used = 1;
	fake_state.subs[0].cb = cb;
	fake_state.subs[0].ud = ud;
	*h = (CUpti_SubscriberHandle)&fake_state.subs[0];
	return CUPTI_SUCCESS;
}

API cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	fake_state.unsubscribe++;
	((struct fake_sub *)h)->used = 0;
	return CUPTI_SUCCESS;
}

static __thread int in_cb;

API cuptiFinalize(void)
{
	if (fake_state.finalize_rc)
		return (CUptiResult)fake_state.finalize_rc;
	fake_state.finalize++;
	/* This thread's: a finalize of another thread while this one is in a callback does not count. */
	fake_state.finalize_in_callback += in_cb != 0;
	fake_state.subs[0].used = 0;
	fake_state.subs[0].cb = NULL;
	fake_state.req = NULL;
	fake_state.done = NULL;
	memset(fake_state.on, 0, sizeof(fake_state.on));
	memset(fake_state.dom_on, 0, sizeof(fake_state.dom_on));
	memset(fake_state.cb_on, 0, sizeof(fake_state.cb_on));
	return CUPTI_SUCCESS;
}

API cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
			CUpti_CallbackId c)
{
	(void)h;
	fake_state.enable_callback++;
	if ((unsigned)d < 8 && c < 2048)
		fake_state.cb_on[d][c] = en != 0;
	return CUPTI_SUCCESS;
}

API cuptiEnableDomain(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d)
{
	(void)h;
	fake_state.enable_domain++;
	if ((unsigned)d < 8) {
		fake_state.dom_on[d] = en != 0;
		memset(fake_state.cb_on[d], en != 0, sizeof(fake_state.cb_on[d]));
	}
	return CUPTI_SUCCESS;
}

API cuptiActivityEnable(CUpti_ActivityKind k)
{
	if (k == CUPTI_ACTIVITY_KIND_KERNEL && fake_state.on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
		return CUPTI_ERROR_NOT_COMPATIBLE;
	fake_state.enable[k]++;
	fake_state.on[k] = 1;
	return CUPTI_SUCCESS;
}

API cuptiActivityDisable(CUpti_ActivityKind k)
{
	fake_state.disable[k]++;
	fake_state.on[k] = 0;
	return CUPTI_SUCCESS;
}

API cuptiActivityEnableRuntimeApi(CUpti_CallbackId c, uint8_t en)
{
	(void)c, (void)en;
	return CUPTI_SUCCESS;
}

API cuptiActivityEnableDriverApi(CUpti_CallbackId c, uint8_t en)
{
	(void)c, (void)en;
	return CUPTI_SUCCESS;
}

API cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
				   CUpti_BuffersCallbackCompleteFunc done)
{
	fake_state.register_callbacks++;
	fake_state.req = req;
	fake_state.done = done;
	return CUPTI_SUCCESS;
}

API cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	(void)fn;
	fake_state.timestamp_callback++;
	return CUPTI_SUCCESS;
}

API cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t *s, void *v)
{
	(void)a, (void)s, (void)v;
	fake_state.set_attribute++;
	return CUPTI_SUCCESS;
}

API cuptiActivityFlushAll(uint32_t flag)
{
	fake_state.flush++;
	fake_state.flush_forced += (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
	return CUPTI_SUCCESS;
}

static CUptiResult next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + REC : buf;

	if ((size_t)(p - buf) + REC > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

API cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	return next(buf, valid, rec);
}

API cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
	(void)c, (void)s;
	*n = 0;
	return CUPTI_SUCCESS;
}

API cuptiGetTimestamp(uint64_t *t)
{
	*t = ++fake_state.clock * 1000;
	return CUPTI_SUCCESS;
}

/* ---- CUPTI 13.3: several subscribers ---- */

struct v2_params {
	size_t struct_size;
	const char *name;
	char *old_name;
	size_t old_name_size;
	uint8_t allow_multiple;
};

API cuptiActivityRegisterCallbacks_v2(CUpti_SubscriberHandle h, v2_req_fn req, v2_done_fn done);
API cuptiActivityEnable_v2(CUpti_SubscriberHandle h, CUpti_ActivityKind k, void *cfg);
API cuptiActivityDisable_v2(CUpti_SubscriberHandle h, CUpti_ActivityKind k, void *cfg);
API cuptiActivityGetNextRecord_v2(CUpti_SubscriberHandle h, uint8_t *buf, size_t valid,
				  CUpti_Activity **rec);
API cuptiGetTimestamp_v2(CUpti_SubscriberHandle h, uint64_t *t);
__attribute__((visibility("default"))) int fake_deliver(int sub, int n, CUpti_ActivityKind k);
__attribute__((visibility("default"))) int fake_api_call(CUpti_CallbackDomain d, CUpti_CallbackId cbid);

/* The params as CUPTI 13.3 has them (13.0's headers end before allowMultipleSubscribers). */
API cuptiSubscribe_v2(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud,
		      CUpti_SubscriberParams *params)
{
	const struct v2_params *p = (const struct v2_params *)(const void *)params;

	fake_state.subscribe_v2++;
	for (int i = 1; i < FAKE_SUBS; i++)
		if (!fake_state.subs[i].used) {
			struct fake_sub *s = &fake_state.subs[i];

			memset(s, 0, sizeof(*s));
			s->used = 1;
			s->cb = cb;
			s->ud = ud;
			s->allow_multiple = p ? p->allow_multiple : 0;
			if (p && p->name)
				strncpy(s->name, p->name, sizeof(s->name) - 1);
			*h = (CUpti_SubscriberHandle)s;
			return CUPTI_SUCCESS;
		}
	return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

API cuptiActivityRegisterCallbacks_v2(CUpti_SubscriberHandle h, v2_req_fn req, v2_done_fn done)
{
	fake_state.register_v2++;
	((struct fake_sub *)h)->req = req;
	((struct fake_sub *)h)->done = done;
	return CUPTI_SUCCESS;
}

API cuptiActivityEnable_v2(CUpti_SubscriberHandle h, CUpti_ActivityKind k, void *cfg)
{
	(void)cfg;
	fake_state.enable_v2++;
	((struct fake_sub *)h)->enabled[k] = 1;
	return CUPTI_SUCCESS;
}

API cuptiActivityDisable_v2(CUpti_SubscriberHandle h, CUpti_ActivityKind k, void *cfg)
{
	(void)cfg;
	fake_state.disable_v2++;
	((struct fake_sub *)h)->enabled[k] = 0;
	return CUPTI_SUCCESS;
}

API cuptiActivityGetNextRecord_v2(CUpti_SubscriberHandle h, uint8_t *buf, size_t valid,
				  CUpti_Activity **rec)
{
	(void)h;
	fake_state.next_v2++;
	return next(buf, valid, rec);
}

API cuptiGetTimestamp_v2(CUpti_SubscriberHandle h, uint64_t *t)
{
	(void)h;
	fake_state.timestamp_v2++;
	*t = ++fake_state.clock * 1000;
	return CUPTI_SUCCESS;
}

/*
 * Test helper: n records of kind k to subscriber sub (1..3, v2) or, with
 * sub 0, to the buffer functions registered with the v1 entry point.
 */
__attribute__((visibility("default"))) int fake_deliver(int sub, int n, CUpti_ActivityKind k)
{
	uint8_t *buf = NULL;
	size_t size = 0, max = 0;

	if (sub) {
		struct fake_sub *s = &fake_state.subs[sub];

		if (!s->req || !s->done)
			return -1;
		s->req(&buf, &size, &max, NULL);
	} else {
		if (!fake_state.req || !fake_state.done)
			return -1;
		fake_state.req(&buf, &size, &max);
	}
	if (!buf || size < (size_t)n * REC)
		return -1;
	memset(buf, 0, (size_t)n * REC);
	for (int i = 0; i < n; i++)
		((CUpti_Activity *)(buf + (size_t)i * REC))->kind = k;
	if (sub)
		fake_state.subs[sub].done(buf, size, (size_t)n * REC, NULL);
	else
		fake_state.done(NULL, 0, buf, size, (size_t)n * REC);
	return 0;
}

/*
 * Test helper: the program makes CUDA call cbid of domain d; the v1
 * subscriber's callback sees its ENTER and EXIT when they are on.
 * Returns the callbacks made.
 */
__attribute__((visibility("default"))) int fake_api_call(CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	CUpti_CallbackData cd;
	int n = 0;

	__atomic_fetch_add(&fake_state.api_calls, 1, __ATOMIC_RELAXED);
	memset(&cd, 0, sizeof(cd));
	cd.correlationId = (uint32_t)__atomic_add_fetch(&fake_state.clock, 1, __ATOMIC_RELAXED);
	for (int site = 0; site < 2; site++) {
		CUpti_CallbackFunc cb = fake_state.subs[0].used ? fake_state.subs[0].cb : NULL;

		if (!cb || (unsigned)d >= 8 || cbid >= 2048 || !fake_state.cb_on[d][cbid])
			continue;
		cd.callbackSite = site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
		__atomic_fetch_add(&fake_state.in_callback, 1, __ATOMIC_SEQ_CST);
		in_cb = 1;
		cb(fake_state.subs[0].ud, d, cbid, &cd);
		in_cb = 0;
		__atomic_fetch_sub(&fake_state.in_callback, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&fake_state.callbacks, 1, __ATOMIC_RELAXED);
		n++;
	}
	return n;
}
