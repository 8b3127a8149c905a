/*
 * "export --format json": the report's numbers as one JSON object, a
 * stable schema scripts and tests rely on: files, processes, devices,
 * counts, losses, kernels, memory operations, memory in use (traces with
 * memory records), graphs, API functions, NVTX ranges and marks, launch
 * sites, and for a job of ranks the per-rank figures and steps.  Written
 * after the analysis is built.  Runs offline only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/summary.h"
#include "views/formats.h"

/* The version of docs/JSON.md this export follows. */
#define GA_JSON_SCHEMA 3

/* Memory kinds a memset is counted under (ga_model_mem_kind); others count as 0, unknown. */
#define GA_MEMSET_KINDS 8u

static void sid(struct ga_jw *w, const struct ga_model *m, uint32_t id)
{
	ga_jw_str(w, ga_model_str(m, id), ga_strtab_len(&m->strs, id));
}

static void ksid(struct ga_jw *w, const char *key, const struct ga_model *m, uint32_t id)
{
	ga_jw_key(w, key);
	sid(w, m, id);
}

/* The statistics every table prints after count and total. */
static void spread(struct ga_jw *w, uint64_t avg, uint64_t med, uint64_t min, uint64_t max,
		   uint64_t stddev)
{
	ga_jw_ku64(w, "avg_ns", avg);
	ga_jw_ku64(w, "med_ns", med);
	ga_jw_ku64(w, "min_ns", min);
	ga_jw_ku64(w, "max_ns", max);
	ga_jw_ku64(w, "stddev_ns", stddev);
}

/* p90 and p99 (nearest rank), and whether they and the median are estimates. */
static void pcts(struct ga_jw *w, uint64_t p90, uint64_t p99, int est)
{
	ga_jw_ku64(w, "p90_ns", p90);
	ga_jw_ku64(w, "p99_ns", p99);
	if (est)
		ga_jw_kbool(w, "med_estimated", 1);
}

static void files(struct ga_jw *w, const struct ga_model *m)
{
	size_t i;

	ga_jw_key(w, "files");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < m->nfiles; i++) {
		const struct ga_file *f = &m->files[i];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "path", f->path);
		ga_jw_kbool(w, "truncated", f->info.damaged);
		ga_jw_kbool(w, "finished", f->info.finished);
		ga_jw_ku64(w, "bytes_unread", f->info.bytes_unread);
		ga_jw_ku64(w, "size", f->info.file_size);
		ga_jw_ku64(w, "chunks", f->info.chunks);
		ga_jw_ku64(w, "records", f->info.records);
		ga_jw_key(w, "damage");
		if (f->info.damaged) {
			ga_jw_obj(w, GA_JW_COMPACT);
			ga_jw_ku64(w, "offset", f->info.stop_offset);
			ga_jw_kcstr(w, "reason", f->info.reason);
			ga_jw_end(w);
		} else {
			ga_jw_null(w);
		}
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

static void capture_ranges(struct ga_jw *w, const struct ga_model *m, uint32_t proc)
{
	static const char *const kinds[] = { "unknown", "cudaProfilerApi", "nvtx", "control" };
	size_t i;

	ga_jw_key(w, "capture_ranges");
	ga_jw_arr(w, GA_JW_COMPACT);
	for (i = 0; i < m->nwindows; i++) {
		const struct ga_window *c = &m->windows[i];

		if (c->proc != proc)
			continue;
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "kind", kinds[c->kind < 4 ? c->kind : 0]);
		ga_jw_ku64(w, "start_ns", c->start);
		ga_jw_ku64(w, "end_ns", c->end);
		if (c->name)
			ksid(w, "name", m, c->name);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

static void flight(struct ga_jw *w, const struct ga_proc *p)
{
	static const char *const triggers[] = { "unknown", "request", "signal", "nvtx",
						"cuda-error", "exit", "fatal-signal" };
	const struct gp_rec_flight *f = &p->flight;

	ga_jw_key(w, "flight");
	if (!p->has_flight) {
		ga_jw_null(w);
		return;
	}
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "dump", f->dump);
	ga_jw_kcstr(w, "trigger", triggers[f->trigger < 7 ? f->trigger : 0]);
	ga_jw_ku64(w, "detail", f->detail);
	ga_jw_ku64(w, "start_ns", f->start);
	ga_jw_ku64(w, "end_ns", f->end);
	ga_jw_ku64(w, "size", f->size);
	ga_jw_ku64(w, "dropped_records", f->dropped_records);
	ga_jw_ku64(w, "dropped_chunks", f->dropped_chunks);
	ga_jw_ku64(w, "dropped_bytes", f->dropped_bytes);
	ga_jw_end(w);
}

