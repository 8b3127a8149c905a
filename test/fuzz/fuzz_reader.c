/*
 * libFuzzer target for everything the analyzer does with a trace: the
 * reader (header, chunks, checksums, salvage, the threaded decoder for
 * inputs of 512 KiB and more), the model, and the views (report, its
 * timeline, and the json, csv, chrome, sqlite and perfetto exports, and
 * chrome under a filter).  `make fuzz` builds it
 * with clang and runs it (FUZZ_SECONDS, corpus seeded from test/golden/);
 * test/unit/test_fuzz_smoke.c runs it over the golden traces and
 * deterministic mutations of them in every `make test`.
 *
 * Inputs that start with the trace magic are files as they are.  Others
 * are record payloads (random bytes rarely get past a chunk's checksum):
 * the target wraps them in a valid header and a compressed, checksummed
 * chunk, repeated past 512 KiB when the first byte's bit 1 is set.  The
 * first byte's bits 2-4 pick the view.  Offline test code.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "gpuprof/trace.h"
#include "cmd/cmd.h"
#include "fuzz_quiet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];
static char db_path[4096];         /* the sqlite export's output, removed after each run */

/* Runs one view on the file behind memfd_path, its output discarded. */
static void view(unsigned which)
{
	static char *argvs[][8] = {
		{ "report", memfd_path, NULL },
		{ "report", "--timeline", memfd_path, NULL },
		{ "export", "--format", "json", "-o", "/dev/null", NULL },
		{ "export", "--format", "csv", "-o", "/dev/null", NULL },
		{ "export", "--format", "chrome", "-o", "/dev/null", NULL },
		{ "export", "--format", "sqlite", "-o", db_path, NULL },
		{ "export", "--format", "perfetto", "-o", "/dev/null", NULL },
		/* A filter: each activity's ranges read from the spilled ranges' index. */
		{ "export", "--format", "chrome", "--nvtx", "a", "-o", "/dev/null", NULL },
	};
	char *argv[10];
	int argc = 0;

	which %= sizeof(argvs) / sizeof(argvs[0]);
	if (!db_path[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(db_path, sizeof(db_path), "%s/gpuprof-fuzz-%ld.sqlite",
			 t && *t ? t : "/tmp", (long)getpid());
	}
	while (argvs[which][argc])
		argv[argc] = argvs[which][argc], argc++;
	if (which >= 2)
		argv[argc++] = memfd_path;
	argv[argc] = NULL;
	fuzz_quiet(which < 2 ? cmd_report : cmd_export, argc, argv);
	unlink(db_path);
}

static void run(const void *buf, size_t len, unsigned which)
{
	if (memfd < 0) {
		memfd = memfd_create("fuzz-trace", 0);
		if (memfd < 0)
			return;
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) < 0 || pwrite(memfd, buf, len, 0) != (ssize_t)len)
		return;
	view(which);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_file_header h;
	struct gp_chunk_header ch;
	size_t raw, bound, clen, one, copies = 1, off;
	unsigned char *file, *frame;
	unsigned which = size ? (unsigned)data[size - 1] : 0;

	if (size >= 8 && !memcmp(data, GP_FILE_MAGIC, 8)) {
		run(data, size, which);
		return 0;
	}
	if (size == 0)
		return 0;
	which = (unsigned)data[0] >> 2;
	/* Payload mode: records must fill whole 8-byte units. */
	raw = (size - 1) & ~(size_t)7;
	if (raw > GP_CHUNK_RAW_MAX)
		raw = GP_CHUNK_RAW_MAX;
	bound = ZSTD_compressBound(raw);
	frame = malloc(bound);
	if (!frame)
		return 0;
	clen = ZSTD_compress(frame, bound, data + 1, raw, 1);
	if (ZSTD_isError(clen)) {
		free(frame);
		return 0;
	}
	one = sizeof(ch) + clen;
	if (data[0] & 2)
		copies = (600u << 10) / one + 1; /* past the threaded decoder's threshold */
	file = malloc(sizeof(h) + copies * one);
	if (!file) {
		free(frame);
		return 0;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GP_FILE_MAGIC, sizeof(h.magic));
	h.version = GP_FORMAT_VERSION;
	h.min_reader = GP_MIN_READER_VERSION;
	h.header_size = sizeof(h);
	h.endian = GP_ENDIAN_MARKER;
	memcpy(file, &h, sizeof(h));
	off = sizeof(h);
	for (size_t i = 0; i < copies; i++) {
		memset(&ch, 0, sizeof(ch));
		ch.magic = GP_CHUNK_MAGIC;
		ch.seq = (uint32_t)i;
		ch.comp_size = (uint32_t)clen;
		ch.raw_size = (uint32_t)raw;
		ch.checksum = gp_chunk_checksum(&ch, frame, clen);
		memcpy(file + off, &ch, sizeof(ch));
		memcpy(file + off + sizeof(ch), frame, clen);
		off += one;
	}
	run(file, off, which);
	free(file);
	free(frame);
	return 0;
}
