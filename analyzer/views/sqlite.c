/*
 * "export --format sqlite": the traces as an SQLite database, one table per
 * kind of thing recorded (docs/SQL.md is the schema, column by column).
 * GPU activities and API calls stream into their tables as the model reads
 * them, through prepared statements inside transactions of GA_SQL_BATCH
 * rows, with the journal and fsync off (the file is a temporary one until
 * everything is written: base/output.h); everything else is written from
 * the finished analysis.  The streamed rows are recorded, then bound and
 * inserted eight of a table a statement, on a thread of their own at -j
 * above 1 (struct sqpipe).  Memory: the statements and
 * SQLite's page cache, that thread's few blocks of rows, plus one map
 * entry per host thread.  Runs offline only.
 */
#include <math.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"
#include "base/handoff.h"
#include "read/reader.h"
#include "views/formats.h"
#include "views/tracks.h"

#define GA_SQL_SCHEMA_VERSION 3
#define GA_SQL_BATCH 100000        /* rows per transaction */

enum stmt {
	S_KERNEL, S_MEMCPY, S_MEMSET, S_GRAPH_LAUNCH, S_API, S_MEMORY, S_MX_LAUNCH,
	S_MX_VALUE,
	S_COUNT
};

struct sq {
	sqlite3 *db;
	sqlite3_stmt *st[S_COUNT];
	uint64_t batch;            /* rows in the open transaction */
	uint64_t rows;
	struct ga_map threads;     /* (proc, tid) of the API calls */
	uint64_t last_thread;      /* (proc << 32 | tid) + 1 of the last call */
	const char *name;
	struct ga_observer next;   /* the model's observer before this export's */
	uint64_t mx_launches;      /* metrics_launches rows so far (their ids) */
	/*
	 * NVTX ranges spilled (model/ranges.h spill): written, and indexed
	 * for the activities' innermost ranges, once scanned (ready(),
	 * ga_range_layout_index()); the threads they name, in range order.
	 */
	int indexed;
	struct ga_range_layout rl;
	sqlite3_stmt *nv;
	uint32_t (*rthr)[2];
	size_t nrthr, caprthr;
	struct ga_map rthr_map;
	struct sqpipe *pipe; /* the rows' thread while rows stream, or NULL */
};

/*
 * The schema.  Times are nanoseconds on the trace clock, sizes bytes;
 * ids that name strings point into strings(id).  No indexes while the
 * rows go in: they would slow the insert; docs/SQL.md shows which to add.
 */
static const char schema[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);\n"
	"CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL,"
	" demangled TEXT, short_name TEXT);\n"
	"CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, ppid INTEGER,"
	" host TEXT, rank INTEGER, cmdline TEXT, exe TEXT, file TEXT, start_ns INTEGER,"
	" end_ns INTEGER, finished INTEGER, cuda_driver INTEGER, cupti_version INTEGER,"
	" clock_id INTEGER, activities INTEGER, api_calls INTEGER, lost_records INTEGER);\n"
	"CREATE TABLE devices (id INTEGER PRIMARY KEY, process INTEGER, host TEXT,"
	" ordinal INTEGER, name TEXT, uuid TEXT, cc_major INTEGER, cc_minor INTEGER,"
	" sm_count INTEGER, core_clock_khz INTEGER, global_mem_bytes INTEGER,"
	" l2_size_bytes INTEGER, mem_bandwidth_kb_s INTEGER, mig INTEGER, described INTEGER,"
	" activities INTEGER, busy_ns INTEGER);\n"
	"CREATE TABLE threads (process INTEGER, tid INTEGER, name TEXT,"
	" PRIMARY KEY (process, tid));\n"
	"CREATE TABLE process_devices (process INTEGER, device INTEGER, device_id INTEGER,"
	" activities INTEGER, total_ns INTEGER);\n"
	"CREATE TABLE streams (process INTEGER, device INTEGER, context INTEGER,"
	" stream INTEGER);\n"
	"CREATE TABLE kernels (process INTEGER, device INTEGER, context INTEGER,"
	" stream INTEGER, correlation INTEGER, start_ns INTEGER, end_ns INTEGER,"
	" name_id INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,"
	" block_x INTEGER, block_y INTEGER, block_z INTEGER, cluster_x INTEGER,"
	" cluster_y INTEGER, cluster_z INTEGER, registers_per_thread INTEGER,"
	" static_smem_bytes INTEGER, dynamic_smem_bytes INTEGER,"
	" local_mem_bytes_per_thread INTEGER, launch_type INTEGER, device_launched INTEGER,"
	" replayed INTEGER, graph_id INTEGER, graph_node INTEGER, nvtx_range INTEGER,"
	" stack_id INTEGER);\n"
	"CREATE TABLE memcpy (process INTEGER, device INTEGER, context INTEGER,"
	" stream INTEGER, correlation INTEGER, start_ns INTEGER, end_ns INTEGER,"
	" bytes INTEGER, copy_kind TEXT, src_kind TEXT, dst_kind TEXT, src_device INTEGER,"
	" dst_device INTEGER, async INTEGER, graph_id INTEGER, graph_node INTEGER,"
	" nvtx_range INTEGER);\n"
	"CREATE TABLE memset (process INTEGER, device INTEGER, context INTEGER,"
	" stream INTEGER, correlation INTEGER, start_ns INTEGER, end_ns INTEGER,"
	" bytes INTEGER, value INTEGER, mem_kind TEXT, async INTEGER, graph_id INTEGER,"
	" graph_node INTEGER, nvtx_range INTEGER);\n"
	"CREATE TABLE graph_launches (process INTEGER, device INTEGER, context INTEGER,"
	" stream INTEGER, correlation INTEGER, start_ns INTEGER, end_ns INTEGER,"
	" graph_id INTEGER, nvtx_range INTEGER);\n"
	"CREATE TABLE graphs (process INTEGER, graph_id INTEGER, launches INTEGER,"
	" launch_total_ns INTEGER, kernels INTEGER, nodes INTEGER);\n"
	"CREATE TABLE graph_nodes (process INTEGER, graph_id INTEGER, node INTEGER,"
	" stack_id INTEGER, nvtx_range INTEGER);\n"
	"CREATE TABLE api_calls (process INTEGER, tid INTEGER, name_id INTEGER,"
	" domain TEXT, cbid INTEGER, correlation INTEGER, start_ns INTEGER, end_ns INTEGER,"
	" return_code INTEGER);\n"
	"CREATE TABLE nvtx_ranges (id INTEGER PRIMARY KEY, process INTEGER, tid INTEGER,"
	" end_tid INTEGER, range_id INTEGER, domain_id INTEGER, name_id INTEGER,"
	" start_ns INTEGER, end_ns INTEGER, push_pop INTEGER, unterminated INTEGER,"
	" parent INTEGER, category INTEGER, color INTEGER, payload_kind TEXT, payload);\n"
	"CREATE TABLE nvtx_marks (process INTEGER, tid INTEGER, time_ns INTEGER,"
	" domain_id INTEGER, name_id INTEGER);\n"
	"CREATE TABLE frames (id INTEGER PRIMARY KEY, process INTEGER, pc INTEGER,"
	" module_offset INTEGER, module_id INTEGER, function_id INTEGER, sym_offset INTEGER,"
	" file_id INTEGER, line INTEGER, internal INTEGER);\n"
	"CREATE TABLE stacks (process INTEGER, stack_id INTEGER, depth INTEGER, pc INTEGER,"
	" frame INTEGER);\n"
	"CREATE TABLE launch_sites (id INTEGER PRIMARY KEY, gpu_ns INTEGER, launches INTEGER,"
	" kernels INTEGER);\n"
	"CREATE TABLE launch_stacks (process INTEGER, stack_id INTEGER, site INTEGER,"
	" gpu_ns INTEGER);\n"
	"CREATE TABLE launch_site_frames (site INTEGER, depth INTEGER, text_id INTEGER);\n"
	"CREATE TABLE launch_site_kernels (site INTEGER, name_id INTEGER, launches INTEGER,"
	" gpu_ns INTEGER);\n"
	"CREATE TABLE losses (cause TEXT, records INTEGER);\n"
	"CREATE TABLE metrics_kernels (id INTEGER PRIMARY KEY, process INTEGER,"
	" ordinal INTEGER, name_id INTEGER, launches INTEGER, time_ns INTEGER,"
	" cost_ns INTEGER, passes INTEGER);\n"
	"CREATE TABLE metrics_values (kernel INTEGER, name_id INTEGER, value_sum REAL);\n"
	"CREATE TABLE device_peaks (process INTEGER, ordinal INTEGER, chip TEXT,"
	" cc_major INTEGER, cc_minor INTEGER, sm_count INTEGER, sm_clock_khz INTEGER,"
	" mem_clock_khz INTEGER, bus_width_bits INTEGER, dram_bytes_s REAL,"
	" fp64_flop_s REAL, fp32_flop_s REAL, fp16_flop_s REAL, tensor_fp16_flop_s REAL,"
	" tensor_tf32_flop_s REAL, tensor_fp8_flop_s REAL, tensor_fp64_flop_s REAL);\n"
	"CREATE TABLE metrics_launches (id INTEGER PRIMARY KEY, process INTEGER,"
	" ordinal INTEGER, context INTEGER, correlation INTEGER, name_id INTEGER,"
	" start_ns INTEGER, duration_ns INTEGER, cost_ns INTEGER, grid_x INTEGER,"
	" grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER,"
	" passes INTEGER);\n"
	"CREATE TABLE metrics_launch_values (launch INTEGER, name_id INTEGER, value REAL);\n"
	"CREATE TABLE memory_events (process INTEGER, device INTEGER, context INTEGER,"
	" stream INTEGER, correlation INTEGER, time_ns INTEGER, operation TEXT,"
	" address INTEGER, bytes INTEGER, mem_kind TEXT, async INTEGER, pool INTEGER,"
	" pool_type INTEGER, pool_address INTEGER);\n"
	"CREATE TABLE gpu_series (id INTEGER PRIMARY KEY, process INTEGER, ordinal INTEGER,"
	" source TEXT, status TEXT, interval_ns INTEGER, samples INTEGER, first_ns INTEGER,"
	" last_ns INTEGER);\n"
	"CREATE TABLE gpu_samples (series INTEGER, start_ns INTEGER, end_ns INTEGER,"
	" name_id INTEGER, value REAL);\n";