static void processes(struct ga_jw *w, const struct ga_model *m, const struct ga_ranks *rk)
{
	size_t i;

	ga_jw_key(w, "processes");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < m->nprocs; i++) {
		/* In rank order. */
		uint32_t pi = rk->nrows == m->nprocs ? rk->rows[i].proc : (uint32_t)i;
		const struct ga_proc *p = &m->procs[pi];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "pid", p->pid);
		ksid(w, "host", m, p->host);
		ksid(w, "cmdline", m, p->cmdline);
		ga_jw_key(w, "rank");
		if (p->rank == GA_NO_RANK)
			ga_jw_null(w);
		else
			ga_jw_u64(w, p->rank);
		ga_jw_ku64(w, "ppid", p->ppid);
		ksid(w, "exe", m, p->exe);
		ga_jw_ku64(w, "start_ns", p->start_ns);
		ga_jw_ku64(w, "end_ns", p->end_ns);
		ga_jw_kbool(w, "finished", p->finished);
		ga_jw_ku64(w, "cuda_driver", p->cuda_driver);
		ga_jw_ku64(w, "cupti_version", p->cupti_version);
		ga_jw_ku64(w, "clock_syncs", p->clock_syncs);
		capture_ranges(w, m, pi);
		flight(w, p);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

static void devices(struct ga_jw *w, const struct ga_model *m)
{
	size_t i;

	ga_jw_key(w, "devices");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < m->ndevs; i++) {
		const struct ga_device *d = &m->devs[i];
		const uint8_t *u = d->uuid;

		if (d->dead)
			continue;
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "id", d->id);
		ksid(w, "name", m, d->name);
		ga_jw_key(w, "uuid");
		ga_jw_rawf(w, "\"GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			   "%02x%02x%02x%02x%02x%02x\"", u[0], u[1], u[2], u[3], u[4], u[5],
			   u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
		ga_jw_key(w, "cc");
		ga_jw_rawf(w, "\"%u.%u\"", d->cc_major, d->cc_minor);
		ga_jw_ku64(w, "sm_count", d->sm_count);
		ga_jw_ku64(w, "global_mem", d->global_mem);
		ksid(w, "host", m, d->host);
		ga_jw_ku64(w, "pid", m->procs[d->proc].pid);
		ga_jw_kbool(w, "described", d->described);
		ga_jw_ku64(w, "activities", d->count);
		ga_jw_ku64(w, "busy_ns", d->busy_ns);
		if (d->busy_bound)
			ga_jw_kbool(w, "busy_lower_bound", 1);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

static void counts(struct ga_jw *w, const struct ga_model *m)
{
	ga_jw_key(w, "counts");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "kernel", m->counts[GA_ACT_KERNEL]);
	ga_jw_ku64(w, "memcpy", m->counts[GA_ACT_MEMCPY]);
	ga_jw_ku64(w, "memset", m->counts[GA_ACT_MEMSET]);
	ga_jw_ku64(w, "graph", m->counts[GA_ACT_GRAPH]);
	ga_jw_ku64(w, "api", m->api_count);
	ga_jw_ku64(w, "records", m->records);
	ga_jw_end(w);

	ga_jw_key(w, "overhead");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "intervals", m->overheads);
	ga_jw_ku64(w, "total_ns", m->overhead_ns);
	ga_jw_end(w);

	ga_jw_key(w, "lost");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "total", ga_model_lost_total(m));
	for (unsigned c = 1; c < GP_LOST_CAUSE_COUNT; c++)
		ga_jw_ku64(w, ga_model_lost_key(c), m->lost[c]);
	ga_jw_ku64(w, "handover_gaps", m->gaps);
	ga_jw_ku64(w, "handover_gap_ns", m->gap_ns);
	ga_jw_ku64(w, ga_model_lost_key(0), m->lost[0]);
	ga_jw_ku64(w, "unattributed", ga_model_lost_unattributed(m));
	ga_jw_end(w);
}

