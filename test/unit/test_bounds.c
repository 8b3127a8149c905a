/*
 * Unit tests of the analyzer's bounds on hostile traces: the cost of a
 * report, export or diff stays in proportion to the trace, whatever its
 * records say.  Deep NVTX nesting (report --tree), a demangler bomb (a
 * kernel name of back-references), many long distinct kernel names, many
 * device ids, absurd timestamps, saturated loss counts and ids far up.  Each command
 * runs in a child process under an address-space limit (not in sanitizer
 * builds, whose shadow memory needs more) and an alarm that only guards
 * against hangs; its output is counted.  Test code, runs offline only,
 * needs no GPU.
 *
 *     test_bounds --write DIR     writes the hostile traces to DIR and exits
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/demangle.h"
#include "model/strtab.h"
#include "helpers.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "synth_stacks.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[256];
static uint32_t devices_n = 20000;
static uint32_t nested_n = 20000, nested_k = 1;

static void head(struct synth *s, uint32_t trace)
{
	synth_process(s, 4242, "host", "app", 0, T0);
	synth_device(s, 0, "NVIDIA H100", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, trace, 0, 0);
}

/* depth ranges, each inside the one before, kernels launched in the innermost. */
static int write_nested(const char *path, uint32_t depth, uint32_t kernels)
{
	struct synth *s = synth_open(path);
	uint32_t r, k, api;

	if (!s)
		return -1;
	head(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX);
	r = synth_string(s, "level");
	k = synth_string(s, "deep_kernel");
	api = synth_string(s, "cudaLaunchKernel");
	for (uint32_t i = 0; i < depth; i++)
		synth_nvtx_range(s, r, 0, T0 + 10 + i, T0 + 10 + 2ull * depth + 10 - i, 1, 1, i + 1,
				 GP_NVTX_PUSHPOP);
	/* All launched at the innermost level's start: the ranges' times leave no room between. */
	for (uint32_t i = 0; i < kernels; i++) {
		synth_api_corr(s, api, T0 + 10 + depth, T0 + 10 + depth, 1, i + 1, GP_API_RUNTIME);
		synth_kernel_corr(s, k, T0 + 10ull * depth + 100 + 200ull * i,
				  T0 + 10ull * depth + 200 + 200ull * i, 0, i + 1, 0, 0);
	}
	synth_end(s, T0 + 10ull * depth + 300 + 200ull * kernels, 0);
	return synth_close(s, NULL, NULL);
}

/*
 * depth nested ranges "level", a kernel launched at the start of each, so
 * that each level's name path has activities of its own.
 */
static int write_nested_spread(const char *path, uint32_t depth)
{
	struct synth *s = synth_open(path);
	uint32_t r, k, api;

	if (!s)
		return -1;
	head(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX);
	r = synth_string(s, "level");
	k = synth_string(s, "deep_kernel");
	api = synth_string(s, "cudaLaunchKernel");
	for (uint32_t i = 0; i < depth; i++)
		synth_nvtx_range(s, r, 0, T0 + 10 + i, T0 + 10 + 2ull * depth + 10 - i, 1, 1, i + 1,
				 GP_NVTX_PUSHPOP);
	for (uint32_t i = 0; i < depth; i++) {
		synth_api_corr(s, api, T0 + 10 + i, T0 + 10 + i, 1, i + 1, GP_API_RUNTIME);
		synth_kernel_corr(s, k, T0 + 10ull * depth + 100 + 200ull * i,
				  T0 + 10ull * depth + 200 + 200ull * i, 0, i + 1, 0, 0);
	}
	synth_end(s, T0 + 10ull * depth + 300 + 200ull * depth, 0);
	return synth_close(s, NULL, NULL);
}

