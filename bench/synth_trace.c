/*
 * synth_trace: writes a valid gpuprof trace holding N kernel records, for
 * timing the analyzer on large inputs without a GPU.
 *
 *     synth_trace N OUT.gpuprof
 *
 * The file has what the recorder writes for a kernel-only run: a PROCESS
 * record, a CONFIG, one DEVICE, a STRING per kernel name (20 names), N
 * kernel records on 4 streams with increasing timestamps and varied
 * durations, and an END record, in chunks of at most 1 MiB of raw records,
 * delta-coded and each one zstd frame (level 1) with its CRC-32C, as the
 * recorder writes them (the format of include/gpuprof/trace.h, written by
 * the writer in test/unit/synth.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "synth.h"

#define NNAMES 20

static const char *const names[NNAMES] = {
	"_Z12empty_kernelv",
	"_Z10vector_addPKfS0_Pfi",
	"_Z6reducePfS_i",
	"_Z9transposePfPKfii",
	"_Z11softmax_fwdPKfPfii",
	"_Z10layer_normPKfS0_S0_Pfii",
	"_Z4geluPKfPfi",
	"_Z9copy_fp16P6__halfPKS_i",
	"_Z8sgemm_ntiiiPKfS0_Pf",
	"_Z13attention_fwdPK6__halfS1_S1_PS_iii",
	"_Z13attention_bwdPK6__halfS1_S1_PS_iii",
	"_Z9adam_stepPfS_S_PKfffffi",
	"_Z11embeddingfwPKiPKfPfii",
	"_Z13cross_entropyPKfPKiPfii",
	"_Z10dropout_fwPKfPfPhfi",
	"_Z7scatterPKfPKiPfi",
	"_Z6gatherPKfPKiPfi",
	"_Z11fill_kernelPffi",
	"_Z13bias_add_reluPfPKfii",
	"_Z16allreduce_kernelPfPKfi",
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

int main(int argc, char **argv)
{
	uint32_t ids[NNAMES];
	uint64_t t, start_ns = 1700000000000000000ull;
	unsigned long long n, i;
	struct synth *s;
	char *end = NULL;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N OUT.gpuprof\n", argv[0]);
		return 2;
	}
	n = strtoull(argv[1], &end, 10);
	if (!end || *end || n == 0) {
		fprintf(stderr, "synth_trace: bad record count '%s'\n", argv[1]);
		return 2;
	}
	s = synth_open(argv[2]);
	if (!s) {
		perror(argv[2]);
		return 1;
	}
	s->chunk_limit = (size_t)1 << 20;
	s->delta = 1;
	s->hdr.features = GP_FEAT_DELTA;
	synth_process(s, 4242, "bench-host", "./train --synthetic", UINT32_MAX, start_ns);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_MEMSET, 0, 0);
	synth_device(s, 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85ull << 30, 0x10);
	for (i = 0; i < NNAMES; i++)
		ids[i] = synth_string(s, names[i]);

	t = start_ns + 1000000;
	for (i = 0; i < n; i++) {
		uint32_t r = rnd();
		/* Skewed name choice: a few kernels dominate, as in real runs. */
		uint32_t name = ids[(r & 0xff) < 160 ? r % 4 : r % NNAMES];
		uint64_t dur = 1500 + (r >> 8) % 48000;           /* 1.5 to 50 us */
		uint32_t stream = 7 + (uint32_t)(i % 4);

		synth_kernel(s, name, t, t + dur, 0, stream, 0, 0);
		t += 800 + (rnd() % 4000) + dur / 4;               /* launches overlap across streams */
	}
	synth_end(s, t + 1000000, 0);
	if (synth_close(s, NULL, NULL) != 0) {
		fprintf(stderr, "synth_trace: writing %s failed\n", argv[2]);
		return 1;
	}
	fprintf(stderr, "synth_trace: %llu kernel records in %s\n", n, argv[2]);
	return 0;
}
