/*
 * Shared helpers for the GPU test programs in test/apps/.
 *
 * Every program prints its ground truth on stdout as lines
 *
 *     TRUTH <key> <value>
 *
 * that test/gpu/run.py compares with what the recorder traced.  The truth is
 * counted, not written down: each helper below issues one CUDA operation and
 * adds it to a small table, so a program's truth is exactly what it issued.
 * Keys (see test/gpu/run.py for how each is checked):
 *
 *     kernel.count.<name>    launches of kernels whose base name is <name>
 *     kernel.total           all kernel launches (derived in truth_print)
 *     memcpy.<kind>.count    copies of one kind (HtoD, DtoH, DtoD, PtoP)
 *     memcpy.<kind>.bytes    bytes of those copies
 *     memset.count / .bytes  memsets and the bytes they set
 *
 * Programs add their own keys (limits, graph shapes, event timings) with
 * truth_add() or truth_set().
 *
 * CK() checks a runtime call, CU() a driver call; both print the failing
 * call and exit(1), so a broken CUDA setup never passes as a test result.
 */
#ifndef GPUPROF_TEST_APPS_COMMON_H
#define GPUPROF_TEST_APPS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                             \
	do {                                                                 \
		cudaError_t ck_err_ = (call);                                \
		if (ck_err_ != cudaSuccess) {                                \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__,         \
				__LINE__, #call,                             \
				cudaGetErrorString(ck_err_));                \
			exit(1);                                             \
		}                                                            \
	} while (0)

#define CU(call)                                                             \
	do {                                                                 \
		CUresult cu_err_ = (call);                                   \
		if (cu_err_ != CUDA_SUCCESS) {                               \
			const char *cu_msg_ = NULL;                          \
			cuGetErrorString(cu_err_, &cu_msg_);                 \
			fprintf(stderr, "%s:%d: %s: error %d (%s)\n",        \
				__FILE__, __LINE__, #call, (int)cu_err_,     \
				cu_msg_ ? cu_msg_ : "?");                    \
			exit(1);                                             \
		}                                                            \
	} while (0)

/* Fails the program (exit 1) with a message when cond is false. */
#define REQUIRE(cond, ...)                                                   \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s: ",         \
				__FILE__, __LINE__, #cond);                  \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
			exit(1);                                             \
		}                                                            \
	} while (0)

/* ---- truth table ------------------------------------------------------- */

#define TRUTH_MAX 128
#define TRUTH_KEY_MAX 96

struct truth_entry {
	char key[TRUTH_KEY_MAX];
	long long value;
};

static struct truth_entry truth_tab[TRUTH_MAX];
static int truth_n;

/* The entry for key, created as 0 when missing.  Not thread-safe: callers
 * on several threads count locally and add from one thread. */
static inline struct truth_entry *truth_get(const char *key)
{
	for (int i = 0; i < truth_n; i++)
		if (!strcmp(truth_tab[i].key, key))
			return &truth_tab[i];
	REQUIRE(truth_n < TRUTH_MAX, "truth table full");
	REQUIRE(strlen(key) < TRUTH_KEY_MAX, "truth key too long: %s", key);
	strcpy(truth_tab[truth_n].key, key);
	truth_tab[truth_n].value = 0;
	return &truth_tab[truth_n++];
}

static inline void truth_add(const char *key, long long n)
{
	truth_get(key)->value += n;
}

static inline void truth_set(const char *key, long long v)
{
	truth_get(key)->value = v;
}

/* Adds n to "<prefix><name><suffix>", e.g. ("memcpy.", "HtoD", ".bytes"). */
static inline void truth_add3(const char *prefix, const char *name,
			      const char *suffix, long long n)
{
	char key[TRUTH_KEY_MAX];

	snprintf(key, sizeof(key), "%s%s%s", prefix, name, suffix);
	truth_add(key, n);
}

/* Counts one kernel launch of `name` (and the total, under kernel.total). */
static inline void truth_kernel(const char *name, long long n)
{
	truth_add3("kernel.count.", name, "", n);
	truth_add("kernel.total", n);
}

static inline void truth_memcpy(const char *kind, long long bytes)
{
	truth_add3("memcpy.", kind, ".count", 1);
	truth_add3("memcpy.", kind, ".bytes", bytes);
}

static inline void truth_memset(long long bytes)
{
	truth_add("memset.count", 1);
	truth_add("memset.bytes", bytes);
}

/* Prints every entry as "TRUTH key value" (with an optional key prefix) and
 * flushes, so the lines survive a later fork, exec or SIGKILL. */
static inline void truth_print_prefixed(const char *prefix)
{
	for (int i = 0; i < truth_n; i++)
		printf("TRUTH %s%s %lld\n", prefix, truth_tab[i].key,
		       truth_tab[i].value);
	fflush(stdout);
}

static inline void truth_print(void)
{
	truth_print_prefixed("");
}

/* ---- runtime API helpers that count what they issue -------------------- */
#ifdef __CUDA_RUNTIME_H__

/* Launches kernel `k` and counts it under its own name.  Use with
 * extern "C" kernels so the traced name equals the source name. */
#define LAUNCH(k, grid, block, smem, stream, ...)                            \
	do {                                                                 \
		k<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__);       \
		CK(cudaGetLastError());                                      \
		truth_kernel(#k, 1);                                         \
	} while (0)

static inline const char *copy_kind_name(cudaMemcpyKind k)
{
	switch (k) {
	case cudaMemcpyHostToDevice: return "HtoD";
	case cudaMemcpyDeviceToHost: return "DtoH";
	case cudaMemcpyDeviceToDevice: return "DtoD";
	default: break;
	}
	fprintf(stderr, "copy kind %d has no defined truth\n", (int)k);
	exit(1);
}

static inline void copy_sync(void *dst, const void *src, size_t n,
			     cudaMemcpyKind k)
{
	const char *name = copy_kind_name(k);

	CK(cudaMemcpy(dst, src, n, k));
	truth_memcpy(name, (long long)n);
}

static inline void copy_async(void *dst, const void *src, size_t n,
			      cudaMemcpyKind k, cudaStream_t s)
{
	const char *name = copy_kind_name(k);

	CK(cudaMemcpyAsync(dst, src, n, k, s));
	truth_memcpy(name, (long long)n);
}

static inline void set_sync(void *p, int v, size_t n)
{
	CK(cudaMemset(p, v, n));
	truth_memset((long long)n);
}

static inline void set_async(void *p, int v, size_t n, cudaStream_t s)
{
	CK(cudaMemsetAsync(p, v, n, s));
	truth_memset((long long)n);
}

#endif /* __CUDA_RUNTIME_H__ */

#endif
