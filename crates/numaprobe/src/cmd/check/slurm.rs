//! `check --slurm-drain`: Slurm's HealthCheckProgram mode. A node that
//! differs is drained with the first difference as the reason
//! (`scontrol update nodename=N state=drain reason="allowed CPUs 0-1!=0
//! [numaprobe]"`), and a reason of numaprobe's is replaced when the
//! differences change; a node that matches is left as it is, and so is a
//! node an administrator drained for another reason (its reason is not
//! overwritten). A failure never drains: it returns an error, which `check`
//! turns into exit 3. Nodes are never resumed: a memory fault that comes and
//! goes wants a person's look (doc/production.md). `--dry-run` says what
//! would be done and does none of it.

use crate::output::usage;
use numaprobe_core::analysis::fleet::stream::valid_node_name;
use numaprobe_core::clean;
use numaprobe_core::model::diff::CheckReport;
use numaprobe_core::render::diff::{drain_reason, is_numaprobe_drain, without_stamp};
use std::process::Command;

/// The Slurm name of this node: `--node`, else SLURMD_NODENAME (slurmd sets
/// it for its HealthCheckProgram), else the host name. Checked to be one
/// host name, so that it can never address a range (`np[1-3]`) or a list.
pub fn node(flag: Option<&str>) -> anyhow::Result<String> {
    let name = flag.map_or_else(crate::cmd::fleet::node::node_name, String::from);
    if !valid_node_name(&name) {
        return Err(usage(format!(
            "--node: '{}' is not one node's name (letters, digits, '.', '-', '_'); a range or list would drain more than this node",
            name.chars().take(200).collect::<String>()
        )));
    }
    Ok(name)
}

/// What `--slurm-drain` does about a node, given its check's drain reason
/// (None: it matches) and what `scontrol show node` says of it now.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// It matches: nothing, and never a resume.
    Nothing,
    /// Drained by someone else: their reason is kept.
    KeepOthers(String),
    /// Drained by numaprobe for the same differences: left as it is, with
    /// its time stamp.
    Same,
    /// Drain it (or replace numaprobe's earlier, different reason).
    Drain {
        reason: String,
        replaces: Option<String>,
    },
}

/// Decide what to do; no side effect, so the rule is tested without Slurm.
pub fn decide(reason: Option<String>, state: &str, current: Option<&str>) -> Action {
    let Some(reason) = reason else {
        return Action::Nothing;
    };
    if !state.contains("DRAIN") {
        return Action::Drain {
            reason,
            replaces: None,
        };
    }
    match current.map(without_stamp) {
        Some(c) if c == reason => Action::Same,
        Some(c) if is_numaprobe_drain(c) => Action::Drain {
            reason,
            replaces: Some(c.to_string()),
        },
        c => Action::KeepOthers(c.unwrap_or("no reason given").to_string()),
    }
}

/// Drain `node` when `report` found a difference; nothing when it matches.
/// With `dry_run`, say what would be done and do nothing.
pub fn act(report: &CheckReport, node: &str, dry_run: bool) -> anyhow::Result<()> {
    let reason = drain_reason(report);
    if reason.is_none() {
        if dry_run {
            eprintln!("numaprobe: dry run: {node} matches: nothing would be done");
        }
        return Ok(());
    }
    let shown = scontrol(&["show", "node", "-o", node])?;
    let (state, current) = state_and_reason(&shown);
    let would = if dry_run { "would be " } else { "" };
    // scontrol's reasons are anyone's text: shown cleaned, passed on as they are.
    let shown = |r: &str| clean::line(r, clean::SHOWN_MAX);
    match decide(reason, state, current) {
        Action::Nothing => {}
        Action::KeepOthers(r) => {
            eprintln!(
                "numaprobe: {node} is already drained ({}); its reason {would}left as it is",
                shown(&r)
            )
        }
        Action::Same => {
            if dry_run {
                eprintln!("numaprobe: dry run: {node} is already drained by numaprobe for these differences: nothing would be done");
            }
        }
        Action::Drain { reason, replaces } => {
            let was = replaces
                .map(|r| format!(" (replacing {})", shown(&r)))
                .unwrap_or_default();
            if dry_run {
                eprintln!(
                    "numaprobe: dry run: would run: scontrol update nodename={node} state=drain reason=\"{}\"{was}",
                    shown(&reason)
                );
                return Ok(());
            }
            // The drain is this check's answer: a stop signal waits for it.
            let _hold = crate::stop_now::Hold::take();
            scontrol(&[
                "update",
                &format!("nodename={node}"),
                "state=drain",
                &format!("reason={reason}"),
            ])?;
            eprintln!("numaprobe: drained {node}: {}{was}", shown(&reason));
        }
    }
    Ok(())
}

