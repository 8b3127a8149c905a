/*
 * The recorder's control socket (see ctlserver.h).
 *
 * Safety: the directory must be ours (owner = effective user, no group or
 * other permissions, not a symlink); when it is not (another user made
 * /tmp/gpuprof-UID first) or GPUPROF_CONTROL_DIR is relative, the socket
 * goes to an abstract name with a random part no one can take first, and
 * one line on stderr says so.  A socket in the directory is made 0600;
 * every connection's peer credentials are checked before a byte is read;
 * a request has GP_CONTROL_IO_MS in all to arrive and its answer as long
 * to leave, however slowly the client trickles; the descriptors are
 * close-on-exec and kept high where programs rarely dup2 to.  The thread
 * never touches the program's state: it reads a request, calls the
 * lifecycle's handler and answers.  Status answers tell whether the
 * process has a CUDA context (the driver's primary contexts, read without
 * making one).
 * Context: our own thread, all signals blocked; no stdio.
 */
#include "ctlserver.h"
#include "log.h"

#include <gpuprof/control.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Milliseconds a client has to send its whole request, and to take the answer. */
#define GP_CONTROL_IO_MS 2000

static char sock_path[108];        /* "@name" for an abstract socket */
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

	if (dir[0] != '/')
		return -EINVAL;
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits until fd is ready for events or the deadline passed; 1 ready, 0 not. */
static int wait_io(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		uint64_t t = now_ms();
		int r;

		if (t >= deadline)
			return 0;
		r = poll(&p, 1, (int)(deadline - t));
		if (r < 0 && errno == EINTR)
			continue;
		return r > 0;
	}
}

static int send_all(int fd, const char *p, size_t n, uint64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait_io(fd, POLLOUT, deadline))
				return -1;
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Reads one request (ends with an empty line) before the deadline.
 * Returns its length, or -1: too slow, too long, a NUL byte, or closed.
 */
static int read_request(int fd, char *buf, size_t size, uint64_t deadline)
{
	size_t n = 0;

	while (n < size - 1) {
		ssize_t r = recv(fd, buf + n, size - 1 - n, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait_io(fd, POLLIN, deadline))
				return -1;
			continue;
		}
		if (r <= 0)
			return -1;
		if (memchr(buf + n, 0, (size_t)r))
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

/* A unit test defines gp_control_cuda_probe to stand in for the driver. */
#pragma weak gp_control_cuda_probe
int gp_control_cuda_probe(void);

typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_state_fn)(int, unsigned *, int *);
static cu_count_fn cu_count;
static cu_get_fn cu_get;
static cu_state_fn cu_state;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* The driver's entry points, once: from a libcuda already loaded, never loading one. */
static void cu_bind(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		return;
	/* libcuda stays loaded: the handle only pins it once more. */
	cu_count = (cu_count_fn)dlsym(h, "cuDeviceGetCount");
	cu_get = (cu_get_fn)dlsym(h, "cuDeviceGet");
	cu_state = (cu_state_fn)dlsym(h, "cuDevicePrimaryCtxGetState");
	if (!cu_count || !cu_get)
		cu_state = NULL;
}

int gp_control_cuda_context(void)
{
	int n = 0;

	if (gp_control_cuda_probe)
		return gp_control_cuda_probe();
	pthread_once(&cu_once, cu_bind);
	if (!cu_state || cu_count(&n) != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		unsigned flags = 0;
		int dev = 0, active = 0;

		if (cu_get(&dev, i) == 0 && cu_state(dev, &flags, &active) == 0 && active)
			return 1;
	}
	return 0;
}

int gp_control_serve(int fd, gp_control_handler handle)
{
	static char req[GP_CONTROL_MSG_MAX], ans[GP_CONTROL_MSG_MAX], out[GP_CONTROL_MSG_MAX + 16];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uint64_t deadline = now_ms() + GP_CONTROL_IO_MS;
	char verb[32];
	size_t vlen;
	int rc, n;

	/* Only the process's user and root; nothing is read from others. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid()))
		return -EPERM;
	if (read_request(fd, req, sizeof(req), deadline) < 0)
		return -EPROTO;
	vlen = strcspn(req, "\n");
	ans[0] = 0;
	if (vlen >= sizeof(verb)) {
		rc = -1;
		snprintf(ans, sizeof(ans), "message=request not understood\n");
	} else {
		memcpy(verb, req, vlen);
		verb[vlen] = 0;
		rc = handle(verb, req, ans, sizeof(ans));
		if (!rc && !strcmp(verb, "status")) {
			int c = gp_control_cuda_context();
			size_t al = strlen(ans);

			snprintf(ans + al, sizeof(ans) - al, "cuda_context=%s\n",
				 c > 0 ? "yes" : c == 0 ? "no" : "unknown");
		}
	}
	n = snprintf(out, sizeof(out), "%s\n%s\n", rc ? "error" : "ok", ans);
	if (n <= 0)
		return -EPROTO;
	/* The answer's own time: a slow request does not eat it. */
	deadline = now_ms() + GP_CONTROL_IO_MS;
	if (send_all(fd, out, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1, deadline) < 0)
		return -EPIPE;
	return rc ? 1 : 0;
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
		gp_control_serve(fd, handler);
		close(fd);
	}
	gp_debug("control socket %s closed by the program; no longer listening", sock_path);
	return NULL;
}

