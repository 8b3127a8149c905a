/*
 * Unit tests of the metrics cache (cupti/mcache.c): kernel names found in
 * module images, keys, values stored and read back, misses on any part of
 * the key changing, bad files ignored and rewritten, symbolic links never
 * followed, several processes writing the same entries.  Test code, runs
 * offline only, needs no GPU.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../cupti/mcache.h"
#include "tap.h"

#define NV 5

static char dir[96];

/* An ELF64 image whose symbol table defines the given functions. */
static size_t make_image(unsigned char *buf, size_t cap, const char *const *funcs, int n,
			 unsigned salt)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh[3];
	char strtab[512];
	Elf64_Sym syms[8];
	size_t slen = 1, off;

	memset(buf, 0, cap);
	memset(&eh, 0, sizeof(eh));
	memset(sh, 0, sizeof(sh));
	memset(syms, 0, sizeof(syms));
	strtab[0] = 0;
	for (int i = 0; i < n; i++) {
		syms[i + 1].st_name = (uint32_t)slen;
		syms[i + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		strcpy(strtab + slen, funcs[i]);
		slen += strlen(funcs[i]) + 1;
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	off = sizeof(eh);
	memcpy(buf + off, syms, sizeof(Elf64_Sym) * (size_t)(n + 1));
	sh[1].sh_type = SHT_SYMTAB;
	sh[1].sh_offset = off;
	sh[1].sh_size = sizeof(Elf64_Sym) * (size_t)(n + 1);
	sh[1].sh_link = 2;
	off += sh[1].sh_size;
	memcpy(buf + off, strtab, slen);
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = off;
	sh[2].sh_size = slen;
	off += slen;
	memcpy(buf + off, &salt, sizeof(salt)); /* the "code": differs per salt */
	off += sizeof(salt);
	off = (off + 7) & ~(size_t)7;
	eh.e_shoff = off;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + off, sh, sizeof(sh));
	return off + sizeof(sh);
}

static const uint32_t block[3] = { 256, 1, 1 };

static int key(struct gp_mcache_key *k, const char *kernel, uint32_t gx, uint64_t set)
{
	uint32_t g[3] = { gx, 1, 1 };

	return gp_mcache_key(k, "NVIDIA H100 80GB HBM3", "GH100", kernel, g, block, 0, set);
}

static int count_files(const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), s = strlen(suffix);

		if (l >= s && !strcmp(e->d_name + l - s, suffix))
			n++;
	}
	closedir(d);
	return n;
}

static void path_of(const struct gp_mcache_key *k, char *out, size_t n)
{
	snprintf(out, n, "%s/%016llx.gpm", dir, (unsigned long long)k->hash);
}

static void test_keys(void)
{
	static const char *const a[] = { "kern_a", "shared_k" }, *const b[] = { "kern_b", "shared_k" };
	unsigned char img[4096];
	struct gp_mcache_key k1, k2;

	tap_begin("kernel names map to the hash of the image that defines them");
	CHECK(key(&k1, "kern_a", 528, 1) == 1 && k1.module == 0); /* no image seen yet */
	gp_mcache_module_loaded(img, make_image(img, sizeof(img), a, 2, 1));
	CHECK(key(&k1, "kern_a", 528, 1) == 0);
	CHECK(key(&k1, "kern_b", 528, 1) == 1);
	gp_mcache_module_loaded(img, make_image(img, sizeof(img), b, 2, 2));
	CHECK(key(&k2, "kern_b", 528, 1) == 0);
	/* The same image loaded again (a second context) changes nothing. */
	gp_mcache_module_loaded(img, make_image(img, sizeof(img), b, 2, 2));
	CHECK(key(&k2, "kern_b", 528, 1) == 0);
	/* Defined by two different images: never cached. */
	CHECK(key(&k1, "shared_k", 528, 1) == -1);
	/* Not an ELF image: ignored. */
	memset(img, 0x5a, 256);
	gp_mcache_module_loaded(img, 256);
	CHECK(key(&k1, "kern_a", 528, 1) == 0);
	/* Every part of the key counts. */
	CHECK(key(&k1, "kern_a", 528, 1) == 0 && key(&k2, "kern_a", 529, 1) == 0);
	CHECK(k1.hash != k2.hash);
	CHECK(key(&k2, "kern_a", 528, 2) == 0 && k1.hash != k2.hash);
	CHECKF(strstr(k1.text, "gpu=NVIDIA H100 80GB HBM3\n") && strstr(k1.text, "kernel=kern_a\n") &&
	       strstr(k1.text, "grid=528,1,1\n") && strstr(k1.text, "driver=") &&
	       strstr(k1.text, "cupti=13001\n") && !strstr(k1.text, "module="),
	       "key %s", k1.text);
	tap_end();
}

