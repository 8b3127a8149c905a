/*
 * CRC-32C (Castagnoli, bit-reflected), the checksum of trace chunks and of
 * the file header.  One implementation for both sides: the recorder's
 * writer thread checksums every chunk it writes and the reader every chunk
 * it reads, so on x86-64 CPUs with SSE4.2 the crc32 instruction does it
 * (8 bytes per instruction), elsewhere a table-free nibble loop.  Both
 * paths give the same result (checked by test_reader).  Header-only and
 * free of libgcc's CPU-model data, so the preloaded recorder can use it.
 */
#ifndef GPUPROF_CRC32C_H
#define GPUPROF_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* The portable form: start with crc = 0, chain the result. */
static inline uint32_t gp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	static const uint32_t t[16] = {
		0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1,
		0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
		0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9,
		0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75,
	};
	const unsigned char *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ t[crc & 15];
		crc = (crc >> 4) ^ t[crc & 15];
	}
	return ~crc;
}

#if defined(__x86_64__)
/* The SSE4.2 form; call only where gp_crc32c_have_hw() says so. */
__attribute__((target("sse4.2"))) static inline uint32_t
gp_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);   /* little-endian by the format's contract */
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

/* Non-zero when the CPU has SSE4.2 (CPUID leaf 1, ECX bit 20). */
static inline int gp_crc32c_have_hw(void)
{
	/* 0 unknown, 1 no, 2 yes.  Racing threads store the same value, atomically. */
	static int have;
	int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
	unsigned a, b, c, d;

	if (!h) {
		h = (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) ? 2 : 1;
		__atomic_store_n(&have, h, __ATOMIC_RELAXED);
	}
	return h == 2;
}
#endif

static inline uint32_t gp_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (gp_crc32c_have_hw())
		return gp_crc32c_hw(crc, buf, len);
#endif
	return gp_crc32c_sw(crc, buf, len);
}

#endif /* GPUPROF_CRC32C_H */
