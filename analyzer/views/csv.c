/*
 * "export --format csv": one CSV table.  The default, "activities", is one
 * row per GPU activity, sorted by start time (equal starts in the order
 * read), with the innermost NVTX range, the collapsed launch site and the
 * process's host, rank, pid and file.  What a row is made of (72 bytes:
 * its numbers, and its strings by id) goes, as the model reads it, through
 * an external sort by start (base/xsort.h: runs of GA_CSV_RUN bytes
 * spilled packed to an unlinked temporary file); at the end each row's text
 * is made in start order from its numbers and from fields made once (each
 * name, NVTX range and site quoted once, a process's columns once) and
 * written in blocks.  Memory: one run and its index, and the fields,
 * whatever the trace's size; disk: about a quarter of the rows' size.  The
 * others (--table NAME) are the report's tables, written from the finished
 * analysis: kernels, memory, api, nvtx, sites, devices, and of traces
 * recorded with --metrics roofline (per kernel) and metrics (per kernel
 * and metric: every value collected), and of traces recorded with
 * --gpu-metrics or --gpu-telemetry gpu_samples (one row per sample and
 * metric, the long form SQL and dataframes pivot) and gpu_metrics (per
 * device, source and metric: the report's statistics).  Times are integer
 * nanoseconds (columns "_ns"), sizes bytes.  Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xsort.h"
#include "model/hwmetrics.h"
#include "views/formats.h"

#define GA_CSV_RUN (8u << 20) /* bytes of rows sorted in memory at once */
#define GA_CSV_OUT (1u << 20) /* bytes of text gathered before a write */

/*
 * An activity's row as the model reads it: what its text is made of at
 * the end, once the rows are in start order (9 words: xsort packs them).
 */
struct csv_rec {
	uint64_t start, end, bytes, graph_node;
	uint32_t name; /* kernels: the strtab id of the name; else the label */
	uint32_t proc, device_id, context, stream, correlation, graph_id;
	uint32_t nvtx, site; /* strtab ids, 0 none */
	uint16_t kind, copy_kind;
};
_Static_assert(sizeof(struct csv_rec) == 72, "a CSV row is 9 words");

/* A string's field, quoted where CSV needs it, once: off + 1 (0 not yet) and length in pool. */
struct csv_str {
	uint32_t off1, len;
};

struct csv_sort {
	struct ga_xsort rows;
	/* Fields made once: kernels' full names and strtab strings by id, labels by index. */
	struct csv_str *full, *raw, *lab;
	size_t capfull, capraw, caplab;
	/* Each process's ",pid," and ",host,rank,file\n" (pool offsets + 1, lengths). */
	struct csv_str *pid, *tail;
	size_t cappid, captail;
	struct ga_buf pool;
	char *out; /* text gathered for a write */
	size_t nout, capout;
};

static void field(struct ga_export *e, const char *s, size_t len)
{
	e->s.len = 0;
	if (ga_csv_escape(&e->s, s, len) == 0 && e->s.len)
		fwrite(e->s.p, 1, e->s.len, e->out);
}

static void cfield(struct ga_export *e, const char *s)
{
	field(e, s, strlen(s));
}

/* A strtab id's text as a field. */
static void sfield(struct ga_export *e, const struct ga_model *m, uint32_t id)
{
	if (id)
		field(e, ga_model_str(m, id), ga_strtab_len(&m->strs, id));
}

/* host,rank,pid,file of a process (rank empty when unknown). */
static void proc_fields(struct ga_export *e, const struct ga_model *m, uint32_t proc)
{
	const struct ga_proc *p = &m->procs[proc];

	sfield(e, m, p->host);
	fputc(',', e->out);
	if (p->rank != GA_NO_RANK)
		fprintf(e->out, "%u", p->rank);
	fprintf(e->out, ",%u,", p->pid);
	if (p->file < m->nfiles)
		cfield(e, m->files[p->file].path);
}

/*
 * The field of a string (text, len) in pool, made once: *c says where,
 * NULL out of memory (or a pool past 4 GiB).
 */
