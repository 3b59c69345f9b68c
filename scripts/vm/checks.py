"""The checks the VM rig runs: for each, the shell snippet run inside the VM and
the assertions made on the host about what it printed.

A check is a function decorated with ``@check(name, guest, needs=...)``:
``guest(cfg)`` returns the busybox-sh script run in the VM (``numaprobe`` and
busybox are on PATH); the function itself receives the machine configuration
(rig.Config: nodes, distances, expected_hmat(), check_options...), the result
(stdout, stderr, rc) and a ``T`` to report problems with; ``needs`` names the
subcommands and flags the guest script uses, so the check waits (SKIP) until
the binary has them. A configuration lists the checks it runs by name
(``checks = [...]`` in its TOML file), so a new check is: write it here, give
selftest.py a right and a wrong answer for it, add its name to the
configurations that should run it. Asserts are about placement and discovery
only: timings inside a TCG guest mean nothing as measurements. The one
exception is the main job's promise to keep its time budget (mainjob.py),
a promise the rig holds it to: wall time against the budget
plus a stated allowance, never a measured value against a reference.
"""

import json

CHECKS = {}


class Skip(Exception):
    """Raised by a check whose subject does not exist yet (a subcommand that
    says it is not built): reported as SKIP, never as a pass."""


class T:
    """Collects the problems one check finds, so a failure lists all of them
    at once instead of stopping at the first."""

    def __init__(self):
        self.problems = []
        # What a check measured and wants shown (e.g. the main job's wall
        # time), printed under its PASS or FAIL line; never a verdict.
        self.notes = []

    def fail(self, msg):
        self.problems.append(msg)

    def note(self, msg):
        self.notes.append(msg)

    def eq(self, actual, expected, what):
        if actual != expected:
            self.fail(f"{what}: expected {expected!r}, got {actual!r}")
        return actual == expected

    def true(self, cond, msg):
        if not cond:
            self.fail(msg)
        return bool(cond)

    def skip(self, reason):
        raise Skip(reason)


class Result:
    def __init__(self, stdout, stderr, rc, span=None):
        self.stdout = stdout
        self.stderr = stderr
        self.rc = rc
        # (start, end) of the check on the guest's clock (seconds since its
        # boot), for the times the rig reports.
        self.span = span


class Check:
    def __init__(self, name, guest, verify, needs, save=None, show=None, files=None):
        self.name = name
        # files(cfg) -> {path in the guest: host file}: extra static programs
        # the guest script runs (e.g. tune's OpenMP kernel), copied into the
        # initramfs by rig.py.
        self.files = files
        # show(result) -> text: what of the guest's stdout a failure prints,
        # for checks whose output is mostly data (default: its beginning).
        self.show = show or (lambda res: res.stdout[:1500])
        self.guest = guest
        self.verify = verify
        # save(cfg, result, folder): keep what the guest sent (a report
        # folder, dmesg) as files under target/vm-runs/CONFIG/CHECK/.
        self.save = save
        # {subcommand: [flags]} this check's guest commands use. Before the
        # boot, the rig asks the numaprobe binary's --help whether they exist;
        # if not, the check's subject has not landed yet and it is skipped
        # (reported as SKIP) without spending VM time on it.
        self.needs = needs or {}


def check(name, guest, needs=None, save=None, show=None, files=None):
    def register(fn):
        CHECKS[name] = Check(name, guest, fn, needs, save, show, files)
        return fn

    return register


def not_built(res):
    """The skeleton's subcommands fail with '... is not built yet' until their
    branch lands; a check on such a subcommand is pending, not failed."""
    return res.rc != 0 and "not built yet" in res.stderr


def parse_json(t, res, what):
    if not t.eq(res.rc, 0, f"exit status of {what} (stderr: {res.stderr.strip()[:300]!r})"):
        return None
    try:
        doc = json.loads(res.stdout)
    except ValueError as e:
        t.fail(f"{what} did not print JSON ({e}); stdout starts {res.stdout[:200]!r}")
        return None
    t.eq(doc.get("schema"), "numaprobe/1", f"{what}: top-level schema")
    return doc


