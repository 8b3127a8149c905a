/*
 * Launch configurations (model/launchcfg.h): each kernel's grid, block,
 * registers and shared memory, how often and how long it ran so, and its
 * theoretical occupancy with what limits it.  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/text.h"

static int want(const struct ga_text *r)
{
	return r->an->lc.nc > 0;
}

static int print(struct ga_text *r, FILE *out)
{
	const struct ga_launchcfg *l = &r->an->lc;
	char tb[48], sb[48], nb[4 * GA_TEXT_NAME_WIDTH + 8];
	struct ga_table t;
	uint32_t *ord;
	size_t i, n;
	int rc = 0;

	if (l->oom || !(ord = ga_launchcfg_order(l, &r->an->m)))
		return -1;
	n = r->o.top && (size_t)r->o.top < l->nc ? (size_t)r->o.top : l->nc;
	ga_table_init(&t, 9);
	ga_table_col(&t, 0, "Total", 1, 0);
	ga_table_col(&t, 1, "Count", 1, 0);
	ga_table_col(&t, 2, "Grid", 1, 0);
	ga_table_col(&t, 3, "Block", 1, 0);
	ga_table_col(&t, 4, "Regs", 1, 0);
	ga_table_col(&t, 5, "Shared", 1, 0);
	ga_table_col(&t, 6, "Occupancy", 1, 0);
	ga_table_col(&t, 7, "Limited by", 0, 0);
	ga_table_col(&t, 8, "Name", 0, 0);
	for (i = 0; i < n && !rc; i++) {
		const struct ga_lcfg *c = &l->c[ord[i]];

		rc |= ga_table_add(&t, ga_fmt_time(tb, sizeof(tb), c->total));
		rc |= ga_table_addf(&t, "%" PRIu64, c->count);
		rc |= ga_table_addf(&t, "%u,%u,%u", c->grid[0], c->grid[1], c->grid[2]);
		rc |= ga_table_addf(&t, "%u,%u,%u", c->block[0], c->block[1], c->block[2]);
		rc |= ga_table_addf(&t, "%u", c->regs);
		rc |= ga_table_add(&t, ga_fmt_bytes(sb, sizeof(sb),
						    (double)c->static_smem + c->dynamic_smem));
		if (c->occupancy >= 0)
			rc |= ga_table_addf(&t, "%.0f%%", 100.0 * c->occupancy);
		else
			rc |= ga_table_add(&t, "-");
		rc |= ga_table_add(&t, c->occupancy >= 0 ? ga_occ_limit_name(c->limit) : "-");
		rc |= ga_table_add(&t, ga_text_name_cut(r, nb, sizeof(nb),
							ga_strtab_full(&r->m->strs, c->name)));
	}
	if (!rc) {
		fputs("Launch configurations (theoretical occupancy at the largest shared-memory "
		      "carveout):\n", out);
		ga_table_print(&t, out);
		ga_text_more_line(out, n, l->nc, "configurations");
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

const struct ga_text_section ga_text_launch = { "launch", want, print };
