/*
 * Findings (see findings.h): the observer of the aggregate pass, the
 * attribution of every idle gap to one cause, and the rules.  Runs
 * offline only.
 */
#include "model/findings.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hwmetrics.h"
#include "model/launchcfg.h"
#include "model/ranks.h"
#include "model/sites.h"

#define NONE UINT32_MAX

/* One rule a block, its four texts one a line or more. */
/* clang-format off */
const struct ga_rule_info ga_rules[GA_RULE_COUNT] = {
	[GA_RULE_STARVATION] = {
		"gpu-starvation",
		"the GPU idles while the host runs code outside CUDA calls",
		"idle gaps of 50 us or more with no CUDA call holding the host; "
		"100 us and 1% of the device's span in all",
		"the gaps' length: the device time lost while the host computed; "
		"overlapping that work with the GPU's saves up to it" },
	[GA_RULE_LAUNCH_BOUND] = {
		"launch-bound",
		"runs of short kernels wait on their launches: use CUDA graphs or fuse kernels",
		"32+ kernels of 20 us or less in a row, each gap below 1 ms and the gaps as long "
		"as the kernels or longer; 100 us and 1% of the device's span in all",
		"the host time of the runs' launch calls (their kernels times the mean launch "
		"call of the device's short kernels), at most the gaps inside the runs less 1 us "
		"per kernel that a CUDA graph still leaves between nodes" },
	[GA_RULE_SYNC_COPY] = {
		"sync-copy",
		"synchronous copies or memsets in a loop keep the GPU idle",
		"3+ idle gaps of 5 us or more begun while the host waited in "
		"cudaMemcpy/cudaMemset; 100 us and 1% of the device's span in all",
		"the idle gaps that begin while the host is in the synchronous call: "
		"an asynchronous copy into pinned memory lets the host queue the next work" },
	[GA_RULE_PAGEABLE_COPY] = {
		"pageable-copy",
		"asynchronous copies of pageable host memory are staged and block the host",
		"3+ asynchronous copies from or to pageable memory",
		"the idle gaps that begin while the host is blocked in the asynchronous "
		"copy call: pinned memory (cudaMallocHost, pin_memory) makes it return at once" },
	[GA_RULE_TINY_COPIES] = {
		"tiny-copies",
		"many tiny copies: batch them into fewer, larger ones",
		"100+ copies of one direction below 64 KiB each",
		"the copies' fixed cost (the shortest copy's time plus the mean gap below "
		"50 us to a tiny copy right before, the host's call and the engine's "
		"turnaround) paid once per 1 MiB instead of once per copy" },
	[GA_RULE_HOST_SYNC] = {
		"host-sync",
		"host-device synchronizations inside steps drain the GPU",
		"3+ idle gaps of 5 us or more begun while the host waited in a synchronizing "
		"call; 100 us and 1% of the device's span in all",
		"the idle gaps that begin while the host waits in the synchronizing call: "
		"without it the host would have queued the next work" },
	[GA_RULE_SERIAL_STREAMS] = {
		"serialized-streams",
		"streams that never overlap: independent work runs one after another",
		"2+ streams of a device with 10%+ of its time each, overlapping for less "
		"than 1% of it; work on the legacy default stream, which waits for the "
		"others, is named",
		"an upper bound, if the streams are independent: the time of all but the "
		"busiest stream, which could have run beside it" },
	[GA_RULE_ALLOC_CHURN] = {
		"alloc-churn",
		"device memory is allocated and freed in steady state",
		"3+ idle gaps of 5 us or more caused by allocation or free calls; "
		"100 us and 1% of the device's span in all",
		"the idle gaps begun in or mostly covered by cudaMalloc/cudaFree calls: "
		"allocating once (or a caching allocator) removes them" },
	[GA_RULE_OCCUPANCY] = {
		"occupancy",
		"kernels limited to low occupancy by registers or shared memory",
		"configurations of 5%+ of kernel time below 50% theoretical occupancy, whose "
		"blocks would run in fewer rounds with the limit lifted; with --metrics, "
		"kernels below 50% of their roof",
		"the configuration's kernel time x (1 - rounds with the limit lifted / rounds "
		"now), a round being SMs x resident blocks: a block taking as long either way "
		"(latency-bound); an upper bound, with --metrics at most the time above the "
		"kernel's roof" },
	[GA_RULE_TAIL] = {
		"tail-effect",
		"grids of a partial last wave leave SMs idle",
		"configurations of 5%+ of kernel time, of kernels longer than 20 us on average, "
		"with fewer blocks than half a wave, or with one wave and at most a fifth of "
		"another (the second wave mostly empty)",
		"an upper bound: the kernels' time times the share of their waves left empty, "
		"1 - waves / whole waves" },
	[GA_RULE_BELOW_ROOF] = {
		"below-roof",
		"kernels far below their roofline: neither memory nor compute bound",
		"kernels of 5%+ of kernel time under half the roof at their arithmetic "
		"intensity (--metrics)",
		"the kernels' time less what it would be at half the roof: "
		"time x (1 - % of roof / 50)" },
	[GA_RULE_MEMORY_BOUND] = {
		"memory-bound",
		"memory-bound kernels: fewer bytes (fusion, lower precision) make them faster",
		"kernels of 5%+ of kernel time at half the DRAM bandwidth or more, left of "
		"the ridge (--metrics)",
		"not estimated: it depends on how many bytes fusion or precision removes" },
	[GA_RULE_FP32_GEMM] = {
		"fp32-gemm",
		"FP32 matrix products on CUDA cores could use tensor cores (TF32, BF16)",
		"GEMM-like kernels (gemm, matmul, mma, conv in the name) of 5%+ of kernel "
		"time doing mostly FP32 FLOPs, right of the ridge (--metrics)",
		"the kernels' time less the same FLOPs on TF32 tensor cores at the same share "
		"of their roof: time x (1 - FP32 peak / TF32 peak)" },
	[GA_RULE_NCCL_EXPOSED] = {
		"nccl-exposed",
		"communication is not hidden behind compute",
		"NCCL kernel time with no compute kernel on the device and compute with no "
		"NCCL kernel, 100 us or more of each",
		"per rank, the shorter of its NCCL time alone and its compute time alone "
		"(overlapping turns C + N into max(C, N)); the rank with the most" },
	[GA_RULE_STRAGGLER] = {
		"straggler",
		"a rank is slower than the others in steps",
		"the slowest rank of a step 10% or more above the median",
		"per step, the slowest rank's work less the median rank's, summed" },
	[GA_RULE_STARTUP] = {
		"startup",
		"start-up spends time loading modules or compiling (JIT)",
		"20 ms or more in module loading and linking calls",
		"the time in module loading calls: cubins for the GPU's architecture "
		"(no JIT) and lazy loading cut it; context creation is shown, not counted" },
	[GA_RULE_STAGED_PEER] = {
		"staged-peer-copy",
		"peer copies are staged through the host (no P2P)",
		"any copy between devices staged through host memory",
		"half the staged copies' time: one direct copy instead of two legs" },
	[GA_RULE_INCOMPLETE] = {
		"incomplete-trace",
		"the trace is incomplete: findings rest on partial data",
		"any record lost, recording gap, metrics launch skipped or time spent profiling metrics",
		"none: it says how much the other findings may miss" },
};
/* clang-format on */

const char *ga_cause_name(unsigned cause)
{
	static const char *const names[GA_CAUSE_COUNT] = {
		[GA_CAUSE_NONE] = "host code (no CUDA call)",
		[GA_CAUSE_SYNC] = "synchronization",
		[GA_CAUSE_COPY] = "synchronous copy",
		[GA_CAUSE_SET] = "synchronous memset",
		[GA_CAUSE_ASYNC_COPY] = "blocking asynchronous copy",
		[GA_CAUSE_ALLOC] = "allocation or free",
		[GA_CAUSE_MODULE] = "module loading",
		[GA_CAUSE_CONTEXT] = "context creation",
		[GA_CAUSE_SLOW] = "a slow CUDA call",
	};

	return cause < GA_CAUSE_COUNT ? names[cause] : "?";
}

const char *ga_severity_name(unsigned sev)
{
	return sev == GA_SEV_CRITICAL ? "critical" : sev == GA_SEV_WARNING ? "warning" : "info";
}

int ga_severity_parse(const char *s)
{
	for (int i = GA_SEV_INFO; i <= GA_SEV_CRITICAL; i++)
		if (!strcmp(s, ga_severity_name((unsigned)i)))
			return i;
	return -1;
}

int ga_rule_parse(const char *s)
{
	for (int i = 0; i < GA_RULE_COUNT; i++)
		if (!strcmp(s, ga_rules[i].id))
			return i;
	return -1;
}

int ga_fail_on_parse(const char *s, unsigned char *rules, int *sev, char *err, size_t n)
{
	char buf[64];
	const char *p = s;

	memset(rules, 0, GA_RULE_COUNT);
	*sev = -1;
	if (!*s) {
		snprintf(err, n, "--fail-on needs rule ids or a severity");
		return -1;
	}
	if ((*sev = ga_severity_parse(s)) >= 0)
		return 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int r;

		if (!len || len >= sizeof(buf)) {
			snprintf(err, n, "--fail-on: bad list '%s'", s);
			return -1;
		}
		memcpy(buf, p, len);
		buf[len] = 0;
		if ((r = ga_rule_parse(buf)) < 0) {
			snprintf(err, n, "--fail-on: '%s' is neither a rule (gpuprof report --help "
				 "lists them) nor info, warning or critical", buf);
			return -1;
		}
		rules[r] = 1;
		p += len;
		if (*p == ',' && !*++p) {
			snprintf(err, n, "--fail-on: bad list '%s'", s);
			return -1;
		}
	}
	return 0;
}

int ga_fail_on_fires(const struct ga_findings *fd, const unsigned char *rules, int sev)
{
	for (size_t i = 0; i < fd->nf; i++) {
		const struct ga_finding *f = &fd->f[i];

		if (sev >= 0 ? (int)f->severity >= sev : rules[f->rule] != 0)
			return 1;
	}
	return 0;
}

#define STEP_PEND 4096u           /* scan when this many retired intervals wait ... */
#define STEP_KEPT 4096u           /* ... or this many calls, candidates or stacks are kept */

void ga_findings_init(struct ga_findings *fd)
{
	memset(fd, 0, sizeof(*fd));
	for (size_t i = 0; i < GA_COPY_KIND_MAX; i++)
		fd->copy[i].tiny_min = UINT64_MAX;
	fd->step_pend = STEP_PEND;
	fd->step_calls = fd->step_cands = fd->step_cs = STEP_KEPT;
}

void ga_findings_free(struct ga_findings *fd)
{
	for (size_t i = 0; i < fd->ndevs; i++) {
		free(fd->devs[i].rctx);
		free(fd->devs[i].pend);
		free(fd->devs[i].cands);
	}
	free(fd->devs);
	for (size_t i = 0; i < fd->nprocs; i++) {
		free(fd->procs[i].c);
		free(fd->procs[i].pmax);
	}
	free(fd->procs);
	ga_map_free(&fd->cstack);
	free(fd->cs);
	free(fd->wr);
	ga_map_free(&fd->wrmap);
	ga_map_free(&fd->sidemap);
	ga_map_free(&fd->callmap);
	free(fd->plist);
	free(fd->cls);
	free(fd->clsname);
	ga_map_free(&fd->cls_big);
	free(fd->lb);
	free(fd->lcache);
	free(fd->kcache);
	free(fd->nulls);
	free(fd->pl);
	free(fd->ks);
	free(fd->f);
	memset(fd, 0, sizeof(*fd));
}

/* ---- the aggregate pass ---- */

static int step_due(const struct ga_findings *fd);
static int step(struct ga_findings *fd, int all);
static int scan(struct ga_findings *fd, int all);

/* fd->devs to n devices, the new ones zero.  0, or -1. */
static int devs_grow(struct ga_findings *fd, size_t n)
{
	size_t old = fd->ndevs;

	if (n <= old)
		return 0;
	if (ga_util_grow(&fd->devs, &fd->capdevs, n, sizeof(*fd->devs)))
		return -1;
	memset(fd->devs + old, 0, (n - old) * sizeof(*fd->devs));
	fd->ndevs = n;
	return 0;
}

