/*
 * Run-time binding to libcupti (see cupti_api.h).  Context: recorder
 * initialization, once.  libcupti is never dlclose()d: CUPTI 13.0 crashes
 * at shutdown if it is.
 */
#include "cupti_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GP_CUDA_HOME
#define GP_CUDA_HOME "/usr/local/cuda"
#endif

struct gp_cupti gp_cu;

const CUpti_CallbackId gp_cupti_launch_cbids[] = {
	GP_KERNEL_LAUNCH_CBIDS(GP_CBID) GP_GRAPH_LAUNCH_CBIDS(GP_CBID)
};
const size_t gp_cupti_nlaunch_cbids = sizeof(gp_cupti_launch_cbids) / sizeof(gp_cupti_launch_cbids[0]);

static int load(const struct gp_config *cfg, char *why, size_t whysz);

static void *try_open(const char *path)
{
	return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
}

int gp_cupti_load(const struct gp_config *cfg, char *why, size_t whysz)
{
	static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
	int rc;

	pthread_mutex_lock(&load_lock);
	rc = gp_cu.handle ? 0 : load(cfg, why, whysz);
	pthread_mutex_unlock(&load_lock);
	return rc;
}

static int load(const struct gp_config *cfg, char *why, size_t whysz)
{
	const char *env = cfg->cupti_path;
	const char *home = cfg->cuda_home;
	char buf[GP_PATH_MAX + 64];
	void *h = NULL;

	if (env && *env) {
		h = try_open(env);
		if (!h) {
			snprintf(why, whysz, "cannot load GPUPROF_CUPTI_PATH=%s: %s", env, dlerror());
			return -1;
		}
		snprintf(gp_cu.path, sizeof(gp_cu.path), "%s", env);
	}
	if (!h && (h = try_open("libcupti.so.13")))
		snprintf(gp_cu.path, sizeof(gp_cu.path), "libcupti.so.13");
	if (!h && home && *home) {
		snprintf(buf, sizeof(buf), "%s/lib64/libcupti.so.13", home);
		if ((h = try_open(buf)))
			snprintf(gp_cu.path, sizeof(gp_cu.path), "%s", buf);
		if (!h) {
			snprintf(buf, sizeof(buf), "%s/extras/CUPTI/lib64/libcupti.so.13", home);
			if ((h = try_open(buf)))
				snprintf(gp_cu.path, sizeof(gp_cu.path), "%s", buf);
		}
	}
	if (!h) {
		snprintf(buf, sizeof(buf), "%s/lib64/libcupti.so.13", GP_CUDA_HOME);
		if ((h = try_open(buf)))
			snprintf(gp_cu.path, sizeof(gp_cu.path), "%s", buf);
	}
	if (!h) {
		snprintf(why, whysz, "libcupti.so.13 not found (set GPUPROF_CUPTI_PATH or CUDA_HOME)");
		return -1;
	}
#define GP_CUPTI_SYM(name)                                                    \
	gp_cu.name = (__typeof__(gp_cu.name))dlsym(h, #name);                 \
	if (!gp_cu.name) {                                                    \
		snprintf(why, whysz, "%s lacks %s (CUPTI too old?)", gp_cu.path, #name); \
		return -1;                                                    \
	}
	GP_CUPTI_FUNCS(GP_CUPTI_SYM)
#undef GP_CUPTI_SYM
	gp_cu.handle = h;
	return 0;
}

const char *gp_cupti_error(CUptiResult r)
{
	const char *s = NULL;

	if (gp_cu.cuptiGetResultString && gp_cu.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}