static const char *const insert_sql[S_COUNT] = {
	[S_KERNEL] = "INSERT INTO kernels VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		"?,?,?,?,?,?)",
	[S_MEMCPY] = "INSERT INTO memcpy VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MEMSET] = "INSERT INTO memset VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_GRAPH_LAUNCH] = "INSERT INTO graph_launches VALUES (?,?,?,?,?,?,?,?,?)",
	[S_API] = "INSERT INTO api_calls VALUES (?,?,?,?,?,?,?,?,?)",
	[S_MEMORY] = "INSERT INTO memory_events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MX_LAUNCH] = "INSERT INTO metrics_launches VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_MX_VALUE] = "INSERT INTO metrics_launch_values VALUES (?,?,?)",
};

static int fail(struct sq *q, const char *what)
{
	fprintf(stderr, "gpuprof: %s: sqlite: %s: %s\n", q->name, what,
		q->db ? sqlite3_errmsg(q->db) : "cannot open");
	return GA_FORMAT_REPORTED;
}

static int exec(struct sq *q, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(q->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	fprintf(stderr, "gpuprof: %s: sqlite: %s\n", q->name, msg ? msg : "error");
	sqlite3_free(msg);
	return GA_FORMAT_REPORTED;
}

/* Runs a bound statement of n rows; a full batch commits and opens the next transaction. */
static int step_rows(struct sq *q, sqlite3_stmt *s, unsigned n)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return fail(q, "insert");
	q->rows += n;
	if ((q->batch += n) >= GA_SQL_BATCH) {
		q->batch = 0;
		if (exec(q, "COMMIT; BEGIN"))
			return GA_FORMAT_REPORTED;
	}
	return 0;
}

static int step_now(struct sq *q, sqlite3_stmt *s)
{
	return step_rows(q, s, 1);
}

/*
 * The rows that stream (activities, API calls, allocations, profiled
 * launches, spilled NVTX ranges): the binders below record each value in
 * the row being made (vals), step() puts the row in a block of a ring
 * (base/handoff.h), whose thread, at -j above 1, binds and inserts the rows
 * of each full block (at -j 1 the caller does, a block at a time).  The
 * caller waits only when every block is full; anything else done with
 * the database while rows stream waits until the thread has inserted all
 * (sp_drain()), so that the connection is never used by both at once.  A
 * failed insert is printed by the thread and fails the caller's next
 * step().  A value: one word of column | type << 16 | length << 32, then
 * the value's word, or its text's bytes in words.  A row in a block: its
 * statement, its length in words, its values.  The end of the streamed
 * rows (end(), done()) stops the thread; what follows binds directly.
 * The rows of each of the prepared statements are inserted SP_ROWS at a
 * time, with one statement of as many rows (SQLite runs one program for
 * them), each statement's rows in their order: the ones waiting for more
 * (pend) are inserted one by one when the pipe drains.
 */
#define SP_WORDS ((1u << 20) / 8)
#define SP_ROWS 8

enum { SV_NULL,
       SV_INT,
       SV_DOUBLE,
       SV_TEXT };

struct sqpipe {
	struct sq *q;
	struct ga_handoff ring; /* blocks of SP_WORDS words */
	int err;                /* a failure of the caller's (sp_drain()'s inserts) */
	uint64_t *vals;         /* the row being made */
	size_t nvals, capvals;
	int nomem; /* a value could not be recorded */
	/* The thread's (the caller's once drained): each statement's rows waiting. */
	sqlite3_stmt *multi[S_COUNT]; /* of SP_ROWS rows, or NULL */
	int ncols[S_COUNT];
	uint64_t pend[S_COUNT][SP_ROWS * 64];
	size_t npend[S_COUNT]; /* words */
	unsigned rows[S_COUNT];
};

/* The pipe of the export whose rows stream now, if any (one at a time in a process). */
static struct sqpipe *piped;

/* Binds one recorded row's n words of values to s, each column off further. */
static void sp_bind(sqlite3_stmt *s, const uint64_t *v, size_t n, int off)
{
	for (size_t w = 0; w < n;) {
		uint64_t h = v[w];
		int col = (int)(h & 0xffff) + off;
		unsigned type = (unsigned)(h >> 16) & 0xff, len = (unsigned)(h >> 32);
		double d;

		switch (type) {
		case SV_INT:
			sqlite3_bind_int64(s, col, (sqlite3_int64)v[w + 1]);
			w += 2;
			break;
		case SV_DOUBLE:
			memcpy(&d, &v[w + 1], sizeof(d));
			sqlite3_bind_double(s, col, d);
			w += 2;
			break;
		case SV_TEXT:
			sqlite3_bind_text(s, col, (const char *)&v[w + 1], (int)len, SQLITE_TRANSIENT);
			w += 1 + (len + 7) / 8;
			break;
		default:
			sqlite3_bind_null(s, col);
			w += 1;
		}
	}
}

/* Binds and inserts one recorded row. */
static int sp_run(struct sq *q, sqlite3_stmt *s, const uint64_t *v, size_t n)
{
	sp_bind(s, v, n, 0);
	return step_now(q, s);
}

/* Statement k's waiting rows (each: its length in words, its values), one by one. */
static int sp_flush(struct sqpipe *p, int k)
{
	const uint64_t *v = p->pend[k];
	int rc = 0;

	for (size_t w = 0; w < p->npend[k] && !rc; w += 1 + v[w])
		rc = sp_run(p->q, p->q->st[k], v + w + 1, (size_t)v[w]);
	p->npend[k] = 0;
	p->rows[k] = 0;
	return rc;
}

/* A row of statement k: waits for SP_ROWS of them, inserted by one statement. */
static int sp_row(struct sqpipe *p, int k, const uint64_t *v, size_t n)
{
	uint64_t *b = p->pend[k];
	int rc;

	if (p->npend[k] + 1 + n > sizeof(p->pend[k]) / sizeof(p->pend[k][0]) &&
	    (rc = sp_flush(p, k)))
		return rc;
	if (1 + n > sizeof(p->pend[k]) / sizeof(p->pend[k][0]))
		return sp_run(p->q, p->q->st[k], v, n);
	b[p->npend[k]] = n;
	memcpy(b + p->npend[k] + 1, v, n * sizeof(*v));
	p->npend[k] += 1 + n;
	if (++p->rows[k] < SP_ROWS)
		return 0;
	for (size_t w = 0, r = 0; w < p->npend[k]; w += 1 + b[w], r++)
		sp_bind(p->multi[k], b + w + 1, (size_t)b[w], (int)r * p->ncols[k]);
	p->npend[k] = 0;
	p->rows[k] = 0;
	return step_rows(p->q, p->multi[k], SP_ROWS);
}

