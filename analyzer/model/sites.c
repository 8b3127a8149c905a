/*
 * Launch sites: kernels attributed to the host call stacks they were
 * launched from (see sites.h).  Runs offline only.
 */
#include "model/sites.h"
#include "model/demangle.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/symbolize.h"

#define ARROW " \xe2\x86\x90 "     /* " ← " */
#define NONE UINT32_MAX
/* Correlation ids count up from 1 in a process, but only some carry a
 * stack: an array while it stays within this many slots per stack. */

typedef uint32_t (*str_fn)(void *ctx, uint32_t id);

void ga_sites_setup(struct ga_sites *st, unsigned depth)
{
	memset(st, 0, sizeof(*st));
	if (depth < 1)
		depth = 1;
	if (depth > GA_SITES_MAX_FRAMES)
		depth = GA_SITES_MAX_FRAMES;
	st->depth = depth;
}

static void corr_reset(struct ga_sites *st, uint32_t proc)
{
	free(st->corr);
	st->corr = NULL;
	st->ncorr = 0;
	st->corr_proc = proc;
}

void ga_sites_free(struct ga_sites *st)
{
	free(st->frames);
	ga_map_free(&st->frame_map);
	free(st->stacks);
	ga_map_free(&st->stack_map);
	free(st->pcs);
	ga_map_free(&st->gnode_map);
	free(st->corr);
	free(st->counts);
	ga_map_free(&st->count_map);
	ga_map_free(&st->defer_map);
	ga_map_free(&st->fwd_map);
	free(st->sites);
	ga_map_free(&st->site_map);
	free(st->skern);
	free(st->ftext);
	free(st->order);
	free(st->syms);
	ga_map_free(&st->sym_map);
	free(st->mods);
	ga_map_free(&st->mod_map);
	ga_map_free(&st->modid_map);
	ga_map_free(&st->want);
	memset(st, 0, sizeof(*st));
}

/*
 * Frames looked up past a site's depth in one pass: a static runtime's
 * frames and the launch code nvcc generates, to skip, are named only by
 * the lookup; deeper ones take further passes (sym_passes).
 */
#define GA_SITES_RUNTIME_SLACK 8

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Frames of the recorder and of the libraries under the launch call: CUDA's,
 * and NVIDIA's libraries that launch kernels for the program (a cuBLAS
 * kernel's site is the program's call of cuBLAS).
 */
