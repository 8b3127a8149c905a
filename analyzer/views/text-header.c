/*
 * The report's header: files, processes, GPUs, what was traced, time span,
 * busy time, record and loss counts, warnings, and the filters in force.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "model/load.h"
#include "model/summary.h"
#include "views/text.h"

static void print_files(const struct ga_model *m, size_t most, FILE *out)
{
	size_t i;

	if (m->nfiles > most) {
		/* A job's traces: their count and size, the first and last named. */
		uint64_t bytes = 0, chunks = 0;
		char sz[32];

		for (i = 0; i < m->nfiles; i++) {
			bytes += m->files[i].info.file_size;
			chunks += m->files[i].info.chunks;
		}
		ga_text_field(out, "Files:");
		fprintf(out, "%zu traces, %s, %" PRIu64 " chunks: ", m->nfiles,
			ga_fmt_bytes(sz, sizeof(sz), (double)bytes), chunks);
		ga_fmt_put(out, m->files[0].path);
		fputs(" to ", out);
		ga_fmt_put(out, m->files[m->nfiles - 1].path);
		fputs(" (--top 0 lists each)\n", out);
		return;
	}
	for (i = 0; i < m->nfiles; i++) {
		const struct ga_file *f = &m->files[i];
		char sz[32];

		ga_text_field(out, i == 0 ? (m->nfiles > 1 ? "Files:" : "File:") : "");
		ga_fmt_put(out, f->path);
		fprintf(out, " (%s, %u chunk%s)\n",
			ga_fmt_bytes(sz, sizeof(sz), (double)f->info.file_size),
			f->info.chunks, f->info.chunks == 1 ? "" : "s");
	}
}

/* Model process of the i-th process in rank order. */
static uint32_t nth_proc(const struct ga_ranks *rk, const struct ga_model *m, size_t i)
{
	return rk->nrows == m->nprocs ? rk->rows[i].proc : (uint32_t)i;
}

/* "rank N" (ranks.h) or "pid P". */
static const char *who(const struct ga_model *m, uint32_t proc, char *buf, size_t n)
{
	if (m->procs[proc].rank == GA_NO_RANK) {
		snprintf(buf, n, "pid %u", m->procs[proc].pid);
		return buf;
	}
	return ga_ranks_proc_name(m, proc, buf, n);
}

