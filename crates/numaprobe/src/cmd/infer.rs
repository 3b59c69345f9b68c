//! `numaprobe infer`: read a latency/bandwidth matrix (numaprobe's own result
//! or run.json, Intel MLC's text output, the `{matrix: ...}` JSON form, or
//! CSV; told apart by content), infer levels, hops, links and nested groups,
//! compare with the SLIT, and print it with an ASCII drawing; optionally the
//! advice and an SVG/PNG picture of the node graph.

use crate::args::OutputArgs;
use crate::output::usage;
use numaprobe_core::analysis::{self, Unit};
use numaprobe_core::model::input;
use numaprobe_core::model::Format;
use numaprobe_core::render;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "Reads a node-to-node matrix (rows: the node that asks, columns: the node that holds the \
memory) and groups its cells into performance levels, derives the direct links whose shortest paths \
explain the levels (hops), finds groups of nodes (sub-NUMA clusters, sockets joined by slower links), \
and says where the data do not fit a hop model or where the firmware's SLIT disagrees.\n\n\
Input (--input FILE, a report folder, or - for stdin; the format is told from the content; \
doc/inputs.md):\n  \
* a report folder: its latency.json (bandwidth.json with --matrix bandwidth), else its run.json, \
else its topo.json's SLIT;\n  \
* numaprobe's own `latency`/`bandwidth` JSON ({unit, cpu_nodes, mem_nodes, matrix});\n  \
* numaprobe's run.json: its latency matrix, or its bandwidth matrix with --matrix bandwidth;\n  \
* Intel MLC's text output of --latency_matrix, --bandwidth_matrix or a default run (latency first; \
--matrix bandwidth for the bandwidth table);\n  \
* JSON {unit: ns|cycles|MB/s|GB/s, matrix: [[...]], slit?: [[...]], node_ids?: [...], cpu_nodes?: [...]}, \
null for a cell not measured; with matrix null the SLIT itself is analysed (cpu_nodes then names the \
nodes with CPUs, the others are memory only);\n  \
* CSV: one row per node, optional header line and label column, `# unit: ns` or --unit.\n\n\
With --sysfs-root the firmware's distance table (SLIT) and HMAT of that machine are compared \
with the measurement.\n\n\
Examples:\n  numaprobe infer --input lat.json\n  numaprobe infer --input lat.json --advice --graph-svg net.svg\n  \
numaprobe latency --format json | numaprobe infer --input - --sysfs-root / --format json"
)]
pub struct Args {
    /// The matrix to analyse: a JSON or CSV file, a report folder, or `-` for stdin. Default: ./numaprobe-report when it exists
    #[arg(long, short = 'i', value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Unit of the values when the file does not say (CSV) or says wrongly: ns, cycles, MB/s, GB/s, slit
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,
    /// Which matrix to take from a file that holds several (run.json, an MLC default run): latency or bandwidth
    #[arg(long, value_name = "KIND")]
    pub matrix: Option<String>,
    /// Also print placement advice (penalties, where to keep threads and data, interleaving, crossfire)
    #[arg(long)]
    pub advice: bool,
    /// Write a picture of the node graph with link values as SVG
    #[arg(long, value_name = "FILE")]
    pub graph_svg: Option<PathBuf>,
    /// Write the same picture as PNG
    #[arg(long, value_name = "FILE")]
    pub graph_png: Option<PathBuf>,
    /// Compare with the SLIT and HMAT of the machine whose sysfs is below DIR (`/` for this one);
    /// a SLIT in the input file wins
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // The main job's folder, when there is one here.
    let default = Path::new(crate::report_dir::DEFAULT_DIR);
    let input = args
        .input
        .as_deref()
        .or_else(|| default.is_dir().then_some(default));
    let Some(input) = input else {
        return Err(usage(
            "numaprobe infer needs a matrix: --input FILE (a numaprobe document, a report folder, MLC output or CSV; `-` for stdin), \
             e.g. --input numaprobe-report",
        ));
    };
    let unit = match &args.unit {
        None => None,
        Some(u) => Some(Unit::parse(u).ok_or_else(|| {
            usage(format!(
                "--unit {u:?} is not a unit numaprobe knows (valid: {})",
                Unit::VALID
            ))
        })?),
    };
    let select = match &args.matrix {
        None => None,
        Some(s) => Some(analysis::Select::parse(s).ok_or_else(|| {
            usage(format!(
                "--matrix {s:?} is not a matrix kind (valid: {})",
                analysis::Select::VALID
            ))
        })?),
    };
    let opts = analysis::ParseOptions { unit, select };
    let matrix = if input.as_os_str() == "-" {
        let text = input::read_stream(std::io::stdin().lock(), Path::new("stdin"))
            .map_err(|e| usage(format!("cannot read the matrix from {e}")))?;
        analysis::parse_with(&text, opts).map_err(|e| usage(format!("stdin: {e}")))?
    } else {
        let (m, file) = analysis::input::read_matrix(
            input,
            opts,
            "infer --input",
            analysis::input::MATRIX_KINDS,
        )
        .map_err(|e| usage(e.to_string()))?;
        if file != input {
            eprintln!("numaprobe: infer: read {}", file.display());
        }
        m
    };
    let topo = match &args.sysfs_root {
        Some(root) => Some(super::topo::read_topology(root)?),
        None => None,
    };
    let inf = analysis::machine::infer_on(matrix, topo.as_ref());

    if let Some(p) = &args.graph_svg {
        let svg = render::graph::render_svg(&inf)?;
        crate::safe_dir::write_file(p, svg.as_bytes())?;
    }
    if let Some(p) = &args.graph_png {
        let png = render::graph::render_png(&inf)?;
        crate::safe_dir::write_file(p, &png)?;
    }

    let out = match args.out.format() {
        // Streamed: the JSON of a large matrix's inference (some 600 MB
        // for 1500 nodes) outweighs the analysis, and is never held whole.
        Format::Json => return args.out.sink().write_json(&inf),
        Format::Csv => inf.cells_table().to_csv(),
        Format::Table => inf.to_terminal_alone(args.advice),
        // Markdown is a document: it keeps everything the JSON has.
        Format::Markdown => inf.to_markdown(true),
    };
    args.out.sink().write(&out)
}
