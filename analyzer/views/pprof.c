/*
 * "export --format pprof": the GPU time of the traces as a pprof profile
 * (github.com/google/pprof, proto/profile.proto), gzip-compressed, the
 * form `go tool pprof`, Parca and Pyroscope read.
 *
 * Two sample types, gpu_time (nanoseconds, the default) and launches
 * (count); one sample per (process, launch call stack, kernel or memory
 * operation), labelled with the process id.  Its locations, leaf first:
 * the kernel (its demangled name; the mangled one as system name), or
 * "[memcpy HtoD]", "[memset]", "[graph N]" for copies, memsets and whole
 * graphs; then the program's frames of the launch call stack (gpuprof
 * run --backtrace), innermost first, past the recorder's, CUPTI's, the
 * driver's and the runtime's as launch sites start.  Native frames are
 * function (demangled), file and line where symbolization found them
 * (model/sites.h), "module+0xOFF" where not, in a mapping of their module
 * with its path and GNU build-id (hex) as the trace recorded them; Python
 * frames are functions with their file and line and no mapping.  Every
 * mapping says it has functions, files and lines, so that pprof does not
 * look addresses up again.  The sum of gpu_time is the GPU time of every
 * activity the report's activity summary lists (kernels, copies,
 * memsets, whole graphs), and launches their count.
 *
 * The protobuf encoding is written here (a few lines: varints and
 * length-delimited fields; the profile is built in memory, one message
 * at a time), the gzip member by zlib.  Runs offline only.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "model/sites.h"
#include "views/formats.h"
#include "views/pprof.h"

/* ---- protobuf encoding (wire types 0 and 2) ---- */

static int pb_varint(struct ga_buf *b, uint64_t v)
{
	uint8_t x[10];
	size_t n = 0;

	do {
		x[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			x[n] |= 0x80;
		n++;
	} while (v);
	return ga_buf_put(b, x, n);
}

/* A varint field; zero is the default and is left out. */
static int pb_u64(struct ga_buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return 0;
	return pb_varint(b, (uint64_t)field << 3) || pb_varint(b, v);
}

static int pb_bytes(struct ga_buf *b, unsigned field, const void *p, size_t len)
{
	return pb_varint(b, (uint64_t)field << 3 | 2) || pb_varint(b, len) ||
	       (len && ga_buf_put(b, p, len));
}

/* A nested message, then the scratch buffer emptied. */
static int pb_msg(struct ga_buf *b, unsigned field, struct ga_buf *sub)
{
	int rc = pb_bytes(b, field, sub->p, sub->len);

	sub->len = 0;
	return rc;
}

/* ---- gathering ---- */

#define NONE UINT32_MAX

static int leaf_of(struct ga_pprof *p, const struct ga_act *a, uint32_t *leaf)
{
	uint32_t id = a->kind == GA_ACT_KERNEL ? a->name : a->label, *slot;
	int ins = ga_map_insert(&p->lmap, a->kind, id, &slot);

	if (ins < 0)
		return -1;
	if (ins) {
		if (ga_util_grow(&p->leaves, &p->capleaves, p->nleaves + 1, sizeof(*p->leaves)))
			return -1;
		p->leaves[p->nleaves].kind = a->kind;
		p->leaves[p->nleaves].id = id;
		*slot = (uint32_t)p->nleaves++;
	}
	*leaf = *slot;
	return 0;
}

static int act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_pprof *p = ctx;
	const struct ga_sites *st = &p->an->st;
	uint32_t leaf, stack, *slot;
	int deferred, ins;

	(void)m;
	if (a->kind >= GA_ACT_KIND_COUNT)
		return 0;
	if (leaf_of(p, a, &leaf))
		goto nomem;
	stack = ga_sites_stack_of(st, a);
	/* A graph node's own stack may come later (GRAPH_NODE records): settled at the end. */
	deferred = a->graph_id && a->graph_node &&
		   !(st->gnode_map.n && ga_map_find(&st->gnode_map, a->proc, a->graph_node));
	if (deferred)
		ins = ga_map_insert(&p->dmap, (uint64_t)a->proc << 32 | leaf, a->graph_node, &slot);
	else
		ins = ga_map_insert(&p->smap, (uint64_t)a->proc << 32 | stack, leaf, &slot);
	if (ins < 0)
		goto nomem;
	if (ins) {
		struct ga_pprof_sample *s;

		if (ga_util_grow(&p->s, &p->caps, p->ns + 1, sizeof(*p->s)))
			goto nomem;
		s = &p->s[p->ns];
		memset(s, 0, sizeof(*s));
		s->proc = a->proc;
		s->stack = stack;
		s->leaf = leaf;
		s->deferred = (uint32_t)deferred;
		s->node = a->graph_node;
		*slot = (uint32_t)p->ns++;
		/* Copies and memsets are no kernels: ask for their frames' names too. */
		if (stack && a->kind != GA_ACT_KERNEL && ga_sites_want(&p->an->st, a->proc, stack))
			goto nomem;
	}
	p->s[*slot].count++;
	p->s[*slot].ns += a->end - a->start;
	p->total_count++;
	p->total_ns += a->end - a->start;
	return 0;
nomem:
	p->nomem = 1;
	return 1;
}

