//! The quiet-machine check made before measuring: is anything on this
//! machine going to move the figures? Load and runnable tasks against the
//! CPUs the run may use (`/proc/loadavg`, `procs_running` of `/proc/stat`),
//! steal time over a short interval (`/proc/stat`), the CPU frequency
//! governor (cpufreq sysfs) and the transparent huge page mode, in the
//! manner of pyperf's system check: what it finds goes into every
//! document's provenance and, as warnings, onto the terminal.
//!
//! Everything is read below a root path, through the bounded reader of
//! outside files (`model::input`): a FIFO or device where a procfs or sysfs
//! file should be, or a file past the size limit, reads as unknown instead
//! of blocking or filling memory. [`assess`] works on the parsed values
//! alone, so every verdict is tested with written samples.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The interval steal time is measured over: long enough for the kernel's
/// tick counters (100-1000 Hz) to move, short against any budget.
pub const STEAL_INTERVAL: Duration = Duration::from_millis(250);

/// Steal above this share of the allowed CPUs' time: the hypervisor is
/// running someone else on our CPUs.
pub const STEAL_WARN_PERCENT: f64 = 2.0;

/// Other runnable tasks or load at or above this share of the allowed CPUs:
/// they compete with the measuring threads for the same cores.
pub const LOAD_WARN_SHARE: f64 = 0.5;

/// What the check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemCheck {
    /// CPUs the run may use.
    pub allowed_cpus: usize,
    /// 1-minute load average.
    pub load_1m: Option<f64>,
    /// Runnable tasks other than this process (`procs_running` less one).
    pub other_running: Option<u64>,
    /// Steal time of the allowed CPUs over `interval_s`, in percent.
    pub steal_percent: Option<f64>,
    pub interval_s: f64,
    /// Frequency governors of the allowed CPUs (distinct, sorted); empty
    /// without cpufreq (most VMs).
    pub governors: Vec<String>,
    /// Transparent huge pages: `always`, `madvise` or `never`.
    pub thp: Option<String>,
    /// What may make the figures move, with what would help; empty on a
    /// quiet machine.
    pub warnings: Vec<String>,
}

impl SystemCheck {
    /// No warning.
    pub fn quiet(&self) -> bool {
        self.warnings.is_empty()
    }

    /// One line of what was read, for a summary.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(l) = self.load_1m {
            parts.push(format!("load {l:.2} on {} CPUs", self.allowed_cpus));
        }
        if let Some(r) = self.other_running {
            parts.push(format!("{r} other runnable task(s)"));
        }
        if let Some(s) = self.steal_percent {
            parts.push(format!("steal {s:.1} %"));
        }
        if !self.governors.is_empty() {
            parts.push(format!("governor {}", self.governors.join("/")));
        }
        if let Some(t) = &self.thp {
            parts.push(format!("THP {t}"));
        }
        parts.join(", ")
    }
}

/// `/proc/stat` counters the check uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatSample {
    /// Per CPU: (all ticks, steal ticks).
    pub cpus: std::collections::BTreeMap<u32, (u64, u64)>,
    pub procs_running: Option<u64>,
}

/// Parse `/proc/stat`: the `cpuN` lines (user nice system idle iowait irq
/// softirq steal ...) and `procs_running`.
pub fn parse_stat(text: &str) -> StatSample {
    let mut s = StatSample::default();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let Some(key) = w.next() else { continue };
        if key == "procs_running" {
            s.procs_running = w.next().and_then(|v| v.parse().ok());
        } else if let Some(n) = key.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) {
            let v: Vec<u64> = w.take(8).filter_map(|x| x.parse().ok()).collect();
            // A line whose ticks add past u64 is read as unreadable.
            let all = v.iter().try_fold(0u64, |a, &t| a.checked_add(t));
            if let (8, Some(all)) = (v.len(), all) {
                s.cpus.insert(n, (all, v[7]));
            }
        }
    }
    s
}

