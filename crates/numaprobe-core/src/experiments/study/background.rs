//! Background load at run time: which CPUs get a background thread, and the
//! threads themselves. What the levels and subscriptions mean (numaprobe's
//! definitions, recorded in every result) is in `model::background`.

pub use crate::model::background::{
    BackgroundDefinitions, BackgroundPlacement, LevelDefinition, LoadLevel, Subscription,
    SubscriptionDefinition, PERIOD_US,
};
use crate::topology::Topology;
use std::collections::BTreeSet;

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
