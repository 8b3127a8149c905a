/*
 * NVTX tool (see nvtx_tool.h).
 *
 * Handlers turn each call into an event appended to the calling thread's
 * block chain: OPEN (push or start, with name and attributes), CLOSE (pop or
 * end, by range id) or MARK.  A push gets its id on the calling thread
 * (thread serial << 32 | sequence) and sits on a small per-thread stack so
 * the pop knows what it closes; a start gets a process-wide id (top bit
 * set), which is what nvtxRangeStart returns and nvtxRangeEnd passes back
 * from any thread.  The drain, under the producer lock, reads every chain,
 * keeps the open ranges in one table keyed by id and emits a record when
 * both ends have been seen, in whichever order they are read.
 *
 * Blocks: single producer (the owning thread) and single consumer (the
 * drain).  The producer publishes bytes with a release store of `end` and
 * links a fresh block through `next` when one fills; the consumer frees a
 * block once it has seen `next` and read up to the final `end`.
 */
#define NVTX_NO_IMPL
#include "nvtx_tool.h"

#include "../preload/lifecycle.h"
#include "../preload/recorder.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#define GP_NVTX_EXPORT __attribute__((visibility("default")))

#define BLOCK_BYTES (16u * 1024u)
#define MAX_BLOCKS 16384u           /* 256 MiB of unread events, then drops */
#define IDLE_BLOCKS 256u            /* 4 MiB while not tracing (before cuInit) */
#define MAX_DEPTH 256
#define MAX_MESSAGE 1024u
#define MAX_DOMAINS 1024u
#define START_ID_BIT (1ull << 63)

enum { EV_OPEN = 1, EV_CLOSE, EV_MARK };

/* Every event starts with this; OPEN and MARK add `struct ev_attr` and the
 * NUL-terminated message, the whole padded to 8 bytes. */
struct ev {
	uint8_t type;
	uint8_t push;
	uint16_t len;              /* message bytes incl. NUL (OPEN, MARK) */
	uint32_t domain;           /* domain index, 0 = default */
	uint64_t ts;
	uint64_t id;
};

struct ev_attr {
	uint32_t category;
	uint32_t color;
	uint32_t payload_kind;
	uint32_t depth;
	uint64_t payload;
};

struct block {
	_Atomic(struct block *) next;
	_Atomic uint32_t end;      /* bytes published */
	uint32_t rd;               /* bytes drained (consumer) */
	uint32_t used;             /* bytes written (producer) */
	char data[BLOCK_BYTES];
};

struct thread_state {
	struct thread_state *link;  /* registry, newest first */
	struct block *tail;         /* producer */
	struct block *head;         /* consumer */
	_Atomic int gone;           /* the thread exited */
	uint32_t tid;
	uint32_t serial;
	uint32_t seq;
	uint32_t epoch;             /* recording period the stack belongs to */
	int depth;                  /* stack entries in use; may exceed MAX_DEPTH */
	int matched;                /* open push/pop ranges the match hook accepted */
	struct {
		uint64_t id;
		uint32_t domain;
		uint32_t match;     /* the match hook accepted its message */
	} stack[MAX_DEPTH];
};

/* An open range (or a close seen before its open), drain side. */
struct open_range {
	uint64_t id;               /* 0 = empty slot */
	uint64_t start, end;
	uint32_t tid_start, tid_end;
	uint32_t name, domain;
	struct ev_attr attr;
	uint8_t push;
	uint8_t closed_first;      /* only the close was seen so far */
	uint8_t announced;         /* its GP_REC_NVTX_OPEN was written */
};

struct domain {
	uint32_t index;
	char name[];
};

/* Registered strings: a handle is its registration; kept listed until exit. */
struct registered {
	struct registered *next;
	char s[];
};

static _Atomic int on;                       /* handlers record */
static int (*_Atomic match_hook)(const char *message);
static _Atomic uint32_t epoch;               /* bumped each time recording starts */
static char dump_name[256];                  /* --dump-on=nvtx:NAME, set at injection */
static const struct gp_nvtxtool_capture_hooks *_Atomic capture;

static _Atomic(struct thread_state *) threads;
static _Atomic uint32_t thread_serial;
static _Atomic uint64_t start_ids;
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;
static __thread struct thread_state *self;
static __thread int self_failed;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *pool;
static uint32_t blocks_made;