static int cmp_dev(const void *pa, const void *pb, void *ctx)
{
	const size_t *pos = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (pos[a] != pos[b])
		return pos[a] < pos[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Devices in the order of their users' ranks; NULL out of memory. */
static uint32_t *dev_order(const struct ga_model *m, const struct ga_ranks *rk)
{
	uint32_t *ord = malloc((m->ndevs ? m->ndevs : 1) * sizeof(*ord));
	size_t *pos = malloc((m->ndevs ? m->ndevs : 1) * sizeof(*pos));

	if (!ord || !pos) {
		free(ord);
		free(pos);
		return NULL;
	}
	/* Rank-order position of each device's first user, in one pass. */
	for (size_t i = 0; i < m->ndevs; i++) {
		ord[i] = (uint32_t)i;
		pos[i] = SIZE_MAX;
	}
	for (size_t j = 0; j < m->ndevrows; j++) {
		size_t p = m->devrows[j].proc, dev = m->devrows[j].dev;

		if (rk->nrows == m->nprocs)
			p = rk->row_of[p];
		if (dev < m->ndevs && p < pos[dev])
			pos[dev] = p;
	}
	qsort_r(ord, m->ndevs, sizeof(*ord), cmp_dev, pos);
	free(pos);
	return ord;
}

/* Rank-order position of a process. */
static size_t proc_pos(const struct ga_ranks *rk, const struct ga_model *m, uint32_t proc)
{
	return rk->nrows == m->nprocs ? rk->row_of[proc] : proc;
}

/* The users of each device: devrows by device, then by their process's rank order. */
struct users {
	uint32_t *row;             /* devrow indices */
	size_t *first;             /* a device's rows: row[first[dev]..first[dev + 1]) */
};

struct users_cmp {
	const struct ga_model *m;
	const struct ga_ranks *rk;
};

static int cmp_user(const void *pa, const void *pb, void *ctx)
{
	const struct users_cmp *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	size_t x = proc_pos(c->rk, c->m, c->m->devrows[a].proc);
	size_t y = proc_pos(c->rk, c->m, c->m->devrows[b].proc);

	if (x != y)
		return x < y ? -1 : 1;
	return a < b ? -1 : a > b;
}

static void users_free(struct users *u)
{
	free(u->row);
	free(u->first);
	u->row = NULL;
	u->first = NULL;
}

/* Sorted once, so that listing every device's users costs n log n, not devices x rows. */
static int users_build(struct users *u, const struct ga_model *m, const struct ga_ranks *rk)
{
	struct users_cmp c = { m, rk };
	size_t *fill;

	u->row = malloc((m->ndevrows ? m->ndevrows : 1) * sizeof(*u->row));
	u->first = calloc(m->ndevs + 1, sizeof(*u->first));
	fill = calloc(m->ndevs + 1, sizeof(*fill));
	if (!u->row || !u->first || !fill) {
		free(fill);
		users_free(u);
		return -1;
	}
	for (size_t j = 0; j < m->ndevrows; j++)
		if (m->devrows[j].dev < m->ndevs)
			u->first[m->devrows[j].dev + 1]++;
	for (size_t d = 0; d < m->ndevs; d++) {
		u->first[d + 1] += u->first[d];
		fill[d] = u->first[d];
	}
	for (size_t j = 0; j < m->ndevrows; j++)
		if (m->devrows[j].dev < m->ndevs)
			u->row[fill[m->devrows[j].dev]++] = (uint32_t)j;
	free(fill);
	for (size_t d = 0; d < m->ndevs; d++)
		if (u->first[d + 1] - u->first[d] > 1)
			qsort_r(u->row + u->first[d], u->first[d + 1] - u->first[d], sizeof(*u->row),
				cmp_user, &c);
	return 0;
}

/*
 * " [rank 0, rank 1]": the processes that used device dev (ran activities
 * on it; when none did, those that saw it), in rank order.
 */
static void print_users(const struct ga_model *m, const struct users *u, size_t dev, FILE *out)
{
	const char *sep = " [";
	char wb[192];
	uint32_t last = UINT32_MAX;
	int busy = 0;

	for (size_t j = u->first[dev]; j < u->first[dev + 1]; j++)
		busy |= m->devrows[u->row[j]].count != 0;
	for (size_t j = u->first[dev]; j < u->first[dev + 1]; j++) {
		const struct ga_devrow *r = &m->devrows[u->row[j]];

		if ((busy && !r->count) || r->proc == last)
			continue;
		fprintf(out, "%s%s", sep, who(m, r->proc, wb, sizeof(wb)));
		sep = ", ";
		last = r->proc;
	}
	if (strcmp(sep, ", ") == 0)
		fputc(']', out);
}

/*
 * More processes than the header lists: how many, their ranks, hosts and
 * command lines (the most common one, with how many others there are).
 */
static void print_procs_summed(const struct ga_model *m, FILE *out)
{
	uint32_t rmin = UINT32_MAX, rmax = 0, host = 0, cmd = 0;
	uint32_t *h = malloc(m->nprocs * sizeof(*h)), *c = malloc(m->nprocs * sizeof(*c));
	size_t ranked = 0, nh = 0, nc = 0, hosts = 0, cmds = 0, best = 0, i, j;

	for (i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];

		if (p->rank != GA_NO_RANK) {
			ranked++;
			rmin = p->rank < rmin ? p->rank : rmin;
			rmax = p->rank > rmax ? p->rank : rmax;
		}
		if (h && p->host)
			h[nh++] = p->host;
		if (c && p->cmdline)
			c[nc++] = p->cmdline;
	}
	/* Distinct hosts and command lines (strtab ids, sorted), the most common line. */
	if (h && c) {
		ga_sort_u32(h, nh);
		ga_sort_u32(c, nc);
		for (i = 0; i < nh; i = j) {
			for (j = i; j < nh && h[j] == h[i]; j++)
				;
			hosts++;
			host = h[i];
		}
		for (i = 0; i < nc; i = j) {
			for (j = i; j < nc && c[j] == c[i]; j++)
				;
			cmds++;
			if (j - i > best) {
				best = j - i;
				cmd = c[i];
			}
		}
	}
	free(h);
	free(c);
	ga_text_field(out, "Processes:");
	fprintf(out, "%zu", m->nprocs);
	if (ranked == m->nprocs)
		fprintf(out, ", ranks %u to %u", rmin, rmax);
	else if (ranked)
		fprintf(out, ", %zu of them ranks %u to %u", ranked, rmin, rmax);
	if (hosts == 1) {
		fputs(", on ", out);
		ga_fmt_put(out, ga_model_str(m, host));
	} else if (hosts) {
		fprintf(out, ", on %zu hosts", hosts);
	}
	if (cmds == 1 && best == m->nprocs) {
		fputs(": ", out);
		ga_fmt_put(out, ga_model_str(m, cmd));
	} else if (cmds) {
		fprintf(out, ": %zu command lines, %zu processes ran ", cmds, best);
		ga_fmt_put(out, ga_model_str(m, cmd));
	}
	fputc('\n', out);
}

static void print_procs(const struct ga_model *m, const struct ga_ranks *rk, size_t most,
			FILE *out)
{
	size_t i;

	if (m->nprocs > most) {
		print_procs_summed(m, out);
		return;
	}
	for (i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[nth_proc(rk, m, i)];

		ga_text_field(out, i == 0 ? (m->nprocs > 1 ? "Processes:" : "Process:") : "");
		if (p->rank != GA_NO_RANK)
			fprintf(out, "rank %u, ", p->rank);
		fprintf(out, "pid %u", p->pid);
		if (!p->has_process) {
			fputs(" (no process record)\n", out);
			continue;
		}
		if (p->host) {
			fputs(" on ", out);
			ga_fmt_put(out, ga_model_str(m, p->host));
		}
		fputs(": ", out);
		ga_fmt_put(out, p->cmdline ? ga_model_str(m, p->cmdline) : "?");
		fputc('\n', out);
	}
}

/* A GPU's model as the header prints it, without its UUID. */
static void gpu_model(const struct ga_model *m, const struct ga_device *d, FILE *out)
{
	char mem[32];

	ga_fmt_put(out, d->name ? ga_model_str(m, d->name) : "unnamed");
	fprintf(out, ", cc %u.%u, %u SMs, %s", d->cc_major, d->cc_minor, d->sm_count,
		ga_fmt_bytes(mem, sizeof(mem), (double)d->global_mem));
}

static int same_model(const struct ga_device *a, const struct ga_device *b)
{
	return a->described == b->described && (!a->described ||
						(a->name == b->name && a->cc_major == b->cc_major && a->cc_minor == b->cc_minor &&
						 a->sm_count == b->sm_count && a->global_mem == b->global_mem));
}

/*
 * More GPUs than the header lists: how many of each model, in the order
 * of their first, up to GA_TEXT_HEADER_LIST models and the rest counted.
 */
static void print_gpus_summed(const struct ga_model *m, const uint32_t *ord, size_t shown,
			      FILE *out)
{
	uint32_t first[GA_TEXT_HEADER_LIST];
	size_t count[GA_TEXT_HEADER_LIST], ng = 0, other = 0, g, k;

	for (k = 0; k < m->ndevs; k++) {
		const struct ga_device *d = &m->devs[ord[k]];

		if (d->dead || (!d->described && !d->count))
			continue;
		for (g = 0; g < ng && !same_model(&m->devs[first[g]], d); g++)
			;
		if (g < ng) {
			count[g]++;
		} else if (ng < GA_TEXT_HEADER_LIST) {
			first[ng] = ord[k];
			count[ng++] = 1;
		} else {
			other++;
		}
	}
	ga_text_field(out, "GPU:");
	fprintf(out, "%zu GPUs", shown);
	for (g = 0; g < ng; g++) {
		const struct ga_device *d = &m->devs[first[g]];

		if (ng == 1 && !other) {
			fputs(": ", out);
		} else {
			fputc('\n', out);
			ga_text_field(out, "");
			fprintf(out, "%zu: ", count[g]);
		}
		if (d->described)
			gpu_model(m, d, out);
		else
			fputs("no device record in the trace", out);
	}
	if (other) {
		fputc('\n', out);
		ga_text_field(out, "");
		fprintf(out, "%zu of other models", other);
	}
	fputc('\n', out);
}

static int print_gpus(const struct ga_model *m, const struct ga_ranks *rk,
		      const struct users *u, size_t most, FILE *out)
{
	uint32_t *ord = dev_order(m, rk);
	size_t k, shown = 0;

	if (!ord)
		return -1;
	for (k = 0; k < m->ndevs; k++)
		shown += !m->devs[k].dead && (m->devs[k].described || m->devs[k].count);
	if (shown > most) {
		print_gpus_summed(m, ord, shown, out);
		free(ord);
		return 0;
	}
	shown = 0;
	for (k = 0; k < m->ndevs; k++) {
		const struct ga_device *d = &m->devs[ord[k]];

		if (d->dead || (!d->described && !d->count))
			continue;
		ga_text_field(out, shown++ == 0 ? "GPU:" : "");
		fprintf(out, "cuda:%u  ", d->id);
		if (d->described) {
			gpu_model(m, d, out);
			fprintf(out, ", GPU-%02x%02x%02x%02x", d->uuid[0], d->uuid[1], d->uuid[2],
				d->uuid[3]);
		} else {
			fputs("(no device record in the trace)", out);
		}
		if (m->nprocs > 1)
			print_users(m, u, ord[k], out);
		fputc('\n', out);
	}
	if (!shown) {
		ga_text_field(out, "GPU:");
		fputs("none recorded\n", out);
	}
	free(ord);
	return 0;
}

/* "92.4% cuda:0 [rank 0]": a device's busy time, and which GPU it is. */
static void busy_entry(const struct ga_model *m, const struct ga_ranks *rk, const struct users *u,
		       uint32_t dev, uint64_t span, FILE *out)
{
	const struct ga_device *d = &m->devs[dev];

	/* At least: summaries of a GPU several parts used lacked its intervals. */
	fprintf(out, "%s%.1f%% cuda:%u", d->busy_bound ? "at least " : "",
		ga_text_pct(d->busy_ns, span), d->id);
	/* Which GPU: by its users when they have ranks, else by UUID. */
	if (m->nprocs > 1 && rk->any_rank)
		print_users(m, u, dev, out);
	else if (m->nprocs > 1 && d->described)
		fprintf(out, " (GPU-%02x%02x%02x%02x)", d->uuid[0], d->uuid[1], d->uuid[2],
			d->uuid[3]);
}

static int cmp_busy(const void *pa, const void *pb, void *ctx)
{
	const struct ga_model *m = ctx;
	uint64_t a = m->devs[*(const uint32_t *)pa].busy_ns, b = m->devs[*(const uint32_t *)pb].busy_ns;

	if (a != b)
		return a < b ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

/* More processes than the header lists: the median of their times, the least and the most. */
static int print_ptimes_summed(const struct ga_model *m, FILE *out)
{
	uint64_t *t = malloc((m->nprocs ? m->nprocs : 1) * sizeof(*t));
	size_t nt = 0;
	char a[32], b[32], c[32];

	if (!t)
		return -1;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];

		if (p->finished && p->has_process && p->end_ns >= p->start_ns)
			t[nt++] = p->end_ns - p->start_ns;
	}
	if (nt) {
		ga_sort_u64(t, nt);
		ga_text_field(out, "Process time:");
		fprintf(out, "%s median, %s to %s (%zu processes, recorder start to end%s)\n",
			ga_fmt_time(a, sizeof(a), nt % 2 ? t[nt / 2] : (t[nt / 2 - 1] + t[nt / 2]) / 2),
			ga_fmt_time(b, sizeof(b), t[0]), ga_fmt_time(c, sizeof(c), t[nt - 1]), nt,
			t[nt - 1] > GA_MODEL_PLAUSIBLE_NS ? "; implausible, see Warnings" : "");
	}
	free(t);
	return 0;
}