/// Steal of `cpus` between two samples, in percent of their ticks; None
/// when no tick passed or no CPU is in both.
pub fn steal_percent(before: &StatSample, after: &StatSample, cpus: &[u32]) -> Option<f64> {
    let (mut all, mut steal) = (0u64, 0u64);
    for c in cpus {
        if let (Some(a), Some(b)) = (before.cpus.get(c), after.cpus.get(c)) {
            all = all.saturating_add(b.0.saturating_sub(a.0));
            steal = steal.saturating_add(b.1.saturating_sub(a.1));
        }
    }
    (all > 0).then(|| 100.0 * steal as f64 / all as f64)
}

/// The first field of `/proc/loadavg`.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The bracketed word of `transparent_hugepage/enabled`.
pub fn parse_thp(text: &str) -> Option<String> {
    let a = text.find('[')?;
    let b = text[a..].find(']')?;
    Some(text[a + 1..a + b].to_string())
}

/// Other runnable tasks, when they are at least [`LOAD_WARN_SHARE`] of the
/// allowed CPUs (at least one).
fn busy_runnable(c: &SystemCheck) -> Option<u64> {
    c.other_running
        .filter(|&r| r as f64 >= busy_line(c.allowed_cpus))
}

/// The load average, when it is at least [`LOAD_WARN_SHARE`] of the
/// allowed CPUs (at least one).
fn busy_load(c: &SystemCheck) -> Option<f64> {
    c.load_1m.filter(|&l| l >= busy_line(c.allowed_cpus))
}

/// Steal time above [`STEAL_WARN_PERCENT`].
fn busy_steal(c: &SystemCheck) -> Option<f64> {
    c.steal_percent.filter(|&s| s > STEAL_WARN_PERCENT)
}

/// Tasks or load from which on a machine of `cpus` allowed CPUs is busy.
fn busy_line(cpus: usize) -> f64 {
    (LOAD_WARN_SHARE * cpus.max(1) as f64).max(1.0)
}

/// The warnings for what was read (the fields of `c` but `warnings`): a
/// busy machine's ([`busy_warnings`]), then the governor's.
pub fn assess(c: &SystemCheck) -> Vec<String> {
    let mut w = busy_warnings(c);
    w.extend(governor_warning(c));
    w
}

/// The warnings of a busy machine: other runnable tasks, load, steal.
pub fn busy_warnings(c: &SystemCheck) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(r) = busy_runnable(c) {
        w.push(format!(
            "{r} other task(s) were runnable on a machine where this run may use {} CPU(s): they compete with the measuring threads; measure on a quieter machine (or with the CPUs to itself)",
            c.allowed_cpus
        ));
    }
    if let Some(l) = busy_load(c) {
        w.push(format!(
            "load average {l:.2} against {} allowed CPU(s): figures move with the load; measure on a quieter machine",
            c.allowed_cpus
        ));
    }
    if let Some(s) = busy_steal(c) {
        w.push(format!(
            "steal time {s:.1} % over {:.2} s: the hypervisor runs others on these CPUs; figures of a VM with stolen time are not the machine's",
            c.interval_s
        ));
    }
    w
}

/// The warning of a CPU frequency governor other than `performance`.
pub fn governor_warning(c: &SystemCheck) -> Option<String> {
    let varying: Vec<&str> = c
        .governors
        .iter()
        .map(|s| s.as_str())
        .filter(|g| *g != "performance")
        .collect();
    (!varying.is_empty()).then(|| {
        format!(
            "CPU frequency governor {}: the clock follows the load, so latency and bandwidth move with it; `cpupower frequency-set -g performance` holds it",
            varying.join("/")
        )
    })
}

