/*
 * "export --format perfetto": Perfetto's native protobuf trace (a Trace:
 * repeated TracePacket packet = 1), which ui.perfetto.dev and
 * trace_processor open.  The fields used, with the numbers of Perfetto's
 * public schema, are in test/golden/perfetto/trace.proto, which the tests
 * decode the output against.  GPU activities, API calls and profiled
 * launches stream out as the model reads them; NVTX ranges, marks, thread
 * names and memory in use follow from the finished analysis.  Memory: as
 * the Chrome export (chrome.c), plus a little per track and per name used
 * on a track.
 *
 * Tracks (TrackDescriptor): one per process (a ProcessDescriptor, named by
 * rank, command line, pid and host, with a pid of its own however many
 * processes share one), one per host thread (a ThreadDescriptor), one per
 * device ("cuda:D NAME") holding one per GPU stream ("cuda:D stream S"),
 * profiled launches and the device's counters (memory in use, the rates
 * of profiled launches, sampled GPU metrics), and tracks of NVTX domains
 * and start/end ranges.  Every track nests as the Chrome export's do, with
 * the same lanes ("(overlapping)", views/tracks.h), laid out strictly:
 * Perfetto sorts begin and end events by time, ties in file order, and
 * pops the innermost open slice at each end, so a slice never goes where
 * an end written after a begin at the same time would close the wrong one
 * (ga_lane_fits()'s strict rule; test/golden/perfetto-checks.py replays
 * the trace that way).
 *
 * Packets: every lane and counter track is a packet sequence of its own
 * (trusted_packet_sequence_id from 2; 1 holds the track descriptors),
 * whose first packet clears its incremental state
 * (SEQ_INCREMENTAL_STATE_CLEARED) and sets its defaults: its track
 * (TrackEventDefaults.track_uuid) and its clock, the sequence-scoped clock
 * 64, incremental (each timestamp a delta from the sequence's previous
 * one).  Every later packet carries SEQ_NEEDS_INCREMENTAL_STATE.  Event
 * names are interned per sequence (InternedData.event_names, sent in the
 * packet that first uses one), and so are the categories ("memcpy",
 * "memset", "graph", "api", "nvtx", "metrics") and annotation names;
 * kernels, the most numerous, have no category (two bytes each): they are
 * the slices of a stream's track without one.  A slice is a
 * TYPE_SLICE_BEGIN packet and its TYPE_SLICE_END right after it on its
 * sequence; copies and memsets carry their bytes as an annotation.  Each GPU activity whose API call is in
 * the trace shares a flow id with that call's slice (flow_ids: Perfetto
 * draws the arrow from the earlier to the later; the activities of one
 * call, a graph's kernels say, follow on from one another).
 *
 * Times: nanoseconds of the trace clock, as the other exports write them
 * (start_ns), given to Perfetto as its default trace clock (BOOTTIME, 6):
 * each sequence's clock snapshot says clock 64 equals BOOTTIME there, so
 * Perfetto shows the recorded times unchanged.  A time earlier than its
 * sequence's last one (records come in buffer order) is written absolute,
 * on BOOTTIME, and leaves the increments alone.
 *
 * Counters sampled over time (GP_REC_GPU_SERIES and GP_REC_GPU_SAMPLE)
 * are read from the records as they stream (gpu_series(), gpu_sample()):
 * when the model keeps them, this is the one place to take them from it.
 * Runs offline only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pbw.h"
#include "views/formats.h"
#include "views/tracks.h"

/* Field numbers of Perfetto's schema (test/golden/perfetto/trace.proto). */
enum {
	F_TRACE_PACKET = 1,
	/* TracePacket */
	F_TP_CLOCK_SNAPSHOT = 6, F_TP_TIMESTAMP = 8, F_TP_SEQ_ID = 10, F_TP_TRACK_EVENT = 11,
	F_TP_INTERNED = 12, F_TP_SEQ_FLAGS = 13, F_TP_CLOCK_ID = 58, F_TP_DEFAULTS = 59,
	F_TP_TRACK_DESC = 60,
	/* TracePacketDefaults, TrackEventDefaults */
	F_DEF_CLOCK_ID = 58, F_DEF_TRACK_EVENT = 11, F_TED_TRACK_UUID = 11,
	/* ClockSnapshot, ClockSnapshot.Clock */
	F_CS_CLOCKS = 1, F_CLK_ID = 1, F_CLK_TS = 2, F_CLK_INCREMENTAL = 3,
	/* TrackEvent */
	F_TE_CATEGORY_IIDS = 3, F_TE_DEBUG = 4, F_TE_TYPE = 9, F_TE_NAME_IID = 10,
	F_TE_COUNTER = 30, F_TE_DOUBLE_COUNTER = 44, F_TE_FLOW_IDS = 47,
	/* TrackDescriptor */
	F_TD_UUID = 1, F_TD_NAME = 2, F_TD_PROCESS = 3, F_TD_THREAD = 4, F_TD_PARENT = 5,
	F_TD_COUNTER = 8,
	/* ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
	F_PD_PID = 1, F_PD_NAME = 6, F_THD_PID = 1, F_THD_TID = 2, F_THD_NAME = 5, F_CD_UNIT = 3,
	/* InternedData; EventCategory, EventName, DebugAnnotationName: iid 1, name 2 */
	F_ID_CATEGORIES = 1, F_ID_NAMES = 2, F_ID_ANN_NAMES = 3, F_IID = 1, F_INAME = 2,
	/* DebugAnnotation */
	F_DA_NAME_IID = 1, F_DA_UINT = 3, F_DA_INT = 4,
};

#define SEQ_INCREMENTAL_STATE_CLEARED 1u
#define SEQ_NEEDS_INCREMENTAL_STATE 2u
#define TYPE_SLICE_BEGIN 1u
#define TYPE_SLICE_END 2u
#define TYPE_INSTANT 3u
#define TYPE_COUNTER 4u
#define PF_CLOCK_BOOTTIME 6u
#define PF_CLOCK_INCREMENTAL 64u      /* the first sequence-scoped clock id */
#define UNIT_SIZE_BYTES 3u
#define NS_PER_S 1000000000ull
/* Numbers of a process's device tracks (+ CUDA ordinal), above host and stream ones. */
#define DEVICE_TID_BASE 0x50000000u
/* Counter tracks' numbers among a process's tracks: above the others. */
#define COUNTER_TID_BASE 0x60000000u
/* Written out once this much is buffered. */
#define FLUSH_AT (1u << 16)

/* slice_direct() writes these tags and values as one byte each. */
_Static_assert((F_TP_TRACK_EVENT << 3 | GA_PB_LEN) < 0x80 && (F_TE_NAME_IID << 3) < 0x80 &&
	       (F_TE_TYPE << 3) < 0x80 && (F_TP_TIMESTAMP << 3) < 0x80 &&
	       (F_TE_CATEGORY_IIDS << 3) < 0x80, "one-byte tags");

