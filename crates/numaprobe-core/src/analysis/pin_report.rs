//! From a computed binding to the `pin` result model: the command lines
//! people paste (taskset, numactl, OpenMP, KMP, srun) are derived here, once,
//! so every renderer shows the same ones.

use super::binding::{cpulist, Binding, Request};
use crate::model::pin::{Commands, PinReport, ThreadPlace};

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
}
