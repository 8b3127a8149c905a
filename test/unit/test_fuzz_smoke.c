/*
 * The fuzz targets as a plain test.  test/fuzz/fuzz_reader.c: every golden
 * trace, then deterministic mutations of each (bit flips, cuts, bytes
 * overwritten) and the payload modes, through the reader, the model and
 * every view.  test/fuzz/fuzz_options.c: fixed templates and report
 * options.  test/fuzz/fuzz_nvtx.c: fixed NVTX call sequences and capture
 * ranges, then pseudo-random ones.  test/fuzz/fuzz_summary.c: the summaries
 * of the golden traces, whole and as bodies, and mutations of the bodies
 * (bit flips, cuts, bytes overwritten).  Built with the sanitizers in CI's SAN
 * run, so a crash, a leak or undefined behaviour fails it.  Offline test
 * code.
 */
#include "tap.h"

#include "../fuzz/fuzz_reader.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_options_one
#include "../fuzz/fuzz_options.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_nvtx_one
#include "../fuzz/fuzz_nvtx.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_summary_one
#include "../fuzz/fuzz_summary.c"
#undef LLVMFuzzerTestOneInput

#include <glob.h>

const char *__ubsan_default_options(void);

/*
 * The summary target sends the views' stderr to /dev/null: undefined
 * behaviour stops the test, so that no report is lost there.
 */
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

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

/* NVTX fuzz inputs, built call by call (see test/fuzz/fuzz_nvtx.c). */
struct nvin {
	uint8_t b[8192];
	size_t n;
};

static void nv_put(struct nvin *x, const void *p, size_t n)
{
	if (x->n + n <= sizeof(x->b)) {
		memcpy(x->b + x->n, p, n);
		x->n += n;
	}
}

#define NV(x, ...)                                             \
	do {                                                   \
		const uint8_t v_[] = { __VA_ARGS__ };          \
		nv_put(x, v_, sizeof(v_));                     \
	} while (0)

static void nv_str(struct nvin *x, const char *s)
{
	NV(x, (uint8_t)strlen(s));
	nv_put(x, s, strlen(s));
}

/* A full-size attribute structure with an ASCII message; the raw bytes
 * give category 9, an ARGB color and a double payload. */
static void nv_attr(struct nvin *x, const char *msg)
{
	uint8_t raw[40] = { 0 };

	raw[4] = 9;          /* category */
	raw[8] = 1;          /* colorType ARGB */
	raw[12] = 0xff;      /* color */
	raw[16] = 4;         /* payloadType DOUBLE */
	raw[31] = 0x40;      /* payload 2.0 */
	NV(x, 2);
	nv_put(x, raw, sizeof(raw));
	NV(x, 1, 0);
	nv_str(x, msg);
}

static int nvtx_inputs(void)
{
	static const char *const configs[] = {
		"nvtx:step@dom\nrepeat:2\n", "cudaProfilerApi\nrepeat:4294967296\n",
		"nvtx:step\nrepeat:-1\n",    "nvtx:@dom\nrepeat\n",
		"nvtx:\nstop\n",             "bogus\nrepeat:0\n",
	};
	struct nvin x;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	int runs = 0;

	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		memset(&x, 0, sizeof(x));
		nv_put(&x, configs[c], strlen(configs[c]));
		NV(&x, 14, 0, 0);             /* domain "dom" in slot 0 */
		nv_str(&x, "dom");
		for (int i = 0; i < 3; i++) {
			NV(&x, 25, 1, 1);     /* cudaProfilerStart returns */
			NV(&x, 16, 0);        /* domain push "step" */
			nv_attr(&x, "step");
			NV(&x, 0);            /* push "inner" */
			nv_str(&x, "inner");
			NV(&x, 4, 17, 0);     /* pop, domain pop */
			NV(&x, 25, 0, 0);     /* cudaProfilerStop enters */
		}
		NV(&x, 11, 1, 200);           /* a 1600-byte mark */
		NV(&x, 2, 3, 0, 0, 0xd8, 0x00, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff);
		NV(&x, 21, 1, 0, 0);          /* registered "reg" */
		nv_str(&x, "reg");
		NV(&x, 0);
		NV(&x, 3, 2 + 8 * 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		   0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1); /* push registered */
		NV(&x, 3, 1, 6, 1, 2, 3, 4, 5, 6); /* a 6-byte attribute structure */
		NV(&x, 23);                   /* drain */
		NV(&x, 6, 0);                 /* start "x" in slot 0 */
		nv_str(&x, "x");
		NV(&x, 10, 0x80, 0, 0, 0, 0, 0, 0, 42); /* end of an unknown id */
		NV(&x, 24, 9, 0, 4, 4, 4);    /* another thread ends slot 0, pops */
		fuzz_nvtx_one(x.b, x.n), runs++;
	}
	for (int k = 0; k < 300; k++) {
		size_t len = 64 + (size_t)k * 7;

		memset(&x, 0, sizeof(x));
		nv_put(&x, k % 2 ? "nvtx:a\nrepeat:3\n" : "cudaProfilerApi\n\n",
		       k % 2 ? 16 : 17);
		for (size_t i = 0; i < len; i++) {
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			NV(&x, (uint8_t)(r >> 24) % 4 ? (uint8_t)(r >> 32) : 'a');
		}
		fuzz_nvtx_one(x.b, x.n), runs++;
	}
	return runs;
}

