/*
 * Unit tests of the recorder's NVTX tool (cupti/nvtx_tool.c) without a GPU: a
 * stand-in for NVTX's export table receives the handlers, the test calls
 * them as an NVTX instance would (some before the recorder exists, as
 * before cuInit), drains into a real ring and trace file and reads the
 * records back through the analyzer's reader.
 */
#define NVTX_NO_IMPL
#include "tap.h"

#include "recorder.h"

#include "../../cupti/nvtx_tool.h"
#include "cmd/cmd.h"
#include "read/reader.h"
#include "synth.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The stand-in NVTX instance: one slot per entry point, as nvtxInit.h has. */
static NvtxFunctionPointer core_fn[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer core2_fn[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *core_tab[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer *core2_tab[NVTX_CBID_CORE2_SIZE];

static int NVTX_API get_module(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned int *size)
{
	if (m == NVTX_CB_MODULE_CORE) {
		*out = core_tab;
		*size = NVTX_CBID_CORE_SIZE;
		return 1;
	}
	if (m == NVTX_CB_MODULE_CORE2) {
		*out = core2_tab;
		*size = NVTX_CBID_CORE2_SIZE;
		return 1;
	}
	return 0;
}

static const NvtxExportTableCallbacks callbacks = { sizeof(NvtxExportTableCallbacks), get_module };

static const void *NVTX_API get_export_table(uint32_t id)
{
	return id == NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

#define CORE(name, type) ((type)core_fn[NVTX_CBID_CORE_##name])
#define CORE2(name, type) ((type)core2_fn[NVTX_CBID_CORE2_##name])

static nvtxRangeId_t xthread_id, early_id;

static void *end_elsewhere(void *arg)
{
	(void)arg;
	/* Ends a range another thread started; this thread's events are
	 * drained first (newest thread first), so the end is read first. */
	CORE(RangeEnd, nvtxRangeEnd_impl_fntype)(xthread_id);
	CORE(RangePushA, nvtxRangePushA_impl_fntype)("worker");
	CORE(RangePop, nvtxRangePop_impl_fntype)();
	return NULL;
}

/* Marks with a 1000-byte name, more than the 4 MiB kept before tracing. */
#define FLOOD 20000

static void *flood(void *arg)
{
	static char name[1000];

	(void)arg;
	memset(name, 'x', sizeof(name) - 1);
	for (int i = 0; i < FLOOD; i++)
		CORE(MarkA, nvtxMarkA_impl_fntype)(name);
	return NULL;
}

/* A thread that first calls while no block is left, then after the drain. */
static sem_t late_ready, late_go;

static void *late(void *arg)
{
	(void)arg;
	CORE(MarkA, nvtxMarkA_impl_fntype)("late-1");
	sem_post(&late_ready);
	sem_wait(&late_go);
	CORE(MarkA, nvtxMarkA_impl_fntype)("late-2");
	return NULL;
}

struct seen {
	int nflood;
	char strings[64][64];
	struct gp_rec_nvtx ranges[32];
	int nranges;
	struct gp_rec_nvtx marks[8];
	int nmarks;
	struct gp_rec_nvtx opens[8]; /* GP_REC_NVTX_OPEN */
	int nopens, open_at[8], range_at[32], nrec;
};

static int collect(void *ctx, const struct gp_rec *rec)
{
	struct seen *s = ctx;

	s->nrec++;
	if (rec->type == GP_REC_STRING) {
		const struct gp_rec_string *r = (const void *)rec;

		if (r->id < 64)
			snprintf(s->strings[r->id], sizeof(s->strings[0]), "%.*s", (int)r->len,
				 (const char *)(r + 1));
	} else if (rec->type == GP_REC_NVTX_RANGE && s->nranges < 32) {
		s->range_at[s->nranges] = s->nrec;
		memcpy(&s->ranges[s->nranges++], rec, sizeof(s->ranges[0]));
	} else if (rec->type == GP_REC_NVTX_OPEN && s->nopens < 8) {
		s->open_at[s->nopens] = s->nrec;
		memcpy(&s->opens[s->nopens++], rec, sizeof(s->opens[0]));
	} else if (rec->type == GP_REC_NVTX_MARK) {
		const struct gp_rec_nvtx *m = (const void *)rec;

		if (m->name < 64 && !strncmp(s->strings[m->name], "xxxx", 4))
			s->nflood++;
		else if (s->nmarks < 8)
			memcpy(&s->marks[s->nmarks++], rec, sizeof(s->marks[0]));
	}
	return 0;
}

static const struct gp_rec_nvtx *range_named(const struct seen *s, const char *name)
{
	for (int i = 0; i < s->nranges; i++)
		if (s->ranges[i].name < 64 && !strcmp(s->strings[s->ranges[i].name], name))
			return &s->ranges[i];
	return NULL;
}

int main(void)
{
	char tmpl[300], dir[64] = "/tmp/gpuprof-nvtx-XXXXXX", err[512];
	struct ga_read_info info;
	static struct seen s;
	nvtxDomainHandle_t dom, dom2;
	nvtxEventAttributes_t a;
	uint64_t outer_id, inner_id;
	pthread_t th;
	int level, rc;

	for (int i = 0; i < NVTX_CBID_CORE_SIZE; i++)
		core_tab[i] = &core_fn[i];
	for (int i = 0; i < NVTX_CBID_CORE2_SIZE; i++)
		core2_tab[i] = &core2_fn[i];
	if (!mkdtemp(dir))
		return 1;

	tap_begin("handlers installed");
	CHECK(gp_nvtxtool_inject((const void *)get_export_table, 0) == 0);
	CHECK(gp_nvtxtool_inject((const void *)get_export_table, GP_NVTX_RECORD) == 1);
	CHECK(core_fn[NVTX_CBID_CORE_RangePushA] && core_fn[NVTX_CBID_CORE_RangeEnd] &&
	      core2_fn[NVTX_CBID_CORE2_DomainRangePushEx] && core2_fn[NVTX_CBID_CORE2_DomainCreateA]);
	CHECK(!core_fn[NVTX_CBID_CORE_NameOsThreadA]); /* left to NVTX's no-op */
	tap_end();

	/* Before the recorder exists (as before cuInit). */
	early_id = CORE(RangeStartA, nvtxRangeStartA_impl_fntype)("early");
	level = CORE(RangePushA, nvtxRangePushA_impl_fntype)("outer");
	outer_id = gp_nvtxtool_current();
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = 7;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff00ff00u;
	a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
	a.payload.dValue = 2.5;
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = L"inn\u00e9r";
	CORE(RangePushEx, nvtxRangePushEx_impl_fntype)(&a);
	inner_id = gp_nvtxtool_current();
	TAP_CHECK("push levels and current range",
		  level == 0 && outer_id && inner_id && inner_id != outer_id, "level %d", level);
	CORE(RangePop, nvtxRangePop_impl_fntype)();
	TAP_CHECK("pop returns to the outer range", gp_nvtxtool_current() == outer_id, "check failed");

	/* Nothing drains before tracing starts: only the first 4 MiB are kept. */
	pthread_create(&th, NULL, flood, NULL);
	pthread_join(th, NULL);
	{
		uint64_t dropped = atomic_load(&gp_rec.lost[GP_LOST_RING_FULL]);

		TAP_CHECK("events beyond 4 MiB before tracing are dropped and counted",
			  dropped > FLOOD / 2 && dropped < FLOOD, "dropped %llu",
			  (unsigned long long)dropped);
	}

	sem_init(&late_ready, 0, 0);
	sem_init(&late_go, 0, 0);
	pthread_create(&th, NULL, late, NULL);
	sem_wait(&late_ready);

	/* The recorder starts. */
	snprintf(tmpl, sizeof(tmpl), "%s/n", dir);
	memset(&gp_rec, 0, sizeof(gp_rec));
	gp_ring_init(&gp_rec.ring, 64 << 10, 4, 5000);
	gp_intern_init(&gp_rec.strings);
	rc = gp_tracefile_open(&gp_rec.file, tmpl, 0, GP_CLOCK_REALTIME, 1);
	TAP_CHECK("trace file created", rc == 0, "rc %d", rc);
	if (rc)
		return tap_exit();
	gp_tracefile_start(&gp_rec.file, &gp_rec.ring);
	gp_ring_lock(&gp_rec.ring);
	gp_emit_process(1, 0);
	gp_nvtxtool_drain();
	gp_ring_unlock(&gp_rec.ring);
	/* The drain gave the blocks back: the late thread records again. */
	sem_post(&late_go);
	pthread_join(th, NULL);

	xthread_id = CORE(RangeStartA, nvtxRangeStartA_impl_fntype)("xthread");
	pthread_create(&th, NULL, end_elsewhere, NULL);
	pthread_join(th, NULL);
	CORE(RangeEnd, nvtxRangeEnd_impl_fntype)(early_id);

	dom = CORE2(DomainCreateA, nvtxDomainCreateA_impl_fntype)("mydomain");
	dom2 = CORE2(DomainCreateA, nvtxDomainCreateA_impl_fntype)("mydomain");
	TAP_CHECK("a domain name has one handle", dom && dom == dom2, "check failed");
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = CORE2(DomainRegisterStringA, nvtxDomainRegisterStringA_impl_fntype)(dom, "dom_range");
	CORE2(DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(dom, &a);
	CORE(RangePushA, nvtxRangePushA_impl_fntype)("plain");
	/* Domain stacks are separate: this pops dom_range, not plain. */
	CORE2(DomainRangePop, nvtxDomainRangePop_impl_fntype)(dom);
	CORE(RangePop, nvtxRangePop_impl_fntype)();
	CORE(MarkA, nvtxMarkA_impl_fntype)("done");
	/* "outer" stays open: unterminated at exit, announced once (not again here). */
	gp_ring_lock(&gp_rec.ring);
	gp_nvtxtool_drain();
	gp_ring_unlock(&gp_rec.ring);

	gp_ring_lock(&gp_rec.ring);
	gp_nvtxtool_close_all(gp_now_realtime());
	gp_emit_end(gp_now_realtime());
	gp_ring_seal(&gp_rec.ring, GP_CHUNK_F_LAST);
	gp_ring_unlock(&gp_rec.ring);
	gp_tracefile_stop(&gp_rec.file, 5000);

	rc = ga_reader_read_file(gp_rec.file.path, collect, &s, &info, err, sizeof(err));
	TAP_CHECK("trace reads back", rc == GA_READ_OK, "rc %d: %s", rc, err);

	{
		const struct gp_rec_nvtx *o = range_named(&s, "outer"), *i = range_named(&s, "inn\xc3\xa9r"),
					 *x = range_named(&s, "xthread"), *e = range_named(&s, "early"),
					 *w = range_named(&s, "worker"), *d = range_named(&s, "dom_range"),
					 *p = range_named(&s, "plain");
		double pay = 0;

		tap_begin("push/pop ranges from before the recorder started");
		CHECK(o && i);
		if (o && i) {
			CHECK(o->id == outer_id && i->id == inner_id);
			CHECK(o->h.aux == (GP_NVTX_PUSHPOP | GP_NVTX_UNTERMINATED));
			CHECK(i->h.aux == GP_NVTX_PUSHPOP && i->depth == 1 && o->depth == 0);
			CHECK(i->start >= o->start && i->end <= o->end && i->end > i->start);
			memcpy(&pay, &i->payload, 8);
			CHECKF(i->category == 7 && i->color == 0xff00ff00u &&
				       i->payload_kind == GP_NVTX_PAYLOAD_F64 && pay == 2.5,
			       "cat %u color %x kind %u", i->category, i->color, i->payload_kind);
		}
		tap_end();

		tap_begin("ranges open at a drain are announced once, before their own records");
		/* Open at the first drain: outer, and early (ended after it); not at the second. */
		CHECKF(s.nopens == 2, "%d announcements", s.nopens);
		for (int j = 0; j < s.nopens; j++) {
			const struct gp_rec_nvtx *an = &s.opens[j], *r = NULL;
			int at = -1;

			for (int q = 0; q < s.nranges; q++)
				if (s.ranges[q].id == an->id) {
					r = &s.ranges[q];
					at = s.range_at[q];
				}
			CHECKF(r && (r == o || r == e) && an->end == 0 && an->start == r->start &&
				       an->name == r->name && an->tid_start == r->tid_start &&
				       an->h.aux == (r->h.aux & GP_NVTX_PUSHPOP) && s.open_at[j] < at,
			       "announcement %d: id %llu", j, (unsigned long long)an->id);
		}
		tap_end();

		tap_begin("start/end range ended on another thread");
		CHECK(x && w && e);
		if (x && w && e) {
			CHECKF(x->tid_start != x->tid_end && x->tid_end == w->tid_start,
			       "tids %u %u worker %u", x->tid_start, x->tid_end, w->tid_start);
			CHECK(!(x->h.aux & (GP_NVTX_PUSHPOP | GP_NVTX_UNTERMINATED)));
			CHECK(x->end >= x->start && x->id == xthread_id);
			CHECK(e->id == early_id && e->end > e->start && !(e->h.aux & GP_NVTX_UNTERMINATED));
		}
		tap_end();

		tap_begin("domains, registered strings, per-domain stacks, marks");
		CHECK(d && p && s.nmarks == 2);
		if (d && p) {
			CHECKF(d->domain && !strcmp(s.strings[d->domain], "mydomain"), "domain %u",
			       d->domain);
			CHECK(!p->domain && p->end >= d->end && !(p->h.aux & GP_NVTX_UNTERMINATED));
		}
		{
			int done = 0, late1 = 0, late2 = 0;

			for (int k = 0; k < s.nmarks; k++) {
				const char *n = s.strings[s.marks[k].name];

				done += !strcmp(n, "done");
				late1 += !strcmp(n, "late-1");
				late2 += !strcmp(n, "late-2");
			}
			CHECKF(done == 1 && late1 == 0 && late2 == 1,
			       "done %d, late-1 %d (no block then), late-2 %d", done, late1, late2);
		}
		CHECKF(s.nranges == 7, "%d ranges", s.nranges);
		/* Kept from the flood: what fit in 4 MiB of 1.05 KiB events. */
		CHECKF(s.nflood > 3000 && s.nflood <= 4 * 1024 * 1024 / 1040, "%d flood marks",
		       s.nflood);
		tap_end();
	}

	/* The attributes reach the Chrome export's range events. */
	{
		char *argv[] = { "export", "--format", "chrome", gp_rec.file.path, NULL }, *out = NULL;
		char want[128];

		rc = synth_capture(dir, &out, NULL, cmd_export, 4, argv);
		tap_begin("chrome export: category, color, payload, ending thread");
		CHECKF(rc == 0 && out, "rc %d", rc);
		if (out) {
			const char *inner = strstr(out, "{\"name\":\"inn\xc3\xa9r\"");
			const char *x = strstr(out, "{\"name\":\"xthread\"");

			CHECK(inner && x);
			CHECKF(inner && strstr(inner, "\"category\":7,\"color\":\"#00ff00\","
						      "\"payload\":2.5}"),
			       "%.300s", inner ? inner : out);
			snprintf(want, sizeof(want), "\"ended_on_tid\":%u",
				 x ? range_named(&s, "xthread")->tid_end : 0);
			CHECKF(x && strstr(x, want) && strstr(x, want) < strstr(x, "}}"), "%.300s",
			       x ? x : out);
		}
		tap_end();
		free(out);
	}

	gp_intern_free(&gp_rec.strings);
	gp_ring_destroy(&gp_rec.ring);
	snprintf(err, sizeof(err), "rm -rf %s", dir);
	if (system(err))
		(void)0;
	return tap_exit();
}
