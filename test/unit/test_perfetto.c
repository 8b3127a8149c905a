/*
 * Unit tests of the Perfetto protobuf export (analyzer/views/perfetto.c)
 * and its writer (analyzer/base/pbw.c): the wire format byte for byte;
 * the strict lane rule (views/tracks.c) that keeps begin/end pairs from
 * closing each other's slices; and exports of synthetic traces whose
 * times tie (slices that touch, calls that begin with the call they make,
 * written in any order) decoded here and replayed as Perfetto imports
 * them: per track, begin and end events sorted by time with ties in file
 * order, each end closing the innermost open slice, which must give back
 * exactly the slices written (test/golden/perfetto-checks.py does the
 * same with protoc on the golden traces); GPU metrics sampled over time
 * as counter tracks.  Test code, runs offline only.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pbw.h"
#include "cmd/cmd.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"
#include "views/tracks.h"

#define T0 1700000000000000000ull

static char dir[64];

static void test_wire(void)
{
	static const uint8_t want[] = {
		0x08, 0xac, 0x02,                          /* 1: 300 */
		0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 2: -1 */
		0x19, 1, 2, 3, 4, 5, 6, 7, 8,              /* 3: fixed64 */
		0x22, 0x02, 'h', 'i',                      /* 4: "hi" */
	};
	struct ga_pbw w;
	int ok;

	tap_begin("pbw: varints, negative ints, fixed64, strings, nested lengths");
	ga_pbw_init(&w);
	ga_pbw_varint(&w, 1, 300);
	ga_pbw_int(&w, 2, -1);
	ga_pbw_fixed64(&w, 3, 0x0807060504030201ull);
	ga_pbw_str(&w, 4, "hi");
	CHECKF(!w.err && w.len == sizeof(want) && !memcmp(w.p, want, sizeof(want)),
	       "%zu bytes", w.len);
	/* A message of 200 bytes in one of 3: lengths of two bytes, contents moved. */
	w.len = 0;
	ga_pbw_open(&w, 1);
	ga_pbw_varint(&w, 7, 1);
	ga_pbw_open(&w, 2);
	for (int i = 0; i < 100; i++)
		ga_pbw_varint(&w, 5, 1);        /* 2 bytes each */
	ga_pbw_close(&w);
	ga_pbw_close(&w);
	/* outer: key, len 205 = 0xcd 0x01; 7:1 (2); inner key, len 200 = 0xc8 0x01; 200 */
	ok = w.len == 3 + 2 + 3 + 200 && w.p[0] == 0x0a && w.p[1] == 0xcd && w.p[2] == 0x01 &&
	     w.p[3] == 0x38 && w.p[4] == 1 && w.p[5] == 0x12 && w.p[6] == 0xc8 && w.p[7] == 0x01 &&
	     w.p[8] == 0x28 && w.p[9] == 1 && w.p[w.len - 2] == 0x28 && w.p[w.len - 1] == 1;
	CHECKF(ok && !w.err, "%zu bytes: %02x %02x %02x", w.len, w.p[0], w.p[1], w.p[2]);
	/* Too deep: remembered, nothing written beyond. */
	for (int i = 0; i < GA_PBW_DEPTH + 1; i++)
		ga_pbw_open(&w, 1);
	CHECK(w.err);
	ga_pbw_free(&w);
	tap_end();
}

static void test_strict_lanes(void)
{
	struct ga_lane l;

	tap_begin("lanes: the strict rule refuses what begin/end pairs would pair wrongly");
	memset(&l, 0, sizeof(l));
	ga_lane_put(&l, 100, 200);
	/* Ends where the kept one begins: it would close the kept one. */
	CHECK(ga_lane_fits(&l, 0, 0, 50, 100));
	CHECK(!ga_lane_fits(&l, 0, 1, 50, 100));
	/* Begins where the kept one ends: fine either way. */
	CHECK(ga_lane_fits(&l, 0, 1, 200, 300));
	/* Contains it, beginning with it: the kept one would be the outer one. */
	CHECK(ga_lane_fits(&l, 1, 0, 100, 300));
	CHECK(!ga_lane_fits(&l, 1, 1, 100, 300));
	/* Contains it, beginning before, or the very same span: fine. */
	CHECK(ga_lane_fits(&l, 1, 1, 50, 200));
	CHECK(ga_lane_fits(&l, 1, 1, 100, 200));
	/* A zero-length slice where the kept one begins nests at its start. */
	CHECK(ga_lane_fits(&l, 0, 1, 100, 100) == ga_lane_fits(&l, 0, 0, 100, 100));
	/* Put there, it still leaves [100, 200) to check against (the last ended last before). */
	ga_lane_put(&l, 100, 100);
	CHECK(!ga_lane_fits(&l, 0, 0, 150, 300));
	CHECK(!ga_lane_fits(&l, 0, 1, 150, 300));
	CHECK(ga_lane_fits(&l, 0, 1, 200, 300));
	tap_end();
}

/* ga_lane_put() as it was before its fast path for a slice after every kept start. */
static void lane_put_ref(struct ga_lane *l, uint64_t s, uint64_t e)
{
	uint32_t i, j = 0;

	for (i = 0; i < l->n; i++) {
		if (s <= l->s[i] && l->e[i] <= e)
			continue;
		l->s[j] = l->s[i];
		l->e[j] = l->e[i];
		j++;
	}
	for (i = j; i > 0 && (l->s[i - 1] > s || (l->s[i - 1] == s && l->e[i - 1] > e)); i--) {
		l->s[i] = l->s[i - 1];
		l->e[i] = l->e[i - 1];
	}
	l->s[i] = s;
	l->e[i] = e;
	l->n = j + 1;
	if (l->n > GA_LANE_KEEP) {
		l->e[0] = l->e[1] > l->e[0] ? l->e[1] : l->e[0];
		memmove(&l->s[1], &l->s[2], (GA_LANE_KEEP - 1) * sizeof(l->s[0]));
		memmove(&l->e[1], &l->e[2], (GA_LANE_KEEP - 1) * sizeof(l->e[0]));
		l->n = GA_LANE_KEEP;
	}
}

