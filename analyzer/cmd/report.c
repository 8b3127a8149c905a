/*
 * "gpuprof report": options, then the analysis (model/analysis.h) printed
 * by the text views (views/text.c lists the sections).  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/dirs.h"
#include "cmd/options.h"
#include "base/output.h"
#include "model/analysis.h"
#include "model/summary.h"
#include "cmd/dask.h"
#include "model/peaks-measured.h"
#include "read/reader.h"
#include "views/svg.h"
#include "views/text.h"

static void help(FILE *f)
{
	fputs("usage: gpuprof report [options] FILE...\n\n"
	      "Print a report of one or more gpuprof traces.  Several files (the\n"
	      "processes of one job) merge into one report.  A directory stands for\n"
	      "its *.gpuprof files (or its *.sum summaries), not its subdirectories'.\n\n"
	      "Options:\n",
	      f);
	ga_opts_help(GA_CMD_REPORT, f);
	fputs("\n"
	      "Filters apply to the GPU activities of every table, not to API calls.\n\n"
	      "Exit status: 0 when a report was printed (even of a damaged trace,\n"
	      "with a warning), 1 when a file cannot be read, 2 on bad usage, 3 when\n"
	      "a finding selected by --fail-on fired.\n", f);
}

/* ---- Warp-style tables: timeline, activity summary, device summary ---- */

/* ---- nsys-style tables ---- */

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

/* The launch site of a kernel, for the NVTX tree (ranges.h site_of). */
static uint32_t tree_site_of(void *ctx, const struct ga_act *a)
{
	struct ga_analysis *an = ctx;

	return ga_sites_site_of(&an->st, &an->m, a);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_stdin(char *const *paths, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(paths[i], "-"))
			return 1;
	return 0;
}

/* What the report sets in an analysis once initialized. */
static void setup(struct ga_analysis *an, const struct ga_text *r, const char *fold,
		  int fail_on)
{
	an->st.fold = fold;
	/* Without findings printed or gating the exit, nothing of them is gathered. */
	an->fd.off = r->o.findings == GA_FINDINGS_NONE && !fail_on;
	if (r->o.tree) {
		/* The tree names each kernel's launch sites: stacks read ahead. */
		an->o.sites_ahead = 1;
		an->rg.site_of = tree_site_of;
		an->rg.site_ctx = an;
	}
}

