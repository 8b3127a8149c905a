/*
 * Kernel name demangling (see demangle.h).  Runs offline only.
 *
 * libstdc++'s __cxa_demangle has no limits: a name of back-references
 * expands exponentially (a 500-byte name took seconds and gigabytes), and
 * it offers no way to stop it.  Names short enough that no expansion can
 * matter are demangled here; longer ones by a helper process started on
 * first need (or before the summaries' pool starts its threads,
 * ga_demangle_prestart()): the analyzer's own file executed again, so that
 * nothing of a copy forked among threads (a lock another thread held) can
 * leave it waiting for good (helper_start()), which demangles one
 * name per request under a memory limit and answers only when the result
 * is within the bound of demangle.h; the
 * analyzer kills it when it spent HELPER_MS of CPU time on one name (its
 * own clock, so that a loaded machine does not cut real names short; it
 * is forked again for the next name).  After HELPER_FAILS names went past the
 * bounds, longer names are no longer tried: the cost of a trace of bombs
 * stays a few seconds in all.  Requests go in batches
 * (ga_demangle_full_many(): the name needed, and names of the trace not
 * yet needed sent along, strtab.c), their answers read in order, each
 * within its own CPU time: one exchange for many names instead of two
 * context switches each (a trace of 100,000 kernel names spent seconds
 * waiting on them).  Where a name sent along fails, it is not counted
 * among the HELPER_FAILS (it may never be needed), and requests go one
 * name at a time from then on.  The helper is the analyzer's alone: a
 * batch sent to it holds a lock until its answers, so that traces analyzed
 * on several threads (summaries, model/summary.c) share it one at a time.
 */
#include "model/demangle.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* From libstdc++'s ABI support; the analyzer links -lstdc++ for it. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/*
 * A mangled name of up to this many bytes is demangled in process: the
 * doubling of a back-reference costs at least 4 bytes of name, so its
 * result stays within a few kilobytes.
 */
#define INLINE_MAX 64
#define HELPER_MS 500              /* its CPU time per name, then it is killed */
#define HELPER_WALL_MS 10000       /* and a hang guard, however loaded the machine */
#define HELPER_FAILS 4             /* names past the bounds before giving up */
#define HELPER_MEM (64u << 20)     /* heap the helper may grow by, per name */

static struct {
	pid_t pid;                 /* 0: not running */
	int fd;                    /* our end of the socket pair */
	unsigned fails;
	int broken;                /* could not be started: long names stay mangled */
	int no_batch;              /* a name sent along failed: one name a request */
	size_t batch_bytes;        /* the names sent along: at most this many bytes */
	unsigned long exchanges;   /* requests sent at once, so far */
} helper = { 0, -1, 0, 0, 0, 0, 0 };
static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;

size_t ga_demangle_bound(size_t mangled_len)
{
	size_t b = GA_DEMANGLE_SLACK + GA_DEMANGLE_FACTOR * mangled_len;

	return b < GA_DEMANGLE_MAX ? b : GA_DEMANGLE_MAX;
}

