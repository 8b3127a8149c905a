/*
 * Trace reader (see reader.h): file header checks, chunk validation
 * (magic, bounds, checksum, sequence, one zstd frame of the stated size),
 * record framing, then one callback per record.  Runs offline only.
 *
 * Nothing read from the file is trusted: every size is checked against the
 * format's bounds before it is used, so any input ends in a message, never
 * in a crash or a buffer larger than GP_CHUNK_COMP_MAX (one per decoding
 * thread) or GP_CHUNK_RAW_MAX (one per chunk slot).
 *
 * Decoding (read, checksum, decompress, delta-decode) is shared between the
 * calling thread and helper threads; the records are handed to the callback
 * on the calling thread only, in file order.  Chunks are claimed in order:
 * whoever claims one reads its bytes (under the lock, so the source is read
 * sequentially) and decodes it (outside the lock, into the chunk's slot).
 * The caller takes the next chunk from its slot; while it is not ready the
 * caller decodes a later one itself instead of waiting, so the work spreads
 * over the cores whichever side is slower.  Chunk frames are independent
 * zstd frames, so any thread may decode any chunk.  Long reads show a
 * progress line on a terminal (base/progress.h).
 */
#include "read/reader.h"

#include "gpuprof/delta.h"
#include "base/progress.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>


/* Smallest size of each known record type: shorter ones are skipped. */
static const uint16_t min_size[GP_REC_TYPE_COUNT] = {
	[GP_REC_PAD] = sizeof(struct gp_rec),
	[GP_REC_STRING] = sizeof(struct gp_rec_string),
	[GP_REC_PROCESS] = sizeof(struct gp_rec_process),
	[GP_REC_CLOCK_SYNC] = sizeof(struct gp_rec_clock_sync),
	[GP_REC_DEVICE] = GP_REC_DEVICE_V1_SIZE, /* limits appended later */
	[GP_REC_CONTEXT] = sizeof(struct gp_rec_context),
	[GP_REC_STREAM] = sizeof(struct gp_rec_stream),
	[GP_REC_THREAD] = sizeof(struct gp_rec_thread),
	[GP_REC_KERNEL] = sizeof(struct gp_rec_kernel),
	[GP_REC_MEMCPY] = sizeof(struct gp_rec_memcpy),
	[GP_REC_MEMSET] = sizeof(struct gp_rec_memset),
	[GP_REC_GRAPH] = sizeof(struct gp_rec_graph),
	[GP_REC_API] = sizeof(struct gp_rec_api),
	[GP_REC_NVTX_RANGE] = sizeof(struct gp_rec_nvtx),
	[GP_REC_NVTX_MARK] = sizeof(struct gp_rec_nvtx),
	[GP_REC_NVTX_OPEN] = sizeof(struct gp_rec_nvtx),
	[GP_REC_STACK] = sizeof(struct gp_rec_stack),
	[GP_REC_FRAME] = sizeof(struct gp_rec_frame),
	[GP_REC_CORR_STACK] = sizeof(struct gp_rec_corr_stack),
	[GP_REC_GRAPH_NODE] = sizeof(struct gp_rec_graph_node),
	[GP_REC_CAPTURE_RANGE] = sizeof(struct gp_rec_capture_range),
	[GP_REC_LOST] = sizeof(struct gp_rec_lost),
	[GP_REC_OVERHEAD] = sizeof(struct gp_rec_overhead),
	[GP_REC_CONFIG] = sizeof(struct gp_rec_config),
	[GP_REC_END] = sizeof(struct gp_rec_end),
	[GP_REC_METRICS] = sizeof(struct gp_rec_metrics),
	[GP_REC_DEVICE_PEAKS] = sizeof(struct gp_rec_device_peaks),
	[GP_REC_METRICS_INFO] = sizeof(struct gp_rec_metrics_info),
	[GP_REC_FLIGHT] = sizeof(struct gp_rec_flight),
	[GP_REC_MEMORY] = sizeof(struct gp_rec_memory),
	[GP_REC_PYFRAME] = sizeof(struct gp_rec_pyframe),
	[GP_REC_MODULE] = sizeof(struct gp_rec_module),
	[GP_REC_GPU_SERIES] = sizeof(struct gp_rec_gpu_series),
	[GP_REC_GPU_SAMPLE] = sizeof(struct gp_rec_gpu_sample),
};

/* Where bytes come from: a file descriptor or a buffer in memory. */
struct src {
	int fd;
	const unsigned char *mem;
	uint64_t size;             /* UINT64_MAX until known (pipes) */
	uint64_t pos;
};

/* Helper threads at most (-j 64 at most), and chunks in flight per thread. */
#define MAX_HELPERS (GA_READER_JOBS_MAX - 1)
#define SLOTS_PER_THREAD 2
/* Smaller inputs decode on the caller's thread: a thread costs more than it saves. */
#define HELPERS_MIN_BYTES (512u << 10)
/*
 * Helpers a read uses at most, and the compressed bytes each must have to
 * decode.  The callback runs on one thread at a third of one decoding
 * thread's speed or less, so three helpers keep it fed; on 16 cores, 15
 * helpers made NVTX and 64-rank reports 1.5-1.8x slower than 3 (their
 * start per file and their wake-ups: 5 s of system time).
 */
#define HELPERS_USEFUL 3u
#define HELPERS_BYTES_EACH (2u << 20)
#define NSLOTS ((MAX_HELPERS + 1) * SLOTS_PER_THREAD + GA_READER_LAG_MAX)

enum slot_state {
	SLOT_FREE,                 /* the next chunk of its ring position may go here */
	SLOT_BUSY,                 /* claimed, being decoded */
	SLOT_READY,                /* decoded, for the caller */
};

enum slot_kind {
	SLOT_CHUNK,                /* raw holds the chunk's records */
	SLOT_EOF,                  /* clean end of the file at off */
	SLOT_DAMAGE,               /* the chunk at off is damaged: msg says how */
	SLOT_FAIL,                 /* cannot go on (no memory): msg says why */
};

struct slot {
	int state;                 /* enum slot_state, under rd.mu when threaded */
	int kind;                  /* enum slot_kind, once READY */
	struct gp_chunk_header ch;
	uint64_t off;              /* file offset of the chunk */
	uint32_t seq;              /* its index in the file */
	unsigned char *raw;        /* decompressed records, 16-byte aligned */
	size_t raw_cap;
	char msg[sizeof(((struct ga_read_info *)0)->reason)];
};

