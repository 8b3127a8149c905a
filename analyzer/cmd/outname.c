/*
 * "gpuprof-analyze template TEMPLATE": the wrapper's check of an output
 * template before the program runs, with the recorder's own grammar
 * (include/gpuprof/template.h).  Prints the file name the template stands
 * for when it does not depend on the process (no %p, %n or %q), else
 * nothing; exits 2 with the reason when the template is invalid.  Not
 * listed in --help.  Runs offline only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gpuprof/template.h"

int cmd_template(int argc, char **argv)
{
	struct gp_template_env env = { 0 };
	char host[256], out[4096];
	const char *why;
	unsigned uses;
	int rc;

	if (argc != 2) {
		fputs("usage: gpuprof-analyze template TEMPLATE\n", stderr);
		return GA_EXIT_USAGE;
	}
	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = 0;
	env.host = host;
	rc = gp_template_expand(argv[1], &env, out, sizeof(out), &uses, &why);
	if (rc == -EINVAL) {
		fprintf(stderr, "gpuprof: bad output template: %s\n"
			"Try 'gpuprof run --help'.\n", why);
		return GA_EXIT_USAGE;
	}
	if (rc) {
		fputs("gpuprof: output name too long\n", stderr);
		return GA_EXIT_USAGE;
	}
	if (!(uses & (GP_TEMPLATE_PID | GP_TEMPLATE_NUMBER | GP_TEMPLATE_VAR)))
		printf("%s\n", out);
	return GA_EXIT_OK;
}
