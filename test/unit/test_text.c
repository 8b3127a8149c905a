/*
 * Unit tests of the analyzer's text handling: demangling and short names,
 * JSON and CSV escaping, number formatting, name cutting, and the
 * Warp-style table layout.  Test code, runs offline only, needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/demangle.h"
#include "model/strtab.h"
#include "views/table.h"
#include "views/text.h"
#include "tap.h"
#include "base/util.h"

static int short_is(const char *in, const char *want)
{
	char *s = ga_demangle_short(in);
	int ok = s && !strcmp(s, want);

	if (!ok)
		printf("# short('%s') = '%s', want '%s'\n", in, s ? s : "(null)", want);
	free(s);
	return ok;
}

static int full_is(const char *in, const char *want)
{
	char *s = ga_demangle_full(in);
	int ok = want ? s && !strcmp(s, want) : s == NULL;

	if (!ok)
		printf("# full('%s') = '%s'\n", in, s ? s : "(null)");
	free(s);
	return ok;
}

static void test_demangle(void)
{
	struct ga_strtab t;
	uint32_t a, b, c;

	tap_begin("demangling and short names");
	CHECK(full_is("_Z8inc_loopPfi", "inc_loop(float*, int)"));
	CHECK(full_is("_ZN2ns4axpyIfEEviT_PKS1_PS1_",
		      "void ns::axpy<float>(int, float, float const*, float*)"));
	CHECK(full_is("_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()"));
	CHECK(full_is("triton_poi_fused_add_0", NULL));
	CHECK(full_is("_Zgarbage", NULL));
	CHECK(full_is("", NULL));
	CHECK(short_is("inc_loop(float*, int)", "inc_loop"));
	CHECK(short_is("void ns::axpy<float>(int, float, float const*, float*)", "ns::axpy<float>"));
	CHECK(short_is("(anonymous namespace)::foo()", "(anonymous namespace)::foo"));
	CHECK(short_is("void cub::CUB_200200_800_NS::EmptyKernel<void>()",
		       "cub::CUB_200200_800_NS::EmptyKernel<void>"));
	CHECK(short_is("void k<(anonymous namespace)::Op, 3>(int)",
		       "k<(anonymous namespace)::Op, 3>"));
	CHECK(short_is("void f<std::pair<int, float> >(std::pair<int, float>)",
		       "f<std::pair<int, float> >"));
	CHECK(short_is("foo::operator()(int) const", "foo::operator()"));
	CHECK(short_is("bool operator<<int>(int, int)", "operator<<int>"));
	CHECK(short_is("triton_poi_fused_add_0", "triton_poi_fused_add_0"));
	CHECK(short_is("", ""));

	/* The string table demangles once and keeps plain names as they are. */
	CHECK(ga_strtab_init(&t) == 0);
	a = ga_strtab_intern(&t, "_Z8inc_loopPfi", 14);
	b = ga_strtab_intern(&t, "plain", 5);
	c = ga_strtab_intern(&t, "_Z8inc_loopPfi", 14);
	CHECK(a == c && a != b && a != 0);
	CHECK(ga_strtab_intern(&t, "", 0) == GA_STR_NONE);
	CHECK(!strcmp(ga_strtab_full(&t, a), "inc_loop(float*, int)"));
	CHECK(ga_strtab_full(&t, a) == ga_strtab_full(&t, a));
	CHECK(!strcmp(ga_strtab_short(&t, a), "inc_loop"));
	CHECK(!strcmp(ga_strtab_full(&t, b), "plain") && !strcmp(ga_strtab_short(&t, b), "plain"));
	CHECK(!strcmp(ga_strtab_get(&t, 12345), ""));
	ga_strtab_free(&t);
	tap_end();
}

static int json_is(const char *in, size_t len, const char *want)
{
	struct ga_buf b = { 0 };
	int ok = ga_json_escape(&b, in, len) == 0 && b.p && !strcmp(b.p, want);

	if (!ok)
		printf("# json -> %s, want %s\n", b.p ? b.p : "(null)", want);
	ga_buf_free(&b);
	return ok;
}

static int csv_is(const char *in, const char *want)
{
	struct ga_buf b = { 0 };
	int ok;

	ga_csv_escape(&b, in, strlen(in));
	ok = !strcmp(b.p ? b.p : "", want);
	if (!ok)
		printf("# csv -> %s, want %s\n", b.p ? b.p : "", want);
	ga_buf_free(&b);
	return ok;
}

