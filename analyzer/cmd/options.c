/*
 * The one table of the options of "gpuprof report", "export" and "diff"
 * (see options.h), their getopt_long tables and their --help lines.  An
 * option that means one thing everywhere is one entry; where a command
 * words its help its own way, the option has an entry per wording.  The
 * order of the table is the order of every --help.  Runs offline only.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "model/align.h"
#include "model/analysis.h"
#include "model/filter.h"
#include "model/peaks-measured.h"
#include "model/sites.h"

#define R GA_CMD_REPORT
#define E GA_CMD_EXPORT
#define D GA_CMD_DIFF
#define NO no_argument
#define REQ required_argument
#define SHOWN (GA_OPT_SHORT | GA_OPT_SHORT_SHOWN)

const struct ga_opt ga_opts[] = {
	{ "timeline", GA_OPT_TIMELINE, NO, R, 0, NULL,
	  "print the CUDA timeline, one line per GPU activity\n"
	  "(the default when there are at most 50)" },
	{ "no-timeline", GA_OPT_NO_TIMELINE, NO, R, 0, NULL, "never print the timeline" },
	{ "format", 't', REQ, E, SHOWN, " FMT",
	  "json, csv, chrome, perfetto, sqlite, pprof or\n"
	  "prometheus (required; --type FMT as in nsys\n"
	  "export)" },
	{ "type", 't', REQ, E, 0, " FMT", NULL },
	/* -f is --force in gpuprof run, as in nsys: export says so, never takes it for -t. */
	{ NULL, 'f', NO, E, GA_OPT_SHORT, NULL, NULL },
	{ "output", 'o', REQ, E, SHOWN, " OUT",
	  "write to OUT instead of standard output (sqlite:\n"
	  "required, a file)" },
	{ "table", GA_OPT_TABLE, REQ, E, 0, " NAME",
	  "csv: write table NAME ('--table list' lists them;\n"
	  "default activities)" },
	{ "threshold", GA_OPT_THRESHOLD, REQ, D, 0, " PCT",
	  "hide items whose time changed by less than PCT\n"
	  "percent (either way)" },
	{ "fail-above", GA_OPT_FAIL_ABOVE, REQ, D, 0, " PCT",
	  "exit with status 3 when any item's time (or peak\n"
	  "memory) grew by more than PCT percent (items\n"
	  "only in NEW count as grown); for CI" },
	{ "json", GA_OPT_JSON, NO, D, 0, NULL, "print JSON instead of a table" },
	/* report has taken -n for --top since its first version. */
	{ "top", 'n', REQ, R, GA_OPT_SHORT, " N",
	  "rows in the kernel, API, device and rank tables\n"
	  "(default 20, 0: all); files, processes and GPUs\n"
	  "the header lists one by one (default 16)" },
	{ "top", GA_OPT_TOP, REQ, D, 0, " N",
	  "rows per kind in the table: kernels, memory\n"
	  "operations, NVTX ranges, API functions (default\n"
	  "20, 0: all; --json has every row)" },
	{ "full-names", GA_OPT_FULL_NAMES, NO, R, 0, NULL, "do not shorten long kernel names" },
	{ "full-names", GA_OPT_FULL_NAMES, NO, D, 0, NULL, "do not shorten long names in the table" },
	{ "tree", GA_OPT_TREE, NO, R, 0, NULL,
	  "print the NVTX range tree: ranges, nested ranges and\n"
	  "the kernels and copies launched in them" },
	/* The launch-latency table and JSON are always there: still taken. */
	{ "latency", GA_OPT_LATENCY, NO, R | E, 0, NULL, NULL },
	{ "stack-depth", GA_OPT_STACK_DEPTH, REQ, R, 0, " N",
	  "frames of a launch site (default 3), for traces\n"
	  "recorded with --backtrace" },
	{ "stack-depth", GA_OPT_STACK_DEPTH, REQ, E, 0, " N", "frames of a launch site (default 3)" },
	{ "no-symbolize", GA_OPT_NO_SYMBOLIZE, NO, R | E, 0, NULL,
	  "do not look launch-site frames up in the symbols and\n"
	  "debug information of their modules" },
	{ "symbol-path", GA_OPT_SYMBOL_PATH, REQ, R, 0, " DIR[:DIR...]",
	  "also look for modules there (DIR/.build-id/xx/rest.debug,\n"
	  "DIR/.build-id/xx/rest, DIR/NAME); a file is used only\n"
	  "when its build-id is the one recorded" },
	{ "symbol-path", GA_OPT_SYMBOL_PATH, REQ, E, 0, " DIR[:DIR...]",
	  "also look for modules there, as gpuprof report does" },
	{ "fold-frames", GA_SITES_OPT_FOLD, REQ, R, 0, " PATTERN[,PATTERN...]",
	  "Python frames launch sites leave out: a frame whose\n"
	  "file contains PATH, for each PATH or PATH:FUNCTION;\n"
	  "'default' is the default list: Triton, torch's\n"
	  "_inductor, _dynamo and _functorch, autograd's\n"
	  "Function, nn.Module's call plumbing, <string>" },
	{ "fold-frames", GA_SITES_OPT_FOLD, REQ, E, 0, " PATTERN[,PATTERN...]",
	  "Python frames launch sites leave out, as gpuprof\n"
	  "report does ('default': the default list)" },
	{ "full-stacks", GA_SITES_OPT_FULL, NO, R | E, 0, NULL, "fold no frames" },
	{ "dask", GA_OPT_DASK, REQ, E, 0, " ADDRESS",
	  "json: summarize each trace as a task on the Dask\n"
	  "cluster at ADDRESS (env: DASK_SCHEDULER_ADDRESS), as\n"
	  "gpuprof report --dask does" },
	{ "align", GA_OPT_ALIGN, REQ, R, 0, " nccl",
	  "align the ranks' clocks by the ends of their NCCL\n"
	  "collectives (which finish together) and print the\n"
	  "correction applied to each rank" },
	{ "align", GA_OPT_ALIGN, REQ, E, 0, " nccl",
	  "align the ranks' clocks by the ends of their NCCL\n"
	  "collectives (as gpuprof report --align nccl)" },
	{ "roofline-svg", GA_OPT_ROOFLINE_SVG, REQ, R, 0, " FILE",
	  "also draw the roofline chart of the traces recorded\n"
	  "with --metrics into FILE (SVG, one chart per GPU\n"
	  "model; '-': standard output, then no text report)" },
	{ "peaks-dir", GA_PEAKS_OPT_DIR, REQ, R, 0, " DIR",
	  "use the peaks that 'gpuprof calibrate' measured and\n"
	  "stored in DIR for GPUs of the same model (the gpuprof\n"
	  "command passes its default place)" },
	{ "peaks-dir", GA_PEAKS_OPT_DIR, REQ, E, 0, " DIR",
	  "metrics: use the peaks that 'gpuprof calibrate'\n"
	  "measured and stored in DIR for GPUs of the same\n"
	  "model (the gpuprof command passes its default\n"
	  "place), as gpuprof report does" },
	{ "spec-peaks", GA_PEAKS_OPT_SPEC, NO, R, 0, NULL,
	  "ignore measured peaks: ceilings from specifications" },
	{ "spec-peaks", GA_PEAKS_OPT_SPEC, NO, E, 0, NULL,
	  "metrics: ceilings from specifications only" },
	{ "findings", GA_OPT_FINDINGS, REQ, R, 0, "=top|all|none",
	  "the Findings section first: those above info, five at\n"
	  "most (top, the default), every one (all), or none" },
	{ "fail-on", GA_OPT_FAIL_ON, REQ, R, 0, "=RULE[,RULE...]|SEVERITY",
	  "exit with status 3 when one of these rules fires, or a\n"
	  "finding of this severity or above (info, warning,\n"
	  "critical); rules: gpu-starvation, launch-bound,\n"
	  "sync-copy, pageable-copy, tiny-copies, host-sync,\n"
	  "serialized-streams, alloc-churn, occupancy,\n"
	  "tail-effect, below-roof, memory-bound, fp32-gemm,\n"
	  "nccl-exposed, straggler, startup, staged-peer-copy,\n"
	  "incomplete-trace" },
	{ "dask", GA_OPT_DASK, REQ, R, 0, " ADDRESS",
	  "summarize each trace as a task on the Dask cluster at\n"
	  "ADDRESS (tcp://HOST:PORT; env: DASK_SCHEDULER_ADDRESS)\n"
	  "and report the merged summaries; FILE may be a quoted\n"
	  "pattern ('job-*.gpuprof'); paths must be the same on\n"
	  "the workers" },
	{ "no-flows", GA_OPT_NO_FLOWS, NO, E, 0, NULL,
	  "chrome, perfetto: no arrows from API calls to the\n"
	  "GPU work they launched (they need about 20 bytes\n"
	  "per launch while the export runs)" },
	{ "exact", GA_OPT_EXACT, NO, R | E, 0, NULL,
	  "keep every duration, for exact medians, p90 and p99\n"
	  "whatever the size (memory grows by 4 bytes a kernel,\n"
	  "API call, memory operation and launch; by default a\n"
	  "table row keeps 65536 durations, then a histogram:\n"
	  "within " GA_QUANT_REL_ERR_TEXT ", marked ~)" },
	{ "jobs", 'j', REQ, R | E | D, SHOWN, " N",
	  "threads that decode each trace (default 0: one per\n"
	  "CPU available, at most 64; 1: one thread)" },
	{ "nvtx", GA_FILTER_OPT_NVTX, REQ, R | E, 0, " REGEX",
	  "keep GPU activities launched inside an NVTX range\n"
	  "(at any depth) whose name matches REGEX" },
	{ "kernel", GA_FILTER_OPT_KERNEL, REQ, R | E, 0, " REGEX",
	  "keep kernels whose demangled name matches REGEX\n"
	  "(other kinds are dropped)" },
	{ "device", GA_FILTER_OPT_DEVICE, REQ, R | E, 0, " N",
	  "keep activities of device N (repeat, or N,M,...)" },
	{ "kind", GA_FILTER_OPT_KIND, REQ, R | E, 0, " LIST",
	  "keep these kinds: kernel,memcpy,memset,graph\n"
	  "REGEX: Python re syntax (PCRE2), matched anywhere in\n"
	  "the name" },
	{ "help", 'h', NO, R | E | D, SHOWN, NULL, "show this help" },
	{ "version", GA_OPT_VERSION, NO, R | E | D, 0, NULL, "print the version" },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