/// Run scontrol; its stdout, or an error with its first line of stderr.
fn scontrol(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("scontrol")
        .args(args)
        .output()
        .map_err(|e| anyhow::anyhow!("--slurm-drain: cannot run scontrol: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        anyhow::bail!(
            "--slurm-drain: scontrol {} failed ({}): {}",
            args[0],
            out.status,
            err.lines().next().unwrap_or("no message")
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `State=` and `Reason=` of `scontrol show node -o`'s one line (the reason
/// runs to the end of the line, ending with `[user@time]`).
fn state_and_reason(line: &str) -> (&str, Option<&str>) {
    let state = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("State="))
        .unwrap_or("");
    let reason = line
        .find(" Reason=")
        .map(|i| line[i + " Reason=".len()..].trim_end());
    (state, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_and_the_whole_reason_are_read() {
        let line = "NodeName=np3 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 Reason=allowed CPUs 0-1!=0 [numaprobe] [root@2026-11-27T20:01:02]\n";
        let (s, r) = state_and_reason(line);
        assert_eq!(s, "IDLE+DRAIN");
        assert_eq!(
            r,
            Some("allowed CPUs 0-1!=0 [numaprobe] [root@2026-11-27T20:01:02]")
        );
        let (s, r) = state_and_reason("NodeName=np1 State=IDLE ThreadsPerCore=1");
        assert_eq!((s, r), ("IDLE", None));
    }

    #[test]
    fn a_drain_is_made_kept_or_replaced_by_whose_it_is() {
        let r = |s: &str| Some(s.to_string());
        let new = "thp always!=never [numaprobe]";
        assert_eq!(decide(None, "IDLE+DRAIN", Some("x")), Action::Nothing);
        assert_eq!(decide(None, "IDLE", None), Action::Nothing);
        assert_eq!(
            decide(r(new), "IDLE", None),
            Action::Drain {
                reason: new.into(),
                replaces: None
            }
        );
        // A reason left from an earlier drain of a node since resumed is
        // not a drain.
        assert_eq!(
            decide(r(new), "IDLE", Some("admin: fan")),
            Action::Drain {
                reason: new.into(),
                replaces: None
            }
        );
        assert_eq!(
            decide(
                r(new),
                "IDLE+DRAIN",
                Some("admin: fan [root@2026-11-27T20:01:02]")
            ),
            Action::KeepOthers("admin: fan".into())
        );
        assert_eq!(
            decide(r(new), "DRAINED", None),
            Action::KeepOthers("no reason given".into())
        );
        assert_eq!(
            decide(
                r(new),
                "IDLE+DRAIN",
                Some("thp always!=never [numaprobe] [root@2026-11-27T20:01:02]")
            ),
            Action::Same
        );
        // The differences changed: numaprobe's stale reason is replaced.
        let stale = "thp always!=never (+1 more) [numaprobe]";
        assert_eq!(
            decide(
                r(new),
                "MIXED+DRAIN",
                Some(&format!("{stale} [root@2026-11-27T20:01:02]"))
            ),
            Action::Drain {
                reason: new.into(),
                replaces: Some(stale.into())
            }
        );
        assert_eq!(
            decide(
                r(new),
                "IDLE+DRAIN",
                Some("numaprobe: thp: expected always, found never")
            ),
            Action::Drain {
                reason: new.into(),
                replaces: Some("numaprobe: thp: expected always, found never".into())
            }
        );
    }

    #[test]
    fn a_range_or_list_is_not_a_node() {
        assert_eq!(node(Some("np3")).unwrap(), "np3");
        for bad in ["np[1-3]", "np1,np2", "", "-x", "a b"] {
            let e = node(Some(bad)).unwrap_err();
            assert_eq!(crate::output::exit_code(&e), 2, "{bad}");
        }
    }
}
