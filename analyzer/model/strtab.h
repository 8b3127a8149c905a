/*
 * Global string table of the offline analyzer: every trace file numbers its
 * strings itself; the model interns them here so that equal names from
 * different files (processes) share one id.  Demangled and short forms are
 * computed once per distinct string, on first use.  Runs offline only.
 */
#ifndef GP_ANALYZER_STRTAB_H
#define GP_ANALYZER_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define GP_STR_NONE 0u             /* the empty string */
#define GP_STR_NOMEM UINT32_MAX

struct gp_str {
	char *s;                   /* NUL-terminated copy */
	uint32_t len;
	uint32_t hash;
	char *full;                /* demangled, NULL until asked or not mangled */
	char *shortname;           /* NULL until asked */
	uint8_t full_done;
};

struct gp_strtab {
	struct gp_str *v;
	size_t n, cap;
	uint32_t *slot;            /* open addressing over ids, 0 = empty */
	size_t nslot;
};

int gp_strtab_init(struct gp_strtab *t);
void gp_strtab_free(struct gp_strtab *t);

/* Id of s (len bytes); GP_STR_NOMEM when memory runs out.  "" is 0. */
uint32_t gp_strtab_intern(struct gp_strtab *t, const char *s, size_t len);

/* The string, its length. */
const char *gp_strtab_get(const struct gp_strtab *t, uint32_t id);
uint32_t gp_strtab_len(const struct gp_strtab *t, uint32_t id);

/* Demangled form, or the string itself when it is not a mangled name. */
const char *gp_strtab_full(struct gp_strtab *t, uint32_t id);

/* Short form of the demangled name (see gp_demangle_short()). */
const char *gp_strtab_short(struct gp_strtab *t, uint32_t id);

/*
 * One file's string ids -> strtab ids.  Dense for the small ids recorders
 * write, a hash beyond that, so a hostile id cannot force a huge array.
 */
struct gp_strmap {
	uint32_t *dense;
	size_t n, cap;
	struct gp_map sparse;
};

/* Interns the string of rec and maps its id.  Returns 0, or -1 out of memory. */
int gp_strmap_add(struct gp_strmap *sm, struct gp_strtab *t, uint32_t id,
		  const char *s, size_t len);
/* The strtab id of file string id, or GP_STR_NOMEM when the file never defined it. */
uint32_t gp_strmap_get(const struct gp_strmap *sm, uint32_t id);
/* Forgets all ids (next file); keeps the dense array's memory. */
void gp_strmap_reset(struct gp_strmap *sm);
void gp_strmap_free(struct gp_strmap *sm);

#endif
