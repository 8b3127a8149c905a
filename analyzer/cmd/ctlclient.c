/*
 * "gpuprof start|stop|status|list|dump": talk to running recorders through
 * their control sockets (protocol: include/gpuprof/control.h).  One
 * request per connection; each subcommand prints what the recorder
 * answered.  Runs in the user's shell, never inside a traced program.
 *
 * Exit status: 0 done, 1 the recorder refused or cannot be reached, 2 bad
 * usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gpuprof/control.h"
#include "gpuprof/template.h"

/* Milliseconds to wait for an answer: a dump of a large ring takes a while. */
#define ANSWER_MS 90000
/* gpuprof list: milliseconds all the recorders of one round have to answer. */
#define LIST_MS 2000
/* gpuprof list: sockets asked at once (descriptors permitting). */
#define LIST_BATCH 512

static int parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || !*s || v <= 0 || v > 0x3fffffff)
		return -1;
	*pid = (int)v;
	return 0;
}

/* The control directory asked for: GPUPROF_CONTROL_DIR, NULL for the default. */
static const char *env_dir(void)
{
	const char *d = getenv("GPUPROF_CONTROL_DIR");

	return d && *d ? d : NULL;
}

/* 0, or 1 after saying why a relative GPUPROF_CONTROL_DIR is refused. */
static int env_dir_bad(char *err, size_t errsz)
{
	const char *d = env_dir();

	if (!d || d[0] == '/')
		return 0;
	snprintf(err, errsz, "GPUPROF_CONTROL_DIR must be an absolute path, not '%s' (the recorder "
		 "refuses a relative one too)", d);
	return 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- escaping what others wrote (answers, command lines) ---- */

/* Length of the valid UTF-8 sequence of a printable code point at p, else 0. */
static size_t utf8_printable(const unsigned char *p, size_t n)
{
	unsigned cp;
	size_t len;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1fu;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0fu;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07u;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3fu);
	}
	/* Overlong forms, surrogates, beyond Unicode. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls, and what reorders or hides text on a terminal. */
	if (cp < 0xa0 || cp == 0xad || cp == 0x61c || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff ||
	    (cp >= 0xfff9 && cp <= 0xfffb))
		return 0;
	return len;
}

size_t ga_control_escape(const char *in, size_t n, char *out, size_t outsz)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;

	if (!outsz)
		return 0;
	for (size_t i = 0; i < n;) {
		size_t u = p[i] >= 0x80 ? utf8_printable(p + i, n - i) : 0;
		char tmp[8];
		size_t tl;

		if (u) {
			memcpy(tmp, p + i, u);
			tl = u;
			i += u;
		} else if (p[i] == '\\') {
			memcpy(tmp, "\\\\", 2);
			tl = 2;
			i++;
		} else if (p[i] >= 0x20 && p[i] < 0x7f) {
			tmp[0] = (char)p[i];
			tl = 1;
			i++;
		} else {
			tl = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", p[i]);
			i++;
		}
		/* Never half an escape or half a character. */
		if (o + tl >= outsz)
			break;
		memcpy(out + o, tmp, tl);
		o += tl;
	}
	out[o] = 0;
	return o;
}

/* The escaped value of key in the answer, "" when absent. */
static const char *answer_value(const char *ans, const char *key, char *out, size_t outsz)
{
	char raw[GP_CONTROL_MSG_MAX];

	gp_control_get(ans, key, raw, sizeof(raw));
	ga_control_escape(raw, strlen(raw), out, outsz);
	return out;
}

/* ---- finding a recorder's socket, and checking it before a byte is sent ---- */

/* Who a process is: its real, effective, saved and file-system users. */
struct who {
	int pid;
	unsigned uid[4];
};

static int read_who(int pid, struct who *w)
{
	char path[64], line[256];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u %u %u", &w->uid[0], &w->uid[1], &w->uid[2],
			   &w->uid[3]) == 4) {
			found = 1;
			break;
		}
	fclose(f);
	w->pid = pid;
	return found ? 0 : -1;
}

/*
 * A listener uid that may be the recorder of w: one of its users, or root
 * (a process started as root that then dropped to another user keeps the
 * socket it made as root).
 */
static int uid_fits(const struct who *w, unsigned uid)
{
	if (uid == 0)
		return 1;
	for (int i = 0; i < 4; i++)
		if (w->uid[i] == uid)
			return 1;
	return 0;
}

