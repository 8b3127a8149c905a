/*
 * "export --format csv": one CSV table.  The default, "activities", is one
 * row per GPU activity, sorted by start time (equal starts in the order
 * read), with the innermost NVTX range, the collapsed launch site and the
 * process's host, rank, pid and file.  Rows are formatted as the model
 * reads them into a run of at most GA_CSV_RUN bytes; a full run is sorted
 * and spilled to an unlinked temporary file, and the runs are merged at the
 * end (one run that fits is written straight out).  Memory: one run and its
 * index, whatever the trace's size; disk: about the output's size.  The
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

#include "model/hwmetrics.h"
#include "views/formats.h"

#define GA_CSV_RUN (8u << 20)      /* bytes of row text sorted in memory at once */

/* A row of the run being filled: its start, arrival order and place in the text. */
struct csv_key {
	uint64_t start, seq;
	size_t off;
	uint32_t len;
};

/* A spilled run being merged: its file and its current row. */
struct csv_run {
	FILE *f;
	uint64_t start;
	char *line;
	uint32_t len, cap;
};

struct csv_sort {
	FILE *out;                 /* the real output */
	FILE *mem;                 /* the run's text (open_memstream) */
	char *text;
	size_t textlen;
	struct csv_key *k;
	size_t nk, capk;
	uint64_t seq;
	struct csv_run *runs;
	size_t nruns, capruns;
	struct ga_buf row; /* the row being made (row_text()) */
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

/* Decimal digits of v appended to b. */
static int put_u64(struct ga_buf *b, uint64_t v)
{
	char d[24];

	return ga_buf_put(b, d, (size_t)(ga_jw_put_u64(d, v) - d));
}

/* A field appended to b, quoted where CSV needs it. */
static int put_field(struct ga_buf *b, const char *s, size_t len)
{
	return ga_csv_escape(b, s, len);
}

/*
 * An activity's row, made in memory and written with one call (each field
 * went through stdio's formatting, a third of the export's time).
 */
static int row_text(struct ga_export *e, struct ga_model *m, const struct ga_act *a)
{
	struct csv_sort *q = e->state;
	struct ga_buf *b = &q->row;
	const struct ga_proc *p = &m->procs[a->proc];
	const char *name, *kind = ga_model_act_kind(a->kind);
	char kb[16];
	uint32_t site;
	int rc = 0;

	b->len = 0;
	if (a->kind == GA_ACT_KERNEL)
		name = ga_strtab_full(&m->strs, a->name);
	else
		name = ga_model_str(m, m->labels[a->label].str);
	rc |= ga_buf_put(b, kind, strlen(kind)) || ga_buf_put(b, ",", 1);
	rc |= put_field(b, name, strlen(name)) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->start) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->end) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->end - a->start) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->device_id) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->context) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->stream) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->correlation) || ga_buf_put(b, ",", 1);
	if (a->kind == GA_ACT_MEMCPY || a->kind == GA_ACT_MEMSET)
		rc |= put_u64(b, a->bytes);
	rc |= ga_buf_put(b, ",", 1);
	if (a->kind == GA_ACT_MEMCPY) {
		const char *ck = ga_model_copy_kind(a->copy_kind, kb, sizeof(kb));

		rc |= ga_buf_put(b, ck, strlen(ck));
	}
	rc |= ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->graph_id) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, a->graph_node) || ga_buf_put(b, ",", 1);
	rc |= put_u64(b, p->pid) || ga_buf_put(b, ",", 1);
	if (a->nvtx)
		rc |= put_field(b, ga_model_str(m, a->nvtx), ga_strtab_len(&m->strs, a->nvtx));
	rc |= ga_buf_put(b, ",", 1);
	site = ga_sites_site_of(&e->an->st, m, a);
	if (site == GA_STR_NOMEM)
		return -1;
	if (site)
		rc |= put_field(b, ga_model_str(m, site), ga_strtab_len(&m->strs, site));
	rc |= ga_buf_put(b, ",", 1);
	/* host, rank, file: after the older columns, which scripts read by position. */
	if (p->host)
		rc |= put_field(b, ga_model_str(m, p->host), ga_strtab_len(&m->strs, p->host));
	rc |= ga_buf_put(b, ",", 1);
	if (p->rank != GA_NO_RANK)
		rc |= put_u64(b, p->rank);
	rc |= ga_buf_put(b, ",", 1);
	if (p->file < m->nfiles)
		rc |= put_field(b, m->files[p->file].path, strlen(m->files[p->file].path));
	rc |= ga_buf_put(b, "\n", 1);
	if (rc)
		return -1;
	fwrite(b->p, 1, b->len, e->out);
	return ferror(e->out) ? -1 : 0;
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct csv_key *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* An empty run: the text stream (made once, then rewound and reused) and no keys. */
static int run_open(struct csv_sort *q)
{
	q->nk = 0;
	if (q->mem)
		return fseeko(q->mem, 0, SEEK_SET) ? -1 : 0;
	q->mem = open_memstream(&q->text, &q->textlen);
	return q->mem ? 0 : -1;
}

/* An unlinked temporary file in $TMPDIR (else /tmp); NULL after saying why. */
static FILE *spill_file(void)
{
	const char *dir;
	FILE *f = ga_util_tmpfile("csv", &dir);

	if (!f)
		fprintf(stderr, "gpuprof: sorting the CSV rows: a temporary file in %s: %m\n", dir);
	return f;
}

