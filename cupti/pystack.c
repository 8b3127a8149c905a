/*
 * Python frames of the calling thread, read without the GIL (pystack.h).
 *
 * One layout per minor version, taken from CPython's headers of that
 * version (the non-debug, GIL build); 3.13 takes its offsets from the
 * _Py_DebugOffsets at the start of _PyRuntime when the symbol is visible,
 * the same numbers otherwise.  Where the newest frame is:
 *   3.9, 3.10  tstate->frame, a PyFrameObject (f_back, f_code, f_lasti:
 *              bytes in 3.9, code units in 3.10); each frame is one call of
 *              the evaluation loop;
 *   3.11, 3.12 tstate->cframe->current_frame, a _PyInterpreterFrame
 *              (previous, f_code, prev_instr); 3.11 marks the frame a call
 *              of the evaluation loop started with is_entry, 3.12 puts a
 *              frame owned by the C stack (owner 3) after it;
 *   3.13       tstate->current_frame (f_executable, instr_ptr), as 3.12.
 */
#include "pystack.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WALK_MAX 256              /* frames looked at, at most */
#define OWNED_BY_CSTACK 3         /* FRAME_OWNED_BY_CSTACK, 3.12 and 3.13 */

enum instr_kind { LASTI_BYTES, LASTI_UNITS, INSTR_PTR };

struct layout {
	int minor;
	int ts_frame;              /* tstate -> newest frame, or -1 */
	int ts_cframe;             /* tstate -> _PyCFrame, or -1 */
	int cf_current;            /* _PyCFrame -> newest frame */
	int fr_back, fr_code, fr_instr;
	int fr_owner;              /* -1 none */
	int fr_entry;              /* is_entry (3.11), -1 none */
	enum instr_kind instr;
	int co_size;               /* 3.9/3.10: co_code (bytes object); 3.11+: -1 (Py_SIZE) */
	int co_first, co_file, co_name, co_adaptive;
	int str_ascii, str_compact;  /* sizeof PyASCIIObject, PyCompactUnicodeObject */
};

static const struct layout layouts[] = {
	{ .minor = 9, .ts_frame = 24, .ts_cframe = -1, .fr_back = 24, .fr_code = 32,
	  .fr_instr = 104, .fr_owner = -1, .fr_entry = -1, .instr = LASTI_BYTES, .co_size = 48,
	  .co_first = 40, .co_file = 104, .co_name = 112, .co_adaptive = -1, .str_ascii = 48,
	  .str_compact = 72 },
	{ .minor = 10, .ts_frame = 24, .ts_cframe = -1, .fr_back = 24, .fr_code = 32,
	  .fr_instr = 96, .fr_owner = -1, .fr_entry = -1, .instr = LASTI_UNITS, .co_size = 48,
	  .co_first = 40, .co_file = 104, .co_name = 112, .co_adaptive = -1, .str_ascii = 48,
	  .str_compact = 72 },
	{ .minor = 11, .ts_frame = -1, .ts_cframe = 56, .cf_current = 8, .fr_back = 48,
	  .fr_code = 32, .fr_instr = 56, .fr_owner = 69, .fr_entry = 68, .instr = INSTR_PTR,
	  .co_size = -1, .co_first = 72, .co_file = 112, .co_name = 128, .co_adaptive = 184,
	  .str_ascii = 48, .str_compact = 72 },
	{ .minor = 12, .ts_frame = -1, .ts_cframe = 56, .cf_current = 0, .fr_back = 8,
	  .fr_code = 0, .fr_instr = 56, .fr_owner = 70, .fr_entry = -1, .instr = INSTR_PTR,
	  .co_size = -1, .co_first = 68, .co_file = 112, .co_name = 128, .co_adaptive = 192,
	  .str_ascii = 40, .str_compact = 56 },
	{ .minor = 13, .ts_frame = 72, .ts_cframe = -1, .fr_back = 8, .fr_code = 0,
	  .fr_instr = 56, .fr_owner = 70, .fr_entry = -1, .instr = INSTR_PTR, .co_size = -1,
	  .co_first = 68, .co_file = 112, .co_name = 128, .co_adaptive = 200, .str_ascii = 40,
	  .str_compact = 56 },
};

