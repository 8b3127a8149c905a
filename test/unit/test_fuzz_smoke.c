/*
 * The fuzz target (test/fuzz/fuzz_reader.c) as a plain test: every golden
 * trace, then deterministic mutations of each (bit flips, cuts, bytes
 * overwritten) and the payload modes, through the reader, the model and
 * every view.  Built with the sanitizers in CI's SAN run, so a crash, a
 * leak or undefined behaviour fails it.  Offline test code.
 */
#include "tap.h"

#include "../fuzz/fuzz_reader.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_options_one
#include "../fuzz/fuzz_options.c"
#undef LLVMFuzzerTestOneInput

#include <glob.h>

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = buf ? (size_t)n : 0;
	return buf;
}

int main(void)
{
	glob_t g;
	unsigned long runs = 0;
	uint64_t x = 88172645463325252ull;

	if (glob("test/golden/*.gpuprof", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
		printf("skip - fuzz smoke # no golden traces (run from the repository root)\n");
		return 0;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len;
		unsigned char *buf = slurp(g.gl_pathv[i], &len), *m;

		if (!buf)
			continue;
		m = malloc(len + 1);
		for (unsigned v = 0; v < 6; v++) {
			memcpy(m, buf, len);
			m[len] = (unsigned char)v;
			LLVMFuzzerTestOneInput(m, len + 1), runs++;
		}
		for (int k = 0; k < 60; k++) {
			size_t cut;

			memcpy(m, buf, len);
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			switch (k % 3) {
			case 0: /* a flipped bit anywhere */
				m[x % len] ^= (unsigned char)(1u << (x >> 32) % 8);
				LLVMFuzzerTestOneInput(m, len);
				break;
			case 1: /* cut anywhere */
				cut = x % len;
				LLVMFuzzerTestOneInput(m, cut);
				break;
			default: /* the records themselves as a payload, wrapped */
				m[0] = (unsigned char)(x | 1);
				LLVMFuzzerTestOneInput(m, len > 4096 ? 4096 : len);
				break;
			}
			runs++;
		}
		/* One payload past the threaded decoder's threshold. */
		memcpy(m, buf, len);
		m[0] = 0x03;
		LLVMFuzzerTestOneInput(m, len > 2048 ? 2048 : len), runs++;
		free(m);
		free(buf);
	}
	globfree(&g);
	TAP_CHECK("fuzz target over the golden traces and their mutations", runs > 0,
		  "%lu inputs", runs);
	{
		static const char *const opts[] = {
			"out/%q{GP_FUZZ_VAR}-%p-%n\n../../x\n--top\n3",
			"%q{\nkernel,bogus\n--kernel\n[unclosed",
			"%q{GP_FUZZ_VAR}\n/abs\n--nvtx\n(a|b)*c\n--device\n0,1,x",
			"%%%h%\napi-all\n--kind\nkernel,memcpy,nope\n--stack-depth\n-1",
			"\n\n--timeline\n--tree\n--top\n0\n--full-names",
		};
		unsigned long n = 0;

		for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++, n++)
			fuzz_options_one((const uint8_t *)opts[i], strlen(opts[i]));
		TAP_CHECK("option fuzz target over templates and report options", n == 5, "%lu", n);
	}
	return tap_exit();
}
