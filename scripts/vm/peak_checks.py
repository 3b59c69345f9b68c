"""`numaprobe peak` on a multi-node kernel: every allowed CPU of
every node streams its own node's memory at once, and each node alone.

  - one thread per CPU of the machine in the system step, each node's
    threads seen on that node's CPUs (pinned and checked by numaprobe);
  - every node's buffers on that node: placement >= 0.99 (move_pages), in
    the system step and alone;
  - the DIMMs: run as root in the guest, numaprobe reads the SMBIOS table
    (/sys/firmware/dmi/tables/DMI). Where the configuration declares memory
    devices ([check_options.peak-dimms] smbios = {...}, passed to QEMU as
    -smbios type=17 through the config's `smbios` list; x86-64 only, QEMU's
    arm64 virt machine has no SMBIOS without UEFI), the document must hold
    exactly what QEMU was told: manufacturer, part, speed, the locator prefix,
    all of the guest's memory, and the theoretical peak those give.
  - a bad mix is one line and exit 2.
Timings inside TCG mean nothing and are not looked at.
"""

from checks import BUSY_MACHINE_FLAGS, check
from guest_output import bad_input, document, guest_script, printed, sections, skip_if_not_built

COMMON = "--mix read,nt-write --size 4MiB --pages 4k --time-budget 50ms --format json"
BAD = {"bad-mix": "numaprobe peak --mix 9:x"}


def peak_guest(cfg):
    return guest_script("p", [("main", f"numaprobe peak {COMMON}"), *BAD.items()])


def declared(cfg):
    """The type 17 fields the configuration gave QEMU, or None."""
    if cfg.arch.name != "x86_64":
        return None
    return cfg.check_options.get("peak-dimms", {}).get("smbios")


def check_memory(cfg, t, mem):
    want = declared(cfg)
    if want is None:
        t.true(mem.get("source") in ("smbios", "unknown"), f"peak: memory source {mem.get('source')!r}")
        if mem.get("source") == "unknown":
            t.true(bool(mem.get("unknown_because")), "peak: unknown memory without a reason")
        t.note(f"memory population: {mem.get('source')} ({mem.get('unknown_because') or ''})")
        return
    t.eq(mem.get("source"), "smbios", f"peak: memory source (reason {mem.get('unknown_because')!r})")
    devs = [d for d in mem.get("devices") or [] if d.get("size_bytes", 0) > 0]
    t.true(len(devs) > 0, "peak: no populated memory device")
    total = sum(n.memory_mib for n in cfg.nodes) << 20
    t.eq(sum(d["size_bytes"] for d in devs), total, "peak: DIMM sizes add up to the guest's memory")
    for d in devs:
        w = f"peak: DIMM {d.get('locator')!r}"
        t.eq(d.get("manufacturer"), want["manufacturer"], f"{w} manufacturer")
        t.eq(d.get("part"), want["part"], f"{w} part")
        t.eq(d.get("speed_mts"), want["speed"], f"{w} rated speed")
        t.eq(d.get("configured_mts"), want["speed"], f"{w} configured speed")
        t.true(str(d.get("locator", "")).startswith(want["loc_pfx"]),
               f"{w}: locator should start with {want['loc_pfx']!r}")
    # QEMU gives no data width (64 bits assumed) and no channel in its
    # names: every DIMM is its own channel.
    peak = len(devs) * want["speed"] * 8 / 1000
    got = mem.get("theoretical_gbs")
    t.true(got is not None and abs(got - peak) < 1e-6,
           f"peak: theoretical {got} GB/s, {len(devs)} DIMM(s) x {want['speed']} MT/s x 8 B give {peak}")


@check("peak-dimms", peak_guest, needs={"peak": ["--mix", "--size", "--pages", "--time-budget"]})
def peak_dimms(cfg, res, t):
    secs = sections(res.stdout)
    main = secs.get("main")
    skip_if_not_built(t, main, "peak", "peak")
    if main is None:
        t.fail("peak: did not run")
        return
    doc = document(t, main, "peak", complete=True)
    if doc is not None:
        check_doc(cfg, t, doc)
    bad_input(t, secs, BAD)


