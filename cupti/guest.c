/*
 * The program's own CUPTI user beside the recorder (a "guest": Kineto
 * behind torch.profiler, or any library that calls libcupti).  CUPTI up to
 * 13.2 allows one subscriber and one set of activity buffer callbacks per
 * process; the recorder holds them.  This file exports the CUPTI entry
 * points such a guest calls (it binds to them: the recorder is preloaded,
 * and a versioned reference binds to an unversioned definition) and gives
 * it its own view:
 *
 *  - cuptiSubscribe returns a handle of its own; the callbacks and domains
 *    the guest enables are enabled on the recorder's subscription and
 *    passed to the guest's callback from the recorder's;
 *  - cuptiActivityRegisterCallbacks keeps the guest's buffer functions;
 *    cuptiActivityEnable/Disable turn kinds on and off in the guest's view
 *    (really only when the recorder does not trace them itself); every
 *    record of a kind the guest has on (or had on when the record started,
 *    until its next forced flush) is copied into a buffer the guest
 *    requested, and handed back through its completion function when full
 *    or when the guest flushes;
 *  - cuptiActivityEnableRuntimeApi/DriverApi(cbid, 0) filter the guest's
 *    copies only; cuptiActivitySetAttribute is taken and ignored;
 *    cuptiActivityRegisterTimestampCallback is not passed on (the
 *    recorder's clock stays CUPTI's): the time fields of the guest's copies
 *    are converted to the guest's clock instead, by a line fitted to paired
 *    reads of both clocks;
 *  - cuptiActivityGetNextRecord walks the guest's buffers (which this file
 *    lays out: an 8-byte header before each record) and passes any other
 *    buffer on; cuptiActivityGetNumDroppedRecords reports the records the
 *    guest had no buffer for; cuptiUnsubscribe and cuptiFinalize forget
 *    the guest and never reach CUPTI.
 *
 * The recorder's own trace stays what it asked for: its enables go through
 * shims here that note them, and records or callbacks the guest caused
 * are left out of its stream (gp_guest_own_record, gp_guest_dispatch).
 *
 * A guest that needs no subscription (Kineto from 2026 on registers its
 * buffer functions, enables kinds, flushes and disables them without ever
 * subscribing) is served the same way: its registration never replaces the
 * recorder's, its disables never turn off the recorder's kinds.
 *
 * Until the recorder holds CUPTI (the guest came first, or the recorder is
 * off, passive or in a forked child) every call goes straight to CUPTI and
 * is remembered; when the recorder then takes CUPTI it adopts what the
 * guest set up (its buffer functions, its kinds, its clock), takes its own
 * buffer functions back and serves the guest from then on.  A guest that
 * subscribes before CUDA is initialized would take CUPTI's one subscription
 * ahead of the recorder (which starts inside cuInit): its cuptiSubscribe
 * initializes CUDA first (CUPTI's own first call would do so anyway), the
 * recorder starts, and the guest is served.  Only where that cannot start
 * the recorder (another tool's injection, the recorder off) does the guest
 * subscribe for real and keep CUPTI; the recorder then says so and records
 * nothing.
 *
 * Hand-over: when CUPTI refuses a guest's kind beside the recorder's
 * (CUPTI_ERROR_NOT_COMPATIBLE and the like), the recorder flushes, turns
 * its own kinds off, marks a gap (GP_LOST_HANDOVER, written by the drain),
 * says so in one line on stderr and lets the guest have CUPTI; activity
 * records that reach only the guest meanwhile are counted under that
 * cause.  When the guest turns that kind off (or unsubscribes) the
 * recorder turns its kinds on again and closes the gap.  Never both blind.
 *
 * Several subscribers: where libcupti has the multi-subscriber entry
 * points (cuptiSubscribe_v2 with allowMultipleSubscribers and the
 * subscriber-scoped cuptiActivity*_v2 functions, CUPTI 13.3 and later,
 * found with dlsym at attach), the recorder subscribes through them and the
 * guest gets a subscriber of its own: CUPTI keeps their buffers and kinds
 * apart and nothing is copied.  That path is not exercised with CUDA 13.0's
 * CUPTI (which lacks those entry points; test/unit/test_guest.c drives it
 * through a stand-in libcupti); it is off unless every one of them is found.
 *
 * Threads: guest calls from any thread (serialized by guest_lock, never
 * held while a guest function runs); gp_guest_copy on CUPTI's delivery
 * thread, serialized by copy_lock, which is held across the guest's
 * request and completion functions (they take the guest's own lock, which
 * the guest never holds while calling into CUPTI); callbacks lock-free.
 */
#include "guest.h"
#include "cupti_api.h"

#include "../preload/config.h"
#include "../preload/log.h"
#include "../preload/recorder.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GP_EXPORT __attribute__((visibility("default")))

#define NKINDS CUPTI_ACTIVITY_KIND_COUNT
#define NDOMS CUPTI_CB_DOMAIN_SIZE
#define NCBID 2048
#define REC_MAGIC 0x47505247u          /* "GRPG" */
#define DELIVERED 256                  /* guest buffers GetNextRecord knows */

struct rec_hdr {
	uint32_t magic;
	uint32_t size;                 /* record bytes after this header, multiple of 8 */
};

