/*
 * The export formats.  A new format is a new views/ file defining a
 * struct ga_format, and one line here.  Runs offline only.
 */
#include <stdio.h>
#include <string.h>

#include "views/formats.h"

const struct ga_format *const ga_formats[] = {
	&ga_format_json,
	&ga_format_csv,
	&ga_format_chrome,
	&ga_format_perfetto,
	&ga_format_sqlite,
	&ga_format_pprof,
	&ga_format_prometheus,
	NULL,
};

const struct ga_format *ga_format_find(const char *name)
{
	size_t i;

	for (i = 0; ga_formats[i]; i++)
		if (!strcmp(name, ga_formats[i]->name) ||
		    (ga_formats[i]->alias && !strcmp(name, ga_formats[i]->alias)))
			return ga_formats[i];
	return NULL;
}

int ga_format_said(const char *err)
{
	fprintf(stderr, "gpuprof: %s\n", err);
	return GA_FORMAT_REPORTED;
}
