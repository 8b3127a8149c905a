/*
 * Unit tests of symbolization proven by build-id (symbolize.h): a program
 * compiled here with a known function, traces whose MODULE record names
 * it with its build-id (names found), a file of another build at the
 * recorded path (module+0xOFFSET, and why), the file found through
 * --symbol-path instead, a module without a build-id, and module paths
 * that are a FIFO or a device (the analyzer finishes, opening neither).
 * Skipped without cc.  Test code, runs offline only, needs no GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "model/symbolize.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "synth_stacks.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define GPU0 (T0 + 1000000)
#define BASE 0x555555554000ull

static char dir[64];

#define run(out, ...) synth_run(dir, out, NULL, __VA_ARGS__)

/* known_site() calls probe() on the line marked "K"; it prints the return address's offset. */
static const char prog_src[] =
	"#define _GNU_SOURCE\n"
	"#include <dlfcn.h>\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"\n"
	"static unsigned long at;\n"
	"\n"
	"static __attribute__((noinline)) void probe(void)\n"
	"{\n"
	"\tDl_info info;\n"
	"\tchar *pc = __builtin_return_address(0);\n"
	"\n"
	"\tif (dladdr(pc - 1, &info) && info.dli_fbase)\n"
	"\t\tat = (unsigned long)(pc - (char *)info.dli_fbase);\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) void known_site(void)\n"
	"{\n"
	"\tprobe(); /* K */\n"
	"\tprintf(\"%lx\\n\", at);\n"
	"}\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\tknown_site();\n"
	"\treturn VARIANT;\n"
	"}\n";

static unsigned src_line(const char *marker)
{
	const char *p, *end = strstr(prog_src, marker);
	unsigned n = 1;

	for (p = prog_src; end && p < end; p++)
		n += *p == '\n';
	return end ? n : 0;
}

/* Build dir/name (variant v changes the build-id), run it: the offset, or 0. */
static uint64_t build(const char *name, int v, char *path, size_t n)
{
	char cmd[512], line[64];
	unsigned long x = 0;
	FILE *f;

	snprintf(path, n, "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd),
		 "cc -g -O0 -fPIE -pie -Wl,--build-id=sha1 -DVARIANT=%d -o '%s' '%s/prog.c' -ldl "
		 ">/dev/null 2>&1", v, path, dir);
	if (system(cmd) != 0 || !(f = popen(path, "r")))
		return 0;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%lx", &x) != 1)
		x = 0;
	pclose(f);
	return x;
}

static int build_id_of(const char *path, uint8_t *id)
{
	int fd = ga_symbolize_open(path), n;

	if (fd < 0)
		return -1;
	n = ga_symbolize_build_id(fd, id, GP_BUILD_ID_MAX);
	close(fd);
	return n;
}

/*
 * One kernel launched from a stack of one frame of module name at BASE +
 * off; with_module: its MODULE record (path, build-id id of nid bytes).
 */
