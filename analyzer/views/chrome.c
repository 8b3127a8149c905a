/*
 * "export --format chrome": Chrome Trace Event JSON, which Perfetto and
 * chrome://tracing open.  GPU activities and API calls stream out as the
 * model reads them; NVTX ranges, marks and names follow from the finished
 * analysis.  Memory: a little per process, thread and stream, 12 bytes
 * per NVTX range (its track, and the ranges the API calls must nest with),
 * plus the launch index (model/ranges.h: about 20 bytes per distinct
 * activity correlation) behind the API-to-activity flow arrows.
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
 * range is known (layout()); API calls and activities find theirs as they
 * stream, each lane keeping its last LANE_KEEP top-level slices (older
 * ones summed up in one span that nothing may cross: see lane_fits()).
 * A flow arrow starts on the launching thread's own track.
 *
 * Times: "ts" and "dur" are microseconds with three decimals, relative to
 * a base (the whole second at or before the traces' first record, written
 * as otherData.gpuprof_time_base_ns): a double then holds every value to
 * the nanosecond, so readers that parse ts as a double and round to
 * nanoseconds (Perfetto) get the recorded times exactly.  Absolute epoch
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
 * per device (see metrics_launch()).  Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/export.h"

/* GPU streams get thread ids above any Linux tid (pid_max <= 2^22). */
#define GPU_TID_BASE 0x40000000u
/* Host tracks of no thread of their own (NVTX domains, lanes): also above. */
#define HOST_TID_BASE 0x20000000u
#define NS_PER_S 1000000000ull
/* Top-level slices a lane keeps to check the next ones against. */
#define LANE_KEEP 8
/* Range boundaries inside one API call looked at before giving up (its thread is in the call). */
#define CROSS_LOOK 64

/*
 * One lane of a track: a thread id and the last top-level slices on it,
 * disjoint, by start; s[0], e[0] may be the span of all older ones.
 */
struct lane {
	uint32_t tid;
	uint32_t next;             /* the track's next lane: index + 1, 0 none */
	uint32_t n;
	uint64_t s[LANE_KEEP + 1], e[LANE_KEEP + 1];   /* one more while one is put */
};

/* A track of ranges named at the end, when its process is known: "NVTX D [tid T]". */
struct range_track {
	uint32_t proc, tid;        /* tid: the track's */
	uint32_t thread;           /* the thread whose ranges it holds */
	uint32_t domain;           /* strtab id, 0 the default domain */
	int overlapping;           /* a lane after the first */
};

/* The ranges on one thread's own track, for its API calls to nest with. */
struct range_seg {
	size_t off, n;             /* into by_start and by_end */
};

struct chrome {
	struct ga_map streams;     /* (proc << 32 | device, context << 32 | stream) -> lane + 1 */
	uint32_t nstreams;         /* GPU thread ids handed out */
	struct ga_map threads;     /* (proc, tid) -> the thread's API lane + 1 */
	uint32_t nhost;            /* host thread ids handed out */
	struct lane *lanes;
	size_t nlanes, caplanes;
	int laid_out;              /* the ranges' tracks chosen (layout()) */
	uint32_t *range_tid;       /* per range of rg: its track's thread id */
	uint32_t *by_start, *by_end;   /* ranges on their thread's own track, per thread */
	struct range_seg *segs;
	size_t nsegs, capsegs;
	struct ga_map seg_map;     /* (proc, tid) -> segs index + 1 */
	struct range_track *rtracks;   /* the range tracks that are no thread's own */
	size_t nrtracks, caprtracks;
	uint8_t *proc_seen;
	size_t capseen;
	uint32_t *chrome_pid;      /* per process: its pid, made unique */
	struct ga_map pids;        /* (0, chrome pid) taken; (1, pid) -> the next k of pid_for() */
	uint32_t spare;            /* the last pid pid_for() tried once a pid's k were used up */
	uint64_t base;             /* trace time of ts 0 */
	int based;                 /* base chosen */
	uint64_t flows;            /* flow ids handed out */
	struct ga_observer next;   /* the model's observer before this export's */
};