static const struct csv_str *str_once(struct csv_sort *q, struct csv_str **arr, size_t *cap,
				      uint32_t id, const char *text, size_t len, int escape)
{
	struct csv_str *c;
	size_t off = q->pool.len;

	if (id >= *cap) {
		size_t old = *cap;

		if (ga_util_grow(arr, cap, (size_t)id + 1, sizeof(**arr)))
			return NULL;
		memset(*arr + old, 0, (*cap - old) * sizeof(**arr));
	}
	c = &(*arr)[id];
	if (c->off1)
		return c;
	if ((escape ? ga_csv_escape(&q->pool, text, len) : ga_buf_put(&q->pool, text, len)) ||
	    q->pool.len >= UINT32_MAX)
		return NULL;
	c->off1 = (uint32_t)off + 1;
	c->len = (uint32_t)(q->pool.len - off);
	return c;
}

/* The field of id in arr where made already, else NULL. */
static const struct csv_str *str_have(const struct csv_str *arr, size_t cap, uint32_t id)
{
	return id < cap && arr[id].off1 ? &arr[id] : NULL;
}

/* The field of strtab id (an NVTX range's, a site's), made once. */
static const struct csv_str *raw_field(struct csv_sort *q, const struct ga_model *m, uint32_t id)
{
	const struct csv_str *c = str_have(q->raw, q->capraw, id);

	return c ? c :
		   str_once(q, &q->raw, &q->capraw, id, ga_model_str(m, id),
			    ga_strtab_len(&m->strs, id), 1);
}

/* Process proc's ",pid," and ",host,rank,file\n", made once. */
static int proc_once(struct csv_sort *q, const struct ga_model *m, uint32_t proc,
		     const struct csv_str **pid, const struct csv_str **tail)
{
	const struct ga_proc *p = &m->procs[proc];
	struct ga_buf b = { 0 };
	char d[24];
	int rc;

	if (proc < q->captail && q->tail[proc].off1) {
		*pid = &q->pid[proc];
		*tail = &q->tail[proc];
		return 0;
	}
	rc = ga_buf_put(&b, ",", 1) || ga_buf_put(&b, d, (size_t)(ga_jw_put_u64(d, p->pid) - d)) ||
	     ga_buf_put(&b, ",", 1);
	*pid = rc ? NULL : str_once(q, &q->pid, &q->cappid, proc, b.p, b.len, 0);
	b.len = 0;
	/* host, rank, file: after the older columns, which scripts read by position. */
	rc = ga_buf_put(&b, ",", 1);
	if (!rc && p->host)
		rc = ga_csv_escape(&b, ga_model_str(m, p->host), ga_strtab_len(&m->strs, p->host));
	rc = rc || ga_buf_put(&b, ",", 1);
	if (!rc && p->rank != GA_NO_RANK)
		rc = ga_buf_put(&b, d, (size_t)(ga_jw_put_u64(d, p->rank) - d));
	rc = rc || ga_buf_put(&b, ",", 1);
	if (!rc && p->file < m->nfiles)
		rc = ga_csv_escape(&b, m->files[p->file].path, strlen(m->files[p->file].path));
	rc = rc || ga_buf_put(&b, "\n", 1);
	*tail = rc || !*pid ? NULL : str_once(q, &q->tail, &q->captail, proc, b.p, b.len, 0);
	ga_buf_free(&b);
	return *pid && *tail ? 0 : -1;
}

/* The row of an activity, kept in start order (the model reads by buffer, not by time). */
static int row(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_export *e = ctx;
	struct csv_sort *q = e->state;
	struct csv_rec *r;
	uint32_t site = ga_sites_site_of(&e->an->st, m, a);

	if (site == GA_STR_NOMEM)
		return -1;
	if (!(r = ga_xsort_slot(&q->rows))) {
		fprintf(stderr, "gpuprof: sorting the CSV rows: %s\n", q->rows.err);
		return GA_FORMAT_REPORTED;
	}
	*r = (struct csv_rec){
		.start = a->start,
		.end = a->end,
		.bytes = a->bytes,
		.graph_node = a->graph_node,
		.name = a->kind == GA_ACT_KERNEL ? a->name : a->label,
		.proc = a->proc,
		.device_id = a->device_id,
		.context = a->context,
		.stream = a->stream,
		.correlation = a->correlation,
		.graph_id = a->graph_id,
		.nvtx = a->nvtx,
		.site = site,
		.kind = (uint16_t)a->kind,
		.copy_kind = (uint16_t)a->copy_kind,
	};
	return 0;
}

