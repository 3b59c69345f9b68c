//! How long [`super::repeat_held`]'s next sample is: its usual length
//! divided by a power of two, quartered at each loss until one sample
//! holds, then halved when many samples are lost (more of
//! them then fit between two preemptions) and doubled back, never past the
//! usual length, once they hold again. A neighbour that goes quiet leaves
//! the rest of a cell with samples of its usual length, not tiny ones whose
//! fixed costs and spread are larger.
//!
//! A lengthening is a trial: on a machine that stays busy, samples of the
//! longer length are lost again and shorten at once. Each trial that fails
//! so doubles the run of held samples the next one waits for (up to
//! [`MAX_LENGTHEN_RUN`]), so a steady load settles at the length that holds
//! instead of losing samples to trial after trial; a trial that holds for a
//! whole run (the machine did get quieter) brings the wait back to
//! [`LENGTHEN_RUN`].

/// How many samples are looked back on to decide whether to shorten them:
/// two lost in at most eight shortens; one may be bad luck.
pub const SHORTEN_WINDOW: usize = 8;

/// What each lost sample divides the length by while none of the cell's
/// samples has held yet: the usual length is then longer than the thread
/// keeps its CPU, and halving after every second loss would spend a short
/// budget on lost samples (a 2 s cell beside busy loops lost its first four
/// 100 ms samples, about half a second of wall time each, and was left with
/// no figure). Four such losses reach [`MAX_SHORTEN`].
pub const FIRST_SHORTEN: u32 = 4;

/// The most a sample is shortened (its length divided by), when many are
/// set aside: 100 ms / 256 is 0.4 ms, below any scheduler's time slice.
pub const MAX_SHORTEN: u32 = 256;

/// Held samples in a row, at one length, after which the samples double
/// back toward their usual length: two windows without a loss.
pub const LENGTHEN_RUN: usize = 2 * SHORTEN_WINDOW;

/// The longest run a lengthening waits for after trials that failed: at
/// most one trial in this many held samples can lose any.
pub const MAX_LENGTHEN_RUN: usize = 16 * LENGTHEN_RUN;

/// The length of the next sample, as the divisor of its usual length, and
/// what decides the one after.
#[derive(Debug, Clone)]
pub struct Length {
    divisor: u32,
    most: u32,
    /// Samples and lost ones since the last change or window.
    window: usize,
    window_lost: usize,
    /// Held samples in a row at this length.
    run: usize,
    /// The run that lengthens.
    need: usize,
    /// The last change was a lengthening that has not yet held a run.
    trial: bool,
    /// A sample has held its CPU.
    held_any: bool,
}

impl Default for Length {
    fn default() -> Self {
        Length {
            divisor: 1,
            most: 1,
            window: 0,
            window_lost: 0,
            run: 0,
            need: LENGTHEN_RUN,
            trial: false,
            held_any: false,
        }
    }
}

impl Length {
    /// The divisor of the next sample's usual length (1: the whole).
    pub fn divisor(&self) -> u32 {
        self.divisor
    }

    /// The most the samples were divided by so far.
    pub fn most(&self) -> u32 {
        self.most
    }

    /// Record whether the last sample was lost, and set the next length.
    pub fn record(&mut self, lost: bool) {
        if !lost {
            self.held_any = true;
        } else if !self.held_any {
            self.divisor = (self.divisor * FIRST_SHORTEN).min(MAX_SHORTEN);
            self.most = self.most.max(self.divisor);
            self.changed();
            return;
        }
        self.window += 1;
        if lost {
            self.window_lost += 1;
            self.run = 0;
        } else {
            self.run += 1;
        }
        // Two lost since the last change or window (so a quarter or more
        // of at most eight samples): halve at once (a busy machine loses
        // the first two long samples, and waiting for eight would spend
        // the budget on lost ones).
        if self.window_lost >= 2 {
            if self.divisor < MAX_SHORTEN {
                self.divisor *= 2;
                self.most = self.most.max(self.divisor);
                if self.trial {
                    self.need = (self.need * 2).min(MAX_LENGTHEN_RUN);
                }
                self.trial = false;
            }
            self.changed();
        } else if self.run >= self.need {
            // A run held at this length: a trial borne out brings the wait
            // back to one run; and the samples lengthen while they can.
            if self.trial {
                self.need = LENGTHEN_RUN;
            }
            self.trial = self.divisor > 1;
            self.divisor = (self.divisor / 2).max(1);
            self.changed();
        } else if self.window >= SHORTEN_WINDOW {
            (self.window, self.window_lost) = (0, 0);
        }
    }

