/*
 * "gpuprof diff BASE NEW": two runs compared, per kernel, memory operation
 * kind, NVTX range and API function (model/compare.h), printed as a table or
 * JSON (views/diffviews.h).  Each side is one trace, or several (merged) with
 * "--" between the sides.  --fail-above makes the exit status a CI check.
 * Runs offline only.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/progress.h"
#include "cmd/cmd.h"
#include "cmd/dirs.h"
#include "cmd/options.h"
#include "model/analysis.h"
#include "model/demangle.h"
#include "model/load.h"
#include "read/reader.h"
#include "model/summary.h"
#include "model/compare.h"
#include "views/diffviews.h"

#define GA_DIFF_DEFAULT_TOP 20     /* as the report's tables */

static void help(FILE *f)
{
	fputs("usage: gpuprof diff [options] BASE.gpuprof NEW.gpuprof\n"
	      "       gpuprof diff [options] BASE... -- NEW...\n\n"
	      "Compare two runs: per kernel, memory operation kind, NVTX range and\n"
	      "CUDA API function, the count and total time in BASE and in NEW, the\n"
	      "change and the ratio NEW/BASE.  Kernels come first, then memory\n"
	      "operations, NVTX ranges and API functions; within each, the biggest\n"
	      "absolute change in time first.  Several traces on a side (with --\n"
	      "between the sides), or a directory of them, merge as in a report.\n"
	      "NVTX ranges compare their CPU (host) time.  Traces with allocation\n"
	      "records (--trace=...,memory) also compare each device's peak of\n"
	      "memory in use, in bytes.\n\n"
	      "Options:\n",
	      f);
	ga_opts_help(GA_CMD_DIFF, f);
	fputs("\n"
	      "Exit status: 0 done, 1 when a trace cannot be read, 2 on bad usage,\n"
	      "3 when --fail-above found an item that grew by more than PCT.\n", f);
}

/* A percentage option: a finite number >= 0. */
static int pct_arg(const char *opt, const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	if (!*s || *end || !isfinite(*v) || *v < 0) {
		fprintf(stderr, "gpuprof diff: %s needs a percentage (a number >= 0), not '%s'\n",
			opt, s);
		return -1;
	}
	return 0;
}

/*
 * Reads one side into an analysis, a single trace's NVTX pass in the
 * model's read (model/ranges.h pace), read twice where that stops.  0, or
 * -1 after printing why.  With later, its read's warnings are left to the
 * caller (a side read beside the other, sides_parallel()).
 */
static int side(struct ga_analysis *an, struct ga_filter *flt, char **paths, int n, int later)
{
	struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH, .pace = 1 };
	int rc;

	ga_filter_init(flt);
	if (ga_analysis_init(an, &ao, flt)) {
		fputs("gpuprof: out of memory\n", stderr);
		return -1;
	}
	an->m.warnings_later = later;
	rc = ga_summary_build(an, paths, n);
	if (rc == GA_ANALYSIS_AGAIN) {
		if (ga_analysis_again(an, &ao, flt)) {
			fputs("gpuprof: out of memory\n", stderr);
			return -1;
		}
		an->m.warnings_later = later;
		rc = ga_summary_build(an, paths, n);
	}
	if (rc) {
		ga_analysis_free(an);
		return -1;
	}
	return 0;
}

struct side_job {
	struct ga_analysis *an;
	struct ga_filter *flt;
	char **paths;
	int n, rc;
};

static void *side_run(void *arg)
{
	struct side_job *j = arg;

	j->rc = side(j->an, j->flt, j->paths, j->n, 1);
	return NULL;
}

/* A trace file of its own (not standard input, a pipe or a summary). */
static int plain_trace(const char *path)
{
	struct stat st;

	return strcmp(path, "-") && !stat(path, &st) && S_ISREG(st.st_mode) &&
	       !ga_summary_is(path);
}

/*
 * Both sides at once, where each is one trace file and -j allows two
 * threads: the base on this thread, the new one on another, each with
 * half the decoding threads; warnings then printed base first, as one
 * after the other prints them.  rc[] as side()'s; 1 when not run so.
 */
