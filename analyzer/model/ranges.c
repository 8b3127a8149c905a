/*
 * NVTX ranges and the attribution of GPU activities to them (see ranges.h).
 * Runs offline only.
 *
 * Finding the ranges open at time t on a thread: the thread's ranges are
 * sorted by start (ties: longer first), and each range links to the
 * innermost range open when it started.  Every range open at t started no
 * later than r, the last range to start at or before t, so it was open at
 * r's start: it lies on r's parent chain, which lists exactly the ranges
 * open at r's start, latest start first.  Walking that chain and keeping
 * the ranges that end after t gives the open ranges, innermost first, even
 * when start/end ranges overlap without nesting.  A binary search and a
 * walk as deep as the nesting, per activity.
 */
#include "model/ranges.h"
#include "model/align.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define CORR_DENSE GA_RANGES_CORR_DENSE /* larger correlation ids go to a hash */
/*
 * A correlation's code (struct ga_ranges_corr): 0 no activity of it was
 * seen; CODE_UNATTR none of its API records (or not yet resolved);
 * CODE_NONE no range was open at its launch; else its innermost range's
 * index + CODE_RANGE (index_ranges() keeps the index below
 * GA_RANGES_UNATTR, so that it fits).
 */
#define CODE_UNATTR 1u
#define CODE_NONE 2u
#define CODE_RANGE 3u
/* A fold's launch waiting for its ranges (struct fold): CODE_PEND | its serial (fpend). */
#define CODE_PEND (1u << 31)
/*
 * A fold's launch made while a range of another thread of its process was
 * open: CODE_PAIR | the index of (its own code, that range's tree node) in
 * the fold's pairs (struct fold), one a pair of them.
 */
#define CODE_PAIR (1u << 30)
/*
 * A fold's launch whose thread's ranges open at its launch are not those of
 * its innermost range's name path (ranges that do not nest):
 * CODE_WALK | the index of (that range's tree node, the keys of the ranges
 * open then) in the fold's walks (struct fold), counted as
 * ga_ranges_walk() counts them.  Tree nodes stay below CODE_WALK -
 * CODE_RANGE (CODE_NODES).
 */
#define CODE_WALK (1u << 29)
#define CODE_NODES (CODE_WALK - CODE_RANGE)
/*
 * API records seen before any activity of their correlation, by
 * correlation id modulo the ring's size (a power of two, grown up to
 * API_RING_MAX entries as the ids grow): an activity takes its launch from
 * here.  Correlation ids count up as the calls are made and an activity's
 * record follows its call's within a few CUPTI buffers, far fewer than
 * API_RING_MAX calls later; a call pushed out of the ring by one
 * API_RING_MAX ids newer leaves an activity that comes after that
 * unattributed.
 */
#define API_RING_MAX (1u << 20)

struct api_seen {
	uint64_t t;                /* start of the earliest call of the correlation */
	uint32_t corr;             /* 0: empty */
	uint32_t tid;
};

struct gnode_raw {
	uint64_t node, nvtx;
	uint32_t proc;
};

/* State of one file's scan. */
struct scan {
	struct ga_ranges *nx;
	struct ga_model *m;
	uint32_t proc;             /* model process index */
	struct api_seen *ring;     /* see API_RING_MAX; per file */
	size_t ringcap;
	int skip;                  /* the recorder traced no NVTX: nothing to find */
	int skip_nvtx;             /* no NVTX, but copies to pair (ga_model_note_copy) */
	int no_api;                /* its CONFIG traced no API calls: no launch to find */
	/*
	 * Ranges spilled (ga_ranges spill): no activity is attributed to
	 * them, so no correlation is kept; launches, where asked, are found
	 * in the model's read (ahead_procs 3), as for a trace without NVTX.
	 */
	int no_corr;
	int pystacks;              /* its CONFIG recorded Python frames (launch sites' seqs) */
	int gs_want;               /* folded, its ranges are windows of GPU samples (nx->gsw) */
	int oom;
	const char *fail;          /* a fold given up: why (ranges.h: fold) */
	int due;                   /* a fold's ranges came since a record of another type (fold_due()) */
	uint64_t nrec;             /* records of the file read */
	/* A scan again after a fold given up: the model noted these already. */
	uint32_t noted_files;      /* files before this one */
	uint64_t noted_recs;       /* records of file noted_files */
	struct ga_strmap smap;     /* file string id -> strtab id */
	struct gnode_raw **gn;
	size_t *ngn, *capgn;
	/*
	 * The last launching thread looked up (scan_tid_x()): most launches
	 * of a file come from one thread, and tids never moves an index.
	 */
	uint32_t tx_proc, tx_tid, tx_x; /* tx_x 0: none yet */
	uint32_t chunk;                 /* paced (ranges.h pace): the chunk being read */
};

struct fold;
struct fthr;
static int fold_range(struct scan *s, const struct ga_ranges_range *g);
static int fold_due(struct scan *s);
static void fold_lag(struct scan *s, uint32_t flush_ms);
static int fold_corr(struct scan *s, uint32_t corr, const struct api_seen *a);
static int fold_api(struct scan *s, const struct gp_rec_api *r);
static void fold_free(struct fold *f);
static int fold_give_up(struct scan *s, const char *why);
static int fold_gnode(struct scan *s, const struct gp_rec_graph_node *g);
static int fold_gact(struct scan *s, uint64_t node);
static int fold_gw_place(struct scan *s, struct fthr *u, const struct ga_ranges_range *g);
static int fold_open(struct scan *s, const struct ga_ranges_range *g);
static int pace_clean(const struct scan *s);

void ga_ranges_init(struct ga_ranges *nx)
{
	memset(nx, 0, sizeof(*nx));
	nx->root = GA_RANGES_NONE;
	nx->first_ns = UINT64_MAX;
}

static void free_times(struct ga_ranges_dense *d)
{
	size_t b;

	for (b = 0; d->wide && b < d->cap / GA_RANGES_TBLOCK; b++)
		free(d->wide[b]);
	free(d->wide);
	free(d->base);
	free(d->t);
	d->wide = NULL;
	d->base = NULL;
	d->t = NULL;
}

/*
 * Set the launch time of id j: an offset from its block's base (the first
 * time set there, less 2^31, so that earlier calls of the correlation fit
 * too), or, once a time of the block does not fit, every time of the block
 * whole.  0, or -1 out of memory.
 */
static __attribute__((noinline)) int time_set_slow(struct ga_ranges_dense *d, size_t j,
						 uint64_t t)
{
	size_t b = j / GA_RANGES_TBLOCK, k, lo = b * GA_RANGES_TBLOCK;
	uint64_t *w = d->wide[b];

	if (!w) {
		if (d->base[b] == UINT64_MAX)
			d->base[b] = t > (1ull << 31) ? t - (1ull << 31) : 0;
		if (t >= d->base[b] && t - d->base[b] <= UINT32_MAX) {
			d->t[j] = (uint32_t)(t - d->base[b]);
			return 0;
		}
		if (!(w = malloc(GA_RANGES_TBLOCK * sizeof(*w))))
			return -1;
		for (k = 0; k < GA_RANGES_TBLOCK; k++)
			w[k] = lo + k < d->n && d->x[lo + k] >= 2 ? d->base[b] + d->t[lo + k] : 0;
		d->wide[b] = w;
	}
	w[j % GA_RANGES_TBLOCK] = t;
	return 0;
}

/* time_set_slow(), inline where the time fits its block's base (most times). */
static inline int time_set(struct ga_ranges_dense *d, size_t j, uint64_t t)
{
	uint64_t base = d->base[j / GA_RANGES_TBLOCK];

	if (base != UINT64_MAX && !d->wide[j / GA_RANGES_TBLOCK] && t >= base &&
	    t - base <= UINT32_MAX) {
		d->t[j] = (uint32_t)(t - base);
		return 0;
	}
	return time_set_slow(d, j, t);
}

static void free_corrs(struct ga_ranges *nx)
{
	size_t i;

	for (i = 0; nx->dense && i < nx->nprocs; i++) {
		free_times(&nx->dense[i]);
		free(nx->dense[i].x);
		free(nx->dense[i].gen);
		free(nx->dense[i].code);
	}
	free(nx->dense);
	nx->dense = NULL;
	nx->launches = NULL;
	free(nx->tids);
	nx->tids = NULL;
	nx->ntids = nx->captids = 0;
	ga_map_free(&nx->tid_map);
	free(nx->corrs);
	nx->corrs = NULL;
	nx->ncorrs = nx->capcorrs = 0;
	ga_map_free(&nx->corr_map);
}

/* A large correlation id's launch (struct ga_ranges_corr), or NULL. */
static struct ga_ranges_corr *corr_big(const struct ga_ranges *nx, uint32_t proc, uint32_t corr)
{
	const uint32_t *v = ga_map_find(&nx->corr_map, proc, corr);

	return v && *v ? &nx->corrs[*v - 1] : NULL;
}

/* The same, made when missing (code 0).  NULL out of memory. */
static struct ga_ranges_corr *corr_big_slot(struct ga_ranges *nx, uint32_t proc, uint32_t corr)
{
	uint32_t *slot;
	int r = ga_map_insert(&nx->corr_map, proc, corr, &slot);

	if (r < 0)
		return NULL;
	if (r == 1) {
		if (nx->ncorrs >= UINT32_MAX - 1 ||
		    ga_util_grow(&nx->corrs, &nx->capcorrs, nx->ncorrs + 1, sizeof(*nx->corrs))) {
			ga_map_remove(&nx->corr_map, proc, corr);
			return NULL;
		}
		memset(&nx->corrs[nx->ncorrs], 0, sizeof(*nx->corrs));
		*slot = (uint32_t)++nx->ncorrs;
	}
	return &nx->corrs[*slot - 1];
}

/* Room in d for id corr (x 0 where new); 0, or -1 out of memory. */
static __attribute__((noinline)) int dense_room_slow(struct ga_ranges_dense *d, uint32_t corr)
{
	if (corr >= d->cap) {
		size_t cap = d->cap ? d->cap : GA_RANGES_TBLOCK, b;
		size_t nb = d->cap / GA_RANGES_TBLOCK;
		uint64_t *base, **wide;
		uint32_t *t, *x;

		while (cap <= corr)
			cap *= 2;
		/* Doubling costs no resident memory: see ga_util_grow(). */
		if (!(t = realloc(d->t, cap * sizeof(*t))))
			return -1;
		d->t = t;
		if (!(x = realloc(d->x, cap * sizeof(*x))))
			return -1;
		d->x = x;
		if (!(base = realloc(d->base, cap / GA_RANGES_TBLOCK * sizeof(*base))))
			return -1;
		d->base = base;
		if (!(wide = realloc(d->wide, cap / GA_RANGES_TBLOCK * sizeof(*wide))))
			return -1;
		d->wide = wide;
		for (b = nb; b < cap / GA_RANGES_TBLOCK; b++) {
			base[b] = UINT64_MAX;
			wide[b] = NULL;
		}
		d->cap = cap;
	}
	if (corr >= d->n) {
		/* Ids come one by one as a rule: no memset call for the next one. */
		if (corr == d->n)
			d->x[corr] = 0;
		else
			memset(d->x + d->n, 0, ((size_t)corr + 1 - d->n) * sizeof(*d->x));
		d->n = (size_t)corr + 1;
	}
	return 0;
}

/* dense_room_slow(), inline for an id seen before or the next one. */
static inline int dense_room(struct ga_ranges_dense *d, uint32_t corr)
{
	if (corr < d->n)
		return 0;
	if (corr == d->n && corr < d->cap) {
		d->x[d->n++] = 0;
		return 0;
	}
	return dense_room_slow(d, corr);
}

/*
 * The launches of a trace read once, past GA_RANGES_LWIN ids: d becomes a
 * ring of that many slots (ga_ranges_dense gen), every block of the ids
 * below it generation 0.  0, or -1 out of memory.
 */
static __attribute__((noinline)) int ring_start(struct ga_ranges_dense *d)
{
	if (dense_room(d, GA_RANGES_LWIN - 1) ||
	    !(d->gen = calloc(GA_RANGES_LWIN / GA_RANGES_TBLOCK, sizeof(*d->gen))))
		return -1;
	return 0;
}

/* Block b of ring d given to generation g: its slots emptied. */
static __attribute__((noinline)) void ring_take(struct ga_ranges_dense *d, size_t b, uint16_t g)
{
	memset(d->x + b * GA_RANGES_TBLOCK, 0, GA_RANGES_TBLOCK * sizeof(*d->x));
	d->base[b] = UINT64_MAX;
	free(d->wide[b]);
	d->wide[b] = NULL;
	d->gen[b] = g;
}

/*
 * The slot of id c in the launches of a trace read once (ahead_api(),
 * ahead_corr()): *j.  0; 1 where the ring has let the id's generation go
 * (a newer one holds its block); 2 for an id of GA_RANGES_LWIN or above
 * that jumped there, the ids before it below half of that (the hash and
 * the calls' ring, as on_api() and on_corr() keep large ids: an id far
 * ahead costs what it holds, not the ids up to it); -1 out of memory.
 * The ring starts at an id of GA_RANGES_LWIN or above where the ids
 * before it reached half of that.
 */
static __attribute__((noinline)) int launch_slot_slow(struct ga_ranges_dense *d, uint32_t c,
						      uint32_t *j, uint64_t nrec)
{
	size_t b;
	uint16_t g;

	if (!d->gen) {
		/* By id while near the records read (base/util.h ga_util_id_near()). */
		if (c < GA_RANGES_LWIN && ga_util_id_near(c, nrec)) {
			*j = c;
			return dense_room(d, c);
		}
		if (c < GA_RANGES_LWIN || d->n < GA_RANGES_LWIN / 2)
			return 2;
		if (ring_start(d))
			return -1;
	}
	*j = c & (GA_RANGES_LWIN - 1);
	b = *j / GA_RANGES_TBLOCK;
	g = (uint16_t)(c >> GA_RANGES_LWIN_BITS);
	if (d->gen[b] == g)
		return 0;
	if (d->gen[b] > g)
		return 1;
	ring_take(d, b, g);
	return 0;
}

/*
 * launch_slot_slow(), inline for an id held by id already, the next one,
 * or one in a block of its generation; nrec: the file's records read.
 */
static inline int launch_slot(struct ga_ranges_dense *d, uint32_t c, uint32_t *j, uint64_t nrec)
{
	if (!d->gen) {
		/* Its cap is GA_RANGES_LWIN at most (launch_slot_slow()). */
		if (c < d->n) {
			*j = c;
			return 0;
		}
		if (c == d->n && c < d->cap) {
			d->x[d->n++] = 0;
			*j = c;
			return 0;
		}
	} else if (d->gen[(c & (GA_RANGES_LWIN - 1)) / GA_RANGES_TBLOCK] ==
		   c >> GA_RANGES_LWIN_BITS) {
		*j = c & (GA_RANGES_LWIN - 1);
		return 0;
	}
	return launch_slot_slow(d, c, j, nrec);
}

/* x's value for a launch on thread tid of process proc: its index in tids + 2; 0 out of memory. */
static uint32_t tid_x(struct ga_ranges *nx, uint32_t proc, uint32_t tid)
{
	uint32_t *slot;
	int r = ga_map_insert(&nx->tid_map, proc, tid, &slot);

	if (r < 0)
		return 0;
	if (r == 1) {
		if (nx->ntids >= UINT32_MAX - 2 ||
		    ga_util_grow(&nx->tids, &nx->captids, nx->ntids + 1, sizeof(*nx->tids))) {
			ga_map_remove(&nx->tid_map, proc, tid);
			return 0;
		}
		nx->tids[nx->ntids] = tid;
		*slot = (uint32_t)nx->ntids++;
	}
	return *slot + 2;
}

/* tid_x() of the scan's process, through the scan's one-entry cache. */
static inline uint32_t scan_tid_x(struct scan *s, uint32_t tid)
{
	uint32_t x;

	if (s->tx_x && s->tx_proc == s->proc && s->tx_tid == tid)
		return s->tx_x;
	if ((x = tid_x(s->nx, s->proc, tid))) {
		s->tx_proc = s->proc;
		s->tx_tid = tid;
		s->tx_x = x;
	}
	return x;
}

void ga_ranges_drop_steps(struct ga_ranges *nx)
{
	free(nx->steps);
	nx->steps = NULL;
	nx->nsteps = nx->capsteps = 0;
	if (nx->steps_fd1)
		close(nx->steps_fd1 - 1);
	nx->steps_fd1 = 0;
	nx->nfiled = 0;
	nx->steps_nofile = 0;
}

/*
 * A folded step kept: in memory, the GA_RANGES_STEPS_MEM there first
 * appended to the temporary file (made on first use; where it cannot be,
 * every step stays in memory).  0, -1 out of memory, or 1 where the file
 * cannot be written.
 */
static int step_keep(struct ga_ranges *nx, const struct ga_ranges_step *st)
{
	if (nx->nsteps >= GA_RANGES_STEPS_MEM && !nx->steps_nofile) {
		int fd = nx->steps_fd1 ? nx->steps_fd1 - 1 : ga_util_tmpfd("steps", NULL);

		if (fd < 0) {
			nx->steps_nofile = 1;
		} else {
			size_t len = nx->nsteps * sizeof(*nx->steps), done = 0;
			off_t at = (off_t)(nx->nfiled * sizeof(*nx->steps));

			nx->steps_fd1 = fd + 1;
			while (done < len) {
				ssize_t w = pwrite(fd, (const char *)nx->steps + done, len - done,
						   at + (off_t)done);

				if (w <= 0)
					return 1;
				done += (size_t)w;
			}
			nx->nfiled += nx->nsteps;
			nx->nsteps = 0;
		}
	}
	if (ga_util_grow(&nx->steps, &nx->capsteps, nx->nsteps + 1, sizeof(*nx->steps)))
		return -1;
	nx->steps[nx->nsteps++] = *st;
	return 0;
}

int ga_ranges_each_step(struct ga_ranges *nx, int (*fn)(void *ctx, const struct ga_ranges_step *st),
			void *ctx)
{
	struct ga_ranges_step buf[256];
	uint64_t i, at = 0;
	int rc;

	while (at < nx->nfiled) {
		size_t want = nx->nfiled - at < 256 ? (size_t)(nx->nfiled - at) : 256, done = 0;

		while (done < want * sizeof(*buf)) {
			ssize_t r = pread(nx->steps_fd1 - 1, (char *)buf + done,
					  want * sizeof(*buf) - done,
					  (off_t)(at * sizeof(*buf) + done));

			if (r <= 0) {
				snprintf(nx->err, sizeof(nx->err),
					 "the temporary file of the NVTX steps: %s",
					 r < 0 ? strerror(errno) : "shorter than written");
				return -1;
			}
			done += (size_t)r;
		}
		for (i = 0; i < want; i++)
			if ((rc = fn(ctx, &buf[i])))
				return rc;
		at += want;
	}
	for (i = 0; i < nx->nsteps; i++)
		if ((rc = fn(ctx, &nx->steps[i])))
			return rc;
	return 0;
}

void ga_ranges_free(struct ga_ranges *nx)
{
	ga_ranges_drop_steps(nx);
	free(nx->ranges);
	free(nx->details);
	free(nx->nested);
	free(nx->self);
	free(nx->keys);
	ga_map_free(&nx->key_map);
	free(nx->raw);
	free(nx->marks);
	ga_map_free(&nx->mark_map);
	free(nx->threads);
	ga_map_free(&nx->thread_map);
	free_corrs(nx);
	ga_map_free(&nx->gnode_map);
	free(nx->spill_gn);
	ga_map_free(&nx->spill_gid);
	free(nx->nodes);
	ga_map_free(&nx->node_map);
	free(nx->proc_ranges);
	free(nx->ahead_procs);
	if (nx->ahead) {
		free(((struct scan *)nx->ahead)->ring);
		ga_strmap_free(&((struct scan *)nx->ahead)->smap);
	}
	free(nx->ahead);
	free(nx->mark_events);
	ga_xsort_free(&nx->gsw);
	ga_xsort_free(&nx->spilled);
	ga_xsort_free(&nx->marks_spilled);
	fold_free(nx->fstate);
	for (size_t i = 0; i < nx->capcpu; i++)
		ga_quant_free(&nx->cpu[i]);
	free(nx->cpu);
	ga_ranges_init(nx);
}

/*
 * The strtab id of the file's string id: GA_STR_NONE undefined; an op
 * name interned as its op's (ga_strmap group_ops, folded only), where
 * anything but a range's name reads it, gives the fold up (GA_STR_NOMEM).
 */
static uint32_t sstr(struct scan *s, uint32_t id)
{
	uint32_t g = id ? ga_strmap_get(&s->smap, id) : GA_STR_NONE;

	if (g == GA_STR_NOMEM)
		return GA_STR_NONE;
	if (g & GA_STR_GROUPED) {
		fold_give_up(s, "an op name of PyTorch's read as something other than a range's name");
		return GA_STR_NOMEM;
	}
	return g;
}

/*
 * sstr() of a range's name: an op name's op name id | GA_STR_GROUPED; one
 * a range took already gives the fold up (GA_STR_NOMEM).  peek: only
 * looked at (an announced range's, whose own record takes it).
 */
static uint32_t sstr_name(struct scan *s, uint32_t id, int peek)
{
	uint32_t g = !id ? GA_STR_NONE : peek ? ga_strmap_peek(&s->smap, id) :
						ga_strmap_take(&s->smap, id);

	if (g == GA_STR_NOMEM)
		return GA_STR_NONE;
	if (g == GA_STR_GROUPED) {
		fold_give_up(s, "an op name of PyTorch's that two ranges have");
		return GA_STR_NOMEM;
	}
	return g;
}

static int on_string(struct scan *s, const struct gp_rec_string *r)
{
	return ga_strmap_add(&s->smap, &s->m->strs, r->id, (const char *)(r + 1), r->len);
}

/* "name", or "domain:name" outside the default domain. */
static uint32_t label_of(struct ga_model *m, uint32_t domain, uint32_t name)
{
	struct ga_buf b = { 0 };
	uint32_t id;

	if (!domain)
		return name;
	if (ga_buf_printf(&b, "%s:%s", ga_model_str(m, domain), ga_model_str(m, name))) {
		ga_buf_free(&b);
		return GA_STR_NOMEM;
	}
	id = ga_strtab_intern(&m->strs, b.p, b.len);
	ga_buf_free(&b);
	return id;
}

/*
 * The name a range of recorded name raw (a string id) is counted under:
 * PyTorch's emit_nvtx() names without each op call's own parts
 * (ga_op_name_group()); any other as it is.  GA_STR_NOMEM out of memory.
 */
static uint32_t group_name(struct ga_model *m, uint32_t raw)
{
	const char *s = ga_model_str(m, raw);
	struct ga_buf b = { 0 };
	uint32_t id = raw;
	int g;

	/*
	 * PyTorch's are each a name of its own (each op call's), so none is
	 * looked up twice: no cache of them either.
	 */
	if (!s || !strstr(s, ", "))
		return raw;
	if ((g = ga_op_name_group(s, strlen(s), &b)) < 0)
		id = GA_STR_NOMEM;
	else if (g)
		id = ga_strtab_intern(&m->strs, b.p, b.len);
	ga_buf_free(&b);
	return id;
}

