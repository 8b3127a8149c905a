/*
 * Unit tests of NVTX attribution and the report filters: nesting, range
 * boundaries, ranges closed on another thread, other threads, unterminated
 * ranges, runtime/driver calls sharing a correlation, inclusive GPU time,
 * the range tree, graph nodes, merged processes and every filter, the
 * kernels other threads launched while a range was open, launch times
 * far apart and the launches kept as their innermost range alone, on
 * synthetic traces with known answers.  Test code, runs offline only,
 * needs no GPU.
 */
#include <stdint.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/filter.h"
#include "model/model.h"
#include "model/ranges.h"
#include "views/text.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define GPU0 (T0 + 1000000)        /* GPU times, after every host time */
#define NACT 15

struct loaded {
	struct ga_model m;
	struct ga_row *rows; /* the timeline's rows, in start order */
	struct ga_ranges nx;
	struct ga_filter f;
	int ok;
};

struct trace {
	unsigned char *buf;
	size_t len;
};

/* Ask load() for folded ranges (ranges.h: fold), the "step" ranges kept as the ranks' are. */
static int load_fold;
/* Records after a thread's last range before a fold takes it to hold none open (0: default). */
static uint64_t load_quiet;
/* How far a fold stays behind the newest times (ranges.h fold_lag): none unless asked. */
static uint64_t load_lag = UINT64_MAX;

static int keep_step(const char *name)
{
	return !strcmp(name, "step");
}

static int close_trace(struct synth *s, struct trace *t)
{
	t->buf = NULL;
	t->len = 0;
	return synth_close(s, &t->buf, &t->len);
}

/* Load traces as processes of one report, through l->f (options already given). */
static void load(struct loaded *l, const struct trace *t, size_t n)
{
	struct ga_ranges_src src[4] = { { 0 } };
	size_t i;

	l->ok = 0;
	l->rows = NULL;
	ga_model_init(&l->m);
	ga_ranges_init(&l->nx);
	l->nx.fold = load_fold;
	l->nx.fold_keep = load_fold ? keep_step : NULL;
	l->nx.fold_quiet = load_quiet;
	l->nx.fold_lag = load_lag;
	l->m.keep_rows = SIZE_MAX;
	for (i = 0; i < n; i++) {
		src[i].path = "synth";
		src[i].buf = t[i].buf;
		src[i].len = t[i].len;
	}
	if (ga_ranges_scan(&l->nx, &l->m, src, n))
		return;
	ga_filter_bind(&l->f, &l->nx, &l->m);
	for (i = 0; i < n; i++)
		if (ga_model_add_mem(&l->m, "synth", t[i].buf, t[i].len) != GA_READ_OK)
			return;
	if (ga_model_finish(&l->m) || ga_ranges_finish(&l->nx, &l->m, ga_filter_active(&l->f)))
		return;
	/* The rows come one at a time from their sort (base/xsort.h): kept here to index. */
	l->rows = calloc(l->m.nrows + 1, sizeof(*l->rows));
	if (!l->rows)
		return;
	i = 0;
	for (const struct ga_row *r; i < l->m.nrows && (r = ga_xsort_next(&l->m.rows));)
		l->rows[i++] = *r;
	l->ok = i == l->m.nrows;
}

static void unload(struct loaded *l)
{
	ga_model_free(&l->m);
	ga_ranges_free(&l->nx);
	ga_filter_free(&l->f);
	free(l->rows);
	l->rows = NULL;
}

static const struct ga_ranges_key *key_named(struct loaded *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nx.nkeys; i++)
		if (!strcmp(ga_model_str(&l->m, l->nx.keys[i].label), name))
			return &l->nx.keys[i];
	return NULL;
}

/* Label of the activity of correlation c in the main trace (row c - 1). */
static const char *row_label(struct loaded *l, size_t c)
{
	if (c - 1 >= l->m.nrows)
		return "(missing)";
	return l->rows[c - 1].nvtx ? ga_model_str(&l->m, l->rows[c - 1].nvtx) : "";
}

/*
 * Host thread 100: A [1000,2000) holds B [1200,1500) and C [1500,1800);
 * D [3000,4000) opens on 100 and closes on 300; E [5000,9000) is still
 * open at exit; "r" [10000,10100) holds another "r".  Thread 200: F
 * [1000,2000).  Activity c (correlation c) lasts 10*c ns; see expect[].
 */
static const struct {
	uint32_t tid;
	uint64_t api;              /* 0: no API record */
	const char *label;         /* innermost range, "" none */
} acts[NACT + 1] = {
	[1] = { 100, 1100, "A" },
	[2] = { 100, 1200, "B" },      /* a range's start is inside it */
	[3] = { 100, 1499, "B" },
	[4] = { 100, 1500, "C" },      /* B's end is not; C starts there */
	[5] = { 100, 1999, "A" },
	[6] = { 100, 2000, "" },       /* A's end */
	[7] = { 300, 1300, "" },       /* a thread without ranges */
	[8] = { 100, 3500, "D" },      /* opened on 100, closed on 300 */
	[9] = { 300, 3500, "" },       /* D counts on its opening thread only */
	[10] = { 100, 6000, "E" },     /* unterminated */
	[11] = { 100, 0, "" },         /* no API record: unattributed */
	[12] = { 100, 1150, "A" },     /* runtime at 1150 (A), driver at 1250 (B) */
	[13] = { 200, 1300, "F" },     /* another thread's range */
	[14] = { 100, 10020, "r" },    /* "r" inside "r" */
	[15] = { 100, 1300, "B" },     /* a memcpy */
};

static struct trace main_trace(void)
{
	struct synth *s = synth_open(NULL);
	struct trace t = { NULL, 0 };
	uint32_t k, other, launch, drv, n[8], mark;
	size_t c;

	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_device(s, 1, "GPU", 9, 0, 132, 1ull << 36, 40);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	k = synth_string(s, "_Z1kv");
	other = synth_string(s, "_Z5otherv");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	drv = synth_string(s, "cuLaunchKernel");
	mark = synth_string(s, "m1");
	n[0] = synth_string(s, "A");
	n[1] = synth_string(s, "B");
	n[2] = synth_string(s, "C");
	n[3] = synth_string(s, "D");
	n[4] = synth_string(s, "E");
	n[5] = synth_string(s, "F");
	n[6] = synth_string(s, "r");
	/* Activities first, as CUPTI delivers them: before their API records and ranges. */
	for (c = 1; c <= NACT; c++) {
		uint64_t g = GPU0 + c * 1000;

		if (c == 15)
			synth_memcpy_corr(s, GP_COPY_HTOD, 64, g, g + 10 * c, 0, (uint32_t)c);
		else
			synth_kernel_corr(s, c == 13 ? other : k, g, g + 10 * c, c == 10 ? 1 : 0,
					  (uint32_t)c, 0, 0);
	}
	for (c = 1; c <= NACT; c++)
		if (acts[c].api)
			synth_api_corr(s, launch, T0 + acts[c].api, T0 + acts[c].api + 5,
				       acts[c].tid, (uint32_t)c, GP_API_RUNTIME);
	synth_api_corr(s, drv, T0 + 1250, T0 + 1252, 100, 12, GP_API_DRIVER);
	synth_nvtx_range(s, n[1], 0, T0 + 1200, T0 + 1500, 100, 100, 2, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[2], 0, T0 + 1500, T0 + 1800, 100, 100, 3, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[0], 0, T0 + 1000, T0 + 2000, 100, 100, 1, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[5], 0, T0 + 1000, T0 + 2000, 200, 200, 8, 0);
	synth_nvtx_range(s, n[3], 0, T0 + 3000, T0 + 4000, 100, 300, 4, 0);
	synth_nvtx_range(s, n[6], 0, T0 + 10010, T0 + 10050, 100, 100, 7, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[6], 0, T0 + 10000, T0 + 10100, 100, 100, 6, GP_NVTX_PUSHPOP);
	synth_nvtx_mark(s, mark, 0, T0 + 1300, 100, 9);
	synth_nvtx_mark(s, mark, 0, T0 + 1400, 100, 10);
	synth_nvtx_range(s, n[4], 0, T0 + 5000, T0 + 9000, 100, 100, 5, GP_NVTX_UNTERMINATED);
	synth_end(s, T0 + 9000, 0);
	close_trace(s, &t);
	return t;
}

static void test_attribution(const struct trace *t)
{
	struct loaded l;
	size_t c;

	tap_begin("nvtx attribution: nesting, boundaries, threads, unterminated");
	ga_filter_init(&l.f);
	load(&l, t, 1);
	CHECK(l.ok);
	CHECKF(l.nx.nranges == 8, "%zu ranges", l.nx.nranges);
	CHECKF(l.m.nrows == NACT, "%zu rows", l.m.nrows);
	for (c = 1; c <= NACT && l.ok; c++)
		CHECKF(!strcmp(row_label(&l, c), acts[c].label), "activity %zu: '%s', want '%s'",
		       c, row_label(&l, c), acts[c].label);
	CHECKF(l.nx.acts == NACT && l.nx.in_range == 11 && l.nx.no_range == 3 &&
	       l.nx.unattributed == 1, "%llu acts, %llu in, %llu none, %llu unattributed",
	       (unsigned long long)l.nx.acts, (unsigned long long)l.nx.in_range,
	       (unsigned long long)l.nx.no_range, (unsigned long long)l.nx.unattributed);
	CHECK(l.nx.unterminated == 1);
	CHECK(l.nx.nmarks == 1 && l.nx.marks[0].count == 2);
	tap_end();
	unload(&l);
}

static void test_inclusive(const struct trace *t)
{
	static const struct {
		const char *name;
		uint64_t count, cpu, gpu, acts, kernels;
	} want[] = {
		{ "A", 1, 1000, 10 * (1 + 2 + 3 + 4 + 5 + 12 + 15), 7, 6 },
		{ "B", 1, 300, 10 * (2 + 3 + 15), 3, 2 },
		{ "C", 1, 300, 40, 1, 1 },
		{ "D", 1, 1000, 80, 1, 1 },
		{ "E", 1, 4000, 100, 1, 1 },
		{ "F", 1, 1000, 130, 1, 1 },
		{ "r", 2, 140, 140, 1, 1 },   /* nested in itself: counted once */
	};
	struct loaded l;
	size_t i;

	tap_begin("nvtx inclusive GPU time, kernel counts, CPU time");
	ga_filter_init(&l.f);
	load(&l, t, 1);
	CHECK(l.ok);
	for (i = 0; i < sizeof(want) / sizeof(want[0]) && l.ok; i++) {
		const struct ga_ranges_key *k = key_named(&l, want[i].name);

		CHECKF(k, "no range %s", want[i].name);
		if (!k)
			continue;
		CHECKF(k->count == want[i].count && k->cpu_total == want[i].cpu &&
		       k->gpu_ns == want[i].gpu && k->acts == want[i].acts &&
		       k->kernels == want[i].kernels,
		       "%s: count %llu cpu %llu gpu %llu acts %llu kernels %llu", want[i].name,
		       (unsigned long long)k->count, (unsigned long long)k->cpu_total,
		       (unsigned long long)k->gpu_ns, (unsigned long long)k->acts,
		       (unsigned long long)k->kernels);
	}
	if (l.ok) {
		const struct ga_ranges_key *e = key_named(&l, "E");
		uint32_t *ord = ga_ranges_order_keys(&l.nx, &l.m);

		CHECK(e && e->unterminated == 1);
		CHECK(ord && !strcmp(ga_model_str(&l.m, l.nx.keys[ord[0]].label), "A") &&
		      !strcmp(ga_model_str(&l.m, l.nx.keys[ord[1]].label), "B"));
		free(ord);
	}
	tap_end();
	unload(&l);
}

static const struct ga_ranges_node *child(struct loaded *l, uint32_t parent, uint32_t kind,
					const char *text)
{
	uint32_t x = parent == GA_RANGES_NONE ? l->nx.root : l->nx.nodes[parent].child;

	for (; x != GA_RANGES_NONE; x = l->nx.nodes[x].next) {
		const struct ga_ranges_node *n = &l->nx.nodes[x];

		if (n->kind != kind)
			continue;
		if (kind == GA_RANGES_N_RANGE &&
		    strcmp(ga_model_str(&l->m, l->nx.keys[n->id].label), text))
			continue;
		if (kind == GA_RANGES_N_KERNEL && strcmp(ga_strtab_short(&l->m.strs, n->id), text))
			continue;
		return n;
	}
	return NULL;
}

static uint32_t idx(struct loaded *l, const struct ga_ranges_node *n)
{
	return n ? (uint32_t)(n - l->nx.nodes) : GA_RANGES_NONE;
}

static void test_tree(const struct trace *t)
{
	const struct ga_ranges_node *a, *b, *ka, *kb, *cp, *r, *rr, *none, *un;
	struct loaded l;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	tap_begin("nvtx tree: aggregated by name path, pseudo roots, printing");
	ga_filter_init(&l.f);
	load(&l, t, 1);
	CHECK(l.ok);
	a = child(&l, GA_RANGES_NONE, GA_RANGES_N_RANGE, "A");
	b = a ? child(&l, idx(&l, a), GA_RANGES_N_RANGE, "B") : NULL;
	ka = a ? child(&l, idx(&l, a), GA_RANGES_N_KERNEL, "k") : NULL;
	kb = b ? child(&l, idx(&l, b), GA_RANGES_N_KERNEL, "k") : NULL;
	cp = b ? child(&l, idx(&l, b), GA_RANGES_N_MEMCPY, NULL) : NULL;
	r = child(&l, GA_RANGES_NONE, GA_RANGES_N_RANGE, "r");
	rr = r ? child(&l, idx(&l, r), GA_RANGES_N_RANGE, "r") : NULL;
	none = child(&l, GA_RANGES_NONE, GA_RANGES_N_NORANGE, NULL);
	un = child(&l, GA_RANGES_NONE, GA_RANGES_N_UNATTR, NULL);
	CHECK(a && b && ka && kb && cp && r && rr && none && un);
	if (a && b && ka && kb && cp && r && rr && none && un) {
		CHECKF(a->instances == 1 && a->gpu_ns == 420 && a->kernels == 6 && a->acts == 7,
		       "A: %llu %llu %llu", (unsigned long long)a->instances,
		       (unsigned long long)a->gpu_ns, (unsigned long long)a->kernels);
		CHECK(ka->instances == 3 && ka->gpu_ns == 10 * (1 + 5 + 12));
		CHECK(kb->instances == 2 && kb->gpu_ns == 50 && cp->instances == 1 &&
		      cp->gpu_ns == 150 && b->kernels == 2);
		CHECK(r->instances == 1 && rr->instances == 1 && rr->gpu_ns == 140);
		CHECK(none->acts == 3 && none->gpu_ns == 10 * (6 + 7 + 9));
		CHECK(un->acts == 1 && un->gpu_ns == 110);
		/* Biggest first; the pseudo roots last. */
		CHECK(l.nx.root == idx(&l, a) && a->child == idx(&l, b));
		CHECK(un->next == GA_RANGES_NONE && none->next == idx(&l, un));
	}
	f = open_memstream(&text, &len);
	CHECK(f && ga_text_tree_print(&l.nx, &l.m, NULL, 0, f) == 0);
	if (f)
		fclose(f);
	CHECKF(text && strstr(text, "| A\n") &&
	       strstr(text, "| \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 B\n") &&
	       strstr(text, "| \xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 memcpy HtoD\n") &&
	       strstr(text, "| \xe2\x94\x82   \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 kernel k\n") &&
	       strstr(text, "| \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 C\n") &&
	       strstr(text, "|     \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 kernel k\n") &&
	       strstr(text, "| (no range)\n") &&
	       strstr(text, "| (unattributed: no API record)\n"), "tree:\n%s", text ? text : "");
	free(text);
	tap_end();
	unload(&l);
}

