/*
 * Clocks of the traces of one job on one time line (see align.h): the
 * scan before the analysis, the corrections, and the reader that applies
 * them.  Runs offline only.
 */
#include "model/align.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* Collectives whose kernels end together on every rank (index + 1 is the key). */
static const char *const collectives[] = {
	"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
};
#define NCOLL (sizeof(collectives) / sizeof(collectives[0]))
#define HOST_MAX 127

const char *ga_align_collective(const char *name, size_t *len)
{
	static const char *const prefixes[] = { "ncclDevKernel_", "ncclSymkDevKernel_",
						"ncclKernel_" };
	const char *p;

	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]), n = 0;

		/* Plain names start with the prefix; mangled ones have it after a length. */
		for (p = strstr(name, prefixes[i]); p; p = strstr(p + 1, prefixes[i])) {
			if (p != name && !isdigit((unsigned char)p[-1]))
				continue;
			p += pl;
			while (isalpha((unsigned char)p[n]))
				n++;
			for (size_t c = 0; c < NCOLL; c++)
				if (strlen(collectives[c]) == n && !strncmp(p, collectives[c], n)) {
					if (len)
						*len = n;
					return collectives[c];
				}
			return NULL;
		}
	}
	return NULL;
}

_Static_assert(NCOLL == GA_ALIGN_COLLS, "collectives");

unsigned ga_align_coll_index(const char *name)
{
	const char *c = ga_align_collective(name, NULL);

	for (unsigned i = 0; c && i < NCOLL; i++)
		if (c == collectives[i])
			return i + 1;
	return 0;
}

void ga_align_init(struct ga_align *al, int mode)
{
	memset(al, 0, sizeof(*al));
	al->mode = mode;
}

void ga_align_free(struct ga_align *al)
{
	free(al->f);
	al->f = NULL;
	al->n = 0;
}

int64_t ga_align_shift(const struct ga_align *al, size_t i)
{
	if (!al || i >= al->n)
		return 0;
	return al->f[i].clock_ns + al->f[i].nccl_ns;
}

int ga_align_active(const struct ga_align *al)
{
	return al && (al->mode != GA_ALIGN_NONE || al->clock_applied);
}

/* ---- shifting records ---- */

static void sh(struct gp_rec *rec, size_t off, int64_t delta)
{
	uint64_t t;

	memcpy(&t, (char *)rec + off, sizeof(t));
	if (t) {
		t += (uint64_t)delta;
		memcpy((char *)rec + off, &t, sizeof(t));
	}
}

int ga_align_shift_rec(struct gp_rec *rec, int64_t delta)
{
#define SE(type) do { sh(rec, offsetof(type, start), delta); sh(rec, offsetof(type, end), delta); } while (0)
	switch (rec->type) {
	case GP_REC_PROCESS:
		sh(rec, offsetof(struct gp_rec_process, start_ns), delta);
		return 1;
	case GP_REC_CLOCK_SYNC:
		sh(rec, offsetof(struct gp_rec_clock_sync, trace_ns), delta);
		return 1;
	case GP_REC_KERNEL:
		SE(struct gp_rec_kernel);
		return 1;
	case GP_REC_MEMCPY:
		SE(struct gp_rec_memcpy);
		return 1;
	case GP_REC_MEMSET:
		SE(struct gp_rec_memset);
		return 1;
	case GP_REC_GRAPH:
		SE(struct gp_rec_graph);
		return 1;
	case GP_REC_API:
		SE(struct gp_rec_api);
		return 1;
	case GP_REC_NVTX_RANGE:
	case GP_REC_NVTX_MARK:
	case GP_REC_NVTX_OPEN:
		SE(struct gp_rec_nvtx);
		return 1;
	case GP_REC_CAPTURE_RANGE:
		SE(struct gp_rec_capture_range);
		return 1;
	case GP_REC_OVERHEAD:
		SE(struct gp_rec_overhead);
		return 1;
	case GP_REC_FLIGHT:
		SE(struct gp_rec_flight);
		return 1;
	case GP_REC_LOST:
		sh(rec, offsetof(struct gp_rec_lost, time), delta);
		return 1;
	case GP_REC_END:
		sh(rec, offsetof(struct gp_rec_end, end_ns), delta);
		return 1;
	case GP_REC_METRICS:
		sh(rec, offsetof(struct gp_rec_metrics, start), delta);
		return 1;
	case GP_REC_MEMORY:
		sh(rec, offsetof(struct gp_rec_memory, timestamp), delta);
		return 1;
	default:
		return 0;
	}
#undef SE
}