static int kernels(struct ga_jw *w, struct ga_model *m)
{
	uint32_t *ord = ga_model_order_kernels(m);
	size_t i;

	if (!ord)
		return -1;
	ga_jw_key(w, "kernels");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < m->nkstats; i++) {
		const struct ga_kstat *k = &m->kstats[ord[i]];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, k->name));
		ga_jw_kcstr(w, "short", ga_strtab_short(&m->strs, k->name));
		ksid(w, "mangled", m, k->name);
		ga_jw_ku64(w, "count", k->count);
		ga_jw_ku64(w, "total_ns", k->total);
		spread(w, k->total / k->count, k->med, k->min, k->max, k->stddev);
		pcts(w, k->p90, k->p99, k->med_est);
		ga_jw_ku64(w, "in_graph", k->in_graph);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	free(ord);
	return 0;
}

static void memory(struct ga_jw *w, const struct ga_model *m)
{
	char kb[16];
	size_t i;

	ga_jw_key(w, "memcpy");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < GA_COPY_KIND_MAX; i++) {
		const struct ga_memstat *s = &m->copy[i];

		if (!s->count)
			continue;
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "kind", ga_model_copy_kind((unsigned)i, kb, sizeof(kb)));
		ga_jw_ku64(w, "count", s->count);
		ga_jw_ku64(w, "bytes", s->bytes);
		ga_jw_ku64(w, "total_ns", s->total);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	/* Memsets by memory kind, in the shape of the copies. */
	ga_jw_key(w, "memset");
	ga_jw_arr(w, GA_JW_LINES);
	for (unsigned k = 0; k < GA_MEMSET_KINDS; k++) {
		uint64_t count = 0, bytes = 0, total = 0;

		for (i = 0; i < m->nmemops; i++) {
			const struct ga_memop *o = &m->memops[i];

			if (o->kind != GA_MEMOP_MEMSET || (o->dst < GA_MEMSET_KINDS ? o->dst : 0) != k)
				continue;
			count += o->count;
			bytes += o->bytes;
			total += o->total;
		}
		if (!count)
			continue;
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "kind", ga_model_mem_kind(k));
		ga_jw_ku64(w, "count", count);
		ga_jw_ku64(w, "bytes", bytes);
		ga_jw_ku64(w, "total_ns", total);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

/* The memory table as the report prints it: by kind and memory kinds. */
static int memory_ops(struct ga_jw *w, const struct ga_model *m)
{
	uint32_t *ord = ga_model_order_memops(m);
	char kb[16];
	size_t i;

	if (!ord)
		return -1;
	ga_jw_key(w, "memory_ops");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < m->nmemops; i++) {
		const struct ga_memop *o = &m->memops[ord[i]];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "op", o->kind == GA_MEMOP_MEMSET ? "memset" : "memcpy");
		if (o->kind != GA_MEMOP_MEMSET)
			ga_jw_kcstr(w, "kind", o->kind == GA_COPY_STAGED_PEER ? "PtoP-staged" :
				    ga_model_copy_kind(o->kind, kb, sizeof(kb)));
		ga_jw_kcstr(w, "src_kind", o->kind == GA_MEMOP_MEMSET ? "" : ga_model_mem_kind(o->src));
		ga_jw_kcstr(w, "dst_kind", ga_model_mem_kind(o->dst));
		ga_jw_ku64(w, "count", o->count);
		ga_jw_ku64(w, "bytes", o->bytes);
		ga_jw_ku64(w, "total_ns", o->total);
		spread(w, o->total / o->count, o->med, o->min, o->max, o->stddev);
		if (o->med_est)
			ga_jw_kbool(w, "med_estimated", 1);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	free(ord);
	return 0;
}

