"""`numaprobe check` and `numaprobe diff` on a real multi-node kernel.

diff-check saves the VM's topology with `numaprobe topo -o`, then checks the
machine against it twice: as is (must match, exit 0) and from a process that
`taskset` confines to CPU 0 (the allowed CPUs differ: exit 1, the difference
named on one line). It then measures the latency matrix twice and diffs the two
files: timings inside a TCG guest mean nothing, so only what holds whatever the
noise is asserted (exit 0 or 1 matching `summary.equal`, one compared cell per
(CPU node, memory node) with both sides measured and a p-value in [0, 1]).
"""

import json

from checks import check
from mainjob import sections

GUEST = r"""
numaprobe topo -o /tmp/t.json >/dev/null 2>/tmp/topo.err
echo "@@@ topo $?"
numaprobe check --expect /tmp/t.json >/tmp/c1.out 2>&1
echo "@@@ same $?"
taskset -c 0 numaprobe check --expect /tmp/t.json >/tmp/c2.out 2>/dev/null
echo "@@@ confined $?"
cat /tmp/c2.out
numaprobe latency --size 16MiB --time-budget 0.3s -o /tmp/a.json >/dev/null 2>&1
echo "@@@ lat_a $?"
numaprobe latency --size 16MiB --time-budget 0.3s -o /tmp/b.json >/dev/null 2>&1
echo "@@@ lat_b $?"
numaprobe diff /tmp/a.json /tmp/b.json --format json >/tmp/d.json 2>/dev/null
echo "@@@ diff $?"
cat /tmp/d.json
echo "@@@ end"
"""


def expected_confined_line(cfg):
    """The line `check` must print when only CPU 0 is allowed."""
    full = ",".join(str(c) for c in cfg.cpu_ids)
    # The kernel's list form: a run of consecutive CPUs is a range.
    if cfg.cpu_ids == list(range(len(cfg.cpu_ids))) and len(cfg.cpu_ids) > 1:
        full = f"0-{len(cfg.cpu_ids) - 1}"
    return f"allowed: allowed CPUs: expected {full}, found 0"


@check("diff-check", lambda cfg: GUEST, needs={"check": ["--expect"], "diff": ["--format"]})
def diff_check(cfg, res, t):
    secs = sections(res.stdout)
    rc = lambda name: int(secs[name][0][0]) if name in secs and secs[name][0] else None  # noqa: E731
    t.eq(rc("topo"), 0, "exit status of numaprobe topo -o /tmp/t.json")
    t.eq(rc("same"), 0, "exit status of check against the machine's own topology")
    t.eq(rc("confined"), 1, "exit status of check from a process confined to CPU 0")
    lines = secs.get("confined", ([], []))[1]
    want = expected_confined_line(cfg)
    t.true(want in lines, f"confined check should print {want!r}; printed {lines!r}")
    t.eq(rc("lat_a"), 0, "exit status of the first latency run")
    t.eq(rc("lat_b"), 0, "exit status of the second latency run")
    code = rc("diff")
    t.true(code in (0, 1), f"diff of two runs exits 0 or 1, got {code}")
    try:
        doc = json.loads("\n".join(secs.get("diff", ([], []))[1]))
    except ValueError as e:
        t.fail(f"diff --format json did not print JSON ({e})")
        return
    t.eq(doc.get("schema"), "numaprobe/1", "diff: schema")
    t.eq(doc.get("summary", {}).get("equal"), code == 0, "diff: summary.equal matches the exit status")
    cpu_nodes = [n.id for n in cfg.nodes if n.cpus]
    want_cells = sorted((i, j) for i in cpu_nodes for j in cfg.node_ids)
    cells = doc.get("cells") or []
    got = sorted((c.get("cpu_node"), c.get("mem_node")) for c in cells)
    t.eq(got, want_cells, "diff: one compared cell per (CPU node, memory node)")
    for c in cells:
        where = f"cell {c.get('cpu_node')}->{c.get('mem_node')}"
        t.true(c.get("a") and c.get("b"), f"{where}: measured in both runs")
        p = c.get("p_value")
        t.true(isinstance(p, (int, float)) and 0 <= p <= 1, f"{where}: p_value {p!r} in [0, 1]")


def cases(cfg):
    """(check, description, result, expected outcome) for selftest.py."""
    from checks import Result

    cpu_nodes = [n.id for n in cfg.nodes if n.cpus]
    cells = [{"cpu_node": i, "mem_node": j, "a": {"median": 90.0}, "b": {"median": 91.0},
              "p_value": 0.4, "verdict": "unchanged"} for i in cpu_nodes for j in cfg.node_ids]

    def text(confined=1, line=None, diff_rc=0, equal=True, drop=0):
        doc = {"schema": "numaprobe/1", "summary": {"equal": equal},
               "cells": cells[:len(cells) - drop]}
        return "".join([
            "@@@ topo 0\n", "@@@ same 0\n", f"@@@ confined {confined}\n",
            (line if line is not None else expected_confined_line(cfg)) + "\n",
            "@@@ lat_a 0\n", "@@@ lat_b 0\n", f"@@@ diff {diff_rc}\n",
            json.dumps(doc) + "\n", "@@@ end\n",
        ])

    yield "diff-check", "a machine that behaves", Result(text(), "", 0), "pass"
    yield "diff-check", "runs that differ (exit 1, equal false)", Result(
        text(diff_rc=1, equal=False), "", 0), "pass"
    yield "diff-check", "confined check exits 0", Result(text(confined=0), "", 0), "fail"
    yield "diff-check", "confined check names nothing", Result(text(line=""), "", 0), "fail"
    yield "diff-check", "exit status and summary disagree", Result(text(diff_rc=1), "", 0), "fail"
    yield "diff-check", "a cell missing", Result(text(drop=1), "", 0), "fail"