static int timed(uint16_t type)
{
	switch (type) {
	case GP_REC_PROCESS: case GP_REC_CLOCK_SYNC: case GP_REC_KERNEL: case GP_REC_MEMCPY:
	case GP_REC_MEMSET: case GP_REC_GRAPH: case GP_REC_API: case GP_REC_NVTX_RANGE:
	case GP_REC_NVTX_MARK:
	case GP_REC_NVTX_OPEN:
	case GP_REC_CAPTURE_RANGE:
	case GP_REC_OVERHEAD:
	case GP_REC_FLIGHT: case GP_REC_LOST: case GP_REC_END: case GP_REC_METRICS:
	case GP_REC_MEMORY:
		return 1;
	default:
		return 0;
	}
}

int ga_align_reader_fn(void *ctx, const struct gp_rec *rec)
{
	struct ga_align_reader *r = ctx;

	if (!r->shift || !timed(rec->type))
		return r->fn(r->ctx, rec);
	memcpy(r->buf, rec, rec->size);
	ga_align_shift_rec((struct gp_rec *)r->buf, r->shift);
	return r->fn(r->ctx, (const struct gp_rec *)r->buf);
}

/* ---- the kept collectives ---- */

static int cmp_pair(const void *pa, const void *pb)
{
	const uint64_t *a = pa, *b = pb;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* The group's first GA_ALIGN_KEEP pairs, in order; later ones past the last kept are refused. */
static void cut(struct ga_align_group *g)
{
	if (g->n > 1)
		qsort(g->v, g->n, 2 * sizeof(*g->v), cmp_pair);
	if (g->n >= GA_ALIGN_KEEP) {
		g->n = GA_ALIGN_KEEP;
		g->full = 1;
		g->lim_start = g->v[2 * (g->n - 1)];
		g->lim_end = g->v[2 * (g->n - 1) + 1];
	}
}

int ga_align_keep_add(struct ga_align_keep *k, uint64_t stream, uint32_t coll, uint64_t start,
		      uint64_t end)
{
	struct ga_align_group *g;
	uint32_t *slot;
	int r;

	if ((r = ga_map_insert(&k->idx, stream, coll, &slot)) < 0)
		return -1;
	if (r == 1) {
		if (ga_util_grow(&k->g, &k->cap, k->n + 1, sizeof(*k->g))) {
			ga_map_remove(&k->idx, stream, coll);
			return -1;
		}
		memset(&k->g[k->n], 0, sizeof(*k->g));
		k->g[k->n].stream = stream;
		k->g[k->n].coll = coll;
		*slot = (uint32_t)++k->n;
	}
	g = &k->g[*slot - 1];
	if (g->full && (start > g->lim_start || (start == g->lim_start && end >= g->lim_end)))
		return 0;
	if (ga_util_grow(&g->v, &g->cap, 2 * (g->n + 1), 2 * sizeof(*g->v)))
		return -1;
	g->v[2 * g->n] = start;
	g->v[2 * g->n + 1] = end;
	if (++g->n == 2 * GA_ALIGN_KEEP)
		cut(g);
	return 0;
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct ga_align_group *a = pa, *b = pb;

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->coll < b->coll ? -1 : a->coll > b->coll;
}

int ga_align_keep_finish(struct ga_align_keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		cut(&k->g[i]);
	if (k->n > 1)
		qsort(k->g, k->n, sizeof(*k->g), cmp_group);
	/* The index is of no use once in order (and would point at moved groups). */
	ga_map_free(&k->idx);
	return 0;
}

void ga_align_keep_free(struct ga_align_keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->g[i].v);
	free(k->g);
	ga_map_free(&k->idx);
	memset(k, 0, sizeof(*k));
}