static uint32_t key_get(struct ga_ranges *nx, struct ga_model *m, uint32_t domain, uint32_t name)
{
	uint32_t *slot;
	int r = ga_map_insert(&nx->key_map, domain, name, &slot);

	if (r < 0)
		return GA_RANGES_NONE;
	if (r == 1) {
		struct ga_ranges_key *k;
		uint32_t label = label_of(m, domain, name);

		if (label == GA_STR_NOMEM ||
		    ga_util_grow(&nx->keys, &nx->capkeys, nx->nkeys + 1, sizeof(*nx->keys))) {
			*slot = GA_RANGES_NONE;
			return GA_RANGES_NONE;
		}
		k = &nx->keys[nx->nkeys];
		memset(k, 0, sizeof(*k));
		k->name = name;
		k->domain = domain;
		k->label = label;
		k->cpu_min = UINT64_MAX;
		*slot = (uint32_t)nx->nkeys++;
	}
	return *slot;
}

/*
 * The key of range record r's domain and name, the name taken (or, peek,
 * only looked at: an announcement's, whose range's record takes it);
 * *rawp the name as recorded, *namep as counted (PyTorch's op names
 * grouped).  GA_RANGES_NONE out of memory or the fold given up.
 */
static uint32_t range_key(struct scan *s, const struct gp_rec_nvtx *r, int peek, uint32_t *rawp,
			  uint32_t *namep)
{
	struct ga_ranges *nx = s->nx;
	uint32_t raw = sstr_name(s, r->name, peek);
	uint32_t op = raw & GA_STR_GROUPED, name, domain;

	if (raw == GA_STR_NOMEM)
		return GA_RANGES_NONE;
	/* An op name interned as its op's (ga_strmap group_ops) is that name already. */
	raw &= ~GA_STR_GROUPED;
	name = raw && !op ? group_name(s->m, raw) : raw;
	domain = sstr(s, r->domain);
	if (name == GA_STR_NOMEM || domain == GA_STR_NOMEM)
		return GA_RANGES_NONE;
	/*
	 * Launch sites read the seq of PyTorch's op ranges around a kernel of
	 * a process with Python frames (sites.c nvtx_seqs()): kept whole.
	 */
	if ((nx->fstate || nx->spill) && s->pystacks && raw &&
	    (op || strstr(ga_model_str(s->m, raw), ", seq = "))) {
		/* Spilled, no activity names its range either (sites.c reads none). */
		nx->spill_gave_up |= nx->spill;
		fold_give_up(s, "Python stacks with PyTorch's op ranges");
		return GA_RANGES_NONE;
	}
	*rawp = raw;
	*namep = name;
	return key_get(nx, s->m, domain, name);
}

/*
 * Range g of record r to the external sort (spill), raw its name as
 * recorded where that is not its key's.  0, or -1 (nx->err says why).
 */
static int spill_range(struct ga_ranges *nx, const struct ga_ranges_range *g,
		       const struct gp_rec_nvtx *r, uint32_t raw)
{
	struct ga_ranges_srec *x;

	if (!nx->spilled.rsize) {
		ga_xsort_init(&nx->spilled, sizeof(*x), GA_RANGES_SPILL_RUN);
		nx->spill_proc = g->proc;
		nx->spill_tid = g->tid;
	}
	nx->spill_threads |= g->proc != nx->spill_proc || g->tid != nx->spill_tid;
	if (!(x = ga_xsort_slot(&nx->spilled))) {
		snprintf(nx->err, sizeof(nx->err), "NVTX ranges cannot be sorted: %s",
			 nx->spilled.err);
		return -1;
	}
	memset(x, 0, sizeof(*x));
	x->key = g->start;
	x->r = *g;
	x->r.node = GA_RANGES_NONE;
	x->d.tid_end = r->tid_end;
	x->d.category = r->category;
	x->d.color = r->color;
	x->d.payload_kind = r->payload_kind;
	x->d.payload = r->payload;
	x->raw = raw;
	x->seq = nx->nspilled++;
	return 0;
}

static int on_range(struct scan *s, const struct gp_rec_nvtx *r)
{
	struct ga_ranges *nx = s->nx;
	struct ga_ranges_range *g, one;
	struct ga_ranges_key *k;
	uint32_t raw, key, name;
	uint64_t end = r->end >= r->start ? r->end : r->start, cpu = end - r->start;

	if ((key = range_key(s, r, 0, &raw, &name)) == GA_RANGES_NONE)
		return -1;
	g = &one;
	if (!nx->fstate && !nx->spill) {
		if (ga_util_grow(&nx->ranges, &nx->capranges, nx->nranges + 1,
				 sizeof(*nx->ranges)))
			return -1;
		/*
		 * The recorded names, from the first that differs from its key's
		 * (PyTorch's): 0 for the ranges before it and any like them.
		 */
		if (nx->raw || name != raw) {
			size_t old = nx->capraw;

			if (ga_util_grow(&nx->raw, &nx->capraw, nx->nranges + 1, sizeof(*nx->raw)))
				return -1;
			memset(nx->raw + old, 0, (nx->capraw - old) * sizeof(*nx->raw));
			nx->raw[nx->nranges] = name != raw ? raw : 0;
		}
		g = &nx->ranges[nx->nranges++];
	}
	memset(g, 0, sizeof(*g));
	g->start = r->start;
	g->end = end;
	g->id = r->id;
	g->proc = s->proc;
	g->tid = r->tid_start;
	g->key = key;
	g->parent = GA_RANGES_NONE;
	g->flags = (uint8_t)(r->h.aux & GP_NVTX_UNTERMINATED);
	g->pushpop = (r->h.aux & GP_NVTX_PUSHPOP) != 0;
	if (nx->fstate && fold_range(s, g))
		return -1;
	if (nx->fstate && s->gs_want) {
		struct ga_ranges_window *w;

		if (!nx->gsw.rsize)
			ga_xsort_init(&nx->gsw, sizeof(*w), GA_RANGES_GSW_RUN);
		if (!(w = ga_xsort_slot(&nx->gsw)))
			return fold_give_up(s, "GPU samples' windows of ranges cannot be sorted");
		*w = (struct ga_ranges_window){ g->start, g->end, g->id, g->proc, g->tid,
						nx->keys[key].label, 0 };
	}
	if (nx->spill && spill_range(nx, g, r, name != raw ? raw : 0))
		return -1;
	if (nx->keep_details && !nx->spill) {
		struct ga_ranges_detail *d;

		if (ga_util_grow(&nx->details, &nx->capdetails, nx->nranges, sizeof(*nx->details)))
			return -1;
		d = &nx->details[nx->nranges - 1];
		memset(d, 0, sizeof(*d));
		d->tid_end = r->tid_end;
		d->category = r->category;
		d->color = r->color;
		d->payload_kind = r->payload_kind;
		d->payload = r->payload;
	}
	if (nx->keep_cpu) {
		if (key >= nx->capcpu) {
			size_t old = nx->capcpu;

			if (ga_util_grow(&nx->cpu, &nx->capcpu, (size_t)key + 1, sizeof(*nx->cpu)))
				return -1;
			memset(nx->cpu + old, 0, (nx->capcpu - old) * sizeof(*nx->cpu));
			for (size_t i = old; i < nx->capcpu; i++)
				nx->cpu[i].limit = nx->cpu_limit;
		}
		if (ga_quant_add(&nx->cpu[key], cpu))
			return -1;
	}
	k = &nx->keys[key];
	k->count++;
	k->cpu_total += cpu;
	ga_welford_add(&k->cpu_var, k->count, cpu);
	if (cpu < k->cpu_min)
		k->cpu_min = cpu;
	if (cpu > k->cpu_max)
		k->cpu_max = cpu;
	if (g->flags) {
		k->unterminated++;
		nx->unterminated++;
	}
	nx->proc_ranges[s->proc - nx->proc_base] = 1;
	return 0;
}

/*
 * A range the recorder announced open (GP_REC_NVTX_OPEN), its name read as
 * its own record will read it, its key made (folded or not, keys come in
 * the same order): folded, what its thread has after its start nests in
 * it (fold_open()); else nothing more (its own record says it all; one
 * that never comes leaves a key of no range, which no view shows).
 */
static int on_open(struct scan *s, const struct gp_rec_nvtx *r)
{
	struct ga_ranges *nx = s->nx;
	struct ga_ranges_range g;
	uint32_t raw, key, name;

	if ((key = range_key(s, r, 1, &raw, &name)) == GA_RANGES_NONE)
		return -1;
	if (!nx->fstate)
		return 0;
	memset(&g, 0, sizeof(g));
	g.start = r->start;
	g.end = UINT64_MAX;
	g.id = r->id;
	g.proc = s->proc;
	g.tid = r->tid_start;
	g.key = key;
	g.parent = GA_RANGES_NONE;
	g.node = GA_RANGES_NONE;
	g.pushpop = (r->h.aux & GP_NVTX_PUSHPOP) != 0;
	return fold_open(s, &g);
}

static int on_mark(struct scan *s, const struct gp_rec_nvtx *r)
{
	struct ga_ranges *nx = s->nx;
	uint32_t domain = sstr(s, r->domain), name = sstr(s, r->name), *slot;
	int ins;

	if (domain == GA_STR_NOMEM || name == GA_STR_NOMEM)
		return -1;
	ins = ga_map_insert(&nx->mark_map, domain, name, &slot);
	if (ins < 0)
		return -1;
	if (ins == 1) {
		struct ga_ranges_mark *k;
		uint32_t label = label_of(s->m, domain, name);

		if (label == GA_STR_NOMEM ||
		    ga_util_grow(&nx->marks, &nx->capmarks, nx->nmarks + 1, sizeof(*nx->marks)))
			return -1;
		k = &nx->marks[nx->nmarks];
		k->name = name;
		k->domain = domain;
		k->label = label;
		k->count = 0;
		*slot = (uint32_t)nx->nmarks++;
	}
	nx->marks[*slot].count++;
	if (nx->keep_marks && nx->spill) {
		struct ga_ranges_mark_srec *x;

		if (!nx->marks_spilled.rsize)
			ga_xsort_init(&nx->marks_spilled, sizeof(*x), GA_RANGES_SPILL_RUN);
		if (!(x = ga_xsort_slot(&nx->marks_spilled))) {
			snprintf(nx->err, sizeof(nx->err), "NVTX marks cannot be kept: %s",
				 nx->marks_spilled.err);
			return -1;
		}
		memset(x, 0, sizeof(*x));
		x->key = nx->marks_spilled.total; /* the order read: one run after another */
		x->e.t = r->start;
		x->e.proc = s->proc;
		x->e.tid = r->tid_start;
		x->e.mark = *slot;
	} else if (nx->keep_marks) {
		struct ga_ranges_mark_event *e;

		if (ga_util_grow(&nx->mark_events, &nx->capmark_events, nx->nmark_events + 1,
				 sizeof(*nx->mark_events)))
			return -1;
		e = &nx->mark_events[nx->nmark_events++];
		e->t = r->start;
		e->proc = s->proc;
		e->tid = r->tid_start;
		e->mark = *slot;
		e->reserved = 0;
	}
	return 0;
}

const struct ga_ranges_mark_event *ga_ranges_next_mark(struct ga_ranges *nx, size_t *i)
{
	const struct ga_ranges_mark_srec *x;

	if (!nx->marks_spilled.rsize)
		return *i < nx->nmark_events ? &nx->mark_events[(*i)++] : NULL;
	if (!nx->marks_spilled.done && ga_xsort_done(&nx->marks_spilled))
		return NULL;
	if (!(x = ga_xsort_next(&nx->marks_spilled)))
		return NULL;
	(*i)++;
	return &x->e;
}

/*
 * An activity of a correlation kept in the hash (corr_map): its entry,
 * the launch a (the call in the ring, or NULL) where it has none yet.
 * 0, or -1 out of memory.
 */
static int corr_big_take(struct scan *s, uint32_t correlation, const struct api_seen *a)
{
	struct ga_ranges_corr *c = corr_big_slot(s->nx, s->proc, correlation);

	if (!c)
		return -1;
	if (!c->code) {
		c->code = CODE_UNATTR;
		c->t = a ? a->t : UINT64_MAX;
		c->tid = a ? a->tid : 0;
	}
	return 0;
}

/* Launches asked of every process, not only of those with ranges (launches_ranged). */
static inline int launches_all(const struct ga_ranges *nx)
{
	return nx->want_launches && !nx->launches_ranged;
}

/*
 * Whether an activity's id c goes to d by id (else to the hash, corr_map):
 * below CORR_DENSE and near the ids d holds (base/util.h
 * ga_util_id_near()).
 */
static inline int dense_takes(const struct ga_ranges_dense *d, uint32_t c)
{
	return c < d->n || (c < CORR_DENSE && ga_util_id_near(c, d->nact));
}

/*
 * An activity whose launch may need attributing: remember its correlation,
 * unless its process traced no API calls (every activity there is
 * unattributed, with or without an entry).
 */
static int on_corr(struct scan *s, uint32_t correlation)
{
	struct ga_ranges *nx = s->nx;
	const struct api_seen *a = NULL;
	struct ga_ranges_dense *d;

	if (s->no_api || s->no_corr)
		return 0;
	if (s->ringcap) {
		a = &s->ring[correlation & (s->ringcap - 1)];
		if (a->corr != correlation || !correlation)
			a = NULL;
	}
	if (nx->fstate)
		return fold_corr(s, correlation, a);
	d = &nx->dense[s->proc - nx->proc_base];
	if (!dense_takes(d, correlation))
		return corr_big_take(s, correlation, a);
	if (dense_room(d, correlation))
		return -1;
	if (!d->x[correlation]) {
		uint32_t x = a ? scan_tid_x(s, a->tid) : 1;

		if (!x || (a && time_set(d, correlation, a->t)))
			return -1;
		d->x[correlation] = x;
		d->nact++;
	}
	return 0;
}

/* Room in the ring for correlation ids up to corr; 0, or -1 out of memory. */
static int ring_grow(struct scan *s, uint32_t corr)
{
	size_t cap = s->ringcap ? s->ringcap : 1024, i;
	struct api_seen *r;

	while (cap <= corr && cap < API_RING_MAX)
		cap *= 2;
	if (cap == s->ringcap)
		return 0;
	r = calloc(cap, sizeof(*r));
	if (!r)
		return -1;
	/* Re-placed by the new modulus: no entry collides that did not before. */
	for (i = 0; i < s->ringcap; i++)
		if (s->ring[i].corr)
			r[s->ring[i].corr & (cap - 1)] = s->ring[i];
	free(s->ring);
	s->ring = r;
	s->ringcap = cap;
	return 0;
}

