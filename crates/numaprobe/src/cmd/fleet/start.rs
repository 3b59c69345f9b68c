//! Whether the fleet's job ever starts: the `--start-timeout` rule (a job
//! still pending that long after srun was started is given up on, asking
//! Slurm first whether it is really pending), Slurm's pending reason, and
//! srun's words for an allocation it could not get (`--immediate`, nodes
//! busy, the controller unreachable). Either way the job never ran: exit
//! [`crate::output::EXIT_NOT_STARTED`].

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What Slurm says of the fleet's job when its start is overdue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// Allocated: its tasks are starting; keep waiting for them.
    Running,
    /// Still waiting for an allocation, with Slurm's reason (`Resources`,
    /// `ReqNodeNotAvail`, `Reservation`...).
    Pending(String),
    /// Slurm could not say (squeue failed, or the job is gone).
    Unknown,
}

/// The start clock: the job must start (srun says it has been allocated
/// resources, or a node's first frame comes) within `timeout` of `since`.
#[derive(Debug, Clone, Copy)]
pub struct StartClock {
    pub since: Instant,
    pub timeout: Duration,
}

impl StartClock {
    /// Whether the job's start is overdue at `now`: not started and
    /// `timeout` passed.
    pub fn overdue(&self, now: Instant, started: bool) -> bool {
        !started && now.saturating_duration_since(self.since) >= self.timeout
    }

    /// What to do about an overdue start, given what Slurm says: None to
    /// keep waiting (the job runs), else why it is given up on.
    pub fn give_up(&self, state: &JobState) -> Option<String> {
        let t = self.timeout.as_secs();
        match state {
            JobState::Running => None,
            JobState::Pending(r) if !r.is_empty() && r != "None" => Some(format!(
                "the job did not start within --start-timeout {t} s (pending: {r})"
            )),
            JobState::Pending(_) | JobState::Unknown => Some(format!(
                "the job did not start within --start-timeout {t} s"
            )),
        }
    }
}

/// The state of this process's fleet job (`squeue --me --name`).
pub fn job_state(name: &str) -> JobState {
    let out = Command::new("squeue")
        .args(["--me", "-h", "-o", "%T|%r"])
        .arg(format!("--name={name}"))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    read_squeue(out)
}

/// What squeue answered: its `%T|%r` line when it ran and succeeded;
/// Unknown when it could not be run or failed, whatever it printed (a
/// squeue that failed says nothing of the job that can be trusted).
fn read_squeue(out: std::io::Result<Output>) -> JobState {
    match out {
        Ok(o) if o.status.success() => parse_state(&String::from_utf8_lossy(&o.stdout)),
        _ => JobState::Unknown,
    }
}

/// squeue's `%T|%r` line of the job.
fn parse_state(out: &str) -> JobState {
    let Some(line) = out.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return JobState::Unknown;
    };
    let (state, reason) = line.split_once('|').unwrap_or((line, ""));
    match state.trim() {
        "PENDING" => JobState::Pending(numaprobe_core::clean::line(
            reason.trim(),
            numaprobe_core::clean::SHOWN_MAX,
        )),
        "RUNNING" | "CONFIGURING" | "COMPLETING" => JobState::Running,
        _ => JobState::Unknown,
    }
}

/// srun's stderr said it could not get an allocation: the job never ran.
pub fn allocation_failed(srun_stderr: &[String]) -> bool {
    srun_stderr.iter().any(|l| {
        [
            "Unable to allocate resources",
            "has been revoked",
            "Unable to contact slurm controller",
            "Immediate execution impossible",
        ]
        .iter()
        .any(|k| l.contains(k))
    })
}

