/*
 * Unit tests of the regular-expression size guard (include/gpuprof/
 * regex_guard.h) and of its use by the analyzer's --nvtx and --kernel
 * filters: ordinary patterns pass with small estimates, stacked, nested and
 * multiplied repetitions are refused before regcomp, and a pattern the
 * estimates follow regcomp's duplication rule (each "+" doubles what it
 * repeats, a bound multiplies it; copies of what matches the empty string
 * cost their square).  Test code, runs offline only.
 */
#include <stdio.h>
#include <string.h>

#include "gpuprof/regex_guard.h"
#include "model/filter.h"
#include "tap.h"

static void test_estimates(void)
{
	static const char *const fine[] = {
		"",
		"sgemm",
		"^(ampere|sm90)_.*gemm.*$",
		"[[:alpha:]_]+[0-9]{1,3}",
		"a{1000}",
		"x+y+z+(ab|cd)*",
		"elementwise_kernel<[0-9]+, at::native::.*>",
		"[]a)(|]+",
		"\\(a\\)+",
		"(a|)",
		"(((a)))",
		")unbalanced(",
	};
	char p[64];

	tap_begin("estimates");
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
		CHECKF(gp_regex_size(fine[i]) < 5000, "'%s': %llu", fine[i],
		       (unsigned long long)gp_regex_size(fine[i]));
	CHECK(gp_regex_size("a") == 2);
	/* Each '+' doubles what it repeats. */
	CHECK(gp_regex_size("a++") >= 2 * gp_regex_size("a+"));
	snprintf(p, sizeof(p), "a%.*s", 12, "++++++++++++++++++++++++");
	CHECKF(gp_regex_size(p) > 4096 && gp_regex_size(p) < GP_REGEX_MAX_NODES,
	       "a+{12}: %llu", (unsigned long long)gp_regex_size(p));
	snprintf(p, sizeof(p), "a%.*s", 24, "++++++++++++++++++++++++");
	CHECK(gp_regex_size(p) > GP_REGEX_MAX_NODES);
	/* Nested groups multiply as stacked repetitions do. */
	CHECK(gp_regex_size("((((((((((((((((((a)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+") >
	      GP_REGEX_MAX_NODES);
	CHECK(gp_regex_size("a{1000}{1000}") > GP_REGEX_MAX_NODES);
	CHECK(gp_regex_size("(ab){300}(cd){300}") < GP_REGEX_MAX_NODES);
	CHECK(gp_regex_size("x{99999999999999999999999}") >= GP_REGEX_MAX_NODES);
	/* Copies of an empty-matching group cost their square (libFuzzer's slow input). */
	CHECK(gp_regex_size("()++++++++") < GP_REGEX_MAX_NODES);
	CHECK(gp_regex_size("()+++++++++") > GP_REGEX_MAX_NODES);
	CHECK(gp_regex_size("()+++++++++++-++++++++++++") > GP_REGEX_MAX_NODES);
	CHECK(gp_regex_size("(a|)") < 10 && gp_regex_size("x*y*z*") < 20);
	/* Quantifiers inside a bracket are characters, not repetitions. */
	CHECK(gp_regex_size("[+++++++++++++++++++++++++++++++++]") < 10);
	/* Deep nesting saturates instead of recursing without end. */
	{
		char deep[1200];

		memset(deep, '(', sizeof(deep) - 1);
		deep[sizeof(deep) - 1] = 0;
		CHECK(gp_regex_size(deep) >= GP_REGEX_SIZE_CAP);
	}
	tap_end();
}

static void test_filter(void)
{
	struct ga_filter f;
	char err[512];

	tap_begin("filter");
	ga_filter_init(&f);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX, "^step [0-9]+$", err, sizeof(err)) == 1);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_KERNEL, "a+++++++++++++++++++++++++", err,
			       sizeof(err)) == -1);
	CHECKF(strstr(err, "--kernel") && strstr(err, "too complex"), "%s", err);
	ga_filter_free(&f);
	ga_filter_init(&f);
	/* The input libFuzzer found: it took more than 4 GB before the guard. */
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX,
			       "%%%%%\xa6\xa6\xa6%%-\r\r\r\r++++++++++++++++++++++++\r\r%%-%%%%%F", err,
			       sizeof(err)) == -1);
	CHECKF(strstr(err, "--nvtx") && strstr(err, "too complex"), "%s", err);
	ga_filter_free(&f);
	/* Small by every estimate, yet regcomp takes minutes: the child's time runs out. */
	ga_filter_init(&f);
	CHECK(gp_regex_size("$((((((((%?)+)+)+)+)+)+)+)") < GP_REGEX_MAX_NODES);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_KERNEL, "$((((((((%?)+)+)+)+)+)+)+)", err,
			       sizeof(err)) == -1);
	CHECKF(strstr(err, "--kernel") && strstr(err, "too costly"), "%s", err);
	ga_filter_free(&f);
	/* An invalid pattern is still regcomp's to report. */
	ga_filter_init(&f);
	CHECK(ga_filter_option(&f, GA_FILTER_OPT_NVTX, "(unclosed", err, sizeof(err)) == -1);
	CHECKF(strstr(err, "bad regular expression"), "%s", err);
	ga_filter_free(&f);
	tap_end();
}

int main(void)
{
	test_estimates();
	test_filter();
	return tap_exit();
}
