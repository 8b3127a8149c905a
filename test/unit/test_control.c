/*
 * Unit tests of the control channel: the recorder's side (preload/ctlserver.c:
 * a whole request within a deadline, the abstract fallback of a squatted or
 * relative directory, the CUDA context in status answers) and the client's
 * (analyzer/cmd/ctlclient.c: the directory and the peer checked before a byte
 * is sent, stale sockets removed, gpuprof list asking every recorder at
 * once within its deadline and escaping what others wrote), and the limits
 * of the protocol (include/gpuprof/control.h: duration_ms, relative
 * directories).  As root, cases with two or three throwaway users (made
 * with useradd, removed at the end): another user squatting a control
 * directory, a process that dropped privileges, root's list of a user's
 * hostile answers and command line.  Offline test code; no GPU.
 */
#include "helpers.h"
#include "synth.h"
#include "tap.h"

#include "config.h"
#include "ctlserver.h"
#include "lifecycle.h"
#include "recorder.h"
#include "source.h"

#include "cmd/cmd.h"
#include "read/reader.h"

#include <gpuprof/control.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[64];
static char **main_argv;

/* Stands in for the driver (preload/ctlserver.c asks it when defined). */
static atomic_int fake_ctx = 0;

int gp_control_cuda_probe(void);
int gp_control_cuda_probe(void)
{
	return atomic_load(&fake_ctx);
}

/* A stand-in record source for the dormant recorder (preload/lifecycle.c). */
static int fake_attach(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	(void)cfg;
	(void)why;
	(void)whysz;
	*version = 1;
	return 0;
}

static atomic_int fake_tracing;

static int fake_set_tracing(int on, char *why, size_t whysz)
{
	(void)why;
	(void)whysz;
	atomic_store(&fake_tracing, on);
	return 0;
}

static struct gp_source fake = {
	.name = "fake",
	.attach = fake_attach,
	.set_tracing = fake_set_tracing,
};

const struct gp_source *const gp_sources[] = { &fake, NULL };

/* GPU work as the CUDA source sees it: a context made (the file now), kernels. */
static void fake_gpu_work(int n)
{
	atomic_store(&fake_ctx, 1);
	gp_recorder_need_file();
	if (!atomic_load(&fake_tracing))
		return;
	gp_ring_lock(&gp_rec.ring);
	helpers_emit_kernels(n);
	gp_ring_unlock(&gp_rec.ring);
}

#define FUZZ_CONTROL_HAVE_PROBE
#define LLVMFuzzerTestOneInput fuzz_control_one
#include "../fuzz/fuzz_control.c"
#undef LLVMFuzzerTestOneInput

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- escaping ---- */

static int esc_is(const char *in, size_t n, size_t outsz, const char *want)
{
	char out[256];
	size_t len = ga_control_escape(in, n, out, outsz);

	if (strcmp(out, want) || len != strlen(want)) {
		printf("# escape: got '%s', want '%s'\n", out, want);
		return 0;
	}
	return 1;
}

static void test_escape(void)
{
	tap_begin("escape: controls, C1, bidi marks and bad UTF-8 as \\xNN; text as it is");
	CHECK(esc_is("plain /tmp/x.gpuprof", 20, 256, "plain /tmp/x.gpuprof"));
	CHECK(esc_is("\x1b[2J\x1b]0;pwn\x07", 12, 256, "\\x1b[2J\\x1b]0;pwn\\x07"));
	CHECK(esc_is("a\nb\rc\td", 7, 256, "a\\x0ab\\x0dc\\x09d"));
	CHECK(esc_is("nul\0x", 5, 256, "nul\\x00x"));
	CHECK(esc_is("back\\slash", 10, 256, "back\\\\slash"));
	CHECK(esc_is("del\x7f", 4, 256, "del\\x7f"));
	/* UTF-8 text stays; CSI as C1 (U+009B), bidi override U+202E, bad bytes do not. */
	CHECK(esc_is("caf\xc3\xa9 \xe6\x97\xa5", 9, 256, "caf\xc3\xa9 \xe6\x97\xa5"));
	CHECK(esc_is("\xc2\x9b" "31m", 5, 256, "\\xc2\\x9b31m"));
	CHECK(esc_is("x\xe2\x80\xaey", 5, 256, "x\\xe2\\x80\\xaey"));
	CHECK(esc_is("\xff\xc3", 2, 256, "\\xff\\xc3"));
	CHECK(esc_is("\xc0\xaf", 2, 256, "\\xc0\\xaf"));
	CHECK(esc_is("\xed\xa0\x80", 3, 256, "\\xed\\xa0\\x80"));
	/* Cut short: never half an escape, never half a character. */
	CHECK(esc_is("ab\x1b", 3, 5, "ab"));
	CHECK(esc_is("ab\xc3\xa9", 4, 4, "ab"));
	CHECK(esc_is("abc", 3, 1, ""));
	tap_end();
}

/* ---- the protocol's limits ---- */

