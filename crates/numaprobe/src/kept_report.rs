//! A measured report kept from the run that would replace it with less.
//!
//! A re-run into a report folder removes the files the previous run listed
//! in its manifest ([`crate::report_dir`]). When that previous report holds
//! measurements (a matrix or an extra phase's document), its files are
//! moved, not removed: into a new sub-folder `previous-<time>/` (the time
//! its manifest was last written, UTC), with a copy of its manifest, so the
//! sub-folder is a whole report `numaprobe report`, `diff` and `check` read
//! as before. When the new run ends, [`Previous::settle`] compares the two:
//! a run that measured every document the previous one had, with at least
//! as many matrix cells, removes the sub-folder (nothing was lost); one that
//! measured less (`--no-measure`, a shorter budget, an interrupted run, a
//! dump given with `--sysfs-root`) keeps it and says so in one line. A run
//! that never reaches its end (killed) leaves the sub-folder too.
//!
//! Only regular files under names numaprobe writes are moved, relative to
//! the folder's handle and never over anything (`RENAME_NOREPLACE`); the
//! sub-folder is made new (an existing one under the name is never used);
//! nothing outside the report folder is touched.

use crate::report_names::{is_known, MANIFEST};
use crate::safe_dir::SafeDir;
use anyhow::Context;
use std::time::SystemTime;

/// The documents that hold measurements: a report without any of them has
/// nothing a later run could lose.
pub const MEASURED: [&str; 6] = [
    "latency.json",
    "bandwidth.json",
    "c2c.json",
    "loaded-latency.json",
    "peak.json",
    "sweep.json",
];

/// What the previous report measured, moved aside.
#[derive(Debug)]
pub struct Previous {
    dir: SafeDir,
    name: String,
    /// Each measured document moved aside, with its matrix cells (None for
    /// a document that is not a matrix or does not parse as one).
    measured: Vec<(String, Option<usize>)>,
}

/// The measured documents among `listed` (a manifest's lines) that are
/// regular files in `dir`.
pub fn measured_in(dir: &SafeDir, listed: &str) -> Vec<String> {
    listed
        .lines()
        .filter(|n| MEASURED.contains(n))
        .filter(|n| dir.entry(n).ok().flatten().is_some_and(|m| m.is_file()))
        .map(str::to_string)
        .collect()
}

