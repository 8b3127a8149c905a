/*
 * The recorder's lifecycle (see lifecycle.h): start, periodic flush, the
 * end of the trace (exit, signals), fork.  It owns the chunk ring, the
 * trace file and its writer, the flusher thread and the session file; the
 * record sources (source.h) plug into it.
 *
 * Threads:
 *  - gp_recorder_start: the thread inside cuInit (InitializeInjection).
 *  - flusher thread: every flush interval asks the sources to hand over
 *    what they buffered and seals the open chunk, so a killed program
 *    loses at most one interval; finishes the trace when a signal handler
 *    asks (signals.h).  It sleeps in poll(2) on an eventfd, which a signal
 *    handler can write to.
 *  - exit handler (atexit, registered inside cuInit): finishes the trace;
 *    every wait bounded.
 *  - gp_recorder_forked: atfork child handler; only flips flags.
 */
#include "lifecycle.h"
#include "config.h"
#include "log.h"
#include "recorder.h"
#include "signals.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GP_RING_CHUNK (1u << 20)
/* How long a producer waits for the writer when the ring is full (once per stall). */
#define GP_RING_WAIT_MS 5000
/* Bound on each wait of the finishing path (drain, writer, signal handler). */
#define GP_FINISH_WAIT_MS 5000

static pthread_t flusher;
static int flusher_started;
static int wake_fd = -1;
static uint64_t wake_ino;
static atomic_int flush_stop, finish_requested, finished;
/*
 * The trace file exists.  With a source that asks for it (file_on_demand),
 * it is created at the first sign of GPU work (gp_recorder_need_file), so
 * a process that only initializes CUDA (a launcher asking for the device
 * count) leaves no file.  open_lock orders its creation against finish().
 */
static atomic_int file_open;
static int on_demand;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
/* Records buffered without a file that make the recorder create it anyway. */
#define GP_ON_DEMAND_RECORDS 65536
/*
 * A weak reference: the library defines the sources (cupti/tracer.c), a
 * unit test its own, other programs that link this file none (NULL).
 */
#pragma weak gp_sources
static const struct gp_source *const no_sources[] = { NULL };

static const struct gp_source *const *sources(void)
{
	return gp_sources ? gp_sources : no_sources;
}

/* Sources attached so far (undone in reverse on failure). */
static int nattached;

static uint64_t trace_now(void)
{
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->now)
			return sources()[i]->now();
	return gp_now_realtime();
}

static void flush_sources(int final)
{
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->flush)
			sources()[i]->flush(final);
}

/* Lock held. */
static void drain_sources(uint64_t t, int final)
{
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->drain)
			sources()[i]->drain(t, final);
}

static void periodic_flush(void)
{
	int open = atomic_load_explicit(&file_open, memory_order_acquire), pressure;

	if (atomic_load(&gp_rec.state) != GP_ACTIVE)
		return;
	flush_sources(0);
	gp_ring_lock(&gp_rec.ring);
	drain_sources(0, 0);
	gp_emit_lost(0);
	/* Without a file nobody empties the ring: keep filling the open chunk. */
	if (open)
		gp_ring_seal(&gp_rec.ring, 0);
	pressure = !open && gp_rec.records > GP_ON_DEMAND_RECORDS;
	gp_ring_unlock(&gp_rec.ring);
	if (pressure)
		gp_recorder_need_file();
}

static void finish(int on_flusher);

/* Sleeps up to ms or until woken; keeps the wake descriptor honest. */
static void flusher_sleep(int ms)
{
	struct pollfd p = { .fd = wake_fd, .events = POLLIN };
	struct stat st;
	uint64_t v;

	if (wake_fd < 0) {
		/* No way to be woken: look at the flags every 50 ms. */
		struct timespec ts = { 0, (long)(ms < 50 ? ms : 50) * 1000000L };

		nanosleep(&ts, NULL);
		return;
	}
	if (poll(&p, 1, ms) <= 0)
		return;
	/*
	 * The program may close every descriptor or dup2 over ours: only read
	 * from what is still our eventfd, else stop using it.
	 */
	if ((p.revents & (POLLNVAL | POLLERR)) || fstat(wake_fd, &st) < 0 ||
	    (uint64_t)st.st_ino != wake_ino) {
		wake_fd = -1;
		return;
	}
	if (read(wake_fd, &v, sizeof(v)) < 0)
		(void)0;
}

