/*
 * Global string interning for the offline analyzer (see strtab.h).
 * Runs offline only.
 */
#include "model/strtab.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "model/demangle.h"
#include "base/util.h"

/*
 * The key of a string in the table's map: eight bytes a step, keyed by the
 * process's seed (random), so that a crafted trace cannot know which names
 * collide (a collision costs a look-up more: many would cost each name
 * many).  Ids go by first sight, whatever the keys: outputs do not depend
 * on them.
 */
static uint64_t hash_bytes(uint64_t seed, const char *s, size_t len)
{
	const uint64_t c = 0x9e3779b97f4a7c15ull;
	uint64_t h = seed ^ (len * c), w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * c;
		h ^= h >> 32;
	}
	if (len) {
		w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * c;
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/*
 * The tables' seed: random, else from the clock and where it is; one for
 * the process, so that a string's key made in one table serves in
 * another (ga_strtab_intern_from()).
 */
static uint64_t seed;
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_make(void)
{
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed = (uint64_t)(uintptr_t)&seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_nsec ^
	       (uint64_t)ts.tv_sec << 32;
}

int ga_strtab_init(struct ga_strtab *t)
{
	memset(t, 0, sizeof(*t));
	pthread_once(&seed_once, seed_make);
	t->seed = seed;
	/* Id 0 is "", never looked up in the map. */
	if (ga_util_grow(&t->v, &t->cap, 1, sizeof(*t->v)))
		return -1;
	memset(&t->v[0], 0, sizeof(t->v[0]));
	t->v[0].s = calloc(1, 1);
	if (!t->v[0].s)
		return -1;
	t->n = 1;
	return 0;
}

void ga_strtab_free(struct ga_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].s);
		if (t->v[i].shortname != t->v[i].s && t->v[i].shortname != t->v[i].full &&
		    !t->v[i].short_shared)
			free(t->v[i].shortname);
		if (!t->v[i].full_shared)
			free(t->v[i].full);
	}
	free(t->v);
	ga_map_free(&t->map);
	memset(t, 0, sizeof(*t));
}

/*
 * Strings are keyed in the map by (hash, k): k counts the strings of equal
 * hash met before, so a collision costs one more lookup, never a wrong id.
 */
/* ga_strtab_intern() of s whose key is h. */
static uint32_t intern_h(struct ga_strtab *t, const char *s, size_t len, uint64_t h)
{
	struct ga_str *e;
	uint64_t k;
	uint32_t *slot;
	int r;

	if (len > UINT32_MAX || t->n >= GA_STR_GROUPED)
		return GA_STR_NOMEM;
	if (len == 0)
		return GA_STR_NONE;
	for (k = 0;; k++) {
		r = ga_map_insert(&t->map, h, k, &slot);
		if (r < 0)
			return GA_STR_NOMEM;
		if (r == 1)
			break;
		e = &t->v[*slot];
		if (e->len == len && memcmp(e->s, s, len) == 0)
			return *slot;
	}
	/* A new entry at (h, k): fill it, or take it back on failure. */
	if (ga_util_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		goto nomem;
	e = &t->v[t->n];
	memset(e, 0, sizeof(*e));
	e->s = malloc(len + 1);
	if (!e->s)
		goto nomem;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = (uint32_t)len;
	e->hash = h;
	*slot = (uint32_t)t->n;
	return (uint32_t)t->n++;
nomem:
	ga_map_remove(&t->map, h, k);
	return GA_STR_NOMEM;
}

uint32_t ga_strtab_intern(struct ga_strtab *t, const char *s, size_t len)
{
	return intern_h(t, s, len, hash_bytes(t->seed, s, len));
}

uint32_t ga_strtab_intern_from(struct ga_strtab *t, const struct ga_strtab *src, uint32_t id)
{
	const struct ga_str *e;

	if (id >= src->n || !src->v[id].len)
		return GA_STR_NONE;
	e = &src->v[id];
	/* Its key as src made it: the same seed, the same key. */
	return intern_h(t, e->s, e->len,
			src->seed == t->seed ? e->hash : hash_bytes(t->seed, e->s, e->len));
}

/* ga_strtab_find() of s whose key is h. */
static uint32_t find_h(const struct ga_strtab *t, const char *s, size_t len, uint64_t h)
{
	uint32_t *v;

	if (len == 0)
		return GA_STR_NONE;
	for (uint64_t k = 0; (v = ga_map_find(&t->map, h, k)); k++)
		if (t->v[*v].len == len && memcmp(t->v[*v].s, s, len) == 0)
			return *v;
	return GA_STR_NOMEM;
}

uint32_t ga_strtab_find(const struct ga_strtab *t, const char *s, size_t len)
{
	return find_h(t, s, len, hash_bytes(t->seed, s, len));
}

const char *ga_strtab_get(const struct ga_strtab *t, uint32_t id)
{
	return id < t->n ? t->v[id].s : "";
}

uint32_t ga_strtab_len(const struct ga_strtab *t, uint32_t id)
{
	return id < t->n ? t->v[id].len : 0;
}

/* A name the helper settled: its demangled form, and its short form, made with it. */
struct cached {
	char *full;
	char *shortname; /* may be full itself; NULL out of memory */
	int done;
};

/*
 * What the helper settled, for every table and thread of the process
 * (under cache_lock): the long mangled names, in a table of their own, and
 * by id their demangled forms (NULL: shown mangled), kept to the end of the
 * process.  The traces the report's pool reads on several threads (a model
 * and a table each) name the same kernels: each name is sent once.  Up to
 * CACHE_BYTES of names and demangled forms (and their short forms, none
 * longer than its demangled form); past that, names are sent as they come.
 */
#define CACHE_BYTES (64u << 20)
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct ga_strtab names;
	struct cached *e;
	size_t cap, bytes;
	int ready, off;
} cache;

