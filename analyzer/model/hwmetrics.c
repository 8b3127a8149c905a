/*
 * Hardware metrics of profiled kernel launches: the aggregate per kernel
 * and the roofline arithmetic (see hwmetrics.h).  Printing is views/text-roofline.c.
 * Runs offline only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/hwmetrics.h"

const struct ga_mx_prec_name ga_mx_prec[GA_MX_PREC] = {
	[GP_PEAK_FP64] = { "FP64", "FP64" },
	[GP_PEAK_FP32] = { "FP32", "FP32" },
	[GP_PEAK_FP16] = { "FP16", "FP16" },
	[GP_PEAK_TENSOR_FP16] = { "TC-FP16", "Tensor FP16/BF16" },
	[GP_PEAK_TENSOR_TF32] = { "TC-TF32", "Tensor TF32" },
	[GP_PEAK_TENSOR_FP8] = { "TC-FP8", "Tensor FP8" },
	[GP_PEAK_TENSOR_FP64] = { "TC-FP64", "Tensor FP64" },
};

void ga_mx_init(struct ga_mx *mx)
{
	memset(mx, 0, sizeof(*mx));
}

void ga_mx_free(struct ga_mx *mx)
{
	for (size_t i = 0; i < mx->nk; i++)
		free(mx->k[i].vals);
	free(mx->k);
	free(mx->names);
	free(mx->peaks);
	ga_map_free(&mx->kmap);
	memset(mx, 0, sizeof(*mx));
}

int ga_mx_any(const struct ga_mx *mx)
{
	return mx->has_info || mx->records;
}

uint64_t ga_mx_partial(const struct ga_mx *mx)
{
	uint64_t n = 0;

	for (size_t i = 0; i < mx->nk; i++)
		n += mx->k[i].spread && mx->k[i].passes < mx->passes;
	return n;
}

/* ---- work and bytes by metric name ---- */

double ga_mx_flop_weight(const char *metric, int *prec)
{
	static const struct {
		const char *name;
		int prec;
		double w;
	} tab[] = {
		{ "sm__sass_thread_inst_executed_op_dadd_pred_on.sum", GP_PEAK_FP64, 1 },
		{ "sm__sass_thread_inst_executed_op_dmul_pred_on.sum", GP_PEAK_FP64, 1 },
		{ "sm__sass_thread_inst_executed_op_dfma_pred_on.sum", GP_PEAK_FP64, 2 },
		{ "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", GP_PEAK_FP32, 1 },
		{ "sm__sass_thread_inst_executed_op_fmul_pred_on.sum", GP_PEAK_FP32, 1 },
		{ "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", GP_PEAK_FP32, 2 },
		/* H instructions are counted as packed half2, as Nsight Compute does. */
		{ "sm__sass_thread_inst_executed_op_hadd_pred_on.sum", GP_PEAK_FP16, 2 },
		{ "sm__sass_thread_inst_executed_op_hmul_pred_on.sum", GP_PEAK_FP16, 2 },
		{ "sm__sass_thread_inst_executed_op_hfma_pred_on.sum", GP_PEAK_FP16, 4 },
		{ "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", GP_PEAK_TENSOR_FP16, 1 },
		{ "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", GP_PEAK_TENSOR_FP16, 1 },
		{ "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum", GP_PEAK_TENSOR_TF32, 1 },
		{ "sm__ops_path_tensor_src_fp8_sparsity_off.sum", GP_PEAK_TENSOR_FP8, 1 },
		{ "sm__ops_path_tensor_src_fp64.sum", GP_PEAK_TENSOR_FP64, 1 },
		/* mma.sync (HMMA); the wgmma (HGMMA) counters above do not include it. */
		{ "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum", GP_PEAK_TENSOR_FP16, 1 },
		{ "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum", GP_PEAK_TENSOR_FP16, 1 },
		{ "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum", GP_PEAK_TENSOR_FP16, 1 },
		{ "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum", GP_PEAK_TENSOR_TF32, 1 },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(metric, tab[i].name)) {
			*prec = tab[i].prec;
			return tab[i].w;
		}
	*prec = -1;
	return 0;
}

