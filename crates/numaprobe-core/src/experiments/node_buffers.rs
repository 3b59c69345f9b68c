//! One buffer per memory node for the latency and bandwidth matrices
//! (DESIGN: set-up grows with nodes, not cells): which CPU sets a buffer
//! up, the order of a plan's cells by memory node, and the set-up itself on
//! a pinned thread (allocate, bind, touch in cancellable chunks, then what
//! the matrix writes into it), timed so the budget keeper learns the
//! machine's real set-up rate from the first real buffer.

use super::ExperimentError;
use crate::model::matrix::BufferSetup;
use crate::placement::{pin_current_thread, BufferSpec, NodeBuffer};
use crate::topology::Topology;
use std::time::Instant;

/// The CPU that sets up `mem_node`'s buffer: the node's first allowed core,
/// so page tables sit with the data as they do for a program that
/// first-touches its own memory; for a node without CPUs, the first core
/// of the CPU node nearest to it by the SLIT (the lowest id among equals,
/// the first CPU node without a SLIT).
pub fn toucher(topo: &Topology, mem_node: u32) -> Result<u32, ExperimentError> {
    if let Some(&cpu) = topo.allowed_core_cpus_of_node(mem_node).first() {
        return Ok(cpu);
    }
    let nodes = topo.allowed_cpu_nodes();
    let nearest = nodes
        .iter()
        .copied()
        .min_by_key(|&n| {
            topo.distances
                .as_ref()
                .and_then(|d| d.get(n, mem_node))
                .unwrap_or(u32::MAX)
        })
        .ok_or(ExperimentError::NoCpuNodes)?;
    topo.allowed_core_cpus_of_node(nearest)
        .first()
        .copied()
        .ok_or(ExperimentError::NoCpuNodes)
}

/// The plan's cells grouped by memory node, in the order of `mem_nodes`
/// (then any memory node not listed), each group in plan order: the run
/// order of a matrix with one buffer per memory node.
pub fn by_memory_node<T>(
    cells: &[T],
    mem_nodes: &[u32],
    mem_of: impl Fn(&T) -> u32,
) -> Vec<(u32, Vec<usize>)> {
    let mut order: Vec<u32> = mem_nodes.to_vec();
    for c in cells {
        if !order.contains(&mem_of(c)) {
            order.push(mem_of(c));
        }
    }
    order
        .into_iter()
        .map(|m| {
            let idx: Vec<usize> = (0..cells.len())
                .filter(|&i| mem_of(&cells[i]) == m)
                .collect();
            (m, idx)
        })
        .filter(|(_, idx)| !idx.is_empty())
        .collect()
}

/// A memory node's buffer, ready for its cells.
pub struct Prepared<T> {
    pub buf: NodeBuffer,
    /// What `fill` returned (the chase's start for latency).
    pub filled: T,
    pub record: BufferSetup,
}

/// Map `spec` on a thread pinned to `cpu`, touch every page from there (a
/// stop request ends the touch within a chunk: [`NodeBuffer::touch`]), then
/// let `fill` write what the matrix needs, and time it all.
pub fn set_up<T: Send>(
    spec: &BufferSpec,
    mem_node: u32,
    cpu: u32,
    fill: impl FnOnce(&mut NodeBuffer) -> Result<T, ExperimentError> + Send,
) -> Result<Prepared<T>, ExperimentError> {
    set_up_by(spec, mem_node, cpu, None, fill)
}

/// [`set_up`], whose touch also stops once `deadline` has passed
/// ([`NodeBuffer::touch_by`]: the error says how much was touched).
pub fn set_up_by<T: Send>(
    spec: &BufferSpec,
    mem_node: u32,
    cpu: u32,
    deadline: Option<Instant>,
    fill: impl FnOnce(&mut NodeBuffer) -> Result<T, ExperimentError> + Send,
) -> Result<Prepared<T>, ExperimentError> {
    let began = Instant::now();
    let (buf, filled, node) = super::workers::on_a_thread(|| {
        pin_current_thread(&[cpu])?;
        let mut buf = NodeBuffer::alloc(spec)?;
        buf.touch_by(deadline)?;
        let node = buf.touched_on().map(|(_, n)| n);
        let filled = fill(&mut buf)?;
        Ok((buf, filled, node))
    })?;
    let record = BufferSetup {
        mem_node,
        bytes: buf.len() as u64,
        touched_by_cpu: cpu,
        page_tables_node: node,
        seconds: began.elapsed().as_secs_f64(),
        cells: 0,
    };
    Ok(Prepared {
        buf,
        filled,
        record,
    })
}

