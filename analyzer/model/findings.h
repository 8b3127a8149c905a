/*
 * Findings: what to fix, where, and what it would save.  Each rule reads
 * the finished analysis (the model's aggregates, busy intervals, launch
 * sites, launch configurations, ranks) and the few facts this file's
 * observer gathers in the aggregate pass, O(1) per record:
 *
 *  - per device, the activity that ended last so far ("hi"): an activity
 *    that starts after it begins a candidate idle gap, remembered (when
 *    at least GA_FIND_SITE_GAP_NS long) with the launch sites, labels,
 *    NVTX range and stream of the activities on both sides;
 *  - the host calls that can keep a device idle (synchronizations,
 *    synchronous and asynchronous copies and memsets, allocations and
 *    frees, module loading and context creation), as intervals
 *    (32 bytes each; launches are not kept), and the stacks of the copies
 *    and memsets that can block (their calls' own sites);
 *  - per kernel, the gaps before its short launches; per device, the host
 *    time of the launch calls of its short kernels (a launch call and its
 *    kernel meet by correlation id in two direct-mapped tables of
 *    GA_FIND_LCACHE entries, whichever comes first waiting); small copies,
 *    pageable memory in asynchronous copies;
 *  - per stream, its work and the stack of its first launch; per context,
 *    the id of its legacy default stream (context records).
 *
 * Every idle gap of every device (between the intervals of the exact
 * busy union of busy.h) is given one cause, in the same pass: the
 * intervals the union retires (busy.h's on_retire) wait until the host
 * calls that can explain their gaps have been read (the latest API
 * record of each of the device's processes GA_FIND_HOST_LAG_NS past the
 * gap, or GA_FIND_PEND_MAX intervals waiting), then their gaps are
 * scanned; host calls, gap candidates and copy stacks that no later gap
 * can use are dropped (see "Streaming" in findings.c), and what is left
 * is scanned at finish.  Memory then follows the records of the busy
 * union's lag (GA_BUSY_LAG) and GA_FIND_HOST_LAG_NS, not the trace's.  A gap's cause is the
 * host call it was in when the device ran dry and that returned before
 * it resumed (a synchronization, a synchronous copy or memset, an asynchronous copy that blocked, an
 * allocation or free), else the call that covers most of it (module
 * loading, context creation, allocation), else no CUDA call at all (host
 * code: Python, data loading, CPU work); gaps under GA_FIND_DRAIN_GAP_NS
 * have no cause.  Each cause feeds one rule, so the time at stake of two
 * findings never counts the same idle time twice, and an idle-time
 * finding is made only when its time at stake clears GA_FIND_MIN_STAKE_NS
 * and GA_FIND_EMIT_PCT of the device's span.  Rules, their thresholds and how each estimates
 * the time at stake are listed in ga_rules[] and in docs/USAGE.md
 * "Findings".  Runs offline only.
 */
#ifndef GA_MODEL_FINDINGS_H
#define GA_MODEL_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct ga_sites;
struct ga_mx;
struct ga_launchcfg;
struct ga_ranks;

