/*
 * gpuprof trace format, version 2 (readers of version 1 read it too: its
 * additions are record types and a kernel flag).  Shared by the recorder
 * (preload/, cupti/) and the analyzer; nothing else is shared between the two sides.
 * docs/FORMAT.md is the normative prose; this header mirrors it.
 *
 * File  = file header (struct gp_file_header, 64 bytes)
 *         followed by zero or more chunks, back to back.
 * Chunk = chunk header (struct gp_chunk_header, 48 bytes)
 *         followed by comp_size bytes holding exactly one zstd frame.
 *         The frame decompresses to raw_size bytes of records.
 * Record = struct gp_rec (8 bytes: type, size, aux) + body; size counts the
 *         header, is a multiple of 8 and at least 8.  Records never span chunks.
 *
 * All integers are little-endian, fields naturally aligned, every struct has a
 * size checked below.  Reserved fields are written as zero and ignored by
 * readers; a reader skips record types it does not know (using size), so new
 * types need no version bump.  A reader refuses files whose min_reader
 * version is above its own GP_FORMAT_VERSION.
 *
 * Strings are interned: a GP_REC_STRING with id N precedes, in file order,
 * every record that refers to N.  String id 0 means "none".
 *
 * Timestamps are nanoseconds on the recorder's trace clock (clock_id in the
 * header; CUPTI's default is CLOCK_REALTIME).  GP_REC_CLOCK_SYNC pairs map it
 * to CLOCK_REALTIME and CLOCK_MONOTONIC.
 *
 * A chunk is valid when its magic matches, its checksum (CRC-32C over the
 * chunk header with the checksum field zeroed, then the compressed bytes)
 * matches, and the frame decompresses to exactly raw_size bytes.  A file cut
 * anywhere reads up to its last valid chunk.
 */
#ifndef GPUPROF_TRACE_H
#define GPUPROF_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include "gpuprof/crc32c.h"

#define GP_FILE_MAGIC "GPUPROF\0"      /* 8 bytes, NUL included */
#define GP_CHUNK_MAGIC 0x4b435047u     /* "GPCK" little-endian */
#define GP_FORMAT_VERSION 2
#define GP_MIN_READER_VERSION 1
#define GP_ENDIAN_MARKER 0x0102        /* reads 0x0201 on a foreign-endian host */
#define GP_FILE_EXT ".gpuprof"

/* Bounds the recorder honours and the reader enforces. */
#define GP_CHUNK_RAW_MAX (4u << 20)    /* largest raw (decompressed) chunk */
#define GP_CHUNK_COMP_MAX (GP_CHUNK_RAW_MAX + (GP_CHUNK_RAW_MAX >> 7) + 4096)
#define GP_STRING_MAX 16000            /* longer strings are truncated */

/* Feature bits (gp_file_header.features). */
#define GP_FEAT_DELTA_BIT 0            /* chunks may carry GP_CHUNK_F_DELTA */
#define GP_FEAT_DELTA (1u << GP_FEAT_DELTA_BIT)
#define GP_FEAT_HEADER_CRC_BIT 1       /* header_crc holds the header's CRC-32C */
#define GP_FEAT_HEADER_CRC (1u << GP_FEAT_HEADER_CRC_BIT)

/* Clock ids (gp_file_header.clock_id): the Linux clockid_t of the trace clock. */
#define GP_CLOCK_REALTIME 0
#define GP_CLOCK_MONOTONIC 1
#define GP_CLOCK_MONOTONIC_RAW 4

struct gp_file_header {
	char magic[8];             /* GP_FILE_MAGIC */
	uint16_t version;          /* format version that wrote the file */
	uint16_t min_reader;       /* oldest reader version able to read it */
	uint16_t header_size;      /* sizeof(struct gp_file_header) */
	uint16_t endian;           /* GP_ENDIAN_MARKER */
	uint32_t features;         /* GP_FEAT_* */
	uint32_t clock_id;         /* GP_CLOCK_* */
	uint64_t created_ns;       /* CLOCK_REALTIME at open */
	uint32_t pid;
	uint32_t header_crc;       /* with GP_FEAT_HEADER_CRC: gp_header_checksum */
	uint64_t reserved[3];
};
_Static_assert(sizeof(struct gp_file_header) == 64, "file header size");

/* Chunk flags (gp_chunk_header.flags). */
#define GP_CHUNK_F_DELTA_BIT 0         /* delta-coded records (FORMAT.md section 12) */
#define GP_CHUNK_F_DELTA (1u << GP_CHUNK_F_DELTA_BIT)
#define GP_CHUNK_F_LAST_BIT 1          /* written at clean shutdown, after GP_REC_END */
#define GP_CHUNK_F_LAST (1u << GP_CHUNK_F_LAST_BIT)

