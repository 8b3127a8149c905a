/*
 * String interning for the recorder: each distinct string gets a small id
 * once, so records carry 4-byte ids and the file carries each string once.
 * Context: the CUPTI completion callback, under the ring's producer lock
 * (single-threaded use); may allocate, never blocks otherwise.
 */
#ifndef GP_INTERN_H
#define GP_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct gp_intern_entry {
	uint64_t hash;
	char *str;
	uint32_t len;
	uint32_t id;
};

struct gp_intern {
	struct gp_intern_entry *tab;
	uint32_t cap;              /* power of two */
	uint32_t count;
	uint32_t next_id;
	struct gp_intern_entry *last; /* newest entry, for gp_intern_undo */
};

void gp_intern_init(struct gp_intern *in);
void gp_intern_free(struct gp_intern *in);

/*
 * Id of s[0..len), >= 1.  *added is set when the string is new (the caller
 * then emits a GP_REC_STRING).  Returns 0 when out of memory.
 */
uint32_t gp_intern(struct gp_intern *in, const char *s, size_t len, int *added);

/*
 * Forgets the string just added as id (its GP_REC_STRING could not be
 * emitted), so the next gp_intern of it adds and emits it again.  Only the
 * newest entry can be undone; anything else is left as it is.
 */
void gp_intern_undo(struct gp_intern *in, uint32_t id);

#endif
