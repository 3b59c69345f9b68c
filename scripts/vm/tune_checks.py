"""tune's check: `numaprobe tune -- stream` on a multi-node guest,
where each candidate's memory must be where its policy says.

The program is the repository's STREAM-like OpenMP kernel
(crates/numaprobe/tests/data/stream.c), built on the host with
`gcc -O2 -fopenmp -static` (the initramfs has no libc) and copied into the
guest as /bin/stream (Check.files). The guest runs one round of every
candidate; the host asserts, from each run's peak numa_maps sample (the
program's anonymous memory per node):

- every candidate ran and exited 0, with at least one sample;
- compact/scatter/none got the CPUs their names promise (one node / one
  CPU per node / every CPU);
- local-bind: >= 99 % of the pages on the nodes of the candidate's CPUs;
- interleave: every node within INTERLEAVE_TOL of an even share;
- compact/first-touch: >= 95 % on the compact node (the threads' node);
- scatter/first-touch: each thread's node holds its static-schedule share
  (1/k within FIRST_TOUCH_TOL);
- weighted interleave, where the kernel has it (6.9+): the guest sets the
  first node's weight to WEIGHT_FIRST (the others 1) and each node must hold
  its weight's share within INTERLEAVE_TOL; on older kernels a skip note
  must name the kernel version.
Timings inside a TCG guest mean nothing: none is asserted.
"""

import json
import os
import subprocess

from checks import CHECKS, check

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(REPO, "crates", "numaprobe", "tests", "data", "stream.c")
BUILT = os.path.join(REPO, "target", "vm-cache", "tune", "stream")
# Interleave places pages round-robin: even up to a few pages plus the
# program's small non-array mappings (stack, heap metadata).
INTERLEAVE_TOL = 0.03
# With OpenMP's static schedule each thread first-touches its block of
# every array; the main thread's own small allocations sit on node 0.
FIRST_TOUCH_TOL = 0.15
# 2 Mi doubles = 16 MiB per array, 48 MiB in all, 3 iterations: well within
# a 512 MiB node, quick under TCG. 16 MiB is a whole number of 2 MiB pages in
# each half, so with transparent huge pages (Debian's kernels: `always`) both
# interleave and the scatter threads' first touch split evenly (stream.c
# aligns its arrays); with 2,000,000 doubles a huge page per array tipped
# the balance to 54/46.
DEFAULT_ARGS = ["2097152", "3"]


def stream_binary(cfg):
    """{guest path: host path}; builds the static kernel when it is missing
    or older than its source."""
    if not os.path.exists(BUILT) or os.path.getmtime(BUILT) < os.path.getmtime(SOURCE):
        os.makedirs(os.path.dirname(BUILT), exist_ok=True)
        subprocess.run(["gcc", "-O2", "-fopenmp", "-static", "-o", BUILT, SOURCE], check=True)
    return {"bin/stream": BUILT}


def options(cfg):
    return cfg.check_options.get("tune-placement", {})


def threads_of(cfg):
    return int(options(cfg).get("threads", 2))


# Weighted interleave's weights for the run where the kernel has them (6.9+):
# the first node weighs WEIGHT_FIRST, the others 1, so the check sees the
# weights honoured rather than an interleave by another name.
WEIGHT_FIRST = 3


def tune_guest(cfg):
    args = " ".join(options(cfg).get("args", DEFAULT_ARGS))
    first = cfg.nodes[0].id
    return f"""w=/sys/kernel/mm/mempolicy/weighted_interleave
if [ -d $w ]; then
    for f in $w/node*; do echo 1 > $f; done
    echo {WEIGHT_FIRST} > $w/node{first}
    for f in $w/node*; do echo "weight ${{f##*/node}} $(cat $f)" >&2; done
fi
numaprobe tune --runs 1 --threads {threads_of(cfg)} --format json -- /bin/stream {args}
rc=$?
if [ -d $w ]; then for f in $w/node*; do echo 1 > $f; done; fi
exit $rc
"""


def weights_of(stderr):
    """{node: weight} the guest set (lines `weight N W` on its stderr)."""
    out = {}
    for line in stderr.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "weight" and f[1].isdigit() and f[2].isdigit():
            out[int(f[1])] = int(f[2])
    return out


def node_of_cpu(cfg):
    return {c: n.id for n in cfg.nodes for c in n.cpus}


def fractions(run):
    """{node: share of the peak sample's anonymous bytes}."""
    anon = ((run or {}).get("memory_peak") or {}).get("anon") or []
    total = sum(n["bytes"] for n in anon)
    if total == 0:
        return {}
    return {n["node"]: n["bytes"] / total for n in anon}


def fmt(fr):
    return " ".join(f"N{n} {100 * f:.1f}%" for n, f in sorted(fr.items())) or "nothing"


