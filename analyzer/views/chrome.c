/*
 * "export --format chrome": Chrome Trace Event JSON, which Perfetto and
 * chrome://tracing open.  GPU activities and API calls stream out as the
 * model reads them; NVTX ranges follow from the finished analysis.  One
 * process per traced process, one track per GPU stream, host threads by
 * their tids.  Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/export.h"

/* GPU streams get thread ids above any Linux tid (pid_max <= 2^22). */
#define GPU_TID_BASE 0x40000000u

struct chrome {
	struct ga_map streams;     /* (proc << 32 | device, context << 32 | stream) -> tid */
	uint32_t nstreams;
	uint8_t *proc_seen;
	size_t capseen;
	uint32_t *chrome_pid;      /* per process: its pid, made unique */
};

static const char *const kind_name[GA_ACT_KIND_COUNT] = {
	[GA_ACT_KERNEL] = "kernel", [GA_ACT_MEMCPY] = "memcpy",
	[GA_ACT_MEMSET] = "memset", [GA_ACT_GRAPH] = "graph",
};

/* A time in microseconds with three decimals, exact for nanoseconds. */
static void kus(struct ga_jw *w, const char *key, uint64_t ns)
{
	ga_jw_key(w, key);
	ga_jw_rawf(w, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void ksid(struct ga_jw *w, const char *key, const struct ga_model *m, uint32_t id)
{
	ga_jw_kstr(w, key, ga_model_str(m, id), ga_strtab_len(&m->strs, id));
}

/* First sight of a process: give it a unique pid and a name. */
static int proc_seen(struct ga_export *e, struct ga_model *m, uint32_t proc)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	const struct ga_proc *p = &m->procs[proc];
	uint32_t pid = p->pid;
	size_t i;
	int clash;

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
	/* Processes of different hosts may share a pid; Perfetto must not merge them. */
	do {
		clash = 0;
		for (i = 0; i < c->capseen; i++)
			if (c->proc_seen[i] && c->chrome_pid[i] == pid) {
				clash = 1;
				pid += 1u << 22;
				break;
			}
	} while (clash);
	c->proc_seen[proc] = 1;
	c->chrome_pid[proc] = pid;

	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_kcstr(w, "name", "process_name");
	ga_jw_kcstr(w, "ph", "M");
	ga_jw_ku64(w, "pid", pid);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	if (p->rank != GA_NO_RANK) {
		struct ga_buf b = { 0 };
		char who[192];

		/* Ranks by name and in rank order (process_sort_index below). */
		if (ga_buf_printf(&b, "%s: %.200s [%u]", ga_ranks_proc_name(m, proc, who, sizeof(who)),
				  p->cmdline ? ga_model_str(m, p->cmdline) : "?", p->pid))
			return -1;
		ga_jw_kstr(w, "name", b.p, b.len);
		ga_buf_free(&b);
	} else if (p->cmdline) {
		struct ga_buf b = { 0 };

		if (ga_buf_printf(&b, "%.200s [%u]", ga_model_str(m, p->cmdline), p->pid))
			return -1;
		ga_jw_kstr(w, "name", b.p, b.len);
		ga_buf_free(&b);
	} else {
		char name[64];

		snprintf(name, sizeof(name), "pid %u", p->pid);
		ga_jw_kcstr(w, "name", name);
	}
	ga_jw_end(w);
	ga_jw_end(w);
	if (p->rank != GA_NO_RANK) {
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", "process_sort_index");
		ga_jw_kcstr(w, "ph", "M");
		ga_jw_ku64(w, "pid", pid);
		ga_jw_key(w, "args");
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "sort_index", p->rank);
		ga_jw_end(w);
		ga_jw_end(w);
	}
	return 0;
}

