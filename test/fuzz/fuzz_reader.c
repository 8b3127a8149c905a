/*
 * libFuzzer target for the trace reader and the model behind every report.
 * Not built by default.  Build and run from the repository root:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -D_GNU_SOURCE \
 *       -Iinclude -Ianalyzer test/fuzz/fuzz_reader.c \
 *       $(find analyzer -name '*.c' ! -name main.c) -pthread -lzstd -lstdc++ \
 *       -o build/fuzz_reader
 *   mkdir -p build/fuzz-corpus && cp test/golden/[a-z]*.gpuprof build/fuzz-corpus/
 *   build/fuzz_reader -max_len=65536 build/fuzz-corpus
 *
 * Inputs whose first byte is even are trace files as they are.  Random
 * bytes rarely get past a chunk's checksum, so inputs whose first byte is
 * odd are record payloads: the target wraps the rest in a valid header and
 * one chunk (compressed, checksummed) to reach the record-level code.
 * Offline test code.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gpuprof/trace.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const void *buf, size_t len)
{
	struct gp_model m;

	if (gp_model_init(&m))
		return;
	m.keep_rows = 64;
	gp_model_add_mem(&m, "fuzz", buf, len);
	if (gp_model_finish(&m) == 0) {
		free(gp_model_order_kernels(&m));
		free(gp_model_order_api(&m));
		free(gp_model_order_labels(&m));
	}
	gp_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_file_header h;
	struct gp_chunk_header ch;
	size_t raw, bound, clen;
	unsigned char *file;

	if (size == 0 || !(data[0] & 1)) {
		run(data, size);
		return 0;
	}
	/* Payload mode: records must fill whole 8-byte units. */
	raw = (size - 1) & ~(size_t)7;
	if (raw > GP_CHUNK_RAW_MAX)
		raw = GP_CHUNK_RAW_MAX;
	bound = ZSTD_compressBound(raw);
	file = malloc(sizeof(h) + sizeof(ch) + bound);
	if (!file)
		return 0;
	clen = ZSTD_compress(file + sizeof(h) + sizeof(ch), bound, data + 1, raw, 1);
	if (ZSTD_isError(clen)) {
		free(file);
		return 0;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GP_FILE_MAGIC, sizeof(h.magic));
	h.version = GP_FORMAT_VERSION;
	h.min_reader = GP_MIN_READER_VERSION;
	h.header_size = sizeof(h);
	h.endian = GP_ENDIAN_MARKER;
	memset(&ch, 0, sizeof(ch));
	ch.magic = GP_CHUNK_MAGIC;
	ch.comp_size = (uint32_t)clen;
	ch.raw_size = (uint32_t)raw;
	ch.checksum = gp_chunk_checksum(&ch, file + sizeof(h) + sizeof(ch), clen);
	memcpy(file, &h, sizeof(h));
	memcpy(file + sizeof(h), &ch, sizeof(ch));
	run(file, sizeof(h) + sizeof(ch) + clen);
	free(file);
	return 0;
}
