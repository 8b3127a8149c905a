/*
 * Ranks of a multi-process job (see ranks.h): the observer that collects
 * each (process, device)'s busy, compute and communication time while the
 * model reads, each step's work as its compute intervals retire, and the
 * per-rank figures and steps built from them.  Runs offline only.
 */
#include "model/ranks.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sort.h"

void ga_ranks_init(struct ga_ranks *rk)
{
	memset(rk, 0, sizeof(*rk));
}

int ga_ranks_is_nccl(const char *s)
{
	const char *p;

	if (!s)
		return 0;
	/* Plain names start with it; mangled ones have it after a length. */
	for (p = strstr(s, "nccl"); p; p = strstr(p + 1, "nccl"))
		if (p == s || isdigit((unsigned char)p[-1]))
			return strncmp(p, "ncclDevKernel", 13) == 0 ||
			       strncmp(p, "ncclKernel", 10) == 0 ||
			       strncmp(p, "ncclSymkDevKernel", 17) == 0 ||
			       strncmp(p, "ncclSymk", 8) == 0;
	return 0;
}

int ga_ranks_is_step(const char *s)
{
	static const char *const words[] = { "ProfilerStep#", "train_step", "iteration", "step" };

	if (!s)
		return 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i]);
		char c;

		if (strncasecmp(s, words[i], n))
			continue;
		c = s[n];
		if (i == 0)
			return isdigit((unsigned char)c) != 0;
		return !c || isdigit((unsigned char)c) || strchr(" #_:-.", c) != NULL;
	}
	return 0;
}

/* 1 NCCL, 2 other, 0 out of memory; its collective << 2 beside. */
static uint32_t kernel_class(struct ga_ranks *rk, const struct ga_model *m, uint32_t name)
{
	if (name >= rk->capnccl) {
		size_t old = rk->capnccl;

		if (ga_util_grow(&rk->nccl, &rk->capnccl, (size_t)name + 1, sizeof(*rk->nccl)))
			return 0;
		memset(rk->nccl + old, 0, rk->capnccl - old);
	}
	if (!rk->nccl[name]) {
		const char *s = ga_model_str(m, name);

		rk->nccl[name] = (uint8_t)((ga_ranks_is_nccl(s) ? 1 : 2) | ga_align_coll_index(s) << 2);
	}
	return rk->nccl[name];
}

/*
 * A collective's kernel kept for --align nccl of summaries: as align.c's
 * scan reads the record, on its trace's own clock.
 */
static int keep_coll(struct ga_ranks *rk, const struct ga_model *m, const struct ga_act *a,
		     uint32_t coll)
{
	uint32_t f = m->procs[a->proc].file;
	uint64_t start = a->start, end = a->end;
	int64_t sh = m->shifts && f < m->nshifts ? m->shifts[f] : 0;

	if (a->rec && a->rec->type == GP_REC_KERNEL) {
		const struct gp_rec_kernel *k = (const void *)a->rec;

		start = k->start;
		end = k->end;
	}
	if (end < start || !end)
		return 0;
	if (f >= rk->nkeep) {
		size_t old = rk->nkeep, cap = rk->nkeep;

		if (ga_util_grow(&rk->keep, &cap, (size_t)f + 1, sizeof(*rk->keep)))
			return -1;
		memset(rk->keep + old, 0, (cap - old) * sizeof(*rk->keep));
		rk->nkeep = cap;
	}
	return ga_align_keep_add(&rk->keep[f], (uint64_t)a->device_id << 32 | a->stream, coll,
				 start - (uint64_t)sh, end - (uint64_t)sh);
}

struct ga_rank_span {
	uint64_t start, end;
};

/* Step ranges by process, start, the longer first, then index (their place in the list). */
static int cmp_step(const void *pa, const void *pb)
{
	const struct ga_ranges_step *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	/* The longer first, so a nested one is dropped. */
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return 0;
}

/*
 * The outermost of step ranges that come by process, start, the longer
 * first (cmp_step()): each process's count, and with spans (a pass that
 * fills work and spans), each step.
 */
struct outer {
	struct ga_ranks *rk;
	const struct ga_model *m;
	struct ga_ranges *rg;
	struct ga_ranges_step last;  /* the last step taken */
	struct ga_ranges_step prev;  /* the last step seen: its order */
	int any, seen, unsorted, fill;
	size_t n;                    /* steps taken */
	size_t procs;                /* processes with steps */
};

