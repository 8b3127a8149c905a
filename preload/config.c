/*
 * Recorder configuration from GPUPROF_* environment variables and output
 * file name templates.  Context: recorder initialization (one thread, once);
 * not on any hot path.
 */
#include "config.h"
#include "log.h"

#include <gpuprof/template.h>
#include <gpuprof/trace.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_OUTPUT "gpuprof-%p"
/* Each flight-recorder dump is a file of its own. */
#define DEFAULT_FLIGHT_OUTPUT "gpuprof-%p-%n"
#define DEFAULT_TRACE (GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET | \
		       GP_TRACE_GRAPH | GP_TRACE_API | GP_TRACE_NVTX)

static const struct {
	const char *name;
	uint32_t bit;
} trace_words[] = {
	{ "kernel", GP_TRACE_KERNEL }, { "memcpy", GP_TRACE_MEMCPY },
	{ "memset", GP_TRACE_MEMSET }, { "graph", GP_TRACE_GRAPH },
	{ "api", GP_TRACE_API },       { "nvtx", GP_TRACE_NVTX },
	{ "api-all", GP_TRACE_API | GP_TRACE_API_ALL },
	{ "memory", GP_TRACE_MEMORY },
	/* As nsys users type it: the GPU work and the calls that make it. */
	{ "cuda", GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET | GP_TRACE_GRAPH |
		  GP_TRACE_API },
};

int gp_config_parse_trace(const char *s, uint32_t *out)
{
	uint32_t bits = 0;

	while (*s) {
		size_t len = strcspn(s, ",");
		size_t i;

		for (i = 0; i < sizeof(trace_words) / sizeof(trace_words[0]); i++)
			if (strlen(trace_words[i].name) == len &&
			    !strncmp(s, trace_words[i].name, len))
				break;
		if (i == sizeof(trace_words) / sizeof(trace_words[0])) {
			if (len)
				return -EINVAL;
		} else {
			bits |= trace_words[i].bit;
		}
		s += len;
		if (*s == ',')
			s++;
	}
	*out = bits;
	return 0;
}

int gp_config_parse_launches(const char *s, uint32_t *out)
{
	unsigned long x;
	char *end;

	if (!strcmp(s, "first")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(s, "all")) {
		*out = UINT32_MAX;
		return 0;
	}
	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || *end || end == s || *s == '-' || x < 1 || x >= UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)x;
	return 0;
}

int gp_config_parse_telemetry(const char *s, uint32_t *ms, uint32_t *extra)
{
	uint32_t period = GP_GPU_TELEMETRY_MS_DEFAULT, bits = 0;
	int have_period = 0;

	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 4 && !strncmp(s, "util", 4)) {
			bits |= GP_GPU_TELEMETRY_UTIL;
		} else if (n == 3 && !strncmp(s, "gpm", 3)) {
			bits |= GP_GPU_TELEMETRY_GPM;
		} else {
			unsigned long x = 0;
			size_t i;

			if (!n || n > 5 || have_period)
				return -EINVAL;
			for (i = 0; i < n; i++) {
				if (s[i] < '0' || s[i] > '9')
					return -EINVAL;
				x = x * 10 + (unsigned long)(s[i] - '0');
			}
			if (x > GP_GPU_TELEMETRY_MS_MAX)
				return -EINVAL;
			period = x && x < GP_GPU_TELEMETRY_MS_MIN ? GP_GPU_TELEMETRY_MS_MIN : (uint32_t)x;
			have_period = 1;
		}
		s += n;
		if (*s == ',' && !*++s)
			return -EINVAL;
	}
	*ms = period;
	*extra = period ? bits : 0;
	return 0;
}

int gp_config_parse_size(const char *s, uint64_t *out)
{
	unsigned long long x;
	char *end;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end || (shift && x > (~0ull >> shift)))
		return -EINVAL;
	*out = (uint64_t)x << shift;
	return 0;
}

