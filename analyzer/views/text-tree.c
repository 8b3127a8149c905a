/*
 * The NVTX range tree (report --tree): ranges, nested ranges and the
 * activities launched in them, with the GPU time of each subtree; under
 * each kernel of a trace recorded with --metrics, its hardware metrics
 * (range -> kernel -> metrics).  The rows are streamed (a walk to measure
 * the columns, a walk to print), and nesting is drawn DRAWN_DEPTH levels
 * deep at most: memory and output stay in proportion to the tree's nodes.
 * Runs offline only.
 */
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hwmetrics.h"
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
	const struct ga_mx_peaks *p = ga_mx_peaks_of(mx, k->first->proc, k->first->device);
	struct ga_roof r;
	char tb[48];
	int rc;

	ga_roof_eval(k->flops, k->have_dram ? k->dram : 0, k->time_ns, p ? &p->p : NULL, &r);
	rc = ga_buf_printf(b, "roofline: %" PRIu64 " profiled, %s", k->launches,
			   k->time_ns ? ga_fmt_time(tb, sizeof(tb), k->time_ns / (k->launches ? k->launches : 1))
				      : "no time");
	if (r.dominant >= 0)
		rc |= ga_buf_printf(b, ", %.2f TFLOP/s %s", r.flop_s[r.dominant] / 1e12,
				    ga_mx_prec[r.dominant].name);
	if (k->have_dram && k->time_ns)
		rc |= ga_buf_printf(b, ", DRAM %.1f GB/s", r.dram_bw / 1e9);
	if (k->have_dram && r.flops > 0 && isfinite(r.ai))
		rc |= ga_buf_printf(b, ", %.3g FLOP/B", r.ai);
	if (r.verdict != GA_ROOF_UNKNOWN)
		rc |= ga_buf_printf(b, ", %.0f%% of %s roof: %s", r.pct,
				    r.memory_side ? "DRAM" : ga_mx_prec[r.dominant].name,
				    ga_roof_verdict_name(r.verdict));
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

/*
 * Nesting drawn: deeper nodes are drawn at this depth, their own depth in
 * brackets before the connector, so that a row costs the same at any depth
 * (a trace of a million nested ranges would otherwise print terabytes).
 */
#define DRAWN_DEPTH 32

struct walk {
	const struct ga_ranges *nx;
	struct ga_model *m;
	const struct ga_mx *mx;
	size_t width;
	struct ga_table t;
	struct kmx km;
	struct ga_buf pre, cell, name;
	size_t lens[DRAWN_DEPTH];  /* pre.len before each drawn level */
	FILE *out;                 /* NULL: measure the columns only */
	int any_mx;
	int any_other;             /* a row of other threads' kernels was drawn */
};

/* One row: the columns' widths when measuring, else the row printed. */
static int emit(struct walk *w, const char *c0, const char *c1, const char *c2, const char *c3)
{
	const char *cells[4] = { c0, c1, c2, c3 };

	if (!w->out) {
		for (int c = 0; c < 4; c++) {
			size_t n = ga_fmt_width(cells[c]);

			if (n > w->t.width[c])
				w->t.width[c] = n;
		}
		return 0;
	}
	ga_table_print_row(&w->t, w->out, cells);
	return 0;
}

/*
 * Under range node n, the kernels other threads of the process launched
 * while ranges of its name path were open (ranges.h): one row, drawn as
 * the node's first child, not part of the node's own GPU time.
 */
static int other_row(struct walk *w, const struct ga_ranges_node *n, int last)
{
	static const char bar[] = "\xe2\x94\x82   ";
	char tb[48], kb[32];
	int rc = 0;

	if (n->kind != GA_RANGES_N_RANGE || !n->other_kernels)
		return 0;
	w->any_other = 1;
	ga_fmt_time(tb, sizeof(tb), n->other_ns);
	snprintf(kb, sizeof(kb), "%" PRIu64, n->other_kernels);
	w->cell.len = 0;
	rc |= ga_buf_put(&w->cell, "", 0);
	if (w->pre.len)
		rc |= ga_buf_put(&w->cell, w->pre.p, w->pre.len);
	if (n->parent != GA_RANGES_NONE)
		rc |= last ? ga_buf_put(&w->cell, "    ", 4) : ga_buf_put(&w->cell, bar, sizeof(bar) - 1);
	rc |= ga_buf_printf(&w->cell, "%s(+ other threads' kernels while open)",
			    n->child != GA_RANGES_NONE ? bar : "    ");
	return rc ? -1 : emit(w, tb, "-", kb, w->cell.p ? w->cell.p : "");
}

/* The metrics of kernel node n, as its children (drawing only). */
static int metric_rows(struct walk *w, const struct ga_ranges_node *n, int last)
{
	static const char tee[] = "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ";
	static const char elbow[] = "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 ";
	static const char bar[] = "\xe2\x94\x82   ";
	const struct ga_mx *mx = w->mx;
	size_t base = w->pre.len, nv = 0, shown = 0;
	int rc = 0;

	if (!w->km.vals || n->kind != GA_RANGES_N_KERNEL || !kernel_metrics(mx, n->id, &w->km))
		return 0;
	w->any_mx = 1;
	if (n->parent != GA_RANGES_NONE)
		rc |= last ? ga_buf_put(&w->pre, "    ", 4) : ga_buf_put(&w->pre, bar, sizeof(bar) - 1);
	for (size_t j = 0; j < mx->nnames; j++)
		nv += w->km.vals[j] != 0;
	for (size_t j = 0; j <= mx->nnames && !rc; j++) {
		if (j && w->km.vals[j - 1] == 0)
			continue;
		w->cell.len = 0;
		rc |= ga_buf_put(&w->cell, "", 0);
		if (w->pre.len)
			rc |= ga_buf_put(&w->cell, w->pre.p, w->pre.len);
		/* The roofline line first, then the values; the last one closes. */
		rc |= ga_buf_put(&w->cell, (j ? shown + 1 : 0) == nv ? elbow : tee, sizeof(tee) - 1);
		if (!j)
			rc |= roof_line(&w->cell, mx, &w->km);
		else
			rc |= ga_buf_printf(&w->cell, "%s = %.6g", ga_model_str(w->m, mx->names[j - 1]),
					    w->km.vals[j - 1] / (double)(w->km.launches ? w->km.launches : 1));
		if (j)
			shown++;
		if (!rc)
			rc = emit(w, "", "", "", w->cell.p ? w->cell.p : "");
	}
	w->pre.len = base;
	return rc;
}

