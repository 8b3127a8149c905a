/*
 * libFuzzer target for symbolization inputs (analyzer/model/symbolize.h):
 * the module file a trace points at is the input, in a memfd.  The target
 * reads its build-id, then looks offsets up in it twice: as a module
 * recorded with that build-id (so the file is proven and libdw reads it),
 * and as a module of a trace without build-ids checked against names the
 * recorder saw.  The input's last 16 bytes, when there are enough, give
 * two offsets and a symbol offset.  `make fuzz` builds it with clang and
 * runs it (FUZZ_SECONDS).  Offline test code.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpuprof/trace.h"
#include "model/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ga_symbolize_line out[3];
	struct ga_sym_known known = { 0 };
	struct ga_sym_module mod;
	uint8_t id[GP_BUILD_ID_MAX];
	uint64_t offs[3] = { 1, 0, 0 };
	char why[512];
	int n, verdict, fd;

	if (memfd < 0) {
		memfd = memfd_create("fuzz-module", MFD_CLOEXEC);
		if (memfd < 0)
			return 0;
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) || (size && pwrite(memfd, data, size, 0) != (ssize_t)size))
		return 0;
	if (size >= 16) {
		memcpy(&offs[1], data + size - 16, 8);
		memcpy(&offs[2], data + size - 8, 8);
		offs[1] &= 0xffffff;
		known.offset = offs[2] & 0xffffff;
		known.sym_offset = (uint32_t)(offs[2] >> 40) & 0xfff;
		offs[2] = known.offset;
	}
	fd = ga_symbolize_open(memfd_path);
	if (fd < 0)
		return 0;
	n = ga_symbolize_build_id(fd, id, sizeof(id));
	close(fd);

	memset(&mod, 0, sizeof(mod));
	mod.name = "fuzz.so";
	mod.path = memfd_path;
	mod.recorded = 1;
	mod.build_id = id;
	mod.nid = n > 0 && n <= GP_BUILD_ID_MAX ? (size_t)n : 0;
	if (!ga_symbolize_module(&mod, NULL, offs, 3, out, &verdict, why, sizeof(why)))
		ga_symbolize_free(out, 3);

	memset(&mod, 0, sizeof(mod));
	mod.name = memfd_path;
	mod.legacy = 1;
	known.function = "main";
	mod.known = &known;
	mod.nknown = 1;
	if (!ga_symbolize_module(&mod, NULL, offs, 3, out, &verdict, why, sizeof(why)))
		ga_symbolize_free(out, 3);
	return 0;
}
