/*
 * Synthetic call-stack records (see synth_stacks.h).  Test code, runs
 * offline only.
 */
#include "synth_stacks.h"

#include <stdlib.h>
#include <string.h>

void synth_frame(struct synth *s, uint64_t pc, uint64_t offset, uint32_t module,
		 uint32_t function, uint32_t sym_offset, uint32_t file, uint32_t line)
{
	struct gp_rec_frame r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_FRAME;
	r.h.size = sizeof(r);
	r.id = pc;
	r.offset = offset;
	r.module = module;
	r.function = function;
	r.sym_offset = sym_offset;
	r.file = file;
	r.line = line;
	synth_rec(s, &r, sizeof(r));
}

void synth_pyframe(struct synth *s, uint64_t id, uint32_t file, uint32_t function, uint32_t line,
		   uint32_t first_line)
{
	struct gp_rec_pyframe r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_PYFRAME;
	r.h.size = sizeof(r);
	r.id = id;
	r.file = file;
	r.function = function;
	r.line = line;
	r.first_line = first_line;
	synth_rec(s, &r, sizeof(r));
}

void synth_stack(struct synth *s, uint32_t id, const uint64_t *pcs, uint32_t n)
{
	size_t size = sizeof(struct gp_rec_stack) + (size_t)n * sizeof(uint64_t);
	struct gp_rec_stack *r = calloc(1, size);

	if (!r) {
		s->err = 1;
		return;
	}
	r->h.type = GP_REC_STACK;
	r->h.size = (uint16_t)size;
	r->h.aux = n;
	r->id = id;
	memcpy(r + 1, pcs, (size_t)n * sizeof(uint64_t));
	synth_rec(s, r, size);
	free(r);
}

void synth_corr_stack(struct synth *s, uint32_t correlation, uint32_t stack)
{
	struct gp_rec_corr_stack r;

	memset(&r, 0, sizeof(r));
	r.h.type = GP_REC_CORR_STACK;
	r.h.size = sizeof(r);
	r.correlation = correlation;
	r.stack = stack;
	synth_rec(s, &r, sizeof(r));
}


void synth_module(struct synth *s, uint64_t base, uint32_t module, uint32_t path,
		  const uint8_t *build_id, uint32_t nid)
{
	unsigned char buf[sizeof(struct gp_rec_module) + GP_BUILD_ID_MAX + 8];
	struct gp_rec_module *r = (void *)buf;
	uint32_t pad = (nid + 7) & ~7u;

	memset(buf, 0, sizeof(buf));
	if (pad > GP_BUILD_ID_MAX + 8)
		pad = GP_BUILD_ID_MAX + 8;
	r->h.type = GP_REC_MODULE;
	r->h.size = (uint16_t)(sizeof(*r) + pad);
	r->h.aux = nid;
	r->base = base;
	r->module = module;
	r->path = path;
	if (nid)
		memcpy(r + 1, build_id, nid < pad ? nid : pad);
	synth_rec(s, buf, sizeof(*r) + pad);
}
