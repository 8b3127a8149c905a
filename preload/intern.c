/*
 * String interning (see intern.h).  Open addressing with linear probing,
 * FNV-1a hashes; grows at 50% load.  Context: completion callback, under
 * the producer lock.
 */
#include "intern.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

void gp_intern_init(struct gp_intern *in)
{
	memset(in, 0, sizeof(*in));
	in->next_id = 1;
}

void gp_intern_free(struct gp_intern *in)
{
	for (uint32_t i = 0; i < in->cap; i++)
		free(in->tab[i].str);
	free(in->tab);
	memset(in, 0, sizeof(*in));
}

static int grow(struct gp_intern *in)
{
	uint32_t ncap = in->cap ? in->cap * 2 : 256;
	struct gp_intern_entry *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -1;
	for (uint32_t i = 0; i < in->cap; i++) {
		struct gp_intern_entry *e = &in->tab[i];
		uint32_t j;

		if (!e->str)
			continue;
		for (j = (uint32_t)e->hash & (ncap - 1); nt[j].str; j = (j + 1) & (ncap - 1))
			;
		nt[j] = *e;
	}
	free(in->tab);
	in->tab = nt;
	in->cap = ncap;
	return 0;
}

uint32_t gp_intern(struct gp_intern *in, const char *s, size_t len, int *added)
{
	uint64_t h = fnv1a(s, len);
	struct gp_intern_entry *e;
	uint32_t j;

	*added = 0;
	if ((in->count + 1) * 2 > in->cap && grow(in) < 0)
		return 0;
	for (j = (uint32_t)h & (in->cap - 1);; j = (j + 1) & (in->cap - 1)) {
		e = &in->tab[j];
		if (!e->str)
			break;
		if (e->hash == h && e->len == len && !memcmp(e->str, s, len))
			return e->id;
	}
	e->str = malloc(len + 1);
	if (!e->str)
		return 0;
	memcpy(e->str, s, len);
	e->str[len] = 0;
	e->hash = h;
	e->len = (uint32_t)len;
	e->id = in->next_id++;
	in->count++;
	in->last = e;
	*added = 1;
	return e->id;
}

void gp_intern_undo(struct gp_intern *in, uint32_t id)
{
	struct gp_intern_entry *e = in->last;

	/*
	 * The newest entry ends its probe chain (nothing was inserted after
	 * it), so emptying its slot breaks no other lookup.
	 */
	if (!e || e->id != id || id + 1 != in->next_id)
		return;
	free(e->str);
	memset(e, 0, sizeof(*e));
	in->last = NULL;
	in->count--;
	in->next_id--;
}
