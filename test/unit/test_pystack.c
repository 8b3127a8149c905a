/*
 * The Python frame reader (cupti/pystack.c) in a process without CPython:
 * it says so and reads nothing (test_pystack.py checks it inside CPython).
 * Test code, runs offline only.
 */
#include <stdint.h>
#include <string.h>

#include "../../cupti/pystack.h"
#include "tap.h"

int main(void)
{
	char why[160] = "";
	uint64_t w[8], ident = 1;
	uint8_t entry[8];
	char file[64] = "x", func[64] = "y";
	uint32_t first = 7;

	tap_begin("pystack without CPython: init refuses and says why");
	CHECK(gp_py_init(why, sizeof(why)) == -1);
	CHECKF(strstr(why, "no CPython") != NULL, "why: %s", why);
	CHECK(gp_py_minor() == 0);
	tap_end();

	tap_begin("pystack without CPython: nothing is read");
	CHECK(gp_py_walk(w, entry, 8, &ident) == -1);
	CHECK(ident == 0);
	CHECK(gp_py_code_names(GP_PY_TAG | (uint64_t)(uintptr_t)&w[0], file, sizeof(file), func,
			       sizeof(func), &first) == -1);
	CHECK(gp_py_line(GP_PY_TAG | (uint64_t)(uintptr_t)&w[0]) == 0);
	CHECK(gp_py_code_ident(GP_PY_TAG | (uint64_t)(uintptr_t)&w[0]) == 0);
	CHECK(!gp_py_in_eval((uint64_t)(uintptr_t)main));
	tap_end();
	return tap_exit();
}
