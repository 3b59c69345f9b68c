"""The main job's checks: the default `numaprobe run` end to end on
a machine of many small one-CPU nodes, and the same run stopped by SIGINT.

main-job runs `numaprobe run --report-dir D` with nothing else (default budget,
default sizes), times it with the guest's clock, and sends back its exit
status, the tail of its stderr, the kernel log of the run (dmesg, cleared
before it), a summary of /proc/zoneinfo before and after, and the report folder
(tar | gzip | base64). The host asserts: exit 0 with no failed cell, run.json
complete with every cell of both matrices placed (>= 99 % of the pages on the
memory node, CPUs of the CPU node), the extra phases (c2c, loaded
latency, system peak) each present in run.json and not failed (skipped only
with a reason; measured or partial with its result and its file in the
folder), wall time within the budget plus the machine's stated allowance, and
no OOM kill in the kernel log. The matrices come first: with
`[check_options.main-job] matrices = "complete"` every cell of both matrices
must be measured; with `matrices = "stated"` the run must instead have said
before measuring that the budget cannot hold them (run.json `plan.statement`,
the line printed before the first cell, with a `sound_budget_s` above the
budget), and measured every
cell its plan kept. Either way run.json's `status` must agree with its
`complete`, and `plan.setup_s` must be the sum of the phases' buffer set-ups,
one per memory node and matrix.

main-job-interrupt starts the same command, waits until latency.json holds a
cell, sends SIGINT as a Ctrl-C would, and asserts exit status 130 with a valid
partial report (run.json with complete false, latency.json's cells placed,
summary.md, no extra phase failed).

Section lines ("@@@ NAME ARGS", then the section's body) carry the results;
`sections()` reads them back.
"""

import base64
import io
import json
import os
import shutil
import re
import tarfile

from checks import check

# What the main job promises for the default run; run.json's budget_s, when the
# binary writes it, must say the same.
DEFAULT_BUDGET_S = 60
# Seconds beyond the budget a run may take for what the budget does not
# cover: process start, topology read, inference, rendering and writing the
# report. The default suits small machines; a configuration states its own
# in [check_options.main-job] allowance_s, with the measurement behind it.
DEFAULT_ALLOWANCE_S = 15
# A cell with a smaller share of its pages on the intended node is misplaced
# (the engine's own placement_threshold).
PLACEMENT_MIN = 0.99
# Kernel log lines that mean the OOM killer ran (mm/oom_kill.c's messages).
OOM_RE = re.compile(r"out of memory|oom-kill|oom_reaper|killed process", re.I)
# Seconds of a check's time limit kept for sending dmesg and the report after
# numaprobe's own limit (`timeout` inside the guest) has run out.
SEND_RESERVE_S = 40

# Per memory zone: free pages, watermarks, managed pages and what the
# per-CPU free lists (pcp) hold, summed over CPUs and at most on one CPU. The
# kernel does not count pcp pages as free, so they explain memory that is
# neither used nor allocatable on a node.
ZONES_FN = r"""
zones() {
    awk '
    function flush() {
        if (zone != "" && managed > 0)
            printf "zone node %s %s free %d min %d low %d high %d managed %d pcp_count %d pcp_count_max %d pcp_high_max %d pcp_cpus %d\n", node, zone, free, min, low, high, managed, pcp, pcpmax, pcph, ncpu
    }
    /^Node/ { flush(); node = $2; sub(",", "", node); zone = $4
              free = min = low = high = managed = pcp = pcpmax = pcph = ncpu = 0 }
    $1 == "pages" && $2 == "free" { free = $3 }
    $1 == "min" { min = $2 }
    $1 == "low" { low = $2 }
    $1 == "high" { high = $2 }
    $1 == "managed" { managed = $2 }
    $1 == "count:" { pcp += $2; ncpu++; if ($2 > pcpmax) pcpmax = $2 }
    $1 == "high:" { if ($2 > pcph) pcph = $2 }
    END { flush() }
    ' /proc/zoneinfo
}
"""


def options(cfg, name):
    return cfg.check_options.get(name, {})


def inner_timeout(cfg, name):
    return max(30, cfg.timeout_of(name) - SEND_RESERVE_S)


def send_report(folder):
    return (f'if [ -d "{folder}" ]; then echo "@@@ report"; '
            f'tar -C "{folder}" -cf - . | gzip -c | base64; fi\n')


