//! The launcher's rule for giving up on nodes: a node silent for the grace
//! period is lost, one still running the grace past its own time limit is
//! timed out, one of the job's nodes not started the grace after the first
//! did never started, and at the launcher's own deadline every node not
//! done is given up on, so the gather ends whatever srun does. The clock
//! is the caller's (`now` in each call), so the rule is tested without
//! waiting.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How a node was given up on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// It started, then said nothing for the grace period.
    Lost,
    /// Still running past its time limit and the grace.
    TimedOut,
    /// Its task never sent a line.
    NeverStarted,
}

/// A node the [`Watchdog`] gives up on, and why.
#[derive(Debug, PartialEq)]
pub struct GivenUp {
    pub node: String,
    pub gone: Gone,
    pub why: String,
}

/// Which nodes are still heard from, and when the launcher stops waiting.
/// The deadline is the first node's first frame plus the nodes' time limit
/// plus twice the grace (a node may start up to the grace after the first,
/// and is given up on the grace past its limit); before any node started,
/// it counts from the latest moment the job may start (`--start-timeout`
/// after srun was run).
#[derive(Debug)]
pub struct Watchdog {
    grace: Duration,
    timeout: Option<Duration>,
    asked: Vec<String>,
    /// The job's node count when the nodes are not known by name.
    count: Option<usize>,
    /// The latest moment the job may start: the deadline's start when no
    /// node ever sends a line.
    latest_start: Option<Instant>,
    first_start: Option<Instant>,
    began: BTreeMap<String, Instant>,
    last: BTreeMap<String, Instant>,
    done: BTreeSet<String>,
    given_up: BTreeSet<String>,
    /// Nodes of the count given up on without a name (Slurm did not say).
    unnamed: usize,
    /// Whether the count's shortfall was told (once).
    short_told: bool,
}

impl Watchdog {
    pub fn new(asked: &[String], grace: Duration) -> Self {
        Watchdog {
            grace,
            timeout: None,
            asked: asked.to_vec(),
            count: None,
            latest_start: None,
            first_start: None,
            began: BTreeMap::new(),
            last: BTreeMap::new(),
            done: BTreeSet::new(),
            given_up: BTreeSet::new(),
            unnamed: 0,
            short_told: false,
        }
    }

    /// Give up on a node still going `grace` past `timeout` after its
    /// first frame, and on the whole job at the deadline.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The job was asked for by count (`--nodes N`, no list): fewer nodes
    /// heard from than that is a shortfall to name.
    pub fn with_count(mut self, count: Option<usize>) -> Self {
        self.count = count;
        self
    }

    /// The deadline counts from `at` while no node has started.
    pub fn with_latest_start(mut self, at: Instant) -> Self {
        self.latest_start = Some(at);
        self
    }

    /// A frame came from `node` at `now`.
    pub fn heard(&mut self, node: &str, now: Instant) {
        self.first_start.get_or_insert(now);
        self.began.entry(node.to_string()).or_insert(now);
        self.last.insert(node.to_string(), now);
    }

    /// `node` said it is done.
    pub fn done(&mut self, node: &str) {
        self.done.insert(node.to_string());
    }

    /// When the launcher stops waiting for anything (None without a time
    /// limit, or before the job may start).
    pub fn deadline(&self) -> Option<Instant> {
        let from = self.first_start.or(self.latest_start)?;
        Some(from + self.timeout? + 2 * self.grace)
    }

    /// Whether the deadline has come by `now`.
    pub fn overdue(&self, now: Instant) -> bool {
        self.deadline().is_some_and(|d| now >= d)
    }

    /// Whether the grace after the first node's start has passed by `now`.
    fn others_late(&self, now: Instant) -> bool {
        self.first_start
            .is_some_and(|f| now.saturating_duration_since(f) >= self.grace)
    }

    /// With a node count: how many of the job's nodes have not been heard
    /// from, once the grace after the first one started (or the deadline)
    /// has passed; told once, None when none is missing. The caller names
    /// them ([`Watchdog::expect`]) or counts them ([`Watchdog::unnamed`]).
    pub fn short(&mut self, now: Instant) -> Option<usize> {
        let count = self.count?;
        if self.short_told || !(self.others_late(now) || self.overdue(now)) {
            return None;
        }
        self.short_told = true;
        let missing = count.saturating_sub(self.last.len());
        (missing > 0).then_some(missing)
    }

    /// Nodes of the job learnt by name (Slurm's list for a count): those
    /// not heard from are given up on as never started by the next check.
    pub fn expect(&mut self, names: &[String]) {
        for n in names {
            if !self.asked.contains(n) && !self.last.contains_key(n) {
                self.asked.push(n.clone());
            }
        }
    }

