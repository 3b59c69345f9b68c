"""The guest-side `run TAG COMMAND...` convention shared by the checks that
run several numaprobe commands in one boot, and the host-side reading of what
it prints.

Each command's exit status, stdout and stderr are framed as a section:

  @@@ TAG rc N
  ...stdout...
  @@@err ...one stderr line...

so that one check can assert on each command separately (its exit status, its
document, its one-line error) from the single stdout the rig captures. Kept in
one place so the framing the guest prints and the parser that reads it cannot
drift apart between checks.
"""

import json


def guest_script(stem, runs):
    """The busybox-sh script that runs each (tag, command) of `runs` in order.
    `stem` names the scratch files in /tmp (one per check, so a leftover from
    another check can never be read as this one's output)."""
    lines = [
        f'run() {{ tag=$1; shift; "$@" > /tmp/{stem}.out 2> /tmp/{stem}.err; rc=$?;',
        f'  echo "@@@ $tag rc $rc"; cat /tmp/{stem}.out; echo; sed "s/^/@@@err /" /tmp/{stem}.err; }}',
    ]
    lines += [f"run {tag} {cmd}" for tag, cmd in runs]
    return "\n".join(lines) + "\n"


def sections(text):
    """{tag: {"rc": int, "out": str, "err": [lines]}} from the guest's output."""
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith("@@@err "):
            if cur:
                out[cur]["err"].append(line[7:])
        elif line.startswith("@@@ "):
            w = line.split()
            cur = w[1]
            out[cur] = {"rc": int(w[3]), "out": [], "err": []}
        elif cur:
            out[cur]["out"].append(line)
    for s in out.values():
        s["out"] = "\n".join(s["out"])
    return out


class SectionResult:
    """A section seen as a checks.Result (rc, stdout, stderr), for the helpers
    in checks.py that take one."""

    def __init__(self, sec):
        self.rc, self.stdout, self.stderr = sec["rc"], sec["out"], "\n".join(sec["err"])


def skip_if_not_built(t, sec, command, branch):
    """Until its branch lands, a subcommand fails with '... is not built yet':
    the check is pending (SKIP), not failed. `sec` may be None (did not run);
    that is for the caller to fail."""
    if sec is not None and sec["rc"] != 0 and "not built yet" in "\n".join(sec["err"]):
        t.skip(f"`numaprobe {command}` is not built yet (branch {branch})")


def document(t, sec, what, **want):
    """The JSON document a command printed, or None (after failing `t`) when
    it did not run, exited non-zero or printed no JSON. The schema is always
    checked; each `want` key is a top-level field that must equal its value
    (asserted in the order given)."""
    if sec is None:
        t.fail(f"{what}: did not run")
        return None
    if not t.eq(sec["rc"], 0, f"{what}: exit status (stderr {sec['err'][-5:]!r})"):
        return None
    try:
        doc = json.loads(sec["out"])
    except ValueError as e:
        t.fail(f"{what}: no JSON on stdout ({e})")
        return None
    t.eq(doc.get("schema"), "numaprobe/1", f"{what}: schema")
    for key, value in want.items():
        t.eq(doc.get(key), value, f"{what}: {key}")
    return doc


def bad_input(t, secs, bad, quiet_stdout=False):
    """Each command of `bad` ({tag: command}) must have been refused the way
    numaprobe refuses bad input: exit 2 and one 'numaprobe: error:' line. With
    `quiet_stdout`, nothing may have been printed on stdout either."""
    for tag, cmd in bad.items():
        s = secs.get(tag)
        if s is None:
            t.fail(f"{cmd}: did not run")
            continue
        t.eq(s["rc"], 2, f"{cmd}: exit status")
        t.true(len(s["err"]) == 1 and s["err"][0].startswith("numaprobe: error:"),
               f"{cmd}: expected one 'numaprobe: error:' line, got {s['err']!r}")
        if quiet_stdout:
            t.eq(s["out"].strip(), "", f"{cmd}: stdout")


def printed(docs, bad=(), rc=0, bad_rc=2, error=lambda tag: f"bad {tag}"):
    """What the guest prints for `docs` ([(tag, document)], each exiting
    `rc`) and the bad-input commands `bad` (tags, each exiting `bad_rc` with
    the one line `error(tag)`): the selftests' right and wrong answers, in
    the framing `sections` reads, so the two cannot disagree."""
    out = []
    for tag, doc in docs:
        out += [f"@@@ {tag} rc {rc}", json.dumps(doc)]
    for tag in bad:
        out += [f"@@@ {tag} rc {bad_rc}", "", f"@@@err numaprobe: error: {error(tag)}"]
    return "\n".join(out) + "\n"
