/*
 * Printing of hardware metrics (see metrics.h): the "Metrics:" header
 * line, the roofline table, the table of metrics as asked for, the
 * devices' ceilings, and the "metrics" object of export --format json.
 * Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "table.h"

static const char *const prec_name[GP_MX_PREC] = {
	[GP_PEAK_FP64] = "FP64", [GP_PEAK_FP32] = "FP32", [GP_PEAK_FP16] = "FP16",
	[GP_PEAK_TENSOR_FP16] = "TC-FP16", [GP_PEAK_TENSOR_TF32] = "TC-TF32",
	[GP_PEAK_TENSOR_FP8] = "TC-FP8", [GP_PEAK_TENSOR_FP64] = "TC-FP64",
};

static const char *const prec_key[GP_MX_PREC] = {
	[GP_PEAK_FP64] = "fp64", [GP_PEAK_FP32] = "fp32", [GP_PEAK_FP16] = "fp16",
	[GP_PEAK_TENSOR_FP16] = "tensor_fp16", [GP_PEAK_TENSOR_TF32] = "tensor_tf32",
	[GP_PEAK_TENSOR_FP8] = "tensor_fp8", [GP_PEAK_TENSOR_FP64] = "tensor_fp64",
};

static const char *status_text(uint32_t s)
{
	switch (s) {
	case GP_METRICS_NO_PERMISSION:
		return "off: GPU performance counters are restricted to admin users";
	case GP_METRICS_UNSUPPORTED:
		return "off: the GPU or its configuration is not supported by the CUPTI profiler";
	case GP_METRICS_BAD_NAME:
		return "off: unknown metric name (the recorder printed the closest ones)";
	case GP_METRICS_BUSY:
		return "off: the counters were in use by another tool";
	case GP_METRICS_ERROR:
		return "off after a CUPTI error (the recorder printed it)";
	default:
		return NULL;
	}
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void gp_mx_print_header(const struct gp_mx *mx, struct gp_model *m, FILE *out, int lw)
{
	const char *st = status_text(mx->status);
	uint64_t profiled = mx->has_info ? mx->profiled : mx->records;

	if (!gp_mx_any(mx))
		return;
	fprintf(out, "%-*s", lw, "Metrics:");
	if (mx->set) {
		gp_fmt_put(out, gp_model_str(m, mx->set));
		fputs(": ", out);
	}
	fprintf(out, "%" PRIu64 " %s profiled by kernel replay", profiled,
		plural(profiled, "launch", "launches"));
	if (mx->passes)
		fprintf(out, " (%u %s each", mx->passes, plural(mx->passes, "pass", "passes"));
	if (mx->has_info && mx->cost_ns)
		fprintf(out, "%s%.1f ms inside the launch calls", mx->passes ? ", " : " (",
			(double)mx->cost_ns / 1e6);
	if (mx->passes || (mx->has_info && mx->cost_ns))
		fputc(')', out);
	if (st)
		fprintf(out, "; %s", st);
	fputc('\n', out);
	if (profiled)
		fprintf(out, "%-*sprofiled launches: kernel time from gpu__time_duration, start at the launch call\n",
			lw, "");
	if (mx->skipped_capture || mx->skipped_graph || mx->failed || mx->skipped_other) {
		const char *sep = "";

		fprintf(out, "%-*snot profiled: ", lw, "");
		if (mx->skipped_capture) {
			fprintf(out, "%" PRIu64 " %s during stream capture", mx->skipped_capture,
				plural(mx->skipped_capture, "launch", "launches"));
			sep = ", ";
		}
		if (mx->skipped_graph) {
			fprintf(out, "%s%" PRIu64 " graph %s (their kernels)", sep, mx->skipped_graph,
				plural(mx->skipped_graph, "launch", "launches"));
			sep = ", ";
		}
		if (mx->failed) {
			fprintf(out, "%s%" PRIu64 " whose replay failed", sep, mx->failed);
			sep = ", ";
		}
		if (mx->skipped_other)
			fprintf(out, "%s%" PRIu64 " selected but skipped (nested or too many in flight)",
				sep, mx->skipped_other);
		fputc('\n', out);
	}
}

/* Rows by total profiled time, descending. */
static int cmp_time(const void *a, const void *b, void *ctx)
{
	const struct gp_mx *mx = ctx;
	const struct gp_mx_kernel *x = &mx->k[*(const uint32_t *)a], *y = &mx->k[*(const uint32_t *)b];

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? 1 : -1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static uint32_t *order(const struct gp_mx *mx)
{
	uint32_t *o = malloc((mx->nk ? mx->nk : 1) * sizeof(*o));

	if (!o)
		return NULL;
	for (size_t i = 0; i < mx->nk; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, mx->nk, sizeof(*o), cmp_time, (void *)mx);
	return o;
}

static int add_rate(struct gp_table *t, double flop_s)
{
	return flop_s > 0 ? gp_table_addf(t, "%.2f", flop_s / 1e12) : gp_table_add(t, "-");
}

static double tensor(const double *v)
{
	return v[GP_PEAK_TENSOR_FP16] + v[GP_PEAK_TENSOR_TF32] + v[GP_PEAK_TENSOR_FP8] +
	       v[GP_PEAK_TENSOR_FP64];
}

static int print_roofline(const struct gp_mx *mx, struct gp_model *m, const uint32_t *o,
			  size_t n, size_t name_width, FILE *out)
{
	struct gp_table t;
	char nb[1024], tb[48];
	int rc = 0;

	gp_table_init(&t, 11);
	gp_table_col(&t, 0, "Prof", 1, 0);
	gp_table_col(&t, 1, "Avg time", 1, 0);
	gp_table_col(&t, 2, "FP64 TF/s", 1, 0);
	gp_table_col(&t, 3, "FP32 TF/s", 1, 0);
	gp_table_col(&t, 4, "FP16 TF/s", 1, 0);
	gp_table_col(&t, 5, "Tensor TF/s", 1, 0);
	gp_table_col(&t, 6, "DRAM GB/s", 1, 0);
	gp_table_col(&t, 7, "FLOP/B", 1, 0);
	gp_table_col(&t, 8, "Of roof", 1, 0);
	gp_table_col(&t, 9, "Bound", 0, 0);
	gp_table_col(&t, 10, "Name", 0, 0);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct gp_mx_kernel *k = &mx->k[o[i]];
		const struct gp_mx_peaks *p = gp_mx_peaks_of(mx, k->proc, k->device);
		struct gp_roof r;

		gp_roof_eval(k->flops, (k->have & GP_MX_HAVE_DRAM) ? k->dram_total : 0, k->time_ns,
			     p ? &p->p : NULL, &r);
		rc |= gp_table_addf(&t, "%" PRIu64, k->launches);
		rc |= gp_table_add(&t, k->launches && k->time_ns
					       ? gp_fmt_time(tb, sizeof(tb), k->time_ns / k->launches)
					       : "-");
		rc |= add_rate(&t, r.flop_s[GP_PEAK_FP64]);
		rc |= add_rate(&t, r.flop_s[GP_PEAK_FP32]);
		rc |= add_rate(&t, r.flop_s[GP_PEAK_FP16]);
		rc |= add_rate(&t, tensor(r.flop_s));
		if ((k->have & GP_MX_HAVE_DRAM) && k->time_ns)
			rc |= gp_table_addf(&t, "%.1f", r.dram_bw / 1e9);
		else
			rc |= gp_table_add(&t, "-");
		if (!(k->have & GP_MX_HAVE_DRAM) || !k->time_ns || (r.flops <= 0 && !isinf(r.ai)))
			rc |= gp_table_add(&t, r.flops <= 0 && (k->have & GP_MX_HAVE_DRAM) ? "0" : "-");
		else if (isinf(r.ai))
			rc |= gp_table_add(&t, "inf");
		else
			rc |= gp_table_addf(&t, r.ai < 10 ? "%.3g" : "%.0f", r.ai);
		if (r.verdict == GP_ROOF_UNKNOWN)
			rc |= gp_table_add(&t, "-");
		else
			rc |= gp_table_addf(&t, "%.0f%% %s", r.pct,
					    r.memory_side ? "DRAM" : prec_name[r.dominant]);
		rc |= gp_table_add(&t, gp_roof_verdict_name(r.verdict));
		rc |= gp_table_add(&t, gp_fmt_trunc(nb, sizeof(nb), gp_strtab_full(&m->strs, k->name),
						    name_width));
	}
	if (!rc) {
		fputs("Roofline (profiled launches; TF/s = 10^12 FLOP/s, FLOP/B = FLOPs per DRAM byte):\n",
		      out);
		gp_table_print(&t, out);
	}
	gp_table_free(&t);
	return rc ? -1 : 0;
}