/*
 * More GPUs than the header lists: the median of their busy time, the
 * least and the most busy named.
 */
static int print_busy_summed(const struct ga_model *m, const struct ga_ranks *rk,
			     const struct users *u, const uint32_t *ord, uint64_t span, FILE *out)
{
	uint32_t *g = malloc((m->ndevs ? m->ndevs : 1) * sizeof(*g));
	size_t ng = 0, bound = 0;

	if (!g)
		return -1;
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct ga_device *d = &m->devs[ord[i]];

		if (!d->dead && d->count) {
			g[ng++] = ord[i];
			bound += d->busy_bound != 0;
		}
	}
	if (ng) {
		double med;

		qsort_r(g, ng, sizeof(*g), cmp_busy, (void *)m);
		/* The middle one, or the mean of the middle two. */
		med = (ga_text_pct(m->devs[g[(ng - 1) / 2]].busy_ns, span) +
		       ga_text_pct(m->devs[g[ng / 2]].busy_ns, span)) /
		      2;
		ga_text_field(out, "GPU busy:");
		fprintf(out, "%.1f%% median, ", med);
		busy_entry(m, rk, u, g[0], span, out);
		fputs(" to ", out);
		busy_entry(m, rk, u, g[ng - 1], span, out);
		fprintf(out, " (%zu GPUs", ng);
		if (bound)
			fprintf(out, ", %zu of them at least", bound);
		fputs(")\n", out);
	}
	free(g);
	return 0;
}

