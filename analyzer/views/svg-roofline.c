/*
 * The roofline chart (views/svg.h): one chart per GPU model, stacked in
 * one SVG document.  Axes are log-log: arithmetic intensity (FLOP per DRAM
 * byte) across, achieved FLOP/s up.  The ceilings are the device's (as the
 * report's roofline table uses them: measured by gpuprof calibrate or from
 * specifications); each profiled kernel is a dot whose area is its total
 * GPU time, numbered by time and labelled by its short name where the
 * label finds room, listed beside the chart.  Runs offline only.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"
#include "model/hwmetrics.h"
#include "views/svg.h"

#define W 1300.0                   /* document width */
#define H 720.0                    /* height of one chart */
#define PX0 112.0                  /* plot area */
#define PX1 850.0
#define PY0 64.0
#define PY1 (H - 64.0)
#define LX 880.0                   /* legend column */
#define RMIN 3.0                   /* dot radii */
#define RMAX 26.0
#define NAMED 14                   /* dots labelled by name */
#define LISTED 22                  /* kernels in the list beside */
#define CH 6.4                     /* width of a character at 11 px, roughly */

static const char *const prec_color[GA_MX_PREC] = {
	[GP_PEAK_FP64] = "#7b4fa6", [GP_PEAK_FP32] = "#2e8b3a", [GP_PEAK_FP16] = "#9a9a1e",
	[GP_PEAK_TENSOR_FP16] = "#c0392b", [GP_PEAK_TENSOR_TF32] = "#e67e22",
	[GP_PEAK_TENSOR_FP8] = "#8c564b", [GP_PEAK_TENSOR_FP64] = "#d35fb7",
};
#define DRAM_COLOR "#1f5fbf"
#define L2_COLOR "#17a2b8"

static const char *verdict_color(enum ga_roof_verdict v)
{
	switch (v) {
	case GA_ROOF_MEMORY:
		return "#3b6fd4";
	case GA_ROOF_COMPUTE:
		return "#e4572e";
	case GA_ROOF_NEITHER:
		return "#8a8a8a";
	default:
		return "#c8c8c8";
	}
}

/* XML text: &, <, >, quotes escaped; control bytes dropped. */
static void xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c == '\'')
			fputs("&apos;", out);
		else if (c >= 0x20 || c == '\t')
			fputc(c, out);
	}
}

/* s cut to at most width characters (UTF-8 aware enough: never inside a sequence). */
static const char *cut(char *buf, size_t n, const char *s, size_t width)
{
	size_t len = strlen(s), at = 0, chars = 0;

	if (len < n && len <= width) {
		memcpy(buf, s, len + 1);
		return buf;
	}
	while (s[at] && chars + 1 < width && at + 4 < n) {
		at++;
		while (((unsigned char)s[at] & 0xC0) == 0x80)
			at++;
		chars++;
	}
	memcpy(buf, s, at);
	memcpy(buf + at, "\xe2\x80\xa6", 4);       /* "…" */
	return buf;
}

/* "1.2 TFLOP/s"-style numbers: value with an SI prefix. */
static const char *si(char *buf, size_t n, double v, const char *unit)
{
	static const char *const pre[] = { "", "K", "M", "G", "T", "P", "E" };
	int i = 0;

	while (v >= 1000 && i < 6) {
		v /= 1000;
		i++;
	}
	snprintf(buf, n, "%.3g %s%s", v, pre[i], unit);
	return buf;
}

/*
 * A kernel's label: its short name without namespaces and, for a template
 * instance, the functor or implementation it runs (the last identifier of
 * its template arguments that names a Functor, an ...Impl, ...Kernel or
 * ...Op): "vectorized_elementwise_kernel<MulFunctor>".
 */
