//! The `pin` result rendered: thread and command tables, the CSV whose `row`
//! column says what a line holds (a thread's place, a command form, a
//! setting, a warning; doc/commands/infer-pin.md) and Markdown.

use super::table::{Align, Table};
use crate::model::pin::{PinReport, ThreadPlace};

/// A CPU (or node) set in the kernel's cpulist form, `0-3,8`.
fn cpulist(ids: &[u32]) -> String {
    crate::topology::cpulist::format_ranges(ids, "")
}

impl ThreadPlace {
    /// The row of the thread tables: thread, cpu, package, node, core, smt
    /// rank; an unknown id reads `missing` (`-` on screen, empty in CSV).
    fn cells(&self, missing: &str) -> [String; 6] {
        let opt = |x: Option<i64>| x.map_or(missing.to_string(), |v| v.to_string());
        [
            self.thread.to_string(),
            self.cpu.to_string(),
            opt(self.package),
            opt(self.node.map(i64::from)),
            opt(self.core),
            self.smt_rank.to_string(),
        ]
    }
}

impl PinReport {
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
        for p in &self.placement {
            t.push(p.cells("-"));
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

    /// Everything the JSON has, as one CSV-ready table. Columns:
    /// `row,thread,cpu,package,node,core,smt_rank,key,value`. `row` is
    /// `thread` (one per thread, in thread order; `key`/`value` empty),
    /// `command` (`key` the JSON key under `commands`, `value` the text to
    /// paste), `setting` (`strategy`, `smt`, `threads`, `cpus`, `nodes`,
    /// `packages`, `mem_nodes`, `restricted_to_nodes`, `naive_cpus`; lists
    /// in cpulist form), `warning` or `naive_problem` (`value` the text).
    pub fn csv_table(&self) -> Table {
        const COLUMNS: [&str; 9] = [
            "row", "thread", "cpu", "package", "node", "core", "smt_rank", "key", "value",
        ];
        let mut t = Table::new(COLUMNS);
        for p in &self.placement {
            let mut r = vec!["thread".to_string()];
            r.extend(p.cells(""));
            r.extend([String::new(), String::new()]);
            t.push(r);
        }
        let mut kv = |row: &str, key: &str, value: String| {
            let mut r = vec![String::new(); COLUMNS.len()];
            r[0] = row.into();
            r[7] = key.into();
            r[8] = value;
            t.push(r);
        };
        let c = &self.commands;
        for (k, v) in [
            ("taskset", &c.taskset),
            ("numactl", &c.numactl),
            ("omp_places", &c.omp_places),
            ("omp_proc_bind", &c.omp_proc_bind),
            ("gomp_cpu_affinity", &c.gomp_cpu_affinity),
            ("kmp_affinity", &c.kmp_affinity),
            ("srun", &c.srun),
        ] {
            kv("command", k, v.clone());
        }
        let ids = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        kv("setting", "strategy", self.strategy.clone());
        kv("setting", "smt", self.smt.clone());
        kv("setting", "threads", self.threads.to_string());
        kv("setting", "cpus", cpulist(&self.cpus));
        kv("setting", "nodes", cpulist(&self.nodes));
        kv("setting", "packages", ids(&self.packages));
        kv("setting", "mem_nodes", cpulist(&self.mem_nodes));
        if let Some(n) = &self.restricted_to_nodes {
            kv("setting", "restricted_to_nodes", cpulist(n));
        }
        kv("setting", "naive_cpus", cpulist(&self.naive_cpus));
        for w in &self.warnings {
            kv("warning", "", w.clone());
        }
        for w in &self.naive_problems {
            kv("naive_problem", "", w.clone());
        }
        t
    }

    /// The Markdown document: placement, commands, then the warnings (which
    /// the text format sends to stderr) so the document keeps them.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "{}\n{}",
            self.placement_table().to_markdown(),
            self.commands_table().to_markdown()
        );
        let lines: Vec<String> = self
            .warnings
            .iter()
            .map(|w| format!("- warning: {w}"))
            .chain(
                self.naive_problems
                    .iter()
                    .map(|w| format!("- naive binding: {w}")),
            )
            .collect();
        if !lines.is_empty() {
            s.push('\n');
            for l in lines {
                s.push_str(&l);
                s.push('\n');
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pin::Commands;
    use crate::render::table::read_csv;

    fn report() -> PinReport {
        let cpus = [0u32, 8, 1, 9];
        let omp = cpus.iter().map(|c| format!("{{{c}}}")).collect::<Vec<_>>();
        PinReport {
            schema: crate::SCHEMA.into(),
            strategy: "scatter".into(),
            smt: "avoid".into(),
            threads: 4,
            restricted_to_nodes: None,
            cpus: cpus.to_vec(),
            nodes: vec![0, 1],
            packages: vec![0, 1],
            mem_nodes: vec![0, 1],
            placement: cpus
                .iter()
                .enumerate()
                .map(|(i, &cpu)| ThreadPlace {
                    thread: i,
                    cpu,
                    package: Some(i64::from(cpu / 8)),
                    node: Some(cpu / 8),
                    core: Some(i64::from(cpu % 8)),
                    smt_rank: 0,
                })
                .collect(),
            commands: Commands {
                taskset: "taskset -c 0-1,8-9 COMMAND".into(),
                numactl: "numactl --physcpubind=0-1,8-9 --membind=0-1 COMMAND".into(),
                omp_places: omp.join(","),
                omp_proc_bind: "close".into(),
                gomp_cpu_affinity: "0 8 1 9".into(),
                kmp_affinity: "granularity=fine,explicit,proclist=[0,8,1,9]".into(),
                srun: "srun --cpu-bind=map_cpu:0,8,1,9 COMMAND".into(),
            },
            naive_cpus: vec![0, 1, 2, 3],
            naive_problems: vec!["CPUs 0-3 would put all 4 threads on package 0".into()],
            warnings: vec!["a \"quoted\", warning".into()],
        }
    }

    #[test]
    fn csv_loads_with_threads_commands_settings_and_warnings() {
        let r = report();
        let rows = read_csv(&r.csv_table().to_csv());
        assert!(rows.iter().all(|x| x.len() == 9), "{rows:?}");
        let of = |kind: &str| rows.iter().filter(|x| x[0] == kind).count();
        assert_eq!(of("thread"), 4);
        assert_eq!(of("command"), 7);
        let get = |row: &str, key: &str| {
            rows.iter()
                .find(|x| x[0] == row && x[7] == key)
                .map(|x| x[8].clone())
                .unwrap_or_else(|| panic!("{row} {key} missing: {rows:?}"))
        };
        // Commas inside a command survive the quoting.
        assert_eq!(get("command", "omp_places"), r.commands.omp_places);
        assert_eq!(get("command", "kmp_affinity"), r.commands.kmp_affinity);
        assert_eq!(get("setting", "cpus"), "0-1,8-9");
        assert_eq!(get("setting", "strategy"), "scatter");
        assert_eq!(get("warning", ""), "a \"quoted\", warning");
        assert_eq!(get("naive_problem", ""), r.naive_problems[0]);
        // Thread rows keep thread order.
        let cpus: Vec<&str> = rows[1..5].iter().map(|x| x[2].as_str()).collect();
        assert_eq!(cpus, ["0", "8", "1", "9"]);
    }

    #[test]
    fn markdown_keeps_the_warnings() {
        let md = report().markdown();
        assert!(md.contains("- warning: a \"quoted\", warning"), "{md}");
        assert!(md.contains("- naive binding: CPUs 0-3"), "{md}");
        assert!(
            md.contains("| taskset | taskset -c 0-1,8-9 COMMAND |"),
            "{md}"
        );
    }
}