/* The real CUPTI functions (never these wrappers). */
static struct {
	__typeof__(&cuptiSubscribe) Subscribe;
	__typeof__(&cuptiUnsubscribe) Unsubscribe;
	__typeof__(&cuptiFinalize) Finalize;
	__typeof__(&cuptiEnableCallback) EnableCallback;
	__typeof__(&cuptiEnableDomain) EnableDomain;
	__typeof__(&cuptiActivityEnable) Enable;
	__typeof__(&cuptiActivityDisable) Disable;
	__typeof__(&cuptiActivityEnableRuntimeApi) EnableRuntimeApi;
	__typeof__(&cuptiActivityEnableDriverApi) EnableDriverApi;
	__typeof__(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
	__typeof__(&cuptiActivityRegisterTimestampCallback) RegisterTimestampCallback;
	__typeof__(&cuptiActivitySetAttribute) SetAttribute;
	__typeof__(&cuptiActivityFlushAll) FlushAll;
	__typeof__(&cuptiActivityGetNextRecord) GetNextRecord;
	__typeof__(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords;
	__typeof__(&cuptiGetTimestamp) GetTimestamp;
	int resolved;
} real;

/*
 * The multi-subscriber entry points (CUPTI 13.3+), declared here: the
 * headers this recorder is built with may predate them.
 */
struct v2_params {
	size_t struct_size;
	const char *name;
	char *old_name;
	size_t old_name_size;
	uint8_t allow_multiple;
	uint8_t pad[7];
};
typedef void (CUPTIAPI *v2_req_fn)(uint8_t **buf, size_t *size, size_t *max, void *info);
typedef void (CUPTIAPI *v2_done_fn)(uint8_t *buf, size_t size, size_t valid, void *info);
static struct {
	CUptiResult (CUPTIAPI *Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
					  struct v2_params *);
	CUptiResult (CUPTIAPI *RegisterCallbacks)(CUpti_SubscriberHandle, v2_req_fn, v2_done_fn);
	CUptiResult (CUPTIAPI *Enable)(CUpti_SubscriberHandle, CUpti_ActivityKind, void *);
	CUptiResult (CUPTIAPI *Disable)(CUpti_SubscriberHandle, CUpti_ActivityKind, void *);
	CUptiResult (CUPTIAPI *GetNextRecord)(CUpti_SubscriberHandle, uint8_t *, size_t,
					      CUpti_Activity **);
	CUptiResult (CUPTIAPI *GetTimestamp)(CUpti_SubscriberHandle, uint64_t *);
	int usable;                    /* every one found and CUPTI >= 13.3 */
	CUpti_SubscriberHandle gsub;   /* the guest's own subscriber */
} v2;

static pthread_mutex_t guest_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int serving;
static CUpti_SubscriberHandle rec_sub;  /* the recorder's subscription */
int gp_guest_seen;

/* What the recorder enabled itself (through the shims). */
static uint8_t own_kind[NKINDS];
static uint8_t own_rt[NCBID], own_drv[NCBID];
static uint8_t own_dom[NDOMS], own_cb[NDOMS][NCBID];

/* The recorder's buffer functions, to take them back from an early guest. */
static CUpti_BuffersCallbackRequestFunc rec_req;
static CUpti_BuffersCallbackCompleteFunc rec_done;

/* What a guest set up straight with CUPTI before the recorder held it. */
static struct {
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	CUpti_TimestampCallbackFunc ts;
	uint8_t on[NKINDS];
	int any;
} pt;

/* Hand-over: the recorder stepped aside for a kind CUPTI refused beside its own. */
static atomic_int aside;
static int aside_kind = -1;
#define GAP_MARKS 16
static pthread_mutex_t gap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t t;
	uint32_t what;                 /* GP_LOST_GAP_* */
} gapq[GAP_MARKS];
static unsigned ngapq;

/* The guest's view. */
static struct {
	int subscribed;
	CUpti_CallbackFunc cb;
	void *ud;
	uint8_t dom[NDOMS], cbw[NDOMS][NCBID];
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	uint8_t on[NKINDS], draining[NKINDS];
	uint64_t on_ts[NKINDS], off_ts[NKINDS];
	uint8_t rt_off[NCBID], drv_off[NCBID];
	CUpti_TimestampCallbackFunc ts;
	uint64_t o0, g0;               /* first paired clock reads */
	double ratio;                  /* guest ticks per ns */
	uint8_t *buf;                  /* buffer being filled (copy_lock) */
	size_t size, used;
	_Atomic uint64_t dropped;
} g;

/* Counts for the verbose log (GPUPROF_VERBOSE): what the guest got and why not. */
static _Atomic uint64_t n_seen, n_copied, n_off, n_early, n_late, n_filtered, n_buffers, n_walked;

static struct {
	uint8_t *p;
} delivered[DELIVERED];
static unsigned ndelivered;
static _Atomic(uint8_t *) last_delivered;

static void resolve(void)
{
	void *h;

	if (real.resolved)
		return;
	h = gp_cu.handle;
	if (!h)
		h = dlopen("libcupti.so.13", RTLD_NOLOAD | RTLD_LAZY);
	if (!h)
		return;
#define R(field, name) real.field = (__typeof__(real.field))dlsym(h, #name)
	R(Subscribe, cuptiSubscribe);
	R(Unsubscribe, cuptiUnsubscribe);
	R(Finalize, cuptiFinalize);
	R(EnableCallback, cuptiEnableCallback);
	R(EnableDomain, cuptiEnableDomain);
	R(Enable, cuptiActivityEnable);
	R(Disable, cuptiActivityDisable);
	R(EnableRuntimeApi, cuptiActivityEnableRuntimeApi);
	R(EnableDriverApi, cuptiActivityEnableDriverApi);
	R(RegisterCallbacks, cuptiActivityRegisterCallbacks);
	R(RegisterTimestampCallback, cuptiActivityRegisterTimestampCallback);
	R(SetAttribute, cuptiActivitySetAttribute);
	R(FlushAll, cuptiActivityFlushAll);
	R(GetNextRecord, cuptiActivityGetNextRecord);
	R(GetNumDroppedRecords, cuptiActivityGetNumDroppedRecords);
	R(GetTimestamp, cuptiGetTimestamp);
#undef R
	real.resolved = real.Subscribe && real.Enable && real.FlushAll && real.GetNextRecord &&
			real.GetTimestamp;
}

/* The multi-subscriber entry points, all or none (CUPTI 13.3 and later). */
static void resolve_v2(void)
{
	void *h = gp_cu.handle;
	uint32_t version = 0;

	memset(&v2, 0, sizeof(v2));
	if (!h || !gp_cu.cuptiGetVersion || gp_cu.cuptiGetVersion(&version) != CUPTI_SUCCESS ||
	    version < 130300)
		return;
#define R(field, name) v2.field = (__typeof__(v2.field))dlsym(h, #name)
	R(Subscribe, cuptiSubscribe_v2);
	R(RegisterCallbacks, cuptiActivityRegisterCallbacks_v2);
	R(Enable, cuptiActivityEnable_v2);
	R(Disable, cuptiActivityDisable_v2);
	R(GetNextRecord, cuptiActivityGetNextRecord_v2);
	R(GetTimestamp, cuptiGetTimestamp_v2);
#undef R
	v2.usable = v2.Subscribe && v2.RegisterCallbacks && v2.Enable && v2.Disable &&
		    v2.GetNextRecord && v2.GetTimestamp;
}

/* Without libcupti (the program never loaded it) a guest call fails plainly. */
#define PASS(field, ...)                                                      \
	do {                                                                  \
		resolve();                                                    \
		return real.field ? real.field(__VA_ARGS__) : CUPTI_ERROR_NOT_INITIALIZED; \
	} while (0)

static int on(void)
{
	return atomic_load_explicit(&serving, memory_order_acquire);
}

static uint64_t now(void)
{
	uint64_t t = 0;

	if (v2.usable && rec_sub)
		v2.GetTimestamp(rec_sub, &t);
	else
		real.GetTimestamp(&t);
	return t;
}

/* ---- the recorder's own calls ---- */

/* A kind on for real (the recorder's subscriber under several subscribers). */
static CUptiResult real_enable(CUpti_ActivityKind k)
{
	return v2.usable ? v2.Enable(rec_sub, k, NULL) : real.Enable(k);
}

static CUptiResult real_disable(CUpti_ActivityKind k)
{
	return v2.usable ? v2.Disable(rec_sub, k, NULL) : real.Disable(k);
}

static CUptiResult CUPTIAPI own_enable(CUpti_ActivityKind k)
{
	CUptiResult rc;

	if ((unsigned)k < NKINDS && atomic_load(&aside)) {
		own_kind[k] = 1;   /* turned on when the guest lets go */
		return CUPTI_SUCCESS;
	}
	rc = real_enable(k);
	if (rc == CUPTI_SUCCESS && (unsigned)k < NKINDS)
		own_kind[k] = 1;
	return rc;
}

static CUptiResult CUPTIAPI own_disable(CUpti_ActivityKind k)
{
	if ((unsigned)k < NKINDS) {
		own_kind[k] = 0;
		if ((!v2.usable && g.on[k]) || atomic_load(&aside))
			return CUPTI_SUCCESS; /* the guest still has it on, or has CUPTI */
	}
	return real_disable(k);
}

static CUptiResult CUPTIAPI own_rt_api(CUpti_CallbackId cbid, uint8_t en)
{
	if (cbid < NCBID)
		own_rt[cbid] = en;
	if (!en && g.on[CUPTI_ACTIVITY_KIND_RUNTIME])
		return CUPTI_SUCCESS;
	return real.EnableRuntimeApi(cbid, en);
}

static CUptiResult CUPTIAPI own_drv_api(CUpti_CallbackId cbid, uint8_t en)
{
	if (cbid < NCBID)
		own_drv[cbid] = en;
	if (!en && g.on[CUPTI_ACTIVITY_KIND_DRIVER])
		return CUPTI_SUCCESS;
	return real.EnableDriverApi(cbid, en);
}

static CUptiResult CUPTIAPI own_callback(uint32_t en, CUpti_SubscriberHandle sub,
					 CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	if ((unsigned)d < NDOMS && cbid < NCBID) {
		own_cb[d][cbid] = (uint8_t)en;
		if (!en && (g.dom[d] || g.cbw[d][cbid]))
			return CUPTI_SUCCESS;
	}
	return real.EnableCallback(en, sub, d, cbid);
}

static CUptiResult CUPTIAPI own_domain(uint32_t en, CUpti_SubscriberHandle sub,
				       CUpti_CallbackDomain d)
{
	if ((unsigned)d < NDOMS) {
		own_dom[d] = (uint8_t)en;
		if (!en && g.dom[d])
			return CUPTI_SUCCESS;
	}
	return real.EnableDomain(en, sub, d);
}

/* Under several subscribers: the recorder's buffer functions behind CUPTI's v2 ones. */
static void CUPTIAPI rec_req_v2(uint8_t **buf, size_t *size, size_t *max, void *info)
{
	(void)info;
	rec_req(buf, size, max);
}

static void CUPTIAPI rec_done_v2(uint8_t *buf, size_t size, size_t valid, void *info)
{
	(void)info;
	rec_done(NULL, 0, buf, size, valid);
}

static CUptiResult CUPTIAPI own_register(CUpti_BuffersCallbackRequestFunc req,
					 CUpti_BuffersCallbackCompleteFunc done)
{
	rec_req = req;
	rec_done = done;
	if (v2.usable)
		return v2.RegisterCallbacks(rec_sub, rec_req_v2, rec_done_v2);
	return real.RegisterCallbacks(req, done);
}

static CUptiResult CUPTIAPI own_subscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb,
					  void *ud)
{
	struct v2_params p;
	CUptiResult rc;

	if (!v2.usable)
		return real.Subscribe(sub, cb, ud);
	memset(&p, 0, sizeof(p));
	p.struct_size = sizeof(p);
	p.name = "gpuprof";
	p.allow_multiple = 1;
	rc = v2.Subscribe(sub, cb, ud, &p);
	if (rc != CUPTI_SUCCESS) {
		/* Several subscribers refused (an older driver): one, as before. */
		gp_debug("CUPTI multi-subscriber mode refused (%s); one subscriber",
			 gp_cupti_error(rc));
		v2.usable = 0;
		return real.Subscribe(sub, cb, ud);
	}
	rec_sub = *sub;
	gp_debug("CUPTI multi-subscriber mode: the program's CUPTI user gets a subscriber of its own");
	return rc;
}

