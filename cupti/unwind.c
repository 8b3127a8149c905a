/*
 * Launch-site call stacks (see unwind.h for the contexts and contracts).
 *
 * Tables are mapped once at init (anonymous memory: pages are touched only
 * as they fill) and never grow:
 *   slots[]   open-addressing hash of stacks: hash -> id, lock-free insert
 *             (CAS on the hash word, id published with release);
 *   stacks[]  id -> (first frame in frames[], frame count), count published
 *             last with release, so a reader seeing n != 0 sees the frames;
 *   frames[]  all frames, bump-allocated;
 *   corr[]    correlation id -> stack id, direct-mapped by the low bits of
 *             the id (a launch's records complete long before 2^20 later
 *             launches reuse its slot).
 * When a table is full new stacks get id 0 (no stack) and are counted.
 *
 * Python frames (--backtrace=python|mixed, pystack.h): on the hot path a
 * frame is the word gp_py_walk gives, (code object address, instruction
 * offset), and the stack's hash also covers the code objects' identities
 * (a code object freed and another made at its address makes another
 * stack).  The thread that adds a new stack turns each Python frame into
 * its frame id right then (ids[] beside frames[]), while its code object
 * is alive for certain: the code object's file and function names are
 * copied once into codes[] (names[] holds the text) and its line is
 * computed once per stack.  A code object may be freed as soon as the
 * launch returns, so nothing of it is read later; the flusher writes the
 * STACK and PYFRAME records from these copies.  Python frame ids are
 * GP_PYFRAME_BIT | code index << 32 | line; code index 0 is a thread
 * without Python frames, its name's index in thread_names[] below.
 *
 * Native frames are named with dladdr() by the flusher; the first frame of
 * each module also writes the module's MODULE record (absolute path, GNU
 * build-id read from its notes in memory with dl_iterate_phdr), so that
 * readers elsewhere look frames up only in the very file that ran.
 */
#include "unwind.h"
#include "cupti_api.h"
#include "nvtx_tool.h"
#include "pystack.h"

#include "../preload/log.h"
#include "../preload/recorder.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_DEPTH 48
#define NSLOTS (1u << 17)             /* hash slots: twice the stack ids */
#define NSTACKS (1u << 16)
#define NFRAMES (1u << 21)            /* 16 MiB of frames at most */
#define NCORR (1u << 20)
#define MAX_PY 128                    /* Python frames of a mixed stack */
#define MAX_NATIVE_MIXED 128          /* native frames of a mixed stack */
#define NCODE_SLOTS (1u << 17)
#define NCODES (1u << 16)
#define NAMES_BYTES (8u << 20)
#define NTHREAD_NAMES 4096
#define PY_FILE_MAX 1024
#define PY_FUNC_MAX 512

struct slot {
	_Atomic uint64_t hash;
	_Atomic uint32_t id;
	uint32_t pad;
};

struct stack_ent {
	uint32_t first;
	_Atomic uint32_t n;
};

typedef int (*unw_backtrace_fn)(void **buffer, int size);
typedef int (*unw_set_caching_policy_fn)(void *as, int policy);
#define GP_UNW_CACHE_PER_THREAD 2   /* UNW_CACHE_PER_THREAD in libunwind.h */

static unw_backtrace_fn unw_bt;
static int ready;                     /* tables mapped, callbacks may run */
static int py_mode;                   /* GP_PYSTACK_* in effect */
static struct slot *slots;
static struct stack_ent *stacks;
static uint64_t *frames;              /* as hashed: pcs and raw Python words */
static uint64_t *ids;                 /* as written: pcs and Python frame ids */

/* Python code objects seen: (address, identity) -> copied names. */
struct code_ent {
	uint32_t file, func;              /* offsets in names[] */
	uint32_t first_line;
	uint32_t pad;
};
static struct slot *code_slots;
static struct code_ent *codes;
static char *names;
static _Atomic uint32_t next_code = 1, next_name;
static char thread_names[NTHREAD_NAMES][16];
static _Atomic uint32_t next_thread_name = 1;
static __thread uint32_t my_thread_name;
static _Atomic uint64_t *corr_map;
static _Atomic uint32_t next_id = 1, next_frame;
static _Atomic uint64_t dropped;

