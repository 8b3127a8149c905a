/*
 * CUPTI entry points, resolved at run time with dlopen/dlsym so that
 * libgpuprof.so loads (and does nothing) in processes without CUPTI, and
 * only CUDA processes ever map libcupti.
 * Context: gp_cupti_load runs once during recorder initialization.
 */
#ifndef GP_CUPTI_API_H
#define GP_CUPTI_API_H

#include "../preload/config.h"

#include <cupti.h>

#define GP_CUPTI_FUNCS(X)                       \
	X(cuptiGetVersion)                      \
	X(cuptiGetResultString)                 \
	X(cuptiSubscribe)                       \
	X(cuptiUnsubscribe)                     \
	X(cuptiEnableCallback)                  \
	X(cuptiEnableDomain)                    \
	X(cuptiGetCallbackName)                 \
	X(cuptiActivityRegisterCallbacks)       \
	X(cuptiActivityEnable)                  \
	X(cuptiActivityDisable)                 \
	X(cuptiActivityEnableRuntimeApi)        \
	X(cuptiActivityEnableDriverApi)         \
	X(cuptiActivitySetAttribute)            \
	X(cuptiActivityGetNextRecord)           \
	X(cuptiActivityGetNumDroppedRecords)    \
	X(cuptiActivityFlushAll)                \
	X(cuptiGetTimestamp)                    \
	X(cuptiSetThreadIdType)                 \
	X(cuptiGetGraphNodeId)                  \
	X(cuptiGetGraphId)

struct gp_cupti {
#define GP_CUPTI_PTR(name) __typeof__(&name) name;
	GP_CUPTI_FUNCS(GP_CUPTI_PTR)
#undef GP_CUPTI_PTR
	void *handle;
	char path[GP_PATH_MAX + 64];
};

extern struct gp_cupti gp_cu;

/*
 * The driver calls that launch work and begin or end stream captures,
 * listed once: X(name) for each CUPTI_DRIVER_TRACE_CBID_name.  Runtime
 * launches go through these driver calls with the same correlation id,
 * so the driver side alone sees every launch.  GP_CBID_CASE makes a case
 * label of each, GP_CBID an initializer.
 */
#define GP_KERNEL_LAUNCH_CBIDS(X)                                               \
	X(cuLaunchKernel) X(cuLaunchKernel_ptsz) X(cuLaunchKernelEx)             \
	X(cuLaunchKernelEx_ptsz) X(cuLaunchCooperativeKernel)                    \
	X(cuLaunchCooperativeKernel_ptsz)
#define GP_GRAPH_LAUNCH_CBIDS(X) X(cuGraphLaunch) X(cuGraphLaunch_ptsz)
#define GP_CAPTURE_BEGIN_CBIDS(X)                                               \
	X(cuStreamBeginCapture) X(cuStreamBeginCapture_ptsz)                     \
	X(cuStreamBeginCapture_v2) X(cuStreamBeginCapture_v2_ptsz)               \
	X(cuStreamBeginCaptureToGraph) X(cuStreamBeginCaptureToGraph_ptsz)
#define GP_CAPTURE_END_CBIDS(X) X(cuStreamEndCapture) X(cuStreamEndCapture_ptsz)
#define GP_CBID_CASE(name) case CUPTI_DRIVER_TRACE_CBID_##name:
#define GP_CBID(name) CUPTI_DRIVER_TRACE_CBID_##name,

/* Kernel launches, then graph launches, gp_cupti_nlaunch_cbids of them. */
extern const CUpti_CallbackId gp_cupti_launch_cbids[];
extern const size_t gp_cupti_nlaunch_cbids;

/*
 * Finds and loads libcupti: cfg->cupti_path, an already loaded or
 * default-path libcupti.so.13, then cfg->cuda_home and the toolkit the
 * recorder was built against.  Returns 0, or -1 with a reason in why.
 */
int gp_cupti_load(const struct gp_config *cfg, char *why, size_t whysz);

/* CUPTI's text for a result code, never NULL. */
const char *gp_cupti_error(CUptiResult r);

#endif
