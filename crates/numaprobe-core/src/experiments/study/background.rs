//! Background load: what the note's "low / medium / high / very high
//! background load" under "under / high / full subscription" mean here.
//!
//! The note gives no numbers, so these are numaprobe's definitions, recorded
//! in every result (`BackgroundDefinitions`) and written in the README and in
//! `--help`:
//!
//! * The *remaining cores* are the allowed physical cores (one CPU per core)
//!   that no foreground thread uses, counting a core as used when any of its
//!   SMT siblings runs a foreground thread.
//! * The *subscription* says how many of the R remaining cores get one
//!   background thread: `under` floor(R/4), `high` ceil(3R/4) but at most
//!   R-1 so one core stays idle, `full` all R (total threads = cores, as in
//!   the note). Threads are dealt to nodes round-robin so every node is loaded.
//! * The *load level* says how hard each background thread works: in every
//!   period of `PERIOD_US` microseconds it streams stores (one per 64-byte
//!   line) through its own buffer, bound to its own node, for the level's duty
//!   cycle and sleeps for the rest: `low` 25 %, `medium` 50 %, `high` 75 %,
//!   `very-high` 100 % (never sleeps). `none` starts no thread (the note's
//!   "idle system").

use crate::topology::Topology;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Length of one duty-cycle period.
pub const PERIOD_US: u64 = 1000;

/// How hard each background thread works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadLevel {
    None,
    Low,
    Medium,
    High,
    VeryHigh,
}

impl LoadLevel {
    pub const ALL: [LoadLevel; 5] = [
        LoadLevel::None,
        LoadLevel::Low,
        LoadLevel::Medium,
        LoadLevel::High,
        LoadLevel::VeryHigh,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LoadLevel::None => "none",
            LoadLevel::Low => "low",
            LoadLevel::Medium => "medium",
            LoadLevel::High => "high",
            LoadLevel::VeryHigh => "very-high",
        }
    }

    /// Share of each period a background thread spends moving memory.
    pub fn duty_percent(self) -> u32 {
        match self {
            LoadLevel::None => 0,
            LoadLevel::Low => 25,
            LoadLevel::Medium => 50,
            LoadLevel::High => 75,
            LoadLevel::VeryHigh => 100,
        }
    }

    /// The note's wording for titles.
    pub fn wording(self) -> &'static str {
        match self {
            LoadLevel::None => "an idle system",
            LoadLevel::Low => "low background load",
            LoadLevel::Medium => "medium background load",
            LoadLevel::High => "high background load",
            LoadLevel::VeryHigh => "very high background load",
        }
    }

    pub fn parse(s: &str) -> Option<LoadLevel> {
        LoadLevel::ALL.into_iter().find(|l| l.name() == s)
    }
}

/// How many of the remaining cores carry a background thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Subscription {
    Under,
    High,
    Full,
}

impl Subscription {
    pub const ALL: [Subscription; 3] =
        [Subscription::Under, Subscription::High, Subscription::Full];

    pub fn name(self) -> &'static str {
        match self {
            Subscription::Under => "under",
            Subscription::High => "high",
            Subscription::Full => "full",
        }
    }

    pub fn wording(self) -> &'static str {
        match self {
            Subscription::Under => "under subscription",
            Subscription::High => "high subscription",
            Subscription::Full => "full subscription",
        }
    }

    /// The rule in words, as recorded in results.
    pub fn rule(self) -> &'static str {
        match self {
            Subscription::Under => "floor(R/4) of the R remaining cores",
            Subscription::High => {
                "ceil(3R/4) of the R remaining cores, at most R-1 (one stays idle)"
            }
            Subscription::Full => "all R remaining cores (threads = cores)",
        }
    }

    /// Background threads for `remaining` free cores.
    pub fn threads_for(self, remaining: usize) -> usize {
        match self {
            Subscription::Under => remaining / 4,
            Subscription::High => (3 * remaining).div_ceil(4).min(remaining.saturating_sub(1)),
            Subscription::Full => remaining,
        }
    }

    pub fn parse(s: &str) -> Option<Subscription> {
        Subscription::ALL.into_iter().find(|l| l.name() == s)
    }
}

/// One load level's definition, for the result document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelDefinition {
    pub name: String,
    pub duty_percent: u32,
}

/// One subscription's definition, for the result document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionDefinition {
    pub name: String,
    pub rule: String,
}