/* What each decoding thread owns. */
struct dec {
	unsigned char *comp;       /* frame bytes read from a file */
	size_t comp_cap;
	ZSTD_DCtx *dctx;
};

struct rd;

/* A helper thread's argument. */
struct hctx {
	struct rd *r;
	struct dec *d;
};

struct rd {
	struct src src;
	const char *name;
	ga_reader_fn fn;
	void *ctx;
	/* A cursor ahead of fn, lag chunks, over the same decoded chunks (ga_reader_read_ahead). */
	ga_reader_fn ahead;
	void *actx;
	uint64_t ahead_types; /* the record types ahead reads: bit 1 << type */
	unsigned lag;
	const struct ga_reader_pace *pace; /* ga_reader_read_paced(), else NULL */
	int head;                          /* the first chunk a piece at a time (ga_reader_read_head) */
	struct ga_read_info *info;
	char *err;
	size_t errlen;
	struct dec dec[MAX_HELPERS + 1];   /* [0]: the caller's */
	int io_error;
	/* Claiming, under mu when threaded: the source, next_off, claimed, ended. */
	uint64_t next_off;         /* where the next chunk starts */
	uint32_t claimed;          /* chunks claimed so far: the next one's index */
	int ended;                 /* a claimed chunk ends the file: claim no more */
	unsigned nslots;           /* ring size in use, <= NSLOTS */
	struct slot slots[NSLOTS];
	/* mu guards the slot states, the claim state and stop; cv: any of them changed. */
	pthread_t helper[MAX_HELPERS];
	struct hctx hctx[MAX_HELPERS];
	unsigned nhelpers;
	int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/*
 * Make n bytes at the current position available in *out.  Returns how many
 * are (fewer at end of file), or -1 on a read error or no memory.
 */
static ssize_t src_take(struct rd *r, struct dec *d, size_t n, const unsigned char **out)
{
	struct src *s = &r->src;
	size_t got = 0;

	if (s->mem) {
		uint64_t left = s->size - s->pos;

		if (n > left)
			n = (size_t)left;
		*out = s->mem + s->pos;
		s->pos += n;
		return (ssize_t)n;
	}
	if (n > d->comp_cap) {
		unsigned char *p = realloc(d->comp, n);

		if (!p) {
			r->io_error = ENOMEM;
			return -1;
		}
		d->comp = p;
		d->comp_cap = n;
	}
	while (got < n) {
		ssize_t k = read(s->fd, d->comp + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r->io_error = errno;
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	s->pos += got;
	if (got < n && s->size == UINT64_MAX)
		s->size = s->pos;
	*out = d->comp;
	return (ssize_t)got;
}

/* Bytes left in the source; for a pipe, drain it to count them. */
static uint64_t src_left(struct rd *r)
{
	struct src *s = &r->src;
	static unsigned char sink[65536];

	while (s->size == UINT64_MAX) {
		ssize_t k = read(s->fd, sink, sizeof(sink));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			s->size = s->pos;
		else
			s->pos += (uint64_t)k;
	}
	return s->size >= s->pos ? s->size - s->pos : 0;
}

static void fail(struct rd *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct rd *r, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->errlen)
		snprintf(r->err, r->errlen, "%s: byte %" PRIu64 ": %s", r->name, off, msg);
}

/* Stop at the chunk starting at off: everything before it has been read. */
static void damage(struct rd *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void damage(struct rd *r, uint64_t off, const char *fmt, ...)
{
	struct ga_read_info *info = r->info;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(info->reason, sizeof(info->reason), fmt, ap);
	va_end(ap);
	info->damaged = 1;
	info->stop_offset = off;
	info->file_size = r->src.pos + src_left(r);
	info->bytes_unread = info->file_size - off;
}

static int check_header(struct rd *r)
{
	struct ga_read_info *info = r->info;
	struct gp_file_header *h = &info->header;
	const unsigned char *p;
	ssize_t got = src_take(r, &r->dec[0], sizeof(*h), &p);
	uint64_t size;

	if (got < 0) {
		fail(r, 0, "cannot read: %s", strerror(r->io_error));
		return GA_READ_EOPEN;
	}
	memcpy(h, p, (size_t)got);
	if ((size_t)got >= sizeof(h->magic) &&
	    memcmp(h->magic, GP_FILE_MAGIC, sizeof(h->magic)) != 0) {
		fail(r, 0, "not a gpuprof trace");
		return GA_READ_EFORMAT;
	}
	if ((size_t)got < sizeof(*h)) {
		fail(r, 0, "file too short for a gpuprof header (%zd bytes)", got);
		return GA_READ_EFORMAT;
	}
	if (h->endian != GP_ENDIAN_MARKER) {
		if (h->endian == 0x0201)
			fail(r, 14, "written on a big-endian host; this reader reads "
			     "little-endian traces only");
		else
			fail(r, 14, "bad endianness marker 0x%04x", h->endian);
		return GA_READ_EFORMAT;
	}
	if (h->min_reader > GP_FORMAT_VERSION) {
		fail(r, 10, "written by a newer gpuprof: format version %u needs a reader of "
		     "version %u or later; this reader is version %d", (unsigned)h->version,
		     (unsigned)h->min_reader, GP_FORMAT_VERSION);
		return GA_READ_EFORMAT;
	}
	if ((h->features & GP_FEAT_HEADER_CRC) && gp_header_checksum(h) != h->header_crc) {
		fail(r, offsetof(struct gp_file_header, header_crc),
		     "file header checksum mismatch (stored 0x%08x, computed 0x%08x)",
		     h->header_crc, gp_header_checksum(h));
		return GA_READ_EFORMAT;
	}
	if (h->version == 0 || h->min_reader == 0) {
		fail(r, 8, "bad format version %u (minimum reader %u)",
		     (unsigned)h->version, (unsigned)h->min_reader);
		return GA_READ_EFORMAT;
	}
	if (h->header_size < sizeof(*h)) {
		fail(r, 12, "bad header size %u", (unsigned)h->header_size);
		return GA_READ_EFORMAT;
	}
	if (h->header_size > sizeof(*h)) {
		/* A newer writer's longer header: skip what this reader does not know. */
		size_t extra = h->header_size - sizeof(*h);

		got = src_take(r, &r->dec[0], extra, &p);
		if (got < 0) {
			fail(r, sizeof(*h), "cannot read: %s", strerror(r->io_error));
			return GA_READ_EOPEN;
		}
		if ((size_t)got < extra) {
			size = sizeof(*h) + (uint64_t)got;
			fail(r, 0, "file too short for a gpuprof header (%" PRIu64 " bytes)",
			     size);
			return GA_READ_EFORMAT;
		}
	}
	return GA_READ_OK;
}

/* Type-specific size checks beyond the fixed struct. */
static int rec_usable(const struct gp_rec *rec)
{
	if (rec->type < GP_REC_TYPE_COUNT && rec->size < min_size[rec->type])
		return 0;
	if (rec->type == GP_REC_STRING) {
		const struct gp_rec_string *s = (const void *)rec;

		return s->id != 0 && (uint64_t)s->len <= rec->size - sizeof(*s);
	}
	if (rec->type == GP_REC_STACK)
		return (uint64_t)rec->aux * 8 <= rec->size - sizeof(struct gp_rec_stack);
	if (rec->type == GP_REC_METRICS)
		return (uint64_t)rec->aux * sizeof(struct gp_metric_value) <=
		       rec->size - sizeof(struct gp_rec_metrics);
	if (rec->type == GP_REC_MODULE)
		return rec->aux <= GP_BUILD_ID_MAX &&
		       rec->aux <= rec->size - sizeof(struct gp_rec_module);
	if (rec->type == GP_REC_GPU_SERIES)
		return (uint64_t)rec->aux * 4 <= rec->size - sizeof(struct gp_rec_gpu_series);
	if (rec->type == GP_REC_GPU_SAMPLE)
		return (uint64_t)rec->aux * 8 <= rec->size - sizeof(struct gp_rec_gpu_sample);
	return 1;
}

/*
 * Types whose size is all rec_usable() checks: a record of one of them that
 * is long enough is usable without its other tests (most records).
 */
_Static_assert(GP_REC_TYPE_COUNT <= 64, "a type mask of 64 bits");
#define BIT(t) (1ull << (t))
static const uint64_t sized_only =
	((GP_REC_TYPE_COUNT == 64 ? 0 : 1ull << GP_REC_TYPE_COUNT) - 1) &
	~(BIT(GP_REC_PAD) | BIT(GP_REC_STRING) | BIT(GP_REC_STACK) | BIT(GP_REC_METRICS) |
	  BIT(GP_REC_MODULE) | BIT(GP_REC_GPU_SERIES) | BIT(GP_REC_GPU_SAMPLE));
#undef BIT

/* How far ahead of the record handed over deliver() asks for the chunk's bytes. */
#define READ_PREFETCH 4096

/*
 * Hand the chunk's records to the callback, checking the framing as it
 * goes: a pre-pass would read a chunk of several MiB twice, the second
 * time from beyond the cache.  Framing errors in a chunk whose checksum
 * held are writer bugs; the records before the bad one are delivered.
 * Returns 0, 1 on bad framing (*bad_off, *bad_size set), -1 when the
 * callback stops.
 */
static inline __attribute__((always_inline)) int
deliver(struct rd *r, ga_reader_fn fn, void *ctx, int count, uint64_t types,
	const unsigned char *p, uint32_t n, uint32_t *bad_off, uint32_t *bad_size)
{
	struct ga_read_info *info = r->info;
	uint32_t off = 0;

	while (off < n) {
		const struct gp_rec *rec = (const struct gp_rec *)(const void *)(p + off);
		uint32_t size = rec->size;

		/*
		 * A chunk decoded by a helper, on another core: each record's first
		 * touch missed the cache, a quarter of the callback's thread's time
		 * on a kernel trace.  Asked for READ_PREFETCH bytes ahead, both
		 * lines of a 112-byte kernel record come in time (a prefetch never
		 * faults; the address is an integer's, past the buffer near its end).
		 */
		__builtin_prefetch((const void *)((uintptr_t)p + off + READ_PREFETCH));
		__builtin_prefetch((const void *)((uintptr_t)p + off + READ_PREFETCH + 64));

		if (size < sizeof(*rec) || size % 8 || size > n - off) {
			*bad_off = off;
			*bad_size = size;
			return 1;
		}
		off += size;
		/* Types the callback does not read (a look-ahead's, ga_reader_read_ahead). */
		if (rec->type < GP_REC_TYPE_COUNT && !(types >> rec->type & 1))
			continue;
		if (rec->type < GP_REC_TYPE_COUNT && (sized_only >> rec->type & 1) &&
		    size >= min_size[rec->type]) {
			/* Usable: rec_usable() would say so. */
		} else if (rec->type == GP_REC_PAD) {
			continue;
		} else if (rec->type >= GP_REC_TYPE_COUNT) {
			info->unknown += (uint64_t)count;
			continue;
		} else if (!rec_usable(rec)) {
			info->malformed += (uint64_t)count;
			continue;
		}
		if (count) {
			info->records++;
			info->by_type[rec->type]++;
			if (rec->type == GP_REC_END)
				info->finished = 1;
		}
		if (fn && fn(ctx, rec))
			return -1;
	}
	return 0;
}

/* Describe why the chunk at s->off cannot be read; s becomes terminal. */
static void slot_stop(struct slot *s, int kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void slot_stop(struct slot *s, int kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	s->kind = kind;
}

/*
 * Claim the next chunk into s (under mu when threaded): read its header
 * and frame.  Returns the frame, or NULL when s ends the file (s->kind
 * says how, and nothing more is claimed).
 */
static const unsigned char *claim(struct rd *r, struct dec *d, struct slot *s)
{
	uint32_t seq = r->claimed++;
	struct gp_chunk_header ch;
	const unsigned char *p;
	ssize_t got;

	s->off = r->next_off;
	s->seq = seq;
	r->ended = 1;
	got = src_take(r, d, sizeof(ch), &p);
	if (got < 0) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: read error: %s", seq, strerror(r->io_error));
		return NULL;
	}
	if (got == 0) {
		s->kind = SLOT_EOF;
		return NULL;
	}
	if ((size_t)got < sizeof(ch)) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: header cut short (%zd of %zu bytes)", seq,
			  got, sizeof(ch));
		return NULL;
	}
	memcpy(&ch, p, sizeof(ch));
	if (ch.magic != GP_CHUNK_MAGIC) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: bad chunk magic 0x%08x", seq, ch.magic);
		return NULL;
	}
	if (ch.comp_size == 0 || ch.comp_size > GP_CHUNK_COMP_MAX ||
	    ch.raw_size > GP_CHUNK_RAW_MAX || ch.raw_size % 8) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: sizes out of bounds (compressed %u, raw %u)",
			  seq, ch.comp_size, ch.raw_size);
		return NULL;
	}
	got = src_take(r, d, ch.comp_size, &p);
	if (got < 0) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: read error: %s", seq, strerror(r->io_error));
		return NULL;
	}
	if ((size_t)got < ch.comp_size) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: cut short (%zd of %u compressed bytes)", seq,
			  got, ch.comp_size);
		return NULL;
	}
	s->ch = ch;
	r->next_off += sizeof(ch) + ch.comp_size;
	r->ended = 0;
	return p;
}