static CUptiResult CUPTIAPI own_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	if (v2.usable)
		return v2.GetNextRecord(rec_sub, buf, valid, rec);
	return real.GetNextRecord(buf, valid, rec);
}

static CUptiResult CUPTIAPI own_timestamp(uint64_t *t)
{
	if (v2.usable && rec_sub)
		return v2.GetTimestamp(rec_sub, t);
	return real.GetTimestamp(t);
}

void gp_guest_attach(void)
{
	real.resolved = 0;
	resolve();
	if (!real.resolved || !real.EnableCallback || !real.EnableDomain || !real.Disable ||
	    !real.EnableRuntimeApi || !real.EnableDriverApi || !real.RegisterCallbacks)
		return;
	resolve_v2();
	gp_cu.cuptiActivityEnable = own_enable;
	gp_cu.cuptiActivityDisable = own_disable;
	gp_cu.cuptiActivityEnableRuntimeApi = own_rt_api;
	gp_cu.cuptiActivityEnableDriverApi = own_drv_api;
	gp_cu.cuptiEnableCallback = own_callback;
	gp_cu.cuptiEnableDomain = own_domain;
	gp_cu.cuptiActivityRegisterCallbacks = own_register;
	if (v2.usable) {
		gp_cu.cuptiSubscribe = own_subscribe;
		gp_cu.cuptiActivityGetNextRecord = own_next;
		gp_cu.cuptiGetTimestamp = own_timestamp;
	}
}