static void test_roundtrip(void)
{
	double v[NV] = { 1.5, 16777216000.0, 0, 1e300, 137438953472.0 }, got[NV];
	uint64_t dur = 0, mod = 0;
	uint32_t passes = 0;
	struct gp_mcache_key k, k2;

	tap_begin("values stored and read back; other keys miss");
	CHECK(key(&k, "kern_a", 528, 7) == 0);
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 0);
	gp_mcache_put(&k, v, NV, 545000, 3);
	CHECK(count_files(".gpm") >= 1 && count_files(".tmp") == 0);
	memset(got, 0, sizeof(got));
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 1);
	CHECK(!memcmp(got, v, sizeof(v)) && dur == 545000 && passes == 3);
	CHECK(key(&k2, "kern_a", 264, 7) == 0);
	CHECK(gp_mcache_get(&k2, got, NV, &dur, &passes, &mod) == 0);
	CHECK(key(&k2, "kern_b", 528, 7) == 0);
	CHECK(gp_mcache_get(&k2, got, NV, &dur, &passes, &mod) == 0);
	/* Another number of values for the same key: refused. */
	CHECK(gp_mcache_get(&k, got, NV - 1, &dur, &passes, &mod) == 0);
	/*
	 * Before its module is reported: the values come with the module they
	 * were measured with, for the caller to confirm; another module misses.
	 */
	{
		uint64_t m = k.module;

		k.module = 0;
		CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 1 && mod == m);
		k.module = m ^ 0x5555;
		CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 0);
		k.module = 0;
		gp_mcache_put(&k, v, NV, 1, 1); /* not stored without its module */
		k.module = m;
		CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 1 && dur == 545000);
		CHECK(gp_mcache_module(k.name) == m);
	}
	tap_end();
}

static void test_bad_files(void)
{
	double v[NV] = { 1, 2, 3, 4, 5 }, got[NV];
	uint64_t dur, mod;
	uint32_t passes;
	struct gp_mcache_key k;
	char p[256], target[256];
	unsigned char byte;
	int fd;
	struct stat st;

	tap_begin("damaged files are ignored and rewritten; links are not followed");
	CHECK(key(&k, "kern_b", 1, 9) == 0);
	gp_mcache_put(&k, v, NV, 10, 2);
	path_of(&k, p, sizeof(p));
	/* One byte of a value flipped. */
	fd = open(p, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pread(fd, &byte, 1, 40) == 1);
	byte ^= 0x40;
	CHECK(pwrite(fd, &byte, 1, 40) == 1);
	close(fd);
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 0);
	gp_mcache_put(&k, v, NV, 10, 2);
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 1 && got[4] == 5);
	/* Truncated. */
	CHECK(truncate(p, 20) == 0);
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 0);
	/* Not ours at all. */
	fd = open(p, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "hello world, no cache file here....", 35) == 35);
	close(fd);
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 0);
	/* A symbolic link in its place, to a valid entry elsewhere: not read, and replaced. */
	gp_mcache_put(&k, v, NV, 10, 2);
	snprintf(target, sizeof(target), "%s/../target.gpm", dir);
	CHECK(rename(p, target) == 0);
	CHECK(symlink(target, p) == 0);
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 0);
	v[0] = 42;
	gp_mcache_put(&k, v, NV, 10, 2);
	CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode));
	CHECK(stat(target, &st) == 0 && st.st_size == 40 + (off_t)k.len + NV * 8);
	{
		/* The link's target still holds the old values. */
		double first;

		fd = open(target, O_RDONLY);
		CHECK(fd >= 0 && pread(fd, &first, 8, 40 + (off_t)k.len) == 8 && first == 1);
		close(fd);
	}
	CHECK(gp_mcache_get(&k, got, NV, &dur, &passes, &mod) == 1 && got[0] == 42);
	unlink(target);
	tap_end();
}

static void test_processes(void)
{
	enum { PROCS = 4, ROUNDS = 300 };
	pid_t pids[PROCS];
	int ok = 1;

	tap_begin("several processes writing and reading the same entries");
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int bad = 0;

			for (int r = 0; r < ROUNDS; r++) {
				struct gp_mcache_key k;
				double v[NV], got[NV];
				uint64_t dur, mod;
				uint32_t passes;
				uint32_t g = (uint32_t)(r % 3) + 100;

				for (int j = 0; j < NV; j++)
					v[j] = g * 1000.0 + j;
				if (key(&k, "kern_a", g, 11) < 0)
					_exit(2);
				gp_mcache_put(&k, v, NV, g, 2);
				if (gp_mcache_get(&k, got, NV, &dur, &passes, &mod) != 1 ||
				    memcmp(got, v, sizeof(v)) || dur != g)
					bad++;
			}
			_exit(bad ? 1 : 0);
		}
	}
	for (int i = 0; i < PROCS; i++) {
		int st = 0;

		if (pids[i] < 0 || waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			ok = 0;
	}
	CHECK(ok);
	CHECKF(count_files(".tmp") == 0, "%d temporary files left", count_files(".tmp"));
	tap_end();
}

int main(void)
{
	char sub[160];

	snprintf(dir, sizeof(dir), "/tmp/gp-mcache-%ld", (long)getpid());
	snprintf(sub, sizeof(sub), "%s/cache/metrics", dir);
	tap_begin("the cache directory is created with its parents");
	CHECK(gp_mcache_open(sub, 13001, 13000) == 0);
	CHECK(gp_mcache_on());
	tap_end();
	strcpy(dir, sub);
	test_keys();
	test_roundtrip();
	test_bad_files();
	test_processes();
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf /tmp/gp-mcache-%ld", (long)getpid());
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove the test directory\n");
	}
	return tap_exit();
}
