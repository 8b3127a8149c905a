#!/usr/bin/env python3
"""The Python frame reader (cupti/pystack.c) in this interpreter.

Loads build/test/libgppystack.so with ctypes.CDLL, which releases the GIL
around each call, and calls it from known functions: the frames it reads
must name exactly their files, lines and (qualified) functions, on the
main thread and on a threading.Thread, through a call from C (map), with
non-ASCII names, inside a generator and a coroutine.  Run it with each
CPython at hand (3.9 to 3.13 are read; others must be refused).  Prints "ok - ..." / "not ok - ..." lines.

    python3 test/unit/test_pystack.py BUILD_DIR
"""
import ctypes
import os
import sys
import threading

HERE = os.path.abspath(__file__)
failed = 0


def report(name, ok, why=""):
    global failed
    if ok:
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}: {why}")


def marked(tag):
    """The line of this file that ends with the comment '# @tag'."""
    with open(HERE, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# @" + tag):
                return i
    raise SystemExit(f"marker {tag} missing")


build = sys.argv[1] if len(sys.argv) > 1 else "build"
lib_path = os.path.join(build, "test", "libgppystack.so")
if not os.path.exists(lib_path):
    print(f"not ok - pystack: {lib_path} missing (make unit)")
    sys.exit(1)
lib = ctypes.CDLL(lib_path)
BUF = ctypes.create_string_buffer(1 << 16)
QUAL = sys.version_info >= (3, 11)      # co_qualname exists from 3.11


def probe():
    n = lib.gp_pystack_probe(BUF, len(BUF))  # @probe
    return n, [l.split(" ") for l in BUF.value.decode("utf-8").splitlines()]


def inner():
    return probe()  # @inner


class Holder:
    def method(self):
        return inner()  # @method


def größe():
    return probe()  # @latin


def 関数():
    return probe()  # @cjk


def frames_ok(got, want):
    """got: parsed probe lines; want: [(tag, function)], innermost first."""
    for i, (tag, fn) in enumerate(want):
        exp = f"{HERE}:{marked(tag)}"
        if i >= len(got):
            return False, f"frame {i} missing (have {len(got)})"
        if got[i][0] != exp or got[i][1] != fn:
            return False, f"frame {i}: {' '.join(got[i][:2])}, expected {exp} {fn}"
    return True, ""


why = ctypes.create_string_buffer(256)
rc = lib.gp_pystack_probe_init(why, len(why))
supported = (3, 9) <= sys.version_info[:2] <= (3, 13)
if not supported:
    report("pystack refuses this interpreter", rc != 0, "init accepted an unsupported version")
    print(f"skip - pystack frames # CPython {sys.version_info[0]}.{sys.version_info[1]}")
    sys.exit(1 if failed else 0)
report("pystack finds CPython", rc == 0, why.value.decode())
if rc:
    sys.exit(1)

meth = "Holder.method" if QUAL else "method"
n, got = Holder().method()  # @top
ok, msg = frames_ok(got, [("probe", "probe"), ("inner", "inner"), ("method", meth),
                          ("top", "<module>")])
report("pystack main thread: file:line function of each frame", ok, msg)
report("pystack main thread: the module frame is the outermost",
       n == len(got) and n == 4, f"{n} frames")
fl = {g[1]: int(g[2]) for g in got}
report("pystack first lines", fl.get("probe") == marked("probe") - 1 and
       fl.get("inner") == marked("inner") - 1, str(fl))

result = {}


def worker():
    result["w"] = inner()  # @worker


t = threading.Thread(target=worker, name="probe-thread")
t.start()
t.join()
n, got = result["w"]
ok, msg = frames_ok(got, [("probe", "probe"), ("inner", "inner"), ("worker", "worker")])
report("pystack threading.Thread: its own frames", ok, msg)
report("pystack threading.Thread: ends in threading.py",
       n == len(got) and got[-1][0].split(":")[0].endswith("threading.py"),
       got[-1][0] if got else "no frames")

# map() calls cb from C: a new call of the evaluation loop starts at cb.
def cb(_):
    return probe()  # @cb


n, got = list(map(cb, [0]))[0]  # @mapped
ok, msg = frames_ok(got, [("probe", "probe"), ("cb", "cb"), ("mapped", "<module>")])
report("pystack through a call from C", ok, msg)
entries = [int(g[3]) for g in got]
exp_entries = [1, 1, 1] if sys.version_info < (3, 11) else [0, 1, 1]
report("pystack marks each call of the evaluation loop", entries == exp_entries,
       f"entry flags {entries}, expected {exp_entries}")

n, got = größe()  # @latin_call
ok, msg = frames_ok(got, [("probe", "probe"), ("latin", "größe")])
report("pystack non-ASCII (Latin-1) function name", ok, msg)
n, got = 関数()  # @cjk_call
ok, msg = frames_ok(got, [("probe", "probe"), ("cjk", "関数")])
report("pystack non-ASCII (UCS-2) function name", ok, msg)

def gen():
    yield probe()  # @gen


async def coro():
    return probe()  # @coro


n, got = next(gen())  # @gen_call
ok, msg = frames_ok(got, [("probe", "probe"), ("gen", "gen"), ("gen_call", "<module>")])
report("pystack inside a generator", ok, msg)
c = coro()
try:
    c.send(None)  # @coro_call
except StopIteration as e:
    n, got = e.value
ok, msg = frames_ok(got, [("probe", "probe"), ("coro", "coro"), ("coro_call", "<module>")])
report("pystack inside a coroutine", ok, msg)

evals = lib.gp_pystack_probe_eval_frames()
report("pystack finds the evaluation loop's native frames", evals >= 1, f"{evals} frames")

sys.exit(1 if failed else 0)
