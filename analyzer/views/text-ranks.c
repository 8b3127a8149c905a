/*
 * The per-rank table of a multi-process job: GPU busy, compute and NCCL
 * time, NCCL time not overlapped by compute, and, with NVTX step ranges,
 * which rank was slowest in each step and by how much.  The numbers come
 * from model/ranks.c.  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

#define STEPS_SHOWN 10

static int time_pct(struct ga_table *t, uint64_t ns, uint64_t whole)
{
	char b[32];

	return ga_table_addf(t, "%s (%.1f%%)", ga_fmt_time(b, sizeof(b), ns), ga_text_pct(ns, whole));
}

/*
 * Rows past --top: those furthest behind the fastest in their steps first
 * (with steps), else the least busy (a share of the span on its devices).
 */
static int cmp_outlier(const void *pa, const void *pb, void *ctx)
{
	const struct ga_ranks *rk = ctx;
	const struct ga_rank_row *a = &rk->rows[*(const uint32_t *)pa];
	const struct ga_rank_row *b = &rk->rows[*(const uint32_t *)pb];
	double fa = (double)a->busy_ns / (a->devices ? a->devices : 1);
	double fb = (double)b->busy_ns / (b->devices ? b->devices : 1);

	if (rk->nsteps && a->lag_ns != b->lag_ns)
		return a->lag_ns > b->lag_ns ? -1 : 1;
	if (fa != fb)
		return fa < fb ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return a < b ? -1 : a > b;
}