/* "memory_usage": only traces recorded with --trace=...,memory have it. */
static void memory_usage(struct ga_jw *w, const struct ga_model *m, const struct ga_memuse *mu)
{
	if (!ga_memuse_any(mu))
		return;
	ga_jw_key(w, "memory_usage");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_ku64(w, "records", mu->records);
	ga_jw_ku64(w, "host_records", mu->host_records);
	ga_jw_key(w, "devices");
	ga_jw_arr(w, GA_JW_LINES);
	for (size_t i = 0; i < mu->ndevs; i++) {
		const struct ga_memuse_dev *d = &mu->devs[i];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "device", d->device);
		ga_jw_ku64(w, "pid", m->procs[d->proc].pid);
		ksid(w, "label", m, d->label);
		ga_jw_ku64(w, "peak_bytes", d->peak);
		ga_jw_ku64(w, "peak_ns", d->peak_ns);
		ga_jw_ku64(w, "final_bytes", d->final);
		ga_jw_ku64(w, "allocs", d->allocs);
		ga_jw_ku64(w, "frees", d->frees);
		ga_jw_ku64(w, "alloc_bytes", d->alloc_bytes);
		ga_jw_ku64(w, "not_freed", d->live);
		ga_jw_ku64(w, "unmatched_frees", d->unmatched_frees);
		ga_jw_key(w, "largest");
		ga_jw_arr(w, GA_JW_COMPACT);
		for (size_t j = 0; j < d->ntop; j++) {
			const struct ga_memuse_alloc *a = &d->top[j];

			ga_jw_obj(w, GA_JW_COMPACT);
			ga_jw_ku64(w, "bytes", a->bytes);
			ga_jw_ku64(w, "address", a->address);
			ga_jw_ku64(w, "alloc_ns", a->alloc_ns);
			ga_jw_kbool(w, "freed", a->freed);
			ga_jw_key(w, "free_ns");
			if (a->freed)
				ga_jw_u64(w, a->free_ns);
			else
				ga_jw_null(w);
			ga_jw_kcstr(w, "kind", ga_model_mem_kind(a->kind));
			ga_jw_kbool(w, "async", (a->flags & GP_MEM_F_ASYNC) != 0);
			ga_jw_kbool(w, "pool", (a->flags & GP_MEM_F_POOL) != 0);
			ga_jw_ku64(w, "correlation", a->correlation);
			ga_jw_end(w);
		}
		ga_jw_end(w);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	ga_jw_end(w);
}

/* Graphs in one shape whichever way they were traced. */
static void graphs(struct ga_jw *w, const struct ga_model *m)
{
	size_t i;

	ga_jw_key(w, "graphs");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < m->ngraphs; i++) {
		const struct ga_gstat *g = &m->graphs[i];

		if (!g->launches && !g->nodes && !g->kernels)
			continue;
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "graph_id", g->graph_id);
		ga_jw_ku64(w, "pid", m->procs[g->proc].pid);
		ga_jw_ku64(w, "launches", g->launches);
		ga_jw_ku64(w, "total_ns", g->total);
		ga_jw_ku64(w, "nodes", g->nodes);
		ga_jw_ku64(w, "kernels", g->kernels);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

static int api(struct ga_jw *w, const struct ga_model *m)
{
	uint32_t *ord = ga_model_order_api(m);
	size_t i;

	if (!ord)
		return -1;
	ga_jw_key(w, "api");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < m->nastats; i++) {
		const struct ga_astat *a = &m->astats[ord[i]];

		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "name", m, a->name);
		ga_jw_ku64(w, "count", a->count);
		ga_jw_ku64(w, "total_ns", a->total);
		ga_jw_ku64(w, "errors", a->errors);
		ga_jw_ku64(w, "threads", a->threads);
		spread(w, a->total / a->count, a->med, a->min, a->max, a->stddev);
		pcts(w, a->p90, a->p99, a->med_est);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	free(ord);
	return 0;
}

