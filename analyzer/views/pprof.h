/*
 * GPU profiles in the formats fleets collect: pprof's profile.proto
 * (views/pprof.c) and Prometheus's text exposition (views/prometheus.c),
 * written from one analysis into memory, so that "gpuprof export" and
 * "gpuprof serve" (cmd/serve.c) share them.  Runs offline only.
 */
#ifndef GA_VIEWS_PPROF_H
#define GA_VIEWS_PPROF_H

#include <stdint.h>

#include "base/util.h"
#include "model/analysis.h"

/*
 * The samples of a pprof profile, gathered while the model streams: one
 * per (process, launch stack, kernel name or memory operation), with its
 * GPU time and launches.
 */
struct ga_pprof_sample {
	uint32_t proc, stack;      /* the file's stack id, 0 none */
	uint32_t leaf;             /* index into leaves */
	uint32_t deferred;         /* a graph node whose stack may come later */
	uint64_t node;             /* that node */
	uint64_t count, ns;
};

struct ga_pprof_leaf {
	uint32_t kind;             /* enum ga_act_kind */
	uint32_t id;               /* kernel: strtab id of its name; else the label index */
};

struct ga_pprof {
	struct ga_analysis *an;
	struct ga_pprof_sample *s;
	size_t ns, caps;
	struct ga_map smap;        /* (proc << 32 | stack, leaf) -> sample; deferred below */
	struct ga_map dmap;        /* (proc << 32 | leaf, node) -> sample, graph nodes */
	struct ga_pprof_leaf *leaves;
	size_t nleaves, capleaves;
	struct ga_map lmap;        /* (kind, id) -> leaf */
	uint64_t total_ns, total_count;
	int nomem;
};

/*
 * Before the analysis is built: take the model's activity hook, count
 * sites with whole stacks.  Returns 0, or -1 when memory runs out.
 */
int ga_pprof_begin(struct ga_pprof *p, struct ga_analysis *an);

/*
 * After it is built: the profile, gzip-compressed, appended to out.
 * Returns 0, or -1 when memory runs out.
 */
int ga_pprof_write(struct ga_pprof *p, struct ga_buf *out);

void ga_pprof_free(struct ga_pprof *p);

/* Prometheus text exposition (views/prometheus.c). */
#define GA_PROM_TOP_DEFAULT 10     /* kernels named in the "kernel" label */
#define GA_PROM_TOP_MAX 100

struct ga_prom_opts {
	unsigned top;              /* kernels named, the rest summed as "other" */
	uint64_t windows;          /* windows the figures cover, 0: count the traces' */
};

/*
 * The metrics of the finished analysis, appended to out.  Returns 0, or
 * -1 when memory runs out.
 */
int ga_prom_write(struct ga_analysis *an, const struct ga_prom_opts *o, struct ga_buf *out);

#endif
