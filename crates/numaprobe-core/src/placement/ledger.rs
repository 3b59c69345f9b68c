//! A per-node ledger of the memory several buffers will take together,
//! checked as one against each node's allocatable figure before any of them
//! is mapped. Threads that each check their own buffer can all pass and then
//! fail together (or meet the OOM killer together); the ledger is what a
//! group of threads checks instead.

use super::{BufferSpec, PlacementError};
use std::collections::BTreeMap;

/// Bytes asked of each node, and by what.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryLedger {
    /// node -> (bytes, what asked: name -> count)
    asks: BTreeMap<u32, (u64, BTreeMap<String, usize>)>,
}

impl MemoryLedger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Enter a buffer under `what` (e.g. `foreground array`). Huge page
    /// buffers come from the node's pool, not its free memory, and are
    /// checked buffer by buffer; they are not entered.
    pub fn add(
        &mut self,
        spec: &BufferSpec,
        touch_node: Option<u32>,
        what: &str,
    ) -> Result<(), PlacementError> {
        if spec.from_pool() {
            return Ok(());
        }
        for (node, bytes) in spec.node_shares(touch_node)? {
            let e = self.asks.entry(node).or_default();
            e.0 += bytes;
            *e.1.entry(what.to_string()).or_default() += 1;
        }
        Ok(())
    }

    /// Bytes asked of `node` so far.
    pub fn bytes_on(&self, node: u32) -> u64 {
        self.asks.get(&node).map(|e| e.0).unwrap_or(0)
    }

    /// Error naming the first node whose total does not fit in what
    /// `available(node)` says it can give.
    pub fn check(
        &self,
        mut available: impl FnMut(u32) -> Result<u64, PlacementError>,
    ) -> Result<(), PlacementError> {
        for (&node, (bytes, whats)) in &self.asks {
            let avail = available(node)?;
            if *bytes > avail {
                let what = whats
                    .iter()
                    .map(|(w, k)| format!("{k} x {w}"))
                    .collect::<Vec<_>>()
                    .join(" + ");
                return Err(PlacementError::TooLargeTogether {
                    node,
                    what,
                    requested: *bytes,
                    available: avail,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{MemPolicy, PageKind};

    const MIB: usize = 1 << 20;

    #[test]
    fn buffers_on_one_node_are_checked_together() {
        let mut l = MemoryLedger::new();
        let fg = BufferSpec::new(64 * MIB, MemPolicy::Bind(1), PageKind::Small);
        let bg = BufferSpec::new(64 * MIB, MemPolicy::Bind(1), PageKind::Small);
        l.add(&fg, None, "foreground array").unwrap();
        l.add(&fg, None, "foreground array").unwrap();
        l.add(&bg, None, "background buffer").unwrap();
        let other = BufferSpec::new(8 * MIB, MemPolicy::Bind(0), PageKind::Small);
        l.add(&other, None, "foreground array").unwrap();
        assert_eq!(l.bytes_on(1), 192 << 20);
        assert_eq!(l.bytes_on(0), 8 << 20);
        // Each buffer alone fits in 100 MiB; all three do not.
        let e = l
            .check(|n| Ok(if n == 1 { 100 << 20 } else { 1 << 30 }))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "node 1 cannot hold 1 x background buffer + 2 x foreground array: 192 MiB in total, 100 MiB allocatable now"
        );
        l.check(|_| Ok(192 << 20)).unwrap();
    }

    #[test]
    fn huge_page_pools_are_not_entered() {
        let mut l = MemoryLedger::new();
        let h = BufferSpec::new(2 * MIB, MemPolicy::Bind(0), PageKind::Huge2M);
        l.add(&h, None, "x").unwrap();
        assert_eq!(l.bytes_on(0), 0);
        l.check(|_| Ok(0)).unwrap();
    }
}