/* Whom we may ask: a recorder serves only its own user and root. */
static int may_ask(unsigned uid)
{
	return geteuid() == 0 || uid == geteuid();
}

/* A socket to try: a path, or "@name" (abstract), and the uid its listener must have. */
struct where {
	char path[108];
	unsigned owner;
};

/*
 * 0 when dir is a directory no one but its owner can enter (the recorder
 * made it so); its owner into *owner.  Else -1 with why.
 */
static int dir_safe(const char *dir, unsigned *owner, char *why, size_t whysz)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		snprintf(why, whysz, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, whysz, "%s is not a directory: not used, nothing sent", dir);
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(why, whysz, "%s is open to others (mode %04o, owner uid %u): not used, "
			 "nothing sent", dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return -1;
	}
	*owner = (unsigned)st.st_uid;
	return 0;
}

/* The directory part of a socket path (before its last '/'). */
static void dir_of(const char *path, char *dir, size_t dirsz)
{
	const char *sl = strrchr(path, '/');
	size_t n = sl && sl > path ? (size_t)(sl - path) : 1;

	if (n >= dirsz)
		n = dirsz - 1;
	memcpy(dir, path, n);
	dir[n] = 0;
}

/*
 * Checks a socket path found in a directory and adds it to ws when its
 * directory is safe and its owner may be w's recorder (want: the uid the
 * default directory's name says, or -1).  Returns 1 added, 0 not (why).
 */
static int add_path(struct where *ws, int *nw, int max, const struct who *w, const char *path,
		    long long want, char *why, size_t whysz)
{
	char dir[sizeof(ws->path)];
	unsigned owner;

	if (*nw >= max)
		return 0;
	dir_of(path, dir, sizeof(dir));
	if (dir_safe(dir, &owner, why, whysz) < 0)
		return 0;
	if ((want >= 0 && owner != (unsigned long long)want) || (w && !uid_fits(w, owner))) {
		snprintf(why, whysz, "%s belongs to uid %u, not to the user of process %d: not used, "
			 "nothing sent", dir, owner, w ? w->pid : 0);
		return 0;
	}
	if (!may_ask(owner)) {
		snprintf(why, whysz, "process %d belongs to another user (only its user and root "
			 "may control it)", w ? w->pid : 0);
		return 0;
	}
	snprintf(ws[*nw].path, sizeof(ws[*nw].path), "%s", path);
	ws[*nw].owner = owner;
	(*nw)++;
	return 1;
}

/*
 * Abstract fallback sockets "@gpuprof-UID-PID-HEX" in /proc/net/unix,
 * of process pid (0: every process) whose UID we may ask; calls add for each.
 */
static void scan_abstract(int pid, void (*add)(void *ctx, int pid, unsigned uid, const char *path),
			  void *ctx)
{
	char line[512];
	FILE *f = fopen("/proc/net/unix", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, " @" GP_CONTROL_ABSTRACT_PREFIX), hex[20], path[108];
		unsigned uid;
		int p, end = 0;

		if (!at)
			continue;
		at += 1;
		at[strcspn(at, "\n")] = 0;
		if (sscanf(at, "@" GP_CONTROL_ABSTRACT_PREFIX "%u-%d-%17[0-9a-f]%n", &uid, &p, hex,
			   &end) != 3 || at[end] || strlen(hex) != 16 || (pid && p != pid) || p <= 0 ||
		    !may_ask(uid) || strlen(at) >= sizeof(path))
			continue;
		snprintf(path, sizeof(path), "%s", at);
		add(ctx, p, uid, path);
	}
	fclose(f);
}

struct abs_ctx {
	struct where *ws;
	int *nw, max;
	const struct who *w;
};

static void add_abstract(void *ctx, int pid, unsigned uid, const char *path)
{
	struct abs_ctx *c = ctx;

	(void)pid;
	if (*c->nw >= c->max || !uid_fits(c->w, uid))
		return;
	for (int i = 0; i < *c->nw; i++)
		if (!strcmp(c->ws[i].path, path))
			return;
	snprintf(c->ws[*c->nw].path, sizeof(c->ws->path), "%s", path);
	c->ws[*c->nw].owner = uid;
	(*c->nw)++;
}

/*
 * Where the recorder of w may listen: GPUPROF_CONTROL_DIR's socket, else
 * /tmp/gpuprof-UID's for each user of the process and root; then the
 * abstract fallbacks.  Returns how many; why says what was refused.
 */
