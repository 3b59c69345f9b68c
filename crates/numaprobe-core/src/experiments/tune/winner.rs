//! `tune`'s winner in the forms people paste: the command line under
//! numactl, taskset, OpenMP variables and srun, for the placement that won
//! (shell words quoted, CPU and node sets as srun's hex masks).

use super::{BindingKind, MemoryKind, Planned};
use crate::model::tune::Winner;
use crate::placement::binding::cpulist;

/// A word for a shell: quoted when it holds anything but safe characters.
fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `0x...` mask of a CPU or node set, for srun's mask_cpu / mask_mem.
pub(super) fn hex_mask(ids: &[u32]) -> String {
    let top = ids.iter().max().copied().unwrap_or(0) as usize;
    let mut nibbles = vec![0u8; top / 4 + 1];
    for &i in ids {
        nibbles[i as usize / 4] |= 1 << (i % 4);
    }
    let hex: String = nibbles
        .iter()
        .rev()
        .map(|n| char::from_digit(u32::from(*n), 16).unwrap())
        .collect();
    format!("0x{hex}")
}

/// The candidate as commands to paste.
pub fn winner(p: &Planned, threads: usize, command: &[String]) -> Winner {
    let cmd = command
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    let nodes = cpulist(&p.policy_nodes);
    let bound = p.binding != BindingKind::None;
    let numactl_mem = match p.memory {
        MemoryKind::FirstTouch => None,
        MemoryKind::LocalBind => Some(format!("--membind={nodes}")),
        MemoryKind::Interleave => Some(format!("--interleave={nodes}")),
        MemoryKind::WeightedInterleave => Some(format!("--weighted-interleave={nodes}")),
    };
    let omp = p
        .env
        .iter()
        .map(|(k, v)| format!("{k}={}", shell_word(v)))
        .chain(p.env_remove.iter().map(|k| format!("-u {k}")))
        .collect::<Vec<_>>();
    // `env -u` for a removed variable keeps the line one paste.
    let omp = if p.env_remove.is_empty() {
        omp.join(" ")
    } else {
        format!("env {}", omp.join(" "))
    };
    let mut numactl = vec!["numactl".to_string()];
    if bound {
        numactl.push(format!("--physcpubind={}", cpulist(&p.cpus)));
    }
    numactl.extend(numactl_mem.clone());
    let numactl = if numactl.len() == 1 {
        format!("{omp} {cmd}")
    } else {
        format!("{omp} {} {cmd}", numactl.join(" "))
    };
    let cpu_bind = if bound {
        format!("--cpu-bind=mask_cpu:{}", hex_mask(&p.cpus))
    } else {
        "--cpu-bind=none".into()
    };
    // srun binds memory per task to a node set, but has no interleave:
    // that goes through numactl inside the step.
    let srun = match p.memory {
        MemoryKind::FirstTouch => {
            format!("{omp} srun -n 1 -c {threads} {cpu_bind} {cmd}")
        }
        MemoryKind::LocalBind => format!(
            "{omp} srun -n 1 -c {threads} {cpu_bind} --mem-bind=mask_mem:{} {cmd}",
            hex_mask(&p.policy_nodes)
        ),
        _ => format!(
            "{omp} srun -n 1 -c {threads} {cpu_bind} numactl {} {cmd}",
            numactl_mem.unwrap_or_default()
        ),
    };
    Winner {
        label: p.label.clone(),
        numactl,
        taskset: bound.then(|| format!("{omp} taskset -c {} {cmd}", cpulist(&p.cpus))),
        omp,
        srun,
    }
}
