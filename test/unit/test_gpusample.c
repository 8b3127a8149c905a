/*
 * Unit tests of the GPU sampler's end (cupti/gpusample.c) against a
 * stand-in for CUDA and CUPTI's PM sampling (test/shims/fakepm.c, built
 * beside this test as shims/libfakepm.so), which, like the driver,
 * registers a teardown with atexit in cuInit, after which any PM call
 * aborts the process:
 *
 *  - a stop samples to the end (Stop, a last decode), gives the counters
 *    back (Disable) and returns promptly;
 *  - a stop request during the setup of several devices (each SetConfig
 *    300 ms) ends it after the device being set up;
 *  - a sampler stuck inside DecodeData is given up after the wait: the
 *    stop returns in bounded time, and once the call returns the thread
 *    makes no further call, and the image CUPTI writes into is still
 *    there (ASan under make SAN=address);
 *  - at exit, with the recorder's handler registered before CUDA's (as
 *    inside cuInit): the sampler's own handler stops it before CUDA's
 *    teardown, the process exits with status 0, also with a teardown
 *    registered again at the first PM Start (as the CUDA runtime may
 *    with the program's first context); stuck in DecodeData, the
 *    process still exits with status 0, within the bounded wait, and says
 *    so in one line.
 *
 * Telemetry, against a stand-in NVML (test/shims/fakenvml.c): the
 * default queries only (no utilization, no GPM: both opt-in), NVML never
 * initialized for --gpu-metrics alone, GPM's samples allocated once and
 * read with gpm, a getter slower than 2 ms dropped after its second slow
 * call, nvmlShutdown and the GPM samples' frees never called at the end.
 * And GPUPROF_GPU_TELEMETRY's grammar (a period, util and gpm).
 *
 * Windows (gpuprof start/stop, --sample): two windows, each ended as the
 * recorder ends a window's own file (window CLOSE, tracing off, flush
 * with GP_FLUSH_FILE, drain), both get PM and NVML samples, none begins
 * outside its window, and the sampler pauses in between (no PM session
 * running, no NVML read) and resumes at the second.
 *
 * Each case runs in a forked child (the sampler's state is process-wide).
 * Test code, runs offline only.
 */
#include "tap.h"

#include "recorder.h"
#include "ring.h"

#include "../../cupti/cupti_api.h"
#include "../../preload/config.h"
#include "../../cupti/gpusample.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../shims/fakenvml.h"
#include "../shims/fakepm.h"

static char lib[4096], nvml_lib[4096];
static struct fake_pm *fp;
static struct fake_nvml *fnv;
static int runtime_teardown;       /* the stand-in's, set before the sampler starts */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Waits up to ms for *x >= min. */
static int wait_for(atomic_int *x, int min, int ms)
{
	double end = now_s() + ms / 1000.0;

	while (atomic_load(x) < min)
		if (now_s() > end)
			return 0;
		else
			nap_ms(1);
	return 1;
}

/* The recorder's end of the trace, registered before CUDA's teardown as inside cuInit. */
static void recorder_exit(void)
{
	gp_gpusample_source.flush(1);
}

/*
 * Loads the stand-ins and starts the sampler: --gpu-metrics at 100 us (a
 * decode every 25 ms) unless metrics is 0, telemetry every tel_ms with
 * the opt-in queries extra.
 */
