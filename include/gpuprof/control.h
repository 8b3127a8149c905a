/*
 * The control channel between "gpuprof start|stop|status|list|dump" (the
 * analyzer's control subcommand) and a running recorder.  Shared by both
 * sides; header-only, no allocation, no stdio.
 *
 * Where: a Unix stream socket DIR/PID.sock, DIR being GPUPROF_CONTROL_DIR
 * (an absolute path; a relative one is refused by both sides) or, by
 * default, /tmp/gpuprof-UID (UID: the traced process's effective user).
 * The recorder creates DIR with mode 0700 and refuses one that is not a
 * directory owned by its user with no group or other permissions; then
 * (another user squatting /tmp/gpuprof-UID) it listens on an abstract
 * socket "@gpuprof-UID-PID-RANDOM" instead, which clients find in
 * /proc/net/unix.  It listens only when asked for (--start=dormant,
 * --flight-recorder, GPUPROF_CONTROL=1) and removes the socket when the
 * process ends.  Each connection is checked with SO_PEERCRED: only the
 * process's user and root are served.  Clients check before they send
 * anything: the directory (owner, mode 0700) and the peer (SO_PEERCRED:
 * the target's pid, the directory's owner or the abstract name's UID).
 *
 * Protocol: one request per connection.  The client writes lines
 * "key=value\n" (the first line is the verb alone), then an empty line;
 * the recorder answers with "ok\n" or "error\n", lines "key=value\n", and
 * an empty line, then closes.  Values never contain a newline.  Verbs:
 *
 *   start   [duration_ms=N] [output=PATH]   open a window (capture range)
 *   stop                                    close the open window
 *   status                                  state and counts
 *   dump    [output=PATH]                   write the flight recorder
 *
 * Answers carry message=TEXT on error; status and the others carry the
 * keys listed in docs/USAGE.md (state, file, records, lost, windows, ...).
 */
#ifndef GPUPROF_CONTROL_H
#define GPUPROF_CONTROL_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define GP_CONTROL_DIR_FMT "/tmp/gpuprof-%u"
#define GP_CONTROL_SUFFIX ".sock"
/* The abstract fallback: "@" GP_CONTROL_ABSTRACT_PREFIX "UID-PID-" 16 hex digits. */
#define GP_CONTROL_ABSTRACT_PREFIX "gpuprof-"
/* Largest request or answer, bytes. */
#define GP_CONTROL_MSG_MAX 8192
/* Largest duration_ms of start (1e7 s, as gpuprof start --duration). */
#define GP_CONTROL_DURATION_MAX_MS 10000000000ull

/*
 * The socket path of process pid run by user uid, under dir (NULL or "":
 * the default directory).  Returns 0, -EINVAL when dir is relative (the
 * recorder and a client in other directories would resolve it apart), or
 * -ENAMETOOLONG when it does not fit a sockaddr_un.
 */
static inline int gp_control_path(char *out, size_t outsz, const char *dir, unsigned uid,
				  int pid)
{
	char def[64], num[32];
	size_t dl, nl;
	int n;

	if (!dir || !*dir) {
		snprintf(def, sizeof(def), GP_CONTROL_DIR_FMT, uid);
		dir = def;
	}
	if (dir[0] != '/')
		return -EINVAL;
	dl = strlen(dir);
	n = snprintf(num, sizeof(num), "/%d" GP_CONTROL_SUFFIX, pid);
	if (n < 0)
		return -ENAMETOOLONG;
	nl = (size_t)n;
	/* sun_path is 108 bytes on Linux, NUL included. */
	if (dl + nl >= outsz || dl + nl >= 108)
		return -ENAMETOOLONG;
	memcpy(out, dir, dl);
	memcpy(out + dl, num, nl + 1);
	return 0;
}

/*
 * The value of key in a message of "key=value\n" lines (after its first
 * line), copied into out; returns 1 when found, 0 when not (out is "").
 */
static inline int gp_control_get(const char *msg, const char *key, char *out, size_t outsz)
{
	size_t klen = strlen(key);
	const char *p = strchr(msg, '\n');

	if (outsz)
		out[0] = 0;
	while (p && *++p && *p != '\n') {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			size_t v = len - klen - 1;

			if (v >= outsz)
				v = outsz ? outsz - 1 : 0;
			if (outsz) {
				memcpy(out, p + klen + 1, v);
				out[v] = 0;
			}
			return 1;
		}
		p = nl;
	}
	return 0;
}

/*
 * The duration_ms of a start request: 0 with *ms set (0 when absent or 0:
 * no duration), -1 when it is not a number of milliseconds up to
 * GP_CONTROL_DURATION_MAX_MS (a larger one would overflow the recorder's
 * deadline in nanoseconds and close the window at once).
 */
static inline int gp_control_duration(const char *msg, unsigned long long *ms)
{
	char val[32];
	unsigned long long v = 0;
	size_t i;

	*ms = 0;
	if (!gp_control_get(msg, "duration_ms", val, sizeof(val)))
		return 0;
	if (!val[0] || strlen(val) > 11)
		return -1;
	for (i = 0; val[i]; i++) {
		if (val[i] < '0' || val[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(val[i] - '0');
	}
	if (v > GP_CONTROL_DURATION_MAX_MS)
		return -1;
	*ms = v;
	return 0;
}

#endif
