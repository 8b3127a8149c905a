/*
 * Global string table of the offline analyzer: every trace file numbers its
 * strings itself; the model interns them here so that equal names from
 * different files (processes) share one id.  Demangled and short forms are
 * computed once per distinct string, on first use; long mangled names in
 * batches of the table's next ones, once for the whole process (strtab.c's
 * cache, shared by the tables of every thread).  Runs offline only.
 */
#ifndef GA_ANALYZER_STRTAB_H
#define GA_ANALYZER_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define GA_STR_NONE 0u             /* the empty string */
#define GA_STR_NOMEM UINT32_MAX
/*
 * A file string id's entry in a ga_strmap with group_ops: the id of the
 * string's op name (ga_op_name_group()), the string itself not kept.
 * Table ids stay below it.
 */
#define GA_STR_GROUPED (1u << 31)

struct ga_str {
	char *s;                   /* NUL-terminated copy */
	uint32_t len;
	char *full;                /* demangled, NULL until asked or not mangled */
	char *shortname;           /* NULL until asked; may be s or full itself */
	uint64_t hash;             /* its key in the table's map */
	uint8_t full_done;
	uint8_t full_shared;  /* full is the process's (strtab.c's cache): not freed */
	uint8_t short_shared; /* shortname is too */
};

struct ga_strtab {
	struct ga_str *v;
	size_t n, cap;
	struct ga_map map;         /* (hash, k) -> id; "" (id 0) is not in it */
	size_t batch_next;         /* demangling: where the names sent along start (strtab.c) */
	uint64_t seed;             /* of the map's keys (strtab.c hash_bytes): the process's */
};

int ga_strtab_init(struct ga_strtab *t);
void ga_strtab_free(struct ga_strtab *t);

/* Id of s (len bytes); GA_STR_NOMEM when memory runs out.  "" is 0. */
uint32_t ga_strtab_intern(struct ga_strtab *t, const char *s, size_t len);

/*
 * ga_strtab_intern() of src's string id (another table's), its key taken
 * from src rather than made again; GA_STR_NONE for "" or an id src has not.
 */
uint32_t ga_strtab_intern_from(struct ga_strtab *t, const struct ga_strtab *src, uint32_t id);

/* Id of s (len bytes) where the table has it, else GA_STR_NOMEM.  "" is 0. */
uint32_t ga_strtab_find(const struct ga_strtab *t, const char *s, size_t len);

/* The string, its length. */
const char *ga_strtab_get(const struct ga_strtab *t, uint32_t id);
uint32_t ga_strtab_len(const struct ga_strtab *t, uint32_t id);

/* Demangled form, or the string itself when it is not a mangled name. */
const char *ga_strtab_full(struct ga_strtab *t, uint32_t id);

/* Short form of the demangled name (see ga_demangle_short()). */
const char *ga_strtab_short(struct ga_strtab *t, uint32_t id);

/*
 * One file's string ids -> strtab ids.  Dense for the small ids recorders
 * write, a hash beyond that, so a hostile id cannot force a huge array.
 */
struct ga_strmap {
	uint32_t *dense;
	size_t n, cap;
	struct ga_map sparse;
	/*
	 * PyTorch's emit_nvtx() op names (ga_op_name_group()), a string of
	 * their own each op call, interned as the op's name: what a report of
	 * folded NVTX ranges counts them by, without keeping every call's
	 * string.  GA_STRMAP_GROUP: the id marked (gbits) only, read as
	 * GA_STR_GROUPED; GA_STRMAP_TAKE: its op's name kept (pend) until
	 * ga_strmap_take() takes it.  Ids of other names past 2^16 are in the
	 * sparse map then.  Memory: a bit an id, the op names not taken yet;
	 * an op name's id far past the strings added so far (a damaged or
	 * crafted trace: recorders number strings one by one) is marked in
	 * gsparse instead, not with a bit for each id up to it.
	 */
	int group_ops;
	uint8_t *gbits;
	size_t gcap; /* bytes of gbits */
	struct ga_map gsparse;
	uint64_t nadd; /* strings added (ga_strmap_add()) */
	struct ga_map pend;
};

#define GA_STRMAP_GROUP 1
#define GA_STRMAP_TAKE 2

/*
 * PyTorch's emit_nvtx() names, "NAME, seq = N, op_id = M[, sizes =
 * [...]][, input_op_ids = [...]]", without their ", seq = N", ", op_id =
 * M" and ", input_op_ids = ..." (each op call's own: the sizes stay), into
 * b (emptied first): 1 where s (len bytes) is such a name, 0 where it
 * stays as it is, -1 out of memory.
 */
int ga_op_name_group(const char *s, size_t len, struct ga_buf *b);

/* Interns the string of rec and maps its id.  Returns 0, or -1 out of memory. */
int ga_strmap_add(struct ga_strmap *sm, struct ga_strtab *t, uint32_t id,
		  const char *s, size_t len);
/*
 * The strtab id of file string id, or GA_STR_NOMEM when the file never
 * defined it; GA_STR_GROUPED where it is an op name interned as its op's
 * (group_ops: the name itself not kept).
 */
uint32_t ga_strmap_get_slow(const struct ga_strmap *sm, uint32_t id);
static inline uint32_t ga_strmap_get(const struct ga_strmap *sm, uint32_t id)
{
	/* Most ids are small and defined: a read of the dense array (once a record). */
	if (id < sm->n && sm->dense[id])
		return sm->dense[id];
	return ga_strmap_get_slow(sm, id);
}
/*
 * ga_strmap_get() of a range's name: an op name's op name id |
 * GA_STR_GROUPED, forgotten then (GA_STRMAP_TAKE); GA_STR_GROUPED alone
 * where it was taken already.
 */
uint32_t ga_strmap_take(struct ga_strmap *sm, uint32_t id);
/* ga_strmap_take() without taking it (an announcement of the range that will). */
uint32_t ga_strmap_peek(const struct ga_strmap *sm, uint32_t id);
/* Forgets all ids (next file); keeps the dense array's memory. */
void ga_strmap_reset(struct ga_strmap *sm);
void ga_strmap_free(struct ga_strmap *sm);

#endif