int ga_pprof_begin(struct ga_pprof *p, struct ga_analysis *an)
{
	memset(p, 0, sizeof(*p));
	p->an = an;
	an->m.hooks.ctx = p;
	an->m.hooks.act = act;
	/* Whole stacks: every frame a sample lists is looked up, not a site's first few. */
	an->st.depth = GA_SITES_MAX_FRAMES;
	return 0;
}

void ga_pprof_free(struct ga_pprof *p)
{
	free(p->s);
	free(p->leaves);
	ga_map_free(&p->smap);
	ga_map_free(&p->dmap);
	ga_map_free(&p->lmap);
	memset(p, 0, sizeof(*p));
}

/* ---- the profile's tables ---- */

struct fn {
	uint32_t name, sys, file;  /* strtab ids */
};

struct loc {
	uint32_t mapping, fn, line;  /* ids (1-based), 0 none */
	uint64_t address;
};

struct mapping {
	uint64_t start, limit;
	uint32_t file, build_id;   /* strtab ids */
};

struct prof {
	struct ga_model *m;
	uint32_t *strs;            /* strtab ids in string-table order; [0] is "" */
	size_t nstrs, capstrs;
	struct ga_map smap;        /* strtab id -> string index */
	struct fn *fns;
	size_t nfns, capfns;
	struct ga_map fmap;        /* (name, file) -> function id */
	struct loc *locs;
	size_t nlocs, caplocs;
	struct ga_map locmap;      /* (proc, pc) -> location id; leaves: (~0, leaf) */
	struct mapping *maps;
	size_t nmaps, capmaps;
	struct ga_map mapmap;      /* (proc, load base) -> mapping id */
	uint64_t *ids;             /* a sample's location ids */
	size_t nids, capids;
};

/* String index of strtab id (interning in the table).  NONE out of memory. */
static uint32_t str_index(struct prof *x, uint32_t id)
{
	uint32_t *slot;
	int ins;

	if (!id)
		return 0;
	ins = ga_map_insert(&x->smap, id, 0, &slot);
	if (ins < 0)
		return NONE;
	if (ins) {
		if (ga_util_grow(&x->strs, &x->capstrs, x->nstrs + 1, sizeof(*x->strs)))
			return NONE;
		x->strs[x->nstrs] = id;
		*slot = (uint32_t)x->nstrs++;
	}
	return *slot;
}

static uint32_t intern(struct prof *x, const char *s)
{
	return ga_strtab_intern(&x->m->strs, s, strlen(s));
}

/* Function id of (name, system name, file), strtab ids.  0 out of memory. */
static uint32_t fn_id(struct prof *x, uint32_t name, uint32_t sys, uint32_t file)
{
	uint32_t *slot;
	int ins;

	if (name == GA_STR_NOMEM || sys == GA_STR_NOMEM || file == GA_STR_NOMEM)
		return 0;
	ins = ga_map_insert(&x->fmap, (uint64_t)name << 32 | sys, file, &slot);
	if (ins < 0)
		return 0;
	if (ins) {
		if (ga_util_grow(&x->fns, &x->capfns, x->nfns + 1, sizeof(*x->fns)))
			return 0;
		x->fns[x->nfns].name = name;
		x->fns[x->nfns].sys = sys;
		x->fns[x->nfns].file = file;
		*slot = (uint32_t)++x->nfns;
	}
	return *slot;
}