/* Load the main trace through the given options; kept activities, or -1. */
static long kept_with(const struct trace *t, const char *const *opts, struct loaded *out)
{
	struct loaded l;
	char err[256];
	long kept;
	int i;

	ga_filter_init(&l.f);
	for (i = 0; opts[i]; i += 2) {
		int opt = !strcmp(opts[i], "nvtx") ? GA_FILTER_OPT_NVTX :
			  !strcmp(opts[i], "kernel") ? GA_FILTER_OPT_KERNEL :
			  !strcmp(opts[i], "device") ? GA_FILTER_OPT_DEVICE : GA_FILTER_OPT_KIND;

		if (ga_filter_option(&l.f, opt, opts[i + 1], err, sizeof(err)) != 1) {
			ga_filter_free(&l.f);
			return -1;
		}
	}
	load(&l, t, 1);
	kept = l.ok ? (long)(l.m.counts[GA_ACT_KERNEL] + l.m.counts[GA_ACT_MEMCPY]) : -2;
	if (l.ok && (uint64_t)kept != l.f.kept)
		kept = -3;
	if (l.ok && l.m.dropped + l.f.kept != NACT)
		kept = -4;
	if (out)
		*out = l;
	else
		unload(&l);
	return kept;
}

static void test_filters(const struct trace *t)
{
	static const struct {
		const char *opts[7];
		long kept;
	} cases[] = {
		{ { "nvtx", "^B$", NULL }, 3 },
		{ { "nvtx", "A", NULL }, 7 },           /* at any depth */
		{ { "nvtx", "^(C|D|E)$", NULL }, 3 },
		{ { "nvtx", "r", NULL }, 1 },
		{ { "nvtx", "nothing", NULL }, 0 },
		{ { "kernel", "^other$", NULL }, 1 },   /* the short demangled name */
		{ { "kernel", "other\\(\\)", NULL }, 1 }, /* the full one */
		{ { "kernel", "k", NULL }, 13 },        /* the memcpy goes */
		{ { "kind", "memcpy", NULL }, 1 },
		{ { "kind", "kernel,memcpy", NULL }, 15 },
		{ { "kind", "memset", NULL }, 0 },
		{ { "device", "1", NULL }, 1 },
		{ { "device", "0,1", NULL }, 15 },
		{ { "device", "1", "device", "0", NULL }, 15 },
		{ { "kind", "kernel", "nvtx", "^B$", NULL }, 2 },
		{ { "device", "0", "nvtx", "E", NULL }, 0 },
	};
	static const char *const bad[][2] = {
		{ "nvtx", "(" }, { "kernel", "[a" }, { "kind", "kernels" }, { "kind", "kernel," },
		{ "device", "x" }, { "device", "-1" }, { "device", "" },
	};
	struct loaded l;
	size_t i;

	tap_begin("report filters: --nvtx, --kernel, --kind, --device");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long k = kept_with(t, cases[i].opts, NULL);

		CHECKF(k == cases[i].kept, "case %zu (--%s %s): kept %ld, want %ld", i,
		       cases[i].opts[0], cases[i].opts[1], k, cases[i].kept);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *opts[3] = { bad[i][0], bad[i][1], NULL };

		CHECKF(kept_with(t, opts, NULL) == -1, "--%s '%s' accepted", bad[i][0], bad[i][1]);
	}
	{
		const char *opts[] = { "nvtx", "^B$", NULL };

		/* Every table sees the subset; ranges keep their CPU figures. */
		if (kept_with(t, opts, &l) == 3) {
			const struct ga_ranges_key *a = key_named(&l, "A"), *c = key_named(&l, "C");

			CHECK(l.m.nkstats == 1 && l.m.copy[GP_COPY_HTOD].count == 1);
			CHECK(a && a->gpu_ns == 200 && a->count == 1 && a->cpu_total == 1000);
			CHECK(c && c->acts == 0);
			CHECK(l.nx.nodes[l.nx.root].kind == GA_RANGES_N_RANGE &&
			      l.nx.nodes[l.nx.root].next == GA_RANGES_NONE);
			CHECK(l.f.desc.p && !strcmp(l.f.desc.p, "--nvtx '^B$'"));
			unload(&l);
		} else {
			CHECK(!"--nvtx ^B$ kept 3");
		}
	}
	tap_end();
}

/* Graph kernels: the range where the node was created, else the launch's. */
static void test_graph_nodes(void)
{
	struct synth *s = synth_open(NULL);
	struct trace t;
	struct loaded l;
	uint32_t k, api, cap, lau;

	tap_begin("nvtx attribution of graph nodes");
	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	k = synth_string(s, "g_kernel");
	api = synth_string(s, "cudaGraphLaunch");
	cap = synth_string(s, "capture");
	lau = synth_string(s, "launch");
	synth_graph_node(s, 55, 3, 2, 0, 1);
	synth_graph_node(s, 56, 3, 3, 0, 0);
	synth_kernel_corr(s, k, GPU0, GPU0 + 10, 0, 9, 3, 55);
	synth_kernel_corr(s, k, GPU0 + 100, GPU0 + 120, 0, 9, 3, 56);
	synth_kernel_corr(s, k, GPU0 + 200, GPU0 + 230, 0, 9, 3, 57);
	synth_api_corr(s, api, T0 + 500, T0 + 510, 1, 9, GP_API_RUNTIME);
	synth_nvtx_range(s, cap, 0, T0 + 100, T0 + 200, 1, 1, 1, 0);
	synth_nvtx_range(s, lau, 0, T0 + 400, T0 + 600, 1, 1, 2, 0);
	synth_end(s, T0 + 1000, 0);
	close_trace(s, &t);
	ga_filter_init(&l.f);
	load(&l, &t, 1);
	CHECK(l.ok && l.m.nrows == 3);
	if (l.ok && l.m.nrows == 3) {
		CHECKF(!strcmp(ga_model_str(&l.m, l.rows[0].nvtx), "capture"), "node 55: %s",
		       ga_model_str(&l.m, l.rows[0].nvtx));
		CHECK(l.rows[1].nvtx == 0); /* created outside any range */
		CHECK(!strcmp(ga_model_str(&l.m, l.rows[2].nvtx), "launch"));
		CHECK(key_named(&l, "capture")->gpu_ns == 10 && key_named(&l, "launch")->gpu_ns == 30);
	}
	unload(&l);
	free(t.buf);
	tap_end();
}

