"""What a main job's run.json must state, read the same way by the default
run's check (mainjob.py) and the run at a sound budget (soundjob.py): its
failed cells, each matrix's cells placed and measured or named skipped by
the plan, the plan's phases as stated (what each kept, what it skipped and
why, said before measuring or re-planned when the phase began), and the
extra phases. Only what the run says and where its pages and threads were
is judged; how much a host of a given speed got done is not.
"""

import json

# A cell with a smaller share of its pages on the intended node is misplaced
# (the engine's own placement_threshold).
PLACEMENT_MIN = 0.99


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


# What a phase's reason says when the run cut it while running (the phase
# re-planned from what the phases before it really cost), as opposed to what
# the plan said before measuring (plan.statement).
REPLANNED = "re-planned when it began"


def check_matrices_stated(cfg, t, run):
    """The matrices as the run stated them: each phase measured every cell
    it kept, and the cells it kept plus the cells it names as skipped are
    the whole matrix; a phase that is less than a sound full matrix has a
    reason, and was either said before measuring (plan.statement, naming a
    sound budget above this one) or re-planned when it began (its reason
    says so). How much a phase kept is the host's speed and is not judged.
    Also: one buffer set-up per memory node and matrix, and `status` agrees
    with `complete`. Returns {phase: its record} for the caller's note."""
    plan = run.get("plan") or {}
    phases = phase_records(run)
    full = len([x for x in cfg.nodes if x.cpus]) * len(cfg.nodes)
    mem_nodes = {n.id for n in cfg.nodes}
    said = plan.get("statement")
    for k in ("latency", "bandwidth"):
        p = phases.get(k)
        if not t.true(isinstance(p, dict), f"run.json plan: no {k} phase"):
            continue
        reason = p.get("reason") or ""
        t.eq(p.get("measured_cells"), p.get("planned_cells"),
             f"{k}: cells measured vs the cells its plan kept ({p.get('coverage')}, {reason!r})")
        skipped = p.get("skipped") or []
        t.eq((p.get("planned_cells") or 0) + len(skipped), full,
             f"{k}: cells kept ({p.get('planned_cells')}) + cells the plan names as skipped "
             f"({len(skipped)}) vs the {full} of the matrix")
        # The matrix lists its set-ups; a report written before they were
        # stored once lists them in the plan's phase.
        setups = (run.get(k) or {}).get("setups") or p.get("setups") or []
        cells = (run.get(k) or {}).get("cells") or []
        if cells:
            measured_on = sorted({c.get("mem_node") for c in cells})
            t.eq(sorted(s.get("mem_node") for s in setups), measured_on,
                 f"{k}: one buffer set-up per memory node measured")
            t.true(set(measured_on) <= mem_nodes, f"{k}: memory nodes {measured_on}")
        if p.get("coverage") != "full" or skipped:
            if t.true(bool(reason), f"{k}: {p.get('coverage')} with {len(skipped)} cell(s) "
                      f"skipped, and no reason"):
                t.true(bool(said) or REPLANNED in reason,
                       f"{k}: {p.get('coverage')} ({reason!r}), yet the plan said nothing before "
                       f"measuring (plan.statement is empty) and the phase was not re-planned")
    if said:
        sound = plan.get("sound_budget_s")
        budget = run.get("budget_s")
        t.true(isinstance(sound, (int, float)) and isinstance(budget, (int, float))
               and sound > budget,
               f"the plan said the budget falls short ({said!r}) but names no larger sound "
               f"budget (sound_budget_s {sound!r}, budget_s {budget!r})")
    status = run.get("status")
    if t.true(isinstance(status, dict), "run.json: no status"):
        t.eq(status.get("complete"), run.get("complete"), "run.json: status.complete vs complete")
        kinds = {s.get("shortfall") for s in status.get("phases") or []}
        t.true(not kinds & {"interrupted", "failed"},
               f"run.json status: a phase interrupted or failed: {status.get('phases')}")
    return phases


def matrices_note(cfg, run, phases):
    """Each matrix as the run stated it, for a PASS line."""
    full = len([x for x in cfg.nodes if x.cpus]) * len(cfg.nodes)
    plan = run.get("plan") or {}
    parts = []
    for k in ("latency", "bandwidth"):
        p = phases.get(k) or {}
        setups = (run.get(k) or {}).get("setups") or p.get("setups") or []
        parts.append(f"{k} {p.get('measured_cells')}/{full} cells ({p.get('coverage')}"
                     + (f": {p.get('reason')}" if p.get("reason") else "") + f"), "
                     f"{len(setups)} set-ups in {sum(x.get('seconds') or 0 for x in setups):.1f} s")
    return ("matrices as stated: " + "; ".join(parts)
            + f"; sound budget {plan.get('sound_budget_s') or 0:.0f} s"
            + (" (said before measuring)" if plan.get("statement") else ""))


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
