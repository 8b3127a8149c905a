/*
 * The report's hardware metrics (model/hwmetrics.h): the "Metrics:" header
 * line (printed by the header section), and the roofline section: the
 * roofline table, the table of the metrics asked for, the devices'
 * ceilings.  Runs offline only.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/hwmetrics.h"
#include "views/table.h"
#include "views/text.h"

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

void ga_text_metrics_header(const struct ga_mx *mx, struct ga_model *m, FILE *out, int lw)
{
	const char *st = status_text(mx->status);
	uint64_t profiled = mx->has_info ? mx->profiled : mx->records;

	if (!ga_mx_any(mx))
		return;
	fprintf(out, "%-*s", lw, "Metrics:");
	if (mx->set) {
		ga_fmt_put(out, ga_model_str(m, mx->set));
		fputs(": ", out);
	}
	if (mx->spread && mx->spread == mx->records) {
		/* --metrics-replay=launches: a result per kernel, its groups from successive launches. */
		fprintf(out, "%" PRIu64 " %s measured over successive launches", profiled,
			plural(profiled, "kernel", "kernels"));
		if (mx->passes)
			fprintf(out, " (%u single-pass %s, one launch each", mx->passes,
				plural(mx->passes, "group", "groups"));
	} else {
		fprintf(out, "%" PRIu64 " %s profiled by kernel replay", profiled,
			plural(profiled, "launch", "launches"));
		if (mx->spread)
			fprintf(out, " or over successive launches");
		if (mx->passes)
			fprintf(out, " (%u %s each", mx->passes, plural(mx->passes, "pass", "passes"));
	}
	if (mx->has_info && mx->cost_ns)
		fprintf(out, "%s%.1f ms inside the launch calls", mx->passes ? ", " : " (",
			(double)mx->cost_ns / 1e6);
	if (mx->passes || (mx->has_info && mx->cost_ns))
		fputc(')', out);
	if (mx->spread && ga_mx_partial(mx))
		fprintf(out, ", %" PRIu64 " of them in only some groups (their launches stopped first)",
			ga_mx_partial(mx));
	if (mx->cached)
		fprintf(out, ", %" PRIu64 " from the metrics cache", mx->cached);
	if (st)
		fprintf(out, "; %s", st);
	fputc('\n', out);
	if (profiled && mx->spread)
		fprintf(out, "%-*sprofiled launches: kernel time from gpu__time_duration where the activity record has none\n",
			lw, "");
	else if (profiled)
		fprintf(out, "%-*sprofiled launches: kernel time from gpu__time_duration\n",
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
			fprintf(out, "%s%" PRIu64 " that could not be replayed", sep, mx->failed);
			sep = ", ";
		}
		if (mx->skipped_other)
			fprintf(out, "%s%" PRIu64 " selected but skipped (nested or too many in flight)",
				sep, mx->skipped_other);
		fputc('\n', out);
	}
}

static int add_rate(struct ga_table *t, double flop_s)
{
	return flop_s > 0 ? ga_table_addf(t, "%.2f", flop_s / 1e12) : ga_table_add(t, "-");
}

static double tensor(const double *v)
{
	return v[GP_PEAK_TENSOR_FP16] + v[GP_PEAK_TENSOR_TF32] + v[GP_PEAK_TENSOR_FP8] +
	       v[GP_PEAK_TENSOR_FP64];
}

