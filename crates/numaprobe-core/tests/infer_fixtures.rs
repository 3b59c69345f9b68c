//! `analyse` on every measured matrix in tests/fixtures/matrices: the levels,
//! hops and groups each file's notes and source describe. The expectations
//! live here, per file; the analysis itself never sees a file name.

use numaprobe_core::analysis::{analyse, analyse_with_advice, parse, Matrix, Unit};
use numaprobe_core::model::infer::Inference;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/matrices")
}

fn load(name: &str) -> Matrix {
    let text = std::fs::read_to_string(dir().join(name)).expect("fixture exists");
    parse(&text, None).expect("fixture parses")
}

fn remote_levels(inf: &Inference) -> usize {
    inf.levels.iter().filter(|l| l.kind == "remote").count()
}

fn has(inf: &Inference, kind: &str) -> bool {
    inf.findings.iter().any(|f| f.kind == kind)
}

fn all_hops(inf: &Inference) -> Vec<Vec<u32>> {
    inf.hops
        .rows()
        .iter()
        .map(|r| r.iter().map(|h| h.expect("every hop known")).collect())
        .collect()
}

/// Every file parses and analyses (with advice) without a panic, and the
/// result has the shape of the contract.
#[test]
fn every_fixture_analyses() {
    let mut n = 0;
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let m = parse(&std::fs::read_to_string(&p).unwrap(), None).unwrap();
            let inf = analyse_with_advice(&m);
            assert_eq!(inf.levels[0].kind, "local", "{}", p.display());
            assert_eq!(inf.hops.len(), inf.nodes.len());
            assert!(!inf.advice.is_empty());
            let json = serde_json::to_value(&inf).unwrap();
            for key in [
                "schema", "levels", "hops", "links", "groups", "findings", "advice",
            ] {
                assert!(json.get(key).is_some(), "{key} missing");
            }
            n += 1;
        }
    }
    assert!(n >= 13, "only {n} fixtures found");
}

#[test]
fn two_socket_machines_have_two_levels_one_hop() {
    for f in [
        "intel-2s-cncf-cnf-testbed-quad.json",
        "intel-xeon-6980p-2s.json",
        "intel-xeon-8180-2s-fdio-csit.json",
        "intel-xeon-8269cy-2s.json",
        "mctop-lpdxeon2680.json",
    ] {
        let inf = analyse(&load(f));
        assert_eq!(inf.levels.len(), 2, "{f}: {:?}", inf.levels);
        assert_eq!(all_hops(&inf), vec![vec![0, 1], vec![1, 0]], "{f}");
        assert_eq!(inf.links, vec![[0, 1]], "{f}");
        assert_eq!(inf.groups, vec![vec![0, 1]], "{f}");
    }
}

#[test]
fn granite_rapids_asymmetry_is_a_finding_not_a_level() {
    let inf = analyse(&load("intel-xeon-6980p-2s.json"));
    assert_eq!(remote_levels(&inf), 1);
    let f = inf
        .findings
        .iter()
        .find(|f| f.kind == "asymmetric")
        .unwrap();
    assert!(
        f.text.contains("410.0") && f.text.contains("449.2"),
        "{}",
        f.text
    );
}

#[test]
fn bandwidth_fixture_orders_levels_by_bandwidth() {
    let inf = analyse(&load("intel-2s-cncf-cnf-testbed-quad.json"));
    assert_eq!(inf.better, "higher");
    let remote = &inf.levels[1];
    assert!(remote.value < inf.levels[0].value);
    // "x local" is value over local: a remote bandwidth well below local.
    let r = remote.ratio_to_local.unwrap();
    assert!(
        r < 0.5 && (r - remote.value / inf.levels[0].value).abs() < 1e-9,
        "{r}"
    );
}

