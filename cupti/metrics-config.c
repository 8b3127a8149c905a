/*
 * Hardware metrics, the configuration half (see metrics-int.h): the names
 * asked for, or the roofline set; each chip's list of metrics, against
 * which the names are checked (an unknown one is logged with the closest
 * valid names); the chip's configuration image and its pass count, and in
 * the launches mode its single-pass groups; the devices' roofline
 * ceilings, noted when a context is first profiled and emitted by the
 * drain.
 *
 * Threads and contracts:
 *  - gp_mx_parse_names: the thread inside cuInit, at attach.
 *  - gp_mx_chip_of, gp_mx_chip_count, gp_mx_note_peaks: prof_lock held
 *    (a launch callback on an application thread, or the end of cuInit).
 *    A chip is configured once, the first time one of its devices is
 *    seen: the only allocation here (configuration images, CUPTI's host
 *    objects); no stdio (gp_log only).
 *  - gp_mx_emit_peaks: producer lock held; it reads a device's ceilings
 *    after an acquire load of its ready flag, which gp_mx_note_peaks
 *    stores with release once they are written.
 *  - gp_mx_first_passes: any thread (an atomic load).
 */
#include "metrics-int.h"

#include "cupti_api.h"
#include "mcache.h"

#include "../preload/recorder.h"

#include <gpuprof/peaks.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The roofline set: FLOPs per precision, bytes, time, clocks (3 passes on GH100). */
static const char *const roofline_set[] = {
	"gpu__time_duration.sum",
	"sm__cycles_elapsed.avg.per_second",
	"dram__cycles_elapsed.avg.per_second",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_bytes.sum",
	"l1tex__t_bytes.sum",
	"sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
	"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
	"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
	"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
	"sm__ops_path_tensor_src_fp8_sparsity_off.sum",
	"sm__ops_path_tensor_src_fp64.sum",
	/* mma.sync (HMMA), which the wgmma counters above do not see: a third pass on GH100. */
	"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
	"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
	"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
	"sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
};

static int roofline;
static char want[MAX_METRICS][MAX_NAME];   /* the names asked for */
static size_t nwant;
static struct chip chips[MAX_CHIPS];
static int nchips;
static int profiler_initialized;
static _Atomic uint32_t first_passes;

/* Devices whose ceilings were computed; emitted by the drain. */
static struct {
	struct gp_rec_device_peaks p;
	char chip[32];
	_Atomic int ready;         /* 1 computed (release), 2 emitted (lock) */
} peaks[MAX_CTXS];

int gp_mx_parse_names(const char *s)
{
	int has_duration = 0;

	if (!strcmp(s, "roofline")) {
		roofline = 1;
		return 0;
	}
	while (*s) {
		size_t len = strcspn(s, ", ");

		if (len >= MAX_NAME || nwant == MAX_METRICS - 1) {
			gp_log("GPUPROF_METRICS: %s; metrics are off",
			       len >= MAX_NAME ? "a metric name is too long" : "too many metrics");
			return -1;
		}
		if (len) {
			memcpy(want[nwant], s, len);
			want[nwant][len] = 0;
			if (!strcmp(want[nwant], "roofline")) {
				gp_log("GPUPROF_METRICS: 'roofline' is a set of its own, not a metric name; metrics are off");
				return -1;
			}
			has_duration |= !strcmp(want[nwant], DURATION_METRIC);
			nwant++;
		}
		s += len;
		s += strspn(s, ", ");
	}
	if (!nwant) {
		gp_log("GPUPROF_METRICS: no metric names; metrics are off");
		return -1;
	}
	/* Profiled launches take their time from it. */
	if (!has_duration)
		strcpy(want[nwant++], DURATION_METRIC);
	return 0;
}

