//! The production page's recipes run as the page writes them: each command
//! line or file an administrator copies from doc/production.md is read from
//! the page (the code block after `<!-- recipe: NAME -->`), only its paths
//! replaced, and run through `sh` with the built numaprobe first on PATH.
//! So the page and what is tested cannot drift apart: the NHC check
//! function and its nhc.conf lines, `check --skip allowed`, `--skip memory`
//! and `--mem-tolerance`, the two steps of `run` then `check --measured`,
//! and `fleet --from` re-judging a gathered folder then `check --expect
//! fleet.json` (with `--group`), then `--replace` keeping the thresholds;
//! doc/commands/fleet.md's three places `fleet --from` writes to; and
//! doc/commands/diff-check.md's job-script lines. Recipes that need Slurm, node_exporter or
//! hwloc run in `scripts/slurm-test` and `scripts/export-test`.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;
#[path = "cli/dump.rs"]
mod dump;

use cli::{s, text};
use common::TempDir;
use dump::dumps;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The body of the code block after `<!-- recipe: NAME -->` in
/// `doc/PAGE`, its fence's indentation (a block inside a list item) taken
/// off every line.
fn recipe(page: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../doc")
        .join(page);
    let page_text = std::fs::read_to_string(&path).unwrap();
    let marker = format!("<!-- recipe: {name} -->");
    let at = page_text
        .find(&marker)
        .unwrap_or_else(|| panic!("doc/{page}: no {marker}"));
    let mut lines = page_text[at + marker.len()..].lines().skip(1);
    let fence = lines.next().unwrap_or_default();
    let indent = fence.len() - fence.trim_start().len();
    assert!(
        fence.trim_start().starts_with("```"),
        "doc/{page}: {marker} is not followed by a code block: {fence:?}"
    );
    let mut body = String::new();
    for line in lines {
        if line.trim_start().starts_with("```") {
            return body;
        }
        body.push_str(line.get(indent..).unwrap_or(""));
        body.push('\n');
    }
    panic!("doc/{page}: {marker}'s code block never ends");
}