/*
 * Depth-first without recursion (nesting may be deep), each row emitted as
 * it comes (or measured): nothing grows with the tree.  pre
 * is the branch drawn left of the current node's connector.
 */
static int walk_tree(struct walk *w)
{
	static const char tee[] = "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ";  /* "├── " */
	static const char elbow[] = "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 "; /* "└── " */
	static const char bar[] = "\xe2\x94\x82   ";                         /* "│   " */
	const struct ga_ranges *nx = w->nx;
	uint32_t x = nx->root;
	size_t depth = 0;
	char tb[48], cb[32], kb[32], nb[1024];
	int rc = 0;

	w->pre.len = 0;
	while (x != GA_RANGES_NONE && !rc) {
		const struct ga_ranges_node *n = &nx->nodes[x];
		int last = n->next == GA_RANGES_NONE;
		const char *text;

		ga_fmt_time(tb, sizeof(tb), n->gpu_ns);
		if (ga_ranges_pseudo_root(n))
			snprintf(cb, sizeof(cb), "-");
		else
			snprintf(cb, sizeof(cb), "%" PRIu64, n->instances);
		snprintf(kb, sizeof(kb), "%" PRIu64, n->kernels);
		w->cell.len = 0;
		rc |= ga_buf_put(&w->cell, "", 0);
		if (w->pre.len)
			rc |= ga_buf_put(&w->cell, w->pre.p, w->pre.len);
		if (depth > DRAWN_DEPTH)
			rc |= ga_buf_printf(&w->cell, "[%zu] ", depth);
		if (n->parent != GA_RANGES_NONE)
			rc |= ga_buf_put(&w->cell, last ? elbow : tee, sizeof(tee) - 1);
		if (!(text = node_text(nx, w->m, n, &w->name)))
			rc = -1;
		else
			rc |= ga_buf_printf(&w->cell, "%s", ga_text_cut(nb, sizeof(nb), text, w->width));
		if (!rc)
			rc = emit(w, tb, cb, kb, w->cell.p ? w->cell.p : "");
		if (!rc)
			rc = other_row(w, n, last);
		if (!rc)
			rc = metric_rows(w, n, last);
		if (rc)
			break;
		if (n->child != GA_RANGES_NONE) {
			/* Levels past DRAWN_DEPTH add nothing to the branch. */
			if (depth < DRAWN_DEPTH) {
				w->lens[depth] = w->pre.len;
				if (n->parent != GA_RANGES_NONE)
					rc |= last ? ga_buf_put(&w->pre, "    ", 4) :
						     ga_buf_put(&w->pre, bar, sizeof(bar) - 1);
			}
			depth++;
			x = n->child;
			continue;
		}
		/* Up until a node has a next sibling. */
		while (x != GA_RANGES_NONE && nx->nodes[x].next == GA_RANGES_NONE) {
			x = nx->nodes[x].parent;
			if (x != GA_RANGES_NONE && --depth < DRAWN_DEPTH)
				w->pre.len = w->lens[depth];
		}
		if (x != GA_RANGES_NONE)
			x = nx->nodes[x].next;
	}
	return rc;
}

int ga_text_tree_print(const struct ga_ranges *nx, struct ga_model *m, const struct ga_mx *mx,
		       size_t width, FILE *out)
{
	struct walk w;
	int rc;

	if (nx->root == GA_RANGES_NONE) {
		fputs("NVTX tree: no GPU activity\n", out);
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.nx = nx;
	w.m = m;
	w.mx = mx;
	w.width = width;
	if (mx && mx->nk && !(w.km.vals = calloc(mx->nnames + 1, sizeof(double))))
		return -1;
	ga_table_init(&w.t, 4);
	ga_table_col(&w.t, 0, "GPU time", 1, 0);
	ga_table_col(&w.t, 1, "Count", 1, 0);
	ga_table_col(&w.t, 2, "Kernels", 1, 0);
	ga_table_col(&w.t, 3, "Range / activity", 0, 0);
	/* Twice: the columns' widths first, then the rows, none of them kept. */
	rc = walk_tree(&w);
	if (!rc) {
		fputs("NVTX tree (GPU time and kernels of the whole subtree; count: range "
		      "instances or activities):\n", out);
		ga_table_print_head(&w.t, out);
		w.out = out;
		rc = walk_tree(&w);
	}
	if (!rc && w.any_mx)
		fputs("Under each kernel: its hardware metrics, averaged over its profiled "
		      "launches (in any range); zero values left out.\n", out);
	if (!rc && w.any_other)
		fputs("(+ other threads' kernels while open): kernels that other threads of the "
		      "process launched while the range\nwas open (PyTorch's backward runs on "
		      "autograd's thread), each once; not in the range's own GPU time.\n", out);
	ga_table_free(&w.t);
	ga_buf_free(&w.pre);
	ga_buf_free(&w.cell);
	ga_buf_free(&w.name);
	free(w.km.vals);
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