/* Processes merged: the same correlations and tids mean different calls. */
static void test_processes(void)
{
	struct trace t[3];
	struct loaded l;
	int p;

	tap_begin("nvtx attribution across merged processes");
	for (p = 0; p < 3; p++) {
		struct synth *s = synth_open(NULL);
		uint32_t k = synth_string(s, "k"), api = synth_string(s, "cudaLaunchKernel");
		uint32_t name = synth_string(s, p == 0 ? "p1" : "p2");

		s->hdr.pid = (uint32_t)(100 + p);
		synth_process(s, (uint32_t)(100 + p), "h", "app", (uint32_t)p, T0);
		synth_config(s, p == 2 ? GP_TRACE_KERNEL | GP_TRACE_API :
			     GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
		synth_kernel_corr(s, k, GPU0 + (uint64_t)p * 100, GPU0 + (uint64_t)p * 100 + 10, 0,
				  1, 0, 0);
		synth_kernel_corr(s, k, GPU0 + (uint64_t)p * 100 + 50,
				  GPU0 + (uint64_t)p * 100 + 60, 0, 2, 0, 0);
		synth_api_corr(s, api, T0 + 50, T0 + 55, 7, 1, GP_API_RUNTIME);
		synth_api_corr(s, api, T0 + 250, T0 + 255, 7, 2, GP_API_RUNTIME);
		if (p == 0)
			synth_nvtx_range(s, name, 0, T0, T0 + 100, 7, 7, 1, 0);
		else if (p == 1)
			synth_nvtx_range(s, name, 0, T0 + 200, T0 + 300, 7, 7, 1, 0);
		synth_end(s, T0 + 1000, 0);
		close_trace(s, &t[p]);
	}
	ga_filter_init(&l.f);
	load(&l, t, 3);
	CHECK(l.ok && l.m.nrows == 6);
	if (l.ok && l.m.nrows == 6) {
		const struct ga_ranges_key *p1 = key_named(&l, "p1"), *p2 = key_named(&l, "p2");

		CHECK(p1 && p1->acts == 1 && p1->gpu_ns == 10);
		CHECK(p2 && p2->acts == 1 && p2->gpu_ns == 10);
		CHECK(!strcmp(ga_model_str(&l.m, l.rows[0].nvtx), "p1") && l.rows[1].nvtx == 0);
		CHECK(l.rows[2].nvtx == 0 && !strcmp(ga_model_str(&l.m, l.rows[3].nvtx), "p2"));
		CHECK(l.rows[4].nvtx == 0 && l.rows[5].nvtx == 0);
		CHECK(l.nx.no_range == 4 && l.nx.unattributed == 0);
	}
	unload(&l);
	for (p = 0; p < 3; p++)
		free(t[p].buf);
	tap_end();
}

/*
 * The same calls, activities and ranges in another order: API records
 * before their activities (one pass takes each launch from the calls seen
 * so far), correlation 12's driver call after its activity, then the
 * ranges; and calls whose correlation ids need the ring's modulus or the
 * large-id map.  Every activity lands where test_attribution says.
 */
static void test_api_first(void)
{
	struct synth *s = synth_open(NULL);
	uint32_t k, launch, drv, n[7];
	struct trace t;
	struct loaded l;
	size_t c;

	tap_begin("nvtx attribution in one pass: API records before their activities");
	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_device(s, 1, "GPU", 9, 0, 132, 1ull << 36, 40);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	k = synth_string(s, "_Z1kv");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	drv = synth_string(s, "cuLaunchKernel");
	for (c = 0; c < 7; c++)
		n[c] = synth_string(s, (const char *[]){ "A", "B", "C", "D", "E", "F", "r" }[c]);
	for (c = 1; c <= NACT; c++)
		if (acts[c].api)
			synth_api_corr(s, launch, T0 + acts[c].api, T0 + acts[c].api + 5,
				       acts[c].tid, (uint32_t)c, GP_API_RUNTIME);
	/*
	 * Ids far apart: 2^20 + 16 takes 16's ring slot once the ring is full
	 * size, so 16's activity, which comes after, is unattributed (the
	 * bounded window of the one pass).
	 */
	synth_api_corr(s, launch, T0 + 1499, T0 + 1505, 100, 16, GP_API_RUNTIME);
	synth_api_corr(s, launch, T0 + 1300, T0 + 1305, 100, (1u << 20) + 16, GP_API_RUNTIME);
	synth_api_corr(s, launch, T0 + 1600, T0 + 1605, 100, (1u << 27) + 17, GP_API_RUNTIME);
	/* An id far ahead of the others, below 2^26: the hash too (ranges.c dense_takes()). */
	synth_api_corr(s, launch, T0 + 1700, T0 + 1705, 100, (1u << 25) + 18, GP_API_RUNTIME);
	for (c = 1; c <= NACT; c++) {
		uint64_t g = GPU0 + c * 1000;

		if (c == 15)
			synth_memcpy_corr(s, GP_COPY_HTOD, 64, g, g + 10 * c, 0, (uint32_t)c);
		else
			synth_kernel_corr(s, k, g, g + 10 * c, c == 10 ? 1 : 0, (uint32_t)c, 0, 0);
	}
	synth_kernel_corr(s, k, GPU0 + 20000, GPU0 + 20010, 0, (1u << 20) + 16, 0, 0);
	synth_kernel_corr(s, k, GPU0 + 22000, GPU0 + 22010, 0, 16, 0, 0);
	synth_kernel_corr(s, k, GPU0 + 21000, GPU0 + 21010, 0, (1u << 27) + 17, 0, 0);
	synth_kernel_corr(s, k, GPU0 + 23000, GPU0 + 23010, 0, (1u << 25) + 18, 0, 0);
	/* After its activity, and later than the runtime call: the runtime call's time counts. */
	synth_api_corr(s, drv, T0 + 1250, T0 + 1252, 100, 12, GP_API_DRIVER);
	synth_nvtx_range(s, n[1], 0, T0 + 1200, T0 + 1500, 100, 100, 2, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[2], 0, T0 + 1500, T0 + 1800, 100, 100, 3, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[0], 0, T0 + 1000, T0 + 2000, 100, 100, 1, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[5], 0, T0 + 1000, T0 + 2000, 200, 200, 8, 0);
	synth_nvtx_range(s, n[3], 0, T0 + 3000, T0 + 4000, 100, 300, 4, 0);
	synth_nvtx_range(s, n[6], 0, T0 + 10010, T0 + 10050, 100, 100, 7, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[6], 0, T0 + 10000, T0 + 10100, 100, 100, 6, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n[4], 0, T0 + 5000, T0 + 9000, 100, 100, 5, GP_NVTX_UNTERMINATED);
	synth_end(s, T0 + 9000, 0);
	close_trace(s, &t);
	ga_filter_init(&l.f);
	load(&l, &t, 1);
	CHECK(l.ok);
	CHECKF(l.m.nrows == NACT + 4, "%zu rows", l.m.nrows);
	for (c = 1; c <= NACT && l.ok; c++)
		CHECKF(!strcmp(row_label(&l, c), acts[c].label), "activity %zu: '%s', want '%s'",
		       c, row_label(&l, c), acts[c].label);
	CHECKF(!strcmp(row_label(&l, NACT + 1), "B"), "id 2^20+16: '%s'", row_label(&l, NACT + 1));
	CHECKF(!strcmp(row_label(&l, NACT + 2), "C"), "id 2^27+17: '%s'", row_label(&l, NACT + 2));
	CHECKF(!strcmp(row_label(&l, NACT + 3), ""), "id 16: '%s'", row_label(&l, NACT + 3));
	CHECKF(!strcmp(row_label(&l, NACT + 4), "C"), "id 2^25+18: '%s'", row_label(&l, NACT + 4));
	/* Not 2^25 ids' slots for it: 8 bytes each up to it. */
	CHECKF(l.nx.dense && l.nx.dense[0].n < (1u << 21), "%zu ids by id",
	       l.nx.dense ? l.nx.dense[0].n : 0);
	CHECKF(l.nx.in_range == 14 && l.nx.unattributed == 2, "%llu in, %llu unattributed",
	       (unsigned long long)l.nx.in_range, (unsigned long long)l.nx.unattributed);
	unload(&l);
	free(t.buf);
	tap_end();
}

/*
 * Launch times far apart in one block of correlation ids (the scan keeps
 * a time as 4 bytes from its block's base, a block's times whole once they
 * span more than 2^32 ns), API records before and after their activities;
 * then each id's innermost range alone where every launch was made on the
 * thread of the process's ranges, which all nest, else with its thread and
 * time (other: one launch on a thread without ranges).
 */
static void test_far_times(int other)
{
	static const struct {
		uint32_t corr, tid;
		uint64_t api; /* after T0; 0: no API record */
		int first;    /* its API record before the activities */
		const char *label;
	} a[] = {
		{ 1, 100, 1500, 0, "A" },
		{ 2, 100, 10000000500ull, 0, "B" },
		{ 3, 100, 1600, 0, "A" },
		{ 4, 100, 10000000150ull, 0, "C" },
		{ 7, 100, 10000000120ull, 1, "C" },
		{ 5000, 100, 1700, 1, "A" },
		{ 5001, 100, 20000000000ull, 0, "" },
		{ 5002, 100, 0, 0, "" },
		{ 5003, 100, 1800, 0, "A" },
		{ 6, 300, 1900, 0, "" },
	};
	size_t n = sizeof(a) / sizeof(a[0]) - !other, i;
	struct synth *s = synth_open(NULL);
	uint64_t g0 = T0 + 30000000000ull;
	uint32_t k, launch, na, nb, nc;
	struct trace t;
	struct loaded l;

	tap_begin(other ? "nvtx: launch times far apart, a launch on another thread" : "nvtx: launch times far apart, each id's range alone");
	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	k = synth_string(s, "_Z1kv");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	na = synth_string(s, "A");
	nb = synth_string(s, "B");
	nc = synth_string(s, "C");
	for (i = 0; i < n; i++)
		if (a[i].api && a[i].first)
			synth_api_corr(s, launch, T0 + a[i].api, T0 + a[i].api + 5, a[i].tid,
				       a[i].corr, GP_API_RUNTIME);
	for (i = 0; i < n; i++)
		synth_kernel_corr(s, k, g0 + i * 1000, g0 + i * 1000 + 10, 0, a[i].corr, 0, 0);
	for (i = 0; i < n; i++)
		if (a[i].api && !a[i].first)
			synth_api_corr(s, launch, T0 + a[i].api, T0 + a[i].api + 5, a[i].tid,
				       a[i].corr, GP_API_RUNTIME);
	synth_nvtx_range(s, na, 0, T0 + 1000, T0 + 2000, 100, 100, 1, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, nc, 0, T0 + 10000000100ull, T0 + 10000000200ull, 100, 100, 3,
			 GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, nb, 0, T0 + 10000000000ull, T0 + 10000001000ull, 100, 100, 2,
			 GP_NVTX_PUSHPOP);
	synth_end(s, g0 + 100000, 0);
	close_trace(s, &t);
	ga_filter_init(&l.f);
	load(&l, &t, 1);
	CHECK(l.ok);
	CHECKF(l.m.nrows == n, "%zu rows", l.m.nrows);
	for (i = 0; i < n && l.ok; i++) {
		const char *got = l.rows[i].nvtx ? ga_model_str(&l.m, l.rows[i].nvtx) : "";

		CHECKF(!strcmp(got, a[i].label), "correlation %u: '%s', want '%s'", a[i].corr, got,
		       a[i].label);
	}
	CHECKF(l.nx.unattributed == 1, "%llu unattributed", (unsigned long long)l.nx.unattributed);
	/* Compacted: the times freed, the codes in x; else the codes beside the times. */
	CHECK(l.ok && l.nx.dense && l.nx.dense[0].x);
	if (l.ok && l.nx.dense)
		CHECKF(other ? l.nx.dense[0].t && l.nx.dense[0].code : !l.nx.dense[0].t && !l.nx.dense[0].code,
		       "times %p, codes %p", (void *)l.nx.dense[0].t, (void *)l.nx.dense[0].code);
	unload(&l);
	free(t.buf);
	tap_end();
}

/* No ranges at all: nothing per activity is kept, the tree has one root. */
static void test_no_ranges(void)
{
	struct synth *s = synth_open(NULL);
	struct trace t;
	struct loaded l;
	uint32_t k;

	tap_begin("nvtx: a trace without ranges");
	k = synth_string(s, "k");
	synth_kernel_corr(s, k, GPU0, GPU0 + 10, 0, 1, 0, 0);
	synth_end(s, T0 + 1000, 0);
	close_trace(s, &t);
	ga_filter_init(&l.f);
	load(&l, &t, 1);
	CHECK(l.ok && l.nx.nranges == 0 && l.nx.ncorrs == 0 && !l.nx.dense && l.nx.corr_map.n == 0);
	CHECK(l.ok && l.nx.root != GA_RANGES_NONE &&
	      l.nx.nodes[l.nx.root].kind == GA_RANGES_N_NORANGE && l.nx.no_range == 1);
	unload(&l);
	free(t.buf);
	tap_end();
}

/*
 * Kernels other threads launched while a range was open, the way PyTorch's
 * autograd launches backward kernels from its own thread.  Thread 1: "step"
 * [500,7000) holds "backward" [1000,5000), and launches kernel 1 (10 ns)
 * at 1100.  Thread 2 (autograd): "MulBackward0" [2000,3000); kernels 2
 * (100 ns) and 3 (200 ns) at 2100 and 2200 inside it, 4 (400 ns) at 4000
 * outside it, 5 (800 ns) at 6000 after "backward".  Thread 3: another
 * "backward" [3500,4500), open with thread 1's at 4000: kernel 4 counts
 * once into the name.  Kernel 6 (1600 ns) has no API record.
 */
static void test_other_threads(void)
{
	static const struct {
		uint32_t tid;
		uint64_t t, dur;
	} k[6] = { { 1, 1100, 10 }, { 2, 2100, 100 }, { 2, 2200, 200 },
		   { 2, 4000, 400 }, { 2, 6000, 800 }, { 0, 0, 1600 } };
	char dir[] = "/tmp/gpuprof-nvtxthr-XXXXXX", path[64];
	struct synth *s;
	struct trace t;
	struct loaded l;
	uint32_t kn, api, step, bwd, mul;
	char *out = NULL;
	int rc;

	tap_begin("nvtx: kernels other threads launched while a range was open");
	if (!mkdtemp(dir)) {
		CHECK(0);
		tap_end();
		return;
	}
	snprintf(path, sizeof(path), "%s/threads.gpuprof", dir);
	s = synth_open(NULL);
	kn = synth_string(s, "k");
	api = synth_string(s, "cudaLaunchKernel");
	step = synth_string(s, "step");
	bwd = synth_string(s, "backward");
	mul = synth_string(s, "MulBackward0");
	synth_process(s, 42, "h", "python3 train.py", 0, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	for (uint32_t i = 0; i < 6; i++) {
		synth_kernel_corr(s, kn, GPU0 + i * 10000, GPU0 + i * 10000 + k[i].dur, 0, i + 1, 0, 0);
		if (k[i].tid)
			synth_api_corr(s, api, T0 + k[i].t, T0 + k[i].t + 5, k[i].tid, i + 1,
				       GP_API_RUNTIME);
	}
	synth_nvtx_range(s, step, 0, T0 + 500, T0 + 7000, 1, 1, 1, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, bwd, 0, T0 + 1000, T0 + 5000, 1, 1, 2, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, mul, 0, T0 + 2000, T0 + 3000, 2, 2, 3, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, bwd, 0, T0 + 3500, T0 + 4500, 3, 3, 4, GP_NVTX_PUSHPOP);
	synth_end(s, T0 + 9000, 0);
	close_trace(s, &t);
	ga_filter_init(&l.f);
	load(&l, &t, 1);
	CHECK(l.ok);
	if (l.ok) {
		const struct ga_ranges_key *ks = key_named(&l, "step"), *kb = key_named(&l, "backward");
		const struct ga_ranges_key *km = key_named(&l, "MulBackward0");
		const struct ga_ranges_node *n;

		/* Per thread, as before: the range's own thread's kernels. */
		CHECKF(ks && ks->kernels == 1 && ks->gpu_ns == 10, "step %llu",
		       ks ? (unsigned long long)ks->gpu_ns : 0ull);
		CHECK(kb && kb->kernels == 1 && kb->gpu_ns == 10);
		CHECK(km && km->kernels == 2 && km->gpu_ns == 300);
		/* Other threads' kernels, each once per name. */
		CHECKF(ks && ks->other_kernels == 4 && ks->other_ns == 1500, "step other %llu %llu",
		       ks ? (unsigned long long)ks->other_kernels : 0ull,
		       ks ? (unsigned long long)ks->other_ns : 0ull);
		CHECKF(kb && kb->other_kernels == 3 && kb->other_ns == 700, "backward other %llu %llu",
		       kb ? (unsigned long long)kb->other_kernels : 0ull,
		       kb ? (unsigned long long)kb->other_ns : 0ull);
		CHECK(km && km->other_kernels == 0 && km->other_ns == 0);
		CHECKF(l.nx.other_kernels == 4 && l.nx.other_skipped == 0, "%llu",
		       (unsigned long long)l.nx.other_kernels);
		/* The tree: per name path; thread 3's "backward" is a root of its own. */
		for (uint32_t x = 0; x < l.nx.nnodes; x++) {
			n = &l.nx.nodes[x];
			if (n->kind != GA_RANGES_N_RANGE)
				continue;
			if (n->id == (uint32_t)(ks - l.nx.keys))
				CHECK(n->other_kernels == 4 && n->other_ns == 1500);
			else if (n->id == (uint32_t)(kb - l.nx.keys) && n->parent != GA_RANGES_NONE)
				CHECK(n->other_kernels == 3 && n->other_ns == 700);
			else if (n->id == (uint32_t)(kb - l.nx.keys))
				CHECK(n->other_kernels == 1 && n->other_ns == 400);
			else
				CHECK(n->other_kernels == 0);
		}
	}
	unload(&l);
	/* The report's table: two columns and the footer that says what they hold. */
	{
		FILE *f = fopen(path, "wb");

		CHECK(f && fwrite(t.buf, 1, t.len, f) == t.len && fclose(f) == 0);
	}
	rc = synth_run(dir, &out, NULL, cmd_report, "report", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, "| Other threads | Their kernels | Range\n") &&
		       strstr(out, "|      1.500 µs |             4 | step\n") &&
		       strstr(out, "|        700 ns |             3 | backward\n") &&
		       strstr(out, "Other threads: the GPU time of the kernels that\n"),
	       "%s", out ? out : "(none)");
	free(out);
	/* The tree: a row under each range node that has some, the node's first child. */
	rc = synth_run(dir, &out, NULL, cmd_report, "report", "--tree", path, NULL);
	CHECKF(rc == 0 && out &&
		       strstr(out, "   10 ns |     1 |       1 | step\n"
				   "1.500 \xc2\xb5s |     - |       4 | \xe2\x94\x82   (+ other threads' "
				   "kernels while open)\n") &&
		       strstr(out, "  700 ns |     - |       3 |     \xe2\x94\x82   (+ other threads' "
				   "kernels while open)\n") &&
		       strstr(out, "    0 ns |     1 |       0 | backward\n"
				   "  400 ns |     - |       1 |     (+ other threads' kernels while open)\n") &&
		       strstr(out, "\n(+ other threads' kernels while open): kernels that other"),
	       "%s", out ? out : "(none)");
	free(out);
	unlink(path);
	rmdir(dir);
	free(t.buf);
	tap_end();
}

/*
 * A job rank as the recorder writes it: steps of 4 layers of 3 ops, each
 * op launching 3 kernels (at its start, inside, at its end; API call first, the kernel record 5 launches
 * later, the ranges as they close), a launch between steps outside any
 * range, every 50th kernel without an API record, every 7th a driver call
 * of its correlation after its kernel, every 11th a memcpy.  how: 0 as
 * said; 1 a range "main" around everything, still open at exit (it comes
 * last); 2 one step's ranges on another thread; 3 a kernel of the first
 * step whose record comes after 200 steps; 4 correlation ids 4096 apart;
 * 5 each layer's last op ending with it, its record after the layer's;
 * 6 no ranges at all (NVTX traced); 7 each even id's activity after the
 * next id's; 18 each step announced open (GP_REC_NVTX_OPEN) as it starts,
 * and its second layer; 19 as 1, "main" announced open before the first
 * step; 20 "main" announced so, its own record never written; 21 as 1,
 * "main" announced once 200 steps came; 22 300 nested ranges "main"
 * announced before the first step, unterminated at exit.
 */
static struct trace job_trace(size_t steps, int how, uint32_t pid)
{
	struct synth *s = synth_open(NULL);
	struct trace t = { NULL, 0 };
	uint32_t k[3], launch, drv, nstep, nlayer, nop[3], nmain, corr = 0, q[8];
	/* 4: correlation ids 4096 apart, a block of codes each (more than the cache holds). */
	uint32_t stride = how == 4 ? 4096 : 1;
	size_t nq = 0, st, l, o, j, late = 0;
	uint64_t main_id = 0, comm_id = 0;
	uint32_t ncomm = 0, dnccl = 0;
	uint64_t id = 1, *api_t = calloc(steps * 40 + 8, sizeof(*api_t));
	/*
	 * 10: the last two layers' launches from a thread without ranges
	 * (autograd's); 11: their ranges on that thread too (emit_nvtx's).
	 */
	uint32_t *api_tid = calloc(steps * 40 + 8, sizeof(*api_tid));

	synth_process(s, pid, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	k[0] = synth_string(s, "_Z4gemmv");
	k[1] = synth_string(s, "_Z4relav");
	k[2] = synth_string(s, "_Z4normv");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	drv = synth_string(s, "cuLaunchKernel");
	nstep = synth_string(s, "step");
	nlayer = synth_string(s, "layer");
	nop[0] = synth_string(s, "attn");
	nop[1] = synth_string(s, "mlp");
	nop[2] = synth_string(s, "norm");
	nmain = synth_string(s, "main");
#define JOB_ACT(c)                                                                              \
	do {                                                                                    \
		uint64_t g_ = GPU0 + (uint64_t)(c)*100;                                         \
		if ((c) % 11 == 0)                                                              \
			synth_memcpy_corr(s, GP_COPY_HTOD, 64, g_, g_ + 50, 0, (c)*stride);     \
		else                                                                            \
			synth_kernel_corr(s, k[(c) % 3], g_, g_ + 10 + (c) % 40, 0, (c)*stride, \
					  0, 0);                                                \
		if ((c) % 7 == 0)                                                               \
			synth_api_corr(s, drv, api_t[(c)] + 2, api_t[(c)] + 3, api_tid[(c)],    \
				       (c)*stride,                                              \
				       GP_API_DRIVER);                                          \
	} while (0)
	/* A kernel's record 5 launches after its call (7: an even id's after the next's). */
#define JOB_PUSH(c)                                           \
	do {                                                  \
		q[nq++] = (c);                                \
		if (nq == 6 && how == 7 && q[0] % 2 == 0) {   \
			JOB_ACT(q[1]);                        \
			JOB_ACT(q[0]);                        \
			nq -= 2;                              \
			memmove(q, q + 2, nq * sizeof(*q));   \
		} else if (nq == 6) {                         \
			JOB_ACT(q[0]);                        \
			memmove(q, q + 1, --nq * sizeof(*q)); \
		}                                             \
	} while (0)
	/* 19, 20: "main" announced open before the first step (20: its own record never comes). */
	if (how == 19 || how == 20) {
		main_id = id++;
		synth_nvtx_open(s, nmain, 0, T0 + 500, 100, main_id);
	}
	/* 22: 300 ranges "main" nested, each announced open, all unterminated at exit. */
	for (j = 0; how == 22 && j < 300; j++)
		synth_nvtx_open(s, nmain, 0, T0 + 500 + j, 100, 1000000 + j);
	for (st = 0; st < steps && api_t && api_tid; st++) {
		uint64_t t0 = T0 + 1000 + st * 100000, step_id = 0;
		/*
		 * 15, 16, 28: each step's ranges on one of 20, 70, 64 threads, all
		 * launching from 100; 29: as 12, then the last 64 steps' on 64 more.
		 */
		uint32_t tid = how == 2 && st == steps / 2   ? 200 :
			       how == 15                     ? 1000 + st % 20 :
			       how == 16                     ? 1000 + st % 70 :
			       how == 28                     ? 1000 + st % 64 :
			       how == 29 && st + 64 >= steps ? 1064 - (uint32_t)(steps - 1 - st) :
							       100;

		/*
		 * 18: each step announced open as it starts, and its second layer;
		 * 24: the first step, as a drain inside it announces it with 23's
		 * communicator.
		 */
		if (how == 18 || how == 27 || (how == 24 && st == 0)) {
			step_id = id++;
			synth_nvtx_open(s, nstep, 0, t0, tid, step_id);
		}
		/*
		 * 23: NCCL's communicator (a domain of its own), announced open
		 * inside the first step's second layer, open at exit: it does not
		 * nest in that step.
		 */
		if ((how == 23 || how == 24) && st == 0) {
			ncomm = synth_string(s, "ncclCommInitRankConfig");
			dnccl = synth_string(s, "NCCL");
			comm_id = id++;
			synth_nvtx_open(s, ncomm, dnccl, t0 + 20150, 100, comm_id);
		}
		/* 21: "main" announced once 200 steps folded. */
		if (how == 21 && st == 200) {
			main_id = id++;
			synth_nvtx_open(s, nmain, 0, T0 + 500, 100, main_id);
		}

		for (l = 0; l < 4; l++) {
			uint64_t l0 = t0 + l * 20000 + 100;
			/* 12, 13, 29: step 0's last two layers' ranges on thread 300, its only. */
			int on300 = how == 11 || ((how == 12 || how == 13 || how == 29) && st == 0);
			uint32_t rtid = on300 && l >= 2 ? 300 : tid;
			uint64_t layer_id = 0;

			if ((how == 18 || how == 27) && l == 1) {
				layer_id = id++;
				synth_nvtx_open(s, nlayer, 0, l0, rtid, layer_id);
			}

			for (o = 0; o < 3; o++) {
				uint64_t o0 = l0 + o * 6000 + 100, op_id = 0;

				/*
				 * 25: the second layer's first op starts with it,
				 * announced open where the layer is not (the
				 * recorder announces both): the layer is its parent.
				 */
				if (how == 25 && l == 1 && o == 0) {
					o0 = l0;
					op_id = id++;
					synth_nvtx_open(s, nop[o], 0, o0, rtid, op_id);
				}
				/*
				 * 26, 27: that op announced open, and a range "main"
				 * across its start (26: its record after the
				 * announcement) or its end (27: after the op's
				 * record; the step and layer announced with the
				 * op): they do not nest.
				 */
				if ((how == 26 || how == 27) && l == 1 && o == 0) {
					op_id = id++;
					synth_nvtx_open(s, nop[o], 0, o0, rtid, op_id);
				}
				if (how == 26 && l == 1 && o == 0)
					synth_nvtx_range(s, nmain, 0, o0 - 50, o0 + 2600, rtid, rtid,
							 id++, GP_NVTX_PUSHPOP);

				/* At the op's start, inside, and at its end (the layer's). */
				for (j = 0; j < 3; j++) {
					uint64_t a = o0 + j * 2500;

					api_t[++corr] = a;
					api_tid[corr] = (how == 10 || how == 11) && l >= 2 ? 300 : 100;
					/* 8, 12, 29: every launch's call recorded. */
					if (corr % 50 || how == 8 || how == 12 || how == 29)
						synth_api_corr(s, launch, a, a + 20, api_tid[corr],
							       corr * stride,
							       GP_API_RUNTIME);
					if (how == 3 && corr == 3) {
						late = corr;
						continue;
					}
					JOB_PUSH(corr);
				}
				/* 5: the last op ends with its layer, its record after the layer's. */
				/* 6, 9: no ranges in the steps (9: one around everything). */
				if (how != 6 && how != 9 && (how != 5 || o < 2))
					synth_nvtx_range(s, nop[o], 0, o0, o0 + 5000, rtid, rtid,
							 op_id ? op_id : id++, GP_NVTX_PUSHPOP);
				if (how == 27 && l == 1 && o == 0)
					synth_nvtx_range(s, nmain, 0, o0 + 4000, o0 + 5500, rtid, rtid,
							 id++, GP_NVTX_PUSHPOP);
			}
			if (how != 6 && how != 9)
				synth_nvtx_range(s, nlayer, 0, l0, l0 + 19000, rtid, rtid,
						 layer_id ? layer_id : id++, GP_NVTX_PUSHPOP);
			if (how == 5)
				synth_nvtx_range(s, nop[2], 0, l0 + 12100, l0 + 19000, tid, tid,
						 id++, GP_NVTX_PUSHPOP);
		}
		/* 14: the middle step inside ranges of threads 200 and 300 too. */
		if (how == 14 && st == steps / 2) {
			synth_nvtx_range(s, nmain, 0, t0, t0 + 90000, 200, 200, id++, GP_NVTX_PUSHPOP);
			synth_nvtx_range(s, nmain, 0, t0, t0 + 90000, 300, 300, id++, GP_NVTX_PUSHPOP);
		}
		if (how != 6 && how != 9)
			synth_nvtx_range(s, nstep, 0, t0, t0 + 90000, tid, tid, step_id ? step_id : id++,
					 GP_NVTX_PUSHPOP);
		/* Between steps: no range open. */
		api_t[++corr] = t0 + 95000;
		api_tid[corr] = 100;
		synth_api_corr(s, launch, t0 + 95000, t0 + 95020, 100, corr * stride,
			       GP_API_RUNTIME);
		JOB_PUSH(corr);
		if (late && st == 200)
			JOB_ACT((uint32_t)late);
	}
	for (j = 0; j < nq && api_t && api_tid; j++)
		JOB_ACT(q[j]);
#undef JOB_PUSH
#undef JOB_ACT
	for (j = 300; how == 22 && j-- > 0;)
		synth_nvtx_range(s, nmain, 0, T0 + 500 + j, T0 + 2000 + steps * 100000, 100, 100,
				 1000000 + j, GP_NVTX_PUSHPOP | GP_NVTX_UNTERMINATED);
	if (how == 1 || how == 9 || how == 19 || how == 21)
		synth_nvtx_range(s, nmain, 0, T0 + 500, T0 + 2000 + steps * 100000, 100, 100,
				 main_id ? main_id : id++, GP_NVTX_UNTERMINATED);
	if (how == 23 || how == 24)
		synth_nvtx_range(s, ncomm, dnccl, T0 + 1000 + 20150, T0 + 2000 + steps * 100000, 100,
				 100, comm_id, GP_NVTX_PUSHPOP | GP_NVTX_UNTERMINATED);
	/* 13: thread 300's second range, around most steps, comes last. */
	if (how == 13)
		synth_nvtx_range(s, nmain, 0, T0 + 10 * 100000, T0 + (steps - 10) * 100000, 300, 300,
				 id++, GP_NVTX_PUSHPOP);
	synth_end(s, T0 + 2000 + steps * 100000, 0);
	free(api_t);
	free(api_tid);
	close_trace(s, &t);
	return t;
}

/* A folded scan's steps, read back (ga_ranges_each_step()). */
struct steps {
	struct ga_ranges_step *v;
	size_t n, cap;
};

static int collect_step(void *ctx, const struct ga_ranges_step *st)
{
	struct steps *s = ctx;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct ga_ranges_step *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *st;
	return 0;
}

/* a and b, loaded exactly and folded: the same tables, tree and rows. */
static void same_loads(struct loaded *a, struct loaded *b, const char *what)
{
	size_t i, bad = 0;

	CHECKF(a->ok && b->ok, "%s: loaded %d %d", what, a->ok, b->ok);
	if (!a->ok || !b->ok)
		return;
	CHECKF(a->nx.nkeys == b->nx.nkeys && a->nx.nnodes == b->nx.nnodes &&
	       a->m.nrows == b->m.nrows, "%s: %zu/%zu keys, %zu/%zu nodes, %zu/%zu rows", what,
	       a->nx.nkeys, b->nx.nkeys, a->nx.nnodes, b->nx.nnodes, a->m.nrows, b->m.nrows);
	CHECKF(a->nx.acts == b->nx.acts && a->nx.in_range == b->nx.in_range &&
	       a->nx.no_range == b->nx.no_range && a->nx.unattributed == b->nx.unattributed &&
	       a->nx.unterminated == b->nx.unterminated,
	       "%s: in %llu/%llu, none %llu/%llu, unattributed %llu/%llu", what,
	       (unsigned long long)a->nx.in_range, (unsigned long long)b->nx.in_range,
	       (unsigned long long)a->nx.no_range, (unsigned long long)b->nx.no_range,
	       (unsigned long long)a->nx.unattributed, (unsigned long long)b->nx.unattributed);
	for (i = 0; i < a->nx.nkeys && i < b->nx.nkeys; i++) {
		const struct ga_ranges_key *x = &a->nx.keys[i], *y = &b->nx.keys[i];

		bad += x->label != y->label || x->count != y->count || x->cpu_total != y->cpu_total ||
		       x->cpu_min != y->cpu_min || x->cpu_max != y->cpu_max ||
		       x->gpu_ns != y->gpu_ns || x->acts != y->acts || x->kernels != y->kernels ||
		       x->other_ns != y->other_ns || x->other_kernels != y->other_kernels;
	}
	CHECKF(!bad, "%s: %zu keys differ", what, bad);
	for (i = bad = 0; i < a->nx.nnodes && i < b->nx.nnodes; i++) {
		const struct ga_ranges_node *x = &a->nx.nodes[i], *y = &b->nx.nodes[i];

		bad += x->parent != y->parent || x->kind != y->kind || x->id != y->id ||
		       x->child != y->child || x->next != y->next ||
		       x->instances != y->instances || x->gpu_ns != y->gpu_ns ||
		       x->acts != y->acts || x->kernels != y->kernels ||
		       x->other_ns != y->other_ns || x->other_kernels != y->other_kernels;
	}
	CHECKF(!bad && a->nx.root == b->nx.root, "%s: %zu nodes differ", what, bad);
	CHECKF(a->nx.other_kernels == b->nx.other_kernels &&
		       a->nx.other_skipped == b->nx.other_skipped,
	       "%s: other threads' kernels %llu/%llu", what, (unsigned long long)a->nx.other_kernels,
	       (unsigned long long)b->nx.other_kernels);
	for (i = bad = 0; i < a->m.nrows && i < b->m.nrows; i++)
		bad += a->rows[i].nvtx != b->rows[i].nvtx;
	CHECKF(!bad, "%s: %zu rows in other ranges", what, bad);
}

/*
 * Ranges folded as they close (ranges.h: fold) give what keeping every
 * range gives: a job's steps, more than the fold keeps open (batches of
 * them folded, the launches coded as they go), one process and two; and
 * where a fold cannot, the scan keeps every range again (a range around
 * everything that comes last, ranges on a second thread, a kernel whose
 * record comes after its step folded), the model's notes made once.
 */
static void test_fold(void)
{
	static const struct {
		int how;
		size_t steps;
		int folds;
		const char *what, *why;
		int notmp;             /* TMPDIR where no file can be made */
		size_t procs;          /* processes at most (two: their codes need the file) */
		uint64_t quiet;        /* load_quiet */
	} cases[] = {
		{ 0, 300, 1, "steps folded in batches", NULL, 0, 2, 0 },
		{ 0, 3, 1, "a few steps, folded at the end", NULL, 0, 2, 0 },
		{ 1, 300, 0, "a range around everything, open at exit",
		  "a range that came after the ranges around it folded", 0, 2, 0 },
		{ 2, 300, 1, "one step on another thread", NULL, 0, 2, 0 },
		{ 11, 300, 1, "the last two layers' ranges and launches on a second thread", NULL, 0,
		  2, 0 },
		/* A thread whose ranges stop: its launches' ranges known at the end, or once quiet. */
		{ 12, 300, 1, "a second thread's ranges in the first step only", NULL, 0, 2, 0 },
		{ 12, 300, 1, "a second thread's ranges in the first step only, quiet after", NULL, 0,
		  2, 200 },
		{ 13, 300, 1, "a quiet thread's range around most steps, at the end", NULL, 0, 2, 0 },
		{ 13, 300, 0, "a thread taken as quiet, then its range around most steps",
		  "a range that came after the ranges around it folded", 0, 2, 200 },
		{ 14, 300, 1, "launches inside ranges of two other threads", NULL, 0, 2, 0 },
		{ 15, 300, 1, "steps on 20 threads", NULL, 0, 2, 0 },
		/*
		 * 70: more threads of ranges than other threads' kernels are
		 * counted for (ranges.h), known at the 65th: none counted; 64: all.
		 */
		{ 16, 300, 1, "steps on 70 threads", NULL, 0, 2, 0 },
		{ 28, 300, 1, "steps on 64 threads", NULL, 0, 2, 0 },
		{ 29, 300, 1, "a second thread's ranges in the first step, the last 64 steps on 64 more",
		  NULL, 0, 2, 0 },
		/* Ranges announced open (GP_REC_NVTX_OPEN) nest what follows as they fold. */
		{ 18, 300, 1, "steps and a layer each announced open", NULL, 0, 2, 0 },
		{ 19, 300, 1, "a range around everything announced open, unterminated at exit",
		  NULL, 0, 2, 0 },
		{ 19, 300, 1, "a range around everything announced open, threads quiet", NULL, 0, 2,
		  200 },
		{ 20, 300, 0, "a range announced open whose own record never comes",
		  "a range announced open whose own record never came", 0, 2, 0 },
		{ 21, 300, 0, "a range around everything announced after steps folded",
		  "a range that came after the ranges around it folded", 0, 2, 0 },
		{ 23, 300, 1, "NCCL's communicator announced open inside the first step, open at exit",
		  NULL, 0, 2, 0 },
		{ 24, 300, 1, "the first step and NCCL's communicator in it announced together",
		  NULL, 0, 2, 0 },
		{ 25, 300, 1, "an op announced open, its layer starting with it not", NULL, 0, 2, 0 },
		{ 26, 300, 1, "a range across the start of one announced open", NULL, 0, 2, 0 },
		{ 27, 300, 1, "a range across the end of one announced open", NULL, 0, 2, 0 },
		{ 22, 300, 0, "300 ranges announced open at once on a thread",
		  "more ranges announced open at once than a fold keeps", 0, 2, 0 },
		{ 3, 300, 0, "a kernel after its step folded",
		  "an activity that came after the ranges of its launch folded", 0, 2, 0 },
		{ 4, 300, 1, "ids far apart, their codes through the temporary file", NULL, 0, 2, 0 },
		{ 5, 300, 1, "a range's record after its parent's, both ending together", NULL, 0, 2, 0 },
		{ 4, 300, 0, "ids far apart, no temporary file",
		  "no temporary file for the launches' ranges", 1, 2, 0 },
		{ 0, GA_RANGES_STEPS_MEM + 700, 1, "more steps than memory holds, the rest in a file",
		  NULL, 0, 2, 0 },
		{ 0, GA_RANGES_STEPS_MEM + 700, 1, "more steps than memory holds, no temporary file",
		  NULL, 1, 1, 0 },
		{ 10, 300, 1, "kernels launched by a thread without ranges inside the steps", NULL,
		  0, 2, 0 },
		/* The second's codes where the first's launches waited: no mark of them left. */
		{ 6, 300, 1, "a process without ranges, then one whose activities come out of order",
		  NULL, 0, 2, 0 },
	};
	const char *env = getenv("TMPDIR");
	char *tmpdir = env ? strdup(env) : NULL;
	size_t c;

	tap_begin("nvtx: ranges folded as they close, or kept where folding cannot give the same");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct trace t[2] = { job_trace(cases[c].steps, cases[c].how, 10),
				      job_trace(cases[c].steps, cases[c].how == 6 ? 7 : 0, 11) };
		size_t n;

		for (n = 1; n <= cases[c].procs; n++) {
			struct loaded a, b;
			/* Files with ranges: a fold needs one. */
			size_t nr = n - (cases[c].how == 6);
			int folds = cases[c].folds && nr > 0;

			ga_filter_init(&a.f);
			ga_filter_init(&b.f);
			load_fold = 0;
			load(&a, t, n);
			load_fold = 1;
			load_quiet = cases[c].quiet;
			if (cases[c].notmp)
				setenv("TMPDIR", "/nonexistent/gpuprof-test", 1);
			load(&b, t, n);
			if (tmpdir)
				setenv("TMPDIR", tmpdir, 1);
			else
				unsetenv("TMPDIR");
			load_fold = 0;
			load_quiet = 0;
			same_loads(&a, &b, cases[c].what);
			CHECKF(b.nx.folded == folds && !a.nx.folded &&
				       (b.nx.fold_why == NULL) == cases[c].folds &&
				       (!cases[c].why || !strcmp(b.nx.fold_why, cases[c].why)),
			       "%s, %zu processes: folded %d (%s)", cases[c].what, n, b.nx.folded,
			       b.nx.fold_why ? b.nx.fold_why : "-");
			/*
			 * Each file's first range stays, the steps apart (24 bytes
			 * each; past GA_RANGES_STEPS_MEM in a temporary file, where
			 * one can be made), read back in the order they folded.
			 */
			if (folds) {
				struct steps got = { 0 };
				size_t i, k = 0, bad = 0;
				uint64_t filed = b.nx.nfiled;

				/* 13, 14: the first's ranges of threads 300 (and 200) too; 26, 27: its "main" each step. */
				CHECKF(b.nx.nranges == nr &&
					       a.nx.nranges == cases[c].steps * 17 * nr + (cases[c].how == 13) +
								       2 * (cases[c].how == 14) +
								       (cases[c].how == 19) + (cases[c].how == 23) +
								       (cases[c].how == 24) +
								       (cases[c].how == 26 || cases[c].how == 27) *
									       cases[c].steps,
				       "%s: %zu ranges kept of %zu", cases[c].what, b.nx.nranges,
				       a.nx.nranges);
				CHECK(ga_ranges_each_step(&b.nx, collect_step, &got) == 0);
				for (i = 0; i < a.nx.nranges; i++) {
					const struct ga_ranges_range *r = &a.nx.ranges[i];
					const struct ga_ranges_step *st = &got.v[k];

					if (!keep_step(ga_model_str(&a.m, a.nx.keys[r->key].name)))
						continue;
					bad += k >= got.n || st->start != r->start ||
					       st->end != r->end || st->proc != r->proc ||
					       strcmp(ga_model_str(&b.m, b.nx.keys[st->key].name), "step");
					k++;
				}
				CHECKF(k == cases[c].steps * nr && got.n == k && !bad,
				       "%s: %zu steps kept of %zu, %zu unlike", cases[c].what,
				       got.n, k, bad);
				/* In memory at most GA_RANGES_STEPS_MEM, unless no file could be made. */
				CHECKF(cases[c].notmp ? !filed && b.nx.nsteps == k :
				       b.nx.nsteps <= GA_RANGES_STEPS_MEM && filed + b.nx.nsteps == k &&
				       (k <= GA_RANGES_STEPS_MEM) == !filed,
				       "%s: %zu steps in memory, %llu in the file", cases[c].what,
				       b.nx.nsteps, (unsigned long long)filed);
				free(got.v);
				ga_ranges_drop_steps(&b.nx);
				CHECK(!b.nx.steps && !b.nx.nsteps && !b.nx.nfiled && !b.nx.steps_fd1);
			}
			/* The copies paired once over two scans: the same legs. */
			CHECKF(a.m.copy[GP_COPY_HTOD].count == b.m.copy[GP_COPY_HTOD].count,
			       "%s: %llu/%llu copies", cases[c].what,
			       (unsigned long long)a.m.copy[GP_COPY_HTOD].count,
			       (unsigned long long)b.m.copy[GP_COPY_HTOD].count);
			unload(&a);
			unload(&b);
		}
		free(t[0].buf);
		free(t[1].buf);
	}
	free(tmpdir);
	tap_end();
}

/* One node of l's tree named by its path ("step/layer/kernel _Z4gemmv"), with its counts. */
static char *node_line(struct loaded *l, uint32_t i)
{
	struct ga_buf b = { 0 }, path = { 0 };
	uint32_t c;

	for (c = i; c != GA_RANGES_NONE; c = l->nx.nodes[c].parent) {
		const struct ga_ranges_node *n = &l->nx.nodes[c];
		const char *name = n->kind == GA_RANGES_N_RANGE ?
					   ga_model_str(&l->m, l->nx.keys[n->id].label) :
				   n->kind == GA_RANGES_N_KERNEL ? ga_model_str(&l->m, n->id) :
								   "";

		ga_buf_printf(&b, "%u:%s:%u/", n->kind, name,
			      n->kind == GA_RANGES_N_RANGE || n->kind == GA_RANGES_N_KERNEL ? 0 : n->id);
	}
	ga_buf_printf(&path, "%s %llu %llu %llu %llu %llu %llu", b.p ? b.p : "",
		      (unsigned long long)l->nx.nodes[i].instances,
		      (unsigned long long)l->nx.nodes[i].gpu_ns,
		      (unsigned long long)l->nx.nodes[i].acts,
		      (unsigned long long)l->nx.nodes[i].kernels,
		      (unsigned long long)l->nx.nodes[i].other_ns,
		      (unsigned long long)l->nx.nodes[i].other_kernels);
	ga_buf_free(&b);
	return path.p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * a (two reads) and p (paced): the same tables, tree and rows by name
 * (strings and tree nodes are made in another order as the model reads).
 */
static void same_by_name(struct loaded *a, struct loaded *p, const char *what)
{
	size_t i, bad = 0;
	char **x, **y;

	CHECKF(a->ok && p->ok, "%s: loaded %d %d", what, a->ok, p->ok);
	if (!a->ok || !p->ok)
		return;
	CHECKF(a->nx.nkeys == p->nx.nkeys && a->nx.nnodes == p->nx.nnodes &&
		       a->m.nrows == p->m.nrows && a->nx.acts == p->nx.acts &&
		       a->nx.in_range == p->nx.in_range && a->nx.no_range == p->nx.no_range &&
		       a->nx.unattributed == p->nx.unattributed &&
		       a->nx.unterminated == p->nx.unterminated,
	       "%s: %zu/%zu keys, %zu/%zu nodes, in %llu/%llu, none %llu/%llu", what,
	       a->nx.nkeys, p->nx.nkeys, a->nx.nnodes, p->nx.nnodes,
	       (unsigned long long)a->nx.in_range, (unsigned long long)p->nx.in_range,
	       (unsigned long long)a->nx.no_range, (unsigned long long)p->nx.no_range);
	CHECKF(a->nx.other_kernels == p->nx.other_kernels &&
		       a->nx.other_skipped == p->nx.other_skipped,
	       "%s: other threads' kernels %llu/%llu, skipped %llu/%llu", what,
	       (unsigned long long)a->nx.other_kernels, (unsigned long long)p->nx.other_kernels,
	       (unsigned long long)a->nx.other_skipped, (unsigned long long)p->nx.other_skipped);
	for (i = 0; i < a->nx.nkeys && i < p->nx.nkeys; i++) {
		const struct ga_ranges_key *k = &a->nx.keys[i], *q = &p->nx.keys[i];

		bad += strcmp(ga_model_str(&a->m, k->label), ga_model_str(&p->m, q->label)) ||
		       k->count != q->count || k->cpu_total != q->cpu_total ||
		       k->cpu_min != q->cpu_min || k->cpu_max != q->cpu_max ||
		       k->gpu_ns != q->gpu_ns || k->acts != q->acts || k->kernels != q->kernels ||
		       k->other_ns != q->other_ns || k->other_kernels != q->other_kernels;
	}
	CHECKF(!bad, "%s: %zu keys differ", what, bad);
	if (a->nx.nnodes != p->nx.nnodes)
		return;
	x = calloc(a->nx.nnodes + 1, sizeof(*x));
	y = calloc(a->nx.nnodes + 1, sizeof(*y));
	for (i = 0; x && y && i < a->nx.nnodes; i++) {
		x[i] = node_line(a, (uint32_t)i);
		y[i] = node_line(p, (uint32_t)i);
	}
	if (x && y) {
		qsort(x, a->nx.nnodes, sizeof(*x), cmp_str);
		qsort(y, a->nx.nnodes, sizeof(*y), cmp_str);
		for (i = bad = 0; i < a->nx.nnodes; i++)
			bad += !x[i] || !y[i] || strcmp(x[i], y[i]);
	}
	CHECKF(x && y && !bad, "%s: %zu nodes differ", what, bad);
	for (i = 0; x && y && i < a->nx.nnodes; i++) {
		free(x[i]);
		free(y[i]);
	}
	free(x);
	free(y);
	for (i = bad = 0; i < a->m.nrows && i < p->m.nrows; i++)
		bad += strcmp(a->rows[i].nvtx ? ga_model_str(&a->m, a->rows[i].nvtx) : "",
			      p->rows[i].nvtx ? ga_model_str(&p->m, p->rows[i].nvtx) : "");
	CHECKF(!bad, "%s: %zu rows in other ranges", what, bad);
}

/*
 * Load one trace paced (ranges.h pace), hold bytes held at most, an
 * outermost range folding recs records after it (0: the defaults).
 */
static void load_paced(struct loaded *l, const struct trace *t, size_t hold, uint64_t recs)
{
	struct ga_ranges_src src = { .path = "synth", .buf = t->buf, .len = t->len };

	l->ok = 0;
	l->rows = NULL;
	ga_model_init(&l->m);
	ga_ranges_init(&l->nx);
	l->nx.fold = 1;
	l->nx.fold_keep = keep_step;
	l->nx.one_pass = 1;
	l->nx.pace = 1;
	l->nx.pace_hold = hold;
	l->nx.pace_recs = recs;
	l->nx.fold_quiet = load_quiet;
	l->nx.fold_lag = load_lag;
	l->m.keep_rows = SIZE_MAX;
	l->m.ahead.ctx = &l->nx;
	l->m.ahead.begin = ga_ranges_ahead;
	if (ga_ranges_scan(&l->nx, &l->m, &src, 1))
		return;
	ga_filter_bind(&l->f, &l->nx, &l->m);
	if (ga_model_add_mem(&l->m, "synth", t->buf, t->len) != GA_READ_OK)
		return;
	if (ga_model_finish(&l->m) || ga_ranges_finish(&l->nx, &l->m, 0))
		return;
	l->rows = calloc(l->m.nrows + 1, sizeof(*l->rows));
	if (!l->rows)
		return;
	{
		size_t i = 0;

		for (const struct ga_row *r; i < l->m.nrows && (r = ga_xsort_next(&l->m.rows));)
			l->rows[i++] = *r;
		l->ok = i == l->m.nrows;
	}
}

/*
 * A single trace's ranges folded in the model's read of it (ranges.h
 * pace), decoded once: what two reads give, the model reading each chunk
 * once the launches in it are coded; where the fold cannot go on, or the
 * chunks held would pass their bound, the read stops and says to build
 * again (model.h ahead_retry).
 */
static void test_paced(void)
{
	static const struct {
		int how;
		size_t steps, hold;
		int paced; /* 1: read paced to the end; 0: stopped, to build again */
		const char *what;
		int cut; /* percent of the file kept (0: all): a cut trace */
		/*
		 * Held at most: 2 the whole file (a launch without its call, in
		 * a range, is coded at the end); 1 a part; 0 a third or less.
		 */
		int held;
		uint64_t recs; /* an outermost range folds this many records after it */
		uint64_t quiet; /* load_quiet */
	} cases[] = {
		{ 0, 300, 0, 1, "steps folded in batches", 0, 2, 0, 0 },
		{ 0, 3, 0, 1, "a few steps, folded at the end", 0, 2, 0, 0 },
		{ 4, 300, 0, 1, "ids far apart, their codes through the temporary file", 0, 2, 0, 0 },
		{ 5, 300, 0, 1, "a range's record after its parent's, both ending together", 0, 2, 0, 0 },
		/* Read as outside any range as they come: no range came. */
		{ 6, 300, 0, 1, "no ranges", 0, 0, 0, 0 },
		{ 7, 300, 0, 1, "activities out of order", 0, 2, 0, 0 },
		{ 10, 300, 0, 1, "kernels launched by a thread without ranges", 0, 2, 0, 0 },
		{ 10, 300, 0, 1, "kernels launched by a thread without ranges, cut at 75%", 75, 2,
		  0, 0 },
		{ 8, 1000, 0, 1, "every call recorded: chunks read as their launches are coded", 0, 0, 0, 0 },
		/* Layers without their step at the cut: name paths made as the model reads. */
		{ 8, 300, 0, 1, "a trace cut at 35%", 35, 2, 0, 0 },
		{ 8, 300, 0, 1, "a trace cut at 55%", 55, 1, 0, 0 },
		{ 8, 300, 0, 1, "a trace cut at 75%", 75, 1, 0, 0 },
		{ 8, 300, 0, 1, "a trace cut at 90%", 90, 1, 0, 0 },
		/* Long outermost ranges fold by records after them, not by their count. */
		{ 8, 300, 0, 1, "steps folded 500 records after them", 0, 0, 500, 0 },
		{ 8, 300, 0, 1, "steps folded 500 records after them, cut at 75%", 75, 1, 500, 0 },
		{ 8, 300, 32768, 0, "more held than the bound", 0, 0, 0, 0 },
		{ 1, 300, 0, 0, "a range around everything, open at exit", 0, 0, 0, 0 },
		/* Launches read as outside any range, then one around them came. */
		{ 9, 300, 0, 0, "no ranges but one around everything, at the end", 0, 0, 0, 0 },
		{ 2, 300, 0, 1, "one step on another thread", 0, 2, 0, 0 },
		/* Other threads' kernels: none counted past 64 threads of ranges (ranges.h). */
		{ 16, 300, 0, 1, "steps on 70 threads", 0, 2, 0, 0 },
		{ 28, 300, 0, 1, "steps on 64 threads", 0, 2, 0, 0 },
		{ 11, 300, 0, 1, "the last two layers' ranges and launches on a second thread", 0, 2,
		  0, 0 },
		/* A second thread's ranges stop: all held to the end, unless taken as quiet. */
		{ 12, 300, 0, 1, "a second thread's ranges in the first step only", 0, 2, 0, 0 },
		{ 12, 300, 0, 1, "a second thread's ranges in the first step only, quiet after", 0, 1,
		  0, 200 },
		/* Its launches counted into its ranges as read, taken back at the 65th thread. */
		{ 29, 300, 0, 1, "as the last, then the last 64 steps on 64 more threads", 0, 1, 0,
		  200 },
		{ 13, 300, 0, 0, "a thread taken as quiet, then its range around most steps", 0, 0, 0,
		  200 },
		{ 3, 300, 0, 0, "a kernel after its step folded", 0, 0, 0, 0 },
		/* Folded where a scan before the model would not: it may not give up. */
		{ 3, 300, 0, 0, "a kernel after its step folded, steps folded by records", 0, 0, 500, 0 },
		{ 0, 300, 4096, 0, "more held than the bound", 0, 0, 0, 0 },
	};
	size_t c;

	tap_begin("nvtx: a single trace's ranges folded in the model's read (paced), or built again");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct trace t = job_trace(cases[c].steps, cases[c].how, 10);
		struct loaded a, p;

		if (cases[c].cut)
			t.len = t.len * (size_t)cases[c].cut / 100;

		ga_filter_init(&a.f);
		ga_filter_init(&p.f);
		load_fold = 1;
		load_quiet = cases[c].quiet;
		load(&a, &t, 1);
		load_fold = 0;
		load_paced(&p, &t, cases[c].hold, cases[c].recs);
		load_quiet = 0;
		CHECKF(p.nx.paced == 1, "%s: not paced", cases[c].what);
		if (cases[c].paced) {
			uint64_t held = p.m.nfiles ? p.m.files[0].info.held_max : 0;
			uint64_t raw = p.m.nfiles ? p.m.files[0].info.raw_bytes : 0;

			CHECKF(p.ok && !p.m.ahead_retry, "%s: paced %d, again %d", cases[c].what,
			       p.ok, p.m.ahead_retry);
			/* Each chunk read once the launches in it are coded. */
			CHECKF(cases[c].held == 2 ? held == raw :
			       cases[c].held == 1 ? held < raw && held * 3 >= raw :
						    held && held * 3 < raw,
			       "%s: %llu bytes held of %llu", cases[c].what,
			       (unsigned long long)held, (unsigned long long)raw);
			same_by_name(&a, &p, cases[c].what);
			CHECKF(a.m.copy[GP_COPY_HTOD].count == p.m.copy[GP_COPY_HTOD].count &&
				       a.m.counts[GA_ACT_KERNEL] == p.m.counts[GA_ACT_KERNEL],
			       "%s: %llu/%llu copies", cases[c].what,
			       (unsigned long long)a.m.copy[GP_COPY_HTOD].count,
			       (unsigned long long)p.m.copy[GP_COPY_HTOD].count);
		} else {
			CHECKF(!p.ok && p.m.ahead_retry, "%s: paced %d, again %d", cases[c].what,
			       p.ok, p.m.ahead_retry);
			/* Why: the fold's word, or none where the chunks held passed their bound. */
			CHECKF(cases[c].hold ? !p.nx.fold_why :
					       p.nx.fold_why && (cases[c].how != 9 ||
								 strstr(p.nx.fold_why, "read as outside any")),
			       "%s: %s", cases[c].what, p.nx.fold_why ? p.nx.fold_why : "-");
			/*
			 * For good where it folded as a scan before the model folds
			 * (that one gives up too: built again keeping every range).
			 */
			CHECKF(p.nx.fold_lasting == (!cases[c].hold && !cases[c].recs && cases[c].how != 9),
			       "%s: for good %d", cases[c].what, p.nx.fold_lasting);
			if (p.nx.fold_lasting)
				CHECKF(a.nx.fold_why && !strcmp(a.nx.fold_why, p.nx.fold_why),
				       "%s: the scan before the model: %s", cases[c].what,
				       a.nx.fold_why ? a.nx.fold_why : "-");
		}
		unload(&a);
		unload(&p);
		free(t.buf);
	}
	tap_end();
}

/*
 * A process that captures a CUDA graph of 3 kernels in a range and
 * launches it in every later step (each in a "replay" range, beside a
 * launch in a "layer" range), steps of 10 us on one thread.  how: 0 the
 * node records as the recorder writes them, before the capture's range;
 * 1 after its step's ranges; 2 one node's range id that no range has; 3
 * the node records after the first replay's kernels; 4 one node created
 * outside any range; 5 captured in step 1's range, the graph launched in
 * it too.
 */
static struct trace graph_trace(size_t steps, int how)
{
	struct synth *s = synth_open(NULL);
	uint32_t kern, plain, lk, gl, step, cap, rep, lay;
	size_t cstep = how == 5 ? 1 : 0;
	struct trace t;

	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	kern = synth_string(s, "graph_kernel");
	plain = synth_string(s, "plain_kernel");
	lk = synth_string(s, "cudaLaunchKernel");
	gl = synth_string(s, "cudaGraphLaunch");
	step = synth_string(s, "step");
	cap = synth_string(s, "capture");
	rep = synth_string(s, "replay");
	lay = synth_string(s, "layer");
	for (size_t i = 0; i < steps; i++) {
		uint64_t t0 = T0 + 1000 + i * 10000, g = GPU0 + i * 10000, id = 1 + i * 10;
		uint32_t corr = 100 + 10 * (uint32_t)i;
		int nodes_now = i == cstep && how != 1 && how != 3 && how != 7;

		if (i == cstep) {
			/* The capture's launches: no activity, one node each. */
			for (uint32_t j = 0; j < 3; j++)
				synth_api_corr(s, lk, t0 + 150 + j * 10, t0 + 155 + j * 10, 1,
					       corr + j, GP_API_RUNTIME);
			for (uint32_t j = 0; j < 3 && nodes_now; j++)
				synth_graph_node(s, 1000 + j, 7, corr + j, 0,
						 how == 2 && j == 1 ? 999999 :
						 how == 4 && j == 2 ? 0 :
								      id + 1);
		}
		if (i > cstep || (how == 5 && i == cstep)) {
			synth_api_corr(s, gl, t0 + 600, t0 + 610, 1, corr + 5, GP_API_RUNTIME);
			for (uint32_t j = 0; j < 3; j++)
				synth_kernel_corr(s, kern, g + 100 + j * 50, g + 130 + j * 50 + i % 7, 0,
						  corr + 5, 7, 1000 + j);
		}
		synth_api_corr(s, lk, t0 + 1200, t0 + 1210, 1, corr + 6, GP_API_RUNTIME);
		synth_kernel_corr(s, plain, g + 400, g + 420 + i % 5, 0, corr + 6, 0, 0);
		if (how == 3 && i == cstep + 1)
			for (uint32_t j = 0; j < 3; j++)
				synth_graph_node(s, 1000 + j, 7, 100 + j, 0, 2);
		/*
		 * 6: the capture opened inside a range of another domain ("b",
		 * itself opened inside "a" of that domain, which closed first):
		 * ranges that do not nest, the capture's name path has "a", the
		 * ranges open at its start do not (7: its nodes recorded after it).
		 */
		if ((how == 6 || how == 7) && i == cstep) {
			uint32_t dom = synth_string(s, "NCCL");

			synth_nvtx_range(s, synth_string(s, "a"), dom, t0 + 20, t0 + 60, 1, 1, id + 7,
					 0);
			synth_nvtx_range(s, synth_string(s, "b"), dom, t0 + 50, t0 + 150, 1, 1, id + 8,
					 0);
		}
		if (i == cstep)
			synth_nvtx_range(s, cap, 0, t0 + 100, how == 5 ? t0 + 800 : t0 + 400, 1, 1,
					 id + 1, GP_NVTX_PUSHPOP);
		if (i > cstep)
			synth_nvtx_range(s, rep, 0, t0 + 550, t0 + 900, 1, 1, id + 2, GP_NVTX_PUSHPOP);
		synth_nvtx_range(s, lay, 0, t0 + 1000, t0 + 2000, 1, 1, id + 3, GP_NVTX_PUSHPOP);
		synth_nvtx_range(s, step, 0, t0, t0 + 9000, 1, 1, id, GP_NVTX_PUSHPOP);
		if ((how == 1 || how == 7) && i == cstep)
			for (uint32_t j = 0; j < 3; j++)
				synth_graph_node(s, 1000 + j, 7, corr + j, 0, id + 1);
	}
	synth_end(s, T0 + 1000 + steps * 10000, 0);
	close_trace(s, &t);
	return t;
}

/*
 * Graph nodes' kernels are counted in the range they were captured in:
 * folded, and folded in the model's read, as with every range kept; a
 * node whose range no range is, and (paced) a node's record after its
 * kernels, give the fold up.
 */
static void test_fold_graphs(void)
{
	static const struct {
		int how;
		int fold, paced; /* folds as a scan before the model; paced */
		const char *what;
	} cases[] = {
		{ 0, 1, 1, "nodes recorded before their range's record" },
		{ 1, 1, 1, "nodes recorded after their range's record" },
		{ 2, 0, 0, "a node's range id no range has" },
		{ 3, 1, 0, "nodes recorded after their kernels" },
		{ 4, 1, 1, "a node created outside any range" },
		{ 5, 1, 1, "the graph launched in the range it was captured in" },
		{ 6, 1, 1, "captured in ranges that do not nest" },
		{ 7, 1, 1, "captured in ranges that do not nest, nodes recorded after their range" },
	};

	tap_begin("nvtx: graph nodes' kernels in their capture's range, folded");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct trace t = graph_trace(300, cases[c].how);
		struct loaded a, b, p;
		const struct ga_ranges_key *k;

		ga_filter_init(&a.f);
		ga_filter_init(&b.f);
		ga_filter_init(&p.f);
		load(&a, &t, 1);
		load_fold = 1;
		load(&b, &t, 1);
		load_fold = 0;
		load_paced(&p, &t, 0, 0);
		k = a.ok ? key_named(&a, "capture") : NULL;
		/* Every replay's 3 kernels in the capture's range (2 where one was not). */
		CHECKF(k && k->kernels == (cases[c].how == 2 || cases[c].how == 4 ? 2 : 3) *
						  299,
		       "%s: %llu kernels in the capture", cases[c].what,
		       k ? (unsigned long long)k->kernels : 0ull);
		CHECKF(b.nx.folded == cases[c].fold, "%s: folded %d (%s)", cases[c].what,
		       b.nx.folded, b.nx.fold_why ? b.nx.fold_why : "-");
		same_by_name(&a, &b, cases[c].what);
		if (cases[c].paced) {
			CHECKF(p.ok && p.nx.paced && p.nx.folded && !p.m.ahead_retry,
			       "%s: paced %d, folded %d, again %d (%s)", cases[c].what, p.ok,
			       p.nx.folded, p.m.ahead_retry, p.nx.fold_why ? p.nx.fold_why : "-");
			same_by_name(&a, &p, cases[c].what);
		} else {
			/* Built again: folded as a scan before the model where that folds. */
			CHECKF(!p.ok && p.m.ahead_retry && p.nx.fold_lasting == !cases[c].fold,
			       "%s: paced %d, again %d, for good %d (%s)", cases[c].what, p.ok,
			       p.m.ahead_retry, p.nx.fold_lasting, p.nx.fold_why ? p.nx.fold_why : "-");
		}
		unload(&a);
		unload(&b);
		unload(&p);
		free(t.buf);
	}
	tap_end();
}

