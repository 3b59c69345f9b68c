//! A latency buffer set up before its run (the main job's calibration on a
//! real buffer) and handed to it, so that no set-up is paid twice.

use crate::experiments::node_buffers;

/// A memory node's buffer with its chain: (chase start, lines).
pub type Chained = node_buffers::Prepared<(usize, usize)>;

/// A slot for one [`Chained`] buffer, shared by the clones of a plan: the
/// first run of the plan that reaches its memory node at its size takes it.
#[derive(Clone, Default)]
pub struct Handed(std::sync::Arc<std::sync::Mutex<Option<Chained>>>);

impl std::fmt::Debug for Handed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handed({:?})", self.held())
    }
}

impl Handed {
    pub fn put(&self, p: Chained) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(p);
        }
    }

    /// (memory node, bytes) of the buffer held, if one is.
    pub fn held(&self) -> Option<(u32, u64)> {
        let slot = self.0.lock().ok()?;
        slot.as_ref().map(|p| (p.record.mem_node, p.record.bytes))
    }

    /// The held buffer, when it is `mem_node`'s and `bytes` long.
    pub(crate) fn take_for(&self, mem_node: u32, bytes: u64) -> Option<Chained> {
        let mut slot = self.0.lock().ok()?;
        let fits = slot
            .as_ref()
            .is_some_and(|p| p.record.mem_node == mem_node && p.record.bytes == bytes);
        fits.then(|| slot.take()).flatten()
    }
}