/* The column of the help texts in each command's --help. */
static int help_col(unsigned cmd)
{
	return cmd == GA_CMD_DIFF ? 21 : cmd == GA_CMD_EXPORT ? 20 : 18;
}

void ga_opts_init(struct ga_opts *o, unsigned cmd, const char *cmdname)
{
	size_t nl = 0, ns = 0;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->cmdname = cmdname;
	o->so[ns++] = ':';         /* a missing value returns ':', not '?' */
	for (const struct ga_opt *p = ga_opts; p->name || p->val; p++) {
		if (!(p->cmds & cmd))
			continue;
		if (p->name && nl < GA_OPTS_MAX)
			o->lo[nl++] = (struct option){ p->name, p->has_arg, NULL, p->val };
		if ((p->flags & GA_OPT_SHORT) && ns + 2 < sizeof(o->so)) {
			o->so[ns++] = (char)p->val;
			if (p->has_arg == required_argument)
				o->so[ns++] = ':';
		}
	}
	opterr = 0;
	optind = 0;
}

/* The entry of cmd whose val is v (NULL: none). */
static const struct ga_opt *by_val(unsigned cmd, int v)
{
	for (const struct ga_opt *p = ga_opts; p->name || p->val; p++)
		if ((p->cmds & cmd) && p->val == v)
			return p;
	return NULL;
}

