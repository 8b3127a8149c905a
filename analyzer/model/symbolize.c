/*
 * Offline symbolization with libdw, from files proven by build-id (see
 * symbolize.h).  Runs offline only, in the analyzer, on the main thread.
 *
 * libdw is bound at run time, once: the analyzer runs where elfutils is
 * not installed (it then names frames module+0xOFFSET and says why).
 * Every libdw session gets the file's descriptor from us (dwfl_report_elf
 * with an fd, find_debuginfo answered from our own search), so libdw
 * never opens a trace-given path itself.
 */
#include "model/symbolize.h"
#include "gpuprof/trace.h"

#include <dlfcn.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUG_ROOT "/usr/lib/debug"
#define MAX_NOTES_BYTES (1u << 20)     /* note sections read, in all */
#define MAX_SECTIONS 65536

void ga_symbolize_free(struct ga_symbolize_line *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(out[i].function);
		free(out[i].file);
		memset(&out[i], 0, sizeof(out[i]));
	}
}

int ga_symbolize_open(const char *path)
{
	struct stat sb;
	int fd;

	/* stat first: opening a device node runs its driver's open. */
	if (stat(path, &sb))
		return -1;
	if (!S_ISREG(sb.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* The name may have been replaced in between. */
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t r;

	if (off > (uint64_t)INT64_MAX - n)
		return -1;
	r = pread(fd, buf, n, (off_t)off);
	return r == (ssize_t)n ? 0 : -1;
}

/* The ELF header of fd, 32- or 64-bit, of this machine's byte order, as 64-bit. */
static int read_ehdr(int fd, Elf64_Ehdr *e)
{
	union {
		unsigned char ident[EI_NIDENT];
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} h;
	const uint16_t one = 1;
	int le = *(const unsigned char *)&one == 1;

	if (read_at(fd, &h, sizeof(h.ident), 0) || memcmp(h.ident, ELFMAG, SELFMAG) != 0 ||
	    h.ident[EI_DATA] != (le ? ELFDATA2LSB : ELFDATA2MSB))
		return -1;
	if (h.ident[EI_CLASS] == ELFCLASS64) {
		if (read_at(fd, &h.e64, sizeof(h.e64), 0))
			return -1;
		*e = h.e64;
		return 0;
	}
	if (h.ident[EI_CLASS] != ELFCLASS32 || read_at(fd, &h.e32, sizeof(h.e32), 0))
		return -1;
	memset(e, 0, sizeof(*e));
	memcpy(e->e_ident, h.ident, EI_NIDENT);
	e->e_type = h.e32.e_type;
	e->e_phoff = h.e32.e_phoff;
	e->e_shoff = h.e32.e_shoff;
	e->e_phnum = h.e32.e_phnum;
	e->e_phentsize = h.e32.e_phentsize;
	e->e_shnum = h.e32.e_shnum;
	e->e_shentsize = h.e32.e_shentsize;
	return 0;
}

/* Program header i of fd as 64-bit.  0, or -1. */
static int read_phdr(int fd, const Elf64_Ehdr *e, unsigned i, Elf64_Phdr *p)
{
	int is64 = e->e_ident[EI_CLASS] == ELFCLASS64;
	uint64_t at = e->e_phoff + (uint64_t)i * e->e_phentsize;
	Elf32_Phdr p32;

	if (e->e_phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -1;
	if (is64)
		return read_at(fd, p, sizeof(*p), at);
	if (read_at(fd, &p32, sizeof(p32), at))
		return -1;
	p->p_type = p32.p_type;
	p->p_offset = p32.p_offset;
	p->p_vaddr = p32.p_vaddr;
	p->p_filesz = p32.p_filesz;
	p->p_memsz = p32.p_memsz;
	p->p_align = p32.p_align;
	return 0;
}

/*
 * What to add to an offset from the load base to get the address the
 * module's symbols and line tables use: the load base is the start of the
 * first mapping (dladdr's dli_fbase), the first PT_LOAD segment's address
 * rounded down to a page, which is 0 for shared libraries and
 * position-independent executables.  -1 when fd is no ELF file a process
 * can map.
 */
static int load_bias(int fd, uint64_t *bias)
{
	long page = sysconf(_SC_PAGESIZE);
	Elf64_Ehdr e;
	unsigned i;

	if (read_ehdr(fd, &e) || (e.e_type != ET_EXEC && e.e_type != ET_DYN))
		return -1;
	for (i = 0; i < e.e_phnum && i < 4096; i++) {
		Elf64_Phdr p;

		if (read_phdr(fd, &e, i, &p))
			return -1;
		if (p.p_type == PT_LOAD) {   /* PT_LOAD entries come in address order */
			*bias = page > 0 ? p.p_vaddr & ~((uint64_t)page - 1) : p.p_vaddr;
			return 0;
		}
	}
	return -1;
}

/* The NT_GNU_BUILD_ID note among len bytes of notes at off.  Its length, or -1. */
static int notes_build_id(int fd, uint64_t off, uint64_t len, uint64_t align, uint8_t *id,
			  size_t cap, uint64_t *budget)
{
	unsigned char buf[4096];
	uint64_t at = 0;

	if (len > *budget)
		len = *budget;
	*budget -= len;
	while (at + 12 <= len) {
		uint32_t nh[3];            /* namesz, descsz, type: same in both classes */
		uint64_t name_at, desc_at, next;

		if (read_at(fd, nh, sizeof(nh), off + at))
			return -1;
		name_at = at + 12;
		desc_at = name_at + (((uint64_t)nh[0] + align - 1) & ~(align - 1));
		next = desc_at + (((uint64_t)nh[1] + align - 1) & ~(align - 1));
		if (desc_at > len || next > len || next <= at)
			return -1;
		if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 && nh[1] > 0 && nh[1] <= sizeof(buf)) {
			char name[4];

			if (read_at(fd, name, 4, off + name_at))
				return -1;
			if (!memcmp(name, "GNU", 4)) {
				if (read_at(fd, buf, nh[1], off + desc_at))
					return -1;
				memcpy(id, buf, nh[1] < cap ? nh[1] : cap);
				return (int)nh[1];
			}
		}
		at = next;
	}
	return -1;
}

int ga_symbolize_build_id(int fd, uint8_t *id, size_t cap)
{
	uint64_t budget = MAX_NOTES_BYTES;
	Elf64_Ehdr e;
	unsigned i;
	int n, is64;

	if (read_ehdr(fd, &e))
		return -1;
	is64 = e.e_ident[EI_CLASS] == ELFCLASS64;
	/* Sections first: a separate debug file keeps the note section only. */
	if (e.e_shoff && e.e_shentsize >= (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
		for (i = 0; i < e.e_shnum && i < MAX_SECTIONS && budget; i++) {
			uint64_t at = e.e_shoff + (uint64_t)i * e.e_shentsize, off, size, align;
			Elf64_Shdr s;
			Elf32_Shdr s32;
			uint32_t type;

			if (is64 ? read_at(fd, &s, sizeof(s), at) : read_at(fd, &s32, sizeof(s32), at))
				break;
			type = is64 ? s.sh_type : s32.sh_type;
			off = is64 ? s.sh_offset : s32.sh_offset;
			size = is64 ? s.sh_size : s32.sh_size;
			align = (is64 ? s.sh_addralign : s32.sh_addralign) == 8 ? 8 : 4;
			if (type == SHT_NOTE &&
			    (n = notes_build_id(fd, off, size, align, id, cap, &budget)) > 0)
				return n;
		}
	for (i = 0; i < e.e_phnum && i < 4096 && budget; i++) {
		Elf64_Phdr p;

		if (read_phdr(fd, &e, i, &p))
			break;
		if (p.p_type == PT_NOTE &&
		    (n = notes_build_id(fd, p.p_offset, p.p_filesz, p.p_align == 8 ? 8 : 4, id, cap,
					&budget)) > 0)
			return n;
	}
	return -1;
}

/* ---- libdw, bound at run time ---- */

static struct {
	int tried, ok;
	__typeof__(dwfl_begin) *dwfl_begin;
	__typeof__(dwfl_end) *dwfl_end;
	__typeof__(dwfl_report_begin) *dwfl_report_begin;
	__typeof__(dwfl_report_elf) *dwfl_report_elf;
	__typeof__(dwfl_report_end) *dwfl_report_end;
	__typeof__(dwfl_module_getelf) *dwfl_module_getelf;
	__typeof__(dwfl_module_addrinfo) *dwfl_module_addrinfo;
	__typeof__(dwfl_module_getsrc) *dwfl_module_getsrc;
	__typeof__(dwfl_lineinfo) *dwfl_lineinfo;
	__typeof__(dwfl_module_addrdie) *dwfl_module_addrdie;
	__typeof__(dwarf_getscopes) *dwarf_getscopes;
	__typeof__(dwarf_tag) *dwarf_tag;
	__typeof__(dwarf_attr_integrate) *dwarf_attr_integrate;
	__typeof__(dwarf_formudata) *dwarf_formudata;
	__typeof__(dwarf_formstring) *dwarf_formstring;
	__typeof__(dwarf_getsrcfiles) *dwarf_getsrcfiles;
	__typeof__(dwarf_filesrc) *dwarf_filesrc;
	__typeof__(dwarf_diename) *dwarf_diename;
	__typeof__(dwfl_offline_section_address) *dwfl_offline_section_address;
	__typeof__(dwfl_module_getsymtab) *dwfl_module_getsymtab;
	__typeof__(dwfl_module_getsym_info) *dwfl_module_getsym_info;
} dw;

/* libdebuginfod, bound at run time when DEBUGINFOD_URLS is set. */
typedef void *(*dbgd_begin_fn)(void);
typedef int (*dbgd_find_fn)(void *, const unsigned char *, int, char **);
typedef void (*dbgd_end_fn)(void *);
static struct {
	int tried;
	void *client;
	dbgd_find_fn find_debuginfo;
	dbgd_end_fn end;
} dbgd;

/*
 * dlopen name, else the copy in the lib directory beside the analyzer's
 * bin: lib/gpuprof/ where installed (private to gpuprof), lib/ in the
 * build tree.
 */
static void *open_lib(const char *name, const char *before)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n;
	char *slash;
	const char *sub = "lib/gpuprof";
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);

	if (h)
		return h;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return NULL;
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/../%s/%s", exe, sub, name);
	if (access(path, R_OK) != 0)
		sub = "lib";
	/* A copy's own dependency first, by path, so that its soname is found loaded. */
	if (before) {
		snprintf(path, sizeof(path), "%s/../%s/%s", exe, sub, before);
		if (access(path, R_OK) == 0)
			dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	}
	snprintf(path, sizeof(path), "%s/../%s/%s", exe, sub, name);
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static void dw_load_once(void)
{
	void *h;

	dw.tried = 1;
	if (!(h = open_lib("libdw.so.1", "libelf.so.1")))
		return;
#define BIND(f)                                 \
	do {                                    \
		*(void **)&dw.f = dlsym(h, #f); \
		if (!dw.f)                      \
			return;                 \
	} while (0)
	BIND(dwfl_begin);
	BIND(dwfl_end);
	BIND(dwfl_report_begin);
	BIND(dwfl_report_elf);
	BIND(dwfl_report_end);
	BIND(dwfl_module_getelf);
	BIND(dwfl_module_addrinfo);
	BIND(dwfl_module_getsrc);
	BIND(dwfl_lineinfo);
	BIND(dwfl_module_addrdie);
	BIND(dwarf_getscopes);
	BIND(dwarf_tag);
	BIND(dwarf_attr_integrate);
	BIND(dwarf_formudata);
	BIND(dwarf_formstring);
	BIND(dwarf_getsrcfiles);
	BIND(dwarf_filesrc);
	BIND(dwarf_diename);
	BIND(dwfl_offline_section_address);
	BIND(dwfl_module_getsymtab);
	BIND(dwfl_module_getsym_info);
#undef BIND
	dw.ok = 1;
}

/* libdw's functions, bound once for the process (summaries look frames up on threads). */
static int dw_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, dw_load_once);
	return dw.ok;
}

static void dbgd_load_once(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	dbgd_begin_fn begin;
	void *h;

	dbgd.tried = 1;
	if (!urls || !*urls || !(h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL)))
		return;
	begin = (dbgd_begin_fn)dlsym(h, "debuginfod_begin");
	dbgd.find_debuginfo = (dbgd_find_fn)dlsym(h, "debuginfod_find_debuginfo");
	dbgd.end = (dbgd_end_fn)dlsym(h, "debuginfod_end");
	if (begin && dbgd.find_debuginfo && dbgd.end)
		dbgd.client = begin();
}

/* The debuginfod client, made once; one lookup at a time (a client is not shared). */
static pthread_mutex_t dbgd_lock = PTHREAD_MUTEX_INITIALIZER;

static void dbgd_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, dbgd_load_once);
}

