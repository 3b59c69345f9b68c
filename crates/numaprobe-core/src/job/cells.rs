//! Which cells of a matrix a plan measures: all of them, or per row the
//! local cell and the farthest remote one. The matrices' planner and the
//! extra phases' pair choice both ask, so it sits apart from both.

use crate::topology::Distances;

pub fn all_cells(cpu: &[u32], mem: &[u32]) -> Vec<(u32, u32)> {
    cpu.iter()
        .flat_map(|&c| mem.iter().map(move |&m| (c, m)))
        .collect()
}

/// Per row: the local cell and the remote node farthest by the SLIT (the
/// next node id after the row's, when there is no SLIT).
pub fn diagonal_and_farthest(
    cpu: &[u32],
    mem: &[u32],
    distances: Option<&Distances>,
) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for &c in cpu {
        if mem.contains(&c) {
            out.push((c, c));
        }
        let remote: Vec<u32> = mem.iter().copied().filter(|&m| m != c).collect();
        let far = match distances {
            Some(d) if remote.iter().all(|&m| d.get(c, m).is_some()) => remote
                .iter()
                .copied()
                // Farthest first; the lowest id among equals.
                .max_by_key(|&m| (d.get(c, m), std::cmp::Reverse(m))),
            _ => remote
                .iter()
                .copied()
                .find(|&m| m > c)
                .or(remote.first().copied()),
        };
        out.extend(far.map(|m| (c, m)));
    }
    out.sort_by_key(|&(c, m)| {
        (
            cpu.iter().position(|&x| x == c),
            mem.iter().position(|&x| x == m),
        )
    });
    out
}
