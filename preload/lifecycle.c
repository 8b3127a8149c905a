/*
 * The recorder's lifecycle (see lifecycle.h): start, periodic flush, the
 * end of the trace (exit, signals), fork, and windows opened and closed
 * from outside (gpuprof start/stop).  It owns the chunk ring, the trace
 * file and its writer, the flusher thread and the session file; the
 * record sources (source.h) plug into it.
 *
 * Started dormant (GPUPROF_START=dormant), the recorder attaches its
 * sources (which claim nothing on the program's paths: CUPTI is not even
 * loaded) and listens on its control socket, but opens no file; the
 * sources are enabled at the first window and record only inside windows.  Each window is a
 * CAPTURE_RANGE record (kind GP_CAPTURE_CONTROL); windows go into one file
 * (opened at the first, closed at exit) or, when the output template has
 * %n or the request names a file, into a file each.
 *
 * Sampled (GPUPROF_SAMPLE=WINDOW/PERIOD, with GPUPROF_SPOOL), the dormant
 * recorder opens a window of WINDOW every PERIOD itself, the first at a
 * random offset within the period, each into a file of its own in the
 * spool (see "sampled windows" below); gpuprof start/stop/status still work.
 * Once a window's own file has ended and the recorder is dormant again,
 * the sources are told (idle_sources): the CUDA source lets CUPTI go until
 * the next window.
 *
 * With a flight recorder (GPUPROF_FLIGHT_RECORDER) the writer compresses
 * chunks into memory (flight.h) instead of a file; a dump writes what that
 * memory holds into a new file: a preamble chunk (strings, process,
 * devices), the kept chunks, a last chunk with the FLIGHT record.  Dumps
 * run on the flusher (or the exit path), never on a program thread: the
 * triggers (the dump signal, an NVTX name, a CUDA error) only set a flag
 * and wake it.
 *
 * Threads:
 *  - gp_recorder_start: the thread inside cuInit (InitializeInjection).
 *  - flusher thread: every flush interval asks the sources to hand over
 *    what they buffered and seals the open chunk, so a killed program
 *    loses at most one interval (sooner when a source asks,
 *    gp_recorder_flush_soon); finishes the trace when a signal handler
 *    asks (signals.h); opens and closes windows (the control thread's
 *    requests, --duration).  It sleeps on a futex word (wake_word), which
 *    program threads and signal handlers set and wake; no descriptor, so
 *    a program that closes or reuses every descriptor number cannot take
 *    it away.  Every change of file or window happens on it (or on the
 *    exit path once it has ended), so they never race.
 *  - control thread (ctlserver.c), only when asked for: hands requests to the
 *    flusher through the mailbox below and waits for the answer.
 *  - exit handler (atexit, registered inside cuInit): finishes the trace;
 *    every wait bounded.
 *  - gp_recorder_forked: atfork child handler; only flips flags.
 */
#include "lifecycle.h"
#include "config.h"
#include "ctlserver.h"
#include "flight.h"
#include "log.h"
#include "recorder.h"
#include "signals.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <gpuprof/control.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GP_RING_CHUNK (1u << 20)
/* How long a producer waits for the writer when the ring is full (once per stall). */
#define GP_RING_WAIT_MS 5000
/* Bound on each wait of the finishing path (drain, writer, signal handler). */
#define GP_FINISH_WAIT_MS 5000
/* Automatic dumps (NVTX name, CUDA error) a process makes at most. */
#define GP_AUTO_DUMPS 16
/*
 * Chunks of 1 MiB for a dump's first and last chunks (names, devices, call
 * stacks, ...); only the pages written become resident.
 */
#define GP_PREAMBLE_CHUNKS 64
/* How long the control thread waits for the flusher to carry a request out. */
#define GP_REQUEST_WAIT_MS 60000

static pthread_t flusher;
static int flusher_started;
/*
 * The flusher's wake-up: 1 once woken since the flusher last looked; it
 * sleeps in FUTEX_WAIT on it.  Not a descriptor: the program may close
 * every descriptor and put its own at our numbers (daemons do), and a
 * thread asleep in poll(2) on a descriptor whose number is replaced
 * stays asleep on the old file: the kernel looks at the number again
 * only once that file wakes it, so neither a write to our other end nor
 * one to the program's descriptor now at that number would wake it (and
 * whatever we read or wrote at our numbers could be the program's).  A
 * private futex is this process's memory only, and the two system calls
 * are async-signal-safe.
 */
static atomic_uint wake_word;
static atomic_int flush_stop, finish_requested, finished, finishing;

/*
 * Windows (gpuprof start/stop).  Written on the flusher (or the exit path
 * once the flusher has ended); the control thread reads them for status.
 */
static atomic_int window_open;
static atomic_uint windows;         /* windows opened so far */
static uint64_t window_t0;          /* trace clock at its start */
static uint64_t window_start_mono;
static uint64_t window_deadline;    /* CLOCK_MONOTONIC ns, 0 none */
static int window_own_file;         /* the file ends with the window */
static uint64_t rec_start;          /* trace clock when the first file began */

/*
 * Sampled windows, on the flusher only.  A window's file is written as
 * SPOOL/.HOST-PID-wN.gpuprof and renamed to SPOOL/HOST-PID-wN.gpuprof once
 * complete (gpuprof serve reads only those); then the oldest files of the
 * spool go until it holds at most GPUPROF_SPOOL_MAX bytes.  The rule that
 * makes windows exact: a kernel, copy or memset belongs to the window its
 * launch call began in (an API call to the one it began in).  The window
 * starts once tracing is on and ends before it goes off; the sources keep
 * what began inside (source.h, window; cupti/edges.h).  Its file closes a
 * grace period after the end (two flush intervals, from 200 ms to 10 s),
 * so that the records of work launched inside it and still running on the
 * GPU arrive; work launched before the window began is not recorded, even
 * when it runs into it.
 */
static uint64_t sample_next;        /* CLOCK_MONOTONIC ns of the next window, 0 not sampling */
static uint64_t sample_close_at;    /* when the ended window's file closes, 0 none */
static int sample_open;             /* the open window is a sampled one */
static unsigned sample_seq;         /* windows sampled so far */

/* The flight recorder (flight.h) and its dumps. */
static struct gp_flight flight;
static atomic_int finish_sig;       /* the signal that ends the process, 0 */
static atomic_int dump_trigger, dump_detail; /* a dump asked for by a trigger */
static atomic_int flush_soon;        /* a source asked for a flush ahead of the interval */
static atomic_uint dumps, auto_dumps;

/* What status reports as the trace file; guarded by info_lock. */
static pthread_mutex_t info_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The file on demand: with a source that asks for it (file_on_demand), the
 * first trace file is created at the first sign of GPU work
 * (gp_recorder_need_file), so a process that only initializes CUDA (a
 * launcher asking for the device count) leaves no file.  Until then the
 * records wait in the ring after the preamble emitted at start, the open
 * chunk filling.  A dormant recorder's window opened in a process without
 * a CUDA context (gp_control_cuda_context) waits the same way: a launcher
 * under gpuprof start writes no file.  open_lock orders the file's
 * creation against finish() and drop_pending().
 */