static int internal_module(const char *path)
{
	static const char *const prefix[] = {
		"libgpuprof", "libcupti",  "libcuda.so", "libcudart", "libunwind",
		"libcublas",  "libcudnn",  "libcufft",   "libcurand", "libcusparse",
		"libcusolver", "libnccl",
	};
	const char *b = base_name(path);
	size_t i;

	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (strncmp(b, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

/* ---- records ---- */

/*
 * A new frame of (proc, id), zeroed and numbered: 1; 0 when the frame is
 * known already (read ahead); -1 out of memory.
 */
static int frame_new(struct ga_sites *st, uint32_t proc, uint64_t id, struct ga_stack_frame **out)
{
	uint32_t *slot;
	int ins;

	if (st->nframes >= NONE)
		return -1;
	ins = ga_map_insert(&st->frame_map, proc, id, &slot);
	if (ins <= 0)
		return ins;
	if (ga_util_grow(&st->frames, &st->capframes, st->nframes + 1, sizeof(*st->frames)))
		return -1;
	*out = &st->frames[st->nframes];
	memset(*out, 0, sizeof(**out));
	*slot = (uint32_t)st->nframes++;
	return 1;
}

static int on_frame(struct ga_sites *st, struct ga_model *m, uint32_t proc,
		    const struct gp_rec_frame *r, str_fn str, void *sctx)
{
	struct ga_stack_frame *f;
	int ins = frame_new(st, proc, r->id, &f);

	if (ins <= 0)
		return ins;
	f->offset = r->offset;
	f->module = str(sctx, r->module);
	f->function = str(sctx, r->function);
	f->recfn = f->function;
	f->file = str(sctx, r->file);
	f->line = r->line;
	f->sym_offset = r->sym_offset;
	f->internal = f->module && internal_module(ga_model_str(m, f->module));
	return 0;
}

/*
 * The module index of (name, path, kind, build-id), added if new: modules
 * are shared by the processes that loaded the same file.  NONE out of
 * memory.
 */
static uint32_t mod_get(struct ga_sites *st, uint32_t name, uint32_t path, uint32_t kind,
			const uint8_t *id, uint32_t nid)
{
	uint64_t h = 0xcbf29ce484222325ull ^ kind;
	struct ga_sites_mod *x;
	uint32_t i, *slot;
	int ins;

	for (i = 0; i < nid; i++)
		h = (h ^ id[i]) * 0x100000001b3ull;
	ins = ga_map_insert(&st->modid_map, (uint64_t)name << 32 | path, h, &slot);
	if (ins < 0)
		return NONE;
	if (!ins) {
		x = &st->mods[*slot];
		if (x->kind == kind && x->nid == nid && (!nid || !memcmp(x->id, id, nid)))
			return *slot;
	}
	if (st->nmods >= NONE ||
	    ga_util_grow(&st->mods, &st->capmods, st->nmods + 1, sizeof(*st->mods)))
		return NONE;
	x = &st->mods[st->nmods];
	memset(x, 0, sizeof(*x));
	x->name = name;
	x->path = path;
	x->kind = kind;
	x->nid = nid;
	if (nid) /* id may be NULL then */
		memcpy(x->id, id, nid);
	if (ins)
		*slot = (uint32_t)st->nmods;
	return (uint32_t)st->nmods++;
}

static int on_module(struct ga_sites *st, uint32_t proc, const struct gp_rec_module *r,
		     str_fn str, void *sctx)
{
	uint32_t name = str(sctx, r->module), path = str(sctx, r->path), idx, *slot;

	if (name == GA_STR_NOMEM || !name)
		return 0;          /* names no frame */
	if (path == GA_STR_NOMEM)
		path = 0;
	idx = mod_get(st, name, path, GA_SITES_MOD_RECORDED, (const uint8_t *)(r + 1),
		      r->h.aux <= sizeof(st->mods[0].id) ? r->h.aux : 0);
	if (idx == NONE || ga_map_insert(&st->mod_map, proc, r->base, &slot) < 0)
		return -1;
	*slot = idx;
	return ga_map_insert(&st->mod_map, proc, UINT64_MAX, &slot) < 0 ? -1 : 0;
}

/*
 * Whether the Python frame of file in function fn folds under the patterns
 * of list (sites.h: "PATH" or "PATH:FUNCTION", comma-separated, "default").
 */
static int fold_match(const char *list, const char *file, const char *fn, int depth)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ","), plen = n, flen = 0;
		const char *colon = memchr(p, ':', n), *fpat = NULL;

		if (colon) {
			plen = (size_t)(colon - p);
			fpat = colon + 1;
			flen = n - plen - 1;
		}
		if (n == 7 && !memcmp(p, "default", 7)) {
			if (depth == 0 && fold_match(GA_SITES_FOLD_DEFAULT, file, fn, 1))
				return 1;
		} else if (plen && memmem(file, strlen(file), p, plen)) {
			size_t fl = strlen(fn);

			if (!fpat || (fl >= flen && !memcmp(fn + fl - flen, fpat, flen) &&
				      (fl == flen || fn[fl - flen - 1] == '.')))
				return 1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int on_pyframe(struct ga_sites *st, struct ga_model *m, uint32_t proc,
		      const struct gp_rec_pyframe *r, str_fn str, void *sctx)
{
	struct ga_stack_frame *f;
	int ins = frame_new(st, proc, r->id, &f);

	if (ins <= 0)
		return ins;
	f->python = 1;
	f->function = str(sctx, r->function);
	f->file = str(sctx, r->file);
	f->line = r->line;
	if (f->file && f->file != GA_STR_NOMEM)
		f->folded = (uint32_t)fold_match(st->fold ? st->fold : GA_SITES_FOLD_DEFAULT,
						 ga_model_str(m, f->file),
						 f->function && f->function != GA_STR_NOMEM
							 ? ga_model_str(m, f->function)
							 : "",
						 0);
	return 0;
}

static int on_stack(struct ga_sites *st, uint32_t proc, const struct gp_rec_stack *r)
{
	const uint64_t *pc = (const void *)(r + 1);
	struct ga_stack *s;
	uint32_t *slot;
	int ins;

	if (st->nstacks >= NONE || st->npcs + r->h.aux >= NONE)
		return -1;
	ins = ga_map_insert(&st->stack_map, proc, r->id, &slot);
	if (ins <= 0)
		return ins;
	if (ga_util_grow(&st->stacks, &st->capstacks, st->nstacks + 1, sizeof(*st->stacks)) ||
	    ga_util_grow(&st->pcs, &st->cappcs, st->npcs + r->h.aux + 1, sizeof(*st->pcs)))
		return -1;
	s = &st->stacks[st->nstacks];
	memset(s, 0, sizeof(*s));
	s->proc = proc;
	s->id = r->id;
	s->off = (uint32_t)st->npcs;
	s->n = r->h.aux;
	if (r->h.aux)
		memcpy(st->pcs + st->npcs, pc, (size_t)r->h.aux * sizeof(*pc));
	st->npcs += r->h.aux;
	*slot = (uint32_t)st->nstacks++;
	st->stack_records++;
	return 0;
}

static int on_gnode(struct ga_sites *st, uint32_t proc, const struct gp_rec_graph_node *r)
{
	uint32_t *slot;

	if (!r->stack)
		return 0;
	if (ga_map_insert(&st->gnode_map, proc, r->node, &slot) < 0)
		return -1;
	*slot = r->stack;
	return 0;
}

/*
 * Grows the ring to n entries (a power of two, at most GA_SITES_CORR_RING),
 * each kept entry at its id's place in the larger one.  0, or -1.
 */
static int corr_grow(struct ga_sites *st, size_t n)
{
	struct ga_sites_corr *v = calloc(n, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < st->ncorr; i++)
		if (st->corr[i].stack)
			v[st->corr[i].corr & (n - 1)] = st->corr[i];
	free(st->corr);
	st->corr = v;
	st->ncorr = n;
	return 0;
}

static int on_corr(struct ga_sites *st, uint32_t proc, const struct gp_rec_corr_stack *r)
{
	uint32_t c = r->correlation;

	if (!r->stack)
		return 0;
	st->corr_records++;
	if (proc != st->corr_proc)
		corr_reset(st, proc);      /* the previous file is read: its ids are done */
	if (c >= st->ncorr && st->ncorr < GA_SITES_CORR_RING) {
		size_t n = st->ncorr ? st->ncorr : 4096;

		while (n <= c && n < GA_SITES_CORR_RING)
			n *= 2;
		if (corr_grow(st, n))
			return -1;
	}
	/* An id a ring's length older in its place is gone. */
	st->corr[c & (st->ncorr - 1)] = (struct ga_sites_corr){ c, r->stack };
	return 0;
}

static uint32_t corr_get(const struct ga_sites *st, uint32_t proc, uint32_t c)
{
	const struct ga_sites_corr *e;

	if (proc != st->corr_proc || !st->ncorr)
		return 0;
	e = &st->corr[c & (st->ncorr - 1)];
	return e->corr == c ? e->stack : 0;
}

static int take(struct ga_sites *st, struct ga_model *m, uint32_t proc,
		const struct gp_rec *rec, str_fn str, void *sctx)
{
	switch (rec->type) {
	case GP_REC_STACK:
		return on_stack(st, proc, (const void *)rec);
	case GP_REC_FRAME:
		return on_frame(st, m, proc, (const void *)rec, str, sctx);
	case GP_REC_PYFRAME:
		return on_pyframe(st, m, proc, (const void *)rec, str, sctx);
	case GP_REC_MODULE:
		return on_module(st, proc, (const void *)rec, str, sctx);
	case GP_REC_GRAPH_NODE:
		return on_gnode(st, proc, (const void *)rec);
	default:
		return 0;
	}
}

static uint32_t model_str(void *ctx, uint32_t id)
{
	return ga_model_fstr(ctx, id);
}

/* The types take() and on_corr() read: only these reach obs_rec() (ga_sites_bind()). */
#define OBS_TYPES                                                                  \
	(1ull << GP_REC_CORR_STACK | 1ull << GP_REC_STACK | 1ull << GP_REC_FRAME | \
	 1ull << GP_REC_PYFRAME | 1ull << GP_REC_MODULE | 1ull << GP_REC_GRAPH_NODE)

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_sites *st = ctx;

	if (rec->type == GP_REC_CORR_STACK)
		return on_corr(st, proc, (const void *)rec);
	return take(st, m, proc, rec, model_str, m);
}

/*
 * The stack a kernel was launched from, as far as known now: *deferred
 * is set for a graph node whose GRAPH_NODE record may still come (the
 * result is then the graph launch's stack, the fallback).
 */
static uint32_t launch_stack(const struct ga_sites *st, const struct ga_act *a, int *deferred)
{
	const uint32_t *v;

	*deferred = 0;
	if (a->graph_id && a->graph_node) {
		/* Where the node was captured or added, not where the graph was launched. */
		if (st->gnode_map.n && (v = ga_map_find(&st->gnode_map, a->proc, a->graph_node)))
			return *v;
		*deferred = 1;
	}
	return corr_get(st, a->proc, a->correlation);
}

static int count_add(struct ga_sites *st, const struct ga_act *a, uint32_t stack, int deferred,
		     uint32_t bwd)
{
	struct ga_stack_count *c;
	uint32_t *slot, i;
	int ins;

	if (bwd && !deferred) {
		/* Apart from the other kernels of its stack: its forward op's site may differ. */
		ins = ga_map_insert(&st->count_map, (uint64_t)a->proc << 32 | stack,
				    (uint64_t)bwd << 32 | a->name, &slot);
		if (ins < 0)
			return -1;
		if (!ins) {
			c = &st->counts[*slot];
			goto add;
		}
	} else if (deferred) {
		ins = ga_map_insert(&st->defer_map, (uint64_t)a->proc << 32 | stack, a->graph_node,
				    &slot);
		if (ins < 0)
			return -1;
		/* A node runs one kernel, barring parameter updates: a short chain. */
		for (i = *slot; i; i = st->counts[i - 1].next)
			if (st->counts[i - 1].name == a->name)
				break;
		if (i) {
			c = &st->counts[i - 1];
			goto add;
		}
	} else {
		uint64_t key = (uint64_t)a->proc << 32 | stack;
		unsigned h = (unsigned)((key * 0x9e3779b97f4a7c15ull + a->name) >> 58);

		if (st->hot[h].idx && st->hot[h].key == key && st->hot[h].name == a->name) {
			c = &st->counts[st->hot[h].idx - 1];
			goto add;
		}
		ins = ga_map_insert(&st->count_map, key, a->name, &slot);
		if (ins < 0)
			return -1;
		if (!ins) {
			st->hot[h].key = key;
			st->hot[h].name = a->name;
			st->hot[h].idx = *slot + 1;
			c = &st->counts[*slot];
			goto add;
		}
	}
	if (st->ncounts >= NONE - 1 ||
	    ga_util_grow(&st->counts, &st->capcounts, st->ncounts + 1, sizeof(*st->counts)))
		return -1;
	c = &st->counts[st->ncounts];
	memset(c, 0, sizeof(*c));
	c->proc = a->proc;
	c->stack = stack;
	c->name = a->name;
	c->bwd_seq = deferred ? 0 : bwd;
	if (deferred) {
		c->deferred = 1;
		c->node = a->graph_node;
		c->next = *slot;
		*slot = (uint32_t)st->ncounts + 1;
	} else {
		*slot = (uint32_t)st->ncounts;
	}
	st->ncounts++;
add:
	c->count++;
	c->ns += a->end - a->start;
	return 0;
}

/*
 * Autograd's backward kernels run on threads without Python frames.  Under
 * PyTorch's emit_nvtx every op is an NVTX range "NAME, seq = N, op_id = M":
 * a backward node's range ("MulBackward0, seq = N") has the seq of the
 * forward op it differentiates.  *fwd: the seq of the innermost op range
 * around a kernel outside any backward node; *bwd: that of the innermost
 * backward node around it; both + 1, 0 none.  Only for processes recorded
 * with Python frames.
 */
static void nvtx_seqs(const struct ga_sites *st, const struct ga_model *m, const struct ga_act *a,
		      uint32_t *fwd, uint32_t *bwd)
{
	const struct ga_ranges *rg = st->rg;
	uint32_t r = a->nvtx_range - 1, hops = 0;
	int first = 1;

	*fwd = *bwd = 0;
	if (!rg || !a->nvtx_range || !m->procs[a->proc].has_config ||
	    m->procs[a->proc].config.backtrace < GP_BACKTRACE_PYTHON)
		return;
	for (; r < rg->nranges && hops < 64 && !*bwd; r = rg->ranges[r].parent, hops++) {
		const char *name = ga_model_str(m, ga_ranges_name(rg, r));
		const char *s = strstr(name, ", seq = ");
		unsigned long n;
		char *end;

		if (!s)
			continue;
		n = strtoul(s + 8, &end, 10);
		if (end == s + 8 || n >= UINT32_MAX - 1)
			continue;
		if (memmem(name, (size_t)(s - name), "Backward", 8))
			*bwd = (uint32_t)n + 1;
		else if (first)
			*fwd = (uint32_t)n + 1;
		first = 0;
	}
	if (*bwd)
		*fwd = 0;
}

/* A kernel of a process that may have stacks: counted at its launch site. */
static int obs_kernel(struct ga_sites *st, struct ga_model *m, const struct ga_act *a)
{
	uint32_t stack, fwd, bwd, *slot;
	int deferred;

	stack = launch_stack(st, a, &deferred);
	nvtx_seqs(st, m, a, &fwd, &bwd);
	if (fwd && stack) {
		int ins = ga_map_insert(&st->fwd_map, a->proc, fwd, &slot);

		if (ins < 0)
			return -1;
		if (ins == 1)
			*slot = stack;     /* the op's first kernel */
	}
	return count_add(st, a, stack, deferred, bwd);
}

/* Not called for a process recorded without --backtrace (act_idle()). */
static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	return a->kind == GA_ACT_KERNEL ? obs_kernel(ctx, m, a) : 0;
}

/* A process recorded without --backtrace: nothing to look up, its kernels counted by the model. */
static int act_idle(void *ctx, const struct ga_model *m, uint32_t proc)
{
	const struct ga_proc *p = &m->procs[proc];

	(void)ctx;
	return p->has_config && !p->config.backtrace;
}

int ga_sites_bind(struct ga_sites *st, struct ga_model *m)
{
	if (ga_model_observe(m, st, obs_rec, OBS_TYPES, obs_act))
		return -1;
	ga_model_act_idle(m, st, act_idle, &st->kernels_unstacked);
	return 0;
}

/* ---- reading ahead ---- */

struct scan {
	struct ga_sites *st;
	struct ga_model *m;
	uint32_t proc;
	int oom;
	struct ga_strmap smap;     /* file string id -> strtab id */
};

static uint32_t scan_str(void *ctx, uint32_t id)
{
	struct scan *s = ctx;
	uint32_t g = ga_strmap_get(&s->smap, id);

	return g == GA_STR_NOMEM ? GA_STR_NONE : g;
}

static int scan_string(struct scan *s, const struct gp_rec_string *r)
{
	return ga_strmap_add(&s->smap, &s->m->strs, r->id, (const char *)(r + 1), r->len);
}

static int scan_rec(void *ctx, const struct gp_rec *rec)
{
	struct scan *s = ctx;
	int rc = 0;

	switch (rec->type) {
	case GP_REC_STRING:
		rc = scan_string(s, (const void *)rec);
		break;
	case GP_REC_CONFIG:
		/* Recorded without stacks: nothing further to find. */
		return ((const struct gp_rec_config *)rec)->backtrace == 0;
	default:
		rc = take(s->st, s->m, s->proc, rec, scan_str, s);
		break;
	}
	if (rc < 0)
		s->oom = 1;
	return rc < 0;
}

int ga_sites_scan(struct ga_sites *st, struct ga_model *m, char *const *paths, int n)
{
	struct scan s;
	int i, rc = 0;

	memset(&s, 0, sizeof(s));
	s.st = st;
	s.m = m;
	for (i = 0; i < n && !rc; i++) {
		struct ga_read_info info;
		struct stat sb;
		char err[256];

		/* A pipe can be read only once: its stacks come with the model's read. */
		if (stat(paths[i], &sb) != 0 || !S_ISREG(sb.st_mode))
			continue;
		s.proc = (uint32_t)(m->nprocs + (size_t)i);
		ga_strmap_reset(&s.smap);
		ga_reader_read_file(paths[i], scan_rec, &s, &info, err, sizeof(err));
		rc = s.oom ? -1 : 0;
	}
	ga_strmap_free(&s.smap);
	return rc;
}

int ga_sites_any(const struct ga_sites *st)
{
	return st->stack_records || st->corr_records || st->with_stack;
}

/* ---- sites ---- */

/* Text of frame pc of proc: its strtab id, GA_STR_NOMEM out of memory. */
static uint32_t frame_text(struct ga_sites *st, struct ga_model *m, uint32_t proc, uint64_t pc)
{
	const uint32_t *v = ga_map_find(&st->frame_map, proc, pc);
	struct ga_stack_frame *f = v ? &st->frames[*v] : NULL;
	struct ga_buf b = { 0 };
	uint32_t id;
	int rc;

	if (f && f->text)
		return f->text;
	if (!f) {
		rc = ga_buf_printf(&b, (pc & GP_PYFRAME_BIT) ? "(unknown Python frame)" : "0x%" PRIx64,
				   pc);
	} else if (f->python) {
		const char *fn = f->function ? ga_model_str(m, f->function) : "?";

		if (f->file && f->line)
			rc = ga_buf_printf(&b, "%s:%u %s", base_name(ga_model_str(m, f->file)), f->line,
					   fn);
		else if (f->file)
			rc = ga_buf_printf(&b, "%s %s", base_name(ga_model_str(m, f->file)), fn);
		else
			rc = ga_buf_printf(&b, "%s", fn);
	} else if (f->function) {
		const char *fn = ga_strtab_short(&m->strs, f->function);

		if (f->file && f->line)
			rc = ga_buf_printf(&b, "%s (%s:%u)", fn,
					   base_name(ga_model_str(m, f->file)), f->line);
		else if (f->file)
			rc = ga_buf_printf(&b, "%s (%s)", fn, base_name(ga_model_str(m, f->file)));
		else if (f->module && (f->sym & GA_SITES_SYM_FN))
			rc = ga_buf_printf(&b, "%s (%s+0x%" PRIx64 ")", fn,
					   base_name(ga_model_str(m, f->module)), f->offset);
		else if (f->module)
			rc = ga_buf_printf(&b, "%s+0x%x (%s)", fn, f->sym_offset,
					   base_name(ga_model_str(m, f->module)));
		else
			rc = ga_buf_printf(&b, "%s+0x%x", fn, f->sym_offset);
	} else if (f->module && f->file && f->line) {
		rc = ga_buf_printf(&b, "%s+0x%" PRIx64 " (%s:%u)",
				   base_name(ga_model_str(m, f->module)), f->offset,
				   base_name(ga_model_str(m, f->file)), f->line);
	} else if (f->module) {
		rc = ga_buf_printf(&b, "%s+0x%" PRIx64, base_name(ga_model_str(m, f->module)),
				   f->offset);
	} else {
		rc = ga_buf_printf(&b, "0x%" PRIx64, pc);
	}
	id = rc ? GA_STR_NOMEM : ga_strtab_intern(&m->strs, b.p, b.len);
	ga_buf_free(&b);
	if (f && id != GA_STR_NOMEM)
		f->text = id;
	return id;
}

/*
 * Frames of a statically linked CUDA runtime (nvcc's default) and the
 * launch code nvcc generates stand between the program's code and the
 * driver in the program's own module (or in any library nvcc built): they
 * are not the program's, so a launch site starts past them.  They are
 * known by their names, mangled as the symbol table gives them or
 * demangled:
 *   the runtime's internals: libcudart_static_<hash>, __cudart<N>, cudart::
 *   its entry points: __cuda* (__cudaLaunchKernel, __cudaPushCallConfiguration,
 *     the header's static __cudaLaunchKernel_helper) and the C API, cuda[A-Z]*
 *   the templates of cuda_runtime.h: cuda[A-Z]*<...> (cudaLaunchKernel<char>)
 *   the launch stubs: __device_stub__<kernel>, __wrapper__device_stub_<kernel>
 *   the host function kernel<<<...>>>() calls, which bears the kernel's own
 *     name: the caller of its stubs
 * and, with line information, by file: nvcc's <unit>.cudafe1.stub.c, where
 * the stubs and that host function are, and the runtime's headers.  A C++
 * function of the program named cuda<Upper>... is the program's unless it
 * is a template or a cudaLaunch*: the API and its templates are those.
 */
enum { RT_NO, RT_YES, RT_STUB };

/* A function's unqualified name, as found in a mangled or demangled name. */
struct rt_name {
	const char *p;
	size_t len;
	int mangled;               /* Itanium-mangled */
	int c;                     /* plain C name: no parameter list */
	int tmpl;                  /* template arguments follow the name */
	int nested;                /* p is the outermost scope, not the function */
};

static int starts(const char *p, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(p, prefix, n);
}

/* <digits><identifier> at *s: the identifier, s moved past it.  0 malformed. */
static int source_name(const char **s, const char **p, size_t *len)
{
	size_t n = 0;

	if (**s < '0' || **s > '9')
		return 0;
	while (**s >= '0' && **s <= '9' && n < 100000)
		n = n * 10 + (size_t)(*(*s)++ - '0');
	if (!n || strnlen(*s, n) < n)
		return 0;
	*p = *s;
	*len = n;
	*s += n;
	return 1;
}

static int rt_parse(const char *fn, struct rt_name *r)
{
	const char *s = fn, *e;

	memset(r, 0, sizeof(*r));
	if (s[0] == '_' && s[1] == 'Z') {
		r->mangled = 1;
		s += 2;
		if (*s == 'L')             /* internal linkage */
			s++;
		if (*s == 'N') {           /* a scope: only its outermost one matters */
			for (s++; *s == 'r' || *s == 'V' || *s == 'K' || *s == 'R' || *s == 'O';)
				s++;
			r->nested = 1;
		}
		if (!source_name(&s, &r->p, &r->len))
			return 0;
		r->tmpl = *s == 'I';
		return 1;
	}
	/* Demangled ("cudaError cudaLaunchKernel<char>(char const*, ...)") or C. */
	e = fn + strcspn(fn, "(<");
	r->c = !strchr(fn, '(');
	r->tmpl = *e == '<';
	for (s = e; s > fn && s[-1] != ' '; s--)
		;
	r->p = s;
	r->len = (size_t)(e - s);
	for (e = s; e + 1 < r->p + r->len; e++)
		if (e[0] == ':' && e[1] == ':') {
			r->len = (size_t)(e - s);
			r->nested = 1;
			break;
		}
	return r->len > 0;
}

/* The runtime's or the generated launch code's file (line information). */
static int runtime_file(const char *file)
{
	const char *b = base_name(file);
	size_t n = strlen(b);

	return (n > 7 && !strcmp(b + n - 7, ".stub.c")) || !strcmp(b, "cuda_runtime.h") ||
	       !strcmp(b, "cuda_runtime_api.h") || strstr(file, "/include/crt/");
}

/*
 * What function fn (file: its line's file, or NULL) is: RT_NO the
 * program's, RT_YES the runtime's or launch code, RT_STUB a kernel's
 * __device_stub__, when *kern and *klen receive the kernel's name, mangled
 * but for its leading '_' when it starts with 'Z'.
 */
static int runtime_fn(const char *fn, const char *file, const char **kern, size_t *klen)
{
	struct rt_name r;

	if (file && runtime_file(file))
		return RT_YES;
	if (!fn || !rt_parse(fn, &r))
		return RT_NO;
	if (r.nested)
		return r.len == 6 && !memcmp(r.p, "cudart", 6) ? RT_YES : RT_NO;
	if (starts(r.p, r.len, "__device_stub__")) {
		*kern = r.p + 15;
		*klen = r.len - 15;
		return *klen ? RT_STUB : RT_YES;
	}
	if (starts(r.p, r.len, "__wrapper__device_stub_") || starts(r.p, r.len, "__cuda") ||
	    starts(r.p, r.len, "libcudart_static_"))
		return RT_YES;
	if (r.len > 4 && !memcmp(r.p, "cuda", 4) && r.p[4] >= 'A' && r.p[4] <= 'Z')
		return (!r.mangled && r.c) || r.tmpl || starts(r.p, r.len, "cudaLaunch") ? RT_YES
											 : RT_NO;
	return RT_NO;
}

/*
 * Whether fn is the host function nvcc makes for kernel k (as runtime_fn
 * gives it, klen bytes): the kernel's mangled name (a clone suffix such as
 * ".constprop.0" aside), its plain name for an extern "C" kernel, or its
 * demangled signature.
 */
static int stub_host(const char *fn, const char *k, size_t klen)
{
	struct rt_name r;
	char *km, *dm;
	int same;

	if (k[0] == 'Z') {
		if (fn[0] == '_' && !strncmp(fn + 1, k, klen) && (!fn[klen + 1] || fn[klen + 1] == '.'))
			return 1;
	} else {
		/* An old-style stub named after a C kernel. */
		return !strncmp(fn, k, klen) && (!fn[klen] || fn[klen] == '(');
	}
	if (fn[0] == '_' && fn[1] == 'Z')
		return 0;
	/* An extern "C" kernel: the stub has its C++ name, the host function its C name. */
	km = malloc(klen + 2);
	if (!km)
		return 0;
	km[0] = '_';
	memcpy(km + 1, k, klen);
	km[klen + 1] = 0;
	same = 0;
	if (rt_parse(km, &r) && !r.nested && !r.tmpl && strlen(fn) == r.len &&
	    !memcmp(fn, r.p, r.len))
		same = 1;
	if (!same && strchr(fn, '(') && (dm = ga_demangle_full(km))) {
		same = !strcmp(fn, dm);
		free(dm);
	}
	free(km);
	return same;
}

/*
 * Index of the first frame of stack s that is the program's: past the
 * recorder's, CUPTI's, the driver's and a shared runtime's libraries, and
 * past a static runtime's frames and the launch code nvcc generates.
 */
static uint32_t first_user(const struct ga_sites *st, const struct ga_model *m,
			   const struct ga_stack *s)
{
	const char *kern = NULL;
	size_t klen = 0;
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		const uint32_t *v = ga_map_find(&st->frame_map, s->proc, st->pcs[s->off + i]);
		const struct ga_stack_frame *f = v ? &st->frames[*v] : NULL;
		const char *fn, *file;
		int c;

		if (f && f->internal) {
			kern = NULL;
			continue;
		}
		if (!f || f->python)
			break;
		fn = f->function ? ga_model_str(m, f->function) : NULL;
		file = f->file ? ga_model_str(m, f->file) : NULL;
		if (kern && fn && stub_host(fn, kern, klen)) {
			kern = NULL;       /* the stubs' caller: the program's code is next */
			continue;
		}
		c = runtime_fn(fn, file, &kern, &klen);
		if (c == RT_NO)
			break;
	}
	return i;
}