/* Room for need bytes more of text: what is gathered written out first.  0, or -1. */
static int out_room(struct csv_sort *q, FILE *out, size_t need)
{
	if (q->nout + need <= q->capout)
		return 0;
	if (q->nout && fwrite(q->out, 1, q->nout, out) != q->nout)
		return -1;
	q->nout = 0;
	return need > q->capout ? ga_util_grow(&q->out, &q->capout, need, 1) : 0;
}

static char *put_str(char *o, const struct csv_sort *q, const struct csv_str *c)
{
	memcpy(o, q->pool.p + c->off1 - 1, c->len);
	return o + c->len;
}

/* A number and the comma after it (8 bytes of room past them: ga_jw_put_u64_room()). */
static inline char *put_num(char *o, uint64_t v)
{
	o = ga_jw_put_u64_room(o, v);
	*o = ',';
	return o + 1;
}

/*
 * The rows in start order (equal starts in the order read), each made
 * from fields made once (names, NVTX ranges, sites, a process's columns)
 * and its numbers, gathered into writes of GA_CSV_OUT bytes.
 */
static int rows_out(struct ga_export *e, struct ga_model *m)
{
	struct csv_sort *q = e->state;
	const struct csv_rec *r = NULL;
	size_t n = 0;

	if (ga_xsort_done(&q->rows)) {
		fprintf(stderr, "gpuprof: sorting the CSV rows: %s\n", q->rows.err);
		return GA_FORMAT_REPORTED;
	}
	if (ga_util_grow(&q->out, &q->capout, GA_CSV_OUT, 1))
		return -1;
	for (;; r++, n--) {
		const struct csv_str *name, *nvtx = NULL, *site = NULL, *pid, *tail;
		struct csv_str nvc;
		const char *kind;
		char kb[16], *o;
		size_t kl, need;

		if (!n && !(r = ga_xsort_next_n(&q->rows, &n)))
			break;
		kind = ga_model_act_kind(r->kind);
		kl = strlen(kind);
		if (r->kind == GA_ACT_KERNEL) {
			const char *t;

			if (!(name = str_have(q->full, q->capfull, r->name))) {
				t = ga_strtab_full(&m->strs, r->name);
				name = str_once(q, &q->full, &q->capfull, r->name, t, strlen(t), 1);
			}
		} else if (!(name = str_have(q->lab, q->caplab, r->name))) {
			const char *t = ga_model_str(m, m->labels[r->name].str);

			name = str_once(q, &q->lab, &q->caplab, r->name, t, strlen(t), 1);
		}
		/* The range's field copied: the site's may move the array it is in. */
		if (r->nvtx && (nvtx = raw_field(q, m, r->nvtx))) {
			nvc = *nvtx;
			nvtx = &nvc;
		}
		if (r->site)
			site = raw_field(q, m, r->site);
		if (!name || (r->nvtx && !nvtx) || (r->site && !site) ||
		    proc_once(q, m, r->proc, &pid, &tail))
			return -1;
		/* 12 numbers of 20 digits, their commas and 8 bytes of room, the kinds, the fields. */
		need = 12 * 21 + 8 + kl + sizeof(kb) + 2 + name->len + pid->len + tail->len;
		need += (nvtx ? nvtx->len : 0) + (site ? site->len : 0);
		if (out_room(q, e->out, need))
			return ferror(e->out) ? GA_FORMAT_REPORTED : -1;
		o = q->out + q->nout;
		memcpy(o, kind, kl);
		o += kl;
		*o++ = ',';
		o = put_str(o, q, name);
		*o++ = ',';
		o = put_num(o, r->start);
		o = put_num(o, r->end);
		o = put_num(o, r->end - r->start);
		o = put_num(o, r->device_id);
		o = put_num(o, r->context);
		o = put_num(o, r->stream);
		o = put_num(o, r->correlation);
		if (r->kind == GA_ACT_MEMCPY || r->kind == GA_ACT_MEMSET)
			o = ga_jw_put_u64_room(o, r->bytes);
		*o++ = ',';
		if (r->kind == GA_ACT_MEMCPY) {
			const char *ck = ga_model_copy_kind(r->copy_kind, kb, sizeof(kb));
			size_t cl = strlen(ck);

			memcpy(o, ck, cl);
			o += cl;
		}
		*o++ = ',';
		o = put_num(o, r->graph_id);
		o = ga_jw_put_u64_room(o, r->graph_node);
		o = put_str(o, q, pid);
		if (nvtx)
			o = put_str(o, q, nvtx);
		*o++ = ',';
		if (site)
			o = put_str(o, q, site);
		o = put_str(o, q, tail);
		q->nout = (size_t)(o - q->out);
	}
	if (q->rows.err[0]) {
		fprintf(stderr, "gpuprof: sorting the CSV rows: %s\n", q->rows.err);
		return GA_FORMAT_REPORTED;
	}
	if (q->nout && fwrite(q->out, 1, q->nout, e->out) != q->nout)
		return GA_FORMAT_REPORTED;
	q->nout = 0;
	return ferror(e->out) ? GA_FORMAT_REPORTED : 0;
}