/* ---- a guest that came first ---- */

static void prime(void);
static void calibrate(int first);

/* CUPTI's default clock, for taking CUPTI's clock back from an early guest. */
static uint64_t CUPTIAPI realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * guest_lock held, serving: take over what the guest set up straight with
 * CUPTI before the recorder held it.  Its kinds are on for real already;
 * its buffer functions had replaced the recorder's, which go back; a clock
 * it gave CUPTI is replaced by CUPTI's default (CLOCK_REALTIME, the trace
 * clock) and its copies are converted to it as for a guest served from
 * the start.
 */
static void adopt(void)
{
	if (!pt.any)
		return;
	if (pt.req && pt.done) {
		g.req = pt.req;
		g.done = pt.done;
		if (rec_req && rec_done && !v2.usable)
			real.RegisterCallbacks(rec_req, rec_done);
	}
	for (unsigned k = 0; k < NKINDS; k++)
		if (pt.on[k]) {
			g.on[k] = 1;
			g.on_ts[k] = 0;
			g.draining[k] = 0;
		}
	if (pt.ts) {
		/* CUPTI's clock back to its default, the guest's copies converted. */
		g.ts = pt.ts;
		if (real.RegisterTimestampCallback)
			real.RegisterTimestampCallback(realtime_ns);
	}
	gp_guest_seen = 1;
	memset(&pt, 0, sizeof(pt));
	gp_debug("the program's CUPTI user came first; it is served beside the trace from now on");
}

void gp_guest_start(CUpti_SubscriberHandle sub)
{
	int adopted;

	if (!real.resolved || gp_cu.cuptiActivityEnable != own_enable)
		return;
	rec_sub = sub;
	pthread_mutex_lock(&guest_lock);
	atomic_store_explicit(&serving, 1, memory_order_release);
	adopted = pt.any;
	adopt();
	pthread_mutex_unlock(&guest_lock);
	if (adopted) {
		pthread_mutex_lock(&copy_lock);
		if (g.ts)
			calibrate(1);
		prime();
		pthread_mutex_unlock(&copy_lock);
	}
}

/* Lock held (the CUDA source's drain): the gap marks of hand-overs. */
void gp_guest_drain(void)
{
	pthread_mutex_lock(&gap_lock);
	for (unsigned i = 0; i < ngapq; i++) {
		struct gp_rec_lost *r = gp_emit(GP_REC_LOST, sizeof(*r));

		if (!r)
			break;
		r->h.aux = gapq[i].what;
		r->cause = GP_LOST_HANDOVER;
		r->count = 0;
		r->time = gapq[i].t;
	}
	ngapq = 0;
	pthread_mutex_unlock(&gap_lock);
}

static void gap_mark_at(uint32_t what, uint64_t t)
{
	pthread_mutex_lock(&gap_lock);
	if (ngapq < GAP_MARKS) {
		gapq[ngapq].t = t;
		gapq[ngapq].what = what;
		ngapq++;
	} else if (what == GP_LOST_GAP_END && gapq[ngapq - 1].what == GP_LOST_GAP_START) {
		/* Full: the last gap is closed; more marks would be too many anyway. */
		gapq[ngapq - 1].t = t;
		gapq[ngapq - 1].what = GP_LOST_GAP_END;
	}
	pthread_mutex_unlock(&gap_lock);
}

static void gap_mark(uint32_t what)
{
	gap_mark_at(what, now());
}

void gp_guest_gap(uint64_t t0, uint64_t t1)
{
	gap_mark_at(GP_LOST_GAP_START, t0);
	gap_mark_at(GP_LOST_GAP_END, t1);
}

static int own_any(void)
{
	for (unsigned k = 0; k < NKINDS; k++)
		if (own_kind[k])
			return 1;
	return 0;
}

/* guest_lock held: the recorder's data so far, then its kinds off. */
static void step_aside(CUpti_ActivityKind k)
{
	real.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	atomic_store(&aside, 1);
	for (unsigned j = 0; j < NKINDS; j++)
		if (own_kind[j] && !g.on[j])
			real.Disable((CUpti_ActivityKind)j);
	(void)k;
}

static void reassert_api(CUpti_ActivityKind k);

/*
 * guest_lock held: what the gap produced delivered (and counted) first,
 * then the recorder's kinds on again and the gap closed.
 */
static void step_back(void)
{
	real.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	for (unsigned j = 0; j < NKINDS; j++)
		if (own_kind[j])
			real.Enable((CUpti_ActivityKind)j);
	reassert_api(CUPTI_ACTIVITY_KIND_RUNTIME);
	reassert_api(CUPTI_ACTIVITY_KIND_DRIVER);
	atomic_store(&aside, 0);
	if (aside_kind >= 0) {
		gap_mark(GP_LOST_GAP_END);
		gp_debug("the program's CUPTI profiler let go; gpuprof records again");
	}
	aside_kind = -1;
}

void gp_guest_stop(void)
{
	atomic_store(&serving, 0);
}

int gp_guest_multi(void)
{
	return v2.usable;
}

/* ---- what is whose ---- */

int gp_guest_own_record(const CUpti_Activity *rec)
{
	unsigned k = (unsigned)rec->kind;

	if (v2.usable)
		return 1;  /* CUPTI keeps the guest's records apart */
	if (atomic_load_explicit(&aside, memory_order_relaxed) && k < NKINDS &&
	    (g.on[k] || g.draining[k])) {
		/* Stepped aside: what the recorder would have kept went to the guest only. */
		if (own_kind[k] || (k == CUPTI_ACTIVITY_KIND_KERNEL &&
				    own_kind[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]))
			gp_lost_add(GP_LOST_HANDOVER, 1);
		return 0;
	}
	if (!gp_guest_seen)
		return 1;
	if (k < NKINDS && own_kind[k])
		return 1;
	if (k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER) {
		uint32_t cbid = ((const CUpti_ActivityAPI *)rec)->cbid;

		return cbid < NCBID && (k == CUPTI_ACTIVITY_KIND_RUNTIME ? own_rt : own_drv)[cbid];
	}
	return 0;
}