@check("tune-placement", tune_guest, needs={"tune": ["--runs", "--threads"]}, files=stream_binary)
def tune_placement(cfg, res, t):
    if not t.eq(res.rc, 0, f"exit status of numaprobe tune (stderr: {res.stderr.strip()[:300]!r})"):
        return
    try:
        doc = json.loads(res.stdout)
    except ValueError as e:
        t.fail(f"tune did not print JSON ({e})")
        return
    t.eq(doc.get("schema"), "numaprobe/1", "schema")
    t.eq(doc.get("complete"), True, "complete")
    threads = threads_of(cfg)
    t.eq(doc.get("threads"), threads, "threads")
    cpu_node = node_of_cpu(cfg)
    mem_nodes = [n.id for n in cfg.nodes if n.memory_mib > 0]
    cands = doc.get("candidates") or []
    by_label = {c.get("label"): c for c in cands}
    want = [f"{b}/{m}" for b in ("compact", "scatter", "none")
            for m in ("first-touch", "local-bind", "interleave")]
    for label in want:
        t.true(label in by_label, f"candidate {label} missing (have {sorted(by_label)})")
    weighted = [c for c in cands if c.get("memory") == "weighted-interleave"]
    if not weighted:
        t.true(any("weighted" in s.get("label", "") and "6.9" in s.get("reason", "")
                   for s in doc.get("skipped") or []),
               "no weighted-interleave candidate and no skip note naming Linux 6.9")
    entries = (doc.get("rankings") or [{}])[0].get("entries") or []
    t.eq(len(entries), len(cands), "ranking entries")
    # One run a side is never beyond noise: no winner is named then, and
    # naming one is the error.
    top = [c for c in cands if c.get("rank") == 1]
    beyond = bool(top) and bool((top[0].get("vs_next") or {}).get("beyond_noise"))
    t.eq(bool(doc.get("winner")), beyond, "a winner named exactly when the fastest is beyond noise")
    for c in cands:
        label = c.get("label")
        runs = c.get("runs") or []
        if not t.true(runs and runs[0].get("ok"), f"{label}: did not run successfully "
                      f"({c.get('failure')})"):
            continue
        run = runs[0]
        t.true(run.get("memory_samples", 0) >= 1, f"{label}: no numa_maps sample")
        cpus = c.get("cpus") or []
        nodes_of_cpus = sorted({cpu_node.get(x) for x in cpus})
        binding, memory = c.get("binding"), c.get("memory")
        if binding == "compact":
            t.true(len(cpus) == threads and len(nodes_of_cpus) == 1,
                   f"{label}: CPUs {cpus} are not {threads} CPUs of one node")
        elif binding == "scatter":
            t.eq(len(nodes_of_cpus), min(threads, len(cfg.nodes)),
                 f"{label}: nodes of CPUs {cpus}")
        else:
            t.eq(sorted(cpus), sorted(cfg.cpu_ids), f"{label}: CPUs of the unbound candidate")
        fr = fractions(run)
        t.note(f"{label}: cpus {cpus} memory {fmt(fr)}")
        if not t.true(fr, f"{label}: no anonymous memory in the peak sample"):
            continue
        on = lambda ns: sum(fr.get(n, 0.0) for n in ns)  # noqa: E731
        pol = c.get("policy_nodes") or []
        if memory == "local-bind":
            t.eq(pol, nodes_of_cpus, f"{label}: policy nodes")
            t.true(on(pol) >= 0.99, f"{label}: {fmt(fr)}, not all on nodes {pol}")
        elif memory == "interleave":
            t.eq(pol, mem_nodes, f"{label}: policy nodes")
            even = 1.0 / len(mem_nodes)
            for n in mem_nodes:
                t.true(abs(fr.get(n, 0.0) - even) <= INTERLEAVE_TOL,
                       f"{label}: node {n} holds {100 * fr.get(n, 0.0):.1f}%, "
                       f"not {100 * even:.0f}% +- {100 * INTERLEAVE_TOL:.0f}")
        elif memory == "weighted-interleave":
            t.true(on(pol) >= 0.99, f"{label}: {fmt(fr)}, not on nodes {pol}")
            w = weights_of(res.stderr)
            total = sum(w.get(n, 0) for n in pol)
            if t.true(total > 0, f"{label}: the guest reported no weights for nodes {pol}"):
                for n in pol:
                    share = w.get(n, 0) / total
                    t.true(abs(fr.get(n, 0.0) - share) <= INTERLEAVE_TOL,
                           f"{label}: node {n} holds {100 * fr.get(n, 0.0):.1f}%, not its "
                           f"weight's {100 * share:.0f}% +- {100 * INTERLEAVE_TOL:.0f}")
        elif memory == "first-touch" and binding == "compact":
            t.true(on(nodes_of_cpus) >= 0.95,
                   f"{label}: {fmt(fr)}, not on its threads' node {nodes_of_cpus}")
        elif memory == "first-touch" and binding == "scatter":
            share = 1.0 / len(nodes_of_cpus)
            for n in nodes_of_cpus:
                t.true(abs(fr.get(n, 0.0) - share) <= FIRST_TOUCH_TOL,
                       f"{label}: node {n} holds {100 * fr.get(n, 0.0):.1f}%, "
                       f"not its threads' share {100 * share:.0f}%")


