/*
 * Summaries (see summary.h): taken from a finished analysis, encoded,
 * read back, merged, and applied to an analysis for the views.  A summary
 * in memory names strings by its own string table; every entity carries an
 * origin key (the path of the first trace of its part, and its index
 * there) that orders it after any merge, so that merging is associative
 * and commutative.  Runs offline only.  Threads: traces are summarized on
 * a pool (summarize_traces()), each worker with analyses and summaries of
 * its own; the canonical sorts' statics are used by one thread at a time
 * (encoding and applying happen after the pool has joined).
 */
#include "model/summary.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <gpuprof/crc32c.h>

#include "base/progress.h"
#include "base/sort.h"
#include "model/demangle.h"
#include "model/load.h"
#include "model/quantile.h"
#include "model/symbolize.h"
#include "read/reader.h"

typedef unsigned __int128 u128;

/* Where an entity came from: origin (string id of a path) and index there. */
struct okey {
	uint32_t origin, idx;
};

/* Durations of one part, in arrival order. */
struct sseg {
	uint32_t origin;
	uint64_t *v;
	size_t n;
};

/* The durations of a table row: exact segments, or a histogram (model/quantile.h). */
struct sq {
	uint64_t n, sum, min, max;
	u128 sumsq;
	int sketch;
	struct sseg *seg;
	size_t nseg;
	struct ga_quant h;         /* the histogram when sketch */
};

struct sfile {
	struct okey k;
	uint32_t path, reason;
	uint64_t damaged, finished, bytes_unread, file_size, chunks, last_flag, records;
	uint64_t unknown, malformed, chunk_lost, stop_offset;
};

#define PROC_U64 38
/*
 * Processes: u[] as encoded (summary.c from_analysis), times on the trace's
 * own clock; u[35..37]: it has a CLOCK_SYNC, realtime - trace clock of the
 * first, its clock is not CLOCK_REALTIME (model/align.h).
 */
struct sproc {
	struct okey k;
	uint32_t file, host, exe, cmdline;
	uint32_t ahost;            /* host name as clock alignment compares them */
	uint64_t u[PROC_U64];
};

struct swin {
	uint32_t proc, name;
	uint64_t start, end, kind;
};

/*
 * The numbers of processes and devices that the model keeps in 32 bits
 * (pid, rank, configuration and flight-recorder fields; device id, compute
 * capability, sizes): a summary with more there is refused, not cut to
 * another value (pid 2^32 + 432 would print as 432).
 */
#define PROC_U32 (0x3full | 0x7full << 12 | 0xfull << 25 | 1ull << 33)
#define DEV_U32 (0xffull | 0xfull << 10)

#define DEV_U64 17
struct sdev {
	struct okey k;
	uint32_t proc, host, name;
	uint8_t uuid[16];
	uint64_t u[DEV_U64];
};

/*
 * A device as one process used it, with its busy intervals (trace clock):
 * at most GA_SUM_BUSY_KEEP of them; past it, none (dropped set), and its
 * device's busy time, first start and last end in its part instead.
 */
struct sdevrow {
	uint32_t proc, dev;
	uint64_t id, count, total;
	struct ga_iv *iv;
	size_t niv;
	int dropped;
	uint64_t busy, first, last;
};

struct slabel {
	uint32_t str;
	uint64_t count, total;
};

struct skstat {
	uint32_t name, label;
	uint64_t in_graph;
	struct sq q;
};

struct smemop {
	uint64_t kind, src, dst, bytes;
	struct sq q;
};

struct smemstat {
	uint64_t count, bytes, total;
	uint32_t label;
};

struct sgraph {
	uint32_t proc, label;
	uint64_t graph_id, launches, total, kernels, nodes;
};

struct sastat {
	uint32_t name;
	uint64_t errors, threads;
	struct sq q;
};

/* A process's step: the label of its step range and the rank's work in it. */
struct sstep {
	uint32_t label;
	uint64_t work;
};

/*
 * The per-rank table's figures of one process (model/ranks.h): u[] is
 * devices, busy, compute, NCCL, NCCL not overlapped, kernels, NCCL
 * kernels; its steps in start order.  Only processes with a figure or a
 * step have one.
 */
#define RANK_U64 7
struct srank {
	uint32_t proc;
	uint64_t u[RANK_U64];
	struct sstep *st;
	size_t nst;
};

/*
 * NVTX (model/ranges.h): a range name (domain and name), its instances'
 * CPU times as durations and u[] = unterminated instances, GPU time,
 * activities, kernels, other threads' kernels' time and count; a mark
 * name and its count; a node of the range tree, its counts its whole
 * subtree's (u[] = instances, GPU time, activities, kernels, other
 * threads' kernels' time and count), parents before children.
 */
#define RKEY_U64 6
struct srkey {
	uint32_t name, domain, label;
	uint64_t u[RKEY_U64];
	struct sq q;
};

struct smark {
	uint32_t name, domain, label;
	uint64_t count;
};

#define NODE_U64 6
struct snode {
	uint32_t parent;           /* node index, UINT32_MAX for a root */
	uint32_t kind;             /* enum ga_ranges_node_kind */
	uint64_t id;               /* a range: key index; a kernel: name string id; else as is */
	uint64_t u[NODE_U64];
};

/* Totals of the NVTX tables: activities, in a range, in none, unattributed,
 * other threads' kernels, kernels left out of them, unterminated ranges. */
#define RSC_COUNT 7

/* Launch latency of one kernel (model/latency.h): its latencies as durations. */
struct slat {
	uint32_t name;
	struct sq q;
};

/*
 * A launch configuration (model/launchcfg.h): the kernel's name, u[] =
 * grid (3), block (3), registers, static and dynamic shared memory, then
 * launches, time, and the occupancy of its first launch's device: the
 * occupancy's bits (a double, all ones when unknown), blocks per SM, what
 * limits it; origin: the part that launched it first, whose device counts.
 */
#define LCFG_KEY 9
#define LCFG_U64 14
struct slcfg {
	uint32_t name, origin;
	uint64_t u[LCFG_U64];
};

/* Kernels without their launch call, profiled by kernel replay, starting before it. */
#define LSC_COUNT 3

/*
 * The findings' state (model/findings.h, after ga_findings_settle()): what
 * the rules read, so that they run once on the merged parts.  Per device
 * (dev: a device index of the summary), u[] = per cause of idle gaps its
 * count, time and longest (FD_ACC), the launch-bound runs (FD_LB), the
 * activities' time summed, streams' time beyond the table, short kernels
 * launched one by one and by graphs, launch calls matched and their time
 * (FD_MISC); its streams (proc: a process index of the summary, site:
 * the text of its first launch's site).  Places of idle gaps by text;
 * per kernel name, the gaps before its short launches; per (kernel name,
 * launch site text), kernel time; legacy default streams.  fs[]: scalars.
 */
#define FD_ACC (3 * GA_CAUSE_COUNT)
#define FD_LB 5
#define FD_MISC 6
#define FD_U64 (FD_ACC + FD_LB + FD_MISC)
struct sfstream {
	uint32_t proc, site;
	uint64_t stream, ns, count;
};

struct sfdev {
	uint32_t dev, nst;
	uint64_t u[FD_U64];
	struct sfstream st[GA_FIND_STREAMS];
};

/* Texts of a place: sites before, after, of the call; labels before, after; call; NVTX. */
#define FPL_STR 7
struct sfplace {
	uint32_t dev, cause, proc;
	uint32_t str[FPL_STR];
	uint64_t stream, ns, count;
};

struct sflb {
	uint32_t name;
	uint64_t gap, count;
};

struct sfks {
	uint32_t name, site;
	uint64_t ns;
};

struct sfnull {
	uint32_t proc;
	uint64_t stream;
};

/* Per copy kind: tiny copies (count, bytes, time, shortest, gaps), pageable, synchronous. */
#define FCOPY_U64 10
#define FCOPY_MIN 3
/*
 * fs[]: parts with findings' state, devices seen in two parts, host calls
 * not kept, metrics' cost and skipped launches, host calls by cause (time,
 * count), copies by kind.  All summed, but the shortest tiny copies (a minimum).
 */
enum {
	FS_PARTS, FS_SHARED, FS_DROPPED, FS_MX_COST, FS_MX_SKIPPED,
	FS_API_NS0, FS_API_CALLS0 = FS_API_NS0 + GA_CAUSE_COUNT,
	FS_COPY0 = FS_API_CALLS0 + GA_CAUSE_COUNT,
	FS_COUNT = FS_COPY0 + GA_COPY_KIND_MAX * FCOPY_U64
};

/* Model scalars, summed on merge unless noted in merge_scalars(). */
enum {
	SC_KERNEL, SC_MEMCPY, SC_MEMSET, SC_GRAPH, SC_API, SC_RECORDS, SC_UNKNOWN,
	SC_MALFORMED, SC_LOST_TOTAL, SC_SATURATED, SC_GAPS, SC_GAP_NS, SC_CHUNK_LOST,
	SC_FIRST, SC_LAST, SC_KERNEL_TOTAL, SC_API_TOTAL, SC_OVERHEAD_NS, SC_OVERHEADS,
	SC_STREAMS, SC_API_THREADS, SC_BAD_REFS, SC_STAGED, SC_DROPPED, SC_ROWS_SEEN,
	SC_PARTS, SC_LOST0,
	SC_COUNT = SC_LOST0 + GP_LOST_CAUSE_COUNT
};

/*
 * Launch sites (section 18): depth, kernels, with a stack, backward ones
 * placed at their forward op's site, STACK and CORR_STACK records.
 */
#define SSC_COUNT 6
#define SSITE_U64 3
struct ssite {
	uint32_t str;    /* the collapsed stack */
	uint32_t origin; /* the trace whose stack lists its frames */
	/* gpu_ns, launches, best: that stack's kernel time + 1, 0 none */
	uint64_t u[SSITE_U64];
	uint32_t foff, nf; /* its frames: sframes[foff ..) */
};

struct sskern {
	uint32_t site, name;
	uint64_t count, ns;
};

/* A module whose frames were not looked up, or looked up unverified. */
struct smod {
	uint32_t name, why;
	uint64_t verdict;
};

/*
 * Hardware metrics (section 19): GP_REC_METRICS_INFO's sums (has it,
 * passes, status, launch selection, profiled, skipped in captures, in
 * graphs, failed, skipped otherwise, cost), then METRICS records, cached,
 * spread, malformed.
 */
#define MXS_COUNT 14
/* A kernel's row: device, launches, cached, time, cost, passes, spread, clock samples, have. */
#define MXK_U64 9
#define MXK_F64 (GA_MX_PREC + 6) /* FLOPs by class, DRAM read, write, total, L2, L1, SM Hz */
struct smxk {
	uint32_t name, proc; /* a process's rows as they came (canonical() keeps them so) */
	uint64_t u[MXK_U64];
	uint64_t f[MXK_F64]; /* IEEE-754 bits */
	uint32_t vlo, nv;    /* its measured values: mxv[vlo ..) */
};

struct smxv {
	uint32_t name; /* the metric's name */
	uint64_t bits;
};

/* A metric's name, first used by trace origin at place idx there. */
struct smxn {
	uint32_t name, origin;
	uint64_t idx;
};

#define MXP_U32 7                   /* device, compute capability (2), SMs, SM and memory clocks, bus width */
#define MXP_F64 (GP_PEAK_COUNT + 1) /* FLOP/s by class, DRAM bytes/s */
struct smxp {
	uint32_t proc, chip;
	uint64_t u[MXP_U32];
	uint64_t f[MXP_F64];
};

/*
 * Memory in use (section 20): a (process, device)'s row: device, allocs,
 * frees, bytes allocated, unmatched frees, peak, when, final, not freed,
 * events; its largest allocations (address, bytes, allocated, freed at,
 * correlation, kind, flags, freed).
 */
#define MUD_U64 10
#define MUA_U64 8
struct smud {
	uint32_t proc;
	uint64_t u[MUD_U64];
	uint32_t alo, na; /* its largest: mua[alo ..) */
};

struct smua {
	uint64_t u[MUA_U64];
};

/*
 * The GPU over time (section 21): a series' id, device, source, status,
 * interval, samples, first start, last end, reasons' metric + 1 (0 none),
 * time sampled with reasons, throttled, then per reason bit; its metrics
 * (name, samples, last end, average, minimum, maximum); averages over
 * kernels and ranges (kind, name, series, count, samples, time, then per
 * metric value x ns and ns).
 */
#define GSS_U64 (11 + GA_GS_REASONS)
#define GSSC_COUNT 4 /* kernels not kept, unsampled, series unasked, malformed */
struct sgss {
	uint32_t proc; /* a process's series as its trace ordered them */
	uint64_t u[GSS_U64];
	uint32_t mlo, nm; /* its metrics: gsm[mlo ..) */
};

struct sgsm {
	uint32_t name;
	uint64_t samples, last_end, avg, min, max; /* IEEE-754 bits for the last three */
};

struct sgsa {
	uint32_t kind, key, series; /* kind: 0 kernels, 1 ranges */
	uint64_t count, samples, time_ns;
	uint32_t vlo; /* 2 x its series' metrics in gsv: value x ns, then ns */
};

/*
 * NCCL collectives (section 22): a trace's kernels of one stream and
 * collective as --align nccl keeps them (model/align.h ga_align_keep), on
 * its own clock: n start, end pairs at nclv[2 * off ..), in order.
 */
struct sncl {
	uint32_t file, coll;
	uint64_t stream;
	size_t off, n;
};

struct ga_sum {
	struct ga_strtab s;
	uint64_t limit;            /* exact durations per row; UINT64_MAX: none */
	uint64_t sc[SC_COUNT];
	struct sfile *files;
	size_t nfiles;
	struct sproc *procs;
	size_t nprocs;
	struct swin *wins;
	size_t nwins;
	struct sdev *devs;
	size_t ndevs;
	struct sdevrow *devrows;
	size_t ndevrows;
	struct slabel *labels;
	size_t nlabels;
	struct skstat *ks;
	size_t nks;
	struct smemop *mo;
	size_t nmo;
	struct smemstat copy[GA_COPY_KIND_MAX];
	struct smemstat memset_st, leg[2];
	struct sgraph *graphs;
	size_t ngraphs;
	struct sastat *as;
	size_t nas;
	struct srank *ranks;
	size_t nranks;
	uint64_t rsc[RSC_COUNT];
	struct srkey *rkeys;
	size_t nrkeys;
	struct smark *marks;
	size_t nmarks;
	struct snode *nodes;
	size_t nnodes;
	uint64_t lsc[LSC_COUNT];
	struct slat *lat;
	size_t nlat;
	struct slcfg *lcfg;
	size_t nlcfg;
	uint64_t fs[FS_COUNT];
	struct sfdev *fdev;
	size_t nfdev;
	struct sfplace *fpl;
	size_t nfpl;
	struct sflb *flb;
	size_t nflb;
	struct sfks *fks;
	size_t nfks;
	struct sfnull *fnull;
	size_t nfnull;
	int no_sites; /* a part of version 6 or earlier: no launch sites */
	uint64_t ssc[SSC_COUNT];
	struct ssite *sites;
	size_t nsites;
	struct sskern *skern;
	size_t nskern;
	uint32_t *sframes;
	size_t nsframes;
	struct smod *smods;
	size_t nsmods;
	uint64_t mxs[MXS_COUNT];
	uint32_t mx_set;                      /* the metric set, from the first trace (by path) with it */
	uint32_t mx_origin, mx_status_origin; /* that trace; the first with a status */
	struct smxk *mxk;
	size_t nmxk;
	struct smxv *mxv;
	size_t nmxv;
	struct smxn *mxn;
	size_t nmxn;
	struct smxp *mxp;
	size_t nmxp;
	uint64_t mu_records, mu_host; /* MEMORY records; of them, host memory */
	struct smud *mud;
	size_t nmud;
	struct smua *mua;
	size_t nmua;
	uint64_t gssc[GSSC_COUNT];
	struct sgss *gss;
	size_t ngss;
	struct sgsm *gsm;
	size_t ngsm;
	struct sgsa *gsa;
	size_t ngsa;
	uint64_t *gsv;
	size_t ngsv;
	struct sncl *ncl;
	size_t nncl;
	uint64_t *nclv;   /* pairs */
	size_t nnclv;     /* pairs */
	int no_nccl;      /* a part of version 7 or earlier: no NCCL collectives */
	int64_t *nccl_ns; /* a report's --align nccl: each file's correction */
};

static int fstate_from(struct ga_sum *s, struct ga_analysis *an, const uint32_t *devmap,
		       int *err);
static int fstate_merge(struct ga_sum *a, struct ga_sum *b, const uint32_t *dmap,
			uint32_t pbase, int *err);
static uint64_t sat(uint64_t a, uint64_t b);

/* ---- the histogram ---- */

/* Turns q's exact segments into a histogram. */
static int to_sketch(struct sq *q)
{
	struct ga_quant h = { 0 };
	size_t i;

	if (q->sketch)
		return 0;
	if (ga_quant_to_sketch(&h))
		return -1;
	for (i = 0; i < q->nseg; i++)
		if (ga_quant_add_array(&h, q->seg[i].v, q->seg[i].n)) {
			ga_quant_free(&h);
			return -1;
		}
	for (i = 0; i < q->nseg; i++)
		free(q->seg[i].v);
	free(q->seg);
	q->seg = NULL;
	q->nseg = 0;
	q->h = h;
	q->sketch = 1;
	return 0;
}

static void sq_free(struct sq *q)
{
	for (size_t i = 0; i < q->nseg; i++)
		free(q->seg[i].v);
	free(q->seg);
	ga_quant_free(&q->h);
	memset(q, 0, sizeof(*q));
}

static uint64_t sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static u128 sat128(u128 a, u128 b)
{
	return a + b < a ? ~(u128)0 : a + b;
}

/* Merges b into a (b emptied).  limit: exact durations allowed.  0 or -1. */
static int sq_merge(struct sq *a, struct sq *b, uint64_t limit)
{
	if (!b->n) {
		sq_free(b);
		return 0;
	}
	if (!a->n) {
		sq_free(a);
		*a = *b;
		memset(b, 0, sizeof(*b));
		return a->sketch || a->n <= limit ? 0 : to_sketch(a);
	}
	a->min = b->min < a->min ? b->min : a->min;
	a->max = b->max > a->max ? b->max : a->max;
	a->sum = sat(a->sum, b->sum);
	a->n = sat(a->n, b->n);
	a->sumsq = sat128(a->sumsq, b->sumsq);
	if (!a->sketch && !b->sketch && a->n <= limit) {
		struct sseg *s = realloc(a->seg, (a->nseg + b->nseg) * sizeof(*s));

		if (!s)
			return -1;
		memcpy(s + a->nseg, b->seg, b->nseg * sizeof(*s));
		a->seg = s;
		a->nseg += b->nseg;
		free(b->seg);
		b->seg = NULL;
		b->nseg = 0;
		sq_free(b);
		return 0;
	}
	if (to_sketch(a) || to_sketch(b) || ga_quant_merge(&a->h, &b->h))
		return -1;
	sq_free(b);
	return 0;
}

/* Value of 0-based rank r: exact from all (sorted), else from the buckets. */
static uint64_t sq_rank(const struct sq *q, const uint64_t *all, uint64_t r)
{
	return q->sketch ? ga_quant_rank(&q->h, r) : all[r];
}

/*
 * Median, standard deviation, p90 and p99 (pct may be NULL) as
 * ga_model_finish() gives them.
 */
static int sq_finish(const struct sq *q, const struct sseg *seg, size_t nseg,
		     uint64_t *med, uint64_t *stddev, uint64_t pct[2])
{
	uint64_t *all = NULL;
	size_t n = 0;

	*med = *stddev = 0;
	if (pct)
		pct[0] = pct[1] = 0;
	if (!q->n)
		return 0;
	if (!q->sketch) {
		struct ga_welford w = { 0 };
		uint64_t c = 0;

		if (!(all = malloc(q->n * sizeof(*all))))
			return -1;
		/* The model's Welford sums, replayed in the traces' order. */
		for (size_t i = 0; i < nseg; i++)
			for (size_t j = 0; j < seg[i].n; j++) {
				all[n++] = seg[i].v[j];
				ga_welford_add(&w, ++c, seg[i].v[j]);
			}
		*stddev = ga_welford_stddev(&w, q->n);
		ga_sort_u64(all, n);
	} else if (q->n > 1) {
		/* Exact sums: n*sumsq - sum^2 over n(n-1), one rounding. */
		u128 s = q->sum, num = (u128)q->n * q->sumsq - s * s;
		long double var = (long double)num / ((long double)q->n * (long double)(q->n - 1));

		*stddev = (uint64_t)(sqrtl(var) + 0.5L);
	}
	if (q->n % 2)
		*med = sq_rank(q, all, q->n / 2);
	else
		*med = (sq_rank(q, all, q->n / 2 - 1) + sq_rank(q, all, q->n / 2)) / 2;
	if (pct) {
		pct[0] = sq_rank(q, all, ga_quant_pctl_rank(q->n, 900));
		pct[1] = sq_rank(q, all, ga_quant_pctl_rank(q->n, 990));
	}
	free(all);
	return 0;
}

/*
 * A row's median, deviation, p90 and p99 (p90 NULL: none), taken by
 * sq_finish_rows() once its table's rows are made.
 */
struct sqjob {
	const struct sq *q;
	uint64_t *med, *stddev, *p90, *p99;
};

struct sqrun {
	const struct sqjob *jobs;
	size_t n;
	size_t next; /* the next row to take (atomic) */
	int err;     /* out of memory (atomic) */
};

/* Rows of a table taken SQ_ROWS_STEP at a time, while rows are left. */
#define SQ_ROWS_STEP 8
/* Rows a thread of sq_finish_rows() is worth: fewer, the caller's alone. */
#define SQ_ROWS_THREAD 64

static void *sq_run(void *arg)
{
	struct sqrun *r = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&r->next, SQ_ROWS_STEP, __ATOMIC_RELAXED)) < r->n)
		for (size_t e = i + SQ_ROWS_STEP < r->n ? i + SQ_ROWS_STEP : r->n; i < e; i++) {
			const struct sqjob *j = &r->jobs[i];
			uint64_t pct[2];

			if (sq_finish(j->q, j->q->seg, j->q->nseg, j->med, j->stddev,
				      j->p90 ? pct : NULL)) {
				__atomic_store_n(&r->err, 1, __ATOMIC_RELAXED);
				continue;
			}
			if (j->p90) {
				*j->p90 = pct[0];
				*j->p99 = pct[1];
			}
		}
	return NULL;
}

/*
 * The jobs' rows finished, on threads where they are many (-j: each row
 * alone sorts its exact durations and replays their sums; a job's report
 * of 256 traces spent a third of a second on one thread here, after the
 * pool).  The same values on any number of threads.  0, or -1 out of
 * memory.
 */
static int sq_finish_rows(const struct sqjob *jobs, size_t n)
{
	unsigned want = ga_reader_threads(), started = 0;
	struct sqrun r = { .jobs = jobs, .n = n };
	pthread_t th[GA_READER_JOBS_MAX];

	if (want > GA_READER_JOBS_MAX)
		want = GA_READER_JOBS_MAX;
	if ((size_t)want > n / SQ_ROWS_THREAD)
		want = (unsigned)(n / SQ_ROWS_THREAD);
	/* The caller's thread is one of them. */
	while (started + 1 < want && !pthread_create(&th[started], NULL, sq_run, &r))
		started++;
	sq_run(&r);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	return r.err ? -1 : 0;
}

/* ---- from an analysis ---- */

static uint32_t S(struct ga_sum *s, const struct ga_model *m, uint32_t id, int *err)
{
	uint32_t r;

	if (!id)
		return 0;
	r = ga_strtab_intern_from(&s->s, &m->strs, id);
	if (r == GA_STR_NOMEM)
		*err = 1;
	return r;
}

static uint32_t Sc(struct ga_sum *s, const char *t, int *err)
{
	uint32_t r = ga_strtab_intern(&s->s, t, strlen(t));

	if (r == GA_STR_NOMEM)
		*err = 1;
	return r;
}

/* The durations of d: in arrival order while exact, else its histogram. */
static int sq_from(struct sq *q, const struct ga_quant *d, uint32_t origin, uint64_t limit)
{
	uint64_t *v, n = ga_quant_count(d);

	memset(q, 0, sizeof(*q));
	if (!n)
		return 0;
	ga_quant_moments(d, &q->n, &q->sum, &q->sumsq, &q->min, &q->max);
	if (ga_quant_estimated(d)) {
		if (ga_quant_copy(&q->h, d))
			return -1;
		q->sketch = 1;
		return 0;
	}
	if (!(v = malloc(n * sizeof(*v))))
		return -1;
	ga_quant_values(d, v);
	if (!(q->seg = malloc(sizeof(*q->seg)))) {
		free(v);
		return -1;
	}
	q->seg[0].origin = origin;
	q->seg[0].v = v;
	q->seg[0].n = n;
	q->nseg = 1;
	return q->n > limit ? to_sketch(q) : 0;
}

#define GROW(arr, n) (((arr) = realloc((arr), ((n) + 1) * sizeof(*(arr)))) == NULL)

void ga_summary_free(struct ga_sum *s)
{
	if (!s)
		return;
	ga_strtab_free(&s->s);
	free(s->files);
	free(s->procs);
	free(s->wins);
	free(s->devs);
	for (size_t i = 0; i < s->ndevrows; i++)
		free(s->devrows[i].iv);
	free(s->devrows);
	free(s->labels);
	for (size_t i = 0; i < s->nks; i++)
		sq_free(&s->ks[i].q);
	free(s->ks);
	for (size_t i = 0; i < s->nmo; i++)
		sq_free(&s->mo[i].q);
	free(s->mo);
	free(s->graphs);
	for (size_t i = 0; i < s->nas; i++)
		sq_free(&s->as[i].q);
	free(s->as);
	for (size_t i = 0; i < s->nranks; i++)
		free(s->ranks[i].st);
	free(s->ranks);
	for (size_t i = 0; i < s->nrkeys; i++)
		sq_free(&s->rkeys[i].q);
	free(s->rkeys);
	free(s->marks);
	free(s->nodes);
	for (size_t i = 0; i < s->nlat; i++)
		sq_free(&s->lat[i].q);
	free(s->lat);
	free(s->lcfg);
	free(s->fdev);
	free(s->fpl);
	free(s->flb);
	free(s->fks);
	free(s->fnull);
	free(s->sites);
	free(s->skern);
	free(s->sframes);
	free(s->smods);
	free(s->mxk);
	free(s->mxv);
	free(s->mxn);
	free(s->mxp);
	free(s->mud);
	free(s->mua);
	free(s->gss);
	free(s->gsm);
	free(s->gsa);
	free(s->gsv);
	free(s->ncl);
	free(s->nclv);
	free(s->nccl_ns);
	free(s);
}

static struct ga_sum *sum_new(void)
{
	struct ga_sum *s = calloc(1, sizeof(*s));

	if (s && ga_strtab_init(&s->s)) {
		free(s);
		return NULL;
	}
	return s;
}

/* Label index + 1 to its string id in s. */
static uint32_t label_str(struct ga_sum *s, const struct ga_model *m, uint32_t l1, int *err)
{
	return l1 ? S(s, m, m->labels[l1 - 1].str, err) : 0;
}

static void memstat_from(struct ga_sum *s, const struct ga_model *m, struct smemstat *o,
			 const struct ga_memstat *i, int *err)
{
	o->count = i->count;
	o->bytes = i->bytes;
	o->total = i->total;
	o->label = label_str(s, m, i->label, err);
}

/* The clock correction the analysis applied to process proc's times. */
static int64_t shift_of(const struct ga_analysis *an, uint32_t proc)
{
	uint32_t f = an->m.procs[proc].file;

	return f < an->al.n ? an->al.f[f].clock_ns : 0;
}

/*
 * Row r's intervals: b's, retired (kept) and not, moved back by sh; past
 * b's keep_max (0: no limit), b's busy time and span instead.  0, or -1
 * out of memory.
 */
static int d_busy_copy(struct sdevrow *r, const struct ga_busy *b, int64_t sh)
{
	size_t n = b->nkept + b->niv, i;

	if (b->kept_over || (b->keep_max && n > b->keep_max)) {
		uint64_t first, last;

		r->dropped = 1;
		r->busy = ga_busy_total(b);
		if (ga_busy_span(b, &first, &last)) {
			r->first = first - (uint64_t)sh;
			r->last = last - (uint64_t)sh;
		}
		return 0;
	}
	if (!n)
		return 0;
	if (!(r->iv = malloc(n * sizeof(*r->iv))))
		return -1;
	for (i = 0; i < n; i++) {
		const struct ga_iv *x = i < b->nkept ? &b->kept[i] : &b->iv[i - b->nkept];

		r->iv[i].start = x->start - (uint64_t)sh;
		r->iv[i].end = x->end - (uint64_t)sh;
	}
	r->niv = n;
	return 0;
}

/*
 * The per-rank figures and steps of each process of an (ga_summary_collect()
 * has the ranks collected even for one trace without a rank).  0, or -1
 * out of memory.
 */
static int ranks_from(struct ga_sum *s, const struct ga_analysis *an, int *err)
{
	const struct ga_ranks *rk = &an->rk;
	const struct ga_model *m = &an->m;

	if (rk->nrows != m->nprocs)
		return 0;
	if (!(s->ranks = calloc(rk->nrows + 1, sizeof(*s->ranks))))
		return -1;
	for (size_t i = 0; i < rk->nrows; i++) {
		const struct ga_rank_row *w = &rk->rows[i];
		struct srank *o = &s->ranks[s->nranks];
		uint64_t u[RANK_U64] = { w->devices, w->busy_ns, w->compute_ns, w->comm_ns,
					 w->exposed_ns, w->kernels, w->nccl_kernels };
		int any = w->steps > 0;

		for (size_t j = 0; j < RANK_U64; j++)
			any |= u[j] != 0;
		if (!any)
			continue;
		o->proc = w->proc;
		memcpy(o->u, u, sizeof(u));
		if (w->steps && !(o->st = calloc(w->steps, sizeof(*o->st))))
			return -1;
		s->nranks++;
		for (size_t j = 0; j < w->steps; j++) {
			const struct ga_rank_work *k = &rk->work[w->work + j];

			o->st[o->nst++] = (struct sstep){ S(s, m, k->label, err), k->work_ns };
		}
	}
	return 0;
}

/*
 * The NVTX range and mark tables and the range tree of an: each name's CPU
 * times as durations (as the scan kept them, ranges.h keep_cpu: an analysis
 * of ranks.h collect), the nodes with their whole subtree's counts.  0, or
 * -1 out of memory.
 */
static int nvtx_from(struct ga_sum *s, const struct ga_analysis *an, uint32_t org, int *err)
{
	const struct ga_ranges *rg = &an->rg;
	const struct ga_model *m = &an->m;
	uint32_t *kmap = calloc(rg->nkeys + 1, sizeof(*kmap));
	uint32_t *nmap = calloc(rg->nnodes + 1, sizeof(*nmap));
	uint64_t rsc[RSC_COUNT] = { rg->acts, rg->in_range, rg->no_range, rg->unattributed,
				    rg->other_kernels, rg->other_skipped, rg->unterminated };
	size_t i;
	int rc = -1;

	memcpy(s->rsc, rsc, sizeof(rsc));
	if (!kmap || !nmap ||
	    !(s->rkeys = calloc(rg->nkeys + 1, sizeof(*s->rkeys))) ||
	    !(s->marks = calloc(rg->nmarks + 1, sizeof(*s->marks))) ||
	    !(s->nodes = calloc(rg->nnodes + 1, sizeof(*s->nodes))))
		goto out;
	for (i = 0; i < rg->nkeys; i++) {
		const struct ga_ranges_key *k = &rg->keys[i];
		const struct ga_quant *kq = i < rg->capcpu ? &rg->cpu[i] : NULL;
		struct srkey *o;

		kmap[i] = UINT32_MAX;
		if (!k->count || !kq || ga_quant_count(kq) != k->count)
			continue;
		kmap[i] = (uint32_t)s->nrkeys;
		o = &s->rkeys[s->nrkeys++];
		o->name = S(s, m, k->name, err);
		o->domain = S(s, m, k->domain, err);
		o->label = S(s, m, k->label, err);
		o->u[0] = k->unterminated;
		o->u[1] = k->gpu_ns;
		o->u[2] = k->acts;
		o->u[3] = k->kernels;
		o->u[4] = k->other_ns;
		o->u[5] = k->other_kernels;
		if (sq_from(&o->q, kq, org, s->limit))
			goto out;
	}
	for (i = 0; i < rg->nmarks; i++) {
		const struct ga_ranges_mark *k = &rg->marks[i];

		s->marks[s->nmarks++] = (struct smark){ S(s, m, k->name, err), S(s, m, k->domain, err),
							S(s, m, k->label, err), k->count };
	}
	/* A node comes after its parent (ranges.c makes them so). */
	for (i = 0; i < rg->nnodes; i++) {
		const struct ga_ranges_node *n = &rg->nodes[i];
		struct snode *o;
		uint64_t id = n->id;

		nmap[i] = UINT32_MAX;
		if (n->kind == GA_RANGES_N_SITE)
			continue;   /* launch sites are not in summaries yet */
		if ((n->parent != GA_RANGES_NONE &&
		     (n->parent >= i || nmap[n->parent] == UINT32_MAX)) ||
		    (n->kind == GA_RANGES_N_RANGE && (id >= rg->nkeys || kmap[id] == UINT32_MAX)))
			continue;
		if (n->kind == GA_RANGES_N_RANGE)
			id = kmap[id];
		else if (n->kind == GA_RANGES_N_KERNEL)
			id = S(s, m, n->id, err);
		nmap[i] = (uint32_t)s->nnodes;
		o = &s->nodes[s->nnodes++];
		o->parent = n->parent == GA_RANGES_NONE ? UINT32_MAX : nmap[n->parent];
		o->kind = n->kind;
		o->id = id;
		o->u[0] = n->instances;
		o->u[1] = n->gpu_ns;
		o->u[2] = n->acts;
		o->u[3] = n->kernels;
		o->u[4] = n->other_ns;
		o->u[5] = n->other_kernels;
	}
	rc = 0;
out:
	free(kmap);
	free(nmap);
	return rc;
}

