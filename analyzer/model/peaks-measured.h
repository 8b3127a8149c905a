/*
 * Peaks measured by gpuprof calibrate (gpuprof/peakfile.h), read from a
 * directory and applied to the roofline's ceilings of the devices of the
 * same model (report --peaks-dir; --spec-peaks keeps the recorded ones).
 * Runs offline only.
 */
#ifndef GA_MODEL_PEAKS_MEASURED_H
#define GA_MODEL_PEAKS_MEASURED_H

#include <stddef.h>
#include <stdint.h>

#include "model/hwmetrics.h"

struct ga_measured {
	double flops[GA_MX_PREC];  /* 0: not measured */
	double dram_bw, l2_bw;     /* bytes/s, 0: not measured */
	uint32_t driver;
	char model[256];
	char date[32];
};

/*
 * Reads one peaks file.  Returns 0, or -1 with err set (file name and
 * line) when it cannot be read or is no peaks file.
 */
int ga_peakfile_read(const char *path, struct ga_measured *out, char *err, size_t errlen);

/*
 * The measured peaks of model in dir: the file of this driver version,
 * else the most recent one of the model.  Returns 1 found, 0 none.
 */
int ga_peakfile_find(const char *dir, const char *model, uint32_t driver,
		     struct ga_measured *out);

/*
 * Replaces the ceilings of every device in mx whose model has measured
 * peaks in dir (ga_mx_peaks.measured says which).  Returns the number of
 * devices changed.
 */
int ga_peakfile_apply(struct ga_mx *mx, const struct ga_model *m, const char *dir);

/* The options of report and export that choose the ceilings. */
struct ga_peaks_opt {
	const char *dir;           /* --peaks-dir DIR */
	int spec;                  /* --spec-peaks */
};

/* getopt_long values of --peaks-dir and --spec-peaks (cmd/options.c lists them). */
#define GA_PEAKS_OPT_DIR 'P'
#define GA_PEAKS_OPT_SPEC 'Q'

/* 1 when getopt's c was one of them (taken into o), else 0. */
int ga_peaks_option(struct ga_peaks_opt *o, int c, const char *arg);

/* The measured peaks of o->dir applied to mx, unless o->spec. */
void ga_peaks_opt_apply(const struct ga_peaks_opt *o, struct ga_mx *mx, const struct ga_model *m);

#endif
