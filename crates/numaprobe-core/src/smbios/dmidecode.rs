//! The text of `dmidecode -t 17` (or of a whole `dmidecode`): each
//! "Memory Device" block as a device. dmidecode's wording changed over the
//! versions ("Configured Clock Speed" in MHz before 3.0, "Configured Memory
//! Speed" in MT/s after; "Speed: 2400 MHz" on old versions meant MT/s), so
//! both are read. An empty slot says "Size: No Module Installed".

use crate::model::peak::MemoryDevice;

/// `32 GB`, `16384 MB`, `512 kB`, `1 TB` in bytes; None for anything else
/// (No Module Installed, Unknown).
fn size(v: &str) -> Option<u64> {
    let mut it = v.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    let shift = match it.next()?.to_ascii_lowercase().as_str() {
        "bytes" => 0,
        "kb" => 10,
        "mb" => 20,
        "gb" => 30,
        "tb" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// `3200 MT/s` or `3200 MHz` (dmidecode before 3.0 printed MT/s as MHz);
/// None for Unknown and 0.
fn speed(v: &str) -> Option<u32> {
    let n: u32 = v.split_whitespace().next()?.parse().ok()?;
    (n > 0).then_some(n)
}

/// `64 bits`.
fn bits(v: &str) -> Option<u32> {
    let n: u32 = v.split_whitespace().next()?.parse().ok()?;
    (n > 0).then_some(n)
}

/// A string field; dmidecode's placeholders for "nothing" read as empty.
fn text(v: &str) -> String {
    let v = v.trim();
    match v {
        "Not Specified" | "Unknown" | "NO DIMM" | "None" | "Not Provided" => String::new(),
        _ => v.to_string(),
    }
}

/// Every "Memory Device" block of the text.
pub fn parse(input: &str) -> Vec<MemoryDevice> {
    let mut out = Vec::new();
    let mut cur: Option<MemoryDevice> = None;
    for line in input.lines() {
        let t = line.trim();
        // A block starts with its title line (not indented) and ends at the
        // next handle or title.
        if !line.starts_with(char::is_whitespace) {
            if let Some(d) = cur.take() {
                out.push(d);
            }
            if t == "Memory Device" {
                cur = Some(MemoryDevice::default());
            }
            continue;
        }
        let Some(d) = cur.as_mut() else { continue };
        let Some((key, value)) = t.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "Size" => d.size_bytes = size(value).unwrap_or(0),
            "Data Width" => d.data_width_bits = bits(value),
            "Locator" => d.locator = text(value),
            "Bank Locator" => d.bank = text(value),
            "Type" => {
                d.kind = if value.is_empty() {
                    "Unknown".into()
                } else {
                    value.into()
                }
            }
            "Speed" => d.speed_mts = speed(value),
            "Configured Memory Speed"
            | "Configured Clock Speed"
            | "Configured Memory Clock Speed" => d.configured_mts = speed(value),
            "Manufacturer" => d.manufacturer = text(value),
            "Part Number" => d.part = text(value),
            _ => {}
        }
    }
    if let Some(d) = cur.take() {
        out.push(d);
    }
    // An empty slot has no speed whatever the firmware wrote.
    for d in &mut out {
        if d.size_bytes == 0 {
            d.speed_mts = None;
            d.configured_mts = None;
        }
    }
    out
}
