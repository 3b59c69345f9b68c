"""`numaprobe policy` on a multi-node kernel: each memory policy's
page distribution, as move_pages reported it inside the VM, must be what the
policy promises, on the machine the configuration describes:

  first-touch  each thread's pages on its own node (pages x threads of the node)
  serial       every page on the chosen node (one thread initialised it all)
  preferred    every page on the chosen node
  interleave   every allowed memory node within one page per buffer of an
               even share (mbind interleaves page by page within a range)
  weighted     within rounding of the kernel's weights (one page per buffer
               times the largest weight) where the kernel has
               MPOL_WEIGHTED_INTERLEAVE (Linux 6.9+); on an older kernel the
               document must say it was skipped and why, and the check notes
               that message (Debian 12's 6.1 has none)
  unpinned     no promise: every page present, nothing more

A machine with a CPU-less node also runs serial and preferred with --node set
to it: preferred puts everything there, serial is skipped with a reason (no
thread can initialise from a node without CPUs). Bad input (a node that does
not exist, zero threads, an unknown policy) must be one line and exit 2.
Timings inside TCG mean nothing and are not looked at.
"""

from checks import check
from guest_output import bad_input, document, guest_script, printed, sections, skip_if_not_built

SIZE = "16MiB"
COMMON = f"--size {SIZE} --rounds 1 --sample-time 5ms --format json"
BAD = {
    "bad-node": "numaprobe policy --node 99",
    "bad-threads": "numaprobe policy --threads 0",
    "bad-policy": "numaprobe policy --policies fastest",
}


def cpuless_nodes(cfg):
    return [n.id for n in cfg.nodes if not n.cpus]


def policy_guest(cfg):
    runs = [("main", f"numaprobe policy {COMMON}")]
    cl = cpuless_nodes(cfg)
    if cl:
        runs.append(("cpuless", f"numaprobe policy --node {cl[0]} --policies serial,preferred "
                                f"--cases independent {COMMON}"))
    return guest_script("p", runs + list(BAD.items()))


def per_node(d):
    return {int(k): v for k, v in (d.get("per_node") or {}).items()}


def check_policy(cfg, t, doc, case, p, what):
    """Assert one policy's distribution against its promise."""
    name = p.get("policy")
    where = f"{what} {case} {name}"
    params = doc.get("parameters") or {}
    mem_nodes = params.get("mem_nodes") or []
    if p.get("skipped"):
        if name == "weighted":
            t.true("weighted interleave skipped" in p["skipped"],
                   f"{where}: skip reason should say weighted interleave was skipped: {p['skipped']!r}")
            t.note(f"{case} weighted: {p['skipped']}")
        elif name == "serial" and params.get("node") in cpuless_nodes(cfg):
            t.true("has no CPU" in p["skipped"], f"{where}: skip reason {p['skipped']!r}")
        else:
            t.fail(f"{where}: skipped ({p['skipped']})")
        return
    if p.get("failures"):
        t.fail(f"{where}: failures {p['failures']!r}")
        return
    d = p.get("placement") or {}
    pages, buffers, got = d.get("pages", 0), d.get("buffers", 0), per_node(d)
    t.true(pages > 0, f"{where}: no pages counted")
    t.eq(d.get("not_present"), 0, f"{where}: pages not present")
    t.eq(sum(got.values()), pages, f"{where}: pages on nodes vs pages queried")
    node = params.get("node")
    threads = params.get("threads") or []
    if name in ("serial", "preferred"):
        t.eq(got, {node: pages}, f"{where}: every page on node {node}")
    elif name == "first-touch":
        want = {}
        for th in threads:
            want[th["node"]] = want.get(th["node"], 0) + pages // len(threads)
        t.eq(got, want, f"{where}: each thread's pages on its node")
    elif name == "interleave":
        even = pages / len(mem_nodes)
        for n in mem_nodes:
            t.true(abs(got.get(n, 0) - even) <= buffers,
                   f"{where}: node {n} has {got.get(n, 0)} pages, even is {even:.1f} "
                   f"(within {buffers}, one page per buffer); all {got}")
        t.eq(sorted(got), sorted(mem_nodes), f"{where}: nodes holding pages")
    elif name == "weighted":
        weights = {w["node"]: w["weight"] for w in (doc.get("weights") or {}).get("kernel") or []}
        t.note(f"{case} weighted ran: pages per node {got} for kernel weights {weights}")
        total = sum(weights.get(n, 1) for n in mem_nodes)
        slack = buffers * max([weights.get(n, 1) for n in mem_nodes] or [1])
        for n in mem_nodes:
            want = pages * weights.get(n, 1) / total
            t.true(abs(got.get(n, 0) - want) <= slack,
                   f"{where}: node {n} has {got.get(n, 0)} pages, weights give {want:.1f} "
                   f"(within {slack}); all {got}")


@check("policy-placement", policy_guest,
       needs={"policy": ["--size", "--rounds", "--sample-time", "--format", "--node",
                         "--policies", "--cases", "--threads"]})
