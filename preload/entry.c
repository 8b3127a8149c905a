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
 *  - InitializeInjectionNvtx2 (cupti/nvtx_tool.c, the NVTX source): called by
 *    each NVTX instance on its first call.
 *  - atfork child handler: async-signal context; only flips flags.
 */
#include "config.h"
#include "lifecycle.h"
#include "log.h"

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

static char self_path[PATH_MAX];

static void fork_child(void)
{
	gp_recorder_forked();
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
	gp_config_claim("NVTX_INJECTION64_PATH", self_path);
	cur = gp_config_claim("CUDA_INJECTION64_PATH", self_path);
	if (!cur)
		return;
	if (strcmp(cur, self_path)) {
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

GP_EXPORT int InitializeInjection(void)
{
	gp_recorder_start();
	return 1;
}
