/*
 * The fuzz targets' run of a subcommand with its output discarded: stdout
 * and stderr on /dev/null for the call, getopt reset.  Offline test code.
 */
#ifndef GP_FUZZ_QUIET_H
#define GP_FUZZ_QUIET_H

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

static void fuzz_quiet(int (*cmd)(int, char **), int argc, char **argv)
{
	int saved_out, saved_err, devnull;

	fflush(stdout);
	fflush(stderr);
	devnull = open("/dev/null", O_WRONLY);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(devnull, 1);
	dup2(devnull, 2);
	optind = 0; /* the subcommands parse with getopt */
	cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	close(devnull);
}

#endif