/* A duration with its unit (ms, s, m, h) in ms; -1 when it is none or too long. */
static int64_t parse_ms(const char *s, size_t len)
{
	uint64_t x = 0, mul;
	size_t i = 0;

	while (i < len && s[i] >= '0' && s[i] <= '9' && x < (1ull << 40))
		x = x * 10 + (uint64_t)(s[i++] - '0');
	if (!i)
		return -1;
	if (len - i == 2 && !strncmp(s + i, "ms", 2))
		mul = 1;
	else if (len - i == 1 && s[i] == 's')
		mul = 1000;
	else if (len - i == 1 && s[i] == 'm')
		mul = 60000;
	else if (len - i == 1 && s[i] == 'h')
		mul = 3600000;
	else
		return -1;
	return x > (uint64_t)GP_SAMPLE_PERIOD_MAX_MS / mul ? -1 : (int64_t)(x * mul);
}

int gp_config_parse_sample(const char *s, uint32_t *window_ms, uint32_t *period_ms)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	int64_t w, p;

	if (!slash)
		return -EINVAL;
	w = parse_ms(s, (size_t)(slash - s));
	p = parse_ms(slash + 1, strlen(slash + 1));
	if (w < GP_SAMPLE_WINDOW_MIN_MS || p <= w)
		return -EINVAL;
	*window_ms = (uint32_t)w;
	*period_ms = (uint32_t)p;
	return 0;
}

int gp_config_parse_signal(const char *s)
{
	char *end;
	long n;

	if (!s || !*s)
		return 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	if (!strcmp(s, "USR1"))
		return SIGUSR1;
	if (!strcmp(s, "USR2"))
		return SIGUSR2;
	if (!strncmp(s, "RTMIN+", 6)) {
		n = strtol(s + 6, &end, 10);
		return !*end && s[6] && n >= 0 && SIGRTMIN + n <= SIGRTMAX ? SIGRTMIN + (int)n : 0;
	}
	n = strtol(s, &end, 10);
	if (*end || !*s)
		return 0;
	/* Only signals that mean nothing to a program by default. */
	if (n == SIGUSR1 || n == SIGUSR2 || (n >= SIGRTMIN && n <= SIGRTMAX))
		return (int)n;
	return 0;
}

static uint32_t env_u32(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi) {
		gp_log("%s=%s is not a number in [%u, %u]; using %u", name, v,
		       lo, hi, def);
		return def;
	}
	return (uint32_t)x;
}

int gp_config_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

static char start_dir[GP_PATH_MAX];

void gp_config_note_start_dir(void)
{
	if (!getcwd(start_dir, sizeof(start_dir)))
		start_dir[0] = 0;
}

const char *gp_config_start_dir(void)
{
	if (!start_dir[0])
		gp_config_note_start_dir();
	return start_dir;
}

/* Copies a variable's value; too long or unset leaves "". */
static void env_str(const char *name, char *out, size_t size)
{
	const char *v = getenv(name);

	out[0] = 0;
	if (!v || !*v)
		return;
	if (strlen(v) >= size) {
		gp_log("%s is too long (%zu bytes); ignored", name, strlen(v));
		return;
	}
	strcpy(out, v);
}

/* The job rank the launchers set, or UINT32_MAX. */
static uint32_t env_rank(void)
{
	static const char *vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
				      "PMIX_RANK", "SLURM_PROCID" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		char *end;
		unsigned long x;

		if (!v || !*v)
			continue;
		errno = 0;
		x = strtoul(v, &end, 10);
		if (!errno && !*end && x < UINT32_MAX)
			return (uint32_t)x;
	}
	return UINT32_MAX;
}

