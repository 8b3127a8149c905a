/*
 * "export --format chrome": Chrome Trace Event JSON, which Perfetto and
 * chrome://tracing open.  GPU activities and API calls stream out as the
 * model reads them; NVTX ranges, marks and names follow from the finished
 * analysis.  Memory: a little per process, thread and stream, the NVTX
 * ranges' external sorts' runs (views/tracks.h ga_range_layout; ranges on
 * disk, none in memory, model/ranges.h spill; the marks too), plus the
 * launch index (model/ranges.h: 8 bytes per correlation id, for
 * the last GA_RANGES_LWIN ids of a process in a trace read once) behind
 * the API-to-activity flow arrows, at
 * most 4096 kernel events' templates (kernel_event(): their names' length
 * and a few hundred bytes each), and 256 API calls' event heads
 * (api_direct()).
 *
 * Layout: one process per traced process, named by rank, command line,
 * pid and host (so that merged jobs are never ambiguous), sorted by rank,
 * with a pid of its own however many processes share one (pid_for());
 * one track per GPU stream (thread ids above any Linux tid), named
 * "cuda:D stream S", sorted after the host threads; host threads by their
 * tids and, where the trace has them, names.
 *
 * Every track nests, as Perfetto needs (test/golden/nest-checks.py): a
 * host thread's track holds its API calls and its push/pop ranges of the
 * default NVTX domain; the push/pop ranges of another domain, whose stack
 * is its own and may cross the default one's (NCCL's around a step), are
 * on a track of the thread and domain, "NVTX D [tid T]".  A slice that
 * would cross one already on its track goes on the track's next lane
 * (another thread id, named after the track with "(overlapping)"), and so
 * does a GPU activity that overlaps one on its stream's track (a kernel
 * profiled by kernel replay has no GPU times: it is placed at its launch
 * call).  The ranges' lanes are laid out at the first event, when every
 * range is sorted (laid_out()); API calls and activities find theirs as they
 * stream, each lane keeping its last GA_LANE_KEEP top-level slices (older
 * ones summed up in one span that nothing may cross: see ga_lane_fits()
 * in views/tracks.h, which holds this layout for the Perfetto export too).
 * A flow arrow starts on the launching thread's own track.
 *
 * Times: "ts" and "dur" are microseconds with three decimals, relative to
 * a base (the whole second at or before the traces' first record, written
 * as otherData.gpuprof_time_base_ns; of a trace read once, the first
 * time its chunk headers give, model/analysis.h first_ns): a double then
 * holds every value to the nanosecond, so readers that parse ts as a
 * double and round to nanoseconds (Perfetto) get the recorded times
 * exactly.  Absolute epoch
 * microseconds (about 1.8e15) would not fit.
 *
 * Events: GPU activities, API calls and push/pop NVTX ranges are complete
 * events ("X"); start/end NVTX ranges, which may end on another thread and
 * overlap push/pop ranges, are async events ("b"/"e"); NVTX marks are
 * instant events ("i"); each GPU activity whose API call is in the trace
 * gets a flow arrow from that call ("s" then "f", binding to the enclosing
 * slices, as Kineto writes them); memory in use, where the traces have
 * allocations and frees, is a counter ("C") per device; launches profiled
 * for hardware metrics are slices on a track of their own per device, with
 * their values in args, and counters of achieved FLOP/s and DRAM bytes/s
 * per device (see metrics_launch()); metrics sampled over time
 * (--gpu-metrics, --gpu-telemetry) are a counter per device and metric
 * (gpu_counters()).  Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/formats.h"
#include "views/tracks.h"

#define GPU_TID_BASE GA_GPU_TID_BASE
#define HOST_TID_BASE GA_HOST_TID_BASE
#define NS_PER_S 1000000000ull
/* What picks a kernel's template (struct ktmpl key): 7 ids, 9 configuration values, flags. */
#define KT_KEY 17

/* The forms of a string a GPU activity's event writes (qname()). */
enum {
	Q_CSTR,  /* as stored, to its first NUL (ga_jw_kcstr()) */
	Q_SID,   /* as stored, its whole length (ksid()) */
	Q_FULL,  /* ga_strtab_full() */
	Q_SHORT, /* ga_strtab_short() */
	Q_FORMS
};

/* A string's quoted forms: offset + 1 in qtext, 0 not made yet. */
struct qname {
	size_t off[Q_FORMS];
	size_t len[Q_FORMS];
};

struct chrome {
	/* Strings as quoted JSON, made once per string id and form: offset + 1 in qtext, 0 none. */
	struct ga_buf qtext;
	struct qname *q;
	size_t capq;
	struct ga_map streams;     /* (proc << 32 | device, context << 32 | stream) -> lane + 1 */
	struct {                   /* streams recently looked up: they interleave, a few at a time */
		uint64_t a, b;
		uint32_t head; /* the track's first lane + 1, which never changes; 0 none */
	} scache[64];
	uint32_t nstreams;         /* GPU thread ids handed out */
	struct ga_map threads;     /* (proc, tid) -> the thread's API lane + 1 */
	struct {                   /* threads recently looked up: (proc, tid) as scache */
		uint32_t a, b;
		uint32_t head;
	} tcache[64];
	uint32_t nhost;            /* host thread ids handed out */
	struct ga_lanes lanes;
	int laid_out;              /* the ranges' tracks chosen (laid_out()) */
	struct ga_range_layout rl; /* the push/pop ranges' tracks */
	struct ga_proc_pids pp;    /* per process: its pid, made unique */
	uint64_t base;             /* trace time of ts 0 */
	int based;                 /* base chosen */
	uint64_t flows;            /* flow ids handed out */
	/*
	 * Digits made once and copied (most of an activity's event is numbers
	 * that repeat: its track's, its stream's, its kernel's launch
	 * configuration), each table direct-mapped by a hash of its values.
	 */
	struct {
		char s[32]; /* P,"tid":T; first: copied 32 bytes at a time (put_pidtid()) */
		uint32_t pid, tid;
		uint8_t len; /* 0 empty */
	} ptcache[64];
	/*
	 * API calls' start times, by trace time, where their events wrote
	 * them, for their flows' first events (an activity comes soon after
	 * its call): put_ts().
	 */
	struct tstxt {
		uint64_t t;
		uint64_t pos; /* ga_jw_pos() */
		uint8_t len;  /* 0 empty */
	} apits[64];
	/*
	 * An API call's event up to its start time, made once per name, pid
	 * and tid met lately (api_direct()).
	 */
	struct ahead {
		char s[160];
		uint32_t name, pid, tid;
		uint8_t len; /* 0 empty */
	} ahead[256];
	struct {
		uint32_t dev, ctx, stream;
		uint8_t len; /* 0 empty */
		char s[63];  /* D,"context":C,"stream":S */
	} dcache[64];
	uint8_t kindlen[GA_ACT_KIND_COUNT]; /* a kind's name's length + 1; 0 not yet, 255 not plain */
	/*
	 * A kernel's event but its times and correlation, made once per
	 * kernel, track, stream, launch configuration and launch site met
	 * lately (kernel_event()): its text before "ts" and after the
	 * correlation, in s.
	 */
	struct ktmpl {
		/* name, pid, tid, device, context, stream, site, configuration (9), flags */
		uint32_t key[KT_KEY];
		uint8_t valid;
		char *s;
		size_t cap, npre, nsuf;
	} kt[4096];
	struct kcfg {
		uint32_t v[9];         /* grid, block, registers, static_smem, dynamic_smem */
		uint8_t replayed, len; /* len 0 empty */
		char s[222];           /* ,"grid":[..] up to dynamic_smem and "replayed" */
	} kcache[64];
};

/* The base: chosen at the first event, once the index pass has seen every file. */
static uint64_t base_of(struct ga_export *e)
{
	struct chrome *c = e->state;

	if (!c->based) {
		uint64_t first = e->an->first_ns;

		c->base = first == UINT64_MAX ? 0 : first / NS_PER_S * NS_PER_S;
		c->based = 1;
	}
	return c->base;
}

/*
 * Trace time t (not before the base b) as put_milli() writes it, at p in
 * the writer's buffer (8 bytes of room more); where, kept in *k, for the
 * next write of the same time (put_ts()).
 */
static inline char *put_ts_keep(char *p, const struct ga_jw *w, struct tstxt *k, uint64_t t,
				uint64_t b)
{
	char *q = ga_jw_put_milli_room(p, t - b);

	k->t = t;
	k->pos = ga_jw_pos(w, p);
	k->len = (uint8_t)(q - p);
	return q;
}