/*
 * Every interval, a flush; a quarter interval later, a second one.  On a
 * GPU that is never idle the buffer CUPTI fills always holds a record not
 * yet complete, and a flush only hands over buffers whose records all are:
 * the first flush retires the buffer, the second delivers it once its last
 * kernels ended.  Records so reach the file about 1.25 intervals after they
 * complete instead of two.
 */
static void *flusher_main(void *arg)
{
	uint64_t iv = gp_rec.cfg.flush_ms * 1000000ull;
	uint64_t next = gp_now_monotonic() + iv;
	int follow_up = 0;

	(void)arg;
	while (!atomic_load(&flush_stop)) {
		uint64_t now = gp_now_monotonic();

		if (atomic_load(&finish_requested)) {
			finish(1);
			break;
		}
		if (now >= next) {
			periodic_flush();
			follow_up = !follow_up;
			next = now + (follow_up ? iv / 4 : iv - iv / 4);
			continue;
		}
		flusher_sleep((int)((next - now + 999999) / 1000000));
	}
	return NULL;
}

/* Async-signal-safe. */
static void wake_flusher(void)
{
	uint64_t one = 1;
	struct stat st;
	int fd = wake_fd;

	/* Never write into what the program put at our descriptor's number. */
	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_ino != wake_ino)
		return;
	if (write(fd, &one, sizeof(one)) < 0)
		(void)0;
}

static void start_flusher(void)
{
	sigset_t all, old;
	struct stat st;
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (fd >= 0) {
		/* High, where programs rarely dup2 to. */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 200);

		if (hi >= 0) {
			close(fd);
			fd = hi;
		}
		fcntl(fd, F_SETFL, O_NONBLOCK);
		if (fstat(fd, &st) == 0) {
			wake_ino = (uint64_t)st.st_ino;
			wake_fd = fd;
		} else {
			close(fd);
		}
	}
	/* Our threads never take the application's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	flusher_started = pthread_create(&flusher, NULL, flusher_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Signal handlers (any thread, async-signal-safe): ask the flusher to finish. */
static void request_finish(void)
{
	atomic_store(&finish_requested, 1);
	wake_flusher();
}

static int is_finished(void)
{
	return atomic_load(&finished) || !flusher_started;
}

static int is_owner(void)
{
	return getpid() == gp_rec.pid && !atomic_load(&gp_rec.disabled);
}

/*
 * Ends the trace: last records from the sources, final records, drain,
 * close.  Runs once, on the exit path or on the flusher when a signal
 * asked for it (on_flusher: it must not join itself).
 */