static pthread_mutex_t domain_lock = PTHREAD_MUTEX_INITIALIZER;
static struct domain *_Atomic domains[MAX_DOMAINS];
static uint32_t ndomains = 1;                /* 0 is the default domain */

/* Drain side (producer lock). */
static struct open_range *tab;
static uint32_t cap, count;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Blocks and per-thread state (application threads).                 */

static struct block *block_get(void)
{
	struct block *b;

	/* Nothing drains until tracing starts: a program that uses NVTX long
	 * before (or without) CUDA keeps only its first few MiB of events. */
	uint32_t limit = atomic_load_explicit(&gp_rec.state, memory_order_relaxed) == GP_ACTIVE
			       ? MAX_BLOCKS
			       : IDLE_BLOCKS;

	pthread_mutex_lock(&pool_lock);
	if ((b = pool))
		pool = atomic_load_explicit(&b->next, memory_order_relaxed);
	else if (blocks_made < limit && (b = malloc(sizeof(*b))))
		blocks_made++;
	pthread_mutex_unlock(&pool_lock);
	if (b) {
		atomic_store_explicit(&b->next, NULL, memory_order_relaxed);
		atomic_store_explicit(&b->end, 0, memory_order_relaxed);
		b->rd = b->used = 0;
	}
	return b;
}

static void block_put(struct block *b)
{
	pthread_mutex_lock(&pool_lock);
	atomic_store_explicit(&b->next, pool, memory_order_relaxed);
	pool = b;
	pthread_mutex_unlock(&pool_lock);
}

/* Thread exit: the drain frees the state once it has read it all. */
static void thread_gone(void *arg)
{
	struct thread_state *t = arg;

	self = NULL;
	self_failed = 1; /* NVTX calls from later destructors are not recorded */
	if (!t->tail) {
		free(t); /* never had a block: the drain does not know it */
		return;
	}
	atomic_store_explicit(&t->gone, 1, memory_order_release);
}

static void make_key(void)
{
	key_ok = pthread_key_create(&thread_key, thread_gone) == 0;
}

/*
 * The calling thread's state, with a block to write to; NULL (counted)
 * when there is none.  Without a block (the pool is at its limit) the
 * thread records nothing now and tries again at its next call.
 */
static struct thread_state *self_state(void)
{
	struct thread_state *t = self;

	if (t && t->tail)
		return t;
	if (self_failed)
		return NULL;
	if (!t) {
		if (!(t = calloc(1, sizeof(*t)))) {
			self_failed = 1;
			gp_lost_add(GP_LOST_RING_FULL, 1);
			return NULL;
		}
		t->tid = (uint32_t)syscall(SYS_gettid);
		t->serial = atomic_fetch_add(&thread_serial, 1) + 1;
		pthread_once(&key_once, make_key);
		if (key_ok)
			pthread_setspecific(thread_key, t);
		self = t;
	}
	if (!(t->head = block_get())) {
		gp_lost_add(GP_LOST_RING_FULL, 1);
		return NULL;
	}
	t->tail = t->head;
	t->link = atomic_load(&threads);
	while (!atomic_compare_exchange_weak(&threads, &t->link, t))
		;
	return t;
}

/* Room for n bytes in the thread's block; NULL (counted) when none. */
static char *reserve(struct thread_state *t, uint32_t n)
{
	struct block *b = t->tail;

	if (b->used + n > BLOCK_BYTES) {
		struct block *nb = block_get();

		if (!nb) {
			gp_lost_add(GP_LOST_RING_FULL, 1);
			return NULL;
		}
		atomic_store_explicit(&b->next, nb, memory_order_release);
		t->tail = b = nb;
	}
	return b->data + b->used;
}

static void publish(struct thread_state *t, uint32_t n)
{
	struct block *b = t->tail;

	b->used += n;
	atomic_store_explicit(&b->end, b->used, memory_order_release);
}

