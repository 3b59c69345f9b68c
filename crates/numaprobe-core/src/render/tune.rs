//! `tune`'s renderers: the ranking table (terminal and Markdown), failures
//! and skipped candidates, the winner as lines to paste, and the CSV (one
//! row per run, so every figure can be re-analysed). JSON is the model
//! itself through `report::to_json`.

use crate::model::tune::untrusted_pair;
use crate::model::tune::NumaMaps;
use crate::model::tune::{Candidate, Run, TuneReport};
use crate::render::table::Align;
use crate::render::table::Table;
use crate::stats::flags::star;
use crate::units::{format_list, format_size};

/// `N0 50% N1 50% (96.0 MiB)`: a sample's anonymous memory by node.
pub fn distribution(m: &NumaMaps) -> String {
    let total = m.anon_total();
    if total == 0 {
        return "no anonymous memory".into();
    }
    let parts: Vec<String> = m
        .anon
        .iter()
        .map(|n| format!("N{} {:.0}%", n.node, 100.0 * n.bytes as f64 / total as f64))
        .collect();
    format!("{} ({})", parts.join(" "), format_size(total))
}

/// The peak sample of the candidate's last run that has one.
fn memory_of(c: &Candidate) -> String {
    c.runs
        .iter()
        .rev()
        .find_map(|r| r.memory_peak.as_ref())
        .map_or("-".into(), distribution)
}

fn ranking_table(r: &TuneReport) -> Table {
    let mut t = Table::new([
        "rank",
        "candidate",
        "median s",
        "min s",
        "max s",
        "runs",
        "CPUs busy",
        "vs next",
        "memory (peak, anonymous)",
    ])
    .with_title(format!(
        "{} thread(s), {} of {} round(s){}",
        r.threads,
        r.rounds_completed,
        r.runs_requested,
        if r.complete { "" } else { " (interrupted)" }
    ));
    t.align[1] = Align::Left;
    t.align[7] = Align::Left;
    t.align[8] = Align::Left;
    let mut ordered: Vec<&Candidate> = r.candidates.iter().filter(|c| c.rank.is_some()).collect();
    ordered.sort_by_key(|c| c.rank);
    ordered.extend(r.candidates.iter().filter(|c| c.rank.is_none()));
    for c in ordered {
        let (med, min, max, n) = c
            .wall_s
            .map_or(("-".into(), "-".into(), "-".into(), 0), |s| {
                (
                    format!("{:.3}{}", s.median, star(!c.flags.is_empty())),
                    format!("{:.3}", s.min),
                    format!("{:.3}", s.max),
                    s.n,
                )
            });
        let vs = match (&c.failure, &c.vs_next) {
            (Some(f), _) => format!("FAILED: {}", f.status),
            (None, Some(v)) if v.beyond_noise => {
                format!("{:.2}x faster (p={:.3})", v.ratio, v.p_value)
            }
            (None, Some(v)) => format!("within noise (x{:.2}, p={:.2})", v.ratio, v.p_value),
            (None, None) => "".into(),
        };
        t.push([
            c.rank.map_or("-".into(), |r| r.to_string()),
            c.label.clone(),
            med,
            min,
            max,
            n.to_string(),
            cpus_busy(c),
            vs,
            memory_of(c),
        ]);
    }
    t
}

/// The program's median CPU time over its median wall time: how many CPUs
/// it kept busy; below the threads it asked for when it waited (for
/// memory it does not, for I/O, a lock or other tasks on its CPUs).
fn cpus_busy(c: &Candidate) -> String {
    match (&c.cpu_s, &c.wall_s) {
        (Some(cpu), Some(w)) if w.median > 0.0 => format!("{:.2}", cpu.median / w.median),
        _ => "-".into(),
    }
}

