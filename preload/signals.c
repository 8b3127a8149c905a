/*
 * Signal handlers that finish the trace (see signals.h).
 * Context: installation on the recorder's start path; the handler on any
 * application thread, async-signal-safe only: no locks, no malloc, no
 * stdio; clock_gettime, nanosleep, sigaction and raise.
 */
#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static const int handled[] = {
	SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGPIPE,
	SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
};
#define NSIG_HANDLED (sizeof(handled) / sizeof(handled[0]))

static struct sigaction old_action[NSIG_HANDLED];
static struct gp_signal_ops ops;
static int wait_limit_ms;
static atomic_int installed;

static int slot_of(int sig)
{
	for (unsigned i = 0; i < NSIG_HANDLED; i++)
		if (handled[i] == sig)
			return (int)i;
	return -1;
}

static int program_handles(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) ||
	       (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

static void call_program(const struct sigaction *sa, int sig, siginfo_t *info, void *uc)
{
	if (sa->sa_flags & SA_SIGINFO)
		sa->sa_sigaction(sig, info, uc);
	else
		sa->sa_handler(sig);
}

static void finish_trace(int sig)
{
	struct timespec start, now, tick = { 0, 2 * 1000 * 1000 };
	long waited;

	if (!ops.owner() || ops.finished())
		return;
	ops.request_finish(sig);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		nanosleep(&tick, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000L +
			 (now.tv_nsec - start.tv_nsec) / 1000000L;
	} while (!ops.finished() && waited < wait_limit_ms);
}

static void on_signal(int sig, siginfo_t *info, void *uc)
{
	int saved = errno, i = slot_of(sig);
	const struct sigaction *old;

	if (i < 0)
		return;
	old = &old_action[i];
	if (program_handles(old) && sig != SIGABRT) {
		call_program(old, sig, info, uc);
		errno = saved;
		return;
	}
	finish_trace(sig);
	/*
	 * From here on the signal behaves as if gpuprof were not there: the
	 * program's disposition comes back, and a fault or a raised signal
	 * is delivered again when this handler returns.
	 */
	sigaction(sig, old, NULL);
	if (program_handles(old))
		call_program(old, sig, info, uc);
	else
		raise(sig);
	errno = saved;
}

void gp_signals_install(const struct gp_signal_ops *o, int wait_ms)
{
	struct sigaction sa;
	int expected = 0;

	if (!atomic_compare_exchange_strong(&installed, &expected, 1))
		return;
	ops = *o;
	wait_limit_ms = wait_ms;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (unsigned i = 0; i < NSIG_HANDLED; i++) {
		if (sigaction(handled[i], NULL, &old_action[i]) < 0)
			continue;
		if (!(old_action[i].sa_flags & SA_SIGINFO) && old_action[i].sa_handler == SIG_IGN)
			continue;
		sigaction(handled[i], &sa, NULL);
	}
}

static void (*dump_cb)(int sig);

static void on_dump_signal(int sig)
{
	int saved = errno;

	if (dump_cb)
		dump_cb(sig);
	errno = saved;
}

int gp_signals_install_dump(int sig, void (*on)(int sig))
{
	struct sigaction sa, old;

	if (sigaction(sig, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL)
		return -1;
	dump_cb = on;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_dump_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) < 0 ? -1 : 0;
}
