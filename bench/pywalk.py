#!/usr/bin/env python3
"""Cost of reading the calling thread's Python frames (cupti/pystack.c), the
work --backtrace=python adds on each kernel launch besides the CUPTI
callback and the stack table lookup, at several stack depths.

    python3 bench/pywalk.py BUILD_DIR

Loads BUILD_DIR/test/libgppystack.so (make unit) with ctypes.CDLL (the GIL
is released during the call, as in a CUDA call) and prints
"BENCH walk_ns_depthD X" lines: mean ns per walk of D Python frames.
"""
import ctypes
import os
import sys

lib = ctypes.CDLL(os.path.join(sys.argv[1] if len(sys.argv) > 1 else "build", "test",
                               "libgppystack.so"))
lib.gp_pystack_probe_walk_ns.restype = ctypes.c_double
why = ctypes.create_string_buffer(256)
if lib.gp_pystack_probe_init(why, len(why)):
    print("SKIP", why.value.decode())
    sys.exit(0)


def nest(d, f):
    return f() if d <= 1 else nest(d - 1, f)


for depth in (2, 10, 50, 120):
    # nest() adds depth - 1 frames under this module's frame
    ns = nest(depth - 1, lambda: lib.gp_pystack_probe_walk_ns(200000))
    print("BENCH walk_ns_depth%d %.1f" % (depth, ns), flush=True)
