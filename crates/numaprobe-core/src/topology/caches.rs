//! CPU caches from `cpuN/cache/indexK`: one entry per cache *instance*.
//!
//! Every CPU lists every cache it uses, so a shared L3 appears once per CPU in
//! sysfs. As in hwloc, an instance is made by the lowest online CPU of its
//! shared set, from that CPU's own folder; a set whose lowest CPU does not
//! list it (edited or buggy sysfs) makes no instance, and a set that partially
//! overlaps an instance of the same level and type already made is dropped
//! with a warning. A cache whose level or type cannot be read is left out
//! with a warning: the rest of the machine's description does not depend on
//! it. An empty `size` means the size is unknown.

use super::cpulist::clean;
use super::fs::{Fs, TopologyError, CPU_DIR};
use super::Cache;
use std::collections::BTreeSet;

pub(crate) fn read_caches(
    fs: &Fs,
    online: &[u32],
    warnings: &mut Vec<String>,
) -> Result<Vec<Cache>, TopologyError> {
    let online_set: BTreeSet<u32> = online.iter().copied().collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let mut bad: Vec<String> = Vec::new();
    let mut conflicting: Vec<String> = Vec::new();
    for &c in online {
        let dir = format!("{CPU_DIR}/cpu{c}/cache");
        for idx in fs.numbered(&dir, "index") {
            let d = format!("{dir}/index{idx}");
            match read_one(fs, &d, c, &online_set)? {
                Some(cache) if cache.cpus.first() != Some(&c) => {}
                Some(cache) => {
                    let overlaps = out.iter().any(|o: &Cache| {
                        o.level == cache.level && o.kind == cache.kind && {
                            let inter = o.cpus.iter().filter(|x| cache.cpus.contains(x)).count();
                            inter > 0 && inter != o.cpus.len().min(cache.cpus.len())
                        }
                    });
                    if overlaps {
                        conflicting.push(fs.path(&d).display().to_string());
                        continue;
                    }
                    let key = (cache.level, cache.kind.clone(), cache.cpus.clone());
                    if seen.insert(key) {
                        out.push(cache);
                    }
                }
                None => bad.push(fs.path(&d).display().to_string()),
            }
        }
    }
    if let Some(first) = conflicting.first() {
        warnings.push(format!(
            "{first}: its CPUs partly overlap another cache of the same level and type; {} cache description(s) left out",
            conflicting.len()
        ));
    }
    if let Some(first) = bad.first() {
        warnings.push(format!(
            "{first}: unreadable level or type; {} cache description(s) left out",
            bad.len()
        ));
    }
    out.sort_by(|a, b| (a.level, &a.kind, a.cpus.first()).cmp(&(b.level, &b.kind, b.cpus.first())));
    Ok(out)
}

fn read_one(
    fs: &Fs,
    d: &str,
    cpu: u32,
    online: &BTreeSet<u32>,
) -> Result<Option<Cache>, TopologyError> {
    let text = |name: &str| -> Result<Option<String>, TopologyError> {
        Ok(fs
            .read_opt(&format!("{d}/{name}"))?
            .map(|s| clean(&s).to_string()))
    };
    let Some(level) = text("level")?.and_then(|s| s.parse::<u32>().ok()) else {
        return Ok(None);
    };
    let kind = match text("type")?.as_deref() {
        Some("Data") => "Data",
        Some("Instruction") => "Instruction",
        Some("Unified") => "Unified",
        _ => return Ok(None),
    };
    let size_bytes = match text("size")? {
        Some(s) if s.is_empty() => {
            fs.note(&format!("{d}/size"), "the cache size is unknown");
            None
        }
        s => s.and_then(|s| parse_size(&s)),
    };
    let line_size = text("coherency_line_size")?.and_then(|s| s.parse::<u32>().ok());
    // The shared set may name offline CPUs; the model only speaks of online
    // ones. A missing or unreadable set means the CPU uses it alone. The mask
    // comes first, as hwloc reads it: the kernel writes both from one set,
    // and where edited dumps disagree, the mask is what was meant.
    let shared = match fs.mask_opt(&format!("{d}/shared_cpu_map")) {
        Ok(Some(m)) => Some(m),
        _ => fs.list_opt(&format!("{d}/shared_cpu_list")).ok().flatten(),
    };
    let mut cpus: Vec<u32> = shared
        .unwrap_or_default()
        .into_iter()
        .filter(|c| online.contains(c))
        .collect();
    if cpus.is_empty() {
        // An empty set (ia64 does this for some caches): the CPU's own.
        cpus.push(cpu);
    }
    Ok(Some(Cache {
        level,
        kind: kind.to_string(),
        size_bytes,
        line_size,
        cpus,
    }))
}

/// `32K`, `8192K`, `1M`, `512` (bytes) as the kernel writes cache sizes.
pub(crate) fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_in_kernel_units() {
        assert_eq!(parse_size("32K"), Some(32768));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("big"), None);
        assert_eq!(parse_size(""), None);
    }
}
