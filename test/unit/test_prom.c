/*
 * export --format prometheus on a synthetic trace with known answers: the
 * kernel label bounded to the top 10 names and "other" (the rest summed,
 * a kernel named "other" kept apart), label values escaped, copies by
 * direction, records lost by cause, the GPU busy fraction of the windows
 * (CAPTURE_RANGE records) and their count.  promtool reads the golden
 * traces' expositions in test/golden/fleet-checks.sh.  Test code, runs
 * offline only, needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "synth.h"
#include "tap.h"

#define T0 1700000000000000000ull

static char dir[64];

static void trace(const char *path)
{
	struct synth *s = synth_open(path);
	struct gp_rec_capture_range w;
	char name[32];
	uint64_t t = T0 + 1000;

	synth_process(s, 5, "h", "app", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	/* Kernels k00 .. k11: k(i) runs i + 1 times for 100 ns. */
	for (int i = 0; i < 12; i++) {
		uint32_t id;

		snprintf(name, sizeof(name), "k%02d", i);
		id = synth_string(s, name);
		for (int j = 0; j <= i; j++, t += 200)
			synth_kernel(s, id, t, t + 100, 0, 7, 0, 0);
	}
	synth_kernel(s, synth_string(s, "other"), t, t + 100, 0, 7, 0, 0);
	t += 200;
	synth_kernel(s, synth_string(s, "say\"hi\\"), t, t + 5000, 0, 7, 0, 0);
	t += 5200;
	synth_memcpy(s, 1, 4096, t, t + 50, 0, 7);
	t += 200;
	synth_memcpy(s, 2, 1024, t, t + 50, 0, 7);
	synth_lost(s, GP_LOST_RING_FULL, 3);
	memset(&w, 0, sizeof(w));
	w.h.type = GP_REC_CAPTURE_RANGE;
	w.h.size = sizeof(w);
	w.start = T0;
	w.end = T0 + 100000;
	w.kind = GP_CAPTURE_CONTROL;
	synth_rec(s, &w, sizeof(w));
	synth_end(s, T0 + 200000, 0);
	synth_close(s, NULL, NULL);
}

int main(void)
{
	char path[128], *out = NULL;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/gp-prom-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.gpuprof", dir);
	trace(path);
	rc = synth_run(dir, &out, NULL, cmd_export, "export", "-t", "prometheus", path, NULL);
	TAP_CHECK("prometheus: export succeeds", rc == 0 && out, "rc %d", rc);
	if (!out)
		return tap_done();
	tap_begin("prometheus: top 10 kernels named, the rest as other, \"other\" kept apart");
	CHECKF(strstr(out, "gpuprof_kernel_launches{kernel=\"k11\"} 12\n") &&
		       strstr(out, "gpuprof_kernel_launches{kernel=\"k03\"} 4\n") &&
		       !strstr(out, "kernel=\"k02\"") && !strstr(out, "kernel=\"k00\"") &&
		       /* the rest: k02 (3), k01 (2), k00 (1) and the kernel named other (1) */
		       strstr(out, "gpuprof_kernel_launches{kernel=\"other\"} 7\n") &&
		       strstr(out, "gpuprof_kernel_seconds{kernel=\"k11\"} 0.000001200\n"),
	       "%s", out);
	tap_end();
	TAP_CHECK("prometheus: label values escaped",
		  strstr(out, "gpuprof_kernel_launches{kernel=\"say\\\"hi\\\\\"} 1\n"), "%s", out);
	tap_begin("prometheus: copies by direction, losses by cause, windows, busy");
	CHECKF(strstr(out, "gpuprof_memcpy_bytes{direction=\"HtoD\"} 4096\n") &&
		       strstr(out, "gpuprof_memcpy_bytes{direction=\"DtoH\"} 1024\n") &&
		       strstr(out, "gpuprof_memcpy_operations{direction=\"HtoD\"} 1\n") &&
		       strstr(out, "gpuprof_records_lost{cause=\"ring_full\"} 3\n") &&
		       strstr(out, "gpuprof_records_lost{cause=\"cupti_dropped\"} 0\n") &&
		       strstr(out, "gpuprof_windows 1\n") &&
		       strstr(out, "gpuprof_window_seconds 0.000100000\n") &&
		       /* 79 kernels of 100 ns, one of 5 µs, 2 copies of 50 ns: 13 µs of 100 µs */
		       strstr(out, "gpuprof_gpu_busy_ratio{device=\"cuda:0\"} 0.130000\n"),
	       "%s", out);
	tap_end();
	free(out);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
