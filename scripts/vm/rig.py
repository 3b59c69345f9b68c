#!/usr/bin/env python3
"""The VM rig's host side: turns a machine configuration (configs/*.toml) into
a QEMU command line and an initramfs, boots it, reads the results the guest
wrote to its second serial port, and runs the host-side asserts of
checks.py on them.

scripts/vm-test installs the tools, fetches the kernel and builds numaprobe,
then calls this with their paths. Run alone (after one vm-test run has filled
the caches):

    scripts/vm/rig.py [--arch aarch64] --kernel K --busybox /bin/busybox --numaprobe BIN [CONFIG...]

--arch picks the guest architecture (arch.py holds all that differs); the
machines and checks are the same for every architecture.

Exit status 0 when every check of every configuration passed or was skipped,
1 otherwise. Artifacts of each boot (console log, results, QEMU command) stay
under target/vm-runs/CONFIG/ for inspection.
"""

import argparse
import os
import shlex
import shutil
import struct
import subprocess
import sys
import time

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("vm-test: Python 3.11 or newer is needed (tomllib)")

# No __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arch import ARCHES, X86_64  # noqa: E402
from checks import CHECKS, Result, Skip, T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONFIG_DIR = os.path.join(HERE, "configs")

# A node's MemTotal is what QEMU gave it minus what the kernel reserves
# there (memmap, the kernel image, crash and DMA areas, about 30 MiB on the
# last CPU node of the Quartet); 75 % is well below any of that and well above
# a node that got nothing or the wrong amount.
MEMORY_LOW_FRACTION = 0.75

# Seconds before a hung VM is killed, unless its configuration says more
# (vm_timeout_s) or NUMAPROBE_VM_TIMEOUT says otherwise.
DEFAULT_VM_TIMEOUT_S = 300


class Node:
    def __init__(self, d):
        self.id = d["id"]
        self.cpus = sorted(d.get("cpus", []))
        self.memory_mib = d["memory_mib"]
        self.initiator = d.get("initiator")


