/*
 * Building the analysis (see analysis.h): the index pass, the aggregate
 * pass through the filters, and the finishing of every aggregate.  Runs
 * offline only.
 */
#include "model/analysis.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/load.h"
#include "read/reader.h"

int ga_analysis_init(struct ga_analysis *an, const struct ga_analysis_opts *o,
		     struct ga_filter *flt)
{
	memset(an, 0, sizeof(*an));
	an->o = *o;
	an->flt = flt;
	ga_ranges_init(&an->rg);
	ga_mx_init(&an->mx);
	ga_latency_init(&an->lat);
	ga_launchcfg_init(&an->lc);
	an->rg.want_launches = o->launches;
	an->rg.keep_marks = o->marks;
	an->rg.keep_details = o->range_details;
	ga_sites_setup(&an->st, o->stack_depth);
	ga_ranks_init(&an->rk);
	ga_memuse_init(&an->mu);
	ga_gs_init(&an->gs);
	ga_align_init(&an->al, o->align);
	ga_findings_init(&an->fd);
	an->st.symbolize = o->symbolize;
	an->st.symbol_path = o->symbol_path;
	an->st.list_frames = o->list_frames;
	if (ga_model_init(&an->m)) {
		ga_analysis_free(an);
		return -1;
	}
	an->m.keep_rows = o->keep_rows;
	an->m.quant_limit = o->quant_limit;
	an->m.busy_bound_ok = o->busy_bound_ok;
	an->st.rg = &an->rg;
	/*
	 * The findings observe m->obs; the model's own analyses are its fan,
	 * called after them (model.h ga_model_observe), the last bound first:
	 * launch sites (whose state the findings read, each record's after
	 * the findings saw it), then ranks; none of the fan reads another's
	 * state while the records come.
	 */
	an->gs.samples_only = o->lean;
	an->gs.keep_samples = o->keep_samples || o->lean;
	if (ga_mx_bind(&an->mx, &an->m) ||
	    (!o->lean && (ga_latency_bind(&an->lat, &an->m) || ga_launchcfg_bind(&an->lc, &an->m))) ||
	    ga_memuse_bind(&an->mu, &an->m) || ga_gs_bind(&an->gs, &an->m) ||
	    (!o->lean && ga_ranks_bind(&an->rk, &an->m)) ||
	    (o->observe_sites && ga_sites_bind(&an->st, &an->m))) {
		ga_analysis_free(an);
		return -1;
	}
	ga_findings_bind(&an->fd, &an->m, &an->st);
	/* What a lean analysis leaves out reads nothing of the records: its tables stay empty. */
	an->fd.off = o->lean;
	/*
	 * Busy intervals retire as read, past GA_FIND_RETIRE_AFTER activities
	 * (nothing printed needs them; the findings scan their gaps as they
	 * go), each file's closed once read.  A GPU of several traces goes on
	 * retiring; where a later file's interval comes behind what an earlier
	 * one retired (their processes used it at once: files are read one
	 * after another), the union could no longer join it, and the traces
	 * are read again without (model.h busy_shared, GA_ANALYSIS_AGAIN).
	 */
	an->fd.retire_after = o->no_retire ? 0 : GA_FIND_RETIRE_AFTER;
	return 0;
}

int ga_analysis_again(struct ga_analysis *an, struct ga_analysis_opts *o,
		      struct ga_filter *flt)
{
	o->pace = 0;
	o->no_fold = an->rg.fold_lasting;
	o->no_retire = o->no_retire || an->m.busy_shared;
	o->keep_op_names = o->keep_op_names || an->m.names_lost;
	ga_analysis_free(an);
	ga_filter_rewind(flt);
	if (ga_analysis_init(an, o, flt)) {
		memset(an, 0, sizeof(*an));
		return -1;
	}
	return 0;
}

int ga_analysis_findings(struct ga_analysis *an)
{
	struct ga_findings_in in = { .m = &an->m, .st = &an->st, .observe_sites = an->o.observe_sites,
				     .mx = &an->mx, .lc = &an->lc, .rk = &an->rk };

	if (an->fd.finished)
		return 0;
	if (an->o.observe_sites && ga_sites_finish(&an->st, &an->m))
		return -1;
	return ga_findings_finish(&an->fd, &in);
}

int ga_analysis_filtered(const struct ga_analysis *an)
{
	return ga_filter_active(an->flt);
}

/* GPUPROF_NVTX_FOLD=0: every NVTX range kept (the fold's reference in the tests). */
static int keep_ranges(void)
{
	const char *v = getenv("GPUPROF_NVTX_FOLD");

	return v && !strcmp(v, "0");
}

/* GPUPROF_NVTX_SPILL=0 (tests): the exports' ranges kept in memory, not sorted on disk. */
static int spill_off(void)
{
	const char *v = getenv("GPUPROF_NVTX_SPILL");

	return v && !strcmp(v, "0");
}

