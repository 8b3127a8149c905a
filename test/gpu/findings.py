"""GPU tests of the report's findings (run by run.py): test/apps/findings.cu
runs each problem and its fixed twin under the recorder; the rule must fire
on the problem, with the site's file:line the program printed (the launch
site before or after the idle time, or for a synchronous copy the copy
call's own site, site_call) and a
time at stake within 20% of the time the twin actually saves (the host time
of the steady-state loop, problem minus twin), and must not fire on the
twin.  The report's --fail-on must exit 3 on the problem and 0 on the twin.

tests(h) returns the (name, function) pairs; h is run.py's namespace.
"""

import json

STAKE_TOLERANCE = 0.20

# mode: (rule, backtrace, the place's site that is checked, truth key of its line)
CASES = {
    "starve": ("gpu-starvation", "kernel", "site_after", "findings.line.launch"),
    "sync": ("host-sync", "kernel", "site_before", "findings.line.launch"),
    "copy": ("sync-copy", "all", "site_call", "findings.line.copy"),
    "launch": ("launch-bound", "kernel", "site_after", "findings.line.launch"),
}


def tests(h):
    Fail = h["Fail"]
    run_cmd, clean_env, tail = h["run_cmd"], h["clean_env"], h["tail"]

    def findings_of(tools, files):
        return tools.export_json(files).get("findings", [])

    def pair(mode):
        rule, backtrace, side, line_key = CASES[mode]

        def t(tools):
            app = tools.app("findings")
            got = {}
            for fixed in (False, True):
                run = h["traced"](tools, [app, mode] + (["fixed"] if fixed else []),
                                  opts=["--backtrace=" + backtrace])
                h["expect_status"](run, 0)
                h["expect_files"](run, 1)
                got[fixed] = (run, findings_of(tools, run.files))
            run, fs = got[False]
            twin, tfs = got[True]
            saved = run.truth["findings.loop_ns"] - twin.truth["findings.loop_ns"]
            mine = [f for f in fs if f["rule"] == rule]
            errs = []
            if not mine:
                errs.append("%s did not fire on the problem; findings: %s"
                            % (rule, [(f["rule"], f["stake_ns"]) for f in fs]))
            else:
                f = max(mine, key=lambda x: x["stake_ns"])
                if saved <= 0:
                    errs.append("the twin saved nothing (%d ns)" % saved)
                elif abs(f["stake_ns"] - saved) > STAKE_TOLERANCE * saved:
                    errs.append("time at stake %d ns, the twin saves %d ns (more than %d%% apart)"
                                % (f["stake_ns"], saved, STAKE_TOLERANCE * 100))
                want = "findings.cu:%d" % run.truth[line_key]
                sites = [w.get(side) or "" for w in f["where"]]
                if not any(want in s for s in sites):
                    errs.append("no %s at %s: %s" % (side, want, json.dumps(f["where"])[:800]))
            if any(f["rule"] == rule for f in tfs):
                errs.append("%s fired on the fixed twin: %s"
                            % (rule, json.dumps([f for f in tfs if f["rule"] == rule])[:800]))
            # The CI gate.
            for files, want_rc in ((run.files, 3), (twin.files, 0)):
                rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline",
                                        "--fail-on=" + rule] + files, clean_env(),
                                       h["TOOL_TIMEOUT"])
                if rc != want_rc:
                    errs.append("report --fail-on=%s exited %d, expected %d: %s"
                                % (rule, rc, want_rc, tail(err)))
            if errs:
                raise Fail("; ".join(errs))
        return t

    return [("findings-" + mode, pair(mode)) for mode in CASES]
