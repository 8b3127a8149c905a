/*
 * Synthetic trace writer for the unit tests (see synth.h).  Test code,
 * runs offline only.
 */
#include "synth.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "gpuprof/delta.h"

#define DEFAULT_CHUNK (64u << 10)

struct synth *synth_open(const char *path)
{
	struct synth *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->f = path ? fopen(path, "wb") : open_memstream(&s->mem, &s->memlen);
	if (!s->f) {
		free(s);
		return NULL;
	}
	memcpy(s->hdr.magic, GP_FILE_MAGIC, sizeof(s->hdr.magic));
	s->hdr.version = GP_FORMAT_VERSION;
	s->hdr.min_reader = GP_MIN_READER_VERSION;
	s->hdr.header_size = sizeof(s->hdr);
	s->hdr.endian = GP_ENDIAN_MARKER;
	s->hdr.clock_id = GP_CLOCK_REALTIME;
	s->hdr.created_ns = 1700000000000000000ull;
	s->hdr.pid = 4242;
	s->next_string = 1;
	s->chunk_limit = DEFAULT_CHUNK;
	return s;
}

static void put(struct synth *s, const void *p, size_t n)
{
	if (fwrite(p, 1, n, s->f) != n)
		s->err = 1;
	s->offset += n;
}

static void write_header(struct synth *s)
{
	if (s->hdr_written)
		return;
	s->hdr_written = 1;
	put(s, &s->hdr, sizeof(s->hdr));
	if (s->hdr.header_size > sizeof(s->hdr)) {
		static const unsigned char zero[4096];
		size_t extra = s->hdr.header_size - sizeof(s->hdr);

		put(s, zero, extra < sizeof(zero) ? extra : sizeof(zero));
	}
}

/* The chunk being built written; one of no records too where empty_too. */
static int flush(struct synth *s, int empty_too)
{
	struct gp_chunk_header ch;
	size_t bound, clen;
	void *comp;

	write_header(s);
	if (!s->nrec && !empty_too)
		return s->err ? -1 : 0;
	if (s->delta) {
		gp_delta_apply(s->buf, s->len, 0);
		s->next_flags |= GP_CHUNK_F_DELTA;
	}
	bound = ZSTD_compressBound(s->len);
	comp = malloc(bound ? bound : 1);
	if (!comp) {
		s->err = 1;
		return -1;
	}
	clen = ZSTD_compress(comp, bound, s->buf, s->len, 1);
	if (ZSTD_isError(clen)) {
		free(comp);
		s->err = 1;
		return -1;
	}
	memset(&ch, 0, sizeof(ch));
	ch.magic = GP_CHUNK_MAGIC;
	ch.seq = s->seq++;
	ch.comp_size = (uint32_t)clen;
	ch.raw_size = (uint32_t)s->len;
	ch.nrecords = s->nrec;
	ch.flags = s->next_flags;
	ch.t_min = s->t_min;
	ch.t_max = s->t_max;
	ch.lost = s->next_lost;
	ch.checksum = gp_chunk_checksum(&ch, comp, clen);
	if (s->nchunks == s->capchunks) {
		size_t nc = s->capchunks ? s->capchunks * 2 : 16;
		uint64_t *np = realloc(s->chunk_off, nc * sizeof(*np));

		if (!np) {
			free(comp);
			s->err = 1;
			return -1;
		}
		s->chunk_off = np;
		s->capchunks = nc;
	}
	s->chunk_off[s->nchunks++] = s->offset;
	put(s, &ch, sizeof(ch));
	put(s, comp, clen);
	free(comp);
	s->len = 0;
	s->nrec = 0;
	s->next_lost = 0;
	s->next_flags = 0;
	s->t_min = s->t_max = 0;
	return s->err ? -1 : 0;
}

int synth_flush_chunk(struct synth *s)
{
	return flush(s, 0);
}

int synth_empty_chunk(struct synth *s)
{
	return flush(s, 1);
}

void synth_rec(struct synth *s, const void *rec, size_t size)
{
	if (s->len && s->len + size > s->chunk_limit)
		synth_flush_chunk(s);
	if (s->len + size > s->cap) {
		size_t nc = s->cap ? s->cap : 4096;
		unsigned char *np;

		while (nc < s->len + size)
			nc *= 2;
		np = realloc(s->buf, nc);
		if (!np) {
			s->err = 1;
			return;
		}
		s->buf = np;
		s->cap = nc;
	}
	memcpy(s->buf + s->len, rec, size);
	s->len += size;
	s->nrec++;
	s->records++;
}

static void timed(struct synth *s, uint64_t start, uint64_t end)
{
	if (!s->t_min || start < s->t_min)
		s->t_min = start;
	if (end > s->t_max)
		s->t_max = end;
}