static int is_table(const struct ga_export *e, const char *name)
{
	return e->table && !strcmp(e->table->name, name);
}

static int begin(struct ga_export *e)
{
	struct csv_sort *q;

	if (e->table && !e->table->streams)
		return 0;
	if (!(q = calloc(1, sizeof(*q))))
		return -1;
	e->state = q;
	ga_xsort_init(&q->rows, sizeof(struct csv_rec), GA_CSV_RUN / sizeof(struct csv_rec));
	e->an->m.hooks.ctx = e;
	e->an->m.hooks.act = row;
	fputs("kind,name,start_ns,end_ns,duration_ns,device,context,stream,"
	      "correlation,bytes,copy_kind,graph_id,graph_node,pid,nvtx,stack,"
	      "host,rank,file\n", e->out);
	return 0;
}

static int kernels(struct ga_export *e, struct ga_model *m)
{
	uint32_t *ord = ga_model_order_kernels(m);

	if (!ord)
		return -1;
	fputs("name,short_name,mangled,count,total_ns,avg_ns,med_ns,min_ns,max_ns,in_graph,"
	      "stddev_ns,p90_ns,p99_ns,med_estimated\n", e->out);
	for (size_t i = 0; i < m->nkstats; i++) {
		const struct ga_kstat *k = &m->kstats[ord[i]];

		if (!k->count)
			continue;
		cfield(e, ga_strtab_full(&m->strs, k->name));
		fputc(',', e->out);
		cfield(e, ga_strtab_short(&m->strs, k->name));
		fputc(',', e->out);
		sfield(e, m, k->name);
		fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d\n", k->count,
			k->total, k->total / k->count, k->med, k->min, k->max, k->in_graph, k->stddev,
			k->p90, k->p99, k->med_est);
	}
	free(ord);
	return 0;
}

/* The report's memory table: by kind and memory kinds, with its statistics. */
static int memory(struct ga_export *e, const struct ga_model *m)
{
	uint32_t *ord = ga_model_order_memops(m);
	char kb[16];

	if (!ord)
		return -1;
	fputs("operation,copy_kind,src_kind,dst_kind,count,bytes,total_ns,avg_ns,med_ns,min_ns,"
	      "max_ns,stddev_ns\n", e->out);
	for (size_t i = 0; i < m->nmemops; i++) {
		const struct ga_memop *o = &m->memops[ord[i]];
		int ms = o->kind == GA_MEMOP_MEMSET;

		fprintf(e->out, "%s,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", ms ? "memset" : "memcpy",
			ms ? "" : o->kind == GA_COPY_STAGED_PEER ? "PtoP-staged" :
			ga_model_copy_kind(o->kind, kb, sizeof(kb)),
			ms ? "" : ga_model_mem_kind(o->src), ga_model_mem_kind(o->dst), o->count,
			o->bytes, o->total, o->total / o->count, o->med, o->min, o->max, o->stddev);
	}
	free(ord);
	return 0;
}

