//! `numaprobe policy`'s plan: which threads on which CPUs, which policies,
//! which data cases, how big, how many rounds, and whether this kernel has
//! weighted interleave. Everything the user asked for is checked here, before
//! a thread starts or a byte is allocated (AMD 40555 §3.1-3.2, the iXBT Opteron study).
//!
//! The workload: threads pinned on every allowed CPU node stream memory with
//! one of the bandwidth kernels (`kernels::stream`). Two data cases:
//! independent (each thread its own array, §3.1.1) and shared (one array in
//! T slices; in each pass every thread streams every slice, each thread
//! starting at its own slice and moving on at a barrier, so no two threads
//! ever work on one slice at once and over a pass all data is read by all).
//! The run itself is in `run.rs`.

mod busy;
mod document;
mod promise;
mod run;

pub use document::empty_report;
pub use promise::{distribution, expected_share};
pub use run::{run, steps, PolicyProgress, Step};

use super::bandwidth::cpus_for;
use super::ExperimentError;
use crate::kernels::{StreamOp, VectorWidth};
use crate::model::policy::{DataCase, NodeWeight, PolicyKind, ThreadSlot};
use crate::placement::{
    footprint, weighted_interleave_weights, BufferSpec, LiveSystem, MemPolicy, PageKind, TaskPolicy,
};
use crate::topology::Topology;
use crate::units::format_list;
use std::path::Path;

/// Thread count as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Spread over the CPU nodes as evenly as they allow.
    Total(usize),
    PerNode(usize),
}

/// What the user asked for; `None` means the default.
#[derive(Debug, Clone, Default)]
pub struct PolicyConfig {
    pub policies: Option<Vec<PolicyKind>>,
    pub cases: Option<Vec<DataCase>>,
    /// Default: one thread per physical core of every CPU node.
    pub threads: Option<Threads>,
    /// Default: read.
    pub op: Option<StreamOp>,
    /// Total bytes of data; default [`super::default_size_times_llc`] with [`POLICY_LLC_FACTOR`].
    pub size: Option<u64>,
    /// Node of `serial` and `preferred`; default the first CPU node.
    pub node: Option<u32>,
    /// Default 5.
    pub rounds: Option<u32>,
    /// Default 4k: interleave then places page by page, exactly as promised.
    pub pages: Option<PageKind>,
    pub width: Option<VectorWidth>,
    /// Weights derived from a bandwidth matrix, and where they come from.
    pub derived_weights: Option<(Vec<NodeWeight>, String)>,
    /// Seconds a timed sample aims for; default 0.2.
    pub sample_target_s: Option<f64>,
}

/// A checked plan.
#[derive(Debug, Clone)]
pub struct PolicyPlan {
    pub threads: Vec<ThreadSlot>,
    pub cpu_nodes: Vec<u32>,
    pub mem_nodes: Vec<u32>,
    pub node: u32,
    /// A CPU of `node` for the serial initialiser (None: `node` has no CPU).
    pub serial_cpu: Option<u32>,
    pub policies: Vec<PolicyKind>,
    pub cases: Vec<DataCase>,
    pub op: StreamOp,
    pub size: u64,
    pub pages: PageKind,
    pub width: VectorWidth,
    pub rounds: u32,
    pub sample_target_s: f64,
    /// The kernel's weights (empty without weighted interleave).
    pub kernel_weights: Vec<NodeWeight>,
    /// Why weighted interleave cannot run here.
    pub weighted_unsupported: Option<String>,
    pub derived_weights: Option<(Vec<NodeWeight>, String)>,
    pub notes: Vec<String>,
}

pub const DEFAULT_ROUNDS: u32 = 5;
/// Default data size: max(256 MiB, this x LLC). Streams only need to exceed
/// the LLC; 8 x (the matrices' factor) made the default run 7.5 minutes on a
/// machine reporting a 480 MiB L3.
pub const POLICY_LLC_FACTOR: u64 = 2;
const DEFAULT_SAMPLE_S: f64 = 0.2;

impl PolicyPlan {
    /// Alignment of the shared array's slices: a huge page belongs to one
    /// thread's slice, so first touch can place it.
    pub fn slice_unit(&self) -> u64 {
        match self.pages {
            PageKind::Small => 4096,
            PageKind::Thp | PageKind::Huge2M => 2 << 20,
            PageKind::Huge1G => 1 << 30,
        }
    }

    /// Bytes of each thread's array (independent) or slice (shared): whole
    /// units per stream of the op.
    pub fn per_thread(&self) -> u64 {
        let unit = self.slice_unit() * self.op.streams() as u64;
        (self.size / self.threads.len() as u64) / unit * unit
    }