/* A new location (ids 1-based); 0 out of memory. */
static uint32_t loc_new(struct prof *x, uint32_t mapping, uint32_t fn, uint32_t line,
			uint64_t address)
{
	if (!fn || ga_util_grow(&x->locs, &x->caplocs, x->nlocs + 1, sizeof(*x->locs)))
		return 0;
	x->locs[x->nlocs].mapping = mapping;
	x->locs[x->nlocs].fn = fn;
	x->locs[x->nlocs].line = line;
	x->locs[x->nlocs].address = address;
	return (uint32_t)++x->nlocs;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The mapping of a native frame's module (proc, load base).  0 none, NONE out of memory. */
static uint32_t mapping_of(struct prof *x, const struct ga_sites *st, uint32_t proc,
			   uint64_t pc, const struct ga_stack_frame *f)
{
	uint64_t base = pc - f->offset;
	const uint32_t *v = ga_map_find(&st->mod_map, proc, base);
	uint32_t *slot, file = f->module, bid = 0;
	struct mapping *mp;
	int ins;

	if (!f->module)
		return 0;
	ins = ga_map_insert(&x->mapmap, proc, base, &slot);
	if (ins < 0)
		return NONE;
	if (ins) {
		if (v) {
			const struct ga_sites_mod *md = &st->mods[*v];
			char hex[2 * GP_BUILD_ID_MAX + 1];
			uint32_t i;

			if (md->path)
				file = md->path;
			for (i = 0; i < md->nid && i < GP_BUILD_ID_MAX; i++)
				snprintf(hex + 2 * i, 3, "%02x", md->id[i]);
			hex[2 * i] = 0;
			if (i && (bid = intern(x, hex)) == GA_STR_NOMEM)
				return NONE;
		}
		if (ga_util_grow(&x->maps, &x->capmaps, x->nmaps + 1, sizeof(*x->maps)))
			return NONE;
		mp = &x->maps[x->nmaps];
		mp->start = base;
		mp->limit = pc + 1;
		mp->file = file;
		mp->build_id = bid;
		*slot = (uint32_t)++x->nmaps;
	}
	mp = &x->maps[*slot - 1];
	if (pc >= mp->limit)
		mp->limit = pc + 1;
	return *slot;
}

/* Location id of frame pc of proc.  0 out of memory. */
static uint32_t frame_loc(struct prof *x, const struct ga_sites *st, uint32_t proc, uint64_t pc)
{
	const uint32_t *v = ga_map_find(&st->frame_map, proc, pc);
	const struct ga_stack_frame *f = v ? &st->frames[*v] : NULL;
	struct ga_model *m = x->m;
	uint32_t *slot, fn, mapping = 0, line = 0;
	uint64_t address = 0;
	char buf[512];
	int ins;

	ins = ga_map_insert(&x->locmap, proc, pc, &slot);
	if (ins < 0)
		return 0;
	if (!ins)
		return *slot;
	if (!f) {
		snprintf(buf, sizeof(buf), (pc & GP_PYFRAME_BIT) ? "(unknown Python frame)" :
			 "0x%" PRIx64, pc);
		fn = fn_id(x, intern(x, buf), 0, 0);
	} else if (f->python) {
		fn = fn_id(x, f->function ? f->function : intern(x, "?"), 0, f->file);
		line = f->line;
	} else {
		mapping = mapping_of(x, st, proc, pc, f);
		if (mapping == NONE)
			return 0;
		address = pc;
		if (f->function) {
			fn = fn_id(x, intern(x, ga_strtab_full(&m->strs, f->function)), f->function,
				   f->file);
			line = f->file ? f->line : 0;
		} else {
			if (f->module)
				snprintf(buf, sizeof(buf), "%s+0x%" PRIx64,
					 base_name(ga_model_str(m, f->module)), f->offset);
			else
				snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
			fn = fn_id(x, intern(x, buf), 0, f->file);
			line = f->file ? f->line : 0;
		}
	}
	*slot = loc_new(x, mapping, fn, line, address);
	return *slot;
}

/* Location id of a sample's leaf: the kernel, or the memory operation.  0 out of memory. */
static uint32_t leaf_loc(struct prof *x, const struct ga_pprof_leaf *l, uint32_t leaf)
{
	struct ga_model *m = x->m;
	uint32_t *slot, fn;
	char buf[256];
	int ins = ga_map_insert(&x->locmap, UINT64_MAX, leaf, &slot);

	if (ins < 0)
		return 0;
	if (!ins)
		return *slot;
	if (l->kind == GA_ACT_KERNEL) {
		fn = fn_id(x, intern(x, ga_strtab_full(&m->strs, l->id)), l->id, 0);
	} else {
		snprintf(buf, sizeof(buf), "[%s]", ga_model_str(m, m->labels[l->id].str));
		fn = fn_id(x, intern(x, buf), 0, 0);
	}
	*slot = loc_new(x, 0, fn, 0, 0);
	return *slot;
}

/* One sample: its locations (leaf first), values and pid label, into out. */
static int sample(struct prof *x, struct ga_pprof *p, const struct ga_pprof_sample *s,
		  struct ga_buf *out, struct ga_buf *sub, struct ga_buf *lab, uint32_t pid_key)
{
	const struct ga_sites *st = &p->an->st;
	uint32_t stack = s->stack, n = 0, i, id;
	const uint64_t *pcs = NULL;
	const uint32_t *v;

	if (s->deferred && (v = ga_map_find(&st->gnode_map, s->proc, s->node)))
		stack = *v;
	x->nids = 0;
	if (ga_util_grow(&x->ids, &x->capids, 1, sizeof(*x->ids)))
		return -1;
	if (!(id = leaf_loc(x, &p->leaves[s->leaf], s->leaf)))
		return -1;
	x->ids[x->nids++] = id;
	if (stack && ga_sites_user_frames(st, x->m, s->proc, stack, &pcs, &n))
		n = 0;
	for (i = 0; i < n; i++) {
		if (ga_util_grow(&x->ids, &x->capids, x->nids + 1, sizeof(*x->ids)) ||
		    !(id = frame_loc(x, st, s->proc, pcs[i])))
			return -1;
		x->ids[x->nids++] = id;
	}
	/* Packed location ids, packed values, a label. */
	for (i = 0; i < x->nids; i++)
		if (pb_varint(lab, x->ids[i]))
			return -1;
	if (pb_msg(sub, 1, lab))
		return -1;
	if (pb_varint(lab, s->ns) || pb_varint(lab, s->count) || pb_msg(sub, 2, lab))
		return -1;
	if (pb_u64(lab, 1, pid_key) || pb_u64(lab, 3, x->m->procs[s->proc].pid) ||
	    pb_msg(sub, 3, lab))
		return -1;
	return pb_msg(out, 2, sub);
}

static int value_type(struct prof *x, struct ga_buf *out, unsigned field, const char *type,
		      const char *unit, struct ga_buf *sub)
{
	uint32_t t = str_index(x, intern(x, type)), u = str_index(x, intern(x, unit));

	if (t == NONE || u == NONE)
		return -1;
	return pb_u64(sub, 1, t) || pb_u64(sub, 2, u) || pb_msg(out, field, sub);
}

static int deflate_gzip(const struct ga_buf *in, struct ga_buf *out)
{
	z_stream z;
	uLong bound;
	int rc;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip member, as pprof reads. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	bound = deflateBound(&z, (uLong)in->len) + 32;
	if (ga_util_grow(&out->p, &out->cap, out->len + bound + 1, 1)) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)(in->len ? in->p : "");
	z.avail_in = (uInt)in->len;
	z.next_out = (Bytef *)out->p + out->len;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	if (rc == Z_STREAM_END)
		out->len += z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}