static int print_rows(const struct ga_text *r, const struct ga_ranks *rk, FILE *out)
{
	const struct ga_model *m = r->m;
	uint64_t span = m->last_end - m->first_start;
	struct ga_table t;
	char b[192];
	int rc = 0, steps = rk->nsteps > 0;
	size_t i, k, shown = rk->nrows;
	uint32_t *ord = malloc((rk->nrows ? rk->nrows : 1) * sizeof(*ord));

	if (!ord)
		return -1;
	for (i = 0; i < rk->nrows; i++)
		ord[i] = (uint32_t)i;
	/* A job of more ranks than --top: its outliers, listed in rank order. */
	if (r->o.top > 0 && rk->nrows > (size_t)r->o.top) {
		shown = (size_t)r->o.top;
		qsort_r(ord, rk->nrows, sizeof(*ord), cmp_outlier, (void *)rk);
		qsort(ord, shown, sizeof(*ord), cmp_u32);
	}

	ga_table_init(&t, steps ? 9 : 7);
	ga_table_col(&t, 0, "Rank", 0, 0);
	ga_table_col(&t, 1, "GPU busy", 1, 0);
	ga_table_col(&t, 2, "Compute", 1, 0);
	ga_table_col(&t, 3, "NCCL", 1, 0);
	ga_table_col(&t, 4, "NCCL not overlapped", 1, 0);
	ga_table_col(&t, 5, "Kernels", 1, 0);
	ga_table_col(&t, 6, "NCCL kernels", 1, 0);
	if (steps) {
		ga_table_col(&t, 7, "Slowest in", 1, 0);
		ga_table_col(&t, 8, "Behind fastest", 1, 0);
	}
	for (k = 0; k < shown && !rc; k++) {
		const struct ga_rank_row *w = &rk->rows[ord[k]];
		uint64_t whole = span * (w->devices ? w->devices : 1);

		if (w->rank == GA_NO_RANK)
			snprintf(b, sizeof(b), "pid %u", m->procs[w->proc].pid);
		else
			ga_ranks_proc_name(m, w->proc, b, sizeof(b));
		rc |= ga_table_add(&t, b);
		rc |= time_pct(&t, w->busy_ns, whole);
		rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), w->compute_ns));
		rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), w->comm_ns));
		rc |= time_pct(&t, w->exposed_ns, w->comm_ns);
		rc |= ga_table_addf(&t, "%" PRIu64, w->kernels);
		rc |= ga_table_addf(&t, "%" PRIu64, w->nccl_kernels);
		if (steps) {
			rc |= ga_table_addf(&t, "%" PRIu64 " of %" PRIu64, w->slowest, w->steps);
			rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), w->lag_ns));
		}
	}
	if (!rc) {
		fputs("Ranks (GPU busy: % of the span per device; NCCL not overlapped: % of NCCL time", out);
		if (shown < rk->nrows)
			fprintf(out, "; the %zu %s, in rank order", shown,
				steps ? "furthest behind the fastest in their steps" : "least busy");
		fputs("):\n", out);
		ga_table_print(&t, out);
		ga_text_more_line(out, shown, rk->nrows, "ranks");
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

static int cmp_spread(const void *pa, const void *pb, void *ctx)
{
	const struct ga_rank_step *s = ctx;
	const struct ga_rank_step *a = &s[*(const uint32_t *)pa], *b = &s[*(const uint32_t *)pb];
	uint64_t da = a->slowest_ns - a->fastest_ns, db = b->slowest_ns - b->fastest_ns;

	if (da != db)
		return da > db ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static int print_steps(const struct ga_text *r, const struct ga_ranks *rk, FILE *out)
{
	const struct ga_model *m = r->m;
	size_t i, n = rk->nsteps < STEPS_SHOWN ? rk->nsteps : STEPS_SHOWN;
	char b[192], nb[4 * GA_TEXT_NAME_WIDTH + 8];
	uint32_t *ord = malloc(rk->nsteps * sizeof(*ord));
	struct ga_table t;
	int rc = 0;

	if (!ord)
		return -1;
	for (i = 0; i < rk->nsteps; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, rk->nsteps, sizeof(*ord), cmp_spread, rk->steps);
	ga_table_init(&t, 7);
	ga_table_col(&t, 0, "Step", 1, 0);
	ga_table_col(&t, 1, "Slowest", 0, 0);
	ga_table_col(&t, 2, "Its work", 1, 0);
	ga_table_col(&t, 3, "Median", 1, 0);
	ga_table_col(&t, 4, "Fastest", 1, 0);
	ga_table_col(&t, 5, "Slowest - fastest", 1, 0);
	ga_table_col(&t, 6, "Range", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct ga_rank_step *s = &rk->steps[ord[i]];
		const struct ga_rank_row *w = &rk->rows[s->slowest];

		rc |= ga_table_addf(&t, "%u", s->index);
		if (w->rank == GA_NO_RANK)
			snprintf(b, sizeof(b), "pid %u", m->procs[w->proc].pid);
		else
			ga_ranks_proc_name(m, w->proc, b, sizeof(b));
		rc |= ga_table_add(&t, b);
		rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), s->slowest_ns));
		rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), s->median_ns));
		rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), s->fastest_ns));
		rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), s->slowest_ns - s->fastest_ns));
		rc |= ga_table_add(&t, ga_text_name_cut(r, nb, sizeof(nb), ga_model_str(m, s->name)));
	}
	if (!rc) {
		fprintf(out, "\nSteps (NVTX step ranges, step k of every rank compared by its work: "
			"from the step's start to the end of its last compute kernel in it; "
			"the %zu with the largest spread):\n", n);
		ga_table_print(&t, out);
		ga_text_more_line(out, n, rk->nsteps, "steps");
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

/* Signed time: "+1.234 us", "-12.000 ms", "0". */
static const char *fmt_signed(char *b, size_t n, int64_t ns)
{
	char t[48];

	if (!ns) {
		snprintf(b, n, "0");
		return b;
	}
	ga_fmt_time(t, sizeof(t), (uint64_t)(ns < 0 ? -ns : ns));
	snprintf(b, n, "%c%s", ns < 0 ? '-' : '+', t);
	return b;
}

static int print_align(const struct ga_model *m, const struct ga_ranks *rk,
		       const struct ga_align *al, FILE *out)
{
	int nccl = al->mode == GA_ALIGN_NCCL, rc = 0;
	struct ga_table t;
	char b[192];
	size_t i;

	ga_table_init(&t, nccl ? 7 : 3);
	ga_table_col(&t, 0, "Rank", 0, 0);
	ga_table_col(&t, 1, "Correction", 1, 0);
	ga_table_col(&t, 2, "From clock sync", 1, 0);
	if (nccl) {
		ga_table_col(&t, 3, "From NCCL", 1, 0);
		ga_table_col(&t, 4, "Collectives", 1, 0);
		ga_table_col(&t, 5, "Used", 1, 0);
		ga_table_col(&t, 6, "Spread", 1, 0);
	}
	for (i = 0; i < rk->nrows && !rc; i++) {
		const struct ga_rank_row *w = &rk->rows[i];
		uint32_t file = m->procs[w->proc].file;
		const struct ga_align_file *f = file < al->n ? &al->f[file] : NULL;

		if (!f)
			continue;
		if (w->rank == GA_NO_RANK)
			snprintf(b, sizeof(b), "pid %u", m->procs[w->proc].pid);
		else
			ga_ranks_proc_name(m, w->proc, b, sizeof(b));
		rc |= ga_table_add(&t, b);
		rc |= ga_table_add(&t, fmt_signed(b, sizeof(b), f->clock_ns + f->nccl_ns));
		rc |= ga_table_add(&t, al->clock_applied && f->has_sync
					       ? fmt_signed(b, sizeof(b), f->clock_ns) : "-");
		if (nccl) {
			rc |= ga_table_add(&t, f->reference ? "reference"
							    : fmt_signed(b, sizeof(b), f->nccl_ns));
			rc |= ga_table_addf(&t, "%" PRIu64, f->matched);
			rc |= ga_table_addf(&t, "%" PRIu64, f->used);
			rc |= ga_table_add(&t, f->reference ? "-"
							    : ga_fmt_time(b, sizeof(b), f->spread_ns));
		}
	}
	if (!rc) {
		if (nccl)
			fprintf(out, "\nClock alignment (added to each rank's times; NCCL: the median "
				"difference of the ends of matching collectives%s, outliers left out; "
				"spread: their median absolute deviation):\n",
				al->by_stream ? ", matched per communicator stream" : "");
		else
			fputs("\nClock alignment (traces of several hosts, each moved to "
			      "CLOCK_REALTIME by its clock sync record):\n", out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	return rc ? -1 : 0;
}

static int want(const struct ga_text *r)
{
	return ga_ranks_wanted(&r->an->rk);
}

static int print(struct ga_text *r, FILE *out)
{
	const struct ga_ranks *rk = &r->an->rk;

	if (print_rows(r, rk, out))
		return -1;
	if (ga_align_active(&r->an->al) && r->an->al.n > 1 &&
	    print_align(r->m, rk, &r->an->al, out))
		return -1;
	return rk->nsteps ? print_steps(r, rk, out) : 0;
}

const struct ga_text_section ga_text_ranks = { "ranks", want, print };
