//! What `numaprobe fleet` asks of Slurm before and around its one `srun`:
//! finding Slurm, checking the partition and the listed nodes' states
//! (sinfo) before anything is allocated, expanding a nodelist, building the
//! srun that runs `numaprobe fleet-node` as one exclusive task on every
//! selected node, and cancelling the job. Running that srun and reading
//! its output back is [`super::launch`]. Slurm does the launching, the
//! exclusivity and the time limit; nothing here starts processes on other
//! machines itself.

use super::node::Gather;
use crate::output::usage;
use numaprobe_core::render::diff::is_numaprobe_drain;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What to ask Slurm for: passed through as srun's own options.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub partition: Option<String>,
    pub nodelist: Option<String>,
    pub nodes: Option<u32>,
    pub account: Option<String>,
    pub time: Option<String>,
    pub reservation: Option<String>,
    pub qos: Option<String>,
    pub exclude: Option<String>,
    /// More srun options, as the user gave them (`--srun-arg`).
    pub extra: Vec<String>,
}

/// The job's name: `numaprobe-fleet-` and this process's id, so that
/// `scancel --me --name` ends this fleet's job and no other.
pub fn job_name() -> String {
    format!("numaprobe-fleet-{}", std::process::id())
}

/// Cancel this fleet's job (`scancel --me --name`), for when srun had to be
/// killed and the allocation would outlive it. Best effort: a job already
/// gone is what was wanted.
pub fn scancel() -> bool {
    Command::new("scancel")
        .arg("--me")
        .arg(format!("--name={}", job_name()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What Slurm says of a node before launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Idle: the job can have it now.
    Free,
    /// Allocated to other jobs: the exclusive job waits until it is free.
    Busy(String),
    /// Drained, down, reserved, not responding...: the job would sit
    /// pending for it, perhaps for ever.
    Unavailable(String),
}

/// Judge one node from sinfo's long state (`%T`, e.g. `drained`,
/// `idle*`, `reserved`, `maint`) and reason (`%E`). A reserved node, or one
/// in a maintenance reservation, is available when the fleet runs in a
/// reservation (`in_reservation`): Slurm then says whether it is the named
/// one. A drain is named by who made it: numaprobe's own health check
/// (its reason says so) or someone else.
pub fn availability(state: &str, reason: &str, in_reservation: bool) -> Availability {
    let state = state.trim().to_ascii_lowercase();
    let reason_text = reason.trim();
    let reason = if reason_text.is_empty() || reason_text.eq_ignore_ascii_case("none") {
        String::new()
    } else {
        format!(": {}", reason_text.chars().take(120).collect::<String>())
    };
    // sinfo's flags after the state: * not responding, ~ powered off,
    // # powering up, % powering down, $ in a maintenance reservation,
    // @ reboot pending, ! power down pending, ^ rebooting, - planned.
    let base = state.trim_end_matches(['*', '~', '#', '%', '$', '@', '!', '^', '-', '+']);
    let flags = &state[base.len()..];
    let words = |what: &str| format!("{state} ({what}){reason}");
    if flags.contains('*') {
        return Availability::Unavailable(words("not responding"));
    }
    if flags.contains('~') || flags.contains('%') || flags.contains('!') {
        return Availability::Unavailable(words("powered down"));
    }
    if flags.contains('$') && !in_reservation {
        return Availability::Unavailable(words("in a maintenance reservation"));
    }
    match base {
        "idle" | "planned" => Availability::Free,
        "allocated" | "mixed" | "completing" => Availability::Busy(format!("{state}{reason}")),
        "reserved" | "maint" if in_reservation => Availability::Free,
        "reserved" => Availability::Unavailable(words("reserved; give --reservation")),
        "maint" => {
            Availability::Unavailable(words("in a maintenance reservation; give --reservation"))
        }
        b if b.starts_with("drain") && is_numaprobe_drain(reason_text) => {
            Availability::Unavailable(words(
                "drained by numaprobe's health check; numaprobe check on it says why",
            ))
        }
        // Drained by hand or by Slurm itself: its reason says which.
        b if b.starts_with("drain") => Availability::Unavailable(format!("{state}{reason}")),
        "down" | "fail" | "failing" => Availability::Unavailable(words("down")),
        _ => Availability::Unavailable(words("not schedulable")),
    }
}

/// Each listed node's availability, through one `sinfo` (None when sinfo
/// cannot say: srun will). A node in several partitions is judged once.
pub fn node_states(nodes: &[String], in_reservation: bool) -> Option<Vec<(String, Availability)>> {
    let out = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%N|%T|%E", "-n"])
        .arg(nodes.join(","))
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut seen: BTreeMap<String, Availability> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut f = line.splitn(3, '|');
        let (Some(n), Some(st), r) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        seen.entry(n.trim().to_string())
            .or_insert_with(|| availability(st, r.unwrap_or(""), in_reservation));
    }
    Some(
        nodes
            .iter()
            .filter_map(|n| seen.get(n).map(|a| (n.clone(), a.clone())))
            .collect(),
    )
}

/// The nodes of this fleet's running job by name (`squeue --me --name`'s
/// node list, expanded by scontrol); None when Slurm cannot say.
pub fn job_nodes() -> Option<Vec<String>> {
    let out = Command::new("squeue")
        .args(["--me", "-h", "-o", "%N"])
        .arg(format!("--name={}", job_name()))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let list = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    expand_nodelist(list)
}

/// A program on PATH, or None.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Fail with one line when Slurm's client is not there.
pub fn find_srun() -> anyhow::Result<PathBuf> {
    on_path("srun").ok_or_else(|| {
        usage(
            "no Slurm found: srun is not on PATH; run numaprobe fleet where Slurm's client tools are (a login node), or analyse gathered reports with --from DIR",
        )
    })
}

/// Check `--partition` against `sinfo`'s list, so a typo is one line before
/// anything is allocated rather than srun's message after a wait.
pub fn check_partition(partition: &str) -> anyhow::Result<()> {
    let out = Command::new("sinfo")
        .args(["-h", "-o", "%P"])
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(o) if o.status.success() => o,
        // sinfo missing or failing (controller down): let srun say it.
        _ => return Ok(()),
    };
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().trim_end_matches('*').to_string())
        .filter(|l| !l.is_empty())
        .collect();
    if names.iter().any(|n| n == partition) {
        return Ok(());
    }
    Err(usage(format!(
        "--partition {partition}: no such partition; this cluster has {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// Node names of a Slurm host list (`np[1-3]`), through scontrol; None
/// when scontrol cannot say.
pub fn expand_nodelist(list: &str) -> Option<Vec<String>> {
    let out = Command::new("scontrol")
        .args(["show", "hostnames", list])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    })
}

/// The srun command line (without the program): one exclusive task per
/// node, the selection passed through, a failing task ending neither the
/// step (--kill-on-bad-exit=0) nor the job (--no-kill).
pub fn srun_args(
    sel: &Selection,
    exe: &Path,
    gather: Gather,
    node_dir: &Path,
    timeout_s: f64,
    run_args: &[String],
) -> Vec<String> {
    let mut a: Vec<String> = vec![
        format!("--job-name={}", job_name()),
        "--ntasks-per-node=1".into(),
        "--exclusive".into(),
        "--kill-on-bad-exit=0".into(),
        "--no-kill".into(),
    ];
    if let Some(n) = sel.nodes {
        a.push(format!("--nodes={n}"));
        a.push(format!("--ntasks={n}"));
    }
    for (opt, v) in [
        ("--partition", &sel.partition),
        ("--nodelist", &sel.nodelist),
        ("--account", &sel.account),
        ("--time", &sel.time),
        ("--reservation", &sel.reservation),
        ("--qos", &sel.qos),
        ("--exclude", &sel.exclude),
    ] {
        if let Some(v) = v {
            a.push(format!("{opt}={v}"));
        }
    }
    // Last before the program, so an option given twice is the user's.
    a.extend(sel.extra.iter().cloned());
    a.push("--".into());
    a.push(exe.display().to_string());
    a.push("fleet-node".into());
    a.push(format!(
        "--gather={}",
        match gather {
            Gather::Shared => "shared",
            Gather::Stream => "stream",
        }
    ));
    a.push(format!("--dir={}", node_dir.display()));
    a.push(format!("--timeout-s={timeout_s}"));
    a.push("--".into());
    a.extend(run_args.iter().cloned());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srun_gets_one_exclusive_task_per_node_and_the_selection() {
        let sel = Selection {
            partition: Some("batch".into()),
            nodelist: Some("np[1-3]".into()),
            nodes: None,
            account: Some("hpc".into()),
            time: Some("10:00".into()),
            reservation: Some("maint".into()),
            qos: Some("high".into()),
            exclude: Some("np2".into()),
            extra: vec!["--constraint=ib".into(), "-v".into()],
        };
        let a = srun_args(
            &sel,
            Path::new("/opt/numaprobe"),
            Gather::Stream,
            Path::new("/tmp"),
            65.0,
            &["--budget".into(), "5s".into()],
        );
        for want in [
            "--ntasks-per-node=1",
            "--exclusive",
            "--kill-on-bad-exit=0",
            "--partition=batch",
            "--nodelist=np[1-3]",
            "--account=hpc",
            "--time=10:00",
            "--reservation=maint",
            "--qos=high",
            "--exclude=np2",
        ] {
            assert!(a.iter().any(|x| x == want), "{want} missing from {a:?}");
        }
        let sep = a.iter().position(|x| x == "--").unwrap();
        assert_eq!(a[sep - 2..sep], ["--constraint=ib", "-v"]);
        assert_eq!(a[sep + 1], "/opt/numaprobe");
        assert_eq!(a[sep + 2], "fleet-node");
        assert_eq!(&a[a.len() - 2..], ["--budget", "5s"]);
    }

    #[test]
    fn sinfo_states_are_judged_with_their_reason() {
        use Availability::*;
        assert_eq!(availability("idle", "none", false), Free);
        assert_eq!(
            availability("drained", "bad DIMM", false),
            Unavailable("drained: bad DIMM".into())
        );
        assert_eq!(
            availability("draining", "", false),
            Unavailable("draining".into())
        );
        assert_eq!(
            availability("drained", "allowed CPUs 0-1!=0 [numaprobe]", false),
            Unavailable("drained (drained by numaprobe's health check; numaprobe check on it says why): allowed CPUs 0-1!=0 [numaprobe]".into())
        );
        assert_eq!(
            availability("drained", "numaprobe check", true),
            Unavailable("drained: numaprobe check".into())
        );
        assert_eq!(
            availability("maint", "", false),
            Unavailable("maint (in a maintenance reservation; give --reservation)".into())
        );
        assert_eq!(availability("maint", "", true), Free);
        assert_eq!(
            availability("idle*", "Not responding", false),
            Unavailable("idle* (not responding): Not responding".into())
        );
        assert_eq!(
            availability("down*", "", false),
            Unavailable("down* (not responding)".into())
        );
        assert_eq!(
            availability("DOWN", "slurmd gone", false),
            Unavailable("down (down): slurmd gone".into())
        );
        // A node gone down keeps the reason of its earlier drain: it is
        // down, and never said to be drained by numaprobe.
        assert_eq!(
            availability("down", "thp always!=never [numaprobe]", false),
            Unavailable("down (down): thp always!=never [numaprobe]".into())
        );
        assert_eq!(
            availability("reserved", "", false),
            Unavailable("reserved (reserved; give --reservation)".into())
        );
        assert_eq!(availability("reserved", "", true), Free);
        assert_eq!(
            availability("idle$", "", false),
            Unavailable("idle$ (in a maintenance reservation)".into())
        );
        assert_eq!(availability("idle$", "", true), Free);
        // Powered off, powering down or a power down pending: each alone
        // keeps the job pending.
        for st in ["idle~", "idle%", "idle!"] {
            assert_eq!(
                availability(st, "", false),
                Unavailable(format!("{st} (powered down)"))
            );
        }
        assert_eq!(availability("mixed", "", false), Busy("mixed".into()));
        assert_eq!(
            availability("allocated", "", false),
            Busy("allocated".into())
        );
        assert_eq!(
            availability("future", "", false),
            Unavailable("future (not schedulable)".into())
        );
    }
}
