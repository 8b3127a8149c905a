/*
 * CRC-32C for the offline reader: the same checksum as gp_crc32c() in
 * include/gpuprof/trace.h, computed with the SSE4.2 instruction where the
 * CPU has it and slicing-by-8 elsewhere, because the reader checksums every
 * compressed byte and the header's nibble form would dominate a read.
 * Runs offline only.
 */
#ifndef GA_ANALYZER_CRC_H
#define GA_ANALYZER_CRC_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprof/trace.h"

/* Same contract as gp_crc32c(): start with crc = 0, chain the result. */
uint32_t ga_crc_update(uint32_t crc, const void *buf, size_t len);

/* Same result as gp_chunk_checksum(). */
uint32_t ga_crc_chunk(const struct gp_chunk_header *ch, const void *frame,
		      size_t comp_size);

#endif
