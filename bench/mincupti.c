/*
 * mincupti: the smallest useful CUPTI activity consumer, used as the floor
 * that every CUPTI-based tracer pays.  Loaded by the CUDA driver through
 *
 *     CUDA_INJECTION64_PATH=/path/to/libmincupti.so PROGRAM
 *
 * It enables CONCURRENT_KERNEL, MEMCPY and MEMSET activity only
 * (MINCUPTI_GRAPH=1 adds GRAPH_TRACE: one record per graph launch instead of
 * one per node), hands CUPTI 8 MiB buffers from malloc, counts the records it
 * gets back, recycles the buffers, force-flushes at exit and prints
 *
 *     mincupti: N records (K kernel, G graph, D dropped)
 *
 * on stderr.  It decodes nothing and writes nothing else.
 *
 * Probes of what host-side API tracing costs on top of that floor (used by
 * bench/probe_api.sh, not by the main benchmark):
 *   MINCUPTI_API=1       also CUPTI_ACTIVITY_KIND_RUNTIME and DRIVER records
 *   MINCUPTI_CALLBACK=1  an empty CUPTI callback on the launch calls
 *                        (cudaLaunchKernel, cuLaunchKernel)
 *   MINCUPTI_CALLBACK=2  the same callback taking a timestamp at entry and
 *                        exit and storing 32 bytes per call in a
 *                        thread-local buffer: a tracer's own API record
 */
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MINCUPTI_BUF_SIZE ((size_t)8 << 20)
#define MINCUPTI_POOL_MAX 64

#define EXPORT __attribute__((visibility("default")))

EXPORT int InitializeInjection(void);

static atomic_ullong n_records, n_kernels, n_graphs, n_dropped;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool[MINCUPTI_POOL_MAX];
static int pool_len;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *p = NULL;

	pthread_mutex_lock(&pool_lock);
	if (pool_len > 0)
		p = pool[--pool_len];
	pthread_mutex_unlock(&pool_lock);
	if (!p)
		p = malloc(MINCUPTI_BUF_SIZE); /* malloc alignment (16) >= the 8 CUPTI needs */
	*buffer = p;
	*size = p ? MINCUPTI_BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	unsigned long long n = 0, k = 0, g = 0;
	size_t dropped = 0;
	int kept = 0;

	(void)size;
	if (!buffer)
		return;
	/* Stops at CUPTI_ERROR_MAX_LIMIT_REACHED (end) or any error. */
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		n++;
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			k++;
		else if (rec->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE)
			g++;
	}
	atomic_fetch_add(&n_records, n);
	atomic_fetch_add(&n_kernels, k);
	atomic_fetch_add(&n_graphs, g);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		atomic_fetch_add(&n_dropped, (unsigned long long)dropped);

	pthread_mutex_lock(&pool_lock);
	if (pool_len < MINCUPTI_POOL_MAX) {
		pool[pool_len++] = buffer;
		kept = 1;
	}
	pthread_mutex_unlock(&pool_lock);
	if (!kept)
		free(buffer);
}

static atomic_ullong n_calls;
static __thread struct {
	uint64_t t0;
	uint64_t rec[4 * 1024];
	unsigned n;
} tl;

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cd = data;
	uint64_t t = 0;

	if (!ud)
		return;
	cuptiGetTimestamp(&t);
	if (cd->callbackSite == CUPTI_API_ENTER) {
		tl.t0 = t;
		return;
	}
	tl.rec[tl.n++] = tl.t0;
	tl.rec[tl.n++] = t;
	tl.rec[tl.n++] = (uint64_t)domain << 32 | cbid;
	tl.rec[tl.n++] = cd->correlationId;
	if (tl.n == sizeof(tl.rec) / sizeof(tl.rec[0])) {
		atomic_fetch_add_explicit(&n_calls, tl.n / 4, memory_order_relaxed);
		tl.n = 0;
	}
}

static void probe_callbacks(int stamped)
{
	CUpti_SubscriberHandle sub;

	if (cuptiSubscribe(&sub, on_callback, stamped ? (void *)1 : NULL) != CUPTI_SUCCESS) {
		fprintf(stderr, "mincupti: cuptiSubscribe failed\n");
		return;
	}
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
			    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "mincupti: %llu records (%llu kernel, %llu graph, %llu dropped)\n",
		atomic_load(&n_records), atomic_load(&n_kernels), atomic_load(&n_graphs),
		atomic_load(&n_dropped));
}

static int enable(CUpti_ActivityKind kind, const char *what)
{
	CUptiResult r = cuptiActivityEnable(kind);

	if (r != CUPTI_SUCCESS) {
		const char *msg = NULL;

		cuptiGetResultString(r, &msg);
		fprintf(stderr, "mincupti: cannot enable %s: %s\n", what, msg ? msg : "?");
		return -1;
	}
	return 0;
}

int InitializeInjection(void)
{
	static atomic_int done;
	const char *graph = getenv("MINCUPTI_GRAPH");
	CUptiResult r;

	if (atomic_exchange(&done, 1))
		return 1;
	r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		fprintf(stderr, "mincupti: cuptiActivityRegisterCallbacks failed (%d)\n", (int)r);
		return 1;
	}
	enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels");
	enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy");
	enable(CUPTI_ACTIVITY_KIND_MEMSET, "memset");
	if (graph && strcmp(graph, "1") == 0)
		enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "graph trace");
	if (getenv("MINCUPTI_API") && !strcmp(getenv("MINCUPTI_API"), "1")) {
		enable(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API");
		enable(CUPTI_ACTIVITY_KIND_DRIVER, "driver API");
	}
	if (getenv("MINCUPTI_CALLBACK"))
		probe_callbacks(!strcmp(getenv("MINCUPTI_CALLBACK"), "2"));
	atexit(at_exit);
	return 1;
}