fn extras(r: &TuneReport, md: bool) -> String {
    let mut out = String::new();
    let line = |s: &str| {
        if md {
            format!("- {s}\n")
        } else {
            format!("  {s}\n")
        }
    };
    for c in &r.candidates {
        if let Some(f) = &c.failure {
            out.push_str(&format!(
                "\n{} failed in round {} ({}); stderr ends:\n",
                c.label,
                f.round + 1,
                f.status
            ));
            let tail = if f.stderr_tail.trim().is_empty() {
                "(nothing on stderr)"
            } else {
                f.stderr_tail.trim_end()
            };
            if md {
                out.push_str(&format!("\n```\n{tail}\n```\n"));
            } else {
                for l in tail.lines() {
                    out.push_str(&format!("  | {l}\n"));
                }
            }
        }
    }
    let flagged: Vec<&Candidate> = r
        .candidates
        .iter()
        .filter(|c| !c.flags.is_empty())
        .collect();
    if !flagged.is_empty() {
        out.push_str("\nFlagged (* in the table):\n");
        if md {
            out.push('\n');
        }
        for c in flagged {
            out.push_str(&line(&format!("{}: {}", c.label, c.flags.join("; "))));
        }
    }
    if !r.skipped.is_empty() {
        out.push_str("\nNot run:\n");
        if md {
            out.push('\n');
        }
        for s in &r.skipped {
            out.push_str(&line(&format!("{}: {}", s.label, s.reason)));
        }
    }
    match &r.winner {
        Some(w) => {
            out.push_str(&format!("\nWinner: {} (paste one of)\n", w.label));
            if md {
                out.push_str("\n```sh\n");
            }
            let forms = [Some(&w.numactl), w.taskset.as_ref(), Some(&w.srun)];
            for f in forms.into_iter().flatten() {
                out.push_str(&if md { format!("{f}\n") } else { line(f) });
            }
            if md {
                out.push_str("```\n");
            }
        }
        None => out.push_str(&format!("\n{}\n", no_winner(r))),
    }
    if !r.notes.is_empty() {
        out.push_str("\nNotes:\n");
        if md {
            out.push('\n');
        }
        for n in &r.notes {
            out.push_str(&line(n));
        }
    }
    out
}

/// Why no candidate is named: none finished a run, the fastest is within
/// noise of the next, or a lone placement had nothing to be compared with.
pub fn no_winner(r: &TuneReport) -> String {
    let Some(top) = r.candidates.iter().find(|c| c.rank == Some(1)) else {
        return "No candidate finished a run: nothing to recommend.".into();
    };
    if let (Some(v), Some(flagged)) = (&top.vs_next, untrusted_pair(&r.candidates, top)) {
        return format!(
            "No winner: {flagged}'s wall times cannot be trusted (see Flagged), so {} against {} (x{:.2}) is no verdict; run again on a quieter machine or with more --runs.",
            top.label, v.next, v.ratio
        );
    }
    match &top.vs_next {
        Some(v) => format!(
            "No winner: {} is not faster than {} beyond noise (x{:.2}, p={:.2}); either will do, and so will any other within noise of them.",
            top.label, v.next, v.ratio, v.p_value
        ),
        None => format!(
            "No winner: {} is the only placement this machine gives these candidates, so there is nothing to choose.",
            top.label
        ),
    }
}

/// The terminal rendering.
pub fn text(r: &TuneReport) -> String {
    format!("{}{}", ranking_table(r).to_text(), extras(r, false))
}

pub fn markdown(r: &TuneReport) -> String {
    format!(
        "## numaprobe tune: `{}`\n\n{}{}",
        r.command.join(" "),
        ranking_table(r).to_markdown(),
        extras(r, true)
    )
}

fn node_cell(m: Option<&NumaMaps>, node: u32) -> String {
    m.map_or(String::new(), |m| {
        m.anon
            .iter()
            .find(|n| n.node == node)
            .map_or(0, |n| n.bytes)
            .to_string()
    })
}

