/*
 * Unit tests of the recorder's lifecycle (preload/lifecycle.c) with a
 * stand-in record source: the trace is finished on exit, on a fatal or
 * termination signal (then raised again, exit status unchanged), through
 * the program's own handler, and in a process that records nothing.  A
 * dormant recorder records nothing until "gpuprof start" (the analyzer's
 * control client, over the control socket), and each start/stop window is
 * a capture range, in one file or a file each.  Each case runs in a
 * forked child, as a traced program would.  No GPU needed.
 */
#include "helpers.h"
#include "tap.h"

#include "config.h"
#include "lifecycle.h"
#include "recorder.h"
#include "source.h"

#include "cmd/cmd.h"
#include "read/reader.h"

#include <gpuprof/control.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NK 5000

static char tmpdir[256];

static int fake_attach(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	(void)cfg;
	(void)why;
	(void)whysz;
	*version = 42;
	return 0;
}

/* Like CUPTI's activity kinds: records exist only while tracing is on. */
static atomic_int fake_tracing, fake_set_calls;

static int fake_set_tracing(int on, char *why, size_t whysz)
{
	(void)why;
	(void)whysz;
	atomic_store(&fake_tracing, on);
	atomic_fetch_add(&fake_set_calls, 1);
	return 0;
}

/*
 * Like the CUDA source: enable claims what it needs (a dormant recorder
 * calls it at the first window only); fake_enable_fail refusals first.
 */
static atomic_int fake_enable_calls, fake_enable_fail;

static int fake_enable(char *why, size_t whysz)
{
	atomic_fetch_add(&fake_enable_calls, 1);
	if (atomic_load(&fake_enable_fail) > 0) {
		atomic_fetch_sub(&fake_enable_fail, 1);
		snprintf(why, whysz, "the stand-in source refuses");
		return -1;
	}
	return 0;
}

/* What a new file needs from before it: a device, as CUPTI reports once. */
static void fake_preamble(void)
{
	struct gp_rec_device *d = gp_emit(GP_REC_DEVICE, sizeof(*d));

	if (d)
		d->id = 7;
}

/* Flushes the recorder asked for (final ones left out). */
static atomic_int fake_flushes;

static void fake_flush(int final)
{
	if (!final)
		atomic_fetch_add(&fake_flushes, 1);
}

static struct gp_source fake = {
	.name = "fake",
	.attach = fake_attach,
	.enable = fake_enable,
	.set_tracing = fake_set_tracing,
	.preamble = fake_preamble,
	.flush = fake_flush,
};

const struct gp_source *const gp_sources[] = { &fake, NULL };

/* What a source does: records into the ring, under the producer lock. */
static void emit_kernels(int n)
{
	gp_ring_lock(&gp_rec.ring);
	/* API records name their thread once (gp_emit_thread): twice here, one record. */
	gp_emit_thread((uint32_t)syscall(SYS_gettid));
	gp_emit_thread((uint32_t)syscall(SYS_gettid));
	helpers_emit_kernels(n);
	gp_ring_unlock(&gp_rec.ring);
}

/*
 * Kernels numbered by a process-wide sequence (correlation = number, start
 * growing with it) whose launch shapes are random, so that they compress
 * poorly and fill a small flight recorder quickly.
 */
static uint32_t seq_next;

static void emit_seq(int n)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;
	uint32_t name;

	gp_ring_lock(&gp_rec.ring);
	name = gp_emit_string("fake_kernel");
	for (int i = 0; i < n; i++) {
		struct gp_rec_kernel *k = gp_emit(GP_REC_KERNEL, sizeof(*k));
		uint32_t v[6];

		for (int j = 0; j < 6; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v[j] = (uint32_t)x;
		}
		if (k) {
			k->correlation = seq_next;
			k->start = 1000000 + (uint64_t)seq_next * 1000;
			k->end = k->start + 500;
			k->name = name;
			memcpy(k->grid, v, sizeof(k->grid));
			memcpy(k->block, v + 3, sizeof(k->block));
			gp_ring_note_time(&gp_rec.ring, k->start, k->end);
		}
		seq_next++;
	}
	gp_ring_unlock(&gp_rec.ring);
}

static void on_term_exit7(int sig)
{
	(void)sig;
	exit(7);
}

enum how {
	EXIT0, RAISE_TERM, SEGV, ABORT, OWN_HANDLER, IGNORED_HUP, NOTHING,
	/* The file on demand (gp_source.file_on_demand): */
	LAZY_NOTHING,      /* no GPU work, exit: no file */
	LAZY_TERM,         /* no GPU work, SIGTERM: no file, death as before */
	LAZY_WORK,         /* half the kernels before the first context, half after */
};

/* The traced "program": starts the recorder, records NK kernels, ends as told. */
static void child(enum how how, const char *out)
{
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	/* A plain program's disposition (sanitizer runtimes install their own). */
	signal(SIGSEGV, SIG_DFL);
	setenv("GPUPROF_OUTPUT", out, 1);
	setenv("GPUPROF_FLUSH_MS", "50", 1);
	setenv("GPUPROF_DISABLE", "", 1); /* empty: tracing stays on */
	/* The CONFIG record says which samplers were asked for (none by default). */
	if (how == RAISE_TERM)
		setenv("GPUPROF_GPU_TELEMETRY", "100", 1);
	if (how == OWN_HANDLER)
		signal(SIGTERM, on_term_exit7);
	if (how == IGNORED_HUP)
		signal(SIGHUP, SIG_IGN);
	if (how >= LAZY_NOTHING) {
		char session[320];

		snprintf(session, sizeof(session), "%s.session", out);
		setenv("GPUPROF_SESSION_FILE", session, 1);
		fake.file_on_demand = 1;
	}
	prctl(PR_SET_NAME, "gp-named-thr");
	if (gp_recorder_start() < 0)
		_exit(90);
	if (how == LAZY_WORK) {
		emit_kernels(NK / 2);
		/* Flush intervals pass with the records kept in the ring. */
		usleep(200 * 1000);
		gp_recorder_need_file();
		gp_recorder_need_file();
		emit_kernels(NK - NK / 2);
	} else if (how != NOTHING && how != LAZY_NOTHING && how != LAZY_TERM) {
		emit_kernels(NK);
	}
	switch (how) {
	case LAZY_TERM:
	case RAISE_TERM:
	case OWN_HANDLER:
		kill(getpid(), SIGTERM);
		break;
	case SEGV:
		/* The GPU suite faults for real; a raise stays clear of sanitizers. */
		raise(SIGSEGV);
		break;
	case ABORT:
		abort();
	case IGNORED_HUP:
		raise(SIGHUP);
		break;
	default:
		break;
	}
	exit(0);
}