static int recording(void)
{
	return atomic_load_explicit(&on, memory_order_relaxed) &&
	       !atomic_load_explicit(&gp_rec.disabled, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* Messages and attributes.                                           */

struct msg {
	const char *s;
	char buf[MAX_MESSAGE];
};

/* UTF-32 (Linux wchar_t) to UTF-8, truncated to the buffer. */
static const char *from_wide(struct msg *m, const wchar_t *w)
{
	size_t o = 0;

	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		char u[4];
		size_t n;

		if (c < 0x80) {
			u[0] = (char)c;
			n = 1;
		} else if (c < 0x800) {
			u[0] = (char)(0xc0 | c >> 6);
			u[1] = (char)(0x80 | (c & 0x3f));
			n = 2;
		} else if (c < 0x10000) {
			u[0] = (char)(0xe0 | c >> 12);
			u[1] = (char)(0x80 | (c >> 6 & 0x3f));
			u[2] = (char)(0x80 | (c & 0x3f));
			n = 3;
		} else {
			if (c > 0x10ffff)
				c = 0xfffd;
			u[0] = (char)(0xf0 | c >> 18);
			u[1] = (char)(0x80 | (c >> 12 & 0x3f));
			u[2] = (char)(0x80 | (c >> 6 & 0x3f));
			u[3] = (char)(0x80 | (c & 0x3f));
			n = 4;
		}
		if (o + n >= sizeof(m->buf))
			break;
		memcpy(m->buf + o, u, n);
		o += n;
	}
	m->buf[o] = 0;
	return m->s = m->buf;
}

/* The parts of an event attribute structure that exist in its size. */
#define HAS_FIELD(a, f) ((a)->size >= offsetof(nvtxEventAttributes_t, f) + sizeof((a)->f))

static void attr_read(const nvtxEventAttributes_t *a, struct msg *m, struct ev_attr *at)
{
	memset(at, 0, sizeof(*at));
	m->s = "";
	if (!a)
		return;
	if (HAS_FIELD(a, category))
		at->category = a->category;
	if (HAS_FIELD(a, color) && a->colorType == NVTX_COLOR_ARGB)
		at->color = a->color;
	if (HAS_FIELD(a, payload) && a->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 &&
	    a->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT) {
		/* NVTX's payload type numbers are GP_NVTX_PAYLOAD_*'s. */
		at->payload_kind = (uint32_t)a->payloadType;
		switch (a->payloadType) {
		case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		case NVTX_PAYLOAD_TYPE_INT32:
		case NVTX_PAYLOAD_TYPE_FLOAT:
			memcpy(&at->payload, &a->payload, 4);
			break;
		default:
			memcpy(&at->payload, &a->payload, 8);
			break;
		}
	}
	if (!HAS_FIELD(a, message))
		return;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		m->s = a->message.ascii ? a->message.ascii : "";
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		from_wide(m, a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		m->s = a->message.registered
			       ? ((const struct registered *)(const void *)a->message.registered)->s
			       : "";
		break;
	default:
		break;
	}
}

static uint32_t domain_index(nvtxDomainHandle_t d)
{
	return d ? ((const struct domain *)(const void *)d)->index : 0;
}

static const char *domain_name(uint32_t index)
{
	struct domain *d;

	if (!index || index >= MAX_DOMAINS)
		return NULL;
	d = atomic_load_explicit(&domains[index], memory_order_acquire);
	return d ? d->name : NULL;
}

/* ------------------------------------------------------------------ */
/* Events.                                                            */

static void put_open_or_mark(struct thread_state *t, int type, int push, uint32_t domain,
			     uint64_t id, const char *msg, const struct ev_attr *at, uint64_t ts)
{
	size_t len = strnlen(msg, MAX_MESSAGE - 1);
	uint32_t n = (uint32_t)((sizeof(struct ev) + sizeof(struct ev_attr) + len + 1 + 7) & ~7u);
	char *p = reserve(t, n);
	struct ev e = { (uint8_t)type, (uint8_t)push, (uint16_t)(len + 1), domain, ts, id };

	if (!p)
		return;
	memcpy(p, &e, sizeof(e));
	memcpy(p + sizeof(e), at, sizeof(*at));
	memcpy(p + sizeof(e) + sizeof(*at), msg, len);
	p[sizeof(e) + sizeof(*at) + len] = 0;
	publish(t, n);
}

static void put_close(struct thread_state *t, uint32_t domain, uint64_t id, uint64_t ts)
{
	char *p = reserve(t, sizeof(struct ev));
	struct ev e = { EV_CLOSE, 0, 0, domain, ts, id };

	if (!p)
		return;
	memcpy(p, &e, sizeof(e));
	publish(t, sizeof(e));
}

/* Ranges pushed while not recording are unknown: their pops close nothing. */
static void fresh_epoch(struct thread_state *t)
{
	uint32_t e = atomic_load_explicit(&epoch, memory_order_relaxed);

	if (t->epoch != e) {
		t->epoch = e;
		t->depth = 0;
	}
}

/* A range or mark named as the flight recorder's trigger asks for a dump. */
static void dump_check(const char *message)
{
	if (dump_name[0] && message && !strcmp(message, dump_name))
		gp_recorder_request_dump(GP_DUMP_NVTX, 0);
}

static int push(uint32_t domain, const char *domain_s, const struct msg *m, struct ev_attr *at)
{
	uint64_t ts = now_ns();
	const struct gp_nvtxtool_capture_hooks *h = atomic_load_explicit(&capture, memory_order_acquire);
	struct thread_state *t;
	int level;

	if (h)
		h->push(domain_s, m->s);
	dump_check(m->s);
	if (!recording() || !(t = self_state()))
		return 0;
	fresh_epoch(t);
	level = t->depth++;
	if (level >= MAX_DEPTH)
		return level; /* too deep: neither end recorded */
	t->stack[level].id = (uint64_t)t->serial << 32 | ++t->seq;
	t->stack[level].domain = domain;
	{
		int (*fn)(const char *) = atomic_load_explicit(&match_hook, memory_order_acquire);

		t->stack[level].match = fn && m->s && fn(m->s);
		t->matched += (int)t->stack[level].match;
	}
	at->depth = (uint32_t)level;
	put_open_or_mark(t, EV_OPEN, 1, domain, t->stack[level].id, m->s, at, ts);
	return level;
}

static int pop(uint32_t domain)
{
	uint64_t ts = now_ns();
	const struct gp_nvtxtool_capture_hooks *h = atomic_load_explicit(&capture, memory_order_acquire);
	struct thread_state *t;
	int i;

	if (h)
		h->pop();
	if (!recording() || !(t = self_state()))
		return -1;
	fresh_epoch(t);
	if (!t->depth)
		return -1;
	if (t->depth > MAX_DEPTH) {
		t->depth--;
		return t->depth;
	}
	/* Each domain has its own stack: close that domain's innermost. */
	for (i = t->depth - 1; i >= 0 && t->stack[i].domain != domain; i--)
		;
	if (i < 0)
		return -1;
	put_close(t, domain, t->stack[i].id, ts);
	t->matched -= (int)t->stack[i].match;
	memmove(&t->stack[i], &t->stack[i + 1], (size_t)(t->depth - 1 - i) * sizeof(t->stack[0]));
	t->depth--;
	return i;
}

static nvtxRangeId_t start(uint32_t domain, const struct msg *m, const struct ev_attr *at)
{
	uint64_t ts = now_ns();
	struct thread_state *t;
	uint64_t id;

	dump_check(m->s);
	if (!recording() || !(t = self_state()))
		return 0;
	id = START_ID_BIT | (atomic_fetch_add_explicit(&start_ids, 1, memory_order_relaxed) + 1);
	put_open_or_mark(t, EV_OPEN, 0, domain, id, m->s, at, ts);
	return id;
}

static void end(uint32_t domain, nvtxRangeId_t id)
{
	uint64_t ts = now_ns();
	struct thread_state *t;

	if (!(id & START_ID_BIT) || !recording() || !(t = self_state()))
		return;
	put_close(t, domain, id, ts);
}

static void mark(uint32_t domain, const struct msg *m, const struct ev_attr *at)
{
	uint64_t ts = now_ns();
	struct thread_state *t;

	dump_check(m->s);
	if (!recording() || !(t = self_state()))
		return;
	put_open_or_mark(t, EV_MARK, 0, domain, 0, m->s, at, ts);
}

/* ------------------------------------------------------------------ */
/* The NVTX entry points.                                             */

static const struct ev_attr no_attr;

static void NVTX_API h_markEx(const nvtxEventAttributes_t *a)
{
	struct msg m;
	struct ev_attr at;

	attr_read(a, &m, &at);
	mark(0, &m, &at);
}

static void NVTX_API h_markA(const char *s)
{
	struct msg m = { .s = s ? s : "" };

	mark(0, &m, &no_attr);
}

static void NVTX_API h_markW(const wchar_t *s)
{
	struct msg m;

	from_wide(&m, s);
	mark(0, &m, &no_attr);
}

static nvtxRangeId_t NVTX_API h_startEx(const nvtxEventAttributes_t *a)
{
	struct msg m;
	struct ev_attr at;

	attr_read(a, &m, &at);
	return start(0, &m, &at);
}

static nvtxRangeId_t NVTX_API h_startA(const char *s)
{
	struct msg m = { .s = s ? s : "" };

	return start(0, &m, &no_attr);
}

static nvtxRangeId_t NVTX_API h_startW(const wchar_t *s)
{
	struct msg m;

	from_wide(&m, s);
	return start(0, &m, &no_attr);
}

static void NVTX_API h_end(nvtxRangeId_t id)
{
	end(0, id);
}

static int NVTX_API h_pushEx(const nvtxEventAttributes_t *a)
{
	struct msg m;
	struct ev_attr at;

	attr_read(a, &m, &at);
	return push(0, NULL, &m, &at);
}

static int NVTX_API h_pushA(const char *s)
{
	struct msg m = { .s = s ? s : "" };
	struct ev_attr at = no_attr;

	return push(0, NULL, &m, &at);
}

static int NVTX_API h_pushW(const wchar_t *s)
{
	struct msg m;
	struct ev_attr at = no_attr;

	from_wide(&m, s);
	return push(0, NULL, &m, &at);
}

static int NVTX_API h_pop(void)
{
	return pop(0);
}

static void NVTX_API h_domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct msg m;
	struct ev_attr at;

	attr_read(a, &m, &at);
	mark(domain_index(d), &m, &at);
}