/* The innermost range open at t on thread index ti, or GA_RANGES_NONE. */
static uint32_t innermost_in(const struct ga_ranges *nx, uint32_t ti, uint64_t t)
{
	uint32_t lo = nx->threads[ti].lo, hi = nx->threads[ti].hi, c;

	/* Last range starting at or before t. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (nx->ranges[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nx->threads[ti].lo)
		return GA_RANGES_NONE;
	for (c = lo - 1; c != GA_RANGES_NONE; c = nx->ranges[c].parent)
		if (nx->ranges[c].end > t)
			return c;
	return GA_RANGES_NONE;
}

static uint32_t innermost(const struct ga_ranges *nx, uint32_t proc, uint32_t tid, uint64_t t)
{
	const uint32_t *ti = ga_map_find(&nx->thread_map, proc, tid);

	return ti ? innermost_in(nx, *ti, t) : GA_RANGES_NONE;
}

/*
 * A call of a correlation the hash (corr_map) has: its launch, where it
 * started earlier.  1 where the hash has it, else 0.
 */
static int api_big(struct scan *s, const struct gp_rec_api *r)
{
	struct ga_ranges_corr *c = corr_big(s->nx, s->proc, r->correlation);

	if (!c)
		return 0;
	if (r->start < c->t) {
		c->t = r->start;
		c->tid = r->tid;
	}
	return 1;
}

/* A call waiting in the ring for its activity (see API_RING_MAX).  0, or -1 out of memory. */
static int api_ring(struct scan *s, const struct gp_rec_api *r)
{
	struct api_seen *a;

	if (r->correlation >= s->ringcap && s->ringcap < API_RING_MAX &&
	    ring_grow(s, r->correlation))
		return -1;
	a = &s->ring[r->correlation & (s->ringcap - 1)];
	if (a->corr != r->correlation) {
		a->corr = r->correlation;
		a->t = UINT64_MAX;
	}
	if (r->start < a->t) {
		a->t = r->start;
		a->tid = r->tid;
	}
	return 0;
}

/*
 * An API record, in the same pass as the activities and ranges: its time
 * and thread go to its correlation's entry, or to the ring until an
 * activity of that correlation comes.  The innermost range at that time is
 * looked up once the file's ranges are known (resolve_proc()).  0, or -1
 * out of memory.
 */
static int on_api(struct scan *s, const struct gp_rec_api *r)
{
	struct ga_ranges_dense *d = &s->nx->dense[s->proc - s->nx->proc_base];

	if (!r->correlation || s->no_corr)
		return 0;
	if (s->nx->fstate) {
		int fr = fold_api(s, r);

		if (fr)
			return fr < 0 ? -1 : 0;
		goto ring;
	}
	/* Runtime and driver calls share correlations: the outer one came first. */
	if (r->correlation >= CORR_DENSE || r->correlation >= d->n || !d->x[r->correlation]) {
		/* Large ids, and ids that went to the hash (dense_takes()). */
		if (s->nx->ncorrs && api_big(s, r))
			return 0;
	} else {
		uint32_t c = r->correlation;

		if (d->x[c] == 1 || r->start < ga_ranges_time_get(d, c)) {
			uint32_t x = scan_tid_x(s, r->tid);

			if (!x || time_set(d, c, r->start))
				return -1;
			d->x[c] = x;
		}
		return 0;
	}
ring:
	return api_ring(s, r);
}

static uint32_t code_of(uint32_t inner)
{
	return inner == GA_RANGES_NONE ? CODE_NONE : inner + CODE_RANGE;
}

/*
 * Process i's correlation ids, resolved: each id's code, in x alone (t
 * freed: 4 bytes an id, not 12) where ga_ranges_attribute() needs neither
 * the launching thread nor the time: no launches asked, the process's
 * ranges all on one thread (tid0; nthreads of them), every launch made on
 * that thread (so that other_threads() has nothing to count), and every
 * innermost range nested (ga_ranges_account() then sums it in self, and
 * the walk finds every range of its chain open; the range's start stands
 * for the time).  Else in code, beside t and x.  0, or -1 out of memory.
 */
static int resolve_proc(struct ga_ranges *nx, size_t i, size_t nthreads, uint32_t tid0)
{
	struct ga_ranges_dense *d = &nx->dense[i];
	uint32_t proc = nx->proc_base + (uint32_t)i, x0 = 0, code;
	const uint32_t *v;
	int compact = !nx->want_launches && nthreads == 1;
	size_t j, k;

	if (!d->x)
		return 0;
	if (compact && (v = ga_map_find(&nx->tid_map, proc, tid0)))
		x0 = *v + 2;
	for (j = 0; compact && j < d->n; j++) {
		uint32_t x = d->x[j];

		if (x < 2) {
			code = x; /* 0: no activity; 1: CODE_UNATTR */
		} else {
			code = code_of(innermost(nx, proc, nx->tids[x - 2], ga_ranges_time_get(d, j)));
			if (x != x0 || (code >= CODE_RANGE && !nx->nested[code - CODE_RANGE]))
				break;
		}
		d->x[j] = code;
	}
	if (j == d->n && compact) {
		free_times(d);
		return 0;
	}
	/* Not compact after all: the ids before j had the ranges' thread. */
	if (!(d->code = malloc((d->n ? d->n : 1) * sizeof(*d->code))))
		return -1;
	for (k = 0; k < j; k++) {
		d->code[k] = d->x[k];
		d->x[k] = d->x[k] >= CODE_NONE ? x0 : d->x[k];
	}
	for (; k < d->n; k++) {
		uint32_t x = d->x[k];

		d->code[k] = x < 2 ? x : code_of(innermost(nx, proc, nx->tids[x - 2], ga_ranges_time_get(d, k)));
	}
	return 0;
}

/* The innermost range of each large correlation id's launch, once every range is indexed. */
static void resolve_big(struct ga_ranges *nx)
{
	size_t i;

	for (i = 0; i < nx->corr_map.cap; i++) {
		const struct ga_map_ent *e = &nx->corr_map.e[i];
		struct ga_ranges_corr *c;

		if (!e->used || !e->val)
			continue;
		c = &nx->corrs[e->val - 1];
		if (c->code && c->t != UINT64_MAX)
			c->code = code_of(innermost(nx, (uint32_t)e->a, c->tid, c->t));
	}
}

static int activity(uint32_t type)
{
	return type == GP_REC_KERNEL || type == GP_REC_MEMCPY || type == GP_REC_MEMSET ||
	       type == GP_REC_GRAPH;
}

/* The earliest time of the traces, for views that write times relative to it. */
static void first_time(struct ga_ranges *nx, const struct gp_rec *rec)
{
	uint64_t t;

	switch (rec->type) {
	case GP_REC_KERNEL:
	case GP_REC_MEMCPY:
	case GP_REC_MEMSET:
	case GP_REC_GRAPH:
	case GP_REC_API:
	case GP_REC_NVTX_RANGE:
	case GP_REC_NVTX_MARK:
	case GP_REC_MEMORY:
		/* Each of these begins with its header, then a u64 start. */
		memcpy(&t, (const char *)rec + sizeof(struct gp_rec), sizeof(t));
		if (t && t < nx->first_ns)
			nx->first_ns = t;
		break;
	default:
		break;
	}
}

static int scan_rec(void *ctx, const struct gp_rec *rec)
{
	struct scan *s = ctx;
	uint32_t fi = s->proc - s->nx->proc_base;
	/* The model notes each record once, over scans again (ranges.h: fold). */
	int note, rc = 0;

	/* A fold given up between records (a paced scan's pace_ready()): nothing more to read. */
	if (s->fail)
		return 1;
	s->nrec++;
	note = fi > s->noted_files || (fi == s->noted_files && s->nrec > s->noted_recs);
	if (s->due && rec->type != GP_REC_NVTX_RANGE && rec->type != GP_REC_NVTX_MARK &&
	    rec->type != GP_REC_NVTX_OPEN && rec->type != GP_REC_STRING && fold_due(s)) {
		s->oom = !s->fail;
		return 1;
	}
	first_time(s->nx, rec);
	/* Copy functions' names and calls confirm staged peer copies (ga_model_note_api). */
	if (rec->type == GP_REC_API) {
		if ((note && ga_model_note_api(s->m, s->proc, (const void *)rec)) ||
		    ((!s->skip_nvtx || launches_all(s->nx)) && on_api(s, (const void *)rec)))
			rc = -1;
	} else if (rec->type == GP_REC_STRING && note &&
		   ga_model_note_string(s->m, s->proc, (const void *)rec)) {
		rc = -1;
	}
	if (rc || (s->skip_nvtx && !(launches_all(s->nx) && activity(rec->type)) &&
		   rec->type != GP_REC_MEMCPY)) {
		if (s->fail)
			return 1;
		s->oom |= rc != 0;
		return rc != 0;
	}
	switch (rec->type) {
	case GP_REC_STRING:
		rc = on_string(s, (const void *)rec);
		break;
	case GP_REC_CONFIG: {
		uint32_t trace = ((const struct gp_rec_config *)(const void *)rec)->trace;

		if (s->nx->fstate)
			fold_lag(s, ((const struct gp_rec_config *)(const void *)rec)->flush_ms);

		s->no_api = !(trace & GP_TRACE_API);
		s->pystacks = ((const struct gp_rec_config *)(const void *)rec)->backtrace >=
			      GP_BACKTRACE_PYTHON;
		s->gs_want = (trace & (GP_TRACE_GPU_METRICS | GP_TRACE_GPU_TELEMETRY)) != 0;

		/* A single trace's ranges: folded in the model's read of it, paced (ranges.h pace). */
		if (s->nx->pace && (trace & GP_TRACE_NVTX) && (trace & GP_TRACE_API) &&
		    s->nx->ahead_procs && !s->nx->ahead_procs[fi] && pace_clean(s)) {
			s->nx->ahead_procs[fi] = 2;
			s->nx->paced = 1;
			s->nx->paced_recs = s->nrec;
			s->skip = 1;
			return 1;
		}
		if (!(trace & GP_TRACE_NVTX) && !s->nx->proc_ranges[s->proc - s->nx->proc_base]) {
			/* Still read on for copies to pair, when copies were traced,
			 * and for the launches of activities when asked. */
			if (!(trace & GP_TRACE_MEMCPY) && !launches_all(s->nx)) {
				s->skip = 1;
				return 1;
			}
			/* The rest in the model's read of it: decoded once. */
			if (s->nx->one_pass && s->nx->ahead_procs) {
				s->nx->ahead_procs[s->proc - s->nx->proc_base] = 1;
				s->skip = 1;
				return 1;
			}
			s->skip_nvtx = 1;
		}
		break;
	}
	case GP_REC_NVTX_RANGE:
		rc = on_range(s, (const void *)rec);
		break;
	case GP_REC_NVTX_OPEN:
		rc = on_open(s, (const void *)rec);
		break;
	case GP_REC_NVTX_MARK:
		rc = on_mark(s, (const void *)rec);
		break;
	case GP_REC_KERNEL: {
		const struct gp_rec_kernel *k = (const void *)rec;

		rc = on_corr(s, k->correlation);
		if (!rc && k->graph_node && s->nx->fstate)
			rc = fold_gact(s, k->graph_node);
		break;
	}
	case GP_REC_MEMCPY: {
		const struct gp_rec_memcpy *c = (const void *)rec;

		if (note && ga_model_note_copy(s->m, s->proc, c)) {
			rc = -1;
			break;
		}
		if (!s->skip_nvtx || launches_all(s->nx))
			rc = on_corr(s, c->correlation);
		if (!rc && c->graph_node && s->nx->fstate)
			rc = fold_gact(s, c->graph_node);
		break;
	}
	case GP_REC_MEMSET: {
		const struct gp_rec_memset *c = (const void *)rec;

		rc = on_corr(s, c->correlation);
		if (!rc && c->graph_node && s->nx->fstate)
			rc = fold_gact(s, c->graph_node);
		break;
	}
	case GP_REC_GRAPH:
		rc = on_corr(s, ((const struct gp_rec_graph *)(const void *)rec)->correlation);
		break;
	case GP_REC_GPU_SERIES:
	case GP_REC_GPU_SAMPLE:
		/*
		 * Their averages over ranges read every range (gpusamples.c): a
		 * fold gives them the file's ranges as windows, from the first
		 * on where the CONFIG did not say samples would come.
		 */
		if (s->nx->fstate && !s->gs_want) {
			if (s->nx->proc_ranges[fi])
				rc = fold_give_up(s, "GPU samples after ranges of a trace "
						     "whose CONFIG did not ask for them");
			s->gs_want = 1;
		}
		break;
	case GP_REC_GRAPH_NODE: {
		const struct gp_rec_graph_node *g = (const void *)rec;
		struct gnode_raw *x;

		/* Placed by their range's id, where the process has ranges. */
		if (s->nx->fstate) {
			rc = fold_gnode(s, g);
			break;
		}
		if (ga_util_grow(s->gn, s->capgn, *s->ngn + 1, sizeof(**s->gn))) {
			rc = -1;
			break;
		}
		x = &(*s->gn)[(*s->ngn)++];
		x->node = g->node;
		x->nvtx = g->nvtx;
		x->proc = s->proc;
		break;
	}
	default:
		break;
	}
	if (rc) {
		s->oom = !s->fail;
		return 1;
	}
	return 0;
}

/*
 * A file's scan from its start, nothing of the last one's left: its
 * correlation ids and string ids are its own.
 */
static void scan_begin(struct scan *s, int skip_nvtx)
{
	s->skip = 0;
	s->skip_nvtx = skip_nvtx;
	s->no_api = 0;
	s->pystacks = 0;
	s->gs_want = 0;
	s->oom = 0;
	s->fail = NULL;
	s->due = 0;
	s->nrec = 0;
	s->chunk = 0;
	free(s->ring);
	s->ring = NULL;
	s->ringcap = 0;
	ga_strmap_reset(&s->smap);
	s->smap.group_ops = s->nx->fold && s->nx->group_ops ? GA_STRMAP_TAKE : 0;
}

static int read_src(struct scan *s, const struct ga_ranges_src *src)
{
	struct ga_read_info info;
	struct ga_align_reader *ar = NULL;
	ga_reader_fn fn = scan_rec;
	void *ctx = s;
	char err[256];

	scan_begin(s, 0);
	/* Unreadable files are the model's to report; damage reads what precedes. */
	if (src->shift) {
		ar = malloc(sizeof(*ar));
		if (!ar)
			return -1;
		ar->fn = scan_rec;
		ar->ctx = s;
		ar->shift = src->shift;
		fn = ga_align_reader_fn;
		ctx = ar;
	}
	/*
	 * Most traces say in their first records (CONFIG) that the rest is the
	 * model's read's (one_pass, pace): the head read decodes no more of
	 * the first chunk than that.
	 */
	ga_reader_read_head(src->path, src->buf, src->len, fn, ctx, &info, err, sizeof(err));
	free(ar);
	return s->oom ? -1 : 0;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct ga_ranges_range *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* Of two ranges opened together, the longer encloses the other. */
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_range_at(const void *pa, const void *pb, void *ctx)
{
	const struct ga_ranges_range *r = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = cmp_range(&r[a], &r[b]);

	if (c)
		return c;
	return a < b ? -1 : a > b;
}

/*
 * Sort the ranges, and their details and recorded names with them: the
 * order sorted (4 bytes a range, where qsort() of the ranges took a copy of
 * them), then each cycle of it moved in place.  0, or -1 out of memory.
 */
static int sort_ranges(struct ga_ranges *nx, size_t lo)
{
	struct ga_ranges_range *r;
	struct ga_ranges_detail *d;
	size_t n = nx->nranges > lo ? nx->nranges - lo : 0, i;
	uint32_t *ord, *w;

	/* None: nothing to sort, and ranges may be NULL (no offset from it). */
	if (!n)
		return 0;
	r = nx->ranges + lo;
	d = nx->details ? nx->details + lo : NULL;
	w = nx->raw ? nx->raw + lo : NULL;
	ord = malloc(n * sizeof(*ord));
	if (!ord)
		return -1;
	for (i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, n, sizeof(*ord), cmp_range_at, r);
	/* Position j takes the range at ord[j]; ord[j] = j marks it placed. */
	for (i = 0; i < n; i++) {
		struct ga_ranges_range tr;
		struct ga_ranges_detail td = { 0 };
		uint32_t j = (uint32_t)i, tw = 0;

		if (ord[i] == i)
			continue;
		tr = r[i];
		if (d)
			td = d[i];
		if (w)
			tw = w[i];
		while (ord[j] != i) {
			uint32_t k = ord[j];

			r[j] = r[k];
			if (d)
				d[j] = d[k];
			if (w)
				w[j] = w[k];
			ord[j] = j;
			j = k;
		}
		r[j] = tr;
		if (d)
			d[j] = td;
		if (w)
			w[j] = tw;
		ord[j] = j;
	}
	free(ord);
	return 0;
}

static __attribute__((noinline)) uint32_t node_add(struct ga_ranges *nx, struct ga_ranges_nref *c,
						   uint32_t parent, uint32_t kind, uint32_t id)
{
	uint64_t ka = (uint64_t)parent + 1, kb = (uint64_t)kind << 32 | id;
	uint32_t *slot;
	int r = ga_map_insert(&nx->node_map, ka, kb, &slot);

	if (r < 0)
		return GA_RANGES_NONE;
	if (r == 1) {
		struct ga_ranges_node *n;

		if (ga_util_grow(&nx->nodes, &nx->capnodes, nx->nnodes + 1, sizeof(*nx->nodes))) {
			*slot = GA_RANGES_NONE;
			return GA_RANGES_NONE;
		}
		n = &nx->nodes[nx->nnodes];
		memset(n, 0, sizeof(*n));
		n->parent = parent;
		n->kind = kind;
		n->id = id;
		n->child = n->next = GA_RANGES_NONE;
		*slot = (uint32_t)nx->nnodes++;
	}
	if (*slot != GA_RANGES_NONE) {
		/* Nodes are never removed: an answer stays right. */
		c->a = ka;
		c->b = kb;
		c->node = *slot;
	}
	return *slot;
}

/* The node (parent, kind, id), made on first use; GA_RANGES_NONE out of memory. */
static inline uint32_t node_get(struct ga_ranges *nx, uint32_t parent, uint32_t kind,
				uint32_t id)
{
	struct ga_ranges_nref *c = &nx->nref[((id + parent * 31u + kind * 7u) * 0x9e3779b1u) >>
					   (32 - 8)];

	_Static_assert(GA_RANGES_NREF_CACHE == 1u << 8, "nref index width");
	if (c->a == (uint64_t)parent + 1 && c->b == ((uint64_t)kind << 32 | id))
		return c->node;
	return node_add(nx, c, parent, kind, id);
}

/* ---- folding (ranges.h: fold) ---- */

/*
 * Bounds of a fold.  A thread's outermost ranges stay open to the ranges
 * and launches of the trace FOLD_ROOTS of them long (what the recorder
 * writes late: a range closes after what it encloses, an activity's record
 * comes a few buffers after its call); the rest fold in batches.  A window
 * of more than FOLD_WINDOW ranges folds down to its last outermost range;
 * one range holding more than that, more than FOLD_PENDING launches
 * waiting for their ranges, or ranges on more than FOLD_THREADS threads of
 * a process give the fold up.
 *
 * Threads: a launch is placed in its own thread's ranges and, apart,
 * counted into those open then on another (ranges.h, Other threads); a
 * thread's outermost ranges are its groups of ranges that overlap (one
 * range each where they nest: fold_range()).  So launches are coded, and ranges folded, up to a time
 * by which every thread's ranges are taken to be known (fold_advance()):
 * a thread's FOLD_ROOTS newest outermost ranges are not, unless a newer
 * one came FOLD_QUIET records ago, and a thread whose last range came
 * FOLD_QUIET records ago is taken to hold none open.  A range that comes
 * starting before that time gives the fold up, as one around ranges
 * folded on a single thread does: never a different result.
 */
#define FOLD_ROOTS 64
#define FOLD_QUIET (1u << 18)
#define FOLD_THREADS 1024
#define FOLD_OPEN_MAX 256 /* ranges announced open at once on a thread (NVTX's depth) */
/*
 * Paced, the model waits for the launches of an outermost range until it
 * folds: one of long ranges folds once FOLD_PACE_RECS records came after
 * it and two newer ones did (the fold's slack, counted in records).
 */
#define FOLD_PACE_RECS (1u << 18)
#define FOLD_WINDOW (1u << 18)
#define FOLD_PENDING (1u << 20)
#define FOLD_BLOCK 4096            /* codes of a block, 16 KiB */
#define FOLD_CACHE 64              /* blocks in memory */

struct fblock {
	uint64_t blk;
	int used, dirty;
	uint32_t v[FOLD_BLOCK];
};

struct froot {
	uint64_t start, end;
	size_t lo;                 /* its ranges: win[lo..) up to the next root's */
	size_t self;               /* itself: win[self] */
	uint64_t rec;              /* the file's records scanned when it came */
	int placed;                /* its ranges are in the tree, it is not folded yet */
};

/*
 * A range the recorder announced open (GP_REC_NVTX_OPEN): what its thread's
 * ranges and launches after its start are in, until its own record says
 * where it ends.  Its tree node is made once something in it needs it, or
 * the fold passes its start.
 */
struct fopen {
	struct ga_ranges_range g; /* g.end UINT64_MAX while open; g.node once made */
	int made;                 /* g.node is its tree node */
	int closed;               /* its own record came: g.end is its end */
	int stepped;              /* kept as a step where it is one (open_steps()) */
	size_t kept;              /* its index in ranges + 1 where it is the file's first kept */
};

/* A thread's ranges not folded yet (struct fold). */
struct fthr {
	uint32_t tid;
	struct ga_ranges_range *win; /* as they came; win[0..nlook) sorted (fold_look()) */
	size_t nwin, capwin;
	struct froot *roots; /* outermost ranges so far, in order */
	size_t nroots, caproots;
	uint32_t *par; /* parents of win[0..nlook) */
	size_t cappar;
	uint32_t nlook;
	uint32_t at;       /* where the last look-up ended (fold_innermost()) */
	uint64_t last_rec; /* the file's records scanned when its last range came */
	/* Announced ranges by start (nesting, or t->nonnest). */
	struct fopen *open;
	size_t nopen, capopen;
	/*
	 * Of them, those closed not kept as steps yet (open_steps()), and the
	 * latest end of the closed ones (open_across()); both made again as
	 * the fold drops closed ones (fold_to()).
	 */
	size_t nunstepped;
	uint64_t closed_end;
	/*
	 * open_steps() looked at open[0..step_at) in this fold_to(): each
	 * kept, open still, or ending after its cut (nothing closes in one).
	 */
	size_t step_at;
	/*
	 * Its ranges may not nest (ranges of two domains, start/end ranges):
	 * each launch's code then says the ranges open at it where they are
	 * not its innermost range's name path (fold_own()).
	 */
	int nonnest;
	/*
	 * fold_own()'s last answer (own thread's launches, other threads'):
	 * launches at t0..t1 with lo of the window's ranges started by then
	 * have its ranges open; code: the walk's, 0 none.  memo[2],
	 * fold_inner()'s: at t0..t1 the innermost announced range open is
	 * open[code - 1], none where code is 0; lo: one of them starts at t0
	 * (a range starting then asks cmp_range() of those).
	 */
	struct fmemo {
		uint64_t t0, t1;
		uint32_t lo, code;
		int valid;
	} memo[3];
};

/*
 * Other threads' kernels counted into a key or tree node (what: its index,
 * FOTHER_NODE for a node's) while the process's fold goes on: taken back
 * should its ranges come on more than GA_RANGES_OTHER_THREADS threads
 * (other_fold()).
 */
struct fother {
	uint32_t pi, what;
	uint64_t ns, kernels;
};

#define FOTHER_NODE (1u << 31)

/* struct fold decided: a process's fold going on, ended, or its ranges on too many threads. */
enum { FP_OPEN,
       FP_FEW,
       FP_MANY };

/* A launch's code and, on another thread, the tree node of the range open then. */
struct fpair {
	uint32_t own, onode;
};

/* CODE_WALK's: a launch's innermost range's tree node, the keys open then (fold keys[k0..k0+nk)). */
struct fwalk {
	uint32_t node, k0, nk;
};

/*
 * A range graph nodes were captured or added in (GP_REC_GRAPH_NODE): their
 * kernels are counted in it, wherever the graph was launched.
 */
struct fgw {
	uint64_t id;   /* the range's id in its file */
	uint32_t code; /* its tree node + CODE_RANGE once placed, 0 until then */
};

struct fpend {
	uint64_t t;                /* UINT64_MAX: no API record yet */
	uint32_t corr, tid;
	uint32_t chunk; /* the chunk its activity came in (paced: pace_ready()) */
	uint32_t serial; /* its mark (CODE_PEND): the waiting ones' rise */
};

struct fold {
	/* The codes (CODE_*, a range's tree node + CODE_RANGE) by process and id. */
	struct fblock *cache;      /* FOLD_CACHE, made at the first code (fold_block_slow()) */
	int fd;                    /* the temporary file, -1 none yet */
	uint64_t filled;           /* blocks of the file written */
	uint64_t *base;            /* per process: its first block */
	uint32_t *top;             /* per process: highest id coded + 1 */
	uint64_t next;             /* the next process's first block */
	int io_err;
	/* CODE_PAIR's pairs, by index; pair_map: (own, onode) -> index + 1. */
	struct fpair *pairs;
	size_t npairs, cappairs;
	struct ga_map pair_map;
	/* CODE_WALK's walks, by index, their keys in wkeys; walk_map: (node, hash) -> index + 1. */
	struct fwalk *walks;
	size_t nwalks, capwalks;
	uint32_t *wkeys;
	size_t nwkeys, capwkeys;
	struct ga_map walk_map;
	uint32_t *scratch; /* the keys open at a launch (fold_own()) */
	size_t capscratch;
	/* The file being scanned. */
	uint32_t pi;
	int has_tid;     /* a range came */
	struct fthr *th; /* its threads of ranges, nth of them (capth made) */
	size_t nth, capth;
	struct ga_map th_map; /* tid -> th index + 1 */
	/*
	 * Per process (ranges.h, Other threads): whether its ranges are on
	 * more than GA_RANGES_OTHER_THREADS threads (FP_MANY) is known once
	 * they are, or its fold ended (FP_FEW); until then the other threads'
	 * kernels counted (its fold paced, ahead of the model) are in others.
	 */
	uint8_t *decided;
	uint64_t *counted; /* per process, FP_OPEN: its kernels into others, with a launch */
	size_t nprocs;
	struct fother *others;
	size_t nothers, capothers;
	struct ga_map other_map;   /* (pi, what) -> others index + 1 */
	struct fpend *pend;        /* launches waiting for their ranges */
	size_t npend, cappend;     /* each waiting one's code: CODE_PEND | its serial */
	size_t pend_hint;          /* where the next call's launch likely waits (fold_pend()) */
	uint32_t serial;           /* the next waiting launch's */
	uint32_t seen;             /* highest correlation id of an activity + 1 */
	uint64_t horizon;          /* the end of the ranges folded */
	uint64_t fold_rec;         /* the file's records scanned at the last fold (fold_advance()) */
	/*
	 * fold_advance()'s threads' fold_ready() at ready_rec records scanned
	 * and ready_gen folds (gen: fold_to()'s, a new file's): the earliest,
	 * ready1, of thread ready_th, and the earliest of the others, ready2.
	 * Every thread asks at the end of a run (fold_due()), with nothing
	 * read or folded in between, mostly: each thread's ask then reads
	 * them rather than every other thread's ranges again.
	 */
	uint64_t gen, ready_rec, ready_gen, ready1, ready2;
	size_t ready_th;
	/*
	 * The same for the outermost ranges ending by a cut (up to 2 *
	 * FOLD_ROOTS): ends_n[k] by ends_cut[k], the last cuts asked (the
	 * earliest of the others' differs for one thread, the newest less
	 * the lag for none).
	 */
	uint64_t ends_rec, ends_gen, ends_cut[4];
	size_t ends_n[4], ends_k;
	uint64_t tlast;            /* the newest range end or call start so far */
	uint64_t lag;              /* how late a record may come, ns (fold_lag()), 0 unknown */
	int kept;                  /* a range of the file is kept in ranges */
	int gnodes;                /* graph nodes came: placed by their range's id */
	/*
	 * The ranges graph nodes name (gw, every file's: nx->gnode_map holds
	 * a node's index there, UINT32_MAX in none); gw_map: (file, range id)
	 * -> index + 1; gw_pend of them not placed yet.  A node's kernels are
	 * read once their graph launch is coded: the fold placed its range by
	 * then, which started before the launch (fold_to()).  gseen: the graph
	 * nodes of the file whose activities came before any record of the
	 * node (paced: read as launched, so a record of one then gives the
	 * fold up).
	 */
	struct fgw *gw;
	size_t ngw, capgw, gw_pend;
	struct ga_map gw_map, gseen;
	/*
	 * Paced (ranges.h pace), before the file's first range: the model
	 * reads launches still waiting as outside any range, which they are
	 * unless a range around them comes (pace_ready()): those launched
	 * from spec_tmin to spec_tmax (UINT64_MAX: one without its call,
	 * unattributed where the file has ranges).
	 */
	int spec;
	uint64_t spec_tmin, spec_tmax;
	/* Paced: a range folded by FOLD_PACE_RECS, which a scan before the model would not. */
	int paced_only;
};

/* What only the scan reads of a fold, once it is over: the codes stay. */
static void fold_scratch_free(struct fold *f)
{
	for (size_t i = 0; i < f->capth; i++) {
		free(f->th[i].win);
		free(f->th[i].roots);
		free(f->th[i].par);
		free(f->th[i].open);
	}
	free(f->th);
	ga_map_free(&f->th_map);
	free(f->pend);
	ga_map_free(&f->gw_map);
	ga_map_free(&f->gseen);
	free(f->scratch);
	f->scratch = NULL;
	f->capscratch = 0;
	f->th = NULL;
	f->pend = NULL;
	f->nth = f->capth = f->npend = f->cappend = 0;
}

static void fold_free(struct fold *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f->cache);
	free(f->base);
	free(f->top);
	free(f->decided);
	free(f->counted);
	free(f->others);
	ga_map_free(&f->other_map);
	free(f->pairs);
	ga_map_free(&f->pair_map);
	free(f->walks);
	free(f->wkeys);
	ga_map_free(&f->walk_map);
	free(f->gw);
	fold_scratch_free(f);
	free(f);
}

static struct fold *fold_new(size_t nprocs)
{
	struct fold *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = -1;
	/* The cache of codes (1 MiB) is made at the first code: most traces of a job have none. */
	f->base = calloc(nprocs ? nprocs : 1, sizeof(*f->base));
	f->top = calloc(nprocs ? nprocs : 1, sizeof(*f->top));
	f->decided = calloc(nprocs ? nprocs : 1, sizeof(*f->decided));
	f->counted = calloc(2 * (nprocs ? nprocs : 1), sizeof(*f->counted));
	f->nprocs = nprocs;
	if (!f->base || !f->top || !f->decided || !f->counted) {
		fold_free(f);
		return NULL;
	}
	return f;
}

/* Thread tid's ranges, NULL where none came. */
static inline __attribute__((always_inline)) struct fthr *
fold_find(struct fold *f, uint32_t tid)
{
	const uint32_t *v;

	if (f->nth <= 8) {
		for (size_t i = 0; i < f->nth; i++)
			if (f->th[i].tid == tid)
				return &f->th[i];
		return NULL;
	}
	v = ga_map_find(&f->th_map, 0, tid);
	return v ? &f->th[*v - 1] : NULL;
}

/* Write block b to the temporary file, made on first use; 0, or -1. */
static int fold_write(struct fold *f, struct fblock *b)
{
	size_t done = 0;

	if (f->fd < 0 && (f->fd = ga_util_tmpfd("nvtx", NULL)) < 0)
		return -1;
	while (done < sizeof(b->v)) {
		ssize_t w = pwrite(f->fd, (const char *)b->v + done, sizeof(b->v) - done,
				   (off_t)(b->blk * sizeof(b->v) + done));

		if (w <= 0)
			return -1;
		done += (size_t)w;
	}
	b->dirty = 0;
	if (b->blk + 1 > f->filled)
		f->filled = b->blk + 1;
	return 0;
}

/* Block blk in memory (from the file where it was written); NULL on an I/O error. */
static __attribute__((noinline)) struct fblock *fold_block_slow(struct fold *f, uint64_t blk)
{
	struct fblock *b;
	size_t done = 0;

	if (!f->cache && !(f->cache = calloc(FOLD_CACHE, sizeof(*f->cache))))
		return NULL;
	b = &f->cache[blk % FOLD_CACHE];

	if (b->used && b->dirty && fold_write(f, b)) {
		f->io_err = 1;
		return NULL;
	}
	b->used = 1;
	b->dirty = 0;
	b->blk = blk;
	memset(b->v, 0, sizeof(b->v));
	while (f->fd >= 0 && blk < f->filled && done < sizeof(b->v)) {
		ssize_t r = pread(f->fd, (char *)b->v + done, sizeof(b->v) - done,
				  (off_t)(blk * sizeof(b->v) + done));

		if (r < 0) {
			b->used = 0;
			f->io_err = 1;
			return NULL;
		}
		if (!r)
			break;
		done += (size_t)r;
	}
	return b;
}

static inline struct fblock *fold_block(struct fold *f, uint64_t blk)
{
	struct fblock *b = f->cache ? &f->cache[blk % FOLD_CACHE] : NULL;

	return b && b->used && b->blk == blk ? b : fold_block_slow(f, blk);
}

/* The code of id corr of process pi, 0 none (or an I/O error: io_err). */
static uint32_t fold_code(struct fold *f, uint32_t pi, uint32_t corr)
{
	const struct fblock *b;

	if (corr >= f->top[pi])
		return 0;
	b = fold_block(f, f->base[pi] + corr / FOLD_BLOCK);
	return b ? b->v[corr % FOLD_BLOCK] : 0;
}

static int fold_set(struct fold *f, uint32_t corr, uint32_t code)
{
	struct fblock *b = fold_block(f, f->base[f->pi] + corr / FOLD_BLOCK);

	if (!b)
		return -1;
	b->v[corr % FOLD_BLOCK] = code;
	b->dirty = 1;
	if (corr + 1 > f->top[f->pi])
		f->top[f->pi] = corr + 1;
	return 0;
}

static const char why_spec[] = "a range around launches read as outside any";
/* Paced only: the model read a graph node's kernels as launched (fold_gnode()). */
static const char why_gnode_late[] = "a graph node's record after its kernels";
static const char why_gnode_twice[] = "a graph node recorded twice";

static int fold_give_up(struct scan *s, const char *why)
{
	const struct fold *f = s->nx->fstate;

	/*
	 * A paced scan's, for whoever builds again (ranges.h pace): where it
	 * folded as a scan before the model does, that scan would give up too.
	 */
	if (!s->fail && s == s->nx->ahead && s->nx->paced && f && !f->paced_only &&
	    why != why_spec && why != why_gnode_late && why != why_gnode_twice)
		s->nx->fold_lasting = 1;
	if (!s->fail)
		s->fail = why;
	if (!s->nx->fold_why)
		s->nx->fold_why = why;
	return -1;
}

/* The window or the announced ranges of thread u changed: fold_own() looks again. */
static void memo_reset(struct fthr *u)
{
	u->memo[0].valid = u->memo[1].valid = u->memo[2].valid = 0;
}

/*
 * The innermost of thread u's win[0..nlook) (sorted, parents in par) open
 * at t, or GA_RANGES_NONE.  u->at: where the last search ended (the ranges
 * that start by then), the place to look first: launches come nearly in
 * time order.
 */
static uint32_t fold_innermost(struct fthr *u, uint64_t t)
{
	uint32_t n = u->nlook, lo = 0, hi = n, c, k;

	if (u->at <= n && (!u->at || u->win[u->at - 1].start <= t)) {
		/* A few steps on from the last place, else search what follows. */
		for (lo = u->at, k = 0; k < 4 && lo < n && u->win[lo].start <= t; k++)
			lo++;
		if (k < 4 || lo == n)
			hi = lo;
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (u->win[mid].start <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	u->at = lo;
	for (c = lo ? lo - 1 : GA_RANGES_NONE; c != GA_RANGES_NONE; c = u->par[c])
		if (u->win[c].end > t)
			return c;
	return GA_RANGES_NONE;
}

/*
 * Sorts a fold's window by cmp_range().  Ranges come as they close: a
 * range after those it encloses, each a few places from its own, which
 * insertion moves; a window far from order goes to qsort().
 */
static void sort_window(struct ga_ranges_range *w, size_t n)
{
	size_t i, j, moves = 0, budget = 8 * n;

	for (i = 1; i < n; i++) {
		struct ga_ranges_range v = w[i];

		for (j = i; j > 0 && cmp_range(&w[j - 1], &v) > 0; j--) {
			w[j] = w[j - 1];
			if (++moves > budget) {
				w[j - 1] = v;
				qsort(w, n, sizeof(*w), cmp_range);
				return;
			}
		}
		w[j] = v;
	}
}

/*
 * The tree node of thread u's announced range i, made: under the announced
 * range it nests in (made first), else at the root, as index_ranges()
 * places it; the file's first range kept where none is.  0, or -1 (s->fail
 * set where the fold cannot go on, else out of memory).
 */
static int fold_open_node(struct scan *s, struct fthr *u, size_t i)
{
	struct ga_ranges *nx = s->nx;
	struct fold *f = nx->fstate;
	uint32_t parent = GA_RANGES_NONE, node;
	struct fopen *o;
	size_t j = i;

	const struct ga_ranges_range *pg = NULL;
	uint32_t c = GA_RANGES_NONE;

	while (j--)
		if (u->open[j].g.start <= u->open[i].g.start &&
		    u->open[i].g.start < u->open[j].g.end) {
			if (!u->open[j].made && fold_open_node(s, u, j))
				return -1;
			parent = u->open[j].g.node;
			pg = &u->open[j].g;
			break;
		}
	/*
	 * Opened inside a range of the window that comes after that one (they
	 * do not nest): in it, placed by now (fold_open_node()'s callers come
	 * after the window's ranges that start before it are placed); of those
	 * open at its start, the innermost before it in cmp_range() order.
	 */
	if (u->nonnest && u->nlook)
		for (c = fold_innermost(u, u->open[i].g.start); c != GA_RANGES_NONE; c = u->par[c])
			if (u->win[c].end > u->open[i].g.start &&
			    cmp_range(&u->win[c], &u->open[i].g) < 0)
				break;
	if (c != GA_RANGES_NONE && (!pg || cmp_range(&u->win[c], pg) > 0))
		parent = u->win[c].node;
	o = &u->open[i];
	node = node_get(nx, parent, GA_RANGES_N_RANGE, o->g.key);
	if (node == GA_RANGES_NONE)
		return -1;
	if (node >= CODE_NODES)
		return fold_give_up(s, "more name paths than a fold codes");
	o->g.node = node;
	o->made = 1;
	nx->nodes[node].instances++;
	if (f->gw_pend && fold_gw_place(s, u, &o->g))
		return -1;
	if (!f->kept) {
		if (nx->nranges >= GA_RANGES_FOLDED ||
		    ga_util_grow(&nx->ranges, &nx->capranges, nx->nranges + 1, sizeof(*nx->ranges)))
			return -1;
		nx->ranges[nx->nranges] = o->g;
		nx->ranges[nx->nranges++].parent = GA_RANGES_NONE;
		o->kept = nx->nranges;
		f->kept = 1;
	}
	return 0;
}

/*
 * The tree node of thread u's innermost range open at t in *node,
 * GA_RANGES_NONE where none is: the window's c (fold_innermost(),
 * GA_RANGES_NONE none), or an announced range open then that started
 * after it (made where not yet); g: where t is range g's start, only
 * those before g (cmp_range()).  0, or -1 (fold_open_node()).
 */
static int fold_inner(struct scan *s, struct fthr *u, uint32_t c, uint64_t t,
		      const struct ga_ranges_range *g, uint32_t *node)
{
	struct fmemo *mm = &u->memo[2];
	size_t i = u->nopen;

	*node = c != GA_RANGES_NONE ? u->win[c].node : GA_RANGES_NONE;
	if (!i)
		return 0;
	/* The last one found stands until one of them starts or ends. */
	if (!mm->valid || t < mm->t0 || t >= mm->t1) {
		uint64_t t1 = UINT64_MAX;
		uint32_t tie = 0;
		size_t k = i;

		i = SIZE_MAX;
		while (k--) {
			const struct ga_ranges_range *o = &u->open[k].g;

			if (o->start > t) {
				if (o->start < t1)
					t1 = o->start;
			} else if (t < o->end) {
				if (o->end < t1)
					t1 = o->end;
				if (i == SIZE_MAX)
					i = k;
				tie |= o->start == t;
			}
		}
		*mm = (struct fmemo){ t, t1, tie, i == SIZE_MAX ? 0 : (uint32_t)i + 1, 1 };
	}
	/*
	 * Range g starting at t: those open then that started before it, all
	 * of them but where one starts at t too (then cmp_range() says).
	 */
	if (g && t == mm->t0 && mm->lo) {
		i = u->nopen;
		while (i-- && !(u->open[i].g.start <= t && t < u->open[i].g.end &&
				cmp_range(&u->open[i].g, g) < 0))
			;
	} else {
		i = mm->code ? mm->code - 1 : SIZE_MAX;
	}
	if (i == SIZE_MAX)
		return 0;
	/* The later of the two in cmp_range() order (open, one is the longer). */
	if (c != GA_RANGES_NONE && cmp_range(&u->open[i].g, &u->win[c]) < 0)
		return 0;
	if (!u->open[i].made && fold_open_node(s, u, i))
		return -1;
	*node = u->open[i].g.node;
	return 0;
}

/*
 * The steps (nx->fold_keep) among thread u's closed announced ranges that
 * start before before and end by cut (every closed one, last): kept, each
 * once, so that with the window's outermost ranges placed in start order
 * (fold_look()) the steps are kept in the order they started.  0, or -1.
 */
static int open_steps(struct scan *s, struct fthr *u, uint64_t before, uint64_t cut, int last)
{
	struct ga_ranges *nx = s->nx;
	size_t i = u->step_at;

	for (; nx->fold_keep && u->nunstepped && i < u->nopen; i++) {
		struct fopen *o = &u->open[i];
		struct ga_ranges_key *k = &nx->keys[o->g.key];

		/* In start order: none after starts before before. */
		if (o->g.start >= before)
			break;
		if (!o->closed || o->stepped || (!last && o->g.end > cut))
			continue;
		o->stepped = 1;
		u->nunstepped--;
		if (!k->fold_kept)
			k->fold_kept = nx->fold_keep(ga_model_str(s->m, k->name)) ? 1 : 2;
		if (k->fold_kept == 1) {
			struct ga_ranges_step st = { o->g.start, o->g.end, o->g.proc, o->g.key };
			int kr = step_keep(nx, &st);

			if (kr)
				return kr < 0 ? -1 : fold_give_up(s, "the temporary file of the steps "
								     "cannot be written");
		}
	}
	u->step_at = i;
	return 0;
}

/*
 * Thread u's ranges of its outermost ranges that start before cut (all of
 * them, last): sorted, their parents linked, those not yet in the tree
 * placed there as index_ranges() places them (an outermost range and its
 * ranges at once).  0, or -1 (s->fail set where the fold cannot go on,
 * else out of memory).
 */
static int fold_look(struct scan *s, struct fthr *u, uint64_t cut, int last)
{
	struct ga_ranges *nx = s->nx;
	struct fold *f = nx->fstate;
	size_t k = 0, n, i, r;

	while (k < u->nroots && (last || u->roots[k].start < cut))
		k++;
	n = k < u->nroots ? u->roots[k].lo : u->nwin;
	if (n > UINT32_MAX - 1 || ga_util_grow(&u->par, &u->cappar, n ? n : 1, sizeof(*u->par)))
		return -1;
	/* One thread's ranges: cmp_range() orders them as index_ranges() does. */
	sort_window(u->win, n);
	for (i = 0; i < n; i++) {
		const struct ga_ranges_range *g = &u->win[i];
		uint32_t c = GA_RANGES_NONE;

		if (i)
			for (c = (uint32_t)i - 1; c != GA_RANGES_NONE; c = u->par[c])
				if (u->win[c].end > g->start)
					break;
		u->par[i] = c;
		/* Not nested: its launches' codes say the ranges open then (fold_own()). */
		if (c != GA_RANGES_NONE && g->end > u->win[c].end)
			u->nonnest = 1;
	}
	u->nlook = (uint32_t)n;
	u->at = 0;
	memo_reset(u);
	for (r = 0; r < k; r++) {
		size_t hi = r + 1 < u->nroots ? u->roots[r + 1].lo : u->nwin;

		/* Sorted, an outermost range comes first of its own. */
		u->roots[r].self = u->roots[r].lo;
		if (u->roots[r].placed)
			continue;
		if (u->nopen && open_steps(s, u, u->roots[r].start, cut, last))
			return -1;
		u->roots[r].placed = 1;
		for (i = u->roots[r].lo; i < hi; i++) {
			struct ga_ranges_range *g = &u->win[i];
			uint32_t c = u->par[i], node, parent = GA_RANGES_NONE;

			/* In its window parent, or the thread's announced range open then. */
			if (c != GA_RANGES_NONE && g->end > u->win[c].end)
				u->nonnest = 1;
			if (fold_inner(s, u, c, g->start, g, &parent))
				return -1;
			node = node_get(nx, parent, GA_RANGES_N_RANGE, g->key);
			if (node == GA_RANGES_NONE)
				return -1;
			if (node >= CODE_NODES)
				return fold_give_up(s, "more name paths than a fold codes");
			g->node = node;
			nx->nodes[node].instances++;
			if (f->gw_pend && fold_gw_place(s, u, g))
				return -1;
			/* A file's first range says it has ranges (nranges). */
			if (!f->kept) {
				if (nx->nranges >= GA_RANGES_FOLDED ||
				    ga_util_grow(&nx->ranges, &nx->capranges, nx->nranges + 1,
						 sizeof(*nx->ranges)))
					return -1;
				nx->ranges[nx->nranges] = *g;
				nx->ranges[nx->nranges++].parent = GA_RANGES_NONE;
				f->kept = 1;
			}
			/* The ranks' steps: what they read of them only; asked once a name. */
			if (nx->fold_keep && u->nopen && i > u->roots[r].lo &&
			    open_steps(s, u, g->start, cut, last))
				return -1;
			if (nx->fold_keep && !nx->keys[g->key].fold_kept)
				nx->keys[g->key].fold_kept =
					nx->fold_keep(ga_model_str(s->m, nx->keys[g->key].name)) ? 1 : 2;
			if (nx->fold_keep && nx->keys[g->key].fold_kept == 1) {
				struct ga_ranges_step st = { g->start, g->end, g->proc, g->key };
				int kr = step_keep(nx, &st);

				if (kr)
					return kr < 0 ? -1 : fold_give_up(s, "the temporary file of the "
									     "steps cannot be written");
			}
		}
	}
	return 0;
}

/*
 * The code of a launch whose own is own, made while the range of tree
 * node onode was open on another thread: CODE_PAIR | the pair's index, in
 * *code.  0, 1 where the pairs are more than a code holds, or -1 out of
 * memory.
 */
static int fold_pair(struct fold *f, uint32_t own, uint32_t onode, uint32_t *code)
{
	uint32_t *v;
	int rc = ga_map_insert(&f->pair_map, own, onode, &v);

	if (rc < 0)
		return -1;
	if (rc) {
		if (f->npairs >= CODE_PAIR - 1 ||
		    ga_util_grow(&f->pairs, &f->cappairs, f->npairs + 1, sizeof(*f->pairs))) {
			ga_map_remove(&f->pair_map, own, onode);
			return f->npairs >= CODE_PAIR - 1 ? 1 : -1;
		}
		f->pairs[f->npairs] = (struct fpair){ own, onode };
		*v = (uint32_t)++f->npairs;
	}
	*code = CODE_PAIR | (*v - 1);
	return 0;
}

/* Sorted, each once: v[0..n) in place, its new length. */
static size_t sort_unique(uint32_t *v, size_t n)
{
	size_t i, k = 0;

	for (i = 1; i < n; i++) {
		uint32_t x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	for (i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* A walk's index for node and keys k[0..n) (sorted, each once), made at its first.  UINT32_MAX: none. */
static uint32_t walk_get(struct fold *f, uint32_t node, const uint32_t *k, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	uint32_t *v;
	int r;

	for (size_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	/* One bucket a (node, hash): another list under it is one more than a fold codes. */
	if ((r = ga_map_insert(&f->walk_map, node, h, &v)) < 0)
		return UINT32_MAX;
	if (!r) {
		const struct fwalk *w = &f->walks[*v - 1];

		return w->nk == n && !memcmp(f->wkeys + w->k0, k, n * sizeof(*k)) ? *v - 1 :
										    UINT32_MAX - 1;
	}
	if (f->nwalks >= CODE_WALK - 1 || f->nwkeys + n >= UINT32_MAX ||
	    ga_util_grow(&f->walks, &f->capwalks, f->nwalks + 1, sizeof(*f->walks)) ||
	    ga_util_grow(&f->wkeys, &f->capwkeys, f->nwkeys + n + 1, sizeof(*f->wkeys))) {
		ga_map_remove(&f->walk_map, node, h);
		return UINT32_MAX;
	}
	memcpy(f->wkeys + f->nwkeys, k, n * sizeof(*k));
	f->walks[f->nwalks] = (struct fwalk){ node, (uint32_t)f->nwkeys, (uint32_t)n };
	f->nwkeys += n;
	*v = (uint32_t)++f->nwalks;
	return *v - 1;
}

/*
 * Room in the fold's scratch for the ranges open on thread u (those on the
 * window's chain from its range lo - 1, its announced ones, extra more)
 * and for the name path of tree node b: *open and *path.  0, or -1.
 */
static int open_room(struct fold *f, const struct ga_ranges *nx, const struct fthr *u, uint32_t lo,
		     uint32_t b, size_t extra, uint32_t **open, uint32_t **path)
{
	size_t need = u->nopen + extra;
	uint32_t c, x;

	for (c = lo ? lo - 1 : GA_RANGES_NONE; c != GA_RANGES_NONE; c = u->par[c])
		need++;
	for (x = b; x != GA_RANGES_NONE && nx->nodes[x].kind == GA_RANGES_N_RANGE;
	     x = nx->nodes[x].parent)
		need++;
	if (ga_util_grow(&f->scratch, &f->capscratch, 2 * need, sizeof(*f->scratch)))
		return -1;
	*open = f->scratch;
	*path = f->scratch + need;
	return 0;
}

/*
 * The keys (or nodes) open[0..n) of the ranges open against path[0..np)
 * of node b's name path: the same (as sets), 0 and *code left as it is;
 * else *code the walk's of node b and open (CODE_WALK), 0.  -1 given up
 * or out of memory.
 */
static int walk_code(struct scan *s, uint32_t b, uint32_t *open, size_t n, uint32_t *path,
		     size_t np, uint32_t *code)
{
	struct fold *f = s->nx->fstate;
	uint32_t w;

	/* In the same order (innermost first): as ranges that nest.  Else as sets. */
	if (np == n && !memcmp(open, path, n * sizeof(*open)))
		return 0;
	n = sort_unique(open, n);
	np = sort_unique(path, np);
	if (np == n && !memcmp(open, path, n * sizeof(*open)))
		return 0;
	w = walk_get(f, b, open, n);
	if (w == UINT32_MAX - 1)
		return fold_give_up(s, "more name paths than a fold codes");
	if (w == UINT32_MAX)
		return -1;
	*code = CODE_WALK | w;
	return 0;
}

/*
 * A launch at t, thread u's innermost range open then of tree node b
 * (fold_inner()), lo of its window's ranges started by t
 * (fold_innermost()), where u's ranges may not nest: the keys (other, a
 * thread other than the launch's: the tree nodes) of u's ranges open at
 * t against those of b's name path, as ga_ranges_walk() and
 * other_threads() read the ranges of a range kept.  The same: 0, *code
 * left as it is.  Else: *code a walk's (CODE_WALK, the keys or nodes
 * open), 0.  -1 given up or out of memory.
 */
static int fold_own(struct scan *s, struct fthr *u, uint64_t t, uint32_t lo, uint32_t b,
		    int other, uint32_t *code)
{
	struct ga_ranges *nx = s->nx;
	struct fmemo *mm = &u->memo[other];
	uint32_t c, x, *open, *path, was = *code;
	uint64_t t1 = UINT64_MAX;
	size_t n = 0, np = 0;

	/* The ranges open are those of the last launch's (launches come in time order, mostly). */
	if (mm->valid && mm->lo == lo && t >= mm->t0 && t < mm->t1) {
		if (mm->code)
			*code = mm->code;
		return 0;
	}
	if (open_room(nx->fstate, nx, u, lo, b, 1, &open, &path))
		return -1;
	/* The window's open at t are on the chain of the last to start by t (lo of them). */
	for (c = lo ? lo - 1 : GA_RANGES_NONE; c != GA_RANGES_NONE; c = u->par[c])
		if (u->win[c].end > t) {
			open[n++] = other ? u->win[c].node : u->win[c].key;
			if (u->win[c].end < t1)
				t1 = u->win[c].end;
		}
	for (size_t i = u->nopen; i--;)
		if (u->open[i].g.start <= t && t < u->open[i].g.end) {
			if (!u->open[i].made && fold_open_node(s, u, i))
				return -1;
			open[n++] = other ? u->open[i].g.node : u->open[i].g.key;
			if (u->open[i].g.end < t1)
				t1 = u->open[i].g.end;
		} else if (u->open[i].g.start > t && u->open[i].g.start < t1) {
			t1 = u->open[i].g.start;
		}
	for (x = b; x != GA_RANGES_NONE && nx->nodes[x].kind == GA_RANGES_N_RANGE;
	     x = nx->nodes[x].parent)
		path[np++] = other ? x : nx->nodes[x].id;
	/* Until one of them ends, another starts, or the window changes (memo_reset()): the same. */
	*mm = (struct fmemo){ t, t1, lo, 0, 1 };
	if (walk_code(s, b, open, n, path, np, code))
		return -1;
	if (*code != was)
		mm->code = *code;
	return 0;
}

/*
 * Fold to time cut (past every range at the end of the file, last): each
 * thread's outermost ranges that start before it placed in the tree, the
 * launches before it coded, the outermost ranges that end by it dropped.
 * 0, or -1 (s->fail set where the fold cannot go on, else out of memory).
 */
static int fold_to(struct scan *s, uint64_t cut, int last)
{
	struct fold *f = s->nx->fstate;
	struct fthr *own;
	size_t i, j, ti;
	int rc;

	f->gen++;
	for (ti = 0; ti < f->nth; ti++) {
		f->th[ti].step_at = 0;
		if (fold_look(s, &f->th[ti], cut, last))
			return -1;
	}
	/* The launches before the cut, in place of the waiting ones. */
	for (i = j = 0; i < f->npend; i++) {
		struct fpend p = f->pend[i];
		uint32_t code = CODE_NONE;

		if (p.t == UINT64_MAX || p.t >= cut) {
			f->pend[j++] = p;
			continue;
		}
		/*
		 * Its own thread's innermost range first; each other thread's
		 * counts into it apart, paired onto the code (a chain of pairs),
		 * unless the process's ranges are on too many threads for that.
		 */
		if ((own = fold_find(f, p.tid))) {
			uint32_t b, c = fold_innermost(own, p.t), lo = own->at;

			if (fold_inner(s, own, c, p.t, NULL, &b))
				return -1;
			if (b != GA_RANGES_NONE)
				code = b + CODE_RANGE;
			if (own->nonnest && (rc = fold_own(s, own, p.t, lo, b, 0, &code)))
				return rc;
		}
		for (ti = 0; f->nth <= GA_RANGES_OTHER_THREADS && ti < f->nth; ti++) {
			struct fthr *u = &f->th[ti];
			uint32_t b, c, lo;
			int pr;

			if (u->tid == p.tid)
				continue;
			c = fold_innermost(u, p.t);
			lo = u->at;
			if (fold_inner(s, u, c, p.t, NULL, &b))
				return -1;
			if (b == GA_RANGES_NONE)
				continue;
			/* Its ranges open then, where they are not b's name path: a walk's. */
			if (u->nonnest && (rc = fold_own(s, u, p.t, lo, b, 1, &b)))
				return rc;
			if ((pr = fold_pair(f, code, b, &code)))
				return pr < 0 ? -1 : fold_give_up(s, "more name paths than a fold codes");
		}
		if (fold_set(f, p.corr, code))
			return fold_give_up(s, "no temporary file for the launches' ranges");
	}
	f->npend = j;
	f->pend_hint = 0;
	/*
	 * Announced ranges the fold passes the start of: their tree nodes made
	 * (one in a range of the window needs it placed, and kept: below).
	 */
	for (ti = 0; ti < f->nth; ti++)
		for (i = 0; i < f->th[ti].nopen; i++)
			if (!f->th[ti].open[i].made && (last || f->th[ti].open[i].g.start < cut) &&
			    fold_open_node(s, &f->th[ti], i))
				return -1;
	for (ti = 0; ti < f->nth; ti++) {
		struct fthr *u = &f->th[ti];
		size_t k = 0, n;

		/* Placed (fold_look()): one empty at the cut itself starts there, and waits. */
		while (k < u->nroots && u->roots[k].placed && (last || u->roots[k].end <= cut))
			k++;
		n = k < u->nroots ? u->roots[k].lo : u->nwin;
		/* Nothing to drop: win and par may not be made yet (NULL). */
		if (n) {
			memmove(u->win, u->win + n, (u->nwin - n) * sizeof(*u->win));
			memmove(u->par, u->par + n, (u->nlook - n) * sizeof(*u->par));
		}
		u->nwin -= n;
		u->nlook -= (uint32_t)n;
		for (i = 0; i < u->nlook; i++)
			u->par[i] = u->par[i] == GA_RANGES_NONE ? GA_RANGES_NONE :
								  u->par[i] - (uint32_t)n;
		for (i = k; i < u->nroots; i++) {
			u->roots[i - k] = u->roots[i];
			u->roots[i - k].lo -= n;
			u->roots[i - k].self -= n;
		}
		u->nroots -= k;
		u->at = 0;
	}
	/* Announced ranges that closed by the cut hold nothing after it. */
	for (ti = 0; ti < f->nth; ti++) {
		struct fthr *u = &f->th[ti];

		if (u->nopen && open_steps(s, u, UINT64_MAX, cut, last))
			return -1;

		u->nunstepped = 0;
		u->closed_end = 0;
		for (i = j = 0; i < u->nopen; i++) {
			const struct fopen *o = &u->open[i];

			if (o->closed && (last || o->g.end <= cut))
				continue;
			if (last)
				return fold_give_up(s, "a range announced open whose own record never "
						       "came");
			if (o->closed) {
				u->nunstepped += !o->stepped;
				if (o->g.end > u->closed_end)
					u->closed_end = o->g.end;
			}
			u->open[j++] = *o;
		}
		if (u->nopen != j)
			memo_reset(u);
		u->nopen = j;
	}
	if (cut > f->horizon)
		f->horizon = cut;
	return 0;
}

/*
 * The time by which thread u's ranges are taken to be known (the fold's
 * bounds, above): the end of its last outermost range that FOLD_ROOTS
 * newer ones, or one that came FOLD_QUIET records ago, follow; past every
 * range where its last came FOLD_QUIET records ago; else what is folded.
 */
static uint64_t fold_ready(const struct fold *f, const struct fthr *u, uint64_t nrec,
			   uint64_t quiet)
{
	size_t k = u->nroots > FOLD_ROOTS ? u->nroots - FOLD_ROOTS : 0;

	if (nrec - u->last_rec > quiet)
		return UINT64_MAX;
	while (k + 1 < u->nroots && nrec - u->roots[k + 1].rec > quiet)
		k++;
	return k ? u->roots[k - 1].end : f->horizon;
}

/* struct fold ready1, ready2 and ready_th for the records read and the folds made. */
static void fold_readiness(struct scan *s)
{
	struct fold *f = s->nx->fstate;

	if (f->ready_rec == s->nrec && f->ready_gen == f->gen)
		return;
	f->ready_rec = s->nrec;
	f->ready_gen = f->gen;
	f->ready1 = f->ready2 = UINT64_MAX;
	f->ready_th = SIZE_MAX;
	for (size_t i = 0; i < f->nth; i++) {
		uint64_t r = fold_ready(f, &f->th[i], s->nrec,
					s->nx->fold_quiet ? s->nx->fold_quiet : FOLD_QUIET);

		if (r < f->ready1) {
			f->ready2 = f->ready1;
			f->ready1 = r;
			f->ready_th = i;
		} else if (r < f->ready2) {
			f->ready2 = r;
		}
	}
}

/* fold_advance()'s fold to cut, after a wait: 0, or -1 (fold_to()). */
static int fold_again(struct scan *s, uint64_t cut)
{
	((struct fold *)s->nx->fstate)->fold_rec = s->nrec;
	return fold_to(s, cut, 0);
}

/*
 * Thread t asks to fold to time want: folded to where every other thread's
 * ranges are known too (fold_ready(); past them where force: t's window is
 * full), and no nearer the newest times than records may come late
 * (fold_lag()).  A fold goes through every launch waiting: held back so,
 * it waits until 2 * FOLD_ROOTS outermost ranges end by then, or twice as
 * many records came since the last as launches wait.  0, or -1 (fold_to()).
 */
static int fold_advance(struct scan *s, const struct fthr *t, uint64_t want, int force)
{
	struct fold *f = s->nx->fstate;
	uint64_t cut = want;
	size_t i, k, ends = 0;

	if (force)
		return cut > f->horizon ? fold_to(s, cut, 0) : 0;
	/* Records come up to two flush intervals late (fold_lag()): not past the newest less that. */
	if (f->lag && cut > (f->tlast > f->lag ? f->tlast - f->lag : 0))
		cut = f->tlast > f->lag ? f->tlast - f->lag : 0;
	if (f->nth <= 8) {
		/* A few threads: the others' read as asked. */
		for (i = 0; i < f->nth; i++)
			if (&f->th[i] != t) {
				uint64_t r = fold_ready(f, &f->th[i], s->nrec,
							s->nx->fold_quiet ? s->nx->fold_quiet :
									    FOLD_QUIET);

				if (r < cut)
					cut = r;
			}
	} else {
		fold_readiness(s);
	}
	/* The earliest of the other threads'. */
	i = (size_t)(t - f->th);
	if (f->nth > 8 && (i == f->ready_th ? f->ready2 : f->ready1) < cut)
		cut = i == f->ready_th ? f->ready2 : f->ready1;
	if (cut <= f->horizon)
		return 0;
	/* As t asked: its oldest outermost ranges, FOLD_ROOTS of them unless paced. */
	if (cut == want)
		return fold_to(s, cut, 0);
	if (s->nrec - f->fold_rec < 2 * f->npend) {
		if (f->ends_rec != s->nrec || f->ends_gen != f->gen) {
			f->ends_rec = s->nrec;
			f->ends_gen = f->gen;
			memset(f->ends_cut, 0, sizeof(f->ends_cut));
		}
		for (k = 0; k < 4; k++)
			if (f->ends_cut[k] == cut)
				return f->ends_n[k] < 2 * FOLD_ROOTS ? 0 : fold_again(s, cut);
		/* A thread's outermost ranges do not overlap: their ends rise. */
		for (i = 0; i < f->nth && ends < 2 * FOLD_ROOTS; i++) {
			size_t lo = 0, hi = f->th[i].nroots;

			/* Most threads: none by the cut, or all. */
			if (!hi || f->th[i].roots[0].end > cut)
				continue;
			if (f->th[i].roots[hi - 1].end <= cut)
				lo = hi;
			while (lo < hi) {
				k = lo + (hi - lo) / 2;
				if (f->th[i].roots[k].end <= cut)
					lo = k + 1;
				else
					hi = k;
			}
			ends += lo;
		}
		f->ends_k = (f->ends_k + 1) % 4;
		f->ends_cut[f->ends_k] = cut;
		f->ends_n[f->ends_k] = ends;
		if (ends < 2 * FOLD_ROOTS)
			return 0;
	}
	return fold_again(s, cut);
}

static void other_decide(struct ga_ranges *nx, uint32_t pi, int many);

/* fold_thread() of a thread not met yet. */
static __attribute__((noinline)) struct fthr *fold_thread_new(struct ga_ranges *nx, uint32_t tid,
							      int *many)
{
	struct fold *f = nx->fstate;
	struct fthr *u;
	uint32_t *v;

	if (f->nth >= FOLD_THREADS) {
		*many = 1;
		return NULL;
	}
	if (ga_map_insert(&f->th_map, 0, tid, &v) < 0)
		return NULL;
	if (f->nth == f->capth) {
		u = realloc(f->th, (f->capth + 1) * sizeof(*u));
		if (!u) {
			ga_map_remove(&f->th_map, 0, tid);
			return NULL;
		}
		f->th = u;
		memset(&f->th[f->capth++], 0, sizeof(*u));
	}
	*v = (uint32_t)f->nth + 1;
	/* Ranges on more threads than other threads' kernels are counted for (ranges.h). */
	if (f->nth == GA_RANGES_OTHER_THREADS)
		other_decide(nx, f->pi, 1);
	/* A slot of an earlier file's thread keeps what it allocated. */
	u = &f->th[f->nth++];
	u->tid = tid;
	u->nwin = u->nroots = 0;
	u->nlook = u->at = 0;
	u->nopen = u->nunstepped = u->step_at = 0;
	u->closed_end = 0;
	u->nonnest = 0;
	memo_reset(u);
	return u;
}

/* Thread tid's ranges, made at its first; NULL out of memory or past FOLD_THREADS (*many). */
static inline __attribute__((always_inline)) struct fthr *
fold_thread(struct ga_ranges *nx, uint32_t tid, int *many)
{
	struct fthr *u = fold_find(nx->fstate, tid);

	return u ? u : fold_thread_new(nx, tid, many);
}

/*
 * The last of thread t's outermost ranges (in start order, apart) that
 * starts before x; t->nroots where none does.
 */
static size_t root_before(const struct fthr *t, uint64_t x)
{
	size_t lo = 0, hi = t->nroots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->roots[mid].start < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : t->nroots;
}

/*
 * A range announced open (GP_REC_NVTX_OPEN, g->end UINT64_MAX): its thread's
 * ranges and launches from its start are in it until its own record comes
 * (fold_close()).  It comes by a flush interval after the start, before
 * the fold gets there (two intervals behind), and after those announced
 * that started before it; else the fold is given up.  One that starts
 * inside ranges that end before it does (NCCL's communicator, opened
 * inside a step and open at exit) does not nest in them (t->nonnest).
 * 0, or -1.
 */
static int fold_open(struct scan *s, const struct ga_ranges_range *g)
{
	struct fold *f = s->nx->fstate;
	struct fthr *t;
	size_t i;
	int many = 0;

	if (g->start < f->horizon)
		return fold_give_up(s, "a range that came after the ranges around it folded");
	if (f->spec && g->start <= f->spec_tmax)
		return fold_give_up(s, why_spec);
	if (!(t = fold_thread(s->nx, g->tid, &many)))
		return many ? fold_give_up(s, "ranges on more threads of a process than a fold keeps") :
			      -1;
	for (i = 0; i < t->nopen; i++) {
		const struct fopen *o = &t->open[i];

		/* Announced twice (the recorder does not): once is enough. */
		if (o->g.id == g->id)
			return 0;
		/* One that starts after it (the recorder announces them by start). */
		if (o->g.start > g->start)
			return fold_give_up(s, "ranges that do not nest");
		/* Inside one that closed before it did: they do not nest. */
		if (o->closed && g->start < o->g.end)
			t->nonnest = 1;
	}
	/*
	 * Inside ranges of the window: they do not nest (it is open still);
	 * placed, those of them after its start were placed without it.
	 */
	if ((i = root_before(t, g->start < UINT64_MAX ? g->start + 1 : g->start)) < t->nroots &&
	    g->start < t->roots[i].end) {
		if (t->roots[i].placed)
			return fold_give_up(s, "a range that came after the ranges around it folded");
		t->nonnest = 1;
	}
	if (t->nopen >= FOLD_OPEN_MAX)
		return fold_give_up(s, "more ranges announced open at once than a fold keeps");
	if (ga_util_grow(&t->open, &t->capopen, t->nopen + 1, sizeof(*t->open)))
		return -1;
	t->open[t->nopen++] = (struct fopen){ .g = *g };
	memo_reset(t);
	f->has_tid = 1;
	t->last_rec = s->nrec;
	s->due = 1;
	return 0;
}

/*
 * The record of a range thread t announced (its index i in t->open): it
 * ends there, and waits in t->open, closed, for what of its thread's
 * window starts in it, until the fold passes its end (its tree node made
 * by the time the fold passes its start: a range with nothing in it is
 * one too, fold_to()); a step is kept in start order among the window's
 * outermost ranges (open_steps()).  0, or -1 given up or out of memory.
 */
static int fold_close(struct scan *s, struct fthr *t, size_t i, const struct ga_ranges_range *g)
{
	struct ga_ranges *nx = s->nx;
	struct fold *f = nx->fstate;
	struct fopen *o;
	size_t k;

	/* Announced ones that started in it and end after it: they do not nest. */
	for (k = i + 1; k < t->nopen; k++)
		if (t->open[k].g.start < g->end && (!t->open[k].closed || t->open[k].g.end > g->end))
			t->nonnest = 1;
	/* Ranges of the window across its end: they do not nest. */
	if ((k = root_before(t, g->end)) < t->nroots && t->roots[k].end > g->end)
		t->nonnest = 1;
	/* Launches or ranges after its end may have been read as inside it. */
	if (g->end < f->horizon)
		return fold_give_up(s, "a range that came after the ranges around it folded");
	o = &t->open[i];
	o->closed = 1;
	o->g.end = g->end;
	t->nunstepped += !o->stepped;
	if (g->end > t->closed_end)
		t->closed_end = g->end;
	memo_reset(t);
	o->g.flags = g->flags;
	if (o->kept) {
		nx->ranges[o->kept - 1].end = g->end;
		nx->ranges[o->kept - 1].flags = g->flags;
	}
	f->has_tid = 1;
	t->last_rec = s->nrec;
	if (g->end > f->tlast)
		f->tlast = g->end;
	s->due = 1;
	return 0;
}

/* The first of thread t's announced ranges (in start order) that starts after time x. */
static size_t open_after(const struct fthr *t, uint64_t x)
{
	size_t lo = 0, hi = t->nopen;

	while (lo < hi) {
		size_t k = lo + (hi - lo) / 2;

		if (t->open[k].g.start <= x)
			lo = k + 1;
		else
			hi = k;
	}
	return lo;
}

/*
 * The index of range g's announcement among thread t's announced ranges
 * still open (of its id and start), t->nopen where none is.  Closed, a
 * second record of one id (which the recorder does not write) is another
 * range.
 */
static size_t open_find(const struct fthr *t, const struct ga_ranges_range *g)
{
	size_t i = open_after(t, g->start);

	while (i-- && t->open[i].g.start == g->start)
		if (t->open[i].g.id == g->id && !t->open[i].closed)
			return i;
	return t->nopen;
}

/*
 * Range g across the start of one of thread t's announced ranges (or
 * around it), or across the end of a closed one: 1, they do not nest.
 */
static int open_across(const struct fthr *t, const struct ga_ranges_range *g)
{
	size_t i = open_after(t, g->start);

	if (i < t->nopen && t->open[i].g.start < g->end)
		return 1;
	if (t->closed_end <= g->start)
		return 0;
	for (i = 0; i < t->nopen; i++) {
		const struct fopen *o = &t->open[i];

		if (o->closed && g->start < o->g.end && g->end > o->g.end)
			return 1;
	}
	return 0;
}

/*
 * A range record's range g, on its thread's window: 0, or -1 (fold_to()).
 * The window's outermost ranges (roots) are the thread's groups of ranges
 * that overlap: a group's first range (in cmp_range() order) and those
 * that start before the group's latest end so far.  Ranges that nest make
 * a group of one outermost range; ranges that do not (two domains' push
 * and pop, start/end ranges) make one of several, and t->nonnest.
 */
static int fold_range(struct scan *s, const struct ga_ranges_range *g)
{
	struct fold *f = s->nx->fstate;
	struct fthr *t;
	size_t lo, i;
	uint64_t end = g->end;
	int many = 0, joined = 0;

	if (!(t = fold_thread(s->nx, g->tid, &many)))
		return many ? fold_give_up(s, "ranges on more threads of a process than a fold keeps") :
			      -1;
	/* A range announced open: its thread holds it apart. */
	if (t->nopen && (i = open_find(t, g)) < t->nopen)
		return fold_close(s, t, i, g);
	if (g->start < f->horizon)
		return fold_give_up(s, "a range that came after the ranges around it folded");
	if (f->spec && g->start <= f->spec_tmax && g->end > f->spec_tmin)
		return fold_give_up(s, why_spec);
	if (!t->nonnest && t->nopen && open_across(t, g))
		t->nonnest = 1;
	f->has_tid = 1;
	t->last_rec = s->nrec;
	if (g->end > f->tlast)
		f->tlast = g->end;
	lo = t->nwin;
	if (ga_util_grow(&t->win, &t->capwin, t->nwin + 1, sizeof(*t->win)) ||
	    ga_util_grow(&t->roots, &t->caproots, t->nroots + 1, sizeof(*t->roots)))
		return -1;
	while (t->nroots) {
		struct froot *rt = &t->roots[t->nroots - 1];
		const struct ga_ranges_range *c = &t->win[rt->self];

		/*
		 * After the group's first range, starting before its end: one of
		 * its own though its record came after theirs (ranges that close
		 * at one time come in any order; one that did not nest).
		 */
		if (cmp_range(c, g) < 0) {
			if (g->start < rt->end) {
				if (rt->placed)
					return fold_give_up(s, "a range that came after the ranges "
							       "around it folded");
				if (end > rt->end)
					rt->end = end;
				joined = 1;
			}
			break;
		}
		/*
		 * Before its first range: the group becomes g's (around it, across
		 * its start, or after it: a group is what is placed at once).
		 */
		if (rt->placed)
			return fold_give_up(s, "a range that came after the ranges around it folded");
		if (rt->end > end)
			end = rt->end;
		lo = t->roots[--t->nroots].lo;
	}
	t->win[t->nwin++] = *g;
	if (!joined)
		t->roots[t->nroots++] = (struct froot){ g->start, end, lo, t->nwin - 1, s->nrec, 0 };
	/* What it asks for is weighed once the run of range records ends (fold_due()). */
	s->due = 1;
	return 0;
}

/*
 * The file's CONFIG says its flush interval.  The recorder hands each
 * source's records over every interval, and CUPTI completes its buffers of
 * calls and of activities apart: a call's record may come an interval and
 * more after its activity's, and after ranges that closed later.  So a
 * fold stays two intervals behind the newest range end or call start
 * (nx->fold_lag instead where set: tests).
 */
static void fold_lag(struct scan *s, uint32_t flush_ms)
{
	struct fold *f = s->nx->fstate;
	uint64_t lag = s->nx->fold_lag;

	f->lag = lag == UINT64_MAX ? 0 : lag ? lag :
					       2ull * flush_ms * 1000000ull;
}

/* What thread t asks to fold (the fold's bounds, above): 0, or -1 (fold_to()). */
static int fold_ask(struct scan *s, struct fthr *t, int stuck)
{
	struct fold *f = s->nx->fstate;

	if (t->nroots >= 2 * FOLD_ROOTS)
		return stuck ? 0 : fold_advance(s, t, t->roots[t->nroots - FOLD_ROOTS - 1].end, 0);
	if (s->nx->paced && t->nroots > 2) {
		uint64_t slack = s->nx->pace_recs ? s->nx->pace_recs : FOLD_PACE_RECS;
		size_t k = 0, hi = t->nroots - 2;

		/* The first not slack records old: they came in order (fold_range() appends). */
		while (k < hi) {
			size_t mid = k + (hi - k) / 2;

			if (s->nrec - t->roots[mid].rec > slack)
				k = mid + 1;
			else
				hi = mid;
		}
		if (k) {
			f->paced_only = 1;
			return stuck ? 0 : fold_advance(s, t, t->roots[k - 1].end, 0);
		}
	}
	if (t->nwin > FOLD_WINDOW) {
		if (t->nroots < 2)
			return fold_give_up(s, "a range holding more ranges than a fold keeps open");
		return fold_advance(s, t, t->roots[t->nroots - 2].end, 1);
	}
	return 0;
}

/*
 * A record other than a range, a mark or a string, after ranges came.  The
 * recorder writes ranges as it drains each thread's in turn, every flush
 * interval: one thread's may come a whole run after another's of the same
 * time.  So what the threads ask for is weighed at the end of a run, when
 * each thread's ranges of it are in.  0, or -1 (fold_to()).
 */
static int fold_due(struct scan *s)
{
	struct fold *f = s->nx->fstate;
	uint64_t gen = f->gen - 1;
	int stuck = 0;

	s->due = 0;
	for (size_t i = 0; i < f->nth; i++) {
		/*
		 * Many threads: where the others' ranges are known by the time
		 * folded only, for every thread (the second earliest), or the
		 * newest times less the lag are there, an ask folds nothing but
		 * a full window (fold_advance() force).
		 */
		if (f->nth > 8 && gen != f->gen) {
			gen = f->gen;
			fold_readiness(s);
			stuck = f->ready2 <= f->horizon ||
				(f->lag && (f->tlast > f->lag ? f->tlast - f->lag : 0) <= f->horizon);
		}
		if (fold_ask(s, &f->th[i], stuck))
			return -1;
	}
	return 0;
}

/*
 * The code of graph nodes captured or added in range g of thread u, placed
 * (its tree node made): g's node, or where u's ranges may not nest and
 * g's name path is not g and the ranges open at its start before it, a
 * walk's of their keys (ga_ranges_walk() from g at its start), in *code.
 * 0, or -1 given up or out of memory.
 */
static int fold_gcode(struct scan *s, struct fthr *u, const struct ga_ranges_range *g,
		      uint32_t *code)
{
	struct ga_ranges *nx = s->nx;
	uint32_t lo, c, x, *open, *path;
	size_t n = 0, np = 0;

	*code = g->node + CODE_RANGE;
	if (!u->nonnest)
		return 0;
	/* The window's ranges that start by g's (fold_innermost() counts them in u->at). */
	fold_innermost(u, g->start);
	lo = u->at;
	if (open_room(nx->fstate, nx, u, lo, g->node, 2, &open, &path))
		return -1;
	open[n++] = g->key;
	for (c = lo ? lo - 1 : GA_RANGES_NONE; c != GA_RANGES_NONE; c = u->par[c])
		if (u->win[c].end > g->start && cmp_range(&u->win[c], g) < 0)
			open[n++] = u->win[c].key;
	for (size_t i = 0; i < u->nopen; i++)
		if (u->open[i].g.start <= g->start && g->start < u->open[i].g.end &&
		    cmp_range(&u->open[i].g, g) < 0)
			open[n++] = u->open[i].g.key;
	for (x = g->node; x != GA_RANGES_NONE && nx->nodes[x].kind == GA_RANGES_N_RANGE;
	     x = nx->nodes[x].parent)
		path[np++] = nx->nodes[x].id;
	return walk_code(s, g->node, open, n, path, np, code);
}

/*
 * Range g of thread u placed in the tree: the graph nodes captured or
 * added in it have their code (fold_gcode()).  0, or -1 (the fold given
 * up: two ranges of its id; out of memory).
 */
static int fold_gw_place(struct scan *s, struct fthr *u, const struct ga_ranges_range *g)
{
	struct fold *f = s->nx->fstate;
	uint32_t *v = ga_map_find(&f->gw_map, f->pi, g->id), code;
	struct fgw *w;

	if (!v)
		return 0;
	w = &f->gw[*v - 1];
	if (w->code)
		return fold_give_up(s, "graph nodes of a range id that two ranges have");
	if (fold_gcode(s, u, g, &code))
		return -1;
	w->code = code;
	f->gw_pend--;
	return 0;
}

/*
 * The index in gw of the range of id in the file scanned, made at its
 * first node: its code where a range of that id is placed already, else
 * 0 until it is (fold_gw_place()).  UINT32_MAX out of memory, UINT32_MAX - 1
 * the fold given up.
 */
static uint32_t fold_gw(struct scan *s, uint64_t id)
{
	struct fold *f = s->nx->fstate;
	uint32_t *v, code = 0;
	int r = ga_map_insert(&f->gw_map, f->pi, id, &v);

	if (r < 0)
		return UINT32_MAX;
	if (!r)
		return *v - 1;
	/* Placed ranges are those of the placed outermost ones (fold_look()) and announced ones made. */
	for (size_t ti = 0; ti < f->nth && !code; ti++) {
		struct fthr *u = &f->th[ti];

		for (size_t k = 0; k < u->nopen && !code; k++)
			if (u->open[k].made && u->open[k].g.id == id &&
			    fold_gcode(s, u, &u->open[k].g, &code))
				return UINT32_MAX - 1;

		for (size_t k = 0; k < u->nroots && u->roots[k].placed && !code; k++) {
			size_t hi = k + 1 < u->nroots ? u->roots[k + 1].lo : u->nwin;

			for (size_t i = u->roots[k].lo; i < hi; i++)
				if (u->win[i].id == id) {
					if (fold_gcode(s, u, &u->win[i], &code))
						return UINT32_MAX - 1;
					break;
				}
		}
	}
	if (f->ngw >= UINT32_MAX - 1 || ga_util_grow(&f->gw, &f->capgw, f->ngw + 1, sizeof(*f->gw))) {
		ga_map_remove(&f->gw_map, f->pi, id);
		return UINT32_MAX;
	}
	f->gw[f->ngw] = (struct fgw){ id, code };
	f->gw_pend += !code;
	*v = (uint32_t)++f->ngw;
	return *v - 1;
}

/*
 * A graph node record: the node's kernels are counted in the range open
 * where it was captured or added (ga_ranges_attribute(), as index_ranges()
 * places them), by that range's code once placed.  0, or -1.
 */
static int fold_gnode(struct scan *s, const struct gp_rec_graph_node *g)
{
	struct ga_ranges *nx = s->nx;
	struct fold *f = nx->fstate;
	uint32_t w = UINT32_MAX, *v;
	int r;

	f->gnodes = 1;
	if (g->nvtx && (w = fold_gw(s, g->nvtx)) >= UINT32_MAX - 1)
		return -1;
	/* Paced, the model read the node's kernels as launched: a record now says otherwise. */
	if (f->gseen.n && ga_map_find(&f->gseen, s->proc, g->node))
		return fold_give_up(s, why_gnode_late);
	if ((r = ga_map_insert(&nx->gnode_map, s->proc, g->node, &v)) < 0)
		return -1;
	/* A node recorded twice: the model may have read its kernels by the first. */
	if (!r && *v != w && s == nx->ahead && nx->paced)
		return fold_give_up(s, why_gnode_twice);
	*v = w;
	return 0;
}

/*
 * An activity of graph node node, paced: one without a record of its node
 * yet is noted (fold_gnode()).  0, or -1 out of memory.
 */
static int fold_gact(struct scan *s, uint64_t node)
{
	struct ga_ranges *nx = s->nx;
	uint32_t *slot;

	if (s != nx->ahead || !nx->paced ||
	    (nx->gnode_map.n && ga_map_find(&nx->gnode_map, s->proc, node)))
		return 0;
	return ga_map_insert(&((struct fold *)nx->fstate)->gseen, s->proc, node, &slot) < 0 ? -1 : 0;
}

/* A launch at t on thread tid: one the folded ranges would have held comes too late. */
static int fold_late(const struct fold *f, uint64_t t)
{
	return t != UINT64_MAX && t < f->horizon;
}

/* An activity of correlation corr; a: its launch from the ring, or NULL.  0, or -1. */
static int fold_corr(struct scan *s, uint32_t corr, const struct api_seen *a)
{
	struct fold *f = s->nx->fstate;

	if (corr >= CORR_DENSE)
		return fold_give_up(s, "correlation ids past 2^26");
	/* Activities come mostly in the order of their ids: most are new (waiting or coded: not). */
	if (corr < f->seen && fold_code(f, f->pi, corr))
		return 0;
	if (f->io_err)
		return fold_give_up(s, "the temporary file of the launches' ranges cannot be read");
	if (a && fold_late(f, a->t))
		return fold_give_up(s, "an activity that came after the ranges of its launch folded");
	if (f->npend >= FOLD_PENDING || f->serial >= CODE_PEND - 1)
		return fold_give_up(s, "more launches waiting for their ranges than a fold keeps");
	if (ga_util_grow(&f->pend, &f->cappend, f->npend + 1, sizeof(*f->pend)))
		return -1;
	if (fold_set(f, corr, CODE_PEND | f->serial))
		return fold_give_up(s, "no temporary file for the launches' ranges");
	if (corr >= f->seen)
		f->seen = corr + 1;
	f->pend[f->npend++] = (struct fpend){ a ? a->t : UINT64_MAX, corr, a ? a->tid : 0, s->chunk,
					      f->serial++ };
	return 0;
}

/*
 * The waiting launch of mark serial (their serials rise: a binary search,
 * after the place past the last one found, where the calls of launches that
 * wait come in their order), or NULL.
 */
static struct fpend *fold_pend(struct fold *f, uint32_t serial)
{
	size_t lo = 0, hi = f->npend;

	if (f->pend_hint < f->npend && f->pend[f->pend_hint].serial == serial)
		return &f->pend[f->pend_hint++];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->pend[mid].serial < serial)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < f->npend && f->pend[lo].serial == serial) {
		f->pend_hint = lo + 1;
		return &f->pend[lo];
	}
	return NULL;
}

/*
 * An API record of a correlation whose activity came: its launch, where
 * earlier (as on_api()).  1 when the record was such, 0 when it is for
 * the ring, -1 (the fold given up).
 */
static int fold_api(struct scan *s, const struct gp_rec_api *r)
{
	struct fold *f = s->nx->fstate;
	uint32_t code;

	if (r->start > f->tlast)
		f->tlast = r->start;
	/* A call comes before its activities, mostly: none of its id yet. */
	if (r->correlation >= CORR_DENSE || r->correlation >= f->seen)
		return 0;
	code = fold_code(f, f->pi, r->correlation);
	if (code & CODE_PEND) {
		struct fpend *p;

		/* Only this file's waiting launches are marked (fold_end()): never another. */
		if (!(p = fold_pend(f, code & ~CODE_PEND)))
			return fold_give_up(s, "a launch's mark past the launches waiting");

		if (p->t == UINT64_MAX || r->start < p->t) {
			if (fold_late(f, r->start))
				return fold_give_up(s, "an API call that came after the ranges "
						    "around it folded");
			p->t = r->start;
			p->tid = r->tid;
			/* A launch the model may have read already: its time in the bounds. */
			if (f->spec && r->start < f->spec_tmin)
				f->spec_tmin = r->start;
		}
		return 1;
	}
	if (code)
		return fold_give_up(s, "an API call that came after its activity's launch was coded");
	return f->io_err ? fold_give_up(s, "the temporary file of the launches' ranges cannot be "
					"read") : 0;
}

static void fold_begin(struct ga_ranges *nx, uint32_t pi)
{
	struct fold *f = nx->fstate;

	f->pi = pi;
	f->base[pi] = f->next;
	f->top[pi] = 0;
	f->has_tid = 0;
	f->nth = f->npend = 0;
	ga_map_free(&f->th_map);
	f->gen++;
	f->serial = 0;
	f->horizon = 0;
	f->fold_rec = 0;
	f->tlast = 0;
	f->lag = 0;
	f->kept = 0;
	f->gnodes = 0;
	f->gw_pend = 0;
	ga_map_free(&f->gseen);
	f->seen = 0;
	f->spec = 0;
	f->spec_tmin = UINT64_MAX;
	f->spec_tmax = 0;
	f->paced_only = 0;
}

/* The file's end: every range folded, every launch coded (UNATTR without a call).  0, or -1. */
static int fold_end(struct scan *s)
{
	struct ga_ranges *nx = s->nx;
	struct fold *f = nx->fstate;
	size_t i;

	if (!f->has_tid) {
		/*
		 * No ranges: ga_ranges_attribute() places nothing by the codes,
		 * and the next file's codes start where this one's did; its
		 * waiting launches, all in pend, leave no mark there.
		 */
		for (i = 0; i < f->npend; i++)
			if (fold_set(f, f->pend[i].corr, 0))
				return fold_give_up(s, "no temporary file for the launches' ranges");
		f->npend = 0;
		f->top[f->pi] = 0;
		other_decide(nx, f->pi, 0);
		return 0;
	}
	if (fold_to(s, UINT64_MAX, 1))
		return -1;
	/* Kept, a node whose range id no range has is outside any: which one it was is gone. */
	if (f->gw_pend)
		return fold_give_up(s, "graph nodes of a range that did not come or folded first");
	for (i = 0; i < f->npend; i++)
		if (fold_set(f, f->pend[i].corr, CODE_UNATTR))
			return fold_give_up(s, "no temporary file for the launches' ranges");
	f->npend = 0;
	f->next = f->base[f->pi] + (f->top[f->pi] + FOLD_BLOCK - 1) / FOLD_BLOCK;
	other_decide(nx, f->pi, 0);
	return 0;
}

/*
 * Sort the ranges of one process, ranges[lo..), index its threads, link
 * parents, place the ranges in the tree; gn: its graph nodes.  The
 * processes come in order, so that the ranges, threads and nodes are in
 * the order one sort of all of them would give.
 */
static int index_ranges(struct ga_ranges *nx, size_t lo, const struct gnode_raw *gn, size_t ngn)
{
	struct ga_map ids = { 0 };
	size_t i;

	if (nx->nranges >= GA_RANGES_UNATTR)
		return -1;
	if (sort_ranges(nx, lo) ||
	    ga_util_grow(&nx->nested, &nx->capnested, nx->nranges ? nx->nranges : 1, 1))
		return -1;
	for (i = lo; i < nx->nranges; i++) {
		struct ga_ranges_range *r = &nx->ranges[i];
		uint32_t *slot, c;

		/* Sorted by thread: a thread's ranges are together, its first starts it. */
		if (i == lo || r[-1].proc != r->proc || r[-1].tid != r->tid) {
			if (ga_map_insert(&nx->thread_map, r->proc, r->tid, &slot) != 1 ||
			    ga_util_grow(&nx->threads, &nx->capthreads, nx->nthreads + 1,
					 sizeof(*nx->threads)))
				goto oom;
			nx->threads[nx->nthreads].lo = (uint32_t)i;
			*slot = (uint32_t)nx->nthreads++;
		} else {
			/* The parent is on the chain of the range before. */
			for (c = (uint32_t)i - 1; c != GA_RANGES_NONE; c = nx->ranges[c].parent)
				if (nx->ranges[c].end > r->start)
					break;
			r->parent = c;
		}
		nx->threads[nx->nthreads - 1].hi = (uint32_t)i + 1;
		/* The parent comes first in this order: its flag is known. */
		nx->nested[i] = r->parent == GA_RANGES_NONE ||
				(nx->nested[r->parent] && r->end <= nx->ranges[r->parent].end);
		r->node = node_get(nx, r->parent == GA_RANGES_NONE ? GA_RANGES_NONE :
				   nx->ranges[r->parent].node, GA_RANGES_N_RANGE, r->key);
		if (r->node == GA_RANGES_NONE)
			goto oom;
		nx->nodes[r->node].instances++;
		/* Range ids are looked up only for graph nodes. */
		if (ngn && ga_map_insert(&ids, r->proc, r->id, &slot) < 0)
			goto oom;
		if (ngn)
			*slot = (uint32_t)i;
	}
	for (i = 0; i < ngn; i++) {
		const uint32_t *ri = gn[i].nvtx ? ga_map_find(&ids, gn[i].proc, gn[i].nvtx) : NULL;
		uint32_t *slot;

		if (ga_map_insert(&nx->gnode_map, gn[i].proc, gn[i].node, &slot) < 0)
			goto oom;
		*slot = ri ? *ri + 1 : UINT32_MAX;
		/* Spilled: placed once the ranges are read back (ga_ranges_spilled_index()). */
		if (nx->spill && gn[i].nvtx &&
		    (ga_util_grow(&nx->spill_gn, &nx->capspill_gn, nx->nspill_gn + 1,
				  sizeof(*nx->spill_gn)) ||
		     ga_map_insert(&nx->spill_gid, gn[i].proc, gn[i].nvtx, &slot) < 0))
			goto oom;
		if (nx->spill && gn[i].nvtx) {
			*slot = UINT32_MAX;
			nx->spill_gn[nx->nspill_gn++] = (struct ga_ranges_gnode){
				gn[i].node, gn[i].nvtx, gn[i].proc
			};
		}
	}
	ga_map_free(&ids);
	return 0;
oom:
	ga_map_free(&ids);
	return -1;
}

/*
 * File i scanned: its ranges (ranges[lo..)) indexed and its correlation
 * ids resolved; gn: its graph nodes.  0, or -1 out of memory.
 */
static int index_file(struct ga_ranges *nx, size_t i, size_t lo, const struct gnode_raw *gn,
		      size_t ngn)
{
	size_t th = nx->nthreads;

	if (!nx->proc_ranges[i] && !launches_all(nx)) {
		/* Its activities are outside any range: nothing to look up. */
		free_times(&nx->dense[i]);
		free(nx->dense[i].x);
		free(nx->dense[i].gen);
		memset(&nx->dense[i], 0, sizeof(nx->dense[i]));
		return 0;
	}
	if (index_ranges(nx, lo, gn, ngn))
		return -1;
	return resolve_proc(nx, i, nx->nthreads - th,
			    nx->nthreads > th ? nx->ranges[nx->threads[th].lo].tid : 0);
}

/*
 * ga_ranges_scan(), the model's notes made already for the files before
 * *noted_files and the first *noted_recs records of that one.  0, -1 out
 * of memory, or 1 where a fold was given up (nx->fold_why says why; the
 * notes made then in *noted_files and *noted_recs).
 */
static int scan_all(struct ga_ranges *nx, struct ga_model *m, const struct ga_ranges_src *src,
		    size_t n, uint32_t *noted_files, uint64_t *noted_recs)
{
	struct gnode_raw *gn = NULL;
	size_t ngn = 0, capgn = 0, i;
	struct scan s;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	s.noted_files = *noted_files;
	s.noted_recs = *noted_recs;
	if (nx->fold && !(nx->fstate = fold_new(n)))
		goto out;
	nx->proc_base = (uint32_t)m->nprocs;
	nx->nprocs = n;
	nx->proc_ranges = calloc(n ? n : 1, 1);
	nx->dense = calloc(n ? n : 1, sizeof(*nx->dense));
	nx->launches = nx->want_launches ? nx->dense : NULL;
	if (!nx->proc_ranges || !nx->dense)
		goto out;
	if (nx->one_pass) {
		struct scan *a = calloc(1, sizeof(*a));

		nx->ahead = a;
		nx->ahead_procs = calloc(n ? n : 1, 1);
		if (!a || !nx->ahead_procs)
			goto out;
		a->nx = nx;
		a->m = m;
	}
	s.nx = nx;
	s.m = m;
	s.gn = &gn;
	s.ngn = &ngn;
	s.capgn = &capgn;
	for (i = 0; i < n; i++) {
		size_t lo = nx->nranges, glo = ngn;

		s.proc = nx->proc_base + (uint32_t)i;
		if (nx->fstate)
			fold_begin(nx, (uint32_t)i);
		/* Spilled: launches, where asked, found as the model reads (ahead_procs 3). */
		s.no_corr = nx->spill && (!nx->want_launches || nx->ahead_procs);
		if (s.no_corr && nx->want_launches)
			nx->ahead_procs[i] = 3;
		if (read_src(&s, &src[i]) ||
		    (nx->fstate && !s.fail && !nx->paced && fold_end(&s))) {
			if (!s.fail)
				goto out;
			/* Every record the file gave was noted. */
			nx->fold_why = s.fail;
			*noted_files = (uint32_t)i;
			*noted_recs = s.nrec;
			rc = 1;
			goto out;
		}
		if (s.fail) {
			nx->fold_why = s.fail;
			*noted_files = (uint32_t)i;
			*noted_recs = s.nrec;
			rc = 1;
			goto out;
		}
		/* The file's ring is not needed again: freed before the index grows. */
		free(s.ring);
		s.ring = NULL;
		s.ringcap = 0;
		/*
		 * A process's ranges are its own file's: indexed, and its
		 * launches resolved (most to 4 bytes), before the next file.
		 * Folded, they were as they came.
		 */
		if (nx->fstate) {
			free_times(&nx->dense[i]);
			free(nx->dense[i].x);
			free(nx->dense[i].gen);
			memset(&nx->dense[i], 0, sizeof(nx->dense[i]));
		} else if (index_file(nx, i, lo, ngn > glo ? gn + glo : NULL, ngn - glo)) {
			goto out;
		}
	}
	nx->indexed = 1;
	nx->folded = nx->fstate != NULL;
	if (!nx->nranges && !nx->want_launches && !nx->paced) {
		/* Nothing to attribute to: keep no per-activity state. */
		free_corrs(nx);
		fold_free(nx->fstate);
		nx->fstate = NULL;
		nx->folded = 0;
		rc = 0;
		goto out;
	}
	if (nx->fstate && !nx->paced) {
		/* What only the scan used. */
		struct fold *f = nx->fstate;

		/*
		 * Codes that the cache cannot hold at once go to the file now,
		 * so that the aggregate pass only reads it.
		 */
		for (i = 0; f->cache && f->next > FOLD_CACHE && i < FOLD_CACHE; i++)
			if (f->cache[i].used && f->cache[i].dirty && fold_write(f, &f->cache[i])) {
				nx->fold_why = "no temporary file for the launches' ranges";
				*noted_files = (uint32_t)n;
				rc = 1;
				goto out;
			}

		fold_scratch_free(f);
	}
	resolve_big(nx);
	rc = 0;
out:
	if (rc < 0 && !nx->err[0])
		snprintf(nx->err, sizeof(nx->err), "out of memory");
	free(s.ring);
	ga_strmap_free(&s.smap);
	free(gn);
	return rc;
}

int ga_ranges_scan(struct ga_ranges *nx, struct ga_model *m, const struct ga_ranges_src *src,
		 size_t n)
{
	uint32_t noted_files = 0;
	uint64_t noted_recs = 0;
	int rc;

	if (nx->nprocs || nx->indexed) {
		snprintf(nx->err, sizeof(nx->err), "NVTX ranges scanned twice");
		return -1;
	}
	/* One trace, its times as it has them, folded and read once: paced (ranges.h pace). */
	nx->pace = nx->pace && n == 1 && !src[0].shift && nx->fold && nx->one_pass;
	rc = scan_all(nx, m, src, n, &noted_files, &noted_recs);
	if (rc == 1) {
		/* Folding cannot give what keeping every range gives: keep them all. */
		struct ga_ranges keep = *nx;

		nx->fold = 0;
		ga_ranges_free(nx);
		nx->site_of = keep.site_of;
		nx->site_ctx = keep.site_ctx;
		nx->want_launches = keep.want_launches;
		nx->launches_ranged = keep.launches_ranged;
		nx->keep_marks = keep.keep_marks;
		nx->keep_details = keep.keep_details;
		nx->spill = keep.spill && !keep.spill_gave_up;
		nx->keep_cpu = keep.keep_cpu;
		nx->cpu_limit = keep.cpu_limit;
		nx->one_pass = keep.one_pass;
		nx->fold_keep = keep.fold_keep;
		nx->fold_why = keep.fold_why;
		rc = scan_all(nx, m, src, n, &noted_files, &noted_recs);
	}
	return rc;
}

/*
 * A record of a trace scanned in the model's read: as scan_rec() of a
 * trace without NVTX (skip_nvtx), which stops only when memory runs out.
 * Its config said no NVTX was traced and no launches are asked for, so
 * scan_rec() reads only the copies' records (API calls, strings, copies)
 * for the model's notes, every one of them noted (the look-ahead reads
 * each record once); the reader hands it no other record (AHEAD_TYPES).
 * The first time of such a trace is its chunk headers' (ranges.h
 * one_pass), taken before the model reads.  All but the copies are done
 * here.
 */
#define AHEAD_TYPES (1ull << GP_REC_MEMCPY | 1ull << GP_REC_API | 1ull << GP_REC_STRING)
static int ahead_rec(void *ctx, const struct gp_rec *rec)
{
	struct scan *s = ctx;
	int rc = 0;

	switch (rec->type) {
	case GP_REC_MEMCPY:
		return scan_rec(ctx, rec);
	case GP_REC_API:
		s->nrec++;
		rc = ga_model_note_api(s->m, s->proc, (const void *)rec);
		break;
	case GP_REC_STRING:
		s->nrec++;
		rc = ga_model_note_string(s->m, s->proc, (const void *)rec);
		break;
	default:
		s->nrec++;
		return 0;
	}
	/* Out of memory, as scan_rec() says it. */
	s->oom |= rc != 0;
	return rc != 0;
}

/*
 * ahead_api() of an id its slot does not hold (launch_slot()'s rc): -1
 * out of memory; else the hash's entry, or the calls' ring.
 */
static __attribute__((noinline)) int ahead_api_apart(struct scan *s, const struct gp_rec_api *r,
						     int rc)
{
	if (rc < 0)
		return -1;
	return api_big(s, r) ? 0 : api_ring(s, r);
}

/*
 * A trace scanned in the model's read, launches asked (ahead_launch_rec()):
 * its correlation ids hold their launch in dense alone (launch_slot(): by
 * id, a ring past GA_RANGES_LWIN, ids far ahead in the hash).  An API call's thread and start go to its id at once,
 * flagged GA_RANGES_XPEND until an activity of the id comes (the earliest
 * call of an id wins, the first of equal starts, as on_api() and the ring
 * keep it); ga_ranges_launch_of() answers only where an activity came.
 * 0, or -1 out of memory.
 */
static int ahead_api(struct scan *s, const struct gp_rec_api *r)
{
	struct ga_ranges_dense *d;
	uint32_t c = r->correlation, j, x, tx;
	int rc;

	if (!c)
		return 0;
	d = &s->nx->dense[s->proc - s->nx->proc_base];
	if ((rc = launch_slot(d, c, &j, s->nrec)))
		return ahead_api_apart(s, r, rc);
	x = d->x[j];
	if (x >= 2 && r->start >= ga_ranges_time_get(d, j))
		return 0;
	/* tx below GA_RANGES_XPEND: 2^31 threads' tids would not fit in memory. */
	if (!(tx = scan_tid_x(s, r->tid)) || tx >= GA_RANGES_XPEND || time_set(d, j, r->start))
		return -1;
	/* None yet: pending; 1 (an activity without a call): the activity's. */
	d->x[j] = x == 0 ? tx | GA_RANGES_XPEND : x == 1 ? tx :
							   tx | (x & GA_RANGES_XPEND);
	return 0;
}

/* An activity of id c in such a trace: its call's launch now counts. 0, or -1 out of memory. */
/*
 * ahead_corr() of an id its slot does not hold (launch_slot()'s rc): -1
 * out of memory; else its launch from the hash, or the calls' ring, kept
 * in the hash.  An id the ring let go (1) whose call is found in neither
 * is counted: its call, if it had one, went with its block.
 */
static __attribute__((noinline)) int ahead_corr_apart(struct scan *s, uint32_t c, int rc)
{
	const struct api_seen *a;

	if (rc < 0)
		return -1;
	if (corr_big(s->nx, s->proc, c))
		return 0;
	a = s->ringcap ? &s->ring[c & (s->ringcap - 1)] : NULL;
	a = a && a->corr == c ? a : NULL;
	s->nx->lwin_lost += !a && rc == 1;
	return corr_big_take(s, c, a);
}

static int ahead_corr(struct scan *s, uint32_t c)
{
	struct ga_ranges_dense *d;
	uint32_t j;
	int rc;

	if (s->no_api)
		return 0;
	d = &s->nx->dense[s->proc - s->nx->proc_base];
	if ((rc = launch_slot(d, c, &j, s->nrec)))
		return ahead_corr_apart(s, c, rc);
	/* 0: no call seen (1, as on_corr() marks it); else the pending call is its launch. */
	d->x[j] = d->x[j] ? d->x[j] & ~GA_RANGES_XPEND : 1;
	return 0;
}

/*
 * The same where launches are asked (API-to-activity flows), as scan_rec()
 * of a trace without NVTX (skip_nvtx) does it, without its checks per
 * record: each API call's launch waits for its activity (on_api()), each
 * activity takes its call's (on_corr()), copies are noted for pairing and
 * API calls and strings for the model's notes; nothing else is looked at
 * (the first time is the chunk headers': ranges.h one_pass).  Whether the
 * trace has API calls is noted from its CONFIG record (none: no launches
 * to keep).
 */
#define AHEAD_LAUNCH_TYPES                                                      \
	(1ull << GP_REC_API | 1ull << GP_REC_KERNEL | 1ull << GP_REC_MEMCPY |   \
	 1ull << GP_REC_MEMSET | 1ull << GP_REC_GRAPH | 1ull << GP_REC_STRING | \
	 1ull << GP_REC_CONFIG)
/*
 * ahead_launch_rec() and ahead_only_launch_rec(): each activity's
 * correlation and API call; note: the model's notes too (API calls,
 * copies, strings), inline so that each reads as a function of its own.
 */
static inline __attribute__((always_inline)) int ahead_launch(struct scan *s,
							      const struct gp_rec *rec, int note)
{
	int rc;

	s->nrec++;
	switch (rec->type) {
	case GP_REC_API:
		rc = (note && ga_model_note_api(s->m, s->proc, (const void *)rec)) ||
		     ahead_api(s, (const void *)rec);
		break;
	case GP_REC_KERNEL:
		rc = ahead_corr(s, ((const struct gp_rec_kernel *)(const void *)rec)->correlation);
		break;
	case GP_REC_MEMCPY:
		rc = (note && ga_model_note_copy(s->m, s->proc, (const void *)rec)) ||
		     ahead_corr(s, ((const struct gp_rec_memcpy *)(const void *)rec)->correlation);
		break;
	case GP_REC_MEMSET:
		rc = ahead_corr(s, ((const struct gp_rec_memset *)(const void *)rec)->correlation);
		break;
	case GP_REC_GRAPH:
		rc = ahead_corr(s, ((const struct gp_rec_graph *)(const void *)rec)->correlation);
		break;
	case GP_REC_STRING:
		rc = note && ga_model_note_string(s->m, s->proc, (const void *)rec);
		break;
	case GP_REC_CONFIG:
		s->no_api = !(((const struct gp_rec_config *)(const void *)rec)->trace &
			      GP_TRACE_API);
		return 0;
	default:
		return 0;
	}
	/* Out of memory, as scan_rec() says it. */
	s->oom |= rc != 0;
	return rc != 0;
}

static int ahead_launch_rec(void *ctx, const struct gp_rec *rec)
{
	return ahead_launch(ctx, rec, 1);
}

/*
 * A trace read whole before the model, its ranges spilled (ahead_procs
 * 3): as ahead_launch_rec(), its records noted already.
 */
#define AHEAD_ONLY_LAUNCH_TYPES                                               \
	(1ull << GP_REC_API | 1ull << GP_REC_KERNEL | 1ull << GP_REC_MEMCPY | \
	 1ull << GP_REC_MEMSET | 1ull << GP_REC_GRAPH | 1ull << GP_REC_CONFIG)
static int ahead_only_launch_rec(void *ctx, const struct gp_rec *rec)
{
	return ahead_launch(ctx, rec, 0);
}

/* Paced: the chunk the scan reads. */
static void pace_chunk(void *ctx, uint32_t seq)
{
	((struct scan *)ctx)->chunk = seq;
}

/*
 * Paced: the model may read chunk seq once no launch of an activity up to
 * it waits for its ranges.  The waiting launches are in the order their
 * activities came (fold_corr(); fold_batch() keeps it): the first is the
 * earliest.  Before the file's first range, it reads them as outside any
 * (where the file has no range, they are): a range that comes around one
 * of them, or any range after one without its call, gives the fold up
 * (fold_range()), and the analysis is built again.
 */
static int pace_ready(void *ctx, uint32_t seq)
{
	struct scan *s = ctx;
	struct fold *f = s->nx->fstate;
	size_t k;

	if (!f->npend || f->pend[0].chunk > seq)
		return 1;
	if (f->has_tid)
		return 0;
	/*
	 * No range yet, so no batch: the first k wait for chunks up to seq.
	 * They leave the waiting list coded outside any range (a file without
	 * ranges holds none waiting), their times kept in the bounds.
	 */
	for (k = 0; k < f->npend && f->pend[k].chunk <= seq; k++) {
		uint64_t t = f->pend[k].t;

		if (t < f->spec_tmin)
			f->spec_tmin = t;
		if (t > f->spec_tmax)
			f->spec_tmax = t;
		if (fold_set(f, f->pend[k].corr, CODE_NONE)) {
			fold_give_up(s, "no temporary file for the launches' ranges");
			return 0;
		}
	}
	memmove(f->pend, f->pend + k, (f->npend - k) * sizeof(*f->pend));
	f->npend -= k;
	f->pend_hint = f->pend_hint > k ? f->pend_hint - k : 0;
	f->spec = 1;
	return 1;
}

/* Paced: the scan read the whole file: every range folded and every launch coded. */
static int pace_end(void *ctx)
{
	struct scan *s = ctx;
	struct ga_ranges *nx = s->nx;
	struct ga_ranges_dense *d = &nx->dense[s->proc - nx->proc_base];

	if (s->fail || s->oom || fold_end(s))
		return -1;
	free_times(d);
	free(d->x);
	free(d->gen);
	memset(d, 0, sizeof(*d));
	/* What only the scan reads, freed before the model reads the chunks still held. */
	free(s->ring);
	s->ring = NULL;
	s->ringcap = 0;
	fold_scratch_free(nx->fstate);
	return 0;
}

/* Nothing of the file scanned so far left a trace in the index (its CONFIG came first). */
static int pace_clean(const struct scan *s)
{
	const struct ga_ranges *nx = s->nx;
	const struct fold *f = nx->fstate;

	return f && !f->npend && !f->nth && !f->top[f->pi] && !f->gnodes &&
	       !nx->nkeys && !nx->nmarks && !s->ringcap && !nx->proc_ranges[f->pi];
}

int ga_ranges_paced(const void *ctx)
{
	return ((const struct ga_ranges *)ctx)->paced;
}

ga_reader_fn ga_ranges_ahead(void *ctx, uint32_t proc, void **actx, uint64_t *types,
			     const struct ga_reader_pace **pace)
{
	struct ga_ranges *nx = ctx;
	struct scan *s;
	int want;

	*pace = NULL;
	if (!nx->ahead || proc < nx->proc_base || proc - nx->proc_base >= nx->nprocs ||
	    !nx->ahead_procs[proc - nx->proc_base])
		return NULL;
	s = nx->ahead;
	s->proc = proc;
	if (nx->ahead_procs[proc - nx->proc_base] == 2) {
		/* The whole scan, as ga_ranges_scan() would have read the file. */
		scan_begin(s, 0);
		/* What the scan read before it stopped at CONFIG was noted. */
		s->noted_files = proc - nx->proc_base;
		s->noted_recs = nx->paced_recs;
		fold_begin(nx, proc - nx->proc_base);
		*actx = s;
		*types = ~0ull;
		nx->pc = (struct ga_reader_pace){
			.chunk = pace_chunk,
			.ready = pace_ready,
			.end = pace_end,
			.lag = GA_MODEL_AHEAD,
			.hold_max = nx->pace_hold ? nx->pace_hold : GA_RANGES_PACE_HOLD,
		};
		*pace = &nx->pc;
		return scan_rec;
	}
	/* Launches asked where a process has ranges: none here (nor later, ahead_procs 1). */
	want = nx->want_launches && (!nx->launches_ranged || nx->proc_ranges[proc - nx->proc_base]);
	if (nx->ahead_procs[proc - nx->proc_base] == 3 && !want)
		return NULL;
	scan_begin(s, 1);
	*actx = s;
	if (nx->ahead_procs[proc - nx->proc_base] == 3) {
		/* Read whole before, its ranges spilled: only the launches now. */
		*types = AHEAD_ONLY_LAUNCH_TYPES;
		return ahead_only_launch_rec;
	}
	/* Launches asked: every activity's correlation and API call too. */
	*types = want ? AHEAD_LAUNCH_TYPES : AHEAD_TYPES;
	return want ? ahead_launch_rec : ahead_rec;
}

int ga_ranges_launch_big(const struct ga_ranges *nx, uint32_t proc, uint32_t corr, uint32_t *tid,
			 uint64_t *t)
{
	const struct ga_ranges_corr *c = corr_big(nx, proc, corr);

	if (!c || c->t == UINT64_MAX)
		return 0;
	*tid = c->tid;
	*t = c->t;
	return 1;
}

void ga_ranges_spilled_index(struct ga_ranges *nx, const struct ga_ranges_range *r, uint32_t i)
{
	uint32_t *v = nx->spill_gid.n ? ga_map_find(&nx->spill_gid, r->proc, r->id) : NULL;

	/* Of a range id given twice in a process, the last in range order (as index_ranges()). */
	if (v)
		*v = i;
}

void ga_ranges_spilled_indexed(struct ga_ranges *nx)
{
	for (size_t i = 0; i < nx->nspill_gn; i++) {
		const struct ga_ranges_gnode *g = &nx->spill_gn[i];
		const uint32_t *r = ga_map_find(&nx->spill_gid, g->proc, g->nvtx);
		uint32_t *v = ga_map_find(&nx->gnode_map, g->proc, g->node);

		/* A node recorded twice: its last record (as index_ranges()). */
		if (v && r && *r != UINT32_MAX)
			*v = *r + 1;
		else if (v)
			*v = UINT32_MAX;
	}
}

/*
 * ga_ranges_attribute() of spilled ranges, through the index an export
 * serves (ix): a graph node's, its capture's range, its start for the
 * time; else the innermost range at the launch, which the model's read
 * found (launches asked), as resolve_proc() finds it among ranges kept.
 */
static struct ga_ranges_attr spilled_attribute(const struct ga_ranges *nx, const struct ga_act *a)
{
	struct ga_ranges_attr at = { GA_RANGES_UNATTR, 0, GA_RANGES_NONE, GA_RANGES_NONE,
				     GA_RANGES_NONE, 0, 0 };
	const uint32_t *v;
	uint64_t e;
	uint32_t p, k;

	if (!nx->ix.innermost)
		return at;
	if (a->graph_node && nx->gnode_map.n &&
	    (v = ga_map_find(&nx->gnode_map, a->proc, a->graph_node))) {
		at.inner = GA_RANGES_NONE;
		if (*v != UINT32_MAX && !nx->ix.range(nx->ix.ctx, *v - 1, &at.t, &e, &p, &k))
			at.inner = *v - 1;
		return at;
	}
	if (!ga_ranges_launch(nx, a, &at.tid, &at.t))
		return at;
	at.inner = nx->ix.innermost(nx->ix.ctx, a->proc, at.tid, at.t);
	return at;
}

uint32_t ga_ranges_key_of(const struct ga_ranges *nx, uint32_t i)
{
	uint64_t s, e;
	uint32_t p, k;

	if (!nx->spill)
		return nx->ranges[i].key;
	return nx->ix.range && !nx->ix.range(nx->ix.ctx, i, &s, &e, &p, &k) ? k : 0;
}

struct ga_ranges_attr ga_ranges_attribute(const struct ga_ranges *nx, const struct ga_act *a)
{
	struct ga_ranges_attr at = { GA_RANGES_NONE, 0, GA_RANGES_NONE, GA_RANGES_NONE,
				     GA_RANGES_NONE, 0, 0 };
	uint32_t pi = a->proc - nx->proc_base, corr = a->correlation, code;
	const struct ga_ranges_dense *d;
	const uint32_t *v;

	if (a->proc < nx->proc_base || pi >= nx->nprocs || !nx->proc_ranges[pi])
		return at;
	if (nx->spill)
		return spilled_attribute(nx, a);
	if (a->graph_node && nx->gnode_map.n &&
	    (v = ga_map_find(&nx->gnode_map, a->proc, a->graph_node))) {
		/* Where the node was captured or added, not where the graph was launched. */
		if (nx->folded) {
			const struct fold *f = nx->fstate;

			/* Every range graph nodes name was placed by the file's end (fold_end()). */
			if (*v < f->ngw && (f->gw[*v].code & CODE_WALK) &&
			    (f->gw[*v].code & ~CODE_WALK) < f->nwalks) {
				at.inner = GA_RANGES_FOLDED;
				at.node = f->walks[f->gw[*v].code & ~CODE_WALK].node;
				at.walk = (f->gw[*v].code & ~CODE_WALK) + 1;
			} else if (*v < f->ngw && f->gw[*v].code >= CODE_RANGE) {
				at.inner = GA_RANGES_FOLDED;
				at.node = f->gw[*v].code - CODE_RANGE;
			}
		} else if (*v != UINT32_MAX) {
			at.inner = *v - 1;
			at.t = nx->ranges[at.inner].start;
		}
		return at;
	}
	at.inner = GA_RANGES_UNATTR;
	if (nx->folded) {
		/* Folded (ranges.h: fold): the innermost range's tree node. */
		code = fold_code(nx->fstate, pi, corr);
		/* Every launch was coded at its file's end (fold_end()): a mark left is no range. */
		if (code & CODE_PEND)
			return at;
		/* Launched while other threads' ranges were open: their nodes apart. */
		if (code & CODE_PAIR) {
			const struct fold *f = nx->fstate;

			at.others = code;
			while (code & CODE_PAIR) {
				if ((code & ~CODE_PAIR) >= f->npairs)
					return at;
				code = f->pairs[code & ~CODE_PAIR].own;
			}
		}
		if (code & CODE_WALK) {
			const struct fold *f = nx->fstate;

			if ((code & ~CODE_WALK) < f->nwalks) {
				at.inner = GA_RANGES_FOLDED;
				at.node = f->walks[code & ~CODE_WALK].node;
				at.walk = (code & ~CODE_WALK) + 1;
			}
		} else if (code == CODE_NONE) {
			at.inner = GA_RANGES_NONE;
		} else if (code >= CODE_RANGE) {
			at.inner = GA_RANGES_FOLDED;
			at.node = code - CODE_RANGE;
		}
		at.launched = at.inner != GA_RANGES_UNATTR;
		return at;
	}
	if (!nx->dense)
		return at;
	d = &nx->dense[pi];
	if (corr >= d->n || !d->x || !d->x[corr]) {
		/* Large ids, and ids that went to the hash (dense_takes()). */
		const struct ga_ranges_corr *c = nx->ncorrs ? corr_big(nx, a->proc, corr) : NULL;

		if (!c || c->t == UINT64_MAX)
			return at;
		at.inner = c->code >= CODE_RANGE ? c->code - CODE_RANGE : GA_RANGES_NONE;
		at.t = c->t;
		at.tid = c->tid;
		return at;
	}
	if (d->t) {
		if (d->x[corr] < 2)
			return at;
		code = d->code[corr];
		at.inner = code >= CODE_RANGE ? code - CODE_RANGE : GA_RANGES_NONE;
		at.t = ga_ranges_time_get(d, corr);
		at.tid = nx->tids[d->x[corr] - 2];
		return at;
	}
	/* Compacted (resolve_proc()): the range's start stands for the time. */
	code = d->x[corr];
	if (code >= CODE_RANGE) {
		at.inner = code - CODE_RANGE;
		at.t = nx->ranges[at.inner].start;
	} else if (code == CODE_NONE) {
		at.inner = GA_RANGES_NONE;
	}
	return at;
}

int ga_ranges_walk(struct ga_ranges *nx, const struct ga_ranges_attr *at,
		 int (*fn)(void *ctx, uint32_t range), void *ctx)
{
	uint32_t c;
	int rc;

	/* Folded ranges are gone: nothing walks them (the filters keep them all). */
	if (at->inner >= GA_RANGES_FOLDED)
		return 0;
	if (nx->spill) {
		/* Spilled: the chain from the index the export serves (ix). */
		uint64_t s, e;
		uint32_t p, k;

		for (c = at->inner; c != GA_RANGES_NONE && nx->ix.range; c = p) {
			if (nx->ix.range(nx->ix.ctx, c, &s, &e, &p, &k))
				return 0;
			if ((c == at->inner || e > at->t) && (rc = fn(ctx, c)))
				return rc;
			/* A parent comes before its child (tracks.c): else no chain. */
			if (p >= c && p != GA_RANGES_NONE)
				return 0;
		}
		return 0;
	}
	/* The innermost range counts even when empty (graph nodes: t = its start). */
	for (c = at->inner; c != GA_RANGES_NONE; c = nx->ranges[c].parent)
		if ((c == at->inner || nx->ranges[c].end > at->t) && (rc = fn(ctx, c)))
			return rc;
	return 0;
}

struct acct {
	struct ga_ranges *nx;
	uint64_t dur;
	int kernel;
};

static int acct_key(void *ctx, uint32_t range)
{
	struct acct *a = ctx;
	struct ga_ranges_key *k = &a->nx->keys[a->nx->ranges[range].key];

	if (k->stamp == a->nx->serial)
		return 0;
	k->stamp = a->nx->serial;
	k->gpu_ns += a->dur;
	k->acts++;
	k->kernels += (uint64_t)a->kernel;
	return 0;
}

/* A kernel of dur into key k's and node x's other threads' kernels, each once (nx->serial). */
static void other_add(const struct ga_ranges *nx, struct ga_ranges_key *k,
		      struct ga_ranges_node *x, uint64_t dur)
{
	if (k->other_stamp != nx->serial) {
		k->other_stamp = nx->serial;
		k->other_ns += dur;
		k->other_kernels++;
	}
	if (x->other_stamp != nx->serial) {
		x->other_stamp = nx->serial;
		x->other_ns += dur;
		x->other_kernels++;
	}
}

/* Counted for process pi while its fold goes on (struct fother).  0, or -1 out of memory. */
static int other_note(struct fold *f, uint32_t pi, uint32_t what, uint64_t ns, uint64_t kernels)
{
	uint32_t *v;
	int r = ga_map_insert(&f->other_map, pi, what, &v);

	if (r < 0)
		return -1;
	if (r) {
		if (ga_util_grow(&f->others, &f->capothers, f->nothers + 1, sizeof(*f->others))) {
			ga_map_remove(&f->other_map, pi, what);
			return -1;
		}
		f->others[f->nothers] = (struct fother){ pi, what, 0, 0 };
		*v = (uint32_t)++f->nothers;
	}
	f->others[*v - 1].ns += ns;
	f->others[*v - 1].kernels += kernels;
	return 0;
}

/*
 * A kernel into tree node x and its key (other_add()); where note is a
 * process's (not UINT32_MAX), what that adds noted for it.  0, or -1 out
 * of memory.
 */
static int other_add_noted(struct ga_ranges *nx, uint32_t x, uint64_t dur, uint32_t note)
{
	struct ga_ranges_key *k = &nx->keys[nx->nodes[x].id];
	struct ga_ranges_node *nd = &nx->nodes[x];

	if (note != UINT32_MAX &&
	    ((k->other_stamp != nx->serial && other_note(nx->fstate, note, nx->nodes[x].id, dur, 1)) ||
	     (nd->other_stamp != nx->serial && other_note(nx->fstate, note, x | FOTHER_NODE, dur, 1))))
		return -1;
	other_add(nx, k, nd, dur);
	return 0;
}

/*
 * Process pi's ranges are on more than GA_RANGES_OTHER_THREADS threads
 * (many), or its fold ended without: what other_fold() counted of it
 * while that was not known is taken back (many) or stays.
 */
static void other_decide(struct ga_ranges *nx, uint32_t pi, int many)
{
	struct fold *f = nx->fstate;
	size_t i, j;
	uint32_t *v;

	if (pi >= f->nprocs || f->decided[pi] != FP_OPEN)
		return;
	f->decided[pi] = many ? FP_MANY : FP_FEW;
	if (many) {
		nx->other_kernels -= f->counted[2 * pi];
		nx->other_skipped += f->counted[2 * pi + 1];
	}
	for (i = j = 0; i < f->nothers; i++) {
		const struct fother *o = &f->others[i];

		if (o->pi != pi) {
			f->others[j++] = *o;
		} else if (!many) {
			continue;
		} else if (o->what & FOTHER_NODE) {
			nx->nodes[o->what & ~FOTHER_NODE].other_ns -= o->ns;
			nx->nodes[o->what & ~FOTHER_NODE].other_kernels -= o->kernels;
		} else {
			nx->keys[o->what].other_ns -= o->ns;
			nx->keys[o->what].other_kernels -= o->kernels;
		}
	}
	if (j == f->nothers)
		return;
	f->nothers = j;
	/* Another process's left (none where one file's fold runs at a time): found again. */
	ga_map_free(&f->other_map);
	for (i = 0; i < j; i++)
		if (ga_map_insert(&f->other_map, f->others[i].pi, f->others[i].what, &v) >= 0)
			*v = (uint32_t)i + 1;
}

/*
 * A kernel launched at at->t by thread at->tid, into the keys and nodes of
 * the ranges open then on the process's other threads (ranges.h), each
 * once (stamped with nx->serial).
 */
static void other_threads(struct ga_ranges *nx, const struct ga_act *a,
			  const struct ga_ranges_attr *at, uint64_t dur)
{
	uint32_t lo = 0, hi = (uint32_t)nx->nthreads, th, end;
	int any = 0;

	if (at->inner == GA_RANGES_UNATTR || at->tid == GA_RANGES_NONE)
		return;
	/* A process's threads are contiguous, in the order of its ranges. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (nx->ranges[nx->threads[mid].lo].proc < a->proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < nx->nthreads && nx->ranges[nx->threads[end].lo].proc == a->proc; end++)
		;
	if (end - lo > GA_RANGES_OTHER_THREADS) {
		nx->other_skipped++;
		return;
	}
	for (th = lo; th < end; th++) {
		uint32_t c;

		if (nx->ranges[nx->threads[th].lo].tid == at->tid)
			continue;
		for (c = innermost_in(nx, th, at->t); c != GA_RANGES_NONE; c = nx->ranges[c].parent) {
			struct ga_ranges_key *k = &nx->keys[nx->ranges[c].key];
			struct ga_ranges_node *x = &nx->nodes[nx->ranges[c].node];

			if (nx->ranges[c].end <= at->t)
				continue;
			any = 1;
			other_add(nx, k, x, dur);
		}
	}
	nx->other_kernels += (uint64_t)any;
}

/*
 * A folded kernel launched while ranges of other threads were open (at
 * others, a chain of CODE_PAIR pairs, each such thread's innermost range's
 * tree node): into the keys and nodes of each node's chain, as
 * other_threads() counts the ranges open then, each once; noted for
 * process note unless UINT32_MAX (other_fold()).  0, or -1 out of memory.
 */
static int other_folded(struct ga_ranges *nx, uint32_t others, uint64_t dur, uint32_t note)
{
	struct fold *f = nx->fstate;
	uint32_t code, x;

	for (code = others; (code & CODE_PAIR) && (code & ~CODE_PAIR) < f->npairs;
	     code = f->pairs[code & ~CODE_PAIR].own) {
		uint32_t on = f->pairs[code & ~CODE_PAIR].onode;

		/* The ranges open then, where they were not one's name path (fold_own()). */
		if ((on & CODE_WALK) && (on & ~CODE_WALK) < f->nwalks) {
			const struct fwalk *w = &f->walks[on & ~CODE_WALK];

			for (uint32_t i = 0; i < w->nk; i++)
				if (other_add_noted(nx, f->wkeys[w->k0 + i], dur, note))
					return -1;
			continue;
		}
		for (x = on; x != GA_RANGES_NONE && nx->nodes[x].kind == GA_RANGES_N_RANGE;
		     x = nx->nodes[x].parent)
			if (other_add_noted(nx, x, dur, note))
				return -1;
	}
	nx->other_kernels++;
	return 0;
}

/*
 * A folded kernel whose launch is known, of process proc: into the ranges
 * open on other threads then (others: other_folded()), unless the
 * process's ranges are on too many threads (other_skipped); while that is
 * not known, also into the fold's others, to be taken back.  0, or -1 out
 * of memory.
 */
static int other_fold(struct ga_ranges *nx, uint32_t proc, uint32_t others, uint64_t dur)
{
	struct fold *f = nx->fstate;
	uint32_t pi = proc - nx->proc_base;
	int open;

	if (pi >= f->nprocs || f->decided[pi] == FP_MANY) {
		nx->other_skipped++;
		return 0;
	}
	open = f->decided[pi] == FP_OPEN;
	if (open) {
		f->counted[2 * pi] += others != GA_RANGES_NONE;
		f->counted[2 * pi + 1]++;
	}
	if (others == GA_RANGES_NONE)
		return 0;
	return other_folded(nx, others, dur, open ? pi : UINT32_MAX);
}

/* Room in self for node (the nodes made so far, zeroed): 0, or -1 out of memory. */
static int self_grow(struct ga_ranges *nx, uint32_t node)
{
	size_t n = nx->nnodes > (size_t)node ? nx->nnodes : (size_t)node + 1;
	struct ga_ranges_self *p = realloc(nx->self, n * sizeof(*p));

	if (!p)
		return -1;
	memset(p + nx->nself, 0, (n - nx->nself) * sizeof(*p));
	nx->self = p;
	nx->nself = n;
	return 0;
}

uint32_t ga_ranges_account(struct ga_ranges *nx, const struct ga_act *a,
			 const struct ga_ranges_attr *at)
{
	struct acct ac;
	uint32_t node, kind, id, x;

	ac.nx = nx;
	ac.dur = a->end - a->start;
	ac.kernel = a->kind == GA_ACT_KERNEL;
	nx->serial++;
	nx->acts++;
	/* Spilled: no table or tree of them to count into (only exports spill them). */
	if (nx->spill)
		return 0;
	if (ac.kernel && at->launched && nx->fstate) {
		struct fold *f = nx->fstate;
		uint32_t pi = a->proc - nx->proc_base;

		/* Launched where no other thread's range was open: counted only. */
		if (at->others == GA_RANGES_NONE && pi < f->nprocs && f->decided[pi] == FP_FEW)
			;
		else if (at->others == GA_RANGES_NONE && pi < f->nprocs && f->decided[pi] == FP_OPEN)
			f->counted[2 * pi + 1]++;
		else if (other_fold(nx, a->proc, at->others, ac.dur))
			return GA_STR_NOMEM;
	} else if (ac.kernel && at->others != GA_RANGES_NONE) {
		if (other_folded(nx, at->others, ac.dur, UINT32_MAX))
			return GA_STR_NOMEM;
	} else if (ac.kernel) {
		other_threads(nx, a, at, ac.dur);
	}
	if (at->inner == GA_RANGES_FOLDED && at->walk) {
		/* The ranges open at its launch, as ga_ranges_walk() counts them. */
		const struct fold *f = nx->fstate;
		const struct fwalk *w = &f->walks[at->walk - 1];

		nx->in_range++;
		for (uint32_t i = 0; i < w->nk; i++) {
			struct ga_ranges_key *k = &nx->keys[f->wkeys[w->k0 + i]];

			k->stamp = nx->serial;
			k->gpu_ns += ac.dur;
			k->acts++;
			k->kernels += (uint64_t)ac.kernel;
		}
		node = at->node;
	} else if (at->inner == GA_RANGES_FOLDED) {
		/* Ranges that nest: summed by name path, as below. */
		nx->in_range++;
		/* A paced scan places ranges in the tree as the model reads (ranges.h pace). */
		if (at->node >= nx->nself && self_grow(nx, at->node))
			return GA_STR_NOMEM;
		nx->self[at->node].gpu_ns += ac.dur;
		nx->self[at->node].acts++;
		nx->self[at->node].kernels += (uint64_t)ac.kernel;
		node = at->node;
	} else if (at->inner < GA_RANGES_UNATTR) {
		nx->in_range++;
		/*
		 * Launched while every range of the chain is open: counted at
		 * finish, by name path (the range nodes, all made by index_ranges()).
		 */
		if (nx->nested && nx->nested[at->inner] && at->t < nx->ranges[at->inner].end &&
		    (nx->self || (nx->self = calloc(nx->nself = nx->nnodes ? nx->nnodes : 1,
						    sizeof(*nx->self)))) &&
		    nx->ranges[at->inner].node < nx->nself) {
			struct ga_ranges_self *o = &nx->self[nx->ranges[at->inner].node];

			o->gpu_ns += ac.dur;
			o->acts++;
			o->kernels += (uint64_t)ac.kernel;
		} else {
			ga_ranges_walk(nx, at, acct_key, &ac);
		}
		node = nx->ranges[at->inner].node;
	} else {
		int un = at->inner == GA_RANGES_UNATTR;

		if (un)
			nx->unattributed++;
		else
			nx->no_range++;
		node = node_get(nx, GA_RANGES_NONE, un ? GA_RANGES_N_UNATTR : GA_RANGES_N_NORANGE, 0);
		if (node == GA_RANGES_NONE)
			return GA_STR_NOMEM;
	}
	switch (a->kind) {
	case GA_ACT_KERNEL:
		kind = GA_RANGES_N_KERNEL;
		id = a->name;
		break;
	case GA_ACT_MEMCPY:
		kind = GA_RANGES_N_MEMCPY;
		id = a->copy_kind;
		break;
	case GA_ACT_MEMSET:
		kind = GA_RANGES_N_MEMSET;
		id = 0;
		break;
	default:
		kind = GA_RANGES_N_GRAPH;
		id = a->graph_id;
		break;
	}
	node = node_get(nx, node, kind, id);
	if (node == GA_RANGES_NONE)
		return GA_STR_NOMEM;
	/* The node's own; ga_ranges_finish() adds each node to its parents. */
	nx->nodes[node].instances++;
	nx->nodes[node].gpu_ns += ac.dur;
	nx->nodes[node].acts++;
	nx->nodes[node].kernels += (uint64_t)ac.kernel;
	if (ac.kernel && nx->site_of) {
		uint32_t site = nx->site_of(nx->site_ctx, a);

		if (site == GA_STR_NOMEM)
			return GA_STR_NOMEM;
		if (site) {
			x = node_get(nx, node, GA_RANGES_N_SITE, site);
			if (x == GA_RANGES_NONE)
				return GA_STR_NOMEM;
			nx->nodes[x].instances++;
			nx->nodes[x].gpu_ns += ac.dur;
			nx->nodes[x].acts++;
			nx->nodes[x].kernels++;
		}
	}
	if (at->inner == GA_RANGES_FOLDED)
		return nx->keys[nx->nodes[at->node].id].label;
	if (at->inner < GA_RANGES_UNATTR)
		return nx->keys[nx->ranges[at->inner].key].label;
	return 0;
}

/* ---- finishing and printing ---- */

struct node_cmp {
	const struct ga_ranges *nx;
	struct ga_model *m;
};

static int cmp_node(const void *pa, const void *pb, void *ctx)
{
	const struct node_cmp *c = ctx;
	const struct ga_ranges_node *a = &c->nx->nodes[*(const uint32_t *)pa];
	const struct ga_ranges_node *b = &c->nx->nodes[*(const uint32_t *)pb];

	/* The pseudo roots go last, "(no range)" first of them. */
	if (ga_ranges_pseudo_root(a) != ga_ranges_pseudo_root(b))
		return ga_ranges_pseudo_root(a) ? 1 : -1;
	if (a->gpu_ns != b->gpu_ns && !ga_ranges_pseudo_root(a))
		return a->gpu_ns > b->gpu_ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == GA_RANGES_N_RANGE)
		return strcmp(ga_model_str(c->m, c->nx->keys[a->id].label),
			      ga_model_str(c->m, c->nx->keys[b->id].label));
	if (a->kind == GA_RANGES_N_KERNEL)
		return strcmp(ga_strtab_short(&c->m->strs, a->id),
			      ga_strtab_short(&c->m->strs, b->id));
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Count n activities of gpu_ns into the leaf (kind, id) under root. */
static int leaf_add(struct ga_ranges *nx, uint32_t root, uint32_t kind, uint32_t id, uint64_t n,
		    uint64_t gpu_ns)
{
	uint32_t leaf = node_get(nx, root, kind, id);
	uint64_t kernels = kind == GA_RANGES_N_KERNEL ? n : 0;
	struct ga_ranges_node *x;

	if (leaf == GA_RANGES_NONE)
		return -1;
	x = &nx->nodes[leaf];
	x->instances += n;
	x->gpu_ns += gpu_ns;
	x->acts += n;
	x->kernels += kernels;
	nx->acts += n;
	nx->no_range += n;
	return 0;
}

/*
 * The "(no range)" tree from the model's totals, the same nodes and counts
 * as ga_ranges_account() per activity: the leaves are kernel names (made in
 * the order the kernels first came, as kstats are), copy kinds, memset and
 * graph ids, the durations the ones the model summed.
 */
static int account_model(struct ga_ranges *nx, const struct ga_model *m)
{
	uint32_t root;
	size_t i;
	int rc = 0;

	for (i = 0; i < GA_ACT_KIND_COUNT && !m->counts[i]; i++)
		;
	if (i == GA_ACT_KIND_COUNT)
		return 0;
	root = node_get(nx, GA_RANGES_NONE, GA_RANGES_N_NORANGE, 0);
	if (root == GA_RANGES_NONE)
		return -1;
	for (i = 0; i < m->nkstats && !rc; i++)
		if (m->kstats[i].count)
			rc = leaf_add(nx, root, GA_RANGES_N_KERNEL, m->kstats[i].name,
				      m->kstats[i].count, m->kstats[i].total);
	for (i = 0; i < GA_COPY_KIND_MAX && !rc; i++)
		if (m->copy[i].count)
			rc = leaf_add(nx, root, GA_RANGES_N_MEMCPY, (uint32_t)i, m->copy[i].count,
				      m->copy[i].total);
	if (!rc && m->memset_st.count)
		rc = leaf_add(nx, root, GA_RANGES_N_MEMSET, 0, m->memset_st.count,
			      m->memset_st.total);
	for (i = 0; i < m->ngraphs && !rc; i++)
		if (m->graphs[i].launches)
			rc = leaf_add(nx, root, GA_RANGES_N_GRAPH, m->graphs[i].graph_id,
				      m->graphs[i].launches, m->graphs[i].total);
	return rc;
}

/*
 * The activities summed per range node (ga_ranges_account's nesting case)
 * into the keys: each node's subtree, to its key, unless a node above it
 * has the same key (a name nested in itself counts once), found by one
 * walk of the range nodes' forest; the keys of a node's path are those of
 * its ranges' chains, so each range's activities reach each key of its
 * chain once, as a walk of the chain would have.  0, or -1 out of memory.
 */
static int keys_from_self(struct ga_ranges *nx)
{
	uint32_t *child, *next, *active, roots = GA_RANGES_NONE, x;
	size_t n = nx->nself, i;

	if (!nx->self)
		return 0;
	child = malloc(n * sizeof(*child));
	next = malloc(n * sizeof(*next));
	active = calloc(nx->nkeys ? nx->nkeys : 1, sizeof(*active));
	if (!child || !next || !active) {
		free(child);
		free(next);
		free(active);
		return -1;
	}
	/*
	 * A node's parent comes before it, and a range node's parent is one
	 * (or none): sum the subtrees from the end.
	 */
	for (i = n; i-- > 0;) {
		const struct ga_ranges_self *o = &nx->self[i];
		uint32_t p = nx->nodes[i].parent;

		child[i] = GA_RANGES_NONE;
		if (nx->nodes[i].kind != GA_RANGES_N_RANGE)
			continue;
		if (p == GA_RANGES_NONE) {
			next[i] = roots;
			roots = (uint32_t)i;
			continue;
		}
		nx->self[p].gpu_ns += o->gpu_ns;
		nx->self[p].acts += o->acts;
		nx->self[p].kernels += o->kernels;
	}
	for (i = n; i-- > 0;) {
		uint32_t p = nx->nodes[i].parent;

		if (nx->nodes[i].kind == GA_RANGES_N_RANGE && p != GA_RANGES_NONE) {
			next[i] = child[p];
			child[p] = (uint32_t)i;
		}
	}
	/* Depth first; active[key]: nodes of that key on the path. */
	for (x = roots; x != GA_RANGES_NONE;) {
		const struct ga_ranges_self *o = &nx->self[x];
		struct ga_ranges_key *k = &nx->keys[nx->nodes[x].id];

		if (!active[nx->nodes[x].id]++) {
			k->gpu_ns += o->gpu_ns;
			k->acts += o->acts;
			k->kernels += o->kernels;
		}
		if (child[x] != GA_RANGES_NONE) {
			x = child[x];
			continue;
		}
		while (x != GA_RANGES_NONE) {
			active[nx->nodes[x].id]--;
			if (next[x] != GA_RANGES_NONE) {
				x = next[x];
				break;
			}
			x = nx->nodes[x].parent;
		}
	}
	free(child);
	free(next);
	free(active);
	free(nx->self);
	nx->self = NULL;
	nx->nself = 0;
	return 0;
}

int ga_ranges_finish(struct ga_ranges *nx, const struct ga_model *m, int hide_empty)
{
	size_t i;

	/* A code that could not be read back leaves activities unplaced: no result. */
	if (nx->folded && ((struct fold *)nx->fstate)->io_err)
		return -1;

	if (nx->from_model) {
		nx->from_model = 0;
		if (account_model(nx, m))
			return -1;
	}
	if (keys_from_self(nx))
		return -1;
	/*
	 * Each node holds its own activities: add it to its parent, which was
	 * made before it, from the last node back.  A launch site's node
	 * repeats its kernel's activities, so it adds nothing.
	 */
	for (i = nx->nnodes; i-- > 0;) {
		const struct ga_ranges_node *n = &nx->nodes[i];

		if (n->parent == GA_RANGES_NONE || n->kind == GA_RANGES_N_SITE)
			continue;
		nx->nodes[n->parent].gpu_ns += n->gpu_ns;
		nx->nodes[n->parent].acts += n->acts;
		nx->nodes[n->parent].kernels += n->kernels;
	}
	return ga_ranges_link(nx, m, hide_empty);
}

int ga_ranges_link(struct ga_ranges *nx, const struct ga_model *m, int hide_empty)
{
	struct node_cmp c = { nx, (struct ga_model *)m };
	uint32_t *ord;
	size_t i;

	ord = malloc((nx->nnodes ? nx->nnodes : 1) * sizeof(*ord));
	if (!ord)
		return -1;
	for (i = 0; i < nx->nnodes; i++) {
		ord[i] = (uint32_t)i;
		nx->nodes[i].child = nx->nodes[i].next = GA_RANGES_NONE;
	}
	qsort_r(ord, nx->nnodes, sizeof(*ord), cmp_node, &c);
	/* Prepending in reverse order leaves each list in order. */
	nx->root = GA_RANGES_NONE;
	for (i = nx->nnodes; i-- > 0;) {
		struct ga_ranges_node *n = &nx->nodes[ord[i]];
		uint32_t *head = n->parent == GA_RANGES_NONE ? &nx->root : &nx->nodes[n->parent].child;

		if (hide_empty && !n->acts)
			continue;
		n->next = *head;
		*head = ord[i];
	}
	free(ord);
	return 0;
}

static int cmp_key(const void *pa, const void *pb, void *ctx)
{
	const struct node_cmp *c = ctx;
	const struct ga_ranges_key *a = &c->nx->keys[*(const uint32_t *)pa];
	const struct ga_ranges_key *b = &c->nx->keys[*(const uint32_t *)pb];

	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns > b->gpu_ns ? -1 : 1;
	if (a->cpu_total != b->cpu_total)
		return a->cpu_total > b->cpu_total ? -1 : 1;
	return strcmp(ga_model_str(c->m, a->label), ga_model_str(c->m, b->label));
}

uint32_t *ga_ranges_order_keys(const struct ga_ranges *nx, const struct ga_model *m)
{
	struct node_cmp c = { nx, (struct ga_model *)m };
	uint32_t *ord = malloc((nx->nkeys ? nx->nkeys : 1) * sizeof(*ord));
	size_t i;

	if (!ord)
		return NULL;
	for (i = 0; i < nx->nkeys; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, nx->nkeys, sizeof(*ord), cmp_key, &c);
	return ord;
}
