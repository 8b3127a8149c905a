/*
 * Activity filters shared by "report" and "export" (--nvtx, --kernel,
 * --device, --kind), attached to the model with the
 * NVTX index: a filtered-out activity counts nowhere, so every table and
 * export sees the same subset.  CUDA API calls are never filtered.  Runs
 * offline only.
 */
#ifndef GA_ANALYZER_FILTER_H
#define GA_ANALYZER_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include <gpuprof/regex.h>

#include "model/model.h"
#include "model/ranges.h"
#include "base/util.h"

/* getopt_long values of the filter options (cmd/options.c lists them), clear of any short option. */
#define GA_FILTER_OPT_NVTX 0x1000
#define GA_FILTER_OPT_KERNEL 0x1001
#define GA_FILTER_OPT_DEVICE 0x1002
#define GA_FILTER_OPT_KIND 0x1003

struct ga_filter {
	struct gp_regex nvtx_re, kernel_re;
	int has_nvtx, has_kernel;
	uint32_t kinds;            /* 1 << enum ga_act_kind; 0: every kind */
	uint32_t *devices;
	size_t ndevices, capdevices;
	struct ga_buf desc;        /* "--nvtx 'step', --kind kernel" */
	struct ga_ranges *nx;        /* ranges to attribute to, NULL: none */
	const struct ga_model *m;    /* their names' (ga_filter_bind()) */
	uint8_t *kmatch;           /* kernel name strtab id -> 0 unknown, 1 kept, 2 not */
	size_t capkmatch;
	uint64_t seen, kept;       /* GPU activities */
};

void ga_filter_init(struct ga_filter *f);
void ga_filter_free(struct ga_filter *f);
/* Forget what a build saw (counts, verdicts by name, the ranges): for another build. */
void ga_filter_rewind(struct ga_filter *f);

/*
 * Apply one command-line option.  Returns 1 when opt is a filter option
 * and arg is valid, 0 when opt is not a filter option, -1 when arg is
 * invalid (err says why: "--nvtx: bad regular expression '(': missing
 * closing parenthesis at offset 1").
 */
int ga_filter_option(struct ga_filter *f, int opt, const char *arg, char *err, size_t n);

/* Non-zero when any filter option was given. */
int ga_filter_active(const struct ga_filter *f);

/*
 * Attach f and nx (scanned, see ga_ranges_scan()) to m before it reads the
 * files: m's keep hook then filters and attributes each activity.  With no
 * filter and no ranges there is nothing to do per activity: no hook, and
 * ga_ranges_finish() counts the tree from the model.
 */
void ga_filter_bind(struct ga_filter *f, struct ga_ranges *nx, struct ga_model *m);

/* The model's keep hook (ctx: the filter): 1 keep, 0 drop, -1 out of memory. */
int ga_filter_keep(void *ctx, struct ga_model *m, struct ga_act *a);

#endif
