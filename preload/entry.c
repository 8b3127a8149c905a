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
 *  - InitializeInjectionNvtx2: called by each NVTX instance on its first
 *    call; installs the NVTX handlers, which buffer events until tracing
 *    starts.
 *  - atfork child handler: async-signal context; only flips flags.
 */
#include "config.h"
#include "log.h"
#include "recorder.h"

#include "../cupti/nvtx.h"
#include "../cupti/tracer.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GP_EXPORT __attribute__((visibility("default")))

/* Called by the CUDA driver (CUDA_INJECTION64_PATH); returns 1 (success). */
GP_EXPORT int InitializeInjection(void);
/*
 * Called by each NVTX instance (NVTX_INJECTION64_PATH) on its first call,
 * which may come before cuInit: installs gpuprof's NVTX handlers
 * (cupti/nvtx.h).  Returns 1 to receive NVTX calls, 0 to leave NVTX a no-op.
 */
GP_EXPORT int InitializeInjectionNvtx2(void *get_export_table);

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

static char other_tool[PATH_MAX];
static pid_t other_tool_pid;

static void say_other_tool(void)
{
	void *cuda;

	if (getpid() != other_tool_pid)
		return; /* a forked child: its parent speaks for it */
	cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!cuda)
		return;
	dlclose(cuda);
	gp_log("CUDA_INJECTION64_PATH=%s belongs to another tool; this process was not traced",
	       other_tool);
}

__attribute__((constructor)) static void gp_constructor(void)
{
	const char *cur;

	/* The same rule as the recorder's: "" and "0" leave tracing on. */
	if (gp_config_flag("GPUPROF_DISABLE"))
		return;
	gp_config_note_start_dir();
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

		/*
		 * Another tool's injection wins.  Shells and other programs
		 * that never touch CUDA inherit LD_PRELOAD too: only a
		 * process that has loaded the CUDA driver says so, at exit.
		 */
		if (!realpath(cur, real) || strcmp(real, self_path)) {
			snprintf(other_tool, sizeof(other_tool), "%s", cur);
			other_tool_pid = getpid();
			atexit(say_other_tool);
		}
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
static unsigned nvtx_what;

static void nvtx_init(void)
{
	struct gp_config cfg;
	const char *r = getenv("GPUPROF_CAPTURE_RANGE");

	if (gp_config_load(&cfg) < 0 || cfg.disabled)
		return;
	if (cfg.trace & GP_TRACE_NVTX)
		nvtx_what |= GP_NVTX_RECORD;
	if (r && !strncmp(r, "nvtx:", 5))
		nvtx_what |= GP_NVTX_CAPTURE;
}

int InitializeInjectionNvtx2(void *get_export_table)
{
	pthread_once(&nvtx_once, nvtx_init);
	return gp_nvtx_inject(get_export_table, nvtx_what);
}