    /// `n` nodes of the count given up on without a name.
    pub fn unnamed(&mut self, n: usize) {
        self.unnamed += n;
    }

    /// Whether `node` was heard from.
    pub fn was_heard(&self, node: &str) -> bool {
        self.last.contains_key(node)
    }

    /// The nodes given up on by `now` (each once), with why.
    pub fn check(&mut self, now: Instant) -> Vec<GivenUp> {
        let mut out = Vec::new();
        let g = self.grace.as_secs_f64();
        let overdue = self.overdue(now);
        let given = |node: &String, gone: Gone, why: String| GivenUp {
            node: node.clone(),
            gone,
            why,
        };
        for (node, at) in &self.last {
            if self.done.contains(node) || self.given_up.contains(node) {
                continue;
            }
            if now.saturating_duration_since(*at) >= self.grace {
                out.push(given(
                    node,
                    Gone::Lost,
                    format!("nothing from it for {g:.0} s (--grace) after it started; its slurmd, slurmstepd or the machine died"),
                ));
                continue;
            }
            let Some(limit) = self.timeout else { continue };
            let ran = now.saturating_duration_since(self.began[node]);
            let l = limit.as_secs_f64();
            if ran >= limit + self.grace {
                out.push(given(
                    node,
                    Gone::TimedOut,
                    format!(
                        "still running {:.0} s after it started, past its --node-timeout of {l:.0} s and --grace of {g:.0} s; given up on and its task ended",
                        ran.as_secs_f64()
                    ),
                ));
            } else if overdue {
                out.push(given(
                    node,
                    Gone::TimedOut,
                    format!(
                        "still running at the launcher's deadline, {:.0} s after it started ({l:.0} s of --node-timeout and twice {g:.0} s of --grace after the first node started); given up on and its task ended",
                        ran.as_secs_f64()
                    ),
                ));
            }
        }
        let late = self.others_late(now);
        for node in &self.asked {
            if self.last.contains_key(node) || self.given_up.contains(node) {
                continue;
            }
            if late {
                out.push(given(
                    node,
                    Gone::NeverStarted,
                    format!(
                        "its task had not started {g:.0} s (--grace) after the first node's did"
                    ),
                ));
            } else if overdue {
                out.push(given(
                    node,
                    Gone::NeverStarted,
                    "no node's task had started by the launcher's deadline (--start-timeout, --node-timeout and twice --grace after srun was run)".into(),
                ));
            }
        }
        for n in &out {
            self.given_up.insert(n.node.clone());
        }
        out
    }