/* Whether frame i of stack s is a folded Python frame. */
static int folded_at(const struct ga_sites *st, const struct ga_stack *s, uint32_t i)
{
	const uint32_t *v = ga_map_find(&st->frame_map, s->proc, st->pcs[s->off + i]);

	return v && st->frames[*v].folded;
}

/*
 * Whether stack s leaves its folded frames out from frame first on: it
 * has some, and not only those.
 */
static int folds(const struct ga_sites *st, const struct ga_stack *s, uint32_t first)
{
	int some = 0, kept = 0;

	for (uint32_t i = first; i < s->n && !(some && kept); i++) {
		if (folded_at(st, s, i))
			some = 1;
		else
			kept = 1;
	}
	return some && kept;
}

/* ---- symbolization ---- */

/* A frame to look up. */
struct symq {
	uint32_t module;           /* module index */
	uint32_t frame;            /* frame index */
	uint64_t offset;
};

struct symqueue {
	struct symq *q;
	size_t n, cap;
};

/*
 * The module of frame f (at pc of proc): its MODULE record's, else one
 * standing for the path the frame names, unproven.  NONE out of memory.
 */
static uint32_t frame_mod(struct ga_sites *st, uint32_t proc, uint64_t pc,
			  const struct ga_stack_frame *f)
{
	const uint32_t *v = ga_map_find(&st->mod_map, proc, pc - f->offset);

	if (v)
		return *v;
	return mod_get(st, f->module, 0,
		       ga_map_find(&st->mod_map, proc, UINT64_MAX) ? GA_SITES_MOD_MISSING
								   : GA_SITES_MOD_LEGACY,
		       NULL, 0);
}

