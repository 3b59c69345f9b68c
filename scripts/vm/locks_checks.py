"""`numaprobe c2c --locks` on a multi-node kernel: the placement
strategies put their threads where they say, as the topology of the machine
the configuration describes has them:

  same_node   every thread on one node's CPUs
  cross_node  two threads already on two nodes; every thread on a CPU of the
              node the document names for it
  counters    on the first thread's node where move_pages could tell

and the document parses with every run measured (a lost update fails a run,
so `failed` must be empty). Bad input (an unknown op) is one line and exit 2.
Timings inside TCG mean nothing and are not looked at.
"""

from checks import check, not_built, parse_json
from guest_output import SectionResult, guest_script, printed, sections

COMMON = "--locks-time 20ms --ops atomic_add,spin_lock --sharing shared --format json"


def locks_guest(cfg):
    return guest_script("l", [
        ("main", f"numaprobe c2c --locks --placement same_node,cross_node {COMMON}"),
        ("bad", "numaprobe c2c --locks --ops cas"),
    ])


@check("locks-placement", locks_guest,
       needs={"c2c": ["--locks", "--placement", "--ops", "--sharing", "--locks-time"]})
def locks_placement(cfg, res, t):
    secs = sections(res.stdout)
    main = secs.get("main")
    if main is None:
        t.fail("c2c --locks: did not run")
        return
    if not_built(SectionResult(main)):
        t.skip("`numaprobe c2c --locks` is not built yet (branch locks)")
    doc = parse_json(t, SectionResult(main), "c2c --locks")
    if doc is not None:
        t.eq(doc.get("complete"), True, "c2c --locks: complete")
        t.eq(doc.get("failed"), [], "c2c --locks: failed runs (lost updates?)")
        t.true(doc.get("atomics") in ("x86 lock", "lse", "load/store exclusive"),
               f"c2c --locks: atomics {doc.get('atomics')!r}")
        runs = doc.get("runs") or []
        seen = {r.get("placement") for r in runs}
        for p in ("same_node", "cross_node"):
            t.true(p in seen, f"c2c --locks: no {p} run (placements {sorted(seen)})")
        for r in runs:
            lbl = f"{r.get('op')} {r.get('placement')} {r.get('threads')} threads"
            cpus, nodes = r.get("cpus") or [], r.get("nodes") or []
            t.eq(len(cpus), r.get("threads"), f"{lbl}: one CPU per thread")
            t.eq(len(nodes), len(cpus), f"{lbl}: a node per CPU")
            for c, n in zip(cpus, nodes):
                t.true(n in cfg.node_ids and c in cfg.node(n).cpus,
                       f"{lbl}: CPU {c} is not a CPU of node {n}")
            if r.get("placement") == "same_node":
                t.eq(len(set(nodes)), 1, f"{lbl}: threads on one node ({nodes})")
            if r.get("placement") == "cross_node":
                t.true(len(nodes) >= 2 and nodes[0] != nodes[1],
                       f"{lbl}: the first two threads on two nodes ({nodes})")
            if r.get("memory_node") is not None and nodes:
                t.eq(r["memory_node"], nodes[0], f"{lbl}: counters on the first thread's node")
            t.true((r.get("ops_per_s") or 0) > 0, f"{lbl}: ops_per_s")
    bad = secs.get("bad")
    if bad is None:
        t.fail("c2c --locks --ops cas: did not run")
        return
    t.eq(bad["rc"], 2, "c2c --locks --ops cas: exit status")
    t.true(len(bad["err"]) == 1 and bad["err"][0].startswith("numaprobe: error:"),
           f"c2c --locks --ops cas: expected one error line, got {bad['err']!r}")


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc(cfg):
    cpu_nodes = [n for n in cfg.nodes if n.cpus]
    runs = []
    if len(cpu_nodes[0].cpus) >= 2:
        c = cpu_nodes[0].cpus[:2]
        runs.append({"op": "atomic_add", "placement": "same_node", "threads": 2, "cpus": c,
                     "nodes": [cpu_nodes[0].id] * 2, "memory_node": cpu_nodes[0].id,
                     "ops_per_s": 1e7})
    if len(cpu_nodes) >= 2:
        c = [cpu_nodes[0].cpus[0], cpu_nodes[1].cpus[0]]
        runs.append({"op": "atomic_add", "placement": "cross_node", "threads": 2, "cpus": c,
                     "nodes": [cpu_nodes[0].id, cpu_nodes[1].id],
                     "memory_node": cpu_nodes[0].id, "ops_per_s": 1e7})
    return {"schema": "numaprobe/1", "atomics": "x86 lock", "complete": True, "failed": [],
            "runs": runs}


def guest_text(doc, bad_rc=2):
    return printed([("main", doc)], ["bad"], bad_rc=bad_rc,
                   error=lambda tag: "--ops: invalid value 'cas'")


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    import copy
    from checks import Result
    if "locks-placement" not in cfg.checks:
        return
    good = good_doc(cfg)
    yield "locks-placement", "correct machine", Result(guest_text(good), "", 0), "pass"
    bad = copy.deepcopy(good)
    bad["runs"][-1]["nodes"] = [bad["runs"][-1]["nodes"][0]] * 2
    yield "locks-placement", "cross_node threads on one node", Result(guest_text(bad), "", 0), "fail"
    bad = copy.deepcopy(good)
    bad["failed"] = [{"reason": "lost updates"}]
    yield "locks-placement", "a lost update", Result(guest_text(bad), "", 0), "fail"
    yield "locks-placement", "bad input accepted", Result(guest_text(good, bad_rc=0), "", 0), "fail"
