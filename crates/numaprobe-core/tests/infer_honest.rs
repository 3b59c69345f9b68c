//! The analysis reads every unit the right way round and says only what the
//! data carry: bandwidth (higher is better) gives the same structure as the
//! latency it mirrors, with its own words; firmware-only advice speaks of
//! distances; CPU-less nodes get no threads; equal links stay equal; nested
//! groups (SNC inside sockets inside the machine) come out as tiers whose
//! distance orders every pair across a group after every pair inside it.
//! Synthetic machines are made here from a known structure, with noise and
//! shuffled node numbers, so nothing depends on the fixtures' numbers.

#![allow(clippy::needless_range_loop)] // matrix code reads best with indices

mod synthetic;

use numaprobe_core::analysis::{analyse_with_advice, parse, Matrix, Slit, Unit};
use numaprobe_core::model::infer::{Finding, Inference};
use std::collections::BTreeSet;
use std::path::PathBuf;
use synthetic::{latency_graph, Rng};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/matrices")
}

fn doc(name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(name)).unwrap()).unwrap()
}

/// Square matrix over node ids `ids` (row i / column i is node ids[i]).
fn square(unit: Unit, ids: &[u32], v: &[Vec<f64>]) -> Matrix {
    let n = ids.len();
    // Rows and columns in ascending node order, whatever `ids` is.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| ids[i]);
    let nodes: Vec<u32> = order.iter().map(|&i| ids[i]).collect();
    let values = order
        .iter()
        .map(|&i| order.iter().map(|&j| Some(v[i][j])).collect())
        .collect();
    Matrix::new(unit, nodes.clone(), nodes, values).unwrap()
}

/// The bandwidth a latency matrix mirrors: 1e6 / latency (MB/s).
fn reciprocal(m: &Matrix) -> Matrix {
    let rows = m
        .rows()
        .into_iter()
        .map(|r| r.into_iter().map(|x| x.map(|x| 1e6 / x)).collect())
        .collect();
    let mut b = Matrix::new(Unit::MBps, m.row_nodes.clone(), m.col_nodes.clone(), rows).unwrap();
    b.slit = m.slit.clone();
    b.label = m.label.clone();
    b.slit_only = m.slit_only;
    b.flagged = m.flagged.clone();
    b.cpuless = m.cpuless.clone();
    b
}

fn kinds(fs: &[Finding]) -> Vec<&str> {
    fs.iter().map(|f| f.kind.as_str()).collect()
}

