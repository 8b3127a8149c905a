/*
 * export --format pprof on a synthetic trace with known answers, decoded
 * here (gunzip, then the protobuf wire format of profile.proto): sample
 * types, one sample per (kernel or copy, launch stack) with its GPU time
 * and launches, the leaf first, native frames past the driver's with
 * their module's path and build-id as the mapping, Python frames with
 * file and line and no mapping, copies as "[memcpy HtoD]".  The real
 * `go tool pprof` reads the golden traces' profiles in
 * test/golden/pprof-checks.py.  Test code, runs offline only, needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cmd/cmd.h"
#include "synth.h"
#include "synth_nvtx.h"
#include "synth_stacks.h"
#include "tap.h"

#define T0 1700000000000000000ull
#define GPU0 (T0 + 1000000)
#define PY(code, line) (GP_PYFRAME_BIT | (uint64_t)(code) << 32 | (line))
#define P_STEP PY(1, 12)
#define P_MAIN PY(2, 30)
#define CUDA_PC 0x7f0000001000ull  /* libcuda.so.1 */
#define TORCH_BASE 0x7f2000000000ull
#define TORCH_PC (TORCH_BASE + 0x2010) /* libtorch_cuda.so, launch_add+0x10 */

static char dir[64];

/* ---- a small protobuf reader, enough for profile.proto ---- */

struct pb {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t varint(struct pb *b)
{
	uint64_t v = 0;
	int shift = 0;

