/*
 * Text tables in the style of Warp's ScopedTimer report: columns joined by
 * " | ", a dashed rule with "+" under each separator, every column padded
 * to its widest cell except the last.  Runs offline only.
 *
 *     ----------------+---------+------------------------
 *     Time            | Device  | Activity
 *     ----------------+---------+------------------------
 *         0.021504 ms | cuda:0  | memset
 */
#ifndef GA_ANALYZER_TABLE_H
#define GA_ANALYZER_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "base/util.h"

#define GA_TABLE_MAXCOLS 12

struct ga_table {
	int ncols;
	const char *title[GA_TABLE_MAXCOLS];
	int right[GA_TABLE_MAXCOLS];     /* cells right-aligned (headers never are) */
	size_t width[GA_TABLE_MAXCOLS];  /* grows with the cells added */
	struct ga_buf text;              /* cells, NUL-separated */
	size_t *off;
	size_t ncells, capoff;
};

void ga_table_init(struct ga_table *t, int ncols);
void ga_table_free(struct ga_table *t);

/* Declare column col; min_width makes a column at least that wide. */
void ga_table_col(struct ga_table *t, int col, const char *title, int right,
		  size_t min_width);

/* Append one cell; rows fill left to right.  Returns 0 or -1 (memory). */
int ga_table_add(struct ga_table *t, const char *cell);
int ga_table_addf(struct ga_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print the rule, the header, the rule and every row. */
void ga_table_print(const struct ga_table *t, FILE *f);

/*
 * Pieces for tables too long to hold: set t's columns and widths, then
 * print the head once and each row as it comes.
 */
void ga_table_print_head(const struct ga_table *t, FILE *f);
void ga_table_print_row(const struct ga_table *t, FILE *f, const char *const *cells);

/*
 * Cell col of a row as ga_table_print_row() prints it (its padding,
 * control characters as '?', then " | ", or the newline after the last
 * column), appended to b: rows built in memory, or cells made once and
 * reused.  Returns 0, or -1 (memory).
 */
int ga_table_cell(const struct ga_table *t, int col, const char *s, struct ga_buf *b);

#endif