/* Categories and annotation names: fixed iids, interned once per sequence. */
enum { CAT_MEMCPY = 1, CAT_MEMSET, CAT_GRAPH, CAT_API, CAT_NVTX, CAT_METRICS };
static const char *const cat_names[] = {
	NULL, "memcpy", "memset", "graph", "api", "nvtx", "metrics",
};
enum { ANN_BYTES = 1, ANN_CORRELATION, ANN_RETURN, ANN_PASSES };
static const char *const ann_names[] = { NULL, "bytes", "correlation", "return", "passes" };

/* One packet sequence: one lane or counter track. */
struct seq {
	uint64_t uuid;             /* its track */
	uint64_t last;             /* the incremental clock's value */
	uint32_t id;               /* trusted_packet_sequence_id */
	uint32_t names;            /* event name iids handed out */
	uint32_t cats, anns;       /* bit per category / annotation name interned */
	uint8_t tail[8], ntail;    /* a usual packet's sequence id and flags, as pkt_head() puts them */
};

/* A series of GPU samples: its device and metric names. */
struct series {
	uint32_t device, source, n;
	uint32_t *metric;          /* strtab ids */
};

/* A name looked up: (seq index << 33 | short << 32 | strtab id) + 1, 0 empty; its iid. */
struct ncache {
	uint64_t key;
	uint32_t iid;
};

#define NCACHE 4096

/* A stream's first lane, recently looked up: streams interleave, a few at a time. */
struct scache {
	uint64_t a, b; /* the streams map's key */
	uint32_t head; /* its first lane + 1; 0 an empty entry */
};

#define SCACHE 64

/* An annotation of a slice: its name (ANN_*) and value. */
struct ann {
	uint32_t name;             /* ANN_* */
	int sign;
	uint64_t v;
};

struct pf {
	struct ga_pbw w;
	struct ga_lanes lanes;
	struct ga_map streams;     /* (proc << 32 | device, context << 32 | stream) -> head lane + 1 */
	struct ga_map threads;     /* (proc, tid) -> head lane + 1 */
	uint32_t nstreams, nhost, ncounters;
	int laid_out;
	struct ga_range_layout rl;
	struct ga_map seq_map;     /* (proc, track tid) -> seqs index + 1 */
	struct seq *seqs;
	size_t nseqs, capseqs;
	struct ga_map names;       /* (seq index << 1 | short, strtab id) -> iid */
	struct ncache ncache[NCACHE];  /* the names recently looked up */
	struct scache scache[SCACHE];  /* the streams recently looked up */
	struct scache tcache[SCACHE];  /* the threads recently looked up: (proc, tid) */
	uint32_t *lane_seq;        /* per lane: its sequence index + 1, 0 not yet */
	size_t caplane_seq;
	struct ga_map described;   /* (proc, track tid): its descriptor written */
	struct ga_map counters;    /* (proc, key) -> counter track tid */
	struct ga_map series_map;  /* (proc, series id) -> series index + 1 */
	struct series *series;
	size_t nseries, capseries;
	struct ga_proc_pids pp;    /* per process: its pid, made unique */
	struct ga_pids tids;       /* thread ids, unique across the processes */
	struct ga_map thread_tid;  /* (proc, tid) -> the thread's tid in the export + 1 */
	uint64_t base;             /* clock snapshots' first value */
	int based;
};

static uint64_t uuid_of(uint32_t proc, uint32_t tid)
{
	return (uint64_t)(proc + 1) << 32 | tid;
}

static inline int flush(struct ga_export *e)
{
	struct pf *p = e->state;

	if (p->w.err)
		return -1;
	/* Most slices leave less than FLUSH_AT buffered: no call. */
	if (p->w.len < FLUSH_AT)
		return 0;
	return ga_pbw_flush(&p->w, e->out, FLUSH_AT);
}

/* The whole second at or before the traces' first record (analysis.h first_ns), less one second. */
static uint64_t base_of(struct ga_export *e)
{
	struct pf *p = e->state;

	if (!p->based) {
		uint64_t first = e->an->first_ns;

		p->base = first == UINT64_MAX || first < NS_PER_S ? 0 :
			  first / NS_PER_S * NS_PER_S - NS_PER_S;
		p->based = 1;
	}
	return p->base;
}

/* A track descriptor packet's head: the packet, sequence 1, the descriptor, its uuid. */
static void desc_open(struct pf *p, uint64_t uuid)
{
	ga_pbw_open(&p->w, F_TRACE_PACKET);
	ga_pbw_varint(&p->w, F_TP_SEQ_ID, 1);
	ga_pbw_open(&p->w, F_TP_TRACK_DESC);
	ga_pbw_varint(&p->w, F_TD_UUID, uuid);
}

static void desc_close(struct pf *p)
{
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
}

/* First sight of a process: a pid of its own and its track. */
static int proc_first_seen(struct ga_export *e, struct ga_model *m, uint32_t proc)
{
	struct pf *p = e->state;
	const struct ga_proc *pr = &m->procs[proc];
	struct ga_buf b = { 0 };
	uint32_t pid;
	int r = ga_proc_pids_see(&p->pp, proc, pr->pid, &pid);

	if (r <= 0)
		return r;
	if (ga_track_proc_name(m, pr, &b)) {
		ga_buf_free(&b);
		return -1;
	}
	desc_open(p, uuid_of(proc, 0));
	ga_pbw_open(&p->w, F_TD_PROCESS);
	ga_pbw_int(&p->w, F_PD_PID, (int32_t)pid);
	ga_pbw_bytes(&p->w, F_PD_NAME, b.p ? b.p : "", b.len);
	ga_pbw_close(&p->w);
	desc_close(p);
	ga_buf_free(&b);
	return flush(e);
}

/* proc_first_seen() where a process is new; the usual case inline. */
static inline int proc_seen(struct ga_export *e, struct ga_model *m, uint32_t proc)
{
	const struct pf *p = e->state;

	if (proc < p->pp.cap && p->pp.seen[proc])
		return 0;
	return proc_first_seen(e, m, proc);
}

/*
 * The descriptor of track tid of process proc, once: a host thread's own
 * (tid below GA_HOST_TID_BASE: a ThreadDescriptor, named when name is not
 * NULL), else a track named name in the process, under its track parent
 * (0: the process's).  With force, written again (a thread's name, known
 * at the end).
 */
