/*
 * Unit tests of memory in use (analyzer/model/memuse.c and its views): a
 * synthetic trace of allocations and frees on two devices, written once in
 * time order and once shuffled over several chunks; the peak, when it was
 * reached, the final bytes in use, the counts and the largest allocations
 * must not depend on the order, and the report, JSON and the Chrome
 * counter events must show them.  The events and the counter samples go
 * through an external sort (base/xsort.h): with runs of a few events,
 * spilled and merged, a larger shuffled trace of several devices gives the
 * same as in memory.  Test code, runs offline only.
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

/* The counter samples of devs[dev] as "t-T0:bytes " pairs, into buf. */
static void samples_of(struct ga_memuse *mu, uint32_t dev, char *buf, size_t size)
{
	const struct ga_memuse_sample *s;
	size_t n = 0;

	buf[0] = 0;
	while ((s = ga_memuse_sample_next(mu, dev)) && n + 48 < size)
		n += (size_t)snprintf(buf + n, size - n, "%llu:%llu ",
				      (unsigned long long)(s->t - T0), (unsigned long long)s->in_use);
}

/* run: events a run of the sort holds (0: the default, all in memory here). */
static void check_model(const char *path, const char *what, size_t run)
{
	char *argv[1] = { (char *)path };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_memuse *mu = &an.mu;
	char name[96];

	snprintf(name, sizeof(name), "memory in use per device, records %s%s", what,
		 run ? ", sorted in runs of 2" : "");
	tap_begin(name);
	ga_filter_init(&flt);
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	an.mu.run = run;
	an.mu.samples = 1;
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
		/* The replay is in time order: in use after each change, the
		 * last at a time (350 twice on cuda:1); none for the unmatched free. */
		char buf[256];

		CHECK(d0->events == 7 && d1->events == 4);
		CHECKF(run ? an.mu.ev_runs == 6 : an.mu.ev_runs == 0, "%zu runs", an.mu.ev_runs);
		samples_of(&an.mu, 0, buf, sizeof(buf));
		CHECKF(!strcmp(buf, "100:1000 200:5000 300:4000 400:6000 500:2000 600:2500 "),
		       "cuda:0 samples %s", buf);
		samples_of(&an.mu, 1, buf, sizeof(buf));
		CHECKF(!strcmp(buf, "150:8000 250:0 350:30 "), "cuda:1 samples %s", buf);
		CHECKF(run ? an.mu.smp.nruns == 5 : an.mu.smp.nruns == 0, "%zu sample runs",
		       an.mu.smp.nruns);
		CHECK(!an.mu.err[0]);
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

/*
 * A larger trace for the sort: NBIG allocations and frees on three
 * devices, times drawn from a few hundred (many equal), addresses from a
 * small pool (reused, frees of what was never allocated), written in a
 * shuffled order over chunks.
 */
#define NBIG 3000

static void write_big(const char *path)
{
	struct synth *s = synth_open(path);
	uint64_t x = 88172645463325252ull;

	synth_process(s, 4242, "node1", "./memuse", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMORY, 0, 0);
	for (uint32_t d = 0; d < 3; d++)
		synth_device(s, d, "GPU", 9, 0, 132, 80ull << 30, 0x10 + d);
	for (size_t i = 0; i < NBIG; i++) {
		uint64_t r;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		r = x;
		synth_memory(s, (r & 3) ? GP_MEM_ALLOC : GP_MEM_FREE, T0 + (r >> 8) % 400,
			     0x10000 + ((r >> 20) % 64) * 0x1000, 1 + (r >> 32) % 100000,
			     (uint32_t)((r >> 50) % 3), DEV, (r >> 60) & 1 ? GP_MEM_F_ASYNC : 0);
		if (i % 97 == 96)
			synth_flush_chunk(s);
	}
	synth_end(s, T0 + 1000, 0);
	synth_close(s, NULL, NULL);
}

/* Everything memuse gives of a trace, as text: the devices, largest allocations, samples. */
static char *memuse_text(const char *path, size_t run, size_t *runs)
{
	char *argv[1] = { (char *)path };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	char *out = NULL;
	size_t n = 0, k;
	FILE *f = open_memstream(&out, &n);
	struct ga_memuse_ref *ord;

	ga_filter_init(&flt);
	if (!f || ga_analysis_init(&an, &o, &flt)) {
		if (f)
			fclose(f);
		free(out);
		return NULL;
	}
	an.mu.run = run;
	an.mu.samples = 1;
	if (ga_analysis_build(&an, argv, 1) == 0) {
		*runs = an.mu.ev_runs;
		for (uint32_t i = 0; i < an.mu.ndevs; i++) {
			const struct ga_memuse_dev *d = &an.mu.devs[i];
			const struct ga_memuse_sample *sm;

			fprintf(f, "dev %u proc %u: %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
				d->device, d->proc, (unsigned long long)d->allocs,
				(unsigned long long)d->frees, (unsigned long long)d->alloc_bytes,
				(unsigned long long)d->unmatched_frees, (unsigned long long)d->peak,
				(unsigned long long)d->peak_ns, (unsigned long long)d->final,
				(unsigned long long)d->live, (unsigned long long)d->events);
			for (size_t j = 0; j < d->ntop; j++)
				fprintf(f, " top %llx %llu %llu %llu %u %u %u %u\n",
					(unsigned long long)d->top[j].address,
					(unsigned long long)d->top[j].bytes,
					(unsigned long long)d->top[j].alloc_ns,
					(unsigned long long)d->top[j].free_ns, d->top[j].correlation,
					d->top[j].kind, d->top[j].flags, d->top[j].freed);
			while ((sm = ga_memuse_sample_next(&an.mu, i)))
				fprintf(f, " %llu:%llu", (unsigned long long)sm->t,
					(unsigned long long)sm->in_use);
			fputc('\n', f);
		}
		ord = ga_memuse_order_largest(&an.mu, &k);
		for (size_t j = 0; ord && j < k; j++)
			fprintf(f, "largest %u %u\n", ord[j].dev, ord[j].i);
		free(ord);
		if (an.mu.err[0])
			fprintf(f, "error %s\n", an.mu.err);
	} else {
		fputs("build failed\n", f);
	}
	fclose(f);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	return out;
}

static void test_spilled(void)
{
	char big[160], tmp[160], cmd[400];
	const char *runs_of[] = { "1", "3", "64" };
	size_t sizes[] = { 1, 3, 64 }, r0 = 9, r;
	char *mem, *ext;
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;

	snprintf(big, sizeof(big), "%s/big.gpuprof", dir);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	write_big(big);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "could not make %s\n", tmp);
	setenv("TMPDIR", tmp, 1);
	mem = memuse_text(big, 0, &r0);
	tap_begin("memory in use: a shuffled trace sorted in memory has every device's numbers");
	CHECKF(mem && r0 == 0 && strstr(mem, "dev 2 proc 0:") && strstr(mem, " top ") &&
	       !strstr(mem, "error") && !strstr(mem, "build failed"), "%zu runs: %s", r0,
	       mem ? mem : "");
	tap_end();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char name[128];

		snprintf(name, sizeof(name),
			 "memory in use: the events sorted in spilled runs of %s give the same as in memory",
			 runs_of[i]);
		tap_begin(name);
		r = 0;
		ext = memuse_text(big, sizes[i], &r);
		CHECKF(r >= NBIG / sizes[i] - 1, "%zu runs", r);
		CHECKF(mem && ext && !strcmp(mem, ext), "in memory:\n%s\nin runs:\n%s",
		       mem ? mem : "", ext ? ext : "");
		free(ext);
		tap_end();
	}
	tap_begin("memory in use: the sort leaves nothing in $TMPDIR");
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", tmp);
	CHECK(system(cmd) == 0);
	tap_end();
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	free(mem);
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
	check_model(ordered, "in time order", 0);
	check_model(shuffled, "shuffled over chunks", 0);
	check_model(shuffled, "shuffled over chunks", 2);
	test_spilled();
	test_views();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
