/*
 * Entry points of libgpuprof.so.
 *
 *  - ELF constructor (every process that loads the library, CUDA or not):
 *    points CUDA_INJECTION64_PATH at this library when unset and installs
 *    the fork handler.  No CUPTI, no CUDA, no files: shells and compilers
 *    that inherit LD_PRELOAD stay untouched.
 *  - InitializeInjection: called by the CUDA driver inside cuInit, on the
 *    thread that called it, in the same loaded image.  All CUPTI work
 *    starts here, once, whichever way the library was loaded.
 *  - atfork child handler: async-signal context; only flips flags.
 */
#include "config.h"
#include "log.h"
#include "recorder.h"

#include "../cupti/cupti_api.h"
#include "../cupti/tracer.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GP_EXPORT __attribute__((visibility("default")))

/* Called by the CUDA driver (CUDA_INJECTION64_PATH); returns 1 (success). */
GP_EXPORT int InitializeInjection(void);
/*
 * Called by each NVTX instance (NVTX_INJECTION64_PATH) on its first call;
 * forwarded to CUPTI's own NVTX handlers.  Return 1 to receive NVTX calls,
 * 0 to leave NVTX a no-op.
 */
GP_EXPORT int InitializeInjectionNvtx(void *get_export_table);
GP_EXPORT int InitializeInjectionNvtx2(void *get_export_table);
GP_EXPORT int InitializeInjectionNvtxExtension(void *module_info);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static char self_path[PATH_MAX];

static void fork_child(void)
{
	gp_tracer_forked();
}

static void find_self(void)
{
	Dl_info info;

	if (dladdr((void *)find_self, &info) && info.dli_fname &&
	    !realpath(info.dli_fname, self_path))
		self_path[0] = 0;
}

__attribute__((constructor)) static void gp_constructor(void)
{
	const char *cur;

	if (getenv("GPUPROF_DISABLE") && strcmp(getenv("GPUPROF_DISABLE"), "0"))
		return;
	find_self();
	pthread_atfork(NULL, NULL, fork_child);
	if (!self_path[0])
		return;
	cur = getenv("NVTX_INJECTION64_PATH");
	if (!cur || !*cur)
		setenv("NVTX_INJECTION64_PATH", self_path, 1);
	cur = getenv("CUDA_INJECTION64_PATH");
	if (!cur || !*cur)
		setenv("CUDA_INJECTION64_PATH", self_path, 1);
	else if (strcmp(cur, self_path)) {
		char real[PATH_MAX];

		/* Another tool's injection wins; say so once. */
		if (!realpath(cur, real) || strcmp(real, self_path))
			gp_log("CUDA_INJECTION64_PATH=%s belongs to another tool; not tracing", cur);
	}
}

static void init(void)
{
	if (gp_config_load(&gp_rec.cfg) < 0 || gp_rec.cfg.disabled)
		return;
	if (atomic_load(&gp_rec.disabled))
		return;
	gp_tracer_start();
}

GP_EXPORT int InitializeInjection(void)
{
	pthread_once(&init_once, init);
	return 1;
}

static pthread_once_t nvtx_once = PTHREAD_ONCE_INIT;
static int nvtx_ok;

static void nvtx_init(void)
{
	struct gp_config cfg;
	char why[600];

	gp_config_load(&cfg);
	if (cfg.disabled || !(cfg.trace & GP_TRACE_NVTX))
		return;
	/* Loading CUPTI is safe before cuInit; it does not start the driver. */
	if (gp_cupti_load(why, sizeof(why)) < 0) {
		gp_debug("NVTX not traced: %s", why);
		return;
	}
	nvtx_ok = 1;
}

/* Forwards one NVTX entry point to libcupti's implementation of it. */
static int nvtx_forward(const char *sym, void *arg)
{
	int (*fn)(void *);

	pthread_once(&nvtx_once, nvtx_init);
	if (!nvtx_ok || atomic_load(&gp_rec.disabled))
		return 0;
	fn = (int (*)(void *))dlsym(gp_cu.handle, sym);
	return fn ? fn(arg) : 0;
}

int InitializeInjectionNvtx(void *get_export_table)
{
	return nvtx_forward("InitializeInjectionNvtx", get_export_table);
}

int InitializeInjectionNvtx2(void *get_export_table)
{
	return nvtx_forward("InitializeInjectionNvtx2", get_export_table);
}

int InitializeInjectionNvtxExtension(void *module_info)
{
	return nvtx_forward("InitializeInjectionNvtxExtension", module_info);
}