static int describe(struct ga_export *e, uint32_t proc, uint32_t tid, uint32_t parent,
		    const char *name, size_t len, int force)
{
	struct pf *p = e->state;
	uint32_t *slot, *tslot;
	int r = ga_map_insert(&p->described, proc, tid, &slot);

	if (r < 0)
		return -1;
	if (!r && !force)
		return 0;
	desc_open(p, uuid_of(proc, tid));
	if (tid < GA_HOST_TID_BASE) {
		/* Thread ids unique across processes, as Perfetto keys threads by tid. */
		if (ga_map_insert(&p->thread_tid, proc, tid, &tslot) < 0)
			return -1;
		if (!*tslot) {
			uint32_t t;

			if (ga_pids_for(&p->tids, tid, &t))
				return -1;
			*tslot = t + 1;
		}
		ga_pbw_open(&p->w, F_TD_THREAD);
		ga_pbw_int(&p->w, F_THD_PID, (int32_t)p->pp.pid[proc]);
		ga_pbw_int(&p->w, F_THD_TID, (int32_t)(*tslot - 1));
		if (name)
			ga_pbw_bytes(&p->w, F_THD_NAME, name, len);
		ga_pbw_close(&p->w);
	} else {
		ga_pbw_varint(&p->w, F_TD_PARENT, uuid_of(proc, parent));
		ga_pbw_bytes(&p->w, F_TD_NAME, name, len);
	}
	desc_close(p);
	return flush(e);
}

static int describe_cstr(struct ga_export *e, uint32_t proc, uint32_t tid, uint32_t parent,
			 const char *name)
{
	return describe(e, proc, tid, parent, name, name ? strlen(name) : 0, 0);
}

/* The number of a device's track (device_track()). */
static uint32_t device_tid(uint32_t device)
{
	return DEVICE_TID_BASE + (device < 0x1000000u ? device : 0xffffffu);
}

/*
 * The track of device (a CUDA ordinal) of process proc, which holds its
 * streams' and counters' tracks: "cuda:D NAME", described once.  Its
 * number in *tid; 0, or -1 out of memory.
 */
static int device_track(struct ga_export *e, struct ga_model *m, uint32_t proc, uint32_t device,
			uint32_t *tid)
{
	struct pf *p = e->state;
	const char *gpu = NULL;
	char name[160];

	*tid = device_tid(device);
	if (ga_map_find(&p->described, proc, *tid))
		return 0;
	for (size_t i = 0; i < m->ndevrows && !gpu; i++)
		if (m->devrows[i].proc == proc && m->devrows[i].id == device &&
		    m->devs[m->devrows[i].dev].name)
			gpu = ga_model_str(m, m->devs[m->devrows[i].dev].name);
	if (gpu)
		snprintf(name, sizeof(name), "cuda:%u %.140s", device, gpu);
	else
		snprintf(name, sizeof(name), "cuda:%u", device);
	return describe_cstr(e, proc, *tid, 0, name);
}

/* The sequence of track tid of process proc, started at its first packet. */
static struct seq *seq_of(struct ga_export *e, uint32_t proc, uint32_t tid)
{
	struct pf *p = e->state;
	struct seq *q;
	uint32_t *slot;
	int r = ga_map_insert(&p->seq_map, proc, tid, &slot);

	if (r < 0)
		return NULL;
	if (!r)
		return &p->seqs[*slot - 1];
	if (p->nseqs >= UINT32_MAX - 2 ||
	    ga_util_grow(&p->seqs, &p->capseqs, p->nseqs + 1, sizeof(*p->seqs))) {
		ga_map_remove(&p->seq_map, proc, tid);
		return NULL;
	}
	q = &p->seqs[p->nseqs];
	memset(q, 0, sizeof(*q));
	q->uuid = uuid_of(proc, tid);
	q->id = (uint32_t)p->nseqs + 2;
	/* Strictly increasing over the snapshots, whatever Perfetto checks of them. */
	q->last = base_of(e) + p->nseqs;
	*slot = (uint32_t)++p->nseqs;
	{
		/* Tags of one byte, the id at most five, the flags one (pkt_head()). */
		uint8_t *t = q->tail;

		*t++ = F_TP_SEQ_ID << 3 | GA_PB_VARINT;
		for (uint32_t v = q->id;; v >>= 7) {
			*t++ = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
			if (v < 0x80)
				break;
		}
		*t++ = F_TP_SEQ_FLAGS << 3 | GA_PB_VARINT;
		*t++ = SEQ_NEEDS_INCREMENTAL_STATE;
		q->ntail = (uint8_t)(t - q->tail);
	}