#[test]
fn snc2_is_local_near_far_with_two_groups() {
    let inf = analyse(&load("intel-xeon-8269cy-2s-snc2.json"));
    let kinds: Vec<&str> = inf.levels.iter().map(|l| l.kind.as_str()).collect();
    assert_eq!(kinds, ["local", "remote", "remote"]);
    let near = &inf.levels[1];
    assert_eq!(near.members, vec![[0, 1], [1, 0], [2, 3], [3, 2]]);
    assert!(near.value < 85.0 && inf.levels[2].value > 125.0);
    assert_eq!(inf.groups, vec![vec![0, 1], vec![2, 3]]);
    // Hops, links and distance tell one story: the sub-NUMA pair shares a
    // package (0 hops, no link, distance 1), every pair across packages
    // crosses one link (1 hop, distance 2).
    assert_eq!(inf.on_package, vec![vec![0, 1], vec![2, 3]]);
    assert_eq!(inf.hops_between(0, 1), Some(0));
    assert_eq!(inf.hops_between(2, 3), Some(0));
    for (a, b) in [(0, 2), (0, 3), (1, 2), (1, 3)] {
        assert_eq!(inf.hops_between(a, b), Some(1), "{a}-{b}");
    }
    assert_eq!(inf.links, vec![[0, 2], [0, 3], [1, 2], [1, 3]]);
    assert_eq!(near.hops, vec![0]);
    assert_eq!(inf.levels[2].hops, vec![1]);
    for (i, row) in inf.distance.rows().iter().enumerate() {
        for (j, d) in row.iter().enumerate() {
            let h = inf.hops.get(i, j).unwrap();
            assert_eq!(d.unwrap(), if i == j { 0 } else { h + 1 }, "{i}-{j}");
        }
    }
    let f = inf.findings.iter().find(|f| f.kind == "sub-numa").unwrap();
    assert!(
        f.text.contains("[0,1] [2,3]") && f.text.contains("Read `distance`"),
        "{}",
        f.text
    );
    assert!(!has(&inf, "hop-order") && !has(&inf, "link-speeds"));
    // SLIT 21/10 = 2.1 against a measured 1.73: the ratio is far off.
    assert!(has(&inf, "slit-ratio"));
    assert!(!has(&inf, "slit-fewer-levels"));
}

