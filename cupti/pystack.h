/*
 * Python frames of the calling thread (--backtrace=python|mixed), read
 * from CPython's own structures without the GIL, the way out-of-process
 * samplers read them.
 *
 * CPython 3.9 to 3.13 (not free-threaded, not Py_TRACE_REFS builds) is
 * found at run time through dlsym(RTLD_DEFAULT): the interpreter's C-API
 * sits in the executable or in a libpython it links; failing that, in a
 * libpython3 an embedding program loaded RTLD_LOCAL (found among the
 * loaded objects, its symbols looked up in its own handle).  Nothing is
 * linked; a process without CPython gets -1 from gp_py_init and nothing
 * else runs.
 *
 * Safety: a thread inside a CUDA call does not run Python, so its own
 * frame chain cannot change while it is read, and every code object on
 * that chain is kept alive by its frame.  Each pointer read is checked
 * (alignment, user address range), each code object by its type pointer
 * (&PyCode_Type), each string by &PyUnicode_Type, the walk by a depth cap:
 * a frame that fails a check is left out.  The GIL is never taken and no
 * CPython function is called but PyGILState_GetThisThreadState (a
 * thread-local lookup) and, for a frame seen first, PyCode_Addr2Line (it
 * only reads the code object's immutable line table).
 *
 * Frame words: bit 63 set, the instruction offset in 16-bit code units in
 * bits 48..62 (saturated), the code object's address in bits 0..47.
 *
 * Contexts: gp_py_init once (the thread that starts the recorder);
 * gp_py_walk, gp_py_code_names and gp_py_line on the thread whose frames
 * they read, while those frames are live (inside its CUDA call); no
 * allocation, no locks, no I/O.
 */
#ifndef GP_PYSTACK_H
#define GP_PYSTACK_H

#include <stddef.h>
#include <stdint.h>

#define GP_PY_TAG (1ull << 63)
#define GP_PY_ADDR_MASK ((1ull << 48) - 1)
#define GP_PY_OFF_SHIFT 48
#define GP_PY_OFF_MAX 0x7fffu

/* Finds CPython.  0 ready; -1 not usable, *why says why (no CPython, a
 * version or build not supported). */
int gp_py_init(char *why, size_t whysz);

/* The minor version found (9 .. 13), 0 before a successful init. */
int gp_py_minor(void);

/*
 * The calling thread's Python frames, innermost first: at most max words
 * into words[].  entry[] (may be NULL) receives 1 for the outermost frame
 * run by one native call of the evaluation loop (_PyEval_EvalFrameDefault),
 * 0 otherwise.  *ident receives a hash of the code objects' identities
 * (first line, name) beyond their addresses.  Returns the number of
 * frames, 0 when the thread has a Python thread state but no frame, -1
 * when it has none (it never ran Python, or CPython is not ready).
 */
int gp_py_walk(uint64_t *words, uint8_t *entry, int max, uint64_t *ident);

/* An identity of the code object of a frame word beyond its address (a
 * code object freed and another made at its address differ); 0 if the
 * word does not name a code object. */
uint32_t gp_py_code_ident(uint64_t word);

/*
 * Copies the file name and the qualified name (3.11+; the name before)
 * of a frame word's code object as UTF-8, cut to fit (NUL-terminated),
 * and its first line.  Returns 0, or -1 when the word does not name a
 * readable code object.
 */
int gp_py_code_names(uint64_t word, char *file, size_t filesz, char *func, size_t funcsz,
		     uint32_t *first_line);

/* The source line of a frame word (0 unknown). */
uint32_t gp_py_line(uint64_t word);

/* Whether pc, a return address, lies in _PyEval_EvalFrameDefault. */
int gp_py_in_eval(uint64_t pc);

#endif