static int latency(struct ga_jw *w, struct ga_model *m, const struct ga_latency *l)
{
	uint32_t *ord = ga_latency_order(l);
	size_t i;

	if (!ord)
		return -1;
	ga_jw_key(w, "launch_latency");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < l->nk; i++) {
		const struct ga_latency_k *k = &l->k[ord[i]];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, k->name));
		ga_jw_ku64(w, "count", k->count);
		ga_jw_ku64(w, "total_ns", k->total);
		spread(w, k->total / k->count, k->med, k->min, k->max, k->stddev);
		pcts(w, k->p90, k->p99, k->med_est);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	free(ord);
	return 0;
}

static void triple(struct ga_jw *w, const char *key, const uint32_t v[3])
{
	ga_jw_key(w, key);
	ga_jw_arr(w, GA_JW_COMPACT);
	for (int i = 0; i < 3; i++)
		ga_jw_u64(w, v[i]);
	ga_jw_end(w);
}

static int launch_configs(struct ga_jw *w, struct ga_model *m, const struct ga_launchcfg *l)
{
	uint32_t *ord;
	size_t i;

	if (l->oom || !(ord = ga_launchcfg_order(l, m)))
		return -1;
	ga_jw_key(w, "launch_configs");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < l->nc; i++) {
		const struct ga_lcfg *c = &l->c[ord[i]];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, c->name));
		triple(w, "grid", c->grid);
		triple(w, "block", c->block);
		ga_jw_ku64(w, "registers", c->regs);
		ga_jw_ku64(w, "static_smem", c->static_smem);
		ga_jw_ku64(w, "dynamic_smem", c->dynamic_smem);
		ga_jw_ku64(w, "count", c->count);
		ga_jw_ku64(w, "total_ns", c->total);
		ga_jw_key(w, "occupancy");
		if (c->occupancy >= 0)
			ga_jw_rawf(w, "%.4f", c->occupancy);
		else
			ga_jw_null(w);
		ga_jw_ku64(w, "blocks_per_sm", c->active_blocks);
		ga_jw_kcstr(w, "limited_by", ga_occ_limit_name(c->limit));
		ga_jw_end(w);
	}
	ga_jw_end(w);
	free(ord);
	return 0;
}

/* Ranges by (domain, name), GPU time and kernels inclusive, as in the report. */
static int ranges(struct ga_jw *w, const struct ga_model *m, const struct ga_ranges *rg,
		  int filtered)
{
	uint32_t *ord = ga_ranges_order_keys(rg, m);
	size_t i;

	if (!ord)
		return -1;
	ga_jw_key(w, "nvtx");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < rg->nkeys; i++) {
		const struct ga_ranges_key *k = &rg->keys[ord[i]];

		if (!k->count || (filtered && !k->acts))
			continue;
		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "name", m, k->name);
		ksid(w, "domain", m, k->domain);
		ga_jw_ku64(w, "count", k->count);
		ga_jw_ku64(w, "cpu_total_ns", k->cpu_total);
		ga_jw_ku64(w, "cpu_min_ns", k->count ? k->cpu_min : 0);
		ga_jw_ku64(w, "cpu_max_ns", k->cpu_max);
		ga_jw_ku64(w, "cpu_stddev_ns", ga_welford_stddev(&k->cpu_var, k->count));
		ga_jw_ku64(w, "gpu_ns", k->gpu_ns);
		ga_jw_ku64(w, "kernels", k->kernels);
		/* Launched by other threads while it was open (the report's Other threads). */
		ga_jw_ku64(w, "other_threads_gpu_ns", k->other_ns);
		ga_jw_ku64(w, "other_threads_kernels", k->other_kernels);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	free(ord);
	ga_jw_key(w, "marks");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < rg->nmarks; i++) {
		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "name", m, rg->marks[i].name);
		ksid(w, "domain", m, rg->marks[i].domain);
		ga_jw_ku64(w, "count", rg->marks[i].count);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	return 0;
}

