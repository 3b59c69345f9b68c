//! From memory devices to sockets and channels, the theoretical DRAM peak
//! and the findings.
//!
//! SMBIOS has no socket or channel field: both are read from the slot's
//! names, which each board vendor writes its own way. The heuristics, in
//! order (locator first, then bank locator; upper or lower case):
//!
//! - socket: `CPU<n>`/`CPU_<n>`, `PROC <n>`/`PROCESSOR <n>`, `SOCKET <n>`,
//!   a word `P<n>` (`P0_DIMM_A1`, `P1-DIMMA1`, AMD's bank `P0 CHANNEL A`),
//!   `NODE<n>`; failing all, Dell's `A1`/`B1` (the letter is the socket).
//!   Vendors number from 0 or from 1 (Supermicro's `P1-` is the first
//!   socket), so the numbers found are ranked: the lowest is socket 0.
//!   A device without any of these has no socket (the machine is treated as
//!   one group, so a single-socket desktop still gets its channels).
//! - channel: `CHANNEL<x>`/`Channel <x>` in the bank or locator (`0`, `A`;
//!   with `NODE<n>` before it, `n/x`), else the letter after `DIMM`
//!   (`DIMM_A1`, `DIMMB2`: channel A, B). Two DIMMs on one channel share
//!   its bandwidth and count once. A slot whose channel cannot be read
//!   counts as its own channel (so the peak is an upper bound there).
//!
//! Theoretical peak = Σ over populated channels of the slowest configured
//! speed on the channel (MT/s; the rated speed when no configured one is
//! given) x the data width (bits / 8; 64 assumed and said when unknown).

use crate::model::peak::{MemoryDevice, SocketPopulation};
use crate::units::format_size;
use std::collections::{BTreeMap, BTreeSet};

/// Upper-cased words of a name: split at anything not a letter or digit.
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_uppercase())
        .collect()
}

/// The number after `prefix` in the words: `CPU1` or `CPU 1`.
fn numbered(ws: &[String], prefix: &str) -> Option<u32> {
    for (i, w) in ws.iter().enumerate() {
        if let Some(rest) = w.strip_prefix(prefix) {
            if !rest.is_empty() {
                if let Ok(n) = rest.parse() {
                    return Some(n);
                }
                continue;
            }
            if let Some(n) = ws.get(i + 1).and_then(|n| n.parse().ok()) {
                return Some(n);
            }
        }
    }
    None
}

/// The socket number a name gives, before ranking.
fn raw_socket(name: &str) -> Option<u32> {
    let ws = words(name);
    for prefix in ["CPU", "PROCESSOR", "PROC", "SOCKET"] {
        if let Some(n) = numbered(&ws, prefix) {
            return Some(n);
        }
    }
    // A whole word P<n> (not PROC..., which parsed above or is no number).
    for w in &ws {
        if let Some(rest) = w.strip_prefix('P') {
            if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                return rest.parse().ok();
            }
        }
    }
    numbered(&ws, "NODE")
}

/// Dell's `A1` .. `B12`: the letter is the socket.
fn dell_socket(locator: &str) -> Option<u32> {
    let l = locator.trim().to_ascii_uppercase();
    let mut chars = l.chars();
    let first = chars.next()?;
    let rest: String = chars.collect();
    (first.is_ascii_uppercase() && !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| u32::from(first as u8 - b'A'))
}

/// The channel a name gives.
fn channel_of(name: &str) -> Option<String> {
    let ws = words(name);
    let node = numbered(&ws, "NODE");
    for (i, w) in ws.iter().enumerate() {
        if let Some(rest) = w.strip_prefix("CHANNEL") {
            let id = if rest.is_empty() {
                ws.get(i + 1).cloned()?
            } else {
                // `CHANNELA` in `ChannelA-DIMM0`.
                rest.to_string()
            };
            return Some(match node {
                Some(n) => format!("{n}/{id}"),
                None => id,
            });
        }
    }
    // The letter after DIMM: DIMM_A1, DIMMA1, DIMM A1, P1-DIMMB2.
    for (i, w) in ws.iter().enumerate() {
        if let Some(rest) = w.strip_prefix("DIMM") {
            let tail = if rest.is_empty() {
                ws.get(i + 1).map(String::as_str).unwrap_or("")
            } else {
                rest
            };
            let mut c = tail.chars();
            if let Some(l) = c.next().filter(char::is_ascii_uppercase) {
                if c.as_str().bytes().all(|b| b.is_ascii_digit()) {
                    return Some(l.to_string());
                }
            }
        }
    }
    None
}