static void print_peaks(const struct gp_mx *mx, struct gp_model *m, FILE *out)
{
	for (size_t i = 0; i < mx->npeaks; i++) {
		const struct gp_mx_peaks *p = &mx->peaks[i];
		int any = 0;

		fprintf(out, "Ceilings of cuda:%u", p->device);
		if (m->nprocs > 1)
			fprintf(out, " [pid %u]", m->procs[p->proc].pid);
		fprintf(out, " (%s, cc %u.%u, %u SMs at %.0f MHz, %.0f MHz memory, %u-bit bus): ",
			p->chip ? gp_model_str(m, p->chip) : "?", p->p.cc_major, p->p.cc_minor,
			p->p.sm_count, p->p.sm_clock_khz / 1e3, p->p.mem_clock_khz / 1e3,
			p->p.bus_width);
		for (int c = 0; c < GP_MX_PREC; c++) {
			if (p->p.flops[c] <= 0)
				continue;
			fprintf(out, "%s%s %.1f", any ? ", " : "", prec_name[c], p->p.flops[c] / 1e12);
			any = 1;
		}
		fprintf(out, "%s DRAM %.0f GB/s\n", any ? " TF/s;" : " FLOP ceilings unknown;",
			p->p.dram_bw / 1e9);
	}
}