static int start(int ndev, int setconfig_ms, int strict, int recorder_first, int metrics,
		 uint32_t tel_ms, uint32_t extra)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	int (*cu_init)(unsigned);
	char why[256];

	if (!h || !(fp = dlsym(h, "fake_pm")) || !(*(void **)&cu_init = dlsym(h, "cuInit")))
		return -1;
	fp->ndev = ndev;
	fp->setconfig_ms = setconfig_ms;
	fp->strict_teardown = strict;
	fp->runtime_teardown = runtime_teardown;
	gp_cu.handle = h;
	snprintf(gp_rec.cfg.gpu_metrics, sizeof(gp_rec.cfg.gpu_metrics), "%s",
		 metrics ? "default" : "");
	gp_rec.cfg.gpu_metrics_us = 100;
	gp_rec.cfg.gpu_telemetry_ms = tel_ms;
	gp_rec.cfg.gpu_telemetry_extra = extra;
	if (recorder_first)
		atexit(recorder_exit);
	cu_init(0);
	if (gp_gpusample_source.enable(why, sizeof(why)) < 0 ||
	    gp_gpusample_source.set_tracing(1, why, sizeof(why)) < 0)
		return -1;
	return 0;
}

static int setup(int ndev, int setconfig_ms, int strict, int recorder_first)
{
	return start(ndev, setconfig_ms, strict, recorder_first, 1, 0, 0);
}

/* The stand-in NVML, loaded first so that telemetry.c's dlopen by soname finds it. */
static int load_nvml(int temp_sleep_us)
{
	void *h = dlopen(nvml_lib, RTLD_NOW | RTLD_GLOBAL);

	if (!h || !(fnv = dlsym(h, "fake_nvml")))
		return -1;
	fnv->temp_sleep_us = temp_sleep_us;
	return 0;
}

static int telemetry_default(void)
{
	alarm(30);
	tap_begin("gpusample: telemetry reads the default queries; utilization and GPM are opt-in");
	CHECK(load_nvml(0) == 0);
	CHECK(start(1, 0, 0, 0, 0, 10, 0) == 0);
	CHECK(wait_for(&fnv->mem, 4, 5000));
	nap_ms(250);
	gp_gpusample_stop(5000);
	CHECKF(fnv->init == 1 && fnv->handle == 1, "%d inits, %d handles", fnv->init, fnv->handle);
	CHECKF(fnv->fields >= 4 && fnv->clock >= 8 && fnv->temp >= 4 && fnv->reasons >= 4,
	       "%d power, %d clock, %d temperature, %d reasons reads", fnv->fields, fnv->clock,
	       fnv->temp, fnv->reasons);
	CHECKF(fnv->util == 0, "%d utilization reads", fnv->util);
	CHECKF(fnv->gpm_support + fnv->gpm_alloc + fnv->gpm_get == 0, "GPM: %d, %d, %d calls",
	       fnv->gpm_support, fnv->gpm_alloc, fnv->gpm_get);
	CHECKF(fnv->shutdown == 0, "nvmlShutdown called %d times at the end", fnv->shutdown);
	CHECKF(fp->enable == 0, "PM sampling enabled for telemetry alone");
	tap_end();
	return tap_exit();
}

static int telemetry_gpm_util(void)
{
	alarm(30);
	tap_begin("gpusample: util and gpm add their queries; GPM samples allocated once, kept");
	CHECK(load_nvml(0) == 0);
	CHECK(start(1, 0, 0, 0, 0, 10, GP_GPU_TELEMETRY_UTIL | GP_GPU_TELEMETRY_GPM) == 0);
	/* GPM reads at most every 200 ms. */
	CHECK(wait_for(&fnv->gpm_metrics, 2, 5000));
	gp_gpusample_stop(5000);
	CHECKF(fnv->util >= 4, "%d utilization reads", fnv->util);
	CHECKF(fnv->gpm_support == 1 && fnv->gpm_alloc == 2 && fnv->gpm_get >= 3,
	       "GPM: %d support, %d allocs, %d gets", fnv->gpm_support, fnv->gpm_alloc, fnv->gpm_get);
	CHECKF(fnv->gpm_free == 0 && fnv->shutdown == 0, "%d GPM frees, %d shutdowns at the end",
	       fnv->gpm_free, fnv->shutdown);
	tap_end();
	return tap_exit();
}

