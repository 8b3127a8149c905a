/*
 * "gpuprof export": options, then the analysis (model/analysis.h) written
 * by one of the export formats (views/formats.c lists them: json, csv,
 * chrome, perfetto, sqlite, pprof, prometheus).  All honour the filters of model/filter.h.  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"
#include "cmd/cmd.h"
#include "cmd/dirs.h"
#include "cmd/options.h"
#include "model/analysis.h"
#include "model/summary.h"
#include "cmd/dask.h"
#include "model/peaks-measured.h"
#include "read/reader.h"
#include "views/formats.h"

/* Each format's help lines, the first beside its name. */
static void formats_help(FILE *f)
{
	size_t i;

	for (i = 0; ga_formats[i]; i++) {
		const char *h = ga_formats[i]->help, *nl;

		fprintf(f, "  %-8s ", ga_formats[i]->name);
		for (;;) {
			nl = strchr(h, '\n');
			fprintf(f, "%.*s\n", nl ? (int)(nl - h) : (int)strlen(h), h);
			if (!nl)
				break;
			h = nl + 1;
			fputs("           ", f);
		}
	}
}

static void help(FILE *f)
{
	fputs("usage: gpuprof export -t json|csv|chrome|perfetto|sqlite|pprof|prometheus\n"
	      "                        [-o OUT] FILE...\n"
	      "       gpuprof export -t csv --table NAME|list [-o OUT] FILE...\n\n"
	      "Write one or more gpuprof traces (merged) in a machine-readable form.\n"
	      "A directory stands for its *.gpuprof files (or its *.sum summaries).\n\n"
	      "Formats:\n",
	      f);
	formats_help(f);
	fputs("\n"
	      "Options:\n", f);
	ga_opts_help(GA_CMD_EXPORT, f);
	fputs("\nNVTX ranges appear as \"nvtx\" and \"marks\" in json, as the \"nvtx\"\n"
	      "column (innermost range) in csv, as slices, async ranges and\n"
	      "instant events in chrome and as slices and instant events in perfetto.\n"
	      "Call stacks (gpuprof run --backtrace) appear as \"launch_sites\" in json\n"
	      "and as the \"stack\" column (the collapsed launch site) in csv.\n"
	      "The sqlite schema (tables, columns, units) is in docs/SQL.md.\n"
	      "Large traces: chrome, perfetto and sqlite hold no NVTX range in\n"
	      "memory; they sort them in temporary files in $TMPDIR (else /tmp).\n\n"
	      "Exit status: 0 on success (damaged traces export what precedes the\n"
	      "damage, with a warning), 1 when a file cannot be read or the output\n"
	      "cannot be written, 2 on bad usage.\n",
	      f);
}

