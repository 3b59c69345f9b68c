//! How the kernel numbered the CPUs, in words a person can act on.
//!
//! The RWTH Aachen blog on an 8-socket Nehalem-EX shows two 2-socket Nehalem-EP machines where CPU 0 and CPU 1 share
//! a socket on one and not on the other, so a binding written for one is wrong
//! on the other. The classification looks at the order of *cores* (the lowest
//! online CPU of each SMT sibling set) so that SMT threads numbered after all
//! cores ("far" siblings) do not hide a consecutive package order:
//! * `consecutive`: each package's cores form one run of numbers;
//! * `round-robin`: every next core is on another package;
//! * `mixed`: anything else; `single-package`: nothing to order.
//!
//! SMT siblings are `adjacent` (stride 1), `far` (one common stride above 1,
//! e.g. CPU n and n+20), `mixed`, or `none` when no core has two online
//! threads. Nothing here knows a particular machine: the rules only use the
//! ids and sibling sets the reader found.

use super::{Cpu, Numbering};
use std::collections::BTreeSet;

pub fn classify(cpus: &[Cpu]) -> Numbering {
    let online: Vec<&Cpu> = cpus.iter().filter(|c| c.online).collect();
    let leaders: Vec<&Cpu> = online
        .iter()
        .copied()
        .filter(|c| c.smt_siblings.first().is_none_or(|&f| f == c.os_index))
        .collect();
    let seq: Vec<Option<i64>> = leaders.iter().map(|c| c.package).collect();
    let distinct: BTreeSet<Option<i64>> = seq.iter().copied().collect();
    let runs = seq.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(!seq.is_empty());
    let packages = if distinct.len() <= 1 {
        "single-package"
    } else if runs == distinct.len() {
        "consecutive"
    } else if seq.windows(2).all(|w| w[0] != w[1]) {
        "round-robin"
    } else {
        "mixed"
    };

    let mut strides = BTreeSet::new();
    for c in &leaders {
        for w in c.smt_siblings.windows(2) {
            // abs_diff: a model built elsewhere (e.g. from JSON) may not
            // keep the siblings sorted, and this must not underflow.
            strides.insert(w[1].abs_diff(w[0]));
        }
    }
    let (smt, smt_stride) = match strides.len() {
        0 => ("none", None),
        1 => {
            let s = *strides.iter().next().unwrap_or(&1);
            (if s == 1 { "adjacent" } else { "far" }, Some(s))
        }
        _ => ("mixed", None),
    };

    let summary = summarize(&online, packages, distinct.len(), smt, smt_stride);
    Numbering {
        packages: packages.to_string(),
        smt: smt.to_string(),
        smt_stride,
        summary,
    }
}

fn pkg(p: Option<i64>) -> String {
    p.map_or("?".to_string(), |v| v.to_string())
}

fn summarize(
    online: &[&Cpu],
    packages: &str,
    npkg: usize,
    smt: &str,
    stride: Option<u32>,
) -> String {
    let mut parts = Vec::new();
    if let [a, b, ..] = online {
        let rel = if a.package != b.package {
            format!(
                "CPU {} and CPU {} are on different packages ({} and {})",
                a.os_index,
                b.os_index,
                pkg(a.package),
                pkg(b.package)
            )
        } else if a.smt_siblings.contains(&b.os_index) {
            format!(
                "CPU {} and CPU {} are SMT threads of one core (package {})",
                a.os_index,
                b.os_index,
                pkg(a.package)
            )
        } else {
            format!(
                "CPU {} and CPU {} are on the same package ({})",
                a.os_index,
                b.os_index,
                pkg(a.package)
            )
        };
        parts.push(rel);
    }
    parts.push(match packages {
        "consecutive" => format!("cores are numbered package by package across {npkg} packages"),
        "round-robin" => format!("consecutive core numbers alternate across {npkg} packages"),
        "mixed" => format!("core numbers follow no simple order across {npkg} packages"),
        _ => "one package".to_string(),
    });
    parts.push(match (smt, stride) {
        ("adjacent", _) => "SMT siblings have adjacent numbers".to_string(),
        ("far", Some(s)) => format!("SMT siblings are {s} apart (CPU n and n+{s})"),
        ("mixed", _) => "the distance between SMT siblings varies".to_string(),
        _ => "no SMT".to_string(),
    });
    let mut s = parts.join("; ");
    s.push('.');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 packages x 4 cores x 2 threads, as in the RWTH Aachen blog's tables.
    fn machine(pkg_of_core: impl Fn(u32) -> i64, smt_far: bool) -> Vec<Cpu> {
        (0..16)
            .map(|i| {
                let core_idx = if smt_far { i % 8 } else { i / 2 };
                let sib = if smt_far {
                    vec![core_idx, core_idx + 8]
                } else {
                    vec![core_idx * 2, core_idx * 2 + 1]
                };
                Cpu {
                    os_index: i,
                    online: true,
                    allowed: true,
                    package: Some(pkg_of_core(core_idx)),
                    package_id: Some(pkg_of_core(core_idx)),
                    die: None,
                    cluster: None,
                    cluster_cpus: Vec::new(),
                    capacity: None,
                    core: Some(core_idx as i64),
                    node: None,
                    smt_siblings: sib,
                }
            })
            .collect()
    }

    #[test]
    fn sun_nehalem_is_consecutive_with_far_siblings() {
        let n = classify(&machine(|c| (c / 4) as i64, true));
        assert_eq!(n.packages, "consecutive");
        assert_eq!(n.smt, "far");
        assert_eq!(n.smt_stride, Some(8));
        assert!(n
            .summary
            .starts_with("CPU 0 and CPU 1 are on the same package"));
    }

    #[test]
    fn hp_nehalem_is_round_robin() {
        let n = classify(&machine(|c| ((c + 1) % 2) as i64, true));
        assert_eq!(n.packages, "round-robin");
        assert!(n
            .summary
            .starts_with("CPU 0 and CPU 1 are on different packages (1 and 0)"));
    }

    #[test]
    fn adjacent_siblings_and_single_package() {
        let n = classify(&machine(|_| 0, false));
        assert_eq!(n.packages, "single-package");
        assert_eq!(n.smt, "adjacent");
        assert!(n.summary.contains("SMT threads of one core"));
    }
}
