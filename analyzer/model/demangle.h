/*
 * C++ kernel names for people: full demangled signatures (libstdc++'s
 * __cxa_demangle, bounded in size and time) and the short form used in
 * timeline labels.  Runs offline only.
 */
#ifndef GA_ANALYZER_DEMANGLE_H
#define GA_ANALYZER_DEMANGLE_H

#include <stddef.h>

/*
 * Bounds of a demangled name: at most GA_DEMANGLE_SLACK bytes plus
 * GA_DEMANGLE_FACTOR per byte of the mangled name, and never over
 * GA_DEMANGLE_MAX.  Real names stay far below; a name whose
 * back-references expand past it, or whose demangling takes over a second,
 * is shown mangled.
 */
#define GA_DEMANGLE_SLACK 4096u
#define GA_DEMANGLE_FACTOR 16u
#define GA_DEMANGLE_MAX (1u << 20)

/* The bound for a mangled name of mangled_len bytes. */
size_t ga_demangle_bound(size_t mangled_len);

/*
 * The demangled form of an Itanium-mangled name, malloc'd; NULL when name
 * is not mangled (C or Triton kernels), its demangled form is past the
 * bounds above, or memory runs out.
 */
char *ga_demangle_full(const char *name);

/*
 * Names sent to the helper together, at most (the first of them may be
 * longer than GA_DEMANGLE_BATCH_BYTES; the others fit in it with it).
 */
#define GA_DEMANGLE_BATCH 256u
#define GA_DEMANGLE_BATCH_BYTES (16u << 10)

/* 1 when name (len bytes) is demangled by the helper process (long and mangled). */
int ga_demangle_remote(const char *name, size_t len);

/*
 * ga_demangle_full() of names[0..n) (lens their lengths), each one for
 * which ga_demangle_remote() holds, in one exchange with the helper:
 * out[i] as ga_demangle_full() returns it where settled[i] is 1.  Those
 * sent along after the first are settled up to the first that failed (past
 * the bounds, or the helper died), and only where first_needed is the
 * first always (a failure of it is counted among the names past the
 * bounds; of one only sent along, it is not, and names go one a request
 * from then on).  n at most GA_DEMANGLE_BATCH.
 */
void ga_demangle_full_many(const char *const *names, const size_t *lens, size_t n, char **out,
			   unsigned char *settled, int first_needed);

/* Exchanges with the helper so far (one per batch sent): for tests. */
unsigned long ga_demangle_exchanges(void);

/*
 * The helper that demangles long names started now, where it would
 * otherwise be started on first need: called while the process has one
 * thread, before threads that may demangle start.  The helper is the
 * analyzer executed afresh, safe from any thread; where it cannot be (the
 * forked copy serves), a fork among threads would copy any lock another
 * thread holds, in its allocator say, held for good in the helper.
 */
void ga_demangle_prestart(void);

/*
 * The short form of a demangled (or plain) name, malloc'd: no return type,
 * no parameter list; namespaces and template arguments stay, so that
 * "void ns::axpy<float>(int, float*)" reads "ns::axpy<float>".
 * NULL when memory runs out.
 */
char *ga_demangle_short(const char *demangled);

#endif
