/*
 * libFuzzer target for what the recorder takes from outside through NVTX
 * and capture ranges: the NVTX tool's handlers (cupti/nvtx_tool.c), called
 * through a stand-in NVTX export table as a program's NVTX calls would
 * reach them, with fuzzer-chosen ASCII and wide messages, event attribute
 * structures of any declared size with any category, color, payload and
 * message types, domains, registered strings and range ids; and the
 * capture-range values (GPUPROF_CAPTURE_RANGE and _END, parsed by
 * cupti/capture.c) whose ranges those calls open and close.  After each
 * input the events are drained into the chunk ring as records (the ring's
 * chunks are then discarded).
 *
 * Input: the capture range value up to the first newline, the range end
 * value up to the second, then a program: each byte picks a call, whose
 * arguments follow (a string is a length byte, times 8 for messages that
 * pass the tool's 1 KiB limit, and its bytes; a wide character is 4
 * bytes).  Each input runs on a thread of its own, so the per-thread push
 * stacks start empty.  `make fuzz` runs it after the other targets;
 * test/unit/test_fuzz_smoke.c runs fixed inputs through it.  Offline test
 * code.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL
#endif
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "../../cupti/capture.h"
#include "../../cupti/nvtx_tool.h"
#include "recorder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The stand-in NVTX instance: one slot per entry point. */
static NvtxFunctionPointer nf_core_fn[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer nf_core2_fn[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *nf_core_tab[NVTX_CBID_CORE_SIZE];
static NvtxFunctionPointer *nf_core2_tab[NVTX_CBID_CORE2_SIZE];

static int NVTX_API nf_get_module(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned int *n)
{
	if (m == NVTX_CB_MODULE_CORE) {
		*out = nf_core_tab;
		*n = NVTX_CBID_CORE_SIZE;
		return 1;
	}
	if (m == NVTX_CB_MODULE_CORE2) {
		*out = nf_core2_tab;
		*n = NVTX_CBID_CORE2_SIZE;
		return 1;
	}
	return 0;
}

static const NvtxExportTableCallbacks nf_callbacks = { sizeof(NvtxExportTableCallbacks),
						       nf_get_module };

static const void *NVTX_API nf_get_export_table(uint32_t id)
{
	return id == NVTX_ETID_CALLBACKS ? &nf_callbacks : NULL;
}

#define NF_CORE(name, type) ((type)nf_core_fn[NVTX_CBID_CORE_##name])
#define NF_CORE2(name, type) ((type)nf_core2_fn[NVTX_CBID_CORE2_##name])

/* Capture-range callbacks: no CUPTI here. */
static uint64_t nf_clock;
static void nf_set_tracing(int on)
{
	(void)on;
}
static void nf_sync(void)
{
}
static uint64_t nf_now(void)
{
	return ++nf_clock;
}

/* Handles registered strings keep for good: bounded over a whole campaign. */
#define NF_MAX_REGISTERED 50000
static unsigned nf_registered;

struct nf_prog {
	const uint8_t *p, *end;
	nvtxRangeId_t ids[16];
	nvtxDomainHandle_t doms[8];
	nvtxStringHandle_t strs[8];
	void *garbage[256];          /* strings and attributes of this input */
	unsigned ngarbage;
};

static unsigned nf_byte(struct nf_prog *g)
{
	return g->p < g->end ? *g->p++ : 0;
}

static void *nf_keep(struct nf_prog *g, void *p)
{
	if (p && g->ngarbage < sizeof(g->garbage) / sizeof(g->garbage[0]))
		return g->garbage[g->ngarbage++] = p;
	free(p);
	return NULL;
}

static const char *nf_str(struct nf_prog *g, unsigned scale)
{
	size_t n = (size_t)nf_byte(g) * scale, have = (size_t)(g->end - g->p);
	char *s;

	if (n > have && scale == 1)
		n = have;
	if (!(s = nf_keep(g, malloc(n + 1))))
		return "";
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(i < have ? g->p[i] : 'a' + i % 26);
	g->p += n < have ? n : have;
	s[n] = 0;
	return s;
}

static const wchar_t *nf_wstr(struct nf_prog *g)
{
	size_t n = nf_byte(g);
	wchar_t *w = nf_keep(g, malloc((n + 1) * sizeof(*w)));

	if (!w)
		return L"";
	for (size_t i = 0; i < n; i++) {
		uint32_t c = 0;

		for (int k = 0; k < 4; k++)
			c = c << 8 | nf_byte(g);
		w[i] = (wchar_t)c ? (wchar_t)c : L'x';
	}
	w[n] = 0;
	return w;
}

/* An attribute structure as a program of some NVTX version passes it. */
static const nvtxEventAttributes_t *nf_attr(struct nf_prog *g)
{
	unsigned kind = nf_byte(g);
	size_t declared, alloc;
	nvtxEventAttributes_t *a;
	unsigned char *raw;

	if (kind % 8 == 0)
		return NULL;
	declared = kind % 8 == 1 ? nf_byte(g) : NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	alloc = declared < 4 ? 4 : declared;
	if (!(raw = nf_keep(g, calloc(1, alloc))))
		return NULL;
	for (size_t i = 0; i < alloc && i < 40; i++)
		raw[i] = (unsigned char)nf_byte(g);
	a = (nvtxEventAttributes_t *)(void *)raw;
	a->version = NVTX_VERSION;
	a->size = (uint16_t)declared;
	/* A message of the type it says, where the structure has one. */
	if (declared >= offsetof(nvtxEventAttributes_t, message) + sizeof(a->message)) {
		switch (kind / 8 % 5) {
		case 0:
			a->messageType = NVTX_MESSAGE_TYPE_ASCII;
			a->message.ascii = nf_byte(g) % 4 ? nf_str(g, nf_byte(g) % 2 ? 8 : 1) : NULL;
			break;
		case 1:
			a->messageType = NVTX_MESSAGE_TYPE_UNICODE;
			a->message.unicode = nf_byte(g) % 4 ? nf_wstr(g) : NULL;
			break;
		case 2:
			a->messageType = NVTX_MESSAGE_TYPE_REGISTERED;
			a->message.registered = g->strs[nf_byte(g) % 8];
			break;
		case 3:
			a->message.ascii = NULL; /* any messageType, no message */
			break;
		default:
			a->messageType = NVTX_MESSAGE_UNKNOWN;
			a->message.ascii = NULL;
			break;
		}
	}
	return a;
}

static nvtxDomainHandle_t nf_dom(struct nf_prog *g)
{
	return g->doms[nf_byte(g) % 8];
}

static void nf_run(struct nf_prog *g, int depth);

struct nf_child {
	struct nf_prog *g;
	int depth;
};

static void *nf_child_main(void *arg)
{
	struct nf_child *c = arg;

	nf_run(c->g, c->depth);
	return NULL;
}

/* Runs the program's calls; op 24 runs the next ones on another thread. */
static void nf_run(struct nf_prog *g, int depth)
{
	while (g->p < g->end) {
		unsigned op = nf_byte(g) % 26, slot;
		nvtxRangeId_t id;
		const char *s;

		switch (op) {
		case 0:
			NF_CORE(RangePushA, nvtxRangePushA_impl_fntype)(nf_str(g, 1));
			break;
		case 1:
			NF_CORE(RangePushA, nvtxRangePushA_impl_fntype)(nf_str(g, 8));
			break;
		case 2:
			NF_CORE(RangePushW, nvtxRangePushW_impl_fntype)(nf_wstr(g));
			break;
		case 3:
			NF_CORE(RangePushEx, nvtxRangePushEx_impl_fntype)(nf_attr(g));
			break;
		case 4:
		case 5:
			NF_CORE(RangePop, nvtxRangePop_impl_fntype)();
			break;
		case 6:
			slot = nf_byte(g) % 16;
			g->ids[slot] = NF_CORE(RangeStartA, nvtxRangeStartA_impl_fntype)(nf_str(g, 1));
			break;
		case 7:
			slot = nf_byte(g) % 16;
			g->ids[slot] = NF_CORE(RangeStartEx, nvtxRangeStartEx_impl_fntype)(nf_attr(g));
			break;
		case 8:
			slot = nf_byte(g) % 16;
			g->ids[slot] = NF_CORE(RangeStartW, nvtxRangeStartW_impl_fntype)(nf_wstr(g));
			break;
		case 9:
			NF_CORE(RangeEnd, nvtxRangeEnd_impl_fntype)(g->ids[nf_byte(g) % 16]);
			break;
		case 10:
			/* Any id at all, as a confused program may pass. */
			id = 0;
			for (int k = 0; k < 8; k++)
				id = id << 8 | nf_byte(g);
			NF_CORE(RangeEnd, nvtxRangeEnd_impl_fntype)(id);
			break;
		case 11:
			NF_CORE(MarkA, nvtxMarkA_impl_fntype)(nf_str(g, nf_byte(g) % 2 ? 8 : 1));
			break;
		case 12:
			NF_CORE(MarkW, nvtxMarkW_impl_fntype)(nf_wstr(g));
			break;
		case 13:
			NF_CORE(MarkEx, nvtxMarkEx_impl_fntype)(nf_attr(g));
			break;
		case 14:
			slot = nf_byte(g) % 8;
			g->doms[slot] = NF_CORE2(DomainCreateA, nvtxDomainCreateA_impl_fntype)(
				nf_str(g, nf_byte(g) % 2 ? 8 : 1));
			break;
		case 15:
			slot = nf_byte(g) % 8;
			g->doms[slot] = NF_CORE2(DomainCreateW, nvtxDomainCreateW_impl_fntype)(nf_wstr(g));
			break;
		case 16:
			NF_CORE2(DomainRangePushEx, nvtxDomainRangePushEx_impl_fntype)(nf_dom(g), nf_attr(g));
			break;
		case 17:
			NF_CORE2(DomainRangePop, nvtxDomainRangePop_impl_fntype)(nf_dom(g));
			break;
		case 18:
			NF_CORE2(DomainMarkEx, nvtxDomainMarkEx_impl_fntype)(nf_dom(g), nf_attr(g));
			break;
		case 19:
			slot = nf_byte(g) % 16;
			g->ids[slot] = NF_CORE2(DomainRangeStartEx, nvtxDomainRangeStartEx_impl_fntype)(
				nf_dom(g), nf_attr(g));
			break;
		case 20:
			NF_CORE2(DomainRangeEnd, nvtxDomainRangeEnd_impl_fntype)(nf_dom(g),
										 g->ids[nf_byte(g) % 16]);
			break;
		case 21:
		case 22:
			slot = nf_byte(g) % 8;
			s = nf_str(g, nf_byte(g) % 2 ? 8 : 1);
			if (nf_registered >= NF_MAX_REGISTERED)
				break;
			nf_registered++;
			if (op == 21)
				g->strs[slot] = NF_CORE2(DomainRegisterStringA,
							 nvtxDomainRegisterStringA_impl_fntype)(nf_dom(g), s);
			else
				g->strs[slot] = NF_CORE2(DomainRegisterStringW,
							 nvtxDomainRegisterStringW_impl_fntype)(nf_dom(g),
												nf_wstr(g));
			break;
		case 23:
			/* The recorder's flusher drains while the program calls. */
			gp_ring_lock(&gp_rec.ring);
			gp_nvtxtool_drain();
			gp_ring_unlock(&gp_rec.ring);
			break;
		case 24:
			if (depth < 2) {
				struct nf_child c = { g, depth + 1 };
				pthread_t th;

				if (pthread_create(&th, NULL, nf_child_main, &c) == 0)
					pthread_join(th, NULL);
			}
			break;
		default:
			/* cudaProfilerStart/Stop as the capture callbacks see them. */
			{
				CUpti_CallbackData cd;

				memset(&cd, 0, sizeof(cd));
				cd.callbackSite = nf_byte(g) % 2 ? CUPTI_API_EXIT : CUPTI_API_ENTER;
				gp_capture_callback(CUPTI_CB_DOMAIN_DRIVER_API,
						    nf_byte(g) % 2 ? CUPTI_DRIVER_TRACE_CBID_cuProfilerStart
								   : CUPTI_DRIVER_TRACE_CBID_cuProfilerStop,
						    &cd);
			}
			break;
		}
	}
}

static void *nf_main(void *arg)
{
	nf_run(arg, 0);
	return NULL;
}

/* Sealed chunks are dropped: the records were made, which is what is tested. */
static void nf_discard(void)
{
	struct gp_chunk *c;

	gp_ring_seal(&gp_rec.ring, 0);
	while ((c = gp_ring_pop(&gp_rec.ring, 0)))
		gp_ring_release(&gp_rec.ring, c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gp_config cfg;
	static int ready;
	const struct gp_capture_ops ops = { nf_set_tracing, nf_sync, nf_now };
	struct nf_prog g;
	const uint8_t *nl;
	size_t n;
	pthread_t th;
	int devnull, saved_err, armed;

	if (!ready) {
		for (int i = 0; i < NVTX_CBID_CORE_SIZE; i++)
			nf_core_tab[i] = &nf_core_fn[i];
		for (int i = 0; i < NVTX_CBID_CORE2_SIZE; i++)
			nf_core2_tab[i] = &nf_core2_fn[i];
		memset(&gp_rec, 0, sizeof(gp_rec));
		gp_ring_init(&gp_rec.ring, 64 << 10, 4, 0);
		atomic_store(&gp_rec.state, GP_ACTIVE);
		ready = 1;
	}
	gp_intern_init(&gp_rec.strings);
	memset(&g, 0, sizeof(g));
	g.p = data;
	g.end = data + size;

	/* The two capture-range values, cut to what the configuration keeps. */
	memset(cfg.capture_range, 0, sizeof(cfg.capture_range));
	memset(cfg.capture_end, 0, sizeof(cfg.capture_end));
	nl = memchr(g.p, '\n', (size_t)(g.end - g.p));
	n = (size_t)((nl ? nl : g.end) - g.p);
	memcpy(cfg.capture_range, g.p, n < sizeof(cfg.capture_range) - 1 ? n : sizeof(cfg.capture_range) - 1);
	g.p = nl ? nl + 1 : g.end;
	nl = memchr(g.p, '\n', (size_t)(g.end - g.p));
	n = (size_t)((nl ? nl : g.end) - g.p);
	memcpy(cfg.capture_end, g.p, n < sizeof(cfg.capture_end) - 1 ? n : sizeof(cfg.capture_end) - 1);
	g.p = nl ? nl + 1 : g.end;
	gp_nvtxtool_set_capture_hooks(NULL);
	/* Malformed values are said on stderr: not here. */
	fflush(stderr);
	devnull = open("/dev/null", O_WRONLY);
	saved_err = dup(2);
	dup2(devnull, 2);
	armed = gp_capture_init(&cfg, &ops) == 1;
	dup2(saved_err, 2);
	close(saved_err);
	close(devnull);
	/* Only the NVTX mode arms hooks without CUPTI (the profiler mode
	 * enables CUPTI callbacks; its callback path is driven directly). */
	if (armed && !strncmp(cfg.capture_range, "nvtx:", 5))
		gp_capture_enable_callbacks(NULL);

	gp_nvtxtool_inject((const void *)nf_get_export_table, GP_NVTX_RECORD | GP_NVTX_CAPTURE);
	if (pthread_create(&th, NULL, nf_main, &g) == 0)
		pthread_join(th, NULL);

	/* The end of the trace: open capture and NVTX ranges closed. */
	gp_ring_lock(&gp_rec.ring);
	gp_capture_finish(nf_now());
	gp_nvtxtool_close_all(nf_now());
	gp_emit_lost(0);
	nf_discard();
	gp_ring_unlock(&gp_rec.ring);
	gp_intern_free(&gp_rec.strings);
	for (unsigned i = 0; i < g.ngarbage; i++)
		free(g.garbage[i]);
	return 0;
}
