//! The process group of one `tune` run. The candidate starts as the leader
//! of a group of its own, so everything it forks can be ended together and
//! the terminal's Ctrl-C reaches numaprobe, which decides what to end. Ending
//! is SIGTERM to the whole group, then SIGKILL after [`GRACE`]. A daemon
//! that left the group (setsid, setpgid) is out of reach of a group signal:
//! the run's descendants are noted from /proc as it goes, so the ones still
//! alive outside the group at the end can be named.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How long the group has to end after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);
/// How long to wait for processes to go after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// One process as /proc/PID/stat tells it.
#[derive(Debug, Clone, PartialEq)]
struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    /// Start time in clock ticks since boot: with the pid, names one process
    /// even when pids are reused.
    start: u64,
    comm: String,
    zombie: bool,
}

/// Parse /proc/PID/stat: `pid (comm) state ppid pgrp sid ...`, with
/// `comm` possibly holding spaces and parentheses (so split at the last `)`).
fn parse_stat(text: &str) -> Option<Proc> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // After the comm: state(0) ppid(1) pgrp(2) sid(3) ... starttime(19).
    Some(Proc {
        pid,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
        comm,
        zombie: matches!(*f.first()?, "Z" | "X"),
    })
}

fn stat(pid: i32) -> Option<Proc> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process this process may see.
fn all() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

/// A process named in the output: `1234 (sleep)`.
fn named(pid: i32, comm: &str) -> String {
    format!("{pid} ({comm})")
}

/// One run's process group (its id is the leader's pid).
#[derive(Debug)]
pub struct Group {
    pgid: i32,
    /// Descendants seen so far: pid -> (start time, comm).
    seen: BTreeMap<i32, (u64, String)>,
}

impl Group {
    pub fn new(leader: u32) -> Self {
        Group {
            pgid: leader as i32,
            seen: BTreeMap::new(),
        }
    }

    /// Note the run's descendants now: every process of the group and every
    /// process whose parent is one already noted (and still the same
    /// process), so a daemon that left the group is known while its parent
    /// lives.
    pub fn observe(&mut self) {
        let procs = all();
        let mut known: BTreeSet<i32> = [self.pgid].into();
        for p in &procs {
            if self.seen.get(&p.pid).is_some_and(|(s, _)| *s == p.start) {
                known.insert(p.pid);
            }
        }
        // Parents before children is not guaranteed: repeat until nothing new.
        loop {
            let mut grew = false;
            for p in &procs {
                if known.contains(&p.pid) && p.pid != self.pgid {
                    continue;
                }
                if p.pgrp == self.pgid || known.contains(&p.ppid) {
                    grew |= known.insert(p.pid);
                    self.seen
                        .entry(p.pid)
                        .or_insert_with(|| (p.start, p.comm.clone()));
                }
            }
            if !grew {
                break;
            }
        }
    }

    /// The group's live (not zombie) processes.
    pub fn members(&self) -> Vec<String> {
        all()
            .into_iter()
            .filter(|p| p.pgrp == self.pgid && !p.zombie)
            .map(|p| named(p.pid, &p.comm))
            .collect()
    }

    /// Send `sig` to every process of the group.
    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on the group of our own child: the group id cannot
        // be reused while a process of the group lives.
        unsafe { libc::kill(-self.pgid, sig) };
    }

    /// End whatever is left of the group after its leader ended: SIGTERM,
    /// up to [`GRACE`] to go, then SIGKILL. Returns the processes that were
    /// there.
    pub fn end_leftovers(&mut self) -> Vec<String> {
        self.observe();
        let left = self.members();
        if left.is_empty() {
            return left;
        }
        self.signal(libc::SIGTERM);
        if !self.wait_empty(GRACE) {
            self.signal(libc::SIGKILL);
            self.wait_empty(KILL_WAIT);
        }
        left
    }

    /// Wait up to `limit` for the group to have no live process.
    fn wait_empty(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        loop {
            if self.members().is_empty() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Descendants seen during the run that are still alive outside the
    /// group (daemons a group signal cannot reach), and those of the group
    /// that even SIGKILL did not end.
    pub fn survivors(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|(&pid, (start, _))| {
                let p = stat(pid)?;
                // Its command now: a fork seen before its exec had its parent's.
                (p.start == *start && !p.zombie).then(|| named(pid, &p.comm))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_with_odd_command_names() {
        let line = "4242 (my (odd) prog) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
        let p = parse_stat(line).unwrap();
        assert_eq!(p.pid, 4242);
        assert_eq!(p.comm, "my (odd) prog");
        assert_eq!((p.ppid, p.pgrp, p.start), (1, 4240, 987654));
        assert!(!p.zombie);
        let z = parse_stat(&line.replace(") S ", ") Z ")).unwrap();
        assert!(z.zombie);
        assert!(parse_stat("4242 (x) S 1").is_none());
        assert!(parse_stat("").is_none());
        // This process reads as itself.
        let me = stat(std::process::id() as i32).unwrap();
        assert_eq!(me.pid, std::process::id() as i32);
    }

    #[test]
    fn a_group_is_ended_whole_and_a_daemon_that_left_it_is_named() {
        use std::os::unix::process::CommandExt;
        // The leader ignores SIGTERM (so SIGKILL is needed), a child stays
        // in the group, another leaves it with setsid.
        let mut leader = std::process::Command::new("sh")
            .args([
                "-c",
                "trap '' TERM INT; sleep 1000 & setsid sleep 1001 & exec sleep 1002",
            ])
            .process_group(0)
            .spawn()
            .unwrap();
        let mut g = Group::new(leader.id());
        let until = Instant::now() + Duration::from_secs(10);
        while g.seen.len() < 3 {
            assert!(Instant::now() < until, "seen: {:?}", g.seen);
            g.observe();
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(g.members().len(), 2, "{:?}", g.members());
        g.signal(libc::SIGTERM);
        g.signal(libc::SIGKILL);
        leader.wait().unwrap();
        let left = g.end_leftovers();
        assert!(g.members().is_empty(), "{left:?}");
        let survivors = g.survivors();
        assert_eq!(survivors.len(), 1, "{survivors:?}");
        assert!(survivors[0].ends_with("(sleep)"), "{survivors:?}");
        let pid: i32 = survivors[0].split(' ').next().unwrap().parse().unwrap();
        // SAFETY: the daemon this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}
