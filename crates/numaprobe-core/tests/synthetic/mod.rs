//! Machines made up by the analysis tests from a known interconnect: a
//! reproducible random generator, hop counts of a link graph, and the
//! latency matrix those hops give. Shared by the infer tests so every one
//! builds its machines the same way.

#![allow(dead_code)] // each test binary uses its own subset
#![allow(clippy::needless_range_loop)] // matrix code reads best with indices

/// A small deterministic generator (splitmix64: consecutive outputs are
/// uncorrelated even from small seeds), so tests never depend on luck or time.
pub struct Rng(pub u64);

impl Rng {
    pub fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A factor in [1 - p, 1 + p].
    pub fn noise(&mut self, p: f64) -> f64 {
        1.0 + p * (2.0 * self.unit() - 1.0)
    }

    pub fn shuffle(&mut self, v: &mut [u32]) {
        for i in (1..v.len()).rev() {
            let j = (self.unit() * (i + 1) as f64) as usize;
            v.swap(i, j.min(i));
        }
    }
}

/// All-pairs hop counts of an undirected graph (Floyd-Warshall).
pub fn hops_of(n: usize, links: &[(usize, usize)]) -> Vec<Vec<u32>> {
    let inf = u32::MAX / 4;
    let mut d = vec![vec![inf; n]; n];
    for (i, row) in d.iter_mut().enumerate() {
        row[i] = 0;
    }
    for &(a, b) in links {
        d[a][b] = 1;
        d[b][a] = 1;
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                if d[i][k] + d[k][j] < d[i][j] {
                    d[i][j] = d[i][k] + d[k][j];
                }
            }
        }
    }
    d
}

/// Latency (ns) = 100 + 35 per hop of the link graph, with multiplicative
/// noise of ±`noise`.
pub fn latency_graph(n: usize, links: &[(usize, usize)], noise: f64, seed: u64) -> Vec<Vec<f64>> {
    let h = hops_of(n, links);
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| (100.0 + 35.0 * h[i][j] as f64) * rng.noise(noise))
                .collect()
        })
        .collect()
}
