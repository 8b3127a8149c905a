#!/usr/bin/env python3
"""Checks a roofline chart (gpuprof report --roofline-svg) against the JSON
export of the same traces, as a person would read it:

    svg-checks.py CHART.svg EXPORT.json NAME

- the chart is well-formed XML (xml.etree), an SVG document;
- one chart per GPU model, titled with the model's name and where its
  peaks come from;
- the device's ceilings are drawn at the export's values: DRAM
  bandwidth, FP64, FP32, FP16 and tensor-core FP16 roofs;
- one dot per profiled kernel, each with a tooltip naming that kernel,
  area growing with total GPU time.

Prints "ok - svg NAME" or "not ok - svg NAME: why"; exit status 1 on failure.
Python 3, standard library only.
"""
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
ROOFS = {"FP64": "fp64", "FP32": "fp32", "FP16": "fp16", "Tensor FP16/BF16": "tensor_fp16"}


def check(svg, js):
    errs = []
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        return ["not well-formed XML: %s" % e]
    if root.tag != NS + "svg":
        return ["root element %s, not svg" % root.tag]
    mx = js.get("metrics") or {}
    kernels = mx.get("kernels", [])
    devs = mx.get("devices", [])
    charts = [g for g in root.iter(NS + "g") if g.get("class") == "chart"]
    names = {d.get("name") for d in js.get("devices", [])}
    if len(charts) != max(1, len({c.get("data-model") for c in charts})) or not charts:
        errs.append("%d charts" % len(charts))
    for c in charts:
        if c.get("data-model") not in names:
            errs.append("chart of %r, not a device of the trace %s" % (c.get("data-model"), names))
        title = "".join("".join(t.itertext()) for t in c.iter(NS + "text") if t.get("class") == "title")
        sub = "".join("".join(t.itertext()) for t in c.iter(NS + "text") if t.get("class") == "sub")
        if c.get("data-model") not in title:
            errs.append("title %r does not name the GPU" % title)
        if "from specifications" not in sub and "measured by gpuprof calibrate" not in sub:
            errs.append("subtitle %r does not say where the peaks come from" % sub)
    lines = [e for e in root.iter(NS + "line") if "ceiling" in (e.get("class") or "")]
    ceil = {e.get("data-ceiling"): float(e.get("data-value")) for e in lines}
    if devs:
        d = devs[0]
        want = {"DRAM": d["peak_dram_bytes_s"]}
        for name, key in ROOFS.items():
            if d["peak_flop_s"].get(key):
                want[name] = d["peak_flop_s"][key]
        for name, v in want.items():
            got = ceil.get(name)
            if got is None:
                errs.append("no %s ceiling (has %s)" % (name, sorted(ceil)))
            elif abs(got - v) > 1e-5 * v:
                errs.append("%s ceiling at %g, the export says %g" % (name, got, v))
    dots = [e for e in root.iter(NS + "circle") if e.get("class") == "kernel"]
    if len(dots) != len(kernels):
        errs.append("%d dots for %d profiled kernels" % (len(dots), len(kernels)))
    tips = ["".join(d.find(NS + "title").itertext()) for d in dots if d.find(NS + "title") is not None]
    for k in kernels:
        if not any(t.split("\n")[0].endswith(". " + k["name"]) for t in tips):
            errs.append("no dot titled %r" % k["name"][:80])
            break
    by_num = sorted(dots, key=lambda d: int(d.get("data-kernel")))
    radii = [float(d.get("r")) for d in by_num]
    if radii != sorted(radii, reverse=True):
        errs.append("dot sizes do not follow total time (numbered by time): %s" % radii[:10])
    return errs


def main():
    svg, exp, name = sys.argv[1:4]
    with open(exp) as f:
        js = json.load(f)
    errs = check(svg, js)
    if errs:
        print("not ok - svg %s: %s" % (name, "; ".join(errs)))
        return 1
    print("ok - svg %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