static void test_limits(void)
{
	unsigned long long ms = 7;
	char path[200], err[600], ans[256];

	tap_begin("duration_ms: up to 1e10, anything larger or not a number refused");
	CHECK(gp_control_duration("start\n\n", &ms) == 0 && ms == 0);
	CHECK(gp_control_duration("start\nduration_ms=1500\n\n", &ms) == 0 && ms == 1500);
	CHECK(gp_control_duration("start\nduration_ms=10000000000\n\n", &ms) == 0 &&
	      ms == 10000000000ull);
	CHECK(gp_control_duration("start\nduration_ms=10000000001\n\n", &ms) < 0);
	CHECK(gp_control_duration("start\nduration_ms=18446744073709551615\n\n", &ms) < 0);
	CHECK(gp_control_duration("start\nduration_ms=18446744073709\n\n", &ms) < 0);
	CHECK(gp_control_duration("start\nduration_ms=-1\n\n", &ms) < 0);
	CHECK(gp_control_duration("start\nduration_ms=12abc\n\n", &ms) < 0);
	CHECK(gp_control_duration("start\nduration_ms=\n\n", &ms) < 0);
	tap_end();

	tap_begin("a relative GPUPROF_CONTROL_DIR is refused by both sides");
	CHECK(gp_control_path(path, sizeof(path), "ctl", 0, 42) == -EINVAL);
	CHECK(gp_control_path(path, sizeof(path), "/abs/ctl", 0, 42) == 0 &&
	      !strcmp(path, "/abs/ctl/42.sock"));
	setenv("GPUPROF_CONTROL_DIR", "relative/ctl", 1);
	CHECK(ga_control_request(getpid(), "status\n\n", ans, sizeof(ans), err, sizeof(err)) < 0);
	CHECKF(strstr(err, "absolute path") != NULL, "err: %s", err);
	unsetenv("GPUPROF_CONTROL_DIR");
	tap_end();
}

/* ---- the recorder's side, on a socketpair ---- */

static char last_output[512];

/* A stand-in for the lifecycle's handler. */
static int fake_handler(const char *verb, const char *msg, char *ans, size_t anssz)
{
	if (!strcmp(verb, "status")) {
		snprintf(ans, anssz, "pid=%d\nstate=dormant\nrecords=12\nfile=/tmp/\x1b[2Jevil\x07\n",
			 (int)getpid());
		return 0;
	}
	if (!strcmp(verb, "start")) {
		gp_control_get(msg, "output", last_output, sizeof(last_output));
		snprintf(ans, anssz, "file=%s\nwindow=1\n", last_output);
		return 0;
	}
	snprintf(ans, anssz, "message=unknown request '%s'\n", verb);
	return -1;
}

struct trickle {
	int fd;
	int stop;
};

/* A client sending a request one byte every 300 ms. */
static void *trickle_main(void *arg)
{
	struct trickle *t = arg;
	const char *req = "status\nkey=a-long-value-sent-very-slowly\n\n";

	for (size_t i = 0; req[i] && !__atomic_load_n(&t->stop, __ATOMIC_RELAXED); i++) {
		if (send(t->fd, req + i, 1, MSG_NOSIGNAL) != 1)
			break;
		usleep(300000);
	}
	return NULL;
}

static int read_all(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	return (int)n;
}

static void test_serve(void)
{
	char ans[GP_CONTROL_MSG_MAX];
	struct trickle t;
	pthread_t th;
	uint64_t t0;
	int sv[2], rc;

	tap_begin("server: a request answered, status tells the CUDA context");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[1], "status\n\n", 8) == 8);
	shutdown(sv[1], SHUT_WR);
	atomic_store(&fake_ctx, 0);
	rc = gp_control_serve(sv[0], fake_handler);
	close(sv[0]);
	read_all(sv[1], ans, sizeof(ans));
	close(sv[1]);
	CHECKF(rc == 0 && !strncmp(ans, "ok\n", 3) && strstr(ans, "\ncuda_context=no\n") &&
	       !strcmp(ans + strlen(ans) - 2, "\n\n"), "rc %d: %s", rc, ans);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[1], "status\n\n", 8) == 8);
	atomic_store(&fake_ctx, 1);
	rc = gp_control_serve(sv[0], fake_handler);
	close(sv[0]);
	read_all(sv[1], ans, sizeof(ans));
	close(sv[1]);
	CHECKF(rc == 0 && strstr(ans, "\ncuda_context=yes\n"), "rc %d: %s", rc, ans);
	atomic_store(&fake_ctx, 0);
	tap_end();

	tap_begin("server: malformed requests refused (NUL byte, no end, too long)");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[1], "sta\0tus\n\n", 9) == 9);
	shutdown(sv[1], SHUT_WR);
	CHECK(gp_control_serve(sv[0], fake_handler) == -EPROTO);
	close(sv[0]);
	close(sv[1]);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[1], "status\n", 7) == 7);
	shutdown(sv[1], SHUT_WR);
	CHECK(gp_control_serve(sv[0], fake_handler) == -EPROTO);
	close(sv[0]);
	close(sv[1]);
	{
		static char big[GP_CONTROL_MSG_MAX + 100];

		memset(big, 'a', sizeof(big));
		memcpy(big, "status\nk=", 9);
		memcpy(big + sizeof(big) - 2, "\n\n", 2);
		CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
		CHECK(write(sv[1], big, sizeof(big)) == (ssize_t)sizeof(big));
		shutdown(sv[1], SHUT_WR);
		CHECK(gp_control_serve(sv[0], fake_handler) == -EPROTO);
		close(sv[0]);
		close(sv[1]);
	}
	tap_end();

	tap_begin("server: a client trickling a byte every 300 ms is cut off after 2 s in all");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	t.fd = sv[1];
	t.stop = 0;
	pthread_create(&th, NULL, trickle_main, &t);
	t0 = mono_ms();
	rc = gp_control_serve(sv[0], fake_handler);
	t0 = mono_ms() - t0;
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELAXED);
	close(sv[0]);
	pthread_join(th, NULL);
	close(sv[1]);
	CHECKF(rc == -EPROTO && t0 >= 1900 && t0 < 3000, "rc %d after %llu ms", rc,
	       (unsigned long long)t0);
	tap_end();
}

