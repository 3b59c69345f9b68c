#!/usr/bin/env python3
"""Self-test of the rig's host-side asserts, run by scripts/vm-test before any
boot (no VM, under a second): for every configuration, what a correct machine
would print must pass each check, and each kind of wrong answer (a missing
CPU-less node, a changed distance, a wrong HMAT value, a thread on the wrong
CPU, a wrong exit status) must fail it. Without this a check that compares
nothing would pass forever unnoticed.
"""

import base64
import copy
import io
import json
import os
import sys
import tarfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import CHECKS, Result, Skip, T  # noqa: E402
from arch import ARCHES  # noqa: E402
from rig import CONFIG_DIR, Config  # noqa: E402
import tune_checks  # noqa: E402
import policy_checks  # noqa: E402
import c2c_checks  # noqa: E402
import peak_checks  # noqa: E402
import locks_checks  # noqa: E402
import loaded_checks  # noqa: E402
import sweep_checks  # noqa: E402
import footprint_checks  # noqa: E402
import interleave_checks  # noqa: E402
from unittests import GUEST_SKIPS, failure_output  # noqa: E402

MIB = 1024 * 1024


def good_topo(cfg):
    return {
        "schema": "numaprobe/1",
        "cpus": [{"os_index": c, "online": True, "allowed": True, "package": cfg.package_of(c),
                  "core": cfg.core_of(c),
                  "node": n.id, "smt_siblings": [c]} for n in cfg.nodes for c in n.cpus],
        "numa_nodes": [{"os_index": n.id, "cpus": n.cpus,
                        "memory_bytes": (n.memory_mib - 8) * MIB,
                        "free_bytes": (n.memory_mib - 40) * MIB, "allowed": True}
                       for n in cfg.nodes],
        "distances": {"node_ids": cfg.node_ids, "matrix": cfg.distances},
        "hmat": cfg.expected_hmat(),
        "allowed": {"cpus": cfg.cpu_ids, "nodes": cfg.node_ids, "sources": []},
    }


def sysfs_text(cfg):
    lines = []
    for n in cfg.nodes:
        lines.append(f"node {n.id} cpus {','.join(map(str, n.cpus))}")
        lines.append(f"node {n.id} distance {' '.join(map(str, cfg.distances[n.id]))}")
        lines.append(f"node {n.id} memtotal_kb {(n.memory_mib - 8) * 1024}")
    for e in cfg.expected_hmat():
        pre = f"node {e['node']} access{e['access_class']}"
        lines.append(f"{pre} initiators {' '.join(map(str, e['initiators']))} ")
        for f in ("read_latency", "write_latency"):
            lines.append(f"{pre} {f} {e[f + '_ns']}")
        for f in ("read_bandwidth", "write_bandwidth"):
            lines.append(f"{pre} {f} {e[f + '_mbps']}")
    lines.append(f"online_cpus 0-{len(cfg.cpu_ids) - 1}")
    lines += [f"cpu {c} package {cfg.package_of(c)} core {cfg.core_of(c)}" for c in cfg.cpu_ids]
    return "\n".join(lines) + "\n"


def pin_text(cfg, wrong=None):
    return "".join(f"cpu {c} ran_on {wrong if wrong is not None else c}\n"
                   for c in cfg.cpu_ids for _ in range(3))


def outcome(name, cfg, res):
    t = T()
    try:
        CHECKS[name].verify(cfg, res, t)
    except Skip:
        return "skip"
    return "fail" if t.problems else "pass"