/* The cache's id of e's string (its entry made), or GA_STR_NOMEM where it has none. */
static uint32_t cache_id(const struct ga_str *e)
{
	const char *name = e->s;
	size_t len = e->len;
	uint32_t id;

	if (cache.off)
		return GA_STR_NOMEM;
	if (!cache.ready) {
		if (ga_strtab_init(&cache.names)) {
			cache.off = 1;
			return GA_STR_NOMEM;
		}
		cache.ready = 1;
	}
	/* e's key serves: every table has the process's seed. */
	if ((id = find_h(&cache.names, name, len, e->hash)) == GA_STR_NOMEM) {
		if (cache.bytes + len > CACHE_BYTES ||
		    (id = intern_h(&cache.names, name, len, e->hash)) == GA_STR_NOMEM)
			return GA_STR_NOMEM;
		cache.bytes += len;
	}
	if (id >= cache.cap) {
		size_t old = cache.cap;

		/* The name stays in the table, not done: sent each time it is needed. */
		if (ga_util_grow(&cache.e, &cache.cap, (size_t)id + 1, sizeof(*cache.e)))
			return GA_STR_NOMEM;
		memset(cache.e + old, 0, (cache.cap - old) * sizeof(*cache.e));
	}
	return id;
}

static char *short_of(char *full);

/*
 * e takes the cache's forms c (cache_lock held), the short one made once
 * for the process here: a table on any thread then has both without the
 * lock (a pool of traces naming the same kernels took it once a name a
 * trace, and its threads waited on one another).
 */
static void take_cached(struct ga_str *e, struct cached *c)
{
	e->full = c->full;
	e->full_shared = 1;
	e->full_done = 1;
	if (c->full && !c->shortname)
		c->shortname = short_of(c->full);
	if (c->shortname) {
		e->shortname = c->shortname;
		e->short_shared = 1;
	}
}

/*
 * Entry id demangled by the helper, and with it the first long mangled
 * names of the table not yet demangled, from where the last batch stopped
 * looking, GA_DEMANGLE_BATCH_BYTES of them at most: a trace's kernel names
 * come in its STRING records before their kernels, so most are here before
 * they are needed, in about the order they are; each entry is looked at
 * once, whatever the order names are needed in.  Those the process's cache
 * has are not sent.
 */
