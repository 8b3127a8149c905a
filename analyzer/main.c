/*
 * gpuprof-analyze: the offline analyzer behind "gpuprof report",
 * "gpuprof export" and "gpuprof diff".  Dispatches to one subcommand and checks that standard
 * output was written in full.  Runs offline, never inside a traced program.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "report", cmd_report, "print reports from one or more trace files (they merge)" },
	{ "export", cmd_export, "write traces as JSON, CSV, Chrome Trace Event JSON or SQLite" },
	{ "diff", cmd_diff, "compare two runs: per kernel, memory operation, NVTX range, API" },
	{ "summarize", cmd_summarize, "write a small mergeable summary of traces (report reads it)" },
	{ "start", cmd_start, "start tracing a process whose recorder is dormant" },
	{ "stop", cmd_stop, "stop tracing it (the recorder stays, dormant)" },
	{ "status", cmd_status, "state, trace file, records and losses of a recorder" },
	{ "list", cmd_list, "processes on this host with a recorder listening" },
	{ "dump", cmd_dump, "write a process's flight recorder into a trace file" },
	{ "serve", cmd_serve, "serve a spool's latest windows over HTTP: /metrics, pprof" },
};

static void usage(FILE *f)
{
	size_t i;

	fputs("usage: gpuprof <command> [options] FILE...|PID\n\n"
	      "Offline analysis of gpuprof traces (.gpuprof files), and control of\n"
	      "running recorders.\n\n"
	      "Commands:\n", f);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s  %s\n", commands[i].name, commands[i].summary);
	fputs("\nOptions:\n"
	      "  -h, --help     show this help\n"
	      "  --version      show the version\n\n"
	      "'gpuprof <command> --help' describes a command.\n", f);
}

/* A report cut short by a full disk must not exit 0. */
static int close_stdout(int rc)
{
	int err = 0;

	if (fflush(stdout) != 0 || ferror(stdout))
		err = errno ? errno : EIO;
	if (fclose(stdout) != 0 && !err)
		err = errno ? errno : EIO;
	if (err && err != EPIPE) {
		fprintf(stderr, "gpuprof: error writing output: %s\n", strerror(err));
		return rc ? rc : GA_EXIT_FAIL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return GA_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return close_stdout(GA_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return close_stdout(ga_print_version());
	/* Every command takes --version; report, export and diff anywhere
	 * among their options, the others as their first argument. */
	if (argc > 2 && !strcmp(argv[2], "--version"))
		for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return close_stdout(ga_print_version());
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return close_stdout(commands[i].fn(argc - 1, argv + 1));
	/* The program's output is not ours to check: no close_stdout. */
	if (!strcmp(argv[1], "run-child"))
		return cmd_run_child(argc - 1, argv + 1);
	if (!strcmp(argv[1], "template"))
		return close_stdout(cmd_template(argc - 1, argv + 1));
	fprintf(stderr, "gpuprof: unknown command '%s'\n"
		"Try 'gpuprof --help'.\n", argv[1]);
	return GA_EXIT_USAGE;
}
