/*
 * base/xsort: records ordered by key in bounded memory, equal keys in the
 * order added, through runs spilled to a temporary file and merged (runs
 * in order already among them); the
 * file never left in $TMPDIR; a $TMPDIR that cannot hold it named in the
 * error.  Test code, runs offline only.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xsort.h"
#include "tap.h"

struct rec {
	uint64_t key;
	uint64_t seq; /* order added */
	uint32_t pad[2];
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/*
 * n records of keys in [0, spread), mostly rising (as a trace's are), cap a
 * run; alt: every other run's keys rising only (i / 4, in order already,
 * which the sort keeps as they are), the others' spread.
 */
static void order_alt(size_t n, size_t cap, uint64_t spread, int alt, const char *dir)
{
	struct ga_xsort x;
	uint64_t s = 88172645463325252ull ^ n ^ cap, prev_key = 0, prev_seq = 0, got = 0;
	int bad = 0, files_mid = 0;
	const struct rec *r;

	ga_xsort_init(&x, sizeof(struct rec), cap);
	for (size_t i = 0; i < n; i++) {
		struct rec *w = ga_xsort_slot(&x);

		if (!w) {
			bad = 1;
			break;
		}
		w->key = i / 4 + (alt && i / cap % 2 == 0 ? 0 : rnd(&s) % spread);
		w->seq = i;
		if (i == n / 2)
			files_mid = entries(dir);
	}
	CHECKF(!bad && ga_xsort_done(&x) == 0, "%s", x.err);
	CHECKF(files_mid == 0, "%d files left in $TMPDIR while spilling", files_mid);
	while ((r = ga_xsort_next(&x))) {
		if (got && (r->key < prev_key || (r->key == prev_key && r->seq <= prev_seq)))
			bad = 1;
		prev_key = r->key;
		prev_seq = r->seq;
		got++;
	}
	CHECKF(!bad && got == n && !x.err[0], "n %zu cap %zu: %llu records back, %s", n, cap,
	       (unsigned long long)got, bad ? "out of order" : "in order");
	CHECKF(x.nruns == (n > cap ? (n + cap - 1) / cap : 0), "%zu runs spilled", x.nruns);
	ga_xsort_free(&x);
}

static void order(size_t n, size_t cap, uint64_t spread, const char *dir)
{
	order_alt(n, cap, spread, 0, dir);
}

int main(void)
{
	char dir[] = "/tmp/gpuprof-xsort.XXXXXX";
	struct ga_xsort x;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("TMPDIR", dir, 1);

	tap_begin("xsort: in key order, equal keys as added, in memory and merged from runs");
	order(0, 16, 10, dir);
	order(1, 16, 10, dir);
	order(1000, 2000, 50, dir); /* one run: never spilled */
	order(1000, 1000, 50, dir);
	order(1001, 1000, 3, dir);      /* a run of one record */
	order(20000, 1, 1, dir);        /* every record a run of its own */
	order(300000, 4096, 1000, dir); /* several blocks per run */
	order(300000, 77777, 1u << 30, dir);
	/* Runs in order already, equal keys among them: kept, spilled and merged as they are. */
	order(1000, 2000, 1, dir);
	order(100000, 4096, 1, dir);
	order_alt(100000, 4096, 100, 1, dir);
	order_alt(100000, 5000, 1u << 20, 1, dir);
	tap_end();

	tap_begin("xsort: nothing left in $TMPDIR");
	CHECKF(entries(dir) == 0, "%d entries in %s", entries(dir), dir);
	tap_end();

	tap_begin("xsort: a $TMPDIR it cannot write in is named");
	setenv("TMPDIR", "/nonexistent/gpuprof-xsort", 1);
	ga_xsort_init(&x, sizeof(struct rec), 2);
	{
		void *a = ga_xsort_slot(&x), *b = a ? ga_xsort_slot(&x) : NULL, *c = b ? ga_xsort_slot(&x) : NULL;

		CHECKF(a && b && !c && strstr(x.err, "/nonexistent/gpuprof-xsort"), "error '%s'",
		       x.err);
	}
	ga_xsort_free(&x);
	tap_end();

	rmdir(dir);
	return tap_exit();
}