/* The ring's consumer: a block of n bytes of rows. */
static int sp_block(void *ctx, void *blk, size_t len)
{
	struct sqpipe *p = ctx;
	const uint64_t *b = blk;
	size_t n = len / sizeof(*b);

	for (size_t w = 0; w < n; w += 2 + b[w + 1]) {
		sqlite3_stmt *s = (sqlite3_stmt *)(uintptr_t)b[w];
		int k = 0, rc;

		while (k < S_COUNT && (p->q->st[k] != s || !p->multi[k]))
			k++;
		rc = k < S_COUNT ? sp_row(p, k, b + w + 2, (size_t)b[w + 1]) :
				   sp_run(p->q, s, b + w + 2, (size_t)b[w + 1]);
		if (rc)
			return GA_FORMAT_REPORTED;
	}
	return 0;
}

/* Waits until every row handed over is inserted; 0, or GA_FORMAT_REPORTED after a failure. */
static int sp_drain(struct sqpipe *p)
{
	if (!p)
		return 0;
	if (!p->err && !(p->err = ga_handoff_drain(&p->ring))) {
		/* The thread waits for more: the rows it holds go in from here. */
		for (int k = 0; k < S_COUNT; k++)
			if (p->npend[k] && !p->err)
				p->err = sp_flush(p, k);
	}
	return p->err;
}

/* Inserts what is left, stops the thread and frees the pipe; as sp_drain(). */
static int sp_stop(struct sq *q)
{
	struct sqpipe *p = q->pipe;
	int err;

	if (!p)
		return 0;
	err = sp_drain(p);
	if (ga_handoff_stop(&p->ring) && !err)
		err = GA_FORMAT_REPORTED;
	for (int k = 0; k < S_COUNT; k++)
		sqlite3_finalize(p->multi[k]);
	free(p->vals);
	free(p);
	q->pipe = NULL;
	if (piped == p)
		piped = NULL;
	return err;
}

/*
 * The pipe of q's streamed rows: on a thread at -j above 1, else (or if
 * no thread starts) inserted by the caller a block at a time, SP_ROWS
 * rows a statement as the thread does.  Without memory for it, rows bind
 * directly.
 */
static void sp_start(struct sq *q)
{
	int thread = ga_reader_threads() > 1;
	const char *env = getenv("GPUPROF_SQLITE_PIPE");
	struct sqpipe *p;

	/* GPUPROF_SQLITE_PIPE=0 (tests): every row bound directly, the reference. */
	if ((env && !strcmp(env, "0")) || piped || !(p = calloc(1, sizeof(*p))))
		return;
	p->q = q;
	if (ga_handoff_init(&p->ring, SP_WORDS * sizeof(uint64_t), !thread, sp_block, p)) {
		free(p);
		return;
	}
	/* Each statement's VALUES (...) SP_ROWS times (none: its rows one by one). */
	for (int k = 0; k < S_COUNT; k++) {
		const char *v = strstr(insert_sql[k], "VALUES ");
		struct ga_buf b = { 0 };
		int r = 1;

		p->ncols[k] = sqlite3_bind_parameter_count(q->st[k]);
		if (!v || ga_buf_printf(&b, "%s", insert_sql[k]))
			continue;
		while (r < SP_ROWS && !ga_buf_printf(&b, ",%s", v + 7))
			r++;
		if (r == SP_ROWS &&
		    sqlite3_prepare_v2(q->db, b.p, -1, &p->multi[k], NULL) != SQLITE_OK) {
			sqlite3_finalize(p->multi[k]);
			p->multi[k] = NULL;
		}
		ga_buf_free(&b);
	}
	q->pipe = p;
	piped = p;
}

/* Records a value of the row being made: type, then n words (text: len bytes). */
static void sv_put(struct sqpipe *p, int col, unsigned type, const void *val, size_t len)
{
	/* Words after the head: a text's bytes, a number's one, a NULL's none. */
	size_t n = type == SV_TEXT ? (len + 7) / 8 : type != SV_NULL;

	if (p->nvals + 1 + n > p->capvals &&
	    ga_util_grow(&p->vals, &p->capvals, p->nvals + 1 + n, sizeof(*p->vals))) {
		p->nomem = 1;
		return;
	}
	p->vals[p->nvals++] = (uint64_t)(unsigned)col | (uint64_t)type << 16 | (uint64_t)len << 32;
	if (n) {
		p->vals[p->nvals + n - 1] = 0;
		memcpy(&p->vals[p->nvals], val, type == SV_TEXT ? len : n * 8);
		p->nvals += n;
	}
}

/* Runs a bound statement, or hands the row made to the pipe while rows stream. */
static int step(struct sq *q, sqlite3_stmt *s)
{
	struct sqpipe *p = q->pipe;
	struct ga_handoff *r;
	size_t need;
	uint64_t *b;
	int err;

	if (!p)
		return step_now(q, s);
	r = &p->ring;
	if (p->nomem) {
		fputs("gpuprof: out of memory\n", stderr);
		return GA_FORMAT_REPORTED;
	}
	need = (2 + p->nvals) * sizeof(uint64_t);
	if (need > r->bsize) {
		/* Larger than a block: inserted here, once the thread has inserted the rest. */
		err = sp_drain(p);
		err = err ? err : sp_run(q, s, p->vals, p->nvals);
		p->nvals = 0;
		return err;
	}
	if (r->fill + need > r->bsize && (err = ga_handoff_push(r)))
		return err;
	if (!(b = ga_handoff_block(r))) {
		fputs("gpuprof: out of memory\n", stderr);
		return GA_FORMAT_REPORTED;
	}
	b += r->fill / sizeof(*b);
	b[0] = (uint64_t)(uintptr_t)s;
	b[1] = p->nvals;
	memcpy(b + 2, p->vals, p->nvals * sizeof(uint64_t));
	r->fill += need;
	p->nvals = 0;
	/* The thread's failure, seen without waiting: at worst a row later. */
	return ga_handoff_err(r);
}

/* Binders: column i (from 1); unsigned values above INT64_MAX wrap, as SQLite has no u64. */
static inline void bi(sqlite3_stmt *s, int i, uint64_t v)
{
	if (piped)
		sv_put(piped, i, SV_INT, &v, 8);
	else
		sqlite3_bind_int64(s, i, (sqlite3_int64)v);
}

static inline void bnull(sqlite3_stmt *s, int i)
{
	if (piped)
		sv_put(piped, i, SV_NULL, NULL, 0);
	else
		sqlite3_bind_null(s, i);
}

static void bdouble(sqlite3_stmt *s, int i, double v)
{
	if (piped)
		sv_put(piped, i, SV_DOUBLE, &v, 8);
	else
		sqlite3_bind_double(s, i, v);
}

/* Text of len bytes (-1: up to its NUL), copied. */
static void btextn(sqlite3_stmt *s, int i, const char *v, int len)
{
	size_t n = len < 0 ? strlen(v) : (size_t)len;

	if (piped)
		sv_put(piped, i, SV_TEXT, v, n);
	else
		sqlite3_bind_text(s, i, v, (int)n, SQLITE_TRANSIENT);
}

/* A strtab id as a strings id, NULL for 0 (none). */
static inline void bsid(sqlite3_stmt *s, int i, uint32_t id)
{
	if (id)
		bi(s, i, id);
	else
		bnull(s, i);
}

/*
 * Text that stays as it is until the statement runs (bound in place
 * where rows are not piped: the tables written at the end), or NULL.
 */
static void bstr(sqlite3_stmt *s, int i, const char *v)
{
	if (v && piped)
		btextn(s, i, v, -1);
	else if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		bnull(s, i);
}

/* A strtab id's text, NULL for 0. */
static void btext(sqlite3_stmt *s, int i, const struct ga_model *m, uint32_t id)
{
	if (id && piped)
		btextn(s, i, ga_model_str(m, id), (int)ga_strtab_len(&m->strs, id));
	else if (id)
		sqlite3_bind_text(s, i, ga_model_str(m, id), (int)ga_strtab_len(&m->strs, id),
				  SQLITE_STATIC);
	else
		bnull(s, i);
}

