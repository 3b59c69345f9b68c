//! The main job's extra phases in the summary: one line each for the c2c
//! summary by domain, the loaded-latency curves, the system peak and the
//! cache sweep's plateaus, or
//! what became of the phase (skipped, failed, cut by the budget). The same
//! lines go to the terminal summary and to summary.md.

use crate::model::c2c::C2cResult;
use crate::model::extra::{Extra, ExtraOutcome, ExtraStatus};
use crate::model::loaded::{Curve, LoadedResult};
use crate::model::peak::PeakResult;
use crate::model::sweep::SweepResult;
use crate::stats::flags::star;

/// One line per extra phase that has an outcome, in run order.
pub fn lines(
    c2c: Option<&ExtraOutcome<C2cResult>>,
    loaded: Option<&ExtraOutcome<LoadedResult>>,
    peak: Option<&ExtraOutcome<PeakResult>>,
    sweep: Option<&ExtraOutcome<SweepResult>>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(o) = c2c {
        out.push(line(o, c2c_line));
    }
    if let Some(o) = loaded {
        out.push(line(o, loaded_line));
    }
    if let Some(o) = peak {
        out.push(line(o, peak_line));
    }
    if let Some(o) = sweep {
        out.push(line(o, sweep_line));
    }
    out
}

/// `cache sweep (CPU 0 -> memory node 0): thp pages: plateaus ~1.2 ns
/// 4 KiB-32 KiB, ~4.0 ns 64 KiB-1 MiB, ~80 ns 64 MiB-64 MiB`.
pub fn sweep_line(r: &SweepResult) -> String {
    let plateaus: Vec<String> = r
        .analysis_lines()
        .into_iter()
        .filter(|l| l.contains("plateaus"))
        .collect();
    let what = if plateaus.is_empty() {
        format!(
            "{} of {} points, not analysed",
            r.points.len(),
            r.sizes.len() * r.pages.len()
        )
    } else {
        plateaus.join("; ")
    };
    // A flagged point stars the line and is counted, so a curve read from
    // noise is never a plain fact.
    let flagged = r.flagged_summary();
    format!(
        "{}{} (CPU {} -> memory node {}): {what}{}",
        Extra::Sweep.name(),
        star(flagged.is_some()),
        r.cpu,
        r.mem_node,
        flagged.map_or(String::new(), |f| format!("; {f}"))
    )
}

/// The result's line, with the reason when it is partial; or the status
/// and reason when there is no result.
fn line<T>(o: &ExtraOutcome<T>, text: fn(&T) -> String) -> String {
    let r = &o.record;
    let reason = r.reason.as_deref().unwrap_or("no reason recorded");
    match (&o.result, r.status) {
        (Some(x), ExtraStatus::Measured) => text(x),
        // Partial where the figures are: before them, so a peak of what
        // was measured is never read as the phase's whole answer.
        (Some(x), _) => {
            let t = text(x);
            let name = r.phase.name();
            match t.strip_prefix(name) {
                Some(rest) => format!("{name}, partial ({reason}){rest}"),
                None => format!("partial ({reason}): {t}"),
            }
        }
        (None, s) => format!("{}: {}: {reason}", r.phase.name(), s.name()),
    }
}

/// `c2c: same core 9 ns, same L3 31 ns, cross package 118 ns (one way,
/// line modified by the other CPU)`.
pub fn c2c_line(r: &C2cResult) -> String {
    let mut domains = r.domains.clone();
    domains.sort_by_key(|d| d.domain);
    let parts: Vec<String> = domains
        .iter()
        .filter_map(|d| {
            let (v, flagged, what) = match (d.hitm_ns, d.shared_ns) {
                (Some(v), _) => (v, d.hitm_flagged > 0, ""),
                (None, Some(v)) => (v, d.shared_flagged > 0, " (shared line)"),
                (None, None) => return None,
            };
            Some(format!(
                "{} {v:.0} ns{}{what}",
                d.domain.name(),
                star(flagged)
            ))
        })
        .collect();
    if parts.is_empty() {
        return format!("{}: no CPU pair measured", Extra::C2c.name());
    }
    // A document's counts may be anything: summed saturating.
    let flagged = domains.iter().fold(0usize, |n, d| {
        n.saturating_add(d.hitm_flagged)
            .saturating_add(d.shared_flagged)
    });
    format!(
        "{}: {} (one way, line modified by the other CPU){}",
        Extra::C2c.name(),
        parts.join(", "),
        if flagged > 0 {
            format!(
                "; {flagged} pair figure(s) flagged{}: spread, two modes or too few samples that held their CPU (see c2c.json)",
                crate::stats::flags::STAR
            )
        } else {
            String::new()
        }
    )
}