static int ident_char(char c)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static const char *label_of(char *buf, size_t n, const char *shortn)
{
	const char *base = shortn, *end = NULL, *s, *pick = NULL;
	size_t picklen = 0;
	int depth = 0;

	/* The function's own name: after the last "::" outside brackets, up to its '<'. */
	for (s = shortn; *s && !end; s++) {
		if (*s == '(' || *s == '[')
			depth++;
		else if ((*s == ')' || *s == ']') && depth)
			depth--;
		else if (!depth && s[0] == ':' && s[1] == ':')
			base = s + 2;
		else if (!depth && *s == '<')
			end = s;
	}
	if (!end) {
		snprintf(buf, n, "%s", base);
		return buf;
	}
	for (s = end; *s; s++) {
		if (*s == '<') {
			depth++;
		} else if (*s == '>') {
			if (--depth == 0)
				break;
		} else if (ident_char(*s) && !ident_char(s[-1]) && !(*s >= '0' && *s <= '9')) {
			const char *e = s;
			size_t l;

			while (ident_char(*e))
				e++;
			l = (size_t)(e - s);
			if (memmem(s, l, "Functor", 7) ||
			    (l > 4 && (!memcmp(e - 4, "Impl", 4) || !memcmp(e - 2, "Op", 2))) ||
			    (l > 6 && (!memcmp(e - 6, "Kernel", 6) || !memcmp(e - 6, "kernel", 6)))) {
				pick = s;
				picklen = l;
			}
			s = e - 1;
		}
	}
	if (pick)
		snprintf(buf, n, "%.*s<%.*s>", (int)(end - base), base, (int)picklen, pick);
	else
		snprintf(buf, n, "%.*s", (int)(end - base), base);
	return buf;
}

struct axis {
	double lo, hi;                 /* decades: 10^lo .. 10^hi */
	double p0, p1;                 /* pixels */
};

