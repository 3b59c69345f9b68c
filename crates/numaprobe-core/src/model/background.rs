//! Background load: what the note's "low / medium / high / very high
//! background load" under "under / high / full subscription" mean here.
//!
//! The note gives no numbers, so these are numaprobe's definitions, recorded
//! in every result (`BackgroundDefinitions`) and written in doc/commands/study.md and in
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

use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