/* Thresholds (docs/USAGE.md "Findings" names each one). */
#define GA_FIND_STARVE_GAP_NS 50000ull   /* an idle gap of host code counts from 50 µs */
#define GA_FIND_SITE_GAP_NS 10000ull     /* gaps whose sites are remembered */
#define GA_FIND_RESTART_NS 1000000ull    /* a record 1 ms before the latest: a new buffer */
#define GA_FIND_SHORT_KERNEL_NS 20000ull /* launch-bound: kernels up to 20 µs */
#define GA_FIND_LB_RUN 32u               /* launch-bound: at least 32 in a row */
#define GA_FIND_LB_RATIO 1.0             /* launch-bound: gaps as long as the kernels */
#define GA_FIND_GRAPH_GAP_NS 1000ull     /* what a CUDA graph leaves between nodes */
#define GA_FIND_LB_GAP_MAX_NS 1000000ull /* launch-bound: a run goes on over host gaps below 1 ms */
#define GA_FIND_LCACHE (1u << 18)        /* launch calls and kernels waiting for each other (4 MiB) */
#define GA_FIND_REPEAT 3u                /* rules of loops: at least 3 occurrences */
#define GA_FIND_TINY_COPY 65536ull       /* a tiny copy: below 64 KiB */
#define GA_FIND_TINY_COUNT 100u          /* tiny copies: at least 100 of one kind */
#define GA_FIND_BATCH_BYTES (1ull << 20) /* tiny copies batched into 1 MiB copies */
#define GA_FIND_TINY_RUN_NS 50000ull     /* tiny copies: a gap below 50 µs to the last one is its cost */
#define GA_FIND_STARTUP_NS 20000000ull   /* start-up: module loading from 20 ms */
#define GA_FIND_DRAIN_GAP_NS 5000ull     /* a gap a blocking call caused counts from 5 µs */
#define GA_FIND_EMIT_PCT 1.0             /* idle-time findings: 1% of the device's span ... */
#define GA_FIND_MIN_STAKE_NS 100000ull   /* ... and 100 µs; above info: 100 µs at stake ... */
#define GA_FIND_WARN_PCT 1.0             /* ... and 1% of the run; critical from 10% */
#define GA_FIND_CRIT_PCT 10.0
#define GA_FIND_OCC_SHARE 5.0            /* occupancy: configurations of 5%+ of kernel time */
#define GA_FIND_OCC_LOW 0.5              /* occupancy: below 50% */
#define GA_FIND_OCC_ROOF 50.0            /* occupancy: not at 50%+ of its roof (--metrics) */
#define GA_FIND_WAVE_LOW 0.5             /* tail effect: grids below half a wave ... */
#define GA_FIND_WAVE_OVER 0.2            /* ... or one wave and at most a fifth of another */
#define GA_FIND_STRAGGLER_PCT 10.0       /* a step's slowest rank 10% above the median */
#define GA_FIND_MX_SHARE 5.0             /* metrics: kernels of 5%+ of kernel time */
#define GA_FIND_CALLS_MAX (1u << 24)     /* host calls kept at once (512 MiB); more: partial */
#define GA_FIND_CANDS_MAX (1u << 24)     /* gap candidates kept at once */
#define GA_FIND_HOST_LAG_NS 100000000ull /* gaps wait for host calls up to 100 ms behind */
#define GA_FIND_PEND_MAX (1u << 16)      /* retired intervals waiting, per device */
#define GA_FIND_RETIRE_AFTER (1u << 16)  /* a report's busy time retires from 65536 activities */

enum ga_rule {
	GA_RULE_STARVATION,        /* 1 */
	GA_RULE_LAUNCH_BOUND,      /* 2 */
	GA_RULE_SYNC_COPY,         /* 3 */
	GA_RULE_PAGEABLE_COPY,     /* 3 */
	GA_RULE_TINY_COPIES,       /* 3 */
	GA_RULE_HOST_SYNC,         /* 4 */
	GA_RULE_SERIAL_STREAMS,    /* 5 */
	GA_RULE_ALLOC_CHURN,       /* 6 */
	GA_RULE_OCCUPANCY,         /* 7 */
	GA_RULE_TAIL,              /* 7 */
	GA_RULE_BELOW_ROOF,        /* 8 */
	GA_RULE_MEMORY_BOUND,      /* 8 */
	GA_RULE_FP32_GEMM,         /* 8 */
	GA_RULE_NCCL_EXPOSED,      /* 9 */
	GA_RULE_STRAGGLER,         /* 9 */
	GA_RULE_STARTUP,           /* 10 */
	GA_RULE_STAGED_PEER,       /* 11 */
	GA_RULE_INCOMPLETE,        /* 12 */
	GA_RULE_COUNT
};

enum ga_severity { GA_SEV_INFO, GA_SEV_WARNING, GA_SEV_CRITICAL };

struct ga_rule_info {
	const char *id;            /* "gpu-starvation", ... */
	const char *title;         /* one line */
	const char *threshold;     /* the default threshold, in words */
	const char *how;           /* how the time at stake is estimated */
};

extern const struct ga_rule_info ga_rules[GA_RULE_COUNT];

/* Causes of an idle gap (host calls by class, and no call). */
enum ga_cause {
	GA_CAUSE_NONE,             /* no CUDA call: host code */
	GA_CAUSE_SYNC,             /* cudaDeviceSynchronize, cudaStreamSynchronize, event sync */
	GA_CAUSE_COPY,             /* synchronous cudaMemcpy* / cuMemcpy* */
	GA_CAUSE_SET,              /* synchronous cudaMemset* */
	GA_CAUSE_ASYNC_COPY,       /* an asynchronous copy that blocked (pageable memory) */
	GA_CAUSE_ALLOC,            /* cudaMalloc*, cudaFree*, cuMemAlloc*, cuMemFree* */
	GA_CAUSE_MODULE,           /* cuModuleLoad*, cuLibraryLoad*, cuLink* (JIT) */
	GA_CAUSE_CONTEXT,          /* context creation */
	GA_CAUSE_SLOW,             /* any other call of 50 us or more (metrics replay in a launch) */
	GA_CAUSE_COUNT
};

