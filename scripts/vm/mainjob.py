"""The main job's checks: the default `numaprobe run` end to end on
a machine of many small one-CPU nodes, and the same run stopped by SIGINT.

Every assert judges what the run stated (its plan, what it said it dropped
and why, the cells it says it measured) and the figures' correctness
(placement, the CPUs used), never how much a host of a given speed gets
done: a loaded host makes the planner cut more, which is right as long as
the run says so. The coverage of both matrices at a budget the plan calls
sound is soundjob.py's check.

main-job runs `numaprobe run --report-dir D` with nothing else (default budget,
default sizes), times it with the guest's clock, and sends back its exit
status, the tail of its stderr, the kernel log of the run (dmesg, cleared
before it), a summary of /proc/zoneinfo before and after, and the report folder
(tar | gzip | base64). The host asserts: exit 0 with no failed cell, run.json
complete with every measured cell placed (>= 99 % of the pages on the
memory node, CPUs of the CPU node); each matrix holds every cell its plan
kept, and every cell of the full matrix is measured or named in the plan's
`skipped` with a reason, the plan having said so before measuring
(`plan.statement`, with a `sound_budget_s` above the budget) or the phase
having been re-planned when it began (its reason says so); the extra phases
(c2c, loaded latency, system peak, sweep) each present and not failed
(skipped only with a reason; measured or partial with its result and its
file in the folder); the budget kept: run.json's `elapsed_s` (the run's own
clock, calibration to last step) within `budget_s` plus the machine's stated
allowance; no OOM kill in the kernel log. run.json's `status` must agree
with its `complete`, and each matrix's `setups` must be its buffer set-ups,
one per memory node measured.

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
from mainjob_report import (check_cells, check_extras, check_matrices_stated, failed_cells,
                            matrices_note, planned_skips, run_complete)

# What the main job promises for the default run; run.json's budget_s, when the
# binary writes it, must say the same.
DEFAULT_BUDGET_S = 60
# Seconds beyond the budget a run may take for what the budget does not
# cover: process start, topology read, inference, rendering and writing the
# report. The default suits small machines; a configuration states its own
# in [check_options.main-job] allowance_s, with the measurement behind it.
DEFAULT_ALLOWANCE_S = 15
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


def judge_run(cfg, t, secs, res):
    """What every finished main job must show, whatever its budget: exit 0,
    no OOM kill, run.json complete with no failed cell, each matrix's cells
    measured or named skipped by the plan (with the reason and the statement
    check_matrices_stated asks for) and every measured cell placed, the
    extra phases not failed. Returns (run.json, report files, cells
    measured, coverage words, phase records), run.json None when it is
    missing."""
    rc = reported_rc(secs, res, t)
    if rc is None:
        return None, None, 0, [], {}
    t.eq(rc, 0, f"exit status of `numaprobe run`{exit_reason(rc)}; stderr: {stderr_tail(secs)!r}")
    ooms = oom_lines(secs)
    t.true(not ooms, f"the kernel logged an OOM kill during the run: {' | '.join(ooms[:4])}")
    files = unpack_report(secs)
    run = load_json(t, files, "run.json")
    if run is None:
        return None, files, 0, [], {}
    for why in failed_cells(run):
        t.fail(f"failed cell: {why}")
    t.eq(run_complete(run), True, "run.json: complete")
    n = 0
    for k in ("latency", "bandwidth"):
        skipped = planned_skips(run, k)
        # Failed cells are reported above with their reasons, not again as missing.
        failed = {(c.get("cpu_node"), c.get("mem_node"))
                  for c in (run.get(k) or {}).get("failed") or [] if isinstance(c, dict)}
        n += check_cells(cfg, t, run.get(k), f"run.json {k}", whole=True,
                         skipped=skipped | failed)
    phases = check_matrices_stated(cfg, t, run)
    coverage = [matrices_note(cfg, run, phases)] + check_extras(t, run, files)
    return run, files, n, coverage, phases


def guest_wall(secs):
    """Seconds around the command on the guest's clock, or None."""
    t0, t1 = word(secs, "wall", 0), word(secs, "wall", 1)
    return t1 - t0 if t0 is not None and t1 is not None else None


@check("main-job", main_job_guest, needs={"run": ["--report-dir"]},
       save=save_sections, show=show_sections)
def main_job(cfg, res, t):
    secs = sections(res.stdout)
    run, files, n, coverage, _ = judge_run(cfg, t, secs, res)
    if run is None:
        return
    # Keeping the budget is the default run's promise, judged by the run's
    # own clock (run.json elapsed_s: from the calibration to the last step,
    # what the budget governs). Start-up and writing the report lie outside
    # it and take what the host gives an emulated CPU: the wall time around
    # the command is shown, not judged.
    budget = DEFAULT_BUDGET_S
    t.eq(run.get("budget_s"), budget, "run.json: budget_s (the default budget)")
    allowance = options(cfg, "main-job").get("allowance_s", DEFAULT_ALLOWANCE_S)
    limit = budget + allowance
    elapsed = run.get("elapsed_s")
    wall = guest_wall(secs)
    if t.true(isinstance(elapsed, (int, float)), f"run.json: no elapsed_s ({elapsed!r})"):
        t.true(elapsed <= limit, f"run.json elapsed_s {elapsed:.1f} s over the budget {budget} s "
               f"+ allowance {allowance} s = {limit} s")
        if wall is not None:
            # The guest's clock has centiseconds; the process also starts and exits.
            t.true(elapsed <= wall + 0.5,
                   f"run.json elapsed_s {elapsed:.1f} s longer than the wall time "
                   f"measured around the command ({wall:.1f} s)")
    spent = [c.get("elapsed_s", 0) + c.get("setup_s", 0)
             for k in ("latency", "bandwidth") if isinstance(run.get(k), dict)
             for c in run[k].get("cells") or []]
    if wall is not None and isinstance(elapsed, (int, float)):
        t.note(f"elapsed {elapsed:.1f} s by the run's clock (budget {budget} s + allowance "
               f"{allowance} s), wall {wall:.1f} s; {n} cells, {sum(spent):.1f} s in cells "
               f"(set-up + sampling), {wall - sum(spent):.1f} s outside them")
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