static int sides_parallel(struct ga_analysis an[2], struct ga_filter flt[2], char **paths[2],
			  const int n[2], int rc[2])
{
	unsigned jobs = ga_reader_threads(), saved = ga_reader_jobs;
	struct side_job j = { &an[1], &flt[1], paths[1], n[1], 0 };
	struct rlimit as;
	pthread_t th;

	/*
	 * Under a limit of address space, one after the other: a thread's
	 * malloc arena reserves 64 MiB of it, and two reads at once peak
	 * together.
	 */
	if (jobs < 2 || n[0] != 1 || n[1] != 1 || !plain_trace(paths[0][0]) ||
	    !plain_trace(paths[1][0]) || getrlimit(RLIMIT_AS, &as) || as.rlim_cur != RLIM_INFINITY)
		return 1;
	/* Before the thread: the demangling helper is forked once, not beside it. */
	ga_demangle_prestart();
	ga_reader_jobs = jobs / 2;
	ga_progress_redirect(stderr, 0, NULL);
	if (pthread_create(&th, NULL, side_run, &j)) {
		ga_reader_jobs = saved;
		ga_progress_redirect(NULL, 0, NULL);
		return 1;
	}
	rc[0] = side(&an[0], &flt[0], paths[0], n[0], 1);
	pthread_join(th, NULL);
	rc[1] = j.rc;
	ga_reader_jobs = saved;
	ga_progress_redirect(NULL, 0, NULL);
	for (int i = 0; i < 2; i++)
		if (!rc[i] && ga_load_print_warnings(&an[i].m)) {
			for (int k = 0; k < 2; k++)
				if (!rc[k])
					ga_analysis_free(&an[k]);
			rc[0] = rc[1] = -1;
			break;
		}
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct ga_diff_view v = { .fail_above = -1, .top = GA_DIFF_DEFAULT_TOP };
	struct ga_analysis an[2];
	struct ga_filter flt[2];
	struct ga_diff d;
	struct ga_opts opts;
	char **paths[2], *end;
	struct ga_dirs dirs[2];
	int n[2], sides[2], sep, c, json = 0, rc = GA_EXIT_OK;

	/* "--" splits the sides; options come before it. */
	for (sep = 1; sep < argc && strcmp(argv[sep], "--"); sep++)
		;
	ga_opts_init(&opts, GA_CMD_DIFF, "diff");
	while ((c = ga_opts_next(&opts, sep, argv)) != -1) {
		switch (ga_opts_analysis(&opts, c, optarg, &(const struct ga_opts_to){ 0 })) {
		case 1:
			continue;
		case -1:
			return GA_EXIT_USAGE;
		}
		switch (c) {
		case GA_OPT_THRESHOLD:
			if (pct_arg("--threshold", optarg, &v.threshold))
				return GA_EXIT_USAGE;
			break;
		case GA_OPT_FAIL_ABOVE:
			if (pct_arg("--fail-above", optarg, &v.fail_above))
				return GA_EXIT_USAGE;
			break;
		case GA_OPT_JSON:
			json = 1;
			break;
		case GA_OPT_TOP:
			v.top = strtol(optarg, &end, 10);
			if (!*optarg || *end || v.top < 0) {
				fprintf(stderr, "gpuprof diff: --top needs a number >= 0, not '%s'\n",
					optarg);
				return GA_EXIT_USAGE;
			}
			break;
		case GA_OPT_FULL_NAMES:
			v.full_names = 1;
			break;
		case 'h':
			help(stdout);
			return GA_EXIT_OK;
		case GA_OPT_VERSION:
			return ga_print_version();
		default:           /* ga_opts_next said why */
			return GA_EXIT_USAGE;
		}
	}
	if (sep < argc) {
		paths[0] = argv + optind;
		n[0] = sep - optind;
		paths[1] = argv + sep + 1;
		n[1] = argc - sep - 1;
	} else {
		paths[0] = argv + optind;
		paths[1] = argv + optind + 1;
		n[0] = n[1] = argc - optind == 2 ? 1 : 0;
	}
	if (!n[0] || !n[1]) {
		fputs("gpuprof diff: give two traces, BASE and NEW (or BASE... -- NEW...)\n"
		      "Try 'gpuprof diff --help'.\n", stderr);
		return GA_EXIT_USAGE;
	}
	/* One name a side, a trace or a directory (cmd/dirs.h), names it. */
	v.base = n[0] == 1 ? paths[0][0] : "(several traces)";
	v.nw = n[1] == 1 ? paths[1][0] : "(several traces)";
	if (ga_dirs_expand(&dirs[0], "diff", paths[0], n[0]))
		return GA_EXIT_FAIL;
	if (ga_dirs_expand(&dirs[1], "diff", paths[1], n[1])) {
		ga_dirs_free(&dirs[0]);
		return GA_EXIT_FAIL;
	}
	for (int i = 0; i < 2; i++) {
		paths[i] = dirs[i].paths;
		n[i] = dirs[i].n;
	}
	if (sides_parallel(an, flt, paths, n, sides) == 0) {
		if (sides[0] || sides[1]) {
			for (int i = 0; i < 2; i++) {
				if (!sides[i])
					ga_analysis_free(&an[i]);
				ga_filter_free(&flt[i]);
			}
			rc = GA_EXIT_FAIL;
			goto out;
		}
	} else if (side(&an[0], &flt[0], paths[0], n[0], 0)) {
		ga_filter_free(&flt[0]);
		rc = GA_EXIT_FAIL;
		goto out;
	} else if (side(&an[1], &flt[1], paths[1], n[1], 0)) {
		ga_analysis_free(&an[0]);
		ga_filter_free(&flt[0]);
		ga_filter_free(&flt[1]);
		rc = GA_EXIT_FAIL;
		goto out;
	}
	if (ga_diff_build(&d, &an[0], &an[1]) ||
	    (json ? ga_diff_print_json : ga_diff_print_text)(stdout, &d, &v)) {
		fputs("gpuprof: out of memory\n", stderr);
		rc = GA_EXIT_FAIL;
	} else if (v.fail_above >= 0 && ga_diff_grown(&d, v.fail_above)) {
		rc = GA_EXIT_GREW;
	}
	ga_diff_free(&d);
	for (int i = 0; i < 2; i++) {
		ga_analysis_free(&an[i]);
		ga_filter_free(&flt[i]);
	}
out:
	ga_dirs_free(&dirs[0]);
	ga_dirs_free(&dirs[1]);
	return rc;
}
