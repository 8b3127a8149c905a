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
 * Runs in the user's shell session, never inside a traced program.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"

static volatile sig_atomic_t child;

static void forward(int sig)
{
	if (child > 0)
		kill((pid_t)child, sig);
}

int cmd_run_child(int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	int status = 0, fd, n, rc;
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
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gpuprof: cannot start %s: %s\n", argv[3], strerror(errno));
		return 126;
	}
	if (pid == 0) {
		sa.sa_handler = SIG_DFL;
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &sa, NULL);
		if (argv[2][0])
			setenv("LD_PRELOAD", argv[2], 1);
		execvp(argv[3], argv + 3);
		fprintf(stderr, "gpuprof: %s: %s\n", argv[3], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child = pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 126;
	if (WIFSIGNALED(status)) {
		n = snprintf(line, sizeof(line), "signal %d\n", WTERMSIG(status));
		rc = 128 + WTERMSIG(status);
	} else {
		n = snprintf(line, sizeof(line), "exit %d\n", WEXITSTATUS(status));
		rc = WEXITSTATUS(status);
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) < 0)
			(void)0;
		close(fd);
	}
	return rc;
}
