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
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gpuprof/control.h"
#include "gpuprof/template.h"

/* Seconds to wait for an answer: a dump of a large ring takes a while. */
#define ANSWER_SECONDS 90

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

/* The control directory of a user: GPUPROF_CONTROL_DIR or the default. */
static const char *env_dir(void)
{
	const char *d = getenv("GPUPROF_CONTROL_DIR");

	return d && *d ? d : NULL;
}

/*
 * Sends req to the recorder of pid; the answer goes into ans.  Returns 0
 * when it said ok, 1 when it said error (ans holds it), -1 when it could
 * not be reached (err says why).
 */
int ga_control_request(int pid, const char *req, char *ans, size_t anssz, char *err,
		       size_t errsz)
{
	char proc[64], path[108];
	struct sockaddr_un sa;
	struct timeval tv = { ANSWER_SECONDS, 0 };
	struct stat st;
	size_t n = 0, len = strlen(req);
	int fd;

	snprintf(proc, sizeof(proc), "/proc/%d", pid);
	if (stat(proc, &st) < 0) {
		snprintf(err, errsz, "no process %d", pid);
		return -1;
	}
	if (gp_control_path(path, sizeof(path), env_dir(), (unsigned)st.st_uid, pid) < 0) {
		snprintf(err, errsz, "control directory name too long");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsz, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		if (e == ENOENT)
			snprintf(err, errsz,
				 "process %d has no gpuprof recorder listening (%s does not exist; "
				 "start the program with gpuprof run --start=dormant or "
				 "--flight-recorder, or GPUPROF_CONTROL=1)", pid, path);
		else if (e == ECONNREFUSED)
			snprintf(err, errsz, "the recorder of process %d is not listening (%s)",
				 pid, path);
		else if (e == EACCES || e == EPERM)
			snprintf(err, errsz, "%s: permission denied (process %d belongs to another user)",
				 path, pid);
		else
			snprintf(err, errsz, "%s: %s", path, strerror(e));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (n < len) {
		ssize_t w = send(fd, req + n, len - n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		n += (size_t)w;
	}
	n = 0;
	for (;;) {
		ssize_t r = recv(fd, ans + n, anssz - 1 - n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errsz, "no answer from process %d: %s", pid,
				 errno == EAGAIN ? "timed out" : strerror(errno));
			close(fd);
			return -1;
		}
		if (r == 0 || (n += (size_t)r) >= anssz - 1)
			break;
	}
	ans[n] = 0;
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
	char err[600], msg[1024];
	int rc = ga_control_request(pid, req, answer, sizeof(answer), err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "gpuprof: %s\n", err);
		return GA_EXIT_FAIL;
	}
	if (rc > 0) {
		gp_control_get(answer, "message", msg, sizeof(msg));
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
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char req[GP_CONTROL_MSG_MAX], out[4096] = "", val[4096];
	double dur = 0;
	int c, pid, rc, n;
	char *end;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			dur = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(dur > 0) || dur > 1e7)
				return usage_error("start", "--duration needs seconds above 0, not '%s'", optarg);
			break;
		case 'o':
			if ((rc = output_arg("start", optarg, out, sizeof(out))))
				return rc;
			break;
		case 'h':
			start_help(stdout);
			return GA_EXIT_OK;
		case ':':
			return usage_error("start", "option %s needs a value", argv[optind - 1]);
		default:
			return usage_error("start", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc || parse_pid(argv[optind], &pid))
		return usage_error("start", "expected one process id%s", "");
	n = snprintf(req, sizeof(req), "start\n");
	if (dur > 0)
		n += snprintf(req + n, sizeof(req) - (size_t)n, "duration_ms=%llu\n",
			      (unsigned long long)llround(dur * 1000.0) ?: 1ull);
	if (out[0])
		n += snprintf(req + n, sizeof(req) - (size_t)n, "output=%s\n", out);
	snprintf(req + n, sizeof(req) - (size_t)n, "\n");
	rc = request(pid, req);
	if (rc)
		return rc;
	gp_control_get(answer, "file", val, sizeof(val));
	printf("gpuprof: tracing process %d into %s", pid, val);
	if (gp_control_get(answer, "window", val, sizeof(val)))
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
	char val[4096];
	int pid, rc = pid_only("stop", argc, argv, &pid, stop_help);

	if (rc)
		return rc < 0 ? GA_EXIT_OK : rc;
	rc = request(pid, "stop\n\n");
	if (rc)
		return rc;
	gp_control_get(answer, "file", val, sizeof(val));
	printf("gpuprof: stopped tracing process %d; trace: %s\n", pid, val);
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

/* Prints the answer's key=value lines as "key: value". */
static void print_answer(void)
{
	const char *p = strchr(answer, '\n');

	while (p && *++p && *p != '\n') {
		const char *nl = strchr(p, '\n'), *eq = strchr(p, '=');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		if (eq && eq < p + len)
			printf("%-16.*s %.*s\n", (int)(eq - p + 1) > 0 ? (int)(eq - p) : 0, p,
			       (int)(len - (eq - p) - 1), eq + 1);
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
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char req[GP_CONTROL_MSG_MAX], out[4096] = "", val[4096];
	int c, pid, rc, n;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if ((rc = output_arg("dump", optarg, out, sizeof(out))))
				return rc;
			break;
		case 'h':
			dump_help(stdout);
			return GA_EXIT_OK;
		case ':':
			return usage_error("dump", "option %s needs a value", argv[optind - 1]);
		default:
			return usage_error("dump", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc || parse_pid(argv[optind], &pid))
		return usage_error("dump", "expected one process id%s", "");
	n = snprintf(req, sizeof(req), "dump\n");
	if (out[0])
		n += snprintf(req + n, sizeof(req) - (size_t)n, "output=%s\n", out);
	snprintf(req + n, sizeof(req) - (size_t)n, "\n");
	rc = request(pid, req);
	if (rc)
		return rc;
	gp_control_get(answer, "file", val, sizeof(val));
	printf("gpuprof: process %d dumped its flight recorder into %s", pid, val);
	if (gp_control_get(answer, "records", val, sizeof(val)))
		printf(" (%s records", val);
	if (gp_control_get(answer, "dropped_records", val, sizeof(val)))
		printf(", %s older ones dropped by design", val);
	puts(")");
	return GA_EXIT_OK;
}

static void list_help(FILE *f)
{
	fputs("usage: gpuprof list\n\n"
	      "List the processes on this host with a gpuprof recorder listening for\n"
	      "control (dormant, tracing, idle or flight recorder): yours, or every\n"
	      "user's when run as root.  Columns: PID, STATE, RECORDS, FILE, COMMAND.\n", f);
}

/* The command line of pid, spaces between arguments, shortened. */
static void cmdline(int pid, char *out, size_t outsz)
{
	char path[64];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	out[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(out, 1, outsz - 1, f);
	fclose(f);
	out[n] = 0;
	while (n && !out[n - 1])
		n--;
	for (size_t i = 0; i < n; i++)
		if (!out[i] || out[i] == '\n')
			out[i] = ' ';
	out[n] = 0;
}

/* Lists the sockets of one directory; returns the number listed. */
static int list_dir(const char *dir, int *header)
{
	char err[600], state[32], records[32], file[4096], cmd[120];
	struct dirent *e;
	int listed = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), sl = strlen(GP_CONTROL_SUFFIX);
		char num[32];
		int pid;

		if (len <= sl || len - sl >= sizeof(num) ||
		    strcmp(e->d_name + len - sl, GP_CONTROL_SUFFIX))
			continue;
		memcpy(num, e->d_name, len - sl);
		num[len - sl] = 0;
		if (parse_pid(num, &pid))
			continue;
		/* Left behind by a process that is gone, or not ours to ask. */
		if (ga_control_request(pid, "status\n\n", answer, sizeof(answer), err,
				       sizeof(err)) != 0)
			continue;
		gp_control_get(answer, "state", state, sizeof(state));
		gp_control_get(answer, "records", records, sizeof(records));
		gp_control_get(answer, "file", file, sizeof(file));
		cmdline(pid, cmd, sizeof(cmd));
		if (!*header) {
			printf("%-8s %-9s %10s  %-40s %s\n", "PID", "STATE", "RECORDS", "FILE",
			       "COMMAND");
			*header = 1;
		}
		printf("%-8d %-9s %10s  %-40s %s\n", pid, state, records, file[0] ? file : "-", cmd);
		listed++;
	}
	closedir(d);
	return listed;
}

int cmd_list(int argc, char **argv)
{
	char dir[4096];
	int header = 0, n = 0;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		list_help(stdout);
		return GA_EXIT_OK;
	}
	if (argc != 1)
		return usage_error("list", "takes no arguments%s", "");
	if (env_dir()) {
		n = list_dir(env_dir(), &header);
	} else if (geteuid() == 0) {
		/* Root: every user's directory. */
		DIR *d = opendir("/tmp");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (strncmp(e->d_name, "gpuprof-", 8) ||
			    strspn(e->d_name + 8, "0123456789") != strlen(e->d_name + 8) ||
			    !e->d_name[8])
				continue;
			snprintf(dir, sizeof(dir), "/tmp/%s", e->d_name);
			n += list_dir(dir, &header);
		}
		if (d)
			closedir(d);
	} else {
		snprintf(dir, sizeof(dir), GP_CONTROL_DIR_FMT, (unsigned)geteuid());
		n = list_dir(dir, &header);
	}
	if (!n)
		fputs("gpuprof: no process with a gpuprof recorder listening\n", stderr);
	return GA_EXIT_OK;
}
