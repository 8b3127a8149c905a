/*
 * libFuzzer target for the parsers of what users type: the output-name
 * template (%p %h %n %q{VAR} %%, the recorder's gp_config_expand), the
 * --trace list, and the report's options and filter values (--top,
 * --kernel and --nvtx regular expressions, --device, --kind, ...) applied
 * to a golden trace.  The input is split at newlines: template, trace
 * list, then report arguments.  `make fuzz` runs it after the reader's
 * target; test/unit/test_fuzz_smoke.c runs fixed inputs through it.
 * Offline test code; run from the repository root (it reads
 * test/golden/demo.gpuprof).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "config.h"
#include "fuzz_quiet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TOK 12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *tok[MAX_TOK], *argv[MAX_TOK + 3], out[512];
	int ntok = 0, argc = 0, uses_n;
	uint32_t bits;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	for (char *p = buf; ntok < MAX_TOK;) {
		tok[ntok++] = p;
		p = strchr(p, '\n');
		if (!p)
			break;
		*p++ = 0;
	}
	setenv("GP_FUZZ_VAR", ntok > 1 ? tok[1] : "", 1);
	gp_config_expand(tok[0], 1234, 7, out, sizeof(out), &uses_n);
	if (ntok > 1)
		gp_config_parse_trace(tok[1], &bits);
	argv[argc++] = "report";
	/*
	 * The chart goes to /dev/null, never to a file the fuzzer names: every
	 * abbreviation of --roofline-svg (the only option starting "--r") is
	 * replaced.
	 */
	for (int i = 2; i < ntok; i++)
		argv[argc++] = !strncmp(tok[i], "--r", 3) ? "--roofline-svg=/dev/null" : tok[i];
	argv[argc++] = "test/golden/demo.gpuprof";
	argv[argc] = NULL;
	fuzz_quiet(cmd_report, argc, argv);
	free(buf);
	return 0;
}