static int telemetry_slow(void)
{
	alarm(30);
	tap_begin("gpusample: a getter slower than 2 ms twice is not called again");
	CHECK(load_nvml(3000) == 0);
	CHECK(start(1, 0, 0, 0, 0, 10, 0) == 0);
	CHECK(wait_for(&fnv->mem, 6, 5000));
	gp_gpusample_stop(5000);
	CHECKF(fnv->temp == 2, "%d temperature reads (3 ms each)", fnv->temp);
	CHECKF(fnv->clock >= 12, "%d clock reads", fnv->clock);
	tap_end();
	return tap_exit();
}

static int metrics_without_nvml(void)
{
	alarm(30);
	tap_begin("gpusample: --gpu-metrics alone never initializes NVML");
	CHECK(load_nvml(0) == 0);
	CHECK(setup(1, 0, 0, 0) == 0);
	CHECK(wait_for(&fp->decode, 3, 5000));
	gp_gpusample_stop(5000);
	CHECKF(fnv->init == 0 && fnv->handle == 0, "%d nvmlInit, %d handles", fnv->init, fnv->handle);
	tap_end();
	return tap_exit();
}

static int prompt_stop(void)
{
	double t0, dt;
	int dec, calls;

	alarm(30);
	tap_begin("gpusample: a stop decodes what is left, gives the counters back, promptly");
	CHECK(setup(1, 0, 0, 0) == 0);
	CHECK(wait_for(&fp->decode, 2, 5000));
	CHECK(wait_for(&fp->evaluate, 1, 5000));
	dec = atomic_load(&fp->decode);
	t0 = now_s();
	gp_gpusample_source.flush(1);
	dt = now_s() - t0;
	CHECKF(dt < 0.5, "the stop took %.3f s", dt);
	CHECKF(fp->start == 1 && fp->stop == 1, "%d starts, %d stops", fp->start, fp->stop);
	CHECKF(fp->enable == 1 && fp->disable == 1, "%d enables, %d disables", fp->enable,
	       fp->disable);
	CHECKF(fp->decode > dec, "no decode after the stop (%d, %d before)", fp->decode, dec);
	calls = atomic_load(&fp->calls);
	nap_ms(100);
	CHECKF(atomic_load(&fp->calls) == calls, "%d calls after the thread ended",
	       atomic_load(&fp->calls) - calls);
	t0 = now_s();
	gp_gpusample_stop(5000);
	CHECKF(now_s() - t0 < 0.05, "a second stop took %.3f s", now_s() - t0);
	tap_end();
	return tap_exit();
}

static int stop_during_setup(void)
{
	double t0, dt;

	alarm(30);
	tap_begin("gpusample: a stop request during the setup of 4 devices ends it after one");
	CHECK(setup(4, 300, 0, 0) == 0);
	CHECK(wait_for(&fp->setconfig, 1, 5000));
	t0 = now_s();
	gp_gpusample_stop(5000);
	dt = now_s() - t0;
	CHECKF(dt < 0.8, "the stop took %.3f s (4 setups take 1.2 s)", dt);
	CHECKF(fp->setconfig == 1, "%d devices configured after the stop request", fp->setconfig);
	CHECKF(fp->enable == fp->disable, "%d enables, %d disables", fp->enable, fp->disable);
	tap_end();
	return tap_exit();
}