/*
 * Queue the frames of stack s that a site with k frames shows, those not
 * looked up yet and not already turned into text.  0, or -1 out of memory.
 */
static int sym_want(struct ga_sites *st, const struct ga_model *m, const struct ga_stack *s,
		    uint32_t k, struct symqueue *q)
{
	uint32_t i, n, first = first_user(st, m, s);
	int fold = folds(st, s, first);

	/* Names may show more frames to be the runtime's: look a few more up. */
	k += GA_SITES_RUNTIME_SLACK;
	for (i = first, n = 0; i < s->n && n < k; i++) {
		const uint32_t *v = ga_map_find(&st->frame_map, s->proc, st->pcs[s->off + i]);
		struct ga_stack_frame *f = v ? &st->frames[*v] : NULL;

		uint32_t mod;

		if (fold && f && f->folded)
			continue;          /* not shown: no slot of the k */
		n++;
		if (!f || (f->sym & GA_SITES_SYM_QUEUED) || f->text || !f->module || !f->offset)
			continue;
		f->sym |= GA_SITES_SYM_QUEUED;
		mod = frame_mod(st, s->proc, st->pcs[s->off + i], f);
		if (mod == NONE || ga_util_grow(&q->q, &q->cap, q->n + 1, sizeof(*q->q)))
			return -1;
		q->q[q->n].module = mod;
		q->q[q->n].frame = *v;
		q->q[q->n].offset = f->offset;
		q->n++;
	}
	return 0;
}