typedef void *(*tstate_fn)(void);
typedef int (*addr2line_fn)(void *code, int addrq);
typedef const char *(*version_fn)(void);

static struct layout L;
static int ready;
static tstate_fn get_tstate;
static addr2line_fn addr2line;
static uintptr_t code_type, unicode_type;
static uintptr_t eval_lo, eval_hi;

static inline int ok_ptr(uintptr_t p)
{
	return p >= 4096 && p <= GP_PY_ADDR_MASK && !(p & 7);
}

static inline uintptr_t rd_ptr(uintptr_t base, int off)
{
	return *(const uintptr_t *)(base + (uintptr_t)off);
}

static inline int rd_int(uintptr_t base, int off)
{
	return *(const int *)(base + (uintptr_t)off);
}

static inline int is_code(uintptr_t p)
{
	return ok_ptr(p) && rd_ptr(p, 8) == code_type;
}

/*
 * 3.13: the offsets the interpreter publishes for debuggers (cookie,
 * version, free_threaded, then tables of u64 offsets).  0 when they agree
 * with a GIL build of 3.13 and were taken, -1 when they say the build is
 * not one to read.
 */
/*
 * Where CPython's symbols are looked up: the global scope (the executable,
 * or a libpython it links or loaded RTLD_GLOBAL), else a libpython3 loaded
 * RTLD_LOCAL by an embedding program, found among the loaded objects.
 */
static void *py_lib = RTLD_DEFAULT;

static int find_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (base && !strncmp(base, "libpython3.", 11) && strstr(base, ".so")) {
		*(void **)data = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
		return *(void **)data != NULL;
	}
	return 0;
}

static int debug_offsets(struct layout *l)
{
	const unsigned char *rt = dlsym(py_lib, "_PyRuntime");
	const uint64_t *u;

	if (!rt || memcmp(rt, "xdebugpy", 8))
		return 0;          /* not visible: the layout as compiled in */
	u = (const uint64_t *)(const void *)rt;
	if ((u[1] >> 16) != 0x030d || u[2])
		return -1;         /* another version, or free-threaded */
	/* thread_state at u[19], interpreter_frame at u[28], code_object at u[34]. */
	l->ts_frame = (int)u[19 + 4];
	l->fr_back = (int)u[28 + 1];
	l->fr_code = (int)u[28 + 2];
	l->fr_instr = (int)u[28 + 3];
	l->fr_owner = (int)u[28 + 5];
	l->co_file = (int)u[34 + 1];
	l->co_name = (int)u[34 + 3];
	l->co_first = (int)u[34 + 5];
	l->co_adaptive = (int)u[34 + 9];
	/* Pointer fields are aligned, and all of them near the start. */
	if ((u[19 + 4] | u[28 + 1] | u[28 + 2] | u[28 + 3] | u[34 + 1] | u[34 + 3]) & 7 ||
	    u[19 + 4] > 4096 || u[28 + 1] > 256 || u[28 + 2] > 256 || u[28 + 3] > 256 ||
	    u[28 + 5] > 256 || u[34 + 1] > 512 || u[34 + 3] > 512 || u[34 + 5] > 512 ||
	    u[34 + 9] > 512)
		return -1;
	return 0;
}