/* Per thread: the correlation being handled (runtime and driver callbacks
 * of one launch share it), nesting depth, the stack of the current call. */
static __thread uint32_t cur_corr;
static __thread int depth;
static __thread uint32_t cur_stack;

/* Emission state: flusher/exit only, under the producer lock. */
static uint32_t emitted_upto = 1;
static uint64_t *pc_seen;             /* open addressing set of symbolized pcs */
static uint32_t pc_cap, pc_count;
/* The FRAME records emitted, for the preamble of each later file or dump. */
static struct gp_rec_frame *sent_frames;
static uint32_t nsent_frames, capsent_frames;
/* The modules of those frames (MODULE records), in the order emitted. */
struct module_ent {
	uint64_t base;
	uint32_t module, path;     /* string ids */
	uint32_t nid;              /* build-id bytes, 0 none */
	uint8_t id[GP_BUILD_ID_MAX];
};
static struct module_ent *modules;
static uint32_t nmodules, capmodules;

/*
 * Graph node -> where it was made (stack, correlation, innermost NVTX
 * range), for the clones made at instantiation.  Open addressing on the
 * node id; rare (node creation only): a mutex.
 */
struct node_origin {
	uint64_t node;             /* 0 = empty */
	uint64_t nvtx;
	uint32_t stack, corr;
	uint32_t graph_id;         /* of its GRAPH_NODE record, for later files */
};
static pthread_mutex_t node_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node_origin *nodes;
static uint32_t node_cap, node_count;

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void *open_unwind(void)
{
	const char *env = gp_rec.cfg.libunwind_path;
	char path[PATH_MAX];
	Dl_info info;
	void *h;

	/* RTLD_LOCAL: libunwind also defines _Unwind_* and backtrace, which
	 * must not take the place of the program's own. */
	if (env && *env)
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	if ((h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL)))
		return h;
	/* A copy shipped next to the recorder. */
	if (dladdr((void *)open_unwind, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');

		if (slash && (size_t)(slash - info.dli_fname) < sizeof(path) - 20) {
			snprintf(path, sizeof(path), "%.*s/libunwind.so.8",
				 (int)(slash - info.dli_fname), info.dli_fname);
			return dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
	}
	return NULL;
}

int gp_unwind_init(void)
{
	void *h;

	py_mode = (int)gp_rec.cfg.pystack;
	if (py_mode != GP_PYSTACK_OFF) {
		char why[160];

		if (gp_py_init(why, sizeof(why)) < 0) {
			if (py_mode == GP_PYSTACK_PYTHON) {
				gp_log("%s: Python call stacks are off", why);
				return -1;
			}
			gp_log("%s: native call stacks only", why);
			py_mode = GP_PYSTACK_OFF;
		} else {
			gp_debug("Python call stacks: CPython 3.%d", gp_py_minor());
		}
	}
	if (py_mode == GP_PYSTACK_PYTHON)
		goto tables;       /* no native unwinding */
	h = open_unwind();
	if (!h || !(unw_bt = (unw_backtrace_fn)dlsym(h, "unw_backtrace"))) {
		gp_log("libunwind.so.8 not found (set GPUPROF_LIBUNWIND); call stacks are off");
		return -1;
	}
	{
		/* Per-thread unwind caches: no lock shared between launching threads. */
		unw_set_caching_policy_fn set_policy =
			(unw_set_caching_policy_fn)dlsym(h, "_ULx86_64_set_caching_policy");
		void **as = dlsym(h, "_ULx86_64_local_addr_space");

		if (set_policy && as && *as)
			set_policy(*as, GP_UNW_CACHE_PER_THREAD);
	}
tables:
	slots = map(sizeof(*slots) * NSLOTS);
	stacks = map(sizeof(*stacks) * NSTACKS);
	frames = map(sizeof(*frames) * NFRAMES);
	ids = map(sizeof(*ids) * NFRAMES);
	corr_map = map(sizeof(*corr_map) * NCORR);
	if (py_mode != GP_PYSTACK_OFF) {
		code_slots = map(sizeof(*code_slots) * NCODE_SLOTS);
		codes = map(sizeof(*codes) * NCODES);
		names = map(NAMES_BYTES);
	}
	if (!slots || !stacks || !frames || !ids || !corr_map ||
	    (py_mode != GP_PYSTACK_OFF && (!code_slots || !codes || !names))) {
		gp_log("out of memory for call stacks; call stacks are off");
		unw_bt = NULL;
		return -1;
	}
	ready = 1;
	return 0;
}

int gp_unwind_py_mode(void)
{
	return ready ? py_mode : GP_PYSTACK_OFF;
}

/* Besides the launches (cupti_api.h): kernels added to graphs, launched later. */
static const CUpti_CallbackId driver_graph_add[] = {
	CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode,
	CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode_v2,
};

void gp_unwind_enable_callbacks(CUpti_SubscriberHandle sub, int all)
{
	if (!ready)
		return;
	if (all) {
		gp_cu.cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
		gp_cu.cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
	} else {
		/*
		 * Runtime launches go through these driver calls (same
		 * correlation id), so the driver side alone sees every launch
		 * with half the callbacks.
		 */
		for (size_t i = 0; i < gp_cupti_nlaunch_cbids; i++)
			gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
						  gp_cupti_launch_cbids[i]);
		for (size_t i = 0; i < sizeof(driver_graph_add) / sizeof(driver_graph_add[0]); i++)
			gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_graph_add[i]);
	}
	gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
	gp_cu.cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
}

