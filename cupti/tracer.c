/*
 * The CUDA record source (see preload/source.h): CUPTI subscription,
 * activity buffers, translation of CUPTI records into trace records, and the
 * callbacks behind capture ranges, call stacks and NVTX.
 *
 * Threads and contracts:
 *  - buffer_request: any application thread that launches work.  Pops a
 *    pre-zeroed buffer from the pool under a short mutex (or maps a new one
 *    up to the cap); no I/O.
 *  - buffer_complete: CUPTI's worker thread, or a thread inside
 *    cuptiActivityFlushAll.  Translates records into the chunk ring under
 *    the producer lock; never compresses, writes or calls CUDA.
 *  - on_callback: application threads (resource/state/reset callbacks;
 *    launch paths are not intercepted here, except while a window's edge
 *    is watched, for milliseconds: guard_callback, atomics only).
 *  - source hooks (preload/source.h): attach and enable on the thread
 *    inside cuInit; set_tracing there or on the flusher (windows opened
 *    from outside); flush (cuptiActivityFlushAll) and drain on the
 *    recorder's flusher thread or exit path.
 *
 * A dormant recorder loads nothing of CUPTI: the first window attaches
 * (subscribes after cuInit) and asks CUPTI for the devices and contexts
 * that exist already.  Between windows only the device and context
 * activity kinds and the resource, state and reset callbacks stay on:
 * nothing runs on the program's launch paths.  Device and context records
 * are kept (saved[] below) and written again at the start of every file,
 * since CUPTI reports them once.
 *
 * Between windows CUPTI is let go of (detach.c): once a window's records
 * are handed over and the recorder is dormant again (source.h, idle), the
 * next API exit finalizes CUPTI, and the next window attaches again as the
 * first did, keeping the devices and contexts known.  Not with a guest
 * CUPTI user, hardware metrics, the GPU over time, CUPTI 13.3's several
 * subscribers, or GPUPROF_DETACH=0: CUPTI then stays attached.  While it
 * is let go of (gp_detach_cupti_ok false) nothing here calls CUPTI.
 *
 * Window edges (source.h, window; the rule and its limits in edges.h): from
 * OPENING until OPEN, and from CLOSING until tracing is off, the runtime
 * and driver calls that launch, copy or set are watched through callbacks
 * (guard_callback, program threads: atomics only); records of work begun
 * outside every window are left out when translated, and the close waits
 * (boundedly) for calls begun before the end.  Between edges nothing is
 * watched.  Not with --metrics (its callbacks share these calls).
 */
#include "capture.h"
#include "cupti_api.h"
#include "detach.h"
#include "edges.h"
#include "gpusample.h"
#include "metrics.h"
#include "guest.h"
#include "nvtx_tool.h"
#include "unwind.h"

#include "../preload/lifecycle.h"
#include "../preload/log.h"
#include "../preload/recorder.h"
#include "../preload/source.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define GP_MAX_BUFFERS 64

static CUpti_SubscriberHandle subscriber;
static int subscribed;
/*
 * CUPTI loaded, subscribed, buffers registered.  A dormant recorder does
 * that only at its first window: until then every hook below leaves CUPTI
 * alone.
 */
static atomic_int cupti_on;
/*
 * Another subscriber held CUPTI at cuInit: the flusher tries again at each
 * flush (cuda_flush) and the recorder traces from when it lets go.
 */
static atomic_int cupti_wait;
static uint64_t wait_since;                /* trace clock */
static CUptiResult subscribe_rc;

/* CUPTI buffer pool: pre-zeroed buffers (ZEROED_OUT_ACTIVITY_BUFFER). */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool[GP_MAX_BUFFERS];
static int pool_count, pool_allocated;
/*
 * Buffers CUPTI holds (requested, not yet completed), so that those it
 * still held when it was finalized go back to the pool (reattach).
 */
static uint8_t *lent[GP_MAX_BUFFERS];
static size_t buffer_size;

/* API name ids by (domain, cbid); producer lock. */
#define GP_CBID_MAX 1024
static uint32_t api_name_id[3][GP_CBID_MAX];

/*
 * Kernel-name cache by CUPTI's name pointer, which is stable while the
 * kernel's module is loaded.  Once a module is unloaded its pointers may be
 * reused for other names: the unload callback bumps name_gen, and entries
 * of an older generation are looked up by content again.  Producer lock.
 */
#define GP_NAME_CACHE 1024
static struct {
	const char *ptr;
	uint32_t id;
	uint32_t gen;
} name_cache[GP_NAME_CACHE];
static atomic_uint name_gen;

typedef CUresult (*cu_sync_fn)(void);
static cu_sync_fn cu_ctx_synchronize;

static int capture_configured;
static int metrics_on;
static int attached_once; /* attach_cupti's first setup done (flusher) */
static int exit_hook;     /* detach_at_exit registered (flusher) */
/* How long a window waits for a finalize under way on a program thread. */
#define DETACH_WAIT_NS 2000000000ull
static pthread_mutex_t enable_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The API calls traced by default (set_api_subset): selected[d][cbid].
 * Written once, before the first API kind is enabled; read by put_api.
 */
static uint8_t api_sel_rt[CUPTI_RUNTIME_TRACE_CBID_SIZE], api_sel_drv[CUPTI_DRIVER_TRACE_CBID_SIZE];
static int api_sel_ready;
/*
 * The selection is turned on after cuInit from now on (a window: capture
 * range, gpuprof start, CUPTI let go by another tool): see set_api_subset.
 * enable_lock.
 */
static int api_late;
static int api_kinds_on;               /* the whole API kinds are on (late) */

/* Window edges (edges.h); the runtime and driver calls watched at them. */
#define GUARD_WAIT_NS 50000000ull /* the close's wait for calls begun before the end */
static struct gp_edges edges;
#define GUARD_CBIDS 2048
_Static_assert((int)CUPTI_DRIVER_TRACE_CBID_SIZE <= GUARD_CBIDS &&
		       (int)CUPTI_RUNTIME_TRACE_CBID_SIZE <= GUARD_CBIDS,
	       "callback ids of both domains fit guard_cbid");
static uint8_t guard_cbid[2][GUARD_CBIDS]; /* [0] runtime, [1] driver */
static int guard_ncbid = -1;
static atomic_int tracing_cbs; /* tracing's callbacks are on */

/* Devices and contexts as CUPTI reported them; producer lock. */
#define GP_SAVED_DEVICES 64
#define GP_SAVED_CONTEXTS 256
static struct {
	struct gp_rec_device rec;  /* name: 0, see name[] */
	char name[256];
} saved_dev[GP_SAVED_DEVICES];
static struct gp_rec_context saved_ctx[GP_SAVED_CONTEXTS];
static unsigned nsaved_dev, nsaved_ctx;

static void CUPTIAPI buffer_request(uint8_t **buf, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;

	pthread_mutex_lock(&pool_lock);
	if (pool_count)
		b = pool[--pool_count];
	else if (pool_allocated < GP_MAX_BUFFERS)
		pool_allocated++;
	else
		b = MAP_FAILED; /* cap reached */
	pthread_mutex_unlock(&pool_lock);
	if (!b) {
		/* Fresh anonymous pages are zero, as CUPTI was told to expect. */
		b = mmap(NULL, buffer_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED) {
			pthread_mutex_lock(&pool_lock);
			pool_allocated--;
			pthread_mutex_unlock(&pool_lock);
		}
	}
	if (b != MAP_FAILED) {
		pthread_mutex_lock(&pool_lock);
		for (int i = 0; i < GP_MAX_BUFFERS; i++)
			if (!lent[i]) {
				lent[i] = b;
				break;
			}
		pthread_mutex_unlock(&pool_lock);
	}
	if (b == MAP_FAILED) {
		/* CUPTI counts what it then drops; we note that it happened. */
		gp_lost_add(GP_LOST_NO_BUFFER, 1);
		*buf = NULL;
		*size = 0;
	} else {
		*buf = b;
		*size = buffer_size;
	}
	*max_records = 0;
}

