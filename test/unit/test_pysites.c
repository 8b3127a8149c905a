/*
 * Launch sites made of Python frames (GP_REC_PYFRAME, --backtrace=python
 * and mixed) on synthetic traces with known answers: two Python call
 * sites and a thread without Python frames; a mixed stack (native frames,
 * then Python ones); a Python frame whose record never came; a launch
 * under torch.compile, whose runtime libraries' frames fold.  Checked in
 * the model, the report's launch-site table, JSON, CSV and Chrome export.
 * Test code, runs offline only, needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/model.h"
#include "model/sites.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "synth_stacks.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define GPU0 (T0 + 1000000)
#define AR " \xe2\x86\x90 "        /* " ← " */

#define PY(code, line) (GP_PYFRAME_BIT | (uint64_t)(code) << 32 | (line))
#define P_STEP PY(1, 12)
#define P_EVAL PY(2, 20)
#define P_MAIN30 PY(3, 30)
#define P_MAIN31 PY(3, 31)
#define P_MOD PY(4, 40)
#define P_NOPY PY(0, 1)
#define P_LOST PY(9, 99)           /* no PYFRAME record */
#define CUDA_PC 0x7f0000001000ull  /* libcuda.so.1 */
#define TORCH_PC 0x7f2000002010ull /* libtorch_cuda.so, launch_add+0x10 */

#define S1 "train.py:12 step" AR "train.py:30 main" AR "train.py:40 <module>"
#define S2 "train.py:20 evaluate" AR "train.py:31 main" AR "train.py:40 <module>"
#define S3 "<no Python frame: thread pt_autograd_0>"
#define S4 "launch_add+0x10 (libtorch_cuda.so)" AR "train.py:12 step" AR "train.py:30 main"
#define S5 "(unknown Python frame)" AR "train.py:40 <module>"

static char dir[64];

/* A subcommand with stdout captured (malloc'd, NUL-terminated). */
#define run(out, ...) synth_run(dir, out, NULL, __VA_ARGS__)

static size_t count(const char *s, const char *what);

static void py_frames(struct synth *s)
{
	uint32_t file = synth_string(s, "/home/u/proj/train.py");

	synth_pyframe(s, P_STEP, file, synth_string(s, "step"), 12, 10);
	synth_pyframe(s, P_EVAL, file, synth_string(s, "evaluate"), 20, 18);
	synth_pyframe(s, P_MAIN30, file, synth_string(s, "main"), 30, 28);
	synth_pyframe(s, P_MAIN31, file, synth_string(s, "main"), 31, 28);
	synth_pyframe(s, P_MOD, file, synth_string(s, "<module>"), 40, 1);
	synth_pyframe(s, P_NOPY, 0, synth_string(s, S3), 0, 0);
}

/*
 * --backtrace=python: stack 1 (S1) add x3 of 100 ns; stack 2 (S2) mul x2
 * of 200 ns; stack 3 (S3) add x3 of 50 ns; stack 5 (S5) mul x1 of 10 ns.
 * Stacks and frames come after the kernels, as the recorder writes them.
 */