uint32_t synth_string(struct synth *s, const char *str)
{
	size_t len = strlen(str), size = gp_rec_align((uint32_t)(sizeof(struct gp_rec_string) + len));
	unsigned char *r = calloc(1, size);
	struct gp_rec_string h;
	uint32_t id = s->next_string++;

	if (!r) {
		s->err = 1;
		return 0;
	}
	memset(&h, 0, sizeof(h));
	h.h.type = GP_REC_STRING;
	h.h.size = (uint16_t)size;
	h.id = id;
	h.len = (uint32_t)len;
	memcpy(r, &h, sizeof(h));
	memcpy(r + sizeof(h), str, len);
	synth_rec(s, r, size);
	free(r);
	return id;
}

void synth_process(struct synth *s, uint32_t pid, const char *host, const char *cmdline,
		   uint32_t rank, uint64_t start_ns)
{
	struct gp_rec_process r;
	uint32_t h = synth_string(s, host), c = synth_string(s, cmdline);
	uint32_t exe = synth_string(s, "/usr/bin/app");

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_PROCESS;
	r.h.size = sizeof(r);
	r.pid = pid;
	r.ppid = 1;
	r.host = h;
	r.exe = exe;
	r.cmdline = c;
	r.cupti_version = 24;
	r.start_ns = start_ns;
	r.cuda_driver = 12040;
	r.rank = rank;
	synth_rec(s, &r, sizeof(r));
}

void synth_clock_sync(struct synth *s, uint64_t trace_ns, uint64_t realtime_ns,
		      uint64_t monotonic_ns)
{
	struct gp_rec_clock_sync r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_CLOCK_SYNC;
	r.h.size = sizeof(r);
	r.trace_ns = trace_ns;
	r.realtime_ns = realtime_ns;
	r.monotonic_ns = monotonic_ns;
	synth_rec(s, &r, sizeof(r));
}

void synth_device(struct synth *s, uint32_t id, const char *name, uint32_t cc_major,
		  uint32_t cc_minor, uint32_t sms, uint64_t mem, uint8_t uuid0)
{
	uint8_t uuid[16];

	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)(uuid0 + i);
	synth_device_uuid(s, id, name, cc_major, cc_minor, sms, mem, uuid);
}

void synth_device_uuid(struct synth *s, uint32_t id, const char *name, uint32_t cc_major,
		       uint32_t cc_minor, uint32_t sms, uint64_t mem, const uint8_t uuid[16])
{
	struct gp_rec_device r;
	uint32_t n = synth_string(s, name);

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_DEVICE;
	r.h.size = sizeof(r);
	r.id = id;
	r.name = n;
	memcpy(r.uuid, uuid, sizeof(r.uuid));
	r.cc_major = cc_major;
	r.cc_minor = cc_minor;
	r.sm_count = sms;
	r.core_clock_khz = 1980000;
	r.global_mem = mem;
	r.mem_bandwidth = 3352000000ull;
	r.l2_size = 50u << 20;
	synth_rec(s, &r, sizeof(r));
}

void synth_config(struct synth *s, uint32_t trace, uint32_t graph_mode, uint32_t backtrace)
{
	struct gp_rec_config r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_CONFIG;
	r.h.size = sizeof(r);
	r.trace = trace;
	r.graph_mode = graph_mode;
	r.backtrace = backtrace;
	r.flush_ms = 100;
	synth_rec(s, &r, sizeof(r));
}

static uint32_t corr = 1;

void synth_kernel_init(struct gp_rec_kernel *r, uint32_t name, uint64_t start, uint64_t end,
		       uint32_t device, uint32_t stream, uint32_t correlation)
{
	memset(r, 0, sizeof(*r));
	r->h.type = GP_REC_KERNEL;
	r->h.size = sizeof(*r);
	r->start = start;
	r->end = end;
	r->correlation = correlation;
	r->name = name;
	r->device = device;
	r->context = 1;
	r->stream = stream;
}

void synth_memcpy_init(struct gp_rec_memcpy *r, unsigned kind, uint64_t bytes, uint64_t start,
		       uint64_t end, uint32_t device, uint32_t stream, uint32_t correlation)
{
	memset(r, 0, sizeof(*r));
	r->h.type = GP_REC_MEMCPY;
	r->h.size = sizeof(*r);
	r->start = start;
	r->end = end;
	r->bytes = bytes;
	r->correlation = correlation;
	r->device = device;
	r->context = 1;
	r->stream = stream;
	r->copy_kind = (uint8_t)kind;
}

