/*
 * NVML telemetry and GPM (see telemetry.h).  Context: the GPU sampler's
 * thread.  The NVML types below are NVML's ABI as nvml.h declares it
 * (return codes are int, handles pointers, field and GPM structs as laid
 * out there); nvmlGpmMetricsGet reads only numMetrics entries of its
 * metrics array, so a short array is safe.
 */
#include "telemetry.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *nvml_dev;
typedef void *nvml_gpm_sample;

struct nvml_memory {
	unsigned long long total, free, used;
};

struct nvml_util {
	unsigned int gpu, memory;
};

/* nvmlFieldValue_t */
struct nvml_field {
	unsigned int field_id, scope_id;
	long long timestamp, latency_us;
	int value_type;            /* nvmlValueType_t */
	int ret;                   /* nvmlReturn_t */
	union {
		double d;
		unsigned int ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
	} value;
};

/* nvmlGpmMetric_t */
struct nvml_gpm_metric {
	unsigned int id;
	int ret;
	double value;
	char *short_name, *long_name, *unit;
};

/* nvmlGpmMetricsGet_t, metrics[] cut to what is asked */
struct nvml_gpm_get {
	unsigned int version, num;
	nvml_gpm_sample s1, s2;
	struct nvml_gpm_metric m[GP_GPM_COUNT];
};

struct nvml_gpm_support {
	unsigned int version, supported;
};

#define NVML_SUCCESS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0
#define NVML_FI_DEV_POWER_INSTANT 186
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UINT 1
#define NVML_VALUE_TYPE_ULONG 2
#define NVML_VALUE_TYPE_ULONGLONG 3
#define NVML_VALUE_TYPE_SLONGLONG 4
#define NVML_GPM_VERSION 1

/* NVML_GPM_METRIC_* ids, in enum gp_gpm_metric order. */
static const unsigned int gpm_ids[GP_GPM_COUNT] = { 2, 3, 5, 10, 12 };

const char *const gp_telemetry_names[GP_TELEM_COUNT] = {
	"nvml.power_w",
	"nvml.sm_clock_mhz",
	"nvml.mem_clock_mhz",
	"nvml.temperature_c",
	"nvml.memory_used_bytes",
	"nvml.clock_event_reasons",
	"nvml.gpu_util_pct",
};

const char *const gp_gpm_names[GP_GPM_COUNT] = {
	"gpm.sm_util_pct",
	"gpm.sm_occupancy_pct",
	"gpm.tensor_util_pct",
	"gpm.dram_bw_util_pct",
	"gpm.fp32_util_pct",
};

static struct {
	void *h;
	int inited;
	int (*init)(void);
	int (*shutdown)(void);
	int (*by_pci)(const char *, nvml_dev *);
	int (*power)(nvml_dev, unsigned int *);
	int (*fields)(nvml_dev, int, struct nvml_field *);
	int (*clock)(nvml_dev, int, unsigned int *);
	int (*temp)(nvml_dev, int, unsigned int *);
	int (*mem)(nvml_dev, struct nvml_memory *);
	int (*reasons)(nvml_dev, unsigned long long *);
	int (*util)(nvml_dev, struct nvml_util *);
	int (*gpm_support)(nvml_dev, struct nvml_gpm_support *);
	int (*gpm_alloc)(nvml_gpm_sample *);
	int (*gpm_free)(nvml_gpm_sample);
	int (*gpm_get)(nvml_dev, nvml_gpm_sample);
	int (*gpm_metrics)(struct nvml_gpm_get *);
} nv;

#define SYM(field, name) (*(void **)&nv.field = dlsym(nv.h, name))