/* ---- the scan ---- */

struct nk {
	uint64_t start, end;
	uint64_t stream;           /* device << 32 | stream */
	uint32_t key;              /* collective, then with the stream ordinal */
	uint32_t k;                /* its place among the kernels of its key */
};

struct fdata {
	struct nk *k;
	size_t n;
	uint32_t nstreams;
};

struct fscan {
	struct ga_align_file *af;
	struct ga_align_keep *keep;
	int full;                  /* read every record (NCCL alignment) */
	uint8_t *coll;             /* string id -> collective index + 1 */
	size_t ncoll;
	char **strs;               /* string id -> short strings (host names) */
	size_t nstrs;
	/*
	 * Ids far past the strings read (a damaged or crafted trace: recorders
	 * number them one by one), kept apart, not by id: id -> (index in
	 * far_strs + 1) << 8 | collective index + 1.
	 */
	struct ga_map far;
	char **far_strs;
	size_t nfar, capfar;
	uint64_t nseen; /* string records read */
	int got_process, got_sync, oom;
};

/* The collective index + 1 of string id id, 0 none. */
static uint8_t coll_of(const struct fscan *s, uint32_t id)
{
	const uint32_t *v;

	if (id < s->ncoll)
		return s->coll[id];
	v = s->far.n ? ga_map_find(&s->far, id, 0) : NULL;
	return v ? (uint8_t)(*v & 0xff) : 0;
}

/* The short string of id (NULL none). */
static const char *str_of(const struct fscan *s, uint32_t id)
{
	const uint32_t *v;

	if (id < s->nstrs)
		return s->strs[id];
	v = s->far.n ? ga_map_find(&s->far, id, 0) : NULL;
	return v && *v >> 8 ? s->far_strs[(*v >> 8) - 1] : NULL;
}

/* String id far up (fscan far): its collective index and text kept.  0, or -1 out of memory. */
static int far_put(struct fscan *s, uint32_t id, uint8_t coll, const char *txt)
{
	uint32_t *slot, str = 0;

	if (ga_map_insert(&s->far, id, 0, &slot) < 0)
		return -1;
	if (txt) {
		if (s->nfar >= (1u << 24) - 1 ||
		    ga_util_grow(&s->far_strs, &s->capfar, s->nfar + 1, sizeof(*s->far_strs)) ||
		    !(s->far_strs[s->nfar] = strdup(txt)))
			return -1;
		str = (uint32_t)++s->nfar;
	}
	*slot = str << 8 | coll;
	return 0;
}

static int grow_ids(struct fscan *s, uint32_t id)
{
	if (id < s->ncoll)
		return 0;
	{
		size_t n = s->ncoll ? s->ncoll : 64;
		uint8_t *c;
		char **p;

		while (n <= id)
			n *= 2;
		c = realloc(s->coll, n);
		if (!c)
			return -1;
		s->coll = c;
		memset(c + s->ncoll, 0, n - s->ncoll);
		p = realloc(s->strs, n * sizeof(*p));
		if (!p)
			return -1;
		s->strs = p;
		memset(p + s->nstrs, 0, (n - s->nstrs) * sizeof(*p));
		s->ncoll = s->nstrs = n;
	}
	return 0;
}