int ga_pprof_write(struct ga_pprof *p, struct ga_buf *gz)
{
	struct ga_model *m = &p->an->m;
	struct ga_buf out = { 0 }, sub = { 0 }, lab = { 0 };
	struct prof x;
	uint32_t pid_key, i, t;
	int rc = -1;

	if (p->nomem)
		return -1;
	memset(&x, 0, sizeof(x));
	x.m = m;
	/* String 0 is "". */
	if (ga_util_grow(&x.strs, &x.capstrs, 1, sizeof(*x.strs)))
		goto out;
	x.strs[x.nstrs++] = 0;
	if (value_type(&x, &out, 1, "gpu_time", "nanoseconds", &sub) ||
	    value_type(&x, &out, 1, "launches", "count", &sub))
		goto out;
	if ((pid_key = str_index(&x, intern(&x, "pid"))) == NONE)
		goto out;
	for (i = 0; i < p->ns; i++)
		if (sample(&x, p, &p->s[i], &out, &sub, &lab, pid_key))
			goto out;
	for (i = 0; i < x.nmaps; i++) {
		const struct mapping *mp = &x.maps[i];
		uint32_t f = str_index(&x, mp->file), b = str_index(&x, mp->build_id);

		if (f == NONE || b == NONE || pb_u64(&sub, 1, i + 1) ||
		    pb_u64(&sub, 2, mp->start) || pb_u64(&sub, 3, mp->limit) ||
		    pb_u64(&sub, 5, f) || pb_u64(&sub, 6, b) ||
		    /* Names come with the profile: pprof need not look them up. */
		    pb_u64(&sub, 7, 1) || pb_u64(&sub, 8, 1) || pb_u64(&sub, 9, 1) ||
		    pb_msg(&out, 3, &sub))
			goto out;
	}
	for (i = 0; i < x.nlocs; i++) {
		const struct loc *l = &x.locs[i];

		if (pb_u64(&sub, 1, i + 1) || pb_u64(&sub, 2, l->mapping) ||
		    pb_u64(&sub, 3, l->address) || pb_u64(&lab, 1, l->fn) ||
		    pb_u64(&lab, 2, l->line) || pb_msg(&sub, 4, &lab) || pb_msg(&out, 4, &sub))
			goto out;
	}
	for (i = 0; i < x.nfns; i++) {
		const struct fn *f = &x.fns[i];
		uint32_t n = str_index(&x, f->name), s = str_index(&x, f->sys),
			 fl = str_index(&x, f->file);

		if (n == NONE || s == NONE || fl == NONE || pb_u64(&sub, 1, i + 1) ||
		    pb_u64(&sub, 2, n) || pb_u64(&sub, 3, s) || pb_u64(&sub, 4, fl) ||
		    pb_msg(&out, 5, &sub))
			goto out;
	}
	/* The span of the activities; period: one nanosecond of GPU time. */
	if (m->last_end > m->first_start &&
	    (pb_u64(&out, 9, m->first_start) || pb_u64(&out, 10, m->last_end - m->first_start)))
		goto out;
	if (value_type(&x, &out, 11, "gpu_time", "nanoseconds", &sub) || pb_u64(&out, 12, 1))
		goto out;
	if ((t = str_index(&x, intern(&x, "gpu_time"))) == NONE || pb_u64(&out, 14, t))
		goto out;
	/* The string table last: every index above is in it now. */
	for (i = 0; i < x.nstrs; i++) {
		const char *s = i ? ga_model_str(m, x.strs[i]) : "";

		if (pb_bytes(&out, 6, s, i ? ga_strtab_len(&m->strs, x.strs[i]) : 0))
			goto out;
	}
	rc = deflate_gzip(&out, gz);
out:
	ga_buf_free(&out);
	ga_buf_free(&sub);
	ga_buf_free(&lab);
	free(x.strs);
	free(x.fns);
	free(x.locs);
	free(x.maps);
	free(x.ids);
	ga_map_free(&x.smap);
	ga_map_free(&x.fmap);
	ga_map_free(&x.locmap);
	ga_map_free(&x.mapmap);
	return rc;
}

/* ---- the export format ---- */

static int fmt_begin(struct ga_export *e)
{
	struct ga_pprof *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	e->state = p;
	return ga_pprof_begin(p, e->an);
}

static int fmt_end(struct ga_export *e)
{
	struct ga_buf gz = { 0 };
	int rc = -1;

	if (!ga_pprof_write(e->state, &gz)) {
		/* A failed write shows at the output's close, which says so. */
		rc = 0;
		if (gz.len && fwrite(gz.p, 1, gz.len, e->out) != gz.len)
			rc = 0;
	}
	ga_buf_free(&gz);
	return rc;
}

static void fmt_done(struct ga_export *e)
{
	if (e->state)
		ga_pprof_free(e->state);
	free(e->state);
	e->state = NULL;
}

const struct ga_format ga_format_pprof = {
	.name = "pprof",
	.help = "GPU time and launches as a gzipped pprof profile.proto: per kernel\n"
		"and memory operation, the launch call stack as locations (go tool\n"
		"pprof, Parca, Pyroscope)",
	.observe_sites = 1,
	.busy_bound_ok = 1,
	.begin = fmt_begin,
	.end = fmt_end,
	.done = fmt_done,
};