	ga_pbw_open(&p->w, F_TRACE_PACKET);
	ga_pbw_varint(&p->w, F_TP_SEQ_ID, q->id);
	ga_pbw_varint(&p->w, F_TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	ga_pbw_open(&p->w, F_TP_DEFAULTS);
	ga_pbw_varint(&p->w, F_DEF_CLOCK_ID, PF_CLOCK_INCREMENTAL);
	ga_pbw_open(&p->w, F_DEF_TRACK_EVENT);
	ga_pbw_varint(&p->w, F_TED_TRACK_UUID, q->uuid);
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
	ga_pbw_open(&p->w, F_TP_CLOCK_SNAPSHOT);
	ga_pbw_open(&p->w, F_CS_CLOCKS);
	ga_pbw_varint(&p->w, F_CLK_ID, PF_CLOCK_INCREMENTAL);
	ga_pbw_varint(&p->w, F_CLK_TS, q->last);
	ga_pbw_varint(&p->w, F_CLK_INCREMENTAL, 1);
	ga_pbw_close(&p->w);
	ga_pbw_open(&p->w, F_CS_CLOCKS);
	ga_pbw_varint(&p->w, F_CLK_ID, PF_CLOCK_BOOTTIME);
	ga_pbw_varint(&p->w, F_CLK_TS, q->last);
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
	return q;
}

/* A packet of sequence q at time t: open, with its time, sequence and flags. */
static void pkt_open(struct pf *p, struct seq *q, uint64_t t)
{
	ga_pbw_open(&p->w, F_TRACE_PACKET);
	if (t >= q->last) {
		ga_pbw_varint(&p->w, F_TP_TIMESTAMP, t - q->last);
		q->last = t;
	} else {
		ga_pbw_varint(&p->w, F_TP_CLOCK_ID, PF_CLOCK_BOOTTIME);
		ga_pbw_varint(&p->w, F_TP_TIMESTAMP, t);
	}
	ga_pbw_varint(&p->w, F_TP_SEQ_ID, q->id);
	ga_pbw_varint(&p->w, F_TP_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
}

/* name_iid() of a name not in the cache. */
static uint32_t name_iid_new(struct pf *p, struct ga_model *m, struct seq *q, uint32_t id,
			     int short_, const char **name, size_t *len, struct ncache *c,
			     uint64_t key)
{
	uint64_t qi = (uint64_t)(q - p->seqs);
	uint32_t *slot;
	int r = ga_map_insert(&p->names, qi << 1 | (unsigned)short_, id, &slot);

	if (r < 0)
		return 0;
	if (r) {
		*slot = ++q->names;
		if (short_) {
			*name = ga_strtab_short(&m->strs, id);
			*len = strlen(*name);
		} else {
			*name = ga_model_str(m, id);
			*len = ga_strtab_len(&m->strs, id);
		}
	}
	c->key = key;
	c->iid = *slot;
	return *slot;
}

/*
 * The iid of a name on sequence q (strtab id id, shown short when short_)
 * and whether it is new there: then *name is set for interning.  0 when
 * memory runs out.  Most activities repeat a few names on their stream:
 * those are found in the cache, inline, without hashing.
 */
static inline uint32_t name_iid(struct pf *p, struct ga_model *m, struct seq *q, uint32_t id,
				int short_, const char **name, size_t *len)
{
	uint64_t qi = (uint64_t)(q - p->seqs);
	uint64_t key = (qi << 33 | (uint64_t)(short_ != 0) << 32 | id) + 1;
	struct ncache *c = &p->ncache[(id * 2654435761u ^ (uint32_t)qi * 40503u) % NCACHE];

	*name = NULL;
	if (c->key == key)
		return c->iid;
	return name_iid_new(p, m, q, id, short_, name, len, c, key);
}

/* InternedData of what packet of sequence q needs first: a name, a category, annotations. */
static void intern(struct pf *p, struct seq *q, uint32_t iid, const char *name, size_t len,
		   uint32_t cat, const struct ann *ann, size_t nann)
{
	int need = name != NULL || (cat && !(q->cats & 1u << cat));

	for (size_t i = 0; i < nann; i++)
		need |= !(q->anns & 1u << ann[i].name);
	if (!need)
		return;
	ga_pbw_open(&p->w, F_TP_INTERNED);
	if (cat && !(q->cats & 1u << cat)) {
		q->cats |= 1u << cat;
		ga_pbw_open(&p->w, F_ID_CATEGORIES);
		ga_pbw_varint(&p->w, F_IID, cat);
		ga_pbw_str(&p->w, F_INAME, cat_names[cat]);
		ga_pbw_close(&p->w);
	}
	if (name) {
		ga_pbw_open(&p->w, F_ID_NAMES);
		ga_pbw_varint(&p->w, F_IID, iid);
		ga_pbw_bytes(&p->w, F_INAME, name, len);
		ga_pbw_close(&p->w);
	}
	for (size_t i = 0; i < nann; i++) {
		if (q->anns & 1u << ann[i].name)
			continue;
		q->anns |= 1u << ann[i].name;
		ga_pbw_open(&p->w, F_ID_ANN_NAMES);
		ga_pbw_varint(&p->w, F_IID, ann[i].name);
		ga_pbw_str(&p->w, F_INAME, ann_names[ann[i].name]);
		ga_pbw_close(&p->w);
	}
	ga_pbw_close(&p->w);
}

/* A packet's head at o as pkt_open() writes it, time t >= q->last; room made.  The byte after it. */
static inline uint8_t *pkt_head(uint8_t *o, struct seq *q, uint64_t t)
{
	uint64_t last = q->last;

	q->last = t;
	*o++ = F_TP_TIMESTAMP << 3 | GA_PB_VARINT;
	o = ga_pbw_varint_at(o, t - last);
	/* The sequence's id and flags, made once: a fixed-size copy, then only its length counted. */
	memcpy(o, q->tail, sizeof(q->tail));
	return o + q->ntail;
}

/*
 * The usual slice (a GPU activity's or an API call's, its name interned
 * before, no annotations, after its sequence's last time) as slice()
 * writes it, the same bytes, without its general calls: every nested
 * message here is shorter than 128 bytes, its length one byte, and every
 * tag and the type and category are one byte.  Written through a local
 * pointer (ga_pbw_varint_at()).  Returns 0, or 1 when it is not usual
 * (nothing written).
 */
static int slice_direct(struct pf *p, struct seq *q, uint64_t s, uint64_t t, uint32_t iid,
			uint32_t cat, uint64_t flow_id)
{
	struct ga_pbw *w = &p->w;
	uint8_t *o, *pkt, *te;

	if (s < q->last || t < s || (cat && !(q->cats & 1u << cat)) || w->depth ||
	    ga_pbw_room(w, 128))
		return 1;
	o = w->p + w->len;
	*o++ = F_TRACE_PACKET << 3 | GA_PB_LEN;
	pkt = o++;
	o = pkt_head(o, q, s);
	*o++ = F_TP_TRACK_EVENT << 3 | GA_PB_LEN;
	te = o++;
	*o++ = F_TE_TYPE << 3 | GA_PB_VARINT;
	*o++ = TYPE_SLICE_BEGIN;
	*o++ = F_TE_NAME_IID << 3 | GA_PB_VARINT;
	o = ga_pbw_varint_at(o, iid);
	if (cat) {
		*o++ = F_TE_CATEGORY_IIDS << 3 | GA_PB_VARINT;
		*o++ = (uint8_t)cat;
	}
	if (flow_id) {
		o = ga_pbw_varint_at(o, (uint64_t)F_TE_FLOW_IDS << 3 | GA_PB_FIXED64);
		o = ga_pbw_le64_at(o, flow_id);
	}
	*te = (uint8_t)(o - te - 1);
	*pkt = (uint8_t)(o - pkt - 1);
	*o++ = F_TRACE_PACKET << 3 | GA_PB_LEN;
	pkt = o++;
	o = pkt_head(o, q, t);
	*o++ = F_TP_TRACK_EVENT << 3 | GA_PB_LEN;
	*o++ = 2;
	*o++ = F_TE_TYPE << 3 | GA_PB_VARINT;
	*o++ = TYPE_SLICE_END;
	*pkt = (uint8_t)(o - pkt - 1);
	w->len = (size_t)(o - w->p);
	return 0;
}

/* slice() where slice_direct() does not apply: a new name, annotations, an earlier time. */
static int slice_general(struct ga_export *e, struct seq *q, uint64_t s, uint64_t t,
			 uint32_t iid, const char *str, size_t len, uint32_t cat, uint64_t flow_id,
			 const struct ann *ann, size_t nann)
{
	struct pf *p = e->state;

	pkt_open(p, q, s);
	intern(p, q, iid, str, len, cat, ann, nann);
	ga_pbw_open(&p->w, F_TP_TRACK_EVENT);
	ga_pbw_varint(&p->w, F_TE_TYPE, TYPE_SLICE_BEGIN);
	ga_pbw_varint(&p->w, F_TE_NAME_IID, iid);
	if (cat)
		ga_pbw_varint(&p->w, F_TE_CATEGORY_IIDS, cat);
	if (flow_id)
		ga_pbw_fixed64(&p->w, F_TE_FLOW_IDS, flow_id);
	for (size_t i = 0; i < nann; i++) {
		ga_pbw_open(&p->w, F_TE_DEBUG);
		ga_pbw_varint(&p->w, F_DA_NAME_IID, ann[i].name);
		if (ann[i].sign)
			ga_pbw_int(&p->w, F_DA_INT, (int64_t)ann[i].v);
		else
			ga_pbw_varint(&p->w, F_DA_UINT, ann[i].v);
		ga_pbw_close(&p->w);
	}
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
	pkt_open(p, q, t);
	ga_pbw_open(&p->w, F_TP_TRACK_EVENT);
	ga_pbw_varint(&p->w, F_TE_TYPE, TYPE_SLICE_END);
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
	return flush(e);
}

/*
 * A slice [s, e) on sequence q named by strtab id name (short: a kernel's
 * short name), of category cat, with a flow id (0 none) and annotations:
 * its begin packet, then its end.  Returns 0, or -1 on an output error.
 * Inline: the usual slice (slice_direct()) makes no call.
 */
static inline int slice(struct ga_export *e, struct seq *q, uint64_t s, uint64_t t,
			uint32_t name, int short_, uint32_t cat, uint64_t flow_id,
			const struct ann *ann, size_t nann)
{
	struct pf *p = e->state;
	const char *str;
	size_t len = 0;
	uint32_t iid = name_iid(p, &e->an->m, q, name, short_, &str, &len);

	if (!iid)
		return -1;
	if (!str && !nann && !slice_direct(p, q, s, t, iid, cat, flow_id))
		return flush(e);
	return slice_general(e, q, s, t, iid, str, len, cat, flow_id, ann, nann);
}

/* An instant event at t on sequence q. */
static int instant(struct ga_export *e, struct seq *q, uint64_t t, uint32_t name, uint32_t cat)
{
	struct pf *p = e->state;
	const char *str;
	size_t len = 0;
	uint32_t iid = name_iid(p, &e->an->m, q, name, 0, &str, &len);

	if (!iid)
		return -1;
	pkt_open(p, q, t);
	intern(p, q, iid, str, len, cat, NULL, 0);
	ga_pbw_open(&p->w, F_TP_TRACK_EVENT);
	ga_pbw_varint(&p->w, F_TE_TYPE, TYPE_INSTANT);
	ga_pbw_varint(&p->w, F_TE_NAME_IID, iid);
	ga_pbw_varint(&p->w, F_TE_CATEGORY_IIDS, cat);
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
	return flush(e);
}

/*
 * The sequence of a counter track of process proc, key unique in it, named
 * name (unit: a CounterDescriptor unit, 0 none), under track parent (0 the
 * process's); described at first use.
 */
static struct seq *counter_seq(struct ga_export *e, uint32_t proc, uint32_t parent,
			       uint64_t key, const char *name, uint32_t unit)
{
	struct pf *p = e->state;
	uint32_t *slot;
	int r = ga_map_insert(&p->counters, proc, key, &slot);

	if (r < 0)
		return NULL;
	if (r) {
		*slot = COUNTER_TID_BASE + p->ncounters++;
		desc_open(p, uuid_of(proc, *slot));
		ga_pbw_varint(&p->w, F_TD_PARENT, uuid_of(proc, parent));
		ga_pbw_str(&p->w, F_TD_NAME, name);
		ga_pbw_open(&p->w, F_TD_COUNTER);
		if (unit)
			ga_pbw_varint(&p->w, F_CD_UNIT, unit);
		ga_pbw_close(&p->w);
		desc_close(p);
	}
	return seq_of(e, proc, *slot);
}

/* A counter's value at t (integer values exact, others as doubles). */
static int counter(struct ga_export *e, struct seq *q, uint64_t t, int integer, int64_t iv,
		   double dv)
{
	struct pf *p = e->state;

	pkt_open(p, q, t);
	ga_pbw_open(&p->w, F_TP_TRACK_EVENT);
	ga_pbw_varint(&p->w, F_TE_TYPE, TYPE_COUNTER);
	if (integer)
		ga_pbw_int(&p->w, F_TE_COUNTER, iv);
	else
		ga_pbw_double(&p->w, F_TE_DOUBLE_COUNTER, dv);
	ga_pbw_close(&p->w);
	ga_pbw_close(&p->w);
	return flush(e);
}

/* The ranges' tracks, once: spilled, when the scan is done (ready()); kept, at the first event. */
static int laid_out(struct ga_export *e)
{
	struct pf *p = e->state;

	if (p->laid_out)
		return 0;
	p->laid_out = 1;
	p->rl.want_async = 1;
	/* Spilled, a filter reads each activity's ranges from their index (ranges.h ix). */
	p->rl.want_index = e->an->rg.spill && ga_analysis_filtered(e->an);
	return ga_range_layout_build(&p->rl, &e->an->rg, &p->nhost);
}

/* Spilled ranges: laid out once scanned (ranges.h ix). */
static int ready(void *ctx)
{
	return laid_out(ctx);
}

/* What a track is called, formatted only when a track or lane is made. */
struct tname {
	enum { TN_STREAM, TN_THREAD, TN_PROFILED } kind;
	uint32_t a, b;             /* device and stream, thread id, device */
};

static void tname_fmt(const struct tname *n, char *buf, size_t len)
{
	if (n->kind == TN_STREAM)
		snprintf(buf, len, "cuda:%u stream %u", n->a, n->b);
	else if (n->kind == TN_THREAD)
		snprintf(buf, len, "tid %u", n->a);
	else
		snprintf(buf, len, "cuda:%u profiled launches", n->a);
}

/*
 * The track of [s, t) whose first lane is *head (index + 1; 0: a new
 * track, on thread id tid0, or on a new GPU thread id when tid0 is
 * UINT32_MAX, named by tn, under track parent): the first lane it fits in
 * (the first only when first_ok), else a new one named as the track, "
 * (overlapping)".
 * Returns the lane's index in *lane; 0, or -1 out of memory.
 */
static int place_general(struct ga_export *e, uint32_t proc, uint32_t parent, uint32_t *head,
			 uint32_t tid0, int gpu, int first_ok, const struct tname *tn, uint64_t s,
			 uint64_t t, long *lane)
{
	struct pf *p = e->state;
	char name[128], lname[160];
	long i, last;

	if (!*head) {
		if (tid0 == UINT32_MAX) {
			tid0 = GA_GPU_TID_BASE + p->nstreams++;
			tname_fmt(tn, name, sizeof(name));
			if (describe_cstr(e, proc, tid0, parent, name))
				return -1;
		} else if (describe_cstr(e, proc, tid0, 0, NULL)) {
			return -1;
		}
		if ((i = ga_lanes_add(&p->lanes, -1, tid0)) < 0)
			return -1;
		*head = (uint32_t)i + 1;
	}
	i = ga_lanes_find(&p->lanes, (long)*head - 1, !gpu, 1, first_ok, s, t, &last);
	if (i < 0) {
		uint32_t ntid = gpu ? GA_GPU_TID_BASE + p->nstreams++ : GA_HOST_TID_BASE + p->nhost++;

		if ((i = ga_lanes_add(&p->lanes, last, ntid)) < 0)
			return -1;
		tname_fmt(tn, name, sizeof(name));
		snprintf(lname, sizeof(lname), "%s (overlapping)", name);
		if (describe_cstr(e, proc, ntid, parent, lname))
			return -1;
	}
	ga_lane_put(&p->lanes.v[i], s, t);
	*lane = i;
	return 0;
}

/* place_general() but for the usual case, inline: after everything on the track's first lane. */
static inline int place(struct ga_export *e, uint32_t proc, uint32_t parent, uint32_t *head,
			uint32_t tid0, int gpu, int first_ok, const struct tname *tn, uint64_t s,
			uint64_t t, long *lane)
{
	struct pf *p = e->state;

	if (*head && first_ok) {
		struct ga_lane *l = &p->lanes.v[*head - 1];

		if (ga_lane_after(l, s)) {
			ga_lane_append(l, s, t);
			*lane = (long)*head - 1;
			return 0;
		}
	}
	return place_general(e, proc, parent, head, tid0, gpu, first_ok, tn, s, t, lane);
}

/* lane_seq() of a lane without its sequence yet. */
static struct seq *lane_seq_new(struct ga_export *e, uint32_t proc, long lane)
{
	struct pf *p = e->state;
	struct seq *q;

	if ((size_t)lane >= p->caplane_seq) {
		size_t old = p->caplane_seq;

		if (ga_util_grow(&p->lane_seq, &p->caplane_seq, (size_t)lane + 1,
				 sizeof(*p->lane_seq)))
			return NULL;
		memset(p->lane_seq + old, 0, (p->caplane_seq - old) * sizeof(*p->lane_seq));
	}
	if (p->lane_seq[lane])
		return &p->seqs[p->lane_seq[lane] - 1];
	q = seq_of(e, proc, p->lanes.v[lane].tid);
	if (q)
		p->lane_seq[lane] = (uint32_t)(q - p->seqs) + 1;
	return q;
}

/* The sequence of a lane of process proc (place()); NULL out of memory. */
static inline struct seq *lane_seq(struct ga_export *e, uint32_t proc, long lane)
{
	const struct pf *p = e->state;

	if ((size_t)lane < p->caplane_seq && p->lane_seq[lane])
		return &p->seqs[p->lane_seq[lane] - 1];
	return lane_seq_new(e, proc, lane);
}

/* The flow id of an API call's correlation in process proc. */
static uint64_t flow_of(uint32_t proc, uint32_t correlation)
{
	return (uint64_t)(proc + 1) << 32 | correlation;
}

static int act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	static const uint32_t cats[GA_ACT_KIND_COUNT] = {
		[GA_ACT_MEMCPY] = CAT_MEMCPY,
		[GA_ACT_MEMSET] = CAT_MEMSET, [GA_ACT_GRAPH] = CAT_GRAPH,
	};
	struct ga_export *e = ctx;
	struct pf *p = e->state;
	uint32_t *slot, api_tid;
	long lane;
	uint64_t api_t, flow_id = 0;
	struct ann ann[1];
	struct tname tn = { TN_STREAM, a->device_id, a->stream };
	uint32_t dev = device_tid(a->device_id), head;
	uint64_t ka = (uint64_t)a->proc << 32 | a->device_id;
	uint64_t kb = (uint64_t)a->context << 32 | a->stream;
	struct scache *sc = &p->scache[(a->stream ^ a->device_id * 7u ^ a->proc * 13u) % SCACHE];
	struct seq *q;

	if (laid_out(e) || proc_seen(e, m, a->proc))
		return -1;
	if (sc->head && sc->a == ka && sc->b == kb) {
		/* A track made before: its first lane never changes. */
		head = sc->head;
		if (place(e, a->proc, dev, &head, UINT32_MAX, 1, 1, &tn, a->start, a->end, &lane))
			return -1;
	} else {
		if (ga_map_insert(&p->streams, ka, kb, &slot) < 0)
			return -1;
		if ((!*slot && device_track(e, m, a->proc, a->device_id, &dev)) ||
		    place(e, a->proc, dev, slot, UINT32_MAX, 1, 1, &tn, a->start, a->end, &lane))
			return -1;
		sc->a = ka;
		sc->b = kb;
		sc->head = *slot;
	}
	if (!(q = lane_seq(e, a->proc, lane)))
		return -1;
	if (ga_ranges_launch(&e->an->rg, a, &api_tid, &api_t))
		flow_id = flow_of(a->proc, a->correlation);
	ann[0].name = ANN_BYTES;
	ann[0].sign = 0;
	ann[0].v = a->bytes;
	if (a->kind == GA_ACT_KERNEL)
		return slice(e, q, a->start, a->end, a->name, 1, 0, flow_id, NULL, 0);
	return slice(e, q, a->start, a->end, m->labels[a->label].str, 0,
		     a->kind < GA_ACT_KIND_COUNT ? cats[a->kind] : 0, flow_id, ann,
		     a->kind == GA_ACT_MEMCPY || a->kind == GA_ACT_MEMSET);
}

static int api(void *ctx, struct ga_model *m, const struct ga_api_call *a)
{
	struct ga_export *e = ctx;
	struct pf *p = e->state;
	uint32_t *slot, api_tid;
	long lane;
	uint64_t api_t, flow_id = 0;
	struct tname tn = { TN_THREAD, a->tid, 0 };
	struct scache *tc = &p->tcache[(a->tid ^ a->proc * 13u) % SCACHE];
	int first_ok;
	struct seq *q;

	if (laid_out(e) || proc_seen(e, m, a->proc))
		return -1;
	first_ok = !ga_range_layout_crosses(&p->rl, a->proc, a->tid, a->start, a->end, 1);
	if (tc->head && tc->a == a->proc && tc->b == a->tid) {
		/* A track made before: its first lane never changes. */
		uint32_t head = tc->head;

		if (place(e, a->proc, 0, &head, a->tid, 0, first_ok, &tn, a->start, a->end, &lane))
			return -1;
	} else {
		if (ga_map_insert(&p->threads, a->proc, a->tid, &slot) < 0 ||
		    place(e, a->proc, 0, slot, a->tid, 0, first_ok, &tn, a->start, a->end, &lane))
			return -1;
		tc->a = a->proc;
		tc->b = a->tid;
		tc->head = *slot;
	}
	if (!(q = lane_seq(e, a->proc, lane)))
		return -1;
	/* The call that launched GPU work: the one the activities' flows start from. */
	if (a->correlation &&
	    ga_ranges_launch_of(&e->an->rg, a->proc, a->correlation, &api_tid, &api_t) &&
	    api_tid == a->tid && api_t == a->start)
		flow_id = flow_of(a->proc, a->correlation);
	return slice(e, q, a->start, a->end, a->name, 0, CAT_API, flow_id, NULL, 0);
}

/*
 * A launch profiled for hardware metrics (--metrics), as the Chrome
 * export shows it: a slice on "cuda:D profiled launches" over its profiled
 * time, and the achieved FLOP/s and DRAM bytes/s as counters, set at its
 * start and back to 0 at its end.
 */
static int metrics_launch(struct ga_export *e, struct ga_model *m, uint32_t proc,
			  const struct gp_rec_metrics *r)
{
	const struct gp_metric_value *v = (const void *)(r + 1);
	struct pf *p = e->state;
	uint32_t name = ga_model_fstr(m, r->kernel), *slot;
	long lane;
	double flops, dram, secs = (double)r->duration * 1e-9;
	unsigned have = ga_mx_launch_work(m, r, &flops, &dram);
	uint64_t end = r->duration > UINT64_MAX - r->start ? UINT64_MAX : r->start + r->duration;
	struct ann ann[2] = {
		{ ANN_CORRELATION, 0, r->correlation }, { ANN_PASSES, 0, r->passes },
	};
	struct tname tn = { TN_PROFILED, r->device, 0 };
	uint32_t dev;
	struct seq *q;
	char buf[64];

	if ((uint64_t)r->h.aux * sizeof(*v) > r->h.size - sizeof(*r) || !name)
		return 0;
	if (laid_out(e) || proc_seen(e, m, proc))
		return -1;
	if (ga_map_insert(&p->streams, (uint64_t)proc << 32 | r->device, UINT64_MAX, &slot) < 0)
		return -1;
	if (device_track(e, m, proc, r->device, &dev) ||
	    place(e, proc, dev, slot, UINT32_MAX, 1, 1, &tn, r->start, end, &lane) ||
	    !(q = lane_seq(e, proc, lane)) ||
	    slice(e, q, r->start, end, name, 1, CAT_METRICS, 0, ann, 2))
		return -1;
	if (r->duration && (have & GA_MX_HAVE_FLOPS)) {
		snprintf(buf, sizeof(buf), "cuda:%u FLOP/s", r->device);
		if (!(q = counter_seq(e, proc, dev, (uint64_t)1 << 56 | r->device, buf, 0)) ||
		    counter(e, q, r->start, 0, 0, flops / secs) || counter(e, q, end, 0, 0, 0))
			return -1;
	}
	if (r->duration && (have & GA_MX_HAVE_DRAM)) {
		snprintf(buf, sizeof(buf), "cuda:%u DRAM bytes/s", r->device);
		if (!(q = counter_seq(e, proc, dev, (uint64_t)2 << 56 | r->device, buf, 0)) ||
		    counter(e, q, r->start, 0, 0, dram / secs) || counter(e, q, end, 0, 0, 0))
			return -1;
	}
	return 0;
}

/* A series of GPU samples: its metric names, for its samples. */
static int gpu_series(struct ga_export *e, struct ga_model *m, uint32_t proc,
		      const struct gp_rec_gpu_series *r)
{
	const uint32_t *ids = (const void *)(r + 1);
	struct pf *p = e->state;
	struct series *s;
	uint32_t *slot;
	int added;

	if ((uint64_t)r->h.aux * sizeof(*ids) > r->h.size - sizeof(*r))
		return 0;
	if ((added = ga_map_insert(&p->series_map, proc, r->id, &slot)) < 0)
		return -1;
	if (added) {
		if (ga_util_grow(&p->series, &p->capseries, p->nseries + 1, sizeof(*p->series))) {
			ga_map_remove(&p->series_map, proc, r->id);
			return -1;
		}
		memset(&p->series[p->nseries], 0, sizeof(*p->series));
		*slot = (uint32_t)++p->nseries;
	}
	/* Named again in each file of the process: the last naming stands. */
	s = &p->series[*slot - 1];
	free(s->metric);
	s->metric = calloc(r->h.aux ? r->h.aux : 1, sizeof(*s->metric));
	if (!s->metric) {
		s->n = 0;
		return -1;
	}
	s->device = r->device;
	s->source = r->source;
	s->n = r->h.aux;
	for (uint32_t i = 0; i < r->h.aux; i++)
		s->metric[i] = ga_model_fstr(m, ids[i]);
	return 0;
}

/* A GPU sample: each metric's value, at the sample's start, on its counter track. */
static int gpu_sample(struct ga_export *e, struct ga_model *m, uint32_t proc,
		      const struct gp_rec_gpu_sample *r)
{
	const unsigned char *vals = (const void *)(r + 1);
	struct pf *p = e->state;
	const uint32_t *slot = ga_map_find(&p->series_map, proc, r->series);
	const struct series *s;
	uint32_t dev;
	char name[192];

	if (!slot || (uint64_t)r->h.aux * 8 > r->h.size - sizeof(*r))
		return 0;
	s = &p->series[*slot - 1];
	if (laid_out(e) || proc_seen(e, m, proc))
		return -1;
	for (uint32_t i = 0; i < r->h.aux && i < s->n; i++) {
		struct seq *q;
		double v;

		memcpy(&v, vals + 8 * (size_t)i, sizeof(v));
		if (!isfinite(v) || !s->metric[i])
			continue;
		snprintf(name, sizeof(name), "cuda:%u %.160s", s->device,
			 ga_model_str(m, s->metric[i]));
		if (device_track(e, m, proc, s->device, &dev) ||
		    !(q = counter_seq(e, proc, dev, (uint64_t)3 << 56 | (uint64_t)r->series << 24 | i,
				      name, 0)) ||
		    counter(e, q, r->start, 0, 0, v))
			return -1;
	}
	return 0;
}

/* The records this export reads itself (ga_model_observe(): only these reach it). */
static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_export *e = ctx;