# --- the kernel's own view: is the VM the machine we asked QEMU for? --------
# Checked from sysfs with busybox alone, so that when topo-json fails one can
# tell a numaprobe bug from a rig/QEMU/kernel problem.

SYSFS_GUEST = r"""
cd /sys/devices/system/node
for n in node[0-9]*; do
    id=${n#node}
    echo "node $id cpus $(cat $n/cpulist)"
    echo "node $id distance $(cat $n/distance)"
    echo "node $id memtotal_kb $(awk '/MemTotal/ {print $4}' $n/meminfo)"
    for a in $n/access[0-9]*; do
        [ -d "$a" ] || continue
        cls=${a##*/access}
        inits=$(cd $a/initiators && ls -d node[0-9]* 2>/dev/null | sed 's/node//' | tr '\n' ' ')
        echo "node $id access$cls initiators $inits"
        for f in read_latency write_latency read_bandwidth write_bandwidth; do
            if [ -f $a/initiators/$f ]; then
                echo "node $id access$cls $f $(cat $a/initiators/$f)"
            fi
        done
    done
done
echo "online_cpus $(cat /sys/devices/system/cpu/online)"
for c in /sys/devices/system/cpu/cpu[0-9]*; do
    echo "cpu ${c##*/cpu} package $(cat $c/topology/physical_package_id) core $(cat $c/topology/core_id)"
done
"""


def parse_list(s):
    """A kernel cpulist ('0-2,5') as a list of ints."""
    out = []
    for part in s.replace(" ", "").split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


@check("sysfs-layout", lambda cfg: SYSFS_GUEST)
def sysfs_layout(cfg, res, t):
    t.eq(res.rc, 0, "exit status of the sysfs dump")
    seen = {}
    hmat = {}
    pkgs = {}
    online = None
    for line in res.stdout.splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "online_cpus":
            online = parse_list(w[1]) if len(w) > 1 else []
            continue
        if w[0] == "cpu" and len(w) == 6:
            pkgs[int(w[1])] = (int(w[3]), int(w[5]))
            continue
        if w[0] != "node":
            continue
        nid, key, vals = int(w[1]), w[2], w[3:]
        node = seen.setdefault(nid, {})
        if key == "cpus":
            node["cpus"] = parse_list(vals[0]) if vals else []
        elif key == "distance":
            node["distance"] = [int(v) for v in vals]
        elif key == "memtotal_kb":
            node["memtotal_kb"] = int(vals[0])
        elif key.startswith("access"):
            entry = hmat.setdefault((nid, int(key[6:])), {})
            if vals[0] == "initiators":
                entry["initiators"] = sorted(int(v) for v in vals[1:])
            else:
                entry[vals[0]] = int(vals[1])
    t.eq(sorted(seen), cfg.node_ids, "node ids in /sys/devices/system/node")
    t.eq(online, cfg.cpu_ids, "online CPUs")
    for c in cfg.cpu_ids:
        t.eq(pkgs.get(c), (cfg.package_of(c), cfg.core_of(c)), f"cpu{c} (physical_package_id, core_id)")
    for n in cfg.nodes:
        got = seen.get(n.id, {})
        t.eq(got.get("cpus"), n.cpus, f"node{n.id}/cpulist")
        t.eq(got.get("distance"), cfg.distances[n.id], f"node{n.id}/distance")
        kb = got.get("memtotal_kb", 0)
        lo, hi = cfg.memory_bounds(n)
        t.true(lo <= kb * 1024 <= hi,
               f"node{n.id} MemTotal {kb} kB outside [{lo // 1024}, {hi // 1024}] kB "
               f"for {n.memory_mib} MiB given to QEMU")
    want = {(e["node"], e["access_class"]): e for e in cfg.expected_hmat()}
    t.eq(sorted(hmat), sorted(want), "HMAT (node, access class) pairs in sysfs")
    for key, e in want.items():
        got = hmat.get(key, {})
        t.eq(got.get("initiators"), e["initiators"], f"node{key[0]}/access{key[1]} initiators")
        for f in ("read_latency", "write_latency"):
            t.eq(got.get(f), e[f + "_ns"], f"node{key[0]}/access{key[1]}/initiators/{f}")
        for f in ("read_bandwidth", "write_bandwidth"):
            t.eq(got.get(f), e[f + "_mbps"], f"node{key[0]}/access{key[1]}/initiators/{f}")


