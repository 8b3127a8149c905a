/*
 * Export formats ("gpuprof export --format NAME"): each is one file in
 * views/ defining a struct ga_format, listed once in views/formats.c.  A
 * format may stream (set the model's hooks in begin, see model.h) and
 * writes the rest in end, from the finished analysis.  Runs offline only.
 */
#ifndef GA_VIEWS_FORMATS_H
#define GA_VIEWS_FORMATS_H

#include <stdio.h>

#include "base/jsonw.h"
#include "base/util.h"
#include "model/analysis.h"

struct ga_export {
	FILE *out;
	struct ga_analysis *an;
	struct ga_jw jw;           /* for JSON formats, on out */
	struct ga_buf s;           /* scratch for escaping */
	const char *path;          /* needs_file formats: the (temporary) file to write */
	const struct ga_format_table *table; /* --table, for formats that have tables */
	const char *name;          /* the output as the user named it, for messages */
	void *state;               /* the format's own */
};

/* One of the tables a format can write instead of its default (--table NAME). */
struct ga_format_table {
	const char *name;
	const char *help;          /* one line for --table list */
	int streams;               /* streams activities: needs the format's sites_ahead */
	int lean;                  /* as the format's lean: the table needs none of those,
				      nor busy time */
};

struct ga_format {
	const char *name;
	const char *alias;         /* another name it answers to, or NULL */
	const char *help;          /* lines for --help, after the name column */
	int observe_sites;         /* needs launch sites counted */
	int list_frames;           /* needs the frames of each site */
	int sites_ahead;           /* streams rows that name sites: read stacks first */
	int launches;              /* needs each activity's API call (ga_ranges_launch) */
	int marks;                 /* needs each NVTX mark */
	int range_details;         /* needs each range's closing thread, category, color, payload */
	int spill_ranges;          /* reads the ranges from their external sort (ga_ranges spill);
				      2: names each activity's by index (ga_range_layout_index()) */
	int lean;                  /* writes none of the findings, launch latency, launch
				      configurations or ranks, nor the GPU samples' averages
				      over kernels: they are not analyzed; nor busy time or
				      the span (analysis.h busy_bound_ok) */
	int busy_bound_ok;         /* a GPU's busy time may be a lower bound (analysis.h):
				      the format writes none, the span it may (pprof), or
				      takes it from its rows then (SQLite, busy_bound) */
	int needs_file;            /* writes a file by name (e->path), never a stream */
	int samples;               /* writes each GPU sample: they stay in memory
				      (model/gpusamples.h keep_samples) */
	const struct ga_format_table *tables; /* --table choices, name NULL last; first default */
	/*
	 * Before reading: set hooks, write what comes first.  0, -1 out of
	 * memory, or GA_FORMAT_REPORTED after printing why on stderr.
	 */
	int (*begin)(struct ga_export *e);
	/* After reading: write the rest.  Returns as begin does. */
	int (*end)(struct ga_export *e);
	/* Release the format's state, whatever happened. */
	void (*done)(struct ga_export *e);
};

/* begin/end failed and said why. */
#define GA_FORMAT_REPORTED (-2)

/* "gpuprof: ERR" on stderr: GA_FORMAT_REPORTED. */
int ga_format_said(const char *err);

extern const struct ga_format ga_format_json, ga_format_csv, ga_format_chrome,
	ga_format_perfetto, ga_format_sqlite, ga_format_pprof,
	ga_format_prometheus;

/* The formats, NULL-terminated, in the order --help lists them. */
extern const struct ga_format *const ga_formats[];

/* The format called name (or its alias), NULL when none is. */
const struct ga_format *ga_format_find(const char *name);

/* JSON "ranks" and "steps" members (views/json-ranks.c), when the job has ranks. */
void ga_json_ranks(struct ga_jw *w, const struct ga_analysis *an);

/* JSON "findings" member (views/json-findings.c).  0, or -1 out of memory. */
int ga_json_findings(struct ga_jw *w, struct ga_analysis *an);

#endif
