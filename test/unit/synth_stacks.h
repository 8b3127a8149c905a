/*
 * Synthetic call-stack records (STACK, FRAME, MODULE, CORR_STACK, GRAPH_NODE) and
 * a CONFIG that asks for them, for the launch-site tests.  Test code, runs
 * offline only.
 */
#ifndef GP_TEST_SYNTH_STACKS_H
#define GP_TEST_SYNTH_STACKS_H

#include <stdint.h>

#include "synth.h"

/* One symbolized pc; module, function and file are string ids (0: none). */
void synth_frame(struct synth *s, uint64_t pc, uint64_t offset, uint32_t module,
		 uint32_t function, uint32_t sym_offset, uint32_t file, uint32_t line);
/* One Python frame (GP_REC_PYFRAME); id has GP_PYFRAME_BIT set. */
void synth_pyframe(struct synth *s, uint64_t id, uint32_t file, uint32_t function, uint32_t line,
		   uint32_t first_line);
/* Stack id of n frames (pcs), innermost first. */
void synth_stack(struct synth *s, uint32_t id, const uint64_t *pcs, uint32_t n);
void synth_corr_stack(struct synth *s, uint32_t correlation, uint32_t stack);
/* The MODULE record of the module at base (string ids; nid bytes of build-id). */
void synth_module(struct synth *s, uint64_t base, uint32_t module, uint32_t path,
		  const uint8_t *build_id, uint32_t nid);

#endif
