"""The main job on a node that holds several packages: run.json's
`interleave` lists exactly the nodes whose CPUs sit in two or more packages
(from the same document's topology), each sampled line by line (or skipped
with a reason), with a verdict and a statement that is also among the
run's notes. Under TCG the loads and the clock are emulated (one run gave
two modes 75 : 25 on both nodes, which the analysis reads as "unmatched",
not as interleaving), so which verdict is not asserted; that the check ran
and said so is.

How many of its samples are usable is the host's speed, not numaprobe's:
under TCG two reads of the emulated clock often give the same value, a load
timed as 0 ns, which the analysis drops, and a loaded host left 8 usable of
4,096. So the count is judged by what the run said: the statement names the
samples its verdict counted, and a verdict of too few says it is too few
to tell (the run must not call such a node uniform or interleaved).
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
        verdict = c.get("verdict") or {}
        v, k = verdict.get("verdict"), verdict.get("samples")
        t.true(v in VERDICTS, f"node {node}: verdict {v!r}")
        st = c.get("statement") or ""
        t.true(st.startswith(f"node {node} holds {len(want.get(node, []))} packages"),
               f"node {node}: statement {st!r}")
        t.true(st in notes, f"node {node}: statement among the run's notes")
        why = c.get("skipped")
        if why is not None:
            t.true(bool(why) and why in st, f"node {node}: not sampled; the statement says why "
                   f"({why!r}; {st!r})")
            t.note(f"node {node}: not sampled: {why}")
            continue
        if not t.true(isinstance(k, int) and k >= 0, f"node {node}: verdict without a sample "
                      f"count ({verdict!r})"):
            continue
        said = f"{k} latency sample(s) are too few" if v == "too-few" else f"{k} samples"
        t.true(said in st, f"node {node}: the statement does not say {said!r}, what its "
               f"verdict counted ({st!r})")
        t.note(f"node {node}: {v} from {k} usable samples")


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc():
    st = "node 0 holds 2 packages and its memory answers alike (4096 samples, one mode at 90.0 ns): uniform memory"
    st1 = ("node 1 holds 2 packages and its memory answers in two modes (50 % of 4096 samples at "
           "90.0 ns, the rest at 140.0 ns): the firmware interleaves memory")
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
    few = ("node 0 holds 2 packages; 8 latency sample(s) are too few (at least 32) to tell "
           "uniform from interleaved memory")
    d["interleave"][0].update(verdict={"verdict": "too-few", "samples": 8}, statement=few)
    d["notes"][0] = few
    yield "interleave-check", "too few usable samples, said so", r(d), "pass"
    d = good_doc()
    d["interleave"][0]["verdict"] = {"verdict": "too-few", "samples": 8}
    yield "interleave-check", "too few samples, called uniform", r(d), "fail"
    d = good_doc()
    d["interleave"][0]["verdict"]["samples"] = 4000
    yield "interleave-check", "statement and verdict count different samples", r(d), "fail"
    d = good_doc()
    why = "this architecture cannot flush a cache line from user space"
    st = f"node 0 holds 2 packages; uniform or interleaved memory not checked: {why}"
    d["interleave"][0].update(skipped=why, statement=st, verdict={"verdict": "too-few", "samples": 0})
    d["notes"][0] = st
    yield "interleave-check", "not sampled, said why", r(d), "pass"
    d = good_doc()
    d["interleave"][0].update(skipped=why, verdict={"verdict": "too-few", "samples": 0})
    yield "interleave-check", "not sampled, the statement does not say why", r(d), "fail"
    d = good_doc()
    d["interleave"][1]["packages"] = [2]
    yield "interleave-check", "packages not the topology's", r(d), "fail"
    d = good_doc()
    del d["interleave"]
    yield "interleave-check", "no interleave list", r(d), "fail"