	if (rec->type == GP_REC_METRICS && rec->size >= sizeof(struct gp_rec_metrics))
		return metrics_launch(e, m, proc, (const void *)rec);
	if (rec->type == GP_REC_GPU_SERIES && rec->size >= sizeof(struct gp_rec_gpu_series))
		return gpu_series(e, m, proc, (const void *)rec);
	if (rec->type == GP_REC_GPU_SAMPLE && rec->size >= sizeof(struct gp_rec_gpu_sample))
		return gpu_sample(e, m, proc, (const void *)rec);
	return 0;
}

/* Push/pop ranges by (process, thread, start, end descending); the names of their tracks. */
static int pushpop_ranges(struct ga_export *e, struct ga_model *m, const struct ga_ranges *rg)
{
	struct pf *p = e->state;
	char name[160];

	for (size_t i = 0; i < p->rl.ntracks; i++) {
		const struct ga_range_track *t = &p->rl.tracks[i];

		if (proc_seen(e, m, t->proc))
			return -1;
		ga_range_track_name(m, t, name, sizeof(name));
		if (describe_cstr(e, t->proc, t->tid, 0, name))
			return -1;
	}
	for (const struct ga_ranges_srec *x; (x = ga_range_layout_next(&p->rl));) {
		const struct ga_ranges_range *r = &x->r;
		struct seq *q;

		if (!r->pushpop)
			continue;
		if (proc_seen(e, m, r->proc) || describe_cstr(e, r->proc, x->track, 0, NULL) ||
		    !(q = seq_of(e, r->proc, x->track)) ||
		    slice(e, q, r->start, r->end, ga_ranges_srec_name(rg, x), 0, CAT_NVTX, 0, NULL,
			  0))
			return -1;
	}
	return p->rl.err[0] ? ga_format_said(p->rl.err) : 0;
}