static int print_roofline(const struct ga_mx *mx, struct ga_model *m, const uint32_t *o,
			  size_t n, size_t name_width, FILE *out)
{
	struct ga_table t;
	char nb[1024], tb[48];
	int rc = 0;

	ga_table_init(&t, 11);
	ga_table_col(&t, 0, "Prof", 1, 0);
	ga_table_col(&t, 1, "Avg time", 1, 0);
	ga_table_col(&t, 2, "FP64 TF/s", 1, 0);
	ga_table_col(&t, 3, "FP32 TF/s", 1, 0);
	ga_table_col(&t, 4, "FP16 TF/s", 1, 0);
	ga_table_col(&t, 5, "Tensor TF/s", 1, 0);
	ga_table_col(&t, 6, "DRAM GB/s", 1, 0);
	ga_table_col(&t, 7, "FLOP/B", 1, 0);
	ga_table_col(&t, 8, "Of roof", 1, 0);
	ga_table_col(&t, 9, "Bound", 0, 0);
	ga_table_col(&t, 10, "Name", 0, 0);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct ga_mx_kernel *k = &mx->k[o[i]];
		const struct ga_mx_peaks *p = ga_mx_peaks_of(mx, k->proc, k->device);
		struct ga_roof r;

		ga_roof_eval(k->flops, (k->have & GA_MX_HAVE_DRAM) ? k->dram_total : 0, k->time_ns,
			     p ? &p->p : NULL, &r);
		rc |= ga_table_addf(&t, "%" PRIu64, k->launches);
		rc |= ga_table_add(&t, k->launches && k->time_ns
					       ? ga_fmt_time(tb, sizeof(tb), k->time_ns / k->launches)
					       : "-");
		rc |= add_rate(&t, r.flop_s[GP_PEAK_FP64]);
		rc |= add_rate(&t, r.flop_s[GP_PEAK_FP32]);
		rc |= add_rate(&t, r.flop_s[GP_PEAK_FP16]);
		rc |= add_rate(&t, tensor(r.flop_s));
		if ((k->have & GA_MX_HAVE_DRAM) && k->time_ns)
			rc |= ga_table_addf(&t, "%.1f", r.dram_bw / 1e9);
		else
			rc |= ga_table_add(&t, "-");
		if (!(k->have & GA_MX_HAVE_DRAM) || !k->time_ns || (r.flops <= 0 && !isinf(r.ai)))
			rc |= ga_table_add(&t, r.flops <= 0 && (k->have & GA_MX_HAVE_DRAM) ? "0" : "-");
		else if (isinf(r.ai))
			rc |= ga_table_add(&t, "inf");
		else
			rc |= ga_table_addf(&t, r.ai < 10 ? "%.3g" : "%.0f", r.ai);
		if (r.verdict == GA_ROOF_UNKNOWN)
			rc |= ga_table_add(&t, "-");
		else
			rc |= ga_table_addf(&t, "%.0f%% %s", r.pct,
					    r.memory_side ? "DRAM" : ga_mx_prec[r.dominant].name);
		rc |= ga_table_add(&t, ga_roof_verdict_name(r.verdict));
		if (k->cached) {
			char cb[1100];

			snprintf(cb, sizeof(cb), "(cached) %s",
				 ga_fmt_trunc(nb, sizeof(nb), ga_strtab_full(&m->strs, k->name),
					      name_width > 9 ? name_width - 9 : name_width));
			rc |= ga_table_add(&t, cb);
		} else {
			rc |= ga_table_add(&t, ga_fmt_trunc(nb, sizeof(nb),
							    ga_strtab_full(&m->strs, k->name), name_width));
		}
	}
	if (!rc) {
		fputs("Roofline (profiled launches; TF/s = 10^12 FLOP/s, FLOP/B = FLOPs per DRAM byte):\n",
		      out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	return rc ? -1 : 0;
}

static void print_peaks(const struct ga_mx *mx, struct ga_model *m, FILE *out)
{
	for (size_t i = 0; i < mx->npeaks; i++) {
		const struct ga_mx_peaks *p = &mx->peaks[i];
		int any = 0;

		fprintf(out, "Ceilings of cuda:%u", p->device);
		if (m->nprocs > 1)
			fprintf(out, " [pid %u]", m->procs[p->proc].pid);
		fprintf(out, " (%s, cc %u.%u, %u SMs at %.0f MHz, %.0f MHz memory, %u-bit bus): ",
			p->chip ? ga_model_str(m, p->chip) : "?", p->p.cc_major, p->p.cc_minor,
			p->p.sm_count, p->p.sm_clock_khz / 1e3, p->p.mem_clock_khz / 1e3,
			p->p.bus_width);
		for (int c = 0; c < GA_MX_PREC; c++) {
			if (p->p.flops[c] <= 0)
				continue;
			fprintf(out, "%s%s %.1f", any ? ", " : "", ga_mx_prec[c].name, p->p.flops[c] / 1e12);
			any = 1;
		}
		fprintf(out, "%s DRAM %.0f GB/s", any ? " TF/s;" : " FLOP ceilings unknown;",
			p->p.dram_bw / 1e9);
		if (p->l2_bw > 0)
			fprintf(out, ", L2 %.0f GB/s", p->l2_bw / 1e9);
		if (p->measured) {
			fprintf(out, "; measured by gpuprof calibrate on %.10s", p->measured_on);
			if ((p->measured & ((1u << GA_MX_PREC) - 1)) != (1u << GA_MX_PREC) - 1 ||
			    !(p->measured & GA_MX_MEAS_DRAM)) {
				const char *sep = " (";

				for (int c = 0; c < GA_MX_PREC; c++)
					if (p->p.flops[c] > 0 && !((p->measured >> c) & 1)) {
						fprintf(out, "%s%s", sep, ga_mx_prec[c].name);
						sep = ", ";
					}
				if (!(p->measured & GA_MX_MEAS_DRAM))
					fprintf(out, "%sDRAM", sep);
				if (*sep == ',')
					fputs(" from specifications)", out);
			}
			fputc('\n', out);
		} else {
			fputs("; from specifications\n", out);
		}
	}
}

static int print_values(const struct ga_mx *mx, struct ga_model *m, const uint32_t *o, size_t n,
			size_t name_width, FILE *out)
{
	struct ga_table t;
	char nb[1024];
	int rc = 0;

	ga_table_init(&t, 4);
	ga_table_col(&t, 0, "Prof", 1, 0);
	ga_table_col(&t, 1, "Avg per launch", 1, 0);
	ga_table_col(&t, 2, "Metric", 0, 0);
	ga_table_col(&t, 3, "Name", 0, 0);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct ga_mx_kernel *k = &mx->k[o[i]];

		for (size_t j = 0; j < mx->nnames && !rc; j++) {
			rc |= ga_table_addf(&t, "%" PRIu64, k->launches);
			if (isnan(k->vals[j]))
				rc |= ga_table_add(&t, "-");
			else
				rc |= ga_table_addf(&t, "%.6g", k->launches ? k->vals[j] / (double)k->launches : 0);
			rc |= ga_table_add(&t, ga_model_str(m, mx->names[j]));
			rc |= ga_table_add(&t, j ? "" : ga_fmt_trunc(nb, sizeof(nb),
					   ga_strtab_full(&m->strs, k->name), name_width));
		}
	}
	if (!rc) {
		fputs("Metrics (as collected, averaged over profiled launches):\n", out);
		ga_table_print(&t, out);
	}
	ga_table_free(&t);
	return rc ? -1 : 0;
}