/* The Itanium substitution S<n>_: S_ is the first candidate, then S0_, S1_, ... base 36. */
static void put_sub(char *b, size_t *len, unsigned n)
{
	static const char d[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char t[16];
	size_t k = 0;

	b[(*len)++] = 'S';
	if (n) {
		n--;
		do {
			t[k++] = d[n % 36];
			n /= 36;
		} while (n);
		while (k)
			b[(*len)++] = t[--k];
	}
	b[(*len)++] = '_';
}

/*
 * f(p<A, A>, p<p<A, A>, p<A, A>>, ...): each parameter names the one before
 * twice through a back-reference, so the demangled form doubles per
 * parameter (about 4 bytes of the mangled name).
 */
static char *bomb_name(unsigned levels)
{
	char *b = malloc(32 + (size_t)levels * 16);
	size_t len;
	unsigned cur = 2;

	if (!b)
		return NULL;
	strcpy(b, "_Z1f1pI1AS0_E");
	len = strlen(b);
	for (unsigned i = 0; i < levels; i++, cur++) {
		put_sub(b, &len, 0);
		b[len++] = 'I';
		put_sub(b, &len, cur);
		put_sub(b, &len, cur);
		b[len++] = 'E';
	}
	b[len] = '\0';
	return b;
}

static int write_kernels(const char *path, const char *const *names, size_t n, uint32_t devices)
{
	struct synth *s = synth_open(path);

	if (!s)
		return -1;
	head(s, GP_TRACE_KERNEL);
	for (uint32_t d = 1; d < devices; d++)
		synth_device(s, d, "NVIDIA H100", 9, 0, 132, 80ull << 30, (uint8_t)d);
	for (size_t i = 0; i < n; i++) {
		uint32_t id = synth_string(s, names[i]);

		synth_kernel(s, id, T0 + 1000 + i * 100, T0 + 1050 + i * 100,
			     devices > 1 ? (uint32_t)(i % devices) : 0, 7, 0, 0);
	}
	synth_end(s, T0 + 1000 + n * 100 + 100, 0);
	return synth_close(s, NULL, NULL);
}

static int write_bomb(const char *path, unsigned levels)
{
	char *name = bomb_name(levels);
	const char *names[1] = { name };
	int rc = name ? write_kernels(path, names, 1, 1) : -1;

	free(name);
	return rc;
}

/* n distinct kernel names of len bytes each. */
static int write_long_names(const char *path, size_t n, size_t len)
{
	char **names = calloc(n, sizeof(*names));
	int rc = -1;

	if (!names)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!(names[i] = malloc(len + 1)))
			goto out;
		memset(names[i], 'k', len);
		snprintf(names[i], 24, "kernel_%zu_", i);
		names[i][strlen(names[i])] = 'k';
		names[i][len] = '\0';
	}
	rc = write_kernels(path, (const char *const *)names, n, 1);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* One kernel on each of n device ids, no device records. */
static int write_devices(const char *path, uint32_t n)
{
	struct synth *s = synth_open(path);
	uint32_t k;

	if (!s)
		return -1;
	synth_process(s, 4242, "host", "app", 0, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	k = synth_string(s, "k");
	for (uint32_t d = 0; d < n; d++)
		synth_kernel(s, k, T0 + 1000 + d * 100ull, T0 + 1050 + d * 100ull, d, 7, 0, 0);
	synth_end(s, T0 + 1000 + n * 100ull + 100, 0);
	return synth_close(s, NULL, NULL);
}

/* A kernel at T0, and an end record near UINT64_MAX. */
static int write_absurd_time(const char *path)
{
	struct synth *s = synth_open(path);

	if (!s)
		return -1;
	head(s, GP_TRACE_KERNEL);
	synth_kernel(s, synth_string(s, "k"), T0 + 1000, T0 + 2000, 0, 7, 0, 0);
	synth_kernel(s, synth_string(s, "late"), UINT64_MAX - 2000, UINT64_MAX - 1000, 0, 7, 0, 0);
	synth_end(s, UINT64_MAX - 5, 0);
	return synth_close(s, NULL, NULL);
}

/* Loss counts whose sum does not fit 64 bits (one cause's too with same_cause). */
static int write_lost(const char *path, int same_cause)
{
	struct synth *s = synth_open(path);

	if (!s)
		return -1;
	head(s, GP_TRACE_KERNEL);
	synth_kernel(s, synth_string(s, "k"), T0 + 1000, T0 + 2000, 0, 7, 0, 0);
	synth_lost(s, GP_LOST_RING_FULL, UINT64_MAX - 10);
	synth_lost(s, GP_LOST_CUPTI_DROPPED, 100);
	synth_lost(s, GP_LOST_NO_BUFFER, 7);
	if (same_cause)
		synth_lost(s, GP_LOST_RING_FULL, 100);
	synth_end(s, T0 + 3000, UINT64_MAX - 3);
	return synth_close(s, NULL, NULL);
}

static void path_of(char *b, size_t n, const char *name)
{
	snprintf(b, n, "%s/%s.gpuprof", dir, name);
}

/*
 * Every id of a trace far up (from h): string ids, the device, stream,
 * context, correlation, graph, node, stack, thread, NVTX range ids and
 * domain, an allocation's address; three launches with their calls,
 * stacks and copies, in a range named as PyTorch's op ranges are.
 */
static int write_far_ids(const char *path, uint32_t h)
{
	struct synth *s = synth_open(path);
	uint64_t t = T0 + 1000000000ull, pcs[2] = { 0xffffffffffff1000ull, 0x401000 };
	uint32_t k, f, sy, n, app, file, fn;
	struct gp_rec_kernel kr;

	if (!s)
		return -1;
	s->next_string = h;
	synth_process(s, 4242, "host", "app", 0, T0);
	synth_device(s, h, "NVIDIA H100", 9, 0, 132, 80ull << 30, 0x10);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_MEMCPY | GP_TRACE_GRAPH | GP_TRACE_NVTX,
		     0, 1);
	k = synth_string(s, "_Z1kv");
	f = synth_string(s, "cudaLaunchKernel");
	sy = synth_string(s, "cudaStreamSynchronize");
	n = synth_string(s, "aten::add, seq = 5, op_id = 7");
	app = synth_string(s, "/nonexistent/app");
	file = synth_string(s, "app.cu");
	fn = synth_string(s, "_Z4mainv");
	synth_frame(s, pcs[0], 0x1000, app, fn, 0x20, file, 42);
	synth_frame(s, pcs[1], 0x1000, app, fn, 0x20, file, 43);
	synth_stack(s, h, pcs, 2);
	synth_flush_chunk(s);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t c = h + 10 * i;
		uint64_t u = t + i * 10000;

		synth_api_at_corr(s, f, u + 100, u + 110, h, c);
		synth_corr_stack(s, c, h);
		synth_kernel_init(&kr, k, u + 1000, u + 1100, h, h, c);
		kr.context = h;
		synth_rec(s, &kr, sizeof(kr));
		synth_api_at_corr(s, sy, u + 200, u + 2000, h, c + 1);
		synth_memcpy_at_corr(s, GP_COPY_HTOD, 1 << 20, u + 3000, u + 4000, h, h, c + 2);
		synth_memory(s, GP_MEM_ALLOC, u + 50, 0xffffffffffff0000ull + i * 4096, 4096, h, 2, 0);
	}
	synth_kernel_init(&kr, k, t + 50000, t + 50100, h, h, h + 40);
	kr.graph_id = h;
	kr.graph_node = 0xffffffffffffff00ull;
	synth_rec(s, &kr, sizeof(kr));
	synth_graph(s, h, t + 50000, t + 60000, h, h);
	synth_graph_node(s, 0xffffffffffffff00ull, h, h, h, 0xffffffffffffff02ull);
	synth_nvtx_open(s, n, h, t, h, 0xffffffffffffff01ull);
	synth_nvtx_range(s, n, h, t, t + 70000, h, h, 0xffffffffffffff01ull, GP_NVTX_PUSHPOP);
	synth_end(s, t + 100000, 0);
	return synth_close(s, NULL, NULL);
}