def check_doc(cfg, t, doc):
    cpu_nodes = [n.id for n in cfg.nodes if n.cpus]
    system = doc.get("system") or []
    t.eq([s.get("mix") for s in system], ["read", "nt-write"], "peak: system mixes")
    for s in system:
        t.eq(s.get("threads"), len(cfg.cpu_ids), f"peak {s.get('mix')}: one thread per CPU")
        t.true((s.get("placement") or 0) >= 0.99, f"peak {s.get('mix')}: placement {s.get('placement')}")
    nodes = doc.get("nodes") or []
    for busy in (True, False):
        for mix in ("read", "nt-write"):
            got = {n["node"]: n for n in nodes if n.get("concurrent") == busy and n.get("mix") == mix}
            what = f"peak {mix} {'all nodes busy' if busy else 'alone'}"
            t.eq(sorted(got), cpu_nodes, f"{what}: nodes measured")
            for nid, n in got.items():
                t.eq(sorted(n.get("cpus") or []), cfg.node(nid).cpus,
                     f"{what}: node {nid}'s threads on its CPUs")
                t.true((n.get("placement") or 0) >= 0.99,
                       f"{what}: node {nid} placement {n.get('placement')}")
                # A busy host may flag a figure (its spread, samples set
                # aside); any other flag is a placement or measurement fault.
                faults = [f for f in n.get("flags") or []
                          if not str(f).startswith(BUSY_MACHINE_FLAGS)]
                t.eq(faults, [], f"{what}: node {nid} flags other than a busy host's")
    check_memory(cfg, t, doc.get("memory") or {})


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc(cfg):
    cpu_nodes = [n for n in cfg.nodes if n.cpus]
    want = declared(cfg)
    mem = {"source": "unknown", "unknown_because": "no table", "devices": [], "findings": []}
    if want:
        total = sum(n.memory_mib for n in cfg.nodes) << 20
        mem = {"source": "smbios", "devices": [{
            "locator": want["loc_pfx"] + " 0", "bank": "", "size_bytes": total, "kind": "RAM",
            "speed_mts": want["speed"], "configured_mts": want["speed"], "data_width_bits": None,
            "manufacturer": want["manufacturer"], "part": want["part"], "socket": 0}],
            "theoretical_gbs": want["speed"] * 8 / 1000, "findings": []}
    nodes = []
    for mix in ("read", "nt-write"):
        for busy in (True, False):
            nodes += [{"node": n.id, "mix": mix, "threads": len(n.cpus), "gbs": 1.0,
                       "concurrent": busy, "cpus": list(n.cpus), "placement": 1.0}
                      for n in cpu_nodes]
    return {"schema": "numaprobe/1", "complete": True, "memory": mem, "nodes": nodes,
            "system": [{"mix": m, "threads": len(cfg.cpu_ids), "gbs": 2.0, "placement": 1.0}
                       for m in ("read", "nt-write")]}


def guest_text(main, bad_rc=2):
    return printed([("main", main)], BAD, bad_rc=bad_rc)


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    from checks import Result

    def r(main, **kw):
        return Result(guest_text(main, **kw), "", 0)

    yield "peak-dimms", "correct machine", r(good_doc(cfg)), "pass"
    bad = good_doc(cfg)
    bad["nodes"][0]["cpus"] = [c + 1 for c in bad["nodes"][0]["cpus"]]
    yield "peak-dimms", "a node's threads on other CPUs", r(bad), "fail"
    bad = good_doc(cfg)
    bad["nodes"][-1]["placement"] = 0.5
    yield "peak-dimms", "half the pages elsewhere", r(bad), "fail"
    bad = good_doc(cfg)
    bad["system"][0]["threads"] = 1
    yield "peak-dimms", "one thread for the system", r(bad), "fail"
    yield "peak-dimms", "bad mix exit 1", r(good_doc(cfg), bad_rc=1), "fail"
    if declared(cfg):
        bad = good_doc(cfg)
        bad["memory"]["devices"][0]["part"] = "other"
        yield "peak-dimms", "a DIMM QEMU did not declare", r(bad), "fail"
        bad = good_doc(cfg)
        bad["memory"] = {"source": "unknown", "unknown_because": "needs root"}
        yield "peak-dimms", "no SMBIOS read as root", r(bad), "fail"
    yield "peak-dimms", "not built", Result(
        "@@@ main rc 1\n@@@err numaprobe: error: peak is not built yet\n", "", 0), "skip"
