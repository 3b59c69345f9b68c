//! The fleet folder: made new or empty and held open, the node folders
//! under its `nodes/`, a status written for each node the launcher speaks
//! for, and read back node by node (`--from` and after a gather), each
//! node's end put in words.

use super::finish::Dest;
use super::node::STATUS_FILE;
use crate::output::usage;
use crate::safe_dir::SafeDir;
use anyhow::Context;
use numaprobe_core::analysis::fleet::{self as analysis, NodeInput};
use numaprobe_core::model::fleet::{NodeRunStatus, NodeStatus};
use numaprobe_core::model::input::file_kind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A node's report in its folder.
const RUN_JSON: &str = "run.json";

/// The folder of the node folders inside a fleet folder (`DIR/nodes/<node>/`):
/// a node's name can never clash with the fleet's own files (a node called
/// `fleet.json`).
pub(super) const NODES: &str = "nodes";

/// Nodes refused during a gather, with why: something else than
/// numaprobe's own folder or file took a name of theirs (a link, a FIFO, a
/// file planted at `nodes/<node>`), so nothing of theirs is written through
/// it or read from it; the other nodes go on.
pub(super) type Refused = BTreeMap<String, String>;

/// Write `name` into `nodes/<node>/` (`nodes` held open, the node's folder
/// made and opened under it without following a link). `Ok(Err(why))`
/// when something planted there refuses this node alone; any other
/// failure (a full disk) is the gather's.
pub(super) fn write_node_file(
    nodes: &SafeDir,
    node: &str,
    name: &str,
    bytes: &[u8],
) -> anyhow::Result<Result<(), String>> {
    match nodes.subdir(node, true).and_then(|d| d.write(name, bytes)) {
        Ok(()) => Ok(Ok(())),
        Err(e) => match planted(nodes, node, Some(name)) {
            Some(why) => Ok(Err(why)),
            None => Err(e),
        },
    }
}

/// Why `nodes/<node>` (or the node's `file` in it) is not numaprobe's to
/// write or read: it is held by something else than a folder (a regular
/// file, for `file`). None when it is what it should be, or missing.
fn planted(nodes: &SafeDir, node: &str, file: Option<&str>) -> Option<String> {
    match nodes.entry(node).ok()? {
        Some(m) if !m.is_dir() => {
            return Some(format!(
                "refused: its folder {NODES}/{node} was replaced by {}; nothing written through it or read from it",
                file_kind(&m.file_type())
            ))
        }
        Some(_) => {}
        None => return None,
    }
    let file = file?;
    match nodes.subdir(node, false).ok()?.entry(file).ok()? {
        Some(m) if !m.is_file() => Some(format!(
            "refused: its {NODES}/{node}/{file} was replaced by {}; nothing written through it or read from it",
            file_kind(&m.file_type())
        )),
        _ => None,
    }
}