# --- numaprobe topo ---------------------------------------------------------


@check("topo-json", lambda cfg: "numaprobe topo --format json\n")
def topo_json(cfg, res, t):
    if not_built(res):
        t.skip("`numaprobe topo` is not built yet (branch topo)")
    doc = parse_json(t, res, "numaprobe topo --format json")
    if doc is None:
        return
    nodes = {n.get("os_index"): n for n in doc.get("numa_nodes") or []}
    t.eq(sorted(nodes), cfg.node_ids, "numa_nodes[].os_index")
    for n in cfg.nodes:
        got = nodes.get(n.id)
        if got is None:
            continue
        t.eq(got.get("cpus"), n.cpus, f"numa_nodes[{n.id}].cpus")
        mem = got.get("memory_bytes") or 0
        lo, hi = cfg.memory_bounds(n)
        t.true(lo <= mem <= hi,
               f"numa_nodes[{n.id}].memory_bytes {mem} outside [{lo}, {hi}] "
               f"for {n.memory_mib} MiB given to QEMU")
        t.eq(got.get("allowed"), True, f"numa_nodes[{n.id}].allowed")
        free = got.get("free_bytes")
        t.true(isinstance(free, int) and 0 < free <= mem,
               f"numa_nodes[{n.id}].free_bytes {free!r} should be in (0, memory_bytes]")
    cpuless = [n.id for n in cfg.nodes if not n.cpus]
    got_cpuless = sorted(i for i, n in nodes.items() if n.get("cpus") == [])
    t.eq(got_cpuless, cpuless, "CPU-less nodes (numa_nodes with cpus == [])")

    cpus = {c.get("os_index"): c for c in doc.get("cpus") or []}
    t.eq(sorted(cpus), cfg.cpu_ids, "cpus[].os_index")
    for n in cfg.nodes:
        for c in n.cpus:
            got = cpus.get(c)
            if got is None:
                continue
            t.eq(got.get("node"), n.id, f"cpus[{c}].node")
            t.eq(got.get("online"), True, f"cpus[{c}].online")
            t.eq(got.get("allowed"), True, f"cpus[{c}].allowed")
            t.eq(got.get("package"), cfg.package_of(c), f"cpus[{c}].package")
            t.eq(got.get("core"), cfg.core_of(c), f"cpus[{c}].core")
            if cfg.threads_per_core == 1:
                t.eq(got.get("smt_siblings"), [c], f"cpus[{c}].smt_siblings (no SMT)")

    allowed = doc.get("allowed") or {}
    t.eq(allowed.get("cpus"), cfg.cpu_ids, "allowed.cpus (nothing restricts PID 1's children)")
    t.eq(allowed.get("nodes"), cfg.node_ids, "allowed.nodes")

    dist = doc.get("distances")
    if t.true(isinstance(dist, dict), f"distances: expected an object, got {dist!r}"):
        t.eq(dist.get("node_ids"), cfg.node_ids, "distances.node_ids")
        t.eq(dist.get("matrix"), cfg.distances, "distances.matrix (as given to QEMU)")

    fields = ("initiators", "read_latency_ns", "write_latency_ns",
              "read_bandwidth_mbps", "write_bandwidth_mbps")
    got_hmat = {(h.get("node"), h.get("access_class")): h for h in doc.get("hmat") or []}
    want = {(e["node"], e["access_class"]): e for e in cfg.expected_hmat()}
    t.eq(sorted(got_hmat), sorted(want), "hmat[] (node, access_class) pairs")
    for key, e in want.items():
        got = got_hmat.get(key)
        if got is None:
            continue
        for f in fields:
            t.eq(got.get(f), e[f], f"hmat node {key[0]} access{key[1]} {f}")


