/*
 * Unit tests of memory in use (analyzer/model/memuse.c and its views): a
 * synthetic trace of allocations and frees on two devices, written once in
 * time order and once shuffled over several chunks; the peak, when it was
 * reached, the final bytes in use, the counts and the largest allocations
 * must not depend on the order, and the report, JSON and the Chrome
 * counter events must show them.  Test code, runs offline only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/analysis.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define DEV 3                      /* CUpti_ActivityMemoryKind: device */
#define PINNED 2

static char dir[64];
static char ordered[128], shuffled[128], none[128];

struct op {
	unsigned op;
	uint64_t t, address, bytes;
	uint32_t device;
	unsigned kind, flags;
};

/*
 * cuda:0, in use after each:  100 +A 1000 -> 1000;  200 +B 4000 -> 5000;
 * 300 -A -> 4000;  400 +C 2000 (async, pool) -> 6000 (the peak);
 * 500 -B -> 2000;  600 +D 500 at A's address -> 2500;  700 a free of
 * memory allocated before the trace -> 2500 (unmatched).  Final 2500;
 * C and D never freed.
 * cuda:1: 150 +8000 -> 8000 (the peak);  250 -8000 -> 0;  350 +10 and
 * +20 at the same time -> 30.
 * One pinned host allocation, left out.
 */