static int find_sockets(const struct who *w, struct where *ws, int max, char *why, size_t whysz)
{
	struct abs_ctx ac = { ws, NULL, max, w };
	unsigned uids[5];
	int nu = 0, nw = 0;
	struct stat st;
	char path[108];

	if (env_dir()) {
		if (gp_control_path(path, sizeof(path), env_dir(), 0, w->pid) == 0 &&
		    lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			add_path(ws, &nw, max, w, path, -1, why, whysz);
	} else {
		for (int i = 0; i < 4; i++)
			uids[nu++] = w->uid[i];
		uids[nu++] = 0;
		for (int i = 0; i < nu; i++) {
			int dup = 0;

			for (int j = 0; j < i; j++)
				dup |= uids[j] == uids[i];
			if (dup || gp_control_path(path, sizeof(path), NULL, uids[i], w->pid) < 0 ||
			    lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
				continue;
			add_path(ws, &nw, max, w, path, uids[i], why, whysz);
		}
	}
	ac.nw = &nw;
	scan_abstract(w->pid, add_abstract, &ac);
	return nw;
}

/* Process pid's start, seconds since the epoch; 0 when gone or unknown. */
static double proc_start(int pid)
{
	char path[64], buf[1024], *rp;
	unsigned long long ticks = 0, btime = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* Field 22, counted after the command name's closing parenthesis. */
	rp = strrchr(buf, ')');
	if (!rp || sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			  "%*d %*d %*d %llu", &ticks) != 1)
		return 0;
	f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	return btime ? (double)btime + (double)ticks / (double)sysconf(_SC_CLK_TCK) : 0;
}

/*
 * A socket that refuses connections: left by process pid that ended (or
 * whose pid now names a process started after the socket was made).
 * Removes it; 1 when removed.
 */
static int remove_stale(const char *path, int pid)
{
	struct stat st;
	double started;

	if (path[0] != '/' || lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return 0;
	started = proc_start(pid);
	if (started && started < (double)st.st_mtime + 2)
		return 0;
	return unlink(path) == 0;
}

enum { CONN_OK, CONN_BUSY, CONN_STALE, CONN_FAIL };

/*
 * Connects to where (non-blocking when nb) and checks the listener before
 * anything is sent: it must be process pid run by where->owner.  Returns
 * CONN_OK with *fd, CONN_BUSY (backlog full: try later), CONN_STALE (no
 * one listens: removed when the process is gone) or CONN_FAIL (why).
 */
static int connect_checked(int pid, const struct where *wh, int nb, int *fd, char *why,
			   size_t whysz)
{
	struct sockaddr_un sa;
	socklen_t salen = sizeof(sa);
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int s;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (wh->path[0] == '@') {
		size_t n = strlen(wh->path + 1);

		memcpy(sa.sun_path + 1, wh->path + 1, n);
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	} else {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", wh->path);
	}
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nb ? SOCK_NONBLOCK : 0), 0);
	if (s < 0) {
		snprintf(why, whysz, "socket: %s", strerror(errno));
		return CONN_FAIL;
	}
	if (connect(s, (struct sockaddr *)&sa, salen) < 0) {
		int e = errno;

		close(s);
		if (e == EAGAIN)
			return CONN_BUSY;
		if (e == ECONNREFUSED) {
			int gone = remove_stale(wh->path, pid);

			snprintf(why, whysz, "the recorder of process %d is not listening (%s%s)", pid,
				 wh->path, gone ? ": a stale socket, removed" : "");
			return CONN_STALE;
		}
		if (e == EACCES || e == EPERM)
			snprintf(why, whysz, "%s: permission denied (process %d belongs to another user)",
				 wh->path, pid);
		else
			snprintf(why, whysz, "%s: %s", wh->path, strerror(e));
		return CONN_FAIL;
	}
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.pid != pid ||
	    (unsigned)cred.uid != wh->owner) {
		snprintf(why, whysz, "%s is not the socket of process %d (its listener is process %d "
			 "of uid %u): refused, nothing sent", wh->path, pid, (int)cred.pid,
			 (unsigned)cred.uid);
		close(s);
		return CONN_FAIL;
	}
	*fd = s;
	return CONN_OK;
}

