/*
 * run-child: the process runner behind "gpuprof run" (not a user command).
 *
 *   gpuprof-analyze run-child STATUS_FILE PRELOAD PROGRAM [ARGS...]
 *
 * Runs PROGRAM in a child process with LD_PRELOAD=PRELOAD (unless empty;
 * the runner itself is not preloaded), passes SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 * SIGUSR1 and SIGUSR2 on to it, waits for it and writes how it ended to
 * STATUS_FILE ("exit N" or "signal N"), then exits as a shell would report
 * it: N, or 128+N for a signal.  A shell cannot tell a program that exited
 * with 130 from one killed by SIGINT; the wrapper reads the file instead.
 * Nothing here waits on anything but the program: STATUS_FILE is opened
 * without blocking and without following a symlink, and written only when
 * it is a regular file (a FIFO planted there once hung gpuprof run for
 * good); a signal that comes once the program has ended ends the runner.
 * Runs in the user's shell session, never inside a traced program.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"

static volatile sig_atomic_t child, reaped;

static void forward(int sig)
{
	if (reaped)
		_exit(128 + sig); /* nothing left to pass it on to */
	if (child > 0)
		kill((pid_t)child, sig);
}

/* Writes line to path if that is a regular file or a new name; never blocks. */
static void write_status(const char *path, const char *line, size_t n)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		      0600);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) == 0 &&
	    write(fd, line, n) < 0)
		(void)0;
	close(fd);
}

int cmd_run_child(int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	sigset_t block, old;
	int status = 0, n, rc;
	char line[32];
	pid_t pid;

	if (argc < 4) {
		fputs("usage: gpuprof-analyze run-child STATUS_FILE PRELOAD PROGRAM [ARGS...]\n",
		      stderr);
		return GA_EXIT_USAGE;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	fflush(NULL);
	/* A signal that comes while the child starts is passed on once its pid is known. */
	sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gpuprof: cannot start %s: %s\n", argv[3], strerror(errno));
		return 126;
	}
	if (pid == 0) {
		sa.sa_handler = SIG_DFL;
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &sa, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (argv[2][0])
			setenv("LD_PRELOAD", argv[2], 1);
		execvp(argv[3], argv + 3);
		fprintf(stderr, "gpuprof: %s: %s\n", argv[3], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 126;
	reaped = 1;
	if (WIFSIGNALED(status)) {
		n = snprintf(line, sizeof(line), "signal %d\n", WTERMSIG(status));
		rc = 128 + WTERMSIG(status);
	} else {
		n = snprintf(line, sizeof(line), "exit %d\n", WEXITSTATUS(status));
		rc = WEXITSTATUS(status);
	}
	write_status(argv[1], line, (size_t)n);
	return rc;
}
