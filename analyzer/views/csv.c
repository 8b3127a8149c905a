/*
 * "export --format csv": one row per GPU activity, streamed as the model
 * reads them (no memory per record), with the innermost NVTX range and the
 * collapsed launch site.  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "views/export.h"

static const char *const kind_name[GA_ACT_KIND_COUNT] = {
	[GA_ACT_KERNEL] = "kernel", [GA_ACT_MEMCPY] = "memcpy",
	[GA_ACT_MEMSET] = "memset", [GA_ACT_GRAPH] = "graph",
};

static void field(struct ga_export *e, const char *s, size_t len)
{
	e->s.len = 0;
	if (ga_csv_escape(&e->s, s, len) == 0 && e->s.len)
		fwrite(e->s.p, 1, e->s.len, e->out);
}

static int row(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_export *e = ctx;
	FILE *o = e->out;
	char kb[16];
	const char *name;
	uint32_t site;

	if (a->kind == GA_ACT_KERNEL)
		name = ga_strtab_full(&m->strs, a->name);
	else
		name = ga_model_str(m, m->labels[a->label].str);
	fprintf(o, "%s,", kind_name[a->kind]);
	field(e, name, strlen(name));
	fprintf(o, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,%u,%u,", a->start, a->end,
		a->end - a->start, a->device_id, a->context, a->stream, a->correlation);
	if (a->kind == GA_ACT_MEMCPY || a->kind == GA_ACT_MEMSET)
		fprintf(o, "%" PRIu64, a->bytes);
	fputc(',', o);
	if (a->kind == GA_ACT_MEMCPY)
		fputs(ga_model_copy_kind(a->copy_kind, kb, sizeof(kb)), o);
	fprintf(o, ",%u,%" PRIu64 ",%u,", a->graph_id, a->graph_node, m->procs[a->proc].pid);
	if (a->nvtx)
		field(e, ga_model_str(m, a->nvtx), ga_strtab_len(&m->strs, a->nvtx));
	fputc(',', o);
	site = ga_sites_site_of(&e->an->st, m, a);
	if (site == GA_STR_NOMEM)
		return -1;
	if (site)
		field(e, ga_model_str(m, site), ga_strtab_len(&m->strs, site));
	if (m->procs[a->proc].rank != GA_NO_RANK)
		fprintf(o, ",%u\n", m->procs[a->proc].rank);
	else
		fputs(",\n", o);
	return ferror(o) ? -1 : 0;
}

static int begin(struct ga_export *e)
{
	e->an->m.hooks.ctx = e;
	e->an->m.hooks.act = row;
	fputs("kind,name,start_ns,end_ns,duration_ns,device,context,stream,"
	      "correlation,bytes,copy_kind,graph_id,graph_node,pid,nvtx,stack,rank\n", e->out);
	return 0;
}

const struct ga_format ga_format_csv = {
	.name = "csv",
	.help = "one row per GPU activity (kernel, memcpy, memset, graph)",
	.observe_sites = 1,
	.sites_ahead = 1,
	.begin = begin,
};