static void buffer_recycle(uint8_t *b, size_t valid)
{
	memset(b, 0, valid);
	pthread_mutex_lock(&pool_lock);
	for (int i = 0; i < GP_MAX_BUFFERS; i++)
		if (lent[i] == b) {
			lent[i] = NULL;
			break;
		}
	pool[pool_count++] = b;
	pthread_mutex_unlock(&pool_lock);
}

/* Flusher, CUPTI finalized: the buffers it still held are the pool's again. */
static void buffers_back(void)
{
	pthread_mutex_lock(&pool_lock);
	for (int i = 0; i < GP_MAX_BUFFERS; i++)
		if (lent[i]) {
			memset(lent[i], 0, buffer_size);
			pool[pool_count++] = lent[i];
			lent[i] = NULL;
		}
	pthread_mutex_unlock(&pool_lock);
}

static uint32_t kernel_name(const char *name)
{
	size_t slot = ((uintptr_t)name >> 4) % GP_NAME_CACHE;
	unsigned gen = atomic_load_explicit(&name_gen, memory_order_acquire);
	uint32_t id;

	if (!name)
		return gp_emit_string("<unknown>");
	if (name_cache[slot].ptr == name && name_cache[slot].gen == gen)
		return name_cache[slot].id;
	id = gp_emit_string(name);
	/* 0: the STRING record was dropped; try again at the next record. */
	if (!id)
		return 0;
	name_cache[slot].ptr = name;
	name_cache[slot].id = id;
	name_cache[slot].gen = gen;
	return id;
}

static uint32_t api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? GP_API_RUNTIME : GP_API_DRIVER;
	const char *name = NULL;
	uint32_t *slot = cbid < GP_CBID_MAX ? &api_name_id[d][cbid] : NULL;

	if (slot && *slot)
		return *slot;
	if (gp_cu.cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
		name = "<unknown API>";
	if (!slot)
		return gp_emit_string(name);
	/* Stays 0 when the STRING record was dropped: emitted again next time. */
	*slot = gp_emit_string(name);
	return *slot;
}

/* Counts and skips activities whose timestamps CUPTI could not collect; what: its kind (-v names it). */
static int timed(uint64_t start, uint64_t end, const char *what, uint32_t correlation)
{
	if (start && end && end >= start)
		return 1;
	gp_lost_add(GP_LOST_NO_TIMESTAMP, 1);
	gp_debug("%.80s (correlation %u) came without a time: left out", what, correlation);
	return 0;
}

static void fill_kernel(struct gp_rec_kernel *r, const CUpti_ActivityKernel10 *k, uint32_t name)
{
	r->start = k->start;
	r->end = k->end;
	r->correlation = k->correlationId;
	r->name = name;
	r->device = k->deviceId;
	r->context = k->contextId;
	r->stream = k->streamId;
	r->grid[0] = (uint32_t)k->gridX;
	r->grid[1] = (uint32_t)k->gridY;
	r->grid[2] = (uint32_t)k->gridZ;
	r->block[0] = (uint32_t)k->blockX;
	r->block[1] = (uint32_t)k->blockY;
	r->block[2] = (uint32_t)k->blockZ;
	r->cluster[0] = k->clusterX;
	r->cluster[1] = k->clusterY;
	r->cluster[2] = k->clusterZ;
	r->static_smem = (uint32_t)k->staticSharedMemory;
	r->dynamic_smem = (uint32_t)k->dynamicSharedMemory;
	r->local_mem = k->localMemoryPerThread;
	r->registers = k->registersPerThread;
	r->launch_type = k->launchType;
	r->flags = k->isDeviceLaunched ? GP_ACT_DEVICE_LAUNCHED : 0;
	r->graph_id = k->graphId;
	r->graph_node = k->graphNodeId;
}

static void put_kernel(const CUpti_ActivityKernel10 *k)
{
	struct gp_rec_kernel *r;
	uint32_t name;

	if (metrics_on && gp_metrics_own_kernel(k->name))
		return; /* the profiler's, between the launches of a session */
	if (metrics_on && gp_metrics_claims(k->correlationId)) {
		/* A profiled launch: metrics.c gives it its time (CUPTI has none). */
		struct gp_rec_kernel tmp = { 0 };

		fill_kernel(&tmp, k, kernel_name(k->name));
		gp_metrics_kernel(&tmp);
		return;
	}
	if (!timed(k->start, k->end, k->name ? k->name : "a kernel", k->correlationId))
		return;
	name = kernel_name(k->name);
	r = gp_emit(GP_REC_KERNEL, sizeof(*r));
	if (!r)
		return;
	fill_kernel(r, k, name);
	gp_ring_note_time(&gp_rec.ring, k->start, k->end);
}

static void put_memcpy(const CUpti_ActivityMemcpy6 *m)
{
	struct gp_rec_memcpy *r;

	if (!timed(m->start, m->end, "a memcpy", m->correlationId))
		return;
	r = gp_emit(GP_REC_MEMCPY, sizeof(*r));
	if (!r)
		return;
	r->start = m->start;
	r->end = m->end;
	r->bytes = m->bytes;
	r->correlation = m->correlationId;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->copy_kind = m->copyKind;
	r->src_kind = m->srcKind;
	r->dst_kind = m->dstKind;
	r->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? GP_ACT_ASYNC : 0;
	r->src_device = r->dst_device = m->deviceId;
	r->graph_id = m->graphId;
	r->graph_node = m->graphNodeId;
	gp_ring_note_time(&gp_rec.ring, m->start, m->end);
}

static void put_peer(const CUpti_ActivityMemcpyPtoP4 *m)
{
	struct gp_rec_memcpy *r;

	if (!timed(m->start, m->end, "a peer memcpy", m->correlationId))
		return;
	r = gp_emit(GP_REC_MEMCPY, sizeof(*r));
	if (!r)
		return;
	r->start = m->start;
	r->end = m->end;
	r->bytes = m->bytes;
	r->correlation = m->correlationId;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->copy_kind = GP_COPY_PTOP;
	r->src_kind = m->srcKind;
	r->dst_kind = m->dstKind;
	r->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? GP_ACT_ASYNC : 0;
	r->src_device = m->srcDeviceId;
	r->dst_device = m->dstDeviceId;
	r->graph_id = m->graphId;
	r->graph_node = m->graphNodeId;
	gp_ring_note_time(&gp_rec.ring, m->start, m->end);
}

static void put_memset(const CUpti_ActivityMemset4 *m)
{
	struct gp_rec_memset *r;

	if (!timed(m->start, m->end, "a memset", m->correlationId))
		return;
	r = gp_emit(GP_REC_MEMSET, sizeof(*r));
	if (!r)
		return;
	r->start = m->start;
	r->end = m->end;
	r->bytes = m->bytes;
	r->correlation = m->correlationId;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->value = m->value;
	r->mem_kind = (uint8_t)m->memoryKind;
	r->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? GP_ACT_ASYNC : 0;
	r->graph_id = m->graphId;
	r->graph_node = m->graphNodeId;
	gp_ring_note_time(&gp_rec.ring, m->start, m->end);
}