struct gp_chunk_header {
	uint32_t magic;            /* GP_CHUNK_MAGIC */
	uint32_t seq;              /* 0, 1, 2, ... in file order */
	uint32_t comp_size;        /* bytes of the zstd frame that follows */
	uint32_t raw_size;         /* bytes of records once decompressed */
	uint32_t nrecords;
	uint32_t flags;            /* GP_CHUNK_F_* */
	uint64_t t_min;            /* time span of timed records, 0 if none */
	uint64_t t_max;
	uint32_t lost;             /* records the recorder lost since the previous chunk */
	uint32_t checksum;         /* CRC-32C, see top of file */
};
_Static_assert(sizeof(struct gp_chunk_header) == 48, "chunk header size");

/* Record types. */
enum gp_rec_type {
	GP_REC_PAD = 0, /* filler, skip */
	GP_REC_STRING = 1,
	GP_REC_PROCESS = 2,
	GP_REC_CLOCK_SYNC = 3,
	GP_REC_DEVICE = 4,
	GP_REC_CONTEXT = 5,
	GP_REC_STREAM = 6,
	GP_REC_THREAD = 7,
	GP_REC_KERNEL = 8,
	GP_REC_MEMCPY = 9,
	GP_REC_MEMSET = 10,
	GP_REC_GRAPH = 11,
	GP_REC_API = 12,
	GP_REC_NVTX_RANGE = 13,
	GP_REC_NVTX_MARK = 14,
	GP_REC_STACK = 15,
	GP_REC_FRAME = 16,
	GP_REC_CORR_STACK = 17,
	GP_REC_GRAPH_NODE = 18,
	GP_REC_CAPTURE_RANGE = 19,
	GP_REC_LOST = 20,
	GP_REC_OVERHEAD = 21,
	GP_REC_CONFIG = 22,
	GP_REC_END = 23,
	GP_REC_METRICS = 24,      /* version 2 */
	GP_REC_DEVICE_PEAKS = 25, /* version 2 */
	GP_REC_METRICS_INFO = 26, /* version 2 */
	GP_REC_FLIGHT = 27,
	GP_REC_MEMORY = 28,
	GP_REC_PYFRAME = 29,
	GP_REC_MODULE = 30,
	GP_REC_GPU_SERIES = 31,
	GP_REC_GPU_SAMPLE = 32,
	/*
	 * A range still open when the recorder drained its NVTX events: struct
	 * gp_rec_nvtx with end 0, written once per range, before the
	 * GP_REC_NVTX_RANGE of the same id that closes it (or, never closed,
	 * none).  Readers that fold ranges as they close nest what follows in
	 * it; others skip it.
	 */
	GP_REC_NVTX_OPEN = 33,
	GP_REC_TYPE_COUNT
};

struct gp_rec {
	uint16_t type;             /* enum gp_rec_type */
	uint16_t size;             /* bytes including this header; multiple of 8 */
	uint32_t aux;              /* type-specific, 0 unless stated */
};
_Static_assert(sizeof(struct gp_rec) == 8, "record header size");

/* GP_REC_STRING: interned string; len bytes follow (no NUL), padded to 8. */
struct gp_rec_string {
	struct gp_rec h;
	uint32_t id;               /* >= 1 */
	uint32_t len;
	/* char data[len]; zero padding to a multiple of 8 */
};
_Static_assert(sizeof(struct gp_rec_string) == 16, "string size");

/* GP_REC_PROCESS: one per file, first in the first chunk. */
struct gp_rec_process {
	struct gp_rec h;
	uint32_t pid;
	uint32_t ppid;
	uint32_t host;             /* string: hostname */
	uint32_t exe;              /* string: /proc/self/exe */
	uint32_t cmdline;          /* string: argv joined by spaces */
	uint32_t cupti_version;    /* cuptiGetVersion(), 0 if unknown */
	uint64_t start_ns;         /* trace clock at recorder start */
	uint32_t cuda_driver;      /* cuDriverGetVersion() if known, else 0 */
	uint32_t rank;             /* RANK / OMPI_COMM_WORLD_RANK / PMI_RANK, or UINT32_MAX */
};
_Static_assert(sizeof(struct gp_rec_process) == 48, "process size");

/* GP_REC_CLOCK_SYNC: simultaneous reads of the three clocks. */
struct gp_rec_clock_sync {
	struct gp_rec h;
	uint64_t trace_ns;
	uint64_t realtime_ns;
	uint64_t monotonic_ns;
};
_Static_assert(sizeof(struct gp_rec_clock_sync) == 32, "clock sync size");