static int scan_rec(void *ctx, const struct gp_rec *rec)
{
	struct fscan *s = ctx;

	switch (rec->type) {
	case GP_REC_STRING: {
		const struct gp_rec_string *r = (const void *)rec;
		const char *txt = (const char *)(r + 1);
		char tmp[512];
		size_t n = r->len < sizeof(tmp) - 1 ? r->len : sizeof(tmp) - 1;

		memcpy(tmp, txt, n);
		tmp[n] = '\0';
		s->nseen++;
		if (r->id >= s->ncoll && !ga_util_id_near(r->id, s->nseen)) {
			if (far_put(s, r->id, (uint8_t)ga_align_coll_index(tmp),
				    r->len <= HOST_MAX ? tmp : NULL)) {
				s->oom = 1;
				return 1;
			}
			break;
		}
		if (grow_ids(s, r->id)) {
			s->oom = 1;
			return 1;
		}
		free(s->strs[r->id]);
		s->strs[r->id] = NULL;
		if (r->len <= HOST_MAX) {
			s->strs[r->id] = strdup(tmp);
			if (!s->strs[r->id]) {
				s->oom = 1;
				return 1;
			}
		}
		/* Mangled NCCL names are long, but their collective comes early. */
		s->coll[r->id] = (uint8_t)ga_align_coll_index(tmp);
		break;
	}
	case GP_REC_PROCESS: {
		const struct gp_rec_process *p = (const void *)rec;

		if (s->got_process)
			break;
		s->got_process = 1;
		s->af->rank = p->rank;
		s->af->pid = p->pid;
		if (p->host && str_of(s, p->host))
			snprintf(s->af->host, sizeof(s->af->host), "%s", str_of(s, p->host));
		break;
	}
	case GP_REC_CLOCK_SYNC: {
		const struct gp_rec_clock_sync *c = (const void *)rec;

		if (s->got_sync)
			break;
		s->got_sync = 1;
		s->af->has_sync = 1;
		s->af->sync_ns = (int64_t)(c->realtime_ns - c->trace_ns);
		break;
	}
	case GP_REC_KERNEL: {
		const struct gp_rec_kernel *k = (const void *)rec;

		if (!s->full || !coll_of(s, k->name) || k->end < k->start ||
		    !k->end)
			break;
		if (ga_align_keep_add(s->keep, (uint64_t)k->device << 32 | k->stream,
				      coll_of(s, k->name), k->start, k->end)) {
			s->oom = 1;
			return 1;
		}
		break;
	}
	default:
		break;
	}
	/* Without NCCL alignment the first PROCESS and CLOCK_SYNC are enough. */
	return !s->full && s->got_process && s->got_sync;
}

