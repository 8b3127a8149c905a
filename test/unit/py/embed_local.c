/*
 * The Python frame reader (cupti/pystack.c) in a program that embeds
 * CPython through a libpython3 loaded with RTLD_LOCAL, so that none of the
 * interpreter's symbols is in the global scope: gp_py_init must still find
 * it, and a walk from inside a call (a profile function, called with the
 * callee's frame pushed) must name the Python functions on the stack with
 * their lines.  Prints "ok - ..." / "not ok - ..." lines, or "skip - ..."
 * when no shared libpython3 is installed.  Test code, runs offline only.
 *
 *     pyembed_local [LIBPYTHON]
 */
#include "../../../cupti/pystack.h"
#include "../tap.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>

typedef int (*profile_fn)(void *obj, void *frame, int what, void *arg);

/* Under ASan: the interpreter keeps allocations for the life of the process. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static char stack[1024];           /* "func:line ..." of the walk inside inner() */

static int on_profile(void *obj, void *frame, int what, void *arg)
{
	uint64_t w[16], ident;
	char file[512], func[128];
	uint32_t first;
	int n;
	size_t at = 0;

	(void)obj;
	(void)frame;
	(void)arg;
	if (what != 0 || stack[0]) /* PyTrace_CALL, once */
		return 0;
	n = gp_py_walk(w, NULL, 16, &ident);
	if (n < 1 || gp_py_code_names(w[0], file, sizeof(file), func, sizeof(func), &first) ||
	    strcmp(func, "inner"))
		return 0;
	for (int i = 0; i < n && at < sizeof(stack) - 1; i++) {
		if (gp_py_code_names(w[i], file, sizeof(file), func, sizeof(func), &first))
			snprintf(func, sizeof(func), "?");
		at += (size_t)snprintf(stack + at, sizeof(stack) - at, "%s%s:%u", i ? " " : "", func,
				       gp_py_line(w[i]));
	}
	return 0;
}

static const char *find_lib(char *buf, size_t bufsz)
{
	static const char *const pats[] = {
		"/usr/lib/x86_64-linux-gnu/libpython3.*.so.1.0", "/usr/lib/aarch64-linux-gnu/libpython3.*.so.1.0",
		"/usr/lib64/libpython3.*.so.1.0", "/usr/local/lib/libpython3.*.so.1.0",
		"/usr/lib/libpython3.*.so.1.0",
	};

	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		glob_t g;

		if (glob(pats[i], 0, NULL, &g) == 0 && g.gl_pathc) {
			snprintf(buf, bufsz, "%s", g.gl_pathv[0]);
			globfree(&g);
			return buf;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char path[512], why[256] = "";
	const char *lib = argc > 1 ? argv[1] : find_lib(path, sizeof(path));
	void *h;
	void (*init)(int);
	int (*run)(const char *);
	void (*set_profile)(profile_fn, void *);
	int *no_site;

	if (!lib) {
		printf("skip - pystack in an embedded RTLD_LOCAL libpython # no shared libpython3 installed\n");
		return 0;
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("skip - pystack in an embedded RTLD_LOCAL libpython # %s\n", dlerror());
		return 0;
	}
	tap_begin("libpython loaded RTLD_LOCAL: its symbols are not global");
	CHECK(dlsym(RTLD_DEFAULT, "Py_GetVersion") == NULL);
	init = (void (*)(int))dlsym(h, "Py_InitializeEx");
	run = (int (*)(const char *))dlsym(h, "PyRun_SimpleString");
	set_profile = (void (*)(profile_fn, void *))dlsym(h, "PyEval_SetProfile");
	no_site = (int *)dlsym(h, "Py_NoSiteFlag");
	CHECK(init && run && set_profile);
	tap_end();
	if (!init || !run || !set_profile)
		return tap_exit();
	if (no_site)
		*no_site = 1; /* site would import extension modules, which need global symbols */
	init(0);

	tap_begin("gp_py_init finds the RTLD_LOCAL libpython");
	CHECKF(gp_py_init(why, sizeof(why)) == 0, "%s", why);
	CHECKF(gp_py_minor() >= 9, "minor %d", gp_py_minor());
	tap_end();

	tap_begin("a walk inside a call names the Python functions and lines");
	set_profile(on_profile, NULL);
	CHECK(run("def inner():\n"      /* line 1 */
		  "    return 1\n"       /* line 2 */
		  "def outer():\n"       /* line 3 */
		  "    return inner()\n" /* line 4 */
		  "outer()\n") == 0);    /* line 5 */
	set_profile(NULL, NULL);
	CHECKF(!strcmp(stack, "inner:1 outer:4 <module>:5"), "walk gave '%s'", stack);
	tap_end();
	return tap_exit();
}