#[test]
fn snc2_extra_matrices_bandwidth_and_c2c_partial() {
    let text = std::fs::read_to_string(dir().join("intel-xeon-8269cy-2s-snc2.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Bandwidth: the same two groups appear.
    let bw = serde_json::json!({"unit": "MB/s", "matrix": doc["extra_matrices"]["bandwidth_MBps_read_only"]});
    let inf = analyse(&parse(&bw.to_string(), None).unwrap());
    assert_eq!(inf.groups, vec![vec![0, 1], vec![2, 3]]);
    // Cache-to-cache transfer has no diagonal: a partial matrix, analysed
    // for what it holds.
    let c2c = serde_json::json!({"unit": "ns", "matrix": doc["extra_matrices"]["c2c_remote_HITM_writer_homed_ns"]});
    let inf = analyse(&parse(&c2c.to_string(), None).unwrap());
    assert!(inf.levels.iter().all(|l| l.kind == "remote"));
    assert_eq!(remote_levels(&inf), 2);
    assert_eq!(inf.groups, vec![vec![0, 1], vec![2, 3]]);
    assert!(has(&inf, "partial-matrix"));
}

#[test]
fn four_socket_fully_connected_machines_have_one_remote_level() {
    for f in ["mctop-lpdquad.json", "mctop-ol-collab1.json"] {
        let inf = analyse(&load(f));
        assert_eq!(inf.levels.len(), 2, "{f}: {:?}", inf.levels);
        assert_eq!(inf.links.len(), 6, "{f}");
        assert_eq!(inf.groups, vec![vec![0, 1, 2, 3]], "{f}");
        assert!(all_hops(&inf).iter().flatten().all(|&h| h <= 1));
    }
}

#[test]
fn mctop_bandwidth_matrices_agree_with_latency() {
    for f in [
        "mctop-lpdquad.json",
        "mctop-ol-collab1.json",
        "mctop-lpdxeon2680.json",
    ] {
        let text = std::fs::read_to_string(dir().join(f)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let bw = serde_json::json!({"unit": "MB/s", "matrix": doc["extra_matrices"]["bandwidth_MBps_read_multithread"]});
        let inf = analyse(&parse(&bw.to_string(), None).unwrap());
        assert_eq!(inf.levels.len(), 2, "{f}: {:?}", inf.levels);
    }
}

#[test]
fn ranger_chips_1_and_2_link_to_all_and_0_3_are_two_hops() {
    let inf = analyse(&load("ranger-4s-opteron-8356-mccalpin.json"));
    assert_eq!(inf.links, vec![[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]);
    assert_eq!(inf.hops_between(0, 3), Some(2));
    for chip in [1, 2] {
        for other in 0..4 {
            if other != chip {
                assert_eq!(inf.hops_between(chip, other), Some(1));
            }
        }
    }
    // Levels: local, the fast 1-2 link, the other links, the 2-hop pair.
    let remote: Vec<Vec<[u32; 2]>> = inf
        .levels
        .iter()
        .filter(|l| l.kind == "remote")
        .map(|l| l.members.to_vec())
        .collect();
    assert_eq!(remote.len(), 3);
    assert_eq!(*remote[0], vec![[1, 2], [2, 1]]);
    assert_eq!(*remote[2], vec![[0, 3], [3, 0]]);
    // Requester-dependent latency is a finding, with the numbers.
    let f = inf
        .findings
        .iter()
        .find(|f| f.kind == "requester-dependent")
        .expect("requester-dependent finding");
    assert!(
        f.text.contains("133.2") && f.text.contains("122.2"),
        "{}",
        f.text
    );
    assert_eq!(inf.groups, vec![vec![0, 1, 2, 3]]);
}

#[test]
fn slit_only_files_analyse_the_slit() {
    let inf = analyse(&load("slit-only-fujitsu-8s-nehalem-ex-rwth.json"));
    assert_eq!(inf.source, "slit");
    assert!(has(&inf, "slit-only"));
    assert_eq!(inf.levels.len(), 2);
    assert_eq!(inf.links.len(), 28);

    let inf = analyse(&load("slit-only-hisilicon-kunpeng920-2s.json"));
    let values: Vec<f64> = inf.levels.iter().map(|l| l.value).collect();
    assert_eq!(values, [10.0, 12.0, 20.0, 22.0, 24.0]);
    assert_eq!(inf.groups, vec![vec![0, 1], vec![2, 3]]);

    let inf = analyse(&load("slit-only-intel-spr-hbm-snc4-flat-16node.json"));
    let values: Vec<f64> = inf.levels.iter().map(|l| l.value).collect();
    assert_eq!(values, [10.0, 12.0, 13.0, 14.0, 21.0, 23.0]);
    // Each socket's four DDR nodes with their four HBM nodes.
    assert_eq!(
        inf.groups,
        vec![
            vec![0, 1, 2, 3, 8, 9, 10, 11],
            vec![4, 5, 6, 7, 12, 13, 14, 15]
        ]
    );
    // A DDR node and its package's other DDR and HBM nodes share the
    // package: no link between them; the other package is one link away.
    assert_eq!(inf.on_package, inf.groups);
    assert_eq!(inf.hops_between(0, 8), Some(0));
    assert_eq!(inf.hops_between(0, 1), Some(0));
    assert_eq!(inf.hops_between(0, 4), Some(1));
    assert_eq!(inf.hops_between(0, 12), Some(1));
    assert!(inf.links.iter().all(|&[a, b]| inf
        .on_package
        .iter()
        .all(|g| !(g.contains(&a) && g.contains(&b)))));

    let inf = analyse(&load("slit-only-intel-xeon-max-aurora-hbm-flat.json"));
    let values: Vec<f64> = inf.levels.iter().map(|l| l.value).collect();
    assert_eq!(values, [10.0, 13.0, 21.0, 23.0]);
    // DDR node with its socket's HBM node, on one package: the other
    // socket's HBM is one link away, like its DDR.
    assert_eq!(inf.groups, vec![vec![0, 2], vec![1, 3]]);
    assert_eq!(inf.on_package, inf.groups);
    assert_eq!(inf.hops_between(0, 2), Some(0));
    assert_eq!(inf.hops_between(0, 3), Some(1));
}

#[test]
fn fixture_units_are_read() {
    assert_eq!(load("mctop-lpdquad.json").unit, Unit::Cycles);
    assert_eq!(load("intel-2s-cncf-cnf-testbed-quad.json").unit, Unit::MBps);
    assert_eq!(
        load("slit-only-hisilicon-kunpeng920-2s.json").unit,
        Unit::Distance
    );
}