/// Everything a reader needs to know what "high background load" meant in a
/// result, carried by every study document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundDefinitions {
    pub remaining_cores: String,
    pub kernel: String,
    pub period_us: u64,
    pub levels: Vec<LevelDefinition>,
    pub subscriptions: Vec<SubscriptionDefinition>,
}

impl BackgroundDefinitions {
    pub fn current() -> BackgroundDefinitions {
        BackgroundDefinitions {
            remaining_cores: "allowed physical cores (one CPU per core) with no foreground thread on any of their SMT siblings; background threads are dealt to nodes round-robin".into(),
            kernel: "write-only, one 8-byte store per 64-byte line, over a private buffer of --size bytes bound (mbind) to the background thread's own node, for duty_percent of every period, then sleep".into(),
            period_us: PERIOD_US,
            levels: LoadLevel::ALL
                .iter()
                .map(|l| LevelDefinition {
                    name: l.name().into(),
                    duty_percent: l.duty_percent(),
                })
                .collect(),
            subscriptions: Subscription::ALL
                .iter()
                .map(|s| SubscriptionDefinition {
                    name: s.name().into(),
                    rule: s.rule().into(),
                })
                .collect(),
        }
    }
}

/// The CPUs that get a background thread, and how many cores were free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundPlacement {
    /// Allowed physical cores left after the foreground took its own.
    pub remaining_cores: usize,
    /// One CPU per background thread, in the order they are started.
    pub cpus: Vec<u32>,
}

/// Choose background CPUs for `level` under `subscription`, keeping off every
/// core a foreground thread uses (`foreground` are CPU numbers).
pub fn place_background(
    topo: &Topology,
    foreground: &[u32],
    level: LoadLevel,
    subscription: Subscription,
) -> BackgroundPlacement {
    // Cores touched by the foreground, by their machine-wide key.
    let busy: BTreeSet<_> = foreground
        .iter()
        .filter_map(|&c| topo.cpu(c))
        .map(|c| topo.core_key(c))
        .collect();
    let per_node: Vec<Vec<u32>> = topo
        .allowed_cpu_nodes()
        .into_iter()
        .map(|n| {
            topo.allowed_core_cpus_of_node(n)
                .into_iter()
                .filter(|&c| {
                    topo.cpu(c)
                        .map(|cpu| !busy.contains(&topo.core_key(cpu)))
                        .unwrap_or(false)
                })
                .collect()
        })
        .collect();
    let remaining: usize = per_node.iter().map(Vec::len).sum();
    let want = if level == LoadLevel::None {
        0
    } else {
        subscription.threads_for(remaining)
    };
    // Round-robin over nodes so a partial subscription loads every node.
    let mut cpus = Vec::with_capacity(want);
    let mut round = 0;
    while cpus.len() < want {
        for node in &per_node {
            if let Some(&c) = node.get(round) {
                if cpus.len() < want {
                    cpus.push(c);
                }
            }
        }
        round += 1;
    }
    BackgroundPlacement {
        remaining_cores: remaining,
        cpus,
    }
}

/// Background threads running: started before an experiment's first case,
/// stopped (and joined) after its last.
pub struct BackgroundLoad {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl BackgroundLoad {
    /// Start one background thread per CPU in `cpus` (each pinned, its
    /// buffer of `size` bytes bound to the CPU's node and touched before this
    /// returns), working at `level`. `node_of` maps a CPU to its node.
    pub fn start(
        cpus: &[u32],
        node_of: impl Fn(u32) -> Option<u32>,
        level: LoadLevel,
        size: usize,
    ) -> Result<BackgroundLoad, super::StudyError> {
        use crate::placement::{pin_current_thread, BufferSpec, MemPolicy, NodeBuffer, PageKind};
        use std::sync::atomic::AtomicBool;
        use std::sync::{mpsc, Arc};
        let stop = Arc::new(AtomicBool::new(false));
        let mut load = BackgroundLoad {
            stop: stop.clone(),
            handles: Vec::new(),
        };
        if level == LoadLevel::None || cpus.is_empty() {
            return Ok(load);
        }
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), super::StudyError>>();
        for &cpu in cpus {
            let node = node_of(cpu).ok_or(super::StudyError::CpuWithoutNode(cpu))?;
            let stop = stop.clone();
            let ready = ready_tx.clone();
            let duty = level.duty_percent();
            load.handles.push(std::thread::spawn(move || {
                let setup = (|| -> Result<NodeBuffer, super::StudyError> {
                    pin_current_thread(&[cpu])?;
                    let spec = BufferSpec::new(size, MemPolicy::Bind(node), PageKind::Small);
                    let mut buf = NodeBuffer::alloc(&spec)?;
                    buf.touch();
                    Ok(buf)
                })();
                let mut buf = match setup {
                    Ok(b) => {
                        let _ = ready.send(Ok(()));
                        b
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                duty_cycle(&mut buf, duty, &stop);
            }));
        }
        drop(ready_tx);
        for _ in cpus {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    load.stop();
                    return Err(e);
                }
                Err(_) => {
                    load.stop();
                    return Err(super::StudyError::ThreadPanicked);
                }
            }
        }
        Ok(load)
    }