/* busy.on_retire: an interval of the union that no later one joins waits for its gap scan. */
static void on_retire(void *ctx, uint64_t start, uint64_t end)
{
	struct ga_fretire *r = ctx;
	struct ga_findings *fd = r->fd;
	struct ga_fdev *d = &fd->devs[r->dev];

	if (d->pend0 && d->npend == d->cappend) {
		memmove(d->pend, d->pend + d->pend0, (d->npend - d->pend0) * sizeof(*d->pend));
		d->npend -= d->pend0;
		d->pend0 = 0;
	}
	if (d->npend == d->cappend &&
	    ga_util_grow(&d->pend, &d->cappend, d->npend + 1, sizeof(*d->pend))) {
		fd->oom = 1;
		return;
	}
	d->pend[d->npend].start = start;
	d->pend[d->npend].end = end;
	d->npend++;
	fd->npend++;
	/*
	 * Scanned from here, as the union retires them, while a batch is
	 * small: the intervals it retires behind it are the activities' it has
	 * observed already (a retired one ends before the current one starts).
	 */
	if (d->npend - d->pend0 >= STEP_PEND && fd->npend >= fd->step_pend && scan(fd, 0))
		fd->oom = 1;
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* The cause a host call of this name can be, GA_CAUSE_NONE for none to keep. */
static unsigned classify(const char *s)
{
	int async = strstr(s, "Async") != NULL;

	if (starts(s, "cudaDeviceSynchronize") || starts(s, "cudaStreamSynchronize") ||
	    starts(s, "cudaEventSynchronize") || starts(s, "cudaThreadSynchronize") ||
	    starts(s, "cuCtxSynchronize") || starts(s, "cuStreamSynchronize") ||
	    starts(s, "cuEventSynchronize"))
		return GA_CAUSE_SYNC;
	if (starts(s, "cudaMemcpy") || starts(s, "cuMemcpy"))
		return async ? GA_CAUSE_ASYNC_COPY : GA_CAUSE_COPY;
	if (starts(s, "cudaMemset") || starts(s, "cuMemset") || starts(s, "cuMemsetD"))
		return async ? GA_CAUSE_NONE : GA_CAUSE_SET;
	if (async)
		return GA_CAUSE_NONE;    /* stream-ordered allocation does not block */
	if (starts(s, "cudaMalloc") || starts(s, "cudaFree") || starts(s, "cuMemAlloc") ||
	    starts(s, "cuMemFree") || starts(s, "cudaHostAlloc") || starts(s, "cuMemHostAlloc"))
		return GA_CAUSE_ALLOC;
	if (starts(s, "cuModuleLoad") || starts(s, "cuLibraryLoad") || starts(s, "cuLink") ||
	    starts(s, "cudaLibraryLoad") || starts(s, "cuModuleGetFunction") ||
	    starts(s, "cuLibraryGetKernel"))
		return GA_CAUSE_MODULE;
	if (starts(s, "cuCtxCreate") || starts(s, "cuDevicePrimaryCtxRetain") ||
	    starts(s, "cuInit"))
		return GA_CAUSE_CONTEXT;
	return GA_CAUSE_NONE;
}

/* 1 for a call that launches one kernel (not a graph, not a host function). */
static int is_launch(const char *s)
{
	return starts(s, "cudaLaunchKernel") || starts(s, "cuLaunchKernel") ||
	       starts(s, "cudaLaunchCooperativeKernel") || starts(s, "cuLaunchCooperativeKernel");
}

#define CLS_LAUNCH 0x40

/*
 * The slot of corr in table *t of *cap slots, to put an entry in: made on
 * first use (a trace without launch calls or short kernels needs none), of
 * 4096 slots, doubled past corr up to GA_FIND_LCACHE.  A table that holds
 * only ids below its size evicts an entry where the full one would (the
 * same id), so each trace pays for the ids it has, not 4 MiB of zeros
 * (the report's pool makes one for every trace).  NULL out of memory.
 */
static struct ga_flaunch *cache_put(struct ga_flaunch **t, uint32_t *cap, uint32_t corr)
{
	if (corr >= *cap && *cap < GA_FIND_LCACHE) {
		uint32_t nc = *cap ? *cap : 4096;
		struct ga_flaunch *n;

		while (nc <= corr && nc < GA_FIND_LCACHE)
			nc *= 2;
		if (!(n = calloc(nc, sizeof(*n))))
			return NULL;
		for (uint32_t i = 0; i < *cap; i++)
			if ((*t)[i].proc1)
				n[(*t)[i].corr & (nc - 1)] = (*t)[i];
		free(*t);
		*t = n;
		*cap = nc;
	}
	return &(*t)[corr & (*cap - 1)];
}

/* The slot corr would be in, or NULL where no entry can hold it. */
static struct ga_flaunch *cache_get(struct ga_flaunch *t, uint32_t cap, uint32_t corr)
{
	return t && (corr < cap || cap == GA_FIND_LCACHE) ? &t[corr & (cap - 1)] : NULL;
}

/*
 * A launch call of ns and a short kernel meet by correlation id, whichever
 * comes first in the file (API records and activities come in buffers of
 * their own): the first waits in its table, the second adds the call's
 * time to the kernel's device.  A runtime launch and the driver launch
 * inside it share the id: the longer counts when both come before the
 * kernel, else the first.
 */
static int launch_seen(struct ga_findings *fd, uint32_t proc, uint32_t corr, uint64_t ns)
{
	struct ga_flaunch *k = cache_get(fd->kcache, fd->kcap, corr), *l;

	if (k && k->proc1 == proc + 1 && k->corr == corr) {
		fd->devs[k->ns].lk_n++;
		fd->devs[k->ns].lk_ns += ns;
		k->proc1 = 0;
		return 0;
	}
	if (!(l = cache_put(&fd->lcache, &fd->lcap, corr)))
		return -1;
	if (l->proc1 != proc + 1 || l->corr != corr || ns > l->ns)
		*l = (struct ga_flaunch){ .proc1 = proc + 1, .corr = corr, .ns = ns };
	return 0;
}

static int kernel_seen(struct ga_findings *fd, uint32_t proc, uint32_t corr, uint32_t dev,
		       int api)
{
	struct ga_flaunch *l = cache_get(fd->lcache, fd->lcap, corr), *k;

	if (l && l->proc1 == proc + 1 && l->corr == corr) {
		fd->devs[dev].lk_n++;
		fd->devs[dev].lk_ns += l->ns;
		l->proc1 = 0;
		return 0;
	}
	/* Only where launch calls are traced can one still come. */
	if (!api)
		return 0;
	if (!(k = cache_put(&fd->kcache, &fd->kcap, corr)))
		return -1;
	*k = (struct ga_flaunch){ .proc1 = proc + 1, .corr = corr, .ns = dev };
	return 0;
}

static uint32_t sid_ok(uint32_t sid)
{
	return sid == GA_STR_NOMEM ? 0 : sid;
}

/* The slot in cls and clsname of a string id from GA_FIND_CLS_DENSE on (ga_findings cls_big). */
#define GA_FIND_CLS_DENSE (1u << 20)
static __attribute__((noinline)) int cls_slot_big(struct ga_findings *fd, uint32_t name,
						  size_t *ni)
{
	uint32_t *slot;
	int r;

	if ((r = ga_map_insert(&fd->cls_big, name, 0, &slot)) < 0)
		return -1;
	if (r == 1)
		*slot = GA_FIND_CLS_DENSE + fd->ncls_big++;
	*ni = *slot;
	return 0;
}

static inline __attribute__((always_inline)) int
on_api(struct ga_findings *fd, struct ga_model *m, uint32_t proc, const struct gp_rec_api *r)
{
	unsigned cause, launch;
	uint32_t sid;
	struct ga_fproc *pr;
	size_t ni;

	if (proc >= fd->nprocs) {
		size_t old = fd->nprocs;

		if (ga_util_grow(&fd->procs, &fd->capprocs, (size_t)proc + 1, sizeof(*fd->procs)))
			return -1;
		memset(fd->procs + old, 0, ((size_t)proc + 1 - old) * sizeof(*fd->procs));
		fd->nprocs = (size_t)proc + 1;
	}
	/* How far the process's host calls have been read: its gaps before can be scanned. */
	if (r->start > fd->procs[proc].api_hi)
		fd->procs[proc].api_hi = r->start;
	/* String ids are the file's: the cache starts over with each process. */
	if (fd->cls_proc != proc + 1) {
		if (fd->cls)
			memset(fd->cls, 0, fd->capcls);
		ga_map_free(&fd->cls_big);
		fd->ncls_big = 0;
		fd->cls_proc = proc + 1;
	}
	if (r->name < GA_FIND_CLS_DENSE)
		ni = r->name;
	else if (cls_slot_big(fd, r->name, &ni))
		return -1;
	if (ni >= fd->capcls) {
		size_t old = fd->capcls;

		if (ga_util_grow(&fd->cls, &fd->capcls, ni + 1, 1))
			return -1;
		memset(fd->cls + old, 0, fd->capcls - old);
	}
	if (!fd->cls[ni]) {
		const char *text;
		size_t len;

		sid = sid_ok(ga_model_fstr(m, r->name));
		text = ga_model_str(m, sid);
		cause = sid ? classify(text) : GA_CAUSE_NONE;
		launch = sid && is_launch(text) ? CLS_LAUNCH : 0;
		if (sid) {
			/* The name without CUPTI's version suffix, as the API table shows it
			 * (copied first: interning may move the table's text). */
			char name[256];

			len = strlen(text);
			for (size_t i = len; i > 2; i--) {
				if (text[i - 1] >= '0' && text[i - 1] <= '9')
					continue;
				if (i < len && text[i - 1] == 'v' && text[i - 2] == '_')
					len = i - 2;
				break;
			}
			if (len >= sizeof(name))
				len = sizeof(name) - 1;
			memcpy(name, text, len);
			sid = sid_ok(ga_strtab_intern(&m->strs, name, len));
		}
		if (ga_util_grow(&fd->clsname, &fd->capclsname, fd->capcls, sizeof(*fd->clsname)))
			return -1;
		fd->clsname[ni] = sid;
		fd->cls[ni] = (uint8_t)((cause + 1) | launch);
	}
	if ((fd->cls[ni] & CLS_LAUNCH) && r->correlation &&
	    launch_seen(fd, proc, r->correlation, r->end > r->start ? r->end - r->start : 0))
		return -1;
	cause = (fd->cls[ni] & (CLS_LAUNCH - 1)) - 1u;
	/* Any other call this long holds the host too (a launch profiled by kernel replay). */
	if (cause == GA_CAUSE_NONE && r->end >= r->start + GA_FIND_STARVE_GAP_NS)
		cause = GA_CAUSE_SLOW;
	if (cause == GA_CAUSE_NONE)
		return 0;
	fd->api_calls[cause]++;
	fd->api_ns[cause] += r->end > r->start ? r->end - r->start : 0;
	if (fd->ncalls >= GA_FIND_CALLS_MAX) {
		fd->calls_dropped++;
		return 0;
	}
	pr = &fd->procs[proc];
	if (ga_util_grow(&pr->c, &pr->cap, pr->n + 1, sizeof(*pr->c)))
		return -1;
	pr->c[pr->n++] = (struct ga_fcall){
		.start = r->start,
		.end = r->end > r->start ? r->end : r->start,
		.proc = proc,
		.name = fd->clsname[ni],
		.cause = cause,
		.corr = r->correlation,
	};
	fd->ncalls++;
	return 0;
}

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_findings *fd = ctx;

	if (fd->off)
		return fd->next.rec ? fd->next.rec(fd->next.ctx, m, proc, rec) : 0;
	if (rec->type == GP_REC_API && (on_api(fd, m, proc, (const void *)rec) ||
					(step_due(fd) && step(fd, 0))))
		fd->oom = 1;
	if (rec->type == GP_REC_CONTEXT && rec->size >= sizeof(struct gp_rec_context)) {
		uint32_t ns = ((const struct gp_rec_context *)(const void *)rec)->null_stream;
		size_t i;

		for (i = 0; i < fd->nnulls && (fd->nulls[i].proc != proc || fd->nulls[i].stream != ns); i++)
			;
		if (i == fd->nnulls && fd->nnulls < 4096) {
			if (ga_util_grow(&fd->nulls, &fd->capnulls, fd->nnulls + 1, sizeof(*fd->nulls)))
				fd->oom = 1;
			else
				fd->nulls[fd->nnulls++] = (struct ga_fnull){ proc, ns };
		}
	}
	return fd->next.rec ? fd->next.rec(fd->next.ctx, m, proc, rec) : 0;
}

static void on_copy(struct ga_findings *fd, const struct ga_act *a)
{
	const struct gp_rec_memcpy *r = (const void *)a->rec;
	struct ga_fcopy *c;
	uint64_t dur = a->end - a->start;

	if (!r || r->h.type != GP_REC_MEMCPY || a->copy_kind >= GA_COPY_KIND_MAX ||
	    a->copy_kind == GA_COPY_STAGED_PEER)
		return;
	c = &fd->copy[a->copy_kind];
	if (!(r->flags & GP_ACT_ASYNC)) {
		c->sync++;
		c->sync_ns += dur;
	} else if (r->src_kind == 1 || r->dst_kind == 1) {
		c->pageable++;
		c->pageable_bytes += a->bytes;
		c->pageable_ns += dur;
	}
	if (a->bytes < GA_FIND_TINY_COPY) {
		c->tiny++;
		c->tiny_bytes += a->bytes;
		c->tiny_ns += dur;
		if (dur < c->tiny_min)
			c->tiny_min = dur;
		/*
		 * Only the gap right after the previous activity, a tiny copy of the
		 * kind (a kernel between them is no cost of the copies).  Buffers
		 * come each in time order, not always in order of each other: one
		 * going back in time loses the gap at its start only.
		 */
		if (c->have_last && c->last_seq + 1 == fd->act_seq && c->last_dev == a->dev &&
		    a->start >= c->last_end && a->start - c->last_end < GA_FIND_TINY_RUN_NS)
			c->tiny_gap_ns += a->start - c->last_end;
		c->have_last = 1;
		c->last_dev = a->dev;
		c->last_end = a->end;
		c->last_seq = fd->act_seq;
	}
}