/* ---- roofline ---- */

const char *ga_roof_verdict_name(enum ga_roof_verdict v)
{
	switch (v) {
	case GA_ROOF_MEMORY:
		return "memory-bound";
	case GA_ROOF_COMPUTE:
		return "compute-bound";
	case GA_ROOF_NEITHER:
		return "neither";
	default:
		return "-";
	}
}

int ga_roof_eval(const double *flops, double dram_bytes, uint64_t time_ns,
		 const struct gp_rec_device_peaks *peaks, struct ga_roof *out)
{
	double secs = (double)time_ns * 1e-9, best = 0, bw_peak;

	memset(out, 0, sizeof(*out));
	out->dominant = -1;
	out->verdict = GA_ROOF_UNKNOWN;
	if (!time_ns)
		return -1;
	for (int i = 0; i < GA_MX_PREC; i++) {
		out->flop_s[i] = flops[i] / secs;
		out->flops += flops[i];
		if (flops[i] > best) {
			best = flops[i];
			out->dominant = i;
		}
	}
	out->dram_bw = dram_bytes / secs;
	out->ai = dram_bytes > 0 ? out->flops / dram_bytes : INFINITY;
	if (!peaks || (out->flops <= 0 && dram_bytes <= 0))
		return 0;
	bw_peak = peaks->dram_bw;
	out->peak = out->dominant >= 0 ? peaks->flops[out->dominant] : 0;
	if (out->dominant >= 0 && out->peak <= 0)
		return 0; /* no ceiling for this class on this architecture */
	if (out->dominant < 0) {
		/* Bytes without FLOPs: only the memory roof applies. */
		if (bw_peak <= 0)
			return 0;
		out->memory_side = 1;
		out->pct = 100 * out->dram_bw / bw_peak;
	} else if (bw_peak <= 0 || dram_bytes <= 0) {
		out->ridge = bw_peak > 0 ? out->peak / bw_peak : 0;
		out->pct = 100 * out->flops / secs / out->peak;
	} else {
		out->ridge = out->peak / bw_peak;
		out->memory_side = out->ai < out->ridge;
		/* Under the roof min(peak, ai * bw): on the memory side that is the bandwidth. */
		out->pct = out->memory_side ? 100 * out->dram_bw / bw_peak
					    : 100 * out->flops / secs / out->peak;
	}
	if (out->pct >= 100 * GA_ROOF_BOUND_FRACTION)
		out->verdict = out->memory_side ? GA_ROOF_MEMORY : GA_ROOF_COMPUTE;
	else
		out->verdict = GA_ROOF_NEITHER;
	return 0;
}

/* ---- reading ---- */

const struct ga_mx_peaks *ga_mx_peaks_of(const struct ga_mx *mx, uint32_t proc, uint32_t device)
{
	for (size_t i = 0; i < mx->npeaks; i++)
		if (mx->peaks[i].proc == proc && mx->peaks[i].device == device)
			return &mx->peaks[i];
	return NULL;
}

/* Index of a metric name (strtab id), added on first use; -1 out of memory. */
static long name_index(struct ga_mx *mx, uint32_t sid)
{
	size_t i;

	for (i = 0; i < mx->nnames; i++)
		if (mx->names[i] == sid)
			return (long)i;
	if (ga_util_grow(&mx->names, &mx->capnames, mx->nnames + 1, sizeof(*mx->names)))
		return -1;
	/* Kernels' value arrays grow with the names. */
	for (size_t k = 0; k < mx->nk; k++) {
		double *v = realloc(mx->k[k].vals, (mx->nnames + 1) * sizeof(double));

		if (!v)
			return -1;
		v[mx->nnames] = NAN; /* not measured for this kernel */
		mx->k[k].vals = v;
	}
	mx->names[mx->nnames] = sid;
	return (long)mx->nnames++;
}