static int print_times(const struct ga_model *m, const struct ga_ranks *rk,
		       const struct users *u, size_t most, FILE *out)
{
	uint64_t span = m->last_end - m->first_start;
	size_t i, k, n = 0, np = 0, ng = 0;
	char t[32], wb[192];
	uint32_t *ord;

	ga_text_field(out, "Wall span:");
	if (m->last_end > m->first_start || m->counts[GA_ACT_KERNEL] ||
	    m->counts[GA_ACT_MEMCPY] || m->counts[GA_ACT_MEMSET] || m->counts[GA_ACT_GRAPH])
		fprintf(out, "%s (first to last GPU activity%s)\n", ga_fmt_time(t, sizeof(t), span),
			span > GA_MODEL_PLAUSIBLE_NS ? "; implausible, see Warnings" : "");
	else
		fputs("no GPU activity\n", out);

	ord = dev_order(m, rk);
	if (!ord)
		return -1;
	for (i = 0; i < m->nprocs; i++)
		np += m->procs[i].finished && m->procs[i].has_process &&
		      m->procs[i].end_ns >= m->procs[i].start_ns;
	for (k = 0; k < m->ndevs && span; k++)
		ng += !m->devs[k].dead && m->devs[k].count;
	/* Too many to list: summed up (each is in the Ranks table and in JSON). */
	if (np > most && print_ptimes_summed(m, out)) {
		free(ord);
		return -1;
	}
	for (i = 0; i < m->nprocs && np <= most; i++) {
		uint32_t proc = nth_proc(rk, m, i);
		const struct ga_proc *p = &m->procs[proc];

		if (!p->finished || !p->has_process || p->end_ns < p->start_ns)
			continue;
		ga_text_field(out, n++ == 0 ? "Process time:" : "");
		fputs(ga_fmt_time(t, sizeof(t), p->end_ns - p->start_ns), out);
		if (m->nprocs > 1)
			fprintf(out, " (%s, recorder start to end", who(m, proc, wb, sizeof(wb)));
		else
			fputs(" (recorder start to end", out);
		fputs(p->end_ns - p->start_ns > GA_MODEL_PLAUSIBLE_NS ? "; implausible, see Warnings)\n" :
		      ")\n", out);
	}
	if (ng > most && print_busy_summed(m, rk, u, ord, span, out)) {
		free(ord);
		return -1;
	}
	n = 0;
	for (k = 0; k < m->ndevs && span && ng <= most; k++) {
		const struct ga_device *d = &m->devs[ord[k]];

		if (d->dead || !d->count)
			continue;
		if (n++ == 0)
			ga_text_field(out, "GPU busy:");
		else
			fputs(", ", out);
		busy_entry(m, rk, u, ord[k], span, out);
	}
	if (n)
		fputc('\n', out);
	free(ord);
	return 0;
}