/*
 * Start/end ranges, which may end on another thread and cross anything:
 * per process, on tracks "NVTX start/end ranges", each range on the first
 * lane where it nests in the innermost one open there, else a new lane.
 */
static int async_ranges(struct ga_export *e, struct ga_model *m, const struct ga_ranges *rg)
{
	struct pf *p = e->state;
	struct ga_nest *st = NULL;
	const struct ga_ranges_srec *x;
	size_t nst = 0, capst = 0, l;
	uint32_t proc = UINT32_MAX;
	int rc = -1;

	while ((x = ga_range_layout_next_async(&p->rl))) {
		const struct ga_ranges_range *r = &x->r;
		struct seq *q;

		if (r->proc != proc) {
			ga_nests_clear(st, nst);
			nst = 0;
			proc = r->proc;
			if (proc_seen(e, m, proc))
				goto out;
		}
		for (l = 0; l < nst; l++)
			if (ga_nest_fits(&st[l], r->start, r->end))
				break;
		if (l == nst) {
			if (ga_nests_add(&st, &nst, &capst))
				goto out;
			st[l].tid = GA_HOST_TID_BASE + p->nhost++;
			if (describe_cstr(e, proc, st[l].tid, 0, l ? "NVTX start/end ranges (overlapping)" :
					  "NVTX start/end ranges"))
				goto out;
		}
		if (ga_nest_push(&st[l], r->end))
			goto out;
		if (!(q = seq_of(e, proc, st[l].tid)) ||
		    slice(e, q, r->start, r->end, ga_ranges_srec_name(rg, x), 0, CAT_NVTX, 0, NULL,
			  0))
			goto out;
	}
	rc = p->rl.err[0] ? ga_format_said(p->rl.err) : 0;
out:
	ga_nests_clear(st, nst);
	free(st);
	return rc;
}