/* The fuzz target (test/fuzz/fuzz_control.c): fixed requests, then mutations of them. */
static void test_fuzz_inputs(void)
{
	static const char *const seeds[] = {
		"status\n\n", "stop\n\n", "start\nduration_ms=1500\noutput=/tmp/x\n\n",
		"start\nduration_ms=99999999999999999999\n\n", "dump\noutput=rel\n\n", "\n\n", "\n",
		"start\noutput=\n\n", "a-verb-much-longer-than-thirty-two-bytes-in-all\n\n",
		"status\nx=1\ny\n=\n\n", "",
	};
	unsigned char buf[512];
	uint32_t r = 12345;

	tap_begin("fuzz_control: fixed and mutated requests answered well-formed or refused");
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		fuzz_control_one((const uint8_t *)seeds[i], strlen(seeds[i]));
	for (int i = 0; i < 3000; i++) {
		const char *seed = seeds[i % 10];
		size_t n = strlen(seed);

		memcpy(buf, seed, n);
		for (int k = 0; k < 1 + i % 4; k++) {
			r = r * 1103515245u + 12345u;
			if (n && (r >> 8) % 3)
				buf[(r >> 12) % n] = (unsigned char)(r >> 20);
			else if (n < sizeof(buf))
				buf[n++] = (r >> 16) % 2 ? '\n' : (unsigned char)(r >> 24);
		}
		fuzz_control_one(buf, n);
	}
	CHECK(1);
	tap_end();
}

/* ---- a recorder in a child process ---- */

struct kid {
	pid_t pid;
	int go, ready;              /* pipes: to the child, from it */
};

enum { K_RECORDER, K_SILENT, K_PLANT, K_DORMANT };

struct kid_spec {
	int kind;
	const char *ctl;            /* control directory, NULL default */
	const char *err;            /* where stderr goes, NULL stays */
	uid_t uid;                  /* 0: stays root */
	gid_t gid;
	int drop_after;             /* K_RECORDER: change to uid after listening */
	const char *plant;          /* K_PLANT: socket path to listen on; K_DORMANT: output */
	int hostile_argv;           /* overwrite the command line with escapes */
};

/* A socket address for path (cut at sun_path's size: the test's paths are short). */
static void set_sun(struct sockaddr_un *sa, const char *path)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n >= sizeof(sa->sun_path))
		n = sizeof(sa->sun_path) - 1;
	memcpy(sa->sun_path, path, n);
}

static int become(uid_t uid, gid_t gid)
{
	return setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid) ? -1 : 0;
}

/*
 * The child: waits for a byte, then listens (a recorder with the stand-in
 * handler, a socket that never answers, or a planted one that counts the
 * bytes it is sent), says "r", and on the next byte reports and exits.
 */