static void write_trace(const char *path, const char *name, const char *modpath,
			const uint8_t *id, uint32_t nid, int with_module, uint64_t off)
{
	struct synth *s = synth_open(path);
	uint64_t pc = BASE + off;
	uint32_t k, mod;

	synth_process(s, 60, "h", "prog", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_API, 0, 1);
	k = synth_string(s, "_Z4axpyifPf");
	mod = synth_string(s, name);
	synth_corr_stack(s, 1, 1);
	synth_kernel_corr(s, k, GPU0, GPU0 + 300, 0, 1, 0, 0);
	if (with_module)
		synth_module(s, BASE, mod, modpath ? synth_string(s, modpath) : 0, id, nid);
	synth_frame(s, pc, off, mod, 0, 0, 0, 0);
	synth_stack(s, 1, &pc, 1);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

/* report of trace in a child given 20 s: its exit status, -1 killed or hung. */
static int report_bounded(const char *trace)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		char *argv[] = { "report", (char *)trace, NULL };

		dup2(fd, 1);
		dup2(fd, 2);
		alarm(20);
		_exit(cmd_report(2, argv));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	char src[128], good[128], other[128], trace[128], want[256], raw[128], cmd[1024];
	char sym[128], link[192], fifo[128];
	uint8_t id[GP_BUILD_ID_MAX], id2[GP_BUILD_ID_MAX];
	unsigned lk = src_line("/* K */");
	uint64_t off, off2;
	char *out = NULL;
	int n, n2, rc;
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/gpuprof-symbolize-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (system("command -v cc >/dev/null 2>&1")) {
		printf("skip - symbolize: names proven by build-id # no cc\n");
		goto done;
	}
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	f = fopen(src, "w");
	if (!f || fputs(prog_src, f) < 0 || fclose(f)) {
		printf("not ok - symbolize: cannot write %s\n", src);
		goto done;
	}
	off = build("prog", 0, good, sizeof(good));
	off2 = build("prog_other", 1, other, sizeof(other));
	n = build_id_of(good, id);
	n2 = build_id_of(other, id2);

	tap_begin("symbolize: build-id of an ELF file, none of other files");
	CHECKF(off && off2, "cannot build and run %s", good);
	CHECKF(n == 20 && n2 == 20 && memcmp(id, id2, 20), "build-ids %d %d", n, n2);
	CHECK(build_id_of(src, id2) < 0);
	tap_end();
	if (!off || n != 20)
		goto done;

	snprintf(trace, sizeof(trace), "%s/t.gpuprof", dir);
	snprintf(want, sizeof(want), "| known_site (prog.c:%u)\n", lk);
	snprintf(raw, sizeof(raw), "| prog+0x%" PRIx64 "\n", off);

	tap_begin("symbolize: the file with the recorded build-id names the frame");
	write_trace(trace, "prog", good, id, 20, 1, off);
	rc = run(&out, cmd_report, "report", trace, NULL);
	CHECKF(rc == 0 && out && strstr(out, want) && !strstr(out, "Frame names"), "%s",
	       out ? out : "");
	free(out);
	tap_end();

	tap_begin("symbolize: another build at the recorded path is not used");
	/* The recorded path now holds another build of the same program. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/prog.moved' && cp '%s' '%s'", good, dir, other, good);
	CHECK(system(cmd) == 0);
	rc = run(&out, cmd_report, "report", trace, NULL);
	CHECKF(rc == 0 && out && strstr(out, raw) && !strstr(out, "known_site") &&
	       strstr(out, "is another build (no file with build-id"), "%s", out ? out : "");
	free(out);
	rc = run(&out, cmd_export, "export", "--format", "json", trace, NULL);
	snprintf(want, sizeof(want), "\"frames\":[\"prog+0x%" PRIx64 "\"]", off);
	CHECKF(rc == 0 && out && strstr(out, want) && !strstr(out, "known_site"), "%s",
	       out ? out : "");
	free(out);
	tap_end();

	tap_begin("symbolize: --symbol-path finds the file by name or build-id");
	snprintf(sym, sizeof(sym), "%s/syms", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s/prog.moved' '%s/prog'", sym, dir, sym);
	CHECK(system(cmd) == 0);
	snprintf(want, sizeof(want), "| known_site (prog.c:%u)\n", lk);
	snprintf(link, sizeof(link), "/nonexistent:%s", sym);
	rc = run(&out, cmd_report, "report", "--symbol-path", link, trace, NULL);
	CHECKF(rc == 0 && out && strstr(out, want), "%s", out ? out : "");
	free(out);
	/* Only the debug file, under .build-id/xx/rest.debug. */
	if (system("command -v objcopy >/dev/null 2>&1") == 0) {
		char hex[41];
		int i;

		for (i = 0; i < 20; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		snprintf(cmd, sizeof(cmd),
			 "rm -f '%s/prog' && mkdir -p '%s/.build-id/%.2s' && objcopy --only-keep-debug "
			 "'%s/prog.moved' '%s/.build-id/%.2s/%s.debug'", sym, sym, hex, dir, sym, hex,
			 hex + 2);
		CHECK(system(cmd) == 0);
		rc = run(&out, cmd_export, "export", "--format", "json", "--symbol-path", sym, trace,
			 NULL);
		snprintf(want, sizeof(want), "\"known_site (prog.c:%u)\"", lk);
		CHECKF(rc == 0 && out && strstr(out, want), "%s", out ? out : "");
		free(out);
	}
	tap_end();

	tap_begin("symbolize: a module recorded without a build-id is not looked up");
	snprintf(cmd, sizeof(cmd), "cp '%s/prog.moved' '%s'", dir, good);
	CHECK(system(cmd) == 0);
	write_trace(trace, "prog", good, NULL, 0, 1, off);
	rc = run(&out, cmd_report, "report", trace, NULL);
	CHECKF(rc == 0 && out && strstr(out, raw) && strstr(out, "had no build-id"), "%s",
	       out ? out : "");
	free(out);
	tap_end();

	tap_begin("symbolize: a FIFO or a device as the module never blocks");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	/* Recorded with a build-id, and in a trace without build-ids. */
	write_trace(trace, fifo, fifo, id, 20, 1, off);
	CHECK(report_bounded(trace) == 0);
	write_trace(trace, fifo, NULL, NULL, 0, 0, off);
	CHECK(report_bounded(trace) == 0);
	rc = run(&out, cmd_report, "report", trace, NULL);
	CHECKF(rc == 0 && out && strstr(out, "fifo is not a regular file here"), "%s",
	       out ? out : "");
	free(out);
	errno = 0;
	CHECK(ga_symbolize_open(fifo) < 0 && errno == EINVAL);
	CHECK(ga_symbolize_open("/dev/null") < 0 && errno == EINVAL);
	write_trace(trace, "/dev/tty", NULL, NULL, 0, 0, off);
	CHECK(report_bounded(trace) == 0);
	tap_end();
done:
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return tap_exit();
}