/// Write `DIR/nodes/<node>/fleet-node.json` for a node the launcher speaks
/// for; `nodes` is the fleet folder's `nodes/`, held open. A node already
/// refused is left alone; one whose folder or status file is found planted
/// now joins `refused`.
pub(super) fn write_status(
    nodes: &SafeDir,
    st: &NodeRunStatus,
    refused: &mut Refused,
) -> anyhow::Result<()> {
    if refused.contains_key(&st.node) {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(st)? + "\n";
    if let Err(why) = write_node_file(nodes, &st.node, STATUS_FILE, text.as_bytes())? {
        eprintln!("numaprobe: {}: {why}; the others go on", st.node);
        refused.insert(st.node.clone(), why);
    }
    Ok(())
}

/// A fleet folder must be new or empty (node folders of an earlier fleet
/// would be read as this one's), a real folder of numaprobe's user
/// ([`SafeDir::own`]). Returns the folder and its `nodes/`, both held open.
pub(super) fn prepare_dir(dir: &Path) -> anyhow::Result<(SafeDir, SafeDir)> {
    let top = SafeDir::own(dir, "--report-dir", true)?;
    let names = top
        .names()
        .with_context(|| format!("cannot read {}", dir.display()))?;
    if !names.is_empty() {
        return Err(usage(format!(
            "--report-dir {}: not empty; choose a new or empty folder (re-analyse a gathered one with --from {})",
            dir.display(),
            dir.display()
        )));
    }
    let nodes = top.subdir(NODES, true)?;
    Ok((top, nodes))
}

/// The fleet's own files, written beside the node folders.
const FLEET_FILES: [&str; 4] = ["fleet.json", "fleet.md", "fleet.csv", "fleet.html"];

/// Where `--from DIR` writes its fleet files, and whether that is DIR
/// itself: `--report-dir` (new or empty), DIR itself with `--replace`,
/// else a new folder beside DIR (`DIR-judged`, `DIR-judged-2`, ...), so
/// that a judgement with other thresholds never silently replaces the one
/// the folder holds. With `--replace`, a flat gathered folder
/// (`DIR/<node>/`) whose node is named like a fleet file (`fleet.md`)
/// cannot take that file: the files go beside it, said in one line, so
/// that no node's name can keep the report from being written. A folder
/// to make is made only when the first file is ready ([`Dest::Later`]),
/// and said on stderr then.
pub(super) fn judged_dir<'a>(
    from: &'a Path,
    report_dir: Option<&'a Path>,
    replace: bool,
) -> anyhow::Result<(Dest<'a>, bool)> {
    if replace {
        let held = SafeDir::own(from, "--from", false)?;
        let Some(name) = node_named_like_a_fleet_file(&held)? else {
            return Ok((Dest::Made(held), true));
        };
        let make = move || {
            let beside = beside(from)?;
            eprintln!(
                "numaprobe: --replace: {}/{name} is a node's folder, where the fleet's {name} would go; the fleet's files go to {}/ instead ({} itself is left as it is)",
                shown(from),
                shown(beside.path()),
                shown(from)
            );
            Ok(beside)
        };
        return Ok((Dest::Later(Box::new(make)), false));
    }
    let make = move || {
        let held = match report_dir {
            Some(out) => {
                let held = SafeDir::own(out, "--report-dir", true)?;
                if !held
                    .names()
                    .with_context(|| format!("cannot read {}", out.display()))?
                    .is_empty()
                {
                    return Err(usage(format!(
                        "--report-dir {}: not empty; choose a new or empty folder, or --replace to write into --from {} itself",
                        out.display(),
                        from.display()
                    )));
                }
                held
            }
            None => beside(from)?,
        };
        eprintln!(
            "numaprobe: judging the nodes of {} into {}/ ({} itself is left as it is; --replace writes there)",
            shown(from),
            shown(held.path()),
            shown(from)
        );
        Ok(held)
    };
    Ok((Dest::Later(Box::new(make)), false))
}

/// A path on one line, cleaned for the terminal.
fn shown(p: &Path) -> String {
    numaprobe_core::clean::line(&p.display().to_string(), numaprobe_core::clean::UNCLIPPED)
}