static int act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_export *e = ctx;
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	uint32_t *slot, pid, tid;
	char kb[16], tname[64];
	int r;

	if (proc_seen(e, m, a->proc))
		return -1;
	pid = c->chrome_pid[a->proc];
	r = ga_map_insert(&c->streams, (uint64_t)a->proc << 32 | a->device_id,
			  (uint64_t)a->context << 32 | a->stream, &slot);
	if (r < 0)
		return -1;
	if (r == 1) {
		*slot = GPU_TID_BASE + c->nstreams++;
		snprintf(tname, sizeof(tname), "cuda:%u stream %u", a->device_id, a->stream);
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", "thread_name");
		ga_jw_kcstr(w, "ph", "M");
		ga_jw_ku64(w, "pid", pid);
		ga_jw_ku64(w, "tid", *slot);
		ga_jw_key(w, "args");
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", tname);
		ga_jw_end(w);
		ga_jw_end(w);
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", "thread_sort_index");
		ga_jw_kcstr(w, "ph", "M");
		ga_jw_ku64(w, "pid", pid);
		ga_jw_ku64(w, "tid", *slot);
		ga_jw_key(w, "args");
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "sort_index", *slot);
		ga_jw_end(w);
		ga_jw_end(w);
	}
	tid = *slot;
	ga_jw_obj(w, GA_JW_COMPACT);
	if (a->kind == GA_ACT_KERNEL)
		ga_jw_kcstr(w, "name", ga_strtab_short(&m->strs, a->name));
	else
		ga_jw_kcstr(w, "name", ga_model_str(m, m->labels[a->label].str));
	ga_jw_kcstr(w, "cat", kind_name[a->kind]);
	ga_jw_kcstr(w, "ph", "X");
	ga_jw_ku64(w, "pid", pid);
	ga_jw_ku64(w, "tid", tid);
	kus(w, "ts", a->start);
	kus(w, "dur", a->end - a->start);
	ga_jw_key(w, "args");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "correlation", a->correlation);
	ga_jw_ku64(w, "device", a->device_id);
	ga_jw_ku64(w, "context", a->context);
	ga_jw_ku64(w, "stream", a->stream);
	if (a->kind == GA_ACT_KERNEL)
		ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, a->name));
	if (a->kind == GA_ACT_MEMCPY || a->kind == GA_ACT_MEMSET)
		ga_jw_ku64(w, "bytes", a->bytes);
	if (a->kind == GA_ACT_MEMCPY)
		ga_jw_kcstr(w, "kind", ga_model_copy_kind(a->copy_kind, kb, sizeof(kb)));
	if (a->graph_id) {
		ga_jw_ku64(w, "graph_id", a->graph_id);
		ga_jw_ku64(w, "graph_node", a->graph_node);
	}
	ga_jw_end(w);
	ga_jw_end(w);
	return ferror(e->out) || w->err ? -1 : 0;
}

static int api(void *ctx, struct ga_model *m, const struct ga_api_call *a)
{
	struct ga_export *e = ctx;
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;

	if (proc_seen(e, m, a->proc))
		return -1;
	ga_jw_obj(w, GA_JW_COMPACT);
	ksid(w, "name", m, a->name);
	ga_jw_kcstr(w, "cat", "api");
	ga_jw_kcstr(w, "ph", "X");
	ga_jw_ku64(w, "pid", c->chrome_pid[a->proc]);
	ga_jw_ku64(w, "tid", a->tid);
	kus(w, "ts", a->start);
	kus(w, "dur", a->end - a->start);
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

/* NVTX ranges as complete events on the thread that opened them. */
static int ranges(struct ga_export *e, struct ga_model *m, const struct ga_ranges *rg)
{
	struct chrome *c = e->state;
	struct ga_jw *w = &e->jw;
	size_t i;

	for (i = 0; i < rg->nranges; i++) {
		const struct ga_ranges_range *r = &rg->ranges[i];
		const struct ga_ranges_key *k = &rg->keys[r->key];

		if (proc_seen(e, m, r->proc))
			return -1;
		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "name", m, k->name);
		ga_jw_kcstr(w, "cat", "nvtx");
		ga_jw_kcstr(w, "ph", "X");
		ga_jw_ku64(w, "pid", c->chrome_pid[r->proc]);
		ga_jw_ku64(w, "tid", r->tid);
		kus(w, "ts", r->start);
		kus(w, "dur", r->end - r->start);
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
		ga_jw_end(w);
	}
	return ferror(e->out) || w->err ? -1 : 0;
}

static int begin(struct ga_export *e)
{
	e->state = calloc(1, sizeof(struct chrome));
	if (!e->state)
		return -1;
	e->an->m.hooks.ctx = e;
	e->an->m.hooks.act = act;
	e->an->m.hooks.api = api;
	ga_jw_obj(&e->jw, GA_JW_COMPACT);
	ga_jw_key(&e->jw, "traceEvents");
	ga_jw_arr(&e->jw, GA_JW_EVENTS);
	return 0;
}

static int end(struct ga_export *e)
{
	if (ranges(e, &e->an->m, &e->an->rg))
		return -1;
	ga_jw_end(&e->jw);
	ga_jw_kcstr(&e->jw, "displayTimeUnit", "ns");
	ga_jw_end(&e->jw);
	fputc('\n', e->out);
	return e->jw.err ? -1 : 0;
}

static void done(struct ga_export *e)
{
	struct chrome *c = e->state;

	if (!c)
		return;
	ga_map_free(&c->streams);
	free(c->proc_seen);
	free(c->chrome_pid);
	free(c);
	e->state = NULL;
}

const struct ga_format ga_format_chrome = {
	.name = "chrome",
	.alias = "perfetto",
	.help = "Chrome Trace Event JSON: open it in https://ui.perfetto.dev\n"
		"or chrome://tracing",
	.begin = begin,
	.end = end,
	.done = done,
};
