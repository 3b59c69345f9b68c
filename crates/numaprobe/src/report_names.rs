//! The names numaprobe writes into a report folder: the only names a
//! manifest can make it remove or move ([`crate::report_dir`],
//! [`crate::kept_report`]).

/// The list of the files the last run wrote into the folder.
pub const MANIFEST: &str = ".numaprobe-manifest";
/// The lock file of a folder (see [`crate::report_dir`]).
pub const LOCK: &str = ".numaprobe-lock";

/// Every name numaprobe writes into a report folder: the only names a
/// manifest can make it remove or move.
pub const KNOWN: [&str; 15] = [
    "topo.json",
    "latency.json",
    "bandwidth.json",
    "infer-latency.json",
    "infer-bandwidth.json",
    "graph-latency.svg",
    "graph-latency.png",
    "pin.json",
    "c2c.json",
    "loaded-latency.json",
    "peak.json",
    "sweep.json",
    "run.json",
    "summary.md",
    "report.html",
];

pub fn is_known(name: &str) -> bool {
    KNOWN.contains(&name)
}