    /// Threads currently running.
    pub fn threads(&self) -> usize {
        self.handles.len()
    }

    /// Stop every background thread and wait for it.
    pub fn stop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl Drop for BackgroundLoad {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Bytes a background thread writes between two looks at the clock and the
/// stop flag: small enough to keep the duty cycle's edges sharp (tens of
/// microseconds), large enough that reading the clock costs nothing.
const CHUNK: usize = 64 << 10;

/// Work for `duty` percent of every `PERIOD_US`, sleep for the rest, until
/// `stop` is set.
fn duty_cycle(
    buf: &mut crate::placement::NodeBuffer,
    duty: u32,
    stop: &std::sync::atomic::AtomicBool,
) {
    use crate::kernels::strided;
    use crate::timer::monotonic_raw_ns;
    use std::sync::atomic::Ordering;
    let period_ns = PERIOD_US * 1000;
    let busy_ns = period_ns * u64::from(duty) / 100;
    let len = buf.len();
    let mut offset = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let start = monotonic_raw_ns();
        while monotonic_raw_ns() - start < busy_ns {
            let n = CHUNK.min(len - offset);
            // SAFETY: [offset, offset + n) lies inside the touched buffer;
            // offsets are multiples of CHUNK, so the pointer stays aligned.
            let x = unsafe {
                let p = buf.as_mut_ptr().add(offset);
                strided::run(super::Access::Write, p, n, strided::LINE)
            };
            std::hint::black_box(x);
            offset = if offset + n >= len { 0 } else { offset + n };
            if stop.load(Ordering::Relaxed) {
                return;
            }
        }
        let spent = monotonic_raw_ns() - start;
        if spent < period_ns {
            std::thread::sleep(std::time::Duration::from_nanos(period_ns - spent));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::study::testing::synthetic;

    #[test]
    fn subscription_counts() {
        assert_eq!(Subscription::Under.threads_for(6), 1);
        assert_eq!(Subscription::High.threads_for(6), 5);
        assert_eq!(Subscription::Full.threads_for(6), 6);
        assert_eq!(Subscription::High.threads_for(1), 0);
        assert_eq!(Subscription::High.threads_for(16), 12);
        assert_eq!(Subscription::Full.threads_for(0), 0);
    }

    #[test]
    fn names_round_trip() {
        for l in LoadLevel::ALL {
            assert_eq!(LoadLevel::parse(l.name()), Some(l));
        }
        for s in Subscription::ALL {
            assert_eq!(Subscription::parse(s.name()), Some(s));
        }
        assert_eq!(LoadLevel::parse("extreme"), None);
        let d = BackgroundDefinitions::current();
        assert_eq!(d.levels.len(), 5);
        assert_eq!(d.levels[4].duty_percent, 100);
    }

    #[test]
    fn background_avoids_foreground_cores_and_spreads_over_nodes() {
        // 4 nodes x 2 cores; foreground on node 0 core 0 and node 1 core 0.
        let topo = synthetic(4, 2, None);
        let fg = [0, 2];
        let full = place_background(&topo, &fg, LoadLevel::VeryHigh, Subscription::Full);
        assert_eq!(full.remaining_cores, 6);
        assert_eq!(full.cpus, vec![1, 3, 4, 6, 5, 7]);
        let high = place_background(&topo, &fg, LoadLevel::Low, Subscription::High);
        assert_eq!(high.cpus.len(), 5);
        let none = place_background(&topo, &fg, LoadLevel::None, Subscription::Full);
        assert!(none.cpus.is_empty());
    }
}