static void finish(int on_flusher)
{
	int expected = GP_ACTIVE;
	uint64_t t, other_lost = 0;

	if (getpid() != gp_rec.pid ||
	    !atomic_compare_exchange_strong(&gp_rec.state, &expected, GP_STOPPING))
		return;
	if (flusher_started && !on_flusher) {
		atomic_store(&flush_stop, 1);
		wake_flusher();
		pthread_join(flusher, NULL);
	}
	flush_sources(1);
	t = atomic_load(&gp_rec.disabled) ? gp_now_realtime() : trace_now();
	pthread_mutex_lock(&open_lock);
	if (!atomic_load(&file_open)) {
		/* No GPU work: no trace, nothing to say. */
		pthread_mutex_unlock(&open_lock);
		gp_ring_lock(&gp_rec.ring);
		drain_sources(t, 1);
		atomic_store_explicit(&gp_rec.state, GP_STOPPED, memory_order_release);
		gp_ring_unlock(&gp_rec.ring);
		gp_debug("no GPU work; no trace written");
		atomic_store(&finished, 1);
		return;
	}
	pthread_mutex_unlock(&open_lock);
	gp_ring_lock(&gp_rec.ring);
	gp_emit_clock_sync(t);
	drain_sources(t, 1);
	/* Sets GP_STOPPED under the lock: what sources deliver later is late. */
	gp_emit_final(t, GP_FINISH_WAIT_MS);
	gp_ring_unlock(&gp_rec.ring);
	if (gp_tracefile_stop(&gp_rec.file, GP_FINISH_WAIT_MS) < 0)
		gp_log("writing %s did not finish in %d s; the trace may end early",
		       gp_rec.file.path, GP_FINISH_WAIT_MS / 1000);
	for (int c = 1; c < GP_LOST_CAUSE_COUNT; c++)
		if (c != GP_LOST_WRITE_ERROR)
			other_lost += atomic_load(&gp_rec.lost[c]);
	/* A write failure was said when it happened: one line is enough. */
	if (!gp_rec.file.failed && (other_lost || gp_rec.file.records_lost))
		gp_log("%llu records lost (see the report); trace: %s",
		       (unsigned long long)(other_lost + gp_rec.file.records_lost),
		       gp_rec.file.path);
	gp_debug("wrote %llu records to %s", (unsigned long long)gp_rec.file.records_written,
		 gp_rec.file.path);
	atomic_store(&finished, 1);
}

void gp_recorder_stop(void)
{
	finish(0);
	if (atomic_load(&gp_rec.late_records))
		gp_debug("%llu records arrived after the trace was closed",
			 (unsigned long long)atomic_load(&gp_rec.late_records));
}

static void at_exit(void)
{
	gp_recorder_stop();
}