static int stuck_given_up(void)
{
	double t0, dt;
	int calls;

	alarm(30);
	tap_begin("gpusample: stuck in DecodeData, the sampler is given up and calls nothing more");
	CHECK(setup(1, 0, 0, 0) == 0);
	CHECK(wait_for(&fp->decode, 1, 5000));
	atomic_store(&fp->block_decode, 1);
	CHECK(wait_for(&fp->in_decode, 1, 5000));
	t0 = now_s();
	gp_gpusample_stop(300);
	dt = now_s() - t0;
	/* 300 ms, then at most 250 ms for the call in progress. */
	CHECKF(dt > 0.25 && dt < 0.9, "the stop took %.3f s", dt);
	calls = atomic_load(&fp->calls);
	/* The call returns and writes into the image: it must not have been freed. */
	atomic_store(&fp->block_decode, 0);
	CHECK(wait_for(&fp->evaluate, 0, 10));
	nap_ms(300);
	CHECKF(atomic_load(&fp->in_decode) == 0, "DecodeData did not return");
	CHECKF(atomic_load(&fp->calls) == calls, "%d calls after the sampler was given up",
	       atomic_load(&fp->calls) - calls);
	CHECKF(fp->stop == 0 && fp->disable == 0, "%d stops, %d disables after it was given up",
	       fp->stop, fp->disable);
	t0 = now_s();
	gp_gpusample_source.flush(1);
	CHECKF(now_s() - t0 < 0.05, "flush(final) waited %.3f s again", now_s() - t0);
	tap_end();
	return tap_exit();
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Drains the sampler into the ring as the recorder does and counts the
 * samples by source: pm, nvml beginning inside [t0, t1), outside those
 * that do not.
 */
static void drain_count(uint64_t t0, uint64_t t1, int *pm, int *nvml, int *outside)
{
	static uint32_t src[1024];
	struct gp_chunk *c;

	gp_ring_lock(&gp_rec.ring);
	gp_gpusample_source.drain(0, 0);
	gp_ring_seal(&gp_rec.ring, 0);
	gp_ring_unlock(&gp_rec.ring);
	*pm = *nvml = *outside = 0;
	while ((c = gp_ring_pop(&gp_rec.ring, 0))) {
		for (uint32_t off = 0; off + sizeof(struct gp_rec) <= c->used;) {
			const struct gp_rec *h = (const void *)(c->buf + off);

			if (h->size < sizeof(*h))
				break;
			if (h->type == GP_REC_GPU_SERIES) {
				const struct gp_rec_gpu_series *r = (const void *)h;

				if (r->id < 1024)
					src[r->id] = r->source;
			} else if (h->type == GP_REC_GPU_SAMPLE) {
				const struct gp_rec_gpu_sample *r = (const void *)h;

				if (r->start < t0 || r->start >= t1)
					(*outside)++;
				else if (r->series < 1024 && src[r->series] == GP_GPU_SRC_PM)
					(*pm)++;
				else if (r->series < 1024 && src[r->series] == GP_GPU_SRC_NVML)
					(*nvml)++;
			}
			off += h->size;
		}
		gp_ring_release(&gp_rec.ring, c);
	}
}

/* One window as the recorder opens and closes it; samples counted as drain_count does. */
static void one_window(int ms, uint64_t *t0, uint64_t *t1, int *pm, int *nvml, int *outside)
{
	char why[256];

	gp_gpusample_source.window(GP_WINDOW_OPENING, 0);
	gp_gpusample_source.set_tracing(1, why, sizeof(why));
	*t0 = real_ns();
	gp_gpusample_source.window(GP_WINDOW_OPEN, *t0);
	nap_ms(ms);
	gp_gpusample_source.window(GP_WINDOW_CLOSING, 0);
	*t1 = real_ns();
	gp_gpusample_source.window(GP_WINDOW_CLOSE, *t1);
	gp_gpusample_source.set_tracing(0, why, sizeof(why));
	/* The window's file ends: everything handed over, the grace period, the last drain. */
	gp_gpusample_source.flush(GP_FLUSH_FILE);
	nap_ms(100);
	drain_count(*t0, *t1, pm, nvml, outside);
}

static int two_windows(void)
{
	uint64_t t0, t1, t2, t3;
	int pm1, nvml1, out1, pm2, nvml2, out2, pm, nvml, out, mem, starts;
	char why[256];

	alarm(30);
	tap_begin("gpusample: windows: both get PM and NVML samples, none outside; paused between");
	memset(&gp_rec.ring, 0, sizeof(gp_rec.ring));
	CHECK(gp_ring_init(&gp_rec.ring, 1u << 20, 8, 100) == 0);
	gp_intern_init(&gp_rec.strings);
	CHECK(load_nvml(0) == 0);
	/* Dormant until the first window, as the recorder's sources are. */
	CHECK(start(1, 0, 0, 0, 1, 10, 0) == 0);
	gp_gpusample_source.set_tracing(0, why, sizeof(why));
	CHECK(wait_for(&fp->enable, 1, 5000));
	nap_ms(150);
	drain_count(0, 0, &pm, &nvml, &out);
	one_window(400, &t0, &t1, &pm1, &nvml1, &out1);
	starts = atomic_load(&fp->start);
	CHECKF(starts >= 1 && fp->stop == starts, "window 1: %d starts, %d stops", starts, fp->stop);
	/* Between windows: no session running, no read; the thread waits for the next. */
	mem = fnv->mem;
	nap_ms(300);
	CHECKF(fnv->mem == mem, "%d NVML reads between windows", fnv->mem - mem);
	CHECKF(fp->start == starts, "PM sampling started between windows");
	drain_count(t1, UINT64_MAX, &pm, &nvml, &out);
	CHECKF(pm + nvml == 0, "%d PM and %d NVML samples between windows", pm, nvml);
	one_window(400, &t2, &t3, &pm2, &nvml2, &out2);
	CHECKF(pm1 > 0 && nvml1 > 0, "window 1: %d PM and %d NVML samples", pm1, nvml1);
	CHECKF(pm2 > 0 && nvml2 > 0, "window 2: %d PM and %d NVML samples", pm2, nvml2);
	CHECKF(out1 == 0 && out2 == 0, "samples outside their window: %d, %d", out1, out2);
	CHECKF(fp->start == starts + 1 && fp->stop == fp->start, "%d starts, %d stops", fp->start,
	       fp->stop);
	CHECKF(fp->disable == 0, "the counters were given back (%d disables) before the end",
	       fp->disable);
	/* The end of the trace ends the sampler. */
	gp_gpusample_source.flush(GP_FLUSH_END);
	CHECKF(fp->disable == 1, "%d disables at the end", fp->disable);
	tap_end();
	return tap_exit();
}

static int exit_normal(void)
{
	if (setup(1, 0, 1, 1) < 0 || !wait_for(&fp->decode, 2, 5000))
		return 2;
	exit(0);
}

/* A teardown registered again at the first Start, after the sampler's first handler. */
static int exit_runtime(void)
{
	runtime_teardown = 1;
	if (setup(1, 0, 1, 1) < 0 || !wait_for(&fp->decode, 2, 5000))
		return 2;
	exit(0);
}

static int exit_stuck(void)
{
	if (setup(1, 0, 0, 1) < 0 || !wait_for(&fp->decode, 1, 5000))
		return 2;
	atomic_store(&fp->block_decode, 1);
	if (!wait_for(&fp->in_decode, 1, 5000))
		return 3;
	exit(0);
}

/* Runs fn in a child, its stderr into err; the wait status, -1 past 20 s. */
static int run_child(int (*fn)(void), char *err, size_t errsz, double *secs)
{
	char path[] = "/tmp/gp-test-gpusample-XXXXXX";
	int fd = mkstemp(path), st = 0;
	double t0 = now_s();
	pid_t pid;
	ssize_t n;

	if (fd < 0)
		return -1;
	unlink(path);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		alarm(20);
		_exit(fn());
	}
	while (waitpid(pid, &st, 0) < 0)
		;
	*secs = now_s() - t0;
	n = pread(fd, err, errsz - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(fd);
	return st;
}

static void in_child(int (*fn)(void))
{
	pid_t pid;
	int st = 0;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn());
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (WIFSIGNALED(st))
			printf("not ok - gpusample: a case died of signal %d\n", WTERMSIG(st));
		tap_st.groups_failed++;
	}
}

