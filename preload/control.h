/*
 * The control socket of a running recorder (protocol: include/gpuprof/
 * control.h).  It exists only when asked for (dormant start, flight
 * recorder, GPUPROF_CONTROL): one thread that accepts one connection at a
 * time, checks that the peer is the process's user or root, reads one
 * request, hands it to the lifecycle and writes the answer.
 * Context: gp_control_listen on the recorder's start path; the thread is
 * ours (all signals blocked); gp_control_close on the exit path;
 * gp_control_forked in a forked child (async-signal-safe).
 */
#ifndef GP_CONTROL_H
#define GP_CONTROL_H

#include "config.h"

#include <stddef.h>

/*
 * Handles one request (verb and the whole message, for its keys) on the
 * control thread; writes "key=value\n" lines into ans.  Returns 0 (answer
 * "ok") or -1 (answer "error", ans holding message=...).
 */
typedef int (*gp_control_handler)(const char *verb, const char *msg, char *ans, size_t anssz);

/*
 * Creates the socket directory and socket, starts the thread.  Returns 0,
 * or -errno after one line on stderr (the program runs on, uncontrolled).
 */
int gp_control_listen(const struct gp_config *cfg, gp_control_handler handle);

/* The socket's path, "" when not listening. */
const char *gp_control_path_self(void);

/* Exit path: removes the socket (the thread ends with the process). */
void gp_control_close(void);

/* Forked child: closes its copy of the socket, never removes the parent's. */
void gp_control_forked(void);

#endif
