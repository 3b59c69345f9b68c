//! The study after a stop was requested (SIGINT/SIGTERM raise the flag): a
//! case that is running ends after the round in progress with the samples
//! taken so far (at least one), so the interrupted report keeps it. Its own
//! test binary, because the flag is process-wide.

use numaprobe_core::experiments::study::label::Mix;
use numaprobe_core::experiments::study::runner::{run_case, RunConfig};
use numaprobe_core::experiments::study::{parse_labels, plan_custom, HopMap, PlanOptions};

#[test]
fn a_case_stops_after_one_sample_once_a_stop_is_requested() {
    let topo = numaprobe_core::topology::read(std::path::Path::new("/")).unwrap();
    let hops = HopMap::from_topology(&topo);
    let labels = parse_labels(&["0.0.r.0"]).unwrap();
    let plan = plan_custom(&topo, &hops, &[labels], &PlanOptions::default()).unwrap();
    let case = &plan.experiments[0].cases[0];
    let cfg = RunConfig {
        size_bytes: 1 << 20,
        passes: 1,
        repeats: 50,
        warmup: 1,
        mix: Mix::Fixed,
    };
    let whole = run_case(case, &cfg).unwrap();
    assert_eq!(whole.samples.len(), 50);
    numaprobe_core::cancel::request();
    let cut = run_case(case, &cfg).unwrap();
    // The warm-up, then one kept sample, then the stop.
    assert_eq!(cut.samples.len(), 1);
    assert!(cut.total.median > 0.0);
}
