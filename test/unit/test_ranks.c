/*
 * Unit tests of ranks (analyzer/model/ranks.c and the views that name
 * ranks): a synthetic 3-rank job (ranks 10, 0, 1 given in that order) with
 * compute and NCCL kernels that partly overlap and NVTX step ranges; the
 * per-rank figures, the order, the steps, and how the report, JSON, CSV
 * and Chrome export name the ranks; a job of many steps whose busy
 * intervals retire as it is read.  Test code, runs offline only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/analysis.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define NCCL "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLP24ncclDevKernelArgsStorageILm4096EE"

static char dir[64];
static const uint32_t rank_of_file[3] = { 10, 0, 1 };
static char paths[3][128];

/*
 * Rank r (times from T0, ns):
 *   compute [0, 1000), NCCL [800, 1500)         200 overlap, 500 exposed
 *   compute [2000, 2500 + 100 r'), NCCL [3000, 3100)   100 exposed
 *   rank 1 only: compute [1100, 1400), under the first NCCL kernel
 * where r' is 0, 1, 2 for ranks 0, 1, 10.  Steps ProfilerStep#0 [0, ~1600)
 * and #1 [1900, ~3200) (with a nested "step_inner" that must not count);
 * a rank's work in a step ends with its last compute kernel there:
 *   step 0: 1000, 1400, 1000 (rank 1 slowest, 400 over the least);
 *   step 1: 600, 700, 800 (rank 10 slowest, 200 over rank 0).
 * One extra "forward" range is no step.
 */
static void write_rank(const char *path, uint32_t rank)
{
	struct synth *s = synth_open(path);
	uint64_t rp = rank == 0 ? 0 : rank == 1 ? 1 : 2;
	uint64_t step1 = rank == 0 ? 1300 : rank == 1 ? 1600 : 1350;
	uint32_t gemm, nccl, p0, p1, inner, fwd;

	synth_process(s, 500 + rank, "node1", "python3 train.py", rank, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1, (uint8_t)(0x40 + rank));
	gemm = synth_string(s, "_Z4gemmv");
	nccl = synth_string(s, NCCL);
	p0 = synth_string(s, "ProfilerStep#0");
	p1 = synth_string(s, "ProfilerStep#1");
	inner = synth_string(s, "step_inner");
	fwd = synth_string(s, "forward");
	synth_kernel(s, gemm, T0, T0 + 1000, 0, 7, 0, 0);
	synth_kernel(s, nccl, T0 + 800, T0 + 1500, 0, 9, 0, 0);
	if (rank == 1)
		synth_kernel(s, gemm, T0 + 1100, T0 + 1400, 0, 8, 0, 0);
	synth_kernel(s, gemm, T0 + 2000, T0 + 2500 + 100 * rp, 0, 7, 0, 0);
	synth_kernel(s, nccl, T0 + 3000, T0 + 3100, 0, 9, 0, 0);
	synth_nvtx_range(s, p0, 0, T0, T0 + 1600 + 10 * rp, 1, 1, 1, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, inner, 0, T0 + 10, T0 + 20, 1, 1, 2, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, p1, 0, T0 + 1900, T0 + 1900 + step1, 1, 1, 3, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, fwd, 0, T0 + 1950, T0 + 1960, 1, 1, 4, GP_NVTX_PUSHPOP);
	synth_end(s, T0 + 5000, 0);
	synth_close(s, NULL, NULL);
}

#define run(out, err, ...) synth_run(dir, out, err, __VA_ARGS__)

