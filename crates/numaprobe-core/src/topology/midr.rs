//! Arm CPU identification: the Main ID Register (MIDR_EL1) as a name.
//!
//! arm64's `/proc/cpuinfo` has no `model name`; it has the MIDR's fields
//! (`CPU implementer`, `CPU variant`, `CPU part`, `CPU revision`) per
//! processor, and sysfs has the raw register in
//! `cpuN/regs/identification/midr_el1`. The implementer and part number name
//! the core design; the same design ships in several products (Neoverse-N1 in
//! AWS Graviton2 and Ampere Altra), which the register cannot tell apart, so
//! [`Midr::products`] lists the known ones as a hint, never as a claim.

use serde::{Deserialize, Serialize};

/// The fields of one MIDR_EL1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Midr {
    pub implementer: u8,
    pub variant: u8,
    pub architecture: u8,
    pub part: u16,
    pub revision: u8,
}

impl Midr {
    /// From the raw register (bits 31:24 implementer, 23:20 variant, 19:16
    /// architecture, 15:4 part, 3:0 revision).
    pub fn from_raw(v: u64) -> Midr {
        Midr {
            implementer: (v >> 24) as u8,
            variant: ((v >> 20) & 0xf) as u8,
            architecture: ((v >> 16) & 0xf) as u8,
            part: ((v >> 4) & 0xfff) as u16,
            revision: (v & 0xf) as u8,
        }
    }

    pub fn raw(&self) -> u64 {
        (u64::from(self.implementer) << 24)
            | (u64::from(self.variant) << 20)
            | (u64::from(self.architecture) << 16)
            | (u64::from(self.part) << 4)
            | u64::from(self.revision)
    }

    /// `0x413fd0c1` style, as the kernel's sysfs file shows it.
    pub fn hex(&self) -> String {
        format!("0x{:08x}", self.raw())
    }

