/*
 * base/xsort: records ordered by key in bounded memory, equal keys in the
 * order added, through runs spilled to a temporary file and merged (runs
 * in order already among them), every byte of each record back as added
 * (runs spilled packed, or whole for a size not a multiple of 8), in
 * single records or in spans (ga_xsort_next_n); the
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
	uint32_t pad[2]; /* made from seq: from nothing to all 64 bits */
};

/* A record of 20 bytes: not packed. */
struct rec20 {
	uint32_t key[2]; /* the 64-bit key, little-endian as the sort reads it */
	uint32_t seq, a, b;
};

static void fill_pad(struct rec *w)
{
	uint64_t v = w->seq % 5 == 0 ? 0 : w->seq * 0x9e3779b97f4a7c15ull >> (w->seq % 64);

	memcpy(w->pad, &v, 8);
}

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
static void order_how(size_t n, size_t cap, uint64_t spread, int alt, int spans,
		      const char *dir)
{
	struct ga_xsort x;
	uint64_t s = 88172645463325252ull ^ n ^ cap, prev_key = 0, prev_seq = 0, got = 0;
	int bad = 0, badpad = 0, files_mid = 0;
	const struct rec *r = NULL;
	size_t span = 0;

	ga_xsort_init(&x, sizeof(struct rec), cap);
	for (size_t i = 0; i < n; i++) {
		struct rec *w = ga_xsort_slot(&x);

		if (!w) {
			bad = 1;
			break;
		}
		w->key = i / 4 + (alt && i / cap % 2 == 0 ? 0 : rnd(&s) % spread);
		w->seq = i;
		fill_pad(w);
		if (i == n / 2)
			files_mid = entries(dir);
	}
	CHECKF(!bad && ga_xsort_done(&x) == 0, "%s", x.err);
	CHECKF(files_mid == 0, "%d files left in $TMPDIR while spilling", files_mid);
	for (;;) {
		struct rec want;

		if (!span && !(r = spans ? ga_xsort_next_n(&x, &span) : ga_xsort_next(&x)))
			break;
		if (spans && !span--) {
			bad = 1;
			break;
		}
		if (got && (r->key < prev_key || (r->key == prev_key && r->seq <= prev_seq)))
			bad = 1;
		want = *r;
		fill_pad(&want);
		badpad |= memcmp(&want, r, sizeof(want)) != 0;
		prev_key = r->key;
		prev_seq = r->seq;
		got++;
		r++;
	}
	CHECKF(!bad && !badpad && got == n && !x.err[0], "n %zu cap %zu%s: %llu records back, %s%s",
	       n, cap, spans ? " spans" : "", (unsigned long long)got,
	       bad ? "out of order" : "in order", badpad ? ", bytes changed" : "");
	CHECKF(x.nruns == (n > cap ? (n + cap - 1) / cap : 0), "%zu runs spilled", x.nruns);
	/* Added in order: the runs are read one after another through one block. */
	CHECKF(spread != 1 || alt || n <= cap || x.in_sequence, "n %zu cap %zu: runs in order merged",
	       n, cap);
	CHECKF(x.in_sequence || !x.nruns || x.apart, "n %zu cap %zu: runs apart read in sequence", n,
	       cap);
	ga_xsort_free(&x);
}

static void order_alt(size_t n, size_t cap, uint64_t spread, int alt, const char *dir)
{
	order_how(n, cap, spread, alt, 0, dir);
	order_how(n, cap, spread, alt, 1, dir);
}

static void order(size_t n, size_t cap, uint64_t spread, const char *dir)
{
	order_alt(n, cap, spread, 0, dir);
}

/*
 * Records of words 8-byte words (the key, the order added, the others
 * from nothing to all 64 bits): packed up to 15 words (a length nibble
 * each), whole past that; every byte back, in order.
 */