int gp_guest_dispatch(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *data)
{
	int known = (unsigned)d < NDOMS && cbid < NCBID;

	if (!gp_guest_seen || v2.usable)
		return 1;
	if (on() && g.cb && known && (g.dom[d] || g.cbw[d][cbid]))
		g.cb(g.ud, d, cbid, data);
	return !known || own_dom[d] || own_cb[d][cbid];
}

/* ---- copies for the guest ---- */

static uint64_t start_of(const CUpti_Activity *r, size_t size)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return size >= sizeof(uint64_t) + offsetof(CUpti_ActivityKernel10, start)
			? ((const CUpti_ActivityKernel10 *)r)->start : 0;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return ((const CUpti_ActivityMemcpy6 *)r)->start;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return ((const CUpti_ActivityMemcpyPtoP4 *)r)->start;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return ((const CUpti_ActivityMemset4 *)r)->start;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
		return ((const CUpti_ActivityAPI *)r)->start;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return ((const CUpti_ActivityOverhead3 *)r)->start;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return ((const CUpti_ActivitySynchronization2 *)r)->start;
	default:
		return 0;
	}
}

static int wanted(const CUpti_Activity *r, size_t size)
{
	unsigned k = (unsigned)r->kind;
	uint64_t t;

	atomic_fetch_add_explicit(&n_seen, 1, memory_order_relaxed);
	if (k >= NKINDS || (!g.on[k] && !g.draining[k])) {
		atomic_fetch_add_explicit(&n_off, 1, memory_order_relaxed);
		return 0;
	}
	if (k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER) {
		uint32_t cbid = ((const CUpti_ActivityAPI *)r)->cbid;

		if (cbid < NCBID && (k == CUPTI_ACTIVITY_KIND_RUNTIME ? g.rt_off : g.drv_off)[cbid]) {
			atomic_fetch_add_explicit(&n_filtered, 1, memory_order_relaxed);
			return 0;
		}
	}
	t = start_of(r, size);
	if (t && t < g.on_ts[k]) {
		atomic_fetch_add_explicit(&n_early, 1, memory_order_relaxed);
		return 0;
	}
	if (t && !g.on[k] && t > g.off_ts[k]) {
		atomic_fetch_add_explicit(&n_late, 1, memory_order_relaxed);
		return 0;
	}
	return 1;
}

static uint64_t to_guest(uint64_t t)
{
	double d = ((double)t - (double)g.o0) * g.ratio;

	return (uint64_t)((double)g.g0 + d);
}

static void fix(uint8_t *r, size_t size, size_t off)
{
	uint64_t t;

	if (size < off + sizeof(t))
		return;
	memcpy(&t, r + off, sizeof(t));
	if (t && t != (uint64_t)CUPTI_TIMESTAMP_UNKNOWN) {
		t = to_guest(t);
		memcpy(r + off, &t, sizeof(t));
	}
}

/* The copy's times on the guest's clock (it registered one). */
static void fix_times(uint8_t *r, size_t size)
{
	if (!g.ts || g.ratio <= 0)
		return;
	switch (((CUpti_Activity *)r)->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		fix(r, size, offsetof(CUpti_ActivityKernel10, start));
		fix(r, size, offsetof(CUpti_ActivityKernel10, end));
		fix(r, size, offsetof(CUpti_ActivityKernel10, completed));
		fix(r, size, offsetof(CUpti_ActivityKernel10, queued));
		fix(r, size, offsetof(CUpti_ActivityKernel10, submitted));
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		fix(r, size, offsetof(CUpti_ActivityMemcpy6, start));
		fix(r, size, offsetof(CUpti_ActivityMemcpy6, end));
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		fix(r, size, offsetof(CUpti_ActivityMemcpyPtoP4, start));
		fix(r, size, offsetof(CUpti_ActivityMemcpyPtoP4, end));
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		fix(r, size, offsetof(CUpti_ActivityMemset4, start));
		fix(r, size, offsetof(CUpti_ActivityMemset4, end));
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
		fix(r, size, offsetof(CUpti_ActivityAPI, start));
		fix(r, size, offsetof(CUpti_ActivityAPI, end));
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		fix(r, size, offsetof(CUpti_ActivityOverhead3, start));
		fix(r, size, offsetof(CUpti_ActivityOverhead3, end));
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		fix(r, size, offsetof(CUpti_ActivitySynchronization2, start));
		fix(r, size, offsetof(CUpti_ActivitySynchronization2, end));
		break;
	default:
		break;
	}
}

/*
 * copy_lock held: hands the buffer being filled to the guest; an empty one
 * too when forced (as CUPTI does at a forced flush).
 */
static void deliver_if(int forced)
{
	uint8_t *b = g.buf;

	if (!b || (!g.used && !forced) || !g.done)
		return;
	delivered[ndelivered++ % DELIVERED].p = b;
	atomic_fetch_add_explicit(&n_buffers, 1, memory_order_relaxed);
	atomic_store(&last_delivered, b);
	g.buf = NULL;
	g.done(NULL, 0, b, g.size, g.used);
}

static void deliver(void)
{
	deliver_if(0);
}

/*
 * copy_lock held: a buffer from the guest before any record is due, as
 * CUPTI asks for one when tracing starts.  Kineto flushes only when it has
 * handed out a buffer.
 */
static void prime(void)
{
	size_t max = 0;

	if (g.buf || !g.req)
		return;
	g.size = g.used = 0;
	g.req(&g.buf, &g.size, &max);
	if (!g.buf || g.size < 64)
		g.buf = NULL;
}

/* copy_lock held: room for need bytes, or 0 (the guest gave no buffer). */
static int room(size_t need)
{
	size_t max = 0;

	if (g.buf && g.used + need <= g.size)
		return 1;
	deliver();
	g.buf = NULL;
	g.size = g.used = 0;
	if (!g.req)
		return 0;
	g.req(&g.buf, &g.size, &max);
	if (!g.buf || g.size < need) {
		g.buf = NULL;
		return 0;
	}
	return 1;
}