/* An API call's start time kept by put_ts_keep() in c->apits: its slot. */
static inline struct tstxt *api_ts_slot(struct chrome *c, uint64_t t)
{
	return &c->apits[(t * 0x9e3779b97f4a7c15ull) >> 58];
}

/*
 * Time t (not before b) at p (24 bytes of room more): copied from where *k
 * says it was written when that is t's and still in the buffer (read
 * well after it was written: a copy of bytes just stored stalls the load).
 */
static inline char *put_ts(char *p, const struct ga_jw *w, const struct tstxt *k, uint64_t t,
			   uint64_t b)
{
	const char *at;

	if (k && k->len && k->t == t && (at = ga_jw_at(w, k->pos, 24))) {
		memcpy(p, at, 24);
		return p + k->len;
	}
	return ga_jw_put_milli_room(p, t - b);
}

/* A trace time as relative microseconds with three decimals, exact to the ns. */
static void kts(struct ga_export *e, const char *key, uint64_t t)
{
	uint64_t b = base_of(e);

	ga_jw_key(&e->jw, key);
	if (t >= b) {
		ga_jw_milli(&e->jw, t - b);
	} else {
		/* Earlier than the base (a clock step): negative, still exact. */
		ga_jw_rawf(&e->jw, "-%" PRIu64 ".%03u", (b - t) / 1000, (unsigned)((b - t) % 1000));
	}
}

static void kdur(struct ga_jw *w, uint64_t ns)
{
	ga_jw_key(w, "dur");
	ga_jw_milli(w, ns);
}

static void ksid(struct ga_jw *w, const char *key, const struct ga_model *m, uint32_t id)
{
	ga_jw_kstr(w, key, ga_model_str(m, id), ga_strtab_len(&m->strs, id));
}

/* A metadata event's head: name, ph "M", cat, pid (and tid when not NULL). */
static void meta_head(struct ga_jw *w, const char *name, uint32_t pid, const uint32_t *tid)
{
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_kcstr(w, "name", name);
	ga_jw_kcstr(w, "ph", "M");
	ga_jw_kcstr(w, "cat", "__metadata");
	ga_jw_ku64(w, "pid", pid);
	if (tid)
		ga_jw_ku64(w, "tid", *tid);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
}

/* A GPU track's name and its place (its tid) among the process's tracks. */
static void gpu_track_meta(struct ga_jw *w, uint32_t pid, uint32_t tid, const char *name)
{
	meta_head(w, "thread_name", pid, &tid);
	ga_jw_kcstr(w, "name", name);
	ga_jw_end(w);
	ga_jw_end(w);
	meta_head(w, "thread_sort_index", pid, &tid);
	ga_jw_ku64(w, "sort_index", tid);
	ga_jw_end(w);
	ga_jw_end(w);
}

/* A host track's name; no sort index: it sorts by its thread id, after the threads'. */
static void host_track_meta(struct ga_jw *w, uint32_t pid, uint32_t tid, const char *name)
{
	meta_head(w, "thread_name", pid, &tid);
	ga_jw_kcstr(w, "name", name);
	ga_jw_end(w);
	ga_jw_end(w);
}

/*
 * The thread id for [s, t) on a track: *head is its first lane + 1 (0: a
 * new track, whose first lane gets tid0, or when tid0 is UINT32_MAX a new
 * GPU thread id named name).  It goes on the first lane it fits in (the
 * first only when first_ok), else on a new one, named name "
 * (overlapping)".  Returns 0, or -1 out of memory; 1, with nothing done,
 * when name is NULL and a track or lane must be made: call again with it.
 */
static int place(struct ga_export *e, uint32_t pid, uint32_t *head, uint32_t tid0, int gpu,
		 int first_ok, const char *name, uint64_t s, uint64_t t, uint32_t *tid)
	__attribute__((noinline));

/* place(), its usual case inline: the slice fits on the lane it came to last time. */
static inline int place_fast(struct ga_export *e, uint32_t pid, uint32_t *head, uint32_t tid0,
			     int gpu, int first_ok, const char *name, uint64_t s, uint64_t t,
			     uint32_t *tid)
{
	if (*head && first_ok) {
		struct chrome *c = e->state;
		struct ga_lane *l = &c->lanes.v[*head - 1];

		if (ga_lane_after(l, s)) {
			ga_lane_append(l, s, t);
			*tid = l->tid;
			return 0;
		}
	}
	return place(e, pid, head, tid0, gpu, first_ok, name, s, t, tid);
}

static int place(struct ga_export *e, uint32_t pid, uint32_t *head, uint32_t tid0, int gpu,
		 int first_ok, const char *name, uint64_t s, uint64_t t, uint32_t *tid)
{
	struct chrome *c = e->state;
	char lname[160];
	long i, last;

	if (*head) {
		/* The usual case: the slice fits on the lane it came to last time. */
		struct ga_lane *l = &c->lanes.v[*head - 1];

		if (first_ok && ga_lane_after(l, s)) {
			ga_lane_append(l, s, t);
			*tid = l->tid;
			return 0;
		}
	}
	if (!*head) {
		if (!name)
			return 1;
		if (tid0 == UINT32_MAX) {
			tid0 = GPU_TID_BASE + c->nstreams++;
			gpu_track_meta(&e->jw, pid, tid0, name);
		}
		if ((i = ga_lanes_add(&c->lanes, -1, tid0)) < 0)
			return -1;
		*head = (uint32_t)i + 1;
	}
	i = ga_lanes_find(&c->lanes, (long)*head - 1, !gpu, 0, first_ok, s, t, &last);
	if (i < 0) {
		uint32_t ntid;

		if (!name)
			return 1;
		ntid = gpu ? GPU_TID_BASE + c->nstreams++ : HOST_TID_BASE + c->nhost++;

		if ((i = ga_lanes_add(&c->lanes, last, ntid)) < 0)
			return -1;
		snprintf(lname, sizeof(lname), "%s (overlapping)", name);
		if (gpu)
			gpu_track_meta(&e->jw, pid, ntid, lname);
		else
			host_track_meta(&e->jw, pid, ntid, lname);
	}
	ga_lane_put(&c->lanes.v[i], s, t);
	*tid = c->lanes.v[i].tid;
	return 0;
}

/* First sight of a process: give it a unique pid, a name and a sort index. */
static int proc_seen(struct ga_export *e, struct ga_model *m, uint32_t proc)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	const struct ga_proc *p = &m->procs[proc];
	struct ga_buf b = { 0 };
	uint32_t pid;
	int r = ga_proc_pids_see(&c->pp, proc, p->pid, &pid);

	if (r <= 0)
		return r;
	if (ga_track_proc_name(m, p, &b)) {
		ga_buf_free(&b);
		return -1;
	}
	meta_head(w, "process_name", pid, NULL);
	ga_jw_kstr(w, "name", b.p, b.len);
	ga_jw_end(w);
	ga_jw_end(w);
	ga_buf_free(&b);
	/* By rank, then in the order the files were given. */
	meta_head(w, "process_sort_index", pid, NULL);
	ga_jw_ku64(w, "sort_index", p->rank != GA_NO_RANK ? p->rank : (uint64_t)1 << 31 | proc);
	ga_jw_end(w);
	ga_jw_end(w);
	if (p->rank != GA_NO_RANK) {
		meta_head(w, "process_labels", pid, NULL);
		ga_buf_printf(&b, "rank %u", p->rank);
		ga_jw_kstr(w, "labels", b.p ? b.p : "", b.len);
		ga_buf_free(&b);
		ga_jw_end(w);
		ga_jw_end(w);
	}
	return 0;
}

/* The thread id of a's lane of its stream's track. */
static __attribute__((noinline)) int stream_track_any(struct ga_export *e, const struct ga_act *a,
						      uint32_t pid, uint32_t *tid)
{
	struct chrome *c = e->state;
	uint64_t ka = (uint64_t)a->proc << 32 | a->device_id;
	uint64_t kb = (uint64_t)a->context << 32 | a->stream;
	size_t ci = (a->stream ^ a->device_id * 7u ^ a->proc * 13u) % 64;
	uint32_t *slot, head;
	char tname[64];
	int r;

	if (c->scache[ci].head && c->scache[ci].a == ka && c->scache[ci].b == kb) {
		head = c->scache[ci].head;
		slot = &head;
	} else {
		if (ga_map_insert(&c->streams, ka, kb, &slot) < 0)
			return -1;
		if (*slot) {
			c->scache[ci].a = ka;
			c->scache[ci].b = kb;
			c->scache[ci].head = *slot;
		}
	}
	/* The name only where a track or lane is made (place() says 1 without it). */
	if ((r = place_fast(e, pid, slot, UINT32_MAX, 1, 1, NULL, a->start, a->end, tid)) != 1)
		return r;
	snprintf(tname, sizeof(tname), "cuda:%u stream %u", a->device_id, a->stream);
	return place(e, pid, slot, UINT32_MAX, 1, 1, tname, a->start, a->end, tid);
}

