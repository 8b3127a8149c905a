/*
 * libgpfault.so: faults for the GPU tests (test/gpu/run.py), preloaded
 * into the traced program beside libgpuprof.so.  Test code that runs
 * inside that program: it uses no stdio, and every call it does not fail
 * goes on to the system as it would without it.  Without GPFAULT_*
 * variables it changes nothing.
 *
 * Writes (write, pwrite, pwrite64) to a descriptor whose file's name ends
 * in GPFAULT_WRITE_SUFFIX (read from /proc/self/fd):
 *
 *   GPFAULT_WRITE_AFTER=BYTES    the faults start once that many bytes have
 *                                been written to such files (default 0)
 *   GPFAULT_WRITE_CALLS=N        they affect the next N such calls, then
 *                                none (default: every later call)
 *   GPFAULT_WRITE_DELAY_MS=MS    each affected call first sleeps MS
 *   GPFAULT_WRITE_ERRNO=E        each affected call then fails with errno E
 *                                instead of writing (5 is EIO)
 *
 * Allocations that code of one shared object makes itself, found by the
 * caller's return address: the object whose path contains
 * GPFAULT_ALLOC_CALLER (libgpuprof.so: only the recorder's allocations
 * fail, never those of CUDA or of the program).  The object must be
 * loaded when the program starts (LD_PRELOAD): its code's addresses are
 * noted then, so that no allocation takes the dynamic loader's lock.
 *
 *   GPFAULT_MALLOC_OVER=BYTES    malloc, calloc and realloc of more bytes
 *                                return NULL (ENOMEM)
 *   GPFAULT_MMAP_OVER=BYTES      anonymous mmap of more bytes fails (ENOMEM)
 *
 * GPFAULT_LOG=PATH: a line is appended to PATH for every fault injected
 * ("write-errno FD N", "write-delay FD MS", "malloc N", "mmap N"), so a
 * test can tell that its fault happened.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char suffix[256];
static size_t suffix_len;
static long long write_after, write_delay_ms;
static int write_errno;
static _Atomic long long calls_left = -1; /* -1: unlimited */
static _Atomic long long written;
static char caller[256];
static size_t malloc_over, mmap_over;
static char log_path[1024];

/* ---- configuration and the log (no stdio, no allocation) ---- */

static long long env_num(const char *name, long long def)
{
	const char *v = getenv(name);
	char *end;
	long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoll(v, &end, 10);
	return errno || *end ? def : x;
}

static void env_copy(const char *name, char *out, size_t size)
{
	const char *v = getenv(name);

	out[0] = 0;
	if (v && strlen(v) < size)
		strcpy(out, v);
}

static char *put_num(char *p, unsigned long long x)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + x % 10);
	while ((x /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Appends "WHAT A [B]\n" to the log. */
static void note(const char *what, unsigned long long a, long long b)
{
	char line[128], *p = line;
	int saved = errno, fd;

	if (!log_path[0])
		return;
	memcpy(p, what, strlen(what));
	p += strlen(what);
	*p++ = ' ';
	p = put_num(p, a);
	if (b >= 0) {
		*p++ = ' ';
		p = put_num(p, (unsigned long long)b);
	}
	*p++ = '\n';
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (syscall(SYS_write, fd, line, (size_t)(p - line)) < 0)
			(void)0;
		close(fd);
	}
	errno = saved;
}

/* ---- writes ---- */

static int matches(int fd)
{
	char link[40] = "/proc/self/fd/", path[4096];
	ssize_t n;

	if (!suffix_len || fd < 0)
		return 0;
	*put_num(link + strlen(link), (unsigned)fd) = 0;
	n = readlink(link, path, sizeof(path) - 1);
	return n >= (ssize_t)suffix_len && !memcmp(path + n - suffix_len, suffix, suffix_len);
}

static void sleep_ms(long long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Before a write to a matching file: -1 (errno set) when it must fail. */
static int inject(int fd)
{
	if (atomic_load(&written) < write_after || (!write_errno && !write_delay_ms))
		return 0;
	if (atomic_load(&calls_left) >= 0 && atomic_fetch_sub(&calls_left, 1) <= 0) {
		atomic_store(&calls_left, 0);
		return 0;
	}
	if (write_delay_ms) {
		note("write-delay", (unsigned)fd, write_delay_ms);
		sleep_ms(write_delay_ms);
	}
	if (!write_errno)
		return 0;
	note("write-errno", (unsigned)fd, write_errno);
	errno = write_errno;
	return -1;
}

static ssize_t done(int m, long r)
{
	if (m && r > 0)
		atomic_fetch_add(&written, r);
	return (ssize_t)r;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	int m = matches(fd);

	if (m && inject(fd) < 0)
		return -1;
	return done(m, syscall(SYS_write, fd, buf, n));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	int m = matches(fd);

	if (m && inject(fd) < 0)
		return -1;
	return done(m, syscall(SYS_pwrite64, fd, buf, n, off));
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	return pwrite(fd, buf, n, (off_t)off);
}

/* ---- allocations ---- */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int resolving;

/* What dlsym may allocate while the real allocator is being looked up. */
#define BOOT_BYTES 65536
static _Alignas(16) unsigned char boot[BOOT_BYTES];
static size_t boot_used;

static void *boot_alloc(size_t n)
{
	size_t need = (n + 15) & ~(size_t)15, at = boot_used;

	if (need > BOOT_BYTES - at)
		return NULL;
	boot_used += need;
	return boot + at;
}

static int in_boot(const void *p)
{
	return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + BOOT_BYTES;
}

static void resolve(void)
{
	if (real_free || resolving)
		return;
	resolving = 1;
	real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	resolving = 0;
}

/* The code of the GPFAULT_ALLOC_CALLER object (its executable segments). */
static struct {
	uintptr_t lo, hi;
} code[16];
static int ncode;

static int note_code(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, caller))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && ncode < 16; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			code[ncode].lo = info->dlpi_addr + ph->p_vaddr;
			code[ncode].hi = code[ncode].lo + ph->p_memsz;
			ncode++;
		}
	}
	return 0;
}