static const struct op ops[] = {
	{ GP_MEM_ALLOC, 100, 0x1000, 1000, 0, DEV, 0 },
	{ GP_MEM_ALLOC, 150, 0x5000, 8000, 1, DEV, 0 },
	{ GP_MEM_ALLOC, 200, 0x2000, 4000, 0, DEV, 0 },
	{ GP_MEM_FREE, 250, 0x5000, 8000, 1, DEV, 0 },
	{ GP_MEM_FREE, 300, 0x1000, 1000, 0, DEV, 0 },
	{ GP_MEM_ALLOC, 350, 0x7000, 10, 1, DEV, 0 },
	{ GP_MEM_ALLOC, 350, 0x7100, 20, 1, DEV, 0 },
	{ GP_MEM_ALLOC, 400, 0x3000, 2000, 0, DEV, GP_MEM_F_ASYNC | GP_MEM_F_POOL },
	{ GP_MEM_ALLOC, 450, 0x90000, 1 << 20, 0, PINNED, 0 },
	{ GP_MEM_FREE, 500, 0x2000, 4000, 0, DEV, 0 },
	{ GP_MEM_ALLOC, 600, 0x1000, 500, 0, DEV, 0 },
	{ GP_MEM_FREE, 700, 0x9000, 64, 0, DEV, 0 },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* The records in the order of perm[], a chunk boundary every few. */
static void write_trace(const char *path, const size_t *perm, int memory)
{
	struct synth *s = synth_open(path);
	uint32_t k;

	synth_process(s, 4242, "node1", "./memuse", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | (memory ? GP_TRACE_MEMORY : 0), 0, 0);
	synth_device(s, 0, "GPU0", 9, 0, 132, 80ull << 30, 0x10);
	synth_device(s, 1, "GPU1", 9, 0, 132, 80ull << 30, 0x20);
	k = synth_string(s, "_Z4stepv");
	synth_kernel(s, k, T0 + 320, T0 + 380, 0, 7, 0, 0);
	for (size_t i = 0; memory && i < NOPS; i++) {
		const struct op *o = &ops[perm[i]];

		synth_memory(s, o->op, T0 + o->t, o->address, o->bytes, o->device, o->kind,
			     o->flags);
		if (i % 4 == 3)
			synth_flush_chunk(s);
	}
	synth_end(s, T0 + 1000, 0);
	synth_close(s, NULL, NULL);
}

#define run(out, err, ...) synth_run(dir, out, err, __VA_ARGS__)

static void check_model(const char *path, const char *what)
{
	char *argv[1] = { (char *)path };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_memuse *mu = &an.mu;
	char name[96];

	snprintf(name, sizeof(name), "memory in use per device, records %s", what);
	tap_begin(name);
	ga_filter_init(&flt);
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	CHECK(ga_analysis_build(&an, argv, 1) == 0);
	CHECK(ga_memuse_any(mu) && mu->records == NOPS && mu->host_records == 1);
	CHECKF(mu->ndevs == 2, "%zu devices", mu->ndevs);
	if (mu->ndevs == 2) {
		const struct ga_memuse_dev *d0 = &mu->devs[0], *d1 = &mu->devs[1];

		CHECK(d0->device == 0 && d1->device == 1);
		CHECK(!strcmp(ga_model_str(&an.m, d0->label), "cuda:0"));
		CHECKF(d0->peak == 6000 && d0->peak_ns == T0 + 400 && d0->final == 2500,
		       "cuda:0 peak %llu at %llu, final %llu", (unsigned long long)d0->peak,
		       (unsigned long long)(d0->peak_ns - T0), (unsigned long long)d0->final);
		CHECKF(d0->allocs == 4 && d0->frees == 3 && d0->unmatched_frees == 1 &&
		       d0->live == 2 && d0->alloc_bytes == 7500,
		       "cuda:0 allocs %llu frees %llu unmatched %llu live %llu bytes %llu",
		       (unsigned long long)d0->allocs, (unsigned long long)d0->frees,
		       (unsigned long long)d0->unmatched_frees, (unsigned long long)d0->live,
		       (unsigned long long)d0->alloc_bytes);
		CHECKF(d1->peak == 8000 && d1->peak_ns == T0 + 150 && d1->final == 30 &&
		       d1->allocs == 3 && d1->frees == 1 && d1->unmatched_frees == 0,
		       "cuda:1 peak %llu final %llu", (unsigned long long)d1->peak,
		       (unsigned long long)d1->final);
		/* Largest first: B (freed at 500), C (never), A (freed at 300), D (never). */
		CHECKF(d0->ntop == 4, "%zu largest", d0->ntop);
		if (d0->ntop == 4) {
			CHECK(d0->top[0].bytes == 4000 && d0->top[0].freed &&
			      d0->top[0].alloc_ns == T0 + 200 && d0->top[0].free_ns == T0 + 500);
			CHECK(d0->top[1].bytes == 2000 && !d0->top[1].freed &&
			      d0->top[1].flags == (GP_MEM_F_ASYNC | GP_MEM_F_POOL));
			CHECK(d0->top[2].bytes == 1000 && d0->top[2].free_ns == T0 + 300);
			CHECK(d0->top[3].bytes == 500 && !d0->top[3].freed &&
			      d0->top[3].address == 0x1000);
		}
		/* The replay is in time order: in use after each event. */
		CHECK(d0->nev == 7 && d0->ev[0].t == T0 + 100 && d0->ev[0].in_use == 1000 &&
		      d0->ev[3].in_use == 6000 && d0->ev[6].in_use == 2500);
	}
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();
}

/* The counter events ("ph":"C") of a Chrome export, one per line, in order. */
static char *counters(const char *json)
{
	size_t n = 0, cap = 1;
	char *out = calloc(1, 1);
	const char *p = json;

	while (out && (p = strstr(p, "{\"name\":\"cuda:")) != NULL) {
		const char *e = strstr(p, "}}");
		size_t len;
		char *np;

		if (!e)
			break;
		len = (size_t)(e + 2 - p);
		if (!memmem(p, len, "\"ph\":\"C\"", 8)) {
			p = e;
			continue;
		}
		np = realloc(out, cap + len + 1);
		if (!np) {
			free(out);
			return NULL;
		}
		out = np;
		memcpy(out + n, p, len);
		out[n + len] = '\n';
		n += len + 1;
		out[n] = 0;
		cap = n + 1;
		p = e;
	}
	return out;
}

static void test_views(void)
{
	char *out = NULL, *err = NULL, *c1 = NULL, *c2 = NULL;
	const char *a, *b, *c;
	int rc;

	tap_begin("the report prints memory in use after the memory operations");
	rc = run(&out, &err, cmd_report, "report", shuffled, NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	a = out ? strstr(out, "Memory operations") : NULL;
	b = out ? strstr(out, "Memory in use (") : NULL;
	c = out ? strstr(out, "CUDA API summary") : NULL;
	CHECKF(a && b && a < b && (!c || b < c), "%s", out ? out : "");
	CHECKF(out && strstr(out, "5.86 KiB |  400 ns | 2.44 KiB |      4 |     3 |  7.32 KiB |         2 | cuda:0\n"),
	       "%s", out ? out : "");
	CHECK(out && strstr(out, "cuda:0: 1 free of memory allocated before tracing"));
	CHECK(out && strstr(out, "1 allocation or free record of host memory"));
	a = out ? strstr(out, "Largest allocations:") : NULL;
	b = a ? strstr(a, "7.81 KiB") : NULL;
	c = a ? strstr(a, "3.91 KiB") : NULL;
	CHECKF(a && b && c && b < c && strstr(a, "device, async, pool") && strstr(a, "not freed"),
	       "%s", out ? out : "");
	CHECK(out && strstr(out, "Traced:       kernel memory\n"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_report, "report", none, NULL);
	CHECK(rc == 0 && out && !strstr(out, "Memory in use") && !strstr(out, "Largest allocations"));
	free(out);
	free(err);
	tap_end();

	tap_begin("JSON memory_usage per device, only with memory records");
	rc = run(&out, &err, cmd_export, "export", "--format", "json", shuffled, NULL);
	CHECK(rc == 0);
	CHECKF(out && strstr(out, "\"memory_usage\":{\"records\":12,\"host_records\":1,\"devices\":[\n"),
	       "%s", out ? out : "");
	CHECKF(out && strstr(out, "{\"device\":0,\"pid\":4242,\"label\":\"cuda:0\","
			      "\"peak_bytes\":6000,\"peak_ns\":1700000000000000400,"
			      "\"final_bytes\":2500,\"allocs\":4,\"frees\":3,\"alloc_bytes\":7500,"
			      "\"not_freed\":2,\"unmatched_frees\":1,\"largest\":[{\"bytes\":4000,"
			      "\"address\":8192,\"alloc_ns\":1700000000000000200,\"freed\":true,"
			      "\"free_ns\":1700000000000000500,\"kind\":\"device\",\"async\":false,"
			      "\"pool\":false,"),
	       "%s", out ? out : "");
	CHECK(out && strstr(out, "{\"bytes\":2000,\"address\":12288,\"alloc_ns\":1700000000000000400,"
			    "\"freed\":false,\"free_ns\":null,\"kind\":\"device\",\"async\":true,"
			    "\"pool\":true,"));
	CHECK(out && strstr(out, "{\"device\":1,\"pid\":4242,\"label\":\"cuda:1\","
			    "\"peak_bytes\":8000,\"peak_ns\":1700000000000000150,\"final_bytes\":30,"
			    "\"allocs\":3,\"frees\":1,"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--format", "json", none, NULL);
	CHECK(rc == 0 && out && !strstr(out, "memory_usage"));
	free(out);
	free(err);
	tap_end();

	tap_begin("Chrome: a counter of bytes in use per device, the same in any record order");
	rc = run(&out, &err, cmd_export, "export", "--format", "chrome", ordered, NULL);
	CHECK(rc == 0 && out);
	c1 = out ? counters(out) : NULL;
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--format", "chrome", shuffled, NULL);
	CHECK(rc == 0 && out);
	c2 = out ? counters(out) : NULL;
	free(out);
	free(err);
	CHECKF(c1 && c2 && !strcmp(c1, c2), "ordered:\n%s\nshuffled:\n%s", c1 ? c1 : "",
	       c2 ? c2 : "");
	/* One sample per change; the unmatched free at 700 changes nothing;
	 * the two allocations at 350 are one sample. */
	CHECKF(c1 && !strcmp(c1,
		"{\"name\":\"cuda:0 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.100,\"args\":{\"bytes\":1000}}\n"
		"{\"name\":\"cuda:0 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.200,\"args\":{\"bytes\":5000}}\n"
		"{\"name\":\"cuda:0 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.300,\"args\":{\"bytes\":4000}}\n"
		"{\"name\":\"cuda:0 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.400,\"args\":{\"bytes\":6000}}\n"
		"{\"name\":\"cuda:0 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.500,\"args\":{\"bytes\":2000}}\n"
		"{\"name\":\"cuda:0 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.600,\"args\":{\"bytes\":2500}}\n"
		"{\"name\":\"cuda:1 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.150,\"args\":{\"bytes\":8000}}\n"
		"{\"name\":\"cuda:1 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.250,\"args\":{\"bytes\":0}}\n"
		"{\"name\":\"cuda:1 memory\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":4242,\"ts\":0.350,\"args\":{\"bytes\":30}}\n"),
	       "%s", c1 ? c1 : "");
	free(c1);
	free(c2);
	rc = run(&out, &err, cmd_export, "export", "--format", "chrome", none, NULL);
	CHECK(rc == 0 && out && !strstr(out, "\"ph\":\"C\""));
	free(out);
	free(err);
	tap_end();
}

int main(void)
{
	size_t in_order[NOPS], perm[NOPS];
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-memuse-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(ordered, sizeof(ordered), "%s/ordered.gpuprof", dir);
	snprintf(shuffled, sizeof(shuffled), "%s/shuffled.gpuprof", dir);
	snprintf(none, sizeof(none), "%s/none.gpuprof", dir);
	/* A fixed permutation: some frees come before their allocations. */
	for (size_t i = 0; i < NOPS; i++) {
		in_order[i] = i;
		perm[i] = (i * 5 + 3) % NOPS;
	}
	write_trace(ordered, in_order, 1);
	write_trace(shuffled, perm, 1);
	write_trace(none, in_order, 0);
	check_model(ordered, "in time order");
	check_model(shuffled, "shuffled over chunks");
	test_views();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