/* Sends req and reads the whole answer before deadline (ms, monotonic); 0 or -1 with why. */
static int exchange(int fd, const char *req, char *ans, size_t anssz, uint64_t deadline,
		    char *why, size_t whysz)
{
	size_t n = 0, len = strlen(req);

	while (n < len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		uint64_t t = now_ms();
		ssize_t w;

		if (t >= deadline || poll(&p, 1, (int)(deadline - t)) == 0) {
			snprintf(why, whysz, "timed out");
			return -1;
		}
		w = send(fd, req + n, len - n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0) {
			snprintf(why, whysz, "%s", strerror(errno));
			return -1;
		}
		n += (size_t)w;
	}
	n = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t t = now_ms();
		ssize_t r;

		if (t >= deadline || poll(&p, 1, (int)(deadline - t)) == 0) {
			snprintf(why, whysz, "timed out");
			return -1;
		}
		r = recv(fd, ans + n, anssz - 1 - n, MSG_DONTWAIT);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			snprintf(why, whysz, "%s", strerror(errno));
			return -1;
		}
		if (r == 0 || (n += (size_t)r) >= anssz - 1)
			break;
	}
	ans[n] = 0;
	return 0;
}

/*
 * Sends req to the recorder of pid; the answer goes into ans.  Returns 0
 * when it said ok, 1 when it said error (ans holds it), -1 when it could
 * not be reached or its socket failed the checks (err says why; then
 * nothing was sent).
 */
int ga_control_request(int pid, const char *req, char *ans, size_t anssz, char *err,
		       size_t errsz)
{
	struct where ws[8];
	char why[600] = "";
	struct who w;
	int nw, fd = -1, rc = CONN_FAIL;

	ans[0] = 0;
	if (env_dir_bad(err, errsz))
		return -1;
	if (read_who(pid, &w) < 0) {
		snprintf(err, errsz, "no process %d", pid);
		return -1;
	}
	nw = find_sockets(&w, ws, 8, why, sizeof(why));
	for (int i = 0; i < nw && rc != CONN_OK; i++)
		rc = connect_checked(pid, &ws[i], 0, &fd, why, sizeof(why));
	if (rc != CONN_OK) {
		if (why[0])
			snprintf(err, errsz, "%s", why);
		else
			snprintf(err, errsz,
				 "process %d has no gpuprof recorder listening (no socket in %s; "
				 "start the program with gpuprof run --start=dormant or "
				 "--flight-recorder, or GPUPROF_CONTROL=1)", pid,
				 env_dir() ? env_dir() : "/tmp/gpuprof-UID");
		return -1;
	}
	if (exchange(fd, req, ans, anssz, now_ms() + ANSWER_MS, why, sizeof(why)) < 0) {
		snprintf(err, errsz, "no answer from process %d: %s", pid, why);
		close(fd);
		return -1;
	}
	close(fd);
	if (!strncmp(ans, "ok\n", 3))
		return 0;
	if (!strncmp(ans, "error\n", 6))
		return 1;
	snprintf(err, errsz, "the recorder of process %d did not answer (it may have been "
		 "refused: only its user and root may control it)", pid);
	return -1;
}

static char answer[GP_CONTROL_MSG_MAX];

/* Runs one request and says what went wrong; returns the exit status. */
static int request(int pid, const char *req)
{
	char err[600], esc[2400], msg[4096];
	int rc = ga_control_request(pid, req, answer, sizeof(answer), err, sizeof(err));

	if (rc < 0) {
		ga_control_escape(err, strlen(err), esc, sizeof(esc));
		fprintf(stderr, "gpuprof: %s\n", esc);
		return GA_EXIT_FAIL;
	}
	if (rc > 0) {
		answer_value(answer, "message", msg, sizeof(msg));
		fprintf(stderr, "gpuprof: process %d: %s\n", pid, msg[0] ? msg : "refused");
		return GA_EXIT_FAIL;
	}
	return GA_EXIT_OK;
}

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fputs("gpuprof: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'gpuprof %s --help'.\n", cmd);
	return GA_EXIT_USAGE;
}

/* An output template anchored at the working directory; 0 or exit status. */
static int output_arg(const char *cmd, const char *arg, char *out, size_t outsz)
{
	struct gp_template_env env = { 0 };
	char cwd[4096], esc[8192], tmp[4096];
	const char *why;
	unsigned uses;
	size_t j = 0;

	if (!*arg)
		return usage_error(cmd, "empty output name%s", "");
	env.host = "localhost";
	if (gp_template_expand(arg, &env, tmp, sizeof(tmp), &uses, &why) == -EINVAL) {
		fprintf(stderr, "gpuprof: bad output template: %s\nTry 'gpuprof %s --help'.\n", why,
			cmd);
		return GA_EXIT_USAGE;
	}
	if (strchr(arg, '\n'))
		return usage_error(cmd, "output name with a newline%s", "");
	if (arg[0] == '/') {
		if (strlen(arg) >= outsz)
			return usage_error(cmd, "output name too long%s", "");
		strcpy(out, arg);
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "gpuprof: cannot tell the current directory: %s\n", strerror(errno));
		return GA_EXIT_FAIL;
	}
	/* The directory is taken literally: its '%' are not escapes. */
	for (const char *p = cwd; *p && j < sizeof(esc) - 2; p++) {
		if (*p == '%')
			esc[j++] = '%';
		esc[j++] = *p;
	}
	esc[j] = 0;
	if ((size_t)snprintf(out, outsz, "%s/%s", esc, arg) >= outsz)
		return usage_error(cmd, "output name too long%s", "");
	return 0;
}

