//! The progress bar on a terminal, drawn by `indicatif`: one bar for the
//! whole run with the counts, the time so far, the ETA and the cell being
//! measured. It is made only when stderr is a terminal (see `Line`), so a
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
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(style(clock.clone()));
        bar.enable_steady_tick(TICK);
        Bar { bar, clock }
    }

    pub fn show(&self, s: &Status, label: &str) {
        if let Ok(mut c) = self.clock.lock() {
            *c = Clock::at(Instant::now(), s);
        }
        // Counts first: with the steady tick on, moving the bar does not
        // draw, setting a text does, so the last call draws it all at once.
        self.bar.set_length(s.total as u64);
        self.bar.set_position(s.done.min(s.total) as u64);
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
            unknown.text(t0 + Duration::from_millis(4200)),
            "4.2 s elapsed"
        );
    }
}