/// One row per run: candidate, binding, memory, round, wall time, status,
/// rank, CPU time, whether the candidate is flagged, and the peak sample's
/// anonymous bytes on each memory node.
pub fn csv(r: &TuneReport) -> String {
    let mut headers: Vec<String> = [
        "candidate",
        "binding",
        "memory",
        "cpus",
        "policy_nodes",
        "round",
        "wall_s",
        "exit_status",
        "signal",
        "ok",
        "rank",
        "memory_samples",
        "cpu_s",
        "flagged",
    ]
    .map(String::from)
    .to_vec();
    headers.extend(
        r.mem_nodes
            .iter()
            .map(|n| format!("peak_anon_bytes_node{n}")),
    );
    let mut t = Table::new(headers);
    for c in &r.candidates {
        for run in &c.runs {
            let Run {
                round,
                wall_s,
                exit_status,
                signal,
                ok,
                ..
            } = run;
            let mut row = vec![
                c.label.clone(),
                c.binding.clone(),
                c.memory.clone(),
                format_list(&c.cpus),
                format_list(&c.policy_nodes),
                round.to_string(),
                format!("{wall_s:.6}"),
                exit_status.map_or(String::new(), |s| s.to_string()),
                signal.map_or(String::new(), |s| s.to_string()),
                ok.to_string(),
                c.rank.map_or(String::new(), |x| x.to_string()),
                run.memory_samples.to_string(),
                run.cpu_s.map_or(String::new(), |s| format!("{s:.6}")),
                (!c.flags.is_empty()).to_string(),
            ];
            row.extend(
                r.mem_nodes
                    .iter()
                    .map(|&n| node_cell(run.memory_peak.as_ref(), n)),
            );
            t.push(row);
        }
    }
    t.to_csv()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::tune::{plan, report, Meta, Outcome};
    use crate::model::tune::NodeBytes;
    use crate::model::tune::{Failure, Run};
    use crate::topology::testing::{build, CpuSpec, NodeSpec};

    fn sample() -> TuneReport {
        let cpus = [CpuSpec::new(0, 0, 0, 0), CpuSpec::new(1, 1, 0, 1)];
        let nodes = [0, 1].map(NodeSpec::gib);
        let p = plan(&build("/", &cpus, &nodes, None), 2, false).unwrap();
        let mem = NumaMaps {
            anon: vec![
                NodeBytes {
                    node: 0,
                    bytes: 3 << 20,
                },
                NodeBytes {
                    node: 1,
                    bytes: 1 << 20,
                },
            ],
            all: vec![],
        };
        let run = |round, wall_s| Run {
            round,
            wall_s,
            exit_status: Some(0),
            signal: None,
            ok: true,
            memory_last: Some(mem.clone()),
            memory_peak: Some(mem.clone()),
            memory_samples: 2,
            others_busy_cpus: None,
            cpu_s: None,
        };
        // Five rounds, each candidate a second slower than the one before:
        // every gap beyond noise.
        let mut outcomes: Vec<Outcome> = (0..p.candidates.len())
            .map(|i| Outcome {
                runs: (0..5)
                    .map(|k| run(k, 1.0 + i as f64 + k as f64 * 0.01))
                    .collect(),
                failure: None,
            })
            .collect();
        outcomes[1].failure = Some(Failure {
            round: 0,
            status: "exit status 3".into(),
            stderr_tail: "line one\nno memory".into(),
        });
        report(
            &p,
            &outcomes,
            Meta {
                command: vec!["./app".into()],
                threads_from: "--threads".into(),
                runs_requested: 5,
                rounds_completed: 5,
                complete: true,
            },
        )
    }

    #[test]
    fn text_shows_ranking_failure_skip_and_winner() {
        let t = text(&sample());
        assert!(t.contains("compact/first-touch"));
        assert!(t.contains("N0 75% N1 25% (4 MiB)"), "{t}");
        assert!(t.contains("FAILED: exit status 3"));
        assert!(t.contains("  | no memory"));
        assert!(t.contains("*/weighted-interleave: this kernel has no weighted interleave"));
        assert!(t.contains("Winner: compact/first-touch"));
        assert!(t.contains("numactl --physcpubind=0"));
    }

    #[test]
    fn markdown_and_csv_carry_the_same_runs() {
        let r = sample();
        let md = markdown(&r);
        assert!(md.starts_with("## numaprobe tune: `./app`"));
        assert!(md.contains("```sh\n"));
        let csv = csv(&r);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with("peak_anon_bytes_node0,peak_anon_bytes_node1"));
        // Five runs per candidate but the failed one's.
        assert_eq!(lines.len(), 1 + 5 * r.candidates.len());
        assert!(lines[1].ends_with(",3145728,1048576"), "{}", lines[1]);
        // No CPU time read: an empty field, and nothing flagged.
        assert!(
            lines[1].ends_with(",2,,false,3145728,1048576"),
            "{}",
            lines[1]
        );
    }

    #[test]
    fn cpus_busy_is_cpu_time_over_wall_time() {
        let mut r = sample();
        r.candidates[0].cpu_s = crate::stats::Summary::of(&[4.5]);
        let t = text(&r);
        assert!(t.contains("CPUs busy"), "{t}");
        // compact/first-touch: a median of 1.02 s wall, 4.5 s of CPU.
        let row = t
            .lines()
            .find(|l| l.contains("compact/first-touch "))
            .unwrap();
        assert!(row.contains(" 4.41 "), "{row}");
        let other = t
            .lines()
            .find(|l| l.contains("compact/interleave "))
            .unwrap();
        assert!(other.contains(" - "), "{other}");
    }

    #[test]
    fn json_has_the_top_level_rankings() {
        let v: serde_json::Value =
            serde_json::from_str(&crate::render::to_json(&sample())).unwrap();
        assert_eq!(v["schema"], "numaprobe/1");
        let e = v["rankings"][0]["entries"].as_array().unwrap();
        assert_eq!(e.len(), v["candidates"].as_array().unwrap().len());
        assert_eq!(e.last().unwrap()["ranked"], false);
    }

    #[test]
    fn no_winner_says_why() {
        let mut r = sample();
        r.winner = None;
        let t = text(&r);
        assert!(
            t.contains("No winner: compact/first-touch is not faster than compact/interleave beyond noise (x2.96, p=0.01)"),
            "{t}"
        );
        assert!(!t.contains("paste one of"));
        // A flagged runner-up: the gap is no verdict, and the text says whose
        // times fail the trust lines.
        let next = r.candidates[0].vs_next.clone().unwrap().next;
        let i = r.candidates.iter().position(|c| c.label == next).unwrap();
        r.candidates[i].flags = vec!["unstable: CV 30.0 %".into()];
        let t = text(&r);
        assert!(
            t.contains("No winner: compact/interleave's wall times cannot be trusted (see Flagged), so compact/first-touch against compact/interleave (x2.96) is no verdict"),
            "{t}"
        );
        assert!(
            t.contains("Flagged (* in the table):\n  compact/interleave: unstable: CV 30.0 %\n"),
            "{t}"
        );
        let row = t
            .lines()
            .find(|l| l.contains("compact/interleave "))
            .unwrap();
        assert!(row.contains("3.020*"), "{row}");
        assert!(markdown(&r).contains("- compact/interleave: unstable: CV 30.0 %"));
        let csv = csv(&r);
        let flagged: Vec<&str> = csv
            .lines()
            .filter(|l| l.split(',').nth(13) == Some("true"))
            .collect();
        assert_eq!(flagged.len(), 5, "{csv}");
        assert!(flagged.iter().all(|l| l.starts_with("compact/interleave,")));
        r.candidates[i].flags.clear();
        for c in r.candidates.iter_mut() {
            c.vs_next = None;
        }
        assert!(text(&r).contains(
            "No winner: compact/first-touch is the only placement this machine gives these candidates"
        ));
        for c in r.candidates.iter_mut() {
            c.rank = None;
        }
        assert!(markdown(&r).contains("No candidate finished a run: nothing to recommend."));
    }
}