static int print_metrics(const struct ga_mx *mx, struct ga_model *m, size_t top, size_t name_width,
			 FILE *out)
{
	const char *set = mx->set ? ga_model_str(m, mx->set) : "roofline";
	uint32_t *o;
	size_t n;
	int rc = 0;

	if (!ga_mx_any(mx))
		return 0;
	if (!mx->nk) {
		fputs("Roofline: no launch was profiled\n", out);
		return 0;
	}
	if (!(o = ga_mx_order(mx, m)))
		return -1;
	n = top && top < mx->nk ? top : mx->nk;
	rc = print_roofline(mx, m, o, n, name_width, out);
	if (!rc) {
		if (n < mx->nk)
			fprintf(out, "(%zu more kernels; --top 0 shows all)\n", mx->nk - n);
		print_peaks(mx, m, out);
		fputs(mx->spread ? "Metrics are warm-cache (no flush between passes) at the clocks the GPU ran; values measured over successive launches assume those launches did the same work.\n"
				 : "Metrics are warm-cache (no flush between replay passes) at the clocks the GPU ran.\n",
		      out);
		if (mx->cached)
			fputs("(cached): values from the metrics cache, measured in an earlier run; this run did not replay the kernel.\n",
			      out);
	}
	if (!rc && strcmp(set, "roofline")) {
		fputc('\n', out);
		rc = print_values(mx, m, o, n, name_width, out);
	}
	free(o);
	return rc;
}

static int want(const struct ga_text *r)
{
	return ga_mx_any(&r->an->mx);
}

static int print(struct ga_text *r, FILE *out)
{
	if (r->an->mx.oom)
		return -1;
	return print_metrics(&r->an->mx, r->m, (size_t)r->o.top,
			     r->o.full_names ? 0 : GA_TEXT_NAME_WIDTH, out);
}

const struct ga_text_section ga_text_roofline = { "roofline", want, print };
