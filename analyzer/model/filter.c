/*
 * Activity filters (see filter.h).  Regular expressions are PCRE2's, with
 * the analyzer's limits (include/gpuprof/regex.h): a match stopped by one
 * counts as no match and is reported once per option on stderr.  Runs
 * offline only.
 */
#include "model/filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ga_filter_init(struct ga_filter *f)
{
	memset(f, 0, sizeof(*f));
}

void ga_filter_free(struct ga_filter *f)
{
	gp_regex_free(&f->nvtx_re);
	gp_regex_free(&f->kernel_re);
	free(f->devices);
	free(f->kmatch);
	ga_buf_free(&f->desc);
	memset(f, 0, sizeof(*f));
}

int ga_filter_active(const struct ga_filter *f)
{
	return f->has_nvtx || f->has_kernel || f->ndevices || f->kinds;
}

static int describe(struct ga_filter *f, const char *opt, const char *arg, int quote)
{
	return ga_buf_printf(&f->desc, "%s--%s %s%s%s", f->desc.len ? ", " : "", opt,
			     quote ? "'" : "", arg, quote ? "'" : "");
}

static int set_regex(struct gp_regex *re, int *has, const char *opt, const char *arg, char *err,
		     size_t n)
{
	char why[200];

	if (*has) {
		snprintf(err, n, "--%s given twice", opt);
		return -1;
	}
	if (gp_regex_compile(re, arg, GP_REGEX_ANALYZER, why, sizeof(why))) {
		snprintf(err, n, "--%s: bad regular expression '%s': %s", opt, arg, why);
		return -1;
	}
	*has = 1;
	return 0;
}

/*
 * 1 when name matches re.  A match stopped by a limit counts as no match;
 * the first of each option is reported, with the name cut and its control
 * characters replaced (a trace's names are not to drive the terminal).
 */
static int matches(struct gp_regex *re, const char *opt, const char *name)
{
	char cut[128], why[128];
	int rc = gp_regex_match(re, name, strlen(name));

	if (rc != GP_REGEX_LIMIT_FIRST)
		return rc == 1;
	fprintf(stderr, "gpuprof: --%s: matching '", opt);
	ga_fmt_put(stderr, ga_fmt_trunc(cut, sizeof(cut), name, 60));
	fprintf(stderr, "' stopped (%s); it and any other name the limits stop count as not "
		"matching\n", gp_regex_why(re, why, sizeof(why)));
	return 0;
}

/* Comma-separated items of arg, each passed to fn; empty items are errors. */
static int each_item(const char *arg, int (*fn)(struct ga_filter *f, const char *item,
						char *err, size_t n),
		     struct ga_filter *f, const char *opt, char *err, size_t n)
{
	char item[64];
	const char *p = arg, *c;

