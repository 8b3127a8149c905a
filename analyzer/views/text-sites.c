/*
 * Launch sites: kernels by collapsed host call stack, and the top sites of
 * the kernels with most GPU time.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/symbolize.h"
#include "views/text.h"

/* Does skern entry a come before b among one kernel's sites? */
static int site_before(const struct ga_sites *st, const struct ga_model *m,
		       const struct ga_stack_kernel *a, const struct ga_stack_kernel *b)
{
	if (a->ns != b->ns)
		return a->ns > b->ns;
	return strcmp(ga_model_str(m, st->sites[a->site].str),
		      ga_model_str(m, st->sites[b->site].str)) < 0;
}

/* Up to want skern indices of kernel name, most time first, into top. */
static size_t kernel_sites(const struct ga_sites *st, const struct ga_model *m, uint32_t name,
			   uint32_t *top, size_t want)
{
	size_t i, j, pos, n = 0;

	for (i = 0; i < st->nskern; i++) {
		const struct ga_stack_kernel *k = &st->skern[i];

		if (k->name != name)
			continue;
		for (pos = n; pos > 0 && site_before(st, m, k, &st->skern[top[pos - 1]]); pos--)
			;
		if (pos >= want)
			continue;
		for (j = n < want ? n : want - 1; j > pos; j--)
			top[j] = top[j - 1];
		top[pos] = (uint32_t)i;
		if (n < want)
			n++;
	}
	return n;
}

