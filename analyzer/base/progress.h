/*
 * The progress line of long reads: "gpuprof: reading NAME: X of Y MiB
 * (P%)" on stderr, rewritten in place with \r, only when stderr is a
 * terminal (never in a file or a pipe), at most GA_PROGRESS_HZ times a
 * second and not before the read has taken 1/GA_PROGRESS_HZ s (short
 * reads show nothing); cleared when the read ends, so that what follows
 * (the report, an error) starts on a clean line.  The reader calls it
 * (read/reader.c).  Runs offline only, on the reading thread.
 */
#ifndef GA_BASE_PROGRESS_H
#define GA_BASE_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#define GA_PROGRESS_HZ 4

/*
 * Read progress of the input name: done bytes of total (0: unknown, a
 * pipe); end: the read is over (clears the line if one is shown).
 */
void ga_progress_read(const char *name, uint64_t done, uint64_t total, int end);

/*
 * For tests: write to out instead of stderr, taken as a terminal when tty
 * is non-zero, with the clock now_ns() instead of CLOCK_MONOTONIC (NULL:
 * the real one).  out NULL: stderr again, a terminal if isatty() says so.
 */
void ga_progress_redirect(FILE *out, int tty, uint64_t (*now_ns)(void));

#endif
