/*
 * libFuzzer target for the recorder's side of the control protocol
 * (include/gpuprof/control.h): the input is sent as a client's request
 * over a socketpair to gp_control_serve (preload/ctlserver.c), whose handler
 * parses keys as the lifecycle's does (gp_control_get, duration_ms with
 * gp_control_duration, output that must be absolute).  Checks: the server
 * never reads past its buffer, answers a well-formed request with exactly
 * "ok\n" or "error\n", key=value lines and one empty line at the end, and
 * refuses malformed ones (NUL bytes, no empty line, too long) without an
 * answer.  `make fuzz` runs it beside the others; test/unit/test_control.c
 * runs fixed and pseudo-random inputs through it.  Offline test code.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gpuprof/control.h>

#include "ctlserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_CONTROL_HAVE_PROBE
/* No driver here: the status answer's cuda_context comes from this. */
int gp_control_cuda_probe(void);
int gp_control_cuda_probe(void)
{
	return 0;
}
#endif

/* Parses the request as preload/lifecycle.c's handler does, answers what it found. */
static int fuzz_control_handler(const char *verb, const char *msg, char *ans, size_t anssz)
{
	char val[4096];
	unsigned long long ms;

	if (!strcmp(verb, "status")) {
		snprintf(ans, anssz, "pid=1\nstate=dormant\nrecords=0\n");
		return 0;
	}
	if (!strcmp(verb, "start") || !strcmp(verb, "dump")) {
		if (gp_control_duration(msg, &ms) < 0) {
			snprintf(ans, anssz, "message=bad duration_ms\n");
			return -1;
		}
		if (ms > GP_CONTROL_DURATION_MAX_MS)
			abort();
		gp_control_get(msg, "output", val, sizeof(val));
		if (val[0] && val[0] != '/') {
			snprintf(ans, anssz, "message=output must be an absolute path\n");
			return -1;
		}
		if (strchr(val, '\n'))
			abort();
		snprintf(ans, anssz, "window=1\n");
		return 0;
	}
	if (!strcmp(verb, "stop"))
		return 0;
	snprintf(ans, anssz, "message=unknown request\n");
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char ans[GP_CONTROL_MSG_MAX + 64];
	size_t n = 0, sent = 0;
	int sv[2], rc;

	if (size > 4 * GP_CONTROL_MSG_MAX)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	while (sent < size) {
		ssize_t w = send(sv[1], data + sent, size - sent, MSG_NOSIGNAL);

		if (w <= 0)
			break;
		sent += (size_t)w;
	}
	shutdown(sv[1], SHUT_WR);
	rc = gp_control_serve(sv[0], fuzz_control_handler);
	close(sv[0]);
	for (;;) {
		ssize_t r = read(sv[1], ans + n, sizeof(ans) - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof(ans) - 1)
			abort();    /* more than the protocol's largest answer */
	}
	close(sv[1]);
	ans[n] = 0;
	if (rc == -EPERM || rc == -EPIPE)
		abort();    /* our own credentials are served; the reader is there */
	if (rc == -EPROTO) {
		if (n)
			abort();    /* a malformed request gets no answer */
		return 0;
	}
	/*
	 * A request: what the server read (all of the input, or as much as
	 * its buffer holds) ends with the empty line and holds no NUL.
	 */
	if (size > GP_CONTROL_MSG_MAX - 1)
		size = GP_CONTROL_MSG_MAX - 1;
	if (size < 2 || data[size - 1] != '\n' || data[size - 2] != '\n' || memchr(data, 0, size))
		abort();
	if (strncmp(ans, rc == 0 ? "ok\n" : "error\n", rc == 0 ? 3 : 6))
		abort();
	if (n < 2 || strcmp(ans + n - 2, "\n\n"))
		abort();
	/* One empty line, at the end: what follows it would be lost to the client. */
	if ((size_t)(strstr(ans, "\n\n") - ans) != n - 2)
		abort();
	return 0;
}
