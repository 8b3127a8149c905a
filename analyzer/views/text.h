/*
 * The text report's views: each table of "gpuprof report" is one section,
 * in a file of its own (views/text-*.c), listed once in views/text.c.
 * A section reads the finished analysis (model/analysis.h) and prints; it
 * computes nothing the model should hold.  Runs offline only.
 */
#ifndef GA_VIEWS_TEXT_H
#define GA_VIEWS_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"
#include "model/analysis.h"
#include "views/table.h"

#define GA_TEXT_NAME_WIDTH 80          /* columns of a name before it is cut */
#define GA_TEXT_AUTO_TIMELINE_MAX 50   /* timelines this short print by default */
#define GA_TEXT_DEFAULT_TOP 20
#define GA_TEXT_LABEL_WIDTH 14         /* the header's field labels */
#define GA_TEXT_HEADER_LIST 16         /* files, processes, GPUs the header lists; more are summed up */
#define GA_TEXT_SITE_KERNELS 5         /* kernels whose launch sites are listed, unless --top */

struct ga_text_opts {
	int timeline;              /* -1: when short, 0: never, 1: always */
	long top;                  /* rows of the kernel and API tables; 0: all */
	int top_set;               /* --top given */
	int full_names;            /* never cut names */
	int tree;                  /* --tree */
	int findings;              /* --findings: GA_FINDINGS_* */
};

/* --findings=top (the default), all, none. */
#define GA_FINDINGS_TOP 0
#define GA_FINDINGS_ALL 1
#define GA_FINDINGS_NONE 2

/* Column widths shared by the Warp-style tables. */
struct ga_warp_cols {
	size_t time_w, dev_w, act_w;
};

/* What every section reads. */
struct ga_text {
	struct ga_analysis *an;
	struct ga_model *m;        /* &an->m */
	struct ga_text_opts o;
	struct ga_warp_cols wc;    /* set by ga_text_report() */
};

/*
 * One section: want (NULL: always) says whether it prints at all; print
 * returns 0, or -1 when memory runs out.  Sections after the first are
 * preceded by a blank line.
 */
struct ga_text_section {
	const char *name;
	int (*want)(const struct ga_text *r);
	int (*print)(struct ga_text *r, FILE *out);
};

extern const struct ga_text_section ga_text_header, ga_text_timeline, ga_text_summary,
	ga_text_kernels, ga_text_launch, ga_text_latency, ga_text_roofline, ga_text_sites,
	ga_text_ranges, ga_text_tree, ga_text_memory, ga_text_memuse, ga_text_api,
	ga_text_ranks, ga_text_findings;
/* The GPU over time: sampled metrics and telemetry (text-overtime.c). */
extern const struct ga_text_section ga_text_overtime;

/* One finding as the report prints it, numbered n (text-findings.c). */
void ga_text_finding(const struct ga_text *r, const struct ga_finding *f, size_t n, FILE *out);

/* The header's "Metrics:" line, when the traces have metrics (text-roofline.c). */
void ga_text_metrics_header(const struct ga_mx *mx, struct ga_model *m, FILE *out, int lw);

/* Print every section that wants to.  Returns 0, or -1 out of memory. */
int ga_text_report(struct ga_text *r, FILE *out);

/*
 * The tree and launch-site tables on their own (tests call them): width 0
 * never cuts names; rows 0 lists every site; top_kernels: kernels whose
 * top sites are listed.  Both return 0, or -1 out of memory.
 */
int ga_text_tree_print(const struct ga_ranges *rg, struct ga_model *m, const struct ga_mx *mx,
		       size_t width, FILE *out);
int ga_text_sites_print(const struct ga_sites *st, struct ga_model *m, size_t rows,
			size_t top_kernels, size_t width, FILE *out);

/* ---- shared pieces (views/text-common.c) ---- */

/* A header field's label, padded to GA_TEXT_LABEL_WIDTH. */
void ga_text_field(FILE *out, const char *label);

/* s itself with --full-names, else s cut to GA_TEXT_NAME_WIDTH columns in buf. */
const char *ga_text_name_cut(const struct ga_text *r, char *buf, size_t n, const char *s);

/*
 * The n names cut as ga_text_name_cut() does, except that names that
 * would read alike once cut keep both ends ("head…tail") and, if that is
 * not enough, get a number: two different names never print the same.
 * *out: n strings for ga_text_cut_free().  0, or -1 out of memory.
 */
int ga_text_cut_unique(const struct ga_text *r, const char *const *full, size_t n, char ***out);
void ga_text_cut_free(char **cut, size_t n);

/* s cut to width columns in buf; width 0: s itself. */
const char *ga_text_cut(char *buf, size_t n, const char *s, size_t width);

/* Warp's duration format: milliseconds with six decimals, exact for ns. */
const char *ga_text_warp_ms(char *buf, size_t n, uint64_t ns);

/* v * scale in b with three significant digits or fewer ("1000", "75.0", "2.50"); NaN: "-". */
const char *ga_text_avg(char *b, size_t n, double v, double scale);

double ga_text_pct(uint64_t part, uint64_t whole);

void ga_text_warp_widths(const struct ga_model *m, const struct ga_text *r,
			 struct ga_warp_cols *c);
void ga_text_warp_table(struct ga_table *t, const struct ga_warp_cols *c, const char *h0,
			const char *h1, const char *h2, int count_col);
/* An activity label's text, cut unless --full-names. */
const char *ga_text_label(const struct ga_model *m, const struct ga_text *r,
			  uint32_t label, char *buf, size_t n);

/* "… N more WHAT (use --top 0 for all)" when rows were left out. */
void ga_text_more_line(FILE *out, size_t shown, size_t n, const char *what);

/* The columns Time(%) .. StdDev shared by the statistics tables, and a row of them. */
#define GA_TEXT_STAT_COLS 8
void ga_text_stat_cols(struct ga_table *t);
int ga_text_stat_row(struct ga_table *t, uint64_t total, uint64_t all, uint64_t count,
		     uint64_t med, uint64_t min, uint64_t max, uint64_t stddev);
/* The same with a median that was estimated (model/quantile.h): "~" before it. */
int ga_text_stat_row_est(struct ga_table *t, uint64_t total, uint64_t all, uint64_t count,
			 uint64_t med, int med_est, uint64_t min, uint64_t max, uint64_t stddev);

/* The columns P90 and P99 from col on, and a row's cells ("~" before estimates). */
#define GA_TEXT_PCT_COLS 2
void ga_text_pct_cols(struct ga_table *t, int col);
int ga_text_pct_row(struct ga_table *t, uint64_t p90, uint64_t p99, int est);

#endif
