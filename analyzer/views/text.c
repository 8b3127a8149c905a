/*
 * The text report: its sections, in the order they print.  A new table is
 * a new views/text-*.c file defining a struct ga_text_section, and one
 * line here.  Runs offline only.
 */
#include <stdio.h>

#include "views/text.h"

static const struct ga_text_section *const sections[] = {
	&ga_text_findings,
	&ga_text_header,
	&ga_text_timeline,
	&ga_text_summary,
	&ga_text_ranks,
	&ga_text_kernels,
	&ga_text_launch,
	&ga_text_latency,
	&ga_text_roofline,
	&ga_text_sites,
	&ga_text_ranges,
	&ga_text_tree,
	&ga_text_memory,
	&ga_text_memuse,
	&ga_text_overtime,
	&ga_text_api,
};

int ga_text_report(struct ga_text *r, FILE *out)
{
	size_t i, printed = 0;

	r->m = &r->an->m;
	ga_text_warp_widths(r->m, r, &r->wc);
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const struct ga_text_section *s = sections[i];

		if (s->want && !s->want(r))
			continue;
		if (printed++)
			fputc('\n', out);
		if (s->print(r, out))
			return -1;
	}
	return 0;
}
