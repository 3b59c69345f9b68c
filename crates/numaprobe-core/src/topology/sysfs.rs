//! Reading Linux sysfs and procfs below a root path into the `Topology` model.
//!
//! Every file of the machine's description is opened through `root`, so a dump
//! of another machine reads like the live one (the hwloc way).

use super::Topology;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error("{0}: no such directory")]
    NoRoot(PathBuf),
    #[error("{0}: not a Linux sysfs tree (no sys/devices/system/cpu below it)")]
    NotSysfs(PathBuf),
    #[error("{path}: {problem}")]
    Malformed { path: PathBuf, problem: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Read the topology of the machine whose sysfs/procfs live below `root`.
pub fn read(root: &Path) -> Result<Topology, TopologyError> {
    if !root.is_dir() {
        return Err(TopologyError::NoRoot(root.to_path_buf()));
    }
    Err(TopologyError::NotSysfs(root.to_path_buf()))
}
