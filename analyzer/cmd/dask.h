/*
 * --dask of report and export (dask.c): summaries of many traces made by
 * Dask tasks, merged into one temporary summary.  Runs offline only.
 */
#ifndef GA_CMD_DASK_H
#define GA_CMD_DASK_H

#include <limits.h>

struct ga_dask {
	char dir[64];              /* temporary directory, "" none */
	char part[96];             /* the merged summary in it */
	int missing;               /* some traces could not be summarized (named on stderr) */
};

/*
 * Summarize paths[0..n) (files or patterns, expanded by the driver) on the
 * Dask cluster at address ("env": DASK_SCHEDULER_ADDRESS) into d->part.
 * Returns 0 (d->missing says whether some were left out), or -1 after
 * printing why.
 */
int ga_dask_summarize(struct ga_dask *d, const char *address, char *const *paths, int n);

/* Remove the temporary summary. */
void ga_dask_done(struct ga_dask *d);

#endif