static void print_counts(const struct ga_model *m, FILE *out)
{
	uint64_t lost = ga_model_lost_total(m), un = ga_model_lost_unattributed(m);
	const char *sep = " (";
	int i;

	ga_text_field(out, "Records:");
	fprintf(out, "%" PRIu64 " kernel, %" PRIu64 " memcpy, %" PRIu64 " memset, %"
		PRIu64 " graph, %" PRIu64 " API (%" PRIu64 " records in all)\n",
		m->counts[GA_ACT_KERNEL], m->counts[GA_ACT_MEMCPY],
		m->counts[GA_ACT_MEMSET], m->counts[GA_ACT_GRAPH], m->api_count,
		m->records);

	if (m->overheads) {
		char tb[48];

		ga_text_field(out, "Overhead:");
		fprintf(out, "%s in %" PRIu64 " interval%s CUPTI accounted to itself (buffer flushes, "
			"instrumentation, resources)\n", ga_fmt_time(tb, sizeof(tb), m->overhead_ns),
			m->overheads, m->overheads == 1 ? "" : "s");
	}
	if (m->gaps) {
		char tb[48];

		ga_text_field(out, "Gaps:");
		fprintf(out, "%" PRIu64 " hand-over%s to the program's own CUPTI profiler, %s in all: "
			"the recorder stepped aside, what ran then is not in the trace\n", m->gaps,
			m->gaps == 1 ? "" : "s", ga_fmt_time(tb, sizeof(tb), m->gap_ns));
	}
	ga_text_field(out, "Lost records:");
	if (!lost) {
		fputs("none\n", out);
		return;
	}
	/* A count that reached UINT64_MAX stopped there: every number is a lower bound. */
	if (ga_model_lost_saturated(m))
		fprintf(out, "at least %" PRIu64 ", the count saturated", lost);
	else
		fprintf(out, "%" PRIu64, lost);
	for (i = 1; i <= GP_LOST_CAUSE_COUNT; i++) {
		int c = i % GP_LOST_CAUSE_COUNT;   /* unknown causes last */

		if (!m->lost[c])
			continue;
		fprintf(out, "%s%s: %s%" PRIu64, sep, ga_model_lost_name((unsigned)c),
			m->lost[c] == UINT64_MAX ? "at least " : "", m->lost[c]);
		sep = ", ";
	}
	if (un) {
		fprintf(out, "%scause not recorded: %" PRIu64, sep, un);
		sep = ", ";
	}
	fputs(strcmp(sep, ", ") == 0 ? ")\n" : "\n", out);
	/* Say what would have avoided the losses, as the recorder's knobs allow. */
	if (m->lost[GP_LOST_CUPTI_DROPPED] || m->lost[GP_LOST_NO_BUFFER]) {
		ga_text_field(out, "");
		fputs(m->lost[GP_LOST_CUPTI_DROPPED] ?
		      "CUPTI ran out of activity buffers: record again with a larger "
		      "GPUPROF_BUFFER_KIB\n" :
		      "CUPTI buffers could not be allocated: free memory or use a smaller "
		      "GPUPROF_BUFFER_KIB\n", out);
	}
	if (m->lost[GP_LOST_RING_FULL]) {
		ga_text_field(out, "");
		fputs("the writer fell behind: record again with a larger GPUPROF_RING_CHUNKS, "
		      "or less (--trace)\n", out);
	}
}