/* NVTX marks as instant events on their thread's track. */
static int marks(struct ga_export *e, struct ga_model *m, struct ga_ranges *rg)
{
	const struct ga_ranges_mark_event *x;
	size_t i = 0;

	while ((x = ga_ranges_next_mark(rg, &i))) {
		struct seq *q;

		if (proc_seen(e, m, x->proc) || describe_cstr(e, x->proc, x->tid, 0, NULL) ||
		    !(q = seq_of(e, x->proc, x->tid)) ||
		    instant(e, q, x->t, rg->marks[x->mark].name, CAT_NVTX))
			return -1;
	}
	return rg->marks_spilled.err[0] ? ga_format_said(rg->marks_spilled.err) : 0;
}

/* The names of the host threads the traces name: their tracks again, named. */
static int thread_names(struct ga_export *e, struct ga_model *m)
{
	for (size_t i = 0; i < m->thread_names.cap; i++) {
		const struct ga_map_ent *t = &m->thread_names.e[i];

		if (!t->used)
			continue;
		if (proc_seen(e, m, (uint32_t)t->a) ||
		    describe(e, (uint32_t)t->a, (uint32_t)t->b, 0, ga_model_str(m, t->val),
			     ga_strtab_len(&m->strs, t->val), 1))
			return -1;
	}
	return 0;
}

