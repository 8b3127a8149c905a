/*
 * The metrics cache (see mcache.h).
 *
 * One file per key, named by the key's 64-bit hash ("<16 hex>.gpm"):
 *
 *   0   char[8]  "GPMETRC2"
 *   8   u32      CRC-32C of bytes 12 .. end
 *   12  u32      key length
 *   16  u32      number of values
 *   20  u32      replay passes of the run that measured them
 *   24  u64      gpu__time_duration of that launch, ns
 *   32  u64      hash of the module image the kernel came from
 *   40  key bytes, then the values (binary64, little-endian)
 *
 * The key (all but the module) is stored in full, so a hash collision is
 * a miss, never wrong values.  Kernel names map to module hashes through the symbol tables of
 * the module images (ELF cubins) CUPTI hands to the module-loaded
 * callback; a name defined by two different images is never cached.
 */
#include "mcache.h"

#include "../preload/log.h"

#include <gpuprof/crc32c.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "GPMETRC2"
#define HDR 40
#define MAX_VALUES 256
#define MAX_BAD_LOGS 8

static int dfd = -1;
static char dir_path[4096];
static char driver[64];
static uint32_t cupti_ver;
static int bad_logs, write_logged;
static uint32_t tmp_seq;

/* Kernel name hash -> module image hash; 0 module: defined by two images. */
struct name_ent {
	uint64_t name, module;
};
static struct name_ent *names;
static size_t names_cap, names_used;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static uint64_t fmix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

uint64_t gp_mcache_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w;

	h ^= (uint64_t)n * 0x9e3779b97f4a7c15ull;
	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		w *= 0x87c37b91114253d5ull;
		h ^= rotl(w, 31) * 0x4cf5ad432745937full;
		h = rotl(h, 27) * 5 + 0x52dce729;
	}
	w = 0;
	memcpy(&w, b, n);
	h ^= rotl(w * 0x87c37b91114253d5ull, 31);
	return fmix(h);
}

/* ---- module images ---- */

static int names_grow(void)
{
	size_t cap = names_cap ? names_cap * 2 : 4096;
	struct name_ent *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < names_cap; i++) {
		size_t at;

		if (!names[i].name)
			continue;
		for (at = names[i].name & (cap - 1); t[at].name; at = (at + 1) & (cap - 1))
			;
		t[at] = names[i];
	}
	free(names);
	names = t;
	names_cap = cap;
	return 0;
}

/* names_lock held. */
static void name_add(uint64_t name, uint64_t module)
{
	size_t at;

	if (!name)
		name = 1;
	if ((names_used + 1) * 2 > names_cap && names_grow() < 0)
		return;
	for (at = name & (names_cap - 1); names[at].name; at = (at + 1) & (names_cap - 1))
		if (names[at].name == name) {
			if (names[at].module != module)
				names[at].module = GP_MCACHE_AMBIGUOUS; /* two images define it */
			return;
		}
	names[at].name = name;
	names[at].module = module;
	names_used++;
}

uint64_t gp_mcache_module(uint64_t name)
{
	uint64_t module = 0;

	pthread_mutex_lock(&names_lock);
	if (names_cap)
		for (size_t at = name & (names_cap - 1); names[at].name; at = (at + 1) & (names_cap - 1))
			if (names[at].name == name) {
				module = names[at].module;
				break;
			}
	pthread_mutex_unlock(&names_lock);
	return module;
}

static uint64_t name_hash(const char *kernel)
{
	uint64_t name = gp_mcache_hash(0, kernel, strlen(kernel));

	return name ? name : 1;
}