	while (b->p < b->end && shift < 64) {
		uint8_t c = *b->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	b->bad = 1;
	return 0;
}

/* The next field: its number, wire type, and the varint or the bytes. */
static int field(struct pb *b, unsigned *num, uint64_t *v, struct pb *sub)
{
	uint64_t key;

	if (b->p >= b->end || b->bad)
		return 0;
	key = varint(b);
	*num = (unsigned)(key >> 3);
	if ((key & 7) == 0) {
		*v = varint(b);
	} else if ((key & 7) == 2) {
		uint64_t len = varint(b);

		if (len > (uint64_t)(b->end - b->p)) {
			b->bad = 1;
			return 0;
		}
		sub->p = b->p;
		sub->end = b->p + len;
		sub->bad = 0;
		b->p += len;
	} else {
		b->bad = 1;
		return 0;
	}
	return !b->bad;
}

#define MAXN 64

struct prof {
	char *str[256];
	size_t nstr;
	struct { uint64_t loc[16], nloc, val[2], nval, label_key, label_num; } s[MAXN];
	size_t ns;
	struct { uint64_t id, mapping, address, fn, line; } l[MAXN];
	size_t nl;
	struct { uint64_t id, name, sys, file; } f[MAXN];
	size_t nf;
	struct { uint64_t id, start, limit, file, build_id, has_fn; } m[MAXN];
	size_t nm;
	uint64_t types[2][2];
	size_t ntypes;
	uint64_t default_type;
};

static void packed(struct pb *b, uint64_t *out, uint64_t *n, size_t cap)
{
	while (b->p < b->end && !b->bad && *n < cap)
		out[(*n)++] = varint(b);
}

static int decode(const uint8_t *buf, size_t len, struct prof *x)
{
	struct pb b = { buf, buf + len, 0 }, s, t;
	unsigned num, n2, n3;
	uint64_t v, v2, v3;

	memset(x, 0, sizeof(*x));
	while (field(&b, &num, &v, &s)) {
		switch (num) {
		case 1:
			while (x->ntypes < 2 && field(&s, &n2, &v2, &t))
				x->types[x->ntypes][n2 - 1] = v2;
			x->ntypes++;
			break;
		case 2:
			if (x->ns >= MAXN)
				return -1;
			while (field(&s, &n2, &v2, &t)) {
				if (n2 == 1)
					packed(&t, x->s[x->ns].loc, &x->s[x->ns].nloc, 16);
				else if (n2 == 2)
					packed(&t, x->s[x->ns].val, &x->s[x->ns].nval, 2);
				else if (n2 == 3) {
					struct pb u;

					while (field(&t, &n3, &v3, &u)) {
						if (n3 == 1)
							x->s[x->ns].label_key = v3;
						else if (n3 == 3)
							x->s[x->ns].label_num = v3;
					}
				}
			}
			x->ns++;
			break;
		case 3:
			if (x->nm >= MAXN)
				return -1;
			while (field(&s, &n2, &v2, &t)) {
				if (n2 == 1) x->m[x->nm].id = v2;
				if (n2 == 2) x->m[x->nm].start = v2;
				if (n2 == 3) x->m[x->nm].limit = v2;
				if (n2 == 5) x->m[x->nm].file = v2;
				if (n2 == 6) x->m[x->nm].build_id = v2;
				if (n2 == 7) x->m[x->nm].has_fn = v2;
			}
			x->nm++;
			break;
		case 4:
			if (x->nl >= MAXN)
				return -1;
			while (field(&s, &n2, &v2, &t)) {
				if (n2 == 1) x->l[x->nl].id = v2;
				if (n2 == 2) x->l[x->nl].mapping = v2;
				if (n2 == 3) x->l[x->nl].address = v2;
				if (n2 == 4) {
					struct pb u;

					while (field(&t, &n3, &v3, &u)) {
						if (n3 == 1) x->l[x->nl].fn = v3;
						if (n3 == 2) x->l[x->nl].line = v3;
					}
				}
			}
			x->nl++;
			break;
		case 5:
			if (x->nf >= MAXN)
				return -1;
			while (field(&s, &n2, &v2, &t)) {
				if (n2 == 1) x->f[x->nf].id = v2;
				if (n2 == 2) x->f[x->nf].name = v2;
				if (n2 == 3) x->f[x->nf].sys = v2;
				if (n2 == 4) x->f[x->nf].file = v2;
			}
			x->nf++;
			break;
		case 6:
			if (x->nstr >= 256)
				return -1;
			x->str[x->nstr] = strndup((const char *)s.p, (size_t)(s.end - s.p));
			x->nstr++;
			break;
		case 14:
			x->default_type = v;
			break;
		}
	}
	return b.bad ? -1 : 0;
}

static void prof_free(struct prof *x)
{
	for (size_t i = 0; i < x->nstr; i++)
		free(x->str[i]);
}

static const char *S(const struct prof *x, uint64_t i)
{
	return i < x->nstr ? x->str[i] : "(bad string index)";
}

static const void *loc(const struct prof *x, uint64_t id, const char **fn, const char **file,
		       uint64_t *line, const char **mapfile, const char **build_id)
{
	*fn = *file = *mapfile = *build_id = NULL;
	*line = 0;
	for (size_t i = 0; i < x->nl; i++) {
		if (x->l[i].id != id)
			continue;
		for (size_t j = 0; j < x->nf; j++)
			if (x->f[j].id == x->l[i].fn) {
				*fn = S(x, x->f[j].name);
				*file = S(x, x->f[j].file);
			}
		*line = x->l[i].line;
		for (size_t j = 0; j < x->nm; j++)
			if (x->m[j].id == x->l[i].mapping && x->l[i].mapping) {
				*mapfile = S(x, x->m[j].file);
				*build_id = S(x, x->m[j].build_id);
			}
		return &x->l[i];
	}
	return NULL;
}

/* The stack of sample i as "fn file:line [mapfile build_id] ; ..." */
static void stack_text(const struct prof *x, size_t i, char *out, size_t n)
{
	size_t len = 0;

	out[0] = 0;
	for (size_t k = 0; k < x->s[i].nloc && len < n; k++) {
		const char *fn, *file, *mf, *bid;
		uint64_t line;

		if (!loc(x, x->s[i].loc[k], &fn, &file, &line, &mf, &bid))
			fn = "(no location)";
		len += (size_t)snprintf(out + len, n - len, "%s%s", k ? " ; " : "", fn ? fn : "?");
		if (len < n && file && *file)
			len += (size_t)snprintf(out + len, n - len, " %s:%llu", file,
						(unsigned long long)line);
		if (len < n && mf)
			len += (size_t)snprintf(out + len, n - len, " [%s %s]", mf, bid);
	}
}

static unsigned char *gunzip(const char *path, size_t *outlen)
{
	size_t len = 0;
	unsigned char *gz = synth_slurp(path, &len), *out = NULL;
	z_stream z;
	size_t cap = 1 << 20;

	if (!gz || len < 2 || gz[0] != 0x1f || gz[1] != 0x8b) {
		free(gz);
		return NULL;
	}
	memset(&z, 0, sizeof(z));
	out = malloc(cap);
	if (!out || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(gz);
		free(out);
		return NULL;
	}
	z.next_in = gz;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (inflate(&z, Z_FINISH) != Z_STREAM_END) {
		free(out);
		out = NULL;
	} else {
		*outlen = z.total_out;
	}
	inflateEnd(&z);
	free(gz);
	return out;
}

/*
 * pid 11: add_kernel x2 (30 ns each) from stack 4 (libcuda, libtorch's
 * launch_add, Python step, main); a HtoD copy of 70 ns from stack 4; one
 * mul_kernel of 5 ns with no stack.
 */
static void trace(const char *path)
{
	static const uint64_t st4[] = { CUDA_PC, TORCH_PC, P_STEP, P_MAIN };
	static const uint8_t bid[] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02 };
	struct synth *s = synth_open(path);
	uint32_t add, mul, file, torch;