static int cmp_nk(const void *pa, const void *pb)
{
	const struct nk *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* Sorted by start; the stream ordinals in order of their first NCCL kernel. */
static int order_kernels(struct fdata *fd)
{
	struct ga_map ord = { 0 };
	size_t i;

	if (fd->n)
		qsort(fd->k, fd->n, sizeof(*fd->k), cmp_nk);
	for (i = 0; i < fd->n; i++) {
		uint32_t *slot;
		int r = ga_map_insert(&ord, fd->k[i].stream, 0, &slot);

		if (r < 0) {
			ga_map_free(&ord);
			return -1;
		}
		if (r == 1)
			*slot = fd->nstreams++;
		/* Keep the plain collective in the low bits; the ordinal above. */
		fd->k[i].key |= *slot << 8;
	}
	ga_map_free(&ord);
	return 0;
}

/* The k-th of each key (by_stream: stream ordinal and collective; else collective). */
static int number_kernels(struct fdata *fd, int by_stream)
{
	struct ga_map cnt = { 0 };

	for (size_t i = 0; i < fd->n; i++) {
		uint32_t key = by_stream ? fd->k[i].key : (fd->k[i].key & 0xffu), *slot;

		if (ga_map_insert(&cnt, key, 0, &slot) < 0) {
			ga_map_free(&cnt);
			return -1;
		}
		fd->k[i].k = (*slot)++;
	}
	ga_map_free(&cnt);
	return 0;
}

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

static int64_t median_sorted(const int64_t *v, size_t n)
{
	if (n % 2)
		return v[n / 2];
	/* Halves first: no overflow. */
	return v[n / 2 - 1] / 2 + v[n / 2] / 2 + ((v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2);
}

/*
 * Differences d (reference minus this rank) of n matched ends: the median
 * of those within 5 scaled MADs (at least 2 us) of the first median.
 */
static void robust(struct ga_align_file *af, int64_t *d, size_t n, int64_t *dev)
{
	int64_t med, lim;
	size_t i, k = 0;
	uint64_t mad;

	af->matched = n;
	if (!n)
		return;
	qsort(d, n, sizeof(*d), cmp_i64);
	med = median_sorted(d, n);
	for (i = 0; i < n; i++)
		dev[i] = d[i] > med ? d[i] - med : med - d[i];
	qsort(dev, n, sizeof(*dev), cmp_i64);
	mad = (uint64_t)median_sorted(dev, n);
	lim = (int64_t)(5.0 * 1.4826 * (double)mad);
	if (lim < 2000)
		lim = 2000;
	for (i = 0; i < n; i++)
		if ((d[i] > med ? d[i] - med : med - d[i]) <= lim)
			d[k++] = d[i];
	af->used = k;
	af->spread_ns = mad;
	af->nccl_ns = median_sorted(d, k);
}

/* The kept collectives of a trace as one list (freed by the caller). */
static int flatten(struct fdata *fd, const struct ga_align_keep *k)
{
	size_t n = 0, i, j;

	for (i = 0; i < k->n; i++)
		n += k->g[i].n;
	fd->n = 0;
	if (!n)
		return 0;
	if (!(fd->k = malloc(n * sizeof(*fd->k))))
		return -1;
	for (i = 0; i < k->n; i++)
		for (j = 0; j < k->g[i].n; j++)
			fd->k[fd->n++] = (struct nk){ .start = k->g[i].v[2 * j],
						      .end = k->g[i].v[2 * j + 1],
						      .stream = k->g[i].stream,
						      .key = k->g[i].coll };
	return 0;
}

/* Matching reads the first GA_ALIGN_KEEP of each key, which every trace's groups hold. */
static int kept(const struct nk *x)
{
	return x->k < GA_ALIGN_KEEP;
}

static int align_nccl(struct ga_align *al, struct fdata *fd)
{
	size_t ref = SIZE_MAX, i, maxn = 0;
	uint32_t streams = 0;
	int same = 1, rc = -1;
	struct ga_map at = { 0 };
	int64_t *d = NULL, *dev = NULL;

	for (i = 0; i < al->n; i++) {
		if (!fd[i].n)
			continue;
		if (order_kernels(&fd[i]))
			goto out;
		if (!streams)
			streams = fd[i].nstreams;
		same &= fd[i].nstreams == streams;
		if (fd[i].n > maxn)
			maxn = fd[i].n;
		/* The lowest rank (no rank last), then the first given. */
		if (ref == SIZE_MAX || al->f[i].rank < al->f[ref].rank)
			ref = i;
	}
	if (ref == SIZE_MAX)
		return 0;
	al->by_stream = same && streams > 1;
	for (i = 0; i < al->n; i++)
		if (fd[i].n && number_kernels(&fd[i], al->by_stream))
			goto out;
	al->f[ref].reference = 1;
	for (i = 0; i < fd[ref].n; i++) {
		const struct nk *x = &fd[ref].k[i];
		uint32_t *slot;

		if (!kept(x))
			continue;
		if (ga_map_insert(&at, al->by_stream ? x->key : (x->key & 0xffu), x->k, &slot) < 0)
			goto out;
		*slot = (uint32_t)i;
		al->f[ref].matched++;
	}
	al->f[ref].used = al->f[ref].matched;
	d = malloc((maxn ? maxn : 1) * sizeof(*d));
	dev = malloc((maxn ? maxn : 1) * sizeof(*dev));
	if (!d || !dev)
		goto out;
	for (size_t f = 0; f < al->n; f++) {
		size_t n = 0;

		if (f == ref || !fd[f].n)
			continue;
		for (i = 0; i < fd[f].n; i++) {
			const struct nk *x = &fd[f].k[i];
			const uint32_t *slot =
				kept(x) ? ga_map_find(&at, al->by_stream ? x->key : (x->key & 0xffu),
						      x->k) :
					  NULL;

			if (!slot)
				continue;
			d[n++] = ((int64_t)fd[ref].k[*slot].end + al->f[ref].clock_ns) -
				 ((int64_t)x->end + al->f[f].clock_ns);
		}
		robust(&al->f[f], d, n, dev);
	}
	rc = 0;
out:
	ga_map_free(&at);
	free(d);
	free(dev);
	return rc;
}

int ga_align_nccl(struct ga_align *al, struct ga_align_keep *keep)
{
	struct fdata *fd = calloc(al->n + 1, sizeof(*fd));
	size_t i;
	int rc = -1;

	if (!fd)
		return -1;
	for (i = 0; i < al->n; i++)
		if (ga_align_keep_finish(&keep[i]) || flatten(&fd[i], &keep[i]))
			goto out;
	rc = align_nccl(al, fd);
out:
	for (i = 0; i < al->n; i++)
		free(fd[i].k);
	free(fd);
	return rc;
}

int ga_align_scan(struct ga_align *al, const struct ga_align_src *src, size_t n)
{
	struct ga_align_keep *keep = NULL;
	struct fscan s;
	size_t i, j;
	int rc = -1, other_clock = 0;

	al->f = calloc(n ? n : 1, sizeof(*al->f));
	keep = calloc(n ? n : 1, sizeof(*keep));
	if (!al->f || !keep)
		goto out;
	al->n = n;
	for (i = 0; i < n; i++) {
		struct ga_read_info info;
		char err[256];

		memset(&s, 0, sizeof(s));
		s.af = &al->f[i];
		s.keep = &keep[i];
		s.full = al->mode == GA_ALIGN_NCCL;
		s.af->rank = UINT32_MAX;
		/* Unreadable traces are the model's to report. */
		if (src[i].buf)
			ga_reader_read_mem(src[i].path, src[i].buf, src[i].len, scan_rec, &s, &info,
					   err, sizeof(err));
		else
			ga_reader_read_file(src[i].path, scan_rec, &s, &info, err, sizeof(err));
		for (j = 0; j < s.nstrs; j++)
			free(s.strs[j]);
		free(s.strs);
		free(s.coll);
		for (j = 0; j < s.nfar; j++)
			free(s.far_strs[j]);
		free(s.far_strs);
		ga_map_free(&s.far);
		/* Only the kept pairs stay while the next traces are read. */
		if (s.oom || ga_align_keep_finish(&keep[i]))
			goto out;
		if (s.got_sync && info.header.clock_id != GP_CLOCK_REALTIME)
			other_clock = 1;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && strcmp(al->f[j].host, al->f[i].host); j++)
			;
		al->hosts += j == i;
	}
	/* One host shares its clocks: its traces are read as they are. */
	if (al->hosts > 1 || other_clock) {
		for (i = 0; i < n; i++)
			if (al->f[i].has_sync) {
				al->f[i].clock_ns = al->f[i].sync_ns;
				al->clock_applied = 1;
			}
	}
	if (al->mode == GA_ALIGN_NCCL && ga_align_nccl(al, keep))
		goto out;
	rc = 0;
out:
	for (i = 0; keep && i < n; i++)
		ga_align_keep_free(&keep[i]);
	free(keep);
	if (rc)
		snprintf(al->err, sizeof(al->err), "out of memory");
	return rc;
}

int ga_align_parse(const char *s, int *mode)
{
	if (!strcmp(s, "nccl"))
		*mode = GA_ALIGN_NCCL;
	else if (!strcmp(s, "none"))
		*mode = GA_ALIGN_NONE;
	else
		return -1;
	return 0;
}