/*
 * Parses "PID [-o FILE]", with --duration S into *dur where dur is given;
 * h: the help printer.  Returns -1 when done (help), else 0/usage.
 */
static int pid_output_args(const char *cmd, int argc, char **argv, void (*h)(FILE *), int *pid,
			   char *out, size_t outsz, double *dur)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;
	char *end;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, dur ? ":d:o:h" : ":o:h", dur ? opts : opts + 1,
				NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			*dur = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(*dur > 0) || *dur > 1e7)
				return usage_error(cmd, "--duration needs seconds above 0, not '%s'", optarg);
			break;
		case 'o':
			if ((rc = output_arg(cmd, optarg, out, outsz)))
				return rc;
			break;
		case 'h':
			h(stdout);
			return -1;
		case ':':
			return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
		default:
			return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc || parse_pid(argv[optind], pid))
		return usage_error(cmd, "expected one process id%s", "");
	return 0;
}

/* Ends request req (n bytes so far) with "output=OUT" where out is set, and sends it. */
static int request_output(int pid, char *req, size_t size, int n, const char *out)
{
	if (out[0])
		n += snprintf(req + n, size - (size_t)n, "output=%s\n", out);
	snprintf(req + n, size - (size_t)n, "\n");
	return request(pid, req);
}

static void start_help(FILE *f)
{
	fputs("usage: gpuprof start PID [--duration S] [-o FILE]\n\n"
	      "Start tracing process PID, whose recorder was started dormant\n"
	      "(gpuprof run --start=dormant, or GPUPROF_START=dormant).  Each start\n"
	      "opens a window that 'gpuprof stop' (or --duration) closes; the trace\n"
	      "holds each window as a capture range.\n\n"
	      "Options:\n"
	      "  --duration S   stop by itself after S seconds (decimals allowed)\n"
	      "  -o, --output FILE\n"
	      "                 this window goes into FILE (a template, as in gpuprof\n"
	      "                 run -o), closed when the window ends; default: the\n"
	      "                 process's own output template\n"
	      "  -h, --help     show this help\n", f);
}

int cmd_start(int argc, char **argv)
{
	char req[GP_CONTROL_MSG_MAX], out[4096] = "", val[GP_CONTROL_MSG_MAX];
	double dur = 0;
	int pid, rc, n;

	rc = pid_output_args("start", argc, argv, start_help, &pid, out, sizeof(out), &dur);
	if (rc)
		return rc < 0 ? GA_EXIT_OK : rc;
	n = snprintf(req, sizeof(req), "start\n");
	if (dur > 0)
		n += snprintf(req + n, sizeof(req) - (size_t)n, "duration_ms=%llu\n",
			      (unsigned long long)llround(dur * 1000.0) ?: 1ull);
	rc = request_output(pid, req, sizeof(req), n, out);
	if (rc)
		return rc;
	answer_value(answer, "file", val, sizeof(val));
	if (val[0])
		printf("gpuprof: tracing process %d into %s", pid, val);
	else
		printf("gpuprof: tracing process %d; it has no CUDA context yet: its trace file is "
		       "created at its first GPU work", pid);
	if (answer_value(answer, "window", val, sizeof(val))[0])
		printf(" (window %s%s)", val, dur > 0 ? ", with a duration" : "");
	putchar('\n');
	return GA_EXIT_OK;
}

/* Parses "PID" alone; h: the help printer.  Returns -1 when done (help), else 0/usage. */
static int pid_only(const char *cmd, int argc, char **argv, int *pid, void (*h)(FILE *))
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		h(stdout);
		return -1;
	}
	if (argc != 2 || parse_pid(argv[1], pid))
		return usage_error(cmd, "expected one process id%s", "");
	return 0;
}