/* Whether key k's name is a step's: asked once a key, kept where the fold keeps it. */
static int key_is_step(const struct outer *o, uint32_t k)
{
	struct ga_ranges_key *key = &o->rg->keys[k];

	if (!key->fold_kept)
		key->fold_kept = ga_ranks_is_step(ga_model_str(o->m, key->name)) ? 1 : 2;
	return key->fold_kept == 1;
}

static int outer_step(void *ctx, const struct ga_ranges_step *st)
{
	struct outer *o = ctx;
	struct ga_ranks *rk = o->rk;

	if (!key_is_step(o, st->key))
		return 0;
	if (o->seen && cmp_step(&o->prev, st) > 0) {
		/* Not in that order: find_steps() sorts them instead. */
		o->unsorted = 1;
		return 1;
	}
	o->prev = *st;
	o->seen = 1;
	/* Outermost only: drop ranges that start inside the previous step. */
	if (o->any && o->last.proc == st->proc && st->start < o->last.end)
		return 0;
	o->procs += !o->any || o->last.proc != st->proc;
	o->last = *st;
	o->any = 1;
	if (o->fill) {
		rk->work[o->n].label = o->rg->keys[st->key].label;
		rk->work[o->n].proc = st->proc;
		rk->work[o->n].work_ns = 0;
		rk->spans[o->n].start = st->start;
		rk->spans[o->n].end = st->end;
	} else if (st->proc >= rk->ncounts) {
		size_t old = rk->capcounts;

		if (ga_util_grow(&rk->counts, &rk->capcounts, (size_t)st->proc + 1,
				 sizeof(*rk->counts)))
			return -1;
		memset(rk->counts + old, 0, (rk->capcounts - old) * sizeof(*rk->counts));
		rk->ncounts = (size_t)st->proc + 1;
	}
	if (!o->fill)
		rk->counts[st->proc]++;
	o->n++;
	return 0;
}

/* Steps to sort (find_sorted()): steps[i], else the scan's ranges[i]. */
struct sortsrc {
	const struct ga_ranges *rg;
	const struct ga_ranges_step *steps;
};

static struct ga_ranges_step step_at(const struct sortsrc *c, size_t i)
{
	const struct ga_ranges_range *r;

	if (c->steps)
		return c->steps[i];
	r = &c->rg->ranges[i];
	return (struct ga_ranges_step){ r->start, r->end, r->proc, r->key };
}

/* Indices of steps (step_at()) by cmp_step(), then index. */
static int cmp_step_at(const void *pa, const void *pb, void *ctx)
{
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct ga_ranges_step sa = step_at(ctx, ia), sb = step_at(ctx, ib);
	int c = cmp_step(&sa, &sb);

	if (c)
		return c;
	return ia < ib ? -1 : ia > ib;
}

/* A folded scan's steps, in memory (find_steps() where they came out of order). */
struct collect {
	struct ga_ranges_step *v;
	size_t n, cap;
};

