// NVCCFLAGS: -cudart none -x c++
// LIBS: -lcuda
/*
 * Initializes CUDA and asks for the device count, and nothing else: what a
 * launcher (torchrun's parent, `torch.cuda.is_available()`) does.  No
 * context is ever created, so no GPU work was done: it leaves no trace file
 * and the recorder says nothing.
 *
 * Truth: kernel.total 0 (the TRUTH line also proves the program ran).
 */
#include <cuda.h>

#include "common.h"

int main(void)
{
	int n = 0;

	CU(cuInit(0));
	CU(cuDeviceGetCount(&n));
	REQUIRE(n > 0, "no CUDA device");
	printf("TRUTH kernel.total 0\n");
	return 0;
}
