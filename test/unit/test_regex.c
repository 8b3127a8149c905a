/*
 * Unit tests of the regular expressions both sides use (include/gpuprof/
 * regex.h, PCRE2) and of the analyzer's --nvtx and --kernel filters built
 * on them: every pattern that stalled or exhausted glibc's regcomp (and
 * the ones libFuzzer found) compiles, or is refused with PCRE2's message
 * and an offset, in milliseconds; so do thousands of random short
 * patterns; a match stops within its budget whatever the pattern and the
 * name, counts as no match and is reported once; the windowed search gives
 * the answer of a plain pcre2_match(); the syntax is Python's; threads
 * match at once.  Test code, runs offline only.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gpuprof/regex.h"
#include "model/filter.h"
#include "synth.h"
#include "tap.h"

static double now_ms(void)
{
	return (double)gp_regex_now() / 1e6;
}

/* Patterns that took glibc's regcomp seconds, minutes or gigabytes. */
static const char *const bad_for_glibc[] = {
	"a+++++++++++++++++++++++++",
	"((((((((((((((((((a)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+",
	"$((((((((%?)+)+)+)+)+)+)+)",
	"$((((((%?)+)+)+)+)+)",
	"$((((((((((((((%?)+)+)+)+)+)+)+)+)+)+)+)+)+)",
	"a{1000}{1000}",
	"(?:a{1000}){1000}",
	"((a{1000}){1000}){1000}",
	"(ab){300}(cd){300}",
	"()+++++++++",
	"()+++++++++++-++++++++++++",
	"(()*)*(()*)*(()*)*(()*)*",
	"x{99999999999999999999999}",
	"(x{65535}){65535}",
	"%%%%%\xa6\xa6\xa6%%-\r\r\r\r++++++++++++++++++++++++\r\r%%-%%%%%F",
	"%%%%%%%-\r\r\r\r++++++++++++++++++++++++\r\r%%-%%%%%F",
	"((%?){1000}){60}",
	"(%?){1000}",
	"(((a|b|)*)*)*c",
	"(.*){1,32000}[bc]",
};

static void test_compile_fast(void)
{
	struct gp_regex re;
	char err[256], deep[1300];
	double worst = 0;
	size_t i;

	tap_begin("pathological patterns compile or are refused in milliseconds");
	for (i = 0; i <= sizeof(bad_for_glibc) / sizeof(bad_for_glibc[0]); i++) {
		const char *p = bad_for_glibc[i < sizeof(bad_for_glibc) / sizeof(bad_for_glibc[0]) ? i : 0];
		double t0, dt;
		int rc;

		if (i == sizeof(bad_for_glibc) / sizeof(bad_for_glibc[0])) {
			memset(deep, '(', sizeof(deep) - 1);
			deep[sizeof(deep) - 1] = 0;
			p = deep;
		}
		t0 = now_ms();
		rc = gp_regex_compile(&re, p, GP_REGEX_RECORDER, err, sizeof(err));
		dt = now_ms() - t0;
		worst = dt > worst ? dt : worst;
		CHECKF(dt < 250, "'%.40s': %.1f ms to compile", p, dt);
		if (rc)
			CHECKF(strstr(err, " at offset "), "'%.40s': %s", p, err);
		gp_regex_free(&re);
	}
	/* The refusals name the fault and where it is. */
	CHECK(gp_regex_compile(&re, "a{1000}{1000}", GP_REGEX_ANALYZER, err, sizeof(err)) == -1);
	CHECKF(!strcmp(err, "quantifier does not follow a repeatable item at offset 12"), "%s", err);
	CHECK(gp_regex_compile(&re, "((a{1000}){1000}){1000}", GP_REGEX_ANALYZER, err,
			       sizeof(err)) == -1);
	CHECKF(strstr(err, "too large"), "%s", err);
	CHECK(gp_regex_compile(&re, deep, GP_REGEX_ANALYZER, err, sizeof(err)) == -1);
	CHECKF(strstr(err, "nested"), "%s", err);
	CHECK(gp_regex_compile(&re, "(unclosed", GP_REGEX_ANALYZER, err, sizeof(err)) == -1);
	CHECKF(!strcmp(err, "missing closing parenthesis at offset 9"), "%s", err);
	CHECK(gp_regex_compile(&re, "ok\xa6", GP_REGEX_ANALYZER, err, sizeof(err)) == -1);
	CHECKF(strstr(err, "UTF-8") && strstr(err, "at offset 2"), "%s", err);
	tap_end();
}