static void stop_help(FILE *f)
{
	fputs("usage: gpuprof stop PID\n\n"
	      "Stop tracing process PID: closes the window 'gpuprof start' opened.\n"
	      "The recorder stays loaded, dormant, until the next start.\n", f);
}

int cmd_stop(int argc, char **argv)
{
	char val[GP_CONTROL_MSG_MAX];
	int pid, rc = pid_only("stop", argc, argv, &pid, stop_help);

	if (rc)
		return rc < 0 ? GA_EXIT_OK : rc;
	rc = request(pid, "stop\n\n");
	if (rc)
		return rc;
	answer_value(answer, "file", val, sizeof(val));
	printf("gpuprof: stopped tracing process %d; trace: %s\n", pid, val[0] ? val : "none (no GPU work in the window)");
	return GA_EXIT_OK;
}

static void status_help(FILE *f)
{
	fputs("usage: gpuprof status PID\n\n"
	      "Print the state of the recorder in process PID: dormant (waiting for\n"
	      "gpuprof start), tracing, idle (between windows, its file still open),\n"
	      "flight (flight recorder); its trace file, records so far and losses,\n"
	      "windows, and the flight recorder's memory.\n", f);
}

/* Prints the answer's key=value lines as "key: value", escaped. */
static void print_answer(void)
{
	static char k[GP_CONTROL_MSG_MAX], v[4 * GP_CONTROL_MSG_MAX];
	const char *p = strchr(answer, '\n');

	while (p && *++p && *p != '\n') {
		const char *nl = strchr(p, '\n'), *eq = strchr(p, '=');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (eq && eq < p + len) {
			ga_control_escape(p, (size_t)(eq - p), k, sizeof(k));
			ga_control_escape(eq + 1, len - (size_t)(eq - p) - 1, v, sizeof(v));
			printf("%-16s %s\n", k, v);
		}
		p = nl;
	}
}

int cmd_status(int argc, char **argv)
{
	int pid, rc = pid_only("status", argc, argv, &pid, status_help);

	if (rc)
		return rc < 0 ? GA_EXIT_OK : rc;
	rc = request(pid, "status\n\n");
	if (rc)
		return rc;
	print_answer();
	return GA_EXIT_OK;
}

static void dump_help(FILE *f)
{
	fputs("usage: gpuprof dump PID [-o FILE]\n\n"
	      "Write the flight recorder of process PID (gpuprof run\n"
	      "--flight-recorder=SIZE) into a trace file: the most recent records\n"
	      "its memory holds.  The program goes on running and recording.\n\n"
	      "Options:\n"
	      "  -o, --output FILE  the dump's file (a template, as in gpuprof run -o);\n"
	      "                     default: the process's own output template\n"
	      "  -h, --help         show this help\n", f);
}

int cmd_dump(int argc, char **argv)
{
	char req[GP_CONTROL_MSG_MAX], out[4096] = "", val[GP_CONTROL_MSG_MAX];
	int pid, rc, n;

	rc = pid_output_args("dump", argc, argv, dump_help, &pid, out, sizeof(out), NULL);
	if (rc)
		return rc < 0 ? GA_EXIT_OK : rc;
	n = snprintf(req, sizeof(req), "dump\n");
	rc = request_output(pid, req, sizeof(req), n, out);
	if (rc)
		return rc;
	answer_value(answer, "file", val, sizeof(val));
	printf("gpuprof: process %d dumped its flight recorder into %s", pid, val);
	if (answer_value(answer, "records", val, sizeof(val))[0])
		printf(" (%s records", val);
	if (answer_value(answer, "dropped_records", val, sizeof(val))[0])
		printf(", %s older ones dropped by design", val);
	puts(")");
	return GA_EXIT_OK;
}

static void list_help(FILE *f)
{
	fputs("usage: gpuprof list\n\n"
	      "List the processes on this host with a gpuprof recorder listening for\n"
	      "control (dormant, tracing, idle or flight recorder): yours, or every\n"
	      "user's when run as root.  Columns: PID, STATE, CUDA (whether the\n"
	      "process has a CUDA context: a launcher that never uses the GPU says\n"
	      "no), RECORDS, FILE, COMMAND.  Every recorder is asked at once and has\n"
	      "2 s to answer; one that does not is listed as 'slow'.  Sockets left\n"
	      "by processes that ended are removed.  Bytes that are not printable\n"
	      "are shown as \\xNN.\n", f);
}

