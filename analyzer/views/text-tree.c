/*
 * The NVTX range tree (report --tree): ranges, nested ranges and the
 * activities launched in them, with the GPU time of each subtree; under
 * each kernel of a trace recorded with --metrics, its hardware metrics
 * (range -> kernel -> metrics).  Runs offline only.
 */
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/metrics.h"
#include "views/text.h"

/* A kernel's metrics, summed over its profiled launches on every device. */
struct kmx {
	uint64_t launches, time_ns;
	double flops[GA_MX_PREC], dram;
	int have_dram;
	const struct ga_mx_kernel *first;
	double *vals;              /* per ga_mx name */
};

static int kernel_metrics(const struct ga_mx *mx, uint32_t name, struct kmx *k)
{
	int found = 0;

	memset(k->flops, 0, sizeof(k->flops));
	k->launches = k->time_ns = 0;
	k->dram = 0;
	k->have_dram = 0;
	k->first = NULL;
	for (size_t j = 0; j < mx->nnames; j++)
		k->vals[j] = 0;
	for (size_t i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *x = &mx->k[i];

		if (x->name != name)
			continue;
		found = 1;
		if (!k->first)
			k->first = x;
		k->launches += x->launches;
		k->time_ns += x->time_ns;
		for (int c = 0; c < GA_MX_PREC; c++)
			k->flops[c] += x->flops[c];
		if (x->have & GA_MX_HAVE_DRAM) {
			k->dram += x->dram_total;
			k->have_dram = 1;
		}
		for (size_t j = 0; j < mx->nnames; j++)
			if (!isnan(x->vals[j]))
				k->vals[j] += x->vals[j];
	}
	return found;
}

/* The roofline of a kernel in one line: "2 launches, 1.20 ms, 61.2 TFLOP/s FP32, ...". */
static int roof_line(struct ga_buf *b, const struct ga_mx *mx, const struct kmx *k)
{
	static const char *const pn[GA_MX_PREC] = { "FP64", "FP32", "FP16", "TC-FP16", "TC-TF32",
						    "TC-FP8", "TC-FP64" };
	const struct ga_mx_peaks *p = ga_mx_peaks_of(mx, k->first->proc, k->first->device);
	struct ga_roof r;
	char tb[48];
	int rc;

	ga_roof_eval(k->flops, k->have_dram ? k->dram : 0, k->time_ns, p ? &p->p : NULL, &r);
	rc = ga_buf_printf(b, "roofline: %" PRIu64 " profiled, %s", k->launches,
			   k->time_ns ? ga_fmt_time(tb, sizeof(tb), k->time_ns / (k->launches ? k->launches : 1))
				      : "no time");
	if (r.dominant >= 0)
		rc |= ga_buf_printf(b, ", %.2f TFLOP/s %s", r.flop_s[r.dominant] / 1e12, pn[r.dominant]);
	if (k->have_dram && k->time_ns)
		rc |= ga_buf_printf(b, ", DRAM %.1f GB/s", r.dram_bw / 1e9);
	if (k->have_dram && r.flops > 0 && isfinite(r.ai))
		rc |= ga_buf_printf(b, ", %.3g FLOP/B", r.ai);
	if (r.verdict != GA_ROOF_UNKNOWN)
		rc |= ga_buf_printf(b, ", %.0f%% of %s roof: %s", r.pct,
				    r.memory_side ? "DRAM" : pn[r.dominant], ga_roof_verdict_name(r.verdict));
	return rc;
}

/* Text of a tree node, without its branch; b holds built names. */
static const char *node_text(const struct ga_ranges *nx, struct ga_model *m,
			     const struct ga_ranges_node *n, struct ga_buf *b)
{
	char kb[16];
	int rc;

	b->len = 0;
	switch (n->kind) {
	case GA_RANGES_N_RANGE:
		return ga_model_str(m, nx->keys[n->id].label);
	case GA_RANGES_N_NORANGE:
		return "(no range)";
	case GA_RANGES_N_UNATTR:
		return "(unattributed: no API record)";
	case GA_RANGES_N_KERNEL:
		rc = ga_buf_printf(b, "kernel %s", ga_strtab_short(&m->strs, n->id));
		break;
	case GA_RANGES_N_MEMCPY:
		rc = ga_buf_printf(b, "memcpy %s", ga_model_copy_kind(n->id, kb, sizeof(kb)));
		break;
	case GA_RANGES_N_MEMSET:
		return "memset";
	case GA_RANGES_N_SITE:
		rc = ga_buf_printf(b, "from %s", ga_model_str(m, n->id));
		break;
	default:
		rc = ga_buf_printf(b, "graph %u", n->id);
		break;
	}
	return rc || !b->p ? NULL : b->p;
}