    pub fn vendor(&self) -> Option<&'static str> {
        Some(match self.implementer {
            0x41 => "ARM",
            0x42 => "Broadcom",
            0x43 => "Cavium",
            0x46 => "Fujitsu",
            0x48 => "HiSilicon",
            0x4e => "NVIDIA",
            0x50 => "APM",
            0x51 => "Qualcomm",
            0x61 => "Apple",
            0x6d => "Microsoft",
            0xc0 => "Ampere",
            _ => return None,
        })
    }

    /// The core design, when known.
    pub fn core(&self) -> Option<&'static str> {
        Some(match (self.implementer, self.part) {
            (0x41, 0xd03) => "Cortex-A53",
            (0x41, 0xd04) => "Cortex-A35",
            (0x41, 0xd05) => "Cortex-A55",
            (0x41, 0xd07) => "Cortex-A57",
            (0x41, 0xd08) => "Cortex-A72",
            (0x41, 0xd09) => "Cortex-A73",
            (0x41, 0xd0a) => "Cortex-A75",
            (0x41, 0xd0b) => "Cortex-A76",
            (0x41, 0xd0c) => "Neoverse-N1",
            (0x41, 0xd0d) => "Cortex-A77",
            (0x41, 0xd40) => "Neoverse-V1",
            (0x41, 0xd41) => "Cortex-A78",
            (0x41, 0xd44) => "Cortex-X1",
            (0x41, 0xd46) => "Cortex-A510",
            (0x41, 0xd47) => "Cortex-A710",
            (0x41, 0xd48) => "Cortex-X2",
            (0x41, 0xd49) => "Neoverse-N2",
            (0x41, 0xd4a) => "Neoverse-E1",
            (0x41, 0xd4f) => "Neoverse-V2",
            (0x41, 0xd80) => "Cortex-A520",
            (0x41, 0xd81) => "Cortex-A720",
            (0x41, 0xd82) => "Cortex-X4",
            (0x41, 0xd84) => "Neoverse-V3",
            (0x41, 0xd8e) => "Neoverse-N3",
            (0x43, 0x0a1) => "ThunderX",
            (0x43, 0x0af) => "ThunderX2",
            (0x46, 0x001) => "A64FX",
            (0x48, 0xd01) => "Kunpeng-920 (TSV110)",
            (0x4e, 0x004) => "Carmel",
            (0x50, 0x000) => "X-Gene",
            (0x51, 0x800) | (0x51, 0x801) => "Kryo",
            (0xc0, 0xac3) => "Ampere-1",
            (0xc0, 0xac4) => "Ampere-1a",
            (0xc0, 0xac5) => "Ampere-1b",
            _ => return None,
        })
    }

    /// Products known to be built from this core, as a hint for a reader
    /// (the register cannot say which of them this is).
    pub fn products(&self) -> &'static [&'static str] {
        match (self.implementer, self.part) {
            (0x41, 0xd08) => &["AWS Graviton (A1)", "Raspberry Pi 4"],
            (0x41, 0xd0c) => &["AWS Graviton2", "Ampere Altra"],
            (0x41, 0xd40) => &["AWS Graviton3"],
            (0x41, 0xd4f) => &["AWS Graviton4", "NVIDIA Grace", "Google Axion"],
            (0x41, 0xd49) => &["Microsoft Cobalt 100", "Alibaba Yitian 710"],
            (0x46, 0x001) => &["Fujitsu A64FX (Fugaku)"],
            (0x48, 0xd01) => &["HiSilicon Kunpeng 920"],
            (0xc0, 0xac3) | (0xc0, 0xac4) | (0xc0, 0xac5) => &["AmpereOne"],
            _ => &[],
        }
    }

    /// `ARM Neoverse-N1`; an unknown part keeps its number
    /// (`ARM part 0xd99`), an unknown implementer both numbers.
    pub fn name(&self) -> String {
        match (self.vendor(), self.core()) {
            (Some(v), Some(c)) => format!("{v} {c}"),
            (Some(v), None) => format!("{v} part 0x{:03x}", self.part),
            (None, _) => format!(
                "CPU implementer 0x{:02x} part 0x{:03x}",
                self.implementer, self.part
            ),
        }
    }
}

/// One MIDR per processor block of `/proc/cpuinfo` text, in order; blocks
/// without `CPU implementer` and `CPU part` (x86, POWER), or with a figure
/// wider than its field of the register, give none.
pub fn midrs_from_cpuinfo(text: &str) -> Vec<Midr> {
    let num = |v: &str| {
        let v = v.trim();
        match v.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => v.parse::<u32>().ok(),
        }
    };
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut f = [None::<u32>; 5];
        for line in block.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let i = match k.trim() {
                "CPU implementer" => 0,
                "CPU variant" => 1,
                "CPU architecture" => 2,
                "CPU part" => 3,
                "CPU revision" => 4,
                _ => continue,
            };
            f[i] = num(v);
        }
        // A figure wider than its field of the register is no MIDR: cut to
        // the field, `0x141` would read as Arm's `0x41`.
        let field = |v: Option<u32>, max: u32| v.filter(|&v| v <= max);
        let known = (
            field(f[0], 0xff),
            field(f[1].or(Some(0)), 0xf),
            field(f[3], 0xfff),
            field(f[4].or(Some(0)), 0xf),
        );
        if let (Some(imp), Some(variant), Some(part), Some(revision)) = known {
            out.push(Midr {
                implementer: imp as u8,
                variant: variant as u8,
                // cpuinfo says "8" for every ARMv8+ core; the register's
                // field is 0xf ("see the ID registers") on all of them.
                architecture: 0xf,
                part: part as u16,
                revision: revision as u8,
            });
        }
    }
    out
}

