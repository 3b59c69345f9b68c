//! `numaprobe fleet`'s arguments: the Slurm selection, the gathering, the
//! outlier rule and what to do with nodes Slurm cannot give, and the
//! outlier rule and the launcher's durations (a node's time limit, the
//! grace, the start timeout) checked from them.

use super::node::{Gather, ALIVE_EVERY};
use crate::args::OutputArgs;
use crate::output::{clip_line, usage};
use numaprobe_core::model::fleet::OutlierRule;
use numaprobe_core::units;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "Through Slurm: one srun, one exclusive task per node \
(--ntasks-per-node=1 --exclusive), each running `numaprobe run` with the same --budget and \
--size, --partition/--nodelist/--nodes/--account/--time/--reservation/--qos/--exclude and every \
--srun-arg passed through to srun (srun's own input variables, e.g. SLURM_RESERVATION, apply \
too). A failing node ends neither the others' tasks nor the job.\n\n\
Gathering: with --gather stream (the default) every node sends its report folder back through \
the job's output (base64 lines marked NUMAPROBE-FLEET) and numaprobe unpacks it into \
DIR/nodes/<node>/; with --gather shared every node writes DIR/nodes/<node>/ itself, so DIR must be on a \
filesystem all nodes share. The binary must be at the same path on every node (a shared \
filesystem), or name its path there with --numaprobe.\n\n\
Analysis: nodes are grouped by their topology and firmware signature (CPU model, packages, NUMA \
nodes per package (SNC/NPS), CPUs and allowed CPUs, numbering class, SLIT, THP, kernel, memory \
per node, LLC) and the groups outside the largest are named with the fields that differ; every \
measured cell is compared across the nodes with its median and MAD, and a node at least \
--outlier-sd (3.5) robust standard deviations (1.4826 x MAD) and --outlier-pct (5) % off is an \
outlier. Nodes that failed, timed out, were lost, never started or sent an incomplete report \
are listed with why, nodes that skipped a measurement are named with what is missing; the others' results are kept.\n\n\
DIR then holds one folder per node (its report and fleet-node.json: how its run ended), \
fleet.json, fleet.md, fleet.csv and fleet.html (a heatmap, odd nodes first).\n\n\
Exit status, after everything is written: 0 every node reported in full and the fleet is \
uniform; 1 every node reported but the fleet is not uniform (outliers, signature groups beside \
the largest, a node with a measurement missing); 2 bad input (nothing allocated, nothing \
written); 4 a node failed, timed out, was lost or not run (the others' results are kept); \
5 the job never started: still pending after --start-timeout, or srun could not get its \
allocation (--srun-arg=--immediate, the controller unreachable); nothing run, nothing written; \
130/143 stopped by Ctrl-C/SIGTERM (the gathered nodes and the report, marked incomplete, are \
kept)."
)]
pub struct Args {
    /// Analyse the reports already gathered in DIR (DIR/nodes/<node>/run.json) instead of running anything; the new fleet files go to a new folder beside DIR (or --report-dir, or DIR itself with --replace)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["partition", "nodelist", "nodes", "account", "time", "reservation", "start_timeout", "qos", "exclude", "srun_arg", "gather", "numaprobe", "budget", "size", "node_timeout", "grace", "unavailable"])]
    pub from: Option<PathBuf>,
    /// With --from: write the new fleet.json, .md, .csv and .html into DIR itself, replacing its own (by default they go to a new folder beside it, or --report-dir)
    #[arg(long, conflicts_with = "report_dir")]
    pub replace: bool,
    /// Slurm partition (srun --partition)
    #[arg(long)]
    pub partition: Option<String>,
    /// Nodes to run on, in Slurm's host-list form, e.g. node[001-016] (srun --nodelist)
    #[arg(long, short = 'w')]
    pub nodelist: Option<String>,
    /// How many nodes (srun --nodes); default: the number in --nodelist
    #[arg(long, short = 'N', value_parser = crate::values::count32)]
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
    #[arg(long, value_name = "SDS", default_value_t = 3.5, value_parser = crate::values::number)]
    pub outlier_sd: f64,
    /// Outlier threshold: percent off the fleet's median (both thresholds must be passed)
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0, value_parser = crate::values::number)]
    pub outlier_pct: f64,
    /// How the reports come back
    #[arg(long, value_enum, default_value = "stream")]
    pub gather: Gather,
    /// The fleet folder: DIR/nodes/<node>/ per node and the fleet's files. Default: ./numaprobe-fleet (must be new or empty). With --from: where the fleet's files go (default: a new folder beside the --from one, named DIR-judged, DIR-judged-2...)
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
    /// A node's run is stopped as timed out this long after it started, by the node; the launcher gives up on a node still running --grace later (lists it as timed out, ends the job), and stops waiting for anything this plus twice --grace after the first node started (or after --start-timeout, when none did): every node not done by then is named timed out or never started, srun is ended and the job cancelled. Default: the budget plus 120s
    #[arg(long, value_name = "DURATION")]
    pub node_timeout: Option<String>,
    /// Give up on a job that has not started this long after srun was run (pending: busy nodes, a reservation, a node Slurm will not give); nothing runs, exit 5
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub start_timeout: String,
    /// A running node silent this long (it says it is alive every 5 s) is lost, and a node of the job not started this long after the first one did never started: given up on, named (with --nodes and no --nodelist, from Slurm's list of the job's nodes), the others kept
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

