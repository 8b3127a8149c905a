/*
 * Unit tests of the one option table of report, export and diff
 * (analyzer/cmd/options.c): each command's names and values once, every
 * listed option in its --help once and within 80 columns, the short
 * options each command takes, and what a bad command line is told (an
 * option without its value, a value given to one that takes none, an
 * unknown option, a value an option does not take) the same way in every
 * command.  Test code, runs offline
 * only, needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "read/reader.h"
#include "synth.h"
#include "tap.h"

static char dir[64];

static const struct {
	unsigned cmd;
	const char *name;
	int (*fn)(int, char **);
	const char *shorts;        /* the short options it takes, as getopt's string */
} cmds[] = {
	{ GA_CMD_REPORT, "report", cmd_report, ":n:j:h" },
	{ GA_CMD_EXPORT, "export", cmd_export, ":t:fo:j:h" },
	{ GA_CMD_DIFF, "diff", cmd_diff, ":j:h" },
};

#define run(out, err, ...) synth_run(dir, out, err, __VA_ARGS__)

static void table(void)
{
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		struct ga_opts o;
		size_t n = 0;

		tap_begin(cmds[c].name);
		for (const struct ga_opt *p = ga_opts; p->name || p->val; p++) {
			CHECKF(p->cmds, "--%s is taken by no command", p->name ? p->name : "");
			CHECKF(p->has_arg == no_argument || p->has_arg == required_argument,
			       "--%s", p->name ? p->name : "");
			CHECKF(!p->arg == (p->has_arg == no_argument), "--%s: argument and its name",
			       p->name ? p->name : "");
			if (!(p->cmds & cmds[c].cmd))
				continue;
			n++;
			for (const struct ga_opt *q = p + 1; q->name || q->val; q++) {
				if (!(q->cmds & cmds[c].cmd))
					continue;
				CHECKF(!p->name || !q->name || strcmp(p->name, q->name),
				       "--%s twice", p->name);
				/* One value, one meaning: only a hidden alias (--type) shares one. */
				CHECKF(p->val != q->val || !p->help || !q->help, "--%s and --%s: one value",
				       p->name ? p->name : "", q->name ? q->name : "");
			}
		}
		ga_opts_init(&o, cmds[c].cmd, cmds[c].name);
		CHECKF(!strcmp(o.so, cmds[c].shorts), "short options '%s', not '%s'", o.so,
		       cmds[c].shorts);
		CHECK(n > 0 && n <= GA_OPTS_MAX);
		tap_end();
	}
}

/* --help lists each option of the table once, at the left, within 80 columns. */
static void help(void)
{
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		char *out = NULL, *err = NULL, name[80];
		int rc;

		tap_begin(cmds[c].name);
		rc = run(&out, &err, cmds[c].fn, cmds[c].name, "--help", NULL);
		CHECK(rc == 0 && out);
		for (const char *l = out; out && *l;) {
			const char *e = strchr(l, '\n');
			size_t len = e ? (size_t)(e - l) : strlen(l);

			CHECKF(len <= 80, "a line of %zu columns: %.*s", len, (int)len, l);
			l += len + (e != NULL);
		}
		for (const struct ga_opt *p = ga_opts; out && (p->name || p->val); p++) {
			const char *at, *again;

			if (!(p->cmds & cmds[c].cmd) || !p->name)
				continue;
			if (p->flags & GA_OPT_SHORT_SHOWN)
				snprintf(name, sizeof(name), "\n  -%c, --%s", p->val, p->name);
			else
				snprintf(name, sizeof(name), "\n  --%s", p->name);
			at = strstr(out, name);
			while (at && at[strlen(name)] != ' ' && at[strlen(name)] != '=' &&
			       at[strlen(name)] != '\n')
				at = strstr(at + 1, name);   /* --top, not --top-x */
			if (!p->help) {
				CHECKF(!at, "--%s is listed", p->name);
				continue;
			}
			CHECKF(at, "--%s is not listed", p->name);
			again = at ? strstr(at + 1, name) : NULL;
			while (again && again[strlen(name)] != ' ' && again[strlen(name)] != '=' &&
			       again[strlen(name)] != '\n')
				again = strstr(again + 1, name);
			CHECKF(!again, "--%s is listed twice", p->name);
		}
		free(out);
		free(err);
		tap_end();
	}
}