int ga_text_tree_print(const struct ga_ranges *nx, struct ga_model *m, const struct ga_mx *mx,
		       size_t width, FILE *out)
{
	static const char tee[] = "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ";  /* "├── " */
	static const char elbow[] = "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 "; /* "└── " */
	static const char bar[] = "\xe2\x94\x82   ";                         /* "│   " */
	struct ga_buf pre = { 0 }, cell = { 0 }, name = { 0 };
	size_t *lens = NULL, nlens = 0, caplens = 0;
	struct ga_table t;
	char tb[48], nb[1024];
	uint32_t x = nx->root;
	struct kmx km = { 0 };
	int rc = 0, any_mx = 0;

	if (x == GA_RANGES_NONE) {
		fputs("NVTX tree: no GPU activity\n", out);
		return 0;
	}
	if (mx && mx->nk && !(km.vals = calloc(mx->nnames + 1, sizeof(double))))
		return -1;
	ga_table_init(&t, 4);
	ga_table_col(&t, 0, "GPU time", 1, 0);
	ga_table_col(&t, 1, "Count", 1, 0);
	ga_table_col(&t, 2, "Kernels", 1, 0);
	ga_table_col(&t, 3, "Range / activity", 0, 0);
	/* Depth-first without recursion (nesting may be deep); pre is the
	 * branch drawn left of the current node's connector. */
	while (x != GA_RANGES_NONE && !rc) {
		const struct ga_ranges_node *n = &nx->nodes[x];
		int last = n->next == GA_RANGES_NONE;
		const char *text = node_text(nx, m, n, &name);

		cell.len = 0;
		rc |= ga_buf_put(&cell, "", 0);
		if (pre.len)
			rc |= ga_buf_put(&cell, pre.p, pre.len);
		if (n->parent != GA_RANGES_NONE)
			rc |= ga_buf_put(&cell, last ? elbow : tee, sizeof(tee) - 1);
		if (!text)
			rc = -1;
		else
			rc |= ga_buf_printf(&cell, "%s", ga_text_cut(nb, sizeof(nb), text, width));
		rc |= ga_table_add(&t, ga_fmt_time(tb, sizeof(tb), n->gpu_ns));
		if (ga_ranges_pseudo_root(n))
			rc |= ga_table_add(&t, "-");
		else
			rc |= ga_table_addf(&t, "%" PRIu64, n->instances);
		rc |= ga_table_addf(&t, "%" PRIu64, n->kernels);
		rc |= ga_table_add(&t, cell.p ? cell.p : "");
		/* Under a kernel: its hardware metrics, as children of the node. */
		if (km.vals && n->kind == GA_RANGES_N_KERNEL && kernel_metrics(mx, n->id, &km)) {
			size_t base = pre.len, nv = 0, shown = 0;

			any_mx = 1;
			if (n->parent != GA_RANGES_NONE)
				rc |= last ? ga_buf_put(&pre, "    ", 4) :
					     ga_buf_put(&pre, bar, sizeof(bar) - 1);
			for (size_t j = 0; j < mx->nnames; j++)
				nv += km.vals[j] != 0;
			for (size_t j = 0; j <= mx->nnames && !rc; j++) {
				if (j && km.vals[j - 1] == 0)
					continue;
				cell.len = 0;
				rc |= ga_buf_put(&cell, "", 0);
				if (pre.len)
					rc |= ga_buf_put(&cell, pre.p, pre.len);
				/* The roofline line first, then the values; the last one closes. */
				rc |= ga_buf_put(&cell, (j ? shown + 1 : 0) == nv ? elbow : tee,
						 sizeof(tee) - 1);
				if (!j)
					rc |= roof_line(&cell, mx, &km);
				else
					rc |= ga_buf_printf(&cell, "%s = %.6g", ga_model_str(m, mx->names[j - 1]),
							    km.vals[j - 1] / (double)(km.launches ? km.launches : 1));
				if (j)
					shown++;
				rc |= ga_table_add(&t, "");
				rc |= ga_table_add(&t, "");
				rc |= ga_table_add(&t, "");
				rc |= ga_table_add(&t, cell.p ? cell.p : "");
			}
			pre.len = base;
		}
		if (n->child != GA_RANGES_NONE) {
			if (ga_util_grow(&lens, &caplens, nlens + 1, sizeof(*lens))) {
				rc = -1;
				break;
			}
			lens[nlens++] = pre.len;
			if (n->parent != GA_RANGES_NONE)
				rc |= last ? ga_buf_put(&pre, "    ", 4) :
					     ga_buf_put(&pre, bar, sizeof(bar) - 1);
			x = n->child;
			continue;
		}
		/* Up until a node has a next sibling. */
		while (x != GA_RANGES_NONE && nx->nodes[x].next == GA_RANGES_NONE) {
			x = nx->nodes[x].parent;
			if (x != GA_RANGES_NONE)
				pre.len = lens[--nlens];
		}
		if (x != GA_RANGES_NONE)
			x = nx->nodes[x].next;
	}
	if (!rc) {
		fputs("NVTX tree (GPU time and kernels of the whole subtree; count: range "
		      "instances or activities):\n", out);
		ga_table_print(&t, out);
		if (any_mx)
			fputs("Under each kernel: its hardware metrics, averaged over its profiled "
			      "launches (in any range); zero values left out.\n", out);
	}
	ga_table_free(&t);
	ga_buf_free(&pre);
	ga_buf_free(&cell);
	ga_buf_free(&name);
	free(km.vals);
	free(lens);
	return rc ? -1 : 0;
}

static int want(const struct ga_text *r)
{
	return r->o.tree;
}

static int print(struct ga_text *r, FILE *out)
{
	return ga_text_tree_print(&r->an->rg, r->m, &r->an->mx,
				  r->o.full_names ? 0 : GA_TEXT_NAME_WIDTH, out);
}

const struct ga_text_section ga_text_tree = { "tree", want, print };