int gp_py_init(char *why, size_t whysz)
{
	version_fn version = (version_fn)dlsym(py_lib, "Py_GetVersion");
	const char *v;
	int major = 0, minor = 0;
	void *eval;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	if (ready)
		return 0;
	if (!version) {
		void *h = NULL;

		dl_iterate_phdr(find_libpython, &h);
		if (h) {
			py_lib = h;
			version = (version_fn)dlsym(py_lib, "Py_GetVersion");
		}
	}
	get_tstate = (tstate_fn)dlsym(py_lib, "PyGILState_GetThisThreadState");
	addr2line = (addr2line_fn)dlsym(py_lib, "PyCode_Addr2Line");
	code_type = (uintptr_t)dlsym(py_lib, "PyCode_Type");
	unicode_type = (uintptr_t)dlsym(py_lib, "PyUnicode_Type");
	if (!version || !get_tstate || !addr2line || !code_type || !unicode_type) {
		snprintf(why, whysz, "no CPython in this process");
		return -1;
	}
	v = version();
	if (!v || sscanf(v, "%d.%d", &major, &minor) != 2) {
		snprintf(why, whysz, "CPython of unknown version");
		return -1;
	}
	if (major != 3 || minor < 9 || minor > 13) {
		snprintf(why, whysz, "CPython %d.%d is not supported (3.9 to 3.13 are)", major, minor);
		return -1;
	}
	if (strstr(v, "free-threading")) {
		snprintf(why, whysz, "free-threaded CPython %d.%d is not supported", major, minor);
		return -1;
	}
	if (dlsym(py_lib, "_Py_PrintReferences")) {
		snprintf(why, whysz, "CPython %d.%d built with Py_TRACE_REFS is not supported", major,
			 minor);
		return -1;
	}
	L = layouts[minor - 9];
	if (minor == 13 && debug_offsets(&L) < 0) {
		snprintf(why, whysz, "this CPython 3.13 build is not supported");
		return -1;
	}
	eval = dlsym(py_lib, "_PyEval_EvalFrameDefault");
	if (eval && dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
		eval_lo = (uintptr_t)eval;
		eval_hi = eval_lo + sym->st_size;
	}
	ready = 1;
	return 0;
}

int gp_py_minor(void)
{
	return ready ? L.minor : 0;
}

/* Instruction offset of frame f running code co, in code units; -1 if not sane. */
static long frame_units(uintptr_t f, uintptr_t co)
{
	long units, size;

	switch (L.instr) {
	case LASTI_BYTES:
	case LASTI_UNITS: {
		uintptr_t bytes = rd_ptr(co, L.co_size);

		if (!ok_ptr(bytes))
			return -1;
		size = *(const long *)(bytes + 16) / 2;   /* ob_size of co_code */
		units = rd_int(f, L.fr_instr);
		if (L.instr == LASTI_BYTES)
			units /= 2;
		break;
	}
	default: {
		uintptr_t ip = rd_ptr(f, L.fr_instr), start = co + (uintptr_t)L.co_adaptive;

		size = *(const long *)(co + 16);          /* Py_SIZE: code units */
		if (ip < start)
			return -1;
		units = (long)((ip - start) / 2);
		break;
	}
	}
	return units >= 0 && units < size ? units : -1;
}

static uint32_t ident_of(uintptr_t co)
{
	uint32_t h = (uint32_t)rd_int(co, L.co_first) * 0x9e3779b1u;

	return h ^ (uint32_t)(rd_ptr(co, L.co_name) >> 3) ^ (uint32_t)(rd_ptr(co, L.co_file) >> 7);
}

int gp_py_walk(uint64_t *words, uint8_t *entry, int max, uint64_t *ident)
{
	uintptr_t ts, f, next;
	uint64_t h = 0;
	int n = 0, walked;

	*ident = 0;
	if (!ready || !(ts = (uintptr_t)get_tstate()) || !ok_ptr(ts))
		return -1;
	if (L.ts_cframe >= 0) {
		uintptr_t cf = rd_ptr(ts, L.ts_cframe);

		if (!ok_ptr(cf))
			return 0;
		f = rd_ptr(cf, L.cf_current);
	} else {
		f = rd_ptr(ts, L.ts_frame);
	}
	for (walked = 0; f && walked < WALK_MAX && n < max; walked++, f = next) {
		uintptr_t co;
		long units;

		if (!ok_ptr(f))
			break;
		next = rd_ptr(f, L.fr_back);
		if (L.fr_owner >= 0 && L.minor >= 12 &&
		    *(const char *)(f + (uintptr_t)L.fr_owner) == OWNED_BY_CSTACK) {
			/* The entry of a call of the evaluation loop. */
			if (entry && n)
				entry[n - 1] = 1;
			continue;
		}
		co = rd_ptr(f, L.fr_code);
		if (!is_code(co) || (units = frame_units(f, co)) < 0)
			continue;
		if (units > (long)GP_PY_OFF_MAX)
			units = GP_PY_OFF_MAX;
		words[n] = GP_PY_TAG | (uint64_t)units << GP_PY_OFF_SHIFT | co;
		if (entry)
			entry[n] = L.fr_entry >= 0 ? *(const unsigned char *)(f + (uintptr_t)L.fr_entry) != 0
						   : L.minor < 11;
		h = (h ^ ident_of(co)) * 0x100000001b3ull;
		n++;
	}
	*ident = h;
	return n;
}