def cases(cfg):
    """(check, description, result, expected outcome)."""
    topo = good_topo(cfg)
    yield "topo-json", "correct machine", Result(json.dumps(topo), "", 0), "pass"
    yield "topo-json", "not built", Result("", "numaprobe: error: `numaprobe topo` is not built yet", 1), "skip"
    bad = copy.deepcopy(topo)
    bad["distances"]["matrix"][0][1] += 1
    yield "topo-json", "changed distance", Result(json.dumps(bad), "", 0), "fail"
    bad = copy.deepcopy(topo)
    bad["numa_nodes"].pop()
    yield "topo-json", "missing last node", Result(json.dumps(bad), "", 0), "fail"
    bad = copy.deepcopy(topo)
    bad["numa_nodes"][-1]["memory_bytes"] = 0
    yield "topo-json", "node without memory", Result(json.dumps(bad), "", 0), "fail"
    bad = copy.deepcopy(topo)
    bad["cpus"][-1]["node"] = (bad["cpus"][-1]["node"] + 1) % len(cfg.nodes)
    yield "topo-json", "CPU on the wrong node", Result(json.dumps(bad), "", 0), "fail"
    if cfg.hmat:
        bad = copy.deepcopy(topo)
        bad["hmat"][-1]["read_latency_ns"] += 1
        yield "topo-json", "wrong HMAT latency", Result(json.dumps(bad), "", 0), "fail"
        bad = copy.deepcopy(topo)
        bad["hmat"] = []
        yield "topo-json", "HMAT missing", Result(json.dumps(bad), "", 0), "fail"
    else:
        bad = copy.deepcopy(topo)
        bad["hmat"] = [{"node": 0, "access_class": 0, "initiators": [0]}]
        yield "topo-json", "HMAT where there is none", Result(json.dumps(bad), "", 0), "fail"
    bad = copy.deepcopy(topo)
    bad["allowed"]["nodes"] = bad["allowed"]["nodes"][:1]
    yield "topo-json", "nodes not allowed", Result(json.dumps(bad), "", 0), "fail"
    yield "topo-json", "not JSON", Result("node 0 ...", "", 0), "fail"
    yield "topo-json", "non-zero exit", Result(json.dumps(topo), "boom", 1), "fail"

    yield "sysfs-layout", "correct machine", Result(sysfs_text(cfg), "", 0), "pass"
    yield "sysfs-layout", "changed distance", Result(
        sysfs_text(cfg).replace("distance 10 ", "distance 11 ", 1), "", 0), "fail"
    yield "sysfs-layout", "no output", Result("", "", 0), "fail"

    yield "pin-each-cpu", "correct machine", Result(pin_text(cfg), "", 0), "pass"
    yield "pin-each-cpu", "always CPU 0", Result(pin_text(cfg, wrong=0), "", 0), "fail"

    err = "numaprobe: error: /nonexistent: no such directory"
    yield "bad-sysfs-root", "exit 2, one line", Result("", err + "\n", 2), "pass"
    yield "bad-sysfs-root", "exit 1", Result("", err + "\n", 1), "fail"
    yield "bad-sysfs-root", "two lines", Result("", err + "\nmore\n", 2), "fail"


def matrix_doc(cfg, fraction=1.0, flags=()):
    cpu_nodes = [n for n in cfg.nodes if n.cpus]
    return json.dumps({
        "schema": "numaprobe/1", "unit": "ns", "cpu_nodes": [n.id for n in cpu_nodes],
        "mem_nodes": cfg.node_ids, "complete": True,
        "cells": [{"cpu_node": n.id, "mem_node": m, "cpus": n.cpus[:1],
                   "flagged": fraction < 0.99 or bool(flags), "flags": list(flags),
                   "placement": {"fraction_on_intended": fraction}}
                  for n in cpu_nodes for m in cfg.node_ids],
    })


def study_text(cfg, cpu_verified=True):
    node = next(n for n in cfg.nodes if n.cpus)
    doc = {"schema": "numaprobe/1", "complete": True, "experiments": [{"cases": [{"threads": [
        {"label": f"{node.id}.0.w.{node.id}", "node": node.id, "cpu": node.cpus[0],
         "cpu_verified": cpu_verified, "mem_node": node.id, "pages_on_node": 1.0,
         "placement_ok": True}]}]}]}
    from checks import study_presets_of
    return "".join(f"@@@ preset {p} rc 0\n{json.dumps(doc)}\n" for p in study_presets_of(cfg))


