/*
 * "gpuprof export": machine-readable forms of one or more traces.
 *   json    the report's numbers (a stable schema scripts and tests rely on)
 *   csv     one row per GPU activity
 *   chrome  Chrome Trace Event JSON, which Perfetto and chrome://tracing open
 * csv and chrome stream activities as the reader delivers them, so they
 * need no memory per record (beyond NVTX attribution's, when the trace has
 * ranges: see nvtx.h, and launch stacks': see stacks.h).  All three honour the filters of filter.h.  Runs
 * offline only.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "output.h"
#include "filter.h"
#include "load.h"
#include "metrics.h"
#include "model.h"
#include "nvtx.h"
#include "stacks.h"
#include "util.h"

enum fmt { FMT_NONE, FMT_JSON, FMT_CSV, FMT_CHROME };

/* GPU streams get thread ids above any Linux tid (pid_max <= 2^22). */
#define GPU_TID_BASE 0x40000000u

struct exp {
	FILE *out;
	struct gp_buf s;           /* scratch for escaping */
	int first;                 /* no event written yet */
	struct gp_map streams;     /* (proc << 32 | device, context << 32 | stream) -> tid */
	uint32_t nstreams;
	uint8_t *proc_seen;
	size_t capseen;
	uint32_t *chrome_pid;      /* per process: its pid, made unique */
	struct gp_stacks *st;      /* launch sites (json, csv) */
	struct gp_mx *mx;          /* hardware metrics (json) */
};

static void help(FILE *f)
{
	fputs("usage: gpuprof export --format json|csv|chrome [-o OUT] FILE...\n\n"
	      "Write one or more gpuprof traces (merged) in a machine-readable form.\n\n"
	      "Formats:\n"
	      "  json     summary numbers: processes, devices, kernels, memory\n"
	      "           operations, graphs, API calls, losses\n"
	      "  csv      one row per GPU activity (kernel, memcpy, memset, graph)\n"
	      "  chrome   Chrome Trace Event JSON: open it in https://ui.perfetto.dev\n"
	      "           or chrome://tracing\n\n"
	      "Options:\n"
	      "  -f, --format FMT  json, csv or chrome (required)\n"
	      "  -o, --output OUT  write to OUT instead of standard output\n"
	      "  --stack-depth N   frames of a launch site (default 3)\n"
	      "  --no-symbolize    do not look launch-site frames up in the debug\n"
	      "                    information of their modules (with addr2line)\n"
	      "  -h, --help        show this help\n"
	      GP_FILTER_HELP
	      "\nNVTX ranges appear as \"nvtx\" and \"marks\" in json, as the \"nvtx\"\n"
	      "column (innermost range) in csv and as host-thread events in chrome.\n"
	      "Call stacks (gpuprof run --backtrace) appear as \"launch_sites\" in json\n"
	      "and as the \"stack\" column (the collapsed launch site) in csv.\n\n"
	      "Exit status: 0 on success (damaged traces export what precedes the\n"
	      "damage, with a warning), 1 when a file cannot be read or the output\n"
	      "cannot be written, 2 on bad usage.\n", f);
}

/* Write s as a JSON string. */
static void jstr(struct exp *e, const char *s, size_t len)
{
	e->s.len = 0;
	if (gp_json_escape(&e->s, s, len) == 0)
		fwrite(e->s.p, 1, e->s.len, e->out);
	else
		fputs("\"\"", e->out);
}

static void jsid(struct exp *e, const struct gp_model *m, uint32_t id)
{
	jstr(e, gp_model_str(m, id), gp_strtab_len(&m->strs, id));
}

static void jcstr(struct exp *e, const char *s)
{
	jstr(e, s, strlen(s));
}

static void cstr(struct exp *e, const char *s, size_t len)
{
	e->s.len = 0;
	if (gp_csv_escape(&e->s, s, len) == 0 && e->s.len)
		fwrite(e->s.p, 1, e->s.len, e->out);
}

/* ---- json ---- */

