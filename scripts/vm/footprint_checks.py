"""The run's footprint inside a memory cgroup: a cgroup v2 group with
memory.max = 256 MiB, well below the guest's memory, and numaprobe run
inside it (the guest script moves its own shell into the group, so every
command it starts is charged to it).

  - every measuring command with its default sizes (short budgets only, so
    the check stays short under TCG) and the main job exit 0 with a
    complete document;
  - each document's provenance states a footprint limited by the cgroup,
    naming the group's memory.max, at most half of 256 MiB;
  - the study's arrays and background buffers, all alive at once in its
    largest experiment, fit the footprint limit it states;
  - an explicit --size past the group's room (latency, and the main job)
    is refused before anything is allocated: exit 2 and one line naming
    the group's memory.max, instead of an OOM kill half-way;
  - the group's memory.events counts no OOM kill and no `max` event (the
    group never reached its limit).
Timings inside TCG mean nothing and are not looked at.
"""

import json

from checks import check
from guest_output import document, guest_script, printed, sections

LIMIT = 256 << 20
GROUP = "/sys/fs/cgroup/np"
SETUP = f"""mkdir -p /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p {GROUP}
echo {LIMIT} > {GROUP}/memory.max
echo $$ > {GROUP}/cgroup.procs
"""
SHORT = "--time-budget 20ms --format json"
COMMANDS = [
    ("latency", f"numaprobe latency {SHORT}"),
    ("bandwidth", f"numaprobe bandwidth {SHORT}"),
    ("sweep", "numaprobe latency --sweep --sweep-points 1 --time-budget 10ms --format json"),
    ("loaded", f"numaprobe loaded-latency --delays 0,1000 {SHORT}"),
    ("peak", f"numaprobe peak {SHORT}"),
    ("policy", "numaprobe policy --rounds 1 --sample-time 20ms --format json"),
    ("c2c", "numaprobe c2c --format json"),
    # Default sizes; one pass and one sample per case keep it short.
    ("study", "numaprobe study --preset crossfire --passes 1 --repeats 1 --format json"),
    ("run", "numaprobe run --budget 20s --report-dir /tmp/fp-run --format json"),
]

# Twice the group's limit, asked for by the user: the user's word is not
# shrunk, and it cannot fit.
TOO_LARGE = [
    ("over-latency", "numaprobe latency --size 512MiB --time-budget 20ms"),
    ("over-run", "numaprobe run --size 512MiB --budget 5s --no-report"),
]


def refused_over_cgroup(t, sec, cmd):
    """Exit 2 with one line naming the group's limit file."""
    if sec is None:
        t.fail(f"{cmd}: did not run")
        return
    t.eq(sec["rc"], 2, f"{cmd}: exit status (stderr {sec['err'][-3:]!r})")
    errors = [line for line in sec["err"] if line.startswith("numaprobe: error:")]
    t.true(len(errors) == 1 and "memory cgroup's limit" in errors[0]
           and f"{GROUP}/memory.max" in errors[0],
           f"{cmd}: one line naming {GROUP}/memory.max ({errors!r:.300})")


def study_within(t, doc, limit):
    """Every buffer the study held at once (its largest case's arrays and
    the experiment's background buffers) within the limit it states."""
    size = (doc.get("parameters") or {}).get("size_bytes") or 0
    exps = [e for e in doc.get("experiments") or [] if e.get("cases")]
    t.true(bool(exps), f"study: experiments measured ({len(exps)})")
    most = max((max(len(c.get("threads") or []) for c in e["cases"])
                + ((e.get("background") or {}).get("threads") or 0) for e in exps), default=0)
    t.true(0 < size and most * size <= limit,
           f"study: {most} buffers of {size} bytes within the footprint limit {limit}")


def c2c_completes(t, sec, cmd):
    """c2c ran to its end: exit 0, or 1 with every failed pair's reason."""
    if sec is None:
        t.fail(f"{cmd}: did not run")
        return
    if sec["rc"] == 0:
        document(t, sec, cmd)
        return
    t.eq(sec["rc"], 1, f"{cmd}: exit status (stderr {sec['err'][-5:]!r})")
    try:
        doc = json.loads(sec["out"])
    except ValueError as e:
        t.fail(f"{cmd}: no JSON on stdout ({e})")
        return
    failed = doc.get("failed") or []
    t.true(failed and all(f.get("reason") for f in failed),
           f"{cmd}: exit status 1 with every failed pair's reason ({failed!r:.300})")


def footprint_guest(cfg):
    script = guest_script("f", [*COMMANDS, *TOO_LARGE,
                                ("events", f"cat {GROUP}/memory.events")])
    return SETUP + script


def events(sec):
    """{name: count} of memory.events."""
    out = {}
    for line in (sec or {}).get("out", "").splitlines():
        w = line.split()
        if len(w) == 2 and w[1].isdigit():
            out[w[0]] = int(w[1])
    return out


@check("cgroup-footprint", footprint_guest,
       needs={"latency": ["--sweep", "--sweep-points", "--time-budget"],
              "loaded-latency": ["--delays"], "policy": ["--rounds", "--sample-time"],
              "peak": ["--time-budget"],
              "run": ["--budget", "--report-dir", "--size", "--no-report"]})