def policy_placement(cfg, res, t):
    secs = sections(res.stdout)
    main = secs.get("main")
    skip_if_not_built(t, main, "policy", "policy")
    doc = document(t, main, "policy", command="policy", complete=True)
    if doc is not None:
        params = doc.get("parameters") or {}
        cpu_nodes = [n.id for n in cfg.nodes if n.cpus]
        t.eq(params.get("cpu_nodes"), cpu_nodes, "policy: cpu_nodes")
        t.eq(params.get("mem_nodes"), cfg.node_ids, "policy: mem_nodes (CPU-less ones included)")
        threads = params.get("threads") or []
        t.eq(sorted(th.get("cpu") for th in threads), cfg.cpu_ids, "policy: one thread per CPU")
        for th in threads:
            t.true(th.get("node") in cfg.node_ids and th.get("cpu") in cfg.node(th["node"]).cpus,
                   f"policy: thread on CPU {th.get('cpu')} is not on node {th.get('node')}")
        cases = doc.get("cases") or []
        t.eq([c.get("case") for c in cases], ["independent", "shared"], "policy: cases")
        for c in cases:
            names = [p.get("policy") for p in c.get("policies") or []]
            t.eq(names, ["first-touch", "serial", "interleave", "weighted", "preferred", "unpinned"],
                 f"policy {c.get('case')}: policies")
            for p in c.get("policies") or []:
                check_policy(cfg, t, doc, c.get("case"), p, "policy")
        t.eq(len(doc.get("rankings") or []), 2, "policy: rankings (one per case)")
    if cpuless_nodes(cfg):
        doc = document(t, secs.get("cpuless"), "policy --node CPU-less", command="policy", complete=True)
        if doc is not None:
            for c in doc.get("cases") or []:
                for p in c.get("policies") or []:
                    check_policy(cfg, t, doc, c.get("case"), p, "policy --node CPU-less")
    bad_input(t, secs, BAD, quiet_stdout=True)


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc(cfg, node=None, policies=None, cases=("independent", "shared"), weighted=False):
    cpu_nodes = [n.id for n in cfg.nodes if n.cpus]
    node = cpu_nodes[0] if node is None else node
    threads = [{"cpu": c, "node": n.id} for n in cfg.nodes for c in n.cpus]
    pages = 4096
    mem = cfg.node_ids
    policies = policies or ["first-touch", "serial", "interleave", "weighted", "preferred",
                            "unpinned"]

    def placement(name, buffers):
        if name in ("serial", "preferred"):
            dist = {node: pages}
        elif name in ("first-touch", "unpinned"):
            dist = {}
            for th in threads:
                dist[th["node"]] = dist.get(th["node"], 0) + pages // len(threads)
        else:
            dist = {n: pages // len(mem) for n in mem}
            dist[mem[0]] += pages - sum(dist.values())
        return {"pages": pages, "buffers": buffers, "not_present": 0,
                "per_node": {str(k): v for k, v in dist.items()}}

    def outcome(name, case):
        buffers = len(threads) if case == "independent" else 1
        p = {"policy": name, "skipped": None, "failures": [],
             "placement": placement(name, buffers)}
        if name == "weighted" and not weighted:
            p = {"policy": name, "failures": [], "placement": None,
                 "skipped": "weighted interleave skipped: Linux 6.1.0 has no MPOL_WEIGHTED_INTERLEAVE"}
        if name == "serial" and node in cpuless_nodes(cfg):
            p = {"policy": name, "failures": [], "placement": None,
                 "skipped": f"node {node} has no CPU this process may use"}
        return p

    return {
        "schema": "numaprobe/1", "command": "policy", "complete": True,
        "parameters": {"cpu_nodes": cpu_nodes, "mem_nodes": mem, "threads": threads, "node": node},
        "weights": {"kernel": [{"node": n, "weight": 1} for n in mem] if weighted else []},
        "cases": [{"case": c, "policies": [outcome(p, c) for p in policies]} for c in cases],
        "rankings": [{}, {}],
    }


def guest_text(cfg, main, cpuless=None, bad_rc=2):
    docs = [("main", main)] + ([("cpuless", cpuless)] if cpuless is not None else [])
    return printed(docs, BAD, bad_rc=bad_rc)


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    from checks import Result
    cl = cpuless_nodes(cfg)
    side = good_doc(cfg, node=cl[0], policies=["serial", "preferred"], cases=("independent",)) \
        if cl else None

    def r(main, **kw):
        return Result(guest_text(cfg, main, side, **kw), "", 0)

    yield "policy-placement", "correct machine", r(good_doc(cfg)), "pass"
    yield "policy-placement", "weighted supported", r(good_doc(cfg, weighted=True)), "pass"
    bad = good_doc(cfg)
    pn = bad["cases"][0]["policies"][2]["placement"]["per_node"]
    first = str(cfg.node_ids[0])
    moved = sum(pn.values())
    bad["cases"][0]["policies"][2]["placement"]["per_node"] = {first: moved}
    yield "policy-placement", "interleave all on one node", r(bad), "fail"
    bad = good_doc(cfg)
    p = bad["cases"][1]["policies"][1]["placement"]
    p["per_node"] = {str(cfg.node_ids[-1]): p["pages"]}
    yield "policy-placement", "serial pages on another node", r(bad), "fail"
    bad = good_doc(cfg)
    ft = bad["cases"][0]["policies"][0]["placement"]
    ft["per_node"] = {str(cfg.node_ids[0]): ft["pages"]}
    yield "policy-placement", "first touch all on node 0", r(bad), "fail"
    yield "policy-placement", "bad input exit 1", r(good_doc(cfg), bad_rc=1), "fail"
    bad = good_doc(cfg)
    bad["cases"][0]["policies"][3]["skipped"] = "no reason"
    yield "policy-placement", "weighted skipped without saying why", r(bad), "fail"
    yield "policy-placement", "not built", Result(
        "@@@ main rc 1\n@@@err numaprobe: error: `numaprobe policy` is not built yet\n", "", 0), "skip"