struct gp_rec_device {
	struct gp_rec h;
	uint32_t id;               /* CUPTI device id (CUDA ordinal) */
	uint32_t name;             /* string */
	uint8_t uuid[16];
	uint32_t cc_major;
	uint32_t cc_minor;
	uint32_t sm_count;
	uint32_t core_clock_khz;
	uint64_t global_mem;       /* bytes */
	uint64_t mem_bandwidth;    /* KB/s as CUPTI reports it */
	uint32_t l2_size;
	uint32_t flags;            /* bit 0: MIG enabled */
	/*
	 * Per-SM limits, for theoretical occupancy.  Appended in version 2:
	 * a record of GP_REC_DEVICE_V1_SIZE bytes has none of them.
	 */
	uint32_t max_warps_per_sm;
	uint32_t max_blocks_per_sm;
	uint32_t max_smem_per_sm;  /* bytes */
	uint32_t max_regs_per_sm;
	uint32_t max_regs_per_block;
	uint32_t max_smem_per_block; /* bytes, without opt-in */
	uint32_t max_threads_per_block;
	uint32_t warp_size;
};
_Static_assert(sizeof(struct gp_rec_device) == 104, "device size");
#define GP_REC_DEVICE_V1_SIZE 72u

struct gp_rec_context {
	struct gp_rec h;
	uint32_t id;
	uint32_t device;
	uint32_t null_stream;
	uint32_t flags;            /* bit 0: green context */
};
_Static_assert(sizeof(struct gp_rec_context) == 24, "context size");

struct gp_rec_stream {
	struct gp_rec h;
	uint32_t id;
	uint32_t context;
	uint32_t priority;
	uint32_t flags;
};
_Static_assert(sizeof(struct gp_rec_stream) == 24, "stream size");

/* GP_REC_THREAD: name of a host thread (tid is the kernel's gettid()). */
struct gp_rec_thread {
	struct gp_rec h;
	uint32_t tid;
	uint32_t name;             /* string */
};
_Static_assert(sizeof(struct gp_rec_thread) == 16, "thread size");

/* Activity flags shared by kernel/memcpy/memset (field "flags"). */
#define GP_ACT_ASYNC (1u << 0)           /* memcpy/memset: asynchronous */
#define GP_ACT_DEVICE_LAUNCHED (1u << 1) /* kernel: device-side launch */
/*
 * Kernel (version 2): a launch profiled by kernel replay (GP_REC_METRICS).
 * CUPTI gives such launches no timestamps: start is the launch call's time
 * on the trace clock and end - start the profiler's gpu__time_duration.
 */
#define GP_ACT_REPLAYED (1u << 2)

struct gp_rec_kernel {
	struct gp_rec h;           /* aux: 0 */
	uint64_t start;
	uint64_t end;
	uint32_t correlation;
	uint32_t name;             /* string: mangled name */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t cluster[3];
	uint32_t static_smem;
	uint32_t dynamic_smem;
	uint32_t local_mem;        /* per thread */
	uint16_t registers;        /* per thread */
	uint8_t launch_type;       /* CUpti_ActivityLaunchType */
	uint8_t flags;             /* GP_ACT_* */
	uint32_t graph_id;         /* 0 outside graphs */
	uint32_t reserved;
	uint64_t graph_node;       /* 0 outside graphs */
};
_Static_assert(sizeof(struct gp_rec_kernel) == 112, "kernel size");

/* Memcpy kinds, values of CUpti_ActivityMemcpyKind. */
enum gp_copy_kind {
	GP_COPY_UNKNOWN = 0, GP_COPY_HTOD = 1, GP_COPY_DTOH = 2, GP_COPY_HTOA = 3,
	GP_COPY_ATOH = 4, GP_COPY_ATOA = 5, GP_COPY_ATOD = 6, GP_COPY_DTOA = 7,
	GP_COPY_DTOD = 8, GP_COPY_HTOH = 9, GP_COPY_PTOP = 10,
};

struct gp_rec_memcpy {
	struct gp_rec h;
	uint64_t start;
	uint64_t end;
	uint64_t bytes;
	uint32_t correlation;
	uint32_t device;           /* for peer copies: the device that ran it */
	uint32_t context;
	uint32_t stream;
	uint8_t copy_kind;         /* enum gp_copy_kind */
	uint8_t src_kind;          /* CUpti_ActivityMemoryKind */
	uint8_t dst_kind;
	uint8_t flags;             /* GP_ACT_* */
	uint32_t src_device;       /* peer copies; else = device */
	uint32_t dst_device;
	uint32_t graph_id;
	uint64_t graph_node;
};
_Static_assert(sizeof(struct gp_rec_memcpy) == 72, "memcpy size");