def engine_cases(cfg):
    for sub in ("latency", "bandwidth"):
        name = f"{sub}-placement"
        yield name, "all on node", Result(matrix_doc(cfg), "", 0), "pass"
        yield name, "half on node", Result(matrix_doc(cfg, 0.5), "", 0), "fail"
        busy = ["unstable: CV 12.0 %", "preempted: the measuring thread lost its CPU in 9 of 12",
                "two modes: 80.0 ns (6 samples) and 140.0 ns (6 samples)"]
        yield name, "flagged for a busy host, said", Result(matrix_doc(cfg, flags=busy), "", 0), "pass"
        yield name, "flagged for a misplaced page", Result(matrix_doc(
            cfg, flags=["placement 98.0 % on node 1 < 99 %"]), "", 0), "fail"
        yield name, "flagged for a sampling cut short", Result(matrix_doc(
            cfg, flags=["cut short by an interruption after 2 sample(s)"]), "", 0), "fail"
    ok = "".join(f"case {c} rc 2\nerr {c} numaprobe: error: no\n" for c in ("a", "b"))
    yield "engine-bad-input", "exit 2 each", Result(ok, "", 0), "pass"
    yield "engine-bad-input", "OOM kill", Result(ok.replace("rc 2", "rc 137", 1), "", 0), "fail"
    yield "study-presets", "placed", Result(study_text(cfg), "", 0), "pass"
    yield "study-presets", "cpu not verified", Result(study_text(cfg, False), "", 0), "fail"


def report_b64(files):
    """A report folder as the guest sends it: tar | gzip | base64."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    b = base64.b64encode(buf.getvalue()).decode()
    return "\n".join(b[i:i + 76] for i in range(0, len(b), 76))


def main_matrix(cfg, kind, upto=None, fraction=1.0, complete=True):
    cells = [{"cpu_node": n.id, "mem_node": m, "cpus": n.cpus[:1], "flagged": False,
              "placement": {"fraction_on_intended": fraction}, "elapsed_s": 0.2, "setup_s": 0.1}
             for n in cfg.nodes if n.cpus for m in cfg.node_ids][:upto]
    return {"schema": "numaprobe/1", "kind": kind, "cpu_nodes": [n.id for n in cfg.nodes if n.cpus],
            "mem_nodes": cfg.node_ids, "cells": cells, "complete": complete,
            "interrupted": not complete}


MAIN_EXTRAS = (("c2c", "c2c.json"), ("loaded_latency", "loaded-latency.json"),
               ("peak", "peak.json"), ("sweep", "sweep.json"))


def main_extra(key, status="measured", reason=None):
    """An extra phase of the main job as run.json holds it (c2c: one pair
    per domain, both ways, as the job asks for)."""
    result = {"schema": "numaprobe/1", "complete": status == "measured"}
    if key == "c2c":
        result["pairs"] = [{"a": 0, "b": 1, "domain": "same_package"},
                           {"a": 1, "b": 0, "domain": "same_package"}]
        result["domains"] = [{"domain": "same_package", "pairs": 2}]
    return {"phase": key, "status": status, "reason": reason, "share_s": 5.0,
            "elapsed_s": 2.0, "steps_planned": 4, "steps_done": 4,
            "result": result if status in ("measured", "partial") else None}


def main_phase(kind, cells, mem_nodes, skipped=()):
    """A matrix phase as run.json's plan records it: every cell it kept
    measured, one buffer set-up per memory node measured."""
    setups = [{"mem_node": m, "bytes": 64 << 20, "seconds": 0.5}
              for m in sorted({c["mem_node"] for c in cells})]
    return {"phase": kind, "coverage": "subset" if skipped else "full",
            "skipped": [list(c) for c in skipped], "reason": "less" if skipped else None,
            "planned_cells": len(cells), "measured_cells": len(cells),
            "setups": setups, "setup_s": 0.5 * len(setups)}


def main_plan(run, cfg, statement=None, skipped=None):
    """run.json's plan and status for the matrices `run` holds."""
    skipped = skipped or {}
    phases = [main_phase(k, (run.get(k) or {}).get("cells") or [], cfg.node_ids,
                         skipped.get(k, ()))
              for k in ("latency", "bandwidth")]
    for k, p in zip(("latency", "bandwidth"), phases):
        setups = p.pop("setups")
        p.pop("setup_s")
        if run.get(k):
            run[k]["setups"] = setups
    run["plan"] = {"phases": phases,
                   "statement": statement, "sound_budget_s": 300 if statement else 30}
    run["status"] = {"complete": True, "phases": []}
    run["complete"] = True