/*
 * Sorts the run and writes it: straight to the output when it is the only
 * one (last and nothing spilled), else to a new spill file as (start,
 * length, text) records.  Returns 0, -1 out of memory, GA_FORMAT_REPORTED.
 */
static int run_flush(struct csv_sort *q, int last)
{
	FILE *f;
	int rc = 0;

	/* The text is where q->text points once flushed. */
	if (fflush(q->mem))
		return -1;
	if (q->nk)
		qsort(q->k, q->nk, sizeof(*q->k), cmp_key);
	if (last && !q->nruns) {
		for (size_t i = 0; i < q->nk; i++)
			fwrite(q->text + q->k[i].off, 1, q->k[i].len, q->out);
	} else if (q->nk) {
		if (ga_util_grow(&q->runs, &q->capruns, q->nruns + 1, sizeof(*q->runs))) {
			rc = -1;
			goto out;
		}
		if (!(f = spill_file())) {
			rc = GA_FORMAT_REPORTED;
			goto out;
		}
		memset(&q->runs[q->nruns], 0, sizeof(q->runs[0]));
		q->runs[q->nruns++].f = f;
		for (size_t i = 0; i < q->nk; i++) {
			fwrite(&q->k[i].start, sizeof(q->k[i].start), 1, f);
			fwrite(&q->k[i].len, sizeof(q->k[i].len), 1, f);
			fwrite(q->text + q->k[i].off, 1, q->k[i].len, f);
		}
		if (fflush(f) || ferror(f) || fseek(f, 0, SEEK_SET)) {
			fprintf(stderr, "gpuprof: sorting the CSV rows: writing a temporary file: %m\n");
			rc = GA_FORMAT_REPORTED;
		}
	}
out:
	if (!rc && !last && run_open(q))
		rc = -1;
	return rc;
}

/* The run's next row into r; 0, or 1 at its end (or a read error, in *err). */
static int run_next(struct csv_run *r, int *err)
{
	if (fread(&r->start, sizeof(r->start), 1, r->f) != 1 ||
	    fread(&r->len, sizeof(r->len), 1, r->f) != 1)
		return 1;
	if (r->len > r->cap) {
		char *p = realloc(r->line, r->len);

		if (!p) {
			*err = -1;
			return 1;
		}
		r->line = p;
		r->cap = r->len;
	}
	if (fread(r->line, 1, r->len, r->f) != r->len) {
		*err = GA_FORMAT_REPORTED;
		fputs("gpuprof: sorting the CSV rows: reading a temporary file back failed\n", stderr);
		return 1;
	}
	return 0;
}

/* Run a before run b: earlier start, equal starts in run (arrival) order. */
static int run_before(const struct csv_run *runs, uint32_t a, uint32_t b)
{
	return runs[a].start != runs[b].start ? runs[a].start < runs[b].start : a < b;
}

static void sift_down(const struct csv_run *runs, uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && run_before(runs, h[l], h[m]))
			m = l;
		if (l + 1 < n && run_before(runs, h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		uint32_t t = h[i];

		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Merges the spilled runs into the output, through a heap of their current rows. */
static int merge_runs(struct csv_sort *q)
{
	uint32_t *h = malloc((q->nruns ? q->nruns : 1) * sizeof(*h));
	size_t n = 0;
	int err = 0;

	if (!h)
		return -1;
	for (size_t i = 0; i < q->nruns && !err; i++)
		if (!run_next(&q->runs[i], &err))
			h[n++] = (uint32_t)i;
	for (size_t i = n; i-- > 0;)
		sift_down(q->runs, h, n, i);
	while (n && !err) {
		struct csv_run *r = &q->runs[h[0]];

		fwrite(r->line, 1, r->len, q->out);
		if (run_next(r, &err))
			h[0] = h[--n];
		sift_down(q->runs, h, n, 0);
	}
	free(h);
	return err;
}

static int row(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_export *e = ctx;
	struct csv_sort *q = e->state;
	off_t off = ftello(q->mem);
	int rc;

	if (ga_util_grow(&q->k, &q->capk, q->nk + 1, sizeof(*q->k)))
		return -1;
	e->out = q->mem;
	rc = row_text(e, m, a);
	e->out = q->out;
	if (rc)
		return -1;
	q->k[q->nk].start = a->start;
	q->k[q->nk].seq = q->seq++;
	q->k[q->nk].off = (size_t)off;
	q->k[q->nk].len = (uint32_t)(ftello(q->mem) - off);
	q->nk++;
	if ((size_t)ftello(q->mem) >= GA_CSV_RUN && run_flush(q, 0))
		return -1;
	return 0;
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
	q->out = e->out;
	if (run_open(q))
		return -1;
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

	if (q) {
		/* The activities: the last run, then the merge of all. */
		rc = run_flush(q, 1);
		if (!rc && q->nruns)
			rc = merge_runs(q);
		return rc;
	}
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
	if (q->mem)
		fclose(q->mem);
	free(q->text);
	free(q->k);
	for (size_t i = 0; i < q->nruns; i++) {
		fclose(q->runs[i].f);
		free(q->runs[i].line);
	}
	free(q->runs);
	ga_buf_free(&q->row);
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