static void put(const CUpti_Activity *r, size_t size)
{
	size_t body = (size + 7u) & ~(size_t)7u, need = sizeof(struct rec_hdr) + body;
	struct rec_hdr h = { REC_MAGIC, (uint32_t)body };

	if (!wanted(r, size))
		return;
	if (!room(need)) {
		atomic_fetch_add(&g.dropped, 1);
		return;
	}
	memcpy(g.buf + g.used, &h, sizeof(h));
	memset(g.buf + g.used + sizeof(h), 0, body);
	memcpy(g.buf + g.used + sizeof(h), r, size);
	fix_times(g.buf + g.used + sizeof(h), size);
	g.used += need;
	atomic_fetch_add_explicit(&n_copied, 1, memory_order_relaxed);
}

void gp_guest_copy(uint8_t *buf, size_t valid)
{
	CUpti_Activity *rec = NULL, *prev = NULL;

	if (!on() || !gp_guest_seen || !g.done || v2.usable)
		return;
	pthread_mutex_lock(&copy_lock);
	/* A record's size is the distance to the next one (CUPTI's own layout). */
	while (real.GetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		if (prev)
			put(prev, (size_t)((uint8_t *)rec - (uint8_t *)prev));
		prev = rec;
	}
	if (prev && (uint8_t *)prev < buf + valid)
		put(prev, (size_t)(buf + valid - (uint8_t *)prev));
	pthread_mutex_unlock(&copy_lock);
}

/* ---- the guest's entry points ---- */

/* ---- under several subscribers: the guest's own subscriber ---- */

static void CUPTIAPI guest_req_v2(uint8_t **buf, size_t *size, size_t *max, void *info)
{
	(void)info;
	if (g.req)
		g.req(buf, size, max);
	else
		*buf = NULL;
}

/* The guest's records on its own clock (it registered one), then its buffer back. */
static void CUPTIAPI guest_done_v2(uint8_t *buf, size_t size, size_t valid, void *info)
{
	CUpti_Activity *rec = NULL, *prev = NULL;

	(void)info;
	if (g.ts && g.ratio > 0 && v2.gsub) {
		while (v2.GetNextRecord(v2.gsub, buf, valid, &rec) == CUPTI_SUCCESS) {
			if (prev)
				fix_times((uint8_t *)prev, (size_t)((uint8_t *)rec - (uint8_t *)prev));
			prev = rec;
		}
		if (prev && (uint8_t *)prev < buf + valid)
			fix_times((uint8_t *)prev, (size_t)(buf + valid - (uint8_t *)prev));
	}
	if (g.done)
		g.done(NULL, 0, buf, size, valid);
}

/* guest_lock held: the guest's subscriber, made when it first needs one. */
static CUptiResult guest_sub(CUpti_CallbackFunc cb, void *ud)
{
	struct v2_params p;

	if (v2.gsub)
		return CUPTI_SUCCESS;
	memset(&p, 0, sizeof(p));
	p.struct_size = sizeof(p);
	p.name = "gpuprof guest";
	p.allow_multiple = 1;
	return v2.Subscribe(&v2.gsub, cb, ud, &p);
}

/* ---- the guest's entry points ---- */

/*
 * 1 when CUDA_INJECTION64_PATH names this library: cuInit then starts the
 * recorder.  The configuration reads it (after the library's constructor
 * claimed it), as every variable.
 */
static int injection_ours(void)
{
	const char *cur = gp_config_get()->cuda_injection;
	char self[PATH_MAX], named[PATH_MAX];
	Dl_info info;

	return cur && *cur && dladdr((void *)injection_ours, &info) && info.dli_fname &&
	       realpath(info.dli_fname, self) && realpath(cur, named) && !strcmp(self, named);
}

/* Initializes CUDA, so that the driver starts the recorder (InitializeInjection). */
static void cuda_init_once(void)
{
	typedef int (*cu_init_fn)(unsigned int);
	void *cuda;
	cu_init_fn cu_init;

	if (atomic_load(&gp_rec.disabled) || !injection_ours())
		return;
	cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	cu_init = cuda ? (cu_init_fn)dlsym(cuda, "cuInit") : NULL;
	if (cu_init && cu_init(0) == 0 && on())
		gp_debug("the program subscribed to CUPTI before CUDA was initialized; CUDA initialized first, so that the recorder serves it");
}

GP_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb,
					      void *ud)
{
	static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
	CUptiResult rc = CUPTI_SUCCESS;

	if (!on())
		pthread_once(&cuda_once, cuda_init_once);
	if (!on())
		PASS(Subscribe, sub, cb, ud);
	if (!sub)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&guest_lock);
	if (v2.usable) {
		/* A real subscriber of its own: its callbacks are CUPTI's business. */
		if (v2.gsub) {
			rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
		} else {
			rc = guest_sub(cb, ud);
			if (rc == CUPTI_SUCCESS)
				*sub = v2.gsub;
		}
	} else if (g.subscribed) {
		rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		g.subscribed = 1;
		g.cb = cb;
		g.ud = ud;
		*sub = (CUpti_SubscriberHandle)&g;
		gp_guest_seen = 1;
	}
	pthread_mutex_unlock(&guest_lock);
	if (rc == CUPTI_SUCCESS)
		gp_debug("the program subscribed to CUPTI; it is served beside the trace");
	return rc;
}

static void forget_callbacks(void)
{
	g.subscribed = 0;
	g.cb = NULL;
	memset(g.dom, 0, sizeof(g.dom));
	memset(g.cbw, 0, sizeof(g.cbw));
}

/* guest_lock held: the guest let go of CUPTI. */
static void guest_gone(void)
{
	forget_callbacks();
	if (atomic_load(&aside))
		step_back();
}