/*
 * stream_track_any(), its usual cases inline: a stream met lately, on its
 * track's first lane or, overlapping the last slice there, the second.
 */
static inline int stream_track(struct ga_export *e, const struct ga_act *a, uint32_t pid,
			       uint32_t *tid)
{
	struct chrome *c = e->state;
	size_t ci = (a->stream ^ a->device_id * 7u ^ a->proc * 13u) % 64;

	if (c->scache[ci].head && c->scache[ci].a == ((uint64_t)a->proc << 32 | a->device_id) &&
	    c->scache[ci].b == ((uint64_t)a->context << 32 | a->stream)) {
		struct ga_lane *l = &c->lanes.v[c->scache[ci].head - 1];

		if (!ga_lane_after(l, a->start)) {
			/*
			 * It overlaps the last slice kept on the first lane (which then
			 * cannot take it: place() would find the next lane), an
			 * activity overlapping the one before on its stream: the
			 * next lane when it goes after everything there.
			 */
			if (!l->next || a->end <= l->s[l->off + l->n - 1])
				return stream_track_any(e, a, pid, tid);
			l = &c->lanes.v[l->next - 1];
			if (!ga_lane_after(l, a->start))
				return stream_track_any(e, a, pid, tid);
		}
		ga_lane_append(l, a->start, a->end);
		*tid = l->tid;
		return 0;
	}
	return stream_track_any(e, a, pid, tid);
}

/*
 * The tracks of the push/pop ranges (ga_range_layout_build()), once:
 * spilled, when the scan is done (ready()); kept, at the first event.
 */
static int laid_out(struct ga_export *e)
{
	struct chrome *c = e->state;

	if (c->laid_out)
		return 0;
	c->laid_out = 1;
	/* Spilled, a filter reads each activity's ranges from their index (ranges.h ix). */
	c->rl.want_index = e->an->rg.spill && ga_analysis_filtered(e->an);
	return ga_range_layout_build(&c->rl, &e->an->rg, &c->nhost);
}

/* Spilled ranges: laid out once scanned (ranges.h ix). */
static int ready(void *ctx)
{
	return laid_out(ctx);
}

/* A flow from the API call that launched a (on its host thread) to a itself. */
static void flow(struct ga_export *e, uint32_t pid, uint32_t api_tid, uint64_t api_t,
		 uint32_t gpu_tid, uint64_t t)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint64_t id;

	id = ++c->flows;

	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_kcstr(w, "name", "launch");
	ga_jw_kcstr(w, "cat", "flow");
	ga_jw_kcstr(w, "ph", "s");
	ga_jw_ku64(w, "id", id);
	ga_jw_ku64(w, "pid", pid);
	ga_jw_ku64(w, "tid", api_tid);
	kts(e, "ts", api_t);
	ga_jw_end(w);
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_kcstr(w, "name", "launch");
	ga_jw_kcstr(w, "cat", "flow");
	ga_jw_kcstr(w, "ph", "f");
	ga_jw_kcstr(w, "bp", "e");
	ga_jw_ku64(w, "id", id);
	ga_jw_ku64(w, "pid", pid);
	ga_jw_ku64(w, "tid", gpu_tid);
	kts(e, "ts", t);
	ga_jw_end(w);
}

static void triple(struct ga_jw *w, const char *key, const uint32_t v[3])
{
	ga_jw_key(w, key);
	ga_jw_arr(w, GA_JW_COMPACT);
	ga_jw_u64(w, v[0]);
	ga_jw_u64(w, v[1]);
	ga_jw_u64(w, v[2]);
	ga_jw_end(w);
}

/* ASCII without quotes, backslashes or controls: JSON as it is. */
static int plain(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\')
			return 0;
	}
	return 1;
}

/* A short identifier (a memory kind's key) that needs no escaping. */
static int key_ok(const char *s)
{
	size_t n = strlen(s);

	return n <= 64 && plain(s, n);
}

/*
 * String id in form f as quoted JSON, made once: its offset + 1 in
 * c->qtext (0 out of memory) and its length.  An offset, not a pointer:
 * the next string made may move qtext.
 */
static size_t qname(struct chrome *c, struct ga_model *m, uint32_t id, int f, size_t *len)
{
	if (id >= c->capq) {
		size_t old = c->capq;

		if (ga_util_grow(&c->q, &c->capq, (size_t)id + 1, sizeof(*c->q)))
			return 0;
		memset(c->q + old, 0, (c->capq - old) * sizeof(*c->q));
	}
	if (!c->q[id].off[f]) {
		const char *s = f == Q_FULL  ? ga_strtab_full(&m->strs, id) :
				f == Q_SHORT ? ga_strtab_short(&m->strs, id) :
					       ga_model_str(m, id);
		size_t n = f == Q_SID ? ga_strtab_len(&m->strs, id) : strlen(s), at = c->qtext.len;

		if (plain(s, n) ? ga_buf_put(&c->qtext, "\"", 1) || ga_buf_put(&c->qtext, s, n) ||
					  ga_buf_put(&c->qtext, "\"", 1) :
				  ga_json_escape(&c->qtext, s, n))
			return 0;
		c->q[id].off[f] = at + 1;
		c->q[id].len[f] = c->qtext.len - at;
	}
	*len = c->q[id].len[f];
	return c->q[id].off[f];
}

/* `P,"tid":T` at p, made once per pid and tid met lately. */
static inline char *put_pidtid(char *p, struct chrome *c, uint32_t pid, uint32_t tid)
{
	size_t i = (tid ^ pid * 31u) % 64;

	if (c->ptcache[i].len == 0 || c->ptcache[i].pid != pid || c->ptcache[i].tid != tid) {
		char *q = c->ptcache[i].s;

		q = ga_jw_put_u64(q, pid);
		q = GA_JW_LIT(q, ",\"tid\":");
		q = ga_jw_put_u64(q, tid);
		c->ptcache[i].pid = pid;
		c->ptcache[i].tid = tid;
		c->ptcache[i].len = (uint8_t)(q - c->ptcache[i].s);
	}
	/* All 32 bytes, the rest overwritten next: no call to memcpy (p has room, ga_jw_direct()). */
	memcpy(p, c->ptcache[i].s, sizeof(c->ptcache[i].s));
	return p + c->ptcache[i].len;
}

/* `D,"context":C,"stream":S` at p, made once per stream met lately. */
static inline char *put_devstream(char *p, struct chrome *c, const struct ga_act *a)
{
	size_t i = (a->stream ^ a->device_id * 7u ^ a->context * 131u) % 64;

	if (c->dcache[i].len == 0 || c->dcache[i].dev != a->device_id ||
	    c->dcache[i].ctx != a->context || c->dcache[i].stream != a->stream) {
		char *q = c->dcache[i].s;

		q = ga_jw_put_u64(q, a->device_id);
		q = GA_JW_LIT(q, ",\"context\":");
		q = ga_jw_put_u64(q, a->context);
		q = GA_JW_LIT(q, ",\"stream\":");
		q = ga_jw_put_u64(q, a->stream);
		c->dcache[i].dev = a->device_id;
		c->dcache[i].ctx = a->context;
		c->dcache[i].stream = a->stream;
		c->dcache[i].len = (uint8_t)(q - c->dcache[i].s);
	}
	return ga_jw_put(p, c->dcache[i].s, c->dcache[i].len);
}