# --- selftest.py: a right and wrong answers for the configurations that run it

def _run(dist):
    total = 48 << 20
    return {"round": 0, "wall_s": 1.0, "exit_status": 0, "signal": None, "ok": True,
            "memory_samples": 3, "memory_last": None,
            "memory_peak": {"anon": [{"node": n, "bytes": int(total * f)} for n, f in dist.items()],
                            "all": []}}


def good_doc(cfg):
    threads = threads_of(cfg)
    n0 = cfg.nodes[0]
    compact = n0.cpus[:threads]
    scatter = [n.cpus[0] for n in cfg.nodes if n.cpus][:threads]
    node_of = node_of_cpu(cfg)
    mem = [n.id for n in cfg.nodes if n.memory_mib > 0]
    cands = []
    for b, cpus in (("compact", compact), ("scatter", scatter), ("none", cfg.cpu_ids)):
        nodes = sorted({node_of[c] for c in cpus})
        for m in ("first-touch", "local-bind", "interleave"):
            if m == "interleave":
                pol, dist = mem, {n: 1.0 / len(mem) for n in mem}
            else:
                pol = nodes if m == "local-bind" else []
                dist = {n: 1.0 / len(nodes) for n in nodes}
            cands.append({"label": f"{b}/{m}", "binding": b, "memory": m, "cpus": cpus,
                          "policy_nodes": pol, "runs": [_run(dist)], "failure": None})
    return {"schema": "numaprobe/1", "complete": True, "threads": threads,
            "candidates": cands,
            "skipped": [{"label": "*/weighted-interleave",
                         "reason": "this kernel has no weighted interleave (Linux 6.9+, ...)"}],
            "rankings": [{"entries": [{"label": c["label"]} for c in cands]}],
            "winner": None}


def selftest_cases(cfg, Result):
    if "tune-placement" not in cfg.checks:
        return
    name = "tune-placement"
    good = good_doc(cfg)
    yield name, "correct placement", Result(json.dumps(good), "", 0), "pass"
    yield name, "non-zero exit", Result(json.dumps(good), "boom", 1), "fail"
    bad = json.loads(json.dumps(good))
    c = next(c for c in bad["candidates"] if c["label"] == "compact/local-bind")
    c["runs"][0]["memory_peak"]["anon"].append({"node": cfg.nodes[-1].id, "bytes": 4 << 20})
    yield name, "bind leaks to another node", Result(json.dumps(bad), "", 0), "fail"
    bad = json.loads(json.dumps(good))
    c = next(c for c in bad["candidates"] if c["label"] == "scatter/interleave")
    c["runs"][0] = _run({cfg.nodes[0].id: 0.8, cfg.nodes[1].id: 0.2})
    yield name, "uneven interleave", Result(json.dumps(bad), "", 0), "fail"
    bad = json.loads(json.dumps(good))
    bad["candidates"][0]["cpus"] = [cfg.nodes[0].cpus[0], cfg.nodes[1].cpus[0]]
    yield name, "compact over two nodes", Result(json.dumps(bad), "", 0), "fail"
    bad = json.loads(json.dumps(good))
    bad["skipped"] = []
    yield name, "weighted neither run nor skipped", Result(json.dumps(bad), "", 0), "fail"
    bad = json.loads(json.dumps(good))
    bad["winner"] = {"label": "compact/first-touch"}
    yield name, "a winner from one run a side", Result(json.dumps(bad), "", 0), "fail"
    bad = json.loads(json.dumps(good))
    bad["candidates"][1]["runs"][0]["memory_samples"] = 0
    yield name, "no numa_maps sample", Result(json.dumps(bad), "", 0), "fail"
    # A 6.9+ kernel: weighted candidates run, weights 3:1 (two nodes).
    if len(cfg.nodes) == 2:
        n0, n1 = cfg.nodes[0].id, cfg.nodes[1].id
        weights = f"weight {n0} {WEIGHT_FIRST}\nweight {n1} 1\n"
        w = json.loads(json.dumps(good))
        w["skipped"] = []
        c = json.loads(json.dumps(next(c for c in w["candidates"]
                                       if c["label"] == "compact/interleave")))
        c.update(label="compact/weighted-interleave", memory="weighted-interleave")
        c["runs"] = [_run({n0: 0.75, n1: 0.25})]
        w["candidates"].append(c)
        w["rankings"][0]["entries"].append({"label": c["label"]})
        yield name, "weighted 3:1 honoured", Result(json.dumps(w), weights, 0), "pass"
        yield name, "weighted without weights", Result(json.dumps(w), "", 0), "fail"
        c["runs"] = [_run({n0: 0.5, n1: 0.5})]
        yield name, "weighted as plain interleave", Result(json.dumps(w), weights, 0), "fail"


# The OpenMP kernel is built by the host's gcc, which targets x86-64 only
# (no cross compiler is installed); on arm64 the check is reported as skipped.
CHECKS["tune-placement"].only_arches = ("x86_64",)
CHECKS["tune-placement"].only_why = "its OpenMP program is built by the host's x86-64 gcc"