static void test_lane_put(void)
{
	struct ga_lane a, b;
	uint64_t r = 99991, t = 1000;
	int same = 1;

	tap_begin("lanes: a slice put or appended after every kept start keeps what the general rule keeps");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (int i = 0; i < 200000 && same; i++) {
		uint64_t s, e;

		r = r * 6364136223846793005ull + 1442695040888963407ull;
		/* Mostly forward, some ties, zero lengths and nested or earlier slices. */
		switch (r >> 60) {
		case 0:
			s = t - (r >> 40) % 50;
			break;
		case 1:
			s = t;
			break;
		default:
			s = t + (r >> 40) % 20;
		}
		e = s + ((r >> 20) % 4 == 0 ? 0 : (r >> 24) % 40);
		if (ga_lane_fits(&a, 1, (r >> 30) & 1, s, e)) {
			/* The exports' inline append where it may go, half the time. */
			if (ga_lane_after(&a, s) && (r >> 31) & 1)
				ga_lane_append(&a, s, e);
			else
				ga_lane_put(&a, s, e);
			lane_put_ref(&b, s, e);
			same = a.n == b.n && !memcmp(a.s + a.off, b.s, a.n * sizeof(a.s[0])) &&
			       !memcmp(a.e + a.off, b.e, a.n * sizeof(a.e[0]));
		}
		t = s > t ? s : t;
	}
	CHECK(same);
	tap_end();
}

/* ---- A decoder of what the export writes, and Perfetto's replay of it. ---- */

struct ev {
	uint64_t track, ts, order;
	uint32_t seq, name;
	int end;                   /* 0 begin, 1 end */
};

struct sl {
	uint64_t track, s, e;
	uint64_t name;             /* seq << 32 | iid */
};

/* A counter's value, and a track's name. */
struct cv {
	uint64_t track, ts;
	double v;
};

struct tn {
	uint64_t uuid;
	char name[96];
};

struct dec {
	struct cv *cv;
	size_t ncv, capcv;
	struct tn *tn;
	size_t ntn, captn;
	struct ev *ev;
	size_t nev, capev;
	struct sl *want;           /* slices written: a begin and the end after it */
	size_t nwant, capwant;
	char why[200];
};

struct seqst {
	uint64_t track, last, bts;
	uint32_t clock, bname;
	int open, has;
};

static int rd_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80)
			return 0;
		shift += 7;
	}
	return -1;
}

/*
 * Call fn for each field of [p, end): number, wire type, varint value or
 * the bytes of a length-delimited field.  -1 when malformed.
 */
static int fields(const uint8_t *p, const uint8_t *end,
		  int (*fn)(void *ctx, uint32_t f, uint64_t v, const uint8_t *b, size_t n),
		  void *ctx)
{
	while (p < end) {
		uint64_t key, v = 0;
		const uint8_t *b = NULL;

		if (rd_varint(&p, end, &key))
			return -1;
		switch (key & 7) {
		case 0:
			if (rd_varint(&p, end, &v))
				return -1;
			break;
		case 1:
			if (end - p < 8)
				return -1;
			memcpy(&v, p, 8);
			p += 8;
			break;
		case 2:
			if (rd_varint(&p, end, &v) || (uint64_t)(end - p) < v)
				return -1;
			b = p;
			p += v;
			break;
		default:
			return -1;
		}
		if (fn(ctx, (uint32_t)(key >> 3), v, b, (size_t)v))
			return -1;
	}
	return 0;
}

struct pkt {
	uint64_t ts, clock, seq, flags, type, name, flow, dbl;
	int has_ts, has_clock, has_te, has_defaults, has_snap, has_desc;
	uint64_t desc_uuid;
	char desc_name[96];
	uint64_t def_clock, def_track, snap64;
};

static int f_inner(void *ctx, uint32_t f, uint64_t v, const uint8_t *b, size_t n);

/* Which message f_inner is reading, by its place. */
enum { M_TE, M_DEF, M_TED, M_SNAP, M_CLK, M_DESC };
struct inner {
	struct pkt *k;
	int m;
	uint64_t clk_id, clk_ts;
};

static int f_inner(void *ctx, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct inner *in = ctx, sub = *in;

	switch (in->m) {
	case M_TE:
		if (f == 9)
			in->k->type = v;
		else if (f == 10)
			in->k->name = v;
		else if (f == 47)
			in->k->flow = v;
		else if (f == 44)
			in->k->dbl = v;
		return 0;
	case M_DESC:
		if (f == 1)
			in->k->desc_uuid = v;
		else if (f == 2 && b)
			snprintf(in->k->desc_name, sizeof(in->k->desc_name), "%.*s", (int)n,
				 (const char *)b);
		return 0;
	case M_DEF:
		if (f == 58)
			in->k->def_clock = v;
		if (f == 11 && b) {
			sub.m = M_TED;
			return fields(b, b + n, f_inner, &sub);
		}
		return 0;
	case M_TED:
		if (f == 11)
			in->k->def_track = v;
		return 0;
	case M_SNAP:
		if (f == 1 && b) {
			sub.m = M_CLK;
			sub.clk_id = sub.clk_ts = 0;
			if (fields(b, b + n, f_inner, &sub))
				return -1;
			if (sub.clk_id == 64)
				in->k->snap64 = sub.clk_ts;
		}
		return 0;
	case M_CLK:
		if (f == 1)
			in->clk_id = v;
		else if (f == 2)
			in->clk_ts = v;
		return 0;
	}
	return 0;
}