/*
 * The claimed chunk s's checks before it is decompressed (checksum,
 * sequence, one zstd frame), and room for its records.  0, or -1 when s
 * ends the file.
 */
static int chunk_ready(struct slot *s, const unsigned char *p)
{
	const struct gp_chunk_header *ch = &s->ch;
	uint32_t seq = s->seq;

	if (gp_chunk_checksum(ch, p, ch->comp_size) != ch->checksum) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: checksum mismatch", seq);
		return -1;
	}
	if (ch->seq != seq) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: sequence number %u, expected %u", seq,
			  ch->seq, seq);
		return -1;
	}
	if (ZSTD_findFrameCompressedSize(p, ch->comp_size) != ch->comp_size) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: not exactly one zstd frame", seq);
		return -1;
	}
	if (ch->raw_size > s->raw_cap) {
		/* One buffer per slot, reused: records are 8-aligned in it. */
		unsigned char *np = realloc(s->raw, ch->raw_size);

		if (!np) {
			slot_stop(s, SLOT_FAIL, "out of memory");
			return -1;
		}
		s->raw = np;
		s->raw_cap = ch->raw_size;
	}
	return 0;
}

/*
 * Check, decompress and delta-decode the claimed chunk s whose frame is at
 * p (outside the lock).  Returns 0, or -1 when s ends the file.
 */
