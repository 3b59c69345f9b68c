"""`numaprobe c2c` on a multi-node guest: the cache-line transfer
pairs must be the CPUs asked for, every ordered pair must have a value or a
reason, each pair's nodes must be the configuration's, and each pair's
domain must match the machine: CPUs of different packages (QEMU sockets)
`cross_package`, of different nodes in one package `same_package`, of one
node something closer. Bad input (a CPU that does not exist) must be one
line and exit 2. Timings inside TCG mean nothing and are not looked at
(only that a measured value is a positive number).
"""

import json

from checks import check
from guest_output import guest_script, printed, sections, skip_if_not_built

BAD = {"bad-cpu": "numaprobe c2c --cpus 0,999"}
NEAR = {"same_core", "same_l2", "same_l3", "same_node"}


def asked_cpus(cfg):
    """Two CPUs of the first node with CPUs plus the first CPU of the next:
    a same-node and a cross-node pair, six ordered pairs in all (each pair
    takes about a second of TCG time: every leg of a ping-pong waits for the
    other vCPU's host thread)."""
    out = []
    for n in cfg.nodes:
        out += n.cpus[:2] if not out else n.cpus[:1]
    return sorted(set(out))[:3]


def c2c_guest(cfg):
    cpus = ",".join(str(c) for c in asked_cpus(cfg))
    return guest_script("c", [("main", f"numaprobe c2c --cpus {cpus} --time-budget 600ms --format json"),
                              *BAD.items()])


def node_of(cfg, cpu):
    return next((n.id for n in cfg.nodes if cpu in n.cpus), None)


def want_domain(cfg, a, b):
    if cfg.package_of(a) != cfg.package_of(b):
        return {"cross_package"}
    if node_of(cfg, a) != node_of(cfg, b):
        return {"same_package"}
    return NEAR


@check("c2c-pairs", c2c_guest, needs={"c2c": ["--cpus", "--time-budget", "--format"]})
def c2c_pairs(cfg, res, t):
    secs = sections(res.stdout)
    main = secs.get("main")
    if main is None:
        t.fail("c2c: did not run")
        return
    skip_if_not_built(t, main, "c2c", "c2c")
    asked = asked_cpus(cfg)
    # Failed pairs make the exit status 1 with the document still written.
    t.true(main["rc"] in (0, 1), f"c2c: exit status {main['rc']} (stderr {main['err'][-5:]!r})")
    try:
        doc = json.loads(main["out"])
    except ValueError as e:
        t.fail(f"c2c: no JSON on stdout ({e}); stderr {main['err'][-5:]!r}")
        return
    t.eq(doc.get("schema"), "numaprobe/1", "c2c: schema")
    t.eq(doc.get("cpus"), asked, "c2c: the CPUs in the result are the ones asked")
    pairs = {(p.get("a"), p.get("b")): p for p in doc.get("pairs") or []}
    failed = {(f.get("a"), f.get("b")): f for f in doc.get("failed") or []}
    if failed:
        t.note(f"c2c: {len(failed)} failed pair(s), e.g. {next(iter(failed.values()))!r}")
    for a in asked:
        for b in asked:
            if a == b:
                continue
            p, f = pairs.get((a, b)), failed.get((a, b))
            where = f"c2c CPU {a} -> CPU {b}"
            reason = f.get("reason") if f else None
            if p is None:
                t.true(bool(reason), f"{where}: neither a value nor a reason")
                continue
            for state in ("hitm", "shared"):
                fig = p.get(state)
                ok = isinstance(fig, dict) and isinstance(fig.get("median"), (int, float)) \
                    and fig["median"] > 0
                t.true(ok or bool(reason), f"{where}: {state} has neither a value nor a reason")
            t.eq((p.get("node_a"), p.get("node_b")), (node_of(cfg, a), node_of(cfg, b)),
                 f"{where}: nodes")
            want = want_domain(cfg, a, b)
            t.true(p.get("domain") in want,
                   f"{where}: domain {p.get('domain')!r}, the configuration says {sorted(want)}")
    t.true(len(pairs) + len(failed) >= len(asked) * (len(asked) - 1),
           f"c2c: {len(pairs)} pairs + {len(failed)} failed for {len(asked)} CPUs")
    for tag, cmd in BAD.items():
        s = secs.get(tag)
        if s is None:
            t.fail(f"{cmd}: did not run")
            continue
        t.eq(s["rc"], 2, f"{cmd}: exit status")
        t.true(len(s["err"]) == 1 and "CPU 999 is not allowed" in s["err"][0],
               f"{cmd}: expected one line naming CPU 999, got {s['err']!r}")


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc(cfg):
    asked = asked_cpus(cfg)
    pairs = []
    for a in asked:
        for b in asked:
            if a != b:
                dom = sorted(want_domain(cfg, a, b))[-1]
                fig = {"median": 100.0, "min": 90.0, "max": 120.0, "cv": 0.01, "samples": [100.0]}
                pairs.append({"a": a, "b": b, "node_a": node_of(cfg, a), "node_b": node_of(cfg, b),
                              "domain": dom, "hitm": fig, "shared": dict(fig)})
    return {"schema": "numaprobe/1", "cpus": asked, "pairs": pairs, "failed": [],
            "complete": True}


def guest_text(main, rc=0, bad_rc=2):
    return printed([("main", main)], BAD, rc=rc, bad_rc=bad_rc,
                   error=lambda tag: "CPU 999 is not allowed for this process (allowed CPUs: 0-7)")


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    from checks import Result

    def r(main, **kw):
        return Result(guest_text(main, **kw), "", 0)

    if len(asked_cpus(cfg)) < 2:
        return
    yield "c2c-pairs", "correct machine", r(good_doc(cfg)), "pass"
    d = good_doc(cfg)
    gone = d["pairs"].pop()
    d["failed"].append({"a": gone["a"], "b": gone["b"], "reason": "CPU 1 waited 2s"})
    yield "c2c-pairs", "a failed pair with its reason", r(d, rc=1), "pass"
    d = good_doc(cfg)
    d["pairs"].pop()
    yield "c2c-pairs", "a pair without value or reason", r(d), "fail"
    d = good_doc(cfg)
    d["cpus"] = d["cpus"][:-1]
    yield "c2c-pairs", "other CPUs than asked", r(d), "fail"
    if len(cfg.nodes) > 1:
        d = good_doc(cfg)
        for p in d["pairs"]:
            if p["node_a"] != p["node_b"]:
                p["domain"] = "same_l3"
        yield "c2c-pairs", "cross-node pairs labelled as one L3", r(d), "fail"
    yield "c2c-pairs", "bad CPU exit 1", r(good_doc(cfg), bad_rc=1), "fail"
    yield "c2c-pairs", "not built", Result(
        "@@@ main rc 2\n@@@err numaprobe: error: c2c is not built yet\n", "", 0), "skip"