int gp_telemetry_open(const char *lib, char *why, size_t whysz)
{
	int r;

	if (nv.inited)
		return 0;
	if (!lib)
		lib = "libnvidia-ml.so.1";
	if (!nv.h && !(nv.h = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, whysz, "cannot load %s (%s)", lib, dlerror());
		return -1;
	}
	if (!SYM(init, "nvmlInit_v2") || !SYM(by_pci, "nvmlDeviceGetHandleByPciBusId_v2")) {
		snprintf(why, whysz, "%s lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2", lib);
		return -1;
	}
	SYM(shutdown, "nvmlShutdown");
	SYM(power, "nvmlDeviceGetPowerUsage");
	SYM(fields, "nvmlDeviceGetFieldValues");
	SYM(clock, "nvmlDeviceGetClockInfo");
	SYM(temp, "nvmlDeviceGetTemperature");
	/* The v1 struct (total, free, used); _v2 takes a versioned struct of five. */
	SYM(mem, "nvmlDeviceGetMemoryInfo");
	/* Renamed in NVML 12.2 (clock "event" reasons); the old name stays. */
	if (!SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
		SYM(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
	SYM(util, "nvmlDeviceGetUtilizationRates");
	SYM(gpm_support, "nvmlGpmQueryDeviceSupport");
	SYM(gpm_alloc, "nvmlGpmSampleAlloc");
	SYM(gpm_free, "nvmlGpmSampleFree");
	SYM(gpm_get, "nvmlGpmSampleGet");
	SYM(gpm_metrics, "nvmlGpmMetricsGet");
	r = nv.init();
	if (r != NVML_SUCCESS) {
		snprintf(why, whysz, "nvmlInit_v2 failed (NVML error %d)", r);
		return -1;
	}
	nv.inited = 1;
	return 0;
}

void *gp_telemetry_device(const char *pci_bus_id)
{
	nvml_dev d = NULL;

	if (!nv.inited || nv.by_pci(pci_bus_id, &d) != NVML_SUCCESS)
		return NULL;
	return d;
}

static double field_value(const struct nvml_field *f)
{
	switch (f->value_type) {
	case NVML_VALUE_TYPE_DOUBLE: return f->value.d;
	case NVML_VALUE_TYPE_UINT: return f->value.ui;
	case NVML_VALUE_TYPE_ULONG: return (double)f->value.ul;
	case NVML_VALUE_TYPE_ULONGLONG: return (double)f->value.ull;
	case NVML_VALUE_TYPE_SLONGLONG: return (double)f->value.sll;
	default: return NAN;
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Value i's getter took t0 to now: a second slow call drops it from w. */
static void timed(struct gp_telem_want *w, int i, uint64_t t0)
{
	if (!w || mono_ns() - t0 <= GP_TELEM_SLOW_US * 1000ull)
		return;
	if (w->slow & (1u << i))
		w->want &= ~(1u << i);
	w->slow |= 1u << i;
}

unsigned gp_telemetry_names_of(unsigned want, const char **names)
{
	unsigned n = 0;

	for (int i = 0; i < GP_TELEM_COUNT; i++)
		if (want & (1u << i))
			names[n++] = gp_telemetry_names[i];
	return n;
}

int gp_telemetry_read(void *dev, struct gp_telem_want *w, double *v)
{
	unsigned int u;
	unsigned long long ull;
	struct nvml_memory mem;
	struct nvml_util ut;
	struct nvml_field f;
	unsigned want = w ? w->want : GP_TELEM_DEFAULT_WANT;
	uint64_t t0 = 0;
	int n = 0, i;

	for (i = 0; i < GP_TELEM_COUNT; i++)
		v[i] = NAN;
	if (!nv.inited || !dev)
		return 0;
#define WANT(i) ((want & (1u << (i))) && (t0 = mono_ns(), 1))
	/*
	 * The instantaneous power follows the load within one update (about
	 * 100 ms); nvmlDeviceGetPowerUsage is a one-second trailing average,
	 * read only where the field is missing.
	 */
	if (WANT(GP_TELEM_POWER_W)) {
		memset(&f, 0, sizeof(f));
		f.field_id = NVML_FI_DEV_POWER_INSTANT;
		if (nv.fields && nv.fields(dev, 1, &f) == NVML_SUCCESS && f.ret == NVML_SUCCESS &&
		    !isnan(field_value(&f)))
			v[GP_TELEM_POWER_W] = field_value(&f) / 1000.0;
		else if (nv.power && nv.power(dev, &u) == NVML_SUCCESS)
			v[GP_TELEM_POWER_W] = u / 1000.0;
		timed(w, GP_TELEM_POWER_W, t0);
	}
	if (WANT(GP_TELEM_SM_CLOCK_MHZ)) {
		if (nv.clock && nv.clock(dev, NVML_CLOCK_SM, &u) == NVML_SUCCESS)
			v[GP_TELEM_SM_CLOCK_MHZ] = u;
		timed(w, GP_TELEM_SM_CLOCK_MHZ, t0);
	}
	if (WANT(GP_TELEM_MEM_CLOCK_MHZ)) {
		if (nv.clock && nv.clock(dev, NVML_CLOCK_MEM, &u) == NVML_SUCCESS)
			v[GP_TELEM_MEM_CLOCK_MHZ] = u;
		timed(w, GP_TELEM_MEM_CLOCK_MHZ, t0);
	}
	if (WANT(GP_TELEM_TEMP_C)) {
		if (nv.temp && nv.temp(dev, NVML_TEMPERATURE_GPU, &u) == NVML_SUCCESS)
			v[GP_TELEM_TEMP_C] = u;
		timed(w, GP_TELEM_TEMP_C, t0);
	}
	if (WANT(GP_TELEM_MEM_USED_BYTES)) {
		if (nv.mem && nv.mem(dev, &mem) == NVML_SUCCESS)
			v[GP_TELEM_MEM_USED_BYTES] = (double)mem.used;
		timed(w, GP_TELEM_MEM_USED_BYTES, t0);
	}
	if (WANT(GP_TELEM_CLOCK_REASONS)) {
		if (nv.reasons && nv.reasons(dev, &ull) == NVML_SUCCESS)
			v[GP_TELEM_CLOCK_REASONS] = (double)(ull & ((1ull << 53) - 1));
		timed(w, GP_TELEM_CLOCK_REASONS, t0);
	}
	if (WANT(GP_TELEM_GPU_UTIL_PCT)) {
		if (nv.util && nv.util(dev, &ut) == NVML_SUCCESS)
			v[GP_TELEM_GPU_UTIL_PCT] = ut.gpu;
		timed(w, GP_TELEM_GPU_UTIL_PCT, t0);
	}
#undef WANT
	for (i = 0; i < GP_TELEM_COUNT; i++)
		n += !isnan(v[i]);
	return n;
}

struct gp_gpm {
	nvml_dev dev;
	nvml_gpm_sample s[2];
	int cur;                   /* index of the sample taken last */
	int have;                  /* samples taken */
};

struct gp_gpm *gp_gpm_open(void *dev)
{
	struct nvml_gpm_support sup = { .version = NVML_GPM_VERSION };
	struct gp_gpm *g;

	if (!nv.inited || !dev || !nv.gpm_support || !nv.gpm_alloc || !nv.gpm_free ||
	    !nv.gpm_get || !nv.gpm_metrics)
		return NULL;
	if (nv.gpm_support(dev, &sup) != NVML_SUCCESS || !sup.supported)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->dev = dev;
	if (nv.gpm_alloc(&g->s[0]) != NVML_SUCCESS || nv.gpm_alloc(&g->s[1]) != NVML_SUCCESS) {
		gp_gpm_close(g);
		return NULL;
	}
	return g;
}

int gp_gpm_read(struct gp_gpm *g, double *v)
{
	struct nvml_gpm_get mg;
	int next = g->have ? !g->cur : 0;
	int i;

	for (i = 0; i < GP_GPM_COUNT; i++)
		v[i] = NAN;
	if (nv.gpm_get(g->dev, g->s[next]) != NVML_SUCCESS)
		return -1;
	g->cur = next;
	if (g->have++ == 0)
		return 0;
	memset(&mg, 0, sizeof(mg));
	mg.version = NVML_GPM_VERSION;
	mg.num = GP_GPM_COUNT;
	mg.s1 = g->s[!g->cur];
	mg.s2 = g->s[g->cur];
	for (i = 0; i < GP_GPM_COUNT; i++)
		mg.m[i].id = gpm_ids[i];
	if (nv.gpm_metrics(&mg) != NVML_SUCCESS)
		return -1;
	for (i = 0; i < GP_GPM_COUNT; i++)
		if (mg.m[i].ret == NVML_SUCCESS)
			v[i] = mg.m[i].value;
	return 1;
}

void gp_gpm_close(struct gp_gpm *g)
{
	if (!g)
		return;
	for (int i = 0; i < 2; i++)
		if (g->s[i])
			nv.gpm_free(g->s[i]);
	free(g);
}

void gp_telemetry_close(void)
{
	if (nv.inited && nv.shutdown)
		nv.shutdown();
	nv.inited = 0;
}