    /// The memory policy a buffer of `policy` is mapped with (None for
    /// weighted interleave where the kernel lacks it).
    pub fn mem_policy(&self, policy: PolicyKind) -> MemPolicy {
        match policy {
            PolicyKind::FirstTouch | PolicyKind::Serial | PolicyKind::Unpinned => {
                MemPolicy::FirstTouch
            }
            PolicyKind::Interleave => MemPolicy::Interleave(self.mem_nodes.clone()),
            PolicyKind::Weighted => MemPolicy::WeightedInterleave(self.mem_nodes.clone()),
            PolicyKind::Preferred => MemPolicy::Preferred(self.node),
        }
    }

    /// The plan's policies that run on this machine, in the plan's order.
    pub fn runnable(&self) -> Vec<PolicyKind> {
        self.policies
            .iter()
            .copied()
            .filter(|&p| self.skip_reason(p).is_none())
            .collect()
    }

    /// Why `policy` does not run on this machine, if it does not.
    pub fn skip_reason(&self, policy: PolicyKind) -> Option<String> {
        match policy {
            PolicyKind::Weighted => self.weighted_unsupported.clone(),
            PolicyKind::Serial if self.serial_cpu.is_none() => Some(format!(
                "node {} has no CPU this process may use, so no thread can initialise the data there (preferred places it there)",
                self.node
            )),
            _ => None,
        }
    }
}

/// Whether this kernel has weighted interleave, and its weights: the sysfs
/// folder says the kernel knows it; a short-lived thread setting the policy
/// says it accepts it for these nodes.
fn weighted_support(mem_nodes: &[u32]) -> (Vec<NodeWeight>, Option<String>) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "this kernel".into());
    let Some(w) = weighted_interleave_weights(Path::new("/")) else {
        return (
            Vec::new(),
            Some(format!(
                "weighted interleave skipped: Linux {release} has no MPOL_WEIGHTED_INTERLEAVE (it came with 6.9; /sys/kernel/mm/mempolicy/weighted_interleave/ is missing)"
            )),
        );
    };
    let nodes = mem_nodes.to_vec();
    let probe = std::thread::spawn(move || -> Result<(), String> {
        let p =
            TaskPolicy::new(&MemPolicy::WeightedInterleave(nodes)).map_err(|e| e.to_string())?;
        p.apply().map_err(|e| e.to_string())?;
        let _ = TaskPolicy::new(&MemPolicy::FirstTouch).map(|d| d.apply());
        Ok(())
    })
    .join()
    .unwrap_or_else(|_| Err("probe panicked".into()));
    let weights = w
        .into_iter()
        .filter(|(n, _)| mem_nodes.contains(n))
        .map(|(node, weight)| NodeWeight { node, weight })
        .collect();
    match probe {
        Ok(()) => (weights, None),
        Err(e) => (
            weights,
            Some(format!(
                "weighted interleave skipped: Linux {release} refused MPOL_WEIGHTED_INTERLEAVE ({e})"
            )),
        ),
    }
}

/// The CPUs of the threads: `per_node[i]` threads on `cpu_nodes[i]`.
fn slots(
    topo: &Topology,
    cpu_nodes: &[u32],
    per_node: &[usize],
) -> Result<Vec<ThreadSlot>, ExperimentError> {
    let mut out = Vec::new();
    for (&node, &k) in cpu_nodes.iter().zip(per_node) {
        if k == 0 {
            continue;
        }
        for cpu in cpus_for(topo, node, k)? {
            out.push(ThreadSlot { cpu, node });
        }
    }
    Ok(out)
}

/// On one memory node every policy with pinned threads (first touch,
/// serial initialisation, interleave, weighted interleave, preferred) puts
/// every page on that node: the same experiment under several names. The
/// first of them stands for the rest; `unpinned` differs (its threads
/// roam) and is kept. Returns (kept, folded), each in the asked order.
pub fn fold_one_node(policies: &[PolicyKind]) -> (Vec<PolicyKind>, Vec<PolicyKind>) {
    let mut kept: Vec<PolicyKind> = Vec::new();
    let mut folded = Vec::new();
    for &p in policies {
        let pinned = p != PolicyKind::Unpinned;
        if pinned && kept.iter().any(|&k| k != PolicyKind::Unpinned) {
            folded.push(p);
        } else if !kept.contains(&p) {
            kept.push(p);
        }
    }
    (kept, folded)
}

fn names(p: &[PolicyKind]) -> String {
    let n: Vec<&str> = p.iter().map(|k| k.name()).collect();
    match n.as_slice() {
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    }
}