static int print_top_kernels(const struct ga_sites *st, struct ga_model *m, size_t top,
			     size_t width, FILE *out)
{
	char tb[48], nb[4 * 256 + 8];
	struct ga_table t;
	uint32_t *ord = ga_model_order_kernels(m), sel[3];
	size_t i, j, n, rows = 0;
	int rc = 0;

	if (!ord)
		return -1;
	if (!top || top > m->nkstats)
		top = m->nkstats;
	ga_table_init(&t, 3);
	ga_table_col(&t, 0, "GPU time", 1, 0);
	ga_table_col(&t, 1, "Launches", 1, 0);
	ga_table_col(&t, 2, "Kernel / launch site", 0, 0);
	for (i = 0; i < top && !rc; i++) {
		const struct ga_kstat *k = &m->kstats[ord[i]];

		n = kernel_sites(st, m, k->name, sel, 3);
		if (!n)
			continue;
		rows++;
		rc |= ga_table_add(&t, ga_fmt_time(tb, sizeof(tb), k->total));
		rc |= ga_table_addf(&t, "%" PRIu64, k->count);
		rc |= ga_table_add(&t, ga_text_cut(nb, sizeof(nb), ga_strtab_full(&m->strs, k->name), width));
		for (j = 0; j < n && !rc; j++) {
			const struct ga_stack_kernel *sk = &st->skern[sel[j]];

			rc |= ga_table_add(&t, ga_fmt_time(tb, sizeof(tb), sk->ns));
			rc |= ga_table_addf(&t, "%" PRIu64, sk->count);
			rc |= ga_table_addf(&t, "  %s", ga_text_cut(nb, sizeof(nb), ga_model_str(
						   m, st->sites[sk->site].str), width));
		}
	}
	if (!rc && rows) {
		fputs("\nTop launch sites of the top kernels:\n", out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

/*
 * Why frames kept their module+0xOFF names, once per module: modules not
 * looked up (no file proven by build-id, and the reason), and modules of
 * traces without build-ids whose names are unverified.
 */
static int cmp_mod(const void *pa, const void *pb, void *ctx)
{
	const struct ga_sites *st = ((const void *const *)ctx)[0];
	const struct ga_model *m = ((const void *const *)ctx)[1];
	const struct ga_sites_mod *a = &st->mods[*(const uint32_t *)pa];
	const struct ga_sites_mod *b = &st->mods[*(const uint32_t *)pb];
	int c = strcmp(ga_model_str(m, a->name), ga_model_str(m, b->name));

	return c ? c : strcmp(ga_model_str(m, a->why), ga_model_str(m, b->why));
}

/*
 * Modules by name, then reason: the same list whether the traces were read
 * together or merged as summaries.  NULL out of memory (then as they came).
 */
static uint32_t *mods_sorted(const struct ga_sites *st, const struct ga_model *m)
{
	uint32_t *o = malloc((st->nmods + 1) * sizeof(*o));
	const void *ctx[2] = { st, m };

	if (!o)
		return NULL;
	for (size_t i = 0; i < st->nmods; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, st->nmods, sizeof(*o), cmp_mod, (void *)ctx);
	return o;
}

static void print_sym_notes(const struct ga_sites *st, const struct ga_model *m, FILE *out)
{
	size_t i, refused = 0, unverified = 0, shown = 0;
	uint32_t *ord = mods_sorted(st, m);
#define MOD(k) (&st->mods[ord ? ord[k] : (k)])

	for (i = 0; i < st->nmods; i++) {
		refused += st->mods[i].verdict && st->mods[i].verdict != GA_SYM_PROVEN &&
			   st->mods[i].verdict != GA_SYM_UNVERIFIED;
		unverified += st->mods[i].verdict == GA_SYM_UNVERIFIED;
	}
	if (refused) {
		fprintf(out, "Frame names: %zu module%s not looked up (%s frames read "
			"module+0xOFFSET, or the name the process gave):\n", refused,
			refused == 1 ? "" : "s", refused == 1 ? "its" : "their");
		for (i = 0; i < st->nmods; i++) {
			const struct ga_sites_mod *x = MOD(i);
			const char *name = ga_model_str(m, x->name), *slash = strrchr(name, '/');

			if (!x->verdict || x->verdict == GA_SYM_PROVEN ||
			    x->verdict == GA_SYM_UNVERIFIED)
				continue;
			if (shown++ == 10) {
				fprintf(out, "  \xe2\x80\xa6 %zu more\n", refused - 10);
				break;
			}
			fprintf(out, "  %s: %s\n", slash ? slash + 1 : name, ga_model_str(m, x->why));
		}
	}
	if (unverified) {
		fprintf(out, "Frame names unverified: the trace recorded no build-ids, so the names of "
			"%zu module%s come from the file%s at the recorded path%s, which may not be "
			"the one that ran:", unverified, unverified == 1 ? "" : "s",
			unverified == 1 ? "" : "s", unverified == 1 ? "" : "s");
		for (i = shown = 0; i < st->nmods; i++)
			if (MOD(i)->verdict == GA_SYM_UNVERIFIED && shown++ < 10)
				fprintf(out, " %s", ga_model_str(m, MOD(i)->why));
		fputs(unverified > 10 ? " \xe2\x80\xa6\n" : "\n", out);
	}
#undef MOD
	free(ord);
}

int ga_text_sites_print(const struct ga_sites *st, struct ga_model *m, size_t rows,
		    size_t top_kernels, size_t width, FILE *out)
{
	char b[48], nb[4 * 256 + 8];
	struct ga_table t;
	size_t i, n;
	int rc = 0;

	if (width > 256)
		width = 256;
	if (!st->nsites) {
		fputs("Launch sites: no kept kernel has a launch stack\n", out);
	} else {
		n = rows && rows < st->nsites ? rows : st->nsites;
		ga_table_init(&t, 5);
		ga_table_col(&t, 0, "GPU time", 1, 0);
		ga_table_col(&t, 1, "Share", 1, 0);
		ga_table_col(&t, 2, "Kernels", 1, 0);
		ga_table_col(&t, 3, "Launches", 1, 0);
		ga_table_col(&t, 4, "Launch site", 0, 0);
		for (i = 0; i < n && !rc; i++) {
			const struct ga_stack_site *x = &st->sites[st->order[i]];

			rc |= ga_table_add(&t, ga_fmt_time(b, sizeof(b), x->gpu_ns));
			rc |= ga_table_addf(&t, "%.1f%%", m->kernel_total ?
					    100.0 * (double)x->gpu_ns / (double)m->kernel_total : 0.0);
			rc |= ga_table_addf(&t, "%u", x->kernels);
			rc |= ga_table_addf(&t, "%" PRIu64, x->launches);
			rc |= ga_table_add(&t, ga_text_cut(nb, sizeof(nb), ga_model_str(m, x->str), width));
		}
		if (!rc) {
			fprintf(out, "Launch sites (kernels by host call stack, innermost first, "
				"%u frame%s):\n", st->depth, st->depth == 1 ? "" : "s");
			ga_table_print(&t, out);
			if (n < st->nsites)
				fprintf(out, "\xe2\x80\xa6 %zu more launch sites (use --top 0 for all)\n",
					st->nsites - n);
		}
		ga_table_free(&t);
		if (rc)
			return -1;
	}
	fprintf(out, "%" PRIu64 " of %" PRIu64 " kernels have a launch stack\n", st->with_stack,
		st->kernels);
	print_sym_notes(st, m, out);
	if (st->nsites && print_top_kernels(st, m, top_kernels, width, out))
		return -1;
	return 0;
}

static int want(const struct ga_text *r)
{
	return ga_sites_any(&r->an->st);
}

static int print(struct ga_text *r, FILE *out)
{
	return ga_text_sites_print(&r->an->st, r->m, (size_t)r->o.top,
			   r->o.top_set ? (size_t)r->o.top : GA_TEXT_SITE_KERNELS,
			   r->o.full_names ? 0 : 2 * GA_TEXT_NAME_WIDTH, out);
}

const struct ga_text_section ga_text_sites = { "sites", want, print };
