/*
 * The trace file: creation (never overwriting unless asked), the file
 * header, and the writer thread that compresses sealed chunks and appends
 * them with write(2).
 * Context: gp_tracefile_open/start/stop run on the recorder's control paths
 * (initialization, exit); the thread body is the only place that
 * compresses or writes.
 */
#ifndef GP_TRACEFILE_H
#define GP_TRACEFILE_H

#include "flight.h"
#include "ring.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct gp_tracefile {
	int fd;
	char path[4096];
	struct gp_ring *ring;
	pthread_t thread;
	int thread_started;
	int level;                 /* zstd level */
	void *cctx;                /* ZSTD_CCtx */
	void *cbuf;
	size_t ccap;
	uint32_t seq;
	uint64_t offset;           /* end of the last whole chunk */
	uint64_t dev, ino;         /* identity of the file, to verify fd */
	int reserve;               /* fallocate works: room kept for the end */
	int failed;                /* a write failed; later data chunks are dropped */
	int error;                 /* errno of that failure */
	uint32_t reopened;         /* times the program closed or replaced fd */
	uint64_t compress_errors;
	uint64_t records_written;
	uint64_t records_lost;     /* in chunks that could not be written */
	uint64_t bytes_raw;
	struct gp_flight *flight;  /* chunks go there, not into a file */
};

/*
 * Creates the file from an expanded template (see gp_config_expand; %n
 * picks the first free number; a relative name is taken from the directory
 * the program started in) and writes the file header.  Without force an
 * existing name is never touched (-EEXIST); with force it is replaced
 * (renamed over), never written through, unless another recorder is still
 * writing it (-EBUSY).  The name is given only to a complete new file, so
 * a failure leaves the old file of that name as it was.  Symlinks are
 * never followed.  A failure is also told to gpuprof run (a "!" line in
 * its session file).  Returns 0 or -errno.
 */
int gp_tracefile_open(struct gp_tracefile *t, const char *tmpl, int force,
		      uint32_t clock_id, uint64_t created_ns);

/*
 * A trace kept in memory (the flight recorder): compressed chunks go to f,
 * no file is made.  Returns 0 or -ENOMEM.
 */
int gp_tracefile_open_memory(struct gp_tracefile *t, struct gp_flight *f);

/*
 * Appends to the file a chunk compressed earlier (the flight recorder's):
 * header h as it was kept, frame in t's compression buffer (see
 * gp_tracefile_frame_buf); gives it the next sequence number and its
 * checksum.  Returns 0 or -errno (the records are counted as lost).
 */
int gp_tracefile_put_frame(struct gp_tracefile *t, const struct gp_chunk_header *h);
/* Where gp_tracefile_put_frame takes its frame from, and its size. */
void *gp_tracefile_frame_buf(struct gp_tracefile *t, size_t *cap);

/* Starts the writer thread on ring r.  Returns 0 or -errno. */
int gp_tracefile_start(struct gp_tracefile *t, struct gp_ring *r);

/*
 * Delta-codes (in place: the chunk's records are consumed), compresses and
 * appends one chunk.  After a write error only GP_CHUNK_F_LAST chunks are
 * still written (into the reserved room).  Returns 0 or -errno; records
 * that did not reach the file are added to records_lost.
 */
int gp_tracefile_write_chunk(struct gp_tracefile *t, struct gp_chunk *c);

/*
 * Closes the ring, lets the writer drain it and joins it (waiting at most
 * wait_ms), closes the file.  -ETIMEDOUT if the writer is stuck: it is then
 * left detached with its file and buffers.
 */
int gp_tracefile_stop(struct gp_tracefile *t, int wait_ms);

#endif