static double map(const struct axis *a, double v)
{
	return a->p0 + (log10(v) - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

struct box {
	double x0, y0, x1, y1;
};

static int overlaps(const struct box *b, const struct box *all, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b->x0 < all[i].x1 && all[i].x0 < b->x1 && b->y0 < all[i].y1 && all[i].y0 < b->y1)
			return 1;
	return 0;
}

struct dot {
	uint32_t k;                    /* ga_mx kernel index */
	struct ga_roof r;
	double total_ns;               /* all launches in the traces */
	double x, y, rad;
	int edge;                      /* 1: no FLOPs (left edge), 2: no DRAM bytes (right edge) */
	int num;
	char name[160];                /* label_of() */
};

static int by_time(const void *a, const void *b)
{
	const struct dot *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* The device name of (proc, ordinal): the model that groups charts. */
static uint32_t model_of(const struct ga_model *m, uint32_t proc, uint32_t id)
{
	for (size_t i = 0; i < m->ndevrows; i++)
		if (m->devrows[i].proc == proc && m->devrows[i].id == id)
			return m->devs[m->devrows[i].dev].name;
	return 0;
}

static double kernel_total(const struct ga_model *m, const struct ga_mx_kernel *k)
{
	if (k->name < m->capstr2k && m->str2k[k->name])
		return (double)m->kstats[m->str2k[k->name] - 1].total;
	return (double)k->time_ns;
}

static void ceiling_source(FILE *out, const struct ga_mx_peaks *p)
{
	if (!p) {
		fputs("no ceilings recorded", out);
	} else if (p->measured) {
		fputs("peaks measured by gpuprof calibrate on ", out);
		fprintf(out, "%.10s", p->measured_on);
		if ((p->measured & ((1u << GA_MX_PREC) - 1)) != ((1u << GA_MX_PREC) - 1))
			fputs(" (others from specifications)", out);
	} else {
		fputs("peaks from specifications", out);
	}
}

static int chart(struct ga_analysis *an, FILE *out, uint32_t model, double top, int index)
{
	struct ga_model *m = &an->m;
	struct ga_mx *mx = &an->mx;
	const struct ga_mx_peaks *p = NULL;
	struct dot *d = NULL;
	struct box *boxes = NULL;
	size_t nd = 0, nb = 0;
	struct axis ax = { 0, 0, PX0, PX1 }, ay = { 0, 0, PY1, PY0 };
	double ai_lo = INFINITY, ai_hi = 0, y_lo = INFINITY, peak_hi = 0, tmax = 0;
	int show[GA_MX_PREC] = { 0 };
	char b1[64], b2[64], nbuf[256], tb[48];
	const char *mname = model ? ga_model_str(m, model) : "unknown GPU";
	/* The roofs' labels, drawn over the dots. */
	char *lbuf = NULL;
	size_t llen = 0;
	FILE *labels = open_memstream(&lbuf, &llen);

	if (!labels)
		return -1;

	for (size_t i = 0; i < mx->npeaks && !p; i++)
		if (model_of(m, mx->peaks[i].proc, mx->peaks[i].device) == model)
			p = &mx->peaks[i];
	if (!(d = calloc(mx->nk ? mx->nk : 1, sizeof(*d))) ||
	    !(boxes = calloc(2 * mx->nk + 256, sizeof(*boxes)))) {
		free(d);
		fclose(labels);
		free(lbuf);
		return -1;
	}
	for (size_t i = 0; i < mx->nk; i++) {
		const struct ga_mx_kernel *k = &mx->k[i];
		const struct ga_mx_peaks *kp = ga_mx_peaks_of(mx, k->proc, k->device);
		struct dot *t;

		if (model_of(m, k->proc, k->device) != model)
			continue;
		t = &d[nd++];
		t->k = (uint32_t)i;
		ga_roof_eval(k->flops, (k->have & GA_MX_HAVE_DRAM) ? k->dram_total : 0, k->time_ns,
			     kp ? &kp->p : NULL, &t->r);
		t->total_ns = kernel_total(m, k);
		label_of(t->name, sizeof(t->name), ga_strtab_short(&m->strs, k->name));
		if (t->total_ns > tmax)
			tmax = t->total_ns;
		for (int c = 0; c < GA_MX_PREC; c++)
			if (k->flops[c] > 0)
				show[c] = 1;
		if (t->r.flops > 0 && isfinite(t->r.ai) && t->r.ai > 0) {
			ai_lo = fmin(ai_lo, t->r.ai);
			ai_hi = fmax(ai_hi, t->r.ai);
		}
		if (t->r.flops > 0 && k->time_ns)
			y_lo = fmin(y_lo, t->r.flops / ((double)k->time_ns * 1e-9));
	}
	if (nd)
		qsort(d, nd, sizeof(*d), by_time);
	/* The usual roofs are always drawn; the other precisions where a kernel used them. */
	show[GP_PEAK_FP64] = show[GP_PEAK_FP32] = show[GP_PEAK_FP16] = show[GP_PEAK_TENSOR_FP16] = 1;
	if (p) {
		for (int c = 0; c < GA_MX_PREC; c++) {
			if (!show[c] || p->p.flops[c] <= 0) {
				show[c] = 0;
				continue;
			}
			peak_hi = fmax(peak_hi, p->p.flops[c]);
			if (p->p.dram_bw > 0) {
				ai_lo = fmin(ai_lo, p->p.flops[c] / p->p.dram_bw);
				ai_hi = fmax(ai_hi, p->p.flops[c] / p->p.dram_bw);
			}
		}
	} else {
		memset(show, 0, sizeof(show));
	}
	if (!isfinite(ai_lo) || ai_hi <= 0) {
		ai_lo = 0.1;
		ai_hi = 100;
	}
	ax.lo = floor(log10(ai_lo / 2));
	ax.hi = ceil(log10(ai_hi * 2));
	if (ax.hi - ax.lo < 4)
		ax.lo = ax.hi - 4;
	if (ax.hi - ax.lo > 8)
		ax.lo = ax.hi - 8;
	for (size_t i = 0; i < nd; i++)
		peak_hi = fmax(peak_hi, d[i].r.flops / fmax(1e-9, (double)mx->k[d[i].k].time_ns * 1e-9));
	if (!(peak_hi > 0))
		peak_hi = 1e12;
	ay.hi = ceil(log10(peak_hi * 1.6));
	if (p && p->p.dram_bw > 0)
		y_lo = fmin(y_lo, p->p.dram_bw * pow(10, ax.lo));
	for (size_t i = 0; i < nd; i++)
		if (d[i].r.flops <= 0 && d[i].r.dram_bw > 0)
			y_lo = fmin(y_lo, d[i].r.dram_bw * pow(10, ax.lo));
	ay.lo = isfinite(y_lo) && y_lo > 0 ? floor(log10(y_lo / 1.5)) : ay.hi - 5;
	if (ay.hi - ay.lo < 4)
		ay.lo = ay.hi - 4;
	if (ay.hi - ay.lo > 9)
		ay.lo = ay.hi - 9;
	ay.p0 = top + PY1;
	ay.p1 = top + PY0;

	fprintf(out, "<g id=\"chart-%d\" class=\"chart\" data-model=\"", index);
	xml(out, mname);
	fputs("\">\n", out);
	/* Title. */
	fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" class=\"title\">Roofline: ", PX0, top + 26);
	xml(out, mname);
	if (p && p->chip) {
		fputs(" (", out);
		xml(out, ga_model_str(m, p->chip));
		fputc(')', out);
	}
	fprintf(out, "</text>\n<text x=\"%.0f\" y=\"%.1f\" class=\"sub\">", PX0, top + 46);
	ceiling_source(out, p);
	fprintf(out, "; %zu profiled %s; dot area: total GPU time</text>\n", nd,
		nd == 1 ? "kernel" : "kernels");
	/* Frame, grid, ticks. */
	fprintf(out, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" class=\"frame\"/>\n",
		PX0, top + PY0, PX1 - PX0, PY1 - PY0);
	for (double e = ax.lo; e <= ax.hi + 1e-9; e++) {
		double x = map(&ax, pow(10, e));

		if (e > ax.lo && e < ax.hi)
			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n",
				x, top + PY0, x, top + PY1);
		for (int s = 2; s <= 9 && e < ax.hi; s++) {
			double xs = map(&ax, s * pow(10, e));
			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"minor\"/>\n",
				xs, top + PY1, xs, top + PY1 - 4);
		}
		if (e >= -3 && e <= 4)
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%g</text>\n",
				x, top + PY1 + 17, pow(10, e));
		else
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">10"
				"<tspan dy=\"-5\" font-size=\"8\">%.0f</tspan></text>\n", x, top + PY1 + 17, e);
	}
	for (double e = ay.lo; e <= ay.hi + 1e-9; e++) {
		double y = map(&ay, pow(10, e));

		if (e > ay.lo && e < ay.hi)
			fprintf(out, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\"/>\n",
				PX0, y, PX1, y);
		fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>\n",
			PX0 - 6, y + 4, si(b1, sizeof(b1), pow(10, e), "FLOP/s"));
	}
	fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" class=\"axis\" text-anchor=\"middle\">"
		"Arithmetic intensity (FLOP per DRAM byte)</text>\n", (PX0 + PX1) / 2, top + PY1 + 40);
	fprintf(out, "<text transform=\"translate(%.0f %.1f) rotate(-90)\" class=\"axis\" "
		"text-anchor=\"middle\">Achieved FLOP/s (all precisions)</text>\n", 20.0,
		top + (PY0 + PY1) / 2);
	fprintf(out, "<clipPath id=\"clip-%d\"><rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" "
		"height=\"%.1f\"/></clipPath>\n", index, PX0, top + PY0, PX1 - PX0, PY1 - PY0);

	double xlo = pow(10, ax.lo), xhi = pow(10, ax.hi);
	/* Dots: positions first, so that the roofs' labels avoid them. */
	for (size_t i = 0; i < nd; i++) {
		struct dot *t = &d[i];
		const struct ga_mx_kernel *k = &mx->k[t->k];
		double secs = (double)k->time_ns * 1e-9, fs = secs > 0 ? t->r.flops / secs : 0;

		t->num = (int)i + 1;
		t->rad = tmax > 0 ? fmax(RMIN, RMAX * sqrt(t->total_ns / tmax)) : RMIN;
		if (t->r.flops > 0 && isfinite(t->r.ai) && t->r.ai > 0 && fs > 0) {
			t->x = map(&ax, fmin(fmax(t->r.ai, xlo), xhi));
			t->y = map(&ay, fmin(fmax(fs, pow(10, ay.lo)), pow(10, ay.hi)));
		} else if (t->r.flops > 0 && fs > 0) {
			t->edge = 2;
			t->x = PX1;
			t->y = map(&ay, fmin(fmax(fs, pow(10, ay.lo)), pow(10, ay.hi)));
		} else {
			/* No FLOPs: at the left edge, as high as its DRAM bandwidth reaches there. */
			t->edge = 1;
			t->x = PX0;
			t->y = t->r.dram_bw > 0 ? map(&ay, fmin(fmax(t->r.dram_bw * xlo, pow(10, ay.lo)),
							      pow(10, ay.hi)))
						: top + PY1;
		}
	}
	for (size_t i = 0; i < nd; i++)
		boxes[nb++] = (struct box){ d[i].x - d[i].rad, d[i].y - d[i].rad, d[i].x + d[i].rad,
					    d[i].y + d[i].rad };
	/* Ceilings: bandwidth slopes up to the highest roof, roofs from their ridge on. */
	fprintf(out, "<g id=\"ceilings-%d\" clip-path=\"url(#clip-%d)\">\n", index, index);
	/* Pixels across per pixel up along a bandwidth slope. */
	double slope_px = ((PX1 - PX0) / (ax.hi - ax.lo)) / ((PY1 - PY0) / (ay.hi - ay.lo));
	if (p) {
		struct {
			double bw;
			const char *name, *color, *cls;
			int measured;
		} bws[2] = {
			{ p->p.dram_bw, "DRAM", DRAM_COLOR, "ceiling", (p->measured & GA_MX_MEAS_DRAM) != 0 },
			{ p->l2_bw, "L2", L2_COLOR, "ceiling dashed", 1 },
		};
		int order[GA_MX_PREC], no = 0;

		for (int b = 0; b < 2; b++) {
			double bw = bws[b].bw, xe, x0, y0, x1, y1, ang;

			if (bw <= 0)
				continue;
			xe = peak_hi > 0 ? fmin(xhi, peak_hi / bw) : xhi;
			x0 = map(&ax, xlo);
			y0 = map(&ay, bw * xlo);
			x1 = map(&ax, xe);
			y1 = map(&ay, bw * xe);
			fprintf(out, "<line class=\"%s\" data-ceiling=\"%s\" data-value=\"%.6g\" x1=\"%.1f\" "
				"y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", bws[b].cls,
				bws[b].name, bw, x0, y0, x1, y1, bws[b].color);
			/*
			 * Its label along the slope, where the slope is inside the plot,
			 * at the first place clear of dots and labels.
			 */
			ang = atan2(y1 - y0, x1 - x0);
			{
				static const double at[] = { 0.2, 0.35, 0.5, 0.65, 0.1, 0.8, 0.05 };
				double lo = fmax(xlo, pow(10, ay.lo) / bw), hi = fmin(xe, pow(10, ay.hi) / bw);
				double ux = cos(ang), uy = sin(ang), nx = uy, ny = -ux, len, px = 0, py = 0;
				char text[96];
				int ok = 0;

				snprintf(text, sizeof(text), "%s %s%s", bws[b].name, si(b1, sizeof(b1), bw, "B/s"),
					 bws[b].measured ? " (measured)" : " (spec)");
				len = 7.0 * (double)strlen(text);
				for (size_t f = 0; hi > lo && f < sizeof(at) / sizeof(at[0]) && !ok; f++) {
					double xl = lo * pow(hi / lo, b ? fmin(0.95, at[f] + 0.3) : at[f]);

					px = map(&ax, xl);
					py = map(&ay, bw * xl);
					ok = 1;
					for (double t = 0; t <= len && ok; t += 8) {
						double cx = px + t * ux + 9 * nx, cy = py + t * uy + 9 * ny;
						struct box bx = { cx - 5, cy - 6, cx + 5, cy + 6 };

						ok = !overlaps(&bx, boxes, nb) && cx < PX1 && cy > top + PY0;
					}
					if (!ok && f + 1 == sizeof(at) / sizeof(at[0])) {
						xl = lo * pow(hi / lo, b ? 0.55 : 0.2);
						px = map(&ax, xl);
						py = map(&ay, bw * xl);
						ok = 1;
					}
				}
				if (ok) {
					fprintf(labels, "<text class=\"clabel\" fill=\"%s\" transform=\"translate(%.1f %.1f) "
						"rotate(%.2f)\" dy=\"-5\">%s</text>\n", bws[b].color, px, py,
						ang * 180 / M_PI, text);
					for (double t = 0; t <= len; t += 8) {
						double cx = px + t * ux + 9 * nx, cy = py + t * uy + 9 * ny;

						boxes[nb++] = (struct box){ cx - 5, cy - 6, cx + 5, cy + 6 };
					}
				}
			}
		}
		/* Roofs, labels from the highest down without overlapping. */
		for (int c = 0; c < GA_MX_PREC; c++)
			if (show[c])
				order[no++] = c;
		for (int i = 1; i < no; i++)
			for (int j = i; j > 0 && p->p.flops[order[j]] > p->p.flops[order[j - 1]]; j--) {
				int t = order[j];
				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		for (int i = 0; i < no; i++) {
			int c = order[i];
			double v = p->p.flops[c], y = map(&ay, v);
			double xr = p->p.dram_bw > 0 ? fmax(xlo, v / p->p.dram_bw) : xlo;
			char text[128];
			double lw, lx;
			struct box bx;

			snprintf(text, sizeof(text), "%s %s%s", ga_mx_prec[c].label,
				 si(b1, sizeof(b1), v, "FLOP/s"), (p->measured >> c) & 1 ? " (measured)" : "");
			lw = 7.0 * (double)strlen(text);
			/* Right of where the bandwidth slope leaves the label's height. */
			lx = map(&ax, xr) + 18 * slope_px + 6;

			fprintf(out, "<line class=\"ceiling\" data-ceiling=\"%s\" data-value=\"%.6g\" "
				"x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
				ga_mx_prec[c].label, v, map(&ax, xr), y, PX1, y, prec_color[c]);
			/*
			 * From where the roof starts (dots of compute-bound kernels sit
			 * further right): above its line, else below it, else at the
			 * plot's right end.
			 */
			if (lx + lw > PX1 - 4)
				lx = PX1 - 4 - lw;
			/* Sliding right along the roof, above then below it, until it is clear. */
			for (double x = lx;; x += 30) {
				double at = fmin(x, PX1 - 4 - lw);

				bx = (struct box){ at, y - 16, at + lw, y - 3 };
				if (!overlaps(&bx, boxes, nb))
					break;
				bx = (struct box){ at, y + 3, at + lw, y + 16 };
				if (!overlaps(&bx, boxes, nb))
					break;
				bx = (struct box){ at, y - 30, at + lw, y - 17 };
				if (!overlaps(&bx, boxes, nb) && bx.y0 > top + PY0)
					break;
				if (at >= PX1 - 4 - lw) {
					bx = (struct box){ lx, y - 16, lx + lw, y - 3 };
					break;
				}
			}
			fprintf(labels, "<text class=\"clabel\" fill=\"%s\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
				prec_color[c], bx.x0, bx.y1 - 2, text);
			boxes[nb++] = bx;
		}
	}
	fputs("</g>\n", out);

	fprintf(out, "<g id=\"kernels-%d\">\n", index);
	for (size_t i = nd; i-- > 0;) {
		/* qsort put the most time first; draw it first so small dots stay on top. */
		struct dot *t = &d[nd - 1 - i];
		const struct ga_mx_kernel *k = &mx->k[t->k];
		const char *col = verdict_color(t->r.verdict);

		fprintf(out, "<circle class=\"kernel\" data-kernel=\"%d\" cx=\"%.1f\" cy=\"%.1f\" "
			"r=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\">", t->num, t->x, t->y,
			t->rad, t->edge ? "none" : col, t->edge ? "0" : "0.55", col);
		fprintf(out, "<title>%d. ", t->num);
		xml(out, ga_strtab_full(&m->strs, k->name));
		fprintf(out, "\n%s total GPU time; %s per profiled launch", 
			ga_fmt_time(tb, sizeof(tb), (uint64_t)t->total_ns),
			ga_fmt_time(b2, sizeof(b2), k->launches ? k->time_ns / k->launches : 0));
		if (k->time_ns)
			fprintf(out, "\n%s, %s DRAM", si(b1, sizeof(b1), t->r.flops / ((double)k->time_ns * 1e-9), "FLOP/s"),
				si(b2, sizeof(b2), t->r.dram_bw, "B/s"));
		if (isfinite(t->r.ai))
			fprintf(out, ", %.3g FLOP/B", t->r.ai);
		if (t->r.verdict != GA_ROOF_UNKNOWN)
			fprintf(out, "\n%s: %.0f%% of the %s roof", ga_roof_verdict_name(t->r.verdict),
				t->r.pct, t->r.memory_side ? "DRAM" : ga_mx_prec[t->r.dominant].label);
		if (t->edge == 1)
			fputs("\nno FLOPs: drawn at the left edge at its DRAM bandwidth", out);
		else if (t->edge == 2)
			fputs("\nno DRAM bytes: drawn at the right edge", out);
		fputs("</title></circle>\n", out);
	}
	/* Labels: the number and (for the first NAMED) the short name, where they fit. */
	for (size_t i = 0; i < nd; i++) {
		struct dot *t = &d[i];
		char lab[320];
		int placed = 0;

		for (int pass = 0; pass < 2 && !placed; pass++) {
			static const double dx[] = { 1, -1, 0, 0, 1, -1, 1, -1 };
			static const double dy[] = { 0, 0, -1, 1, -1, -1, 1, 1 };
			double w, hgt = 12;

			if (pass == 0 && i >= NAMED)
				continue;
			if (pass == 0)
				snprintf(lab, sizeof(lab), "%d %s", t->num, cut(nbuf, sizeof(nbuf), t->name, 36));
			else
				snprintf(lab, sizeof(lab), "%d", t->num);
			w = CH * (double)strlen(lab);
			for (int s = 0; s < 8 && !placed; s++) {
				double off = t->rad + 3, lx, ly;
				struct box bx;

				lx = dx[s] > 0 ? t->x + off : dx[s] < 0 ? t->x - off - w : t->x - w / 2;
				ly = dy[s] > 0 ? t->y + off + hgt - 2 : dy[s] < 0 ? t->y - off : t->y + 4;
				if (dx[s] && dy[s]) {
					lx = dx[s] > 0 ? t->x + t->rad * 0.7 : t->x - t->rad * 0.7 - w;
					ly = dy[s] > 0 ? t->y + t->rad * 0.7 + hgt : t->y - t->rad * 0.7;
				}
				bx = (struct box){ lx, ly - hgt + 2, lx + w, ly + 2 };
				if (bx.x0 < PX0 + 2 || bx.x1 > PX1 - 2 || bx.y0 < top + PY0 + 2 ||
				    bx.y1 > top + PY1 - 2 || overlaps(&bx, boxes, nb))
					continue;
				boxes[nb++] = bx;
				placed = 1;
				fprintf(out, "<text class=\"klabel\" x=\"%.1f\" y=\"%.1f\">", lx, ly);
				xml(out, lab);
				fputs("</text>\n", out);
			}
		}
	}
	fputs("</g>\n", out);
	if (fclose(labels)) {
		free(lbuf);
		free(d);
		free(boxes);
		return -1;
	}
	fprintf(out, "<g id=\"roof-labels-%d\">\n", index);
	if (llen)
		fwrite(lbuf, 1, llen, out);
	fputs("</g>\n", out);
	free(lbuf);

	/* Legend and the list of kernels beside the plot. */
	{
		double y = top + PY0 + 4;
		static const enum ga_roof_verdict vs[] = { GA_ROOF_COMPUTE, GA_ROOF_MEMORY,
							   GA_ROOF_NEITHER, GA_ROOF_UNKNOWN };

		fprintf(out, "<g id=\"legend-%d\">\n", index);
		fprintf(out, "<text class=\"lhead\" x=\"%.0f\" y=\"%.1f\">Kernels by verdict</text>\n", LX, y + 8);
		y += 24;
		for (size_t v = 0; v < sizeof(vs) / sizeof(vs[0]); v++, y += 18)
			fprintf(out, "<circle cx=\"%.0f\" cy=\"%.1f\" r=\"6\" fill=\"%s\" fill-opacity=\"0.55\" "
				"stroke=\"%s\"/><text class=\"ltext\" x=\"%.0f\" y=\"%.1f\">%s</text>\n",
				LX + 6, y, verdict_color(vs[v]), verdict_color(vs[v]), LX + 18, y + 4,
				vs[v] == GA_ROOF_NEITHER ? "neither (latency, occupancy)"
				: vs[v] == GA_ROOF_UNKNOWN ? "unknown (no ceiling or time)"
							   : ga_roof_verdict_name(vs[v]));
		fprintf(out, "<circle cx=\"%.0f\" cy=\"%.1f\" r=\"6\" fill=\"none\" stroke=\"#555\"/>"
			"<text class=\"ltext\" x=\"%.0f\" y=\"%.1f\">hollow: no FLOPs or no DRAM bytes</text>\n",
			LX + 6, y, LX + 18, y + 4);
		y += 28;
		fprintf(out, "<text class=\"lhead\" x=\"%.0f\" y=\"%.1f\">#<tspan x=\"%.0f\">total time"
			"</tspan><tspan x=\"%.0f\">kernel</tspan></text>\n", LX, y, LX + 22, LX + 96);
		y += 18;
		for (size_t i = 0; i < nd && i < LISTED; i++, y += 17) {
			fprintf(out, "<text class=\"ltext\" x=\"%.0f\" y=\"%.1f\"><tspan fill=\"%s\">%d</tspan>"
				"<tspan x=\"%.0f\">%s</tspan><tspan x=\"%.0f\">", LX, y,
				verdict_color(d[i].r.verdict), d[i].num, LX + 22,
				ga_fmt_time(tb, sizeof(tb), (uint64_t)d[i].total_ns), LX + 96);
			xml(out, cut(nbuf, sizeof(nbuf), d[i].name, 48));
			fputs("</tspan></text>\n", out);
		}
		if (nd > LISTED)
			fprintf(out, "<text class=\"ltext\" x=\"%.0f\" y=\"%.1f\">(%zu more: see the "
				"dots' tooltips)</text>\n", LX, y, nd - LISTED);
		fputs("</g>\n", out);
	}
	fputs("</g>\n", out);
	free(d);
	free(boxes);
	return 0;
}