/* Random short patterns over the characters that make regular expressions costly. */
static void test_compile_random(void)
{
	static const char alpha[] = "()()|*+?{}[]^$.\\abcab%01,9-:";
	struct gp_regex re;
	char p[48], err[256];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	double worst = 0, t0 = now_ms();
	int compiled = 0;

	tap_begin("20000 random patterns compile or are refused in milliseconds");
	for (int k = 0; k < 20000; k++) {
		size_t len = 4 + k % 40;
		double t1;

		for (size_t i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			p[i] = alpha[x % (sizeof(alpha) - 1)];
		}
		p[len] = 0;
		t1 = now_ms();
		if (!gp_regex_compile(&re, p, GP_REGEX_ANALYZER, err, sizeof(err))) {
			compiled++;
			gp_regex_free(&re);
		}
		t1 = now_ms() - t1;
		if (t1 > worst)
			worst = t1;
		CHECKF(t1 < 250, "'%s': %.1f ms", p, t1);
	}
	CHECKF(compiled > 100, "only %d compiled", compiled);
	CHECKF(now_ms() - t0 < 20000, "%.0f ms in all", now_ms() - t0);
	tap_end();
	printf("# random patterns: %d of 20000 compiled, slowest %.3f ms\n", compiled, worst);
}

/* A name of n bytes: fill repeated, then tail. */
static char *name_of(size_t n, char fill, const char *tail)
{
	size_t t = strlen(tail);
	char *s = malloc(n + t + 1);

	if (!s)
		abort();
	memset(s, fill, n);
	memcpy(s + n, tail, t + 1);
	return s;
}

/*
 * Patterns that backtrack without end, or a little less than PCRE2's limit
 * at each of thousands of starting positions (which PCRE2 counts anew),
 * or scan the rest of the name from every position.
 */
static void test_match_bounded(void)
{
	static const char *const slow[] = {
		"(?:a|a){1,12}(?:!!|!b)",   /* 15 s in one pcre2_match() at 16 KB */
		"(?:a|a){1,14}(?:!!|!b)",
		"(a+)+$",
		"(a|aa)*$",
		"(.*a){20}",
		"^(\\w+\\s?)*$",
		"[[:alpha:]_]+[0-9]{1,3}",
		"(|a)+$",
		"(a*)*b",
		"$((((((((%?)+)+)+)+)+)+)+)",
		"((((((((((((((((((a)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+",
	};
	char *name = name_of(16384, 'a', "!");
	char *bad_utf = name_of(16384, 'a', "\xff!");
	struct gp_regex re;
	char err[256], why[128];
	int stopped = 0, firsts;

	tap_begin("a match stops within its budget, counts as no match, is reported once");
	for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
		for (int side = 0; side < 2; side++) {
			struct gp_regex_limits lim = side ? GP_REGEX_ANALYZER : GP_REGEX_RECORDER;
			double bound = side ? 1500 : 300; /* budget + one window, and a loaded machine */

			if (gp_regex_compile(&re, slow[i], lim, err, sizeof(err))) {
				CHECKF(0, "'%s': %s", slow[i], err);
				continue;
			}
			firsts = 0;
			for (int k = 0; k < 3; k++) {
				const char *s = k == 2 ? bad_utf : name;
				double t0 = now_ms(), dt;
				int rc = gp_regex_match(&re, s, strlen(s));

				dt = now_ms() - t0;
				CHECKF(dt < bound, "'%s' (%s): %.0f ms", slow[i], side ? "analyzer" : "recorder", dt);
				CHECKF(rc == 0 || rc == 1 || rc == GP_REGEX_LIMIT || rc == GP_REGEX_LIMIT_FIRST,
				       "'%s': %d", slow[i], rc);
				firsts += rc == GP_REGEX_LIMIT_FIRST;
				stopped += rc < 0;
			}
			CHECKF(firsts <= 1, "'%s': reported %d times", slow[i], firsts);
			if (firsts)
				CHECKF(gp_regex_why(&re, why, sizeof(why))[0], "'%s'", slow[i]);
			gp_regex_free(&re);
		}
	}
	CHECKF(stopped >= 10, "only %d matches stopped", stopped);
	/* The nested repetition that never ends: stopped by PCRE2's own limit. */
	CHECK(!gp_regex_compile(&re, "(a|a)*$", GP_REGEX_RECORDER, err, sizeof(err)));
	CHECK(gp_regex_match(&re, name, 4096) == GP_REGEX_LIMIT_FIRST);
	CHECKF(strstr(gp_regex_why(&re, why, sizeof(why)), "limit"), "%s", why);
	CHECK(gp_regex_match(&re, name, 4096) == GP_REGEX_LIMIT);
	gp_regex_free(&re);
	/* Positions that each stay under the limit: stopped by the budget. */
	CHECK(!gp_regex_compile(&re, "(?:a|a){1,12}(?:!!|!b)", GP_REGEX_ANALYZER, err, sizeof(err)));
	CHECK(gp_regex_match(&re, name, strlen(name)) == GP_REGEX_LIMIT_FIRST);
	CHECKF(strstr(gp_regex_why(&re, why, sizeof(why)), "ms in all"), "%s", why);
	gp_regex_free(&re);
	free(name);
	free(bad_utf);
	tap_end();
}