static int decode(struct dec *d, struct slot *s, const unsigned char *p)
{
	const struct gp_chunk_header *ch = &s->ch;
	uint32_t seq = s->seq;
	size_t dn;

	if (chunk_ready(s, p))
		return -1;
	dn = ZSTD_decompressDCtx(d->dctx, s->raw, ch->raw_size, p, ch->comp_size);
	if (ZSTD_isError(dn)) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: zstd: %s", seq, ZSTD_getErrorName(dn));
		return -1;
	}
	if (dn != ch->raw_size) {
		slot_stop(s, SLOT_DAMAGE, "chunk %u: decompressed to %zu bytes, header says %u",
			  seq, dn, ch->raw_size);
		return -1;
	}
	if (ch->flags & GP_CHUNK_F_DELTA)
		gp_delta_apply(s->raw, ch->raw_size, 1);
	s->kind = SLOT_CHUNK;
	return 0;
}

/*
 * Claim and decode the next chunk with d's buffers, if its slot is free.
 * Called and returns with mu held; drops it while decoding.  Returns 0
 * when there was nothing to do.
 */
static int decode_next(struct rd *r, struct dec *d)
{
	struct slot *s = &r->slots[r->claimed % r->nslots];
	const unsigned char *p;

	if (r->ended || r->stop || s->state != SLOT_FREE)
		return 0;
	s->state = SLOT_BUSY;
	p = claim(r, d, s);
	if (p) {
		int rc;

		pthread_mutex_unlock(&r->mu);
		rc = decode(d, s, p);
		pthread_mutex_lock(&r->mu);
		if (rc)
			r->ended = 1;
	}
	/* Under mu: publishes the slot's contents to slot_take(), which reads
	 * the state under mu too. */
	s->state = SLOT_READY;
	pthread_cond_broadcast(&r->cv);
	return 1;
}

