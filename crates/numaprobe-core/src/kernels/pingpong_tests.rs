//! Tests of the cache-line ping-pong: a pair's two states measured on this
//! machine, the refusal of a sample no longer than the clock, the rule that
//! a pair sample holds only when both threads held their CPU, the chase's
//! one cycle, and a partner that never answers.

use super::*;
use crate::placement::allowed_cpus;

fn tiny() -> StopRule {
    StopRule {
        warmup: 1,
        min_samples: 3,
        max_samples: 50,
        cv_target: 0.0,
        budget: Duration::from_millis(20),
    }
}

#[test]
fn a_pair_gives_a_positive_finite_latency_in_both_states() {
    let cpus = allowed_cpus().unwrap();
    let (a, b) = (cpus[0], *cpus.get(1).unwrap_or(&cpus[0]));
    for (state, lines) in [
        (LineState::Hitm, HitmLines::One),
        (LineState::Hitm, HitmLines::Two),
        (LineState::Shared, HitmLines::One),
    ] {
        let m = match measure_pair(a, b, state, lines, &tiny(), DEFAULT_TIMEOUT) {
            Ok(m) => m,
            // An emulated CPU (QEMU TCG) can take longer to read its
            // clock than a sample takes: the pair is then refused, which
            // is this kernel's answer on such a clock.
            Err(PingPongError::BelowClock { .. }) => continue,
            Err(e) => panic!("{state:?} {lines:?}: {e}"),
        };
        assert_eq!(m.observed, (a, b));
        let s = m.measured.summary;
        assert!(
            s.median.is_finite() && s.median > 0.0,
            "{state:?} {lines:?}: {s:?}"
        );
        // On a busy host some samples lose a CPU and are set aside:
        // what holds anywhere is that the figure has samples, and one
        // with fewer than three kept says so.
        let kept = m.measured.samples.len();
        assert!(kept >= 1, "{m:?}");
        if kept < 3 {
            assert!(!m.measured.flags("ns").is_empty(), "{m:?}");
        }
    }
}

fn measured(median: f64) -> Measured {
    let samples = vec![median; 3];
    Measured {
        summary: stats::Summary::of(&samples).unwrap(),
        samples,
        stop: stats::StopReason::MaxSamples,
        warmup_runs: 0,
        elapsed_s: 0.0,
        set_aside: Default::default(),
    }
}

#[test]
fn a_sample_no_longer_than_the_clock_is_refused_with_its_figures() {
    // 64 line reads of 6 ns: 384 ns, against clocks of 100 and 500 ns.
    assert!(outlasts_clock(&measured(6.0), LineState::Shared, 100.0).is_ok());
    let e = outlasts_clock(&measured(6.0), LineState::Shared, 500.0).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("64 line reads, median 384 ns"), "{text}");
    assert!(text.contains("(500 ns)"), "{text}");
    // Zero is refused whatever the clock costs.
    assert!(outlasts_clock(&measured(0.0), LineState::Shared, 0.0).is_err());
    assert!(outlasts_clock(&measured(0.0), LineState::Hitm, 0.0).is_err());
    // A HITM sample is 64 round trips of two one-way transfers: 3 ns
    // one way is 384 ns a sample.
    assert!(outlasts_clock(&measured(3.0), LineState::Hitm, 380.0).is_ok());
    assert!(outlasts_clock(&measured(3.0), LineState::Hitm, 390.0).is_err());
    assert!(outlasts_clock(&measured(3.0), LineState::Hitm, 384.0).is_err());
}

#[test]
fn a_verdict_carries_its_sample_and_reason_and_is_never_zero() {
    for lost in [None, Some(Lost::Preempted), Some(Lost::OffCpu)] {
        for seq in [1u64, 2, 77, 1 << 40] {
            let v = verdict(seq, lost);
            assert_ne!(v, 0);
            assert_eq!(read_verdict(v), (seq, lost));
        }
    }
    // The line's first value is no sample's.
    assert_eq!(read_verdict(0), (0, None));
}

#[test]
fn a_pair_sample_holds_only_when_both_threads_held() {
    use Lost::*;
    assert_eq!(pair_taken(30.0, None, None), Taken::held(30.0));
    assert_eq!(pair_taken(30.0, None, Some(OffCpu)).lost, Some(OffCpu));
    assert_eq!(
        pair_taken(30.0, Some(Preempted), None).lost,
        Some(Preempted)
    );
    assert_eq!(
        pair_taken(30.0, Some(OffCpu), Some(Preempted)).lost,
        Some(OffCpu)
    );
    // Gathered: every third sample's partner lost its CPU (and read
    // 158 ns): those are set aside and counted, the figure is the
    // held samples' 31 ns, unflagged.
    let rule = StopRule {
        warmup: 0,
        min_samples: 9,
        max_samples: 9,
        cv_target: 0.0,
        budget: Duration::from_secs(60),
    };
    let mut i = 0;
    let m = stats::repeat_held_with(
        &rule,
        |_| {
            i += 1;
            let other = (i % 3 == 0).then_some(Preempted);
            Ok::<_, ()>(pair_taken(
                if other.is_some() { 158.0 } else { 31.0 },
                None,
                other,
            ))
        },
        || Duration::ZERO,
        || false,
    )
    .unwrap();
    assert_eq!(m.samples.len(), 9);
    assert!(m.samples.iter().all(|&v| v == 31.0));
    assert_eq!(m.set_aside.preempted, 4);
    assert_eq!(m.summary.median, 31.0);
    assert!(m.flags("ns").is_empty(), "{:?}", m.flags("ns"));
}

#[test]
fn the_chain_is_one_cycle_over_every_line() {
    let c = chain(7);
    let mut seen = [false; SHARED_LINES];
    let mut i = 0usize;
    for _ in 0..SHARED_LINES {
        assert!(!seen[i]);
        seen[i] = true;
        i = c.0[i].v.load(Ordering::Relaxed) as usize;
    }
    assert_eq!(i, 0);
    assert!(seen.iter().all(|&x| x));
}

#[test]
fn a_partner_that_never_answers_times_out() {
    let ctl = Control::new();
    let e = wait_for(&ctl.ping, &ctl.abort, Duration::from_millis(5), 0, 1, |v| {
        v == 1
    })
    .unwrap_err();
    assert!(matches!(e, PingPongError::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("CPU 0 waited"), "{e}");
    // The other side sees the abort and stops too.
    let e = wait_for(&ctl.turn, &ctl.abort, DEFAULT_TIMEOUT, 1, 0, |v| v == 1).unwrap_err();
    assert!(matches!(e, PingPongError::Aborted(1)));
}
