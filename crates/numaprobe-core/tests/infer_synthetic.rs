//! `analyse` on machines made up here from a known interconnect: latency or
//! bandwidth = f(hops, link kind), with ±3 % noise, stray cells, gaps. The
//! analysis must recover the interconnect it was made from, which shows the
//! method is general and not fitted to the fixtures.

#![allow(clippy::needless_range_loop)] // matrix code reads best with indices

mod synthetic;

use numaprobe_core::analysis::{analyse, analyse_with_advice, Matrix, Unit};
use numaprobe_core::model::infer::Inference;
use synthetic::{hops_of, latency_graph, Rng};

fn matrix(unit: Unit, values: Vec<Vec<f64>>) -> Matrix {
    let n = values.len() as u32;
    Matrix::new(
        unit,
        (0..n).collect(),
        (0..n).collect(),
        values
            .into_iter()
            .map(|r| r.into_iter().map(Some).collect())
            .collect(),
    )
    .unwrap()
}

/// Latency = local + per_hop * hops, with multiplicative noise.
fn latency_from_links(n: usize, links: &[(usize, usize)], noise: f64, seed: u64) -> Matrix {
    matrix(Unit::Ns, latency_graph(n, links, noise, seed))
}

fn check_graph(inf: &Inference, n: usize, links: &[(usize, usize)]) {
    let want = hops_of(n, links);
    for i in 0..n {
        for j in 0..n {
            assert_eq!(
                inf.hops.get(i, j),
                Some(want[i][j]),
                "hops {i}-{j}; links {:?}",
                inf.links
            );
        }
    }
    let mut want_links: Vec<[u32; 2]> = links
        .iter()
        .map(|&(a, b)| [a.min(b) as u32, a.max(b) as u32])
        .collect();
    want_links.sort();
    assert_eq!(inf.links, want_links);
}

fn ring(n: usize) -> Vec<(usize, usize)> {
    (0..n).map(|i| (i, (i + 1) % n)).collect()
}

#[test]
fn ring_of_eight_with_three_percent_noise() {
    let links = ring(8);
    for seed in 1..=100 {
        let inf = analyse(&latency_from_links(8, &links, 0.03, seed));
        // local + 1, 2, 3, 4 hops
        assert_eq!(inf.levels.len(), 5, "seed {seed}: {:?}", inf.levels);
        check_graph(&inf, 8, &links);
        assert_eq!(inf.groups.len(), 1);
    }
}

#[test]
fn quartet_square_links_with_noise() {
    // Four nodes on a square: 0-1-2-3-0; the diagonals are two hops.
    let links = ring(4);
    for seed in 1..=100 {
        let inf = analyse(&latency_from_links(4, &links, 0.03, seed));
        assert_eq!(inf.levels.len(), 3, "seed {seed}: {:?}", inf.levels);
        check_graph(&inf, 4, &links);
        assert!(inf.findings.iter().any(|f| f.kind == "multi-hop"));
    }
}

#[test]
fn noise_alone_makes_no_levels() {
    // A fully connected 4-socket machine: every remote pair is one level.
    let links: Vec<(usize, usize)> = (0..4)
        .flat_map(|i| (i + 1..4).map(move |j| (i, j)))
        .collect();
    for seed in 1..=200 {
        let inf = analyse(&latency_from_links(4, &links, 0.03, seed));
        assert_eq!(inf.levels.len(), 2, "seed {seed}: {:?}", inf.levels);
        assert_eq!(inf.links.len(), 6);
    }
}

#[test]
fn a_stray_cell_far_off_does_not_move_levels_or_hops() {
    let links = ring(4);
    for (factor, seed) in [(3.0, 1), (0.4, 2), (5.0, 3), (2.2, 4)] {
        let m = latency_from_links(4, &links, 0.03, seed);
        let mut rows = m.rows();
        let v = rows[0][1].unwrap();
        rows[0][1] = Some(v * factor);
        let m = Matrix::new(m.unit, m.row_nodes.clone(), m.col_nodes.clone(), rows).unwrap();
        let inf = analyse(&m);
        assert_eq!(inf.levels.len(), 3, "x{factor}: {:?}", inf.levels);
        check_graph(&inf, 4, &links);
        assert_eq!(inf.stray_cells, vec![[0, 1]], "x{factor}");
        assert!(inf.findings.iter().any(|f| f.kind == "stray-cell"));
    }
}

