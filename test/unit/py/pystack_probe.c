/*
 * The Python frame reader (cupti/pystack.c) as a library the unit test
 * test/unit/test_pystack.py loads with ctypes.CDLL, which releases the GIL
 * around each call: the same state as a thread inside a CUDA call.
 */
#include "../../../cupti/pystack.h"

#include <execinfo.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int gp_pystack_probe_init(char *why, int cap);
int gp_pystack_probe(char *out, int cap);
int gp_pystack_probe_eval_frames(void);

int gp_pystack_probe_init(char *why, int cap)
{
	why[0] = 0;
	return gp_py_init(why, (size_t)cap);
}

/*
 * One line per frame, innermost first: "file:line function first_line
 * entry", as the recorder would record them.  Returns the number of
 * frames gp_py_walk gave (-1 when the thread has no Python thread state).
 */
int gp_pystack_probe(char *out, int cap)
{
	uint64_t w[64], ident;
	uint8_t entry[64];
	int n = gp_py_walk(w, entry, 64, &ident), i;
	size_t at = 0;

	out[0] = 0;
	for (i = 0; i < n; i++) {
		char file[512], func[256];
		uint32_t first = 0;
		int k;

		if (gp_py_code_names(w[i], file, sizeof(file), func, sizeof(func), &first))
			snprintf(file, sizeof(file), "?");
		k = snprintf(out + at, (size_t)cap - at, "%s:%u %s %u %u\n", file, gp_py_line(w[i]),
			     func, first, entry[i]);
		if (k < 0 || (size_t)k >= (size_t)cap - at)
			break;
		at += (size_t)k;
	}
	return n;
}

/* Native frames of the caller inside _PyEval_EvalFrameDefault. */
int gp_pystack_probe_eval_frames(void)
{
	void *pcs[128];
	int n = backtrace(pcs, 128), k = 0;

	for (int i = 0; i < n; i++)
		k += gp_py_in_eval((uint64_t)(uintptr_t)pcs[i]);
	return k;
}

/* Mean nanoseconds of one gp_py_walk of the caller's frames, over n walks. */
double gp_pystack_probe_walk_ns(int n);

double gp_pystack_probe_walk_ns(int n)
{
	uint64_t w[128], ident;
	struct timespec a, b;
	int sink = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		sink += gp_py_walk(w, NULL, 128, &ident);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return sink < 0 ? -1.0
			: ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
}