void gp_mcache_module_loaded(const void *image, size_t size)
{
	const unsigned char *b = image;
	Elf64_Ehdr eh;
	uint64_t module;

	if (dfd < 0 || !image || size < sizeof(eh))
		return;
	memcpy(&eh, b, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
	    (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum) {
		gp_debug("metrics cache: a module image that is no ELF cubin (%zu bytes)", size);
		return;
	}
	module = gp_mcache_hash(0, image, size);
	if (!module || module == GP_MCACHE_AMBIGUOUS)
		module = 1;
	pthread_mutex_lock(&names_lock);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, st;

		memcpy(&sh, b + eh.e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum ||
		    sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			continue;
		memcpy(&st, b + eh.e_shoff + (size_t)sh.sh_link * sizeof(st), sizeof(st));
		if (st.sh_offset > size || st.sh_size > size - st.sh_offset)
			continue;
		for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			const char *name;
			size_t max;

			memcpy(&sym, b + sh.sh_offset + off, sizeof(sym));
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= st.sh_size)
				continue;
			name = (const char *)b + st.sh_offset + sym.st_name;
			max = st.sh_size - sym.st_name;
			if (!memchr(name, 0, max) || !*name)
				continue;
			name_add(name_hash(name), module);
		}
	}
	pthread_mutex_unlock(&names_lock);
}

/* ---- the directory ---- */

static void read_driver(int cuda_version)
{
	char buf[1024];
	const char *p;
	ssize_t n = -1;
	int fd = open("/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = 0;
		if ((p = strstr(buf, "Kernel Module"))) {
			size_t len;

			p += strlen("Kernel Module");
			while (*p == ' ' || *p == '\t')
				p++;
			len = strcspn(p, " \t\n");
			if (len && len < sizeof(driver)) {
				memcpy(driver, p, len);
				driver[len] = 0;
				return;
			}
		}
	}
	snprintf(driver, sizeof(driver), "cuda%d", cuda_version);
}

