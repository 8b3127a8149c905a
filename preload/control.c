/*
 * The recorder's control socket (see control.h).
 *
 * Safety: the directory must be ours (owner = effective user, no group or
 * other permissions, not a symlink), or nothing listens; the socket is made
 * 0600 inside it; every connection's peer credentials are checked; the
 * descriptors are close-on-exec and kept high where programs rarely dup2
 * to.  The thread never touches the program's state: it reads a request
 * with a time limit, calls the lifecycle's handler and answers.
 * Context: our own thread, all signals blocked; no stdio.
 */
#include "control.h"
#include "log.h"

#include <gpuprof/control.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* Seconds a client has to send its request and take the answer. */
#define GP_CONTROL_IO_SECONDS 5

static char sock_path[108];
static int listen_fd = -1;
static uint64_t listen_ino;        /* of the socket descriptor */
static uint64_t path_ino;          /* of the socket's name in the directory */
static int listen_pid;
static gp_control_handler handler;
static pthread_t thread;

/* 0 when dir is a directory of ours that no one else can enter. */
static int check_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	if (st.st_mode & 077)
		return -EACCES;
	return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads one request (ends with an empty line).  Returns its length or -1. */
static int read_request(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n < size - 1) {
		ssize_t r = recv(fd, buf + n, size - 1 - n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = 0;
		if (n >= 2 && !strcmp(buf + n - 2, "\n\n"))
			return (int)n;
		if (n == 1 && buf[0] == '\n')
			return -1;
	}
	return -1;
}

static void serve(int fd)
{
	static char req[GP_CONTROL_MSG_MAX], ans[GP_CONTROL_MSG_MAX], out[GP_CONTROL_MSG_MAX + 16];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval tv = { GP_CONTROL_IO_SECONDS, 0 };
	char verb[32];
	size_t vlen;
	int rc, n;

	/* Only the process's user and root. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid()))
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (read_request(fd, req, sizeof(req)) < 0)
		return;
	vlen = strcspn(req, "\n");
	if (vlen >= sizeof(verb)) {
		rc = -1;
		snprintf(ans, sizeof(ans), "message=request not understood\n");
	} else {
		memcpy(verb, req, vlen);
		verb[vlen] = 0;
		ans[0] = 0;
		rc = handler(verb, req, ans, sizeof(ans));
	}
	n = snprintf(out, sizeof(out), "%s\n%s\n", rc ? "error" : "ok", ans);
	if (n > 0)
		send_all(fd, out, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1);
}

/* 1 while fd is still our listening socket (the program may close it). */
static int still_ours(void)
{
	struct stat st;

	return listen_fd >= 0 && fstat(listen_fd, &st) == 0 && (uint64_t)st.st_ino == listen_ino;
}

static void *control_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p = { .fd = listen_fd, .events = POLLIN };
		int fd;

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((p.revents & (POLLNVAL | POLLERR)) || !still_ours())
			break;
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
				continue;
			if (!still_ours())
				break;
			continue;
		}
		serve(fd);
		close(fd);
	}
	gp_debug("control socket %s closed by the program; no longer listening", sock_path);
	return NULL;
}

int gp_control_listen(const struct gp_config *cfg, gp_control_handler handle)
{
	char dir[GP_PATH_MAX];
	struct sockaddr_un sa;
	struct stat st;
	sigset_t all, old;
	int fd, hi, rc;

	if (cfg->control_dir[0])
		snprintf(dir, sizeof(dir), "%s", cfg->control_dir);
	else
		snprintf(dir, sizeof(dir), GP_CONTROL_DIR_FMT, (unsigned)geteuid());
	rc = check_dir(dir);
	if (rc) {
		gp_log("control directory %s: %s; gpuprof start/stop/dump cannot reach this process",
		       dir, rc == -EPERM ? "owned by another user" :
		       rc == -EACCES ? "others may enter it (it must be mode 0700)" : strerror(-rc));
		return rc;
	}
	if (gp_control_path(sock_path, sizeof(sock_path), dir, 0, (int)getpid()) < 0) {
		gp_log("control directory %s: name too long for a socket", dir);
		sock_path[0] = 0;
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, sock_path);
	/* A socket left by an earlier process with our pid: ours to replace. */
	if (lstat(sock_path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sock_path, 0600) < 0 ||
	    listen(fd, 8) < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		unlink(sock_path);
		errno = -rc;
		goto fail;
	}
	listen_ino = (uint64_t)st.st_ino;
	if (lstat(sock_path, &st) == 0)
		path_ino = (uint64_t)st.st_ino;
	listen_fd = fd;
	listen_pid = (int)getpid();
	handler = handle;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&thread, NULL, control_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		close(fd);
		listen_fd = -1;
		unlink(sock_path);
		errno = rc;
		goto fail;
	}
	pthread_detach(thread);
	gp_debug("control socket %s", sock_path);
	return 0;
fail:
	rc = -errno;
	gp_log("cannot listen on %s: %s; gpuprof start/stop/dump cannot reach this process",
	       sock_path, strerror(errno));
	sock_path[0] = 0;
	return rc;
}

const char *gp_control_path_self(void)
{
	return listen_fd >= 0 ? sock_path : "";
}

void gp_control_close(void)
{
	struct stat st;

	if (listen_fd >= 0 && getpid() == listen_pid && sock_path[0] &&
	    lstat(sock_path, &st) == 0 && (uint64_t)st.st_ino == path_ino)
		unlink(sock_path);
}

void gp_control_forked(void)
{
	if (listen_fd >= 0 && still_ours())
		close(listen_fd);
	listen_fd = -1;
	sock_path[0] = 0;
}