@check("bad-sysfs-root", lambda cfg: "numaprobe topo --sysfs-root /nonexistent\n")
def bad_sysfs_root(cfg, res, t):
    if not_built(res):
        t.skip("`numaprobe topo` is not built yet (branch topo)")
    t.eq(res.rc, 2, "exit status of `numaprobe topo --sysfs-root /nonexistent`")
    lines = res.stderr.strip().splitlines()
    t.eq(len(lines), 1, f"stderr lines (one-line error expected; got {res.stderr!r})")
    if lines:
        t.true(lines[0].startswith("numaprobe: error:") and "/nonexistent" in lines[0],
               f"error line should start 'numaprobe: error:' and name the path: {lines[0]!r}")
    t.eq(res.stdout, "", "stdout of the failing command")


# --- pinning ----------------------------------------------------------------
# Minimal check until the engine's pinning exists: busybox taskset sets the
# affinity of `cat`, which reads its own /proc/self/stat; field 39 is the CPU
# the task last ran on, which for a task reading its own stat is the CPU it is
# running on now. Three rounds per CPU so one lucky sample cannot pass it.
# The engine's own pinning is then checked through its results ("the intended
# CPUs" of every latency/bandwidth cell, below).


def pin_guest(cfg):
    cpus = " ".join(str(c) for c in cfg.cpu_ids)
    return f"""
for c in {cpus}; do
    for round in 1 2 3; do
        echo "cpu $c ran_on $(taskset -c $c cat /proc/self/stat | cut -d' ' -f39)"
    done
done
"""


@check("pin-each-cpu", pin_guest)
def pin_each_cpu(cfg, res, t):
    t.eq(res.rc, 0, f"exit status of the pinning loop (stderr: {res.stderr.strip()[:300]!r})")
    seen = {}
    for line in res.stdout.splitlines():
        w = line.split()
        if len(w) == 4 and w[0] == "cpu" and w[2] == "ran_on":
            seen.setdefault(int(w[1]), []).append(w[3])
    for c in cfg.cpu_ids:
        t.eq(seen.get(c), [str(c)] * 3, f"CPU reported by a task pinned to CPU {c} (3 rounds)")


# --- measurement engine ----------------------------------------------------
# Skipped when the binary's --help lacks the flags used (see Check.needs). Field names are those of the
# engine's result model (numaprobe-core model/matrix.rs: MatrixResult with
# cpu_nodes, mem_nodes, complete, cells[] with cpu_node, mem_node, cpus,
# placement.fraction_on_intended, flagged).


def matrix_guest(sub):
    # Small buffers and a short budget per cell: only placement is asserted,
    # and 20 cells (Quartet: 4 CPU nodes x 5 memory nodes) must fit the
    # per-check timeout under TCG.
    return lambda cfg: f"numaprobe {sub} --format json --size 16MiB --time-budget 100ms\n"


# The beginnings of the flags a busy machine gives a cell, as the library
# lists them (numaprobe_core::model::matrix::BUSY_MACHINE_FLAGS).
BUSY_MACHINE_FLAGS = ("unstable:", "preempted", "memory traffic", "two modes")


def matrix_check(sub):
    def verify(cfg, res, t):
        doc = parse_json(t, res, f"numaprobe {sub}")
        if doc is None:
            return
        cpu_nodes = [n.id for n in cfg.nodes if n.cpus]
        t.eq(doc.get("cpu_nodes"), cpu_nodes, f"{sub}: cpu_nodes")
        t.eq(doc.get("mem_nodes"), cfg.node_ids, f"{sub}: mem_nodes")
        t.eq(doc.get("complete"), True, f"{sub}: complete")
        cells = doc.get("cells") or []
        t.eq(len(cells), len(cpu_nodes) * len(cfg.node_ids), f"{sub}: number of cells")
        for cell in cells:
            cn = cell.get("cpu_node")
            where = f"{sub} cell cpu_node={cn} mem_node={cell.get('mem_node')}"
            frac = (cell.get("placement") or {}).get("fraction_on_intended")
            t.eq(frac, 1.0, f"{where}: placement.fraction_on_intended")
            # Timings under TCG on a shared host mean nothing, so a cell
            # flagged for what the host did (its spread, samples set aside,
            # other tasks beside it, two modes), with the reason said, is
            # expected; any other flag (a misplaced page, a sampling cut
            # short) is a fault.
            faults = [f for f in cell.get("flags") or [] if not str(f).startswith(BUSY_MACHINE_FLAGS)]
            t.eq(faults, [], f"{where}: flags other than a busy machine's")
            t.eq(cell.get("flagged"), bool(cell.get("flags")), f"{where}: flagged iff flags")
            used = cell.get("cpus")
            want = cfg.node(cn).cpus if cn in cfg.node_ids else None
            t.true(used and want and set(used) <= set(want),
                   f"{where}: CPUs used {used!r} should be CPUs of the CPU node {want!r}")

    return verify