struct gp_rec_memset {
	struct gp_rec h;
	uint64_t start;
	uint64_t end;
	uint64_t bytes;
	uint32_t correlation;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t value;
	uint8_t mem_kind;
	uint8_t flags;
	uint16_t reserved;
	uint32_t graph_id;
	uint32_t reserved2;
	uint64_t graph_node;
};
_Static_assert(sizeof(struct gp_rec_memset) == 72, "memset size");

/* GP_REC_GRAPH: a whole graph launch (--graph-trace=graph). */
struct gp_rec_graph {
	struct gp_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t correlation;
	uint32_t graph_id;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t end_device;
};
_Static_assert(sizeof(struct gp_rec_graph) == 48, "graph size");

/* API domains (gp_rec_api.domain). */
#define GP_API_DRIVER 1
#define GP_API_RUNTIME 2

struct gp_rec_api {
	struct gp_rec h;
	uint64_t start;            /* trace clock, host side */
	uint64_t end;
	uint32_t correlation;
	uint32_t tid;
	uint32_t name;             /* string: function name */
	uint32_t cbid;
	uint32_t domain;           /* GP_API_* */
	int32_t ret;               /* CUresult / cudaError_t */
};
_Static_assert(sizeof(struct gp_rec_api) == 48, "api size");

/* GP_REC_NVTX_RANGE / GP_REC_NVTX_MARK (mark: end == start). */
#define GP_NVTX_PAYLOAD_NONE 0
#define GP_NVTX_PAYLOAD_U64 1
#define GP_NVTX_PAYLOAD_I64 2
#define GP_NVTX_PAYLOAD_F64 3
#define GP_NVTX_PAYLOAD_U32 4
#define GP_NVTX_PAYLOAD_I32 5
#define GP_NVTX_PAYLOAD_F32 6

#define GP_NVTX_PUSHPOP 1u         /* aux bit: push/pop range (else start/end) */
#define GP_NVTX_UNTERMINATED 2u    /* aux bit: still open at exit; end = exit time */

struct gp_rec_nvtx {
	struct gp_rec h;           /* aux: GP_NVTX_* bits */
	uint64_t start;
	uint64_t end;
	uint64_t id;               /* recorder's range id, unique per file */
	uint32_t tid_start;
	uint32_t tid_end;
	uint32_t name;             /* string */
	uint32_t domain;           /* string; 0 = default domain */
	uint32_t category;
	uint32_t color;            /* ARGB, 0 if unset */
	uint32_t payload_kind;     /* GP_NVTX_PAYLOAD_* */
	uint32_t depth;            /* push/pop nesting depth at open, 0 outermost */
	uint64_t payload;          /* raw bits */
};
_Static_assert(sizeof(struct gp_rec_nvtx) == 72, "nvtx size");

/* GP_REC_STACK: aux = number of frames; u64 frame ids follow, innermost first.
 * Frame ids refer to GP_REC_FRAME records. */
struct gp_rec_stack {
	struct gp_rec h;
	uint32_t id;
	uint32_t reserved;
	/* uint64_t frame[aux]; */
};
_Static_assert(sizeof(struct gp_rec_stack) == 16, "stack size");

/* GP_REC_FRAME: one symbolized program counter. */
struct gp_rec_frame {
	struct gp_rec h;
	uint64_t id;               /* the pc */
	uint64_t offset;           /* pc - module load base */
	uint32_t module;           /* string: path of the module */
	uint32_t function;         /* string: mangled symbol, 0 if unknown */
	uint32_t sym_offset;       /* pc - symbol start */
	uint32_t file;             /* string, 0 if no debug info */
	uint32_t line;
	uint32_t reserved;
};
_Static_assert(sizeof(struct gp_rec_frame) == 48, "frame size");

/*
 * GP_REC_MODULE: the file behind the FRAME records of one loaded module,
 * so that a reader can tell whether a file it finds is the one that ran.
 * aux = length of the GNU build-id (NT_GNU_BUILD_ID) whose bytes follow,
 * zero-padded to a multiple of 8; 0 when the module has none.  FRAME
 * records whose id - offset equals base and whose module string is module
 * belong to it.  Precedes them in file order.
 */
#define GP_BUILD_ID_MAX 64         /* longer build-ids are not recorded */

struct gp_rec_module {
	struct gp_rec h;
	uint64_t base;             /* load base: FRAME id - FRAME offset */
	uint32_t module;           /* string: the module as FRAME records name it */
	uint32_t path;             /* string: absolute path of the file mapped, 0 unknown */
	/* uint8_t build_id[aux]; zero padding to a multiple of 8 */
};
_Static_assert(sizeof(struct gp_rec_module) == 24, "module size");

