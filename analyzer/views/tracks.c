/*
 * The timeline exports' track layout (see tracks.h).  Runs offline only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/tracks.h"

/* Range boundaries inside one API call looked at before giving up (its thread is in the call). */
#define CROSS_LOOK 64

long ga_lanes_add(struct ga_lanes *ls, long last, uint32_t tid)
{
	struct ga_lane *l;

	if (ls->n >= UINT32_MAX - 1 || ga_util_grow(&ls->v, &ls->cap, ls->n + 1, sizeof(*ls->v)))
		return -1;
	l = &ls->v[ls->n];
	memset(l, 0, sizeof(*l));
	l->tid = tid;
	if (last >= 0)
		ls->v[last].next = (uint32_t)ls->n + 1;
	return (long)ls->n++;
}

int ga_lane_fits(const struct ga_lane *l, int nest, int strict, uint64_t s, uint64_t e)
{
	const uint64_t *ks = l->s + l->off, *ke = l->e + l->off;

	/* Kept slices are disjoint and by start: the last ends last. */
	if (!l->n || s >= ke[l->n - 1])
		return 1;
	for (uint32_t i = 0; i < l->n; i++) {
		if (ke[i] <= s)
			continue;
		if (e <= ks[i]) {
			/* Its end would come after the kept one's begin at that time. */
			if (strict && e == ks[i] && ks[i] > s)
				return 0;
			continue;
		}
		if (nest && s <= ks[i] && ke[i] <= e) {
			/* The kept one's begin comes first: it would be the outer one. */
			if (strict && s == ks[i] && ke[i] != e)
				return 0;
			continue;
		}
		return 0;
	}
	return 1;
}

void ga_lane_put(struct ga_lane *l, uint64_t s, uint64_t e)
{
	uint64_t *ks, *ke;
	uint32_t i, j = 0;

	if (l->off + l->n >= GA_LANE_ROOM) {
		/* The window is at the end of its room: what it keeps goes back to the start. */
		memmove(l->s, l->s + l->off, l->n * sizeof(l->s[0]));
		memmove(l->e, l->e + l->off, l->n * sizeof(l->e[0]));
		l->off = 0;
	}
	ks = l->s + l->off;
	ke = l->e + l->off;
	if (!l->n || s > ks[l->n - 1]) {
		/*
		 * After every kept start (a stream's next kernel): it holds none
		 * of them and goes last.
		 */
		ks[l->n] = s;
		ke[l->n] = e;
		j = l->n;
		goto put;
	}
	for (i = 0; i < l->n; i++) {
		if (s <= ks[i] && ke[i] <= e)
			continue;
		ks[j] = ks[i];
		ke[j] = ke[i];
		j++;
	}
	/*
	 * By start, then end: a slice of no length at the start of a kept one
	 * goes before it, so that the last kept still ends last.
	 */
	for (i = j; i > 0 && (ks[i - 1] > s || (ks[i - 1] == s && ke[i - 1] > e)); i--) {
		ks[i] = ks[i - 1];
		ke[i] = ke[i - 1];
	}
	ks[i] = s;
	ke[i] = e;
put:
	l->n = j + 1;
	if (l->n > GA_LANE_KEEP) {
		/* The two first become one span: disjoint, by start, it ends before the third. */
		ke[1] = ke[1] > ke[0] ? ke[1] : ke[0];
		ks[1] = ks[0];
		l->off++;
		l->n = GA_LANE_KEEP;
	}
}

long ga_lanes_find(const struct ga_lanes *ls, long head, int nest, int strict, int first_ok,
		   uint64_t s, uint64_t e, long *last)
{
	long i;

	*last = -1;
	for (i = head; i >= 0; i = (long)ls->v[i].next - 1) {
		*last = i;
		if ((i != head || first_ok) && ga_lane_fits(&ls->v[i], nest, strict, s, e))
			return i;
	}
	return -1;
}