def main_job_text(cfg, rc=0, wall=70.0, dmesg="", edit=None, files=None, drop=()):
    """What the main-job guest prints for a run that went right, then
    changed by `edit(run)` (a wrong run.json) or with other `files`, or
    without the report files named in `drop`."""
    run = {"schema": "numaprobe/1", "latency": main_matrix(cfg, "latency"),
           "bandwidth": main_matrix(cfg, "bandwidth"), "notes": [], "budget_s": 60,
           "elapsed_s": 59.5}
    main_plan(run, cfg)
    for key, _ in MAIN_EXTRAS:
        run[key] = main_extra(key)
    if edit:
        edit(run)
    if files is None:
        files = {"run.json": json.dumps(run), "latency.json": json.dumps(run["latency"]),
                 "summary.md": "# numaprobe report\n"}
        for key, name in MAIN_EXTRAS:
            if isinstance(run.get(key), dict) and run[key].get("result") is not None:
                files[name] = json.dumps(run[key]["result"])
        for name in drop:
            files.pop(name, None)
    out = [f"@@@ zoneinfo-before", "zone node 0 Normal free 1 min 1 low 1 high 1 managed 1",
           f"@@@ rc {rc}", f"@@@ wall 10.00 {10 + wall:.2f}", "@@@ stderr", "@@@ dmesg", dmesg]
    if files:
        out += ["@@@ report", report_b64(files)]
    return "\n".join(out + ["@@@ end", ""])


def interrupt_text(cfg, rc=130, sent="20.50", cells=1, fraction=1.0, run_complete=False,
                   with_run=True, stderr=""):
    lat = main_matrix(cfg, "latency", upto=cells, fraction=fraction, complete=False)
    run = {"schema": "numaprobe/1", "latency": lat, "bandwidth": None, "notes": [],
           "complete": run_complete}
    files = {"latency.json": json.dumps(lat), "topo.json": "{}"}
    if with_run:
        files.update({"run.json": json.dumps(run), "summary.md": "# numaprobe report\n"})
    return "\n".join([f"@@@ rc {rc}", f"@@@ sent {sent}", "@@@ exited 21.70", "@@@ stderr",
                      stderr, "@@@ report", report_b64(files), "@@@ end", ""])