static void print_config(const struct ga_model *m, FILE *out)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} what[] = {
		{ GP_TRACE_KERNEL, "kernel" },
		{ GP_TRACE_MEMCPY, "memcpy" },
		{ GP_TRACE_MEMSET, "memset" },
		{ GP_TRACE_GRAPH, "graph" },
		{ GP_TRACE_API, "api" },
		{ GP_TRACE_NVTX, "nvtx" },
		{ GP_TRACE_MEMORY, "memory" },
		{ GP_TRACE_GPU_METRICS, "gpu-metrics" },
		{ GP_TRACE_GPU_TELEMETRY, "gpu-telemetry" },
	};
	size_t i, k;

	for (i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];
		const char *sep = "";

		if (!p->has_config)
			continue;
		ga_text_field(out, "Traced:");
		for (k = 0; k < sizeof(what) / sizeof(what[0]); k++) {
			if (p->config.trace & what[k].bit) {
				fprintf(out, "%s%s", sep, what[k].name);
				sep = " ";
			}
		}
		if (p->config.trace & GP_TRACE_GRAPH)
			fputs(p->config.graph_mode ? " (whole graphs)" : " (graph nodes)", out);
		fputc('\n', out);
		return;
	}
}

/* Seconds since the recorder started, for a time on p's trace clock. */
static double since_start(const struct ga_proc *p, uint64_t t, uint64_t origin)
{
	uint64_t o = p->has_process && p->start_ns && p->start_ns <= t ? p->start_ns : origin;

	return t >= o ? (double)(t - o) / 1e9 : 0.0;
}