static int collect_step(void *ctx, const struct ga_ranges_step *st)
{
	struct collect *c = ctx;

	if (ga_util_grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return -1;
	c->v[c->n++] = *st;
	return 0;
}

/*
 * Steps sorted: those of all[0..n) (step_at()) that name a step, by
 * cmp_step_at(), each passed to outer_step(), in two passes where fill
 * asks (see find_steps()).  0, or -1 out of memory.
 */
static int find_sorted(struct outer *o, const struct sortsrc *src, size_t all)
{
	uint32_t *ord;
	size_t n = 0, i, k;
	int rc = 0, sorted = 1;

	for (i = 0; i < all; i++)
		n += key_is_step(o, step_at(src, i).key);
	if (!n)
		return 0;
	if (!(ord = malloc(n * sizeof(*ord))))
		return -1;
	for (i = k = 0; i < all; i++) {
		if (!key_is_step(o, step_at(src, i).key))
			continue;
		ord[k] = (uint32_t)i;
		/* In order already (steps do not nest): no sort. */
		if (sorted && k && cmp_step_at(&ord[k - 1], &ord[k], (void *)src) > 0)
			sorted = 0;
		k++;
	}
	if (!sorted)
		qsort_r(ord, n, sizeof(*ord), cmp_step_at, (void *)src);
	for (i = 0; i < n && !rc; i++) {
		struct ga_ranges_step st = step_at(src, ord[i]);

		rc = outer_step(o, &st);
	}
	free(ord);
	return rc ? -1 : 0;
}

/*
 * One pass over the scan's steps (fold: as they folded, which is their
 * order; else its ranges, sorted): 0, 1 where the folded steps came out
 * of order (o->unsorted), or -1 (out of memory, or rk->err says why).
 */
static int outer_pass(struct outer *o, struct ga_ranges *rg, const struct ga_ranges_step *steps,
		      size_t nsteps)
{
	struct sortsrc src = { rg, steps };
	int rc;

	if (steps || !rg->folded)
		return find_sorted(o, &src, steps ? nsteps : rg->nranges);
	rc = ga_ranges_each_step(rg, outer_step, o);
	if (rc < 0 && rg->err[0])
		snprintf(o->rk->err, sizeof(o->rk->err), "%s", rg->err);
	return rc < 0 ? -1 : o->unsorted;
}

/*
 * Each process's outermost step ranges, in start order: counted by
 * process (counts); and where two processes or more have them, so that
 * step k of each is compared, or a summary carries them (collect), in
 * work (work 0 yet) and spans, allocated to their number.  Processes the
 * model has not read yet are in too: the scan saw every file.  A folded
 * scan's steps are read as they folded (from its temporary file), which
 * is their order: for one process, neither they nor more than its count
 * stay in memory.  0, or -1 out of memory (or rk->err says why).
 */
static int find_steps(struct ga_ranks *rk, const struct ga_model *m, struct ga_ranges *rg)
{
	struct outer o = { .rk = rk, .m = m, .rg = rg };
	struct collect all = { 0 };
	int rc;

	rk->steps_known = 1;
	rc = outer_pass(&o, rg, NULL, 0);
	if (rc == 1) {
		/* Out of order (not seen in a fold yet): sorted in memory, as the ranges are. */
		free(rk->counts);
		rk->counts = NULL;
		rk->ncounts = rk->capcounts = 0;
		if (ga_ranges_each_step(rg, collect_step, &all)) {
			if (rg->err[0])
				snprintf(rk->err, sizeof(rk->err), "%s", rg->err);
			free(all.v);
			return -1;
		}
		o = (struct outer){ .rk = rk, .m = m, .rg = rg };
		rc = outer_pass(&o, rg, all.v, all.n);
	}
	/* A summary carries each process's steps (collect): kept for one too. */
	if (rc || (o.procs < 2 && !rk->collect)) {
		free(all.v);
		return rc ? -1 : 0;
	}
	rk->work = malloc(o.n * sizeof(*rk->work));
	rk->spans = malloc(o.n * sizeof(*rk->spans));
	if (!rk->work || !rk->spans) {
		free(all.v);
		return -1;
	}
	rk->capwork = o.n;
	/* Counted: filled in the same order. */
	free(rk->counts);
	rk->counts = NULL;
	rk->ncounts = rk->capcounts = 0;
	o = (struct outer){ .rk = rk, .m = m, .rg = rg, .fill = 1 };
	rc = outer_pass(&o, rg, all.v, all.n);
	free(all.v);
	rk->nwork = o.n;
	return rc ? -1 : 0;
}

/* Points c at process proc's steps. */
static void cur_bind(struct ga_rank_cur *c, struct ga_ranks *rk, uint32_t proc)
{
	size_t lo = 0, hi = rk->nwork, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rk->work[mid].proc < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (first = lo; lo < rk->nwork && rk->work[lo].proc == proc; lo++)
		;
	c->rk = rk;
	c->first = first;
	c->n = lo - first;
	c->k = 0;
}

/*
 * A rank's work in a step: from the step's start to the end of the last
 * compute interval of the device's union that starts before the step
 * ends, clipped to the step, when it ends after the step's start (its
 * last compute kernel that started in the step); the most over the
 * process's devices.  Steps that end in a collective end together on
 * every rank; the rank that reaches the collective last has the most work.
 */
static void work_of(struct ga_rank_cur *c)
{
	const struct ga_rank_span *sp = &c->rk->spans[c->first + c->k];
	struct ga_rank_work *w = &c->rk->work[c->first + c->k];

	if (c->have && c->pe > sp->start) {
		uint64_t e = c->pe < sp->end ? c->pe : sp->end;

		if (e - sp->start > w->work_ns)
			w->work_ns = e - sp->start;
	}
	c->k++;
}

/* busy.on_retire of a compute union, and its rest at finish: steps ending by start are answered. */
static void cur_take(void *ctx, uint64_t start, uint64_t end)
{
	struct ga_rank_cur *c = ctx;

	while (c->k < c->n && c->rk->spans[c->first + c->k].end <= start)
		work_of(c);
	c->pe = end;
	c->have = 1;
}

/*
 * busy.on_retire of a compute union whose steps come at the end (spill_retired):
 * kept in order, past GA_RANKS_SPILL_MEM in a temporary file.
 */
static void spill_take(void *ctx, uint64_t start, uint64_t end)
{
	struct ga_rank_unions *u = ctx;

	if (u->nspill == GA_RANKS_SPILL_MEM && u->spill_fd1 >= 0) {
		size_t bytes = u->nspill * sizeof(*u->spill), done = 0;

		if (!u->spill_fd1) {
			int fd = ga_util_tmpfd("ranks", NULL);

			/* No file: all in memory (-1 + 1: asked, none). */
			u->spill_fd1 = fd < 0 ? -1 : fd + 1;
		}
		while (u->spill_fd1 > 0 && done < bytes) {
			ssize_t w = pwrite(u->spill_fd1 - 1, (const char *)u->spill + done, bytes - done,
					   (off_t)(u->nfiled * sizeof(*u->spill) + done));

			if (w <= 0) {
				/* Written up to a whole interval stays; the rest in memory. */
				close(u->spill_fd1 - 1);
				u->spill_fd1 = -1;
				break;
			}
			done += (size_t)w;
		}
		if (u->spill_fd1 > 0) {
			u->nfiled += u->nspill;
			u->nspill = 0;
		}
	}
	if (ga_util_grow(&u->spill, &u->capspill, u->nspill + 1, sizeof(*u->spill))) {
		/* Out of memory: said at finish (find_work()). */
		u->cur.rk->spill_oom = 1;
		return;
	}
	u->spill[u->nspill++] = (struct ga_iv){ start, end };
}

/* The intervals spill_take() kept, in order, to the steps now known.  0, or -1 (rk->err). */
static int spill_replay(struct ga_ranks *rk, struct ga_rank_unions *u)
{
	struct ga_iv buf[512];
	uint64_t i = 0;

	while (u->spill_fd1 > 0 && i < u->nfiled) {
		size_t want = u->nfiled - i < 512 ? (size_t)(u->nfiled - i) : 512;
		ssize_t r = pread(u->spill_fd1 - 1, buf, want * sizeof(*buf),
				  (off_t)(i * sizeof(*buf)));

		if (r <= 0 || (size_t)r % sizeof(*buf)) {
			snprintf(rk->err, sizeof(rk->err), "the temporary file of the steps' "
							   "compute intervals cannot be read");
			return -1;
		}
		for (size_t k = 0; k < (size_t)r / sizeof(*buf); k++)
			cur_take(&u->cur, buf[k].start, buf[k].end);
		i += (size_t)r / sizeof(*buf);
	}
	for (size_t k = 0; k < u->nspill; k++)
		cur_take(&u->cur, u->spill[k].start, u->spill[k].end);
	return 0;
}

/* Device devrow's unions, made on its first activity.  NULL out of memory. */
static struct ga_rank_dev *dev_of(struct ga_ranks *rk, const struct ga_act *a)
{
	struct ga_rank_dev *d;

	if (a->devrow >= rk->ndevs) {
		size_t old = rk->capdevs;

		if (ga_util_grow(&rk->devs, &rk->capdevs, (size_t)a->devrow + 1, sizeof(*rk->devs)))
			return NULL;
		memset(rk->devs + old, 0, (rk->capdevs - old) * sizeof(*rk->devs));
		rk->ndevs = (size_t)a->devrow + 1;
	}
	d = &rk->devs[a->devrow];
	if (!d->u) {
		/* Apart from devs, which moves as it grows: the compute union holds its cursor. */
		if (!(d->u = calloc(1, sizeof(*d->u))))
			return NULL;
		cur_bind(&d->u->cur, rk, a->proc);
		d->u->kern_on = !rk->steps_early;
		if (rk->steps_early) {
			d->u->compute.on_retire = rk->spill_retired ? spill_take : cur_take;
			d->u->compute.retire_ctx = rk->spill_retired ? (void *)d->u : &d->u->cur;
		}
	}
	return d;
}

/*
 * Adds a's interval to b, which retires behind its streams' watermark
 * (retire) once it holds STREAM_AT intervals: before that, a device with
 * few activities (a trace may name thousands) does not pay a table of
 * streams.  Streams seen before then and not after do not hold the
 * watermark back, as the model's busy time switched to retiring after a
 * few activities (findings.h retire_after).
 */
#define STREAM_AT 1024

static inline int add_iv(struct ga_busy *b, const struct ga_act *a, int retire)
{
	if (retire && (b->nst || b->niv + b->nbatch >= STREAM_AT))
		return ga_busy_add_stream(b, a->proc, a->context, a->stream, a->start, a->end);
	return ga_busy_add(b, a->start, a->end);
}

/*
 * An activity of a job's device: its busy time, all, communication and
 * compute.  Each device's activities are one process's streams, each in
 * start order, as the model's busy time retiring (model.h busy_retire)
 * has them: the unions retire behind their streams' watermark.
 */
static __attribute__((noinline)) int add_act(struct ga_ranks *rk, struct ga_model *m,
					     const struct ga_act *a)
{
	struct ga_rank_dev *d;

	if (!rk->looked) {
		/* The NVTX scan read every file before the model: its ranges hold the steps. */
		rk->looked = 1;
		if (m->ahead.begin == ga_ranges_ahead && m->ahead.ctx &&
		    ga_ranges_paced(m->ahead.ctx) && rk->inputs <= 1) {
			/*
			 * One trace, its steps folding as the model reads it (ranges.h
			 * pace): found at finish (find_work()), its compute retiring
			 * as it goes; one process's are counted only, but a summary
			 * carries each step's work: its compute intervals wait for them.
			 */
			rk->steps_early = 1;
			rk->spill_retired = rk->collect;
		} else if (m->ahead.begin == ga_ranges_ahead && m->ahead.ctx) {
			if (find_steps(rk, m, m->ahead.ctx)) {
				if (rk->err[0])
					snprintf(m->err, sizeof(m->err), "%s", rk->err);
				return -1;
			}
			/* Nothing reads the folded steps again: freed before the model grows. */
			ga_ranges_drop_steps(m->ahead.ctx);
			rk->steps_early = 1;
		}
	}
	/* One file: each device's every activity is its process's, the model's busy union. */
	if (!(d = dev_of(rk, a)) || (rk->inputs > 1 && add_iv(&d->u->all, a, 1)))
		return -1;
	if (a->kind == GA_ACT_KERNEL) {
		struct ga_rank_unions *u = d->u;
		uint32_t c = kernel_class(rk, m, a->name);

		if (!c || (c >> 2 && rk->collect && keep_coll(rk, m, a, c >> 2)))
			return -1;
		c &= 3;
		if (c == 1 && !u->kern_on) {
			if (ga_busy_copy(&u->kern, &u->compute))
				return -1;
			u->kern_on = 1;
		}
		if ((u->kern_on && add_iv(&u->kern, a, 1)) ||
		    add_iv(c == 1 ? &u->comm : &u->compute, a, c == 1 || rk->steps_early))
			return -1;
		d->kernels++;
		d->nccl_kernels += c == 1;
	}
	return 0;
}

/* One trace of a process without a rank: nothing to compare, and no work out of line. */
static int act_idle(void *ctx, const struct ga_model *m, uint32_t proc)
{
	const struct ga_ranks *rk = ctx;

	return !(rk->inputs > 1 || rk->collect || m->procs[proc].rank != GA_NO_RANK);
}

/* Not called where act_idle() says so. */
static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	return add_act(ctx, m, a) ? -1 : 0;
}