def main_job_cases(cfg):
    """The main job's asserts: a run that went right passes, each way a main
    job can go wrong (OOM kill, budget overrun, a misplaced or missing
    cell, a failed cell, no report; no SIGINT handling) fails."""
    from mainjob import DEFAULT_BUDGET_S, DEFAULT_ALLOWANCE_S, options
    allowance = options(cfg, "main-job").get("allowance_s", DEFAULT_ALLOWANCE_S)
    over = DEFAULT_BUDGET_S + allowance + 1

    def r(text):
        return Result(text, "", 0)

    def setter(path, value):
        def edit(run):
            d = run
            for k in path[:-1]:
                d = d[k]
            d[path[-1]] = value
        return edit

    yield "main-job", "a run that went right", r(main_job_text(cfg)), "pass"
    yield "main-job", "elapsed within budget + allowance", r(main_job_text(
        cfg, wall=over + 30, edit=setter(["elapsed_s"], over - 1))), "pass"
    yield "main-job", "no elapsed_s", r(main_job_text(
        cfg, edit=lambda run: run.pop("elapsed_s"))), "fail"
    yield "main-job", "OOM-killed (exit 137, no run.json)", r(main_job_text(
        cfg, rc=137, files={"latency.json": "{}"},
        dmesg="Out of memory: Killed process 99 (numaprobe)")), "fail"
    yield "main-job", "an OOM kill in dmesg only", r(main_job_text(
        cfg, dmesg="numaprobe invoked oom-killer: gfp_mask=0x140dca")), "fail"
    yield "main-job", "elapsed_s over budget + allowance", r(main_job_text(
        cfg, wall=over + 2, edit=setter(["elapsed_s"], over))), "fail"
    yield "main-job", "elapsed_s longer than the wall time", r(main_job_text(
        cfg, wall=30, edit=setter(["elapsed_s"], 40))), "fail"
    yield "main-job", "budget_s not the default", r(main_job_text(
        cfg, edit=setter(["budget_s"], 30))), "fail"
    yield "main-job", "a misplaced latency cell", r(main_job_text(
        cfg, edit=setter(["latency", "cells", -1, "placement", "fraction_on_intended"], 0.98))), "fail"
    yield "main-job", "a bandwidth cell on another node's CPU", r(main_job_text(
        cfg, edit=setter(["bandwidth", "cells", 0, "cpus"], [cfg.cpu_ids[-1] + 1]))), "fail"
    yield "main-job", "a missing cell", r(main_job_text(
        cfg, edit=lambda run: run["bandwidth"]["cells"].pop())), "fail"

    def plan_skips(run, lat_drop, bw_none, declare, said="--budget 60s is too short"):
        """Leave out the last `lat_drop` latency cells (and the bandwidth
        matrix), declaring them in plan.phases[].skipped when `declare`,
        the plan saying so before measuring with `said`."""
        dropped = run["latency"]["cells"][len(run["latency"]["cells"]) - lat_drop:]
        del run["latency"]["cells"][len(run["latency"]["cells"]) - lat_drop:]
        skipped = {"latency": [(c["cpu_node"], c["mem_node"]) for c in dropped] if declare else []}
        if bw_none:
            skipped["bandwidth"] = [(c["cpu_node"], c["mem_node"])
                                    for c in run["bandwidth"]["cells"]] if declare else []
            run["bandwidth"] = None
        main_plan(run, cfg, statement=said, skipped=skipped)
    # How many cells the default budget holds is the host's speed: cells
    # left out pass when the run named them and said why.
    yield "main-job", "cells the plan skipped", r(main_job_text(
        cfg, edit=lambda run: plan_skips(run, 3, True, True))), "pass"

    def replanned(run, reason):
        """Bandwidth cut to its diagonal as the phase began."""
        p = run["plan"]["phases"][1]
        drop = run["bandwidth"]["cells"][-3:]
        del run["bandwidth"]["cells"][-3:]
        n = len(run["bandwidth"]["cells"])
        p.update(coverage="subset", reason=reason, planned_cells=n, measured_cells=n,
                 skipped=[[c["cpu_node"], c["mem_node"]] for c in drop])
        run["bandwidth"]["setups"] = [
            s for s in run["bandwidth"]["setups"]
            if any(c["mem_node"] == s["mem_node"] for c in run["bandwidth"]["cells"])]
    yield "main-job", "bandwidth re-planned when it began", r(main_job_text(
        cfg, edit=lambda run: replanned(run, "only the diagonal (re-planned when it began, "
                                             "with 3.0 s of the budget left)"))), "pass"
    yield "main-job", "bandwidth cut, neither said nor re-planned", r(main_job_text(
        cfg, edit=lambda run: replanned(run, "only the diagonal"))), "fail"
    yield "main-job", "bandwidth cut without a reason", r(main_job_text(
        cfg, edit=lambda run: replanned(run, None))), "fail"
    yield "main-job", "skipped cells not the rest of the matrix", r(main_job_text(
        cfg, edit=lambda run: (replanned(run, "x (re-planned when it began)"),
                               run["plan"]["phases"][1]["skipped"].pop()))), "fail"
    yield "main-job", "a statement naming no larger budget", r(main_job_text(
        cfg, edit=lambda run: (plan_skips(run, 3, True, True),
                               run["plan"].update(sound_budget_s=30)))), "fail"
    yield "main-job", "cells skipped, not said before measuring", r(main_job_text(
        cfg, edit=lambda run: plan_skips(run, 3, True, True, said=None))), "fail"
    yield "main-job", "fewer cells measured than the plan kept", r(main_job_text(
        cfg, edit=setter(["plan", "phases", 0, "planned_cells"], 10 ** 4))), "fail"
    yield "main-job", "a set-up per cell, not per memory node", r(main_job_text(
        cfg, edit=lambda run: run["latency"]["setups"].append(
            {"mem_node": cfg.node_ids[0], "seconds": 0.5}))), "fail"
    yield "main-job", "status disagrees with complete", r(main_job_text(
        cfg, edit=setter(["status", "complete"], False))), "fail"
    yield "main-job", "a phase interrupted in status", r(main_job_text(
        cfg, edit=setter(["status", "phases"], [
            {"phase": "cache sweep", "shortfall": "interrupted", "reason": "x"}]))), "fail"
    yield "main-job", "an extra phase partial by budget in status", r(main_job_text(
        cfg, edit=setter(["status", "phases"], [
            {"phase": "cache sweep", "shortfall": "budget", "reason": "its share"}]))), "pass"
    yield "main-job", "cells left out, not in the plan", r(main_job_text(
        cfg, edit=lambda run: plan_skips(run, 3, False, False))), "fail"
    yield "main-job", "bandwidth null, not in the plan", r(main_job_text(
        cfg, edit=lambda run: plan_skips(run, 0, True, False))), "fail"
    yield "main-job", "incomplete", r(main_job_text(
        cfg, edit=lambda run: (run.update(complete=False),
                               run["status"].update(complete=False)))), "fail"
    yield "main-job", "a failed cell listed", r(main_job_text(
        cfg, edit=setter(["latency", "failed"],
                         [{"cpu_node": 0, "mem_node": 1, "reason": "no memory"}]))), "fail"
    yield "main-job", "no report folder", r(main_job_text(cfg, files={})), "fail"
    yield "main-job", "c2c measured every pair, not one per domain", r(main_job_text(
        cfg, edit=lambda run: run["c2c"]["result"]["pairs"].extend(
            [{"a": 0, "b": 2, "domain": "same_package"},
             {"a": 2, "b": 0, "domain": "same_package"}]))), "fail"
    yield "main-job", "c2c without a domain summary", r(main_job_text(
        cfg, edit=setter(["c2c", "result", "domains"], []))), "fail"
    yield "main-job", "an extra phase skipped with a reason", r(main_job_text(
        cfg, edit=setter(["c2c"], main_extra("c2c", "skipped", "1 allowed CPU")))), "pass"
    yield "main-job", "an extra phase cut by the budget", r(main_job_text(
        cfg, edit=setter(["peak"], main_extra("peak", "partial", "its share was spent")))), "pass"
    yield "main-job", "an extra phase failed", r(main_job_text(
        cfg, edit=setter(["loaded_latency"],
                         main_extra("loaded_latency", "failed", "no memory")))), "fail"
    yield "main-job", "an extra phase skipped without a reason", r(main_job_text(
        cfg, edit=setter(["peak"], main_extra("peak", "skipped")))), "fail"
    yield "main-job", "an extra phase missing from run.json", r(main_job_text(
        cfg, edit=lambda run: run.pop("c2c"))), "fail"
    yield "main-job", "a measured extra phase without its file", r(main_job_text(
        cfg, drop=("loaded-latency.json",))), "fail"
    yield "main-job", "guest never ran it", r(""), "fail"

    import soundjob
    yield from soundjob.selftest_cases(cfg, main_job_text, setter)

    yield "main-job-interrupt", "stopped with a valid partial report", r(interrupt_text(cfg)), "pass"
    yield "main-job-interrupt", "killed by SIGINT (no handler)", r(interrupt_text(
        cfg, with_run=False)), "fail"
    yield "main-job-interrupt", "stopped, but failed before run.json", r(interrupt_text(
        cfg, with_run=False, stderr="numaprobe: error: cannot analyse the measured matrix")), "fail"
    yield "main-job-interrupt", "ran to the end", r(interrupt_text(cfg, rc=0)), "fail"
    yield "main-job-interrupt", "run.json says complete", r(interrupt_text(
        cfg, run_complete=True)), "fail"
    yield "main-job-interrupt", "a kept cell misplaced", r(interrupt_text(
        cfg, fraction=0.5)), "fail"
    yield "main-job-interrupt", "no cell kept", r(interrupt_text(cfg, cells=0)), "fail"
    yield "main-job-interrupt", "no cell before the end", r(interrupt_text(
        cfg, rc=0, sent="")), "fail"