/* 1 (errno ENOMEM) when code of the GPFAULT_ALLOC_CALLER object asks for more than over. */
static int refused(size_t n, size_t over, const void *ret, const char *what)
{
	uintptr_t a = (uintptr_t)ret;
	int i;

	if (!over || n <= over)
		return 0;
	for (i = 0; i < ncode && !(a >= code[i].lo && a < code[i].hi); i++)
		;
	if (i == ncode)
		return 0;
	note(what, n, -1);
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	resolve();
	if (!real_malloc)
		return boot_alloc(n);
	if (refused(n, malloc_over, __builtin_return_address(0), "malloc"))
		return NULL;
	return real_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	resolve();
	if (!real_calloc)
		return n && k > SIZE_MAX / n ? NULL : boot_alloc(k * n); /* boot is zeroed */
	if (n && k <= SIZE_MAX / n &&
	    refused(k * n, malloc_over, __builtin_return_address(0), "malloc"))
		return NULL;
	return real_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	resolve();
	if (p && in_boot(p)) {
		void *q = malloc(n);
		size_t have = (size_t)(boot + boot_used - (unsigned char *)p);

		if (q)
			memcpy(q, p, n < have ? n : have);
		return q;
	}
	if (!real_realloc)
		return boot_alloc(n);
	if (refused(n, malloc_over, __builtin_return_address(0), "malloc"))
		return NULL;
	return real_realloc(p, n);
}

void free(void *p)
{
	if (!p || in_boot(p))
		return;
	resolve();
	if (real_free)
		real_free(p);
}

void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	if ((flags & MAP_ANONYMOUS) && refused(n, mmap_over, __builtin_return_address(0), "mmap"))
		return MAP_FAILED;
	return (void *)syscall(SYS_mmap, addr, n, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t n, int prot, int flags, int fd, off64_t off)
{
	if ((flags & MAP_ANONYMOUS) && refused(n, mmap_over, __builtin_return_address(0), "mmap"))
		return MAP_FAILED;
	return (void *)syscall(SYS_mmap, addr, n, prot, flags, fd, off);
}

__attribute__((constructor)) static void gpfault_init(void)
{
	resolve();
	env_copy("GPFAULT_WRITE_SUFFIX", suffix, sizeof(suffix));
	suffix_len = strlen(suffix);
	write_after = env_num("GPFAULT_WRITE_AFTER", 0);
	atomic_store(&calls_left, env_num("GPFAULT_WRITE_CALLS", -1));
	write_errno = (int)env_num("GPFAULT_WRITE_ERRNO", 0);
	write_delay_ms = env_num("GPFAULT_WRITE_DELAY_MS", 0);
	env_copy("GPFAULT_ALLOC_CALLER", caller, sizeof(caller));
	if (caller[0])
		dl_iterate_phdr(note_code, NULL);
	malloc_over = (size_t)env_num("GPFAULT_MALLOC_OVER", 0);
	mmap_over = (size_t)env_num("GPFAULT_MMAP_OVER", 0);
	env_copy("GPFAULT_LOG", log_path, sizeof(log_path));
}