fn curve_text(c: &Curve) -> String {
    let kind = if c.cpu_node == c.mem_node {
        "local"
    } else {
        "remote"
    };
    let mut s = format!("{kind} {}->{}", c.cpu_node, c.mem_node);
    if c.mix != "read" {
        s.push_str(&format!(" {}", c.mix));
    }
    if let Some(idle) = c.points.first() {
        s.push_str(&format!(
            " idle {:.0}{} ns,",
            idle.latency_ns,
            star(!idle.flags.is_empty())
        ));
    }
    match c.knee.and_then(|k| c.points.get(k)) {
        Some(k) => s.push_str(&format!(
            " knee at {:.1} GB/s ({:.0}{} ns),",
            k.bandwidth_gbs,
            k.latency_ns,
            star(!k.flags.is_empty())
        )),
        None => s.push_str(" no knee,"),
    }
    if c.peak_gbs > 0.0 {
        s.push_str(&format!(" peak {:.1} GB/s", c.peak_gbs));
    } else {
        s.push_str(" no trusted peak");
    }
    s
}

/// `loaded latency: local 0->0 idle 92 ns, knee at 14.2 GB/s (118 ns),
/// peak 21.3 GB/s; remote 0->1 ...`.
pub fn loaded_line(r: &LoadedResult) -> String {
    if r.curves.is_empty() {
        return format!("{}: no curve measured", Extra::LoadedLatency.name());
    }
    let parts: Vec<String> = r.curves.iter().map(curve_text).collect();
    format!("{}: {}", Extra::LoadedLatency.name(), parts.join("; "))
}

