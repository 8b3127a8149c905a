/*
 * Synthetic trace writer for the unit tests: writes the gpuprof format the
 * way the recorder does (file header, zstd-compressed chunks with CRC-32C,
 * 8-byte aligned records) so tests can build traces with known contents,
 * then cut or damage them.  Test code, runs offline only.
 */
#ifndef GP_TEST_SYNTH_H
#define GP_TEST_SYNTH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/trace.h"

struct synth {
	FILE *f;
	char *mem;                 /* open_memstream buffer in memory mode */
	size_t memlen;
	struct gp_file_header hdr; /* tests may edit it before the first flush */
	int hdr_written;
	unsigned char *buf;        /* records of the chunk being built */
	size_t len, cap;
	uint32_t nrec;
	uint32_t seq;
	uint32_t next_string;
	size_t chunk_limit;        /* flush when a record would overflow this */
	uint32_t next_lost;        /* 'lost' field of the next chunk header */
	uint32_t next_flags;       /* extra flags of the next chunk header */
	int delta;                 /* delta-code chunks as the recorder does */
	uint64_t t_min, t_max;
	uint64_t *chunk_off;       /* file offset of each chunk written */
	size_t nchunks, capchunks;
	uint64_t offset;           /* bytes written so far */
	uint64_t records;          /* records written, for the END record */
	int err;
};

/* Open a trace at path, or in memory when path is NULL.  NULL on failure.
 * synth_close() flushes the last chunk: flush explicitly first to read
 * chunk_off[] of every chunk. */
struct synth *synth_open(const char *path);

/* Intern a string: returns the id the next records may use. */
uint32_t synth_string(struct synth *s, const char *str);

/* Append a raw record (size bytes, header filled by the caller). */
void synth_rec(struct synth *s, const void *rec, size_t size);

void synth_process(struct synth *s, uint32_t pid, const char *host, const char *cmdline,
		   uint32_t rank, uint64_t start_ns);
/* DEVICE; its UUID's bytes uuid0, uuid0 + 1, ... (synth_device_uuid: as given). */
void synth_device(struct synth *s, uint32_t id, const char *name, uint32_t cc_major,
		  uint32_t cc_minor, uint32_t sms, uint64_t mem, uint8_t uuid0);
void synth_device_uuid(struct synth *s, uint32_t id, const char *name, uint32_t cc_major,
		       uint32_t cc_minor, uint32_t sms, uint64_t mem, const uint8_t uuid[16]);
/* CONFIG; backtrace 0 none, 1 kernel launches, 2 every API call. */
void synth_config(struct synth *s, uint32_t trace, uint32_t graph_mode, uint32_t backtrace);
/* Where graph node `node` was created: API correlation, stack id, NVTX range id. */
void synth_graph_node(struct synth *s, uint64_t node, uint32_t graph_id, uint32_t correlation,
		      uint32_t stack, uint64_t nvtx);
/*
 * A kernel or memcpy record's common fields into r (the rest zero,
 * context 1), for builders that set a few more before synth_rec().
 */
void synth_kernel_init(struct gp_rec_kernel *r, uint32_t name, uint64_t start, uint64_t end,
		       uint32_t device, uint32_t stream, uint32_t correlation);
void synth_memcpy_init(struct gp_rec_memcpy *r, unsigned kind, uint64_t bytes, uint64_t start,
		       uint64_t end, uint32_t device, uint32_t stream, uint32_t correlation);
/* A GPU sample series (GP_REC_GPU_SERIES) of device 0: n metrics (at most 16) named mnames. */
void synth_gpu_series(struct synth *s, uint32_t id, uint32_t source, uint64_t interval_ns,
		      const char *const *mnames, uint32_t n);
/* A sample of series id: n values (at most 16). */
void synth_gpu_sample(struct synth *s, uint32_t id, uint64_t start, uint64_t end,
		      const double *v, uint32_t n);
void synth_kernel(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		  uint32_t device, uint32_t stream, uint32_t graph_id, uint64_t graph_node);
void synth_memcpy(struct synth *s, unsigned kind, uint64_t bytes, uint64_t start,
		  uint64_t end, uint32_t device, uint32_t stream);
void synth_memset(struct synth *s, uint64_t bytes, uint64_t start, uint64_t end,
		  uint32_t device, uint32_t stream);
void synth_graph(struct synth *s, uint32_t graph_id, uint64_t start, uint64_t end,
		 uint32_t device, uint32_t stream);
void synth_api(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
	       uint32_t tid, int32_t ret);
/* As synth_memcpy and synth_api, with the given correlation id. */
void synth_memcpy_at_corr(struct synth *s, unsigned kind, uint64_t bytes, uint64_t start,
		       uint64_t end, uint32_t device, uint32_t stream, uint32_t correlation);
void synth_api_at_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
		    uint32_t tid, uint32_t correlation);
/* As synth_memset, with the given correlation id and memory kind (CUpti_ActivityMemoryKind). */
void synth_memset_at_corr(struct synth *s, uint64_t bytes, uint64_t start, uint64_t end,
			  uint32_t device, uint32_t stream, uint32_t correlation, unsigned mem_kind);
/* As synth_kernel, with the given correlation id. */
void synth_kernel_at_corr(struct synth *s, uint32_t name, uint64_t start, uint64_t end,
			  uint32_t device, uint32_t stream, uint32_t correlation);
/* A MEMORY record: op GP_MEM_ALLOC or GP_MEM_FREE, kind CUpti_ActivityMemoryKind, flags GP_MEM_F_*. */
void synth_memory(struct synth *s, unsigned op, uint64_t t, uint64_t address, uint64_t bytes,
		  uint32_t device, unsigned kind, unsigned flags);
void synth_lost(struct synth *s, uint32_t cause, uint64_t count);
/* A DEVICE_PEAKS record of an H100 SXM as the driver reports it: clocks, SMs, bus; no ceilings. */
void synth_h100_peaks(struct gp_rec_device_peaks *p);
/* CLOCK_SYNC: the trace clock read with CLOCK_REALTIME and CLOCK_MONOTONIC. */
void synth_clock_sync(struct synth *s, uint64_t trace_ns, uint64_t realtime_ns,
		      uint64_t monotonic_ns);
void synth_end(struct synth *s, uint64_t end_ns, uint64_t lost);

/* Compress and write the pending records as one chunk (none: no chunk). */
int synth_flush_chunk(struct synth *s);
/* The same, a chunk of no records (a raw size of 0) where none are pending. */
int synth_empty_chunk(struct synth *s);

/*
 * Flush and close.  In memory mode *buf and *len receive the malloc'd file
 * (pass NULLs for a file).  Returns 0, or -1 when anything failed.
 */
int synth_close(struct synth *s, unsigned char **buf, size_t *len);

/* Read a whole file into memory (malloc'd); NULL on failure. */
unsigned char *synth_slurp(const char *path, size_t *len);

/*
 * Runs fn(argc, argv) (an analyzer subcommand) with stdout, and stderr
 * unless err is NULL, captured through files in dir: malloc'd,
 * NUL-terminated strings.  Returns fn's result.
 */
int synth_capture(const char *dir, char **out, char **err, int (*fn)(int, char **), int argc,
		  char **argv);

/* synth_capture with the arguments listed, NULL-terminated (31 at most). */
int synth_run(const char *dir, char **out, char **err, int (*fn)(int, char **), ...);

#endif