/// The outlier rule from --outlier-sd and --outlier-pct, checked.
pub(super) fn outlier_rule(sd: f64, pct: f64) -> anyhow::Result<OutlierRule> {
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

/// Seconds a node's run may take beyond its budget (process start, the
/// topology, a large buffer's set-up, writing the report) before it is
/// stopped as timed out.
const NODE_ALLOWANCE_S: f64 = 120.0;

/// A node's time limit: --node-timeout, or else the budget and the
/// allowance beyond it.
pub(super) fn node_timeout(given: Option<&str>, budget: Duration) -> anyhow::Result<Duration> {
    match given {
        Some(s) => units::parse_duration(s).map_err(|_| {
            usage(format!(
                "--node-timeout '{s}': not a duration (valid: e.g. 5m or 300s)"
            ))
        }),
        None => Ok(budget + Duration::from_secs_f64(NODE_ALLOWANCE_S)),
    }
}

/// --grace checked: at least two of a node's alive periods, so a node is
/// never lost between two of its alive frames.
pub(super) fn grace(given: &str) -> anyhow::Result<Duration> {
    units::parse_duration(given)
        .ok()
        .filter(|g| *g >= 2 * ALIVE_EVERY)
        .ok_or_else(|| {
            usage(format!(
                "--grace '{}': not a duration of at least {} s (valid: e.g. 30s or 2m)",
                clip_line(given),
                (2 * ALIVE_EVERY).as_secs()
            ))
        })
}

/// --start-timeout checked: at least a second.
pub(super) fn start_timeout(given: &str) -> anyhow::Result<Duration> {
    units::parse_duration(given)
        .ok()
        .filter(|t| *t >= Duration::from_secs(1))
        .ok_or_else(|| {
            usage(format!(
                "--start-timeout '{}': not a duration of at least 1 s (valid: e.g. 10m, 120m or 90s)",
                clip_line(given)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_s_limit_is_the_one_given_or_the_budget_and_the_allowance() {
        let budget = Duration::from_secs(60);
        assert_eq!(
            node_timeout(None, budget).unwrap(),
            Duration::from_secs(180)
        );
        assert_eq!(
            node_timeout(Some("5m"), budget).unwrap(),
            Duration::from_secs(300)
        );
        assert_eq!(
            node_timeout(Some("soon"), budget).unwrap_err().to_string(),
            "--node-timeout 'soon': not a duration (valid: e.g. 5m or 300s)"
        );
    }

    #[test]
    fn the_grace_is_at_least_two_alive_periods() {
        assert_eq!(ALIVE_EVERY, Duration::from_secs(5));
        assert_eq!(grace("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(grace("2m").unwrap(), Duration::from_secs(120));
        for short in ["9s", "5s", "0s", "soon"] {
            assert_eq!(
                grace(short).unwrap_err().to_string(),
                format!(
                    "--grace '{short}': not a duration of at least 10 s (valid: e.g. 30s or 2m)"
                )
            );
        }
    }

    #[test]
    fn the_outlier_rule_takes_both_thresholds_given() {
        let rule = outlier_rule(2.0, 7.5).unwrap();
        assert_eq!((rule.min_robust_z, rule.min_off_percent), (2.0, 7.5));
        assert!(outlier_rule(f64::NAN, 5.0).is_err());
        assert!(outlier_rule(3.5, -1.0).is_err());
    }

    /// One of the duration checks.
    type Check = fn(&str) -> anyhow::Result<Duration>;

    /// The examples a refusal gives as valid are taken (hours are not a
    /// unit a duration takes).
    #[test]
    fn every_example_a_refusal_gives_is_valid() {
        let budget = Duration::from_secs(60);
        let refusals: [(String, Check); 3] = [
            (
                node_timeout(Some("x"), budget).unwrap_err().to_string(),
                |s| node_timeout(Some(s), Duration::ZERO),
            ),
            (grace("x").unwrap_err().to_string(), grace),
            (start_timeout("x").unwrap_err().to_string(), start_timeout),
        ];
        for (refusal, check) in refusals {
            let examples = refusal.split("e.g. ").nth(1).unwrap().trim_end_matches(')');
            for ex in examples
                .split([',', ' '])
                .filter(|w| !w.is_empty() && *w != "or")
            {
                assert!(check(ex).is_ok(), "{ex} in: {refusal}");
            }
        }
    }

    #[test]
    fn the_start_timeout_is_at_least_a_second() {
        assert_eq!(start_timeout("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(start_timeout("120m").unwrap(), Duration::from_secs(7200));
        for short in ["0s", "soon"] {
            assert_eq!(
                start_timeout(short).unwrap_err().to_string(),
                format!("--start-timeout '{short}': not a duration of at least 1 s (valid: e.g. 10m, 120m or 90s)")
            );
        }
    }
}