/// `system peak: 45.2 GB/s read (16 threads), 38.1 GB/s 1:1; 71 % of the
/// 63.9 GB/s DRAM peak`.
pub fn peak_line(r: &PeakResult) -> String {
    if r.system.is_empty() {
        return format!("{}: not measured", Extra::Peak.name());
    }
    let parts: Vec<String> = r
        .system
        .iter()
        .map(|s| {
            let threads = crate::units::plural(s.threads, "thread");
            format!("{:.1} GB/s{} {} ({threads})", s.gbs, star(s.flagged), s.mix)
        })
        .collect();
    let mut s = format!("{}: {}", Extra::Peak.name(), parts.join(", "));
    match (r.achieved_fraction, r.memory.theoretical_gbs) {
        (Some(f), Some(t)) => s.push_str(&format!(
            "; {:.0} % of the {t:.1} GB/s DRAM peak",
            f * 100.0
        )),
        _ => s.push_str("; DRAM peak unknown"),
    }
    if let Some(f) = r.system.iter().find(|s| s.flagged) {
        s.push_str(&format!(
            "; * {}",
            f.flags.first().map_or("", String::as_str)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::extra::ExtraRecord;
    use crate::stats::StopRule;
    use serde_json::{json, Value};

    // Documents are built from JSON with only the keys every version has,
    // so fields the experiments add (all `serde(default)`) do not break
    // these tests.
    fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).expect("a valid document")
    }

    fn timer() -> Value {
        json!({"source": "monotonic_raw", "overhead_ns": 0.0, "resolution_ns": 1.0})
    }

    fn record(phase: Extra, status: ExtraStatus, reason: Option<&str>) -> ExtraRecord {
        ExtraRecord {
            phase,
            status,
            reason: reason.map(String::from),
            share_s: 5.0,
            elapsed_s: 1.0,
            steps_planned: 4,
            steps_done: 2,
        }
    }

    fn c2c() -> C2cResult {
        let d = |domain: &str, hitm: Option<f64>| json!({"domain": domain, "pairs": 2, "hitm_ns": hitm, "shared_ns": 20.0});
        from_json(json!({
            "schema": crate::SCHEMA, "unit": "ns", "cpus": [0, 1, 2], "hitm": [], "shared": [],
            "pairs": [],
            "domains": [d("cross_package", Some(118.4)), d("same_l3", Some(31.2)), d("same_node", None)],
            "atomics": "x86 lock", "stop_rule": serde_json::to_value(StopRule::default()).unwrap(),
            "timer": timer(), "notes": [], "complete": true
        }))
    }

    fn point(delay: Option<u32>, gbs: f64, ns: f64) -> Value {
        json!({"delay": delay, "bandwidth_gbs": gbs, "latency_ns": ns, "p90_ns": ns, "p99_ns": ns})
    }

    fn curve(cpu: u32, mem: u32, knee: Option<usize>) -> Value {
        json!({
            "cpu_node": cpu, "mem_node": mem, "mix": "read", "chase_cpu": 0, "load_cpus": [1],
            "points": [point(None, 0.5, 92.0), point(Some(100), 14.2, 118.0), point(Some(0), 21.3, 240.0)],
            "knee": knee, "peak_gbs": 21.3, "placement": 1.0
        })
    }

    #[test]
    fn c2c_names_each_domain_closest_first() {
        assert_eq!(
            c2c_line(&c2c()),
            "c2c: same L3 31 ns, same node 20 ns (shared line), cross package 118 ns (one way, line modified by the other CPU)"
        );
    }

    #[test]
    fn a_c2c_domain_resting_on_a_flagged_pair_is_starred() {
        let mut r = c2c();
        r.domains[1].hitm_flagged = 1;
        r.domains[2].shared_flagged = 2;
        assert_eq!(
            c2c_line(&r),
            "c2c: same L3 31 ns*, same node 20 ns* (shared line), cross package 118 ns (one way, line modified by the other CPU); 3 pair figure(s) flagged*: spread, two modes or too few samples that held their CPU (see c2c.json)"
        );
        // A flagged read-shared figure does not star a domain shown by HITM.
        r.domains[1].hitm_flagged = 0;
        r.domains[1].shared_flagged = 1;
        assert!(c2c_line(&r).starts_with("c2c: same L3 31 ns, same node 20 ns*"));
    }

    #[test]
    fn flagged_pair_counts_past_the_largest_integer_saturate() {
        let mut r = c2c();
        r.domains[1].hitm_flagged = usize::MAX;
        r.domains[2].shared_flagged = usize::MAX;
        assert!(
            c2c_line(&r).contains(&format!("; {} pair figure(s) flagged*", usize::MAX)),
            "{}",
            c2c_line(&r)
        );
    }

    #[test]
    fn loaded_latency_gives_idle_knee_and_peak_per_curve() {
        let r: LoadedResult = from_json(json!({
            "schema": crate::SCHEMA, "curves": [curve(0, 0, Some(1)), curve(0, 1, None)],
            "timer": timer(), "notes": [], "complete": true
        }));
        assert_eq!(
            loaded_line(&r),
            "loaded latency: local 0->0 idle 92 ns, knee at 14.2 GB/s (118 ns), peak 21.3 GB/s; remote 0->1 idle 92 ns, no knee, peak 21.3 GB/s"
        );
    }

    #[test]
    fn the_peak_says_whether_the_dram_peak_is_known() {
        let mut r: PeakResult = from_json(json!({
            "schema": crate::SCHEMA,
            "system": [{"mix": "read", "threads": 16, "gbs": 45.23}],
            "nodes": [],
            "memory": {"source": "unknown", "devices": [], "theoretical_gbs": null, "findings": []},
            "achieved_fraction": null, "timer": timer(), "notes": [], "complete": true
        }));
        assert_eq!(
            peak_line(&r),
            "system peak: 45.2 GB/s read (16 threads); DRAM peak unknown"
        );
        r.memory.theoretical_gbs = Some(63.9);
        r.achieved_fraction = Some(0.708);
        assert!(peak_line(&r).ends_with("; 71 % of the 63.9 GB/s DRAM peak"));
        r.system[0].threads = 1;
        assert!(
            peak_line(&r).contains("read (1 thread);"),
            "{}",
            peak_line(&r)
        );
    }

    #[test]
    fn a_phase_without_result_says_its_status_and_reason_and_a_cut_one_why() {
        let failed: ExtraOutcome<PeakResult> = ExtraOutcome {
            record: record(
                Extra::Peak,
                ExtraStatus::Failed,
                Some("peak is not built yet"),
            ),
            result: None,
        };
        let partial = ExtraOutcome {
            record: record(
                Extra::C2c,
                ExtraStatus::Partial,
                Some("its share of the budget (5.0 s) was spent after 2 of 4 steps"),
            ),
            result: Some(c2c()),
        };
        let l = lines(Some(&partial), None, Some(&failed), None);
        assert_eq!(l.len(), 2);
        // Partial before its figures, not after them.
        assert!(
            l[0].starts_with(
                "c2c, partial (its share of the budget (5.0 s) was spent after 2 of 4 steps): \
                 same L3 31 ns"
            ),
            "{}",
            l[0]
        );
        assert_eq!(l[1], "system peak: failed: peak is not built yet");
    }

    #[test]
    fn the_sweep_line_gives_the_plateaus_or_what_was_measured() {
        let r = crate::render::sweep::tests::sample();
        let l = sweep_line(&r);
        assert!(
            l.starts_with("cache sweep (CPU 1 -> memory node 0): 4k pages: plateaus ~"),
            "{l}"
        );
        assert!(l.contains("; thp pages: plateaus"), "{l}");
        let mut bare = r.clone();
        bare.analysis = None;
        assert_eq!(
            sweep_line(&bare),
            format!(
                "cache sweep (CPU 1 -> memory node 0): {} of {} points, not analysed",
                r.points.len(),
                r.points.len()
            )
        );
        let skipped = ExtraOutcome::<SweepResult> {
            record: record(
                Extra::Sweep,
                ExtraStatus::Skipped,
                Some("no CPU node has memory of its own to sweep"),
            ),
            result: None,
        };
        assert_eq!(
            lines(None, None, None, Some(&skipped)),
            vec!["cache sweep: skipped: no CPU node has memory of its own to sweep"]
        );
    }
}