/* "host code (no CUDA call)", "synchronization", ... */
const char *ga_cause_name(unsigned cause);

#define GA_FIND_EVIDENCE 8
#define GA_FIND_WHERE 3

/* A number of a finding's evidence; unit: 'n' ns, 'b' bytes, 'c' count, '%' percent, 'f' a ratio. */
struct ga_evidence {
	const char *name;          /* a JSON key: "gaps", "idle_ns", ... */
	double v;
	char unit;
};

/*
 * One place a finding happens: the activity before and after the idle
 * time (or the kernel, for per-kernel rules), their launch sites when the
 * trace has call stacks, the NVTX range and stream of the one after, and
 * how much of the finding's time and count is here.  Strtab ids, 0 none.
 */
struct ga_where {
	uint32_t site_before, site_after;  /* collapsed launch sites */
	uint32_t site_call;        /* the host call's own site (copies and memsets) */
	uint32_t label_before, label_after; /* activity labels: "kernel foo", "memcpy DtoH" */
	uint32_t call;             /* the host call (function name) */
	uint32_t nvtx;             /* innermost NVTX range label */
	uint32_t stream;           /* of the activity after; UINT32_MAX none */
	uint32_t proc;             /* model process, UINT32_MAX none */
	uint32_t step;             /* ranks: step index + 1, 0 none */
	uint64_t ns, count;
};

struct ga_finding {
	unsigned rule;             /* enum ga_rule */
	unsigned severity;         /* enum ga_severity */
	uint64_t stake_ns;         /* time at stake */
	double stake_pct;          /* of the run's span */
	char subject[96];          /* what it is about: "cuda:0", "rank 1", "kernel foo" */
	char summary[240];         /* one line of what was seen */
	struct ga_evidence ev[GA_FIND_EVIDENCE];
	size_t nev;
	struct ga_where where[GA_FIND_WHERE];
	size_t nwhere;
	int incomplete;            /* the trace lost records: the numbers are a lower bound */
};

/* A host call that may keep a device idle, kept for the gaps. */
struct ga_fcall {
	uint64_t start, end;
	uint32_t proc, name;       /* name: strtab id */
	uint32_t cause;            /* enum ga_cause */
	uint32_t corr;             /* its correlation id: a copy's or memset's stack */
};

/* A gap candidate: an activity that started after every earlier one of its device ended. */
struct ga_fcand {
	uint64_t start, end;       /* the gap as seen while reading */
	uint32_t dev;
	uint32_t proc_before, stack_before, label_before;
	uint32_t proc_after, stack_after, label_after;
	uint32_t nvtx, stream;
};

#define GA_FIND_STREAMS 8                /* streams of a device told apart */
#define GA_FIND_STREAM_HINTS 16          /* slots of a device's stream look-up */
#define GA_FIND_STREAM_SHARE 10.0        /* serialization: streams of 10%+ of the device's time */
#define GA_FIND_OVERLAP_PCT 1.0          /* ... overlapping less than 1% of it */

/* Idle gaps of one cause on a device: count, time, longest. */
struct ga_fcacc {
	uint64_t n, ns, longest;
};

/* Launch-bound runs of a device. */
struct ga_flbacc {
	uint64_t runs, kernels, busy, gaps, stake;
};

/* A process's host calls that may still explain a gap, by start (see findings.c). */
struct ga_fproc {
	struct ga_fcall *c;
	uint64_t *pmax;            /* per call: latest end of the calls up to it */
	size_t n, cap, cappmax;
	size_t sorted;             /* c[0, sorted) in start order, pmax set */
	uint64_t api_hi;           /* latest start of its API records */
	uint64_t dropped_to;       /* latest start of a call dropped */
};

/* A copy's or memset's stack by (process, correlation), in the order they came. */
struct ga_fcs {
	uint64_t ts;               /* the activity's start */
	uint32_t proc, corr;
};

/* A place of idle gaps by stack ids (texts are made at finish). */
struct ga_fwraw {
	uint32_t dev, cause;
	uint32_t call, call_proc, call_stack;
	uint32_t proc_before, stack_before, label_before;
	uint32_t proc_after, stack_after, label_after;
	uint32_t nvtx, stream, proc;
	uint64_t ns, count;
};

struct ga_findings;

/* busy.on_retire's context: one device's. */
struct ga_fretire {
	struct ga_findings *fd;
	uint32_t dev;
};