static void sites(struct ga_jw *w, struct ga_model *m, const struct ga_sites *st)
{
	size_t i, j;

	ga_jw_key(w, "launch_sites");
	ga_jw_arr(w, GA_JW_LINES);
	for (i = 0; i < st->nsites; i++) {
		const struct ga_stack_site *x = &st->sites[st->order[i]];

		ga_jw_obj(w, GA_JW_COMPACT);
		ksid(w, "site", m, x->str);
		ga_jw_key(w, "frames");
		ga_jw_arr(w, GA_JW_COMPACT);
		for (j = 0; j < x->nf; j++)
			sid(w, m, st->ftext[x->foff + j]);
		ga_jw_end(w);
		ga_jw_ku64(w, "gpu_ns", x->gpu_ns);
		ga_jw_ku64(w, "launches", x->launches);
		ga_jw_key(w, "kernels");
		ga_jw_arr(w, GA_JW_COMPACT);
		for (j = x->klo; j < x->khi; j++) {
			const struct ga_stack_kernel *k = &st->skern[j];

			ga_jw_obj(w, GA_JW_COMPACT);
			ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, k->name));
			ga_jw_ku64(w, "launches", k->count);
			ga_jw_ku64(w, "gpu_ns", k->ns);
			ga_jw_end(w);
		}
		ga_jw_end(w);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

/* A double, or null when it is not finite. */
static void num(struct ga_jw *w, double x)
{
	if (isfinite(x))
		ga_jw_rawf(w, "%.17g", x);
	else
		ga_jw_null(w);
}

static void knum(struct ga_jw *w, const char *key, double x)
{
	ga_jw_key(w, key);
	num(w, x);
}

/* A double that only some traces have: null when have is 0. */
static void knum_if(struct ga_jw *w, const char *key, int have, double x)
{
	ga_jw_key(w, key);
	if (have)
		num(w, x);
	else
		ga_jw_null(w);
}

static void metrics_devices(struct ga_jw *w, const struct ga_model *m, const struct ga_mx *mx)
{
	ga_jw_key(w, "devices");
	ga_jw_arr(w, GA_JW_LINES);
	for (size_t i = 0; i < mx->npeaks; i++) {
		const struct ga_mx_peaks *p = &mx->peaks[i];

		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "pid", m->procs[p->proc].pid);
		ga_jw_ku64(w, "device", p->device);
		ga_jw_kcstr(w, "chip", p->chip ? ga_model_str(m, p->chip) : "");
		ga_jw_key(w, "cc");
		ga_jw_rawf(w, "\"%u.%u\"", p->p.cc_major, p->p.cc_minor);
		ga_jw_ku64(w, "sm_count", p->p.sm_count);
		ga_jw_ku64(w, "sm_clock_khz", p->p.sm_clock_khz);
		ga_jw_ku64(w, "mem_clock_khz", p->p.mem_clock_khz);
		ga_jw_ku64(w, "bus_width", p->p.bus_width);
		ga_jw_key(w, "peak_flop_s");
		ga_jw_obj(w, GA_JW_COMPACT);
		for (int c = 0; c < GA_MX_PREC; c++)
			knum(w, gp_peak_key[c], p->p.flops[c]);
		ga_jw_end(w);
		knum(w, "peak_dram_bytes_s", p->p.dram_bw);
		knum_if(w, "peak_l2_bytes_s", p->l2_bw > 0, p->l2_bw);
		/* Which ceilings gpuprof calibrate measured (the rest: specifications). */
		ga_jw_key(w, "measured");
		ga_jw_arr(w, GA_JW_COMPACT);
		for (int c = 0; c < GA_MX_PREC; c++)
			if ((p->measured >> c) & 1)
				ga_jw_cstr(w, gp_peak_key[c]);
		if (p->measured & GA_MX_MEAS_DRAM)
			ga_jw_cstr(w, "dram");
		ga_jw_end(w);
		ga_jw_key(w, "measured_on");
		if (p->measured)
			ga_jw_cstr(w, p->measured_on);
		else
			ga_jw_null(w);
		ga_jw_end(w);
	}
	ga_jw_end(w);
}

