/*
 * Memory in use per device (model/memuse.h), for traces recorded with
 * --trace=...,memory: each device's peak, when it was reached, what was
 * still in use at the end and how many allocations and frees there were;
 * then the largest allocations, with whether and when they were freed.
 * Times are since the recorder started in the process.  Runs offline only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "views/text.h"

static int want(const struct ga_text *r)
{
	return ga_memuse_any(&r->an->mu);
}

/* t as a time since its process's recorder started (else since the first activity). */
static const char *since(const struct ga_model *m, uint32_t proc, uint64_t t, char *buf,
			 size_t n)
{
	const struct ga_proc *p = &m->procs[proc];
	uint64_t o = p->has_process && p->start_ns && p->start_ns <= t ? p->start_ns
								       : m->first_start;

	return ga_fmt_time(buf, n, t >= o ? t - o : 0);
}

static int devices(struct ga_text *r, FILE *out)
{
	const struct ga_memuse *mu = &r->an->mu;
	const struct ga_model *m = r->m;
	char b[4][48];
	struct ga_table t;
	int rc = 0;

	ga_table_init(&t, 8);
	ga_table_col(&t, 0, "Peak", 1, 0);
	ga_table_col(&t, 1, "Peak at", 1, 0);
	ga_table_col(&t, 2, "Final", 1, 0);
	ga_table_col(&t, 3, "Allocs", 1, 0);
	ga_table_col(&t, 4, "Frees", 1, 0);
	ga_table_col(&t, 5, "Allocated", 1, 0);
	ga_table_col(&t, 6, "Not freed", 1, 0);
	ga_table_col(&t, 7, "Device", 0, 0);
	for (size_t i = 0; i < mu->ndevs && !rc; i++) {
		const struct ga_memuse_dev *d = &mu->devs[i];

		rc |= ga_table_add(&t, ga_fmt_bytes(b[0], sizeof(b[0]), (double)d->peak));
		rc |= ga_table_add(&t, d->peak ? since(m, d->proc, d->peak_ns, b[1], sizeof(b[1]))
					       : "-");
		rc |= ga_table_add(&t, ga_fmt_bytes(b[2], sizeof(b[2]), (double)d->final));
		rc |= ga_table_addf(&t, "%" PRIu64, d->allocs);
		rc |= ga_table_addf(&t, "%" PRIu64, d->frees);
		rc |= ga_table_add(&t, ga_fmt_bytes(b[3], sizeof(b[3]), (double)d->alloc_bytes));
		rc |= ga_table_addf(&t, "%" PRIu64, d->live);
		rc |= ga_table_add(&t, ga_model_str(m, d->label));
	}
	if (!rc) {
		fputs("Memory in use (device memory allocated while tracing; times since the "
		      "recorder started):\n", out);
		if (mu->ndevs)
			ga_table_print(&t, out);
		else
			fputs("no device memory was allocated or freed\n", out);
		for (size_t i = 0; i < mu->ndevs; i++)
			if (mu->devs[i].unmatched_frees)
				fprintf(out, "%s: %" PRIu64 " free%s of memory allocated before "
					"tracing (or whose allocation was lost) not counted\n",
					ga_model_str(m, mu->devs[i].label), mu->devs[i].unmatched_frees,
					mu->devs[i].unmatched_frees == 1 ? "" : "s");
		if (mu->host_records)
			fprintf(out, "%" PRIu64 " allocation or free record%s of host memory "
				"(pinned, pageable) not counted\n", mu->host_records,
				mu->host_records == 1 ? "" : "s");
	}
	ga_table_free(&t);
	return rc ? -1 : 0;
}

static int largest(struct ga_text *r, FILE *out)
{
	const struct ga_memuse *mu = &r->an->mu;
	const struct ga_model *m = r->m;
	char b[3][48];
	struct ga_table t;
	size_t n, shown;
	struct ga_memuse_ref *ord = ga_memuse_order_largest(mu, &n);
	int rc = 0;

	if (n == SIZE_MAX)
		return -1;
	if (!n)
		return 0;
	shown = r->o.top && (size_t)r->o.top < n ? (size_t)r->o.top : n;
	ga_table_init(&t, 6);
	ga_table_col(&t, 0, "Size", 1, 0);
	ga_table_col(&t, 1, "Allocated at", 1, 0);
	ga_table_col(&t, 2, "Freed at", 1, 0);
	ga_table_col(&t, 3, "Kind", 0, 0);
	ga_table_col(&t, 4, "Address", 0, 0);
	ga_table_col(&t, 5, "Device", 0, 0);
	for (size_t i = 0; i < shown && !rc; i++) {
		const struct ga_memuse_dev *d = &mu->devs[ord[i].dev];
		const struct ga_memuse_alloc *a = &d->top[ord[i].i];

		rc |= ga_table_add(&t, ga_fmt_bytes(b[0], sizeof(b[0]), (double)a->bytes));
		rc |= ga_table_add(&t, since(m, d->proc, a->alloc_ns, b[1], sizeof(b[1])));
		rc |= ga_table_add(&t, a->freed ? since(m, d->proc, a->free_ns, b[2], sizeof(b[2]))
						: "not freed");
		rc |= ga_table_addf(&t, "%s%s%s", ga_model_mem_kind(a->kind),
				    a->flags & GP_MEM_F_ASYNC ? ", async" : "",
				    a->flags & GP_MEM_F_POOL ? ", pool" : "");
		rc |= ga_table_addf(&t, "0x%" PRIx64, a->address);
		rc |= ga_table_add(&t, ga_model_str(m, d->label));
	}
	if (!rc) {
		fputs("\nLargest allocations:\n", out);
		ga_table_print(&t, out);
		ga_text_more_line(out, shown, n, "allocations");
	}
	ga_table_free(&t);
	free(ord);
	return rc ? -1 : 0;
}

static int print(struct ga_text *r, FILE *out)
{
	if (devices(r, out))
		return -1;
	return largest(r, out);
}

const struct ga_text_section ga_text_memuse = { "memuse", want, print };