/* Memory in use (model/memuse.h): a counter track per device of each process, "cuda:D memory". */
static int memory_counters(struct ga_export *e, struct ga_model *m, struct ga_memuse *mu)
{
	char name[48];

	for (size_t i = 0; i < mu->ndevs; i++) {
		const struct ga_memuse_dev *d = &mu->devs[i];
		const struct ga_memuse_sample *ev;
		struct seq *q = NULL;
		uint32_t dev;

		if (proc_seen(e, m, d->proc))
			return -1;
		snprintf(name, sizeof(name), "cuda:%u memory", d->device);
		while ((ev = ga_memuse_sample_next(mu, (uint32_t)i))) {
			if (!q && (device_track(e, m, d->proc, d->device, &dev) ||
				   !(q = counter_seq(e, d->proc, dev, d->device, name, UNIT_SIZE_BYTES))))
				return -1;
			if (counter(e, q, ev->t, 1, (int64_t)ev->in_use, 0))
				return -1;
		}
	}
	if (mu->err[0]) {
		fprintf(stderr, "gpuprof: %s\n", mu->err);
		return -1;
	}
	return 0;
}

static int begin(struct ga_export *e)
{
	struct pf *p;

	/* Binary: never onto a terminal. */
	if (isatty(fileno(e->out))) {
		fputs("gpuprof export: --format perfetto writes a binary file: give it with -o FILE "
		      "or redirect standard output\n", stderr);
		return GA_FORMAT_REPORTED;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	ga_pbw_init(&p->w);
	e->state = p;
	e->an->m.hooks.ctx = e;
	e->an->m.hooks.act = act;
	e->an->m.hooks.api = api;
	ga_range_layout_serve(&p->rl, &e->an->rg, ready, e);
	e->an->want_first = 1;  /* the time base, at the first event */
	e->an->mu.samples = 1;      /* the memory counter tracks */
	/* Its record types only: no call for every other record. */
	return ga_model_observe(&e->an->m, e, obs_rec,
				1ull << GP_REC_METRICS | 1ull << GP_REC_GPU_SERIES |
					1ull << GP_REC_GPU_SAMPLE,
				NULL);
}

static int end(struct ga_export *e)
{
	struct pf *p = e->state;
	struct ga_model *m = &e->an->m;

	int rc;

	if (laid_out(e))
		return -1;
	if ((rc = pushpop_ranges(e, m, &e->an->rg)) || (rc = async_ranges(e, m, &e->an->rg)) ||
	    (rc = marks(e, m, &e->an->rg)))
		return rc;
	if (thread_names(e, m) || memory_counters(e, m, &e->an->mu))
		return e->an->mu.err[0] ? GA_FORMAT_REPORTED : -1;
	if (p->w.err || ga_pbw_flush(&p->w, e->out, 0))
		return -1;
	return ferror(e->out) ? -1 : 0;
}

static void done(struct ga_export *e)
{
	struct pf *p = e->state;

	if (!p)
		return;
	ga_pbw_free(&p->w);
	ga_lanes_free(&p->lanes);
	ga_range_layout_free(&p->rl);
	ga_map_free(&p->streams);
	ga_map_free(&p->threads);
	ga_map_free(&p->seq_map);
	ga_map_free(&p->names);
	ga_map_free(&p->described);
	ga_map_free(&p->counters);
	ga_map_free(&p->series_map);
	ga_map_free(&p->thread_tid);
	for (size_t i = 0; i < p->nseries; i++)
		free(p->series[i].metric);
	free(p->series);
	free(p->seqs);
	free(p->lane_seq);
	ga_proc_pids_free(&p->pp);
	ga_pids_free(&p->tids);
	free(p);
	e->state = NULL;
}

const struct ga_format ga_format_perfetto = {
	.name = "perfetto",
	.alias = "pftrace",
	.help = "Perfetto's protobuf trace: open it in https://ui.perfetto.dev\n"
		"or trace_processor (tracks, slices, flows, counters)",
	.launches = 1,
	.marks = 1,
	.spill_ranges = 1,
	.lean = 1,
	.samples = 1,
	.begin = begin,
	.end = end,
	.done = done,
};
