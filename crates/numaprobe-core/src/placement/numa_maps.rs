//! Reading `/proc/PID/numa_maps`: where a running process's memory is, per
//! node, as the kernel counts it. `tune` samples it while the user's program
//! runs, so a candidate's memory policy can be seen at work (bind: pages on
//! the bound nodes; interleave: even over the nodes).
//!
//! One line per mapping: `ADDR POLICY [file=PATH|heap|stack] [anon=N]
//! [dirty=N] ... N0=P N1=Q ... kernelpagesize_kB=K`. `Ni=P` counts the
//! mapping's pages resident on node i, in pages of `kernelpagesize_kB`.
//! All threads of a process share one address space, so the process's file
//! covers the memory of every thread (a `task/TID/numa_maps` would list the
//! same mappings again).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bytes resident on one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeBytes {
    pub node: u32,
    pub bytes: u64,
}

/// A process's resident memory by node: `anon` counts the mappings that are
/// not backed by a file (heap, stack, `malloc`'s mmaps: the program's data,
/// which a memory policy places), `all` every mapping (also the program's
/// and the libraries' file pages, which sit wherever the page cache put
/// them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumaMaps {
    pub anon: Vec<NodeBytes>,
    pub all: Vec<NodeBytes>,
}

impl NumaMaps {
    /// Anonymous bytes over all nodes.
    pub fn anon_total(&self) -> u64 {
        // Saturating, as the node totals are: each may already be at the top.
        self.anon
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(n.bytes))
    }

    /// Each node's share of the anonymous bytes (0 when there are none).
    pub fn anon_fraction(&self, node: u32) -> f64 {
        let total = self.anon_total();
        if total == 0 {
            return 0.0;
        }
        self.anon
            .iter()
            .find(|n| n.node == node)
            .map_or(0.0, |n| n.bytes as f64 / total as f64)
    }
}

/// Parse the text of a `numa_maps` file. Lines or fields that do not
/// parse are skipped: the file is the kernel's, its format has grown fields
/// over the years, and a sample is an observation, not an input to refuse.
pub fn parse(text: &str) -> NumaMaps {
    let mut anon: BTreeMap<u32, u64> = BTreeMap::new();
    let mut all: BTreeMap<u32, u64> = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        // The address and the policy come first; a line without them is not
        // a mapping.
        if fields.next().is_none() || fields.next().is_none() {
            continue;
        }
        let mut page_kb: u64 = 4;
        let mut file = false;
        let mut pages: Vec<(u32, u64)> = Vec::new();
        for f in fields {
            if let Some(kb) = f.strip_prefix("kernelpagesize_kB=") {
                page_kb = kb.parse().unwrap_or(4);
            } else if f.starts_with("file=") {
                file = true;
            } else if let Some((k, v)) = f.split_once('=') {
                if let (Some(node), Ok(n)) = (
                    k.strip_prefix('N').and_then(|s| s.parse::<u32>().ok()),
                    v.parse::<u64>(),
                ) {
                    pages.push((node, n));
                }
            }
        }
        // Saturating: a forged or garbled line must not wrap a node's total
        // (or panic with overflow checks on); a saturated figure still reads
        // as absurd, which it is.
        for (node, n) in pages {
            let bytes = n.saturating_mul(page_kb.saturating_mul(1024));
            let total = all.entry(node).or_default();
            *total = total.saturating_add(bytes);
            if !file {
                let total = anon.entry(node).or_default();
                *total = total.saturating_add(bytes);
            }
        }
    }
    let list = |m: BTreeMap<u32, u64>| {
        m.into_iter()
            .map(|(node, bytes)| NodeBytes { node, bytes })
            .collect()
    };
    NumaMaps {
        anon: list(anon),
        all: list(all),
    }
}