static const char *window_kind(uint32_t kind)
{
	switch (kind) {
	case GP_CAPTURE_CONTROL:
		return "gpuprof start/stop";
	case GP_CAPTURE_PROFILER_API:
		return "cudaProfilerStart/Stop";
	case GP_CAPTURE_NVTX:
		return "NVTX range";
	default:
		return "capture range";
	}
}

/* Capture ranges, per process: how many, how long, when (first ones). */
static void print_windows(const struct ga_model *m, FILE *out)
{
	size_t i, j, shown;

	for (i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];
		uint64_t total = 0, origin = UINT64_MAX;
		uint32_t kind = 0, name = 0;
		char t[32];

		if (!p->nwindows)
			continue;
		for (j = 0; j < m->nwindows; j++) {
			const struct ga_window *w = &m->windows[j];

			if (w->proc != i)
				continue;
			total += w->end - w->start;
			if (w->start < origin)
				origin = w->start;
			kind = w->kind;
			name = w->name;
		}
		ga_text_field(out, "Windows:");
		fprintf(out, "%zu (%s", p->nwindows, window_kind(kind));
		if (kind == GP_CAPTURE_NVTX && name) {
			fputc(' ', out);
			ga_fmt_put(out, ga_model_str(m, name));
		}
		fprintf(out, "), %s in all", ga_fmt_time(t, sizeof(t), total));
		if (m->nprocs > 1)
			fprintf(out, ", pid %u", p->pid);
		fputs(":", out);
		for (j = 0, shown = 0; j < m->nwindows; j++) {
			const struct ga_window *w = &m->windows[j];

			if (w->proc != i)
				continue;
			if (shown++ == 4) {
				fputs(" ...", out);
				break;
			}
			fprintf(out, "%s%.3f-%.3f s", shown > 1 ? ", " : " ",
				since_start(p, w->start, origin), since_start(p, w->end, origin));
		}
		fputs(p->has_process ? " after the recorder started\n" : "\n", out);
	}
}

static const char *signame(uint32_t sig)
{
	static const struct {
		uint32_t n;
		const char *s;
	} names[] = {
		{ 1, "SIGHUP" }, { 2, "SIGINT" }, { 3, "SIGQUIT" }, { 4, "SIGILL" },
		{ 6, "SIGABRT" }, { 7, "SIGBUS" }, { 8, "SIGFPE" }, { 10, "SIGUSR1" },
		{ 11, "SIGSEGV" }, { 12, "SIGUSR2" }, { 13, "SIGPIPE" }, { 15, "SIGTERM" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].n == sig)
			return names[i].s;
	return "signal";
}

/* A flight-recorder dump: what it covers and what was dropped by design. */
static void print_flight(const struct ga_model *m, FILE *out)
{
	size_t i;

	for (i = 0; i < m->nprocs; i++) {
		const struct ga_proc *p = &m->procs[i];
		const struct gp_rec_flight *f = &p->flight;
		uint64_t span = f->end > f->start ? f->end - f->start : 0;
		char t[32], b[32], sz[32];

		if (!p->has_flight)
			continue;
		ga_text_field(out, "Flight dump:");
		fprintf(out, "dump %u", f->dump);
		if (m->nprocs > 1)
			fprintf(out, " of pid %u", p->pid);
		switch (f->trigger) {
		case GP_DUMP_REQUEST: fputs(", asked for by gpuprof dump", out); break;
		case GP_DUMP_SIGNAL: fprintf(out, ", on %s (%u)", signame(f->detail), f->detail); break;
		case GP_DUMP_NVTX: fputs(", on an NVTX name", out); break;
		case GP_DUMP_CUDA_ERROR: fprintf(out, ", on CUDA error %u", f->detail); break;
		case GP_DUMP_EXIT: fputs(", at process exit", out); break;
		case GP_DUMP_FATAL_SIGNAL:
			fprintf(out, ", the process dying of %s (%u)", signame(f->detail), f->detail);
			break;
		default: break;
		}
		fprintf(out, "; covers the last %s", ga_fmt_time(t, sizeof(t), span));
		if (p->has_process && p->start_ns && f->start >= p->start_ns)
			fprintf(out, " (%.3f-%.3f s after the recorder started)",
				(double)(f->start - p->start_ns) / 1e9,
				(double)(f->end - p->start_ns) / 1e9);
		fputc('\n', out);
		ga_text_field(out, "");
		ga_fmt_bytes(sz, sizeof(sz), (double)f->size);
		if (f->dropped_records || f->dropped_chunks)
			fprintf(out, "%" PRIu64 " older records (%u chunks, %s compressed) dropped by "
				"design to stay within %s; not counted as lost\n", f->dropped_records,
				f->dropped_chunks, ga_fmt_bytes(b, sizeof(b), (double)f->dropped_bytes),
				sz);
		else
			fprintf(out, "nothing older was dropped (the %s ring never filled)\n", sz);
	}
}