static int f_packet(void *ctx, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct pkt *k = ctx;
	struct inner in = { k, M_TE, 0, 0 };

	switch (f) {
	case 8: k->ts = v; k->has_ts = 1; return 0;
	case 58: k->clock = v; k->has_clock = 1; return 0;
	case 10: k->seq = v; return 0;
	case 13: k->flags = v; return 0;
	case 11: k->has_te = 1; in.m = M_TE; return fields(b, b + n, f_inner, &in);
	case 59: k->has_defaults = 1; in.m = M_DEF; return fields(b, b + n, f_inner, &in);
	case 6: k->has_snap = 1; in.m = M_SNAP; return fields(b, b + n, f_inner, &in);
	case 60: k->has_desc = 1; in.m = M_DESC; return fields(b, b + n, f_inner, &in);
	}
	return 0;
}

#define MAXSEQ 4096

/* Decode the export into events and the slices written.  0, or -1 (why set). */
static int decode(struct dec *d, const uint8_t *p, size_t len)
{
	static struct seqst st[MAXSEQ];
	const uint8_t *end = p + len;
	uint64_t order = 0;

	memset(st, 0, sizeof(st));
	while (p < end) {
		uint64_t key, n, ts;
		struct pkt k;
		struct seqst *q;

		if (rd_varint(&p, end, &key) || key != 0x0a || rd_varint(&p, end, &n) ||
		    (uint64_t)(end - p) < n) {
			snprintf(d->why, sizeof(d->why), "not a Trace at packet %llu",
				 (unsigned long long)order);
			return -1;
		}
		memset(&k, 0, sizeof(k));
		if (fields(p, p + n, f_packet, &k)) {
			snprintf(d->why, sizeof(d->why), "packet %llu malformed",
				 (unsigned long long)order);
			return -1;
		}
		p += n;
		order++;
		if (k.seq >= MAXSEQ) {
			snprintf(d->why, sizeof(d->why), "sequence %llu", (unsigned long long)k.seq);
			return -1;
		}
		q = &st[k.seq];
		if (k.flags & 1) {
			memset(q, 0, sizeof(*q));
			q->has = 1;
		}
		if (k.has_defaults) {
			q->clock = (uint32_t)k.def_clock;
			q->track = k.def_track;
		}
		if (k.has_snap)
			q->last = k.snap64;
		if (k.has_desc && k.desc_name[0]) {
			if (ga_util_grow(&d->tn, &d->captn, d->ntn + 1, sizeof(*d->tn)))
				return -1;
			d->tn[d->ntn].uuid = k.desc_uuid;
			memcpy(d->tn[d->ntn++].name, k.desc_name, sizeof(k.desc_name));
		}
		if (!k.has_te)
			continue;
		if (!q->has || !(k.flags & 2) || !k.has_ts) {
			snprintf(d->why, sizeof(d->why), "packet %llu: no state, flag or time",
				 (unsigned long long)order);
			return -1;
		}
		if (k.has_clock && k.clock == 6) {
			ts = k.ts;
		} else {
			ts = q->last + k.ts;
			q->last = ts;
		}
		if (k.type == 4) {
			if (ga_util_grow(&d->cv, &d->capcv, d->ncv + 1, sizeof(*d->cv)))
				return -1;
			d->cv[d->ncv].track = q->track;
			d->cv[d->ncv].ts = ts;
			memcpy(&d->cv[d->ncv++].v, &k.dbl, sizeof(double));
		}
		if (k.type == 1 || k.type == 2) {
			struct ev *e;

			if (ga_util_grow(&d->ev, &d->capev, d->nev + 1, sizeof(*d->ev)))
				return -1;
			e = &d->ev[d->nev++];
			e->track = q->track;
			e->ts = ts;
			e->order = order;
			e->seq = (uint32_t)k.seq;
			e->name = (uint32_t)k.name;
			e->end = k.type == 2;
		}
		if (k.type == 1) {
			if (q->open) {
				snprintf(d->why, sizeof(d->why), "two begins on sequence %llu",
					 (unsigned long long)k.seq);
				return -1;
			}
			q->open = 1;
			q->bts = ts;
			q->bname = (uint32_t)k.name;
		} else if (k.type == 2) {
			struct sl *s;

			if (!q->open) {
				snprintf(d->why, sizeof(d->why), "an end without a begin");
				return -1;
			}
			q->open = 0;
			if (ga_util_grow(&d->want, &d->capwant, d->nwant + 1, sizeof(*d->want)))
				return -1;
			s = &d->want[d->nwant++];
			s->track = q->track;
			s->s = q->bts;
			s->e = ts;
			s->name = k.seq << 32 | q->bname;
		}
	}
	return 0;
}

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_sl(const void *pa, const void *pb)
{
	const struct sl *a = pa, *b = pb;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	if (a->e != b->e)
		return a->e < b->e ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/*
 * Perfetto's replay: per track by (time, file order), each end closing
 * the innermost open slice.  Returns how many slices it builds other
 * than those written (0: all nest), or -1 out of memory.
 */
static long replay(struct dec *d)
{
	struct sl *built = malloc((d->nwant ? d->nwant : 1) * sizeof(*built));
	size_t *stack = malloc((d->nev ? d->nev : 1) * sizeof(*stack)), ns = 0, nb = 0;
	long bad = 0;

	if (!built || !stack) {
		free(built);
		free(stack);
		return -1;
	}
	qsort(d->ev, d->nev, sizeof(*d->ev), cmp_ev);
	for (size_t i = 0; i < d->nev; i++) {
		const struct ev *e = &d->ev[i];

		if (i && e->track != d->ev[i - 1].track) {
			bad += (long)ns;
			ns = 0;
		}
		if (!e->end) {
			stack[ns++] = i;
		} else if (!ns) {
			bad++;
		} else {
			const struct ev *b = &d->ev[stack[--ns]];

			if (nb < d->nwant) {
				built[nb].track = b->track;
				built[nb].s = b->ts;
				built[nb].e = e->ts;
				built[nb].name = (uint64_t)b->seq << 32 | b->name;
				nb++;
			}
		}
	}
	bad += (long)ns;
	if (nb != d->nwant)
		bad += labs((long)d->nwant - (long)nb);
	qsort(built, nb, sizeof(*built), cmp_sl);
	qsort(d->want, d->nwant, sizeof(*d->want), cmp_sl);
	for (size_t i = 0; i < nb && i < d->nwant; i++)
		bad += cmp_sl(&built[i], &d->want[i]) != 0;
	free(built);
	free(stack);
	return bad;
}

/*
 * Export path as Perfetto protobuf, decode and replay it: slices written,
 * or -1.  With keep, the decoded counters and track names stay there.
 */
static long export_and_replay(const char *path, const char *out, long *bad, char *why,
			      size_t whylen, struct dec *keep)
{
	struct dec d;
	unsigned char *buf;
	size_t len = 0;
	char *so = NULL, *se = NULL;
	int rc;
	long n = -1;

	memset(&d, 0, sizeof(d));
	rc = synth_run(dir, &so, &se, cmd_export, "export", "-t", "perfetto", "--no-symbolize",
		       "-o", out, path, (char *)NULL);
	snprintf(why, whylen, "export exited %d: %.150s", rc, se ? se : "");
	free(so);
	free(se);
	if (rc)
		return -1;
	buf = synth_slurp(out, &len);
	if (!buf)
		return -1;
	if (decode(&d, buf, len)) {
		snprintf(why, whylen, "%s", d.why);
	} else {
		*bad = replay(&d);
		n = (long)d.nwant;
	}
	free(buf);
	free(d.ev);
	free(d.want);
	if (keep) {
		*keep = d;
	} else {
		free(d.cv);
		free(d.tn);
	}
	return n;
}

/*
 * Ties written in the order that pairs them wrongly, unless each goes on
 * a lane of its own: on stream 7, k2 [300, 400) before k1 [200, 300),
 * which ends where k2 begins; on thread 100 the driver's call [1000,
 * 1100) before the runtime's [1000, 1500) that makes it and begins with
 * it; a push/pop range [500, 1000) written at the end, ending where the
 * runtime call begins.
 */
static void test_ties(void)
{
	char path[128], out[128], why[256];
	struct synth *s;
	uint64_t t = T0 + 1000;
	uint32_t k1, k2, rt, drv, rg;
	long n, bad = -1;

	snprintf(path, sizeof(path), "%s/ties.gpuprof", dir);
	snprintf(out, sizeof(out), "%s/ties.pftrace", dir);
	s = synth_open(path);
	synth_process(s, 4242, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	k1 = synth_string(s, "_Z2k1v");
	k2 = synth_string(s, "_Z2k2v");
	rt = synth_string(s, "cudaLaunchKernel");
	drv = synth_string(s, "cuLaunchKernel");
	rg = synth_string(s, "step");
	synth_api_corr(s, drv, t + 1000, t + 1100, 100, 2, GP_API_DRIVER);
	synth_api_corr(s, rt, t + 1000, t + 1500, 100, 1, GP_API_RUNTIME);
	synth_kernel_at_corr(s, k2, t + 2300, t + 2400, 0, 7, 1);
	synth_kernel_at_corr(s, k1, t + 2200, t + 2300, 0, 7, 2);
	synth_nvtx_range(s, rg, 0, t + 500, t + 1000, 100, 100, 1, GP_NVTX_PUSHPOP);
	synth_end(s, t + 100000, 0);
	synth_close(s, NULL, NULL);
	tap_begin("perfetto: slices whose times tie, written in any order, nest as written");
	n = export_and_replay(path, out, &bad, why, sizeof(why), NULL);
	CHECKF(n == 5 && bad == 0, "%ld slices, %ld built otherwise: %s", n, bad, why);
	tap_end();
}

/*
 * API calls, ranges of two domains (push/pop, and one in eight start/end)
 * and kernels at random times on a grid of 100 ns (so that many tie) and
 * in random order: Perfetto's replay builds exactly the slices written.
 */
static void test_random(void)
{
	char path[128], out[128], why[256];
	long n, bad = -1, want = 3000;

	snprintf(path, sizeof(path), "%s/random.gpuprof", dir);
	snprintf(out, sizeof(out), "%s/random.pftrace", dir);
	synth_random_app(path, 4243, T0, 100, 200000, 1);
	tap_begin("perfetto: the slices of a trace of random, tying times nest as written");
	n = export_and_replay(path, out, &bad, why, sizeof(why), NULL);
	CHECKF(n == want && bad == 0, "%ld of %ld slices, %ld built otherwise: %s", n, want, bad,
	       why);
	tap_end();
}

/*
 * Kernels on 300 streams, interleaved: sequence ids past 127 take two
 * bytes in every packet's head (perfetto.c makes each sequence's once).
 */
static void test_many_streams(void)
{
	enum { STREAMS = 300 };
	enum { EACH = 2 };
	char path[128], out[128], why[256];
	struct synth *s;
	uint32_t k;
	long n, bad = -1;

	snprintf(path, sizeof(path), "%s/streams.gpuprof", dir);
	snprintf(out, sizeof(out), "%s/streams.pftrace", dir);
	s = synth_open(path);
	synth_process(s, 4244, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	k = synth_string(s, "_Z1kv");
	for (uint32_t i = 0; i < STREAMS * EACH; i++)
		synth_kernel(s, k, T0 + 1000 * i, T0 + 1000 * i + 700, 0, 7 + i % STREAMS, 0, 0);
	synth_end(s, T0 + 1000 * STREAMS * EACH + 1000, 0);
	synth_close(s, NULL, NULL);
	tap_begin("perfetto: kernels of 300 streams, a sequence each, nest as written");
	n = export_and_replay(path, out, &bad, why, sizeof(why), NULL);
	CHECKF(n == STREAMS * EACH && bad == 0, "%ld slices, %ld built otherwise: %s", n, bad, why);
	tap_end();
}

/* A GPU_SERIES record: series id, device, metric names (string ids). */
static void series(struct synth *s, uint32_t id, uint32_t device, const uint32_t *names,
		   uint32_t n)
{
	unsigned char buf[128];
	struct gp_rec_gpu_series r;
	uint32_t size = (uint32_t)sizeof(r) + (n * 4 + 7) / 8 * 8;

	memset(&r, 0, sizeof(r));
	memset(buf, 0, sizeof(buf));
	r.h.type = GP_REC_GPU_SERIES;
	r.h.size = (uint16_t)size;
	r.h.aux = n;
	r.id = id;
	r.device = device;
	r.source = GP_GPU_SRC_PM;
	r.interval_ns = 1000;
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), names, n * 4);
	synth_rec(s, buf, size);
}

static void sample(struct synth *s, uint32_t id, uint64_t start, double a, double b)
{
	unsigned char buf[sizeof(struct gp_rec_gpu_sample) + 16];
	struct gp_rec_gpu_sample r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_GPU_SAMPLE;
	r.h.size = sizeof(buf);
	r.h.aux = 2;
	r.start = start;
	r.end = start + 1000;
	r.series = id;
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), &a, 8);
	memcpy(buf + sizeof(r) + 8, &b, 8);
	synth_rec(s, buf, sizeof(buf));
}

