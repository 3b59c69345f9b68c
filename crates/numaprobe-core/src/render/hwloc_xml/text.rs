//! hwloc's text forms: a set of CPUs or nodes as hwloc's bitmap, and a
//! value made safe for an XML attribute.

use std::collections::BTreeSet;

/// CPUs or NUMA nodes by OS index.
pub(super) type Set = BTreeSet<u32>;

/// hwloc's bitmap text: 32-bit words in hex, most significant first
/// (`0x00000001,0x00000000` is CPU 32; the empty set is `0x0`).
pub fn bitmap(set: &Set) -> String {
    let Some(&max) = set.iter().next_back() else {
        return "0x0".to_string();
    };
    let words = max / 32 + 1;
    let mut w = vec![0u32; words as usize];
    for &b in set {
        w[(b / 32) as usize] |= 1 << (b % 32);
    }
    w.iter()
        .rev()
        .map(|x| format!("0x{x:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Text for an XML attribute value: the report page's escaping (`& < > " '`
/// replaced, control characters dropped), one escaper for all of numaprobe's XML.
pub(super) fn attr(s: &str) -> String {
    crate::render::html::escape(s)
}