static int mkdirs(char *path)
{
	struct stat st;

	if (!stat(path, &st))
		return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int gp_mcache_open(const char *dir, uint32_t cupti_version, int cuda_version)
{
	char path[sizeof(dir_path)];

	if (!dir || !dir[0])
		return -1;
	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		gp_log("metrics cache %s: path too long; not used", dir);
		return -1;
	}
	if (mkdirs(path) < 0 ||
	    (dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		gp_log("metrics cache %s: %s; not used (kernels are replayed)", dir, strerror(errno));
		return -1;
	}
	memcpy(dir_path, path, sizeof(path));
	cupti_ver = cupti_version;
	read_driver(cuda_version);
	gp_debug("metrics cache %s: driver %s, CUPTI %u", dir_path, driver, cupti_ver);
	return 0;
}

int gp_mcache_on(void)
{
	return dfd >= 0;
}

/* ---- entries ---- */

int gp_mcache_key(struct gp_mcache_key *k, const char *gpu, const char *chip,
		  const char *kernel, const uint32_t grid[3], const uint32_t block[3],
		  uint32_t smem, uint64_t set_hash)
{
	int n;

	if (dfd < 0 || !kernel)
		return -1;
	k->name = name_hash(kernel);
	k->module = gp_mcache_module(k->name);
	if (k->module == GP_MCACHE_AMBIGUOUS)
		return -1;
	n = snprintf(k->text, sizeof(k->text),
		     "gpu=%s\nchip=%s\ndriver=%s\ncupti=%u\nkernel=%s\n"
		     "grid=%u,%u,%u\nblock=%u,%u,%u\nsmem=%u\nset=%016llx\n",
		     gpu, chip, driver, cupti_ver, kernel, grid[0], grid[1], grid[2], block[0],
		     block[1], block[2], smem, (unsigned long long)set_hash);
	if (n < 0 || n >= (int)sizeof(k->text))
		return -1;
	k->len = (size_t)n;
	k->hash = gp_mcache_hash(0x6770726f66ull, k->text, k->len);
	return k->module ? 0 : 1;
}

static void file_name(const struct gp_mcache_key *k, char *out, size_t size)
{
	snprintf(out, size, "%016llx.gpm", (unsigned long long)k->hash);
}

static void bad_file(const char *name, const char *why)
{
	if (bad_logs >= MAX_BAD_LOGS)
		return;
	bad_logs++;
	gp_log("metrics cache: ignoring %s/%s: %s%s", dir_path, name, why,
	       bad_logs == MAX_BAD_LOGS ? " (further bad files are ignored silently)" : "");
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int gp_mcache_get(const struct gp_mcache_key *k, double *values, size_t n,
		  uint64_t *duration, uint32_t *passes, uint64_t *module)
{
	char name[32];
	unsigned char *buf;
	struct stat st;
	size_t size, want = HDR + k->len + n * sizeof(double), got = 0;
	int fd, hit = 0;

	if (dfd < 0 || n > MAX_VALUES)
		return 0;
	file_name(k, name, sizeof(name));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			bad_file(name, "a symbolic link");
		else if (errno != ENOENT)
			bad_file(name, strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		bad_file(name, "not a regular file");
		close(fd);
		return 0;
	}
	size = (size_t)st.st_size;
	if (size > HDR + GP_MCACHE_KEY_MAX + MAX_VALUES * sizeof(double) || size < HDR) {
		bad_file(name, "wrong size");
		close(fd);
		return 0;
	}
	if (!(buf = malloc(size))) {
		close(fd);
		return 0;
	}
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (got != size || memcmp(buf, MAGIC, 8))
		bad_file(name, got != size ? "short read" : "not a gpuprof metrics cache file");
	else if (get32(buf + 8) != gp_crc32c(0, buf + 12, size - 12))
		bad_file(name, "checksum mismatch (damaged or partly written)");
	else if (get32(buf + 12) != size - HDR - (size_t)get32(buf + 16) * sizeof(double) ||
		 get32(buf + 16) > MAX_VALUES)
		bad_file(name, "inconsistent sizes");
	else if (get32(buf + 12) != k->len || memcmp(buf + HDR, k->text, k->len))
		; /* another key with the same hash: a miss */
	else if (size != want)
		bad_file(name, "wrong number of values for its metric set");
	else {
		memcpy(module, buf + 32, 8);
		if (!k->module || *module == k->module) {
			*passes = get32(buf + 20);
			memcpy(duration, buf + 24, 8);
			memcpy(values, buf + HDR + k->len, n * sizeof(double));
			hit = 1;
		}
	}
	free(buf);
	return hit;
}

void gp_mcache_put(const struct gp_mcache_key *k, const double *values, size_t n,
		   uint64_t duration, uint32_t passes)
{
	char name[32], tmp[96];
	size_t size = HDR + k->len + n * sizeof(double), done = 0;
	unsigned char *buf;
	uint32_t v, crc;
	int fd, err = 0;

	if (dfd < 0 || !k->module || n > MAX_VALUES || !(buf = malloc(size)))
		return;
	memcpy(buf, MAGIC, 8);
	v = (uint32_t)k->len;
	memcpy(buf + 12, &v, 4);
	v = (uint32_t)n;
	memcpy(buf + 16, &v, 4);
	memcpy(buf + 20, &passes, 4);
	memcpy(buf + 24, &duration, 8);
	memcpy(buf + 32, &k->module, 8);
	memcpy(buf + HDR, k->text, k->len);
	memcpy(buf + HDR + k->len, values, n * sizeof(double));
	crc = gp_crc32c(0, buf + 12, size - 12);
	memcpy(buf + 8, &crc, 4);
	file_name(k, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%016llx.%ld.%u.tmp", (unsigned long long)k->hash,
		 (long)getpid(), tmp_seq++);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = errno;
	} else {
		while (done < size) {
			ssize_t w = write(fd, buf + done, size - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				err = w < 0 ? errno : EIO;
				break;
			}
			done += (size_t)w;
		}
		if (close(fd) < 0 && !err)
			err = errno;
		/* rename replaces the name itself, never what a link there points to. */
		if (!err && renameat(dfd, tmp, dfd, name) < 0)
			err = errno;
		if (err)
			unlinkat(dfd, tmp, 0);
	}
	free(buf);
	if (err && !write_logged) {
		write_logged = 1;
		gp_log("metrics cache %s: cannot write (%s); values are not cached", dir_path,
		       strerror(err));
	}
}