static int write_all(void)
{
	char p[512];
	int rc = 0;

	path_of(p, sizeof(p), "nested");
	rc |= write_nested(p, nested_n, nested_k);
	path_of(p, sizeof(p), "nested2");
	rc |= write_nested(p, 2 * nested_n, nested_k);
	path_of(p, sizeof(p), "deepwork");
	rc |= write_nested(p, 100000, 100000);
	path_of(p, sizeof(p), "deepspread");
	rc |= write_nested_spread(p, 400000);
	path_of(p, sizeof(p), "bomb");
	rc |= write_bomb(p, 40);
	path_of(p, sizeof(p), "names");
	rc |= write_long_names(p, 2000, 16384);
	path_of(p, sizeof(p), "devices");
	rc |= write_devices(p, devices_n);
	path_of(p, sizeof(p), "absurd");
	rc |= write_absurd_time(p);
	path_of(p, sizeof(p), "lost");
	rc |= write_lost(p, 0);
	path_of(p, sizeof(p), "lost2");
	rc |= write_lost(p, 1);
	/* Below 2^26 (the correlation ids kept by id before), and near 2^32. */
	path_of(p, sizeof(p), "far1");
	rc |= write_far_ids(p, 0x03fff000u);
	path_of(p, sizeof(p), "far2");
	rc |= write_far_ids(p, 0xfffff000u);
	return rc;
}

/* ---- running a command under bounds ---- */

struct outcome {
	int status;                /* exit status, 128 + signal when killed */
	long long out_bytes;       /* bytes written to stdout */
	char *out, *err;           /* their first bytes, NUL-terminated */
};

#define HEAD_BYTES (1 << 20)

static char *head_of(const char *path)
{
	char *b = calloc(1, HEAD_BYTES + 1);
	int fd = open(path, O_RDONLY);

	if (b && fd >= 0) {
		ssize_t n = read(fd, b, HEAD_BYTES);

		b[n > 0 ? n : 0] = '\0';
	}
	if (fd >= 0)
		close(fd);
	return b;
}