#[test]
fn two_groups_of_four_joined_by_slower_links_bandwidth() {
    // The RWTH Aachen blog's shape: two groups of four sockets, each group fully
    // linked by fast links, socket i joined to socket i+4 by a slower link,
    // everything else two hops. Bandwidth, so higher is better.
    let mut fast = Vec::new();
    for g in [0usize, 4] {
        for i in 0..4 {
            for j in i + 1..4 {
                fast.push((g + i, g + j));
            }
        }
    }
    let slow: Vec<(usize, usize)> = (0..4).map(|i| (i, i + 4)).collect();
    let all: Vec<(usize, usize)> = fast.iter().chain(slow.iter()).copied().collect();
    let h = hops_of(8, &all);
    for seed in 1..=20 {
        let mut rng = Rng(seed * 7919);
        let v: Vec<Vec<f64>> = (0..8)
            .map(|i| {
                (0..8)
                    .map(|j| {
                        let base = match h[i][j] {
                            0 => 10_000.0,
                            1 if fast.contains(&(i.min(j), i.max(j))) => 5_000.0,
                            1 => 4_000.0,
                            _ => 3_000.0,
                        };
                        base * rng.noise(0.03)
                    })
                    .collect()
            })
            .collect();
        let mut m = matrix(Unit::MBps, v);
        // The firmware knows only two distances, as in the RWTH Aachen blog.
        m.slit = Some(numaprobe_core::analysis::Slit {
            nodes: (0..8).collect(),
            matrix: (0..8)
                .map(|i| (0..8).map(|j| if i == j { 10.0 } else { 12.0 }).collect())
                .collect(),
        });
        let inf = analyse_with_advice(&m);
        assert_eq!(inf.levels.len(), 4, "seed {seed}: {:?}", inf.levels);
        check_graph(&inf, 8, &all);
        assert_eq!(inf.groups, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        let f = inf
            .findings
            .iter()
            .find(|f| f.kind == "slit-fewer-levels")
            .expect("SLIT under-describes");
        assert!(f.text.contains("12"), "{}", f.text);
        assert!(inf.advice.iter().any(|a| a.kind == "keep-together"));
        assert!(inf
            .advice
            .iter()
            .any(|a| a.kind == "interleave" && a.text.contains("does not pay")));
    }
}

#[test]
fn nps4_two_sockets_of_four_nodes() {
    // Local 100, same socket 110, other socket 200 (+-3 %): groups are the
    // sockets; the domains of one socket are on-package (0 hops, no link),
    // and the 16 cross-socket pairs are the links, one hop each.
    for seed in 1..=20 {
        let mut rng = Rng(seed * 104_729);
        let v = (0..8)
            .map(|i: usize| {
                (0..8)
                    .map(|j: usize| {
                        let base = if i == j {
                            100.0
                        } else if i / 4 == j / 4 {
                            110.0
                        } else {
                            200.0
                        };
                        base * rng.noise(0.03)
                    })
                    .collect()
            })
            .collect();
        let inf = analyse(&matrix(Unit::Ns, v));
        assert_eq!(inf.levels.len(), 3, "seed {seed}: {:?}", inf.levels);
        assert_eq!(inf.groups, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(inf.links.len(), 16, "seed {seed}: {:?}", inf.links);
        assert!(inf.links.iter().all(|l| l[0] / 4 != l[1] / 4));
        for i in 0..8 {
            for j in 0..8 {
                let want = if i == j || i / 4 == j / 4 { 0 } else { 1 };
                assert_eq!(inf.hops.get(i, j), Some(want), "seed {seed}: {i}->{j}");
            }
        }
    }
}

#[test]
fn slit_order_and_levels_compared_with_the_measurement() {
    // Measured: 0-1 fast, 0-2 slow. The SLIT says the opposite.
    let mut m = matrix(
        Unit::Ns,
        vec![
            vec![100.0, 120.0, 160.0],
            vec![120.0, 100.0, 160.0],
            vec![160.0, 160.0, 100.0],
        ],
    );
    m.slit = Some(numaprobe_core::analysis::Slit {
        nodes: vec![0, 1, 2],
        matrix: vec![
            vec![10.0, 21.0, 16.0],
            vec![21.0, 10.0, 16.0],
            vec![16.0, 16.0, 10.0],
        ],
    });
    let inf = analyse(&m);
    assert!(inf.findings.iter().any(|f| f.kind == "slit-order"));
    assert!(inf.findings.iter().any(|f| f.kind == "slit-ratio"));
}

#[test]
fn partial_and_non_square_matrices() {
    // A CPU-less memory node 2 (a column without a row), one gap.
    let m = Matrix::new(
        Unit::Ns,
        vec![0, 1],
        vec![0, 1, 2],
        vec![
            vec![Some(100.0), Some(150.0), Some(180.0)],
            vec![Some(150.0), Some(100.0), None],
        ],
    )
    .unwrap();
    let inf = analyse_with_advice(&m);
    assert_eq!(inf.nodes, vec![0, 1, 2]);
    assert_eq!(inf.hops_between(0, 2), Some(1));
    // Never measured (node 2 has no CPU, 1>2 is a gap): unknown, not guessed.
    assert_eq!(inf.hops_between(1, 2), None);
    assert!(inf.findings.iter().any(|f| f.kind == "partial-matrix"));

    // One node: nothing to infer, no panic.
    let inf = analyse_with_advice(&matrix(Unit::Ns, vec![vec![90.0]]));
    assert_eq!(inf.levels.len(), 1);
    assert!(inf.findings.iter().any(|f| f.kind == "nothing-to-compare"));

    // Only the diagonal measured.
    let m = Matrix::new(
        Unit::Ns,
        vec![0, 1],
        vec![0, 1],
        vec![vec![Some(90.0), None], vec![None, Some(91.0)]],
    )
    .unwrap();
    let inf = analyse_with_advice(&m);
    assert_eq!(inf.hops_between(0, 1), None);
}

#[test]
fn random_matrices_and_garbage_never_panic() {
    use numaprobe_core::analysis::parse;
    let mut rng = Rng(42);
    for round in 0..400 {
        let n = 1 + (rng.unit() * 7.0) as usize;
        let rows = if rng.unit() < 0.1 { n + 1 } else { n };
        let mut cells = Vec::new();
        for _ in 0..rows {
            let len = if rng.unit() < 0.05 { n + 1 } else { n };
            let row: Vec<String> = (0..len)
                .map(|_| {
                    let u = rng.unit();
                    if u < 0.15 {
                        "null".to_string()
                    } else if u < 0.2 {
                        format!("{}", (rng.unit() * 3.0).floor()) // duplicates, zeros
                    } else if u < 0.22 {
                        "-5".to_string()
                    } else {
                        format!("{:.3}", 1.0 + rng.unit() * 1e4)
                    }
                })
                .collect();
            cells.push(format!("[{}]", row.join(",")));
        }
        let units = ["ns", "MB/s", "GB/s", "cycles", "slit"];
        let unit = units[round % units.len()];
        let text = format!(r#"{{"unit":"{unit}","matrix":[{}]}}"#, cells.join(","));
        if let Ok(m) = parse(&text, None) {
            let inf = analyse_with_advice(&m);
            let _ = serde_json::to_string(&inf).unwrap();
            let _ = inf.ascii_drawing();
            let _ = inf.levels_table().to_text();
        }
        // The same numbers as CSV, and cut short at a random point.
        let csv = cells
            .iter()
            .map(|r| r.trim_matches(|c| c == '[' || c == ']').replace("null", ""))
            .collect::<Vec<_>>()
            .join("\n");
        let cut = (rng.unit() * text.len() as f64) as usize;
        for t in [csv.as_str(), &text[..cut]] {
            if let Ok(m) = parse(t, Some(Unit::Ns)) {
                let _ = analyse_with_advice(&m);
            }
        }
    }
}

#[test]
fn a_64_node_torus_is_recovered() {
    // 4x4x4 torus: each node linked to its six neighbours; up to 6 hops.
    let id = |x: usize, y: usize, z: usize| x + 4 * y + 16 * z;
    let mut links = Vec::new();
    for x in 0..4 {
        for y in 0..4 {
            for z in 0..4 {
                let a = id(x, y, z);
                for b in [
                    id((x + 1) % 4, y, z),
                    id(x, (y + 1) % 4, z),
                    id(x, y, (z + 1) % 4),
                ] {
                    links.push((a.min(b), a.max(b)));
                }
            }
        }
    }
    links.sort_unstable();
    links.dedup();
    // ±2 % here: the 5- and 6-hop levels are 12 % apart, and uniform ±3 %
    // noise (sigma 1.7 %) would leave only a 6 % gap between their bands,
    // under the 4-sigma criterion (see levels.rs).
    let inf = analyse_with_advice(&latency_from_links(64, &links, 0.02, 7));
    assert_eq!(
        inf.levels.len(),
        7,
        "{:?}",
        inf.levels.iter().map(|l| l.value).collect::<Vec<_>>()
    );
    check_graph(&inf, 64, &links);
}
