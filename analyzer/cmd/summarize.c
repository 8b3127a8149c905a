/*
 * "gpuprof summarize": traces and summaries in, one summary out
 * (model/summary.h), for report, export -t json and diff to merge later:
 * the map step of a large job's analysis, run per node or as Dask tasks.
 * The summary is written to a temporary file and renamed, so a task that
 * is killed and run again leaves no half-written part.  Runs offline only.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"
#include "cmd/cmd.h"
#include "cmd/dirs.h"
#include "model/summary.h"

static void help(FILE *f)
{
	fputs("usage: gpuprof summarize [options] -o PART FILE...\n\n"
	      "Write one summary of the traces and summaries named: what 'report' and\n"
	      "'export -t json' print of them, in a small file that 'report',\n"
	      "'export -t json' and 'diff' read and merge like traces.  Merging is\n"
	      "associative and commutative: any grouping gives the same report.  A\n"
	      "directory stands for its *.gpuprof files (or its *.sum summaries).\n\n"
	      "Options:\n"
	      "  -o, --output PART  the summary to write ('-': standard output)\n"
	      "  --exact            keep every duration, for exact medians whatever the\n"
	      "                     size (by default a table row keeps its durations\n"
	      "                     while the merge holds at most 65536 of them, then\n"
	      "                     a histogram: medians within " GA_SUM_REL_ERR_TEXT ", marked ~)\n"
	      "  --exact-limit N    durations a row keeps exactly (default 65536)\n"
	      "  -j, --jobs N       traces summarized at once, one a thread (default: the\n"
	      "                     CPUs available); the summary is the same for any N\n"
	      "  -h, --help         show this help\n"
	      "  --version          print the version\n\n"
	      "Launch sites are kept as a report shows them by default (3 frames, the\n"
	      "runtime libraries' Python frames folded), their frames named here; hardware\n"
	      "metrics with the ceilings the traces recorded; the GPU over time as its\n"
	      "statistics and averages (the samples stay in the traces); NCCL collectives\n"
	      "as report --align nccl matches them (the first 1024 of each stream and kind).\n"
	      "Not in summaries yet: " GA_SUM_MISSING ".\n\n"
	      "Exit status: 0 when the summary was written, 1 when an input cannot be\n"
	      "read or the output cannot be written, 2 on bad usage.\n",
	      f);
}

int cmd_summarize(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "exact", no_argument, NULL, 'x' },
		{ "exact-limit", required_argument, NULL, 'L' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, GA_OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL;
	uint64_t limit = GA_SUM_EXACT_DEFAULT;
	struct ga_dirs dirs;
	struct ga_output out;
	struct ga_sum *s;
	unsigned char *buf;
	size_t len;
	char *end;
	int c, failed;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "ho:j:", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (ga_jobs_option("summarize", optarg))
				return GA_EXIT_USAGE;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'x':
			limit = 0;
			break;
		case 'L':
			errno = 0;
			limit = strtoull(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || *end || errno || !limit) {
				fprintf(stderr, "gpuprof summarize: --exact-limit needs a number "
					"> 0, not '%s'\n", optarg);
				return GA_EXIT_USAGE;
			}
			break;
		case 'h':
			help(stdout);
			return GA_EXIT_OK;
		case GA_OPT_VERSION:
			return ga_print_version();
		default:
			if (optopt == 'o' || optopt == 'L' || optopt == 'j')
				fprintf(stderr, "gpuprof summarize: %s needs a value\n", argv[optind - 1]);
			else if (optopt)
				fprintf(stderr, "gpuprof summarize: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "gpuprof summarize: unknown option '%s'\n",
					argv[optind - 1]);
			fputs("Try 'gpuprof summarize --help'.\n", stderr);
			return GA_EXIT_USAGE;
		}
	}
	if (!outpath || optind >= argc) {
		fprintf(stderr, "gpuprof summarize: %s\nTry 'gpuprof summarize --help'.\n",
			!outpath ? "no output given (-o PART)" : "no trace file given");
		return GA_EXIT_USAGE;
	}
	/* A directory: the traces and summaries in it (cmd/dirs.h). */
	if (ga_dirs_expand(&dirs, "summarize", argv + optind, argc - optind))
		return GA_EXIT_FAIL;
	if (!(s = ga_summary_collect(dirs.paths, dirs.n, limit))) {
		ga_dirs_free(&dirs);
		return GA_EXIT_FAIL;
	}
	failed = ga_summary_encode(s, &buf, &len) != 0;
	ga_summary_free(s);
	if (failed) {
		ga_dirs_free(&dirs);
		fputs("gpuprof: out of memory\n", stderr);
		return GA_EXIT_FAIL;
	}
	if (ga_output_open(&out, outpath, dirs.paths, dirs.n)) {
		ga_dirs_free(&dirs);
		free(buf);
		return GA_EXIT_FAIL;
	}
	ga_dirs_free(&dirs);
	failed = fwrite(buf, 1, len, out.f) != len;
	free(buf);
	if (ga_output_close(&out, !failed) || failed)
		return GA_EXIT_FAIL;
	return GA_EXIT_OK;
}
