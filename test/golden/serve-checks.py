#!/usr/bin/env python3
"""gpuprof serve on a spool of golden traces, as HTTP clients see it.

usage: serve-checks.py ANALYZER GOLDEN_DIR

The spool holds two windows of process A (the older one must be left
out), one of process B and one window of B still being written (a name
starting with '.', left out).  Checks, against `export` of the latest
windows: /metrics (the same samples, promtool check metrics accepts it
when promtool is there), /debug/pprof/gpu (a gzip member; go tool pprof's
total when go is there), 404/405/400 and 431 answers, slow clients (silent,
half a request, a slot hog of every connection) that never delay another
client by more than the request deadline and are closed by it, and a new
window picked up.  With the prometheus binary: a real Prometheus server on
127.0.0.1 scrapes the server and its query API returns the spool's values.
Prints TAP lines; exit status 1 when one fails.
"""
import gzip
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

fails = 0


def ok(cond, what, detail=""):
    global fails
    print(("ok" if cond else "not ok") + " - serve: " + what)
    if not cond:
        fails += 1
        for line in str(detail).splitlines()[:20]:
            print("# " + line)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(port, path, timeout=10):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
        return r.status, r.read()


def raw(port, data, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    return out


def samples(text):
    """{series: value} of an exposition, comments and the windows count left out."""
    d = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or line.startswith("gpuprof_windows "):
            continue
        k, v = line.rsplit(" ", 1)
        d[k] = v
    return d


def main():
    analyze, golden = sys.argv[1:3]
    tmp = tempfile.mkdtemp(prefix="gpuprof-serve.")
    spool = os.path.join(tmp, "spool")
    os.mkdir(spool)
    shutil.copy(os.path.join(golden, "synth_mix.gpuprof"), os.path.join(spool, "hostA-100-w000001.gpuprof"))
    shutil.copy(os.path.join(golden, "graphs.gpuprof"), os.path.join(spool, "hostA-100-w000002.gpuprof"))
    shutil.copy(os.path.join(golden, "demo.gpuprof"), os.path.join(spool, "hostB-7-w000003.gpuprof"))
    shutil.copy(os.path.join(golden, "synth_mix.gpuprof"), os.path.join(spool, ".hostB-7-w000004.gpuprof"))
    latest = [os.path.join(spool, "hostA-100-w000002.gpuprof"), os.path.join(spool, "hostB-7-w000003.gpuprof")]
    port = free_port()
    srv = subprocess.Popen([analyze, "serve", "--spool", spool, "--listen", "127.0.0.1:%d" % port,
                            "--no-symbolize"], stderr=subprocess.DEVNULL)
    prom = None
    try:
        for _ in range(100):
            try:
                get(port, "/")
                break
            except OSError:
                time.sleep(0.05)
        want = subprocess.run([analyze, "export", "-t", "prometheus", "--no-symbolize"] + latest,
                              capture_output=True, text=True, check=True).stdout
        st, body = get(port, "/metrics")
        text = body.decode()
        ok(st == 200 and samples(text) == samples(want) and "gpuprof_windows 2\n" in text,
           "/metrics are the export of each process's latest window (2 windows)",
           "\n".join(sorted(set(samples(text).items()) ^ set(samples(want).items()))))
        if shutil.which("promtool"):
            r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
            ok(r.returncode == 0, "promtool check metrics accepts /metrics", r.stdout + r.stderr)
        else:
            print("ok - serve: promtool # SKIP promtool not found (Debian: apt-get install prometheus)")
        st, body = get(port, "/debug/pprof/gpu")
        ok(st == 200 and body[:2] == b"\x1f\x8b" and len(gzip.decompress(body)) > 0,
           "/debug/pprof/gpu is a gzip member")
        if shutil.which("go"):
            pb = os.path.join(tmp, "p.pb.gz")
            with open(pb, "wb") as f:
                f.write(body)
            env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"))
            top = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-top", "-unit=ns", pb],
                                 capture_output=True, text=True, env=env).stdout
            exp = os.path.join(tmp, "e.pb.gz")
            subprocess.run([analyze, "export", "-t", "pprof", "--no-symbolize", "-o", exp] + latest, check=True)
            top2 = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-top", "-unit=ns", exp],
                                  capture_output=True, text=True, env=env).stdout
            t1 = re.search(r"of (\d+)ns total", top)
            t2 = re.search(r"of (\d+)ns total", top2)
            ok(t1 and t2 and t1.group(1) == t2.group(1), "go tool pprof reads /debug/pprof/gpu: the "
               "export's total", top[:400] + top2[:400])
        for req, code, what in ((b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n", b" 405 ", "POST refused"),
                                (b"GET /nothing HTTP/1.1\r\n\r\n", b" 404 ", "unknown path 404"),
                                (b"hello\r\n\r\n", b" 400 ", "garbage 400"),
                                (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000, b" 431 ", "a request over 8 KiB 431")):
            out = raw(port, req)
            ok(out.startswith(b"HTTP/1.1") and code in out.split(b"\r\n")[0], what, out[:200])
        # Slow clients: a silent one, half a request, then every slot held.
        silent = socket.create_connection(("127.0.0.1", port))
        half = socket.create_connection(("127.0.0.1", port))
        half.sendall(b"GET /metrics HTTP/1.1\r\n")
        t0 = time.monotonic()
        st, _ = get(port, "/metrics")
        ok(st == 200 and time.monotonic() - t0 < 1.0, "a silent client and half a request delay no one",
           "%.2f s" % (time.monotonic() - t0))
        silent.settimeout(10)
        half.settimeout(10)
        t0 = time.monotonic()
        a, b = silent.recv(10), half.recv(10)
        dt = time.monotonic() - t0
        ok(a == b"" and b == b"" and dt < 7, "both closed by the 5 s deadline", "%r %r %.2f s" % (a, b, dt))
        silent.close()
        half.close()
        hogs = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
        t0 = time.monotonic()
        st, _ = get(port, "/metrics", timeout=15)
        dt = time.monotonic() - t0
        ok(st == 200 and dt < 7, "every slot held by silent clients: answered within the deadline",
           "%.2f s" % dt)
        for h in hogs:
            h.close()
        # A new window of B: picked up at the next request.
        shutil.copy(os.path.join(golden, "multistream.gpuprof"), os.path.join(spool, "hostB-7-w000005.gpuprof"))
        want2 = subprocess.run([analyze, "export", "-t", "prometheus", "--no-symbolize", latest[0],
                                os.path.join(spool, "hostB-7-w000005.gpuprof")],
                               capture_output=True, text=True, check=True).stdout
        st, body = get(port, "/metrics")
        ok(samples(body.decode()) == samples(want2), "a new window replaces its process's older one")
        # A real Prometheus server scrapes it.
        if not shutil.which("prometheus"):
            print("ok - serve: Prometheus scrape # SKIP prometheus not found (Debian: apt-get install prometheus)")
        else:
            pport = free_port()
            cfg = os.path.join(tmp, "prometheus.yml")
            with open(cfg, "w") as f:
                f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gpuprof\n"
                        "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % port)
            prom = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                                     "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                                     "--web.listen-address=127.0.0.1:%d" % pport],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            want_v = samples(want2)
            checks = {k: v for k, v in want_v.items() if k.startswith("gpuprof_kernel_launches{")}
            got = {}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and got != checks:
                time.sleep(1)
                try:
                    q = urllib.parse.quote("gpuprof_kernel_launches")
                    _, b = get(pport, "/api/v1/query?query=" + q)
                except OSError:
                    continue
                import json
                d = json.loads(b)
                got = {}
                for r in d.get("data", {}).get("result", []):
                    m = r["metric"]
                    got['gpuprof_kernel_launches{kernel="%s"}' % m.get("kernel", "")] = r["value"][1]
            ok(got == checks and checks, "a Prometheus server on 127.0.0.1 scrapes it; its query API "
               "returns the last window's launches", "%r\n%r" % (got, checks))
    finally:
        if prom:
            prom.terminate()
            prom.wait(timeout=30)
        srv.terminate()
        try:
            rc = srv.wait(timeout=10)
        except subprocess.TimeoutExpired:
            srv.kill()
            rc = -9
        ok(rc == 0, "ends with status 0 on SIGTERM", "rc %d" % rc)
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
