/*
 * Small containers and text helpers for the offline analyzer: growable
 * arrays, a hash map with 128-bit keys, a byte buffer, number formatting and
 * JSON/CSV string quoting.  Runs offline only, never inside a traced program.
 *
 * Allocation failures are returned, not fatal: only subcommand code exits.
 */
#ifndef GA_ANALYZER_UTIL_H
#define GA_ANALYZER_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int ga_util_grow_slow(void *pptr, size_t *cap, size_t need, size_t elsize);

/*
 * Make room for need elements in the array *pptr of capacity *cap.
 * Returns 0, or -1 when memory runs out (the array is left as it was).
 * Inline where there is room: callers add records one at a time.
 */
static inline int ga_util_grow(void *pptr, size_t *cap, size_t need, size_t elsize)
{
	if (need <= *cap)
		return 0;
	return ga_util_grow_slow(pptr, cap, need, elsize);
}

/*
 * Whether an id a trace gives may index an array (else it goes to a hash,
 * struct ga_map): below 64 times the records or ids read so far (seen) and
 * 2^14 more.  Recorders number ids one by one, so theirs stay well below;
 * an id far beyond the others (a damaged or crafted trace) then costs what
 * it holds, not an element for each id up to it.
 */
static inline int ga_util_id_near(uint64_t id, uint64_t seen)
{
	return id < 64 * (seen + (1u << 14));
}

/* Open-addressing map from a (a, b) pair of 64-bit keys to a 32-bit value. */
struct ga_map_ent {
	uint64_t a, b;
	uint32_t val;
	uint32_t used;
};

struct ga_map {
	struct ga_map_ent *e;
	size_t cap;                /* power of two, or 0 */
	size_t n;
};

/* Returns a pointer to the value stored for (a, b), or NULL. */
uint32_t *ga_map_find(const struct ga_map *m, uint64_t a, uint64_t b);

/* to (empty, or freed first by the caller) becomes a copy of from.  0, or -1 out of memory. */
int ga_map_copy(struct ga_map *to, const struct ga_map *from);

/*
 * Find or add (a, b).  *slot receives the value's address (a new entry's
 * value is 0).  Returns 1 when added, 0 when it existed, -1 out of memory.
 */
int ga_map_insert(struct ga_map *m, uint64_t a, uint64_t b, uint32_t **slot);
/* Add (a, b), known not to be there (no lookup first): 1, or -1 out of memory. */
int ga_map_add_absent(struct ga_map *m, uint64_t a, uint64_t b, uint32_t **slot);
/* Forget (a, b) if it is there. */
void ga_map_remove(struct ga_map *m, uint64_t a, uint64_t b);
/* Forget the entry whose value v is, as ga_map_find gave it (no second lookup). */
void ga_map_remove_found(struct ga_map *m, uint32_t *v);
void ga_map_free(struct ga_map *m);

struct ga_buf {
	char *p;                   /* NUL-terminated when len > 0 */
	size_t len, cap;
};

/* Both return 0, or -1 when memory runs out. */
int ga_buf_put(struct ga_buf *b, const void *s, size_t n);
int ga_buf_printf(struct ga_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ga_buf_free(struct ga_buf *b);

/*
 * Running variance (Welford): exact enough for durations of any spread,
 * one update per value.  n is the count including x.
 */
struct ga_welford {
	double mean, m2;
};

static inline void ga_welford_add(struct ga_welford *w, uint64_t n, uint64_t x)
{
	double d = (double)x - w->mean;

	w->mean += d / (double)n;
	w->m2 += d * ((double)x - w->mean);
}

/* Sample standard deviation of n values (0 for fewer than two), rounded to ns. */
uint64_t ga_welford_stddev(const struct ga_welford *w, uint64_t n);

/*
 * Durations for people: "812 ns", "12.345 µs", "1.500 ms", "2.000 s".
 * Returns buf.
 */
const char *ga_fmt_time(char *buf, size_t n, uint64_t ns);

/* Byte counts for people: "512 B", "1.50 KiB", "3.25 GiB".  Returns buf. */
const char *ga_fmt_bytes(char *buf, size_t n, double bytes);

/*
 * Write s for a terminal: control characters (a newline inside a command
 * line, say) become '?' so that they cannot break the layout.
 */
void ga_fmt_put(FILE *f, const char *s);

/* Terminal columns taken by a UTF-8 string (one per code point). */
size_t ga_fmt_width(const char *s);

/*
 * Copy s into buf, cut to at most width columns with a trailing "…" when
 * it is longer; width 0 means no limit.  Returns buf.
 */
const char *ga_fmt_trunc(char *buf, size_t n, const char *s, size_t width);

/*
 * Append s (len bytes, any content) to b as a JSON string with quotes.
 * Invalid UTF-8 becomes U+FFFD.  Returns 0, or -1 out of memory.
 */
int ga_json_escape(struct ga_buf *b, const char *s, size_t len);

/* Append s to b as one CSV field, quoted when it needs to be. */
int ga_csv_escape(struct ga_buf *b, const char *s, size_t len);

/*
 * An unlinked temporary file in $TMPDIR (else /tmp), made as
 * gpuprof-TAG.XXXXXX (mode 0600, close-on-exec) and unlinked at once, so
 * never left behind: its descriptor, or -1 with errno set.  *dir, when
 * given, is the directory, for a message.
 */
int ga_util_tmpfd(const char *tag, const char **dir);

/* The same opened "w+" as a stream, or NULL with errno set. */
FILE *ga_util_tmpfile(const char *tag, const char **dir);

/* Writes buf[0..n) to fd, a short write continued, EINTR retried; 0 or an errno value. */
int ga_util_write_all(int fd, const void *buf, size_t n);

#endif