	for (;;) {
		size_t len;

		c = strchr(p, ',');
		len = c ? (size_t)(c - p) : strlen(p);
		if (!len || len >= sizeof(item)) {
			snprintf(err, n, "--%s: bad list '%s'", opt, arg);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (fn(f, item, err, n))
			return -1;
		if (!c)
			return 0;
		p = c + 1;
	}
}

static int add_device(struct ga_filter *f, const char *item, char *err, size_t n)
{
	char *end;
	unsigned long v = strtoul(item, &end, 10);

	if (*end || item[0] == '-' || item[0] == '+' || v > UINT32_MAX) {
		snprintf(err, n, "--device: '%s' is not a device number", item);
		return -1;
	}
	if (ga_util_grow(&f->devices, &f->capdevices, f->ndevices + 1, sizeof(*f->devices))) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	f->devices[f->ndevices++] = (uint32_t)v;
	return 0;
}

static int add_kind(struct ga_filter *f, const char *item, char *err, size_t n)
{
	int k;

	for (k = 0; k < GA_ACT_KIND_COUNT; k++)
		if (!strcmp(item, ga_model_act_kind(k))) {
			f->kinds |= 1u << k;
			return 0;
		}
	snprintf(err, n, "--kind: unknown kind '%s' (kernel, memcpy, memset, graph)", item);
	return -1;
}

void ga_filter_rewind(struct ga_filter *f)
{
	free(f->kmatch);
	f->kmatch = NULL;
	f->capkmatch = 0;
	f->nx = NULL;
	f->seen = f->kept = 0;
}

int ga_filter_option(struct ga_filter *f, int opt, const char *arg, char *err, size_t n)
{
	int rc;

	switch (opt) {
	case GA_FILTER_OPT_NVTX:
		rc = set_regex(&f->nvtx_re, &f->has_nvtx, "nvtx", arg, err, n);
		if (!rc && describe(f, "nvtx", arg, 1))
			goto oom;
		return rc ? -1 : 1;
	case GA_FILTER_OPT_KERNEL:
		rc = set_regex(&f->kernel_re, &f->has_kernel, "kernel", arg, err, n);
		if (!rc && describe(f, "kernel", arg, 1))
			goto oom;
		return rc ? -1 : 1;
	case GA_FILTER_OPT_DEVICE:
		if (each_item(arg, add_device, f, "device", err, n))
			return -1;
		return describe(f, "device", arg, 0) ? -1 : 1;
	case GA_FILTER_OPT_KIND:
		if (each_item(arg, add_kind, f, "kind", err, n))
			return -1;
		return describe(f, "kind", arg, 0) ? -1 : 1;
	default:
		return 0;
	}
oom:
	snprintf(err, n, "out of memory");
	return -1;
}

/* The verdict on a kernel name, computed once per distinct name. */
static int kernel_kept(struct ga_filter *f, struct ga_model *m, uint32_t name)
{
	if (name >= f->capkmatch) {
		size_t old = f->capkmatch;

		if (ga_util_grow(&f->kmatch, &f->capkmatch, (size_t)name + 1, 1))
			return -1;
		memset(f->kmatch + old, 0, f->capkmatch - old);
	}
	if (!f->kmatch[name]) {
		/* The short form too, so that '^ns::axpy' finds "void ns::axpy<float>(...)". */
		int hit = matches(&f->kernel_re, "kernel", ga_strtab_full(&m->strs, name)) ||
			  matches(&f->kernel_re, "kernel", ga_strtab_short(&m->strs, name));

		f->kmatch[name] = hit ? 1 : 2;
	}
	return f->kmatch[name] == 1;
}

/* The --nvtx verdict of range name (key) k: made once a name, as the ranges come. */
static int key_matches(struct ga_filter *f, struct ga_ranges_key *k)
{
	if (!k->match)
		k->match = matches(&f->nvtx_re, "nvtx", ga_model_str(f->m, k->name)) ||
					   matches(&f->nvtx_re, "nvtx", ga_model_str(f->m, k->label)) ?
				   1 :
				   2;
	return k->match == 1;
}

static int range_matches(void *ctx, uint32_t range)
{
	struct ga_filter *f = ctx;

	uint32_t k = ga_ranges_key_of(f->nx, range);

	return k < f->nx->nkeys && key_matches(f, &f->nx->keys[k]);
}

/*
 * Whether a range open on the launching thread at the launch matches
 * --nvtx: the ranges kept, or, folded (ranges.h fold), the names on the
 * path of the innermost one's tree node (the ranges there nest).
 */
static int nvtx_kept(struct ga_filter *f, const struct ga_ranges_attr *at)
{
	const struct ga_ranges *nx = f->nx;

	if (at->inner != GA_RANGES_FOLDED)
		return ga_ranges_walk(f->nx, at, range_matches, f) != 0;
	for (uint32_t c = at->node; c < nx->nnodes; c = nx->nodes[c].parent)
		if (nx->nodes[c].kind == GA_RANGES_N_RANGE && nx->nodes[c].id < nx->nkeys &&
		    key_matches(f, &f->nx->keys[nx->nodes[c].id]))
			return 1;
	return 0;
}

int ga_filter_keep(void *ctx, struct ga_model *m, struct ga_act *a)
{
	struct ga_filter *f = ctx;
	struct ga_ranges_attr at;
	size_t i;
	int k;

	f->seen++;
	if (f->kinds && !(f->kinds & (1u << a->kind)))
		return 0;
	if (f->ndevices) {
		for (i = 0; i < f->ndevices && f->devices[i] != a->device_id; i++)
			;
		if (i == f->ndevices)
			return 0;
	}
	if (f->has_kernel) {
		if (a->kind != GA_ACT_KERNEL)
			return 0;
		k = kernel_kept(f, m, a->name);
		if (k <= 0)
			return k;
	}
	if (!f->nx) {
		if (f->has_nvtx)
			return 0;
		f->kept++;
		return 1;
	}
	at = ga_ranges_attribute(f->nx, a);
	if (f->has_nvtx && !nvtx_kept(f, &at))
		return 0;
	a->nvtx_range = at.inner < GA_RANGES_UNATTR ? at.inner + 1 : 0;
	a->nvtx = ga_ranges_account(f->nx, a, &at);
	if (a->nvtx == GA_STR_NOMEM)
		return -1;
	f->kept++;
	return 1;
}

void ga_filter_bind(struct ga_filter *f, struct ga_ranges *nx, struct ga_model *m)
{
	size_t i;

	/* "name" or, in a domain, "domain:name" too: each name's verdict as it is asked. */
	f->m = m;
	for (i = 0; i < nx->nkeys; i++)
		nx->keys[i].match = 0;
	f->nx = nx;
	/* A paced trace's ranges come as the model reads it (ranges.h pace). */
	if (!ga_filter_active(f) && !nx->nranges && !nx->paced && !nx->site_of) {
		/* Nothing to drop or attribute: the NVTX tree comes from the model's totals. */
		nx->from_model = 1;
		return;
	}
	m->keep = ga_filter_keep;
	m->keep_ctx = f;
}