/* Virtual memory of this process now, bytes. */
static unsigned long long vm_now(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/*
 * Runs fn with the NULL-terminated arguments in a child whose address
 * space may grow by budget_mb at most (sanitizer builds: not limited), with
 * a 120 s alarm as a guard against hangs only.
 */
static void bounded(struct outcome *o, unsigned budget_mb, int (*fn)(int, char **), ...)
{
	char po[320], pe[320], *argv[32];
	int argc = 0, st;
	struct stat sb;
	va_list ap;
	pid_t pid;

	va_start(ap, fn);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	snprintf(po, sizeof(po), "%s/out", dir);
	snprintf(pe, sizeof(pe), "%s/err", dir);
	memset(o, 0, sizeof(*o));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		struct rlimit rl;

		if (fo < 0 || fe < 0)
			_exit(120);
		dup2(fo, 1);
		dup2(fe, 2);
		if (!SANITIZED) {
			rl.rlim_cur = rl.rlim_max = vm_now() + ((rlim_t)budget_mb << 20);
			setrlimit(RLIMIT_AS, &rl);
		}
		alarm(120);
		st = fn(argc, argv);
		fflush(stdout);
		fflush(stderr);
		_exit(st);
	}
	o->status = -1;
	if (pid < 0)
		return;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return;
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	o->out_bytes = stat(po, &sb) == 0 ? (long long)sb.st_size : -1;
	o->out = head_of(po);
	o->err = head_of(pe);
}

static void outcome_free(struct outcome *o)
{
	free(o->out);
	free(o->err);
	o->out = o->err = NULL;
}

#define OUTCOME_OK(o)                                                                     \
	CHECKF((o).status == 0, "exit status %d, stderr: %.300s", (o).status,             \
	       (o).err ? (o).err : "")

/* ---- the tests ---- */

/*
 * The helper started by a process whose standard input is closed: the
 * socket it is given then already has descriptor 3, which it must keep
 * across its exec.  Run first, in a child: no helper is running yet.
 */
static void test_demangle_stdin_closed(void)
{
	int status = 0;
	pid_t pid;

	tap_begin("demangler: the helper starts with standard input closed");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char *d;

		close(0);
		close(3);
		d = ga_demangle_full("_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12Mma"
				     "PipelinedINS1_9GemmShapeILi128ELi128ELi8EEEEEEEEEvNT_6ParamsE");
		_exit(d && strstr(d, "cutlass::Kernel<cutlass::gemm::kernel::Gemm<") ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x: the name came out mangled",
	       status);
	tap_end();
}

/* The i-th of many long names, and what its demangled form holds. */
#define GEMM_NAME "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelined" \
		  "INS1_9GemmShapeILi128ELi128ELi%uEEEEEEEEEvNT_6ParamsE"

/* From libstdc++, as the analyzer's in-process demangling: the reference here. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Names i of a table of N, interned with other strings between them. */
static int intern_gemms(struct ga_strtab *t, uint32_t *ids, unsigned n)
{
	char name[256];

	if (ga_strtab_init(t))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), GEMM_NAME, i);
		if (!ga_demangle_remote(name, strlen(name)))
			return -1;
		ids[i] = ga_strtab_intern(t, name, strlen(name));
		/* Other strings between them: not sent along. */
		snprintf(name, sizeof(name), "cudaLaunchKernel_%u", i);
		ga_strtab_intern(t, name, strlen(name));
	}
	return 0;
}

