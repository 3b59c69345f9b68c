//! SMBIOS memory devices (type 17): where they come from and what they say.
//! `raw` parses the binary structure table the kernel exports
//! (/sys/firmware/dmi/tables/DMI, root only), `dmidecode` parses the text of
//! `dmidecode -t 17` (for a machine where numaprobe cannot read the table,
//! or a copy taken elsewhere), and `slots` turns the devices into sockets,
//! channels, the theoretical DRAM peak and the findings. Reading never
//! fails: without a table the population says `unknown` and why.

pub mod dmidecode;
pub mod raw;
pub mod slots;

use crate::model::peak::{MemoryDevice, MemoryPopulation};
use std::path::Path;

/// Where the kernel exports the SMBIOS structure table.
pub const DMI_TABLE: &str = "/sys/firmware/dmi/tables/DMI";

/// The population from the kernel's table under `root` ("/" on the live
/// machine): `smbios`, or `unknown` with the reason.
pub fn read_system(root: &Path) -> MemoryPopulation {
    let path = root.join(DMI_TABLE.trim_start_matches('/'));
    match std::fs::read(&path) {
        Ok(bytes) => {
            let devices = raw::parse(&bytes);
            if devices.is_empty() {
                return unknown(format!(
                    "{} holds no memory device (SMBIOS type 17)",
                    path.display()
                ));
            }
            population("smbios", devices)
        }
        Err(e) => {
            let why = match e.kind() {
                std::io::ErrorKind::PermissionDenied => "needs root to read".to_string(),
                std::io::ErrorKind::NotFound => {
                    "does not exist (no SMBIOS from the firmware, e.g. a VM without it or a devicetree machine)".to_string()
                }
                _ => format!("could not be read ({e})"),
            };
            unknown(format!(
                "{} {why}; run as root or give `dmidecode -t 17` output with --dmidecode FILE",
                path.display()
            ))
        }
    }
}

/// The population from `dmidecode -t 17` text; `file` names it in errors.
pub fn from_dmidecode(text: &str, file: &str) -> Result<MemoryPopulation, String> {
    let devices = dmidecode::parse(text);
    if devices.is_empty() {
        return Err(format!(
            "{file}: no 'Memory Device' (DMI type 17) in it; give the output of `dmidecode -t 17` (or of `dmidecode`)"
        ));
    }
    Ok(population("dmidecode", devices))
}

/// Nothing known, and why.
pub fn unknown(why: String) -> MemoryPopulation {
    MemoryPopulation {
        source: "unknown".into(),
        unknown_because: Some(why),
        ..MemoryPopulation::default()
    }
}

/// Sockets, channels, peak and findings of `devices` read from `source`.
pub fn population(source: &str, devices: Vec<MemoryDevice>) -> MemoryPopulation {
    let mut devices = devices;
    slots::assign(&mut devices);
    let sockets = slots::sockets(&devices);
    let theoretical_gbs = slots::theoretical_gbs(&sockets);
    let findings = slots::findings(&devices, &sockets);
    MemoryPopulation {
        source: source.into(),
        unknown_because: None,
        devices,
        sockets,
        theoretical_gbs,
        findings,
    }
}

/// A peak document of the two-socket SMBIOS fixture's memory and nothing
/// measured, for tests that edit its counts (here, beside the reader of
/// that memory, which the document's model does not import).
#[cfg(test)]
pub(crate) fn fixture_peak() -> crate::model::peak::PeakResult {
    let text = include_str!("../../../../tests/fixtures/smbios/balanced-2s.txt");
    let memory = from_dmidecode(text, "balanced-2s").unwrap();
    crate::model::peak::PeakResult {
        schema: crate::SCHEMA.into(),
        system: Vec::new(),
        nodes: Vec::new(),
        memory,
        achieved_fraction: None,
        size_bytes: 0,
        pages: String::new(),
        vector: String::new(),
        timer: crate::timer::Timer::get().info(),
        notes: Vec::new(),
        complete: true,
        interrupted: false,
    }
}
