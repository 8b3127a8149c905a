/*
 * "gpuprof serve": the latest windows of a spool directory (gpuprof run
 * --sample ... --spool DIR) over HTTP, for Prometheus and continuous
 * profilers to pull:
 *   /metrics          Prometheus text exposition (views/prometheus.c)
 *   /debug/pprof/gpu  a gzipped pprof profile (views/pprof.c)
 *   /                 a line per endpoint
 * The latest windows: of each process (files named PREFIX-wN.gpuprof, one
 * prefix per process), its window of the highest N, among the files not
 * older than --max-age; files whose name starts with '.' are windows still
 * being written and are skipped.  Both answers come from one analysis of
 * those files, made again when the set of files (names, sizes, times)
 * changes.
 *
 * A small HTTP/1.1 server on one thread: poll(2) over the listening socket
 * and at most GA_SERVE_CONNS connections, each non-blocking, one request
 * per connection (Connection: close).  A request has GA_SERVE_REQ_MAX
 * bytes at most (431 beyond) and each connection GA_SERVE_DEADLINE_MS
 * from its accept to its last byte written, after which it is closed: a
 * slow or silent client costs a slot for that long, never the others'
 * answers.  Listens on loopback unless --listen names another address.
 * Runs in the user's shell (or a sidecar), never inside a traced program.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/analysis.h"
#include "views/pprof.h"

#define GA_SERVE_CONNS 32
#define GA_SERVE_REQ_MAX 8192
#define GA_SERVE_DEADLINE_MS 5000
#define GA_SERVE_FILES_MAX 4096    /* spool entries looked at */
#define GA_SERVE_DEFAULT_LISTEN "127.0.0.1:9464"
#define GA_SERVE_MAX_AGE_S 600

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct conn {
	int fd;
	uint64_t deadline;
	char req[GA_SERVE_REQ_MAX + 1];
	size_t rlen;
	struct ga_buf out;         /* the response, from woff on still to write */
	size_t woff;
	int writing;
};

/* A window file of the spool. */
struct win {
	char *name;
	size_t prefix;             /* bytes of the name before "-wN.gpuprof" */
	uint64_t n;                /* N, 0 when the name has none */
	struct stat st;
};

struct serve {
	const char *spool;
	unsigned top, max_age;
	int symbolize;
	struct ga_buf metrics, pprof;
	char fingerprint[64];
	int have;                  /* metrics and pprof hold an analysis */
	char err[256];
};

static int cmp_win(const void *pa, const void *pb)
{
	const struct win *a = pa, *b = pb;
	int c;

	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	if ((c = memcmp(a->name, b->name, a->prefix)))
		return c;
	/* Within a process: the highest window first. */
	return a->n < b->n ? 1 : a->n > b->n ? -1 : 0;
}

/* PREFIX-wN.gpuprof: prefix length and N; the whole stem and 0 otherwise. */
static void parse_name(struct win *w)
{
	size_t len = strlen(w->name) - strlen(".gpuprof"), i = len;

	w->prefix = len;
	w->n = 0;
	while (i > 0 && w->name[i - 1] >= '0' && w->name[i - 1] <= '9')
		i--;
	if (i < len && i >= 2 && w->name[i - 1] == 'w' && w->name[i - 2] == '-' && len - i < 19) {
		w->prefix = i - 2;
		w->n = strtoull(w->name + i, NULL, 10);
	}
}

/*
 * The latest window of each process: paths (malloc'd) into *out, their
 * count returned, with a fingerprint of the set; -1 after saying why.
 */
