/*
 * One logger for everything that runs inside the traced process.
 * Context: any thread of the target, never a signal handler.  Writes one
 * line to stderr with write(2), saves and restores errno, never allocates.
 * A progress line (gp_log_progress) goes to a terminal only.
 */
#ifndef GP_LOG_H
#define GP_LOG_H

#include <stdarg.h>

/* Always printed, prefixed "gpuprof: ". */
void gp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when GPUPROF_VERBOSE is set. */
void gp_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gp_log_set_verbose(int on);

/*
 * A progress line, only when stderr is a terminal (looked up once, on the
 * first call; never in a file or a pipe): "\rgpuprof: TEXT" with the rest
 * of the line erased and no newline, so that the next one overwrites it.
 * The next gp_log line, or gp_log_progress_end(), clears it first.
 * Callers keep it to a few a second, off the program's hot path.
 */
void gp_log_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clears the progress line, if one is shown. */
void gp_log_progress_end(void);

#endif