def unit_test_text(names, results=None, summary=None, listed=None):
    """What the core-unit-tests guest prints for a run of `names`: results
    maps a name to its outcome (default ok); `listed` overrides the list
    (default: the names run and the ones the guest skips)."""
    results = results or {}
    if listed is None:
        listed = names + sorted(GUEST_SKIPS)
    out = [f"@@@ listed {n}: test" for n in listed]
    out += ["", f"running {len(names)} tests"]
    out += [f"test {n} ... {results.get(n, 'ok')}" for n in names]
    failed = sum(1 for n in names if results.get(n, "ok") == "FAILED")
    ignored = sum(1 for n in names if results.get(n) == "ignored")
    verdict = "FAILED" if failed else "ok"
    out += ["", summary or (f"test result: {verdict}. {len(names) - failed - ignored} passed; "
                            f"{failed} failed; {ignored} ignored; 0 measured; 0 filtered out; "
                            "finished in 1.00s")]
    return "\n".join(out) + "\n"


def unit_test_cases(cfg):
    names = ["placement::spec::tests::a", "timer::tests::b", "topology::tests::c"]
    r = Result
    yield "core-unit-tests", "all pass", r(unit_test_text(names), "", 0), "pass"
    yield "core-unit-tests", "one ignored by #[ignore]", r(unit_test_text(
        names, {names[1]: "ignored"}), "", 0), "pass"
    yield "core-unit-tests", "no binary", r("@@@ absent\n", "", 0), "skip"
    yield "core-unit-tests", "one failed", r(unit_test_text(
        names, {names[0]: "FAILED"}), "", 101), "fail"
    yield "core-unit-tests", "one listed, never ran", r(unit_test_text(
        names[:2], listed=names + sorted(GUEST_SKIPS)), "", 0), "fail"
    yield "core-unit-tests", "nothing listed", r(unit_test_text([], listed=[]), "", 0), "fail"
    if GUEST_SKIPS:
        yield "core-unit-tests", "a skipped test that no longer exists", r(
            unit_test_text(names, listed=names), "", 0), "fail"
    yield "core-unit-tests", "crashed before the summary", r(
        unit_test_text(names).rsplit("test result", 1)[0], "", 139), "fail"