static void *helper(void *arg)
{
	struct hctx *h = arg;
	struct rd *r = h->r;

	pthread_mutex_lock(&r->mu);
	while (!r->stop && !r->ended)
		if (!decode_next(r, h->d))
			pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/*
 * The caller's i-th chunk (or the end of the file).  While a helper is
 * still decoding it, decode a later chunk here rather than wait.
 */
static struct slot *slot_take(struct rd *r, uint32_t i)
{
	struct slot *s = &r->slots[i % r->nslots];
	const unsigned char *p;

	if (!r->nhelpers) {
		p = claim(r, &r->dec[0], s);
		if (p)
			decode(&r->dec[0], s, p);
		return s;
	}
	pthread_mutex_lock(&r->mu);
	while (s->state != SLOT_READY)
		if (!decode_next(r, &r->dec[0]))
			pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	return s;
}

/* Give s back for a later chunk. */
static void slot_release(struct rd *r, struct slot *s)
{
	if (!r->nhelpers)
		return;
	/* Under mu: the caller is done with raw before decode_next() reuses it. */
	pthread_mutex_lock(&r->mu);
	s->state = SLOT_FREE;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Stop and join the helpers: the source is the caller's alone again. */
static void helpers_stop(struct rd *r)
{
	unsigned i;

	if (!r->nhelpers)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	for (i = 0; i < r->nhelpers; i++)
		pthread_join(r->helper[i], NULL);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	r->nhelpers = 0;
}

unsigned ga_reader_jobs;

unsigned ga_reader_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
#endif
	return n < 1 ? 1 : (unsigned long)n > GA_READER_JOBS_MAX ? GA_READER_JOBS_MAX : (unsigned)n;
}

unsigned ga_reader_threads(void)
{
	return ga_reader_jobs ? ga_reader_jobs : ga_reader_cpus();
}

/*
 * One helper per thread of ga_reader_jobs (or per CPU) beyond the caller's,
 * at most HELPERS_USEFUL and one per HELPERS_BYTES_EACH of the left bytes.
 */
static unsigned helpers_wanted(uint64_t left)
{
	unsigned n = ga_reader_threads();
	uint64_t by_size = left / HELPERS_BYTES_EACH;

	if (n <= 1 || left < HELPERS_MIN_BYTES)
		return 0;
	n = n - 1 < HELPERS_USEFUL ? n - 1 : HELPERS_USEFUL;
	if (by_size < n)
		n = by_size ? (unsigned)by_size : 1;
	return n < MAX_HELPERS ? n : MAX_HELPERS;
}

/*
 * Start up to want helpers; with none the caller decodes alone, through
 * the same code.  Returns -1 when memory runs out.
 */
static int helpers_start(struct rd *r, unsigned want)
{
	unsigned i;

	r->nslots = (want + 1) * SLOTS_PER_THREAD + r->lag;
	for (i = 0; i <= want; i++) {
		/* The caller's may be made already (head_chunk()). */
		if (!r->dec[i].dctx)
			r->dec[i].dctx = ZSTD_createDCtx();
		if (!r->dec[i].dctx) {
			if (i == 0)
				return -1;
			want = i - 1;
			break;
		}
	}
	if (!want)
		return 0;
	if (pthread_mutex_init(&r->mu, NULL))
		return 0;
	if (pthread_cond_init(&r->cv, NULL)) {
		pthread_mutex_destroy(&r->mu);
		return 0;
	}
	for (i = 0; i < want; i++) {
		r->hctx[i].r = r;
		r->hctx[i].d = &r->dec[i + 1];
		/* Counted once running: helpers_stop() joins exactly these. */
		if (pthread_create(&r->helper[i], NULL, helper, &r->hctx[i]))
			break;
		r->nhelpers = i + 1;
	}
	if (!r->nhelpers) {
		/* No thread to be had: decode on the caller's, slower, same result. */
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
	}
	return 0;
}

/*
 * Chunk j's records, raw (header ch, at file offset off), to the callback.
 * Returns 0 to go on, or 1 when the read ends with *res (the helpers
 * stopped).
 */
static int chunk_to_callback(struct rd *r, uint32_t j, const unsigned char *raw,
			     const struct gp_chunk_header *ch, uint64_t off, int *res)
{
	struct ga_read_info *info = r->info;
	uint32_t bad_off, bad_size;
	int rc = deliver(r, r->fn, r->ctx, 1, ~0ull, raw, ch->raw_size, &bad_off, &bad_size);

	if (rc) {
		helpers_stop(r);
		if (rc > 0) {
			damage(r, off, "chunk %u: record at +%u has bad size %u", j, bad_off,
			       bad_size);
			*res = GA_READ_OK;
			return 1;
		}
		fail(r, off, "stopped while processing chunk %u", j);
		info->stop_offset = off;
		*res = GA_READ_ECALLBACK;
		return 1;
	}
	info->chunks++;
	info->raw_bytes += ch->raw_size;
	info->chunk_lost += ch->lost;
	if (ch->flags & GP_CHUNK_F_LAST)
		info->last_flag = 1;
	return 0;
}

/*
 * Chunk j (held since the look-ahead had it) to the callback, then its
 * slot back.  Returns 0 to go on, or 1 when the read ends with *res.
 */
static int to_callback(struct rd *r, uint32_t j, int *res)
{
	struct slot *s = &r->slots[j % r->nslots];

	if (chunk_to_callback(r, j, s->raw, &s->ch, s->off, res))
		return 1;
	slot_release(r, s);
	return 0;
}

/* A chunk a paced look-ahead read and the callback has not yet (read_paced()). */
struct held {
	unsigned char *raw;
	size_t cap;
	struct gp_chunk_header ch;
	uint64_t off;
	uint32_t seq;
};

/* A buffer given back, for a slot to decode into. */
struct spare {
	unsigned char *raw;
	size_t cap;
};

struct hold {
	struct held *q; /* a ring of cap entries: q[(head + k) % cap] */
	size_t head, n, cap;
	uint64_t bytes;        /* their buffers' sizes */
	struct spare *spare;   /* maxspare of them at most: the ring's slots, each takes one */
	size_t nspare, maxspare;
};

/*
 * What a held chunk costs beside its records (its entry, the allocator's
 * share, its header): counted against the bound, so that a trace of many
 * tiny chunks is held no longer than one of few large ones.
 */
#define HOLD_ENTRY_COST 256u

static void hold_free(struct hold *h)
{
	for (size_t k = 0; k < h->n; k++)
		free(h->q[(h->head + k) % h->cap].raw);
	for (size_t k = 0; k < h->nspare; k++)
		free(h->spare[k].raw);
	free(h->q);
	free(h->spare);
	memset(h, 0, sizeof(*h));
}

/* Slot s's chunk (the caller's, READY) to the back of the queue, s given a spare buffer.  0, or -1. */
static int hold_push(struct hold *h, struct slot *s)
{
	struct held *e;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64, k;
		struct held *q = malloc(cap * sizeof(*q));

		if (!q)
			return -1;
		for (k = 0; k < h->n; k++)
			q[k] = h->q[(h->head + k) % h->cap];
		free(h->q);
		h->q = q;
		h->cap = cap;
		h->head = 0;
	}
	e = &h->q[(h->head + h->n++) % h->cap];
	e->raw = s->raw;
	e->cap = s->raw_cap;
	e->ch = s->ch;
	e->off = s->off;
	e->seq = s->seq;
	h->bytes += e->cap;
	if (h->nspare) {
		h->nspare--;
		s->raw = h->spare[h->nspare].raw;
		s->raw_cap = h->spare[h->nspare].cap;
	} else {
		s->raw = NULL;
		s->raw_cap = 0;
	}
	return 0;
}

/* The front chunk's buffer, read: kept for a slot, or freed. */
static void hold_pop(struct hold *h)
{
	struct held *e = &h->q[h->head];

	h->head = (h->head + 1) % h->cap;
	h->n--;
	h->bytes -= e->cap;
	if (h->nspare < h->maxspare)
		h->spare[h->nspare++] = (struct spare){ e->raw, e->cap };
	else
		free(e->raw);
}

/*
 * The front chunk to the callback, then popped.  Returns 0, or 1 when the
 * read ends with *res.
 */