static int cmp_symq(const void *pa, const void *pb)
{
	const struct symq *a = pa, *b = pb;

	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return (a->frame > b->frame) - (a->frame < b->frame);
}

/* Intern the strings of what the lookup found as sym entry *x.  0, or -1. */
static int sym_keep(struct ga_model *m, const struct ga_symbolize_line *l,
		    struct ga_stack_sym *x)
{
	memset(x, 0, sizeof(*x));
	if (l->function) {
		x->function = ga_strtab_intern(&m->strs, l->function, strlen(l->function));
		if (x->function == GA_STR_NOMEM)
			return -1;
	}
	if (l->file && l->line) {
		x->file = ga_strtab_intern(&m->strs, l->file, strlen(l->file));
		if (x->file == GA_STR_NOMEM)
			return -1;
		x->line = l->line;
	}
	return 0;
}

/* What the debug information says, over what the recorder found. */
static void sym_apply(struct ga_stack_frame *f, const struct ga_stack_sym *x)
{
	if (x->file) {
		f->file = x->file;
		f->line = x->line;
		if (x->function)
			f->function = x->function;   /* the function of that line */
	} else if (x->function && !f->function) {
		f->function = x->function;
		f->sym |= GA_SITES_SYM_FN;
	}
}

/*
 * Look up offs[0 .. n) in module index mod, keeping its verdict (a module
 * refused once is not looked for again).  0, or -1 out of memory.
 */
