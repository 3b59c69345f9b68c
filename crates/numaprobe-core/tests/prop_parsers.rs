//! Property tests over every parser of what people type and what sysfs holds
//! (the infer inputs have their own): CPU lists and masks, sizes, durations,
//! CV targets, page kinds, study labels, pin requests, and a sysfs tree's
//! `distance` and `meminfo` files. For thousands of generated inputs each
//! (arbitrary unicode, whitespace, huge numbers, overflowing ranges): no
//! panic; a value written by numaprobe's own writer reads back the same; an
//! error names the bad value (or the file it came from).
//!
//! Reproducible: every runner has a fixed ChaCha seed and no failure
//! persistence, so a run sees the same cases every time. To look further,
//! `NUMAPROBE_PROP_SEED=<u64>` changes the seed and `NUMAPROBE_PROP_CASES=<n>`
//! the number of cases per property (doc/testing.md, "Property tests of every parser").

mod common;

use numaprobe_core::analysis::binding::{self, Request, Smt, Strategy as PinStrategy};
use numaprobe_core::experiments::study::label::{parse_label, Access, ThreadSpec};
use numaprobe_core::placement::PageKind;
use numaprobe_core::topology::cpulist::{self, MAX_ID};
use numaprobe_core::units;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::Path;

/// A runner with `cases` cases (or `NUMAPROBE_PROP_CASES`), a fixed seed per
/// property (mixed with `NUMAPROBE_PROP_SEED`), and no persistence file.
fn runner(cases: u32, property: u8) -> TestRunner {
    let cases = std::env::var("NUMAPROBE_PROP_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases);
    let seed: u64 = std::env::var("NUMAPROBE_PROP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6e75_6d61);
    let mut bytes = [property; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Strings a person or a broken file might produce: anything at all, list
/// and number shapes, huge numbers, whitespace.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9,\\- ]{0,24}",
        "[0-9]{1,40}(-[0-9]{1,40})?",
        "[0-9a-fA-FxX,]{0,40}",
        "[0-9.]{0,12} ?[a-zA-Z]{0,4}",
        "[ \\t\\n\\r\\u{0}]{0,6}",
        "[0-9]{0,3}[\\u{660}-\\u{669}\\u{ff10}-\\u{ff19}][0-9]{0,3}",
        Just("0-4294967295".to_string()),
        Just("4294967296".to_string()),
        Just("18446744073709551616TiB".to_string()),
    ]
}

/// Whether an error message names the value it was given: the whole value,
/// or (for long ones, which messages shorten) its first 60 characters.
fn names(msg: &str, value: &str) -> bool {
    let head: String = value.chars().take(60).collect();
    msg.contains(value) || msg.contains(&head) || msg.contains(head.trim())
}

#[test]
fn cpu_lists_never_panic_and_errors_name_the_value() {
    runner(5000, 1)
        .run(&junk(), |s| {
            match cpulist::parse_list(&s) {
                Ok(v) => {
                    prop_assert!(v.windows(2).all(|w| w[0] < w[1]), "not ascending: {v:?}");
                    prop_assert!(v.iter().all(|&x| x < MAX_ID));
                }
                Err(e) => prop_assert!(
                    names(&e, cpulist::clean(&s))
                        || e.contains("reversed range")
                        || e.contains("empty element"),
                    "{e:?} for {s:?}"
                ),
            }
            match units::parse_list(&s) {
                Ok(v) => prop_assert!(!v.is_empty()),
                Err(e) => prop_assert!(e.to_string().contains(&format!("'{s}'")), "{e}"),
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn cpu_lists_round_trip_through_the_writer() {
    let ids =
        proptest::collection::vec(prop_oneof![0u32..64, 0u32..MAX_ID, Just(MAX_ID - 1)], 0..40);
    runner(5000, 2)
        .run(&ids, |ids| {
            let mut want = ids.clone();
            want.sort_unstable();
            want.dedup();
            let text = cpulist::format_ranges(&ids, "");
            prop_assert_eq!(&cpulist::parse_list(&text).unwrap(), &want, "{}", text);
            // With the kernel's newline and padding too.
            prop_assert_eq!(&cpulist::parse_list(&format!("{text}\n\0")).unwrap(), &want);
            if !want.is_empty() {
                prop_assert_eq!(
                    &units::parse_list(&units::format_list(&ids)).unwrap(),
                    &want
                );
            }
            Ok(())
        })
        .unwrap();
}

/// The kernel's mask form of a set: 32-bit hex words, most significant first.
fn mask_of(ids: &[u32]) -> String {
    let words = ids.iter().map(|&i| i / 32 + 1).max().unwrap_or(1) as usize;
    let mut w = vec![0u32; words];
    for &i in ids {
        w[(i / 32) as usize] |= 1 << (i % 32);
    }
    w.iter()
        .rev()
        .map(|x| format!("{x:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn cpu_masks_never_panic_and_round_trip() {
    runner(4000, 3)
        .run(&junk(), |s| {
            if let Err(e) = cpulist::parse_mask(&s) {
                // The message names the bad word (or says the mask is empty
                // or too long); the caller adds the file.
                let word_named = s
                    .split(',')
                    .map(|w| w.trim())
                    .any(|w| !w.is_empty() && e.contains(w.strip_prefix("0x").unwrap_or(w)));
                prop_assert!(
                    word_named || e == "empty mask" || e.contains("too long"),
                    "{e:?} for {s:?}"
                );
            }
            Ok(())
        })
        .unwrap();
    let ids = proptest::collection::vec(0u32..4096, 0..40);
    runner(3000, 4)
        .run(&ids, |ids| {
            let mut want = ids.clone();
            want.sort_unstable();
            want.dedup();
            prop_assert_eq!(cpulist::parse_mask(&mask_of(&ids)).unwrap(), want);
            Ok(())
        })
        .unwrap();
}

#[test]
fn sizes_never_panic_round_trip_and_name_the_value() {
    runner(5000, 5)
        .run(&junk(), |s| {
            if let Err(e) = units::parse_size(&s) {
                prop_assert!(e.to_string().contains(&format!("'{s}'")), "{e}");
            }
            Ok(())
        })
        .unwrap();
    let units_of = prop_oneof![
        Just(("", 1u64)),
        Just(("B", 1)),
        Just(("KiB", 1 << 10)),
        Just(("k", 1 << 10)),
        Just(("MiB", 1 << 20)),
        Just(("GiB", 1 << 30)),
        Just(("T", 1 << 40)),
        Just(("kB", 1000)),
        Just(("MB", 1_000_000)),
        Just(("gb", 1_000_000_000)),
    ];
    runner(3000, 6)
        .run(
            &(any::<u64>(), units_of, any::<bool>()),
            |(n, (unit, m), space)| {
                let text = format!("{n}{}{unit}", if space { " " } else { "" });
                match n.checked_mul(m) {
                    Some(bytes) => prop_assert_eq!(units::parse_size(&text), Ok(bytes)),
                    None => prop_assert!(matches!(
                        units::parse_size(&text),
                        Err(units::ParseError::SizeOverflow(ref v)) if *v == text
                    )),
                }
                Ok(())
            },
        )
        .unwrap();
    // What format_size prints reads back: exactly when it printed a whole
    // number of its unit, within its one decimal otherwise.
    runner(3000, 7)
        .run(&any::<u64>(), |n| {
            let text = units::format_size(n);
            let back = units::parse_size(&text).unwrap();
            if !text.contains('.') {
                prop_assert_eq!(back, n, "{}", text);
            } else {
                let err = (back as f64 - n as f64).abs() / n as f64;
                prop_assert!(err < 0.05, "{text} -> {back} for {n}");
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn durations_cv_targets_and_page_kinds_never_panic_and_name_the_value() {
    runner(5000, 8)
        .run(&junk(), |s| {
            let quoted = format!("'{s}'");
            match units::parse_duration(&s) {
                Ok(d) => prop_assert!(d.as_secs_f64() <= 1e9),
                Err(e) => prop_assert!(e.to_string().contains(&quoted), "{e}"),
            }
            match units::parse_fraction(&s) {
                Ok(x) => prop_assert!((0.0..1.0).contains(&x)),
                Err(e) => prop_assert!(e.to_string().contains(&quoted), "{e}"),
            }
            match PageKind::parse_arg(&s) {
                Ok(k) => prop_assert!(
                    k.name().eq_ignore_ascii_case(s.trim())
                        || s.trim().eq_ignore_ascii_case("small")
                ),
                Err(e) => prop_assert!(e.to_string().contains(&quoted), "{e}"),
            }
            Ok(())
        })
        .unwrap();
    runner(3000, 9)
        .run(&(0u64..1_000_000_000, 0usize..3), |(n, u)| {
            let (text, want) = match u {
                0 => (format!("{n}ms"), n as f64 / 1e3),
                1 => (format!("{n}s"), n as f64),
                _ => (format!("{}m", n / 60), (n / 60) as f64 * 60.0),
            };
            let got = units::parse_duration(&text).unwrap().as_secs_f64();
            prop_assert!(
                (got - want).abs() <= want * 1e-9 + 1e-9,
                "{text}: {got} vs {want}"
            );
            Ok(())
        })
        .unwrap();
    runner(2000, 10)
        .run(&(0u32..10_000, any::<bool>()), |(bp, percent)| {
            // bp: basis points below 100 %.
            let want = bp as f64 / 10_000.0;
            let text = if percent {
                format!("{}%", bp as f64 / 100.0)
            } else {
                format!("{want}")
            };
            let got = units::parse_fraction(&text).unwrap();
            prop_assert!((got - want).abs() < 1e-12, "{text}: {got}");
            Ok(())
        })
        .unwrap();
    for k in [
        PageKind::Small,
        PageKind::Thp,
        PageKind::Huge2M,
        PageKind::Huge1G,
    ] {
        assert_eq!(PageKind::parse_arg(k.name()), Ok(k));
        assert_eq!(PageKind::parse_arg(&k.name().to_uppercase()), Ok(k));
    }
}

#[test]
fn study_labels_never_panic_round_trip_and_name_the_label() {
    let labelish = prop_oneof![
        junk(),
        "[0-9]{1,25}\\.[0-9]{1,25}\\.[rwRWx]{1,2}\\.[0-9]{1,25}",
        "[0-9.rw ]{0,12}",
    ];
    runner(5000, 11)
        .run(&labelish, |s| {
            if let Err(e) = parse_label(&s) {
                prop_assert!(e.to_string().contains(&format!("`{s}`")), "{e}");
            }
            Ok(())
        })
        .unwrap();
    let spec = (any::<u32>(), any::<usize>(), any::<bool>(), any::<u32>());
    runner(3000, 12)
        .run(&spec, |(node, core, w, mem)| {
            let t = ThreadSpec {
                node,
                core,
                access: if w { Access::Write } else { Access::Read },
                mem,
            };
            prop_assert_eq!(parse_label(&t.to_string()), Ok(t));
            Ok(())
        })
        .unwrap();
}

/// Pin requests on a real four-package, eight-node dump whose cgroup allows
/// only some CPUs: any thread count and node list
/// either binds that many threads on allowed CPUs of those nodes or fails
/// with a message naming the count or the node.
#[test]
fn pin_requests_never_panic_and_errors_name_the_value() {
    let dump = common::unpack("32amd64-4s2n4c-cgroup2");
    let topo = numaprobe_core::topology::read(&dump.root).unwrap();
    let req = (
        prop_oneof![0usize..40, any::<usize>()],
        0usize..3,
        any::<bool>(),
        proptest::option::of(prop_oneof![
            proptest::collection::vec(0u32..10, 1..4),
            "[0-9,\\-]{0,12}".prop_filter_map("not a node list", |s| units::parse_list(&s).ok()),
            proptest::collection::vec(any::<u32>(), 1..3),
        ]),
    );
    runner(2000, 13)
        .run(&req, |(threads, strategy, smt, nodes)| {
            let req = Request {
                threads,
                strategy: [
                    PinStrategy::Compact,
                    PinStrategy::Scatter,
                    PinStrategy::Balanced,
                ][strategy],
                smt: if smt { Smt::Use } else { Smt::Avoid },
                nodes: nodes.clone(),
            };
            match binding::bind(&topo, &req) {
                Ok(b) => {
                    prop_assert_eq!(b.places.len(), threads);
                    for p in &b.places {
                        prop_assert!(topo.allowed.cpus.contains(&p.cpu), "cpu {}", p.cpu);
                        if let (Some(ns), Some(n)) = (&nodes, p.node) {
                            prop_assert!(ns.contains(&n), "node {n} not in {ns:?}");
                        }
                    }
                }
                Err(e) => {
                    let m = e.to_string();
                    let named = m.contains(&format!("--threads {threads}"))
                        || nodes
                            .iter()
                            .flatten()
                            .any(|n| m.contains(&format!("node {n} ")))
                        || nodes.as_ref().is_some_and(|ns| {
                            m.contains(&format!("node(s) {}", binding::cpulist(ns)))
                        });
                    prop_assert!(named, "{m}");
                }
            }
            Ok(())
        })
        .unwrap();
}

/// A two-node sysfs tree (CPU 0 on node 0, CPU 1 on node 1); the cases
/// rewrite only its `distance` and `meminfo` files.
fn write_skeleton(root: &Path) {
    let cpu = root.join("sys/devices/system/cpu");
    let node = root.join("sys/devices/system/node");
    for (i, n) in [(0, 0), (1, 1)] {
        let t = cpu.join(format!("cpu{i}/topology"));
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("physical_package_id"), format!("{n}\n")).unwrap();
        std::fs::write(t.join("core_id"), "0\n").unwrap();
        std::fs::write(t.join("core_cpus_list"), format!("{i}\n")).unwrap();
        let d = node.join(format!("node{n}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cpulist"), format!("{i}\n")).unwrap();
    }
    std::fs::write(cpu.join("possible"), "0-1\n").unwrap();
    std::fs::write(cpu.join("online"), "0-1\n").unwrap();
    std::fs::write(node.join("possible"), "0-1\n").unwrap();
    std::fs::write(node.join("online"), "0-1\n").unwrap();
}

fn write_tree(root: &Path, distance: [&str; 2], meminfo: [&str; 2]) {
    for n in 0..2 {
        let d = root.join(format!("sys/devices/system/node/node{n}"));
        std::fs::write(d.join("distance"), distance[n]).unwrap();
        std::fs::write(d.join("meminfo"), meminfo[n]).unwrap();
    }
}

#[test]
fn sysfs_distance_and_meminfo_files_never_panic_and_errors_name_the_file() {
    let tmp = common::TempDir::new("prop-sysfs");
    let root = tmp.path().to_path_buf();
    write_skeleton(&root);
    let file = prop_oneof![
        junk(),
        "[0-9]{1,12}( [0-9]{1,12}){0,3}\n?",
        "Node 0 (MemTotal|MemFree): +[0-9]{1,22} (kB|MB)?\n",
    ];
    runner(1500, 14)
        .run(
            &(file.clone(), file.clone(), file.clone(), file),
            |(d0, d1, m0, m1)| {
                write_tree(&root, [&d0, &d1], [&m0, &m1]);
                match numaprobe_core::topology::read(&root) {
                    Ok(t) => {
                        // Whatever was not a distance row was refused, so a
                        // table that was read is square with one row per node.
                        if let Some(d) = &t.distances {
                            prop_assert_eq!(d.matrix.len(), 2);
                            prop_assert!(d.matrix.iter().all(|r| r.len() == 2));
                        }
                        prop_assert_eq!(t.nodes.len(), 2);
                    }
                    Err(e) => {
                        let m = e.to_string();
                        prop_assert!(
                            m.contains("/node0/distance") || m.contains("/node1/distance"),
                            "{m}"
                        );
                    }
                }
                Ok(())
            },
        )
        .unwrap();
    // Well-formed files read back as written.
    let row = (1u32..255, 1u32..255);
    runner(1000, 15)
        .run(
            &(row.clone(), row, 0u64..(1 << 40), 0u64..(1 << 40)),
            |((a, b), (c, d), t0, t1)| {
                write_tree(
                    &root,
                    [&format!("{a} {b}\n"), &format!("{c} {d}\n")],
                    [
                        &format!("Node 0 MemTotal:  {t0} kB\nNode 0 MemFree: 1 kB\n"),
                        &format!("Node 1 MemTotal: {t1} kB\n"),
                    ],
                );
                let t = numaprobe_core::topology::read(&root).unwrap();
                prop_assert_eq!(&t.distances.unwrap().matrix, &vec![vec![a, b], vec![c, d]]);
                prop_assert_eq!(t.nodes[0].memory_bytes, t0 * 1024);
                prop_assert_eq!(t.nodes[0].free_bytes, 1024);
                prop_assert_eq!(t.nodes[1].memory_bytes, t1 * 1024);
                Ok(())
            },
        )
        .unwrap();
}

/// Overlapping ranges up to the largest id cost what the set costs, not
/// what the text repeats: a 20 kB list of `0-1048575` must not build a
/// thousand copies of a million ids.
#[test]
fn repeated_huge_ranges_read_as_one_set() {
    let max = MAX_ID - 1;
    let text = vec![format!("0-{max}"); 2000].join(",");
    let v = cpulist::parse_list(&text).unwrap();
    assert_eq!(v.len(), MAX_ID as usize);
    assert_eq!(units::parse_list(&text).unwrap().len(), MAX_ID as usize);
}