static void telemetry_grammar(void)
{
	static const struct {
		const char *s;
		int rc;
		uint32_t ms, extra;
	} cases[] = {
		{ "100", 0, 100, 0 },
		{ "50,gpm", 0, 50, GP_GPU_TELEMETRY_GPM },
		{ "gpm", 0, GP_GPU_TELEMETRY_MS_DEFAULT, GP_GPU_TELEMETRY_GPM },
		{ "util,20,gpm", 0, 20, GP_GPU_TELEMETRY_UTIL | GP_GPU_TELEMETRY_GPM },
		{ "5", 0, GP_GPU_TELEMETRY_MS_MIN, 0 },
		{ "0", 0, 0, 0 },
		{ "0,gpm", 0, 0, 0 },
		{ "60000", 0, 60000, 0 },
		{ "60001", -EINVAL, 7, 7 },
		{ "50,60", -EINVAL, 7, 7 },
		{ "50,", -EINVAL, 7, 7 },
		{ ",50", -EINVAL, 7, 7 },
		{ "50,power", -EINVAL, 7, 7 },
		{ "-5", -EINVAL, 7, 7 },
		{ "123456", -EINVAL, 7, 7 },
	};

	tap_begin("gpusample: GPUPROF_GPU_TELEMETRY: a period, util and gpm");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t ms = 7, extra = 7;
		int rc = gp_config_parse_telemetry(cases[i].s, &ms, &extra);

		CHECKF(rc == cases[i].rc && ms == cases[i].ms && extra == cases[i].extra,
		       "'%s': %d, %u ms, extra %u", cases[i].s, rc, ms, extra);
	}
	tap_end();
}