/* The demangled form in this process, NULL when not mangled, past bound or out of memory. */
static char *demangle_here(const char *name, size_t bound)
{
	int status = 0;
	char *d = __cxa_demangle(name, NULL, NULL, &status);

	if (status != 0 || !d || strlen(d) > bound) {
		free(d);
		return NULL;
	}
	return d;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Reads n bytes before the deadline (CLOCK_MONOTONIC ms; 0: none).  0 or -1. */
static int read_all(int fd, void *p, size_t n, int64_t deadline)
{
	char *c = p;

	while (n) {
		struct pollfd pf = { fd, POLLIN, 0 };
		int wait = -1;
		ssize_t k;

		if (deadline) {
			struct timespec ts;
			int64_t now;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
			if (now >= deadline)
				return -1;
			wait = (int)(deadline - now);
		}
		k = poll(&pf, 1, wait);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		k = read(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The helper: one request (u32 length, name) -> one answer (u32 length or UINT32_MAX, text). */
static void __attribute__((noreturn)) serve(int fd)
{
	struct rlimit rl;
	char *name = NULL;

	/* Bound the heap by what it is now plus HELPER_MEM (the data limit counts mmaps too). */
	if (getrlimit(RLIMIT_DATA, &rl) == 0) {
		rlim_t now = 0, want;
		FILE *f = fopen("/proc/self/statm", "r");
		unsigned long size, res, shared, text, lib, data;

		/* statm's data field: pages of data and stack, as RLIMIT_DATA counts them. */
		if (!f)
			_exit(0);
		if (fscanf(f, "%lu %lu %lu %lu %lu %lu", &size, &res, &shared, &text, &lib,
				&data) == 6)
			now = (rlim_t)data * (rlim_t)sysconf(_SC_PAGESIZE);
		fclose(f);
		want = now + HELPER_MEM;
		if (rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max) {
			rl.rlim_cur = want;
			setrlimit(RLIMIT_DATA, &rl);
		}
	}
	for (;;) {
		uint32_t len, out;
		char *d;

		if (read_all(fd, &len, sizeof(len), 0) || !(name = realloc(name, (size_t)len + 1)) ||
		    read_all(fd, name, len, 0))
			_exit(0);
		name[len] = '\0';
		d = demangle_here(name, ga_demangle_bound(len));
		out = d ? (uint32_t)strlen(d) : UINT32_MAX;
		if (write_all(fd, &out, sizeof(out)) || (d && write_all(fd, d, out)))
			_exit(0);
		free(d);
	}
}

static void helper_stop(void)
{
	if (helper.fd >= 0)
		close(helper.fd);
	helper.fd = -1;
	if (helper.pid > 0) {
		kill(helper.pid, SIGKILL);
		while (waitpid(helper.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	helper.pid = 0;
}

/* Clock c in milliseconds, or -1. */
static int64_t ms_of(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return -1;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The helper runs as a program of its own: the analyzer's file executed
 * again with HELPER_ENV, served from its first constructor (helper_entry),
 * before main.  Between fork and exec the child calls only what is safe
 * after a fork among threads; a helper that served from the forked copy
 * could wait for good on a lock (the allocator's) that another thread
 * held at the fork.  It says 'R' once running; without /proc/self/exe,
 * or when the file executed does not say it (the analyzer run through
 * the dynamic loader, whose file /proc/self/exe then is), the copy serves.
 */
#define HELPER_VAR "GPUPROF_DEMANGLE_HELPER"
#define HELPER_ENV HELPER_VAR "=3"

extern char **environ;

__attribute__((constructor)) static void helper_entry(void)
{
	const char *v = getenv(HELPER_VAR);
	struct stat st;

	if (!v)
		return;
	if (!strcmp(v, "3") && fstat(3, &st) == 0 && S_ISSOCK(st.st_mode)) {
		/* Running: helper_start() waits for this byte. */
		if (write_all(3, "R", 1))
			_exit(0);
		serve(3);
	}
	/* Never the program's main in a helper's place (its standard error is /dev/null). */
	fputs("gpuprof: " HELPER_VAR " is set, but this is not the analyzer's demangling "
	      "helper: unset it\n",
	      stderr);
	_exit(2);
}

/* environ with HELPER_ENV in place of any value of it (malloc'd), or NULL. */
static char **helper_environ(void)
{
	size_t n = 0, j = 0, vl = strlen(HELPER_VAR);
	char **e;

	while (environ && environ[n])
		n++;
	if (!(e = malloc((n + 2) * sizeof(*e))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], HELPER_VAR, vl) || environ[i][vl] != '=')
			e[j++] = environ[i];
	e[j++] = (char *)HELPER_ENV;
	e[j] = NULL;
	return e;
}

/* An executed helper never said it runs (the file is not the analyzer's): copies serve. */
static int helper_no_exec;

static int helper_start(void)
{
	static char *const argv[] = { (char *)"gpuprof-demangle", NULL };
	char **envp = !helper_no_exec && access("/proc/self/exe", X_OK) == 0 ? helper_environ() : NULL;
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		free(envp);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(envp);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		int null, fd;

		/*
		 * Hold none of the analyzer's files: a pipe it writes must see
		 * its end when the analyzer ends, not when the helper does.
		 */
		/* dup2 of a descriptor onto itself keeps its close-on-exec: cleared. */
		if (dup2(sv[1], 3) != 3 || fcntl(3, F_SETFD, 0) < 0 ||
		    (null = open("/dev/null", O_RDWR)) < 0)
			_exit(0);
		for (fd = 0; fd < 3; fd++)
			if (fd != null)
				dup2(null, fd);
		if (close_range(4, ~0u, 0))
			for (fd = 4; fd < 65536; fd++)
				close(fd);
		if (envp) {
			execve("/proc/self/exe", argv, envp);
			/* Not executed (no exec allowed, say): this copy serves, and says so. */
			if (write_all(3, "R", 1))
				_exit(0);
		}
		serve(3);
	}
	close(sv[1]);
	helper.pid = pid;
	helper.fd = sv[0];
	/*
	 * Names sent along never fill the socket's buffer: written whole while
	 * the helper may be blocked writing an answer, they could not wait.
	 */
	{
		int sb = 0;
		socklen_t sl = sizeof(sb);

		helper.batch_bytes = 0;
		if (getsockopt(helper.fd, SOL_SOCKET, SO_SNDBUF, &sb, &sl) == 0 && sb > 0)
			helper.batch_bytes = (size_t)sb / 4;
		if (helper.batch_bytes > GA_DEMANGLE_BATCH_BYTES)
			helper.batch_bytes = GA_DEMANGLE_BATCH_BYTES;
	}
	if (envp) {
		char ready = 0;

		free(envp);
		if (read_all(helper.fd, &ready, 1, ms_of(CLOCK_MONOTONIC) + HELPER_WALL_MS) ||
		    ready != 'R') {
			/* Executed, it did not serve (run through the dynamic loader, say). */
			helper_stop();
			helper_no_exec = 1;
			return helper_start();
		}
	}
	return 0;
}

/*
 * Waits until the helper answers: 0; -1 when it spent HELPER_MS of its CPU
 * time since cpu0 (its CPU clock), HELPER_WALL_MS passed, or it died.
 */
static int wait_answer(clockid_t cpu, int64_t cpu0)
{
	int64_t t0 = ms_of(CLOCK_MONOTONIC);

	for (;;) {
		struct pollfd pf = { helper.fd, POLLIN, 0 };
		int k = poll(&pf, 1, 20);
		int64_t c;

		if (k > 0)
			return 0;
		if (k < 0 && errno != EINTR)
			return -1;
		c = cpu0 >= 0 ? ms_of(cpu) : -1;
		if ((c >= 0 && c - cpu0 > HELPER_MS) || ms_of(CLOCK_MONOTONIC) - t0 > HELPER_WALL_MS ||
		    (cpu0 < 0 && ms_of(CLOCK_MONOTONIC) - t0 > HELPER_MS))
			return -1;
	}
}

/* Requests (u32 length, name) of names[0..n) written at once.  0, or -1. */
static int send_names(const char *const *names, const size_t *lens, size_t n)
{
	char buf[GA_DEMANGLE_BATCH_BYTES + GA_DEMANGLE_BATCH * sizeof(uint32_t)];
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t n32 = (uint32_t)lens[i];

		/* One longer than the buffer goes alone (only the first may be). */
		if (at + sizeof(n32) + lens[i] > sizeof(buf)) {
			if ((at && write_all(helper.fd, buf, at)) ||
			    write_all(helper.fd, &n32, sizeof(n32)) ||
			    write_all(helper.fd, names[i], lens[i]))
				return -1;
			at = 0;
			continue;
		}
		memcpy(buf + at, &n32, sizeof(n32));
		memcpy(buf + at + sizeof(n32), names[i], lens[i]);
		at += sizeof(n32) + lens[i];
	}
	return at ? write_all(helper.fd, buf, at) : 0;
}

/*
 * The helper's answers for names[0..n) (long names), sent at once and read
 * in order, each within its own CPU time: out[i] the demangled form, NULL
 * when past the bounds or not mangled.  Returns how many it settled: all
 * of them, or those before the first that took too long or killed the
 * helper, and names[0] always where first_needed (NULL where it failed;
 * only such a name counts among the HELPER_FAILS).
 */
static size_t demangle_there(const char *const *names, const size_t *lens, size_t n, char **out,
			     int first_needed)
{
	clockid_t cpu;
	int have_cpu;
	size_t i, sent;

	out[0] = NULL;
	if (helper.broken || helper.fails >= HELPER_FAILS)
		return first_needed ? 1 : 0;
	if (!helper.pid && helper_start()) {
		helper.broken = 1;
		return first_needed ? 1 : 0;
	}
	/* Without its CPU clock, wall time bounds it (HELPER_MS). */
	have_cpu = clock_getcpuclockid(helper.pid, &cpu) == 0;
	/* Those sent along, within the socket's room (helper_start()). */
	for (i = 1, sent = 0; i < n && sent + sizeof(uint32_t) + lens[i] <= helper.batch_bytes; i++)
		sent += sizeof(uint32_t) + lens[i];
	n = i;
	helper.exchanges++;
	if (send_names(names, lens, n)) {
		helper_stop();
		if (!first_needed)
			return 0;
		helper.fails++;
		return 1;
	}
	for (i = 0; i < n; i++) {
		int64_t cpu0 = have_cpu ? ms_of(cpu) : -1;
		uint32_t len;
		char *d;

		out[i] = NULL;
		if (wait_answer(cpu, cpu0) || read_all(helper.fd, &len, sizeof(len), 0)) {
			/*
			 * Too slow, or it died of its memory limit: a name past the
			 * bounds.  One sent along after the first stops sending more
			 * along, and is asked again alone if ever needed.
			 */
			helper_stop();
			if (i > 0 || !first_needed) {
				helper.no_batch = 1;
				return i;
			}
			helper.fails++;
			return 1;
		}
		if (len == UINT32_MAX)
			continue;
		if (len > ga_demangle_bound(lens[i]) || !(d = malloc((size_t)len + 1))) {
			helper_stop();
			return i + 1;
		}
		if (read_all(helper.fd, d, len, 0)) {
			free(d);
			helper_stop();
			return i + 1;
		}
		d[len] = '\0';
		out[i] = d;
	}
	return n;
}

void ga_demangle_prestart(void)
{
	pthread_mutex_lock(&helper_lock);
	if (!helper.pid && !helper.broken && helper.fails < HELPER_FAILS && helper_start())
		helper.broken = 1;
	pthread_mutex_unlock(&helper_lock);
}

char *ga_demangle_full(const char *name)
{
	size_t len;

	/* Only "_Z" names are mangled; the demangler would take "i" for int. */
	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	len = strlen(name);
	if (len <= INLINE_MAX)
		return demangle_here(name, ga_demangle_bound(len));
	{
		unsigned char settled;
		char *d;

		ga_demangle_full_many(&name, &len, 1, &d, &settled, 1);
		return d;
	}
}

int ga_demangle_remote(const char *name, size_t len)
{
	return len > INLINE_MAX && len <= UINT32_MAX - 1 && !strncmp(name, "_Z", 2);
}

unsigned long ga_demangle_exchanges(void)
{
	unsigned long n;

	pthread_mutex_lock(&helper_lock);
	n = helper.exchanges;
	pthread_mutex_unlock(&helper_lock);
	return n;
}

void ga_demangle_full_many(const char *const *names, const size_t *lens, size_t n, char **out,
			   unsigned char *settled, int first_needed)
{
	size_t done;

	if (n > GA_DEMANGLE_BATCH)
		n = GA_DEMANGLE_BATCH;
	for (size_t i = 0; i < n; i++) {
		out[i] = NULL;
		settled[i] = 0;
	}
	if (!n)
		return;
	pthread_mutex_lock(&helper_lock);
	/* One a request after a name sent along failed: the one needed only. */
	if (helper.no_batch)
		n = first_needed ? 1 : 0;
	done = n ? demangle_there(names, lens, n, out, first_needed) : 0;
	pthread_mutex_unlock(&helper_lock);
	for (size_t i = 0; i < done; i++)
		settled[i] = 1;
}

static int opener(char c)
{
	return c == '(' || c == '<' || c == '[' || c == '{';
}

static int closer(char c)
{
	return c == ')' || c == '>' || c == ']' || c == '}';
}

/*
 * Does "operator" end at s[i - 1] as a word?  Inside an operator name the
 * bracket characters are the operator, not nesting ("operator<", "operator()").
 */
static size_t operator_len(const char *s, size_t i)
{
	static const char kw[] = "operator";
	size_t k = sizeof(kw) - 1;

	/* Most characters end no "operator": one comparison sends them on. */
	if (i < k || s[i - 1] != 'r' || memcmp(s + i - k, kw, k) != 0)
		return 0;
	if (i > k && (s[i - k - 1] == '_' || (s[i - k - 1] >= 'a' && s[i - k - 1] <= 'z') ||
		      (s[i - k - 1] >= 'A' && s[i - k - 1] <= 'Z') ||
		      (s[i - k - 1] >= '0' && s[i - k - 1] <= '9')))
		return 0;
	/* Length of the operator token that follows. */
	if (!strncmp(s + i, "()", 2) || !strncmp(s + i, "[]", 2) ||
	    !strncmp(s + i, "<<", 2) || !strncmp(s + i, ">>", 2) ||
	    !strncmp(s + i, "<=", 2) || !strncmp(s + i, ">=", 2) ||
	    !strncmp(s + i, "->", 2))
		return 2;
	if (s[i] == '<' || s[i] == '>')
		return 1;
	return 0;
}

/*
 * The characters the scans below look at: brackets, space, and '-' of
 * "operator->"; operator_len() is 0 before any other.  Others are passed
 * over with one look-up (names run to hundreds of characters).
 */
static int special(unsigned char c)
{
	static const unsigned char tab[256] = {
		['('] = 1,
		[')'] = 1,
		['<'] = 1,
		['>'] = 1,
		['['] = 1,
		[']'] = 1,
		['{'] = 1,
		['}'] = 1,
		[' '] = 1,
		['-'] = 1,
	};

	return tab[c];
}

char *ga_demangle_short(const char *s)
{
	size_t n = strlen(s), i, name_end = n, name_start = 0;
	int depth = 0;
	char *out;

	/*
	 * Find the parameter list: the first '(' at depth 0 that is not part of
	 * an operator name or "(anonymous namespace)", scanning left to right.
	 */
	for (i = 0; i < n; i++) {
		size_t op;

		if (!special((unsigned char)s[i]))
			continue;
		op = operator_len(s, i);

		if (op) {
			i += op - 1;
			continue;
		}
		if (depth == 0 && s[i] == '(' &&
		    strncmp(s + i, "(anonymous namespace)", 21) != 0) {
			name_end = i;
			break;
		}
		if (opener(s[i]))
			depth++;
		else if (closer(s[i]) && depth > 0)
			depth--;
	}
	/* The return type ends at the last space at depth 0 before the name. */
	depth = 0;
	for (i = 0; i < name_end; i++) {
		size_t op;

		if (!special((unsigned char)s[i]))
			continue;
		op = operator_len(s, i);

		if (op) {
			i += op - 1;
			continue;
		}
		if (opener(s[i]))
			depth++;
		else if (closer(s[i]) && depth > 0)
			depth--;
		else if (depth == 0 && s[i] == ' ')
			name_start = i + 1;
	}
	if (name_start >= name_end) {
		name_start = 0;
		name_end = n;
	}
	out = malloc(name_end - name_start + 1);
	if (!out)
		return NULL;
	memcpy(out, s + name_start, name_end - name_start);
	out[name_end - name_start] = '\0';
	return out;
}