/* Python's re syntax, and what a name holds. */
static void test_syntax(void)
{
	static const struct {
		const char *re, *s;
		int hit;
	} cases[] = {
		{ "", "anything", 1 },
		{ "gemm", "ampere_sgemm_128x64_nn", 1 },
		{ "^sgemm", "ampere_sgemm_128x64_nn", 0 },
		{ "^(ampere|sm90)_.*gemm.*$", "sm90_xmma_gemm_f16", 1 },
		{ "^step [0-9]+$", "step 12", 1 },
		{ "^step [0-9]+$", "step 12b", 0 },
		{ "^step \\d+$", "step 12", 1 },
		{ "\\bstep\\b", "train step", 1 },
		{ "\\bstep\\b", "steps", 0 },
		{ "(?i)FORWARD", "model.forward", 1 },
		{ "FORWARD", "model.forward", 0 },
		{ "(?P<w>ab)(?P=w)", "xabab", 1 },
		{ "(ab)\\1", "xabab", 1 },
		{ "(ab)\\1", "xabba", 0 },
		{ "foo(?=bar)", "foobar", 1 },
		{ "foo(?!bar)", "foobar", 0 },
		{ "(?<=::)axpy", "ns::axpy<float>", 1 },
		{ "a{2,3}", "caab", 1 },
		{ "a{2,3}", "cab", 0 },
		{ "[[:alpha:]_]+[0-9]{1,3}", "kernel_42", 1 },
		{ "[]a)(|]+", "x)", 1 },
		{ "\\(a\\)+", "(a)", 1 },
		{ "elementwise_kernel<[0-9]+, at::native::.*>", "void at::native::elementwise_kernel<128, at::native::foo>()", 1 },
		{ "^.$", "\xc3\xa9", 1 },                 /* '.' is one character, not one byte */
		{ "^caf\xc3\xa9$", "caf\xc3\xa9", 1 },
		{ "^[\xc3\xa9]$", "\xc3\xa9", 1 },
		{ "(?x) s t e p  # spaces and comments", "step", 1 },
		{ "a.c", "a\nc", 0 },
		{ "(?s)a.c", "a\nc", 1 },
		{ "ok", "\xff\xfe ok", 1 },              /* not UTF-8: the rest still matches */
		{ "^ok", "\xff ok", 0 },
		{ "\xc3\xa9", "\xff\xc3\xa9", 1 },
		{ ".", "\xff", 0 },                      /* an invalid byte matches nothing */
	};
	struct gp_regex re;
	char err[256];

	tap_begin("Python re syntax");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (gp_regex_compile(&re, cases[i].re, GP_REGEX_ANALYZER, err, sizeof(err))) {
			CHECKF(0, "'%s': %s", cases[i].re, err);
			continue;
		}
		CHECKF(gp_regex_match(&re, cases[i].s, strlen(cases[i].s)) == cases[i].hit,
		       "'%s' on '%s': expected %d", cases[i].re, cases[i].s, cases[i].hit);
		gp_regex_free(&re);
	}
	tap_end();
}

