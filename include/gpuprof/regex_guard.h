/*
 * How large a POSIX extended regular expression grows when compiled.
 *
 * glibc's regcomp copies the expression under a bounded repetition once per
 * copy it needs: "X+" holds X twice, "X{m,n}" n times.  Stacked and nested
 * repetitions multiply, so a short pattern can take all memory: "a" followed
 * by 18 "+" took 170 MB, by 25 more than 4 GB, and "a{1000}{1000}" 210 MB;
 * copies of what can match the empty string cost the square of their
 * number ("()" under 11 "+": 318 MB).  gp_regex_size() walks the pattern as
 * regcomp parses it and returns an estimate of that cost in nodes,
 * saturating at GP_REGEX_SIZE_CAP; callers
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

/*
 * What a subexpression compiles to: its nodes, the nodes that can match the
 * empty string (regcomp computes closures over those, in time and memory
 * that grow with their square: "()" under 11 "+" took 318 MB and 2 s), and
 * whether it can itself match the empty string.
 */
struct gp_regex_cost {
	uint64_t size, eps;
	int nullable;
};

static inline void gp_regex_alt(struct gp_regex_walk *w, struct gp_regex_cost *c);

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

/* A bound "{m}", "{m,}" or "{m,n}" at *w->p: 1, its copies and its minimum, else 0. */
static inline int gp_regex_bound(struct gp_regex_walk *w, uint64_t *copies, uint64_t *min)
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
	*min = m;
	return 1;
}

/* One piece: an atom and the repetitions after it. */
static inline void gp_regex_piece(struct gp_regex_walk *w, struct gp_regex_cost *c)
{
	uint64_t copies, min;

	c->size = 1;
	c->eps = 0;
	c->nullable = 0;
	switch (*w->p) {
	case '(':
		w->p++;
		if (++w->depth > GP_REGEX_MAX_DEPTH) {
			c->size = GP_REGEX_SIZE_CAP;
			return;
		}
		gp_regex_alt(w, c);
		w->depth--;
		c->size = gp_regex_sat(c->size + 1);
		if (c->nullable)
			c->eps = gp_regex_sat(c->eps + 1);
		if (*w->p == ')')
			w->p++;
		break;
	case '[':
		gp_regex_bracket(w);
		break;
	case '\\':
		w->p += w->p[1] ? 2 : 1;
		break;
	default:
		w->p++;
		break;
	}
	for (;;) {
		if (*w->p == '*' || *w->p == '?') {
			w->p++;
			copies = 1;
			min = 0;
		} else if (*w->p == '+') {
			w->p++;
			copies = 2; /* X+ is X X* */
			min = 1;
		} else if (*w->p == '{' && gp_regex_bound(w, &copies, &min)) {
		} else {
			return;
		}
		c->size = gp_regex_sat(gp_regex_mul(c->size, copies) + copies);
		c->nullable = c->nullable || !min;
		c->eps = gp_regex_sat(gp_regex_mul(c->eps, copies) + (c->nullable ? copies : 0));
	}
}

/* Branches separated by '|', up to a ')' or the end. */
static inline void gp_regex_alt(struct gp_regex_walk *w, struct gp_regex_cost *c)
{
	struct gp_regex_cost piece;
	int branch_nullable = 1, any_nullable = 0;

	c->size = c->eps = 0;
	while (*w->p && *w->p != ')') {
		if (*w->p == '|') {
			w->p++;
			any_nullable |= branch_nullable;
			branch_nullable = 1;
			continue;
		}
		gp_regex_piece(w, &piece);
		c->size = gp_regex_sat(c->size + piece.size + 1);
		c->eps = gp_regex_sat(c->eps + piece.eps);
		branch_nullable &= piece.nullable;
		if (c->size >= GP_REGEX_SIZE_CAP)
			break;
	}
	c->nullable = any_nullable || branch_nullable;
}

/*
 * The estimated cost of ere compiled with REG_EXTENDED, in nodes: its nodes
 * and the square of its empty-matching nodes over 16 (fitted to glibc:
 * "()" under 8 "+" costs 7 MB and is allowed, under 9 costs 22 MB and is
 * not).
 */
static inline uint64_t gp_regex_size(const char *ere)
{
	struct gp_regex_walk w = { ere, 0 };
	struct gp_regex_cost c;
	uint64_t size = 0, eps = 0;

	/* An unmatched ')' is a literal to regcomp: go on past it. */
	while (*w.p) {
		gp_regex_alt(&w, &c);
		size = gp_regex_sat(size + c.size);
		eps = gp_regex_sat(eps + c.eps);
		if (*w.p == ')')
			w.p++, size = gp_regex_sat(size + 1);
		if (size >= GP_REGEX_SIZE_CAP)
			break;
	}
	return gp_regex_sat(size + gp_regex_mul(eps, eps) / 16);
}

#endif