/*
 * The file of process proc read to its end (model.h ga_model_on_file_done):
 * its devices' unions close, their intervals retired (the compute union's
 * where its steps take them as they retire), as at finish.
 */
static int file_done(void *ctx, struct ga_model *m, uint32_t proc)
{
	struct ga_ranks *rk = ctx;

	/* Its devices: the devrows made while it was read, the last ones. */
	for (size_t i = m->ndevrows; i-- > 0 && m->devrows[i].proc == proc;) {
		struct ga_rank_unions *u = i < rk->ndevs ? rk->devs[i].u : NULL;

		if (!u)
			continue;
		if (ga_busy_close(&u->all) || ga_busy_close(&u->comm) ||
		    (u->kern_on && ga_busy_close(&u->kern)) ||
		    (u->compute.on_retire && ga_busy_close(&u->compute)))
			return -1;
	}
	return 0;
}

int ga_ranks_bind(struct ga_ranks *rk, struct ga_model *m)
{
	if (ga_model_observe(m, rk, NULL, 0, obs_act) || ga_model_on_file_done(m, rk, file_done))
		return -1;
	ga_model_act_idle(m, rk, act_idle, NULL);
	return 0;
}

static int cmp_row(const void *pa, const void *pb, void *ctx)
{
	const struct ga_model *sort_m = ctx;
	const struct ga_rank_row *a = pa, *b = pb;
	const struct ga_proc *p = &sort_m->procs[a->proc], *q = &sort_m->procs[b->proc];
	int c;

	if ((a->rank == GA_NO_RANK) != (b->rank == GA_NO_RANK))
		return a->rank == GA_NO_RANK ? 1 : -1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (p->host != q->host) {
		c = strcmp(ga_model_str(sort_m, p->host), ga_model_str(sort_m, q->host));
		if (c)
			return c;
	}
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return a->proc < b->proc ? -1 : a->proc > b->proc;
}