static nvtxRangeId_t NVTX_API h_domainStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct msg m;
	struct ev_attr at;

	attr_read(a, &m, &at);
	return start(domain_index(d), &m, &at);
}

static void NVTX_API h_domainEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	end(domain_index(d), id);
}

static int NVTX_API h_domainPushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct msg m;
	struct ev_attr at;
	uint32_t i = domain_index(d);

	attr_read(a, &m, &at);
	return push(i, domain_name(i), &m, &at);
}

static int NVTX_API h_domainPop(nvtxDomainHandle_t d)
{
	return pop(domain_index(d));
}

/* Domains and registered strings live until exit: handles must stay valid. */
static nvtxDomainHandle_t domain_create(const char *name)
{
	struct domain *d = NULL;
	size_t n = strnlen(name, MAX_MESSAGE - 1);

	pthread_mutex_lock(&domain_lock);
	for (uint32_t i = 1; i < ndomains; i++) {
		struct domain *x = atomic_load_explicit(&domains[i], memory_order_relaxed);

		if (x && !strncmp(x->name, name, n) && !x->name[n]) {
			d = x;
			break;
		}
	}
	if (!d && ndomains < MAX_DOMAINS && (d = malloc(sizeof(*d) + n + 1))) {
		d->index = ndomains;
		memcpy(d->name, name, n);
		d->name[n] = 0;
		atomic_store_explicit(&domains[ndomains++], d, memory_order_release);
	}
	pthread_mutex_unlock(&domain_lock);
	/* Out of domains: the default domain's handle (NULL) still works. */
	return (nvtxDomainHandle_t)(void *)d;
}