/*
 * A process recorded with Python frames: its ranges fold, unless a name
 * is one of PyTorch's op ranges, whose seq launch sites read (emit).
 */
static void test_fold_pystacks(void)
{
	tap_begin("nvtx: ranges of a process with Python frames fold, PyTorch's op ranges kept");
	for (int emit = 0; emit < 2; emit++) {
		struct synth *s = synth_open(NULL);
		uint32_t kern, lk, step, op;
		struct loaded a, b;
		struct trace t;

		synth_process(s, 10, "h", "python", 0, T0);
		synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
		synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0,
			     GP_BACKTRACE_PYTHON);
		kern = synth_string(s, "_Z4gemmv");
		lk = synth_string(s, "cudaLaunchKernel");
		step = synth_string(s, "step");
		op = synth_string(s, "aten::mm");
		for (uint32_t i = 0; i < 300; i++) {
			uint64_t t0 = T0 + 1000 + i * 1000ull, g = GPU0 + i * 1000ull;
			char name[64];

			synth_api_corr(s, lk, t0 + 200, t0 + 210, 1, i + 1, GP_API_RUNTIME);
			synth_kernel_corr(s, kern, g, g + 50 + i % 9, 0, i + 1, 0, 0);
			if (emit && i == 150) {
				snprintf(name, sizeof(name), "aten::mm, seq = %u, op_id = %u", i, i + 7);
				op = synth_string(s, name);
			}
			synth_nvtx_range(s, op, 0, t0 + 100, t0 + 300, 1, 1, 2 * i + 2, GP_NVTX_PUSHPOP);
			synth_nvtx_range(s, step, 0, t0, t0 + 900, 1, 1, 2 * i + 1, GP_NVTX_PUSHPOP);
		}
		synth_end(s, T0 + 400000, 0);
		close_trace(s, &t);
		ga_filter_init(&a.f);
		ga_filter_init(&b.f);
		load(&a, &t, 1);
		load_fold = 1;
		load(&b, &t, 1);
		load_fold = 0;
		same_by_name(&a, &b, emit ? "PyTorch's op ranges" : "plain ranges");
		CHECKF(b.nx.folded == !emit &&
			       (!emit || (b.nx.fold_why && strstr(b.nx.fold_why, "Python stacks"))),
		       "%s: folded %d (%s)", emit ? "PyTorch's op ranges" : "plain ranges",
		       b.nx.folded, b.nx.fold_why ? b.nx.fold_why : "-");
		unload(&a);
		unload(&b);
		free(t.buf);
	}
	tap_end();
}