/*
 * Each process's steps, in start order, with its work in each: the
 * compute intervals not retired yet go to each device's steps, and the
 * steps of processes the model did not read are dropped.
 */
static int find_work(struct ga_ranks *rk, const struct ga_model *m, struct ga_ranges *rg)
{
	size_t i, k;

	if (!rk->steps_known) {
		if (find_steps(rk, m, rg))
			return -1;
		for (i = 0; i < rk->ndevs && i < m->ndevrows; i++)
			if (rk->devs[i].u)
				cur_bind(&rk->devs[i].u->cur, rk, m->devrows[i].proc);
	}
	for (i = 0; i < rk->ndevs && i < m->ndevrows; i++) {
		struct ga_rank_unions *u = rk->devs[i].u;

		if (!u)
			continue;
		if (rk->spill_retired && (rk->spill_oom || spill_replay(rk, u)))
			return -1;
		for (k = 0; k < u->compute.niv; k++)
			cur_take(&u->cur, u->compute.iv[k].start, u->compute.iv[k].end);
		while (u->cur.k < u->cur.n)
			work_of(&u->cur);
	}
	/* One process's steps: counted only (nothing to compare them with). */
	for (i = 0; i < rk->ncounts && i < m->nprocs; i++)
		rk->rows[i].steps = rk->counts[i];
	k = 0;
	for (i = 0; i < rk->nwork; i++) {
		struct ga_rank_row *row;

		if (rk->work[i].proc >= m->nprocs)
			continue;
		row = &rk->rows[rk->work[i].proc];
		if (!row->steps++)
			row->work = k;
		rk->work[k++] = rk->work[i];
	}
	rk->nwork = k;
	free(rk->spans);
	rk->spans = NULL;
	return 0;
}