/* CUpti_ActivityMemoryKind values, as the copy's args name them. */
static const char *mem_kind(unsigned k)
{
	static const char *const names[] = {
		"unknown", "pageable", "pinned", "device", "array", "managed",
		"device_static", "managed_static",
	};

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

/* The base: chosen at the first event, once the index pass has seen every file. */
static uint64_t base_of(struct ga_export *e)
{
	struct chrome *c = e->state;

	if (!c->based) {
		uint64_t first = e->an->rg.first_ns;

		c->base = first == UINT64_MAX ? 0 : first / NS_PER_S * NS_PER_S;
		c->based = 1;
	}
	return c->base;
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

/* A new lane on thread id tid: its index, or -1 out of memory. */
static long lane_new(struct chrome *c, uint32_t tid)
{
	struct lane *l;

	if (c->nlanes >= UINT32_MAX - 1 ||
	    ga_util_grow(&c->lanes, &c->caplanes, c->nlanes + 1, sizeof(*c->lanes)))
		return -1;
	l = &c->lanes[c->nlanes];
	memset(l, 0, sizeof(*l));
	l->tid = tid;
	return (long)c->nlanes++;
}

/*
 * Whether [s, e) may go on lane l: against each slice kept, disjoint, or
 * (nest: host tracks) containing it; on GPU tracks nothing may overlap.  A
 * slice inside a kept one does not fit, as the kept one's children are
 * forgotten and it might cross one; in the usual order (a call's record
 * comes after those of the calls it makes, activities of a stream one
 * after the other) that does not happen.
 */
static int lane_fits(const struct lane *l, int nest, uint64_t s, uint64_t e)
{
	/* Kept slices are disjoint and by start: the last ends last. */
	if (!l->n || s >= l->e[l->n - 1])
		return 1;
	for (uint32_t i = 0; i < l->n; i++) {
		if (l->e[i] <= s || e <= l->s[i])
			continue;
		if (nest && s <= l->s[i] && l->e[i] <= e)
			continue;
		return 0;
	}
	return 1;
}

/* Put [s, e), which fits, on lane l: it replaces what it contains. */
static void lane_put(struct lane *l, uint64_t s, uint64_t e)
{
	uint32_t i, j = 0;

	for (i = 0; i < l->n; i++) {
		if (s <= l->s[i] && l->e[i] <= e)
			continue;
		l->s[j] = l->s[i];
		l->e[j] = l->e[i];
		j++;
	}
	for (i = j; i > 0 && l->s[i - 1] > s; i--) {
		l->s[i] = l->s[i - 1];
		l->e[i] = l->e[i - 1];
	}
	l->s[i] = s;
	l->e[i] = e;
	l->n = j + 1;
	if (l->n > LANE_KEEP) {
		/* The two first become one span: disjoint, by start, it ends before the third. */
		l->e[0] = l->e[1] > l->e[0] ? l->e[1] : l->e[0];
		memmove(&l->s[1], &l->s[2], (LANE_KEEP - 1) * sizeof(l->s[0]));
		memmove(&l->e[1], &l->e[2], (LANE_KEEP - 1) * sizeof(l->e[0]));
		l->n = LANE_KEEP;
	}
}

/*
 * The thread id for [s, t) on a track: *head is its first lane + 1 (0: a
 * new track, whose first lane gets tid0, or when tid0 is UINT32_MAX a new
 * GPU thread id named name).  It goes on the first lane it fits in (the
 * first only when first_ok), else on a new one, named name "
 * (overlapping)".  Returns 0, or -1 out of memory.
 */
static int place(struct ga_export *e, uint32_t pid, uint32_t *head, uint32_t tid0, int gpu,
		 int first_ok, const char *name, uint64_t s, uint64_t t, uint32_t *tid)
{
	struct chrome *c = e->state;
	char lname[160];
	long i, last = -1;

	if (!*head) {
		if (tid0 == UINT32_MAX) {
			tid0 = GPU_TID_BASE + c->nstreams++;
			gpu_track_meta(&e->jw, pid, tid0, name);
		}
		if ((i = lane_new(c, tid0)) < 0)
			return -1;
		*head = (uint32_t)i + 1;
	}
	for (i = (long)*head - 1; i >= 0; i = (long)c->lanes[i].next - 1) {
		last = i;
		if ((i != (long)*head - 1 || first_ok) && lane_fits(&c->lanes[i], !gpu, s, t))
			break;
	}
	if (i < 0) {
		uint32_t ntid = gpu ? GPU_TID_BASE + c->nstreams++ : HOST_TID_BASE + c->nhost++;

		if ((i = lane_new(c, ntid)) < 0)
			return -1;
		c->lanes[last].next = (uint32_t)i + 1;
		snprintf(lname, sizeof(lname), "%s (overlapping)", name);
		if (gpu)
			gpu_track_meta(&e->jw, pid, ntid, lname);
		else
			host_track_meta(&e->jw, pid, ntid, lname);
	}
	lane_put(&c->lanes[i], s, t);
	*tid = c->lanes[i].tid;
	return 0;
}

/* "rank 1: python3 train.py [4242] on node7" */
static int proc_name(const struct ga_model *m, const struct ga_proc *p, struct ga_buf *b)
{
	int rc = 0;

	if (p->rank != GA_NO_RANK)
		rc |= ga_buf_printf(b, "rank %u: ", p->rank);
	if (p->cmdline)
		rc |= ga_buf_printf(b, "%.200s [%u]", ga_model_str(m, p->cmdline), p->pid);
	else
		rc |= ga_buf_printf(b, "pid %u", p->pid);
	if (p->host)
		rc |= ga_buf_printf(b, " on %s", ga_model_str(m, p->host));
	return rc;
}

/*
 * A pid no process of the export has: the process's own, else, as long as
 * those are free, its own plus k << 22 for k = 1..1023 (above any Linux
 * pid, same low bits), else the first free one counting up.  Processes of
 * different hosts or containers share pids (every rank may be pid 1), and
 * Perfetto must not merge them, however many there are.  Each pid's next k
 * and the counter are kept, so n processes of one pid cost O(n) lookups.
 */
static int pid_for(struct chrome *c, uint32_t pid, uint32_t *out)
{
	uint32_t *next = NULL, k, cand = pid;
	int r;

	for (;;) {
		if (!ga_map_find(&c->pids, 0, cand))
			break;
		if (!next) {
			r = ga_map_insert(&c->pids, 1, pid, &next);
			if (r < 0)
				return -1;
			if (r == 1)
				*next = 1;
		}
		k = *next;
		if (k < 1024) {
			*next = k + 1;
			cand = pid + (k << 22);
		} else {
			cand = ++c->spare;   /* from 1: pid 0 is no process */
		}
	}
	r = ga_map_insert(&c->pids, 0, cand, &next);
	if (r < 0)
		return -1;
	*out = cand;
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

	if (proc < c->capseen && c->proc_seen[proc])
		return 0;
	if (proc >= c->capseen) {
		size_t old = c->capseen;
		uint32_t *np;

		if (ga_util_grow(&c->proc_seen, &c->capseen, (size_t)proc + 1, 1))
			return -1;
		memset(c->proc_seen + old, 0, c->capseen - old);
		/* chrome_pid is sized alongside proc_seen. */
		np = realloc(c->chrome_pid, c->capseen * sizeof(*np));
		if (!np)
			return -1;
		c->chrome_pid = np;
	}
	if (pid_for(c, p->pid, &pid))
		return -1;
	c->proc_seen[proc] = 1;
	c->chrome_pid[proc] = pid;

	if (proc_name(m, p, &b)) {
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
static int stream_track(struct ga_export *e, const struct ga_act *a, uint32_t pid,
			uint32_t *tid)
{
	struct chrome *c = e->state;
	uint32_t *slot;
	char tname[64];

	if (ga_map_insert(&c->streams, (uint64_t)a->proc << 32 | a->device_id,
			  (uint64_t)a->context << 32 | a->stream, &slot) < 0)
		return -1;
	snprintf(tname, sizeof(tname), "cuda:%u stream %u", a->device_id, a->stream);
	return place(e, pid, slot, UINT32_MAX, 1, 1, tname, a->start, a->end, tid);
}

/* Ranges of rg by (process, thread, start, end descending). */
static int cmp_range(const void *pa, const void *pb, void *ctx)
{
	const struct ga_ranges *rg = ctx;
	const struct ga_ranges_range *a = &rg->ranges[*(const uint32_t *)pa];
	const struct ga_ranges_range *b = &rg->ranges[*(const uint32_t *)pb];

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

static int cmp_range_end(const void *pa, const void *pb, void *ctx)
{
	const struct ga_ranges *rg = ctx;
	uint64_t a = rg->ranges[*(const uint32_t *)pa].end, b = rg->ranges[*(const uint32_t *)pb].end;

	if (a != b)
		return a < b ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

/* A lane of ranges while they are laid out: the ends of the ranges open on it. */
struct stack {
	uint64_t *end;
	size_t n, cap;
	uint32_t tid;
	uint32_t domain;           /* strtab id, 0 the default domain */
};

/*
 * The track and lane of every push/pop range (range_tid): per thread, the
 * default domain on the thread's own track, every other domain on a track
 * of its own; in each, a range goes on the first lane where it nests in
 * the innermost range still open there, or on a new lane.  Then, per
 * thread, the ranges on its own track by start and by end, for the API
 * calls to be checked against (crosses_ranges()).  Once, at the first
 * event: the index pass has found every range by then.
 */
static int layout(struct ga_export *e)
{
	struct chrome *c = e->state;
	const struct ga_ranges *rg = &e->an->rg;
	size_t n = rg->nranges, i, j, k, nby = 0, nst = 0, capst = 0;
	struct stack *st = NULL;
	uint32_t *ord;
	int rc = -1;

	c->laid_out = 1;
	if (!n)
		return 0;
	ord = malloc(n * sizeof(*ord));
	c->range_tid = calloc(n, sizeof(*c->range_tid));
	c->by_start = malloc(n * sizeof(*c->by_start));
	c->by_end = malloc(n * sizeof(*c->by_end));
	if (!ord || !c->range_tid || !c->by_start || !c->by_end)
		goto out;
	for (i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, n, sizeof(*ord), cmp_range, (void *)rg);
	for (i = 0; i < n; i = j) {
		const struct ga_ranges_range *r0 = &rg->ranges[ord[i]];
		size_t seg = nby;
		uint32_t *slot;

		for (j = i; j < n && rg->ranges[ord[j]].proc == r0->proc &&
			    rg->ranges[ord[j]].tid == r0->tid; j++)
			;
		for (k = 0; k < nst; k++)
			free(st[k].end);
		nst = 0;
		for (k = i; k < j; k++) {
			const struct ga_ranges_range *r = &rg->ranges[ord[k]];
			uint32_t dom = rg->keys[r->key].domain;
			size_t l, first = SIZE_MAX;

			if (!r->pushpop)
				continue;
			for (l = 0; l < nst; l++) {
				if (st[l].domain != dom)
					continue;
				if (first == SIZE_MAX)
					first = l;
				while (st[l].n && st[l].end[st[l].n - 1] <= r->start)
					st[l].n--;
				if (!st[l].n || st[l].end[st[l].n - 1] >= r->end)
					break;
			}
			if (l == nst) {
				if (ga_util_grow(&st, &capst, nst + 1, sizeof(*st)))
					goto out;
				memset(&st[l], 0, sizeof(st[l]));
				st[l].domain = dom;
				if (first == SIZE_MAX && !dom) {
					st[l].tid = r->tid;
				} else {
					struct range_track *t;

					/* Named at the end: the process is not read yet. */
					if (ga_util_grow(&c->rtracks, &c->caprtracks, c->nrtracks + 1,
							 sizeof(*c->rtracks)))
						goto out;
					st[l].tid = HOST_TID_BASE + c->nhost++;
					t = &c->rtracks[c->nrtracks++];
					t->proc = r->proc;
					t->tid = st[l].tid;
					t->thread = r->tid;
					t->domain = dom;
					t->overlapping = first != SIZE_MAX;
				}
				nst++;
			}
			if (ga_util_grow(&st[l].end, &st[l].cap, st[l].n + 1, sizeof(uint64_t)))
				goto out;
			st[l].end[st[l].n++] = r->end;
			c->range_tid[ord[k]] = st[l].tid;
			if (st[l].tid == r->tid)
				c->by_start[nby++] = ord[k];
		}
		if (nby == seg)
			continue;
		if (ga_util_grow(&c->segs, &c->capsegs, c->nsegs + 1, sizeof(*c->segs)) ||
		    ga_map_insert(&c->seg_map, r0->proc, r0->tid, &slot) < 0)
			goto out;
		c->segs[c->nsegs].off = seg;
		c->segs[c->nsegs].n = nby - seg;
		*slot = (uint32_t)++c->nsegs;
		memcpy(c->by_end + seg, c->by_start + seg, (nby - seg) * sizeof(*c->by_end));
		qsort_r(c->by_end + seg, nby - seg, sizeof(*c->by_end), cmp_range_end, (void *)rg);
	}
	rc = 0;
out:
	for (k = 0; k < nst; k++)
		free(st[k].end);
	free(st);
	free(ord);
	return rc;
}

/*
 * Whether an API call [s, t) of thread (proc, tid) would cross a range on
 * the thread's own track: one that starts inside it and ends after, or
 * ends inside it and started before.  A thread is inside its call while it
 * makes it, so no range should start or end there: past CROSS_LOOK such
 * boundaries it counts as crossing.
 */
static int crosses_ranges(const struct chrome *c, const struct ga_ranges *rg, uint32_t proc,
			  uint32_t tid, uint64_t s, uint64_t t)
{
	const uint32_t *v = ga_map_find(&c->seg_map, proc, tid);
	const uint32_t *a;
	size_t lo, hi, n, look = 0;

	if (!v)
		return 0;
	n = c->segs[*v - 1].n;
	a = c->by_start + c->segs[*v - 1].off;
	for (lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (rg->ranges[a[mid]].start <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && rg->ranges[a[lo]].start < t; lo++)
		if (++look > CROSS_LOOK || rg->ranges[a[lo]].end > t)
			return 1;
	a = c->by_end + c->segs[*v - 1].off;
	for (lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (rg->ranges[a[mid]].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && rg->ranges[a[lo]].end < t; lo++)
		if (++look > CROSS_LOOK || rg->ranges[a[lo]].start < s)
			return 1;
	return 0;
}

/* layout() once, at the first event. */
static int laid_out(struct ga_export *e)
{
	struct chrome *c = e->state;

	return c->laid_out ? 0 : layout(e);
}

/* A flow from the API call that launched a (on its host thread) to a itself. */
static void flow(struct ga_export *e, uint32_t pid, uint32_t api_tid, uint64_t api_t,
		 uint32_t gpu_tid, uint64_t t)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint64_t id = ++c->flows;

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

static int act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_export *e = ctx;
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint32_t pid, tid, api_tid, site;
	uint64_t api_t;
	char kb[16];

	if (laid_out(e) || proc_seen(e, m, a->proc))
		return -1;
	pid = c->chrome_pid[a->proc];
	if (stream_track(e, a, pid, &tid))
		return -1;
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

			ga_jw_kcstr(w, "src_kind", mem_kind(cp->src_kind));
			ga_jw_kcstr(w, "dst_kind", mem_kind(cp->dst_kind));
		}
	}
	if (a->graph_id) {
		ga_jw_ku64(w, "graph_id", a->graph_id);
		ga_jw_ku64(w, "graph_node", a->graph_node);
	}
	ga_jw_end(w);
	ga_jw_end(w);
	if (ga_ranges_launch(&e->an->rg, a, &api_tid, &api_t))
		flow(e, pid, api_tid, api_t, tid, a->start);
	return ferror(e->out) || w->err ? -1 : 0;
}

static int api(void *ctx, struct ga_model *m, const struct ga_api_call *a)
{
	struct ga_export *e = ctx;
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint32_t *slot, tid;
	char name[32];

	if (laid_out(e) || proc_seen(e, m, a->proc))
		return -1;
	if (ga_map_insert(&c->threads, a->proc, a->tid, &slot) < 0)
		return -1;
	snprintf(name, sizeof(name), "tid %u", a->tid);
	if (place(e, c->chrome_pid[a->proc], slot, a->tid, 0,
		  !crosses_ranges(c, &e->an->rg, a->proc, a->tid, a->start, a->end), name, a->start,
		  a->end, &tid))
		return -1;
	ga_jw_obj(w, GA_JW_COMPACT);
	ksid(w, "name", m, a->name);
	ga_jw_kcstr(w, "cat", "api");
	ga_jw_kcstr(w, "ph", "X");
	ga_jw_ku64(w, "pid", c->chrome_pid[a->proc]);
	ga_jw_ku64(w, "tid", tid);
	kts(e, "ts", a->start);
	kdur(w, a->end - a->start);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "correlation", a->correlation);
	ga_jw_ki64(w, "return", a->ret);
	ga_jw_end(w);
	ga_jw_end(w);
	return ferror(e->out) || w->err ? -1 : 0;
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
		       const struct ga_ranges_key *k)
{
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ksid(w, "domain", m, k->domain);
	ga_jw_kbool(w, "unterminated", r->flags != 0);
	if (r->tid_end && r->tid_end != r->tid)
		ga_jw_ku64(w, "ended_on_tid", r->tid_end);
	if (r->category)
		ga_jw_ku64(w, "category", r->category);
	if (r->color) {
		ga_jw_key(w, "color");
		ga_jw_rawf(w, "\"#%06x\"", r->color & 0xffffffu);
	}
	if (r->payload_kind) {
		ga_jw_key(w, "payload");
		payload(w, r->payload_kind, r->payload);
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
	char id[48];
	size_t i;

	for (i = 0; i < rg->nranges; i++) {
		const struct ga_ranges_range *r = &rg->ranges[i];
		const struct ga_ranges_key *k = &rg->keys[r->key];
		int ph;

		if (proc_seen(e, m, r->proc))
			return -1;
		if (r->pushpop) {
			ga_jw_obj(w, GA_JW_COMPACT);
			ksid(w, "name", m, k->name);
			ga_jw_kcstr(w, "cat", "nvtx");
			ga_jw_kcstr(w, "ph", "X");
			ga_jw_ku64(w, "pid", c->chrome_pid[r->proc]);
			ga_jw_ku64(w, "tid", c->range_tid[i]);
			kts(e, "ts", r->start);
			kdur(w, r->end - r->start);
			range_args(w, m, r, k);
			ga_jw_end(w);
			continue;
		}
		snprintf(id, sizeof(id), "%u:%" PRIu64, r->proc, r->id);
		for (ph = 0; ph < 2; ph++) {
			ga_jw_obj(w, GA_JW_COMPACT);
			ksid(w, "name", m, k->name);
			ga_jw_kcstr(w, "cat", "nvtx");
			ga_jw_kcstr(w, "ph", ph ? "e" : "b");
			ga_jw_kcstr(w, "id", id);
			ga_jw_ku64(w, "pid", c->chrome_pid[r->proc]);
			ga_jw_ku64(w, "tid", ph && r->tid_end ? r->tid_end : r->tid);
			kts(e, "ts", ph ? r->end : r->start);
			if (!ph)
				range_args(w, m, r, k);
			ga_jw_end(w);
		}
	}
	return ferror(e->out) || w->err ? -1 : 0;
}

/* The names of the range tracks that are no thread's own (layout()). */
static int range_track_names(struct ga_export *e, struct ga_model *m)
{
	struct chrome *c = e->state;
	char name[160];

	for (size_t i = 0; i < c->nrtracks; i++) {
		const struct range_track *t = &c->rtracks[i];

		if (proc_seen(e, m, t->proc))
			return -1;
		if (t->domain)
			snprintf(name, sizeof(name), "NVTX %.100s [tid %u]%s",
				 ga_model_str(m, t->domain), t->thread,
				 t->overlapping ? " (overlapping)" : "");
		else
			snprintf(name, sizeof(name), "tid %u (overlapping)", t->thread);
		host_track_meta(&e->jw, c->chrome_pid[t->proc], t->tid, name);
	}
	return 0;
}

/* NVTX marks as instant events on their thread. */
static int marks(struct ga_export *e, struct ga_model *m, const struct ga_ranges *rg)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	size_t i;

	for (i = 0; i < rg->nmark_events; i++) {
		const struct ga_ranges_mark_event *x = &rg->mark_events[i];
		const struct ga_ranges_mark *k = &rg->marks[x->mark];

		if (proc_seen(e, m, x->proc))
			return -1;
		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "name", m, k->name);
		ga_jw_kcstr(w, "cat", "nvtx");
		ga_jw_kcstr(w, "ph", "i");
		ga_jw_kcstr(w, "s", "t");
		ga_jw_ku64(w, "pid", c->chrome_pid[x->proc]);
		ga_jw_ku64(w, "tid", x->tid);
		kts(e, "ts", x->t);
		ga_jw_key(w, "args");
		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "domain", m, k->domain);
		ga_jw_end(w);
		ga_jw_end(w);
	}
	return ferror(e->out) || w->err ? -1 : 0;
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
		meta_head(w, "thread_name", c->chrome_pid[t->a], &tid);
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
static int memory_counters(struct ga_export *e, struct ga_model *m, const struct ga_memuse *mu)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	char name[48];

	for (size_t i = 0; i < mu->ndevs; i++) {
		const struct ga_memuse_dev *d = &mu->devs[i];
		uint64_t last = 0;
		int any = 0;

		if (proc_seen(e, m, d->proc))
			return -1;
		snprintf(name, sizeof(name), "cuda:%u memory", d->device);
		for (size_t j = 0; j < d->nev; j++) {
			const struct ga_memuse_event *ev = &d->ev[j];

			if (j + 1 < d->nev && d->ev[j + 1].t == ev->t)
				continue;
			if (any && ev->in_use == last)
				continue;
			ga_jw_obj(w, GA_JW_COMPACT);
			ga_jw_kcstr(w, "name", name);
			ga_jw_kcstr(w, "cat", "memory");
			ga_jw_kcstr(w, "ph", "C");
			ga_jw_ku64(w, "pid", c->chrome_pid[d->proc]);
			kts(e, "ts", ev->t);
			ga_jw_key(w, "args");
			ga_jw_obj(w, GA_JW_COMPACT);
			ga_jw_ku64(w, "bytes", ev->in_use);
			ga_jw_end(w);
			ga_jw_end(w);
			last = ev->in_use;
			any = 1;
		}
	}
	return ferror(e->out) || w->err ? -1 : 0;
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
	pid = c->chrome_pid[proc];
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
	return ferror(e->out) || w->err ? -1 : 0;
}

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_export *e = ctx;
	struct chrome *c = e->state;

	if (rec->type == GP_REC_METRICS && rec->size >= sizeof(struct gp_rec_metrics) &&
	    metrics_launch(e, m, proc, (const void *)rec))
		return -1;
	return c->next.rec ? c->next.rec(c->next.ctx, m, proc, rec) : 0;
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct chrome *c = ((struct ga_export *)ctx)->state;

	return c->next.act ? c->next.act(c->next.ctx, m, a) : 0;
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
	c->next = e->an->m.obs;
	e->an->m.obs.ctx = e;
	e->an->m.obs.rec = obs_rec;
	e->an->m.obs.act = obs_act;
	ga_jw_obj(&e->jw, GA_JW_COMPACT);
	ga_jw_key(&e->jw, "traceEvents");
	ga_jw_arr(&e->jw, GA_JW_EVENTS);
	return 0;
}

static int end(struct ga_export *e)
{
	struct ga_model *m = &e->an->m;
	char b[32];

	if (laid_out(e) || ranges(e, m, &e->an->rg) || range_track_names(e, m) ||
	    marks(e, m, &e->an->rg) || thread_names(e, m) ||
	    memory_counters(e, m, &e->an->mu))
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
	ga_map_free(&c->seg_map);
	ga_map_free(&c->pids);
	free(c->lanes);
	free(c->range_tid);
	free(c->by_start);
	free(c->by_end);
	free(c->segs);
	free(c->rtracks);
	free(c->proc_seen);
	free(c->chrome_pid);
	free(c);
	e->state = NULL;
}

const struct ga_format ga_format_chrome = {
	.name = "chrome",
	.help = "Chrome Trace Event JSON: open it in https://ui.perfetto.dev\n"
		"or chrome://tracing",
	.launches = 1,
	.marks = 1,
	.observe_sites = 1,
	.sites_ahead = 1,
	.begin = begin,
	.end = end,
	.done = done,
};