/*
 * GP_REC_PYFRAME: one Python frame of the stacks (--backtrace=python or
 * mixed).  Its id is a frame id of GP_REC_STACK records with
 * GP_PYFRAME_BIT set (native frame ids, program counters, never have it).
 * function "<no Python frame: thread NAME>" with file 0 stands for a
 * thread that launched with no Python frame on its stack.
 */
#define GP_PYFRAME_BIT (1ull << 63)

struct gp_rec_pyframe {
	struct gp_rec h;
	uint64_t id;               /* frame id, GP_PYFRAME_BIT set */
	uint32_t file;             /* string: co_filename as the program named it, 0 none */
	uint32_t function;         /* string: co_qualname (3.11+) or co_name */
	uint32_t line;             /* source line, 0 unknown */
	uint32_t first_line;       /* co_firstlineno, 0 unknown */
};
_Static_assert(sizeof(struct gp_rec_pyframe) == 32, "pyframe size");

/* GP_REC_CORR_STACK: correlation id -> stack id, plus innermost NVTX range. */
struct gp_rec_corr_stack {
	struct gp_rec h;
	uint32_t correlation;
	uint32_t stack;            /* 0 if none */
	uint64_t nvtx;             /* innermost open range id on the thread, 0 if none */
};
_Static_assert(sizeof(struct gp_rec_corr_stack) == 24, "corr stack size");

/* GP_REC_GRAPH_NODE: where a graph node was created (captured or added). */
struct gp_rec_graph_node {
	struct gp_rec h;
	uint64_t node;             /* graph node id as in activity records */
	uint32_t graph_id;
	uint32_t stack;
	uint32_t correlation;      /* of the API call that created it */
	uint32_t reserved;
	uint64_t nvtx;             /* innermost open NVTX range id, 0 if none */
};
_Static_assert(sizeof(struct gp_rec_graph_node) == 40, "graph node size");

#define GP_CAPTURE_PROFILER_API 1
#define GP_CAPTURE_NVTX 2
#define GP_CAPTURE_CONTROL 3         /* gpuprof start / stop (or --duration) */

struct gp_rec_capture_range {
	struct gp_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t kind;             /* GP_CAPTURE_* */
	uint32_t name;             /* string: NVTX range name, 0 otherwise */
};
_Static_assert(sizeof(struct gp_rec_capture_range) == 32, "capture range size");

/* Loss causes (gp_rec_lost.cause). */
enum gp_lost_cause {
	GP_LOST_CUPTI_DROPPED = 1,   /* cuptiActivityGetNumDroppedRecords */
	GP_LOST_RING_FULL = 2,       /* recorder ring overflow */
	GP_LOST_NO_TIMESTAMP = 3,    /* start or end == 0 */
	GP_LOST_WRITE_ERROR = 4,     /* records in chunks that failed to write */
	GP_LOST_NO_BUFFER = 5,       /* CUPTI asked for a buffer we could not give */
	GP_LOST_CUPTI_ERROR = 6,     /* a malformed or unreadable CUPTI buffer */
	GP_LOST_HANDOVER = 7,        /* the program's own CUPTI profiler had CUPTI alone */
	GP_LOST_CAUSE_COUNT
};

/*
 * GP_LOST_HANDOVER records also mark the gap itself: count 0, time the
 * gap's start (aux GP_LOST_GAP_START) or end (aux GP_LOST_GAP_END).
 */
#define GP_LOST_GAP_START 1u
#define GP_LOST_GAP_END 2u

struct gp_rec_lost {
	struct gp_rec h;           /* aux: 0, or GP_LOST_GAP_* (GP_LOST_HANDOVER) */
	uint32_t cause;            /* enum gp_lost_cause */
	uint32_t reserved;
	uint64_t count;            /* records lost since the previous LOST of this cause */
	uint64_t time;             /* trace clock when counted */
};
_Static_assert(sizeof(struct gp_rec_lost) == 32, "lost size");

struct gp_rec_overhead {
	struct gp_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t kind;             /* CUpti_ActivityOverheadKind */
	uint32_t object_kind;
	uint64_t object_id;
};
_Static_assert(sizeof(struct gp_rec_overhead) == 40, "overhead size");