/* Step k of every rank that had one, compared (rows in their order). */
static int compare_steps(struct ga_ranks *rk)
{
	size_t i, k, maxk = 0;
	uint64_t *durs;
	uint32_t *who;
	int rc = -1;

	for (i = 0; i < rk->nrows; i++)
		if (rk->rows[i].steps > maxk)
			maxk = rk->rows[i].steps;
	/* Counted only (find_steps()): one process had steps. */
	if (!maxk || !rk->work)
		return 0;
	durs = malloc(rk->nrows * sizeof(*durs));
	who = malloc(rk->nrows * sizeof(*who));
	if (!durs || !who)
		goto out;
	for (k = 0; k < maxk; k++) {
		struct ga_rank_step *st;
		size_t n = 0, lo = 0, hi = 0;
		uint32_t name = 0;

		for (i = 0; i < rk->nrows; i++) {
			const struct ga_rank_row *row = &rk->rows[i];
			const struct ga_rank_work *s;

			if (row->steps <= k)
				continue;
			s = &rk->work[row->work + k];
			if (!n)
				name = s->label;
			durs[n] = s->work_ns;
			who[n] = (uint32_t)i;
			if (durs[n] > durs[hi])
				hi = n;
			if (durs[n] < durs[lo])
				lo = n;
			n++;
		}
		if (n < 2)
			continue;
		if (ga_util_grow(&rk->steps, &rk->capsteps, rk->nsteps + 1, sizeof(*rk->steps)))
			goto out;
		st = &rk->steps[rk->nsteps++];
		st->index = (uint32_t)k;
		st->name = name;
		st->ranks = (uint32_t)n;
		st->slowest = who[hi];
		st->fastest = who[lo];
		st->slowest_ns = durs[hi];
		st->fastest_ns = durs[lo];
		rk->rows[who[hi]].slowest++;
		rk->rows[who[hi]].lag_ns += durs[hi] - durs[lo];
		ga_sort_u64(durs, n);
		st->median_ns = n % 2 ? durs[n / 2] : (durs[n / 2 - 1] + durs[n / 2]) / 2;
	}
	rc = 0;
out:
	free(durs);
	free(who);
	return rc;
}

