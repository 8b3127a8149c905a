/*
 * Unit tests of launch-site attribution (sites.h) on synthetic traces
 * with known answers: two call sites of one kernel, internal frames
 * dropped, stacks written after the activities, graph nodes, stacks never
 * written, traces without stacks, merged files whose stack ids collide,
 * and the report / export output built on them; frames symbolized from the
 * debug information of a program compiled here (skipped without cc).  Test code, runs offline only, needs no GPU.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/model.h"
#include "model/sites.h"
#include "views/text.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "synth_stacks.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define GPU0 (T0 + 1000000)
#define AR " \xe2\x86\x90 "        /* " ← " */

/* Program counters: five internal frames, then the application's. */
#define I1 0x7f0000001000ull
#define NINT 7 /* internal frames under every stack */
#define L42 0x401000ull            /* launch(), app.cu:42 */
#define L57 0x401100ull            /* launch(), app.cu:57 */
#define STEP 0x40201aull           /* step(int)+0x1a, no line information */
#define M90 0x403000ull            /* main, app.cu:90 */
#define M95 0x403100ull            /* main, app.cu:95 */
#define LIBC 0x7f1000029d90ull     /* libc, no symbol */
#define CAP 0x404000ull            /* capture(), app.cu:10 */
#define RUN 0x405000ull            /* run(), app.cu:20 */

#define SITE1 "launch (app.cu:42)" AR "step+0x1a (app)" AR "main (app.cu:90)"
#define SITE2 "launch (app.cu:57)" AR "main (app.cu:95)" AR "libc.so.6+0x29d90"

static char dir[64];

/* A subcommand with stdout captured (malloc'd, NUL-terminated). */
#define run(out, ...) synth_run(dir, out, NULL, __VA_ARGS__)

struct trace {
	unsigned char *buf;
	size_t len;
};

struct loaded {
	struct ga_model m;
	struct ga_sites st;
	int ok;
};

struct ids {
	uint32_t axpy, other, app, cudart, file;
};