static void test_names(void)
{
	tap_begin("NCCL kernels and step ranges are recognized by name");
	CHECK(ga_ranks_is_nccl(NCCL));
	CHECK(ga_ranks_is_nccl("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
	CHECK(ga_ranks_is_nccl("_Z22ncclDevKernel_SendRecvP24ncclDevKernelArgsStorageILm4096EE"));
	CHECK(ga_ranks_is_nccl("_Z30ncclSymkDevKernel_AllReduce_LLv"));
	CHECK(!ga_ranks_is_nccl("_Z4gemmv"));
	CHECK(!ga_ranks_is_nccl("_Z12my_ncclcheckv"));
	CHECK(!ga_ranks_is_nccl("vectorized_nccl_like"));
	CHECK(ga_ranks_is_step("ProfilerStep#12"));
	CHECK(ga_ranks_is_step("step"));
	CHECK(ga_ranks_is_step("Step 3"));
	CHECK(ga_ranks_is_step("train_step"));
	CHECK(ga_ranks_is_step("iteration_7"));
	CHECK(!ga_ranks_is_step("ProfilerStep#"));
	CHECK(!ga_ranks_is_step("steps_total"));
	CHECK(!ga_ranks_is_step("forward"));
	tap_end();
}

static void test_model(void)
{
	char *argv[3] = { paths[0], paths[1], paths[2] };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_ranks *rk = &an.rk;

	tap_begin("per-rank figures, rank order and steps of a 3-rank job");
	ga_filter_init(&flt);
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	CHECK(ga_analysis_build(&an, argv, 3) == 0);
	CHECK(ga_ranks_wanted(rk) && rk->nrows == 3 && rk->nhosts == 1);
	for (size_t i = 0; i < rk->nrows && i < 3; i++) {
		const struct ga_rank_row *w = &rk->rows[i];
		uint64_t rp = i;   /* rows are ranks 0, 1, 10 */

		CHECKF(w->rank == (i == 2 ? 10u : (uint32_t)i), "row %zu is rank %u", i, w->rank);
		CHECKF(w->kernels == 4 + (rp == 1) && w->nccl_kernels == 2,
		       "rank %u: %llu kernels, %llu NCCL", w->rank, (unsigned long long)w->kernels,
		       (unsigned long long)w->nccl_kernels);
		CHECKF(w->compute_ns == 1000 + 500 + 100 * rp + (rp == 1 ? 300 : 0),
		       "rank %u compute %llu", w->rank, (unsigned long long)w->compute_ns);
		CHECKF(w->comm_ns == 800 && w->exposed_ns == (rp == 1 ? 300u : 600u),
		       "rank %u NCCL %llu exposed %llu", w->rank, (unsigned long long)w->comm_ns,
		       (unsigned long long)w->exposed_ns);
		CHECKF(w->busy_ns == 1500 + 500 + 100 * rp + 100, "rank %u busy %llu", w->rank,
		       (unsigned long long)w->busy_ns);
		CHECKF(w->steps == 2 && w->devices == 1, "rank %u steps %llu", w->rank,
		       (unsigned long long)w->steps);
	}
	CHECK(rk->rows[0].slowest == 0 && rk->rows[1].slowest == 1 && rk->rows[2].slowest == 1);
	CHECK(rk->rows[1].lag_ns == 400 && rk->rows[2].lag_ns == 200);
	CHECKF(rk->nsteps == 2, "%zu steps", rk->nsteps);
	if (rk->nsteps == 2) {
		const struct ga_rank_step *s0 = &rk->steps[0], *s1 = &rk->steps[1];

		CHECK(s0->index == 0 && s0->ranks == 3 && rk->rows[s0->slowest].rank == 1 &&
		      s0->slowest_ns == 1400 && s0->fastest_ns == 1000 && s0->median_ns == 1000);
		CHECK(s1->index == 1 && rk->rows[s1->slowest].rank == 10 && s1->slowest_ns == 800 &&
		      rk->rows[s1->fastest].rank == 0 && s1->fastest_ns == 600 &&
		      s1->median_ns == 700);
		CHECK(!strcmp(ga_model_str(&an.m, s0->name), "ProfilerStep#0"));
	}
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	/*
	 * Each rank's trace alone (a summary's read, or a report of one
	 * trace): the same figures, its GPU busy time the model's union of
	 * the device's activities.
	 */
	for (size_t i = 0; i < 3; i++) {
		uint64_t rp = rank_of_file[i] == 10 ? 2 : rank_of_file[i];

		ga_filter_init(&flt);
		CHECK(ga_analysis_init(&an, &o, &flt) == 0);
		CHECK(ga_analysis_build(&an, argv + i, 1) == 0);
		CHECKF(rk->nrows == 1 && an.m.ndevs == 1 &&
			       rk->rows[0].busy_ns == 1500 + 500 + 100 * rp + 100 &&
			       rk->rows[0].busy_ns == an.m.devs[0].busy_ns &&
			       rk->rows[0].compute_ns == 1000 + 500 + 100 * rp + (rp == 1 ? 300 : 0) &&
			       rk->rows[0].devices == 1,
		       "rank %u alone: busy %llu, the device's %llu", rank_of_file[i],
		       rk->nrows ? (unsigned long long)rk->rows[0].busy_ns : 0ull,
		       an.m.ndevs ? (unsigned long long)an.m.devs[0].busy_ns : 0ull);
		ga_analysis_free(&an);
		ga_filter_free(&flt);
	}
	tap_end();
}

static void test_views(void)
{
	char *out = NULL, *err = NULL;
	const char *a, *b, *c;
	int rc;

	tap_begin("the report names ranks, in rank order, and prints the rank table");
	rc = run(&out, &err, cmd_report, "report", paths[0], paths[1], paths[2], NULL);
	CHECKF(rc == 0, "rc %d: %s", rc, err ? err : "");
	a = out ? strstr(out, "rank 0, pid 500 on node1") : NULL;
	b = out ? strstr(out, "rank 1, pid 501 on node1") : NULL;
	c = out ? strstr(out, "rank 10, pid 510 on node1") : NULL;
	CHECKF(a && b && c && a < b && b < c, "%s", out ? out : "");
	CHECK(out && strstr(out, "[rank 0, rank 1, rank 10]") == NULL);  /* one GPU each */
	CHECK(out && strstr(out, " [rank 10]\n"));
	CHECK(out && strstr(out, "| cuda:0 [rank 0]\n") && strstr(out, "| cuda:0 [rank 10]\n"));
	a = out ? strstr(out, "| cuda:0 [rank 0]\n") : NULL;
	b = out ? strstr(out, "| cuda:0 [rank 1]\n") : NULL;
	c = out ? strstr(out, "| cuda:0 [rank 10]\n") : NULL;
	CHECK(a && b && c && a < b && b < c);
	CHECK(out && strstr(out, "Ranks ("));
	CHECKF(out && strstr(out, "| rank 1 ") && strstr(out, " 1 of 2 | "), "%s", out ? out : "");
	CHECK(out && strstr(out, "Steps (NVTX step ranges"));
	CHECK(out && strstr(out, "ProfilerStep#1"));
	CHECK(out && !strstr(out, "Warnings:"));
	CHECK(out && !strstr(out, "pid 510,"));
	free(out);
	free(err);
	tap_end();

	tap_begin("JSON: processes in rank order, ranks and steps");
	rc = run(&out, &err, cmd_export, "export", "--format", "json", paths[0], paths[1],
		 paths[2], NULL);
	CHECK(rc == 0);
	a = out ? strstr(out, "{\"pid\":500,") : NULL;
	b = out ? strstr(out, "{\"pid\":510,") : NULL;
	CHECK(a && b && a < b);
	CHECKF(out && strstr(out, "{\"rank\":1,\"name\":\"rank 1\",\"host\":\"node1\",\"pid\":501,"
			       "\"devices\":1,\"gpu_busy_ns\":2200,\"compute_ns\":1900,\"nccl_ns\":800,"
			       "\"nccl_not_overlapped_ns\":300,\"kernels\":5,\"nccl_kernels\":2,"
			       "\"steps\":2,\"slowest_steps\":1,\"behind_fastest_ns\":400,"
			       "\"clock_correction_ns\":0}"),
	       "%s", out ? out : "");
	CHECK(out && strstr(out, "{\"index\":1,\"range\":\"ProfilerStep#1\",\"ranks\":3,"
			    "\"slowest_rank\":10,\"slowest_ns\":800,\"median_ns\":700,"
			    "\"fastest_rank\":0,\"fastest_ns\":600}"));
	free(out);
	free(err);
	tap_end();

	tap_begin("CSV has a rank column; Chrome names ranks and sorts by them");
	rc = run(&out, &err, cmd_export, "export", "--format", "csv", paths[0], NULL);
	CHECK(rc == 0 && out && strstr(out, ",pid,nvtx,stack,host,rank,file\n") &&
	      strstr(out, ",510,,,node1,10,"));
	free(out);
	free(err);
	rc = run(&out, &err, cmd_export, "export", "--format", "chrome", paths[0], paths[1], NULL);
	CHECK(rc == 0 && out && strstr(out, "\"name\":\"rank 10: python3 train.py [510] on node1\""));
	CHECK(out && strstr(out, "\"name\":\"process_sort_index\",\"ph\":\"M\",\"cat\":\"__metadata\","
			    "\"pid\":510,\"args\":{\"sort_index\":10}"));
	CHECK(out && strstr(out, "\"args\":{\"sort_index\":0}"));
	free(out);
	free(err);
	tap_end();
}

/* Two hosts: names carry the host; a repeated rank carries the pid. */
static void test_hosts(void)
{
	char p2[128], p3[128], *out = NULL, *err = NULL;
	struct synth *s;
	int rc;

	snprintf(p2, sizeof(p2), "%s/h2.gpuprof", dir);
	snprintf(p3, sizeof(p3), "%s/h3.gpuprof", dir);
	s = synth_open(p2);
	synth_process(s, 700, "node2", "python3 train.py", 0, T0);
	synth_kernel(s, synth_string(s, "_Z4gemmv"), T0, T0 + 10, 0, 7, 0, 0);
	synth_end(s, T0 + 100, 0);
	synth_close(s, NULL, NULL);
	s = synth_open(p3);
	synth_process(s, 800, "node1", "python3 train.py", 2, T0);
	synth_kernel(s, synth_string(s, "_Z4gemmv"), T0, T0 + 10, 0, 7, 0, 0);
	synth_end(s, T0 + 100, 0);
	synth_close(s, NULL, NULL);
	tap_begin("several hosts: rank N@host; a rank seen twice names its pid");
	rc = run(&out, &err, cmd_report, "report", paths[1], p2, p3, NULL);
	CHECK(rc == 0 && out && strstr(out, "| cuda:0 [rank 0@node1, pid 500]\n") &&
	      strstr(out, "| cuda:0 [rank 0@node2, pid 700]\n") &&
	      strstr(out, "| cuda:0 [rank 2@node1]\n"));
	free(out);
	free(err);
	tap_end();
}

/*
 * Many steps (more intervals than a union keeps before it retires, over
 * more than GA_BUSY_LAG): rank r, step i at t = 1 ms x i: compute [t, t+300) on stream 7, NCCL [t+250, t+400)
 * on stream 9 (50 under compute), compute [t+500, t+600+10r+i%7) on
 * stream 8, the step [t, t+900) written at the end, as the recorder does;
 * every third step from 0 a compute kernel [t+800, t+1200) on stream 7
 * past the step's end (clipped: work 900 on both ranks), every third from
 * 1 one [t+900, t+950) that starts at its end (not in it).  Else the
 * work in step i is 600+10r+i%7: rank 1 the slowest by 10.
 */
#define MANY 5000ull

static uint64_t many_work(uint64_t r, uint64_t i)
{
	return i % 3 == 0 ? 900 : 600 + 10 * r + i % 7;
}

static void write_many(const char *path, uint32_t rank)
{
	struct synth *s = synth_open(path);
	uint32_t gemm, nccl, st;

	synth_process(s, 900 + rank, "node1", "python3 train.py", rank, T0);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_NVTX, 0, 0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1, (uint8_t)(0x60 + rank));
	gemm = synth_string(s, "_Z4gemmv");
	nccl = synth_string(s, NCCL);
	st = synth_string(s, "step");
	for (uint64_t i = 0; i < MANY; i++) {
		uint64_t t = T0 + 1000000 * i;

		synth_kernel(s, gemm, t, t + 300, 0, 7, 0, 0);
		synth_kernel(s, nccl, t + 250, t + 400, 0, 9, 0, 0);
		synth_kernel(s, gemm, t + 500, t + 600 + 10 * rank + i % 7, 0, 8, 0, 0);
		if (i % 3 < 2)
			synth_kernel(s, gemm, t + 800 + 100 * (i % 3), i % 3 ? t + 950 : t + 1200, 0,
				     7, 0, 0);
	}
	for (uint64_t i = 0; i < MANY; i++)
		synth_nvtx_range(s, st, 0, T0 + 1000000 * i, T0 + 1000000 * i + 900, 1, 1, i + 1,
				 GP_NVTX_PUSHPOP);
	synth_end(s, T0 + 1000000 * MANY, 0);
	synth_close(s, NULL, NULL);
}

static void test_retire(void)
{
	char p0[128], p1[128];
	char *argv[2] = { p0, p1 };
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	const struct ga_ranks *rk = &an.rk;
	uint64_t compute = 0, kernels = 0, ties = 0;
	int bad = 0, ndev = 0;

	snprintf(p0, sizeof(p0), "%s/m0.gpuprof", dir);
	snprintf(p1, sizeof(p1), "%s/m1.gpuprof", dir);
	write_many(p0, 0);
	write_many(p1, 1);
	tap_begin("many steps: each step's work as the compute intervals retire");
	ga_filter_init(&flt);
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	CHECK(ga_analysis_build(&an, argv, 2) == 0);
	CHECK(rk->steps_early && rk->nrows == 2 && rk->nsteps == MANY && rk->nwork == 2 * MANY);
	for (size_t i = 0; i < rk->ndevs; i++) {
		const struct ga_rank_unions *d = rk->devs[i].u;

		if (!d)
			continue;
		ndev++;
		/* Most intervals left the unions: what stays is bounded, not all 2 x MANY. */
		CHECKF(d->compute.nretired >= MANY && d->compute.niv <= GA_BUSY_RETIRE_AT &&
		       d->all.nretired && d->kern.nretired && d->comm.nretired &&
		       !d->compute.late && !d->kern.late,
		       "device %zu: %llu compute intervals retired, %zu kept", i,
		       (unsigned long long)d->compute.nretired, d->compute.niv);
	}
	CHECKF(ndev == 2, "%d devices", ndev);
	for (uint64_t i = 0; i < MANY; i++) {
		compute += 300 + 100 + i % 7 + (i % 3 == 0 ? 400 : i % 3 == 1 ? 50 : 0);
		kernels += 3 + (i % 3 < 2);
		ties += i % 3 == 0;
	}
	for (size_t r = 0; r < rk->nrows && r < 2; r++) {
		const struct ga_rank_row *w = &rk->rows[r];

		CHECKF(w->rank == r && w->steps == MANY && w->kernels == kernels &&
		       w->compute_ns == compute + 10 * r * MANY && w->comm_ns == 150 * MANY &&
		       w->exposed_ns == 100 * MANY && w->busy_ns == w->compute_ns + 100 * MANY,
		       "rank %u: %llu steps, compute %llu, NCCL %llu, exposed %llu, busy %llu",
		       w->rank, (unsigned long long)w->steps, (unsigned long long)w->compute_ns,
		       (unsigned long long)w->comm_ns, (unsigned long long)w->exposed_ns,
		       (unsigned long long)w->busy_ns);
		for (uint64_t k = 0; k < w->steps && k < MANY; k++)
			bad += rk->work[w->work + k].work_ns != many_work(r, k);
	}
	CHECKF(!bad, "%d steps' work wrong", bad);
	/* Equal work: the first row is the slowest, by 0. */
	CHECK(rk->rows[0].slowest == ties && rk->rows[0].lag_ns == 0 &&
	      rk->rows[1].slowest == MANY - ties && rk->rows[1].lag_ns == 10 * (MANY - ties));
	for (size_t k = 0; k < rk->nsteps; k++)
		bad += rk->steps[k].index != k || rk->steps[k].slowest_ns != many_work(1, k) ||
		       rk->steps[k].median_ns != (many_work(0, k) + many_work(1, k)) / 2;
	CHECKF(!bad, "%d steps compared wrong", bad);
	ga_analysis_free(&an);
	/*
	 * One rank of them: its steps (more than the scan holds in memory,
	 * the rest read back from its file) counted, not kept: nothing to
	 * compare them with.  A summary of it keeps them, with their work.
	 */
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	CHECK(ga_analysis_build(&an, argv + 1, 1) == 0);
	CHECKF(rk->steps_early && an.rg.folded && rk->nrows == 1 && rk->rows[0].steps == MANY &&
	       !rk->nsteps && !rk->nwork && !rk->work && rk->ncounts,
	       "one rank: %zu rows, %llu steps, %zu kept, %zu compared", rk->nrows,
	       rk->nrows ? (unsigned long long)rk->rows[0].steps : 0ull, rk->nwork, rk->nsteps);
	ga_analysis_free(&an);
	CHECK(ga_analysis_init(&an, &o, &flt) == 0);
	an.rk.collect = 1;
	CHECK(ga_analysis_build(&an, argv + 1, 1) == 0);
	bad = 0;
	for (uint64_t k = 0; k < MANY && rk->nwork == MANY; k++)
		bad += rk->work[k].work_ns != many_work(1, k);
	CHECKF(rk->nrows == 1 && rk->rows[0].steps == MANY && rk->nwork == MANY && !bad,
	       "one rank collected: %llu steps, %zu kept, %d wrong",
	       rk->nrows ? (unsigned long long)rk->rows[0].steps : 0ull, rk->nwork, bad);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	tap_end();
}

int main(void)
{
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-ranks-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/r%u.gpuprof", dir, rank_of_file[i]);
		write_rank(paths[i], rank_of_file[i]);
	}
	test_names();
	test_model();
	test_views();
	test_hosts();
	test_retire();
	snprintf(cmd, sizeof(cmd), getenv("KEEP") ? "true %s" : "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
