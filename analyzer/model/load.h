/*
 * Loading traces for a subcommand: open the traces named on the command
 * line (standard input and pipes included), read each into the model,
 * print errors and damage warnings on stderr.  Runs offline only.
 */
#ifndef GA_ANALYZER_LOAD_H
#define GA_ANALYZER_LOAD_H

#include "model/model.h"
#include "base/util.h"

/*
 * A trace named on the command line.  "-" is standard input.  A trace
 * that is not a regular file (standard input, a pipe, a FIFO) can be
 * read only once, but loading reads some traces twice (NVTX
 * ranges first): such a trace is copied into an unlinked temporary file
 * when opened (a chunk at a time), which every pass reads under its name
 * (ga_reader_alias); into memory only where no temporary file can be made.
 */
struct ga_input {
	const char *path;          /* as given */
	const char *name;          /* in reports and messages: path, or "(stdin)" */
	int mem;                   /* read into buf: every pass reads it there */
	int fd1;                   /* 1 + the temporary file a pipe was copied into, read as name */
	unsigned char *buf;        /* the whole trace when mem */
	size_t len;
};

/*
 * Open paths[0..n) into in[0..n).  Returns 0, or -1 after printing why
 * ("gpuprof: (stdin): cannot read: ..."); in is then closed.  A named
 * FIFO that no program writes to is waited for ga_load_fifo_wait_ms at
 * most; a device (character or block) is refused.
 */
int ga_load_open(struct ga_input *in, char *const *paths, int n);

/* How long a FIFO may go without a writer (ms; tests shorten it). */
extern unsigned ga_load_fifo_wait_ms;

/* Release what ga_load_open() read. */
void ga_load_close(struct ga_input *in, int n);

/*
 * Read in[0..n) into m and finish it.  A trace that cannot be read at
 * all is an error ("gpuprof: FILE: byte N: ..." on stderr); damage is a
 * warning.  Returns 0, or -1 after printing why.
 */
int ga_load_inputs(struct ga_model *m, const struct ga_input *in, int n);

/* Append the warnings about m to out, one line each, without prefixes. */
int ga_load_warnings(const struct ga_model *m, struct ga_buf *out);

/*
 * Print the warnings about m on stderr ("gpuprof: warning: ..."), for a
 * model read with warnings_later.  0, or -1 out of memory (said).
 */
int ga_load_print_warnings(const struct ga_model *m);

#endif
