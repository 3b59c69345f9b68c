//! The main job after a cancellation (SIGINT/SIGTERM raise the flag): the
//! phases that have not started are skipped, said so, and the job is not
//! complete. Its own test binary, because the flag is process-wide.

use numaprobe_core::experiments::Progress;
use numaprobe_core::job::{self, keeper::Observer, plan::Coverage, Phase};
use std::time::Duration;

#[derive(Default)]
struct Phases(Vec<Phase>);
impl Progress for Phases {}
impl Observer for Phases {
    fn phase_started(&mut self, p: Phase, _cells: usize) {
        self.0.push(p);
    }
}

#[test]
fn phases_not_started_are_skipped_and_the_job_is_incomplete() {
    let topo = numaprobe_core::topology::read(std::path::Path::new("/")).unwrap();
    // Nothing is measured (the flag is raised before the job runs), so the
    // budget costs no time: a minute, which holds a cell on any host however
    // loaded, where a plan from a short one may be a refusal.
    let job = job::prepare(
        &topo,
        &job::Config {
            budget: Duration::from_secs(60),
            size: Some(8 << 20),
        },
    )
    .unwrap();
    numaprobe_core::cancel::request();
    let mut seen = Phases::default();
    let out = job::run(&job, &mut seen).unwrap();
    assert!(seen.0.is_empty(), "no phase starts: {:?}", seen.0);
    assert!(!out.record.complete);
    assert!(out.latency.is_none() && out.bandwidth.is_none());
    for p in &out.record.phases {
        assert_eq!(p.plan.coverage, Coverage::Skipped);
        assert_eq!(p.measured_cells, 0);
        assert!(!p.plan.skipped.is_empty());
        assert!(p.plan.reason.as_deref().unwrap().contains("interrupted"));
    }
}
