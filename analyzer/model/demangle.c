/*
 * Kernel name demangling (see demangle.h).  Runs offline only.
 */
#include "model/demangle.h"

#include <stdlib.h>
#include <string.h>

/* From libstdc++'s ABI support; the analyzer links -lstdc++ for it. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *ga_demangle_full(const char *name)
{
	int status = 0;
	char *d;

	/* Only "_Z" names are mangled; the demangler would take "i" for int. */
	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(d);
		return NULL;
	}
	return d;
}

static int opener(char c)
{
	return c == '(' || c == '<' || c == '[' || c == '{';
}

static int closer(char c)
{
	return c == ')' || c == '>' || c == ']' || c == '}';
}

/*
 * Does "operator" end at s[i - 1] as a word?  Inside an operator name the
 * bracket characters are the operator, not nesting ("operator<", "operator()").
 */
static size_t operator_len(const char *s, size_t i)
{
	static const char kw[] = "operator";
	size_t k = sizeof(kw) - 1;

	if (i < k || memcmp(s + i - k, kw, k) != 0)
		return 0;
	if (i > k && (s[i - k - 1] == '_' || (s[i - k - 1] >= 'a' && s[i - k - 1] <= 'z') ||
		      (s[i - k - 1] >= 'A' && s[i - k - 1] <= 'Z') ||
		      (s[i - k - 1] >= '0' && s[i - k - 1] <= '9')))
		return 0;
	/* Length of the operator token that follows. */
	if (!strncmp(s + i, "()", 2) || !strncmp(s + i, "[]", 2) ||
	    !strncmp(s + i, "<<", 2) || !strncmp(s + i, ">>", 2) ||
	    !strncmp(s + i, "<=", 2) || !strncmp(s + i, ">=", 2) ||
	    !strncmp(s + i, "->", 2))
		return 2;
	if (s[i] == '<' || s[i] == '>')
		return 1;
	return 0;
}

char *ga_demangle_short(const char *s)
{
	size_t n = strlen(s), i, name_end = n, name_start = 0;
	int depth = 0;
	char *out;

	/*
	 * Find the parameter list: the first '(' at depth 0 that is not part of
	 * an operator name or "(anonymous namespace)", scanning left to right.
	 */
	for (i = 0; i < n; i++) {
		size_t op = operator_len(s, i);

		if (op) {
			i += op - 1;
			continue;
		}
		if (depth == 0 && s[i] == '(' &&
		    strncmp(s + i, "(anonymous namespace)", 21) != 0) {
			name_end = i;
			break;
		}
		if (opener(s[i]))
			depth++;
		else if (closer(s[i]) && depth > 0)
			depth--;
	}
	/* The return type ends at the last space at depth 0 before the name. */
	depth = 0;
	for (i = 0; i < name_end; i++) {
		size_t op = operator_len(s, i);

		if (op) {
			i += op - 1;
			continue;
		}
		if (opener(s[i]))
			depth++;
		else if (closer(s[i]) && depth > 0)
			depth--;
		else if (depth == 0 && s[i] == ' ')
			name_start = i + 1;
	}
	if (name_start >= name_end) {
		name_start = 0;
		name_end = n;
	}
	out = malloc(name_end - name_start + 1);
	if (!out)
		return NULL;
	memcpy(out, s + name_start, name_end - name_start);
	out[name_end - name_start] = '\0';
	return out;
}