static void json_uuid(struct exp *e, const uint8_t *u)
{
	fprintf(e->out, "\"GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		"%02x%02x%02x%02x%02x%02x\"", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
		u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* Ranges by (domain, name), GPU time and kernels inclusive, as in the report. */
static int json_nvtx(struct exp *e, struct gp_model *m, const struct gp_nvtx *nx, int filtered)
{
	FILE *o = e->out;
	uint32_t *ord = gp_nvtx_order_keys(nx, m);
	const char *sep = "\n  ";
	size_t i;

	if (!ord)
		return -1;
	fputs("\"nvtx\":[", o);
	for (i = 0; i < nx->nkeys; i++) {
		const struct gp_nvtx_key *k = &nx->keys[ord[i]];

		if (!k->count || (filtered && !k->acts))
			continue;
		fprintf(o, "%s{\"name\":", sep);
		jsid(e, m, k->name);
		fputs(",\"domain\":", o);
		jsid(e, m, k->domain);
		fprintf(o, ",\"count\":%" PRIu64 ",\"cpu_total_ns\":%" PRIu64 ",\"gpu_ns\":%" PRIu64
			",\"kernels\":%" PRIu64 "}", k->count, k->cpu_total, k->gpu_ns, k->kernels);
		sep = ",\n  ";
	}
	free(ord);
	fputs("],\n\"marks\":[", o);
	for (i = 0; i < nx->nmarks; i++) {
		fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", o);
		jsid(e, m, nx->marks[i].name);
		fputs(",\"domain\":", o);
		jsid(e, m, nx->marks[i].domain);
		fprintf(o, ",\"count\":%" PRIu64 "}", nx->marks[i].count);
	}
	fputs("],\n", o);
	return 0;
}

static int write_json(struct exp *e, struct gp_model *m, const struct gp_nvtx *nx,
		      int filtered)
{
	FILE *o = e->out;
	uint32_t *ord;
	const char *sep;
	size_t i;
	char kb[16];

	fputs("{\"files\":[", o);
	for (i = 0; i < m->nfiles; i++) {
		const struct gp_file *f = &m->files[i];

		fputs(i ? ",\n  {\"path\":" : "\n  {\"path\":", o);
		jcstr(e, f->path);
		fprintf(o, ",\"truncated\":%s,\"finished\":%s,\"bytes_unread\":%" PRIu64
			",\"size\":%" PRIu64 ",\"chunks\":%u,\"records\":%" PRIu64 ",\"damage\":",
			f->info.damaged ? "true" : "false", f->info.finished ? "true" : "false",
			f->info.bytes_unread, f->info.file_size, f->info.chunks, f->info.records);
		if (f->info.damaged) {
			fprintf(o, "{\"offset\":%" PRIu64 ",\"reason\":", f->info.stop_offset);
			jcstr(e, f->info.reason);
			fputc('}', o);
		} else {
			fputs("null", o);
		}
		fputc('}', o);
	}

	fputs("],\n\"processes\":[", o);
	for (i = 0; i < m->nprocs; i++) {
		const struct gp_proc *p = &m->procs[i];

		fprintf(o, "%s{\"pid\":%u,\"host\":", i ? ",\n  " : "\n  ", p->pid);
		jsid(e, m, p->host);
		fputs(",\"cmdline\":", o);
		jsid(e, m, p->cmdline);
		if (p->rank == GP_NO_RANK)
			fputs(",\"rank\":null", o);
		else
			fprintf(o, ",\"rank\":%u", p->rank);
		fprintf(o, ",\"ppid\":%u,\"exe\":", p->ppid);
		jsid(e, m, p->exe);
		fprintf(o, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
			",\"finished\":%s,\"cuda_driver\":%u,\"cupti_version\":%u}",
			p->start_ns, p->end_ns, p->finished ? "true" : "false", p->cuda_driver,
			p->cupti_version);
	}

	fputs("],\n\"devices\":[", o);
	sep = "\n  ";
	for (i = 0; i < m->ndevs; i++) {
		const struct gp_device *d = &m->devs[i];

		if (d->dead)
			continue;
		fprintf(o, "%s{\"id\":%u,\"name\":", sep, d->id);
		jsid(e, m, d->name);
		fputs(",\"uuid\":", o);
		json_uuid(e, d->uuid);
		fprintf(o, ",\"cc\":\"%u.%u\",\"sm_count\":%u,\"global_mem\":%" PRIu64
			",\"host\":", d->cc_major, d->cc_minor, d->sm_count, d->global_mem);
		jsid(e, m, d->host);
		fprintf(o, ",\"pid\":%u,\"described\":%s,\"activities\":%" PRIu64
			",\"busy_ns\":%" PRIu64 "}", m->procs[d->proc].pid,
			d->described ? "true" : "false", d->count, d->busy_ns);
		sep = ",\n  ";
	}

	fprintf(o, "],\n\"counts\":{\"kernel\":%" PRIu64 ",\"memcpy\":%" PRIu64
		",\"memset\":%" PRIu64 ",\"graph\":%" PRIu64 ",\"api\":%" PRIu64
		",\"records\":%" PRIu64 "},\n", m->counts[GP_ACT_KERNEL],
		m->counts[GP_ACT_MEMCPY], m->counts[GP_ACT_MEMSET], m->counts[GP_ACT_GRAPH],
		m->api_count, m->records);
	fprintf(o, "\"lost\":{\"total\":%" PRIu64 ",\"cupti_dropped\":%" PRIu64
		",\"ring_full\":%" PRIu64 ",\"no_timestamp\":%" PRIu64 ",\"write_error\":%"
		PRIu64 ",\"no_buffer\":%" PRIu64 ",\"cupti_error\":%" PRIu64
		",\"other\":%" PRIu64 ",\"unattributed\":%" PRIu64 "},\n",
		gp_model_lost_total(m), m->lost[GP_LOST_CUPTI_DROPPED],
		m->lost[GP_LOST_RING_FULL], m->lost[GP_LOST_NO_TIMESTAMP],
		m->lost[GP_LOST_WRITE_ERROR], m->lost[GP_LOST_NO_BUFFER],
		m->lost[GP_LOST_CUPTI_ERROR], m->lost[0], gp_model_lost_unattributed(m));

	ord = gp_model_order_kernels(m);
	if (!ord)
		return -1;
	fputs("\"kernels\":[", o);
	for (i = 0; i < m->nkstats; i++) {
		const struct gp_kstat *k = &m->kstats[ord[i]];
		const char *full = gp_strtab_full(&m->strs, k->name);

		fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", o);
		jcstr(e, full);
		fputs(",\"short\":", o);
		jcstr(e, gp_strtab_short(&m->strs, k->name));
		fputs(",\"mangled\":", o);
		jsid(e, m, k->name);
		fprintf(o, ",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"avg_ns\":%" PRIu64
			",\"med_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
			",\"in_graph\":%" PRIu64 "}", k->count, k->total, k->total / k->count,
			k->med, k->min, k->max, k->in_graph);
	}
	free(ord);

	fputs("],\n\"memcpy\":[", o);
	sep = "\n  ";
	for (i = 0; i < GP_COPY_KIND_MAX; i++) {
		const struct gp_memstat *s = &m->copy[i];

		if (!s->count)
			continue;
		fprintf(o, "%s{\"kind\":", sep);
		jcstr(e, gp_model_copy_kind((unsigned)i, kb, sizeof(kb)));
		fprintf(o, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"total_ns\":%" PRIu64
			"}", s->count, s->bytes, s->total);
		sep = ",\n  ";
	}
	fprintf(o, "],\n\"memset\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"total_ns\":%" PRIu64 "},\n", m->memset_st.count, m->memset_st.bytes,
		m->memset_st.total);

	fputs("\"graphs\":[", o);
	sep = "\n  ";
	for (i = 0; i < m->ngraphs; i++) {
		const struct gp_gstat *g = &m->graphs[i];

		if (!g->launches)
			continue;
		fprintf(o, "%s{\"graph_id\":%u,\"launches\":%" PRIu64 ",\"total_ns\":%" PRIu64
			",\"pid\":%u}", sep, g->graph_id, g->launches, g->total,
			m->procs[g->proc].pid);
		sep = ",\n  ";
	}
	fputs("],\n\"graph_nodes\":[", o);
	sep = "\n  ";
	for (i = 0; i < m->ngraphs; i++) {
		const struct gp_gstat *g = &m->graphs[i];

		if (!g->kernels)
			continue;
		fprintf(o, "%s{\"graph_id\":%u,\"nodes\":%" PRIu64 ",\"kernels\":%" PRIu64
			",\"pid\":%u}", sep, g->graph_id, g->nodes, g->kernels,
			m->procs[g->proc].pid);
		sep = ",\n  ";
	}

	ord = gp_model_order_api(m);
	if (!ord)
		return -1;
	fputs("],\n\"api\":[", o);
	for (i = 0; i < m->nastats; i++) {
		const struct gp_astat *a = &m->astats[ord[i]];

		fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", o);
		jsid(e, m, a->name);
		fprintf(o, ",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"errors\":%" PRIu64
			",\"threads\":%" PRIu64 ",\"avg_ns\":%" PRIu64 ",\"med_ns\":%" PRIu64
			",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}", a->count, a->total,
			a->errors, a->threads, a->total / a->count, a->med, a->min, a->max);
	}
	free(ord);
	fputs("],\n", o);
	if (json_nvtx(e, m, nx, filtered) || gp_stacks_json(e->st, m, o))
		return -1;
	fputs(",\n", o);
	/* Only traces recorded with --metrics have it: older schemas stay as they were. */
	if (e->mx->oom || (gp_mx_any(e->mx) && gp_mx_json(e->mx, m, o)))
		return -1;
	if (gp_mx_any(e->mx))
		fputs(",\n", o);
	fprintf(o, "\"streams\":%" PRIu64 ", \"api_threads\":%" PRIu64 ", \"span_ns\":%"
		PRIu64 ", \"first_ns\":%" PRIu64 ", \"last_ns\":%" PRIu64 "}\n",
		m->streams, m->api_threads, m->last_end - m->first_start, m->first_start,
		m->last_end);
	return 0;
}

/* ---- csv ---- */

static const char *const kind_name[GP_ACT_KIND_COUNT] = {
	[GP_ACT_KERNEL] = "kernel", [GP_ACT_MEMCPY] = "memcpy",
	[GP_ACT_MEMSET] = "memset", [GP_ACT_GRAPH] = "graph",
};

static int csv_act(void *ctx, struct gp_model *m, const struct gp_act *a)
{
	struct exp *e = ctx;
	FILE *o = e->out;
	char kb[16];
	const char *name;
	uint32_t site;

	if (a->kind == GP_ACT_KERNEL)
		name = gp_strtab_full(&m->strs, a->name);
	else
		name = gp_model_str(m, m->labels[a->label].str);
	fprintf(o, "%s,", kind_name[a->kind]);
	cstr(e, name, strlen(name));
	fprintf(o, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,%u,%u,", a->start, a->end,
		a->end - a->start, a->device_id, a->context, a->stream, a->correlation);
	if (a->kind == GP_ACT_MEMCPY || a->kind == GP_ACT_MEMSET)
		fprintf(o, "%" PRIu64, a->bytes);
	fputc(',', o);
	if (a->kind == GP_ACT_MEMCPY)
		fputs(gp_model_copy_kind(a->copy_kind, kb, sizeof(kb)), o);
	fprintf(o, ",%u,%" PRIu64 ",%u,", a->graph_id, a->graph_node, m->procs[a->proc].pid);
	if (a->nvtx)
		cstr(e, gp_model_str(m, a->nvtx), gp_strtab_len(&m->strs, a->nvtx));
	fputc(',', o);
	site = gp_stacks_site_of(e->st, m, a);
	if (site == GP_STR_NOMEM)
		return -1;
	if (site)
		cstr(e, gp_model_str(m, site), gp_strtab_len(&m->strs, site));
	fputc('\n', o);
	return ferror(o) ? -1 : 0;
}

/* ---- chrome ---- */

static void us(FILE *o, uint64_t ns)
{
	fprintf(o, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void event_sep(struct exp *e)
{
	fputs(e->first ? "\n" : ",\n", e->out);
	e->first = 0;
}

/* First sight of a process: give it a unique pid and a name. */
static int chrome_proc(struct exp *e, struct gp_model *m, uint32_t proc)
{
	const struct gp_proc *p = &m->procs[proc];
	uint32_t pid = p->pid;
	size_t i;
	int clash;
	char name[64];

	if (proc < e->capseen && e->proc_seen[proc])
		return 0;
	if (proc >= e->capseen) {
		size_t old = e->capseen;

		if (gp_util_grow(&e->proc_seen, &e->capseen, (size_t)proc + 1, 1))
			return -1;
		memset(e->proc_seen + old, 0, e->capseen - old);
		/* chrome_pid is sized alongside proc_seen. */
		{
			uint32_t *np = realloc(e->chrome_pid, e->capseen * sizeof(*np));

			if (!np)
				return -1;
			e->chrome_pid = np;
		}
	}
	/* Processes of different hosts may share a pid; Perfetto must not merge them. */
	do {
		clash = 0;
		for (i = 0; i < e->capseen; i++)
			if (e->proc_seen[i] && e->chrome_pid[i] == pid) {
				clash = 1;
				pid += 1u << 22;
				break;
			}
	} while (clash);
	e->proc_seen[proc] = 1;
	e->chrome_pid[proc] = pid;

	event_sep(e);
	fprintf(e->out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":",
		pid);
	if (p->cmdline) {
		struct gp_buf b = { 0 };
		const char *cl = gp_model_str(m, p->cmdline);

		if (gp_buf_printf(&b, "%.200s [%u]", cl, p->pid))
			return -1;
		jstr(e, b.p, b.len);
		gp_buf_free(&b);
	} else {
		snprintf(name, sizeof(name), "pid %u", p->pid);
		jcstr(e, name);
	}
	fputs("}}", e->out);
	return 0;
}

static int chrome_act(void *ctx, struct gp_model *m, const struct gp_act *a)
{
	struct exp *e = ctx;
	FILE *o = e->out;
	uint32_t *slot, pid, tid;
	const char *name;
	char kb[16];
	int r;

	if (chrome_proc(e, m, a->proc))
		return -1;
	pid = e->chrome_pid[a->proc];
	r = gp_map_insert(&e->streams, (uint64_t)a->proc << 32 | a->device_id,
			  (uint64_t)a->context << 32 | a->stream, &slot);
	if (r < 0)
		return -1;
	if (r == 1) {
		*slot = GPU_TID_BASE + e->nstreams++;
		event_sep(e);
		fprintf(o, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":\"cuda:%u stream %u\"}}", pid, *slot, a->device_id,
			a->stream);
		event_sep(e);
		fprintf(o, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"sort_index\":%u}}", pid, *slot, *slot);
	}
	tid = *slot;
	if (a->kind == GP_ACT_KERNEL)
		name = gp_strtab_short(&m->strs, a->name);
	else
		name = gp_model_str(m, m->labels[a->label].str);
	event_sep(e);
	fputs("{\"name\":", o);
	jcstr(e, name);
	fprintf(o, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":",
		kind_name[a->kind], pid, tid);
	us(o, a->start);
	fputs(",\"dur\":", o);
	us(o, a->end - a->start);
	fprintf(o, ",\"args\":{\"correlation\":%u,\"device\":%u,\"context\":%u,\"stream\":%u",
		a->correlation, a->device_id, a->context, a->stream);
	if (a->kind == GP_ACT_KERNEL) {
		fputs(",\"name\":", o);
		jcstr(e, gp_strtab_full(&m->strs, a->name));
	}
	if (a->kind == GP_ACT_MEMCPY)
		fprintf(o, ",\"bytes\":%" PRIu64 ",\"kind\":\"%s\"", a->bytes,
			gp_model_copy_kind(a->copy_kind, kb, sizeof(kb)));
	if (a->kind == GP_ACT_MEMSET)
		fprintf(o, ",\"bytes\":%" PRIu64, a->bytes);
	if (a->graph_id)
		fprintf(o, ",\"graph_id\":%u,\"graph_node\":%" PRIu64, a->graph_id, a->graph_node);
	fputs("}}", o);
	return ferror(o) ? -1 : 0;
}

static int chrome_api(void *ctx, struct gp_model *m, const struct gp_api_call *c)
{
	struct exp *e = ctx;
	FILE *o = e->out;

	if (chrome_proc(e, m, c->proc))
		return -1;
	event_sep(e);
	fputs("{\"name\":", o);
	jsid(e, m, c->name);
	fprintf(o, ",\"cat\":\"api\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":",
		e->chrome_pid[c->proc], c->tid);
	us(o, c->start);
	fputs(",\"dur\":", o);
	us(o, c->end - c->start);
	fprintf(o, ",\"args\":{\"correlation\":%u,\"return\":%d}}", c->correlation, c->ret);
	return ferror(o) ? -1 : 0;
}

/* An NVTX payload as a JSON number (null when not finite). */
static void json_payload(FILE *o, uint32_t kind, uint64_t raw)
{
	uint32_t r32 = (uint32_t)raw;
	double d = 0;
	float f;

	switch (kind) {
	case GP_NVTX_PAYLOAD_U64:
		fprintf(o, "%" PRIu64, raw);
		return;
	case GP_NVTX_PAYLOAD_I64:
		fprintf(o, "%" PRId64, (int64_t)raw);
		return;
	case GP_NVTX_PAYLOAD_U32:
		fprintf(o, "%" PRIu32, r32);
		return;
	case GP_NVTX_PAYLOAD_I32:
		fprintf(o, "%" PRId32, (int32_t)r32);
		return;
	case GP_NVTX_PAYLOAD_F64:
		memcpy(&d, &raw, 8);
		break;
	case GP_NVTX_PAYLOAD_F32:
		memcpy(&f, &r32, 4);
		d = f;
		break;
	default:
		fputs("null", o);
		return;
	}
	if (isfinite(d))
		fprintf(o, "%.17g", d);
	else
		fputs("null", o);
}

/* NVTX ranges as complete events on the thread that opened them. */
static int chrome_nvtx(struct exp *e, struct gp_model *m, const struct gp_nvtx *nx)
{
	FILE *o = e->out;
	size_t i;

	for (i = 0; i < nx->nranges; i++) {
		const struct gp_nvtx_range *r = &nx->ranges[i];
		const struct gp_nvtx_key *k = &nx->keys[r->key];

		if (chrome_proc(e, m, r->proc))
			return -1;
		event_sep(e);
		fputs("{\"name\":", o);
		jsid(e, m, k->name);
		fprintf(o, ",\"cat\":\"nvtx\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":",
			e->chrome_pid[r->proc], r->tid);
		us(o, r->start);
		fputs(",\"dur\":", o);
		us(o, r->end - r->start);
		fputs(",\"args\":{\"domain\":", o);
		jsid(e, m, k->domain);
		fprintf(o, ",\"unterminated\":%s", r->flags ? "true" : "false");
		if (r->tid_end && r->tid_end != r->tid)
			fprintf(o, ",\"ended_on_tid\":%u", r->tid_end);
		if (r->category)
			fprintf(o, ",\"category\":%u", r->category);
		if (r->color)
			fprintf(o, ",\"color\":\"#%06x\"", r->color & 0xffffffu);
		if (r->payload_kind) {
			fputs(",\"payload\":", o);
			json_payload(o, r->payload_kind, r->payload);
		}
		fputs("}}", o);
	}
	return ferror(o) ? -1 : 0;
}

static int parse_format(const char *s)
{
	if (!strcmp(s, "json"))
		return FMT_JSON;
	if (!strcmp(s, "csv"))
		return FMT_CSV;
	if (!strcmp(s, "chrome") || !strcmp(s, "perfetto"))
		return FMT_CHROME;
	return FMT_NONE;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "stack-depth", required_argument, NULL, 'D' },
		{ "no-symbolize", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		GP_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL;
	struct gp_model m;
	struct gp_nvtx nx;
	struct gp_filter flt;
	struct gp_stacks st;
	struct gp_mx mx;
	struct exp e;
	struct gp_output out;
	char ferr[512], *end;
	long depth = GP_STACKS_DEPTH;
	int c, fmt = FMT_NONE, rc = GP_EXIT_OK, failed, symbolize = 1;

	opterr = 0;
	optind = 0;
	gp_filter_init(&flt);
	while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
		switch (gp_filter_option(&flt, c, optarg, ferr, sizeof(ferr))) {
		case 1:
			continue;
		case -1:
			fprintf(stderr, "gpuprof export: %s\n", ferr);
			gp_filter_free(&flt);
			return GP_EXIT_USAGE;
		}
		switch (c) {
		case 'f':
			fmt = parse_format(optarg);
			if (fmt == FMT_NONE) {
				fprintf(stderr, "gpuprof export: unknown format '%s' (json, csv or "
					"chrome)\n", optarg);
				gp_filter_free(&flt);
				return GP_EXIT_USAGE;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'D':
			depth = strtol(optarg, &end, 10);
			if (*end || !*optarg || depth < 1 || depth > GP_STACKS_MAX_FRAMES) {
				fprintf(stderr, "gpuprof export: --stack-depth needs a number from 1 "
					"to %d, not '%s'\n", GP_STACKS_MAX_FRAMES, optarg);
				gp_filter_free(&flt);
				return GP_EXIT_USAGE;
			}
			break;
		case 'S':
			symbolize = 0;
			break;
		case 'h':
			help(stdout);
			gp_filter_free(&flt);
			return GP_EXIT_OK;
		default:
			gp_filter_free(&flt);
			if (optopt == 'f' || optopt == 'o')
				fprintf(stderr, "gpuprof export: option -%c needs a value\n", optopt);
			else if (optopt)
				fprintf(stderr, "gpuprof export: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "gpuprof export: unknown option '%s'\n", argv[optind - 1]);
			fputs("Try 'gpuprof export --help'.\n", stderr);
			return GP_EXIT_USAGE;
		}
	}
	if (fmt == FMT_NONE || optind >= argc) {
		gp_filter_free(&flt);
		fputs(fmt == FMT_NONE ? "gpuprof export: --format json|csv|chrome is required\n" :
		      "gpuprof export: no trace file given\n", stderr);
		fputs("Try 'gpuprof export --help'.\n", stderr);
		return GP_EXIT_USAGE;
	}
	gp_nvtx_init(&nx);
	gp_stacks_setup(&st, (unsigned)depth);
	st.symbolize = symbolize;
	st.list_frames = fmt == FMT_JSON;
	if (gp_model_init(&m)) {
		gp_filter_free(&flt);
		fputs("gpuprof: out of memory\n", stderr);
		return GP_EXIT_FAIL;
	}
	memset(&e, 0, sizeof(e));
	e.first = 1;
	if (gp_output_open(&out, outpath, argv + optind, argc - optind)) {
		gp_model_free(&m);
		gp_nvtx_free(&nx);
		gp_stacks_free(&st);
		gp_filter_free(&flt);
		return GP_EXIT_FAIL;
	}
	e.out = out.f;

	m.hooks.ctx = &e;
	e.st = &st;
	if (fmt != FMT_CHROME)
		gp_stacks_bind(&st, &m);
	gp_mx_init(&mx);
	e.mx = &mx;
	if (fmt == FMT_JSON)
		gp_mx_bind(&mx, &m);
	if (fmt == FMT_CSV) {
		m.hooks.act = csv_act;
		fputs("kind,name,start_ns,end_ns,duration_ns,device,context,stream,"
		      "correlation,bytes,copy_kind,graph_id,graph_node,pid,nvtx,stack\n", e.out);
	} else if (fmt == FMT_CHROME) {
		m.hooks.act = chrome_act;
		m.hooks.api = chrome_api;
		fputs("{\"traceEvents\":[", e.out);
	}
	/* Rows stream out before the stacks they name: read those first. */
	failed = fmt == FMT_CSV && (gp_stacks_scan(&st, &m, argv + optind, argc - optind) ||
				    gp_stacks_symbolize(&st, &m));
	if (failed)
		fputs("gpuprof: out of memory\n", stderr);
	if (!failed)
		failed = gp_filter_load(&flt, &nx, &m, argv + optind, argc - optind);
	if (!failed && fmt == FMT_CHROME && chrome_nvtx(&e, &m, &nx))
		failed = 1;
	if (!failed && fmt == FMT_CHROME)
		fputs("\n],\"displayTimeUnit\":\"ns\"}\n", e.out);
	if (!failed && fmt == FMT_JSON && (gp_stacks_finish(&st, &m) ||
					   write_json(&e, &m, &nx, gp_filter_active(&flt)))) {
		fputs("gpuprof: out of memory\n", stderr);
		failed = 1;
	}
	/* On failure the old output, if any, stays as it was. */
	if (gp_output_close(&out, !failed))
		failed = 1;
	if (failed)
		rc = GP_EXIT_FAIL;
	gp_buf_free(&e.s);
	gp_map_free(&e.streams);
	free(e.proc_seen);
	free(e.chrome_pid);
	gp_model_free(&m);
	gp_nvtx_free(&nx);
	gp_stacks_free(&st);
	gp_mx_free(&mx);
	gp_filter_free(&flt);
	return rc;
}