/// Fill each device's socket and channel from its names (see the module
/// comment). Sockets are ranked over all devices, empty slots included, so
/// a socket without memory still has its number.
pub fn assign(devices: &mut [MemoryDevice]) {
    let raw: Vec<Option<u32>> = devices
        .iter()
        .map(|d| raw_socket(&d.locator).or_else(|| raw_socket(&d.bank)))
        .collect();
    let raw = if raw.iter().all(Option::is_none) {
        devices.iter().map(|d| dell_socket(&d.locator)).collect()
    } else {
        raw
    };
    let ranks: Vec<u32> = raw
        .iter()
        .flatten()
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for (d, r) in devices.iter_mut().zip(&raw) {
        // `ranks` is sorted and distinct: a binary search keeps a table of
        // many slots linear in them.
        d.socket = r.and_then(|r| ranks.binary_search(&r).ok().map(|p| p as u32));
        d.channel = channel_of(&d.bank).or_else(|| channel_of(&d.locator));
    }
}

/// A populated device.
pub fn populated(d: &MemoryDevice) -> bool {
    d.size_bytes > 0
}

/// The speed a device runs at: configured, else rated.
fn running_mts(d: &MemoryDevice) -> Option<u32> {
    d.configured_mts.or(d.speed_mts)
}

/// Each socket's slots, channels and peak, sockets in order (the group of
/// unknown socket last).
pub fn sockets(devices: &[MemoryDevice]) -> Vec<SocketPopulation> {
    let mut groups: BTreeMap<(bool, u32), Vec<(usize, &MemoryDevice)>> = BTreeMap::new();
    for (i, d) in devices.iter().enumerate() {
        let key = (d.socket.is_none(), d.socket.unwrap_or(0));
        groups.entry(key).or_default().push((i, d));
    }
    groups
        .into_values()
        .map(|devs| {
            // Channel -> its devices; a slot without channel is its own.
            let mut channels: BTreeMap<String, Vec<&MemoryDevice>> = BTreeMap::new();
            for &(i, d) in &devs {
                let key = match &d.channel {
                    Some(c) => format!("c:{c}"),
                    None => format!("slot:{i}"),
                };
                channels.entry(key).or_default().push(d);
            }
            let mut peak = Some(0.0);
            let mut populated_channels = 0;
            for devs in channels.values() {
                let filled: Vec<_> = devs.iter().filter(|d| populated(d)).collect();
                if filled.is_empty() {
                    continue;
                }
                populated_channels += 1;
                let mts = filled.iter().map(|d| running_mts(d)).min().flatten();
                let width = filled
                    .iter()
                    .filter_map(|d| d.data_width_bits)
                    .max()
                    .unwrap_or(64);
                peak = match (peak, mts) {
                    (Some(p), Some(m)) => Some(p + f64::from(m) * f64::from(width) / 8.0 / 1000.0),
                    _ => None,
                };
            }
            let filled: Vec<_> = devs.iter().filter(|(_, d)| populated(d)).collect();
            SocketPopulation {
                socket: devs[0].1.socket,
                slots: devs.len(),
                populated_slots: filled.len(),
                channels: channels.len(),
                populated_channels,
                // Saturating: the sizes come from the firmware's table.
                bytes: filled
                    .iter()
                    .fold(0u64, |sum, (_, d)| sum.saturating_add(d.size_bytes)),
                theoretical_gbs: peak.filter(|_| populated_channels > 0),
            }
        })
        .collect()
}

/// The whole machine's theoretical peak: the sum over sockets, None when a
/// populated socket's is unknown or nothing is populated.
pub fn theoretical_gbs(sockets: &[SocketPopulation]) -> Option<f64> {
    let mut total = 0.0;
    let mut any = false;
    for s in sockets.iter().filter(|s| s.populated_slots > 0) {
        total += s.theoretical_gbs?;
        any = true;
    }
    any.then_some(total)
}

fn socket_name(s: Option<u32>) -> String {
    match s {
        Some(n) => format!("socket {n}"),
        None => "slots of unknown socket".into(),
    }
}

