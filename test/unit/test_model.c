/*
 * Unit tests of the analyzer model: counts, totals, medians, min/max,
 * busy time of overlapping activities, graphs, API statistics, losses and
 * the merge of several processes, all from synthetic traces with known
 * answers.  Test code, runs offline only, needs no GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/launchcfg.h"
#include "model/model.h"
#include "model/ranges.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull

/* Close s and add its bytes to m under name. */
static int add_synth(struct ga_model *m, struct synth *s, const char *name)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc;

	if (synth_close(s, &buf, &len))
		return -1;
	rc = ga_model_add_mem(m, name, buf, len);
	free(buf);
	return rc;
}

static const struct ga_kstat *kernel_named(struct ga_model *m, const char *mangled)
{
	size_t i;

	for (i = 0; i < m->nkstats; i++)
		if (!strcmp(ga_model_str(m, m->kstats[i].name), mangled))
			return &m->kstats[i];
	return NULL;
}

static const struct ga_astat *api_named(struct ga_model *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nastats; i++)
		if (!strcmp(ga_model_str(m, m->astats[i].name), name))
			return &m->astats[i];
	return NULL;
}

static void test_kernels(void)
{
	static const uint64_t da[] = { 40, 10, 30, 20 };   /* median 25 */
	static const uint64_t db[] = { 5, 100, 5 };        /* median 5 */
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	const struct ga_kstat *a, *b;
	uint32_t na, nb;
	uint64_t t = T0;
	size_t i;

	tap_begin("kernel counts, totals, medians, min and max");
	ga_model_init(&m);
	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	na = synth_string(s, "_Z8inc_loopPfi");
	nb = synth_string(s, "_ZN2ns4axpyIfEEviT_PKS1_PS1_");
	for (i = 0; i < 4; i++, t += 1000)
		synth_kernel(s, na, t, t + da[i], 0, 1, 0, 0);
	for (i = 0; i < 3; i++, t += 1000)
		synth_kernel(s, nb, t, t + db[i], 0, 2, 0, 0);
	synth_end(s, t, 0);
	CHECK(add_synth(&m, s, "k") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	a = kernel_named(&m, "_Z8inc_loopPfi");
	b = kernel_named(&m, "_ZN2ns4axpyIfEEviT_PKS1_PS1_");
	CHECK(a && b);
	if (a && b) {
		CHECK(a->count == 4 && a->total == 100 && a->min == 10 && a->max == 40);
		CHECKF(a->med == 25, "median %llu", (unsigned long long)a->med);
		CHECK(b->count == 3 && b->total == 110 && b->min == 5 && b->max == 100);
		CHECKF(b->med == 5, "median %llu", (unsigned long long)b->med);
		CHECK(!strcmp(ga_model_str(&m, m.labels[a->label].str), "kernel inc_loop"));
		CHECK(!strcmp(ga_model_str(&m, m.labels[b->label].str), "kernel ns::axpy<float>"));
		CHECK(!strcmp(ga_strtab_full(&m.strs, b->name),
			      "void ns::axpy<float>(int, float, float const*, float*)"));
	}
	CHECK(m.counts[GA_ACT_KERNEL] == 7 && m.kernel_total == 210);
	CHECK(m.streams == 2);
	CHECK(m.procs[0].pid == 10 && m.procs[0].rank == 0 && m.procs[0].finished);
	ga_model_free(&m);
	tap_end();
}

static void test_memory(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);

	tap_begin("memcpy and memset bytes, times and kinds");
	ga_model_init(&m);
	synth_memcpy(s, GP_COPY_HTOD, 1 << 20, T0, T0 + 1000, 0, 1);
	synth_memcpy(s, GP_COPY_HTOD, 1 << 20, T0 + 2000, T0 + 3000, 0, 1);
	synth_memcpy(s, GP_COPY_DTOH, 4096, T0 + 4000, T0 + 4100, 0, 1);
	synth_memcpy(s, GP_COPY_ATOH, 10, T0 + 5000, T0 + 5010, 0, 1);
	synth_memcpy(s, GP_COPY_PTOP, 100, T0 + 6000, T0 + 6010, 0, 1);
	synth_memset(s, 512, T0 + 7000, T0 + 7050, 0, 1);
	CHECK(add_synth(&m, s, "m") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	CHECK(m.copy[GP_COPY_HTOD].count == 2 && m.copy[GP_COPY_HTOD].bytes == 2 << 20);
	CHECK(m.copy[GP_COPY_HTOD].total == 2000);
	/* 2 MiB in 2 us: 1048.576 GB/s, as the report computes it. */
	CHECK((double)m.copy[GP_COPY_HTOD].bytes / (double)m.copy[GP_COPY_HTOD].total == 1048.576);
	CHECK(m.copy[GP_COPY_DTOH].count == 1 && m.copy[GP_COPY_DTOH].bytes == 4096);
	CHECK(m.copy[GP_COPY_ATOH].count == 1);
	CHECK(!strcmp(ga_model_str(&m, m.labels[m.copy[GP_COPY_ATOH].label - 1].str), "memcpy AtoH"));
	CHECK(!strcmp(ga_model_str(&m, m.labels[m.copy[GP_COPY_PTOP].label - 1].str), "memcpy PtoP"));
	CHECK(m.memset_st.count == 1 && m.memset_st.bytes == 512 && m.memset_st.total == 50);
	CHECK(m.counts[GA_ACT_MEMCPY] == 5 && m.counts[GA_ACT_MEMSET] == 1);
	/* No device record: a placeholder device carries the activities. */
	CHECK(m.ndevs == 1 && !m.devs[0].described && m.devs[0].count == 6);
	CHECK(!m.files[0].info.finished);
	ga_model_free(&m);
	tap_end();
}

static void test_busy(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	uint32_t k;

	tap_begin("GPU busy time is the union of overlapping activities");
	ga_model_init(&m);
	synth_device(s, 0, "GPU", 9, 0, 132, 1, 1);
	k = synth_string(s, "k");
	/* Out of order, overlapping, nested, touching, empty. */
	synth_kernel(s, k, T0 + 200, T0 + 300, 0, 1, 0, 0);
	synth_kernel(s, k, T0 + 0, T0 + 100, 0, 1, 0, 0);
	synth_kernel(s, k, T0 + 50, T0 + 150, 0, 2, 0, 0);
	synth_memcpy(s, GP_COPY_HTOD, 8, T0 + 250, T0 + 260, 0, 3);
	synth_memset(s, 8, T0 + 300, T0 + 310, 0, 3);
	synth_kernel(s, k, T0 + 400, T0 + 400, 0, 1, 0, 0);
	CHECK(add_synth(&m, s, "b") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	CHECKF(m.devs[0].busy_ns == 260, "busy %llu", (unsigned long long)m.devs[0].busy_ns);
	CHECK(m.last_end - m.first_start == 400);
	CHECK(m.devs[0].total == 100 + 100 + 100 + 10 + 10);
	ga_model_free(&m);
	tap_end();
}

static void test_graphs(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	uint32_t k;

	tap_begin("graph launches and graph nodes");
	ga_model_init(&m);
	k = synth_string(s, "k");
	synth_graph(s, 5, T0, T0 + 1000, 0, 1);
	synth_graph(s, 5, T0 + 2000, T0 + 2500, 0, 1);
	synth_graph(s, 6, T0 + 3000, T0 + 3100, 0, 1);
	synth_kernel(s, k, T0 + 10, T0 + 20, 0, 1, 9, 1);
	synth_kernel(s, k, T0 + 30, T0 + 40, 0, 1, 9, 2);
	synth_kernel(s, k, T0 + 50, T0 + 60, 0, 1, 9, 2);
	synth_kernel(s, k, T0 + 70, T0 + 80, 0, 1, 9, 3);
	synth_kernel(s, k, T0 + 90, T0 + 95, 0, 1, 0, 0);
	CHECK(add_synth(&m, s, "g") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	CHECK(m.ngraphs == 3);
	CHECK(m.graphs[0].graph_id == 5 && m.graphs[0].launches == 2 && m.graphs[0].total == 1500);
	CHECK(m.graphs[1].graph_id == 6 && m.graphs[1].launches == 1);
	CHECK(m.graphs[2].graph_id == 9 && m.graphs[2].launches == 0);
	CHECK(m.graphs[2].kernels == 4 && m.graphs[2].nodes == 3);
	CHECK(m.kstats[0].in_graph == 4 && m.kstats[0].count == 5);
	CHECK(!strcmp(ga_model_str(&m, m.labels[m.graphs[0].label - 1].str), "graph 5"));
	CHECK(m.counts[GA_ACT_GRAPH] == 3);
	ga_model_free(&m);
	tap_end();
}

static void test_api_and_lost(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	const struct ga_astat *a, *b;
	uint32_t n1, n2;

	tap_begin("API statistics and losses by cause");
	ga_model_init(&m);
	/* CUPTI's version suffixes go; a driver symbol's own "_v2" stays. */
	n1 = synth_string(s, "cudaLaunchKernel_v7000");
	n2 = synth_string(s, "cudaMalloc");
	synth_api(s, synth_string(s, "cuMemAlloc_v2"), T0, T0 + 1, 100, 0);
	synth_api(s, n1, T0, T0 + 10, 100, 0);
	synth_api(s, n1, T0 + 20, T0 + 50, 101, 0);
	synth_api(s, n1, T0 + 60, T0 + 80, 100, 0);
	synth_api(s, n2, T0 + 100, T0 + 1100, 100, 2);
	synth_api(s, n2, T0 + 2000, T0 + 2000 + 5000000000ull, 102, 0);
	synth_lost(s, GP_LOST_CUPTI_DROPPED, 7);
	synth_lost(s, GP_LOST_RING_FULL, 3);
	synth_lost(s, GP_LOST_CUPTI_DROPPED, 1);
	synth_lost(s, 99, 2);
	s->next_lost = 20;         /* a chunk header counts more than LOST records */
	synth_flush_chunk(s);
	CHECK(add_synth(&m, s, "a") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	a = api_named(&m, "cudaLaunchKernel");
	b = api_named(&m, "cudaMalloc");
	CHECK(a && b);
	if (a && b) {
		CHECK(a->count == 3 && a->total == 60 && a->min == 10 && a->max == 30);
		CHECK(a->med == 20 && a->errors == 0 && a->threads == 2);
		CHECK(b->count == 2 && b->errors == 1 && b->threads == 2);
		CHECKF(b->med == (1000 + 5000000000ull) / 2, "med %llu", (unsigned long long)b->med);
		CHECK(b->max == 5000000000ull);
	}
	CHECK(m.api_count == 6 && m.api_threads == 3);
	CHECK(api_named(&m, "cuMemAlloc_v2") != NULL && m.nastats == 3);
	CHECK(m.lost[GP_LOST_CUPTI_DROPPED] == 8 && m.lost[GP_LOST_RING_FULL] == 3);
	CHECK(m.lost[0] == 2 && m.lost_records_total == 13);
	CHECK(ga_model_lost_unattributed(&m) == 7 && ga_model_lost_total(&m) == 20);
	ga_model_free(&m);
	tap_end();
}

static void test_long_durations(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	const struct ga_kstat *k, *l;
	uint32_t nk, nl;
	uint64_t G = 1000000000ull;

	tap_begin("activities longer than 4.3 s keep exact statistics");
	ga_model_init(&m);
	nk = synth_string(s, "long");
	nl = synth_string(s, "mixed");
	synth_kernel(s, nk, T0, T0 + 7 * G, 0, 1, 0, 0);
	synth_kernel(s, nk, T0 + 10 * G, T0 + 15 * G, 0, 1, 0, 0);
	synth_kernel(s, nk, T0 + 20 * G, T0 + 26 * G, 0, 1, 0, 0);
	synth_kernel(s, nl, T0 + 30 * G, T0 + 30 * G + 10, 0, 1, 0, 0);
	synth_kernel(s, nl, T0 + 31 * G, T0 + 36 * G, 0, 1, 0, 0);
	CHECK(add_synth(&m, s, "l") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	k = kernel_named(&m, "long");
	l = kernel_named(&m, "mixed");
	CHECK(k && l);
	if (k && l) {
		CHECKF(k->med == 6 * G, "med %llu", (unsigned long long)k->med);
		CHECK(k->total == 18 * G && k->max == 7 * G && k->min == 5 * G);
		CHECKF(l->med == (10 + 5 * G) / 2, "med %llu", (unsigned long long)l->med);
	}
	CHECKF(m.devs[0].busy_ns == 18 * G + 10 + 5 * G, "busy %llu",
	       (unsigned long long)m.devs[0].busy_ns);
	ga_model_free(&m);
	tap_end();
}

static void test_merge(void)
{
	struct ga_model m;
	struct synth *s;
	const struct ga_kstat *k;
	uint32_t n;
	int p;

	tap_begin("two processes merge into one report");
	ga_model_init(&m);
	for (p = 0; p < 2; p++) {
		s = synth_open(NULL);
		s->hdr.pid = (uint32_t)(100 + p);
		synth_process(s, (uint32_t)(100 + p), "node", p ? "app --rank 1" : "app --rank 0",
			      (uint32_t)p, T0);
		/* Each rank sees its own GPU as cuda:0; ranks 0 and 1 are distinct GPUs. */
		if (p == 0)
			synth_device(s, 0, "GPU", 9, 0, 132, 1, 0x10);
		synth_string(s, "padding so ids differ");
		n = synth_string(s, "_Z1kv");
		synth_kernel(s, n, T0 + 100 * (uint64_t)p, T0 + 100 * (uint64_t)p + 50, 0, 1, 0, 0);
		synth_kernel(s, n, T0 + 1000, T0 + 1100, (uint32_t)p, 1, 0, 0);
		/*
		 * Rank 1 describes its devices only after using them, as CUPTI
		 * often does; its cuda:1 is rank 0's GPU.
		 */
		if (p == 1) {
			synth_device(s, 0, "GPU", 9, 0, 132, 1, 0x20);
			synth_device(s, 1, "GPU", 9, 0, 132, 1, 0x10);
		}
		synth_end(s, T0 + 5000, 0);
		CHECK(add_synth(&m, s, p ? "r1" : "r0") == GA_READ_OK);
	}
	CHECK(ga_model_finish(&m) == 0);
	CHECK(m.nprocs == 2 && m.procs[0].pid == 100 && m.procs[1].pid == 101);
	k = kernel_named(&m, "_Z1kv");
	CHECK(k && k->count == 4 && k->total == 300);
	CHECK(m.nkstats == 1);
	/* Two physical GPUs; rank 0's is shared, so its busy time is a union. */
	CHECK(m.ndevrows == 3);
	CHECK(m.devs[0].count == 3 && m.devs[0].busy_ns == 50 + 100);
	{
		size_t live = 0, d, other = 0;

		for (d = 0; d < m.ndevs; d++)
			if (!m.devs[d].dead) {
				live++;
				other = d;
			}
		CHECKF(live == 2, "devices %zu", live);
		CHECK(m.devs[other].count == 1 && m.devs[other].busy_ns == 50);
		CHECK(m.devs[other].uuid[0] == 0x20 && m.devs[other].described);
	}
	CHECK(!strcmp(ga_model_str(&m, m.devrows[0].label), "cuda:0 [rank 0]"));
	CHECK(!strcmp(ga_model_str(&m, m.devrows[1].label), "cuda:0 [rank 1]"));
	CHECK(!strcmp(ga_model_str(&m, m.devrows[2].label), "cuda:1 [rank 1]"));
	CHECK(m.streams == 3);
	ga_model_free(&m);
	tap_end();
}

static void test_medians_across_devices(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	uint32_t k;

	tap_begin("medians over activities on several devices");
	ga_model_init(&m);
	k = synth_string(s, "k");
	synth_kernel(s, k, T0, T0 + 5, 0, 1, 0, 0);
	synth_kernel(s, k, T0, T0 + 1, 0, 1, 0, 0);
	synth_kernel(s, k, T0, T0 + 3, 0, 1, 0, 0);
	synth_kernel(s, k, T0, T0 + 4, 1, 1, 0, 0);
	synth_kernel(s, k, T0, T0 + 2, 1, 1, 0, 0);
	synth_kernel(s, k, T0, T0 + 6, 2, 1, 0, 0);
	CHECK(add_synth(&m, s, "d") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	CHECKF(m.kstats[0].med == 3, "med %llu", (unsigned long long)m.kstats[0].med);
	ga_model_free(&m);
	tap_end();
}

static void test_strings_and_rows(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	unsigned char rec[64];
	struct gp_rec_string *st = (struct gp_rec_string *)(void *)rec;
	const struct ga_row *row;
	uint64_t starts[4];
	size_t i = 0;

	tap_begin("sparse and undefined string ids; timeline rows in start order");
	ga_model_init(&m);
	m.keep_rows = 3;
	m.rows_run = 2; /* two runs: the first spilled, then merged */
	memset(rec, 0, sizeof(rec));
	st->h.type = GP_REC_STRING;
	st->h.size = 24;
	st->id = 50000000;         /* far beyond the dense range */
	st->len = 5;
	memcpy(rec + 16, "sparse", 5);
	synth_rec(s, rec, 24);
	synth_kernel(s, 50000000, T0 + 30, T0 + 40, 0, 1, 0, 0);
	synth_kernel(s, 77, T0 + 10, T0 + 20, 0, 1, 0, 0);   /* never defined */
	synth_kernel(s, 50000000, T0 + 5, T0 + 6, 0, 1, 0, 0);
	synth_kernel(s, 50000000, T0 + 1, T0 + 2, 0, 1, 0, 0);
	CHECK(add_synth(&m, s, "s") == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	CHECK(kernel_named(&m, "spars") && kernel_named(&m, "spars")->count == 3);
	CHECK(kernel_named(&m, "(unknown)") && m.bad_refs == 1);
	CHECK(m.nrows == 3 && m.rows_seen == 4);
	CHECK(m.rows.nruns == 2);
	while (i < 4 && (row = ga_xsort_next(&m.rows)))
		starts[i++] = row->start;
	CHECKF(i == 3 && starts[0] == T0 + 5 && starts[1] == T0 + 10 && starts[2] == T0 + 30,
	       "%zu rows", i);
	ga_model_free(&m);
	tap_end();
}

static void test_damaged_input(void)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	unsigned char *buf;
	size_t len;
	uint32_t k;
	uint64_t off;

	tap_begin("a damaged trace reports what precedes the damage");
	ga_model_init(&m);
	k = synth_string(s, "k");
	synth_kernel(s, k, T0, T0 + 10, 0, 1, 0, 0);
	synth_flush_chunk(s);
	synth_kernel(s, k, T0 + 20, T0 + 30, 0, 1, 0, 0);
	synth_flush_chunk(s);
	off = s->chunk_off[1];
	synth_close(s, &buf, &len);
	CHECK(ga_model_add_mem(&m, "t", buf, len - 3) == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	CHECK(m.files[0].info.damaged && m.files[0].info.stop_offset == off);
	CHECK(m.counts[GA_ACT_KERNEL] == 1);
	ga_model_free(&m);

	ga_model_init(&m);
	CHECK(ga_model_add_mem(&m, "junk", "hello world, not a trace, but long enough to "
			       "have a header's worth of bytes......", 80) == GA_READ_EFORMAT);
	CHECKF(!strcmp(m.err, "junk: byte 0: not a gpuprof trace"), "%s", m.err);
	ga_model_free(&m);
	free(buf);
	tap_end();
}

static int cmp32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_sort_select(void)
{
	static const size_t sizes[] = { 1, 2, 3, 47, 48, 49, 1000, 100000 };
	uint64_t r = 12345;
	size_t si, i, n;

	tap_begin("radix sort and rank selection agree with qsort");
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		uint32_t *a, *b, *c;
		struct ga_iv *sp;
		int mode;

		n = sizes[si];
		a = malloc(n * sizeof(*a));
		b = malloc(n * sizeof(*b));
		c = malloc(n * sizeof(*c));
		sp = malloc(n * sizeof(*sp));
		for (mode = 0; a && b && c && sp && mode < 6; mode++) {
			for (i = 0; i < n; i++) {
				r = r * 6364136223846793005ull + 1442695040888963407ull;
				a[i] = mode == 0 ? (uint32_t)(r >> 32) :
				       mode == 1 ? (uint32_t)(r >> 60) :          /* many equal */
				       mode == 2 ? (uint32_t)i :                  /* sorted */
				       mode == 3 ? (r >> 63 ? UINT32_MAX : (uint32_t)(r >> 40)) :
				       mode == 4 ? (uint32_t)(r >> 50) + 1500 :   /* durations */
				       0;
				sp[i].start = ((uint64_t)a[i] << 20) ^ (r & 0xfffff);
				sp[i].end = sp[i].start + i;
			}
			memcpy(b, a, n * sizeof(*a));
			memcpy(c, a, n * sizeof(*a));
			qsort(b, n, sizeof(*b), cmp32);
			ga_sort_u32(c, n);
			CHECKF(!memcmp(b, c, n * sizeof(*b)), "sort n %zu mode %d", n, mode);
			/* 64-bit keys: the same values high, the low word scrambled, or equal. */
			{
				uint64_t *d = malloc(n * sizeof(*d)), *e = malloc(n * sizeof(*e));

				for (i = 0; d && e && i < n; i++)
					d[i] = e[i] = ((uint64_t)a[i] << 32) | (mode == 2 ? 7 : sp[i].start & 0xffffffffu);
				if (d && e) {
					qsort(d, n, sizeof(*d), cmp64);
					ga_sort_u64(e, n);
					CHECKF(!memcmp(d, e, n * sizeof(*d)), "sort u64 n %zu mode %d", n, mode);
				}
				free(d);
				free(e);
			}
			for (i = 0; i < n; i += 1 + n / 17)
				CHECKF(ga_rank_u32(a, n, i) == b[i], "rank %zu of %zu mode %d", i, n, mode);
			CHECK(ga_rank_u32(a, n, n - 1) == b[n - 1]);
			for (i = 0; i + 1 < n; i += 1 + n / 23) {
				uint32_t v[2];

				ga_rank2_u32(a, n, i, v);
				CHECKF(v[0] == b[i] && v[1] == b[i + 1], "ranks %zu, %zu of %zu mode %d",
				       i, i + 1, n, mode);
			}
			if (n > 1) {
				uint32_t v[2];

				ga_rank2_u32(a, n, n / 2 - 1 + n % 2, v);
				CHECKF(v[0] == b[n / 2 - 1 + n % 2] && v[1] == b[n / 2 + n % 2],
				       "middle ranks of %zu mode %d", n, mode);
				ga_rank2_u32(a, n, n - 2, v);
				CHECKF(v[0] == b[n - 2] && v[1] == b[n - 1], "top ranks of %zu mode %d",
				       n, mode);
			}
			ga_sort_iv_by_start(sp, n);
			for (i = 1; i < n; i++)
				CHECKF(sp[i - 1].start <= sp[i].start, "spans n %zu", n);
		}
		free(a);
		free(b);
		free(c);
		free(sp);
	}
	tap_end();
}

static int cmp_iv(const void *pa, const void *pb)
{
	const struct ga_iv *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* Union length by sorting everything (the reference). */
static uint64_t union_ref(struct ga_iv *v, size_t n)
{
	uint64_t total = 0, cs = 0, ce = 0;
	size_t i;

	qsort(v, n, sizeof(*v), cmp_iv);
	for (i = 0; i < n; i++) {
		if (i == 0 || v[i].start > ce) {
			total += ce - cs;
			cs = v[i].start;
			ce = v[i].end;
		} else if (v[i].end > ce) {
			ce = v[i].end;
		}
	}
	return n ? total + (ce - cs) : 0;
}

/*
 * The streamed busy-time union against sorting everything: in order,
 * nearly in order (late arrivals across batches), reversed and shuffled,
 * with gaps and overlaps, and merged from two halves.
 */
static void test_busy_union(void)
{
	static const size_t sizes[] = { 0, 1, 5, GA_BUSY_BATCH, GA_BUSY_BATCH + 1, 50000 };
	uint64_t r = 777;
	size_t si, i, n;
	int mode;

	tap_begin("busy time: streamed union equals the sorted union");
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		n = sizes[si];
		for (mode = 0; mode < 5; mode++) {
			struct ga_iv *v = malloc((n + 1) * sizeof(*v));
			struct ga_busy b = { 0 }, h = { 0 };
			uint64_t t = 1000, want, got, first = UINT64_MAX, last = 0;

			if (!v)
				break;
			for (i = 0; i < n; i++) {
				r = r * 6364136223846793005ull + 1442695040888963407ull;
				t += (r >> 33) % 3000;                    /* gaps or overlaps */
				v[i].start = t;
				v[i].end = t + (r >> 50) % 5000 + (i % 97 == 0 ? 10000000 : 0);
			}
			if (mode == 1) /* late arrivals: swap entries far apart */
				for (i = 0; i + 6000 < n; i += 7919) {
					struct ga_iv x = v[i];

					v[i] = v[i + 6000];
					v[i + 6000] = x;
				}
			if (mode == 2) /* reversed */
				for (i = 0; i < n / 2; i++) {
					struct ga_iv x = v[i];

					v[i] = v[n - 1 - i];
					v[n - 1 - i] = x;
				}
			if (mode == 3) /* shuffled */
				for (i = n; i > 1; i--) {
					size_t j;
					struct ga_iv x;

					r = r * 6364136223846793005ull + 1442695040888963407ull;
					j = (size_t)((r >> 33) % i);
					x = v[i - 1];
					v[i - 1] = v[j];
					v[j] = x;
				}
			for (i = 0; i < n; i++) {
				/* mode 4: two halves, merged as devices are */
				CHECK(ga_busy_add(mode == 4 && i % 2 ? &h : &b, v[i].start, v[i].end) == 0);
				if (v[i].start < first)
					first = v[i].start;
				if (v[i].end > last)
					last = v[i].end;
			}
			if (mode == 4)
				CHECK(ga_busy_merge(&b, &h) == 0 && h.niv == 0);
			CHECK(ga_busy_flush(&b) == 0);
			got = ga_busy_total(&b);
			want = union_ref(v, n);
			CHECKF(got == want, "n %zu mode %d: %llu, want %llu", n, mode,
			       (unsigned long long)got, (unsigned long long)want);
			for (i = 1; i < b.niv; i++)
				CHECKF(b.iv[i - 1].end < b.iv[i].start, "n %zu mode %d: not disjoint at %zu",
				       n, mode, i);
			if (n)
				CHECK(b.iv[0].start == first && b.iv[b.niv - 1].end == last);
			ga_busy_free(&b);
			ga_busy_free(&h);
			free(v);
		}
	}
	/* Streams that run together: each interval joins the last, nothing is batched. */
	{
		struct ga_busy b = { 0 };

		for (i = 0; i < 100000; i++)
			CHECK(ga_busy_add(&b, 1000 + i, 1010 + i) == 0);
		CHECK(ga_busy_add(&b, 500, 1000) == 0);   /* touches the first: joins too */
		CHECKF(b.nbatch == 1 && b.niv == 0, "%zu batched, %zu merged", b.nbatch, b.niv);
		CHECK(ga_busy_add(&b, 200000, 200001) == 0 && b.nbatch == 2);
		CHECK(ga_busy_flush(&b) == 0 && b.niv == 2 && ga_busy_total(&b) == 100009 + 500 + 1);
		ga_busy_free(&b);
	}
	tap_end();
}


static const struct ga_label *label_named(const struct ga_model *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nlabels; i++)
		if (!strcmp(ga_model_str(m, m->labels[i].str), name))
			return &m->labels[i];
	return NULL;
}

/*
 * Peer copies between GPUs without peer access, staged by the driver
 * through the host: CUPTI gives a DtoH leg on the source and an HtoD leg on
 * the destination, same bytes and correlation.  Eight such copies are eight
 * peer copies of their bytes, each taking its legs' whole span, not eight
 * DtoH plus eight HtoD; pairs the API call or the legs contradict stay
 * host copies; a real PtoP record stays PtoP.
 */
static void test_staged_peer(void)
{
	const uint64_t mb = 1 << 20;
	struct synth *s = synth_open(NULL);
	const struct ga_memstat *st, *d2h, *h2d, *p2p;
	const struct ga_label *l0, *l1;
	struct ga_ranges_src src;
	struct ga_model m;
	struct ga_ranges nx;
	unsigned char *buf = NULL;
	size_t len = 0, i, rows0 = 0, rows1 = 0;
	uint32_t peer, cpy, peer_drv;
	uint64_t t = T0;

	tap_begin("staged peer copies count once, over both legs' span");
	synth_process(s, 10, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_device(s, 1, "GPU", 9, 0, 132, 1ull << 36, 2);
	peer = synth_string(s, "cudaMemcpyPeerAsync");
	peer_drv = synth_string(s, "cuMemcpyPeerAsync");
	cpy = synth_string(s, "cudaMemcpy");
	for (i = 0; i < 8; i++, t += 1000) {
		uint32_t c = 100 + (uint32_t)i;

		/* API record before, after, or missing: each confirms or stays silent. */
		if (i % 3 == 0)
			synth_api_at_corr(s, peer, t - 10, t + 5, 1, c);
		synth_memcpy_at_corr(s, GP_COPY_DTOH, mb, t, t + 100, 0, 1, c);
		/* Large copies are staged in pieces: the legs overlap. */
		synth_memcpy_at_corr(s, GP_COPY_HTOD, mb, t + 50, t + 250, 1, 1, c);
		if (i % 3 == 1) {
			synth_api_at_corr(s, peer, t - 10, t + 5, 1, c);
			synth_api_at_corr(s, peer_drv, t - 8, t + 4, 1, c);
		}
	}
	/* Not staged peer copies: a cudaMemcpy, one device, unequal bytes, three legs. */
	synth_memcpy_at_corr(s, GP_COPY_DTOH, mb, t, t + 100, 0, 1, 200);
	synth_memcpy_at_corr(s, GP_COPY_HTOD, mb, t + 100, t + 200, 1, 1, 200);
	synth_api_at_corr(s, cpy, t - 10, t + 300, 1, 200);
	synth_memcpy_at_corr(s, GP_COPY_DTOH, mb, t, t + 100, 0, 1, 201);
	synth_memcpy_at_corr(s, GP_COPY_HTOD, mb, t + 100, t + 200, 0, 1, 201);
	synth_memcpy_at_corr(s, GP_COPY_DTOH, mb, t, t + 100, 0, 1, 202);
	synth_memcpy_at_corr(s, GP_COPY_HTOD, mb / 2, t + 100, t + 200, 1, 1, 202);
	synth_memcpy_at_corr(s, GP_COPY_DTOH, mb, t, t + 100, 0, 1, 203);
	synth_memcpy_at_corr(s, GP_COPY_HTOD, mb, t + 100, t + 200, 1, 1, 203);
	synth_memcpy_at_corr(s, GP_COPY_HTOD, mb, t + 200, t + 300, 1, 1, 203);
	/* A copy between peers with access: one PtoP record. */
	synth_memcpy_at_corr(s, GP_COPY_PTOP, mb, t + 400, t + 450, 0, 1, 300);
	synth_end(s, t + 1000, 0);
	CHECK(synth_close(s, &buf, &len) == 0);

	ga_model_init(&m);
	ga_ranges_init(&nx);
	m.keep_rows = SIZE_MAX;
	src.path = "synth";
	src.buf = buf;
	src.len = len;
	CHECK(ga_ranges_scan(&nx, &m, &src, 1) == 0);
	CHECK(ga_model_add_mem(&m, "staged", buf, len) == GA_READ_OK);
	CHECK(ga_model_finish(&m) == 0);
	st = &m.copy[GA_COPY_STAGED_PEER];
	d2h = &m.copy[GP_COPY_DTOH];
	h2d = &m.copy[GP_COPY_HTOD];
	p2p = &m.copy[GP_COPY_PTOP];
	CHECKF(st->count == 8 && st->bytes == 8 * mb && st->total == 8 * 250,
	       "staged: %llu copies, %llu bytes, %llu ns", (unsigned long long)st->count,
	       (unsigned long long)st->bytes, (unsigned long long)st->total);
	CHECKF(d2h->count == 4 && h2d->count == 5, "DtoH %llu, HtoD %llu",
	       (unsigned long long)d2h->count, (unsigned long long)h2d->count);
	CHECK(p2p->count == 1 && p2p->bytes == mb);
	CHECK(st->label && !strcmp(ga_model_str(&m, m.labels[st->label - 1].str),
				   "memcpy PtoP-staged"));
	/* Each leg stays on its device, labelled as a leg, with its own time. */
	l0 = label_named(&m, "memcpy PtoP-staged (DtoH leg)");
	l1 = label_named(&m, "memcpy PtoP-staged (HtoD leg)");
	CHECK(l0 && l0->count == 8 && l0->total == 8 * 100);
	CHECK(l1 && l1->count == 8 && l1->total == 8 * 200);
	for (const struct ga_row *row; (row = ga_xsort_next(&m.rows));) {
		const char *name = ga_model_str(&m, m.labels[row->label].str);
		uint32_t dev = m.devrows[row->devrow].id;

		if (!strcmp(name, "memcpy PtoP-staged (DtoH leg)"))
			rows0 += dev == 0 && row->dur == 100;
		if (!strcmp(name, "memcpy PtoP-staged (HtoD leg)"))
			rows1 += dev == 1 && row->dur == 200;
	}
	CHECKF(rows0 == 8 && rows1 == 8, "timeline legs: %zu on cuda:0, %zu on cuda:1", rows0,
	       rows1);
	ga_ranges_free(&nx);
	ga_model_free(&m);
	free(buf);
	tap_end();
}

/*
 * Staged peer copies in a long trace: the model keeps the copies'
 * correlations in a window of GA_CORR_WINDOW ids and each pair only until
 * it has read both legs, so a pair is still found after 200000 unrelated
 * copies (each a leg waiting for a pair that never comes), and what is
 * kept does not grow with them.  Legs of one call further apart than the
 * window, with a copy of an id GA_CORR_WINDOW later between them, count as
 * a DtoH and an HtoD copy.  Both reads: the scan's whole first pass, and
 * the look-ahead of a trace read once (one_pass).
 */
static void test_staged_window(void)
{
	const uint64_t kb = 1 << 10;
	const uint32_t n = 200000, far = 1000;
	unsigned char *buf = NULL;
	size_t len = 0;
	uint64_t t = T0;

	{
		struct synth *s = synth_open(NULL);
		uint32_t peer, cpy, c;

		synth_process(s, 10, "h", "app", 0, T0);
		synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
		synth_device(s, 1, "GPU", 9, 0, 132, 1ull << 36, 2);
		peer = synth_string(s, "cudaMemcpyPeerAsync");
		cpy = synth_string(s, "cudaMemcpyAsync");
		/* Chunks as the recorder writes them: the look-ahead runs 8 of them before. */
		s->chunk_limit = (size_t)1 << 20;
		synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_API, 0, 0);
		for (c = 1; c <= n; c++, t += 1000) {
			if (c == far) {
				/* One leg now, the other after the window (below). */
				synth_memcpy_at_corr(s, GP_COPY_DTOH, 64 * kb, t, t + 100, 0, 1, c);
				continue;
			}
			if (c == far + 2 * GA_CORR_WINDOW)
				synth_memcpy_at_corr(s, GP_COPY_HTOD, 64 * kb, t, t + 100, 1, 1, far);
			if (c == 1 || c == n || c % 1000 == 500) {
				/* A staged peer copy: its call, then both legs. */
				synth_api_at_corr(s, peer, t, t + 10, 1, c);
				synth_memcpy_at_corr(s, GP_COPY_DTOH, 8 * kb, t, t + 100, 0, 1, c);
				synth_memcpy_at_corr(s, GP_COPY_HTOD, 8 * kb, t + 50, t + 250, 1, 1, c);
				continue;
			}
			/* An unrelated copy: one leg, nothing to pair with. */
			synth_api_at_corr(s, cpy, t, t + 10, 1, c);
			synth_memcpy_at_corr(s, c % 2 ? GP_COPY_HTOD : GP_COPY_DTOH, kb + c % 7, t,
					     t + 20, 0, 1, c);
		}
		synth_end(s, t + 1000, 0);
		CHECK(synth_close(s, &buf, &len) == 0);
	}
	for (int one_pass = 0; one_pass < 2; one_pass++) {
		const struct ga_memstat *st, *d2h, *h2d;
		struct ga_ranges_src src;
		struct ga_model m;
		struct ga_ranges nx;
		const uint64_t pairs = 2 + n / 1000, single = n - pairs - 1;

		ga_model_init(&m);
		ga_ranges_init(&nx);
		nx.one_pass = one_pass;
		m.ahead.ctx = &nx;
		m.ahead.begin = ga_ranges_ahead;
		memset(&src, 0, sizeof(src));
		src.path = "synth";
		src.buf = buf;
		src.len = len;
		CHECK(ga_ranges_scan(&nx, &m, &src, 1) == 0);
		CHECK(ga_model_add_mem(&m, "staged", buf, len) == GA_READ_OK);
		CHECK(ga_model_finish(&m) == 0);
		st = &m.copy[GA_COPY_STAGED_PEER];
		d2h = &m.copy[GP_COPY_DTOH];
		h2d = &m.copy[GP_COPY_HTOD];
		CHECKF(st->count == pairs && st->bytes == pairs * 8 * kb && st->total == pairs * 250,
		       "%s: %llu staged copies, %llu bytes, %llu ns (want %llu)",
		       one_pass ? "one pass" : "two passes", (unsigned long long)st->count,
		       (unsigned long long)st->bytes, (unsigned long long)st->total,
		       (unsigned long long)pairs);
		/* The legs too far apart are a copy each way. */
		CHECKF(d2h->count + h2d->count == single + 2, "DtoH %llu + HtoD %llu, want %llu",
		       (unsigned long long)d2h->count, (unsigned long long)h2d->count,
		       (unsigned long long)single + 2);
		/*
		 * Every pair released once read; read once, the slots of the
		 * pairs in the look-ahead's 8 chunks (10 pairs a chunk) reused.
		 */
		CHECKF(m.staged.n == 0 && (!one_pass || m.npairs <= 100) && m.npairs <= pairs,
		       "%s: %zu pairs still kept, %zu slots (capacity %zu)",
		       one_pass ? "one pass" : "two passes", m.staged.n, m.npairs, m.cappairs);
		ga_ranges_free(&nx);
		ga_model_free(&m);
	}
	free(buf);
}

/*
 * Theoretical occupancy against hand-worked cases of the CUDA occupancy
 * calculator (compute capability 9.0 limits: 64 warps, 32 blocks, 64 Ki
 * registers, 228 KiB shared memory per SM, 1 KiB reserved per block).
 */
static void test_occupancy(void)
{
	struct ga_device d = { .cc_major = 9, .cc_minor = 0 };
	struct ga_sm_limits lim;
	uint32_t blocks, limit;
	double o;

	tap_begin("theoretical occupancy: warps, registers and shared memory limit it");
	CHECK(ga_sm_limits(&d, &lim) == 0 && lim.warps == 64 && lim.smem == 233472);
	o = ga_occupancy(&lim, 256, 16, 0, &blocks, &limit);
	CHECKF(o == 1.0 && blocks == 8 && limit == GA_OCC_WARPS, "%f %u %u", o, blocks, limit);
	/* 121 registers: 4096 per warp after rounding, 16 warps, 4 blocks of 4 warps. */
	o = ga_occupancy(&lim, 128, 121, 12672, &blocks, &limit);
	CHECKF(o == 0.25 && blocks == 4 && limit == GA_OCC_REGISTERS, "%f %u %u", o, blocks, limit);
	o = ga_occupancy(&lim, 1024, 64, 0, &blocks, &limit);
	CHECKF(o == 0.5 && blocks == 1 && limit == GA_OCC_REGISTERS, "%f %u %u", o, blocks, limit);
	/* 48 KiB + 1 KiB reserved: 4 blocks of 8 warps. */
	o = ga_occupancy(&lim, 256, 32, 49152, &blocks, &limit);
	CHECKF(o == 0.5 && blocks == 4 && limit == GA_OCC_SHARED, "%f %u %u", o, blocks, limit);
	/* Tiny blocks: the block limit. */
	o = ga_occupancy(&lim, 32, 16, 0, &blocks, &limit);
	CHECKF(o == 0.5 && blocks == 32 && limit == GA_OCC_BLOCKS, "%f %u %u", o, blocks, limit);
	/* A device that recorded its limits wins over the table. */
	d.max_warps_per_sm = 48;
	d.max_blocks_per_sm = 24;
	d.max_regs_per_sm = 65536;
	d.max_smem_per_sm = 102400;
	CHECK(ga_sm_limits(&d, &lim) == 0 && lim.warps == 48 && lim.blocks == 24);
	o = ga_occupancy(&lim, 256, 16, 0, &blocks, &limit);
	CHECKF(o == 1.0 && blocks == 6, "%f %u", o, blocks);
	d = (struct ga_device){ .cc_major = 3, .cc_minor = 5 };
	CHECK(ga_sm_limits(&d, &lim) < 0);
	tap_end();
}

/*
 * Launch configurations counted as the observer sees kernels: many names
 * and configurations met in a random order, several sharing each recently
 * met slot, give each distinct configuration its own count and total, the
 * first launch's devrow, as counted by hand.
 */
static void test_launch_configs(void)
{
	enum { NCFG = 300 };
	enum { NLAUNCH = 100000 };
	static struct gp_rec_kernel cfg[NCFG];
	static uint64_t want_count[NCFG], want_total[NCFG];
	static uint32_t first_dev[NCFG];
	struct ga_model m;
	struct ga_launchcfg l;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	size_t i, used = 0;
	int same = 1;

	tap_begin("launch configurations: each distinct one counted apart, in any order");
	CHECK(ga_model_init(&m) == 0);
	ga_launchcfg_init(&l);
	CHECK(ga_launchcfg_bind(&l, &m) == 0);
	for (i = 0; i < NCFG; i++) {
		memset(&cfg[i], 0, sizeof(cfg[i]));
		cfg[i].h.type = GP_REC_KERNEL;
		cfg[i].h.size = sizeof(cfg[i]);
		/* Few names and values: configurations differ in one field only. */
		cfg[i].name = (uint32_t)(i % 7);
		cfg[i].grid[0] = 64 + (uint32_t)(i / 7 % 3);
		cfg[i].grid[1] = 1 + (uint32_t)(i / 21 % 2);
		cfg[i].block[0] = 128 * (1 + (uint32_t)(i / 42 % 2));
		cfg[i].registers = (uint16_t)(32 + i / 84 % 2);
		cfg[i].dynamic_smem = (uint32_t)(i / 168) * 1024;
		first_dev[i] = UINT32_MAX;
	}
	for (i = 0; i < NLAUNCH && same; i++) {
		struct ga_act a;
		size_t c;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		/* Runs of one configuration, then a jump anywhere. */
		c = (size_t)(r >> 20) % 8 ? (size_t)(r >> 40) % 4 : (size_t)(r >> 24) % NCFG;
		memset(&a, 0, sizeof(a));
		a.kind = GA_ACT_KERNEL;
		a.name = cfg[c].name + 1;
		a.devrow = (uint32_t)(r % 3);
		a.start = 1000 * i;
		a.end = a.start + (r >> 50);
		a.rec = &cfg[c].h;
		same = m.fan_act[0].fn(m.fan_act[0].ctx, &m, &a) == 0;
		want_count[c]++;
		want_total[c] += a.end - a.start;
		if (first_dev[c] == UINT32_MAX)
			first_dev[c] = a.devrow;
	}
	CHECK(same);
	for (i = 0; i < NCFG; i++) {
		size_t matches = 0;

		if (!want_count[i])
			continue;
		used++;
		for (size_t j = 0; j < l.nc; j++) {
			const struct ga_lcfg *x = &l.c[j];

			if (x->name != cfg[i].name + 1 || x->grid[0] != cfg[i].grid[0] ||
			    x->grid[1] != cfg[i].grid[1] || x->block[0] != cfg[i].block[0] ||
			    x->regs != cfg[i].registers || x->dynamic_smem != cfg[i].dynamic_smem)
				continue;
			matches++;
			CHECKF(x->count == want_count[i] && x->total == want_total[i] &&
				       x->dev == first_dev[i],
			       "configuration %zu: %llu launches, %llu ns, devrow %u; wanted %llu, %llu, %u",
			       i, (unsigned long long)x->count, (unsigned long long)x->total, x->dev,
			       (unsigned long long)want_count[i], (unsigned long long)want_total[i],
			       first_dev[i]);
		}
		CHECKF(matches == 1, "configuration %zu found %zu times", i, matches);
	}
	CHECKF(l.nc == used && used > NCFG / 2, "%zu configurations kept, %zu launched", l.nc, used);
	ga_launchcfg_free(&l);
	ga_model_free(&m);
	tap_end();
}

/* A log of observer calls: who saw which record or activity, in order. */
struct fan_log {
	char who[64];
	size_t n;
	int stop_at; /* the call that returns non-zero, 0 none */
};
struct fan_obs {
	struct fan_log *log;
	char tag;
	int idle_configured; /* idle for a process once its CONFIG record is read */
	uint64_t skipped;    /* the kernels the model skipped it for */
};

static int fan_note(struct fan_obs *o)
{
	if (o->log->n + 1 < sizeof(o->log->who))
		o->log->who[o->log->n++] = o->tag;
	return o->log->stop_at && (int)o->log->n == o->log->stop_at;
}

static int fan_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	(void)m;
	(void)proc;
	(void)rec;
	return fan_note(ctx);
}

static int fan_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct fan_obs *o = ctx;

	(void)m;
	return a->kind == GA_ACT_KERNEL && fan_note(o);
}

static int fan_idle(void *ctx, const struct ga_model *m, uint32_t proc)
{
	const struct fan_obs *o = ctx;

	return o->idle_configured && m->procs[proc].has_config;
}

/* The chain in m->obs: upper case letters for its calls. */
static int chain_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct fan_obs o = *(struct fan_obs *)ctx;

	(void)m;
	(void)proc;
	o.tag = 'R';
	return rec->type == GP_REC_API ? fan_note(&o) : 0;
}

static int chain_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct fan_obs o = *(struct fan_obs *)ctx;

	(void)m;
	o.tag = 'A';
	return a->kind == GA_ACT_KERNEL ? fan_note(&o) : 0;
}

/*
 * One API call and its kernel through a model with the chain c and the
 * model's observers a (API records), b (activities), x (API records and
 * activities) and y (allocations, none here).
 */
static int fan_read(struct fan_log *log, int stop_at)
{
	struct ga_model m;
	struct synth *s = synth_open(NULL);
	struct fan_obs a = { log, 'a', 0, 0 }, b = { log, 'b', 0, 0 }, x = { log, 'x', 0, 0 },
		       y = { log, 'y', 0, 0 }, c = { log, 0, 0, 0 };
	uint32_t k = synth_string(s, "k"), n = synth_string(s, "cuLaunchKernel");
	int rc;

	memset(log, 0, sizeof(*log));
	log->stop_at = stop_at;
	synth_api(s, n, T0, T0 + 10, 7, 0);
	synth_kernel(s, k, T0 + 20, T0 + 30, 0, 1, 0, 0);
	CHECK(ga_model_init(&m) == 0);
	/* Registered a, y, b, x: called x, b (activities), x, a (records). */
	CHECK(ga_model_observe(&m, &a, fan_rec, 1ull << GP_REC_API, NULL) == 0);
	CHECK(ga_model_observe(&m, &y, fan_rec, 1ull << GP_REC_MEMORY, NULL) == 0);
	CHECK(ga_model_observe(&m, &b, NULL, 0, fan_act) == 0);
	CHECK(ga_model_observe(&m, &x, fan_rec, 1ull << GP_REC_API, fan_act) == 0);
	CHECK(m.nfan_rec == 3 && m.nfan_act == 2 && m.fan_act[0].ctx == &b &&
	      m.fan_act[1].ctx == &x);
	m.obs = (struct ga_observer){ &c, chain_rec, chain_act };
	rc = add_synth(&m, s, "fan");
	ga_model_free(&m);
	return rc;
}

/*
 * Observer b of activities is idle for a process once its CONFIG record
 * came: kernels 1 and 2 before it reach b, 3 to 5 after it do not and are
 * counted as skipped; x reads all five.  A second file starts over.
 */
static void fan_idle_read(struct fan_log *log, uint64_t *skipped)
{
	struct ga_model m;
	struct fan_obs b = { log, 'b', 1, 0 }, x = { log, 'x', 0, 0 };
	uint32_t k;
	int f;

	memset(log, 0, sizeof(*log));
	CHECK(ga_model_init(&m) == 0);
	CHECK(ga_model_observe(&m, &b, NULL, 0, fan_act) == 0);
	ga_model_act_idle(&m, &b, fan_idle, &b.skipped);
	CHECK(ga_model_observe(&m, &x, NULL, 0, fan_act) == 0);
	for (f = 0; f < 2; f++) {
		struct synth *s = synth_open(NULL);

		k = synth_string(s, "k");
		synth_kernel(s, k, T0, T0 + 10, 0, 1, 0, 0);
		synth_kernel(s, k, T0 + 20, T0 + 30, 0, 1, 0, 0);
		synth_config(s, 0, 0, 0);
		synth_kernel(s, k, T0 + 40, T0 + 50, 0, 1, 0, 0);
		synth_kernel(s, k, T0 + 60, T0 + 70, 0, 1, 0, 0);
		synth_kernel(s, k, T0 + 80, T0 + 90, 0, 1, 0, 0);
		CHECK(add_synth(&m, s, f ? "idle2" : "idle1") == 0);
	}
	*skipped = b.skipped;
	ga_model_free(&m);
}

static void test_fan(void)
{
	struct fan_log log;
	struct ga_model m;
	struct fan_obs o = { &log, 'o', 0, 0 };
	uint64_t skipped = 0;
	int i, full = 0;

	tap_begin("the model's observers: by record type, activities by process, after obs");
	CHECK(fan_read(&log, 0) == 0);
	CHECKF(!strcmp(log.who, "RxaAxb"), "calls %s", log.who);
	/* A non-zero return stops the calls after it and the read. */
	CHECK(fan_read(&log, 2) < 0);
	CHECKF(!strcmp(log.who, "Rx"), "calls %s", log.who);
	CHECK(fan_read(&log, 5) < 0);
	CHECKF(!strcmp(log.who, "RxaAx"), "calls %s", log.who);
	/* An observer idle for a process is skipped for its activities, the kernels counted. */
	fan_idle_read(&log, &skipped);
	CHECKF(!strcmp(log.who, "xbxbxxxxbxbxxx"), "calls %s", log.who);
	CHECKF(skipped == 6, "skipped %llu", (unsigned long long)skipped);
	/* GA_MODEL_FAN observers of records at most, and of activities. */
	CHECK(ga_model_init(&m) == 0);
	for (i = 0; i < GA_MODEL_FAN; i++)
		full |= ga_model_observe(&m, &o, fan_rec, 1ull << GP_REC_API, NULL);
	CHECK(!full && ga_model_observe(&m, &o, fan_rec, 1ull << GP_REC_API, NULL) < 0);
	for (i = 0; i < GA_MODEL_FAN; i++)
		full |= ga_model_observe(&m, &o, NULL, 0, fan_act);
	CHECK(!full && ga_model_observe(&m, &o, NULL, 0, fan_act) < 0);
	CHECK(m.nfan_rec == GA_MODEL_FAN && m.fan_route[GP_REC_API] == 0xff &&
	      !m.fan_route[GP_REC_MEMORY] && m.nfan_act == GA_MODEL_FAN);
	ga_model_free(&m);
	tap_end();
}

int main(void)
{
	test_fan();
	test_launch_configs();
	test_occupancy();
	test_sort_select();
	test_busy_union();
	test_kernels();
	test_memory();
	test_busy();
	test_graphs();
	test_api_and_lost();
	test_long_durations();
	test_merge();
	test_medians_across_devices();
	test_strings_and_rows();
	test_damaged_input();
	test_staged_peer();
	tap_begin("staged peer copies: a window of correlation ids, pairs released once read");
	test_staged_window();
	tap_end();
	return tap_exit();
}
