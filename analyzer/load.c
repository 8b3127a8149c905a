/*
 * Trace loading shared by the subcommands (see load.h).  Runs offline only.
 */
#include "load.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int gp_load_warnings(const struct gp_model *m, struct gp_buf *out)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < m->nfiles; i++) {
		const struct gp_file *f = &m->files[i];
		char line[512];

		if (f->info.damaged) {
			gp_reader_describe(&f->info, line, sizeof(line));
			rc |= gp_buf_printf(out, "%s: %s\n", f->path, line);
		} else if (!f->info.finished) {
			rc |= gp_buf_printf(out, "%s: no end record: the recorder did not "
					    "finish (program killed, or still running); the "
					    "report covers what was written\n", f->path);
		}
	}
	if (m->malformed)
		rc |= gp_buf_printf(out, "%" PRIu64 " records too short for their type "
				    "were skipped\n", m->malformed);
	if (m->bad_refs)
		rc |= gp_buf_printf(out, "%" PRIu64 " references to strings the trace "
				    "never defined\n", m->bad_refs);
	if (m->unknown)
		rc |= gp_buf_printf(out, "%" PRIu64 " records of types this reader does "
				    "not know were skipped (written by a newer gpuprof?)\n",
				    m->unknown);
	return rc ? -1 : 0;
}

int gp_load_traces(struct gp_model *m, char *const *paths, int n)
{
	struct gp_buf w = { 0 };
	const char *p, *nl;
	int i;

	for (i = 0; i < n; i++) {
		int rc = gp_model_add_file(m, paths[i]);

		if (rc != GP_READ_OK) {
			fprintf(stderr, "gpuprof: %s\n", m->err);
			return -1;
		}
	}
	if (gp_model_finish(m)) {
		fprintf(stderr, "gpuprof: out of memory\n");
		return -1;
	}
	if (gp_load_warnings(m, &w)) {
		gp_buf_free(&w);
		fprintf(stderr, "gpuprof: out of memory\n");
		return -1;
	}
	for (p = w.p; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		fprintf(stderr, "gpuprof: warning: %.*s\n", (int)(nl - p), p);
	}
	gp_buf_free(&w);
	return 0;
}
