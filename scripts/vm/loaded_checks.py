"""`numaprobe loaded-latency`'s placement check, on a multi-node
guest: the chase thread and the load threads on the CPUs of the CPU node,
every buffer on the memory node (move_pages inside the VM), a CPU-less
memory node measurable as a target.

The guest runs three things, quick (4 MiB per thread, one delay, 30 ms per
point):

- default pairs: the first CPU node's local memory and its worst remote by
  SLIT (the highest node number among equal distances), which the host
  derives from the configuration's distances;
- the first CPU node against every CPU-less node (`--pairs`);
- bad input (a mix that does not parse, a delay out of range): one line,
  exit 2, nothing on stdout.

Asserted per curve: placement >= 0.99; the chase CPU on the CPU node; the
load CPUs exactly the node's other CPUs (no SMT siblings in these VMs), so
a one-CPU node has none and its curve is the idle point alone; idle first;
every point's bandwidth positive. Timings inside TCG mean nothing and are
not compared.
"""

from checks import check
from guest_output import bad_input, document, guest_script, printed, sections, skip_if_not_built

COMMON = "--size 4MiB --pages 4k --delays 0 --time-budget 30ms --format json"
BAD = {
    "bad-mix": "numaprobe loaded-latency --mix fastest",
    "bad-delay": "numaprobe loaded-latency --delays 99999999",
}
PLACED = 0.99


def cpu_nodes(cfg):
    return [n.id for n in cfg.nodes if n.cpus]


def cpuless_nodes(cfg):
    return [n.id for n in cfg.nodes if not n.cpus]


def worst_remote(cfg, c):
    """The memory node farthest from `c` by SLIT, highest id among equals."""
    row = cfg.distances[cfg.node_ids.index(c)]
    others = [(row[i], n) for i, n in enumerate(cfg.node_ids) if n != c]
    return max(others)[1] if others else None


def expected_pairs(cfg):
    c = cpu_nodes(cfg)[0]
    w = worst_remote(cfg, c)
    return [(c, c)] + ([(c, w)] if w is not None else [])


def loaded_guest(cfg):
    runs = [("default", f"numaprobe loaded-latency {COMMON}")]
    cl = cpuless_nodes(cfg)
    if cl:
        c = cpu_nodes(cfg)[0]
        pairs = ",".join(f"{c}:{m}" for m in cl)
        runs.append(("cpuless", f"numaprobe loaded-latency --pairs {pairs} {COMMON}"))
    return guest_script("l", runs + list(BAD.items()))


def check_doc(cfg, t, sec, want_pairs, what):
    doc = document(t, sec, what, complete=True)
    if doc is None:
        return
    curves = doc.get("curves") or []
    t.eq([(c.get("cpu_node"), c.get("mem_node")) for c in curves], want_pairs, f"{what}: curves")
    for c in curves:
        where = f"{what} {c.get('cpu_node')}->{c.get('mem_node')}"
        node = cfg.node(c.get("cpu_node"))
        if node is None:
            t.fail(f"{where}: CPU node is not in the configuration")
            continue
        t.true((c.get("placement") or 0) >= PLACED,
               f"{where}: placement {c.get('placement')} < {PLACED}")
        chase = c.get("chase_cpu")
        t.true(chase in node.cpus, f"{where}: chase CPU {chase} is not on node {node.id} {node.cpus}")
        t.eq(c.get("load_cpus"), [x for x in node.cpus if x != chase],
             f"{where}: load CPUs (the node's other CPUs)")
        pts = c.get("points") or []
        n = 2 if c.get("load_cpus") else 1
        t.eq(len(pts), n, f"{where}: points (idle{' and delay 0' if n == 2 else ' alone'})")
        if pts:
            t.true(pts[0].get("delay") is None, f"{where}: idle point first, got {pts[0]}")
        for p in pts:
            g = p.get("bandwidth_gbs")
            t.true(isinstance(g, (int, float)) and g > 0, f"{where}: bandwidth {g!r} not positive")


@check("loaded-placement", loaded_guest,
       needs={"loaded-latency": ["--size", "--pages", "--delays", "--time-budget", "--format",
                                 "--pairs", "--mix"]})
def loaded_placement(cfg, res, t):
    secs = sections(res.stdout)
    main = secs.get("default")
    skip_if_not_built(t, main, "loaded-latency", "loaded")
    check_doc(cfg, t, main, expected_pairs(cfg), "loaded-latency")
    cl = cpuless_nodes(cfg)
    if cl:
        c = cpu_nodes(cfg)[0]
        check_doc(cfg, t, secs.get("cpuless"), [(c, m) for m in cl], "loaded-latency CPU-less")
    bad_input(t, secs, BAD, quiet_stdout=True)


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc(cfg, pairs):
    def curve(c, m):
        node = cfg.node(c)
        chase = node.cpus[0]
        load = node.cpus[1:]
        pts = [{"delay": None, "bandwidth_gbs": 0.5}]
        if load:
            pts.append({"delay": 0, "bandwidth_gbs": 3.0})
        return {"cpu_node": c, "mem_node": m, "chase_cpu": chase, "load_cpus": load,
                "placement": 1.0, "points": pts}

    return {"schema": "numaprobe/1", "complete": True,
            "curves": [curve(c, m) for c, m in pairs]}


def guest_text(cfg, main, side=None, bad_rc=2):
    docs = [("default", main)] + ([("cpuless", side)] if side is not None else [])
    return printed(docs, BAD, bad_rc=bad_rc)


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    from checks import Result
    import copy
    cl = cpuless_nodes(cfg)
    c = cpu_nodes(cfg)[0]
    side = good_doc(cfg, [(c, m) for m in cl]) if cl else None
    good = good_doc(cfg, expected_pairs(cfg))

    def r(main, **kw):
        return Result(guest_text(cfg, main, side, **kw), "", 0)

    yield "loaded-placement", "correct machine", r(good), "pass"
    bad = copy.deepcopy(good)
    bad["curves"][-1]["placement"] = 0.9
    yield "loaded-placement", "buffer off its node", r(bad), "fail"
    bad = copy.deepcopy(good)
    bad["curves"][0]["chase_cpu"] = 999
    yield "loaded-placement", "chase on a foreign CPU", r(bad), "fail"
    bad = copy.deepcopy(good)
    bad["curves"] = bad["curves"][:1]
    if len(good["curves"]) > 1:
        yield "loaded-placement", "worst remote missing", r(bad), "fail"
    yield "loaded-placement", "bad input accepted", r(good, bad_rc=0), "fail"
    if side is not None:
        bad_side = copy.deepcopy(side)
        bad_side["curves"] = []
        yield "loaded-placement", "CPU-less node not measured", \
            Result(guest_text(cfg, good, bad_side), "", 0), "fail"
    yield "loaded-placement", "not built", \
        Result("@@@ default rc 1\n\n@@@err numaprobe: error: loaded-latency is not built yet\n",
               "", 0), "skip"