static nvtxDomainHandle_t NVTX_API h_domainCreateA(const char *name)
{
	return domain_create(name ? name : "");
}

static nvtxDomainHandle_t NVTX_API h_domainCreateW(const wchar_t *name)
{
	struct msg m;

	return domain_create(from_wide(&m, name));
}

static void NVTX_API h_domainDestroy(nvtxDomainHandle_t d)
{
	(void)d; /* kept: ranges may still refer to it */
}

static struct registered *registered;

static nvtxStringHandle_t register_string(const char *s)
{
	size_t n = strnlen(s, MAX_MESSAGE - 1);
	struct registered *r = malloc(sizeof(*r) + n + 1);

	if (!r)
		return NULL;
	memcpy(r->s, s, n);
	r->s[n] = 0;
	pthread_mutex_lock(&domain_lock);
	r->next = registered;
	registered = r;
	pthread_mutex_unlock(&domain_lock);
	return (nvtxStringHandle_t)(void *)r;
}

static nvtxStringHandle_t NVTX_API h_registerStringA(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return register_string(s ? s : "");
}

static nvtxStringHandle_t NVTX_API h_registerStringW(nvtxDomainHandle_t d, const wchar_t *s)
{
	struct msg m;

	(void)d;
	return register_string(from_wide(&m, s));
}

typedef void (*fnptr)(void);

static void install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
		    const fnptr *fns, unsigned nfns)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0;

	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return;
	for (unsigned i = 1; i < nfns && i < size; i++)
		if (fns[i] && table[i])
			*table[i] = (NvtxFunctionPointer)fns[i];
}