/// `4 x 32 GiB, 2 x 16 GiB` of a value per populated device.
fn tally<T: Ord + Clone>(values: &[T], show: impl Fn(&T) -> String) -> String {
    let mut count: BTreeMap<T, usize> = BTreeMap::new();
    for v in values {
        *count.entry(v.clone()).or_default() += 1;
    }
    count
        .iter()
        .rev()
        .map(|(v, n)| format!("{n} x {}", show(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a reader should know about the population.
pub fn findings(devices: &[MemoryDevice], sockets: &[SocketPopulation]) -> Vec<String> {
    let mut out = Vec::new();
    let known: Vec<&SocketPopulation> = sockets.iter().filter(|s| s.socket.is_some()).collect();
    if let Some(best) = known.iter().map(|s| s.populated_channels).max() {
        for s in known.iter().filter(|s| s.populated_channels < best) {
            let name = socket_name(s.socket);
            if s.populated_channels == 0 {
                out.push(format!(
                    "{name} has no memory: its CPUs reach every byte through the interconnect, and the other sockets' channels carry its traffic"
                ));
            } else {
                out.push(format!(
                    "{name} has {} populated memory channel{}, another socket has {best}: memory on {name} gives about {:.0} % of the bandwidth, and threads placed there are limited by it",
                    s.populated_channels,
                    if s.populated_channels == 1 { "" } else { "s" },
                    s.populated_channels as f64 / best as f64 * 100.0
                ));
            }
        }
    }
    // Whether every slot of a socket names its channel, in one pass over
    // the slots (not one pass per socket).
    let mut unnamed: BTreeSet<Option<u32>> = BTreeSet::new();
    for d in devices.iter().filter(|d| d.channel.is_none()) {
        unnamed.insert(d.socket);
    }
    for s in sockets {
        let named = !unnamed.contains(&s.socket);
        if named && s.populated_channels > 0 && s.populated_channels < s.channels {
            out.push(format!(
                "{}: {} of {} memory channels populated; every empty channel is bandwidth the socket does not have (one DIMM per channel in every channel gives the most)",
                socket_name(s.socket),
                s.populated_channels,
                s.channels
            ));
        }
    }
    let filled: Vec<&MemoryDevice> = devices.iter().filter(|d| populated(d)).collect();
    let sizes: Vec<u64> = filled.iter().map(|d| d.size_bytes).collect();
    if sizes.iter().collect::<BTreeSet<_>>().len() > 1 {
        out.push(format!(
            "mixed DIMM sizes ({}): channels end up with different capacities, so the part of memory beyond the smallest interleaves over fewer channels",
            tally(&sizes, |&b| format_size(b))
        ));
    }
    let rated: Vec<u32> = filled.iter().filter_map(|d| d.speed_mts).collect();
    if rated.iter().collect::<BTreeSet<_>>().len() > 1 {
        out.push(format!(
            "mixed rated speeds ({}): a channel runs at its slowest DIMM's speed",
            tally(&rated, |v| format!("{v} MT/s"))
        ));
    }
    let parts: Vec<String> = filled
        .iter()
        .filter(|d| !d.part.is_empty())
        .map(|d| format!("{} {}", d.manufacturer, d.part).trim().to_string())
        .collect();
    if parts.iter().collect::<BTreeSet<_>>().len() > 1 {
        out.push(format!(
            "mixed DIMM parts ({}): timings and ranks may differ between channels",
            tally(&parts, |p| p.clone())
        ));
    }
    let slow: Vec<String> = filled
        .iter()
        .filter_map(|d| match (d.configured_mts, d.speed_mts) {
            (Some(c), Some(r)) if c < r => Some(format!("{} at {c} of {r} MT/s", d.locator)),
            _ => None,
        })
        .collect();
    if !slow.is_empty() {
        let list = if slow.len() > 4 {
            format!("{}, ... ({} in all)", slow[..4].join(", "), slow.len())
        } else {
            slow.join(", ")
        };
        out.push(format!(
            "{} DIMM{} below {} rated speed ({list}): the CPU, the board or two DIMMs per channel limit it; the theoretical peak uses the configured speed",
            slow.len(),
            if slow.len() == 1 { " runs" } else { "s run" },
            if slow.len() == 1 { "its" } else { "their" }
        ));
    }
    let no_width: Vec<&str> = filled
        .iter()
        .filter(|d| d.data_width_bits.is_none())
        .map(|d| d.locator.as_str())
        .collect();
    if !no_width.is_empty() {
        out.push(format!(
            "{} populated device(s) give no data width; 64 bits assumed for the theoretical peak",
            no_width.len()
        ));
    }
    out
}