struct counts {
	uint64_t threads;
	uint32_t named_str;        /* string id of "gp-named-thr" */
	int thread_ok;             /* a THREAD record names this test's thread so */
	uint64_t kernels, end, ranges, control_ranges, devices, names, processes;
	uint64_t range_start[4], range_end[4];
	uint64_t first_corr, last_corr, out_of_order, flights, lost, lost_write;
	struct gp_rec_flight flight;
	struct gp_rec_end endrec;
	uint64_t configs;
	uint32_t config_trace; /* the CONFIG record's trace bits */
};

static int count_cb(void *ctx, const struct gp_rec *rec)
{
	struct counts *c = ctx;

	if (rec->type == GP_REC_STRING) {
		const struct gp_rec_string *st = (const void *)rec;

		if (st->len == 12 && !memcmp(st + 1, "gp-named-thr", 12))
			c->named_str = st->id;
	}
	if (rec->type == GP_REC_THREAD) {
		c->threads++;
		c->thread_ok |= ((const struct gp_rec_thread *)(const void *)rec)->name == c->named_str &&
				c->named_str;
	}
	if (rec->type == GP_REC_KERNEL) {
		const struct gp_rec_kernel *k = (const void *)rec;

		if (!c->kernels)
			c->first_corr = k->correlation;
		else if (k->correlation != c->last_corr + 1)
			c->out_of_order++;
		c->last_corr = k->correlation;
		c->kernels++;
	}
	if (rec->type == GP_REC_CONFIG) {
		c->configs++;
		c->config_trace = ((const struct gp_rec_config *)(const void *)rec)->trace;
	}
	if (rec->type == GP_REC_END) {
		c->end++;
		memcpy(&c->endrec, rec, sizeof(c->endrec));
	}
	if (rec->type == GP_REC_FLIGHT) {
		c->flights++;
		memcpy(&c->flight, rec, sizeof(c->flight));
	}
	if (rec->type == GP_REC_LOST) {
		const struct gp_rec_lost *l = (const void *)rec;

		c->lost += l->count;
		c->lost_write += l->cause == GP_LOST_WRITE_ERROR ? l->count : 0;
	}
	c->processes += rec->type == GP_REC_PROCESS;
	c->devices += rec->type == GP_REC_DEVICE;
	if (rec->type == GP_REC_STRING) {
		const struct gp_rec_string *s = (const void *)rec;

		c->names += s->len == 11 && !memcmp(s + 1, "fake_kernel", 11);
	}
	if (rec->type == GP_REC_CAPTURE_RANGE) {
		const struct gp_rec_capture_range *r = (const void *)rec;

		if (c->ranges < 4) {
			c->range_start[c->ranges] = r->start;
			c->range_end[c->ranges] = r->end;
		}
		c->ranges++;
		c->control_ranges += r->kind == GP_CAPTURE_CONTROL;
	}
	return 0;
}

static void run_case(const char *name, enum how how, int want_sig, int want_exit,
		     uint64_t want_kernels)
{
	char out[300], path[320], err[512];
	struct ga_read_info info;
	struct counts cnt;
	int status = 0, rc;
	pid_t pid;

	memset(&cnt, 0, sizeof(cnt));

	snprintf(out, sizeof(out), "%s/%d", tmpdir, (int)how);
	snprintf(path, sizeof(path), "%s.gpuprof", out);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child(how, out);
	waitpid(pid, &status, 0);
	tap_begin(name);
	if (want_sig)
		CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == want_sig,
		       "status %#x, expected death by signal %d", status, want_sig);
	else
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == want_exit,
		       "status %#x, expected exit %d", status, want_exit);
	rc = ga_reader_read_file(path, count_cb, &cnt, &info, err, sizeof(err));
	CHECKF(rc == GA_READ_OK && !info.damaged && info.finished && cnt.end == 1,
	       "rc %d damaged %d finished %d end %llu: %s %s", rc, info.damaged, info.finished,
	       (unsigned long long)cnt.end, info.reason, err);
	CHECKF(cnt.kernels == want_kernels, "kernels %llu, expected %llu",
	       (unsigned long long)cnt.kernels, (unsigned long long)want_kernels);
	if (want_kernels)
		CHECKF(cnt.threads == 1 && cnt.thread_ok, "%llu THREAD records, named: %d",
		       (unsigned long long)cnt.threads, cnt.thread_ok);
	if (how == EXIT0 || how == RAISE_TERM) {
		uint32_t want = GP_TRACE_SAMPLERS_SAID | (how == RAISE_TERM ? GP_TRACE_GPU_TELEMETRY : 0);

		CHECKF(cnt.configs == 1 &&
			       (cnt.config_trace & (GP_TRACE_SAMPLERS_SAID | GP_TRACE_GPU_METRICS |
						    GP_TRACE_GPU_TELEMETRY)) == want,
		       "%llu CONFIG records, trace %#x", (unsigned long long)cnt.configs,
		       cnt.config_trace);
	}
	tap_end();
}

/* A process with the file on demand that saw no GPU work: no file, no session line. */
static void run_lazy_none(const char *name, enum how how, int want_sig)
{
	char out[300], path[320], session[320];
	struct stat st;
	int status = 0;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/%d", tmpdir, (int)how);
	snprintf(path, sizeof(path), "%s.gpuprof", out);
	snprintf(session, sizeof(session), "%s.session", out);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child(how, out);
	waitpid(pid, &status, 0);
	tap_begin(name);
	if (want_sig)
		CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == want_sig,
		       "status %#x, expected death by signal %d", status, want_sig);
	else
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	CHECKF(stat(path, &st) < 0 && errno == ENOENT, "%s exists", path);
	CHECKF(stat(session, &st) < 0 || st.st_size == 0, "%s names a trace", session);
	tap_end();
}

