"""numaprobe-core's own unit tests, run inside the VM: on arm64 the
host cannot run them (qemu-user lacks mbind, move_pages and the rest of the
NUMA system calls), so scripts/vm-test-arm64 builds the test binary for
aarch64, the rig packs it as /bin/numaprobe-core-tests (rig.py --unit-tests)
and this check runs it on a real arm64 kernel with two NUMA nodes.

The guest lists the tests (`--list`), then runs them all but the ones in
GUEST_SKIPS, each skipped by exact name with the reason the busybox guest
cannot give it what it needs. The host asserts: exit 0, libtest's summary
says ok, and every listed test is accounted for (passed, ignored by its own
#[ignore] or skipped here), so a test that silently did not run fails.
"""

import re

from checks import CHECKS, check

BINARY = "/bin/numaprobe-core-tests"

# {exact test name: why the guest cannot run it}. Every entry needs a reason
# a reader can check; an entry whose test no longer exists fails the check,
# so the list cannot rot.
GUEST_SKIPS = {
    "job::tests::a_tiny_job_on_this_machine_runs_both_phases":
        "gives the main job a 1 s budget and expects both phases to fit it; a TCG-emulated "
        "arm64 guest spends it on the latency phase (the test assumes a native machine's speed)",
}

SUMMARY_RE = re.compile(r"^test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored; "
                        r"(\d+) measured; (\d+) filtered out")


def unit_tests_guest(cfg):
    skips = " ".join(f"--skip {name}" for name in sorted(GUEST_SKIPS))
    return f"""
[ -x {BINARY} ] || {{ echo "@@@ absent"; exit 0; }}
cd /tmp
{BINARY} --list --format terse > /tmp/list.txt 2>/tmp/list.err || {{ cat /tmp/list.err; exit 3; }}
sed 's/^/@@@ listed /' /tmp/list.txt
# One thread: the tests that pin or bind would otherwise share the guest's
# few CPUs with each other, and a failure's output stays in one piece.
{BINARY} --test-threads 1 --exact {skips} 2>&1
"""


def failure_output(stdout, name, limit=1500):
    """The section libtest prints for a failed test (`---- NAME stdout ----`
    up to the next section or the list of failures): its panic message and
    assertion values, so a failure read from CI's log says what failed
    without the guest's console."""
    lines, keep = [], False
    for line in stdout.splitlines():
        if line.startswith("---- ") and line.endswith(" ----"):
            keep = line == f"---- {name} stdout ----"
            continue
        if keep and line.strip() == "failures:":
            break
        if keep:
            lines.append(line)
    text = "\n".join(lines).strip()
    return text[:limit] + (" ..." if len(text) > limit else "")


def parse(stdout):
    listed, outcome, summary = [], {}, None
    for line in stdout.splitlines():
        if line.startswith("@@@ listed "):
            entry = line[len("@@@ listed "):]
            if entry.endswith(": test"):
                listed.append(entry[:-len(": test")])
        elif line.startswith("test ") and " ... " in line:
            name, _, result = line[5:].partition(" ... ")
            outcome[name] = result.strip()
        else:
            m = SUMMARY_RE.match(line)
            if m:
                summary = m
    return listed, outcome, summary


@check("core-unit-tests", unit_tests_guest)
def core_unit_tests(cfg, res, t):
    if res.stdout.strip() == "@@@ absent":
        t.skip(f"no unit-test binary in the guest (rig.py --unit-tests; "
               "scripts/vm-test-arm64 builds one for aarch64)")
    listed, outcome, summary = parse(res.stdout)
    t.true(listed, "the test binary listed no tests")
    failed = sorted(n for n, r in outcome.items() if r not in ("ok", "ignored"))
    t.eq(failed, [], "tests that did not pass")
    for name in failed:
        t.note(f"{name}: {failure_output(res.stdout, name) or 'no output of its own'}")
    t.eq(res.rc, 0, "exit status of the test binary")
    if t.true(summary is not None, "no libtest summary line ('test result: ...')"):
        t.eq(summary.group(1), "ok", "libtest's verdict")
    for name in sorted(GUEST_SKIPS):
        t.true(name in listed, f"GUEST_SKIPS names {name!r}, which is no longer a test")
    missing = sorted(set(listed) - set(outcome) - set(GUEST_SKIPS))
    t.eq(missing, [], "listed tests that neither ran nor were skipped with a reason")
    passed = sum(1 for r in outcome.values() if r == "ok")
    ignored = sum(1 for r in outcome.values() if r == "ignored")
    t.note(f"{passed} passed, {ignored} ignored by #[ignore], {len(GUEST_SKIPS)} skipped "
           f"in the guest, of {len(listed)} listed")
    for name, why in sorted(GUEST_SKIPS.items()):
        t.note(f"skipped {name}: {why}")


# The rig does not boot a machine for this check unless it was given a test
# binary to pack (rig.py reads this flag before the boot).
CHECKS["core-unit-tests"].needs_unit_tests = True