/* The frames of the internal libraries and of the application (but L42). */
static void write_frames(struct synth *s, struct ids *id, int no_l42)
{
	static const char *const mods[NINT][2] = {
		{ "/usr/lib/x86_64-linux-gnu/libunwind.so.8", "_ULx86_64_step" },
		{ "/opt/gpuprof/lib/libgpuprof.so", "gp_stacks_on_api" },
		{ "/usr/local/cuda/lib64/libcupti.so.12", "cuptiActivityFlushAll" },
		{ "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "cuLaunchKernel" },
		{ "/usr/local/cuda/lib64/libcudart.so.12", "cudaLaunchKernel" },
		/* A library that launches kernels for the program: its frames are not the site. */
		{ "/usr/local/cuda/lib64/libcublasLt.so.13", "cublasLtMatmul" },
		{ "/usr/local/cuda/lib64/libcublas.so.13", "cublasSgemm_v2" },
	};
	uint32_t libc = synth_string(s, "/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t launch = synth_string(s, "_Z6launchv"), step = synth_string(s, "_Z4stepi");
	uint32_t mainf = synth_string(s, "main"), cap = synth_string(s, "_Z7capturev");
	uint32_t run = synth_string(s, "_Z3runv");
	int i;

	for (i = 0; i < NINT; i++)
		synth_frame(s, I1 + 0x100 * (uint64_t)i, 0x1000 + 0x100 * (uint64_t)i,
			    synth_string(s, mods[i][0]), synth_string(s, mods[i][1]), 0x10, 0, 0);
	if (!no_l42)
		synth_frame(s, L42, 0x1000, id->app, launch, 0x20, id->file, 42);
	synth_frame(s, L57, 0x1100, id->app, launch, 0x40, id->file, 57);
	synth_frame(s, STEP, 0x201a, id->app, step, 0x1a, 0, 0);
	synth_frame(s, M90, 0x3000, id->app, mainf, 0x30, id->file, 90);
	synth_frame(s, M95, 0x3100, id->app, mainf, 0x60, id->file, 95);
	synth_frame(s, LIBC, 0x29d90, libc, 0, 0, 0, 0);
	synth_frame(s, CAP, 0x4000, id->app, cap, 0x8, id->file, 10);
	synth_frame(s, RUN, 0x5000, id->app, run, 0x8, id->file, 20);
}

/* Stack id of the internal frames followed by the user frames given. */
static void write_stack(struct synth *s, uint32_t id, const uint64_t *user, uint32_t n)
{
	uint64_t pcs[16];
	uint32_t i;

	for (i = 0; i < NINT; i++)
		pcs[i] = I1 + 0x100 * (uint64_t)i;
	for (i = 0; i < n; i++)
		pcs[NINT + i] = user[i];
	synth_stack(s, id, pcs, NINT + n);
}

static void head(struct synth *s, struct ids *id, uint32_t pid, uint32_t backtrace)
{
	synth_process(s, pid, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, backtrace);
	id->axpy = synth_string(s, "_Z4axpyifPf");
	id->other = synth_string(s, "_Z5otherv");
	id->app = synth_string(s, "/home/u/app");
	id->cudart = synth_string(s, "/usr/local/cuda/lib64/libcudart.so.12");
	id->file = synth_string(s, "/home/u/src/app.cu");
}

static int finish(struct synth *s, const char *path, struct trace *t)
{
	t->buf = NULL;
	t->len = 0;
	return path ? synth_close(s, NULL, NULL) : synth_close(s, &t->buf, &t->len);
}

/*
 * Site 1 (stack 1): axpy x3 of 100 ns, other x2 of 50 ns.  Site 2 (stack
 * 2): axpy x5 of 200 ns.  One more axpy (100 ns) without a stack.  The
 * stacks and frames come last, in a chunk of their own.
 */
static void two_sites(const char *path, struct trace *t)
{
	static const uint64_t u1[] = { L42, STEP, M90, LIBC }, u2[] = { L57, M95, LIBC };
	struct synth *s = synth_open(path);
	struct ids id;
	uint32_t c;

	head(s, &id, 10, 1);
	for (c = 1; c <= 11; c++) {
		uint64_t g = GPU0 + c * 1000, d = c <= 3 || c == 11 ? 100 : c <= 8 ? 200 : 50;

		if (c <= 3 || c >= 9)
			synth_corr_stack(s, c, c == 11 ? 0 : 1);
		else
			synth_corr_stack(s, c, 2);
		synth_kernel_corr(s, c >= 9 && c <= 10 ? id.other : id.axpy, g, g + d, 0, c, 0, 0);
	}
	synth_flush_chunk(s);
	write_frames(s, &id, 0);
	write_stack(s, 1, u1, 4);
	write_stack(s, 2, u2, 3);
	synth_end(s, T0 + 9000000, 0);
	finish(s, path, t);
}

/*
 * A graph (id 5) launched by correlation 50 from run() (stack 4): node 11
 * (x2, 10 ns) and node 13 (x1, 30 ns) were captured in capture() (stack
 * 3), node 13's GRAPH_NODE coming after its kernels; node 12 (x2, 20 ns)
 * has no GRAPH_NODE.  Correlation 60 names stack 99, never written.
 */
static void graphs(struct trace *t)
{
	static const uint64_t u3[] = { CAP, M90 }, u4[] = { RUN, M90 };
	static const uint64_t node[5] = { 11, 11, 12, 12, 13 };
	static const uint64_t dur[5] = { 10, 10, 20, 20, 30 };
	struct synth *s = synth_open(NULL);
	struct ids id;
	int i;

	head(s, &id, 20, 1);
	synth_graph_node(s, 11, 5, 40, 3, 0);
	synth_corr_stack(s, 50, 4);
	for (i = 0; i < 5; i++)
		synth_kernel_corr(s, id.axpy, GPU0 + 100 * (uint64_t)i,
				  GPU0 + 100 * (uint64_t)i + dur[i], 0, 50, 5, node[i]);
	synth_graph_node(s, 13, 5, 41, 3, 0);
	synth_corr_stack(s, 60, 99);
	synth_kernel_corr(s, id.other, GPU0 + 1000, GPU0 + 1005, 0, 60, 0, 0);
	write_frames(s, &id, 0);
	write_stack(s, 3, u3, 2);
	write_stack(s, 4, u4, 2);
	synth_end(s, T0 + 9000000, 0);
	finish(s, NULL, t);
}

/*
 * One process of a merged pair: stack 1 is [L42, M90] in both, but in
 * the second process L42 is train() in train.cu; stack 2 is [L57, M95]
 * in both.  Correlations 1, 2 use stack 1, correlation 3 stack 2.
 */
static void merge_part(struct trace *t, int second)
{
	static const uint64_t u1[] = { L42, M90 }, u2[] = { L57, M95 };
	struct synth *s = synth_open(NULL);
	struct ids id;
	uint32_t c;

	head(s, &id, second ? 31 : 30, 1);
	for (c = 1; c <= 3; c++) {
		synth_corr_stack(s, c, c <= 2 ? 1 : 2);
		synth_kernel_corr(s, id.axpy, GPU0 + c * 100, GPU0 + c * 100 + 7, 0, c, 0, 0);
	}
	if (second) {
		/* Frames are per file: the same pc may be another function. */
		synth_frame(s, L42, 0x1000, id.app, synth_string(s, "_Z5trainv"), 0x20,
			    synth_string(s, "train.cu"), 7);
	}
	write_frames(s, &id, second);
	write_stack(s, 1, u1, 2);
	write_stack(s, 2, u2, 2);
	synth_end(s, T0 + 9000000, 0);
	finish(s, NULL, t);
}

static void no_stacks(const char *path, struct trace *t)
{
	struct synth *s = synth_open(path);
	struct ids id;
	uint32_t c;

	head(s, &id, 40, 0);
	for (c = 1; c <= 3; c++)
		synth_kernel_corr(s, id.axpy, GPU0 + c * 100, GPU0 + c * 100 + 7, 0, c, 0, 0);
	synth_end(s, T0 + 9000000, 0);
	finish(s, path, t);
}

static void load(struct loaded *l, const struct trace *t, size_t n, unsigned depth)
{
	size_t i;

	l->ok = 0;
	ga_model_init(&l->m);
	ga_sites_setup(&l->st, depth);
	CHECK(ga_sites_bind(&l->st, &l->m) == 0);
	for (i = 0; i < n; i++)
		if (ga_model_add_mem(&l->m, "synth", t[i].buf, t[i].len) != GA_READ_OK)
			return;
	if (ga_model_finish(&l->m) || ga_sites_finish(&l->st, &l->m))
		return;
	l->ok = 1;
}

static void unload(struct loaded *l)
{
	ga_model_free(&l->m);
	ga_sites_free(&l->st);
}

static const struct ga_stack_site *site(const struct loaded *l, const char *text)
{
	size_t i;

	for (i = 0; i < l->st.nsites; i++)
		if (!strcmp(ga_model_str(&l->m, l->st.sites[i].str), text))
			return &l->st.sites[i];
	return NULL;
}

/* Launches and GPU time of kernel short name at site x. */
static int site_kernel(struct loaded *l, const struct ga_stack_site *x, const char *name,
		       uint64_t *count, uint64_t *ns)
{
	uint32_t i;

	for (i = x->klo; i < x->khi; i++)
		if (!strcmp(ga_strtab_short(&l->m.strs, l->st.skern[i].name), name)) {
			*count = l->st.skern[i].count;
			*ns = l->st.skern[i].ns;
			return 1;
		}
	return 0;
}

static char *print(struct loaded *l, size_t rows, size_t top)
{
	char *p = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&p, &n);

	if (!f)
		return NULL;
	if (ga_text_sites_print(&l->st, &l->m, rows, top, 0, f)) {
		fclose(f);
		free(p);
		return NULL;
	}
	fclose(f);
	return p;
}

/*
 * Stacks of correlation ids are kept for the last GA_SITES_CORR_RING ids
 * of a file: correlation 1 (stack 1) then a ring's length of others
 * (stack 2): the kernel of 1 has no stack any more, the kernel of the
 * last one has stack 2, and a sparse id far beyond (3e9) has stack 1;
 * the ring never outgrows its length.
 */
static void test_corr_ring(void)
{
	static const uint64_t u1[] = { L42, M90 }, u2[] = { L57, M95 };
	const uint32_t last = GA_SITES_CORR_RING + 5, far = 3000000000u;
	struct synth *s = synth_open(NULL);
	struct trace t;
	struct loaded l;
	struct ids id;
	size_t most = 0;

	tap_begin("sites: the stacks of the last 2^20 correlation ids of a file, no more");
	head(s, &id, 50, 1);
	synth_corr_stack(s, 1, 1);
	for (uint32_t c = 2; c <= last; c++)
		synth_corr_stack(s, c, 2);
	synth_kernel_corr(s, id.axpy, GPU0, GPU0 + 10, 0, 1, 0, 0);
	synth_kernel_corr(s, id.axpy, GPU0 + 100, GPU0 + 110, 0, last, 0, 0);
	synth_corr_stack(s, far, 1);
	synth_kernel_corr(s, id.other, GPU0 + 200, GPU0 + 230, 0, far, 0, 0);
	write_frames(s, &id, 0);
	write_stack(s, 1, u1, 2);
	write_stack(s, 2, u2, 2);
	synth_end(s, T0 + 9000000, 0);
	finish(s, NULL, &t);
	ga_model_init(&l.m);
	ga_sites_setup(&l.st, 2);
	CHECK(ga_sites_bind(&l.st, &l.m) == 0);
	CHECK(ga_model_add_mem(&l.m, "synth", t.buf, t.len) == GA_READ_OK);
	most = l.st.ncorr;
	CHECK(ga_model_finish(&l.m) == 0 && ga_sites_finish(&l.st, &l.m) == 0);
	CHECKF(most == GA_SITES_CORR_RING, "%zu entries", most);
	CHECKF(l.st.kernels == 3 && l.st.with_stack == 2, "%llu of %llu kernels with a stack",
	       (unsigned long long)l.st.with_stack, (unsigned long long)l.st.kernels);
	CHECKF(l.st.nsites == 2, "%zu sites", l.st.nsites);
	unload(&l);
	free(t.buf);
	tap_end();
}

static void test_two_sites(const struct trace *t)
{
	const struct ga_stack_site *a, *b;
	struct loaded l;
	uint64_t n = 0, ns = 0;
	char *out;

	tap_begin("stacks: two call sites of one kernel, stacks after activities");
	load(&l, t, 1, GA_SITES_DEPTH);
	CHECK(l.ok);
	CHECK(ga_sites_any(&l.st));
	CHECKF(l.st.nsites == 2, "%zu sites", l.st.nsites);
	a = site(&l, SITE1);
	b = site(&l, SITE2);
	CHECKF(a && b, "sites: '%s', '%s'", l.st.nsites > 0 ? ga_model_str(&l.m, l.st.sites[0].str) :
	       "", l.st.nsites > 1 ? ga_model_str(&l.m, l.st.sites[1].str) : "");
	if (a && b) {
		CHECKF(a->launches == 5 && a->gpu_ns == 400 && a->kernels == 2,
		       "site 1: %llu launches, %llu ns, %u kernels", (unsigned long long)a->launches,
		       (unsigned long long)a->gpu_ns, a->kernels);
		CHECKF(b->launches == 5 && b->gpu_ns == 1000 && b->kernels == 1,
		       "site 2: %llu launches, %llu ns", (unsigned long long)b->launches,
		       (unsigned long long)b->gpu_ns);
		CHECK(site_kernel(&l, a, "axpy", &n, &ns) && n == 3 && ns == 300);
		CHECK(site_kernel(&l, a, "other", &n, &ns) && n == 2 && ns == 100);
		CHECK(site_kernel(&l, b, "axpy", &n, &ns) && n == 5 && ns == 1000);
		CHECK(&l.st.sites[l.st.order[0]] == b);
		/* Internal frames dropped, the rest listed in full. */
		CHECKF(a->nf == 4 && !strcmp(ga_model_str(&l.m, l.st.ftext[a->foff]),
					     "launch (app.cu:42)") &&
		       !strcmp(ga_model_str(&l.m, l.st.ftext[a->foff + 3]), "libc.so.6+0x29d90"),
		       "%u frames", a->nf);
	}
	CHECKF(l.st.with_stack == 10 && l.st.kernels == 11, "%llu of %llu",
	       (unsigned long long)l.st.with_stack, (unsigned long long)l.st.kernels);
	out = print(&l, 0, 5);
	CHECK(out && strstr(out, "GPU time | Share | Kernels | Launches | Launch site"));
	CHECK(out && strstr(out, "1.000 \xc2\xb5s | 66.7% |       1 |        5 | " SITE2 "\n"));
	CHECK(out && strstr(out, "  400 ns | 26.7% |       2 |        5 | " SITE1 "\n"));
	CHECK(out && strstr(out, "10 of 11 kernels have a launch stack\n"));
	CHECK(out && strstr(out, "| axpy(int, float, float*)\n"));
	CHECK(out && strstr(out, "|   " SITE2 "\n"));
	CHECK(out && !strstr(out, "libcuda") && !strstr(out, "cudaLaunchKernel") &&
	      !strstr(out, "cublas"));
	free(out);
	unload(&l);

	load(&l, t, 1, 1);
	CHECK(l.ok && l.st.nsites == 2 && site(&l, "launch (app.cu:42)") &&
	      site(&l, "launch (app.cu:57)"));
	unload(&l);
	tap_end();
}

static void test_graphs(const struct trace *t)
{
	const struct ga_stack_site *cap, *run, *unk;
	struct loaded l;

	tap_begin("stacks: graph nodes, late GRAPH_NODE, launch fallback, unknown stack");
	load(&l, t, 1, 2);
	CHECK(l.ok);
	cap = site(&l, "capture (app.cu:10)" AR "main (app.cu:90)");
	run = site(&l, "run (app.cu:20)" AR "main (app.cu:90)");
	unk = site(&l, "(unknown stack)");
	CHECKF(cap && cap->launches == 3 && cap->gpu_ns == 50, "capture: %llu launches",
	       cap ? (unsigned long long)cap->launches : 0ull);
	CHECKF(run && run->launches == 2 && run->gpu_ns == 40, "run: %llu launches",
	       run ? (unsigned long long)run->launches : 0ull);
	CHECK(unk && unk->launches == 1 && unk->gpu_ns == 5 && unk->nf == 0);
	CHECK(l.st.nsites == 3 && l.st.with_stack == 6 && l.st.kernels == 6);
	unload(&l);
	tap_end();
}

static void test_merge(const struct trace *t)
{
	const struct ga_stack_site *a, *b, *c;
	struct loaded l;

	tap_begin("stacks: merged files with the same stack ids");
	load(&l, t, 2, GA_SITES_DEPTH);
	CHECK(l.ok);
	a = site(&l, "launch (app.cu:42)" AR "main (app.cu:90)");
	b = site(&l, "train (train.cu:7)" AR "main (app.cu:90)");
	c = site(&l, "launch (app.cu:57)" AR "main (app.cu:95)");
	CHECKF(l.st.nsites == 3, "%zu sites", l.st.nsites);
	CHECK(a && a->launches == 2 && a->gpu_ns == 14);
	CHECK(b && b->launches == 2 && b->gpu_ns == 14);
	CHECK(c && c->launches == 2 && c->gpu_ns == 14);
	CHECK(l.st.with_stack == 6 && l.st.kernels == 6);
	unload(&l);
	tap_end();
}

/*
 * A kernel whose launch stack holds only the recorder's, CUDA's and
 * cuBLAS's frames (a library's own thread): its site says so, naming no
 * library frame as the program's.
 */
static void test_library_only(void)
{
	struct synth *s = synth_open(NULL);
	struct loaded l;
	struct trace t;
	struct ids id;
	int ok;

	tap_begin("stacks: a stack of library frames only has no program frame to name");
	head(s, &id, 50, 1);
	synth_corr_stack(s, 1, 1);
	synth_kernel_corr(s, id.axpy, GPU0 + 100, GPU0 + 200, 0, 1, 0, 0);
	write_frames(s, &id, 0);
	write_stack(s, 1, NULL, 0);
	synth_end(s, T0 + 9000000, 0);
	finish(s, NULL, &t);
	load(&l, &t, 1, GA_SITES_DEPTH);
	ok = l.ok && l.st.nsites == 1 &&
	     site(&l, "(no frames outside gpuprof, CUDA and NVIDIA's libraries)");
	CHECKF(ok, "%zu sites: '%s'", l.st.nsites,
	       l.st.nsites ? ga_model_str(&l.m, l.st.sites[0].str) : "");
	unload(&l);
	free(t.buf);
	tap_end();
}

static void test_none(const struct trace *t)
{
	struct loaded l;

	tap_begin("stacks: a trace without stacks has none");
	load(&l, t, 1, GA_SITES_DEPTH);
	CHECK(l.ok && !ga_sites_any(&l.st) && l.st.nsites == 0);
	CHECK(l.st.kernels == 3 && l.st.with_stack == 0);
	unload(&l);
	tap_end();
}

static size_t count_lines_with(const char *s, const char *what)
{
	size_t n = 0;
	const char *nl;

	for (; s && *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl)
			nl = s + strlen(s);
		if (memmem(s, (size_t)(nl - s), what, strlen(what)))
			n++;
		if (!*nl)
			break;
	}
	return n;
}