void gp_unwind_disable_callbacks(CUpti_SubscriberHandle sub, int all)
{
	if (!ready)
		return;
	if (all) {
		gp_cu.cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
		gp_cu.cuptiEnableDomain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API);
	} else {
		for (size_t i = 0; i < gp_cupti_nlaunch_cbids; i++)
			gp_cu.cuptiEnableCallback(0, sub, CUPTI_CB_DOMAIN_DRIVER_API,
						  gp_cupti_launch_cbids[i]);
		for (size_t i = 0; i < sizeof(driver_graph_add) / sizeof(driver_graph_add[0]); i++)
			gp_cu.cuptiEnableCallback(0, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_graph_add[i]);
	}
}

static uint64_t hash_pcs(const uint64_t *pcs, int n, uint64_t h)
{
	h ^= 0xcbf29ce484222325ull;
	for (int i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h | 1; /* 0 marks an empty slot */
}

static int same(uint32_t id, const uint64_t *pcs, int n)
{
	struct stack_ent *e = &stacks[id];

	if (atomic_load_explicit(&e->n, memory_order_acquire) != (uint32_t)n)
		return 0;
	for (int i = 0; i < n; i++)
		if (frames[e->first + (uint32_t)i] != pcs[i])
			return 0;
	return 1;
}

/*
 * Lock-free: the index of code object `word` in codes[], adding it (and
 * copying its names) if new; 0 when the tables are full or it cannot be
 * read.  Same scheme as the stacks' slots.
 */
static uint32_t code_intern(uint64_t word)
{
	uint32_t ident = gp_py_code_ident(word);
	uint64_t key = (word & GP_PY_ADDR_MASK) | (uint64_t)(ident & 0x7fff) << 48 | 1ull << 63;
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	if (!ident)
		return 0;
	for (uint32_t i = 0; i < 64; i++) {
		struct slot *s = &code_slots[(h + i) & (NCODE_SLOTS - 1)];
		uint64_t cur = atomic_load_explicit(&s->hash, memory_order_acquire);
		uint32_t id;

		if (!cur) {
			uint64_t zero = 0;

			if (atomic_compare_exchange_strong(&s->hash, &zero, key)) {
				char file[PY_FILE_MAX], func[PY_FUNC_MAX];
				uint32_t first = 0, fl, nl, at;

				id = atomic_fetch_add(&next_code, 1);
				if (id >= NCODES ||
				    gp_py_code_names(word, file, sizeof(file), func, sizeof(func), &first)) {
					atomic_store_explicit(&s->id, UINT32_MAX, memory_order_release);
					return 0;
				}
				fl = (uint32_t)strlen(file) + 1;
				nl = (uint32_t)strlen(func) + 1;
				at = atomic_fetch_add(&next_name, fl + nl);
				if (at + fl + nl > NAMES_BYTES) {
					atomic_store_explicit(&s->id, UINT32_MAX, memory_order_release);
					return 0;
				}
				memcpy(names + at, file, fl);
				memcpy(names + at + fl, func, nl);
				codes[id].file = at;
				codes[id].func = at + fl;
				codes[id].first_line = first;
				atomic_store_explicit(&s->id, id, memory_order_release);
				return id;
			}
			cur = zero;
		}
		if (cur != key)
			continue;
		for (int spin = 0; !(id = atomic_load_explicit(&s->id, memory_order_acquire)); spin++)
			if (spin > 100000)
				return 0;
		return id == UINT32_MAX ? 0 : id;
	}
	return 0;
}

/* The frame id written for hashed word w (of a stack being added). */
static uint64_t frame_id(uint64_t w)
{
	uint32_t ci;

	if (!(w & GP_PY_TAG))
		return w;                  /* a pc */
	if ((w & GP_PY_ADDR_MASK) < 4096)
		return GP_PYFRAME_BIT | (w & GP_PY_ADDR_MASK);  /* no Python frame */
	ci = code_intern(w);
	return GP_PYFRAME_BIT | (uint64_t)ci << 32 | (ci ? gp_py_line(w) : 0);
}

/* Lock-free: the id of this stack, adding it if new; 0 when tables are full. */
static uint32_t intern(const uint64_t *pcs, int n, uint64_t ident)
{
	uint64_t h = hash_pcs(pcs, n, ident);

	for (uint32_t i = 0; i < 64; i++) {
		struct slot *s = &slots[(h + i) & (NSLOTS - 1)];
		uint64_t cur = atomic_load_explicit(&s->hash, memory_order_acquire);
		uint32_t id;

		if (!cur) {
			uint64_t zero = 0;

			if (atomic_compare_exchange_strong(&s->hash, &zero, h)) {
				uint32_t first = atomic_fetch_add(&next_frame, (uint32_t)n);

				id = atomic_fetch_add(&next_id, 1);
				if (id >= NSTACKS || first + (uint32_t)n > NFRAMES) {
					/* Full: the slot stays claimed with id 0 forever. */
					atomic_fetch_add(&dropped, 1);
					return 0;
				}
				for (int k = 0; k < n; k++) {
					frames[first + (uint32_t)k] = pcs[k];
					ids[first + (uint32_t)k] = frame_id(pcs[k]);
				}
				stacks[id].first = first;
				atomic_store_explicit(&stacks[id].n, (uint32_t)n, memory_order_release);
				atomic_store_explicit(&s->id, id, memory_order_release);
				return id;
			}
			cur = zero;
		}
		if (cur != h)
			continue;
		/* Claimed by another thread: its id appears within a few stores. */
		for (int spin = 0; !(id = atomic_load_explicit(&s->id, memory_order_acquire)); spin++)
			if (spin > 100000)
				return 0;
		if (same(id, pcs, n))
			return id;
	}
	atomic_fetch_add(&dropped, 1);
	return 0;
}

/* The word of "no Python frame on this thread": its name, read once. */
static uint64_t no_python_word(void)
{
	if (!my_thread_name) {
		uint32_t i = atomic_fetch_add(&next_thread_name, 1);
		char name[16] = { 0 };

		if (i >= NTHREAD_NAMES)
			i = NTHREAD_NAMES - 1;  /* shared by the threads past the table */
		if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && i < NTHREAD_NAMES - 1)
			memcpy(thread_names[i], name, sizeof(name));
		my_thread_name = i;
	}
	return GP_PY_TAG | my_thread_name;
}