static int latest(struct serve *s, char ***out, char *fp, size_t fpsz)
{
	DIR *d = opendir(s->spool);
	struct dirent *de;
	struct win *w = NULL;
	size_t nw = 0, capw = 0, i;
	char **paths = NULL;
	int n = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	time_t now = time(NULL);

	if (!d) {
		snprintf(s->err, sizeof(s->err), "cannot read the spool %s: %s", s->spool,
			 strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) && nw < GA_SERVE_FILES_MAX) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' || len <= 8 || strcmp(de->d_name + len - 8, ".gpuprof"))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (s->max_age && st.st_mtime + (time_t)s->max_age < now)
			continue;
		if (ga_util_grow(&w, &capw, nw + 1, sizeof(*w)) || !(w[nw].name = strdup(de->d_name)))
			goto nomem;
		w[nw].st = st;
		parse_name(&w[nw]);
		nw++;
	}
	closedir(d);
	d = NULL;
	if (nw)
		qsort(w, nw, sizeof(*w), cmp_win);
	paths = calloc(nw + 1, sizeof(*paths));
	if (!paths)
		goto nomem;
	for (i = 0; i < nw; i++) {
		size_t len;

		if (i && w[i].prefix == w[i - 1].prefix &&
		    !memcmp(w[i].name, w[i - 1].name, w[i].prefix))
			continue;      /* an older window of the same process */
		len = strlen(s->spool) + strlen(w[i].name) + 2;
		if (!(paths[n] = malloc(len)))
			goto nomem;
		snprintf(paths[n++], len, "%s/%s", s->spool, w[i].name);
		for (const char *p = w[i].name; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
		h = (h ^ (uint64_t)w[i].st.st_size) * 0x100000001b3ull;
		h = (h ^ (uint64_t)w[i].st.st_mtim.tv_sec) * 0x100000001b3ull;
		h = (h ^ (uint64_t)w[i].st.st_mtim.tv_nsec) * 0x100000001b3ull;
	}
	snprintf(fp, fpsz, "%d:%016" PRIx64, n, h);
	for (i = 0; i < nw; i++)
		free(w[i].name);
	free(w);
	*out = paths;
	return n;
nomem:
	if (d)
		closedir(d);
	for (i = 0; i < nw; i++)
		free(w[i].name);
	free(w);
	for (i = 0; paths && paths[i]; i++)
		free(paths[i]);
	free(paths);
	snprintf(s->err, sizeof(s->err), "out of memory");
	return -1;
}

/* Analyze the latest windows again when they changed.  0, or -1 with s->err. */
static int refresh(struct serve *s)
{
	struct ga_analysis_opts ao = { .stack_depth = GA_SITES_DEPTH, .observe_sites = 1 };
	struct ga_prom_opts po = { .top = s->top };
	struct ga_analysis an;
	struct ga_filter flt;
	struct ga_pprof pp;
	char fp[64], **paths = NULL;
	int n, i, br, rc = -1;

	n = latest(s, &paths, fp, sizeof(fp));
	if (n < 0)
		return -1;
	if (s->have && !strcmp(fp, s->fingerprint)) {
		rc = 0;
		goto out;
	}
	ao.symbolize = s->symbolize;
	po.windows = (uint64_t)n;
	ga_filter_init(&flt);
	if (ga_analysis_init(&an, &ao, &flt)) {
		ga_filter_free(&flt);
		snprintf(s->err, sizeof(s->err), "out of memory");
		goto out;
	}
	s->metrics.len = s->pprof.len = 0;
	br = ga_pprof_begin(&pp, &an) ? -1 : n ? ga_analysis_build(&an, paths, n) :
						 0;
	/*
	 * A process's windows, one file each, come one after another in time:
	 * its GPUs' busy time retires across them.  Windows of processes that
	 * used a GPU at once are read again, every busy interval kept
	 * (model.h busy_shared).
	 */
	if (br == GA_ANALYSIS_AGAIN) {
		ga_pprof_free(&pp);
		br = ga_analysis_again(&an, &ao, &flt) || ga_pprof_begin(&pp, &an) ? -1 :
										     ga_analysis_build(&an, paths, n);
	}
	if (br == 0) {
		if (n == 0 && ga_model_finish(&an.m))
			snprintf(s->err, sizeof(s->err), "out of memory");
		else if (ga_prom_write(&an, &po, &s->metrics) || ga_pprof_write(&pp, &s->pprof))
			snprintf(s->err, sizeof(s->err), "out of memory");
		else
			rc = 0;
	} else {
		snprintf(s->err, sizeof(s->err), "the spool's windows could not be read (see the "
			 "server's standard error)");
	}
	ga_pprof_free(&pp);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	s->have = rc == 0;
	if (rc == 0)
		snprintf(s->fingerprint, sizeof(s->fingerprint), "%s", fp);
out:
	for (i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

static int respond(struct conn *c, int status, const char *reason, const char *type,
		   const void *body, size_t len, int head)
{
	c->out.len = 0;
	if (ga_buf_printf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			  "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
			  status, reason, type, len) ||
	    (!head && len && ga_buf_put(&c->out, body, len)))
		return -1;
	c->writing = 1;
	c->woff = 0;
	return 0;
}

static int respond_text(struct conn *c, int status, const char *reason, const char *text)
{
	return respond(c, status, reason, "text/plain; charset=utf-8", text, strlen(text), 0);
}

/* The request in c->req is complete: its answer. */
static int handle(struct serve *s, struct conn *c)
{
	char method[8], target[256], version[16];
	int head;

	if (sscanf(c->req, "%7s %255s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7))
		return respond_text(c, 400, "Bad Request", "bad request\n");
	head = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head)
		return respond_text(c, 405, "Method Not Allowed", "only GET and HEAD\n");
	/* The query string (pprof's ?seconds=N, say) changes nothing. */
	target[strcspn(target, "?")] = 0;
	if (!strcmp(target, "/"))
		return respond_text(c, 200, "OK",
				    "gpuprof serve\n/metrics          Prometheus text exposition\n"
				    "/debug/pprof/gpu  pprof profile (gzip)\n");
	if (strcmp(target, "/metrics") && strcmp(target, "/debug/pprof/gpu"))
		return respond_text(c, 404, "Not Found", "not found\n");
	if (refresh(s)) {
		char msg[300];

		snprintf(msg, sizeof(msg), "%s\n", s->err);
		return respond_text(c, 503, "Service Unavailable", msg);
	}
	if (!strcmp(target, "/metrics"))
		return respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
			       s->metrics.p, s->metrics.len, head);
	return respond(c, 200, "OK", "application/octet-stream", s->pprof.p, s->pprof.len, head);
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->rlen = 0;
	c->writing = 0;
	c->out.len = 0;
}

/* Readable: take what came; answer once the header is complete. */
static void conn_read(struct serve *s, struct conn *c)
{
	ssize_t r = recv(c->fd, c->req + c->rlen, GA_SERVE_REQ_MAX - c->rlen, 0);

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c);
		return;
	}
	if (r < 0)
		return;
	c->rlen += (size_t)r;
	c->req[c->rlen] = 0;
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n")) {
		if (handle(s, c))
			conn_close(c);
	} else if (c->rlen >= GA_SERVE_REQ_MAX) {
		if (respond_text(c, 431, "Request Header Fields Too Large", "request too large\n"))
			conn_close(c);
	}
}

