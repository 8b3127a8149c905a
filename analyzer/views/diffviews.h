/*
 * How "gpuprof diff" prints a comparison (model/compare.h): a text table
 * (text-diff.c) or JSON (json-diff.c).  Runs offline only.
 */
#ifndef GA_VIEWS_DIFFVIEWS_H
#define GA_VIEWS_DIFFVIEWS_H

#include <stdio.h>

#include "model/compare.h"

struct ga_diff_view {
	const char *base, *nw;     /* how the two sides are named */
	double threshold;          /* hide items that changed less, percent; 0 shows all */
	double fail_above;         /* --fail-above, percent; < 0 when not given */
	long top;                  /* text: rows per kind (kernels, API, ...); 0: all */
	int full_names;            /* text: never cut names */
};

/* Both return 0, or -1 out of memory; write errors stay in out's error flag. */
int ga_diff_print_text(FILE *out, const struct ga_diff *d, const struct ga_diff_view *v);
int ga_diff_print_json(FILE *out, const struct ga_diff *d, const struct ga_diff_view *v);

#endif
