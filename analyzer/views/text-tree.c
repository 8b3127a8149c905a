/*
 * The NVTX range tree (report --tree): ranges, nested ranges and the
 * activities launched in them, with the GPU time of each subtree.
 * Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/text.h"

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

int ga_text_tree_print(const struct ga_ranges *nx, struct ga_model *m, size_t width,
		       FILE *out)
{
	static const char tee[] = "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ";  /* "├── " */
	static const char elbow[] = "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 "; /* "└── " */
	static const char bar[] = "\xe2\x94\x82   ";                         /* "│   " */
	struct ga_buf pre = { 0 }, cell = { 0 }, name = { 0 };
	size_t *lens = NULL, nlens = 0, caplens = 0;
	struct ga_table t;
	char tb[48], nb[1024];
	uint32_t x = nx->root;
	int rc = 0;

	if (x == GA_RANGES_NONE) {
		fputs("NVTX tree: no GPU activity\n", out);
		return 0;
	}
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
	}
	ga_table_free(&t);
	ga_buf_free(&pre);
	ga_buf_free(&cell);
	ga_buf_free(&name);
	free(lens);
	return rc ? -1 : 0;
}

static int want(const struct ga_text *r)
{
	return r->o.tree;
}

static int print(struct ga_text *r, FILE *out)
{
	return ga_text_tree_print(&r->an->rg, r->m, r->o.full_names ? 0 : GA_TEXT_NAME_WIDTH, out);
}

const struct ga_text_section ga_text_tree = { "tree", want, print };