class Config:
    """One machine configuration, validated so a mistake in a TOML file is
    reported as such and not as a failing check."""

    def __init__(self, path, arch=X86_64):
        with open(path, "rb") as f:
            d = tomllib.load(f)
        self.path = path
        for key in ("name", "smp", "checks", "node"):
            if key not in d:
                sys.exit(f"{path}: missing top-level key {key!r} (in TOML, a plain key written "
                         "after a [table] header belongs to that table: put it before)")
        self.name = d["name"]
        self.description = d.get("description", "")
        self.smp = d["smp"]
        self.arch = arch
        # What the machine description asks for, and what this architecture's
        # guest can be given: the checks expect HMAT only when both say so.
        self.hmat_requested = bool(d.get("hmat", False))
        self.hmat = self.hmat_requested and arch.hmat
        # -cpu models are per architecture: `cpu` for x86-64, `cpu_aarch64`.
        self.cpu_model = d.get(arch.cpu_key)
        # QEMU's -accel value. Multi-threaded TCG (QEMU's default) runs each
        # vCPU on its own host thread; with many one-CPU nodes whose work is
        # one thread at a time, one thread for all of them boots faster.
        self.accel = d.get("accel", "tcg")
        if self.accel.split(",")[0] != "tcg":
            sys.exit(f"{path}: accel must be tcg[,options]: the rig needs no KVM")
        self.checks = d["checks"]
        self.check_timeout_s = d.get("check_timeout_s", 90)
        # The hang guard for the whole VM, when the machine needs more than
        # the rig's default (NUMAPROBE_VM_TIMEOUT still overrides it).
        self.vm_timeout_s = d.get("vm_timeout_s")
        # Per-check settings, [check_options.NAME] in the TOML file: how a
        # check learns what this machine can do (e.g. which study presets).
        self.check_options = d.get("check_options", {})
        # Extra -smbios options (e.g. memory devices, type=17) for checks
        # that read the guest's SMBIOS table.
        self.smbios = d.get("smbios", [])
        self.nodes = sorted((Node(n) for n in d["node"]), key=lambda n: n.id)
        self.hmat_lb = d.get("hmat_lb")
        self.node_ids = [n.id for n in self.nodes]
        # A machine may be given by its links instead of (or besides) its
        # SLIT: distances then follow the hops, 10 + slit_per_hop per hop,
        # as a firmware writer would derive them.
        self.links = d.get("links")
        self.slit_per_hop = d.get("slit_per_hop", 6)
        self.distances = d.get("distances")
        if self.links is not None:
            derived = self._distances_from_links(path)
            if self.distances is not None and self.distances != derived:
                sys.exit(f"{path}: distances disagree with the ones its links give "
                         f"(10 + {self.slit_per_hop} per hop): {derived}")
            self.distances = derived
        elif self.distances is None:
            sys.exit(f"{path}: give distances = [[...]] or links = [[a, b], ...]")
        self.cpu_ids = sorted(c for n in self.nodes for c in n.cpus)
        smp = dict(kv.split("=") for kv in self.smp.split(",")[1:])
        self.threads_per_core = int(smp.get("threads", 1))
        self.cores_per_socket = int(smp.get("cores", 1))
        self._validate()

    def _distances_from_links(self, path):
        ids = [n.id for n in self.nodes]
        adj = {i: set() for i in ids}
        for link in self.links:
            if len(link) != 2 or link[0] == link[1] or any(x not in adj for x in link):
                sys.exit(f"{path}: link {link!r} must join two different nodes of {ids}")
            adj[link[0]].add(link[1])
            adj[link[1]].add(link[0])
        out = []
        for src in ids:
            hops, queue = {src: 0}, [src]
            for u in queue:
                for v in sorted(adj[u]):
                    if v not in hops:
                        hops[v] = hops[u] + 1
                        queue.append(v)
            if len(hops) != len(ids):
                sys.exit(f"{path}: node {src} cannot reach nodes "
                         f"{sorted(set(ids) - set(hops))} over the links")
            out.append([10 + self.slit_per_hop * hops[dst] for dst in ids])
        return out

    def timeout_of(self, check):
        """Seconds the guest gives one check: its own timeout_s option, or
        the machine's check_timeout_s, stretched by the architecture's
        timeout_factor (arch.py)."""
        base = self.check_options.get(check, {}).get("timeout_s", self.check_timeout_s)
        return int(base * self.arch.timeout_factor)

    def _validate(self):
        where = f"{self.path}:"
        n = len(self.nodes)
        if self.node_ids != list(range(n)):
            sys.exit(f"{where} node ids must be 0..{n - 1}, got {self.node_ids}")
        ncpu = int(self.smp.split(",")[0])
        smp = dict(kv.split("=") for kv in self.smp.split(",")[1:])
        if set(smp) != {"sockets", "cores", "threads"} or \
                ncpu != int(smp["sockets"]) * self.cores_per_socket * self.threads_per_core:
            sys.exit(f"{where} smp must be 'N,sockets=S,cores=C,threads=T' with N = S*C*T "
                     "(the checks derive package and core ids from it)")
        if self.cpu_ids != list(range(ncpu)):
            sys.exit(f"{where} the nodes' cpus must be 0..{ncpu - 1} exactly once, got {self.cpu_ids}")
        if len(self.distances) != n or any(len(r) != n for r in self.distances):
            sys.exit(f"{where} distances must be {n}x{n}")
        for i in range(n):
            if self.distances[i][i] != 10:
                sys.exit(f"{where} distances[{i}][{i}] must be 10 (the SLIT's local value)")
        for c in self.check_options:
            if c not in self.checks:
                sys.exit(f"{where} check_options.{c}: no such check in this configuration's checks")
        for c in self.checks:
            if c not in CHECKS:
                sys.exit(f"{where} unknown check {c!r}; known: {', '.join(sorted(CHECKS))}")
        if self.hmat_requested:
            lb = self.hmat_lb
            if not lb:
                sys.exit(f"{where} hmat = true needs an [hmat_lb] table")
            inits = lb["initiators"]
            if inits != [x.id for x in self.nodes if x.cpus]:
                sys.exit(f"{where} hmat_lb.initiators must be the CPU nodes in id order")
            for key in ("latency_ns", "bandwidth_mbps"):
                m = lb[key]
                if len(m) != len(inits) or any(len(r) != n for r in m):
                    sys.exit(f"{where} hmat_lb.{key} must be {len(inits)}x{n}")
            for x in self.nodes:
                if not x.cpus and x.initiator not in inits:
                    sys.exit(f"{where} CPU-less node {x.id} needs initiator = <a CPU node>")

    # QEMU numbers CPUs socket by socket, core by core, thread by thread (with
    # dies and clusters left at 1), so the ids the kernel reads follow from -smp.
    def package_of(self, cpu):
        return cpu // (self.cores_per_socket * self.threads_per_core)

    def core_of(self, cpu):
        return (cpu // self.threads_per_core) % self.cores_per_socket

    def node(self, nid):
        return self.nodes[nid]

    def memory_bounds(self, node):
        full = node.memory_mib * 1024 * 1024
        return int(full * MEMORY_LOW_FRACTION), full

    def expected_hmat(self):
        """What the kernel shows in nodeN/accessK/initiators for the HMAT we
        give QEMU. QEMU marks every node's initiator in the SRAT/HMAT (a CPU
        node is its own, a CPU-less node the one configured), and the kernel
        (drivers/acpi/numa/hmat.c) then links only that initiator and reports
        that pair's values, in both access0 (any initiator) and access1 (CPU
        initiators; ours all have CPUs). Access latency/bandwidth entries set
        read and write alike. Remote pairs are in the ACPI table only."""
        if not self.hmat:
            return []
        lb = self.hmat_lb
        out = []
        for n in self.nodes:
            ini = n.id if n.cpus else n.initiator
            row = lb["initiators"].index(ini)
            lat = lb["latency_ns"][row][n.id]
            bw = lb["bandwidth_mbps"][row][n.id]
            for cls in (0, 1):
                out.append({
                    "node": n.id, "access_class": cls, "initiators": [ini],
                    "read_latency_ns": lat, "write_latency_ns": lat,
                    "read_bandwidth_mbps": bw, "write_bandwidth_mbps": bw,
                })
        return out

    def qemu_args(self, kernel, initrd, results):
        total = sum(n.memory_mib for n in self.nodes)
        a = self.arch.qemu_base(self, self.hmat)
        a += ["-m", f"{total}M", "-smp", self.smp]
        a += ["-kernel", kernel, "-initrd", initrd,
              # panic=-1: a panic reboots at once, and -no-reboot turns that
              # into QEMU exiting, so a broken guest never waits for the timeout.
              "-append", f"console={self.arch.console} panic=-1{self.arch.kernel_args}"]
        a += self.arch.result_channel(results)
        # QEMU builds SMBIOS tables for x86 machines only (arm64's virt has
        # them through UEFI, which the rig does not boot).
        if self.arch.name == "x86_64":
            for s in self.smbios:
                a += ["-smbios", s]
        for n in self.nodes:
            a += ["-object", f"memory-backend-ram,size={n.memory_mib}M,id=m{n.id}"]
            spec = f"node,nodeid={n.id},memdev=m{n.id}"
            spec += "".join(f",cpus={c}" for c in n.cpus)
            if self.hmat and not n.cpus:
                spec += f",initiator={n.initiator}"
            a += ["-numa", spec]
        for i, row in enumerate(self.distances):
            for j, d in enumerate(row):
                if i != j:
                    a += ["-numa", f"dist,src={i},dst={j},val={d}"]
        if self.hmat:
            lb = self.hmat_lb
            for r, ini in enumerate(lb["initiators"]):
                for tgt in self.node_ids:
                    base = f"hmat-lb,initiator={ini},target={tgt},hierarchy=memory"
                    a += ["-numa", f"{base},data-type=access-latency,latency={lb['latency_ns'][r][tgt]}"]
                    # QEMU's M suffix here means MB/s, which is what the
                    # kernel reports back in read/write_bandwidth.
                    a += ["-numa", f"{base},data-type=access-bandwidth,bandwidth={lb['bandwidth_mbps'][r][tgt]}M"]
        return a


def is_static_elf(path, machine):
    """True when the file is a 64-bit ELF executable for `machine` (e_machine)
    with no PT_INTERP (no dynamic loader): anything else would fail inside the
    initramfs, which has no libc."""
    with open(path, "rb") as f:
        h = f.read(64)
        if h[:4] != b"\x7fELF" or h[4] != 2:
            return False
        if struct.unpack_from("<H", h, 0x12)[0] != machine:
            return False
        phoff, = struct.unpack_from("<Q", h, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", h, 0x36)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            if struct.unpack("<I", f.read(4))[0] == 3:  # PT_INTERP
                return False
    return True


def build_initramfs(cfg, args, workdir, pending):
    root = os.path.join(workdir, "root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "proc", "sys", "dev", "tmp", "etc", "checks"):
        os.makedirs(os.path.join(root, d))
    shutil.copy(args.busybox, os.path.join(root, "bin", "busybox"))
    shutil.copy(args.numaprobe, os.path.join(root, "bin", "numaprobe"))
    shutil.copy(os.path.join(HERE, "init"), os.path.join(root, "init"))
    os.chmod(os.path.join(root, "init"), 0o755)
    if args.unit_tests:
        shutil.copy(args.unit_tests, os.path.join(root, "bin", "numaprobe-core-tests"))
    modules = cfg.arch.pack_modules(args.kernel, root)
    with open(os.path.join(root, "etc", "vm-test.env"), "w") as f:
        f.write(f"VM_CONFIG={shlex.quote(cfg.name)}\n"
                f"VM_CHECK_TIMEOUT={int(cfg.check_timeout_s * cfg.arch.timeout_factor)}\n")
        # Where init sends the results, and the modules it loads first.
        f.write(f"VM_RESULTS={shlex.quote(cfg.arch.results_dev)}\n")
        f.write(f"VM_MODULES={shlex.quote(' '.join(modules))}\n")
    for i, name in enumerate(cfg.checks):
        if name in pending:
            continue
        # Host files the check's guest script needs (Check.files).
        for guest_path, host_path in (CHECKS[name].files(cfg) if CHECKS[name].files else {}).items():
            dest = os.path.join(root, guest_path.lstrip("/"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy(host_path, dest)
        guest = CHECKS[name].guest
        with open(os.path.join(root, "checks", f"{i:02d}-{name}"), "w") as f:
            f.write(f"# check {name} of configuration {cfg.name} (scripts/vm/checks.py)\n")
            # Read by scripts/vm/init: this check's own time limit.
            f.write(f"# timeout: {cfg.timeout_of(name)}\n")
            f.write(guest(cfg))
    initrd = os.path.join(workdir, "initrd.cpio")
    files = subprocess.run(["find", "."], cwd=root, check=True, capture_output=True).stdout
    with open(initrd, "wb") as out:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files,
                       stdout=out, check=True)
    return initrd


def pending_checks(cfg, numaprobe, unit_tests=None):
    """{check name: reason} for the checks whose subcommand or flags the
    binary does not have yet (its --help is the authority), and those that
    run a unit-test binary when none was given."""
    helps, pending = {}, {}
    for name in cfg.checks:
        if getattr(CHECKS[name], "needs_unit_tests", False) and not unit_tests:
            pending[name] = ("no unit-test binary given (rig.py --unit-tests; "
                             "scripts/vm-test-arm64 builds one for aarch64)")
            continue
        only = getattr(CHECKS[name], "only_arches", None)
        if only and cfg.arch.name not in only:
            pending[name] = (f"runs on {', '.join(only)} only: "
                             f"{getattr(CHECKS[name], 'only_why', '')}")
            continue
        for sub, flags in CHECKS[name].needs.items():
            if sub not in helps:
                r = subprocess.run(cfg.arch.help_runner + [numaprobe, sub, "--help"],
                                   capture_output=True, text=True)
                helps[sub] = r.stdout if r.returncode == 0 else ""
            lacking = [f for f in flags if f not in helps[sub]]
            if lacking:
                pending[name] = (f"pending: `numaprobe {sub}` does not have "
                                 f"{' '.join(lacking)} yet")
                break
    return pending


def parse_results(text):
    """Sections written by scripts/vm/init: {check file name: Result}, and
    whether the guest got to the end."""
    results, done = {}, False
    cur, section, buf = None, None, {"STDOUT": [], "STDERR": []}
    for line in text.split("\n"):
        if line.startswith("@@NUMAPROBE-VM DONE"):
            done = True
        elif line.startswith("@@BEGIN "):
            cur, section, buf = line[8:], None, {"STDOUT": [], "STDERR": []}
        elif cur and line in ("@@STDOUT", "@@STDERR"):
            section = line[2:]
        elif cur and line.startswith("@@RC "):
            # init wrote each output followed by one newline, so the lines
            # between two markers, joined, are exactly that output.
            results[cur] = Result("\n".join(buf["STDOUT"]), "\n".join(buf["STDERR"]), int(line[5:]))
            section = None
        elif cur in results and line.startswith("@@SPAN "):
            try:
                a, b = (float(x) for x in line[7:].split())
                results[cur].span = (a, b)
            except ValueError:
                pass
        elif cur and line.startswith("@@END "):
            cur = None
        elif cur and section:
            buf[section].append(line)
    return results, done


def tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no console log)"


def run_config(cfg, args):
    # x86-64 keeps the folder names it always had; other guests get a suffix.
    suffix = "" if cfg.arch is X86_64 else f"-{cfg.arch.name}"
    workdir = os.path.join(REPO, "target", "vm-runs", cfg.name + suffix)
    os.makedirs(workdir, exist_ok=True)
    pending = pending_checks(cfg, args.numaprobe, args.unit_tests)
    if all(name in pending for name in cfg.checks):
        # Nothing to run: no boot.
        print(f"== vm {cfg.name} ({cfg.arch.name}): not booted, every check is pending", flush=True)
        for name in cfg.checks:
            print(f"SKIP {cfg.name}/{name}: {pending[name]}")
        return {"passed": 0, "failed": 0, "skipped": len(cfg.checks)}, 0.0
    initrd = build_initramfs(cfg, args, workdir, pending)
    results_path = os.path.join(workdir, "results.txt")
    console_path = os.path.join(workdir, "console.log")
    for p in (results_path, console_path):
        if os.path.exists(p):
            os.remove(p)
    cmd = cfg.qemu_args(args.kernel, initrd, results_path)
    with open(os.path.join(workdir, "qemu-command.sh"), "w") as f:
        f.write(" ".join(shlex.quote(a) for a in cmd) + "\n")
    print(f"== vm {cfg.name} ({cfg.arch.name}): {cfg.description}", flush=True)
    if cfg.hmat_requested and not cfg.hmat:
        print(f"   (no HMAT on {cfg.arch.name}: the checks expect none; see scripts/vm/arch.py)")
    timeout = args.timeout or (cfg.vm_timeout_s or DEFAULT_VM_TIMEOUT_S) * cfg.arch.timeout_factor
    start = time.monotonic()
    timed_out = False
    with open(console_path, "wb") as console:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=console,
                                stderr=subprocess.STDOUT)
        try:
            qrc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            qrc, timed_out = None, True
    elapsed = time.monotonic() - start

    text = ""
    if os.path.exists(results_path):
        with open(results_path, errors="replace") as f:
            text = f.read().replace("\r", "")
    results, done = parse_results(text)
    spans = [r.span for r in results.values() if r.span]
    # The first check starts when the kernel has booted and init has run.
    booted = f" (guest booted in {min(a for a, _ in spans):.1f} s)" if spans else ""
    print(f"   boot to result: {elapsed:.1f} s{booted}", flush=True)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    problems = []
    if timed_out:
        problems.append(f"the VM did not finish within {timeout} s (killed)")
    elif qrc != 0:
        problems.append(f"qemu exited with status {qrc}")
    if not done:
        problems.append("the guest never wrote its end marker (crashed, hung or was killed); "
                        f"{len(results)} of {len(cfg.checks) - len(pending)} checks reported")
    if problems:
        counts["failed"] += 1
        for p in problems:
            print(f"FAIL {cfg.name}/boot: {p}")
    for i, name in enumerate(cfg.checks):
        res = results.get(f"{i:02d}-{name}")
        label = f"{cfg.name}/{name}"
        if name in pending:
            print(f"SKIP {label}: {pending[name]}")
            counts["skipped"] += 1
            continue
        if res is None:
            print(f"FAIL {label}: no result from the guest")
            counts["failed"] += 1
            continue
        t = T()
        try:
            if CHECKS[name].save:
                CHECKS[name].save(cfg, res, os.path.join(workdir, name))
            CHECKS[name].verify(cfg, res, t)
        except Skip as s:
            print(f"SKIP {label}: {s}")
            counts["skipped"] += 1
            continue
        except Exception as e:  # a check that crashes is a failure, said plainly
            t.fail(f"the host-side check raised {type(e).__name__}: {e}")
        took = f" ({res.span[1] - res.span[0]:.1f} s)" if res.span else ""
        if t.problems:
            counts["failed"] += 1
            print(f"FAIL {label}{took}:")
            for p in t.problems:
                print(f"       - {p}")
            for note in t.notes:
                print(f"       {note}")
            if res.rc in (124, 143):
                print(f"       (exit status {res.rc}: probably killed by the guest's "
                      f"{cfg.timeout_of(name)} s per-check timeout)")
            print(f"       guest stdout: {CHECKS[name].show(res)!r}")
            print(f"       guest stderr (first 800 chars): {res.stderr[:800]!r}")
        else:
            print(f"PASS {label}{took}")
            for note in t.notes:
                print(f"       {note}")
            counts["passed"] += 1
    if counts["failed"]:
        print(f"--- last lines of the VM console ({console_path}):")
        print(tail(console_path))
        print(f"--- artifacts: {workdir}")
    return counts, elapsed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arch", choices=sorted(ARCHES), default="x86_64",
                   help="guest architecture (scripts/vm/arch.py)")
    p.add_argument("--kernel", required=True)
    p.add_argument("--busybox", required=True)
    p.add_argument("--numaprobe", required=True)
    p.add_argument("--unit-tests", help="a static numaprobe-core unit-test binary for the "
                   "guest: packed as /bin/numaprobe-core-tests for the core-unit-tests check")
    p.add_argument("--timeout", type=float,
                   default=float(os.environ.get("NUMAPROBE_VM_TIMEOUT", "0")) or None,
                   help="seconds before a VM is killed (a hang guard, not a "
                        "performance limit; env NUMAPROBE_VM_TIMEOUT; default: the "
                        f"configuration's vm_timeout_s, else {DEFAULT_VM_TIMEOUT_S})")
    p.add_argument("configs", nargs="*",
                   help="configuration names (files in scripts/vm/configs/); default: all")
    args = p.parse_args()

    arch = ARCHES[args.arch]
    for path in (args.busybox, args.numaprobe, args.unit_tests):
        if path and not is_static_elf(path, arch.elf_machine):
            sys.exit(f"vm-test: {path} is not a static {arch.name} executable; "
                     "the initramfs has no libc")

    names = args.configs or sorted(f[:-5] for f in os.listdir(CONFIG_DIR) if f.endswith(".toml"))
    configs = []
    for name in names:
        path = os.path.join(CONFIG_DIR, name + ".toml")
        if not os.path.exists(path):
            sys.exit(f"vm-test: no configuration {name!r} ({path})")
        configs.append(Config(path, arch))

    total = {"passed": 0, "failed": 0, "skipped": 0}
    times = []
    for cfg in configs:
        counts, elapsed = run_config(cfg, args)
        times.append(f"{cfg.name} {elapsed:.1f} s")
        for k in total:
            total[k] += counts[k]
    print(f"boot to result: {', '.join(times)}")
    print(f"vm-test: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
    return 1 if total["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
