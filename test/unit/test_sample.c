/*
 * Sampled windows (GPUPROF_SAMPLE=WINDOW/PERIOD, GPUPROF_SPOOL) with a
 * stand-in record source, no CUDA: a child process emits a kernel every
 * 2 ms while the source traces, counting them per window; the recorder
 * opens windows itself.  Checked: every window is a file of its own named
 * HOST-PID-wN.gpuprof (no partial ".NAME" left), holds one window of about
 * WINDOW and exactly the kernels launched inside it, with their times
 * inside it; windows come every PERIOD, the first within one period of
 * the start; the spool's oldest complete files go once it holds more than
 * GPUPROF_SPOOL_MAX (a partial file of another process never does); the
 * WINDOW/PERIOD parser.  The source is told each window's edges in order
 * (OPENING, tracing on, OPEN at the window's start; CLOSING, CLOSE at its
 * end, tracing off), with the times the window's capture range records,
 * and the end of each window's file flushes with GP_FLUSH_FILE, only the
 * process's end with GP_FLUSH_END.  Test code, runs offline only, needs
 * no GPU.
 */
#include "tap.h"

#include "config.h"
#include "lifecycle.h"
#include "recorder.h"
#include "source.h"

#include "model/model.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXW 64

static atomic_int tracing, window_idx;
/* What the recorder told the source, in order (flusher and exit path). */
static char events[4096];
static atomic_int nevents;
static uint64_t open_t[MAXW], close_t[MAXW];

static void event(char c)
{
	int i = atomic_fetch_add(&nevents, 1);

	if (i < (int)sizeof(events) - 1)
		events[i] = c;
}

static void fake_window(int what, uint64_t t)
{
	int w = atomic_load(&window_idx);

	event("?oOcC"[what >= 1 && what <= 4 ? what : 0]);
	if (what == GP_WINDOW_OPEN && w < MAXW)
		open_t[w] = t;
	if (what == GP_WINDOW_CLOSE && w < MAXW)
		close_t[w] = t;
}

static void fake_flush(int final)
{
	if (final)
		event(final == GP_FLUSH_END ? 'E' : final == GP_FLUSH_FILE ? 'F' :
									     '?');
}

static int fake_attach(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	(void)cfg;
	(void)why;
	(void)whysz;
	*version = 1;
	return 0;
}

static int fake_set_tracing(int on, char *why, size_t whysz)
{
	(void)why;
	(void)whysz;
	event(on ? 'T' : 't');
	if (on)
		atomic_fetch_add(&window_idx, 1);
	atomic_store(&tracing, on);
	return 0;
}

static struct gp_source fake = {
	.name = "fake",
	.attach = fake_attach,
	.set_tracing = fake_set_tracing,
	.window = fake_window,
	.flush = fake_flush,
};

const struct gp_source *const gp_sources[] = { &fake, NULL };

/* The child: kernels every 2 ms for ms milliseconds, counts per window into counts. */
static void child(const char *spool, const char *sample, const char *counts, int ms)
{
	static unsigned long n[MAXW];
	uint32_t name = 0;
	FILE *f;

	setenv("GPUPROF_SAMPLE", sample, 1);
	setenv("GPUPROF_SPOOL", spool, 1);
	setenv("GPUPROF_SPOOL_MAX", "1M", 1);
	setenv("GPUPROF_FLUSH_MS", "50", 1);
	setenv("GPUPROF_OUTPUT", "/nonexistent/never.gpuprof", 1);
	if (gp_recorder_start() < 0)
		_exit(90);
	for (int i = 0; i < ms / 2; i++) {
		struct timespec ts = { 0, 2000000 };

		gp_ring_lock(&gp_rec.ring);
		if (atomic_load(&tracing)) {
			struct gp_rec_kernel *k;

			if (!name)
				name = gp_emit_string("sampled_kernel");
			k = gp_emit(GP_REC_KERNEL, sizeof(*k));
			if (k) {
				k->start = gp_now_realtime();
				k->end = k->start + 1000;
				k->name = name;
				if (atomic_load(&window_idx) < MAXW)
					n[atomic_load(&window_idx)]++;
			}
		}
		gp_ring_unlock(&gp_rec.ring);
		nanosleep(&ts, NULL);
	}
	gp_recorder_stop();
	f = fopen(counts, "w");
	for (int i = 1; f && i < MAXW; i++)
		fprintf(f, "%lu %llu %llu\n", n[i], (unsigned long long)open_t[i],
			(unsigned long long)close_t[i]);
	if (f)
		fprintf(f, "%.*s\n", atomic_load(&nevents), events);
	if (f)
		fclose(f);
	_exit(0);
}

