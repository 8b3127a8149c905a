/*
 * Unit tests of capture ranges (cupti/capture.c) without a GPU: the
 * GPUPROF_CAPTURE_RANGE and _END values, and the NVTX ranges that open and
 * close a capture, driven through the NVTX tool's handlers installed into
 * a stand-in NVTX export table (as in test_nvtx_tool.c).
 */
#define NVTX_NO_IMPL
#include "tap.h"

#include "recorder.h"

#include "../../cupti/capture.h"
#include "../../cupti/nvtx_tool.h"

#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static NvtxFunctionPointer core_fn[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer core2_fn[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *core_tab[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer *core2_tab[NVTX_CBID_CORE2_SIZE];

static int NVTX_API get_module(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned int *size)
{
	if (m == NVTX_CB_MODULE_CORE) {
		*out = core_tab;
		*size = NVTX_CBID_CORE_SIZE;
		return 1;
	}
	if (m == NVTX_CB_MODULE_CORE2) {
		*out = core2_tab;
		*size = NVTX_CBID_CORE2_SIZE;
		return 1;
	}
	return 0;
}

static const NvtxExportTableCallbacks callbacks = { sizeof(NvtxExportTableCallbacks), get_module };

static const void *NVTX_API get_export_table(uint32_t id)
{
	return id == NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

static int opened;
static uint64_t clock_ns;

static void set_tracing(int on)
{
	opened += on;
}

static void sync_none(void)
{
}

static uint64_t now(void)
{
	return ++clock_ns;
}

/*
 * Configures range/end (its one warning line, if any, is discarded) and
 * counts the captures that `pushes` NVTX ranges named "step" open; -1
 * when the values are refused.
 */
static int captures(const char *range, const char *end, int pushes)
{
	static struct gp_config cfg;
	const struct gp_capture_ops ops = { set_tracing, sync_none, now };
	int devnull = open("/dev/null", O_WRONLY), saved = dup(2), rc;

	snprintf(cfg.capture_range, sizeof(cfg.capture_range), "%s", range);
	snprintf(cfg.capture_end, sizeof(cfg.capture_end), "%s", end);
	dup2(devnull, 2);
	rc = gp_capture_init(&cfg, &ops);
	dup2(saved, 2);
	close(saved);
	close(devnull);
	if (rc != 1)
		return -1;
	gp_capture_enable_callbacks(NULL);
	opened = 0;
	for (int i = 0; i < pushes; i++) {
		((nvtxRangePushA_impl_fntype)core_fn[NVTX_CBID_CORE_RangePushA])("step");
		((nvtxRangePushA_impl_fntype)core_fn[NVTX_CBID_CORE_RangePushA])("inner");
		((nvtxRangePop_impl_fntype)core_fn[NVTX_CBID_CORE_RangePop])();
		((nvtxRangePop_impl_fntype)core_fn[NVTX_CBID_CORE_RangePop])();
	}
	gp_ring_lock(&gp_rec.ring);
	gp_capture_finish(now());
	gp_ring_unlock(&gp_rec.ring);
	return opened;
}

int main(void)
{
	for (int i = 0; i < NVTX_CBID_CORE_SIZE; i++)
		core_tab[i] = &core_fn[i];
	for (int i = 0; i < NVTX_CBID_CORE2_SIZE; i++)
		core2_tab[i] = &core2_fn[i];
	memset(&gp_rec, 0, sizeof(gp_rec));
	gp_ring_init(&gp_rec.ring, 64 << 10, 4, 0);
	gp_intern_init(&gp_rec.strings);
	gp_nvtxtool_inject((const void *)get_export_table, GP_NVTX_CAPTURE);

	TAP_CHECK("no capture range: nothing to arm", captures("", "", 3) == -1, "check failed");
	TAP_CHECK("nvtx:NAME opens one capture by default", captures("nvtx:step", "", 3) == 1,
		  "%d", captures("nvtx:step", "", 3));
	TAP_CHECK("stop: one capture", captures("nvtx:step", "stop", 3) == 1, "check failed");
	TAP_CHECK("repeat: every range", captures("nvtx:step", "repeat", 5) == 5, "check failed");
	TAP_CHECK("repeat:N: N ranges", captures("nvtx:step", "repeat:2", 5) == 2, "%d",
		  captures("nvtx:step", "repeat:2", 5));
	TAP_CHECK("a second configuration starts counting again",
		  captures("nvtx:step", "repeat:2", 5) == 2, "check failed");
	{
		static const char *const bad[] = { "repeat:-1", "repeat:0", "repeat:4294967296",
						   "repeat: 2", "repeat:+2", "repeat:2x", "repeat:",
						   "bogus" };
		int ok = 1;

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (captures("nvtx:step", bad[i], 5) != 1) {
				printf("# %s: %d captures\n", bad[i], captures("nvtx:step", bad[i], 5));
				ok = 0;
			}
		TAP_CHECK("malformed repeat:N means stop (one capture)", ok, "check failed");
	}
	TAP_CHECK("repeat:4294967295 is the largest N", captures("nvtx:step", "repeat:4294967295", 4) == 4,
		  "check failed");
	TAP_CHECK("a range named in another domain does not open one",
		  captures("nvtx:step@elsewhere", "repeat", 3) == 0, "check failed");
	TAP_CHECK("nvtx: without a name is refused",
		  captures("nvtx:", "", 1) == -1 && captures("nvtx:@dom", "", 1) == -1 &&
			  captures("nvtx", "", 1) == -1,
		  "check failed");
	gp_intern_free(&gp_rec.strings);
	gp_ring_destroy(&gp_rec.ring);
	return tap_exit();
}