def main_job_guest(cfg):
    r = "/tmp/main-job"
    return ZONES_FN + f"""
rm -rf {r}
echo "@@@ zoneinfo-before"; zones
# Only what the run itself logs: an OOM kill during it must not hide in (or
# be confused with) the boot messages.
dmesg -c > /dev/null
read t0 rest < /proc/uptime
timeout {inner_timeout(cfg, "main-job")} numaprobe run --report-dir {r} > /tmp/run.out 2> /tmp/run.err
rc=$?
read t1 rest < /proc/uptime
echo "@@@ rc $rc"
echo "@@@ wall $t0 $t1"
echo "@@@ zoneinfo-after"; zones
echo "@@@ stderr"; tail -n 40 /tmp/run.err
echo "@@@ dmesg"; dmesg
""" + send_report(r) + 'echo "@@@ end"\n'


def interrupt_guest(cfg):
    r = "/tmp/main-job-interrupt"
    polls = inner_timeout(cfg, "main-job-interrupt") * 5
    # numaprobe runs in the foreground, as under a terminal: a background
    # job of a non-interactive shell starts with SIGINT ignored, which is not
    # what Ctrl-C meets. The watcher in the background sends the signal once
    # latency.json (written atomically after every cell) holds a cell.
    return f"""
rm -rf {r} /tmp/interrupt.sent
(
    i=0; gone=0
    while [ $i -lt {polls} ]; do
        usleep 200000; i=$((i + 1))
        if grep -q '"cpu_node":' {r}/latency.json 2>/dev/null; then
            read t rest < /proc/uptime
            echo "$t" > /tmp/interrupt.sent
            kill -INT $(pidof numaprobe)
            exit 0
        fi
        if pidof numaprobe > /dev/null; then gone=0; else gone=$((gone + 1)); fi
        [ $gone -lt 10 ] || exit 0
    done
) &
watcher=$!
timeout {inner_timeout(cfg, "main-job-interrupt")} numaprobe run --report-dir {r} > /tmp/int.out 2> /tmp/int.err
rc=$?
read t1 rest < /proc/uptime
wait $watcher
echo "@@@ rc $rc"
echo "@@@ sent $(cat /tmp/interrupt.sent 2>/dev/null)"
echo "@@@ exited $t1"
echo "@@@ stderr"; tail -n 40 /tmp/int.err
""" + send_report(r) + 'echo "@@@ end"\n'


def sections(stdout):
    """{name: (argument words, body lines)} from the guest's section lines."""
    out, cur = {}, None
    for line in stdout.splitlines():
        if line.startswith("@@@ "):
            w = line[4:].split()
            cur = w[0] if w else ""
            out[cur] = (w[1:], [])
        elif cur is not None:
            out[cur][1].append(line)
    return out


def unpack_report(secs):
    """{file name: bytes} of the report folder the guest sent, or None."""
    if "report" not in secs:
        return None
    data = base64.b64decode("".join(secs["report"][1]))
    files = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                files[os.path.basename(m.name)] = tar.extractfile(m).read()
    return files


def save_sections(cfg, res, folder):
    """Keep the report folder, dmesg, stderr and zone summaries on the host,
    under target/vm-runs/CONFIG/CHECK/."""
    secs = sections(res.stdout)
    # The folder shows this run only: files an earlier run saved (say, its
    # infer-bandwidth.json when this run measured no bandwidth) would pass
    # for this run's.
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)
    try:
        files = unpack_report(secs) or {}
    except (ValueError, tarfile.TarError, EOFError):
        files = {}
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    for name in ("dmesg", "stderr", "zoneinfo-before", "zoneinfo-after"):
        if name in secs:
            with open(os.path.join(folder, name + ".txt"), "w") as f:
                f.write("\n".join(secs[name][1]) + "\n")


def show_sections(res):
    """The guest's stdout for a failure message: the report's base64 and
    the kernel log left out (they are saved under target/vm-runs/)."""
    out = []
    for name, (args, body) in sections(res.stdout).items():
        out.append(" ".join(["@@@", name] + args))
        if name == "report":
            out.append(f"({sum(len(b) for b in body)} base64 characters, unpacked in the artifacts)")
        elif name == "dmesg":
            out.append(f"({len(body)} lines, in the artifacts; OOM lines: {len(oom_lines_of(body))})")
        else:
            out += body
    return "\n".join(out)[:3000]