static int sym_lookup(struct ga_sites *st, struct ga_model *m, uint32_t mod, const uint64_t *offs,
		      size_t n, struct ga_symbolize_line *lines)
{
	struct ga_sites_mod *x = &st->mods[mod];
	struct ga_sym_known known[16];
	struct ga_sym_module sm;
	char why[PATH_MAX + 256];
	size_t i, nk = 0;
	int verdict, rc;

	memset(lines, 0, n * sizeof(*lines));
	if (x->verdict && x->verdict != GA_SYM_PROVEN && x->verdict != GA_SYM_UNVERIFIED)
		return 0;
	memset(&sm, 0, sizeof(sm));
	sm.name = ga_model_str(m, x->name);
	sm.path = x->path ? ga_model_str(m, x->path) : NULL;
	sm.build_id = x->id;
	sm.nid = x->nid;
	sm.recorded = x->kind == GA_SITES_MOD_RECORDED;
	sm.legacy = x->kind == GA_SITES_MOD_LEGACY;
	/* Without a build-id, the names dladdr gave in the process are the check. */
	for (i = 0; sm.legacy && i < st->nframes && nk < 16; i++) {
		const struct ga_stack_frame *f = &st->frames[i];

		if (f->module == x->name && f->recfn && f->offset && !f->python) {
			known[nk].offset = f->offset;
			known[nk].sym_offset = f->sym_offset;
			known[nk].function = ga_model_str(m, f->recfn);
			nk++;
		}
	}
	sm.known = known;
	sm.nknown = nk;
	rc = ga_symbolize_module(&sm, st->symbol_path, offs, n, lines, &verdict, why, sizeof(why));
	if (rc)
		return -1;
	if (!x->verdict) {
		x->verdict = verdict;
		x->why = ga_strtab_intern(&m->strs, why, strlen(why));
		if (x->why == GA_STR_NOMEM)
			return -1;
	}
	return 0;
}

/*
 * Look up the (module, offset) pairs of q[lo .. hi), all of one module,
 * sorted: one lookup of those not known yet.  0, or -1 out of
 * memory.
 */
static int sym_module(struct ga_sites *st, struct ga_model *m, const struct symq *q,
		      size_t lo, size_t hi)
{
	struct ga_symbolize_line *lines = NULL;
	uint64_t *offs = NULL;
	size_t i, n = 0;
	uint32_t *slot;
	int rc = -1, ins;

	offs = malloc((hi - lo) * sizeof(*offs));
	lines = malloc((hi - lo) * sizeof(*lines));
	if (!offs || !lines)
		goto out;
	for (i = lo; i < hi; i++)
		if ((i == lo || q[i].offset != q[i - 1].offset) &&
		    !ga_map_find(&st->sym_map, q[i].module, q[i].offset))
			offs[n++] = q[i].offset;
	if (n && sym_lookup(st, m, q[lo].module, offs, n, lines))
		goto out;
	if (ga_util_grow(&st->syms, &st->capsyms, st->nsyms + n, sizeof(*st->syms)))
		goto out;
	for (i = 0; i < n; i++) {
		ins = ga_map_insert(&st->sym_map, q[lo].module, offs[i], &slot);
		if (ins < 0 || sym_keep(m, &lines[i], &st->syms[st->nsyms]))
			goto out;
		*slot = (uint32_t)st->nsyms++;
	}
	for (i = lo; i < hi; i++) {
		const uint32_t *v = ga_map_find(&st->sym_map, q[i].module, q[i].offset);

		if (v)
			sym_apply(&st->frames[q[i].frame], &st->syms[*v]);
	}
	rc = 0;
out:
	if (lines)
		ga_symbolize_free(lines, n);
	free(lines);
	free(offs);
	return rc;
}

/* Look up the frames queued, module by module; frees the queue.  0, or -1. */
static int sym_resolve(struct ga_sites *st, struct ga_model *m, struct symqueue *q)
{
	size_t lo, hi;
	int rc = 0;

	if (q->n)
		qsort(q->q, q->n, sizeof(*q->q), cmp_symq);
	for (lo = 0; lo < q->n && !rc; lo = hi) {
		for (hi = lo + 1; hi < q->n && q->q[hi].module == q->q[lo].module; hi++)
			;
		rc = sym_module(st, m, q->q, lo, hi);
	}
	free(q->q);
	memset(q, 0, sizeof(*q));
	return rc;
}

/*
 * Look up what queue() asks for, pass after pass until it asks for nothing
 * new: names found can show more frames to be the runtime's or launch code
 * (a static runtime's frames get their names only now), which moves a
 * site's first frame on past those looked up.  0, or -1 out of memory.
 */
static int sym_passes(struct ga_sites *st, struct ga_model *m,
		      int (*queue)(struct ga_sites *, struct ga_model *, struct symqueue *))
{
	for (;;) {
		struct symqueue q = { 0 };

		if (queue(st, m, &q)) {
			free(q.q);
			return -1;
		}
		if (!q.n) {
			free(q.q);
			return 0;
		}
		if (sym_resolve(st, m, &q))
			return -1;
	}
}

/* Every stack read so far. */
static int queue_all(struct ga_sites *st, struct ga_model *m, struct symqueue *q)
{
	size_t i;

	for (i = 0; i < st->nstacks; i++)
		if (sym_want(st, m, &st->stacks[i], st->depth, q))
			return -1;
	return 0;
}

int ga_sites_symbolize(struct ga_sites *st, struct ga_model *m)
{
	if (!st->symbolize)
		return 0;
	return sym_passes(st, m, queue_all);
}