fn texts(inf: &Inference) -> String {
    inf.findings
        .iter()
        .chain(&inf.advice)
        .map(|f| f.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn structure(inf: &Inference) -> impl PartialEq + std::fmt::Debug {
    (
        inf.levels
            .iter()
            .map(|l| {
                let mut m = l.members.to_vec();
                m.sort();
                (l.kind.clone(), m, l.hops.clone())
            })
            .collect::<Vec<_>>(),
        inf.links.clone(),
        inf.hops.clone(),
        inf.groups.clone(),
        inf.hierarchy
            .iter()
            .map(|t| (t.level.clone(), t.groups.clone()))
            .collect::<Vec<_>>(),
        inf.distance.clone(),
        inf.stray_cells.clone(),
    )
}

/// Words that belong to one kind of unit only.
fn assert_words(inf: &Inference, unit: Unit) {
    let t = texts(inf);
    assert!(!t.contains("-0 %"), "{t}");
    match unit {
        Unit::MBps | Unit::GBps => {
            assert!(!t.contains("% slower") && !t.contains("% faster"), "{t}");
        }
        Unit::Distance => {
            for w in ["% slower", "% faster", "less bandwidth", "more bandwidth"] {
                assert!(!t.contains(w), "{w} in firmware-only advice: {t}");
            }
        }
        _ => assert!(!t.contains("bandwidth than local"), "{t}"),
    }
}

/// Penalty, "x local" and nearest-node advice read the unit's direction:
/// every remote level's ratio is value / local, the penalty word follows it,
/// and a node's nearest node is the best cell of its row.
fn assert_direction(m: &Matrix, inf: &Inference) {
    let bw = m.unit.higher_is_better();
    assert_eq!(inf.better, if bw { "higher" } else { "lower" });
    let local = inf.levels.iter().find(|l| l.kind == "local").unwrap();
    let remote: Vec<_> = inf.levels.iter().filter(|l| l.kind == "remote").collect();
    for w in remote.windows(2) {
        // Levels run from best to worst.
        if bw {
            assert!(w[0].value > w[1].value, "{:?}", inf.levels);
        } else {
            assert!(w[0].value < w[1].value, "{:?}", inf.levels);
        }
    }
    for l in &remote {
        let r = l.ratio_to_local.unwrap();
        assert!((r - l.value / local.value).abs() < 1e-9);
        let p = inf
            .advice
            .iter()
            .find(|a| a.kind == "penalty" && a.text.starts_with(&format!("level {} ", l.name)))
            .expect("a penalty per level");
        let clear = r.ln().abs() > 0.05;
        if clear && bw {
            let want = if r < 1.0 {
                "% less bandwidth"
            } else {
                "% more bandwidth"
            };
            assert!(p.text.contains(want), "{r}: {}", p.text);
        } else if clear && m.unit != Unit::Distance {
            let want = if r > 1.0 { "% slower" } else { "% faster" };
            assert!(p.text.contains(want), "{r}: {}", p.text);
        }
    }
    if let Some(a) = inf.advice.iter().find(|a| a.kind == "nearest") {
        for e in a.data.to_value().as_array().unwrap() {
            let n = e["node"].as_u64().unwrap() as u32;
            let row: Vec<f64> = m
                .col_nodes
                .iter()
                .filter(|&&c| c != n)
                .filter_map(|&c| m.get(n, c))
                .collect();
            let best = if bw {
                row.iter().copied().fold(f64::MIN, f64::max)
            } else {
                row.iter().copied().fold(f64::MAX, f64::min)
            };
            // The row's best cell is in the nearest set (the best level),
            // and the value shown is that cell's.
            let v = e["value"].as_f64().unwrap();
            assert_eq!(v, best, "node {n}");
            let best_node = m
                .col_nodes
                .iter()
                .find(|&&c| c != n && m.get(n, c) == Some(best));
            let set: Vec<u64> = e["nearest"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            assert!(
                set.contains(&u64::from(*best_node.unwrap())),
                "node {n}: {set:?}"
            );
        }
    }
    assert_words(inf, m.unit);
}

/// Every bandwidth matrix in the fixtures (main matrix or extra ones), and
/// the latency matrices beside them, through every analysis path.
#[test]
fn fixture_bandwidth_and_latency_read_the_right_way() {
    let mut n_bw = 0;
    for e in std::fs::read_dir(fixtures()).unwrap() {
        let p = e.unwrap().path();
        let d: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let mut cases = vec![];
        if !d["matrix"].is_null() {
            cases.push(d.clone());
        }
        for (k, v) in d["extra_matrices"].as_object().into_iter().flatten() {
            if k.contains("bandwidth") && k.contains("MBps") {
                cases.push(serde_json::json!({"unit": "MB/s", "matrix": v, "slit": d["slit"]}));
            }
        }
        for c in cases {
            let m = parse(&c.to_string(), None).unwrap();
            let inf = analyse_with_advice(&m);
            assert_direction(&m, &inf);
            if m.unit.higher_is_better() {
                n_bw += 1;
            }
        }
    }
    assert!(n_bw >= 10, "only {n_bw} bandwidth matrices");
}

/// Bandwidth = 1/latency must give the same levels, links, hops, groups,
/// hierarchy, stray cells and kinds of findings and advice as the latency,
/// on a ring, a square with a stray cell, and with a SLIT to compare.
#[test]
fn reciprocal_bandwidth_mirrors_latency_everywhere() {
    let ring8: Vec<(usize, usize)> = (0..8).map(|i| (i, (i + 1) % 8)).collect();
    let ring4: Vec<(usize, usize)> = (0..4).map(|i| (i, (i + 1) % 4)).collect();
    for seed in 1..=40u64 {
        for (n, links) in [(8, &ring8), (4, &ring4)] {
            let v = latency_graph(n, links, 0.02, seed);
            let ids: Vec<u32> = (0..n as u32).collect();
            let mut lat = square(Unit::Ns, &ids, &v);
            if n == 4 {
                // A disturbed cell far off, and a SLIT that disagrees.
                let mut rows = lat.rows();
                rows[0][1] = rows[0][1].map(|x| x * 3.0);
                lat = Matrix::new(lat.unit, ids.clone(), ids.clone(), rows).unwrap();
                lat.slit = Some(Slit {
                    nodes: ids.clone(),
                    matrix: (0..4)
                        .map(|i| {
                            (0..4)
                                .map(|j| {
                                    if i == j {
                                        10.0
                                    } else if (i + j) % 2 == 1 {
                                        30.0
                                    } else {
                                        12.0
                                    }
                                })
                                .collect()
                        })
                        .collect(),
                });
            }
            let bw = reciprocal(&lat);
            let (a, b) = (analyse_with_advice(&lat), analyse_with_advice(&bw));
            assert_eq!(structure(&a), structure(&b), "seed {seed} n {n}");
            assert_eq!(kinds(&a.findings), kinds(&b.findings), "seed {seed} n {n}");
            assert_eq!(kinds(&a.advice), kinds(&b.advice), "seed {seed} n {n}");
            if n == 4 {
                assert_eq!(a.stray_cells, vec![[0, 1]]);
                for k in ["slit-order", "slit-ratio", "stray-cell"] {
                    assert!(
                        kinds(&b.findings).contains(&k),
                        "{k}: {:?}",
                        kinds(&b.findings)
                    );
                }
            }
            assert_direction(&lat, &a);
            assert_direction(&bw, &b);
        }
    }
}

#[test]
fn firmware_only_advice_speaks_of_distances() {
    for e in std::fs::read_dir(fixtures()).unwrap() {
        let p = e.unwrap().path();
        let m = parse(&std::fs::read_to_string(&p).unwrap(), None).unwrap();
        if !m.slit_only {
            continue;
        }
        let inf = analyse_with_advice(&m);
        assert_eq!(inf.advice[0].kind, "firmware-only", "{}", p.display());
        assert!(inf
            .advice
            .iter()
            .any(|a| a.text.contains("firmware distance")));
        assert!(!kinds(&inf.advice).contains(&"crossfire"));
        assert_words(&inf, Unit::Distance);
    }
}

fn advice_nodes(inf: &Inference, kind: &str, key: &str) -> BTreeSet<u64> {
    inf.advice
        .iter()
        .filter(|a| a.kind == kind)
        .flat_map(|a| a.data.to_value().as_array().cloned().unwrap_or_default())
        .filter_map(|e| e[key].as_u64())
        .collect()
}

/// Memory-only nodes, named by `cpu_nodes` in a SLIT-only file or by having
/// no row in a measurement, never get threads: no spill source, no
/// interleave row, no crossfire end, and a memory-only line says so.
#[test]
fn cpuless_nodes_never_get_threads() {
    // A POWER9-like table: CPU nodes 0 and 8, GPU memory 250-255 (10/40/80).
    let ids = [0u32, 8, 250, 251, 252, 253, 254, 255];
    let slit: Vec<Vec<u32>> = (0..8)
        .map(|i| {
            (0..8)
                .map(|j| match (i == j, i < 2, j < 2) {
                    (true, _, _) => 10,
                    (_, true, true) => 40,
                    (_, false, false) => 80,
                    _ if (i + j) % 2 == 0 => 80,
                    _ => 80,
                })
                .collect()
        })
        .collect();
    let doc =
        serde_json::json!({"matrix": null, "slit": slit, "node_ids": ids, "cpu_nodes": [0, 8]});
    let m = parse(&doc.to_string(), None).unwrap();
    let inf = analyse_with_advice(&m);
    assert_eq!(inf.cpuless_nodes, vec![250, 251, 252, 253, 254, 255]);
    let cpu: BTreeSet<u64> = [0, 8].into();
    assert!(advice_nodes(&inf, "nearest", "node").is_subset(&cpu));
    assert!(advice_nodes(&inf, "interleave", "node").is_subset(&cpu));
    let mo = inf.advice.iter().find(|a| a.kind == "memory-only").unwrap();
    assert!(mo.text.contains("never run threads there"), "{}", mo.text);
    for n in 250..=255 {
        assert!(!texts(&inf).contains(&format!("threads on {n}")));
        assert!(!texts(&inf).contains(&format!("{n}->")));
    }

    // The SPR HBM fixture with its CPU nodes named: 8-15 are memory only
    // and each is used best from its own DDR node's CPUs.
    let mut d = doc_spr();
    d["cpu_nodes"] = serde_json::json!([0, 1, 2, 3, 4, 5, 6, 7]);
    let inf = analyse_with_advice(&parse(&d.to_string(), None).unwrap());
    let mo = inf.advice.iter().find(|a| a.kind == "memory-only").unwrap();
    for e in mo.data.to_value()["users"].as_array().unwrap() {
        let n = e["node"].as_u64().unwrap();
        assert!(n >= 8);
        assert_eq!(e["cpu_nodes"], serde_json::json!([n - 8]));
    }
    assert!(advice_nodes(&inf, "nearest", "node").iter().all(|&n| n < 8));

    // A measurement whose memory node 2 has no row (CXL memory).
    let m = Matrix::new(
        Unit::Ns,
        vec![0, 1],
        vec![0, 1, 2],
        vec![
            vec![Some(100.0), Some(150.0), Some(250.0)],
            vec![Some(151.0), Some(99.0), Some(300.0)],
        ],
    )
    .unwrap();
    let inf = analyse_with_advice(&m);
    assert_eq!(inf.cpuless_nodes, vec![2]);
    assert!(advice_nodes(&inf, "nearest", "node").is_subset(&[0, 1].into()));
    let mo = inf.advice.iter().find(|a| a.kind == "memory-only").unwrap();
    assert!(mo.text.contains("2<-0"), "{}", mo.text);
    let bw = analyse_with_advice(&reciprocal(&m));
    let mo = bw.advice.iter().find(|a| a.kind == "memory-only").unwrap();
    assert!(mo.text.contains("2<-0"), "{}", mo.text);
}

fn doc_spr() -> serde_json::Value {
    doc("slit-only-intel-spr-hbm-snc4-flat-16node.json")
}

/// Links of one level are equal: a fully connected machine has no "slowest
/// link", and a level of several links is named whole.
#[test]
fn ties_are_reported_as_ties() {
    let full: Vec<(usize, usize)> = (0..4)
        .flat_map(|i| (i + 1..4).map(move |j| (i, j)))
        .collect();
    for seed in 1..=50 {
        let v = latency_graph(4, &full, 0.02, seed);
        let lat = square(Unit::Ns, &[0, 1, 2, 3], &v);
        for m in [reciprocal(&lat), lat] {
            let inf = analyse_with_advice(&m);
            let k = kinds(&inf.advice);
            assert!(k.contains(&"links-equal"), "seed {seed}: {k:?}");
            assert!(!k.contains(&"crossfire-link"));
            assert!(!texts(&inf).contains("slowest"), "{}", texts(&inf));
        }
    }
    // SNC2: the sub-NUMA pairs share a package and are no links, so the
    // four cross-socket links are the only ones, one level: equal.
    let m = parse(
        &std::fs::read_to_string(fixtures().join("intel-xeon-8269cy-2s-snc2.json")).unwrap(),
        None,
    )
    .unwrap();
    let inf = analyse_with_advice(&m);
    assert_eq!(inf.links, vec![[0, 2], [0, 3], [1, 2], [1, 3]]);
    let k = kinds(&inf.advice);
    assert!(
        k.contains(&"links-equal") && !k.contains(&"crossfire-link"),
        "{k:?}"
    );
    assert!(
        texts(&inf).contains("all 4 direct link(s)"),
        "{}",
        texts(&inf)
    );
}

/// Cost of a pair in a hierarchy given as group ids per tier (innermost
/// first): local, then the value of the first tier whose group holds both.
fn hierarchical(
    tiers: &[Vec<usize>],
    values: &[f64],
    local: f64,
    noise: f64,
    seed: u64,
) -> (Vec<Vec<f64>>, Vec<Vec<u32>>) {
    let n = tiers[0].len();
    let mut rng = Rng(seed);
    let mut v = vec![vec![0.0; n]; n];
    let mut d = vec![vec![0u32; n]; n];
    for i in 0..n {
        for j in 0..n {
            let t = if i == j {
                None
            } else {
                tiers.iter().position(|g| g[i] == g[j])
            };
            d[i][j] = t.map_or(0, |t| t as u32 + 1);
            v[i][j] = t.map_or(local, |t| values[t]) * rng.noise(noise);
        }
    }
    (v, d)
}

fn check_hierarchy(m: &Matrix, ids: &[u32], tiers: &[Vec<usize>], want_d: &[Vec<u32>]) {
    let inf = analyse_with_advice(m);
    let pos = |node: u32| inf.nodes.iter().position(|&x| x == node).unwrap();
    for i in 0..ids.len() {
        for j in 0..ids.len() {
            assert_eq!(
                inf.distance.get(pos(ids[i]), pos(ids[j])),
                Some(want_d[i][j]),
                "distance {}-{}: {:?}",
                ids[i],
                ids[j],
                inf.hierarchy
            );
        }
    }
    // Tier by tier the same partition (as sets of node ids).
    assert_eq!(inf.hierarchy.len(), tiers.len(), "{:?}", inf.hierarchy);
    for (t, want) in inf.hierarchy.iter().zip(tiers) {
        let mut got: Vec<Vec<u32>> = t.groups.clone();
        got.iter_mut().for_each(|g| g.sort());
        got.sort();
        let mut exp: Vec<Vec<u32>> = Vec::new();
        for gid in want.iter().collect::<BTreeSet<_>>() {
            let mut g: Vec<u32> = (0..ids.len())
                .filter(|&i| want[i] == *gid)
                .map(|i| ids[i])
                .collect();
            g.sort();
            exp.push(g);
        }
        exp.sort();
        assert_eq!(got, exp);
    }
    // Every pair across a group after every pair inside it, in value.
    let bw = m.unit.higher_is_better();
    let worst_inside = |d: u32| {
        inf.cells
            .iter()
            .filter(|c| c.distance.is_some_and(|x| x >= 1 && x <= d))
            .map(|c| if bw { -c.value } else { c.value })
            .fold(f64::MIN, f64::max)
    };
    let best_across = |d: u32| {
        inf.cells
            .iter()
            .filter(|c| c.distance.is_some_and(|x| x > d))
            .map(|c| if bw { -c.value } else { c.value })
            .fold(f64::MAX, f64::min)
    };
    for d in 1..tiers.len() as u32 {
        assert!(worst_inside(d) < best_across(d), "tier {d}");
    }
    let h = inf
        .findings
        .iter()
        .find(|f| f.kind == "hierarchy")
        .expect("hierarchy finding");
    assert!(
        h.text.contains("every pair across a group is worse"),
        "{}",
        h.text
    );
    assert!(
        !kinds(&inf.findings).contains(&"hop-order"),
        "{:?}",
        inf.findings
    );
    // A level mixing 1- and 2-hop pairs is never called "direct links".
    for l in inf.levels.iter().filter(|l| l.hops.len() > 1) {
        for a in inf
            .advice
            .iter()
            .filter(|a| a.text.contains(&format!("level {} ", l.name)))
        {
            assert!(!a.text.contains("direct link"), "{}", a.text);
        }
    }
    assert!(kinds(&inf.advice).contains(&"keep-together"));
}

/// Two-level (2 sockets x SNC2 / NPS2) and three-level (2 sockets x 2 dies
/// x 2 clusters) machines with ±2 % noise and shuffled node numbers, as
/// latency and as bandwidth.
#[test]
fn nested_groups_two_and_three_levels() {
    let two = vec![vec![0, 0, 1, 1], vec![0, 0, 0, 0]];
    let three = vec![
        vec![0, 0, 1, 1, 2, 2, 3, 3],
        vec![0, 0, 0, 0, 1, 1, 1, 1],
        vec![0, 0, 0, 0, 0, 0, 0, 0],
    ];
    // Socket of four SNC nodes (NPS4-like) inside two sockets, with a
    // CXL-like far tier on top: 12 nodes, 3 tiers.
    let wide = vec![
        vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3],
        vec![0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
        vec![0; 12],
    ];
    for seed in 1..=30u64 {
        for (tiers, values) in [
            (&two, vec![88.0, 140.0]),
            (&three, vec![90.0, 115.0, 180.0]),
            (&wide, vec![95.0, 150.0, 260.0]),
        ] {
            let n = tiers[0].len();
            let (v, d) = hierarchical(tiers, &values, 80.0, 0.02, seed);
            let mut ids: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
            Rng(seed).shuffle(&mut ids);
            let lat = square(Unit::Ns, &ids, &v);
            check_hierarchy(&lat, &ids, tiers, &d);
            check_hierarchy(&reciprocal(&lat), &ids, tiers, &d);
        }
    }
}

#[test]
fn snc2_and_spr_hbm_fixtures_nest() {
    let m = parse(&doc("intel-xeon-8269cy-2s-snc2.json").to_string(), None).unwrap();
    let inf = analyse_with_advice(&m);
    let tiers: Vec<Vec<Vec<u32>>> = inf.hierarchy.iter().map(|t| t.groups.clone()).collect();
    assert_eq!(
        tiers,
        vec![vec![vec![0, 1], vec![2, 3]], vec![vec![0, 1, 2, 3]]]
    );
    assert_eq!(
        inf.distance.rows()[0],
        vec![Some(0), Some(1), Some(2), Some(2)]
    );

    let inf = analyse_with_advice(&parse(&doc_spr().to_string(), None).unwrap());
    let tiers: Vec<Vec<Vec<u32>>> = inf
        .hierarchy
        .iter()
        .map(|t| t.groups.iter().filter(|g| g.len() > 1).cloned().collect())
        .collect();
    assert_eq!(
        tiers,
        vec![
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
            vec![
                vec![0, 1, 2, 3, 8, 9, 10, 11],
                vec![4, 5, 6, 7, 12, 13, 14, 15]
            ],
            vec![(0..16).collect()],
        ]
    );
    // Node 0: its SNC quadrants, then its socket's HBM, then the other socket.
    let d0: Vec<u32> = inf.distance.row(0).map(|x| x.unwrap()).collect();
    assert_eq!(d0, [0, 1, 1, 1, 3, 3, 3, 3, 2, 2, 2, 2, 3, 3, 3, 3]);
    assert!(!kinds(&inf.findings).contains(&"hop-order"));
}
