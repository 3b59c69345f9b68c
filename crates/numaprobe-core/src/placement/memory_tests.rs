//! The zoneinfo parser and the allocatable figure on written layouts of
//! real kernels, and the buffer footprint at every page size.

use super::*;

const PAGE: u64 = 4096;
const MIB: u64 = 1 << 20;

/// A two-node x86 layout as a 6.x kernel prints it: node 0 with DMA,
/// DMA32 and Normal (per-node stats inside the first zone), node 1 with
/// Normal only; empty Movable and Device zones in the short form.
const TWO_NODES: &str = "\
Node 0, zone      DMA
  per-node stats
  nr_inactive_anon 41033
  nr_inactive_file 362428
  nr_active_file 124066
  nr_dirty     113128
  pages free     3840
    boost    0
    min      12
    low      15
    high     18
    promo    21
    spanned  4095
    present  3998
    managed  3840
    cma      0
    protection: (0, 3019, 20811, 20811, 20811)
  nr_free_pages 3840
  nr_zone_inactive_file 0
  nr_zone_write_pending 0
  pagesets
cpu: 0
          count:    0
          high:     0
          batch:    1
  vm stats threshold: 4
  node_unreclaimable:  0
  start_pfn:           1
Node 0, zone    DMA32
  pages free     772917
    boost    0
    min      2449
    low      3221
    high     3993
    promo    4765
    spanned  1044480
    present  782336
    managed  772917
    cma      0
    protection: (0, 0, 17792, 17792, 17792)
  nr_free_pages 772917
  nr_zone_inactive_file 1000
  nr_zone_write_pending 0
  pagesets
cpu: 0
          count:    12
          high:     1610
cpu: 1
          count:    30
          high:     1610
  node_unreclaimable:  0
  start_pfn:           4096
Node 0, zone   Normal
  pages free     100000
    boost    0
    min      14434
    low      18988
    high     23542
    promo    28096
    spanned  5505024
    present  5505024
    managed  4554752
    cma      0
    protection: (0, 0, 0, 0, 0)
  nr_free_pages 100000
  nr_zone_inactive_file 50000
  nr_zone_write_pending 20000
  pagesets
cpu: 0
          count:    1581
          high:     32279
cpu: 1
          count:    4984
          high:     23657
  node_unreclaimable:  0
  start_pfn:           1048576
Node 0, zone  Movable
  pages free     0
    boost    0
    min      32
    low      32
    high     32
    promo    32
    spanned  0
    present  0
    managed  0
    cma      0
    protection: (0, 0, 0, 0, 0)
Node 1, zone   Normal
  per-node stats
  nr_inactive_file 7
  pages free     40000
    boost    0
    min      3000
    low      3750
    high     4500
    spanned  49152
    present  49152
    managed  45000
    protection: (0, 0, 0, 0, 0)
  nr_zone_inactive_file 1000
  nr_zone_write_pending 0
  pagesets
cpu: 2
          count:    20000
          high:     20480
  node_unreclaimable:  0
  start_pfn:           4194304
";

#[test]
fn zones_of_every_node_are_read_with_their_watermarks() {
    let z = parse_zoneinfo(TWO_NODES);
    let names: Vec<(u32, &str)> = z.iter().map(|z| (z.node, z.name.as_str())).collect();
    assert_eq!(
        names,
        [
            (0, "DMA"),
            (0, "DMA32"),
            (0, "Normal"),
            (0, "Movable"),
            (1, "Normal")
        ]
    );
    let dma = &z[0];
    assert_eq!((dma.free, dma.min, dma.low, dma.high), (3840, 12, 15, 18));
    assert_eq!(dma.managed, 3840);
    assert_eq!(dma.protection, [0, 3019, 20811, 20811, 20811]);
    // The node-wide counters inside DMA are not DMA's own.
    assert_eq!(dma.inactive_file, 0);
    assert_eq!(dma.write_pending, 0);
    assert_eq!(z[1].pcp, BTreeMap::from([(0, 12), (1, 30)]));
    assert_eq!(z[2].inactive_file, 50000);
    assert_eq!(z[2].write_pending, 20000);
    assert_eq!(z[2].pcp, BTreeMap::from([(0, 1581), (1, 4984)]));
    // `high:` of a pageset is not the zone's high watermark.
    assert_eq!(z[2].high, 23542);
    assert_eq!(z[4].inactive_file, 1000);
}