/* ---- metric names: validation against the chip's list ---- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[MAX_NAME + 1];

	if (la > MAX_NAME || lb > MAX_NAME)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], tmp;

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			diag = tmp;
		}
	}
	return row[lb];
}

struct base_list {
	const char **names;
	size_t n;
	CUpti_MetricType type;
};

static int base_lists(struct chip *c, struct base_list l[3])
{
	for (int t = 0; t < 3; t++) {
		CUpti_Profiler_Host_GetBaseMetrics_Params p = {
			.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE,
			.pHostObject = c->host,
			.metricType = (CUpti_MetricType)t,
		};

		if (gp_mx_pf.cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS)
			return -1;
		l[t].names = p.ppMetricNames;
		l[t].n = p.numMetrics;
		l[t].type = (CUpti_MetricType)t;
	}
	return 0;
}

/* 1 when name (base.rollup...) exists on the chip; else *type_out = -1 if even the base is unknown. */
static int name_known(struct chip *c, const struct base_list l[3], const char *name, int *type_out)
{
	char base[MAX_NAME];
	const char *dot = strchr(name, '.');
	size_t blen = dot ? (size_t)(dot - name) : strlen(name);

	*type_out = -1;
	if (blen >= sizeof(base))
		return 0;
	memcpy(base, name, blen);
	base[blen] = 0;
	for (int t = 0; t < 3; t++)
		for (size_t i = 0; i < l[t].n; i++) {
			CUpti_Profiler_Host_GetSubMetrics_Params p = {
				.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE,
				.pHostObject = c->host,
				.metricType = l[t].type,
				.pMetricName = base,
			};

			if (strcmp(l[t].names[i], base))
				continue;
			*type_out = t;
			if (!dot)
				return 0; /* a base name needs a rollup (.sum, .avg, ...) */
			if (gp_mx_pf.cuptiProfilerHostGetSubMetrics(&p) != CUPTI_SUCCESS)
				return 1; /* cannot check further: let ConfigAddMetrics decide */
			for (size_t k = 0; k < p.numOfSubmetrics; k++)
				if (!strcmp(p.ppSubMetrics[k], dot))
					return 1;
			return 0;
		}
	return 0;
}

/* One line naming the unknown metric and the closest valid names. */
static void log_unknown(struct chip *c, const struct base_list l[3], const char *name, int type)
{
	struct {
		size_t d;
		char s[MAX_NAME];
	} best[3];
	const char *dot = strchr(name, '.');
	char line[3 * MAX_NAME + 16];
	size_t nb = 0, pos = 0;

	memset(best, 0, sizeof(best));
	for (int k = 0; k < 3; k++)
		best[k].d = SIZE_MAX;
	if (type >= 0) {
		/* The base exists: suggest its rollups. */
		CUpti_Profiler_Host_GetSubMetrics_Params p = {
			.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE,
			.pHostObject = c->host,
			.metricType = (CUpti_MetricType)type,
		};
		char base[MAX_NAME];
		size_t blen = dot ? (size_t)(dot - name) : strlen(name);

		memcpy(base, name, blen);
		base[blen] = 0;
		p.pMetricName = base;
		if (gp_mx_pf.cuptiProfilerHostGetSubMetrics(&p) == CUPTI_SUCCESS)
			for (size_t k = 0; k < p.numOfSubmetrics; k++) {
				char cand[MAX_NAME];
				size_t d;

				if (snprintf(cand, sizeof(cand), "%s%s", base, p.ppSubMetrics[k]) >=
				    (int)sizeof(cand))
					continue;
				d = edit_distance(name, cand);
				for (int b = 0; b < 3; b++)
					if (d < best[b].d) {
						memmove(&best[b + 1], &best[b], sizeof(best[0]) * (size_t)(2 - b));
						best[b].d = d;
						strcpy(best[b].s, cand);
						break;
					}
			}
	} else {
		char base[MAX_NAME];
		size_t blen = dot ? (size_t)(dot - name) : strlen(name);

		memcpy(base, name, blen);
		base[blen] = 0;
		for (int t = 0; t < 3; t++)
			for (size_t i = 0; i < l[t].n; i++) {
				size_t d = edit_distance(base, l[t].names[i]);

				for (int b = 0; b < 3; b++)
					if (d < best[b].d) {
						memmove(&best[b + 1], &best[b], sizeof(best[0]) * (size_t)(2 - b));
						best[b].d = d;
						snprintf(best[b].s, sizeof(best[b].s), "%s%s",
							 l[t].names[i], dot ? dot : ".sum");
						break;
					}
			}
	}
	line[0] = 0;
	for (int b = 0; b < 3; b++) {
		if (best[b].d == SIZE_MAX)
			break;
		pos += (size_t)snprintf(line + pos, sizeof(line) - pos, "%s%s", nb++ ? ", " : "",
					best[b].s);
		if (pos >= sizeof(line))
			break;
	}
	gp_log("unknown metric '%s' on %s%s%s; metrics are off, tracing goes on", name, c->name,
	       nb ? "; closest: " : "", line);
}

