"""`--cpus` and `latency --sweep` on a multi-node kernel: the
measuring CPU a user chooses is the one that measures, from its own node's
row, and the memory is where the command says.

  latency --cpus C     C = the second CPU of node 1: the document has one row
                       (node 1, since no --cpu-nodes is given the rows are the
                       nodes of the listed CPUs), every cell's `cpus` is [C],
                       every cell's pages are on its memory node, and a note
                       says which CPUs were chosen
  bandwidth --cpus C   one thread, on C, every cell's pages on its node
  latency --sweep      with --cpus C: the chase ran on C (node 1), local
                       memory (node 1), every point measured, the buffer on
                       node 1
  bad input            a CPU that does not exist, a reversed range: exit 2
                       and one line

Timings inside TCG mean nothing and are not looked at.
"""

from checks import check
from guest_output import bad_input, document, guest_script, printed, sections

COMMON = "--size 4MiB --pages 4k --time-budget 20ms --format json"
BAD = {
    "bad-cpu": "numaprobe latency --cpus 999",
    "bad-range": "numaprobe latency --sweep 1G-4K",
}


def chosen_cpu(cfg):
    """The second CPU of node 1 (the first if it has one): not what the
    default (the node's first core) would pick."""
    cpus = cfg.node(1).cpus
    return cpus[1] if len(cpus) > 1 else cpus[0]


def sweep_guest(cfg):
    c = chosen_cpu(cfg)
    return guest_script("s", [
        ("latency", f"numaprobe latency --cpus {c} {COMMON}"),
        ("bandwidth", f"numaprobe bandwidth --cpus {c} {COMMON}"),
        ("sweep", f"numaprobe latency --sweep 4K-64K --sweep-points 1 --pages 4k "
                  f"--time-budget 10ms --cpus {c} --format json"),
        *BAD.items(),
    ])


def check_matrix(cfg, t, doc, c, what):
    t.eq(doc.get("cpu_nodes"), [1], f"{what}: rows (the node of CPU {c})")
    cells = doc.get("cells") or []
    mem = [n.id for n in cfg.nodes]
    t.eq(sorted(x.get("mem_node") for x in cells), mem, f"{what}: one cell per memory node")
    for x in cells:
        where = f"{what} cell 1->{x.get('mem_node')}"
        t.eq(x.get("cpu_node"), 1, f"{where}: cpu_node")
        t.eq(x.get("cpus"), [c], f"{where}: measuring CPUs")
        t.eq((x.get("placement") or {}).get("fraction_on_intended"), 1.0,
             f"{where}: pages on node {x.get('mem_node')}")
    t.true(any("measuring CPUs chosen with --cpus" in n for n in doc.get("notes") or []),
           f"{what}: no note says which CPUs were chosen: {doc.get('notes')!r}")


@check("cpus-placement", sweep_guest,
       needs={"latency": ["--cpus", "--sweep", "--sweep-points", "--size", "--pages",
                          "--time-budget", "--format"],
              "bandwidth": ["--cpus"]})
def cpus_placement(cfg, res, t):
    secs = sections(res.stdout)
    c = chosen_cpu(cfg)
    doc = document(t, secs.get("latency"), f"latency --cpus {c}", complete=True)
    if doc is not None:
        check_matrix(cfg, t, doc, c, f"latency --cpus {c}")
    doc = document(t, secs.get("bandwidth"), f"bandwidth --cpus {c}", complete=True)
    if doc is not None:
        check_matrix(cfg, t, doc, c, f"bandwidth --cpus {c}")
    doc = document(t, secs.get("sweep"), f"latency --sweep --cpus {c}", complete=True)
    if doc is not None:
        what = "latency --sweep"
        t.eq(doc.get("command"), "latency-sweep", f"{what}: command")
        t.eq(doc.get("cpu"), c, f"{what}: the CPU that chased")
        t.eq(doc.get("cpu_node"), 1, f"{what}: cpu_node")
        t.eq(doc.get("mem_node"), 1, f"{what}: mem_node (local by default)")
        t.eq(len(doc.get("points") or []), len(doc.get("sizes") or [None]),
             f"{what}: one point per size")
        t.eq([p.get("fraction_on_node") for p in doc.get("placement") or []], [1.0],
             f"{what}: buffer on node 1")
    bad_input(t, secs, BAD)


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good(cfg):
    c = chosen_cpu(cfg)
    mem = [n.id for n in cfg.nodes]
    note = [f"measuring CPUs chosen with --cpus (node 1: CPU {c})"]

    def matrix():
        return {"schema": "numaprobe/1", "complete": True, "cpu_nodes": [1], "notes": note,
                "cells": [{"cpu_node": 1, "mem_node": m, "cpus": [c],
                           "placement": {"fraction_on_intended": 1.0}} for m in mem]}

    sweep = {"schema": "numaprobe/1", "complete": True, "command": "latency-sweep",
             "cpu": c, "cpu_node": 1, "mem_node": 1, "sizes": [4096, 8192],
             "points": [{}, {}], "placement": [{"fraction_on_node": 1.0}]}
    return {"latency": matrix(), "bandwidth": matrix(), "sweep": sweep}


def guest_text(docs, bad_rc=2):
    return printed(docs.items(), BAD, bad_rc=bad_rc)


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    if "cpus-placement" not in cfg.checks:
        return
    from checks import Result

    def r(docs, **kw):
        return Result(guest_text(docs, **kw), "", 0)

    yield "cpus-placement", "correct machine", r(good(cfg)), "pass"
    bad = good(cfg)
    for x in bad["latency"]["cells"]:
        x["cpus"] = [cfg.node(1).cpus[0]]
    if chosen_cpu(cfg) != cfg.node(1).cpus[0]:
        yield "cpus-placement", "latency measured from the node's first CPU", r(bad), "fail"
    bad = good(cfg)
    bad["bandwidth"]["cpu_nodes"] = [0, 1]
    yield "cpus-placement", "rows beyond the chosen CPU's node", r(bad), "fail"
    bad = good(cfg)
    bad["sweep"]["placement"][0]["fraction_on_node"] = 0.5
    yield "cpus-placement", "sweep buffer half elsewhere", r(bad), "fail"
    yield "cpus-placement", "bad input exit 1", r(good(cfg), bad_rc=1), "fail"