static int print_header(const struct ga_model *m, const struct ga_ranks *rk, size_t most,
			FILE *out)
{
	struct users u;
	struct ga_buf w = { 0 };
	const char *p, *nl;
	int first = 1;

	print_files(m, most, out);
	print_procs(m, rk, most, out);
	if (users_build(&u, m, rk))
		return -1;
	if (print_gpus(m, rk, &u, most, out)) {
		users_free(&u);
		return -1;
	}
	print_config(m, out);
	print_flight(m, out);
	print_windows(m, out);
	if (print_times(m, rk, &u, most, out)) {
		users_free(&u);
		return -1;
	}
	users_free(&u);
	print_counts(m, out);
	if (ga_load_warnings(m, &w) ||
	    (ga_model_times_implausible(m) &&
	     ga_buf_printf(&w, "times span more than a year: the trace's timestamps are damaged, "
			   "or its clocks disagree; times and rates in this report are not to be "
			   "trusted\n"))) {
		ga_buf_free(&w);
		return -1;
	}
	for (p = w.p; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		ga_text_field(out, first ? "Warnings:" : "");
		fwrite(p, 1, (size_t)(nl - p), out);
		fputc('\n', out);
		first = 0;
	}
	ga_buf_free(&w);
	return 0;
}

static int print(struct ga_text *r, FILE *out)
{
	/* Files, processes and GPUs listed one by one up to --top (given), else GA_TEXT_HEADER_LIST. */
	size_t most = r->o.top_set ? (r->o.top > 0 ? (size_t)r->o.top : SIZE_MAX) : GA_TEXT_HEADER_LIST;

	if (print_header(r->m, &r->an->rk, most, out))
		return -1;
	ga_text_metrics_header(&r->an->mx, r->m, out, GA_TEXT_LABEL_WIDTH);
	if (ga_analysis_filtered(r->an)) {
		ga_text_field(out, "Filters:");
		ga_fmt_put(out, r->an->flt->desc.p);
		fprintf(out, ": kept %" PRIu64 " of %" PRIu64 " GPU activities\n", r->an->flt->kept,
			r->an->flt->seen);
	}
	int est = 0;

	for (size_t i = 0; i < r->m->nkstats; i++)
		est |= r->m->kstats[i].med_est;
	for (size_t i = 0; i < r->m->nastats; i++)
		est |= r->m->astats[i].med_est;
	for (size_t i = 0; i < r->m->nmemops; i++)
		est |= r->m->memops[i].med_est;
	for (size_t i = 0; i < r->an->lat.nk; i++)
		est |= r->an->lat.k[i].med_est;
	if (r->m->sum_parts) {
		ga_text_field(out, "Summaries:");
		fprintf(out, "%" PRIu64 " part%s merged; not in summaries yet, so not shown: %s%s\n",
			r->m->sum_parts, r->m->sum_parts == 1 ? "" : "s", GA_SUM_MISSING,
			r->m->sum_no_sites ? ", " GA_SUM_MISSING_SITES : "");
	}
	if (est) {
		/* Rows past their exact limit (model/quantile.h), or summaries' histograms. */
		ga_text_field(out, r->m->sum_parts ? "" : "Quantiles:");
		fputs("medians marked ~ are estimates within " GA_QUANT_REL_ERR_TEXT
		      ", their p90 and p99 too (a histogram of durations past "
		      "65536 a row; --exact keeps all; see USAGE, Large jobs)\n", out);
	}
	return 0;
}

const struct ga_text_section ga_text_header = { "header", NULL, print };
