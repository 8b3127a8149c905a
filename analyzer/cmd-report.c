/*
 * "gpuprof report": human-readable report of one or more traces: a header
 * (program, GPUs, span, busy time, record and loss counts, warnings), the
 * Warp-style CUDA timeline, activity and device summaries, then kernel,
 * launch site, NVTX range, memory and CUDA API tables.  Runs offline only.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "filter.h"
#include "load.h"
#include "metrics.h"
#include "model.h"
#include "nvtx.h"
#include "stacks.h"
#include "table.h"
#include "util.h"

#define NAME_WIDTH 80              /* columns of a name before it is cut */
#define AUTO_TIMELINE_MAX 50       /* timelines this short print by default */
#define DEFAULT_TOP 20
#define LABEL_WIDTH 14
#define SITE_KERNELS 5             /* kernels whose launch sites are listed, unless --top */

struct opts {
	int timeline;              /* -1: when short, 0: never, 1: always */
	long top;                  /* 0: all rows */
	int full_names;
	int tree;                  /* --tree */
	long depth;                /* --stack-depth */
	int top_set;               /* --top given */
	int symbolize;             /* 0: --no-symbolize */
};

static void help(FILE *f)
{
	fputs("usage: gpuprof report [options] FILE...\n\n"
	      "Print a report of one or more gpuprof traces.  Several files (the\n"
	      "processes of one job) merge into one report.\n\n"
	      "Options:\n"
	      "  --timeline      print the CUDA timeline, one line per GPU activity\n"
	      "                  (the default when there are at most 50)\n"
	      "  --no-timeline   never print the timeline\n"
	      "  --top N         rows in the kernel and API tables (default 20, 0: all)\n"
	      "  --full-names    do not shorten long kernel names\n"
	      "  --tree          print the NVTX range tree: ranges, nested ranges and\n"
	      "                  the kernels and copies launched in them\n"
	      "  --stack-depth N frames of a launch site (default 3), for traces\n"
	      "                  recorded with --backtrace\n"
	      "  --no-symbolize  do not look launch-site frames up in the debug\n"
	      "                  information of their modules (with addr2line)\n"
	      GP_FILTER_HELP
	      "  -h, --help      show this help\n\n"
	      "Filters apply to the GPU activities of every table, not to API calls.\n\n"
	      "Exit status: 0 when a report was printed (even of a damaged trace,\n"
	      "with a warning), 1 when a file cannot be read, 2 on bad usage.\n", f);
}

/* s itself with --full-names, else s cut to NAME_WIDTH columns in buf. */
static const char *name_cut(const struct opts *o, char *buf, size_t n, const char *s)
{
	return o->full_names ? s : gp_fmt_trunc(buf, n, s, NAME_WIDTH);
}

/* Warp's duration format: milliseconds with six decimals, exact for ns. */
static const char *warp_ms(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%" PRIu64 ".%06" PRIu64 " ms", ns / 1000000, ns % 1000000);
	return buf;
}