def load_json(t, files, name):
    if files is None or name not in files:
        t.fail(f"{name} missing from the report folder "
               f"(files: {sorted(files) if files is not None else 'no report folder'})")
        return None
    try:
        return json.loads(files[name])
    except ValueError as e:
        t.fail(f"{name} does not parse as JSON ({e})")
        return None


def failed_cells(run):
    """Reasons of the cells the run says it could not measure: any non-empty
    list under a key naming failures (top level or in a matrix), and cells
    carrying an error."""
    out = []
    docs = [("", run)] + [(k, run.get(k)) for k in ("latency", "bandwidth")]
    for kind, doc in docs:
        if not isinstance(doc, dict):
            continue
        for key, val in doc.items():
            if "fail" in key and isinstance(val, list):
                for item in val:
                    if isinstance(item, dict):
                        where = f"{item.get('cpu_node')}>{item.get('mem_node')}"
                        why = item.get("reason") or item.get("error") or json.dumps(item)
                        out.append(f"{kind or key} cell {where}: {why}")
                    else:
                        out.append(f"{kind or key}: {item}")
        for cell in doc.get("cells") or []:
            err = cell.get("error") if isinstance(cell, dict) else None
            if err:
                out.append(f"{kind} cell {cell.get('cpu_node')}>{cell.get('mem_node')}: {err}")
    return out


def run_complete(run):
    """run.json's own `complete` when it has one, else both matrices'."""
    if "complete" in run:
        return run["complete"]
    mats = [run.get("latency"), run.get("bandwidth")]
    return all(isinstance(m, dict) and m.get("complete") is True for m in mats)


def planned_skips(run, kind):
    """The cells of matrix `kind` the run's plan says it left out to keep
    the budget (run.json `plan.phases[].skipped`, [cpu_node, mem_node]
    pairs), as a set; empty without a plan."""
    plan = run.get("plan") if isinstance(run, dict) else None
    out = set()
    for phase in (plan or {}).get("phases") or []:
        if phase.get("phase") == kind:
            for cell in phase.get("skipped") or []:
                if isinstance(cell, dict):
                    out.add((cell.get("cpu_node"), cell.get("mem_node")))
                elif isinstance(cell, list) and len(cell) == 2:
                    out.add(tuple(cell))
    return out


def check_cells(cfg, t, doc, what, whole, skipped=frozenset()):
    """Every cell of a matrix document placed right; with `whole`, every
    CPU node x memory node cell there unless `skipped` (the plan's own list
    of cells left out). Returns the number of cells."""
    cpu_nodes = [n.id for n in cfg.nodes if n.cpus]
    want = sorted((c, m) for c in cpu_nodes for m in cfg.node_ids)
    if not isinstance(doc, dict):
        if whole and set(want) <= set(skipped):
            return 0
        t.fail(f"{what}: no matrix (got {doc!r}), and the plan does not say it was skipped")
        return 0
    cells = doc.get("cells") or []
    if whole:
        t.eq(doc.get("cpu_nodes"), cpu_nodes, f"{what}: cpu_nodes")
        t.eq(doc.get("mem_nodes"), cfg.node_ids, f"{what}: mem_nodes")
        got = sorted((c.get("cpu_node"), c.get("mem_node")) for c in cells)
        missing = sorted(set(want) - set(got) - set(skipped))
        t.true(not missing, f"{what}: {len(missing)} of {len(want)} cells neither measured nor "
               f"skipped by the plan (first: {', '.join(f'{a}>{b}' for a, b in missing[:8])})")
    bad = []
    for cell in cells:
        cn, mn = cell.get("cpu_node"), cell.get("mem_node")
        frac = (cell.get("placement") or {}).get("fraction_on_intended")
        used = cell.get("cpus")
        want = cfg.node(cn).cpus if cn in cfg.node_ids else None
        if not isinstance(frac, (int, float)) or frac < PLACEMENT_MIN:
            bad.append(f"{cn}>{mn} placement {frac!r} < {PLACEMENT_MIN}")
        if not (used and want and set(used) <= set(want)):
            bad.append(f"{cn}>{mn} CPUs {used!r} not of node {cn} ({want!r})")
    t.true(not bad, f"{what}: {len(bad)} misplaced cell(s): {'; '.join(bad[:8])}")
    return len(cells)