/* Both passes over inputs opened once (pipes copied into temporary files: model/load.h). */
static int passes(struct ga_analysis *an, struct ga_input *in, struct ga_ranges_src *src,
		  int n)
{
	uint64_t *tmin = NULL;
	int i;

	for (i = 0; i < n; i++) {
		src[i].path = in[i].mem || in[i].fd1 ? in[i].name : in[i].path;
		src[i].buf = in[i].mem ? in[i].buf : NULL;
		src[i].len = in[i].len;
	}
	/* The traces' clocks first: every later read moves times onto one line. */
	if (n > 1 || an->o.align) {
		struct ga_align_src *as = calloc((size_t)n, sizeof(*as));

		an->shifts = calloc((size_t)n, sizeof(*an->shifts));
		if (!as || !an->shifts) {
			free(as);
			fputs("gpuprof: out of memory\n", stderr);
			return -1;
		}
		for (i = 0; i < n; i++) {
			as[i].path = src[i].path;
			as[i].buf = src[i].buf;
			as[i].len = src[i].len;
		}
		i = ga_align_scan(&an->al, as, (size_t)n);
		free(as);
		if (i) {
			fprintf(stderr, "gpuprof: %s\n", an->al.err);
			return -1;
		}
		for (i = 0; i < n; i++)
			an->shifts[i] = src[i].shift = ga_align_shift(&an->al, (size_t)i);
		an->m.shifts = an->shifts;
		an->m.nshifts = (size_t)n;
	}
	/*
	 * Traces without NVTX are decoded once, their scan beside the model's
	 * read (ranges.h: one_pass), also where activities stream out as they
	 * are read (hooks, launches for flows): the look-ahead runs
	 * GA_MODEL_AHEAD chunks before the model, so that a staged copy's
	 * legs are paired, and an activity's API call is found, where they are
	 * within that many chunks of it, as the report pairs them.  The first
	 * time a view needs at its first activity comes from the chunk
	 * headers (analysis.h: want_first); a trace without a time there is
	 * read twice, all traces then, for the time base to be the same.
	 * Stacks read ahead (CSV, Chrome, the report's tree) need nothing of it.
	 */
	an->rg.one_pass = !an->o.two_reads;
	an->first_ns = UINT64_MAX;
	if (an->want_first && !(tmin = malloc((size_t)(n ? n : 1) * sizeof(*tmin)))) {
		fputs("gpuprof: out of memory\n", stderr);
		return -1;
	}
	for (i = 0; an->want_first && an->rg.one_pass && i < n; i++) {
		if (ga_reader_chunk_tmin(src[i].path, src[i].buf, src[i].len, &tmin[i]) ||
		    tmin[i] == UINT64_MAX) {
			an->rg.one_pass = 0;
			break;
		}
		tmin[i] += (uint64_t)src[i].shift;
	}
	an->m.ahead.ctx = &an->rg;
	an->m.ahead.begin = ga_ranges_ahead;
	/*
	 * Ranges fold into the table and tree as they close where nothing
	 * reads single ranges later (ranges.h: fold); the ranks' steps are
	 * kept by it.
	 */
	an->rg.fold = !an->o.no_fold && !an->o.launches && !an->o.marks && !an->o.range_details &&
		      !an->rg.site_of && !keep_ranges();
	/*
	 * Ranges that only an export writes (the Chrome and Perfetto exports
	 * lay them out, the SQLite export names activities' by index) go to
	 * their external sort, not kept, also under a filter, which reads them
	 * from the export's index (ranges.h ix).
	 */
	an->rg.spill = an->o.spill_ranges && !an->rg.fold && !spill_off();
	/*
	 * An activity's innermost range then found by its launch, through the
	 * export's index of them (ranges.h ix), where the export or a filter
	 * asks it.
	 */
	if (an->rg.spill && (an->o.spill_ranges == 2 || ga_filter_active(an->flt)) &&
	    !an->rg.want_launches)
		an->rg.want_launches = an->rg.launches_ranged = 1;
	/*
	 * A summary carries each name's CPU durations: kept as the ranges
	 * come, folded or not; the ranks' steps are kept by the fold.
	 */
	an->rg.group_ops = !an->o.keep_op_names;
	an->rg.keep_cpu = an->rk.collect;
	an->rg.cpu_limit = an->m.quant_limit;
	an->rg.fold_keep = ga_ranks_is_step;
	/* A file, not a pipe copied or standard input: read again where pacing stops. */
	an->rg.pace = an->o.pace && !an->o.two_reads && n == 1 && !in[0].mem && !in[0].fd1;
	if (ga_ranges_scan(&an->rg, &an->m, src, (size_t)n)) {
		free(tmin);
		fprintf(stderr, "gpuprof: %s\n", an->rg.err);
		return -1;
	}
	/* Spilled ranges read back by the export, indexed before the first activity asks. */
	if (an->rg.spill && an->rg.ix.ready && an->rg.ix.ready(an->rg.ix.ready_ctx)) {
		free(tmin);
		return -1;
	}
	/* The NVTX scan's first time, of the traces it read whole, then the others'. */
	an->first_ns = an->rg.first_ns;
	for (i = 0; tmin && an->rg.one_pass && an->rg.ahead_procs && i < n; i++)
		if (an->rg.ahead_procs[i] && an->rg.ahead_procs[i] != 3 && tmin[i] < an->first_ns)
			an->first_ns = tmin[i];
	free(tmin);
	ga_filter_bind(an->flt, &an->rg, &an->m);
	/* Folded, the model reads op names as the scan does (model.h group_ops). */
	an->m.group_ops = an->rg.folded && an->rg.group_ops;
	if (ga_load_inputs(&an->m, in, n))
		return an->m.ahead_retry ? GA_ANALYSIS_AGAIN : -1;
	/* Sites read ahead were settled before the rows streamed out. */
	if (ga_ranges_finish(&an->rg, &an->m, ga_filter_active(an->flt)) ||
	    (an->o.observe_sites && !an->o.sites_ahead && ga_sites_finish(&an->st, &an->m)) ||
	    ga_latency_finish(&an->lat) ||
	    ga_ranks_finish(&an->rk, &an->m, &an->rg)) {
		fprintf(stderr, "gpuprof: %s\n", an->rk.err[0] ? an->rk.err : "out of memory");
		return -1;
	}
	/* Its sort may read a temporary file too. */
	if (ga_memuse_finish(&an->mu, &an->m)) {
		fprintf(stderr, "gpuprof: %s\n", an->mu.err);
		return -1;
	}
	if (ga_gs_finish(&an->gs, &an->m, &an->rg)) {
		fputs("gpuprof: out of memory\n", stderr);
		return -1;
	}
	ga_launchcfg_finish(&an->lc, &an->m);
	return 0;
}