/* The file made on demand holds what was recorded before it existed. */
static void run_lazy_work(void)
{
	char out[300], session[320], line[400] = "", want[340];
	FILE *f;
	int n = 0;

	snprintf(out, sizeof(out), "%s/%d", tmpdir, (int)LAZY_WORK);
	snprintf(session, sizeof(session), "%s.session", out);
	run_case("file on demand: created at the first GPU work, holds every record", LAZY_WORK,
		 0, 0, NK);
	tap_begin("file on demand: the session file names it once");
	f = fopen(session, "r");
	CHECK(f != NULL);
	if (f) {
		while (fgets(line, sizeof(line), f))
			n++;
		fclose(f);
		snprintf(want, sizeof(want), "%s.gpuprof\n", out);
		CHECKF(n == 1 && !strcmp(line, want), "%d lines, last %s", n, line);
	}
	tap_end();
}

/* ---- dormant start and windows, driven over the control socket ---- */

struct prog {
	pid_t pid;
	int cmd, ack;              /* pipes to and from the child */
};

/*
 * The child: a program that launches work when told ("e N": N kernels,
 * recorded only while the stand-in source traces), reports how often
 * tracing was switched ("s") and exits ("q").
 */
static char child_stderr[320];    /* where the next child's stderr goes, "" stays */

static void dormant_child(int cmd, int ack, const char *out, const char *ctl, const char *start)
{
	char line[64];
	FILE *in = fdopen(cmd, "r");

	if (child_stderr[0]) {
		int fd = open(child_stderr, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0)
			dup2(fd, 2);
	}
	setenv("GPUPROF_OUTPUT", out, 1);
	setenv("GPUPROF_FLUSH_MS", "50", 1);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	if (!strncmp(start, "flight:", 7)) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGSEGV, SIG_DFL);
		setenv("GPUPROF_FLIGHT_RECORDER", start + 7, 1);
		setenv("GPUPROF_DUMP_SIGNAL", "USR2", 1);
	} else {
		setenv("GPUPROF_START", start, 1);
	}
	if (gp_recorder_start() < 0)
		_exit(90);
	while (in && fgets(line, sizeof(line), in)) {
		char reply[64];
		int n = 0;

		if (line[0] == 'f' && sscanf(line + 1, "%d", &n) == 1) {
			if (atomic_load(&fake_tracing))
				emit_seq(n);
			snprintf(reply, sizeof(reply), "done\n");
		} else if (line[0] == 'l' && sscanf(line + 1, "%d", &n) == 1) {
			/* A disk that is full past n bytes: writes there fail (EFBIG). */
			struct rlimit fsize;

			signal(SIGXFSZ, SIG_IGN);
			getrlimit(RLIMIT_FSIZE, &fsize);
			fsize.rlim_cur = n ? (rlim_t)n : fsize.rlim_max;
			snprintf(reply, sizeof(reply), "%d\n", setrlimit(RLIMIT_FSIZE, &fsize));
		} else if (line[0] == 'k') {
			raise(SIGSEGV);
			snprintf(reply, sizeof(reply), "alive\n");
		} else if (line[0] == 'e' && sscanf(line + 1, "%d", &n) == 1) {
			if (atomic_load(&fake_tracing))
				emit_kernels(n);
			snprintf(reply, sizeof(reply), "done\n");
		} else if (line[0] == 's') {
			snprintf(reply, sizeof(reply), "%d %d %d\n", atomic_load(&fake_set_calls),
				 atomic_load(&fake_tracing), atomic_load(&fake_enable_calls));
		} else {
			exit(0);
		}
		if (write(ack, reply, strlen(reply)) < 0)
			_exit(91);
	}
	exit(0);
}

static int prog_start(struct prog *p, const char *out, const char *ctl, const char *start)
{
	int to[2], from[2];

	if (pipe(to) || pipe(from))
		return -1;
	fflush(stdout);
	p->pid = fork();
	if (p->pid == 0) {
		close(to[1]);
		close(from[0]);
		dormant_child(to[0], from[1], out, ctl, start);
	}
	close(to[0]);
	close(from[1]);
	p->cmd = to[1];
	p->ack = from[0];
	return p->pid > 0 ? 0 : -1;
}