# The main job's extra phases: run.json key and report file.
EXTRAS = (("c2c", "c2c.json"), ("loaded_latency", "loaded-latency.json"),
          ("peak", "peak.json"), ("sweep", "sweep.json"))


def check_extras(t, run, files, interrupted=False):
    """Each extra phase in run.json with a status that is not `failed`: a
    skipped or partial one says why, a measured or partial one has its
    result and its document in the report folder. After an interrupt a
    phase may be missing (the run stopped before writing it as planned).
    Returns one summary word per phase for the check's note."""
    out = []
    for key, fname in EXTRAS:
        x = run.get(key)
        if not isinstance(x, dict):
            if not interrupted:
                t.fail(f"run.json: no {key} phase (got {x!r})")
            continue
        status, reason = x.get("status"), x.get("reason")
        if status == "failed":
            t.fail(f"{key}: failed: {reason}")
        elif status in ("skipped", "partial") and not (isinstance(reason, str) and reason):
            t.fail(f"{key}: {status} without a reason")
        if status in ("measured", "partial"):
            t.true(isinstance(x.get("result"), dict), f"{key}: {status} without a result")
            t.true(files is not None and fname in files,
                   f"{key}: {status}, but {fname} is missing from the report folder")
        elif status not in ("skipped", "failed"):
            t.fail(f"{key}: unknown status {status!r}")
        if key == "c2c" and status == "measured":
            check_c2c_domains(t, x.get("result") or {})
        share = x.get("share_s")
        out.append(f"{key} {status}" + (f" in {x.get('elapsed_s', 0):.1f}/{share:.1f} s"
                                         if isinstance(share, (int, float)) else "")
                   + (f" ({reason})" if reason and status != "measured" else ""))
    return out


def phase_records(run):
    """{"latency": phase record, "bandwidth": ...} from run.json's plan."""
    plan = run.get("plan") if isinstance(run, dict) else None
    return {p.get("phase"): p for p in (plan or {}).get("phases") or [] if isinstance(p, dict)}


def check_matrices_first(cfg, t, run):
    """The matrices before any extra phase: complete, or the run said
    before measuring that the budget cannot hold them (the configuration's
    `matrices` option says which this machine must show). Also: every cell
    the plan kept was measured, one buffer set-up per memory node and
    matrix, and `status` agrees with `complete`."""
    want = options(cfg, "main-job").get("matrices", "complete")
    plan = run.get("plan") or {}
    phases = phase_records(run)
    full = len([x for x in cfg.nodes if x.cpus]) * len(cfg.nodes)
    mem_nodes = {n.id for n in cfg.nodes}
    for k in ("latency", "bandwidth"):
        p = phases.get(k)
        if not t.true(isinstance(p, dict), f"run.json plan: no {k} phase"):
            continue
        t.eq(p.get("measured_cells"), p.get("planned_cells"),
             f"{k}: cells measured vs the cells its plan kept (re-planned when it began: "
             f"{p.get('reason')!r})")
        setups = p.get("setups") or []
        cells = (run.get(k) or {}).get("cells") or []
        if cells:
            measured_on = sorted({c.get("mem_node") for c in cells})
            t.eq(sorted(s.get("mem_node") for s in setups), measured_on,
                 f"{k}: one buffer set-up per memory node measured")
            t.true(set(measured_on) <= mem_nodes, f"{k}: memory nodes {measured_on}")
        if want == "complete":
            t.eq(p.get("measured_cells"), full, f"{k}: cells measured of the {full} of the matrix "
                 f"(the matrices come first; plan: {p.get('coverage')}, {p.get('reason')!r})")
    total = sum((p.get("setup_s") or 0) for p in phases.values())
    t.true(abs((plan.get("setup_s") or 0) - total) < 1e-6,
           f"run.json plan.setup_s {plan.get('setup_s')!r} is not the phases' set-ups ({total:.3f} s)")
    if want == "stated":
        said = plan.get("statement")
        sound = plan.get("sound_budget_s")
        if t.true(isinstance(said, str) and said, "the plan did not say before measuring that "
                  "the budget cannot hold both matrices (plan.statement is empty)"):
            t.true(isinstance(sound, (int, float)) and sound > DEFAULT_BUDGET_S,
                   f"plan.sound_budget_s {sound!r} is not above the {DEFAULT_BUDGET_S} s budget")
    status = run.get("status")
    if t.true(isinstance(status, dict), "run.json: no status"):
        t.eq(status.get("complete"), run.get("complete"), "run.json: status.complete vs complete")
        kinds = {s.get("shortfall") for s in status.get("phases") or []}
        t.true(not kinds & {"interrupted", "failed"},
               f"run.json status: a phase interrupted or failed: {status.get('phases')}")
    t.note(f"matrices ({want}): " + ", ".join(
        f"{k} {phases.get(k, {}).get('measured_cells')}/{full} cells, "
        f"{len(phases.get(k, {}).get('setups') or [])} set-ups in "
        f"{phases.get(k, {}).get('setup_s') or 0:.1f} s" for k in ("latency", "bandwidth"))
        + f"; sound budget {plan.get('sound_budget_s') or 0:.0f} s")