int gp_nvtxtool_inject(const void *get_export_table, unsigned w)
{
	static const fnptr core[NVTX_CBID_CORE_SIZE] = {
		[NVTX_CBID_CORE_MarkEx] = (fnptr)h_markEx,
		[NVTX_CBID_CORE_MarkA] = (fnptr)h_markA,
		[NVTX_CBID_CORE_MarkW] = (fnptr)h_markW,
		[NVTX_CBID_CORE_RangeStartEx] = (fnptr)h_startEx,
		[NVTX_CBID_CORE_RangeStartA] = (fnptr)h_startA,
		[NVTX_CBID_CORE_RangeStartW] = (fnptr)h_startW,
		[NVTX_CBID_CORE_RangeEnd] = (fnptr)h_end,
		[NVTX_CBID_CORE_RangePushEx] = (fnptr)h_pushEx,
		[NVTX_CBID_CORE_RangePushA] = (fnptr)h_pushA,
		[NVTX_CBID_CORE_RangePushW] = (fnptr)h_pushW,
		[NVTX_CBID_CORE_RangePop] = (fnptr)h_pop,
	};
	static const fnptr core2[NVTX_CBID_CORE2_SIZE] = {
		[NVTX_CBID_CORE2_DomainMarkEx] = (fnptr)h_domainMarkEx,
		[NVTX_CBID_CORE2_DomainRangeStartEx] = (fnptr)h_domainStartEx,
		[NVTX_CBID_CORE2_DomainRangeEnd] = (fnptr)h_domainEnd,
		[NVTX_CBID_CORE2_DomainRangePushEx] = (fnptr)h_domainPushEx,
		[NVTX_CBID_CORE2_DomainRangePop] = (fnptr)h_domainPop,
		[NVTX_CBID_CORE2_DomainRegisterStringA] = (fnptr)h_registerStringA,
		[NVTX_CBID_CORE2_DomainRegisterStringW] = (fnptr)h_registerStringW,
		[NVTX_CBID_CORE2_DomainCreateA] = (fnptr)h_domainCreateA,
		[NVTX_CBID_CORE2_DomainCreateW] = (fnptr)h_domainCreateW,
		[NVTX_CBID_CORE2_DomainDestroy] = (fnptr)h_domainDestroy,
	};
	NvtxGetExportTableFunc_t get = (NvtxGetExportTableFunc_t)get_export_table;
	const NvtxExportTableCallbacks *cb;

	if (!get || !w || atomic_load(&gp_rec.disabled))
		return 0;
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (w & GP_NVTX_RECORD)
		atomic_store(&on, 1);
	install(cb, NVTX_CB_MODULE_CORE, core, NVTX_CBID_CORE_SIZE);
	install(cb, NVTX_CB_MODULE_CORE2, core2, NVTX_CBID_CORE2_SIZE);
	return 1;
}

void gp_nvtxtool_set_capture_hooks(const struct gp_nvtxtool_capture_hooks *h)
{
	/* May come before or after the first NVTX call installs the handlers. */
	atomic_store_explicit(&capture, h, memory_order_release);
}

void gp_nvtxtool_set_match(int (*fn)(const char *message))
{
	atomic_store_explicit(&match_hook, fn, memory_order_release);
}

int gp_nvtxtool_inside_match(void)
{
	struct thread_state *t = self;

	return t && t->matched > 0;
}

uint64_t gp_nvtxtool_current(void)
{
	struct thread_state *t = self;

	if (!t || !t->depth || t->depth > MAX_DEPTH)
		return 0;
	return t->stack[t->depth - 1].id;
}

void gp_nvtxtool_set_recording(int v)
{
	/* Only a new recording period forgets the nesting seen so far. */
	if (v && !atomic_load(&on))
		atomic_fetch_add_explicit(&epoch, 1, memory_order_relaxed);
	atomic_store(&on, v);
}

void gp_nvtxtool_off(void)
{
	atomic_store(&on, 0);
	atomic_store(&capture, NULL);
}

/* ------------------------------------------------------------------ */
/* Drain (producer lock).                                             */

