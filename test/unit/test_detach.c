/*
 * CUPTI let go of between windows (cupti/detach.c), against the stand-in
 * libcupti (test/shims/fakecupti.c, built as shims/libfakecupti.so) and the
 * recorder's real lifecycle with sampled windows (preload/lifecycle.c).  A
 * stand-in CUDA source does what cupti/tracer.c does with CUPTI: the first
 * window subscribes and registers its buffer functions; when a window's
 * file has ended (idle) it asks for the detach; its callback hands every
 * callback to gp_detach_callback while CUPTI is let go of; the next window
 * takes a request back or, after a finalize, subscribes and registers
 * again.  The program (a forked child) makes a CUDA call every 2 ms, whose
 * ENTER and EXIT the fake's callbacks see when asked for, and, while
 * tracing, has one kernel record delivered through the registered buffer
 * functions.  Checked:
 *
 *  - dormant, window, dormant: cuptiFinalize once per dormant period after
 *    a window, only from inside a callback (an API exit), never while a
 *    window is open; each window after a finalize subscribes again, and
 *    its records are delivered: its file holds exactly the kernels
 *    delivered while it traced;
 *  - GPUPROF_DETACH=0, a guest CUPTI user, hardware metrics, the GPU over
 *    time, a recorder that is not dormant: no finalize;
 *  - a finalize CUPTI refuses: said once, CUPTI stays attached, the
 *    domains go off, no further request, the windows still exact;
 *  - a request no API exit carried out is taken back by the next window;
 *    one a forked child inherited is never carried out.
 *
 * Test code, runs offline only, needs no GPU.
 */
#include "tap.h"

#include "config.h"
#include "lifecycle.h"
#include "recorder.h"
#include "source.h"

#include "model/model.h"

#include "../../cupti/cupti_api.h"
#include "../../cupti/detach.h"

#include <cupti.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../shims/fakecupti.h"

#define MAXW 64
#define CBID 13 /* any runtime call */

static char lib[PATH_MAX];
static struct fake_state *fs;
static int (*fake_deliver)(int sub, int n, CUpti_ActivityKind k);
static int (*fake_api_call)(CUpti_CallbackDomain d, CUpti_CallbackId cbid);

static CUpti_SubscriberHandle sub;
static int attached;
static unsigned keep;
static atomic_int tracing, window_idx;
static unsigned long delivered[MAXW];
static int fin_open[MAXW], fin_close[MAXW], sub_at[MAXW], idles, requests;

static int load(void)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -1;
	fs = dlsym(h, "fake_state");
	fake_deliver = (int (*)(int, int, CUpti_ActivityKind))dlsym(h, "fake_deliver");
	fake_api_call = (int (*)(CUpti_CallbackDomain, CUpti_CallbackId))dlsym(h, "fake_api_call");
	if (!fs || !fake_deliver || !fake_api_call)
		return -1;
	memset(&gp_cu, 0, sizeof(gp_cu));
	gp_cu.handle = h;
#define B(name) gp_cu.name = (__typeof__(gp_cu.name))dlsym(h, #name)
	B(cuptiGetVersion);
	B(cuptiGetResultString);
	B(cuptiSubscribe);
	B(cuptiUnsubscribe);
	B(cuptiEnableCallback);
	B(cuptiEnableDomain);
	B(cuptiActivityRegisterCallbacks);
	B(cuptiActivityEnable);
	B(cuptiActivityDisable);
	B(cuptiActivityGetNextRecord);
	B(cuptiActivityFlushAll);
#undef B
	return 0;
}

static void CUPTIAPI buf_req(uint8_t **buf, size_t *size, size_t *max)
{
	*buf = calloc(1, 4096);
	*size = *buf ? 4096 : 0;
	*max = 0;
}