static atomic_int file_pending;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
/* The template of a window's file that waits (gpuprof start -o), "" for the configured one. */
static char pending_tmpl[GP_PATH_MAX];
/* Records waiting without a file that make the recorder create it anyway. */
#define GP_ON_DEMAND_RECORDS 65536
static char info_path[GP_PATH_MAX];

/*
 * The control thread's request to the flusher: one at a time, answered
 * under the same lock (done_serial catches up with serial).
 */
enum { OP_NONE, OP_START, OP_STOP, OP_DUMP };
static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;
	int op;
	uint64_t duration_ms;
	char output[GP_PATH_MAX];
	uint64_t serial, done_serial;
	int rc;
	char ans[GP_CONTROL_MSG_MAX];
} mbox = { .lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER };
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

/* A window's edge to every source (source.h): what, at trace time t. */
static void window_edge(int what, uint64_t t)
{
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->window)
			sources()[i]->window(what, t);
}

/*
 * Flusher: dormant again, the last window's file ended (source.h, idle).
 * Not when a window or a file is open: one file for several windows keeps
 * what the sources hold for it (CUPTI's correlation ids among them).
 */
static void idle_sources(void)
{
	if (atomic_load(&window_open) || atomic_load(&gp_rec.state) != GP_DORMANT)
		return;
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->idle)
			sources()[i]->idle();
}

static int set_tracing(int on, char *why, size_t whysz)
{
	int rc = 0;

	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->set_tracing && sources()[i]->set_tracing(on, why, whysz) < 0)
			rc = -1;
	return rc;
}

/*
 * The sources' enable hooks, once: at start, or for a dormant recorder at
 * its first window.  -1 with why (the next window tries again).
 */
static int sources_enabled;

static int enable_sources(char *why, size_t whysz)
{
	if (sources_enabled)
		return 0;
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->enable && sources()[i]->enable(why, whysz) < 0)
			return -1;
	sources_enabled = 1;
	return 0;
}

/* Lock held. */
static void preamble_sources(void)
{
	for (int i = 0; sources()[i]; i++)
		if (sources()[i]->preamble)
			sources()[i]->preamble();
}

static void periodic_flush(void)
{
	int pending, pressure;

	if (atomic_load(&gp_rec.state) != GP_ACTIVE)
		return;
	pending = atomic_load_explicit(&file_pending, memory_order_acquire);
	flush_sources(0);
	gp_ring_lock(&gp_rec.ring);
	drain_sources(0, 0);
	gp_emit_lost(0);
	/* Without a file nobody empties the ring: keep filling the open chunk. */
	if (!pending)
		gp_ring_seal(&gp_rec.ring, 0);
	pressure = pending && gp_rec.records > GP_ON_DEMAND_RECORDS;
	gp_ring_unlock(&gp_rec.ring);
	if (pressure)
		gp_recorder_need_file();
}

static void finish(int on_flusher);
static void serve_request(void);
static void window_stop_now(char *ans, size_t anssz);
static int do_dump(int trigger, int detail, const char *output, int final, char *ans,
		   size_t anssz);
static void triggered_dump(void);
static void sample_begin(void);
static void sample_stop(void);
static void sample_finish(int rotate);

/* Sleeps up to ms or until woken (wake_flusher). */
static void flusher_sleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	/*
	 * Seq-cst exchanges pair with wake_flusher's: whoever set a flag
	 * before setting the word has it seen by the loop that follows, which
	 * reads the flags after the word was taken here.  A wake between the
	 * exchange and the wait makes the wait return at once (the word is
	 * no longer 0); FUTEX_WAIT's relative timeout runs on CLOCK_MONOTONIC.
	 */
	if (atomic_exchange(&wake_word, 0))
		return;
	syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	atomic_exchange(&wake_word, 0);
}

/*
 * Every interval, a flush; a quarter interval later, a second one.  On a
 * GPU that is never idle the buffer CUPTI fills always holds a record not
 * yet complete, and a flush only hands over buffers whose records all are:
 * the first flush retires the buffer, the second delivers it once its last
 * kernels ended.  Records so reach the file about 1.25 intervals after they
 * complete instead of two.  In between: requests from the control thread,
 * and the end of a window that was given a duration.
 */
static void *flusher_main(void *arg)
{
	uint64_t iv = gp_rec.cfg.flush_ms * 1000000ull;
	uint64_t next = gp_now_monotonic() + iv, last = 0;
	int follow_up = 0;

	(void)arg;
	while (!atomic_load(&flush_stop)) {
		uint64_t now = gp_now_monotonic(), wake;

		if (atomic_load(&finish_requested)) {
			finish(1);
			break;
		}
		serve_request();
		if (atomic_load(&dump_trigger)) {
			triggered_dump();
			continue;
		}
		if (atomic_load(&window_open) && window_deadline && now >= window_deadline) {
			static char ans[GP_CONTROL_MSG_MAX];

			ans[0] = 0;
			if (sample_open)
				sample_stop();
			else
				window_stop_now(ans, sizeof(ans));
			continue;
		}
		if (sample_close_at && now >= sample_close_at) {
			sample_finish(1);
			continue;
		}
		if (sample_next && now >= sample_next) {
			uint64_t period = gp_rec.cfg.sample_period_ms * 1000000ull;

			sample_begin();
			while (sample_next <= now)
				sample_next += period;
			continue;
		}
		if (atomic_load(&flush_soon) && now >= last + iv / 16) {
			/*
			 * Asked for (at most every sixteenth of an interval): one
			 * now and its follow-up a quarter interval later.
			 */
			atomic_store(&flush_soon, 0);
			periodic_flush();
			last = now;
			follow_up = 1;
			next = now + iv / 4;
			continue;
		}
		if (now >= next) {
			periodic_flush();
			last = now;
			follow_up = !follow_up;
			next = now + (follow_up ? iv / 4 : iv - iv / 4);
			continue;
		}
		wake = next;
		if (atomic_load(&flush_soon) && last + iv / 16 < wake)
			wake = last + iv / 16;
		if (wake <= now)
			continue; /* asked for meanwhile */
		if (atomic_load(&window_open) && window_deadline && window_deadline < wake)
			wake = window_deadline;
		if (sample_close_at && sample_close_at < wake)
			wake = sample_close_at;
		if (sample_next && sample_next < wake)
			wake = sample_next;
		flusher_sleep((int)((wake - now + 999999) / 1000000));
	}
	return NULL;
}

/*
 * Async-signal-safe; program threads: at most one system call, and none
 * while the flusher has a wake-up it has not yet taken.
 */