/* 1 for a copy or memset whose call may block the host: synchronous, or of pageable memory. */
static int blocking(const struct ga_act *a)
{
	if (a->kind == GA_ACT_MEMCPY && a->rec->type == GP_REC_MEMCPY) {
		const struct gp_rec_memcpy *r = (const void *)a->rec;

		return !(r->flags & GP_ACT_ASYNC) || r->src_kind == 1 || r->dst_kind == 1;
	}
	if (a->kind == GA_ACT_MEMSET && a->rec->type == GP_REC_MEMSET)
		return !(((const struct gp_rec_memset *)(const void *)a->rec)->flags & GP_ACT_ASYNC);
	return 0;
}

/* The text of an activity's label, 0 for none. */
static uint32_t label_str(const struct ga_model *m, uint32_t label)
{
	return label < m->nlabels ? m->labels[label].str : 0;
}

static int on_act(struct ga_findings *fd, struct ga_model *m, const struct ga_act *a)
{
	struct ga_fdev *d;
	uint32_t stack = 0;

	if (a->dev >= fd->ndevs && devs_grow(fd, (size_t)a->dev + 1))
		return -1;
	fd->act_seq++;
	d = &fd->devs[a->dev];
	if (!d->rctx) {
		/* The device's retired busy intervals come to its gap scan. */
		if (!(d->rctx = malloc(sizeof(*d->rctx))))
			return -1;
		d->rctx->fd = fd;
		d->rctx->dev = a->dev;
		m->devs[a->dev].busy.on_retire = on_retire;
		m->devs[a->dev].busy.retire_ctx = d->rctx;
	}
	if (a->kind == GA_ACT_GRAPH)
		return 0;            /* its kernels tell more; the graph's span covers its gaps */
	if (a->kind == GA_ACT_MEMCPY)
		on_copy(fd, a);
	d = &fd->devs[a->dev];
	if (fd->st && ga_sites_any_stacks(fd->st))
		stack = ga_sites_stack_of(fd->st, a);
	{
		uint64_t key = (uint64_t)a->proc << 32 | a->stream, dur = a->end - a->start;
		uint8_t *hint = &d->stream_hint[(a->stream ^ a->proc * 7u) % GA_FIND_STREAM_HINTS];
		uint32_t i = *hint;

		d->sum += dur;
		/* Streams interleave: each is found where its hint slot says, most times. */
		if (i >= d->nstreams || d->stream[i].key != key) {
			for (i = 0; i < d->nstreams && d->stream[i].key != key; i++)
				;
			*hint = (uint8_t)i;
		}
		if (i < d->nstreams) {
			d->stream[i].ns += dur;
			d->stream[i].count++;
		} else if (i < GA_FIND_STREAMS) {
			d->stream[i].key = key;
			d->stream[i].ns = dur;
			d->stream[i].count = 1;
			d->nstreams++;
		} else {
			d->other_ns += dur;
		}
		/* The stream's first launch site (the legacy default stream's is named). */
		if (stack && i < GA_FIND_STREAMS && !d->stream[i].stack) {
			d->stream[i].stack = stack;
			if (ga_sites_want((struct ga_sites *)fd->st, a->proc, stack))
				return -1;
		}
	}
	/*
	 * The host time its launch took (launch-bound's estimate), for short
	 * kernels that follow the device's last work within a run's gap: the
	 * first launch after a pause (a module loaded lazily inside it, say)
	 * is no run's.
	 */
	if (a->kind == GA_ACT_KERNEL && a->end - a->start <= GA_FIND_SHORT_KERNEL_NS && d->seen &&
	    (a->start <= d->hi || a->start - d->hi < GA_FIND_LB_GAP_MAX_NS)) {
		const struct ga_proc *p = &m->procs[a->proc];
		int api = !p->has_config || (p->config.trace & GP_TRACE_API);

		if (a->graph_id)
			d->lk_graph++;
		else
			d->lk_short++;
		if (!a->graph_id && a->correlation &&
		    kernel_seen(fd, a->proc, a->correlation, a->dev, api))
			return -1;
	}
	if (stack && a->rec && a->correlation && blocking(a) && fd->cstack.n < GA_FIND_CANDS_MAX) {
		uint32_t *slot;
		int ins = ga_map_insert(&fd->cstack, a->proc, a->correlation, &slot);

		/* The call's own site: where the host was held, whatever ran before the gap. */
		if (ins < 0)
			return -1;
		*slot = stack;
		if (ins) {
			if (ga_util_grow(&fd->cs, &fd->capcs, fd->ncs + 1, sizeof(*fd->cs)))
				return -1;
			fd->cs[fd->ncs++] = (struct ga_fcs){ a->start, a->proc, a->correlation };
		}
		if (ga_sites_want((struct ga_sites *)fd->st, a->proc, stack))
			return -1;
	}
	if (d->seen && a->start > d->hi) {
		uint64_t gap = a->start - d->hi;

		if (a->kind == GA_ACT_KERNEL && gap < GA_FIND_LB_GAP_MAX_NS &&
		    a->end - a->start <= GA_FIND_SHORT_KERNEL_NS && a->name < m->capstr2k &&
		    m->str2k[a->name]) {
			size_t k = m->str2k[a->name] - 1, old = fd->caplb;

			if (k >= old) {
				if (ga_util_grow(&fd->lb, &fd->caplb, k + 1, sizeof(*fd->lb)))
					return -1;
				memset(fd->lb + old, 0, (fd->caplb - old) * sizeof(*fd->lb));
			}
			fd->lb[k].gap += gap;
			fd->lb[k].count++;
		}
		if (gap >= GA_FIND_SITE_GAP_NS && fd->ncands < GA_FIND_CANDS_MAX) {
			if (ga_util_grow(&d->cands, &d->capcands, d->ncands + 1, sizeof(*d->cands)))
				return -1;
			fd->ncands++;
			d->cands[d->ncands++] = (struct ga_fcand){
				.start = d->hi, .end = a->start, .dev = a->dev,
				.proc_before = d->proc, .stack_before = d->stack,
				.label_before = label_str(m, d->label1 - 1), .proc_after = a->proc,
				.stack_after = stack, .label_after = label_str(m, a->label),
				.nvtx = a->nvtx, .stream = a->stream,
			};
			if (fd->st && (ga_sites_want((struct ga_sites *)fd->st, d->proc, d->stack) ||
				       ga_sites_want((struct ga_sites *)fd->st, a->proc, stack)))
				return -1;
		}
	}
	/*
	 * Records come in buffers, each in time order, but buffers may come
	 * out of order: one that goes back in time starts over (the gaps are
	 * checked against the exact busy intervals at finish).
	 */
	if (!d->seen || a->end > d->hi || a->end + GA_FIND_RESTART_NS < d->hi) {
		d->hi = a->end;
		d->proc = a->proc;
		d->stack = stack;
		d->label1 = a->label + 1;
		d->seen = 1;
	}
	return 0;
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_findings *fd = ctx;

	if (fd->retire_after && !m->busy_retire && ++fd->nact >= fd->retire_after)
		m->busy_retire = 1;
	if (!fd->off && (on_act(fd, m, a) || (step_due(fd) && step(fd, 0))))
		fd->oom = 1;
	return fd->next.act ? fd->next.act(fd->next.ctx, m, a) : 0;
}

void ga_findings_bind(struct ga_findings *fd, struct ga_model *m, const struct ga_sites *st)
{
	fd->m = m;
	fd->next = m->obs;
	fd->st = st;
	m->obs.ctx = fd;
	m->obs.rec = obs_rec;
	m->obs.act = obs_act;
}

/* ---- streaming: every idle gap and its cause ---- */

/*
 * Streaming.  The busy union of a device hands over its intervals in
 * order as it retires them (on_retire); they wait in d->pend until the
 * host calls that may explain their gaps have been read: the latest API
 * record of each of the device's processes that trace API calls at least
 * GA_FIND_HOST_LAG_NS past the gap (API records come in buffers of their
 * own, later than the activities of the same time), or more than
 * GA_FIND_PEND_MAX intervals waiting.  Then each gap is scanned as at
 * finish, and what no later gap can use is dropped:
 *  - a process's calls, kept sorted by start: a later gap of its devices
 *    starts no earlier than G, the end of the last interval scanned on
 *    them; attribute() walks back from the first call after the gap's
 *    start only while a call up to there ends at or after it, and at most
 *    SCAN_MAX calls, so the calls before both the first that ends at or
 *    after G (by the running latest end) and SCAN_MAX before the first
 *    starting after G are never read again;
 *  - gap candidates that end at or before their device's G;
 *  - copy stacks whose activity started before the latest start of the
 *    calls dropped of their process (their call started no later).
 * Places are kept by stack ids; their texts (and the strtab ids that
 * order ties) are made at finish in the order the places were first
 * seen, device by device, as when every gap was scanned at finish.
 * Everything is exact for records in order and within the lag; a trace
 * that stays in order is scanned the same streamed or at finish.
 */

#define SCAN_MAX 512               /* calls looked at per gap and direction */

static int cmp_call(const void *pa, const void *pb)
{
	const struct ga_fcall *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static int cmp_cand(const void *pa, const void *pb)
{
	const struct ga_fcand *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->start > b->start ? -1 : a->start < b->start;
}

/* Cause priority when several calls hold the host as the device runs dry. */
static int rank_of(unsigned cause)
{
	static const int r[GA_CAUSE_COUNT] = {
		[GA_CAUSE_SYNC] = 8, [GA_CAUSE_COPY] = 7, [GA_CAUSE_SET] = 6,
		[GA_CAUSE_ASYNC_COPY] = 5, [GA_CAUSE_ALLOC] = 4, [GA_CAUSE_MODULE] = 3,
		[GA_CAUSE_CONTEXT] = 2, [GA_CAUSE_SLOW] = 1,
	};

	return cause < GA_CAUSE_COUNT ? r[cause] : 0;
}

/*
 * The cause of the idle gap [g0, g1) of a device of processes pl[np]:
 * the call a process of the device was in when the device ran dry and
 * that returned before the device resumed, else the class of calls
 * covering at least half the gap, else none.  A call still running when
 * the device resumed did not keep it idle: the work that ended the gap
 * was queued before the call (or by another thread), and the gap is the
 * device's own spacing of queued work (1-2 µs between back-to-back
 * kernels) -- except a slow call, which may be a launch profiled by
 * kernel replay that ran the kernel itself.  *call: the call (NULL with
 * none).
 */
static unsigned attribute(const struct ga_findings *fd, const uint32_t *pl, size_t np,
			  uint64_t g0, uint64_t g1, const struct ga_fcall **call)
{
	uint64_t ov[GA_CAUSE_COUNT] = { 0 };
	const struct ga_fcall *ovcall[GA_CAUSE_COUNT] = { NULL };
	unsigned best = GA_CAUSE_NONE, u;
	uint64_t most = 0;

	*call = NULL;
	for (size_t pi = 0; pi < np; pi++) {
		const struct ga_fproc *pr;
		const struct ga_fcall *c;
		size_t a = 0, b, k, n;

		if (pl[pi] >= fd->nprocs)
			continue;
		pr = &fd->procs[pl[pi]];
		c = pr->c;
		b = pr->n;
		/* First call starting after g0. */
		while (a < b) {
			size_t mid = a + (b - a) / 2;

			if (c[mid].start <= g0)
				a = mid + 1;
			else
				b = mid;
		}
		for (k = a, n = 0; k > 0 && n < SCAN_MAX && pr->pmax[k - 1] >= g0; k--, n++) {
			const struct ga_fcall *e = &c[k - 1];

			if (e->end >= g0 && (e->end < g1 || e->cause == GA_CAUSE_SLOW) &&
			    rank_of(e->cause) > rank_of(best)) {
				best = e->cause;
				*call = e;
			}
		}
		for (k = a, n = 0; k < pr->n && n < SCAN_MAX && c[k].start < g1; k++, n++) {
			uint64_t e = c[k].end < g1 ? c[k].end : g1;

			ov[c[k].cause] += e - c[k].start;
			if (!ovcall[c[k].cause])
				ovcall[c[k].cause] = &c[k];
		}
	}
	if (best != GA_CAUSE_NONE)
		return best;
	for (u = 1; u < GA_CAUSE_COUNT; u++)
		if (ov[u] > most) {
			most = ov[u];
			best = u;
		}
	if (best != GA_CAUSE_NONE && most * 2 >= g1 - g0) {
		*call = ovcall[best];
		return best;
	}
	return GA_CAUSE_NONE;
}

static const struct ga_fcand *cand_at(const struct ga_findings *fd, uint32_t dev, uint64_t end)
{
	const struct ga_fdev *v = &fd->devs[dev];
	size_t a = 0, b = v->csorted;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (v->cands[mid].end < end)
			a = mid + 1;
		else
			b = mid;
	}
	return a < v->csorted && v->cands[a].end == end ? &v->cands[a] : NULL;
}