/* A kernel's launch configuration as its args write it, made once per configuration met lately. */
static inline char *put_kcfg(char *p, struct chrome *c, const struct gp_rec_kernel *k)
{
	uint32_t v[9] = { k->grid[0], k->grid[1], k->grid[2],
			  k->block[0], k->block[1], k->block[2],
			  k->registers, k->static_smem, k->dynamic_smem };
	uint8_t rp = (k->flags & GP_ACT_REPLAYED) != 0;
	uint32_t h = rp;
	struct kcfg *e;

	for (int i = 0; i < 9; i++)
		h = h * 0x9e3779b1u ^ v[i];
	e = &c->kcache[(h ^ h >> 16) % 64];
	if (e->len == 0 || e->replayed != rp || memcmp(e->v, v, sizeof(v))) {
		char *q = e->s;

		q = GA_JW_LIT(q, ",\"grid\":[");
		for (int i = 0; i < 3; i++) {
			q = ga_jw_put_u64(q, v[i]);
			*q++ = i < 2 ? ',' : ']';
		}
		q = GA_JW_LIT(q, ",\"block\":[");
		for (int i = 3; i < 6; i++) {
			q = ga_jw_put_u64(q, v[i]);
			*q++ = i < 5 ? ',' : ']';
		}
		q = GA_JW_LIT(q, ",\"registers\":");
		q = ga_jw_put_u64(q, v[6]);
		q = GA_JW_LIT(q, ",\"static_smem\":");
		q = ga_jw_put_u64(q, v[7]);
		q = GA_JW_LIT(q, ",\"dynamic_smem\":");
		q = ga_jw_put_u64(q, v[8]);
		if (rp)
			q = GA_JW_LIT(q, ",\"replayed\":1");
		memcpy(e->v, v, sizeof(v));
		e->replayed = rp;
		e->len = (uint8_t)(q - e->s);
	}
	return ga_jw_put(p, e->s, e->len);
}

/* The quoted string qname() made at off, written at p. */
static inline char *put_q(char *p, const struct chrome *c, size_t off, size_t len)
{
	return ga_jw_put(p, c->qtext.p + off - 1, len);
}

/* An activity's event up to its start time: name (quoted at on, ln bytes), category, pid, tid. */
static char *put_head(char *p, struct chrome *c, size_t on, size_t ln, const char *kind,
		      size_t lk, uint32_t pid, uint32_t tid)
{
	p = GA_JW_LIT(p, "{\"name\":");
	p = put_q(p, c, on, ln);
	p = GA_JW_LIT(p, ",\"cat\":\"");
	p = ga_jw_put(p, kind, lk);
	p = GA_JW_LIT(p, "\",\"ph\":\"X\",\"pid\":");
	p = put_pidtid(p, c, pid, tid);
	return GA_JW_LIT(p, ",\"ts\":");
}

/*
 * An X event up to its args' correlation: the head (put_head), its start
 * (kept in *k, put_ts_keep()) and duration from the base b, then
 * {"correlation":corr.
 */
static inline char *put_span(char *p, const struct ga_jw *w, struct chrome *c, size_t on,
			     size_t ln, const char *kind, size_t lk, uint32_t pid, uint32_t tid,
			     uint64_t b, uint64_t start, uint64_t end, uint64_t corr, struct tstxt *k)
{
	p = put_head(p, c, on, ln, kind, lk, pid, tid);
	p = put_ts_keep(p, w, k, start, b);
	p = GA_JW_LIT(p, ",\"dur\":");
	p = ga_jw_put_milli_room(p, end - start);
	p = GA_JW_LIT(p, ",\"args\":{\"correlation\":");
	return ga_jw_put_u64_room(p, corr);
}

/*
 * A kernel's args after its device: its full name (the quoted name at of,
 * lf bytes), launch configuration (k, when known) and launch site (the
 * quoted one at os, ls bytes; os 0: none).
 */
static char *put_kargs(char *p, struct chrome *c, size_t of, size_t lf,
		       const struct gp_rec_kernel *k, size_t os, size_t ls)
{
	p = GA_JW_LIT(p, ",\"name\":");
	p = put_q(p, c, of, lf);
	if (k)
		p = put_kcfg(p, c, k);
	if (os) {
		p = GA_JW_LIT(p, ",\"launch_site\":");
		p = put_q(p, c, os, ls);
	}
	return p;
}

/* An event's graph node (when it has one) and the ends of its args and of itself. */
static char *graph_tail(char *p, const struct ga_act *a)
{
	if (a->graph_id) {
		p = GA_JW_LIT(p, ",\"graph_id\":");
		p = ga_jw_put_u64(p, a->graph_id);
		p = GA_JW_LIT(p, ",\"graph_node\":");
		p = ga_jw_put_u64(p, a->graph_node);
	}
	return GA_JW_LIT(p, "}}");
}

/* Whether two template keys differ: eight 64-bit words and one more, no call. */
static inline int key_differs(const uint32_t *a, const uint32_t *b)
{
	uint64_t d = a[KT_KEY - 1] ^ b[KT_KEY - 1];

	for (int i = 0; i + 1 < KT_KEY; i += 2) {
		uint64_t x, y;

		memcpy(&x, a + i, sizeof(x));
		memcpy(&y, b + i, sizeof(y));
		d |= x ^ y;
	}
	return d != 0;
}

/*
 * Template t of a kernel's event (kernel_event()) made for key: its text
 * before "ts" and after the correlation.  Returns 0, or -1 out of memory.
 */
static __attribute__((noinline)) int ktmpl_make(struct chrome *c, struct ga_model *m,
						const struct ga_act *a, uint32_t pid, uint32_t tid,
						const struct gp_rec_kernel *k, uint32_t site,
						const char *kind, size_t lk, struct ktmpl *t,
						const uint32_t *key)
{
	size_t on, ln, of, lf, os = 0, ls = 0, need;
	char *p;

	on = qname(c, m, a->name, Q_SHORT, &ln);
	of = qname(c, m, a->name, Q_FULL, &lf);
	if (!on || !of || (site && !(os = qname(c, m, site, Q_SID, &ls))))
		return -1;
	need = 512 + ln + lk + lf + ls;
	t->valid = 0;
	if (need > t->cap) {
		char *ns = realloc(t->s, need);

		if (!ns)
			return -1;
		t->s = ns;
		t->cap = need;
	}
	p = put_head(t->s, c, on, ln, kind, lk, pid, tid);
	t->npre = (size_t)(p - t->s);
	p = GA_JW_LIT(p, ",\"device\":");
	p = put_devstream(p, c, a);
	p = put_kargs(p, c, of, lf, k, site ? os : 0, ls);
	t->nsuf = (size_t)(p - t->s) - t->npre;
	memcpy(t->key, key, sizeof(t->key));
	t->valid = 1;
	return 0;
}

/*
 * A kernel's event as act_direct() writes it, from its template: its text
 * but the times and the correlation, made at the first event of its
 * kernel, track, stream, configuration and site (k: its record, NULL
 * none) and kept in a direct-mapped table (ktmpl_make()).  Returns 0; 1
 * when the event takes the general path (nothing written); -1 out of
 * memory.
 */
static inline int kernel_event(struct ga_export *e, struct ga_model *m, const struct ga_act *a,
			       uint32_t pid, uint32_t tid, const struct gp_rec_kernel *k,
			       uint32_t site, const char *kind, size_t lk, uint64_t b,
			       struct tstxt *ts)
{
	struct chrome *c = e->state;
	uint32_t key[KT_KEY] = { a->name, pid, tid, a->device_id, a->context, a->stream, site }, h;
	uint32_t *cfg = key + 7;
	struct ktmpl *t;
	char *p;

	if (k) {
		memcpy(cfg, k->grid, sizeof(k->grid));
		memcpy(cfg + 3, k->block, sizeof(k->block));
		cfg[6] = k->registers;
		cfg[7] = k->static_smem;
		cfg[8] = k->dynamic_smem;
		/* Has a record, replayed. */
		key[KT_KEY - 1] = 1u | ((k->flags & GP_ACT_REPLAYED) ? 2u : 0u);
	}
	/* A few values pick the place; all of them must match (one compare of the whole key). */
	h = a->name * 0x9e3779b1u ^ tid * 0x85ebca6bu ^ a->stream * 0xc2b2ae35u ^
	    cfg[0] * 0x27d4eb2fu ^ cfg[3] * 0x165667b1u ^ site;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	t = &c->kt[h % (sizeof(c->kt) / sizeof(c->kt[0]))];
	if ((!t->valid || key_differs(t->key, key)) &&
	    ktmpl_make(c, m, a, pid, tid, k, site, kind, lk, t, key))
		return -1;
	if (!(p = ga_jw_direct(&e->jw, t->npre + t->nsuf + 160)))
		return 1;
	p = ga_jw_put(p, t->s, t->npre);
	p = put_ts_keep(p, &e->jw, ts, a->start, b);
	p = GA_JW_LIT(p, ",\"dur\":");
	p = ga_jw_put_milli_room(p, a->end - a->start);
	p = GA_JW_LIT(p, ",\"args\":{\"correlation\":");
	p = ga_jw_put_u64_room(p, a->correlation);
	p = ga_jw_put(p, t->s + t->npre, t->nsuf);
	ga_jw_wrote(&e->jw, graph_tail(p, a));
	return 0;
}