static void order_wide(size_t n, size_t cap, size_t words)
{
	struct ga_xsort x;
	uint64_t s = 0x9e3779b97f4a7c15ull ^ n ^ words, got = 0, prev = 0;
	uint64_t *all = malloc((n ? n : 1) * words * 8);
	const uint64_t *r;
	int bad = !all, badbytes = 0;

	ga_xsort_init(&x, words * 8, cap);
	CHECKF(x.packed == (words <= 15), "records of %zu words packed %d", words, x.packed);
	for (size_t i = 0; i < n && !bad; i++) {
		uint64_t *o = ga_xsort_slot(&x);

		if (!o) {
			bad = 1;
			break;
		}
		o[0] = i / 3 + rnd(&s) % 40;
		o[1] = i;
		for (size_t j = 2; j < words; j++)
			o[j] = (i + j) % 7 == 0 ? 0 : rnd(&s) >> ((i * j) % 64);
		memcpy(all + i * words, o, words * 8);
	}
	CHECKF(!bad && ga_xsort_done(&x) == 0, "%s", x.err);
	while (!bad && (r = ga_xsort_next(&x))) {
		if (r[1] >= n || (got && r[0] < prev)) {
			bad = 1;
			break;
		}
		badbytes |= memcmp(r, all + r[1] * words, words * 8) != 0;
		prev = r[0];
		got++;
	}
	CHECKF(!bad && !badbytes && got == n && !x.err[0], "%zu words, n %zu cap %zu: %llu back%s%s",
	       words, n, cap, (unsigned long long)got, bad ? ", out of order" : "",
	       badbytes ? ", bytes changed" : "");
	ga_xsort_free(&x);
	free(all);
}

/* Records of a size that is not a multiple of 8, spilled whole: every byte back, in order. */
static void order_odd(size_t n, size_t cap)
{
	struct ga_xsort x;
	uint64_t s = 0x2545f4914f6cdd1dull ^ n, prev = 0, got = 0;
	const struct rec20 *r;
	int bad = 0;

	ga_xsort_init(&x, sizeof(struct rec20), cap);
	CHECKF(!x.packed, "records of %zu bytes packed", sizeof(struct rec20));
	for (size_t i = 0; i < n; i++) {
		struct rec20 *w = ga_xsort_slot(&x);

		if (!w) {
			bad = 1;
			break;
		}
		uint64_t k = i + rnd(&s) % 64;

		memcpy(w->key, &k, 8);
		w->seq = (uint32_t)i;
		w->a = (uint32_t)(k * 2654435761u);
		w->b = ~w->seq;
	}
	CHECKF(!bad && ga_xsort_done(&x) == 0, "%s", x.err);
	while ((r = ga_xsort_next(&x))) {
		uint64_t k;

		memcpy(&k, r->key, 8);
		bad |= (got && k < prev) || r->a != (uint32_t)(k * 2654435761u) || r->b != ~r->seq;
		prev = k;
		got++;
	}
	CHECKF(!bad && got == n && x.nruns > 0, "20-byte records: %llu back of %zu, %s",
	       (unsigned long long)got, n, bad ? "changed or out of order" : "in order");
	ga_xsort_free(&x);
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
	order(100000, 100000 / 3, 1, dir); /* keys rising by 0 or 1 */
	/* Wider records (a CSV row's 9 words): packed up to 15 words. */
	order_wide(50000, 3000, 9);
	order_wide(50000, 3000, 15);
	order_wide(20000, 3000, 16);
	order_odd(50000, 3000);
	tap_end();

	tap_begin("xsort: nothing left in $TMPDIR");
	CHECKF(entries(dir) == 0, "%d entries in %s", entries(dir), dir);
	tap_end();

	tap_begin("xsort: a spilled frame damaged on disk is an error, not records");
	{
		uint64_t got = 0;
		unsigned char junk[4096];

		ga_xsort_init(&x, sizeof(struct rec), 4096);
		for (size_t i = 0; i < 100000; i++) {
			struct rec *w = ga_xsort_slot(&x);

			if (!w)
				break;
			w->key = i;
			w->seq = i;
			fill_pad(w);
		}
		CHECKF(x.packed && ga_xsort_done(&x) == 0, "%s", x.err);
		/* Length nibbles of 9: no frame is made of them. */
		memset(junk, 0x99, sizeof(junk));
		for (uint64_t off = 0; off < x.fsize; off += sizeof(junk))
			CHECK(pwrite(x.fd1 - 1, junk, sizeof(junk), (off_t)off) == (ssize_t)sizeof(junk));
		while (ga_xsort_next(&x))
			got++;
		CHECKF(got < 100000 && strstr(x.err, "damaged"), "%llu records back, error '%s'",
		       (unsigned long long)got, x.err);
		ga_xsort_free(&x);
	}
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