/// The distinct core names of a machine, in order of first appearance,
/// joined by ` / ` (big.LITTLE and other mixed machines say so).
pub fn names_of(midrs: &[Midr]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for m in midrs {
        let n = m.name();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    (!names.is_empty()).then(|| names.join(" / "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A processor block of a real AWS Graviton2 (c6g) /proc/cpuinfo.
    const GRAVITON2: &str = "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\nprocessor\t: 1\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n";

    /// Fujitsu A64FX (Fugaku / Ookami nodes).
    const A64FX: &str = "processor\t: 0\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm fcma dcpop sve\nCPU implementer\t: 0x46\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0x001\nCPU revision\t: 0\n";

    /// A Raspberry Pi 4 (Cortex-A72, no LSE atomics).
    const PI4: &str = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\nHardware\t: BCM2835\nRevision\t: c03111\nModel\t\t: Raspberry Pi 4 Model B Rev 1.1\n";

    /// A big.LITTLE phone-class SoC: two kinds of cores.
    const MIXED: &str = "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd05\nCPU revision\t: 0\n\nprocessor\t: 4\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0b\nCPU revision\t: 0\n\nprocessor\t: 5\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0b\nCPU revision\t: 0\n";

    #[test]
    fn names_from_real_cpuinfo() {
        let g = midrs_from_cpuinfo(GRAVITON2);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].name(), "ARM Neoverse-N1");
        assert_eq!(g[0].hex(), "0x413fd0c1");
        assert!(g[0].products().contains(&"AWS Graviton2"));
        assert_eq!(names_of(&g).as_deref(), Some("ARM Neoverse-N1"));
        assert_eq!(
            names_of(&midrs_from_cpuinfo(A64FX)).as_deref(),
            Some("Fujitsu A64FX")
        );
        assert_eq!(
            names_of(&midrs_from_cpuinfo(PI4)).as_deref(),
            Some("ARM Cortex-A72")
        );
        assert_eq!(
            names_of(&midrs_from_cpuinfo(MIXED)).as_deref(),
            Some("ARM Cortex-A55 / ARM Cortex-A76")
        );
    }

    #[test]
    fn raw_register_round_trips_and_names_servers() {
        // midr_el1 values as sysfs shows them.
        for (raw, name) in [
            (0x413f_d0c1u64, "ARM Neoverse-N1"),
            (0x411f_d402, "ARM Neoverse-V1"),
            (0x410f_d4f0, "ARM Neoverse-V2"),
            (0x481f_d010, "HiSilicon Kunpeng-920 (TSV110)"),
            (0xc00f_ac30, "Ampere Ampere-1"),
            (0x461f_0010, "Fujitsu A64FX"),
        ] {
            let m = Midr::from_raw(raw);
            assert_eq!(m.raw(), raw);
            assert_eq!(m.name(), name);
        }
    }

    #[test]
    fn unknown_parts_keep_their_numbers_and_x86_has_none() {
        let m = Midr::from_raw(0x410f_d990);
        assert_eq!(m.name(), "ARM part 0xd99");
        let m = Midr::from_raw(0x990f_0010);
        assert_eq!(m.name(), "CPU implementer 0x99 part 0x001");
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\n";
        assert!(midrs_from_cpuinfo(x86).is_empty());
        assert_eq!(names_of(&[]), None);
    }

    #[test]
    fn a_figure_wider_than_its_field_is_no_midr_rather_than_cut_to_it() {
        let block = |imp: &str, var: &str, part: &str, rev: &str| {
            format!("CPU implementer\t: {imp}\nCPU variant\t: {var}\nCPU part\t: {part}\nCPU revision\t: {rev}\n")
        };
        let fits = midrs_from_cpuinfo(&block("0xff", "0xf", "0xfff", "15"));
        assert_eq!(fits.len(), 1);
        assert_eq!(fits[0].hex(), "0xffffffff");
        for wide in [
            block("0x141", "0x3", "0xd0c", "1"),
            block("0x41", "0x13", "0xd0c", "1"),
            block("0x41", "0x3", "0x1d0c", "1"),
            block("0x41", "0x3", "0xd0c", "16"),
        ] {
            assert!(midrs_from_cpuinfo(&wide).is_empty(), "{wide}");
        }
    }
}
