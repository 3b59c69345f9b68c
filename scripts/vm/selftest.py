#!/usr/bin/env python3
"""Self-test of the rig's host-side asserts, run by scripts/vm-test before any
boot (no VM, under a second): for every configuration, what a correct machine
would print must pass each check, and each kind of wrong answer (a missing
CPU-less node, a changed distance, a wrong HMAT value, a thread on the wrong
CPU, a wrong exit status) must fail it. Without this a check that compares
nothing would pass forever unnoticed.
"""

import copy
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import CHECKS, Result, Skip, T  # noqa: E402
from rig import CONFIG_DIR, Config  # noqa: E402

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


def matrix_doc(cfg, fraction=1.0):
    cpu_nodes = [n for n in cfg.nodes if n.cpus]
    return json.dumps({
        "schema": "numaprobe/1", "unit": "ns", "cpu_nodes": [n.id for n in cpu_nodes],
        "mem_nodes": cfg.node_ids, "complete": True,
        "cells": [{"cpu_node": n.id, "mem_node": m, "cpus": n.cpus[:1], "flagged": fraction < 0.99,
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
    ok = "".join(f"case {c} rc 2\nerr {c} numaprobe: error: no\n" for c in ("a", "b"))
    yield "engine-bad-input", "exit 2 each", Result(ok, "", 0), "pass"
    yield "engine-bad-input", "OOM kill", Result(ok.replace("rc 2", "rc 137", 1), "", 0), "fail"
    yield "study-presets", "placed", Result(study_text(cfg), "", 0), "pass"
    yield "study-presets", "cpu not verified", Result(study_text(cfg, False), "", 0), "fail"


def main():
    failures = 0
    count = 0
    for f in sorted(os.listdir(CONFIG_DIR)):
        if not f.endswith(".toml"):
            continue
        cfg = Config(os.path.join(CONFIG_DIR, f))
        for name, what, res, want in list(cases(cfg)) + list(engine_cases(cfg)):
            count += 1
            got = outcome(name, cfg, res)
            if got != want:
                failures += 1
                print(f"selftest FAIL {cfg.name}/{name} on '{what}': expected {want}, got {got}")
    print(f"selftest: {count - failures} of {count} host-side assert cases behave")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