GP_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	CUptiResult rc = CUPTI_SUCCESS;

	if (on() && v2.usable && sub && sub == v2.gsub) {
		pthread_mutex_lock(&guest_lock);
		rc = real.Unsubscribe(sub);
		v2.gsub = NULL;
		pthread_mutex_unlock(&guest_lock);
		return rc;
	}
	if (!on() || sub != (CUpti_SubscriberHandle)&g)
		PASS(Unsubscribe, sub);
	pthread_mutex_lock(&guest_lock);
	guest_gone();
	pthread_mutex_unlock(&guest_lock);
	return CUPTI_SUCCESS;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	CUptiResult rc = CUPTI_SUCCESS;

	if (!on())
		PASS(Finalize);
	pthread_mutex_lock(&guest_lock);
	if (v2.usable && v2.gsub) {
		/* Finalize does nothing while several subscribers live: unsubscribe. */
		rc = real.Unsubscribe(v2.gsub);
		v2.gsub = NULL;
	}
	guest_gone();
	pthread_mutex_unlock(&guest_lock);
	return rc;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle sub,
						   CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	CUptiResult rc = CUPTI_SUCCESS;

	if (!on() || sub != (CUpti_SubscriberHandle)&g)
		PASS(EnableCallback, en, sub, d, cbid);
	if ((unsigned)d >= NDOMS || cbid >= NCBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&guest_lock);
	g.cbw[d][cbid] = en ? 1 : 0;
	if (en && !own_cb[d][cbid] && !own_dom[d])
		rc = real.EnableCallback(1, rec_sub, d, cbid);
	pthread_mutex_unlock(&guest_lock);
	return rc;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t en, CUpti_SubscriberHandle sub,
						 CUpti_CallbackDomain d)
{
	CUptiResult rc = CUPTI_SUCCESS;

	if (!on() || sub != (CUpti_SubscriberHandle)&g)
		PASS(EnableDomain, en, sub, d);
	if ((unsigned)d >= NDOMS)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&guest_lock);
	g.dom[d] = en ? 1 : 0;
	if (en && !own_dom[d])
		rc = real.EnableDomain(1, rec_sub, d);
	pthread_mutex_unlock(&guest_lock);
	return rc;
}

/*
 * Before the recorder holds CUPTI: the call goes to CUPTI and is noted;
 * if the recorder took CUPTI meanwhile (CUPTI's first call can run
 * cuInit, and so the recorder's start), it adopts the guest at once.
 */
static void noted(void)
{
	if (!on())
		return;
	pthread_mutex_lock(&guest_lock);
	adopt();
	pthread_mutex_unlock(&guest_lock);
	pthread_mutex_lock(&copy_lock);
	prime();
	pthread_mutex_unlock(&copy_lock);
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							      CUpti_BuffersCallbackCompleteFunc done)
{
	CUptiResult rc = CUPTI_SUCCESS;

	if (!on()) {
		resolve();
		if (!real.RegisterCallbacks)
			return CUPTI_ERROR_NOT_INITIALIZED;
		pthread_mutex_lock(&guest_lock);
		pt.req = req;
		pt.done = done;
		pt.any = 1;
		pthread_mutex_unlock(&guest_lock);
		rc = real.RegisterCallbacks(req, done);
		if (rc == CUPTI_SUCCESS && on()) {
			pthread_mutex_lock(&guest_lock);
			pt.req = req;
			pt.done = done;
			pt.any = 1;
			pthread_mutex_unlock(&guest_lock);
			noted();
		}
		return rc;
	}
	pthread_mutex_lock(&guest_lock);
	g.req = req;
	g.done = done;
	gp_guest_seen = 1;
	if (v2.usable) {
		rc = guest_sub(NULL, NULL);
		if (rc == CUPTI_SUCCESS)
			rc = v2.RegisterCallbacks(v2.gsub, guest_req_v2, guest_done_v2);
	}
	pthread_mutex_unlock(&guest_lock);
	return rc;
}

/* Pairs of clock reads: the first, and now; guest ticks per ns between them. */
static void calibrate(int first)
{
	uint64_t o, gt;

	if (!g.ts)
		return;
	o = now();
	gt = g.ts();
	if (first || !g.o0) {
		struct timespec ts = { 0, 2000000 };
		uint64_t o1, g1;

		g.o0 = o;
		g.g0 = gt;
		nanosleep(&ts, NULL);
		o1 = now();
		g1 = g.ts();
		g.ratio = o1 > o ? (double)(g1 - gt) / (double)(o1 - o) : 1.0;
		return;
	}
	if (o > g.o0 + 100000000ull && gt > g.g0)
		g.ratio = (double)(gt - g.g0) / (double)(o - g.o0);
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	if (!on()) {
		CUptiResult rc;

		resolve();
		if (!real.RegisterTimestampCallback)
			return CUPTI_ERROR_NOT_INITIALIZED;
		pthread_mutex_lock(&guest_lock);
		pt.ts = fn;
		pt.any = 1;
		pthread_mutex_unlock(&guest_lock);
		rc = real.RegisterTimestampCallback(fn);
		noted();
		return rc;
	}
	pthread_mutex_lock(&copy_lock);
	g.ts = fn;
	calibrate(1);
	gp_debug("guest clock: %.6f ticks per ns", g.ratio);
	pthread_mutex_unlock(&copy_lock);
	return CUPTI_SUCCESS;
}

/* Errors that say the kind cannot be had, whoever asks. */
static int plain_refusal(CUptiResult rc)
{
	return rc == CUPTI_ERROR_INVALID_KIND || rc == CUPTI_ERROR_NOT_INITIALIZED ||
	       rc == CUPTI_ERROR_INVALID_PARAMETER || rc == CUPTI_ERROR_NOT_SUPPORTED;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind k)
{
	CUptiResult rc = CUPTI_SUCCESS;

	if (!on()) {
		resolve();
		if (!real.Enable)
			return CUPTI_ERROR_NOT_INITIALIZED;
		rc = real.Enable(k);
		if (rc == CUPTI_SUCCESS && (unsigned)k < NKINDS) {
			pthread_mutex_lock(&guest_lock);
			pt.on[k] = 1;
			pt.any = 1;
			pthread_mutex_unlock(&guest_lock);
			noted();
		}
		return rc;
	}
	if ((unsigned)k >= NKINDS)
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&guest_lock);
	gp_guest_seen = 1;
	if (v2.usable) {
		rc = guest_sub(NULL, NULL);
		if (rc == CUPTI_SUCCESS)
			rc = v2.Enable(v2.gsub, k, NULL);
		if (rc == CUPTI_SUCCESS)
			g.on[k] = 1;
		pthread_mutex_unlock(&guest_lock);
		return rc;
	}
	if (!own_kind[k] || atomic_load(&aside))
		rc = real.Enable(k);
	if (rc != CUPTI_SUCCESS && !plain_refusal(rc) && !atomic_load(&aside) && own_any()) {
		/* CUPTI will not have it beside the recorder's kinds: hand over. */
		CUptiResult first = rc;

		step_aside(k);
		rc = real.Enable(k);
		if (rc == CUPTI_SUCCESS) {
			aside_kind = (int)k;
			gap_mark(GP_LOST_GAP_START);
			gp_log("the program's CUPTI profiler enabled activity kind %d, which CUPTI "
			       "cannot record beside gpuprof's; gpuprof steps aside until it turns "
			       "it off (a gap in the trace)", (int)k);
		} else {
			step_back();   /* not even alone: the recorder keeps CUPTI */
			rc = first;
		}
	}
	gp_debug("guest enables activity kind %d (%s)", (int)k, gp_cupti_error(rc));
	if (rc == CUPTI_SUCCESS) {
		g.on_ts[k] = now();
		g.draining[k] = 0;
		g.on[k] = 1;
	}
	pthread_mutex_unlock(&guest_lock);
	if (rc == CUPTI_SUCCESS) {
		pthread_mutex_lock(&copy_lock);
		prime();
		pthread_mutex_unlock(&copy_lock);
	}
	return rc;
}