static struct ga_mx_kernel *kernel_of(struct ga_mx *mx, uint32_t name, uint32_t proc,
				      uint32_t device)
{
	uint32_t *slot;
	struct ga_mx_kernel *k;
	int rc = ga_map_insert(&mx->kmap, (uint64_t)proc << 32 | device, name, &slot);

	if (rc < 0)
		return NULL;
	if (!rc)
		return &mx->k[*slot - 1];
	if (ga_util_grow(&mx->k, &mx->capk, mx->nk + 1, sizeof(*mx->k)))
		return NULL;
	k = &mx->k[mx->nk];
	memset(k, 0, sizeof(*k));
	k->name = name;
	k->proc = proc;
	k->device = device;
	if (mx->nnames) {
		if (!(k->vals = malloc(mx->nnames * sizeof(double))))
			return NULL;
		for (size_t j = 0; j < mx->nnames; j++)
			k->vals[j] = NAN; /* not measured for this kernel */
	}
	*slot = (uint32_t)++mx->nk;
	return k;
}

static int on_metrics(struct ga_mx *mx, struct ga_model *m, uint32_t proc,
		      const struct gp_rec_metrics *r)
{
	const struct gp_metric_value *v = (const void *)(r + 1);
	double dram_rw = 0, dram_all = 0;
	int has_rw = 0, has_all = 0;
	struct ga_mx_kernel *k;
	uint32_t name = ga_model_fstr(m, r->kernel);

	if ((uint64_t)r->h.aux * sizeof(*v) > r->h.size - sizeof(*r)) {
		mx->bad++;
		return 0;
	}
	mx->records++;
	if (!name)
		return 0;
	if (!(k = kernel_of(mx, name, proc, r->device)))
		return -1;
	k->launches++;
	if (r->flags & GP_METRICS_F_CACHED) {
		k->cached++;
		mx->cached++;
	}
	if (r->flags & GP_METRICS_F_LAUNCHES) {
		mx->spread++;
		k->spread++;
	}
	k->time_ns += r->duration;
	k->cost_ns += r->cost_ns;
	k->passes = r->passes;
	if (r->duration)
		k->have |= GA_MX_HAVE_TIME;
	for (uint32_t i = 0; i < r->h.aux; i++) {
		uint32_t sid = ga_model_fstr(m, v[i].name);
		const char *s = sid ? ga_model_str(m, sid) : NULL;
		long at;
		double w, x = v[i].value;
		int prec;

		if (!s || !isfinite(x))
			continue;
		if ((at = name_index(mx, sid)) < 0)
			return -1;
		k->vals[at] = isnan(k->vals[at]) ? x : k->vals[at] + x;
		if ((w = ga_mx_flop_weight(s, &prec)) > 0) {
			k->flops[prec] += w * x;
			k->have |= GA_MX_HAVE_FLOPS;
		} else if (!strcmp(s, "dram__bytes_read.sum")) {
			k->dram_read += x;
			dram_rw += x;
			has_rw = 1;
		} else if (!strcmp(s, "dram__bytes_write.sum")) {
			k->dram_write += x;
			dram_rw += x;
			has_rw = 1;
		} else if (!strcmp(s, "dram__bytes.sum")) {
			dram_all += x;
			has_all = 1;
		} else if (!strcmp(s, "lts__t_bytes.sum")) {
			k->l2 += x;
			k->have |= GA_MX_HAVE_L2;
		} else if (!strcmp(s, "l1tex__t_bytes.sum")) {
			k->l1 += x;
			k->have |= GA_MX_HAVE_L1;
		} else if (!strcmp(s, "sm__cycles_elapsed.avg.per_second")) {
			k->sm_hz += x;
			k->sm_hz_n++;
		}
	}
	if (has_rw || has_all) {
		k->dram_total += has_rw ? dram_rw : dram_all;
		k->have |= GA_MX_HAVE_DRAM;
	}
	return 0;
}

