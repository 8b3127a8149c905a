/*
 * Launch configurations and theoretical occupancy (see launchcfg.h).
 * Runs offline only.
 */
#include "model/launchcfg.h"

#include <stdlib.h>
#include <string.h>

void ga_launchcfg_init(struct ga_launchcfg *l)
{
	memset(l, 0, sizeof(*l));
}

void ga_launchcfg_free(struct ga_launchcfg *l)
{
	free(l->c);
	ga_map_free(&l->map);
	memset(l, 0, sizeof(*l));
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xbf58476d1ce4e5b9ull;
}

static int same(const struct ga_lcfg *c, const struct ga_lcfg *k)
{
	return c->name == k->name && !memcmp(c->grid, k->grid, sizeof(c->grid)) &&
	       !memcmp(c->block, k->block, sizeof(c->block)) && c->regs == k->regs &&
	       c->static_smem == k->static_smem && c->dynamic_smem == k->dynamic_smem;
}

/* The configuration c is the one of record r of the kernel named name. */
static inline int same_rec(const struct ga_lcfg *c, uint32_t name, const struct gp_rec_kernel *r)
{
	return c->name == name && c->grid[0] == r->grid[0] && c->grid[1] == r->grid[1] &&
	       c->grid[2] == r->grid[2] && c->block[0] == r->block[0] &&
	       c->block[1] == r->block[1] && c->block[2] == r->block[2] &&
	       c->regs == r->registers && c->static_smem == r->static_smem &&
	       c->dynamic_smem == r->dynamic_smem;
}

/* The configuration of r not met lately: its key, its hash, the map. */
static int count_slow(struct ga_launchcfg *l, const struct ga_act *a,
		      const struct gp_rec_kernel *r, uint32_t *rc)
{
	struct ga_lcfg key = { 0 };
	uint64_t h, k;
	uint32_t *slot;
	int ins;

	key.name = a->name;
	key.dev = a->devrow;
	memcpy(key.grid, r->grid, sizeof(key.grid));
	memcpy(key.block, r->block, sizeof(key.block));
	key.regs = r->registers;
	key.static_smem = r->static_smem;
	key.dynamic_smem = r->dynamic_smem;
	h = mix(mix(mix(key.name, 0), (uint64_t)key.grid[0] << 32 | key.grid[1]),
		(uint64_t)key.grid[2] << 32 | key.block[0]);
	h = mix(mix(h, (uint64_t)key.block[1] << 32 | key.block[2]),
		(uint64_t)key.regs << 32 | key.static_smem);
	h = mix(h, key.dynamic_smem);
	/* (hash, k): k counts the configurations of equal hash met before. */
	for (k = 0;; k++) {
		ins = ga_map_insert(&l->map, h, k, &slot);
		if (ins < 0)
			return -1;
		if (ins == 1 || same(&l->c[*slot - 1], &key))
			break;
	}
	if (ins == 1) {
		if (ga_util_grow(&l->c, &l->capc, l->nc + 1, sizeof(*l->c))) {
			ga_map_remove(&l->map, h, k);
			return -1;
		}
		key.occupancy = -1;
		l->c[l->nc] = key;
		*slot = (uint32_t)++l->nc;
	}
	*rc = *slot;
	l->c[*slot - 1].count++;
	l->c[*slot - 1].total += a->end - a->start;
	return 0;
}

static inline int count(struct ga_launchcfg *l, const struct ga_act *a,
			const struct gp_rec_kernel *r)
{
	/*
	 * Most launches repeat a recent configuration of their kernel: one
	 * comparison spares the key, the hash and the map.  Configurations are
	 * unique in l->c, so the one found is the one the map would give.
	 */
	uint32_t *rc = &l->recent[(a->name ^ r->grid[0] ^ r->block[0]) % GA_LCFG_RECENT];

	if (*rc && same_rec(&l->c[*rc - 1], a->name, r)) {
		l->c[*rc - 1].count++;
		l->c[*rc - 1].total += a->end - a->start;
		return 0;
	}
	return count_slow(l, a, r, rc);
}

static int obs_act(void *ctx, struct ga_model *m, const struct ga_act *a)
{
	struct ga_launchcfg *l = ctx;

	if (a->kind == GA_ACT_KERNEL && a->rec && a->rec->type == GP_REC_KERNEL &&
	    count(l, a, (const void *)a->rec)) {
		l->oom = 1;
		return -1;
	}
	(void)m;
	return 0;
}

int ga_launchcfg_bind(struct ga_launchcfg *l, struct ga_model *m)
{
	return ga_model_observe(m, l, NULL, 0, obs_act);
}

/*
 * Limits by compute capability, for traces without them (the CUDA C
 * Programming Guide's table of technical specifications).
 */
static const struct {
	uint32_t major, minor, warps, blocks, smem;
} by_cc[] = {
	{ 7, 0, 64, 32, 98304 }, { 7, 2, 64, 32, 98304 }, { 7, 5, 32, 16, 65536 },
	{ 8, 0, 64, 32, 167936 }, { 8, 6, 48, 16, 102400 }, { 8, 7, 48, 16, 167936 },
	{ 8, 9, 48, 24, 102400 }, { 9, 0, 64, 32, 233472 }, { 10, 0, 64, 32, 233472 },
	{ 12, 0, 48, 32, 102400 },
};