/* A child's verdict: 0 when every check in it held, else the first that did not (stderr). */
static int batch_child(void)
{
	enum { N = 600 };
	struct ga_strtab t, t2;
	uint32_t ids[N], ids2[N];
	char want[64];
	char *b40 = bomb_name(40);
	unsigned long x0;

	if (!b40 || intern_gemms(&t, ids, N) || intern_gemms(&t2, ids2, N))
		return 1;
	/* A trace's names, needed in another order than they came. */
	x0 = ga_demangle_exchanges();
	for (unsigned k = 0; k < N; k++) {
		unsigned i = (k * 7919u) % N;
		const char *d = ga_strtab_full(&t, ids[i]);
		int st = 0;
		char *ref;

		snprintf(want, sizeof(want), "GemmShape<128, 128, %u>", i);
		if (!strstr(d, want)) {
			fprintf(stderr, "name %u: %s\n", i, d);
			return 3;
		}
		/* As libstdc++ demangles it in this process. */
		if (k % 97 == 0) {
			ref = __cxa_demangle(ga_strtab_get(&t, ids[i]), NULL, NULL, &st);
			if (st || !ref || strcmp(ref, d)) {
				fprintf(stderr, "name %u: %s, not %s\n", i, d, ref ? ref : "(null)");
				return 4;
			}
			free(ref);
		}
	}
	/*
	 * 600 names in a few exchanges (16 KiB of names each: 5 of them), not
	 * 600; a sixth of that where a socket's buffer holds less.
	 */
	if (ga_demangle_exchanges() - x0 > N / 6) {
		fprintf(stderr, "%lu exchanges for %u names\n", ga_demangle_exchanges() - x0, N);
		return 5;
	}
	/* Another trace of the same names (the pool's next model): none sent again. */
	x0 = ga_demangle_exchanges();
	for (unsigned i = 0; i < N; i++)
		if (strcmp(ga_strtab_full(&t2, ids2[i]), ga_strtab_full(&t, ids[i]))) {
			fprintf(stderr, "name %u differs in a second table\n", i);
			return 10;
		}
	if (ga_demangle_exchanges() != x0) {
		fprintf(stderr, "%lu exchanges for names settled before\n",
			ga_demangle_exchanges() - x0);
		return 11;
	}
	ga_strtab_free(&t);
	ga_strtab_free(&t2);
	{
		/* A name past the bounds sent along: those before it settled, not it or after. */
		char a[256], b[256], c[256], e[256];
		const char *names[4] = { a, b, b40, c };
		size_t lens[4];
		char *out[4] = { NULL };
		unsigned char st[4];
		char *one;

		snprintf(a, sizeof(a), GEMM_NAME, 1000u);
		snprintf(b, sizeof(b), GEMM_NAME, 1001u);
		snprintf(c, sizeof(c), GEMM_NAME, 1002u);
		snprintf(e, sizeof(e), GEMM_NAME, 1003u);
		for (int i = 0; i < 4; i++)
			lens[i] = strlen(names[i]);
		ga_demangle_full_many(names, lens, 4, out, st, 1);
		if (!st[0] || !st[1] || st[2] || st[3] || !out[0] || !strstr(out[0], "128, 1000>") ||
		    !out[1] || !strstr(out[1], "128, 1001>")) {
			fprintf(stderr, "a batch with a bomb third: settled %d %d %d %d\n", st[0],
				st[1], st[2], st[3]);
			return 6;
		}
		free(out[0]);
		free(out[1]);
		/* From then on one name a request: the one needed only. */
		names[0] = c;
		names[1] = a;
		names[2] = e;
		lens[0] = strlen(c);
		lens[1] = strlen(a);
		lens[2] = strlen(e);
		ga_demangle_full_many(names, lens, 3, out, st, 1);
		if (!st[0] || !out[0] || !strstr(out[0], "128, 1002>") || st[1] || st[2]) {
			fprintf(stderr, "after a bomb sent along: settled %d %d %d\n", st[0], st[1],
				st[2]);
			return 7;
		}
		free(out[0]);
		ga_demangle_full_many(names + 1, lens + 1, 2, out, st, 0);
		if (st[0] || st[1]) {
			fprintf(stderr, "none needed, after a bomb sent along: settled %d %d\n", st[0],
				st[1]);
			return 12;
		}
		/*
		 * Not counted among the names that went past the bounds: after
		 * three more (asked alone), of the four allowed, a real name is
		 * still demangled.
		 */
		for (int i = 0; i < 3; i++)
			if (ga_demangle_full(b40))
				return 8;
		if (!(one = ga_demangle_full(e)) || !strstr(one, "128, 1003>")) {
			fprintf(stderr, "a real name after three bombs: %s\n", one ? one : "(null)");
			return 9;
		}
		free(one);
	}
	free(b40);
	return 0;
}

/* Long names go to the helper in batches; a bomb among them costs only itself. */
static void test_demangle_batch(void)
{
	int status = 0;
	pid_t pid;

	tap_begin("demangler: names sent to the helper in batches, in any order needed");
	fflush(stdout);
	/* A child of its own: the helper's state (a bomb sent along) is the test's alone. */
	pid = fork();
	if (pid == 0)
		_exit(batch_child());
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	tap_end();
}