static void kid_main(const struct kid_spec *s, int go, int ready)
{
	struct gp_config cfg;
	char b, msg[600];
	int lfd = -1, got = 0;

	if (s->err) {
		int fd = open(s->err, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (fd >= 0)
			dup2(fd, 2);
	}
	if (s->hostile_argv && main_argv[0] && strlen(main_argv[0]) >= 12)
		memcpy(main_argv[0], "\x1b]0;pwn\x07\x1b[2J", 12);
	if (s->uid && !s->drop_after && become(s->uid, s->gid) < 0)
		_exit(80);
	if (read(go, &b, 1) != 1)
		_exit(81);
	if (s->kind == K_DORMANT) {
		/* A dormant recorder: 'w' does GPU work, 'q' exits (the trace ends at exit). */
		setenv("GPUPROF_START", "dormant", 1);
		setenv("GPUPROF_OUTPUT", s->plant, 1);
		setenv("GPUPROF_FLUSH_MS", "50", 1);
		setenv("GPUPROF_CONTROL_DIR", s->ctl, 1);
		if (gp_recorder_start() < 0)
			_exit(88);
		if (write(ready, "r", 1) != 1)
			_exit(85);
		while (read(go, &b, 1) == 1 && b == 'w') {
			fake_gpu_work(40);
			if (write(ready, "k", 1) != 1)
				_exit(85);
		}
		exit(0);
	}
	if (s->kind == K_RECORDER) {
		memset(&cfg, 0, sizeof(cfg));
		if (s->ctl)
			snprintf(cfg.control_dir, sizeof(cfg.control_dir), "%s", s->ctl);
		if (gp_control_listen(&cfg, fake_handler) < 0)
			_exit(82);
		if (s->drop_after && become(s->uid, s->gid) < 0)
			_exit(83);
	} else {
		struct sockaddr_un sa;
		char path[200];

		if (s->kind == K_SILENT)
			gp_control_path(path, sizeof(path), s->ctl, 0, (int)getpid());
		else
			snprintf(path, sizeof(path), "%s", s->plant);
		lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		set_sun(&sa, path);
		unlink(path);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 8) < 0)
			_exit(84);
		chmod(path, 0777);
	}
	if (write(ready, "r", 1) != 1)
		_exit(85);
	/* A planted listener accepts and counts what it is sent. */
	while (s->kind == K_PLANT) {
		struct pollfd p[2] = { { .fd = go, .events = POLLIN }, { .fd = lfd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0)
			break;
		if (p[1].revents & POLLIN) {
			int c = accept(lfd, NULL, NULL);
			char buf[512];
			ssize_t r;

			while (c >= 0 && (r = recv(c, buf, sizeof(buf), 0)) > 0)
				got += (int)r;
			if (c >= 0)
				close(c);
		}
		if (p[0].revents)
			break;
	}
	if (read(go, &b, 1) < 0)
		_exit(86);
	snprintf(msg, sizeof(msg), "%d %s\n", got, last_output);
	if (write(ready, msg, strlen(msg)) < 0)
		_exit(87);
	_exit(0);
}

static int kid_start(struct kid *k, const struct kid_spec *s)
{
	int to[2], from[2];
	char b;

	if (pipe(to) || pipe(from))
		return -1;
	fflush(stdout);
	k->pid = fork();
	if (k->pid == 0) {
		close(to[1]);
		close(from[0]);
		kid_main(s, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	k->go = to[1];
	k->ready = from[0];
	if (k->pid < 0 || write(k->go, "g", 1) != 1)
		return -1;
	return read(k->ready, &b, 1) == 1 && b == 'r' ? 0 : -1;
}

/* Ends the child; its report ("bytes output\n") into out. */
static int kid_end(struct kid *k, char *out, size_t outsz)
{
	int status = 0;

	out[0] = 0;
	if (write(k->go, "q", 1) == 1)
		read_all(k->ready, out, outsz);
	close(k->go);
	close(k->ready);
	kill(k->pid, SIGKILL);
	waitpid(k->pid, &status, 0);
	return status;
}

static void slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);

	buf[0] = 0;
	if (fd >= 0) {
		read_all(fd, buf, size);
		close(fd);
	}
}

/* Runs cmd_list with stdout and stderr captured; their contents into out and err. */
static int run_list(char *out, size_t outsz, char *err, size_t errsz, uint64_t *ms)
{
	char *argv[] = { "list", NULL }, *o = NULL, *e = NULL;
	uint64_t t0 = mono_ms();
	int rc = synth_capture(tmpdir, &o, &e, cmd_list, 1, argv);

	*ms = mono_ms() - t0;
	snprintf(out, outsz, "%s", o ? o : "");
	snprintf(err, errsz, "%s", e ? e : "");
	free(o);
	free(e);
	return rc;
}