/* The abstract fallback's name into sa and sock_path ("@..."); its length for bind. */
static socklen_t abstract_name(struct sockaddr_un *sa)
{
	unsigned char rnd[8];
	char name[80];
	uint64_t r = 0;
	int n;

	if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) == (ssize_t)sizeof(rnd)) {
		memcpy(&r, rnd, sizeof(r));
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
		    (uint64_t)(uintptr_t)&ts;
	}
	n = snprintf(name, sizeof(name), GP_CONTROL_ABSTRACT_PREFIX "%u-%d-%016llx",
		     (unsigned)geteuid(), (int)getpid(), (unsigned long long)r);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, name, (size_t)n);
	snprintf(sock_path, sizeof(sock_path), "@%s", name);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

int gp_control_listen(const struct gp_config *cfg, gp_control_handler handle)
{
	char dir[GP_PATH_MAX];
	const char *why = NULL;
	struct sockaddr_un sa;
	socklen_t salen = sizeof(sa);
	struct stat st;
	sigset_t all, old;
	int fd, hi, rc;

	if (cfg->control_dir[0])
		snprintf(dir, sizeof(dir), "%s", cfg->control_dir);
	else
		snprintf(dir, sizeof(dir), GP_CONTROL_DIR_FMT, (unsigned)geteuid());
	rc = check_dir(dir);
	if (!rc && gp_control_path(sock_path, sizeof(sock_path), dir, 0, (int)getpid()) < 0)
		rc = -ENAMETOOLONG;
	if (rc)
		why = rc == -EPERM ? "owned by another user" :
		      rc == -EACCES ? "others may enter it (it must be mode 0700)" :
		      rc == -EINVAL ? "not an absolute path" :
		      rc == -ENAMETOOLONG ? "name too long for a socket" : strerror(-rc);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	if (why) {
		/* Squatted or unusable: a name no one can guess, found through /proc/net/unix. */
		salen = abstract_name(&sa);
		if (bind(fd, (struct sockaddr *)&sa, salen) < 0 || listen(fd, 8) < 0 ||
		    fstat(fd, &st) < 0) {
			rc = -errno;
			close(fd);
			errno = -rc;
			goto fail;
		}
		path_ino = 0;
	} else {
		/*
		 * Bound and listening under "PID.new" (shorter than "PID.sock",
		 * so it fits), then renamed: the socket's name appears only once
		 * a client can connect, never between bind and listen.
		 */
		size_t len = strlen(sock_path) - strlen(GP_CONTROL_SUFFIX);

		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		memcpy(sa.sun_path, sock_path, len);
		memcpy(sa.sun_path + len, ".new", 5);
		/* Left by an earlier process with our pid: ours to replace. */
		if (lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(sa.sun_path);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 ||
		    listen(fd, 8) < 0 || fstat(fd, &st) < 0 || rename(sa.sun_path, sock_path) < 0) {
			rc = -errno;
			close(fd);
			unlink(sa.sun_path);
			errno = -rc;
			goto fail;
		}
	}
	listen_ino = (uint64_t)st.st_ino;
	if (!why && lstat(sock_path, &st) == 0)
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
		if (!why)
			unlink(sock_path);
		errno = rc;
		goto fail;
	}
	pthread_detach(thread);
	if (why)
		gp_log("control directory %s: %s; listening on %s instead (gpuprof start/stop/status/list/dump find it)",
		       dir, why, sock_path);
	else
		gp_debug("control socket %s", sock_path);
	return 0;
fail:
	rc = -errno;
	if (why)
		gp_log("control directory %s: %s, and no socket can be made instead: %s; gpuprof start/stop/dump cannot reach this process",
		       dir, why, strerror(-rc));
	else
		gp_log("cannot listen on %s: %s; gpuprof start/stop/dump cannot reach this process",
		       sock_path, strerror(-rc));
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

	/* An abstract name goes with its descriptor. */
	if (listen_fd >= 0 && getpid() == listen_pid && sock_path[0] == '/' &&
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
