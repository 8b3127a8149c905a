/*
 * Trace reader: validates a gpuprof trace file and streams its records to a
 * callback, one validated chunk at a time, without keeping them.  Damage
 * (a cut file, a bad checksum, a broken frame) stops the read at the start
 * of the damaged chunk; everything before it has been delivered.  Long
 * inputs are decoded on helper threads as well, one per further CPU (per
 * further thread of ga_reader_jobs when set); the callback always runs on
 * the calling thread, in file order.  Runs offline only.
 */
#ifndef GA_ANALYZER_READER_H
#define GA_ANALYZER_READER_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprof/trace.h"

/* Threads that decode one trace at most: the caller's and helpers. */
#define GA_READER_JOBS_MAX 64

/*
 * Threads that decode a trace, the caller's included (-j N of the
 * subcommands): 0, the default, is one per CPU available to the process
 * (at most GA_READER_JOBS_MAX); 1 decodes on the caller's thread alone.
 * Set before reading; the readers only read it.
 */
extern unsigned ga_reader_jobs;

/* CPUs available to this process (its affinity mask), 1 to GA_READER_JOBS_MAX. */
unsigned ga_reader_cpus(void);

/* The threads -j asks for: ga_reader_jobs, or ga_reader_cpus() where that is 0. */
unsigned ga_reader_threads(void);

/* Return codes of ga_reader_read_*(). */
#define GA_READ_OK 0               /* read, possibly only in part: see info */
#define GA_READ_EOPEN (-1)         /* cannot open or read the file at all */
#define GA_READ_EFORMAT (-2)       /* not a trace this reader can read */
#define GA_READ_ECALLBACK (-3)     /* the callback asked to stop */
#define GA_READ_EHOLD (-4)         /* a paced look-ahead held too much (ga_reader_read_paced) */

struct ga_read_info {
	struct gp_file_header header;
	uint64_t file_size;
	uint64_t stop_offset;      /* first byte not read: file_size when whole */
	uint64_t bytes_unread;     /* file_size - stop_offset */
	int damaged;               /* stopped early; reason says why */
	int finished;              /* a GP_REC_END record was read */
	char reason[192];          /* "chunk 7: checksum mismatch" */
	uint32_t chunks;           /* valid chunks read */
	uint32_t last_flag;        /* a chunk carried GP_CHUNK_F_LAST */
	uint64_t records;          /* records delivered, PAD excluded */
	uint64_t by_type[GP_REC_TYPE_COUNT];
	uint64_t unknown;          /* records of types this reader skips */
	uint64_t malformed;        /* known types too short to use: skipped */
	uint64_t chunk_lost;       /* sum of gp_chunk_header.lost */
	uint64_t raw_bytes;        /* decoded bytes of the chunks read */
	uint64_t held_max;         /* of them, a paced read held at most (ga_reader_read_paced) */
};

/*
 * Called once per record, in file order.  rec is 8-byte aligned, rec->size
 * bytes are readable and at least the size of the type's struct (for types
 * this reader knows; GP_REC_STRING data and GP_REC_STACK frames fit too).
 * Return 0 to go on, non-zero to stop the read with GA_READ_ECALLBACK.
 */
typedef int (*ga_reader_fn)(void *ctx, const struct gp_rec *rec);

/*
 * Reads of the file name name come from fd (an unlinked temporary file a
 * pipe was copied into), each read from its start, until unaliased.  Set
 * before reading, from one thread.  0, or -1 when the table is full.
 */
int ga_reader_alias(const char *name, int fd);
void ga_reader_unalias(const char *name);

/*
 * Read the file at path.  On GA_READ_EOPEN / GA_READ_EFORMAT, err holds
 * "PATH: byte OFFSET: message".  info is filled in every case.
 */
int ga_reader_read_file(const char *path, ga_reader_fn fn, void *ctx,
			struct ga_read_info *info, char *err, size_t errlen);

/* The same over a buffer in memory; name stands for the path in messages. */
int ga_reader_read_mem(const char *name, const void *buf, size_t len,
		       ga_reader_fn fn, void *ctx, struct ga_read_info *info,
		       char *err, size_t errlen);