/*
 * The search in windows of starting positions answers as one plain
 * pcre2_match() does: random patterns and names, matches at every place
 * (window edges included), names that are not UTF-8.
 */
static void test_windows(void)
{
	static const char *const pats[] = {
		"z", "z$", "^a", "a\\b", "(?<=y)z", "yz", "[xz]{2}", "q?z", "a*z", "$", "\\Bz",
		"(?m)^z", "z(?=a)", ".{3}z", "(y|z)+a", "\xc3\xa9z", "\\Az",
	};
	static const char chars[] = "aaaaaaaayz\n";
	uint64_t x = 12345;
	char s[700];
	int n = 0;

	tap_begin("windows of starting positions give the plain search's answer");
	for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
		struct gp_regex re;
		pcre2_code *plain;
		pcre2_match_data *md = pcre2_match_data_create(1, NULL);
		char err[256];
		int code;
		PCRE2_SIZE off;

		CHECK(!gp_regex_compile(&re, pats[p], GP_REGEX_ANALYZER, err, sizeof(err)));
		plain = pcre2_compile((PCRE2_SPTR)pats[p], PCRE2_ZERO_TERMINATED,
				      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &off, NULL);
		CHECK(plain && md);
		for (int k = 0; plain && md && k < 400; k++) {
			size_t len, i;
			int want, got;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			len = x % (sizeof(s) - 1);
			for (i = 0; i < len; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				s[i] = (x % 97) ? chars[x % (sizeof(chars) - 1)] : (x % 2 ? '\xc3' : '\xa9');
			}
			/* A match just after a window's edge, sometimes. */
			if (k % 3 == 0 && len > 70) {
				size_t at = (size_t)32 << (k / 3 % 4);

				if (at + 1 < len)
					s[at] = 'y', s[at + 1] = 'z';
			}
			s[len] = 0;
			want = pcre2_match(plain, (PCRE2_SPTR)s, len, 0, 0, md, NULL) >= 0;
			got = gp_regex_match(&re, s, len);
			CHECKF(got == want, "'%s' on %zu bytes (k %d): %d, plain %d", pats[p], len, k, got,
			       want);
			n++;
		}
		pcre2_match_data_free(md);
		pcre2_code_free(plain);
		gp_regex_free(&re);
	}
	tap_end();
	printf("# windows: %d names compared\n", n);
}

struct worker {
	struct gp_regex *re;
	int errors;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	char s[96];

	for (int i = 0; i < 20000; i++) {
		int want = i % 3 == 0;

		snprintf(s, sizeof(s), "%s_%d_of_a_name_long_enough_for_two_windows_of_positions",
			 want ? "step" : "pass", i);
		if (gp_regex_match(w->re, s, strlen(s)) != want)
			w->errors++;
	}
	return NULL;
}

/* More threads than the pool holds slots, all matching at once. */
static void test_threads(void)
{
	enum { N = GP_REGEX_POOL + 4 };
	struct worker w[N];
	pthread_t t[N];
	struct gp_regex re;
	char err[256];
	int errors = 0;

	tap_begin("threads match at once");
	CHECK(!gp_regex_compile(&re, "^step_\\d+_", GP_REGEX_RECORDER, err, sizeof(err)));
	for (int i = 0; i < N; i++) {
		w[i].re = &re;
		w[i].errors = 0;
		CHECK(!pthread_create(&t[i], NULL, work, &w[i]));
	}
	for (int i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		errors += w[i].errors;
	}
	CHECKF(!errors, "%d wrong answers", errors);
	gp_regex_free(&re);
	tap_end();
}