/* As tracer.c's buffer_complete: records emitted while a window traces. */
static void CUPTIAPI buf_done(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	static uint32_t name;

	(void)c, (void)s, (void)size;
	gp_ring_lock(&gp_rec.ring);
	while (gp_cu.cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		struct gp_rec_kernel *k;

		if (!atomic_load(&tracing))
			continue;
		if (!name)
			name = gp_emit_string("detach_kernel");
		k = gp_emit(GP_REC_KERNEL, sizeof(*k));
		if (!k)
			continue;
		k->start = gp_now_realtime();
		k->end = k->start + 1000;
		k->name = name;
		if (atomic_load(&window_idx) < MAXW)
			delivered[atomic_load(&window_idx)]++;
	}
	gp_ring_unlock(&gp_rec.ring);
	free(buf);
}

/* As tracer.c's on_callback: while CUPTI is let go of, the detach alone. */
static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId c, const void *p)
{
	(void)ud, (void)c;
	if (!gp_detach_cupti_ok())
		gp_detach_callback(d, p);
}

static int cupti_attach(void)
{
	if (gp_cu.cuptiSubscribe(&sub, on_cb, NULL) != CUPTI_SUCCESS ||
	    gp_cu.cuptiActivityRegisterCallbacks(buf_req, buf_done) != CUPTI_SUCCESS)
		return -1;
	gp_detach_attached();
	attached = 1;
	return 0;
}

static int src_attach(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	(void)cfg, (void)why, (void)whysz;
	*version = 1;
	return load();
}

/* A dormant recorder's first window: CUPTI attached now. */
static int src_enable(char *why, size_t whysz)
{
	(void)why, (void)whysz;
	return attached ? 0 : cupti_attach();
}

static void src_window(int what, uint64_t t)
{
	int w = atomic_load(&window_idx) + 1;

	(void)t;
	if (what != GP_WINDOW_OPENING || w >= MAXW)
		return;
	fin_open[w] = fs->finalize;
	if (!gp_detach_cupti_ok() && gp_detach_resume(2000000000ull) == GP_DETACH_DETACHED)
		cupti_attach();
}

static int src_set_tracing(int on, char *why, size_t whysz)
{
	int w;

	(void)why, (void)whysz;
	if (on) {
		w = atomic_fetch_add(&window_idx, 1) + 1;
		if (w < MAXW)
			sub_at[w] = fs->subscribe;
		gp_cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	} else {
		w = atomic_load(&window_idx);
		if (w < MAXW)
			fin_close[w] = fs->finalize;
		if (gp_detach_cupti_ok())
			gp_cu.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	}
	atomic_store(&tracing, on);
	return 0;
}

static void src_idle(void)
{
	idles++;
	if (!gp_detach_cupti_ok() || !gp_detach_wanted(&gp_rec.cfg, keep))
		return;
	gp_cu.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	requests += gp_detach_request(sub) == 0;
}

