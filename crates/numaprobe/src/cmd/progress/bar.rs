//! The progress bar on a terminal, drawn by `indicatif`: one bar for the
//! whole run with the counts, the time so far, the ETA and the cell being
//! measured. Its clock and its fill never run backwards, whatever the
//! snapshots say; both are pure functions of the time given (tests feed
//! a made-up clock). It is made only when stderr is a terminal (see `Line`), so a
//! pipe or a CI log never receives an escape code from it.

use super::text::{counts, elapsed_eta};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use numaprobe_core::job::observer::Status;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the bar is redrawn between two updates: the spinner turns and
/// the elapsed time and ETA go on, so a long cell does not look hung.
const TICK: Duration = Duration::from_millis(250);

/// The run's clock as the last update gave it, read at every redraw.
#[derive(Clone, Copy)]
struct Clock {
    /// When the run started (now minus its elapsed time).
    origin: Instant,
    /// When it is expected to end; None while unknown.
    end: Option<Instant>,
}

impl Clock {
    /// The clock a snapshot taken at `now` gives.
    fn at(now: Instant, s: &Status) -> Clock {
        Clock {
            origin: now
                .checked_sub(Duration::from_secs_f64(s.elapsed_s.max(0.0)))
                .unwrap_or(now),
            end: s.eta_s.map(|e| now + Duration::from_secs_f64(e.max(0.0))),
        }
    }

    /// The clock after a snapshot taken at `now`: its end is the
    /// snapshot's, its origin only ever moves earlier. Reporters count from
    /// different starts (the job from its calibration, a phase from the
    /// command's start); taking the later one would run the elapsed time
    /// backwards on the terminal (3.1 s, then 2.3 s).
    fn update(&mut self, now: Instant, s: &Status) {
        let next = Clock::at(now, s);
        self.origin = self.origin.min(next.origin);
        self.end = next.end;
    }

    /// How far the run is at `now`, in thousandths: by time (elapsed over
    /// elapsed plus ETA) when the ETA is known, else by the snapshot's
    /// counts; never less than `shown`, what the bar already showed, and
    /// never full before the end (the bar read full at "loaded latency 7/14"
    /// when a later phase's counts were read against the matrices').
    fn permille(&self, now: Instant, s: &Status, shown: u64) -> u64 {
        let elapsed = now.saturating_duration_since(self.origin).as_secs_f64();
        let f = match self.end {
            Some(end) => {
                let left = end.saturating_duration_since(now).as_secs_f64();
                if elapsed + left > 0.0 {
                    elapsed / (elapsed + left)
                } else {
                    0.0
                }
            }
            None if s.total > 0 => s.done.min(s.total) as f64 / s.total as f64,
            None => 0.0,
        };
        ((f * 1000.0) as u64).min(999).max(shown)
    }

    fn text(&self, now: Instant) -> String {
        elapsed_eta(
            now.saturating_duration_since(self.origin).as_secs_f64(),
            self.end
                .map(|e| e.saturating_duration_since(now).as_secs_f64()),
        )
    }
}

pub struct Bar {
    bar: ProgressBar,
    clock: Arc<Mutex<Clock>>,
}

impl Bar {
    pub fn new() -> Bar {
        let now = Instant::now();
        let clock = Arc::new(Mutex::new(Clock {
            origin: now,
            end: None,
        }));
        let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
        bar.set_style(style(clock.clone()));
        bar.enable_steady_tick(TICK);
        Bar { bar, clock }
    }

    pub fn show(&self, s: &Status, label: &str) {
        let now = Instant::now();
        let mut permille = self.bar.position();
        if let Ok(mut c) = self.clock.lock() {
            c.update(now, s);
            permille = c.permille(now, s, permille);
        }
        // Counts first: with the steady tick on, moving the bar does not
        // draw, setting a text does, so the last call draws it all at once.
        self.bar.set_position(permille);
        self.bar.set_prefix(counts(s, " | "));
        self.bar.set_message(label.to_string());
    }

    /// Run `f` (which prints a line of its own) with the bar taken away, and
    /// draw the bar again below it.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Take the bar off the terminal for good.
    pub fn clear(self) {
        self.bar.finish_and_clear();
    }
}

