//! `numaprobe fleet`: the main job on every node of a Slurm selection, the
//! reports gathered into one folder (`DIR/<node>/`), and the fleet analysis
//! (`numaprobe_core::analysis::fleet`) written as fleet.json, fleet.md,
//! fleet.csv and fleet.html beside them. `--from DIR` re-analyses a gathered
//! folder without Slurm. The launching is in `slurm.rs`, the task each
//! node runs in `node.rs`, the stream framing in `analysis::fleet::stream`.

mod launch;
pub mod node;
mod slurm;

use crate::args::OutputArgs;
use crate::output::{usage, write_atomic, Differs, PartlyFailed};
use anyhow::Context;
use node::{Gather, STATUS_FILE};
use numaprobe_core::analysis::fleet::stream::valid_node_name;
use numaprobe_core::analysis::fleet::{self as analysis, NodeInput};
use numaprobe_core::model::fleet::{FleetReport, NodeRunStatus, NodeStatus, OutlierRule};
use numaprobe_core::model::Format;
use numaprobe_core::render;
use numaprobe_core::render::{fleet_csv, fleet_html, fleet_table};
use numaprobe_core::units;
use slurm::Selection;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Seconds a node's run may take beyond its budget (process start, the
/// topology, a large buffer's set-up, writing the report) before it is
/// stopped as timed out.
const NODE_ALLOWANCE_S: f64 = 120.0;

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "Through Slurm: one srun, one exclusive task per node \
(--ntasks-per-node=1 --exclusive), each running `numaprobe run` with the same --budget and \
--size, --partition/--nodelist/--nodes/--account/--time/--reservation/--qos/--exclude and every \
--srun-arg passed through to srun (srun's own input variables, e.g. SLURM_RESERVATION, apply \
too). A failing node ends neither the others' tasks nor the job.\n\n\
Gathering: with --gather stream (the default) every node sends its report folder back through \
the job's output (base64 lines marked NUMAPROBE-FLEET) and numaprobe unpacks it into \
DIR/<node>/; with --gather shared every node writes DIR/<node>/ itself, so DIR must be on a \
filesystem all nodes share. The binary must be at the same path on every node (a shared \
filesystem), or name its path there with --numaprobe.\n\n\
Analysis: nodes are grouped by their topology and firmware signature (CPU model, packages, NUMA \
nodes per package (SNC/NPS), CPUs and allowed CPUs, numbering class, SLIT, THP, kernel, memory \
per node, LLC) and the groups outside the largest are named with the fields that differ; every \
measured cell is compared across the nodes with its median and MAD, and a node at least \
--outlier-sd (3.5) robust standard deviations (1.4826 x MAD) and --outlier-pct (5) % off is an \
outlier. Nodes that failed, timed out or sent an incomplete report are listed with why, nodes \
that skipped a measurement are named with what is missing; the others' results are kept.\n\n\
DIR then holds one folder per node (its report and fleet-node.json: how its run ended), \
fleet.json, fleet.md, fleet.csv and fleet.html (a heatmap, odd nodes first).\n\n\
Exit status, after everything is written: 0 every node reported in full and the fleet is \
uniform; 1 every node reported but the fleet is not uniform (outliers, signature groups beside \
the largest, a node with a measurement missing); 2 bad input (nothing allocated, nothing \
written); 4 a node failed, timed out, was lost or not run (the others' results are kept); \
130/143 stopped by Ctrl-C/SIGTERM (the gathered nodes and the report, marked incomplete, are \
kept)."
)]
pub struct Args {
    /// Analyse the reports already gathered in DIR (DIR/<node>/run.json) instead of running anything
    #[arg(long, value_name = "DIR", conflicts_with_all = ["partition", "nodelist", "nodes", "account", "time", "report_dir", "reservation", "qos", "exclude", "srun_arg", "gather", "numaprobe", "budget", "size", "node_timeout", "grace", "unavailable"])]
    pub from: Option<PathBuf>,
    /// Slurm partition (srun --partition)
    #[arg(long)]
    pub partition: Option<String>,
    /// Nodes to run on, in Slurm's host-list form, e.g. node[001-016] (srun --nodelist)
    #[arg(long, short = 'w')]
    pub nodelist: Option<String>,
    /// How many nodes (srun --nodes); default: the number in --nodelist
    #[arg(long, short = 'N')]
    pub nodes: Option<u32>,
    /// Slurm account to charge (srun --account)
    #[arg(long)]
    pub account: Option<String>,
    /// The job's time limit in Slurm's form, e.g. 10:00 (srun --time)
    #[arg(long)]
    pub time: Option<String>,
    /// Run in this advance reservation (srun --reservation); SLURM_RESERVATION in the environment works too
    #[arg(long, value_name = "NAME")]
    pub reservation: Option<String>,
    /// Quality of service for the job (srun --qos)
    #[arg(long, value_name = "QOS")]
    pub qos: Option<String>,
    /// Nodes to leave out, in Slurm's host-list form (srun --exclude)
    #[arg(long, short = 'x', value_name = "LIST")]
    pub exclude: Option<String>,
    /// One more option for srun, passed as it is (repeatable), e.g. --srun-arg=--constraint=ib
    #[arg(long = "srun-arg", value_name = "OPTION", allow_hyphen_values = true)]
    pub srun_arg: Vec<String>,
    /// Outlier threshold: robust standard deviations (1.4826 x MAD) off the fleet's median
    #[arg(long, value_name = "SDS", default_value_t = 3.5)]
    pub outlier_sd: f64,
    /// Outlier threshold: percent off the fleet's median (both thresholds must be passed)
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0)]
    pub outlier_pct: f64,
    /// How the reports come back
    #[arg(long, value_enum, default_value = "stream")]
    pub gather: Gather,
    /// The fleet folder: DIR/<node>/ per node and the fleet's files. Default: ./numaprobe-fleet (must be new or empty)
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Path of the numaprobe binary on the nodes. Default: this binary's path
    #[arg(long, value_name = "PATH")]
    pub numaprobe: Option<PathBuf>,
    /// Every node's main-job budget (numaprobe run --budget). Default: 60s
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Every node's buffer size (numaprobe run --size)
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// A node's run is stopped as timed out this long after it started. Default: the budget plus 120s
    #[arg(long, value_name = "DURATION")]
    pub node_timeout: Option<String>,
    /// A running node silent this long (it says it is alive every 5 s) is lost: given up on, named, the others kept
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub grace: String,
    /// Listed nodes that Slurm reports drained, down, reserved or not responding: leave them out, wait for them, or refuse to start
    #[arg(long, value_enum, default_value = "skip")]
    pub unavailable: Unavailable,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// What to do with listed nodes Slurm cannot give now.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// Name each with its state and reason, run on the others
    Skip,
    /// Name each, then let the job wait until Slurm can give it (Ctrl-C stops waiting)
    Wait,
    /// Name each and run nothing (exit 4)
    Fail,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let rule = outlier_rule(args.outlier_sd, args.outlier_pct)?;
    if let Some(dir) = &args.from {
        let inputs = read_folder(dir)?;
        return finish(&args.out, dir, &analyse(inputs, rule), &[], false);
    }
    // Everything the user gave is checked before Slurm is asked for anything.
    let budget = match &args.budget {
        Some(b) => crate::cmd::run::budget(Some(b))?,
        None => crate::cmd::run::DEFAULT_BUDGET,
    };
    crate::cmd::measure::size("--size", &args.size)?;
    let timeout = match &args.node_timeout {
        Some(s) => units::parse_duration(s).map_err(|_| {
            usage(format!(
                "--node-timeout '{s}': not a duration (valid: e.g. 5m or 300s)"
            ))
        })?,
        None => budget + Duration::from_secs_f64(NODE_ALLOWANCE_S),
    };
    let grace = units::parse_duration(&args.grace)
        .ok()
        .filter(|g| *g >= 2 * node::ALIVE_EVERY)
        .ok_or_else(|| {
            usage(format!(
                "--grace '{}': not a duration of at least {} s (valid: e.g. 30s or 2m)",
                crate::output::clip_line(&args.grace),
                (2 * node::ALIVE_EVERY).as_secs()
            ))
        })?;
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
        match a {
            slurm::Availability::Free => {}
            slurm::Availability::Busy(state) => eprintln!(
                "numaprobe: {node}: {state}: busy with other jobs; the fleet's exclusive job waits until it is free"
            ),
            slurm::Availability::Unavailable(state) => {
                let then = match args.unavailable {
                    Unavailable::Skip => "left out (--unavailable wait waits for it)",
                    Unavailable::Wait => "the job waits for it (--unavailable wait; Ctrl-C stops waiting)",
                    Unavailable::Fail => "not run (--unavailable fail)",
                };
                eprintln!("numaprobe: {node}: {state}: {then}");
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
    prepare_dir(&dir)?;
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
        Gather::Shared => dir.clone(),
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
        eprintln!("numaprobe: {} {}", srun.display(), srun_args.join(" "));
        let watch = launch::Watch { grace };
        launch::launch(&srun, &srun_args, &dir, &expected, watch, |node, st| {
            eprintln!("numaprobe: {node}: {}", ended_in_words(st));
        })?
    };
    if gathered.stopped || !gathered.lost.is_empty() {
        // srun was ended early; make sure the allocation goes with it.
        slurm::scancel();
    }
    for (node, state) in &not_run {
        let mut st = node::not_run(node);
        st.unavailable = Some(state.clone());
        write_status(&dir, &st)?;
    }
    for node in &gathered.lost {
        let mut st = node::not_run(node);
        st.lost = true;
        st.error = Some(format!(
            "lost: nothing from it for {} s (--grace); its slurmd, slurmstepd or the machine died",
            grace.as_secs()
        ));
        write_status(&dir, &st)?;
    }

    if !gathered.stopped
        && not_run.is_empty()
        && gathered.started.is_empty()
        && gathered.ended.is_empty()
        && subfolders(&dir)?.is_empty()
    {
        // Nothing came back: leave no empty fleet folder behind (this run
        // made it, and prepare_dir made sure it was empty before).
        let _ = std::fs::remove_dir(&dir);
        let line = launch::srun_failure(&gathered);
        // srun's own words for a selection that cannot be had are bad input.
        let bad_input = gathered.srun_stderr.iter().any(|l| {
            l.contains("Invalid partition")
                || l.contains("Invalid account")
                || l.contains("Invalid node name")
                || l.contains("Invalid time limit")
                || l.contains("Invalid qos")
                || l.contains("reservation is invalid")
                || l.contains("Invalid reservation")
                || l.contains("unrecognized option")
                || l.contains("invalid option")
                || l.contains("configuration is not available")
        });
        return Err(if bad_input {
            usage(line)
        } else {
            anyhow::anyhow!(line)
        });
    }
    // Nodes that never said how they ended: named when the list was given.
    let mut notes: Vec<String> = gathered.problems.clone();
    let seen: Vec<String> = match args.gather {
        Gather::Stream => gathered.ended.keys().cloned().collect(),
        Gather::Shared => subfolders(&dir)?,
    };
    for node in &expected {
        if !seen.contains(node) && !gathered.lost.contains(node) {
            let why = match (gathered.started.contains(node), gathered.stopped) {
                (true, true) => "stopped by a signal before it sent its report",
                (false, true) => "not run: stopped by a signal before its task started",
                (true, false) => "its task started but never said how it ended (killed, or the job's time ran out)",
                (false, false) => "sent nothing: its task never started",
            };
            let mut status = node::not_run(node);
            status.error = Some(why.into());
            write_status(&dir, &status)?;
        }
    }
    if expected.is_empty() {
        if let Some(n) = args.nodes {
            if (seen.len() as u32) < n {
                notes.push(format!(
                    "{} of {n} nodes sent nothing (their names are unknown without --nodelist)",
                    n as usize - seen.len()
                ));
            }
        }
    }
    if gathered.stopped {
        notes.push(
            "stopped by a signal before every node came back; srun was ended and the job cancelled"
                .into(),
        );
    } else if !gathered.lost.is_empty() {
        notes.push(format!(
            "lost: {} (nothing from them for {} s, --grace); srun was ended and the job cancelled",
            gathered.lost.join(", "),
            grace.as_secs()
        ));
    } else if gathered.srun_status != Some(0) {
        notes.push(launch::srun_failure(&gathered));
    }
    let report = if subfolders(&dir)?.is_empty() {
        // Stopped while the job was pending, no node named: a report of
        // no nodes, marked incomplete, says so.
        analyse(std::iter::empty(), rule)
    } else {
        analyse(read_folder(&dir)?, rule)
    };
    finish(&args.out, &dir, &report, &notes, gathered.stopped)
}

