/*
 * Minimal check helper for the unit tests.  Each test binary prints one
 * line per group of checks, "ok - NAME" or "not ok - NAME: WHY" (the first
 * failure), and exits non-zero when any group failed; the suite runner
 * aggregates those lines.  Test code, runs offline only.
 *
 *     tap_begin("reader round trip");
 *     CHECK(n == 3);
 *     CHECKF(a == b, "a %d, b %d", a, b);
 *     tap_end();
 *     ...
 *     return tap_exit();
 *
 * A group of one check fits on one line, and tap_done() is another name
 * for tap_exit():
 *
 *     TAP_CHECK("name", cond, "why %d", x);    (the reason may be "")
 */
#ifndef GP_TEST_TAP_H
#define GP_TEST_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct tap_state {
	const char *group;
	int failed;                /* in the current group */
	int groups_failed;
	char why[1200];
};

static struct tap_state tap_st;

static inline void tap_begin(const char *group)
{
	tap_st.group = group;
	tap_st.failed = 0;
	tap_st.why[0] = '\0';
}

static inline void tap_fail(const char *file, int line, const char *what)
{
	if (tap_st.failed++)
		return;
	snprintf(tap_st.why, sizeof(tap_st.why), "%s:%d: %s", file, line, what);
}

static inline int tap_end(void)
{
	if (tap_st.failed) {
		tap_st.groups_failed++;
		printf("not ok - %s: %s\n", tap_st.group, tap_st.why);
	} else {
		printf("ok - %s\n", tap_st.group);
	}
	fflush(stdout);
	return !tap_st.failed;
}

static inline int tap_exit(void)
{
	return tap_st.groups_failed ? 1 : 0;
}

/*
 * No format attribute, so that "" is an accepted reason: the arguments are
 * not type-checked, keep them simple.
 */
static inline void tap_failf(const char *file, int line, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	tap_fail(file, line, why[0] ? why : "failed");
}

static inline int tap_done(void)
{
	return tap_exit();
}


#define CHECK(cond)                                                  \
	do {                                                         \
		if (!(cond))                                         \
			tap_fail(__FILE__, __LINE__, #cond);         \
	} while (0)

#define CHECKF(cond, ...)                                            \
	do {                                                         \
		if (!(cond))                                         \
			tap_failf(__FILE__, __LINE__, __VA_ARGS__);  \
	} while (0)

/* Token for token the same as earlier local copies, so they may coexist. */
#define TAP_CHECK(name, cond, ...)          \
	do {                                \
		tap_begin(name);            \
		CHECKF(cond, __VA_ARGS__);  \
		tap_end();                  \
	} while (0)

#endif