/* A flow's id at p: its n digits in dw (ga_jw_digits8()) where n is not 0, else made. */
static inline char *put_id(char *p, uint64_t id, uint64_t dw, unsigned n)
{
	if (!n)
		return ga_jw_put_u64(p, id);
	memcpy(p, &dw, 8);
	return p + n;
}

/*
 * The flow of an activity (flow()) as flow() writes it, the same bytes,
 * straight into the writer's buffer: its two events, the id's digits made
 * once, the call's start time copied from its event when still in the
 * buffer (api_ts_slot()), the activity's from where *ts says its event
 * wrote it.  Returns 0; 1 when a time is before the base (nothing written).
 */
static int flow_direct(struct ga_export *e, uint32_t pid, uint32_t api_tid, uint64_t api_t,
		       uint32_t gpu_tid, uint64_t t, const struct tstxt *ts)
{
	static const char s_head[] = "{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":";
	static const char f_head[] =
		"{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":";
	struct chrome *c = e->state;
	uint64_t b = base_of(e), id, dw = 0;
	unsigned n = 0;
	char *p;

	if (api_t < b || t < b)
		return 1;
	/* 256 bytes always fit the writer's buffer: neither event falls back. */
	if (!(p = ga_jw_direct(&e->jw, 256)))
		return 1;
	id = ++c->flows;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (id < 100000000) {
		/* Its digits made once, in a word, stored in each event. */
		n = (unsigned)((64 - __builtin_clzll(id)) * 1233) >> 12;
		n += id >= ga_jw_pow10[n];
		dw = ga_jw_digits8((uint32_t)id) >> (8 * (8 - n));
	}
#endif
	p = GA_JW_LIT(p, s_head);
	p = put_id(p, id, dw, n);
	p = GA_JW_LIT(p, ",\"pid\":");
	p = put_pidtid(p, c, pid, api_tid);
	p = GA_JW_LIT(p, ",\"ts\":");
	p = put_ts(p, &e->jw, api_ts_slot(c, api_t), api_t, b);
	*p++ = '}';
	ga_jw_wrote(&e->jw, p);
	p = ga_jw_direct(&e->jw, 256);
	p = GA_JW_LIT(p, f_head);
	p = put_id(p, id, dw, n);
	p = GA_JW_LIT(p, ",\"pid\":");
	p = put_pidtid(p, c, pid, gpu_tid);
	p = GA_JW_LIT(p, ",\"ts\":");
	p = put_ts(p, &e->jw, ts, t, b);
	*p++ = '}';
	ga_jw_wrote(&e->jw, p);
	return 0;
}

/*
 * An API call's event as api() writes it through the writer's calls, the
 * same bytes, straight into its buffer: its head from c->ahead (made once
 * per name, pid and tid met lately; a longer name's made each time), its
 * start kept for its flow (api_ts_slot()).  Returns 0; 1 when it takes
 * the general path (a time before the base, a name longer than the
 * buffer), nothing written; -1 out of memory.
 */
static int api_direct(struct ga_export *e, struct ga_model *m, const struct ga_api_call *a,
		      uint32_t pid, uint32_t tid)
{
	struct chrome *c = e->state;
	uint64_t b = base_of(e);
	uint32_t h = a->name * 0x9e3779b1u ^ tid * 0x85ebca6bu ^ pid * 0xc2b2ae35u;
	struct ahead *t = &c->ahead[(h ^ h >> 16) % (sizeof(c->ahead) / sizeof(c->ahead[0]))];
	size_t on, ln;
	char *p;

	if (a->start < b)
		return 1;
	if (!t->len || t->name != a->name || t->pid != pid || t->tid != tid) {
		if (!(on = qname(c, m, a->name, Q_SID, &ln)))
			return -1;
		/* put_head()'s text and its 32-byte copy of the pid and tid must fit. */
		if (ln > 64) {
			if (!(p = ga_jw_direct(&e->jw, 256 + ln)))
				return 1;
			p = put_span(p, &e->jw, c, on, ln, "api", 3, pid, tid, b, a->start, a->end,
				     a->correlation, api_ts_slot(c, a->start));
			goto ret;
		}
		t->len = (uint8_t)(put_head(t->s, c, on, ln, "api", 3, pid, tid) - t->s);
		t->name = a->name;
		t->pid = pid;
		t->tid = tid;
	}
	if (!(p = ga_jw_direct(&e->jw, sizeof(t->s) + 128)))
		return 1;
	/* The whole of s, the rest overwritten next: a copy of known size, no string move. */
	memcpy(p, t->s, sizeof(t->s));
	p += t->len;
	p = put_ts_keep(p, &e->jw, api_ts_slot(c, a->start), a->start, b);
	p = GA_JW_LIT(p, ",\"dur\":");
	p = ga_jw_put_milli_room(p, a->end - a->start);
	p = GA_JW_LIT(p, ",\"args\":{\"correlation\":");
	p = ga_jw_put_u64_room(p, a->correlation);
ret:
	p = GA_JW_LIT(p, ",\"return\":");
	if (a->ret < 0) {
		*p++ = '-';
		p = ga_jw_put_u64(p, (uint64_t)0 - (uint64_t)(int64_t)a->ret);
	} else {
		p = ga_jw_put_u64(p, (uint64_t)a->ret);
	}
	p = GA_JW_LIT(p, "}}");
	ga_jw_wrote(&e->jw, p);
	return 0;
}

/*
 * A GPU activity's event as act() writes it, the same bytes, straight into
 * the writer's buffer: the events of a large trace are almost all these.
 * Returns 0; 1 when the event takes act()'s general path (a time before
 * the base, names longer than the buffer), before anything is written;
 * -1 out of memory.
 */
static inline int act_direct(struct ga_export *e, struct ga_model *m, const struct ga_act *a,
			     uint32_t pid, uint32_t tid, struct tstxt *ts)
{
	struct chrome *c = e->state;
	const struct gp_rec_kernel *k = NULL;
	const struct gp_rec_memcpy *cp = NULL;
	const char *kind = ga_model_act_kind(a->kind), *ck = NULL;
	size_t on, ln, of = 0, lf = 0, os = 0, ls = 0, lk, lck = 0;
	uint64_t b = base_of(e);
	uint32_t site = 0;
	char kb[16], *p;

	if (a->start < b || a->kind >= GA_ACT_KIND_COUNT)
		return 1;
	if (!c->kindlen[a->kind]) {
		lk = strlen(kind);
		c->kindlen[a->kind] = lk < 64 && plain(kind, lk) ? (uint8_t)(lk + 1) : 255;
	}
	if (c->kindlen[a->kind] == 255)
		return 1;
	lk = c->kindlen[a->kind] - 1u;
	if (a->kind == GA_ACT_KERNEL) {
		int r;

		if (a->rec && a->rec->type == GP_REC_KERNEL)
			k = (const void *)a->rec;
		site = ga_sites_site_of(&e->an->st, m, a);
		if (site == GA_STR_NOMEM)
			return -1;
		if ((r = kernel_event(e, m, a, pid, tid, k, site, kind, lk, b, ts)) <= 0)
			return r;
		on = qname(c, m, a->name, Q_SHORT, &ln);
		if (!(of = qname(c, m, a->name, Q_FULL, &lf)) ||
		    (site && !(os = qname(c, m, site, Q_SID, &ls))))
			return -1;
	} else {
		on = qname(c, m, m->labels[a->label].str, Q_CSTR, &ln);
	}
	if (!on)
		return -1;
	if (a->kind == GA_ACT_MEMCPY) {
		ck = ga_model_copy_kind(a->copy_kind, kb, sizeof(kb));
		lck = strlen(ck);
		if (a->rec && a->rec->type == GP_REC_MEMCPY)
			cp = (const void *)a->rec;
		if (!plain(ck, lck) || (cp && (!key_ok(ga_model_mem_kind_key(cp->src_kind)) ||
					       !key_ok(ga_model_mem_kind_key(cp->dst_kind)))))
			return 1;
	}
	if (!(p = ga_jw_direct(&e->jw, 768 + ln + lf + ls + lk + lck)))
		return 1;
	p = put_span(p, &e->jw, c, on, ln, kind, lk, pid, tid, b, a->start, a->end, a->correlation,
		     ts);
	p = GA_JW_LIT(p, ",\"device\":");
	p = put_devstream(p, c, a);
	if (a->kind == GA_ACT_KERNEL)
		p = put_kargs(p, c, of, lf, k, site ? os : 0, ls);
	if (a->kind == GA_ACT_MEMCPY || a->kind == GA_ACT_MEMSET) {
		p = GA_JW_LIT(p, ",\"bytes\":");
		p = ga_jw_put_u64(p, a->bytes);
	}
	if (a->kind == GA_ACT_MEMCPY) {
		p = GA_JW_LIT(p, ",\"kind\":\"");
		p = ga_jw_put(p, ck, lck);
		if (cp) {
			const char *sk = ga_model_mem_kind_key(cp->src_kind);
			const char *dk = ga_model_mem_kind_key(cp->dst_kind);

			p = GA_JW_LIT(p, "\",\"src_kind\":\"");
			p = ga_jw_put(p, sk, strlen(sk));
			p = GA_JW_LIT(p, "\",\"dst_kind\":\"");
			p = ga_jw_put(p, dk, strlen(dk));
		}
		*p++ = '"';
	}
	ga_jw_wrote(&e->jw, graph_tail(p, a));
	return 0;
}