/* The analyzer's filters: the option, the pattern and the offset of a refusal. */
static void test_filter(void)
{
	struct ga_filter f;
	char err[512];
	double t0;

	tap_begin("filter options");
	ga_filter_init(&f);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX, "^step [0-9]+$", err, sizeof(err)) == 1);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX, "x", err, sizeof(err)) == -1);
	CHECKF(strstr(err, "--nvtx given twice"), "%s", err);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_KERNEL, "a+++++++++++++++++++++++++", err,
			       sizeof(err)) == -1);
	CHECKF(!strcmp(err, "--kernel: bad regular expression 'a+++++++++++++++++++++++++': "
			    "quantifier does not follow a repeatable item at offset 3"), "%s", err);
	ga_filter_free(&f);
	ga_filter_init(&f);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX, "(unclosed", err, sizeof(err)) == -1);
	CHECKF(!strcmp(err, "--nvtx: bad regular expression '(unclosed': missing closing "
			    "parenthesis at offset 9"), "%s", err);
	ga_filter_free(&f);
	/* What glibc took minutes over (a child process then gave it 2 s): compiled at once. */
	ga_filter_init(&f);
	t0 = now_ms();
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_KERNEL, "$((((((((%?)+)+)+)+)+)+)+)", err,
			       sizeof(err)) == 1);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX,
			       "((((((((((((((((((a)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+", err,
			       sizeof(err)) == 1);
	/* Milliseconds, against minutes: 2 s leaves room for a loaded machine. */
	CHECKF(now_ms() - t0 < 2000, "%.0f ms", now_ms() - t0);
	ga_filter_free(&f);
	/* The libFuzzer input that took regcomp over 4 GB. */
	ga_filter_init(&f);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX,
			       "%%%%%\xa6\xa6\xa6%%-\r\r\r\r++++++++++++++++++++++++\r\r%%-%%%%%F", err,
			       sizeof(err)) == -1);
	CHECKF(strstr(err, "--nvtx: bad regular expression") && strstr(err, "at offset 5"), "%s",
	       err);
	ga_filter_free(&f);
	tap_end();
}

/*
 * gpuprof export --kernel on a trace whose long kernel names make a match
 * meet the limits: those names count as not matching, one line on stderr
 * says so (the name cut, its control characters replaced), the kernel the
 * pattern names is kept.
 */
static void test_report_limit(void)
{
	char dir[] = "/tmp/gp-regex-XXXXXX", path[64], *out = NULL, *err = NULL;
	char *n1 = name_of(4096, 'a', "\x1b[2J!x"), *n2 = name_of(4096, 'a', "!y");
	struct synth *s;
	uint32_t id[3];
	const char *line;
	int rc;

	tap_begin("--kernel: names the limits stop are reported once, as not matching");
	if (!mkdtemp(dir)) {
		CHECKF(0, "mkdtemp");
		tap_end();
		return;
	}
	snprintf(path, sizeof(path), "%s/t.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 1234, "node", "app", 0, 1000);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	id[0] = synth_string(s, n1);
	id[1] = synth_string(s, n2);
	id[2] = synth_string(s, "gemm_kernel");
	for (int k = 0; k < 9; k++)
		synth_kernel(s, id[k % 3], 2000 + (uint64_t)k * 100, 2050 + (uint64_t)k * 100, 0, 7, 0, 0);
	synth_end(s, 9000, 0);
	CHECK(synth_close(s, NULL, NULL) == 0);
	rc = synth_run(dir, &out, &err, cmd_export, "export", "--format", "json", "--kernel",
		       "(a|a)*$|gemm", path, (char *)NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	CHECKF(out && strstr(out, "\"counts\":{\"kernel\":3,"), "%.300s", out ? out : "");
	line = err ? strstr(err, "gpuprof: --kernel: matching 'aaaa") : NULL;
	CHECKF(line && strstr(line, "\xe2\x80\xa6' stopped (match limit exceeded); it and any "
			       "other name the limits stop count as not matching\n"), "%s", err ? err : "");
	CHECKF(line && !strstr(line + 1, "gpuprof: --kernel: matching"), "more than one line: %s", err);
	CHECKF(err && !strchr(err, '\x1b'), "an escape reached the terminal");
	free(out);
	free(err);
	unlink(path);
	rmdir(dir);
	free(n1);
	free(n2);
	tap_end();
}

int main(void)
{
	test_compile_fast();
	test_compile_random();
	test_match_bounded();
	test_syntax();
	test_windows();
	test_threads();
	test_filter();
	test_report_limit();
	return tap_exit();
}