/* The stacks behind the kernels counted, as finish will settle them. */
static int queue_counted(struct ga_sites *st, struct ga_model *m, struct symqueue *q)
{
	size_t i;

	for (i = 0; i < st->ncounts; i++) {
		const struct ga_stack_count *c = &st->counts[i];
		uint32_t stack = c->stack;
		const uint32_t *v;

		if (c->deferred && (v = ga_map_find(&st->gnode_map, c->proc, c->node)))
			stack = *v;
		if (!stack || !(v = ga_map_find(&st->stack_map, c->proc, stack)))
			continue;
		if (sym_want(st, m, &st->stacks[*v], st->depth, q))
			return -1;
	}
	/* Stacks other views name (ga_sites_want). */
	for (i = 0; i < st->want.cap; i++) {
		const struct ga_map_ent *e = &st->want.e[i];
		const uint32_t *v;

		if (e->used && (v = ga_map_find(&st->stack_map, e->a, e->b)) &&
		    sym_want(st, m, &st->stacks[*v], st->depth, q))
			return -1;
	}
	return 0;
}

/* The frames the sites list beyond their depth (JSON). */
static int queue_listed(struct ga_sites *st, struct ga_model *m, struct symqueue *q)
{
	size_t i;

	for (i = 0; i < st->nsites; i++) {
		if (st->sites[i].best == NONE)
			continue;
		if (sym_want(st, m, &st->stacks[st->sites[i].best], GA_SITES_MAX_FRAMES, q))
			return -1;
	}
	return 0;
}

/* The collapsed site of stack index si: its strtab id, or GA_STR_NOMEM. */
static uint32_t collapse(struct ga_sites *st, struct ga_model *m, uint32_t si)
{
	struct ga_stack *s = &st->stacks[si];
	struct ga_buf b = { 0 };
	uint32_t i, n, first, id;
	int rc = 0, fold;

	if (s->text)
		return s->text;
	first = first_user(st, m, s);
	fold = folds(st, s, first);
	if (!s->n)
		rc = ga_buf_printf(&b, "(empty stack)");
	else if (first == s->n)
		rc = ga_buf_printf(&b, "(no frames outside gpuprof, CUDA and NVIDIA's libraries)");
	for (i = first, n = 0; i < s->n && n < st->depth && !rc; i++) {
		uint32_t t;

		if (fold && folded_at(st, s, i))
			continue;
		t = frame_text(st, m, s->proc, st->pcs[s->off + i]);
		if (t == GA_STR_NOMEM)
			rc = -1;
		else
			rc = ga_buf_printf(&b, "%s%s", n ? ARROW : "", ga_model_str(m, t));
		n++;
	}
	id = rc ? GA_STR_NOMEM : ga_strtab_intern(&m->strs, b.p ? b.p : "", b.len);
	ga_buf_free(&b);
	if (id != GA_STR_NOMEM)
		st->stacks[si].text = id;
	return id;
}

/* What the Python frames of stack index si say: 1 a real Python frame, 2 no Python frame. */
static int py_kind(const struct ga_sites *st, const struct ga_model *m, uint32_t si)
{
	const struct ga_stack *s = &st->stacks[si];
	int kind = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		const uint32_t *v = ga_map_find(&st->frame_map, s->proc, st->pcs[s->off + i]);
		const struct ga_stack_frame *f = v ? &st->frames[*v] : NULL;

		if (!f || !f->python)
			continue;
		if (f->file)
			return 1;
		if (f->function && !strncmp(ga_model_str(m, f->function), "<no Python frame", 16))
			kind = 2;
	}
	return kind;
}

/*
 * For a kernel of a backward node (bwd: its seq + 1) launched from a stack
 * without Python frames: the index of the stack of its forward op's first
 * kernel when that has Python frames, else NONE.
 */
static uint32_t forward_stack(const struct ga_sites *st, const struct ga_model *m,
			      uint32_t proc, uint32_t stack, uint32_t bwd)
{
	const uint32_t *v, *f;

	if (!bwd || !stack || !(v = ga_map_find(&st->stack_map, proc, stack)) ||
	    py_kind(st, m, *v) != 2 || !(f = ga_map_find(&st->fwd_map, proc, bwd)) ||
	    !(v = ga_map_find(&st->stack_map, proc, *f)) || py_kind(st, m, *v) != 1)
		return NONE;
	return *v;
}

/* "backward of SITE": the site of stack index fsi's backward kernels; GA_STR_NOMEM. */
static uint32_t backward_text(struct ga_sites *st, struct ga_model *m, uint32_t fsi)
{
	uint32_t fwd = collapse(st, m, fsi), id;
	struct ga_buf b = { 0 };

	if (fwd == GA_STR_NOMEM || ga_buf_printf(&b, "backward of %s", ga_model_str(m, fwd))) {
		ga_buf_free(&b);
		return GA_STR_NOMEM;
	}
	id = ga_strtab_intern(&m->strs, b.p, b.len);
	ga_buf_free(&b);
	return id;
}

int ga_sites_user_frames(const struct ga_sites *st, const struct ga_model *m, uint32_t proc,
			 uint32_t stack, const uint64_t **pcs, uint32_t *n)
{
	const uint32_t *v = stack ? ga_map_find(&st->stack_map, proc, stack) : NULL;
	const struct ga_stack *s;
	uint32_t first;

	if (!v)
		return -1;
	s = &st->stacks[*v];
	first = first_user(st, m, s);
	*pcs = st->pcs + s->off + first;
	*n = s->n - first;
	return 0;
}

uint32_t ga_sites_stack_of(const struct ga_sites *st, const struct ga_act *a)
{
	int deferred;

	return launch_stack(st, a, &deferred);
}

int ga_sites_want(struct ga_sites *st, uint32_t proc, uint32_t stack)
{
	uint32_t *slot;

	return stack && ga_map_insert(&st->want, proc, stack, &slot) < 0 ? -1 : 0;
}

uint32_t ga_sites_stack_text(struct ga_sites *st, struct ga_model *m, uint32_t proc,
			     uint32_t stack)
{
	const uint32_t *v;
	uint32_t str;

	if (!stack || !st->finished || !(v = ga_map_find(&st->stack_map, proc, stack)))
		return 0;
	str = collapse(st, m, *v);
	return str == GA_STR_NOMEM ? 0 : str;
}

uint32_t ga_sites_site_of(struct ga_sites *st, struct ga_model *m, const struct ga_act *a)
{
	uint32_t stack, *v;
	int deferred;

	stack = launch_stack(st, a, &deferred);
	if (!stack || !(v = ga_map_find(&st->stack_map, a->proc, stack)))
		return 0;
	if (st->fwd_map.n && !deferred) {
		uint32_t fwd, bwd, fsi;

		nvtx_seqs(st, m, a, &fwd, &bwd);
		if ((fsi = forward_stack(st, m, a->proc, stack, bwd)) != NONE)
			return backward_text(st, m, fsi);
	}
	return collapse(st, m, *v);
}

/* Site index of collapsed string str, made when new; NONE out of memory. */
static uint32_t site_get(struct ga_sites *st, uint32_t str)
{
	struct ga_stack_site *x;
	uint32_t *slot;
	int ins = ga_map_insert(&st->site_map, str, 0, &slot);

	if (ins < 0)
		return NONE;
	if (ins == 1) {
		if (st->nsites >= NONE - 1 ||
		    ga_util_grow(&st->sites, &st->capsites, st->nsites + 1, sizeof(*st->sites)))
			return NONE;
		x = &st->sites[st->nsites];
		memset(x, 0, sizeof(*x));
		x->str = str;
		x->best = NONE;
		*slot = (uint32_t)st->nsites++;
	}
	return *slot;
}