static void test_commands(void)
{
	char path[128], none[128], *out = NULL;
	struct trace t;
	int rc;

	tap_begin("stacks: report table, --stack-depth, filters, json, csv");
	snprintf(path, sizeof(path), "%s/sites.gpuprof", dir);
	snprintf(none, sizeof(none), "%s/none.gpuprof", dir);
	two_sites(path, &t);
	no_stacks(none, &t);

	/* The fixture's libc path exists on most machines: keep its frames as written. */
	rc = run(&out, cmd_report, "report", "--no-symbolize", path, NULL);
	CHECK(rc == 0 && out && strstr(out, "\nLaunch sites (kernels by host call stack"));
	CHECK(out && strstr(out, "| " SITE1 "\n") && strstr(out, "| " SITE2 "\n"));
	CHECK(out && strstr(out, "10 of 11 kernels have a launch stack"));
	CHECK(out && strstr(out, "Top launch sites of the top kernels:"));
	free(out);

	rc = run(&out, cmd_report, "report", "--stack-depth", "1", path, NULL);
	CHECK(rc == 0 && out && strstr(out, "| launch (app.cu:42)\n"));
	free(out);
	rc = run(&out, cmd_report, "report", "--stack-depth", "0", path, NULL);
	CHECK(rc == 2);
	free(out);

	rc = run(&out, cmd_report, "report", "--kernel", "other", path, NULL);
	CHECK(rc == 0 && out && strstr(out, "2 of 2 kernels have a launch stack"));
	CHECK(out && strstr(out, "\n  100 ns | 100.0% |       1 |        2 | " SITE1 "\n"));
	CHECK(out && !strstr(out, SITE2));
	free(out);

	rc = run(&out, cmd_report, "report", none, NULL);
	CHECK(rc == 0 && out && !strstr(out, "Launch site") && !strstr(out, "launch stack"));
	free(out);

	rc = run(&out, cmd_export, "export", "--format", "json", "--no-symbolize", path, NULL);
	CHECK(rc == 0 && out && strstr(out, "\n\"launch_sites\":[\n  {\"site\":\"" SITE2 "\","
				       "\"frames\":[\"launch (app.cu:57)\",\"main (app.cu:95)\","
				       "\"libc.so.6+0x29d90\"],\"gpu_ns\":1000,\"launches\":5,"
				       "\"kernels\":[{\"name\":\"axpy(int, float, float*)\","
				       "\"launches\":5,\"gpu_ns\":1000}]},\n"));
	CHECK(out && strstr(out, "{\"site\":\"" SITE1 "\",\"frames\":[\"launch (app.cu:42)\","
			    "\"step+0x1a (app)\",\"main (app.cu:90)\",\"libc.so.6+0x29d90\"],"
			    "\"gpu_ns\":400,\"launches\":5,\"kernels\":[{\"name\":\"axpy(int, "
			    "float, float*)\",\"launches\":3,\"gpu_ns\":300},{\"name\":\"other()\","
			    "\"launches\":2,\"gpu_ns\":100}]}],\n\"streams\""));
	free(out);
	rc = run(&out, cmd_export, "export", "--format", "json", none, NULL);
	CHECK(rc == 0 && out && strstr(out, "\n\"launch_sites\":[],\n\"streams\""));
	free(out);

	/* The stacks come after the rows in the file: the CSV reads them ahead. */
	rc = run(&out, cmd_export, "export", "--format", "csv", "--no-symbolize", path, NULL);
	CHECK(rc == 0 && out && strstr(out, ",pid,nvtx,stack,host,rank,file\n"));
	CHECKF(count_lines_with(out, SITE2) == 5 && count_lines_with(out, SITE1) == 5,
	       "%zu, %zu rows", count_lines_with(out, SITE2), count_lines_with(out, SITE1));
	CHECK(out && strstr(out, ",0,0,10,,,h,0,"));   /* correlation 11: no stack, no nvtx */
	free(out);
	tap_end();
}