static int metrics_kernels(struct ga_jw *w, struct ga_model *m, const struct ga_mx *mx)
{
	uint32_t *o = ga_mx_order(mx, m);

	if (!o)
		return -1;
	ga_jw_key(w, "kernels");
	ga_jw_arr(w, GA_JW_LINES);
	for (size_t i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *k = &mx->k[o[i]];
		const struct ga_mx_peaks *p = ga_mx_peaks_of(mx, k->proc, k->device);
		int dram = (k->have & GA_MX_HAVE_DRAM) != 0;
		struct ga_roof r;

		ga_roof_eval(k->flops, dram ? k->dram_total : 0, k->time_ns, p ? &p->p : NULL, &r);
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_kcstr(w, "name", ga_strtab_full(&m->strs, k->name));
		ksid(w, "mangled", m, k->name);
		ga_jw_ku64(w, "pid", m->procs[k->proc].pid);
		ga_jw_ku64(w, "device", k->device);
		ga_jw_ku64(w, "launches", k->launches);
		ga_jw_ku64(w, "cached", k->cached);
		ga_jw_ku64(w, "time_ns", k->time_ns);
		ga_jw_ku64(w, "cost_ns", k->cost_ns);
		ga_jw_ku64(w, "passes", k->passes);
		ga_jw_key(w, "flops");
		ga_jw_obj(w, GA_JW_COMPACT);
		for (int c = 0; c < GA_MX_PREC; c++)
			knum(w, gp_peak_key[c], k->flops[c]);
		ga_jw_end(w);
		knum(w, "dram_read", k->dram_read);
		knum(w, "dram_write", k->dram_write);
		knum_if(w, "dram_bytes", dram, k->dram_total);
		knum_if(w, "l2_bytes", (k->have & GA_MX_HAVE_L2) != 0, k->l2);
		knum_if(w, "l1_bytes", (k->have & GA_MX_HAVE_L1) != 0, k->l1);
		knum_if(w, "sm_clock_hz", k->sm_hz_n != 0, k->sm_hz_n ? k->sm_hz / (double)k->sm_hz_n : 0);
		knum(w, "flop_s", k->time_ns ? r.flops / ((double)k->time_ns * 1e-9) : NAN);
		knum(w, "dram_bytes_s", k->time_ns && dram ? r.dram_bw : NAN);
		knum(w, "intensity", dram ? r.ai : NAN);
		ga_jw_key(w, "dominant");
		if (r.dominant >= 0)
			ga_jw_cstr(w, gp_peak_key[r.dominant]);
		else
			ga_jw_null(w);
		knum(w, "pct_of_roof", r.verdict != GA_ROOF_UNKNOWN ? r.pct : NAN);
		ga_jw_kcstr(w, "bound", ga_roof_verdict_name(r.verdict));
		ga_jw_key(w, "values_sum");
		ga_jw_obj(w, GA_JW_COMPACT);
		for (size_t j = 0; j < mx->nnames; j++) {
			if (isnan(k->vals[j]))
				continue; /* a metric this kernel was not measured with */
			ga_jw_key_str(w, ga_model_str(m, mx->names[j]),
				      ga_strtab_len(&m->strs, mx->names[j]));
			num(w, k->vals[j]);
		}
		ga_jw_end(w);
		ga_jw_end(w);
	}
	ga_jw_end(w);
	free(o);
	return 0;
}