static int hold_deliver(struct rd *r, struct hold *h, int *res)
{
	struct held *e = &h->q[h->head];
	int end = chunk_to_callback(r, e->seq, e->raw, &e->ch, e->off, res);

	hold_pop(h);
	return end;
}

/* Decompressed at a time in the first chunk of a head read: past a zstd block or so. */
#define HEAD_STEP (16u << 10)

/*
 * The end of a read at slot s, which holds no chunk (the end of the file,
 * damage, a failure): *res, as read_chunks() ends.
 */
static int read_end(struct rd *r, struct slot *s)
{
	struct ga_read_info *info = r->info;

	helpers_stop(r);
	if (s->kind == SLOT_DAMAGE) {
		damage(r, s->off, "%s", s->msg);
		return GA_READ_OK;
	}
	if (s->kind == SLOT_FAIL) {
		fail(r, s->off, "%s", s->msg);
		return GA_READ_EOPEN;
	}
	info->stop_offset = s->off;
	info->file_size = s->off;
	info->bytes_unread = 0;
	return GA_READ_OK;
}

/*
 * A head read's first chunk (ga_reader_read_head()), on the caller's
 * thread before any helper starts: decompressed HEAD_STEP bytes at a time,
 * each piece's whole records decoded and handed to the callback before the
 * next is decompressed, so that a callback that stops there leaves the
 * rest of the chunk undecoded.  The records are those a read at once hands
 * over, in the same order, checked the same.  Returns 0 to go on with the
 * second chunk, or 1 when the read ends with *res.
 */
static int head_chunk(struct rd *r, int *res)
{
	struct dec *d = &r->dec[0];
	struct slot *s = &r->slots[0];
	struct gp_delta_state ds;
	const unsigned char *p;
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	size_t whole = 0, given = 0;
	uint32_t bad_off, bad_size;
	int rc;

	memset(&ds, 0, sizeof(ds));
	if (!d->dctx && !(d->dctx = ZSTD_createDCtx())) {
		fail(r, r->next_off, "out of memory");
		*res = GA_READ_EOPEN;
		return 1;
	}
	if (!(p = claim(r, d, s)) || chunk_ready(s, p)) {
		*res = read_end(r, s);
		return 1;
	}
	ZSTD_DCtx_reset(d->dctx, ZSTD_reset_session_only);
	in = (ZSTD_inBuffer){ p, s->ch.comp_size, 0 };
	out = (ZSTD_outBuffer){ s->raw, 0, 0 };
	for (;;) {
		size_t before = out.pos, zr;

		out.size = s->ch.raw_size - out.pos > HEAD_STEP ? out.pos + HEAD_STEP : s->ch.raw_size;
		zr = ZSTD_decompressStream(d->dctx, &out, &in);
		if (ZSTD_isError(zr)) {
			slot_stop(s, SLOT_DAMAGE, "chunk 0: zstd: %s", ZSTD_getErrorName(zr));
			break;
		}
		/* The frame's end exactly at the chunk's size, as a read at once wants it. */
		if (out.pos == s->ch.raw_size ? zr != 0 : zr == 0 || out.pos == before) {
			slot_stop(s, SLOT_DAMAGE, "chunk 0: decompressed to %zu bytes, header says %u",
				  out.pos, s->ch.raw_size);
			break;
		}
		if (s->ch.flags & GP_CHUNK_F_DELTA) {
			whole = gp_delta_run(s->raw, whole, out.pos, 1, &ds);
		} else {
			while (whole + sizeof(struct gp_rec) <= out.pos) {
				uint32_t size = ((const struct gp_rec *)(const void *)(s->raw + whole))->size;

				if (size < sizeof(struct gp_rec) || size % 8 || size > out.pos - whole)
					break;
				whole += size;
			}
		}
		/* The last piece: what follows a bad size too, for deliver() to find it. */
		if (out.pos == s->ch.raw_size)
			whole = out.pos;
		/* Nothing new (an empty chunk has no buffer): no call. */
		rc = whole > given ? deliver(r, r->fn, r->ctx, 1, ~0ull, s->raw + given,
					     (uint32_t)(whole - given), &bad_off, &bad_size) :
				     0;
		if (rc < 0) {
			fail(r, s->off, "stopped while processing chunk 0");
			r->info->stop_offset = s->off;
			*res = GA_READ_ECALLBACK;
			return 1;
		}
		if (rc > 0) {
			damage(r, s->off, "chunk 0: record at +%u has bad size %u",
			       (uint32_t)given + bad_off, bad_size);
			*res = GA_READ_OK;
			return 1;
		}
		given = whole;
		if (out.pos == s->ch.raw_size) {
			r->info->chunks++;
			r->info->raw_bytes += s->ch.raw_size;
			r->info->chunk_lost += s->ch.lost;
			if (s->ch.flags & GP_CHUNK_F_LAST)
				r->info->last_flag = 1;
			return 0;
		}
	}
	r->ended = 1;
	*res = read_end(r, s);
	return 1;
}

static int read_chunks(struct rd *r)
{
	struct ga_read_info *info = r->info;
	uint32_t i = 0, next = 0; /* next: the first chunk the callback has not had */
	int ahead = r->ahead != NULL, rc;

	r->next_off = info->header.header_size;
	if (r->head) {
		if (head_chunk(r, &rc))
			return rc;
		i = next = 1;
	}
	/* A pipe's size is unknown (UINT64_MAX): it may be long. */
	if (helpers_start(r, helpers_wanted(r->src.size - r->src.pos))) {
		fail(r, r->next_off, "out of memory");
		return GA_READ_EOPEN;
	}
	for (;; i++) {
		struct slot *s = slot_take(r, i);
		uint32_t bad_off, bad_size;

		if (s->kind != SLOT_CHUNK) {
			/* The chunks the look-ahead still holds, then the end. */
			while (next < i)
				if (to_callback(r, next++, &rc))
					return rc;
			return read_end(r, s);
		}
		ga_progress_read(r->name, s->off, r->src.size == UINT64_MAX ? 0 : r->src.size, 0);
		if (ahead) {
			rc = deliver(r, r->ahead, r->actx, 0, r->ahead_types, s->raw, s->ch.raw_size, &bad_off,
				     &bad_size);
			if (rc < 0) {
				helpers_stop(r);
				fail(r, s->off, "stopped while processing chunk %u", i);
				info->stop_offset = s->off;
				return GA_READ_ECALLBACK;
			}
			/* Bad framing: the callback reads up to it and reports the damage. */
			if (rc > 0)
				ahead = 0;
		}
		while (next <= i && (!ahead || i + 1 - next > r->lag))
			if (to_callback(r, next++, &rc))
				return rc;
	}
}