/* What each command says of a bad command line. */
static void errors(void)
{
	static const struct {
		int cmd;                   /* index in cmds[] */
		const char *args[3];
		const char *says;
	} cases[] = {
		{ 0, { "--top" }, "gpuprof report: --top needs a value (N)\n" },
		{ 0, { "--nvtx" }, "gpuprof report: --nvtx needs a value (REGEX)\n" },
		{ 0, { "--symbol-path" }, "gpuprof report: --symbol-path needs a value (DIR[:DIR...])\n" },
		{ 0, { "--align" }, "gpuprof report: --align needs a value (nccl)\n" },
		{ 0, { "--tree=1", "x.gpuprof" }, "gpuprof report: --tree takes no value\n" },
		{ 0, { "--bogus", "x.gpuprof" }, "gpuprof report: unknown option '--bogus'\n" },
		{ 0, { "-x", "x.gpuprof" }, "gpuprof report: unknown option '-x'\n" },
		{ 1, { "--format" }, "gpuprof export: --format needs a value (FMT)\n" },
		{ 1, { "-t" }, "gpuprof export: -t needs a value (FMT)\n" },
		{ 1, { "--stack-depth" }, "gpuprof export: --stack-depth needs a value (N)\n" },
		{ 1, { "--table" }, "gpuprof export: --table needs a value (NAME)\n" },
		{ 1, { "--no-flows=yes", "x.gpuprof" }, "gpuprof export: --no-flows takes no value\n" },
		{ 2, { "--json=1", "a", "b" }, "gpuprof diff: --json takes no value\n" },
		{ 2, { "--top" }, "gpuprof diff: --top needs a value (N)\n" },
		{ 2, { "-n", "3", "a" }, "gpuprof diff: unknown option '-n'\n" },
		{ 2, { "--timeline", "a", "b" }, "gpuprof diff: unknown option '--timeline'\n" },
	};

	static const struct {
		int cmd;
		const char *args[4];
		const char *says;
	} values[] = {
		{ 0, { "--stack-depth", "0", "x.gpuprof" },
		  "gpuprof report: --stack-depth needs a number from 1 to 64, not '0'\n" },
		{ 1, { "-t", "json", "--stack-depth=65", "x.gpuprof" },
		  "gpuprof export: --stack-depth needs a number from 1 to 64, not '65'\n" },
		{ 0, { "--align", "ptp", "x.gpuprof" },
		  "gpuprof report: --align takes nccl or none, not 'ptp'\n" },
		{ 1, { "--align=x", "-t", "json", "x.gpuprof" },
		  "gpuprof export: --align takes nccl or none, not 'x'\n" },
		{ 1, { "-t", "json", "--kind", "foo" },
		  "gpuprof export: --kind: unknown kind 'foo' (kernel, memcpy, memset, graph)\n" },
		{ 0, { "--peaks-dir", "/nonexistent", "--kind=texture", "x.gpuprof" },
		  "gpuprof report: --kind: unknown kind 'texture' (kernel, memcpy, memset, graph)\n" },
		{ 2, { "-j", "65", "a", "b" },
		  "gpuprof diff: -j needs a number from 0 (one per CPU) to 64, not '65'\n" },
	};

	tap_begin("bad command lines");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = NULL, *err = NULL, want[256];
		const char *name = cmds[cases[i].cmd].name;
		int rc;

		rc = run(&out, &err, cmds[cases[i].cmd].fn, name, cases[i].args[0], cases[i].args[1],
			 cases[i].args[2], NULL);
		snprintf(want, sizeof(want), "%sTry 'gpuprof %s --help'.\n", cases[i].says, name);
		CHECKF(rc == GA_EXIT_USAGE && err && !strcmp(err, want), "%s %s: rc %d, said '%s'",
		       name, cases[i].args[0], rc, err ? err : "");
		free(out);
		free(err);
	}
	tap_end();

	/* A value the option does not take: the same words in each command, no "Try" line. */
	tap_begin("bad values");
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char *out = NULL, *err = NULL;
		const char *name = cmds[values[i].cmd].name;
		int rc;

		rc = run(&out, &err, cmds[values[i].cmd].fn, name, values[i].args[0],
			 values[i].args[1], values[i].args[2], values[i].args[3], NULL);
		CHECKF(rc == GA_EXIT_USAGE && err && !strcmp(err, values[i].says),
		       "%s %s %s: rc %d, said '%s'", name, values[i].args[0], values[i].args[1], rc,
		       err ? err : "");
		free(out);
		free(err);
	}
	ga_reader_jobs = 0;
	tap_end();
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gp_options_XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	table();
	help();
	errors();
	rmdir(dir);
	return tap_exit();
}