/* Launch configurations and their theoretical occupancy (model/launchcfg.h). */
static int launch(struct ga_export *e, struct ga_model *m, const struct ga_launchcfg *l)
{
	uint32_t *ord = ga_launchcfg_order(l, m);

	if (!ord)
		return -1;
	fputs("name,grid_x,grid_y,grid_z,block_x,block_y,block_z,registers,static_smem_bytes,"
	      "dynamic_smem_bytes,count,total_ns,occupancy,blocks_per_sm,limited_by\n", e->out);
	for (size_t i = 0; i < l->nc; i++) {
		const struct ga_lcfg *c = &l->c[ord[i]];

		cfield(e, ga_strtab_full(&m->strs, c->name));
		fprintf(e->out, ",%u,%u,%u,%u,%u,%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",", c->grid[0],
			c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2], c->regs,
			c->static_smem, c->dynamic_smem, c->count, c->total);
		if (c->occupancy >= 0)
			fprintf(e->out, "%.4f", c->occupancy);
		fprintf(e->out, ",%u,%s\n", c->active_blocks,
			c->occupancy >= 0 ? ga_occ_limit_name(c->limit) : "");
	}
	free(ord);
	return 0;
}

/* Launch latency per kernel. */
static int latency(struct ga_export *e, struct ga_model *m, const struct ga_latency *l)
{
	uint32_t *ord = ga_latency_order(l);

	if (!ord)
		return -1;
	fputs("name,count,total_ns,avg_ns,med_ns,min_ns,max_ns,stddev_ns,p90_ns,p99_ns,"
	      "med_estimated\n", e->out);
	for (size_t i = 0; i < l->nk; i++) {
		const struct ga_latency_k *k = &l->k[ord[i]];

		cfield(e, ga_strtab_full(&m->strs, k->name));
		fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d\n", k->count, k->total,
			k->total / k->count, k->med, k->min, k->max, k->stddev, k->p90, k->p99,
			k->med_est);
	}
	free(ord);
	return 0;
}

/* Memory in use per process and device (--trace=...,memory). */
static void memuse(struct ga_export *e, const struct ga_model *m, const struct ga_memuse *mu)
{
	fputs("host,rank,pid,file,device,allocations,frees,allocated_bytes,peak_bytes,peak_ns,"
	      "final_bytes,live_allocations\n", e->out);
	for (size_t i = 0; i < mu->ndevs; i++) {
		const struct ga_memuse_dev *d = &mu->devs[i];

		proc_fields(e, m, d->proc);
		fprintf(e->out, ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 "\n", d->device, d->allocs, d->frees, d->alloc_bytes,
			d->peak, d->peak_ns, d->final, d->live);
	}
}

static int api(struct ga_export *e, const struct ga_model *m)
{
	uint32_t *ord = ga_model_order_api(m);

	if (!ord)
		return -1;
	fputs("name,count,total_ns,avg_ns,med_ns,min_ns,max_ns,errors,threads,stddev_ns,p90_ns,"
	      "p99_ns,med_estimated\n", e->out);
	for (size_t i = 0; i < m->nastats; i++) {
		const struct ga_astat *a = &m->astats[ord[i]];

		if (!a->count)
			continue;
		sfield(e, m, a->name);
		fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d\n",
			a->count, a->total, a->total / a->count, a->med, a->min, a->max, a->errors,
			a->threads, a->stddev, a->p90, a->p99, a->med_est);
	}
	free(ord);
	return 0;
}