static void test_fallback_same_user(void)
{
	char ctl[200], err[300], said[1024], ans[GP_CONTROL_MSG_MAX], why[600], rep[128];
	struct kid rec, plant;
	struct kid_spec rs = { .kind = K_RECORDER }, ps = { .kind = K_PLANT };
	char plant_path[300];
	struct stat st;
	int rc;

	snprintf(ctl, sizeof(ctl), "%s/open-ctl", tmpdir);
	snprintf(err, sizeof(err), "%s/fallback.err", tmpdir);
	mkdir(ctl, 0777);
	chmod(ctl, 0777);
	rs.ctl = ctl;
	rs.err = err;
	tap_begin("an unsafe control directory: the recorder listens on an abstract socket, one line says so");
	CHECK(kid_start(&rec, &rs) == 0);
	/* Someone else's socket planted under the recorder's name in the open directory. */
	snprintf(plant_path, sizeof(plant_path), "%s/%d.sock", ctl, (int)rec.pid);
	ps.plant = plant_path;
	CHECK(kid_start(&plant, &ps) == 0);
	slurp(err, said, sizeof(said));
	CHECKF(strstr(said, "mode 0700") && strstr(said, "listening on @gpuprof-") &&
	       !strchr(strchr(said, '\n') + 1, '\n'), "stderr: %s", said);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	rc = ga_control_request(rec.pid, "start\noutput=/secret/path\n\n", ans, sizeof(ans), why,
				sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "file=/secret/path"), "rc %d: %s %s", rc, ans, why);
	kid_end(&plant, rep, sizeof(rep));
	CHECKF(atoi(rep) == 0, "the planted socket was sent %s bytes", rep);
	kid_end(&rec, rep, sizeof(rep));
	CHECKF(stat(plant_path, &st) == 0, "the planted socket was removed");
	unsetenv("GPUPROF_CONTROL_DIR");
	tap_end();

	tap_begin("a relative control directory: the recorder listens on an abstract socket");
	rs.ctl = "relative-ctl";
	CHECK(kid_start(&rec, &rs) == 0);
	slurp(err, said, sizeof(said));
	CHECKF(strstr(said, "not an absolute path") && strstr(said, "@gpuprof-"), "stderr: %s", said);
	CHECKF(stat("relative-ctl", &st) < 0, "a relative directory was made");
	rc = ga_control_request(rec.pid, "status\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "state=dormant"), "rc %d: %s %s", rc, ans, why);
	kid_end(&rec, rep, sizeof(rep));
	tap_end();
}

static void test_peer_check(void)
{
	char ctl[200], ans[GP_CONTROL_MSG_MAX], why[600], rep[128], path[300];
	struct kid target, plant;
	struct kid_spec ts = { .kind = K_SILENT }, ps = { .kind = K_PLANT };
	int rc;

	snprintf(ctl, sizeof(ctl), "%s/peer-ctl", tmpdir);
	mkdir(ctl, 0700);
	ts.ctl = ctl;
	tap_begin("client: a socket whose listener is not the target process is sent nothing");
	/* The target: a process with a socket under its own name, in another directory. */
	CHECK(kid_start(&target, &(struct kid_spec){ .kind = K_SILENT, .ctl = tmpdir }) == 0);
	snprintf(path, sizeof(path), "%s/%d.sock", ctl, (int)target.pid);
	ps.plant = path;
	CHECK(kid_start(&plant, &ps) == 0);
	chmod(ctl, 0700);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	rc = ga_control_request(target.pid, "start\noutput=/secret\n\n", ans, sizeof(ans), why,
				sizeof(why));
	CHECKF(rc < 0 && strstr(why, "is not the socket of process"), "rc %d: %s", rc, why);
	kid_end(&plant, rep, sizeof(rep));
	CHECKF(atoi(rep) == 0, "the impostor was sent %s bytes", rep);
	kid_end(&target, rep, sizeof(rep));
	unsetenv("GPUPROF_CONTROL_DIR");
	(void)ts;
	tap_end();
}

static void test_list_parallel(void)
{
	char ctl[300], out[8192], err[1024], rep[128], sock[300];
	struct kid silent[3], rec;
	struct kid_spec ss = { .kind = K_SILENT }, rs = { .kind = K_RECORDER };
	struct sockaddr_un sa;
	struct stat st;
	uint64_t ms;
	int fd, stale_pid;

	snprintf(ctl, sizeof(ctl), "%s/list-ctl", tmpdir);
	mkdir(ctl, 0700);
	ss.ctl = rs.ctl = ctl;
	rs.hostile_argv = 1;
	tap_begin("list: silent recorders asked at once, reported slow within the deadline; answers escaped");
	for (int i = 0; i < 3; i++)
		CHECK(kid_start(&silent[i], &ss) == 0);
	CHECK(kid_start(&rec, &rs) == 0);
	/* A socket left by a process that ended: pid of a reaped child. */
	stale_pid = fork();
	if (stale_pid == 0)
		_exit(0);
	waitpid(stale_pid, NULL, 0);
	gp_control_path(sock, sizeof(sock), ctl, 0, stale_pid);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	set_sun(&sa, sock);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	close(fd);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	run_list(out, sizeof(out), err, sizeof(err), &ms);
	unsetenv("GPUPROF_CONTROL_DIR");
	CHECKF(ms < 3500, "list took %llu ms with 3 silent recorders", (unsigned long long)ms);
	for (int i = 0; i < 3; i++) {
		char row[64];

		snprintf(row, sizeof(row), "%-8d %-9s", (int)silent[i].pid, "slow");
		CHECKF(strstr(out, row) != NULL, "no slow row for %d: %s", (int)silent[i].pid, out);
	}
	CHECKF(strstr(out, "\\x1b[2Jevil\\x07") != NULL, "answer not escaped: %s", out);
	CHECKF(strstr(out, "\\x1b]0;pwn\\x07") != NULL, "command line not escaped: %s", out);
	CHECKF(!strchr(out, '\x1b') && !strchr(out, '\x07'), "raw escapes printed: %s", out);
	CHECKF(strstr(out, " CUDA ") && strstr(out, "dormant   no "), "no CUDA column: %s", out);
	CHECKF(stat(sock, &st) < 0, "stale socket %s left", sock);
	CHECKF(strstr(err, "removed 1 socket"), "stderr: %s", err);
	for (int i = 0; i < 3; i++)
		kid_end(&silent[i], rep, sizeof(rep));
	kid_end(&rec, rep, sizeof(rep));
	tap_end();
}