/* GP_REC_CONFIG: what the recorder was asked to trace. */
#define GP_TRACE_KERNEL (1u << 0)
#define GP_TRACE_MEMCPY (1u << 1)
#define GP_TRACE_MEMSET (1u << 2)
#define GP_TRACE_GRAPH (1u << 3)
#define GP_TRACE_API (1u << 4)
#define GP_TRACE_NVTX (1u << 5)
#define GP_TRACE_API_ALL (1u << 6)   /* every API call, not only those behind GPU work */
#define GP_TRACE_MEMORY (1u << 7)    /* allocations and frees (GP_REC_MEMORY) */
#define GP_TRACE_GPU_METRICS (1u << 8)   /* sampled counters asked for (--gpu-metrics) */
#define GP_TRACE_GPU_TELEMETRY (1u << 9) /* NVML telemetry asked for (--gpu-telemetry) */
/*
 * Bits 8 and 9 are meaningful: set by recorders that write them, so that
 * a trace with this bit and neither of those holds no GPU samples (older
 * traces, without it, may hold some either way).
 */
#define GP_TRACE_SAMPLERS_SAID (1u << 10)

struct gp_rec_config {
	struct gp_rec h;
	uint32_t trace;            /* GP_TRACE_* */
	uint32_t graph_mode;       /* 0 per node, 1 whole graph */
	uint32_t backtrace;        /* GP_BACKTRACE_* */
	uint32_t flush_ms;
};
#define GP_BACKTRACE_NONE 0
#define GP_BACKTRACE_KERNEL 1      /* native stacks at kernel launches */
#define GP_BACKTRACE_ALL 2         /* native stacks at every traced API call */
#define GP_BACKTRACE_PYTHON 3      /* Python frames at kernel launches */
#define GP_BACKTRACE_MIXED 4       /* native and Python frames at kernel launches */
_Static_assert(sizeof(struct gp_rec_config) == 24, "config size");

/* GP_REC_END: last record of a cleanly closed trace. */
struct gp_rec_end {
	struct gp_rec h;
	uint64_t end_ns;           /* trace clock */
	uint64_t records;          /* records written before this one */
	uint64_t lost;             /* total lost records, all causes */
};
_Static_assert(sizeof(struct gp_rec_end) == 32, "end size");

/*
 * GP_REC_METRICS (version 2): hardware metrics of one kernel launch that
 * the range profiler replayed.  aux = number of struct gp_metric_value
 * that follow.  correlation ties it to the launch's GP_REC_KERNEL.
 */
struct gp_rec_metrics {
	struct gp_rec h;           /* aux: number of values */
	uint64_t start;            /* trace clock at the launch call */
	uint64_t duration;         /* ns: gpu__time_duration.sum, 0 if not measured */
	uint64_t cost_ns;          /* host time the launch call took with its replay passes */
	uint32_t correlation;
	uint32_t kernel;           /* string: mangled name */
	uint32_t device;           /* CUDA ordinal */
	uint32_t context;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t passes;           /* replay passes */
	uint32_t flags;            /* GP_METRICS_F_* (0 in traces before it existed) */
	/* struct gp_metric_value value[aux]; */
};
_Static_assert(sizeof(struct gp_rec_metrics) == 80, "metrics size");

/*
 * gp_rec_metrics.flags: CACHED, the values come from the metrics cache
 * (--metrics-cache): the launch ran once, unreplayed, and its KERNEL record
 * has its own times; duration and passes are the cached run's, cost_ns the
 * host time the cache lookup took.
 */
#define GP_METRICS_F_CACHED 1u
#define GP_METRICS_F_LAUNCHES 2u  /* values from successive launches (--metrics-replay=launches) */

struct gp_metric_value {
	uint32_t name;             /* string: metric name as Nsight Compute spells it */
	uint32_t reserved;
	double value;              /* IEEE 754 binary64, little-endian */
};
_Static_assert(sizeof(struct gp_metric_value) == 16, "metric value size");

/* Peak throughputs (gp_rec_device_peaks.flops[]): FLOP/s, 0 if unknown. */
enum gp_peak {
	GP_PEAK_FP64 = 0,          /* DFMA pipe */
	GP_PEAK_FP32 = 1,          /* FFMA pipe */
	GP_PEAK_FP16 = 2,          /* HFMA2 pipe (not tensor cores) */
	GP_PEAK_TENSOR_FP16 = 3,   /* tensor cores, fp16/bf16 inputs, dense */
	GP_PEAK_TENSOR_TF32 = 4,   /* dense */
	GP_PEAK_TENSOR_FP8 = 5,    /* dense */
	GP_PEAK_TENSOR_FP64 = 6,
	GP_PEAK_COUNT = 7
};

/*
 * GP_REC_DEVICE_PEAKS (version 2): a device's ceilings for a roofline,
 * from its SM count, clocks and per-architecture throughput per SM
 * (gpuprof/peaks.h); DRAM bandwidth from memory clock and bus width.
 */
