//! Renderers of `numaprobe peak` (`model::peak::PeakResult`): the system
//! table per mix, the per-node table (alone and under full load), the
//! sockets and DIMMs SMBIOS gave, the theoretical peak and achieved/peak,
//! the findings and notes (text and Markdown); CSV is one row per measured
//! figure, or per memory device when nothing was measured (--memory-only).

use crate::model::format::Format;
use crate::model::peak::{MemoryPopulation, PeakResult};
use crate::render::table::{Align, Table};
use crate::stats::flags::{star, STAR};
use crate::units::{format_list, format_size};

/// The result in `format`.
pub fn render(r: &PeakResult, format: Format) -> String {
    super::in_format(r, format, text, csv)
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

fn pct(v: f64) -> String {
    format!("{:.1} %", v * 100.0)
}

/// One table per mix, system first: `system` and the nodes under full
/// load, and the nodes alone beside them.
pub fn system_table(r: &PeakResult) -> Table {
    let mut t = Table::new([
        "mix",
        "threads",
        "system GB/s",
        "cv",
        "nodes alone, sum GB/s",
        "kept",
        "placement",
    ])
    .with_title("System peak: every allowed CPU streaming its own node's memory at once")
    .with_align(vec![
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
    ]);
    for s in &r.system {
        t.push([
            s.mix.clone(),
            s.threads.to_string(),
            format!("{:.2}{}", s.gbs, star(s.flagged)),
            pct(s.cv),
            opt(s.sum_of_nodes_alone_gbs, 2),
            s.sum_of_nodes_alone_gbs
                .filter(|&a| a > 0.0)
                .map(|a| pct(s.gbs / a))
                .unwrap_or_else(|| "-".into()),
            format!(
                "{}{}",
                pct(s.placement),
                if s.flags.is_empty() { "" } else { " !" }
            ),
        ]);
    }
    t
}

/// Per node and mix: alone and with every node busy.
pub fn node_table(r: &PeakResult) -> Table {
    let mut t = Table::new([
        "node",
        "mix",
        "threads",
        "alone GB/s",
        "all nodes busy GB/s",
        "CPUs",
        "placement",
    ])
    .with_title("Per node: its own memory, alone and under full load")
    .with_align(vec![
        Align::Right,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
        Align::Right,
    ]);
    let mut keys: Vec<(u32, String)> = r.nodes.iter().map(|n| (n.node, n.mix.clone())).collect();
    keys.dedup();
    let mut seen = Vec::new();
    for k in keys {
        if seen.contains(&k) {
            continue;
        }
        seen.push(k.clone());
        let of = |busy: bool| {
            r.nodes
                .iter()
                .find(|n| n.node == k.0 && n.mix == k.1 && n.concurrent == busy)
        };
        let (alone, busy) = (of(false), of(true));
        let Some(any) = alone.or(busy) else { continue };
        let mut cpus = any.cpus.clone();
        cpus.sort_unstable();
        let placement = [alone, busy]
            .iter()
            .flatten()
            .map(|n| n.placement)
            .fold(1.0f64, f64::min);
        let flagged = [alone, busy].iter().flatten().any(|n| !n.flags.is_empty());
        t.push([
            k.0.to_string(),
            k.1.clone(),
            any.threads.to_string(),
            alone.map_or("-".into(), |n| format!("{:.2}{}", n.gbs, star(n.flagged))),
            busy.map_or("-".into(), |n| format!("{:.2}{}", n.gbs, star(n.flagged))),
            format_list(&cpus),
            format!("{}{}", pct(placement), if flagged { " !" } else { "" }),
        ]);
    }
    t
}

pub fn socket_table(m: &MemoryPopulation) -> Table {
    let mut t = Table::new([
        "socket",
        "DIMMs / slots",
        "channels populated",
        "capacity",
        "theoretical GB/s",
    ])
    .with_title("Memory per socket (SMBIOS)")
    .with_align(vec![
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
    ]);
    for s in &m.sockets {
        t.push([
            s.socket
                .map(|n| n.to_string())
                .unwrap_or_else(|| "?".into()),
            format!("{} / {}", s.populated_slots, s.slots),
            format!("{} / {}", s.populated_channels, s.channels),
            format_size(s.bytes),
            opt(s.theoretical_gbs, 1),
        ]);
    }
    t
}

pub fn dimm_table(m: &MemoryPopulation) -> Table {
    let mut t = Table::new([
        "socket",
        "channel",
        "locator",
        "bank",
        "size",
        "type",
        "MT/s",
        "rated",
        "width",
        "manufacturer",
        "part",
    ])
    .with_title("Memory devices (SMBIOS type 17)");
    for d in &m.devices {
        let n = |v: Option<u32>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
        t.push([
            d.socket
                .map(|n| n.to_string())
                .unwrap_or_else(|| "?".into()),
            d.channel.clone().unwrap_or_else(|| "?".into()),
            d.locator.clone(),
            d.bank.clone(),
            if d.size_bytes == 0 {
                "empty".into()
            } else {
                format_size(d.size_bytes)
            },
            if d.size_bytes == 0 {
                String::new()
            } else {
                d.kind.clone()
            },
            n(d.configured_mts),
            n(d.speed_mts),
            d.data_width_bits
                .map(|w| format!("{w} bit"))
                .unwrap_or_else(|| "-".into()),
            d.manufacturer.clone(),
            d.part.clone(),
        ]);
    }
    t
}

/// One line per flagged figure: "system read*: unstable: CV 16.5 % ...".
pub fn flag_lines(r: &PeakResult) -> Vec<String> {
    let system = r
        .system
        .iter()
        .filter(|s| s.flagged)
        .map(|s| format!("system {}{STAR}: {}", s.mix, s.flags.join("; ")));
    let nodes = r.nodes.iter().filter(|n| n.flagged).map(|n| {
        format!(
            "node {} {} {}{STAR}: {}",
            n.node,
            n.mix,
            if n.concurrent {
                "all nodes busy"
            } else {
                "alone"
            },
            n.flags.join("; ")
        )
    });
    system.chain(nodes).collect()
}

/// `theoretical 281.6 GB/s (12 channels ...); achieved 61 % (read)` lines.
pub fn peak_lines(r: &PeakResult) -> Vec<String> {
    let m = &r.memory;
    let mut out = Vec::new();
    match (&m.unknown_because, m.theoretical_gbs) {
        (Some(why), _) => out.push(format!("Theoretical DRAM peak: unknown ({why})")),
        (None, Some(t)) => {
            // A document's counts may be anything: summed saturating.
            let ch = m
                .sockets
                .iter()
                .fold(0usize, |n, s| n.saturating_add(s.populated_channels));
            out.push(format!(
                "Theoretical DRAM peak: {t:.1} GB/s ({ch} populated channel{} x configured MT/s x data width; from {})",
                if ch == 1 { "" } else { "s" },
                m.source
            ));
        }
        // The main job measures the peak without reading the memory
        // population: no source, so nothing to compute from.
        (None, None) if m.source.is_empty() => out.push(
            "Theoretical DRAM peak: not computed: the memory population (SMBIOS) was not read; `numaprobe peak --memory-only` as root reads it".into(),
        ),
        (None, None) => out.push(format!(
            "Theoretical DRAM peak: unknown ({} gives no speed for every populated channel)",
            m.source
        )),
    }
    // A document read back may carry a fraction without figures: no line.
    let best = r.system.iter().max_by(|a, b| a.gbs.total_cmp(&b.gbs));
    if let (Some(f), Some(best)) = (r.achieved_fraction, best) {
        out.push(format!(
            "Achieved: {:.2} GB/s ({}) = {:.1} % of the theoretical peak",
            best.gbs,
            best.mix,
            f * 100.0
        ));
    }
    out
}

fn text(r: &PeakResult, md: bool) -> String {
    let mut out = String::new();
    let head = if r.system.is_empty() && r.nodes.is_empty() {
        "numaprobe peak: memory population".to_string()
    } else {
        format!(
            "numaprobe peak: {} per thread ({} pages{}){}",
            format_size(r.size_bytes),
            r.pages,
            if r.vector.is_empty() {
                String::new()
            } else {
                format!(", {} read kernel", r.vector)
            },
            if r.complete { "" } else { " (incomplete)" }
        )
    };
    out.push_str(&if md {
        format!("## {head}\n\n")
    } else {
        format!("{head}\n\n")
    });
    let mut tables = Vec::new();
    if !r.system.is_empty() {
        tables.push(system_table(r));
    }
    if !r.nodes.is_empty() {
        tables.push(node_table(r));
    }
    if !r.memory.sockets.is_empty() {
        tables.push(socket_table(&r.memory));
    }
    if !r.memory.devices.is_empty() {
        tables.push(dimm_table(&r.memory));
    }
    for t in tables {
        out.push_str(&if md { t.to_markdown() } else { t.to_text() });
        out.push('\n');
    }
    let bullet = if md { "- " } else { "  " };
    for l in peak_lines(r) {
        out.push_str(&format!("{l}{}\n", if md { "  " } else { "" }));
    }
    let flags = flag_lines(r);
    let sections = [
        ("Flagged", &flags),
        ("Findings", &r.memory.findings),
        ("Notes", &r.notes),
    ];
    for (title, lines) in sections {
        if lines.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{title}:\n"));
        if md {
            out.push('\n');
        }
        for l in lines {
            out.push_str(&format!("{bullet}{l}\n"));
        }
    }
    out
}

fn csv(r: &PeakResult) -> String {
    if r.system.is_empty() && r.nodes.is_empty() {
        return dimm_table(&r.memory).to_csv();
    }
    let mut t = Table::new([
        "scope",
        "node",
        "mix",
        "threads",
        "gbps",
        "cv",
        "placement",
        "cpus",
        "theoretical_gbps",
        "flagged",
        "flags",
    ]);
    let theory = opt(r.memory.theoretical_gbs, 3);
    let theory = if theory == "-" { String::new() } else { theory };
    for s in &r.system {
        t.push([
            "system".to_string(),
            String::new(),
            s.mix.clone(),
            s.threads.to_string(),
            format!("{:.4}", s.gbs),
            format!("{:.4}", s.cv),
            format!("{:.4}", s.placement),
            String::new(),
            theory.clone(),
            s.flagged.to_string(),
            s.flags.join("; "),
        ]);
    }
    for n in &r.nodes {
        let mut cpus = n.cpus.clone();
        cpus.sort_unstable();
        t.push([
            if n.concurrent {
                "node-busy"
            } else {
                "node-alone"
            }
            .to_string(),
            n.node.to_string(),
            n.mix.clone(),
            n.threads.to_string(),
            format!("{:.4}", n.gbs),
            format!("{:.4}", n.cv),
            format!("{:.4}", n.placement),
            format_list(&cpus),
            String::new(),
            n.flagged.to_string(),
            n.flags.join("; "),
        ]);
    }
    t.to_csv()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn populated_channels_past_the_largest_integer_are_summed_saturating() {
        let mut r = crate::smbios::fixture_peak();
        assert!(r.memory.theoretical_gbs.is_some());
        for s in &mut r.memory.sockets {
            s.populated_channels = usize::MAX;
        }
        let lines = peak_lines(&r);
        assert!(
            lines[0].contains(&format!("({} populated channels x", usize::MAX)),
            "{lines:?}"
        );
    }
}