/* The values of the counter track named name, in file order, into v (at most 8). */
static size_t counter_values(const struct dec *d, const char *name, uint64_t *ts, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < d->ntn; i++) {
		if (strcmp(d->tn[i].name, name))
			continue;
		for (size_t j = 0; j < d->ncv && n < 8; j++) {
			if (d->cv[j].track != d->tn[i].uuid)
				continue;
			ts[n] = d->cv[j].ts;
			v[n++] = d->cv[j].v;
		}
		break;
	}
	return n;
}

/*
 * GPU metrics sampled over time (GP_REC_GPU_SERIES, GP_REC_GPU_SAMPLE): a
 * counter track per device and metric, a value at each sample's start, a
 * value not read (NaN) left out.
 */
static void test_gpu_samples(void)
{
	char path[128], out[128], why[256];
	struct synth *s;
	struct dec d;
	uint64_t t = T0 + 1000, ts[8];
	uint32_t names[2];
	double v[8];
	size_t n;
	long bad = -1;

	snprintf(path, sizeof(path), "%s/samples.gpuprof", dir);
	snprintf(out, sizeof(out), "%s/samples.pftrace", dir);
	s = synth_open(path);
	synth_process(s, 4244, "host", "./app", UINT32_MAX, T0);
	synth_config(s, GP_TRACE_KERNEL, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 80ull << 30, 0x10);
	names[0] = synth_string(s, "sm__throughput");
	names[1] = synth_string(s, "dram__bytes");
	series(s, 1, 0, names, 2);
	sample(s, 1, t + 1000, 10, 20);
	sample(s, 1, t + 2000, NAN, 30);
	sample(s, 1, t + 3000, 40.5, 50);
	synth_kernel(s, synth_string(s, "_Z1kv"), t + 1500, t + 2500, 0, 7, 0, 0);
	synth_end(s, t + 100000, 0);
	synth_close(s, NULL, NULL);
	tap_begin("perfetto: sampled GPU metrics are counter tracks, a value per sample read");
	memset(&d, 0, sizeof(d));
	CHECKF(export_and_replay(path, out, &bad, why, sizeof(why), &d) == 1 && bad == 0, "%s",
	       why);
	n = counter_values(&d, "cuda:0 sm__throughput", ts, v);
	CHECKF(n == 2 && ts[0] == t + 1000 && v[0] == 10 && ts[1] == t + 3000 && v[1] == 40.5,
	       "%zu values of sm__throughput", n);
	n = counter_values(&d, "cuda:0 dram__bytes", ts, v);
	CHECKF(n == 3 && ts[1] == t + 2000 && v[0] == 20 && v[1] == 30 && v[2] == 50,
	       "%zu values of dram__bytes", n);
	free(d.cv);
	free(d.tn);
	tap_end();
}

