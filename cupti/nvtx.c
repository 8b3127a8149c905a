/*
 * NVTX translation (see nvtx.h).  CUPTI reports a range as a START record
 * (name, domain, thread, time) and an END record with the same id; the
 * pairing is done here so the trace holds whole ranges.  MARKER_DATA
 * (color, category, payload) arrives keyed by the same id.
 * Context: completion callback under the producer lock; may allocate.
 */
#include "nvtx.h"

#include "../preload/recorder.h"

#include <stdlib.h>
#include <string.h>

struct open_range {
	uint32_t id;               /* 0 = empty slot */
	uint32_t tid;
	uint64_t start;
	uint32_t name, domain;
	uint32_t color, category;
	uint32_t payload_kind;
	uint32_t push;
	uint64_t payload;
};

static struct open_range *tab;
static uint32_t cap, count;

static uint32_t slot_of(uint32_t id)
{
	return (id * 2654435761u) & (cap - 1);
}

static struct open_range *find(uint32_t id)
{
	if (!cap)
		return NULL;
	for (uint32_t j = slot_of(id);; j = (j + 1) & (cap - 1)) {
		if (tab[j].id == id)
			return &tab[j];
		if (!tab[j].id)
			return NULL;
	}
}

static struct open_range *insert(uint32_t id)
{
	struct open_range *e;

	if ((count + 1) * 2 > cap) {
		uint32_t ocap = cap, ncap = cap ? cap * 2 : 256;
		struct open_range *old = tab, *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return NULL;
		tab = nt;
		cap = ncap;
		for (uint32_t i = 0; i < ocap; i++)
			if (old[i].id) {
				uint32_t j = slot_of(old[i].id);

				while (tab[j].id)
					j = (j + 1) & (cap - 1);
				tab[j] = old[i];
			}
		free(old);
	}
	for (uint32_t j = slot_of(id);; j = (j + 1) & (cap - 1)) {
		if (!tab[j].id || tab[j].id == id) {
			e = &tab[j];
			if (!e->id)
				count++;
			memset(e, 0, sizeof(*e));
			e->id = id;
			return e;
		}
	}
}

/* Backward-shift deletion keeps probe chains intact. */
static void erase(struct open_range *e)
{
	uint32_t i = (uint32_t)(e - tab), j = i;

	for (;;) {
		j = (j + 1) & (cap - 1);
		if (!tab[j].id)
			break;
		uint32_t k = slot_of(tab[j].id);

		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			tab[i] = tab[j];
			i = j;
		}
	}
	tab[i].id = 0;
	count--;
}

static uint32_t thread_of(const CUpti_ActivityMarker2 *m)
{
	return m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
			       m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
		       ? m->objectId.pt.threadId
		       : 0;
}

static void emit_range(const struct open_range *o, uint64_t end, uint32_t tid_end,
		       uint16_t type, uint32_t extra_aux)
{
	struct gp_rec_nvtx *r = gp_emit(type, sizeof(*r));

	if (!r)
		return;
	r->h.aux = (o->push ? 1u : 0u) | extra_aux;
	r->start = o->start;
	r->end = end;
	r->id = o->id;
	r->tid_start = o->tid;
	r->tid_end = tid_end;
	r->name = o->name;
	r->domain = o->domain;
	r->category = o->category;
	r->color = o->color;
	r->payload_kind = o->payload_kind;
	r->payload = o->payload;
	gp_ring_note_time(&gp_rec.ring, o->start, end);
}

void gp_nvtx_marker(const CUpti_ActivityMarker2 *m)
{
	struct open_range *o;

	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		o = insert(m->id);
		if (!o) {
			gp_lost_add(GP_LOST_RING_FULL, 1);
			return;
		}
		o->start = m->timestamp;
		o->tid = thread_of(m);
		o->name = gp_emit_string(m->name ? m->name : "");
		o->domain = m->domain && *m->domain ? gp_emit_string(m->domain) : 0;
		/* nvtxRangePush is thread-scoped; nvtxRangeStart is process-scoped. */
		o->push = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
	} else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		o = find(m->id);
		if (!o)
			return; /* opened before tracing began */
		emit_range(o, m->timestamp, thread_of(m), GP_REC_NVTX_RANGE, 0);
		erase(o);
	} else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		struct open_range mark = {
			.id = m->id,
			.tid = thread_of(m),
			.start = m->timestamp,
			.name = gp_emit_string(m->name ? m->name : ""),
			.domain = m->domain && *m->domain ? gp_emit_string(m->domain) : 0,
		};

		emit_range(&mark, m->timestamp, mark.tid, GP_REC_NVTX_MARK, 0);
	}
}

void gp_nvtx_marker_data(const CUpti_ActivityMarkerData2 *d)
{
	struct open_range *o = find(d->id);

	if (!o)
		return;
	o->color = (d->flags & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) ? d->color : 0;
	o->category = d->category;
	switch (d->payloadKind) {
	case CUPTI_METRIC_VALUE_KIND_DOUBLE:
		o->payload_kind = GP_NVTX_PAYLOAD_F64;
		memcpy(&o->payload, &d->payload.metricValueDouble, 8);
		break;
	case CUPTI_METRIC_VALUE_KIND_UINT64:
		o->payload_kind = GP_NVTX_PAYLOAD_U64;
		o->payload = d->payload.metricValueUint64;
		break;
	case CUPTI_METRIC_VALUE_KIND_INT64:
		o->payload_kind = GP_NVTX_PAYLOAD_I64;
		memcpy(&o->payload, &d->payload.metricValueInt64, 8);
		break;
	default:
		break;
	}
}

void gp_nvtx_close_all(uint64_t now)
{
	for (uint32_t i = 0; i < cap; i++)
		if (tab[i].id)
			emit_range(&tab[i], now, tab[i].tid, GP_REC_NVTX_RANGE, GP_NVTX_UNTERMINATED);
	free(tab);
	tab = NULL;
	cap = count = 0;
}