/*
 * A program with debug information whose launch_site() calls where() on
 * line "A" and is called by main() on line "B": it prints the offsets of
 * both return addresses from its load base, as the recorder writes them.
 */
static const char site_src[] =
	"#define _GNU_SOURCE\n"
	"#include <dlfcn.h>\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"\n"
	"static unsigned long inner;\n"
	"extern void _init(void);\n"
	"\n"
	"static unsigned long off_of(void *pc)\n"
	"{\n"
	"\tDl_info info;\n"
	"\n"
	"\tif (!dladdr((char *)pc - 1, &info) || !info.dli_fbase)\n"
	"\t\treturn 0;\n"
	"\treturn (unsigned long)((uintptr_t)pc - (uintptr_t)info.dli_fbase);\n"
	"}\n"
	"\n"
	"static unsigned long start_of(void *p)\n"
	"{\n"
	"\tDl_info info;\n"
	"\n"
	"\tif (!dladdr(p, &info) || !info.dli_fbase)\n"
	"\t\treturn 0;\n"
	"\treturn (unsigned long)((uintptr_t)p - (uintptr_t)info.dli_fbase);\n"
	"}\n"
	"\n"
	"static __attribute__((noinline)) void where(void)\n"
	"{\n"
	"\tinner = off_of(__builtin_return_address(0));\n"
	"}\n"
	"\n"
	"/* Inlined into its caller, like a kernel's launch stub. */\n"
	"static inline __attribute__((always_inline)) void stub(void)\n"
	"{\n"
	"\twhere(); /* S */\n"
	"}\n"
	"\n"
	"static __attribute__((noinline)) void launch_site(void)\n"
	"{\n"
	"\tstub(); /* A */\n"
	"\tprintf(\"%lx %lx %lx\\n\", inner, off_of(__builtin_return_address(0)),\n"
	"\t       start_of((void *)_init));\n"
	"}\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\tlaunch_site(); /* B */\n"
	"\treturn 0;\n"
	"}\n";