#[test]
fn allocatable_is_above_high_watermark_and_lowmem_reserve() {
    let z = parse_zoneinfo(TWO_NODES);
    // DMA keeps 20811 pages from user allocations: it has only 3840.
    assert_eq!(z[0].allocatable_pages(), 0);
    assert_eq!(z[0].capacity_pages(), 0);
    // DMA32: free + clean file - high - reserve for Movable.
    assert_eq!(z[1].allocatable_pages(), 772917 + 1000 - 3993 - 17792);
    // Normal: dirty pages are not cheap to drop.
    assert_eq!(z[2].allocatable_pages(), 100000 + 30000 - 23542);
    assert_eq!(z[3].allocatable_pages(), 0);
    let n0 = node_memory(&z, 0, PAGE).unwrap().unwrap();
    let want = (772917 + 1000 - 3993 - 17792) + (100000 + 30000 - 23542);
    assert_eq!(n0.allocatable, want * PAGE);
    assert_eq!(n0.free, (3840 + 772917 + 100000) * PAGE);
    assert_eq!(n0.pcp, (42 + 1581 + 4984) * PAGE);
    assert_eq!(
        n0.capacity,
        ((772917 - 3993 - 17792) + (4554752 - 23542)) * PAGE
    );
    // Per-CPU list pages are reported, and counted only for the CPUs
    // that allocate, in the zones above their line (not DMA's 0 here).
    let n1 = node_memory(&z, 1, PAGE).unwrap().unwrap();
    assert_eq!(n1.allocatable, (40000 + 1000 - 4500) * PAGE);
    assert_eq!(n1.pcp, 20000 * PAGE);
    assert_eq!(n1.allocatable_on(&[2]), n1.allocatable + 20000 * PAGE);
    assert_eq!(n1.allocatable_on(&[0, 1]), n1.allocatable);
    assert_eq!(n0.allocatable_on(&[0]), n0.allocatable + (12 + 1581) * PAGE);
    assert_eq!(
        n0.allocatable_on(&[0, 1, 1]),
        n0.allocatable + (42 + 1581 + 4984) * PAGE
    );
    assert!(node_memory(&z, 2, PAGE).unwrap().is_none());
}

/// The VM rig's `dragonfly` node: 192 MiB with a min watermark of
/// 12.5 MiB. MemFree + Inactive(file) would offer 69.8 MiB; the kernel
/// gives far less before it reclaims or kills.
#[test]
fn a_small_node_keeps_its_watermarks() {
    let text = "\
Node 3, zone   Normal
  pages free     17868
    min      3200
    low      4000
    high     4800
    managed  47000
    protection: (0, 0, 0, 0)
  nr_zone_inactive_file 0
  nr_zone_write_pending 0
";
    let z = parse_zoneinfo(text);
    let n = node_memory(&z, 3, PAGE).unwrap().unwrap();
    assert_eq!(n.free, 17868 * PAGE); // 69.8 MiB
    assert_eq!(n.allocatable, (17868 - 4800) * PAGE);
    assert!(n.allocatable < 52 * MIB);
    assert!(n.allocatable + 12 * MIB < n.free);
}

#[test]
fn a_cpus_own_list_does_not_count_below_the_line() {
    let z = ZoneInfo {
        free: 100,
        high: 150,
        managed: 1000,
        pcp: BTreeMap::from([(0, 500)]),
        ..ZoneInfo::default()
    };
    assert_eq!(z.allocatable_pages(), 0);
    assert_eq!(z.own_pcp_pages(0), 0);
    let above = ZoneInfo { free: 151, ..z };
    assert_eq!(above.own_pcp_pages(0), 500);
    assert_eq!(above.own_pcp_pages(1), 0);
}

#[test]
fn cpu_less_and_movable_only_nodes() {
    // A CPU-less node (no pagesets printed for it, e.g. CXL memory) with
    // only a Movable zone, and a Normal zone whose reserve protects
    // Movable-capable allocations.
    let text = "\
Node 2, zone   Normal
  pages free     1000
    min      10
    low      12
    high     14
    managed  2000
    protection: (0, 0, 0, 500, 500)
Node 2, zone  Movable
  pages free     262144
    min      256
    low      320
    high     384
    managed  262144
    protection: (0, 0, 0, 0, 0)
  nr_zone_inactive_file 0
";
    let z = parse_zoneinfo(text);
    assert_eq!(z.len(), 2);
    assert_eq!(z[0].allocatable_pages(), 1000 - 14 - 500);
    assert_eq!(z[1].allocatable_pages(), 262144 - 384);
    assert!(z[1].pcp.is_empty());
    let n = node_memory(&z, 2, PAGE).unwrap().unwrap();
    assert_eq!(n.allocatable, (486 + 262144 - 384) * PAGE);
}

#[test]
fn old_kernels_zone_counters_are_read() {
    // 4.4-style: zone counters without the `nr_zone_` prefix, no
    // per-node stats block.
    let text = "\
Node 0, zone   Normal
  pages free     5000
    min      100
    low      125
    high     150
    scanned  0
    spanned  8192
    present  8192
    managed  8000
nr_free_pages 5000
nr_inactive_file 900
nr_dirty     100
nr_writeback 50
    protection: (0, 0, 0)
  pagesets
cpu: 0
          count: 7
";
    let z = parse_zoneinfo(text);
    assert_eq!(z[0].inactive_file, 900);
    assert_eq!(z[0].write_pending, 150);
    assert_eq!(z[0].pcp, BTreeMap::from([(0, 7)]));
    assert_eq!(z[0].allocatable_pages(), 5000 + 750 - 150);
}