static void src_flush(int final)
{
	gp_detach_poll();
	if (final == GP_FLUSH_END && !gp_detach_cupti_ok())
		gp_detach_resume(2000000000ull);
	if (attached && gp_detach_cupti_ok())
		gp_cu.cuptiActivityFlushAll(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

static const struct gp_source src = {
	.name = "fakecuda",
	.attach = src_attach,
	.enable = src_enable,
	.set_tracing = src_set_tracing,
	.window = src_window,
	.idle = src_idle,
	.flush = src_flush,
};

const struct gp_source *const gp_sources[] = { &src, NULL };

struct result {
	int nwin, exact, finalize, in_cb, subscribe, reattach_ok, clean, idles, requests, dom_on;
	int finalize_rc;
};

/* The program: a CUDA call every 2 ms for ms, a kernel delivered with each while tracing. */
static void child(const char *spool, const char *out, int ms)
{
	FILE *f;

	setenv("GPUPROF_SAMPLE", "100ms/500ms", 1);
	setenv("GPUPROF_SPOOL", spool, 1);
	setenv("GPUPROF_FLUSH_MS", "50", 1);
	setenv("GPUPROF_OUTPUT", "/nonexistent/never.gpuprof", 1);
	/* A window the end of the trace closes is never switched off: -1 until it is. */
	for (int w = 0; w < MAXW; w++)
		fin_close[w] = -1;
	if (gp_recorder_start() < 0)
		_exit(90);
	for (int i = 0; i < ms / 2; i++) {
		struct timespec ts = { 0, 2000000 };

		fake_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CBID);
		if (atomic_load(&tracing))
			fake_deliver(0, 1, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		nanosleep(&ts, NULL);
	}
	gp_recorder_stop();
	/* The last window, open until the end: its finalizes counted then. */
	for (int w = 1; w < MAXW && w <= atomic_load(&window_idx); w++)
		if (fin_close[w] < 0)
			fin_close[w] = fs->finalize;
	f = fopen(out, "w");
	if (!f)
		_exit(91);
	fprintf(f, "%d %d %d %d %d %d %d\n", fs->finalize, fs->finalize_in_callback, fs->subscribe,
		idles, requests, fs->dom_on[CUPTI_CB_DOMAIN_RUNTIME_API] + fs->dom_on[CUPTI_CB_DOMAIN_DRIVER_API],
		atomic_load(&window_idx));
	for (int w = 1; w < MAXW && w <= atomic_load(&window_idx); w++)
		fprintf(f, "%lu %d %d %d\n", delivered[w], fin_open[w], fin_close[w], sub_at[w]);
	fclose(f);
	_exit(0);
}

/* Runs the program with the variables set; what the fake and the spool show. */
static int run(const char *detach, unsigned k, int finalize_rc, struct result *res)
{
	char spool[64], out[128], host[64], p[600];
	unsigned long want[MAXW] = { 0 };
	int fo[MAXW] = { 0 }, fc[MAXW] = { 0 }, sa[MAXW] = { 0 }, ran = 0, status = 0;
	pid_t pid;
	FILE *f;

	memset(res, 0, sizeof(*res));
	snprintf(spool, sizeof(spool), "/tmp/gp-detach-XXXXXX");
	if (!mkdtemp(spool))
		return -1;
	snprintf(out, sizeof(out), "%s.out", spool);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (detach)
			setenv("GPUPROF_DETACH", detach, 1);
		keep = k;
		if (load() == 0)
			fs->finalize_rc = finalize_rc;
		child(spool, out, 2300);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "# the program ended with status %#x\n", status);
		return -1;
	}
	f = fopen(out, "r");
	if (!f || fscanf(f, "%d %d %d %d %d %d %d", &res->finalize, &res->in_cb, &res->subscribe,
			 &res->idles, &res->requests, &res->dom_on, &ran) != 7) {
		if (f)
			fclose(f);
		return -1;
	}
	for (int w = 1; w <= ran && w < MAXW; w++)
		if (fscanf(f, "%lu %d %d %d", &want[w], &fo[w], &fc[w], &sa[w]) != 4)
			break;
	fclose(f);
	unlink(out);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	res->clean = res->reattach_ok = 1;
	for (int w = 1; w <= ran && w < MAXW; w++) {
		struct ga_model m;

		/* No finalize while window w was open; it subscribed once for each finalize before it. */
		if (fo[w] != fc[w]) {
			res->clean = 0;
			fprintf(stderr, "# window %d: %d finalized at its opening, %d at its end\n", w, fo[w],
				fc[w]);
		}
		if (sa[w] != 1 + fo[w]) {
			res->reattach_ok = 0;
			fprintf(stderr, "# window %d: %d subscribes after %d finalizes\n", w, sa[w], fo[w]);
		}
		snprintf(p, sizeof(p), "%s/%s-%d-w%06d.gpuprof", spool, host, (int)pid, w);
		if (access(p, F_OK))
			continue;
		res->nwin++;
		/*
		 * Each window's kernels, some in each; but the last may open as
		 * the program stops (a slow build), none delivered in it: none in
		 * its file then.
		 */
		if (ga_model_init(&m) == 0 && ga_model_add_file(&m, p) == GA_READ_OK &&
		    ga_model_finish(&m) == 0 && m.counts[GA_ACT_KERNEL] == want[w] &&
		    (want[w] > 0 || w == ran))
			res->exact++;
		else
			fprintf(stderr, "# window %d: %llu kernels in its file, %lu delivered in it\n", w,
				(unsigned long long)m.counts[GA_ACT_KERNEL], want[w]);
		ga_model_free(&m);
		unlink(p);
	}
	{
		DIR *d = opendir(spool);
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))) {
				snprintf(p, sizeof(p), "%s/%s", spool, de->d_name);
				unlink(p);
			}
		if (d)
			closedir(d);
		rmdir(spool);
	}
	return 0;
}

