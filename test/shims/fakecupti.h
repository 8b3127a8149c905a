/*
 * The stand-in libcupti's counters (test/shims/fakecupti.c), shared with
 * the unit tests that read them (test/unit/test_guest.c, test_detach.c).
 * Test code.
 */
#ifndef GPUPROF_TEST_FAKECUPTI_H
#define GPUPROF_TEST_FAKECUPTI_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_SUBS 4
#define FAKE_KINDS 64
typedef void (*v2_req_fn)(uint8_t **, size_t *, size_t *, void *);
typedef void (*v2_done_fn)(uint8_t *, size_t, size_t, void *);

struct fake_sub {
	int used;
	CUpti_CallbackFunc cb;
	void *ud;
	int allow_multiple;
	char name[32];
	v2_req_fn req;
	v2_done_fn done;
	int enabled[FAKE_KINDS];
};

struct fake_state {
	uint32_t version;
	/* v1 */
	int subscribe, unsubscribe, finalize, register_callbacks, flush, flush_forced;
	int enable[FAKE_KINDS], disable[FAKE_KINDS], on[FAKE_KINDS];
	int timestamp_callback, set_attribute, enable_callback;
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	/* v2 */
	int subscribe_v2, register_v2, enable_v2, disable_v2, next_v2, timestamp_v2;
	struct fake_sub subs[FAKE_SUBS];
	uint64_t clock;
	/* Dynamic detach (test_detach): domains and callbacks of the v1 subscriber, finalize. */
	int enable_domain, dom_on[8];
	uint8_t cb_on[8][2048];
	int in_callback, finalize_in_callback, finalize_rc, api_calls, callbacks;
};

#endif