static void register_session_file(void)
{
	char line[GP_PATH_MAX + 2];
	int fd, n;

	if (!gp_rec.cfg.session_file[0])
		return;
	/* The trace's path is absolute (tracefile.c). */
	n = snprintf(line, sizeof(line), "%s\n", gp_rec.file.path);
	if (n < 0 || n >= (int)sizeof(line))
		return;
	fd = open(gp_rec.cfg.session_file,
		  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* O_APPEND and one write: lines from concurrent processes stay whole. */
	if (write(fd, line, (size_t)n) < 0)
		(void)0;
	close(fd);
}

static void give_up(const char *why)
{
	while (nattached > 0)
		if (sources()[--nattached]->detach)
			sources()[nattached]->detach();
	gp_log("%s; the program runs untraced", why);
	atomic_store(&gp_rec.state, GP_OFF);
}

/* Creates the trace file and starts its writer; -1 with a reason in why. */
static int open_trace(char *why, size_t whysz)
{
	int err = gp_tracefile_open(&gp_rec.file, gp_rec.cfg.output, gp_rec.cfg.force,
				    GP_CLOCK_REALTIME, gp_now_realtime());

	if (err) {
		char path[GP_PATH_MAX];
		int uses_n;

		gp_config_expand(gp_rec.cfg.output, gp_rec.pid, 1, path, sizeof(path), &uses_n);
		snprintf(why, whysz, "cannot create %s: %s%s", path, strerror(-err),
			 err == -EEXIST ? " (set GPUPROF_FORCE=1 or use -f to overwrite)" : "");
		return -1;
	}
	if (gp_tracefile_start(&gp_rec.file, &gp_rec.ring) < 0) {
		gp_tracefile_stop(&gp_rec.file, GP_FINISH_WAIT_MS);
		unlink(gp_rec.file.path);
		snprintf(why, whysz, "cannot start the writer thread");
		return -1;
	}
	atomic_store_explicit(&file_open, 1, memory_order_release);
	register_session_file();
	gp_debug("tracing into %s", gp_rec.file.path);
	return 0;
}

void gp_recorder_need_file(void)
{
	char why[GP_PATH_MAX + 200];
	int failed = 0;

	if (atomic_load_explicit(&file_open, memory_order_acquire) || !on_demand)
		return;
	pthread_mutex_lock(&open_lock);
	if (!atomic_load(&file_open) && is_owner() &&
	    atomic_load(&gp_rec.state) == GP_ACTIVE)
		failed = open_trace(why, sizeof(why)) < 0;
	if (failed) {
		/* Passive from here on: sources see the state, the exit does nothing. */
		atomic_store(&gp_rec.state, GP_OFF);
		atomic_store(&finished, 1);
		atomic_store(&flush_stop, 1);
		wake_flusher();
	}
	pthread_mutex_unlock(&open_lock);
	if (failed)
		gp_log("%s; the program runs untraced", why);
}

static int start(void)
{
	char why[GP_PATH_MAX + 200];
	uint32_t version = 0;
	int err;

	gp_rec.cfg = *gp_config_get();
	if (gp_rec.cfg.disabled || atomic_load(&gp_rec.disabled))
		return -1;
	gp_rec.pid = (int)getpid();
	for (nattached = 0; sources()[nattached]; nattached++) {
		if (sources()[nattached]->attach(&gp_rec.cfg, &version, why, sizeof(why)) < 0) {
			give_up(why);
			return -1;
		}
	}

	err = gp_ring_init(&gp_rec.ring, GP_RING_CHUNK, gp_rec.cfg.ring_chunks, GP_RING_WAIT_MS);
	if (err) {
		give_up("out of memory for the trace ring");
		return -1;
	}
	gp_intern_init(&gp_rec.strings);
	for (int i = 0; sources()[i]; i++)
		on_demand |= sources()[i]->file_on_demand;
	if (!on_demand && open_trace(why, sizeof(why)) < 0) {
		give_up(why);
		return -1;
	}

	gp_ring_lock(&gp_rec.ring);
	gp_emit_process(trace_now(), version);
	gp_emit_config();
	gp_emit_clock_sync(trace_now());
	gp_ring_unlock(&gp_rec.ring);

	atomic_store_explicit(&gp_rec.state, GP_ACTIVE, memory_order_release);
	for (int i = 0; sources()[i]; i++) {
		if (sources()[i]->enable && sources()[i]->enable(why, sizeof(why)) < 0) {
			atomic_store(&gp_rec.state, GP_STOPPING);
			goto fail;
		}
	}

	start_flusher();
	/*
	 * The exit handler: registered here, inside cuInit, so a process that
	 * only initializes CUDA (a launcher asking for the device count) still
	 * finishes its trace, or, with the file on demand, ends without one.
	 * It makes no CUDA call, only CUPTI's flush.
	 */
	atexit(at_exit);
	if (flusher_started) {
		const struct gp_signal_ops sops = {
			.request_finish = request_finish,
			.finished = is_finished,
			.owner = is_owner,
		};

		gp_signals_install(&sops, GP_FINISH_WAIT_MS);
	}
	return 0;

fail:
	if (atomic_load(&file_open)) {
		gp_tracefile_stop(&gp_rec.file, GP_FINISH_WAIT_MS);
		unlink(gp_rec.file.path);
	}
	give_up(why);
	return -1;
}

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_rc = -1;

static void start_once_fn(void)
{
	start_rc = start();
}

int gp_recorder_start(void)
{
	pthread_once(&start_once, start_once_fn);
	return start_rc;
}

void gp_recorder_forked(void)
{
	/*
	 * The child inherits the sources' state but none of our threads: any
	 * call into them (even the exit flush) can hang.  Stay passive.
	 */
	atomic_store(&gp_rec.disabled, 1);
	atomic_store(&gp_rec.state, GP_OFF);
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->forked)
			sources()[i]->forked();
	flusher_started = 0;
	wake_fd = -1;
}
