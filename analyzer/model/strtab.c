/*
 * Global string interning for the offline analyzer (see strtab.h).
 * Runs offline only.
 */
#include "model/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "model/demangle.h"
#include "base/util.h"

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u;       /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

int ga_strtab_init(struct ga_strtab *t)
{
	memset(t, 0, sizeof(*t));
	return ga_strtab_intern(t, "", 0) == GA_STR_NONE ? 0 : -1;
}

void ga_strtab_free(struct ga_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].s);
		free(t->v[i].full);
		free(t->v[i].shortname);
	}
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static int rehash(struct ga_strtab *t)
{
	size_t ns = t->nslot ? t->nslot * 2 : 256, i, j;
	uint32_t *s = calloc(ns, sizeof(*s));

	if (!s)
		return -1;
	for (i = 1; i < t->n; i++) {
		for (j = t->v[i].hash & (ns - 1); s[j]; j = (j + 1) & (ns - 1))
			;
		s[j] = (uint32_t)i;
	}
	free(t->slot);
	t->slot = s;
	t->nslot = ns;
	return 0;
}

uint32_t ga_strtab_intern(struct ga_strtab *t, const char *s, size_t len)
{
	uint32_t h = hash_bytes(s, len);
	struct ga_str *e;
	size_t j;

	if (len > UINT32_MAX || t->n >= GA_STR_NOMEM - 1)
		return GA_STR_NOMEM;
	if (t->n && len == 0)
		return GA_STR_NONE;
	if (t->nslot) {
		for (j = h & (t->nslot - 1); t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
			e = &t->v[t->slot[j]];
			if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
				return t->slot[j];
		}
	}
	if (ga_util_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return GA_STR_NOMEM;
	e = &t->v[t->n];
	memset(e, 0, sizeof(*e));
	e->s = malloc(len + 1);
	if (!e->s)
		return GA_STR_NOMEM;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = (uint32_t)len;
	e->hash = h;
	t->n++;
	if (t->n == 1)
		return GA_STR_NONE;        /* "" is never looked up by hash */
	if ((t->n) * 2 > t->nslot) {
		if (rehash(t)) {
			t->n--;
			free(e->s);
			return GA_STR_NOMEM;
		}
	} else {
		for (j = h & (t->nslot - 1); t->slot[j]; j = (j + 1) & (t->nslot - 1))
			;
		t->slot[j] = (uint32_t)(t->n - 1);
	}
	return (uint32_t)(t->n - 1);
}

const char *ga_strtab_get(const struct ga_strtab *t, uint32_t id)
{
	return id < t->n ? t->v[id].s : "";
}

uint32_t ga_strtab_len(const struct ga_strtab *t, uint32_t id)
{
	return id < t->n ? t->v[id].len : 0;
}

const char *ga_strtab_full(struct ga_strtab *t, uint32_t id)
{
	struct ga_str *e;

	if (id >= t->n)
		return "";
	e = &t->v[id];
	if (!e->full_done) {
		e->full = ga_demangle_full(e->s);
		e->full_done = 1;
	}
	return e->full ? e->full : e->s;
}

const char *ga_strtab_short(struct ga_strtab *t, uint32_t id)
{
	struct ga_str *e;

	if (id >= t->n)
		return "";
	e = &t->v[id];
	if (!e->shortname) {
		const char *full = ga_strtab_full(t, id);

		/* A plain C name is its own short form. */
		e->shortname = e->full ? ga_demangle_short(full) : strdup(full);
		if (!e->shortname)
			return full;
	}
	return e->shortname;
}

#define STRMAP_DENSE (1u << 22)

int ga_strmap_add(struct ga_strmap *sm, struct ga_strtab *t, uint32_t id,
		  const char *s, size_t len)
{
	uint32_t gid = ga_strtab_intern(t, s, len), *slot;

	if (gid == GA_STR_NOMEM)
		return -1;
	if (id >= STRMAP_DENSE) {
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

uint32_t ga_strmap_get(const struct ga_strmap *sm, uint32_t id)
{
	uint32_t *v;

	if (id < sm->n && sm->dense[id])
		return sm->dense[id];
	if (id >= STRMAP_DENSE && (v = ga_map_find(&sm->sparse, id, 0)))
		return *v;
	return GA_STR_NOMEM;
}

void ga_strmap_reset(struct ga_strmap *sm)
{
	sm->n = 0;
	ga_map_free(&sm->sparse);
}

void ga_strmap_free(struct ga_strmap *sm)
{
	free(sm->dense);
	ga_map_free(&sm->sparse);
	memset(sm, 0, sizeof(*sm));
}