static void full_many(struct ga_strtab *t, uint32_t id)
{
	const char *names[GA_DEMANGLE_BATCH];
	size_t lens[GA_DEMANGLE_BATCH], mi[GA_DEMANGLE_BATCH], n = 1, nm = 0, bytes = 0, j;
	uint32_t ids[GA_DEMANGLE_BATCH], cid[GA_DEMANGLE_BATCH];
	char *out[GA_DEMANGLE_BATCH];
	const char *mn[GA_DEMANGLE_BATCH];
	size_t ml[GA_DEMANGLE_BATCH];
	unsigned char settled[GA_DEMANGLE_BATCH];

	names[0] = t->v[id].s;
	lens[0] = t->v[id].len;
	ids[0] = id;
	for (j = t->batch_next; j < t->n && n < GA_DEMANGLE_BATCH; j++) {
		const struct ga_str *c = &t->v[j];

		if (j == id || c->full_done || !ga_demangle_remote(c->s, c->len))
			continue;
		if (bytes + sizeof(uint32_t) + c->len > GA_DEMANGLE_BATCH_BYTES)
			break;
		bytes += sizeof(uint32_t) + c->len;
		names[n] = c->s;
		lens[n] = c->len;
		ids[n++] = (uint32_t)j;
	}
	t->batch_next = j;
	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < n; i++) {
		struct ga_str *e = &t->v[ids[i]];

		cid[i] = cache_id(e);
		if (cid[i] != GA_STR_NOMEM && cache.e[cid[i]].done) {
			take_cached(e, &cache.e[cid[i]]);
			continue;
		}
		mn[nm] = names[i];
		ml[nm] = lens[i];
		mi[nm++] = i;
	}
	ga_demangle_full_many(mn, ml, nm, out, settled, nm && mi[0] == 0);
	for (size_t k = 0; k < nm; k++) {
		size_t i = mi[k];
		struct ga_str *e = &t->v[ids[i]];
		size_t fl = out[k] ? strlen(out[k]) : 0;

		if (!settled[k])
			continue;
		e->full = out[k];
		e->full_done = 1;
		/* Kept for every table from now on, the process's to free. */
		if (cid[i] != GA_STR_NOMEM && cache.bytes + fl <= CACHE_BYTES) {
			cache.e[cid[i]].full = out[k];
			cache.e[cid[i]].done = 1;
			cache.bytes += fl;
			take_cached(e, &cache.e[cid[i]]);
		}
	}
	pthread_mutex_unlock(&cache_lock);
}

const char *ga_strtab_full(struct ga_strtab *t, uint32_t id)
{
	struct ga_str *e;

	if (id >= t->n)
		return "";
	e = &t->v[id];
	if (!e->full_done) {
		if (ga_demangle_remote(e->s, e->len)) {
			full_many(t, id);
		} else {
			e->full = ga_demangle_full(e->s);
			e->full_done = 1;
		}
	}
	return e->full ? e->full : e->s;
}

/*
 * The short form of the demangled name full: full itself where they are
 * the same (names may be long), NULL out of memory.
 */
static char *short_of(char *full)
{
	char *sn = ga_demangle_short(full);

	if (sn && !strcmp(sn, full)) {
		free(sn);
		sn = full;
	}
	return sn;
}

/*
 * The cache's short form of e, whose demangled form is the cache's (made
 * once for every table), or NULL where it has none (out of memory).
 */
static char *cached_short(const struct ga_str *e)
{
	char *sn = NULL;
	uint32_t cid;

	pthread_mutex_lock(&cache_lock);
	cid = cache.ready ? find_h(&cache.names, e->s, e->len, e->hash) : GA_STR_NOMEM;
	if (cid != GA_STR_NOMEM && cid < cache.cap && cache.e[cid].done && cache.e[cid].full) {
		struct cached *c = &cache.e[cid];

		if (!c->shortname)
			c->shortname = short_of(c->full);
		sn = c->shortname;
	}
	pthread_mutex_unlock(&cache_lock);
	return sn;
}