/*
 * As ga_reader_read_file() (buf NULL) or ga_reader_read_mem(), for a
 * callback that stops early, most times in the first chunk (a scan of a
 * trace's head: its CONFIG record): the first chunk is decompressed a
 * piece at a time, each piece's records handed over before the next is
 * decompressed, so that a stop leaves the rest of it undecoded.  The
 * records, their order and checks are a read's at once; where the first
 * chunk's frame, its checksum right, does not decompress to its end, the
 * records before the fault were handed over already (a read at once hands
 * none of that chunk).
 */
int ga_reader_read_head(const char *path, const void *buf, size_t len, ga_reader_fn fn,
			void *ctx, struct ga_read_info *info, char *err, size_t errlen);

/* Chunks a look-ahead may run before the callback at most (ga_reader_read_ahead). */
#define GA_READER_LAG_MAX 16

/*
 * One read, two cursors: ahead(actx, rec) sees each record of the types
 * in types (bit 1 << type; the others it is not handed) lag chunks
 * (at most GA_READER_LAG_MAX) before fn(ctx, rec) does, over chunks
 * decoded once and held in between (lag chunks of GP_CHUNK_RAW_MAX bytes
 * at most).  The file at path when buf is NULL, else len bytes at buf
 * (path names them).  Both cursors go in file order on the calling
 * thread; info counts what fn was given.  A record with a bad size ends
 * the look-ahead there and fn reads up to it, as ga_reader_read_file()
 * does.  Returns as ga_reader_read_file(); a non-zero return of either
 * callback stops the read with GA_READ_ECALLBACK.
 */
int ga_reader_read_ahead(const char *path, const void *buf, size_t len, ga_reader_fn ahead,
			 void *actx, uint64_t types, unsigned lag, ga_reader_fn fn, void *ctx,
			 struct ga_read_info *info, char *err, size_t errlen);

/*
 * A look-ahead paced by what it found (ga_reader_read_paced): the callback
 * reads chunk seq once the look-ahead has read lag chunks more (or all it
 * will) and ready(actx, seq) says it may, the chunks in between held
 * decoded, hold_max bytes of them at most (each counted 256 bytes more
 * than its records).  chunk(actx, seq) comes before
 * the look-ahead reads chunk seq; end(actx) once it has read all it will
 * (the end of the file, or a record with a bad size), before the callback
 * reads the chunks it still holds: 0, or non-zero to stop the read with
 * GA_READ_ECALLBACK.
 */
struct ga_reader_pace {
	void (*chunk)(void *actx, uint32_t seq);
	int (*ready)(void *actx, uint32_t seq);
	int (*end)(void *actx);
	unsigned lag;
	size_t hold_max;
};

/*
 * ga_reader_read_ahead() paced: returns as it does, or GA_READ_EHOLD where
 * the look-ahead would hold more than hold_max bytes for the callback (the
 * read stops there; err says where).
 */
int ga_reader_read_paced(const char *path, const void *buf, size_t len, ga_reader_fn ahead,
			 void *actx, uint64_t types, const struct ga_reader_pace *pace,
			 ga_reader_fn fn, void *ctx, struct ga_read_info *info, char *err,
			 size_t errlen);

/*
 * The earliest nonzero t_min of the chunk headers of a trace (the file at
 * path when buf is NULL, else len bytes at buf), read without decoding a
 * frame: the headers of the chunks that follow each other from the file
 * header on, up to the first that is not one (bad magic, a frame past the
 * end).  Views that need the traces' first time before the first record
 * is read take it from here (model/analysis.c).  Returns 0 with *t_min
 * set (UINT64_MAX: no chunk gave one), or -1 where the file cannot be
 * opened or its header is not a trace's.
 */
int ga_reader_chunk_tmin(const char *path, const void *buf, size_t len, uint64_t *t_min);

/*
 * One line about a damaged or unfinished read, without a trailing newline:
 * "trace truncated at byte 123 of 456 (chunk 7: checksum mismatch); 333
 * bytes not read - the report covers what precedes".  Empty when the file
 * was read whole and finished.
 */
void ga_reader_describe(const struct ga_read_info *info, char *buf, size_t n);

#endif
