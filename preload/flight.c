/*
 * Flight-recorder memory (see flight.h).  The frames sit in one byte ring:
 * each goes right after the previous one, or back at the start of the
 * buffer when it does not fit before the end; the chunks it would
 * overwrite, always the oldest, are dropped first.
 * Context: writer thread (put), flusher or exit path (view, copy); no
 * allocation after init.
 */
#include "flight.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gp_flight_init(struct gp_flight *f, uint64_t size)
{
	/* Room for many small chunks: a flush every interval makes some. */
	uint64_t nd = size / 4096;

	memset(f, 0, sizeof(*f));
	f->nd = (uint32_t)(nd < 1024 ? 1024 : nd > (1u << 20) ? (1u << 20) : nd);
	f->d = calloc(f->nd, sizeof(*f->d));
	f->mem = malloc(size);
	if (!f->d || !f->mem) {
		free(f->d);
		free(f->mem);
		memset(f, 0, sizeof(*f));
		return -ENOMEM;
	}
	f->size = size;
	f->next_id = 1;
	pthread_mutex_init(&f->lock, NULL);
	return 0;
}

void gp_flight_free(struct gp_flight *f)
{
	if (!f->mem)
		return;
	pthread_mutex_destroy(&f->lock);
	free(f->d);
	free(f->mem);
	memset(f, 0, sizeof(*f));
}

/* Lock held. */
static void drop_oldest(struct gp_flight *f)
{
	struct gp_flight_chunk *c = &f->d[f->head];

	f->dropped_records += c->h.nrecords;
	f->dropped_bytes += c->h.comp_size;
	f->dropped_chunks++;
	if (c->h.t_max > f->dropped_t_max)
		f->dropped_t_max = c->h.t_max;
	f->used -= c->h.comp_size;
	f->records -= c->h.nrecords;
	f->head = (f->head + 1) % f->nd;
	f->count--;
}

void gp_flight_put(struct gp_flight *f, const struct gp_chunk_header *h, const void *frame,
		   uint64_t lost_counted)
{
	uint64_t n = h->comp_size;
	struct gp_flight_chunk *c;

	pthread_mutex_lock(&f->lock);
	if (n > f->size) {
		/* Larger than the whole ring: it is the one that cannot be kept. */
		f->dropped_records += h->nrecords;
		f->dropped_bytes += n;
		f->dropped_chunks++;
		pthread_mutex_unlock(&f->lock);
		return;
	}
	if (f->wpos + n > f->size) {
		/* Back to the start: what lies beyond the write point is oldest. */
		while (f->count && f->d[f->head].off >= f->wpos)
			drop_oldest(f);
		f->wpos = 0;
	}
	/* Then the oldest chunks that overlap the new frame's place. */
	while (f->count && f->d[f->head].off < f->wpos + n &&
	       f->d[f->head].off + f->d[f->head].h.comp_size > f->wpos)
		drop_oldest(f);
	if (f->count == f->nd)
		drop_oldest(f);
	c = &f->d[(f->head + f->count) % f->nd];
	c->id = f->next_id++;
	c->off = f->wpos;
	c->h = *h;
	c->lost_counted = lost_counted;
	memcpy(f->mem + f->wpos, frame, n);
	f->wpos += n;
	f->used += n;
	f->records += h->nrecords;
	f->count++;
	pthread_mutex_unlock(&f->lock);
}

void gp_flight_view(struct gp_flight *f, struct gp_flight_view *v)
{
	pthread_mutex_lock(&f->lock);
	memset(v, 0, sizeof(*v));
	v->first = f->count ? f->d[f->head].id : f->next_id;
	v->last = f->next_id - 1;
	for (uint32_t i = 0; i < f->count; i++) {
		const struct gp_flight_chunk *c = &f->d[(f->head + i) % f->nd];

		if (c->h.t_min && (!v->t_min || c->h.t_min < v->t_min))
			v->t_min = c->h.t_min;
	}
	v->dropped_records = f->dropped_records;
	v->dropped_bytes = f->dropped_bytes;
	v->dropped_chunks = f->dropped_chunks;
	pthread_mutex_unlock(&f->lock);
}

int gp_flight_copy(struct gp_flight *f, uint64_t id, struct gp_chunk_header *h,
		   uint64_t *lost_counted, void *buf, size_t cap)
{
	const struct gp_flight_chunk *c;
	int rc = -ENOENT;

	pthread_mutex_lock(&f->lock);
	if (f->count && id >= f->d[f->head].id && id < f->next_id) {
		c = &f->d[(f->head + (uint32_t)(id - f->d[f->head].id)) % f->nd];
		if (c->h.comp_size <= cap) {
			*h = c->h;
			*lost_counted = c->lost_counted;
			memcpy(buf, f->mem + c->off, c->h.comp_size);
			rc = 0;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}
