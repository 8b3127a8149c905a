/*
 * libFuzzer target for summaries (gpuprof summarize's files, model/summary.h):
 * the reader (header, checksum, the bounded decompression, the decoder's
 * checks), the merge of two summaries, and what report, export -t json and
 * diff do with the result.  `make fuzz` builds it with clang and runs it
 * (FUZZ_SECONDS, corpus seeded from the summaries of the golden traces and
 * test/summary/v4-demo.sum, whole and as bodies).
 *
 * Inputs that start with the summary magic are files as they are: the last
 * byte picks the view.  Others are decompressed bodies (random bytes rarely
 * get past the checksum and zstd): the first byte's bit 0 picks version 4,
 * else its bit 7 version 5, else 6 (this one), its bits 1-7 the view; the
 * rest is compressed and given a valid header and checksum.  Every view
 * but one reads the input twice, as two files, so that the merge meets
 * two copies' counts and indices.  The views' output
 * and errors go to /dev/null: run it with -close_fd_mask=2 (as `make fuzz`
 * does) so that libFuzzer's and the sanitizers' reports go to the stderr
 * it started with.  Offline test code.
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

#include "gpuprof/crc32c.h"
#include "cmd/cmd.h"
#include "model/summary.h"
#include "fuzz_quiet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/*
 * Long names are demangled by a forked helper under a data limit
 * (model/demangle.c): an allocation failing there is its answer (no name),
 * which AddressSanitizer would otherwise report as a crash of the child,
 * leaving an artifact the parent never saw.
 */
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static int sum_fd[2] = { -1, -1 };
static char sum_path[2][64];

/* Runs one view on the two files, its output discarded. */
static void sum_view(unsigned which)
{
	static char *const argvs[][8] = {
		{ "report", sum_path[0], sum_path[1], NULL },
		{ "report", sum_path[0], NULL },
		{ "report", "--tree", sum_path[0], sum_path[1], NULL },
		{ "report", "--align", "nccl", sum_path[0], sum_path[1], NULL },
		{ "export", "--format", "json", "-o", "/dev/null", sum_path[0], sum_path[1], NULL },
		{ "diff", sum_path[0], sum_path[1], NULL },
		{ "diff", "--json", sum_path[0], sum_path[1], NULL },
	};
	int (*cmd)(int, char **) = cmd_diff;
	char *argv[8];
	int argc = 0;

	which %= sizeof(argvs) / sizeof(argvs[0]);
	while (argvs[which][argc])
		argv[argc] = argvs[which][argc], argc++;
	argv[argc] = NULL;
	if (!strcmp(argv[0], "report"))
		cmd = cmd_report;
	else if (!strcmp(argv[0], "export"))
		cmd = cmd_export;
	fuzz_quiet(cmd, argc, argv);
}

static void sum_run(const void *buf, size_t len, unsigned which)
{
	for (int i = 0; i < 2; i++) {
		if (sum_fd[i] < 0) {
			sum_fd[i] = memfd_create("fuzz-summary", 0);
			if (sum_fd[i] < 0)
				return;
			snprintf(sum_path[i], sizeof(sum_path[i]), "/proc/self/fd/%d", sum_fd[i]);
		}
		if (ftruncate(sum_fd[i], 0) < 0 || pwrite(sum_fd[i], buf, len, 0) != (ssize_t)len)
			return;
	}
	sum_view(which);
}

static void sum_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> 8 * i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t bound, clen, raw;
	unsigned char *file;

	if (size >= 8 && !memcmp(data, GA_SUM_MAGIC, 8)) {
		sum_run(data, size, data[size - 1]);
		return 0;
	}
	if (size == 0)
		return 0;
	raw = size - 1;
	bound = ZSTD_compressBound(raw);
	if (!(file = malloc(GA_SUM_HEADER_SIZE + bound)))
		return 0;
	clen = ZSTD_compress(file + GA_SUM_HEADER_SIZE, bound, data + 1, raw, 1);
	if (ZSTD_isError(clen)) {
		free(file);
		return 0;
	}
	memset(file, 0, GA_SUM_HEADER_SIZE);
	memcpy(file, GA_SUM_MAGIC, 8);
	/* Bit 0: version 4 (the oldest read); else bit 7: the one before this; else this. */
	sum_le32(file + 8, data[0] & 1    ? GA_SUM_VERSION_MIN :
			   data[0] & 0x80 ? GA_SUM_VERSION - 1 :
					    GA_SUM_VERSION);
	sum_le32(file + 12, GA_SUM_HEADER_SIZE);
	sum_le32(file + 16, (uint32_t)raw);
	sum_le32(file + 20, (uint32_t)((uint64_t)raw >> 32));
	sum_le32(file + 24, gp_crc32c(0, file + GA_SUM_HEADER_SIZE, clen));
	sum_run(file, GA_SUM_HEADER_SIZE + clen, (unsigned)data[0] >> 1);
	free(file);
	return 0;
}