/* Line of site_src holding marker. */
static unsigned src_line(const char *marker)
{
	const char *p, *end = strstr(site_src, marker);
	unsigned n = 1;

	for (p = site_src; end && p < end; p++)
		n += *p == '\n';
	return end ? n : 0;
}

/*
 * Build dir/name with the cc flags given and run it: 0 and the offsets
 * (a, b; c: where _init starts), or -1.
 */
static int build_site(const char *name, const char *flags, char *path, size_t n,
		      uint64_t *a, uint64_t *b, uint64_t *c)
{
	char cmd[512], line[128];
	unsigned long x, y, z;
	FILE *f;
	int ok;

	snprintf(path, n, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "cc -g -O0 %s -o '%s' '%s/site.c' -ldl >/dev/null 2>&1", flags,
		 path, dir);
	if (system(cmd) != 0)
		return -1;
	f = popen(path, "r");
	if (!f)
		return -1;
	ok = fgets(line, sizeof(line), f) && sscanf(line, "%lx %lx %lx", &x, &y, &z) == 3 && x &&
	     y && z && z < x;
	if (pclose(f) != 0 || !ok)
		return -1;
	*a = x;
	*b = y;
	*c = z;
	return 0;
}

/*
 * Stack 1: launch_site() and main() of the position-independent program,
 * then a frame of a module that does not exist; stack 2: the same calls
 * of the program linked at a fixed address, dladdr's nearest symbol
 * (_init, where the program really has it) recorded for the first.  axpy
 * ran from stack 1, other from stack 2.
 */
static void symbolized(const char *path, const char *pie, const uint64_t *po,
		       const char *fixed, const uint64_t *fo, uint32_t lie)
{
	static const uint64_t u1[] = { 0x5000, 0x5100, 0x5200 }, u2[] = { 0x6000, 0x6100 };
	struct synth *s = synth_open(path);
	struct ids id;
	uint32_t mp, mf, mx;

	head(s, &id, 50, 1);
	mp = synth_string(s, pie);
	mf = synth_string(s, fixed);
	mx = synth_string(s, "/nonexistent/libx.so");
	synth_corr_stack(s, 1, 1);
	synth_kernel_corr(s, id.axpy, GPU0, GPU0 + 300, 0, 1, 0, 0);
	synth_corr_stack(s, 2, 2);
	synth_kernel_corr(s, id.other, GPU0 + 1000, GPU0 + 1100, 0, 2, 0, 0);
	write_frames(s, &id, 0);
	synth_frame(s, u1[0], po[0], mp, 0, 0, 0, 0);
	synth_frame(s, u1[1], po[1], mp, 0, 0, 0, 0);
	synth_frame(s, u1[2], 0x1234, mx, 0, 0, 0, 0);
	synth_frame(s, u2[0], fo[0], mf, synth_string(s, "_init"),
		    (uint32_t)(fo[0] - fo[2]) + lie, 0, 0);
	synth_frame(s, u2[1], fo[1], mf, 0, 0, 0, 0);
	write_stack(s, 1, u1, 3);
	write_stack(s, 2, u2, 2);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

static void test_symbolize(void)
{
	char src[128], pie[128], fixed[128], path[128], want[512], want2[256], raw[128];
	char *out = NULL;
	uint64_t po[3], fo[3];
	unsigned la = src_line("/* A */"), lb = src_line("/* B */");
	FILE *f;
	int rc;

	if (system("command -v cc >/dev/null 2>&1")) {
		printf("skip - stacks: frames of a trace without build-ids symbolized, --no-symbolize # no cc\n");
		return;
	}
	tap_begin("stacks: frames of a trace without build-ids symbolized, --no-symbolize");
	snprintf(src, sizeof(src), "%s/site.c", dir);
	f = fopen(src, "w");
	CHECK(f && fputs(site_src, f) >= 0 && fclose(f) == 0);
	if (build_site("site_pie", "-fPIE -pie", pie, sizeof(pie), &po[0], &po[1], &po[2])) {
		CHECKF(0, "cannot build and run %s", pie);
		tap_end();
		return;
	}
	/* Without a toolchain that links at a fixed address, use the PIE twice. */
	if (build_site("site_fixed", "-fno-pie -no-pie", fixed, sizeof(fixed), &fo[0], &fo[1],
		       &fo[2])) {
		snprintf(fixed, sizeof(fixed), "%s", pie);
		memcpy(fo, po, sizeof(fo));
	}
	snprintf(path, sizeof(path), "%s/sym.gpuprof", dir);
	symbolized(path, pie, po, fixed, fo, 0);

	snprintf(want, sizeof(want), "launch_site (site.c:%u)" AR "main (site.c:%u)" AR
		 "libx.so+0x1234\n", la, lb);
	snprintf(want2, sizeof(want2), "launch_site (site.c:%u)" AR "main (site.c:%u)\n", la, lb);
	rc = run(&out, cmd_report, "report", path, NULL);
	/* A trace without build-ids: names from the recorded paths, said to be unverified. */
	CHECKF(rc == 0 && out && strstr(out, want) && strstr(out, want2) &&
	       strstr(out, "Frame names unverified: the trace recorded no build-ids") &&
	       strstr(out, "libx.so: /nonexistent/libx.so is not a regular file here"), "%s",
	       out && strstr(out, "Launch sites") ? strstr(out, "Launch sites") : out ? out : "");
	free(out);

	/* JSON lists frames past the depth: those are looked up too. */
	snprintf(want, sizeof(want), "{\"site\":\"launch_site (site.c:%u)\",\"frames\":["
		 "\"launch_site (site.c:%u)\",\"main (site.c:%u)\",\"libx.so+0x1234\"]", la, la,
		 lb);
	rc = run(&out, cmd_export, "export", "--format", "json", "--stack-depth", "1", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, want), "%s", out ? out : "");
	free(out);

	snprintf(want, sizeof(want), ",launch_site (site.c:%u)" AR "main (site.c:%u)", la, lb);
	rc = run(&out, cmd_export, "export", "--format", "csv", "--stack-depth", "2", path, NULL);
	CHECKF(rc == 0 && out && count_lines_with(out, want) == 2, "%s", out ? out : "");
	free(out);

	/* Switched off: the frames as recorded. */
	snprintf(raw, sizeof(raw), "| site_pie+0x%" PRIx64 AR "site_pie+0x%" PRIx64 AR
		 "libx.so+0x1234\n", po[0], po[1]);
	rc = run(&out, cmd_report, "report", "--no-symbolize", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, raw) && !strstr(out, "site.c"), "%s",
	       out ? out : "");
	free(out);

	/*
	 * A file at the recorded path that contradicts what dladdr said in the
	 * process (_init elsewhere) is another build: none of its names is used.
	 */
	symbolized(path, pie, po, fixed, fo, 0x10);
	rc = run(&out, cmd_report, "report", path, NULL);
	snprintf(want, sizeof(want), "_init+0x%" PRIx64 " (%s)", fo[0] - fo[2] + 0x10,
		 strrchr(fixed, '/') + 1);
	CHECKF(rc == 0 && out && strstr(out, want) && strstr(out, want2) == NULL &&
	       strstr(out, "is not the file that ran"), "%s",
	       out && strstr(out, "Launch sites") ? strstr(out, "Launch sites") : "");
	free(out);
	tap_end();
}