static int act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_export *e = ctx;
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint32_t pid, tid, api_tid, site;
	uint64_t api_t;
	struct tstxt ts = { 0 }; /* where a's event wrote its start, for its flow */
	char kb[16];
	int r;

	if (laid_out(e) ||
	    (!(a->proc < c->pp.cap && c->pp.seen[a->proc]) && proc_seen(e, m, a->proc)))
		return -1;
	pid = c->pp.pid[a->proc];
	if (stream_track(e, a, pid, &tid))
		return -1;
	r = act_direct(e, m, a, pid, tid, &ts);
	if (r < 0)
		return -1;
	if (r == 0)
		goto flow;
	ga_jw_obj(w, GA_JW_COMPACT);
	if (a->kind == GA_ACT_KERNEL)
		ga_jw_kcstr(w, "name", ga_strtab_short(&m->strs, a->name));
	else
		ga_jw_kcstr(w, "name", ga_model_str(m, m->labels[a->label].str));
	ga_jw_kcstr(w, "cat", ga_model_act_kind(a->kind));
	ga_jw_kcstr(w, "ph", "X");
	ga_jw_ku64(w, "pid", pid);
	ga_jw_ku64(w, "tid", tid);
	kts(e, "ts", a->start);
	kdur(w, a->end - a->start);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "correlation", a->correlation);
	ga_jw_ku64(w, "device", a->device_id);
	ga_jw_ku64(w, "context", a->context);
	ga_jw_ku64(w, "stream", a->stream);
	if (a->kind == GA_ACT_KERNEL) {
		ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, a->name));
		if (a->rec && a->rec->type == GP_REC_KERNEL) {
			const struct gp_rec_kernel *k = (const void *)a->rec;

			triple(w, "grid", k->grid);
			triple(w, "block", k->block);
			ga_jw_ku64(w, "registers", k->registers);
			ga_jw_ku64(w, "static_smem", k->static_smem);
			ga_jw_ku64(w, "dynamic_smem", k->dynamic_smem);
			/* Profiled by kernel replay: placed at its launch call (FORMAT.md). */
			if (k->flags & GP_ACT_REPLAYED)
				ga_jw_ku64(w, "replayed", 1);
		}
		site = ga_sites_site_of(&e->an->st, m, a);
		if (site == GA_STR_NOMEM)
			return -1;
		if (site)
			ksid(w, "launch_site", m, site);
	}
	if (a->kind == GA_ACT_MEMCPY || a->kind == GA_ACT_MEMSET)
		ga_jw_ku64(w, "bytes", a->bytes);
	if (a->kind == GA_ACT_MEMCPY) {
		ga_jw_kcstr(w, "kind", ga_model_copy_kind(a->copy_kind, kb, sizeof(kb)));
		if (a->rec && a->rec->type == GP_REC_MEMCPY) {
			const struct gp_rec_memcpy *cp = (const void *)a->rec;

			ga_jw_kcstr(w, "src_kind", ga_model_mem_kind_key(cp->src_kind));
			ga_jw_kcstr(w, "dst_kind", ga_model_mem_kind_key(cp->dst_kind));
		}
	}
	if (a->graph_id) {
		ga_jw_ku64(w, "graph_id", a->graph_id);
		ga_jw_ku64(w, "graph_node", a->graph_node);
	}
	ga_jw_end(w);
	ga_jw_end(w);
flow:
	if (ga_ranges_launch(&e->an->rg, a, &api_tid, &api_t) &&
	    flow_direct(e, pid, api_tid, api_t, tid, a->start, &ts))
		flow(e, pid, api_tid, api_t, tid, a->start);
	return ga_jw_failed(w) ? -1 : 0;
}

static int api(void *ctx, struct ga_model *m, const struct ga_api_call *a)
{
	struct ga_export *e = ctx;
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint32_t *slot, tid, head;
	size_t ci = (a->tid ^ a->proc * 13u) % 64;
	int first_ok, r;
	char name[32];

	if (laid_out(e) ||
	    (!(a->proc < c->pp.cap && c->pp.seen[a->proc]) && proc_seen(e, m, a->proc)))
		return -1;
	first_ok = !ga_range_layout_crosses(&c->rl, a->proc, a->tid, a->start, a->end, 0);
	if (c->tcache[ci].head && c->tcache[ci].a == a->proc && c->tcache[ci].b == a->tid) {
		/* A thread's track made before: its first lane never changes. */
		head = c->tcache[ci].head;
		slot = &head;
	} else {
		if (ga_map_insert(&c->threads, a->proc, a->tid, &slot) < 0)
			return -1;
		if (*slot) {
			c->tcache[ci].a = a->proc;
			c->tcache[ci].b = a->tid;
			c->tcache[ci].head = *slot;
		}
	}
	/* The name only where a track or lane is made (place() says 1 without it). */
	r = place_fast(e, c->pp.pid[a->proc], slot, a->tid, 0, first_ok, NULL, a->start, a->end,
		       &tid);
	if (r == 1) {
		snprintf(name, sizeof(name), "tid %u", a->tid);
		r = place(e, c->pp.pid[a->proc], slot, a->tid, 0, first_ok, name, a->start, a->end,
			  &tid);
	}
	if (r)
		return -1;
	if ((r = api_direct(e, m, a, c->pp.pid[a->proc], tid)) <= 0)
		return r;
	ga_jw_obj(w, GA_JW_COMPACT);
	ksid(w, "name", m, a->name);
	ga_jw_kcstr(w, "cat", "api");
	ga_jw_kcstr(w, "ph", "X");
	ga_jw_ku64(w, "pid", c->pp.pid[a->proc]);
	ga_jw_ku64(w, "tid", tid);
	kts(e, "ts", a->start);
	kdur(w, a->end - a->start);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "correlation", a->correlation);
	ga_jw_ki64(w, "return", a->ret);
	ga_jw_end(w);
	ga_jw_end(w);
	return ga_jw_failed(w) ? -1 : 0;
}

/* An NVTX payload as a JSON number (null when not finite). */
static void payload(struct ga_jw *w, uint32_t kind, uint64_t raw)
{
	uint32_t r32 = (uint32_t)raw;
	double d = 0;
	float f;

	switch (kind) {
	case GP_NVTX_PAYLOAD_U64:
		ga_jw_u64(w, raw);
		return;
	case GP_NVTX_PAYLOAD_I64:
		ga_jw_i64(w, (int64_t)raw);
		return;
	case GP_NVTX_PAYLOAD_U32:
		ga_jw_u64(w, r32);
		return;
	case GP_NVTX_PAYLOAD_I32:
		ga_jw_i64(w, (int32_t)r32);
		return;
	case GP_NVTX_PAYLOAD_F64:
		memcpy(&d, &raw, 8);
		break;
	case GP_NVTX_PAYLOAD_F32:
		memcpy(&f, &r32, 4);
		d = f;
		break;
	default:
		ga_jw_null(w);
		return;
	}
	if (isfinite(d))
		ga_jw_rawf(w, "%.17g", d);
	else
		ga_jw_null(w);
}