	synth_process(s, 11, "h", "python3 train.py", 0, T0);
	synth_device(s, 0, "GPU", 9, 0, 132, 1ull << 36, 1);
	synth_config(s, GP_TRACE_KERNEL | GP_TRACE_MEMCPY | GP_TRACE_API, 0, GP_BACKTRACE_MIXED);
	add = synth_string(s, "add_kernel");
	mul = synth_string(s, "_Z10mul_kernelPf");
	for (uint32_t c = 1; c <= 2; c++) {
		synth_corr_stack(s, c, 4);
		synth_kernel_corr(s, add, GPU0 + c * 1000, GPU0 + c * 1000 + 30, 0, c, 0, 0);
	}
	synth_corr_stack(s, 3, 4);
	synth_memcpy_at_corr(s, 1, 4096, GPU0 + 5000, GPU0 + 5070, 0, 7, 3);
	synth_kernel_corr(s, mul, GPU0 + 6000, GPU0 + 6005, 0, 4, 0, 0);
	file = synth_string(s, "/home/u/proj/train.py");
	synth_pyframe(s, P_STEP, file, synth_string(s, "step"), 12, 10);
	synth_pyframe(s, P_MAIN, file, synth_string(s, "main"), 30, 28);
	torch = synth_string(s, "/opt/torch/lib/libtorch_cuda.so");
	synth_module(s, TORCH_BASE, torch, torch, bid, sizeof(bid));
	synth_frame(s, CUDA_PC, 0x1000, synth_string(s, "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
		    synth_string(s, "cuLaunchKernel"), 0x10, 0, 0);
	synth_frame(s, TORCH_PC, 0x2010, torch, synth_string(s, "launch_add"), 0x10, 0, 0);
	synth_stack(s, 4, st4, 4);
	synth_end(s, T0 + 9000000, 0);
	synth_close(s, NULL, NULL);
}

int main(void)
{
	char path[128], out[128], text[1024], *so = NULL;
	unsigned char *pb;
	struct prof x;
	size_t len = 0, i;
	int rc, found_add = 0, found_copy = 0, found_mul = 0;
	uint64_t tot_ns = 0, tot_n = 0;

	snprintf(dir, sizeof(dir), "/tmp/gp-pprof-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.gpuprof", dir);
	snprintf(out, sizeof(out), "%s/p.pb.gz", dir);
	trace(path);

	tap_begin("pprof: export writes a gzip member that decodes as profile.proto");
	rc = synth_run(dir, &so, NULL, cmd_export, "export", "-t", "pprof", "--no-symbolize", "-o",
		       out, path, NULL);
	pb = rc == 0 ? gunzip(out, &len) : NULL;
	free(so);
	so = NULL;
	CHECKF(pb && decode(pb, len, &x) == 0, "rc %d, %zu bytes", rc, len);
	tap_end();
	if (!pb)
		return tap_done();

	tap_begin("pprof: sample types gpu_time/nanoseconds and launches/count, gpu_time the default");
	CHECKF(x.ntypes == 2 && !strcmp(S(&x, x.types[0][0]), "gpu_time") &&
		       !strcmp(S(&x, x.types[0][1]), "nanoseconds") &&
		       !strcmp(S(&x, x.types[1][0]), "launches") &&
		       !strcmp(S(&x, x.types[1][1]), "count") &&
		       !strcmp(S(&x, x.default_type), "gpu_time") && x.nstr && !x.str[0][0],
	       "%zu types", x.ntypes);
	tap_end();

	tap_begin("pprof: one sample per (kernel or copy, stack), leaf first, frames past the driver");
	for (i = 0; i < x.ns; i++) {
		stack_text(&x, i, text, sizeof(text));
		tot_ns += x.s[i].val[0];
		tot_n += x.s[i].val[1];
		if (!strcmp(text, "add_kernel ; launch_add [/opt/torch/lib/libtorch_cuda.so deadbeef0102]"
				  " ; step /home/u/proj/train.py:12 ; main /home/u/proj/train.py:30"))
			found_add += x.s[i].val[0] == 60 && x.s[i].val[1] == 2;
		else if (!strcmp(text, "[memcpy HtoD] ; launch_add [/opt/torch/lib/libtorch_cuda.so "
				       "deadbeef0102] ; step /home/u/proj/train.py:12 ; main "
				       "/home/u/proj/train.py:30"))
			found_copy += x.s[i].val[0] == 70 && x.s[i].val[1] == 1;
		else if (!strcmp(text, "mul_kernel(float*)"))
			found_mul += x.s[i].val[0] == 5 && x.s[i].val[1] == 1;
		else
			fprintf(stderr, "# unexpected sample %zu: %s\n", i, text);
		CHECKF(!strcmp(S(&x, x.s[i].label_key), "pid") && x.s[i].label_num == 11,
		       "sample %zu label %s=%llu", i, S(&x, x.s[i].label_key),
		       (unsigned long long)x.s[i].label_num);
	}
	CHECKF(x.ns == 3 && found_add == 1 && found_copy == 1 && found_mul == 1,
	       "%zu samples: add %d copy %d mul %d", x.ns, found_add, found_copy, found_mul);
	CHECKF(tot_ns == 135 && tot_n == 4, "totals %llu ns %llu launches",
	       (unsigned long long)tot_ns, (unsigned long long)tot_n);
	tap_end();

	tap_begin("pprof: the kernel's mangled name is its system name; mappings say they have functions");
	for (i = 0; i < x.nf; i++)
		if (!strcmp(S(&x, x.f[i].name), "mul_kernel(float*)"))
			CHECKF(!strcmp(S(&x, x.f[i].sys), "_Z10mul_kernelPf"), "%s", S(&x, x.f[i].sys));
	CHECKF(x.nm == 1 && x.m[0].has_fn && x.m[0].start == TORCH_BASE &&
		       x.m[0].limit > TORCH_PC, "%zu mappings", x.nm);
	tap_end();

	tap_begin("pprof: an empty trace gives an empty profile with its sample types");
	prof_free(&x);
	free(pb);
	{
		struct synth *s;

		snprintf(path, sizeof(path), "%s/e.gpuprof", dir);
		s = synth_open(path);
		synth_process(s, 12, "h", "idle", 0, T0);
		synth_end(s, T0 + 1000, 0);
		synth_close(s, NULL, NULL);
	}
	rc = synth_run(dir, &so, NULL, cmd_export, "export", "-t", "pprof", "-o", out, path, NULL);
	pb = rc == 0 ? gunzip(out, &len) : NULL;
	free(so);
	CHECKF(pb && decode(pb, len, &x) == 0 && x.ns == 0 && x.ntypes == 2, "rc %d", rc);
	tap_end();
	if (pb)
		prof_free(&x);
	free(pb);
	unlink(out);
	unlink(path);
	snprintf(path, sizeof(path), "%s/t.gpuprof", dir);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
