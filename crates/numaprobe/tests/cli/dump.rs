//! A real machine's dump whose node's memory changed, for the tests of
//! `check`'s memory rule: the Opteron dump `16amd64-8n2c` (node 1 holds
//! 8 GiB), a topology saved from it, and a copy whose node 1 reports
//! another total. Included by the tests that also include `cli` and the
//! core's `common`.

use crate::common::{self, TempDir};
use std::path::PathBuf;
use std::process::Command;

pub const NODE1_MEMINFO: &str = "sys/devices/system/node/node1/meminfo";

/// The dump, its saved topology (`expect`), and `changed`, a copy whose
/// node 1 reports `node1_kb` of memory.
pub struct Dumps {
    _dir: TempDir,
    _dump: common::Unpacked,
    pub root: PathBuf,
    pub expect: PathBuf,
    pub changed: PathBuf,
}

pub fn dumps(tag: &str, node1_kb: u64) -> Dumps {
    let dir = TempDir::new(tag);
    let dump = common::unpack("16amd64-8n2c");
    let expect = dir.path().join("expect.json");
    crate::cli::ok(&crate::cli::numaprobe(&[
        "topo".as_ref(),
        "--sysfs-root".as_ref(),
        dump.root.as_os_str(),
        "-o".as_ref(),
        expect.as_os_str(),
    ]));
    let changed = dir.path().join("changed");
    assert!(Command::new("cp")
        .arg("-a")
        .arg(&dump.root)
        .arg(&changed)
        .status()
        .unwrap()
        .success());
    let meminfo = changed.join(NODE1_MEMINFO);
    let old = std::fs::read_to_string(&meminfo).unwrap();
    let was = "MemTotal:      8388608 kB";
    assert!(old.contains(was), "{old}");
    std::fs::write(
        &meminfo,
        old.replace(was, &format!("MemTotal:      {node1_kb} kB")),
    )
    .unwrap();
    Dumps {
        root: dump.root.clone(),
        _dump: dump,
        _dir: dir,
        expect,
        changed,
    }
}
