"""The main job on a node that holds several packages: run.json's
`interleave` lists exactly the nodes whose CPUs sit in two or more packages
(from the same document's topology), each sampled line by line (or skipped
with a reason), with a verdict and a statement that is also among the
run's notes. Under TCG the loads and the clock are emulated (one run gave
two modes 75 : 25 on both nodes, which the analysis reads as "unmatched",
not as interleaving), so which verdict is not asserted; that the check ran
and said so is.
"""

from checks import check
from guest_output import document, guest_script, printed, sections

RUN = "numaprobe run --budget 10s --report-dir /tmp/il-run --format json"
VERDICTS = ("too-few", "one-mode", "two-modes", "unmatched")


def interleave_guest(cfg):
    return guest_script("il", [("run", RUN)])


def multi_package_nodes(doc):
    """{node: packages} for nodes with allowed CPUs of two or more packages."""
    topo = doc.get("topology") or {}
    pkg = {c["os_index"]: c.get("package") for c in topo.get("cpus", [])
           if c.get("allowed") and c.get("package") is not None}
    out = {}
    for n in topo.get("numa_nodes", []):
        ps = sorted({pkg[c] for c in n.get("cpus", []) if c in pkg})
        if len(ps) > 1:
            out[n["os_index"]] = ps
    return out


@check("interleave-check", interleave_guest, needs={"run": ["--budget", "--report-dir"]})
def interleave_check(cfg, res, t):
    doc = document(t, sections(res.stdout).get("run"), RUN)
    if doc is None:
        return
    want = multi_package_nodes(doc)
    if cfg.arch.name == "x86_64":
        # QEMU's x86 CPUs report their sockets: each node holds two.
        t.eq(sorted(want), cfg.node_ids, "nodes holding several packages (from run.json's topology)")
    checks = doc.get("interleave")
    if not t.true(isinstance(checks, list), f"run.json has an interleave list ({checks!r})"):
        return
    t.eq(sorted(c.get("node") for c in checks), sorted(want), "nodes checked")
    notes = doc.get("notes") or []
    for c in checks:
        node = c.get("node")
        t.eq(c.get("packages"), want.get(node), f"node {node}: packages")
        v = (c.get("verdict") or {}).get("verdict")
        t.true(v in VERDICTS, f"node {node}: verdict {v!r}")
        if c.get("skipped") is None:
            t.true(v != "too-few", f"node {node}: sampled, yet too few samples ({c!r})")
        st = c.get("statement") or ""
        t.true(st.startswith(f"node {node} holds {len(want.get(node, []))} packages"),
               f"node {node}: statement {st!r}")
        t.true(st in notes, f"node {node}: statement among the run's notes")


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc():
    st = "node 0 holds 2 packages and its memory answers alike (4096 samples, one mode at 90.0 ns): uniform memory"
    st1 = "node 1 holds 2 packages and its memory answers in two modes: the firmware interleaves memory"
    return {
        "schema": "numaprobe/1", "complete": True, "notes": [st, st1],
        "topology": {
            "cpus": [{"os_index": i, "allowed": True, "package": i} for i in range(4)],
            "numa_nodes": [{"os_index": 0, "cpus": [0, 1]}, {"os_index": 1, "cpus": [2, 3]}],
        },
        "interleave": [{
            "node": 0, "packages": [0, 1], "cpu": 0, "skipped": None, "statement": st,
            "verdict": {"verdict": "one-mode", "median": 90.0, "samples": 4096},
        }, {
            "node": 1, "packages": [2, 3], "cpu": 2, "skipped": None, "statement": st1,
            "verdict": {"verdict": "two-modes", "near": 90.0, "far": 140.0, "samples": 4096},
        }],
    }


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    from checks import Result

    def r(doc):
        return Result(printed([("run", doc)]), "", 0)

    yield "interleave-check", "the node checked and said", r(good_doc()), "pass"
    d = good_doc()
    d["interleave"].pop()
    yield "interleave-check", "a node not checked", r(d), "fail"
    d = good_doc()
    d["notes"] = []
    yield "interleave-check", "the statement missing from the notes", r(d), "fail"
    d = good_doc()
    d["interleave"][0]["verdict"] = {"verdict": "too-few", "samples": 3}
    yield "interleave-check", "sampled yet too few samples", r(d), "fail"
    d = good_doc()
    d["interleave"][1]["packages"] = [2]
    yield "interleave-check", "packages not the topology's", r(d), "fail"
    d = good_doc()
    del d["interleave"]
    yield "interleave-check", "no interleave list", r(d), "fail"