void synth_kernel(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		  uint32_t device, uint32_t stream, uint32_t graph_id, uint64_t graph_node)
{
	struct gp_rec_kernel r;

	synth_kernel_init(&r, name, start, end, device, stream, corr++);
	r.grid[0] = 1024;
	r.grid[1] = r.grid[2] = 1;
	r.block[0] = 256;
	r.block[1] = r.block[2] = 1;
	r.registers = 32;
	r.graph_id = graph_id;
	r.graph_node = graph_node;
	timed(s, start, end);
	synth_rec(s, &r, sizeof(r));
}

void synth_kernel_at_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
			  uint32_t device, uint32_t stream, uint32_t correlation)
{
	uint32_t saved = corr;

	corr = correlation;
	synth_kernel(s, name, start, end, device, stream, 0, 0);
	corr = saved;
}

void synth_memcpy(struct synth *s, unsigned kind, uint64_t bytes, uint64_t start,
		  uint64_t end, uint32_t device, uint32_t stream)
{
	struct gp_rec_memcpy r;

	synth_memcpy_init(&r, kind, bytes, start, end, device, stream, corr++);
	r.src_device = r.dst_device = device;
	timed(s, start, end);
	synth_rec(s, &r, sizeof(r));
}

void synth_memset(struct synth *s, uint64_t bytes, uint64_t start, uint64_t end,
		  uint32_t device, uint32_t stream)
{
	synth_memset_at_corr(s, bytes, start, end, device, stream, corr++, 0);
}

void synth_memset_at_corr(struct synth *s, uint64_t bytes, uint64_t start, uint64_t end,
			  uint32_t device, uint32_t stream, uint32_t correlation, unsigned mem_kind)
{
	struct gp_rec_memset r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_MEMSET;
	r.h.size = sizeof(r);
	r.start = start;
	r.end = end;
	r.bytes = bytes;
	r.correlation = correlation;
	r.device = device;
	r.context = 1;
	r.stream = stream;
	r.mem_kind = (uint8_t)mem_kind;
	timed(s, start, end);
	synth_rec(s, &r, sizeof(r));
}

void synth_graph(struct synth *s, uint32_t graph_id, uint64_t start, uint64_t end,
		 uint32_t device, uint32_t stream)
{
	struct gp_rec_graph r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_GRAPH;
	r.h.size = sizeof(r);
	r.start = start;
	r.end = end;
	r.correlation = corr++;
	r.graph_id = graph_id;
	r.device = device;
	r.context = 1;
	r.stream = stream;
	r.end_device = device;
	timed(s, start, end);
	synth_rec(s, &r, sizeof(r));
}

void synth_api(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
	       uint32_t tid, int32_t ret)
{
	struct gp_rec_api r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_API;
	r.h.size = sizeof(r);
	r.start = start;
	r.end = end;
	r.correlation = corr++;
	r.tid = tid;
	r.name = name;
	r.cbid = 211;
	r.domain = GP_API_RUNTIME;
	r.ret = ret;
	timed(s, start, end);
	synth_rec(s, &r, sizeof(r));
}

void synth_memory(struct synth *s, unsigned op, uint64_t t, uint64_t address, uint64_t bytes,
		  uint32_t device, unsigned kind, unsigned flags)
{
	struct gp_rec_memory r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_MEMORY;
	r.h.size = sizeof(r);
	r.timestamp = t;
	r.address = address;
	r.bytes = bytes;
	r.correlation = corr++;
	r.device = device;
	r.context = 1;
	r.stream = flags & GP_MEM_F_ASYNC ? 7 : UINT32_MAX;
	r.operation = (uint8_t)op;
	r.mem_kind = (uint8_t)kind;
	r.flags = (uint8_t)flags;
	if (flags & GP_MEM_F_POOL) {
		r.pool_type = 1;
		r.pool_address = address & ~0xfffffull;
	}
	r.process = s->hdr.pid;
	timed(s, t, t);
	synth_rec(s, &r, sizeof(r));
}

void synth_h100_peaks(struct gp_rec_device_peaks *p)
{
	memset(p, 0, sizeof(*p));
	p->h.type = GP_REC_DEVICE_PEAKS;
	p->h.size = sizeof(*p);
	p->cc_major = 9;
	p->sm_count = 132;
	p->sm_clock_khz = 1980000;
	p->mem_clock_khz = 2619000;
	p->bus_width = 5120;
}

void synth_lost(struct synth *s, uint32_t cause, uint64_t count)
{
	struct gp_rec_lost r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_LOST;
	r.h.size = sizeof(r);
	r.cause = cause;
	r.count = count;
	synth_rec(s, &r, sizeof(r));
}

void synth_end(struct synth *s, uint64_t end_ns, uint64_t lost)
{
	struct gp_rec_end r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_END;
	r.h.size = sizeof(r);
	r.end_ns = end_ns;
	r.records = s->records;
	r.lost = lost;
	synth_rec(s, &r, sizeof(r));
	s->next_flags |= GP_CHUNK_F_LAST;
}