/// Read and parse `/proc/PID/numa_maps`; None when the process is gone (or
/// is a zombie, whose address space is already released: the file is then
/// empty) or the kernel has no NUMA support.
pub fn read(pid: u32) -> Option<NumaMaps> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/numa_maps")).ok()?;
    if text.trim().is_empty() {
        return None;
    }
    Some(parse(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as a 6.1 kernel writes them for an OpenMP program whose arrays
    // are interleaved over two nodes, with a file mapping, the heap, a
    // huge-page mapping and a thread stack.
    const SAMPLE: &str = "\
55d0c6e00000 default file=/usr/bin/stream mapped=2 N0=2 kernelpagesize_kB=4
55d0c6e02000 default file=/usr/bin/stream anon=1 dirty=1 active=0 N1=1 kernelpagesize_kB=4
55d0c7a1b000 interleave:0-1 heap anon=33 dirty=33 active=0 N0=17 N1=16 kernelpagesize_kB=4
7f3a40000000 interleave:0-1 anon=24576 dirty=24576 active=0 N0=12288 N1=12288 kernelpagesize_kB=4
7f3a80000000 interleave:0-1 anon=2 dirty=2 N0=1 N1=1 kernelpagesize_kB=2048
7f3b1c021000 default
7f3b1c022000 default file=/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0 mapped=40 mapmax=3 N0=40 kernelpagesize_kB=4
7ffd5e4a1000 default stack anon=5 dirty=5 active=0 N0=5 kernelpagesize_kB=4
";

    #[test]
    fn anonymous_and_all_bytes_are_summed_per_node_in_the_mappings_page_size() {
        let m = parse(SAMPLE);
        let kb = 1024;
        let huge = 2048 * kb;
        assert_eq!(
            m.anon,
            vec![
                NodeBytes {
                    node: 0,
                    bytes: (17 + 12288 + 5) * 4 * kb + huge
                },
                NodeBytes {
                    node: 1,
                    bytes: (16 + 12288) * 4 * kb + huge
                },
            ]
        );
        // The file pages (the binary, libgomp, and the binary's written
        // data page) count in `all` only.
        assert_eq!(m.all[0].bytes, m.anon[0].bytes + (2 + 40) * 4 * kb);
        assert_eq!(m.all[1].bytes, m.anon[1].bytes + 4 * kb);
    }

    #[test]
    fn fractions_follow_the_anonymous_bytes() {
        let m = parse(SAMPLE);
        let f0 = m.anon_fraction(0);
        assert!((f0 + m.anon_fraction(1) - 1.0).abs() < 1e-12);
        assert!((f0 - 0.5).abs() < 0.01, "{f0}");
        assert_eq!(m.anon_fraction(7), 0.0);
        assert_eq!(NumaMaps::default().anon_fraction(0), 0.0);
    }

    #[test]
    fn odd_lines_are_skipped_without_panic() {
        let m = parse("\n   \nonlyaddr\n1 default N0=x Nx=3 N=4 =5 N1=2\n");
        assert_eq!(
            m.anon,
            vec![NodeBytes {
                node: 1,
                bytes: 8192
            }]
        );
    }

    #[test]
    fn this_process_has_its_memory_somewhere() {
        // Where the kernel has NUMA (every Linux kernel numaprobe targets
        // has CONFIG_NUMA), our own map lists resident pages.
        if let Some(m) = read(std::process::id()) {
            assert!(m.all.iter().map(|n| n.bytes).sum::<u64>() > 0);
        }
    }

    #[test]
    fn page_counts_past_64_bits_saturate_instead_of_wrapping() {
        // Two lines whose page counts each nearly fill a u64, and a page size
        // whose byte count does not fit one: the totals stay at the top.
        let m = parse(
            "1000 default anon=1 N0=18446744073709551615 kernelpagesize_kB=4\n\
             2000 default anon=1 N0=18446744073709551615 N1=3 kernelpagesize_kB=18446744073709551615\n",
        );
        assert_eq!(
            m.anon,
            vec![
                NodeBytes {
                    node: 0,
                    bytes: u64::MAX
                },
                NodeBytes {
                    node: 1,
                    bytes: u64::MAX
                },
            ]
        );
        assert_eq!(m.all, m.anon);
        // The total over nodes stays at the top too, and each node's share reads.
        assert_eq!(m.anon_total(), u64::MAX);
        assert_eq!(m.anon_fraction(0), 1.0);
    }
}