/* Python frames only: n words into w. */
static int python_stack(uint64_t *w, int max, uint64_t *ident)
{
	int n = gp_py_walk(w, NULL, max, ident);

	if (n <= 0) {
		w[0] = no_python_word();
		*ident = 0;
		n = 1;
	}
	return n;
}

/*
 * Native frames with each call of the evaluation loop replaced by the
 * Python frames it runs (the frames of the thread's newest call first);
 * Python frames left over go last.  A thread without Python frames ends
 * with its no-Python-frame word.
 */
static int mixed_stack(uint64_t *w, int max, uint64_t *ident)
{
	void *pcs[MAX_NATIVE_MIXED];
	uint64_t py[MAX_PY];
	uint8_t entry[MAX_PY];
	int nn = unw_bt(pcs, MAX_NATIVE_MIXED), np = gp_py_walk(py, entry, MAX_PY, ident), k = 0, n = 0;

	for (int i = 0; i < nn && n < max; i++) {
		uint64_t pc = (uint64_t)(uintptr_t)pcs[i];

		if (k < np && gp_py_in_eval(pc)) {
			for (;;) {
				int last = entry[k];

				w[n++] = py[k++];
				if (last || k >= np || n >= max)
					break;
			}
		} else {
			w[n++] = pc;
		}
	}
	while (k < np && n < max)
		w[n++] = py[k++];
	if (np <= 0 && n < max)
		w[n++] = no_python_word();
	return n;
}