static void range_args(struct ga_jw *w, const struct ga_model *m, const struct ga_ranges_range *r,
		       const struct ga_ranges_detail *d, const struct ga_ranges_key *k)
{
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ksid(w, "domain", m, k->domain);
	ga_jw_kbool(w, "unterminated", r->flags != 0);
	if (d->tid_end && d->tid_end != r->tid)
		ga_jw_ku64(w, "ended_on_tid", d->tid_end);
	if (d->category)
		ga_jw_ku64(w, "category", d->category);
	if (d->color) {
		ga_jw_key(w, "color");
		ga_jw_rawf(w, "\"#%06x\"", d->color & 0xffffffu);
	}
	if (d->payload_kind) {
		ga_jw_key(w, "payload");
		payload(w, d->payload_kind, d->payload);
	}
	ga_jw_end(w);
}

/*
 * Push/pop ranges as complete events on their thread; start/end ranges as
 * async begin/end pairs (id: the process and the recorder's range id).
 */
static int ranges(struct ga_export *e, struct ga_model *m, const struct ga_ranges *rg)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	const struct ga_ranges_srec *x;
	char id[48];

	while ((x = ga_range_layout_next(&c->rl))) {
		const struct ga_ranges_range *r = &x->r;
		const struct ga_ranges_key *k = &rg->keys[r->key];
		const struct ga_ranges_detail *d = &x->d;
		int ph;

		if (proc_seen(e, m, r->proc))
			return -1;
		if (r->pushpop) {
			ga_jw_obj(w, GA_JW_COMPACT);
			ksid(w, "name", m, ga_ranges_srec_name(rg, x));
			ga_jw_kcstr(w, "cat", "nvtx");
			ga_jw_kcstr(w, "ph", "X");
			ga_jw_ku64(w, "pid", c->pp.pid[r->proc]);
			ga_jw_ku64(w, "tid", x->track);
			kts(e, "ts", r->start);
			kdur(w, r->end - r->start);
			range_args(w, m, r, d, k);
			ga_jw_end(w);
			continue;
		}
		snprintf(id, sizeof(id), "%u:%" PRIu64, r->proc, r->id);
		for (ph = 0; ph < 2; ph++) {
			ga_jw_obj(w, GA_JW_COMPACT);
			ksid(w, "name", m, ga_ranges_srec_name(rg, x));
			ga_jw_kcstr(w, "cat", "nvtx");
			ga_jw_kcstr(w, "ph", ph ? "e" : "b");
			ga_jw_kcstr(w, "id", id);
			ga_jw_ku64(w, "pid", c->pp.pid[r->proc]);
			ga_jw_ku64(w, "tid", ph && d->tid_end ? d->tid_end : r->tid);
			kts(e, "ts", ph ? r->end : r->start);
			if (!ph)
				range_args(w, m, r, d, k);
			ga_jw_end(w);
		}
	}
	return c->rl.err[0] ? ga_format_said(c->rl.err) : ga_jw_failed(w) ? -1 :
									    0;
}

/* The names of the range tracks that are no thread's own (laid_out()). */
static int range_track_names(struct ga_export *e, struct ga_model *m)
{
	struct chrome *c = e->state;
	char name[160];

	for (size_t i = 0; i < c->rl.ntracks; i++) {
		const struct ga_range_track *t = &c->rl.tracks[i];

		if (proc_seen(e, m, t->proc))
			return -1;
		ga_range_track_name(m, t, name, sizeof(name));
		host_track_meta(&e->jw, c->pp.pid[t->proc], t->tid, name);
	}
	return 0;
}

/* NVTX marks as instant events on their thread. */
static int marks(struct ga_export *e, struct ga_model *m, struct ga_ranges *rg)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	const struct ga_ranges_mark_event *x;
	size_t i = 0;

	while ((x = ga_ranges_next_mark(rg, &i))) {
		const struct ga_ranges_mark *k = &rg->marks[x->mark];

		if (proc_seen(e, m, x->proc))
			return -1;
		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "name", m, k->name);
		ga_jw_kcstr(w, "cat", "nvtx");
		ga_jw_kcstr(w, "ph", "i");
		ga_jw_kcstr(w, "s", "t");
		ga_jw_ku64(w, "pid", c->pp.pid[x->proc]);
		ga_jw_ku64(w, "tid", x->tid);
		kts(e, "ts", x->t);
		ga_jw_key(w, "args");
		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "domain", m, k->domain);
		ga_jw_end(w);
		ga_jw_end(w);
	}
	if (rg->marks_spilled.err[0])
		return ga_format_said(rg->marks_spilled.err);
	return ga_jw_failed(w) ? -1 : 0;
}

/* Names of the host threads the traces name. */
static int thread_names(struct ga_export *e, struct ga_model *m)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	size_t i;

	for (i = 0; i < m->thread_names.cap; i++) {
		const struct ga_map_ent *t = &m->thread_names.e[i];
		uint32_t tid = (uint32_t)t->b;

		if (!t->used)
			continue;
		if (proc_seen(e, m, (uint32_t)t->a))
			return -1;
		meta_head(w, "thread_name", c->pp.pid[t->a], &tid);
		ksid(w, "name", m, t->val);
		ga_jw_end(w);
		ga_jw_end(w);
	}
	return 0;
}

/*
 * Memory in use (model/memuse.h) as a counter track per device of each
 * process, "cuda:D memory": a sample at each allocation or free that
 * changed it (the last of several at one time).
 */
static int memory_counters(struct ga_export *e, struct ga_model *m, struct ga_memuse *mu)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint64_t b = base_of(e);
	char name[48], head[128];

	for (size_t i = 0; i < mu->ndevs; i++) {
		const struct ga_memuse_dev *d = &mu->devs[i];
		const struct ga_memuse_sample *ev;
		size_t lh;

		if (proc_seen(e, m, d->proc))
			return -1;
		snprintf(name, sizeof(name), "cuda:%u memory", d->device);
		/* A sample's event up to its time, as the writer's calls below write it (a plain name). */
		lh = (size_t)snprintf(head, sizeof(head),
				      "{\"name\":\"%s\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%u,\"ts\":",
				      name, c->pp.pid[d->proc]);
		while ((ev = ga_memuse_sample_next(mu, (uint32_t)i))) {
			char *p;

			if (ev->t >= b && lh < sizeof(head) && (p = ga_jw_direct(w, 256))) {
				p = ga_jw_put(p, head, lh);
				p = ga_jw_put_milli(p, ev->t - b);
				p = GA_JW_LIT(p, ",\"args\":{\"bytes\":");
				p = ga_jw_put_u64(p, ev->in_use);
				p = GA_JW_LIT(p, "}}");
				ga_jw_wrote(w, p);
				continue;
			}
			ga_jw_obj(w, GA_JW_COMPACT);
			ga_jw_kcstr(w, "name", name);
			ga_jw_kcstr(w, "cat", "memory");
			ga_jw_kcstr(w, "ph", "C");
			ga_jw_ku64(w, "pid", c->pp.pid[d->proc]);
			kts(e, "ts", ev->t);
			ga_jw_key(w, "args");
			ga_jw_obj(w, GA_JW_COMPACT);
			ga_jw_ku64(w, "bytes", ev->in_use);
			ga_jw_end(w);
			ga_jw_end(w);
		}
	}
	if (mu->err[0]) {
		fprintf(stderr, "gpuprof: %s\n", mu->err);
		return GA_FORMAT_REPORTED;
	}
	return ga_jw_failed(w) ? -1 : 0;
}

/* A counter sample: name, cat "metrics", one arg. */
static void counter(struct ga_export *e, uint32_t pid, const char *name, uint64_t t,
		    const char *arg, double v)
{
	struct ga_jw *w = &e->jw;

	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_kcstr(w, "name", name);
	ga_jw_kcstr(w, "cat", "metrics");
	ga_jw_kcstr(w, "ph", "C");
	ga_jw_ku64(w, "pid", pid);
	kts(e, "ts", t);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_key(w, arg);
	ga_jw_rawf(w, "%.6g", v);
	ga_jw_end(w);
	ga_jw_end(w);
}

/*
 * A launch profiled for hardware metrics (--metrics), as it is read: a
 * slice on the track "cuda:D profiled launches" over the launch's profiled
 * time (the span of its kernel slice), with every metric value, the
 * achieved FLOP/s and DRAM bytes/s in args; and the same two rates as
 * counters "cuda:D FLOP/s" and "cuda:D DRAM bytes/s", set at its start and
 * back to 0 at its end.  Nothing is kept.
 */