/// Resolve defaults and check everything. Nothing is allocated here.
pub fn plan(topo: &Topology, cfg: &PolicyConfig) -> Result<PolicyPlan, ExperimentError> {
    let live = LiveSystem::read()?;
    let cpu_nodes = topo.allowed_cpu_nodes();
    if cpu_nodes.is_empty() {
        return Err(ExperimentError::NoCpuNodes);
    }
    // Memory nodes that hold memory: interleave over a node without any would
    // only fall back elsewhere.
    let mem_nodes: Vec<u32> = topo
        .allowed_mem_nodes()
        .into_iter()
        .filter(|&n| {
            topo.node(n)
                .is_none_or(|x| x.memory_bytes > 0 || x.free_bytes > 0)
        })
        .collect();
    if mem_nodes.is_empty() {
        return Err(ExperimentError::Invalid(
            "no memory node this process may allocate on".into(),
        ));
    }
    let node = match cfg.node {
        None => cpu_nodes[0],
        Some(n) => {
            if !topo.node_ids().contains(&n) {
                return Err(ExperimentError::NoSuchNode {
                    node: n,
                    nodes: topo.node_ids(),
                });
            }
            if !mem_nodes.contains(&n) {
                return Err(ExperimentError::MemNodeNotAllowed {
                    node: n,
                    allowed: mem_nodes.clone(),
                });
            }
            n
        }
    };
    let avail: Vec<usize> = cpu_nodes
        .iter()
        .map(|&n| topo.allowed_cpus_of_node(n).len())
        .collect();
    let total_cpus: usize = avail.iter().sum();
    let per_node: Vec<usize> = match cfg.threads {
        None => cpu_nodes
            .iter()
            .map(|&n| topo.allowed_core_cpus_of_node(n).len())
            .collect(),
        Some(Threads::PerNode(k)) => {
            let max = avail.iter().copied().min().unwrap_or(0);
            if k == 0 || k > max {
                return Err(ExperimentError::Invalid(format!(
                    "--threads-per-node {k} is out of range (valid: 1 to {max}, the fewest allowed CPUs of a CPU node among {})",
                    format_list(&cpu_nodes)
                )));
            }
            vec![k; cpu_nodes.len()]
        }
        Some(Threads::Total(t)) => {
            if t == 0 || t > total_cpus {
                return Err(ExperimentError::Invalid(format!(
                    "--threads {t} is out of range (valid: 1 to {total_cpus}, the allowed CPUs of nodes {}; threads are pinned one per CPU)",
                    format_list(&cpu_nodes)
                )));
            }
            // Round-robin over the nodes, skipping full ones.
            let mut k = vec![0usize; cpu_nodes.len()];
            let mut left = t;
            while left > 0 {
                for i in 0..k.len() {
                    if left > 0 && k[i] < avail[i] {
                        k[i] += 1;
                        left -= 1;
                    }
                }
            }
            k
        }
    };
    let threads = slots(topo, &cpu_nodes, &per_node)?;
    let op = cfg.op.unwrap_or(StreamOp::Read);
    let width = super::vector_width(cfg.width)?;
    let pages = cfg.pages.unwrap_or(PageKind::Small);
    let size = cfg.size.unwrap_or_else(|| {
        super::default_size_times_llc(topo, &live, &mem_nodes, POLICY_LLC_FACTOR, 1)
    });
    let rounds = cfg.rounds.unwrap_or(DEFAULT_ROUNDS);
    if rounds == 0 {
        return Err(ExperimentError::Invalid(
            "--rounds must be at least 1".into(),
        ));
    }
    let mut policies = cfg
        .policies
        .clone()
        .unwrap_or_else(|| PolicyKind::ALL.to_vec());
    policies.dedup();
    let cases = cfg.cases.clone().unwrap_or_else(|| DataCase::ALL.to_vec());
    let serial_cpu = topo.allowed_cpus_of_node(node).first().copied();
    let (kernel_weights, weighted_unsupported) = if policies.contains(&PolicyKind::Weighted) {
        weighted_support(&mem_nodes)
    } else {
        (Vec::new(), None)
    };
    let mut plan = PolicyPlan {
        threads,
        cpu_nodes,
        mem_nodes,
        node,
        serial_cpu,
        policies,
        cases,
        op,
        size,
        pages,
        width,
        rounds,
        sample_target_s: cfg.sample_target_s.unwrap_or(DEFAULT_SAMPLE_S),
        kernel_weights,
        weighted_unsupported,
        derived_weights: cfg.derived_weights.clone(),
        notes: Vec::new(),
    };
    let unit = plan.slice_unit() * op.streams() as u64;
    let min = unit * plan.threads.len() as u64;
    if size < min {
        return Err(ExperimentError::Invalid(format!(
            "size {size} B is too small for {} threads of {} with {} pages: at least {min} B",
            plan.threads.len(),
            op.name(),
            pages.name()
        )));
    }
    // Everything on one node is what serial and preferred ask of it: it must
    // be able to hold all the data (the independent case's buffers rounded
    // up to whole pages, and the shared array).
    let all = footprint(plan.per_thread(), pages) * plan.threads.len() as u64;
    let all =
        usize::try_from(all).map_err(|_| ExperimentError::Invalid("size too large".into()))?;
    BufferSpec::new(all, MemPolicy::Bind(node), pages).check(&live, None)?;
    if plan.mem_nodes.len() == 1 {
        let (kept, folded) = fold_one_node(&plan.policies);
        if !folded.is_empty() {
            plan.notes.push(format!(
                "one memory node ({}): {} put every page where {} does, so they are not measured; what can differ here is whether the threads are pinned",
                plan.mem_nodes[0],
                names(&folded),
                kept[0].name()
            ));
        }
        plan.policies = kept;
    }
    for p in &plan.policies {
        if let Some(why) = plan.skip_reason(*p) {
            plan.notes.push(why);
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::testing;

    #[test]
    fn thread_counts_out_of_range_are_refused_with_the_valid_range() {
        let topo = testing::live_topology();
        let n = topo.allowed_cpus_of_node(0).len();
        let cfg = |t| PolicyConfig {
            threads: Some(t),
            size: Some(8 << 20),
            ..Default::default()
        };
        let e = plan(&topo, &cfg(Threads::Total(0)))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--threads 0 is out of range (valid: 1 to"),
            "{e}"
        );
        let e = plan(&topo, &cfg(Threads::Total(10_000)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("out of range"), "{e}");
        let e = plan(&topo, &cfg(Threads::PerNode(n + 1)))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("--threads-per-node {}", n + 1)),
            "{e}"
        );
        let p = plan(&topo, &cfg(Threads::Total(1))).unwrap();
        assert_eq!(p.threads.len(), 1);
    }

    #[test]
    fn a_node_that_does_not_exist_or_is_not_allowed_is_refused() {
        let topo = testing::live_topology();
        let e = plan(
            &topo,
            &PolicyConfig {
                node: Some(99),
                ..Default::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("node 99 does not exist"), "{e}");
    }

    #[test]
    fn on_one_memory_node_one_pinned_policy_stands_for_the_rest() {
        use PolicyKind::*;
        let (kept, folded) = fold_one_node(&PolicyKind::ALL);
        assert_eq!(kept, [FirstTouch, Unpinned]);
        assert_eq!(folded, [Serial, Interleave, Weighted, Preferred]);
        // The asked order decides which pinned policy is measured.
        let (kept, folded) = fold_one_node(&[Unpinned, Interleave, Serial]);
        assert_eq!(kept, [Unpinned, Interleave]);
        assert_eq!(folded, [Serial]);
        let (kept, folded) = fold_one_node(&[Preferred]);
        assert_eq!((kept, folded), (vec![Preferred], vec![]));
        assert_eq!(names(&[Serial]), "serial");
        assert_eq!(
            names(&[Serial, Interleave, Preferred]),
            "serial, interleave and preferred"
        );
        // This machine's plan (one node here, two on a multi-node host).
        let topo = testing::live_topology();
        let p = plan(
            &topo,
            &PolicyConfig {
                size: Some(8 << 20),
                ..Default::default()
            },
        )
        .unwrap();
        if p.mem_nodes.len() == 1 {
            assert_eq!(p.policies, [FirstTouch, Unpinned]);
            assert!(
                p.notes.iter().any(|n| {
                    n.contains(
                "serial, interleave, weighted and preferred put every page where first-touch does"
            )
                }),
                "{:?}",
                p.notes
            );
        } else {
            assert_eq!(p.policies, PolicyKind::ALL);
        }
    }

    #[test]
    fn slices_are_whole_pages_per_stream() {
        let topo = testing::live_topology();
        let p = plan(
            &topo,
            &PolicyConfig {
                op: Some(StreamOp::Triad),
                threads: Some(Threads::Total(1)),
                size: Some((3 << 20) + 5),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(p.per_thread(), 3 << 20);
        assert_eq!(p.per_thread() % (3 * 4096), 0);
        assert_eq!(
            p.mem_policy(PolicyKind::Preferred),
            MemPolicy::Preferred(p.node)
        );
    }
}