/// `{spinner} latency 37/256 | total 37/512 [=====>    ] 41 s elapsed, ETA 19 s  CELL`;
/// `wide_msg` (the cell) is cut to the terminal's width, so the bar never
/// wraps (a wrapped line cannot be redrawn in place).
fn style(clock: Arc<Mutex<Clock>>) -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix} [{bar:24}] {times}  {wide_msg}")
        .expect("the template is valid")
        .progress_chars("=> ")
        .with_key(
            "times",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                if let Ok(c) = clock.lock() {
                    let _ = w.write_str(&c.text(Instant::now()));
                }
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_goes_on_between_updates_and_the_eta_counts_down() {
        let t0 = Instant::now();
        let c = Clock {
            origin: t0,
            end: Some(t0 + Duration::from_secs(30)),
        };
        assert_eq!(
            c.text(t0 + Duration::from_secs(12)),
            "12 s elapsed, ETA 18 s"
        );
        // Past the expected end the ETA stays at zero, never negative.
        assert_eq!(
            c.text(t0 + Duration::from_secs(40)),
            "40 s elapsed, ETA 0.0 s"
        );
        // From a snapshot: 10 s elapsed and 20 s to go, read 2 s later.
        let snap = Status {
            phase: "latency".into(),
            phase_done: 1,
            phase_total: 3,
            done: 1,
            total: 3,
            elapsed_s: 10.0,
            eta_s: Some(20.0),
        };
        let t1 = t0 + Duration::from_secs(100);
        assert_eq!(
            Clock::at(t1, &snap).text(t1 + Duration::from_secs(2)),
            "12 s elapsed, ETA 18 s"
        );
        let unknown = Clock { end: None, ..c };
        assert_eq!(
            unknown.permille(t0, &snap, 0),
            333,
            "by counts while no ETA"
        );
        assert_eq!(
            unknown.text(t0 + Duration::from_millis(4200)),
            "4.2 s elapsed"
        );
    }

    fn snap(phase: &str, done: usize, total: usize, elapsed_s: f64, eta_s: f64) -> Status {
        Status {
            eta_s: Some(eta_s),
            ..Status::single(phase, done, total, elapsed_s, None)
        }
    }

    #[test]
    fn elapsed_never_runs_backwards_when_reporters_count_from_different_starts() {
        let t0 = Instant::now();
        let mut c = Clock::at(t0, &snap("latency", 1, 4, 3.1, 9.0));
        // The next reporter counts from a later start: 2.3 s at t0 + 0.1 s.
        c.update(
            t0 + Duration::from_millis(100),
            &snap("c2c", 1, 3, 2.3, 5.0),
        );
        assert_eq!(
            c.text(t0 + Duration::from_millis(100)),
            "3.2 s elapsed, ETA 5.0 s"
        );
        // An earlier start moves the origin back: elapsed grows.
        c.update(
            t0 + Duration::from_millis(200),
            &snap("c2c", 2, 3, 7.0, 4.0),
        );
        assert_eq!(
            c.text(t0 + Duration::from_millis(200)),
            "7.0 s elapsed, ETA 4.0 s"
        );
    }

    #[test]
    fn the_bar_fills_by_time_never_backwards_and_never_full_before_the_end() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut c = Clock::at(t0, &snap("latency", 14, 14, 10.0, 30.0));
        // Every matrix cell done is a quarter of the run's time, not all of it.
        let p1 = c.permille(t0, &snap("latency", 14, 14, 10.0, 30.0), 0);
        assert_eq!(p1, 250);
        // A later phase's own counts (7 of 14) do not fill the bar, and a
        // longer ETA does not empty it.
        let s = snap("loaded latency", 7, 14, 12.0, 60.0);
        c.update(at(2000), &s);
        assert_eq!(c.permille(at(2000), &s, p1), p1);
        // At and past the expected end: 999, never a full bar while running.
        let s = snap("cache sweep", 3, 4, 40.0, 0.0);
        c.update(at(30_000), &s);
        assert_eq!(c.permille(at(31_000), &s, 500), 999);
    }
}
