//! SMBIOS memory devices: the dmidecode text fixtures (tests/fixtures/smbios)
//! and a binary structure table built here byte by byte give the sockets,
//! channels, theoretical peak and findings their layouts imply.

use numaprobe_core::model::peak::MemoryPopulation;
use numaprobe_core::smbios::{self, raw};
use std::path::Path;

fn fixture(name: &str) -> MemoryPopulation {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/smbios")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    smbios::from_dmidecode(&text, name).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.max(1.0)
}

#[test]
fn a_balanced_two_socket_server_has_its_channels_counted_once_and_no_finding() {
    let p = fixture("balanced-2s.txt");
    assert_eq!(p.source, "dmidecode");
    assert_eq!(p.devices.len(), 24);
    assert_eq!(p.sockets.len(), 2);
    for (i, s) in p.sockets.iter().enumerate() {
        assert_eq!(s.socket, Some(i as u32));
        assert_eq!((s.slots, s.populated_slots), (12, 6));
        // Two slots per channel: six channels, not twelve.
        assert_eq!((s.channels, s.populated_channels), (6, 6));
        assert_eq!(s.bytes, 6 * (32u64 << 30));
    }
    // Supermicro's P1-/P2- (1-based) are sockets 0 and 1.
    let d = p.devices.iter().find(|d| d.locator == "P2-DIMMC1").unwrap();
    assert_eq!(d.socket, Some(1));
    assert_eq!(d.channel.as_deref(), Some("1/2"));
    assert_eq!(d.speed_mts, Some(2933));
    assert_eq!(d.data_width_bits, Some(64));
    // 12 channels x 2933 MT/s x 8 bytes.
    assert!(close(
        p.theoretical_gbs.unwrap(),
        12.0 * 2933.0 * 8.0 / 1000.0
    ));
    assert!(p.findings.is_empty(), "{:?}", p.findings);
}

#[test]
fn a_socket_with_half_its_channels_empty_is_a_finding() {
    let p = fixture("unbalanced-2s.txt");
    let counts: Vec<_> = p
        .sockets
        .iter()
        .map(|s| (s.socket, s.channels, s.populated_channels))
        .collect();
    assert_eq!(counts, [(Some(0), 8, 8), (Some(1), 8, 4)]);
    assert!(close(
        p.theoretical_gbs.unwrap(),
        12.0 * 3200.0 * 8.0 / 1000.0
    ));
    assert!(close(
        p.sockets[1].theoretical_gbs.unwrap(),
        4.0 * 3200.0 * 8.0 / 1000.0
    ));
    let f = p.findings.join("\n");
    assert!(
        f.contains("socket 1 has 4 populated memory channels, another socket has 8"),
        "{f}"
    );
    assert!(f.contains("about 50 %"), "{f}");
    assert!(
        f.contains("socket 1: 4 of 8 memory channels populated"),
        "{f}"
    );
    assert!(!f.contains("socket 0:"), "{f}");
    assert!(!f.contains("mixed"), "{f}");
}

#[test]
fn mixed_dimms_and_a_slow_one_are_findings_and_old_wording_is_read() {
    let p = fixture("mixed-hpe.txt");
    assert_eq!(p.sockets.len(), 2);
    assert_eq!(p.sockets[0].socket, Some(0), "PROC 1 is socket 0");
    // No channel in HPE's names: every populated slot counts as a channel.
    assert_eq!(p.sockets[0].populated_channels, 3);
    let slow = p
        .devices
        .iter()
        .find(|d| d.locator == "PROC 1 DIMM 5")
        .unwrap();
    assert_eq!(
        (slow.speed_mts, slow.configured_mts),
        (Some(3200), Some(2666))
    );
    assert!(close(
        p.theoretical_gbs.unwrap(),
        6.0 * 2666.0 * 8.0 / 1000.0
    ));
    let f = p.findings.join("\n");
    assert!(
        f.contains("mixed DIMM sizes (4 x 32 GiB, 2 x 16 GiB)"),
        "{f}"
    );
    assert!(f.contains("mixed rated speeds"), "{f}");
    assert!(f.contains("mixed DIMM parts"), "{f}");
    assert!(
        f.contains("1 DIMM runs below its rated speed (PROC 1 DIMM 5 at 2666 of 3200 MT/s)"),
        "{f}"
    );
    // Same channel counts on both sockets: no channel finding, and no
    // "of N channels" one since the channels are not named.
    assert!(!f.contains("populated memory channel"), "{f}");
}

#[test]
fn text_without_memory_devices_is_an_error_naming_the_file() {
    let e = smbios::from_dmidecode(
        "# dmidecode 3.3\nHandle 0x0001, DMI type 1\nSystem Information\n",
        "x.txt",
    )
    .unwrap_err();
    assert!(e.starts_with("x.txt: no 'Memory Device'"), "{e}");
}

