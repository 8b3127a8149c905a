/*
 * Offline symbolization with addr2line (see symbolize.h).  Runs offline
 * only, in the analyzer.
 *
 * addr2line reads its addresses from a temporary file rather than a pipe:
 * it writes as it reads, so feeding and draining it through two pipes
 * would need both at once to avoid a deadlock.  It runs without a shell
 * (posix_spawnp), so module paths need no quoting.
 */
#include "model/symbolize.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

extern char **environ;

void ga_symbolize_free(struct ga_symbolize_line *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(out[i].function);
		free(out[i].file);
		memset(&out[i], 0, sizeof(out[i]));
	}
}

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t r = pread(fd, buf, n, (off_t)off);

	return r == (ssize_t)n ? 0 : -1;
}

/*
 * What to add to an offset from the load base to get the address the
 * module's symbols and line tables use: the load base is the start of the
 * first mapping (dladdr's dli_fbase), the first PT_LOAD segment's address
 * rounded down to a page, which is 0 for shared libraries and
 * position-independent executables.  -1 when path is no ELF file of this
 * machine's byte order that a process can map.
 */
static int load_bias(const char *path, uint64_t *bias)
{
	union {
		unsigned char ident[EI_NIDENT];
		Elf32_Ehdr e32;
		Elf64_Ehdr e64;
	} h;
	const uint16_t one = 1;
	uint64_t phoff, vaddr = UINT64_MAX;
	unsigned phnum, phsize, i, type;
	int fd, le = *(const unsigned char *)&one == 1, is64, rc = -1;
	long page = sysconf(_SC_PAGESIZE);
	struct stat sb;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || read_at(fd, &h, sizeof(h.ident), 0) ||
	    memcmp(h.ident, ELFMAG, SELFMAG) != 0 ||
	    h.ident[EI_DATA] != (le ? ELFDATA2LSB : ELFDATA2MSB) ||
	    (h.ident[EI_CLASS] != ELFCLASS32 && h.ident[EI_CLASS] != ELFCLASS64))
		goto out;
	is64 = h.ident[EI_CLASS] == ELFCLASS64;
	if (read_at(fd, &h, is64 ? sizeof(h.e64) : sizeof(h.e32), 0))
		goto out;
	type = is64 ? h.e64.e_type : h.e32.e_type;
	phoff = is64 ? h.e64.e_phoff : h.e32.e_phoff;
	phnum = is64 ? h.e64.e_phnum : h.e32.e_phnum;
	phsize = is64 ? h.e64.e_phentsize : h.e32.e_phentsize;
	if ((type != ET_EXEC && type != ET_DYN) ||
	    phsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		goto out;
	for (i = 0; i < phnum && i < 4096; i++) {
		Elf64_Phdr p64;
		Elf32_Phdr p32;
		uint64_t at = phoff + (uint64_t)i * phsize;

		if (is64 ? read_at(fd, &p64, sizeof(p64), at) : read_at(fd, &p32, sizeof(p32), at))
			goto out;
		if ((is64 ? p64.p_type : p32.p_type) == PT_LOAD) {
			vaddr = is64 ? p64.p_vaddr : p32.p_vaddr;
			break;             /* PT_LOAD entries come in address order */
		}
	}
	if (vaddr == UINT64_MAX)
		goto out;
	*bias = page > 0 ? vaddr & ~((uint64_t)page - 1) : vaddr;
	rc = 0;
out:
	close(fd);
	return rc;
}