void gp_unwind_on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		      const CUpti_CallbackData *cd)
{
	uint64_t w[MAX_NATIVE_MIXED + MAX_PY];
	uint64_t ident = 0;
	uint32_t id;
	int n;

	(void)domain;
	(void)cbid;
	if (cd->callbackSite == CUPTI_API_EXIT) {
		if (depth && !--depth)
			cur_stack = cur_corr = 0;
		return;
	}
	if (depth++ && cd->correlationId == cur_corr)
		return; /* the driver call inside a runtime call: same launch */
	cur_corr = cd->correlationId;
	if (py_mode == GP_PYSTACK_PYTHON) {
		n = python_stack(w, MAX_PY, &ident);
	} else if (py_mode == GP_PYSTACK_MIXED) {
		n = mixed_stack(w, MAX_NATIVE_MIXED + MAX_PY, &ident);
	} else {
		void *pcs[MAX_DEPTH];

		n = unw_bt(pcs, MAX_DEPTH);
		for (int i = 0; i < n; i++)
			w[i] = (uint64_t)(uintptr_t)pcs[i];
	}
	id = n > 0 ? intern(w, n, ident) : 0;
	cur_stack = id;
	if (id)
		atomic_store_explicit(&corr_map[cur_corr & (NCORR - 1)],
				      (uint64_t)cur_corr << 32 | id, memory_order_relaxed);
}

void gp_unwind_corr(uint32_t correlation)
{
	uint64_t v;
	struct gp_rec_corr_stack *r;

	if (!corr_map || !correlation)
		return;
	v = atomic_load_explicit(&corr_map[correlation & (NCORR - 1)], memory_order_relaxed);
	if ((uint32_t)(v >> 32) != correlation || !(uint32_t)v)
		return;
	r = gp_emit(GP_REC_CORR_STACK, sizeof(*r));
	if (r) {
		r->correlation = correlation;
		r->stack = (uint32_t)v;
	}
}

/* Producer lock held. */
static void put_graph_node(const struct node_origin *o)
{
	struct gp_rec_graph_node *r = gp_emit(GP_REC_GRAPH_NODE, sizeof(*r));

	if (r) {
		r->node = o->node;
		r->graph_id = o->graph_id;
		r->stack = o->stack;
		r->correlation = o->corr;
		r->nvtx = o->nvtx;
	}
}

static void emit_graph_node(const struct node_origin *o)
{
	gp_ring_lock(&gp_rec.ring);
	put_graph_node(o);
	gp_ring_unlock(&gp_rec.ring);
}

static uint32_t node_slot(uint64_t node, uint32_t ncap)
{
	return (uint32_t)((node * 0x9e3779b97f4a7c15ull) >> 32) & (ncap - 1);
}

/* node_lock held. */
static struct node_origin *node_find(uint64_t node)
{
	if (!node_cap)
		return NULL;
	for (uint32_t j = node_slot(node, node_cap);; j = (j + 1) & (node_cap - 1)) {
		if (nodes[j].node == node)
			return &nodes[j];
		if (!nodes[j].node)
			return NULL;
	}
}

static void remember_node(const struct node_origin *o)
{
	struct node_origin *e;

	pthread_mutex_lock(&node_lock);
	if ((node_count + 1) * 2 > node_cap) {
		uint32_t ncap = node_cap ? node_cap * 2 : 1024;
		struct node_origin *nt = calloc(ncap, sizeof(*nt));

		if (!nt) {
			pthread_mutex_unlock(&node_lock);
			return;
		}
		for (uint32_t i = 0; i < node_cap; i++)
			if (nodes[i].node) {
				uint32_t j = node_slot(nodes[i].node, ncap);

				while (nt[j].node)
					j = (j + 1) & (ncap - 1);
				nt[j] = nodes[i];
			}
		free(nodes);
		nodes = nt;
		node_cap = ncap;
	}
	if (!(e = node_find(o->node))) {
		uint32_t j = node_slot(o->node, node_cap);

		while (nodes[j].node)
			j = (j + 1) & (node_cap - 1);
		e = &nodes[j];
		node_count++;
	}
	*e = *o;
	pthread_mutex_unlock(&node_lock);
}