void ga_lanes_free(struct ga_lanes *ls)
{
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

int ga_range_order(const struct ga_ranges *rg, uint32_t ia, uint32_t ib, int by_thread)
{
	const struct ga_ranges_range *a = &rg->ranges[ia], *b = &rg->ranges[ib];

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (by_thread && a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* Ranges of rg by (process, thread, start, end descending). */
static int cmp_range(const void *pa, const void *pb, void *ctx)
{
	return ga_range_order(ctx, *(const uint32_t *)pa, *(const uint32_t *)pb, 1);
}

static int cmp_range_end(const void *pa, const void *pb, void *ctx)
{
	const struct ga_ranges *rg = ctx;
	uint64_t a = rg->ranges[*(const uint32_t *)pa].end, b = rg->ranges[*(const uint32_t *)pb].end;

	if (a != b)
		return a < b ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

int ga_nest_fits(struct ga_nest *l, uint64_t s, uint64_t e)
{
	while (l->n && l->end[l->n - 1] <= s)
		l->n--;
	return !l->n || l->end[l->n - 1] >= e;
}

int ga_nest_push(struct ga_nest *l, uint64_t e)
{
	if (ga_util_grow(&l->end, &l->cap, l->n + 1, sizeof(uint64_t)))
		return -1;
	l->end[l->n++] = e;
	return 0;
}

int ga_nests_add(struct ga_nest **st, size_t *n, size_t *cap)
{
	if (ga_util_grow(st, cap, *n + 1, sizeof(**st)))
		return -1;
	memset(&(*st)[*n], 0, sizeof(**st));
	(*n)++;
	return 0;
}

void ga_nests_clear(struct ga_nest *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(st[i].end);
}

/*
 * Then, per thread, the ranges on its own track by start and by end, for
 * the API calls to be checked against (ga_range_layout_crosses()).
 */
int ga_range_layout_build(struct ga_range_layout *rl, const struct ga_ranges *rg,
			  uint32_t *nhost)
{
	size_t n = rg->nranges, i, j, k, nby = 0, nst = 0, capst = 0;
	struct ga_nest *st = NULL;
	uint32_t *ord;
	int rc = -1;

	if (!n)
		return 0;
	ord = malloc(n * sizeof(*ord));
	rl->range_tid = calloc(n, sizeof(*rl->range_tid));
	rl->by_start = malloc(n * sizeof(*rl->by_start));
	rl->by_end = malloc(n * sizeof(*rl->by_end));
	if (!ord || !rl->range_tid || !rl->by_start || !rl->by_end)
		goto out;
	for (i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, n, sizeof(*ord), cmp_range, (void *)rg);
	for (i = 0; i < n; i = j) {
		const struct ga_ranges_range *r0 = &rg->ranges[ord[i]];
		size_t seg = nby;
		uint32_t *slot;

		for (j = i; j < n && rg->ranges[ord[j]].proc == r0->proc &&
			    rg->ranges[ord[j]].tid == r0->tid; j++)
			;
		ga_nests_clear(st, nst);
		nst = 0;
		for (k = i; k < j; k++) {
			const struct ga_ranges_range *r = &rg->ranges[ord[k]];
			uint32_t dom = rg->keys[r->key].domain;
			size_t l, first = SIZE_MAX;

			if (!r->pushpop)
				continue;
			for (l = 0; l < nst; l++) {
				if (st[l].domain != dom)
					continue;
				if (first == SIZE_MAX)
					first = l;
				if (ga_nest_fits(&st[l], r->start, r->end))
					break;
			}
			if (l == nst) {
				if (ga_nests_add(&st, &nst, &capst))
					goto out;
				st[l].domain = dom;
				if (first == SIZE_MAX && !dom) {
					st[l].tid = r->tid;
				} else {
					struct ga_range_track *t;

					/* Named by the export: the process may not be read yet. */
					if (ga_util_grow(&rl->tracks, &rl->captracks, rl->ntracks + 1,
							 sizeof(*rl->tracks)))
						goto out;
					st[l].tid = GA_HOST_TID_BASE + (*nhost)++;
					t = &rl->tracks[rl->ntracks++];
					t->proc = r->proc;
					t->tid = st[l].tid;
					t->thread = r->tid;
					t->domain = dom;
					t->overlapping = first != SIZE_MAX;
				}
			}
			if (ga_nest_push(&st[l], r->end))
				goto out;
			rl->range_tid[ord[k]] = st[l].tid;
			if (st[l].tid == r->tid)
				rl->by_start[nby++] = ord[k];
		}
		if (nby == seg)
			continue;
		if (ga_util_grow(&rl->segs, &rl->capsegs, rl->nsegs + 1, sizeof(*rl->segs)) ||
		    ga_map_insert(&rl->seg_map, r0->proc, r0->tid, &slot) < 0)
			goto out;
		rl->segs[rl->nsegs].off = seg;
		rl->segs[rl->nsegs].n = nby - seg;
		*slot = (uint32_t)++rl->nsegs;
		memcpy(rl->by_end + seg, rl->by_start + seg, (nby - seg) * sizeof(*rl->by_end));
		qsort_r(rl->by_end + seg, nby - seg, sizeof(*rl->by_end), cmp_range_end, (void *)rg);
	}
	rc = 0;
out:
	ga_nests_clear(st, nst);
	free(st);
	free(ord);
	return rc;
}

int ga_range_layout_crosses_any(const struct ga_range_layout *rl, const struct ga_ranges *rg,
				uint32_t proc, uint32_t tid, uint64_t s, uint64_t t, int strict)
{
	const uint32_t *v = ga_map_find(&rl->seg_map, proc, tid);
	const uint32_t *a;
	size_t lo, hi, n, look = 0;

	if (!v)
		return 0;
	n = rl->segs[*v - 1].n;
	a = rl->by_start + rl->segs[*v - 1].off;
	/* Ranges starting inside (strict: at its start too). */
	for (lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (rg->ranges[a[mid]].start < s || (!strict && rg->ranges[a[mid]].start == s))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && rg->ranges[a[lo]].start < t; lo++)
		if (++look > CROSS_LOOK || rg->ranges[a[lo]].end > t)
			return 1;
	/* Ranges ending inside (strict: at its start too). */
	a = rl->by_end + rl->segs[*v - 1].off;
	for (lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (rg->ranges[a[mid]].end < s || (!strict && rg->ranges[a[mid]].end == s))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && rg->ranges[a[lo]].end < t; lo++)
		if (++look > CROSS_LOOK || rg->ranges[a[lo]].start < s)
			return 1;
	return 0;
}

void ga_range_layout_free(struct ga_range_layout *rl)
{
	free(rl->range_tid);
	free(rl->by_start);
	free(rl->by_end);
	free(rl->segs);
	ga_map_free(&rl->seg_map);
	free(rl->tracks);
	memset(rl, 0, sizeof(*rl));
}

void ga_range_track_name(const struct ga_model *m, const struct ga_range_track *t, char *name,
			 size_t size)
{
	if (t->domain)
		snprintf(name, size, "NVTX %.100s [tid %u]%s", ga_model_str(m, t->domain), t->thread,
			 t->overlapping ? " (overlapping)" : "");
	else
		snprintf(name, size, "tid %u (overlapping)", t->thread);
}

int ga_pids_for(struct ga_pids *p, uint32_t pid, uint32_t *out)
{
	uint32_t *next = NULL, k, cand = pid;
	int r;

	/* Each pid's next k and the counter are kept: n processes of one pid cost O(n) lookups. */
	for (;;) {
		if (!ga_map_find(&p->map, 0, cand))
			break;
		if (!next) {
			r = ga_map_insert(&p->map, 1, pid, &next);
			if (r < 0)
				return -1;
			if (r == 1)
				*next = 1;
		}
		k = *next;
		if (k < 1024) {
			*next = k + 1;
			cand = pid + (k << 22);
		} else {
			cand = ++p->spare;   /* from 1: pid 0 is no process */
		}
	}
	r = ga_map_insert(&p->map, 0, cand, &next);
	if (r < 0)
		return -1;
	*out = cand;
	return 0;
}

void ga_pids_free(struct ga_pids *p)
{
	ga_map_free(&p->map);
	memset(p, 0, sizeof(*p));
}

int ga_proc_pids_see(struct ga_proc_pids *pp, uint32_t proc, uint32_t own_pid, uint32_t *out)
{
	if (proc < pp->cap && pp->seen[proc]) {
		*out = pp->pid[proc];
		return 0;
	}
	if (proc >= pp->cap) {
		size_t old = pp->cap;
		uint32_t *np;

		if (ga_util_grow(&pp->seen, &pp->cap, (size_t)proc + 1, 1))
			return -1;
		memset(pp->seen + old, 0, pp->cap - old);
		np = realloc(pp->pid, pp->cap * sizeof(*np));
		if (!np)
			return -1;
		pp->pid = np;
	}
	if (ga_pids_for(&pp->pids, own_pid, out))
		return -1;
	pp->seen[proc] = 1;
	pp->pid[proc] = *out;
	return 1;
}

void ga_proc_pids_free(struct ga_proc_pids *pp)
{
	free(pp->seen);
	free(pp->pid);
	ga_pids_free(&pp->pids);
	memset(pp, 0, sizeof(*pp));
}

int ga_track_proc_name(const struct ga_model *m, const struct ga_proc *p, struct ga_buf *b)
{
	int rc = 0;

	if (p->rank != GA_NO_RANK)
		rc |= ga_buf_printf(b, "rank %u: ", p->rank);
	if (p->cmdline)
		rc |= ga_buf_printf(b, "%.200s [%u]", ga_model_str(m, p->cmdline), p->pid);
	else
		rc |= ga_buf_printf(b, "pid %u", p->pid);
	if (p->host)
		rc |= ga_buf_printf(b, " on %s", ga_model_str(m, p->host));
	return rc;
}