/// srun's stderr said the selection it was given cannot be had (a
/// partition, account, node, QOS, reservation or constraint Slurm does not
/// know, an option it does not take): bad input, which waiting never cures.
pub fn input_refused(srun_stderr: &[String]) -> bool {
    srun_stderr.iter().any(|l| {
        [
            "Invalid partition",
            "Invalid account",
            "Invalid node name",
            "Invalid time limit",
            "Invalid qos",
            "reservation is invalid",
            "Invalid reservation",
            "Invalid feature specification",
            "unrecognized option",
            "invalid option",
            "configuration is not available",
        ]
        .iter()
        .any(|k| l.contains(k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srun_s_refusals_of_the_selection_are_bad_input() {
        let l = |s: &str| vec!["srun: job 7 queued".to_string(), s.to_string()];
        for refused in [
            "srun: error: Unable to allocate resources: Invalid feature specification",
            "srun: error: Unable to allocate resources: Invalid node name specified",
            "srun: error: Unable to allocate resources: Invalid partition name specified",
            "srun: error: Unable to allocate resources: Invalid account or account/partition combination specified",
            "srun: error: Unable to allocate resources: Invalid qos specification",
            "srun: error: Unable to allocate resources: Requested reservation is invalid",
            "srun: error: Invalid reservation name",
            "srun: error: Invalid time limit specification",
            "srun: unrecognized option '--bogus'",
            "srun: invalid option -- 'Z'",
            "srun: error: Unable to allocate resources: Requested node configuration is not available",
        ] {
            assert!(input_refused(&l(refused)), "{refused}");
        }
        assert!(!input_refused(&l(
            "srun: error: Unable to allocate resources: Requested nodes are busy"
        )));
        assert!(!input_refused(&[]));
    }

    #[test]
    fn an_overdue_start_is_given_up_unless_the_job_runs() {
        let t0 = Instant::now();
        let c = StartClock {
            since: t0,
            timeout: Duration::from_secs(600),
        };
        assert!(!c.overdue(t0 + Duration::from_secs(599), false));
        assert!(c.overdue(t0 + Duration::from_secs(600), false));
        assert!(!c.overdue(t0 + Duration::from_secs(6000), true));
        assert_eq!(c.give_up(&JobState::Running), None);
        assert_eq!(
            c.give_up(&JobState::Pending("Resources".into())).unwrap(),
            "the job did not start within --start-timeout 600 s (pending: Resources)"
        );
        assert_eq!(
            c.give_up(&JobState::Pending("None".into())).unwrap(),
            "the job did not start within --start-timeout 600 s"
        );
        assert_eq!(
            c.give_up(&JobState::Pending(String::new())).unwrap(),
            "the job did not start within --start-timeout 600 s"
        );
        assert_eq!(
            c.give_up(&JobState::Unknown).unwrap(),
            "the job did not start within --start-timeout 600 s"
        );
    }

    /// Only a squeue that ran and succeeded is read: a failed one is
    /// Unknown even when it printed a state, and a pending job's reason
    /// comes through.
    #[test]
    fn only_a_squeue_that_succeeded_is_read() {
        use std::os::unix::process::ExitStatusExt;
        let out = |code: i32, stdout: &str| {
            Ok(Output {
                status: std::process::ExitStatus::from_raw(code << 8),
                stdout: stdout.as_bytes().to_vec(),
                stderr: Vec::new(),
            })
        };
        assert_eq!(
            read_squeue(out(0, "PENDING|Resources\n")),
            JobState::Pending("Resources".into())
        );
        assert_eq!(read_squeue(out(0, "RUNNING|None\n")), JobState::Running);
        assert_eq!(read_squeue(out(1, "RUNNING|None\n")), JobState::Unknown);
        assert_eq!(
            read_squeue(out(1, "PENDING|Resources\n")),
            JobState::Unknown
        );
        assert_eq!(
            read_squeue(Err(std::io::ErrorKind::NotFound.into())),
            JobState::Unknown
        );
    }

    #[test]
    fn squeue_lines_are_read() {
        assert_eq!(
            parse_state("PENDING|ReqNodeNotAvail, UnavailableNodes:np2\n"),
            JobState::Pending("ReqNodeNotAvail, UnavailableNodes:np2".into())
        );
        assert_eq!(parse_state("RUNNING|None\n"), JobState::Running);
        assert_eq!(parse_state("CONFIGURING|None"), JobState::Running);
        assert_eq!(parse_state(""), JobState::Unknown);
        assert_eq!(parse_state("CANCELLED|x"), JobState::Unknown);
    }

    #[test]
    fn srun_s_allocation_failures_are_known() {
        let l = |s: &str| {
            vec![
                "srun: job 7 queued and waiting for resources".to_string(),
                s.to_string(),
            ]
        };
        assert!(allocation_failed(&l(
            "srun: error: Unable to allocate resources: Requested nodes are busy"
        )));
        assert!(allocation_failed(&l(
            "srun: Job allocation 7 has been revoked."
        )));
        assert!(allocation_failed(&l(
            "srun: error: Unable to contact slurm controller (connect failure)"
        )));
        assert!(!allocation_failed(&l(
            "srun: error: np2: task 1: Exited with exit code 3"
        )));
        assert!(!allocation_failed(&[]));
    }
}