static int lookup_node(uint64_t node, struct node_origin *out)
{
	struct node_origin *e;

	pthread_mutex_lock(&node_lock);
	if ((e = node_find(node)))
		*out = *e;
	pthread_mutex_unlock(&node_lock);
	return e != NULL;
}

void gp_unwind_on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
	const CUpti_GraphData *g = rd->resourceDescriptor;
	struct node_origin o;
	uint64_t node = 0, orig = 0;
	uint32_t graph_id = 0;

	if (!g || gp_cu.cuptiGetGraphNodeId(g->node, &node) != CUPTI_SUCCESS || !node)
		return;
	if (g->graph)
		gp_cu.cuptiGetGraphId(g->graph, &graph_id);
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
		o.node = node;
		o.nvtx = gp_nvtxtool_current();
		o.stack = o.corr = 0;
		o.graph_id = graph_id;
		if (ready) {
			/* Only nodes made inside a traced call (capture or
			 * add-node); instantiation makes nodes outside one. */
			if (!depth || !cur_stack)
				return;
			o.stack = cur_stack;
			o.corr = cur_corr;
			remember_node(&o);
			emit_graph_node(&o);
		} else {
			/* No API callbacks to tell capture from instantiation:
			 * remember it; the clones that run are emitted. */
			remember_node(&o);
		}
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
		if (gp_cu.cuptiGetGraphNodeId(g->originalNode, &orig) != CUPTI_SUCCESS ||
		    !lookup_node(orig, &o))
			return;
		o.node = node;
		o.graph_id = graph_id;
		remember_node(&o);
		emit_graph_node(&o);
	}
}

/* Producer lock held: whether pc was symbolized before (and mark it). */
static int pc_known(uint64_t pc)
{
	if ((pc_count + 1) * 2 > pc_cap) {
		uint32_t ncap = pc_cap ? pc_cap * 2 : 4096;
		uint64_t *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return 1; /* cannot track: do not emit duplicates either */
		for (uint32_t i = 0; i < pc_cap; i++)
			if (pc_seen[i]) {
				uint32_t j = (uint32_t)(pc_seen[i] * 0x9e3779b97f4a7c15ull >> 40) & (ncap - 1);

				while (nt[j])
					j = (j + 1) & (ncap - 1);
				nt[j] = pc_seen[i];
			}
		free(pc_seen);
		pc_seen = nt;
		pc_cap = ncap;
	}
	for (uint32_t j = (uint32_t)(pc * 0x9e3779b97f4a7c15ull >> 40) & (pc_cap - 1);;
	     j = (j + 1) & (pc_cap - 1)) {
		if (pc_seen[j] == pc)
			return 1;
		if (!pc_seen[j]) {
			pc_seen[j] = pc;
			pc_count++;
			return 0;
		}
	}
}

/* What dl_iterate_phdr finds of the object that holds pc. */
struct find_obj {
	uint64_t pc;
	int found;
	char name[PATH_MAX];       /* dlpi_name, "" for the program */
	uint32_t nid;
	uint8_t id[GP_BUILD_ID_MAX];
};

/* The NT_GNU_BUILD_ID note among the notes at p (len bytes, in memory). */
static void note_build_id(const unsigned char *p, uint64_t len, uint64_t align, struct find_obj *o)
{
	uint64_t at = 0;

	while (at + sizeof(ElfW(Nhdr)) <= len) {
		ElfW(Nhdr) nh;
		uint64_t name_at, desc_at, next;

		memcpy(&nh, p + at, sizeof(nh));
		name_at = at + sizeof(nh);
		desc_at = name_at + ((nh.n_namesz + align - 1) & ~(align - 1));
		next = desc_at + ((nh.n_descsz + align - 1) & ~(align - 1));
		if (desc_at > len || next > len || next <= at)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name_at, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= GP_BUILD_ID_MAX) {
			memcpy(o->id, p + desc_at, nh.n_descsz);
			o->nid = nh.n_descsz;
			return;
		}
		at = next;
	}
}