/*
 * The common head of activity rows: process .. end_ns (7 columns).  The
 * device is the CUDA ordinal in the process: the model's device is not
 * settled until the DEVICE record is read, which may come later.
 */
static void act_head(sqlite3_stmt *s, const struct ga_act *a)
{
	bi(s, 1, a->proc);
	bi(s, 2, a->device_id);
	bi(s, 3, a->context);
	bi(s, 4, a->stream);
	bi(s, 5, a->correlation);
	bi(s, 6, a->start);
	bi(s, 7, a->end);
}

/* The innermost NVTX range the activity was launched in, or NULL. */
static void bnvtx(struct ga_export *e, sqlite3_stmt *s, int i, const struct ga_act *a)
{
	uint32_t inner = ga_ranges_attribute(&e->an->rg, a).inner;

	if (inner < GA_RANGES_UNATTR)
		bi(s, i, inner);
	else
		bnull(s, i);
}

static int indexed(struct ga_export *e);

/* Spilled ranges: written and indexed once scanned (ranges.h ix). */
static int ready(void *ctx)
{
	struct ga_export *e = ctx;

	return ((struct sq *)e->state)->indexed ? 0 : indexed(e);
}

static int kernel_row(struct ga_export *e, struct sq *q, const struct ga_act *a)
{
	sqlite3_stmt *s = q->st[S_KERNEL];
	const struct gp_rec_kernel *k = a->rec && a->rec->type == GP_REC_KERNEL ?
		(const void *)a->rec : NULL;
	int i;

	act_head(s, a);
	bsid(s, 8, a->name);
	for (i = 0; i < 3; i++) {
		if (k) {
			bi(s, 9 + i, k->grid[i]);
			bi(s, 12 + i, k->block[i]);
			bi(s, 15 + i, k->cluster[i]);
		} else {
			bnull(s, 9 + i);
			bnull(s, 12 + i);
			bnull(s, 15 + i);
		}
	}
	if (k) {
		bi(s, 18, k->registers);
		bi(s, 19, k->static_smem);
		bi(s, 20, k->dynamic_smem);
		bi(s, 21, k->local_mem);
		bi(s, 22, k->launch_type);
		bi(s, 23, (k->flags & GP_ACT_DEVICE_LAUNCHED) != 0);
		bi(s, 24, (k->flags & GP_ACT_REPLAYED) != 0);
	} else {
		for (i = 18; i <= 24; i++)
			bnull(s, i);
	}
	bi(s, 25, a->graph_id);
	bi(s, 26, a->graph_node);
	bnvtx(e, s, 27, a);
	bsid(s, 28, ga_sites_stack_of(&e->an->st, a));
	return step(q, s);
}

static int memcpy_row(struct ga_export *e, struct sq *q, const struct ga_act *a)
{
	sqlite3_stmt *s = q->st[S_MEMCPY];
	const struct gp_rec_memcpy *c = a->rec && a->rec->type == GP_REC_MEMCPY ?
		(const void *)a->rec : NULL;
	char kb[16];

	act_head(s, a);
	bi(s, 8, a->bytes);
	btextn(s, 9, ga_model_copy_kind(a->copy_kind, kb, sizeof(kb)), -1);
	if (c) {
		bstr(s, 10, ga_model_mem_kind_key(c->src_kind));
		bstr(s, 11, ga_model_mem_kind_key(c->dst_kind));
		bi(s, 12, c->src_device);
		bi(s, 13, c->dst_device);
		bi(s, 14, (c->flags & GP_ACT_ASYNC) != 0);
	} else {
		for (int i = 10; i <= 14; i++)
			bnull(s, i);
	}
	bi(s, 15, a->graph_id);
	bi(s, 16, a->graph_node);
	bnvtx(e, s, 17, a);
	return step(q, s);
}

static int memset_row(struct ga_export *e, struct sq *q, const struct ga_act *a)
{
	sqlite3_stmt *s = q->st[S_MEMSET];
	const struct gp_rec_memset *x = a->rec && a->rec->type == GP_REC_MEMSET ?
		(const void *)a->rec : NULL;

	act_head(s, a);
	bi(s, 8, a->bytes);
	if (x) {
		bi(s, 9, x->value);
		bstr(s, 10, ga_model_mem_kind_key(x->mem_kind));
		bi(s, 11, (x->flags & GP_ACT_ASYNC) != 0);
	} else {
		bnull(s, 9);
		bnull(s, 10);
		bnull(s, 11);
	}
	bi(s, 12, a->graph_id);
	bi(s, 13, a->graph_node);
	bnvtx(e, s, 14, a);
	return step(q, s);
}

static int act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_export *e = ctx;
	struct sq *q = e->state;
	sqlite3_stmt *s;

	int rc;

	(void)m;
	switch (a->kind) {
	case GA_ACT_KERNEL:
		rc = kernel_row(e, q, a);
		break;
	case GA_ACT_MEMCPY:
		rc = memcpy_row(e, q, a);
		break;
	case GA_ACT_MEMSET:
		rc = memset_row(e, q, a);
		break;
	default:
		s = q->st[S_GRAPH_LAUNCH];
		act_head(s, a);
		bi(s, 8, a->graph_id);
		bnvtx(e, s, 9, a);
		rc = step(q, s);
	}
	if (q->rl.err[0]) {
		fprintf(stderr, "gpuprof: %s\n", q->rl.err);
		return -1;
	}
	return rc ? -1 : 0;
}

static int api(void *ctx, struct ga_model *m, const struct ga_api_call *c)
{
	struct ga_export *e = ctx;
	struct sq *q = e->state;
	sqlite3_stmt *s = q->st[S_API];
	uint64_t key = (uint64_t)c->proc << 32 | c->tid;
	uint32_t *slot;

	(void)m;
	if (q->last_thread != key + 1) {
		if (ga_map_insert(&q->threads, c->proc, c->tid, &slot) < 0)
			return -1;
		q->last_thread = key + 1;
	}
	bi(s, 1, c->proc);
	bi(s, 2, c->tid);
	bsid(s, 3, c->name);
	bstr(s, 4, c->domain == GP_API_DRIVER ? "driver" :
	     c->domain == GP_API_RUNTIME ? "runtime" : NULL);
	bi(s, 5, c->cbid);
	bi(s, 6, c->correlation);
	bi(s, 7, c->start);
	bi(s, 8, c->end);
	bi(s, 9, (uint64_t)(int64_t)c->ret);
	return step(q, s) ? -1 : 0;
}

/* UINT32_MAX (none) as NULL. */
static void bopt(sqlite3_stmt *s, int i, uint32_t v)
{
	if (v == UINT32_MAX)
		bnull(s, i);
	else
		bi(s, i, v);
}

static int memory_row(struct sq *q, uint32_t proc, const struct gp_rec_memory *r)
{
	sqlite3_stmt *s = q->st[S_MEMORY];

	bi(s, 1, proc);
	bi(s, 2, r->device);
	bopt(s, 3, r->context);
	bopt(s, 4, r->stream);
	bi(s, 5, r->correlation);
	bi(s, 6, r->timestamp);
	bstr(s, 7, r->operation == GP_MEM_ALLOC ? "alloc" : r->operation == GP_MEM_FREE ?
	     "free" : "other");
	bi(s, 8, r->address);
	bi(s, 9, r->bytes);
	bstr(s, 10, ga_model_mem_kind_key(r->mem_kind));
	bi(s, 11, (r->flags & GP_MEM_F_ASYNC) != 0);
	bi(s, 12, (r->flags & GP_MEM_F_POOL) != 0);
	bi(s, 13, r->pool_type);
	if (r->flags & GP_MEM_F_POOL)
		bi(s, 14, r->pool_address);
	else
		bnull(s, 14);
	return step(q, s);
}

