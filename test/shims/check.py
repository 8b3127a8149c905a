#!/usr/bin/env python3
"""Checks, without a GPU, that the fault shim the GPU tests preload
(BUILD/test/shims/libgpfault.so, from test/shims/gpfault.c) injects what
they ask of it, so that a GPU test that relies on it tests what it says.

    python3 test/shims/check.py BUILD_DIR

Python itself is the program under the shim: os.write/os.pwrite call the
C library's write/pwrite, and ctypes calls malloc, calloc and mmap from
libffi, which stands for libgpuprof.so as the caller whose allocations
fail (preloaded too, as libgpuprof.so is in the GPU tests).  Prints "ok - ..." / "not ok - ..." lines; exit status 1 on failure.
"""

import ctypes.util
import os
import subprocess
import sys
import tempfile
import time

CHILD = r'''
import ctypes, os, sys, time
what = sys.argv[1]
if what == "write":
    fd = os.open("t.gpuprof", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    other = os.open("t.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    out = []
    for i in range(6):
        t0 = time.time()
        try:
            n = os.pwrite(fd, b"x" * 1000, i * 1000) if i % 2 else os.write(fd, b"x" * 1000)
            out.append("%d" % n)
        except OSError as e:
            out.append("E%d" % e.errno)
        out[-1] += "/%d" % int((time.time() - t0) * 1000)
        os.write(other, b"y" * 1000)
    print(" ".join(out))
else:
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.calloc.restype = ctypes.c_void_p
    libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    bad = (None, ctypes.c_void_p(-1).value)
    got = [libc.malloc(1000) not in bad, libc.malloc(8 << 20) not in bad,
           libc.calloc(8, 1 << 20) not in bad,
           libc.mmap(None, 1 << 16, 3, 0x22, -1, 0) not in bad,
           libc.mmap(None, 4 << 20, 3, 0x22, -1, 0) not in bad,
           len(bytearray(64 << 20)) == 64 << 20]
    print(" ".join(str(int(g)) for g in got))
'''


def run(shim, env, what, cwd):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("GPFAULT_"):
            del e[k]
    e.update(env)
    e["LD_PRELOAD"] = shim
    if what == "alloc":
        e["LD_PRELOAD"] += ":" + (ctypes.util.find_library("ffi") or "libffi.so.8")
    p = subprocess.run([sys.executable, "-c", CHILD, what], cwd=cwd, env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode().strip(), p.stderr.decode().strip()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test/shims/check.py BUILD_DIR")
    shim = os.path.join(os.path.abspath(sys.argv[1]), "test", "shims", "libgpfault.so")
    if not os.path.exists(shim):
        print("not ok - fault shim: %s is missing (make unit)" % shim)
        return 1
    failed = 0
    tmp = tempfile.mkdtemp(prefix="gpfault-check.")
    log = os.path.join(tmp, "log")

    def check(name, cond, why):
        nonlocal failed
        if cond:
            print("ok - fault shim: %s" % name)
        else:
            failed += 1
            print("not ok - fault shim: %s: %s" % (name, why))

    rc, out, err = run(shim, {}, "write", tmp)
    check("without GPFAULT_* variables nothing changes",
          rc == 0 and [w.split("/")[0] for w in out.split()] == ["1000"] * 6, (rc, out, err))

    rc, out, err = run(shim, {"GPFAULT_WRITE_SUFFIX": ".gpuprof", "GPFAULT_WRITE_AFTER": "2000",
                              "GPFAULT_WRITE_ERRNO": "5", "GPFAULT_WRITE_CALLS": "2",
                              "GPFAULT_LOG": log}, "write", tmp)
    got = [w.split("/")[0] for w in out.split()]
    with open(log) as f:
        lines = f.read().split("\n")
    check("writes and pwrites fail with EIO after 2000 bytes, for 2 calls",
          rc == 0 and got == ["1000", "1000", "E5", "E5", "1000", "1000"]
          and lines[:2] == [l for l in lines[:2] if l.startswith("write-errno ")],
          (rc, out, err, lines))
    check("other files are written as usual", os.path.getsize(os.path.join(tmp, "t.txt")) == 6000,
          os.path.getsize(os.path.join(tmp, "t.txt")))

    rc, out, err = run(shim, {"GPFAULT_WRITE_SUFFIX": ".gpuprof", "GPFAULT_WRITE_ERRNO": "28",
                              "GPFAULT_WRITE_AFTER": "3000"}, "write", tmp)
    got = [w.split("/")[0] for w in out.split()]
    check("without GPFAULT_WRITE_CALLS every later write fails",
          rc == 0 and got == ["1000"] * 3 + ["E28"] * 3, (rc, out, err))

    t0 = time.time()
    rc, out, err = run(shim, {"GPFAULT_WRITE_SUFFIX": ".gpuprof", "GPFAULT_WRITE_AFTER": "4000",
                              "GPFAULT_WRITE_DELAY_MS": "400", "GPFAULT_WRITE_CALLS": "1"},
                       "write", tmp)
    ms = [int(w.split("/")[1]) for w in out.split()] if rc == 0 else []
    check("one write after 4000 bytes is delayed, then written",
          rc == 0 and [w.split("/")[0] for w in out.split()] == ["1000"] * 6
          and len(ms) == 6 and ms[4] >= 390 and max(ms[:4] + ms[5:]) < 300,
          (rc, out, err, time.time() - t0))

    os.unlink(log)
    rc, out, err = run(shim, {"GPFAULT_ALLOC_CALLER": "libffi", "GPFAULT_MALLOC_OVER": "1000000",
                              "GPFAULT_MMAP_OVER": "100000", "GPFAULT_LOG": log}, "alloc", tmp)
    check("the named caller's large malloc, calloc and mmap fail; small ones and "
          "other callers' do not", rc == 0 and out == "1 0 0 1 0 1", (rc, out, err))
    rc, out, err = run(shim, {}, "alloc", tmp)
    check("without GPFAULT_* variables allocations succeed",
          rc == 0 and out == "1 1 1 1 1 1", (rc, out, err))
    subprocess.call(["rm", "-rf", tmp])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