int gp_config_load(struct gp_config *c)
{
	const char *v;

	memset(c, 0, sizeof(*c));
	c->disabled = gp_config_flag("GPUPROF_DISABLE");
	c->verbose = gp_config_flag("GPUPROF_VERBOSE");
	c->force = gp_config_flag("GPUPROF_FORCE");
	gp_log_set_verbose(c->verbose);

	v = getenv("GPUPROF_FLIGHT_RECORDER");
	if (v && *v && (gp_config_parse_size(v, &c->flight_bytes) < 0 ||
			c->flight_bytes < GP_FLIGHT_MIN || c->flight_bytes > GP_FLIGHT_MAX)) {
		gp_log("GPUPROF_FLIGHT_RECORDER=%s: expected a size from 1M to 1T (such as 256M); tracing to a file",
		       v);
		c->flight_bytes = 0;
	}
	v = getenv("GPUPROF_START");
	if (v && *v) {
		if (!strcmp(v, "dormant"))
			c->dormant = 1;
		else if (strcmp(v, "now"))
			gp_log("GPUPROF_START=%s: expected now or dormant; starting now", v);
	}
	/* Sampled windows: a dormant recorder that opens them itself, into the spool. */
	v = getenv("GPUPROF_SAMPLE");
	if (v && *v && gp_config_parse_sample(v, &c->sample_window_ms, &c->sample_period_ms) < 0)
		gp_log("GPUPROF_SAMPLE=%s: expected WINDOW/PERIOD (such as 1s/60s, the window from "
		       "10ms and shorter than the period); not sampling", v);
	env_str("GPUPROF_SPOOL", c->spool, sizeof(c->spool));
	c->spool_max = GP_SPOOL_MAX_DEFAULT;
	v = getenv("GPUPROF_SPOOL_MAX");
	if (v && *v && (gp_config_parse_size(v, &c->spool_max) < 0 || c->spool_max < GP_SPOOL_MAX_MIN)) {
		gp_log("GPUPROF_SPOOL_MAX=%s: expected a size from 1M (such as 256M); 256M", v);
		c->spool_max = GP_SPOOL_MAX_DEFAULT;
	}
	if (c->sample_period_ms && (c->spool[0] != '/' || c->flight_bytes)) {
		gp_log(c->flight_bytes ? "GPUPROF_SAMPLE does not go with a flight recorder; not sampling" :
		       "GPUPROF_SAMPLE needs GPUPROF_SPOOL, an absolute directory; not sampling");
		c->sample_window_ms = c->sample_period_ms = 0;
	}
	if (c->sample_period_ms)
		c->dormant = 1;
	/* Between windows CUPTI is finalized (cupti/detach.h) unless set to 0. */
	v = getenv("GPUPROF_DETACH");
	c->detach = !(v && !strcmp(v, "0"));
	if (c->dormant && c->flight_bytes) {
		gp_log("GPUPROF_START=dormant does not go with a flight recorder; starting now");
		c->dormant = 0;
	}
	c->control = c->dormant || c->flight_bytes || gp_config_flag("GPUPROF_CONTROL");
	env_str("GPUPROF_CONTROL_DIR", c->control_dir, sizeof(c->control_dir));

	v = getenv("GPUPROF_DUMP_ON");
	while (v && *v) {
		size_t len = strcspn(v, ",");

		if (len == 10 && !strncmp(v, "cuda-error", 10)) {
			c->dump_on_error = 1;
		} else if (len > 5 && !strncmp(v, "nvtx:", 5) && len - 5 < sizeof(c->dump_on_nvtx)) {
			memcpy(c->dump_on_nvtx, v + 5, len - 5);
			c->dump_on_nvtx[len - 5] = 0;
		} else if (len) {
			gp_log("GPUPROF_DUMP_ON: '%.*s' is not nvtx:NAME or cuda-error; ignored",
			       (int)len, v);
		}
		v += len;
		if (*v == ',')
			v++;
	}
	v = getenv("GPUPROF_DUMP_SIGNAL");
	if (v && *v && !(c->dump_signal = gp_config_parse_signal(v)))
		gp_log("GPUPROF_DUMP_SIGNAL=%s: expected USR1, USR2 or RTMIN+N; no dump signal", v);
	if (!c->flight_bytes && (c->dump_on_error || c->dump_on_nvtx[0] || c->dump_signal)) {
		gp_log("GPUPROF_DUMP_ON and GPUPROF_DUMP_SIGNAL need GPUPROF_FLIGHT_RECORDER; ignored");
		c->dump_on_error = 0;
		c->dump_on_nvtx[0] = 0;
		c->dump_signal = 0;
	}

	v = getenv("GPUPROF_OUTPUT");
	if (!v || !*v)
		v = c->flight_bytes ? DEFAULT_FLIGHT_OUTPUT : DEFAULT_OUTPUT;
	if (strlen(v) >= sizeof(c->output)) {
		gp_log("GPUPROF_OUTPUT is too long; using %s", DEFAULT_OUTPUT);
		v = DEFAULT_OUTPUT;
	} else {
		char tmp[GP_PATH_MAX];
		const char *why;
		unsigned uses;

		if (gp_template_expand(v, NULL, tmp, sizeof(tmp), &uses, &why) == -EINVAL) {
			gp_log("GPUPROF_OUTPUT=%s: %s; using %s", v, why, DEFAULT_OUTPUT);
			v = DEFAULT_OUTPUT;
		}
	}
	strcpy(c->output, v);

	env_str("GPUPROF_SESSION_FILE", c->session_file, sizeof(c->session_file));

	c->trace = DEFAULT_TRACE;
	v = getenv("GPUPROF_TRACE");
	if (v && *v && gp_config_parse_trace(v, &c->trace) < 0) {
		gp_log("GPUPROF_TRACE=%s: unknown activity (known: kernel,memcpy,memset,graph,api,api-all,nvtx,memory,cuda); tracing all",
		       v);
		c->trace = DEFAULT_TRACE;
	}

	v = getenv("GPUPROF_GRAPH_TRACE");
	if (v && *v) {
		if (!strcmp(v, "graph"))
			c->graph_mode = 1;
		else if (strcmp(v, "node"))
			gp_log("GPUPROF_GRAPH_TRACE=%s: expected node or graph; using node", v);
	}

	v = getenv("GPUPROF_BACKTRACE");
	if (v && *v) {
		if (!strcmp(v, "kernel")) {
			c->backtrace = 1;
		} else if (!strcmp(v, "all")) {
			c->backtrace = 2;
		} else if (!strcmp(v, "python")) {
			c->backtrace = 1;
			c->pystack = GP_PYSTACK_PYTHON;
		} else if (!strcmp(v, "mixed")) {
			c->backtrace = 1;
			c->pystack = GP_PYSTACK_MIXED;
		} else if (strcmp(v, "none")) {
			gp_log("GPUPROF_BACKTRACE=%s: expected none, kernel, all, python or mixed; using none",
			       v);
		}
	}

	c->flush_ms = env_u32("GPUPROF_FLUSH_MS", 1000, 10, 3600 * 1000);
	c->buffer_kib = env_u32("GPUPROF_BUFFER_KIB", 4096, 64, 256 * 1024);
	c->ring_chunks = env_u32("GPUPROF_RING_CHUNKS", 16, 2, 4096);
	env_str("GPUPROF_CAPTURE_RANGE", c->capture_range, sizeof(c->capture_range));
	env_str("GPUPROF_CAPTURE_RANGE_END", c->capture_end, sizeof(c->capture_end));
	if (c->capture_range[0] && (c->dormant || c->flight_bytes)) {
		gp_log("GPUPROF_CAPTURE_RANGE does not go with %s; ignored",
		       c->dormant ? "GPUPROF_START=dormant" : "a flight recorder");
		c->capture_range[0] = 0;
	}
	env_str("GPUPROF_CUPTI_PATH", c->cupti_path, sizeof(c->cupti_path));
	env_str("GPUPROF_LIBUNWIND", c->libunwind_path, sizeof(c->libunwind_path));
	env_str("CUDA_HOME", c->cuda_home, sizeof(c->cuda_home));
	env_str("CUDA_INJECTION64_PATH", c->cuda_injection, sizeof(c->cuda_injection));
	env_str("GPUPROF_METRICS", c->metrics, sizeof(c->metrics));
	env_str("GPUPROF_METRICS_KERNELS", c->metrics_kernels, sizeof(c->metrics_kernels));
	env_str("GPUPROF_METRICS_NVTX", c->metrics_nvtx, sizeof(c->metrics_nvtx));
	env_str("GPUPROF_METRICS_CACHE", c->metrics_cache, sizeof(c->metrics_cache));
	c->metrics_launches = 1;
	v = getenv("GPUPROF_METRICS_LAUNCHES");
	if (v && *v && gp_config_parse_launches(v, &c->metrics_launches) < 0) {
		gp_log("GPUPROF_METRICS_LAUNCHES=%s: expected first, all or a number >= 1; using first",
		       v);
		c->metrics_launches = 1;
	}
	c->metrics_replay = 0;
	v = getenv("GPUPROF_METRICS_REPLAY");
	if (v && *v) {
		if (!strcmp(v, "launches"))
			c->metrics_replay = 1;
		else if (strcmp(v, "kernel"))
			gp_log("GPUPROF_METRICS_REPLAY=%s: expected kernel or launches; using kernel", v);
	}
	/* The GPU over time (cupti/gpusample.c). */
	env_str("GPUPROF_GPU_METRICS", c->gpu_metrics, sizeof(c->gpu_metrics));
	c->gpu_metrics_us = env_u32("GPUPROF_GPU_METRICS_INTERVAL_US", GP_GPU_METRICS_US_DEFAULT,
				    GP_GPU_METRICS_US_MIN, GP_GPU_METRICS_US_MAX);
	c->gpu_telemetry_ms = 0;
	c->gpu_telemetry_extra = 0;
	v = getenv("GPUPROF_GPU_TELEMETRY");
	if (v && *v && gp_config_parse_telemetry(v, &c->gpu_telemetry_ms,
						  &c->gpu_telemetry_extra) < 0)
		gp_log("GPUPROF_GPU_TELEMETRY=%s: expected milliseconds (%u to %u) and util or gpm, "
		       "comma-separated; telemetry is off", v, GP_GPU_TELEMETRY_MS_MIN,
		       GP_GPU_TELEMETRY_MS_MAX);
	/* Both need the counters of the device, which the range profiler and
	 * PM sampling cannot share: the launches asked for by name win. */
	if (c->gpu_metrics[0] && c->metrics[0]) {
		gp_log("GPUPROF_GPU_METRICS does not go with GPUPROF_METRICS (both need the GPU's "
		       "performance counters); GPU metrics over time are off, tracing goes on");
		c->gpu_metrics[0] = 0;
	}
	c->rank = env_rank();
	return 0;
}

static struct gp_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void config_load_once(void)
{
	gp_config_load(&config);
}

const struct gp_config *gp_config_get(void)
{
	pthread_once(&config_once, config_load_once);
	return &config;
}

static const char *env_var(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

int gp_config_expand(const char *tmpl, int pid, unsigned n, char *out,
		     size_t outsz, int *uses_n)
{
	struct gp_template_env env = { .pid = pid, .n = n, .getvar = env_var };
	char host[256];
	unsigned uses;
	int rc;

	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = 0;
	env.host = host;
	rc = gp_template_expand(tmpl, &env, out, outsz, &uses, NULL);
	*uses_n = (uses & GP_TEMPLATE_NUMBER) != 0;
	return rc;
}

const char *gp_config_claim(const char *var, const char *self)
{
	const char *cur = getenv(var);

	if (!cur || !*cur) {
		setenv(var, self, 1);
		return NULL;
	}
	return cur;
}
