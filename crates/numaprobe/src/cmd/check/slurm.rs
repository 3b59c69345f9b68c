//! `check --slurm-drain`: Slurm's HealthCheckProgram mode. A node that
//! differs is drained with the first difference as the reason
//! (`scontrol update nodename=N state=drain reason="numaprobe: ..."`); a
//! node that matches is left as it is, and so is a node an administrator
//! drained for another reason (its reason is not overwritten). A failure
//! never drains: it returns an error, which `check` turns into exit 3.
//! Nodes are never resumed: a memory fault that comes and goes wants a
//! person's look (doc/production.md).

use crate::output::usage;
use numaprobe_core::analysis::fleet::stream::valid_node_name;
use numaprobe_core::model::diff::CheckReport;
use numaprobe_core::render::diff::drain_reason;
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

/// Drain `node` when `report` found a difference; nothing when it matches.
pub fn act(report: &CheckReport, node: &str) -> anyhow::Result<()> {
    let Some(reason) = drain_reason(report) else {
        return Ok(());
    };
    let shown = scontrol(&["show", "node", "-o", node])?;
    let (state, current) = state_and_reason(&shown);
    if state.contains("DRAIN") && !current.is_some_and(|r| r.starts_with("numaprobe:")) {
        eprintln!(
            "numaprobe: {node} is already drained ({}); its reason is left as it is",
            current.unwrap_or("no reason given")
        );
        return Ok(());
    }
    // Drained by an earlier check for the same reason: leave its time stamp.
    if state.contains("DRAIN") && current.is_some_and(|r| r.starts_with(&reason)) {
        return Ok(());
    }
    scontrol(&[
        "update",
        &format!("nodename={node}"),
        "state=drain",
        &format!("reason={reason}"),
    ])?;
    eprintln!("numaprobe: drained {node}: {reason}");
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
        let line = "NodeName=np3 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 Reason=numaprobe: allowed CPUs: expected 0-1, found 0 [root@2026-11-27T20:01:02]\n";
        let (s, r) = state_and_reason(line);
        assert_eq!(s, "IDLE+DRAIN");
        assert_eq!(
            r,
            Some("numaprobe: allowed CPUs: expected 0-1, found 0 [root@2026-11-27T20:01:02]")
        );
        let (s, r) = state_and_reason("NodeName=np1 State=IDLE ThreadsPerCore=1");
        assert_eq!((s, r), ("IDLE", None));
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