int cmd_report(int argc, char **argv)
{
	struct ga_text r = { .o = { .timeline = -1, .top = GA_TEXT_DEFAULT_TOP } };
	struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH, .symbolize = 1,
				       .observe_sites = 1 };
	struct ga_analysis an;
	struct ga_filter flt;
	FILE *out = stdout;
	const char *svg = NULL, *fold = NULL;
	struct ga_peaks_opt po = { 0 };
	char ferr[512];
	unsigned char fail_rules[GA_RULE_COUNT] = { 0 };
	int c, rc = GA_EXIT_OK, fail_sev = -1, fail_on = 0, par;
	struct ga_opts opts;
	const struct ga_opts_to to = { .ao = &ao, .po = &po, .fold = &fold, .flt = &flt };
	const char *dask = NULL;
	char *dpath, **paths;
	struct ga_dirs dirs;
	int npaths;
	struct ga_dask dk = { 0 };

	ga_filter_init(&flt);
	ga_opts_init(&opts, GA_CMD_REPORT, "report");
	while ((c = ga_opts_next(&opts, argc, argv)) != -1) {
		switch (ga_opts_analysis(&opts, c, optarg, &to)) {
		case 1:
			continue;
		case -1:
			ga_filter_free(&flt);
			return GA_EXIT_USAGE;
		}
		switch (c) {
		case GA_OPT_TIMELINE:
			r.o.timeline = 1;
			break;
		case GA_OPT_NO_TIMELINE:
			r.o.timeline = 0;
			break;
		case 'n':
			if (parse_top(optarg, &r.o.top)) {
				fprintf(stderr, "gpuprof report: --top needs a number >= 0, not '%s'\n",
					optarg);
				ga_filter_free(&flt);
				return GA_EXIT_USAGE;
			}
			r.o.top_set = 1;
			break;
		case GA_OPT_FULL_NAMES:
			r.o.full_names = 1;
			break;
		case GA_OPT_TREE:
			r.o.tree = 1;
			break;
		case GA_OPT_ROOFLINE_SVG:
			if (!*optarg) {
				fputs("gpuprof report: --roofline-svg needs a file name\n", stderr);
				ga_filter_free(&flt);
				return GA_EXIT_USAGE;
			}
			svg = optarg;
			break;
		case GA_OPT_FINDINGS:
			if (!strcmp(optarg, "top")) {
				r.o.findings = GA_FINDINGS_TOP;
			} else if (!strcmp(optarg, "all")) {
				r.o.findings = GA_FINDINGS_ALL;
			} else if (!strcmp(optarg, "none")) {
				r.o.findings = GA_FINDINGS_NONE;
			} else {
				fprintf(stderr, "gpuprof report: --findings takes top, all or none, "
					"not '%s'\n", optarg);
				ga_filter_free(&flt);
				return GA_EXIT_USAGE;
			}
			break;
		case GA_OPT_DASK:
			dask = optarg;
			break;
		case GA_OPT_FAIL_ON:
			if (ga_fail_on_parse(optarg, fail_rules, &fail_sev, ferr, sizeof(ferr))) {
				fprintf(stderr, "gpuprof report: %s\n", ferr);
				ga_filter_free(&flt);
				return GA_EXIT_USAGE;
			}
			fail_on = 1;
			break;
		case 'h':
			help(stdout);
			ga_filter_free(&flt);
			return GA_EXIT_OK;
		case GA_OPT_VERSION:
			ga_filter_free(&flt);
			return ga_print_version();
		default:           /* ga_opts_next said why */
			ga_filter_free(&flt);
			return GA_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		ga_filter_free(&flt);
		fputs("gpuprof report: no trace file given\n"
		      "Try 'gpuprof report --help'.\n", stderr);
		return GA_EXIT_USAGE;
	}
	/* A directory: the traces and summaries in it (cmd/dirs.h). */
	if (ga_dirs_expand(&dirs, "report", argv + optind, argc - optind)) {
		ga_filter_free(&flt);
		return GA_EXIT_FAIL;
	}
	paths = dirs.paths;
	npaths = dirs.n;
	/*
	 * Several files are read in sorted order, whatever order they were
	 * named in (a shell's * sorts; rank{0..63} does not): the report is
	 * then the same for any order and any -j, and may go on the pool.
	 */
	if (npaths > 1 && !has_stdin(paths, npaths))
		qsort(paths, (size_t)npaths, sizeof(*paths), cmp_path);
	if (dask) {
		/* The traces become one summary, made on the cluster. */
		if (ga_dask_summarize(&dk, dask, dirs.paths, dirs.n)) {
			ga_filter_free(&flt);
			ga_dirs_free(&dirs);
			return GA_EXIT_FAIL;
		}
		dpath = dk.part;
		paths = &dpath;
		npaths = 1;
	}
	/* Keep one row more than an automatic timeline may show, to know. */
	ao.keep_rows = r.o.timeline == 1 ? SIZE_MAX : r.o.timeline == 0 ? 0 :
		       GA_TEXT_AUTO_TIMELINE_MAX + 1;
	/*
	 * One trace file's NVTX ranges in the model's read of it (decoded
	 * once), paced; built again without where that stops.
	 */
	ao.pace = npaths == 1 && !dask;
	if (ga_analysis_init(&an, &ao, &flt)) {
		ga_filter_free(&flt);
		ga_dirs_free(&dirs);
		fputs("gpuprof: out of memory\n", stderr);
		return GA_EXIT_FAIL;
	}
	setup(&an, &r, fold, fail_on);
	r.an = &an;
	/*
	 * Several traces on a pool of threads, merged as summaries (findings
	 * included: their state merges), where every table printed is carried
	 * by them.
	 */
	par = !r.o.tree && !svg ?
	      ga_summary_build_parallel(&an, paths, npaths,
					r.o.timeline == -1 ? GA_TEXT_AUTO_TIMELINE_MAX : 0) : 1;
	if (par > 0 && (par = ga_summary_build(&an, paths, npaths)) == GA_ANALYSIS_AGAIN) {
		/* Stopped where the scan cannot fold as the model reads: read twice instead. */
		if (ga_analysis_again(&an, &ao, &flt)) {
			ga_filter_free(&flt);
			ga_dirs_free(&dirs);
			fputs("gpuprof: out of memory\n", stderr);
			return GA_EXIT_FAIL;
		}
		setup(&an, &r, fold, fail_on);
		par = ga_summary_build(&an, paths, npaths) ? -1 : 0;
	} else if (par > 0) {
		par = -1;
	}
	if (par < 0 || (r.o.tree && ga_sites_finish(&an.st, &an.m))) {
		rc = GA_EXIT_FAIL;
	} else {
		ga_peaks_opt_apply(&po, &an.mx, &an.m);
		if (svg && ga_svg_roofline_write(&an, svg, dirs.paths, dirs.n))
			rc = GA_EXIT_FAIL;
		if (rc == GA_EXIT_OK && !(svg && !strcmp(svg, "-"))) {
			/*
			 * With more than one thread, the writes on one of their
			 * own (base/output.h): a long --timeline's are most of
			 * its printing.
			 */
			struct ga_output so = { .f = out, .dirfd = -1, .fd = -1 };
			int async = ga_reader_threads() > 1 &&
				    ga_output_async(&so) == 0;

			if (ga_text_report(&r, so.f)) {
				fputs("gpuprof: out of memory\n", stderr);
				rc = GA_EXIT_FAIL;
			}
			if (async && ga_output_close(&so, 1))
				rc = GA_EXIT_FAIL;
		}
		if (rc == GA_EXIT_OK && fail_on) {
			if (ga_analysis_findings(&an)) {
				fputs("gpuprof: out of memory\n", stderr);
				rc = GA_EXIT_FAIL;
			} else if (ga_fail_on_fires(&an.fd, fail_rules, fail_sev)) {
				fprintf(stderr, "gpuprof report: a finding selected by --fail-on "
					"fired\n");
				rc = GA_EXIT_FINDING;
			}
		}
	}
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	ga_dirs_free(&dirs);
	/* Traces the cluster could not summarize were named: the report lacks them. */
	if (dk.missing && rc == GA_EXIT_OK)
		rc = GA_EXIT_FAIL;
	ga_dask_done(&dk);
	return rc;
}
