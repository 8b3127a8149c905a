/*
 * Fast CRC-32C (Castagnoli) for the offline reader; see crc.h.
 * Runs offline only.
 */
#include "read/crc.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY 0x82f63b78u

static uint32_t tab[8][256];
/* The reader checksums on several threads: the tables are made once. */
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void tab_init(void)
{
	uint32_t i, c;
	int k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			tab[k][i] = (tab[k - 1][i] >> 8) ^ tab[0][tab[k - 1][i] & 0xff];
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t n)
{
	uint32_t c = ~crc;

	pthread_once(&tab_once, tab_init);
	while (n >= 8) {
		uint32_t lo, hi;

		/* Little-endian loads: the trace is little-endian by contract. */
		lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;
		hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
		     (uint32_t)p[7] << 24;
		lo ^= c;
		c = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
		    tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
		    tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		    tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ tab[0][(c ^ *p++) & 0xff];
	return ~c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n)
{
	uint64_t c = ~crc;

	while (n >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

static int have_hw;
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;

static void hw_init(void)
{
	have_hw = __builtin_cpu_supports("sse4.2");
}
#endif

uint32_t ga_crc_update(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	pthread_once(&hw_once, hw_init);
	if (have_hw)
		return crc_hw(crc, buf, len);
#endif
	return crc_sw(crc, buf, len);
}

uint32_t ga_crc_chunk(const struct gp_chunk_header *ch, const void *frame,
		      size_t comp_size)
{
	struct gp_chunk_header tmp = *ch;

	tmp.checksum = 0;
	return ga_crc_update(ga_crc_update(0, &tmp, sizeof(tmp)), frame, comp_size);
}