/*
 * Filtered reports fold: --nvtx keeps what every range kept keeps, read
 * from the names on a launch's range tree path (nested ranges, a second
 * thread's, graph nodes' capture ranges).
 */
static void test_fold_filters(void)
{
	static const char *const res[] = { "layer", "step", "attn|mlp", "capture", "replay",
					   "nothing" };

	tap_begin("nvtx: --nvtx filters on folded ranges keep what every range kept keeps");
	for (int tr = 0; tr < 3; tr++) {
		struct trace t = tr == 0 ? job_trace(300, 0, 10) : tr == 1 ? job_trace(300, 11, 10) :
									     graph_trace(300, 0);

		for (size_t r = 0; r < sizeof(res) / sizeof(res[0]); r++) {
			struct loaded a, b;
			char err[256];

			ga_filter_init(&a.f);
			ga_filter_init(&b.f);
			CHECK(ga_filter_option(&a.f, GA_FILTER_OPT_NVTX, res[r], err, sizeof(err)) == 1 &&
			      ga_filter_option(&b.f, GA_FILTER_OPT_NVTX, res[r], err, sizeof(err)) == 1);
			load(&a, &t, 1);
			load_fold = 1;
			load(&b, &t, 1);
			load_fold = 0;
			CHECKF(b.nx.folded, "trace %d, --nvtx %s: not folded (%s)", tr, res[r],
			       b.nx.fold_why ? b.nx.fold_why : "-");
			CHECKF(a.ok && b.ok && a.f.kept == b.f.kept && a.m.nrows == b.m.nrows,
			       "trace %d, --nvtx %s: kept %llu / %llu", tr, res[r],
			       (unsigned long long)a.f.kept, (unsigned long long)b.f.kept);
			same_by_name(&a, &b, res[r]);
			unload(&a);
			unload(&b);
		}
		free(t.buf);
	}
	tap_end();
}

