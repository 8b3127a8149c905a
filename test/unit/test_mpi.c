/*
 * MPI jobs without a GPU: "mpirun -np 2" starts this program twice (as
 * "test_mpi child"); each copy runs the recorder with a stand-in record
 * source (no CUDA), records 10 + rank kernels and exits.  The output
 * template job-%q{OMPI_COMM_WORLD_RANK} must give one finished trace per
 * rank, each with the rank Open MPI gave it, and the merged report must
 * name rank 0 and rank 1 without a warning; the same through the gpuprof
 * wrapper (mpirun -np 2 gpuprof run -o ... PROGRAM).  Skips when mpirun is
 * not installed.  Test code, runs offline only.
 */
#include "tap.h"

#include "config.h"
#include "lifecycle.h"
#include "recorder.h"
#include "source.h"

#include "cmd/cmd.h"
#include "model/analysis.h"
#include "synth.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fake_attach(struct gp_config *cfg, uint32_t *version, char *why, size_t whysz)
{
	(void)cfg;
	(void)why;
	(void)whysz;
	*version = 42;
	return 0;
}

static int fake_set_tracing(int on, char *why, size_t whysz)
{
	(void)on;
	(void)why;
	(void)whysz;
	return 0;
}

static void fake_preamble(void)
{
	struct gp_rec_device *d = gp_emit(GP_REC_DEVICE, sizeof(*d));

	if (d)
		d->id = 0;
}

static struct gp_source fake = {
	.name = "fake",
	.attach = fake_attach,
	.set_tracing = fake_set_tracing,
	.preamble = fake_preamble,
};

const struct gp_source *const gp_sources[] = { &fake, NULL };

/* One rank of the job: 10 + rank kernels of a stand-in GPU. */
static int child(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	int rank = r ? atoi(r) : 0;
	uint32_t name;

	setenv("GPUPROF_FLUSH_MS", "50", 1);
	if (gp_recorder_start() < 0)
		return 90;
	gp_ring_lock(&gp_rec.ring);
	name = gp_emit_string("mpi_work");
	for (int i = 0; i < 10 + rank; i++) {
		struct gp_rec_kernel *k = gp_emit(GP_REC_KERNEL, sizeof(*k));

		if (k) {
			k->start = 1000000 + 1000 * (uint64_t)i;
			k->end = k->start + 500;
			k->name = name;
		}
	}
	gp_ring_unlock(&gp_rec.ring);
	exit(0);
}

static char dir[64], self[PATH_MAX];

/* The job's traces: each finished, with its rank; the merged report names both. */
static void check_job(const char *prefix)
{
	char p0[256], p1[256], *paths[2] = { p0, p1 }, *out = NULL, *err = NULL;
	struct ga_analysis_opts o = { .stack_depth = 4 };
	struct ga_analysis an;
	struct ga_filter flt;
	struct stat st;
	int rc;

	snprintf(p0, sizeof(p0), "%s/%s-0.gpuprof", dir, prefix);
	snprintf(p1, sizeof(p1), "%s/%s-1.gpuprof", dir, prefix);
	CHECKF(stat(p0, &st) == 0 && stat(p1, &st) == 0, "no %s or %s", p0, p1);
	ga_filter_init(&flt);
	rc = ga_analysis_init(&an, &o, &flt) || ga_analysis_build(&an, paths, 2);
	CHECK(rc == 0 && an.m.nprocs == 2);
	for (size_t i = 0; !rc && i < an.m.nprocs && i < 2; i++) {
		const struct ga_proc *p = &an.m.procs[i];

		CHECKF(p->rank == i && p->finished, "file %zu: rank %u finished %d", i, p->rank,
		       p->finished);
	}
	CHECK(rc == 0 && an.rk.nrows == 2 && an.rk.rows[0].rank == 0 && an.rk.rows[1].rank == 1 &&
	      an.rk.rows[0].kernels == 10 && an.rk.rows[1].kernels == 11);
	ga_analysis_free(&an);
	ga_filter_free(&flt);
	{
		char *argv[] = { "report", p1, p0, NULL };

		rc = synth_capture(dir, &out, &err, cmd_report, 3, argv);
	}
	CHECKF(rc == 0 && out && strstr(out, "rank 0, pid") && strstr(out, "rank 1, pid") &&
	       strstr(out, "Ranks ("), "rc %d: %s", rc, out ? out : "");
	CHECKF(out && !strstr(out, "Warnings:"), "%s", out ? strstr(out, "Warnings:") : "");
	free(out);
	free(err);
}

static int mpirun(const char *tail)
{
	char cmd[PATH_MAX * 4];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "mpirun --allow-run-as-root --oversubscribe -np 2 %s >%s/mpirun.log 2>&1", tail, dir);
	rc = system(cmd);
	if (rc != 0) {
		/* Say why here: the directory is removed at the end. */
		char line[512];
		FILE *f;

		snprintf(cmd, sizeof(cmd), "%s/mpirun.log", dir);
		if ((f = fopen(cmd, "r"))) {
			while (fgets(line, sizeof(line), f))
				printf("# mpirun: %s", line);
			fclose(f);
		}
	}
	return rc;
}

int main(int argc, char **argv)
{
	char tail[PATH_MAX * 3 + 256], wrapper[PATH_MAX], *slash;
	ssize_t n;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		printf("skip - mpi job without a GPU # mpirun not found (Debian: openmpi-bin)\n");
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	snprintf(dir, sizeof(dir), "/tmp/gpuprof-mpi-XXXXXX");
	if (!mkdtemp(dir))
		return 1;

	tap_begin("mpirun -np 2: job-%q{OMPI_COMM_WORLD_RANK}, a finished trace per rank");
	snprintf(tail, sizeof(tail), "env GPUPROF_OUTPUT='%s/job-%%q{OMPI_COMM_WORLD_RANK}' %s child",
		 dir, self);
	rc = mpirun(tail);
	CHECKF(rc == 0, "mpirun exited %d (see %s/mpirun.log)", rc, dir);
	check_job("job");
	tap_end();

	/* The wrapper beside this test: BUILD/test/test_mpi -> BUILD/bin/gpuprof. */
	snprintf(wrapper, sizeof(wrapper), "%s", self);
	slash = strrchr(wrapper, '/');
	if (slash) {
		*slash = 0;
		slash = strrchr(wrapper, '/');
	}
	if (slash)
		snprintf(slash, sizeof(wrapper) - (size_t)(slash - wrapper), "/bin/gpuprof");
	if (access(wrapper, X_OK) != 0) {
		/* A unit-only build (make unit) has no wrapper. */
		printf("skip - mpi through the wrapper # %s is not built\n", wrapper);
	} else {
		tap_begin("mpirun -np 2 gpuprof run -o 'w-%q{OMPI_COMM_WORLD_RANK}' PROGRAM");
		/* In a sanitizer build the recorder the wrapper preloads is
		 * instrumented: ASan must not insist on coming first. */
		snprintf(tail, sizeof(tail),
			 "env ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" "
			 "%s run -o '%s/w-%%q{OMPI_COMM_WORLD_RANK}' --report=none -- %s child",
			 wrapper, dir, self);
		rc = mpirun(tail);
		CHECKF(rc == 0, "mpirun exited %d (see %s/mpirun.log)", rc, dir);
		check_job("w");
		tap_end();
	}
	if (!getenv("KEEP")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return tap_exit();
}