/*
 * Launch latency per kernel (its latencies, kept by ga_summary_collect()'s
 * keep_values) and launch configurations with their occupancy.  0, or -1
 * out of memory.
 */
static int launches_from(struct ga_sum *s, const struct ga_analysis *an, uint32_t org, int *err)
{
	const struct ga_latency *l = &an->lat;
	const struct ga_launchcfg *lc = &an->lc;
	const struct ga_model *m = &an->m;
	size_t i;

	s->lsc[0] = l->unmatched;
	s->lsc[1] = l->replayed;
	s->lsc[2] = l->early;
	if (!(s->lat = calloc(l->nk + 1, sizeof(*s->lat))) ||
	    !(s->lcfg = calloc(lc->nc + 1, sizeof(*s->lcfg))))
		return -1;
	for (i = 0; i < l->nk; i++) {
		const struct ga_latency_k *k = &l->k[i];
		struct slat *o;

		/* Without its latencies (a model not kept for summaries): left out. */
		if (!k->count || ga_quant_count(&k->q) != k->count)
			continue;
		o = &s->lat[s->nlat++];
		o->name = S(s, m, k->name, err);
		if (sq_from(&o->q, &k->q, org, s->limit))
			return -1;
	}
	for (i = 0; i < lc->nc; i++) {
		const struct ga_lcfg *c = &lc->c[i];
		struct slcfg *o = &s->lcfg[s->nlcfg++];
		uint64_t occ = UINT64_MAX;

		if (c->occupancy >= 0)
			memcpy(&occ, &c->occupancy, sizeof(occ));
		o->name = S(s, m, c->name, err);
		o->origin = org;
		memcpy(o->u, (uint64_t[LCFG_U64]){ c->grid[0], c->grid[1], c->grid[2], c->block[0],
						  c->block[1], c->block[2], c->regs, c->static_smem,
						  c->dynamic_smem, c->count, c->total, occ,
						  c->occupancy >= 0 ? c->active_blocks : 0,
						  c->occupancy >= 0 ? c->limit : 0 },
		       sizeof(o->u));
	}
	return 0;
}

/* Launch sites, as ga_sites_finish() made them (an->st): where the trace had stacks. */
static int sites_from(struct ga_sum *s, const struct ga_analysis *an, uint32_t org, int *err)
{
	const struct ga_sites *st = &an->st;
	const struct ga_model *m = &an->m;
	size_t i, j;

	if (!an->o.observe_sites || !st->finished)
		return 0;
	/* Kernels of traces without stacks count in "N of M kernels have a launch stack". */
	memcpy(s->ssc,
	       (uint64_t[SSC_COUNT]){ ga_sites_any(st) ? st->depth : 0, st->kernels, st->with_stack,
				      st->backward, st->stack_records, st->corr_records },
	       sizeof(s->ssc));
	if (!ga_sites_any(st))
		return 0;
	if (!(s->sites = calloc(st->nsites + 1, sizeof(*s->sites))) ||
	    !(s->skern = calloc(st->nskern + 1, sizeof(*s->skern))) ||
	    !(s->sframes = calloc(st->nftext + 1, sizeof(*s->sframes))) ||
	    !(s->smods = calloc(st->nmods + 1, sizeof(*s->smods))))
		return -1;
	for (i = 0; i < st->nsites; i++) {
		const struct ga_stack_site *x = &st->sites[i];
		struct ssite *o = &s->sites[s->nsites++];

		o->str = S(s, m, x->str, err);
		o->origin = org;
		o->u[0] = x->gpu_ns;
		o->u[1] = x->launches;
		o->u[2] = x->best == UINT32_MAX ? 0 : sat(x->best_ns, 1);
		o->foff = (uint32_t)s->nsframes;
		o->nf = x->nf;
		for (j = 0; j < x->nf && s->nsframes < st->nftext; j++)
			s->sframes[s->nsframes++] = S(s, m, st->ftext[x->foff + j], err);
	}
	for (i = 0; i < st->nskern; i++)
		s->skern[s->nskern++] = (struct sskern){ st->skern[i].site,
							 S(s, m, st->skern[i].name, err),
							 st->skern[i].count, st->skern[i].ns };
	/* What the notes on frame names read (text-sites.c). */
	for (i = 0; i < st->nmods; i++)
		if (st->mods[i].verdict_sites && st->mods[i].verdict_sites != GA_SYM_PROVEN)
			s->smods[s->nsmods++] = (struct smod){ S(s, m, st->mods[i].name, err),
							       S(s, m, st->mods[i].why, err),
							       (uint64_t)st->mods[i].verdict_sites };
	return 0;
}

static uint64_t f64_bits(double x)
{
	uint64_t b;

	memcpy(&b, &x, sizeof(b));
	return b;
}

static double bits_f64(uint64_t b)
{
	double x;

	memcpy(&x, &b, sizeof(x));
	return x;
}

/* Hardware metrics (--metrics), as the model read them (an->mx); recorded ceilings. */
static int mx_from(struct ga_sum *s, const struct ga_analysis *an, uint32_t org, int *err)
{
	const struct ga_mx *mx = &an->mx;
	const struct ga_model *m = &an->m;
	size_t i, j, nv = 0;

	if (!ga_mx_any(mx))
		return 0;
	memcpy(s->mxs,
	       (uint64_t[MXS_COUNT]){ (uint64_t)mx->has_info, mx->passes, mx->status, mx->launches,
				      mx->profiled, mx->skipped_capture, mx->skipped_graph,
				      mx->failed, mx->skipped_other, mx->cost_ns, mx->records,
				      mx->cached, mx->spread, mx->bad },
	       sizeof(s->mxs));
	s->mx_set = S(s, m, mx->set, err);
	s->mx_origin = mx->has_info ? org : 0;
	s->mx_status_origin = mx->status ? org : 0;
	for (i = 0; i < mx->nk; i++)
		for (j = 0; j < mx->nnames && mx->k[i].vals; j++)
			nv += !isnan(mx->k[i].vals[j]);
	if (!(s->mxk = calloc(mx->nk + 1, sizeof(*s->mxk))) ||
	    !(s->mxv = calloc(nv + 1, sizeof(*s->mxv))) ||
	    !(s->mxn = calloc(mx->nnames + 1, sizeof(*s->mxn))) ||
	    !(s->mxp = calloc(mx->npeaks + 1, sizeof(*s->mxp))))
		return -1;
	for (i = 0; i < mx->nnames; i++)
		s->mxn[s->nmxn++] = (struct smxn){ S(s, m, mx->names[i], err), org, i };
	for (i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *k = &mx->k[i];
		struct smxk *o = &s->mxk[s->nmxk++];

		o->name = S(s, m, k->name, err);
		o->proc = k->proc;
		memcpy(o->u,
		       (uint64_t[MXK_U64]){ k->device, k->launches, k->cached, k->time_ns, k->cost_ns,
					    k->passes, k->spread, k->sm_hz_n, k->have },
		       sizeof(o->u));
		for (j = 0; j < GA_MX_PREC; j++)
			o->f[j] = f64_bits(k->flops[j]);
		o->f[GA_MX_PREC] = f64_bits(k->dram_read);
		o->f[GA_MX_PREC + 1] = f64_bits(k->dram_write);
		o->f[GA_MX_PREC + 2] = f64_bits(k->dram_total);
		o->f[GA_MX_PREC + 3] = f64_bits(k->l2);
		o->f[GA_MX_PREC + 4] = f64_bits(k->l1);
		o->f[GA_MX_PREC + 5] = f64_bits(k->sm_hz);
		o->vlo = (uint32_t)s->nmxv;
		for (j = 0; j < mx->nnames && k->vals; j++)
			if (!isnan(k->vals[j])) {
				s->mxv[s->nmxv++] = (struct smxv){ s->mxn[j].name, f64_bits(k->vals[j]) };
				o->nv++;
			}
	}
	for (i = 0; i < mx->npeaks; i++) {
		const struct ga_mx_peaks *p = &mx->peaks[i];
		const struct gp_rec_device_peaks *r = &p->spec;
		struct smxp *o = &s->mxp[s->nmxp++];

		o->proc = p->proc;
		o->chip = S(s, m, p->chip, err);
		memcpy(o->u,
		       (uint64_t[MXP_U32]){ p->device, r->cc_major, r->cc_minor, r->sm_count,
					    r->sm_clock_khz, r->mem_clock_khz, r->bus_width },
		       sizeof(o->u));
		for (j = 0; j < GP_PEAK_COUNT; j++)
			o->f[j] = f64_bits(r->flops[j]);
		o->f[GP_PEAK_COUNT] = f64_bits(r->dram_bw);
	}
	return 0;
}

/* Memory in use (--trace=...,memory), as ga_memuse_finish() left it (an->mu). */
static int mu_from(struct ga_sum *s, const struct ga_analysis *an)
{
	const struct ga_memuse *mu = &an->mu;
	size_t i, j, na = 0;

	if (!ga_memuse_any(mu))
		return 0;
	s->mu_records = mu->records;
	s->mu_host = mu->host_records;
	for (i = 0; i < mu->ndevs; i++)
		na += mu->devs[i].ntop;
	if (!(s->mud = calloc(mu->ndevs + 1, sizeof(*s->mud))) ||
	    !(s->mua = calloc(na + 1, sizeof(*s->mua))))
		return -1;
	for (i = 0; i < mu->ndevs; i++) {
		const struct ga_memuse_dev *d = &mu->devs[i];
		struct smud *o = &s->mud[s->nmud++];

		o->proc = d->proc;
		memcpy(o->u,
		       (uint64_t[MUD_U64]){ d->device, d->allocs, d->frees, d->alloc_bytes,
					    d->unmatched_frees, d->peak, d->peak_ns, d->final,
					    d->live, d->events },
		       sizeof(o->u));
		o->alo = (uint32_t)s->nmua;
		o->na = (uint32_t)d->ntop;
		for (j = 0; j < d->ntop; j++) {
			const struct ga_memuse_alloc *a = &d->top[j];

			memcpy(s->mua[s->nmua++].u,
			       (uint64_t[MUA_U64]){ a->address, a->bytes, a->alloc_ns, a->free_ns,
						    a->correlation, a->kind, a->flags, a->freed },
			       sizeof(s->mua[0].u));
		}
	}
	return 0;
}

/* Section 22: each file's NCCL collectives as the ranks' analysis kept them. */
static int ncl_from(struct ga_sum *s, struct ga_analysis *an)
{
	struct ga_ranks *rk = &an->rk;
	size_t cap = 0;

	for (size_t f = 0; f < rk->nkeep && f < an->m.nfiles; f++) {
		struct ga_align_keep *k = &rk->keep[f];

		if (ga_align_keep_finish(k))
			return -1;
		for (size_t i = 0; i < k->n; i++) {
			const struct ga_align_group *g = &k->g[i];

			if (!g->n)
				continue;
			if (GROW(s->ncl, s->nncl) ||
			    ga_util_grow(&s->nclv, &cap, s->nnclv + g->n + 1, 2 * sizeof(*s->nclv)))
				return -1;
			s->ncl[s->nncl++] = (struct sncl){ (uint32_t)f, g->coll, g->stream, s->nnclv,
							   g->n };
			memcpy(s->nclv + 2 * s->nnclv, g->v, 2 * g->n * sizeof(*s->nclv));
			s->nnclv += g->n;
		}
	}
	return 0;
}

static int gsa_from(struct ga_sum *s, const struct ga_analysis *an, const struct ga_gs_attr *a,
		    size_t n, uint32_t kind, int *err)
{
	const struct ga_gpusamples *g = &an->gs;

	for (size_t i = 0; i < n; i++) {
		const struct ga_gs_attr *x = &a[i];
		uint32_t nm = x->series < g->nseries ? g->series[x->series].n : 0;

		if (GROW(s->gsa, s->ngsa))
			return -1;
		s->gsa[s->ngsa++] = (struct sgsa){ kind, S(s, &an->m, x->key, err), x->series, x->count,
						   x->samples, x->time_ns, (uint32_t)s->ngsv };
		for (uint32_t j = 0; j < 2 * nm; j++) {
			if (GROW(s->gsv, s->ngsv))
				return -1;
			s->gsv[s->ngsv++] = f64_bits(j < nm ? x->wsum[j] : x->w[j - nm]);
		}
	}
	return 0;
}

/* The GPU over time (--gpu-metrics, --gpu-telemetry), as ga_gs_finish() left it (an->gs). */
static int gs_from(struct ga_sum *s, const struct ga_analysis *an, int *err)
{
	const struct ga_gpusamples *g = &an->gs;
	size_t i, j;

	s->gssc[0] = g->kernels_unkept;
	s->gssc[1] = g->kernels_unsampled;
	s->gssc[2] = g->series_unasked;
	s->gssc[3] = g->malformed;
	if (!ga_gs_any(g))
		return 0;
	for (i = 0; i < g->nseries; i++) {
		const struct ga_gs_series *x = &g->series[i];
		struct sgss *o;

		if (GROW(s->gss, s->ngss))
			return -1;
		o = &s->gss[s->ngss++];
		memset(o, 0, sizeof(*o));
		o->proc = x->proc;
		memcpy(o->u,
		       (uint64_t[11]){ x->id, x->device, x->source, x->status, x->interval_ns, x->ns,
				       x->first, x->last, (uint64_t)(x->reasons_at + 1), x->sampled_ns,
				       x->throttled_ns },
		       11 * sizeof(o->u[0]));
		for (j = 0; j < GA_GS_REASONS; j++)
			o->u[11 + j] = x->reason_ns[j];
		o->mlo = (uint32_t)s->ngsm;
		o->nm = x->n;
		for (j = 0; j < x->n; j++) {
			const struct ga_gs_metric *mt = &x->m[j];

			if (GROW(s->gsm, s->ngsm))
				return -1;
			s->gsm[s->ngsm++] = (struct sgsm){ S(s, &an->m, mt->name, err), mt->samples,
							   mt->last_end, f64_bits(mt->avg),
							   f64_bits(mt->min), f64_bits(mt->max) };
		}
	}
	return gsa_from(s, an, g->kern, g->nkern, 0, err) ||
			       gsa_from(s, an, g->ranges, g->nranges, 1, err) ?
		       -1 :
		       0;
}

struct ga_sum *ga_summary_from_analysis(struct ga_analysis *an, uint64_t exact_limit,
					const char *origin)
{
	const struct ga_model *m = &an->m;
	struct ga_sum *s = sum_new();
	uint32_t org, *devmap = NULL;
	const struct ga_align *al;
	struct ga_align al2;
	int err = 0, made = 0;
	size_t i, nd = 0;

	if (!s)
		return NULL;
	s->limit = exact_limit ? exact_limit : UINT64_MAX;
	org = Sc(s, origin, &err);
	s->sc[SC_PARTS] = 1;
	s->sc[SC_KERNEL] = m->counts[GA_ACT_KERNEL];
	s->sc[SC_MEMCPY] = m->counts[GA_ACT_MEMCPY];
	s->sc[SC_MEMSET] = m->counts[GA_ACT_MEMSET];
	s->sc[SC_GRAPH] = m->counts[GA_ACT_GRAPH];
	s->sc[SC_API] = m->api_count;
	s->sc[SC_RECORDS] = m->records;
	s->sc[SC_UNKNOWN] = m->unknown;
	s->sc[SC_MALFORMED] = m->malformed;
	s->sc[SC_LOST_TOTAL] = m->lost_records_total;
	s->sc[SC_SATURATED] = (uint64_t)m->lost_saturated;
	s->sc[SC_GAPS] = m->gaps;
	s->sc[SC_GAP_NS] = m->gap_ns;
	s->sc[SC_CHUNK_LOST] = m->chunk_lost;
	s->sc[SC_FIRST] = m->first_start;
	s->sc[SC_LAST] = m->last_end;
	s->sc[SC_KERNEL_TOTAL] = m->kernel_total;
	s->sc[SC_API_TOTAL] = m->api_total;
	s->sc[SC_OVERHEAD_NS] = m->overhead_ns;
	s->sc[SC_OVERHEADS] = m->overheads;
	s->sc[SC_STREAMS] = m->streams;
	s->sc[SC_API_THREADS] = m->api_threads;
	s->sc[SC_BAD_REFS] = m->bad_refs;
	s->sc[SC_STAGED] = m->staged_pairs;
	s->sc[SC_DROPPED] = m->dropped;
	s->sc[SC_ROWS_SEEN] = m->rows_seen;
	for (i = 0; i < GP_LOST_CAUSE_COUNT; i++)
		s->sc[SC_LOST0 + i] = m->lost[i];

	if (!(s->files = calloc(m->nfiles + 1, sizeof(*s->files))))
		goto fail;
	for (i = 0; i < m->nfiles; i++) {
		const struct ga_read_info *f = &m->files[i].info;
		struct sfile *o = &s->files[s->nfiles++];

		o->k = (struct okey){ org, (uint32_t)i };
		o->path = Sc(s, m->files[i].path, &err);
		o->reason = Sc(s, f->reason, &err);
		o->damaged = (uint64_t)f->damaged;
		o->finished = (uint64_t)f->finished;
		o->bytes_unread = f->bytes_unread;
		o->file_size = f->file_size;
		o->chunks = f->chunks;
		o->last_flag = f->last_flag;
		o->records = f->records;
		o->unknown = f->unknown;
		o->malformed = f->malformed;
		o->chunk_lost = f->chunk_lost;
		o->stop_offset = f->stop_offset;
	}
	if (!(s->procs = calloc(m->nprocs + 1, sizeof(*s->procs))))
		goto fail;
	/*
	 * The traces' clock sync offsets and hosts, for merges to move times
	 * as traces read together move them: the analysis scanned them only
	 * when it read several; else the model noted them as it read (what
	 * align.c's scan would read again: each trace is decompressed once).
	 */
	al = &an->al;
	if (an->al.n < m->nfiles) {
		ga_align_init(&al2, GA_ALIGN_NONE);
		if (!(al2.f = calloc(m->nfiles + 1, sizeof(*al2.f))))
			goto fail;
		al2.n = m->nfiles;
		made = 1;
		for (i = 0; i < m->nfiles; i++) {
			const struct ga_file *fi = &m->files[i];

			al2.f[i].rank = UINT32_MAX;
			al2.f[i].has_sync = fi->first_sync;
			al2.f[i].sync_ns = fi->first_sync_ns;
			memcpy(al2.f[i].host, fi->first_host, sizeof(al2.f[i].host));
		}
		al = &al2;
	}
	for (i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];
		struct sproc *o = &s->procs[s->nprocs++];
		const struct ga_align_file *af = p->file < al->n ? &al->f[p->file] : NULL;
		uint64_t u[PROC_U64] = {
			p->pid, p->ppid, p->rank, p->cupti_version, p->cuda_driver, p->clock_id,
			p->start_ns, p->end_ns, p->end_records, p->end_lost, p->lost_sum,
			p->chunk_lost, (uint64_t)p->has_process, (uint64_t)p->finished,
			(uint64_t)p->has_config, p->config.trace, p->config.graph_mode,
			p->config.backtrace, p->config.flush_ms, p->clock_syncs, p->activities,
			p->api_calls, p->nwindows, p->gaps, p->gap_ns, (uint64_t)p->has_flight,
			p->flight.dump, p->flight.trigger, p->flight.detail, p->flight.start,
			p->flight.end, p->flight.size, p->flight.dropped_records,
			p->flight.dropped_chunks, p->flight.dropped_bytes,
			af ? (uint64_t)af->has_sync : 0, af ? (uint64_t)af->sync_ns : 0,
			af && af->has_sync && p->clock_id != GP_CLOCK_REALTIME,
		};
		int64_t sh = shift_of(an, (uint32_t)i);

		/* Times back on the trace's clock: merging decides whether to move them. */
		for (int t = 6; t <= 7; t++)
			u[t] = u[t] ? u[t] - (uint64_t)sh : 0;
		if (p->has_flight) {
			u[29] -= (uint64_t)sh;
			u[30] -= (uint64_t)sh;
		}

		o->k = (struct okey){ org, (uint32_t)i };
		o->file = p->file;
		o->host = S(s, m, p->host, &err);
		o->exe = S(s, m, p->exe, &err);
		o->cmdline = S(s, m, p->cmdline, &err);
		o->ahost = af ? Sc(s, af->host, &err) : 0;
		memcpy(o->u, u, sizeof(u));
	}
	if (!(s->wins = calloc(m->nwindows + 1, sizeof(*s->wins))))
		goto fail;
	for (i = 0; i < m->nwindows; i++) {
		const struct ga_window *w = &m->windows[i];
		struct swin *o = &s->wins[s->nwins++];

		o->proc = w->proc;
		o->start = w->start - (uint64_t)shift_of(an, w->proc);
		o->end = w->end - (uint64_t)shift_of(an, w->proc);
		o->kind = w->kind;
		o->name = S(s, m, w->name, &err);
	}
	if (!(s->devs = calloc(m->ndevs + 1, sizeof(*s->devs))) ||
	    !(devmap = calloc(m->ndevs + 1, sizeof(*devmap))))
		goto fail;
	for (i = 0; i < m->ndevs; i++) {
		const struct ga_device *d = &m->devs[i];
		struct sdev *o;
		uint64_t u[DEV_U64] = {
			d->id, (uint64_t)d->described, d->cc_major, d->cc_minor, d->sm_count,
			d->core_clock_khz, d->l2_size, d->flags, d->global_mem, d->mem_bandwidth,
			d->max_warps_per_sm, d->max_blocks_per_sm, d->max_smem_per_sm,
			d->max_regs_per_sm, d->busy_ns, d->count, d->total,
		};

		if (d->dead)
			continue;
		devmap[i] = (uint32_t)nd++;
		o = &s->devs[s->ndevs++];
		o->k = (struct okey){ org, (uint32_t)i };
		o->proc = d->proc;
		o->host = S(s, m, d->host, &err);
		o->name = S(s, m, d->name, &err);
		memcpy(o->uuid, d->uuid, 16);
		memcpy(o->u, u, sizeof(u));
	}
	if (!(s->devrows = calloc(m->ndevrows + 1, sizeof(*s->devrows))))
		goto fail;
	for (i = 0; i < m->ndevrows; i++) {
		const struct ga_devrow *r = &m->devrows[i];

		if (m->devs[r->dev].dead)
			goto fail; /* the model moves rows off merged devices */
		s->devrows[s->ndevrows++] = (struct sdevrow){ .proc = r->proc,
							      .dev = devmap[r->dev],
							      .id = r->id,
							      .count = r->count,
							      .total = r->total };
		/* One trace: a device is one process's (model/model.h), its intervals this row's. */
		if (d_busy_copy(&s->devrows[s->ndevrows - 1], &m->devs[r->dev].busy,
				shift_of(an, r->proc)))
			goto fail;
	}
	if (!(s->labels = calloc(m->nlabels + 1, sizeof(*s->labels))))
		goto fail;
	for (i = 0; i < m->nlabels; i++)
		s->labels[s->nlabels++] = (struct slabel){ S(s, m, m->labels[i].str, &err),
							   m->labels[i].count, m->labels[i].total };
	if (!(s->ks = calloc(m->nkstats + 1, sizeof(*s->ks))))
		goto fail;
	for (i = 0; i < m->nkstats; i++) {
		const struct ga_kstat *k = &m->kstats[i];
		struct skstat *o;

		if (!k->count)
			continue;
		o = &s->ks[s->nks++];

		o->name = S(s, m, k->name, &err);
		o->label = S(s, m, m->labels[k->label].str, &err);
		o->in_graph = k->in_graph;
		if (ga_quant_count(&k->durs) != k->count ||
		    sq_from(&o->q, &k->durs, org, s->limit))
			goto fail;
	}
	if (!(s->mo = calloc(m->nmemops + 1, sizeof(*s->mo))))
		goto fail;
	for (i = 0; i < m->nmemops; i++) {
		const struct ga_memop *k = &m->memops[i];
		struct smemop *o;

		if (!k->count)
			continue;
		o = &s->mo[s->nmo++];

		o->kind = k->kind;
		o->src = k->src;
		o->dst = k->dst;
		o->bytes = k->bytes;
		if (ga_quant_count(&k->durs) != k->count ||
		    sq_from(&o->q, &k->durs, org, s->limit))
			goto fail;
	}
	for (i = 0; i < GA_COPY_KIND_MAX; i++)
		memstat_from(s, m, &s->copy[i], &m->copy[i], &err);
	memstat_from(s, m, &s->memset_st, &m->memset_st, &err);
	for (i = 0; i < 2; i++) {
		memstat_from(s, m, &s->leg[i], &m->leg_st[i], &err);
		s->leg[i].label = label_str(s, m, m->leg_label[i], &err);
	}
	if (!(s->graphs = calloc(m->ngraphs + 1, sizeof(*s->graphs))))
		goto fail;
	for (i = 0; i < m->ngraphs; i++) {
		const struct ga_gstat *g = &m->graphs[i];

		s->graphs[s->ngraphs++] = (struct sgraph){ g->proc, label_str(s, m, g->label, &err),
							   g->graph_id, g->launches, g->total,
							   g->kernels, g->nodes };
	}
	if (!(s->as = calloc(m->nastats + 1, sizeof(*s->as))))
		goto fail;
	for (i = 0; i < m->nastats; i++) {
		const struct ga_astat *a = &m->astats[i];
		struct sastat *o;

		if (!a->count)
			continue;
		o = &s->as[s->nas++];

		o->name = S(s, m, a->name, &err);
		o->errors = a->errors;
		o->threads = a->threads;
		if (ga_quant_count(&a->durs) != a->count ||
		    sq_from(&o->q, &a->durs, org, s->limit))
			goto fail;
	}
	if (ranks_from(s, an, &err) || nvtx_from(s, an, org, &err) ||
	    launches_from(s, an, org, &err) || fstate_from(s, an, devmap, &err) ||
	    sites_from(s, an, org, &err) || mx_from(s, an, org, &err) || mu_from(s, an) ||
	    gs_from(s, an, &err) || ncl_from(s, an))
		goto fail;
	if (err)
		goto fail;
	free(devmap);
	if (made)
		ga_align_free(&al2);
	return s;
fail:
	free(devmap);
	if (made)
		ga_align_free(&al2);
	ga_summary_free(s);
	return NULL;
}

/* ---- merging ---- */

/* Re-intern string id of from into into; 0 stays 0. */
static uint32_t R(struct ga_sum *into, const struct ga_sum *from, uint32_t id, int *err)
{
	uint32_t r;

	if (!id)
		return 0;
	r = ga_strtab_intern_from(&into->s, &from->s, id);
	if (r == GA_STR_NOMEM)
		*err = 1;
	return r;
}

static int okey_cmp(const struct ga_sum *s, struct okey a, struct okey b)
{
	int c = a.origin == b.origin ? 0 :
		strcmp(ga_strtab_get(&s->s, a.origin), ga_strtab_get(&s->s, b.origin));

	if (c)
		return c;
	return a.idx < b.idx ? -1 : a.idx > b.idx;
}

static void sq_remap(struct ga_sum *into, const struct ga_sum *from, struct sq *q, int *err)
{
	for (size_t i = 0; i < q->nseg; i++)
		q->seg[i].origin = R(into, from, q->seg[i].origin, err);
}

static int same_gpu(const struct ga_sum *s, const struct sdev *a, const struct sdev *b)
{
	static const uint8_t zero[16];

	return a->u[1] && b->u[1] && a->host == b->host && !memcmp(a->uuid, b->uuid, 16) &&
	       memcmp(a->uuid, zero, 16) && s;
}

static void memstat_merge(struct ga_sum *into, const struct ga_sum *from, struct smemstat *a,
			  const struct smemstat *b, int *err)
{
	a->count = sat(a->count, b->count);
	a->bytes = sat(a->bytes, b->bytes);
	a->total = sat(a->total, b->total);
	if (!a->label)
		a->label = R(into, from, b->label, err);
}

uint64_t ga_summary_parts(const struct ga_sum *s)
{
	return s->sc[SC_PARTS];
}

/* A described GPU with a UUID: one per host, merged across parts. */
static int gpu_known(const struct sdev *d)
{
	static const uint8_t zero[16];

	return d->u[1] && memcmp(d->uuid, zero, 16);
}

/*
 * Index + 1 of key (k0, k1) in m, which numbers keys in the order they
 * come: a new key gets m->n (the table's next row).  0 out of memory.
 */
static size_t find(struct ga_map *m, uint64_t k0, uint64_t k1)
{
	uint32_t *slot;
	int r = ga_map_insert(m, k0, k1, &slot);

	if (r < 0)
		return 0;
	if (r == 1)
		*slot = (uint32_t)m->n;
	return (size_t)*slot;
}

/* Appends b's per-rank rows to a's (processes of b from pbase on); b's steps move. */
static int ranks_merge(struct ga_sum *a, struct ga_sum *b, uint32_t pbase, int *err)
{
	if (GROW(a->ranks, a->nranks + b->nranks))
		return -1;
	for (size_t i = 0; i < b->nranks; i++) {
		struct srank r = b->ranks[i];

		r.proc += pbase;
		for (size_t j = 0; j < r.nst; j++)
			r.st[j].label = R(a, b, r.st[j].label, err);
		b->ranks[i].st = NULL;   /* a owns them now */
		b->ranks[i].nst = 0;
		a->ranks[a->nranks++] = r;
	}
	return 0;
}

/* A tree node's key in a map: its parent and what it is. */
static size_t node_find(struct ga_map *m, uint32_t parent, uint32_t kind, uint64_t id)
{
	return find(m, (uint64_t)kind << 32 | (uint32_t)(parent + 1), id);
}

/*
 * Merges b's NVTX tables into a's: names and marks by (name, domain),
 * tree nodes by their path (a node's counts are its subtree's, so they
 * add).  0, or -1 out of memory.
 */
