/*
 * Offline symbolization of program counters: function, source file and
 * line from a module's symbol table and DWARF, read in process with libdw
 * (elfutils), looked up only in a file proven to be the one that ran.
 * Runs offline only, in the analyzer.
 *
 * The proof is the GNU build-id the recorder read from the module in
 * memory (GP_REC_MODULE): a file is used only when its own build-id note
 * is the same.  Files are looked for, in this order: the absolute path
 * recorded; in each directory of the symbol path (--symbol-path
 * DIR:DIR...) DIR/.build-id/xx/rest.debug, DIR/.build-id/xx/rest and
 * DIR/<the module's file name>; /usr/lib/debug/.build-id/xx/rest.debug; and
 * the debuginfod servers of DEBUGINFOD_URLS, when it is set and
 * libdebuginfod.so.1 loads.  Traces recorded before build-ids were are
 * looked up at the recorded path, unverified, unless the file contradicts
 * a name the recorder itself saw in the process (dladdr) in that module.
 *
 * Every path comes from a trace, so none is opened blindly: only regular
 * files, checked with stat() before and fstat() after an open that cannot
 * block (O_NONBLOCK | O_NOCTTY | O_CLOEXEC); a FIFO or a device node is
 * never opened.
 *
 * libdw.so.1 is loaded at run time (dlopen): from the system, else the
 * copy the build puts beside the analyzer (BUILD/lib, with libelf.so.1).
 * Without it nothing is looked up and the verdict says so.
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

/* A name the recorder saw in the process (dladdr), for traces without build-ids. */
struct ga_sym_known {
	uint64_t offset;           /* pc - load base */
	uint32_t sym_offset;       /* pc - symbol start */
	const char *function;
};

/* One module of the frames, as the trace describes it. */
struct ga_sym_module {
	const char *name;          /* as FRAME records name it */
	const char *path;          /* absolute path recorded (MODULE), NULL none */
	const uint8_t *build_id;   /* recorded build-id, nid bytes */
	size_t nid;
	int recorded;              /* a MODULE record describes it */
	int legacy;                /* the trace recorded no MODULE at all (older recorder) */
	const struct ga_sym_known *known;  /* legacy: names to check the file against */
	size_t nknown;
};

/* How the names of a module were found, or why they were not. */
enum ga_sym_verdict {
	GA_SYM_NONE = 0,           /* nothing asked */
	GA_SYM_PROVEN,             /* a file with the recorded build-id */
	GA_SYM_UNVERIFIED,         /* legacy trace: the file at the recorded path */
	GA_SYM_NO_BUILD_ID,        /* the module had no build-id note */
	GA_SYM_NO_RECORD,          /* the trace has no MODULE record of it */
	GA_SYM_NOT_FOUND,          /* no file here has the recorded build-id */
	GA_SYM_CONTRADICTED,       /* legacy trace: the file disagrees with the recorder */
	GA_SYM_UNREADABLE,         /* legacy trace: no regular ELF file at the path */
	GA_SYM_NO_LIBDW,           /* libdw.so.1 could not be loaded */
	GA_SYM_VERDICTS
};

/*
 * Look up n return addresses of module mod, each its offset from the
 * module's load base (pc - dli_fbase, as the recorder writes it): out[i]
 * receives what is known of the call before offsets[i] (all NULL and 0
 * when nothing is).  symbol_path: a colon-separated list of directories,
 * or NULL.  *verdict says whether names were looked up and how; why (of
 * whylen bytes) a sentence on the file used or the files refused.
 * Returns 0, or -1 when memory runs out.  Free with ga_symbolize_free().
 */
int ga_symbolize_module(const struct ga_sym_module *mod, const char *symbol_path,
			const uint64_t *offsets, size_t n, struct ga_symbolize_line *out,
			int *verdict, char *why, size_t whylen);

/* Free the strings of out[0 .. n) and clear them. */
void ga_symbolize_free(struct ga_symbolize_line *out, size_t n);

/*
 * A trace-given path opened for reading only if it is a regular file,
 * never blocking and never opening a FIFO or a device: the descriptor, or
 * -1 (errno set; EINVAL for a file of another type).
 */
int ga_symbolize_open(const char *path);

/*
 * The GNU build-id of the ELF file open at fd (from its note sections, or
 * its note segments): its length (up to cap bytes copied to id), or -1
 * when it is no ELF file of this byte order or has none.  Bounded by the
 * file whatever its contents say.
 */
int ga_symbolize_build_id(int fd, uint8_t *id, size_t cap);

#endif