/* Per model device, while reading. */
struct ga_fdev {
	uint64_t hi;               /* latest end seen */
	uint32_t proc, stack;      /* the activity that set hi */
	uint32_t label1;           /* its label (the model's index) + 1, 0 none: its text when used */
	int seen;
	uint64_t sum;              /* activities' time, summed (overlaps count twice) */
	struct {
		uint64_t key, ns, count;
		uint32_t stack;
		uint32_t site;     /* its first launch's site text, from a summary (stack 0) */
	} stream[GA_FIND_STREAMS]; /* key: proc << 32 | stream */
	uint32_t nstreams;
	uint8_t stream_hint[GA_FIND_STREAM_HINTS]; /* by stream: where in stream[] it may be */
	uint64_t other_ns;         /* streams beyond GA_FIND_STREAMS */
	/* Short kernels (launch-bound): launched one by one, by a graph; launch calls matched. */
	uint64_t lk_short, lk_graph, lk_n, lk_ns;
	/* Its gaps, scanned as the busy union retires intervals. */
	struct ga_fretire *rctx;   /* busy.on_retire's context, set at its first activity */
	struct ga_iv *pend;        /* retired intervals not scanned yet: [pend0, npend) */
	size_t pend0, npend, cappend;
	uint64_t prev_end;         /* the end of the last interval scanned */
	int scanned;               /* one was */
	uint64_t rn, rbusy, rgap;  /* the launch-bound run going on */
	struct ga_fcand *cands;    /* gap candidates: [0, csorted) sorted by end */
	size_t ncands, capcands, csorted;
	struct ga_fcacc acc[GA_CAUSE_COUNT];
	struct ga_flbacc lb;
};

/* A launch call (ns: its duration) or a short kernel (ns: its device), by correlation id. */
struct ga_flaunch {
	uint32_t proc1, corr; /* proc1: process + 1, 0 an empty slot */
	uint64_t ns;
};

/* A context's legacy default stream (its NULL stream). */
struct ga_fnull {
	uint32_t proc, stream;
};

/* Per copy kind: small copies; pageable memory in asynchronous copies. */
struct ga_fcopy {
	uint64_t tiny, tiny_bytes, tiny_ns, tiny_min;
	/*
	 * The gaps between consecutive tiny copies of the kind on one device,
	 * with no other activity between them (in arrival order) and each below
	 * GA_FIND_TINY_RUN_NS: the host's issue time and the copy engine's
	 * turnaround, paid per copy like its own fixed time.
	 */
	uint64_t tiny_gap_ns, last_end, last_seq;
	uint32_t last_dev;
	int have_last;
	uint64_t pageable, pageable_bytes, pageable_ns;
	uint64_t sync, sync_ns;    /* synchronous copies */
};

/* A place of idle gaps by text, on a model device (after ga_findings_settle()). */
struct ga_fplace {
	struct ga_where w;
	uint32_t dev, cause;
};

/* A kernel's launch site (texts) and its kernel time there: ks of a summary's findings. */
struct ga_fksite {
	uint32_t name, site;       /* strtab ids: the kernel's mangled name, the site's text */
	uint64_t ns;
};

struct ga_findings {
	int off;                   /* set before reading: observe nothing, find nothing */
	/*
	 * Set before reading, 0 none: the activities after which the model's
	 * busy time retires its intervals (model.h's busy_retire), for a read
	 * whose devices each see one trace's streams.  Past a few, not from
	 * the start: a trace of many devices and few records would pay each
	 * device's table of streams for nothing.
	 */
	uint64_t retire_after;
	uint64_t nact;             /* activities seen */
	uint64_t act_seq;          /* activities seen, counted always (tiny copies' runs) */
	struct ga_observer next;   /* the observer bound before */
	const struct ga_sites *st; /* stacks of activities while reading (may be unbound) */
	struct ga_fdev *devs;
	size_t ndevs, capdevs;
	struct ga_model *m;        /* bound to */
	struct ga_fproc *procs;    /* per model process: its host calls */
	size_t nprocs, capprocs;
	size_t ncalls;             /* host calls kept, all processes */
	uint64_t calls_dropped;    /* not kept: over GA_FIND_CALLS_MAX at once */
	size_t ncands;             /* gap candidates kept, all devices */
	struct ga_map cstack;      /* (proc, correlation) -> stack of a copy or memset */
	struct ga_fcs *cs;         /* cstack's keys, to drop them */
	size_t ncs, capcs;
	size_t npend;              /* retired intervals waiting, all devices */
	size_t step_pend, step_calls, step_cands, step_cs; /* sizes at which to step next */
	struct ga_fwraw *wr;       /* places of the gaps scanned */
	size_t nwr, capwr;
	struct ga_map wrmap;       /* key of a place -> wr index + 1 */
	struct ga_map sidemap;     /* (proc << 32 | stack, label) -> number for wrmap's key */
	struct ga_map callmap;     /* (name << 32 | proc, stack) -> number for wrmap's key */
	uint32_t *plist;           /* scratch: processes of a device */
	size_t capplist;
	uint8_t *cls;              /* the file's string id -> cause + 1, | 0x40: a kernel launch */
	size_t capcls;
	uint32_t *clsname;         /* the file's string id -> strtab id of the kept call's name */
	size_t capclsname;
	uint32_t cls_proc;         /* process cls belongs to, + 1 */
	/*
	 * String ids from GA_FIND_CLS_DENSE on (a crafted trace's, or many
	 * strings before): id -> its slot in cls and clsname past that, so
	 * that a large id costs a slot, not one for each id up to it.
	 */
	struct ga_map cls_big;
	uint32_t ncls_big;
	struct ga_flb { uint64_t gap, count; } *lb; /* per kstat: gaps before short launches */
	struct ga_flaunch *lcache;                  /* launch calls waiting for their kernels: slot corr % lcap */
	struct ga_flaunch *kcache;                  /* short kernels waiting for their launch calls, the same */
	uint32_t lcap, kcap;                        /* their slots: above every id put in, or GA_FIND_LCACHE */
	struct ga_fnull *nulls;                     /* legacy default streams of the contexts seen */
	size_t nnulls, capnulls;
	size_t caplb;
	struct ga_fcopy copy[GA_COPY_KIND_MAX];
	uint64_t api_ns[GA_CAUSE_COUNT], api_calls[GA_CAUSE_COUNT]; /* host calls by class */
	int oom;