/*
 * A configuration image of names on a chip and its pass count.  host_out
 * NULL: the host object and the image are released (a trial).
 */
static CUptiResult config_make(const char *chip, const char *const *names, size_t n,
			       CUpti_Profiler_Host_Object **host_out, uint8_t **image,
			       size_t *size, size_t *passes)
{
	CUpti_Profiler_Host_Initialize_Params hi = {
		.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
		.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER,
		.pChipName = chip,
	};
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
		.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE,
		.ppMetricNames = (const char **)names,
		.numMetrics = n,
	};
	CUpti_Profiler_Host_GetConfigImageSize_Params cs = {
		.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE,
	};
	CUpti_Profiler_Host_GetConfigImage_Params ci = {
		.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE,
	};
	CUpti_Profiler_Host_GetNumOfPasses_Params np = {
		.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE,
	};
	CUpti_Profiler_Host_Deinitialize_Params di = {
		.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE,
	};
	uint8_t *img = NULL;
	CUptiResult r = gp_mx_pf.cuptiProfilerHostInitialize(&hi);

	if (r != CUPTI_SUCCESS)
		return r;
	am.pHostObject = cs.pHostObject = ci.pHostObject = di.pHostObject = hi.pHostObject;
	r = gp_mx_pf.cuptiProfilerHostConfigAddMetrics(&am);
	if (r == CUPTI_SUCCESS)
		r = gp_mx_pf.cuptiProfilerHostGetConfigImageSize(&cs);
	if (r == CUPTI_SUCCESS && !(img = malloc(cs.configImageSize)))
		r = CUPTI_ERROR_OUT_OF_MEMORY;
	if (r == CUPTI_SUCCESS) {
		ci.configImageSize = cs.configImageSize;
		ci.pConfigImage = img;
		r = gp_mx_pf.cuptiProfilerHostGetConfigImage(&ci);
	}
	if (r == CUPTI_SUCCESS) {
		np.configImageSize = cs.configImageSize;
		np.pConfigImage = img;
		r = gp_mx_pf.cuptiProfilerHostGetNumOfPasses(&np);
		*passes = np.numOfPasses;
	}
	if (r == CUPTI_SUCCESS && host_out) {
		*host_out = hi.pHostObject;
		*image = img;
		*size = cs.configImageSize;
		return r;
	}
	free(img);
	gp_mx_pf.cuptiProfilerHostDeinitialize(&di);
	return r;
}

/*
 * The launches mode: the chip's names split into groups of one pass each,
 * first fit in the order given (the duration, first in the roofline set,
 * goes with the hardware counters).  0, or -1 when a name needs more than
 * one pass by itself.
 */
