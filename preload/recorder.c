/*
 * Record emitters and loss accounting (see recorder.h).
 * Context: producer-lock holders only (CUPTI completion path, init, exit).
 */
#include "recorder.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct gp_recorder gp_rec;

void gp_lost_add(enum gp_lost_cause cause, uint64_t n)
{
	if (cause > 0 && cause < GP_LOST_CAUSE_COUNT && n)
		atomic_fetch_add_explicit(&gp_rec.lost[cause], n, memory_order_relaxed);
}

/* retried: the caller emits the record again later, a drop is no loss. */
static void *emit(uint16_t type, uint32_t size, int retried)
{
	struct gp_rec *h;

	size = gp_rec_align(size);
	{
		struct gp_ring *ring = gp_rec.emit_to ? gp_rec.emit_to : &gp_rec.ring;

		h = retried ? gp_ring_reserve_retried(ring, size) : gp_ring_reserve(ring, size);
	}
	if (!h)
		return NULL;
	memset(h, 0, size);
	h->type = type;
	h->size = (uint16_t)size;
	gp_rec.records++;
	return h;
}

void *gp_emit(uint16_t type, uint32_t size)
{
	return emit(type, size, 0);
}

uint32_t gp_emit_string_n(const char *s, size_t len)
{
	struct gp_rec_string *r;
	int added;
	uint32_t id;

	if (!s)
		return 0;
	if (len > GP_STRING_MAX)
		len = GP_STRING_MAX;
	id = gp_intern(&gp_rec.strings, s, len, &added);
	if (!id || !added)
		return id;
	r = gp_emit(GP_REC_STRING, (uint32_t)(sizeof(*r) + len));
	if (!r) {
		/*
		 * Dropped (counted as ring loss): forget the string so its next
		 * use emits it again, and give this record no name rather than
		 * an id the file never defines.
		 */
		gp_intern_undo(&gp_rec.strings, id);
		return 0;
	}
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r + 1, s, len);
	return id;
}

uint32_t gp_emit_string(const char *s)
{
	return s ? gp_emit_string_n(s, strlen(s)) : 0;
}

/* Ring drops are counted by the ring itself, under the producer lock. */
static void gp_emit_lost_sync(void)
{
	uint64_t ring = gp_rec.ring.dropped;
	uint64_t prev = atomic_load_explicit(&gp_rec.lost[GP_LOST_RING_FULL], memory_order_relaxed);

	if (ring > prev)
		atomic_store_explicit(&gp_rec.lost[GP_LOST_RING_FULL], ring, memory_order_relaxed);
}

void gp_emit_begin_file(void)
{
	gp_emit_lost_sync();
	gp_rec.records = 0;
	gp_rec.ring.dropped_pending = 0;
	for (int c = 1; c < GP_LOST_CAUSE_COUNT; c++) {
		gp_rec.lost_base[c] = atomic_load_explicit(&gp_rec.lost[c], memory_order_relaxed);
		gp_rec.lost_reported[c] = gp_rec.lost_base[c];
	}
}

void gp_emit_strings_all(void)
{
	const struct gp_intern *in = &gp_rec.strings;

	for (uint32_t i = 0; i < in->cap; i++) {
		const struct gp_intern_entry *e = &in->tab[i];
		struct gp_rec_string *r;

		if (!e->str)
			continue;
		r = gp_emit(GP_REC_STRING, (uint32_t)(sizeof(*r) + e->len));
		if (!r)
			return; /* counted as ring loss */
		r->id = e->id;
		r->len = e->len;
		memcpy(r + 1, e->str, e->len);
	}
}

void gp_emit_lost(uint64_t now)
{
	gp_emit_lost_sync();
	for (int c = 1; c < GP_LOST_CAUSE_COUNT; c++) {
		uint64_t v = atomic_load_explicit(&gp_rec.lost[c], memory_order_relaxed);
		struct gp_rec_lost *r;

		if (v == gp_rec.lost_reported[c])
			continue;
		/*
		 * When the ring is full this record waits for the next call,
		 * which reports the counts it would have carried: its drop
		 * is not a lost record (that would count itself).
		 */
		r = emit(GP_REC_LOST, sizeof(*r), 1);
		if (!r)
			return;
		r->cause = (uint32_t)c;
		r->count = v - gp_rec.lost_reported[c];
		r->time = now;
		gp_rec.lost_reported[c] = v;
		/* The flight recorder's dumps add up what their chunks count. */
		if (gp_rec.ring.cur)
			gp_rec.ring.cur->lost_counted += r->count;
	}
}

