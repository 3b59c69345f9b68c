//! Tests of `check` against a saved `pin` binding: each thread's CPU must
//! still exist, be online and allowed, and sit where the binding put it.

use super::tests::{items, machine, run, side};
use super::*;
use crate::model::pin::{Commands, ThreadPlace};

const GIB: u64 = 1 << 30;

/// A saved binding of one thread per `(cpu, core, node)`, all on package 0
/// and each its core's first hardware thread.
fn saved_binding(places: &[(u32, i64, u32)]) -> Side {
    let text = String::new();
    let pin = PinReport {
        schema: crate::SCHEMA.into(),
        strategy: "spread".into(),
        smt: "off".into(),
        threads: places.len(),
        restricted_to_nodes: None,
        cpus: places.iter().map(|p| p.0).collect(),
        nodes: places.iter().map(|p| p.2).collect(),
        packages: vec![0],
        mem_nodes: places.iter().map(|p| p.2).collect(),
        placement: places
            .iter()
            .enumerate()
            .map(|(thread, &(cpu, core, node))| ThreadPlace {
                thread,
                cpu,
                package: Some(0),
                node: Some(node),
                core: Some(core),
                smt_rank: 0,
            })
            .collect(),
        commands: Commands {
            taskset: text.clone(),
            numactl: text.clone(),
            omp_places: text.clone(),
            omp_proc_bind: text.clone(),
            gomp_cpu_affinity: text.clone(),
            kmp_affinity: text.clone(),
            srun: text,
        },
        naive_cpus: vec![],
        naive_problems: vec![],
        warnings: vec![],
    };
    let mut s = side("pin", None, "6.1.0");
    s.pin = Some(pin);
    s
}

/// The differences as (item, saved, found).
fn found(r: &CheckReport) -> Vec<(String, String, String)> {
    r.differences
        .iter()
        .map(|d| (d.item.clone(), d.a.clone(), d.b.clone()))
        .collect()
}

#[test]
fn a_binding_that_still_fits_matches() {
    let t = machine("/", [GIB, GIB]);
    let saved = saved_binding(&[(0, 0, 0), (3, 3, 1)]);
    let r = run(&saved, &t, None, &Options::default());
    assert_eq!(r.expect_kind, "pin");
    assert!(r.matches, "{:?}", r.differences);
    assert!(
        r.checked
            .iter()
            .any(|c| c.starts_with("the 2 CPUs of the saved binding")),
        "{:?}",
        r.checked
    );
}

#[test]
fn a_cpu_moved_offline_disallowed_or_gone_is_named() {
    let mut t = machine("/", [GIB, GIB]);
    t.cpus.iter_mut().find(|c| c.os_index == 1).unwrap().online = false;
    t.cpus.iter_mut().find(|c| c.os_index == 2).unwrap().allowed = false;
    // CPU 3 is on node 1, not 0; CPU 9 does not exist; CPU 0 still fits.
    let saved = saved_binding(&[(0, 0, 0), (1, 1, 0), (2, 2, 1), (3, 3, 0), (9, 9, 1)]);
    let r = run(&saved, &t, None, &Options::default());
    assert!(!r.matches);
    let at = |core: i64, node: u32| format!("package 0, core {core}, node {node}, SMT rank 0");
    assert_eq!(
        found(&r),
        [
            ("thread 1 on CPU 1".into(), at(1, 0), "offline".into()),
            (
                "thread 2 on CPU 2".into(),
                at(2, 1),
                "not allowed (outside the affinity mask or cpuset)".into()
            ),
            ("thread 3 on CPU 3".into(), at(3, 0), at(3, 1)),
            ("thread 4 on CPU 9".into(), at(9, 1), "no such CPU".into()),
        ]
    );
    assert!(items(&r).iter().all(|(s, _)| *s == Section::Binding));
    // Leaving the binding out checks nothing of it.
    let skip = Options {
        sections: select(None, Some("binding")).unwrap(),
        ..Options::default()
    };
    let r = run(&saved, &t, None, &skip);
    assert!(r.matches && r.checked.is_empty(), "{:?}", r.checked);
}