static int groups_build(struct chip *c)
{
	const char *trial[MAX_METRICS];
	size_t passes;
	uint64_t t0 = mono_ns();
	int g;

	c->ngroups = 0;
	for (size_t i = 0; i < c->nnames; i++) {
		struct group *gr;

		for (g = 0; g < c->ngroups; g++) {
			gr = &c->groups[g];
			memcpy(trial, gr->names, gr->n * sizeof(*trial));
			trial[gr->n] = c->names[i];
			if (config_make(c->name, trial, gr->n + 1, NULL, NULL, NULL, &passes) ==
				    CUPTI_SUCCESS && passes == 1)
				break;
		}
		if (g == c->ngroups) {
			if (g == MAX_GROUPS ||
			    config_make(c->name, &c->names[i], 1, NULL, NULL, NULL, &passes) !=
				    CUPTI_SUCCESS || passes != 1) {
				gp_log("metrics: %s cannot be measured in one pass on %s; --metrics-replay=launches "
				       "needs metrics that can; kernel replay is used instead", c->names[i], c->name);
				return -1;
			}
			c->groups[g].n = 0;
			c->groups[g].time_at = -1;
			c->ngroups++;
		}
		gr = &c->groups[g];
		gr->at[gr->n] = (uint8_t)i;
		if (!strcmp(c->names[i], DURATION_METRIC))
			gr->time_at = (int)gr->n;
		gr->names[gr->n++] = c->names[i];
	}
	for (g = 0; g < c->ngroups; g++) {
		struct group *gr = &c->groups[g];

		/*
		 * Software-patched (SASS) counters read zero in user replay
		 * while activity tracing is on; in kernel replay they count, and
		 * one pass needs no memory save and restore.
		 */
		gr->kernel_replay = 1;
		for (size_t i = 0; i < gr->n; i++)
			if (!strstr(gr->names[i], "__sass_"))
				gr->kernel_replay = 0;
		if (config_make(c->name, gr->names, gr->n, &gr->host, &gr->config, &gr->config_size,
				&passes) != CUPTI_SUCCESS || passes != 1) {
			gp_log("metrics: cannot configure metric group %d on %s; kernel replay is used instead",
			       g, c->name);
			return -1;
		}
	}
	gp_debug("metrics: %zu metrics on %s in %d single-pass groups (%.1f ms to find them)",
		 c->nnames, c->name, c->ngroups, (double)(mono_ns() - t0) / 1e6);
	return 0;
}

/* Builds the chip's configuration; 0, or -1 (logged, metrics off). */
static int chip_build(struct chip *c)
{
	CUpti_Profiler_Host_Initialize_Params hi = {
		.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE,
		.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER,
		.pChipName = c->name,
	};
	CUpti_Profiler_Host_Deinitialize_Params di = {
		.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE,
	};
	struct base_list l[3];
	CUptiResult r;
	int bad = 0, type;

	r = gp_mx_pf.cuptiProfilerHostInitialize(&hi);
	if (r != CUPTI_SUCCESS) {
		MX_OFF("GPU %s is not supported by the CUPTI profiler (%s)", c->name,
		       gp_cupti_error(r));
		gp_mx_go_off(GP_METRICS_UNSUPPORTED);
		return -1;
	}
	/* This host object checks the names; the configuration gets one of its own. */
	c->host = di.pHostObject = hi.pHostObject;
	if (base_lists(c, l) < 0) {
		MX_OFF("cannot list the metrics of %s", c->name);
		gp_mx_go_off(GP_METRICS_ERROR);
		return -1;
	}
	if (roofline) {
		/* Names a chip lacks (Hopper's wgmma counters elsewhere) are left out. */
		for (size_t i = 0; i < sizeof(roofline_set) / sizeof(roofline_set[0]); i++) {
			if (name_known(c, l, roofline_set[i], &type))
				c->names[c->nnames++] = roofline_set[i];
			else
				gp_debug("metrics: %s has no %s", c->name, roofline_set[i]);
		}
	} else {
		for (size_t i = 0; i < nwant; i++) {
			if (name_known(c, l, want[i], &type)) {
				c->names[c->nnames++] = want[i];
				continue;
			}
			log_unknown(c, l, want[i], type);
			bad = 1;
		}
		if (bad) {
			gp_mx_go_off(GP_METRICS_BAD_NAME);
			return -1;
		}
	}
	c->host = NULL;
	r = config_make(c->name, c->names, c->nnames, &c->host, &c->config, &c->config_size,
			&c->passes);
	gp_mx_pf.cuptiProfilerHostDeinitialize(&di);
	if (r != CUPTI_SUCCESS) {
		MX_OFF("cannot configure the metrics on %s (%s)", c->name, gp_cupti_error(r));
		gp_mx_go_off(GP_METRICS_ERROR);
		return -1;
	}
	c->set_hash = 0;
	for (size_t i = 0; i < c->nnames; i++)
		c->set_hash = gp_mcache_hash(c->set_hash, c->names[i], strlen(c->names[i]) + 1);
	c->ok = 1;
	/* Set before the first context, so a fallback applies everywhere. */
	if (gp_mx_spread && groups_build(c) < 0)
		gp_mx_spread = 0;
	{
		uint32_t zero = 0;

		atomic_compare_exchange_strong(&first_passes, &zero,
					       gp_mx_spread ? (uint32_t)c->ngroups : (uint32_t)c->passes);
	}
	gp_debug("metrics: %zu metrics on %s, %zu replay passes per profiled launch", c->nnames,
		 c->name, c->passes);
	return 0;
}