/* A number for a pair in map, first seen first.  0, or -1. */
static int number(struct ga_map *map, uint64_t a, uint64_t b, uint32_t *id)
{
	uint32_t *slot;
	int ins = ga_map_insert(map, a, b, &slot);

	if (ins < 0)
		return -1;
	if (ins)
		*slot = (uint32_t)map->n;
	*id = *slot;
	return 0;
}

/* Adds an idle gap of cause to the places of device dev, by stack ids. */
static int where_add(struct ga_findings *fd, uint32_t dev, unsigned cause, uint64_t g0,
		     uint64_t g1, const struct ga_fcall *fc)
{
	const struct ga_fcand *c = cand_at(fd, dev, g1);
	struct ga_fwraw r = { .dev = dev, .cause = cause, .call = fc ? fc->name : 0,
			      .stream = c ? c->stream : NONE, .proc = c ? c->proc_after : NONE };
	const uint32_t *v;
	uint32_t idb, ida, idc, *slot;
	int ins;

	/* The site of the call itself (copies and memsets recorded with --backtrace=all). */
	if (fc && fc->corr && (v = ga_map_find(&fd->cstack, fc->proc, fc->corr)) && *v) {
		r.call_proc = fc->proc;
		r.call_stack = *v;
	}
	if (c) {
		/* The activity before is known only when it ended where the gap begins. */
		if (c->start == g0) {
			r.proc_before = c->stack_before ? c->proc_before : 0;
			r.stack_before = c->stack_before;
			r.label_before = c->label_before;
		}
		r.proc_after = c->stack_after ? c->proc_after : 0;
		r.stack_after = c->stack_after;
		r.label_after = c->label_after;
		r.nvtx = c->nvtx;
	}
	if (number(&fd->sidemap, (uint64_t)r.proc_before << 32 | r.stack_before, r.label_before,
		   &idb) ||
	    number(&fd->sidemap, (uint64_t)r.proc_after << 32 | r.stack_after, r.label_after,
		   &ida) ||
	    number(&fd->callmap, (uint64_t)r.call << 32 | r.call_proc, r.call_stack, &idc))
		return -1;
	ins = ga_map_insert(&fd->wrmap, (uint64_t)cause << 56 | (uint64_t)dev << 32 | idc,
			    (uint64_t)idb << 32 | ida, &slot);
	if (ins < 0)
		return -1;
	if (ins) {
		if (ga_util_grow(&fd->wr, &fd->capwr, fd->nwr + 1, sizeof(*fd->wr)))
			return -1;
		fd->wr[fd->nwr] = r;
		*slot = (uint32_t)fd->nwr++;
	}
	fd->wr[*slot].ns += g1 - g0;
	fd->wr[*slot].count++;
	return 0;
}

static void close_run(struct ga_flbacc *lb, uint64_t *rn, uint64_t *rbusy, uint64_t *rgap)
{
	if (*rn >= GA_FIND_LB_RUN && (double)*rgap >= GA_FIND_LB_RATIO * (double)*rbusy) {
		uint64_t keep = (*rn - 1) * GA_FIND_GRAPH_GAP_NS;

		lb->runs++;
		lb->kernels += *rn;
		lb->busy += *rbusy;
		lb->gaps += *rgap;
		lb->stake += *rgap > keep ? *rgap - keep : 0;
	}
	*rn = *rbusy = *rgap = 0;
}

/* Scans the busy interval [s, e] of device d (processes pl[np]) and the gap before it. */
static int scan_iv(struct ga_findings *fd, uint32_t d, const uint32_t *pl, size_t np,
		   uint64_t s, uint64_t e)
{
	struct ga_fdev *v = &fd->devs[d];
	uint64_t len = e - s, gap = 0;
	unsigned cause = GA_CAUSE_NONE;

	/* A gap under GA_FIND_DRAIN_GAP_NS has no cause, whatever the calls: none looked for. */
	if (v->scanned && s > v->prev_end && s - v->prev_end < GA_FIND_DRAIN_GAP_NS) {
		gap = s - v->prev_end;
	} else if (v->scanned && s > v->prev_end) {
		const struct ga_fcall *call;

		gap = s - v->prev_end;
		cause = attribute(fd, pl, np, v->prev_end, s, &call);
		/*
		 * A slow call counts where host code would: gaps of 50 us or
		 * more; any other call from 5 us: a shorter gap is less than a
		 * host round trip (the call's return and a launch) takes.
		 */
		if ((cause == GA_CAUSE_SLOW && gap < GA_FIND_STARVE_GAP_NS) ||
		    gap < GA_FIND_DRAIN_GAP_NS)
			cause = GA_CAUSE_NONE;
		if (cause != GA_CAUSE_NONE || gap >= GA_FIND_STARVE_GAP_NS) {
			v->acc[cause].n++;
			v->acc[cause].ns += gap;
			if (gap > v->acc[cause].longest)
				v->acc[cause].longest = gap;
			if (where_add(fd, d, cause, v->prev_end, s, call))
				return -1;
		}
	}
	v->scanned = 1;
	v->prev_end = e;
	/*
	 * A run goes on over gaps of host code or slow calls (a launch that
	 * itself took long): when the host falls further behind, its kernels
	 * are no less launch-bound.  A synchronization, copy or allocation
	 * between them ends it.
	 */
	if (len <= GA_FIND_SHORT_KERNEL_NS && v->rn && gap < GA_FIND_LB_GAP_MAX_NS &&
	    (cause == GA_CAUSE_NONE || cause == GA_CAUSE_SLOW)) {
		v->rn++;
		v->rbusy += len;
		v->rgap += gap;
		return 0;
	}
	close_run(&v->lb, &v->rn, &v->rbusy, &v->rgap);
	if (len <= GA_FIND_SHORT_KERNEL_NS) {
		v->rn = 1;
		v->rbusy = len;
	}
	return 0;
}

/* The processes of device d (its device rows', first seen first) into fd->plist. */
static size_t dev_procs(struct ga_findings *fd, uint32_t d)
{
	const struct ga_model *m = fd->m;
	size_t np = 0;

	for (size_t i = 0; i < m->ndevrows; i++) {
		uint32_t p = m->devrows[i].proc;
		size_t j;

		if (m->devrows[i].dev != d)
			continue;
		for (j = 0; j < np && fd->plist[j] != p; j++)
			;
		if (j == np)
			fd->plist[np++] = p;
	}
	return np;
}

/* Sorts a process's calls by start (new ones came at the end) and sets their running latest end. */
static int calls_sort(struct ga_fproc *pr)
{
	size_t from = pr->sorted;

	if (from == pr->n)
		return 0;
	if (ga_util_grow(&pr->pmax, &pr->cappmax, pr->n, sizeof(*pr->pmax)))
		return -1;
	/* Calls of one thread come in order: sorted already, most times. */
	for (size_t i = from + 1; i < pr->n; i++)
		if (cmp_call(&pr->c[i - 1], &pr->c[i]) > 0) {
			qsort(pr->c + from, pr->n - from, sizeof(*pr->c), cmp_call);
			break;
		}
	if (from && cmp_call(&pr->c[from - 1], &pr->c[from]) > 0) {
		qsort(pr->c, pr->n, sizeof(*pr->c), cmp_call);
		from = 0;
	}
	for (size_t i = from; i < pr->n; i++)
		pr->pmax[i] = i && pr->pmax[i - 1] > pr->c[i].end ? pr->pmax[i - 1] : pr->c[i].end;
	pr->sorted = pr->n;
	return 0;
}

/* Drops the calls of pr that no gap starting at or after g can read (see "Streaming"). */
static void calls_drop(struct ga_findings *fd, struct ga_fproc *pr, uint64_t g)
{
	size_t j = 0, a = 0, b = pr->n;

	while (j < pr->n && pr->pmax[j] < g)
		j++;
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (pr->c[mid].start <= g)
			a = mid + 1;
		else
			b = mid;
	}
	if (a > SCAN_MAX && a - SCAN_MAX > j)
		j = a - SCAN_MAX;
	if (!j)
		return;
	pr->dropped_to = pr->c[j - 1].start;
	memmove(pr->c, pr->c + j, (pr->n - j) * sizeof(*pr->c));
	pr->n -= j;
	pr->sorted = pr->n;
	for (size_t i = 0; i < pr->n; i++)
		pr->pmax[i] = i && pr->pmax[i - 1] > pr->c[i].end ? pr->pmax[i - 1] : pr->c[i].end;
	fd->ncalls -= j;
}

/* 1 when process p's API calls are traced (its gaps wait for them). */
static int traces_api(const struct ga_model *m, uint32_t p)
{
	return p < m->nprocs && (!m->procs[p].has_config || (m->procs[p].config.trace & GP_TRACE_API));
}

static int step_due(const struct ga_findings *fd)
{
	return fd->npend >= fd->step_pend || fd->ncalls >= fd->step_calls ||
	       fd->ncands >= fd->step_cands || fd->ncs >= fd->step_cs;
}

static size_t twice(size_t n, size_t floor)
{
	return n * 2 > floor ? n * 2 : floor;
}

/* Sorts the candidates of v by end (new ones came at the end, mostly in order). */
static void cands_sort(struct ga_fdev *v)
{
	size_t from = v->csorted;

	if (from == v->ncands)
		return;
	qsort(v->cands + from, v->ncands - from, sizeof(*v->cands), cmp_cand);
	if (from && cmp_cand(&v->cands[from - 1], &v->cands[from]) > 0)
		qsort(v->cands, v->ncands, sizeof(*v->cands), cmp_cand);
	v->csorted = v->ncands;
}

/*
 * Scans the retired intervals whose gaps' host calls have been read (all:
 * every one waiting).  0, or -1.
 */
static int scan(struct ga_findings *fd, int all)
{
	struct ga_model *m = fd->m;

	if (fd->nprocs < m->nprocs) {
		size_t old = fd->nprocs;

		if (ga_util_grow(&fd->procs, &fd->capprocs, m->nprocs, sizeof(*fd->procs)))
			return -1;
		memset(fd->procs + old, 0, (m->nprocs - old) * sizeof(*fd->procs));
		fd->nprocs = m->nprocs;
	}
	if (ga_util_grow(&fd->plist, &fd->capplist, m->nprocs + 1, sizeof(*fd->plist)))
		return -1;
	for (uint32_t d = 0; d < fd->ndevs && d < m->ndevs; d++) {
		struct ga_fdev *v = &fd->devs[d];
		size_t np, i, end;
		uint64_t hw = UINT64_MAX;

		if (v->pend0 == v->npend || m->devs[d].dead)
			continue;
		np = dev_procs(fd, d);
		for (i = 0; !all && i < np; i++) {
			uint64_t hi = fd->procs[fd->plist[i]].api_hi;

			hi = hi < GA_FIND_HOST_LAG_NS ? 0 : hi - GA_FIND_HOST_LAG_NS;
			if (traces_api(m, fd->plist[i]) && hi < hw)
				hw = hi;
		}
		/* Nothing to scan yet: sorting can wait. */
		if (!all && v->pend[v->pend0].start > hw && v->npend - v->pend0 <= GA_FIND_PEND_MAX)
			continue;
		for (i = 0; i < np; i++)
			if (fd->plist[i] < fd->nprocs && calls_sort(&fd->procs[fd->plist[i]]))
				return -1;
		cands_sort(v);
		/* Up to the first past hw (in start order); too many waiting: down to half. */
		end = v->npend;
		if (!all && hw != UINT64_MAX) {
			size_t a = v->pend0, b = v->npend;

			while (a < b) {
				size_t mid = a + (b - a) / 2;

				if (v->pend[mid].start <= hw)
					a = mid + 1;
				else
					b = mid;
			}
			end = a;
			if (v->npend - v->pend0 > GA_FIND_PEND_MAX && v->npend - end > GA_FIND_PEND_MAX / 2)
				end = v->npend - GA_FIND_PEND_MAX / 2;
		}
		for (i = v->pend0; i < end; i++)
			if (scan_iv(fd, d, fd->plist, np, v->pend[i].start, v->pend[i].end))
				return -1;
		fd->npend -= i - v->pend0;
		v->pend0 = i;
		if (v->pend0 == v->npend)
			v->pend0 = v->npend = 0;
	}
	fd->step_pend = twice(fd->npend, STEP_PEND);
	return 0;
}