	/*
	 * After ga_findings_settle(): every gap scanned, its places by text in
	 * pl; the rules then read devs[] (acc, lb, streams, launches), pl, lb,
	 * copy, api_*, nulls and calls_dropped only, which summaries carry
	 * (model/summary.h) and merge.  ks: set (have_ks) by a summary, the
	 * launch sites of kernels by text, read instead of the sites'.
	 * mx_cost_ns, mx_skipped: set (have_mx) by a summary, the metrics'
	 * cost and skipped launches, read instead of the mx's.
	 */
	int settled;
	struct ga_fplace *pl;
	size_t npl, cappl;
	struct ga_fksite *ks;
	size_t nks;
	int have_ks, have_mx;
	uint64_t mx_cost_ns, mx_skipped;

	/* After ga_findings_finish(): most time at stake first. */
	struct ga_finding *f;
	size_t nf, capf;
	uint64_t span_ns;          /* the run: earliest process start to latest end */
	int finished;
};

void ga_findings_init(struct ga_findings *fd);
void ga_findings_free(struct ga_findings *fd);

/* Observe m's activities and API records (after the sites' observer, whose stacks it reads). */
void ga_findings_bind(struct ga_findings *fd, struct ga_model *m, const struct ga_sites *st);

/* The finished aggregates the rules read (the analysis's; findings.c knows no struct ga_analysis). */
struct ga_findings_in {
	struct ga_model *m;
	struct ga_sites *st;              /* written: stack texts are made on use */
	int observe_sites;                /* launch sites observed (else st is empty) */
	const struct ga_mx *mx;
	const struct ga_launchcfg *lc;
	const struct ga_ranks *rk;
};

/*
 * After every other aggregate is finished (launch sites included, when
 * observed): scan what gaps are left and make their places' texts (the
 * part of the work that needs the trace's records and stacks), so that
 * fd holds only state that merges (summaries carry it).  Done by
 * ga_findings_finish() when not before.  Returns 0, or -1 out of memory.
 */
int ga_findings_settle(struct ga_findings *fd, const struct ga_findings_in *in);

/*
 * After every other aggregate is finished (launch sites included, when
 * observed): settle, then run the rules.  Returns 0, or -1 when memory
 * runs out.
 */
int ga_findings_finish(struct ga_findings *fd, const struct ga_findings_in *in);

/* "info", "warning", "critical". */
const char *ga_severity_name(unsigned sev);

/* Severity by name, or -1. */
int ga_severity_parse(const char *s);

/* Rule by id ("host-sync") or by number of its family ("4"), or -1. */
int ga_rule_parse(const char *s);

/*
 * --fail-on: a comma-separated list of rule ids, or one severity (the
 * findings at it or above).  Fills rules[GA_RULE_COUNT] (1: fails) and
 * *sev (-1 none).  0, or -1 with a message in err.
 */
int ga_fail_on_parse(const char *s, unsigned char *rules, int *sev, char *err, size_t n);

/* 1 when a finding of fd fails the --fail-on selection. */
int ga_fail_on_fires(const struct ga_findings *fd, const unsigned char *rules, int sev);

#endif
