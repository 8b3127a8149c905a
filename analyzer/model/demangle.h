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
