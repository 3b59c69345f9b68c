//! Per-line latency samples on one memory node, for the questions the
//! analysis's interleave and host-node tests answer: is a node that holds
//! several packages uniform memory, or memory the firmware interleaves
//! across the sockets? Does the one node of a one-package machine (a
//! virtual machine given no NUMA layout) answer in two groups, its memory
//! on two of the host's nodes?
//!
//! One buffer bound to the node, set up and then sampled by one CPU of the
//! node: random lines, each flushed and loaded alone
//! ([`kernels::line_latency`]). Lines, not pages: firmware interleaves by
//! physical address at a granularity of a line up to a few KiB, and a
//! line-by-line sample sees every such granularity. The buffer's size does
//! not matter for caching (each line is flushed before its load); it only
//! has to span many interleave steps, so it is small and cheap to set up.

use super::ExperimentError;
use crate::kernels::line_latency;
use crate::placement::{pin_current_thread, BufferSpec, MemPolicy, NodeBuffer, PageKind};
use crate::rng::SplitMix64;
use crate::timer::Timer;
use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Bytes of the sampled buffer: thousands of pages, far more interleave
/// steps than samples; 32 MiB set up in about a second even under
/// software emulation.
pub const BUFFER_BYTES: usize = 32 << 20;
/// Lines sampled: enough for the smaller mode of an 8-socket interleave
/// (1/8 of them) to hold hundreds of samples.
pub const SAMPLES: usize = 4096;
/// A clock tick coarser than this cannot time one load (a local load is
/// 60-100 ns, a remote one 1.3-2x that): the samples would be tick counts.
pub const MAX_TICK_NS: f64 = 10.0;

/// The samples of one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineSamples {
    pub node: u32,
    /// The CPU that set the buffer up and loaded every line.
    pub cpu: u32,
    /// The packages whose CPUs this node holds.
    pub packages: Vec<i64>,
    pub buffer_bytes: u64,
    /// One load's latency per sampled line, ns, in sampling order; empty
    /// when the clock is too coarse or no line can be flushed here.
    pub samples_ns: Vec<f64>,
    pub clock_tick_ns: f64,
    /// Why there are no samples, when there are none.
    pub skipped: Option<String>,
    pub seconds: f64,
}

/// The packages whose allowed CPUs `node` holds, ascending.
pub fn packages_of_node(topo: &Topology, node: u32) -> Vec<i64> {
    let Some(n) = topo.nodes.iter().find(|n| n.os_index == node) else {
        return Vec::new();
    };
    let mut p: Vec<i64> = topo
        .cpus
        .iter()
        .filter(|c| n.cpus.contains(&c.os_index))
        .filter_map(|c| c.package)
        .collect();
    p.sort_unstable();
    p.dedup();
    p
}

/// Nodes whose CPUs sit in more than one package: the nodes where uniform
/// and interleaved memory must be told apart.
pub fn multi_package_nodes(topo: &Topology) -> Vec<u32> {
    topo.allowed_cpu_nodes()
        .into_iter()
        .filter(|&n| packages_of_node(topo, n).len() > 1)
        .collect()
}

/// The machine's one NUMA node, when it has one and that node's allowed
/// CPUs sit in one package: the node a virtual machine given no NUMA
/// layout shows, whose memory may yet lie on two of the host's nodes.
pub fn one_package_node(topo: &Topology) -> Option<u32> {
    let [node] = topo.nodes.as_slice() else {
        return None;
    };
    let n = node.os_index;
    (topo.allowed_cpu_nodes() == [n] && packages_of_node(topo, n).len() == 1).then_some(n)
}

/// Every node the per-line check samples: each node of several packages
/// ([`multi_package_nodes`]) and the one node of a one-node, one-package
/// machine ([`one_package_node`]).
pub fn nodes_to_check(topo: &Topology) -> Vec<u32> {
    let mut v = multi_package_nodes(topo);
    v.extend(one_package_node(topo));
    v
}

