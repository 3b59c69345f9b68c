//! `numaprobe fleet`: the main job on every node of a Slurm selection, the
//! reports gathered into one folder (`DIR/nodes/<node>/`), and the fleet analysis
//! (`numaprobe_core::analysis::fleet`) written as fleet.json, fleet.md,
//! fleet.csv and fleet.html beside them. `--from DIR` re-analyses a gathered
//! folder without Slurm. The launching is in `slurm.rs`, the task each
//! node runs in `node.rs`, the stream framing in `analysis::fleet::stream`.
//! The arguments are in `args.rs`, the fleet folder in `folder.rs`, the
//! fleet's files and exit status in `finish.rs`.

mod args;
mod finish;
mod folder;
mod launch;
pub mod node;
mod slurm;
mod start;
mod watchdog;

use crate::output::{usage, NotStarted, PartlyFailed};
use anyhow::Context;
use args::outlier_rule;
pub use args::{Args, Unavailable};
use finish::{finish, Dest};
use folder::{
    ended_in_words, judged_dir, prepare_dir, read_folder, read_held, subfolders, write_status,
    NODES,
};
use node::Gather;
use numaprobe_core::analysis::fleet::stream::valid_node_name;
use numaprobe_core::analysis::fleet::{self as analysis, NodeInput};
use numaprobe_core::model::fleet::{FleetReport, OutlierRule};
use slurm::Selection;
use std::path::PathBuf;

