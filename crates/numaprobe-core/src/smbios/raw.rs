//! The binary SMBIOS structure table (as /sys/firmware/dmi/tables/DMI holds
//! it, without the entry point): type 17 memory devices. Layout from the
//! DMTF SMBIOS specification (DSP0134): each structure is a header (type,
//! length, handle), `length` bytes of fields, then its strings, each
//! NUL-terminated, the set ended by one more NUL. A field past a structure's
//! `length` belongs to a later version of the spec and is absent. A
//! truncated or damaged table yields the devices read before the damage.

use crate::model::peak::MemoryDevice;

/// One structure: its type, formatted area and strings.
struct Structure<'a> {
    kind: u8,
    data: &'a [u8],
    strings: Vec<String>,
}

impl Structure<'_> {
    fn byte(&self, off: usize) -> Option<u8> {
        self.data.get(off).copied()
    }
    fn word(&self, off: usize) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte(off)?, self.byte(off + 1)?]))
    }
    fn dword(&self, off: usize) -> Option<u32> {
        let b = self.data.get(off..off + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// String field: 1-based index into the strings, 0 = none.
    fn string(&self, off: usize) -> String {
        match self.byte(off) {
            Some(i) if i > 0 => self
                .strings
                .get(i as usize - 1)
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// Every structure of the table, in order, up to the end-of-table (127).
fn structures(table: &[u8]) -> Vec<Structure<'_>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 4 <= table.len() {
        let kind = table[at];
        let len = table[at + 1] as usize;
        if len < 4 || at + len > table.len() {
            break;
        }
        let data = &table[at..at + len];
        // The string set: up to the first double NUL after the fields.
        let mut p = at + len;
        let mut strings = Vec::new();
        let mut ended = false;
        while p < table.len() {
            let end = match table[p..].iter().position(|&b| b == 0) {
                Some(e) => p + e,
                None => break,
            };
            if end == p {
                // An empty string ends the set (also a set with no strings:
                // two NULs, the first one read here).
                p += 1;
                if strings.is_empty() && p < table.len() && table[p] == 0 {
                    p += 1;
                }
                ended = true;
                break;
            }
            strings.push(String::from_utf8_lossy(&table[p..end]).into_owned());
            p = end + 1;
        }
        if !ended {
            break;
        }
        out.push(Structure {
            kind,
            data,
            strings,
        });
        if kind == 127 {
            break;
        }
        at = p;
    }
    out
}

/// The memory type byte (SMBIOS 7.18.2) as dmidecode names it.
pub fn memory_type(b: u8) -> &'static str {
    match b {
        0x01 => "Other",
        0x03 => "DRAM",
        0x07 => "RAM",
        0x0F => "SDRAM",
        0x12 => "DDR",
        0x13 => "DDR2",
        0x18 => "DDR3",
        0x1A => "DDR4",
        0x1B => "LPDDR",
        0x1C => "LPDDR2",
        0x1D => "LPDDR3",
        0x1E => "LPDDR4",
        0x1F => "Logical non-volatile device",
        0x20 => "HBM",
        0x21 => "HBM2",
        0x22 => "DDR5",
        0x23 => "LPDDR5",
        0x24 => "HBM3",
        _ => "Unknown",
    }
}

/// A speed word: 0 unknown, 0xFFFF "see the extended field".
fn speed(word: Option<u16>, extended: Option<u32>) -> Option<u32> {
    match word? {
        0 => None,
        0xFFFF => extended.map(|e| e & 0x7FFF_FFFF).filter(|&e| e > 0),
        w => Some(u32::from(w)),
    }
}

/// One type 17 structure as a device.
fn device(s: &Structure) -> MemoryDevice {
    // Size (0x0C): 0 = empty slot, 0xFFFF unknown, 0x7FFF = see the
    // extended size (0x1C, MiB in bits 30:0); bit 15 set = KiB, else MiB.
    let size_bytes = match s.word(0x0C) {
        None | Some(0) | Some(0xFFFF) => 0,
        Some(0x7FFF) => s
            .dword(0x1C)
            .map(|e| u64::from(e & 0x7FFF_FFFF) << 20)
            .unwrap_or(0),
        Some(w) if w & 0x8000 != 0 => u64::from(w & 0x7FFF) << 10,
        Some(w) => u64::from(w) << 20,
    };
    let data_width_bits = s
        .word(0x0A)
        .filter(|&w| w != 0 && w != 0xFFFF)
        .map(u32::from);
    let filled = size_bytes > 0;
    MemoryDevice {
        locator: s.string(0x10),
        bank: s.string(0x11),
        size_bytes,
        kind: s.byte(0x12).map(memory_type).unwrap_or("Unknown").into(),
        speed_mts: speed(s.word(0x15), s.dword(0x54)).filter(|_| filled),
        configured_mts: speed(s.word(0x20), s.dword(0x58)).filter(|_| filled),
        data_width_bits,
        manufacturer: s.string(0x17),
        part: s.string(0x1A),
        socket: None,
        channel: None,
    }
}

/// Every memory device (type 17) of a structure table.
pub fn parse(table: &[u8]) -> Vec<MemoryDevice> {
    structures(table)
        .iter()
        .filter(|s| s.kind == 17)
        .map(device)
        .collect()
}