/* Sends one command and reads the child's answer line into buf. */
static int prog_say(struct prog *p, const char *what, char *buf, size_t size)
{
	struct pollfd pf = { .fd = p->ack, .events = POLLIN };
	ssize_t n;

	if (write(p->cmd, what, strlen(what)) < 0 || poll(&pf, 1, 10000) != 1)
		return -1;
	n = read(p->ack, buf, size - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static int prog_end(struct prog *p)
{
	int status = 0;

	if (write(p->cmd, "q\n", 2) < 0)
		kill(p->pid, SIGKILL);
	close(p->cmd);
	close(p->ack);
	waitpid(p->pid, &status, 0);
	return status;
}

static int wait_socket(const char *path)
{
	struct stat st;

	/* Up to 10 s: a loaded machine (the sanitizer build) starts the child slowly. */
	for (int i = 0; i < 2000; i++) {
		if (stat(path, &st) == 0)
			return 0;
		usleep(5000);
	}
	return -1;
}

static int ask(int pid, const char *req, char *ans, size_t anssz)
{
	char err[600];
	int rc = ga_control_request(pid, req, ans, anssz, err, sizeof(err));

	if (rc < 0)
		snprintf(ans, anssz, "unreachable: %s", err);
	return rc;
}

static int read_counts(const char *path, struct counts *c, struct ga_read_info *info)
{
	char err[512];

	memset(c, 0, sizeof(*c));
	return ga_reader_read_file(path, count_cb, c, info, err, sizeof(err));
}

static void test_dormant_one_file(void)
{
	char ctl[300], out[300], path[320], sock[GP_PATH_MAX], ans[GP_CONTROL_MSG_MAX], buf[64], val[64];
	struct ga_read_info info;
	struct counts cnt;
	struct stat st;
	struct prog p;
	int rc, calls = -1, on = -1, enables = -1;

	snprintf(ctl, sizeof(ctl), "%s/ctl", tmpdir);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);   /* the client's side */
	snprintf(out, sizeof(out), "%s/windows", tmpdir);
	snprintf(path, sizeof(path), "%s.gpuprof", out);
	tap_begin("dormant: no file, no tracing, a socket only its user can reach");
	if (prog_start(&p, out, ctl, "dormant") < 0) {
		CHECK(!"fork");
		tap_end();
		return;
	}
	gp_control_path(sock, sizeof(sock), ctl, 0, p.pid);
	CHECKF(wait_socket(sock) == 0, "no socket %s", sock);
	CHECK(stat(ctl, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(sock, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0077) == 0);
	CHECK(prog_say(&p, "e 30\n", buf, sizeof(buf)) == 0);
	CHECK(prog_say(&p, "s\n", buf, sizeof(buf)) == 0 &&
	      sscanf(buf, "%d %d %d", &calls, &on, &enables) == 3);
	CHECKF(calls == 0 && on == 0, "set_tracing called %d times while dormant", calls);
	CHECKF(enables == 0, "the source enabled %d times while dormant", enables);
	CHECKF(stat(path, &st) < 0 && errno == ENOENT, "%s exists while dormant", path);
	rc = ask(p.pid, "status\n\n", ans, sizeof(ans));
	gp_control_get(ans, "state", val, sizeof(val));
	CHECKF(rc == 0 && !strcmp(val, "dormant"), "status %d: %s", rc, ans);
	rc = ask(p.pid, "stop\n\n", ans, sizeof(ans));
	CHECKF(rc == 1 && strstr(ans, "not tracing"), "stop while dormant: %d %s", rc, ans);
	rc = ask(p.pid, "bogus\n\n", ans, sizeof(ans));
	CHECKF(rc == 1, "unknown request: %d %s", rc, ans);
	tap_end();

	tap_begin("start/stop twice: exactly the work inside the windows, as two capture ranges");
	rc = ask(p.pid, "start\n\n", ans, sizeof(ans));
	gp_control_get(ans, "file", val, sizeof(val));
	CHECKF(rc == 0, "start: %s", ans);
	CHECK(prog_say(&p, "s\n", buf, sizeof(buf)) == 0 && sscanf(buf, "%d %d", &calls, &on) == 2 &&
	      calls == 1 && on == 1);
	rc = ask(p.pid, "start\n\n", ans, sizeof(ans));
	CHECKF(rc == 1 && strstr(ans, "already tracing"), "second start: %d %s", rc, ans);
	CHECK(prog_say(&p, "e 100\n", buf, sizeof(buf)) == 0);
	rc = ask(p.pid, "status\n\n", ans, sizeof(ans));
	gp_control_get(ans, "state", val, sizeof(val));
	CHECKF(rc == 0 && !strcmp(val, "tracing"), "status while tracing: %s", ans);
	CHECKF(ask(p.pid, "stop\n\n", ans, sizeof(ans)) == 0, "stop: %s", ans);
	rc = ask(p.pid, "status\n\n", ans, sizeof(ans));
	gp_control_get(ans, "state", val, sizeof(val));
	CHECKF(rc == 0 && !strcmp(val, "idle"), "status between windows: %s", ans);
	CHECK(prog_say(&p, "e 50\n", buf, sizeof(buf)) == 0);
	CHECKF(ask(p.pid, "start\n\n", ans, sizeof(ans)) == 0, "start again: %s", ans);
	CHECK(prog_say(&p, "e 70\n", buf, sizeof(buf)) == 0);
	CHECKF(ask(p.pid, "stop\n\n", ans, sizeof(ans)) == 0, "stop again: %s", ans);
	CHECK(prog_say(&p, "e 10\n", buf, sizeof(buf)) == 0);
	CHECK(prog_say(&p, "s\n", buf, sizeof(buf)) == 0 &&
	      sscanf(buf, "%d %d %d", &calls, &on, &enables) == 3 && calls == 4 && on == 0);
	CHECKF(enables == 1, "the source enabled %d times over two windows", enables);
	rc = prog_end(&p);
	CHECKF(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "status %#x", rc);
	rc = read_counts(path, &cnt, &info);
	CHECKF(rc == GA_READ_OK && info.finished && !info.damaged && cnt.end == 1, "rc %d: %s", rc,
	       info.reason);
	CHECKF(cnt.kernels == 170, "kernels %llu, expected 170", (unsigned long long)cnt.kernels);
	CHECKF(cnt.ranges == 2 && cnt.control_ranges == 2, "%llu capture ranges",
	       (unsigned long long)cnt.ranges);
	CHECK(cnt.range_start[0] < cnt.range_end[0] && cnt.range_end[0] <= cnt.range_start[1] &&
	      cnt.range_start[1] < cnt.range_end[1]);
	CHECKF(cnt.devices == 1, "%llu device records", (unsigned long long)cnt.devices);
	CHECKF(stat(sock, &st) < 0, "socket %s left behind", sock);
	tap_end();
}

static void test_window_files(void)
{
	char ctl[300], out[300], path[320], sock[GP_PATH_MAX], ans[GP_CONTROL_MSG_MAX], buf[64], val[64];
	struct ga_read_info info;
	struct counts cnt;
	struct stat st;
	struct prog p;
	int rc, i;

	snprintf(ctl, sizeof(ctl), "%s/ctl", tmpdir);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	snprintf(out, sizeof(out), "%s/win-%%n", tmpdir);
	tap_begin("%n: a file per window, each complete with its strings and devices");
	if (prog_start(&p, out, ctl, "dormant") < 0) {
		CHECK(!"fork");
		tap_end();
		return;
	}
	gp_control_path(sock, sizeof(sock), ctl, 0, p.pid);
	CHECKF(wait_socket(sock) == 0, "no socket %s", sock);
	CHECKF(ask(p.pid, "start\n\n", ans, sizeof(ans)) == 0, "start: %s", ans);
	CHECK(prog_say(&p, "e 100\n", buf, sizeof(buf)) == 0);
	CHECKF(ask(p.pid, "stop\n\n", ans, sizeof(ans)) == 0, "stop: %s", ans);
	rc = ask(p.pid, "status\n\n", ans, sizeof(ans));
	gp_control_get(ans, "state", val, sizeof(val));
	CHECKF(rc == 0 && !strcmp(val, "dormant"), "status after a window's file: %s", ans);
	CHECK(prog_say(&p, "e 50\n", buf, sizeof(buf)) == 0);
	/* A window with a duration closes by itself within a flush interval. */
	CHECKF(ask(p.pid, "start\nduration_ms=300\n\n", ans, sizeof(ans)) == 0, "start: %s", ans);
	CHECK(prog_say(&p, "e 70\n", buf, sizeof(buf)) == 0);
	for (i = 0; i < 500; i++) {
		usleep(20000);
		ask(p.pid, "status\n\n", ans, sizeof(ans));
		gp_control_get(ans, "state", val, sizeof(val));
		if (!strcmp(val, "dormant"))
			break;
	}
	CHECKF(!strcmp(val, "dormant"), "a 300 ms window still open after 10 s: %s", ans);
	CHECK(prog_say(&p, "e 20\n", buf, sizeof(buf)) == 0);
	rc = prog_end(&p);
	CHECKF(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "status %#x", rc);
	for (i = 1; i <= 2; i++) {
		snprintf(path, sizeof(path), "%s/win-%d.gpuprof", tmpdir, i);
		rc = read_counts(path, &cnt, &info);
		CHECKF(rc == GA_READ_OK && info.finished && cnt.end == 1, "%s: rc %d", path, rc);
		CHECKF(cnt.kernels == (i == 1 ? 100u : 70u), "%s: %llu kernels", path,
		       (unsigned long long)cnt.kernels);
		CHECKF(cnt.control_ranges == 1 && cnt.devices == 1 && cnt.names == 1,
		       "%s: %llu ranges, %llu devices, %llu names", path,
		       (unsigned long long)cnt.control_ranges, (unsigned long long)cnt.devices,
		       (unsigned long long)cnt.names);
	}
	snprintf(path, sizeof(path), "%s/win-3.gpuprof", tmpdir);
	CHECKF(stat(path, &st) < 0, "%s: a third file", path);
	tap_end();
}

/*
 * A dormant recorder enables its sources at the first start; when they
 * refuse (CUPTI held by another tool), start says why, nothing is written
 * and the recorder stays dormant; the next start tries again.
 */
static void test_enable_refused(void)
{
	char ctl[300], out[300], path[320], err[320], sock[GP_PATH_MAX], ans[GP_CONTROL_MSG_MAX], buf[64], val[64];
	struct ga_read_info info;
	struct counts cnt;
	struct stat st;
	struct prog p;
	int rc, calls = -1, on = -1, enables = -1;

	snprintf(ctl, sizeof(ctl), "%s/ctl", tmpdir);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	snprintf(out, sizeof(out), "%s/refused", tmpdir);
	snprintf(path, sizeof(path), "%s.gpuprof", out);
	snprintf(err, sizeof(err), "%s/refused.err", tmpdir);
	snprintf(child_stderr, sizeof(child_stderr), "%s", err);
	tap_begin("dormant: sources refused at the first start, dormant still, enabled at the next");
	atomic_store(&fake_enable_fail, 1);
	rc = prog_start(&p, out, ctl, "dormant");
	atomic_store(&fake_enable_fail, 0);
	child_stderr[0] = 0;
	if (rc < 0) {
		CHECK(!"fork");
		tap_end();
		return;
	}
	gp_control_path(sock, sizeof(sock), ctl, 0, p.pid);
	CHECKF(wait_socket(sock) == 0, "no socket %s", sock);
	rc = ask(p.pid, "start\n\n", ans, sizeof(ans));
	CHECKF(rc == 1 && strstr(ans, "the stand-in source refuses"), "start: %d %s", rc, ans);
	rc = ask(p.pid, "status\n\n", ans, sizeof(ans));
	gp_control_get(ans, "state", val, sizeof(val));
	CHECKF(rc == 0 && !strcmp(val, "dormant"), "status after a refused start: %s", ans);
	CHECKF(stat(path, &st) < 0, "%s written by a refused start", path);
	CHECK(prog_say(&p, "e 20\n", buf, sizeof(buf)) == 0);
	CHECKF(ask(p.pid, "start\n\n", ans, sizeof(ans)) == 0, "second start: %s", ans);
	CHECK(prog_say(&p, "e 30\n", buf, sizeof(buf)) == 0);
	CHECKF(ask(p.pid, "stop\n\n", ans, sizeof(ans)) == 0, "stop: %s", ans);
	CHECK(prog_say(&p, "s\n", buf, sizeof(buf)) == 0 &&
	      sscanf(buf, "%d %d %d", &calls, &on, &enables) == 3);
	CHECKF(enables == 2 && calls == 2 && on == 0, "enable %d, set_tracing %d times", enables,
	       calls);
	rc = prog_end(&p);
	CHECKF(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "status %#x", rc);
	rc = read_counts(path, &cnt, &info);
	CHECKF(rc == GA_READ_OK && info.finished && cnt.kernels == 30 && cnt.control_ranges == 1,
	       "rc %d: %llu kernels, %llu windows", rc, (unsigned long long)cnt.kernels,
	       (unsigned long long)cnt.control_ranges);
	{
		char said[512] = "";
		int fd = open(err, O_RDONLY);

		if (fd >= 0) {
			ssize_t n = read(fd, said, sizeof(said) - 1);

			said[n > 0 ? n : 0] = 0;
			close(fd);
		}
		CHECKF(strstr(said, "cannot start tracing: the stand-in source refuses") != NULL,
		       "stderr: %s", said);
	}
	tap_end();
}

static void test_unsafe_dir(void)
{
	char ctl[300], out[300], sock[GP_PATH_MAX], buf[64], said[512] = "";
	struct stat st;
	struct prog p;
	int rc, fd;

	snprintf(child_stderr, sizeof(child_stderr), "%s/unsafe.err", tmpdir);
	snprintf(ctl, sizeof(ctl), "%s/open-ctl", tmpdir);
	snprintf(out, sizeof(out), "%s/unsafe", tmpdir);
	mkdir(ctl, 0755);
	chmod(ctl, 0755);
	tap_begin("a control directory others can enter: no socket in it (the recorder listens elsewhere), the program runs");
	if (prog_start(&p, out, ctl, "dormant") < 0) {
		CHECK(!"fork");
		tap_end();
		return;
	}
	CHECK(prog_say(&p, "e 5\n", buf, sizeof(buf)) == 0);
	gp_control_path(sock, sizeof(sock), ctl, 0, p.pid);
	CHECKF(stat(sock, &st) < 0, "a socket in a mode-0755 directory");
	rc = prog_end(&p);
	CHECKF(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "status %#x", rc);
	fd = open(child_stderr, O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, said, sizeof(said) - 1);

		said[n > 0 ? n : 0] = 0;
		close(fd);
	}
	CHECKF(strstr(said, "mode 0700") != NULL, "stderr: %s", said);
	child_stderr[0] = 0;
	tap_end();
}

static int wait_file(const char *path, int ms)
{
	struct stat st;

	for (int i = 0; i < ms / 10; i++) {
		if (stat(path, &st) == 0 && st.st_size > 0)
			return 0;
		usleep(10000);
	}
	return -1;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits up to ms for fake_flushes to pass n; the ms it took, or -1. */
static long wait_flushes(int n, long ms)
{
	uint64_t t0 = mono_ms();

	while (atomic_load(&fake_flushes) <= n) {
		if ((long)(mono_ms() - t0) > ms)
			return -1;
		usleep(2000);
	}
	return (long)(mono_ms() - t0);
}

/*
 * The child's exit status: 0, or the check that failed: 1 the recorder did
 * not start, 2 a flush before any was due, 3 no flush soon after the ask,
 * 4 more than one flush for a burst of asks, 5 the burst's ask never served.
 */
static int flush_soon_child(const char *out)
{
	int n;

	setenv("GPUPROF_OUTPUT", out, 1);
	setenv("GPUPROF_FLUSH_MS", "20000", 1); /* none due in this test */
	if (gp_recorder_start() < 0)
		return 1;
	usleep(200000);
	n = atomic_load(&fake_flushes);
	if (n)
		return 2;
	gp_recorder_flush_soon();
	/* Soon: well within the 20 s interval, even on a loaded machine. */
	if (wait_flushes(n, 5000) < 0)
		return 3;
	n = atomic_load(&fake_flushes);
	/*
	 * A source asking at every launch: one flush per sixteenth interval
	 * (1.25 s), and one more for each 1.25 s the burst took on a loaded
	 * machine.
	 */
	{
		uint64_t t0 = mono_ms();

		for (int i = 0; i < 100; i++) {
			gp_recorder_flush_soon();
			usleep(2000);
		}
		if (atomic_load(&fake_flushes) > n + 1 + (int)((mono_ms() - t0) / 1250))
			return 4;
	}
	if (wait_flushes(atomic_load(&fake_flushes) > n ? n + 1 : n, 2500) < 0)
		return 5;
	return 0;
}

static void test_flush_soon(void)
{
	char out[300];
	int st = 0;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/soon-%%p", tmpdir);
	tap_begin("a flush asked for comes before the interval, at most one per sixteenth of it");
	pid = fork();
	if (pid == 0)
		_exit(flush_soon_child(out));
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d (see flush_soon_child)",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	tap_end();
}

/*
 * A program that closes every descriptor and puts eventfds of its own at
 * every number it had, the recorder's included, while the flusher sleeps.
 * The child's exit status: 0, or 1 the recorder did not start, 2 setup
 * failed, 3 the recorder could not be woken any more, 4 a notification
 * of the program's went missing or one came that it did not make (the
 * recorder read or wrote the program's eventfd).
 *
 * With a flush interval of 120 s the only flush within the test is the one
 * asked for: the first ask is served at once (the rate limit, a sixteenth
 * of the interval, counts from the last flush, and there was none), so
 * the flush can only come from the ask waking the flusher.  60 s is a hang
 * guard, not a timing assumption: the flusher's own timer is 120 s away.
 */
static int wake_fd_child(const char *out)
{
	int fds[256], nfd = 0, n;
	struct dirent *e;
	DIR *dir;

	setenv("GPUPROF_OUTPUT", out, 1);
	setenv("GPUPROF_FLUSH_MS", "120000", 1); /* woken only when asked */
	if (gp_recorder_start() < 0)
		return 1;
	emit_kernels(10);
	usleep(100000); /* the flusher is asleep by now (not needed to pass) */
	dir = opendir("/proc/self/fd");
	if (!dir)
		return 2;
	while ((e = readdir(dir)) && nfd < 256) {
		int fd = atoi(e->d_name);

		if (fd > 2 && fd != dirfd(dir))
			fds[nfd++] = fd;
	}
	closedir(dir);
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
	for (int i = 0; i < nfd; i++) {
		int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

		if (efd < 0 || (efd != fds[i] && dup2(efd, fds[i]) < 0))
			return 2;
		if (efd != fds[i])
			close(efd);
	}
	/* Its notifications, while the recorder is asked to wake up. */
	for (int k = 0; k < 100; k++) {
		uint64_t one = 1;

		for (int i = 0; i < nfd; i++)
			if (write(fds[i], &one, sizeof(one)) != sizeof(one))
				return 2;
		if (k == 0) {
			n = atomic_load(&fake_flushes);
			gp_recorder_flush_soon();
			if (wait_flushes(n, 60000) < 0)
				return 3;
		}
		/* Later asks are rate-limited; the wake-ups they make still come. */
		gp_recorder_flush_soon();
		usleep(1000);
	}
	usleep(100000);
	for (int i = 0; i < nfd; i++) {
		uint64_t v = 0;

		if (read(fds[i], &v, sizeof(v)) != sizeof(v) || v != 100)
			return 4;
	}
	/* Recorded after the trace's descriptor became an eventfd: in the trace all the same. */
	emit_kernels(5);
	return 0;
}

static void test_wake_fd(void)
{
	char out[300], path[320];
	struct ga_read_info info;
	struct counts cnt;
	int st = 0;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/closer-%%p", tmpdir);
	tap_begin("a program that closes every descriptor and reuses their numbers keeps its own "
		  "eventfds, and the recorder is still woken");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		exit(wake_fd_child(out)); /* exit: the trace is finished */
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d (see wake_fd_child)",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	snprintf(path, sizeof(path), "%s/closer-%d.gpuprof", tmpdir, (int)pid);
	CHECKF(read_counts(path, &cnt, &info) == GA_READ_OK && info.finished && cnt.kernels == 15,
	       "%s: finished %d, %llu kernels", path, info.finished,
	       (unsigned long long)cnt.kernels);
	tap_end();
}

static void test_flight(void)
{
	char ctl[300], out[300], path[320], sock[GP_PATH_MAX], ans[GP_CONTROL_MSG_MAX], buf[64];
	char val[64], val2[64];
	struct ga_read_info info;
	struct counts cnt;
	struct prog p;
	unsigned long long size = 0, used = 0, dropped = 0, nw, lr;
	int rc;

	snprintf(ctl, sizeof(ctl), "%s/ctl", tmpdir);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	snprintf(out, sizeof(out), "%s/fr-%%n", tmpdir);
	tap_begin("flight recorder: memory within its size, oldest chunks dropped by design");
	if (prog_start(&p, out, ctl, "flight:1M") < 0) {
		CHECK(!"fork");
		tap_end();
		return;
	}
	gp_control_path(sock, sizeof(sock), ctl, 0, p.pid);
	CHECKF(wait_socket(sock) == 0, "no socket %s", sock);
	for (int i = 0; i < 10; i++)
		CHECK(prog_say(&p, "f 10000\n", buf, sizeof(buf)) == 0);
	snprintf(path, sizeof(path), "%s/fr-1.gpuprof", tmpdir);
	CHECKF(access(path, F_OK) < 0, "%s written before any dump", path);
	/*
	 * The writer compresses within a flush interval (50 ms); a loaded
	 * machine may take longer: asked again until it has, up to 10 s.
	 */
	for (int i = 0; i < 100; i++) {
		usleep(i ? 100000 : 300000);
		rc = ask(p.pid, "status\n\n", ans, sizeof(ans));
		gp_control_get(ans, "state", val, sizeof(val));
		gp_control_get(ans, "flight_used", val2, sizeof(val2));
		used = strtoull(val2, NULL, 10);
		gp_control_get(ans, "flight_dropped_records", val2, sizeof(val2));
		dropped = strtoull(val2, NULL, 10);
		if (rc != 0 || (used > 0 && dropped > 0))
			break;
	}
	CHECKF(rc == 0 && !strcmp(val, "flight"), "status: %s", ans);
	gp_control_get(ans, "flight_size", val, sizeof(val));
	size = strtoull(val, NULL, 10);
	CHECKF(size == 1u << 20 && used > 0 && used <= size && dropped > 0,
	       "size %llu used %llu dropped %llu", size, used, dropped);
	rc = ask(p.pid, "start\n\n", ans, sizeof(ans));
	CHECKF(rc == 1 && strstr(ans, "flight recorder"), "start on a flight recorder: %s", ans);
	tap_end();

	tap_begin("gpuprof dump: the most recent records that fit, in order, the window named");
	rc = ask(p.pid, "dump\n\n", ans, sizeof(ans));
	gp_control_get(ans, "file", val, sizeof(val));
	CHECKF(rc == 0 && !strcmp(val, path), "dump: %s", ans);
	rc = read_counts(path, &cnt, &info);
	CHECKF(rc == GA_READ_OK && info.finished && !info.damaged && cnt.end == 1, "rc %d: %s", rc,
	       info.reason);
	CHECKF(cnt.kernels > 1000 && cnt.kernels < 100000 && cnt.out_of_order == 0 &&
	       cnt.last_corr == 99999 && cnt.first_corr == 100000 - cnt.kernels,
	       "%llu kernels %llu..%llu, %llu out of order", (unsigned long long)cnt.kernels,
	       (unsigned long long)cnt.first_corr, (unsigned long long)cnt.last_corr,
	       (unsigned long long)cnt.out_of_order);
	CHECKF(cnt.flights == 1 && cnt.flight.trigger == GP_DUMP_REQUEST && cnt.flight.dump == 1 &&
	       cnt.flight.size == 1u << 20, "flight record: %llu, trigger %u",
	       (unsigned long long)cnt.flights, cnt.flight.trigger);
	/* What was dropped: the kernels before the first kept one, and a few others. */
	CHECKF(cnt.flight.dropped_records >= cnt.first_corr &&
	       cnt.flight.dropped_records <= cnt.first_corr + 20 && cnt.flight.dropped_chunks > 0,
	       "dropped %llu records, first kept kernel %llu",
	       (unsigned long long)cnt.flight.dropped_records, (unsigned long long)cnt.first_corr);
	CHECK(cnt.flight.start >= 1000000 + cnt.first_corr * 1000 - 1000 &&
	      cnt.flight.start <= 1000000 + cnt.first_corr * 1000 && cnt.flight.end > cnt.flight.start);
	CHECKF(cnt.processes >= 1 && cnt.names >= 1 && cnt.devices >= 1 && cnt.lost == 0 &&
	       cnt.endrec.lost == 0, "process %llu names %llu devices %llu lost %llu",
	       (unsigned long long)cnt.processes, (unsigned long long)cnt.names,
	       (unsigned long long)cnt.devices, (unsigned long long)cnt.lost);
	CHECKF(cnt.endrec.records + 1 == info.records, "END says %llu records, file has %llu",
	       (unsigned long long)cnt.endrec.records, (unsigned long long)info.records);
	gp_control_get(ans, "lost_records", val, sizeof(val));
	CHECKF(!strcmp(val, "0"), "a whole dump answers lost_records=%s", val);
	tap_end();

	tap_begin("gpuprof dump onto a full disk: every chunk not written is counted, the answer fails");
	/* Room for the first chunks of the dump only (RLIMIT_FSIZE stands for the disk). */
	CHECK(prog_say(&p, "l 300000\n", buf, sizeof(buf)) == 0 && !strcmp(buf, "0\n"));
	rc = ask(p.pid, "dump\n\n", ans, sizeof(ans));
	CHECKF(rc == 1 && strstr(ans, "is partial") && strstr(ans, "could not be written"),
	       "partial dump answered %d: %s", rc, ans);
	gp_control_get(ans, "not_written", val, sizeof(val));
	nw = strtoull(val, NULL, 10);
	gp_control_get(ans, "lost_records", val, sizeof(val));
	lr = strtoull(val, NULL, 10);
	gp_control_get(ans, "file", val, sizeof(val));
	rc = read_counts(val, &cnt, &info);
	/* The file ends properly and says what it lacks, under its cause. */
	CHECKF(rc == GA_READ_OK && info.finished && !info.damaged && cnt.end == 1, "rc %d: %s", rc,
	       info.reason);
	CHECKF(nw > 1000 && cnt.lost_write == nw && cnt.lost == cnt.endrec.lost && lr == cnt.lost,
	       "not_written %llu, LOST write errors %llu, lost %llu, END lost %llu, answer %llu",
	       (unsigned long long)nw, (unsigned long long)cnt.lost_write,
	       (unsigned long long)cnt.lost, (unsigned long long)cnt.endrec.lost,
	       (unsigned long long)lr);
	/* What was written and what was not add up to what the memory held. */
	CHECKF(cnt.kernels < 100000 - cnt.first_corr && cnt.out_of_order == 0 &&
	       cnt.endrec.records + 1 == info.records + nw,
	       "%llu kernels from %llu, END %llu records, file %llu, not written %llu",
	       (unsigned long long)cnt.kernels, (unsigned long long)cnt.first_corr,
	       (unsigned long long)cnt.endrec.records, (unsigned long long)info.records,
	       (unsigned long long)nw);
	CHECK(prog_say(&p, "l 0\n", buf, sizeof(buf)) == 0 && !strcmp(buf, "0\n"));
	tap_end();

	tap_begin("flight recorder: the dump signal and the process's exit each dump");
	CHECK(prog_say(&p, "f 100\n", buf, sizeof(buf)) == 0);
	kill(p.pid, SIGUSR2);
	snprintf(path, sizeof(path), "%s/fr-3.gpuprof", tmpdir);
	CHECKF(wait_file(path, 5000) == 0, "no %s after SIGUSR2", path);
	usleep(100000);
	rc = read_counts(path, &cnt, &info);
	CHECKF(rc == GA_READ_OK && info.finished && cnt.flight.trigger == GP_DUMP_SIGNAL &&
	       cnt.flight.detail == SIGUSR2 && cnt.flight.dump == 3 && cnt.last_corr == 100099,
	       "rc %d trigger %u detail %u last %llu", rc, cnt.flight.trigger, cnt.flight.detail,
	       (unsigned long long)cnt.last_corr);
	CHECK(prog_say(&p, "f 7\n", buf, sizeof(buf)) == 0);
	rc = prog_end(&p);
	CHECKF(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "status %#x", rc);
	snprintf(path, sizeof(path), "%s/fr-4.gpuprof", tmpdir);
	rc = read_counts(path, &cnt, &info);
	CHECKF(rc == GA_READ_OK && info.finished && cnt.flight.trigger == GP_DUMP_EXIT &&
	       cnt.last_corr == 100106 && cnt.out_of_order == 0, "rc %d trigger %u last %llu", rc,
	       cnt.flight.trigger, (unsigned long long)cnt.last_corr);
	tap_end();

	tap_begin("flight recorder: a crash dumps everything when nothing was dropped");
	seq_next = 0;
	snprintf(out, sizeof(out), "%s/crash-%%n", tmpdir);
	if (prog_start(&p, out, ctl, "flight:64M") < 0) {
		CHECK(!"fork");
		tap_end();
		return;
	}
	gp_control_path(sock, sizeof(sock), ctl, 0, p.pid);
	CHECKF(wait_socket(sock) == 0, "no socket %s", sock);
	CHECK(prog_say(&p, "f 5000\n", buf, sizeof(buf)) == 0);
	if (write(p.cmd, "k\n", 2) < 0)
		CHECK(!"write");
	close(p.cmd);
	close(p.ack);
	waitpid(p.pid, &rc, 0);
	CHECKF(WIFSIGNALED(rc) && WTERMSIG(rc) == SIGSEGV, "status %#x", rc);
	snprintf(path, sizeof(path), "%s/crash-1.gpuprof", tmpdir);
	rc = read_counts(path, &cnt, &info);
	CHECKF(rc == GA_READ_OK && info.finished && cnt.kernels == 5000 && cnt.out_of_order == 0 &&
	       cnt.flight.trigger == GP_DUMP_FATAL_SIGNAL && cnt.flight.detail == SIGSEGV &&
	       cnt.flight.dropped_records == 0 && cnt.flight.dropped_chunks == 0,
	       "rc %d kernels %llu trigger %u detail %u dropped %llu", rc,
	       (unsigned long long)cnt.kernels, cnt.flight.trigger, cnt.flight.detail,
	       (unsigned long long)cnt.flight.dropped_records);
	tap_end();
}

int main(void)
{
	char cmd[300];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gpuprof-life-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	run_case("exit: the trace is finished", EXIT0, 0, 0, NK);
	run_case("SIGTERM: trace finished, then the program dies of it", RAISE_TERM, SIGTERM, 0, NK);
	run_case("SIGSEGV: trace finished, then the fault kills as before", SEGV, SIGSEGV, 0, NK);
	run_case("abort(): trace finished, SIGABRT kills as before", ABORT, SIGABRT, 0, NK);
	run_case("the program's own SIGTERM handler runs and its exit finishes the trace",
		 OWN_HANDLER, 0, 7, NK);
	run_case("an ignored signal stays ignored", IGNORED_HUP, 0, 0, NK);
	run_case("a process that records nothing still ends its trace", NOTHING, 0, 0, 0);
	run_lazy_none("file on demand, no GPU work, exit: no trace file", LAZY_NOTHING, 0);
	run_lazy_none("file on demand, no GPU work, SIGTERM: no file, death as before", LAZY_TERM,
		      SIGTERM);
	run_lazy_work();
	fake.file_on_demand = 0;
	test_dormant_one_file();
	test_window_files();
	test_enable_refused();
	test_unsafe_dir();
	test_flight();
	test_flush_soon();
	test_wake_fd();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return tap_exit();
}