static int kernels_cb(void *ctx, const struct gp_rec *rec)
{
	int *n = ctx;

	*n += rec->type == GP_REC_KERNEL;
	return 0;
}

/* Kernels in a finished trace at path, -1 when it is not one. */
static int trace_kernels(const char *path)
{
	struct ga_read_info info;
	char err[300];
	int n = 0;

	if (ga_reader_read_file(path, kernels_cb, &n, &info, err, sizeof(err)) != 0 ||
	    !info.finished) {
		printf("# %s: %s%s\n", path, err, info.reason);
		return -1;
	}
	return n;
}

/* Lists the files of dir starting with prefix into out; their count. */
static int files_like(const char *dir, const char *prefix, char *out, size_t outsz)
{
	char cmd[300];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls %s | grep '^%s'", dir, prefix);
	out[0] = 0;
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(out + strlen(out), (int)(outsz - strlen(out)), f))
		n++;
	pclose(f);
	return n;
}

static void test_no_context(void)
{
	char ctl[200], out[200], path[300], ans[GP_CONTROL_MSG_MAX], why[600], names[512], list[4096],
		lerr[512], b;
	struct kid k;
	struct kid_spec ks = { .kind = K_DORMANT };
	uint64_t ms;
	int rc, n;

	snprintf(ctl, sizeof(ctl), "%s/dormant-ctl", tmpdir);
	snprintf(out, sizeof(out), "%s/launcher-%%n", tmpdir);
	ks.ctl = ctl;
	ks.plant = out;
	atomic_store(&fake_ctx, 0);
	tap_begin("start on a process without a CUDA context: it says so, no file until GPU work");
	CHECK(kid_start(&k, &ks) == 0);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	run_list(list, sizeof(list), lerr, sizeof(lerr), &ms);
	{
		char row[40];

		snprintf(row, sizeof(row), "%-8d %-9s %-4s", (int)k.pid, "dormant", "no");
		CHECKF(strstr(list, row) != NULL, "list: %s", list);
	}
	rc = ga_control_request(k.pid, "start\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "cuda_context=no") && !strstr(ans, "file="), "start: %d %s %s",
	       rc, ans, why);
	rc = ga_control_request(k.pid, "stop\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && !strstr(ans, "file="), "stop: %d %s %s", rc, ans, why);
	n = files_like(tmpdir, "launcher-", names, sizeof(names));
	CHECKF(n == 0, "a window without GPU work left files: %s", names);
	/* The second window: GPU work inside it makes its file. */
	rc = ga_control_request(k.pid, "start\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "cuda_context=no"), "start again: %d %s", rc, ans);
	n = files_like(tmpdir, "launcher-", names, sizeof(names));
	CHECKF(n == 0, "files before GPU work: %s", names);
	CHECK(write(k.go, "w", 1) == 1 && read(k.ready, &b, 1) == 1 && b == 'k');
	n = files_like(tmpdir, "launcher-", names, sizeof(names));
	CHECKF(n == 1, "%d files after GPU work: %s", n, names);
	rc = ga_control_request(k.pid, "status\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "cuda_context=yes") && strstr(ans, "file="), "status: %s", ans);
	rc = ga_control_request(k.pid, "stop\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "file="), "stop: %d %s", rc, ans);
	/* A later window of a process with a context opens its file at once. */
	rc = ga_control_request(k.pid, "start\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "file="), "third start: %d %s", rc, ans);
	CHECK(write(k.go, "w", 1) == 1 && read(k.ready, &b, 1) == 1 && b == 'k');
	rc = ga_control_request(k.pid, "stop\n\n", ans, sizeof(ans), why, sizeof(why));
	if (write(k.go, "q", 1) == 1)
		waitpid(k.pid, &rc, 0);
	close(k.go);
	close(k.ready);
	unsetenv("GPUPROF_CONTROL_DIR");
	n = files_like(tmpdir, "launcher-", names, sizeof(names));
	CHECKF(n == 2, "%d files: %s", n, names);
	/* %n numbers files, not windows: the first window left none. */
	snprintf(path, sizeof(path), "%s/launcher-1.gpuprof", tmpdir);
	n = trace_kernels(path);
	CHECKF(n == 40, "%s: %d kernels", path, n);
	snprintf(path, sizeof(path), "%s/launcher-2.gpuprof", tmpdir);
	n = trace_kernels(path);
	CHECKF(n == 40, "%s: %d kernels", path, n);
	tap_end();

	tap_begin("start then exit without GPU work: no file");
	snprintf(out, sizeof(out), "%s/idle-launcher", tmpdir);
	atomic_store(&fake_ctx, 0);
	CHECK(kid_start(&k, &ks) == 0);
	setenv("GPUPROF_CONTROL_DIR", ctl, 1);
	rc = ga_control_request(k.pid, "start\nduration_ms=10000000000\n\n", ans, sizeof(ans), why,
				sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "cuda_context=no"), "start: %d %s %s", rc, ans, why);
	usleep(200000);
	rc = ga_control_request(k.pid, "status\n\n", ans, sizeof(ans), why, sizeof(why));
	CHECKF(rc == 0 && strstr(ans, "state=tracing"), "a huge duration closed the window: %s", ans);
	rc = ga_control_request(k.pid, "start\nduration_ms=18446744073709551615\n\n", ans,
				sizeof(ans), why, sizeof(why));
	CHECKF(rc == 1 && strstr(ans, "bad duration_ms"), "overflowing duration: %d %s", rc, ans);
	unsetenv("GPUPROF_CONTROL_DIR");
	if (write(k.go, "q", 1) == 1)
		waitpid(k.pid, &rc, 0);
	close(k.go);
	close(k.ready);
	n = files_like(tmpdir, "idle-launcher", names, sizeof(names));
	CHECKF(n == 0, "files: %s", names);
	tap_end();
}

/* ---- two real users ---- */

static char users[3][32];
static uid_t uids[3];
static gid_t gids[3];
static int nusers;

static int make_user(int i)
{
	char cmd[200];
	struct passwd *pw;

	snprintf(users[i], sizeof(users[i]), "gpctl%d%c", (int)getpid() % 100000, 'a' + i);
	snprintf(cmd, sizeof(cmd), "useradd -M -N -s /usr/sbin/nologin %s >/dev/null 2>&1",
		 users[i]);
	if (system(cmd) != 0 || !(pw = getpwnam(users[i])))
		return -1;
	uids[i] = pw->pw_uid;
	gids[i] = pw->pw_gid;
	nusers = i + 1;
	return 0;
}

static void remove_users(void)
{
	char cmd[200];

	for (int i = 0; i < nusers; i++) {
		snprintf(cmd, sizeof(cmd), "userdel %s >/dev/null 2>&1", users[i]);
		if (system(cmd) != 0)
			printf("# could not remove user %s\n", users[i]);
	}
}

/* Runs ga_control_request as user i in a child; its rc, answer and error into res. */
static int request_as(int i, int pid, const char *req, char *res, size_t ressz)
{
	int p[2], status = 0;
	pid_t c;

	if (pipe(p))
		return -99;
	fflush(stdout);
	c = fork();
	if (c == 0) {
		char ans[GP_CONTROL_MSG_MAX], err[600], msg[GP_CONTROL_MSG_MAX + 700];
		int rc;

		close(p[0]);
		if (become(uids[i], gids[i]) < 0)
			_exit(99);
		rc = ga_control_request(pid, req, ans, sizeof(ans), err, sizeof(err));
		snprintf(msg, sizeof(msg), "%s|%s", ans, rc < 0 ? err : "");
		if (write(p[1], msg, strlen(msg)) < 0)
			_exit(98);
		_exit(rc < 0 ? 10 : rc);
	}
	close(p[1]);
	read_all(p[0], res, ressz);
	close(p[0]);
	waitpid(c, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -98;
}

static void test_two_users(void)
{
	char dir[64], plant_path[128], err[300], said[1024], res[GP_CONTROL_MSG_MAX + 700],
		rep[128], out[8192], lerr[1024];
	struct kid rec, plant, dropped;
	struct stat st;
	uint64_t ms;
	int rc;

	if (geteuid() != 0) {
		printf("skip - control with two users # not root: useradd needs root\n");
		return;
	}
	if (system("command -v setpriv >/dev/null 2>&1") != 0) {
		printf("skip - control with two users # setpriv (util-linux) not found\n");
		return;
	}
	if (make_user(0) < 0 || make_user(1) < 0) {
		printf("skip - control with two users # useradd failed\n");
		remove_users();
		return;
	}
	/* users[0]: the victim; users[1]: the attacker. */
	snprintf(dir, sizeof(dir), GP_CONTROL_DIR_FMT, (unsigned)uids[0]);
	snprintf(err, sizeof(err), "%s/victim.err", tmpdir);
	chmod(tmpdir, 0755);
	tap_begin("another user squats /tmp/gpuprof-UID: the victim's recorder moves, its client sends the attacker nothing");
	{
		struct kid_spec rs = { .kind = K_RECORDER, .err = err, .uid = uids[0], .gid = gids[0] };
		struct kid_spec ps = { .kind = K_PLANT, .uid = uids[1], .gid = gids[1] };
		char mk[200];

		/* The victim's recorder, not yet listening: its pid is known. */
		int to[2], from[2];
		char b;

		rmdir(dir);
		CHECK(pipe(to) == 0 && pipe(from) == 0);
		fflush(stdout);
		rec.pid = fork();
		if (rec.pid == 0) {
			close(to[1]);
			close(from[0]);
			kid_main(&rs, to[0], from[1]);
		}
		close(to[0]);
		close(from[1]);
		rec.go = to[1];
		rec.ready = from[0];
		/* The attacker makes the directory first, mode 0777, and plants the victim's socket name. */
		snprintf(mk, sizeof(mk), "setpriv --reuid=%u --regid=%u --clear-groups mkdir -m 0777 %s",
			 (unsigned)uids[1], (unsigned)gids[1], dir);
		CHECK(system(mk) == 0);
		chmod(dir, 0777);
		snprintf(plant_path, sizeof(plant_path), "%s/%d.sock", dir, (int)rec.pid);
		ps.plant = plant_path;
		CHECK(kid_start(&plant, &ps) == 0);
		CHECK(stat(dir, &st) == 0 && st.st_uid == uids[1]);
		CHECK(write(rec.go, "g", 1) == 1 && read(rec.ready, &b, 1) == 1 && b == 'r');
		slurp(err, said, sizeof(said));
		CHECKF(strstr(said, "owned by another user") && strstr(said, "@gpuprof-"), "stderr: %s",
		       said);
		rc = request_as(0, rec.pid, "start\noutput=/home/victim/secret\n\n", res, sizeof(res));
		CHECKF(rc == 0 && strstr(res, "file=/home/victim/secret"), "victim's start: %d %s", rc,
		       res);
		/* The attacker cannot control the victim's recorder either. */
		rc = request_as(1, rec.pid, "status\n\n", res, sizeof(res));
		CHECKF(rc != 0 && !strstr(res, "state="), "attacker's status: %d %s", rc, res);
		/* Root's list finds it where it moved. */
		run_list(out, sizeof(out), lerr, sizeof(lerr), &ms);
		{
			char row[32];

			snprintf(row, sizeof(row), "%-8d dormant", (int)rec.pid);
			CHECKF(strstr(out, row) != NULL, "root's list: %s", out);
		}
		kid_end(&plant, rep, sizeof(rep));
		CHECKF(atoi(rep) == 0, "the attacker's socket was sent %s bytes", rep);
		kid_end(&rec, rep, sizeof(rep));
		unlink(plant_path);
		rmdir(dir);
	}
	tap_end();

	tap_begin("a process that dropped from root to a user: root reaches it; its stale socket is removed");
	{
		struct kid_spec ds = { .kind = K_RECORDER, .uid = uids[0], .gid = gids[0],
				       .drop_after = 1 };
		char sock[128];

		CHECK(kid_start(&dropped, &ds) == 0);
		gp_control_path(sock, sizeof(sock), NULL, 0, dropped.pid);
		CHECKF(stat(sock, &st) == 0, "no socket %s", sock);
		rc = request_as(0, dropped.pid, "status\n\n", res, sizeof(res));
		CHECKF(rc != 0, "the user reached root's socket: %s", res);
		{
			char ans[GP_CONTROL_MSG_MAX], why[600];

			rc = ga_control_request(dropped.pid, "status\n\n", ans, sizeof(ans), why, sizeof(why));
			CHECKF(rc == 0 && strstr(ans, "state=dormant"), "root's status: %d %s %s", rc, ans,
			       why);
		}
		run_list(out, sizeof(out), lerr, sizeof(lerr), &ms);
		{
			char row[32];

			snprintf(row, sizeof(row), "%-8d dormant", (int)dropped.pid);
			CHECKF(strstr(out, row) != NULL, "root's list: %s", out);
		}
		/* Killed: its socket stays behind, in a directory it can no longer write. */
		kill(dropped.pid, SIGKILL);
		kid_end(&dropped, rep, sizeof(rep));
		CHECK(stat(sock, &st) == 0);
		run_list(out, sizeof(out), lerr, sizeof(lerr), &ms);
		CHECKF(stat(sock, &st) < 0, "stale socket %s left by list", sock);
		CHECKF(strstr(lerr, "removed"), "list stderr: %s", lerr);
	}
	tap_end();
	chmod(tmpdir, 0700);
	remove_users();
}

int main(int argc, char **argv)
{
	char cmd[300];

	(void)argc;
	main_argv = argv;
	signal(SIGPIPE, SIG_IGN);
	unsetenv("GPUPROF_CONTROL_DIR");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gpuprof-ctl-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (chdir(tmpdir) < 0)
		return 1;
	test_escape();
	test_limits();
	test_serve();
	test_fuzz_inputs();
	test_fallback_same_user();
	test_peer_check();
	test_list_parallel();
	test_no_context();
	test_two_users();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return tap_exit();
}