/* Site of (proc, stack id); *si receives the stack index, NONE unknown. */
static uint32_t site_of_stack(struct ga_sites *st, struct ga_model *m, uint32_t proc,
			      uint32_t stack, uint32_t *si)
{
	const uint32_t *v = ga_map_find(&st->stack_map, proc, stack);
	uint32_t str, site;

	*si = NONE;
	if (!v) {
		/* Referred to, but its STACK record never came (lost, or the file was cut). */
		str = ga_strtab_intern(&m->strs, "(unknown stack)", 15);
		return str == GA_STR_NOMEM ? NONE : site_get(st, str);
	}
	*si = *v;
	if (st->stacks[*v].site)
		return st->stacks[*v].site - 1;
	str = collapse(st, m, *v);
	if (str == GA_STR_NOMEM)
		return NONE;
	site = site_get(st, str);
	if (site != NONE)
		st->stacks[*v].site = site + 1;
	return site;
}

struct sort_ctx {
	const struct ga_sites *st;
	const struct ga_model *m;
};

static int cmp_skern(const void *pa, const void *pb, void *ctx)
{
	const struct sort_ctx *c = ctx;
	const struct ga_stack_kernel *a = pa, *b = pb;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(ga_model_str(c->m, a->name), ga_model_str(c->m, b->name));
}

static int cmp_site(const void *pa, const void *pb, void *ctx)
{
	const struct sort_ctx *c = ctx;
	const struct ga_stack_site *a = &c->st->sites[*(const uint32_t *)pa];
	const struct ga_stack_site *b = &c->st->sites[*(const uint32_t *)pb];

	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns > b->gpu_ns ? -1 : 1;
	if (a->launches != b->launches)
		return a->launches > b->launches ? -1 : 1;
	return strcmp(ga_model_str(c->m, a->str), ga_model_str(c->m, b->str));
}

/* The frames a site lists: those of its heaviest stack, internal and folded ones dropped. */
static int site_frames(struct ga_sites *st, struct ga_model *m, struct ga_stack_site *x)
{
	const struct ga_stack *s;
	uint32_t i, first;
	int fold;

	x->foff = (uint32_t)st->nftext;
	x->nf = 0;
	if (x->best == NONE)
		return 0;
	s = &st->stacks[x->best];
	first = first_user(st, m, s);
	fold = folds(st, s, first);
	for (i = first; i < s->n && x->nf < GA_SITES_MAX_FRAMES; i++) {
		uint32_t t;

		if (fold && folded_at(st, s, i))
			continue;
		t = frame_text(st, m, s->proc, st->pcs[s->off + i]);
		if (t == GA_STR_NOMEM ||
		    ga_util_grow(&st->ftext, &st->capftext, st->nftext + 1, sizeof(*st->ftext)))
			return -1;
		st->ftext[st->nftext++] = t;
		x->nf++;
	}
	return 0;
}

int ga_sites_order(struct ga_sites *st, const struct ga_model *m)
{
	struct sort_ctx sc = { st, m };
	size_t i;

	if (st->nskern)
		qsort_r(st->skern, st->nskern, sizeof(*st->skern), cmp_skern, &sc);
	for (i = st->nskern; i-- > 0;)
		st->sites[st->skern[i].site].klo = (uint32_t)i;
	for (i = 0; i < st->nskern; i++)
		st->sites[st->skern[i].site].khi = (uint32_t)i + 1;
	free(st->order);
	st->order = malloc((st->nsites ? st->nsites : 1) * sizeof(*st->order));
	if (!st->order)
		return -1;
	for (i = 0; i < st->nsites; i++)
		st->order[i] = (uint32_t)i;
	if (st->nsites)
		qsort_r(st->order, st->nsites, sizeof(*st->order), cmp_site, &sc);
	return 0;
}

int ga_sites_finish(struct ga_sites *st, struct ga_model *m)
{
	struct ga_map sk = { 0 };
	size_t i;
	int rc = -1;

	if (st->finished)
		return 0;
	st->finished = 1;
	st->kernels += st->kernels_unstacked;
	corr_reset(st, 0);
	if (st->symbolize && sym_passes(st, m, queue_counted))
		goto out;
	/* What a report's notes say (text-sites.c), before the frames sites list (JSON). */
	for (i = 0; i < st->nmods; i++)
		st->mods[i].verdict_sites = st->mods[i].verdict;
	for (i = 0; i < st->ncounts; i++) {
		const struct ga_stack_count *c = &st->counts[i];
		uint32_t stack = c->stack, site, si, fsi, *slot;
		const uint32_t *v;
		int ins;

		st->kernels += c->count;
		if (c->deferred && (v = ga_map_find(&st->gnode_map, c->proc, c->node)))
			stack = *v;
		if (!stack)
			continue;
		st->with_stack += c->count;
		if ((fsi = forward_stack(st, m, c->proc, stack, c->bwd_seq)) != NONE) {
			/* A backward kernel: its forward op's Python site. */
			uint32_t str = backward_text(st, m, fsi);

			site = str == GA_STR_NOMEM ? NONE : site_get(st, str);
			if (site == NONE)
				goto out;
			if (st->sites[site].best == NONE)
				st->sites[site].best = fsi;
			si = NONE;
			st->backward += c->count;
		} else {
			site = site_of_stack(st, m, c->proc, stack, &si);
		}
		if (site == NONE)
			goto out;
		st->sites[site].gpu_ns += c->ns;
		st->sites[site].launches += c->count;
		if (si != NONE)
			st->stacks[si].ns += c->ns;
		ins = ga_map_insert(&sk, site, c->name, &slot);
		if (ins < 0)
			goto out;
		if (ins == 1) {
			if (ga_util_grow(&st->skern, &st->capskern, st->nskern + 1, sizeof(*st->skern)))
				goto out;
			memset(&st->skern[st->nskern], 0, sizeof(*st->skern));
			st->skern[st->nskern].site = site;
			st->skern[st->nskern].name = c->name;
			*slot = (uint32_t)st->nskern++;
			st->sites[site].kernels++;
		}
		st->skern[*slot].count += c->count;
		st->skern[*slot].ns += c->ns;
	}
	/* A site lists the frames of the stack that launched most of its time. */
	for (i = 0; i < st->nstacks; i++) {
		const struct ga_stack *s = &st->stacks[i];
		struct ga_stack_site *x;

		if (!s->site || !s->ns)
			continue;
		x = &st->sites[s->site - 1];
		if (x->best == NONE || s->ns > x->best_ns) {
			x->best = (uint32_t)i;
			x->best_ns = s->ns;
		}
	}
	if (st->symbolize && st->list_frames && sym_passes(st, m, queue_listed))
		goto out;
	for (i = 0; i < st->nsites; i++)
		if (site_frames(st, m, &st->sites[i]))
			goto out;
	rc = ga_sites_order(st, m);
out:
	ga_map_free(&sk);
	return rc;
}

/* ---- output ---- */