/*
 * read_chunks() with a paced look-ahead (ga_reader_read_paced()): each
 * chunk goes to the look-ahead as it is decoded and waits, its buffer
 * taken out of the ring, until the callback may read it.
 */
static int read_paced(struct rd *r)
{
	const struct ga_reader_pace *pc = r->pace;
	struct ga_read_info *info = r->info;
	struct hold h = { 0 };
	uint32_t i;
	int ahead = 1, done = 0, rc = GA_READ_OK;

	r->next_off = info->header.header_size;
	if (helpers_start(r, helpers_wanted(r->src.size - r->src.pos))) {
		fail(r, r->next_off, "out of memory");
		return GA_READ_EOPEN;
	}
	/* No room for spares: each slot decodes into a new buffer (maxspare 0). */
	if ((h.spare = malloc(r->nslots * sizeof(*h.spare))))
		h.maxspare = r->nslots;
	for (i = 0;; i++) {
		struct slot *s = slot_take(r, i);
		uint32_t bad_off, bad_size;
		int end = s->kind != SLOT_CHUNK;

		if (!end) {
			ga_progress_read(r->name, s->off,
					 r->src.size == UINT64_MAX ? 0 : r->src.size, 0);
			if (ahead) {
				pc->chunk(r->actx, i);
				rc = deliver(r, r->ahead, r->actx, 0, r->ahead_types, s->raw,
					     s->ch.raw_size, &bad_off, &bad_size);
				if (rc < 0) {
					helpers_stop(r);
					fail(r, s->off, "stopped while processing chunk %u", i);
					info->stop_offset = s->off;
					rc = GA_READ_ECALLBACK;
					goto out;
				}
				/* Bad framing: the callback reads up to it and reports the damage. */
				if (rc > 0)
					ahead = 0;
				rc = GA_READ_OK;
			}
			if (hold_push(&h, s)) {
				helpers_stop(r);
				fail(r, s->off, "out of memory");
				rc = GA_READ_ECALLBACK;
				goto out;
			}
			if (h.bytes > info->held_max)
				info->held_max = h.bytes;
			slot_release(r, s);
		}
		/* The look-ahead read all it will: what it held is settled. */
		if ((end || !ahead) && !done) {
			done = 1;
			if (pc->end(r->actx)) {
				helpers_stop(r);
				fail(r, s->off, "stopped at the end of the look-ahead");
				rc = GA_READ_ECALLBACK;
				goto out;
			}
		}
		/* The callback reads a chunk lag chunks behind, once it may. */
		while (h.n && (done || i >= h.q[h.head].seq + pc->lag) &&
		       (done || pc->ready(r->actx, h.q[h.head].seq)))
			if (hold_deliver(r, &h, &rc))
				goto out;
		if (h.bytes + h.n * HOLD_ENTRY_COST > pc->hold_max) {
			helpers_stop(r);
			fail(r, h.q[h.head].off, "the look-ahead held more than %zu bytes",
			     pc->hold_max);
			rc = GA_READ_EHOLD;
			goto out;
		}
		if (end || done) {
			/* Past a bad record, the callback stopped at it (damage). */
			helpers_stop(r);
			if (!end)
				goto out;
			if (s->kind == SLOT_DAMAGE) {
				damage(r, s->off, "%s", s->msg);
			} else if (s->kind == SLOT_FAIL) {
				fail(r, s->off, "%s", s->msg);
				rc = GA_READ_EOPEN;
			} else {
				info->stop_offset = s->off;
				info->file_size = s->off;
				info->bytes_unread = 0;
			}
			goto out;
		}
	}
out:
	hold_free(&h);
	return rc;
}

static int read_all(struct rd *r)
{
	int rc = check_header(r);
	unsigned i;

	if (rc == GA_READ_OK)
		rc = r->pace ? read_paced(r) : read_chunks(r);
	ga_progress_read(r->name, 0, 0, 1);
	for (i = 0; i <= MAX_HELPERS; i++) {
		ZSTD_freeDCtx(r->dec[i].dctx);
		free(r->dec[i].comp);
	}
	for (i = 0; i < NSLOTS; i++)
		free(r->slots[i].raw);
	return rc;
}

static void rd_init(struct rd *r, const char *name, ga_reader_fn fn, void *ctx,
		    struct ga_read_info *info, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	memset(info, 0, sizeof(*info));
	r->name = name;
	r->fn = fn;
	r->ctx = ctx;
	r->info = info;
	r->err = err;
	r->errlen = errlen;
	r->src.fd = -1;
	if (errlen)
		err[0] = '\0';
}

/* Inputs read from descriptors (ga_reader_alias). */
#define ALIASES 64
static struct {
	const char *name;
	int fd;
} aliases[ALIASES];

int ga_reader_alias(const char *name, int fd)
{
	for (int i = 0; i < ALIASES; i++)
		if (!aliases[i].name) {
			aliases[i].name = name;
			aliases[i].fd = fd;
			return 0;
		}
	return -1;
}

void ga_reader_unalias(const char *name)
{
	for (int i = 0; i < ALIASES; i++)
		if (aliases[i].name && !strcmp(aliases[i].name, name))
			aliases[i].name = NULL;
}

/* path opened for reading from its start: an alias's file opened afresh. */
static int open_input(const char *path)
{
	for (int i = 0; i < ALIASES; i++) {
		char p[64];
		int fd;

		if (!aliases[i].name || strcmp(aliases[i].name, path))
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", aliases[i].fd);
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) >= 0)
			return fd;
		/* No /proc: a copy of the descriptor, its offset back at the start. */
		if ((fd = fcntl(aliases[i].fd, F_DUPFD_CLOEXEC, 0)) >= 0 &&
		    lseek(fd, 0, SEEK_SET) != 0) {
			close(fd);
			fd = -1;
		}
		return fd;
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* A look-ahead's part of a read: none where fn is NULL; pace NULL: lag chunks ahead. */
struct ahead_of {
	ga_reader_fn fn;
	void *ctx;
	uint64_t types;
	unsigned lag;
	const struct ga_reader_pace *pace;
	int head; /* no look-ahead: the first chunk a piece at a time */
};