/// What the check found of a busy machine, in a few words, for a line that
/// goes on to name the figures it touched: "load average 8.34 and 4 other
/// runnable task(s) on 2 CPUs, steal 3.1 %"; or, when nothing warned,
/// "quiet when the run began (load 0.40 on 2 CPUs)".
pub fn busy_headline(c: &SystemCheck) -> String {
    let mut on_cpus = Vec::new();
    if let Some(l) = busy_load(c) {
        on_cpus.push(format!("load average {l:.2}"));
    }
    if let Some(r) = busy_runnable(c) {
        on_cpus.push(format!("{r} other runnable task(s)"));
    }
    let mut parts = Vec::new();
    if !on_cpus.is_empty() {
        parts.push(format!(
            "{} on {} CPUs",
            on_cpus.join(" and "),
            c.allowed_cpus
        ));
    }
    if let Some(s) = busy_steal(c) {
        parts.push(format!("steal {s:.1} %"));
    }
    if !parts.is_empty() {
        return parts.join(", ");
    }
    match c.load_1m {
        Some(l) => format!(
            "quiet when the run began (load {l:.2} on {} CPUs)",
            c.allowed_cpus
        ),
        None => "quiet when the run began".into(),
    }
}

/// Read the machine below `root` for a run on `cpus`, sampling steal over
/// `interval` (the calling thread sleeps that long).
pub fn read_below(root: &Path, cpus: &[u32], interval: Duration) -> SystemCheck {
    let read = |rel: &str| crate::model::input::read_text(&root.join(rel)).ok();
    let before = read("proc/stat").map(|t| parse_stat(&t));
    std::thread::sleep(interval);
    let after = read("proc/stat").map(|t| parse_stat(&t));
    let steal = match (&before, &after) {
        (Some(b), Some(a)) => steal_percent(b, a, cpus),
        _ => None,
    };
    let mut governors: Vec<String> = cpus
        .iter()
        .filter_map(|c| {
            read(&format!(
                "sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
            ))
        })
        .map(|g| g.trim().to_string())
        .filter(|g| !g.is_empty())
        .collect();
    governors.sort();
    governors.dedup();
    let mut c = SystemCheck {
        allowed_cpus: cpus.len(),
        load_1m: read("proc/loadavg").and_then(|t| parse_loadavg(&t)),
        // This process is one of the runnable tasks while it reads.
        other_running: after
            .as_ref()
            .and_then(|a| a.procs_running)
            .map(|r| r.saturating_sub(1)),
        steal_percent: steal,
        interval_s: interval.as_secs_f64(),
        governors,
        thp: read("sys/kernel/mm/transparent_hugepage/enabled").and_then(|t| parse_thp(&t)),
        warnings: Vec::new(),
    };
    c.warnings = assess(&c);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = "\
cpu  100 0 50 1000 0 0 0 10 0 0
cpu0 50 0 25 500 0 0 0 5 0 0
cpu1 50 0 25 500 0 0 0 5 0 0
intr 12345 0 0
ctxt 999
procs_running 3
procs_blocked 0
";
    const STAT_B: &str = "\
cpu  300 0 50 1000 0 0 0 60 0 0
cpu0 150 0 25 500 0 0 0 45 0 0
cpu1 150 0 25 500 0 0 0 15 0 0
procs_running 1
";

    fn quiet() -> SystemCheck {
        SystemCheck {
            allowed_cpus: 8,
            load_1m: Some(0.2),
            other_running: Some(0),
            steal_percent: Some(0.0),
            interval_s: 0.25,
            governors: vec!["performance".into()],
            thp: Some("madvise".into()),
            warnings: vec![],
        }
    }

    #[test]
    fn stat_counters_and_steal_of_the_allowed_cpus() {
        let a = parse_stat(STAT_A);
        let b = parse_stat(STAT_B);
        assert_eq!(a.procs_running, Some(3));
        assert_eq!(a.cpus[&0], (580, 5));
        // cpu0: 140 ticks, 40 of them stolen; cpu1: 110, 10.
        assert_eq!(steal_percent(&a, &b, &[0]), Some(100.0 * 40.0 / 140.0));
        assert_eq!(steal_percent(&a, &b, &[0, 1]), Some(100.0 * 50.0 / 250.0));
        assert_eq!(steal_percent(&a, &a, &[0]), None);
        assert_eq!(steal_percent(&a, &b, &[7]), None);
        assert_eq!(parse_stat("garbage\ncpu0 1 2\n"), StatSample::default());
    }

    #[test]
    fn ticks_past_64_bits_are_no_reading_and_sums_saturate() {
        let max = u64::MAX;
        let s = parse_stat(&format!(
            "cpu0 {max} 1 0 0 0 0 0 0\ncpu1 {max} 0 0 0 0 0 0 0\n"
        ));
        assert_eq!(s.cpus.get(&0), None, "a line past 64 bits is dropped");
        assert_eq!(s.cpus.get(&1), Some(&(max, 0)));
        let zero = StatSample {
            cpus: [(0, (0, 0)), (1, (0, 0))].into(),
            procs_running: None,
        };
        let full = StatSample {
            cpus: [(0, (max, max)), (1, (max, max))].into(),
            procs_running: None,
        };
        assert_eq!(steal_percent(&zero, &full, &[0, 1]), Some(100.0));
    }

    #[test]
    fn loadavg_and_thp_are_read() {
        assert_eq!(parse_loadavg("11.72 9.69 5.04 3/812 27430\n"), Some(11.72));
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(
            parse_thp("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(parse_thp("never"), None);
    }

    #[test]
    fn a_quiet_machine_has_no_warning() {
        let c = quiet();
        assert!(assess(&c).is_empty());
        assert!(c.quiet());
        assert_eq!(
            c.describe(),
            "load 0.20 on 8 CPUs, 0 other runnable task(s), steal 0.0 %, governor performance, THP madvise"
        );
    }

    #[test]
    fn load_steal_and_governor_each_warn_with_what_would_help() {
        let busy = SystemCheck {
            load_1m: Some(11.7),
            other_running: Some(4),
            ..quiet()
        };
        let w = assess(&busy);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("4 other task(s)") && w[0].contains("quieter machine"));
        assert!(w[1].contains("load average 11.70 against 8"));
        // The thresholds: half the allowed CPUs, at least one task.
        let edge = SystemCheck {
            load_1m: Some(3.9),
            other_running: Some(3),
            ..quiet()
        };
        assert!(assess(&edge).is_empty());
        let one_cpu = SystemCheck {
            allowed_cpus: 1,
            other_running: Some(1),
            load_1m: Some(0.9),
            ..quiet()
        };
        assert_eq!(assess(&one_cpu).len(), 1);
        let stolen = SystemCheck {
            steal_percent: Some(2.5),
            ..quiet()
        };
        assert!(assess(&stolen)[0].contains("steal time 2.5 %"));
        let gov = SystemCheck {
            governors: vec!["performance".into(), "powersave".into()],
            ..quiet()
        };
        let w = assess(&gov);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("governor powersave") && w[0].contains("cpupower"));
    }

    #[test]
    fn the_headline_names_what_warned_of_a_busy_machine_or_says_it_was_quiet() {
        assert_eq!(
            busy_headline(&quiet()),
            "quiet when the run began (load 0.20 on 8 CPUs)"
        );
        let no_load = SystemCheck {
            load_1m: None,
            ..quiet()
        };
        assert_eq!(busy_headline(&no_load), "quiet when the run began");
        let busy = SystemCheck {
            load_1m: Some(8.339),
            other_running: Some(4),
            steal_percent: Some(3.06),
            ..quiet()
        };
        assert_eq!(
            busy_headline(&busy),
            "load average 8.34 and 4 other runnable task(s) on 8 CPUs, steal 3.1 %"
        );
        // At the lines: half the CPUs (load, tasks), above 2 % (steal).
        let edge = SystemCheck {
            load_1m: Some(4.0),
            other_running: Some(3),
            steal_percent: Some(2.0),
            ..quiet()
        };
        assert_eq!(busy_headline(&edge), "load average 4.00 on 8 CPUs");
        let stolen = SystemCheck {
            steal_percent: Some(2.01),
            ..quiet()
        };
        assert_eq!(busy_headline(&stolen), "steal 2.0 %");
        let tasks = SystemCheck {
            other_running: Some(4),
            ..quiet()
        };
        assert_eq!(busy_headline(&tasks), "4 other runnable task(s) on 8 CPUs");
        // The governor is no busy machine: its warning stands apart.
        let gov = SystemCheck {
            governors: vec!["powersave".into()],
            ..busy
        };
        assert_eq!(busy_warnings(&gov).len(), 3);
        assert_eq!(assess(&gov).len(), 4);
        assert!(governor_warning(&gov)
            .unwrap()
            .contains("governor powersave"));
        assert_eq!(governor_warning(&quiet()), None);
        // No CPU allowed reads as one: one task is then busy.
        let none = SystemCheck {
            allowed_cpus: 0,
            other_running: Some(1),
            load_1m: Some(0.99),
            ..quiet()
        };
        assert_eq!(busy_headline(&none), "1 other runnable task(s) on 0 CPUs");
    }

    #[test]
    fn a_root_without_proc_or_sys_reads_as_unknown_not_an_error() {
        let root = std::env::temp_dir().join(format!("numaprobe-syscheck-{}", std::process::id()));
        let c = read_below(&root, &[0, 1], Duration::from_millis(1));
        assert_eq!(c.allowed_cpus, 2);
        assert_eq!(c.load_1m, None);
        assert_eq!(c.steal_percent, None);
        assert!(c.governors.is_empty() && c.thp.is_none());
        assert!(c.quiet());
    }

    #[test]
    fn a_fifo_or_device_in_place_of_a_file_reads_as_unknown_and_the_rest_is_read() {
        let root =
            std::env::temp_dir().join(format!("numaprobe-syscheck-odd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let gov = root.join("sys/devices/system/cpu/cpu0/cpufreq");
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::create_dir_all(&gov).unwrap();
        // A device that never ends: read whole, it fills memory.
        std::os::unix::fs::symlink("/dev/zero", root.join("proc/stat")).unwrap();
        // A FIFO without a writer: opened and read, it blocks for ever.
        let fifo = std::ffi::CString::new(
            gov.join("scaling_governor")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::write(root.join("proc/loadavg"), "0.50 0.40 0.30 1/100 42\n").unwrap();
        let c = read_below(&root, &[0], Duration::from_millis(1));
        assert_eq!(c.steal_percent, None);
        assert_eq!(c.other_running, None);
        assert!(c.governors.is_empty());
        assert_eq!(c.load_1m, Some(0.5));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_live_machine_is_read() {
        // Over the check's own interval every CPU's ticks move (idle ones
        // count idle ticks): the two readings give a steal figure.
        let c = read_below(Path::new("/"), &[0], STEAL_INTERVAL);
        assert!(c.load_1m.is_some());
        assert!(c.other_running.is_some());
        let steal = c.steal_percent.expect("two readings of /proc/stat");
        assert!((0.0..=100.0).contains(&steal), "{steal}");
    }

    #[test]
    fn an_empty_governor_file_names_no_governor() {
        let root =
            std::env::temp_dir().join(format!("numaprobe-syscheck-gov-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (cpu, text) in [(0, "\n"), (1, "powersave\n"), (2, "powersave\n")] {
            let dir = root.join(format!("sys/devices/system/cpu/cpu{cpu}/cpufreq"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("scaling_governor"), text).unwrap();
        }
        let c = read_below(&root, &[0, 1, 2], Duration::from_millis(1));
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(c.governors, vec!["powersave".to_string()]);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    }
}
