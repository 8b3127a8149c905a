/*
 * Output files of the analyzer (export -o, report --roofline-svg, the
 * SQLite database): every file the analyzer writes goes through here.
 * Written so that no failure ever destroys what was there: a regular file
 * (or a new name) is written under a temporary name in the same directory
 * and renamed over the old one only when everything was written; a
 * symlink is followed to its target first (as a shell redirection would),
 * but, as the kernel's protected_symlinks rule says whatever the system's
 * setting, never one in a sticky world-writable directory (/tmp) whose
 * owner is neither the caller nor the directory's owner; the path is
 * walked one directory descriptor at a time, so the kernel itself never
 * follows a link.  Devices, pipes and sockets are written straight through
 * and never removed (in a sticky world-writable directory only the
 * caller's or the directory owner's); an output that is one of the inputs
 * is refused before anything is opened.  A temporary file is removed if
 * SIGINT, SIGTERM or SIGHUP ends the process first (where they would end
 * it).  Runs offline only.
 */
#ifndef GA_ANALYZER_OUTPUT_H
#define GA_ANALYZER_OUTPUT_H

#include <stdio.h>

struct ga_output {
	FILE *f;
	char *path;                /* as given; NULL for standard output */
	int dirfd;                 /* directory of the output (O_PATH), or -1 */
	char *dest;                /* name in dirfd the temporary file replaces */
	char *tmpname;             /* temporary file we created in dirfd, or NULL */
	char *tmp;                 /* its path, for writers that open by name */
	int fd;                    /* that file's descriptor (writers by name), or -1 */
	int mode;                  /* permissions of the finished file */
	int pending;               /* the signals' slot of tmpname, plus 1; or 0 */
	struct ga_awriter *aw;     /* writes on a thread of their own, or NULL */
	FILE *real;                /* then the stream they go to; f is the writer's */
};

/*
 * Opens path ("-" or NULL: standard output).  Refuses a path that names
 * one of the n inputs (the same file, through any name or link) or a
 * directory.  Returns 0, or -1 after printing why on stderr.
 */
int ga_output_open(struct ga_output *o, const char *path, char *const *inputs, int n);

/*
 * The same for writers that need a file name rather than a stream (a
 * database): standard output, devices, pipes and sockets are refused; o->f
 * is NULL and o->tmp names the new, empty file to write, which
 * ga_output_close() puts in place.  Returns 0, or -1 after printing why.
 */
int ga_output_open_file(struct ga_output *o, const char *path, char *const *inputs, int n);

/*
 * From now on, o->f hands what is written to a thread of its own, which
 * writes it to the stream opened (what was buffered there first): the
 * system's copies and the file system's work leave the caller's thread,
 * at most GA_OUTPUT_AHEAD bytes behind it.  The thread starts once a
 * quarter of that is written (a smaller output is written at the close,
 * as is all of it where no thread starts).  A failed write is the FILE's
 * error from the next write on (the writer keeps the first errno), and
 * ga_output_close() reports it.  Not for a terminal, nor an output of a
 * writer by name.  Returns 0 (o->f changed), or -1 with o->f as it was.
 */
#define GA_OUTPUT_AHEAD (4u << 20)
int ga_output_async(struct ga_output *o);

/*
 * Finishes the output (a writer of o->tmp has closed it): on ok, flushes, checks every write and puts the
 * file in place; otherwise removes only the temporary file it created.
 * Returns 0, or -1 after printing why (the old file, if any, is intact).
 */
int ga_output_close(struct ga_output *o, int ok);

#endif