static void conn_write(struct conn *c)
{
	ssize_t w = send(c->fd, c->out.p + c->woff, c->out.len - c->woff, MSG_NOSIGNAL);

	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w < 0) {
		conn_close(c);
		return;
	}
	c->woff += (size_t)w;
	if (c->woff >= c->out.len) {
		/* All sent: say so, then close. */
		shutdown(c->fd, SHUT_WR);
		conn_close(c);
	}
}

/* HOST:PORT, [V6]:PORT, :PORT or PORT; loopback when no host is given. */
static int listen_on(const char *addr, char *err, size_t errsz)
{
	char host[256], port[16];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1, one = 1, rc;

	if (!colon) {
		snprintf(host, sizeof(host), "127.0.0.1");
		snprintf(port, sizeof(port), "%s", addr);
	} else {
		size_t hl = (size_t)(colon - addr);

		if (hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port)) {
			snprintf(err, errsz, "--listen %s: too long", addr);
			return -1;
		}
		memcpy(host, addr, hl);
		host[hl] = 0;
		if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
			memmove(host, host + 1, hl - 2);
			host[hl - 2] = 0;
		}
		if (!host[0])
			snprintf(host, sizeof(host), "127.0.0.1");
		snprintf(port, sizeof(port), "%s", colon + 1);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host, port, &hints, &res))) {
		snprintf(err, errsz, "--listen %s: %s", addr, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		snprintf(err, errsz, "--listen %s: %s", addr, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

static void help(FILE *f)
{
	fputs("usage: gpuprof serve --spool DIR [--listen ADDR] [options]\n\n"
	      "Serve the latest windows of a spool directory (gpuprof run --sample ...\n"
	      "--spool DIR) over HTTP: /metrics (Prometheus text exposition) and\n"
	      "/debug/pprof/gpu (a gzipped pprof profile).  The latest windows: of each\n"
	      "process, its newest complete window file.\n\n"
	      "Options:\n"
	      "  --spool DIR       the spool directory (required)\n"
	      "  --listen ADDR     HOST:PORT, [V6]:PORT or PORT (default "
	      GA_SERVE_DEFAULT_LISTEN ");\n"
	      "                    without a host, 127.0.0.1\n"
	      "  --top N           kernels named in the metrics' kernel label, the rest\n"
	      "                    as \"other\" (default 10, at most 100)\n"
	      "  --max-age SECONDS leave out processes whose newest window is older\n"
	      "                    (default 600; 0 keeps all)\n"
	      "  --no-symbolize    do not look frames up in their modules' files\n"
	      "  -h, --help        show this help\n"
	      "  --version         print the version\n\n"
	      "Each connection has 5 s from its accept to its answer's last byte and\n"
	      "sends one request of at most 8 KiB; it ends on SIGINT or SIGTERM.\n"
	      "Exit status: 0 after a signal, 1 when it cannot listen, 2 on bad usage.\n", f);
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "spool", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "top", required_argument, NULL, 't' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "no-symbolize", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, GA_OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	static struct conn conns[GA_SERVE_CONNS];
	struct serve s = { .top = GA_PROM_TOP_DEFAULT, .max_age = GA_SERVE_MAX_AGE_S,
			   .symbolize = 1 };
	const char *listen_addr = GA_SERVE_DEFAULT_LISTEN;
	struct pollfd pfd[GA_SERVE_CONNS + 1];
	struct sigaction sa;
	char err[512], *end;
	unsigned long v;
	int c, lfd, i;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			s.spool = optarg;
			break;
		case 'l':
			listen_addr = optarg;
			break;
		case 't':
		case 'a':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || errno || (c == 't' && (v < 1 || v > GA_PROM_TOP_MAX)) ||
			    v > 100000000ul) {
				fprintf(stderr, "gpuprof serve: --%s needs a number%s, not '%s'\n",
					c == 't' ? "top" : "max-age",
					c == 't' ? " from 1 to 100" : " of seconds", optarg);
				return GA_EXIT_USAGE;
			}
			if (c == 't')
				s.top = (unsigned)v;
			else
				s.max_age = (unsigned)v;
			break;
		case 'S':
			s.symbolize = 0;
			break;
		case 'h':
			help(stdout);
			return GA_EXIT_OK;
		case GA_OPT_VERSION:
			return ga_print_version();
		default:
			if (optopt)
				fprintf(stderr, "gpuprof serve: option --%s needs a value\n",
					argv[optind - 1] + 2);
			else
				fprintf(stderr, "gpuprof serve: unknown option '%s'\n", argv[optind - 1]);
			fputs("Try 'gpuprof serve --help'.\n", stderr);
			return GA_EXIT_USAGE;
		}
	}
	if (!s.spool || optind < argc) {
		fputs(!s.spool ? "gpuprof serve: --spool DIR is required\n" :
		      "gpuprof serve: no arguments besides the options\n", stderr);
		fputs("Try 'gpuprof serve --help'.\n", stderr);
		return GA_EXIT_USAGE;
	}
	err[0] = 0;
	lfd = listen_on(listen_addr, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "gpuprof serve: %s\n", err);
		return GA_EXIT_FAIL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < GA_SERVE_CONNS; i++)
		conns[i].fd = -1;
	fprintf(stderr, "gpuprof serve: %s on http://%s/metrics and /debug/pprof/gpu\n", s.spool,
		listen_addr);
	while (!stop_sig) {
		uint64_t now = now_ms(), next = now + 60000;
		int n = 0, free_slot = -1, timeout;

		for (i = 0; i < GA_SERVE_CONNS; i++) {
			struct conn *k = &conns[i];

			if (k->fd >= 0 && now >= k->deadline)
				conn_close(k);     /* too slow: its slot goes back */
			if (k->fd < 0) {
				if (free_slot < 0)
					free_slot = i;
				continue;
			}
			if (k->deadline < next)
				next = k->deadline;
		}
		/* Accept only while a slot is free: the backlog waits meanwhile. */
		if (free_slot >= 0) {
			pfd[n].fd = lfd;
			pfd[n].events = POLLIN;
			n++;
		}
		for (i = 0; i < GA_SERVE_CONNS; i++) {
			if (conns[i].fd < 0)
				continue;
			pfd[n].fd = conns[i].fd;
			pfd[n].events = conns[i].writing ? POLLOUT : POLLIN;
			n++;
		}
		timeout = (int)(next > now ? next - now : 0);
		if (poll(pfd, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "gpuprof serve: poll: %s\n", strerror(errno));
			break;
		}
		for (int j = 0; j < n; j++) {
			if (!pfd[j].revents)
				continue;
			if (pfd[j].fd == lfd) {
				int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (fd >= 0 && free_slot >= 0) {
					conns[free_slot].fd = fd;
					conns[free_slot].deadline = now_ms() + GA_SERVE_DEADLINE_MS;
					conns[free_slot].rlen = 0;
					conns[free_slot].writing = 0;
				} else if (fd >= 0) {
					close(fd);
				}
				continue;
			}
			for (i = 0; i < GA_SERVE_CONNS; i++) {
				if (conns[i].fd != pfd[j].fd)
					continue;
				if (conns[i].writing)
					conn_write(&conns[i]);
				else
					conn_read(&s, &conns[i]);
				break;
			}
		}
	}
	for (i = 0; i < GA_SERVE_CONNS; i++) {
		conn_close(&conns[i]);
		ga_buf_free(&conns[i].out);
	}
	close(lfd);
	ga_buf_free(&s.metrics);
	ga_buf_free(&s.pprof);
	return GA_EXIT_OK;
}