/* A temporary file, already unlinked, holding the addresses; -1 on failure. */
static int address_file(const uint64_t *offsets, size_t n, uint64_t bias, int *oom)
{
	const char *dir = getenv("TMPDIR");
	struct ga_buf b = { 0 };
	size_t i, done = 0;
	int fd;

	for (i = 0; i < n; i++)
		if (offsets[i] && ga_buf_printf(&b, "0x%" PRIx64 "\n", bias + offsets[i] - 1)) {
			*oom = 1;
			ga_buf_free(&b);
			return -1;
		}
	if (ga_buf_printf(&b, "%s/gpuprof-addr.XXXXXX", dir && *dir ? dir : "/tmp")) {
		*oom = 1;
		ga_buf_free(&b);
		return -1;
	}
	/* The template sits after the addresses in the same buffer. */
	for (i = b.len; i > 0 && b.p[i - 1] != '\n'; i--)
		;
	fd = mkostemp(b.p + i, O_CLOEXEC);
	if (fd >= 0) {
		unlink(b.p + i);
		while (done < i) {
			ssize_t w = write(fd, b.p + done, i - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			done += (size_t)w;
		}
		if (done < i || lseek(fd, 0, SEEK_SET) != 0) {
			close(fd);
			fd = -1;
		}
	}
	ga_buf_free(&b);
	return fd;
}

/* Run addr2line on path with stdin in; its whole output into *b.  0, or -1. */
static int run_addr2line(const char *path, int in, struct ga_buf *b, int *oom)
{
	char *argv[] = { "addr2line", "-e", (char *)path, "-f", "-i", "-a", NULL };
	posix_spawn_file_actions_t fa;
	char chunk[65536];
	int p[2], status, rc = -1;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	if (posix_spawn_file_actions_init(&fa)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (posix_spawn_file_actions_adddup2(&fa, in, 0) ||
	    posix_spawn_file_actions_adddup2(&fa, p[1], 1) ||
	    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) ||
	    posix_spawnp(&pid, "addr2line", &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	for (;;) {
		ssize_t r = read(p[0], chunk, sizeof(chunk));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (!*oom && ga_buf_put(b, chunk, (size_t)r))
			*oom = 1;          /* drain it all the same, then wait */
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !*oom)
		rc = 0;
	return rc;
}

/* Next line of s (NUL-terminated in place); NULL at the end. */
static char *next_line(char **s)
{
	char *l = *s, *nl;

	if (!l || !*l)
		return NULL;
	nl = strchr(l, '\n');
	if (nl) {
		*nl = '\0';
		*s = nl + 1;
	} else {
		*s = l + strlen(l);
	}
	return l;
}

/* "file:line", maybe followed by " (discriminator N)"; "??:0", "file:?" unknown. */
static int parse_location(const char *loc, struct ga_symbolize_line *o)
{
	const char *colon, *end = strstr(loc, " (discriminator ");
	size_t flen;
	unsigned long line;
	char *stop;

	if (!end)
		end = loc + strlen(loc);
	for (colon = end; colon > loc && colon[-1] != ':'; colon--)
		;
	if (colon == loc || colon == end)
		return 0;
	line = strtoul(colon, &stop, 10);
	flen = (size_t)(colon - 1 - loc);
	if (stop != end || !line || line > UINT32_MAX || !flen ||
	    (flen == 2 && memcmp(loc, "??", 2) == 0))
		return 0;
	o->file = strndup(loc, flen);
	if (!o->file)
		return -1;
	o->line = (uint32_t)line;
	return 0;
}

/*
 * Per address written: "0x<address>", then function ("??" unknown) and
 * location pairs: with -i, one per level of inlining, innermost first.  The
 * last pair is the function the address is really in (a launch stub inlined
 * into its caller is reported at the caller's line, not the stub's).  Stops
 * at the first block that does not fit.  0, or -1 out of memory.
 */
static int parse(char *text, const uint64_t *offsets, size_t n, uint64_t bias,
		 struct ga_symbolize_line *out)
{
	char *s = text, *l, *fn, *loc, *stop;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!offsets[i])
			continue;
		while ((l = next_line(&s)) && !*l)
			;
		fn = next_line(&s);
		loc = next_line(&s);
		if (!l || !fn || !loc || strncmp(l, "0x", 2) != 0 ||
		    strtoull(l + 2, &stop, 16) != bias + offsets[i] - 1 || *stop)
			return 0;
		/* Outer levels of inlining, up to the next address. */
		while (*s && strncmp(s, "0x", 2) != 0) {
			char *f2 = next_line(&s), *l2 = next_line(&s);

			if (!f2 || !l2)
				break;
			fn = f2;
			loc = l2;
		}
		if (strcmp(fn, "??") != 0 && *fn && !(out[i].function = strdup(fn)))
			return -1;
		if (parse_location(loc, &out[i]))
			return -1;
	}
	return 0;
}

int ga_symbolize_run(const char *path, const uint64_t *offsets, size_t n,
		     struct ga_symbolize_line *out)
{
	struct ga_buf b = { 0 };
	uint64_t bias;
	size_t i;
	int in, oom = 0, rc;

	memset(out, 0, n * sizeof(*out));
	for (i = 0; i < n && !offsets[i]; i++)
		;
	if (i == n || load_bias(path, &bias))
		return 0;
	in = address_file(offsets, n, bias, &oom);
	if (in < 0)
		return oom ? -1 : 0;
	rc = run_addr2line(path, in, &b, &oom);
	close(in);
	if (!rc && b.len)
		rc = parse(b.p, offsets, n, bias, out);
	else
		rc = 0;
	ga_buf_free(&b);
	return oom || rc ? -1 : 0;
}