/*
 * GPUPROF_VERBOSE=1: whether the NVTX ranges folded as they closed
 * (bounded memory), or why they were kept whole (model/ranges.h fold).
 */
static void say_fold(const struct ga_analysis *an, int rc)
{
	const char *v = getenv("GPUPROF_VERBOSE");

	if (!v || strcmp(v, "1") || an->o.quiet || (rc && rc != GA_ANALYSIS_AGAIN))
		return;
	if (an->rg.fold_why)
		fprintf(stderr, "gpuprof: NVTX ranges kept whole: %s%s\n", an->rg.fold_why,
			rc == GA_ANALYSIS_AGAIN ? " (the trace is read again)" : "");
	else if (an->rg.folded)
		fputs("gpuprof: NVTX ranges folded into their name paths as they closed\n", stderr);
	else if (an->rg.spill && an->rg.nspilled)
		fprintf(stderr, "gpuprof: NVTX ranges sorted externally, not kept (%" PRIu64 " ranges)\n", an->rg.nspilled);
}

int ga_analysis_build(struct ga_analysis *an, char *const *paths, int n)
{
	size_t cnt = n > 0 ? (size_t)n : 1;
	struct ga_input *in = calloc(cnt, sizeof(*in));
	struct ga_ranges_src *src = calloc(cnt, sizeof(*src));
	int rc = -1;

	if (!in || !src) {
		fputs("gpuprof: out of memory\n", stderr);
		goto out;
	}
	/* Views that stream activities out before the stacks they name
	 * (CSV rows) need the stacks read ahead. */
	if (an->o.sites_ahead && (ga_sites_scan(&an->st, &an->m, paths, n) ||
				  ga_sites_symbolize(&an->st, &an->m))) {
		fputs("gpuprof: out of memory\n", stderr);
		goto out;
	}
	/* No stacks read ahead: no launch sites for the NVTX tree either. */
	if (!an->o.sites_ahead || !ga_sites_any(&an->st))
		an->rg.site_of = NULL;
	if (ga_load_open(in, paths, n))
		goto out;
	an->rk.inputs = n;
	rc = passes(an, in, src, n);
	ga_load_close(in, n);
	say_fold(an, rc);
out:
	free(in);
	free(src);
	return rc;
}

void ga_analysis_free(struct ga_analysis *an)
{
	ga_model_free(&an->m);
	ga_ranges_free(&an->rg);
	ga_sites_free(&an->st);
	ga_mx_free(&an->mx);
	ga_latency_free(&an->lat);
	ga_launchcfg_free(&an->lc);
	ga_ranks_free(&an->rk);
	ga_memuse_free(&an->mu);
	ga_gs_free(&an->gs);
	ga_align_free(&an->al);
	ga_findings_free(&an->fd);
	free(an->shifts);
	an->shifts = NULL;
}