/* ---- finding the file ---- */

/*
 * fd of the separate debug file for the session under way on this thread
 * (summaries look frames up on several), -1 none.
 */
static __thread int cur_debug_fd = -1;

static int no_elf(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base, char **fname,
		  Elf **elfp)
{
	(void)mod, (void)ud, (void)name, (void)base, (void)fname, (void)elfp;
	return -1;
}

/* libdw takes the descriptor it is given: a duplicate of ours. */
static int give_debuginfo(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base,
			  const char *file, const char *link, GElf_Word crc, char **dfile)
{
	(void)mod, (void)ud, (void)name, (void)base, (void)file, (void)link, (void)crc;
	*dfile = NULL;
	return cur_debug_fd >= 0 ? fcntl(cur_debug_fd, F_DUPFD_CLOEXEC, 0) : -1;
}

static void hex(char *out, size_t cap, const uint8_t *id, size_t n)
{
	size_t i;

	if (cap)
		out[0] = '\0';
	for (i = 0; i < n && 2 * i + 3 <= cap; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* What the search saw, for the reason given when it finds nothing. */
struct search {
	const struct ga_sym_module *mod;
	char seen[PATH_MAX];       /* first file that was there, with another build-id */
	int other;                 /* files found with another build-id */
};

/* path opened if it is a regular file whose build-id is the module's: fd, or -1. */
static int try_file(struct search *s, const char *path)
{
	uint8_t id[GP_BUILD_ID_MAX];
	int fd = ga_symbolize_open(path), n;

	if (fd < 0)
		return -1;
	n = ga_symbolize_build_id(fd, id, sizeof(id));
	if (n > 0 && (size_t)n == s->mod->nid && !memcmp(id, s->mod->build_id, s->mod->nid))
		return fd;
	close(fd);
	if (!s->other++)
		snprintf(s->seen, sizeof(s->seen), "%s", path);
	return -1;
}

/*
 * The module's file (*elf_fd) and separate debug file (*dbg_fd) with its
 * build-id, each -1 when none was found; the path of the one found first
 * into used.
 */
static void find_files(struct search *s, const char *symbol_path, int *elf_fd, int *dbg_fd,
		       char *used, size_t usedlen)
{
	const struct ga_sym_module *m = s->mod;
	char idhex[2 * GP_BUILD_ID_MAX + 1], path[PATH_MAX + 128];
	const char *base = strrchr(m->name, '/'), *p = symbol_path;

	*elf_fd = *dbg_fd = -1;
	base = base ? base + 1 : m->name;
	hex(idhex, sizeof(idhex), m->build_id, m->nid);
	if (m->path && (*elf_fd = try_file(s, m->path)) >= 0)
		snprintf(used, usedlen, "%s", m->path);
	while (p && *p && (*elf_fd < 0 || *dbg_fd < 0)) {
		const char *end = strchr(p, ':');
		int len = (int)(end ? end - p : (ptrdiff_t)strlen(p));

		if (len > 0 && len < PATH_MAX) {
			if (*dbg_fd < 0) {
				snprintf(path, sizeof(path), "%.*s/.build-id/%.2s/%s.debug", len, p, idhex,
					 idhex + 2);
				if ((*dbg_fd = try_file(s, path)) >= 0 && *elf_fd < 0)
					snprintf(used, usedlen, "%s", path);
			}
			if (*elf_fd < 0) {
				snprintf(path, sizeof(path), "%.*s/.build-id/%.2s/%s", len, p, idhex,
					 idhex + 2);
				if ((*elf_fd = try_file(s, path)) < 0) {
					snprintf(path, sizeof(path), "%.*s/%s", len, p, base);
					*elf_fd = try_file(s, path);
				}
				if (*elf_fd >= 0)
					snprintf(used, usedlen, "%s", path);
			}
		}
		p = end ? end + 1 : NULL;
	}
	if (*dbg_fd < 0) {
		snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%.2s/%s.debug", idhex, idhex + 2);
		if ((*dbg_fd = try_file(s, path)) >= 0 && *elf_fd < 0)
			snprintf(used, usedlen, "%s", path);
	}
	if (*dbg_fd < 0 && *elf_fd < 0) {
		dbgd_load();
		if (dbgd.client) {
			char *got = NULL;
			int fd;

			pthread_mutex_lock(&dbgd_lock);
			fd = dbgd.find_debuginfo(dbgd.client, m->build_id, (int)m->nid, &got);
			pthread_mutex_unlock(&dbgd_lock);

			if (fd >= 0) {
				/* The server's answer is checked like any other file. */
				close(fd);
				if (got && (*dbg_fd = try_file(s, got)) >= 0)
					snprintf(used, usedlen, "%s (debuginfod)", got);
			}
			free(got);
		}
	}
}

/* ---- looking up ---- */

static char *dup_or_null(const char *s, int *oom)
{
	char *d;

	if (!s || !*s)
		return NULL;
	if (!(d = strdup(s)))
		*oom = 1;
	return d;
}

static const char *linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL;

	if (dw.dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dw.dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dw.dwarf_formstring(&a);
	return n ? n : dw.dwarf_diename(die);
}

/*
 * What the module says of address a (in libdw's addresses): the function
 * the address is really in (the outermost of those inlined there: a launch
 * stub inlined into its caller is reported at the caller's line).
 */
static void lookup(Dwfl_Module *mod, Dwarf_Addr a, struct ga_symbolize_line *o, int *oom)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *fn = dw.dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	const char *file = NULL;
	Dwarf_Addr cubias;
	Dwarf_Die *cu = dw.dwfl_module_addrdie(mod, a, &cubias), *scopes = NULL;
	int line = 0, ns, i, outer = -1;

	if (cu && (ns = dw.dwarf_getscopes(cu, a - cubias, &scopes)) > 0) {
		for (i = 0; i < ns; i++) {
			int tag = dw.dwarf_tag(&scopes[i]);

			if (tag == DW_TAG_inlined_subroutine)
				outer = i;
			if (tag == DW_TAG_subprogram) {
				if (!fn)
					fn = linkage_name(&scopes[i]);
				break;
			}
		}
		if (outer >= 0) {
			Dwarf_Attribute at;
			Dwarf_Word cf = 0, cl = 0;
			Dwarf_Files *files;
			size_t nf;

			if (dw.dwarf_attr_integrate(&scopes[outer], DW_AT_call_file, &at) &&
			    !dw.dwarf_formudata(&at, &cf) &&
			    dw.dwarf_attr_integrate(&scopes[outer], DW_AT_call_line, &at) &&
			    !dw.dwarf_formudata(&at, &cl) && cl && cl <= UINT32_MAX &&
			    !dw.dwarf_getsrcfiles(cu, &files, &nf) && cf < nf) {
				file = dw.dwarf_filesrc(files, cf, NULL, NULL);
				line = (int)cl;
			}
		}
	}
	free(scopes);
	if (!file) {
		Dwfl_Line *l = dw.dwfl_module_getsrc(mod, a);

		if (l)
			file = dw.dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	}
	o->function = dup_or_null(fn, oom);
	if (file && line > 0) {
		o->file = dup_or_null(file, oom);
		o->line = o->file ? (uint32_t)line : 0;
	}
}

/*
 * Does the file agree with what the recorder saw in the process?  dladdr
 * names the nearest dynamic symbol at or before a pc, which need not be
 * the function the pc is in, but that symbol does start where it said:
 * the file must have a symbol of that name there.  0 no.
 */
static int agrees(Dwfl_Module *mod, Dwarf_Addr at0, const struct ga_sym_module *m)
{
	int nsym = dw.dwfl_module_getsymtab(mod), j;
	size_t i, checked = 0;

	for (i = 0; i < m->nknown && checked < 16; i++) {
		const struct ga_sym_known *k = &m->known[i];
		Dwarf_Addr want;
		int found = 0;

		if (!k->function || !*k->function || k->offset < k->sym_offset)
			continue;
		checked++;
		want = at0 + k->offset - k->sym_offset;
		for (j = 1; j < nsym && !found; j++) {
			GElf_Sym sym;
			GElf_Addr addr;
			const char *fn = dw.dwfl_module_getsym_info(mod, j, &sym, &addr, NULL, NULL, NULL);
			size_t len = fn ? strcspn(fn, "@") : 0;

			found = fn && addr == want && strlen(k->function) == len &&
				!memcmp(fn, k->function, len);
		}
		if (!found)
			return 0;
	}
	return 1;
}

int ga_symbolize_module(const struct ga_sym_module *m, const char *symbol_path,
			const uint64_t *offsets, size_t n, struct ga_symbolize_line *out,
			int *verdict, char *why, size_t whylen)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = no_elf,
		.find_debuginfo = give_debuginfo,
	};
	Dwfl_Callbacks cbs = cb;
	struct search s = { .mod = m };
	char used[PATH_MAX + 160] = "", idhex[2 * GP_BUILD_ID_MAX + 1];
	Dwfl *dwfl = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr dwbias = 0;
	uint64_t vbias;
	int elf_fd = -1, dbg_fd = -1, main_fd, oom = 0;
	size_t i;

	memset(out, 0, n * sizeof(*out));
	if (whylen)
		why[0] = '\0';
	*verdict = GA_SYM_NONE;
	if (!m->legacy && !m->recorded) {
		*verdict = GA_SYM_NO_RECORD;
		snprintf(why, whylen, "the trace names no file for it");
		return 0;
	}
	if (!m->legacy && !m->nid) {
		*verdict = GA_SYM_NO_BUILD_ID;
		snprintf(why, whylen, "it had no build-id when recorded");
		return 0;
	}
	if (!dw_load()) {
		*verdict = GA_SYM_NO_LIBDW;
		snprintf(why, whylen, "libdw.so.1 (elfutils) could not be loaded");
		return 0;
	}
	if (m->legacy) {
		const char *p = m->path ? m->path : m->name;

		if ((elf_fd = ga_symbolize_open(p)) < 0) {
			*verdict = GA_SYM_UNREADABLE;
			snprintf(why, whylen, "%s is not a regular file here", p);
			return 0;
		}
		snprintf(used, sizeof(used), "%s", p);
	} else {
		find_files(&s, symbol_path, &elf_fd, &dbg_fd, used, sizeof(used));
		if (elf_fd < 0 && dbg_fd < 0) {
			*verdict = GA_SYM_NOT_FOUND;
			hex(idhex, sizeof(idhex), m->build_id, m->nid);
			if (s.other)
				snprintf(why, whylen, "%s is another build (no file with build-id %s)",
					 s.seen, idhex);
			else
				snprintf(why, whylen, "no file with build-id %s", idhex);
			return 0;
		}
	}
	main_fd = elf_fd >= 0 ? elf_fd : dbg_fd;
	if (load_bias(main_fd, &vbias)) {
		*verdict = m->legacy ? GA_SYM_UNREADABLE : GA_SYM_NOT_FOUND;
		snprintf(why, whylen, "%s is no ELF program or library", used);
		goto out;
	}
	cur_debug_fd = elf_fd >= 0 ? dbg_fd : -1;
	cbs.section_address = dw.dwfl_offline_section_address;
	if (!(dwfl = dw.dwfl_begin(&cbs))) {
		oom = 1;
		goto out;
	}
	dw.dwfl_report_begin(dwfl);
	/* libdw owns the descriptor it is given. */
	mod = dw.dwfl_report_elf(dwfl, m->name, used, fcntl(main_fd, F_DUPFD_CLOEXEC, 0), 0, false);
	dw.dwfl_report_end(dwfl, NULL, NULL);
	if (!mod || !dw.dwfl_module_getelf(mod, &dwbias)) {
		*verdict = m->legacy ? GA_SYM_UNREADABLE : GA_SYM_NOT_FOUND;
		snprintf(why, whylen, "libdw cannot read %s", used);
		goto out;
	}
	if (m->legacy && !agrees(mod, dwbias + vbias, m)) {
		*verdict = GA_SYM_CONTRADICTED;
		snprintf(why, whylen,
			 "%s is not the file that ran (its symbols contradict names the recorder saw)",
			 used);
		goto out;
	}
	*verdict = m->legacy ? GA_SYM_UNVERIFIED : GA_SYM_PROVEN;
	snprintf(why, whylen, "%s", used);
	for (i = 0; i < n && !oom; i++)
		if (offsets[i])
			lookup(mod, dwbias + vbias + offsets[i] - 1, &out[i], &oom);
out:
	if (dwfl)
		dw.dwfl_end(dwfl);
	cur_debug_fd = -1;
	if (elf_fd >= 0)
		close(elf_fd);
	if (dbg_fd >= 0)
		close(dbg_fd);
	if (oom) {
		ga_symbolize_free(out, n);
		return -1;
	}
	return 0;
}
