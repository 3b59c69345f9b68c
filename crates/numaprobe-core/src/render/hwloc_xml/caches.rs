//! The CPU caches numaprobe read from sysfs (`cpuN/cache/indexK`) as
//! hwloc cache objects in the tree: each instance placed above the objects
//! it covers (an L3 above its package's cores, an L2 above one core, the
//! L1d above the L1i, as hwloc nests them), so that `hwloc-calc
//! --number-of l3cache all` with `HWLOC_XMLFILE` counts what the machine
//! has.

use super::text::Set;
use super::tree::Obj;
use crate::topology::Cache;

/// hwloc's type name and `cache_type` (0 unified, 1 data, 2 instruction)
/// of a cache; None for a level or kind hwloc has no type for.
fn hwloc_type(c: &Cache) -> Option<(&'static str, u8)> {
    let (names, t): (&[&'static str], u8) = match c.kind.as_str() {
        "Unified" => (&["L1Cache", "L2Cache", "L3Cache", "L4Cache", "L5Cache"], 0),
        "Data" => (&["L1Cache", "L2Cache", "L3Cache", "L4Cache", "L5Cache"], 1),
        "Instruction" => (&["L1iCache", "L2iCache", "L3iCache"], 2),
        _ => return None,
    };
    let name = names.get(usize::try_from(c.level).ok()?.checked_sub(1)?)?;
    Some((name, t))
}

/// Put every cache instance of `caches` into `machine`. An instance that
/// does not nest (its CPUs split objects already in the tree) or that
/// hwloc has no type for is left out and named in `notes`.
pub(super) fn insert(machine: &mut Obj, caches: &[Cache], notes: &mut Vec<String>) {
    let online = machine.cpuset.clone();
    let mut todo: Vec<(&Cache, Set, &'static str, u8)> = Vec::new();
    for c in caches {
        let cpus: Set = c
            .cpus
            .iter()
            .copied()
            .filter(|x| online.contains(x))
            .collect();
        if cpus.is_empty() {
            continue;
        }
        let Some((name, t)) = hwloc_type(c) else {
            notes.push(format!(
                "a level {} {} cache is left out: hwloc has no type for it",
                c.level, c.kind
            ));
            continue;
        };
        if todo.iter().any(|(_, s, n, _)| *n == name && *s == cpus) {
            continue;
        }
        todo.push((c, cpus, name, t));
    }
    // Outer first: higher levels, then unified and data before instruction
    // (hwloc puts the L1d above the L1i).
    todo.sort_by_key(|(c, s, _, t)| (std::cmp::Reverse(c.level), *t, s.first().copied()));
    for (c, cpus, name, t) in todo {
        let mut o = Obj::new(name, None, cpus);
        o.attrs = vec![
            ("cache_size", c.size_bytes.unwrap_or(0).to_string()),
            ("depth", c.level.to_string()),
            ("cache_linesize", c.line_size.unwrap_or(0).to_string()),
            ("cache_associativity", "0".to_string()),
            ("cache_type", t.to_string()),
        ];
        if let Err(o) = place(machine, o) {
            notes.push(format!(
                "an {} of CPUs {} is left out: it does not nest in the tree",
                o.kind,
                crate::units::format_list(&o.cpuset.iter().copied().collect::<Vec<_>>())
            ));
        }
    }
}

/// Put `cache` below the deepest object that holds its CPUs, above the
/// children it covers; Err when those children do not make up its CPUs.
fn place(at: &mut Obj, cache: Obj) -> Result<(), Box<Obj>> {
    if let Some(i) = at.children.iter().position(|c| {
        cache.cpuset.is_subset(&c.cpuset)
            && (c.cpuset != cache.cpuset || !matches!(c.kind, "Core" | "PU"))
    }) {
        return place(&mut at.children[i], cache);
    }
    let covered: Set = at
        .children
        .iter()
        .filter(|c| c.cpuset.is_subset(&cache.cpuset))
        .flat_map(|c| c.cpuset.iter().copied())
        .collect();
    if covered != cache.cpuset {
        return Err(Box::new(cache));
    }
    let mut cache = cache;
    let (inside, rest): (Vec<Obj>, Vec<Obj>) = std::mem::take(&mut at.children)
        .into_iter()
        .partition(|c| c.cpuset.is_subset(&cache.cpuset));
    // The cache takes the children's place, in order of their first CPU.
    let first = inside.first().and_then(|c| c.cpuset.first().copied());
    cache.children = inside;
    at.children = rest;
    let pos = at
        .children
        .iter()
        .position(|c| c.cpuset.first().copied() > first)
        .unwrap_or(at.children.len());
    at.children.insert(pos, cache);
    Ok(())
}