uint64_t gp_now_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t gp_now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reads a small /proc file into buf (NUL-terminated); returns its length. */
static size_t read_small(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0) {
		buf[0] = 0;
		return 0;
	}
	while (n < sz - 1 && (r = read(fd, buf + n, sz - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	return n;
}

void gp_emit_process(uint64_t start_ns, uint32_t cupti_version)
{
	static char cmd[8192];
	char host[256], exe[4096];
	struct gp_rec_process *r;
	uint32_t host_id, exe_id, cmd_id;
	size_t n;
	ssize_t e;

	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = 0;
	e = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[e > 0 ? e : 0] = 0;
	n = read_small("/proc/self/cmdline", cmd, sizeof(cmd));
	while (n && !cmd[n - 1])
		n--;
	for (size_t i = 0; i < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	host_id = gp_emit_string(host);
	exe_id = gp_emit_string(exe);
	cmd_id = gp_emit_string_n(cmd, n);
	r = gp_emit(GP_REC_PROCESS, sizeof(*r));
	if (!r)
		return;
	r->pid = (uint32_t)getpid();
	r->ppid = (uint32_t)getppid();
	r->host = host_id;
	r->exe = exe_id;
	r->cmdline = cmd_id;
	r->cupti_version = cupti_version;
	r->start_ns = start_ns;
	r->cuda_driver = gp_rec.cuda_driver;
	r->rank = gp_rec.cfg.rank;
}

/*
 * Threads already named: open addressing over tids, 0 empty.  A process
 * with more threads than fit names the first ones only.
 */
#define THREAD_SET 4096
static uint32_t named[THREAD_SET];
static unsigned nnamed;

void gp_emit_thread(uint32_t tid)
{
	static const char pre[] = "/proc/self/task/";
	char path[64], comm[64], digits[12];
	struct gp_rec_thread *r;
	uint32_t i, name, t;
	size_t n, d = 0;

	if (!tid)
		return;
	for (i = (tid * 2654435761u) & (THREAD_SET - 1); named[i]; i = (i + 1) & (THREAD_SET - 1))
		if (named[i] == tid)
			return;
	if (nnamed >= THREAD_SET / 2)
		return;
	named[i] = tid;
	nnamed++;
	/* No stdio in the recorder: the path by hand. */
	for (t = tid; t; t /= 10)
		digits[d++] = (char)('0' + t % 10);
	memcpy(path, pre, sizeof(pre) - 1);
	for (n = sizeof(pre) - 1; d; )
		path[n++] = digits[--d];
	memcpy(path + n, "/comm", sizeof("/comm"));
	n = read_small(path, comm, sizeof(comm));
	while (n && (comm[n - 1] == '\n' || !comm[n - 1]))
		n--;
	if (!n)
		return;                    /* the thread is gone: its tid stays unnamed */
	name = gp_emit_string_n(comm, n);
	r = name ? gp_emit(GP_REC_THREAD, sizeof(*r)) : NULL;
	if (!r)
		return;
	r->tid = tid;
	r->name = name;
}

void gp_emit_config(void)
{
	struct gp_rec_config *r = gp_emit(GP_REC_CONFIG, sizeof(*r));

	if (!r)
		return;
	r->trace = gp_rec.cfg.trace | GP_TRACE_SAMPLERS_SAID |
		   (gp_rec.cfg.gpu_metrics[0] ? GP_TRACE_GPU_METRICS : 0) |
		   (gp_rec.cfg.gpu_telemetry_ms ? GP_TRACE_GPU_TELEMETRY : 0);
	r->graph_mode = gp_rec.cfg.graph_mode;
	r->backtrace = gp_rec.cfg.pystack == GP_PYSTACK_PYTHON  ? GP_BACKTRACE_PYTHON
		       : gp_rec.cfg.pystack == GP_PYSTACK_MIXED ? GP_BACKTRACE_MIXED
								: gp_rec.cfg.backtrace;
	r->flush_ms = gp_rec.cfg.flush_ms;
}

void gp_emit_clock_sync(uint64_t trace_ns)
{
	struct gp_rec_clock_sync *r = gp_emit(GP_REC_CLOCK_SYNC, sizeof(*r));

	if (!r)
		return;
	r->realtime_ns = gp_now_realtime();
	r->monotonic_ns = gp_now_monotonic();
	r->trace_ns = trace_ns;
}

void gp_emit_end(uint64_t end_ns)
{
	uint64_t lost = 0;
	struct gp_rec_end *r;

	for (int c = 1; c < GP_LOST_CAUSE_COUNT; c++)
		lost += atomic_load_explicit(&gp_rec.lost[c], memory_order_relaxed) -
			gp_rec.lost_base[c];
	r = gp_emit(GP_REC_END, sizeof(*r));
	if (!r)
		return;
	r->end_ns = end_ns;
	r->records = gp_rec.records - 1;
	r->lost = lost;
}

void gp_emit_final(uint64_t end_ns, int wait_ms)
{
	gp_ring_seal(&gp_rec.ring, 0);
	/*
	 * Once the writer has handled every data chunk, the count of records
	 * it could not write is final and goes into the last chunk, which the
	 * writer puts into the room it kept free for it.
	 */
	if (gp_ring_wait_drained(&gp_rec.ring, wait_ms) == 0)
		atomic_store(&gp_rec.lost[GP_LOST_WRITE_ERROR],
			     gp_rec.lost_base[GP_LOST_WRITE_ERROR] + gp_rec.file.records_lost);
	gp_emit_lost(end_ns);
	gp_emit_end(end_ns);
	atomic_store_explicit(&gp_rec.state, GP_STOPPED, memory_order_release);
	gp_ring_seal(&gp_rec.ring, GP_CHUNK_F_LAST);
}