/*
 * The summary target over each golden trace's summary (written by
 * summarize into dir): the file as it is, its body in every view and
 * version, and mutations of the body.  Inputs run.
 */
static unsigned long summary_inputs(const glob_t *g, uint64_t *x)
{
	char dir[] = "/tmp/gpuprof-fuzz-sum.XXXXXX", path[512];
	unsigned long runs = 0;

	if (!mkdtemp(dir))
		return 0;
	for (size_t i = 0; i < g->gl_pathc; i++) {
		char *argv[] = { "summarize", "-o", path, g->gl_pathv[i], NULL };
		unsigned char *file, *body = NULL, *m = NULL;
		size_t flen = 0;
		uint64_t raw = 0;
		int saved_err = dup(2), devnull = open("/dev/null", O_WRONLY);

		snprintf(path, sizeof(path), "%s/%zu.sum", dir, i);
		/* What summarize says (a GPU in several parts...) is not the test's. */
		dup2(devnull, 2);
		optind = 0;
		cmd_summarize(4, argv);
		dup2(saved_err, 2);
		close(saved_err);
		close(devnull);
		file = slurp(path, &flen);
		unlink(path);
		if (!file || flen <= GA_SUM_HEADER_SIZE) {
			free(file);
			continue;
		}
		fuzz_summary_one(file, flen), runs++;
		for (int b = 0; b < 8; b++)
			raw |= (uint64_t)file[16 + b] << (8 * b);
		if (raw < (1u << 26) && (body = malloc(raw + 1)) && (m = malloc(raw + 1)) &&
		    ZSTD_decompress(body + 1, raw, file + GA_SUM_HEADER_SIZE,
				    flen - GA_SUM_HEADER_SIZE) == raw) {
			for (unsigned v = 0; v < 12; v++) {
				body[0] = (unsigned char)v; /* version 5 or 4, and the view */
				fuzz_summary_one(body, raw + 1), runs++;
			}
			for (int k = 0; k < 24 && raw > 0; k++) {
				size_t at;

				memcpy(m, body, raw + 1);
				*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
				m[0] = (unsigned char)(k % 12 & ~1u);
				at = 1 + *x % raw;
				switch (k % 3) {
				case 0: /* a flipped bit */
					m[at] ^= (unsigned char)(1u << (*x >> 32) % 8);
					fuzz_summary_one(m, raw + 1);
					break;
				case 1: /* cut */
					fuzz_summary_one(m, at);
					break;
				default: /* 8 bytes of all ones: counts, lengths, ids at their largest */
					memset(m + at, 0xff, raw + 1 - at < 8 ? raw + 1 - at : 8);
					fuzz_summary_one(m, raw + 1);
					break;
				}
				runs++;
			}
		}
		free(m);
		free(body);
		free(file);
	}
	rmdir(dir);
	return runs;
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
	TAP_CHECK("fuzz target over the golden traces and their mutations", runs > 0,
		  "%lu inputs", runs);
	{
		unsigned long n = summary_inputs(&g, &x);

		TAP_CHECK("summary fuzz target over the golden traces' summaries and their "
			  "mutations",
			  n >= 37 * g.gl_pathc, "%lu inputs for %zu traces", n, g.gl_pathc);
	}
	globfree(&g);
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
	{
		int n = nvtx_inputs();

		TAP_CHECK("NVTX fuzz target over call sequences and capture ranges",
			  n == 306 && gp_rec.records > 1000 && !gp_rec.ring.dropped,
			  "%d inputs, %llu records, %llu dropped", n,
			  (unsigned long long)gp_rec.records, (unsigned long long)gp_rec.ring.dropped);
	}
	return tap_exit();
}