/* A request taken back before any API exit; one carried out by the first exit, once. */
static void take_back(void)
{
	int rc = 0;
	pid_t pid;
	int status = 0;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (load() || cupti_attach())
			_exit(90);
		if (gp_detach_request(sub) || gp_detach_state() != GP_DETACH_REQUESTED ||
		    !fs->dom_on[CUPTI_CB_DOMAIN_RUNTIME_API] || !fs->dom_on[CUPTI_CB_DOMAIN_DRIVER_API])
			rc |= 1;
		if (gp_detach_resume(1000000000ull) != GP_DETACH_ATTACHED || fs->finalize ||
		    fs->dom_on[CUPTI_CB_DOMAIN_RUNTIME_API] || !gp_detach_cupti_ok())
			rc |= 2;
		/* A forked child never carries out the parent's request. */
		if (gp_detach_request(sub) == 0) {
			pid_t c = fork();
			int cs = 0;

			if (c == 0) {
				gp_detach_forked();
				_exit(fake_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CBID) != 2 || fs->finalize ||
				      gp_detach_cupti_ok() || gp_detach_resume(1000000) != -1);
			}
			waitpid(c, &cs, 0);
			if (!WIFEXITED(cs) || WEXITSTATUS(cs))
				rc |= 32;
			if (gp_detach_resume(1000000000ull) != GP_DETACH_ATTACHED)
				rc |= 64;
		} else {
			rc |= 64;
		}
		if (gp_detach_request(sub) || fake_api_call(CUPTI_CB_DOMAIN_DRIVER_API, CBID) != 2 ||
		    fs->finalize != 1 || fs->finalize_in_callback != 1 ||
		    gp_detach_state() != GP_DETACH_DETACHED || gp_detach_cupti_ok())
			rc |= 4;
		/* Finalized: no callback reaches the recorder, nothing finalizes twice. */
		if (fake_api_call(CUPTI_CB_DOMAIN_RUNTIME_API, CBID) != 0 || fs->finalize != 1 ||
		    gp_detach_resume(1000000000ull) != GP_DETACH_DETACHED)
			rc |= 8;
		if (cupti_attach() || !gp_detach_cupti_ok() || fs->subscribe != 2 ||
		    fake_deliver(0, 3, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != 0)
			rc |= 16;
		_exit(rc);
	}
	waitpid(pid, &status, 0);
	tap_begin("detach: a request no API exit carried out is taken back, a forked child's never carried out; the first API exit finalizes once");
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	tap_end();
}