/// The first fleet file name that a folder holds in `dir` (a node's, in
/// the flat layout). Anything else under such a name (a link, a FIFO) is
/// left for the write to refuse.
fn node_named_like_a_fleet_file(dir: &SafeDir) -> anyhow::Result<Option<&'static str>> {
    for name in FLEET_FILES {
        let entry = dir
            .entry(name)
            .with_context(|| format!("cannot read {}", dir.path().join(name).display()))?;
        if entry.is_some_and(|m| m.is_dir()) {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// A new folder beside `from`: `DIR-judged`, `DIR-judged-2`, ...
fn beside(from: &Path) -> anyhow::Result<SafeDir> {
    let full = from
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", from.display()))?;
    let (Some(parent), Some(name)) = (full.parent(), full.file_name()) else {
        return Err(usage(format!(
            "--from {}: has no folder beside it to write into; give --report-dir DIR or --replace",
            from.display()
        )));
    };
    let name = name.to_string_lossy();
    for i in 1..=MAX_JUDGED {
        let candidate = parent.join(match i {
            1 => format!("{name}-judged"),
            i => format!("{name}-judged-{i}"),
        });
        if std::fs::symlink_metadata(&candidate).is_ok() {
            continue;
        }
        return SafeDir::own(&candidate, "--report-dir", true);
    }
    Err(usage(format!(
        "--from {}: {name}-judged up to {name}-judged-{MAX_JUDGED} all exist beside it; give --report-dir DIR or --replace",
        from.display()
    )))
}

/// Folders `judged_dir` tries beside a `--from` folder.
const MAX_JUDGED: usize = 100;

/// Where a gathered folder keeps its node folders: `DIR/nodes/`, or `DIR`
/// itself in the flat layout `DIR/<node>/` (also read; there a `nodes`
/// folder holding a run.json or fleet-node.json is a node's).
pub(super) fn nodes_root(dir: &Path) -> PathBuf {
    let nodes = dir.join(NODES);
    let is_a_node = [RUN_JSON, STATUS_FILE]
        .iter()
        .any(|f| std::fs::symlink_metadata(nodes.join(f)).is_ok());
    if nodes.is_dir() && !is_a_node {
        nodes
    } else {
        dir.to_path_buf()
    }
}

/// The node folders of a fleet folder, in natural order.
pub(super) fn subfolders(dir: &Path) -> anyhow::Result<Vec<String>> {
    let dir = nodes_root(dir);
    let mut v: Vec<String> = std::fs::read_dir(&dir)
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
    let names = if dir.is_dir() {
        subfolders(dir)?
    } else {
        Vec::new()
    };
    if names.is_empty() {
        return Err(usage(format!(
            "--from {}: {}; fleet --from takes the folder numaprobe fleet gathered (DIR/nodes/<node>/run.json)",
            dir.display(),
            found_instead(dir)
        )));
    }
    let dir = nodes_root(dir);
    Ok(names.into_iter().map(move |name| {
        let folder = dir.join(&name);
        let run_json = numaprobe_core::model::input::read_text(&folder.join(RUN_JSON)).ok();
        let status = numaprobe_core::model::input::read_text(&folder.join(STATUS_FILE)).ok();
        node_input(name, run_json, status)
    }))
}

/// What a `--from` that is no gathered folder holds, in words: "a run
/// document", "a report folder: run.json (run), with no node folders",
/// "not a numaprobe document".
fn found_instead(path: &Path) -> String {
    use numaprobe_core::model::document::{pick, Accepts, DocumentError, Kind};
    let any = Accepts {
        reader: "fleet --from",
        kinds: &Kind::ALL,
    };
    let folder = path.is_dir();
    let found = match pick(path, &any) {
        Err(DocumentError::Missing { .. }) => return "no such file or folder".into(),
        Ok(picked) => picked.named(),
        Err(_) if folder => "a folder without numaprobe documents".into(),
        Err(DocumentError::NotTaken { found, .. }) => found,
        Err(_) => "not a numaprobe document".into(),
    };
    if folder {
        format!("{found}, with no node folders")
    } else {
        found
    }
}

/// A node as the analysis takes it: its run.json and how its run ended,
/// from its fleet-node.json (when there).
fn node_input(name: String, run_json: Option<String>, status: Option<String>) -> NodeInput {
    let failure = status.map(|text| {
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
    });
    NodeInput {
        name,
        run_json,
        failure: failure.flatten(),
    }
}

/// The nodes a gather left under `nodes/` (held open), read back through
/// that handle: every node folder, in natural order, and every node in
/// `refused` as failed with why. A name of `known` (the job's nodes, those
/// heard from) held by something else than a folder is refused the same
/// way; any other entry that is not a folder is no node's.
pub(super) fn read_held(
    nodes: &SafeDir,
    mut refused: Refused,
    known: Vec<String>,
) -> anyhow::Result<impl Iterator<Item = NodeInput> + '_> {
    let mut names: Vec<String> = nodes
        .names()
        .with_context(|| format!("cannot read {}", nodes.path().display()))?
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .chain(refused.keys().cloned())
        .collect();
    names.sort_by(|a, b| analysis::natural_cmp(a, b));
    names.dedup();
    Ok(names.into_iter().filter_map(move |name| {
        let failed = |why: String| NodeInput {
            name: name.clone(),
            run_json: None,
            failure: Some((NodeStatus::Failed, why)),
        };
        if let Some(why) = refused.remove(&name) {
            return Some(failed(why));
        }
        let Ok(folder) = nodes.subdir(&name, false) else {
            let why = planted(nodes, &name, None).filter(|_| known.contains(&name))?;
            return Some(failed(why));
        };
        let read = |file: &str| match folder.read_text(file) {
            Ok(text) => Ok(text),
            Err(e) => Err(planted(nodes, &name, Some(file))
                .unwrap_or_else(|| format!("its {file} cannot be read: {e}"))),
        };
        match (read(RUN_JSON), read(STATUS_FILE)) {
            (Ok(run_json), Ok(status)) => Some(node_input(name.clone(), run_json, status)),
            (Err(why), _) | (_, Err(why)) => Some(failed(why)),
        }
    }))
}
