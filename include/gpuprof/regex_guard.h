/*
 * How large a POSIX extended regular expression grows when compiled.
 *
 * glibc's regcomp copies the expression under a bounded repetition once per
 * copy it needs: "X+" holds X twice, "X{m,n}" n times.  Stacked and nested
 * repetitions multiply, so a short pattern can take all memory: "a" followed
 * by 18 "+" took 170 MB, by 25 more than 4 GB, and "a{1000}{1000}" 210 MB.
 * gp_regex_size() walks the pattern as regcomp parses it and returns an
 * estimate of its node count, saturating at GP_REGEX_SIZE_CAP; callers
 * refuse a pattern above GP_REGEX_MAX_NODES (50000 nodes, a few tens of MB)
 * before calling regcomp.  It does not judge validity: regcomp reports a
 * malformed pattern itself.  Header-only, used by the analyzer's filters and
 * by the recorder's metrics selection.
 */
#ifndef GPUPROF_REGEX_GUARD_H
#define GPUPROF_REGEX_GUARD_H

#include <stdint.h>

#define GP_REGEX_MAX_NODES 50000u
#define GP_REGEX_SIZE_CAP (1ull << 40)
#define GP_REGEX_MAX_DEPTH 256

struct gp_regex_walk {
	const char *p;
	int depth;
};

static inline uint64_t gp_regex_sat(uint64_t v)
{
	return v > GP_REGEX_SIZE_CAP ? GP_REGEX_SIZE_CAP : v;
}

static inline uint64_t gp_regex_mul(uint64_t a, uint64_t b)
{
	return a && b > GP_REGEX_SIZE_CAP / a ? GP_REGEX_SIZE_CAP : gp_regex_sat(a * b);
}

static inline uint64_t gp_regex_alt(struct gp_regex_walk *w);

/* A bracket expression from its '[': one node; *w->p left after its ']'. */
static inline void gp_regex_bracket(struct gp_regex_walk *w)
{
	const char *p = w->p + 1;

	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			char end = p[1];

			p += 2;
			while (*p && !(*p == end && p[1] == ']'))
				p++;
			if (*p)
				p += 2;
			continue;
		}
		p++;
	}
	w->p = *p ? p + 1 : p;
}

/* A bound "{m}", "{m,}" or "{m,n}" at *w->p: 1 and the copies it makes, else 0. */
static inline int gp_regex_bound(struct gp_regex_walk *w, uint64_t *copies)
{
	const char *p = w->p + 1;
	uint64_t m = 0, n;

	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		m = gp_regex_sat(m * 10 + (uint64_t)(*p++ - '0'));
	n = m;
	if (*p == ',') {
		p++;
		if (*p >= '0' && *p <= '9') {
			n = 0;
			while (*p >= '0' && *p <= '9')
				n = gp_regex_sat(n * 10 + (uint64_t)(*p++ - '0'));
		} else {
			n = m + 1; /* {m,}: m copies and a starred one */
		}
	}
	if (*p != '}')
		return 0;
	w->p = p + 1;
	*copies = n > m ? n : m;
	if (!*copies)
		*copies = 1;
	return 1;
}

/* One piece: an atom and the repetitions after it. */
static inline uint64_t gp_regex_piece(struct gp_regex_walk *w)
{
	uint64_t size, copies;

	switch (*w->p) {
	case '(':
		w->p++;
		if (++w->depth > GP_REGEX_MAX_DEPTH)
			return GP_REGEX_SIZE_CAP;
		size = gp_regex_sat(gp_regex_alt(w) + 1);
		w->depth--;
		if (*w->p == ')')
			w->p++;
		break;
	case '[':
		gp_regex_bracket(w);
		size = 1;
		break;
	case '\\':
		w->p += w->p[1] ? 2 : 1;
		size = 1;
		break;
	default:
		w->p++;
		size = 1;
		break;
	}
	for (;;) {
		if (*w->p == '*' || *w->p == '?') {
			w->p++;
			size = gp_regex_sat(size + 1);
		} else if (*w->p == '+') {
			w->p++;
			size = gp_regex_sat(gp_regex_mul(size, 2) + 1);
		} else if (*w->p == '{' && gp_regex_bound(w, &copies)) {
			size = gp_regex_sat(gp_regex_mul(size, copies) + copies);
		} else {
			return size;
		}
	}
}

/* Branches separated by '|', up to a ')' or the end. */
static inline uint64_t gp_regex_alt(struct gp_regex_walk *w)
{
	uint64_t size = 0;

	while (*w->p && *w->p != ')') {
		if (*w->p == '|') {
			w->p++;
			continue;
		}
		size = gp_regex_sat(size + gp_regex_piece(w) + 1);
		if (size >= GP_REGEX_SIZE_CAP)
			return size;
	}
	return size;
}

/* The estimated node count of ere compiled with REG_EXTENDED. */
static inline uint64_t gp_regex_size(const char *ere)
{
	struct gp_regex_walk w = { ere, 0 };
	uint64_t size = 0;

	/* An unmatched ')' is a literal to regcomp: go on past it. */
	while (*w.p) {
		size = gp_regex_sat(size + gp_regex_alt(&w));
		if (*w.p == ')')
			w.p++, size = gp_regex_sat(size + 1);
		if (size >= GP_REGEX_SIZE_CAP)
			break;
	}
	return size;
}

#endif