static int print_values(const struct gp_mx *mx, struct gp_model *m, const uint32_t *o, size_t n,
			size_t name_width, FILE *out)
{
	struct gp_table t;
	char nb[1024];
	int rc = 0;

	gp_table_init(&t, 4);
	gp_table_col(&t, 0, "Prof", 1, 0);
	gp_table_col(&t, 1, "Avg per launch", 1, 0);
	gp_table_col(&t, 2, "Metric", 0, 0);
	gp_table_col(&t, 3, "Name", 0, 0);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct gp_mx_kernel *k = &mx->k[o[i]];

		for (size_t j = 0; j < mx->nnames && !rc; j++) {
			rc |= gp_table_addf(&t, "%" PRIu64, k->launches);
			rc |= gp_table_addf(&t, "%.6g", k->launches ? k->vals[j] / (double)k->launches : 0);
			rc |= gp_table_add(&t, gp_model_str(m, mx->names[j]));
			rc |= gp_table_add(&t, j ? "" : gp_fmt_trunc(nb, sizeof(nb),
					   gp_strtab_full(&m->strs, k->name), name_width));
		}
	}
	if (!rc) {
		fputs("Metrics (as collected, averaged over profiled launches):\n", out);
		gp_table_print(&t, out);
	}
	gp_table_free(&t);
	return rc ? -1 : 0;
}

int gp_mx_print(const struct gp_mx *mx, struct gp_model *m, size_t top, size_t name_width,
		FILE *out)
{
	const char *set = mx->set ? gp_model_str(m, mx->set) : "roofline";
	uint32_t *o;
	size_t n;
	int rc = 0;

	if (!gp_mx_any(mx))
		return 0;
	if (!mx->nk) {
		fputs("Roofline: no launch was profiled\n", out);
		return 0;
	}
	if (!(o = order(mx)))
		return -1;
	n = top && top < mx->nk ? top : mx->nk;
	rc = print_roofline(mx, m, o, n, name_width, out);
	if (!rc) {
		if (n < mx->nk)
			fprintf(out, "(%zu more kernels; --top 0 shows all)\n", mx->nk - n);
		print_peaks(mx, m, out);
		fputs("Metrics are warm-cache (no flush between replay passes) at the clocks the GPU ran.\n",
		      out);
	}
	if (!rc && strcmp(set, "roofline")) {
		fputc('\n', out);
		rc = print_values(mx, m, o, n, name_width, out);
	}
	free(o);
	return rc;
}

/* ---- json ---- */

static int jstr(FILE *out, struct gp_buf *b, const char *s)
{
	b->len = 0;
	if (gp_json_escape(b, s, strlen(s)))
		return -1;
	fwrite(b->p, 1, b->len, out);
	return 0;
}

static void jnum(FILE *out, double x)
{
	if (isfinite(x))
		fprintf(out, "%.17g", x);
	else
		fputs("null", out);
}