/// One type 17 structure (SMBIOS 3.2 layout, 0x5C bytes) and its strings.
#[allow(clippy::too_many_arguments)]
fn type17(
    handle: u16,
    size_word: u16,
    ext_size_mib: u32,
    speed: u16,
    configured: u16,
    ext_speed: u32,
    locator: &str,
    bank: &str,
) -> Vec<u8> {
    let mut f = vec![0u8; 0x5C];
    f[0] = 17;
    f[1] = 0x5C;
    f[2..4].copy_from_slice(&handle.to_le_bytes());
    f[0x08..0x0A].copy_from_slice(&72u16.to_le_bytes()); // total width
    f[0x0A..0x0C].copy_from_slice(&64u16.to_le_bytes()); // data width
    f[0x0C..0x0E].copy_from_slice(&size_word.to_le_bytes());
    f[0x0E] = 0x09; // DIMM
    f[0x10] = 1; // locator: string 1
    f[0x11] = 2; // bank: string 2
    f[0x12] = 0x22; // DDR5
    f[0x15..0x17].copy_from_slice(&speed.to_le_bytes());
    f[0x17] = 3; // manufacturer
    f[0x1A] = 4; // part
    f[0x1C..0x20].copy_from_slice(&ext_size_mib.to_le_bytes());
    f[0x20..0x22].copy_from_slice(&configured.to_le_bytes());
    f[0x54..0x58].copy_from_slice(&ext_speed.to_le_bytes());
    f[0x58..0x5C].copy_from_slice(&ext_speed.to_le_bytes());
    for s in [locator, bank, "Samsung", "M321R8GA0BB0-CQK"] {
        f.extend_from_slice(s.as_bytes());
        f.push(0);
    }
    f.push(0);
    f
}

fn table() -> Vec<u8> {
    let mut t = Vec::new();
    // A type 16 array without strings first: two NULs end it.
    let mut arr = vec![16u8, 0x17, 0x30, 0x00];
    arr.resize(0x17, 0);
    arr.extend_from_slice(&[0, 0]);
    t.extend(arr);
    // 64 GiB through the extended size (0x7FFF), 4800 MT/s.
    t.extend(type17(
        0x40,
        0x7FFF,
        65536,
        4800,
        4800,
        0,
        "CPU0_DIMM_A1",
        "BANK 0",
    ));
    // 16 GiB in the size word (MiB; bit 15 would mean KiB, so 32 GiB and
    // more need the extended size), speeds through the extended fields.
    t.extend(type17(
        0x41,
        16384,
        0,
        0xFFFF,
        0xFFFF,
        5600,
        "CPU0_DIMM_B1",
        "BANK 1",
    ));
    // An empty slot on the other socket.
    t.extend(type17(0x42, 0, 0, 0, 0, 0, "CPU1_DIMM_A1", "BANK 0"));
    // End of table.
    t.extend_from_slice(&[127, 4, 0xFF, 0xFE, 0, 0]);
    t
}

#[test]
fn a_binary_table_gives_sizes_speeds_and_names() {
    let devices = raw::parse(&table());
    assert_eq!(devices.len(), 3);
    let d = &devices[0];
    assert_eq!(d.size_bytes, 64u64 << 30);
    assert_eq!((d.speed_mts, d.configured_mts), (Some(4800), Some(4800)));
    assert_eq!(
        (d.locator.as_str(), d.bank.as_str()),
        ("CPU0_DIMM_A1", "BANK 0")
    );
    assert_eq!(d.kind, "DDR5");
    assert_eq!(d.manufacturer, "Samsung");
    assert_eq!(d.part, "M321R8GA0BB0-CQK");
    assert_eq!(d.data_width_bits, Some(64));
    assert_eq!(devices[1].size_bytes, 16u64 << 30);
    assert_eq!(devices[1].speed_mts, Some(5600));
    assert_eq!(devices[2].size_bytes, 0);
    assert_eq!(devices[2].speed_mts, None);

    let p = smbios::population("smbios", devices);
    // Socket 0: channels A and B (different speeds, each counts its own);
    // socket 1: nothing.
    assert!(close(
        p.theoretical_gbs.unwrap(),
        (4800.0 + 5600.0) * 8.0 / 1000.0
    ));
    let f = p.findings.join("\n");
    assert!(f.contains("socket 1 has no memory"), "{f}");
    assert!(
        f.contains("mixed DIMM sizes (1 x 64 GiB, 1 x 16 GiB)"),
        "{f}"
    );
}

#[test]
fn a_truncated_or_damaged_table_gives_what_came_before() {
    let t = table();
    for cut in 0..t.len() {
        let d = raw::parse(&t[..cut]);
        assert!(d.len() <= 3);
    }
    // A structure claiming a length past the end stops the walk.
    let mut bad = table();
    bad[0x19] = 0xFF;
    let _ = raw::parse(&bad);
    assert!(raw::parse(&[17, 2, 0, 0]).is_empty());
}

#[test]
fn no_table_reads_unknown_with_the_reason() {
    let dir = std::env::temp_dir().join(format!("numaprobe-smbios-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = smbios::read_system(&dir);
    assert_eq!(p.source, "unknown");
    let why = p.unknown_because.unwrap();
    assert!(why.contains("does not exist"), "{why}");
    assert!(why.contains("--dmidecode FILE"), "{why}");
    let t = dir.join("sys/firmware/dmi/tables");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("DMI"), table()).unwrap();
    let p = smbios::read_system(&dir);
    assert_eq!(p.source, "smbios");
    assert_eq!(p.devices.len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn garbage_never_panics_either_parser() {
    // A fixed LCG: reproducible bytes, every byte of the table flipped.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) as u8
    };
    let good = table();
    for i in 0..good.len() {
        for _ in 0..8 {
            let mut t = good.clone();
            t[i] = next();
            let d = raw::parse(&t);
            let _ = smbios::population("smbios", d);
        }
    }
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/smbios/mixed-hpe.txt"),
    )
    .unwrap();
    for cut in (0..text.len()).step_by(37) {
        if text.is_char_boundary(cut) {
            let _ = smbios::from_dmidecode(&text[..cut], "cut");
        }
    }
    let noise: Vec<u8> = (0..4096).map(|_| next()).collect();
    let _ = raw::parse(&noise);
    let _ = smbios::from_dmidecode(&String::from_utf8_lossy(&noise), "noise");
}