#[test]
fn garbage_and_truncated_text_give_no_zone() {
    assert!(parse_zoneinfo("").is_empty());
    assert!(parse_zoneinfo("Node x, zone DMA\n  pages free 3\n").is_empty());
    // A zone cut off before `pages free` is not counted on.
    assert!(parse_zoneinfo("Node 0, zone Normal\n        min 3\n").is_empty());
}

#[test]
fn meminfo_fallback_keeps_a_reserve_and_skips_dirty_cache() {
    let text = "\
Node 0 MemTotal:        3200000 kB
Node 0 MemFree:         1000000 kB
Node 0 Inactive(file):   500000 kB
Node 0 Dirty:            100000 kB
Node 0 Writeback:             0 kB
";
    let n = node_memory_from_meminfo(text, 0).unwrap();
    assert_eq!(n.free, 1000000 * 1024);
    assert_eq!(n.allocatable, (1000000 + 400000 - 100000) * 1024);
    assert_eq!(n.capacity, (3200000 - 100000) * 1024);
}

/// Page counts and kB a forged file makes too large for bytes are refused
/// by name, never wrapped (with overflow checks off) or a panic (with them
/// on); counts that only add up past 64 bits saturate in the parser and
/// are refused the same way.
#[test]
fn figures_that_overflow_bytes_are_refused_not_wrapped() {
    let huge = format!(
        "Node 0, zone Normal\n  pages free {}\n    high 0\n    managed 10\n",
        u64::MAX / 2
    );
    let z = parse_zoneinfo(&huge);
    let e = node_memory(&z, 0, PAGE).unwrap_err();
    assert_eq!(
        e,
        Overflow {
            node: 0,
            what: "allocatable pages"
        }
    );
    assert!(
        e.to_string()
            .contains("node 0's allocatable pages overflows"),
        "{e}"
    );
    // Two zones whose sum passes 2^64 pages.
    let two = format!(
        "{huge}Node 0, zone Movable\n  pages free {}\n",
        u64::MAX / 2 + 2
    );
    assert!(node_memory(&parse_zoneinfo(&two), 0, 1).is_err());
    // The per-CPU lists, summed per zone.
    let pcp = "Node 1, zone Normal\n  pages free 10\n    high 0\n  pagesets\n    cpu: 0\n              count: 18446744073709551615\n    cpu: 1\n              count: 5\n";
    let e = node_memory(&parse_zoneinfo(pcp), 1, PAGE).unwrap_err();
    assert_eq!(e.what, "per-CPU free pages");
    // A page size of 1 keeps the same counts countable.
    assert!(node_memory(&parse_zoneinfo(&huge), 0, 1).is_ok());

    let meminfo = "Node 0 MemTotal: 18446744073709551615 kB\nNode 0 MemFree: 1 kB\n";
    let e = node_memory_from_meminfo(meminfo, 0).unwrap_err();
    assert_eq!(e.what, "MemTotal");
    let meminfo = "Node 0 MemTotal: 100 kB\nNode 0 MemFree: 18014398509481984 kB\n";
    assert_eq!(
        node_memory_from_meminfo(meminfo, 0).unwrap_err().what,
        "MemFree"
    );
    // The largest kB that fits is counted exactly.
    let fits = format!("Node 0 MemTotal: {} kB\n", u64::MAX / 1024);
    assert_eq!(
        node_memory_from_meminfo(&fits, 0).unwrap().capacity,
        (u64::MAX / 1024) * 1024 - (u64::MAX / 1024) * 1024 / 32
    );
}

#[test]
fn thp_buffers_grow_in_whole_huge_pages_at_every_page_size() {
    use super::super::PageKind;
    use crate::pagesize::PageSizes;
    let p4 = PageSizes::for_base(4096);
    assert_eq!(footprint_in(MIB, PageKind::Thp, &p4), 2 * MIB);
    assert_eq!(footprint_in(4 * MIB + 1, PageKind::Thp, &p4), 6 * MIB);
    assert_eq!(footprint_in(4 * MIB, PageKind::Thp, &p4), 4 * MIB);
    assert_eq!(footprint_in(5000, PageKind::Small, &p4), 8192);
    assert_eq!(footprint_in(MIB, PageKind::Huge1G, &p4), 1 << 30);
    // 16 KiB pages: 32 MiB THPs; 64 KiB pages (RHEL on Grace): 512 MiB.
    let p16 = PageSizes::for_base(16 << 10);
    assert_eq!(footprint_in(MIB, PageKind::Thp, &p16), 32 * MIB);
    assert_eq!(footprint_in(5000, PageKind::Small, &p16), 16 << 10);
    let p64 = PageSizes::for_base(64 << 10);
    assert_eq!(footprint_in(MIB, PageKind::Thp, &p64), 512 * MIB);
    assert_eq!(footprint_in(65537, PageKind::Small, &p64), 128 << 10);
    assert_eq!(footprint_in(MIB, PageKind::Huge2M, &p64), 2 * MIB);
}