int synth_close(struct synth *s, unsigned char **buf, size_t *len)
{
	int rc;

	synth_flush_chunk(s);
	if (fclose(s->f) != 0)
		s->err = 1;
	rc = s->err ? -1 : 0;
	if (s->mem && buf && len) {
		*buf = (unsigned char *)s->mem;
		*len = s->memlen;
	} else {
		free(s->mem);
	}
	free(s->buf);
	free(s->chunk_off);
	free(s);
	return rc;
}

unsigned char *synth_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		p = malloc((size_t)n + 1);
		if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		if (p)
			p[n] = 0; /* callers compare it as a string */
		*len = (size_t)n;
	}
	fclose(f);
	return p;
}

void synth_graph_node(struct synth *s, uint64_t node, uint32_t graph_id, uint32_t correlation,
		      uint32_t stack, uint64_t nvtx)
{
	struct gp_rec_graph_node r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_GRAPH_NODE;
	r.h.size = sizeof(r);
	r.node = node;
	r.graph_id = graph_id;
	r.correlation = correlation;
	r.stack = stack;
	r.nvtx = nvtx;
	synth_rec(s, &r, sizeof(r));
}

static char *slurp_string(const char *path)
{
	size_t len;
	char *s = (char *)synth_slurp(path, &len);

	if (s)
		s[len] = '\0';
	return s;
}

int synth_capture(const char *dir, char **out, char **err, int (*fn)(int, char **), int argc,
		  char **argv)
{
	char po[256], pe[256];
	int rc, fo, fe, so, se;

	snprintf(po, sizeof(po), "%s/out", dir);
	snprintf(pe, sizeof(pe), "%s/err", dir);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fe = err ? open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open("/dev/null", O_WRONLY);
	dup2(fo, 1);
	dup2(fe, 2);
	rc = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	*out = slurp_string(po);
	if (err)
		*err = slurp_string(pe);
	return rc;
}

void synth_memcpy_at_corr(struct synth *s, unsigned kind, uint64_t bytes, uint64_t start,
		       uint64_t end, uint32_t device, uint32_t stream, uint32_t correlation)
{
	struct gp_rec_memcpy r;

	synth_memcpy_init(&r, kind, bytes, start, end, device, stream, correlation);
	r.src_device = r.dst_device = device;
	timed(s, start, end);
	synth_rec(s, &r, sizeof(r));
}

void synth_api_at_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		    uint32_t tid, uint32_t correlation)
{
	struct gp_rec_api r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_API;
	r.h.size = sizeof(r);
	r.start = start;
	r.end = end;
	r.correlation = correlation;
	r.tid = tid;
	r.name = name;
	r.cbid = 31;
	r.domain = GP_API_RUNTIME;
	timed(s, start, end);
	synth_rec(s, &r, sizeof(r));
}

int synth_run(const char *dir, char **out, char **err, int (*fn)(int, char **), ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, fn);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return synth_capture(dir, out, err, fn, argc, argv);
}

void synth_gpu_series(struct synth *s, uint32_t id, uint32_t source, uint64_t interval_ns,
		      const char *const *mnames, uint32_t n)
{
	unsigned char buf[sizeof(struct gp_rec_gpu_series) + 16 * sizeof(uint32_t)];
	struct gp_rec_gpu_series *r = (void *)buf;
	uint32_t *ids = (void *)(r + 1);

	if (n > 16)
		n = 16;
	memset(buf, 0, sizeof(buf));
	for (uint32_t i = 0; i < n; i++)
		ids[i] = synth_string(s, mnames[i]);
	r->h.type = GP_REC_GPU_SERIES;
	r->h.size = (uint16_t)(sizeof(*r) + (n + 1) / 2 * 2 * sizeof(uint32_t));
	r->h.aux = n;
	r->id = id;
	r->device = 0;
	r->source = source;
	r->status = GP_GPU_OK;
	r->interval_ns = interval_ns;
	synth_rec(s, buf, r->h.size);
}

void synth_gpu_sample(struct synth *s, uint32_t id, uint64_t start, uint64_t end,
		      const double *v, uint32_t n)
{
	unsigned char buf[sizeof(struct gp_rec_gpu_sample) + 16 * sizeof(double)];
	struct gp_rec_gpu_sample *r = (void *)buf;

	if (n > 16)
		n = 16;
	memset(buf, 0, sizeof(buf));
	r->h.type = GP_REC_GPU_SAMPLE;
	r->h.size = (uint16_t)(sizeof(*r) + n * sizeof(double));
	r->h.aux = n;
	r->start = start;
	r->end = end;
	r->series = id;
	memcpy(r + 1, v, n * sizeof(double));
	synth_rec(s, buf, r->h.size);
}