/*
 * A program linked with the static CUDA runtime (nvcc's default): between
 * the driver and the program's own functions, in the program's own module,
 * sit the runtime (cudart::..., cudaLaunchKernel, its template wrapper),
 * the launch stub (__device_stub__...) and the host function nvcc makes
 * for kernel<<<...>>>(), which has the kernel's name.  site_a() launches
 * axpy 4 times through all of them, site_b() 7 times; with the default
 * depth the sites must start at site_a and site_b, not merge into one
 * made of runtime frames.
 */
static void static_runtime(struct trace *t)
{
	static const uint64_t ua[] = { 0x410000, 0x410100, 0x410200, 0x410300, 0x410400,
				       0x410500, 0x410600, 0x410700 },
			      ub[] = { 0x410000, 0x410100, 0x410200, 0x410300, 0x410400,
				       0x410500, 0x410800, 0x410900 };
	static const char *const fn[] = {
		"cudart::cudaApiLaunchKernelCommon(void const*, dim3, dim3, void**, unsigned long, CUstream_st*, bool)",
		"__cudart1093",
		"cudaLaunchKernel",
		"cudaError cudaLaunchKernel<char>(char const*, dim3, dim3, void**, unsigned long, CUstream_st*)",
		"__device_stub__Z4axpyifPf(int, float, float*)",
		"axpy(int, float, float*)",
		"site_a()",
		"main",
		"site_b()",
		"main",
	};
	struct synth *s = synth_open(NULL);
	struct ids id;
	uint32_t c;

	head(s, &id, 60, 1);
	for (c = 1; c <= 11; c++) {
		synth_corr_stack(s, c, c <= 4 ? 1 : 2);
		synth_kernel_corr(s, id.axpy, GPU0 + c * 1000, GPU0 + c * 1000 + 100, 0, c, 0, 0);
	}
	write_frames(s, &id, 0);
	for (int i = 0; i < 10; i++) {
		uint64_t pc = i < 8 ? ua[i] : ub[i - 2];

		synth_frame(s, pc, pc - 0x400000, id.app, synth_string(s, fn[i]), 0, 0, 0);
	}
	write_stack(s, 1, ua, 8);
	write_stack(s, 2, ub, 8);
	synth_end(s, T0 + 9000000, 0);
	finish(s, NULL, t);
}

static void test_static_runtime(void)
{
	const struct ga_stack_site *a, *b;
	struct trace t;
	struct loaded l;

	static_runtime(&t);
	tap_begin("stacks: static runtime and launch stubs are not the program's frames");
	load(&l, &t, 1, GA_SITES_DEPTH);
	CHECK(l.ok);
	CHECKF(l.st.nsites == 2, "%zu sites", l.st.nsites);
	a = site(&l, "site_a()+0x0 (app)" AR "main+0x0 (app)");
	b = site(&l, "site_b()+0x0 (app)" AR "main+0x0 (app)");
	CHECKF(a && b, "sites: '%s', '%s'", l.st.nsites > 0 ? ga_model_str(&l.m, l.st.sites[0].str) :
	       "", l.st.nsites > 1 ? ga_model_str(&l.m, l.st.sites[1].str) : "");
	if (a && b)
		CHECKF(a->launches == 4 && b->launches == 7, "launches %llu and %llu",
		       (unsigned long long)a->launches, (unsigned long long)b->launches);
	unload(&l);
	tap_end();
	free(t.buf);
}