int ga_opts_next(struct ga_opts *o, int argc, char **argv)
{
	const struct ga_opt *p;
	const char *opt, *eq;
	int c = getopt_long(argc, argv, o->so, o->lo, NULL);

	if (c != '?' && c != ':')
		return c;
	opt = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (c == ':') {
		/* argv[optind - 1] is the option as given: "-j" or "--top". */
		p = by_val(o->cmd, optopt);
		fprintf(stderr, "gpuprof %s: %s needs a value", o->cmdname, opt);
		if (p && p->arg)
			fprintf(stderr, " (%s)", p->arg + 1);
		fputc('\n', stderr);
	} else if (optopt && !strncmp(opt, "--", 2) && (eq = strchr(opt, '='))) {
		fprintf(stderr, "gpuprof %s: %.*s takes no value\n", o->cmdname, (int)(eq - opt), opt);
	} else if (optopt) {
		fprintf(stderr, "gpuprof %s: unknown option '-%c'\n", o->cmdname, optopt);
	} else {
		fprintf(stderr, "gpuprof %s: unknown option '%s'\n", o->cmdname, opt);
	}
	fprintf(stderr, "Try 'gpuprof %s --help'.\n", o->cmdname);
	return '?';
}

int ga_opts_analysis(const struct ga_opts *o, int c, const char *arg,
		     const struct ga_opts_to *to)
{
	struct ga_analysis_opts *ao = to->ao;
	char *end, err[512];
	long depth;

	if (c == 'j')
		return ga_jobs_option(o->cmdname, arg) ? -1 : 1;
	if ((to->po && ga_peaks_option(to->po, c, arg)) ||
	    (to->fold && ga_sites_option(c, arg, to->fold)))
		return 1;
	if (to->flt) {
		switch (ga_filter_option(to->flt, c, arg, err, sizeof(err))) {
		case 1:
			return 1;
		case -1:
			fprintf(stderr, "gpuprof %s: %s\n", o->cmdname, err);
			return -1;
		}
	}
	if (!ao)
		return 0;
	switch (c) {
	case GA_OPT_STACK_DEPTH:
		depth = strtol(arg, &end, 10);
		if (!*arg || *end || depth < 1 || depth > GA_SITES_MAX_FRAMES) {
			fprintf(stderr, "gpuprof %s: --stack-depth needs a number from 1 to %d, "
				"not '%s'\n", o->cmdname, GA_SITES_MAX_FRAMES, arg);
			return -1;
		}
		ao->stack_depth = (unsigned)depth;
		return 1;
	case GA_OPT_NO_SYMBOLIZE:
		ao->symbolize = 0;
		return 1;
	case GA_OPT_SYMBOL_PATH:
		ao->symbol_path = arg;
		return 1;
	case GA_OPT_ALIGN:
		if (ga_align_parse(arg, &ao->align)) {
			fprintf(stderr, "gpuprof %s: --align takes nccl or none, not '%s'\n",
				o->cmdname, arg);
			return -1;
		}
		return 1;
	case GA_OPT_LATENCY:
		/* Launch latency is always in the report and the JSON: still taken. */
		return 1;
	case GA_OPT_EXACT:
		ao->quant_limit = GA_QUANT_NO_LIMIT;
		return 1;
	default:
		return 0;
	}
}

void ga_opts_help(unsigned cmd, FILE *f)
{
	int col = help_col(cmd);

	for (const struct ga_opt *p = ga_opts; p->name || p->val; p++) {
		const char *h = p->help, *nl;
		int n;

		if (!(p->cmds & cmd) || !h || !p->name)
			continue;
		n = (p->flags & GA_OPT_SHORT_SHOWN)
			    ? fprintf(f, "  -%c, --%s%s", p->val, p->name, p->arg ? p->arg : "")
			    : fprintf(f, "  --%s%s", p->name, p->arg ? p->arg : "");
		/* The text beside the option when it fits, else from the next line. */
		if (n + 1 > col) {
			fputc('\n', f);
			n = 0;
		}
		for (;;) {
			nl = strchr(h, '\n');
			fprintf(f, "%*s%.*s\n", col - n, "", nl ? (int)(nl - h) : (int)strlen(h), h);
			if (!nl)
				break;
			h = nl + 1;
			n = 0;
		}
	}
}
