/*
 * The options of "gpuprof report", "export" and "diff": one table
 * (options.c), each entry its long name, its short letter, its argument,
 * its help text and the commands that take it.  getopt_long's tables and
 * the "Options:" lines of each command's --help (and so the man pages,
 * which scripts/mkman.sh makes from --help) are generated from it, and
 * ga_opts_next says what is wrong with a command line the same way for
 * every command.  Runs offline only.
 */
#ifndef GA_CMD_OPTIONS_H
#define GA_CMD_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

/* The commands, as bits of struct ga_opt's cmds. */
#define GA_CMD_REPORT 0x1u
#define GA_CMD_EXPORT 0x2u
#define GA_CMD_DIFF 0x4u

/*
 * getopt values of the options without a short letter of their own (those
 * with one are the letter).  --version (GA_OPT_VERSION), --symbol-path
 * (GA_OPT_SYMBOL_PATH), the filters (GA_FILTER_OPT_*), --fold-frames and
 * --full-stacks (GA_SITES_OPT_*) and the peaks (GA_PEAKS_OPT_*) keep the
 * values their parsers know.
 */
enum ga_opt_val {
	GA_OPT_TIMELINE = 0x1400,
	GA_OPT_NO_TIMELINE,
	GA_OPT_TOP,
	GA_OPT_FULL_NAMES,
	GA_OPT_TREE,
	GA_OPT_LATENCY,
	GA_OPT_STACK_DEPTH,
	GA_OPT_NO_SYMBOLIZE,
	GA_OPT_ALIGN,
	GA_OPT_ROOFLINE_SVG,
	GA_OPT_FINDINGS,
	GA_OPT_FAIL_ON,
	GA_OPT_TABLE,
	GA_OPT_NO_FLOWS,
	GA_OPT_THRESHOLD,
	GA_OPT_FAIL_ABOVE,
	GA_OPT_JSON,
	GA_OPT_DASK,
	GA_OPT_EXACT,
};

/* Flags of an entry. */
#define GA_OPT_SHORT 0x1u          /* -LETTER is taken too (LETTER: val) */
#define GA_OPT_SHORT_SHOWN 0x2u    /* ... and --help shows it: "-t, --format FMT" */

struct ga_opt {
	const char *name;          /* NULL: a short option only */
	int val;                   /* what ga_opts_next returns for it */
	int has_arg;               /* no_argument or required_argument */
	unsigned cmds;             /* GA_CMD_* of the commands that take it */
	unsigned flags;            /* GA_OPT_SHORT, GA_OPT_SHORT_SHOWN */
	const char *arg;           /* the argument as --help writes it, after the name
				      (" N", "=top|all|none"); NULL: none */
	const char *help;          /* --help's text, lines split by '\n'; NULL: taken
				      but not listed */
};

/* The table, ended by an entry without name and val. */
extern const struct ga_opt ga_opts[];

#define GA_OPTS_MAX 64             /* entries one command takes, at most */

/* getopt_long's tables for one command. */
struct ga_opts {
	unsigned cmd;
	const char *cmdname;       /* "report", in messages */
	struct option lo[GA_OPTS_MAX + 1];
	char so[2 * GA_OPTS_MAX + 2];
};

/* Fills o with the options of cmd (named cmdname) and resets getopt's state. */
void ga_opts_init(struct ga_opts *o, unsigned cmd, const char *cmdname);

/*
 * The next option of argv[0..argc), as getopt_long: its val, optarg set,
 * or -1 at the first operand after the options.  An unknown option, one
 * without its value or a value given to one that takes none returns '?'
 * after saying so on stderr ("gpuprof report: --top needs a value (N)",
 * then "Try 'gpuprof report --help'.").
 */
int ga_opts_next(struct ga_opts *o, int argc, char **argv);

struct ga_analysis_opts;
struct ga_peaks_opt;
struct ga_filter;

/* Where the options report and export read the same way go; NULL: not taken. */
struct ga_opts_to {
	struct ga_analysis_opts *ao;   /* --stack-depth, --no-symbolize, --symbol-path,
					  --align, --latency, --exact */
	struct ga_peaks_opt *po;       /* --peaks-dir, --spec-peaks */
	const char **fold;             /* --fold-frames, --full-stacks (sites.h) */
	struct ga_filter *flt;         /* --nvtx, --kernel, --device, --kind */
};

/*
 * Takes option c (and its arg) when it is one of those, or -j
 * (ga_reader_jobs), which diff takes too.  Returns 1 when it was, 0 when
 * not, -1 after saying why its value is wrong on stderr.
 */
int ga_opts_analysis(const struct ga_opts *o, int c, const char *arg,
		     const struct ga_opts_to *to);

/* The "Options:" lines of cmd's --help, one option (with its text) each. */
void ga_opts_help(unsigned cmd, FILE *f);

#endif