/* xorshift64*: the random traces' choices, from a seed. */
static uint32_t rnd_next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return (uint32_t)((*x * 0x2545f4914f6cdd1dull) >> 32);
}

/*
 * A random process, as a recorder writes one: threads 100 and 200 push
 * and pop nested ranges (200 in bursts, so that it goes quiet), 100, 200
 * and 300 (no ranges) launch kernels, each range's record when it closes,
 * each kernel's a few launches after its call (where seed is 1 modulo 4,
 * one call in 30 missing: such launches wait for the end of the file).
 * Thread 300 launches while both others have ranges open only where
 * both is set.  Where seed is odd, the ranges come as the recorder drains
 * them, every so many steps: each thread's closed ranges in turn, the
 * newer thread's first; with domains, then those still open announced
 * (GP_REC_NVTX_OPEN), once each, by thread and start, as the recorder
 * announces them.
 */
struct rnd_range {
	uint64_t start, end, id;
	uint32_t name, tid, domain; /* domain: a start/end range's, 0 push/pop */
};

/* The ranges open on the stacks (random_trace()), and whether each was announced. */
struct rnd_stacks {
	uint64_t st[3][8], sid[3][8];
	uint32_t sname[3][8], dom;
	int depth[3], said[3][8];
	/* The communicator's range (thread 100's, open to exit), to announce where comm_due. */
	uint64_t comm_start, comm_id;
	uint32_t comm_name;
	int comm_due;
};

