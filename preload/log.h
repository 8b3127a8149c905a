/*
 * One logger for everything that runs inside the traced process.
 * Context: any thread of the target, never a signal handler.  Writes one
 * line to stderr with write(2), saves and restores errno, never allocates.
 */
#ifndef GP_LOG_H
#define GP_LOG_H

#include <stdarg.h>

/* Always printed, prefixed "gpuprof: ". */
void gp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when GPUPROF_VERBOSE is set. */
void gp_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gp_log_set_verbose(int on);

#endif