static void test_demangle_bounds(void)
{
	static const char *const legit =
		"_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedINS1_9"
		"GemmShapeILi128ELi128ELi8EEEEEEEEEvNT_6ParamsE";
	char *b14 = bomb_name(14), *b40 = bomb_name(40), *d;
	char p[512];
	struct outcome o;

	tap_begin("demangler: a name of back-references is shown mangled, at bounded cost");
	/* A real name longer than what is demangled in process still is. */
	d = ga_demangle_full(legit);
	CHECKF(d && strstr(d, "cutlass::Kernel<cutlass::gemm::kernel::Gemm<"), "got %s",
	       d ? d : "(null)");
	free(d);
	/* 14 doublings: 26 KB from 153 bytes, past the bound (4 KB + 16 per byte). */
	CHECK(b14 && ga_demangle_bound(strlen(b14)) < 26000);
	CHECK(b14 && !ga_demangle_full(b14));
	/* 40 doublings: terabytes; refused within the helper's time. */
	CHECK(b40 && !ga_demangle_full(b40));
	/* Short names are still demangled in process, bounded too. */
	d = ga_demangle_full("_Z1f1pI1AS0_ES_IS1_S1_E");
	CHECKF(d && !strcmp(d, "f(p<A, A>, p<p<A, A>, p<A, A> >)"), "got %s", d ? d : "(null)");
	free(d);

	/* Every output of a trace holding the bomb stays small. */
	path_of(p, sizeof(p), "bomb");
	bounded(&o, 256, cmd_report, "report", p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out_bytes > 0 && o.out_bytes < 64 * 1024, "report: %lld bytes", o.out_bytes);
	CHECK(o.out && strstr(o.out, "kernel _Z1f1pI1AS0_E"));
	outcome_free(&o);
	{
		static const char *const fmts[] = { "json", "csv", "sqlite", "chrome" };

		for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
			char op[400];
			struct stat sb;

			snprintf(op, sizeof(op), "%s/bomb.%s", dir, fmts[i]);
			bounded(&o, 256, cmd_export, "export", "-t", (char *)fmts[i], "-o", op, p, NULL);
			OUTCOME_OK(o);
			CHECKF(stat(op, &sb) == 0 && sb.st_size < 1024 * 1024, "export %s: %lld bytes",
			       fmts[i], (long long)sb.st_size);
			outcome_free(&o);
		}
	}
	bounded(&o, 512, cmd_diff, "diff", p, p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out_bytes > 0 && o.out_bytes < 64 * 1024, "diff: %lld bytes", o.out_bytes);
	outcome_free(&o);
	free(b14);
	free(b40);
	tap_end();
}

/* 2000 names of 16 KB: 32 MB of names once decompressed. */
static void test_long_names(void)
{
	char p[512];
	struct outcome o;

	tap_begin("many long kernel names: memory in proportion to the names (report, diff)");
	path_of(p, sizeof(p), "names");
	/* Two copies at most (the name and its label), and room for the rest. */
	bounded(&o, 48 + 2 * 32, cmd_report, "report", p, NULL);
	OUTCOME_OK(o);
	CHECK(o.out && strstr(o.out, "Records:      2000 kernel"));
	outcome_free(&o);
	/* Both sides, and the diff points at their names. */
	bounded(&o, 96 + 4 * 32, cmd_diff, "diff", p, p, NULL);
	OUTCOME_OK(o);
	outcome_free(&o);
	tap_end();
}

static void test_tree(void)
{
	char p[512], p2[512];
	struct outcome o, o2;

	tap_begin("report --tree of deep nesting: streamed, drawn 32 levels deep");
	path_of(p, sizeof(p), "nested");
	path_of(p2, sizeof(p2), "nested2");
	/* Drawn in full, 20,000 levels took 1.2 GB of output and more of memory. */
	bounded(&o, 128, cmd_report, "report", "--tree", "--no-timeline", p, NULL);
	OUTCOME_OK(o);
	CHECK(o.out && strstr(o.out, "] \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 level"));
	CHECK(o.out && strstr(o.out, "[33] "));
	/* A row costs the same at any depth: twice the levels, twice the bytes. */
	bounded(&o2, 128, cmd_report, "report", "--tree", "--no-timeline", p2, NULL);
	OUTCOME_OK(o2);
	CHECKF(o.out_bytes > 20000 * 100 && o2.out_bytes < o.out_bytes * 21 / 10,
	       "%lld bytes for %u levels, %lld for twice as many", o.out_bytes, nested_n,
	       o2.out_bytes);
	CHECKF(o2.out_bytes < 2 * (long long)nested_n * 400, "%lld bytes", o2.out_bytes);
	outcome_free(&o);
	outcome_free(&o2);
	tap_end();
}