/* The crossing rule of an API call against one thread's ranges, as a sort of every range gives it. */
struct pr {
	uint64_t s, e;
	uint32_t i;
};

static int by_s(const void *pa, const void *pb)
{
	const struct pr *a = pa, *b = pb;

	return a->i < b->i ? -1 : a->i > b->i;
}

static int by_e(const void *pa, const void *pb)
{
	const struct pr *a = pa, *b = pb;

	if (a->e != b->e)
		return a->e < b->e ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int crosses_ref(const struct pr *bs, const struct pr *be, size_t n, uint64_t s,
		       uint64_t t, int strict)
{
	size_t lo, hi, look = 0;

	for (lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (bs[mid].s < s || (!strict && bs[mid].s == s))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && bs[lo].s < t; lo++)
		if (++look > 64 || bs[lo].e > t)
			return 1;
	for (lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (be[mid].e < s || (!strict && be[mid].e == s))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && be[lo].e < t; lo++)
		if (++look > 64 || be[lo].s < s)
			return 1;
	return 0;
}

static int cmp_rr(const void *pa, const void *pb)
{
	const struct ga_ranges_range *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * Push/pop ranges of two threads (random nesting, times that tie), laid
 * out from ranges kept and from their external sort (added in the order
 * they closed, runs of 4096): the same ranges in the same order on the same
 * tracks, and every API call's crossing, asked in time order and in any
 * order, what a sort of every range gives.
 */
static void test_range_layout(void)
{
	enum { N = 200000,
	       Q = 20000 }; /* thread 7's own track: more blocks than the cache holds */
	struct ga_ranges rg, sp;
	struct ga_range_layout a = { 0 }, b = { 0 };
	struct ga_ranges_key key = { 0 };
	struct ga_ranges_range *r = calloc(N, sizeof(*r));
	struct pr *bs = calloc(N, sizeof(*bs)), *be = calloc(N, sizeof(*be));
	uint64_t open[64], stack_id[64], t = 1000, x = 12345;
	uint32_t nha = 0, nhb = 0, depth = 0, nown = 0;
	size_t n = 0, bad_order = 0, bad_cross = 0, nq = 0;

	tap_begin("range layout: spilled ranges laid out as kept ones; API calls cross as by every range");
	while (n < N) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		t += (x >> 33) % 4; /* ties one time in four */
		if (depth < 64 && (depth == 0 || (x >> 40) % 2)) {
			open[depth] = t;
			stack_id[depth++] = n + 1000;
		} else if (depth) {
			depth--;
			r[n].start = open[depth];
			r[n].end = t;
			r[n].id = stack_id[depth];
			r[n].tid = (x >> 50) % 5 ? 7 : 9; /* thread 9's: a second segment */
			r[n].pushpop = 1;
			r[n].parent = GA_RANGES_NONE;
			n++;
		}
	}
	ga_ranges_init(&rg);
	ga_ranges_init(&sp);
	rg.keys = sp.keys = &key;
	rg.nkeys = sp.nkeys = 1;
	/* Spilled in the order they closed, as the scan adds them. */
	sp.spill = 1;
	sp.spill_threads = 1; /* threads 7 and 9 */
	ga_xsort_init(&sp.spilled, sizeof(struct ga_ranges_srec), 4096);
	for (size_t i = 0; i < n; i++) {
		struct ga_ranges_srec *w = ga_xsort_slot(&sp.spilled);

		if (!w)
			break;
		memset(w, 0, sizeof(*w));
		w->key = r[i].start;
		w->r = r[i];
		w->seq = i;
	}
	qsort(r, n, sizeof(*r), cmp_rr);
	rg.ranges = r;
	rg.nranges = n;
	CHECK(ga_range_layout_build(&a, &rg, &nha) == 0);
	CHECK(ga_range_layout_build(&b, &sp, &nhb) == 0);
	for (size_t i = 0; i < n; i++) {
		const struct ga_ranges_srec *ka = ga_range_layout_next(&a);
		struct ga_ranges_srec kb;
		const struct ga_ranges_srec *pb;

		if (!ka) {
			bad_order++;
			break;
		}
		kb = *ka;
		pb = ga_range_layout_next(&b);
		if (!pb || pb->r.start != kb.r.start || pb->r.end != kb.r.end ||
		    pb->r.id != kb.r.id || pb->track != kb.track || pb->seq != i)
			bad_order++;
		if (kb.r.tid == 7 && kb.track == 7) {
			bs[nown] = (struct pr){ kb.r.start, kb.r.end, (uint32_t)i };
			nown++;
		}
	}
	CHECK(!ga_range_layout_next(&a) && !ga_range_layout_next(&b) && !a.err[0] && !b.err[0]);
	CHECKF(bad_order == 0 && nown > n / 2, "%zu ranges out of order or on other tracks, %u of "
					       "thread 7 on its own track",
	       bad_order, nown);
	qsort(bs, nown, sizeof(*bs), by_s);
	memcpy(be, bs, nown * sizeof(*be));
	qsort(be, nown, sizeof(*be), by_e);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t q = 900;

		for (size_t i = 0; i < Q; i++, nq++) {
			uint64_t s, e;
			int strict, want;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			/* Pass 0: calls one after another; pass 1: anywhere. */
			s = pass ? 900 + (x >> 20) % (t - 800) : (q += (x >> 33) % 3);
			e = s + (x >> 45) % (pass ? 40 : 4);
			strict = (x >> 60) & 1;
			want = crosses_ref(bs, be, nown, s, e, strict);
			if (ga_range_layout_crosses(&a, 0, 7, s, e, strict) != want ||
			    ga_range_layout_crosses(&b, 0, 7, s, e, strict) != want)
				bad_cross++;
		}
	}
	CHECKF(bad_cross == 0, "%zu of %zu calls' crossings differ from every range's", bad_cross,
	       nq);
	ga_range_layout_free(&a);
	ga_range_layout_free(&b);
	ga_xsort_free(&sp.spilled);
	free(r);
	free(bs);
	free(be);
	tap_end();
}