int main(void)
{
	char err[4096], *slash;
	double secs = 0;
	ssize_t n = readlink("/proc/self/exe", lib, sizeof(lib) - 40);
	int st;

	if (n <= 0)
		return 1;
	lib[n] = 0;
	slash = strrchr(lib, '/');
	if (!slash)
		return 1;
	memcpy(nvml_lib, lib, sizeof(lib));
	strcpy(slash, "/shims/libfakepm.so");
	strcpy(nvml_lib + (slash - lib), "/shims/libfakenvml.so");
	if (access(lib, R_OK) != 0 || access(nvml_lib, R_OK) != 0) {
		printf("not ok - gpusample: %s or %s is not built\n", lib, nvml_lib);
		return 1;
	}
	telemetry_grammar();
	in_child(prompt_stop);
	in_child(telemetry_default);
	in_child(telemetry_gpm_util);
	in_child(telemetry_slow);
	in_child(metrics_without_nvml);
	in_child(stop_during_setup);
	in_child(stuck_given_up);
	in_child(two_windows);

	tap_begin("gpusample: at exit the sampler stops before CUDA's teardown; status 0");
	st = run_child(exit_normal, err, sizeof(err), &secs);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "wait status 0x%x, stderr: %s", st, err);
	CHECKF(secs < 2, "the exit took %.3f s", secs);
	CHECKF(!strstr(err, "did not stop"), "stderr: %s", err);
	tap_end();

	tap_begin("gpusample: at exit the sampler stops before a teardown registered at its first Start");
	st = run_child(exit_runtime, err, sizeof(err), &secs);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "wait status 0x%x, stderr: %s", st, err);
	tap_end();

	tap_begin("gpusample: at exit a sampler stuck in DecodeData is given up; status 0");
	st = run_child(exit_stuck, err, sizeof(err), &secs);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "wait status 0x%x, stderr: %s", st, err);
	CHECKF(secs < 5, "the exit took %.3f s", secs);
	CHECKF(strstr(err, "did not stop in 2.5 s") && strstr(err, "does not return"),
	       "stderr: %s", err);
	tap_end();
	return tap_exit();
}