static void test_deep_work(void)
{
	char p[512];
	struct outcome o;

	tap_begin("activities launched under deep nesting: each range counted once, no walk each");
	path_of(p, sizeof(p), "deepwork");
	/*
	 * 100,000 kernels under 100,000 levels: a walk of the chain per
	 * activity took minutes (the alarm ends it); summed per range, then
	 * once over the ranges, well under a second.
	 */
	bounded(&o, 256, cmd_report, "report", "--no-timeline", p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out && strstr(o.out, "| 10.000 ms |  100000 | level\n") &&
	       strstr(o.out, "100000 of 100000 GPU activities were launched inside a range"),
	       "%.3000s", o.out ? o.out : "");
	outcome_free(&o);
	/*
	 * One kernel at each of 400,000 levels: each level's name path has
	 * activities of its own, summed into the name once over the paths in
	 * a second; a walk of each path (depth x depth) took minutes.
	 */
	path_of(p, sizeof(p), "deepspread");
	bounded(&o, 512, cmd_report, "report", "--no-timeline", p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out && strstr(o.out, "| 40.000 ms |  400000 | level\n"), "%.3000s",
	       o.out ? o.out : "");
	CHECK(o.out && strstr(o.out, "400000 of 400000 GPU activities were launched inside a range"));
	outcome_free(&o);
	tap_end();
}

static void test_devices(void)
{
	char p[512];
	struct outcome o;

	tap_begin("many device ids: the header lists them without a scan per device");
	path_of(p, sizeof(p), "devices");
	/* 20,000 devices: the old scans took minutes, 64 KB a device (1.3 GB); now 1 KB or so. */
	bounded(&o, 96, cmd_report, "report", "--top", "0", p, NULL);
	OUTCOME_OK(o);
	CHECK(o.out && strstr(o.out, "cuda:0  (no device record in the trace)"));
	CHECKF(o.out_bytes < 20000LL * 600, "%lld bytes", o.out_bytes);
	outcome_free(&o);
	/* By default the header sums them up, and the device summary keeps 20. */
	bounded(&o, 96, cmd_report, "report", p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out && strstr(o.out, " GPUs: no device record in the trace\n") &&
		       strstr(o.out, " more devices (use --top 0 for all)") && o.out_bytes < 20000,
	       "%lld bytes: %.2000s", o.out_bytes, o.out ? o.out : "");
	outcome_free(&o);
	tap_end();
}

/* The number after "key": in s, or -1 (as unsigned: UINT64_MAX) when missing. */
static uint64_t json_u64(const char *s, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = s ? strstr(s, k) : NULL;
	return p ? strtoull(p + strlen(k), NULL, 10) : UINT64_MAX;
}

static void test_lost_saturated(void)
{
	static const char *const causes[] = { "cupti_dropped", "ring_full", "no_timestamp",
					      "write_error", "no_buffer", "cupti_error",
					      "handover", "other", "unattributed" };
	char p[512];
	struct outcome o;

	tap_begin("lost-record counts saturate, say so, and the total covers its causes");
	path_of(p, sizeof(p), "lost");
	bounded(&o, 256, cmd_report, "report", p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out && strstr(o.out, "Lost records: at least 18446744073709551615, the count "
			       "saturated (dropped by CUPTI: 100, recorder ring full: "
			       "18446744073709551605, no CUPTI buffer: 7)\n"),
	       "%.2000s", o.out ? o.out : "");
	CHECK(o.out && !strstr(o.out, "cause not recorded"));
	outcome_free(&o);
	path_of(p, sizeof(p), "lost2");
	bounded(&o, 256, cmd_report, "report", p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out && strstr(o.out, "recorder ring full: at least 18446744073709551615"), "%.2000s",
	       o.out ? o.out : "");
	outcome_free(&o);
	/* The JSON export: the total is never below the sum of its causes. */
	bounded(&o, 256, cmd_export, "export", "-t", "json", "-o", "-", p, NULL);
	OUTCOME_OK(o);
	{
		const char *l = o.out ? strstr(o.out, "\"lost\":") : NULL;
		uint64_t total = json_u64(l, "total"), sum = 0;

		for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
			uint64_t v = json_u64(l, causes[i]);

			if (v == UINT64_MAX && !strstr(l ? l : "", causes[i]))
				continue;
			sum = sum > UINT64_MAX - v ? UINT64_MAX : sum + v;
		}
		CHECKF(l && total >= sum, "total %llu, causes %llu: %.500s",
		       (unsigned long long)total, (unsigned long long)sum, l ? l : "(no lost)");
	}
	outcome_free(&o);
	tap_end();
}

static void test_absurd_times(void)
{
	char p[512];
	struct outcome o;

	tap_begin("times spanning more than a year are flagged");
	path_of(p, sizeof(p), "absurd");
	bounded(&o, 256, cmd_report, "report", p, NULL);
	OUTCOME_OK(o);
	CHECKF(o.out && strstr(o.out, "(first to last GPU activity; implausible, see Warnings)") &&
	       strstr(o.out, "(recorder start to end; implausible, see Warnings)") &&
	       strstr(o.out, "Warnings:     times span more than a year"), "%.3000s",
	       o.out ? o.out : "");
	outcome_free(&o);
	/* A plausible trace says nothing of it. */
	path_of(p, sizeof(p), "lost");
	bounded(&o, 256, cmd_report, "report", p, NULL);
	CHECK(o.out && !strstr(o.out, "implausible") && !strstr(o.out, "more than a year"));
	outcome_free(&o);
	tap_end();
}

