/*
 * Containers and text helpers for the offline analyzer (see util.h).
 * Runs offline only.
 */
#include "base/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int ga_util_grow_slow(void *pptr, size_t *cap, size_t need, size_t elsize)
{
	void **pp = pptr;
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elsize)
		return -1;
	/*
	 * Doubling costs no resident memory: the untouched tail of a large
	 * block is never faulted in, and glibc grows such blocks with mremap.
	 */
	p = realloc(*pp, ncap * elsize);
	if (!p)
		return -1;
	*pp = p;
	*cap = ncap;
	return 0;
}

static uint64_t mix64(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull) ^ (b >> 29);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint32_t *ga_map_find(const struct ga_map *m, uint64_t a, uint64_t b)
{
	size_t i, mask;

	if (!m->cap)
		return NULL;
	mask = m->cap - 1;
	for (i = mix64(a, b) & mask;; i = (i + 1) & mask) {
		struct ga_map_ent *e = &m->e[i];

		if (!e->used)
			return NULL;
		if (e->a == a && e->b == b)
			return &e->val;
	}
}

static int map_rehash(struct ga_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i, j;
	struct ga_map_ent *ne;

	if (ncap > SIZE_MAX / sizeof(*ne))
		return -1;
	ne = calloc(ncap, sizeof(*ne));
	if (!ne)
		return -1;
	for (i = 0; i < m->cap; i++) {
		if (!m->e[i].used)
			continue;
		for (j = mix64(m->e[i].a, m->e[i].b) & (ncap - 1); ne[j].used;
		     j = (j + 1) & (ncap - 1))
			;
		ne[j] = m->e[i];
	}
	free(m->e);
	m->e = ne;
	m->cap = ncap;
	return 0;
}

int ga_map_insert(struct ga_map *m, uint64_t a, uint64_t b, uint32_t **slot)
{
	uint32_t *v = ga_map_find(m, a, b);

	if (v) {
		*slot = v;
		return 0;
	}
	return ga_map_add_absent(m, a, b, slot);
}

int ga_map_add_absent(struct ga_map *m, uint64_t a, uint64_t b, uint32_t **slot)
{
	size_t i, mask;

	/* Keep the load under 1/2 so probes stay short. */
	if ((m->n + 1) * 2 > m->cap && map_rehash(m))
		return -1;
	mask = m->cap - 1;
	for (i = mix64(a, b) & mask; m->e[i].used; i = (i + 1) & mask)
		;
	m->e[i].a = a;
	m->e[i].b = b;
	m->e[i].val = 0;
	m->e[i].used = 1;
	m->n++;
	*slot = &m->e[i].val;
	return 1;
}

void ga_map_remove(struct ga_map *m, uint64_t a, uint64_t b)
{
	uint32_t *v = ga_map_find(m, a, b);

	if (v)
		ga_map_remove_found(m, v);
}

void ga_map_remove_found(struct ga_map *m, uint32_t *v)
{
	size_t i, j, home, mask = m->cap - 1;

	i = (size_t)((struct ga_map_ent *)((char *)v - offsetof(struct ga_map_ent, val)) - m->e);
	/* Backward-shift deletion: later entries of the probe run move up so
	 * that no lookup stops early at the hole. */
	for (j = (i + 1) & mask; m->e[j].used; j = (j + 1) & mask) {
		home = mix64(m->e[j].a, m->e[j].b) & mask;
		/* Entry j may fill hole i when i lies cyclically in [home, j). */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	m->e[i].used = 0;
	m->n--;
}

int ga_map_copy(struct ga_map *to, const struct ga_map *from)
{
	*to = *from;
	if (!from->cap)
		return 0;
	if (!(to->e = malloc(from->cap * sizeof(*to->e)))) {
		memset(to, 0, sizeof(*to));
		return -1;
	}
	memcpy(to->e, from->e, from->cap * sizeof(*to->e));
	return 0;
}

void ga_map_free(struct ga_map *m)
{
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

int ga_buf_put(struct ga_buf *b, const void *s, size_t n)
{
	if (n > SIZE_MAX - b->len - 1)
		return -1;
	if (ga_util_grow(&b->p, &b->cap, b->len + n + 1, 1))
		return -1;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int ga_buf_printf(struct ga_buf *b, const char *fmt, ...)
{
	size_t room = b->cap > b->len ? b->cap - b->len : 0;
	va_list ap;
	int n;

	/* Into the room there is: most texts fit, and are formatted once. */
	va_start(ap, fmt);
	n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n >= room) {
		if (ga_util_grow(&b->p, &b->cap, b->len + (size_t)n + 1, 1)) {
			n = -1;
		} else {
			va_start(ap, fmt);
			vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
			va_end(ap);
		}
	}
	if (n < 0) {
		/* What a cut text left: the buffer's text as it was. */
		if (b->cap > b->len)
			b->p[b->len] = '\0';
		return -1;
	}
	b->len += (size_t)n;
	return 0;
}

void ga_buf_free(struct ga_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

uint64_t ga_welford_stddev(const struct ga_welford *w, uint64_t n)
{
	double v;

	if (n < 2 || w->m2 <= 0)
		return 0;
	v = sqrt(w->m2 / (double)(n - 1));
	return (uint64_t)(v + 0.5);
}

const char *ga_fmt_time(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.3f \xc2\xb5s", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
}

const char *ga_fmt_bytes(char *buf, size_t n, double bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, n, "%.0f B", bytes);
		return buf;
	}
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, "%.2f %s", bytes, unit[u]);
	return buf;
}