static int nvtx_merge(struct ga_sum *a, struct ga_sum *b, int *err)
{
	struct ga_map km = { 0 }, mm = { 0 }, nm = { 0 };
	uint32_t *kmap = calloc(b->nrkeys + 1, sizeof(*kmap));
	uint32_t *nmap = calloc(b->nnodes + 1, sizeof(*nmap));
	size_t i, j;
	int rc = -1;

	if (!kmap || !nmap)
		goto out;
	for (i = 0; i < RSC_COUNT; i++)
		a->rsc[i] = sat(a->rsc[i], b->rsc[i]);
	for (i = 0; i < a->nrkeys; i++)
		if (!find(&km, a->rkeys[i].name, a->rkeys[i].domain))
			goto out;
	for (i = 0; i < a->nmarks; i++)
		if (!find(&mm, a->marks[i].name, a->marks[i].domain))
			goto out;
	for (i = 0; i < a->nnodes; i++)
		if (!node_find(&nm, a->nodes[i].parent, a->nodes[i].kind, a->nodes[i].id))
			goto out;
	for (i = 0; i < b->nrkeys; i++) {
		struct srkey *k = &b->rkeys[i];
		uint32_t name = R(a, b, k->name, err), domain = R(a, b, k->domain, err);

		sq_remap(a, b, &k->q, err);
		if (!(j = find(&km, name, domain)))
			goto out;
		if (--j == a->nrkeys) {
			if (GROW(a->rkeys, a->nrkeys))
				goto out;
			a->rkeys[a->nrkeys++] = (struct srkey){ name, domain, R(a, b, k->label, err),
								{ 0 }, { 0 } };
		}
		kmap[i] = (uint32_t)j;
		for (size_t u = 0; u < RKEY_U64; u++)
			a->rkeys[j].u[u] = sat(a->rkeys[j].u[u], k->u[u]);
		if (sq_merge(&a->rkeys[j].q, &k->q, a->limit))
			goto out;
	}
	for (i = 0; i < b->nmarks; i++) {
		const struct smark *k = &b->marks[i];
		uint32_t name = R(a, b, k->name, err), domain = R(a, b, k->domain, err);

		if (!(j = find(&mm, name, domain)))
			goto out;
		if (--j == a->nmarks) {
			if (GROW(a->marks, a->nmarks))
				goto out;
			a->marks[a->nmarks++] = (struct smark){ name, domain, R(a, b, k->label, err), 0 };
		}
		a->marks[j].count = sat(a->marks[j].count, k->count);
	}
	for (i = 0; i < b->nnodes; i++) {
		const struct snode *x = &b->nodes[i];
		uint32_t parent = x->parent == UINT32_MAX ? UINT32_MAX : nmap[x->parent];
		uint64_t id = x->kind == GA_RANGES_N_RANGE ? kmap[x->id] :
			      x->kind == GA_RANGES_N_KERNEL ? R(a, b, (uint32_t)x->id, err) : x->id;

		if (!(j = node_find(&nm, parent, x->kind, id)))
			goto out;
		if (--j == a->nnodes) {
			if (GROW(a->nodes, a->nnodes))
				goto out;
			a->nodes[a->nnodes++] = (struct snode){ parent, x->kind, id, { 0 } };
		}
		nmap[i] = (uint32_t)j;
		for (size_t u = 0; u < NODE_U64; u++)
			a->nodes[j].u[u] = sat(a->nodes[j].u[u], x->u[u]);
	}
	rc = 0;
out:
	ga_map_free(&km);
	ga_map_free(&mm);
	ga_map_free(&nm);
	free(kmap);
	free(nmap);
	return rc;
}

/* A launch configuration's key: FNV-1a over its numbers. */
static uint64_t lcfg_hash(const struct slcfg *c)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < LCFG_KEY; i++)
		h = (h ^ c->u[i]) * 0x100000001b3ull;
	return h;
}

/*
 * Merges b's launch latency (by kernel name) and launch configurations
 * (by name and configuration; the occupancy of the part whose traces come
 * first, as traces read together take their first launch's) into a.
 */
static int launches_merge(struct ga_sum *a, struct ga_sum *b, int *err)
{
	struct ga_map lm = { 0 }, cm = { 0 };
	size_t i, j;
	int rc = -1;

	for (i = 0; i < LSC_COUNT; i++)
		a->lsc[i] = sat(a->lsc[i], b->lsc[i]);
	for (i = 0; i < a->nlat; i++)
		if (!find(&lm, a->lat[i].name, 0))
			goto out;
	for (i = 0; i < a->nlcfg; i++) {
		uint32_t *slot;
		int r = ga_map_insert(&cm, lcfg_hash(&a->lcfg[i]), a->lcfg[i].name, &slot);

		if (r < 0)
			goto out;
		if (r == 1)
			*slot = (uint32_t)i + 1;
	}
	for (i = 0; i < b->nlat; i++) {
		struct slat *x = &b->lat[i];
		uint32_t name = R(a, b, x->name, err);

		sq_remap(a, b, &x->q, err);
		if (!(j = find(&lm, name, 0)))
			goto out;
		if (--j == a->nlat) {
			if (GROW(a->lat, a->nlat))
				goto out;
			a->lat[a->nlat++] = (struct slat){ name, { 0 } };
		}
		if (sq_merge(&a->lat[j].q, &x->q, a->limit))
			goto out;
	}
	for (i = 0; i < b->nlcfg; i++) {
		struct slcfg c = b->lcfg[i];
		uint32_t *slot;
		int r;

		c.name = R(a, b, c.name, err);
		c.origin = R(a, b, c.origin, err);
		if ((r = ga_map_insert(&cm, lcfg_hash(&c), c.name, &slot)) < 0)
			goto out;
		j = r ? a->nlcfg : *slot - 1;
		/* A hash shared by two configurations: look for the same one. */
		if (j < a->nlcfg && memcmp(a->lcfg[j].u, c.u, LCFG_KEY * sizeof(c.u[0])))
			for (j = 0; j < a->nlcfg; j++)
				if (a->lcfg[j].name == c.name &&
				    !memcmp(a->lcfg[j].u, c.u, LCFG_KEY * sizeof(c.u[0])))
					break;
		if (j == a->nlcfg) {
			if (GROW(a->lcfg, a->nlcfg))
				goto out;
			if (r)
				*slot = (uint32_t)a->nlcfg + 1;
			a->lcfg[a->nlcfg++] = c;
			continue;
		}
		c.u[9] = sat(c.u[9], a->lcfg[j].u[9]);
		c.u[10] = sat(c.u[10], a->lcfg[j].u[10]);
		if (strcmp(ga_strtab_get(&a->s, c.origin), ga_strtab_get(&a->s, a->lcfg[j].origin)) < 0)
			a->lcfg[j] = c;
		else
			memcpy(&a->lcfg[j].u[9], &c.u[9], 2 * sizeof(c.u[0]));
	}
	rc = 0;
out:
	ga_map_free(&lm);
	ga_map_free(&cm);
	return rc;
}

/*
 * Launch sites merged by their texts, each one's kernels by name; a site
 * lists the frames of the part whose stack launched most of its time, of
 * the first trace (by path) where two did as much, as traces read together
 * list the heaviest stack's, the first read.
 */
static int sites_merge(struct ga_sum *a, struct ga_sum *b, int *err)
{
	struct ga_map sm = { 0 }, km = { 0 };
	uint32_t *bmap = NULL;
	size_t i, j;
	int rc = -1;

	a->no_sites |= b->no_sites;
	if (b->ssc[0] > a->ssc[0])
		a->ssc[0] = b->ssc[0];
	for (i = 1; i < SSC_COUNT; i++)
		a->ssc[i] = sat(a->ssc[i], b->ssc[i]);
	if (!b->nsites && !b->nsmods)
		return 0;
	if (!(bmap = calloc(b->nsites + 1, sizeof(*bmap))))
		goto out;
	for (i = 0; i < a->nsites; i++)
		if (!find(&sm, a->sites[i].str, 0))
			goto out;
	for (i = 0; i < a->nskern; i++)
		if (!find(&km, (uint64_t)a->skern[i].site << 32 | a->skern[i].name, 0))
			goto out;
	for (i = 0; i < b->nsites; i++) {
		struct ssite x = b->sites[i];
		int take;

		x.str = R(a, b, x.str, err);
		x.origin = R(a, b, x.origin, err);
		if (!(j = find(&sm, x.str, 0)))
			goto out;
		if (--j == a->nsites) {
			if (GROW(a->sites, a->nsites))
				goto out;
			a->sites[a->nsites++] = (struct ssite){ x.str, x.origin, { 0 }, 0, 0 };
			take = 1;
		} else {
			const struct ssite *y = &a->sites[j];

			take = x.u[2] > y->u[2] ||
			       (x.u[2] == y->u[2] && x.u[2] &&
				strcmp(ga_strtab_get(&a->s, x.origin), ga_strtab_get(&a->s, y->origin)) < 0);
		}
		bmap[i] = (uint32_t)j;
		a->sites[j].u[0] = sat(a->sites[j].u[0], x.u[0]);
		a->sites[j].u[1] = sat(a->sites[j].u[1], x.u[1]);
		if (take) {
			struct ssite *y = &a->sites[j];

			y->origin = x.origin;
			y->u[2] = x.u[2];
			y->foff = (uint32_t)a->nsframes;
			y->nf = x.nf;
			for (size_t f = 0; f < x.nf; f++) {
				if (GROW(a->sframes, a->nsframes))
					goto out;
				a->sframes[a->nsframes++] = R(a, b, b->sframes[x.foff + f], err);
			}
		}
	}
	for (i = 0; i < b->nskern; i++) {
		struct sskern k = b->skern[i];

		if (k.site >= b->nsites)
			goto out;
		k.site = bmap[k.site];
		k.name = R(a, b, k.name, err);
		if (!(j = find(&km, (uint64_t)k.site << 32 | k.name, 0)))
			goto out;
		if (--j == a->nskern) {
			if (GROW(a->skern, a->nskern))
				goto out;
			a->skern[a->nskern++] = (struct sskern){ k.site, k.name, 0, 0 };
		}
		a->skern[j].count = sat(a->skern[j].count, k.count);
		a->skern[j].ns = sat(a->skern[j].ns, k.ns);
	}
	/* Modules named alike with the same verdict are one (a library two processes load). */
	for (i = 0; i < b->nsmods; i++) {
		struct smod x = { R(a, b, b->smods[i].name, err), R(a, b, b->smods[i].why, err),
				  b->smods[i].verdict };

		for (j = 0; j < a->nsmods; j++)
			if (a->smods[j].name == x.name && a->smods[j].why == x.why &&
			    a->smods[j].verdict == x.verdict)
				break;
		if (j == a->nsmods) {
			if (GROW(a->smods, a->nsmods))
				goto out;
			a->smods[a->nsmods++] = x;
		}
	}
	rc = 0;
out:
	free(bmap);
	ga_map_free(&sm);
	ga_map_free(&km);
	return rc;
}

/*
 * Hardware metrics: sums; the metric set, passes and launch selection of
 * the first trace by path that says them, its status the first one's;
 * rows of b's processes appended; metric names once, where first used.
 */
static int mx_merge(struct ga_sum *a, struct ga_sum *b, uint32_t pbase, int *err)
{
	size_t i, j, vbase = a->nmxv;

	if (b->mxs[0]) {
		uint32_t o = R(a, b, b->mx_origin, err);

		if (!a->mxs[0] || strcmp(ga_strtab_get(&a->s, o), ga_strtab_get(&a->s, a->mx_origin)) < 0) {
			a->mx_set = R(a, b, b->mx_set, err);
			a->mx_origin = o;
			a->mxs[1] = b->mxs[1];
			a->mxs[3] = b->mxs[3];
		}
	}
	if (b->mxs[2]) {
		uint32_t o = R(a, b, b->mx_status_origin, err);

		if (!a->mxs[2] ||
		    strcmp(ga_strtab_get(&a->s, o), ga_strtab_get(&a->s, a->mx_status_origin)) < 0) {
			a->mxs[2] = b->mxs[2];
			a->mx_status_origin = o;
		}
	}
	a->mxs[0] |= b->mxs[0];
	for (i = 4; i < MXS_COUNT; i++)
		a->mxs[i] = sat(a->mxs[i], b->mxs[i]);
	for (i = 0; i < b->nmxn; i++) {
		struct smxn x = { R(a, b, b->mxn[i].name, err), R(a, b, b->mxn[i].origin, err),
				  b->mxn[i].idx };

		for (j = 0; j < a->nmxn && a->mxn[j].name != x.name; j++)
			;
		if (j == a->nmxn) {
			if (GROW(a->mxn, a->nmxn))
				return -1;
			a->mxn[a->nmxn++] = x;
		} else if (okey_cmp(a, (struct okey){ x.origin, (uint32_t)x.idx },
				    (struct okey){ a->mxn[j].origin, (uint32_t)a->mxn[j].idx }) < 0) {
			a->mxn[j] = x;
		}
	}
	for (i = 0; i < b->nmxv; i++) {
		if (GROW(a->mxv, a->nmxv))
			return -1;
		a->mxv[a->nmxv++] = (struct smxv){ R(a, b, b->mxv[i].name, err), b->mxv[i].bits };
	}
	for (i = 0; i < b->nmxk; i++) {
		struct smxk k = b->mxk[i];

		if (GROW(a->mxk, a->nmxk))
			return -1;
		k.name = R(a, b, k.name, err);
		k.proc += pbase;
		k.vlo += (uint32_t)vbase;
		a->mxk[a->nmxk++] = k;
	}
	for (i = 0; i < b->nmxp; i++) {
		struct smxp x = b->mxp[i];

		if (GROW(a->mxp, a->nmxp))
			return -1;
		x.chip = R(a, b, x.chip, err);
		x.proc += pbase;
		a->mxp[a->nmxp++] = x;
	}
	return 0;
}

/* The GPU over time: b's processes' series appended, with their averages. */
static int gs_merge(struct ga_sum *a, struct ga_sum *b, uint32_t pbase, int *err)
{
	size_t i, sbase = a->ngss, mbase = a->ngsm, vbase = a->ngsv;

	for (i = 0; i < GSSC_COUNT; i++)
		a->gssc[i] = sat(a->gssc[i], b->gssc[i]);
	for (i = 0; i < b->ngss; i++) {
		struct sgss x = b->gss[i];

		if (GROW(a->gss, a->ngss))
			return -1;
		x.proc += pbase;
		x.mlo += (uint32_t)mbase;
		a->gss[a->ngss++] = x;
	}
	for (i = 0; i < b->ngsm; i++) {
		struct sgsm x = b->gsm[i];

		if (GROW(a->gsm, a->ngsm))
			return -1;
		x.name = R(a, b, x.name, err);
		a->gsm[a->ngsm++] = x;
	}
	for (i = 0; i < b->ngsv; i++) {
		if (GROW(a->gsv, a->ngsv))
			return -1;
		a->gsv[a->ngsv++] = b->gsv[i];
	}
	for (i = 0; i < b->ngsa; i++) {
		struct sgsa x = b->gsa[i];

		if (GROW(a->gsa, a->ngsa))
			return -1;
		x.key = R(a, b, x.key, err);
		x.series += (uint32_t)sbase;
		x.vlo += (uint32_t)vbase;
		a->gsa[a->ngsa++] = x;
	}
	return 0;
}

/* Memory in use: b's processes' rows appended. */
static int mu_merge(struct ga_sum *a, struct ga_sum *b, uint32_t pbase)
{
	size_t i, abase = a->nmua;

	a->mu_records = sat(a->mu_records, b->mu_records);
	a->mu_host = sat(a->mu_host, b->mu_host);
	for (i = 0; i < b->nmua; i++) {
		if (GROW(a->mua, a->nmua))
			return -1;
		a->mua[a->nmua++] = b->mua[i];
	}
	for (i = 0; i < b->nmud; i++) {
		struct smud d = b->mud[i];

		if (GROW(a->mud, a->nmud))
			return -1;
		d.proc += pbase;
		d.alo += (uint32_t)abase;
		a->mud[a->nmud++] = d;
	}
	return 0;
}

static int ncl_merge(struct ga_sum *a, struct ga_sum *b, uint32_t fbase)
{
	size_t cap = a->nnclv;

	a->no_nccl |= b->no_nccl;
	if (!b->nncl)
		return 0;
	if (ga_util_grow(&a->nclv, &cap, a->nnclv + b->nnclv + 1, 2 * sizeof(*a->nclv)) ||
	    GROW(a->ncl, a->nncl + b->nncl))
		return -1;
	memcpy(a->nclv + 2 * a->nnclv, b->nclv, 2 * b->nnclv * sizeof(*a->nclv));
	for (size_t i = 0; i < b->nncl; i++) {
		struct sncl c = b->ncl[i];

		c.file += fbase;
		c.off += a->nnclv;
		a->ncl[a->nncl++] = c;
	}
	a->nnclv += b->nnclv;
	return 0;
}

int ga_summary_merge(struct ga_sum *a, struct ga_sum *b)
{
	size_t pbase = a->nprocs, fbase = a->nfiles, i, j;
	uint32_t *dmap = NULL;
	/* Rows of a by key: GPUs, labels, kernels, memory operations, API functions. */
	struct ga_map maps[5] = { { 0 } };
	int err = 0;

	if (!b)
		return 0;
	for (i = 0; i < a->ndevs; i++) {
		uint32_t *slot;
		uint64_t k0, k1;

		if (!gpu_known(&a->devs[i]))
			continue;
		memcpy(&k0, a->devs[i].uuid, 8);
		memcpy(&k1, a->devs[i].uuid + 8, 8);
		if (ga_map_insert(&maps[0], k0 ^ ((uint64_t)a->devs[i].host << 32), k1, &slot) < 0)
			goto fail;
		if (!*slot)
			*slot = (uint32_t)i + 1;
	}
	for (i = 0; i < a->nlabels; i++)
		if (!find(&maps[1], a->labels[i].str, 0))
			goto fail;
	for (i = 0; i < a->nks; i++)
		if (!find(&maps[2], a->ks[i].name, 0))
			goto fail;
	for (i = 0; i < a->nmo; i++)
		if (!find(&maps[3], a->mo[i].kind, a->mo[i].src << 32 | a->mo[i].dst))
			goto fail;
	for (i = 0; i < a->nas; i++)
		if (!find(&maps[4], a->as[i].name, 0))
			goto fail;
	/* Sums, except: saturation ORs, the span is a minimum and a maximum. */
	for (i = 0; i < SC_COUNT; i++) {
		if (i == SC_FIRST || i == SC_LAST)
			continue;
		a->sc[i] = i == SC_SATURATED ? (a->sc[i] | b->sc[i]) : sat(a->sc[i], b->sc[i]);
	}
	if (b->sc[SC_FIRST] || b->sc[SC_LAST]) {
		if ((!a->sc[SC_FIRST] && !a->sc[SC_LAST]) || b->sc[SC_FIRST] < a->sc[SC_FIRST])
			a->sc[SC_FIRST] = b->sc[SC_FIRST];
		if (b->sc[SC_LAST] > a->sc[SC_LAST])
			a->sc[SC_LAST] = b->sc[SC_LAST];
	}
	a->limit = b->limit < a->limit ? b->limit : a->limit;

	if (GROW(a->files, a->nfiles + b->nfiles))
		goto fail;
	for (i = 0; i < b->nfiles; i++) {
		struct sfile f = b->files[i];

		f.k.origin = R(a, b, f.k.origin, &err);
		f.path = R(a, b, f.path, &err);
		f.reason = R(a, b, f.reason, &err);
		a->files[a->nfiles++] = f;
	}
	if (GROW(a->procs, a->nprocs + b->nprocs))
		goto fail;
	for (i = 0; i < b->nprocs; i++) {
		struct sproc p = b->procs[i];

		p.k.origin = R(a, b, p.k.origin, &err);
		p.file += (uint32_t)fbase;
		p.host = R(a, b, p.host, &err);
		p.exe = R(a, b, p.exe, &err);
		p.cmdline = R(a, b, p.cmdline, &err);
		p.ahost = R(a, b, p.ahost, &err);
		a->procs[a->nprocs++] = p;
	}
	if (GROW(a->wins, a->nwins + b->nwins))
		goto fail;
	for (i = 0; i < b->nwins; i++) {
		struct swin w = b->wins[i];

		w.proc += (uint32_t)pbase;
		w.name = R(a, b, w.name, &err);
		a->wins[a->nwins++] = w;
	}
	if (!(dmap = calloc(b->ndevs + 1, sizeof(*dmap))) || GROW(a->devs, a->ndevs + b->ndevs))
		goto fail;
	for (i = 0; i < b->ndevs; i++) {
		struct sdev d = b->devs[i];

		d.k.origin = R(a, b, d.k.origin, &err);
		d.proc += (uint32_t)pbase;
		d.host = R(a, b, d.host, &err);
		d.name = R(a, b, d.name, &err);
		j = a->ndevs;
		if (gpu_known(&d)) {
			uint32_t *slot;
			uint64_t k0, k1;

			memcpy(&k0, d.uuid, 8);
			memcpy(&k1, d.uuid + 8, 8);
			if (ga_map_insert(&maps[0], k0 ^ ((uint64_t)d.host << 32), k1, &slot) < 0)
				goto fail;
			if (*slot && same_gpu(a, &a->devs[*slot - 1], &d))
				j = *slot - 1;
			else if (!*slot)
				*slot = (uint32_t)a->ndevs + 1;
		}
		if (j == a->ndevs) {
			a->devs[a->ndevs++] = d;
			dmap[i] = (uint32_t)j;
			continue;
		}
		/* One GPU of one host used by processes of both: the first names it. */
		dmap[i] = (uint32_t)j;
		a->fs[FS_SHARED] = sat(a->fs[FS_SHARED], 1);
		d.u[15] = sat(d.u[15], a->devs[j].u[15]);
		d.u[16] = sat(d.u[16], a->devs[j].u[16]);
		if (okey_cmp(a, d.k, a->devs[j].k) < 0) {
			a->devs[j] = d;
		} else {
			a->devs[j].u[15] = d.u[15];
			a->devs[j].u[16] = d.u[16];
		}
	}
	if (GROW(a->devrows, a->ndevrows + b->ndevrows))
		goto fail;
	for (i = 0; i < b->ndevrows; i++) {
		struct sdevrow r = b->devrows[i];

		r.proc += (uint32_t)pbase;
		r.dev = dmap[r.dev];
		b->devrows[i].iv = NULL;   /* a owns them now */
		a->devrows[a->ndevrows++] = r;
	}
	for (i = 0; i < b->nlabels; i++) {
		uint32_t str = R(a, b, b->labels[i].str, &err);

		if (!(j = find(&maps[1], str, 0)))
			goto fail;
		if (--j == a->nlabels) {
			if (GROW(a->labels, a->nlabels))
				goto fail;
			a->labels[a->nlabels++] = (struct slabel){ str, 0, 0 };
		}
		a->labels[j].count = sat(a->labels[j].count, b->labels[i].count);
		a->labels[j].total = sat(a->labels[j].total, b->labels[i].total);
	}
	for (i = 0; i < b->nks; i++) {
		struct skstat *k = &b->ks[i];
		uint32_t name = R(a, b, k->name, &err);

		sq_remap(a, b, &k->q, &err);
		if (!(j = find(&maps[2], name, 0)))
			goto fail;
		if (--j == a->nks) {
			if (GROW(a->ks, a->nks))
				goto fail;
			a->ks[a->nks++] = (struct skstat){ name, R(a, b, k->label, &err), 0, { 0 } };
		}
		a->ks[j].in_graph = sat(a->ks[j].in_graph, k->in_graph);
		if (sq_merge(&a->ks[j].q, &k->q, a->limit))
			goto fail;
	}
	for (i = 0; i < b->nmo; i++) {
		struct smemop *o = &b->mo[i];

		sq_remap(a, b, &o->q, &err);
		if (!(j = find(&maps[3], o->kind, o->src << 32 | o->dst)))
			goto fail;
		if (--j == a->nmo) {
			if (GROW(a->mo, a->nmo))
				goto fail;
			a->mo[a->nmo++] = (struct smemop){ o->kind, o->src, o->dst, 0, { 0 } };
		}
		a->mo[j].bytes = sat(a->mo[j].bytes, o->bytes);
		if (sq_merge(&a->mo[j].q, &o->q, a->limit))
			goto fail;
	}
	for (i = 0; i < GA_COPY_KIND_MAX; i++)
		memstat_merge(a, b, &a->copy[i], &b->copy[i], &err);
	memstat_merge(a, b, &a->memset_st, &b->memset_st, &err);
	for (i = 0; i < 2; i++)
		memstat_merge(a, b, &a->leg[i], &b->leg[i], &err);
	if (GROW(a->graphs, a->ngraphs + b->ngraphs))
		goto fail;
	for (i = 0; i < b->ngraphs; i++) {
		struct sgraph g = b->graphs[i];

		g.proc += (uint32_t)pbase;
		g.label = R(a, b, g.label, &err);
		a->graphs[a->ngraphs++] = g;
	}
	for (i = 0; i < b->nas; i++) {
		struct sastat *x = &b->as[i];
		uint32_t name = R(a, b, x->name, &err);

		sq_remap(a, b, &x->q, &err);
		if (!(j = find(&maps[4], name, 0)))
			goto fail;
		if (--j == a->nas) {
			if (GROW(a->as, a->nas))
				goto fail;
			a->as[a->nas++] = (struct sastat){ name, 0, 0, { 0 } };
		}
		a->as[j].errors = sat(a->as[j].errors, x->errors);
		a->as[j].threads = sat(a->as[j].threads, x->threads);
		if (sq_merge(&a->as[j].q, &x->q, a->limit))
			goto fail;
	}
	if (ranks_merge(a, b, (uint32_t)pbase, &err) || nvtx_merge(a, b, &err) ||
	    launches_merge(a, b, &err) || fstate_merge(a, b, dmap, (uint32_t)pbase, &err) ||
	    sites_merge(a, b, &err) || mx_merge(a, b, (uint32_t)pbase, &err) ||
	    mu_merge(a, b, (uint32_t)pbase) || gs_merge(a, b, (uint32_t)pbase, &err) ||
	    ncl_merge(a, b, (uint32_t)fbase))
		goto fail;
	free(dmap);
	for (i = 0; i < 5; i++)
		ga_map_free(&maps[i]);
	ga_summary_free(b);
	return err ? -1 : 0;
fail:
	free(dmap);
	for (i = 0; i < 5; i++)
		ga_map_free(&maps[i]);
	ga_summary_free(b);
	return -1;
}

/* ---- canonical order ---- */

static const struct ga_sum *sort_s;

/* Processes in the order of their traces, as a model reads them (paths sorted). */
static int cmp_proc(const void *pa, const void *pb)
{
	const struct sproc *a = pa, *b = pb;

	return okey_cmp(sort_s, a->k, b->k);
}

static int cmp_okey(const void *pa, const void *pb)
{
	return okey_cmp(sort_s, *(const struct okey *)pa, *(const struct okey *)pb);
}

static int cmp_file(const void *pa, const void *pb)
{
	const struct sfile *a = pa, *b = pb;

	return okey_cmp(sort_s, a->k, b->k);
}

static int cmp_dev(const void *pa, const void *pb)
{
	const struct sdev *a = pa, *b = pb;

	return okey_cmp(sort_s, a->k, b->k);
}

static int cmp_seg(const void *pa, const void *pb)
{
	const struct sseg *a = pa, *b = pb;
	int c = a->origin == b->origin ? 0 :
		strcmp(ga_strtab_get(&sort_s->s, a->origin), ga_strtab_get(&sort_s->s, b->origin));

	if (c)
		return c;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	return 0;
}

static int cmp_label_s(const void *pa, const void *pb)
{
	const struct slabel *a = pa, *b = pb;

	return strcmp(ga_strtab_get(&sort_s->s, a->str), ga_strtab_get(&sort_s->s, b->str));
}

static int cmp_ks(const void *pa, const void *pb)
{
	const struct skstat *a = pa, *b = pb;

	return strcmp(ga_strtab_get(&sort_s->s, a->name), ga_strtab_get(&sort_s->s, b->name));
}

static int cmp_as(const void *pa, const void *pb)
{
	const struct sastat *a = pa, *b = pb;

	return strcmp(ga_strtab_get(&sort_s->s, a->name), ga_strtab_get(&sort_s->s, b->name));
}

static int cmp_mo(const void *pa, const void *pb)
{
	const struct smemop *a = pa, *b = pb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return a->dst < b->dst ? -1 : a->dst > b->dst;
}

/* Sorts n elements of size sz at base by cmp; perm[old] = new index. */
static const void *perm_base;
static size_t perm_sz;
static int (*perm_cmp)(const void *, const void *);

static int cmp_perm(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = perm_cmp((const char *)perm_base + a * perm_sz, (const char *)perm_base + b * perm_sz);

	return c ? c : a < b ? -1 : a > b;
}

