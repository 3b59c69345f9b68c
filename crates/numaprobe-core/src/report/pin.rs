//! The result model of `pin` (the CPU list in thread order, the nodes and
//! packages used, the command lines to paste) and its table rendering. The
//! serde form is the JSON contract documented in the README (`numaprobe/1`).

use super::table::{Align, Table};
use crate::analysis::binding::{cpulist, Binding, Request};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadPlace {
    pub thread: usize,
    pub cpu: u32,
    pub package: Option<i64>,
    pub node: Option<u32>,
    pub core: Option<i64>,
    /// 0 for a core's first hardware thread, 1 for its second, ...
    pub smt_rank: usize,
}

/// Ready-to-paste forms of the same placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Commands {
    pub taskset: String,
    pub numactl: String,
    pub omp_places: String,
    pub omp_proc_bind: String,
    pub gomp_cpu_affinity: String,
    pub kmp_affinity: String,
    pub srun: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinReport {
    pub schema: String,
    pub strategy: String,
    pub smt: String,
    pub threads: usize,
    /// Node restriction given with `--nodes`, if any.
    pub restricted_to_nodes: Option<Vec<u32>>,
    /// OS CPU numbers in thread order: thread i runs on `cpus[i]`.
    pub cpus: Vec<u32>,
    pub nodes: Vec<u32>,
    pub packages: Vec<i64>,
    /// Nodes given to `numactl --membind`: `nodes` whose memory may be used.
    pub mem_nodes: Vec<u32>,
    pub placement: Vec<ThreadPlace>,
    pub commands: Commands,
    /// The naive `first N CPU numbers` and what is wrong with it.
    pub naive_cpus: Vec<u32>,
    pub naive_problems: Vec<String>,
    pub warnings: Vec<String>,
}

impl PinReport {
    pub fn new(req: &Request, b: &Binding) -> PinReport {
        let cpus = b.cpus();
        let nodes = b.nodes();
        let ordered = |sep: &str| {
            cpus.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(sep)
        };
        let set = cpulist(&cpus);
        let commands = Commands {
            taskset: format!("taskset -c {set} COMMAND"),
            numactl: format!(
                "numactl --physcpubind={set} --membind={} COMMAND",
                cpulist(&b.mem_nodes)
            ),
            omp_places: cpus
                .iter()
                .map(|c| format!("{{{c}}}"))
                .collect::<Vec<_>>()
                .join(","),
            // One place per thread in thread order: `close` maps thread i to
            // place i when the counts match.
            omp_proc_bind: "close".into(),
            gomp_cpu_affinity: ordered(" "),
            kmp_affinity: format!("granularity=fine,explicit,proclist=[{}]", ordered(",")),
            srun: format!("srun --cpu-bind=map_cpu:{} COMMAND", ordered(",")),
        };
        PinReport {
            schema: crate::SCHEMA.into(),
            strategy: req.strategy.as_str().into(),
            smt: req.smt.as_str().into(),
            threads: req.threads,
            restricted_to_nodes: req.nodes.clone(),
            cpus,
            nodes,
            packages: b.packages(),
            mem_nodes: b.mem_nodes.clone(),
            placement: b
                .places
                .iter()
                .map(|p| ThreadPlace {
                    thread: p.thread,
                    cpu: p.cpu,
                    package: p.package,
                    node: p.node,
                    core: p.core,
                    smt_rank: p.smt_rank,
                })
                .collect(),
            commands,
            naive_cpus: b.naive_cpus.clone(),
            naive_problems: b.naive_problems.clone(),
            warnings: b.warnings.clone(),
        }
    }

    /// Thread-by-thread table.
    pub fn placement_table(&self) -> Table {
        let mut t =
            Table::new(["thread", "cpu", "package", "node", "core", "smt"]).with_title(format!(
                "{} threads, {} (smt {}): CPUs {} on node(s) {}, package(s) {}",
                self.threads,
                self.strategy,
                self.smt,
                cpulist(&self.cpus),
                cpulist(&self.nodes),
                self.packages
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        let opt = |x: Option<i64>| x.map_or("-".into(), |v| v.to_string());
        for p in &self.placement {
            t.push([
                p.thread.to_string(),
                p.cpu.to_string(),
                opt(p.package),
                opt(p.node.map(i64::from)),
                opt(p.core),
                p.smt_rank.to_string(),
            ]);
        }
        t
    }

    /// The command forms, one per row.
    pub fn commands_table(&self) -> Table {
        let c = &self.commands;
        let mut t = Table::new(["form", "paste"])
            .with_title("Ready to paste")
            .with_align(vec![Align::Left, Align::Left]);
        t.push(["taskset", c.taskset.as_str()]);
        t.push(["numactl", c.numactl.as_str()]);
        t.push([
            "OpenMP",
            &format!(
                "OMP_NUM_THREADS={} OMP_PLACES=\"{}\" OMP_PROC_BIND={}",
                self.threads, c.omp_places, c.omp_proc_bind
            ),
        ]);
        t.push([
            "GNU OpenMP",
            &format!("GOMP_CPU_AFFINITY=\"{}\"", c.gomp_cpu_affinity),
        ]);
        t.push([
            "Intel OpenMP",
            &format!("KMP_AFFINITY=\"{}\"", c.kmp_affinity),
        ]);
        t.push(["Slurm (one task per CPU)", c.srun.as_str()]);
        t
    }
}