void ga_fmt_put(FILE *f, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			continue;
		fwrite(run, 1, (size_t)(s - run), f);
		fputc('?', f);
		run = s + 1;
	}
	fwrite(run, 1, (size_t)(s - run), f);
}

size_t ga_fmt_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

const char *ga_fmt_trunc(char *buf, size_t n, const char *s, size_t width)
{
	size_t i, cols = 0, cut = 0;

	if (!n)
		return buf;
	if (width == 0 || ga_fmt_width(s) <= width) {
		snprintf(buf, n, "%s", s);
		return buf;
	}
	/* Keep width - 1 code points, then the ellipsis takes the last column. */
	for (i = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (cols == width - 1)
				break;
			cols++;
		}
		cut = i + 1;
	}
	if (cut + 4 > n)
		cut = n > 4 ? n - 4 : 0;
	/* Never leave a partial UTF-8 sequence before the ellipsis. */
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	memcpy(buf, s, cut);
	memcpy(buf + cut, "\xe2\x80\xa6", 4);
	return buf;
}

/* Length of the valid UTF-8 sequence at s (at most len bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	unsigned c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int ga_json_escape(struct ga_buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;
	char esc[8];

	if (ga_buf_put(b, "\"", 1))
		return -1;
	while (i < len) {
		unsigned c = p[i];
		size_t n = 1;
		const char *rep = NULL;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			i++;
			run++;
			continue;
		}
		if (c >= 0x80) {
			n = utf8_len(p + i, len - i);
			if (n) {
				i += n;
				run += n;
				continue;
			}
			n = 1;
			rep = "\\ufffd";
		} else if (c == '"') {
			rep = "\\\"";
		} else if (c == '\\') {
			rep = "\\\\";
		} else if (c == '\n') {
			rep = "\\n";
		} else if (c == '\t') {
			rep = "\\t";
		} else if (c == '\r') {
			rep = "\\r";
		} else {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			rep = esc;
		}
		if (ga_buf_put(b, p + i - run, run) || ga_buf_put(b, rep, strlen(rep)))
			return -1;
		run = 0;
		i += n;
	}
	if (ga_buf_put(b, p + i - run, run) || ga_buf_put(b, "\"", 1))
		return -1;
	return 0;
}

int ga_csv_escape(struct ga_buf *b, const char *s, size_t len)
{
	size_t i, start = 0;
	int quote = len && (s[0] == ' ' || s[len - 1] == ' ');

	for (i = 0; i < len && !quote; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			quote = 1;
	if (!quote)
		return ga_buf_put(b, s, len);
	if (ga_buf_put(b, "\"", 1))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] != '"')
			continue;
		/* A quote inside a quoted field is written twice. */
		if (ga_buf_put(b, s + start, i + 1 - start))
			return -1;
		start = i;
	}
	if (ga_buf_put(b, s + start, len - start) || ga_buf_put(b, "\"", 1))
		return -1;
	return 0;
}

int ga_util_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int ga_util_tmpfd(const char *tag, const char **dir)
{
	const char *d = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!d || !*d)
		d = "/tmp";
	if (dir)
		*dir = d;
	if ((size_t)snprintf(path, sizeof(path), "%s/gpuprof-%s.XXXXXX", d, tag) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

FILE *ga_util_tmpfile(const char *tag, const char **dir)
{
	int fd = ga_util_tmpfd(tag, dir), e;
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w+");
	if (!f) {
		e = errno;
		close(fd);
		errno = e;
	}
	return f;
}