/* Thread th's open ranges not announced yet (stacks 0 and 2: thread 100's), by start. */
static void rnd_announce(struct synth *s, struct rnd_stacks *k, int th)
{
	static const uint32_t tids[2] = { 100, 200 };

	for (;;) {
		int best = -1, bi = 0;

		for (int sk = 0; sk < 3; sk++) {
			if ((sk == 1) != (th == 1))
				continue;
			for (int i = 0; i < k->depth[sk]; i++)
				if (!k->said[sk][i] && (best < 0 || k->st[sk][i] < k->st[best][bi])) {
					best = sk;
					bi = i;
				}
		}
		/* The communicator's, in start order among them. */
		if (th == 0 && k->comm_due && (best < 0 || k->comm_start < k->st[best][bi])) {
			k->comm_due = 0;
			synth_nvtx_open(s, k->comm_name, k->dom, k->comm_start, tids[0], k->comm_id);
			continue;
		}
		if (best < 0)
			return;
		k->said[best][bi] = 1;
		synth_nvtx_open(s, k->sname[best][bi], best == 2 ? k->dom : 0, k->st[best][bi],
				tids[th], k->sid[best][bi]);
	}
}

static void rnd_drain(struct synth *s, struct rnd_range (*held)[256], size_t *nheld)
{
	for (int th = 1; th >= 0; th--) {
		for (size_t i = 0; i < nheld[th]; i++)
			synth_nvtx_range(s, held[th][i].name, held[th][i].domain, held[th][i].start,
					 held[th][i].end, held[th][i].tid, held[th][i].tid, held[th][i].id,
					 held[th][i].domain ? 0 : GP_NVTX_PUSHPOP);
		nheld[th] = 0;
	}
}

/*
 * domains: thread 100 has ranges of a second domain too ("NCCL", start/end
 * ranges closed in any order: they do not nest in the first domain's nor
 * in each other), and a range of it opened a tenth of the way in, announced
 * open, is open at exit (NCCL's communicator's).
 */
static struct trace random_trace(uint64_t seed, size_t ops, int both, int domains)
{
	static struct rnd_range held[2][256];
	size_t nheld[2] = { 0, 0 }, drain_every = seed % 2 ? 20 + seed % 400 : 0;
	struct synth *s = synth_open(NULL);
	struct trace t = { NULL, 0 };
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 7, now = T0 + 1000, id = 1;
	uint32_t names[5], k[3], launch, q[8], corr = 0, nccl[2] = { 0, 0 };
	static const uint32_t tids[3] = { 100, 200, 300 };
	static struct rnd_stacks ks;
	int burst = 1;
	size_t nq = 0, i, lag = 1 + rnd_next(&x) % 6;

	memset(&ks, 0, sizeof(ks));
	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	k[0] = synth_string(s, "_Z4gemmv");
	k[1] = synth_string(s, "_Z4relav");
	k[2] = synth_string(s, "_Z4normv");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	names[0] = synth_string(s, "step");
	names[1] = synth_string(s, "forward");
	names[2] = synth_string(s, "backward");
	names[3] = synth_string(s, "op");
	names[4] = synth_string(s, "step");
	if (domains) {
		ks.dom = synth_string(s, "NCCL");
		nccl[0] = synth_string(s, "ncclAllReduce");
		nccl[1] = synth_string(s, "ncclCommInitRankConfig");
	}
	for (i = 0; i < ops; i++) {
		uint32_t r = rnd_next(&x) % 100;
		int th = rnd_next(&x) % 3 == 0 ? 1 : 0;
		/* Stack 2: thread 100's ranges of the second domain. */
		int sk = domains && th == 0 && rnd_next(&x) % 3 == 0 ? 2 : th;

		now += 1 + rnd_next(&x) % 50;
		if (rnd_next(&x) % 400 == 0)
			burst = !burst;
		if (th == 1 && !burst)
			th = sk = 0;
		/* Drained, announced with the others at the next drain; else at once. */
		if (domains && i == ops / 10) {
			ks.comm_start = now;
			ks.comm_id = id++;
			ks.comm_name = nccl[1];
			ks.comm_due = drain_every != 0;
			if (!drain_every)
				synth_nvtx_open(s, nccl[1], ks.dom, now, tids[0], ks.comm_id);
			now++;
		}
		if (r < 28 && ks.depth[sk] < 8) {
			ks.st[sk][ks.depth[sk]] = now;
			ks.said[sk][ks.depth[sk]] = 0;
			ks.sid[sk][ks.depth[sk]] = id++;
			ks.sname[sk][ks.depth[sk]++] = sk == 2 ? nccl[0] : names[rnd_next(&x) % 5];
		} else if (r < 56 && ks.depth[sk] > 0) {
			/* The second domain's: any of them. */
			size_t c = sk == 2 ? rnd_next(&x) % (uint32_t)ks.depth[sk] : (size_t)ks.depth[sk] - 1;
			struct rnd_range rr = { ks.st[sk][c], now, ks.sid[sk][c], ks.sname[sk][c], tids[th],
						sk == 2 ? ks.dom : 0 };

			ks.depth[sk]--;
			ks.st[sk][c] = ks.st[sk][ks.depth[sk]];
			ks.sid[sk][c] = ks.sid[sk][ks.depth[sk]];
			ks.sname[sk][c] = ks.sname[sk][ks.depth[sk]];
			ks.said[sk][c] = ks.said[sk][ks.depth[sk]];
			if (drain_every && nheld[th] < 256)
				held[th][nheld[th]++] = rr;
			else
				synth_nvtx_range(s, rr.name, rr.domain, rr.start, rr.end, rr.tid, rr.tid,
						 rr.id, rr.domain ? 0 : GP_NVTX_PUSHPOP);
		} else {
			uint32_t lt = rnd_next(&x) % 3;

			if (lt == 2 && !both && ks.depth[0] && ks.depth[1])
				lt = 0;
			if (lt == 1 && !burst)
				lt = 0;
			corr++;
			if (seed % 4 != 1 || rnd_next(&x) % 30)
				synth_api_corr(s, launch, now, now + 20, tids[lt], corr,
					       GP_API_RUNTIME);
			q[nq++] = corr;
			if (drain_every && i % drain_every == 0) {
				rnd_drain(s, held, nheld);
				for (int a = 0; domains && a < 2; a++)
					rnd_announce(s, &ks, a);
			}
			if (nq > lag) {
				uint64_t g = GPU0 + (uint64_t)q[0] * 100;

				synth_kernel_corr(s, k[q[0] % 3], g, g + 10 + q[0] % 40, 0, q[0], 0, 0);
				memmove(q, q + 1, --nq * sizeof(*q));
			}
		}
	}
	rnd_drain(s, held, nheld);
	for (int sk = 0; sk < 3; sk++)
		while (ks.depth[sk] > 0) {
			now += 10;
			ks.depth[sk]--;
			synth_nvtx_range(s, ks.sname[sk][ks.depth[sk]], sk == 2 ? ks.dom : 0, ks.st[sk][ks.depth[sk]],
					 now, tids[sk % 2], tids[sk % 2], ks.sid[sk][ks.depth[sk]],
					 sk == 2 ? 0 : GP_NVTX_PUSHPOP);
		}
	if (ks.comm_id)
		synth_nvtx_range(s, nccl[1], ks.dom, ks.comm_start, now + 10, tids[0], tids[0], ks.comm_id,
				 GP_NVTX_PUSHPOP | GP_NVTX_UNTERMINATED);
	for (i = 0; i < nq; i++) {
		uint64_t g = GPU0 + (uint64_t)q[i] * 100;

		synth_kernel_corr(s, k[q[i] % 3], g, g + 10 + q[i] % 40, 0, q[i], 0, 0);
	}
	synth_end(s, now + 1000, 0);
	close_trace(s, &t);
	return t;
}

/*
 * Random processes of two threads of ranges and one without, folded (and
 * folded in the model's read, paced) against every range kept: the same
 * tables and tree, other threads' kernels included, whether the fold went
 * on or gave up; most of them fold.
 */