/* The command line of pid, spaces between arguments, escaped, shortened. */
static void cmdline(int pid, char *out, size_t outsz)
{
	char path[64], raw[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	out[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(raw, 1, sizeof(raw), f);
	fclose(f);
	while (n && !raw[n - 1])
		n--;
	for (size_t i = 0; i < n; i++)
		if (!raw[i])
			raw[i] = ' ';
	ga_control_escape(raw, n, out, outsz);
}

/* One recorder asked by gpuprof list. */
struct probe {
	int pid;
	struct where wh;
	int fd;
	int state;                  /* P_* */
	size_t n;
	char *ans;
};
enum { P_NEW, P_WAIT, P_DONE, P_SLOW, P_SKIP };

struct probes {
	struct probe *v;
	int n, cap;
	int removed;                /* stale sockets removed */
};

static void probe_add(struct probes *ps, int pid, const char *path, unsigned owner)
{
	struct probe *p;

	for (int i = 0; i < ps->n; i++)
		if (ps->v[i].pid == pid)
			return;
	if (ps->n == ps->cap) {
		int cap = ps->cap ? 2 * ps->cap : 64;
		struct probe *v = realloc(ps->v, (size_t)cap * sizeof(*v));

		if (!v)
			return;
		ps->v = v;
		ps->cap = cap;
	}
	p = &ps->v[ps->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->fd = -1;
	snprintf(p->wh.path, sizeof(p->wh.path), "%s", path);
	p->wh.owner = owner;
}

/* The sockets of one directory (its owner checked; want: the owner its name says, or -1). */
static void list_dir(struct probes *ps, const char *dir, long long want)
{
	char why[600], path[108];
	unsigned owner;
	struct dirent *e;
	DIR *d;

	if (dir_safe(dir, &owner, why, sizeof(why)) < 0 ||
	    (want >= 0 && owner != (unsigned long long)want) || !may_ask(owner))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), sl = strlen(GP_CONTROL_SUFFIX);
		char num[32];
		int pid;

		if (len <= sl || len - sl >= sizeof(num) ||
		    strcmp(e->d_name + len - sl, GP_CONTROL_SUFFIX))
			continue;
		memcpy(num, e->d_name, len - sl);
		num[len - sl] = 0;
		if (parse_pid(num, &pid) || gp_control_path(path, sizeof(path), dir, 0, pid) < 0)
			continue;
		probe_add(ps, pid, path, owner);
	}
	closedir(d);
}

static void list_abstract(void *ctx, int pid, unsigned uid, const char *path)
{
	probe_add(ctx, pid, path, uid);
}

/* Asks ps->v[from..to) at once; each has until the round's deadline. */
static void probe_round(struct probes *ps, int from, int to)
{
	static const char req[] = "status\n\n";
	uint64_t deadline = now_ms() + LIST_MS;
	struct pollfd *pf = calloc((size_t)(to - from), sizeof(*pf));
	char why[600];

	for (int i = from; i < to; i++) {
		struct probe *p = &ps->v[i];
		struct who w;
		int rc;

		p->state = P_SKIP;
		/* Its user may since have changed: the socket must still fit the process. */
		if (read_who(p->pid, &w) == 0 && !uid_fits(&w, p->wh.owner))
			continue;
		rc = connect_checked(p->pid, &p->wh, 1, &p->fd, why, sizeof(why));
		if (rc == CONN_STALE && why[0] && strstr(why, "removed"))
			ps->removed++;
		if (rc == CONN_BUSY)
			p->state = P_SLOW;
		if (rc != CONN_OK)
			continue;
		/* A few bytes into an empty socket buffer: never blocks. */
		if (send(p->fd, req, sizeof(req) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)(sizeof(req) - 1) || !(p->ans = malloc(GP_CONTROL_MSG_MAX))) {
			close(p->fd);
			p->fd = -1;
			continue;
		}
		p->state = P_WAIT;
	}
	for (;;) {
		int nfd = 0, r;
		uint64_t t = now_ms();

		for (int i = from; i < to; i++)
			if (ps->v[i].state == P_WAIT && pf) {
				pf[nfd].fd = ps->v[i].fd;
				pf[nfd].events = POLLIN;
				pf[nfd].revents = 0;
				nfd++;
			}
		if (!nfd || t >= deadline)
			break;
		r = poll(pf, (nfds_t)nfd, (int)(deadline - t));
		if (r < 0 && errno != EINTR)
			break;
		for (int i = from, k = 0; i < to && r > 0; i++) {
			struct probe *p = &ps->v[i];
			ssize_t got;

			if (p->state != P_WAIT)
				continue;
			if (!pf[k++].revents)
				continue;
			got = recv(p->fd, p->ans + p->n, GP_CONTROL_MSG_MAX - 1 - p->n, MSG_DONTWAIT);
			if (got < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (got > 0)
				p->n += (size_t)got;
			if (got <= 0 || p->n >= GP_CONTROL_MSG_MAX - 1) {
				p->ans[p->n] = 0;
				p->state = strncmp(p->ans, "ok\n", 3) ? P_SKIP : P_DONE;
				close(p->fd);
				p->fd = -1;
			}
		}
	}
	for (int i = from; i < to; i++)
		if (ps->v[i].state == P_WAIT) {
			ps->v[i].state = P_SLOW;
			close(ps->v[i].fd);
			ps->v[i].fd = -1;
		}
	free(pf);
}

static int by_pid(const void *a, const void *b)
{
	const struct probe *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int cmd_list(int argc, char **argv)
{
	static char state[64], records[64], file[4 * 4096], cmd[200], cuda[32];
	struct probes ps = { 0 };
	char dir[4096], err[600];
	struct rlimit rl;
	int header = 0, n = 0, batch = LIST_BATCH;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		list_help(stdout);
		return GA_EXIT_OK;
	}
	if (argc != 1)
		return usage_error("list", "takes no arguments%s", "");
	if (env_dir_bad(err, sizeof(err))) {
		fprintf(stderr, "gpuprof: %s\n", err);
		return GA_EXIT_USAGE;
	}
	if (env_dir()) {
		list_dir(&ps, env_dir(), -1);
	} else if (geteuid() == 0) {
		/* Root: every user's directory. */
		DIR *d = opendir("/tmp");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (strncmp(e->d_name, "gpuprof-", 8) ||
			    strspn(e->d_name + 8, "0123456789") != strlen(e->d_name + 8) ||
			    !e->d_name[8] || strlen(e->d_name + 8) > 10)
				continue;
			snprintf(dir, sizeof(dir), "/tmp/%s", e->d_name);
			list_dir(&ps, dir, strtoll(e->d_name + 8, NULL, 10));
		}
		if (d)
			closedir(d);
	} else {
		snprintf(dir, sizeof(dir), GP_CONTROL_DIR_FMT, (unsigned)geteuid());
		list_dir(&ps, dir, geteuid());
	}
	scan_abstract(0, list_abstract, &ps);
	/* As many at once as descriptors allow. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (rlim_t)batch + 32)
		batch = rl.rlim_cur > 64 ? (int)rl.rlim_cur - 32 : 32;
	for (int i = 0; i < ps.n; i += batch)
		probe_round(&ps, i, i + batch < ps.n ? i + batch : ps.n);
	if (ps.n)
		qsort(ps.v, (size_t)ps.n, sizeof(*ps.v), by_pid);
	for (int i = 0; i < ps.n; i++) {
		struct probe *p = &ps.v[i];

		if (p->state != P_DONE && p->state != P_SLOW)
			continue;
		if (!header) {
			printf("%-8s %-9s %-4s %10s  %-40s %s\n", "PID", "STATE", "CUDA", "RECORDS",
			       "FILE", "COMMAND");
			header = 1;
		}
		cmdline(p->pid, cmd, sizeof(cmd));
		if (p->state == P_SLOW) {
			printf("%-8d %-9s %-4s %10s  %-40s %s\n", p->pid, "slow", "-", "-",
			       "(no answer in 2 s)", cmd);
		} else {
			answer_value(p->ans, "state", state, sizeof(state));
			answer_value(p->ans, "records", records, sizeof(records));
			answer_value(p->ans, "file", file, sizeof(file));
			answer_value(p->ans, "cuda_context", cuda, sizeof(cuda));
			printf("%-8d %-9s %-4s %10s  %-40s %s\n", p->pid, state,
			       cuda[0] && strcmp(cuda, "unknown") ? cuda : "?", records,
			       file[0] ? file : "-", cmd);
		}
		n++;
	}
	for (int i = 0; i < ps.n; i++)
		free(ps.v[i].ans);
	free(ps.v);
	if (ps.removed)
		fprintf(stderr, "gpuprof: removed %d socket%s left by processes that ended\n",
			ps.removed, ps.removed == 1 ? "" : "s");
	if (!n)
		fputs("gpuprof: no process with a gpuprof recorder listening\n", stderr);
	return GA_EXIT_OK;
}