/* Drops the host calls, candidates and copy stacks no later gap can use (see "Streaming"). */
static int prune(struct ga_findings *fd)
{
	struct ga_model *m = fd->m;
	uint64_t gall = UINT64_MAX;
	size_t k;

	/* The earliest start of a later gap: per process, on its devices; else on any. */
	for (uint32_t d = 0; d < fd->ndevs && d < m->ndevs; d++)
		if (!m->devs[d].dead && (fd->devs[d].scanned ? fd->devs[d].prev_end : 0) < gall)
			gall = fd->devs[d].scanned ? fd->devs[d].prev_end : 0;
	for (size_t p = 0; p < fd->nprocs; p++) {
		uint64_t g = UINT64_MAX;
		int on = 0;

		if (!fd->procs[p].n)
			continue;
		for (size_t i = 0; i < m->ndevrows; i++) {
			uint32_t d = m->devrows[i].dev;
			uint64_t e;

			if (m->devrows[i].proc != p || d >= m->ndevs || m->devs[d].dead)
				continue;
			on = 1;
			e = d < fd->ndevs && fd->devs[d].scanned ? fd->devs[d].prev_end : 0;
			if (e < g)
				g = e;
		}
		if (!on)
			g = gall == UINT64_MAX ? 0 : gall;
		if (g) {
			if (calls_sort(&fd->procs[p]))
				return -1;
			calls_drop(fd, &fd->procs[p], g);
		}
	}
	for (uint32_t d = 0; d < fd->ndevs; d++) {
		struct ga_fdev *v = &fd->devs[d];
		size_t j = 0;

		if (!v->scanned || !v->ncands)
			continue;
		cands_sort(v);
		while (j < v->ncands && v->cands[j].end <= v->prev_end)
			j++;
		memmove(v->cands, v->cands + j, (v->ncands - j) * sizeof(*v->cands));
		v->ncands -= j;
		v->csorted = v->ncands;
		fd->ncands -= j;
	}
	k = 0;
	for (size_t i = 0; i < fd->ncs; i++) {
		const struct ga_fcs *e = &fd->cs[i];

		if (e->proc < fd->nprocs && e->ts < fd->procs[e->proc].dropped_to) {
			ga_map_remove(&fd->cstack, e->proc, e->corr);
			continue;
		}
		fd->cs[k++] = *e;
	}
	fd->ncs = k;
	fd->step_calls = twice(fd->ncalls, STEP_KEPT);
	fd->step_cands = twice(fd->ncands, STEP_KEPT);
	fd->step_cs = twice(fd->ncs, STEP_KEPT);
	return 0;
}

/* Scans what can be and, where the kept tables doubled, drops what is no longer needed. */
static int step(struct ga_findings *fd, int all)
{
	if (scan(fd, all))
		return -1;
	if (all || (fd->ncalls < fd->step_calls && fd->ncands < fd->step_cands &&
		    fd->ncs < fd->step_cs))
		return 0;
	return prune(fd);
}

/* ---- finish: places by text ---- */

#define wagg ga_fplace

struct fin {
	struct ga_findings *fd;
	const struct ga_findings_in *in;
	struct ga_model *m;
	struct wagg *w;
	size_t nw, capw;
	struct ga_map wmap;
	struct ga_map cmap;        /* (call name, call site) -> number for wmap's key */
};

/* The site text of (proc, stack), else 0. */
static uint32_t site_text(struct fin *x, uint32_t proc, uint32_t stack)
{
	if (!stack || !x->in->observe_sites)
		return 0;
	return ga_sites_stack_text(x->in->st, x->m, proc, stack);
}

/* Adds the place r (by stack ids) to the places by text. */
static int where_text(struct fin *x, const struct ga_fwraw *r)
{
	uint32_t sc = site_text(x, r->call_proc, r->call_stack), sb = 0, sa = 0, *slot, *cslot;
	struct wagg *w;
	int ins;

	sb = site_text(x, r->proc_before, r->stack_before);
	sa = site_text(x, r->proc_after, r->stack_after);
	/* The call and its site as one number, to key the places by both. */
	if ((ins = ga_map_insert(&x->cmap, r->call, sc, &cslot)) < 0)
		return -1;
	if (ins)
		*cslot = (uint32_t)x->cmap.n;
	ins = ga_map_insert(&x->wmap, (uint64_t)r->cause << 56 | (uint64_t)r->dev << 32 | *cslot,
			    (uint64_t)(sb ? sb : r->label_before) << 32 |
			    (sa ? sa : r->label_after), &slot);
	if (ins < 0)
		return -1;
	if (ins) {
		if (ga_util_grow(&x->w, &x->capw, x->nw + 1, sizeof(*x->w)))
			return -1;
		w = &x->w[x->nw];
		memset(w, 0, sizeof(*w));
		w->dev = r->dev;
		w->cause = r->cause;
		w->w.site_before = sb;
		w->w.site_after = sa;
		w->w.label_before = r->label_before;
		w->w.label_after = r->label_after;
		w->w.call = r->call;
		w->w.site_call = sc;
		w->w.nvtx = r->nvtx;
		w->w.stream = r->stream;
		w->w.proc = r->proc;
		*slot = (uint32_t)x->nw++;
	}
	w = &x->w[*slot];
	w->w.ns += r->ns;
	w->w.count += r->count;
	return 0;
}

/*
 * The rest of every device's gaps (its busy intervals not retired, after
 * those waiting), then the places by text, device by device.  0, or -1.
 */
static int scan_finish(struct fin *x)
{
	struct ga_findings *fd = x->fd;
	struct ga_model *m = x->m;

	if (devs_grow(fd, m->ndevs) || step(fd, 1))
		return -1;
	/* What the busy unions did not retire follows what they did, read in place. */
	for (uint32_t d = 0; d < m->ndevs; d++) {
		const struct ga_busy *b = &m->devs[d].busy;
		size_t np;

		if (m->devs[d].dead || !b->niv)
			continue;
		np = dev_procs(fd, d);
		for (size_t i = 0; i < np; i++)
			if (fd->plist[i] < fd->nprocs && calls_sort(&fd->procs[fd->plist[i]]))
				return -1;
		cands_sort(&fd->devs[d]);
		for (size_t i = 0; i < b->niv; i++)
			if (scan_iv(fd, d, fd->plist, np, b->iv[i].start, b->iv[i].end))
				return -1;
	}
	for (uint32_t d = 0; d < m->ndevs; d++) {
		struct ga_fdev *v = &fd->devs[d];

		if (m->devs[d].dead) {
			/* Merged into another device: its gaps, if any were scanned, are not one's. */
			memset(v->acc, 0, sizeof(v->acc));
			memset(&v->lb, 0, sizeof(v->lb));
			continue;
		}
		close_run(&v->lb, &v->rn, &v->rbusy, &v->rgap);
		for (size_t i = 0; i < fd->nwr; i++)
			if (fd->wr[i].dev == d && where_text(x, &fd->wr[i]))
				return -1;
	}
	return 0;
}

/* ---- finish: the rules ---- */

static struct ga_finding *add(struct ga_findings *fd, unsigned rule, uint64_t stake,
			      const char *subject)
{
	struct ga_finding *f;

	if (ga_util_grow(&fd->f, &fd->capf, fd->nf + 1, sizeof(*fd->f)))
		return NULL;
	f = &fd->f[fd->nf++];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->stake_ns = stake;
	snprintf(f->subject, sizeof(f->subject), "%s", subject);
	return f;
}

static void ev(struct ga_finding *f, const char *name, double v, char unit)
{
	/*
	 * Times are printed as 64-bit nanoseconds: a sum saturated at
	 * UINT64_MAX (merged summaries, a crafted trace) rounds to 2^64 as a
	 * double, which does not convert back; keep the largest that does.
	 */
	if (unit == 'n' && !(v < 0x1p64))
		v = 0x1p64 - 0x1p11;
	if (f->nev < GA_FIND_EVIDENCE)
		f->ev[f->nev++] = (struct ga_evidence){ name, v, unit };
}

static int cmp_wagg(const void *pa, const void *pb)
{
	const struct wagg *a = pa, *b = pb;

	if (a->w.ns != b->w.ns)
		return a->w.ns > b->w.ns ? -1 : 1;
	if (a->w.count != b->w.count)
		return a->w.count > b->w.count ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->w.site_after != b->w.site_after)
		return a->w.site_after < b->w.site_after ? -1 : 1;
	return a->w.label_after < b->w.label_after ? -1 : a->w.label_after > b->w.label_after;
}

/* The places (sorted, most time first) of device dev (NONE: all) and causes in mask. */
static void places(struct fin *x, struct ga_finding *f, uint32_t dev, unsigned mask)
{
	for (size_t i = 0; i < x->nw && f->nwhere < GA_FIND_WHERE; i++) {
		const struct wagg *w = &x->w[i];

		if ((dev == NONE || w->dev == dev) && (mask >> w->cause & 1))
			f->where[f->nwhere++] = w->w;
	}
}

/* The activity label ("kernel foo") of the kernel of mangled name strtab id name. */
static uint32_t kernel_label(const struct ga_model *m, uint32_t name)
{
	uint32_t k;

	if (name >= m->capstr2k || !(k = m->str2k[name]) || m->kstats[k - 1].label >= m->nlabels)
		return name;
	return m->labels[m->kstats[k - 1].label].str;
}

/*
 * The text of the launch site of most time of the kernel of strtab id name,
 * else 0: from a summary's table of them when it has one.
 */
static uint32_t heaviest_site(const struct fin *x, uint32_t name)
{
	const struct ga_sites *st = x->in->st;
	uint32_t site = 0;

	if (x->fd->have_ks) {
		uint64_t most = 0;

		for (size_t i = 0; i < x->fd->nks; i++)
			if (x->fd->ks[i].name == name && x->fd->ks[i].ns > most) {
				most = x->fd->ks[i].ns;
				site = x->fd->ks[i].site;
			}
		return site;
	}
	for (size_t s = 0, most = 0; s < st->nskern; s++)
		if (st->skern[s].name == name && st->skern[s].ns > most) {
			most = st->skern[s].ns;
			site = st->sites[st->skern[s].site].str;
		}
	return site;
}

/*
 * f's one place: kernel name (strtab id), of count launches and ns of
 * kernel time, at its heaviest launch site.
 */
static void where_kernel(struct ga_finding *f, struct fin *x, uint32_t name, uint64_t ns,
			 uint64_t count)
{
	const struct ga_model *m = x->m;

	memset(&f->where[0], 0, sizeof(f->where[0]));
	f->where[0].label_after = kernel_label(m, name);
	f->where[0].site_after = heaviest_site(x, name);
	f->where[0].stream = f->where[0].proc = NONE;
	f->where[0].ns = ns;
	f->where[0].count = count;
	f->nwhere = 1;
}

/*
 * The device's label: the device summary's ("cuda:0", "cuda:0 [rank 1]")
 * when one process used it, else "cuda:N" (its busy time is all of theirs).
 */
static const char *dev_label(const struct ga_model *m, uint32_t d, char *buf, size_t n)
{
	const char *one = NULL;

	for (size_t i = 0; i < m->ndevrows; i++) {
		if (m->devrows[i].dev != d)
			continue;
		if (one) {
			snprintf(buf, n, "cuda:%u", m->devs[d].id);
			return buf;
		}
		one = ga_model_str(m, m->devrows[i].label);
	}
	return one ? one : "device";
}

/* Streams of device d that never overlap (rule 5). */
static int serial_rule(struct fin *x, uint32_t d, const char *dl)
{
	const struct ga_fdev *fv = &x->fd->devs[d];
	uint64_t busy = x->m->devs[d].busy_ns, top = 0, big = 0;
	uint32_t heavy = 0, legacy = NONE, used;
	struct ga_finding *f;
	char b1[32], b2[32], b3[32];

	if (!fv->sum || fv->nstreams < 2 || fv->sum < busy)
		return 0;
	/* Processes never share a GPU at once without MPS: one process's streams only. */
	for (uint32_t i = 1; i < fv->nstreams; i++)
		if (fv->stream[i].key >> 32 != fv->stream[0].key >> 32)
			return 0;
	for (uint32_t i = 0; i < fv->nstreams; i++) {
		if (100.0 * (double)fv->stream[i].ns >= GA_FIND_STREAM_SHARE * (double)fv->sum)
			heavy++;
		if (fv->stream[i].ns > top)
			top = fv->stream[i].ns;
	}
	if (heavy < 2 || 100.0 * (double)(fv->sum - busy) >= GA_FIND_OVERLAP_PCT * (double)fv->sum)
		return 0;
	big = busy > top ? busy - top : 0;
	/* The legacy default stream: work there waits for every blocking stream's. */
	for (uint32_t i = 0; i < fv->nstreams && legacy == NONE; i++)
		for (size_t j = 0; j < x->fd->nnulls; j++)
			if (x->fd->nulls[j].proc == (uint32_t)(fv->stream[i].key >> 32) &&
			    x->fd->nulls[j].stream == (uint32_t)fv->stream[i].key)
				legacy = i;
	if (!(f = add(x->fd, GA_RULE_SERIAL_STREAMS, big, dl)))
		return -1;
	if (legacy != NONE)
		snprintf(f->summary, sizeof(f->summary),
			 "%s: %u streams with 10%%+ of its %s of work each overlap for %s only; "
			 "%" PRIu64 " launches (%s) on the legacy default stream wait for the others",
			 dl, heavy, ga_fmt_time(b1, sizeof(b1), fv->sum),
			 ga_fmt_time(b2, sizeof(b2), fv->sum - busy), fv->stream[legacy].count,
			 ga_fmt_time(b3, sizeof(b3), fv->stream[legacy].ns));
	else
		snprintf(f->summary, sizeof(f->summary),
			 "%s: %u streams with 10%%+ of its %s of work each overlap for %s only", dl,
			 heavy, ga_fmt_time(b1, sizeof(b1), fv->sum),
			 ga_fmt_time(b2, sizeof(b2), fv->sum - busy));
	ev(f, "streams", (double)fv->nstreams + (fv->other_ns ? 1 : 0), 'c');
	ev(f, "heavy_streams", (double)heavy, 'c');
	ev(f, "work_ns", (double)fv->sum, 'n');
	ev(f, "busiest_stream_ns", (double)top, 'n');
	ev(f, "overlap_ns", (double)(fv->sum - busy), 'n');
	if (legacy != NONE) {
		ev(f, "legacy_default_stream_ns", (double)fv->stream[legacy].ns, 'n');
		ev(f, "legacy_default_stream_launches", (double)fv->stream[legacy].count, 'c');
	}
	/* Places: the legacy default stream first, then the other streams by work. */
	used = 0;
	while (f->nwhere < GA_FIND_WHERE) {
		int first = legacy != NONE && !(used >> legacy & 1);
		uint32_t best = first ? legacy : NONE;
		struct ga_where *w;

		for (uint32_t i = 0; !first && i < fv->nstreams; i++)
			if (!(used >> i & 1) && (best == NONE || fv->stream[i].ns > fv->stream[best].ns))
				best = i;
		if (best == NONE)
			break;
		used |= 1u << best;
		w = &f->where[f->nwhere++];
		memset(w, 0, sizeof(*w));
		w->proc = (uint32_t)(fv->stream[best].key >> 32);
		w->stream = (uint32_t)fv->stream[best].key;
		w->site_after = fv->stream[best].site ? fv->stream[best].site :
				site_text(x, w->proc, fv->stream[best].stack);
		w->ns = fv->stream[best].ns;
		w->count = fv->stream[best].count;
	}
	return 0;
}