/* Export path as FORMAT to out, the ranges spilled or (spill 0) kept: 0, or the exit code. */
/* Rows of ga_range_layout_index(): in range order, each parent as the test links them. */
struct ixrows {
	const struct ga_ranges_range *r; /* sorted (cmp_rr) */
	const uint32_t *parent;
	size_t n, i, bad;
};

static int ix_row(void *ctx, const struct ga_ranges_srec *x, uint32_t parent)
{
	struct ixrows *w = ctx;

	if (w->i >= w->n || x->seq != w->i || x->r.start != w->r[w->i].start ||
	    x->r.end != w->r[w->i].end || x->r.id != w->r[w->i].id || parent != w->parent[w->i])
		w->bad++;
	w->i++;
	return 0;
}

/* Innermost range of thread tid at t among sorted r (parents par), as ranges.c finds it. */
static uint32_t inner_ref(const struct ga_ranges_range *r, const uint32_t *par, size_t n,
			  uint32_t tid, uint64_t t)
{
	size_t lo = 0, hi = n;
	uint32_t c;

	/* The last range of tid starting at or before t. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].tid < tid || (r[mid].tid == tid && r[mid].start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || r[lo - 1].tid != tid)
		return GA_RANGES_NONE;
	for (c = (uint32_t)lo - 1; c != GA_RANGES_NONE; c = par[c])
		if (r[c].end > t)
			return c;
	return GA_RANGES_NONE;
}

/*
 * The SQLite export's index of spilled ranges: push/pop ranges nested at
 * random and start/end ranges crossing them, on two threads, at tying
 * times, added to the sort in the order they closed (runs of 4096): every
 * range handed over in range order with the parent that linking the
 * sorted ranges gives, and the innermost range at 60,000 times, in order
 * and at random, what a search of the sorted ranges gives.
 */
static void test_range_index(void)
{
	enum { N = 150000,
	       Q = 30000 };
	struct ga_ranges sp;
	struct ga_range_layout a = { 0 };
	struct ga_ranges_key key = { 0 };
	struct ga_ranges_range *r = calloc(N, sizeof(*r));
	uint32_t *par = calloc(N, sizeof(*par));
	uint64_t open[64], stack_id[64], t = 1000, x = 777;
	uint32_t depth = 0;
	size_t n = 0, bad = 0, nq = 0, found = 0;
	struct ixrows w = { 0 };

	tap_begin("range index: spilled ranges in range order with their parents; innermost as kept");
	while (n < N) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		t += (x >> 33) % 4; /* ties one time in four */
		if ((x >> 20) % 8 == 0) {
			/* A start/end range from a little before: it crosses the push/pop ones. */
			r[n].start = t - (x >> 24) % 50 > 900 ? t - (x >> 24) % 50 : 900;
			r[n].end = t + (x >> 30) % 50;
			r[n].id = n + 500000;
		} else if (depth < 64 && (depth == 0 || (x >> 40) % 2)) {
			open[depth] = t;
			stack_id[depth++] = n + 1000;
			continue;
		} else if (depth) {
			depth--;
			r[n].start = open[depth];
			r[n].end = t;
			r[n].id = stack_id[depth];
			r[n].pushpop = 1;
		} else {
			continue;
		}
		r[n].tid = (x >> 50) % 5 ? 7 : 9;
		r[n].parent = GA_RANGES_NONE;
		n++;
	}
	ga_ranges_init(&sp);
	sp.keys = &key;
	sp.nkeys = 1;
	sp.spill = 1;
	sp.spill_threads = 1;
	ga_xsort_init(&sp.spilled, sizeof(struct ga_ranges_srec), 4096);
	for (size_t i = 0; i < n; i++) {
		struct ga_ranges_srec *v = ga_xsort_slot(&sp.spilled);

		if (!v)
			break;
		memset(v, 0, sizeof(*v));
		v->key = r[i].start;
		v->r = r[i];
		v->seq = i;
	}
	qsort(r, n, sizeof(*r), cmp_rr);
	/* Linked as ranges.c links ranges it keeps: on the chain of the range before. */
	for (size_t i = 0; i < n; i++) {
		uint32_t c = GA_RANGES_NONE;

		if (i && r[i - 1].tid == r[i].tid)
			for (c = (uint32_t)i - 1; c != GA_RANGES_NONE; c = par[c])
				if (r[c].end > r[i].start)
					break;
		par[i] = c;
	}
	w.r = r;
	w.parent = par;
	w.n = n;
	CHECK(ga_range_layout_index(&a, &sp, ix_row, &w) == 0);
	CHECKF(w.i == n && w.bad == 0, "%zu of %zu ranges, %zu out of order or with another parent",
	       w.i, n, w.bad);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t q = 900;

		for (size_t i = 0; i < Q; i++, nq++) {
			uint32_t tid, want, got;
			uint64_t at;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			/* Pass 0: launches one after another; pass 1: anywhere. */
			at = pass ? 800 + (x >> 20) % (t - 700) : (q += (x >> 33) % 8);
			tid = (x >> 60) % 4 ? 7 : (x >> 58) % 2 ? 9 :
								  8; /* 8: no ranges */
			want = inner_ref(r, par, n, tid, at);
			got = ga_range_layout_innermost(&a, 0, tid, at);
			found += want != GA_RANGES_NONE;
			if (got != want)
				bad++;
		}
	}
	CHECKF(bad == 0 && !a.err[0] && found > nq / 2,
	       "%zu of %zu innermost ranges differ (%zu in a range; %s)", bad, nq, found,
	       a.err[0] ? a.err : "no error");
	ga_range_layout_free(&a);
	ga_xsort_free(&sp.spilled);
	free(r);
	free(par);
	tap_end();
}