static void put_graph(const CUpti_ActivityGraphTrace2 *g)
{
	struct gp_rec_graph *r;

	if (!timed(g->start, g->end, "a graph launch", g->correlationId))
		return;
	r = gp_emit(GP_REC_GRAPH, sizeof(*r));
	if (!r)
		return;
	r->start = g->start;
	r->end = g->end;
	r->correlation = g->correlationId;
	r->graph_id = g->graphId;
	r->device = g->deviceId;
	r->context = g->contextId;
	r->stream = g->streamId;
	r->end_device = g->endDeviceId;
	gp_ring_note_time(&gp_rec.ring, g->start, g->end);
}

/* 1 when the call is one the trace keeps: every call with api-all, else the selection. */
static int api_kept(CUpti_CallbackDomain domain, uint32_t cbid)
{
	/* Acquire: pairs with set_api_subset's release. */
	if ((gp_rec.cfg.trace & GP_TRACE_API_ALL) || !__atomic_load_n(&api_sel_ready, __ATOMIC_ACQUIRE))
		return 1;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && api_sel_rt[cbid];
	return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && api_sel_drv[cbid];
}

static void put_api(const CUpti_ActivityAPI *a, CUpti_CallbackDomain domain)
{
	struct gp_rec_api *r;
	uint32_t name;

	/* Inside a window the whole API kinds are on: the trace keeps what it keeps without one. */
	if (!api_kept(domain, a->cbid))
		return;
	/*
	 * A call that began outside every window (while tracing went on or
	 * off).  A watched launch, copy or set goes with its work: the start
	 * of its driver call decides, for the runtime call around it too.
	 */
	if (!gp_edges_keep_api(&edges, a->correlationId, a->start))
		return;
	if (!timed(a->start, a->end, "an API call", a->correlationId))
		return;
	name = api_name(domain, a->cbid);
	r = gp_emit(GP_REC_API, sizeof(*r));
	if (!r)
		return;
	r->start = a->start;
	r->end = a->end;
	r->correlation = a->correlationId;
	r->tid = a->threadId;
	r->name = name;
	r->cbid = a->cbid;
	r->domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? GP_API_RUNTIME : GP_API_DRIVER;
	r->ret = (int32_t)a->returnValue;
	gp_ring_note_time(&gp_rec.ring, a->start, a->end);
	gp_emit_thread(a->threadId);
	/* 600: "not ready", the answer of a query, not a failure. */
	if (gp_rec.cfg.dump_on_error && a->returnValue && a->returnValue != 600)
		gp_recorder_request_dump(GP_DUMP_CUDA_ERROR, (int)a->returnValue);
}

/* An allocation or release (CUPTI_ACTIVITY_KIND_MEMORY2). */
static void put_memory(const CUpti_ActivityMemory4 *m)
{
	struct gp_rec_memory *r;
	uint8_t op;

	if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		op = GP_MEM_ALLOC;
	else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		op = GP_MEM_FREE;
	else
		return;
	if (!m->timestamp) {
		gp_lost_add(GP_LOST_NO_TIMESTAMP, 1);
		return;
	}
	if (!gp_edges_in_window(&edges, m->timestamp)) {
		edges.dropped++;
		return;
	}
	r = gp_emit(GP_REC_MEMORY, sizeof(*r));
	if (!r)
		return;
	r->timestamp = m->timestamp;
	r->address = m->address;
	r->bytes = m->bytes;
	r->correlation = m->correlationId;
	r->device = m->deviceId;
	r->context = m->contextId;
	r->stream = m->streamId;
	r->operation = op;
	r->mem_kind = (uint8_t)m->memoryKind;
	r->flags = m->isAsync ? GP_MEM_F_ASYNC : 0;
	if (m->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
		r->flags |= GP_MEM_F_POOL;
		r->pool_type = (uint8_t)m->memoryPoolConfig.memoryPoolType;
		r->pool_address = m->memoryPoolConfig.address;
	}
	r->process = m->processId;
	gp_ring_note_time(&gp_rec.ring, m->timestamp, m->timestamp);
}

static void emit_device(const struct gp_rec_device *d, const char *name)
{
	uint32_t id = gp_emit_string(name);
	struct gp_rec_device *r = gp_emit(GP_REC_DEVICE, sizeof(*r));

	if (!r)
		return;
	memcpy((char *)r + sizeof(r->h), (const char *)d + sizeof(d->h), sizeof(*r) - sizeof(r->h));
	r->name = id;
}

static void emit_context(const struct gp_rec_context *c)
{
	struct gp_rec_context *r = gp_emit(GP_REC_CONTEXT, sizeof(*r));

	if (r)
		memcpy((char *)r + sizeof(r->h), (const char *)c + sizeof(c->h), sizeof(*r) - sizeof(r->h));
}

/* Keeps the device for later files; emits it when a file is open (emit). */
static void put_device(const CUpti_ActivityDevice5 *d, int emit)
{
	struct gp_rec_device r;
	unsigned i;

	memset(&r, 0, sizeof(r));
	r.id = d->id;
	memcpy(r.uuid, d->uuid.bytes, sizeof(r.uuid));
	r.cc_major = d->computeCapabilityMajor;
	r.cc_minor = d->computeCapabilityMinor;
	r.sm_count = d->numMultiprocessors;
	r.core_clock_khz = d->coreClockRate;
	r.global_mem = d->globalMemorySize;
	r.mem_bandwidth = d->globalMemoryBandwidth;
	r.l2_size = d->l2CacheSize;
	r.flags = d->isMigEnabled ? 1u : 0u;
	r.max_warps_per_sm = d->maxWarpsPerMultiprocessor;
	r.max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
	r.max_smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
	r.max_regs_per_sm = d->maxRegistersPerMultiprocessor;
	r.max_regs_per_block = d->maxRegistersPerBlock;
	r.max_smem_per_block = d->maxSharedMemoryPerBlock;
	r.max_threads_per_block = d->maxThreadsPerBlock;
	r.warp_size = d->numThreadsPerWarp;
	for (i = 0; i < nsaved_dev && saved_dev[i].rec.id != r.id; i++)
		;
	/* Known as it is (CUPTI attached again lists it again): in the file already. */
	if (i < nsaved_dev && !memcmp(&saved_dev[i].rec, &r, sizeof(r)) &&
	    !strncmp(saved_dev[i].name, d->name ? d->name : "", sizeof(saved_dev[i].name) - 1))
		emit = 0;
	if (i < GP_SAVED_DEVICES) {
		saved_dev[i].rec = r;
		snprintf(saved_dev[i].name, sizeof(saved_dev[i].name), "%s", d->name ? d->name : "");
		if (i == nsaved_dev)
			nsaved_dev++;
	}
	if (emit)
		emit_device(&r, d->name);
}

static void put_context(const CUpti_ActivityContext3 *c, int emit)
{
	struct gp_rec_context r;
	unsigned i;

	memset(&r, 0, sizeof(r));
	r.id = c->contextId;
	r.device = c->deviceId;
	r.null_stream = c->nullStreamId;
	r.flags = c->isGreenContext ? 1u : 0u;
	for (i = 0; i < nsaved_ctx && saved_ctx[i].id != r.id; i++)
		;
	if (i < nsaved_ctx && !memcmp(&saved_ctx[i], &r, sizeof(r)))
		emit = 0;
	if (i < GP_SAVED_CONTEXTS) {
		saved_ctx[i] = r;
		if (i == nsaved_ctx)
			nsaved_ctx++;
	}
	if (emit)
		emit_context(&r);
}

static void put_overhead(const CUpti_ActivityOverhead3 *o)
{
	struct gp_rec_overhead *r;

	if (!timed(o->start, o->end, "an overhead record", 0))
		return;
	r = gp_emit(GP_REC_OVERHEAD, sizeof(*r));
	if (!r)
		return;
	r->start = o->start;
	r->end = o->end;
	r->kind = (uint32_t)o->overheadKind;
	r->object_kind = (uint32_t)o->objectKind;
	r->object_id = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
			       o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
		? o->objectId.pt.threadId
		: o->objectId.dcs.deviceId;
}

