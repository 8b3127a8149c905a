/*
 * C++ kernel names for people: full demangled signatures (libstdc++'s
 * __cxa_demangle) and the short form used in timeline labels.  Runs
 * offline only.
 */
#ifndef GA_ANALYZER_DEMANGLE_H
#define GA_ANALYZER_DEMANGLE_H

/*
 * The demangled form of an Itanium-mangled name, malloc'd; NULL when name
 * is not mangled (C or Triton kernels) or memory runs out.
 */
char *ga_demangle_full(const char *name);

/*
 * The short form of a demangled (or plain) name, malloc'd: no return type,
 * no parameter list; namespaces and template arguments stay, so that
 * "void ns::axpy<float>(int, float*)" reads "ns::axpy<float>".
 * NULL when memory runs out.
 */
char *ga_demangle_short(const char *demangled);

#endif