const char *ga_strtab_short(struct ga_strtab *t, uint32_t id)
{
	struct ga_str *e;

	if (id >= t->n)
		return "";
	e = &t->v[id];
	if (!e->shortname) {
		const char *full = ga_strtab_full(t, id);
		char *sn;

		/* A plain C name is its own short form: no copy (names may be long). */
		if (!e->full) {
			e->shortname = e->s;
			return e->s;
		}
		/* A demangled form every table shares: its short form too. */
		if (e->full_shared && (sn = cached_short(e))) {
			e->shortname = sn;
			e->short_shared = 1;
			return sn;
		}
		if (!(sn = short_of(e->full)))
			return full;
		e->shortname = sn;
	}
	return e->shortname;
}

/* Where the digits at p end (at least one; end: the string's), or NULL. */
static const char *digits_end(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && *q >= '0' && *q <= '9')
		q++;
	return q > p ? q : NULL;
}

int ga_op_name_group(const char *s, size_t len, struct ga_buf *b)
{
	const char *end = s + len, *p = memmem(s, len, ", ", 2), *q = s;

	b->len = 0;
	/* Most names are none of PyTorch's: no ", " at all. */
	while (p) {
		size_t left = (size_t)(end - p);
		const char *e = NULL;

		if (left >= 8 && !memcmp(p, ", seq = ", 8))
			e = digits_end(p + 8, end);
		else if (left >= 10 && !memcmp(p, ", op_id = ", 10))
			e = digits_end(p + 10, end);
		else if (left >= 17 && !memcmp(p, ", input_op_ids = ", 17))
			e = end;
		/* A component ends where the next begins, or where the name does. */
		if (e && (e == end || (end - e >= 2 && !memcmp(e, ", ", 2)))) {
			if (ga_buf_put(b, q, (size_t)(p - q)))
				return -1;
			q = e;
			p = e < end ? e : NULL;
		} else {
			p = memmem(p + 2, (size_t)(end - p - 2), ", ", 2);
		}
	}
	if (q == s)
		return 0;
	if (ga_buf_put(b, q, (size_t)(end - q)))
		return -1;
	return b->len > 0;
}

#define STRMAP_DENSE (1u << 22)
#define STRMAP_DENSE_GROUPING (1u << 16)

/*
 * The id s (len bytes) maps to: with group_ops, an emit_nvtx() op name
 * (an op_id in it, no NUL: as a range's name is read) as its op's name,
 * flagged.  GA_STR_NOMEM out of memory.
 */
static uint32_t strmap_intern(const struct ga_strmap *sm, struct ga_strtab *t, const char *s,
			      size_t len)
{
	struct ga_buf b = { 0 };
	uint32_t gid;
	int g;

	if (!sm->group_ops || !s || len < 11 || !memmem(s, len, ", op_id = ", 10) ||
	    memchr(s, 0, len))
		return ga_strtab_intern(t, s, len);
	if ((g = ga_op_name_group(s, len, &b)) < 0) {
		ga_buf_free(&b);
		return GA_STR_NOMEM;
	}
	gid = g ? ga_strtab_intern(t, b.p, b.len) : ga_strtab_intern(t, s, len);
	ga_buf_free(&b);
	return g && gid != GA_STR_NOMEM ? gid | GA_STR_GROUPED : gid;
}

/*
 * Ids past it are in the sparse map: grouping, op names a string id each
 * call climb fast, the other names' ids being few (their dense array
 * would grow with the op calls).
 */
static uint32_t dense_max(const struct ga_strmap *sm)
{
	return sm->group_ops ? STRMAP_DENSE_GROUPING : STRMAP_DENSE;
}

static int gbit(const struct ga_strmap *sm, uint32_t id)
{
	if ((size_t)id / 8 < sm->gcap)
		return sm->gbits[id / 8] >> (id % 8) & 1;
	return sm->gsparse.n && ga_map_find(&sm->gsparse, id, 0);
}

/*
 * Marks id an op name interned as its op's (on), or not: a bit, where id
 * is near the strings added (base/util.h ga_util_id_near()), else in
 * gsparse.
 * 0, or -1 out of memory.
 */
