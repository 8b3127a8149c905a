/*
 * "gpuprof diff --json": the comparison as one JSON object, through the
 * JSON writer; traces sampled over time add gpu_metrics[], every device
 * and metric with both sides' averages in recorded units.  Runs offline
 * only.
 */
#include <math.h>
#include <stdio.h>

#include "base/jsonw.h"
#include "views/diffviews.h"

static void num_or_null(struct ga_jw *w, const char *key, double x)
{
	ga_jw_key(w, key);
	if (isfinite(x))
		ga_jw_rawf(w, "%.6g", x);
	else
		ga_jw_null(w);
}

int ga_diff_print_json(FILE *out, const struct ga_diff *d, const struct ga_diff_view *v)
{
	struct ga_jw w;
	size_t i;
	int err;

	ga_jw_init(&w, out);
	ga_jw_obj(&w, GA_JW_KEYLINES);
	ga_jw_ku64(&w, "schema", 2);
	ga_jw_kcstr(&w, "base", v->base);
	ga_jw_kcstr(&w, "new", v->nw);
	num_or_null(&w, "threshold_pct", v->threshold);
	num_or_null(&w, "fail_above_pct", v->fail_above >= 0 ? v->fail_above : NAN);
	ga_jw_ku64(&w, "grown", v->fail_above >= 0 ? ga_diff_grown(d, v->fail_above) : 0);
	if (d->summaries)
		ga_jw_kcstr(&w, "not_compared", "nvtx, memory_usage, findings, gpu_metrics "
			    "(a side is a summary)");
	ga_jw_key(&w, "items");
	ga_jw_arr(&w, GA_JW_LINES);
	for (i = 0; i < d->n; i++) {
		const struct ga_diff_item *it = &d->v[i];

		if (!ga_diff_shown(it, v->threshold))
			continue;
		ga_jw_obj(&w, GA_JW_COMPACT);
		ga_jw_kcstr(&w, "kind", ga_diff_kind_name(it->kind));
		ga_jw_kcstr(&w, "name", it->name);
		ga_jw_kbool(&w, "in_base", it->present[0]);
		ga_jw_kbool(&w, "in_new", it->present[1]);
		ga_jw_ku64(&w, "base_count", it->count[0]);
		ga_jw_ku64(&w, "new_count", it->count[1]);
		if (ga_diff_kind_bytes(it->kind)) {
			/* Peak memory in use: bytes, and allocations as the counts. */
			ga_jw_ku64(&w, "base_bytes", it->ns[0]);
			ga_jw_ku64(&w, "new_bytes", it->ns[1]);
			ga_jw_ki64(&w, "delta_bytes", ga_diff_delta(it));
		} else {
			ga_jw_ku64(&w, "base_ns", it->ns[0]);
			ga_jw_ku64(&w, "new_ns", it->ns[1]);
			ga_jw_ki64(&w, "delta_ns", ga_diff_delta(it));
		}
		num_or_null(&w, "change_pct", ga_diff_change_pct(it));
		num_or_null(&w, "ratio", ga_diff_ratio(it));
		ga_jw_end(&w);
	}
	ga_jw_end(&w);
	if (d->ngpu) {
		ga_jw_key(&w, "gpu_metrics");
		ga_jw_arr(&w, GA_JW_LINES);
		for (i = 0; i < d->ngpu; i++) {
			const struct ga_diff_gpu *x = &d->gpu[i];
			double pct = ga_diff_gpu_change_pct(x);

			if (v->threshold > 0 && !isnan(pct) && fabs(pct) < v->threshold)
				continue;
			ga_jw_obj(&w, GA_JW_COMPACT);
			ga_jw_kcstr(&w, "device", x->device);
			ga_jw_kcstr(&w, "metric", x->metric);
			ga_jw_kbool(&w, "in_base", x->present[0]);
			ga_jw_kbool(&w, "in_new", x->present[1]);
			ga_jw_ku64(&w, "base_samples", x->samples[0]);
			ga_jw_ku64(&w, "new_samples", x->samples[1]);
			num_or_null(&w, "base_avg", ga_diff_gpu_avg(x, 0));
			num_or_null(&w, "new_avg", ga_diff_gpu_avg(x, 1));
			num_or_null(&w, "change_pct", pct);
			ga_jw_end(&w);
		}
		ga_jw_end(&w);
	}
	ga_jw_end(&w);
	ga_jw_raw(&w, "\n");
	err = w.err;
	ga_jw_free(&w);
	return err ? -1 : 0;
}