static uint32_t slot_of(uint64_t id)
{
	return (uint32_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static struct open_range *find(uint64_t id)
{
	if (!cap)
		return NULL;
	for (uint32_t j = slot_of(id);; j = (j + 1) & (cap - 1)) {
		if (tab[j].id == id)
			return &tab[j];
		if (!tab[j].id)
			return NULL;
	}
}

static struct open_range *insert(uint64_t id)
{
	if ((count + 1) * 2 > cap) {
		uint32_t ocap = cap, ncap = cap ? cap * 2 : 256;
		struct open_range *old = tab, *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return NULL;
		tab = nt;
		cap = ncap;
		for (uint32_t i = 0; i < ocap; i++)
			if (old[i].id) {
				uint32_t j = slot_of(old[i].id);

				while (tab[j].id)
					j = (j + 1) & (cap - 1);
				tab[j] = old[i];
			}
		free(old);
	}
	for (uint32_t j = slot_of(id);; j = (j + 1) & (cap - 1))
		if (!tab[j].id) {
			memset(&tab[j], 0, sizeof(tab[j]));
			tab[j].id = id;
			count++;
			return &tab[j];
		}
}

/* Backward-shift deletion keeps probe chains intact. */
static void erase(struct open_range *e)
{
	uint32_t i = (uint32_t)(e - tab), j = i;

	for (;;) {
		j = (j + 1) & (cap - 1);
		if (!tab[j].id)
			break;
		uint32_t k = slot_of(tab[j].id);

		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			tab[i] = tab[j];
			i = j;
		}
	}
	tab[i].id = 0;
	count--;
}

static void emit(const struct open_range *o, uint16_t type, uint32_t extra_aux)
{
	struct gp_rec_nvtx *r = gp_emit(type, sizeof(*r));

	if (!r)
		return;
	r->h.aux = (o->push ? GP_NVTX_PUSHPOP : 0u) | extra_aux;
	r->start = o->start;
	r->end = o->end;
	r->id = o->id;
	r->tid_start = o->tid_start;
	r->tid_end = o->tid_end;
	r->name = o->name;
	r->domain = o->domain;
	r->category = o->attr.category;
	r->color = o->attr.color;
	r->payload_kind = o->attr.payload_kind;
	r->depth = o->attr.depth;
	r->payload = o->attr.payload;
	/* An announcement's start is noted by the range's own record. */
	if (type != GP_REC_NVTX_OPEN)
		gp_ring_note_time(&gp_rec.ring, o->start, o->end);
}

static uint32_t domain_string(uint32_t index)
{
	const char *n = domain_name(index);

	return n && *n ? gp_emit_string(n) : 0;
}

static void on_event(const struct thread_state *t, const struct ev *e, const char *p)
{
	struct open_range *o, tmp;
	struct ev_attr at;

	if (e->type == EV_CLOSE) {
		if ((o = find(e->id))) {
			if (o->closed_first)
				return; /* a second close: ignore */
			o->end = e->ts;
			o->tid_end = t->tid;
			emit(o, GP_REC_NVTX_RANGE, 0);
			erase(o);
		} else if ((o = insert(e->id))) {
			o->closed_first = 1;
			o->end = e->ts;
			o->tid_end = t->tid;
		} else {
			gp_lost_add(GP_LOST_RING_FULL, 1);
		}
		return;
	}
	memcpy(&at, p + sizeof(*e), sizeof(at));
	memset(&tmp, 0, sizeof(tmp));
	tmp.id = e->id;
	tmp.start = tmp.end = e->ts;
	tmp.tid_start = tmp.tid_end = t->tid;
	tmp.name = gp_emit_string(p + sizeof(*e) + sizeof(at));
	tmp.domain = domain_string(e->domain);
	tmp.attr = at;
	tmp.push = e->push;
	if (e->type == EV_MARK) {
		emit(&tmp, GP_REC_NVTX_MARK, 0);
		return;
	}
	if ((o = find(e->id)) && o->closed_first) {
		tmp.end = o->end;
		tmp.tid_end = o->tid_end;
		emit(&tmp, GP_REC_NVTX_RANGE, 0);
		erase(o);
		return;
	}
	if (!o && !(o = insert(e->id))) {
		gp_lost_add(GP_LOST_RING_FULL, 1);
		return;
	}
	*o = tmp;
}

static void drain_thread(struct thread_state *t)
{
	struct block *b = t->head;

	for (;;) {
		uint32_t endp = atomic_load_explicit(&b->end, memory_order_acquire);
		struct block *nx;

		while (b->rd < endp) {
			const char *p = b->data + b->rd;
			struct ev e;

			memcpy(&e, p, sizeof(e));
			on_event(t, &e, p);
			b->rd += e.type == EV_CLOSE
					 ? (uint32_t)sizeof(e)
					 : (uint32_t)((sizeof(e) + sizeof(struct ev_attr) + e.len + 7) & ~7u);
		}
		nx = atomic_load_explicit(&b->next, memory_order_acquire);
		if (!nx)
			break;
		/* The producer published its last bytes before linking nx. */
		if (atomic_load_explicit(&b->end, memory_order_acquire) != b->rd)
			continue;
		t->head = nx;
		block_put(b);
		b = nx;
	}
}

/* Announcements of one drain: outer ranges (earlier starts) first on each thread. */
static int cmp_announce(const void *pa, const void *pb)
{
	const struct open_range *a = *(const struct open_range *const *)pa;
	const struct open_range *b = *(const struct open_range *const *)pb;

	if (a->tid_start != b->tid_start)
		return a->tid_start < b->tid_start ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * Each range still open, once (GP_REC_NVTX_OPEN): its own record comes
 * when it closes, after everything it holds, so a reader that folds ranges
 * as they close learns here that what follows nests in it.  Runs in the
 * drain (the flushing thread, producer lock held), not in the program's
 * threads.  At most ANNOUNCE_MAX a drain, the rest at the next (a reader
 * that then sees a range announced after one it encloses keeps every
 * range); one the full ring drops is not written again: the records are a
 * help, nothing a range's own record does not say.
 */
#define ANNOUNCE_MAX 1024u
static void announce(void)
{
	struct open_range *v[ANNOUNCE_MAX];
	uint32_t n = 0;

	for (uint32_t i = 0; i < cap && n < ANNOUNCE_MAX; i++)
		if (tab[i].id && !tab[i].closed_first && !tab[i].announced)
			v[n++] = &tab[i];
	if (n > 1)
		qsort(v, n, sizeof(v[0]), cmp_announce);
	for (uint32_t i = 0; i < n; i++) {
		struct open_range o = *v[i];

		o.end = 0;
		emit(&o, GP_REC_NVTX_OPEN, 0);
		v[i]->announced = 1;
	}
}

void gp_nvtxtool_drain(void)
{
	struct thread_state *head = atomic_load(&threads), *prev = NULL, *t, *next;

	for (t = head; t; t = next) {
		int gone = atomic_load_explicit(&t->gone, memory_order_acquire);

		next = t->link;
		drain_thread(t);
		/*
		 * A finished thread's state goes once read to the end.  New
		 * threads are only ever linked in front of `head`, so any state
		 * behind it can be unlinked here without racing them.
		 */
		if (gone && prev && t->head == t->tail &&
		    t->head->rd == atomic_load_explicit(&t->head->end, memory_order_acquire)) {
			prev->link = next;
			block_put(t->head);
			free(t);
			continue;
		}
		prev = t;
	}
	announce();
}

void gp_nvtxtool_close_all(uint64_t now)
{
	atomic_store(&on, 0);
	gp_nvtxtool_drain();
	for (uint32_t i = 0; i < cap; i++)
		if (tab[i].id && !tab[i].closed_first) {
			tab[i].end = now;
			emit(&tab[i], GP_REC_NVTX_RANGE, GP_NVTX_UNTERMINATED);
		}
	free(tab);
	tab = NULL;
	cap = count = 0;
}

/*
 * Called by each NVTX instance (NVTX_INJECTION64_PATH) on its first call,
 * which may come before cuInit: installs the handlers, which buffer events
 * until tracing starts.  Returns 1 to receive NVTX calls, 0 to leave that
 * NVTX instance a no-op.
 */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void *get_export_table);

int InitializeInjectionNvtx2(void *get_export_table)
{
	const struct gp_config *cfg = gp_config_get();
	unsigned what = 0;

	if (cfg->disabled)
		return 0;
	/* Dormant: handlers in place, recording only inside windows. */
	if (cfg->trace & GP_TRACE_NVTX)
		what |= cfg->dormant ? GP_NVTX_LATER : GP_NVTX_RECORD;
	if (!strncmp(cfg->capture_range, "nvtx:", 5))
		what |= GP_NVTX_CAPTURE;
	/* The flight recorder's NVTX trigger needs the handlers too. */
	if (cfg->dump_on_nvtx[0] && cfg->flight_bytes) {
		_Static_assert(sizeof(dump_name) == sizeof(cfg->dump_on_nvtx), "dump name size");
		memcpy(dump_name, cfg->dump_on_nvtx, sizeof(dump_name));
		what |= GP_NVTX_LATER;
	}
	return gp_nvtxtool_inject(get_export_table, what);
}