int gp_mx_json(const struct gp_mx *mx, struct gp_model *m, FILE *out)
{
	struct gp_buf b = { 0 };
	uint32_t *o;
	int rc = 0;

	fputs("\"metrics\":{", out);
	fprintf(out, "\"set\":");
	if (mx->set)
		rc |= jstr(out, &b, gp_model_str(m, mx->set));
	else
		fputs("null", out);
	fprintf(out, ",\"status\":%u,\"passes\":%u,\"launches_per_config\":", mx->status, mx->passes);
	if (mx->launches == GP_METRICS_LAUNCHES_ALL)
		fputs("\"all\"", out);
	else
		fprintf(out, "%u", mx->launches);
	fprintf(out, ",\"profiled\":%" PRIu64 ",\"records\":%" PRIu64 ",\"skipped_capture\":%" PRIu64
		",\"skipped_graph_launches\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"skipped_other\":%"
		PRIu64 ",\"cost_ns\":%" PRIu64 ",\n \"devices\":[", mx->has_info ? mx->profiled : mx->records,
		mx->records, mx->skipped_capture, mx->skipped_graph, mx->failed, mx->skipped_other,
		mx->cost_ns);
	for (size_t i = 0; i < mx->npeaks && !rc; i++) {
		const struct gp_mx_peaks *p = &mx->peaks[i];

		fputs(i ? ",\n  {\"pid\":" : "\n  {\"pid\":", out);
		fprintf(out, "%u,\"device\":%u,\"chip\":", m->procs[p->proc].pid, p->device);
		rc |= jstr(out, &b, p->chip ? gp_model_str(m, p->chip) : "");
		fprintf(out, ",\"cc\":\"%u.%u\",\"sm_count\":%u,\"sm_clock_khz\":%u,\"mem_clock_khz\":%u,"
			"\"bus_width\":%u,\"peak_flop_s\":{", p->p.cc_major, p->p.cc_minor, p->p.sm_count,
			p->p.sm_clock_khz, p->p.mem_clock_khz, p->p.bus_width);
		for (int c = 0; c < GP_MX_PREC; c++) {
			fprintf(out, "%s\"%s\":", c ? "," : "", prec_key[c]);
			jnum(out, p->p.flops[c]);
		}
		fputs("},\"peak_dram_bytes_s\":", out);
		jnum(out, p->p.dram_bw);
		fputc('}', out);
	}
	fputs("],\n \"kernels\":[", out);
	if (!(o = order(mx))) {
		gp_buf_free(&b);
		return -1;
	}
	for (size_t i = 0; i < mx->nk && !rc; i++) {
		const struct gp_mx_kernel *k = &mx->k[o[i]];
		const struct gp_mx_peaks *p = gp_mx_peaks_of(mx, k->proc, k->device);
		struct gp_roof r;

		gp_roof_eval(k->flops, (k->have & GP_MX_HAVE_DRAM) ? k->dram_total : 0, k->time_ns,
			     p ? &p->p : NULL, &r);
		fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", out);
		rc |= jstr(out, &b, gp_strtab_full(&m->strs, k->name));
		fputs(",\"mangled\":", out);
		rc |= jstr(out, &b, gp_model_str(m, k->name));
		fprintf(out, ",\"pid\":%u,\"device\":%u,\"launches\":%" PRIu64 ",\"time_ns\":%" PRIu64
			",\"cost_ns\":%" PRIu64 ",\"passes\":%u,\"flops\":{", m->procs[k->proc].pid,
			k->device, k->launches, k->time_ns, k->cost_ns, k->passes);
		for (int c = 0; c < GP_MX_PREC; c++) {
			fprintf(out, "%s\"%s\":", c ? "," : "", prec_key[c]);
			jnum(out, k->flops[c]);
		}
		fputs("},\"dram_read\":", out);
		jnum(out, k->dram_read);
		fputs(",\"dram_write\":", out);
		jnum(out, k->dram_write);
		fputs(",\"dram_bytes\":", out);
		if (k->have & GP_MX_HAVE_DRAM)
			jnum(out, k->dram_total);
		else
			fputs("null", out);
		fputs(",\"l2_bytes\":", out);
		if (k->have & GP_MX_HAVE_L2)
			jnum(out, k->l2);
		else
			fputs("null", out);
		fputs(",\"l1_bytes\":", out);
		if (k->have & GP_MX_HAVE_L1)
			jnum(out, k->l1);
		else
			fputs("null", out);
		fputs(",\"sm_clock_hz\":", out);
		if (k->sm_hz_n)
			jnum(out, k->sm_hz / (double)k->sm_hz_n);
		else
			fputs("null", out);
		fputs(",\"flop_s\":", out);
		jnum(out, k->time_ns ? r.flops / ((double)k->time_ns * 1e-9) : NAN);
		fputs(",\"dram_bytes_s\":", out);
		jnum(out, k->time_ns && (k->have & GP_MX_HAVE_DRAM) ? r.dram_bw : NAN);
		fputs(",\"intensity\":", out);
		jnum(out, (k->have & GP_MX_HAVE_DRAM) ? r.ai : NAN);
		fputs(",\"dominant\":", out);
		if (r.dominant >= 0)
			fprintf(out, "\"%s\"", prec_key[r.dominant]);
		else
			fputs("null", out);
		fputs(",\"pct_of_roof\":", out);
		jnum(out, r.verdict != GP_ROOF_UNKNOWN ? r.pct : NAN);
		fprintf(out, ",\"bound\":\"%s\",\"values_sum\":{", gp_roof_verdict_name(r.verdict));
		for (size_t j = 0; j < mx->nnames && !rc; j++) {
			if (j)
				fputc(',', out);
			rc |= jstr(out, &b, gp_model_str(m, mx->names[j]));
			fputc(':', out);
			jnum(out, k->vals[j]);
		}
		fputs("}}", out);
	}
	fputs("]}", out);
	free(o);
	gp_buf_free(&b);
	return rc ? -1 : 0;
}