/*
 * An idle-time finding is one when its time at stake is 100 µs or more and
 * 1% or more of the device's span (its first activity's start to its last
 * one's end): less is the pipeline filling at a loop's start or a stray
 * gap, which no fix would measurably save.
 */
/* The metrics' cost (replay time) and skipped launches: a summary's, else the mx's. */
static uint64_t mx_cost(const struct fin *x)
{
	return x->fd->have_mx ? x->fd->mx_cost_ns : x->in->mx->cost_ns;
}

static uint64_t mx_skipped(const struct fin *x)
{
	const struct ga_mx *mx = x->in->mx;

	if (x->fd->have_mx)
		return x->fd->mx_skipped;
	return mx->skipped_capture + mx->skipped_graph + mx->failed + mx->skipped_other;
}

static int worth(uint64_t stake, uint64_t span)
{
	return stake >= GA_FIND_MIN_STAKE_NS &&
	       100.0 * (double)stake >= GA_FIND_EMIT_PCT * (double)span;
}

static int gap_rules(struct fin *x)
{
	struct ga_findings *fd = x->fd;
	struct ga_model *m = x->m;
	char b1[32], b2[32];

	for (uint32_t d = 0; d < m->ndevs; d++) {
		const struct ga_fcacc *acc = fd->devs[d].acc;
		const struct ga_flbacc *lb = &fd->devs[d].lb;
		uint64_t first, last, span = ga_busy_span(&m->devs[d].busy, &first, &last) ?
					     last - first : 0;
		char dlb[32];
		const char *dl = dev_label(m, d, dlb, sizeof(dlb));
		struct ga_finding *f;
		struct ga_fcacc cp;

		struct ga_fcacc st = acc[GA_CAUSE_NONE];
		unsigned smask = 1u << GA_CAUSE_NONE;

		if (m->devs[d].dead)
			continue;
		/* Slow calls hold the host as host code does, unless metrics replay made them. */
		if (!mx_cost(x)) {
			st.n += acc[GA_CAUSE_SLOW].n;
			st.ns += acc[GA_CAUSE_SLOW].ns;
			if (acc[GA_CAUSE_SLOW].longest > st.longest)
				st.longest = acc[GA_CAUSE_SLOW].longest;
			smask |= 1u << GA_CAUSE_SLOW;
		}
		if (st.n && worth(st.ns, span)) {
			if (!(f = add(fd, GA_RULE_STARVATION, st.ns, dl)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%s idles %s in %" PRIu64 " gap%s of %s or more while the host runs "
				 "no CUDA call (Python, data loading, CPU work)", dl,
				 ga_fmt_time(b1, sizeof(b1), st.ns), st.n, st.n == 1 ? "" : "s", ga_fmt_time(b2, sizeof(b2), GA_FIND_STARVE_GAP_NS));
			ev(f, "gaps", (double)st.n, 'c');
			ev(f, "idle_ns", (double)st.ns, 'n');
			ev(f, "longest_ns", (double)st.longest, 'n');
			ev(f, "device_span_ns", (double)span, 'n');
			ev(f, "device_busy_ns", (double)m->devs[d].busy_ns, 'n');
			places(x, f, d, smask);
		}
		/*
		 * What graphs or fusion save is the host's launch calls (the host
		 * code between them stays), and at most the idle time a graph's
		 * node spacing leaves: the smaller.  The mean launch call of the
		 * device's short kernels stands for the runs' (a graph's kernels
		 * count none; without traced launch calls, the gaps alone).
		 */
		uint64_t lstake = lb->stake, lmean = 0;
		const struct ga_fdev *fv = d < fd->ndevs ? &fd->devs[d] : NULL;
		int known = fv && (fv->lk_n || (fv->lk_graph && !fv->lk_short));

		if (known) {
			double host = 0;

			if (fv->lk_n) {
				lmean = fv->lk_ns / fv->lk_n;
				host = (double)fv->lk_ns / (double)fv->lk_n * (double)fv->lk_short /
				       (double)(fv->lk_short + fv->lk_graph);
			}
			host *= (double)lb->kernels;
			if (host < (double)lstake)
				lstake = (uint64_t)host;
		}
		if (lb->runs && worth(lstake, span)) {
			if (!(f = add(fd, GA_RULE_LAUNCH_BOUND, lstake, dl)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%s: %" PRIu64 " run%s of %" PRIu64 " short kernels spend%s %s between "
				 "kernels against %s in them", dl, lb->runs, lb->runs == 1 ? "" : "s",
				 lb->kernels, lb->runs == 1 ? "s" : "",
				 ga_fmt_time(b1, sizeof(b1), lb->gaps), ga_fmt_time(b2, sizeof(b2), lb->busy));
			ev(f, "runs", (double)lb->runs, 'c');
			ev(f, "kernels", (double)lb->kernels, 'c');
			ev(f, "kernel_ns", (double)lb->busy, 'n');
			ev(f, "gap_ns", (double)lb->gaps, 'n');
			ev(f, "gap_per_kernel_ns", lb->kernels ? (double)lb->gaps / (double)lb->kernels : 0, 'n');
			ev(f, "gap_bound_ns", (double)lb->stake, 'n');
			if (known)
				ev(f, "launch_call_ns", (double)lmean, 'n');
		}
		if (d < fd->ndevs && serial_rule(x, d, dl))
			return -1;
		if (acc[GA_CAUSE_SYNC].n >= GA_FIND_REPEAT && worth(acc[GA_CAUSE_SYNC].ns, span)) {
			if (!(f = add(fd, GA_RULE_HOST_SYNC, acc[GA_CAUSE_SYNC].ns, dl)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%s idles %s in %" PRIu64 " gaps that begin while the host waits in "
				 "a synchronizing call", dl, ga_fmt_time(b1, sizeof(b1), acc[GA_CAUSE_SYNC].ns),
				 acc[GA_CAUSE_SYNC].n);
			ev(f, "gaps", (double)acc[GA_CAUSE_SYNC].n, 'c');
			ev(f, "idle_ns", (double)acc[GA_CAUSE_SYNC].ns, 'n');
			ev(f, "longest_ns", (double)acc[GA_CAUSE_SYNC].longest, 'n');
			ev(f, "sync_calls", (double)fd->api_calls[GA_CAUSE_SYNC], 'c');
			ev(f, "sync_call_ns", (double)fd->api_ns[GA_CAUSE_SYNC], 'n');
			places(x, f, d, 1u << GA_CAUSE_SYNC);
		}
		cp.n = acc[GA_CAUSE_COPY].n + acc[GA_CAUSE_SET].n;
		cp.ns = acc[GA_CAUSE_COPY].ns + acc[GA_CAUSE_SET].ns;
		cp.longest = acc[GA_CAUSE_COPY].longest > acc[GA_CAUSE_SET].longest ?
			acc[GA_CAUSE_COPY].longest : acc[GA_CAUSE_SET].longest;
		if (cp.n >= GA_FIND_REPEAT && worth(cp.ns, span)) {
			if (!(f = add(fd, GA_RULE_SYNC_COPY, cp.ns, dl)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%s idles %s in %" PRIu64 " gaps that begin while the host waits in "
				 "a synchronous copy or memset", dl, ga_fmt_time(b1, sizeof(b1), cp.ns), cp.n);
			ev(f, "gaps", (double)cp.n, 'c');
			ev(f, "idle_ns", (double)cp.ns, 'n');
			ev(f, "longest_ns", (double)cp.longest, 'n');
			ev(f, "sync_copy_calls", (double)fd->api_calls[GA_CAUSE_COPY], 'c');
			ev(f, "sync_memset_calls", (double)fd->api_calls[GA_CAUSE_SET], 'c');
			places(x, f, d, 1u << GA_CAUSE_COPY | 1u << GA_CAUSE_SET);
		}
		if (acc[GA_CAUSE_ALLOC].n >= GA_FIND_REPEAT && worth(acc[GA_CAUSE_ALLOC].ns, span)) {
			if (!(f = add(fd, GA_RULE_ALLOC_CHURN, acc[GA_CAUSE_ALLOC].ns, dl)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%s idles %s in %" PRIu64 " gap%s held by allocation or free calls",
				 dl, ga_fmt_time(b1, sizeof(b1), acc[GA_CAUSE_ALLOC].ns), acc[GA_CAUSE_ALLOC].n,
				 acc[GA_CAUSE_ALLOC].n == 1 ? "" : "s");
			ev(f, "gaps", (double)acc[GA_CAUSE_ALLOC].n, 'c');
			ev(f, "idle_ns", (double)acc[GA_CAUSE_ALLOC].ns, 'n');
			ev(f, "alloc_free_calls", (double)fd->api_calls[GA_CAUSE_ALLOC], 'c');
			ev(f, "alloc_free_call_ns", (double)fd->api_ns[GA_CAUSE_ALLOC], 'n');
			places(x, f, d, 1u << GA_CAUSE_ALLOC);
		}
	}
	return 0;
}

/* Rules of copies over the whole run: pageable memory, tiny copies, staged peers. */
static int copy_rules(struct fin *x)
{
	struct ga_findings *fd = x->fd;
	struct ga_model *m = x->m;
	uint64_t pg = 0, pg_bytes = 0, pg_ns = 0, stake = 0, gaps = 0;
	char kb[16], name[48], b1[32];
	struct ga_finding *f;

	for (size_t k = 0; k < GA_COPY_KIND_MAX; k++) {
		const struct ga_fcopy *c = &fd->copy[k];

		pg += c->pageable;
		pg_bytes += c->pageable_bytes;
		pg_ns += c->pageable_ns;
		if (c->tiny >= GA_FIND_TINY_COUNT) {
			uint64_t batches = (c->tiny_bytes + GA_FIND_BATCH_BYTES - 1) / GA_FIND_BATCH_BYTES;
			/*
			 * A copy's fixed cost: the shortest copy's time (latency, not
			 * bytes) plus the mean gap to the tiny copy before it (the host's
			 * call, the engine's turnaround; 0 for copies far apart).  In a
			 * loop of copies that is what each costs, whichever side bounds it.
			 */
			uint64_t fixed = c->tiny_min + c->tiny_gap_ns / c->tiny;
			uint64_t st = batches < c->tiny ? (c->tiny - batches) * fixed : 0;

			const char *kind = ga_model_copy_kind((unsigned)k, kb, sizeof(kb));

			snprintf(name, sizeof(name), "memcpy %s", kind);
			if (!(f = add(fd, GA_RULE_TINY_COPIES, st, name)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%" PRIu64 " %s copies below 64 KiB take %s, %s each at least", c->tiny,
				 kind, ga_fmt_time(b1, sizeof(b1), c->tiny_ns),
				 ga_fmt_time(name, sizeof(name), c->tiny_min));
			ev(f, "copies", (double)c->tiny, 'c');
			ev(f, "bytes", (double)c->tiny_bytes, 'b');
			ev(f, "copy_ns", (double)c->tiny_ns, 'n');
			ev(f, "shortest_ns", (double)c->tiny_min, 'n');
			ev(f, "gap_ns", (double)c->tiny_gap_ns, 'n');
		}
	}
	for (uint32_t d = 0; d < m->ndevs; d++) {
		stake += x->fd->devs[d].acc[GA_CAUSE_ASYNC_COPY].ns;
		gaps += x->fd->devs[d].acc[GA_CAUSE_ASYNC_COPY].n;
	}
	if (pg >= GA_FIND_REPEAT) {
		if (!(f = add(fd, GA_RULE_PAGEABLE_COPY, stake, "host memory")))
			return -1;
		snprintf(f->summary, sizeof(f->summary),
			 "%" PRIu64 " asynchronous copies from or to pageable memory (%s); the "
			 "device idles %s in %" PRIu64 " gaps while the host is blocked in them",
			 pg, ga_fmt_bytes(name, sizeof(name), (double)pg_bytes),
			 ga_fmt_time(b1, sizeof(b1), stake), gaps);
		ev(f, "copies", (double)pg, 'c');
		ev(f, "bytes", (double)pg_bytes, 'b');
		ev(f, "copy_ns", (double)pg_ns, 'n');
		ev(f, "gaps", (double)gaps, 'c');
		ev(f, "idle_ns", (double)stake, 'n');
		places(x, f, NONE, 1u << GA_CAUSE_ASYNC_COPY);
	}
	if (m->copy[GA_COPY_STAGED_PEER].count) {
		const struct ga_memstat *s = &m->copy[GA_COPY_STAGED_PEER];

		if (!(f = add(fd, GA_RULE_STAGED_PEER, s->total / 2, "peer copies")))
			return -1;
		snprintf(f->summary, sizeof(f->summary),
			 "%" PRIu64 " copies between devices go through host memory (%s in %s)",
			 s->count, ga_fmt_bytes(name, sizeof(name), (double)s->bytes),
			 ga_fmt_time(b1, sizeof(b1), s->total));
		ev(f, "copies", (double)s->count, 'c');
		ev(f, "bytes", (double)s->bytes, 'b');
		ev(f, "copy_ns", (double)s->total, 'n');
	}
	return 0;
}

static int startup_rule(struct fin *x)
{
	struct ga_findings *fd = x->fd;
	uint64_t mod = fd->api_ns[GA_CAUSE_MODULE];
	char b1[32], b2[32];
	struct ga_finding *f;

	if (mod < GA_FIND_STARTUP_NS)
		return 0;
	if (!(f = add(fd, GA_RULE_STARTUP, mod, "start-up")))
		return -1;
	snprintf(f->summary, sizeof(f->summary),
		 "%" PRIu64 " module loading and linking calls take %s; context creation %s",
		 fd->api_calls[GA_CAUSE_MODULE], ga_fmt_time(b1, sizeof(b1), mod),
		 ga_fmt_time(b2, sizeof(b2), fd->api_ns[GA_CAUSE_CONTEXT]));
	ev(f, "module_calls", (double)fd->api_calls[GA_CAUSE_MODULE], 'c');
	ev(f, "module_ns", (double)mod, 'n');
	ev(f, "context_calls", (double)fd->api_calls[GA_CAUSE_CONTEXT], 'c');
	ev(f, "context_ns", (double)fd->api_ns[GA_CAUSE_CONTEXT], 'n');
	places(x, f, NONE, 1u << GA_CAUSE_MODULE | 1u << GA_CAUSE_CONTEXT);
	return 0;
}

/*
 * What lifting configuration c's limit (registers or shared memory per
 * block) would save: its blocks run in rounds of SMs x resident blocks,
 * *now of them as launched and *then with the limit lifted (the next limit
 * binds: *occ and *alt resident blocks), and a block takes as long either
 * way (a latency-bound kernel), so its time scales with the rounds.  An
 * upper bound: blocks bound by memory bandwidth or a pipe slow down as more
 * share an SM.  0 when the rounds stay, or the limits are unknown.
 */
static uint64_t occ_stake(const struct ga_lcfg *c, const struct ga_device *dv, uint64_t blocks,
			  double *now, double *then, double *occ, uint32_t *alt)
{
	uint64_t threads = (uint64_t)c->block[0] * c->block[1] * c->block[2];
	struct ga_sm_limits lim;
	uint32_t limit;

	if (!blocks || !dv->sm_count || !c->active_blocks || threads > UINT32_MAX ||
	    ga_sm_limits(dv, &lim) < 0)
		return 0;
	*occ = ga_occupancy(&lim, (uint32_t)threads, c->limit == GA_OCC_REGISTERS ? 0 : c->regs,
			    c->limit == GA_OCC_SHARED ? 0 : c->static_smem + c->dynamic_smem,
			    alt, &limit);
	if (*alt <= c->active_blocks)
		return 0;
	*now = ceil((double)blocks / ((double)dv->sm_count * c->active_blocks));
	*then = ceil((double)blocks / ((double)dv->sm_count * *alt));
	return *then < *now ? (uint64_t)((double)c->total * (1 - *then / *now)) : 0;
}

/*
 * The share of its roof (percent) the kernel name reached on the devrow's
 * device where --metrics measured it, or -1: a kernel at GA_FIND_OCC_ROOF
 * or more is limited by its roof, not by its occupancy, and below it can
 * gain no more than the roof leaves.
 */
static double roof_pct_of(const struct fin *x, uint32_t name, uint32_t devrow)
{
	const struct ga_mx *mx = x->in->mx;
	const struct ga_model *m = x->m;
	const struct ga_devrow *dr = &m->devrows[devrow];

	if (!mx)
		return -1;
	for (size_t i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *k = &mx->k[i];
		const struct ga_mx_peaks *pk;
		struct ga_roof r;

		if (k->name != name || k->proc != dr->proc || k->device != dr->id ||
		    !(k->have & GA_MX_HAVE_TIME) || !(pk = ga_mx_peaks_of(mx, k->proc, k->device)) ||
		    ga_roof_eval(k->flops, k->dram_total, k->time_ns, &pk->p, &r) || !(r.pct > 0))
			continue;
		return r.pct;
	}
	return -1;
}

static int occupancy_rules(struct fin *x)
{
	const struct ga_launchcfg *l = x->in->lc;
	struct ga_model *m = x->m;
	char b1[32];

	for (size_t i = 0; i < l->nc; i++) {
		const struct ga_lcfg *c = &l->c[i];
		const struct ga_device *dv;
		struct ga_finding *f;
		uint64_t blocks;
		double waves, whole;

		if (!m->kernel_total || c->dev >= m->ndevrows ||
		    100.0 * (double)c->total / (double)m->kernel_total < GA_FIND_OCC_SHARE ||
		    c->occupancy < 0)
			continue;
		dv = &m->devs[m->devrows[c->dev].dev];
		blocks = (uint64_t)c->grid[0] * c->grid[1] * c->grid[2];
		if (c->occupancy < GA_FIND_OCC_LOW &&
		    (c->limit == GA_OCC_REGISTERS || c->limit == GA_OCC_SHARED)) {
			double now, then, occ, roof = roof_pct_of(x, c->name, c->dev);
			uint32_t alt = 0;
			uint64_t stake = occ_stake(c, dv, blocks, &now, &then, &occ, &alt);

			/* Blocks no fewer rounds with the limit lifted (another binds, or one round). */
			if (!stake || roof >= GA_FIND_OCC_ROOF)
				goto tail;
			if (roof > 0 && stake > (uint64_t)((double)c->total * (1 - roof / 100)))
				stake = (uint64_t)((double)c->total * (1 - roof / 100));
			if (!(f = add(x->fd, GA_RULE_OCCUPANCY, stake,
				      ga_strtab_short(&m->strs, c->name))))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%.0f%% theoretical occupancy, limited by %s (%u registers, %u B "
				 "shared memory per block): %" PRIu64 " blocks run in %.0f rounds of %u "
				 "an SM, %.0f at %.0f%% (%u an SM); %s of kernel time",
				 c->occupancy * 100, ga_occ_limit_name(c->limit), c->regs,
				 c->static_smem + c->dynamic_smem, blocks, now, c->active_blocks, then,
				 occ * 100, alt, ga_fmt_time(b1, sizeof(b1), c->total));
			ev(f, "occupancy_pct", c->occupancy * 100, '%');
			ev(f, "unlimited_occupancy_pct", occ * 100, '%');
			ev(f, "rounds", now, 'c');
			ev(f, "unlimited_rounds", then, 'c');
			ev(f, "registers", c->regs, 'c');
			ev(f, "shared_bytes", (double)c->static_smem + c->dynamic_smem, 'b');
			ev(f, "launches", (double)c->count, 'c');
			ev(f, "kernel_ns", (double)c->total, 'n');
			if (roof > 0)
				ev(f, "roof_pct", roof, '%');
			where_kernel(f, x, c->name, c->total, c->count);
		}
tail:
		/* A short kernel's time is its launch and drain, whatever its blocks. */
		if (!dv->sm_count || !c->active_blocks || !blocks || !c->count ||
		    c->total / c->count <= GA_FIND_SHORT_KERNEL_NS)
			continue;
		waves = (double)blocks / ((double)dv->sm_count * c->active_blocks);
		/* The last wave runs as long as a full one: its empty share is lost. */
		whole = ceil(waves - 1e-9);
		if ((whole == 1 && waves < GA_FIND_WAVE_LOW) ||
		    (whole == 2 && waves <= 1 + GA_FIND_WAVE_OVER)) {
			if (!(f = add(x->fd, GA_RULE_TAIL,
				      (uint64_t)((double)c->total * (1 - waves / whole)),
				      ga_strtab_short(&m->strs, c->name))))
				return -1;
			if (whole == 1)
				snprintf(f->summary, sizeof(f->summary),
					 "%" PRIu64 " blocks fill %.0f%% of one wave (%u SMs x %u blocks), "
					 "%s of kernel time",
					 blocks, waves * 100, dv->sm_count,
					 c->active_blocks, ga_fmt_time(b1, sizeof(b1), c->total));
			else
				snprintf(f->summary, sizeof(f->summary),
					 "%" PRIu64 " blocks are %.2f waves (%u SMs x %u blocks): the last "
					 "runs %.0f%% full, %s of kernel time",
					 blocks, waves, dv->sm_count,
					 c->active_blocks, 100 * (waves - (whole - 1)),
					 ga_fmt_time(b1, sizeof(b1), c->total));
			ev(f, "blocks", (double)blocks, 'c');
			ev(f, "wave_pct", waves * 100, '%');
			ev(f, "launches", (double)c->count, 'c');
			ev(f, "kernel_ns", (double)c->total, 'n');
			where_kernel(f, x, c->name, c->total, c->count);
		}
	}
	return 0;
}

static int gemm_like(const char *name)
{
	return strstr(name, "gemm") || strstr(name, "GEMM") || strstr(name, "matmul") ||
	       strstr(name, "mma") || strstr(name, "conv");
}

/* Rules of hardware metrics (--metrics): the roofline of each kernel of weight. */
static int metrics_rules(struct fin *x)
{
	const struct ga_mx *mx = x->in->mx;
	struct ga_model *m = x->m;
	char b1[32];

	for (size_t i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *k = &mx->k[i];
		const struct ga_mx_peaks *pk = ga_mx_peaks_of(mx, k->proc, k->device);
		const char *sname = ga_strtab_short(&m->strs, k->name);
		struct ga_finding *f = NULL;
		struct ga_roof r;
		uint64_t total = 0, count = 0;
		uint32_t ki;

		if (!(k->have & GA_MX_HAVE_TIME) || !pk ||
		    ga_roof_eval(k->flops, k->dram_total, k->time_ns, &pk->p, &r))
			continue;
		if (k->name < m->capstr2k && (ki = m->str2k[k->name])) {
			total = m->kstats[ki - 1].total;
			count = m->kstats[ki - 1].count;
		}
		if (!m->kernel_total ||
		    100.0 * (double)total / (double)m->kernel_total < GA_FIND_MX_SHARE)
			continue;
		if (r.verdict == GA_ROOF_NEITHER && r.pct > 0 && r.pct < 50) {
			if (!(f = add(x->fd, GA_RULE_BELOW_ROOF,
				      (uint64_t)((double)total * (1 - r.pct / 50)), sname)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%.1f%% of its roof (%s, %.2f FLOP/byte), %s of kernel time: latency, "
				 "occupancy or divergence limit it", r.pct,
				 r.dominant >= 0 ? ga_mx_prec[r.dominant].name : "no FLOPs",
				 isinf(r.ai) ? 0.0 : r.ai, ga_fmt_time(b1, sizeof(b1), total));
		} else if (r.verdict == GA_ROOF_MEMORY) {
			if (!(f = add(x->fd, GA_RULE_MEMORY_BOUND, 0, sname)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "memory-bound at %.1f%% of the DRAM bandwidth (%.2f FLOP/byte), %s of "
				 "kernel time", r.pct, isinf(r.ai) ? 0.0 : r.ai,
				 ga_fmt_time(b1, sizeof(b1), total));
		}
		if (f) {
			ev(f, "roof_pct", r.pct, '%');
			ev(f, "flop_per_byte", isinf(r.ai) ? 0 : r.ai, 'f');
			ev(f, "gflop_s", r.flops / 1e9, 'c');
			ev(f, "dram_gb_s", r.dram_bw / 1e9, 'c');
			ev(f, "kernel_ns", (double)total, 'n');
			ev(f, "launches", (double)count, 'c');
			ev(f, "profiled", (double)k->launches, 'c');
			where_kernel(f, x, k->name, total, count);
		}
		if (r.dominant == GP_PEAK_FP32 && !r.memory_side && gemm_like(sname) &&
		    pk->p.flops[GP_PEAK_FP32] > 0 &&
		    pk->p.flops[GP_PEAK_TENSOR_TF32] > pk->p.flops[GP_PEAK_FP32]) {
			double keep = pk->p.flops[GP_PEAK_FP32] / pk->p.flops[GP_PEAK_TENSOR_TF32];
			double all = 0;

			for (int c = 0; c < GA_MX_PREC; c++)
				all += k->flops[c];

			if (!(f = add(x->fd, GA_RULE_FP32_GEMM, (uint64_t)((double)total * (1 - keep)),
				      sname)))
				return -1;
			snprintf(f->summary, sizeof(f->summary),
				 "%.0f%% of its FLOPs are FP32 on CUDA cores (%.1f%% of the FP32 roof), "
				 "%s of kernel time; the TF32 tensor peak is %.1fx the FP32 one",
				 100.0 * k->flops[GP_PEAK_FP32] / all,
				 r.pct, ga_fmt_time(b1, sizeof(b1), total), 1 / keep);
			ev(f, "roof_pct", r.pct, '%');
			ev(f, "fp32_gflop_s", r.flop_s[GP_PEAK_FP32] / 1e9, 'c');
			ev(f, "fp32_peak_gflop_s", pk->p.flops[GP_PEAK_FP32] / 1e9, 'c');
			ev(f, "tf32_peak_gflop_s", pk->p.flops[GP_PEAK_TENSOR_TF32] / 1e9, 'c');
			ev(f, "kernel_ns", (double)total, 'n');
			ev(f, "launches", (double)count, 'c');
			where_kernel(f, x, k->name, total, count);
		}
	}
	return 0;
}

/*
 * nccl-exposed's places: the job's NCCL kernels of most time (at most
 * GA_FIND_WHERE), each at its heaviest launch site, named for proc, the
 * rank staked; their time and count are the job's.
 */
static void nccl_places(struct ga_finding *f, struct fin *x, uint32_t proc)
{
	const struct ga_model *m = x->m;
	size_t top[GA_FIND_WHERE];
	size_t ntop = 0;

	for (size_t k = 0; k < m->nkstats; k++) {
		const char *nm = ga_strtab_get(&m->strs, m->kstats[k].name);
		size_t j;

		if (!nm || !ga_ranks_is_nccl(nm) || !m->kstats[k].total)
			continue;
		for (j = ntop; j > 0 && m->kstats[top[j - 1]].total < m->kstats[k].total; j--)
			if (j < GA_FIND_WHERE)
				top[j] = top[j - 1];
		if (j < GA_FIND_WHERE) {
			top[j] = k;
			if (ntop < GA_FIND_WHERE)
				ntop++;
		}
	}
	for (size_t i = 0; i < ntop; i++) {
		const struct ga_kstat *ks = &m->kstats[top[i]];
		struct ga_where *w = &f->where[f->nwhere++];

		memset(w, 0, sizeof(*w));
		w->label_after = kernel_label(m, ks->name);
		w->site_after = heaviest_site(x, ks->name);
		w->proc = proc;
		w->stream = NONE;
		w->ns = ks->total;
		w->count = ks->count;
	}
}

static int rank_rules(struct fin *x)
{
	const struct ga_ranks *rk = x->in->rk;
	struct ga_model *m = x->m;
	const struct ga_rank_row *worst = NULL;
	uint64_t lag = 0, steps = 0, stake = 0, alone = 0;
	char who[96], b1[32], b2[32], b3[32];
	struct ga_finding *f;

	/*
	 * Overlapping communication with compute turns C + N into max(C, N):
	 * it saves the shorter of the NCCL time alone and the compute time
	 * alone (a rank with little compute, or whose NCCL kernels wait for
	 * the other ranks, cannot hide them behind it).
	 */
	for (size_t i = 0; i < rk->nrows; i++) {
		const struct ga_rank_row *r = &rk->rows[i];
		uint64_t both = r->comm_ns - r->exposed_ns;
		uint64_t c = r->compute_ns > both ? r->compute_ns - both : 0;
		uint64_t s = r->exposed_ns < c ? r->exposed_ns : c;

		if (!worst || s > stake) {
			worst = r;
			stake = s;
			alone = c;
		}
	}
	if (worst && worst->comm_ns && stake >= GA_FIND_MIN_STAKE_NS) {
		ga_ranks_proc_name(m, worst->proc, who, sizeof(who));
		if (!(f = add(x->fd, GA_RULE_NCCL_EXPOSED, stake, who)))
			return -1;
		snprintf(f->summary, sizeof(f->summary),
			 "%s: %s of its %s of NCCL kernels run with no compute beside them, "
			 "%s of compute with no NCCL beside it", who,
			 ga_fmt_time(b1, sizeof(b1), worst->exposed_ns),
			 ga_fmt_time(b2, sizeof(b2), worst->comm_ns),
			 ga_fmt_time(b3, sizeof(b3), alone));
		ev(f, "exposed_ns", (double)worst->exposed_ns, 'n');
		ev(f, "comm_ns", (double)worst->comm_ns, 'n');
		ev(f, "compute_ns", (double)worst->compute_ns, 'n');
		ev(f, "compute_alone_ns", (double)alone, 'n');
		ev(f, "ranks", (double)rk->nrows, 'c');
		nccl_places(f, x, worst->proc);
	}
	for (size_t i = 0; i < rk->nsteps; i++) {
		const struct ga_rank_step *s = &rk->steps[i];

		if (s->ranks >= 2 && (double)s->slowest_ns >
		    (1 + GA_FIND_STRAGGLER_PCT / 100) * (double)s->median_ns) {
			lag += s->slowest_ns - s->median_ns;
			steps++;
		}
	}
	if (steps) {
		if (!(f = add(x->fd, GA_RULE_STRAGGLER, lag, "steps")))
			return -1;
		snprintf(f->summary, sizeof(f->summary),
			 "in %" PRIu64 " of %zu steps the slowest rank works 10%% or more longer than "
			 "the median rank: %s in all", steps, rk->nsteps, ga_fmt_time(b1, sizeof(b1), lag));
		ev(f, "steps", (double)steps, 'c');
		ev(f, "lag_ns", (double)lag, 'n');
		for (size_t i = 0; i < rk->nsteps && f->nwhere < GA_FIND_WHERE; i++) {
			const struct ga_rank_step *s = &rk->steps[i];
			struct ga_where *w;

			if (s->ranks < 2 || (double)s->slowest_ns <=
			    (1 + GA_FIND_STRAGGLER_PCT / 100) * (double)s->median_ns)
				continue;
			w = &f->where[f->nwhere++];
			w->proc = rk->rows[s->slowest].proc;
			w->step = s->index + 1;
			w->nvtx = s->name;
			w->stream = NONE;
			w->ns = s->slowest_ns - s->median_ns;
			w->count = 1;
		}
	}
	return 0;
}

static int incomplete_rule(struct fin *x)
{
	struct ga_model *m = x->m;
	uint64_t lost = ga_model_lost_total(m);
	uint64_t skipped = mx_skipped(x), cost = mx_cost(x);
	struct ga_finding *f;
	char b1[32], b2[32], b3[32];
	uint64_t replay = 0;

	for (uint32_t d = 0; cost && d < m->ndevs; d++)
		replay += x->fd->devs[d].acc[GA_CAUSE_SLOW].ns;
	if (!lost && !m->gaps && !skipped && !x->fd->calls_dropped && !cost)
		return 0;
	if (!(f = add(x->fd, GA_RULE_INCOMPLETE, 0, "trace")))
		return -1;
	snprintf(f->summary, sizeof(f->summary),
		 "%" PRIu64 " records lost, %" PRIu64 " recording gaps (%s), %" PRIu64
		 " metrics launches skipped, %s spent profiling metrics (the GPU idled %s "
		 "in slow calls, counted here): the other findings may be off there",
		 lost, m->gaps, ga_fmt_time(b1, sizeof(b1), m->gap_ns), skipped,
		 ga_fmt_time(b2, sizeof(b2), cost), ga_fmt_time(b3, sizeof(b3), replay));
	f->severity = lost || m->gaps ||
		      (double)cost * 100 >= GA_FIND_WARN_PCT * (double)x->fd->span_ns ?
		      GA_SEV_WARNING : GA_SEV_INFO;
	ev(f, "lost_records", (double)lost, 'c');
	ev(f, "recording_gaps", (double)m->gaps, 'c');
	ev(f, "recording_gap_ns", (double)m->gap_ns, 'n');
	ev(f, "metrics_skipped", (double)skipped, 'c');
	ev(f, "host_calls_not_kept", (double)x->fd->calls_dropped, 'c');
	ev(f, "metrics_cost_ns", (double)cost, 'n');
	ev(f, "idle_in_slow_calls_ns", (double)replay, 'n');
	return 0;
}

/* Where of launch-bound findings: the kernels with the most gap before their short launches. */
static void lb_places(struct fin *x)
{
	struct ga_findings *fd = x->fd;
	struct ga_model *m = x->m;
	for (size_t i = 0; i < fd->nf; i++) {
		struct ga_finding *f = &fd->f[i];

		if (f->rule != GA_RULE_LAUNCH_BOUND)
			continue;
		for (size_t n = 0; n < GA_FIND_WHERE; n++) {
			size_t best = SIZE_MAX;

			for (size_t k = 0; k < fd->caplb && k < m->nkstats; k++) {
				int taken = 0;

				for (size_t j = 0; j < f->nwhere; j++)
					taken |= f->where[j].label_after ==
						 kernel_label(m, m->kstats[k].name);
				if (!taken && fd->lb[k].gap &&
				    (best == SIZE_MAX || fd->lb[k].gap > fd->lb[best].gap))
					best = k;
			}
			if (best == SIZE_MAX)
				break;
			struct ga_where *w = &f->where[f->nwhere++];

			memset(w, 0, sizeof(*w));
			w->label_after = kernel_label(m, m->kstats[best].name);
			w->stream = w->proc = NONE;
			w->ns = fd->lb[best].gap;
			w->count = fd->lb[best].count;
			w->site_after = heaviest_site(x, m->kstats[best].name);
		}
	}
}

static int cmp_finding(const void *pa, const void *pb)
{
	const struct ga_finding *a = pa, *b = pb;
	int c;

	if (a->stake_ns != b->stake_ns)
		return a->stake_ns > b->stake_ns ? -1 : 1;
	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->rule != b->rule)
		return a->rule < b->rule ? -1 : 1;
	c = strcmp(a->subject, b->subject);
	return c ? c : strcmp(a->summary, b->summary);
}

static uint64_t run_span(const struct ga_model *m)
{
	uint64_t lo = m->first_start, hi = m->last_end;

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];

		if (p->has_process && p->start_ns && p->start_ns < lo)
			lo = p->start_ns;
		if (p->end_ns > hi)
			hi = p->end_ns;
	}
	return hi > lo ? hi - lo : 0;
}

int ga_findings_settle(struct ga_findings *fd, const struct ga_findings_in *in)
{
	struct fin x = { .fd = fd, .in = in, .m = in->m };
	int rc = -1;

	if (fd->settled || fd->off)
		return 0;
	if (fd->oom)
		return -1;
	fd->m = in->m;
	if (scan_finish(&x))
		goto out;
	free(fd->pl);
	fd->pl = x.w;
	fd->npl = x.nw;
	fd->cappl = x.capw;
	x.w = NULL;
	fd->settled = 1;
	rc = 0;
out:
	free(x.w);
	ga_map_free(&x.wmap);
	ga_map_free(&x.cmap);
	return rc;
}

int ga_findings_finish(struct ga_findings *fd, const struct ga_findings_in *in)
{
	struct fin x = { .fd = fd, .in = in, .m = in->m };
	struct ga_model *m = in->m;

	if (fd->finished)
		return 0;
	fd->finished = 1;
	if (fd->oom)
		return -1;
	if (fd->off)
		return 0;
	if (ga_findings_settle(fd, in))
		return -1;
	fd->m = m;
	x.w = fd->pl;
	x.nw = fd->npl;
	if (x.nw) /* x.w is NULL without any */
		qsort(x.w, x.nw, sizeof(*x.w), cmp_wagg);
	fd->span_ns = run_span(m);
	if (gap_rules(&x) || copy_rules(&x) || startup_rule(&x) || occupancy_rules(&x) ||
	    metrics_rules(&x) || rank_rules(&x) || incomplete_rule(&x))
		return -1;
	lb_places(&x);
	for (size_t i = 0; i < fd->nf; i++) {
		struct ga_finding *f = &fd->f[i];

		f->stake_pct = fd->span_ns ? 100.0 * (double)f->stake_ns / (double)fd->span_ns : 0;
		if (f->rule == GA_RULE_INCOMPLETE)
			continue;
		f->incomplete = ga_model_lost_total(m) || m->gaps;
		if (f->stake_ns >= GA_FIND_MIN_STAKE_NS && f->stake_pct >= GA_FIND_CRIT_PCT &&
		    f->rule != GA_RULE_TAIL)
			f->severity = GA_SEV_CRITICAL;
		else if (f->stake_ns >= GA_FIND_MIN_STAKE_NS && f->stake_pct >= GA_FIND_WARN_PCT)
			f->severity = GA_SEV_WARNING;
	}
	if (fd->nf)
		qsort(fd->f, fd->nf, sizeof(*fd->f), cmp_finding);
	return 0;
}