static int find_obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_obj *o = arg;
	int in = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !in; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = (uint64_t)info->dlpi_addr + ph->p_vaddr;

		in = ph->p_type == PT_LOAD && o->pc >= lo && o->pc - lo < ph->p_memsz;
	}
	if (!in)
		return 0;
	o->found = 1;
	snprintf(o->name, sizeof(o->name), "%s", info->dlpi_name ? info->dlpi_name : "");
	/* Notes live in a loaded segment: read them where they are mapped. */
	for (int i = 0; i < info->dlpi_phnum && !o->nid; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE)
			note_build_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
				      ph->p_memsz, ph->p_align == 8 ? 8 : 4, o);
	}
	return 1;
}

/* Producer lock held: write e's MODULE record.  0, or -1 when the ring refused it. */
static int put_module(const struct module_ent *e)
{
	uint32_t pad = (e->nid + 7) & ~7u;
	struct gp_rec_module *r = gp_emit(GP_REC_MODULE, (uint32_t)(sizeof(*r) + pad));

	if (!r)
		return -1;
	r->h.aux = e->nid;
	r->base = e->base;
	r->module = e->module;
	r->path = e->path;
	memset(r + 1, 0, pad);
	memcpy(r + 1, e->id, e->nid);
	return 0;
}

/*
 * Producer lock held: the MODULE record of the module at base that holds
 * pc, emitted once (before the first FRAME of it).  Its absolute path is
 * /proc/self/exe for the program, else the loader's name made absolute;
 * its build-id is read from the notes mapped in memory.
 */
static void emit_module(uint64_t pc, uint64_t base, uint32_t module)
{
	static struct find_obj o;          /* producer lock held: one at a time */
	struct module_ent *e;
	char *abs = NULL;
	uint32_t i;

	for (i = 0; i < nmodules; i++)
		if (modules[i].base == base && modules[i].module == module)
			return;
	if (nmodules == capmodules) {
		uint32_t ncap = capmodules ? capmodules * 2 : 64;
		struct module_ent *n = realloc(modules, ncap * sizeof(*n));

		if (!n)
			return;        /* readers print module+offset for its frames */
		modules = n;
		capmodules = ncap;
	}
	e = &modules[nmodules];
	memset(e, 0, sizeof(*e));
	e->base = base;
	e->module = module;
	memset(&o, 0, sizeof(o));
	o.pc = pc;
	dl_iterate_phdr(find_obj_cb, &o);
	if (o.found && !o.name[0]) {
		ssize_t n = readlink("/proc/self/exe", o.name, sizeof(o.name) - 1);

		o.name[n > 0 ? n : 0] = '\0';
		e->path = o.name[0] == '/' ? gp_emit_string(o.name) : 0;
	} else if (o.found && o.name[0] == '/') {
		e->path = gp_emit_string(o.name);
	} else if (o.found && (abs = realpath(o.name, NULL))) {
		e->path = gp_emit_string(abs);
		free(abs);
	}
	if (o.found && o.nid) {
		e->nid = o.nid;
		memcpy(e->id, o.id, o.nid);
	}
	nmodules++;
	put_module(e);
}

static void emit_frame(uint64_t pc)
{
	struct gp_rec_frame *r;
	uint32_t module = 0, function = 0;
	uint64_t base = 0, sym = 0;
	Dl_info info;

	/* A return address: look up the call instruction before it. */
	if (dladdr((void *)(uintptr_t)(pc - 1), &info)) {
		module = gp_emit_string(info.dli_fname);
		function = gp_emit_string(info.dli_sname);
		base = (uint64_t)(uintptr_t)info.dli_fbase;
		sym = (uint64_t)(uintptr_t)info.dli_saddr;
	}
	if (base && module)
		emit_module(pc - 1, base, module);
	r = gp_emit(GP_REC_FRAME, sizeof(*r));
	if (!r)
		return;
	r->id = pc;
	r->offset = base ? pc - base : 0;
	r->module = module;
	r->function = function;
	r->sym_offset = sym ? (uint32_t)(pc - sym) : 0;
	if (nsent_frames == capsent_frames) {
		uint32_t ncap = capsent_frames ? capsent_frames * 2 : 1024;
		struct gp_rec_frame *n = realloc(sent_frames, ncap * sizeof(*n));

		if (!n)
			return; /* a later file lacks this frame's name, nothing worse */
		sent_frames = n;
		capsent_frames = ncap;
	}
	sent_frames[nsent_frames++] = *r;
}