static void big_file(const char *dir, const char *name, size_t size, time_t age)
{
	char p[512];
	struct timespec t[2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	if (ftruncate(fd, (off_t)size) == 0) {
		char *b = calloc(1, size);

		if (b && write(fd, b, size) < 0)
			(void)0;
		free(b);
	}
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	futimens(fd, t);
	close(fd);
}

static int exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* Whether window i + 1 of prefix is in the spool. */
static int exists_next(const char *spool, const char *prefix, int i)
{
	char name[256];

	snprintf(name, sizeof(name), "%s%06d.gpuprof", prefix, i + 1);
	return exists(spool, name);
}

int main(void)
{
	char spool[64], counts[128], prefix[128], host[64], p[512];
	unsigned long want[MAXW] = { 0 };
	unsigned long long got_open[MAXW] = { 0 }, got_close[MAXW] = { 0 };
	char seq[4096] = "";
	int edges = 0;
	uint64_t w_start[MAXW] = { 0 };
	int nwin = 0, exact = 0, inside = 0, sized = 0, named = 0, partial = 0, status = 0;
	uint32_t wp = 0, ww = 0;
	pid_t pid;
	FILE *f;
	DIR *d;
	struct dirent *de;
	struct timespec t0;

	tap_begin("sample: WINDOW/PERIOD parsed, bad ones refused");
	CHECK(gp_config_parse_sample("1s/60s", &ww, &wp) == 0 && ww == 1000 && wp == 60000);
	CHECK(gp_config_parse_sample("250ms/1m", &ww, &wp) == 0 && ww == 250 && wp == 60000);
	CHECK(gp_config_parse_sample("2h/1h", &ww, &wp) < 0);
	CHECK(gp_config_parse_sample("5ms/1s", &ww, &wp) < 0);
	CHECK(gp_config_parse_sample("1s", &ww, &wp) < 0);
	CHECK(gp_config_parse_sample("1s/2d", &ww, &wp) < 0);
	CHECK(gp_config_parse_sample("1x/2s", &ww, &wp) < 0);
	CHECK(gp_config_parse_sample("1s/25h", &ww, &wp) < 0);
	tap_end();

	snprintf(spool, sizeof(spool), "/tmp/gp-sample-XXXXXX");
	if (!mkdtemp(spool))
		return 1;
	snprintf(counts, sizeof(counts), "%s.counts", spool);
	/* Old windows of another process: 3 x 400 KiB, and a partial one. */
	big_file(spool, "old-1-w000001.gpuprof", 400 << 10, 300);
	big_file(spool, "old-1-w000002.gpuprof", 400 << 10, 200);
	big_file(spool, "old-1-w000003.gpuprof", 400 << 10, 100);
	big_file(spool, ".old-1-w000004.gpuprof", 100 << 10, 400);
	clock_gettime(CLOCK_REALTIME, &t0);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child(spool, "100ms/400ms", counts, 2200);
	waitpid(pid, &status, 0);
	TAP_CHECK("sample: the program ran and ended normally", WIFEXITED(status) &&
		  WEXITSTATUS(status) == 0, "status %#x", status);
	f = fopen(counts, "r");
	for (int i = 1; f && i < MAXW &&
			fscanf(f, "%lu %llu %llu", &want[i], &got_open[i], &got_close[i]) == 3;
	     i++)
		;
	if (f && fscanf(f, "%4095s", seq) != 1)
		seq[0] = 0;
	if (f)
		fclose(f);
	unlink(counts);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	snprintf(prefix, sizeof(prefix), "%s-%d-w", host, (int)pid);
	for (int i = 1; i < MAXW; i++) {
		struct ga_model m;
		char name[256];

		snprintf(name, sizeof(name), "%s%06d.gpuprof", prefix, i);
		if (!exists(spool, name))
			break;
		nwin++;
		snprintf(p, sizeof(p), "%s/%s", spool, name);
		if (ga_model_init(&m) || ga_model_add_file(&m, p) != GA_READ_OK || ga_model_finish(&m)) {
			ga_model_free(&m);
			continue;
		}
		if (m.nwindows == 1) {
			uint64_t len = m.windows[0].end - m.windows[0].start;

			/* Cut by the process's end: the last window, with no CLOSE, ends at the exit. */
			int cut = !got_close[i] && !exists_next(spool, prefix, i);

			w_start[i] = m.windows[0].start;
			edges += m.windows[0].start == got_open[i] &&
				 (cut ? m.windows[0].end > got_open[i] : m.windows[0].end == got_close[i]);
			sized += (len >= 95000000ull || cut) && len < 250000000ull;
			if (cut)
				fprintf(stderr, "# window %d cut by the exit after %llu ms\n", i,
					(unsigned long long)(len / 1000000ull));
			inside += m.counts[GA_ACT_KERNEL] == 0 ||
				  (m.first_start >= m.windows[0].start && m.first_start <= m.windows[0].end);
		}
		/* A last window the exit cut right after it opened may have had no launch. */
		if (m.counts[GA_ACT_KERNEL] == want[i] &&
		    (want[i] > 0 || (!got_close[i] && !exists_next(spool, prefix, i))))
			exact++;
		else
			fprintf(stderr, "# window %d: %llu kernels, %lu launched in it\n", i,
				(unsigned long long)m.counts[GA_ACT_KERNEL], want[i]);
		ga_model_free(&m);
	}
	d = opendir(spool);
	while (d && (de = readdir(d))) {
		named += !strncmp(de->d_name, prefix, strlen(prefix));
		partial += de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			   strcmp(de->d_name, ".old-1-w000004.gpuprof");
	}
	if (d)
		closedir(d);
	tap_begin("sample: a file per window, named HOST-PID-wN, none left partial");
	CHECKF(nwin >= 4 && nwin <= 7 && named == nwin && partial == 0,
	       "%d windows, %d named, %d partial", nwin, named, partial);
	tap_end();
	tap_begin("sample: each window holds exactly the kernels launched in it, inside its span");
	CHECKF(exact == nwin && inside == nwin, "%d of %d exact, %d inside", exact, nwin, inside);
	tap_end();
	tap_begin("sample: the source is told each window's edges, at its capture range's times");
	CHECKF(edges == nwin, "%d of %d windows at the times told", edges, nwin);
	{
		/*
		 * oTOcCt per window, F when its file ends; E once, last, when a
		 * file is open at the exit (a window cut by it: oTOE; one in its
		 * grace period: E), none when the exit finds the recorder dormant.
		 */
		const char *q = seq;
		int closed = 0, files = 0, bad = 0, cut = 0;

		while (*q && !bad) {
			if (!strncmp(q, "oTOcCt", 6)) {
				closed++;
				q += 6;
			} else if (*q == 'F') {
				files++;
				q++;
			} else if (!strcmp(q, "oTOE") || !strcmp(q, "E")) {
				cut = q[0] == 'o';
				break;
			} else {
				bad = 1;
			}
		}
		CHECKF(!bad && closed + cut == nwin && files >= closed - 1 && files <= closed,
		       "events %s: %d closed, %d files ended, %d windows", seq, closed, files, nwin);
	}
	tap_end();
	tap_begin("sample: windows of WINDOW every PERIOD, the first within a period of the start");
	CHECKF(sized == nwin, "%d of %d about 100 ms", sized, nwin);
	for (int i = 2; i <= nwin; i++) {
		uint64_t gap = w_start[i] - w_start[i - 1];

		CHECKF(gap > 350000000ull && gap < 600000000ull, "window %d %llu ns after the last", i,
		       (unsigned long long)gap);
	}
	CHECKF(nwin && w_start[1] - ((uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec) <
			       500000000ull, "first window %llu ns after the start",
	       (unsigned long long)(w_start[1] - ((uint64_t)t0.tv_sec * 1000000000ull +
						  (uint64_t)t0.tv_nsec)));
	tap_end();
	tap_begin("sample: the spool's oldest complete files go above GPUPROF_SPOOL_MAX");
	CHECKF(!exists(spool, "old-1-w000001.gpuprof") && exists(spool, "old-1-w000002.gpuprof") &&
		       exists(spool, "old-1-w000003.gpuprof") && exists(spool, ".old-1-w000004.gpuprof"),
	       "old files: %d %d %d %d", exists(spool, "old-1-w000001.gpuprof"),
	       exists(spool, "old-1-w000002.gpuprof"), exists(spool, "old-1-w000003.gpuprof"),
	       exists(spool, ".old-1-w000004.gpuprof"));
	tap_end();
	d = opendir(spool);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", spool, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(spool);
	return tap_done();
}