/* Ranges by (domain, name), GPU time and kernels inclusive, as in the report. */
static int nvtx(struct ga_export *e, const struct ga_model *m, const struct ga_ranges *rg,
		int filtered)
{
	uint32_t *ord = ga_ranges_order_keys(rg, m);

	if (!ord)
		return -1;
	fputs("domain,name,count,unterminated,cpu_total_ns,cpu_min_ns,cpu_max_ns,gpu_ns,"
	      "activities,kernels,other_threads_gpu_ns,other_threads_kernels\n",
	      e->out);
	for (size_t i = 0; i < rg->nkeys; i++) {
		const struct ga_ranges_key *k = &rg->keys[ord[i]];

		if (!k->count || (filtered && !k->acts))
			continue;
		sfield(e, m, k->domain);
		fputc(',', e->out);
		sfield(e, m, k->name);
		fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", k->count,
			k->unterminated, k->cpu_total, k->cpu_min, k->cpu_max, k->gpu_ns, k->acts,
			k->kernels, k->other_ns, k->other_kernels);
	}
	free(ord);
	return 0;
}

static void sites(struct ga_export *e, const struct ga_model *m, const struct ga_sites *st)
{
	fputs("site,launches,gpu_ns,kernels\n", e->out);
	for (size_t i = 0; i < st->nsites; i++) {
		const struct ga_stack_site *x = &st->sites[st->order[i]];

		sfield(e, m, x->str);
		fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",%u\n", x->launches, x->gpu_ns, x->kernels);
	}
}

/* The device summary: one row per (process, device), busy time per physical GPU. */
static void devices(struct ga_export *e, const struct ga_model *m)
{
	fputs("host,rank,pid,file,device,name,activities,total_ns,busy_ns\n", e->out);
	for (size_t i = 0; i < m->ndevrows; i++) {
		const struct ga_devrow *r = &m->devrows[i];
		const struct ga_device *d = &m->devs[r->dev];

		proc_fields(e, m, r->proc);
		fprintf(e->out, ",%u,", r->id);
		sfield(e, m, d->name);
		fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", r->count, r->total,
			d->busy_ns);
	}
}

/* A double as a field: shortest exact form, empty when unknown. */
static void dfield(struct ga_export *e, double x)
{
	if (isfinite(x))
		fprintf(e->out, "%.17g", x);
}

/* host,rank,pid,file,device,name,mangled,launches of a profiled kernel. */
static void mx_kernel_fields(struct ga_export *e, struct ga_model *m, const struct ga_mx_kernel *k)
{
	const char *full = ga_strtab_full(&m->strs, k->name);

	proc_fields(e, m, k->proc);
	fprintf(e->out, ",%u,", k->device);
	cfield(e, full);
	fputc(',', e->out);
	sfield(e, m, k->name);
	fprintf(e->out, ",%" PRIu64, k->launches);
}

static int roofline(struct ga_export *e, struct ga_model *m, const struct ga_mx *mx)
{
	uint32_t *o = ga_mx_order(mx, m);

	if (!o || mx->oom) {
		free(o);
		return -1;
	}
	fputs("host,rank,pid,file,device,name,mangled,launches,time_ns,cost_ns,passes", e->out);
	for (int c = 0; c < GA_MX_PREC; c++)
		fprintf(e->out, ",%s_flops", gp_peak_key[c]);
	fputs(",dram_read_bytes,dram_write_bytes,dram_bytes,l2_bytes,l1_bytes,sm_clock_hz,flop_s,"
	      "dram_bytes_s,intensity,dominant,pct_of_roof,bound\n", e->out);
	for (size_t i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *k = &mx->k[o[i]];
		const struct ga_mx_peaks *p = ga_mx_peaks_of(mx, k->proc, k->device);
		int dram = (k->have & GA_MX_HAVE_DRAM) != 0;
		struct ga_roof r;

		ga_roof_eval(k->flops, dram ? k->dram_total : 0, k->time_ns, p ? &p->p : NULL, &r);
		mx_kernel_fields(e, m, k);
		fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",%u", k->time_ns, k->cost_ns, k->passes);
		for (int c = 0; c < GA_MX_PREC; c++) {
			fputc(',', e->out);
			dfield(e, k->flops[c]);
		}
		fputc(',', e->out);
		dfield(e, k->dram_read);
		fputc(',', e->out);
		dfield(e, k->dram_write);
		fputc(',', e->out);
		dfield(e, dram ? k->dram_total : NAN);
		fputc(',', e->out);
		dfield(e, (k->have & GA_MX_HAVE_L2) ? k->l2 : NAN);
		fputc(',', e->out);
		dfield(e, (k->have & GA_MX_HAVE_L1) ? k->l1 : NAN);
		fputc(',', e->out);
		dfield(e, k->sm_hz_n ? k->sm_hz / (double)k->sm_hz_n : NAN);
		fputc(',', e->out);
		dfield(e, k->time_ns ? r.flops / ((double)k->time_ns * 1e-9) : NAN);
		fputc(',', e->out);
		dfield(e, k->time_ns && dram ? r.dram_bw : NAN);
		fputc(',', e->out);
		dfield(e, dram ? r.ai : NAN);
		fprintf(e->out, ",%s,", r.dominant >= 0 ? gp_peak_key[r.dominant] : "");
		dfield(e, r.verdict != GA_ROOF_UNKNOWN ? r.pct : NAN);
		fprintf(e->out, ",%s\n", ga_roof_verdict_name(r.verdict));
	}
	free(o);
	return 0;
}