int main(void)
{
	struct result r;
	struct gp_config cfg;
	char *slash;
	ssize_t n = readlink("/proc/self/exe", lib, sizeof(lib) - 40);

	if (n <= 0)
		return 1;
	lib[n] = 0;
	slash = strrchr(lib, '/');
	if (!slash)
		return 1;
	strcpy(slash, "/shims/libfakecupti.so");
	if (access(lib, R_OK) != 0) {
		printf("not ok - detach: %s is not built\n", lib);
		return 1;
	}

	tap_begin("detach: wanted only dormant, without GPUPROF_DETACH=0, metrics, GPU metrics or a keeper");
	memset(&cfg, 0, sizeof(cfg));
	cfg.detach = 1;
	cfg.dormant = 1;
	CHECK(gp_detach_wanted(&cfg, 0));
	CHECK(!gp_detach_wanted(&cfg, GP_DETACH_KEEP_GUEST));
	CHECK(!gp_detach_wanted(&cfg, GP_DETACH_KEEP_MULTI));
	CHECK(!gp_detach_wanted(&cfg, GP_DETACH_KEEP_METRICS));
	CHECK(!gp_detach_wanted(&cfg, GP_DETACH_KEEP_CAPTURE));
	CHECK(!gp_detach_wanted(&cfg, GP_DETACH_KEEP_BUSY));
	snprintf(cfg.gpu_metrics, sizeof(cfg.gpu_metrics), "default");
	CHECK(!gp_detach_wanted(&cfg, 0));
	cfg.gpu_metrics[0] = 0;
	snprintf(cfg.metrics, sizeof(cfg.metrics), "roofline");
	CHECK(!gp_detach_wanted(&cfg, 0));
	cfg.metrics[0] = 0;
	cfg.dormant = 0;
	CHECK(!gp_detach_wanted(&cfg, 0));
	cfg.dormant = 1;
	cfg.detach = 0;
	CHECK(!gp_detach_wanted(&cfg, 0));
	tap_end();

	take_back();

	if (run(NULL, 0, 0, &r) < 0)
		r.nwin = -1;
	tap_begin("detach: dormant, window, dormant: finalized once per dormant period, from an API exit");
	CHECKF(r.nwin >= 3 && r.finalize >= r.nwin - 1 && r.finalize <= r.nwin &&
		       r.finalize == r.in_cb && r.requests >= r.finalize && r.requests <= r.finalize + 1,
	       "%d windows, %d finalized (%d in a callback), %d requests, %d idle", r.nwin, r.finalize,
	       r.in_cb, r.requests, r.idles);
	tap_end();
	tap_begin("detach: never while a window is open; each next window subscribes again, exact");
	CHECKF(r.clean && r.reattach_ok && r.exact == r.nwin && r.nwin > 0,
	       "clean %d, subscribed again %d, %d of %d windows exact, %d subscribes", r.clean,
	       r.reattach_ok, r.exact, r.nwin, r.subscribe);
	tap_end();

	if (run("0", 0, 0, &r) < 0)
		r.nwin = -1;
	tap_begin("detach: GPUPROF_DETACH=0 keeps CUPTI attached between windows");
	CHECKF(r.nwin >= 3 && r.finalize == 0 && r.requests == 0 && r.subscribe == 1 &&
		       r.exact == r.nwin && r.idles >= r.nwin - 1,
	       "%d windows (%d exact), %d finalized, %d requests, %d subscribes", r.nwin, r.exact,
	       r.finalize, r.requests, r.subscribe);
	tap_end();

	if (run(NULL, GP_DETACH_KEEP_GUEST, 0, &r) < 0)
		r.nwin = -1;
	tap_begin("detach: a guest CUPTI user served keeps CUPTI attached");
	CHECKF(r.nwin >= 3 && r.finalize == 0 && r.subscribe == 1 && r.exact == r.nwin,
	       "%d windows (%d exact), %d finalized, %d subscribes", r.nwin, r.exact, r.finalize,
	       r.subscribe);
	tap_end();

	if (run(NULL, 0, CUPTI_ERROR_NOT_INITIALIZED, &r) < 0)
		r.nwin = -1;
	tap_begin("detach: a finalize refused leaves CUPTI attached, asked once, the domains off");
	CHECKF(r.nwin >= 3 && r.finalize == 0 && r.requests == 1 && r.subscribe == 1 &&
		       r.dom_on == 0 && r.exact == r.nwin && r.clean,
	       "%d windows (%d exact), %d finalized, %d requests, %d subscribes, %d domains on",
	       r.nwin, r.exact, r.finalize, r.requests, r.subscribe, r.dom_on);
	tap_end();
	return tap_done();
}