/// The recipe's command lines (comments and blank lines left out).
fn commands(recipe: &str) -> Vec<String> {
    recipe
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// A folder holding `numaprobe` (a link to the built binary), to put first
/// on PATH as an installed numaprobe would be.
fn bin_dir(t: &TempDir) -> PathBuf {
    let bin = t.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_numaprobe"), bin.join("numaprobe")).unwrap();
    bin
}

/// `line` run by `sh -c` in `cwd` with `bin` first on PATH.
fn sh(line: &str, bin: &Path, cwd: &Path) -> Output {
    Command::new("sh")
        .args(["-c", line])
        .current_dir(cwd)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// NHC's driver as a check function sees it (lbnl-nhc 1.4 and 1.5, the
/// `nhc` script): it sets its own PATH, turns globbing off and extended
/// globs on, sources every `*.nhc` of its scripts folder, then for each
/// `MASK || CHECK` line of nhc.conf `eval`s CHECK unquoted in its own shell.
/// `die [N] MSG` logs `Health check failed:  MSG` and exits N (1 by
/// default): the first check that dies ends the run and marks the node; a
/// check that returns non-zero without dying fails it too; `log` writes a
/// line. Only the mask `*` is used here. NHC itself is not packaged for
/// Debian 13, so this is what runs the recipe.
const NHC_DRIVER: &str = r#"
PATH="/sbin:/usr/sbin:/bin:/usr/bin"
export PATH
set -f
shopt -s expand_aliases extglob
function log() { printf '%s\n' "$*"; }
function die() {
    local RET=1
    if [[ -n "$1" && "$1" == +([0-9]) ]]; then RET="$1"; shift; fi
    CHECK_DIED=1
    log "Health check failed:  $*"
    exit $RET
}
set +f
for SCRIPT in "$1"/*.nhc; do . "$SCRIPT"; done
set -f
while IFS= read -r LINE; do
    [[ "$LINE" == *'||'* && "$LINE" != '#'* ]] || continue
    MASK="${LINE%%||*}"
    [[ "${MASK//[[:space:]]}" == '*' ]] || { log "mask not handled here: $MASK"; exit 99; }
    CHECK="${LINE#*||}"
    CHECK="${CHECK#"${CHECK%%[![:space:]]*}"}"
    CHECK_DIED=0
    eval $CHECK
    RET=$?
    if (( RET == 127 )); then die 127 "No such check \"${CHECK%% *}\""; fi
    if (( RET != 0 )) && (( CHECK_DIED == 0 )); then die $RET "Check $CHECK returned $RET"; fi
done <"$2"
log "Node Health Check completed successfully"
exit 0
"#;

/// The NHC recipe installed under `t`: `scripts/numaprobe.nhc` as the page
/// writes it, and nhc.conf from the page with the tarball's
/// `/usr/local/bin` replaced by `bin` and the expectation by `expect`
/// followed by `more`.
fn nhc_setup(t: &TempDir, tag: &str, bin: &Path, expect: &str, keep_export: bool) -> PathBuf {
    let dir = t.path().join(tag);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("scripts/numaprobe.nhc"),
        recipe("production.md", "nhc-function"),
    )
    .unwrap();
    let conf = recipe("production.md", "nhc-conf");
    assert!(
        conf.contains("* || export PATH=\"$PATH:/usr/local/bin\"")
            && conf.contains("* || check_numaprobe /etc/numaprobe/expect.json"),
        "doc/production.md's nhc.conf changed shape:\n{conf}"
    );
    let conf: String = conf
        .lines()
        .filter(|l| keep_export || !l.contains("export PATH"))
        .map(|l| {
            l.replace("/usr/local/bin", s(bin))
                .replace("/etc/numaprobe/expect.json", expect)
                + "\n"
        })
        .collect();
    std::fs::write(dir.join("nhc.conf"), conf).unwrap();
    dir
}

fn nhc(dir: &Path) -> Output {
    Command::new("bash")
        .args([
            "-c",
            NHC_DRIVER,
            "nhc",
            s(&dir.join("scripts")),
            s(&dir.join("nhc.conf")),
        ])
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_nhc_check_function_fails_a_node_only_on_a_difference() {
    let t = TempDir::new("recipe-nhc");
    let bin = bin_dir(&t);
    // The expectation saved as the page says, then checked through NHC.
    let save = commands(&recipe("production.md", "expect"));
    assert_eq!(save, ["numaprobe topo -o /etc/numaprobe/expect.json"]);
    let expect = t.path().join("expect.json");
    let o = sh(
        &save[0].replace("/etc/numaprobe/expect.json", s(&expect)),
        &bin,
        t.path(),
    );
    assert!(o.status.success(), "{o:?}");
    let o = nhc(&nhc_setup(&t, "match", &bin, s(&expect), true));
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stdout).contains("completed successfully")
            && !text(&o.stdout).contains("could not"),
        "{o:?}"
    );
    // Without the export line NHC's own PATH does not hold the tarball's
    // folder: the check cannot run, is logged and passes (exit 127).
    let o = nhc(&nhc_setup(&t, "nopath", &bin, s(&expect), false));
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stdout).contains("check_numaprobe: numaprobe could not check (exit 127)"),
        "{o:?}"
    );
    // A node whose node 1 lost half its memory: NHC fails it, the first
    // difference as its message; options after the expectation reach
    // numaprobe check (--skip memory lets it pass).
    let d = dumps("recipe-nhc-dump", 4_194_304);
    let arg = format!("{} --sysfs-root {}", s(&d.expect), s(&d.changed));
    let o = nhc(&nhc_setup(&t, "half", &bin, &arg, true));
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(
        text(&o.stdout).trim(),
        "Health check failed:  check_numaprobe: memory: node 1: memory: expected 8 GiB, found 4 GiB"
    );
    let o = nhc(&nhc_setup(
        &t,
        "skip",
        &bin,
        &format!("{arg} --skip memory"),
        true,
    ));
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // A half-written expectation (exit 2) never fails the node: logged.
    let half = t.path().join("half.json");
    let whole = std::fs::read(&expect).unwrap();
    std::fs::write(&half, &whole[..whole.len() / 2]).unwrap();
    let o = nhc(&nhc_setup(&t, "broken", &bin, s(&half), true));
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stdout).contains(&format!(
            "check_numaprobe: numaprobe could not check (exit 2); run it by hand: numaprobe check --expect {}",
            s(&half)
        )),
        "{o:?}"
    );
}

#[test]
fn skip_allowed_checks_an_expectation_saved_inside_a_job() {
    let t = TempDir::new("recipe-skip-allowed");
    let bin = bin_dir(&t);
    let line = commands(&recipe("production.md", "skip-allowed"));
    assert_eq!(
        line,
        ["numaprobe check --expect /etc/numaprobe/expect.json --skip allowed"]
    );
    // Saved inside a job's cpuset: one CPU (taskset stands for the job).
    let expect = t.path().join("expect.json");
    let o = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_numaprobe"), "topo", "-o"])
        .arg(&expect)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let line = line[0].replace("/etc/numaprobe/expect.json", s(&expect));
    let o = sh(&line, &bin, t.path());
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
    let o = sh(&line.replace(" --skip allowed", ""), &bin, t.path());
    if allowed > 1 {
        // The whole node's view differs in the allowed CPUs alone.
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let out = text(&o.stdout);
        assert!(
            out.lines()
                .next()
                .unwrap_or("")
                .starts_with("allowed: allowed CPUs: expected 0, found 0-"),
            "{out}"
        );
        assert!(
            out.lines()
                .all(|l| !l.contains(": expected ") || l.starts_with("allowed: ")),
            "{out}"
        );
    } else {
        assert_eq!(o.status.code(), Some(0), "{o:?}");
    }
}

#[test]
fn skip_memory_and_a_wider_tolerance_pass_a_node_whose_memory_moved() {
    let t = TempDir::new("recipe-memory");
    let bin = bin_dir(&t);
    let lines = commands(&recipe("production.md", "memory"));
    assert_eq!(
        lines,
        [
            "numaprobe check --expect /etc/numaprobe/expect.json --skip memory",
            "numaprobe check --expect /etc/numaprobe/expect.json --mem-tolerance 10%",
        ]
    );
    // 7.5 GiB where 8 were: one DIMM of sixteen, or a hot-plug step.
    let d = dumps("recipe-memory-dump", 7_864_320);
    let half = dumps("recipe-memory-half", 4_194_304);
    let run = |line: &str, d: &dump::Dumps, root: &Path| {
        let line = line.replace("/etc/numaprobe/expect.json", s(&d.expect));
        let o = sh(&format!("{line} --sysfs-root {}", s(root)), &bin, t.path());
        o.status.code()
    };
    let plain = "numaprobe check --expect /etc/numaprobe/expect.json";
    assert_eq!(run(plain, &d, &d.changed), Some(1));
    for line in &lines {
        assert_eq!(run(line, &d, &d.changed), Some(0), "{line}");
        assert_eq!(run(line, &d, &d.root), Some(0), "{line}");
    }
    // Half the memory is past 10 %: the tolerance still finds it.
    assert_eq!(run(&lines[1], &half, &half.changed), Some(1));
    assert_eq!(run(&lines[0], &half, &half.changed), Some(0));
}

#[test]
fn run_then_check_measured_compares_the_cells() {
    let t = TempDir::new("recipe-measured");
    let bin = bin_dir(&t);
    let lines = commands(&recipe("production.md", "measured"));
    assert_eq!(
        lines,
        [
            "numaprobe run --size 1GiB --report-dir /var/lib/numaprobe/last",
            "numaprobe check --expect /etc/numaprobe/run.json --measured /var/lib/numaprobe/last",
        ]
    );
    let last = t.path().join("last");
    let trusted = t.path().join("run.json");
    let at = |line: &str| {
        line.replace("/var/lib/numaprobe/last", s(&last))
            .replace("/etc/numaprobe/run.json", s(&trusted))
    };
    // The maintenance job's run, with a budget and buffer a test can afford.
    let o = sh(
        &format!(
            "{} --budget 6s",
            at(&lines[0]).replace("--size 1GiB", "--size 16MiB")
        ),
        &bin,
        t.path(),
    );
    assert!(o.status.success(), "{o:?}");
    // This node's own run saved as the trusted one: every cell matches.
    std::fs::copy(last.join("run.json"), &trusted).unwrap();
    let o = sh(&at(&lines[1]), &bin, t.path());
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = text(&o.stdout);
    assert!(
        out.starts_with(&format!("this machine (measured: {}) matches ", s(&last))),
        "{out}"
    );
    assert!(
        out.contains(
            "latency cells within 15 % of the expected medians; bandwidth cells within 15 %"
        ),
        "the cells were not compared: {out}"
    );
    assert!(
        !text(&o.stderr).contains("--measured"),
        "a note says the cells were not compared: {o:?}"
    );
}

/// The gathered folder of the pages' date, `fleet-2026-11-27` in `t`: the
/// five real reports of tests/fixtures/fleet, and the fleet files a
/// gathering writes beside them.
fn gathered(t: &TempDir) -> PathBuf {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fleet/taskset-one-cpu");
    let dir = t.path().join("fleet-2026-11-27");
    assert!(Command::new("cp")
        .args(["-a", s(&src), s(&dir)])
        .status()
        .unwrap()
        .success());
    let o = cli::numaprobe(&["fleet", "--from", s(&dir), "--replace"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    dir
}

#[test]
fn fleet_from_judges_again_beside_the_folder_and_check_takes_its_groups() {
    let t = TempDir::new("recipe-fleet");
    let bin = bin_dir(&t);
    let lines = commands(&recipe("production.md", "fleet"));
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert!(
        lines[0].starts_with("numaprobe fleet --nodelist "),
        "{lines:?}"
    );
    let dir = gathered(&t);
    let original = std::fs::read(dir.join("fleet.json")).unwrap();
    // less fleet-*/fleet.md: the summary is there.
    assert!(lines[1].starts_with("less fleet-*/fleet.md"), "{lines:?}");
    assert!(dir.join("fleet.md").is_file());
    // Judged again with other thresholds: into fleet-2026-11-27-judged/,
    // the folder's own fleet.json untouched.
    let judge = lines[2].split(" #").next().unwrap().trim();
    assert_eq!(
        judge,
        "numaprobe fleet --from fleet-2026-11-27 --outlier-pct 10 --outlier-sd 5"
    );
    let o = sh(judge, &bin, t.path());
    assert_eq!(
        o.status.code(),
        Some(1),
        "node5 is configured unlike the others: {o:?}"
    );
    assert!(lines[2].ends_with("# judge again into fleet-2026-11-27-judged/"));
    let judged: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("fleet-2026-11-27-judged/fleet.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        judged["rule"]["min_off_percent"], 10.0,
        "{}",
        judged["rule"]
    );
    assert_eq!(judged["rule"]["min_robust_z"], 5.0, "{}", judged["rule"]);
    assert_eq!(std::fs::read(dir.join("fleet.json")).unwrap(), original);
    // This node against the fleet's largest group, then against the group
    // the page copies from fleet.md: each a check (0 or 1), never bad input.
    let md = std::fs::read_to_string(dir.join("fleet.md")).unwrap();
    let copied = lines[4]
        .split_once("--group ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap();
    // The number the page copies is the one fleet.md shows node5's group
    // under, and --group selects that same group.
    assert!(
        md.lines()
            .any(|l| { l.split('|').nth(1).map(str::trim) == Some(copied) && l.contains("node5") }),
        "fleet.md has no group {copied} holding node5: {md}"
    );
    assert!(
        lines[4].ends_with(&format!("# against fleet.md's group {copied}")),
        "{lines:?}"
    );
    for (line, group) in lines[3..5].iter().zip([
        "group 1 of 2 (4 nodes: node1, node2, node3, node4)",
        &format!("group {copied} of 2 (1 node: node5)"),
    ]) {
        let line = line.split(" #").next().unwrap().trim();
        assert!(line.starts_with("numaprobe check --expect fleet-2026-11-27/fleet.json"));
        let o = sh(line, &bin, t.path());
        assert!(matches!(o.status.code(), Some(0 | 1)), "{line}: {o:?}");
        let out = text(&o.stdout);
        assert!(
            out.contains(&format!("checked: signature of {group}")),
            "{line}: {out}"
        );
        assert!(
            out.lines()
                .all(|l| !l.contains(": expected ") || l.contains(", found ")),
            "{out}"
        );
    }
    // A number fleet.md does not show is bad input, named with the valid range.
    for wrong in ["0", "3"] {
        let o = sh(
            &format!("numaprobe check --expect fleet-2026-11-27/fleet.json --group {wrong}"),
            &bin,
            t.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let e = text(&o.stderr);
        assert!(
            e.contains(&format!("--group {wrong}: ")) && e.contains("1 is the largest; valid: 1-2"),
            "{o:?}"
        );
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    }
    // Keeping the new thresholds: the folder's own fleet.json is rewritten
    // with them, and no other folder is made beside it.
    let keep = lines[5].split(" #").next().unwrap().trim();
    assert_eq!(
        keep,
        "numaprobe fleet --from fleet-2026-11-27 --outlier-pct 10 --outlier-sd 5 --replace"
    );
    assert!(
        lines[5].ends_with("# keep those thresholds: the folder's own fleet.json rewritten"),
        "{lines:?}"
    );
    let o = sh(keep, &bin, t.path());
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let kept: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("fleet.json")).unwrap()).unwrap();
    assert_eq!(
        (
            &kept["rule"]["min_off_percent"],
            &kept["rule"]["min_robust_z"]
        ),
        (&10.0.into(), &5.0.into()),
        "{}",
        kept["rule"]
    );
    assert!(!t.path().join("fleet-2026-11-27-judged-2").exists());
}

/// Every file under `dir`, by its path below it, with its bytes.
fn files(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// doc/commands/fleet.md's three ways to judge a gathered folder again, run
/// in order as the page writes them: beside it, into --report-dir, then
/// into the folder itself with --replace; each writes the four fleet files
/// where its comment says, with the new threshold, and nothing else moves.
#[test]
fn fleet_from_writes_where_each_line_of_the_fleet_page_says() {
    let t = TempDir::new("recipe-fleet-judge");
    let bin = bin_dir(&t);
    let lines = commands(&recipe("commands/fleet.md", "fleet-judge"));
    assert_eq!(lines.len(), 3, "{lines:?}");
    let dir = gathered(&t);
    let before = files(&dir);
    let rule = |folder: &str| -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_slice(
            &std::fs::read(t.path().join(folder).join("fleet.json")).unwrap(),
        )
        .unwrap();
        doc["rule"]["min_off_percent"].clone()
    };
    assert_eq!(rule("fleet-2026-11-27"), 5.0);
    let fleet_files = ["fleet.json", "fleet.md", "fleet.csv", "fleet.html"];
    for (line, into) in lines
        .iter()
        .zip(["fleet-2026-11-27-judged", "judged", "fleet-2026-11-27"])
    {
        let (command, comment) = line.split_once(" #").unwrap();
        assert!(
            comment.trim().starts_with(&format!("into {into}/")),
            "{line}"
        );
        let o = sh(command.trim(), &bin, t.path());
        assert_eq!(o.status.code(), Some(1), "{line}: {o:?}");
        for f in fleet_files {
            assert!(t.path().join(into).join(f).is_file(), "{line}: no {f}");
        }
        assert_eq!(rule(into), 10.0, "{line}");
        if into != "fleet-2026-11-27" {
            assert_eq!(files(&dir), before, "{line} changed the gathered folder");
        }
    }
    // --replace rewrote the fleet files alone: every node's report is as it
    // was, and no folder was made beside it.
    let now = files(&dir);
    assert_eq!(
        now.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &before {
        if !fleet_files.iter().any(|f| path == Path::new(f)) {
            assert_eq!(&now[path], bytes, "{}", path.display());
        }
    }
    assert_ne!(
        now[Path::new("fleet.json")],
        before[Path::new("fleet.json")]
    );
    assert!(!t.path().join("fleet-2026-11-27-judged-2").exists());
}

/// doc/commands/diff-check.md's job-script lines: the layout and a binding
/// saved once, then checked at the top of a job; a job confined to fewer
/// CPUs than the binding names stops (`|| exit 1`).
#[test]
fn a_job_script_checks_its_saved_layout_and_binding() {
    let t = TempDir::new("recipe-job-script");
    let bin = bin_dir(&t);
    let lines = commands(&recipe("commands/diff-check.md", "job-script"));
    let cut = |l: &String| l.split("  #").next().unwrap().trim().to_string();
    let lines: Vec<String> = lines.iter().map(cut).collect();
    assert_eq!(
        lines,
        [
            "numaprobe topo -o expected-topo.json",
            "numaprobe pin --threads 8 --strategy scatter -o expected-pin.json",
            "numaprobe check --expect expected-topo.json || exit 1",
            "numaprobe check --expect expected-pin.json  || exit 1",
        ]
    );
    // As many threads as this machine allows (the page's 8 where it has them).
    let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = allowed.min(8);
    let save = format!(
        "{} && {}",
        lines[0],
        lines[1].replace("--threads 8", &format!("--threads {threads}"))
    );
    let o = sh(&save, &bin, t.path());
    assert!(o.status.success(), "{o:?}");
    let job = format!("{}\n{}\necho job ran\n", lines[2], lines[3]);
    let o = sh(&job, &bin, t.path());
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(text(&o.stdout).contains("job ran"), "{o:?}");
    if threads > 1 {
        // The same job inside a one-CPU cpuset: the topology check fails
        // first (allowed CPUs), and the job stops there.
        let o = Command::new("taskset")
            .args(["-c", "0", "sh", "-c", &job])
            .current_dir(t.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        let out = text(&o.stdout);
        assert!(
            out.starts_with("allowed: allowed CPUs: expected 0-"),
            "{out}"
        );
        assert!(!out.contains("job ran"), "{out}");
        let o = Command::new("taskset")
            .args(["-c", "0", "sh", "-c", &lines[3]])
            .current_dir(t.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        assert!(text(&o.stdout).contains("found not allowed"), "{o:?}");
    }
}