LINE_TOML = """
name = "line"
smp = "3,sockets=3,cores=1,threads=1"
checks = ["sysfs-layout"]
links = [[0, 1], [1, 2]]
{extra}
[[node]]
id = 0
cpus = [0]
memory_mib = 64

[[node]]
id = 1
cpus = [1]
memory_mib = 64

[[node]]
id = 2
cpus = [2]
memory_mib = 64
"""


def config_cases():
    """A machine given by its links: the SLIT follows the hops, and a
    contradicting SLIT or an unreachable node is refused. (what, extra
    TOML, expected distances or None for refused)."""
    yield "line of three", "", [[10, 16, 22], [16, 10, 16], [22, 16, 10]]
    yield "8 per hop", "slit_per_hop = 8", [[10, 18, 26], [18, 10, 18], [26, 18, 10]]
    yield "agreeing SLIT", "distances = [[10, 16, 22], [16, 10, 16], [22, 16, 10]]", \
        [[10, 16, 22], [16, 10, 16], [22, 16, 10]]
    yield "contradicting SLIT", "distances = [[10, 16, 16], [16, 10, 16], [16, 16, 10]]", None
    yield "node 2 unreachable", "links = [[0, 1]]", None


def check_configs():
    import tempfile
    failures = 0
    for what, extra, want in config_cases():
        text = LINE_TOML.replace("{extra}", extra)
        if extra.startswith("links"):
            text = text.replace("links = [[0, 1], [1, 2]]\n", "")
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(text)
        try:
            got = Config(f.name).distances
        except SystemExit:
            got = None
        finally:
            os.unlink(f.name)
        if got != want:
            failures += 1
            print(f"selftest FAIL configuration '{what}': expected distances {want}, got {got}")
    return failures, len(list(config_cases()))


