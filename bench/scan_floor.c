/*
 * scan_floor: the least any analysis of a trace must do, on one thread:
 * read each chunk, check its CRC-32C, decompress its zstd frame, undo the
 * delta coding and walk its records (counting them by type).  Its time is
 * the floor that make bench-analyzer divides the analyzer's time by.
 * Runs offline, as a program of its own.
 *
 *     scan_floor TRACE...
 *
 * Prints "records N chunks C raw_bytes B" for all files together; exits 1
 * on a file it cannot read whole (naming the file and byte offset).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gpuprof/delta.h"
#include "gpuprof/trace.h"

struct totals {
	uint64_t records, chunks, raw, by_type[256];
};

static int scan(const char *path, ZSTD_DCtx *dctx, struct totals *t)
{
	static unsigned char *comp, *raw;
	static size_t comp_cap, raw_cap;
	struct gp_file_header h;
	struct gp_chunk_header ch;
	uint64_t off;
	FILE *f = fopen(path, "rb");

	if (!f) {
		fprintf(stderr, "scan_floor: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, GP_FILE_MAGIC, 8) ||
	    h.header_size < sizeof(h) || fseek(f, h.header_size, SEEK_SET)) {
		fprintf(stderr, "scan_floor: %s: byte 0: not a gpuprof trace\n", path);
		fclose(f);
		return -1;
	}
	off = h.header_size;
	for (;;) {
		size_t dn;
		uint32_t p;

		if (fread(&ch, sizeof(ch), 1, f) != 1)
			break;
		if (ch.magic != GP_CHUNK_MAGIC || ch.comp_size > GP_CHUNK_COMP_MAX ||
		    ch.raw_size > GP_CHUNK_RAW_MAX) {
			fprintf(stderr, "scan_floor: %s: byte %" PRIu64 ": bad chunk\n", path, off);
			fclose(f);
			return -1;
		}
		if (ch.comp_size > comp_cap && !(comp = realloc(comp, comp_cap = ch.comp_size)))
			abort();
		if (ch.raw_size > raw_cap && !(raw = realloc(raw, raw_cap = ch.raw_size)))
			abort();
		if (fread(comp, 1, ch.comp_size, f) != ch.comp_size ||
		    gp_chunk_checksum(&ch, comp, ch.comp_size) != ch.checksum) {
			fprintf(stderr, "scan_floor: %s: byte %" PRIu64 ": chunk cut or checksum "
				"mismatch\n", path, off);
			fclose(f);
			return -1;
		}
		dn = ZSTD_decompressDCtx(dctx, raw, ch.raw_size, comp, ch.comp_size);
		if (ZSTD_isError(dn) || dn != ch.raw_size) {
			fprintf(stderr, "scan_floor: %s: byte %" PRIu64 ": bad frame\n", path, off);
			fclose(f);
			return -1;
		}
		if (ch.flags & GP_CHUNK_F_DELTA)
			gp_delta_apply(raw, ch.raw_size, 1);
		for (p = 0; p + sizeof(struct gp_rec) <= ch.raw_size;) {
			const struct gp_rec *r = (const void *)(raw + p);

			if (r->size < sizeof(*r) || r->size % 8 || r->size > ch.raw_size - p)
				break;
			t->by_type[r->type & 0xff]++;
			t->records += r->type != GP_REC_PAD;
			p += r->size;
		}
		t->chunks++;
		t->raw += ch.raw_size;
		off += sizeof(ch) + ch.comp_size;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	struct totals t;
	int i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s TRACE...\n", argv[0]);
		return 2;
	}
	if (!dctx)
		return 1;
	memset(&t, 0, sizeof(t));
	for (i = 1; i < argc; i++)
		if (scan(argv[i], dctx, &t))
			rc = 1;
	ZSTD_freeDCtx(dctx);
	printf("records %" PRIu64 " chunks %" PRIu64 " raw_bytes %" PRIu64 "\n", t.records,
	       t.chunks, t.raw);
	return rc;
}
