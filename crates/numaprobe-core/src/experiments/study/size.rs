//! How large the study's arrays are: every buffer alive at once (a case's
//! foreground arrays and its experiment's background buffers) within the
//! run's footprint limit ([`FootprintLimit`]), each kept above the caches.
//!
//! AMD 40555 sizes each thread's array at 64 MB, "significantly
//! larger than the cache size"; what matters is the second half. A thread's
//! array walked line by line only measures memory while it does not fit in
//! the last-level cache, so no array is made smaller than twice the LLC
//! (the rule `policy` follows for a sequential stream). One size serves the
//! whole plan, so the figures of one preset stay comparable; an experiment
//! whose buffers cannot all fit at that floor is left out with a note (the
//! planner's rule: what can run still runs), and when none fits the study is
//! refused with one line naming the limit and what would fit.

use super::plan::{ExperimentPlan, StudyPlan};
use super::LoadLevel;
use crate::placement::FootprintLimit;
use crate::units::format_size;

/// The note's array size.
pub const NOTE_SIZE: u64 = 64 << 20;

/// Arrays are sized in whole 2 MiB steps (a transparent huge page).
const STEP: u64 = 2 << 20;

/// Buffers of `e` alive at once: the largest case's arrays (cases run one
/// after another, each freeing its arrays) plus the background buffers,
/// which live through the whole experiment.
pub fn buffers_at_once(e: &ExperimentPlan) -> usize {
    let arrays = e.cases.iter().map(|c| c.threads.len()).max().unwrap_or(0);
    let background = if e.load == LoadLevel::None {
        0
    } else {
        e.background.cpus.len()
    };
    arrays + background
}

/// The smallest array that still measures memory: twice the last-level
/// cache (`llc`, when known), in whole 2 MiB steps, at least one step.
pub fn floor(llc: Option<u64>) -> u64 {
    let twice = llc.unwrap_or(0).saturating_mul(2);
    twice.div_ceil(STEP).max(1).saturating_mul(STEP)
}

/// The array size a default study wants: the note's 64 MiB, or the floor
/// when the caches are larger than the note's machine had.
pub fn wanted(llc: Option<u64>) -> u64 {
    NOTE_SIZE.max(floor(llc))
}

/// Why a study cannot run within the footprint limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("study: {buffers} buffers alive at once ({what}) need at least {} each, {} in total, above the footprint limit ({statement}); at most {fit} fit: {advice}", format_size(*floor), format_size(*floor * *buffers as u64))]
pub struct DoesNotFit {
    pub buffers: usize,
    pub what: String,
    pub floor: u64,
    pub statement: String,
    pub fit: usize,
    pub advice: String,
}

/// Size the arrays of `plan` within `limit`: the size of every array and
/// background buffer (at most `want`, at least [`floor`]`(llc)`), after
/// leaving out, with one note, the experiments that cannot fit at the
/// floor. An error when no experiment fits. A plan with no experiment (the
/// machine hosts none; its notes say why) keeps `want`.
pub fn fit(
    plan: &mut StudyPlan,
    limit: &FootprintLimit,
    llc: Option<u64>,
    want: u64,
) -> Result<u64, DoesNotFit> {
    let min = floor(llc).min(want);
    let fits = |e: &ExperimentPlan| limit.per_buffer(want, buffers_at_once(e)) >= min;
    if plan.experiments.is_empty() {
        return Ok(want);
    }
    if !plan.experiments.iter().any(fits) {
        // The experiment closest to fitting names what would.
        let e = plan
            .experiments
            .iter()
            .min_by_key(|e| buffers_at_once(e))
            .unwrap_or(&plan.experiments[0]);
        return Err(does_not_fit(e, limit, min));
    }
    let (kept, left): (Vec<ExperimentPlan>, Vec<ExperimentPlan>) =
        std::mem::take(&mut plan.experiments)
            .into_iter()
            .partition(fits);
    plan.experiments = kept;
    let most = plan
        .experiments
        .iter()
        .map(buffers_at_once)
        .max()
        .unwrap_or(1);
    let size = limit.per_buffer(want, most);
    if !left.is_empty() {
        let ids: Vec<&str> = left.iter().map(|e| e.id.as_str()).collect();
        let most_left = left.iter().map(buffers_at_once).min().unwrap_or(0);
        plan.notes.push(format!(
            "footprint: left out {} ({} or more buffers of at least {} do not fit the limit of {}); the rest runs with {} arrays",
            ids.join(", "),
            most_left,
            format_size(min),
            format_size(limit.limit_bytes),
            format_size(size)
        ));
    }
    Ok(size)
}

