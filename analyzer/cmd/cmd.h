/*
 * Subcommands of gpuprof-analyze, one file each; main.c dispatches to them.
 * Each returns the process exit status: 0 done, 1 a trace could not be
 * read or output could not be written, 2 bad usage (diff: 3 when
 * --fail-above found a regression).  Runs offline only.
 */
#ifndef GA_ANALYZER_CMD_H
#define GA_ANALYZER_CMD_H

#define GA_EXIT_OK 0
#define GA_EXIT_FAIL 1
#define GA_EXIT_USAGE 2
#define GA_EXIT_GREW 3             /* diff --fail-above: something grew too much */
#define GA_EXIT_FINDING 3          /* report --fail-on: a finding fired */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "read/reader.h"
#include "version.h"

/* getopt value of --version, which every command takes. */
#define GA_OPT_VERSION 0x1100
/* getopt value of --symbol-path (report, export). */
#define GA_OPT_SYMBOL_PATH 0x1101

/*
 * Takes -j's argument into ga_reader_jobs.  Returns 0, or -1 after saying
 * why on stderr ("gpuprof CMD: ...").
 */
static inline int ga_jobs_option(const char *cmd, const char *arg)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end || errno || n > GA_READER_JOBS_MAX) {
		fprintf(stderr, "gpuprof %s: -j needs a number from 0 (one per CPU) to %d, "
			"not '%s'\n", cmd, GA_READER_JOBS_MAX, arg);
		return -1;
	}
	ga_reader_jobs = (unsigned)n;
	return 0;
}

/* Prints "gpuprof VERSION" on standard output; returns GA_EXIT_OK. */
static inline int ga_print_version(void)
{
	printf("gpuprof %s\n", GA_VERSION);
	return GA_EXIT_OK;
}

int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
/* summarize.c */
int cmd_summarize(int argc, char **argv);
/* Control of running recorders (ctlclient.c): one request each. */
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_dump(int argc, char **argv);
/* The HTTP server of a spool's windows (serve.c). */
int cmd_serve(int argc, char **argv);
/*
 * Sends a request (control.h's protocol) to the recorder of pid; the answer
 * goes into ans.  0 when it said ok, 1 when it said error, -1 when it
 * could not be reached (err says why).
 */
int ga_control_request(int pid, const char *req, char *ans, size_t anssz, char *err,
		       size_t errsz);
/*
 * Copies n bytes of in into out (outsz with its NUL) for a terminal:
 * printable ASCII and printable UTF-8 as they are, '\\' doubled, every
 * other byte (controls, C1, bidirectional marks, invalid UTF-8) as \xNN;
 * never half an escape.  Returns the length written.
 */
size_t ga_control_escape(const char *in, size_t n, char *out, size_t outsz);
/* The process runner of "gpuprof run" (run-child.c); not listed in --help. */
int cmd_run_child(int argc, char **argv);
/* The wrapper's output-template check (outname.c); not listed in --help. */
int cmd_template(int argc, char **argv);

#endif
