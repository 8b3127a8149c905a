// NVCCFLAGS: -cudart none -x c++
// LIBS: -lcuda
/*
 * Driver-API-only program: no cudart at all, like Triton, Warp or JAX.
 * Built as plain C++ (-x c++): nvcc would otherwise emit a fat-binary
 * registration that calls into cudart even without device code.
 *
 * Loads a hand-written PTX kernel with cuModuleLoadData (the driver JIT
 * compiles it), launches it a known number of times with cuLaunchKernel,
 * and issues driver memcpys (cuMemcpyHtoD, cuMemcpyDtoH, cuMemcpyDtoD,
 * cuMemcpyHtoDAsync from page-locked memory) and memsets (cuMemsetD8,
 * cuMemsetD32, cuMemsetD32Async).  The kernel adds one to each element, so
 * the result proves every launch ran.
 *
 * Truth: kernel.count.add_one, kernel.total, memcpy.*, memset.*.
 */
#include <cuda.h>

#include "common.h"

#define N (1 << 16)
#define LAUNCHES 50

/* unsigned-int increment: x[i] += 1 for i < n.  PTX ISA 8.0 (CUDA 12.0),
 * which every CUDA 13 driver JIT-compiles; .target sm_90 also JITs for
 * newer GPUs. */
static const char add_one_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	"\n"
	".visible .entry add_one(\n"
	"	.param .u64 add_one_p0,\n"
	"	.param .u32 add_one_p1\n"
	")\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %r<7>;\n"
	"	.reg .b64 %rd<5>;\n"
	"\n"
	"	ld.param.u64 %rd1, [add_one_p0];\n"
	"	ld.param.u32 %r1, [add_one_p1];\n"
	"	mov.u32 %r2, %ctaid.x;\n"
	"	mov.u32 %r3, %ntid.x;\n"
	"	mov.u32 %r4, %tid.x;\n"
	"	mad.lo.s32 %r5, %r2, %r3, %r4;\n"
	"	setp.ge.u32 %p1, %r5, %r1;\n"
	"	@%p1 bra $L_done;\n"
	"	cvta.to.global.u64 %rd2, %rd1;\n"
	"	mul.wide.u32 %rd3, %r5, 4;\n"
	"	add.s64 %rd4, %rd2, %rd3;\n"
	"	ld.global.u32 %r6, [%rd4];\n"
	"	add.s32 %r6, %r6, 1;\n"
	"	st.global.u32 [%rd4], %r6;\n"
	"$L_done:\n"
	"	ret;\n"
	"}\n";

int main(void)
{
	const size_t bytes = N * sizeof(unsigned);
	unsigned *h = (unsigned *)malloc(bytes), *pinned;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUstream s;
	CUdeviceptr d, d2;
	unsigned n = N;
	void *args[] = { &d, &n };

	REQUIRE(h, "out of memory");
	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU(cuModuleLoadData(&mod, add_one_ptx));
	CU(cuModuleGetFunction(&fn, mod, "add_one"));
	CU(cuMemAlloc(&d, bytes));
	CU(cuMemAlloc(&d2, bytes));
	CU(cuMemAllocHost((void **)&pinned, bytes));

	/* memsets: d = 0 via D8 (bytes) and d2 = 7 via D32 (words) */
	CU(cuMemsetD8(d, 0, bytes));
	truth_memset(bytes);
	CU(cuMemsetD32(d2, 7, N));
	truth_memset(bytes);
	CU(cuMemsetD32Async(d2, 7, N / 2, s));
	truth_memset(bytes / 2);
	CU(cuStreamSynchronize(s));

	/* x = i via a pageable HtoD copy */
	for (unsigned i = 0; i < N; i++)
		h[i] = i;
	CU(cuMemcpyHtoD(d, h, bytes));
	truth_memcpy("HtoD", bytes);

	for (int i = 0; i < LAUNCHES; i++) {
		CU(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0,
				  i % 2 ? s : NULL, args, NULL));
		truth_kernel("add_one", 1);
		/* the two streams do not order each other */
		CU(cuCtxSynchronize());
	}

	CU(cuMemcpyDtoD(d2, d, bytes));
	truth_memcpy("DtoD", bytes);
	CU(cuCtxSynchronize());
	CU(cuMemcpyDtoH(h, d2, bytes));
	truth_memcpy("DtoH", bytes);
	for (unsigned i = 0; i < N; i++)
		REQUIRE(h[i] == i + LAUNCHES, "x[%u] = %u", i, h[i]);

	/* pinned asynchronous HtoD of half the buffer */
	memcpy(pinned, h, bytes / 2);
	CU(cuMemcpyHtoDAsync(d, pinned, bytes / 2, s));
	truth_memcpy("HtoD", bytes / 2);
	CU(cuStreamSynchronize(s));

	CU(cuMemFreeHost(pinned));
	CU(cuMemFree(d));
	CU(cuMemFree(d2));
	CU(cuModuleUnload(mod));
	CU(cuStreamDestroy(s));
	CU(cuDevicePrimaryCtxRelease(dev));
	free(h);
	truth_print();
	return 0;
}