static void ahead_set(struct rd *r, const struct ahead_of *a)
{
	r->ahead = a->fn;
	r->actx = a->ctx;
	r->ahead_types = a->types;
	r->pace = a->fn ? a->pace : NULL;
	r->lag = a->fn && !a->pace ? (a->lag < GA_READER_LAG_MAX ? a->lag : GA_READER_LAG_MAX) : 0;
	r->head = !a->fn && a->head;
}

static int read_file(const char *path, const struct ahead_of *a, ga_reader_fn fn, void *ctx,
		     struct ga_read_info *info, char *err, size_t errlen)
{
	struct rd r;
	struct stat st;
	int rc;

	rd_init(&r, path, fn, ctx, info, err, errlen);
	ahead_set(&r, a);
	r.src.fd = open_input(path);
	if (r.src.fd < 0) {
		fail(&r, 0, "cannot open: %s", strerror(errno));
		return GA_READ_EOPEN;
	}
	if (fstat(r.src.fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		fail(&r, 0, "is a directory");
		close(r.src.fd);
		return GA_READ_EOPEN;
	}
	r.src.size = (fstat(r.src.fd, &st) == 0 && S_ISREG(st.st_mode)) ?
		(uint64_t)st.st_size : UINT64_MAX;
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(r.src.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	rc = read_all(&r);
	close(r.src.fd);
	return rc;
}

int ga_reader_read_file(const char *path, ga_reader_fn fn, void *ctx,
			struct ga_read_info *info, char *err, size_t errlen)
{
	const struct ahead_of none = { 0 };

	return read_file(path, &none, fn, ctx, info, err, errlen);
}

static int read_mem(const char *name, const void *buf, size_t len, const struct ahead_of *a,
		    ga_reader_fn fn, void *ctx, struct ga_read_info *info, char *err,
		    size_t errlen)
{
	static const unsigned char empty[1];
	struct rd r;

	rd_init(&r, name, fn, ctx, info, err, errlen);
	ahead_set(&r, a);
	r.src.mem = buf ? buf : empty;
	r.src.size = buf ? len : 0;
	return read_all(&r);
}

int ga_reader_read_mem(const char *name, const void *buf, size_t len,
		       ga_reader_fn fn, void *ctx, struct ga_read_info *info,
		       char *err, size_t errlen)
{
	const struct ahead_of none = { 0 };

	return read_mem(name, buf, len, &none, fn, ctx, info, err, errlen);
}

int ga_reader_read_head(const char *path, const void *buf, size_t len, ga_reader_fn fn,
			void *ctx, struct ga_read_info *info, char *err, size_t errlen)
{
	const struct ahead_of head = { .head = 1 };

	if (!buf)
		return read_file(path, &head, fn, ctx, info, err, errlen);
	return read_mem(path, buf, len, &head, fn, ctx, info, err, errlen);
}

int ga_reader_read_ahead(const char *path, const void *buf, size_t len, ga_reader_fn ahead,
			 void *actx, uint64_t types, unsigned lag, ga_reader_fn fn, void *ctx,
			 struct ga_read_info *info, char *err, size_t errlen)
{
	const struct ahead_of a = { ahead, actx, types, lag, NULL, 0 };

	if (!buf)
		return read_file(path, &a, fn, ctx, info, err, errlen);
	return read_mem(path, buf, len, &a, fn, ctx, info, err, errlen);
}

int ga_reader_read_paced(const char *path, const void *buf, size_t len, ga_reader_fn ahead,
			 void *actx, uint64_t types, const struct ga_reader_pace *pace,
			 ga_reader_fn fn, void *ctx, struct ga_read_info *info, char *err,
			 size_t errlen)
{
	const struct ahead_of a = { ahead, actx, types, 0, pace, 0 };

	if (!buf)
		return read_file(path, &a, fn, ctx, info, err, errlen);
	return read_mem(path, buf, len, &a, fn, ctx, info, err, errlen);
}

void ga_reader_describe(const struct ga_read_info *info, char *buf, size_t n)
{
	if (!n)
		return;
	buf[0] = '\0';
	if (info->damaged)
		snprintf(buf, n, "trace truncated at byte %" PRIu64 " of %" PRIu64
			 " (%s); %" PRIu64 " bytes not read \xe2\x80\x94 the report "
			 "covers what precedes", info->stop_offset, info->file_size,
			 info->reason, info->bytes_unread);
}

/* n bytes at off of the file fd, or of len bytes at buf: 0, or -1 short. */
static int tmin_get(int fd, const unsigned char *buf, uint64_t len, uint64_t off, void *out,
		    size_t n)
{
	if (buf) {
		if (off > len || len - off < n)
			return -1;
		memcpy(out, buf + off, n);
		return 0;
	}
	return pread(fd, out, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

int ga_reader_chunk_tmin(const char *path, const void *buf, size_t len, uint64_t *t_min)
{
	struct gp_file_header h;
	struct gp_chunk_header ch;
	uint64_t off, size = len;
	struct stat st;
	int fd = -1, rc = -1;

	*t_min = UINT64_MAX;
	if (!buf) {
		if ((fd = open_input(path)) < 0)
			return -1;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode))
			goto out;
		size = (uint64_t)st.st_size;
	}
	if (tmin_get(fd, buf, size, 0, &h, sizeof(h)) ||
	    memcmp(h.magic, GP_FILE_MAGIC, sizeof(h.magic)) || h.endian != GP_ENDIAN_MARKER ||
	    h.header_size < sizeof(h))
		goto out;
	for (off = h.header_size; !tmin_get(fd, buf, size, off, &ch, sizeof(ch)); ) {
		if (ch.magic != GP_CHUNK_MAGIC || ch.comp_size > GP_CHUNK_COMP_MAX ||
		    size - off - sizeof(ch) < ch.comp_size)
			break;
		if (ch.t_min && ch.t_min < *t_min)
			*t_min = ch.t_min;
		off += sizeof(ch) + ch.comp_size;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}
