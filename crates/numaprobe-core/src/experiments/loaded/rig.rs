//! What a loaded-latency pair's threads share with their coordinator: the
//! commands and replies on their channels, the traffic counters and the
//! set-up every thread does first. The chase side (`run.rs`) and the load
//! threads (`load.rs`) both use it.

use super::loads_held::LoadId;
use crate::kernels::mix::Mix;
use crate::kernels::VectorWidth;
use crate::placement::{pin_current_thread, BufferSpec, NodeBuffer, PlacementCheck};
use crate::stats::{self, StopRule};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Mutex;

/// A load thread's byte counter, on its own lines so the counters do not
/// share one.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Counter(pub(super) AtomicU64);

/// What the rig's threads share with the coordinator.
pub(super) struct Shared {
    /// True while the load threads should generate traffic.
    pub(super) running: AtomicBool,
    /// Load threads generating right now.
    pub(super) active: AtomicUsize,
    pub(super) bytes: Vec<Counter>,
    /// Per load thread: how the chase reads its hold on its CPU
    /// (`loads_held.rs`), set once it is set up; None where it could not
    /// say.
    pub(super) ids: Mutex<Vec<Option<LoadId>>>,
}

pub(super) enum LoadCmd {
    Run {
        mix: Mix,
        delay: u32,
        width: VectorWidth,
    },
    Verify,
    Quit,
}

pub(super) enum ChaseCmd {
    /// Measure a point under the rule; true when the load threads run
    /// through it (their hold is read too).
    Measure(StopRule, bool),
    Verify,
    Quit,
}

/// One point as the chase thread measured it.
pub(super) struct ChasePoint {
    pub(super) measured: stats::Measured,
    pub(super) windows: Vec<f64>,
    /// Median over the samples of every thread's bytes over the sample's
    /// span, GB/s.
    pub(super) bandwidth_gbs: f64,
}

pub(super) enum Reply {
    Ready(Result<u32, String>),
    Point(Box<Result<ChasePoint, String>>),
    Ran,
    Checked(Result<PlacementCheck, String>),
}

/// Pin, allocate and touch: what every rig thread does first. A panic is
/// caught so the coordinator hears a reason, not silence.
pub(super) fn setup(cpu: u32, spec: &BufferSpec) -> Result<(u32, NodeBuffer), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let observed = pin_current_thread(&[cpu]).map_err(|e| e.to_string())?;
        // Pinned before the first touch: pages and page tables come from here.
        let mut buf = NodeBuffer::alloc(spec).map_err(|e| e.to_string())?;
        buf.touch();
        Ok((observed, buf))
    }))
    .unwrap_or_else(|_| Err("a measuring thread panicked".into()))
}
