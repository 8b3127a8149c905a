/*
 * Measured peaks (model/peaks-measured.h): reading the files gpuprof calibrate
 * writes, and applying them to the roofline's ceilings.  Runs offline only.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/peakfile.h"
#include "model/peaks-measured.h"

int ga_peakfile_read(const char *path, struct ga_measured *out, char *err, size_t errlen)
{
	char line[512];
	FILE *f = fopen(path, "r");
	unsigned no = 0;
	int magic = 0;

	memset(out, 0, sizeof(*out));
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *val, *end;
		size_t n = strlen(line);

		no++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (!n || line[0] == '#')
			continue;
		if (!(val = strchr(line, ' '))) {
			snprintf(err, errlen, "%s:%u: no value", path, no);
			goto bad;
		}
		*val++ = 0;
		if (!magic) {
			if (strcmp(line, GP_PEAKFILE_MAGIC) || atoi(val) != GP_PEAKFILE_VERSION) {
				snprintf(err, errlen, "%s:%u: not a gpuprof peaks file of version %d",
					 path, no, GP_PEAKFILE_VERSION);
				goto bad;
			}
			magic = 1;
		} else if (!strcmp(line, "model")) {
			snprintf(out->model, sizeof(out->model), "%s", val);
		} else if (!strcmp(line, "driver")) {
			out->driver = (uint32_t)strtoul(val, NULL, 10);
		} else if (!strcmp(line, "date")) {
			snprintf(out->date, sizeof(out->date), "%s", val);
		} else {
			for (int k = 0; k < GP_PF_COUNT; k++) {
				int sets = gp_peakfile_keys[k].sets;
				double x;

				/* Values the roofline does not read are ignored, like unknown keys. */
				if (sets == GP_PEAKFILE_NONE || strcmp(line, gp_peakfile_key(k)))
					continue;
				x = strtod(val, &end);
				if (end == val || *end || !(x > 0) || x > 1e20) {
					snprintf(err, errlen, "%s:%u: bad value '%s'", path, no, val);
					goto bad;
				}
				if (sets >= 0)
					out->flops[sets] = x;
				else if (sets == GP_PEAKFILE_DRAM)
					out->dram_bw = x;
				else
					out->l2_bw = x;
			}
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto bad;
	}
	fclose(f);
	if (!magic || !out->model[0]) {
		snprintf(err, errlen, "%s: not a gpuprof peaks file (no %s)", path,
			 magic ? "model" : GP_PEAKFILE_MAGIC " line");
		return -1;
	}
	return 0;
bad:
	fclose(f);
	return -1;
}

/* A readable file for model: 1, else 0. */
static int try_file(const char *path, const char *model, struct ga_measured *out)
{
	char err[512];

	if (ga_peakfile_read(path, out, err, sizeof(err)))
		return 0;
	return !strcmp(out->model, model);
}

int ga_peakfile_find(const char *dir, const char *model, uint32_t driver,
		     struct ga_measured *out)
{
	char name[512], path[4096], prefix[512];
	struct ga_measured cand;
	int plen, found = 0;
	DIR *d;
	struct dirent *e;

	if (!dir || !*dir || gp_peakfile_name(name, sizeof(name), model, driver) < 0)
		return 0;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path) &&
	    try_file(path, model, out))
		return 1;
	/* Another driver's: the newest measurement of this model. */
	plen = gp_peakfile_name(prefix, sizeof(prefix), model, 0);
	if (plen < 0 || !(d = opendir(dir)))
		return 0;
	plen -= (int)strlen("0" GP_PEAKFILE_SUFFIX);   /* "MODEL-cuda" */
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name), sl = strlen(GP_PEAKFILE_SUFFIX);

		if (strncmp(e->d_name, prefix, (size_t)plen) || n <= sl ||
		    strcmp(e->d_name + n - sl, GP_PEAKFILE_SUFFIX))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    !try_file(path, model, &cand))
			continue;
		if (!found || strcmp(cand.date, out->date) > 0)
			*out = cand;
		found = 1;
	}
	closedir(d);
	return found;
}

/* The device name of (proc, CUDA ordinal), NULL when never described. */
static const char *device_name(const struct ga_model *m, uint32_t proc, uint32_t id)
{
	for (size_t i = 0; i < m->ndevrows; i++) {
		const struct ga_devrow *r = &m->devrows[i];

		if (r->proc == proc && r->id == id && m->devs[r->dev].name)
			return ga_model_str(m, m->devs[r->dev].name);
	}
	return NULL;
}

int ga_peakfile_apply(struct ga_mx *mx, const struct ga_model *m, const char *dir)
{
	int n = 0;

	if (!dir || !*dir)
		return 0;
	for (size_t i = 0; i < mx->npeaks; i++) {
		struct ga_mx_peaks *p = &mx->peaks[i];
		const char *model = device_name(m, p->proc, p->device);
		uint32_t drv = p->proc < m->nprocs ? m->procs[p->proc].cuda_driver : 0;
		struct ga_measured me;

		if (!model || !ga_peakfile_find(dir, model, drv, &me))
			continue;
		p->measured = 0;
		for (int c = 0; c < GA_MX_PREC; c++)
			if (me.flops[c] > 0) {
				p->p.flops[c] = me.flops[c];
				p->measured |= 1u << c;
			}
		if (me.dram_bw > 0) {
			p->p.dram_bw = me.dram_bw;
			p->measured |= GA_MX_MEAS_DRAM;
		}
		p->l2_bw = me.l2_bw;
		snprintf(p->measured_on, sizeof(p->measured_on), "%s", me.date);
		n += p->measured != 0;
	}
	return n;
}

int ga_peaks_option(struct ga_peaks_opt *o, int c, const char *arg)
{
	if (c == GA_PEAKS_OPT_DIR)
		o->dir = arg;
	else if (c == GA_PEAKS_OPT_SPEC)
		o->spec = 1;
	else
		return 0;
	return 1;
}

void ga_peaks_opt_apply(const struct ga_peaks_opt *o, struct ga_mx *mx, const struct ga_model *m)
{
	if (!o->spec)
		ga_peakfile_apply(mx, m, o->dir);
}