    /// Every node of the job is done or given up on: every node of the
    /// list and every node heard from, and with a count, as many nodes as
    /// it says (those given up on without a name among them).
    pub fn all_accounted(&self) -> bool {
        let known: BTreeSet<&String> = self.asked.iter().chain(self.last.keys()).collect();
        let total = known.len() + self.unnamed;
        total > 0
            && !matches!(self.count, Some(c) if total < c)
            && known
                .iter()
                .all(|n| self.done.contains(*n) || self.given_up.contains(*n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    fn names(v: &[GivenUp]) -> Vec<(&str, Gone)> {
        v.iter().map(|g| (g.node.as_str(), g.gone)).collect()
    }

    /// Asked for by count: one node done and the other never heard from
    /// is not the end (srun would wait for it for good); the grace after
    /// the first start names the shortfall once, and the names Slurm gives
    /// are given up on as never started.
    #[test]
    fn a_count_s_node_that_never_starts_is_named_after_the_grace() {
        let t0 = Instant::now();
        let mut w = Watchdog::new(&[], S(10))
            .with_timeout(S(60))
            .with_count(Some(2));
        assert_eq!(w.short(t0), None, "nothing started: nothing short yet");
        w.heard("np1", t0);
        w.done("np1");
        assert!(!w.all_accounted(), "one of two nodes accounted for");
        assert_eq!(w.short(t0 + S(9)), None);
        assert_eq!(w.short(t0 + S(10)), Some(1));
        assert_eq!(w.short(t0 + S(11)), None, "told once");
        assert!(w.was_heard("np1") && !w.was_heard("np2"));
        // Slurm's list names np1 too, and a name told twice is one node.
        w.expect(&["np1".to_string(), "np2".to_string()]);
        w.expect(&["np2".to_string()]);
        let gone = w.check(t0 + S(10));
        assert_eq!(names(&gone), [("np2", Gone::NeverStarted)]);
        assert_eq!(
            gone[0].why,
            "its task had not started 10 s (--grace) after the first node's did"
        );
        assert!(w.all_accounted());
        assert!(w.check(t0 + S(20)).is_empty(), "each once");
        // Slurm names nobody: the shortfall is counted instead.
        let mut w = Watchdog::new(&[], S(10)).with_count(Some(3));
        w.heard("np1", t0);
        w.done("np1");
        assert_eq!(w.short(t0 + S(10)), Some(2));
        assert!(!w.all_accounted());
        w.unnamed(1);
        assert!(!w.all_accounted(), "one more unaccounted for");
        w.unnamed(1);
        assert!(w.all_accounted());
        // Every node of the count heard from: nothing short.
        let mut w = Watchdog::new(&[], S(10)).with_count(Some(1));
        w.heard("np1", t0);
        assert_eq!(w.short(t0 + S(10)), None);
        assert!(!w.all_accounted(), "np1 still going");
        w.done("np1");
        assert!(w.all_accounted());
    }

    /// The launcher's deadline: the nodes' limit plus twice the grace after
    /// the first node's first frame, or after the latest start while none
    /// has started; every node not done by then is given up on.
    #[test]
    fn at_the_deadline_every_node_not_done_is_given_up_on() {
        let t0 = Instant::now();
        let asked: Vec<String> = ["np1", "np2"].map(String::from).to_vec();
        // Nothing ever heard from: counted from the latest start.
        let mut w = Watchdog::new(&asked, S(10))
            .with_timeout(S(60))
            .with_latest_start(t0 + S(100));
        assert_eq!(w.deadline(), Some(t0 + S(180)));
        assert!(w.check(t0 + S(179)).is_empty());
        assert!(!w.overdue(t0 + S(179)));
        assert!(w.overdue(t0 + S(180)));
        let gone = w.check(t0 + S(180));
        assert_eq!(
            names(&gone),
            [("np1", Gone::NeverStarted), ("np2", Gone::NeverStarted)]
        );
        assert!(
            gone[0].why.contains("launcher's deadline"),
            "{}",
            gone[0].why
        );
        assert!(w.all_accounted());
        // A first frame moves the deadline to it, earlier or later.
        let mut w = Watchdog::new(&[], S(10))
            .with_timeout(S(60))
            .with_latest_start(t0 + S(100));
        w.heard("np1", t0 + S(5));
        assert_eq!(w.deadline(), Some(t0 + S(85)));
        let mut w = Watchdog::new(&[], S(10))
            .with_timeout(S(60))
            .with_latest_start(t0);
        w.heard("np1", t0 + S(5));
        assert_eq!(w.deadline(), Some(t0 + S(85)));
        // A node that started 15 s after the first (done at 20 s) and keeps
        // saying it is alive: its own limit would come at 85 s, the
        // deadline at 80 s.
        let mut w = Watchdog::new(&[], S(10)).with_timeout(S(60));
        for at in (0..=80).step_by(5) {
            if at <= 20 {
                w.heard("np1", t0 + S(at));
            }
            if at >= 15 {
                w.heard("np2", t0 + S(at));
            }
            if at == 20 {
                w.done("np1");
            }
            if at < 80 {
                assert!(w.check(t0 + S(at)).is_empty(), "at {at} s");
            }
        }
        let gone = w.check(t0 + S(80));
        assert_eq!(names(&gone), [("np2", Gone::TimedOut)]);
        assert_eq!(
            gone[0].why,
            "still running at the launcher's deadline, 65 s after it started (60 s of --node-timeout and twice 10 s of --grace after the first node started); given up on and its task ended"
        );
        // Without a time limit, or before anything may start: no deadline.
        assert_eq!(Watchdog::new(&asked, S(10)).deadline(), None);
        assert_eq!(
            Watchdog::new(&asked, S(10)).with_timeout(S(1)).deadline(),
            None
        );
    }

    /// With a count, the deadline names the shortfall too, when no node
    /// ever started.
    #[test]
    fn a_count_with_no_node_started_is_short_at_the_deadline() {
        let t0 = Instant::now();
        let mut w = Watchdog::new(&[], S(10))
            .with_timeout(S(60))
            .with_count(Some(2))
            .with_latest_start(t0);
        assert_eq!(w.short(t0 + S(79)), None);
        assert_eq!(w.short(t0 + S(80)), Some(2));
        w.unnamed(2);
        assert!(w.all_accounted());
        assert!(!Watchdog::new(&[], S(10)).all_accounted(), "nothing known");
    }
}