/// (memory node, CPU that sets up its buffer) for every memory node.
pub(crate) fn touchers(
    topo: &Topology,
    mem_nodes: &[u32],
) -> Result<Vec<(u32, u32)>, ExperimentError> {
    mem_nodes
        .iter()
        .map(|&m| Ok((m, toucher(topo, m)?)))
        .collect()
}

/// Where the page tables of a CPU-less node's buffer are, said once per
/// matrix.
pub(crate) fn page_table_notes(topo: &Topology, touchers: &[(u32, u32)]) -> Vec<String> {
    touchers
        .iter()
        .filter(|(m, _)| topo.allowed_cpus_of_node(*m).is_empty())
        .map(|&(m, cpu)| {
            let node = topo
                .allowed_cpu_nodes()
                .into_iter()
                .find(|&n| topo.allowed_cpus_of_node(n).contains(&cpu));
            format!(
                "memory node {m} has no CPU: its buffer is set up by CPU {cpu}{}, so its page tables are there, not on node {m}",
                node.map(|n| format!(" (node {n})")).unwrap_or_default()
            )
        })
        .collect()
}

/// The CPU that sets up `mem_node`'s buffer in `touchers`, else `fallback`.
pub(crate) fn toucher_of(touchers: &[(u32, u32)], mem_node: u32, fallback: u32) -> u32 {
    touchers
        .iter()
        .find(|(m, _)| *m == mem_node)
        .map_or(fallback, |&(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::testing;
    use crate::placement::{MemPolicy, PageKind};

    #[test]
    fn cells_are_grouped_by_memory_node_in_column_order() {
        let cells = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 5)];
        let g = by_memory_node(&cells, &[1, 0], |c| c.1);
        assert_eq!(g, vec![(1, vec![1, 3]), (0, vec![0, 2]), (5, vec![4])]);
        assert!(by_memory_node(&cells, &[7], |c| c.1)
            .iter()
            .all(|(m, _)| *m != 7));
    }

    #[test]
    fn a_cpu_less_node_is_set_up_from_a_cpu_node() {
        let mut topo = testing::with_memory_only_node();
        let first = topo.allowed_cpu_nodes()[0];
        let core = topo.allowed_core_cpus_of_node(first)[0];
        assert_eq!(toucher(&topo, first).unwrap(), core);
        // Without a SLIT, and with one: node 0 is the only CPU node.
        topo.distances = None;
        assert_eq!(toucher(&topo, 7).unwrap(), core);
        topo.distances = Some(crate::topology::Distances {
            node_ids: vec![first, 7],
            matrix: vec![vec![10, 21], vec![21, 10]],
        });
        assert_eq!(toucher(&topo, 7).unwrap(), core);
        topo.nodes.retain(|n| n.os_index == 7);
        assert!(toucher(&topo, 7).is_err());
    }

    #[test]
    fn a_set_up_buffer_is_touched_placed_and_timed() {
        let topo = testing::live_topology();
        let node = topo.allowed_cpu_nodes()[0];
        let cpu = toucher(&topo, node).unwrap();
        let spec = BufferSpec::new(4 << 20, MemPolicy::Bind(node), PageKind::Small);
        let p = set_up(&spec, node, cpu, |b| Ok(b.len())).unwrap();
        assert_eq!(p.filled, 4 << 20);
        assert_eq!(p.record.touched_by_cpu, cpu);
        assert_eq!(p.record.page_tables_node, Some(node));
        assert_eq!(p.record.bytes, 4 << 20);
        assert!(p.record.seconds > 0.0);
        assert_eq!(p.buf.verify().unwrap().fraction_on_intended, 1.0);
    }
}
