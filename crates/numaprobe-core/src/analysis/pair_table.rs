//! A table over the unordered node pairs of the inference, held flat: one
//! slot per pair of node indices i < j, found by arithmetic on the
//! triangle, where a map of pair keys held some 50 bytes a pair in its
//! nodes. A 1500-node matrix has 1.1 million pairs. Walking it goes in key
//! order, (a, b) ascending, as the map did, since the nodes are sorted.

/// A slot that knows whether it holds a value (a default slot does not).
pub(crate) trait Slot: Copy + Default {
    fn is_set(&self) -> bool;
}

/// A level rank: ranks start at 1, so 0 is "no pair".
impl Slot for u32 {
    fn is_set(&self) -> bool {
        *self != 0
    }
}

pub(crate) struct PairTable<T> {
    /// Sorted ascending and unique (`Matrix::nodes`).
    nodes: Vec<u32>,
    slots: Vec<T>,
}

/// Pairs of `n` nodes: n (n - 1) / 2.
fn pairs_of(n: usize) -> usize {
    n * n.saturating_sub(1) / 2
}

impl<T: Slot> PairTable<T> {
    /// An empty table over `nodes` (sorted ascending, unique).
    pub fn new(nodes: &[u32]) -> PairTable<T> {
        PairTable {
            nodes: nodes.to_vec(),
            slots: vec![T::default(); pairs_of(nodes.len())],
        }
    }

    fn pos(&self, x: u32) -> Option<usize> {
        // Nodes are nearly always 0..n, where a node is its own index.
        if self.nodes.get(x as usize) == Some(&x) {
            return Some(x as usize);
        }
        self.nodes.binary_search(&x).ok()
    }

    /// The slot of pair {a, b}, in either order; None for a == b or a node
    /// not in the table.
    pub fn slot(&self, a: u32, b: u32) -> Option<usize> {
        let (i, j) = (self.pos(a)?, self.pos(b)?);
        let (i, j) = (i.min(j), i.max(j));
        // Row i starts after rows 0..i, of n-1, n-2, ... slots each.
        (i < j).then(|| i * self.nodes.len() - i * (i + 1) / 2 + (j - i - 1))
    }

    pub fn get(&self, k: (u32, u32)) -> Option<&T> {
        self.slot(k.0, k.1)
            .map(|s| &self.slots[s])
            .filter(|v| v.is_set())
    }

    pub fn contains_key(&self, k: (u32, u32)) -> bool {
        self.get(k).is_some()
    }

    /// The slot of pair `k` to fill, set or not; None as in `slot`.
    pub fn slot_mut(&mut self, k: (u32, u32)) -> Option<&mut T> {
        let s = self.slot(k.0, k.1)?;
        Some(&mut self.slots[s])
    }

    /// The pairs that hold a value, (a, b) with a < b, ascending.
    pub fn iter(&self) -> impl Iterator<Item = ((u32, u32), &T)> + '_ {
        let n = self.nodes.len();
        (0..n)
            .flat_map(move |i| (i + 1..n).map(move |j| (self.nodes[i], self.nodes[j])))
            .zip(self.slots.iter())
            .filter(|(_, v)| v.is_set())
    }

    pub fn is_empty(&self) -> bool {
        !self.slots.iter().any(T::is_set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_has_its_own_slot_and_walks_in_key_order() {
        for nodes in [
            vec![],
            vec![7],
            vec![0, 1],
            vec![0, 1, 2, 3, 4],
            vec![2, 5, 9, 40],
        ] {
            let mut t: PairTable<u32> = PairTable::new(&nodes);
            let n = nodes.len();
            let mut seen = vec![false; pairs_of(n)];
            let mut want = Vec::new();
            for (i, &a) in nodes.iter().enumerate() {
                assert_eq!(t.slot(a, a), None, "no slot for a node with itself");
                for &b in &nodes[i + 1..] {
                    let s = t.slot(a, b).unwrap();
                    assert_eq!(t.slot(b, a), Some(s), "either order");
                    assert!(!seen[s], "{a}-{b} shares slot {s}");
                    seen[s] = true;
                    want.push(((a, b), a * 100 + b + 1));
                }
            }
            assert!(
                seen.iter().all(|&x| x),
                "every slot used, none past the end"
            );
            assert!(t.is_empty());
            // Filled from the far end, walked from the near one.
            for &(k, v) in want.iter().rev() {
                *t.slot_mut((k.1, k.0)).unwrap() = v;
            }
            let got: Vec<((u32, u32), u32)> = t.iter().map(|(k, &v)| (k, v)).collect();
            assert_eq!(got, want);
            assert_eq!(t.is_empty(), want.is_empty());
        }
    }

    #[test]
    fn an_unset_pair_or_unknown_node_has_no_value() {
        let mut t: PairTable<u32> = PairTable::new(&[1, 2, 3]);
        *t.slot_mut((1, 3)).unwrap() = 2;
        assert_eq!(t.get((3, 1)), Some(&2));
        assert!(t.contains_key((1, 3)));
        assert!(!t.contains_key((1, 2)), "a slot never set");
        assert_eq!(t.slot(1, 4), None, "4 is not a node");
        assert!(t.slot_mut((0, 1)).is_none());
        assert_eq!(t.iter().count(), 1);
    }
}
