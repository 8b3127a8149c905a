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
 * A group of one check can be written in one line:
 *
 *     TAP_CHECK("name", cond, "why %d", x);    (the why format may be "")
 *     ...
 *     return tap_done();
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

/* No format attribute: callers pass "" when there is nothing to add. */
static inline int tap_check(const char *name, int ok, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	tap_begin(name);
	if (!ok) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		tap_fail("check", 0, why[0] ? why : "failed");
		snprintf(tap_st.why, sizeof(tap_st.why), "%s", why[0] ? why : "failed");
	}
	return tap_end();
}

static inline int tap_done(void)
{
	return tap_exit();
}

#define TAP_CHECK(name, cond, ...) tap_check((name), (cond) ? 1 : 0, __VA_ARGS__)

#define CHECK(cond)                                                  \
	do {                                                         \
		if (!(cond))                                         \
			tap_fail(__FILE__, __LINE__, #cond);         \
	} while (0)

#define CHECKF(cond, ...)                                            \
	do {                                                         \
		if (!(cond)) {                                       \
			char tap_msg_[1024];                          \
			snprintf(tap_msg_, sizeof(tap_msg_), __VA_ARGS__); \
			tap_fail(__FILE__, __LINE__, tap_msg_);      \
		}                                                    \
	} while (0)

#endif