/// Move the files `manifest` lists (names numaprobe writes, regular files
/// only) into a new `previous-<time>/` beside them, with a copy of the
/// manifest. `measured` are the measured documents among them.
pub fn set_aside(dir: &SafeDir, manifest: &str, measured: Vec<String>) -> anyhow::Result<Previous> {
    let when = dir
        .entry(MANIFEST)
        .ok()
        .flatten()
        .and_then(|m| m.modified().ok())
        .unwrap_or_else(SystemTime::now);
    let stamp = numaprobe_core::model::provenance::rfc3339(when).replace(':', "");
    let (sub, name) = (1..=100)
        .map(|i| match i {
            1 => format!("previous-{stamp}"),
            _ => format!("previous-{stamp}-{i}"),
        })
        .find_map(|name| match dir.new_subdir(&name) {
            Ok(Some(d)) => Some(Ok((d, name))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        })
        .unwrap_or_else(|| {
            Err(anyhow::anyhow!(
                "{}: cannot make a new previous-{stamp} folder to keep the previous report in (100 taken)",
                dir.path().display()
            ))
        })?;
    sub.write(MANIFEST, manifest.as_bytes())?;
    let cells = measured
        .iter()
        .map(|n| cells_of(dir, n))
        .collect::<Vec<_>>();
    for n in manifest.lines().filter(|n| is_known(n)) {
        dir.move_file(n, &sub).with_context(|| {
            format!(
                "cannot move {} into {}",
                dir.path().join(n).display(),
                sub.path().display()
            )
        })?;
    }
    Ok(Previous {
        dir: sub,
        name,
        measured: measured.into_iter().zip(cells).collect(),
    })
}

/// The measured cells of a matrix document (`cells`), None for anything
/// else. Read bounded.
fn cells_of(dir: &SafeDir, name: &str) -> Option<usize> {
    numaprobe_core::model::matrix::cells_in(&dir.read_text(name).ok()??)
}

impl Previous {
    /// After the new run wrote `written` into `dir`: remove the kept report
    /// when the new one measured at least as much (None), else keep it and
    /// return the line that says so and why.
    pub fn settle(self, dir: &SafeDir, written: &[String]) -> Option<String> {
        let mut less = Vec::new();
        for (name, before) in &self.measured {
            if !written.contains(name) {
                less.push(format!("no {name}"));
                continue;
            }
            let now = cells_of(dir, name);
            if let (Some(a), Some(b)) = (*before, now) {
                if b < a {
                    less.push(format!("{name} {b} of {a} cells"));
                }
            }
        }
        let path = self.dir.path();
        if less.is_empty() {
            let removed = self.remove(dir);
            return removed.err().map(|e| {
                format!(
                    "this run measured as much as the report it replaced, kept in {}/, which could not be removed ({e}); remove it by hand",
                    path.display()
                )
            });
        }
        Some(format!(
            "this run measured less than the report it replaces ({}); that report is kept in {}/",
            less.join(", "),
            path.display()
        ))
    }

    /// Where the kept report is.
    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Remove the kept files (regular files under numaprobe's names only)
    /// and the then empty sub-folder of `parent`: a file someone added to
    /// it keeps it.
    fn remove(&self, parent: &SafeDir) -> std::io::Result<()> {
        for n in self.dir.names()? {
            let Some(n) = n.to_str() else { continue };
            if is_known(n) || n == MANIFEST {
                self.dir.remove_file(n)?;
            }
        }
        parent.remove_empty_dir(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use crate::report_dir::tests::{names, tempdir};
    use crate::report_dir::{ReportDir, MANIFEST};
    use std::path::Path;

    fn matrix(cells: usize) -> Vec<u8> {
        let cells: Vec<String> = (0..cells)
            .map(|i| format!("{{\"cpu_node\":{i},\"mem_node\":{i}}}"))
            .collect();
        format!("{{\"kind\":\"latency\",\"cells\":[{}]}}", cells.join(",")).into_bytes()
    }

    /// A folder holding a measured report: latency.json of `cells` cells,
    /// c2c.json, run.json.
    fn measured_report(d: &Path, cells: usize) {
        let rd = ReportDir::take_over(d, false).unwrap();
        rd.save("latency.json", &matrix(cells)).unwrap();
        rd.save("c2c.json", b"{}").unwrap();
        rd.save("run.json", b"{\"old\":true}").unwrap();
        assert_eq!(rd.settle(), None);
    }

    fn kept(d: &Path) -> Vec<String> {
        names(d)
            .into_iter()
            .filter(|n| n.starts_with("previous-"))
            .collect()
    }

    #[test]
    fn a_run_that_measures_as_much_replaces_the_previous_report() {
        let d = tempdir("kept-same");
        measured_report(&d, 4);
        let rd = ReportDir::take_over(&d, false).unwrap();
        // Moved aside while the run measures: nothing of it is lost yet.
        assert_eq!(kept(&d).len(), 1);
        assert!(!d.join("latency.json").exists());
        rd.save("latency.json", &matrix(4)).unwrap();
        rd.save("c2c.json", b"{}").unwrap();
        rd.save("peak.json", b"{}").unwrap();
        assert_eq!(rd.settle(), None);
        assert!(kept(&d).is_empty(), "{:?}", names(&d));
        assert_eq!(
            names(&d),
            [
                ".numaprobe-lock",
                MANIFEST,
                "c2c.json",
                "latency.json",
                "peak.json"
            ]
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_run_that_measures_nothing_keeps_the_previous_report_and_says_where() {
        let d = tempdir("kept-nothing");
        measured_report(&d, 4);
        let rd = ReportDir::take_over(&d, false).unwrap();
        rd.save("topo.json", b"{}").unwrap();
        rd.save("run.json", b"{\"new\":true}").unwrap();
        let line = rd.settle().expect("a line saying the report is kept");
        let k = kept(&d);
        assert_eq!(k.len(), 1);
        assert!(line.contains("no latency.json, no c2c.json"), "{line}");
        assert!(
            line.contains(&format!("{}/", d.join(&k[0]).display())),
            "{line}"
        );
        let old = d.join(&k[0]);
        assert_eq!(
            names(&old),
            [MANIFEST, "c2c.json", "latency.json", "run.json"]
        );
        assert_eq!(std::fs::read(old.join("latency.json")).unwrap(), matrix(4));
        assert_eq!(
            std::fs::read(old.join("run.json")).unwrap(),
            b"{\"old\":true}"
        );
        assert_eq!(
            std::fs::read(d.join("run.json")).unwrap(),
            b"{\"new\":true}"
        );
        drop(rd);
        // The next run leaves the kept report alone: it is no file of a run.
        let rd = ReportDir::take_over(&d, false).unwrap();
        assert_eq!(rd.settle(), None);
        assert_eq!(kept(&d), k);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn fewer_cells_of_a_matrix_is_less() {
        let d = tempdir("kept-cells");
        measured_report(&d, 4);
        let rd = ReportDir::take_over(&d, false).unwrap();
        rd.save("latency.json", &matrix(1)).unwrap();
        rd.save("c2c.json", b"{}").unwrap();
        let line = rd.settle().unwrap();
        assert!(line.contains("latency.json 1 of 4 cells"), "{line}");
        assert!(!line.contains("c2c.json"), "{line}");
        assert_eq!(kept(&d).len(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_name_already_taken_is_never_used_and_nothing_is_followed() {
        let d = tempdir("kept-taken");
        let outside = tempdir("kept-taken-outside");
        std::fs::create_dir_all(&outside).unwrap();
        measured_report(&d, 1);
        let when = std::fs::metadata(d.join(MANIFEST))
            .unwrap()
            .modified()
            .unwrap();
        let stamp = numaprobe_core::model::provenance::rfc3339(when).replace(':', "");
        // Someone planted a link under the name the kept report would get.
        std::os::unix::fs::symlink(&outside, d.join(format!("previous-{stamp}"))).unwrap();
        let rd = ReportDir::take_over(&d, false).unwrap();
        assert!(rd.settle().is_some());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        let second = d.join(format!("previous-{stamp}-2"));
        assert!(second.join("latency.json").is_file());
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }
}
