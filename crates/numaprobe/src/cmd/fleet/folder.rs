//! The fleet folder: made new or empty, a status written for each node the
//! launcher speaks for, and read back node by node (`--from` and after a
//! gather), each node's end put in words.

use super::node::STATUS_FILE;
use crate::output::usage;
use crate::safe_dir::write_file;
use anyhow::Context;
use numaprobe_core::analysis::fleet::{self as analysis, NodeInput};
use numaprobe_core::model::fleet::{NodeRunStatus, NodeStatus};
use std::path::Path;

/// Write `DIR/<node>/fleet-node.json` for a node the launcher speaks for.
pub(super) fn write_status(dir: &Path, st: &NodeRunStatus) -> anyhow::Result<()> {
    let folder = dir.join(&st.node);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let p = folder.join(STATUS_FILE);
    write_file(&p, (serde_json::to_string_pretty(st)? + "\n").as_bytes())?;
    Ok(())
}

/// A fleet folder must be new or empty: node folders of an earlier fleet
/// would be read as this one's.
pub(super) fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
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

pub(super) fn subfolders(dir: &Path) -> anyhow::Result<Vec<String>> {
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

pub(super) fn ended_in_words(st: &NodeRunStatus) -> String {
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
            Ok(text) => {
                match numaprobe_core::model::bounded::from_slice::<NodeRunStatus>(text.as_bytes()) {
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
                }
            }
        };
        NodeInput {
            name,
            run_json,
            failure,
        }
    }))
}