static int perm_sort(void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *),
		     uint32_t *perm)
{
	uint32_t *ord, i;
	char *t;

	if (!n)
		return 0;
	ord = malloc((n + 1) * sizeof(*ord));
	t = malloc((n + 1) * sz);

	if (!ord || !t) {
		free(ord);
		free(t);
		return -1;
	}
	for (i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	perm_base = base;
	perm_sz = sz;
	perm_cmp = cmp;
	qsort(ord, n, sizeof(*ord), cmp_perm);
	for (i = 0; i < n; i++) {
		memcpy(t + i * sz, (char *)base + ord[i] * sz, sz);
		if (perm)
			perm[ord[i]] = (uint32_t)i;
	}
	memcpy(base, t, n * sz);
	free(ord);
	free(t);
	return 0;
}

/* Rows of a process: by process, then their order within the part. */
static uint32_t *pk_proc;

#define BY_PROC_CMP(name, T)                                            \
	static int name(const void *pa, const void *pb)                 \
	{                                                               \
		const T *a = pa, *b = pb;                               \
		uint32_t x = pk_proc[a->proc], y = pk_proc[b->proc];    \
		return x < y ? -1 : x > y;                              \
	}
BY_PROC_CMP(cmp_win, struct swin)
BY_PROC_CMP(cmp_graph, struct sgraph)
BY_PROC_CMP(cmp_devrow, struct sdevrow)
BY_PROC_CMP(cmp_srank, struct srank)
/* A process's rows come from one part, in its order: the stable sort keeps them so. */
BY_PROC_CMP(cmp_mxk, struct smxk)
BY_PROC_CMP(cmp_mxp, struct smxp)
BY_PROC_CMP(cmp_gss, struct sgss)
BY_PROC_CMP(cmp_mud, struct smud)

/* A part merged under a lower limit: the rule is all exact and n <= limit. */
static int to_sketch_over(struct sq *q, uint64_t limit)
{
	return !q->sketch && q->n > limit ? to_sketch(q) : 0;
}

static int cmp_str2(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1)
{
	int c = strcmp(ga_strtab_get(&sort_s->s, a0), ga_strtab_get(&sort_s->s, b0));

	return c ? c : strcmp(ga_strtab_get(&sort_s->s, a1), ga_strtab_get(&sort_s->s, b1));
}

static int cmp_rkey(const void *pa, const void *pb)
{
	const struct srkey *a = pa, *b = pb;

	return cmp_str2(a->name, a->domain, b->name, b->domain);
}

static int cmp_mark(const void *pa, const void *pb)
{
	const struct smark *a = pa, *b = pb;

	return cmp_str2(a->name, a->domain, b->name, b->domain);
}

/* Nodes of one depth: by their parent's new index, kind, then what they are. */
static const uint32_t *node_new;

static int cmp_node_s(const void *pa, const void *pb)
{
	const struct snode *a = pa, *b = pb;
	uint32_t x = a->parent == UINT32_MAX ? 0 : node_new[a->parent] + 1;
	uint32_t y = b->parent == UINT32_MAX ? 0 : node_new[b->parent] + 1;

	if (x != y)
		return x < y ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == GA_RANGES_N_KERNEL)
		return strcmp(ga_strtab_get(&sort_s->s, (uint32_t)a->id),
			      ga_strtab_get(&sort_s->s, (uint32_t)b->id));
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * The NVTX tables in an order of their contents alone: names and marks by
 * name and domain, the tree by depth, then parent, kind and what a node is
 * (a range: its name's new index), so parents still come first.  0 or -1.
 */
static int nvtx_canonical(struct ga_sum *s)
{
	uint32_t *kperm = calloc(s->nrkeys + 1, sizeof(*kperm));
	uint32_t *depth = calloc(s->nnodes + 1, sizeof(*depth));
	uint32_t *nnew = calloc(s->nnodes + 1, sizeof(*nnew));
	uint32_t *ord = calloc(s->nnodes + 1, sizeof(*ord));
	uint32_t *p = calloc(s->nnodes + 1, sizeof(*p));
	/* Node indices by depth, then index; where each depth starts in it. */
	uint32_t *byd = calloc(s->nnodes + 1, sizeof(*byd));
	uint32_t *start = calloc(s->nnodes + 2, sizeof(*start));
	struct snode *out = calloc(s->nnodes + 1, sizeof(*out)), *lvl = NULL;
	size_t i, done = 0, d, maxd = 0;
	int rc = -1;

	if (!kperm || !depth || !nnew || !ord || !p || !byd || !start || !out ||
	    perm_sort(s->rkeys, s->nrkeys, sizeof(*s->rkeys), cmp_rkey, kperm) ||
	    perm_sort(s->marks, s->nmarks, sizeof(*s->marks), cmp_mark, NULL))
		goto out;
	for (i = 0; i < s->nrkeys; i++)
		if (to_sketch_over(&s->rkeys[i].q, s->limit) ||
		    perm_sort(s->rkeys[i].q.seg, s->rkeys[i].q.nseg, sizeof(struct sseg), cmp_seg, NULL))
			goto out;
	for (i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];

		if (n->kind == GA_RANGES_N_RANGE)
			n->id = kperm[n->id];
		depth[i] = n->parent == UINT32_MAX ? 0 : depth[n->parent] + 1;
		if (depth[i] > maxd)
			maxd = depth[i];
		start[depth[i] + 1]++;
	}
	/*
	 * Levels in one counting sort: a scan of every node per level made a
	 * tree as deep as it has nodes (a chain) quadratic.
	 */
	for (d = 0; d <= maxd; d++)
		start[d + 1] += start[d];
	for (i = 0; i < s->nnodes; i++)
		byd[start[depth[i]]++] = (uint32_t)i;
	for (d = maxd + 1; d > 0; d--)
		start[d] = start[d - 1];
	start[0] = 0;
	if (!(lvl = calloc(s->nnodes + 1, sizeof(*lvl))))
		goto out;
	node_new = nnew;
	for (d = 0; done < s->nnodes; d++) {
		size_t n = start[d + 1] - start[d];

		for (i = 0; i < n; i++) {
			ord[i] = byd[start[d] + i];
			lvl[i] = s->nodes[ord[i]];
		}
		if (perm_sort(lvl, n, sizeof(*lvl), cmp_node_s, p))
			goto out;
		for (i = 0; i < n; i++)
			nnew[ord[i]] = (uint32_t)(done + p[i]);
		for (i = 0; i < n; i++) {
			out[done + i] = lvl[i];
			if (lvl[i].parent != UINT32_MAX)
				out[done + i].parent = nnew[lvl[i].parent];
		}
		done += n;
	}
	memcpy(s->nodes, out, s->nnodes * sizeof(*out));
	rc = 0;
out:
	free(kperm);
	free(depth);
	free(nnew);
	free(ord);
	free(p);
	free(byd);
	free(start);
	free(out);
	free(lvl);
	return rc;
}

static int cmp_lat(const void *pa, const void *pb)
{
	const struct slat *a = pa, *b = pb;

	return strcmp(ga_strtab_get(&sort_s->s, a->name), ga_strtab_get(&sort_s->s, b->name));
}

static int cmp_lcfg(const void *pa, const void *pb)
{
	const struct slcfg *a = pa, *b = pb;
	int c = strcmp(ga_strtab_get(&sort_s->s, a->name), ga_strtab_get(&sort_s->s, b->name));

	for (size_t i = 0; !c && i < LCFG_KEY; i++)
		c = a->u[i] < b->u[i] ? -1 : a->u[i] > b->u[i];
	return c;
}

/* Launch latency by kernel name, launch configurations by name and configuration. */
static int launches_canonical(struct ga_sum *s)
{
	qsort(s->lat, s->nlat, sizeof(*s->lat), cmp_lat);
	qsort(s->lcfg, s->nlcfg, sizeof(*s->lcfg), cmp_lcfg);
	for (size_t i = 0; i < s->nlat; i++)
		if (to_sketch_over(&s->lat[i].q, s->limit) ||
		    perm_sort(s->lat[i].q.seg, s->lat[i].q.nseg, sizeof(struct sseg), cmp_seg, NULL))
			return -1;
	return 0;
}

/* ---- the findings' state ---- */

#define FNONE UINT32_MAX

/* The findings' state of an analysis of one part (devmap: its devices -> the summary's). */
static int fstate_from(struct ga_sum *s, struct ga_analysis *an, const uint32_t *devmap,
		       int *err)
{
	struct ga_findings *fd = &an->fd;
	struct ga_model *m = &an->m;
	const struct ga_mx *mx = &an->mx;
	size_t i, j;

	if (fd->off || !fd->settled)
		return 0;
	s->fs[FS_PARTS] = 1;
	s->fs[FS_DROPPED] = fd->calls_dropped;
	s->fs[FS_MX_COST] = mx->cost_ns;
	s->fs[FS_MX_SKIPPED] = mx->skipped_capture + mx->skipped_graph + mx->failed +
			       mx->skipped_other;
	for (i = 0; i < GA_CAUSE_COUNT; i++) {
		s->fs[FS_API_NS0 + i] = fd->api_ns[i];
		s->fs[FS_API_CALLS0 + i] = fd->api_calls[i];
	}
	for (i = 0; i < GA_COPY_KIND_MAX; i++) {
		const struct ga_fcopy *c = &fd->copy[i];
		const uint64_t u[FCOPY_U64] = {
			c->tiny, c->tiny_bytes, c->tiny_ns, c->tiny_min, c->tiny_gap_ns,
			c->pageable, c->pageable_bytes, c->pageable_ns, c->sync, c->sync_ns,
		};

		memcpy(&s->fs[FS_COPY0 + i * FCOPY_U64], u, sizeof(u));
	}
	if (!(s->fdev = calloc(m->ndevs + 1, sizeof(*s->fdev))))
		return -1;
	for (i = 0; i < m->ndevs && i < fd->ndevs; i++) {
		const struct ga_fdev *v = &fd->devs[i];
		struct sfdev *o;
		uint64_t *u;

		if (m->devs[i].dead)
			continue;
		o = &s->fdev[s->nfdev++];
		o->dev = devmap[i];
		u = o->u;
		for (j = 0; j < GA_CAUSE_COUNT; j++) {
			u[3 * j] = v->acc[j].n;
			u[3 * j + 1] = v->acc[j].ns;
			u[3 * j + 2] = v->acc[j].longest;
		}
		u[FD_ACC] = v->lb.runs;
		u[FD_ACC + 1] = v->lb.kernels;
		u[FD_ACC + 2] = v->lb.busy;
		u[FD_ACC + 3] = v->lb.gaps;
		u[FD_ACC + 4] = v->lb.stake;
		u[FD_ACC + FD_LB] = v->sum;
		u[FD_ACC + FD_LB + 1] = v->other_ns;
		u[FD_ACC + FD_LB + 2] = v->lk_short;
		u[FD_ACC + FD_LB + 3] = v->lk_graph;
		u[FD_ACC + FD_LB + 4] = v->lk_n;
		u[FD_ACC + FD_LB + 5] = v->lk_ns;
		o->nst = v->nstreams;
		for (j = 0; j < v->nstreams && j < GA_FIND_STREAMS; j++) {
			struct sfstream *t = &o->st[j];
			uint32_t site = 0;

			t->proc = (uint32_t)(v->stream[j].key >> 32);
			t->stream = (uint32_t)v->stream[j].key;
			t->ns = v->stream[j].ns;
			t->count = v->stream[j].count;
			if (v->stream[j].stack && an->o.observe_sites)
				site = ga_sites_stack_text(&an->st, m, t->proc, v->stream[j].stack);
			t->site = S(s, m, site, err);
		}
	}
	if (!(s->fpl = calloc(fd->npl + 1, sizeof(*s->fpl))))
		return -1;
	for (i = 0; i < fd->npl; i++) {
		const struct ga_fplace *p = &fd->pl[i];
		struct sfplace *o = &s->fpl[s->nfpl++];
		const uint32_t str[FPL_STR] = {
			p->w.site_before, p->w.site_after, p->w.site_call, p->w.label_before,
			p->w.label_after, p->w.call, p->w.nvtx,
		};

		o->dev = devmap[p->dev];
		o->cause = p->cause;
		o->proc = p->w.proc;
		o->stream = p->w.stream;
		o->ns = p->w.ns;
		o->count = p->w.count;
		for (j = 0; j < FPL_STR; j++)
			o->str[j] = S(s, m, str[j], err);
	}
	if (!(s->flb = calloc(m->nkstats + 1, sizeof(*s->flb))))
		return -1;
	for (i = 0; i < fd->caplb && i < m->nkstats; i++)
		if (fd->lb[i].gap || fd->lb[i].count)
			s->flb[s->nflb++] = (struct sflb){ S(s, m, m->kstats[i].name, err),
							   fd->lb[i].gap, fd->lb[i].count };
	if (an->o.observe_sites && an->st.nskern) {
		const struct ga_sites *st = &an->st;

		if (!(s->fks = calloc(st->nskern + 1, sizeof(*s->fks))))
			return -1;
		for (i = 0; i < st->nskern; i++)
			s->fks[s->nfks++] = (struct sfks){
				S(s, m, st->skern[i].name, err),
				S(s, m, st->sites[st->skern[i].site].str, err), st->skern[i].ns };
	}
	if (!(s->fnull = calloc(fd->nnulls + 1, sizeof(*s->fnull))))
		return -1;
	for (i = 0; i < fd->nnulls; i++)
		s->fnull[s->nfnull++] = (struct sfnull){ fd->nulls[i].proc, fd->nulls[i].stream };
	return 0;
}

/*
 * Adds device state b to a (one GPU in two parts: their sums, the longest
 * gap).  Its streams are several processes': the serialization rule reads
 * one process's, so they all count as streams beyond the table, in any order.
 */
static void fdev_add(struct sfdev *a, const struct sfdev *b)
{
	uint64_t *other = &a->u[FD_ACC + FD_LB + 1];

	for (size_t j = 0; j < FD_U64; j++)
		a->u[j] = j < FD_ACC && j % 3 == 2 ? (b->u[j] > a->u[j] ? b->u[j] : a->u[j]) :
			  sat(a->u[j], b->u[j]);
	for (uint32_t k = 0; k < a->nst; k++)
		*other = sat(*other, a->st[k].ns);
	for (uint32_t k = 0; k < b->nst; k++)
		*other = sat(*other, b->st[k].ns);
	a->nst = 0;
}

/* Merges b's findings' state into a's: b's devices by dmap, its processes from pbase on. */
static int fstate_merge(struct ga_sum *a, struct ga_sum *b, const uint32_t *dmap,
			uint32_t pbase, int *err)
{
	struct ga_map lbm = { 0 }, ksm = { 0 };
	size_t i, j;
	int rc = -1;

	a->fs[FS_SHARED] = sat(a->fs[FS_SHARED], b->fs[FS_SHARED]);
	if (!b->fs[FS_PARTS])
		return 0;
	if (!a->fs[FS_PARTS]) {
		uint64_t shared = a->fs[FS_SHARED];

		memcpy(a->fs, b->fs, sizeof(a->fs));
		a->fs[FS_SHARED] = shared;
	} else {
		for (i = 0; i < FS_COUNT; i++) {
			if (i == FS_SHARED)
				continue;
			if (i >= FS_COPY0 && (i - FS_COPY0) % FCOPY_U64 == FCOPY_MIN)
				a->fs[i] = b->fs[i] < a->fs[i] ? b->fs[i] : a->fs[i];
			else
				a->fs[i] = sat(a->fs[i], b->fs[i]);
		}
	}
	if (GROW(a->fdev, a->nfdev + b->nfdev) || GROW(a->fpl, a->nfpl + b->nfpl) ||
	    GROW(a->fnull, a->nfnull + b->nfnull))
		goto out;
	for (i = 0; i < b->nfdev; i++) {
		struct sfdev d = b->fdev[i];

		d.dev = dmap[d.dev];
		for (j = 0; j < d.nst; j++) {
			d.st[j].proc += pbase;
			d.st[j].site = R(a, b, d.st[j].site, err);
		}
		for (j = 0; j < a->nfdev && a->fdev[j].dev != d.dev; j++)
			;
		if (j < a->nfdev)
			fdev_add(&a->fdev[j], &d);
		else
			a->fdev[a->nfdev++] = d;
	}
	for (i = 0; i < b->nfpl; i++) {
		struct sfplace p = b->fpl[i];

		p.dev = dmap[p.dev];
		if (p.proc != FNONE)
			p.proc += pbase;
		for (j = 0; j < FPL_STR; j++)
			p.str[j] = R(a, b, p.str[j], err);
		a->fpl[a->nfpl++] = p;
	}
	for (i = 0; i < b->nfnull; i++)
		a->fnull[a->nfnull++] = (struct sfnull){ b->fnull[i].proc + pbase, b->fnull[i].stream };
	for (i = 0; i < a->nflb; i++)
		if (!find(&lbm, a->flb[i].name, 0))
			goto out;
	for (i = 0; i < b->nflb; i++) {
		uint32_t name = R(a, b, b->flb[i].name, err);

		if (!(j = find(&lbm, name, 0)))
			goto out;
		if (--j == a->nflb) {
			if (GROW(a->flb, a->nflb))
				goto out;
			a->flb[a->nflb++] = (struct sflb){ name, 0, 0 };
		}
		a->flb[j].gap = sat(a->flb[j].gap, b->flb[i].gap);
		a->flb[j].count = sat(a->flb[j].count, b->flb[i].count);
	}
	for (i = 0; i < a->nfks; i++)
		if (!find(&ksm, a->fks[i].name, a->fks[i].site))
			goto out;
	for (i = 0; i < b->nfks; i++) {
		uint32_t name = R(a, b, b->fks[i].name, err), site = R(a, b, b->fks[i].site, err);

		if (!(j = find(&ksm, name, site)))
			goto out;
		if (--j == a->nfks) {
			if (GROW(a->fks, a->nfks))
				goto out;
			a->fks[a->nfks++] = (struct sfks){ name, site, 0 };
		}
		a->fks[j].ns = sat(a->fks[j].ns, b->fks[i].ns);
	}
	rc = 0;
out:
	ga_map_free(&lbm);
	ga_map_free(&ksm);
	return rc;
}

static int cmp_text(uint32_t a, uint32_t b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(ga_strtab_get(&sort_s->s, a), ga_strtab_get(&sort_s->s, b));
}

static int cmp_u(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_fdev(const void *pa, const void *pb)
{
	return cmp_u(((const struct sfdev *)pa)->dev, ((const struct sfdev *)pb)->dev);
}

static int cmp_fpl(const void *pa, const void *pb)
{
	const struct sfplace *a = pa, *b = pb;
	int c = cmp_u(a->dev, b->dev);

	if (!c)
		c = cmp_u(a->cause, b->cause);
	for (size_t j = 0; !c && j < FPL_STR; j++)
		c = cmp_text(a->str[j], b->str[j]);
	if (!c)
		c = cmp_u(a->proc, b->proc);
	if (!c)
		c = cmp_u(a->stream, b->stream);
	if (!c)
		c = cmp_u(a->ns, b->ns);
	return c ? c : cmp_u(a->count, b->count);
}

static int cmp_flb(const void *pa, const void *pb)
{
	return cmp_text(((const struct sflb *)pa)->name, ((const struct sflb *)pb)->name);
}

static int cmp_fks(const void *pa, const void *pb)
{
	const struct sfks *a = pa, *b = pb;
	int c = cmp_text(a->name, b->name);

	return c ? c : cmp_text(a->site, b->site);
}

static int cmp_fnull(const void *pa, const void *pb)
{
	const struct sfnull *a = pa, *b = pb;
	int c = cmp_u(a->proc, b->proc);

	return c ? c : cmp_u(a->stream, b->stream);
}

/* The findings' state in canonical order, its processes and devices renumbered (pmap, dmap). */
static void fstate_canonical(struct ga_sum *s, const uint32_t *pmap, const uint32_t *dmap)
{
	size_t i, j;

	for (i = 0; i < s->nfdev; i++) {
		struct sfdev *d = &s->fdev[i];

		d->dev = dmap[d->dev];
		/* Streams in the order a device's first activities set them: one part's. */
		for (j = 0; j < d->nst; j++)
			d->st[j].proc = pmap[d->st[j].proc];
	}
	for (i = 0; i < s->nfpl; i++) {
		s->fpl[i].dev = dmap[s->fpl[i].dev];
		if (s->fpl[i].proc != FNONE)
			s->fpl[i].proc = pmap[s->fpl[i].proc];
	}
	for (i = 0; i < s->nfnull; i++)
		s->fnull[i].proc = pmap[s->fnull[i].proc];
	if (s->nfdev)
		qsort(s->fdev, s->nfdev, sizeof(*s->fdev), cmp_fdev);
	if (s->nfpl)
		qsort(s->fpl, s->nfpl, sizeof(*s->fpl), cmp_fpl);
	if (s->nflb)
		qsort(s->flb, s->nflb, sizeof(*s->flb), cmp_flb);
	if (s->nfks)
		qsort(s->fks, s->nfks, sizeof(*s->fks), cmp_fks);
	if (s->nfnull)
		qsort(s->fnull, s->nfnull, sizeof(*s->fnull), cmp_fnull);
}

/*
 * Puts every table in an order that depends only on its contents: files,
 * processes and devices by origin key, rows of a process by process (then
 * as they were), keyed rows by key, durations' segments by origin; and
 * renumbers the references.  The sorts are stable.
 */
static int cmp_ssite(const void *pa, const void *pb)
{
	return cmp_text(((const struct ssite *)pa)->str, ((const struct ssite *)pb)->str);
}

static int cmp_sskern(const void *pa, const void *pb)
{
	const struct sskern *a = pa, *b = pb;

	return a->site != b->site ? cmp_u(a->site, b->site) : cmp_text(a->name, b->name);
}

static int cmp_smod(const void *pa, const void *pb)
{
	const struct smod *a = pa, *b = pb;
	int c = cmp_text(a->name, b->name);

	return c ? c : (c = cmp_text(a->why, b->why)) ? c :
							cmp_u(a->verdict, b->verdict);
}

/* Sites by text, their kernels by name, their frames in their order. */
static int sites_canonical(struct ga_sum *s)
{
	uint32_t *perm = calloc(s->nsites + 1, sizeof(*perm));
	uint32_t *fr = calloc(s->nsframes + 1, sizeof(*fr));
	size_t i, n = 0;

	if (!perm || !fr || perm_sort(s->sites, s->nsites, sizeof(*s->sites), cmp_ssite, perm)) {
		free(perm);
		free(fr);
		return -1;
	}
	for (i = 0; i < s->nskern; i++)
		s->skern[i].site = s->skern[i].site < s->nsites ? perm[s->skern[i].site] : 0;
	if (s->nskern)
		qsort(s->skern, s->nskern, sizeof(*s->skern), cmp_sskern);
	for (i = 0; i < s->nsites; i++) {
		struct ssite *x = &s->sites[i];

		if (x->nf)
			memcpy(fr + n, s->sframes + x->foff, x->nf * sizeof(*fr));
		x->foff = (uint32_t)n;
		n += x->nf;
	}
	if (n)
		memcpy(s->sframes, fr, n * sizeof(*fr));
	s->nsframes = n;
	if (s->nsmods)
		qsort(s->smods, s->nsmods, sizeof(*s->smods), cmp_smod);
	free(perm);
	free(fr);
	return 0;
}

static int cmp_mxn(const void *pa, const void *pb)
{
	const struct smxn *a = pa, *b = pb;

	return okey_cmp(sort_s, (struct okey){ a->origin, (uint32_t)a->idx },
			(struct okey){ b->origin, (uint32_t)b->idx });
}

/*
 * Metrics' rows by process (rank: canonical()'s order), then as they came;
 * each row's values by name, laid out in row order; names by first use.
 */
static int mx_canonical(struct ga_sum *s, const uint32_t *pmap)
{
	struct smxv *v = calloc(s->nmxv + 1, sizeof(*v));
	size_t i, n = 0;

	if (!v || perm_sort(s->mxk, s->nmxk, sizeof(*s->mxk), cmp_mxk, NULL) ||
	    perm_sort(s->mxp, s->nmxp, sizeof(*s->mxp), cmp_mxp, NULL)) {
		free(v);
		return -1;
	}
	if (s->nmxn)
		qsort(s->mxn, s->nmxn, sizeof(*s->mxn), cmp_mxn);
	for (i = 0; i < s->nmxk; i++) {
		struct smxk *k = &s->mxk[i];

		if (k->nv)
			memcpy(v + n, s->mxv + k->vlo, k->nv * sizeof(*v));
		k->vlo = (uint32_t)n;
		n += k->nv;
		k->proc = pmap[k->proc];
	}
	for (i = 0; i < s->nmxp; i++)
		s->mxp[i].proc = pmap[s->mxp[i].proc];
	if (n)
		memcpy(s->mxv, v, n * sizeof(*v));
	s->nmxv = n;
	free(v);
	return 0;
}

static int cmp_gsa(const void *pa, const void *pb)
{
	const struct sgsa *a = pa, *b = pb;

	if (a->series != b->series)
		return cmp_u(a->series, b->series);
	return a->kind != b->kind ? cmp_u(a->kind, b->kind) : cmp_text(a->key, b->key);
}

/*
 * The GPU over time: series by process (trace order), then as their trace
 * ordered them; averages by series, kind and name; metrics and values laid
 * out in that order.
 */
static int gs_canonical(struct ga_sum *s, const uint32_t *pmap)
{
	uint32_t *perm = calloc(s->ngss + 1, sizeof(*perm));
	struct sgsm *m = calloc(s->ngsm + 1, sizeof(*m));
	uint64_t *v = calloc(s->ngsv + 1, sizeof(*v));
	size_t i, n = 0;
	int rc = -1;

	if (!perm || !m || !v || perm_sort(s->gss, s->ngss, sizeof(*s->gss), cmp_gss, perm))
		goto out;
	for (i = 0; i < s->ngss; i++) {
		struct sgss *x = &s->gss[i];

		if (x->nm)
			memcpy(m + n, s->gsm + x->mlo, x->nm * sizeof(*m));
		x->mlo = (uint32_t)n;
		n += x->nm;
		x->proc = pmap[x->proc];
	}
	if (n)
		memcpy(s->gsm, m, n * sizeof(*m));
	s->ngsm = n;
	for (i = 0; i < s->ngsa; i++)
		s->gsa[i].series = s->gsa[i].series < s->ngss ? perm[s->gsa[i].series] : 0;
	if (s->ngsa)
		qsort(s->gsa, s->ngsa, sizeof(*s->gsa), cmp_gsa);
	for (i = n = 0; i < s->ngsa; i++) {
		struct sgsa *x = &s->gsa[i];
		size_t k = 2 * (size_t)s->gss[x->series].nm;

		if (k)
			memcpy(v + n, s->gsv + x->vlo, k * sizeof(*v));
		x->vlo = (uint32_t)n;
		n += k;
	}
	if (n)
		memcpy(s->gsv, v, n * sizeof(*v));
	s->ngsv = n;
	rc = 0;
out:
	free(perm);
	free(m);
	free(v);
	return rc;
}

/* Memory in use by process (trace order), then device; the largest in row order. */
static int mu_canonical(struct ga_sum *s, const uint32_t *pmap)
{
	struct smua *v = calloc(s->nmua + 1, sizeof(*v));
	size_t i, n = 0;

	if (!v || perm_sort(s->mud, s->nmud, sizeof(*s->mud), cmp_mud, NULL)) {
		free(v);
		return -1;
	}
	for (i = 0; i < s->nmud; i++) {
		struct smud *d = &s->mud[i];

		if (d->na)
			memcpy(v + n, s->mua + d->alo, d->na * sizeof(*v));
		d->alo = (uint32_t)n;
		n += d->na;
		d->proc = pmap[d->proc];
	}
	if (n)
		memcpy(s->mua, v, n * sizeof(*v));
	s->nmua = n;
	free(v);
	return 0;
}

static int cmp_ncl(const void *pa, const void *pb)
{
	const struct sncl *a = pa, *b = pb;

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->coll < b->coll ? -1 : a->coll > b->coll;
}

/* By file (in its new place), stream and collective, their pairs in that order. */
static int ncl_canonical(struct ga_sum *s, const uint32_t *fmap)
{
	uint64_t *v;
	size_t i, n = 0;

	if (!s->nncl)
		return 0;
	for (i = 0; i < s->nncl; i++)
		s->ncl[i].file = fmap[s->ncl[i].file];
	qsort(s->ncl, s->nncl, sizeof(*s->ncl), cmp_ncl);
	if (!(v = malloc(2 * (s->nnclv + 1) * sizeof(*v))))
		return -1;
	for (i = 0; i < s->nncl; i++) {
		memcpy(v + 2 * n, s->nclv + 2 * s->ncl[i].off, 2 * s->ncl[i].n * sizeof(*v));
		s->ncl[i].off = n;
		n += s->ncl[i].n;
	}
	free(s->nclv);
	s->nclv = v;
	s->nnclv = n;
	return 0;
}

static int canonical(struct ga_sum *s)
{
	uint32_t *pmap = calloc(s->nprocs + 1, sizeof(*pmap));
	uint32_t *dmap = calloc(s->ndevs + 1, sizeof(*dmap));
	uint32_t *fmap = calloc(s->nfiles + 1, sizeof(*fmap));
	uint32_t *okrank = NULL;
	size_t i;
	int rc = -1;

	sort_s = s;
	if (!pmap || !dmap || !fmap)
		goto out;
	/*
	 * Rows of processes (capture ranges, graphs, device rows) go in the
	 * order of their processes' traces (origins), as a model reading the
	 * traces in path order makes them; processes themselves by rank.
	 */
	{
		struct okey *ok = malloc((s->nprocs + 1) * sizeof(*ok));

		if (!ok || !(okrank = calloc(s->nprocs + 1, sizeof(*okrank)))) {
			free(ok);
			goto out;
		}
		for (i = 0; i < s->nprocs; i++)
			ok[i] = s->procs[i].k;
		if (perm_sort(ok, s->nprocs, sizeof(*ok), cmp_okey, okrank)) {
			free(ok);
			goto out;
		}
		free(ok);
	}
	if (perm_sort(s->files, s->nfiles, sizeof(*s->files), cmp_file, fmap) ||
	    perm_sort(s->procs, s->nprocs, sizeof(*s->procs), cmp_proc, pmap) ||
	    perm_sort(s->devs, s->ndevs, sizeof(*s->devs), cmp_dev, dmap))
		goto out;
	for (i = 0; i < s->nprocs; i++)
		s->procs[i].file = fmap[s->procs[i].file];
	if (ncl_canonical(s, fmap))
		goto out;
	for (i = 0; i < s->ndevs; i++)
		s->devs[i].proc = pmap[s->devs[i].proc];
	pk_proc = okrank;
	if (perm_sort(s->wins, s->nwins, sizeof(*s->wins), cmp_win, NULL) ||
	    perm_sort(s->graphs, s->ngraphs, sizeof(*s->graphs), cmp_graph, NULL) ||
	    perm_sort(s->devrows, s->ndevrows, sizeof(*s->devrows), cmp_devrow, NULL) ||
	    perm_sort(s->ranks, s->nranks, sizeof(*s->ranks), cmp_srank, NULL))
		goto out;
	for (i = 0; i < s->nranks; i++)
		s->ranks[i].proc = pmap[s->ranks[i].proc];
	for (i = 0; i < s->nwins; i++)
		s->wins[i].proc = pmap[s->wins[i].proc];
	for (i = 0; i < s->ngraphs; i++)
		s->graphs[i].proc = pmap[s->graphs[i].proc];
	for (i = 0; i < s->ndevrows; i++) {
		s->devrows[i].proc = pmap[s->devrows[i].proc];
		s->devrows[i].dev = dmap[s->devrows[i].dev];
	}
	fstate_canonical(s, pmap, dmap);
	/* pk_proc is okrank: rows by process in trace order. */
	if (mx_canonical(s, pmap) || mu_canonical(s, pmap) || gs_canonical(s, pmap))
		goto out;
	/* A part merged under a lower limit: the rule is all exact and n <= limit. */
	for (i = 0; i < s->nks; i++)
		if (!s->ks[i].q.sketch && s->ks[i].q.n > s->limit && to_sketch(&s->ks[i].q))
			goto out;
	for (i = 0; i < s->nmo; i++)
		if (!s->mo[i].q.sketch && s->mo[i].q.n > s->limit && to_sketch(&s->mo[i].q))
			goto out;
	for (i = 0; i < s->nas; i++)
		if (!s->as[i].q.sketch && s->as[i].q.n > s->limit && to_sketch(&s->as[i].q))
			goto out;
	qsort(s->labels, s->nlabels, sizeof(*s->labels), cmp_label_s);
	qsort(s->ks, s->nks, sizeof(*s->ks), cmp_ks);
	qsort(s->as, s->nas, sizeof(*s->as), cmp_as);
	qsort(s->mo, s->nmo, sizeof(*s->mo), cmp_mo);
	for (i = 0; i < s->nks; i++)
		if (perm_sort(s->ks[i].q.seg, s->ks[i].q.nseg, sizeof(struct sseg), cmp_seg, NULL))
			goto out;
	for (i = 0; i < s->nmo; i++)
		if (perm_sort(s->mo[i].q.seg, s->mo[i].q.nseg, sizeof(struct sseg), cmp_seg, NULL))
			goto out;
	for (i = 0; i < s->nas; i++)
		if (perm_sort(s->as[i].q.seg, s->as[i].q.nseg, sizeof(struct sseg), cmp_seg, NULL))
			goto out;
	if (nvtx_canonical(s) || launches_canonical(s) || sites_canonical(s))
		goto out;
	rc = 0;
out:
	free(pmap);
	free(dmap);
	free(fmap);
	free(okrank);
	return rc;
}

/* ---- encoding ---- */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int err;
};

static void put(struct wbuf *w, const void *d, size_t n)
{
	if (w->err)
		return;
	if (w->len + n > w->cap) {
		size_t c = w->cap ? w->cap : 4096;
		unsigned char *p;

		while (c < w->len + n)
			c *= 2;
		if (!(p = realloc(w->p, c))) {
			w->err = 1;
			return;
		}
		w->p = p;
		w->cap = c;
	}
	memcpy(w->p + w->len, d, n);
	w->len += n;
}

static void pv(struct wbuf *w, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	put(w, b, n);
}

/*
 * String ids are written as they are numbered in the encoded table: the
 * strings in use, sorted, so that equal summaries encode to equal bytes.
 */
struct strnum {
	uint32_t *map;             /* strtab id -> number + 1 */
};

static void ps(struct wbuf *w, const struct strnum *sn, uint32_t id)
{
	pv(w, id ? sn->map[id] : 0);
}

/* Buckets as (index - previous index, count), ascending. */
struct put_bk {
	struct wbuf *w;
	uint32_t prev;
};

static void put_bucket(void *ctx, uint32_t b, uint64_t count)
{
	struct put_bk *pb = ctx;

	pv(pb->w, b - pb->prev);
	pv(pb->w, count);
	pb->prev = b;
}

static void put_sq(struct wbuf *w, const struct strnum *sn, const struct sq *q)
{
	pv(w, q->n);
	pv(w, q->sum);
	pv(w, q->n ? q->min : 0);
	pv(w, q->max);
	pv(w, (uint64_t)(q->sumsq >> 64));
	pv(w, (uint64_t)q->sumsq);
	pv(w, (uint64_t)q->sketch);
	if (!q->sketch) {
		pv(w, q->nseg);
		for (size_t i = 0; i < q->nseg; i++) {
			ps(w, sn, q->seg[i].origin);
			pv(w, q->seg[i].n);
			for (size_t j = 0; j < q->seg[i].n; j++)
				pv(w, q->seg[i].v[j]);
		}
	} else {
		struct put_bk pb = { w, 0 };

		pv(w, ga_quant_nbuckets(&q->h));
		ga_quant_buckets(&q->h, put_bucket, &pb);
	}
}

static const struct ga_strtab *sort_t;

static int cmp_sid(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const char *x = ga_strtab_get(sort_t, a), *y = ga_strtab_get(sort_t, b);
	uint32_t la = ga_strtab_len(sort_t, a), lb = ga_strtab_len(sort_t, b);
	int c = memcmp(x, y, la < lb ? la : lb);

	return c ? c : la < lb ? -1 : la > lb;
}

static void mark(uint32_t *used, uint32_t id)
{
	if (id)
		used[id] = 1;
}

static void mark_sq(uint32_t *used, const struct sq *q)
{
	for (size_t i = 0; i < q->nseg; i++)
		mark(used, q->seg[i].origin);
}

static void put_ranks(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn)
{
	pv(w, s->nranks);
	pv(w, RANK_U64);
	for (size_t i = 0; i < s->nranks; i++) {
		const struct srank *r = &s->ranks[i];

		pv(w, r->proc);
		for (size_t j = 0; j < RANK_U64; j++)
			pv(w, r->u[j]);
		pv(w, r->nst);
		for (size_t j = 0; j < r->nst; j++) {
			ps(w, sn, r->st[j].label);
			pv(w, r->st[j].work);
		}
	}
}

static void put_nvtx(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn)
{
	size_t i, j;

	pv(w, RSC_COUNT);
	for (i = 0; i < RSC_COUNT; i++)
		pv(w, s->rsc[i]);
	pv(w, s->nrkeys);
	pv(w, RKEY_U64);
	for (i = 0; i < s->nrkeys; i++) {
		const struct srkey *k = &s->rkeys[i];

		ps(w, sn, k->name);
		ps(w, sn, k->domain);
		ps(w, sn, k->label);
		for (j = 0; j < RKEY_U64; j++)
			pv(w, k->u[j]);
		put_sq(w, sn, &k->q);
	}
	pv(w, s->nmarks);
	for (i = 0; i < s->nmarks; i++) {
		ps(w, sn, s->marks[i].name);
		ps(w, sn, s->marks[i].domain);
		ps(w, sn, s->marks[i].label);
		pv(w, s->marks[i].count);
	}
	pv(w, s->nnodes);
	pv(w, NODE_U64);
	for (i = 0; i < s->nnodes; i++) {
		const struct snode *n = &s->nodes[i];

		/* Parent + 1 (0: a root); a kernel's id is a string id. */
		pv(w, n->parent == UINT32_MAX ? 0 : (uint64_t)n->parent + 1);
		pv(w, n->kind);
		if (n->kind == GA_RANGES_N_KERNEL)
			ps(w, sn, (uint32_t)n->id);
		else
			pv(w, n->id);
		for (j = 0; j < NODE_U64; j++)
			pv(w, n->u[j]);
	}
}

static void put_launches(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn)
{
	size_t i, j;

	pv(w, LSC_COUNT);
	for (i = 0; i < LSC_COUNT; i++)
		pv(w, s->lsc[i]);
	pv(w, s->nlat);
	for (i = 0; i < s->nlat; i++) {
		ps(w, sn, s->lat[i].name);
		put_sq(w, sn, &s->lat[i].q);
	}
	pv(w, s->nlcfg);
	pv(w, LCFG_U64);
	for (i = 0; i < s->nlcfg; i++) {
		ps(w, sn, s->lcfg[i].name);
		ps(w, sn, s->lcfg[i].origin);
		for (j = 0; j < LCFG_U64; j++)
			pv(w, s->lcfg[i].u[j]);
	}
}

static void fstate_mark(const struct ga_sum *s, uint32_t *used);
static void put_fstate(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn);

static void sites_mark(const struct ga_sum *s, uint32_t *used)
{
	size_t i;

	for (i = 0; i < s->nsites; i++) {
		mark(used, s->sites[i].str);
		mark(used, s->sites[i].origin);
	}
	for (i = 0; i < s->nsframes; i++)
		mark(used, s->sframes[i]);
	for (i = 0; i < s->nskern; i++)
		mark(used, s->skern[i].name);
	for (i = 0; i < s->nsmods; i++) {
		mark(used, s->smods[i].name);
		mark(used, s->smods[i].why);
	}
}

static void mx_mark(const struct ga_sum *s, uint32_t *used)
{
	size_t i;

	mark(used, s->mx_set);
	mark(used, s->mx_origin);
	mark(used, s->mx_status_origin);
	for (i = 0; i < s->nmxn; i++) {
		mark(used, s->mxn[i].name);
		mark(used, s->mxn[i].origin);
	}
	for (i = 0; i < s->nmxk; i++)
		mark(used, s->mxk[i].name);
	for (i = 0; i < s->nmxv; i++)
		mark(used, s->mxv[i].name);
	for (i = 0; i < s->nmxp; i++)
		mark(used, s->mxp[i].chip);
}

static void put_mx(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn)
{
	size_t i, j;

	pv(w, MXS_COUNT);
	for (i = 0; i < MXS_COUNT; i++)
		pv(w, s->mxs[i]);
	ps(w, sn, s->mx_set);
	ps(w, sn, s->mx_origin);
	ps(w, sn, s->mx_status_origin);
	pv(w, s->nmxn);
	for (i = 0; i < s->nmxn; i++) {
		ps(w, sn, s->mxn[i].name);
		ps(w, sn, s->mxn[i].origin);
		pv(w, s->mxn[i].idx);
	}
	pv(w, s->nmxp);
	pv(w, MXP_U32 + MXP_F64);
	for (i = 0; i < s->nmxp; i++) {
		pv(w, s->mxp[i].proc);
		ps(w, sn, s->mxp[i].chip);
		for (j = 0; j < MXP_U32; j++)
			pv(w, s->mxp[i].u[j]);
		for (j = 0; j < MXP_F64; j++)
			pv(w, s->mxp[i].f[j]);
	}
	pv(w, s->nmxk);
	pv(w, MXK_U64 + MXK_F64);
	for (i = 0; i < s->nmxk; i++) {
		const struct smxk *k = &s->mxk[i];

		ps(w, sn, k->name);
		pv(w, k->proc);
		for (j = 0; j < MXK_U64; j++)
			pv(w, k->u[j]);
		for (j = 0; j < MXK_F64; j++)
			pv(w, k->f[j]);
		pv(w, k->nv);
		for (j = 0; j < k->nv; j++) {
			ps(w, sn, s->mxv[k->vlo + j].name);
			pv(w, s->mxv[k->vlo + j].bits);
		}
	}
}

static void put_mu(const struct ga_sum *s, struct wbuf *w)
{
	size_t i, j, k;

	pv(w, s->mu_records);
	pv(w, s->mu_host);
	pv(w, s->nmud);
	pv(w, MUD_U64);
	for (i = 0; i < s->nmud; i++) {
		const struct smud *d = &s->mud[i];

		pv(w, d->proc);
		for (j = 0; j < MUD_U64; j++)
			pv(w, d->u[j]);
		pv(w, d->na);
		pv(w, MUA_U64);
		for (j = 0; j < d->na; j++)
			for (k = 0; k < MUA_U64; k++)
				pv(w, s->mua[d->alo + j].u[k]);
	}
}

/* Section 22: groups, each pair's start after the one before and its length. */
static void put_ncl(const struct ga_sum *s, struct wbuf *w)
{
	pv(w, s->nncl);
	for (size_t i = 0; i < s->nncl; i++) {
		const struct sncl *c = &s->ncl[i];
		uint64_t prev = 0;

		pv(w, c->file);
		pv(w, c->stream);
		pv(w, c->coll);
		pv(w, c->n);
		for (size_t j = 0; j < c->n; j++) {
			const uint64_t *p = &s->nclv[2 * (c->off + j)];

			pv(w, p[0] - prev);
			pv(w, p[1] - p[0]);
			prev = p[0];
		}
	}
}

static void gs_mark(const struct ga_sum *s, uint32_t *used)
{
	for (size_t i = 0; i < s->ngsm; i++)
		mark(used, s->gsm[i].name);
	for (size_t i = 0; i < s->ngsa; i++)
		mark(used, s->gsa[i].key);
}

static void put_gs(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn)
{
	size_t i, j;

	pv(w, GSSC_COUNT);
	for (i = 0; i < GSSC_COUNT; i++)
		pv(w, s->gssc[i]);
	pv(w, s->ngss);
	pv(w, GSS_U64);
	for (i = 0; i < s->ngss; i++) {
		const struct sgss *x = &s->gss[i];

		pv(w, x->proc);
		for (j = 0; j < GSS_U64; j++)
			pv(w, x->u[j]);
		pv(w, x->nm);
		for (j = 0; j < x->nm; j++) {
			const struct sgsm *mt = &s->gsm[x->mlo + j];

			ps(w, sn, mt->name);
			pv(w, mt->samples);
			pv(w, mt->last_end);
			pv(w, mt->avg);
			pv(w, mt->min);
			pv(w, mt->max);
		}
	}
	pv(w, s->ngsa);
	for (i = 0; i < s->ngsa; i++) {
		const struct sgsa *x = &s->gsa[i];
		size_t k = 2 * (size_t)s->gss[x->series].nm;

		pv(w, x->kind);
		ps(w, sn, x->key);
		pv(w, x->series);
		pv(w, x->count);
		pv(w, x->samples);
		pv(w, x->time_ns);
		for (j = 0; j < k; j++)
			pv(w, s->gsv[x->vlo + j]);
	}
}

static void put_sites(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn)
{
	size_t i, j;

	pv(w, SSC_COUNT);
	for (i = 0; i < SSC_COUNT; i++)
		pv(w, s->ssc[i]);
	pv(w, s->nsites);
	pv(w, SSITE_U64);
	for (i = 0; i < s->nsites; i++) {
		const struct ssite *x = &s->sites[i];

		ps(w, sn, x->str);
		ps(w, sn, x->origin);
		for (j = 0; j < SSITE_U64; j++)
			pv(w, x->u[j]);
		pv(w, x->nf);
		for (j = 0; j < x->nf; j++)
			ps(w, sn, s->sframes[x->foff + j]);
	}
	pv(w, s->nskern);
	for (i = 0; i < s->nskern; i++) {
		pv(w, s->skern[i].site);
		ps(w, sn, s->skern[i].name);
		pv(w, s->skern[i].count);
		pv(w, s->skern[i].ns);
	}
	pv(w, s->nsmods);
	for (i = 0; i < s->nsmods; i++) {
		ps(w, sn, s->smods[i].name);
		ps(w, sn, s->smods[i].why);
		pv(w, s->smods[i].verdict);
	}
}

static void body(struct ga_sum *s, struct wbuf *w, struct strnum *sn)
{
	size_t i, j, nused = 0, ns = s->s.n;
	uint32_t *used = calloc(ns + 1, sizeof(*used)), *list = calloc(ns + 1, sizeof(*list));

	if (!used || !list) {
		free(used);
		free(list);
		w->err = 1;
		return;
	}
	for (i = 0; i < s->nfiles; i++) {
		mark(used, s->files[i].k.origin);
		mark(used, s->files[i].path);
		mark(used, s->files[i].reason);
	}
	for (i = 0; i < s->nprocs; i++) {
		mark(used, s->procs[i].k.origin);
		mark(used, s->procs[i].host);
		mark(used, s->procs[i].exe);
		mark(used, s->procs[i].cmdline);
		mark(used, s->procs[i].ahost);
	}
	for (i = 0; i < s->nwins; i++)
		mark(used, s->wins[i].name);
	for (i = 0; i < s->ndevs; i++) {
		mark(used, s->devs[i].k.origin);
		mark(used, s->devs[i].host);
		mark(used, s->devs[i].name);
	}
	for (i = 0; i < s->nlabels; i++)
		mark(used, s->labels[i].str);
	for (i = 0; i < s->nks; i++) {
		mark(used, s->ks[i].name);
		mark(used, s->ks[i].label);
		mark_sq(used, &s->ks[i].q);
	}
	for (i = 0; i < s->nmo; i++)
		mark_sq(used, &s->mo[i].q);
	for (i = 0; i < GA_COPY_KIND_MAX; i++)
		mark(used, s->copy[i].label);
	mark(used, s->memset_st.label);
	mark(used, s->leg[0].label);
	mark(used, s->leg[1].label);
	for (i = 0; i < s->ngraphs; i++)
		mark(used, s->graphs[i].label);
	for (i = 0; i < s->nas; i++) {
		mark(used, s->as[i].name);
		mark_sq(used, &s->as[i].q);
	}
	for (i = 0; i < s->nranks; i++)
		for (j = 0; j < s->ranks[i].nst; j++)
			mark(used, s->ranks[i].st[j].label);
	for (i = 0; i < s->nrkeys; i++) {
		mark(used, s->rkeys[i].name);
		mark(used, s->rkeys[i].domain);
		mark(used, s->rkeys[i].label);
		mark_sq(used, &s->rkeys[i].q);
	}
	for (i = 0; i < s->nmarks; i++) {
		mark(used, s->marks[i].name);
		mark(used, s->marks[i].domain);
		mark(used, s->marks[i].label);
	}
	for (i = 0; i < s->nnodes; i++)
		if (s->nodes[i].kind == GA_RANGES_N_KERNEL)
			mark(used, (uint32_t)s->nodes[i].id);
	for (i = 0; i < s->nlat; i++) {
		mark(used, s->lat[i].name);
		mark_sq(used, &s->lat[i].q);
	}
	for (i = 0; i < s->nlcfg; i++) {
		mark(used, s->lcfg[i].name);
		mark(used, s->lcfg[i].origin);
	}
	fstate_mark(s, used);
	sites_mark(s, used);
	mx_mark(s, used);
	gs_mark(s, used);
	for (i = 1; i <= ns; i++)
		if (i < ns && used[i])
			list[nused++] = (uint32_t)i;
	sort_t = &s->s;
	qsort(list, nused, sizeof(*list), cmp_sid);
	for (i = 0; i < nused; i++)
		used[list[i]] = (uint32_t)i + 1;
	sn->map = used;

	/* 1. strings */
	pv(w, nused);
	for (i = 0; i < nused; i++) {
		pv(w, ga_strtab_len(&s->s, list[i]));
		put(w, ga_strtab_get(&s->s, list[i]), ga_strtab_len(&s->s, list[i]));
	}
	free(list);
	/* 2. exact limit (0: none), scalars */
	pv(w, s->limit == UINT64_MAX ? 0 : s->limit);
	pv(w, SC_COUNT);
	for (i = 0; i < SC_COUNT; i++)
		pv(w, s->sc[i]);
	/* 3. files */
	pv(w, s->nfiles);
	for (i = 0; i < s->nfiles; i++) {
		const struct sfile *f = &s->files[i];

		ps(w, sn, f->k.origin);
		pv(w, f->k.idx);
		ps(w, sn, f->path);
		ps(w, sn, f->reason);
		pv(w, f->damaged);
		pv(w, f->finished);
		pv(w, f->bytes_unread);
		pv(w, f->file_size);
		pv(w, f->chunks);
		pv(w, f->last_flag);
		pv(w, f->records);
		pv(w, f->unknown);
		pv(w, f->malformed);
		pv(w, f->chunk_lost);
		pv(w, f->stop_offset);
	}
	/* 4. processes */
	pv(w, s->nprocs);
	pv(w, PROC_U64);
	for (i = 0; i < s->nprocs; i++) {
		const struct sproc *p = &s->procs[i];

		ps(w, sn, p->k.origin);
		pv(w, p->k.idx);
		pv(w, p->file);
		ps(w, sn, p->host);
		ps(w, sn, p->exe);
		ps(w, sn, p->cmdline);
		ps(w, sn, p->ahost);
		for (j = 0; j < PROC_U64; j++)
			pv(w, p->u[j]);
	}
	/* 5. capture ranges */
	pv(w, s->nwins);
	for (i = 0; i < s->nwins; i++) {
		pv(w, s->wins[i].proc);
		ps(w, sn, s->wins[i].name);
		pv(w, s->wins[i].start);
		pv(w, s->wins[i].end);
		pv(w, s->wins[i].kind);
	}
	/* 6. devices */
	pv(w, s->ndevs);
	pv(w, DEV_U64);
	for (i = 0; i < s->ndevs; i++) {
		const struct sdev *d = &s->devs[i];

		ps(w, sn, d->k.origin);
		pv(w, d->k.idx);
		pv(w, d->proc);
		ps(w, sn, d->host);
		ps(w, sn, d->name);
		put(w, d->uuid, 16);
		for (j = 0; j < DEV_U64; j++)
			pv(w, d->u[j]);
	}
	/* 7. device rows, with their busy intervals or (version 6 on) busy time and span */
	pv(w, s->ndevrows);
	for (i = 0; i < s->ndevrows; i++) {
		const struct sdevrow *d = &s->devrows[i];
		uint64_t prev = 0;

		pv(w, d->proc);
		pv(w, d->dev);
		pv(w, d->id);
		pv(w, d->count);
		pv(w, d->total);
		pv(w, d->niv);
		for (j = 0; j < d->niv; j++) {
			pv(w, d->iv[j].start - prev);
			pv(w, d->iv[j].end - d->iv[j].start);
			prev = d->iv[j].end;
		}
		pv(w, (uint64_t)d->dropped);
		if (d->dropped) {
			pv(w, d->busy);
			pv(w, d->first);
			pv(w, d->last - d->first);
		}
	}
	/* 8. labels */
	pv(w, s->nlabels);
	for (i = 0; i < s->nlabels; i++) {
		ps(w, sn, s->labels[i].str);
		pv(w, s->labels[i].count);
		pv(w, s->labels[i].total);
	}
	/* 9. kernels */
	pv(w, s->nks);
	for (i = 0; i < s->nks; i++) {
		ps(w, sn, s->ks[i].name);
		ps(w, sn, s->ks[i].label);
		pv(w, s->ks[i].in_graph);
		put_sq(w, sn, &s->ks[i].q);
	}
	/* 10. memory operations */
	pv(w, s->nmo);
	for (i = 0; i < s->nmo; i++) {
		pv(w, s->mo[i].kind);
		pv(w, s->mo[i].src);
		pv(w, s->mo[i].dst);
		pv(w, s->mo[i].bytes);
		put_sq(w, sn, &s->mo[i].q);
	}
	/* 11. copies by kind, memsets, staged peer-copy legs */
	for (i = 0; i < GA_COPY_KIND_MAX + 3; i++) {
		const struct smemstat *x = i < GA_COPY_KIND_MAX ? &s->copy[i] :
					  i == GA_COPY_KIND_MAX ? &s->memset_st :
					  &s->leg[i - GA_COPY_KIND_MAX - 1];

		pv(w, x->count);
		pv(w, x->bytes);
		pv(w, x->total);
		ps(w, sn, x->label);
	}
	/* 12. graphs */
	pv(w, s->ngraphs);
	for (i = 0; i < s->ngraphs; i++) {
		const struct sgraph *g = &s->graphs[i];

		pv(w, g->proc);
		ps(w, sn, g->label);
		pv(w, g->graph_id);
		pv(w, g->launches);
		pv(w, g->total);
		pv(w, g->kernels);
		pv(w, g->nodes);
	}
	/* 13. API functions */
	pv(w, s->nas);
	for (i = 0; i < s->nas; i++) {
		ps(w, sn, s->as[i].name);
		pv(w, s->as[i].errors);
		pv(w, s->as[i].threads);
		put_sq(w, sn, &s->as[i].q);
	}
	/* 14. per-rank figures and steps */
	put_ranks(s, w, sn);
	/* 15. NVTX ranges, marks and the tree */
	put_nvtx(s, w, sn);
	/* 16. launch latency and launch configurations */
	put_launches(s, w, sn);
	/* 17. the findings' state (version 5 on) */
	put_fstate(s, w, sn);
	/* 18. launch sites (version 7 on) */
	put_sites(s, w, sn);
	/* 19. hardware metrics (version 7 on) */
	put_mx(s, w, sn);
	/* 20. memory in use (version 7 on) */
	put_mu(s, w);
	/* 21. the GPU over time (version 7 on) */
	put_gs(s, w, sn);
	/* 22. NCCL collectives for --align nccl (version 8 on) */
	put_ncl(s, w);
}

static void le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

int ga_summary_encode(struct ga_sum *s, unsigned char **out, size_t *len)
{
	struct wbuf w = { 0 };
	struct strnum sn = { 0 };
	unsigned char *f;
	size_t bound, c;

	if (canonical(s))
		return -1;
	body(s, &w, &sn);
	free(sn.map);
	if (w.err) {
		free(w.p);
		return -1;
	}
	bound = ZSTD_compressBound(w.len);
	if (!(f = malloc(GA_SUM_HEADER_SIZE + bound))) {
		free(w.p);
		return -1;
	}
	/*
	 * Level 3, zstd's default: a job's summary of 64 rank traces (3.4 MB)
	 * encodes in three quarters of level 9's time, 1% larger; the encode
	 * is the serial end of summarize.
	 */
	c = ZSTD_compress(f + GA_SUM_HEADER_SIZE, bound, w.p, w.len, 3);
	free(w.p);
	if (ZSTD_isError(c)) {
		free(f);
		return -1;
	}
	memset(f, 0, GA_SUM_HEADER_SIZE);
	memcpy(f, GA_SUM_MAGIC, 8);
	le32(f + 8, GA_SUM_VERSION);
	le32(f + 12, GA_SUM_HEADER_SIZE);
	le64(f + 16, w.len);
	le32(f + 24, gp_crc32c(0, f + GA_SUM_HEADER_SIZE, c));
	le32(f + 28, 0);
	*out = f;
	*len = GA_SUM_HEADER_SIZE + c;
	return 0;
}

/* ---- decoding ---- */

struct rbuf {
	const unsigned char *p;
	size_t len, off;
	int err;
	uint32_t *ids;             /* string number - 1 -> strtab id */
	size_t nids;
	uint32_t version;          /* the file's */
	uint64_t hist;             /* bytes of the histograms read so far */
};

/*
 * Histograms keep every bucket from their lowest used to their highest
 * (model/quantile.h): two buckets far apart cost a few bytes of body and
 * 58 KiB of memory.  A body's histograms may take this much, or 64 bytes
 * a byte of body where that is more; real ones are far smaller (a row
 * turns into one past 65536 durations), so only a crafted body is refused.
 */
#define SUM_HIST_MAX (256ull << 20)

static uint64_t gv(struct rbuf *r)
{
	uint64_t v = 0;

	/* Ten bytes left (the longest number): no test of the length per byte. */
	if (r->len - r->off >= 10 && !r->err) {
		const unsigned char *p = r->p + r->off;

		for (unsigned i = 0; i < 10; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				r->off += i + 1;
				return v;
			}
		}
		r->err = 1;
		return 0;
	}
	for (unsigned sh = 0; !r->err; sh += 7) {
		unsigned char b;

		if (r->off >= r->len || sh > 63) {
			r->err = 1;
			return 0;
		}
		b = r->p[r->off++];
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

/*
 * n numbers into out, as n calls of gv() would read them, in one loop:
 * a row's durations, most of a summary's body.
 */
static void gvals(struct rbuf *r, uint64_t *out, size_t n)
{
	const unsigned char *p = r->p;
	size_t off = r->off, j;

	if (r->err)
		return;
	/* Ten bytes left (the longest number): no test of the length per byte. */
	for (j = 0; j < n && r->len - off >= 10; j++) {
		uint64_t v = 0;
		unsigned sh = 0;
		unsigned char b;

		do {
			b = p[off++];
			v |= (uint64_t)(b & 0x7f) << sh;
			sh += 7;
		} while ((b & 0x80) && sh <= 63);
		if (b & 0x80) {
			r->off = off;
			r->err = 1;
			return;
		}
		out[j] = v;
	}
	r->off = off;
	for (; j < n && !r->err; j++)
		out[j] = gv(r);
}

/* A count of things of at least min_bytes each that must fit what is left. */
static size_t gcount(struct rbuf *r, size_t min_bytes)
{
	uint64_t n = gv(r);

	if (r->err || n > (r->len - r->off) / (min_bytes ? min_bytes : 1)) {
		r->err = 1;
		return 0;
	}
	return (size_t)n;
}

/*
 * A count, then that many numbers into out[0..want): fewer than want is an
 * error, and so are more unless exact is 0 (a later version's additions,
 * skipped).  Returns 0, or -1 with r->err set.
 */
static int gcounters(struct rbuf *r, uint64_t *out, size_t want, int exact)
{
	size_t i, k = gcount(r, 1);

	for (i = 0; i < k; i++) {
		uint64_t v = gv(r);

		if (i < want)
			out[i] = v;
	}
	if (r->err || k < want || (exact && k != want))
		return r->err = 1, -1;
	return 0;
}

/*
 * A table's row count (rows of at least min_bytes) into *n, then the number
 * of numbers a row has, which must be width.  Returns 0, or -1 with r->err set.
 */
static int gtable(struct rbuf *r, size_t width, size_t min_bytes, size_t *n)
{
	*n = gcount(r, min_bytes);
	if ((size_t)gv(r) != width || r->err)
		return r->err = 1, -1;
	return 0;
}

static uint32_t gs(struct rbuf *r)
{
	uint64_t n = gv(r);

	if (n > r->nids) {
		r->err = 1;
		return 0;
	}
	return n ? r->ids[n - 1] : 0;
}

static uint32_t g32(struct rbuf *r)
{
	uint64_t v = gv(r);

	if (v > UINT32_MAX)
		r->err = 1;
	return (uint32_t)v;
}

static int get_sq(struct rbuf *r, struct sq *q)
{
	uint64_t hi, lo;

	memset(q, 0, sizeof(*q));
	q->n = gv(r);
	q->sum = gv(r);
	q->min = gv(r);
	q->max = gv(r);
	hi = gv(r);
	lo = gv(r);
	q->sumsq = (u128)hi << 64 | lo;
	q->sketch = (int)gv(r);
	if (q->sketch > 1)
		r->err = 1;
	if (!q->sketch) {
		uint64_t tot = 0;

		q->nseg = gcount(r, 2);
		if (r->err || !(q->seg = calloc(q->nseg + 1, sizeof(*q->seg))))
			return -1;
		for (size_t i = 0; i < q->nseg && !r->err; i++) {
			q->seg[i].origin = gs(r);
			q->seg[i].n = gcount(r, 1);
			if (r->err || !(q->seg[i].v = malloc((q->seg[i].n + 1) * sizeof(uint64_t))))
				return -1;
			gvals(r, q->seg[i].v, q->seg[i].n);
			tot += q->seg[i].n;
		}
		if (tot != q->n)
			r->err = 1;
	} else {
		uint64_t idx = 0, tot = 0, d, count;
		size_t nbk = gcount(r, 2);

		if (r->err || ga_quant_to_sketch(&q->h))
			return -1;
		for (size_t i = 0; i < nbk && !r->err; i++) {
			d = gv(r);
			idx += d;
			count = gv(r);
			/* Ascending, within a 64-bit value's last bucket, counts not wrapping. */
			if ((i && !d) || d >= GA_QUANT_BUCKETS || idx >= GA_QUANT_BUCKETS || !count ||
			    count > UINT64_MAX - tot) {
				r->err = 1;
				break;
			}
			/* What the span allocates, counted before it is. */
			r->hist += i ? 8 * d : 8;
			if (r->hist > SUM_HIST_MAX && r->hist / 64 > r->len) {
				r->err = 1;
				break;
			}
			tot += count;
			if (ga_quant_add_bucket(&q->h, (uint32_t)idx, count))
				return -1;
		}
		if (tot != q->n)
			r->err = 1;
		/* The bucket bounds widened by the exact ones, for the clamp of ranks. */
		q->h.min = q->min;
		q->h.max = q->max;
	}
	/* A row exists for a duration at least: tables divide by their counts. */
	if (!q->n || q->min > q->max)
		r->err = 1;
	return r->err ? -1 : 0;
}

static void get_ms(struct rbuf *r, struct smemstat *x)
{
	x->count = gv(r);
	x->bytes = gv(r);
	x->total = gv(r);
	x->label = gs(r);
}

/* Section 14: per-rank rows, one process each, in process order. */
static int get_ranks(struct rbuf *r, struct ga_sum *s)
{
	size_t n;

	if (gtable(r, RANK_U64, RANK_U64 + 2, &n))
		return -1;
	if (!(s->ranks = calloc(n + 1, sizeof(*s->ranks))))
		return -1;
	for (size_t i = 0; i < n && !r->err; i++) {
		struct srank *x = &s->ranks[s->nranks++];

		x->proc = g32(r);
		for (size_t j = 0; j < RANK_U64; j++)
			x->u[j] = gv(r);
		x->nst = gcount(r, 2);
		/* One row a process, in order: apply() indexes rows by process. */
		if (x->proc >= s->nprocs || (i && x->proc <= s->ranks[i - 1].proc) ||
		    x->u[0] > UINT32_MAX)
			r->err = 1;
		if (r->err || !(x->st = calloc(x->nst + 1, sizeof(*x->st))))
			return -1;
		for (size_t j = 0; j < x->nst; j++) {
			x->st[j].label = gs(r);
			x->st[j].work = gv(r);
		}
	}
	return r->err ? -1 : 0;
}

/* Section 15: NVTX names, marks and the tree (parents first, ids in range). */
static int get_nvtx(struct rbuf *r, struct ga_sum *s)
{
	size_t n, i, j;

	if (gcounters(r, s->rsc, RSC_COUNT, 1))
		return -1;
	if (gtable(r, RKEY_U64, RKEY_U64 + 10, &n))
		return -1;
	if (!(s->rkeys = calloc(n + 1, sizeof(*s->rkeys))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct srkey *x = &s->rkeys[s->nrkeys++];

		x->name = gs(r);
		x->domain = gs(r);
		x->label = gs(r);
		for (j = 0; j < RKEY_U64; j++)
			x->u[j] = gv(r);
		if (!x->label)
			r->err = 1;
		if (get_sq(r, &x->q))
			return -1;
	}
	n = gcount(r, 4);
	if (r->err || !(s->marks = calloc(n + 1, sizeof(*s->marks))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct smark *x = &s->marks[s->nmarks++];

		x->name = gs(r);
		x->domain = gs(r);
		x->label = gs(r);
		x->count = gv(r);
	}
	if (gtable(r, NODE_U64, NODE_U64 + 3, &n))
		return -1;
	if (!(s->nodes = calloc(n + 1, sizeof(*s->nodes))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct snode *x = &s->nodes[s->nnodes++];
		uint64_t p = gv(r);

		x->parent = p ? (uint32_t)(p - 1) : UINT32_MAX;
		x->kind = g32(r);
		x->id = x->kind == GA_RANGES_N_KERNEL ? gs(r) : gv(r);
		for (j = 0; j < NODE_U64; j++)
			x->u[j] = gv(r);
		/* Parents first; the pseudo roots are roots, activities never are. */
		if (p > i || x->kind > GA_RANGES_N_GRAPH ||
		    (x->kind == GA_RANGES_N_RANGE && x->id >= s->nrkeys) ||
		    (x->kind != GA_RANGES_N_KERNEL && x->id > UINT32_MAX) ||
		    ((x->kind == GA_RANGES_N_NORANGE || x->kind == GA_RANGES_N_UNATTR) && p) ||
		    (x->kind >= GA_RANGES_N_KERNEL && !p))
			r->err = 1;
	}
	return r->err ? -1 : 0;
}

/* Section 16: launch latency and launch configurations. */
static int get_launches(struct rbuf *r, struct ga_sum *s)
{
	size_t n, i, j;

	if (gcounters(r, s->lsc, LSC_COUNT, 1))
		return -1;
	n = gcount(r, 10);
	if (r->err || !(s->lat = calloc(n + 1, sizeof(*s->lat))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct slat *x = &s->lat[s->nlat++];

		x->name = gs(r);
		if (get_sq(r, &x->q))
			return -1;
	}
	if (gtable(r, LCFG_U64, LCFG_U64 + 2, &n))
		return -1;
	if (!(s->lcfg = calloc(n + 1, sizeof(*s->lcfg))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct slcfg *x = &s->lcfg[s->nlcfg++];

		x->name = gs(r);
		x->origin = gs(r);
		for (j = 0; j < LCFG_U64; j++)
			x->u[j] = gv(r);
		/* Fields of 32 bits; a launch at least. */
		for (j = 0; j < LCFG_KEY; j++)
			if (x->u[j] > UINT32_MAX)
				r->err = 1;
		if (!x->u[9] || x->u[12] > UINT32_MAX || x->u[13] > GA_OCC_SHARED)
			r->err = 1;
		if (x->u[11] != UINT64_MAX) {
			double occ;

			memcpy(&occ, &x->u[11], sizeof(occ));
			if (!(occ >= 0 && occ <= 1))
				r->err = 1;
		}
	}
	return r->err ? -1 : 0;
}

/* Section 21: the GPU over time. */
static int get_gs(struct rbuf *r, struct ga_sum *s)
{
	size_t n, i, j;

	if (gcounters(r, s->gssc, GSSC_COUNT, 0) || gtable(r, GSS_U64, GSS_U64 + 2, &n) ||
	    !(s->gss = calloc(n + 1, sizeof(*s->gss))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sgss *x = &s->gss[s->ngss++];
		size_t nm;

		x->proc = g32(r);
		for (j = 0; j < GSS_U64; j++)
			x->u[j] = gv(r);
		nm = gcount(r, 6);
		/* Ids, device, source and status 32 bits; the reasons' metric one of them. */
		if (r->err || x->proc >= s->nprocs || x->u[0] > UINT32_MAX || x->u[1] > UINT32_MAX ||
		    x->u[2] > UINT32_MAX || x->u[3] > UINT32_MAX || nm > UINT32_MAX ||
		    x->u[8] > nm)
			return r->err = 1, -1;
		x->mlo = (uint32_t)s->ngsm;
		x->nm = (uint32_t)nm;
		if (nm && GROW(s->gsm, s->ngsm + nm))
			return -1;
		for (j = 0; j < nm && !r->err; j++) {
			struct sgsm *mt = &s->gsm[s->ngsm++];

			mt->name = gs(r);
			mt->samples = gv(r);
			mt->last_end = gv(r);
			mt->avg = gv(r);
			mt->min = gv(r);
			mt->max = gv(r);
		}
	}
	n = gcount(r, 6);
	if (r->err || !(s->gsa = calloc(n + 1, sizeof(*s->gsa))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sgsa *x = &s->gsa[s->ngsa++];
		uint64_t series;
		size_t k;

		x->kind = g32(r);
		x->key = gs(r);
		series = gv(r);
		x->count = gv(r);
		x->samples = gv(r);
		x->time_ns = gv(r);
		if (r->err || x->kind > 1 || series >= s->ngss)
			return r->err = 1, -1;
		x->series = (uint32_t)series;
		x->vlo = (uint32_t)s->ngsv;
		k = 2 * (size_t)s->gss[series].nm;
		if (k > (r->len - r->off))
			return r->err = 1, -1;
		if (k && GROW(s->gsv, s->ngsv + k))
			return -1;
		for (j = 0; j < k; j++)
			s->gsv[s->ngsv++] = gv(r);
	}
	return r->err ? -1 : 0;
}

/* Section 20: memory in use. */
static int get_mu(struct rbuf *r, struct ga_sum *s)
{
	size_t n, i, j, k;

	s->mu_records = gv(r);
	s->mu_host = gv(r);
	if (gtable(r, MUD_U64, MUD_U64 + 3, &n) || !(s->mud = calloc(n + 1, sizeof(*s->mud))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct smud *d = &s->mud[s->nmud++];
		size_t na;

		d->proc = g32(r);
		for (j = 0; j < MUD_U64; j++)
			d->u[j] = gv(r);
		na = gcount(r, MUA_U64);
		if ((size_t)gv(r) != MUA_U64 || na > GA_MEMUSE_TOP || d->proc >= s->nprocs ||
		    d->u[0] > UINT32_MAX)
			r->err = 1;
		if (r->err)
			return -1;
		d->alo = (uint32_t)s->nmua;
		d->na = (uint32_t)na;
		for (j = 0; j < na; j++) {
			if (GROW(s->mua, s->nmua))
				return -1;
			for (k = 0; k < MUA_U64; k++)
				s->mua[s->nmua].u[k] = gv(r);
			/* Correlation 32 bits, kind, flags and freed 8. */
			if (s->mua[s->nmua].u[4] > UINT32_MAX || s->mua[s->nmua].u[5] > 255 ||
			    s->mua[s->nmua].u[6] > 255 || s->mua[s->nmua].u[7] > 1)
				r->err = 1;
			s->nmua++;
		}
	}
	return r->err ? -1 : 0;
}

/* Section 22: NCCL collectives. */
static int get_ncl(struct rbuf *r, struct ga_sum *s)
{
	size_t n = gcount(r, 5), i, j, cap = 0;

	if (r->err || !(s->ncl = calloc(n + 1, sizeof(*s->ncl))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sncl *c = &s->ncl[s->nncl];
		uint64_t prev = 0, file = gv(r), stream = gv(r), coll = gv(r);
		size_t k = gcount(r, 2);

		if (r->err || file >= s->nfiles || !coll || coll > GA_ALIGN_COLLS ||
		    k > GA_ALIGN_KEEP ||
		    ga_util_grow(&s->nclv, &cap, s->nnclv + k + 1, 2 * sizeof(*s->nclv)))
			return r->err = 1, -1;
		*c = (struct sncl){ (uint32_t)file, (uint32_t)coll, stream, s->nnclv, k };
		for (j = 0; j < k; j++) {
			uint64_t d = gv(r), len = gv(r), *p = &s->nclv[2 * (s->nnclv + j)];

			if (d > UINT64_MAX - prev || len > UINT64_MAX - (prev + d))
				return r->err = 1, -1;
			p[0] = prev + d;
			p[1] = p[0] + len;
			prev = p[0];
		}
		s->nnclv += k;
		s->nncl++;
	}
	return r->err ? -1 : 0;
}

/* Section 19: hardware metrics. */
static int get_mx(struct rbuf *r, struct ga_sum *s)
{
	size_t n, i, j;

	if (gcounters(r, s->mxs, MXS_COUNT, 0))
		return -1;
	s->mx_set = gs(r);
	s->mx_origin = gs(r);
	s->mx_status_origin = gs(r);
	n = gcount(r, 3);
	if (r->err || !(s->mxn = calloc(n + 1, sizeof(*s->mxn))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct smxn *x = &s->mxn[s->nmxn++];

		x->name = gs(r);
		x->origin = gs(r);
		x->idx = gv(r);
		if (!x->name || x->idx > UINT32_MAX)
			r->err = 1;
	}
	if (gtable(r, MXP_U32 + MXP_F64, MXP_U32 + MXP_F64 + 2, &n) ||
	    !(s->mxp = calloc(n + 1, sizeof(*s->mxp))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct smxp *x = &s->mxp[s->nmxp++];

		x->proc = g32(r);
		x->chip = gs(r);
		for (j = 0; j < MXP_U32; j++)
			if ((x->u[j] = gv(r)) > UINT32_MAX)
				r->err = 1;
		for (j = 0; j < MXP_F64; j++)
			x->f[j] = gv(r);
		if (x->proc >= s->nprocs)
			r->err = 1;
	}
	if (gtable(r, MXK_U64 + MXK_F64, MXK_U64 + MXK_F64 + 3, &n) ||
	    !(s->mxk = calloc(n + 1, sizeof(*s->mxk))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct smxk *k = &s->mxk[s->nmxk++];
		size_t nv;

		k->name = gs(r);
		k->proc = g32(r);
		for (j = 0; j < MXK_U64; j++)
			k->u[j] = gv(r);
		for (j = 0; j < MXK_F64; j++)
			k->f[j] = gv(r);
		nv = gcount(r, 2);
		/* Fields of 32 bits; a metric measured once per name. */
		if (r->err || !k->name || k->proc >= s->nprocs || k->u[0] > UINT32_MAX ||
		    k->u[5] > UINT32_MAX || k->u[8] > UINT32_MAX || nv > s->nmxn)
			return r->err = 1, -1;
		k->vlo = (uint32_t)s->nmxv;
		k->nv = (uint32_t)nv;
		for (j = 0; j < nv && !r->err; j++) {
			if (GROW(s->mxv, s->nmxv))
				return -1;
			s->mxv[s->nmxv].name = gs(r);
			s->mxv[s->nmxv++].bits = gv(r);
		}
	}
	return r->err ? -1 : 0;
}

/* Section 18: launch sites. */
static int get_sites(struct rbuf *r, struct ga_sum *s)
{
	size_t n, i, j;

	if (gcounters(r, s->ssc, SSC_COUNT, 0) || gtable(r, SSITE_U64, SSITE_U64 + 3, &n))
		return -1;
	if (!(s->sites = calloc(n + 1, sizeof(*s->sites))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct ssite *x = &s->sites[s->nsites++];
		size_t nf;

		x->str = gs(r);
		x->origin = gs(r);
		for (j = 0; j < SSITE_U64; j++)
			x->u[j] = gv(r);
		nf = gcount(r, 1);
		if (r->err || nf > GA_SITES_MAX_FRAMES || !x->str)
			return r->err = 1, -1;
		x->foff = (uint32_t)s->nsframes;
		x->nf = (uint32_t)nf;
		for (j = 0; j < nf; j++) {
			if (GROW(s->sframes, s->nsframes))
				return -1;
			s->sframes[s->nsframes++] = gs(r);
		}
	}
	n = gcount(r, 4);
	if (r->err || !(s->skern = calloc(n + 1, sizeof(*s->skern))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sskern *x = &s->skern[s->nskern++];
		uint64_t site = gv(r);

		x->name = gs(r);
		x->count = gv(r);
		x->ns = gv(r);
		if (site >= s->nsites || !x->name)
			r->err = 1;
		x->site = (uint32_t)site;
	}
	n = gcount(r, 3);
	if (r->err || !(s->smods = calloc(n + 1, sizeof(*s->smods))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct smod *x = &s->smods[s->nsmods++];

		x->name = gs(r);
		x->why = gs(r);
		x->verdict = gv(r);
		if (x->verdict > INT32_MAX)
			r->err = 1;
	}
	/* A depth of frames as a report shows them. */
	if (s->nsites && (!s->ssc[0] || s->ssc[0] > GA_SITES_MAX_FRAMES))
		r->err = 1;
	return r->err ? -1 : 0;
}

static void fstate_mark(const struct ga_sum *s, uint32_t *used)
{
	size_t i, j;

	for (i = 0; i < s->nfdev; i++)
		for (j = 0; j < s->fdev[i].nst; j++)
			mark(used, s->fdev[i].st[j].site);
	for (i = 0; i < s->nfpl; i++)
		for (j = 0; j < FPL_STR; j++)
			mark(used, s->fpl[i].str[j]);
	for (i = 0; i < s->nflb; i++)
		mark(used, s->flb[i].name);
	for (i = 0; i < s->nfks; i++) {
		mark(used, s->fks[i].name);
		mark(used, s->fks[i].site);
	}
}

static void put_fstate(const struct ga_sum *s, struct wbuf *w, const struct strnum *sn)
{
	size_t i, j;

	pv(w, FS_COUNT);
	for (i = 0; i < FS_COUNT; i++)
		pv(w, s->fs[i]);
	pv(w, s->nfdev);
	pv(w, FD_U64);
	for (i = 0; i < s->nfdev; i++) {
		const struct sfdev *d = &s->fdev[i];

		pv(w, d->dev);
		for (j = 0; j < FD_U64; j++)
			pv(w, d->u[j]);
		pv(w, d->nst);
		for (j = 0; j < d->nst; j++) {
			pv(w, d->st[j].proc);
			ps(w, sn, d->st[j].site);
			pv(w, d->st[j].stream);
			pv(w, d->st[j].ns);
			pv(w, d->st[j].count);
		}
	}
	pv(w, s->nfpl);
	for (i = 0; i < s->nfpl; i++) {
		const struct sfplace *p = &s->fpl[i];

		pv(w, p->dev);
		pv(w, p->cause);
		pv(w, p->proc);
		for (j = 0; j < FPL_STR; j++)
			ps(w, sn, p->str[j]);
		pv(w, p->stream);
		pv(w, p->ns);
		pv(w, p->count);
	}
	pv(w, s->nflb);
	for (i = 0; i < s->nflb; i++) {
		ps(w, sn, s->flb[i].name);
		pv(w, s->flb[i].gap);
		pv(w, s->flb[i].count);
	}
	pv(w, s->nfks);
	for (i = 0; i < s->nfks; i++) {
		ps(w, sn, s->fks[i].name);
		ps(w, sn, s->fks[i].site);
		pv(w, s->fks[i].ns);
	}
	pv(w, s->nfnull);
	for (i = 0; i < s->nfnull; i++) {
		pv(w, s->fnull[i].proc);
		pv(w, s->fnull[i].stream);
	}
}

/* A process index of s, or FNONE where none is allowed. */
static uint32_t gproc(struct rbuf *r, const struct ga_sum *s, int none)
{
	uint64_t v = gv(r);

	if (v < s->nprocs || (none && v == FNONE))
		return (uint32_t)v;
	r->err = 1;
	return 0;
}

static int get_fstate(struct rbuf *r, struct ga_sum *s)
{
	size_t i, j, n;

	if (gcounters(r, s->fs, FS_COUNT, 0))
		return -1;
	/*
	 * Tiny copies: none has no time, and no shortest (2^64 - 1; 0 where no
	 * part has findings' state, all 0); some, a shortest within their mean.
	 */
	for (i = 0; i < GA_COPY_KIND_MAX; i++) {
		const uint64_t *u = &s->fs[FS_COPY0 + i * FCOPY_U64];
		uint64_t none = s->fs[FS_PARTS] ? UINT64_MAX : 0;

		if (u[0] && (!s->fs[FS_PARTS] || u[FCOPY_MIN] > u[2] / u[0]))
			return r->err = 1, -1;
		if (!u[0] && (u[1] || u[2] || u[4] || u[FCOPY_MIN] != none))
			return r->err = 1, -1;
	}
	if (gtable(r, FD_U64, FD_U64 + 2, &n))
		return -1;
	if (!(s->fdev = calloc(n + 1, sizeof(*s->fdev))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sfdev *d = &s->fdev[s->nfdev++];

		d->dev = g32(r);
		for (j = 0; j < FD_U64; j++)
			d->u[j] = gv(r);
		d->nst = g32(r);
		if (d->dev >= s->ndevs || d->nst > GA_FIND_STREAMS)
			return r->err = 1, -1;
		for (j = 0; j < d->nst; j++) {
			d->st[j].proc = gproc(r, s, 0);
			d->st[j].site = gs(r);
			d->st[j].stream = gv(r);
			d->st[j].ns = gv(r);
			d->st[j].count = gv(r);
			if (d->st[j].stream > UINT32_MAX)
				r->err = 1;
		}
	}
	n = gcount(r, 13);
	if (r->err || !(s->fpl = calloc(n + 1, sizeof(*s->fpl))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sfplace *p = &s->fpl[s->nfpl++];

		p->dev = g32(r);
		p->cause = g32(r);
		p->proc = gproc(r, s, 1);
		for (j = 0; j < FPL_STR; j++)
			p->str[j] = gs(r);
		p->stream = gv(r);
		p->ns = gv(r);
		p->count = gv(r);
		if (p->dev >= s->ndevs || p->cause >= GA_CAUSE_COUNT || p->stream > UINT32_MAX)
			r->err = 1;
	}
	n = gcount(r, 3);
	if (r->err || !(s->flb = calloc(n + 1, sizeof(*s->flb))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sflb *x = &s->flb[s->nflb++];

		x->name = gs(r);
		x->gap = gv(r);
		x->count = gv(r);
	}
	n = gcount(r, 3);
	if (r->err || !(s->fks = calloc(n + 1, sizeof(*s->fks))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sfks *x = &s->fks[s->nfks++];

		x->name = gs(r);
		x->site = gs(r);
		x->ns = gv(r);
	}
	n = gcount(r, 2);
	if (r->err || !(s->fnull = calloc(n + 1, sizeof(*s->fnull))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		s->fnull[s->nfnull].proc = gproc(r, s, 0);
		s->fnull[s->nfnull].stream = gv(r);
		if (s->fnull[s->nfnull++].stream > UINT32_MAX)
			r->err = 1;
	}
	return r->err ? -1 : 0;
}

/* Decodes a body into s.  0, or -1 with r->err (malformed) or not (memory). */
static int decode(struct rbuf *r, struct ga_sum *s)
{
	size_t i, j, n;

	n = gcount(r, 1);
	if (r->err || !(r->ids = calloc(n + 1, sizeof(*r->ids))))
		return -1;
	for (i = 0; i < n; i++) {
		size_t len = gcount(r, 1);

		if (r->err)
			return -1;
		r->ids[i] = ga_strtab_intern(&s->s, (const char *)r->p + r->off, len);
		if (r->ids[i] == GA_STR_NOMEM)
			return -1;
		r->off += len;
		r->nids++;
	}
	s->limit = gv(r);
	if (!s->limit)
		s->limit = UINT64_MAX;
	if (gcounters(r, s->sc, SC_COUNT, 0))
		return -1;
	n = gcount(r, 15);
	if (r->err || !(s->files = calloc(n + 1, sizeof(*s->files))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sfile *f = &s->files[s->nfiles++];

		f->k.origin = gs(r);
		f->k.idx = g32(r);
		f->path = gs(r);
		f->reason = gs(r);
		f->damaged = gv(r);
		f->finished = gv(r);
		f->bytes_unread = gv(r);
		f->file_size = gv(r);
		f->chunks = gv(r);
		f->last_flag = gv(r);
		f->records = gv(r);
		f->unknown = gv(r);
		f->malformed = gv(r);
		f->chunk_lost = gv(r);
		f->stop_offset = gv(r);
	}
	if (gtable(r, PROC_U64, 6, &n) || !(s->procs = calloc(n + 1, sizeof(*s->procs))))
		return r->err = 1, -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sproc *p = &s->procs[s->nprocs++];

		p->k.origin = gs(r);
		p->k.idx = g32(r);
		p->file = g32(r);
		p->host = gs(r);
		p->exe = gs(r);
		p->cmdline = gs(r);
		p->ahost = gs(r);
		for (j = 0; j < PROC_U64; j++)
			if ((p->u[j] = gv(r)) > UINT32_MAX && (PROC_U32 >> j & 1))
				r->err = 1;
		if (p->file >= s->nfiles)
			r->err = 1;
	}
	n = gcount(r, 5);
	if (r->err || !(s->wins = calloc(n + 1, sizeof(*s->wins))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct swin *w = &s->wins[s->nwins++];

		w->proc = g32(r);
		w->name = gs(r);
		w->start = gv(r);
		w->end = gv(r);
		w->kind = g32(r);
		if (w->proc >= s->nprocs)
			r->err = 1;
	}
	if (gtable(r, DEV_U64, 16, &n) || !(s->devs = calloc(n + 1, sizeof(*s->devs))))
		return r->err = 1, -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sdev *d = &s->devs[s->ndevs++];

		d->k.origin = gs(r);
		d->k.idx = g32(r);
		d->proc = g32(r);
		d->host = gs(r);
		d->name = gs(r);
		if (r->off + 16 > r->len)
			return r->err = 1, -1;
		memcpy(d->uuid, r->p + r->off, 16);
		r->off += 16;
		for (j = 0; j < DEV_U64; j++)
			if ((d->u[j] = gv(r)) > UINT32_MAX && (DEV_U32 >> j & 1))
				r->err = 1;
		if (d->proc >= s->nprocs)
			r->err = 1;
	}
	n = gcount(r, 5);
	if (r->err || !(s->devrows = calloc(n + 1, sizeof(*s->devrows))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sdevrow *d = &s->devrows[s->ndevrows++];
		uint64_t prev = 0;

		d->proc = g32(r);
		d->dev = g32(r);
		d->id = gv(r);
		d->count = gv(r);
		d->total = gv(r);
		if (d->proc >= s->nprocs || d->dev >= s->ndevs)
			r->err = 1;
		d->niv = gcount(r, 2);
		if (r->err || !(d->iv = calloc(d->niv + 1, sizeof(*d->iv))))
			return -1;
		for (j = 0; j < d->niv; j++) {
			d->iv[j].start = prev + gv(r);
			d->iv[j].end = d->iv[j].start + gv(r);
			if (d->iv[j].start < prev || d->iv[j].end < d->iv[j].start)
				r->err = 1;
			prev = d->iv[j].end;
		}
		if (r->version < 6)
			continue;
		/* Intervals dropped: the busy time within the span, and no intervals. */
		d->dropped = (int)gv(r);
		if (d->dropped) {
			d->busy = gv(r);
			d->first = gv(r);
			d->last = d->first + gv(r);
			if (d->dropped != 1 || d->niv || d->last < d->first ||
			    d->busy > d->last - d->first)
				r->err = 1;
		}
	}
	n = gcount(r, 3);
	if (r->err || !(s->labels = calloc(n + 1, sizeof(*s->labels))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		s->labels[i].str = gs(r);
		s->labels[i].count = gv(r);
		s->labels[i].total = gv(r);
		/* A label is a name: apply() could not make a row of none. */
		if (!s->labels[i].str)
			r->err = 1;
		s->nlabels++;
	}
	n = gcount(r, 10);
	if (r->err || !(s->ks = calloc(n + 1, sizeof(*s->ks))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct skstat *x = &s->ks[s->nks++];

		x->name = gs(r);
		x->label = gs(r);
		x->in_graph = gv(r);
		if (!x->label)
			r->err = 1;
		if (get_sq(r, &x->q))
			return -1;
	}
	n = gcount(r, 11);
	if (r->err || !(s->mo = calloc(n + 1, sizeof(*s->mo))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct smemop *x = &s->mo[s->nmo++];

		/* 32-bit in the model; wider would also merge rows of another key. */
		x->kind = g32(r);
		x->src = g32(r);
		x->dst = g32(r);
		x->bytes = gv(r);
		if (get_sq(r, &x->q))
			return -1;
	}
	for (i = 0; i < GA_COPY_KIND_MAX; i++)
		get_ms(r, &s->copy[i]);
	get_ms(r, &s->memset_st);
	get_ms(r, &s->leg[0]);
	get_ms(r, &s->leg[1]);
	n = gcount(r, 7);
	if (r->err || !(s->graphs = calloc(n + 1, sizeof(*s->graphs))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sgraph *g = &s->graphs[s->ngraphs++];

		g->proc = g32(r);
		g->label = gs(r);
		g->graph_id = gv(r);
		g->launches = gv(r);
		g->total = gv(r);
		g->kernels = gv(r);
		g->nodes = gv(r);
		if (g->proc >= s->nprocs)
			r->err = 1;
	}
	n = gcount(r, 10);
	if (r->err || !(s->as = calloc(n + 1, sizeof(*s->as))))
		return -1;
	for (i = 0; i < n && !r->err; i++) {
		struct sastat *x = &s->as[s->nas++];

		x->name = gs(r);
		x->errors = gv(r);
		x->threads = gv(r);
		if (get_sq(r, &x->q))
			return -1;
	}
	if (get_ranks(r, s) || get_nvtx(r, s) || get_launches(r, s) ||
	    (r->version >= 5 && get_fstate(r, s)) ||
	    (r->version >= 7 &&
	     (get_sites(r, s) || get_mx(r, s) || get_mu(r, s) || get_gs(r, s))) ||
	    (r->version >= 8 && get_ncl(r, s)))
		return -1;
	s->no_sites = r->version < 7;
	s->no_nccl = r->version < 8;
	if (!r->err && r->off != r->len)
		r->err = 1;
	return r->err ? -1 : 0;
}

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ga_summary_is(const char *path)
{
	char m[8];
	int fd, r = 0;

	if (!strcmp(path, "-") || (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return 0;
	{
		struct stat st;

		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, m, 8) == 8 &&
		    !memcmp(m, GA_SUM_MAGIC, 8))
			r = 1;
	}
	close(fd);
	return r;
}

/* The version in the header of the summary at path (0 unreadable: the read says why). */
static uint32_t sum_version(const char *path)
{
	unsigned char h[12];
	FILE *f = fopen(path, "rb");
	uint32_t v = 0;

	if (f && fread(h, 1, sizeof(h), f) == sizeof(h))
		v = rd32(h + 8);
	if (f)
		fclose(f);
	return v ? v : GA_SUM_VERSION;
}

int ga_summary_any(char *const *paths, int n)
{
	for (int i = 0; i < n; i++)
		if (ga_summary_is(paths[i]))
			return 1;
	return 0;
}

/*
 * The largest zstd window a body may ask for: ga_summary_encode()'s level 3
 * uses 2 MiB at most (2^21), level 9 of earlier versions 4 MiB (2^22); one
 * more for another zstd's choice.  The decoder's window buffer is the one
 * allocation not tied to bytes decoded.
 */
#define SUM_WINDOW_LOG_MAX 23

/*
 * The zstd frames src[0..slen) decompressed into a buffer that grows with
 * what they hold, to want bytes exactly: the size in the header is only a
 * limit, so a file claiming a large body allocates what its frames produce
 * (at most twice that), never what it claims.  Returns the buffer, or NULL
 * with *why saying what is wrong (*nomem set when memory ran out).
 */
static unsigned char *inflate_body(const unsigned char *src, size_t slen, uint64_t want,
				   const char **why, int *nomem)
{
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	ZSTD_inBuffer in = { src, slen, 0 };
	unsigned char *out = NULL, *t;
	size_t cap = 0, got = 0, ret = 1;

	*nomem = 0;
	if (!dc || ZSTD_isError(ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax,
						       SUM_WINDOW_LOG_MAX))) {
		*why = "out of memory";
		*nomem = 1;
		goto fail;
	}
	while (in.pos < in.size || ret) {
		ZSTD_outBuffer ob;
		size_t in0 = in.pos;

		if (got == cap) {
			/* One byte past want: room to see a body longer than said. */
			size_t ncap = cap ? cap * 2 : (size_t)1 << 16;

			if (ncap > want + 1)
				ncap = (size_t)want + 1;
			if (ncap <= cap) {
				*why = "size mismatch (more than the header says)";
				goto fail;
			}
			if (!(t = realloc(out, ncap))) {
				*why = "out of memory";
				*nomem = 1;
				goto fail;
			}
			out = t;
			cap = ncap;
		}
		ob = (ZSTD_outBuffer){ out, cap, got };
		ret = ZSTD_decompressStream(dc, &ob, &in);
		if (ZSTD_isError(ret)) {
			*why = ZSTD_getErrorName(ret);
			goto fail;
		}
		if (ob.pos == got && in.pos == in0 && ob.pos < ob.size) {
			*why = "truncated frame";
			goto fail;
		}
		got = ob.pos;
	}
	if (got != want) {
		*why = got < want ? "size mismatch (less than the header says)" :
				    "size mismatch (more than the header says)";
		goto fail;
	}
	ZSTD_freeDCtx(dc);
	return out;
fail:
	ZSTD_freeDCtx(dc);
	free(out);
	return NULL;
}

struct ga_sum *ga_summary_read(const char *path, char *err, size_t errlen)
{
	unsigned char *buf = NULL, *raw = NULL;
	struct ga_sum *s = NULL;
	struct rbuf r = { 0 };
	struct stat st;
	uint64_t rawlen;
	size_t got = 0;
	const char *why = "out of memory";
	int nomem, fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "%s: byte 0: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < GA_SUM_HEADER_SIZE) {
		snprintf(err, errlen, "%s: byte 0: not a summary (too short)", path);
		goto out;
	}
	if (!(buf = malloc((size_t)st.st_size))) {
		snprintf(err, errlen, "%s: byte 0: out of memory", path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			snprintf(err, errlen, "%s: byte %zu: cannot read: %s", path, got,
				 k < 0 ? strerror(errno) : "file shrank");
			goto out;
		}
		got += (size_t)k;
	}
	if (memcmp(buf, GA_SUM_MAGIC, 8)) {
		snprintf(err, errlen, "%s: byte 0: not a gpuprof summary (bad magic)", path);
		goto out;
	}
	/* Version 4 lacks the findings' state only: read, its findings said missing. */
	if (rd32(buf + 8) < GA_SUM_VERSION_MIN || rd32(buf + 8) > GA_SUM_VERSION) {
		snprintf(err, errlen, "%s: byte 8: summary version %u; this gpuprof reads "
			 "versions %u to %u (summarize the traces again with this gpuprof)", path,
			 rd32(buf + 8), GA_SUM_VERSION_MIN, GA_SUM_VERSION);
		goto out;
	}
	if (rd32(buf + 12) != GA_SUM_HEADER_SIZE || rd32(buf + 28) != 0) {
		snprintf(err, errlen, "%s: byte 12: bad summary header", path);
		goto out;
	}
	rawlen = rd64(buf + 16);
	if (rd32(buf + 24) != gp_crc32c(0, buf + GA_SUM_HEADER_SIZE, got - GA_SUM_HEADER_SIZE)) {
		snprintf(err, errlen, "%s: byte %u: checksum mismatch (damaged summary)", path,
			 GA_SUM_HEADER_SIZE);
		goto out;
	}
	if (rawlen > GA_SUM_RAW_MAX) {
		snprintf(err, errlen, "%s: byte 16: body of %llu bytes refused", path,
			 (unsigned long long)rawlen);
		goto out;
	}
	if (!(raw = inflate_body(buf + GA_SUM_HEADER_SIZE, got - GA_SUM_HEADER_SIZE, rawlen, &why,
				 &nomem))) {
		if (nomem)
			snprintf(err, errlen, "%s: byte %u: out of memory", path,
				 GA_SUM_HEADER_SIZE);
		else
			snprintf(err, errlen, "%s: byte %u: cannot decompress: %s", path,
				 GA_SUM_HEADER_SIZE, why);
		goto out;
	}
	if (!(s = sum_new())) {
		snprintf(err, errlen, "%s: byte 0: out of memory", path);
		goto out;
	}
	r.p = raw;
	r.len = rawlen;
	r.version = rd32(buf + 8);
	if (decode(&r, s)) {
		if (r.err)
			snprintf(err, errlen, "%s: byte %zu of the decompressed body: malformed "
				 "summary", path, r.off);
		else
			snprintf(err, errlen, "%s: byte 0: out of memory", path);
		ga_summary_free(s);
		s = NULL;
	}
out:
	free(r.ids);
	free(raw);
	free(buf);
	close(fd);
	return s;
}

/* ---- applying to an analysis ---- */

struct amap {
	uint32_t *v;               /* summary string id -> model strtab id */
	uint32_t *lab;             /* summary string id -> model label index + 1 */
	int err;
};

static uint32_t A(struct amap *am, struct ga_model *m, const struct ga_sum *s, uint32_t id)
{
	uint32_t r;

	if (!id)
		return 0;
	if (am->v[id])
		return am->v[id];
	r = ga_strtab_intern_from(&m->strs, &s->s, id);
	if (r == GA_STR_NOMEM)
		am->err = 1;
	else
		am->v[id] = r;
	return r;
}

/*
 * Label index + 1 of string id, added when new.  Only this adds labels to
 * the model of a summary, and distinct ids are distinct strings, so a label
 * is found by its id (a search of the labels made a summary of many labels
 * quadratic: 300000 of them took minutes).
 */
static uint32_t label_of(struct amap *am, struct ga_model *m, const struct ga_sum *s,
			 uint32_t id)
{
	uint32_t str = A(am, m, s, id);

	if (!id || am->err)
		return 0;
	if (am->lab[id])
		return am->lab[id];
	if (ga_util_grow(&m->labels, &m->caplabels, m->nlabels + 1, sizeof(*m->labels))) {
		am->err = 1;
		return 0;
	}
	m->labels[m->nlabels] = (struct ga_label){ str, 0, 0 };
	return am->lab[id] = (uint32_t)++m->nlabels;
}

/*
 * The findings' state of s into an's findings, settled: ga_findings_finish()
 * then runs the rules on it and the model applied.  Without any part's
 * state, no findings (finished).  0, or -1 out of memory.
 */
static int fstate_apply(const struct ga_sum *s, struct ga_analysis *an, struct amap *am)
{
	struct ga_findings *fd = &an->fd;
	struct ga_model *m = &an->m;
	size_t i, j;

	if (fd->off || !s->fs[FS_PARTS]) {
		fd->finished = 1;
		return 0;
	}
	/* Kernels by name, as the model reading their records numbers them. */
	if (ga_util_grow(&m->str2k, &m->capstr2k, m->strs.n + 1, sizeof(*m->str2k)))
		return -1;
	memset(m->str2k, 0, m->capstr2k * sizeof(*m->str2k));
	for (i = 0; i < m->nkstats; i++)
		if (m->kstats[i].name < m->capstr2k)
			m->str2k[m->kstats[i].name] = (uint32_t)i + 1;
	fd->m = m;
	fd->calls_dropped = s->fs[FS_DROPPED];
	fd->have_mx = 1;
	fd->mx_cost_ns = s->fs[FS_MX_COST];
	fd->mx_skipped = s->fs[FS_MX_SKIPPED];
	for (i = 0; i < GA_CAUSE_COUNT; i++) {
		fd->api_ns[i] = s->fs[FS_API_NS0 + i];
		fd->api_calls[i] = s->fs[FS_API_CALLS0 + i];
	}
	for (i = 0; i < GA_COPY_KIND_MAX; i++) {
		const uint64_t *u = &s->fs[FS_COPY0 + i * FCOPY_U64];
		struct ga_fcopy *c = &fd->copy[i];

		c->tiny = u[0];
		c->tiny_bytes = u[1];
		c->tiny_ns = u[2];
		c->tiny_min = u[3];
		c->tiny_gap_ns = u[4];
		c->pageable = u[5];
		c->pageable_bytes = u[6];
		c->pageable_ns = u[7];
		c->sync = u[8];
		c->sync_ns = u[9];
	}
	if (!(fd->devs = calloc(m->ndevs + 1, sizeof(*fd->devs))))
		return -1;
	fd->ndevs = fd->capdevs = m->ndevs;
	for (i = 0; i < s->nfdev; i++) {
		const struct sfdev *d = &s->fdev[i];
		const uint64_t *u = d->u;
		struct ga_fdev *v = &fd->devs[d->dev];

		for (j = 0; j < GA_CAUSE_COUNT; j++) {
			v->acc[j].n = u[3 * j];
			v->acc[j].ns = u[3 * j + 1];
			v->acc[j].longest = u[3 * j + 2];
		}
		v->lb = (struct ga_flbacc){ u[FD_ACC], u[FD_ACC + 1], u[FD_ACC + 2], u[FD_ACC + 3],
					    u[FD_ACC + 4] };
		v->sum = u[FD_ACC + FD_LB];
		v->other_ns = u[FD_ACC + FD_LB + 1];
		v->lk_short = u[FD_ACC + FD_LB + 2];
		v->lk_graph = u[FD_ACC + FD_LB + 3];
		v->lk_n = u[FD_ACC + FD_LB + 4];
		v->lk_ns = u[FD_ACC + FD_LB + 5];
		v->seen = 1;
		v->nstreams = d->nst;
		for (j = 0; j < d->nst; j++) {
			v->stream[j].key = (uint64_t)d->st[j].proc << 32 | d->st[j].stream;
			v->stream[j].ns = d->st[j].ns;
			v->stream[j].count = d->st[j].count;
			v->stream[j].site = A(am, m, s, d->st[j].site);
		}
	}
	if (!(fd->pl = calloc(s->nfpl + 1, sizeof(*fd->pl))))
		return -1;
	fd->cappl = s->nfpl + 1;
	for (i = 0; i < s->nfpl; i++) {
		const struct sfplace *p = &s->fpl[i];
		struct ga_fplace *o = &fd->pl[fd->npl++];

		o->dev = p->dev;
		o->cause = p->cause;
		o->w.site_before = A(am, m, s, p->str[0]);
		o->w.site_after = A(am, m, s, p->str[1]);
		o->w.site_call = A(am, m, s, p->str[2]);
		o->w.label_before = A(am, m, s, p->str[3]);
		o->w.label_after = A(am, m, s, p->str[4]);
		o->w.call = A(am, m, s, p->str[5]);
		o->w.nvtx = A(am, m, s, p->str[6]);
		o->w.proc = p->proc;
		o->w.stream = (uint32_t)p->stream;
		o->w.ns = p->ns;
		o->w.count = p->count;
	}
	if (!(fd->lb = calloc(m->nkstats + 1, sizeof(*fd->lb))))
		return -1;
	fd->caplb = m->nkstats;
	for (i = 0; i < s->nflb; i++) {
		uint32_t name = A(am, m, s, s->flb[i].name), k;

		if (name < m->capstr2k && (k = m->str2k[name])) {
			fd->lb[k - 1].gap = s->flb[i].gap;
			fd->lb[k - 1].count = s->flb[i].count;
		}
	}
	if (!(fd->ks = calloc(s->nfks + 1, sizeof(*fd->ks))))
		return -1;
	fd->have_ks = 1;
	for (i = 0; i < s->nfks; i++)
		fd->ks[fd->nks++] = (struct ga_fksite){ A(am, m, s, s->fks[i].name),
							A(am, m, s, s->fks[i].site), s->fks[i].ns };
	if (!(fd->nulls = calloc(s->nfnull + 1, sizeof(*fd->nulls))))
		return -1;
	fd->capnulls = s->nfnull + 1;
	for (i = 0; i < s->nfnull; i++)
		fd->nulls[fd->nnulls++] = (struct ga_fnull){ s->fnull[i].proc,
							     (uint32_t)s->fnull[i].stream };
	fd->settled = 1;
	fd->finished = 0;
	return am->err ? -1 : 0;
}

static void ms_apply(struct amap *am, struct ga_model *m, const struct ga_sum *s,
		     struct ga_memstat *o, const struct smemstat *x)
{
	o->count = x->count;
	o->bytes = x->bytes;
	o->total = x->total;
	o->label = label_of(am, m, s, x->label);
}

/*
 * Whether processes' times move to CLOCK_REALTIME, as model/align.c
 * decides for traces read together: when they come from several hosts, or
 * a clock is not CLOCK_REALTIME.
 */
static int clocks_move(const struct ga_sum *s)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].u[37] || s->procs[i].ahost != s->procs[0].ahost)
			return 1;
	return 0;
}

/* What to add to process i's times: its clock sync offset, its file's NCCL correction. */
static uint64_t delta_of(const struct ga_sum *s, int move, size_t i)
{
	uint64_t d = move && s->procs[i].u[35] ? s->procs[i].u[36] : 0;

	return s->nccl_ns ? d + (uint64_t)s->nccl_ns[s->procs[i].file] : d;
}

/*
 * The traces' clocks as model/align.c puts them on one line, for the
 * table's clock columns: where they move (clocks_move()), and with
 * --align nccl, each file's correction from the collectives the parts
 * carry (s->nccl_ns, which delta_of() adds).  0, or -1 out of memory.
 */
static int align_apply(struct ga_sum *s, struct ga_analysis *an, int move)
{
	struct ga_align *al = &an->al;
	struct ga_align_keep *keep = NULL;
	size_t i, j;
	int rc = -1;

	if (al->mode != GA_ALIGN_NCCL && !(move && s->nfiles > 1))
		return 0;
	if (!(al->f = calloc(s->nfiles + 1, sizeof(*al->f))))
		return -1;
	al->n = s->nfiles;
	for (i = 0; i < s->nfiles; i++)
		al->f[i].rank = UINT32_MAX;
	for (i = 0; i < s->nprocs; i++) {
		struct ga_align_file *f = &al->f[s->procs[i].file];

		f->rank = (uint32_t)s->procs[i].u[2];
		f->pid = (uint32_t)s->procs[i].u[0];
		snprintf(f->host, sizeof(f->host), "%s", ga_strtab_get(&s->s, s->procs[i].ahost));
		if (move && s->procs[i].u[35]) {
			f->has_sync = 1;
			f->sync_ns = f->clock_ns = (int64_t)s->procs[i].u[36];
			al->clock_applied = 1;
		}
	}
	if (al->mode != GA_ALIGN_NCCL)
		return 0;
	if (!(keep = calloc(s->nfiles + 1, sizeof(*keep))) ||
	    !(s->nccl_ns = calloc(s->nfiles + 1, sizeof(*s->nccl_ns))))
		goto out;
	for (i = 0; i < s->nncl; i++)
		for (j = 0; j < s->ncl[i].n; j++) {
			const uint64_t *p = &s->nclv[2 * (s->ncl[i].off + j)];

			if (ga_align_keep_add(&keep[s->ncl[i].file], s->ncl[i].stream, s->ncl[i].coll,
					      p[0], p[1]))
				goto out;
		}
	if (ga_align_nccl(al, keep))
		goto out;
	for (i = 0; i < s->nfiles; i++)
		s->nccl_ns[i] = al->f[i].nccl_ns;
	rc = 0;
out:
	for (i = 0; keep && i < s->nfiles; i++)
		ga_align_keep_free(&keep[i]);
	free(keep);
	return rc;
}

/*
 * The per-rank table (model/ranks.h) from the rows summaries carry, its
 * processes in rank order, and the traces' clock corrections as
 * model/align.c makes them without --align nccl (clocks_move()): the
 * table's clock columns.  0, or -1 out of memory.
 */
static int ranks_apply(const struct ga_sum *s, struct ga_analysis *an, struct amap *am)
{
	struct ga_ranks *rk = &an->rk;
	struct ga_model *m = &an->m;
	size_t i, j, nw = 0;

	rk->rows = calloc(s->nprocs + 1, sizeof(*rk->rows));
	rk->row_of = calloc(s->nprocs + 1, sizeof(*rk->row_of));
	for (i = 0; i < s->nranks; i++)
		nw += s->ranks[i].nst;
	rk->work = calloc(nw + 1, sizeof(*rk->work));
	if (!rk->rows || !rk->row_of || !rk->work)
		return -1;
	rk->capwork = nw + 1;
	rk->nrows = s->nprocs;
	for (i = 0; i < s->nprocs; i++) {
		rk->rows[i].proc = (uint32_t)i;
		rk->rows[i].rank = m->procs[i].rank;
	}
	for (i = 0; i < s->nranks; i++) {
		const struct srank *x = &s->ranks[i];
		struct ga_rank_row *w = &rk->rows[x->proc];

		w->devices = (uint32_t)x->u[0];
		w->busy_ns = x->u[1];
		w->compute_ns = x->u[2];
		w->comm_ns = x->u[3];
		w->exposed_ns = x->u[4];
		w->kernels = x->u[5];
		w->nccl_kernels = x->u[6];
		w->steps = x->nst;
		w->work = rk->nwork;
		for (j = 0; j < x->nst; j++) {
			rk->work[rk->nwork].label = A(am, m, s, x->st[j].label);
			rk->work[rk->nwork++].work_ns = x->st[j].work;
		}
	}
	return am->err ? -1 : ga_ranks_compare(rk, m);
}

/*
 * The NVTX range and mark tables and the linked range tree (model/ranges.h)
 * from the summary's; a name's CPU standard deviation is the model's
 * Welford sums replayed over its exact durations, or from the exact sums
 * of squares.  0, or -1 out of memory.
 */
static int nvtx_apply(const struct ga_sum *s, struct ga_analysis *an, struct amap *am)
{
	struct ga_ranges *rg = &an->rg;
	struct ga_model *m = &an->m;
	size_t i;

	rg->acts = s->rsc[0];
	rg->in_range = s->rsc[1];
	rg->no_range = s->rsc[2];
	rg->unattributed = s->rsc[3];
	rg->other_kernels = s->rsc[4];
	rg->other_skipped = s->rsc[5];
	rg->unterminated = s->rsc[6];
	if (ga_util_grow(&rg->keys, &rg->capkeys, s->nrkeys + 1, sizeof(*rg->keys)) ||
	    ga_util_grow(&rg->marks, &rg->capmarks, s->nmarks + 1, sizeof(*rg->marks)) ||
	    ga_util_grow(&rg->nodes, &rg->capnodes, s->nnodes + 1, sizeof(*rg->nodes)))
		return -1;
	for (i = 0; i < s->nrkeys; i++) {
		const struct srkey *x = &s->rkeys[i];
		struct ga_ranges_key *k = &rg->keys[rg->nkeys++];
		uint64_t med, sd;

		memset(k, 0, sizeof(*k));
		k->name = A(am, m, s, x->name);
		k->domain = A(am, m, s, x->domain);
		k->label = A(am, m, s, x->label);
		k->count = x->q.n;
		k->unterminated = x->u[0];
		k->cpu_total = x->q.sum;
		k->cpu_min = x->q.min;
		k->cpu_max = x->q.max;
		k->gpu_ns = x->u[1];
		k->acts = x->u[2];
		k->kernels = x->u[3];
		k->other_ns = x->u[4];
		k->other_kernels = x->u[5];
		if (!x->q.sketch) {
			uint64_t c = 0;

			for (size_t g = 0; g < x->q.nseg; g++)
				for (size_t j = 0; j < x->q.seg[g].n; j++)
					ga_welford_add(&k->cpu_var, ++c, x->q.seg[g].v[j]);
		} else {
			if (sq_finish(&x->q, NULL, 0, &med, &sd, NULL))
				return -1;
			k->cpu_var.m2 = (double)sd * (double)sd * (double)(k->count - 1);
		}
	}
	for (i = 0; i < s->nmarks; i++)
		rg->marks[rg->nmarks++] = (struct ga_ranges_mark){
			A(am, m, s, s->marks[i].name), A(am, m, s, s->marks[i].domain),
			A(am, m, s, s->marks[i].label), s->marks[i].count };
	for (i = 0; i < s->nnodes; i++) {
		const struct snode *x = &s->nodes[i];
		struct ga_ranges_node *n = &rg->nodes[rg->nnodes++];

		memset(n, 0, sizeof(*n));
		n->parent = x->parent == UINT32_MAX ? GA_RANGES_NONE : x->parent;
		n->kind = x->kind;
		n->id = x->kind == GA_RANGES_N_KERNEL ? A(am, m, s, (uint32_t)x->id) : (uint32_t)x->id;
		n->instances = x->u[0];
		n->gpu_ns = x->u[1];
		n->acts = x->u[2];
		n->kernels = x->u[3];
		n->other_ns = x->u[4];
		n->other_kernels = x->u[5];
	}
	return am->err ? -1 : ga_ranges_link(rg, m, 0);
}

/*
 * Launch latency per kernel and launch configurations (model/latency.h,
 * launchcfg.h) from the summary's, finished as the analysis leaves them.
 * 0, or -1 out of memory.
 */
static int launches_apply(const struct ga_sum *s, struct ga_analysis *an, struct amap *am)
{
	struct ga_latency *l = &an->lat;
	struct ga_launchcfg *lc = &an->lc;
	struct ga_model *m = &an->m;
	struct sqjob *jobs;
	size_t i;
	int rc;

	l->unmatched = s->lsc[0];
	l->replayed = s->lsc[1];
	l->early = s->lsc[2];
	if (ga_util_grow(&l->k, &l->capk, s->nlat + 1, sizeof(*l->k)) ||
	    ga_util_grow(&lc->c, &lc->capc, s->nlcfg + 1, sizeof(*lc->c)))
		return -1;
	if (!(jobs = malloc((s->nlat ? s->nlat : 1) * sizeof(*jobs))))
		return -1;
	for (i = 0; i < s->nlat; i++) {
		const struct slat *x = &s->lat[i];
		struct ga_latency_k *k = &l->k[l->nk++];

		memset(k, 0, sizeof(*k));
		k->name = A(am, m, s, x->name);
		k->count = x->q.n;
		k->total = x->q.sum;
		k->min = x->q.min;
		k->max = x->q.max;
		k->med_est = x->q.sketch;
		jobs[i] = (struct sqjob){ &x->q, &k->med, &k->stddev, &k->p90, &k->p99 };
	}
	rc = sq_finish_rows(jobs, s->nlat);
	free(jobs);
	if (rc)
		return -1;
	for (i = 0; i < s->nlcfg; i++) {
		const struct slcfg *x = &s->lcfg[i];
		struct ga_lcfg *c = &lc->c[lc->nc++];

		memset(c, 0, sizeof(*c));
		c->name = A(am, m, s, x->name);
		for (int j = 0; j < 3; j++) {
			c->grid[j] = (uint32_t)x->u[j];
			c->block[j] = (uint32_t)x->u[3 + j];
		}
		c->regs = (uint32_t)x->u[6];
		c->static_smem = (uint32_t)x->u[7];
		c->dynamic_smem = (uint32_t)x->u[8];
		c->count = x->u[9];
		c->total = x->u[10];
		c->occupancy = -1;
		if (x->u[11] != UINT64_MAX)
			memcpy(&c->occupancy, &x->u[11], sizeof(c->occupancy));
		c->active_blocks = (uint32_t)x->u[12];
		c->limit = (uint32_t)x->u[13];
	}
	return am->err ? -1 : 0;
}

/* The GPU over time into an->gs as ga_gs_finish() leaves it (section 21). */
static int gs_apply(const struct ga_sum *s, struct ga_analysis *an, struct amap *am, int move)
{
	struct ga_gpusamples *g = &an->gs;
	struct ga_model *m = &an->m;
	size_t i, j, nk = 0, nr = 0;

	g->kernels_unkept = s->gssc[0];
	g->kernels_unsampled = s->gssc[1];
	g->series_unasked = s->gssc[2];
	g->malformed = s->gssc[3];
	if (!s->ngss)
		return 0;
	if (!(g->series = calloc(s->ngss + 1, sizeof(*g->series))) ||
	    !(g->kern = calloc(s->ngsa + 1, sizeof(*g->kern))) ||
	    !(g->ranges = calloc(s->ngsa + 1, sizeof(*g->ranges))))
		return -1;
	g->capseries = s->ngss + 1;
	for (i = 0; i < s->ngss; i++) {
		const struct sgss *x = &s->gss[i];
		struct ga_gs_series *y = &g->series[g->nseries++];
		uint64_t dt = delta_of(s, move, x->proc);

		y->proc = x->proc;
		y->id = (uint32_t)x->u[0];
		y->device = (uint32_t)x->u[1];
		y->source = (uint32_t)x->u[2];
		y->status = (uint32_t)x->u[3];
		y->interval_ns = x->u[4];
		y->ns = (size_t)x->u[5]; /* a count only: the samples stay in the traces */
		y->first = x->u[6] + dt;
		y->last = x->u[7] + dt;
		y->reasons_at = (int)x->u[8] - 1;
		y->sampled_ns = x->u[9];
		y->throttled_ns = x->u[10];
		for (j = 0; j < GA_GS_REASONS; j++)
			y->reason_ns[j] = x->u[11 + j];
		y->n = x->nm;
		if (!(y->m = calloc(x->nm + 1, sizeof(*y->m))))
			return -1;
		for (j = 0; j < x->nm; j++) {
			const struct sgsm *mt = &s->gsm[x->mlo + j];

			y->m[j] = (struct ga_gs_metric){ A(am, m, s, mt->name), mt->samples,
							 mt->last_end ? mt->last_end + dt : 0,
							 bits_f64(mt->avg), bits_f64(mt->min),
							 bits_f64(mt->max), 0, 0 };
		}
		/* The device summary's name of it, as ga_gs_finish() takes it. */
		if ((y->label = ga_model_device_label(m, y->proc, y->device)) == GA_STR_NOMEM)
			return -1;
	}
	for (i = 0; i < s->ngsa; i++) {
		const struct sgsa *x = &s->gsa[i];
		struct ga_gs_attr *y = x->kind ? &g->ranges[nr++] : &g->kern[nk++];
		uint32_t n = g->series[x->series].n;

		y->key = A(am, m, s, x->key);
		y->series = x->series;
		y->count = x->count;
		y->samples = x->samples;
		y->time_ns = x->time_ns;
		if (!(y->wsum = calloc(2 * (size_t)(n ? n : 1), sizeof(double))))
			return -1;
		y->w = y->wsum + n;
		for (j = 0; j < 2 * (size_t)n; j++)
			y->wsum[j] = bits_f64(s->gsv[x->vlo + j]);
	}
	g->nkern = nk;
	g->nranges = nr;
	if (nk > 1)
		qsort_r(g->kern, nk, sizeof(*g->kern), ga_gs_cmp_attr, m);
	if (nr > 1)
		qsort_r(g->ranges, nr, sizeof(*g->ranges), ga_gs_cmp_attr, m);
	return am->err ? -1 : 0;
}

/* Memory in use into an->mu as ga_memuse_finish() leaves it (section 20). */
static int mu_apply(const struct ga_sum *s, struct ga_analysis *an, int move)
{
	struct ga_memuse *mu = &an->mu;
	struct ga_model *m = &an->m;
	size_t i, j;

	if (!s->mu_records)
		return 0;
	mu->records = s->mu_records;
	mu->host_records = s->mu_host;
	if (ga_util_grow(&mu->devs, &mu->capdevs, s->nmud + 1, sizeof(*mu->devs)))
		return -1;
	for (i = 0; i < s->nmud; i++) {
		const struct smud *x = &s->mud[i];
		struct ga_memuse_dev *d = &mu->devs[mu->ndevs];
		uint64_t dt = delta_of(s, move, x->proc);

		memset(d, 0, sizeof(*d));
		d->proc = x->proc;
		d->device = (uint32_t)x->u[0];
		d->allocs = x->u[1];
		d->frees = x->u[2];
		d->alloc_bytes = x->u[3];
		d->unmatched_frees = x->u[4];
		d->peak = x->u[5];
		d->peak_ns = x->u[6] ? x->u[6] + dt : 0;
		d->final = x->u[7];
		d->live = x->u[8];
		d->events = x->u[9];
		d->first = (uint32_t)mu->ndevs;
		d->ntop = x->na;
		for (j = 0; j < x->na; j++) {
			const uint64_t *u = s->mua[x->alo + j].u;

			d->top[j] = (struct ga_memuse_alloc){ u[0], u[1], u[2] + dt,
							      u[7] ? u[3] + dt : u[3], (uint32_t)u[4],
							      (uint8_t)u[5], (uint8_t)u[6], (uint8_t)u[7] };
		}
		/* The device summary's name of it, as ga_memuse_finish() takes it. */
		if ((d->label = ga_model_device_label(m, d->proc, d->device)) == GA_STR_NOMEM)
			return -1;
		mu->ndevs++;
	}
	return 0;
}

/* Hardware metrics into an->mx as the model leaves them (section 19), recorded ceilings. */
static int mx_apply(const struct ga_sum *s, struct ga_analysis *an, struct amap *am)
{
	struct ga_mx *mx = &an->mx;
	struct ga_model *m = &an->m;
	struct ga_map nm = { 0 };
	size_t i, j;
	int rc = -1;

	if (!s->mxs[0] && !s->mxs[10] && !s->nmxk && !s->nmxp)
		return 0;
	mx->has_info = s->mxs[0] != 0;
	mx->passes = (uint32_t)s->mxs[1];
	mx->status = (uint32_t)s->mxs[2];
	mx->launches = (uint32_t)s->mxs[3];
	mx->profiled = s->mxs[4];
	mx->skipped_capture = s->mxs[5];
	mx->skipped_graph = s->mxs[6];
	mx->failed = s->mxs[7];
	mx->skipped_other = s->mxs[8];
	mx->cost_ns = s->mxs[9];
	mx->records = s->mxs[10];
	mx->cached = s->mxs[11];
	mx->spread = s->mxs[12];
	mx->bad = s->mxs[13];
	mx->set = A(am, m, s, s->mx_set);
	if (ga_util_grow(&mx->names, &mx->capnames, s->nmxn + 1, sizeof(*mx->names)) ||
	    ga_util_grow(&mx->k, &mx->capk, s->nmxk + 1, sizeof(*mx->k)) ||
	    ga_util_grow(&mx->peaks, &mx->cappeaks, s->nmxp + 1, sizeof(*mx->peaks)))
		goto out;
	for (i = 0; i < s->nmxn; i++) {
		uint32_t *slot;

		if (ga_map_insert(&nm, s->mxn[i].name, 0, &slot) < 0)
			goto out;
		*slot = (uint32_t)i;
		mx->names[mx->nnames++] = A(am, m, s, s->mxn[i].name);
	}
	for (i = 0; i < s->nmxp; i++) {
		const struct smxp *x = &s->mxp[i];
		struct ga_mx_peaks *p = &mx->peaks[mx->npeaks++];
		struct gp_rec_device_peaks *r = &p->spec;

		memset(p, 0, sizeof(*p));
		p->proc = x->proc;
		p->device = (uint32_t)x->u[0];
		p->chip = A(am, m, s, x->chip);
		r->h.type = GP_REC_DEVICE_PEAKS;
		r->h.size = sizeof(*r);
		r->device = (uint32_t)x->u[0];
		r->cc_major = (uint32_t)x->u[1];
		r->cc_minor = (uint32_t)x->u[2];
		r->sm_count = (uint32_t)x->u[3];
		r->sm_clock_khz = (uint32_t)x->u[4];
		r->mem_clock_khz = (uint32_t)x->u[5];
		r->bus_width = (uint32_t)x->u[6];
		for (j = 0; j < GP_PEAK_COUNT; j++)
			r->flops[j] = bits_f64(x->f[j]);
		r->dram_bw = bits_f64(x->f[GP_PEAK_COUNT]);
		p->p = *r;
	}
	for (i = 0; i < s->nmxk; i++) {
		const struct smxk *x = &s->mxk[i];
		struct ga_mx_kernel *k = &mx->k[mx->nk];
		uint32_t *slot;

		memset(k, 0, sizeof(*k));
		k->name = A(am, m, s, x->name);
		k->proc = x->proc;
		k->device = (uint32_t)x->u[0];
		k->launches = x->u[1];
		k->cached = x->u[2];
		k->time_ns = x->u[3];
		k->cost_ns = x->u[4];
		k->passes = (uint32_t)x->u[5];
		k->spread = x->u[6];
		k->sm_hz_n = x->u[7];
		k->have = (unsigned)x->u[8];
		for (j = 0; j < GA_MX_PREC; j++)
			k->flops[j] = bits_f64(x->f[j]);
		k->dram_read = bits_f64(x->f[GA_MX_PREC]);
		k->dram_write = bits_f64(x->f[GA_MX_PREC + 1]);
		k->dram_total = bits_f64(x->f[GA_MX_PREC + 2]);
		k->l2 = bits_f64(x->f[GA_MX_PREC + 3]);
		k->l1 = bits_f64(x->f[GA_MX_PREC + 4]);
		k->sm_hz = bits_f64(x->f[GA_MX_PREC + 5]);
		mx->nk++;
		if (mx->nnames) {
			if (!(k->vals = malloc(mx->nnames * sizeof(double))))
				goto out;
			for (j = 0; j < mx->nnames; j++)
				k->vals[j] = NAN;
		}
		for (j = 0; j < x->nv; j++) {
			const struct smxv *v = &s->mxv[x->vlo + j];
			const uint32_t *at = ga_map_find(&nm, v->name, 0);

			if (at)
				k->vals[*at] = bits_f64(v->bits);
		}
		if (ga_map_insert(&mx->kmap, (uint64_t)k->proc << 32 | k->device, k->name, &slot) < 0)
			goto out;
		*slot = (uint32_t)mx->nk;
	}
	rc = am->err ? -1 : 0;
out:
	ga_map_free(&nm);
	return rc;
}

/* Launch sites into an->st as ga_sites_finish() leaves them (section 18). */
static int sites_apply(const struct ga_sum *s, struct ga_analysis *an, struct amap *am)
{
	struct ga_sites *st = &an->st;
	struct ga_model *m = &an->m;
	size_t i;

	m->sum_no_sites = s->no_sites;
	st->kernels = s->ssc[1];
	if (!s->ssc[0])
		return 0;
	st->depth = (unsigned)s->ssc[0];
	st->with_stack = s->ssc[2];
	st->backward = s->ssc[3];
	st->stack_records = s->ssc[4];
	st->corr_records = s->ssc[5];
	st->kernels_unstacked = 0;
	st->finished = 1;
	if (ga_util_grow(&st->sites, &st->capsites, s->nsites + 1, sizeof(*st->sites)) ||
	    ga_util_grow(&st->skern, &st->capskern, s->nskern + 1, sizeof(*st->skern)) ||
	    ga_util_grow(&st->ftext, &st->capftext, s->nsframes + 1, sizeof(*st->ftext)) ||
	    ga_util_grow(&st->mods, &st->capmods, s->nsmods + 1, sizeof(*st->mods)))
		return -1;
	for (i = 0; i < s->nsframes; i++)
		st->ftext[st->nftext++] = A(am, m, s, s->sframes[i]);
	for (i = 0; i < s->nsites; i++) {
		const struct ssite *x = &s->sites[i];
		struct ga_stack_site *y = &st->sites[st->nsites++];

		memset(y, 0, sizeof(*y));
		y->str = A(am, m, s, x->str);
		y->best = UINT32_MAX;
		y->gpu_ns = x->u[0];
		y->launches = x->u[1];
		y->foff = x->foff;
		y->nf = x->nf;
	}
	/* A site's distinct kernels: its rows. */
	for (i = 0; i < s->nskern; i++) {
		st->skern[st->nskern++] = (struct ga_stack_kernel){ s->skern[i].site,
								    A(am, m, s, s->skern[i].name),
								    s->skern[i].count, s->skern[i].ns };
		st->sites[s->skern[i].site].kernels++;
	}
	for (i = 0; i < s->nsmods; i++) {
		struct ga_sites_mod *y = &st->mods[st->nmods++];

		memset(y, 0, sizeof(*y));
		y->name = A(am, m, s, s->smods[i].name);
		y->why = A(am, m, s, s->smods[i].why);
		y->verdict = y->verdict_sites = (int)s->smods[i].verdict;
	}
	return am->err ? -1 : ga_sites_order(st, m);
}

/*
 * GPUs whose busy time a report of s gives as a lower bound: rows of
 * several parts (their busy time or span differ, or intervals beside) of
 * which one dropped its intervals (busy_apply()).  Their count, each
 * marked busy_bound in m's devices when m is given (s applied to it);
 * 1 when memory runs out (then said to be, and the traces read).
 */
static size_t busy_inexact(const struct ga_sum *s, struct ga_model *m)
{
	struct {
		const struct sdevrow *drop;
		int ivs, mixed;
	} *d = calloc(s->ndevs + 1, sizeof(*d));
	size_t i, n = 0;

	if (!d) {
		/* Every GPU with a row past the limit said a lower bound (true of all). */
		for (i = 0; m && i < s->ndevrows; i++)
			if (s->devrows[i].dropped && s->devrows[i].dev < m->ndevs)
				m->devs[s->devrows[i].dev].busy_bound = 1;
		return s->ndevs ? 1 : 0;
	}
	for (i = 0; i < s->ndevrows; i++) {
		const struct sdevrow *x = &s->devrows[i];

		if (!x->dropped) {
			d[x->dev].ivs |= x->niv != 0;
			continue;
		}
		if (!d[x->dev].drop)
			d[x->dev].drop = x;
		else if (d[x->dev].drop->busy != x->busy || d[x->dev].drop->first != x->first ||
			 d[x->dev].drop->last != x->last)
			d[x->dev].mixed = 1;
	}
	for (i = 0; i < s->ndevs; i++) {
		int b = d[i].drop && (d[i].ivs || d[i].mixed);

		n += (size_t)b;
		if (m && i < m->ndevs)
			m->devs[i].busy_bound = b;
	}
	free(d);
	return n;
}

/*
 * Busy time: the union of every process's intervals on the device; a row
 * whose intervals were dropped (more than GA_SUM_BUSY_KEEP) gives its busy
 * time and span, exact for a GPU of one part, else the longest part's
 * time, a lower bound (busy_inexact()).  0, or -1 out of memory.
 */
static int busy_apply(const struct ga_sum *s, struct ga_model *m, int move)
{
	struct sdrop {
		uint64_t busy, first, last, rows;
	} *dr = calloc(s->ndevs + 1, sizeof(*dr));
	size_t i;

	if (!dr)
		return -1;
	for (i = 0; i < s->ndevrows; i++) {
		const struct sdevrow *x = &s->devrows[i];
		uint64_t dt = delta_of(s, move, x->proc);
		struct sdrop *o = &dr[x->dev];

		if (x->dropped) {
			if (!o->rows || x->busy > o->busy)
				o->busy = x->busy;
			if (!o->rows || x->first + dt < o->first)
				o->first = x->first + dt;
			if (!o->rows || x->last + dt > o->last)
				o->last = x->last + dt;
			o->rows++;
			continue;
		}
		for (size_t j = 0; j < x->niv; j++)
			if (ga_busy_add(&m->devs[x->dev].busy, x->iv[j].start + dt, x->iv[j].end + dt))
				goto fail;
	}
	m->first_start = UINT64_MAX;
	m->last_end = 0;
	for (i = 0; i < m->ndevs; i++) {
		struct ga_device *d = &m->devs[i];
		uint64_t first, last;

		if (ga_busy_flush(&d->busy))
			goto fail;
		if (dr[i].rows) {
			/* One retired block of the union: its total and span. */
			uint64_t busy = ga_busy_total(&d->busy);

			if (ga_busy_span(&d->busy, &first, &last)) {
				if (dr[i].first < first)
					first = dr[i].first;
				if (dr[i].last > last)
					last = dr[i].last;
			} else {
				first = dr[i].first;
				last = dr[i].last;
			}
			if (dr[i].busy > busy)
				busy = dr[i].busy;
			ga_busy_free(&d->busy);
			d->busy.nretired = 1;
			d->busy.retired_ns = busy;
			d->busy.first = first;
			d->busy.frontier = last;
		}
		if (ga_model_busy_finish(m, (uint32_t)i))
			goto fail;
	}
	if (m->first_start == UINT64_MAX)
		m->first_start = m->last_end = 0;
	free(dr);
	busy_inexact(s, m);
	return 0;
fail:
	free(dr);
	return -1;
}

int ga_summary_apply(struct ga_sum *s, struct ga_analysis *an)
{
	struct ga_model *m = &an->m;
	struct amap am = { 0 };
	struct sqjob *jobs = NULL;
	size_t i, most;
	int move;

	if (canonical(s) || !(am.v = calloc(s->s.n + 1, sizeof(*am.v))) ||
	    !(am.lab = calloc(s->s.n + 1, sizeof(*am.lab)))) {
		free(am.v);
		return -1;
	}
	move = clocks_move(s);
	if (align_apply(s, an, move)) {
		free(am.v);
		free(am.lab);
		return -1;
	}
	m->counts[GA_ACT_KERNEL] = s->sc[SC_KERNEL];
	m->counts[GA_ACT_MEMCPY] = s->sc[SC_MEMCPY];
	m->counts[GA_ACT_MEMSET] = s->sc[SC_MEMSET];
	m->counts[GA_ACT_GRAPH] = s->sc[SC_GRAPH];
	m->api_count = s->sc[SC_API];
	m->records = s->sc[SC_RECORDS];
	m->unknown = s->sc[SC_UNKNOWN];
	m->malformed = s->sc[SC_MALFORMED];
	m->lost_records_total = s->sc[SC_LOST_TOTAL];
	m->lost_saturated = s->sc[SC_SATURATED] != 0;
	m->gaps = s->sc[SC_GAPS];
	m->gap_ns = s->sc[SC_GAP_NS];
	m->chunk_lost = s->sc[SC_CHUNK_LOST];
	m->kernel_total = s->sc[SC_KERNEL_TOTAL];
	m->api_total = s->sc[SC_API_TOTAL];
	m->overhead_ns = s->sc[SC_OVERHEAD_NS];
	m->overheads = s->sc[SC_OVERHEADS];
	m->streams = s->sc[SC_STREAMS];
	m->api_threads = s->sc[SC_API_THREADS];
	m->bad_refs = s->sc[SC_BAD_REFS];
	m->staged_pairs = s->sc[SC_STAGED];
	m->dropped = s->sc[SC_DROPPED];
	m->rows_seen = 0;          /* no activities to show one by one */
	for (i = 0; i < GP_LOST_CAUSE_COUNT; i++)
		m->lost[i] = s->sc[SC_LOST0 + i];
	m->sum_parts = s->sc[SC_PARTS];

	if (ga_util_grow(&m->files, &m->capfiles, s->nfiles + 1, sizeof(*m->files)))
		goto fail;
	for (i = 0; i < s->nfiles; i++) {
		const struct sfile *f = &s->files[i];
		struct ga_file *o = &m->files[m->nfiles];

		memset(o, 0, sizeof(*o));
		if (!(o->path = strdup(ga_strtab_get(&s->s, f->path))))
			goto fail;
		m->nfiles++;
		snprintf(o->info.reason, sizeof(o->info.reason), "%s", ga_strtab_get(&s->s, f->reason));
		o->info.damaged = (int)f->damaged;
		o->info.finished = (int)f->finished;
		o->info.bytes_unread = f->bytes_unread;
		o->info.file_size = f->file_size;
		o->info.chunks = (uint32_t)f->chunks;
		o->info.last_flag = (uint32_t)f->last_flag;
		o->info.records = f->records;
		o->info.unknown = f->unknown;
		o->info.malformed = f->malformed;
		o->info.chunk_lost = f->chunk_lost;
		o->info.stop_offset = f->stop_offset;
		o->proc = UINT32_MAX;
	}
	if (ga_util_grow(&m->procs, &m->capprocs, s->nprocs + 1, sizeof(*m->procs)))
		goto fail;
	for (i = 0; i < s->nprocs; i++) {
		const struct sproc *x = &s->procs[i];
		struct ga_proc *p = &m->procs[m->nprocs++];
		const uint64_t *u = x->u;

		memset(p, 0, sizeof(*p));
		p->file = x->file;
		if (m->files[x->file].proc == UINT32_MAX)
			m->files[x->file].proc = (uint32_t)i;
		p->host = A(&am, m, s, x->host);
		p->exe = A(&am, m, s, x->exe);
		p->cmdline = A(&am, m, s, x->cmdline);
		p->pid = (uint32_t)u[0];
		p->ppid = (uint32_t)u[1];
		p->rank = (uint32_t)u[2];
		p->cupti_version = (uint32_t)u[3];
		p->cuda_driver = (uint32_t)u[4];
		p->clock_id = (uint32_t)u[5];
		p->start_ns = u[6] ? u[6] + delta_of(s, move, i) : 0;
		p->end_ns = u[7] ? u[7] + delta_of(s, move, i) : 0;
		p->end_records = u[8];
		p->end_lost = u[9];
		p->lost_sum = u[10];
		p->chunk_lost = u[11];
		p->has_process = (int)u[12];
		p->finished = (int)u[13];
		p->has_config = (int)u[14];
		p->config.trace = (uint32_t)u[15];
		p->config.graph_mode = (uint32_t)u[16];
		p->config.backtrace = (uint32_t)u[17];
		p->config.flush_ms = (uint32_t)u[18];
		p->clock_syncs = u[19];
		p->activities = u[20];
		p->api_calls = u[21];
		p->nwindows = (size_t)u[22];
		p->gaps = u[23];
		p->gap_ns = u[24];
		p->has_flight = (int)u[25];
		p->flight.dump = (uint32_t)u[26];
		p->flight.trigger = (uint32_t)u[27];
		p->flight.detail = (uint32_t)u[28];
		p->flight.start = u[29] + (u[25] ? delta_of(s, move, i) : 0);
		p->flight.end = u[30] + (u[25] ? delta_of(s, move, i) : 0);
		p->flight.size = u[31];
		p->flight.dropped_records = u[32];
		p->flight.dropped_chunks = (uint32_t)u[33];
		p->flight.dropped_bytes = u[34];
	}
	for (i = 0; i < s->nfiles; i++)
		if (m->files[i].proc == UINT32_MAX)
			m->files[i].proc = 0;
	if (ranks_apply(s, an, &am))
		goto fail;
	if (ga_util_grow(&m->windows, &m->capwindows, s->nwins + 1, sizeof(*m->windows)))
		goto fail;
	for (i = 0; i < s->nwins; i++) {
		struct ga_window *w = &m->windows[m->nwindows++];

		w->proc = s->wins[i].proc;
		w->start = s->wins[i].start + delta_of(s, move, s->wins[i].proc);
		w->end = s->wins[i].end + delta_of(s, move, s->wins[i].proc);
		w->kind = (uint32_t)s->wins[i].kind;
		w->name = A(&am, m, s, s->wins[i].name);
	}
	if (ga_util_grow(&m->devs, &m->capdevs, s->ndevs + 1, sizeof(*m->devs)))
		goto fail;
	for (i = 0; i < s->ndevs; i++) {
		const struct sdev *x = &s->devs[i];
		struct ga_device *d = &m->devs[m->ndevs++];
		const uint64_t *u = x->u;

		memset(d, 0, sizeof(*d));
		d->proc = x->proc;
		d->host = A(&am, m, s, x->host);
		d->name = A(&am, m, s, x->name);
		memcpy(d->uuid, x->uuid, 16);
		d->id = (uint32_t)u[0];
		d->described = (int)u[1];
		d->cc_major = (uint32_t)u[2];
		d->cc_minor = (uint32_t)u[3];
		d->sm_count = (uint32_t)u[4];
		d->core_clock_khz = (uint32_t)u[5];
		d->l2_size = (uint32_t)u[6];
		d->flags = (uint32_t)u[7];
		d->global_mem = u[8];
		d->mem_bandwidth = u[9];
		d->max_warps_per_sm = (uint32_t)u[10];
		d->max_blocks_per_sm = (uint32_t)u[11];
		d->max_smem_per_sm = (uint32_t)u[12];
		d->max_regs_per_sm = (uint32_t)u[13];
		d->count = u[15];
		d->total = u[16];
	}
	if (busy_apply(s, m, move))
		goto fail;
	if (ga_util_grow(&m->devrows, &m->capdevrows, s->ndevrows + 1, sizeof(*m->devrows)))
		goto fail;
	for (i = 0; i < s->ndevrows; i++) {
		const struct sdevrow *x = &s->devrows[i];
		struct ga_devrow *r = &m->devrows[m->ndevrows++];
		char buf[256], who[192];

		r->proc = x->proc;
		r->dev = x->dev;
		r->id = (uint32_t)x->id;
		r->count = x->count;
		r->total = x->total;
		if (s->nprocs > 1)
			snprintf(buf, sizeof(buf), "cuda:%u [%s]", r->id,
				 ga_ranks_proc_name(m, r->proc, who, sizeof(who)));
		else
			snprintf(buf, sizeof(buf), "cuda:%u", r->id);
		r->label = ga_strtab_intern(&m->strs, buf, strlen(buf));
		if (r->label == GA_STR_NOMEM)
			goto fail;
	}
	for (i = 0; i < s->nlabels; i++) {
		uint32_t l = label_of(&am, m, s, s->labels[i].str);

		if (!l)
			goto fail;
		m->labels[l - 1].count = s->labels[i].count;
		m->labels[l - 1].total = s->labels[i].total;
	}
	if (ga_util_grow(&m->kstats, &m->capkstats, s->nks + 1, sizeof(*m->kstats)))
		goto fail;
	/* One job a row, for the kernels', the memory operations' and the API calls' tables. */
	most = s->nks > s->nmo ? s->nks : s->nmo;
	if (!(jobs = malloc(((most > s->nas ? most : s->nas) + 1) * sizeof(*jobs))))
		goto fail;
	for (i = 0; i < s->nks; i++) {
		const struct skstat *x = &s->ks[i];
		struct ga_kstat *k = &m->kstats[m->nkstats++];

		memset(k, 0, sizeof(*k));
		k->name = A(&am, m, s, x->name);
		k->label = label_of(&am, m, s, x->label) - 1;
		k->count = x->q.n;
		k->total = x->q.sum;
		k->min = x->q.min;
		k->max = x->q.max;
		k->in_graph = x->in_graph;
		k->med_est = x->q.sketch;
		jobs[i] = (struct sqjob){ &x->q, &k->med, &k->stddev, &k->p90, &k->p99 };
	}
	if (sq_finish_rows(jobs, s->nks))
		goto fail;
	if (ga_util_grow(&m->memops, &m->capmemops, s->nmo + 1, sizeof(*m->memops)))
		goto fail;
	for (i = 0; i < s->nmo; i++) {
		const struct smemop *x = &s->mo[i];
		struct ga_memop *o = &m->memops[m->nmemops++];

		memset(o, 0, sizeof(*o));
		o->kind = (uint32_t)x->kind;
		o->src = (uint32_t)x->src;
		o->dst = (uint32_t)x->dst;
		o->count = x->q.n;
		o->bytes = x->bytes;
		o->total = x->q.sum;
		o->min = x->q.min;
		o->max = x->q.max;
		o->med_est = x->q.sketch;
		jobs[i] = (struct sqjob){ &x->q, &o->med, &o->stddev, NULL, NULL };
	}
	if (sq_finish_rows(jobs, s->nmo))
		goto fail;
	for (i = 0; i < GA_COPY_KIND_MAX; i++)
		ms_apply(&am, m, s, &m->copy[i], &s->copy[i]);
	ms_apply(&am, m, s, &m->memset_st, &s->memset_st);
	for (i = 0; i < 2; i++) {
		ms_apply(&am, m, s, &m->leg_st[i], &s->leg[i]);
		m->leg_label[i] = m->leg_st[i].label;
	}
	if (ga_util_grow(&m->graphs, &m->capgraphs, s->ngraphs + 1, sizeof(*m->graphs)))
		goto fail;
	for (i = 0; i < s->ngraphs; i++) {
		const struct sgraph *x = &s->graphs[i];

		m->graphs[m->ngraphs++] = (struct ga_gstat){
			.proc = x->proc, .graph_id = (uint32_t)x->graph_id,
			.label = label_of(&am, m, s, x->label), .launches = x->launches,
			.total = x->total, .kernels = x->kernels, .nodes = x->nodes,
		};
	}
	if (ga_util_grow(&m->astats, &m->capastats, s->nas + 1, sizeof(*m->astats)))
		goto fail;
	for (i = 0; i < s->nas; i++) {
		const struct sastat *x = &s->as[i];
		struct ga_astat *a = &m->astats[m->nastats++];

		memset(a, 0, sizeof(*a));
		a->name = A(&am, m, s, x->name);
		a->count = x->q.n;
		a->total = x->q.sum;
		a->min = x->q.min;
		a->max = x->q.max;
		a->errors = x->errors;
		a->threads = x->threads;
		a->med_est = x->q.sketch;
		jobs[i] = (struct sqjob){ &x->q, &a->med, &a->stddev, &a->p90, &a->p99 };
	}
	if (sq_finish_rows(jobs, s->nas))
		goto fail;
	if (am.err || nvtx_apply(s, an, &am) || launches_apply(s, an, &am) ||
	    fstate_apply(s, an, &am) || sites_apply(s, an, &am) || mx_apply(s, an, &am) ||
	    mu_apply(s, an, move) || gs_apply(s, an, &am, move))
		goto fail;
	for (i = 0; i < m->nprocs; i++)
		if (m->procs[i].rank != GA_NO_RANK)
			an->rk.any_rank = 1; /* how the report names a GPU's users */
	m->finished = 1;
	free(jobs);
	free(am.v);
	free(am.lab);
	return 0;
fail:
	free(jobs);
	free(am.v);
	free(am.lab);
	return -1;
}

/* ---- building from the command line's inputs ---- */

/*
 * The summary of one trace read alone.  NULL after printing why; with
 * uncarried, NULL also when the trace holds what summaries do not carry
 * (*uncarried set, nothing printed).
 */
static struct ga_sum *summarize_one(const char *path, uint64_t exact_limit, int *uncarried)
{
	/* The model keeps as many durations exactly as the summary does. */
	/* Its NVTX pass in the model's read (decoded once), paced: model/ranges.h pace. */
	/* Launch sites as a report has them by default, each listing its frames (JSON). */
	struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH, .symbolize = 1, .observe_sites = 1, .list_frames = 1, .quant_limit = exact_limit ? exact_limit : GA_QUANT_NO_LIMIT, .pace = 1, .quiet = 1 };
	struct ga_findings_in fin;
	char *p = (char *)path;
	struct ga_filter flt;
	struct ga_analysis an;
	struct ga_sum *s;
	int rc;

	ga_filter_init(&flt);
	if (ga_analysis_init(&an, &ao, &flt)) {
		fputs("gpuprof: out of memory\n", stderr);
		ga_filter_free(&flt);
		return NULL;
	}
	for (;;) {
		/* Every process's per-rank figures, as traces read together have them. */
		an.rk.collect = 1;
		/* Each kernel's launch latencies, for the summary's durations. */
		an.lat.keep_values = 1;
		/* The report's pool prints the merged summary's warnings, in file order. */
		an.m.warnings_later = uncarried != NULL;
		/*
		 * Busy time retires as in a report (analysis.c), the findings
		 * scanning its gaps as they go; each device keeps up to
		 * GA_SUM_BUSY_KEEP intervals for the summary.
		 */
		an.m.busy_keep = GA_SUM_BUSY_KEEP;
		/* The rows' medians and percentiles: the merged summary's (summary.c sq_finish()). */
		an.m.no_row_stats = 1;
		rc = ga_analysis_build(&an, &p, 1);
		if (rc != GA_ANALYSIS_AGAIN)
			break;
		/* The paced read stopped: read it twice (model/analysis.h). */
		if (ga_analysis_again(&an, &ao, &flt)) {
			fputs("gpuprof: out of memory\n", stderr);
			ga_filter_free(&flt);
			return NULL;
		}
	}
	if (rc) {
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		return NULL;
	}
	/* The findings' gaps scanned, their places' texts made: what merges is left. */
	fin = (struct ga_findings_in){ .m = &an.m, .st = &an.st, .observe_sites = 1,
				       .mx = &an.mx, .lc = &an.lc, .rk = &an.rk };
	s = ga_findings_settle(&an.fd, &fin) ? NULL :
	    ga_summary_from_analysis(&an, exact_limit, path);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	if (!s)
		fprintf(stderr, "gpuprof: %s: out of memory summarizing it\n", path);
	return s;
}

/* A trace's size and index: the pool's order. */
struct by_size {
	uint64_t size;
	int i;
};

static int cmp_by_size(const void *pa, const void *pb)
{
	const struct by_size *a = pa, *b = pb;

	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* malloc's top pad while the pool runs, and glibc's default (mallopt(3)). */
#define POOL_TOP_PAD (64 << 20)
#define GLIBC_TOP_PAD (128 << 10)

/*
 * Traces summarized on a pool of threads, each worker merging what it made;
 * a worker out of traces merges its summary with one parked by another
 * that finished before it, or parks its own (park()).
 */
struct pool {
	char **traces;
	/* The traces by size, largest first (NULL: as named). */
	const struct by_size *order;
	int nt;
	uint64_t limit;
	int next;                  /* the next trace to take (atomic) */
	int failed;                /* a worker failed: the others stop (atomic) */
	int *uncarried;            /* NULL, or stop at a trace summaries do not carry */
	/*
	 * Stop, *uncarried set, once a GPU is in two traces (FS_SHARED): the
	 * findings then read the traces together, and the rest of the pool's
	 * work would be thrown away.
	 */
	int stop_shared;
	pthread_mutex_t lock;      /* over parked */
	struct ga_sum *parked;     /* the merge of the workers done so far */
};

struct worker {
	struct pool *p;
	pthread_t th;
};

/*
 * s merged into acc (s freed in any case).  0, or -1 with acc freed: out
 * of memory (said once), or acc now shares a GPU with what merged into it
 * where that stops the pool (stop_shared).
 */
static int absorb(struct pool *p, struct ga_sum *acc, struct ga_sum *s)
{
	if (ga_summary_merge(acc, s)) {
		if (!__atomic_exchange_n(&p->failed, 1, __ATOMIC_RELAXED))
			fputs("gpuprof: out of memory merging summaries\n", stderr);
		ga_summary_free(acc);
		return -1;
	}
	if (p->stop_shared && acc->fs[FS_SHARED]) {
		__atomic_store_n(p->uncarried, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
		ga_summary_free(acc);
		return -1;
	}
	return 0;
}

/*
 * A worker's summary merged with those of the workers that finished before
 * it, on its own thread while the others still read: merged one after
 * another on one thread once all had joined, they took a tenth of a
 * second of 256 rank traces' 0.4 s on 16 cores (as a tree after the join,
 * 0.04).  The last worker parks the merge of all.
 */
static void park(struct pool *p, struct ga_sum *acc)
{
	while (acc) {
		struct ga_sum *other;

		pthread_mutex_lock(&p->lock);
		other = p->parked;
		p->parked = other ? NULL : acc;
		pthread_mutex_unlock(&p->lock);
		if (!other)
			return;
		if (__atomic_load_n(&p->failed, __ATOMIC_RELAXED)) {
			ga_summary_free(other);
			ga_summary_free(acc);
			return;
		}
		if (absorb(p, acc, other))
			return;
	}
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	struct ga_sum *acc = NULL;

	while (!__atomic_load_n(&p->failed, __ATOMIC_RELAXED)) {
		int i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		struct ga_sum *s;

		if (i >= p->nt)
			break;
		if (!(s = summarize_one(p->traces[p->order ? p->order[i].i : i], p->limit,
					p->uncarried))) {
			__atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
			break;
		}
		if (!acc)
			acc = s;
		else if (absorb(p, acc, s))
			return NULL;
	}
	park(p, acc);
	return NULL;
}

/*
 * The summaries of traces[0..nt) merged: with -j above 1 (ga_reader_jobs,
 * 0: the CPUs) and several traces, one trace a task on that many threads,
 * each trace's chunks then decoded on its task's thread alone; the merge's
 * result is the same in any order.  The progress line is not shown from
 * the threads.  NULL after printing why.
 */
static struct ga_sum *summarize_traces(char **traces, int nt, uint64_t limit, int *uncarried,
				       int stop_shared)
{
	unsigned jobs = ga_reader_threads(), saved = ga_reader_jobs;
	struct pool p = { .traces = traces, .nt = nt, .limit = limit, .uncarried = uncarried, .stop_shared = stop_shared && uncarried, .lock = PTHREAD_MUTEX_INITIALIZER };
	struct worker *w;
	struct ga_sum *acc = NULL;
	int nw = (int)(jobs < (unsigned)nt ? jobs : (unsigned)nt), started = 0, i;
	struct by_size *bs = nw > 1 ? malloc((size_t)nt * sizeof(*bs)) : NULL;

	/* Pipes are read one at a time (the reader drains them into one buffer). */
	for (i = 0; i < nt && nw > 1; i++) {
		struct stat st;

		if (!strcmp(traces[i], "-") || stat(traces[i], &st) || !S_ISREG(st.st_mode))
			nw = 1;
		else if (bs)
			bs[i] = (struct by_size){ (uint64_t)st.st_size, i };
	}
	/*
	 * The largest first, so that no large trace starts last while the other
	 * threads are idle; the merge is the same in any order.
	 */
	if (nw > 1 && bs) {
		qsort(bs, (size_t)nt, sizeof(*bs), cmp_by_size);
		p.order = bs;
	}
	/* One thread: the caller's, in the order named (the progress line shown). */
	if (nw <= 1 || !(w = calloc((size_t)nw, sizeof(*w)))) {
		struct worker self = { .p = &p };

		free(bs);
		p.order = NULL;
		worker_run(&self);
		if (!p.failed)
			return p.parked;
		ga_summary_free(p.parked);
		return NULL;
	}
	ga_reader_jobs = 1;
	ga_progress_redirect(stderr, 0, NULL);
	/* Before the threads: where the helper's forked copy serves, not forked among them. */
	ga_demangle_prestart();
#ifdef M_TOP_PAD
	/*
	 * Each thread's arena keeps what a trace freed for the next, not
	 * handing it back to the kernel to fault it in again: on 16 cores those
	 * faults and trims were a second of system time in a 64-trace report.
	 */
	mallopt(M_TOP_PAD, POOL_TOP_PAD);
#endif
	for (i = 0; i < nw; i++) {
		w[i].p = &p;
		if (pthread_create(&w[i].th, NULL, worker_run, &w[i]))
			break;
		started++;
	}
	/* Threads that could not start: the caller's thread works too. */
	if (started < nw) {
		struct worker self = { .p = &p };

		worker_run(&self);
	}
	for (i = 0; i < started; i++)
		pthread_join(w[i].th, NULL);
#ifdef M_TOP_PAD
	mallopt(M_TOP_PAD, GLIBC_TOP_PAD);
#endif
	ga_reader_jobs = saved;
	ga_progress_redirect(NULL, 0, NULL);
	acc = p.parked;
	free(w);
	free(bs);
	if (!p.failed)
		return acc;
	ga_summary_free(acc);
	return NULL;
}

#define HEAD_MAX 64 /* strings and devices of a trace's head looked at */

/* The GPU of a trace's first activity, and its host (head_gpus_shared()). */
struct heads {
	struct ga_map used; /* (uuid ^ host's hash, uuid) -> the trace's index + 1 */
	uint32_t trace;
	int shared;
	/* The trace's head: its first strings (id, hash), devices (id, uuid), host's hash. */
	uint32_t sid[HEAD_MAX];
	uint64_t shash[HEAD_MAX];
	uint32_t nstr;
	uint32_t did[HEAD_MAX];
	uint8_t uuid[HEAD_MAX][16];
	uint32_t ndev;
	uint64_t host;
};

static int head_rec(void *ctx, const struct gp_rec *rec)
{
	struct heads *h = ctx;
	uint32_t dev;
	uint64_t a, b;
	uint32_t *v;
	int r;

	switch (rec->type) {
	case GP_REC_STRING: {
		const struct gp_rec_string *x = (const void *)rec;
		const unsigned char *p = (const unsigned char *)(x + 1);
		uint64_t f = 14695981039346656037ull;

		if (h->nstr < HEAD_MAX && x->len <= rec->size - sizeof(*x)) {
			for (uint32_t k = 0; k < x->len; k++)
				f = (f ^ p[k]) * 1099511628211ull;
			h->sid[h->nstr] = x->id;
			h->shash[h->nstr++] = f;
		}
		return 0;
	}
	case GP_REC_PROCESS:
		for (uint32_t k = 0; k < h->nstr; k++)
			if (h->sid[k] == ((const struct gp_rec_process *)(const void *)rec)->host)
				h->host = h->shash[k];
		return 0;
	case GP_REC_DEVICE:
		if (h->ndev < HEAD_MAX) {
			h->did[h->ndev] = ((const struct gp_rec_device *)(const void *)rec)->id;
			memcpy(h->uuid[h->ndev++], ((const struct gp_rec_device *)(const void *)rec)->uuid,
			       16);
		}
		return 0;
	case GP_REC_KERNEL:
		dev = ((const struct gp_rec_kernel *)(const void *)rec)->device;
		break;
	case GP_REC_MEMCPY:
		dev = ((const struct gp_rec_memcpy *)(const void *)rec)->device;
		break;
	case GP_REC_MEMSET:
		dev = ((const struct gp_rec_memset *)(const void *)rec)->device;
		break;
	default:
		return 0;
	}
	/* The first activity: its GPU, by UUID and host, as the model tells a GPU shared. */
	for (uint32_t k = 0; k < h->ndev; k++) {
		if (h->did[k] != dev)
			continue;
		memcpy(&a, h->uuid[k], 8);
		memcpy(&b, h->uuid[k] + 8, 8);
		if ((!a && !b) || !h->host || (r = ga_map_insert(&h->used, a ^ h->host, b, &v)) < 0)
			break;
		if (r)
			*v = h->trace + 1;
		else if (*v != h->trace + 1)
			h->shared = 1;
		break;
	}
	return 1;
}

/*
 * Whether the first activities of two of the traces ran on one GPU of one
 * host (the device's UUID and the host's name, as the model tells a GPU
 * shared): the report then reads the traces together (findings scan the
 * gaps of the GPU's union), and summarizing them first would be work thrown
 * away.  A GPU shared later in the traces is found where the summaries merge.
 */
static int head_gpus_shared(char *const *paths, int n)
{
	struct heads *h = calloc(1, sizeof(*h));
	struct ga_read_info info;
	char err[256];
	int shared;

	for (int i = 0; h && i < n && !h->shared; i++) {
		h->trace = (uint32_t)i;
		h->nstr = h->ndev = 0;
		h->host = 0;
		ga_reader_read_head(paths[i], NULL, 0, head_rec, h, &info, err, sizeof(err));
	}
	shared = h && h->shared;
	if (h)
		ga_map_free(&h->used);
	free(h);
	return shared;
}

/*
 * GPUPROF_VERBOSE=1: how the report read its n traces (why: why they were
 * read together by one model after all; NULL: summarized and merged).
 * Returns 1 (the caller reads them together).
 */
static int together_why(int n, const char *why)
{
	const char *v = getenv("GPUPROF_VERBOSE");

	if (v && !strcmp(v, "1")) {
		if (why)
			fprintf(stderr, "gpuprof: %d traces read together by one model: %s\n", n, why);
		else
			fprintf(stderr, "gpuprof: %d traces summarized one by one and merged\n", n);
	}
	return 1;
}

int ga_summary_build_parallel(struct ga_analysis *an, char *const *paths, int n,
			       uint64_t rows_max)
{
	const char *together = getenv("GPUPROF_READ_TOGETHER");
	struct ga_sum *s;
	int uncarried = 0;

	/* Launch sites as summaries carry them: the default depth, frames and names. */
	if (an->o.observe_sites && (an->st.depth != GA_SITES_DEPTH || !an->o.symbolize ||
				    an->o.symbol_path || an->st.fold))
		return 1;
	/*
	 * Also on one thread (-j 1): each trace's model is smaller, and with
	 * --align nccl each trace is read once, not twice.
	 * GPUPROF_READ_TOGETHER=1: the traces read by one model (the pool's
	 * reference in the tests).
	 */
	if (n < 2 || (together && !strcmp(together, "1")) || ga_analysis_filtered(an) ||
	    an->o.keep_rows > rows_max + 1 || an->o.launches || an->o.marks || an->o.sites_ahead ||
	    an->m.hooks.act || an->m.hooks.api)
		return 1;
	for (int i = 0; i < n; i++) {
		struct stat st;

		/*
		 * Files only: standard input and pipes are read the one way; in
		 * sorted order (as a shell's * gives them), the order merged
		 * summaries list files and processes in.
		 */
		if (!strcmp(paths[i], "-") || stat(paths[i], &st) || !S_ISREG(st.st_mode) ||
		    ga_summary_is(paths[i]) || (i && strcmp(paths[i - 1], paths[i]) >= 0))
			return 1;
	}
	if (!an->fd.off && head_gpus_shared(paths, n))
		return together_why(n, "a GPU of one host in the heads of two of them");
	/* As many durations a row exact as the model of the traces keeps. */
	s = summarize_traces((char **)paths, n,
			     an->o.quant_limit == GA_QUANT_NO_LIMIT ? 0 :
			     an->o.quant_limit                      ? an->o.quant_limit :
								      GA_QUANT_EXACT_DEFAULT,
			     &uncarried,
			     !an->fd.off);
	if (!s)
		return uncarried ? together_why(n, "one holds what summaries do not carry, or "
						   "shares a GPU") :
				   -1;
	/*
	 * A GPU in two traces (processes sharing it): the traces read together
	 * scan the gaps of its busy time's union, the parts each their own; and
	 * its union needs every part's intervals, which one may not carry.
	 */
	if ((!an->fd.off && s->fs[FS_SHARED]) || busy_inexact(s, NULL)) {
		ga_summary_free(s);
		return together_why(n, "a GPU in two of them");
	}
	/* An automatic timeline would show these rows: read them as before. */
	if (rows_max && s->sc[SC_ROWS_SEEN] && s->sc[SC_ROWS_SEEN] <= rows_max) {
		ga_summary_free(s);
		return together_why(n, "few enough activities for the automatic timeline");
	}
	if (ga_summary_apply(s, an)) {
		ga_summary_free(s);
		fputs("gpuprof: out of memory\n", stderr);
		return -1;
	}
	an->m.rows_seen = s->sc[SC_ROWS_SEEN];
	an->m.sum_parts = 0;       /* shown as traces: every table printed was carried */
	ga_summary_free(s);
	together_why(n, NULL);
	return ga_load_print_warnings(&an->m);
}

struct ga_sum *ga_summary_collect(char *const *paths, int n, uint64_t exact_limit)
{
	char **traces = calloc((size_t)n + 1, sizeof(*traces));
	struct ga_sum *acc = NULL;
	char err[640];
	int nt = 0, i;

	if (!traces) {
		fputs("gpuprof: out of memory\n", stderr);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!ga_summary_is(paths[i]))
			traces[nt++] = paths[i];
	/*
	 * Each trace is summarized alone and merged: summarizing traces
	 * together then gives what merging their summaries gives, byte for
	 * byte, so the traces may be summarized on several threads.
	 */
	if (nt && !(acc = summarize_traces(traces, nt, exact_limit, NULL, 0)))
		goto fail;
	for (i = 0; i < n; i++) {
		struct ga_sum *s;

		if (!ga_summary_is(paths[i]))
			continue;
		if (!(s = ga_summary_read(paths[i], err, sizeof(err)))) {
			fprintf(stderr, "gpuprof: %s\n", err);
			goto fail;
		}
		if (!acc) {
			acc = s;
			if (exact_limit && exact_limit < acc->limit)
				acc->limit = exact_limit;
			continue;
		}
		if (ga_summary_merge(acc, s)) {
			fputs("gpuprof: out of memory merging summaries\n", stderr);
			goto fail;
		}
	}
	free(traces);
	return acc;
fail:
	free(traces);
	ga_summary_free(acc);
	return NULL;
}

int ga_summary_build(struct ga_analysis *an, char *const *paths, int n)
{
	struct ga_sum *s;
	size_t inexact;

	if (!ga_summary_any(paths, n))
		return ga_analysis_build(an, paths, n);
	if (ga_analysis_filtered(an)) {
		fputs("gpuprof: filters do not apply to summaries (they hold no single "
		      "activities): filter when summarizing the traces instead\n", stderr);
		return -1;
	}
	for (int i = 0; an->o.align && i < n; i++) {
		uint32_t v = ga_summary_is(paths[i]) ? sum_version(paths[i]) : GA_SUM_VERSION;

		if (v < 8) {
			fprintf(stderr, "gpuprof: --align nccl: %s: summary version %u holds no NCCL "
					"collectives (version 8 on do): summarize its traces again with this "
					"gpuprof\n",
				paths[i], v);
			return -1;
		}
	}
	if (!(s = ga_summary_collect(paths, n,
				     an->o.quant_limit == GA_QUANT_NO_LIMIT ? 0 :
				     an->o.quant_limit ? an->o.quant_limit : GA_QUANT_EXACT_DEFAULT)))
		return -1;
	if (ga_summary_apply(s, an)) {
		ga_summary_free(s);
		fputs("gpuprof: out of memory\n", stderr);
		return -1;
	}
	if (!an->fd.off && s->fs[FS_PARTS] < s->sc[SC_PARTS])
		fprintf(stderr, "gpuprof: warning: findings of %" PRIu64 " of %" PRIu64 " parts are "
			"missing: their summaries hold no findings' state (an older gpuprof's); "
			"summarize their traces again\n", s->sc[SC_PARTS] - s->fs[FS_PARTS],
			s->sc[SC_PARTS]);
	if (!an->fd.off && s->fs[FS_SHARED] && s->fs[FS_PARTS])
		fprintf(stderr, "gpuprof: warning: a GPU is in several parts (processes sharing "
			"it): its idle gaps were scanned part by part, not in the union of their busy "
			"time; read the traces together for those findings exactly\n");
	if ((inexact = busy_inexact(s, NULL)))
		fprintf(stderr, "gpuprof: warning: %zu GPU%s in several parts, and a part had "
				"more than %u busy intervals on it (summaries carry their busy time past "
				"that): its busy time is the longest part's, a lower bound; read the traces "
				"together for it exactly\n",
			inexact, inexact == 1 ? " is" : "s are",
			GA_SUM_BUSY_KEEP);
	ga_summary_free(s);
	return ga_load_print_warnings(&an->m);
}
