//! The run's families: when it ran and whether it finished
//! (`numaprobe_run_*`), the machine's topology, the latency and bandwidth
//! matrices with a `path` label (`local` where the CPU node is the memory
//! node, `remote` elsewhere, so an alert can take remote cells alone), and
//! each cell's trust flag and reason ([`super::trust`]).

use super::trust::Trust;
use super::{gauge, single, times, Family};
use crate::model::export::Exported;
use crate::model::matrix::{MatrixKind, MatrixResult};
use crate::model::topo::TopoReport;

pub(super) fn families(e: &Exported) -> Vec<Family> {
    let (start, end) = times(e.provenance.as_ref());
    let mut out = vec![
        single(
            "numaprobe_run_start_timestamp_seconds",
            "When the numaprobe run that wrote the exported document started, in seconds since the epoch.",
            start.map(|t| t as f64),
        ),
        single(
            "numaprobe_run_end_timestamp_seconds",
            "When the numaprobe run wrote the exported document, in seconds since the epoch.",
            end.map(|t| t as f64),
        ),
        single(
            "numaprobe_run_complete",
            "1 when every exported document of the run is complete, 0 when one is partial (interrupted, failed cells).",
            Some(gauge(e.complete)),
        ),
    ];
    if let Some(t) = &e.topology {
        out.extend(topology(t));
    }
    if let Some(m) = &e.latency {
        out.push(matrix(
            m,
            "numaprobe_latency_seconds",
            "Idle memory latency (median of the samples) from CPUs of cpu_node to memory on mem_node; path is local or remote.",
            1e9,
        ));
    }
    if let Some(m) = &e.bandwidth {
        out.push(matrix(
            m,
            "numaprobe_bandwidth_bytes_per_second",
            "Memory bandwidth (median of the samples) of the cores of cpu_node streaming memory on mem_node; path is local or remote.",
            1e-9,
        ));
    }
    let measured: Vec<&MatrixResult> = [&e.latency, &e.bandwidth].into_iter().flatten().collect();
    if !measured.is_empty() {
        let mut f = Trust::new(
            Family::new(
                "numaprobe_cell_flagged",
                "1 when a measured cell must not be trusted as is (placement below the threshold, samples spread too far, samples set aside), else 0.",
            ),
            Family::new(
                "numaprobe_cell_flag_info",
                "Why a measured cell is flagged (value always 1; one series per flagged cell, with its labels and reason).",
            ),
        );
        for m in measured {
            let kind = match m.kind {
                MatrixKind::Latency => "latency",
                MatrixKind::Bandwidth => "bandwidth",
            };
            for c in &m.cells {
                f.push(
                    vec![
                        ("matrix", kind.to_string()),
                        ("cpu_node", c.cpu_node.to_string()),
                        ("mem_node", c.mem_node.to_string()),
                    ],
                    c.flagged,
                    &c.flags,
                );
            }
        }
        out.extend(f.families());
    }
    out
}

fn topology(t: &TopoReport) -> Vec<Family> {
    let mut nodes = Family::new("numaprobe_numa_nodes", "NUMA nodes of the machine.");
    nodes.push(vec![], t.numa_nodes.len() as f64);
    let mut packages = Family::new(
        "numaprobe_packages",
        "Processor packages (sockets) of the machine.",
    );
    packages.push(vec![], t.packages.len() as f64);
    let mut cpus = Family::new(
        "numaprobe_node_cpus",
        "Online CPUs of each NUMA node (0 for a memory-only node).",
    );
    let mut memory = Family::new(
        "numaprobe_node_memory_bytes",
        "Memory of each NUMA node, in bytes.",
    );
    for n in &t.numa_nodes {
        let node = vec![("node", n.os_index.to_string())];
        cpus.push(node.clone(), n.cpus.len() as f64);
        memory.push(node, n.memory_bytes as f64);
    }
    let mut thp = Family::new(
        "numaprobe_thp_mode",
        "Transparent huge pages setting: 1 for the mode in force, 0 for the others.",
    );
    if let Some(mode) = &t.thp_mode {
        let mut modes = vec!["always", "madvise", "never"];
        if !modes.contains(&mode.as_str()) {
            modes.push(mode);
        }
        for m in modes {
            thp.push(vec![("mode", m.to_string())], gauge(m == mode));
        }
    }
    vec![nodes, packages, cpus, memory, thp]
}

/// A matrix's medians in base units: `value / divisor` (ns to s: 1e9; GB/s
/// to B/s: 1e-9). Cells not measured are absent.
fn matrix(m: &MatrixResult, name: &'static str, help: &'static str, divisor: f64) -> Family {
    let mut f = Family::new(name, help);
    for (r, row) in m.matrix.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            let (Some(v), Some(cpu), Some(mem)) = (v, m.cpu_nodes.get(r), m.mem_nodes.get(c))
            else {
                continue;
            };
            let path = if cpu == mem { "local" } else { "remote" };
            f.push(
                vec![
                    ("cpu_node", cpu.to_string()),
                    ("mem_node", mem.to_string()),
                    ("path", path.to_string()),
                ],
                v / divisor,
            );
        }
    }
    f
}
