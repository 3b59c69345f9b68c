//! `numaprobe export --to prometheus|hwloc FROM`: hand a measured machine
//! to another tool. FROM is any numaprobe document or report folder, read
//! by the library (`model::export`); the exporters are the library's
//! renderers (`render::prometheus`, `render::hwloc_xml`). Nothing is
//! measured here. The file is written whole or not at all (a temporary
//! `.NAME.XXXXXX.tmp` beside it, then a rename), so node_exporter's textfile
//! collector, which reads only `*.prom`, never sees half a file.

use crate::output::{usage, Sink};
use clap::ValueEnum;
use numaprobe_core::model::export::{self, Target};
use numaprobe_core::render;
use std::path::PathBuf;

/// What `--to` accepts.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum To {
    /// node_exporter's textfile-collector format (Prometheus text exposition)
    Prometheus,
    /// hwloc v2 XML with the measured latency and bandwidth (lstopo --input, HWLOC_XMLFILE)
    Hwloc,
}

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "FROM is a numaprobe JSON document or a report folder (its run.json first, then \
the other documents for what the run lacks).\n\n\
--to prometheus takes run, topo, latency, bandwidth, check and fleet documents: topology facts \
(numaprobe_numa_nodes, numaprobe_node_cpus, numaprobe_node_memory_bytes, numaprobe_packages, \
numaprobe_thp_mode), the matrices (numaprobe_latency_seconds, numaprobe_bandwidth_bytes_per_second, \
labels cpu_node, mem_node and path=local|remote) and numaprobe_cell_flagged, the run's \
numaprobe_run_*_timestamp_seconds, the check's numaprobe_check_*, the fleet's numaprobe_fleet_* \
(a state per node), and numaprobe_info{source=run|check|fleet}. The run's, the check's and the \
fleet's files share no series, so all three can sit in one textfile directory. Write it into node_exporter's --collector.textfile.directory as NAME.prom.\n\n\
--to hwloc takes a run or topo document: the machine as hwloc XML (with its caches and PCI devices), the latency (ns) and bandwidth \
(MiB/s) as hwloc memory attributes per initiator and as distance matrices; use it with \
`lstopo --input FILE --memattrs` or HWLOC_XMLFILE=FILE for hwloc-calc, hwloc-bind and MPI launchers.\n\n\
Exit status: 0 written; 2 bad input (a document of another kind, a missing file, an --output \
whose folder does not exist); nothing is written then."
)]
pub struct Args {
    /// The format to write
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub to: To,
    /// A numaprobe document (run.json, topo.json, latency.json, check.json, fleet.json...) or a report folder
    #[arg(value_name = "FROM")]
    pub from: PathBuf,
    /// Write to FILE instead of stdout (replaced atomically; `-` is stdout; its folder must exist)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let target = match args.to {
        To::Prometheus => Target::Prometheus,
        To::Hwloc => Target::Hwloc,
    };
    let exported = export::load(&args.from, target).map_err(|e| usage(e.to_string()))?;
    let text = match target {
        Target::Prometheus => render::prometheus::prometheus(&exported),
        Target::Hwloc => {
            let x = render::hwloc_xml::hwloc_xml(&exported).ok_or_else(|| {
                usage(format!(
                    "{}: holds no topology; hwloc needs a run or topo document",
                    args.from.display()
                ))
            })?;
            for n in &x.notes {
                eprintln!(
                    "numaprobe: export: {}",
                    crate::output::one_line(&n.to_string())
                );
            }
            x.xml
        }
    };
    Sink::new(args.output.as_deref()).write(&text)
}