def check_c2c_domains(t, doc):
    """The job's c2c is the summary by domain (`--pairs domains`): one pair
    per sharing domain, both directions, every pair's domain summarised."""
    pairs, doms = doc.get("pairs"), doc.get("domains")
    if not t.true(isinstance(pairs, list) and isinstance(doms, list) and doms,
                  f"c2c: no pairs or domains in the result ({sorted(doc)})"):
        return
    names = [d.get("domain") for d in doms]
    t.eq(len(pairs), 2 * len(names),
         f"c2c: {len(pairs)} pairs for domains {names} (one pair per domain, both ways)")
    t.true({p.get("domain") for p in pairs} == set(names),
           f"c2c: pairs' domains {sorted({p.get('domain') for p in pairs})} vs summary {names}")


def oom_lines_of(lines):
    return [ln for ln in lines if OOM_RE.search(ln)]


def oom_lines(secs):
    return oom_lines_of(secs.get("dmesg", ([], []))[1])


def exit_reason(rc):
    return {124: " (killed by the guest's timeout: it ran too long)",
            137: " (SIGKILL: the OOM killer?)",
            130: " (SIGINT)", 143: " (SIGTERM: the guest's time limit for it ran out?)"}.get(rc, "")


def word(secs, name, i=0):
    try:
        return float(secs[name][0][i])
    except (KeyError, IndexError, ValueError):
        return None


def reported_rc(secs, res, t):
    """numaprobe's exit status as the guest script reported it; None, and a
    failed check, when the guest never got that far."""
    if not t.true("rc" in secs, f"the guest script never reported numaprobe's exit "
                  f"(guest exit {res.rc}, stderr {res.stderr[-300:]!r})"):
        return None
    return int(word(secs, "rc"))


def stderr_tail(secs):
    return " | ".join(ln for ln in secs.get("stderr", ([], []))[1][-5:] if ln.strip())


@check("main-job", main_job_guest, needs={"run": ["--report-dir"]},
       save=save_sections, show=show_sections)
