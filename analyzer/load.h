/*
 * Loading traces for a subcommand: read each file into the model, print
 * errors and damage warnings on stderr.  Runs offline only.
 */
#ifndef GP_ANALYZER_LOAD_H
#define GP_ANALYZER_LOAD_H

#include "model.h"
#include "util.h"

/*
 * Read paths[0..n) into m and finish it.  A file that cannot be read at
 * all is an error ("gpuprof: FILE: byte N: ..." on stderr); damage is a
 * warning.  Returns 0, or -1 after printing why.
 */
int gp_load_traces(struct gp_model *m, char *const *paths, int n);

/* Append the warnings about m to out, one line each, without prefixes. */
int gp_load_warnings(const struct gp_model *m, struct gp_buf *out);

#endif