/*
 * The names a static runtime's frames and nvcc's launch code really have
 * (CUDA 13, from the symbol table, mangled; -O0 keeps every one of them a
 * frame), one kernel launched by eight functions with known counts:
 *   site_a, site_b  ns::nk<<<>>>: runtime internals, __cudaLaunchKernel,
 *                   the header's static _ZL..__cudaLaunchKernel_helper, the
 *                   stub and the host function ns::nk
 *   site_c          tk<int><<<>>>: a static (_ZL) stub, CUDA 13's
 *                   __wrapper__device_stub_tk<int>, then the host function
 *   site_d          extern "C" ck<<<>>>: its stub has its C++ name, the
 *                   host function its C name; site_d is a C function
 *   site_e          cudaLaunchKernel<char> of cuda_runtime.h, called directly
 *   site_f          host function with the stub inlined, known by its line
 *                   in nvcc's .cudafe1.stub.c
 *   cudaRunKernel   the program's own C++ function with a cuda... name
 *   site_g          a stub whose host function was inlined into site_g
 * Each must be a site of its own that starts at the program's function.
 */
static const struct {
	const char *fn;
	const char *file;
	uint32_t line;
} rt_fn[] = {
	/* 0 */ { "libcudart_static_4d8b33a106dceb3c07a56e26de61f2d53bb62a68", 0, 0 },
	/* 1 */ { "__cudart1093", 0, 0 },
	/* 2 */ { "__cudaLaunchKernel", 0, 0 },
	/* 3 */ { "_ZL25__cudaLaunchKernel_helperP9CUkern_st4dim3S1_PPvmP11CUstream_st", 0, 0 },
	/* 4 */ { "_Z26__device_stub__ZN2ns2nkEPiPi", 0, 0 },
	/* 5 */ { "_ZN2ns2nkEPi", 0, 0 },
	/* 6 */ { "_Z6site_av", "/home/u/src/app.cu", 30 },
	/* 7 */ { "_Z6site_bv", "/home/u/src/app.cu", 40 },
	/* 8 */ { "main", "/home/u/src/app.cu", 90 },
	/* 9 */ { "cudaLaunchKernel_ptsz", 0, 0 },
	/* 10 */ { "_ZL26__device_stub__Z2tkIiEvPT_Pi", 0, 0 },
	/* 11 */ { "_Z25__wrapper__device_stub_tkIiEvRPT_", 0, 0 },
	/* 12 */ { "_Z2tkIiEvPT_.constprop.0", 0, 0 },
	/* 13 */ { "_Z6site_cv", "/home/u/src/app.cu", 50 },
	/* 14 */ { "_Z21__device_stub__Z2ckPiPi", 0, 0 },
	/* 15 */ { "ck", 0, 0 },
	/* 16 */ { "site_d", "/home/u/src/app.cu", 60 },
	/* 17 */ { "cudaLaunchKernel", 0, 0 },
	/* 18 */ { "_Z16cudaLaunchKernelIcE9cudaErrorPKT_4dim3S4_PPvmP11CUstream_st", 0, 0 },
	/* 19 */ { "_Z6site_ev", "/home/u/src/app.cu", 70 },
	/* 20 */ { "_Z5scaleIfEvPT_S0_", "/tmp/tmpxft_00003f0b_00000000-6_app.cudafe1.stub.c", 14 },
	/* 21 */ { "_Z6site_fv", "/home/u/src/app.cu", 80 },
	/* 22 */ { "_Z13cudaRunKernelv", "/home/u/src/app.cu", 20 },
	/* 23 */ { "_Z6site_gv", "/home/u/src/app.cu", 85 },
};

static const struct {
	uint32_t launches;
	uint32_t n;
	uint8_t fn[10];            /* rt_fn indices, innermost first */
	const char *site;
} rt_stack[] = {
	{ 4, 8, { 0, 1, 2, 3, 4, 5, 6, 8 }, "site_a (app.cu:30)" AR "main (app.cu:90)" },
	{ 7, 8, { 0, 1, 2, 3, 4, 5, 7, 8 }, "site_b (app.cu:40)" AR "main (app.cu:90)" },
	{ 3, 6, { 9, 10, 11, 12, 13, 8 }, "site_c (app.cu:50)" AR "main (app.cu:90)" },
	{ 2, 5, { 2, 14, 15, 16, 8 }, "site_d (app.cu:60)" AR "main (app.cu:90)" },
	{ 5, 5, { 0, 17, 18, 19, 8 }, "site_e (app.cu:70)" AR "main (app.cu:90)" },
	{ 6, 4, { 2, 20, 21, 8 }, "site_f (app.cu:80)" AR "main (app.cu:90)" },
	{ 1, 4, { 0, 17, 22, 8 }, "cudaRunKernel (app.cu:20)" AR "main (app.cu:90)" },
	{ 9, 4, { 2, 14, 23, 8 }, "site_g (app.cu:85)" AR "main (app.cu:90)" },
};

#define RT_PC(i) (0x420000ull + 0x100 * (uint64_t)(i))

static void static_runtime_names(struct trace *t)
{
	struct synth *s = synth_open(NULL);
	struct ids id;
	uint32_t c = 0, i, j;

	head(s, &id, 61, 1);
	for (i = 0; i < sizeof(rt_stack) / sizeof(rt_stack[0]); i++)
		for (j = 0; j < rt_stack[i].launches; j++) {
			c++;
			synth_corr_stack(s, c, i + 1);
			synth_kernel_corr(s, id.axpy, GPU0 + c * 1000, GPU0 + c * 1000 + 100, 0, c, 0,
					  0);
		}
	write_frames(s, &id, 0);
	for (i = 0; i < sizeof(rt_fn) / sizeof(rt_fn[0]); i++)
		synth_frame(s, RT_PC(i), RT_PC(i) - 0x400000, id.app, synth_string(s, rt_fn[i].fn),
			    0, rt_fn[i].file ? synth_string(s, rt_fn[i].file) : 0, rt_fn[i].line);
	for (i = 0; i < sizeof(rt_stack) / sizeof(rt_stack[0]); i++) {
		uint64_t pcs[10];

		for (j = 0; j < rt_stack[i].n; j++)
			pcs[j] = RT_PC(rt_stack[i].fn[j]);
		write_stack(s, i + 1, pcs, rt_stack[i].n);
	}
	synth_end(s, T0 + 9000000, 0);
	finish(s, NULL, t);
}