static void wake_flusher(void)
{
	int saved = errno;

	/* Seq-cst: pairs with flusher_sleep's exchanges (the flags set before). */
	if (!atomic_exchange(&wake_word, 1))
		syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

static void start_flusher(void)
{
	sigset_t all, old;

	/* Our threads never take the application's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	flusher_started = pthread_create(&flusher, NULL, flusher_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Signal handlers (any thread, async-signal-safe): ask the flusher to finish. */
static void request_finish(int sig)
{
	atomic_store(&finish_sig, sig);
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

void gp_recorder_flush_soon(void)
{
	/* Asked already: an atomic load, no system call (it is asked at launches). */
	if (atomic_load_explicit(&flush_soon, memory_order_relaxed) || !is_owner())
		return;
	if (!atomic_exchange(&flush_soon, 1))
		wake_flusher();
}

void gp_recorder_request_dump(int trigger, int detail)
{
	int none = 0;

	if (!gp_rec.cfg.flight_bytes || getpid() != gp_rec.pid ||
	    atomic_load(&gp_rec.state) != GP_ACTIVE)
		return;
	if (atomic_compare_exchange_strong(&dump_trigger, &none, trigger))
		atomic_store(&dump_detail, detail);
	wake_flusher();
}

/* The dump signal's handler (async-signal-safe). */
static void on_dump_signal(int sig)
{
	gp_recorder_request_dump(GP_DUMP_SIGNAL, sig);
}

static void register_session_file(const char *path)
{
	char line[GP_PATH_MAX + 2];
	int fd, n;

	if (!gp_rec.cfg.session_file[0])
		return;
	/* The trace's path is absolute (tracefile.c). */
	n = snprintf(line, sizeof(line), "%s\n", path);
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

/*
 * Creates the trace file from tmpl, writes what every file begins with
 * (strings known so far, process, configuration, clock, the sources'
 * devices and contexts) and starts the writer.  Sets GP_ACTIVE.  Returns
 * 0, or -1 with the reason in why (the recorder's state is unchanged).
 */
/* Creates the trace file (or the flight recorder's memory file); -1 with why. */
static int create_file(const char *tmpl, char *why, size_t whysz)
{
	int err = gp_rec.cfg.flight_bytes
			  ? gp_tracefile_open_memory(&gp_rec.file, &flight)
			  : gp_tracefile_open(&gp_rec.file, tmpl, gp_rec.cfg.force, GP_CLOCK_REALTIME,
					      gp_now_realtime());

	if (err && gp_rec.cfg.flight_bytes) {
		snprintf(why, whysz, "out of memory for the flight recorder");
		return -1;
	}
	if (err) {
		char path[GP_PATH_MAX];
		int uses_n;

		gp_config_expand(tmpl, gp_rec.pid, 1, path, sizeof(path), &uses_n);
		snprintf(why, whysz, "cannot create %s: %s%s", path, strerror(-err),
			 err == -EEXIST ? " (set GPUPROF_FORCE=1 or use -f to overwrite)" : "");
		return -1;
	}
	return 0;
}

/* The records a file begins with: strings so far, process, configuration, clock, devices. */
static void emit_preamble(void)
{
	gp_ring_reopen(&gp_rec.ring);
	gp_ring_lock(&gp_rec.ring);
	gp_emit_begin_file();
	gp_emit_strings_all();
	rec_start = trace_now();
	gp_emit_process(rec_start, gp_rec.cupti_version);
	gp_emit_config();
	gp_emit_clock_sync(trace_now());
	preamble_sources();
	gp_ring_unlock(&gp_rec.ring);
}

/* Starts the writer on the created file; sets GP_ACTIVE.  -1 with why. */
static int start_writer(char *why, size_t whysz)
{
	if (gp_tracefile_start(&gp_rec.file, &gp_rec.ring) < 0) {
		snprintf(why, whysz, "cannot start the writer thread");
		gp_tracefile_stop(&gp_rec.file, GP_FINISH_WAIT_MS);
		if (!gp_rec.cfg.flight_bytes)
			unlink(gp_rec.file.path);
		return -1;
	}
	atomic_store_explicit(&gp_rec.state, GP_ACTIVE, memory_order_release);
	if (gp_rec.cfg.flight_bytes)
		return 0;
	pthread_mutex_lock(&info_lock);
	snprintf(info_path, sizeof(info_path), "%s", gp_rec.file.path);
	pthread_mutex_unlock(&info_lock);
	register_session_file(gp_rec.file.path);
	gp_debug("tracing into %s", gp_rec.file.path);
	return 0;
}

/*
 * Opens a trace file from template tmpl: creates it, writes its preamble
 * (strings known so far, process, configuration, clock, the sources'
 * devices and contexts) and starts the writer.  Sets GP_ACTIVE.  Returns
 * 0, or -1 with the reason in why (the recorder's state is unchanged).
 */
static int open_file(const char *tmpl, char *why, size_t whysz)
{
	if (create_file(tmpl, why, whysz) < 0)
		return -1;
	emit_preamble();
	return start_writer(why, whysz);
}

void gp_recorder_need_file(void)
{
	char why[GP_PATH_MAX + 200];
	int failed = 0;

	if (!atomic_load_explicit(&file_pending, memory_order_acquire))
		return;
	pthread_mutex_lock(&open_lock);
	if (atomic_load(&file_pending) && is_owner() &&
	    atomic_load(&gp_rec.state) == GP_ACTIVE) {
		failed = create_file(pending_tmpl[0] ? pending_tmpl : gp_rec.cfg.output, why,
				     sizeof(why)) < 0 ||
			 start_writer(why, sizeof(why)) < 0;
		atomic_store_explicit(&file_pending, 0, memory_order_release);
	}
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

/* Lock held: the open window as a capture range ending at t. */
static void emit_window(uint64_t t)
{
	struct gp_rec_capture_range *r = gp_emit(GP_REC_CAPTURE_RANGE, sizeof(*r));

	if (!r)
		return;
	r->start = window_t0;
	r->end = t;
	r->kind = GP_CAPTURE_CONTROL;
}

/*
 * Ends the open file: last records from the sources, final records, drain,
 * close.  exiting: the process ends (else the recorder goes dormant, ready
 * for the next window's file).
 */
static void close_file(uint64_t t, int exiting)
{
	uint64_t other_lost = 0;

	/* A window's own file ends: the sources hand everything over but go on. */
	flush_sources(exiting ? GP_FLUSH_END : GP_FLUSH_FILE);
	gp_ring_lock(&gp_rec.ring);
	atomic_store(&gp_rec.state, GP_STOPPING);
	gp_emit_clock_sync(t);
	drain_sources(t, 1);
	if (atomic_load(&window_open) && exiting)
		emit_window(t);
	/* Sets GP_STOPPED under the lock: what sources deliver later is late. */
	gp_emit_final(t, GP_FINISH_WAIT_MS);
	gp_ring_unlock(&gp_rec.ring);
	if (gp_tracefile_stop(&gp_rec.file, GP_FINISH_WAIT_MS) < 0) {
		gp_log("writing %s did not finish in %d s; the trace may end early",
		       gp_rec.file.path, GP_FINISH_WAIT_MS / 1000);
		/* The writer still owns the ring: no further files. */
		exiting = 1;
	}
	for (int c = 1; c < GP_LOST_CAUSE_COUNT; c++)
		if (c != GP_LOST_WRITE_ERROR)
			other_lost += atomic_load(&gp_rec.lost[c]) - gp_rec.lost_base[c];
	/* A write failure was said when it happened: one line is enough. */
	if (!gp_rec.file.failed && (other_lost || gp_rec.file.records_lost))
		gp_log("%llu records lost (see the report); trace: %s",
		       (unsigned long long)(other_lost + gp_rec.file.records_lost),
		       gp_rec.file.path);
	gp_debug("wrote %llu records to %s", (unsigned long long)gp_rec.file.records_written,
		 gp_rec.file.path);
	if (!exiting)
		atomic_store(&gp_rec.state, GP_DORMANT);
}

/*
 * Ends the trace at exit, or on the flusher when a signal asked for it
 * (on_flusher: it must not join itself).  Runs once.
 */
static void finish(int on_flusher)
{
	int state;
	uint64_t t;

	if (getpid() != gp_rec.pid || atomic_exchange(&finishing, 1))
		return;
	/* The flusher ends first: no window or file changes after this. */
	if (flusher_started && !on_flusher) {
		atomic_store(&flush_stop, 1);
		wake_flusher();
		pthread_join(flusher, NULL);
	}
	gp_control_close();
	state = atomic_load(&gp_rec.state);
	if (state == GP_ACTIVE && gp_rec.cfg.flight_bytes) {
		static char ans[GP_CONTROL_MSG_MAX];
		int sig = atomic_load(&finish_sig);

		/*
		 * A trigger whose record arrives only with CUPTI's last buffers
		 * (the API record of a failed CUDA call): hand everything over
		 * first, and its dump comes before the exit's.
		 */
		flush_sources(GP_FLUSH_END);
		gp_ring_lock(&gp_rec.ring);
		drain_sources(trace_now(), 0);
		gp_ring_unlock(&gp_rec.ring);
		triggered_dump();
		ans[0] = 0;
		do_dump(sig ? GP_DUMP_FATAL_SIGNAL : GP_DUMP_EXIT, sig, "", 1, ans, sizeof(ans));
		gp_ring_lock(&gp_rec.ring);
		atomic_store(&gp_rec.state, GP_STOPPED);
		gp_ring_unlock(&gp_rec.ring);
		gp_tracefile_stop(&gp_rec.file, GP_FINISH_WAIT_MS);
	} else if (state == GP_ACTIVE) {
		t = atomic_load(&gp_rec.disabled) ? gp_now_realtime() : trace_now();
		pthread_mutex_lock(&open_lock);
		if (atomic_load(&file_pending)) {
			/* No GPU work: no trace, nothing to say. */
			atomic_store(&file_pending, 0);
			pthread_mutex_unlock(&open_lock);
			flush_sources(GP_FLUSH_END);
			gp_ring_lock(&gp_rec.ring);
			drain_sources(t, 1);
			atomic_store_explicit(&gp_rec.state, GP_STOPPED, memory_order_release);
			gp_ring_unlock(&gp_rec.ring);
			gp_debug("no GPU work; no trace written");
			atomic_store(&finished, 1);
			return;
		}
		pthread_mutex_unlock(&open_lock);
		if (sample_open || sample_close_at) {
			/* Not on the program's thread: no spool rotation here (the next window's). */
			sample_finish(0);
		} else {
			close_file(t, 1);
		}
	}
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

#define ANS(...) snprintf(ans + strlen(ans), anssz - strlen(ans), __VA_ARGS__)

/* ---- flight-recorder dumps: on the flusher or the exit path ---- */

/* Lock held: the dump's records go to pre, not into the live ring. */
static uint64_t redirect(struct gp_ring *pre)
{
	uint64_t saved = gp_rec.records;

	gp_rec.emit_to = pre;
	gp_rec.records = 0;
	return saved;
}

/* Lock held: back to the live ring; returns the records emitted into pre. */
static uint64_t unredirect(uint64_t saved)
{
	uint64_t n = gp_rec.records;

	gp_rec.emit_to = NULL;
	gp_rec.records = saved;
	return n;
}

static void write_ring(struct gp_tracefile *d, struct gp_ring *pre)
{
	struct gp_chunk *c;

	while ((c = gp_ring_pop(pre, 0))) {
		gp_tracefile_write_chunk(d, c);
		gp_ring_release(pre, c);
	}
}

/*
 * Writes the flight recorder's memory into a new file from output (or the
 * output template): everything recorded up to now that the memory still
 * holds.  final: the process ends (the sources close what is open).  The
 * answer (file, records, dropped_records, lost_records, not_written, or
 * message) goes into ans.  Every chunk that cannot be written (disk full,
 * I/O error) is counted in the dump's last chunk under
 * GP_LOST_WRITE_ERROR.  Returns 0, or -1 when no file was made or the
 * dump is partial (the message says how many records are missing).  Sets
 * nothing the program's threads wait for: they go on recording into the
 * flight memory meanwhile.
 */
static int do_dump(int trigger, int detail, const char *output, int final, char *ans,
		   size_t anssz)
{
	static struct gp_tracefile d;
	struct gp_ring pre;
	struct gp_flight_view v;
	struct gp_chunk_header h;
	struct gp_rec_flight *fr;
	struct gp_rec_end *end;
	uint64_t t, saved, pre_records, tail_records, copied = 0, lost = 0, t_min = 0;
	uint64_t unwritten = 0, unwritten_lost = 0, not_written, before_tail;
	unsigned n = atomic_fetch_add(&dumps, 1) + 1;
	size_t cap;
	void *buf;
	int err;

	if (atomic_load(&gp_rec.state) != GP_ACTIVE) {
		ANS("message=the trace has ended\n");
		return -1;
	}
	/* Everything recorded up to now into the flight memory. */
	flush_sources(final ? GP_FLUSH_END : 0);
	t = atomic_load(&gp_rec.disabled) ? gp_now_realtime() : trace_now();
	gp_ring_lock(&gp_rec.ring);
	gp_emit_clock_sync(t);
	drain_sources(t, final);
	gp_emit_lost(t);
	gp_ring_seal(&gp_rec.ring, 0);
	gp_ring_wait_drained(&gp_rec.ring, GP_FINISH_WAIT_MS);
	gp_ring_unlock(&gp_rec.ring);
	gp_flight_view(&flight, &v);

	if (gp_ring_init(&pre, GP_RING_CHUNK, GP_PREAMBLE_CHUNKS, 0)) {
		ANS("message=out of memory for the dump\n");
		return -1;
	}
	/* What a reader needs from before the kept chunks. */
	gp_ring_lock(&gp_rec.ring);
	saved = redirect(&pre);
	gp_emit_strings_all();
	gp_emit_process(rec_start, gp_rec.cupti_version);
	gp_emit_config();
	gp_emit_clock_sync(t);
	preamble_sources();
	gp_ring_seal(&pre, 0);
	pre_records = unredirect(saved);
	gp_ring_unlock(&gp_rec.ring);

	err = gp_tracefile_open(&d, output[0] ? output : gp_rec.cfg.output, gp_rec.cfg.force,
				GP_CLOCK_REALTIME, gp_now_realtime());
	if (err) {
		char path[GP_PATH_MAX];
		int uses_n;

		gp_config_expand(output[0] ? output : gp_rec.cfg.output, gp_rec.pid, 1, path,
				 sizeof(path), &uses_n);
		ANS("message=cannot create %s: %s%s\n", path, strerror(-err),
		    err == -EEXIST ? " (use %n in the output name, or force)" : "");
		gp_log("flight recorder: cannot create %s: %s", path, strerror(-err));
		gp_ring_destroy(&pre);
		return -1;
	}
	write_ring(&d, &pre);
	/* The kept chunks, one at a time: the writer may go on meanwhile. */
	buf = gp_tracefile_frame_buf(&d, &cap);
	for (uint64_t id = v.first; id <= v.last; id++) {
		uint64_t lc;

		if (gp_flight_copy(&flight, id, &h, &lc, buf, cap) < 0)
			continue; /* dropped since the view: counted below */
		if (gp_tracefile_put_frame(&d, &h) < 0) {
			/*
			 * Not written (disk full, I/O error): its records are
			 * counted in d.records_lost, and so are the losses its
			 * LOST records carried, whose causes go with them.
			 */
			unwritten += h.nrecords;
			unwritten_lost += lc;
			continue;
		}
		copied += h.nrecords;
		lost += lc;
		if (h.t_min && (!t_min || h.t_min < t_min))
			t_min = h.t_min;
	}
	gp_flight_view(&flight, &v);

	gp_ring_lock(&gp_rec.ring);
	saved = redirect(&pre);
	fr = gp_emit(GP_REC_FLIGHT, sizeof(*fr));
	if (fr) {
		fr->start = v.dropped_chunks && t_min ? t_min : rec_start;
		fr->end = t;
		fr->dropped_records = v.dropped_records;
		fr->dropped_bytes = v.dropped_bytes;
		fr->dropped_chunks = v.dropped_chunks;
		fr->size = flight.size;
		fr->trigger = (uint32_t)trigger;
		fr->detail = (uint32_t)detail;
		fr->dump = n;
	}
	/* What this file could not take, counted in it: every chunk not written. */
	not_written = d.records_lost + unwritten_lost;
	if (not_written) {
		struct gp_rec_lost *l = gp_emit(GP_REC_LOST, sizeof(*l));

		if (l) {
			l->cause = GP_LOST_WRITE_ERROR;
			l->count = not_written;
			l->time = t;
			lost += not_written;
		}
	}
	tail_records = gp_rec.records;
	end = gp_emit(GP_REC_END, sizeof(*end));
	if (end) {
		end->end_ns = t;
		/* As in any trace: emitted into the file, written or not. */
		end->records = pre_records + copied + unwritten + tail_records;
		end->lost = lost;
	}
	gp_ring_seal(&pre, GP_CHUNK_F_LAST);
	unredirect(saved);
	gp_ring_unlock(&gp_rec.ring);
	before_tail = d.records_lost;
	write_ring(&d, &pre);
	gp_ring_destroy(&pre);
	if (gp_tracefile_stop(&d, GP_FINISH_WAIT_MS) < 0)
		gp_log("writing %s did not finish in %d s; the dump may end early", d.path,
		       GP_FINISH_WAIT_MS / 1000);
	pthread_mutex_lock(&info_lock);
	snprintf(info_path, sizeof(info_path), "%s", d.path);
	pthread_mutex_unlock(&info_lock);
	register_session_file(d.path);
	gp_debug("flight recorder: dump %u into %s (%llu records, %llu older dropped)", n, d.path,
		 (unsigned long long)copied, (unsigned long long)v.dropped_records);
	/*
	 * records: the kept records written; not_written: the records of
	 * every chunk that could not be written (the last chunk's too when
	 * it failed: the file then ends without END); lost_records: all the
	 * dump lost, every cause.
	 */
	not_written = d.records_lost;
	ANS("file=%s\ndump=%u\nrecords=%llu\ndropped_records=%llu\nwindow_ms=%llu\n"
	    "lost_records=%llu\nnot_written=%llu\n", d.path, n,
	    (unsigned long long)copied, (unsigned long long)v.dropped_records,
	    (unsigned long long)((t - (v.dropped_chunks && t_min ? t_min : rec_start)) / 1000000ull),
	    (unsigned long long)(lost + d.records_lost - before_tail),
	    (unsigned long long)not_written);
	if (!not_written)
		return 0;
	/* A partial dump is no success: the answer says what is missing. */
	ANS("message=dump %u into %s is partial: %llu of %llu records could not be written (%s); %s\n",
	    n, d.path, (unsigned long long)not_written,
	    (unsigned long long)(pre_records + copied + unwritten + tail_records),
	    d.error ? strerror(d.error) : "compression failed",
	    d.records_lost > before_tail ? "the file ends early, without its last chunk"
					: "the file counts them as lost");
	return -1;
}

/* On the flusher: the dump a signal, an NVTX name or a CUDA error asked for. */
static void triggered_dump(void)
{
	static char ans[GP_CONTROL_MSG_MAX];
	int trigger = atomic_exchange(&dump_trigger, 0), detail = atomic_load(&dump_detail);

	if (!trigger)
		return;
	/* A program that fails over and over must not fill the disk with dumps. */
	if (trigger != GP_DUMP_SIGNAL && atomic_fetch_add(&auto_dumps, 1) >= GP_AUTO_DUMPS) {
		if (atomic_load(&auto_dumps) == GP_AUTO_DUMPS + 1)
			gp_log("flight recorder: %d automatic dumps made, no more (gpuprof dump and the dump signal still work)",
			       GP_AUTO_DUMPS);
		return;
	}
	ans[0] = 0;
	do_dump(trigger, detail, "", 0, ans, sizeof(ans));
}

/* ---- windows: carried out on the flusher ---- */

/*
 * Gives up a window's file that still waits for GPU work (the process had
 * no CUDA context when the window opened): no file, dormant again.
 * Returns 1 when there was one.  On the flusher.
 */
static int drop_pending(void)
{
	int was;

	pthread_mutex_lock(&open_lock);
	was = atomic_exchange(&file_pending, 0);
	if (was) {
		atomic_store(&gp_rec.state, GP_DORMANT);
		pending_tmpl[0] = 0;
	}
	pthread_mutex_unlock(&open_lock);
	return was;
}

static int window_start(const char *output, uint64_t duration_ms, char *ans, size_t anssz)
{
	char why[GP_PATH_MAX + 200];
	int uses_n = 0;
	char tmp[GP_PATH_MAX];

	if (gp_rec.cfg.flight_bytes) {
		ANS("message=this process runs a flight recorder: use gpuprof dump\n");
		return -1;
	}
	if (atomic_load(&window_open)) {
		ANS("message=already tracing into %s\n", gp_rec.file.path);
		return -1;
	}
	/* The last sampled window's file, in its grace period, is closed first. */
	if (sample_close_at)
		sample_finish(1);
	if (output[0] && atomic_load(&gp_rec.state) == GP_ACTIVE && !drop_pending())
		close_file(trace_now(), 0);
	if (atomic_load(&gp_rec.state) == GP_DORMANT) {
		/* The first window: the sources attach now (CUPTI, after cuInit). */
		if (enable_sources(why, sizeof(why)) < 0) {
			ANS("message=%s\n", why);
			gp_log("cannot start tracing: %s", why);
			return -1;
		}
		/* CUPTI's device and context records, for the file's preamble. */
		flush_sources(0);
		if (gp_control_cuda_context() == 0) {
			/* No CUDA context (a launcher): the file waits for GPU work, as at --start=now. */
			snprintf(pending_tmpl, sizeof(pending_tmpl), "%s",
				 output[0] ? output : gp_rec.cfg.output);
			emit_preamble();
			atomic_store(&file_pending, 1);
			atomic_store_explicit(&gp_rec.state, GP_ACTIVE, memory_order_release);
		} else if (open_file(output[0] ? output : gp_rec.cfg.output, why, sizeof(why)) < 0) {
			ANS("message=%s\n", why);
			return -1;
		}
	} else if (atomic_load(&gp_rec.state) != GP_ACTIVE) {
		ANS("message=the trace has ended\n");
		return -1;
	}
	gp_config_expand(gp_rec.cfg.output, gp_rec.pid, 1, tmp, sizeof(tmp), &uses_n);
	window_own_file = output[0] || uses_n;
	/*
	 * The window starts once tracing is on: the sources tell the work
	 * that began while it was being turned on (before the start) from
	 * what began after (source.h, window).
	 */
	window_edge(GP_WINDOW_OPENING, 0);
	if (set_tracing(1, why, sizeof(why)) < 0) {
		set_tracing(0, why + strlen(why), sizeof(why) - strlen(why));
		ANS("message=%s\n", why);
		if (!drop_pending() && window_own_file)
			close_file(trace_now(), 0);
		return -1;
	}
	window_t0 = trace_now();
	window_start_mono = gp_now_monotonic();
	window_deadline = duration_ms ? window_start_mono + duration_ms * 1000000ull : 0;
	window_edge(GP_WINDOW_OPEN, window_t0);
	atomic_store(&window_open, 1);
	atomic_fetch_add(&windows, 1);
	if (atomic_load(&file_pending)) {
		gp_debug("window %u opened; no CUDA context yet: the file waits for GPU work",
			 atomic_load(&windows));
		ANS("window=%u\ncuda_context=no\n", atomic_load(&windows));
		return 0;
	}
	gp_debug("window %u opened into %s", atomic_load(&windows), gp_rec.file.path);
	ANS("file=%s\nwindow=%u\n", gp_rec.file.path, atomic_load(&windows));
	return 0;
}

/*
 * Flusher: the window's end taken while tracing is still on, then tracing
 * off, what the sources hold drained, the window's record and losses
 * written; *t the trace time of its end.  Work that began before the end
 * is in the window, work that began at or after it is not, however long
 * turning tracing off takes (source.h, window).  Returns whether the file
 * is still pending (no GPU work yet).
 */
static int window_close(uint64_t *t)
{
	char why[256];
	int pending;

	window_edge(GP_WINDOW_CLOSING, 0);
	*t = trace_now();
	window_edge(GP_WINDOW_CLOSE, *t);
	set_tracing(0, why, sizeof(why));
	flush_sources(0);
	gp_ring_lock(&gp_rec.ring);
	pending = atomic_load(&file_pending);
	drain_sources(*t, 0);
	emit_window(*t);
	gp_emit_lost(*t);
	/* Without a file nobody empties the ring: keep filling the open chunk. */
	if (!pending)
		gp_ring_seal(&gp_rec.ring, 0);
	gp_ring_unlock(&gp_rec.ring);
	atomic_store(&window_open, 0);
	return pending;
}

static void window_stop_now(char *ans, size_t anssz)
{
	uint64_t t;
	int pending = window_close(&t);

	if (pending)
		ANS("window=%u\n", atomic_load(&windows));
	else
		ANS("file=%s\nwindow=%u\n", gp_rec.file.path, atomic_load(&windows));
	gp_debug("window %u closed", atomic_load(&windows));
	/* A window of its own that saw no GPU work leaves no file. */
	if (window_own_file && !drop_pending()) {
		close_file(t, 0);
		idle_sources();
	}
}

static int window_stop(char *ans, size_t anssz)
{
	if (gp_rec.cfg.flight_bytes) {
		ANS("message=this process runs a flight recorder: use gpuprof dump\n");
		return -1;
	}
	if (!atomic_load(&window_open)) {
		ANS("message=not tracing\n");
		return -1;
	}
	if (sample_open) {
		ANS("file=%s\nwindow=%u\n", gp_rec.file.path, atomic_load(&windows));
		sample_stop();
		return 0;
	}
	window_stop_now(ans, anssz);
	return 0;
}

/* ---- sampled windows: on the flusher (sample_finish(0) also on the exit path) ---- */

/* Opens the next sampled window, unless another window is open. */
static void sample_begin(void)
{
	static char ans[GP_CONTROL_MSG_MAX], tmpl[GP_PATH_MAX];
	size_t n = 0;
	int state = atomic_load(&gp_rec.state);

	if (atomic_load(&window_open) || (state != GP_ACTIVE && state != GP_DORMANT))
		return;
	/* The spool's name as a template: its '%' doubled. */
	for (const char *p = gp_rec.cfg.spool; *p && n + 2 < sizeof(tmpl); p++) {
		if (*p == '%')
			tmpl[n++] = '%';
		tmpl[n++] = *p;
	}
	tmpl[n] = 0;
	if ((size_t)snprintf(tmpl + n, sizeof(tmpl) - n, "/.%%h-%%p-w%06u.gpuprof",
			     sample_seq + 1) >= sizeof(tmpl) - n) {
		gp_log("the spool's name is too long: not sampling");
		sample_next = 0;
		return;
	}
	ans[0] = 0;
	if (window_start(tmpl, gp_rec.cfg.sample_window_ms, ans, sizeof(ans)) < 0) {
		gp_debug("sampled window not opened: %s", ans);
		return;
	}
	sample_seq++;
	sample_open = 1;
}

/* Ends the sampled window now; its file closes after the grace period. */
static void sample_stop(void)
{
	uint64_t grace = gp_rec.cfg.flush_ms * 2000000ull, t;

	if (grace < 200000000ull)
		grace = 200000000ull;
	if (grace > 10000000000ull)
		grace = 10000000000ull;
	window_close(&t);
	sample_open = 0;
	gp_debug("sampled window %u closed", atomic_load(&windows));
	/* No GPU work in it (no CUDA context yet): no file. */
	if (drop_pending())
		return;
	sample_close_at = gp_now_monotonic() + grace;
}

struct spool_ent {
	char name[256];
	uint64_t mtime, size;
	int partial;               /* a window still being written (".NAME") */
};

/* Oldest first; partial files last (they are never removed). */
static int cmp_spool(const void *pa, const void *pb)
{
	const struct spool_ent *a = pa, *b = pb;

	if (a->partial != b->partial)
		return a->partial - b->partial;
	return a->mtime < b->mtime ? -1 : a->mtime > b->mtime;
}

/* Removes the oldest complete windows until the spool holds at most spool_max bytes. */
static void spool_rotate(void)
{
	static struct spool_ent ents[1024];
	DIR *d = opendir(gp_rec.cfg.spool);
	struct dirent *de;
	uint64_t total = 0;
	size_t n = 0, i;

	if (!d)
		return;
	while ((de = readdir(d)) && n < sizeof(ents) / sizeof(ents[0])) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (len <= 8 || len >= sizeof(ents[0].name) || strcmp(de->d_name + len - 8, ".gpuprof") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		memcpy(ents[n].name, de->d_name, len + 1);
		ents[n].mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
		ents[n].size = (uint64_t)st.st_blocks * 512u > (uint64_t)st.st_size ?
			       (uint64_t)st.st_blocks * 512u : (uint64_t)st.st_size;
		ents[n].partial = de->d_name[0] == '.';
		total += ents[n].size;
		n++;
	}
	qsort(ents, n, sizeof(ents[0]), cmp_spool);
	for (i = 0; i < n && total > gp_rec.cfg.spool_max && !ents[i].partial; i++) {
		if (unlinkat(dirfd(d), ents[i].name, 0) == 0) {
			total -= ents[i].size;
			gp_debug("spool: removed %s (the spool holds more than %llu bytes)", ents[i].name,
				 (unsigned long long)gp_rec.cfg.spool_max);
		}
	}
	closedir(d);
}

/*
 * Closes the sampled window's file, gives it its final name and (rotate)
 * makes room in the spool.  On the flusher, or on the exit path (rotate 0).
 */
static void sample_finish(int rotate)
{
	static char from[GP_PATH_MAX], to[GP_PATH_MAX];
	const char *base;

	sample_close_at = 0;
	sample_open = 0;
	snprintf(from, sizeof(from), "%s", gp_rec.file.path);
	close_file(trace_now(), !rotate);
	base = strrchr(from, '/');
	if (base && base[1] == '.' && (size_t)(base - from) + strlen(base) < sizeof(to)) {
		memcpy(to, from, (size_t)(base - from) + 1);
		snprintf(to + (base - from) + 1, sizeof(to) - (size_t)(base - from) - 1, "%s", base + 2);
		if (rename(from, to) < 0)
			gp_log("cannot rename %s: %s", from, strerror(errno));
	}
	if (rotate) {
		spool_rotate();
		idle_sources();
	}
}

/* On the flusher: carries out the control thread's request, if any. */
static void serve_request(void)
{
	static char ans[sizeof(mbox.ans)];
	static char output[GP_PATH_MAX];
	uint64_t serial, duration;
	int op, rc;

	pthread_mutex_lock(&mbox.lock);
	op = mbox.op;
	serial = mbox.serial;
	duration = mbox.duration_ms;
	memcpy(output, mbox.output, sizeof(output));
	mbox.op = OP_NONE;
	pthread_mutex_unlock(&mbox.lock);
	if (op == OP_NONE)
		return;
	ans[0] = 0;
	if (op == OP_START)
		rc = window_start(output, duration, ans, sizeof(ans));
	else if (op == OP_STOP)
		rc = window_stop(ans, sizeof(ans));
	else
		rc = do_dump(GP_DUMP_REQUEST, 0, output, 0, ans, sizeof(ans));
	pthread_mutex_lock(&mbox.lock);
	if (serial == mbox.serial) {
		mbox.rc = rc;
		memcpy(mbox.ans, ans, sizeof(ans));
		mbox.done_serial = serial;
		pthread_cond_broadcast(&mbox.done);
	}
	pthread_mutex_unlock(&mbox.lock);
}

/* On the control thread: hands op to the flusher and waits for its answer. */
static int ask_flusher(int op, uint64_t duration_ms, const char *output, char *ans, size_t anssz)
{
	struct timespec ts;
	uint64_t serial;
	int rc = -1, err = 0;

	pthread_mutex_lock(&mbox.lock);
	serial = ++mbox.serial;
	mbox.op = op;
	mbox.duration_ms = duration_ms;
	snprintf(mbox.output, sizeof(mbox.output), "%s", output);
	pthread_mutex_unlock(&mbox.lock);
	wake_flusher();
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += GP_REQUEST_WAIT_MS / 1000;
	pthread_mutex_lock(&mbox.lock);
	while (mbox.done_serial != serial && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&mbox.done, &mbox.lock, &ts);
	if (mbox.done_serial == serial) {
		rc = mbox.rc;
		snprintf(ans, anssz, "%s", mbox.ans);
	} else {
		if (mbox.op == op)
			mbox.op = OP_NONE;
		snprintf(ans, anssz, "message=the recorder did not answer in %d s\n",
			 GP_REQUEST_WAIT_MS / 1000);
	}
	pthread_mutex_unlock(&mbox.lock);
	return rc;
}

static const char *state_name(void)
{
	switch (atomic_load(&gp_rec.state)) {
	case GP_DORMANT:
		return "dormant";
	case GP_ACTIVE:
		if (gp_rec.cfg.flight_bytes)
			return "flight";
		return atomic_load(&window_open) || !gp_rec.cfg.control ? "tracing" : "idle";
	case GP_STOPPING:
		return "stopping";
	case GP_STOPPED:
		return "stopped";
	default:
		return "off";
	}
}

static void status(char *ans, size_t anssz)
{
	uint64_t lost = 0;

	for (int c = 1; c < GP_LOST_CAUSE_COUNT; c++)
		lost += atomic_load(&gp_rec.lost[c]) - __atomic_load_n(&gp_rec.lost_base[c], __ATOMIC_RELAXED);
	ANS("pid=%d\nstate=%s\nstart=%s\n", gp_rec.pid, state_name(),
	    gp_rec.cfg.dormant ? "dormant" : "now");
	pthread_mutex_lock(&info_lock);
	if (info_path[0])
		ANS("file=%s\n", info_path);
	pthread_mutex_unlock(&info_lock);
	ANS("records=%" PRIu64 "\nlost=%" PRIu64 "\nwindows=%u\n",
	    __atomic_load_n(&gp_rec.records, __ATOMIC_RELAXED), lost, atomic_load(&windows));
	if (atomic_load(&window_open))
		ANS("window_ms=%llu\n", (unsigned long long)
		    ((gp_now_monotonic() - __atomic_load_n(&window_start_mono, __ATOMIC_RELAXED)) /
			     1000000ull));
	ANS("flush_ms=%u\n", gp_rec.cfg.flush_ms);
	if (gp_rec.cfg.sample_period_ms)
		ANS("sample_window_ms=%u\nsample_period_ms=%u\nspool=%s\n", gp_rec.cfg.sample_window_ms,
		    gp_rec.cfg.sample_period_ms, gp_rec.cfg.spool);
	if (gp_rec.cfg.flight_bytes) {
		struct gp_flight_view v;

		pthread_mutex_lock(&flight.lock);
		ANS("flight_size=%llu\nflight_used=%llu\nflight_chunks=%u\nflight_records=%llu\n",
		    (unsigned long long)flight.size, (unsigned long long)flight.used, flight.count,
		    (unsigned long long)flight.records);
		pthread_mutex_unlock(&flight.lock);
		gp_flight_view(&flight, &v);
		ANS("flight_dropped_records=%llu\ndumps=%u\n",
		    (unsigned long long)v.dropped_records, atomic_load(&dumps));
	}
}

/* The control thread's handler (ctlserver.h). */
static int handle_request(const char *verb, const char *msg, char *ans, size_t anssz)
{
	char val[GP_PATH_MAX];
	unsigned long long duration = 0;

	if (!strcmp(verb, "status")) {
		status(ans, anssz);
		return 0;
	}
	if (!strcmp(verb, "start")) {
		if (gp_control_duration(msg, &duration) < 0) {
			ANS("message=bad duration_ms (milliseconds, at most %llu)\n",
			    GP_CONTROL_DURATION_MAX_MS);
			return -1;
		}
		gp_control_get(msg, "output", val, sizeof(val));
		if (val[0] && val[0] != '/') {
			ANS("message=output must be an absolute path\n");
			return -1;
		}
		return ask_flusher(OP_START, duration, val, ans, anssz);
	}
	if (!strcmp(verb, "stop"))
		return ask_flusher(OP_STOP, 0, "", ans, anssz);
	if (!strcmp(verb, "dump")) {
		if (!gp_rec.cfg.flight_bytes) {
			ANS("message=this process has no flight recorder (gpuprof run --flight-recorder=SIZE)\n");
			return -1;
		}
		gp_control_get(msg, "output", val, sizeof(val));
		if (val[0] && val[0] != '/') {
			ANS("message=output must be an absolute path\n");
			return -1;
		}
		return ask_flusher(OP_DUMP, 0, val, ans, anssz);
	}
	ANS("message=unknown request '%s'\n", verb);
	return -1;
}

static void give_up(const char *why)
{
	while (nattached > 0)
		if (sources()[--nattached]->detach)
			sources()[nattached]->detach();
	gp_log("%s; the program runs untraced", why);
	atomic_store(&gp_rec.state, GP_OFF);
}

static int start(void)
{
	char why[GP_PATH_MAX + 200];
	int err, on_demand = 0;

	gp_rec.cfg = *gp_config_get();
	if (gp_rec.cfg.disabled || atomic_load(&gp_rec.disabled))
		return -1;
	gp_rec.pid = (int)getpid();
	for (nattached = 0; sources()[nattached]; nattached++) {
		if (sources()[nattached]->attach(&gp_rec.cfg, &gp_rec.cupti_version, why, sizeof(why)) < 0) {
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
	if (gp_rec.cfg.flight_bytes && gp_flight_init(&flight, gp_rec.cfg.flight_bytes)) {
		give_up("out of memory for the flight recorder");
		return -1;
	}
	for (int i = 0; sources()[i]; i++)
		on_demand |= sources()[i]->file_on_demand;
	/* A flight recorder or a controlled run has its own idea of files. */
	on_demand = on_demand && !gp_rec.cfg.flight_bytes && !gp_rec.cfg.control;
	if (gp_rec.cfg.dormant) {
		atomic_store_explicit(&gp_rec.state, GP_DORMANT, memory_order_release);
	} else if (on_demand) {
		emit_preamble();
		atomic_store(&file_pending, 1);
		atomic_store_explicit(&gp_rec.state, GP_ACTIVE, memory_order_release);
	} else if (open_file(gp_rec.cfg.output, why, sizeof(why)) < 0) {
		give_up(why);
		return -1;
	}
	/* Dormant: nothing more until the first window (window_start). */
	if (!gp_rec.cfg.dormant && enable_sources(why, sizeof(why)) < 0)
		goto fail;
	if (!gp_rec.cfg.dormant) {
		window_t0 = trace_now();
		window_start_mono = gp_now_monotonic();
		if (set_tracing(1, why, sizeof(why)) < 0)
			goto fail;
		/* Under control, the run so far is the first window. */
		if (gp_rec.cfg.control) {
			char tmp[GP_PATH_MAX];
			int uses_n = 0;

			gp_config_expand(gp_rec.cfg.output, gp_rec.pid, 1, tmp, sizeof(tmp), &uses_n);
			window_own_file = uses_n;
			atomic_store(&window_open, 1);
			atomic_store(&windows, 1);
		}
	}

	if (gp_rec.cfg.sample_period_ms) {
		uint64_t r = 0, period = gp_rec.cfg.sample_period_ms * 1000000ull;

		/* No fleet-wide bursts: each process starts at its own point of the period. */
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = gp_now_monotonic() * 0x9e3779b97f4a7c15ull ^ (uint64_t)gp_rec.pid;
		sample_next = gp_now_monotonic() + r % period + 1;
	}
	start_flusher();
	/*
	 * The exit handler: registered here, inside cuInit, so a process that
	 * only initializes CUDA (a launcher asking for the device count) still
	 * finishes its trace.  It makes no CUDA call, only CUPTI's flush.
	 */
	atexit(at_exit);
	if (flusher_started) {
		const struct gp_signal_ops sops = {
			.request_finish = request_finish,
			.finished = is_finished,
			.owner = is_owner,
		};

		gp_signals_install(&sops, GP_FINISH_WAIT_MS);
		if (gp_rec.cfg.dump_signal &&
		    gp_signals_install_dump(gp_rec.cfg.dump_signal, on_dump_signal) < 0)
			gp_log("the program handles signal %d itself: it does not dump the flight recorder",
			       gp_rec.cfg.dump_signal);
		if (gp_rec.cfg.control)
			gp_control_listen(&gp_rec.cfg, handle_request);
	} else if (gp_rec.cfg.control) {
		gp_log("cannot start the flusher thread; gpuprof start/stop cannot reach this process");
	}
	return 0;

fail:
	if (atomic_load(&gp_rec.state) == GP_ACTIVE && !atomic_load(&file_pending)) {
		atomic_store(&gp_rec.state, GP_STOPPING);
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

int gp_recorder_tracing(void)
{
	return atomic_load(&gp_rec.state) == GP_ACTIVE &&
	       (!gp_rec.cfg.control || atomic_load(&window_open));
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
	gp_control_forked();
	flusher_started = 0;
	/* Nothing to wake in the child. */
	atomic_store(&wake_word, 0);
}
