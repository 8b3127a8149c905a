/*
 * Unit tests of the recorder's lifecycle (preload/lifecycle.c) with a
 * stand-in record source: the trace is finished on exit, on a fatal or
 * termination signal (then raised again, exit status unchanged), through
 * the program's own handler, and in a process that records nothing.  Each
 * case runs in a forked child, as a traced program would.  No GPU needed.
 */
#include "tap.h"

#include "config.h"
#include "lifecycle.h"
#include "recorder.h"
#include "source.h"

#include "read/reader.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static struct gp_source fake = {
	.name = "fake",
	.attach = fake_attach,
};

const struct gp_source *const gp_sources[] = { &fake, NULL };

/* What a source does: records into the ring, under the producer lock. */
static void emit_kernels(int n)
{
	uint32_t name;

	gp_ring_lock(&gp_rec.ring);
	/* API records name their thread once (gp_emit_thread): twice here, one record. */
	gp_emit_thread((uint32_t)syscall(SYS_gettid));
	gp_emit_thread((uint32_t)syscall(SYS_gettid));
	name = gp_emit_string("fake_kernel");
	for (int i = 0; i < n; i++) {
		struct gp_rec_kernel *k = gp_emit(GP_REC_KERNEL, sizeof(*k));

		if (k) {
			k->start = 1000 + (uint64_t)i;
			k->end = k->start + 5;
			k->name = name;
		}
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
	if (how == OWN_HANDLER)
		signal(SIGTERM, on_term_exit7);
	if (how == IGNORED_HUP)
		signal(SIGHUP, SIG_IGN);
	prctl(PR_SET_NAME, "gp-named-thr");
	if (how >= LAZY_NOTHING) {
		char session[320];

		snprintf(session, sizeof(session), "%s.session", out);
		setenv("GPUPROF_SESSION_FILE", session, 1);
		fake.file_on_demand = 1;
	}
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
	uint64_t kernels, end, threads;
	uint32_t named_str;        /* string id of "gp-named-thr" */
	int thread_ok;             /* a THREAD record names this test's thread so */
};

static int count_cb(void *ctx, const struct gp_rec *rec)
{
	struct counts *c = ctx;

	c->kernels += rec->type == GP_REC_KERNEL;
	c->end += rec->type == GP_REC_END;
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
	return 0;
}

static void run_case(const char *name, enum how how, int want_sig, int want_exit,
		     uint64_t want_kernels)
{
	char out[300], path[320], err[512];
	struct ga_read_info info;
	struct counts cnt = { 0 };
	int status = 0, rc;
	pid_t pid;

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
	char out[300], session[320], line[400] = "";
	FILE *f;

	snprintf(out, sizeof(out), "%s/%d", tmpdir, (int)LAZY_WORK);
	snprintf(session, sizeof(session), "%s.session", out);
	run_case("file on demand: created at the first GPU work, holds every record", LAZY_WORK,
		 0, 0, NK);
	tap_begin("file on demand: the session file names it once");
	f = fopen(session, "r");
	CHECK(f != NULL);
	if (f) {
		int n = 0;

		while (fgets(line, sizeof(line), f))
			n++;
		fclose(f);
		char want[340];

		snprintf(want, sizeof(want), "%s.gpuprof\n", out);
		CHECKF(n == 1 && !strcmp(line, want), "%d lines, last %s", n, line);
	}
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
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return tap_exit();
}