static int export_as(const char *fmt, const char *path, const char *out, int spill)
{
	char *so = NULL, *se = NULL;
	int rc;

	if (!spill)
		setenv("GPUPROF_NVTX_SPILL", "0", 1);
	rc = synth_run(dir, &so, &se, cmd_export, "export", "-t", fmt, "--no-symbolize", "-o", out,
		       path, (char *)NULL);
	unsetenv("GPUPROF_NVTX_SPILL");
	free(so);
	free(se);
	return rc;
}

/* Whether the Chrome and Perfetto exports of path are the same bytes spilled and kept. */
static int same_spilled(const char *path, char *why, size_t whylen)
{
	static const char *const fmts[] = { "chrome", "perfetto" };

	for (int f = 0; f < 2; f++) {
		char a[128], b[128];
		unsigned char *ba, *bb;
		size_t la = 0, lb = 0;
		int same;

		snprintf(a, sizeof(a), "%s/spilled.%s", dir, fmts[f]);
		snprintf(b, sizeof(b), "%s/kept.%s", dir, fmts[f]);
		if (export_as(fmts[f], path, a, 1) || export_as(fmts[f], path, b, 0)) {
			snprintf(why, whylen, "%s: an export failed", fmts[f]);
			return 0;
		}
		ba = synth_slurp(a, &la);
		bb = synth_slurp(b, &lb);
		same = ba && bb && la == lb && la > 0 && !memcmp(ba, bb, la);
		free(ba);
		free(bb);
		if (!same) {
			snprintf(why, whylen, "%s: %zu bytes spilled, %zu kept, not the same", fmts[f],
				 la, lb);
			return 0;
		}
	}
	return 1;
}

