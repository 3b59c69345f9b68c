//! The run's extra figures (system and node peak bandwidth, the cache
//! sweep's points, loaded-latency points, cache-line transfer between CPU
//! pairs), each with its `_flagged` and `_flag_info` families beside it on
//! the rule of the matrix cells ([`super::trust`]): 1 when the figure must
//! not be trusted as is, so an alert can leave it out with
//! `unless on(...) (..._flagged == 1)`, and the reason in words.
//!
//! The sweep's plateaus and a loaded curve's knee carry no flag of their
//! own in the documents, so none is exported: they are named from trusted
//! points only (a flagged point takes no part in a plateau and is never a
//! knee), and the points they come from carry their flags here.

use super::trust::{Pair, Trust};
use super::Family;
use crate::model::export::Exported;

pub(super) fn families(e: &Exported) -> Vec<Family> {
    let mut out = Vec::new();
    if let Some(p) = &e.peak {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_peak_bandwidth_bytes_per_second",
                "Peak memory bandwidth of the whole machine (scope system) or of one node's cores on its own memory (scope node), per traffic mix.",
            ),
            Trust::new(
                Family::new(
                    "numaprobe_peak_flagged",
                    "1 when a peak figure must not be trusted as is (spread, placement, samples set aside), else 0.",
                ),
                Family::new(
                    "numaprobe_peak_flag_info",
                    "Why a peak figure is flagged (value always 1; one series per flagged figure, with its labels and reason).",
                ),
            ),
        );
        for s in &p.system {
            let l = vec![
                ("scope", "system".into()),
                ("node", String::new()),
                ("mix", s.mix.clone()),
            ];
            f.push(l, s.gbs * 1e9, s.flagged, &s.flags);
        }
        for n in &p.nodes {
            let l = vec![
                ("scope", "node".into()),
                ("node", n.node.to_string()),
                ("mix", n.mix.clone()),
            ];
            f.push(l, n.gbs * 1e9, n.flagged, &n.flags);
        }
        out.extend(f.families());
    }
    if let Some(s) = &e.sweep {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_sweep_latency_seconds",
                "Load latency of a chase over a buffer of size_bytes (the cache sweep), from cpu_node to mem_node.",
            ),
            Trust::new(
                Family::new(
                    "numaprobe_sweep_point_flagged",
                    "1 when a sweep point must not be trusted as is (spread, two modes, a step down, samples set aside), else 0.",
                ),
                Family::new(
                    "numaprobe_sweep_point_flag_info",
                    "Why a sweep point is flagged (value always 1; one series per flagged point, with its labels and reason).",
                ),
            ),
        );
        for p in &s.points {
            let l = vec![
                ("cpu_node", s.cpu_node.to_string()),
                ("mem_node", s.mem_node.to_string()),
                ("pages", p.pages.name().to_string()),
                ("size_bytes", p.size_bytes.to_string()),
            ];
            f.push(l, p.ns / 1e9, p.flagged, &p.flags);
        }
        out.extend(f.families());
    }
    if let Some(r) = &e.loaded {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_loaded_latency_seconds",
                "Median load latency from cpu_node to mem_node while load threads stream at the injected delay (idle: no load), per traffic mix.",
            ),
            Trust::new(
                Family::new(
                    "numaprobe_loaded_point_flagged",
                    "1 when a loaded-latency point must not be trusted as is, else 0.",
                ),
                Family::new(
                    "numaprobe_loaded_point_flag_info",
                    "Why a loaded-latency point is flagged (value always 1; one series per flagged point, with its labels and reason).",
                ),
            ),
        );
        for c in &r.curves {
            for p in &c.points {
                let delay = p
                    .delay
                    .map_or_else(|| "idle".to_string(), |d| d.to_string());
                let l = vec![
                    ("cpu_node", c.cpu_node.to_string()),
                    ("mem_node", c.mem_node.to_string()),
                    ("mix", c.mix.clone()),
                    ("delay", delay),
                ];
                // A loaded point has no `flagged` of its own: its flags are it.
                f.push(l, p.latency_ns / 1e9, !p.flags.is_empty(), &p.flags);
            }
        }
        out.extend(f.families());
    }
    if let Some(r) = &e.c2c {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_c2c_seconds",
                "Time for a cache line to move between CPUs a and b (kind hitm: modified in the other's cache; shared: read-shared), median.",
            ),
            Trust::new(
                Family::new(
                    "numaprobe_c2c_flagged",
                    "1 when a cache-line transfer figure must not be trusted as is (spread, two modes, samples set aside), else 0.",
                ),
                Family::new(
                    "numaprobe_c2c_flag_info",
                    "Why a cache-line transfer figure is flagged (value always 1; one series per flagged figure, with its labels and reason).",
                ),
            ),
        );
        for p in &r.pairs {
            for (kind, fig) in [("hitm", &p.hitm), ("shared", &p.shared)] {
                let Some(fig) = fig else { continue };
                let l = vec![
                    ("a", p.a.to_string()),
                    ("b", p.b.to_string()),
                    ("domain", p.domain.name().to_string()),
                    ("kind", kind.to_string()),
                ];
                f.push(l, fig.median / 1e9, fig.flagged, &fig.flags);
            }
        }
        out.extend(f.families());
    }
    out
}