fn does_not_fit(e: &ExperimentPlan, limit: &FootprintLimit, min: u64) -> DoesNotFit {
    let buffers = buffers_at_once(e);
    let arrays = e.cases.iter().map(|c| c.threads.len()).max().unwrap_or(0);
    let background = buffers - arrays;
    let fit = (limit.buffers_bytes() / min.max(1)) as usize;
    let advice = if fit < arrays {
        format!("fewer threads per case (at most {fit})")
    } else {
        format!(
            "at most {} background thread(s): --subscription under, a lower --background or none",
            fit - arrays
        )
    };
    DoesNotFit {
        buffers,
        what: format!(
            "{arrays} array(s) and {background} background buffer(s) of {}",
            e.id
        ),
        floor: min,
        statement: limit.statement(),
        fit,
        advice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::study::testing::{quartet, synthetic};
    use crate::experiments::study::{
        parse_labels, plan_custom, plan_preset, HopMap, PlanOptions, Preset, Subscription,
    };

    const MIB: u64 = 1 << 20;

    fn limit(bytes: u64) -> FootprintLimit {
        // 12 % of the nodes: a limit of exactly `bytes` when bytes is a
        // multiple of 12.
        FootprintLimit::from_parts(bytes / 12 * 100, None)
    }

    #[test]
    fn the_floor_is_twice_the_llc_in_2mib_steps() {
        assert_eq!(floor(None), 2 * MIB);
        assert_eq!(floor(Some(0)), 2 * MIB);
        assert_eq!(floor(Some(16 * MIB)), 32 * MIB);
        assert_eq!(floor(Some(3 * MIB)), 6 * MIB);
        assert_eq!(floor(Some(MIB + 1)), 4 * MIB);
        assert_eq!(wanted(Some(16 * MIB)), 64 * MIB);
        assert_eq!(wanted(Some(480 * MIB)), 960 * MIB);
        assert_eq!(wanted(None), 64 * MIB);
    }

    #[test]
    fn crossfire_counts_the_case_arrays_and_the_background_together() {
        let t = quartet();
        let hm = HopMap::from_topology(&t);
        let p = plan_preset(&t, &hm, Preset::Crossfire, &PlanOptions::default()).unwrap();
        let counts: Vec<usize> = p.experiments.iter().map(buffers_at_once).collect();
        // idle: 2 arrays; low..very-high at high subscription: 2 + 5;
        // very-high at full: 2 + 6.
        assert_eq!(counts, [2, 7, 7, 7, 7, 8]);
    }

    #[test]
    fn a_roomy_limit_keeps_the_note_size_and_every_experiment() {
        let t = quartet();
        let hm = HopMap::from_topology(&t);
        let mut p = plan_preset(&t, &hm, Preset::Crossfire, &PlanOptions::default()).unwrap();
        let size = fit(&mut p, &limit(1200 * MIB), Some(16 * MIB), 64 * MIB).unwrap();
        assert_eq!(size, 64 * MIB);
        assert_eq!(p.experiments.len(), 6);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn a_tight_limit_shrinks_every_array_to_fit_the_largest_experiment() {
        let t = quartet();
        let hm = HopMap::from_topology(&t);
        let mut p = plan_preset(&t, &hm, Preset::Crossfire, &PlanOptions::default()).unwrap();
        // 8 buffers at once in the last experiment: 312 MiB less the
        // program's 16 MiB and the page tables is 294.8 MiB, / 8 = 36 MiB
        // in 2 MiB steps, above the 32 MiB floor.
        let l = limit(312 * MIB);
        let size = fit(&mut p, &l, Some(16 * MIB), 64 * MIB).unwrap();
        assert_eq!(size, 36 * MIB);
        assert_eq!(p.experiments.len(), 6);
        for e in &p.experiments {
            assert!(
                buffers_at_once(e) as u64 * size <= l.buffers_bytes(),
                "{}",
                e.id
            );
        }
    }

    #[test]
    fn experiments_that_cannot_fit_at_the_floor_are_left_out_with_one_note() {
        // The VM rig's two-node guest: 2 nodes x 2 cores.
        let t = synthetic(2, 2, Some(vec![vec![10, 20], vec![20, 10]]));
        let hm = HopMap::from_topology(&t);
        let mut p = plan_preset(&t, &hm, Preset::Crossfire, &PlanOptions::default()).unwrap();
        let before: Vec<usize> = p.experiments.iter().map(buffers_at_once).collect();
        assert_eq!(before, [2, 3, 3, 3, 3, 4]);
        let notes = p.notes.len();
        // 103.6 MiB of buffers under a 120 MiB limit: 3 of 34 MiB.
        let size = fit(&mut p, &limit(120 * MIB), Some(16 * MIB), 64 * MIB).unwrap();
        assert_eq!(size, 34 * MIB);
        assert_eq!(p.experiments.len(), 5);
        assert!(p.experiments.iter().all(|e| buffers_at_once(e) <= 3));
        assert_eq!(p.notes.len(), notes + 1);
        let note = p.notes.last().unwrap();
        assert!(note.contains("crossfire-ww-very-high-full"), "{note}");
        assert!(
            note.contains("4 or more buffers of at least 32 MiB"),
            "{note}"
        );
        assert!(note.contains("the limit of 120 MiB"), "{note}");
        assert!(!note.contains('\n'));
    }

    #[test]
    fn nothing_fitting_is_one_line_naming_the_limit_and_what_would_fit() {
        let t = synthetic(2, 4, None);
        let hm = HopMap::from_topology(&t);
        let opts = PlanOptions {
            load: Some(LoadLevel::High),
            subscription: Some(Subscription::Full),
            ..PlanOptions::default()
        };
        let labels = parse_labels(&["0.0.w.1", "1.0.w.1"]).unwrap();
        let mut p = plan_custom(&t, &hm, &[labels], &opts).unwrap();
        // 2 arrays + 6 background buffers of at least 32 MiB: 256 MiB; a
        // 120 MiB limit (103.6 MiB of buffers beside the program) holds 3.
        let e = fit(&mut p, &limit(120 * MIB), Some(16 * MIB), 64 * MIB).unwrap_err();
        assert_eq!(e.fit, 3);
        let s = e.to_string();
        assert!(!s.contains('\n'));
        assert!(
            s.starts_with("study: 8 buffers alive at once (2 array(s) and 6 background buffer(s)"),
            "{s}"
        );
        assert!(s.contains("at least 32 MiB each, 256 MiB in total"), "{s}");
        assert!(s.contains("at most 120 MiB"), "{s}");
        assert!(s.contains("at most 1 background thread(s)"), "{s}");
        // Room for the arrays and nothing more: no background thread.
        let e = fit(&mut p, &limit(84 * MIB), Some(16 * MIB), 64 * MIB).unwrap_err();
        assert_eq!(e.fit, 2);
        assert!(
            e.to_string().contains("at most 0 background thread(s)"),
            "{e}"
        );
        // Too small even for the arrays alone: fewer threads.
        let e = fit(&mut p, &limit(60 * MIB), Some(16 * MIB), 64 * MIB).unwrap_err();
        assert!(
            e.to_string().contains("fewer threads per case (at most 1)"),
            "{e}"
        );
        // The plan is left as it was.
        assert_eq!(p.experiments.len(), 1);
    }

    #[test]
    fn a_wanted_size_below_the_floor_is_its_own_floor() {
        let t = synthetic(1, 2, None);
        let hm = HopMap::from_topology(&t);
        let labels = parse_labels(&["0.0.w.0", "0.1.w.0"]).unwrap();
        let mut p = plan_custom(&t, &hm, &[labels], &PlanOptions::default()).unwrap();
        let size = fit(&mut p, &limit(96 * MIB), Some(64 * MIB), 4 * MIB).unwrap();
        assert_eq!(size, 4 * MIB);
    }

    #[test]
    fn a_plan_with_nothing_to_run_keeps_the_wanted_size() {
        let mut p = StudyPlan {
            preset: Some(Preset::SameNode),
            hop_map: HopMap::from_topology(&synthetic(1, 1, None)),
            experiments: Vec::new(),
            notes: vec!["same-node: one core".into()],
        };
        assert_eq!(fit(&mut p, &limit(0), None, 64 * MIB).unwrap(), 64 * MIB);
        assert_eq!(p.notes.len(), 1);
    }
}