static int gbit_set(struct ga_strmap *sm, uint32_t id, int on)
{
	size_t byte = (size_t)id / 8;
	uint32_t *slot;

	if (byte >= sm->gcap) {
		size_t old = sm->gcap;

		if (sm->gsparse.n)
			ga_map_remove(&sm->gsparse, id, 0);
		if (!on)
			return 0;
		if (!ga_util_id_near(id, sm->nadd)) {
			if (ga_map_insert(&sm->gsparse, id, 0, &slot) < 0)
				return -1;
			*slot = 1;
			return 0;
		}
		if (ga_util_grow(&sm->gbits, &sm->gcap, byte + 1, 1))
			return -1;
		memset(sm->gbits + old, 0, sm->gcap - old);
	}
	if (on)
		sm->gbits[byte] |= (uint8_t)(1u << (id % 8));
	else
		sm->gbits[byte] &= (uint8_t) ~(1u << (id % 8));
	return 0;
}

int ga_strmap_add(struct ga_strmap *sm, struct ga_strtab *t, uint32_t id,
		  const char *s, size_t len)
{
	uint32_t gid = strmap_intern(sm, t, s, len), *slot;

	if (gid == GA_STR_NOMEM)
		return -1;
	sm->nadd++;
	/* Defined again: what it was goes. */
	if (id < sm->n)
		sm->dense[id] = 0;
	else if (sm->sparse.n)
		ga_map_remove(&sm->sparse, id, 0);
	if (sm->pend.n)
		ga_map_remove(&sm->pend, id, 0);
	if (gbit_set(sm, id, (gid & GA_STR_GROUPED) != 0))
		return -1;
	if (gid & GA_STR_GROUPED) {
		/* Kept only until a range takes it (GA_STRMAP_TAKE). */
		if (sm->group_ops == GA_STRMAP_TAKE) {
			if (ga_map_insert(&sm->pend, id, 0, &slot) < 0)
				return -1;
			*slot = gid & ~GA_STR_GROUPED;
		}
		return 0;
	}
	if (id >= dense_max(sm)) {
		if (ga_map_insert(&sm->sparse, id, 0, &slot) < 0)
			return -1;
		*slot = gid;
		return 0;
	}
	if (id >= sm->n) {
		if (ga_util_grow(&sm->dense, &sm->cap, (size_t)id + 1, sizeof(*sm->dense)))
			return -1;
		memset(sm->dense + sm->n, 0, ((size_t)id + 1 - sm->n) * sizeof(*sm->dense));
		sm->n = (size_t)id + 1;
	}
	sm->dense[id] = gid;
	return 0;
}

uint32_t ga_strmap_get_slow(const struct ga_strmap *sm, uint32_t id)
{
	uint32_t *v;

	if (id >= dense_max(sm) && sm->sparse.n && (v = ga_map_find(&sm->sparse, id, 0)))
		return *v;
	return gbit(sm, id) ? GA_STR_GROUPED : GA_STR_NOMEM;
}

uint32_t ga_strmap_take(struct ga_strmap *sm, uint32_t id)
{
	uint32_t *v, g;

	if (!gbit(sm, id))
		return ga_strmap_get(sm, id);
	if (!sm->pend.n || !(v = ga_map_find(&sm->pend, id, 0)))
		return GA_STR_GROUPED;
	g = *v;
	ga_map_remove_found(&sm->pend, v);
	return g | GA_STR_GROUPED;
}

uint32_t ga_strmap_peek(const struct ga_strmap *sm, uint32_t id)
{
	const uint32_t *v;

	if (!gbit(sm, id))
		return ga_strmap_get(sm, id);
	if (!sm->pend.n || !(v = ga_map_find(&sm->pend, id, 0)))
		return GA_STR_GROUPED;
	return *v | GA_STR_GROUPED;
}

void ga_strmap_reset(struct ga_strmap *sm)
{
	sm->n = 0;
	sm->nadd = 0;
	ga_map_free(&sm->sparse);
	ga_map_free(&sm->pend);
	ga_map_free(&sm->gsparse);
	if (sm->gbits)
		memset(sm->gbits, 0, sm->gcap);
}

void ga_strmap_free(struct ga_strmap *sm)
{
	free(sm->dense);
	free(sm->gbits);
	ga_map_free(&sm->sparse);
	ga_map_free(&sm->pend);
	ga_map_free(&sm->gsparse);
	memset(sm, 0, sizeof(*sm));
}