/*
 * The exports of ranges spilled give what ranges kept give: random apps
 * (ranges of two domains at tying times, one in eight start/end, that
 * cross each other and the API calls), and 70,000 marks on two threads
 * (more than two of the marks' sort's runs) among ranges, push/pop and
 * start/end ones opened together and closed inner first.
 */
static void test_spilled_exports(void)
{
	char path[128], why[256] = "";
	int ok = 1;

	tap_begin("perfetto, chrome: NVTX ranges and marks spilled give the bytes they give kept");
	for (int i = 0; i < 3 && ok; i++) {
		snprintf(path, sizeof(path), "%s/spill-random-%d.gpuprof", dir, i);
		synth_random_app(path, 4300 + (uint32_t)i, T0, 100, 200000, 1);
		ok = same_spilled(path, why, sizeof(why));
	}
	CHECKF(ok, "random app: %s", why);
	{
		struct synth *s;
		uint32_t mk, rg;
		uint64_t t = T0 + 1000;

		snprintf(path, sizeof(path), "%s/spill-marks.gpuprof", dir);
		s = synth_open(path);
		synth_process(s, 4400, "host", "./app", UINT32_MAX, T0);
		synth_config(s, GP_TRACE_NVTX, 0, 0);
		mk = synth_string(s, "tick");
		rg = synth_string(s, "step");
		for (uint32_t i = 0; i < 70000; i++, t += 100) {
			synth_nvtx_mark(s, mk, 0, t, 7 + i % 2, i + 1);
			if (i % 100 != 99)
				continue;
			synth_nvtx_range(s, rg, 0, t - 9900, t, 7, 7, 100000 + i, GP_NVTX_PUSHPOP);
			/* Opened together, the inner closed first: the longer one goes first. */
			synth_nvtx_range(s, rg, 0, t - 5000, t - 4000, 8, 8, 200000 + i,
					 GP_NVTX_PUSHPOP);
			synth_nvtx_range(s, rg, 0, t - 5000, t - 3000, 8, 8, 300000 + i,
					 GP_NVTX_PUSHPOP);
			synth_nvtx_range(s, mk, 0, t - 5000, t - 2000, 8, 9, 400000 + i, 0);
			synth_nvtx_range(s, mk, 0, t - 5000, t - 1000, 9, 8, 500000 + i, 0);
		}
		synth_end(s, t + 1000, 0);
		synth_close(s, NULL, NULL);
		CHECKF(same_spilled(path, why, sizeof(why)), "marks: %s", why);
	}
	tap_end();
	tap_begin("perfetto: ranges opened together nest, the longer outside, on one lane");
	{
		char out[128];
		unsigned char *b;
		size_t len = 0;

		snprintf(out, sizeof(out), "%s/spill-marks.pftrace", dir);
		b = export_as("perfetto", path, out, 1) ? NULL : synth_slurp(out, &len);
		CHECKF(b && len && !memmem(b, len, "(overlapping)", 13),
		       "%s", b ? "a lane \"(overlapping)\" was made" : "the export failed");
		free(b);
	}
	tap_end();
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-perfetto-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_wire();
	test_strict_lanes();
	test_lane_put();
	test_range_layout();
	test_range_index();
	test_spilled_exports();
	test_ties();
	test_many_streams();
	test_gpu_samples();
	for (int i = 0; i < (getenv("NRANDOM") ? atoi(getenv("NRANDOM")) : 3); i++)
		test_random();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