int ga_ranks_compare(struct ga_ranks *rk, const struct ga_model *m)
{
	size_t i;

	rk->any_rank = 0;
	rk->nhosts = 0;
	for (i = 0; i < m->nprocs; i++) {
		size_t j = 0;

		rk->any_rank |= m->procs[i].rank != GA_NO_RANK;
		while (j < i && m->procs[j].host != m->procs[i].host)
			j++;
		rk->nhosts += j == i;
	}
	qsort_r(rk->rows, rk->nrows, sizeof(*rk->rows), cmp_row, (void *)m);
	for (i = 0; i < rk->nrows; i++)
		rk->row_of[rk->rows[i].proc] = (uint32_t)i;
	return compare_steps(rk);
}

int ga_ranks_finish(struct ga_ranks *rk, const struct ga_model *m, struct ga_ranges *rg)
{
	size_t i;

	rk->nrows = m->nprocs;
	rk->rows = calloc(m->nprocs ? m->nprocs : 1, sizeof(*rk->rows));
	rk->row_of = calloc(m->nprocs ? m->nprocs : 1, sizeof(*rk->row_of));
	if (!rk->rows || !rk->row_of)
		return -1;
	for (i = 0; i < m->nprocs; i++) {
		rk->rows[i].proc = (uint32_t)i;
		rk->rows[i].rank = m->procs[i].rank;
	}
	for (i = 0; i < rk->ndevs && i < m->ndevrows; i++) {
		struct ga_rank_dev *d = &rk->devs[i];
		struct ga_rank_row *row = &rk->rows[m->devrows[i].proc];

		struct ga_rank_unions *u = d->u;

		if (!u)
			continue;
		if (ga_busy_flush(&u->all) || ga_busy_flush(&u->compute) || ga_busy_flush(&u->comm) ||
		    ga_busy_flush(&u->kern))
			return -1;
		d->all_ns = rk->inputs > 1 ? ga_busy_total(&u->all) :
					     m->devs[m->devrows[i].dev].busy_ns;
		d->compute_ns = ga_busy_total(&u->compute);
		d->comm_ns = ga_busy_total(&u->comm);
		/* NCCL time under no compute: the kernels' union less the compute's. */
		d->exposed_ns = u->kern_on ? ga_busy_total(&u->kern) - d->compute_ns : 0;
		row->devices += d->all_ns > 0;
		row->busy_ns += d->all_ns;
		row->compute_ns += d->compute_ns;
		row->comm_ns += d->comm_ns;
		row->exposed_ns += d->exposed_ns;
		row->kernels += d->kernels;
		row->nccl_kernels += d->nccl_kernels;
	}
	/* Rows are still by process here: find_work() indexes them so. */
	if (find_work(rk, m, rg))
		return -1;
	return ga_ranks_compare(rk, m);
}

int ga_ranks_wanted(const struct ga_ranks *rk)
{
	return rk->nrows > 1 || rk->any_rank;
}

void ga_ranks_free(struct ga_ranks *rk)
{
	for (size_t i = 0; i < rk->capdevs && rk->devs; i++) {
		struct ga_rank_unions *u = rk->devs[i].u;

		if (!u)
			continue;
		ga_busy_free(&u->all);
		ga_busy_free(&u->compute);
		ga_busy_free(&u->comm);
		ga_busy_free(&u->kern);
		free(u->spill);
		if (u->spill_fd1 > 0)
			close(u->spill_fd1 - 1);
		free(u);
	}
	free(rk->devs);
	free(rk->nccl);
	for (size_t i = 0; i < rk->nkeep; i++)
		ga_align_keep_free(&rk->keep[i]);
	free(rk->keep);
	free(rk->rows);
	free(rk->row_of);
	free(rk->steps);
	free(rk->work);
	free(rk->spans);
	free(rk->counts);
	memset(rk, 0, sizeof(*rk));
}