def main_job(cfg, res, t):
    secs = sections(res.stdout)
    rc = reported_rc(secs, res, t)
    if rc is None:
        return
    t.eq(rc, 0, f"exit status of `numaprobe run`{exit_reason(rc)}; stderr: {stderr_tail(secs)!r}")
    ooms = oom_lines(secs)
    t.true(not ooms, f"the kernel logged an OOM kill during the run: {' | '.join(ooms[:4])}")
    files = unpack_report(secs)
    run = load_json(t, files, "run.json")
    if run is None:
        return
    for why in failed_cells(run):
        t.fail(f"failed cell: {why}")
    t.eq(run_complete(run), True, "run.json: complete")
    # A run too short for every cell may leave cells out, if its plan says
    # which; every cell it measured must be placed right.
    coverage = []
    n = 0
    for k in ("latency", "bandwidth"):
        skipped = planned_skips(run, k)
        # Failed cells are reported above with their reasons, not again as missing.
        failed = {(c.get("cpu_node"), c.get("mem_node"))
                  for c in (run.get(k) or {}).get("failed") or [] if isinstance(c, dict)}
        got = check_cells(cfg, t, run.get(k), f"run.json {k}", whole=True,
                          skipped=skipped | failed)
        n += got
        full = len([x for x in cfg.nodes if x.cpus]) * len(cfg.nodes)
        coverage.append(f"{k} {got}/{full} cells" + (f" ({len(skipped)} skipped by the plan)"
                                                      if skipped else ""))
    check_matrices_first(cfg, t, run)
    coverage += check_extras(t, run, files)

    budget = DEFAULT_BUDGET_S
    if "budget_s" in run:
        t.eq(run["budget_s"], budget, "run.json: budget_s (the default budget)")
    allowance = options(cfg, "main-job").get("allowance_s", DEFAULT_ALLOWANCE_S)
    limit = budget + allowance
    t0, t1 = word(secs, "wall", 0), word(secs, "wall", 1)
    wall = t1 - t0 if t0 is not None and t1 is not None else None
    if t.true(wall is not None, "the guest did not report the run's wall time"):
        t.true(wall <= limit, f"wall time {wall:.1f} s over the budget {budget} s "
               f"+ allowance {allowance} s = {limit} s")
    elapsed = run.get("elapsed_s")
    if elapsed is not None:
        t.true(elapsed <= limit, f"run.json elapsed_s {elapsed:.1f} s over {limit} s")
        if wall is not None:
            # The guest's clock has centiseconds; the process also starts and exits.
            t.true(elapsed <= wall + 0.5,
                   f"run.json elapsed_s {elapsed:.1f} s longer than the wall time "
                   f"measured around the command ({wall:.1f} s)")
    spent = [c.get("elapsed_s", 0) + c.get("setup_s", 0)
             for k in ("latency", "bandwidth") if isinstance(run.get(k), dict)
             for c in run[k].get("cells") or []]
    if wall is not None:
        t.note(f"wall {wall:.1f} s (budget {budget} s + allowance {allowance} s); "
               f"{n} cells, {sum(spent):.1f} s in cells (set-up + sampling), "
               f"{wall - sum(spent):.1f} s outside them; exit {rc}")
    t.note("coverage: " + ", ".join(coverage))


@check("main-job-interrupt", interrupt_guest, needs={"run": ["--report-dir"]},
       save=save_sections, show=show_sections)
def main_job_interrupt(cfg, res, t):
    secs = sections(res.stdout)
    rc = reported_rc(secs, res, t)
    if rc is None:
        return
    sent, exited = word(secs, "sent"), word(secs, "exited")
    if not t.true(sent is not None, f"latency.json never held a cell, so no SIGINT was sent "
                  f"(numaprobe exit {rc}{exit_reason(rc)}; stderr: {stderr_tail(secs)!r})"):
        return
    files = unpack_report(secs)
    t.eq(rc, 130, f"exit status after SIGINT{exit_reason(rc)}; stderr: {stderr_tail(secs)!r}")
    if rc == 130 and (files is None or "run.json" not in files):
        # The shell shows a kill by the signal and exit(130) alike; stderr
        # tells them apart for a reader (a stopped run says it stopped).
        t.fail("exit 130 and no run.json: SIGINT killed numaprobe (no handler), or it stopped "
               f"and failed before writing its final report; stderr: {stderr_tail(secs)!r}")
        return
    run = load_json(t, files, "run.json")
    lat = load_json(t, files, "latency.json")
    if files is not None:
        t.true(files.get("summary.md", b"").startswith(b"# numaprobe report"),
               "summary.md missing or not the report's Markdown")
    if run is not None:
        t.eq(run_complete(run), False, "run.json: complete (the run was interrupted)")
        for k in ("latency", "bandwidth"):
            if run.get(k) is not None:
                check_cells(cfg, t, run[k], f"run.json {k}", whole=False)
        extras = check_extras(t, run, files, interrupted=True)
        if extras:
            t.note("extras: " + ", ".join(extras))
    if lat is not None:
        n = check_cells(cfg, t, lat, "latency.json", whole=False)
        t.true(n >= 1, "latency.json: no cell kept")
        full = len([x for x in cfg.nodes if x.cpus]) * len(cfg.nodes)
        if n < full:
            t.eq(lat.get("complete"), False, f"latency.json: complete ({n} of {full} cells)")
            t.eq(lat.get("interrupted"), True, f"latency.json: interrupted ({n} of {full} cells)")
        if exited is not None:
            t.note(f"{n} latency cell(s) kept; exit {rc} {exited - sent:.1f} s after SIGINT")