static void field(FILE *out, const char *label)
{
	fprintf(out, "%-*s", LABEL_WIDTH, label);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_files(const struct gp_model *m, FILE *out)
{
	size_t i;

	for (i = 0; i < m->nfiles; i++) {
		const struct gp_file *f = &m->files[i];
		char sz[32];

		field(out, i == 0 ? (m->nfiles > 1 ? "Files:" : "File:") : "");
		gp_fmt_put(out, f->path);
		fprintf(out, " (%s, %u chunk%s)\n",
			gp_fmt_bytes(sz, sizeof(sz), (double)f->info.file_size),
			f->info.chunks, f->info.chunks == 1 ? "" : "s");
	}
}

static void print_procs(const struct gp_model *m, FILE *out)
{
	size_t i;

	for (i = 0; i < m->nprocs; i++) {
		const struct gp_proc *p = &m->procs[i];

		field(out, i == 0 ? (m->nprocs > 1 ? "Processes:" : "Process:") : "");
		fprintf(out, "pid %u", p->pid);
		if (!p->has_process) {
			fputs(" (no process record)\n", out);
			continue;
		}
		if (p->host) {
			fputs(" on ", out);
			gp_fmt_put(out, gp_model_str(m, p->host));
		}
		if (p->rank != GP_NO_RANK)
			fprintf(out, ", rank %u", p->rank);
		fputs(": ", out);
		gp_fmt_put(out, p->cmdline ? gp_model_str(m, p->cmdline) : "?");
		fputc('\n', out);
	}
}

static void print_gpus(const struct gp_model *m, FILE *out)
{
	size_t i, j, shown = 0;

	for (i = 0; i < m->ndevs; i++) {
		const struct gp_device *d = &m->devs[i];
		char mem[32];

		if (d->dead || (!d->described && !d->count))
			continue;
		field(out, shown++ == 0 ? "GPU:" : "");
		fprintf(out, "cuda:%u  ", d->id);
		if (d->described) {
			gp_fmt_put(out, d->name ? gp_model_str(m, d->name) : "unnamed");
			fprintf(out, ", cc %u.%u, %u SMs, %s, GPU-%02x%02x%02x%02x",
				d->cc_major, d->cc_minor, d->sm_count,
				gp_fmt_bytes(mem, sizeof(mem), (double)d->global_mem),
				d->uuid[0], d->uuid[1], d->uuid[2], d->uuid[3]);
		} else {
			fputs("(no device record in the trace)", out);
		}
		if (m->nprocs > 1) {
			const char *sep = " [pid ";

			for (j = 0; j < m->ndevrows; j++) {
				if (m->devrows[j].dev != i)
					continue;
				fprintf(out, "%s%u", sep, m->procs[m->devrows[j].proc].pid);
				sep = ", ";
			}
			if (strcmp(sep, ", ") == 0)
				fputc(']', out);
		}
		fputc('\n', out);
	}
	if (!shown) {
		field(out, "GPU:");
		fputs("none recorded\n", out);
	}
}

static void print_times(const struct gp_model *m, FILE *out)
{
	uint64_t span = m->last_end - m->first_start;
	size_t i, n = 0;
	char t[32];

	field(out, "Wall span:");
	if (m->last_end > m->first_start || m->counts[GP_ACT_KERNEL] ||
	    m->counts[GP_ACT_MEMCPY] || m->counts[GP_ACT_MEMSET] || m->counts[GP_ACT_GRAPH])
		fprintf(out, "%s (first to last GPU activity)\n", gp_fmt_time(t, sizeof(t), span));
	else
		fputs("no GPU activity\n", out);

	for (i = 0; i < m->nprocs; i++) {
		const struct gp_proc *p = &m->procs[i];

		if (!p->finished || !p->has_process || p->end_ns < p->start_ns)
			continue;
		field(out, n++ == 0 ? "Process time:" : "");
		fputs(gp_fmt_time(t, sizeof(t), p->end_ns - p->start_ns), out);
		if (m->nprocs > 1)
			fprintf(out, " (pid %u, recorder start to end)\n", p->pid);
		else
			fputs(" (recorder start to end)\n", out);
	}

	if (!span)
		return;
	n = 0;
	for (i = 0; i < m->ndevs; i++) {
		const struct gp_device *d = &m->devs[i];

		if (d->dead || !d->count)
			continue;
		if (n++ == 0)
			field(out, "GPU busy:");
		else
			fputs(", ", out);
		fprintf(out, "%.1f%% cuda:%u", pct(d->busy_ns, span), d->id);
		if (m->nprocs > 1 && d->described)
			fprintf(out, " (GPU-%02x%02x%02x%02x)", d->uuid[0], d->uuid[1],
				d->uuid[2], d->uuid[3]);
	}
	if (n)
		fputc('\n', out);
}

static void print_counts(const struct gp_model *m, FILE *out)
{
	static const char *const cause[GP_LOST_CAUSE_COUNT] = {
		[0] = "unknown cause",
		[GP_LOST_CUPTI_DROPPED] = "dropped by CUPTI",
		[GP_LOST_RING_FULL] = "recorder ring full",
		[GP_LOST_NO_TIMESTAMP] = "no timestamp",
		[GP_LOST_WRITE_ERROR] = "write error",
		[GP_LOST_NO_BUFFER] = "no CUPTI buffer",
		[GP_LOST_CUPTI_ERROR] = "CUPTI error",
	};
	uint64_t lost = gp_model_lost_total(m), un = gp_model_lost_unattributed(m);
	const char *sep = " (";
	int i;

	field(out, "Records:");
	fprintf(out, "%" PRIu64 " kernel, %" PRIu64 " memcpy, %" PRIu64 " memset, %"
		PRIu64 " graph, %" PRIu64 " API (%" PRIu64 " records in all)\n",
		m->counts[GP_ACT_KERNEL], m->counts[GP_ACT_MEMCPY],
		m->counts[GP_ACT_MEMSET], m->counts[GP_ACT_GRAPH], m->api_count,
		m->records);

	field(out, "Lost records:");
	if (!lost) {
		fputs("none\n", out);
		return;
	}
	fprintf(out, "%" PRIu64, lost);
	for (i = 1; i <= GP_LOST_CAUSE_COUNT; i++) {
		int c = i % GP_LOST_CAUSE_COUNT;   /* unknown causes last */

		if (!m->lost[c])
			continue;
		fprintf(out, "%s%s: %" PRIu64, sep, cause[c], m->lost[c]);
		sep = ", ";
	}
	if (un) {
		fprintf(out, "%scause not recorded: %" PRIu64, sep, un);
		sep = ", ";
	}
	fputs(strcmp(sep, ", ") == 0 ? ")\n" : "\n", out);
	/* Say what would have avoided the losses, as the recorder's knobs allow. */
	if (m->lost[GP_LOST_CUPTI_DROPPED] || m->lost[GP_LOST_NO_BUFFER]) {
		field(out, "");
		fputs(m->lost[GP_LOST_CUPTI_DROPPED] ?
		      "CUPTI ran out of activity buffers: record again with a larger "
		      "GPUPROF_BUFFER_KIB\n" :
		      "CUPTI buffers could not be allocated: free memory or use a smaller "
		      "GPUPROF_BUFFER_KIB\n", out);
	}
	if (m->lost[GP_LOST_RING_FULL]) {
		field(out, "");
		fputs("the writer fell behind: record again with a larger GPUPROF_RING_CHUNKS, "
		      "or less (--trace)\n", out);
	}
}

static void print_config(const struct gp_model *m, FILE *out)
{
	static const char *const what[] = { "kernel", "memcpy", "memset", "graph", "api", "nvtx" };
	size_t i;
	unsigned k;

	for (i = 0; i < m->nprocs; i++) {
		const struct gp_proc *p = &m->procs[i];
		const char *sep = "";

		if (!p->has_config)
			continue;
		field(out, "Traced:");
		for (k = 0; k < sizeof(what) / sizeof(what[0]); k++) {
			if (p->config.trace & (1u << k)) {
				fprintf(out, "%s%s", sep, what[k]);
				sep = " ";
			}
		}
		if (p->config.trace & GP_TRACE_GRAPH)
			fputs(p->config.graph_mode ? " (whole graphs)" : " (graph nodes)", out);
		fputc('\n', out);
		return;
	}
}

static int print_header(const struct gp_model *m, FILE *out)
{
	struct gp_buf w = { 0 };
	const char *p, *nl;
	int first = 1;

	print_files(m, out);
	print_procs(m, out);
	print_gpus(m, out);
	print_config(m, out);
	print_times(m, out);
	print_counts(m, out);
	if (gp_load_warnings(m, &w)) {
		gp_buf_free(&w);
		return -1;
	}
	for (p = w.p; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		field(out, first ? "Warnings:" : "");
		fwrite(p, 1, (size_t)(nl - p), out);
		fputc('\n', out);
		first = 0;
	}
	gp_buf_free(&w);
	return 0;
}

/* ---- Warp-style tables: timeline, activity summary, device summary ---- */

struct warp_cols {
	size_t time_w, dev_w, act_w;
};

static void warp_widths(const struct gp_model *m, const struct opts *o, struct warp_cols *c)
{
	char buf[4 * NAME_WIDTH + 8], t[48];
	size_t i, w;

	c->time_w = 15;            /* "%12.6f ms", as Warp prints it */
	c->dev_w = 7;
	c->act_w = 8;
	for (i = 0; i < m->nlabels; i++) {
		w = gp_fmt_width(name_cut(o, buf, sizeof(buf), gp_model_str(m, m->labels[i].str)));
		if (w > c->act_w)
			c->act_w = w;
		w = strlen(warp_ms(t, sizeof(t), m->labels[i].total));
		if (w > c->time_w)
			c->time_w = w;
	}
	for (i = 0; i < m->ndevrows; i++) {
		w = gp_fmt_width(gp_model_str(m, m->devrows[i].label));
		if (w > c->dev_w)
			c->dev_w = w;
		w = strlen(warp_ms(t, sizeof(t), m->devrows[i].total));
		if (w > c->time_w)
			c->time_w = w;
	}
}

static void warp_table(struct gp_table *t, const struct warp_cols *c, const char *h0,
		       const char *h1, const char *h2, int count_col)
{
	gp_table_init(t, 3);
	gp_table_col(t, 0, h0, 1, c->time_w);
	gp_table_col(t, 1, h1, count_col, c->dev_w);
	gp_table_col(t, 2, h2, 0, c->act_w);
}

static const char *label_text(const struct gp_model *m, const struct opts *o,
			      uint32_t label, char *buf, size_t n)
{
	return name_cut(o, buf, n, gp_model_str(m, m->labels[label].str));
}

static void print_timeline(const struct gp_model *m, const struct opts *o,
			   const struct warp_cols *c, int nvtx, FILE *out)
{
	struct gp_table t;
	char tb[48], lb[4 * NAME_WIDTH + 8], nb[4 * NAME_WIDTH + 8];
	const char *cells[4];
	size_t i;

	fputs("CUDA timeline:\n", out);
	warp_table(&t, c, "Time", "Device", "Activity", 0);
	if (nvtx) {
		/* The innermost NVTX range each activity was launched in. */
		t.ncols = 4;
		gp_table_col(&t, 3, "NVTX", 0, 0);
	}
	gp_table_print_head(&t, out);
	for (i = 0; i < m->nrows; i++) {
		const struct gp_row *r = &m->rows[i];

		cells[0] = warp_ms(tb, sizeof(tb), r->dur);
		cells[1] = gp_model_str(m, m->devrows[r->devrow].label);
		cells[2] = label_text(m, o, r->label, lb, sizeof(lb));
		cells[3] = r->nvtx ? name_cut(o, nb, sizeof(nb), gp_model_str(m, r->nvtx)) : "-";
		gp_table_print_row(&t, out, cells);
	}
	gp_table_free(&t);
	if (m->rows_seen > m->nrows)
		fprintf(out, "\xe2\x80\xa6 %" PRIu64 " more activities not shown\n",
			m->rows_seen - m->nrows);
}

static int cmp_devrow(const void *pa, const void *pb, void *ctx)
{
	const struct gp_model *m = ctx;
	const struct gp_devrow *a = &m->devrows[*(const uint32_t *)pa];
	const struct gp_devrow *b = &m->devrows[*(const uint32_t *)pb];

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static int print_summaries(const struct gp_model *m, const struct opts *o,
			   const struct warp_cols *c, FILE *out)
{
	char tb[48], lb[4 * NAME_WIDTH + 8];
	struct gp_table t;
	const char *cells[3];
	char cnt[32];
	uint32_t *ord;
	size_t i;

	if (!m->nlabels) {
		fputs("CUDA activity summary: no GPU activity\n", out);
		return 0;
	}
	ord = gp_model_order_labels(m);
	if (!ord)
		return -1;
	fputs("CUDA activity summary:\n", out);
	warp_table(&t, c, "Total time", "Count", "Activity", 1);
	gp_table_print_head(&t, out);
	for (i = 0; i < m->nlabels; i++) {
		const struct gp_label *l = &m->labels[ord[i]];

		if (!l->count)
			continue;
		snprintf(cnt, sizeof(cnt), "%" PRIu64, l->count);
		cells[0] = warp_ms(tb, sizeof(tb), l->total);
		cells[1] = cnt;
		cells[2] = label_text(m, o, ord[i], lb, sizeof(lb));
		gp_table_print_row(&t, out, cells);
	}
	gp_table_free(&t);
	free(ord);

	ord = malloc((m->ndevrows ? m->ndevrows : 1) * sizeof(*ord));
	if (!ord)
		return -1;
	for (i = 0; i < m->ndevrows; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, m->ndevrows, sizeof(*ord), cmp_devrow, (void *)m);
	fputs("\nCUDA device summary:\n", out);
	warp_table(&t, c, "Total time", "Count", "Device", 1);
	gp_table_print_head(&t, out);
	for (i = 0; i < m->ndevrows; i++) {
		const struct gp_devrow *r = &m->devrows[ord[i]];

		if (!r->count)
			continue;
		snprintf(cnt, sizeof(cnt), "%" PRIu64, r->count);
		cells[0] = warp_ms(tb, sizeof(tb), r->total);
		cells[1] = cnt;
		cells[2] = gp_model_str(m, r->label);
		gp_table_print_row(&t, out, cells);
	}
	gp_table_free(&t);
	free(ord);
	return 0;
}

/* ---- nsys-style tables ---- */

static void more_line(FILE *out, size_t shown, size_t n, const char *what)
{
	if (shown < n)
		fprintf(out, "\xe2\x80\xa6 %zu more %s (use --top 0 for all)\n", n - shown, what);
}

/* The columns Time(%) .. Max shared by the kernel and API tables (0-6). */
static void stat_cols(struct gp_table *t)
{
	static const char *const names[] = { "Time(%)", "Total", "Count", "Avg", "Med", "Min", "Max" };

	for (int i = 0; i < 7; i++)
		gp_table_col(t, i, names[i], 1, 0);
}

static int stat_row(struct gp_table *t, uint64_t total, uint64_t all, uint64_t count,
		    uint64_t med, uint64_t min, uint64_t max)
{
	char b[5][48];
	int rc = 0;

	rc |= gp_table_addf(t, "%.1f", pct(total, all));
	rc |= gp_table_add(t, gp_fmt_time(b[0], sizeof(b[0]), total));
	rc |= gp_table_addf(t, "%" PRIu64, count);
	rc |= gp_table_add(t, gp_fmt_time(b[1], sizeof(b[1]), count ? total / count : 0));
	rc |= gp_table_add(t, gp_fmt_time(b[2], sizeof(b[2]), med));
	rc |= gp_table_add(t, gp_fmt_time(b[3], sizeof(b[3]), min));
	rc |= gp_table_add(t, gp_fmt_time(b[4], sizeof(b[4]), max));
	return rc;
}

static int print_kernels(struct gp_model *m, const struct opts *o, FILE *out)
{
	char nb[4 * NAME_WIDTH + 8];
	struct gp_table t;
	uint32_t *ord;
	size_t i, n;
	int rc = 0;

	if (!m->nkstats) {
		fputs("Kernels: none\n", out);
		return 0;
	}
	ord = gp_model_order_kernels(m);
	if (!ord)
		return -1;
	n = o->top && (size_t)o->top < m->nkstats ? (size_t)o->top : m->nkstats;
	gp_table_init(&t, 8);
	stat_cols(&t);
	gp_table_col(&t, 7, "Name", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct gp_kstat *k = &m->kstats[ord[i]];

		rc |= stat_row(&t, k->total, m->kernel_total, k->count, k->med, k->min, k->max);
		rc |= gp_table_add(&t, name_cut(o, nb, sizeof(nb), gp_strtab_full(&m->strs, k->name)));
	}
	if (!rc) {
		fputs("Kernels:\n", out);
		gp_table_print(&t, out);
		more_line(out, n, m->nkstats, "kernels");
	}
	gp_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

static int print_memory(const struct gp_model *m, FILE *out)
{
	const struct gp_memstat *rows[GP_COPY_KIND_MAX + 1];
	char b[4][48], kb[16];
	struct gp_table t;
	size_t n = 0, i, j;
	int rc = 0;

	for (i = 0; i < GP_COPY_KIND_MAX; i++)
		if (m->copy[i].count)
			rows[n++] = &m->copy[i];
	/* Most time first, as in the other tables. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && rows[j - 1]->total < rows[j]->total; j--) {
			const struct gp_memstat *x = rows[j];

			rows[j] = rows[j - 1];
			rows[j - 1] = x;
		}
	if (m->memset_st.count)
		rows[n++] = &m->memset_st;
	if (!n) {
		fputs("Memory operations: none\n", out);
		return 0;
	}
	gp_table_init(&t, 6);
	gp_table_col(&t, 0, "Total time", 1, 0);
	gp_table_col(&t, 1, "Count", 1, 0);
	gp_table_col(&t, 2, "Total size", 1, 0);
	gp_table_col(&t, 3, "Avg size", 1, 0);
	gp_table_col(&t, 4, "Throughput", 1, 0);
	gp_table_col(&t, 5, "Operation", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct gp_memstat *s = rows[i];

		rc |= gp_table_add(&t, gp_fmt_time(b[0], sizeof(b[0]), s->total));
		rc |= gp_table_addf(&t, "%" PRIu64, s->count);
		rc |= gp_table_add(&t, gp_fmt_bytes(b[1], sizeof(b[1]), (double)s->bytes));
		rc |= gp_table_add(&t, gp_fmt_bytes(b[2], sizeof(b[2]),
						    (double)s->bytes / (double)s->count));
		if (s->total)
			rc |= gp_table_addf(&t, "%.2f GB/s", (double)s->bytes / (double)s->total);
		else
			rc |= gp_table_add(&t, "-");
		rc |= gp_table_add(&t, s->label ? gp_model_str(m, m->labels[s->label - 1].str) :
				   gp_model_copy_kind(0, kb, sizeof(kb)));
	}
	if (!rc) {
		fputs("Memory operations:\n", out);
		gp_table_print(&t, out);
	}
	gp_table_free(&t);
	return rc ? -1 : 0;
}

static int print_api(const struct gp_model *m, const struct opts *o, FILE *out)
{
	struct gp_table t;
	uint32_t *ord;
	size_t i, n;
	int rc = 0;

	if (!m->nastats) {
		size_t k;

		fputs("CUDA API summary: none", out);
		for (k = 0; k < m->nprocs; k++)
			if (m->procs[k].has_config && !(m->procs[k].config.trace & GP_TRACE_API)) {
				fputs(" (API tracing was off)", out);
				break;
			}
		fputc('\n', out);
		return 0;
	}
	ord = gp_model_order_api(m);
	if (!ord)
		return -1;
	n = o->top && (size_t)o->top < m->nastats ? (size_t)o->top : m->nastats;
	gp_table_init(&t, 9);
	stat_cols(&t);
	gp_table_col(&t, 7, "Errors", 1, 0);
	gp_table_col(&t, 8, "Name", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct gp_astat *a = &m->astats[ord[i]];

		rc |= stat_row(&t, a->total, m->api_total, a->count, a->med, a->min, a->max);
		rc |= gp_table_addf(&t, "%" PRIu64, a->errors);
		rc |= gp_table_add(&t, gp_model_str(m, a->name));
	}
	if (!rc) {
		fputs("CUDA API summary:\n", out);
		gp_table_print(&t, out);
		more_line(out, n, m->nastats, "API functions");
	}
	gp_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

static int parse_top(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 0)
		return -1;
	*out = v;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeline", no_argument, NULL, 't' },
		{ "no-timeline", no_argument, NULL, 'T' },
		{ "top", required_argument, NULL, 'n' },
		{ "full-names", no_argument, NULL, 'f' },
		{ "tree", no_argument, NULL, 'R' },
		{ "stack-depth", required_argument, NULL, 'D' },
		{ "no-symbolize", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		GP_FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { -1, DEFAULT_TOP, 0, 0, GP_STACKS_DEPTH, 0, 1 };
	struct gp_model m;
	struct gp_nvtx nx;
	struct gp_stacks st;
	struct gp_mx mx;
	struct gp_filter flt;
	struct warp_cols wc;
	FILE *out = stdout;
	char ferr[512];
	int c, rc = GP_EXIT_OK;

	opterr = 0;
	optind = 0;
	gp_filter_init(&flt);
	while ((c = getopt_long(argc, argv, "hn:", longopts, NULL)) != -1) {
		switch (gp_filter_option(&flt, c, optarg, ferr, sizeof(ferr))) {
		case 1:
			continue;
		case -1:
			fprintf(stderr, "gpuprof report: %s\n", ferr);
			gp_filter_free(&flt);
			return GP_EXIT_USAGE;
		}
		switch (c) {
		case 't':
			o.timeline = 1;
			break;
		case 'T':
			o.timeline = 0;
			break;
		case 'n':
			if (parse_top(optarg, &o.top)) {
				fprintf(stderr, "gpuprof report: --top needs a number >= 0, not '%s'\n",
					optarg);
				gp_filter_free(&flt);
				return GP_EXIT_USAGE;
			}
			o.top_set = 1;
			break;
		case 'D':
			if (parse_top(optarg, &o.depth) || o.depth < 1 ||
			    o.depth > GP_STACKS_MAX_FRAMES) {
				fprintf(stderr, "gpuprof report: --stack-depth needs a number from 1 "
					"to %d, not '%s'\n", GP_STACKS_MAX_FRAMES, optarg);
				gp_filter_free(&flt);
				return GP_EXIT_USAGE;
			}
			break;
		case 'f':
			o.full_names = 1;
			break;
		case 'S':
			o.symbolize = 0;
			break;
		case 'R':
			o.tree = 1;
			break;
		case 'h':
			help(stdout);
			gp_filter_free(&flt);
			return GP_EXIT_OK;
		default:
			gp_filter_free(&flt);
			if (optopt == 'n')
				fputs("gpuprof report: --top needs a value\n", stderr);
			else if (optopt)
				fprintf(stderr, "gpuprof report: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "gpuprof report: unknown option '%s'\n", argv[optind - 1]);
			fputs("Try 'gpuprof report --help'.\n", stderr);
			return GP_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		gp_filter_free(&flt);
		fputs("gpuprof report: no trace file given\n"
		      "Try 'gpuprof report --help'.\n", stderr);
		return GP_EXIT_USAGE;
	}
	gp_nvtx_init(&nx);
	gp_stacks_setup(&st, (unsigned)o.depth);
	st.symbolize = o.symbolize;
	if (gp_model_init(&m)) {
		gp_filter_free(&flt);
		fputs("gpuprof: out of memory\n", stderr);
		return GP_EXIT_FAIL;
	}
	gp_stacks_bind(&st, &m);
	gp_mx_init(&mx);
	gp_mx_bind(&mx, &m);
	/* Keep one row more than an automatic timeline may show, to know. */
	m.keep_rows = o.timeline == 1 ? SIZE_MAX : o.timeline == 0 ? 0 : AUTO_TIMELINE_MAX + 1;
	if (gp_filter_load(&flt, &nx, &m, argv + optind, argc - optind)) {
		rc = GP_EXIT_FAIL;
		goto out;
	}
	if (gp_stacks_finish(&st, &m))
		goto oom;
	if (print_header(&m, out))
		goto oom;
	gp_mx_print_header(&mx, &m, out, LABEL_WIDTH);
	if (gp_filter_active(&flt)) {
		field(out, "Filters:");
		gp_fmt_put(out, flt.desc.p);
		fprintf(out, ": kept %" PRIu64 " of %" PRIu64 " GPU activities\n", flt.kept,
			flt.seen);
	}
	warp_widths(&m, &o, &wc);
	if (o.timeline == 1 || (o.timeline == -1 && m.rows_seen > 0 &&
				m.rows_seen <= AUTO_TIMELINE_MAX)) {
		fputc('\n', out);
		print_timeline(&m, &o, &wc, nx.nranges > 0, out);
	}
	fputc('\n', out);
	if (print_summaries(&m, &o, &wc, out))
		goto oom;
	fputc('\n', out);
	if (print_kernels(&m, &o, out))
		goto oom;
	if (gp_mx_any(&mx)) {
		fputc('\n', out);
		if (mx.oom || gp_mx_print(&mx, &m, (size_t)o.top, o.full_names ? 0 : NAME_WIDTH, out))
			goto oom;
	}
	if (gp_stacks_any(&st)) {
		fputc('\n', out);
		if (gp_stacks_print(&st, &m, (size_t)o.top, o.top_set ? (size_t)o.top : SITE_KERNELS,
				    o.full_names ? 0 : 2 * NAME_WIDTH, out))
			goto oom;
	}
	if (nx.nkeys || nx.nmarks) {
		fputc('\n', out);
		if (gp_nvtx_print_table(&nx, &m, gp_filter_active(&flt),
					o.full_names ? 0 : NAME_WIDTH, out))
			goto oom;
	}
	if (o.tree) {
		fputc('\n', out);
		if (gp_nvtx_print_tree(&nx, &m, o.full_names ? 0 : NAME_WIDTH, out))
			goto oom;
	}
	fputc('\n', out);
	if (print_memory(&m, out))
		goto oom;
	fputc('\n', out);
	if (print_api(&m, &o, out))
		goto oom;
	goto out;
oom:
	fputs("gpuprof: out of memory\n", stderr);
	rc = GP_EXIT_FAIL;
out:
	gp_model_free(&m);
	gp_nvtx_free(&nx);
	gp_stacks_free(&st);
	gp_mx_free(&mx);
	gp_filter_free(&flt);
	return rc;
}