static void python_trace(const char *path)
{
	static const uint64_t st1[] = { P_STEP, P_MAIN30, P_MOD }, st2[] = { P_EVAL, P_MAIN31, P_MOD };
	static const uint64_t st3[] = { P_NOPY }, st5[] = { P_LOST, P_MOD };
	struct synth *s = synth_open(path);
	uint32_t add, mul, c;

	synth_process(s, 10, "h", "python3 train.py", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, GP_BACKTRACE_PYTHON);
	add = synth_string(s, "add_kernel");
	mul = synth_string(s, "mul_kernel");
	for (c = 1; c <= 9; c++) {
		uint32_t stack = c <= 3 ? 1 : c <= 5 ? 2 : c <= 8 ? 3 : 5;
		uint64_t g = GPU0 + c * 1000, d = stack == 1 ? 100 : stack == 2 ? 200 : stack == 3 ? 50 : 10;

		synth_corr_stack(s, c, stack);
		synth_kernel_corr(s, stack == 1 || stack == 3 ? add : mul, g, g + d, 0, c, 0, 0);
	}
	synth_flush_chunk(s);
	py_frames(s);
	synth_stack(s, 1, st1, 3);
	synth_stack(s, 2, st2, 3);
	synth_stack(s, 3, st3, 1);
	synth_stack(s, 5, st5, 2);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

/* --backtrace=mixed: stack 4 (S4) add x2 of 30 ns. */
static void mixed_trace(const char *path)
{
	static const uint64_t st4[] = { CUDA_PC, TORCH_PC, P_STEP, P_MAIN30, P_MOD };
	struct synth *s = synth_open(path);
	uint32_t add, c;

	synth_process(s, 11, "h", "python3 train.py", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, GP_BACKTRACE_MIXED);
	add = synth_string(s, "add_kernel");
	for (c = 1; c <= 2; c++) {
		synth_corr_stack(s, c, 4);
		synth_kernel_corr(s, add, GPU0 + c * 1000, GPU0 + c * 1000 + 30, 0, c, 0, 0);
	}
	py_frames(s);
	synth_frame(s, CUDA_PC, 0x1000, synth_string(s, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
		    synth_string(s, "cuLaunchKernel"), 0x10, 0, 0);
	synth_frame(s, TORCH_PC, 0x2010, synth_string(s, "/opt/torch/lib/libtorch_cuda.so"),
		    synth_string(s, "launch_add"), 0x10, 0, 0);
	synth_stack(s, 4, st4, 5);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

/*
 * Backward kernels under PyTorch's emit_nvtx (--backtrace=python): the
 * forward op "aten::mul, seq = 7" on thread 100 launches mul (corr 1) from
 * S1; autograd's thread 200 runs "MulBackward0, seq = 7" with a nested
 * "aten::mul, op_id = 3" launching two kernels (corr 2, 3), then an
 * AccumulateGrad kernel (corr 4, no seq) and "FooBackward0, seq = 99"
 * (corr 5, no forward op): 2 kernels at "backward of S1", 2 stay S3.
 */
static void backward_trace(const char *path)
{
	static const uint64_t st1[] = { P_STEP, P_MAIN30, P_MOD }, st3[] = { P_NOPY };
	static const struct {
		uint32_t corr, tid, stack;
		uint64_t t;
	} launch[5] = { { 1, 100, 1, 150 }, { 2, 200, 3, 1500 }, { 3, 200, 3, 1600 },
			{ 4, 200, 3, 2500 }, { 5, 200, 3, 3500 } };
	struct synth *s = synth_open(path);
	uint32_t mul, api, n_fwd, n_bwd, n_inner, n_acc, n_foo;

	synth_process(s, 12, "h", "python3 train.py", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API | GP_TRACE_NVTX, 0, GP_BACKTRACE_PYTHON);
	mul = synth_string(s, "mul_kernel");
	api = synth_string(s, "cuLaunchKernel");
	n_fwd = synth_string(s, "aten::mul, seq = 7, op_id = 1");
	n_bwd = synth_string(s, "MulBackward0, seq = 7, op_id = 2");
	n_inner = synth_string(s, "aten::mul, op_id = 3");
	n_acc = synth_string(s, "torch::autograd::AccumulateGrad, op_id = 4");
	n_foo = synth_string(s, "FooBackward0, seq = 99, op_id = 5");
	synth_nvtx_range(s, n_fwd, 0, T0 + 100, T0 + 200, 100, 100, 1, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n_bwd, 0, T0 + 1000, T0 + 2000, 200, 200, 2, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n_inner, 0, T0 + 1100, T0 + 1900, 200, 200, 3, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n_acc, 0, T0 + 2400, T0 + 2600, 200, 200, 4, GP_NVTX_PUSHPOP);
	synth_nvtx_range(s, n_foo, 0, T0 + 3400, T0 + 3600, 200, 200, 5, GP_NVTX_PUSHPOP);
	for (int i = 0; i < 5; i++) {
		uint64_t g = GPU0 + launch[i].t * 10;

		synth_api_corr(s, api, T0 + launch[i].t, T0 + launch[i].t + 5, launch[i].tid,
			       launch[i].corr, GP_API_DRIVER);
		synth_corr_stack(s, launch[i].corr, launch[i].stack);
		synth_kernel_corr(s, mul, g, g + 20, 0, launch[i].corr, 0, 0);
	}
	py_frames(s);
	synth_stack(s, 1, st1, 3);
	synth_stack(s, 3, st3, 1);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

static void test_backward(const char *bwd)
{
	char *out = NULL;
	int rc;

	tap_begin("pysites: backward kernels at their forward op's site (NVTX seq)");
	rc = run(&out, cmd_report, "report", "--no-symbolize", bwd, NULL);
	CHECKF(rc == 0 && out && strstr(out, "|        2 | backward of " S1 "\n") &&
		       strstr(out, "|        2 | " S3 "\n") && strstr(out, "|        1 | " S1 "\n"),
	       "%s", out ? out : "(none)");
	free(out);
	rc = run(&out, cmd_report, "report", "--no-symbolize", "--tree", bwd, NULL);
	CHECKF(rc == 0 && out && count(out, "from backward of " S1 "\n") == 1 &&
		       count(out, "from " S3 "\n") == 2 && count(out, "from " S1 "\n") == 1,
	       "%s", out ? out : "(none)");
	free(out);
	rc = run(&out, cmd_export, "export", "--format", "csv", "--no-symbolize", bwd, NULL);
	CHECKF(rc == 0 && count(out, ",backward of " S1 ",") == 2 && count(out, "," S3 ",") == 2 &&
		       count(out, "," S1 ",") == 1,
	       "%zu %zu %zu", count(out, ",backward of " S1 ","), count(out, "," S3 ","),
	       count(out, "," S1 ","));
	free(out);
	rc = run(&out, cmd_export, "export", "--format", "json", "--no-symbolize", bwd, NULL);
	CHECKF(rc == 0 && out && strstr(out, "{\"site\":\"backward of " S1 "\",\"frames\":"
					   "[\"train.py:12 step\",\"train.py:30 main\","),
	       "%s", out ? out : "(none)");
	free(out);
	/* The Chrome export's ranges, which it sorts on disk, read the seqs too (kept). */
	rc = run(&out, cmd_export, "export", "--format", "chrome", "--no-symbolize", bwd, NULL);
	CHECKF(rc == 0 && count(out, "\"launch_site\":\"backward of " S1 "\"") == 2,
	       "%zu kernels at backward of " S1, count(out, "\"launch_site\":\"backward of " S1 "\""));
	free(out);
	tap_end();
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (; s && (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

/* The model: sites, their launches and GPU time, the frames they list. */
static void test_model(const char *py, const char *mixed)
{
	struct ga_model m;
	struct ga_sites st;
	const char *want[5] = { S1, S2, S3, S4, S5 };
	const uint64_t launches[5] = { 3, 2, 3, 2, 1 }, ns[5] = { 300, 400, 150, 60, 10 };
	int ok = 0;

	tap_begin("pysites: Python launch sites in the model");
	ga_model_init(&m);
	ga_sites_setup(&st, GA_SITES_DEPTH);
	CHECK(ga_sites_bind(&st, &m) == 0);
	if (ga_model_add_file(&m, py) == GA_READ_OK && ga_model_add_file(&m, mixed) == GA_READ_OK &&
	    !ga_model_finish(&m) && !ga_sites_finish(&st, &m))
		ok = 1;
	CHECK(ok);
	CHECKF(st.nsites == 5, "%zu sites", st.nsites);
	for (int i = 0; ok && i < 5; i++) {
		const struct ga_stack_site *x = NULL;

		for (size_t k = 0; k < st.nsites; k++)
			if (!strcmp(ga_model_str(&m, st.sites[k].str), want[i]))
				x = &st.sites[k];
		CHECKF(x != NULL, "no site %s", want[i]);
		if (!x)
			continue;
		CHECKF(x->launches == launches[i] && x->gpu_ns == ns[i], "%s: %llu launches, %llu ns",
		       want[i], (unsigned long long)x->launches, (unsigned long long)x->gpu_ns);
	}
	CHECKF(st.with_stack == 11 && st.kernels == 11, "%llu of %llu",
	       (unsigned long long)st.with_stack, (unsigned long long)st.kernels);
	ga_model_free(&m);
	ga_sites_free(&st);
	tap_end();
}

static void test_views(const char *py, const char *mixed)
{
	char *out = NULL;
	int rc;

	tap_begin("pysites: report, --tree, JSON, CSV and Chrome show file.py:line function");
	rc = run(&out, cmd_report, "report", "--no-symbolize", py, mixed, NULL);
	CHECK(rc == 0 && out && strstr(out, "\nLaunch sites (kernels by host call stack"));
	CHECKF(out && strstr(out, "| " S1 "\n") &&
		       strstr(out, "| " S2 "\n") && strstr(out, "| " S3 "\n") &&
		       strstr(out, "| " S4 "\n") && strstr(out, "| " S5 "\n"),
	       "%s", out ? out : "(none)");
	CHECK(out && strstr(out, "11 of 11 kernels have a launch stack"));
	free(out);

	rc = run(&out, cmd_report, "report", "--no-symbolize", "--stack-depth", "1", py, NULL);
	CHECK(rc == 0 && out && strstr(out, "| train.py:12 step\n") &&
	      strstr(out, "| train.py:20 evaluate\n"));
	free(out);

	rc = run(&out, cmd_report, "report", "--no-symbolize", "--tree", py, NULL);
	CHECKF(rc == 0 && out && strstr(out, "kernel add_kernel\n") &&
		       strstr(out, "|     3 |       3 | \xe2\x94\x82   \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 from " S1 "\n") &&
		       strstr(out, "from " S3 "\n") && strstr(out, "from " S2 "\n"),
	       "%s", out ? out : "(none)");
	free(out);

	rc = run(&out, cmd_export, "export", "--format", "json", "--no-symbolize", py, NULL);
	CHECKF(rc == 0 && out && strstr(out, "{\"site\":\"" S2 "\",\"frames\":[\"train.py:20 evaluate\","
					   "\"train.py:31 main\",\"train.py:40 <module>\"],"
					   "\"gpu_ns\":400,\"launches\":2,"),
	       "%s", out ? out : "(none)");
	free(out);

	rc = run(&out, cmd_export, "export", "--format", "csv", "--no-symbolize", py, NULL);
	CHECKF(rc == 0 && count(out, "," S1 ",") == 3 && count(out, "," S2 ",") == 2 &&
		       count(out, "," S3 ",") == 3,
	       "%zu %zu %zu", count(out, "," S1 ","), count(out, "," S2 ","), count(out, "," S3 ","));
	free(out);

	rc = run(&out, cmd_export, "export", "--format", "chrome", "--no-symbolize", py, mixed, NULL);
	CHECKF(rc == 0 && count(out, "\"launch_site\":\"" S1 "\"") == 3 &&
		       count(out, "\"launch_site\":\"" S4 "\"") == 2 &&
		       count(out, "\"launch_site\":\"" S3 "\"") == 3,
	       "%zu %zu %zu", count(out, "\"launch_site\":\"" S1 "\""),
	       count(out, "\"launch_site\":\"" S4 "\""), count(out, "\"launch_site\":\"" S3 "\""));
	free(out);
	tap_end();
}

/*
 * A launch under torch.compile, innermost first: Inductor's static Triton
 * launcher, an exec'd "<string>" shim, the autotuner, the generated code,
 * Inductor's, AOT autograd's and Dynamo's wrappers, the user's forward,
 * nn.Module's call plumbing, the user's main: stack 1, 2 kernels of 100
 * ns.  Stack 2: the launcher frames alone (all fold), 1 kernel of 10 ns.
 */
#define SITE_PKG "/usr/lib/python3/site-packages/torch/"
static const struct {
	const char *file, *fn;
	uint32_t line;
} compiled[] = {
	{ SITE_PKG "_inductor/runtime/static_triton_launcher.py", "StaticallyLaunchedTritonKernel.run", 291 },
	{ "<string>", "launcher", 5 },
	{ SITE_PKG "_inductor/runtime/triton_heuristics.py", "CachingAutotuner.run", 1495 },
	{ "/tmp/torchinductor_u/ab/cabc123.py", "call", 88 },
	{ SITE_PKG "_inductor/utils.py", "run", 2500 },
	{ SITE_PKG "_inductor/output_code.py", "CompiledFxGraph.__call__", 600 },
	{ SITE_PKG "_functorch/_aot_autograd/runtime_wrappers.py", "runtime_wrapper", 300 },
	{ SITE_PKG "_dynamo/eval_frame.py", "_fn", 800 },
	{ "/home/u/proj/model.py", "Net.forward", 30 },
	{ SITE_PKG "nn/modules/module.py", "Module._call_impl", 1786 },
	{ SITE_PKG "nn/modules/module.py", "Module._wrapped_call_impl", 1775 },
	{ "/home/u/proj/train.py", "main", 50 },
	{ "/home/u/proj/train.py", "<module>", 60 },
};
#define NCOMPILED (sizeof(compiled) / sizeof(compiled[0]))
#define C_FOLDED "cabc123.py:88 call" AR "model.py:30 Net.forward" AR "train.py:50 main"
#define C_FULL "static_triton_launcher.py:291 StaticallyLaunchedTritonKernel.run" AR \
	"<string>:5 launcher" AR "triton_heuristics.py:1495 CachingAutotuner.run"
#define C_ONLY C_FULL             /* stack 2: every frame folds, so none does */

static void compiled_trace(const char *path)
{
	uint64_t st1[NCOMPILED], st2[3];
	struct synth *s = synth_open(path);
	uint32_t k, c;

	synth_process(s, 13, "h", "python3 train.py", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, GP_BACKTRACE_PYTHON);
	k = synth_string(s, "triton_poi_fused_add_0");
	for (c = 1; c <= 3; c++) {
		uint64_t g = GPU0 + c * 1000, d = c <= 2 ? 100 : 10;

		synth_corr_stack(s, c, c <= 2 ? 1 : 2);
		synth_kernel_corr(s, k, g, g + d, 0, c, 0, 0);
	}
	for (size_t i = 0; i < NCOMPILED; i++) {
		st1[i] = PY(20 + i, compiled[i].line);
		synth_pyframe(s, st1[i], synth_string(s, compiled[i].file),
			      synth_string(s, compiled[i].fn), compiled[i].line, 1);
	}
	memcpy(st2, st1, sizeof(st2));
	synth_stack(s, 1, st1, (uint32_t)NCOMPILED);
	synth_stack(s, 2, st2, 3);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

static void test_fold(const char *tr)
{
	char *out = NULL;
	int rc;

	tap_begin("pysites: runtime libraries' Python frames fold (--fold-frames, --full-stacks)");
	rc = run(&out, cmd_report, "report", "--no-symbolize", tr, NULL);
	CHECKF(rc == 0 && out && strstr(out, "|        2 | " C_FOLDED "\n") &&
		       strstr(out, "|        1 | " C_ONLY "\n"),
	       "%s", out ? out : "(none)");
	free(out);
	/* Unfolded, every launch is the framework's, one site. */
	rc = run(&out, cmd_report, "report", "--no-symbolize", "--full-stacks", tr, NULL);
	CHECKF(rc == 0 && out && strstr(out, "|        3 | " C_FULL "\n") && !strstr(out, "cabc123"),
	       "%s", out ? out : "(none)");
	free(out);
	/* Only Inductor's runtime: the shim and the wrappers show. */
	rc = run(&out, cmd_report, "report", "--no-symbolize",
		 "--fold-frames=/torch/_inductor/runtime/", tr, NULL);
	CHECKF(rc == 0 && out && strstr(out, "| <string>:5 launcher" AR "cabc123.py:88 call" AR
					   "utils.py:2500 run\n"),
	       "%s", out ? out : "(none)");
	free(out);
	/* PATH:FUNCTION: _call_impl folds, _wrapped_call_impl does not. */
	rc = run(&out, cmd_report, "report", "--no-symbolize", "--stack-depth", "4", "--fold-frames",
		 "/_inductor/,/_dynamo/,/_functorch/,<string>,/torch/nn/modules/module.py:_call_impl",
		 tr, NULL);
	CHECKF(rc == 0 && out && strstr(out, "| cabc123.py:88 call" AR "model.py:30 Net.forward" AR
					   "module.py:1775 Module._wrapped_call_impl" AR
					   "train.py:50 main\n"),
	       "%s", out ? out : "(none)");
	free(out);
	/* "default" and more: the user's forward too. */
	rc = run(&out, cmd_report, "report", "--no-symbolize", "--fold-frames=default,/proj/model.py",
		 tr, NULL);
	CHECKF(rc == 0 && out && strstr(out, "| cabc123.py:88 call" AR "train.py:50 main" AR
					   "train.py:60 <module>\n"),
	       "%s", out ? out : "(none)");
	free(out);
	rc = run(&out, cmd_export, "export", "--format", "json", "--no-symbolize", tr, NULL);
	CHECKF(rc == 0 && out && strstr(out, "{\"site\":\"" C_FOLDED "\",\"frames\":["
					   "\"cabc123.py:88 call\",\"model.py:30 Net.forward\","
					   "\"train.py:50 main\",\"train.py:60 <module>\"],"),
	       "%s", out ? out : "(none)");
	free(out);
	rc = run(&out, cmd_export, "export", "--format", "csv", "--no-symbolize", tr, NULL);
	CHECKF(rc == 0 && count(out, "," C_FOLDED ",") == 2, "%s", out ? out : "(none)");
	free(out);
	rc = run(&out, cmd_export, "export", "--format", "csv", "--no-symbolize", "--full-stacks", tr,
		 NULL);
	CHECKF(rc == 0 && count(out, "," C_FULL ",") == 3, "%s", out ? out : "(none)");
	free(out);
	tap_end();
}

int main(void)
{
	char py[128], mixed[128], bwd[128], comp[128];

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-pysites-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(py, sizeof(py), "%s/python.gpuprof", dir);
	snprintf(mixed, sizeof(mixed), "%s/mixed.gpuprof", dir);
	snprintf(bwd, sizeof(bwd), "%s/backward.gpuprof", dir);
	python_trace(py);
	mixed_trace(mixed);
	backward_trace(bwd);
	snprintf(comp, sizeof(comp), "%s/compiled.gpuprof", dir);
	compiled_trace(comp);
	test_model(py, mixed);
	test_views(py, mixed);
	test_backward(bwd);
	test_fold(comp);
	unlink(comp);
	unlink(py);
	unlink(mixed);
	unlink(bwd);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			return 1;
	}
	return tap_exit();
}