static int metrics(struct ga_export *e, struct ga_model *m, const struct ga_mx *mx)
{
	uint32_t *o = ga_mx_order(mx, m);

	if (!o || mx->oom) {
		free(o);
		return -1;
	}
	fputs("host,rank,pid,file,device,name,mangled,launches,metric,sum,avg\n", e->out);
	for (size_t i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *k = &mx->k[o[i]];

		for (size_t j = 0; j < mx->nnames; j++) {
			if (isnan(k->vals[j]))
				continue; /* not measured for this kernel */
			mx_kernel_fields(e, m, k);
			fputc(',', e->out);
			sfield(e, m, mx->names[j]);
			fputc(',', e->out);
			dfield(e, k->vals[j]);
			fputc(',', e->out);
			dfield(e, k->launches ? k->vals[j] / (double)k->launches : NAN);
			fputc('\n', e->out);
		}
	}
	free(o);
	return 0;
}

/* host,rank,pid,file,device,source of a series of GPU samples. */
static void gs_fields(struct ga_export *e, const struct ga_model *m, const struct ga_gs_series *s)
{
	proc_fields(e, m, s->proc);
	fprintf(e->out, ",%u,%s", s->device, ga_gs_source(s->source));
}

/*
 * The GPU over time, one row per sample and metric read (a value not read
 * is no row): by series (process, device, source), then by start.  Values
 * as recorded: bytes/s, percent, W, MHz, C, bytes; the clock event reasons
 * as their NVML bit mask.
 */
static void gpu_samples(struct ga_export *e, const struct ga_model *m, const struct ga_gpusamples *g)
{
	fputs("host,rank,pid,file,device,source,metric,start_ns,end_ns,value\n", e->out);
	for (size_t i = 0; i < g->nseries; i++) {
		const struct ga_gs_series *s = &g->series[i];

		for (size_t j = 0; j < s->ns; j++) {
			const double *v = s->values + s->s[j].vi;

			for (uint32_t k = 0; k < s->n; k++) {
				if (isnan(v[k]))
					continue;
				gs_fields(e, m, s);
				fputc(',', e->out);
				sfield(e, m, s->m[k].name);
				fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",", s->s[j].start, s->s[j].end);
				dfield(e, v[k]);
				fputc('\n', e->out);
			}
		}
	}
}

/* The report's over-time table: per series and metric, in recorded units. */
static void gpu_metrics(struct ga_export *e, const struct ga_model *m, const struct ga_gpusamples *g)
{
	fputs("host,rank,pid,file,device,source,metric,samples,avg,min,max,first_ns,last_ns,"
	      "status\n", e->out);
	for (size_t i = 0; i < g->nseries; i++) {
		const struct ga_gs_series *s = &g->series[i];

		for (uint32_t k = 0; k < s->n; k++) {
			const struct ga_gs_metric *mt = &s->m[k];

			gs_fields(e, m, s);
			fputc(',', e->out);
			sfield(e, m, mt->name);
			fprintf(e->out, ",%" PRIu64 ",", mt->samples);
			dfield(e, mt->avg);
			fputc(',', e->out);
			dfield(e, mt->min);
			fputc(',', e->out);
			dfield(e, mt->max);
			fprintf(e->out, ",%" PRIu64 ",%" PRIu64 ",", s->first, s->last);
			cfield(e, ga_gs_status(s->status));
			fputc('\n', e->out);
		}
	}
}