MATRIX_FLAGS = ["--format", "--size", "--cpu-nodes", "--mem-nodes"]
check("latency-placement", matrix_guest("latency"),
      needs={"latency": MATRIX_FLAGS + ["--time-budget"]})(matrix_check("latency"))
check("bandwidth-placement", matrix_guest("bandwidth"),
      needs={"bandwidth": MATRIX_FLAGS + ["--time-budget"]})(matrix_check("bandwidth"))


# A CPU-less node used as a CPU node, a node that does not exist and a
# size larger than a node's free memory each give a clear error (exit 2, one
# line) before anything is allocated: no OOM kill (that would be 137).


def bad_input_guest(cfg):
    cases = []
    cpuless = [n.id for n in cfg.nodes if not n.cpus]
    missing = max(cfg.node_ids) + 5
    for sub in ("latency", "bandwidth"):
        if cpuless:
            cases.append((f"{sub}-cpuless-cpu-node", f"numaprobe {sub} --cpu-nodes {cpuless[0]}"))
        cases.append((f"{sub}-missing-node", f"numaprobe {sub} --mem-nodes {missing}"))
        # Twice node 0's memory: more than it can hold, less than the machine
        # has, so only a per-node check refuses it.
        over = 2 * cfg.nodes[0].memory_mib
        cases.append((f"{sub}-size-over-free", f"numaprobe {sub} --mem-nodes 0 --size {over}MiB"))
    lines = ["run() { name=$1; shift; \"$@\" > /tmp/case.out 2> /tmp/case.err; rc=$?;",
             "  echo \"case $name rc $rc\"; sed \"s/^/err $name /\" /tmp/case.err; }"]
    lines += [f"run {name} {cmd}" for name, cmd in cases]
    return "\n".join(lines) + "\n"


@check("engine-bad-input", bad_input_guest,
       needs={"latency": MATRIX_FLAGS, "bandwidth": MATRIX_FLAGS})
def engine_bad_input(cfg, res, t):
    t.eq(res.rc, 0, "exit status of the case loop")
    rcs, errs = {}, {}
    for line in res.stdout.splitlines():
        w = line.split(" ", 2)
        if len(w) == 3 and w[0] == "case":
            rcs[w[1]] = int(w[2].split()[1])
        elif len(w) == 3 and w[0] == "err":
            errs.setdefault(w[1], []).append(w[2])
    t.true(rcs, f"no case reported: {res.stdout[:300]!r}")
    for name, rc in rcs.items():
        t.eq(rc, 2, f"{name}: exit status (137 would be an OOM kill); stderr {errs.get(name)!r}")
        lines = errs.get(name, [])
        t.true(len(lines) == 1 and lines[0].startswith("numaprobe: error:"),
               f"{name}: expected one 'numaprobe: error: ...' line on stderr, got {lines!r}")


# --- the study ----------------------------------------------------
# Every preset end to end on this machine; timings mean nothing, placement is
# checked: each foreground thread ran on a CPU of its node (verified by the
# study itself) and its array is on its memory node. Field names follow the
# study's result model on branch study (experiments[].cases[].threads[] with
# node, cpu, cpu_verified, mem_node, pages_on_node, placement_ok); its owner
# keeps them in step. Small arrays keep a preset inside the per-check timeout.