struct gp_rec_device_peaks {
	struct gp_rec h;
	uint32_t device;           /* CUDA ordinal */
	uint32_t chip;             /* string: CUPTI chip name ("GH100"), 0 if unknown */
	uint32_t cc_major;
	uint32_t cc_minor;
	uint32_t sm_count;
	uint32_t sm_clock_khz;     /* peak SM clock */
	uint32_t mem_clock_khz;    /* peak memory clock */
	uint32_t bus_width;        /* memory bus width, bits */
	double flops[GP_PEAK_COUNT];  /* enum gp_peak */
	double dram_bw;            /* bytes/s */
};
_Static_assert(sizeof(struct gp_rec_device_peaks) == 104, "device peaks size");

/* Metrics status (gp_rec_metrics_info.status). */
enum gp_metrics_status {
	GP_METRICS_OK = 0,
	GP_METRICS_NO_PERMISSION = 1, /* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES */
	GP_METRICS_UNSUPPORTED = 2,   /* GPU or configuration not supported */
	GP_METRICS_BAD_NAME = 3,      /* unknown metric name */
	GP_METRICS_ERROR = 4,         /* other CUPTI error; metrics went off */
	GP_METRICS_BUSY = 5,          /* counters held by another tool */
};

/* Launch selection (gp_rec_metrics_info.launches). */
#define GP_METRICS_LAUNCHES_ALL UINT32_MAX  /* else the first N of each kernel and configuration */

/* GP_REC_METRICS_INFO (version 2): how metrics were collected; at trace end. */
struct gp_rec_metrics_info {
	struct gp_rec h;
	uint32_t set;              /* string: "roofline" or the names as given */
	uint32_t launches;         /* N, or GP_METRICS_LAUNCHES_ALL */
	uint32_t passes;           /* replay passes per profiled launch (first device) */
	uint32_t status;           /* enum gp_metrics_status */
	uint64_t profiled;         /* launches profiled */
	uint64_t skipped_capture;  /* launches while a stream capture was under way */
	uint64_t skipped_graph;    /* graph launches (their kernels are never profiled) */
	uint64_t failed;           /* launches whose replay failed */
	uint64_t skipped_other;    /* selected but not profiled (nested launch, no free slot) */
	uint64_t cost_ns;          /* host time of all profiled launch calls */
};
_Static_assert(sizeof(struct gp_rec_metrics_info) == 72, "metrics info size");
/* Flight-recorder dump triggers (gp_rec_flight.trigger). */
#define GP_DUMP_REQUEST 1            /* gpuprof dump */
#define GP_DUMP_SIGNAL 2             /* the dump signal; detail: its number */
#define GP_DUMP_NVTX 3               /* an NVTX range or mark of the --dump-on name */
#define GP_DUMP_CUDA_ERROR 4         /* a CUDA call failed; detail: its return code */
#define GP_DUMP_EXIT 5               /* the process exited */
#define GP_DUMP_FATAL_SIGNAL 6       /* a signal ended the process; detail: its number */

/*
 * GP_REC_FLIGHT: in a flight-recorder dump, the last chunk's first record.
 * The file holds what the in-memory ring kept: records from start to end;
 * older ones were dropped by design to keep the ring within size bytes,
 * and are not losses.
 */
struct gp_rec_flight {
	struct gp_rec h;
	uint64_t start;            /* trace clock: earliest time the kept chunks cover */
	uint64_t end;              /* trace clock: when the dump was taken */
	uint64_t dropped_records;  /* older records dropped by design */
	uint64_t dropped_bytes;    /* their compressed size */
	uint64_t size;             /* the ring's size limit, bytes */
	uint32_t dropped_chunks;
	uint32_t trigger;          /* GP_DUMP_* */
	uint32_t detail;           /* signal number, CUDA error code, else 0 */
	uint32_t dump;             /* 1 for the process's first dump, then 2, ... */
};
_Static_assert(sizeof(struct gp_rec_flight) == 64, "flight size");

/* Memory operations (gp_rec_memory.operation). */
#define GP_MEM_ALLOC 1               /* CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION */
#define GP_MEM_FREE 2                /* CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE */

/* Memory operation flags (gp_rec_memory.flags). */
#define GP_MEM_F_ASYNC (1u << 0)     /* stream-ordered: cudaMallocAsync, cudaFreeAsync */
#define GP_MEM_F_POOL (1u << 1)      /* from a memory pool: pool_type and pool_address hold it */

/*
 * GP_REC_MEMORY: one allocation or release of memory (--trace=...,memory),
 * from CUPTI's CUpti_ActivityMemory4 (CUPTI_ACTIVITY_KIND_MEMORY2).  A
 * release carries the address and size of the allocation it ends.
 */