    fn changed(&mut self) {
        (self.window, self.window_lost, self.run) = (0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The divisors of the samples, one per verdict in `lost`.
    fn lengths(lost: impl IntoIterator<Item = bool>) -> (Vec<u32>, Length) {
        let mut l = Length::default();
        let mut out = Vec::new();
        for x in lost {
            out.push(l.divisor());
            l.record(x);
        }
        (out, l)
    }

    #[test]
    fn two_lost_in_a_quarter_halve_and_a_held_run_doubles_back() {
        // Two lost at once: halved; then 16 held: back to the whole.
        let (d, l) = lengths([false, true, true].into_iter().chain([false; 17]));
        assert_eq!(&d[..4], &[1, 1, 1, 2]);
        assert_eq!(d[3 + LENGTHEN_RUN - 1], 2);
        assert_eq!(d[3 + LENGTHEN_RUN], 1);
        assert_eq!((l.divisor(), l.most()), (1, 2));
        // Never past the usual length, however long the run.
        let (d, _) = lengths([false; 100]);
        assert!(d.iter().all(|&x| x == 1));
        // One lost in eight: neither shortens nor breaks the count of a
        // window; a loss restarts the run.
        let pattern = (0..64).map(|i| i % 8 == 7);
        let (d, l) = lengths(pattern);
        assert!(d.iter().all(|&x| x == 1));
        assert_eq!(l.most(), 1);
        let mut l = Length::default();
        l.record(false);
        for _ in 0..2 {
            l.record(true);
        }
        for _ in 0..LENGTHEN_RUN - 1 {
            l.record(false);
        }
        l.record(true);
        for _ in 0..LENGTHEN_RUN - 1 {
            l.record(false);
        }
        assert_eq!(l.divisor(), 2);
        l.record(false);
        assert_eq!(l.divisor(), 1);
    }

    #[test]
    fn two_lost_anywhere_in_eight_halve_and_sixteen_held_double_back() {
        // Two lost at the end of a window of eight: halved for the ninth.
        let (d, _) = lengths([false; 6].into_iter().chain([true; 2]).chain([false]));
        assert_eq!(d[..8], [1; 8]);
        assert_eq!(d[8], 2);
        // Then sixteen held samples at that length, and the next is whole.
        let (d, l) = lengths([false, true, true].into_iter().chain([false; 17]));
        assert_eq!(d[3..19], [2; 16]);
        assert_eq!(d[19], 1);
        assert_eq!(l.most(), 2);
    }

    #[test]
    fn the_most_is_kept_and_the_divisor_stops_at_its_bound() {
        let (d, l) = lengths([false].into_iter().chain([true; 40]));
        assert_eq!(*d.last().unwrap(), MAX_SHORTEN);
        assert_eq!((l.divisor(), l.most()), (MAX_SHORTEN, MAX_SHORTEN));
        // A run of held samples brings it back, one halving per run.
        let mut l = l;
        for _ in 0..LENGTHEN_RUN * 8 {
            l.record(false);
        }
        assert_eq!((l.divisor(), l.most()), (1, MAX_SHORTEN));
    }

    #[test]
    fn losses_before_any_held_sample_quarter_the_length_each() {
        // A cell whose first samples are all lost: each divides by four,
        // up to the bound, where two were needed for a halving.
        let (d, l) = lengths([true; 6].into_iter().chain([false]));
        assert_eq!(d, [1, 4, 16, 64, 256, 256, 256]);
        assert_eq!(l.most(), MAX_SHORTEN);
        // Once one held, a loss is judged as before: one alone does not
        // shorten, a second does, by half.
        let (d, _) = lengths([true, false, true, false, true, false]);
        assert_eq!(d, [1, 4, 4, 4, 4, 8]);
        // A sixteen-sample run after the quartering lengthens by half.
        let (d, _) = lengths([true].into_iter().chain([false; 17]));
        assert_eq!(d[1..17], [4; 16]);
        assert_eq!(d[17], 2);
    }

    /// Held samples until the length changes: how many it took.
    fn held_until_change(l: &mut Length) -> usize {
        let d = l.divisor();
        let mut n = 0;
        while l.divisor() == d && n < 10 * MAX_LENGTHEN_RUN {
            l.record(false);
            n += 1;
        }
        n
    }

    #[test]
    fn a_failed_lengthening_doubles_the_wait_and_one_that_holds_resets_it() {
        let mut l = Length::default();
        l.record(false);
        (0..4).for_each(|_| l.record(true));
        assert_eq!(l.divisor(), 4);
        // A run lengthens to 2; two lost there: back to 4, and each next
        // trial waits twice as long, up to the most.
        assert_eq!(held_until_change(&mut l), LENGTHEN_RUN);
        assert_eq!(l.divisor(), 2);
        let mut waits = Vec::new();
        for _ in 0..6 {
            l.record(true);
            l.record(true);
            assert_eq!(l.divisor(), 4);
            waits.push(held_until_change(&mut l));
            assert_eq!(l.divisor(), 2);
        }
        let r = LENGTHEN_RUN;
        assert_eq!(waits, vec![2 * r, 4 * r, 8 * r, 16 * r, 16 * r, 16 * r]);
        assert_eq!(16 * r, MAX_LENGTHEN_RUN);
        // This trial holds a whole run (the machine is quieter): it
        // lengthens after the wait it was given, and the next lengthening
        // waits a single run again.
        assert_eq!(held_until_change(&mut l), MAX_LENGTHEN_RUN);
        assert_eq!(l.divisor(), 1);
        // A run held at the whole length bears that trial out too: a busy
        // phase after it starts from the single run's wait.
        (0..LENGTHEN_RUN).for_each(|_| l.record(false));
        (0..4).for_each(|_| l.record(true));
        assert_eq!(l.divisor(), 4);
        assert_eq!(held_until_change(&mut l), LENGTHEN_RUN);
        assert_eq!(held_until_change(&mut l), LENGTHEN_RUN);
        assert_eq!(l.divisor(), 1);
        // Without that run, losses right after a lengthening fail it.
        (0..4).for_each(|_| l.record(true));
        assert_eq!(held_until_change(&mut l), 2 * LENGTHEN_RUN);
    }
}
