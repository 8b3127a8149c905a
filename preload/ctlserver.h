/*
 * The control socket of a running recorder (protocol: include/gpuprof/
 * control.h).  It exists only when asked for (dormant start, flight
 * recorder, GPUPROF_CONTROL): one thread that accepts one connection at a
 * time, checks that the peer is the process's user or root, reads one
 * request within a total deadline, hands it to the lifecycle and writes
 * the answer.  When the directory is not safe it listens on an abstract
 * socket instead (include/gpuprof/control.h).
 * Context: gp_control_listen on the recorder's start path; the thread is
 * ours (all signals blocked); gp_control_close on the exit path;
 * gp_control_forked in a forked child (async-signal-safe).
 */
#ifndef GP_CTLSERVER_H
#define GP_CTLSERVER_H

#include "config.h"

#include <stddef.h>

/*
 * Handles one request (verb and the whole message, for its keys) on the
 * control thread; writes "key=value\n" lines into ans.  Returns 0 (answer
 * "ok") or -1 (answer "error", ans holding message=...).
 */
typedef int (*gp_control_handler)(const char *verb, const char *msg, char *ans, size_t anssz);

/*
 * Creates the socket directory and socket (or the abstract fallback, with
 * one line on stderr saying where), starts the thread.  Returns 0, or
 * -errno after one line on stderr (the program runs on, uncontrolled).
 */
int gp_control_listen(const struct gp_config *cfg, gp_control_handler handle);

/*
 * Serves one connection fd: checks the peer, reads one request (the whole
 * of it within 2 s), calls handle, writes the answer (2 s more); status
 * answers gain cuda_context=yes|no|unknown.  Returns 0 (answered ok), 1
 * (answered error), -EPERM (peer refused, nothing read), -EPROTO (no
 * request in time, or malformed), -EPIPE (the answer could not be sent).
 * The control thread's; tests and the fuzz target call it on a socketpair.
 */
int gp_control_serve(int fd, gp_control_handler handle);

/*
 * Whether the process has a CUDA context: 1 (a primary context is active
 * on some device), 0 (none: a launcher that only initialized CUDA), -1
 * (cannot tell: libcuda not loaded, or the driver refused).  Asks the
 * driver (cuDevicePrimaryCtxGetState) without creating anything; a
 * context made with cuCtxCreate alone is not seen.  Control thread or
 * flusher.
 */
int gp_control_cuda_context(void);

/* The socket's path ("@name" for an abstract one), "" when not listening. */
const char *gp_control_path_self(void);

/* Exit path: removes the socket (the thread ends with the process). */
void gp_control_close(void);

/* Forked child: closes its copy of the socket, never removes the parent's. */
void gp_control_forked(void);

#endif
