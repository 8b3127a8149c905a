/*
 * Unit tests of the Chrome export (analyzer/views/chrome.c) on synthetic
 * traces: more than 1024 processes that share one pid (every rank of a
 * containerized job is pid 1) each get a pid of their own, in bounded
 * time; and every track nests: NVTX domains that cross, ranges of one
 * domain that cross, API calls that cross a range, kernels that overlap on
 * a stream each go on a track or lane of their own (the first lane where
 * they fit, in the order they come), while what nests stays
 * on the thread's or stream's track (also checked by
 * test/golden/nest-checks.py where python3 runs); each kernel's event
 * carries its own record's args.  Test code, runs
 * offline only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

/* A one-kernel trace of pid on host. */
static void write_proc(const char *path, uint32_t pid, const char *host)
{
	struct synth *s = synth_open(path);

	synth_process(s, pid, host, "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_kernel(s, synth_string(s, "_Z1kv"), T0 + 100, T0 + 200, 0, 7, 0, 0);
	synth_end(s, T0 + 1000, 0);
	synth_close(s, NULL, NULL);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/*
 * The pids of the export's processes (process_name events) into pids[],
 * at most max; returns how many, or -1 when one is not a number.
 */
static long process_pids(const char *out, uint64_t *pids, size_t max)
{
	static const char key[] = "{\"name\":\"process_name\",\"ph\":\"M\",\"cat\":\"__metadata\","
				  "\"pid\":";
	const char *p = out;
	size_t n = 0;

	while ((p = strstr(p, key)) != NULL) {
		char *end;

		p += sizeof(key) - 1;
		if (n == max)
			return -1;
		pids[n++] = strtoull(p, &end, 10);
		if (end == p || *end != ',')
			return -1;
	}
	return (long)n;
}

/*
 * 1100 processes of pid 1 (the pid += 1 << 22 of before went round after
 * 1024 and never ended), 3 of pid 1 + (1 << 22) and one of pid 5 + 2^32 -
 * (1 << 22) among them: every process a pid of its own, all JSON numbers
 * below 2^32.
 */
static void test_shared_pids(void)
{
	enum { N = 1100, EXTRA = 4 };
	char **argv = calloc(N + EXTRA + 4, sizeof(*argv));
	uint64_t *pids = calloc(N + EXTRA + 1, sizeof(*pids));
	char *out = NULL, *err = NULL, host[32];
	long n;
	int argc = 0, rc, dup = 0, big = 0;

	tap_begin("chrome: more than 1024 processes of one pid each get a pid of their own");
	if (!argv || !pids) {
		CHECK(!"out of memory");
		tap_end();
		return;
	}
	argv[argc++] = "export";
	argv[argc++] = "-t";
	argv[argc++] = "chrome";
	for (int i = 0; i < N + EXTRA; i++) {
		uint32_t pid = i < N ? 1 : i < N + 3 ? 1 + (1u << 22) : 5u - (1u << 22);

		argv[argc] = malloc(128);
		if (!argv[argc])
			break;
		snprintf(argv[argc], 128, "%s/p%d.gpuprof", dir, i);
		snprintf(host, sizeof(host), "node%d", i);
		write_proc(argv[argc++], pid, host);
	}
	/* Before, the export never ended: fail the test instead of hanging it. */
	alarm(120);
	rc = synth_capture(dir, &out, &err, cmd_export, argc, argv);
	alarm(0);
	n = out ? process_pids(out, pids, N + EXTRA + 1) : -1;
	CHECKF(rc == 0 && n == N + EXTRA, "export exited %d, %ld processes: %.300s", rc, n,
	       err ? err : "");
	if (n > 0) {
		qsort(pids, (size_t)n, sizeof(*pids), cmp_u64);
		for (long i = 0; i < n; i++) {
			dup += i && pids[i] == pids[i - 1];
			big += pids[i] > UINT32_MAX;
		}
	}
	CHECKF(!dup && !big, "%d pids shared, %d not below 2^32", dup, big);
	/* The first of each pid keeps it. */
	CHECK(n > 0 && pids[0] == 1);
	free(out);
	free(err);
	for (int i = 3; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(pids);
	tap_end();
}

/*
 * Thread 100 (times from T0 + 1000, ns):
 *   default domain  step [0, 5000) > fwd [1000, 2000); bad_a [6000, 8000)
 *                   and bad_b [7000, 9000) cross (a damaged trace)
 *   domain NCCL     comm_init [500, 12000), crossing step
 *   API calls       cuLaunchKernel [1100, 1200) inside cudaLaunchKernel
 *                   [1050, 1300) (the driver's record first), in fwd;
 *                   cudaStreamSynchronize [4500, 5500) crossing step's end
 * Stream 7: k1 [20000, 30000) and the replayed k2 [25000, 26000) overlap;
 * k3 [31000, 32000) after both.
 */
static void write_nesting(const char *path)
{
	struct synth *s = synth_open(path);
	uint64_t t = T0 + 1000;
	uint32_t step, fwd, ba, bb, comm, nccl, rt, drv, sync, k1, k2, k3;

	synth_process(s, 4242, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	step = synth_string(s, "step");
	fwd = synth_string(s, "fwd");
	ba = synth_string(s, "bad_a");
	bb = synth_string(s, "bad_b");
	comm = synth_string(s, "comm_init");
	nccl = synth_string(s, "NCCL");
	rt = synth_string(s, "cudaLaunchKernel");
	drv = synth_string(s, "cuLaunchKernel");
	sync = synth_string(s, "cudaStreamSynchronize");
	k1 = synth_string(s, "_Z2k1v");
	k2 = synth_string(s, "_Z2k2v");
	k3 = synth_string(s, "_Z2k3v");
	synth_api_corr(s, drv, t + 1100, t + 1200, 100, 1, GP_API_DRIVER);
	synth_api_corr(s, rt, t + 1050, t + 1300, 100, 1, GP_API_RUNTIME);
	synth_api_corr(s, sync, t + 4500, t + 5500, 100, 0, GP_API_RUNTIME);
	synth_kernel_at_corr(s, k1, t + 20000, t + 30000, 0, 7, 1);
	/* A kernel profiled by kernel replay, placed at its launch call. */
	synth_kernel_replayed(s, k2, t + 25000, t + 26000, 7, 2);
	synth_kernel_at_corr(s, k3, t + 31000, t + 32000, 0, 7, 3);
	synth_nvtx_range(s, fwd, 0, t + 1000, t + 2000, 100, 100, 2, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, step, 0, t, t + 5000, 100, 100, 1, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, ba, 0, t + 6000, t + 8000, 100, 100, 3, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, bb, 0, t + 7000, t + 9000, 100, 100, 4, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, comm, nccl, t + 500, t + 12000, 100, 100, 5, GP_NVTX_PUSHPOP);
	synth_end(s, t + 100000, 0);
	synth_close(s, NULL, NULL);
}

/* The tid of the first event whose line holds "name":"NAME" (events are one a line); -1 none. */
static long tid_of(const char *out, const char *name)
{
	char key[96];
	const char *p, *eol, *t;

	snprintf(key, sizeof(key), "{\"name\":\"%s\",", name);
	p = strstr(out, key);
	if (!p)
		return -1;
	eol = strchr(p, '\n');
	t = strstr(p, "\"tid\":");
	if (!t || (eol && t > eol))
		return -1;
	return strtol(t + 6, NULL, 10);
}

/* export --format chrome of path, its output and errors in *out and *err: the exit status. */
static int chrome_of(const char *path, char **out, char **err)
{
	return synth_run(dir, out, err, cmd_export, "export", "--format", "chrome", "--no-symbolize",
			 path, (char *)NULL);
}

static void test_nesting(void)
{
	char path[128], json[160], cmd[400], *out = NULL, *err = NULL;
	long step, fwd, ba, bb, comm, rt, drv, sync, k1, k2, k3;
	int rc;

	snprintf(path, sizeof(path), "%s/nest.gpuprof", dir);
	snprintf(json, sizeof(json), "%s/nest.json", dir);
	write_nesting(path);
	tap_begin("chrome: every track nests; what would cross goes on a track or lane of its own");
	rc = chrome_of(path, &out, &err);
	CHECKF(rc == 0 && out, "export exited %d: %.300s", rc, err ? err : "");
	if (!out) {
		tap_end();
		return;
	}
	step = tid_of(out, "step");
	fwd = tid_of(out, "fwd");
	ba = tid_of(out, "bad_a");
	bb = tid_of(out, "bad_b");
	comm = tid_of(out, "comm_init");
	rt = tid_of(out, "cudaLaunchKernel");
	drv = tid_of(out, "cuLaunchKernel");
	sync = tid_of(out, "cudaStreamSynchronize");
	k1 = tid_of(out, "k1");
	k2 = tid_of(out, "k2");
	k3 = tid_of(out, "k3");
	/* What nests stays on the thread's own track. */
	CHECKF(step == 100 && fwd == 100 && rt == 100 && drv == 100 && ba == 100,
	       "step %ld fwd %ld launch %ld/%ld bad_a %ld", step, fwd, rt, drv, ba);
	/* Another domain, a crossing range and a crossing call: each elsewhere. */
	CHECKF(comm > 0 && comm != 100 && bb > 0 && bb != 100 && bb != comm && sync > 0 &&
	       sync != 100 && sync != comm && sync != bb,
	       "comm_init %ld bad_b %ld sync %ld", comm, bb, sync);
	CHECKF(strstr(out, "\"name\":\"NVTX NCCL [tid 100]\"") &&
	       strstr(out, "\"name\":\"tid 100 (overlapping)\""), "track names: %.2000s", out);
	/* Overlapping kernels: a lane each; the next kernel back on the stream's track. */
	CHECKF(k1 > 0 && k2 > 0 && k1 != k2 && k3 == k1, "k1 %ld k2 %ld k3 %ld", k1, k2, k3);
	CHECK(strstr(out, "\"name\":\"cuda:0 stream 7 (overlapping)\""));
	/* The golden checker agrees, where python3 runs. */
	if (system("python3 -c '' 2>/dev/null") == 0) {
		FILE *f = fopen(json, "w");

		CHECK(f && fputs(out, f) >= 0 && fclose(f) == 0);
		snprintf(cmd, sizeof(cmd), "python3 test/golden/nest-checks.py '%s' synthetic "
			 ">/dev/null", json);
		CHECKF(system(cmd) == 0, "%s failed", cmd);
	}
	free(out);
	free(err);
	tap_end();
}

/*
 * A damaged trace: on one thread, API calls, ranges of the default domain
 * and of another, at random times and in random order, and on one stream
 * kernels at random times: the export's tracks must still nest.
 */
static void test_nesting_random(void)
{
	char path[128], json[160], cmd[400], *out = NULL, *err = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/random.gpuprof", dir);
	snprintf(json, sizeof(json), "%s/random.json", dir);
	synth_random_app(path, 4243, T0, 1, 1000000, 0);
	tap_begin("chrome: the tracks of a trace of random times nest");
	rc = chrome_of(path, &out, &err);
	CHECKF(rc == 0 && out, "export exited %d: %.300s", rc, err ? err : "");
	if (out && system("python3 -c '' 2>/dev/null") == 0) {
		FILE *f = fopen(json, "w");

		CHECK(f && fputs(out, f) >= 0 && fclose(f) == 0);
		snprintf(cmd, sizeof(cmd), "python3 test/golden/nest-checks.py '%s' random >/dev/null",
			 json);
		CHECKF(system(cmd) == 0, "%s failed", cmd);
	}
	free(out);
	free(err);
	tap_end();
}

/*
 * Kernels whose launch configurations, devices, contexts and streams
 * differ in one value each (so that alike ones meet in the same place of
 * the export's tables of digits made before: chrome.c put_kcfg(),
 * put_devstream(), put_pidtid()), in an order that revisits each: every
 * event's args are its own record's.
 */
struct kargs {
	uint32_t dev, ctx, stream, cfg[9], replayed;
};

static void kargs_of(uint32_t i, struct kargs *k)
{
	static const uint32_t base[9] = { 1, 1, 1, 128, 1, 1, 32, 0, 0 };
	uint32_t v = (i * 37) % 600, g = v % 10, x = v / 10;

	memcpy(k->cfg, base, sizeof(base));
	/* Steps of 64: alike in the bits that pick a table's place. */
	if (g < 9)
		k->cfg[g] += (x + 1) * 64;
	k->replayed = g == 9 && x % 2;
	/* Most on one stream, so that configurations alike but for one value meet there. */
	k->dev = v % 7 == 1 ? 1 + x % 2 : 0;
	k->ctx = v % 7 == 2 ? 1 + x * 64 : 1;
	k->stream = v % 7 == 3 ? 7 + x * 64 : 7;
}

static void test_args_each_own(void)
{
	enum { N = 600 };
	char path[128], key[96], want[400], *out = NULL, *err = NULL;
	struct synth *s;
	struct kargs a;
	uint32_t name;
	int rc, wrong = 0, found = 0;

	snprintf(path, sizeof(path), "%s/args.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4321, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	name = synth_string(s, "_Z1kv");
	for (uint32_t i = 0; i < N; i++) {
		struct gp_rec_kernel k;

		kargs_of(i, &a);
		synth_kernel_init(&k, name, T0 + 1000 * i, T0 + 1000 * i + 500, a.dev, a.stream,
				  i + 1);
		k.context = a.ctx;
		memcpy(k.grid, a.cfg, sizeof(k.grid));
		memcpy(k.block, a.cfg + 3, sizeof(k.block));
		k.registers = (uint16_t)a.cfg[6];
		k.static_smem = a.cfg[7];
		k.dynamic_smem = a.cfg[8];
		k.flags = a.replayed ? GP_ACT_REPLAYED : 0;
		synth_rec(s, &k, sizeof(k));
	}
	synth_end(s, T0 + 1000 * N + 1000, 0);
	synth_close(s, NULL, NULL);
	tap_begin("chrome: each kernel's event carries its own device, stream and launch configuration");
	rc = chrome_of(path, &out, &err);
	CHECKF(rc == 0 && out, "export exited %d: %.300s", rc, err ? err : "");
	for (uint32_t i = 0; out && i < N; i++) {
		const char *p;

		snprintf(key, sizeof(key), "\"args\":{\"correlation\":%u,", i + 1);
		if (!(p = strstr(out, key)))
			continue;
		found++;
		kargs_of(i, &a);
		snprintf(want, sizeof(want),
			 "%s\"device\":%u,\"context\":%u,\"stream\":%u,\"name\":\"k()\","
			 "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"registers\":%u,"
			 "\"static_smem\":%u,\"dynamic_smem\":%u%s}}",
			 key, a.dev, a.ctx, a.stream, a.cfg[0], a.cfg[1], a.cfg[2], a.cfg[3], a.cfg[4],
			 a.cfg[5], a.cfg[6], a.cfg[7], a.cfg[8], a.replayed ? ",\"replayed\":1" : "");
		if (strncmp(p, want, strlen(want)) && !wrong++)
			CHECKF(0, "kernel %u: %.300s, want %s", i + 1, p, want);
	}
	CHECKF(found == N && !wrong, "%d of %d kernels found, %d with args not their own", found,
	       N, wrong);
	free(out);
	free(err);
	tap_end();
}

/*
 * Kernels of one stream that overlap go on the first lane of its track
 * where they fit, in the order they come: back on the first lane, on the
 * second, on a third when the second holds one they overlap, and one
 * earlier than everything kept on the lane where it fits between.
 */
static void test_stream_lanes(void)
{
	static const struct {
		const char *name;
		uint64_t s, e;
		int lane;
	} ks[] = {
		{ "kA", 0, 10000, 0 },
		{ "kB", 5000, 15000, 1 },
		{ "kC", 12000, 20000, 0 },
		{ "kD", 14000, 30000, 2 },
		{ "kE", 16000, 17000, 1 },
		{ "kF", 25000, 26000, 0 },
		{ "kG", 26000, 27000, 0 },
		{ "kH", 28000, 29000, 0 },
		{ "kI", 27500, 31000, 1 },
		{ "kJ", 29500, 30500, 0 },
		{ "kK", 10, 20, 1 },
	};
	enum { NK = sizeof(ks) / sizeof(ks[0]) };
	char path[128], *out = NULL, *err = NULL;
	long tid[NK], lane[3] = { -1, -1, -1 };
	struct synth *s;
	int rc, wrong = 0;

	snprintf(path, sizeof(path), "%s/lanes.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4321, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	for (int i = 0; i < NK; i++)
		synth_kernel_at_corr(s, synth_string(s, ks[i].name), T0 + ks[i].s, T0 + ks[i].e, 0, 7,
				     (uint32_t)i + 1);
	synth_end(s, T0 + 100000, 0);
	synth_close(s, NULL, NULL);
	tap_begin("chrome: a stream's overlapping kernels each on the first lane where they fit");
	rc = chrome_of(path, &out, &err);
	CHECKF(rc == 0 && out, "export exited %d: %.300s", rc, err ? err : "");
	for (int i = 0; out && i < NK; i++) {
		tid[i] = tid_of(out, ks[i].name);
		if (lane[ks[i].lane] < 0)
			lane[ks[i].lane] = tid[i];
		if ((tid[i] < 0 || tid[i] != lane[ks[i].lane]) && !wrong++)
			CHECKF(0, "%s on tid %ld, lane %d's is %ld", ks[i].name, tid[i], ks[i].lane,
			       lane[ks[i].lane]);
	}
	CHECKF(lane[0] != lane[1] && lane[1] != lane[2] && lane[0] != lane[2],
	       "lanes' tids %ld %ld %ld", lane[0], lane[1], lane[2]);
	free(out);
	free(err);
	tap_end();
}

/*
 * API calls' events and the flows from them to their kernels, written
 * straight into the writer's buffer, are the events the writer's calls
 * make: names escaped, times exact to the ns, negative return values.
 * n calls: with 400, the writer's buffer is flushed between calls and
 * their flows, and ids and times grow by a digit; late: every kernel
 * after all the calls (a flow's call time no longer kept where its call's
 * event wrote it, made again).
 */
static void test_api_events(uint32_t N, int late)
{
	static const int32_t rets[] = { 0, -1, 2147483647, -2147483647 - 1, 700 };
	char path[128], want[512], group[128], *out = NULL, *err = NULL;
	const char *names[2] = { "cudaLaunchKernel", "we\"ird\\name" };
	const char *quoted[2] = { "\"cudaLaunchKernel\"", "\"we\\\"ird\\\\name\"" };
	struct synth *s;
	uint32_t k, sid[2];
	int rc, wrong = 0;

	snprintf(path, sizeof(path), "%s/api.gpuprof", dir);
	s = synth_open(path);
	synth_process(s, 4321, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 0);
	k = synth_string(s, "_Z1kv");
	sid[0] = synth_string(s, names[0]);
	sid[1] = synth_string(s, names[1]);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t t = T0 + 1234567 * (uint64_t)i + 7;

		synth_api_corr_ret(s, sid[i % 2], t, t + 999 + i, 77 + i % 3, 100 + i, GP_API_RUNTIME,
				   rets[i % 5]);
		if (!late)
			synth_kernel_at_corr(s, k, t + 5000, t + 6001, 0, 7, 100 + i);
	}
	for (uint32_t i = 0; late && i < N; i++) {
		uint64_t t = T0 + 1234567 * (uint64_t)i + 7;

		synth_kernel_at_corr(s, k, t + 5000, t + 6001, 0, 7, 100 + i);
	}
	synth_end(s, T0 + 1234567ull * N + 10000, 0);
	synth_close(s, NULL, NULL);
	snprintf(group, sizeof(group),
		 "chrome: API calls' events and their flows written directly are the writer's (%u calls%s)",
		 N, late ? ", kernels after all" : "");
	tap_begin(group);
	rc = chrome_of(path, &out, &err);
	CHECKF(rc == 0 && out, "export exited %d: %.300s", rc, err ? err : "");
	for (uint32_t i = 0; out && i < N; i++) {
		uint64_t t = 1234567 * (uint64_t)i + 7, d = 999 + i;

		snprintf(want, sizeof(want),
			 "{\"name\":%s,\"cat\":\"api\",\"ph\":\"X\",\"pid\":4321,\"tid\":%u,"
			 "\"ts\":%llu.%03u,\"dur\":%llu.%03u,\"args\":{\"correlation\":%u,"
			 "\"return\":%d}}",
			 quoted[i % 2], 77 + i % 3, (unsigned long long)(t / 1000),
			 (unsigned)(t % 1000), (unsigned long long)(d / 1000), (unsigned)(d % 1000),
			 100 + i, rets[i % 5]);
		if (!strstr(out, want) && !wrong++)
			CHECKF(0, "API call %u: no %s", i, want);
		snprintf(want, sizeof(want),
			 "{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":%u,"
			 "\"pid\":4321,\"tid\":%u,\"ts\":%llu.%03u}",
			 i + 1, 77 + i % 3, (unsigned long long)(t / 1000), (unsigned)(t % 1000));
		if (!strstr(out, want) && !wrong++)
			CHECKF(0, "flow %u: no %s", i, want);
		t += 5000;
		snprintf(want, sizeof(want),
			 "{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\","
			 "\"id\":%u,\"pid\":4321,\"tid\":",
			 i + 1);
		{
			const char *p = out ? strstr(out, want) : NULL;
			char tail[64];

			snprintf(tail, sizeof(tail), ",\"ts\":%llu.%03u}", (unsigned long long)(t / 1000),
				 (unsigned)(t % 1000));
			if ((!p || !strstr(p, tail) || strstr(p, tail) > strchr(p, '\n')) && !wrong++)
				CHECKF(0, "flow %u: no %s...%s", i, want, tail);
		}
	}
	CHECKF(!wrong, "%d events not as the writer's calls make them", wrong);
	free(out);
	free(err);
	tap_end();
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-chrome-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_shared_pids();
	test_nesting();
	test_args_each_own();
	test_stream_lanes();
	test_api_events(40, 0);
	test_api_events(400, 0);
	test_api_events(400, 1);
	/* Four traces: the generator goes on from one to the next. */
	for (int i = 0; i < 4; i++)
		test_nesting_random();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