static int end(struct ga_export *e)
{
	struct ga_model *m = &e->an->m;
	struct csv_sort *q = e->state;
	int rc = 0;

	if (q)
		return rows_out(e, m);
	if (is_table(e, "kernels"))
		rc = kernels(e, m);
	else if (is_table(e, "memory"))
		rc = memory(e, m);
	else if (is_table(e, "launch"))
		rc = launch(e, m, &e->an->lc);
	else if (is_table(e, "latency"))
		rc = latency(e, m, &e->an->lat);
	else if (is_table(e, "memuse"))
		memuse(e, m, &e->an->mu);
	else if (is_table(e, "api"))
		rc = api(e, m);
	else if (is_table(e, "nvtx"))
		rc = nvtx(e, m, &e->an->rg, ga_analysis_filtered(e->an));
	else if (is_table(e, "sites"))
		sites(e, m, &e->an->st);
	else if (is_table(e, "devices"))
		devices(e, m);
	else if (is_table(e, "roofline"))
		rc = roofline(e, m, &e->an->mx);
	else if (is_table(e, "metrics"))
		rc = metrics(e, m, &e->an->mx);
	else if (is_table(e, "gpu_samples"))
		gpu_samples(e, m, &e->an->gs);
	else if (is_table(e, "gpu_metrics"))
		gpu_metrics(e, m, &e->an->gs);
	return rc;
}

static const struct ga_format_table tables[] = {
	{ "activities", "one row per GPU activity, by start time (the default)", 1, 1 },
	{ "kernels", "per kernel: count, total, avg, median, min, max time", 0, 0 },
	{ "memory", "per operation and memory kinds: count, bytes, time statistics", 0, 0 },
	{ "launch", "per kernel and launch configuration: count, time, occupancy", 0, 0 },
	{ "latency", "per kernel: launch latency statistics (API call to kernel start)", 0, 0 },
	{ "memuse", "per device: allocations, peak and final memory in use", 0, 0 },
	{ "api", "per CUDA API function: count, time statistics, errors, threads", 0, 0 },
	{ "nvtx", "per NVTX range: count, CPU time, GPU time, kernels", 0, 0 },
	{ "sites", "per launch site (gpuprof run --backtrace): launches, GPU time", 0, 0 },
	{ "devices", "per process and device: activities, time, busy time", 0, 0 },
	{ "roofline", "per profiled kernel (--metrics): FLOPs, bytes, rates, verdict", 0, 0 },
	{ "metrics", "per profiled kernel and metric (--metrics): every value collected", 0, 0 },
	{ "gpu_samples", "per GPU sample and metric (--gpu-metrics, --gpu-telemetry)", 0, 0 },
	{ "gpu_metrics", "per device, source and metric over time: samples, avg, min, max", 0, 0 },
	{ NULL, NULL, 0, 0 },
};

static void done(struct ga_export *e)
{
	struct csv_sort *q = e->state;

	if (!q)
		return;
	ga_xsort_free(&q->rows);
	free(q->full);
	free(q->raw);
	free(q->lab);
	free(q->pid);
	free(q->tail);
	ga_buf_free(&q->pool);
	free(q->out);
	free(q);
	e->state = NULL;
}

const struct ga_format ga_format_csv = {
	.name = "csv",
	.help = "one row per GPU activity (kernel, memcpy, memset, graph),\n"
		"or one of the report's tables (--table list)",
	.observe_sites = 1,
	.sites_ahead = 1,
	.samples = 1,
	.tables = tables,
	.begin = begin,
	.end = end,
	.done = done,
};