STUDY_PRESETS = ("hops", "crossfire", "same-node", "myths")


def study_presets_of(cfg):
    """A configuration may list the presets its machine can run in
    [check_options.study-presets] presets = [...]; default: all of them.
    same-node needs two cores on one node, which the one-CPU-per-node
    Quartet does not have, so it runs on two-node instead."""
    return list(cfg.check_options.get("study-presets", {}).get("presets", STUDY_PRESETS))


def study_guest(cfg):
    presets = " ".join(study_presets_of(cfg))
    return f"""
for p in {presets}; do
    numaprobe study --preset $p --size 4MiB --format json > /tmp/study.json 2> /tmp/study.err
    echo "@@@ preset $p rc $?"
    cat /tmp/study.json; echo
    sed 's/^/@@@ err /' /tmp/study.err
done
"""


@check("study-presets", study_guest, needs={"study": ["--preset", "--size", "--format"]})
def study_presets(cfg, res, t):
    runs = {}
    cur = None
    for line in res.stdout.splitlines():
        if line.startswith("@@@ preset "):
            w = line.split()
            cur = w[2]
            runs[cur] = {"rc": int(w[4]), "json": [], "err": []}
        elif cur and line.startswith("@@@ err "):
            runs[cur]["err"].append(line[8:])
        elif cur:
            runs[cur]["json"].append(line)
    for p in study_presets_of(cfg):
        run = runs.get(p)
        if run is None:
            t.fail(f"study --preset {p}: did not run")
            continue
        if not t.eq(run["rc"], 0, f"study --preset {p}: exit status (stderr {run['err'][-5:]!r})"):
            continue
        try:
            doc = json.loads("\n".join(run["json"]))
        except ValueError as e:
            t.fail(f"study --preset {p}: no JSON on stdout ({e})")
            continue
        t.eq(doc.get("schema"), "numaprobe/1", f"study --preset {p}: schema")
        t.eq(doc.get("complete"), True, f"study --preset {p}: complete")
        threads = [th for ex in doc.get("experiments") or [] for case in ex.get("cases") or []
                   for th in case.get("threads") or []]
        t.true(threads, f"study --preset {p}: no foreground thread in any case")
        for th in threads:
            lbl = f"study --preset {p} thread {th.get('label')}"
            node = th.get("node")
            t.true(node in cfg.node_ids and th.get("cpu") in cfg.node(node).cpus,
                   f"{lbl}: cpu {th.get('cpu')} is not a CPU of node {node}")
            t.eq(th.get("cpu_verified"), True, f"{lbl}: cpu_verified")
            t.eq(th.get("pages_on_node"), 1.0, f"{lbl}: pages_on_node (array on node {th.get('mem_node')})")
            t.eq(th.get("placement_ok"), True, f"{lbl}: placement_ok")


# The main job's checks live in their own module; importing it registers them.
import mainjob  # noqa: E402,F401
import soundjob  # noqa: E402,F401
# tune's checks: the user's-program placement candidates.
import tune_checks  # noqa: E402,F401

# `numaprobe policy`'s placement checks, in their own module.
import policy_checks  # noqa: E402,F401

# `check` and `diff` in their own module, like the main job's.
import diffcheck  # noqa: E402,F401
# numaprobe-core's unit tests inside the guest (arm64's test binary).
import unittests  # noqa: E402,F401
# `numaprobe c2c`'s pairs, nodes and domains.
import c2c_checks  # noqa: E402,F401
# `numaprobe peak`'s placement and SMBIOS checks, in their own module.
import peak_checks  # noqa: E402,F401
# `c2c --locks`: placement strategies' threads on their nodes.
import locks_checks  # noqa: E402,F401
# `numaprobe loaded-latency`'s placement check, in its own module.
import loaded_checks  # noqa: E402,F401
# `--cpus` and `latency --sweep`: the chosen CPU measures, in its own module.
import sweep_checks  # noqa: E402,F401
# A memory cgroup's limit kept by every measuring command.
import footprint_checks  # noqa: E402,F401
# A node of several packages: uniform or interleaved memory.
import interleave_checks  # noqa: E402,F401