unsigned ga_mx_launch_work(struct ga_model *m, const struct gp_rec_metrics *r, double *flops,
			   double *dram_bytes)
{
	const struct gp_metric_value *v = (const void *)(r + 1);
	double rw = 0, all = 0;
	unsigned have = 0, has_rw = 0, has_all = 0;

	*flops = *dram_bytes = 0;
	if ((uint64_t)r->h.aux * sizeof(*v) > r->h.size - sizeof(*r))
		return 0;
	for (uint32_t i = 0; i < r->h.aux; i++) {
		uint32_t sid = ga_model_fstr(m, v[i].name);
		const char *s = sid ? ga_model_str(m, sid) : NULL;
		double w, x = v[i].value;
		int prec;

		if (!s || !isfinite(x))
			continue;
		if ((w = ga_mx_flop_weight(s, &prec)) > 0) {
			*flops += w * x;
			have |= GA_MX_HAVE_FLOPS;
		} else if (!strcmp(s, "dram__bytes_read.sum") || !strcmp(s, "dram__bytes_write.sum")) {
			rw += x;
			has_rw = 1;
		} else if (!strcmp(s, "dram__bytes.sum")) {
			all += x;
			has_all = 1;
		}
	}
	if (has_rw || has_all) {
		*dram_bytes = has_rw ? rw : all;
		have |= GA_MX_HAVE_DRAM;
	}
	return have;
}

static int on_peaks(struct ga_mx *mx, struct ga_model *m, uint32_t proc,
		    const struct gp_rec_device_peaks *r)
{
	struct ga_mx_peaks *p = (struct ga_mx_peaks *)ga_mx_peaks_of(mx, proc, r->device);

	if (!p) {
		if (ga_util_grow(&mx->peaks, &mx->cappeaks, mx->npeaks + 1, sizeof(*mx->peaks)))
			return -1;
		p = &mx->peaks[mx->npeaks++];
	}
	memset(p, 0, sizeof(*p));
	p->proc = proc;
	p->device = r->device;
	p->p = *r;
	p->spec = *r;
	p->chip = ga_model_fstr(m, r->chip);
	return 0;
}

static void on_info(struct ga_mx *mx, struct ga_model *m, const struct gp_rec_metrics_info *r)
{
	if (!mx->has_info) {
		mx->set = ga_model_fstr(m, r->set);
		mx->passes = r->passes;
		mx->launches = r->launches;
	}
	if (!mx->status)
		mx->status = r->status;
	mx->has_info = 1;
	mx->profiled += r->profiled;
	mx->skipped_capture += r->skipped_capture;
	mx->skipped_graph += r->skipped_graph;
	mx->failed += r->failed;
	mx->skipped_other += r->skipped_other;
	mx->cost_ns += r->cost_ns;
}

static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_mx *mx = ctx;
	int rc = 0;

	switch (rec->type) {
	case GP_REC_METRICS:
		rc = on_metrics(mx, m, proc, (const void *)rec);
		break;
	case GP_REC_DEVICE_PEAKS:
		rc = on_peaks(mx, m, proc, (const void *)rec);
		break;
	case GP_REC_METRICS_INFO:
		on_info(mx, m, (const void *)rec);
		break;
	default:
		return 0;
	}
	if (rc)
		mx->oom = 1;
	return rc;
}

int ga_mx_bind(struct ga_mx *mx, struct ga_model *m)
{
	return ga_model_observe(m, mx, obs_rec,
				(1ull << GP_REC_METRICS) | (1ull << GP_REC_DEVICE_PEAKS) |
					(1ull << GP_REC_METRICS_INFO),
				NULL);
}

/* Rows by total profiled time, descending, then by name, process and device. */
static int cmp_time(const void *a, const void *b, void *ctx)
{
	const void *const *c = ctx;
	const struct ga_mx *mx = c[0];
	const struct ga_model *m = c[1];
	const struct ga_mx_kernel *x = &mx->k[*(const uint32_t *)a], *y = &mx->k[*(const uint32_t *)b];
	int d;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? 1 : -1;
	if (x->name != y->name && (d = strcmp(ga_model_str(m, x->name), ga_model_str(m, y->name))))
		return d;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->device < y->device ? -1 : x->device > y->device;
}

uint32_t *ga_mx_order(const struct ga_mx *mx, const struct ga_model *m)
{
	uint32_t *o = malloc((mx->nk ? mx->nk : 1) * sizeof(*o));
	const void *ctx[2] = { mx, m };

	if (!o)
		return NULL;
	for (size_t i = 0; i < mx->nk; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, mx->nk, sizeof(*o), cmp_time, (void *)ctx);
	return o;
}