pub fn run(args: Args) -> anyhow::Result<()> {
    let rule = outlier_rule(args.outlier_sd, args.outlier_pct)?;
    if args.replace && args.from.is_none() {
        return Err(usage(
            "--replace: only with --from DIR (it writes the new fleet files into DIR itself)",
        ));
    }
    if let Some(dir) = &args.from {
        // The nodes are judged before the folder for the answer is made,
        // and it is made with its first file (`Dest::Later`): a stop signal
        // during the analysis (which ends the process at once) leaves no
        // folder behind, and one after it leaves the folder whole files.
        let report = analyse(read_folder(dir)?, rule);
        let (dest, in_place) = judged_dir(dir, args.report_dir.as_deref(), args.replace)?;
        let mut notes = Vec::new();
        if !in_place {
            notes.push(format!(
                "judged from the nodes gathered in {}",
                dir.display()
            ));
        }
        return finish(&args.out, dest, report, &notes, false, 0);
    }
    // Everything the user gave is checked before Slurm is asked for anything.
    let budget = match &args.budget {
        Some(b) => crate::cmd::run::budget(Some(b))?,
        None => crate::cmd::run::DEFAULT_BUDGET,
    };
    crate::cmd::measure::size("--size", &args.size)?;
    let timeout = args::node_timeout(args.node_timeout.as_deref(), budget)?;
    let grace = args::grace(&args.grace)?;
    let start_timeout = args::start_timeout(&args.start_timeout)?;
    if args.nodes == Some(0) {
        return Err(usage("--nodes 0: give at least one node"));
    }
    if args.nodes.is_none() && args.nodelist.is_none() {
        return Err(usage(
            "give the nodes to run on: --nodes N (Slurm picks them) or --nodelist LIST (e.g. node[001-016])",
        ));
    }
    for a in &args.srun_arg {
        if !a.starts_with('-') || a == "-" || a == "--" {
            return Err(usage(format!(
                "--srun-arg {}: not an srun option (valid: one option, e.g. --srun-arg=--constraint=ib)",
                crate::output::clip_line(a)
            )));
        }
    }
    let srun = slurm::find_srun()?;
    if let Some(p) = &args.partition {
        slurm::check_partition(p)?;
    }
    let excluded = args
        .exclude
        .as_deref()
        .and_then(slurm::expand_nodelist)
        .unwrap_or_default();
    let mut expected = args
        .nodelist
        .as_deref()
        .and_then(slurm::expand_nodelist)
        .unwrap_or_default()
        .into_iter()
        // A folder is made for each: only host names.
        .filter(|n| valid_node_name(n))
        .filter(|n| !excluded.contains(n))
        .collect::<Vec<_>>();
    if args.nodelist.is_some() && !excluded.is_empty() && expected.is_empty() {
        return Err(usage(format!(
            "--exclude {}: leaves no node of --nodelist {}; give a list with nodes left to run on",
            args.exclude.as_deref().unwrap_or(""),
            args.nodelist.as_deref().unwrap_or("")
        )));
    }
    // Ask Slurm about the listed nodes first: a drained or down node would
    // keep the job pending without a word.
    let in_reservation =
        args.reservation.is_some() || std::env::var_os("SLURM_RESERVATION").is_some();
    let mut not_run: Vec<(String, String)> = Vec::new();
    for (node, a) in slurm::node_states(&expected, in_reservation).unwrap_or_default() {
        // sinfo's state and reason are anyone's text (an administrator's
        // reason): shown cleaned, kept as they are in the node's status.
        let shown = |s: &str| numaprobe_core::clean::line(s, numaprobe_core::clean::SHOWN_MAX);
        match a {
            slurm::Availability::Free => {}
            slurm::Availability::Busy(state) => eprintln!(
                "numaprobe: {node}: {}: busy with other jobs; the fleet's exclusive job waits until it is free",
                shown(&state)
            ),
            slurm::Availability::Unavailable(state) => {
                let then = match args.unavailable {
                    Unavailable::Skip => "left out (--unavailable wait waits for it)",
                    Unavailable::Wait => "the job waits for it (--unavailable wait; Ctrl-C stops waiting)",
                    Unavailable::Fail => "not run (--unavailable fail)",
                };
                eprintln!("numaprobe: {node}: {}: {then}", shown(&state));
                not_run.push((node, state));
            }
        }
    }
    if !not_run.is_empty() && args.unavailable == Unavailable::Fail {
        return Err(anyhow::Error::new(PartlyFailed(format!(
            "{} of {} nodes unavailable, nothing run (--unavailable fail): {}",
            not_run.len(),
            expected.len(),
            not_run
                .iter()
                .map(|(n, s)| format!("{n} ({s})"))
                .collect::<Vec<_>>()
                .join("; ")
        ))));
    }
    if args.unavailable == Unavailable::Wait {
        not_run.clear();
    }
    expected.retain(|n| !not_run.iter().any(|(u, _)| u == n));
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("numaprobe-fleet"));
    let (top, nodes_dir) = prepare_dir(&dir)?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?;
    let exe = match &args.numaprobe {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("cannot find this binary's path")?,
    };
    let mut run_args = Vec::new();
    if let Some(b) = &args.budget {
        run_args.extend(["--budget".to_string(), b.clone()]);
    }
    if let Some(s) = &args.size {
        run_args.extend(["--size".to_string(), s.clone()]);
    }
    let node_dir = match args.gather {
        Gather::Shared => dir.join(NODES),
        // Each node's scratch folder: its own /tmp, removed after sending.
        Gather::Stream => std::env::temp_dir(),
    };
    // Nodes left out (unavailable, or excluded from the list: srun refuses
    // a --nodelist naming an --exclude'd node): the job asks for the others
    // by name.
    let listed_excluded = args.nodelist.is_some() && !excluded.is_empty();
    let (nodelist, nodes) = if not_run.is_empty() && !listed_excluded {
        (args.nodelist.clone(), args.nodes)
    } else {
        (
            Some(expected.join(",")),
            args.nodes.map(|n| n.min(expected.len() as u32)),
        )
    };
    let sel = Selection {
        partition: args.partition.clone(),
        nodelist,
        nodes,
        account: args.account.clone(),
        time: args.time.clone(),
        reservation: args.reservation.clone(),
        qos: args.qos.clone(),
        exclude: if listed_excluded {
            None
        } else {
            args.exclude.clone()
        },
        extra: args.srun_arg.clone(),
    };
    let srun_args = slurm::srun_args(
        &sel,
        &exe,
        args.gather,
        &node_dir,
        timeout.as_secs_f64(),
        &run_args,
    );
    let gathered = if expected.is_empty() && !not_run.is_empty() {
        eprintln!("numaprobe: no listed node is available: nothing to run");
        launch::Gathered::default()
    } else {
        eprintln!(
            "numaprobe: {}",
            numaprobe_core::clean::line(
                &format!("{} {}", srun.display(), srun_args.join(" ")),
                numaprobe_core::clean::UNCLIPPED
            )
        );
        let watch = launch::Watch {
            grace,
            timeout,
            count: nodes.filter(|_| expected.is_empty()).map(|n| n as usize),
            stop_requested: numaprobe_core::cancel::requested,
            start_timeout,
            job_state: || start::job_state(&slurm::job_name()),
            job_nodes: slurm::job_nodes,
        };
        launch::launch(
            &srun,
            &srun_args,
            &nodes_dir,
            &expected,
            watch,
            |node, st| {
                // Its error output's last line is the node's own text.
                eprintln!(
                    "numaprobe: {node}: {}",
                    numaprobe_core::clean::line(
                        &ended_in_words(st),
                        numaprobe_core::clean::SHOWN_MAX
                    )
                );
            },
        )?
    };
    if gathered.stopped || gathered.gave_up() {
        // srun was ended early; make sure the allocation goes with it.
        slurm::scancel();
    }
    if let Some(why) = &gathered.never_started {
        // No node ran: leave no empty fleet folder behind (this run made
        // it, and prepare_dir made sure it was empty before).
        let _ = top.remove_empty_dir(NODES);
        let _ = std::fs::remove_dir(&dir);
        return Err(anyhow::Error::new(NotStarted(format!(
            "{why}; the job was cancelled and nothing run (a longer --start-timeout waits longer; sinfo and squeue say what holds the nodes)"
        ))));
    }
    let mut refused = gathered.refused.clone();
    for (node, state) in &not_run {
        let mut st = node::not_run(node);
        st.unavailable = Some(state.clone());
        write_status(&nodes_dir, &st, &mut refused)?;
    }
    for node in &gathered.lost {
        let mut st = node::not_run(node);
        st.lost = true;
        st.error = Some(format!(
            "lost: nothing from it for {} s (--grace); its slurmd, slurmstepd or the machine died",
            grace.as_secs()
        ));
        write_status(&nodes_dir, &st, &mut refused)?;
    }
    for (node, why) in &gathered.timed_out {
        let mut st = node::not_run(node);
        st.timed_out = true;
        st.error = Some(format!("timed out: {why}"));
        write_status(&nodes_dir, &st, &mut refused)?;
    }
    for (node, why) in &gathered.not_started {
        let mut st = node::not_run(node);
        st.error = Some(format!("never started: {why}"));
        write_status(&nodes_dir, &st, &mut refused)?;
    }

    if !gathered.stopped
        && not_run.is_empty()
        && gathered.started.is_empty()
        && gathered.ended.is_empty()
        && subfolders(&dir)?.is_empty()
    {
        // Nothing came back: leave no empty fleet folder behind (this run
        // made it, and prepare_dir made sure it was empty before).
        let _ = top.remove_empty_dir(NODES);
        let _ = std::fs::remove_dir(&dir);
        let line = launch::srun_failure(&gathered);
        return Err(if start::input_refused(&gathered.srun_stderr) {
            usage(line)
        } else if start::allocation_failed(&gathered.srun_stderr) {
            anyhow::Error::new(NotStarted(format!("{line}; nothing run")))
        } else {
            anyhow::Error::new(PartlyFailed(format!("{line}; no node ran")))
        });
    }
    // Nodes that never said how they ended: those of the list, and those
    // that started (asked for by count, they are known by no other name).
    let mut notes: Vec<String> = gathered.problems.clone();
    let seen: Vec<String> = match args.gather {
        Gather::Stream => gathered.ended.keys().cloned().collect(),
        Gather::Shared => subfolders(&dir)?,
    };
    let started_unlisted = gathered.started.iter().filter(|n| !expected.contains(n));
    for node in expected.iter().chain(started_unlisted) {
        let gave_up = gathered.lost.contains(node)
            || gathered.timed_out.iter().any(|(n, _)| n == node)
            || gathered.not_started.iter().any(|(n, _)| n == node);
        if !seen.contains(node) && !gave_up && !refused.contains_key(node) {
            let why = match (gathered.started.contains(node), gathered.stopped) {
                (true, true) => "stopped by a signal before it sent its report",
                (false, true) => "not run: stopped by a signal before its task started",
                (true, false) => "its task started but never said how it ended (killed, or the job's time ran out)",
                (false, false) => "sent nothing: its task never started",
            };
            let mut status = node::not_run(node);
            status.error = Some(why.into());
            write_status(&nodes_dir, &status, &mut refused)?;
        }
    }
    // Asked for by count: the nodes neither heard from nor named by Slurm.
    let mut unnamed = 0;
    if let (true, Some(n)) = (expected.is_empty(), args.nodes) {
        let named: std::collections::BTreeSet<&String> = seen
            .iter()
            .chain(&gathered.started)
            .chain(&gathered.lost)
            .chain(gathered.timed_out.iter().map(|(n, _)| n))
            .chain(gathered.not_started.iter().map(|(n, _)| n))
            .collect();
        unnamed = (n as usize).saturating_sub(named.len());
        if unnamed > 0 {
            notes.push(format!(
                "{unnamed} of {n} nodes sent nothing (their names are unknown without --nodelist, and Slurm did not say)"
            ));
        }
    }
    if gathered.stopped {
        notes.push(
            "stopped by a signal before every node came back; srun was ended and the job cancelled"
                .into(),
        );
    } else if gathered.gave_up() {
        let mut gone = Vec::new();
        if !gathered.lost.is_empty() {
            gone.push(format!(
                "lost: {} (nothing from them for {} s, --grace)",
                gathered.lost.join(", "),
                grace.as_secs()
            ));
        }
        if !gathered.timed_out.is_empty() {
            let names: Vec<&str> = gathered.timed_out.iter().map(|(n, _)| n.as_str()).collect();
            gone.push(format!(
                "timed out: {} (still running {} s, --grace, past --node-timeout {} s)",
                names.join(", "),
                grace.as_secs(),
                timeout.as_secs()
            ));
        }
        if !gathered.not_started.is_empty() {
            let names: Vec<&str> = gathered
                .not_started
                .iter()
                .map(|(n, _)| n.as_str())
                .collect();
            gone.push(format!("never started: {}", names.join(", ")));
        }
        if gathered.unnamed > 0 {
            gone.push(format!(
                "{} unnamed node(s) never started",
                gathered.unnamed
            ));
        }
        if gathered.overdue {
            gone.push(
                "srun still running at the launcher's deadline (--node-timeout and twice --grace after the first node started)"
                    .into(),
            );
        }
        notes.push(format!(
            "{}; srun was ended and the job cancelled",
            gone.join("; ")
        ));
    } else if gathered.srun_status != Some(0) {
        notes.push(launch::srun_failure(&gathered));
    }
    // Read back through the handle: a node folder swapped for a link by
    // now is refused, never followed. Stopped while the job was pending,
    // no node named: a report of no nodes, marked incomplete, says so.
    let known: Vec<String> = expected
        .iter()
        .chain(&gathered.started)
        .chain(gathered.ended.keys())
        .cloned()
        .collect();
    let report = analyse(read_held(&nodes_dir, refused, known)?, rule);
    finish(
        &args.out,
        Dest::Held(&top),
        report,
        &notes,
        gathered.stopped,
        unnamed,
    )
}

fn analyse(inputs: impl Iterator<Item = NodeInput>, rule: OutlierRule) -> FleetReport {
    analysis::analyse_with(inputs, rule)
}
