//! The run's extra figures (system and node peak bandwidth, the cache
//! sweep's points, loaded-latency points, cache-line transfer between CPU
//! pairs), each with a `_flagged` family beside it on the rule of the
//! matrix cells: 1 when the figure must not be trusted as is, so an alert
//! can leave it out with `unless on(...) (..._flagged == 1)`.

use super::{gauge, Family};
use crate::model::export::Exported;

type Labels = Vec<(&'static str, String)>;

/// A figure family and its flag family, filled together.
struct Pair {
    value: Family,
    flagged: Family,
}

impl Pair {
    fn new(value: Family, flagged: Family) -> Pair {
        Pair { value, flagged }
    }

    fn push(&mut self, labels: Labels, v: f64, flagged: bool) {
        self.flagged.push(labels.clone(), gauge(flagged));
        self.value.push(labels, v);
    }
}

pub(super) fn families(e: &Exported) -> Vec<Family> {
    let mut out = Vec::new();
    if let Some(p) = &e.peak {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_peak_bandwidth_bytes_per_second",
                "Peak memory bandwidth of the whole machine (scope system) or of one node's cores on its own memory (scope node), per traffic mix.",
            ),
            Family::new(
                "numaprobe_peak_flagged",
                "1 when a peak figure must not be trusted as is (spread, placement, samples set aside), else 0.",
            ),
        );
        for s in &p.system {
            let l = vec![
                ("scope", "system".into()),
                ("node", String::new()),
                ("mix", s.mix.clone()),
            ];
            f.push(l, s.gbs * 1e9, s.flagged);
        }
        for n in &p.nodes {
            let l = vec![
                ("scope", "node".into()),
                ("node", n.node.to_string()),
                ("mix", n.mix.clone()),
            ];
            f.push(l, n.gbs * 1e9, n.flagged);
        }
        out.extend([f.value, f.flagged]);
    }
    if let Some(s) = &e.sweep {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_sweep_latency_seconds",
                "Load latency of a chase over a buffer of size_bytes (the cache sweep), from cpu_node to mem_node.",
            ),
            Family::new(
                "numaprobe_sweep_point_flagged",
                "1 when a sweep point must not be trusted as is (spread, two modes, a step down, samples set aside), else 0.",
            ),
        );
        for p in &s.points {
            let l = vec![
                ("cpu_node", s.cpu_node.to_string()),
                ("mem_node", s.mem_node.to_string()),
                ("pages", p.pages.name().to_string()),
                ("size_bytes", p.size_bytes.to_string()),
            ];
            f.push(l, p.ns / 1e9, p.flagged);
        }
        out.extend([f.value, f.flagged]);
    }
    if let Some(r) = &e.loaded {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_loaded_latency_seconds",
                "Median load latency from cpu_node to mem_node while load threads stream at the injected delay (idle: no load), per traffic mix.",
            ),
            Family::new(
                "numaprobe_loaded_point_flagged",
                "1 when a loaded-latency point must not be trusted as is, else 0.",
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
                f.push(l, p.latency_ns / 1e9, !p.flags.is_empty());
            }
        }
        out.extend([f.value, f.flagged]);
    }
    if let Some(r) = &e.c2c {
        let mut f = Pair::new(
            Family::new(
                "numaprobe_c2c_seconds",
                "Time for a cache line to move between CPUs a and b (kind hitm: modified in the other's cache; shared: read-shared), median.",
            ),
            Family::new(
                "numaprobe_c2c_flagged",
                "1 when a cache-line transfer figure must not be trusted as is (spread, two modes, samples set aside), else 0.",
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
                f.push(l, fig.median / 1e9, fig.flagged);
            }
        }
        out.extend([f.value, f.flagged]);
    }
    out
}