/* guest_lock held: the recorder's per-call API selection again. */
static void reassert_api(CUpti_ActivityKind k)
{
	uint8_t *own = k == CUPTI_ACTIVITY_KIND_RUNTIME ? own_rt : own_drv;

	for (CUpti_CallbackId c = 0; c < NCBID; c++)
		if (own[c])
			(k == CUPTI_ACTIVITY_KIND_RUNTIME ? real.EnableRuntimeApi
							  : real.EnableDriverApi)(c, 1);
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind k)
{
	CUptiResult rc = CUPTI_SUCCESS;

	if (!on()) {
		resolve();
		if (!real.Disable)
			return CUPTI_ERROR_NOT_INITIALIZED;
		if ((unsigned)k < NKINDS) {
			pthread_mutex_lock(&guest_lock);
			pt.on[k] = 0;
			pthread_mutex_unlock(&guest_lock);
		}
		return real.Disable(k);
	}
	if ((unsigned)k >= NKINDS)
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&guest_lock);
	if (v2.usable) {
		g.on[k] = 0;
		rc = v2.gsub ? v2.Disable(v2.gsub, k, NULL) : CUPTI_SUCCESS;
		pthread_mutex_unlock(&guest_lock);
		return rc;
	}
	if (g.on[k]) {
		g.off_ts[k] = now();
		g.on[k] = 0;
		g.draining[k] = 1;
	}
	if (!own_kind[k] || atomic_load(&aside)) {
		rc = real.Disable(k);
		if (!atomic_load(&aside) &&
		    (k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER))
			reassert_api(k);
	}
	/* The kind CUPTI would not share is off: the recorder takes its kinds back. */
	if (atomic_load(&aside) && (int)k == aside_kind)
		step_back();
	pthread_mutex_unlock(&guest_lock);
	return rc;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t en)
{
	if (!on())
		PASS(EnableRuntimeApi, cbid, en);
	if (cbid < NCBID)
		g.rt_off[cbid] = !en;
	return en ? real.EnableRuntimeApi(cbid, 1) : CUPTI_SUCCESS;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t en)
{
	if (!on())
		PASS(EnableDriverApi, cbid, en);
	if (cbid < NCBID)
		g.drv_off[cbid] = !en;
	return en ? real.EnableDriverApi(cbid, 1) : CUPTI_SUCCESS;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t *size,
							 void *value)
{
	if (!on())
		PASS(SetAttribute, a, size, value);
	/* Process-wide buffer settings are the recorder's. */
	return CUPTI_SUCCESS;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	CUptiResult rc;

	if (!on())
		PASS(FlushAll, flag);
	/* The recorder's buffers come back on this thread, copies included. */
	rc = real.FlushAll(flag);
	if (v2.usable)
		return rc;
	pthread_mutex_lock(&copy_lock);
	calibrate(0);
	deliver_if(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_unlock(&copy_lock);
	gp_debug("guest flush(%u): %llu records seen, %llu copied, %llu off, %llu before on, "
		 "%llu after off, %llu filtered, %llu buffers, %llu walked, ratio %.6f",
		 flag, (unsigned long long)n_seen, (unsigned long long)n_copied,
		 (unsigned long long)n_off, (unsigned long long)n_early, (unsigned long long)n_late,
		 (unsigned long long)n_filtered, (unsigned long long)n_buffers,
		 (unsigned long long)n_walked, g.ratio);
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) {
		pthread_mutex_lock(&guest_lock);
		memset(g.draining, 0, sizeof(g.draining));
		pthread_mutex_unlock(&guest_lock);
	}
	return rc;
}

static int is_delivered(const uint8_t *b)
{
	if (atomic_load(&last_delivered) == b)
		return 1;
	for (unsigned i = 0; i < DELIVERED; i++)
		if (delivered[i].p == b)
			return 1;
	return 0;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
							  CUpti_Activity **rec)
{
	struct rec_hdr h;
	uint8_t *p;

	if (on() && v2.usable && v2.gsub)
		return v2.GetNextRecord(v2.gsub, buf, valid, rec);
	if (!buf || !rec || !is_delivered(buf))
		PASS(GetNextRecord, buf, valid, rec);
	if (*rec) {
		memcpy(&h, (uint8_t *)*rec - sizeof(h), sizeof(h));
		p = (uint8_t *)*rec + h.size;
	} else {
		p = buf;
	}
	if (p < buf || (size_t)(p - buf) + sizeof(h) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	memcpy(&h, p, sizeof(h));
	if (h.magic != REC_MAGIC || (size_t)(p - buf) + sizeof(h) + h.size > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(p + sizeof(h));
	atomic_fetch_add_explicit(&n_walked, 1, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

GP_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
								 size_t *dropped)
{
	if (!on() || v2.usable)
		PASS(GetNumDroppedRecords, ctx, stream, dropped);
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*dropped = (size_t)atomic_exchange(&g.dropped, 0);
	return CUPTI_SUCCESS;
}