static void test_static_runtime_names(void)
{
	struct trace t;
	struct loaded l;
	size_t i, n = sizeof(rt_stack) / sizeof(rt_stack[0]);

	static_runtime_names(&t);
	tap_begin("stacks: a static runtime's and nvcc's launch code's real names are left out");
	load(&l, &t, 1, GA_SITES_DEPTH);
	CHECK(l.ok);
	CHECKF(l.st.nsites == n, "%zu sites, %zu expected", l.st.nsites, n);
	for (i = 0; i < n; i++) {
		const struct ga_stack_site *x = site(&l, rt_stack[i].site);

		CHECKF(x && x->launches == rt_stack[i].launches, "site '%s': %s %llu launches",
		       rt_stack[i].site, x ? "has" : "missing,",
		       x ? (unsigned long long)x->launches : 0ull);
	}
	if (tap_st.failed) {
		for (i = 0; i < l.st.nsites; i++)
			fprintf(stderr, "# site '%s': %llu\n", ga_model_str(&l.m, l.st.sites[i].str),
				(unsigned long long)l.st.sites[i].launches);
	}
	unload(&l);
	tap_end();
	free(t.buf);
}

/*
 * A static runtime deeper than one lookup pass reaches: deep_site() calls
 * a chain of 20 functions named like the static runtime's internals, each
 * of which records its return address.  Recorded without
 * names (as from a program without exported symbols), the site must still
 * start at deep_site once the lookup has named the chain.
 */
static const char deep_src[] =
	"#define _GNU_SOURCE\n"
	"#include <dlfcn.h>\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"\n"
	"static unsigned long pc[32];\n"
	"static int n;\n"
	"\n"
	"static unsigned long off_of(void *p)\n"
	"{\n"
	"\tDl_info info;\n"
	"\n"
	"\tif (!dladdr((char *)p - 1, &info) || !info.dli_fbase)\n"
	"\t\treturn 0;\n"
	"\treturn (unsigned long)((uintptr_t)p - (uintptr_t)info.dli_fbase);\n"
	"}\n"
	"\n"
	"#define RT(k, next) __attribute__((noinline)) void __cudart##k(void) \\\n"
	"\t{ next(); pc[n++] = off_of(__builtin_return_address(0)); }\n"
	"static __attribute__((noinline)) void where(void) { }\n"
	"RT(20, where) RT(19, __cudart20) RT(18, __cudart19) RT(17, __cudart18)\n"
	"RT(16, __cudart17) RT(15, __cudart16) RT(14, __cudart15) RT(13, __cudart14)\n"
	"RT(12, __cudart13) RT(11, __cudart12)\n"
	"RT(10, __cudart11) RT(9, __cudart10) RT(8, __cudart9) RT(7, __cudart8)\n"
	"RT(6, __cudart7) RT(5, __cudart6) RT(4, __cudart5) RT(3, __cudart4)\n"
	"RT(2, __cudart3) RT(1, __cudart2)\n"
	"\n"
	"static __attribute__((noinline)) void deep_site(void)\n"
	"{\n"
	"\t__cudart1(); /* D */\n"
	"\tpc[n++] = off_of(__builtin_return_address(0));\n"
	"}\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\tdeep_site();\n"
	"\tfor (int i = 0; i < n; i++)\n"
	"\t\tprintf(\"%lx\\n\", pc[i]);\n"
	"\treturn 0;\n"
	"}\n";

static void test_symbolize_deep(void)
{
	char src[128], bin[128], path[128], cmd[512], line[64], want[128];
	uint64_t pcs[32], all[40];
	unsigned long x;
	uint32_t n = 0, i, mod;
	unsigned dl = 1;
	const char *p;
	struct synth *s;
	struct ids id;
	char *out = NULL;
	FILE *f;
	int rc;

	if (system("command -v cc >/dev/null 2>&1")) {
		printf("skip - stacks: a static runtime deeper than one lookup pass # no cc\n");
		return;
	}
	tap_begin("stacks: a static runtime deeper than one lookup pass");
	for (p = deep_src; p < strstr(deep_src, "/* D */"); p++)
		dl += *p == '\n';
	snprintf(src, sizeof(src), "%s/deep.c", dir);
	snprintf(bin, sizeof(bin), "%s/deep", dir);
	f = fopen(src, "w");
	CHECK(f && fputs(deep_src, f) >= 0 && fclose(f) == 0);
	snprintf(cmd, sizeof(cmd), "cc -g -O0 -o '%s' '%s' -ldl >/dev/null 2>&1", bin, src);
	f = system(cmd) == 0 ? popen(bin, "r") : NULL;
	while (f && n < 32 && fgets(line, sizeof(line), f) && sscanf(line, "%lx", &x) == 1 && x)
		pcs[n++] = x;
	if (!f || pclose(f) != 0 || n != 21) {
		CHECKF(0, "cannot build and run %s (%u addresses)", bin, n);
		tap_end();
		return;
	}
	snprintf(path, sizeof(path), "%s/deep.gpuprof", dir);
	s = synth_open(path);
	head(s, &id, 70, 1);
	mod = synth_string(s, bin);
	synth_corr_stack(s, 1, 1);
	synth_kernel_corr(s, id.axpy, GPU0, GPU0 + 300, 0, 1, 0, 0);
	write_frames(s, &id, 0);
	for (i = 0; i < NINT; i++)
		all[i] = I1 + 0x100 * (uint64_t)i;     /* the internal frames */
	for (i = 0; i < n; i++) {
		/* Offsets, made distinct pcs of this process. */
		synth_frame(s, 0x600000 + pcs[i], pcs[i], mod, 0, 0, 0, 0);
		all[NINT + i] = 0x600000 + pcs[i];
	}
	synth_stack(s, 1, all, NINT + n);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
	snprintf(want, sizeof(want), "| deep_site (deep.c:%u)" AR "main (deep.c:", dl);
	rc = run(&out, cmd_report, "report", path, NULL);
	CHECKF(rc == 0 && out && strstr(out, want), "%s", out ? out : "");
	free(out);
	tap_end();
}

int main(void)
{
	struct trace t1, t2, t3[2], t4;
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-stacks-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	two_sites(NULL, &t1);
	graphs(&t2);
	merge_part(&t3[0], 0);
	merge_part(&t3[1], 1);
	no_stacks(NULL, &t4);
	test_two_sites(&t1);
	test_graphs(&t2);
	test_merge(t3);
	test_none(&t4);
	test_library_only();
	test_corr_ring();
	test_commands();
	test_symbolize();
	test_symbolize_deep();
	test_static_runtime();
	test_static_runtime_names();
	free(t1.buf);
	free(t2.buf);
	free(t3[0].buf);
	free(t3[1].buf);
	free(t4.buf);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