/* "metrics": only traces recorded with --metrics have it. */
static int metrics(struct ga_jw *w, struct ga_model *m, const struct ga_mx *mx)
{
	if (mx->oom)
		return -1;
	if (!ga_mx_any(mx))
		return 0;
	ga_jw_key(w, "metrics");
	ga_jw_obj(w, GA_JW_COMPACT);
	ga_jw_key(w, "set");
	if (mx->set)
		sid(w, m, mx->set);
	else
		ga_jw_null(w);
	ga_jw_ku64(w, "status", mx->status);
	ga_jw_ku64(w, "passes", mx->passes);
	ga_jw_key(w, "launches_per_config");
	if (mx->launches == GP_METRICS_LAUNCHES_ALL)
		ga_jw_cstr(w, "all");
	else
		ga_jw_u64(w, mx->launches);
	ga_jw_ku64(w, "profiled", mx->has_info ? mx->profiled : mx->records);
	ga_jw_ku64(w, "records", mx->records);
	ga_jw_ku64(w, "cached", mx->cached);
	ga_jw_key(w, "replay");
	ga_jw_cstr(w, !mx->spread ? "kernel" : mx->spread == mx->records ? "launches" : "both");
	ga_jw_ku64(w, "partial", ga_mx_partial(mx));
	ga_jw_ku64(w, "skipped_capture", mx->skipped_capture);
	ga_jw_ku64(w, "skipped_graph_launches", mx->skipped_graph);
	ga_jw_ku64(w, "failed", mx->failed);
	ga_jw_ku64(w, "skipped_other", mx->skipped_other);
	ga_jw_ku64(w, "cost_ns", mx->cost_ns);
	metrics_devices(w, m, mx);
	if (metrics_kernels(w, m, mx))
		return -1;
	ga_jw_end(w);
	return 0;
}

/* A table summaries do not hold yet: null, not an empty list. */
static void null_key(struct ga_jw *w, const char *key)
{
	ga_jw_key(w, key);
	ga_jw_null(w);
}

static int end(struct ga_export *e)
{
	struct ga_jw *w = &e->jw;
	struct ga_model *m = &e->an->m;

	ga_jw_obj(w, GA_JW_KEYLINES);
	ga_jw_ku64(w, "schema", GA_JSON_SCHEMA);
	if (m->sum_parts) {
		/* Built from summaries: what they leave out is absent or null. */
		ga_jw_key(w, "summary");
		ga_jw_obj(w, GA_JW_COMPACT);
		ga_jw_ku64(w, "parts", m->sum_parts);
		ga_jw_kcstr(w, "not_summarized",
			    m->sum_no_sites ? GA_SUM_MISSING ", " GA_SUM_MISSING_SITES : GA_SUM_MISSING);
		ga_jw_kcstr(w, "median_error", GA_SUM_REL_ERR_TEXT);
		ga_jw_end(w);
	}
	if (ga_json_findings(w, e->an))
		return -1;
	files(w, m);
	processes(w, m, &e->an->rk);
	devices(w, m);
	counts(w, m);
	if (kernels(w, m))
		return -1;
	if (launch_configs(w, m, &e->an->lc) || latency(w, m, &e->an->lat))
		return -1;
	memory(w, m);
	if (memory_ops(w, m))
		return -1;
	memory_usage(w, m, &e->an->mu);
	graphs(w, m);
	if (api(w, m))
		return -1;
	if (ranges(w, m, &e->an->rg, ga_analysis_filtered(e->an)))
		return -1;
	if (m->sum_parts && m->sum_no_sites)
		null_key(w, "launch_sites");
	else
		sites(w, m, &e->an->st);
	if (metrics(w, m, &e->an->mx))
		return -1;
	ga_jw_ku64(w, "streams", m->streams);
	ga_jw_layout(w, GA_JW_SPACED);
	ga_jw_ku64(w, "api_threads", m->api_threads);
	ga_jw_ku64(w, "span_ns", m->last_end - m->first_start);
	ga_jw_ku64(w, "first_ns", m->first_start);
	ga_jw_ku64(w, "last_ns", m->last_end);
	ga_json_ranks(w, e->an);
	ga_jw_end(w);
	ga_jw_raw(&e->jw, "\n");
	return w->err ? -1 : 0;
}

const struct ga_format ga_format_json = {
	.name = "json",
	.help = "summary numbers: processes, devices, kernels, memory\n"
		"operations, graphs, API calls, losses (docs/JSON.md)",
	.observe_sites = 1,
	.list_frames = 1,
	.end = end,
};