def failure_output_cases():
    """A failed test's own section is what the check prints of it."""
    out = ("test a::b ... FAILED\n\nfailures:\n\n---- a::b stdout ----\n"
           "thread 'a::b' panicked at src/x.rs:3:5:\nassertion failed: r.complete\n\n"
           "---- a::c stdout ----\nother\n\nfailures:\n    a::b\n")
    got = [failure_output(out, "a::b"), failure_output(out, "a::c"), failure_output(out, "a::d"),
           failure_output(out, "a::b", limit=10)]
    want = ["thread 'a::b' panicked at src/x.rs:3:5:\nassertion failed: r.complete", "other", "",
            "thread 'a: ..."]
    bad = [(g, w) for g, w in zip(got, want) if g != w]
    for g, w in bad:
        print(f"selftest FAIL failure_output: expected {w!r}, got {g!r}")
    return len(bad), len(want)


def main():
    failures, count = check_configs()
    f, c = failure_output_cases()
    failures, count = failures + f, count + c
    # Every machine as every architecture boots it (arm64's has no HMAT,
    # so the same description expects none there).
    for f in sorted(os.listdir(CONFIG_DIR)):
        if not f.endswith(".toml"):
            continue
        for arch in ARCHES.values():
            cfg = Config(os.path.join(CONFIG_DIR, f), arch)
            all_cases = list(cases(cfg)) + list(engine_cases(cfg)) + \
                list(main_job_cases(cfg)) + list(unit_test_cases(cfg))
            all_cases += list(tune_checks.selftest_cases(cfg, Result))
            all_cases += list(policy_checks.selftest_cases(cfg))
            all_cases += list(c2c_checks.selftest_cases(cfg))
            if "peak-dimms" in cfg.checks:
                all_cases += list(peak_checks.selftest_cases(cfg))
            all_cases += list(locks_checks.selftest_cases(cfg))
            all_cases += list(loaded_checks.selftest_cases(cfg))
            all_cases += list(sweep_checks.selftest_cases(cfg))
            if "interleave-check" in cfg.checks:
                all_cases += list(interleave_checks.selftest_cases(cfg))
            if "cgroup-footprint" in cfg.checks:
                all_cases += list(footprint_checks.selftest_cases(cfg))
            if "diff-check" in cfg.checks:
                import diffcheck
                all_cases += list(diffcheck.cases(cfg))
            for name, what, res, want in all_cases:
                count += 1
                got = outcome(name, cfg, res)
                if got != want:
                    failures += 1
                    print(f"selftest FAIL {cfg.name} ({arch.name})/{name} on '{what}': "
                          f"expected {want}, got {got}")
    print(f"selftest: {count - failures} of {count} host-side assert cases behave")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