static void emit_stack(uint32_t id, uint32_t n)
{
	struct gp_rec_stack *r = gp_emit(GP_REC_STACK, (uint32_t)(sizeof(*r) + n * sizeof(uint64_t)));

	if (!r)
		return;
	r->h.aux = n;
	r->id = id;
	memcpy(r + 1, &ids[stacks[id].first], n * sizeof(uint64_t));
}

static void emit_pyframe(uint64_t id);

void gp_unwind_preamble(void)
{
	if (!ready)
		return;
	for (uint32_t i = 0; i < nmodules; i++)
		if (put_module(&modules[i]))
			return;
	for (uint32_t i = 0; i < nsent_frames; i++) {
		struct gp_rec_frame *r = gp_emit(GP_REC_FRAME, sizeof(*r));

		if (!r)
			return;
		memcpy((char *)r + sizeof(r->h), (const char *)&sent_frames[i] + sizeof(r->h),
		       sizeof(*r) - sizeof(r->h));
	}
	for (uint32_t id = 1; id < emitted_upto; id++) {
		uint32_t n = atomic_load_explicit(&stacks[id].n, memory_order_acquire);

		if (!n)
			continue;
		/* Python frames are not among the native ones kept above. */
		for (uint32_t i = 0; i < n; i++)
			if (ids[stacks[id].first + i] & GP_PYFRAME_BIT)
				emit_pyframe(ids[stacks[id].first + i]);
		emit_stack(id, n);
	}
	/* Where graph nodes were made: a graph launched in a later window's file. */
	pthread_mutex_lock(&node_lock);
	for (uint32_t i = 0; i < node_cap; i++)
		if (nodes[i].node && nodes[i].stack && nodes[i].stack < emitted_upto)
			put_graph_node(&nodes[i]);
	pthread_mutex_unlock(&node_lock);
}

static void emit_pyframe(uint64_t id)
{
	struct gp_rec_pyframe *r;
	uint32_t ci = (uint32_t)(id >> 32) & 0x7fffffff, file = 0, function = 0, first = 0;

	if (ci) {
		file = gp_emit_string(names + codes[ci].file);
		function = gp_emit_string(names + codes[ci].func);
		first = codes[ci].first_line;
	} else if ((uint32_t)id) {
		char text[64];
		uint32_t t = (uint32_t)id < NTHREAD_NAMES ? (uint32_t)id : NTHREAD_NAMES - 1;

		snprintf(text, sizeof(text), "<no Python frame: thread %s>",
			 thread_names[t][0] ? thread_names[t] : "?");
		function = gp_emit_string(text);
	} else {
		function = gp_emit_string("<unreadable Python frame>");
	}
	r = gp_emit(GP_REC_PYFRAME, sizeof(*r));
	if (!r)
		return;
	r->id = id;
	r->file = file;
	r->function = function;
	r->line = ci ? (uint32_t)id : 0;
	r->first_line = first;
}

void gp_unwind_emit(void)
{
	uint32_t end;

	if (!ready)
		return;
	end = atomic_load(&next_id);
	if (end > NSTACKS)
		end = NSTACKS;
	for (; emitted_upto < end; emitted_upto++) {
		struct stack_ent *e = &stacks[emitted_upto];
		uint32_t n = atomic_load_explicit(&e->n, memory_order_acquire);

		if (!n)
			break; /* still being filled: next time */
		for (uint32_t i = 0; i < n; i++) {
			uint64_t f = ids[e->first + i];

			if (pc_known(f))
				continue;
			if (f & GP_PYFRAME_BIT)
				emit_pyframe(f);
			else
				emit_frame(f);
		}
		emit_stack(emitted_upto, n);
	}
	if (atomic_load(&dropped))
		gp_debug("%llu call stacks did not fit the stack table",
			 (unsigned long long)atomic_load(&dropped));
}