int ga_sm_limits(const struct ga_device *d, struct ga_sm_limits *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->reg_unit = 256;
	out->smem_unit = 128;
	/* Since compute capability 8.0 the system reserves 1 KiB per block. */
	out->smem_reserved = d->cc_major >= 8 ? 1024 : 0;
	if (d->max_warps_per_sm && d->max_blocks_per_sm && d->max_regs_per_sm) {
		out->warps = d->max_warps_per_sm;
		out->blocks = d->max_blocks_per_sm;
		out->regs = d->max_regs_per_sm;
		out->smem = d->max_smem_per_sm;
		return 0;
	}
	for (i = 0; i < sizeof(by_cc) / sizeof(by_cc[0]); i++)
		if (by_cc[i].major == d->cc_major && by_cc[i].minor == d->cc_minor) {
			out->warps = by_cc[i].warps;
			out->blocks = by_cc[i].blocks;
			out->regs = 65536;
			out->smem = by_cc[i].smem;
			return 0;
		}
	return -1;
}

static uint32_t round_up(uint32_t v, uint32_t unit)
{
	return unit ? (v + unit - 1) / unit * unit : v;
}

double ga_occupancy(const struct ga_sm_limits *lim, uint32_t threads, uint32_t regs,
		    uint32_t smem, uint32_t *blocks, uint32_t *limit)
{
	uint32_t warps = (threads + 31) / 32, n, by;

	*blocks = 0;
	*limit = GA_OCC_UNKNOWN;
	if (!warps || !lim->warps)
		return 0;
	n = lim->blocks;
	*limit = GA_OCC_BLOCKS;
	by = lim->warps / warps;
	if (by < n) {
		n = by;
		*limit = GA_OCC_WARPS;
	}
	if (regs) {
		uint32_t per_warp = round_up(regs * 32, lim->reg_unit);

		by = per_warp ? lim->regs / per_warp / warps : n;
		if (by < n) {
			n = by;
			*limit = GA_OCC_REGISTERS;
		}
	}
	if (smem || lim->smem_reserved) {
		uint32_t per_block = round_up(smem + lim->smem_reserved, lim->smem_unit);

		by = per_block ? lim->smem / per_block : n;
		if (by < n) {
			n = by;
			*limit = GA_OCC_SHARED;
		}
	}
	*blocks = n;
	return (double)(n * warps) / (double)lim->warps;
}

const char *ga_occ_limit_name(uint32_t limit)
{
	switch (limit) {
	case GA_OCC_WARPS:
		return "warps";
	case GA_OCC_BLOCKS:
		return "blocks";
	case GA_OCC_REGISTERS:
		return "registers";
	case GA_OCC_SHARED:
		return "shared memory";
	default:
		return "-";
	}
}

void ga_launchcfg_finish(struct ga_launchcfg *l, const struct ga_model *m)
{
	size_t i;

	for (i = 0; i < l->nc; i++) {
		struct ga_lcfg *c = &l->c[i];
		struct ga_sm_limits lim;
		uint64_t threads = (uint64_t)c->block[0] * c->block[1] * c->block[2];

		c->occupancy = -1;
		if (c->dev >= m->ndevrows || ga_sm_limits(&m->devs[m->devrows[c->dev].dev], &lim) < 0 ||
		    threads > UINT32_MAX)
			continue;
		c->occupancy = ga_occupancy(&lim, (uint32_t)threads, c->regs,
					    c->static_smem + c->dynamic_smem, &c->active_blocks,
					    &c->limit);
	}
}

struct order_ctx {
	const struct ga_launchcfg *l;
	const struct ga_model *m;
};

static int cmp_u32s(const uint32_t *a, const uint32_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int cmp_total(const void *pa, const void *pb, void *ctx)
{
	const struct order_ctx *c = ctx;
	const struct ga_lcfg *a = &c->l->c[*(const uint32_t *)pa], *b = &c->l->c[*(const uint32_t *)pb];
	uint32_t ka[9] = { a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1],
			   a->block[2], a->regs, a->static_smem, a->dynamic_smem };
	uint32_t kb[9] = { b->grid[0], b->grid[1], b->grid[2], b->block[0], b->block[1],
			   b->block[2], b->regs, b->static_smem, b->dynamic_smem };
	int r;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	/* Ties: by name and configuration, not by the order they came in (string ids differ). */
	if (a->name != b->name &&
	    (r = strcmp(ga_model_str(c->m, a->name), ga_model_str(c->m, b->name))))
		return r;
	return cmp_u32s(ka, kb, 9);
}

uint32_t *ga_launchcfg_order(const struct ga_launchcfg *l, const struct ga_model *m)
{
	uint32_t *o = malloc((l->nc ? l->nc : 1) * sizeof(*o));
	struct order_ctx c = { l, m };
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < l->nc; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, l->nc, sizeof(*o), cmp_total, &c);
	return o;
}
