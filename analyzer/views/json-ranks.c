/*
 * The "ranks" and "steps" members of "export --format json" (a job of
 * several processes, or one with a rank): the per-rank figures and steps
 * of model/ranks.c, ranks in order.  Runs offline only.
 */
#include "views/formats.h"

/* A row's "rank" (null without one) and "name". */
static void rank_id(struct ga_jw *w, const struct ga_model *m, const struct ga_rank_row *r)
{
	char b[192];

	ga_jw_key(w, "rank");
	if (r->rank == GA_NO_RANK)
		ga_jw_null(w);
	else
		ga_jw_u64(w, r->rank);
	ga_jw_kcstr(w, "name", r->rank == GA_NO_RANK ? "" : ga_ranks_proc_name(m, r->proc, b, sizeof(b)));
}

/* How the traces' clocks were put on one line, rank by rank. */
static void clock_alignment(struct ga_jw *w, const struct ga_analysis *an)
{
	const struct ga_align *al = &an->al;
	const struct ga_ranks *rk = &an->rk;
	const struct ga_model *m = &an->m;

	ga_jw_key(w, "clock_alignment");
	ga_jw_obj(w, GA_JW_LINES);
	ga_jw_kcstr(w, "method", al->mode == GA_ALIGN_NCCL ? "nccl" : "clock_sync");
	ga_jw_kbool(w, "clock_sync_applied", al->clock_applied);
	ga_jw_kbool(w, "per_communicator_stream", al->by_stream);
	ga_jw_key(w, "ranks");
	ga_jw_arr(w, GA_JW_LINES);
	for (size_t i = 0; i < rk->nrows; i++) {
		const struct ga_rank_row *r = &rk->rows[i];
		uint32_t file = m->procs[r->proc].file;
		const struct ga_align_file *f;

		if (file >= al->n)
			continue;
		f = &al->f[file];
		ga_jw_obj(w, GA_JW_COMPACT);
		rank_id(w, m, r);
		ga_jw_ku64(w, "pid", m->procs[r->proc].pid);
		ga_jw_ki64(w, "correction_ns", f->clock_ns + f->nccl_ns);
		ga_jw_ki64(w, "clock_sync_ns", f->clock_ns);
		ga_jw_ki64(w, "nccl_ns", f->nccl_ns);
		ga_jw_kbool(w, "reference", f->reference);
		ga_jw_ku64(w, "collectives", f->matched);
		ga_jw_ku64(w, "used", f->used);
		ga_jw_ku64(w, "spread_ns", f->spread_ns);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	ga_jw_end(w);
}

void ga_json_ranks(struct ga_jw *w, const struct ga_analysis *an)
{
	const struct ga_ranks *rk = &an->rk;
	const struct ga_model *m = &an->m;
	size_t i;

	if (!ga_ranks_wanted(rk))
		return;
	ga_jw_key(w, "ranks");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < rk->nrows; i++) {
		const struct ga_rank_row *r = &rk->rows[i];
		const struct ga_proc *p = &m->procs[r->proc];

		ga_jw_obj(w, GA_JW_COMPACT);
		rank_id(w, m, r);
		ga_jw_kstr(w, "host", ga_model_str(m, p->host), ga_strtab_len(&m->strs, p->host));
		ga_jw_ku64(w, "pid", p->pid);
		ga_jw_ku64(w, "devices", r->devices);
		ga_jw_ku64(w, "gpu_busy_ns", r->busy_ns);
		ga_jw_ku64(w, "compute_ns", r->compute_ns);
		ga_jw_ku64(w, "nccl_ns", r->comm_ns);
		ga_jw_ku64(w, "nccl_not_overlapped_ns", r->exposed_ns);
		ga_jw_ku64(w, "kernels", r->kernels);
		ga_jw_ku64(w, "nccl_kernels", r->nccl_kernels);
		ga_jw_ku64(w, "steps", r->steps);
		ga_jw_ku64(w, "slowest_steps", r->slowest);
		ga_jw_ku64(w, "behind_fastest_ns", r->lag_ns);
		ga_jw_ki64(w, "clock_correction_ns", ga_align_shift(&an->al, p->file));
		ga_jw_end(w);
	}
	ga_jw_end(w);
	if (ga_align_active(&an->al) && an->al.n > 1)
		clock_alignment(w, an);
	ga_jw_key(w, "steps");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < rk->nsteps; i++) {
		const struct ga_rank_step *s = &rk->steps[i];
		const struct ga_rank_row *hi = &rk->rows[s->slowest], *lo = &rk->rows[s->fastest];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "index", s->index);
		ga_jw_kstr(w, "range", ga_model_str(m, s->name), ga_strtab_len(&m->strs, s->name));
		ga_jw_ku64(w, "ranks", s->ranks);
		ga_jw_key(w, "slowest_rank");
		if (hi->rank == GA_NO_RANK)
			ga_jw_null(w);
		else
			ga_jw_u64(w, hi->rank);
		ga_jw_ku64(w, "slowest_ns", s->slowest_ns);
		ga_jw_ku64(w, "median_ns", s->median_ns);
		ga_jw_key(w, "fastest_rank");
		if (lo->rank == GA_NO_RANK)
			ga_jw_null(w);
		else
			ga_jw_u64(w, lo->rank);
		ga_jw_ku64(w, "fastest_ns", s->fastest_ns);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}