struct gp_rec_memory {
	struct gp_rec h;
	uint64_t timestamp;        /* trace clock */
	uint64_t address;          /* the allocation's virtual address */
	uint64_t bytes;
	uint64_t pool_address;     /* base address of its memory pool, 0 if none */
	uint32_t correlation;      /* of the API call that allocated or freed it */
	uint32_t device;           /* CUDA ordinal */
	uint32_t context;          /* UINT32_MAX without a context */
	uint32_t stream;           /* UINT32_MAX unless stream-ordered */
	uint8_t operation;         /* GP_MEM_ALLOC or GP_MEM_FREE */
	uint8_t mem_kind;          /* CUpti_ActivityMemoryKind */
	uint8_t flags;             /* GP_MEM_F_* */
	uint8_t pool_type;         /* CUpti_ActivityMemoryPoolType: 0 none, 1 local, 2 imported */
	uint32_t process;          /* CUPTI's processId */
};
_Static_assert(sizeof(struct gp_rec_memory) == 64, "memory size");

/* Where a series of GPU samples comes from (gp_rec_gpu_series.source). */
#define GP_GPU_SRC_PM 1              /* CUPTI PM sampling (--gpu-metrics) */
#define GP_GPU_SRC_NVML 2            /* NVML device queries (--gpu-telemetry) */
#define GP_GPU_SRC_GPM 3             /* NVML GPM metrics (--gpu-telemetry, Hopper and later) */

/* Why a series holds no samples (gp_rec_gpu_series.status). */
#define GP_GPU_OK 0
#define GP_GPU_NO_PERMISSION 1       /* profiling counters restricted to admin users */
#define GP_GPU_UNSUPPORTED 2         /* the device or driver does not offer it */
#define GP_GPU_ERROR 3               /* another error: the series stopped */
#define GP_GPU_BUSY 4                /* counters held by another profiler */
#define GP_GPU_NO_LIBRARY 5          /* libnvidia-ml.so.1 or a CUPTI entry point missing */
#define GP_GPU_OVERFLOW 6            /* PM sampling's hardware buffer overflowed: samples lost */

/*
 * GP_REC_GPU_SERIES: a series of samples of one device over time, named
 * before its samples in file order (and again at the start of every file
 * of the process).  aux = number of metric names: uint32_t string ids
 * follow, zero-padded to a multiple of 8.  A series whose status is not
 * GP_GPU_OK says why it stopped or never began; its samples so far stand.
 */
struct gp_rec_gpu_series {
	struct gp_rec h;           /* aux: number of metric names */
	uint32_t id;               /* series id, unique in the process, from 1 */
	uint32_t device;           /* CUDA ordinal */
	uint32_t source;           /* GP_GPU_SRC_* */
	uint32_t status;           /* GP_GPU_* */
	uint64_t interval_ns;      /* sampling interval asked for */
	/* uint32_t metric[aux]; string ids, padding to a multiple of 8 */
};
_Static_assert(sizeof(struct gp_rec_gpu_series) == 32, "gpu series size");

/*
 * GP_REC_GPU_SAMPLE: one sample of a series: the metrics' values over
 * [start, end) on the trace clock.  aux = number of values, the series'
 * metric count; value[i] is metric[i]'s, NaN when it was not read.
 */
struct gp_rec_gpu_sample {
	struct gp_rec h;           /* aux: number of values */
	uint64_t start, end;       /* trace clock */
	uint32_t series;           /* gp_rec_gpu_series.id */
	uint32_t reserved;
	/* double value[aux]; IEEE 754 binary64, little-endian */
};
_Static_assert(sizeof(struct gp_rec_gpu_sample) == 32, "gpu sample size");

/* Checksum of a chunk: header with checksum = 0, then the frame. */
static inline uint32_t gp_chunk_checksum(const struct gp_chunk_header *ch,
					 const void *frame, size_t comp_size)
{
	struct gp_chunk_header tmp = *ch;

	tmp.checksum = 0;
	return gp_crc32c(gp_crc32c(0, &tmp, sizeof(tmp)), frame, comp_size);
}

/* Checksum of the file header: CRC-32C of its 64 bytes with header_crc = 0. */
static inline uint32_t gp_header_checksum(const struct gp_file_header *h)
{
	struct gp_file_header tmp = *h;

	tmp.header_crc = 0;
	return gp_crc32c(0, &tmp, sizeof(tmp));
}

static inline uint32_t gp_rec_align(uint32_t n)
{
	return (n + 7u) & ~7u;
}

#endif /* GPUPROF_TRACE_H */