/* prof_lock held: the chip of a device, configured; NULL when unusable. */
struct chip *gp_mx_chip_of(uint32_t device)
{
	CUpti_Device_GetChipName_Params cn = {
		.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
		.deviceIndex = device,
	};
	CUptiResult r;
	int i;

	if (!profiler_initialized) {
		CUpti_Profiler_Initialize_Params pi = {
			.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE,
		};

		r = gp_mx_pf.cuptiProfilerInitialize(&pi);
		if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
			gp_mx_no_permission();
			return NULL;
		}
		if (r != CUPTI_SUCCESS) {
			MX_OFF("cannot initialize the CUPTI profiler (%s)", gp_cupti_error(r));
			gp_mx_go_off(GP_METRICS_ERROR);
			return NULL;
		}
		profiler_initialized = 1;
	}
	r = gp_mx_pf.cuptiDeviceGetChipName(&cn);
	if (r != CUPTI_SUCCESS || !cn.pChipName) {
		MX_OFF("no chip name for device %u (%s)", device, gp_cupti_error(r));
		gp_mx_go_off(GP_METRICS_UNSUPPORTED);
		return NULL;
	}
	for (i = 0; i < nchips; i++)
		if (!strcmp(chips[i].name, cn.pChipName))
			return chips[i].ok ? &chips[i] : NULL;
	if (nchips == MAX_CHIPS)
		return NULL;
	snprintf(chips[nchips].name, sizeof(chips[nchips].name), "%s", cn.pChipName);
	if (chip_build(&chips[nchips++]) < 0)
		return NULL;
	return &chips[nchips - 1];
}

/* prof_lock held: the device's ceilings, for the drain to emit. */
void gp_mx_note_peaks(uint32_t device, const struct chip *c)
{
	struct gp_rec_device_peaks *p;
	CUdevice dev;
	int v[6];
	static const CUdevice_attribute attrs[6] = {
		CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
		CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
		CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
		CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
	};

	if (device >= MAX_CTXS || atomic_load(&peaks[device].ready) || !gp_mx_cu_device_get ||
	    !gp_mx_cu_device_attr || gp_mx_cu_device_get(&dev, (int)device) != CUDA_SUCCESS)
		return;
	for (int i = 0; i < 6; i++)
		if (gp_mx_cu_device_attr(&v[i], attrs[i], dev) != CUDA_SUCCESS)
			v[i] = 0;
	p = &peaks[device].p;
	p->device = device;
	p->cc_major = (uint32_t)v[0];
	p->cc_minor = (uint32_t)v[1];
	p->sm_count = (uint32_t)v[2];
	p->sm_clock_khz = (uint32_t)v[3];
	p->mem_clock_khz = (uint32_t)v[4];
	p->bus_width = (uint32_t)v[5];
	if (!gp_peaks_compute(p))
		gp_debug("metrics: no FLOP ceilings known for compute capability %d.%d", v[0], v[1]);
	snprintf(peaks[device].chip, sizeof(peaks[device].chip), "%s", c->name);
	atomic_store_explicit(&peaks[device].ready, 1, memory_order_release);
}

int gp_mx_chip_count(void)
{
	return nchips;
}

uint32_t gp_mx_first_passes(void)
{
	return atomic_load(&first_passes);
}

void gp_mx_emit_peaks(void)
{
	for (int d = 0; d < MAX_CTXS; d++) {
		struct gp_rec_device_peaks *r;
		uint32_t chip;

		if (atomic_load_explicit(&peaks[d].ready, memory_order_acquire) != 1)
			continue;
		chip = gp_emit_string(peaks[d].chip);
		r = gp_emit(GP_REC_DEVICE_PEAKS, sizeof(*r));
		if (!r)
			return;
		memcpy((char *)r + sizeof(r->h), (const char *)&peaks[d].p + sizeof(r->h),
		       sizeof(*r) - sizeof(r->h));
		r->chip = chip;
		atomic_store(&peaks[d].ready, 2);
	}
}