static int metrics_launch(struct ga_export *e, struct ga_model *m, uint32_t proc,
			  const struct gp_rec_metrics *r)
{
	const struct gp_metric_value *v = (const void *)(r + 1);
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint32_t pid, tid, name = ga_model_fstr(m, r->kernel), *slot;
	double flops, dram, secs = (double)r->duration * 1e-9;
	unsigned have = ga_mx_launch_work(m, r, &flops, &dram);
	char buf[64];

	if ((uint64_t)r->h.aux * sizeof(*v) > r->h.size - sizeof(*r))
		return 0;
	if (laid_out(e) || proc_seen(e, m, proc))
		return -1;
	pid = c->pp.pid[proc];
	/* Its own track per process and device, among the streams'. */
	if (ga_map_insert(&c->streams, (uint64_t)proc << 32 | r->device, UINT64_MAX, &slot) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "cuda:%u profiled launches", r->device);
	if (place(e, pid, slot, UINT32_MAX, 1, 1, buf, r->start,
		  r->duration > UINT64_MAX - r->start ? UINT64_MAX : r->start + r->duration, &tid))
		return -1;
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_kcstr(w, "name", name ? ga_strtab_short(&m->strs, name) : "kernel");
	ga_jw_kcstr(w, "cat", "metrics");
	ga_jw_kcstr(w, "ph", "X");
	ga_jw_ku64(w, "pid", pid);
	ga_jw_ku64(w, "tid", tid);
	kts(e, "ts", r->start);
	kdur(w, r->duration);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "correlation", r->correlation);
	ga_jw_ku64(w, "device", r->device);
	if (name)
		ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, name));
	ga_jw_ku64(w, "passes", r->passes);
	ga_jw_ku64(w, "cost_ns", r->cost_ns);
	if (r->duration && (have & GA_MX_HAVE_FLOPS)) {
		ga_jw_key(w, "flop_s");
		ga_jw_rawf(w, "%.6g", flops / secs);
	}
	if (r->duration && (have & GA_MX_HAVE_DRAM)) {
		ga_jw_key(w, "dram_bytes_s");
		ga_jw_rawf(w, "%.6g", dram / secs);
	}
	for (uint32_t i = 0; i < r->h.aux; i++) {
		uint32_t sid = ga_model_fstr(m, v[i].name);

		if (!sid || !isfinite(v[i].value))
			continue;
		ga_jw_key_str(w, ga_model_str(m, sid), ga_strtab_len(&m->strs, sid));
		ga_jw_rawf(w, "%.17g", v[i].value);
	}
	ga_jw_end(w);
	ga_jw_end(w);
	if (r->duration && (have & GA_MX_HAVE_FLOPS)) {
		snprintf(buf, sizeof(buf), "cuda:%u FLOP/s", r->device);
		counter(e, pid, buf, r->start, "flop_s", flops / secs);
		counter(e, pid, buf, r->start + r->duration, "flop_s", 0);
	}
	if (r->duration && (have & GA_MX_HAVE_DRAM)) {
		snprintf(buf, sizeof(buf), "cuda:%u DRAM bytes/s", r->device);
		counter(e, pid, buf, r->start, "bytes_s", dram / secs);
		counter(e, pid, buf, r->start + r->duration, "bytes_s", 0);
	}
	return ga_jw_failed(w) ? -1 : 0;
}

/* The profiled launches (ga_model_observe(): only their records reach it). */
static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	if (rec->type == GP_REC_METRICS && rec->size >= sizeof(struct gp_rec_metrics))
		return metrics_launch(ctx, m, proc, (const void *)rec);
	return 0;
}

/*
 * The GPU over time (model/gpusamples.h): a counter "cuda:D METRIC" (the
 * recorder's metric name, as the Perfetto export names it) per process,
 * device and metric, cat "gpu_samples", set at each sample's start to the
 * value as recorded; a value the sample did not read is left out.
 */
static int gpu_counters(struct ga_export *e, struct ga_model *m, const struct ga_gpusamples *g)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	char name[192];

	for (size_t i = 0; i < g->nseries; i++) {
		const struct ga_gs_series *s = &g->series[i];

		if (!s->ns)
			continue;
		if (proc_seen(e, m, s->proc))
			return -1;
		for (uint32_t k = 0; k < s->n; k++) {
			snprintf(name, sizeof(name), "cuda:%u %.160s", s->device,
				 ga_model_str(m, s->m[k].name));
			for (size_t j = 0; j < s->ns; j++) {
				double v = s->values[s->s[j].vi + k];

				if (!isfinite(v))
					continue;
				ga_jw_obj(w, GA_JW_COMPACT);
				ga_jw_kcstr(w, "name", name);
				ga_jw_kcstr(w, "cat", "gpu_samples");
				ga_jw_kcstr(w, "ph", "C");
				ga_jw_ku64(w, "pid", c->pp.pid[s->proc]);
				kts(e, "ts", s->s[j].start);
				ga_jw_key(w, "args");
				ga_jw_obj(w, GA_JW_COMPACT);
				ga_jw_key(w, "value");
				ga_jw_rawf(w, "%.17g", v);
				ga_jw_end(w);
				ga_jw_end(w);
			}
		}
	}
	return ga_jw_failed(w) ? -1 : 0;
}

static int begin(struct ga_export *e)
{
	struct chrome *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	e->state = c;
	e->an->m.hooks.ctx = e;
	e->an->m.hooks.act = act;
	e->an->m.hooks.api = api;
	ga_range_layout_serve(&c->rl, &e->an->rg, ready, e);
	e->an->want_first = 1;  /* the time base, at the first event */
	e->an->mu.samples = 1;      /* the memory counter tracks */
	/* Profiled launches' records only: no call for every other record. */
	if (ga_model_observe(&e->an->m, e, obs_rec, 1ull << GP_REC_METRICS, NULL))
		return -1;
	ga_jw_obj(&e->jw, GA_JW_COMPACT);
	ga_jw_key(&e->jw, "traceEvents");
	ga_jw_arr(&e->jw, GA_JW_EVENTS);
	return 0;
}

static int end(struct ga_export *e)
{
	struct ga_model *m = &e->an->m;
	char b[32];
	int rc;

	if (laid_out(e))
		return -1;
	if ((rc = ranges(e, m, &e->an->rg)))
		return rc;
	if (range_track_names(e, m))
		return -1;
	if ((rc = marks(e, m, &e->an->rg)))
		return rc;
	if (thread_names(e, m))
		return -1;
	if ((rc = memory_counters(e, m, &e->an->mu)))
		return rc;
	if (gpu_counters(e, m, &e->an->gs))
		return -1;
	ga_jw_end(&e->jw);
	ga_jw_key(&e->jw, "otherData");
	ga_jw_obj(&e->jw, GA_JW_COMPACT);
	/* A string: JSON numbers lose digits beyond 2^53. */
	snprintf(b, sizeof(b), "%" PRIu64, base_of(e));
	ga_jw_kcstr(&e->jw, "gpuprof_time_base_ns", b);
	ga_jw_kcstr(&e->jw, "time_unit", "us, relative to gpuprof_time_base_ns");
	ga_jw_end(&e->jw);
	ga_jw_end(&e->jw);
	ga_jw_raw(&e->jw, "\n");
	return e->jw.err ? -1 : 0;
}

static void done(struct ga_export *e)
{
	struct chrome *c = e->state;

	if (!c)
		return;
	ga_map_free(&c->streams);
	ga_map_free(&c->threads);
	ga_proc_pids_free(&c->pp);
	ga_buf_free(&c->qtext);
	free(c->q);
	for (size_t i = 0; i < sizeof(c->kt) / sizeof(c->kt[0]); i++)
		free(c->kt[i].s);
	ga_lanes_free(&c->lanes);
	ga_range_layout_free(&c->rl);
	free(c);
	e->state = NULL;
}

const struct ga_format ga_format_chrome = {
	.name = "chrome",
	.help = "Chrome Trace Event JSON: open it in https://ui.perfetto.dev\n"
		"or chrome://tracing",
	.launches = 1,
	.marks = 1,
	.range_details = 1,
	.spill_ranges = 1,
	.observe_sites = 1,
	.sites_ahead = 1,
	.lean = 1,
	.samples = 1,
	.begin = begin,
	.end = end,
	.done = done,
};