static void test_fold_random(int domains)
{
	size_t seed, folded = 0, paced = 0, n = 0, bad = 0;

	tap_begin(domains ? "nvtx: random ranges of two domains that do not nest, folded or kept" :
			    "nvtx: random ranges on two threads and launches from three, folded or kept");
	for (seed = 1; seed <= 60; seed++) {
		struct trace t = random_trace(seed, 4000 + seed * 97, seed % 5 == 0, domains);
		struct loaded a, b, p;
		int before = tap_st.failed;

		ga_filter_init(&a.f);
		ga_filter_init(&b.f);
		ga_filter_init(&p.f);
		load(&a, &t, 1);
		load_fold = 1;
		/* Some take a thread as quiet soon: where a range of it comes after, they give up. */
		load_quiet = seed % 3 ? 0 : 20 + seed * 13;
		/* Some stay behind the newest times: by the trace's flush interval, or less. */
		load_lag = seed % 4 == 2 ? 500 + seed * 40 : seed % 4 == 3 ? 0 :
									     UINT64_MAX;
		load(&b, &t, 1);
		load_paced(&p, &t, 0, seed % 2 ? 0 : 300);
		load_fold = 0;
		load_quiet = 0;
		load_lag = UINT64_MAX;
		same_by_name(&a, &b, "random, folded");
		CHECKF(a.nx.other_kernels == b.nx.other_kernels,
		       "seed %zu: other threads' kernels %llu/%llu", seed,
		       (unsigned long long)a.nx.other_kernels, (unsigned long long)b.nx.other_kernels);
		if (p.ok) {
			same_by_name(&a, &p, "random, paced");
			CHECKF(a.nx.other_kernels == p.nx.other_kernels,
			       "seed %zu: paced, other threads' kernels %llu/%llu", seed,
			       (unsigned long long)a.nx.other_kernels,
			       (unsigned long long)p.nx.other_kernels);
			paced++;
		}
		folded += b.nx.folded;
		n += a.nx.other_kernels > 0;
		bad += tap_st.failed != before;
		if (tap_st.failed != before)
			fprintf(stderr, "# seed %zu: %s\n", seed, b.nx.fold_why ? b.nx.fold_why : "-");
		unload(&a);
		unload(&b);
		unload(&p);
		free(t.buf);
	}
	/*
	 * Two domains: 37 fold, among them drained ones whose announced ranges
	 * overlap (30 where an announced range that does not nest gives up);
	 * the others hold more than FOLD_OPEN_MAX announced ranges at once.
	 */
	CHECKF(folded >= (domains ? 36u : 30u) && paced >= 20 && n >= 50 && !bad,
	       "%zu of 60 folded, %zu read paced, %zu with other threads' kernels, %zu unlike",
	       folded, paced, n, bad);
	tap_end();
}

/*
 * PyTorch's emit_nvtx() names (ranges.h group_map): counted by the op,
 * without each instance's seq, op_id and input_op_ids (the sizes stay);
 * other names as they are, a near miss too; each range kept with the name
 * it was recorded under (ga_ranges_name()), folded or not the same tables.
 */
static void test_emit_names(void)
{
	static const struct {
		const char *raw, *key;
		uint32_t tid;
	} r[] = {
		{ "aten::mm, seq = 12, op_id = 40", "aten::mm", 100 },
		{ "aten::mm, seq = 13, op_id = 41", "aten::mm", 100 },
		{ "MmBackward0, seq = 12, op_id = 90", "MmBackward0", 200 },
		{ "x, seq = 5, op_id = 7, sizes = [[2, 3], []], input_op_ids = [(1, 0)]",
		  "x, sizes = [[2, 3], []]", 100 },
		{ "x, seq = 6, op_id = 8, sizes = [[2, 3], []]", "x, sizes = [[2, 3], []]", 100 },
		{ "record, op_id = 3", "record", 100 },
		{ "a, b", "a, b", 100 },
		{ "foo, seq = 1x", "foo, seq = 1x", 100 },
		{ "foo, seq = ", "foo, seq = ", 100 },
	};
	const size_t n = sizeof(r) / sizeof(r[0]);
	struct synth *s = synth_open(NULL);
	struct trace t = { NULL, 0 };
	struct loaded a, b;
	uint32_t kern, launch;
	size_t i, j, bad = 0;

	tap_begin("nvtx: PyTorch's emit_nvtx() names counted by op, each range's kept");
	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	kern = synth_string(s, "_Z4gemmv");
	launch = synth_string(s, "cudaLaunchKernel_v7000");
	for (i = 0; i < n; i++) {
		uint64_t t0 = T0 + 1000 + i * 1000, g = GPU0 + i * 100;

		synth_api_corr(s, launch, t0 + 10, t0 + 20, r[i].tid, (uint32_t)i + 1, GP_API_RUNTIME);
		synth_kernel_corr(s, kern, g, g + 10 + i, 0, (uint32_t)i + 1, 0, 0);
		synth_nvtx_range(s, synth_string(s, r[i].raw), 0, t0, t0 + 500, r[i].tid, r[i].tid,
				 i + 1, GP_NVTX_PUSHPOP);
	}
	synth_end(s, T0 + 100000, 0);
	close_trace(s, &t);
	ga_filter_init(&a.f);
	ga_filter_init(&b.f);
	load(&a, &t, 1);
	load_fold = 1;
	load(&b, &t, 1);
	load_fold = 0;
	CHECKF(a.ok && a.nx.nranges == n, "loaded %d, %zu ranges", a.ok, a.nx.nranges);
	for (i = 0; a.ok && i < n; i++) {
		size_t want = 0, got = SIZE_MAX;

		for (j = 0; j < n; j++)
			want += !strcmp(r[j].key, r[i].key);
		for (j = 0; j < a.nx.nkeys; j++)
			if (!strcmp(ga_model_str(&a.m, a.nx.keys[j].label), r[i].key))
				got = a.nx.keys[j].count;
		bad += got != want;
		/* Each range kept under the name it was recorded with. */
		for (j = 0, got = 0; j < a.nx.nranges; j++)
			got += !strcmp(ga_model_str(&a.m, ga_ranges_name(&a.nx, j)), r[i].raw);
		bad += got != 1;
	}
	CHECKF(!bad && a.nx.nkeys == 7, "%zu names unlike, %zu keys", bad, a.nx.nkeys);
	same_by_name(&a, &b, "emit_nvtx names, folded");
	unload(&a);
	unload(&b);
	/* After a trace of names of their own: its ranges keep theirs, sorted with them. */
	{
		struct trace two[2] = { job_trace(3, 0, 11), t };
		struct loaded c;

		ga_filter_init(&c.f);
		load(&c, two, 2);
		for (i = bad = 0; c.ok && i < c.nx.nranges; i++) {
			const char *got = ga_model_str(&c.m, ga_ranges_name(&c.nx, i));
			const char *key = ga_model_str(&c.m, c.nx.keys[c.nx.ranges[i].key].name);
			const char *comma = strstr(key, ", ");
			size_t len = comma ? (size_t)(comma - key) : strlen(key);

			bad += strncmp(got, key, len) != 0;
		}
		CHECKF(c.ok && c.nx.nranges == 3 * 17 + n && !bad,
		       "two traces: %zu ranges, %zu named unlike their key", c.nx.nranges, bad);
		unload(&c);
		free(two[0].buf);
	}
	free(t.buf);
	tap_end();
}

/*
 * A report of emit_nvtx() ranges folds them with each op call's name
 * interned as its op's, the call's string not kept (model.h group_ops):
 * the same JSON as every name kept, also where one such name is read as a
 * kernel's (the report is built again keeping every string), a mark's or
 * a second range's (the fold given up).  how: 0 only ranges, 1 a kernel
 * named by a range's string, 2 a mark named by one, 3 two ranges by one.
 */
static void test_emit_strings(void)
{
	char dir[] = "/tmp/gpuprof-emit-XXXXXX";

	tap_begin("nvtx: emit_nvtx() names counted by op without their strings, read again where needed");
	if (!mkdtemp(dir)) {
		CHECKF(0, "mkdtemp: %s", dir);
		tap_end();
		return;
	}
	/* how 4: the op names' string ids from 2^32 - 2^20 (a crafted trace), marked apart. */
	for (int how = 0; how < 5; how++) {
		char path[128], want0[96], want2[96], *out = NULL, *err = NULL;
		struct synth *s;
		uint32_t kern, lk, weird, prev = 0;
		struct rusage ru0, ru1;
		int rc;

		snprintf(path, sizeof(path), "%s/emit%d.gpuprof", dir, how);
		s = synth_open(path);
		if (!s) {
			CHECKF(0, "cannot write %s", path);
			continue;
		}
		synth_process(s, 10, "h", "python", 0, T0);
		synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
		synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
		kern = synth_string(s, "_Z4gemmv");
		lk = synth_string(s, "cudaLaunchKernel");
		weird = synth_string(s, "weird, seq = 1, op_id = 2");
		if (how == 4)
			s->next_string = 0xfff00000u;
		for (uint32_t i = 0; i < 200; i++) {
			uint64_t t0 = T0 + 1000 + i * 1000ull, g = GPU0 + i * 1000ull;
			char name[96];
			uint32_t op;

			snprintf(name, sizeof(name), "aten::mm, seq = %u, op_id = %u, sizes = [[%u]]", i,
				 i + 100, i % 3);
			op = i == 50 ? weird : how == 3 && i == 60 ? prev :
								     synth_string(s, name);
			prev = op;
			synth_api_corr(s, lk, t0 + 200, t0 + 210, 1, i + 1, GP_API_RUNTIME);
			synth_kernel_corr(s, how == 1 && i == 120 ? weird : kern, g, g + 50 + i % 9, 0,
					  i + 1, 0, 0);
			if (how == 2 && i == 120)
				synth_nvtx_mark(s, weird, 0, t0 + 220, 1, 9999);
			synth_nvtx_range(s, op, 0, t0 + 100, t0 + 300, 1, 1, i + 1, GP_NVTX_PUSHPOP);
		}
		synth_end(s, T0 + 400000, 0);
		synth_close(s, NULL, NULL);
		getrusage(RUSAGE_SELF, &ru0);
		rc = synth_run(dir, &out, &err, cmd_export, "export", "-t", "json", "-o", "-", path,
			       NULL);
		getrusage(RUSAGE_SELF, &ru1);
		CHECKF(rc == 0 && out, "how %d: export exits %d: %s", how, rc, err ? err : "");
		/* Not a bit for each id up to them: 512 MiB a file's string map. */
		CHECKF(ru1.ru_maxrss - ru0.ru_maxrss < 128 * 1024, "how %d: peak RSS %ld KiB more",
		       how, ru1.ru_maxrss - ru0.ru_maxrss);
		if (out) {
			/* Op names by op, sizes kept; the weird one under "weird". */
			CHECKF(strstr(out, "\"name\":\"aten::mm, sizes = [[0]]\"") &&
				       strstr(out, "\"name\":\"aten::mm, sizes = [[2]]\"") &&
				       strstr(out, "\"name\":\"weird\"") && !strstr(out, "op_id = 1") &&
				       !strstr(out, "(unknown)"),
			       "how %d: op names", how);
			/* The kernel or mark named by the range's string, as recorded. */
			CHECKF(how == 0 || how >= 3 ||
				       strstr(out, "\"name\":\"weird, seq = 1, op_id = 2\""),
			       "how %d: the name as recorded", how);
			/* 200 calls, sizes i % 3, call 50 "weird"; how 3: call 60 named as 59. */
			snprintf(want0, sizeof(want0),
				 "\"name\":\"aten::mm, sizes = [[0]]\",\"domain\":\"\",\"count\":%d",
				 how == 3 ? 66 : 67);
			snprintf(want2, sizeof(want2),
				 "\"name\":\"aten::mm, sizes = [[2]]\",\"domain\":\"\",\"count\":%d",
				 how == 3 ? 66 : 65);
			CHECKF(strstr(out, want0) && strstr(out, want2), "how %d: counts by op", how);
		}
		free(out);
		free(err);
		unlink(path);
	}
	rmdir(dir);
	tap_end();
}

/* The file at path, whole (malloc'd), its length in *len; NULL where it cannot be read. */
static void *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		*len = (size_t)ftell(f);
	if (f)
		fclose(f);
	return buf;
}

/*
 * The traces recorded on GPUs (test/golden), folded and with every range
 * kept: the same tables and tree, other threads' kernels included; those
 * of PyTorch (emit_nvtx()'s ranges on the main and autograd's threads, the
 * transformer's "backward" while autograd's thread launches) and graphs
 * captured in ranges on several threads fold.
 */
static void test_fold_golden(void)
{
	/* The first two with other threads' kernels; the last captures graphs in ranges. */
	static const char *const must[] = { "test/golden/torch_emit_nvtx.gpuprof",
					    "test/golden/torch_transformer.gpuprof",
					    "test/golden/nvtx_threads.gpuprof" };
	size_t i, k, with = 0, folded = 0;
	glob_t g;

	tap_begin("nvtx: the traces of GPUs folded give what every range kept gives");
	if (glob("test/golden/*.gpuprof", 0, NULL, &g) != 0 || !g.gl_pathc) {
		CHECKF(0, "no test/golden/*.gpuprof (run from the repository root)");
		tap_end();
		return;
	}
	for (i = 0; i < g.gl_pathc; i++) {
		struct trace t = { NULL, 0 };
		struct loaded a, b;
		int needed = 0;

		for (k = 0; k < sizeof(must) / sizeof(must[0]); k++)
			if (!strcmp(g.gl_pathv[i], must[k]))
				needed = k < 2 ? 2 : 1;
		t.buf = read_whole(g.gl_pathv[i], &t.len);
		CHECKF(t.buf, "%s: cannot be read", g.gl_pathv[i]);
		if (!t.buf)
			continue;
		ga_filter_init(&a.f);
		ga_filter_init(&b.f);
		load(&a, &t, 1);
		load_fold = 1;
		load_lag = 0;
		load(&b, &t, 1);
		load_lag = UINT64_MAX;
		load_fold = 0;
		if (a.ok && a.nx.nkeys) {
			with++;
			folded += b.nx.folded;
			same_by_name(&a, &b, g.gl_pathv[i]);
			CHECKF(a.nx.other_kernels == b.nx.other_kernels,
			       "%s: other threads' kernels %llu/%llu", g.gl_pathv[i],
			       (unsigned long long)a.nx.other_kernels,
			       (unsigned long long)b.nx.other_kernels);
		}
		CHECKF(!needed || (a.ok && b.nx.folded && (needed < 2 || a.nx.other_kernels)),
		       "%s: loaded %d, folded %d (%s), %llu of other threads' kernels", g.gl_pathv[i],
		       a.ok, b.nx.folded, b.nx.fold_why ? b.nx.fold_why : "-",
		       (unsigned long long)a.nx.other_kernels);
		unload(&a);
		unload(&b);
		free(t.buf);
	}
	CHECKF(with >= 4 && folded >= 3, "%zu traces with ranges, %zu folded", with, folded);
	globfree(&g);
	tap_end();
}

int main(void)
{
	struct trace t = main_trace();

	if (!t.buf) {
		printf("not ok - nvtx: cannot build the synthetic trace\n");
		return 1;
	}
	test_attribution(&t);
	test_inclusive(&t);
	test_tree(&t);
	test_filters(&t);
	test_graph_nodes();
	test_processes();
	test_no_ranges();
	test_api_first();
	test_far_times(0);
	test_far_times(1);
	test_other_threads();
	test_fold();
	test_paced();
	test_fold_random(0);
	test_fold_random(1);
	test_fold_graphs();
	test_fold_pystacks();
	test_fold_filters();
	test_fold_golden();
	test_emit_names();
	test_emit_strings();
	free(t.buf);
	return tap_exit();
}
