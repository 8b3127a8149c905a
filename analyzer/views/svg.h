/*
 * The roofline chart as SVG (report --roofline-svg): log-log, arithmetic
 * intensity against FLOP/s, the device's ceilings and one dot per profiled
 * kernel, area by total time.  Pure SVG 1.1, nothing to load at view time.
 * Runs offline only.
 */
#ifndef GA_VIEWS_SVG_H
#define GA_VIEWS_SVG_H

#include <stdio.h>

#include "model/analysis.h"

/* Writes every chart (one per GPU model) to out.  0, or -1 out of memory. */
int ga_svg_roofline(struct ga_analysis *an, FILE *out);

/*
 * The same into the file path ("-": standard output), never one of the
 * n inputs.  Returns 0, or -1 after saying why on stderr.
 */
int ga_svg_roofline_write(struct ga_analysis *an, const char *path, char *const *inputs, int n);

#endif