int cmd_export(int argc, char **argv)
{
	const char *outpath = NULL, *table = NULL;
	struct ga_peaks_opt po = { 0 };
	const struct ga_format *fmt = NULL;
	const struct ga_format_table *tab = NULL;
	struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH, .symbolize = 1 };
	struct ga_analysis an;
	struct ga_filter flt;
	struct ga_export e;
	struct ga_output out;
	const char *fold = NULL;
	struct ga_opts opts;
	const struct ga_opts_to to = { .ao = &ao, .po = &po, .fold = &fold, .flt = &flt };
	int c, rc = GA_EXIT_OK, failed, noflows = 0, npaths;
	const char *dask = NULL;
	char *dpath, **paths;
	struct ga_dirs dirs;
	struct ga_dask dk = { 0 };

	ga_filter_init(&flt);
	ga_opts_init(&opts, GA_CMD_EXPORT, "export");
	while ((c = ga_opts_next(&opts, argc, argv)) != -1) {
		switch (ga_opts_analysis(&opts, c, optarg, &to)) {
		case 1:
			continue;
		case -1:
			ga_filter_free(&flt);
			return GA_EXIT_USAGE;
		}
		switch (c) {
		case 'f':
			/* -f is --force in gpuprof run, as in nsys: never the format. */
			ga_filter_free(&flt);
			fputs("gpuprof export: -f is not the format: give it with -t FORMAT or "
			      "--format FORMAT\n", stderr);
			return GA_EXIT_USAGE;
		case 't':
			fmt = ga_format_find(optarg);
			if (!fmt) {
				fprintf(stderr, "gpuprof export: unknown format '%s' (json, csv, "
					"chrome, perfetto, sqlite, pprof or prometheus)\n", optarg);
				ga_filter_free(&flt);
				return GA_EXIT_USAGE;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case GA_OPT_NO_FLOWS:
			noflows = 1;
			break;
		case GA_OPT_TABLE:
			table = optarg;
			break;
		case 'h':
			help(stdout);
			ga_filter_free(&flt);
			return GA_EXIT_OK;
		case GA_OPT_VERSION:
			ga_filter_free(&flt);
			return ga_print_version();
		case GA_OPT_DASK:
			dask = optarg;
			break;
		default:           /* ga_opts_next said why */
			ga_filter_free(&flt);
			return GA_EXIT_USAGE;
		}
	}
	/* --table list needs no trace. */
	if (!fmt || (optind >= argc && !(table && !strcmp(table, "list")))) {
		ga_filter_free(&flt);
		fputs(!fmt ? "gpuprof export: -t (--format) json|csv|chrome|perfetto|sqlite|pprof|prometheus is required\n" :
		      "gpuprof export: no trace file given\n", stderr);
		fputs("Try 'gpuprof export --help'.\n", stderr);
		return GA_EXIT_USAGE;
	}
	if (table) {
		if (!fmt->tables) {
			ga_filter_free(&flt);
			fprintf(stderr, "gpuprof export: --format %s has no tables (--table is for "
				"csv)\n", fmt->name);
			return GA_EXIT_USAGE;
		}
		if (!strcmp(table, "list")) {
			for (tab = fmt->tables; tab->name; tab++)
				printf("%-11s %s\n", tab->name, tab->help);
			ga_filter_free(&flt);
			return GA_EXIT_OK;
		}
		for (tab = fmt->tables; tab->name && strcmp(tab->name, table); tab++)
			;
		if (!tab->name) {
			ga_filter_free(&flt);
			fprintf(stderr, "gpuprof export: no table '%s' in %s (--table list lists "
				"them)\n", table, fmt->name);
			return GA_EXIT_USAGE;
		}
	} else if (fmt->tables) {
		tab = fmt->tables;
	}
	if (fmt->needs_file && (!outpath || !strcmp(outpath, "-"))) {
		ga_filter_free(&flt);
		fprintf(stderr, "gpuprof export: --format %s writes a file: give it with -o FILE\n",
			fmt->name);
		return GA_EXIT_USAGE;
	}
	ao.observe_sites = fmt->observe_sites;
	ao.list_frames = fmt->list_frames;
	ao.sites_ahead = fmt->sites_ahead && (!tab || tab->streams);
	ao.launches = fmt->launches && !noflows;
	ao.marks = fmt->marks;
	ao.range_details = fmt->range_details;
	ao.spill_ranges = fmt->spill_ranges;
	ao.lean = fmt->lean || (tab && tab->lean);
	ao.keep_samples = fmt->samples;
	/*
	 * A single trace's NVTX ranges in the model's read of it (decoded
	 * once), paced, where nothing streams out as it is read (-t json):
	 * built again without where that stops (model/analysis.h).
	 */
	ao.pace = !strcmp(fmt->name, "json") && !fmt->begin;
	/* A directory: the traces and summaries in it (cmd/dirs.h). */
	if (ga_dirs_expand(&dirs, "export", argv + optind, argc - optind)) {
		ga_filter_free(&flt);
		return GA_EXIT_FAIL;
	}
	/*
	 * What streams out as it is read cannot be read again: traces whose
	 * processes may have used a GPU at once keep every busy interval
	 * (model/analysis.h no_retire), unless a lower bound is enough (lean:
	 * a timeline, or CSV's activities; pprof; SQLite, which takes it from
	 * its rows), where they retire even so (busy_bound_ok): memory stays
	 * bounded as the traces grow.  A table written at the end (CSV's
	 * --table) is read again where that happens, as -t json is.
	 */
	ao.busy_bound_ok = ao.lean || fmt->busy_bound_ok;
	ao.no_retire = fmt->begin && (!tab || tab->streams) && dirs.n > 1 && !ao.busy_bound_ok;
	if (ga_analysis_init(&an, &ao, &flt)) {
		ga_filter_free(&flt);
		ga_dirs_free(&dirs);
		fputs("gpuprof: out of memory\n", stderr);
		return GA_EXIT_FAIL;
	}
	an.st.fold = fold;
	if ((fmt->needs_file ? ga_output_open_file : ga_output_open)(&out, outpath, dirs.paths,
								     dirs.n)) {
		ga_analysis_free(&an);
		ga_filter_free(&flt);
		ga_dirs_free(&dirs);
		return GA_EXIT_FAIL;
	}
	memset(&e, 0, sizeof(e));
	e.out = out.f;
	e.path = out.tmp;
	e.name = outpath;
	e.table = tab;
	e.an = &an;
	ga_jw_init(&e.jw, e.out);
	failed = fmt->begin ? fmt->begin(&e) : 0;
	if (failed == -1)
		fputs("gpuprof: out of memory\n", stderr);
	/*
	 * With more than one thread, the output's writes on one of their own
	 * (base/output.h), once begin() has looked at the stream (a terminal?).
	 */
	if (!failed && ga_reader_threads() > 1 &&
	    ga_output_async(&out) == 0) {
		e.out = out.f;
		e.jw.f = out.f;
	}
	paths = dirs.paths;
	npaths = dirs.n;
	if (!failed && dask && strcmp(fmt->name, "json")) {
		fprintf(stderr, "gpuprof export: --dask makes summaries: -t json only, not -t %s\n",
			fmt->name);
		failed = 1;
	} else if (!failed && dask) {
		failed = ga_dask_summarize(&dk, dask, paths, npaths) != 0;
		dpath = dk.part;
		paths = &dpath;
		npaths = 1;
	}
	if (!failed && strcmp(fmt->name, "json") && ga_summary_any(paths, npaths)) {
		fprintf(stderr, "gpuprof export: summaries hold tables, not activities: only "
			"-t json reads them, not -t %s\n", fmt->name);
		failed = 1;
	}
	if (!failed) {
		/*
		 * Several traces of -t json on a pool of threads, merged as
		 * summaries, where they carry all that the traces give (as report).
		 */
		int par = 1;

		if (!strcmp(fmt->name, "json") && !dask)
			par = ga_summary_build_parallel(&an, paths, npaths, 0);
		if (par > 0 && (par = ga_summary_build(&an, paths, npaths)) == GA_ANALYSIS_AGAIN) {
			/* Read twice instead (as report does). */
			if (ga_analysis_again(&an, &ao, &flt)) {
				fputs("gpuprof: out of memory\n", stderr);
				par = -1;
			} else {
				an.st.fold = fold;
				par = ga_summary_build(&an, paths, npaths) ? -1 : 0;
			}
		} else if (par > 0) {
			par = -1;
		}
		failed = par < 0;
	}
	/* The roofline's ceilings: measured ones where gpuprof calibrate stored them. */
	if (!failed)
		ga_peaks_opt_apply(&po, &an.mx, &an.m);
	if (!failed && fmt->end && (failed = fmt->end(&e)) == -1)
		fputs("gpuprof: out of memory\n", stderr);
	ga_jw_flush(&e.jw);
	if (e.jw.err && !failed) {
		fputs("gpuprof: out of memory\n", stderr);
		failed = 1;
	}
	if (!failed && an.rg.lwin_lost)
		fprintf(stderr,
			"gpuprof: %" PRIu64 " GPU activit%s without a flow arrow: the flows' index "
			"keeps the last %u correlation ids of a process, and %s API call, if any, "
			"came before those\n",
			an.rg.lwin_lost, an.rg.lwin_lost == 1 ? "y" : "ies", GA_RANGES_LWIN,
			an.rg.lwin_lost == 1 ? "its" : "their");
	/* On failure the old output, if any, stays as it was. */
	if (ga_output_close(&out, !failed))
		failed = 1;
	/* Traces the cluster could not summarize were named: the output lacks them. */
	if (failed || dk.missing)
		rc = GA_EXIT_FAIL;
	ga_dask_done(&dk);
	if (fmt->done)
		fmt->done(&e);
	ga_jw_free(&e.jw);
	ga_buf_free(&e.s);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	ga_dirs_free(&dirs);
	return rc;
}