/* One profiled launch and its values; a record too short for its values is left out. */
static int metrics_row(struct sq *q, struct ga_model *m, uint32_t proc,
		       const struct gp_rec_metrics *r)
{
	const struct gp_metric_value *v = (const void *)(r + 1);
	sqlite3_stmt *s = q->st[S_MX_LAUNCH];
	uint64_t id = q->mx_launches;
	int i, rc;

	if ((uint64_t)r->h.aux * sizeof(*v) > r->h.size - sizeof(*r))
		return 0;
	bi(s, 1, id);
	bi(s, 2, proc);
	bi(s, 3, r->device);
	bopt(s, 4, r->context);
	bi(s, 5, r->correlation);
	bsid(s, 6, ga_model_fstr(m, r->kernel));
	bi(s, 7, r->start);
	bi(s, 8, r->duration);
	bi(s, 9, r->cost_ns);
	for (i = 0; i < 3; i++) {
		bi(s, 10 + i, r->grid[i]);
		bi(s, 13 + i, r->block[i]);
	}
	bi(s, 16, r->passes);
	if ((rc = step(q, s)))
		return rc;
	q->mx_launches++;
	s = q->st[S_MX_VALUE];
	for (uint32_t j = 0; j < r->h.aux && !rc; j++) {
		bi(s, 1, id);
		bsid(s, 2, ga_model_fstr(m, v[j].name));
		bdouble(s, 3, v[j].value);
		rc = step(q, s);
	}
	return rc;
}

/* Records the model leaves to observers: allocations and frees, profiled launches. */
static int obs_rec(void *ctx, struct ga_model *m, uint32_t proc, const struct gp_rec *rec)
{
	struct ga_export *e = ctx;
	struct sq *q = e->state;
	int rc = 0;

	if (rec->type == GP_REC_MEMORY && rec->size >= sizeof(struct gp_rec_memory))
		rc = memory_row(q, proc, (const void *)rec);
	else if (rec->type == GP_REC_METRICS && rec->size >= sizeof(struct gp_rec_metrics))
		rc = metrics_row(q, m, proc, (const void *)rec);
	if (rc)
		return -1;
	return q->next.rec ? q->next.rec(q->next.ctx, m, proc, rec) : 0;
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct sq *q = ((struct ga_export *)ctx)->state;

	return q->next.act ? q->next.act(q->next.ctx, m, a) : 0;
}

/* Prepares sql, binds nothing; NULL after printing why. */
static sqlite3_stmt *prep(struct sq *q, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(q->db, sql, -1, &s, NULL) != SQLITE_OK) {
		fail(q, "prepare");
		return NULL;
	}
	return s;
}

static int begin(struct ga_export *e)
{
	struct sq *q = calloc(1, sizeof(*q));
	int i;

	if (!q)
		return -1;
	e->state = q;
	q->name = e->name ? e->name : e->path;
	/* No allocation statistics: their mutex was taken for every value bound. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (sqlite3_open_v2(e->path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		return fail(q, "open");
	/*
	 * The file is a temporary one, renamed into place only once all is
	 * written: a crash loses nothing a journal would have saved.
	 */
	if (exec(q, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		 " PRAGMA locking_mode=EXCLUSIVE; PRAGMA temp_store=MEMORY;"
		 " PRAGMA cache_size=-32768;") ||
	    exec(q, "BEGIN") || exec(q, schema))
		return GA_FORMAT_REPORTED;
	for (i = 0; i < S_COUNT; i++)
		if (!(q->st[i] = prep(q, insert_sql[i])))
			return GA_FORMAT_REPORTED;
	sp_start(q);
	e->an->m.hooks.ctx = e;
	e->an->m.hooks.act = act;
	e->an->m.hooks.api = api;
	ga_range_layout_serve(&q->rl, &e->an->rg, ready, e);
	q->next = e->an->m.obs;
	e->an->m.obs.ctx = e;
	e->an->m.obs.rec = obs_rec;
	e->an->m.obs.act = obs_act;
	return 0;
}

/* --- tables written from the finished analysis */

static int meta(struct sq *q, const struct ga_model *m)
{
	sqlite3_stmt *s = prep(q, "INSERT INTO meta VALUES (?,?)");
	char b[32];
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	snprintf(b, sizeof(b), "%d", GA_SQL_SCHEMA_VERSION);
	bstr(s, 1, "schema_version");
	bstr(s, 2, b);
	rc = rc ? rc : step(q, s);
	bstr(s, 1, "gpuprof_version");
	bstr(s, 2, GA_VERSION);
	rc = rc ? rc : step(q, s);
	bstr(s, 1, "time_unit");
	bstr(s, 2, "ns on the trace clock (processes.clock_id)");
	rc = rc ? rc : step(q, s);
	snprintf(b, sizeof(b), "%" PRIu64, m->first_start);
	bstr(s, 1, "first_ns");
	bstr(s, 2, m->first_start <= m->last_end ? b : NULL);
	rc = rc ? rc : step(q, s);
	snprintf(b, sizeof(b), "%" PRIu64, m->last_end);
	bstr(s, 1, "last_ns");
	bstr(s, 2, m->first_start <= m->last_end ? b : NULL);
	rc = rc ? rc : step(q, s);
	sqlite3_finalize(s);
	return rc;
}