static void test_json(void)
{
	tap_begin("JSON string escaping");
	CHECK(json_is("", 0, "\"\""));
	CHECK(json_is("plain", 5, "\"plain\""));
	CHECK(json_is("a\"b\\c/", 6, "\"a\\\"b\\\\c/\""));
	CHECK(json_is("\n\t\r\b\f\x01\x1f\x7f", 8, "\"\\n\\t\\r\\u0008\\u000c\\u0001\\u001f\\u007f\""));
	CHECK(json_is("a\0b", 3, "\"a\\u0000b\""));
	CHECK(json_is("caf\xc3\xa9 \xf0\x9f\x98\x80", 10, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\""));
	CHECK(json_is("\xff", 1, "\"\\ufffd\""));
	CHECK(json_is("a\xc3", 2, "\"a\\ufffd\""));                /* cut sequence */
	CHECK(json_is("\xc0\x80", 2, "\"\\ufffd\\ufffd\""));        /* overlong NUL */
	CHECK(json_is("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""));   /* surrogate */
	CHECK(json_is("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""));  /* > U+10FFFF */
	CHECK(json_is("\xe2\x82", 2, "\"\\ufffd\\ufffd\""));
	CHECK(json_is("x\xe2\x82\xacy", 5, "\"x\xe2\x82\xacy\""));
	tap_end();

	tap_begin("CSV field quoting");
	CHECK(csv_is("plain", "plain"));
	CHECK(csv_is("f(int, float)", "\"f(int, float)\""));
	CHECK(csv_is("say \"hi\"", "\"say \"\"hi\"\"\""));
	CHECK(csv_is("two\nlines", "\"two\nlines\""));
	CHECK(csv_is(" lead", "\" lead\""));
	CHECK(csv_is("", ""));
	tap_end();
}

static void test_format(void)
{
	char b[64];

	tap_begin("time, size and name formatting");
	CHECK(!strcmp(ga_fmt_time(b, sizeof(b), 0), "0 ns"));
	CHECK(!strcmp(ga_fmt_time(b, sizeof(b), 999), "999 ns"));
	CHECK(!strcmp(ga_fmt_time(b, sizeof(b), 1000), "1.000 \xc2\xb5s"));
	CHECK(!strcmp(ga_fmt_time(b, sizeof(b), 163840), "163.840 \xc2\xb5s"));
	CHECK(!strcmp(ga_fmt_time(b, sizeof(b), 2455520), "2.456 ms"));
	CHECK(!strcmp(ga_fmt_time(b, sizeof(b), 12000000000ull), "12.000 s"));
	CHECK(!strcmp(ga_fmt_bytes(b, sizeof(b), 0), "0 B"));
	CHECK(!strcmp(ga_fmt_bytes(b, sizeof(b), 1023), "1023 B"));
	CHECK(!strcmp(ga_fmt_bytes(b, sizeof(b), 1536), "1.50 KiB"));
	CHECK(!strcmp(ga_fmt_bytes(b, sizeof(b), 40000000), "38.15 MiB"));
	CHECK(!strcmp(ga_fmt_bytes(b, sizeof(b), 80.0 * (1ull << 30)), "80.00 GiB"));
	CHECK(ga_fmt_width("a\xc2\xb5s\xe2\x80\xa6") == 4);
	CHECK(!strcmp(ga_fmt_trunc(b, sizeof(b), "short", 10), "short"));
	CHECK(!strcmp(ga_fmt_trunc(b, sizeof(b), "exactly10!", 10), "exactly10!"));
	CHECK(!strcmp(ga_fmt_trunc(b, sizeof(b), "longer than ten", 10), "longer th\xe2\x80\xa6"));
	CHECK(ga_fmt_width(ga_fmt_trunc(b, sizeof(b), "longer than ten", 10)) == 10);
	CHECK(!strcmp(ga_fmt_trunc(b, sizeof(b), "\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5", 3),
		      "\xc2\xb5\xc2\xb5\xe2\x80\xa6"));
	CHECK(!strcmp(ga_fmt_trunc(b, sizeof(b), "anything", 0), "anything"));
	/* A small buffer bounds the copy, ellipsis or not. */
	ga_fmt_trunc(b, 8, "a long name here", 40);
	CHECK(strlen(b) < 8);
	ga_fmt_trunc(b, 8, "a long name here", 12);
	CHECK(strlen(b) < 8);
	tap_end();
}

static void test_table(void)
{
	static const char want[] =
		"----------------+---------+------------------------\n"
		"Time            | Device  | Activity\n"
		"----------------+---------+------------------------\n"
		"    0.021504 ms | cuda:0  | memset\n"
		"    0.163840 ms | cuda:0  | forward kernel inc_loop\n"
		"    2.455520 ms | cuda:1  | memcpy DtoH\n";
	struct ga_table t;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	tap_begin("tables reproduce Warp's layout");
	ga_table_init(&t, 3);
	ga_table_col(&t, 0, "Time", 1, 15);
	ga_table_col(&t, 1, "Device", 0, 7);
	ga_table_col(&t, 2, "Activity", 0, 0);
	ga_table_add(&t, "0.021504 ms");
	ga_table_add(&t, "cuda:0");
	ga_table_add(&t, "memset");
	ga_table_add(&t, "0.163840 ms");
	ga_table_add(&t, "cuda:0");
	ga_table_add(&t, "forward kernel inc_loop");
	ga_table_addf(&t, "%.6f ms", 2.45552);
	ga_table_add(&t, "cuda:1");
	ga_table_add(&t, "memcpy DtoH");
	ga_table_print(&t, f);
	fclose(f);
	CHECKF(out && !strcmp(out, want), "got:\n%s", out ? out : "");
	ga_table_free(&t);
	free(out);

	/* Widths count code points, so "µs" cells line up. */
	f = open_memstream(&out, &len);
	ga_table_init(&t, 2);
	ga_table_col(&t, 0, "Avg", 1, 0);
	ga_table_col(&t, 1, "Name", 0, 0);
	ga_table_add(&t, "1.000 \xc2\xb5s");
	ga_table_add(&t, "a");
	ga_table_add(&t, "12 ns");
	ga_table_add(&t, "b");
	ga_table_print(&t, f);
	fclose(f);
	CHECKF(out && !strcmp(out, "---------+-----\nAvg      | Name\n---------+-----\n"
			       "1.000 \xc2\xb5s | a\n   12 ns | b\n"), "got:\n%s", out ? out : "");
	ga_table_free(&t);
	free(out);
	tap_end();
}

/*
 * The analyzer's one hash map: inserts, lookups and removals against a
 * plain array, with keys crowded into few probe runs; then many strings
 * interned twice keep their ids.
 */
static void test_map(void)
{
	enum { N = 5000 };
	static uint32_t want[N];
	struct ga_map m = { 0 };
	struct ga_strtab t;
	uint32_t *slot, id[600];
	char name[32];
	size_t i, bad = 0;

	tap_begin("hash map: insert, find, remove; string ids stay stable");
	for (i = 0; i < N; i++) {
		CHECK(ga_map_insert(&m, i % 7, i / 7, &slot) == 1);
		*slot = want[i] = (uint32_t)(i * 2654435761u);
	}
	/* Remove every third key; the rest must still be found. */
	for (i = 0; i < N; i += 3)
		ga_map_remove(&m, i % 7, i / 7);
	for (i = 0; i < N; i++) {
		uint32_t *v = ga_map_find(&m, i % 7, i / 7);

		if (i % 3 == 0 ? v != NULL : (!v || *v != want[i]))
			bad++;
	}
	CHECKF(bad == 0, "%zu keys wrong after removals", bad);
	CHECK(m.n == N - (N + 2) / 3);
	ga_map_free(&m);

	CHECK(ga_strtab_init(&t) == 0);
	for (i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "kernel_%zu", i);
		id[i] = ga_strtab_intern(&t, name, strlen(name));
	}
	for (i = 0, bad = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "kernel_%zu", i);
		if (ga_strtab_intern(&t, name, strlen(name)) != id[i] ||
		    strcmp(ga_strtab_get(&t, id[i]), name))
			bad++;
	}
	CHECKF(bad == 0, "%zu strings changed id", bad);
	CHECK(t.n == 601);
	/* Found as interned; not found where never interned; "" is 0. */
	for (i = 0, bad = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "kernel_%zu", i);
		if (ga_strtab_find(&t, name, strlen(name)) != id[i])
			bad++;
		snprintf(name, sizeof(name), "kernel_%zu_", i);
		if (ga_strtab_find(&t, name, strlen(name)) != GA_STR_NOMEM)
			bad++;
	}
	CHECKF(bad == 0, "%zu look-ups wrong", bad);
	CHECK(ga_strtab_find(&t, "", 0) == GA_STR_NONE);
	{
		/*
		 * Every length to past two of the keys' 8-byte steps, strings
		 * that differ in one byte anywhere: told apart, and a second
		 * table gives the same ids in the same order.
		 */
		struct ga_strtab u;
		char s[41];

		CHECK(ga_strtab_init(&u) == 0);
		memset(s, 'a', sizeof(s));
		for (size_t len = 1, bad2 = 0; len <= 40; len++) {
			for (size_t at = 0; at < len; at++) {
				uint32_t a, b;

				s[at] = 'b';
				a = ga_strtab_intern(&t, s, len);
				b = ga_strtab_intern(&u, s, len);
				bad2 += a != b + 600 || ga_strtab_len(&t, a) != len ||
					memcmp(ga_strtab_get(&t, a), s, len);
				s[at] = 'a';
			}
			CHECKF(bad2 == 0, "length %zu: %zu strings wrong", len, bad2);
		}
		CHECK(u.n == 1 + 40 * 41 / 2 && t.n == 601 + 40 * 41 / 2);
		/* Interned from another table: its ids, as interning the strings gives. */
		{
			struct ga_strtab w;
			size_t bad3 = 0;

			CHECK(ga_strtab_init(&w) == 0);
			for (uint32_t i2 = 1; i2 < t.n; i2 += 3) {
				uint32_t a = ga_strtab_intern_from(&w, &t, i2);

				bad3 += a == GA_STR_NOMEM ||
					a != ga_strtab_intern(&w, ga_strtab_get(&t, i2),
							      ga_strtab_len(&t, i2)) ||
					a != ga_strtab_find(&w, ga_strtab_get(&t, i2),
							    ga_strtab_len(&t, i2));
			}
			CHECKF(bad3 == 0, "%zu strings interned from another table wrong", bad3);
			CHECK(ga_strtab_intern_from(&w, &t, 0) == GA_STR_NONE);
			CHECK(ga_strtab_intern_from(&w, &t, (uint32_t)t.n) == GA_STR_NONE);
			CHECK(w.n == 1 + (t.n - 1 + 2) / 3);
			ga_strtab_free(&w);
		}
		ga_strtab_free(&u);
	}
	ga_strtab_free(&t);
	tap_end();
}

/* ga_buf_printf appends, formatted once where it fits, else after growing. */
static void test_buf(void)
{
	struct ga_buf b = { 0 };
	char big[3000], want[4000];

	tap_begin("buffers: printf appends, in the room there is or after growing");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(ga_buf_printf(&b, "%s %d", "kernel", 7) == 0);
	CHECK(b.len == 8 && !strcmp(b.p, "kernel 7"));
	CHECK(ga_buf_printf(&b, "|%s|", big) == 0);
	snprintf(want, sizeof(want), "kernel 7|%s|", big);
	CHECK(b.len == strlen(want) && !strcmp(b.p, want));
	/* Room left after growing: the next text goes into it. */
	b.len = 3;
	b.p[3] = '\0';
	CHECK(ga_buf_printf(&b, "-%u-", 42u) == 0);
	CHECK(b.len == 7 && !strcmp(b.p, "ker-42-"));
	CHECK(ga_buf_printf(&b, "%s", "") == 0 && b.len == 7 && !strcmp(b.p, "ker-42-"));
	ga_buf_free(&b);
	tap_end();
}

/* Names alike in their first 80 columns never print alike. */
static void test_cut_unique(void)
{
	struct ga_text r = { .o = { .top = 20 } };
	char a[200], b[200], c[200];
	const char *full[4];
	char **cut = NULL;

	tap_begin("long names cut apart: ends kept, then numbered");
	memset(a, 'x', 150);
	memcpy(a + 150, "<float>(int)", 13);
	memset(b, 'x', 150);
	memcpy(b + 150, "<double>(int)", 14);
	memset(c, 'x', 150);
	memcpy(c + 150, "<double>(int)", 14);
	c[10] = 'y';               /* differs only where a middle cut drops it */
	full[0] = a;
	full[1] = b;
	full[2] = c;
	full[3] = "short_name";
	CHECK(ga_text_cut_unique(&r, full, 4, &cut) == 0 && cut);
	if (cut) {
		CHECKF(strcmp(cut[0], cut[1]) && strcmp(cut[1], cut[2]) && strcmp(cut[0], cut[2]),
		       "%s | %s | %s", cut[0], cut[1], cut[2]);
		CHECKF(strstr(cut[0], "<float>(int)") != NULL, "%s", cut[0]);
		CHECK(!strcmp(cut[3], "short_name"));
		CHECK(ga_fmt_width(cut[0]) <= GA_TEXT_NAME_WIDTH);
	}
	ga_text_cut_free(cut, 4);
	tap_end();
}

int main(void)
{
	test_cut_unique();
	test_map();
	test_buf();
	test_demangle();
	test_json();
	test_format();
	test_table();
	return tap_exit();
}