/// Sample `samples` lines of a `bytes` buffer bound to `node`, from the
/// node's first allowed core. Stops early (with what it has) on Ctrl-C.
pub fn sample_node(
    topo: &Topology,
    node: u32,
    bytes: usize,
    samples: usize,
    seed: u64,
) -> Result<LineSamples, ExperimentError> {
    let cpu = *topo
        .allowed_core_cpus_of_node(node)
        .first()
        .ok_or_else(|| ExperimentError::CpuLessNode {
            node,
            cpu_nodes: topo.allowed_cpu_nodes(),
        })?;
    let timer = Timer::get();
    let tick = timer.info().resolution_ns;
    let mut out = LineSamples {
        node,
        cpu,
        packages: packages_of_node(topo, node),
        buffer_bytes: bytes as u64,
        samples_ns: Vec::new(),
        clock_tick_ns: tick,
        skipped: None,
        seconds: 0.0,
    };
    if !line_latency::can_flush() {
        out.skipped = Some("this architecture cannot flush a cache line from user space".into());
        return Ok(out);
    }
    if tick > MAX_TICK_NS {
        out.skipped = Some(format!(
            "the clock ticks every {tick:.1} ns, too coarse to time one load (at most {MAX_TICK_NS} ns)"
        ));
        return Ok(out);
    }
    let start = Instant::now();
    let spec = BufferSpec::new(bytes, MemPolicy::Bind(node), PageKind::Small);
    let got = std::thread::spawn(move || -> Result<Vec<f64>, ExperimentError> {
        pin_current_thread(&[cpu])?;
        let mut buf = NodeBuffer::alloc(&spec)?;
        buf.touch_or_stop()?;
        Ok(sample_lines(&buf, samples, seed, Timer::get()))
    })
    .join()
    .map_err(|_| ExperimentError::Panicked)??;
    out.samples_ns = got;
    out.seconds = start.elapsed().as_secs_f64();
    Ok(out)
}

/// Random lines of `buf`, each timed alone; stops early on Ctrl-C.
fn sample_lines(buf: &NodeBuffer, samples: usize, seed: u64, timer: &Timer) -> Vec<f64> {
    const LINE: usize = 64;
    let page = crate::pagesize::base() as usize;
    let pages = buf.len() / page;
    if pages == 0 {
        return Vec::new();
    }
    let lines_per_page = page / LINE;
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(samples);
    for i in 0..samples {
        if i % 256 == 0 && crate::cancel::requested() {
            break;
        }
        let p = rng.index(pages);
        let l = rng.index(lines_per_page);
        // The warming line: half a page away, never the line itself nor its
        // adjacent-line prefetch buddy.
        let w = (l + lines_per_page / 2) % lines_per_page;
        // SAFETY: both offsets are inside the mapped, touched buffer.
        let ns = unsafe {
            let base = buf.as_ptr().add(p * page);
            line_latency::time_load(base.add(l * LINE), base.add(w * LINE), timer)
        };
        out.push(ns);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_gives_a_sample_per_line_or_says_why_not() {
        let topo = crate::topology::sysfs::read(std::path::Path::new("/")).unwrap();
        let node = topo.allowed_cpu_nodes()[0];
        let s = sample_node(&topo, node, 4 << 20, 300, 7).unwrap();
        assert_eq!(s.node, node);
        assert!(topo.allowed_core_cpus_of_node(node).contains(&s.cpu));
        match &s.skipped {
            None => {
                assert_eq!(s.samples_ns.len(), 300);
                assert!(s.samples_ns.iter().all(|x| x.is_finite() && *x >= 0.0));
            }
            Some(why) => {
                assert!(s.samples_ns.is_empty());
                assert!(why.contains("clock") || why.contains("flush"), "{why}");
            }
        }
        assert!(!s.packages.is_empty());
    }

    #[test]
    fn a_node_without_cpus_or_an_unknown_one_is_an_error() {
        let topo = crate::topology::sysfs::read(std::path::Path::new("/")).unwrap();
        assert!(sample_node(&topo, 9999, 1 << 20, 10, 1).is_err());
    }
}