def cgroup_footprint(cfg, res, t):
    secs = sections(res.stdout)
    for tag, cmd in COMMANDS:
        if tag == "c2c":
            # A few cache lines: nothing to size, and never an OOM. Pairs
            # the machine cannot measure (an emulated CPU's clock costs more
            # than a read-shared sample takes) make the exit status 1 with
            # the document written and a reason per pair.
            c2c_completes(t, secs.get(tag), cmd)
            continue
        doc = document(t, secs.get(tag), cmd)
        if doc is None:
            continue
        t.true(doc.get("complete") is not False, f"{cmd}: complete")
        fp = (doc.get("provenance") or {}).get("footprint") or {}
        # The smaller share wins: the cgroup's half, or the nodes' 12 %
        # when the guest's memory is small; either way the group is read.
        t.true(fp.get("limited_by") in ("cgroup", "node_memory"),
               f"{cmd}: footprint limited by ({fp!r})")
        cg = fp.get("cgroup") or {}
        t.eq(cg.get("path"), f"{GROUP}/memory.max", f"{cmd}: the cgroup's limit file")
        t.eq(cg.get("limit_bytes"), LIMIT, f"{cmd}: the cgroup's limit")
        t.true(0 < (fp.get("limit_bytes") or 0) <= LIMIT // 2,
               f"{cmd}: footprint limit {fp.get('limit_bytes')} within half of {LIMIT}")
        if tag == "study":
            study_within(t, doc, fp.get("limit_bytes") or 0)
    for tag, cmd in TOO_LARGE:
        refused_over_cgroup(t, secs.get(tag), cmd)
    ev = events(secs.get("events"))
    t.true("oom_kill" in ev, f"memory.events read: {ev!r}")
    t.eq(ev.get("oom_kill"), 0, "OOM kills in the group")
    t.eq(ev.get("oom"), 0, "OOM events in the group")


# --- selftest (scripts/vm/selftest.py): a right and wrong answers ----------


def good_doc(tag=None):
    d = {"schema": "numaprobe/1", "complete": True, "provenance": {"footprint": {
        "limit_bytes": 100 << 20, "limited_by": "cgroup",
        "cgroup": {"version": 2, "path": f"{GROUP}/memory.max", "limit_bytes": LIMIT,
                   "usage_bytes": 20 << 20}}}}
    if tag == "study":
        # Two arrays and one background buffer of 32 MiB: 96 MiB at once.
        d["parameters"] = {"size_bytes": 32 << 20}
        d["experiments"] = [{"background": {"threads": 0}, "cases": [{"threads": [{}, {}]}]},
                            {"background": {"threads": 1}, "cases": [{"threads": [{}, {}]}]}]
    return d


def over_cgroup(tag):
    return (f"512 MiB does not fit under the memory cgroup's limit (9 MiB of 256 MiB used, "
            f"{GROUP}/memory.max): at most 212 MiB of buffers does")


def guest_text(docs, oom_kill=0, oom=0, refusal=over_cgroup, refused_rc=2):
    text = printed(docs) + printed([], bad=[tag for tag, _ in TOO_LARGE], bad_rc=refused_rc,
                                   error=refusal)
    return text + f"@@@ events rc 0\nlow 0\nhigh 0\nmax 0\noom {oom}\noom_kill {oom_kill}\n"


def selftest_cases(cfg):
    """(check, description, Result, expected outcome) for selftest.py."""
    from checks import Result

    def r(docs, **kw):
        return Result(guest_text(docs, **kw), "", 0)

    good = [(tag, good_doc(tag)) for tag, _ in COMMANDS]
    yield "cgroup-footprint", "every command within the cgroup", r(good), "pass"
    yield "cgroup-footprint", "an OOM kill", r(good, oom_kill=1, oom=1), "fail"
    yield ("cgroup-footprint", "a --size past the group killed, not refused",
           r(good, refused_rc=137, refusal=lambda tag: ""), "fail")
    yield ("cgroup-footprint", "a --size past the group refused for another reason",
           r(good, refusal=lambda tag: "--budget 5s is too short"), "fail")
    # c2c exiting 1: pairs the clock cannot resolve, each with its reason.
    def with_c2c(c2c_doc):
        others = [(tag, d) for tag, d in good if tag != "c2c"]
        text = printed(others) + printed([("c2c", c2c_doc)], rc=1)
        text += printed([], bad=[tag for tag, _ in TOO_LARGE], error=over_cgroup)
        return Result(text + "@@@ events rc 0\nlow 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
                      "", 0)
    unresolved = dict(good_doc("c2c"), complete=False,
                      failed=[{"a": 0, "b": 1, "reason": "shared: below the clock"}])
    yield ("cgroup-footprint", "c2c exit 1 with each pair's reason", with_c2c(unresolved),
           "pass")
    silent = dict(good_doc("c2c"), complete=False, failed=[{"a": 0, "b": 1}])
    yield "cgroup-footprint", "c2c exit 1 without a reason", with_c2c(silent), "fail"
    yield "cgroup-footprint", "a command missing", r(good[1:]), "fail"
    bad = [(tag, good_doc(tag)) for tag, _ in COMMANDS]
    bad[0][1]["provenance"]["footprint"]["cgroup"] = None
    yield "cgroup-footprint", "the cgroup not read", r(bad), "fail"
    bad = [(tag, good_doc(tag)) for tag, _ in COMMANDS]
    bad[-1][1]["provenance"]["footprint"]["limit_bytes"] = LIMIT
    yield "cgroup-footprint", "a limit of the whole group", r(bad), "fail"
    bad = [(tag, good_doc(tag)) for tag, _ in COMMANDS]
    study = dict(bad)["study"]
    study["experiments"][1]["background"]["threads"] = 2
    yield "cgroup-footprint", "the study holding more than its limit", r(bad), "fail"
