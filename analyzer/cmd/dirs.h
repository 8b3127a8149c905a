/*
 * A directory named on the command line stands for the traces or the
 * summaries in it: its regular files named *.gpuprof or *.sum, in name
 * order, not those of its subdirectories (a job's traces, or the parts of
 * gpuprof summarize); one that holds both is refused, a summary beside its
 * traces counting them twice.  Runs offline only.
 */
#ifndef GA_ANALYZER_DIRS_H
#define GA_ANALYZER_DIRS_H

/* The inputs expanded (struct ga_dirs): what to read, and what to free. */
struct ga_dirs {
	char **paths;              /* the inputs, each directory replaced */
	int n;
	char **owned;              /* the paths made here (freed by ga_dirs_free) */
	int nowned;
};

/*
 * in[0..n) with each directory replaced by its files (model/load.c reads
 * the rest as before: "-", pipes, files, and says what is wrong with a
 * path).  0, or -1 after printing why (cmd names the command): a
 * directory that cannot be read, holds no such file or both kinds, or out
 * of memory.
 */
int ga_dirs_expand(struct ga_dirs *d, const char *cmd, char *const *in, int n);
void ga_dirs_free(struct ga_dirs *d);

#endif