/// The outlier rule from --outlier-sd and --outlier-pct, checked.
fn outlier_rule(sd: f64, pct: f64) -> anyhow::Result<OutlierRule> {
    if !(sd.is_finite() && sd >= 0.0) {
        return Err(usage(format!(
            "--outlier-sd {sd}: not a number of standard deviations (valid: 0 or more, e.g. 3.5)"
        )));
    }
    if !(pct.is_finite() && pct >= 0.0) {
        return Err(usage(format!(
            "--outlier-pct {pct}: not a percentage (valid: 0 or more, e.g. 5)"
        )));
    }
    Ok(OutlierRule {
        min_robust_z: sd,
        min_off_percent: pct,
        ..OutlierRule::default()
    })
}

/// Write `DIR/<node>/fleet-node.json` for a node the launcher speaks for.
fn write_status(dir: &Path, st: &NodeRunStatus) -> anyhow::Result<()> {
    let folder = dir.join(&st.node);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let p = folder.join(STATUS_FILE);
    write_atomic(&p, (serde_json::to_string_pretty(st)? + "\n").as_bytes())
        .with_context(|| format!("cannot write {}", p.display()))?;
    Ok(())
}

/// A fleet folder must be new or empty: node folders of an earlier fleet
/// would be read as this one's.
fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        if !dir.is_dir() {
            return Err(usage(format!(
                "--report-dir {}: exists and is not a folder",
                dir.display()
            )));
        }
        if std::fs::read_dir(dir)?.next().is_some() {
            return Err(usage(format!(
                "--report-dir {}: not empty; choose a new or empty folder (re-analyse a gathered one with --from {})",
                dir.display(),
                dir.display()
            )));
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

fn subfolders(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    v.sort_by(|a, b| analysis::natural_cmp(a, b));
    Ok(v)
}

fn ended_in_words(st: &NodeRunStatus) -> String {
    if let Some(e) = &st.error {
        return e.clone();
    }
    if st.timed_out {
        return format!(
            "stopped after {:.0} s: it ran past its time limit",
            st.elapsed_s
        );
    }
    match (st.exit_status, st.signal) {
        (Some(0), _) => format!("done in {:.1} s", st.elapsed_s),
        (Some(c), _) => {
            let last = st.stderr_tail.last().map(String::as_str).unwrap_or("");
            format!("numaprobe run exited with status {c}: {last}")
        }
        (None, Some(sig)) => format!("numaprobe run was killed by signal {sig}"),
        (None, None) => "numaprobe run ended without a status".into(),
    }
}

fn analyse(inputs: impl Iterator<Item = NodeInput>, rule: OutlierRule) -> FleetReport {
    analysis::analyse_with(inputs, rule)
}

/// The nodes of a gathered folder: every subfolder is a node, with its
/// run.json (when there) and fleet-node.json (how its run ended, when there).
/// The folder is checked now; each node's files are read when the analysis
/// reaches it.
pub fn read_folder(dir: &Path) -> anyhow::Result<impl Iterator<Item = NodeInput>> {
    if !dir.is_dir() {
        return Err(usage(format!(
            "--from {}: not a folder; give the folder numaprobe fleet gathered (DIR/<node>/run.json)",
            dir.display()
        )));
    }
    let names = subfolders(dir)?;
    if names.is_empty() {
        return Err(usage(format!(
            "--from {}: holds no node folders; numaprobe fleet gathers DIR/<node>/run.json",
            dir.display()
        )));
    }
    let dir = dir.to_path_buf();
    Ok(names.into_iter().map(move |name| {
        let folder = dir.join(&name);
        let run_json = numaprobe_core::model::input::read_text(&folder.join("run.json")).ok();
        let failure = match numaprobe_core::model::input::read_text(&folder.join(STATUS_FILE)) {
            Err(_) => None,
            Ok(text) => match serde_json::from_str::<NodeRunStatus>(&text) {
                Err(e) => Some((
                    NodeStatus::Failed,
                    format!("{STATUS_FILE} is unreadable: {e}"),
                )),
                Ok(st) if st.unavailable.is_some() => Some((
                    NodeStatus::Unavailable,
                    format!(
                        "not run: Slurm reported it {}",
                        st.unavailable.as_deref().unwrap_or("unavailable")
                    ),
                )),
                Ok(st) if st.lost => Some((NodeStatus::Lost, ended_in_words(&st))),
                Ok(st) if st.timed_out => Some((NodeStatus::TimedOut, ended_in_words(&st))),
                Ok(st) if st.exit_status == Some(0) => None,
                Ok(st) => Some((NodeStatus::Failed, ended_in_words(&st))),
            },
        };
        NodeInput {
            name,
            run_json,
            failure,
        }
    }))
}

/// Write the fleet's files into `dir` and show the chosen format; then
/// exit 4 when a node failed, timed out, was lost or not run, 1 when every
/// node reported but the fleet is not uniform (outliers, signature groups
/// beside the largest, a measurement missing), 0 otherwise. `stopped`: a
/// signal ended the gather; the report is marked incomplete, where it is is
/// said on stderr, and `main` exits 128 + the signal.
fn finish(
    out: &OutputArgs,
    dir: &Path,
    r: &FleetReport,
    notes: &[String],
    stopped: bool,
) -> anyhow::Result<()> {
    let mut r = r.clone();
    r.notes.extend(notes.iter().cloned());
    if stopped {
        r.complete = false;
    }
    let markdown = fleet_table::to_markdown(&r);
    let csv = fleet_csv::to_csv(&r);
    let json = render::to_json(&r);
    for (name, text) in [
        ("fleet.json", &json),
        ("fleet.md", &markdown),
        ("fleet.csv", &csv),
        ("fleet.html", &fleet_html::to_html(&r)),
    ] {
        let p = dir.join(name);
        write_atomic(&p, text.as_bytes())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    if stopped {
        eprintln!(
            "numaprobe: stopped: the nodes that finished and the fleet report (marked incomplete) are in {}/",
            dir.display()
        );
    }
    let text = match out.format() {
        Format::Json => json,
        Format::Markdown => markdown,
        Format::Csv => csv,
        Format::Table => format!(
            "{}\nFleet report written to {}/ (fleet.json, fleet.md, fleet.csv, fleet.html)\n",
            fleet_table::to_text(&r),
            dir.display()
        ),
    };
    out.sink().write(&text)?;
    if stopped {
        return Ok(());
    }
    let bad: Vec<String> = r
        .failures()
        .map(|n| format!("{} ({})", n.name, n.reason.as_deref().unwrap_or("failed")))
        .collect();
    if !bad.is_empty() {
        return Err(anyhow::Error::new(PartlyFailed(format!(
            "{} of {} nodes failed, timed out, were lost or not run: {}; the other nodes' results are in the report",
            bad.len(),
            r.nodes.len(),
            bad.join("; ")
        ))));
    }
    let found = r.findings();
    if found.is_empty() {
        Ok(())
    } else {
        Err(anyhow::Error::new(Differs(format!(
            "the fleet is not uniform: {}",
            found.join("; ")
        ))))
    }
}