/* The correlation id of a record of work launched by a call, 0 for others. */
static uint32_t work_corr(const CUpti_Activity *rec)
{
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return ((const CUpti_ActivityKernel10 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return ((const CUpti_ActivityMemcpy6 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return ((const CUpti_ActivityMemcpyPtoP4 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return ((const CUpti_ActivityMemset4 *)rec)->correlationId;
	case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
		return ((const CUpti_ActivityGraphTrace2 *)rec)->correlationId;
	default:
		return 0;
	}
}

static void translate(const CUpti_Activity *rec)
{
	uint32_t corr = work_corr(rec);

	/* Work whose launch call began outside every window (see the file header). */
	if (corr && !gp_edges_keep_work(&edges, corr))
		return;
	if (gp_rec.cfg.backtrace) {
		/* The stack link goes first, so a reader has it with the activity. */
		switch (rec->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			gp_unwind_corr(((const CUpti_ActivityKernel10 *)rec)->correlationId);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			gp_unwind_corr(((const CUpti_ActivityMemcpy6 *)rec)->correlationId);
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			gp_unwind_corr(((const CUpti_ActivityMemset4 *)rec)->correlationId);
			break;
		case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
			gp_unwind_corr(((const CUpti_ActivityGraphTrace2 *)rec)->correlationId);
			break;
		default:
			break;
		}
	}
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		put_kernel((const CUpti_ActivityKernel10 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		put_memcpy((const CUpti_ActivityMemcpy6 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		put_peer((const CUpti_ActivityMemcpyPtoP4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		put_memset((const CUpti_ActivityMemset4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
		put_graph((const CUpti_ActivityGraphTrace2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		put_memory((const CUpti_ActivityMemory4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		put_api((const CUpti_ActivityAPI *)rec, CUPTI_CB_DOMAIN_RUNTIME_API);
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
		put_api((const CUpti_ActivityAPI *)rec, CUPTI_CB_DOMAIN_DRIVER_API);
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		put_device((const CUpti_ActivityDevice5 *)rec, 1);
		break;
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		put_context((const CUpti_ActivityContext3 *)rec, 1);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		put_overhead((const CUpti_ActivityOverhead3 *)rec);
		break;
	default:
		break;
	}
}

static void CUPTIAPI buffer_complete(CUcontext ctx, uint32_t stream, uint8_t *buf,
				     size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	CUptiResult rc;
	size_t dropped = 0;
	sigset_t all, old;
	int state;

	(void)size;
	/* The program's own CUPTI user gets its copies first, no lock held. */
	gp_guest_copy(buf, valid);
	/*
	 * No signal handler may run on this thread while it holds the producer
	 * lock: the handler waits for the flusher, which needs that lock.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	gp_ring_lock(&gp_rec.ring);
	/* Read under the lock: the final chunk is sealed under it too. */
	state = atomic_load_explicit(&gp_rec.state, memory_order_acquire);
	if (state != GP_ACTIVE && state != GP_STOPPING) {
		uint64_t n = 0;

		/* No file open: keep devices and contexts for the next one. */
		if (state == GP_STOPPED || state == GP_DORMANT)
			while (gp_cu.cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
				if (rec->kind == CUPTI_ACTIVITY_KIND_DEVICE)
					put_device((const CUpti_ActivityDevice5 *)rec, 0);
				else if (rec->kind == CUPTI_ACTIVITY_KIND_CONTEXT)
					put_context((const CUpti_ActivityContext3 *)rec, 0);
				else if (gp_guest_own_record(rec))
					n++;
			}
		atomic_fetch_add(&gp_rec.late_records, n);
		gp_ring_unlock(&gp_rec.ring);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		buffer_recycle(buf, valid);
		return;
	}
	while ((rc = gp_cu.cuptiActivityGetNextRecord(buf, valid, &rec)) == CUPTI_SUCCESS)
		if (gp_guest_own_record(rec))
			translate(rec);
	if (rc != CUPTI_ERROR_MAX_LIMIT_REACHED)
		gp_lost_add(GP_LOST_CUPTI_ERROR, 1);
	if (gp_cu.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		gp_lost_add(GP_LOST_CUPTI_DROPPED, dropped);
	gp_emit_lost(0);
	gp_ring_unlock(&gp_rec.ring);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	buffer_recycle(buf, valid);
}

static uint64_t trace_now(void)
{
	uint64_t t = 0;

	if (gp_cu.cuptiGetTimestamp(&t) != CUPTI_SUCCESS)
		t = gp_now_realtime();
	return t;
}

/* Whether cbid is one of the driver calls that launch kernels or graphs. */
static int is_launch_cbid(CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < gp_cupti_nlaunch_cbids; i++)
		if (gp_cupti_launch_cbids[i] == cbid)
			return 1;
	return 0;
}

/*
 * Program threads, at a watched call's ENTER and EXIT while an edge is
 * watched: its start kept by correlation id (edges.h; atomics only).
 * Runtime calls launch through driver calls with the same id: the first
 * ENTER, the runtime call's, gives the start.
 */
static void guard_callback(const CUpti_CallbackData *cd)
{
	if (cd->callbackSite == CUPTI_API_ENTER)
		gp_edges_enter(&edges, cd->correlationId, trace_now);
	else
		gp_edges_exit(&edges, cd->correlationId);
}

/*
 * Whether a watched call goes on to the callbacks tracing has on: those of
 * call stacks (every call with --backtrace=all, launches otherwise).
 */
static int guard_passes(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!atomic_load_explicit(&tracing_cbs, memory_order_relaxed) || !gp_rec.cfg.backtrace)
		return 0;
	return gp_rec.cfg.backtrace == 2 ||
	       (domain == CUPTI_CB_DOMAIN_DRIVER_API && is_launch_cbid(cbid));
}

static void on_callback(void *userdata, CUpti_CallbackDomain domain,
			CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	/* CUPTI is being let go of: the first API exit finalizes, nothing else runs. */
	if (!gp_detach_cupti_ok()) {
		gp_detach_callback(domain, data);
		return;
	}
	/* What only the program's own CUPTI user asked for is its alone. */
	if (gp_guest_seen && !gp_guest_dispatch(domain, cbid, data))
		return;
	if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
	    cbid < (CUpti_CallbackId)GUARD_CBIDS && guard_cbid[domain == CUPTI_CB_DOMAIN_DRIVER_API][cbid] &&
	    atomic_load_explicit(&edges.phase, memory_order_relaxed)) {
		guard_callback(data);
		if (!guard_passes(domain, cbid))
			return;
	}
	if (atomic_load(&gp_rec.disabled) ||
	    atomic_load_explicit(&gp_rec.state, memory_order_acquire) != GP_ACTIVE) {
		/* A call that took the metrics' locks at its ENTER lets them go. */
		if (metrics_on && gp_metrics_holding())
			gp_metrics_callback(domain, cbid, data);
		return;
	}
	/* The first context is the first sign of GPU work: the trace file now. */
	if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
		gp_recorder_need_file();
	if (capture_configured && gp_capture_callback(domain, cbid, data))
		return;
	if (metrics_on)
		gp_metrics_callback(domain, cbid, data);
	switch (domain) {
	case CUPTI_CB_DOMAIN_RESOURCE:
		if (cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING) {
			/* Its kernels' name pointers may be reused: forget them. */
			atomic_fetch_add_explicit(&name_gen, 1, memory_order_release);
		} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED ||
			   cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
			gp_unwind_on_resource(cbid, data);
		}
		break;
	case CUPTI_CB_DOMAIN_STATE:
		if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
			/* CUPTI finalizes itself; make no further CUPTI calls. */
			atomic_store(&gp_rec.disabled, 1);
			gp_log("CUPTI reported a fatal error; tracing stopped, the program continues");
		}
		break;
	case CUPTI_CB_DOMAIN_RUNTIME_API:
	case CUPTI_CB_DOMAIN_DRIVER_API: {
		const CUpti_CallbackData *cd = data;
		int reset = domain == CUPTI_CB_DOMAIN_RUNTIME_API
				    ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020
				    : cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2 ||
					      cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2;

		if (gp_rec.cfg.backtrace && (!reset || gp_rec.cfg.backtrace == 2))
			gp_unwind_on_api(domain, cbid, cd);
		/*
		 * Device reset / context destroy: finish the context's work
		 * and hand its records over before they go away.
		 */
		if (reset && cd->callbackSite == CUPTI_API_ENTER) {
			if (cu_ctx_synchronize)
				cu_ctx_synchronize();
			gp_cu.cuptiActivityFlushAll(0);
		}
		break;
	}
	default:
		break;
	}
}

static int enable_kind(CUpti_ActivityKind kind, const char *what, int required)
{
	CUptiResult rc = gp_cu.cuptiActivityEnable(kind);

	if (rc == CUPTI_SUCCESS)
		return 0;
	if (required)
		gp_log("cannot trace %s: %s", what, gp_cupti_error(rc));
	else
		gp_debug("cannot trace %s: %s", what, gp_cupti_error(rc));
	return -1;
}

static void enable_callbacks(void)
{
	gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
				  CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
				  CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
	gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_STATE,
				  CUPTI_CBID_STATE_FATAL_ERROR);
	gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
				  CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
	gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
				  CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2);
	gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
				  CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2);
	if (gp_rec.cfg.trace & GP_TRACE_NVTX) {
		/* Graph kernels take the NVTX ranges of where their node was
		 * made: node creation and instantiation clones (rare calls). */
		gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
					  CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
		gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
					  CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
	}
}

/*
 * API calls traced by default: those that make, move, wait for or free GPU
 * work, matched by name over all callback ids once.  Tracing every call
 * (api-all) costs a record per cudaGetDevice, cuKernelGetName and the like,
 * which frameworks make several times per launch.
 */
static const char *const api_words[] = {
	"Launch", "Memcpy", "Memset", "Malloc", "Free", "Synchronize", "HostAlloc",
	"MemAlloc", "GraphInstantiate", "BeginCapture", "EndCapture", "StreamWaitEvent",
	"EventRecord", "ModuleLoad", "LibraryLoad", "Prefetch", "ProfilerStart",
	"ProfilerStop", "DeviceReset",
};

static int api_selected(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	const char *name = NULL;

	if (gp_cu.cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
		return 0;
	for (size_t i = 0; i < sizeof(api_words) / sizeof(api_words[0]); i++)
		if (strstr(name, api_words[i]))
			return 1;
	return 0;
}

/*
 * Enables or disables the selected API calls; -1 if CUPTI refuses.
 * enable_lock held.
 *
 * At cuInit (the recorder's start) they are enabled one by one.  Enabled
 * so after cuInit, inside a window (a capture range opened by
 * cudaProfilerStart or an NVTX range, gpuprof start, CUPTI let go by
 * another tool), CUPTI delivered the kernels of the window but not one of
 * its API calls: per-call enables that come after CUDA started collect
 * nothing, while whole kinds enabled then do (the kernels).  So after
 * cuInit the runtime and driver API kinds are enabled whole, then every
 * call not selected is turned off one by one, CUPTI's way to trace "all
 * but some"; put_api keeps only the selected calls whatever CUPTI still
 * delivers, so that a window holds the calls a run without one holds.
 * Turning the kinds off again ends both.
 */
static int set_api_subset(int on)
{
	static uint16_t rt[CUPTI_RUNTIME_TRACE_CBID_SIZE], drv[CUPTI_DRIVER_TRACE_CBID_SIZE];
	static int nrt = -1, ndrv;

	if (nrt < 0) {
		nrt = 0;
		for (CUpti_CallbackId c = 1; c < CUPTI_RUNTIME_TRACE_CBID_SIZE; c++)
			if (api_selected(CUPTI_CB_DOMAIN_RUNTIME_API, c)) {
				rt[nrt++] = (uint16_t)c;
				api_sel_rt[c] = 1;
			}
		for (CUpti_CallbackId c = 1; c < CUPTI_DRIVER_TRACE_CBID_SIZE; c++)
			if (api_selected(CUPTI_CB_DOMAIN_DRIVER_API, c)) {
				drv[ndrv++] = (uint16_t)c;
				api_sel_drv[c] = 1;
			}
		/* Release: the selection is complete before any API record can arrive. */
		__atomic_store_n(&api_sel_ready, 1, __ATOMIC_RELEASE);
	}
	if (on && api_late) {
		if (enable_kind(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API", 1) < 0 ||
		    enable_kind(CUPTI_ACTIVITY_KIND_DRIVER, "driver API", 1) < 0)
			return -1;
		api_kinds_on = 1;
		/* Refusals are harmless: put_api leaves those calls out. */
		for (CUpti_CallbackId c = 1; c < CUPTI_RUNTIME_TRACE_CBID_SIZE; c++)
			if (!api_sel_rt[c])
				gp_cu.cuptiActivityEnableRuntimeApi(c, 0);
		for (CUpti_CallbackId c = 1; c < CUPTI_DRIVER_TRACE_CBID_SIZE; c++)
			if (!api_sel_drv[c])
				gp_cu.cuptiActivityEnableDriverApi(c, 0);
		return 0;
	}
	if (!on && api_kinds_on) {
		gp_cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
		gp_cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
		api_kinds_on = 0;
	}
	for (int i = 0; i < nrt; i++)
		if (gp_cu.cuptiActivityEnableRuntimeApi(rt[i], (uint8_t)on) != CUPTI_SUCCESS)
			return -1;
	for (int i = 0; i < ndrv; i++)
		if (gp_cu.cuptiActivityEnableDriverApi(drv[i], (uint8_t)on) != CUPTI_SUCCESS)
			return -1;
	return 0;
}

/*
 * The device and API kinds: on for the whole run, or only inside capture
 * ranges.  cuptiActivityEnable/Disable are not thread-safe: serialized.
 */
static int set_device_kinds(int on)
{
	static const struct {
		uint32_t trace;
		CUpti_ActivityKind kind;
		const char *what;
		int required;
	} kinds[] = {
		{ GP_TRACE_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels", 1 },
		{ GP_TRACE_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy", 1 },
		{ GP_TRACE_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer memcpy", 0 },
		{ GP_TRACE_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET, "memset", 1 },
		{ GP_TRACE_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2, "memory allocations", 1 },
		{ GP_TRACE_API_ALL, CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API", 1 },
		{ GP_TRACE_API_ALL, CUPTI_ACTIVITY_KIND_DRIVER, "driver API", 1 },
		/*
		 * CUPTI's account of its own cost, for the report's overhead
		 * line: with API tracing (host-side records), so that a trace of
		 * device activity alone holds nothing else.
		 */
		{ GP_TRACE_API, CUPTI_ACTIVITY_KIND_OVERHEAD, "CUPTI overhead", 0 },
	};
	uint32_t t = gp_rec.cfg.trace;
	int fail = 0;

	pthread_mutex_lock(&enable_lock);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(t & kinds[i].trace))
			continue;
		if (on)
			fail |= enable_kind(kinds[i].kind, kinds[i].what, kinds[i].required);
		else
			gp_cu.cuptiActivityDisable(kinds[i].kind);
	}
	if ((t & GP_TRACE_API) && !(t & GP_TRACE_API_ALL) && set_api_subset(on) < 0 && on) {
		/* Older CUPTI: per-call selection refused; trace every call. */
		gp_debug("per-call API selection refused; tracing every API call");
		gp_rec.cfg.trace |= GP_TRACE_API_ALL;
		fail |= enable_kind(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API", 1);
		fail |= enable_kind(CUPTI_ACTIVITY_KIND_DRIVER, "driver API", 1);
	}
	/* Whole-graph records replace the per-node ones of graph launches. */
	if ((t & GP_TRACE_GRAPH) && gp_rec.cfg.graph_mode) {
		if (on)
			fail |= enable_kind(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "graph launches", 1);
		else
			gp_cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
	}
	pthread_mutex_unlock(&enable_lock);
	return fail ? -1 : 0;
}

/* From now on the API selection is turned on after cuInit (set_api_subset). */
static void api_after_init(void)
{
	pthread_mutex_lock(&enable_lock);
	api_late = 1;
	pthread_mutex_unlock(&enable_lock);
}

static void capture_set_tracing(int on)
{
	set_device_kinds(on);
	if (!on)
		gp_cu.cuptiActivityFlushAll(0);
}

static void capture_sync(void)
{
	if (cu_ctx_synchronize)
		cu_ctx_synchronize();
}


/* The source hooks (see preload/source.h). */

/* The driver's version, found without loading anything (inside its cuInit). */
static void note_driver_version(void)
{
	/* libcuda is loaded, perhaps locally: no context needed. */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*drv)(int *) = (int (*)(int *))dlsym(cuda ? cuda : RTLD_DEFAULT, "cuDriverGetVersion");
	int v = 0;

	if (drv && drv(&v) == 0 && v > 0)
		gp_rec.cuda_driver = (uint32_t)v;
	if (cuda)
		dlclose(cuda);
}

/*
 * Loads libcupti, subscribes and registers the activity buffers: at start
 * (inside cuInit), or for a dormant recorder at its first window (then
 * CUDA has long been initialized: CUPTI attaches late).  0, or -1 with why.
 */
static int attach_cupti(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	CUptiResult rc;
	uint8_t one = 1;
	size_t sz;

	if (gp_cupti_load(cfg, why, whysz) < 0)
		return -1;
	gp_guest_attach();
	gp_cu.cuptiGetVersion(version);
	if (*version < CUPTI_API_VERSION)
		gp_debug("CUPTI API version %u is older than the %u this recorder was built with",
			 *version, (unsigned)CUPTI_API_VERSION);
	rc = gp_cu.cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)on_callback, NULL);
	subscribe_rc = rc;
	if (rc != CUPTI_SUCCESS) {
		snprintf(why, whysz,
			 rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
				 ? "another CUPTI tool (Nsight, torch.profiler, a sanitizer) already holds CUPTI (%s)"
				 : "cannot subscribe to CUPTI (%s)",
			 gp_cupti_error(rc));
		return -1;
	}
	subscribed = 1;
	/* Attributes before any context exists (when attached at cuInit). */
	sz = sizeof(one);
	gp_cu.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &one);
	gp_cu.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	buffer_size = (size_t)cfg->buffer_kib * 1024;
	/* Buffers delivered before the trace starts are recycled (state OFF). */
	rc = gp_cu.cuptiActivityRegisterCallbacks(buffer_request, buffer_complete);
	if (rc != CUPTI_SUCCESS) {
		snprintf(why, whysz, "cannot register CUPTI buffers (%s)", gp_cupti_error(rc));
		gp_cu.cuptiUnsubscribe(subscriber);
		subscribed = 0;
		return -1;
	}
	/* The program's own CUPTI user is served from now on (a dormant recorder too). */
	gp_guest_start(subscriber);
	gp_detach_attached();
	atomic_store_explicit(&cupti_on, 1, memory_order_release);
	/* Attached again after a window (reattach): the rest is set up already. */
	if (attached_once)
		return 0;
	attached_once = 1;
	cu_ctx_synchronize = (cu_sync_fn)dlsym(RTLD_DEFAULT, "cuCtxSynchronize");
	{
		const struct gp_capture_ops ops = {
			.set_tracing = capture_set_tracing,
			.sync = capture_sync,
			.now = trace_now,
		};

		capture_configured = gp_capture_init(cfg, &ops) == 1;
	}
	metrics_on = gp_metrics_attach(cfg);
	return 0;
}

static int cuda_attach(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	note_driver_version();
	if (cfg->backtrace && gp_unwind_init() < 0)
		cfg->backtrace = 0;
	cfg->pystack = cfg->backtrace ? (uint32_t)gp_unwind_py_mode() : 0;
	/*
	 * Dormant: nothing of CUPTI until the first window (cuda_enable), so
	 * that the program runs as without a profiler.  Hardware metrics need
	 * CUPTI from cuInit on: with them the recorder attaches now.
	 */
	if (cfg->dormant && !cfg->metrics[0])
		return 0;
	if (attach_cupti(cfg, version, why, whysz) == 0)
		return 0;
	if (subscribe_rc != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return -1;
	/* Held by another CUPTI user (not served by guest.c): wait for it. */
	wait_since = gp_now_realtime();
	atomic_store(&cupti_wait, 1);
	gp_log("%s; tracing starts when it lets go", why);
	return 0;
}

/*
 * Late attach: CUPTI reports devices once, at cuInit, and contexts when
 * made; EnableAndDump also reports those that exist already.
 */
static void enable_and_dump(CUpti_ActivityKind kind, const char *what)
{
	typedef CUptiResult (*dump_fn)(CUpti_ActivityKind);
	dump_fn dump = (dump_fn)dlsym(gp_cu.handle, "cuptiActivityEnableAndDump");

	if (!dump || dump(kind) != CUPTI_SUCCESS)
		gp_debug("cannot list the %s that exist already", what);
	/* Through the shims too, so the records count as the recorder's own. */
	enable_kind(kind, what, 0);
}

/* Devices, contexts and fatal errors, once CUPTI is held. */
static void claim_devices(int after_init)
{
	/* Records made once, at cuInit and context creation: none per launch. */
	if (after_init) {
		enable_and_dump(CUPTI_ACTIVITY_KIND_DEVICE, "devices");
		enable_and_dump(CUPTI_ACTIVITY_KIND_CONTEXT, "contexts");
	} else {
		enable_kind(CUPTI_ACTIVITY_KIND_DEVICE, "devices", 0);
		enable_kind(CUPTI_ACTIVITY_KIND_CONTEXT, "contexts", 0);
	}
	gp_cu.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_STATE,
				  CUPTI_CBID_STATE_FATAL_ERROR);
	/* The devices and contexts, kept for the file's preamble (state DORMANT). */
	if (after_init)
		gp_cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static int cuda_enable(char *why, size_t whysz)
{
	int late = !atomic_load_explicit(&cupti_on, memory_order_acquire);

	if (late && atomic_load(&cupti_wait))
		return 0; /* CUPTI is another's: claimed when it lets go (cuda_flush) */
	if (late && attach_cupti(&gp_rec.cfg, &gp_rec.cupti_version, why, whysz) < 0)
		return -1;
	/* A dormant recorder's first window: cuInit is long past. */
	claim_devices(late || gp_rec.cfg.dormant);
	if (late || gp_rec.cfg.dormant)
		api_after_init();
	gp_debug("CUPTI %s%s", gp_cu.path, late ? " (attached late)" : "");
	return 0;
}

static int cuda_set_tracing(int on, char *why, size_t whysz);

static uint64_t CUPTIAPI realtime_clock(void)
{
	return gp_now_realtime();
}

/*
 * The flusher, while another subscriber holds CUPTI: tries to take it;
 * once it can, traces from then on, with the time before marked as a gap.
 */
static void attach_when_free(void)
{
	char why[256];
	uint64_t t1;

	if (attach_cupti(&gp_rec.cfg, &gp_rec.cupti_version, why, sizeof(why)) < 0) {
		if (subscribe_rc != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
			atomic_store(&cupti_wait, 0);
			gp_log("%s; the program runs untraced", why);
		}
		return;
	}
	atomic_store(&cupti_wait, 0);
	{
		/* A clock the holder gave CUPTI outlives it: CUPTI's default back. */
		typedef CUptiResult (*ts_reg_fn)(CUpti_TimestampCallbackFunc);
		ts_reg_fn reg = (ts_reg_fn)dlsym(gp_cu.handle, "cuptiActivityRegisterTimestampCallback");

		if (reg)
			reg(realtime_clock);
	}
	claim_devices(1);
	api_after_init();
	if (gp_recorder_tracing() && cuda_set_tracing(1, why, sizeof(why)) < 0)
		gp_log("%s", why);
	t1 = trace_now();
	gp_guest_gap(wait_since, t1);
	gp_recorder_need_file();
	gp_log("CUPTI is free: tracing from now on (the first %.1f s were not traced)",
	       (double)(t1 > wait_since ? t1 - wait_since : 0) / 1e9);
}

/* CUPTI held and not being let go of: the recorder may call it. */
static int cupti_usable(void)
{
	return atomic_load(&cupti_on) && gp_detach_cupti_ok();
}

/*
 * The flusher, before a window: CUPTI held again if it was let go of
 * after the last one (detach.h), attached as at the first window; the
 * devices and contexts known stay known (saved_dev, saved_ctx), those
 * CUPTI lists again are not written twice (put_device).  0, or -1 with why.
 */
static int reattach(char *why, size_t whysz)
{
	int st;

	if (!atomic_load(&cupti_on) || gp_detach_cupti_ok())
		return 0;
	st = gp_detach_resume(DETACH_WAIT_NS);
	if (st < 0) {
		snprintf(why, whysz, "CUPTI is still being let go of");
		return -1;
	}
	if (st == GP_DETACH_ATTACHED) {
		/* Taken back, or finalize refused: the domains went off with what was on in them. */
		enable_callbacks();
		gp_guest_start(subscriber);
		return 0;
	}
	atomic_store(&cupti_on, 0);
	subscribed = 0;
	buffers_back();
	if (attach_cupti(&gp_rec.cfg, &gp_rec.cupti_version, why, whysz) < 0) {
		if (subscribe_rc != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
			/* Still let go of: the next window tries again. */
			atomic_store(&cupti_on, 1);
			return -1;
		}
		/* Another CUPTI user took it meanwhile: traced from when it lets go. */
		wait_since = gp_now_realtime();
		atomic_store(&cupti_wait, 1);
		gp_log("%s; tracing starts when it lets go", why);
		return 0;
	}
	claim_devices(1);
	gp_debug("CUPTI attached again (%u finalized so far; the last finalize took %.1f ms on "
		 "the program's thread)",
		 gp_detach_count(), (double)gp_detach_last_ns() / 1e6);
	return 0;
}

/*
 * At exit: a request no API exit carried out is taken back, so that CUPTI
 * is never finalized inside CUDA's teardown (cupti-notes: finalize in exit
 * handlers races); a dormant recorder's exit flushes nothing (cuda_flush).
 * Bounded: a finalize under way is waited for at most DETACH_WAIT_NS.
 */
static void detach_at_exit(void)
{
	if (getpid() == gp_rec.pid && atomic_load(&cupti_on) && !gp_detach_cupti_ok())
		gp_detach_resume(DETACH_WAIT_NS);
}

/*
 * The flusher, the recorder dormant again after a window (source.h,
 * idle): CUPTI is let go of at the next API exit (detach.h), unless
 * something needs it between windows.
 */
static void cuda_idle(void)
{
	int busy = atomic_load(&cupti_wait) || atomic_load(&tracing_cbs) || atomic_load(&edges.phase);
	unsigned keep = (gp_guest_seen ? GP_DETACH_KEEP_GUEST : 0) |
			(gp_guest_multi() ? GP_DETACH_KEEP_MULTI : 0) |
			(metrics_on ? GP_DETACH_KEEP_METRICS : 0) |
			(capture_configured ? GP_DETACH_KEEP_CAPTURE : 0) | (busy ? GP_DETACH_KEEP_BUSY : 0);
	uint64_t t0;

	if (atomic_load(&gp_rec.disabled) || !cupti_usable() || !gp_detach_wanted(&gp_rec.cfg, keep))
		return;
	/* Whatever CUPTI holds is handed over now: nothing is flushed after the finalize. */
	t0 = gp_now_monotonic();
	gp_cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	t0 = gp_now_monotonic() - t0;
	gp_guest_stop();
	if (gp_detach_request(subscriber) < 0) {
		gp_guest_start(subscriber);
		return;
	}
	/*
	 * Registered after CUDA's own teardown (inside cuInit), so run before
	 * it: a request still pending at exit is taken back there.
	 */
	if (!exit_hook) {
		exit_hook = 1;
		atexit(detach_at_exit);
	}
	gp_debug("CUPTI is let go of until the next window (its buffers flushed in %.1f ms)",
		 (double)t0 / 1e6);
}

/*
 * The calls watched at the edges: the runtime and driver calls that launch
 * (kernels, graphs), copy or set; a runtime call's start is its launch's
 * (the driver call inside it has the same correlation id and comes later).
 */
static void guard_cbids(void)
{
	static const char *const words[] = { "Launch", "Memcpy", "Memset" };
	static const CUpti_CallbackDomain doms[2] = { CUPTI_CB_DOMAIN_RUNTIME_API,
						      CUPTI_CB_DOMAIN_DRIVER_API };
	const CUpti_CallbackId size[2] = { CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE };

	guard_ncbid = 0;
	for (int d = 0; d < 2; d++)
		for (CUpti_CallbackId c = 1; c < size[d]; c++) {
			const char *name = NULL;

			if (gp_cu.cuptiGetCallbackName(doms[d], c, &name) != CUPTI_SUCCESS || !name)
				continue;
			/* Graph calls that only build or set nodes launch nothing. */
			if (strstr(name, "Graph") && !strstr(name, "GraphLaunch"))
				continue;
			for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
				if (strstr(name, words[i])) {
					guard_cbid[d][c] = 1;
					guard_ncbid++;
					break;
				}
		}
}

/*
 * Turns the watch's callbacks on or off (on the flusher); off leaves on
 * those that tracing has on (call stacks: guard_passes).
 */
static void guard_callbacks(int on)
{
	for (int d = 0; d < 2; d++) {
		CUpti_CallbackDomain dom = d ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;

		for (CUpti_CallbackId c = 1; c < (CUpti_CallbackId)GUARD_CBIDS; c++) {
			if (!guard_cbid[d][c])
				continue;
			if (!on && atomic_load(&tracing_cbs) && guard_passes(dom, c))
				continue;
			gp_cu.cuptiEnableCallback(on, subscriber, dom, c);
		}
	}
}

/* The flusher: a window's edges (source.h, window; edges.h). */
static void cuda_window(int what, uint64_t t)
{
	int watch;
	char why[256];

	/* Attached again first: set_tracing says why when that failed. */
	if (what == GP_WINDOW_OPENING && !atomic_load(&gp_rec.disabled))
		reattach(why, sizeof(why));
	watch = !atomic_load(&gp_rec.disabled) && cupti_usable() && !metrics_on;
	switch (what) {
	case GP_WINDOW_OPENING:
		if (!watch)
			break;
		if (guard_ncbid < 0)
			guard_cbids();
		gp_edges_opening(&edges);
		guard_callbacks(1);
		break;
	case GP_WINDOW_OPEN:
		gp_ring_lock(&gp_rec.ring);
		gp_edges_open(&edges, t);
		gp_ring_unlock(&gp_rec.ring);
		if (atomic_load(&edges.phase) == GP_EDGES_HEAD) {
			guard_callbacks(0);
			gp_edges_off(&edges);
		}
		break;
	case GP_WINDOW_CLOSING:
		if (watch && guard_ncbid >= 0) {
			gp_edges_closing(&edges);
			guard_callbacks(1);
		}
		break;
	case GP_WINDOW_CLOSE: {
		uint64_t until = gp_now_monotonic() + GUARD_WAIT_NS;

		gp_ring_lock(&gp_rec.ring);
		gp_edges_close(&edges, t);
		gp_ring_unlock(&gp_rec.ring);
		if (atomic_load(&edges.phase) != GP_EDGES_TAIL)
			break;
		/*
		 * Calls begun before the end return before the kinds go off, so
		 * their work is recorded (bounded: a call blocked longer, on a
		 * full launch queue, is left to it).
		 */
		while (!gp_edges_settled(&edges) && gp_now_monotonic() < until) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
		}
		if (!gp_edges_settled(&edges))
			gp_debug("window end: %d calls begun before it still running after %llu ms",
				 atomic_load(&edges.inflight), GUARD_WAIT_NS / 1000000ull);
		if (atomic_load(&edges.full))
			gp_debug("window edges: %u calls not watched (table full)",
				 atomic_load(&edges.full));
		gp_debug("window edges: %llu records so far of work begun outside the windows",
			 (unsigned long long)__atomic_load_n(&edges.dropped, __ATOMIC_RELAXED));
		break;
	}
	default:
		break;
	}
}

static int cuda_set_tracing(int on, char *why, size_t whysz)
{
	uint64_t t0 = gp_now_monotonic();

	if (atomic_load(&gp_rec.disabled) || !atomic_load(&cupti_on))
		return 0;
	if (on && reattach(why, whysz) < 0)
		return -1;
	/* Let go of (or a guest took CUPTI meanwhile): nothing is on. */
	if (!cupti_usable())
		return 0;
	if (!on) {
		atomic_store(&tracing_cbs, 0);
		if (!capture_configured)
			set_device_kinds(0);
		if (gp_rec.cfg.backtrace)
			gp_unwind_disable_callbacks(subscriber, gp_rec.cfg.backtrace == 2);
		if (gp_rec.cfg.trace & GP_TRACE_NVTX)
			gp_nvtxtool_set_recording(0);
		/* The close's watch (or an opening that failed) ends with tracing. */
		if (atomic_load(&edges.phase)) {
			gp_edges_off(&edges);
			guard_callbacks(0);
		}
		return 0;
	}
	/* Modules may have been unloaded while nothing watched: forget names. */
	atomic_fetch_add_explicit(&name_gen, 1, memory_order_release);
	if (!capture_configured && set_device_kinds(1) < 0) {
		snprintf(why, whysz, "CUPTI refused activity tracing");
		return -1;
	}
	enable_callbacks();
	if (gp_rec.cfg.backtrace)
		gp_unwind_enable_callbacks(subscriber, gp_rec.cfg.backtrace == 2);
	if (capture_configured)
		gp_capture_enable_callbacks(subscriber);
	if (metrics_on)
		gp_metrics_enable_callbacks(subscriber);
	atomic_store(&tracing_cbs, 1);
	gp_guest_start(subscriber);
	gp_debug("CUPTI %s (tracing on in %.1f ms)", gp_cu.path,
		 (double)(gp_now_monotonic() - t0) / 1e6);
	if (gp_rec.cfg.trace & GP_TRACE_NVTX)
		gp_nvtxtool_set_recording(1);
	/* The next windows (and capture ranges) turn the API calls on after cuInit. */
	api_after_init();
	return 0;
}

static void cuda_preamble(void)
{
	for (unsigned i = 0; i < nsaved_dev; i++)
		emit_device(&saved_dev[i].rec, saved_dev[i].name);
	for (unsigned i = 0; i < nsaved_ctx; i++)
		emit_context(&saved_ctx[i]);
	if (gp_rec.cfg.backtrace)
		gp_unwind_preamble();
}

static void cuda_detach(void)
{
	gp_guest_stop();
	gp_nvtxtool_off();
	gp_metrics_off();
	if (subscribed && gp_detach_cupti_ok()) {
		gp_cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		gp_cu.cuptiUnsubscribe(subscriber);
		subscribed = 0;
	}
}

static void cuda_flush(int final)
{
	if (atomic_load(&cupti_wait) && !atomic_load(&gp_rec.disabled)) {
		/* A window's file that ends is not the end: CUPTI may still come free. */
		if (final != GP_FLUSH_END) {
			attach_when_free();
		} else {
			atomic_store(&cupti_wait, 0);
			gp_log("another CUPTI user held CUPTI until the end; the program ran untraced");
		}
	}
	/* A finalize refused: the callbacks the domains' switch took are turned on again. */
	if (atomic_load(&cupti_on) && gp_detach_poll())
		enable_callbacks();
	/*
	 * The process ends: a request no API exit carried out is taken back,
	 * so that CUPTI is never finalized in CUDA's own teardown.
	 */
	if (final == GP_FLUSH_END && atomic_load(&cupti_on) && !gp_detach_cupti_ok())
		gp_detach_resume(DETACH_WAIT_NS);
	if (!atomic_load(&gp_rec.disabled) && cupti_usable())
		gp_cu.cuptiActivityFlushAll(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
	if (metrics_on)
		gp_metrics_progress(final == GP_FLUSH_END);
}

/*
 * Lock held: what CUPTI dropped for want of a buffer since it was last
 * asked.  Read here as well as with each completed buffer: when every
 * buffer request is refused (host memory short) no buffer ever completes.
 */
static void collect_dropped(void)
{
	size_t dropped = 0;

	if (!atomic_load(&gp_rec.disabled) && cupti_usable() &&
	    gp_cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS)
		gp_lost_add(GP_LOST_CUPTI_DROPPED, dropped);
}

static void cuda_drain(uint64_t t, int final)
{
	collect_dropped();
	gp_guest_drain();
	if (final) {
		gp_capture_finish(t);
		gp_nvtxtool_close_all(t);
	} else {
		gp_nvtxtool_drain();
	}
	gp_unwind_emit();
	if (metrics_on)
		gp_metrics_drain(final);
}

static void cuda_forked(void)
{
	/*
	 * The child inherits CUPTI's state but none of its threads: any CUPTI
	 * call (even the exit flush) can hang.
	 */
	gp_detach_forked();
	gp_guest_stop();
	gp_nvtxtool_off();
	gp_metrics_off();
}

static uint64_t cuda_now(void)
{
	/* CUPTI's clock is CLOCK_REALTIME's (cupti-notes): the same while it is let go of. */
	return atomic_load(&gp_rec.disabled) || !cupti_usable() ? gp_now_realtime() : trace_now();
}

static const struct gp_source cuda_source = {
	.name = "cuda",
	.attach = cuda_attach,
	.enable = cuda_enable,
	.set_tracing = cuda_set_tracing,
	.window = cuda_window,
	.idle = cuda_idle,
	.preamble = cuda_preamble,
	.detach = cuda_detach,
	.flush = cuda_flush,
	.drain = cuda_drain,
	.forked = cuda_forked,
	.now = cuda_now,
	.file_on_demand = 1,
};

const struct gp_source *const gp_sources[] = { &cuda_source, &gp_gpusample_source, NULL };