static uintptr_t word_code(uint64_t word)
{
	uintptr_t co = (uintptr_t)(word & GP_PY_ADDR_MASK);

	return (word & GP_PY_TAG) && ready && is_code(co) ? co : 0;
}

uint32_t gp_py_code_ident(uint64_t word)
{
	uintptr_t co = word_code(word);

	return co ? ident_of(co) : 0;
}

/* Appends code point c as UTF-8 if it fits (a NUL after it).  0, or -1 full. */
static int put_utf8(char *out, size_t cap, size_t *at, uint32_t c)
{
	unsigned char b[4];
	size_t n;

	if (c < 0x80) {
		b[0] = (unsigned char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (unsigned char)(0xc0 | c >> 6);
		b[1] = (unsigned char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (unsigned char)(0xe0 | c >> 12);
		b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | (c >> 18 & 7));
		b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (*at + n >= cap)
		return -1;
	memcpy(out + *at, b, n);
	*at += n;
	return 0;
}

/* A compact str object as UTF-8 into out (cut to fit).  0, or -1. */
static int copy_str(uintptr_t s, char *out, size_t cap)
{
	uint32_t state;
	long len, i;
	unsigned kind;
	uintptr_t data;
	size_t at = 0;

	if (!cap)
		return -1;
	out[0] = 0;
	if (!ok_ptr(s) || rd_ptr(s, 8) != unicode_type)
		return -1;
	len = *(const long *)(s + 16);
	state = *(const uint32_t *)(s + 32);
	kind = state >> 2 & 7;
	if (len < 0 || !(state >> 5 & 1))
		return -1;         /* not compact (a legacy string) */
	data = s + (uintptr_t)((state >> 6 & 1) ? L.str_ascii : L.str_compact);
	for (i = 0; i < len; i++) {
		uint32_t c;

		if (kind == 1)
			c = ((const uint8_t *)data)[i];
		else if (kind == 2)
			c = ((const uint16_t *)data)[i];
		else if (kind == 4)
			c = ((const uint32_t *)data)[i];
		else
			return -1;
		if (put_utf8(out, cap, &at, c))
			break;
	}
	out[at] = 0;
	return 0;
}

int gp_py_code_names(uint64_t word, char *file, size_t filesz, char *func, size_t funcsz,
		     uint32_t *first_line)
{
	uintptr_t co = word_code(word);

	if (!co)
		return -1;
	if (copy_str(rd_ptr(co, L.co_file), file, filesz) < 0)
		snprintf(file, filesz, "?");
	if (copy_str(rd_ptr(co, L.co_name), func, funcsz) < 0)
		snprintf(func, funcsz, "?");
	*first_line = (uint32_t)rd_int(co, L.co_first);
	return 0;
}

uint32_t gp_py_line(uint64_t word)
{
	uintptr_t co = word_code(word);
	int line;

	if (!co)
		return 0;
	line = addr2line((void *)co, (int)((word >> GP_PY_OFF_SHIFT) & GP_PY_OFF_MAX) * 2);
	return line > 0 ? (uint32_t)line : 0;
}

int gp_py_in_eval(uint64_t pc)
{
	return pc - 1 >= eval_lo && pc - 1 < eval_hi;
}
