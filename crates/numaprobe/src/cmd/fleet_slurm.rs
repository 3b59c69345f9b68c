//! The Slurm side of `numaprobe fleet`: finding Slurm, checking the
//! partition before anything is allocated, building the one `srun` that
//! runs `numaprobe fleet-node` as one exclusive task on every selected node,
//! and reading its output back into `DIR/<node>/` folders. Slurm does the
//! launching, the exclusivity and the time limit; nothing here starts
//! processes on other machines itself.

use super::fleet_frame::{self, Assembler, Frame, NodeRunStatus};
use super::fleet_node::{Gather, STATUS_FILE};
use crate::output::{usage, write_atomic};
use anyhow::Context;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
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
        "--job-name=numaprobe-fleet".into(),
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
    ] {
        if let Some(v) = v {
            a.push(format!("{opt}={v}"));
        }
    }
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

/// What came back from srun.
#[derive(Debug, Default)]
pub struct Gathered {
    /// Nodes that said they started.
    pub started: Vec<String>,
    /// Nodes that said how they ended.
    pub ended: BTreeMap<String, NodeRunStatus>,
    /// srun's exit status and the last lines of its stderr.
    pub srun_status: Option<i32>,
    pub srun_stderr: Vec<String>,
    /// Problems with the stream itself (a torn frame, a file never completed).
    pub problems: Vec<String>,
}

/// Run srun, unpack streamed files into `dir/<node>/` as they come, and
/// tell `progress` each time a node is done.
pub fn launch(
    srun: &Path,
    args: &[String],
    dir: &Path,
    mut progress: impl FnMut(&str, &NodeRunStatus),
) -> anyhow::Result<Gathered> {
    let mut child = Command::new(srun)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", srun.display()))?;
    let mut err = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let mut g = Gathered::default();
    let mut asm = Assembler::default();
    let stdout = child.stdout.take().context("srun's output")?;
    for line in BufReader::new(stdout).lines() {
        let line = line.context("cannot read srun's output")?;
        let frame = match fleet_frame::parse_line(&line) {
            None => continue,
            Some(Err(e)) => {
                g.problems
                    .push(format!("a torn line in the job's output: {e}"));
                continue;
            }
            Some(Ok(f)) => f,
        };
        match frame {
            Frame::Start { node } => g.started.push(node),
            Frame::File {
                node,
                name,
                part,
                parts,
                b64,
            } => match asm.add(&node, &name, part, parts, b64) {
                None => {}
                Some(Err(e)) => g.problems.push(e),
                Some(Ok(bytes)) => {
                    save(dir, &node, &name, &bytes)?;
                    if name == STATUS_FILE {
                        match serde_json::from_slice::<NodeRunStatus>(&bytes) {
                            Ok(st) => {
                                progress(&node, &st);
                                g.ended.insert(node, st);
                            }
                            Err(e) => g.problems.push(format!("{node}: {STATUS_FILE}: {e}")),
                        }
                    }
                }
            },
            // The status came before it; a node whose status was torn is
            // read from its folder like any other.
            Frame::End { .. } => {}
        }
    }
    for (node, name) in asm.unfinished() {
        g.problems.push(format!(
            "{node}: {name} came back incomplete (pieces missing)"
        ));
    }
    let st = child.wait().context("cannot wait for srun")?;
    g.srun_status = st.code();
    let text = err_reader.join().unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    g.srun_stderr = lines[lines.len().saturating_sub(8)..]
        .iter()
        .map(|l| l.to_string())
        .collect();
    Ok(g)
}

/// Write a node's file, refusing names that would leave its folder.
fn save(dir: &Path, node: &str, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let plain = |s: &str| !s.is_empty() && !s.contains('/') && s != "." && s != "..";
    if !plain(node) || !plain(name) {
        anyhow::bail!("the job's output names a file outside the fleet folder: {node}/{name}");
    }
    let folder = dir.join(node);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    write_atomic(&folder.join(name), bytes)
        .with_context(|| format!("cannot write {}", folder.join(name).display()))
}

/// srun's own failure in one line: an allocation it could not get.
pub fn srun_failure(g: &Gathered) -> String {
    let last = g
        .srun_stderr
        .iter()
        .rev()
        .find(|l| l.contains("error"))
        .or(g.srun_stderr.last())
        .cloned()
        .unwrap_or_else(|| "no message".into());
    format!(
        "srun failed (exit status {}): {last}",
        g.srun_status
            .map(|c| c.to_string())
            .unwrap_or_else(|| "none: killed by a signal".into())
    )
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
        ] {
            assert!(a.iter().any(|x| x == want), "{want} missing from {a:?}");
        }
        let sep = a.iter().position(|x| x == "--").unwrap();
        assert_eq!(a[sep + 1], "/opt/numaprobe");
        assert_eq!(a[sep + 2], "fleet-node");
        assert_eq!(&a[a.len() - 2..], ["--budget", "5s"]);
    }

    #[test]
    fn a_streamed_file_cannot_leave_the_fleet_folder() {
        let d = std::env::temp_dir().join(format!("np-fleet-save-{}", std::process::id()));
        assert!(save(&d, "..", "x", b"").is_err());
        assert!(save(&d, "np1", "../x", b"").is_err());
        save(&d, "np1", "run.json", b"{}").unwrap();
        assert!(d.join("np1/run.json").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