static int strings(struct sq *q, struct ga_model *m)
{
	sqlite3_stmt *s = prep(q, "INSERT INTO strings VALUES (?,?,?,?)");
	size_t i, n = m->strs.n;
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	for (i = 1; i < n && !rc; i++) {
		uint32_t id = (uint32_t)i;
		int kernel = id < m->capstr2k && m->str2k[id];

		bi(s, 1, id);
		sqlite3_bind_text(s, 2, ga_model_str(m, id), (int)ga_strtab_len(&m->strs, id),
				  SQLITE_STATIC);
		if (!kernel) {
			/* Only kernel names are demangled: other strings are no symbols. */
			bnull(s, 3);
			bnull(s, 4);
		} else {
			bstr(s, 3, ga_strtab_full(&m->strs, id));
			bstr(s, 4, ga_strtab_short(&m->strs, id));
		}
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	return rc;
}

static int processes(struct sq *q, const struct ga_model *m)
{
	sqlite3_stmt *s = prep(q, "INSERT INTO processes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	size_t i;
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	for (i = 0; i < m->nprocs && !rc; i++) {
		const struct ga_proc *p = &m->procs[i];

		bi(s, 1, i);
		bi(s, 2, p->pid);
		bi(s, 3, p->ppid);
		btext(s, 4, m, p->host);
		if (p->rank == GA_NO_RANK)
			bnull(s, 5);
		else
			bi(s, 5, p->rank);
		btext(s, 6, m, p->cmdline);
		btext(s, 7, m, p->exe);
		bstr(s, 8, p->file < m->nfiles ? m->files[p->file].path : NULL);
		bi(s, 9, p->start_ns);
		if (p->end_ns)
			bi(s, 10, p->end_ns);
		else
			bnull(s, 10);
		bi(s, 11, p->finished != 0);
		bi(s, 12, p->cuda_driver);
		bi(s, 13, p->cupti_version);
		bi(s, 14, p->clock_id);
		bi(s, 15, p->activities);
		bi(s, 16, p->api_calls);
		bi(s, 17, p->lost_sum + p->chunk_lost);
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	return rc;
}

/*
 * The busy time of device dev from the activity tables: a GPU that
 * processes of several traces used at once, whose union the model could
 * not keep exact as its intervals retired (struct ga_device busy_bound).
 * One query: its activities (of the processes and device ids in
 * busy_rows) in start order, each adding what of it comes after every
 * earlier one's end (the running maximum); SQLite sorts on disk past its
 * cache.  0 with *ns, or GA_FORMAT_REPORTED.
 */
static int busy_of(struct sq *q, const struct ga_model *m, uint32_t dev, uint64_t *ns)
{
	static const char sql[] =
		"WITH iv(s, e) AS ("
		"SELECT a.start_ns, a.end_ns FROM kernels a JOIN busy_rows r USING (process, device)"
		" UNION ALL "
		"SELECT a.start_ns, a.end_ns FROM memcpy a JOIN busy_rows r USING (process, device)"
		" UNION ALL "
		"SELECT a.start_ns, a.end_ns FROM memset a JOIN busy_rows r USING (process, device)"
		" UNION ALL "
		"SELECT a.start_ns, a.end_ns FROM graph_launches a JOIN busy_rows r"
		" USING (process, device)),"
		" o AS (SELECT s, e, MAX(e) OVER (ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS m"
		" FROM iv),"
		" p AS (SELECT s, e, LAG(m) OVER (ORDER BY s, e) AS pe FROM o)"
		" SELECT COALESCE(SUM(MAX(0, e - MAX(s, COALESCE(pe, s)))), 0) FROM p";
	sqlite3_stmt *s;
	int rc = 0;

	/* Its sorts and windows in temporary files, not memory (as the rows went in). */
	if (exec(q, "PRAGMA temp_store=FILE;"
		    "CREATE TEMP TABLE IF NOT EXISTS busy_rows (process INTEGER, device INTEGER);"
		    "DELETE FROM busy_rows") ||
	    !(s = prep(q, "INSERT INTO busy_rows VALUES (?,?)")))
		return GA_FORMAT_REPORTED;
	for (size_t i = 0; i < m->ndevrows && !rc; i++) {
		if (m->devrows[i].dev != dev)
			continue;
		bi(s, 1, m->devrows[i].proc);
		bi(s, 2, m->devrows[i].id);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = fail(q, "busy time");
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	if (rc || !(s = prep(q, sql)))
		return GA_FORMAT_REPORTED;
	if (sqlite3_step(s) == SQLITE_ROW)
		*ns = (uint64_t)sqlite3_column_int64(s, 0);
	else
		rc = fail(q, "busy time");
	sqlite3_finalize(s);
	return rc;
}

static int devices(struct sq *q, const struct ga_model *m)
{
	sqlite3_stmt *s = prep(q, "INSERT INTO devices VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	char uuid[48];
	size_t i;
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	for (i = 0; i < m->ndevs && !rc; i++) {
		const struct ga_device *d = &m->devs[i];
		const uint8_t *u = d->uuid;

		if (d->dead)
			continue;
		snprintf(uuid, sizeof(uuid), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
			 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
		bi(s, 1, i);
		bi(s, 2, d->proc);
		btext(s, 3, m, d->host);
		bi(s, 4, d->id);
		btext(s, 5, m, d->name);
		sqlite3_bind_text(s, 6, uuid, -1, SQLITE_TRANSIENT);
		bi(s, 7, d->cc_major);
		bi(s, 8, d->cc_minor);
		bi(s, 9, d->sm_count);
		bi(s, 10, d->core_clock_khz);
		bi(s, 11, d->global_mem);
		bi(s, 12, d->l2_size);
		bi(s, 13, d->mem_bandwidth);
		bi(s, 14, d->flags & 1u);
		bi(s, 15, d->described != 0);
		bi(s, 16, d->count);
		if (d->busy_bound) {
			uint64_t ns = 0;

			if ((rc = busy_of(q, m, (uint32_t)i, &ns)))
				break;
			bi(s, 17, ns);
		} else {
			bi(s, 17, d->busy_ns);
		}
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	return rc;
}

static int streams(struct sq *q, const struct ga_model *m)
{
	sqlite3_stmt *s = prep(q, "INSERT INTO streams VALUES (?,?,?,?)"), *d;
	size_t i;
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	for (i = 0; i < m->stream_set.cap && !rc; i++) {
		const struct ga_map_ent *x = &m->stream_set.e[i];

		if (!x->used)
			continue;
		bi(s, 1, x->a >> 32);
		bi(s, 2, (uint32_t)x->a);
		bi(s, 3, x->b >> 32);
		bi(s, 4, (uint32_t)x->b);
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	if (rc || !(d = prep(q, "INSERT INTO process_devices VALUES (?,?,?,?,?)")))
		return rc ? rc : GA_FORMAT_REPORTED;
	for (i = 0; i < m->ndevrows && !rc; i++) {
		const struct ga_devrow *r = &m->devrows[i];

		bi(d, 1, r->proc);
		bi(d, 2, r->id);
		bi(d, 3, r->dev);
		bi(d, 4, r->count);
		bi(d, 5, r->total);
		rc = step(q, d);
	}
	sqlite3_finalize(d);
	return rc;
}

static int marks(struct sq *q, struct ga_ranges *rg);

/* Every host thread the traces mention: API calls, NVTX, THREAD records. */
static int threads(struct sq *q, const struct ga_model *m, struct ga_ranges *rg)
{
	sqlite3_stmt *s;
	uint32_t *slot;
	size_t i;
	int rc = 0;

	for (i = 0; i < rg->nranges; i++) {
		const struct ga_ranges_range *r = &rg->ranges[i];
		uint32_t tid_end = ga_ranges_detail_of(rg, i).tid_end;

		if (ga_map_insert(&q->threads, r->proc, r->tid, &slot) < 0 ||
		    (tid_end && ga_map_insert(&q->threads, r->proc, tid_end, &slot) < 0))
			return -1;
	}
	/* Spilled ranges: their threads in the same order (spilled_row()). */
	for (i = 0; i < q->nrthr; i++)
		if (ga_map_insert(&q->threads, q->rthr[i][0], q->rthr[i][1], &slot) < 0)
			return -1;
	if ((rc = marks(q, rg)))
		return rc;
	for (i = 0; i < m->thread_names.cap; i++)
		if (m->thread_names.e[i].used &&
		    ga_map_insert(&q->threads, m->thread_names.e[i].a, m->thread_names.e[i].b,
				  &slot) < 0)
			return -1;
	if (!(s = prep(q, "INSERT INTO threads VALUES (?,?,?)")))
		return GA_FORMAT_REPORTED;
	for (i = 0; i < q->threads.cap && !rc; i++) {
		const struct ga_map_ent *x = &q->threads.e[i];
		const uint32_t *name;

		if (!x->used)
			continue;
		name = ga_map_find(&m->thread_names, x->a, x->b);
		bi(s, 1, x->a);
		bi(s, 2, x->b);
		btext(s, 3, m, name ? *name : 0);
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	return rc;
}

static int graphs(struct sq *q, const struct ga_analysis *an)
{
	const struct ga_model *m = &an->m;
	sqlite3_stmt *s = prep(q, "INSERT INTO graphs VALUES (?,?,?,?,?,?)"), *n;
	size_t i;
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	for (i = 0; i < m->ngraphs && !rc; i++) {
		const struct ga_gstat *g = &m->graphs[i];

		bi(s, 1, g->proc);
		bi(s, 2, g->graph_id);
		bi(s, 3, g->launches);
		bi(s, 4, g->total);
		bi(s, 5, g->kernels);
		bi(s, 6, g->nodes);
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	if (rc || !(n = prep(q, "INSERT INTO graph_nodes VALUES (?,?,?,?,?)")))
		return rc ? rc : GA_FORMAT_REPORTED;
	for (i = 0; i < m->gnode_set.cap && !rc; i++) {
		const struct ga_map_ent *x = &m->gnode_set.e[i];
		uint32_t proc = (uint32_t)(x->a >> 32);
		const uint32_t *v;

		if (!x->used)
			continue;
		bi(n, 1, proc);
		bi(n, 2, (uint32_t)x->a);
		bi(n, 3, x->b);
		v = ga_map_find(&an->st.gnode_map, proc, x->b);
		if (v && *v)
			bi(n, 4, *v);
		else
			bnull(n, 4);
		v = ga_map_find(&an->rg.gnode_map, proc, x->b);
		if (v && *v != UINT32_MAX)
			bi(n, 5, *v - 1);
		else
			bnull(n, 5);
		rc = step(q, n);
	}
	sqlite3_finalize(n);
	return rc;
}

static const char *payload_kind(uint32_t k)
{
	static const char *const names[] = {
		[GP_NVTX_PAYLOAD_NONE] = NULL, [GP_NVTX_PAYLOAD_U64] = "u64",
		[GP_NVTX_PAYLOAD_I64] = "i64", [GP_NVTX_PAYLOAD_F64] = "f64",
		[GP_NVTX_PAYLOAD_U32] = "u32", [GP_NVTX_PAYLOAD_I32] = "i32",
		[GP_NVTX_PAYLOAD_F32] = "f32",
	};

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : NULL;
}

static void bpayload(sqlite3_stmt *s, int i, uint32_t kind, uint64_t raw)
{
	uint32_t r32 = (uint32_t)raw;
	double d;
	float f;

	switch (kind) {
	case GP_NVTX_PAYLOAD_U64:
		bi(s, i, raw);
		break;
	case GP_NVTX_PAYLOAD_I64:
		bi(s, i, raw);
		break;
	case GP_NVTX_PAYLOAD_U32:
		bi(s, i, r32);
		break;
	case GP_NVTX_PAYLOAD_I32:
		bi(s, i, (uint64_t)(int64_t)(int32_t)r32);
		break;
	case GP_NVTX_PAYLOAD_F64:
		memcpy(&d, &raw, 8);
		bdouble(s, i, d);
		break;
	case GP_NVTX_PAYLOAD_F32:
		memcpy(&f, &r32, 4);
		bdouble(s, i, f);
		break;
	default:
		bnull(s, i);
	}
}

/* NVTX range r (details d, recorded name name) as row index of nvtx_ranges. */
static int range_row(struct sq *q, sqlite3_stmt *s, const struct ga_ranges *rg,
		     const struct ga_ranges_range *r, const struct ga_ranges_detail *d,
		     uint32_t name, uint64_t index, uint32_t parent)
{
	bi(s, 1, index);
	bi(s, 2, r->proc);
	bi(s, 3, r->tid);
	bi(s, 4, d->tid_end ? d->tid_end : r->tid);
	bi(s, 5, r->id);
	bsid(s, 6, rg->keys[r->key].domain);
	bsid(s, 7, name);
	bi(s, 8, r->start);
	bi(s, 9, r->end);
	bi(s, 10, r->pushpop != 0);
	bi(s, 11, (r->flags & GP_NVTX_UNTERMINATED) != 0);
	if (parent == GA_RANGES_NONE)
		bnull(s, 12);
	else
		bi(s, 12, parent);
	bi(s, 13, d->category);
	bi(s, 14, d->color);
	bstr(s, 15, payload_kind(d->payload_kind));
	bpayload(s, 16, d->payload_kind, d->payload);
	return step(q, s);
}

#define NVTX_ROW "INSERT INTO nvtx_ranges VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"

/* The ranges kept, in their order (spilled ones were written by indexed()). */
static int nvtx(struct sq *q, const struct ga_ranges *rg)
{
	sqlite3_stmt *s;
	size_t i;
	int rc = 0;

	if (!rg->nranges)
		return 0;
	if (!(s = prep(q, NVTX_ROW)))
		return GA_FORMAT_REPORTED;
	for (i = 0; i < rg->nranges && !rc; i++) {
		struct ga_ranges_detail d = ga_ranges_detail_of(rg, i);

		rc = range_row(q, s, rg, &rg->ranges[i], &d, ga_ranges_name(rg, i), i,
			       rg->ranges[i].parent);
	}
	sqlite3_finalize(s);
	return rc;
}

/* Each mark, in the order read (kept or spilled), its thread into q->threads. */
static int marks(struct sq *q, struct ga_ranges *rg)
{
	const struct ga_ranges_mark_event *x;
	sqlite3_stmt *k = prep(q, "INSERT INTO nvtx_marks VALUES (?,?,?,?,?)");
	size_t i = 0;
	uint32_t *slot;
	int rc = 0;

	if (!k)
		return GA_FORMAT_REPORTED;
	while (!rc && (x = ga_ranges_next_mark(rg, &i))) {
		const struct ga_ranges_mark *mk = &rg->marks[x->mark];

		if (ga_map_insert(&q->threads, x->proc, x->tid, &slot) < 0) {
			rc = -1;
			break;
		}
		bi(k, 1, x->proc);
		bi(k, 2, x->tid);
		bi(k, 3, x->t);
		bsid(k, 4, mk->domain);
		bsid(k, 5, mk->name);
		rc = step(q, k);
	}
	sqlite3_finalize(k);
	if (!rc && rg->marks_spilled.err[0])
		return ga_format_said(rg->marks_spilled.err);
	return rc;
}

/* A thread a spilled range names, in the order threads() would meet it. */
static int range_thread(struct sq *q, uint32_t proc, uint32_t tid)
{
	uint32_t *slot;
	int r = ga_map_insert(&q->rthr_map, proc, tid, &slot);

	if (r <= 0)
		return r;
	if (ga_util_grow(&q->rthr, &q->caprthr, q->nrthr + 1, sizeof(*q->rthr)))
		return -1;
	q->rthr[q->nrthr][0] = proc;
	q->rthr[q->nrthr++][1] = tid;
	return 0;
}

/* A spilled range read back in range order: its row, its threads, its graph nodes. */
static int spilled_row(void *ctx, const struct ga_ranges_srec *x, uint32_t parent)
{
	struct ga_export *e = ctx;
	struct sq *q = e->state;
	struct ga_ranges *rg = &e->an->rg;

	if (range_thread(q, x->r.proc, x->r.tid) ||
	    (x->d.tid_end && range_thread(q, x->r.proc, x->d.tid_end)))
		return -1;
	return range_row(q, q->nv, rg, &x->r, &x->d, ga_ranges_srec_name(rg, x), x->seq, parent);
}

/* Spilled ranges: written and indexed once, when the scan is done (ready()). */
static int indexed(struct ga_export *e)
{
	struct sq *q = e->state;
	struct ga_ranges *rg = &e->an->rg;
	int rc;

	q->indexed = 1;
	if (!rg->spill)
		return 0;
	/* The statement made and finalized here, with no row of the pipe's running. */
	if (sp_drain(q->pipe) || !(q->nv = prep(q, NVTX_ROW)))
		return GA_FORMAT_REPORTED;
	rc = ga_range_layout_index(&q->rl, rg, spilled_row, e);
	if (sp_drain(q->pipe))
		rc = GA_FORMAT_REPORTED;
	sqlite3_finalize(q->nv);
	q->nv = NULL;
	ga_map_free(&q->rthr_map);
	return rc ? GA_FORMAT_REPORTED : 0;
}

static int stacks(struct sq *q, const struct ga_sites *st)
{
	sqlite3_stmt *f = prep(q, "INSERT INTO frames VALUES (?,?,?,?,?,?,?,?,?,?)"), *s;
	size_t i, j;
	int rc = 0;

	if (!f)
		return GA_FORMAT_REPORTED;
	for (i = 0; i < st->frame_map.cap && !rc; i++) {
		const struct ga_map_ent *x = &st->frame_map.e[i];
		const struct ga_stack_frame *fr;

		if (!x->used || x->val >= st->nframes)
			continue;
		fr = &st->frames[x->val];
		bi(f, 1, x->val);
		bi(f, 2, x->a);
		bi(f, 3, x->b);
		bi(f, 4, fr->offset);
		bsid(f, 5, fr->module);
		bsid(f, 6, fr->function);
		bi(f, 7, fr->sym_offset);
		bsid(f, 8, fr->file);
		bi(f, 9, fr->line);
		bi(f, 10, fr->internal != 0);
		rc = step(q, f);
	}
	sqlite3_finalize(f);
	if (rc || !(s = prep(q, "INSERT INTO stacks VALUES (?,?,?,?,?)")))
		return rc ? rc : GA_FORMAT_REPORTED;
	for (i = 0; i < st->nstacks && !rc; i++) {
		const struct ga_stack *k = &st->stacks[i];

		for (j = 0; j < k->n && !rc; j++) {
			uint64_t pc = st->pcs[k->off + j];
			const uint32_t *v = ga_map_find(&st->frame_map, k->proc, pc);

			bi(s, 1, k->proc);
			bi(s, 2, k->id);
			bi(s, 3, j);
			bi(s, 4, pc);
			if (v)
				bi(s, 5, *v);
			else
				bnull(s, 5);
			rc = step(q, s);
		}
	}
	sqlite3_finalize(s);
	return rc;
}

static int sites(struct sq *q, const struct ga_sites *st)
{
	sqlite3_stmt *s = prep(q, "INSERT INTO launch_sites VALUES (?,?,?,?)"), *f, *k;
	size_t i, j;
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	f = prep(q, "INSERT INTO launch_site_frames VALUES (?,?,?)");
	k = prep(q, "INSERT INTO launch_site_kernels VALUES (?,?,?,?)");
	if (!f || !k)
		rc = GA_FORMAT_REPORTED;
	for (i = 0; i < st->nsites && !rc; i++) {
		const struct ga_stack_site *x = &st->sites[i];

		bi(s, 1, x->str);
		bi(s, 2, x->gpu_ns);
		bi(s, 3, x->launches);
		bi(s, 4, x->kernels);
		rc = step(q, s);
		for (j = 0; j < x->nf && !rc; j++) {
			bi(f, 1, x->str);
			bi(f, 2, j);
			bsid(f, 3, st->ftext[x->foff + j]);
			rc = step(q, f);
		}
		for (j = x->klo; j < x->khi && !rc; j++) {
			bi(k, 1, x->str);
			bsid(k, 2, st->skern[j].name);
			bi(k, 3, st->skern[j].count);
			bi(k, 4, st->skern[j].ns);
			rc = step(q, k);
		}
	}
	sqlite3_finalize(s);
	sqlite3_finalize(f);
	sqlite3_finalize(k);
	if (rc || !(s = prep(q, "INSERT INTO launch_stacks VALUES (?,?,?,?)")))
		return rc ? rc : GA_FORMAT_REPORTED;
	for (i = 0; i < st->nstacks && !rc; i++) {
		const struct ga_stack *x = &st->stacks[i];

		if (!x->site)
			continue;
		bi(s, 1, x->proc);
		bi(s, 2, x->id);
		bi(s, 3, st->sites[x->site - 1].str);
		bi(s, 4, x->ns);
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	return rc;
}

static int losses(struct sq *q, const struct ga_model *m)
{
	sqlite3_stmt *s = prep(q, "INSERT INTO losses VALUES (?,?)");
	int rc = 0;

	if (!s)
		return GA_FORMAT_REPORTED;
	for (int i = 0; i < GP_LOST_CAUSE_COUNT && !rc; i++) {
		bstr(s, 1, ga_model_lost_key((unsigned)i));
		bi(s, 2, m->lost[i]);
		rc = step(q, s);
	}
	if (!rc) {
		bstr(s, 1, "unattributed");
		bi(s, 2, ga_model_lost_unattributed(m));
		rc = step(q, s);
	}
	sqlite3_finalize(s);
	return rc;
}

static int metrics(struct sq *q, const struct ga_model *m, const struct ga_mx *mx)
{
	sqlite3_stmt *k, *v, *p;
	size_t i, j;
	int rc = 0;

	if (mx->oom)
		return -1;
	k = prep(q, "INSERT INTO metrics_kernels VALUES (?,?,?,?,?,?,?,?)");
	v = prep(q, "INSERT INTO metrics_values VALUES (?,?,?)");
	p = prep(q, "INSERT INTO device_peaks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!k || !v || !p)
		rc = GA_FORMAT_REPORTED;
	for (i = 0; i < mx->nk && !rc; i++) {
		const struct ga_mx_kernel *x = &mx->k[i];

		bi(k, 1, i);
		bi(k, 2, x->proc);
		bi(k, 3, x->device);
		bsid(k, 4, x->name);
		bi(k, 5, x->launches);
		bi(k, 6, x->time_ns);
		bi(k, 7, x->cost_ns);
		bi(k, 8, x->passes);
		rc = step(q, k);
		for (j = 0; j < mx->nnames && !rc && x->vals; j++) {
			if (isnan(x->vals[j]))
				continue; /* not measured for this kernel */
			bi(v, 1, i);
			bsid(v, 2, mx->names[j]);
			sqlite3_bind_double(v, 3, x->vals[j]);
			rc = step(q, v);
		}
	}
	for (i = 0; i < mx->npeaks && !rc; i++) {
		const struct ga_mx_peaks *x = &mx->peaks[i];

		bi(p, 1, x->proc);
		bi(p, 2, x->device);
		btext(p, 3, m, x->chip);
		bi(p, 4, x->p.cc_major);
		bi(p, 5, x->p.cc_minor);
		bi(p, 6, x->p.sm_count);
		bi(p, 7, x->p.sm_clock_khz);
		bi(p, 8, x->p.mem_clock_khz);
		bi(p, 9, x->p.bus_width);
		sqlite3_bind_double(p, 10, x->p.dram_bw);
		for (j = 0; j < GP_PEAK_COUNT; j++)
			sqlite3_bind_double(p, 11 + (int)j, x->p.flops[j]);
		rc = step(q, p);
	}
	sqlite3_finalize(k);
	sqlite3_finalize(v);
	sqlite3_finalize(p);
	return rc;
}

/*
 * The GPU over time: a row per series (process, device, source), and one
 * per sample and metric read, in the long form (series, time, metric,
 * value) that nsys's GPU_METRICS table has too.
 */
static int gpu_samples(struct sq *q, const struct ga_gpusamples *g)
{
	static const char *const status[] = {
		[GP_GPU_OK] = "ok", [GP_GPU_NO_PERMISSION] = "no_permission",
		[GP_GPU_UNSUPPORTED] = "unsupported", [GP_GPU_ERROR] = "error",
		[GP_GPU_BUSY] = "busy", [GP_GPU_NO_LIBRARY] = "no_library",
		[GP_GPU_OVERFLOW] = "overflow",
	};
	sqlite3_stmt *r, *v;
	int rc = 0;

	if (!g->nseries)
		return 0;
	r = prep(q, "INSERT INTO gpu_series VALUES (?,?,?,?,?,?,?,?,?)");
	v = prep(q, "INSERT INTO gpu_samples VALUES (?,?,?,?,?)");
	if (!r || !v)
		rc = GA_FORMAT_REPORTED;
	for (size_t i = 0; i < g->nseries && !rc; i++) {
		const struct ga_gs_series *s = &g->series[i];

		bi(r, 1, i);
		bi(r, 2, s->proc);
		bi(r, 3, s->device);
		bstr(r, 4, ga_gs_source(s->source));
		bstr(r, 5, s->status < sizeof(status) / sizeof(status[0]) ? status[s->status] :
		     "unknown");
		bi(r, 6, s->interval_ns);
		bi(r, 7, s->ns);
		if (s->ns) {
			bi(r, 8, s->first);
			bi(r, 9, s->last);
		} else {
			bnull(r, 8);
			bnull(r, 9);
		}
		rc = step(q, r);
		for (size_t j = 0; j < s->ns && !rc; j++) {
			const double *x = s->values + s->s[j].vi;

			for (uint32_t k = 0; k < s->n && !rc; k++) {
				if (isnan(x[k]))
					continue;
				bi(v, 1, i);
				bi(v, 2, s->s[j].start);
				bi(v, 3, s->s[j].end);
				bsid(v, 4, s->m[k].name);
				sqlite3_bind_double(v, 5, x[k]);
				rc = step(q, v);
			}
		}
	}
	sqlite3_finalize(r);
	sqlite3_finalize(v);
	return rc;
}

static int end(struct ga_export *e)
{
	struct sq *q = e->state;
	struct ga_analysis *an = e->an;
	struct ga_model *m = &an->m;
	int rc, i;

	/* The streamed rows' thread: every row in, the rest bound directly. */
	if (sp_stop(q))
		return GA_FORMAT_REPORTED;
	/* Spilled ranges were written when scanned (ready()); their index unreadable for an
	 * activity a filter dropped fails the export here. */
	if (q->rl.err[0])
		return ga_format_said(q->rl.err);
	rc = meta(q, m);
	rc = rc ? rc : processes(q, m);
	rc = rc ? rc : devices(q, m);
	rc = rc ? rc : streams(q, m);
	rc = rc ? rc : threads(q, m, &an->rg);
	rc = rc ? rc : graphs(q, an);
	rc = rc ? rc : nvtx(q, &an->rg);
	rc = rc ? rc : stacks(q, &an->st);
	rc = rc ? rc : sites(q, &an->st);
	rc = rc ? rc : losses(q, m);
	rc = rc ? rc : metrics(q, m, &an->mx);
	rc = rc ? rc : gpu_samples(q, &an->gs);
	/* Last: the names of everything above (sites and frames add some). */
	rc = rc ? rc : strings(q, m);
	if (rc)
		return rc;
	for (i = 0; i < S_COUNT; i++) {
		sqlite3_finalize(q->st[i]);
		q->st[i] = NULL;
	}
	if (exec(q, "COMMIT"))
		return GA_FORMAT_REPORTED;
	if (sqlite3_close(q->db) != SQLITE_OK)
		return fail(q, "close");
	q->db = NULL;
	return 0;
}

static void done(struct ga_export *e)
{
	struct sq *q = e->state;

	if (!q)
		return;
	sp_stop(q);
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(q->st[i]);
	if (q->db)
		sqlite3_close(q->db);
	ga_map_free(&q->threads);
	ga_range_layout_free(&q->rl);
	free(q->rthr);
	ga_map_free(&q->rthr_map);
	free(q);
	e->state = NULL;
}

const struct ga_format ga_format_sqlite = {
	.name = "sqlite",
	.busy_bound_ok = 1,
	.samples = 1,
	.help = "an SQLite database (needs -o FILE): every activity, API call,\n"
		"NVTX range and mark, stack and string (docs/SQL.md)",
	.observe_sites = 1,
	.list_frames = 1,
	.marks = 1,
	.range_details = 1,
	.spill_ranges = 2,
	.needs_file = 1,
	.begin = begin,
	.end = end,
	.done = done,
};