/*
 * Ids far up cost what the trace holds: arrays by id (correlation ids of
 * the launches and NVTX attribution, op names' marks, the findings' call
 * names, the string ids the traces' clocks and hosts are read by) give
 * such ids a slot of their own (before: 270 MB to 1 GB for a trace of 700
 * bytes, 600 MB for two read together).  Every output, the names and
 * ranges as recorded.
 */
static void test_far_ids(void)
{
	static const char *const files[] = { "far1", "far2" };
	char p[512], db[600];
	struct outcome o;

	tap_begin("ids far up (strings, correlation, device, stream, graph, stack, NVTX): memory by what the trace holds");
	for (size_t i = 0; i < 2; i++) {
		path_of(p, sizeof(p), files[i]);
		snprintf(db, sizeof(db), "%s/%s.db", dir, files[i]);
		bounded(&o, 64, cmd_report, "report", "--tree", p, NULL);
		OUTCOME_OK(o);
		CHECKF(o.out && strstr(o.out, "aten::add") && strstr(o.out, "main (app.cu:42)") &&
			       strstr(o.out, "cudaStreamSynchronize"),
		       "%s: %.1500s", files[i], o.out ? o.out : "");
		outcome_free(&o);
		bounded(&o, 64, cmd_export, "export", "-t", "json", "-o", "-", p, NULL);
		OUTCOME_OK(o);
		CHECK(o.out && strstr(o.out, "\"name\":\"aten::add\""));
		outcome_free(&o);
		bounded(&o, 64, cmd_export, "export", "-t", "chrome", "-o", "-", p, NULL);
		OUTCOME_OK(o);
		/* The launches' flows found: calls and kernels paired by id. */
		CHECKF(o.out && strstr(o.out, "\"ph\":\"s\"") && strstr(o.out, "\"ph\":\"f\""),
		       "%s: no flow", files[i]);
		outcome_free(&o);
		bounded(&o, 64, cmd_export, "export", "-t", "perfetto", "-o", "-", p, NULL);
		OUTCOME_OK(o);
		outcome_free(&o);
		bounded(&o, 64, cmd_export, "export", "-t", "csv", "-o", "-", p, NULL);
		OUTCOME_OK(o);
		CHECK(o.out && strstr(o.out, "aten::add"));
		outcome_free(&o);
		unlink(db);
		bounded(&o, 64, cmd_export, "export", "-t", "sqlite", "-o", db, p, NULL);
		OUTCOME_OK(o);
		outcome_free(&o);
		unlink(db);
	}
	/* Two traces: their clocks and hosts read first (model/align.c), NCCL's too. */
	{
		char p2[512];

		path_of(p, sizeof(p), files[0]);
		path_of(p2, sizeof(p2), files[1]);
		bounded(&o, 64, cmd_report, "report", p, p2, NULL);
		OUTCOME_OK(o);
		CHECKF(o.out && strstr(o.out, "pid 4242 on host: app"), "%.1500s",
		       o.out ? o.out : "");
		outcome_free(&o);
		bounded(&o, 64, cmd_report, "report", "--align", "nccl", p, p2, NULL);
		OUTCOME_OK(o);
		outcome_free(&o);
		bounded(&o, 64, cmd_diff, "diff", p, p2, NULL);
		OUTCOME_OK(o);
		outcome_free(&o);
	}
	tap_end();
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		snprintf(dir, sizeof(dir), "%s", argv[2]);
		if (getenv("BOUNDS_NESTED"))
			nested_n = (uint32_t)atoi(getenv("BOUNDS_NESTED"));
		if (getenv("BOUNDS_NESTED_KERNELS"))
			nested_k = (uint32_t)atoi(getenv("BOUNDS_NESTED_KERNELS"));
		if (getenv("BOUNDS_DEVICES"))
			devices_n = (uint32_t)atoi(getenv("BOUNDS_DEVICES"));
		return write_all() ? 1 : 0;
	}
	snprintf(dir, sizeof(dir), "%s/gpuprof-bounds.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir) || write_all()) {
		printf("not ok - bounds: cannot write the traces in %s\n", dir);
		return 1;
	}
	test_demangle_stdin_closed();
	test_demangle_batch();
	test_demangle_bounds();
	test_long_names();
	test_devices();
	test_tree();
	test_deep_work();
	test_lost_saturated();
	test_absurd_times();
	test_far_ids();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return tap_exit();
}