int ga_svg_roofline(struct ga_analysis *an, FILE *out)
{
	struct ga_model *m = &an->m;
	struct ga_mx *mx = &an->mx;
	uint32_t *models = calloc(mx->nk + 1, sizeof(*models));
	size_t nm = 0;
	int rc = 0;

	if (!models)
		return -1;
	/* One chart per GPU model, in order of first profiled kernel. */
	for (size_t i = 0; i < mx->nk; i++) {
		uint32_t md = model_of(m, mx->k[i].proc, mx->k[i].device);
		size_t j;

		for (j = 0; j < nm && models[j] != md; j++)
			;
		if (j == nm)
			models[nm++] = md;
	}
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, "
		"Arial, sans-serif\">\n", W, H * (double)(nm ? nm : 1), W, H * (double)(nm ? nm : 1));
	fputs("<style>\n"
	      ".title{font-size:17px;font-weight:bold;fill:#222}\n"
	      ".sub{font-size:12px;fill:#555}\n"
	      ".frame{fill:#fff;stroke:#444;stroke-width:1}\n"
	      ".grid{stroke:#e3e3e3;stroke-width:1}\n"
	      ".minor{stroke:#999;stroke-width:1}\n"
	      ".tick{font-size:11px;fill:#333}\n"
	      ".axis{font-size:13px;fill:#222}\n"
	      ".ceiling{stroke-width:2.2;fill:none}\n"
	      ".dashed{stroke-dasharray:7 4}\n"
	      ".clabel{font-size:11.5px;font-weight:bold;paint-order:stroke;stroke:#fff;"
	      "stroke-width:3px;stroke-linejoin:round}\n"
	      ".klabel{font-size:11px;fill:#111;paint-order:stroke;stroke:#fff;stroke-width:3px;"
	      "stroke-linejoin:round}\n"
	      ".lhead{font-size:12.5px;font-weight:bold;fill:#222}\n"
	      ".ltext{font-size:11px;fill:#222}\n"
	      "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n", out);
	if (!nm)
		fprintf(out, "<text x=\"%.0f\" y=\"60\" class=\"title\">Roofline: no kernel was "
			"profiled (record with gpuprof run --metrics)</text>\n", PX0);
	for (size_t i = 0; i < nm && !rc; i++)
		rc = chart(an, out, models[i], H * (double)i, (int)i);
	fputs("</svg>\n", out);
	free(models);
	return rc;
}

int ga_svg_roofline_write(struct ga_analysis *an, const char *path, char *const *inputs, int n)
{
	struct ga_output o;
	int rc;

	if (ga_output_open(&o, path, inputs, n))
		return -1;
	rc = ga_svg_roofline(an, o.f);
	if (rc)
		fputs("gpuprof: out of memory\n", stderr);
	if (ga_output_close(&o, rc == 0))
		return -1;
	return rc ? -1 : 0;
}
