/*
 * Offline symbolization of program counters: function, source file and
 * line from a module's debug information, by running addr2line (GNU
 * binutils or llvm-addr2line installed under that name) once per module.
 * Runs offline only, in the analyzer.
 */
#ifndef GA_ANALYZER_SYMBOLIZE_H
#define GA_ANALYZER_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/* What the debug information says about one address. */
struct ga_symbolize_line {
	char *function;            /* malloc'd symbol as written in the module (mangled), or NULL */
	char *file;                /* malloc'd source path, or NULL */
	uint32_t line;             /* 0: unknown */
};

/*
 * Look up n return addresses of the ELF module at path, each given as its
 * offset from the module's load base (pc - dli_fbase, as the recorder
 * writes it): out[i] receives what is known of the call before offsets[i]
 * (all NULL and 0 when nothing is).  The module is read as it is on this
 * machine now.  A path that is no readable ELF file, an addr2line that is
 * missing or fails, and output it cannot parse leave out[] empty: they are
 * not errors.  Returns 0, or -1 when memory runs out.  Free with
 * ga_symbolize_free().
 */
int ga_symbolize_run(const char *path, const uint64_t *offsets, size_t n,
		     struct ga_symbolize_line *out);

/* Free the strings of out[0 .. n) and clear them. */
void ga_symbolize_free(struct ga_symbolize_line *out, size_t n);

#endif
