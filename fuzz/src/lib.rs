//! The fuzz entry functions: one per reader of outside data, each taking the
//! raw bytes a fuzzer (or a corpus file) gives and driving the library's
//! real reader with them. The fuzz targets (`fuzz/fuzz_targets/*.rs`) and
//! the stable corpus replay (`crates/numaprobe-core/tests/fuzz_replay.rs`,
//! which includes this file with `#[path]`) call these same functions, so a
//! crash the fuzzer found is replayed exactly as it was found.
//!
//! An entry panics only where the reader broke a promise: a panic inside
//! the reader, or an error message that is not one line of bounded length
//! (DESIGN.md, "Safety": a bad input is a one-line error).

use numaprobe_core::analysis::{self, compare, fleet, mlc, ParseOptions, Select, Unit};
use numaprobe_core::{placement, smbios, topology};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fuzz entry: the input's bytes in, a panic when the reader broke a promise.
pub type Entry = fn(&[u8]);

/// Every target by name (its corpus is `fuzz/corpus/<name>/`, its
/// regressions `fuzz/regressions/<name>/`).
pub const TARGETS: &[(&str, Entry)] = &[
    ("matrix_input", matrix_input),
    ("mlc", mlc_text),
    ("documents", documents),
    ("sysfs_tree", sysfs_tree),
    ("attributes", attributes),
    ("procfs", procfs),
    ("smbios_raw", smbios_raw),
    ("dmidecode", dmidecode),
    ("fleet_stream", fleet_stream),
];

/// Longest error message an entry accepts: a message quotes at most ~200
/// characters of the bad value, plus a path and what would be valid.
const MAX_ERROR: usize = 2000;

/// An error message must be one line of bounded length.
fn one_line(what: &str, msg: &str) {
    assert!(
        !msg.contains('\n') && msg.len() <= MAX_ERROR,
        "{what}: the error is not one short line ({} bytes): {:?}",
        msg.len(),
        msg.chars().take(400).collect::<String>()
    );
}

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// `numaprobe infer` and every reader of a matrix file: the format told from
/// the content (run.json, latency/bandwidth JSON, `{unit, matrix}`, MLC text,
/// CSV), with every selector and unit override the command line can add.
pub fn matrix_input(data: &[u8]) {
    let t = text(data);
    for select in [None, Some(Select::Latency), Some(Select::Bandwidth)] {
        for unit in [None, Some(Unit::Ns), Some(Unit::GBps)] {
            match analysis::parse_with(&t, ParseOptions { unit, select }) {
                Ok(m) => {
                    // A matrix that reads can be analysed: nodes, lookups and
                    // the inference must hold on whatever the file said.
                    for a in m.nodes() {
                        for b in m.nodes() {
                            let _ = m.get(a, b);
                        }
                    }
                    let _ = analysis::analyse(&m);
                }
                Err(e) => one_line("matrix input", &e.to_string()),
            }
        }
    }
}

/// Intel MLC's text output, read directly (not only through detection).
pub fn mlc_text(data: &[u8]) {
    let t = text(data);
    let _ = mlc::looks_like(&t);
    for select in [None, Some(Select::Latency), Some(Select::Bandwidth)] {
        if let Err(e) = mlc::parse(&t, select, None) {
            one_line("MLC", &e.to_string());
        }
    }
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A fresh, empty folder, removed on drop: in /dev/shm where there is one
/// (a tree of a thousand files is written 30 times faster there than on a
/// VM's disk), else under the temporary directory.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let p = base.join(format!("numaprobe-fuzz-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("scratch folder");
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every JSON document numaprobe reads back: `diff` and `check` sides
/// (topo, latency, bandwidth, run, c2c), any kind through the one document
/// reader (`report`, `export`) alone and in its folder, a fleet node's
/// `run.json`, and a distance table. The document is written to a file and read through the
/// same path the commands take; a side that reads is compared with itself.
pub fn documents(data: &[u8]) {
    let scratch = Scratch::new("doc");
    let file = scratch.0.join("doc.json");
    std::fs::write(&file, data).expect("write document");
    match compare::load(&file, &compare::DIFF) {
        Ok(side) => {
            // Few resamples: the bootstrap's cost, not its precision, is
            // what a fuzzed side could blow up.
            let criteria = numaprobe_core::model::diff::Criteria {
                resamples: 50,
                ..compare::cells::default_criteria()
            };
            match compare::diff(&side, &side, &criteria) {
                Ok(_) => {}
                Err(e) => one_line("diff", &e.to_string()),
            }
        }
        Err(e) => one_line("diff/check side", &e.to_string()),
    }
    // The one document reader (report, export, infer's kind), for a file
    // and for the folder that holds it.
    if let Err(e) = numaprobe_core::model::document::read_file(&file) {
        one_line("document", &e.to_string());
    }
    if let Err(e) = numaprobe_core::model::document::read_folder(&scratch.0) {
        one_line("folder", &e.to_string());
    }
    let t = text(data).into_owned();
    let _ = fleet::analyse(&[
        fleet::NodeInput {
            name: "a".into(),
            run_json: Some(t.clone()),
            failure: None,
        },
        fleet::NodeInput {
            name: "b".into(),
            run_json: Some(t),
            failure: None,
        },
    ]);
    let _ = serde_json::from_slice::<topology::Distances>(data);
}

/// The longest path and the most files a tree may have: real dumps have a
/// few hundred files a few levels deep.
const MAX_FILES: usize = 2048;
const MAX_DEPTH: usize = 16;

/// A relative path with only normal components, or None.
fn safe_rel(p: &str) -> Option<PathBuf> {
    let path = Path::new(p);
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(n) if n.len() <= 128 => out.push(n),
            _ => return None,
        }
    }
    (out.components().count() > 0 && out.components().count() <= MAX_DEPTH).then_some(out)
}

/// Whether a symlink at `at` (relative to the root) pointing at `target`
/// stays inside the tree: a fuzzed tree must never read the real machine.
fn link_inside(at: &Path, target: &str) -> bool {
    if target.starts_with('/') || target.is_empty() || target.contains('\0') {
        return false;
    }
    let mut depth = at.components().count() as i64 - 1;
    for c in Path::new(target).components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            _ => return false,
        }
        if depth < 0 {
            return false;
        }
    }
    true
}

/// A sysfs/procfs tree written from its text form: records `=== PATH`
/// followed by the file's content, or `=>= PATH TARGET` for a symlink.
/// Paths escaping the root are dropped. Returns the number of entries made.
pub fn write_tree(root: &Path, data: &[u8]) -> usize {
    let t = text(data);
    let mut made = 0;
    let mut current: Option<(PathBuf, String)> = None;
    let flush = |cur: &mut Option<(PathBuf, String)>, made: &mut usize| {
        if let Some((rel, body)) = cur.take() {
            let p = root.join(&rel);
            if let Some(parent) = p.parent() {
                if std::fs::create_dir_all(parent).is_ok() && std::fs::write(&p, body).is_ok() {
                    *made += 1;
                }
            }
        }
    };
    for line in t.split_inclusive('\n') {
        if made >= MAX_FILES {
            break;
        }
        if let Some(rest) = line.strip_prefix("=== ") {
            flush(&mut current, &mut made);
            current = safe_rel(rest.trim_end_matches('\n')).map(|p| (p, String::new()));
        } else if let Some(rest) = line.strip_prefix("=>= ") {
            flush(&mut current, &mut made);
            let mut parts = rest.trim_end_matches('\n').splitn(2, ' ');
            let (Some(at), Some(target)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Some(rel) = safe_rel(at) else { continue };
            if !link_inside(&rel, target) {
                continue;
            }
            let p = root.join(&rel);
            if let Some(parent) = p.parent() {
                if std::fs::create_dir_all(parent).is_ok()
                    && std::os::unix::fs::symlink(target, &p).is_ok()
                {
                    made += 1;
                }
            }
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
        }
    }
    flush(&mut current, &mut made);
    made
}

/// `--sysfs-root DIR`: a whole sysfs/procfs tree (every attribute file,
/// cpulist, mask, cache, distance, meminfo, HMAT and cgroup file the
/// topology reader opens) read as `numaprobe topo` reads a dump.
pub fn sysfs_tree(data: &[u8]) {
    let scratch = Scratch::new("sysfs");
    write_tree(&scratch.0, data);
    match topology::read(&scratch.0) {
        Ok(t) => {
            // What the commands do next with a topology they read.
            let _ = numaprobe_core::render::topo::to_json(&t);
            let _ = numaprobe_core::model::hops::HopMap::from_topology(&t);
        }
        Err(e) => one_line("topology", &e.to_string()),
    }
}

/// Single sysfs attribute values: CPU lists (`cpulist`, `online`), masks
/// (`cpumap`, `shared_cpu_map`), the THP size; each parser that takes one
/// file's text.
pub fn attributes(data: &[u8]) {
    let t = text(data);
    for r in [
        topology::cpulist::parse_list(&t),
        topology::cpulist::parse_ranges(&t),
        topology::cpulist::parse_mask(&t),
    ] {
        match r {
            Ok(ids) => {
                assert!(ids.windows(2).all(|w| w[0] < w[1]), "not ascending");
                let back = topology::cpulist::format_ranges(&ids, "");
                assert_eq!(
                    topology::cpulist::parse_list(&back).as_deref(),
                    Ok(&ids[..]),
                    "a list numaprobe wrote reads back the same"
                );
            }
            Err(e) => one_line("cpu list", &e),
        }
    }
    let _ = numaprobe_core::pagesize::parse_thp_size(&t);
}

/// procfs texts read from the live machine: `/proc/zoneinfo`,
/// `/proc/PID/numa_maps`, a node's `meminfo`.
pub fn procfs(data: &[u8]) {
    let t = text(data);
    let zones = placement::memory::parse_zoneinfo(&t);
    for z in &zones {
        let _ = (z.user_reserve(), z.allocatable_pages(), z.capacity_pages());
        let _ = z.own_pcp_pages(0);
    }
    for node in 0..2 {
        if let Ok(Some(m)) = placement::memory::node_memory(&zones, node, 4096) {
            let _ = m.allocatable_on(&[0, 1]);
        }
        let _ = placement::memory::node_memory_from_meminfo(&t, node);
    }
    let maps = placement::numa_maps::parse(&t);
    let _ = (maps.anon_total(), maps.anon_fraction(0));
}

/// The kernel's SMBIOS structure table (`/sys/firmware/dmi/tables/DMI`),
/// then the population `peak` derives from its memory devices.
pub fn smbios_raw(data: &[u8]) {
    let devices = smbios::raw::parse(data);
    let _ = smbios::population("smbios", devices);
}

/// `dmidecode -t 17` text given with `--dmidecode FILE`.
pub fn dmidecode(data: &[u8]) {
    match smbios::from_dmidecode(&text(data), "dmidecode.txt") {
        Ok(_) => {}
        Err(e) => one_line("dmidecode", &e),
    }
}

/// Limits small enough that a fuzzed stream reaches them: a few files of a
/// few pieces and a few nodes, so "too many files", "file too large",
/// "node too large", "too many names" and a node dropped for the stream's
/// total are each a few lines away.
const SMALL_FLEET: fleet::stream::Limits = fleet::stream::Limits {
    file: 3000,
    node: 12_000,
    files: 4,
    pending: 8000,
    names: 3,
};

/// `fleet`'s gather: srun's output as it comes back from the nodes, line by
/// line through the bounded line reader, each line through the frame parser
/// and two collectors (the real limits, and small ones a fuzzer reaches).
/// A frame that parses must write back to a line that parses to the same
/// frame; a skipped line's reason is one short line; a file that comes back
/// whole is within the limits; nothing the collector holds outgrows what
/// was received.
pub fn fleet_stream(data: &[u8]) {
    use fleet::stream::{self, Collector, Event, Line};
    let mut real = Collector::default();
    let mut small = Collector::with_limits(SMALL_FLEET);
    let mut reader = std::io::Cursor::new(data);
    let mut buf = Vec::new();
    let mut lines = 0usize;
    loop {
        let read = stream::read_line(&mut reader, &mut buf, stream::MAX_LINE)
            .expect("a cursor does not fail");
        match read {
            Line::Eof => break,
            Line::TooLong(n) => {
                assert!(n > stream::MAX_LINE, "a line of {n} bytes called too long");
                assert!(buf.is_empty(), "a too-long line is dropped, not kept");
                continue;
            }
            Line::Read => assert!(buf.len() <= stream::MAX_LINE),
        }
        lines += 1;
        assert!(lines <= data.len() + 1, "more lines than bytes");
        match stream::parse_line(&buf) {
            None => {}
            Some(Ok(frame)) => {
                let back = frame.line();
                if back.len() <= stream::MAX_LINE {
                    match stream::parse_line(back.as_bytes()) {
                        Some(Ok(again)) => assert_eq!(again, frame, "a frame reads back the same"),
                        other => panic!("a frame written does not read back: {other:?}"),
                    }
                }
            }
            Some(Err(e)) => one_line("fleet frame", &e.to_string()),
        }
        if let Some(name) = stream::node_of_bad_line(&buf) {
            assert!(stream::valid_node_name(&name), "{name:?}");
        }
        for (c, limits) in [
            (&mut real, fleet::stream::Limits::default()),
            (&mut small, SMALL_FLEET),
        ] {
            match c.line(&buf) {
                Some(Event::File { bytes, name, node }) => {
                    assert!(
                        bytes.len() <= limits.file,
                        "{node}/{name}: {} bytes",
                        bytes.len()
                    );
                    assert!(stream::valid_file_name(&name) && stream::valid_node_name(&node));
                }
                Some(Event::Skipped { why, node }) => {
                    one_line("fleet line", &why.to_string());
                    if let Some(n) = node {
                        assert!(stream::valid_node_name(&n), "{n:?}");
                    }
                }
                Some(Event::Started(n))
                | Some(Event::Ended(n))
                | Some(Event::Alive(n))
                | Some(Event::Piece(n)) => {
                    assert!(stream::valid_node_name(&n), "{n:?}")
                }
                None => {}
            }
            assert!(c.held() <= limits.pending, "{} bytes held", c.held());
        }
    }
    for c in [&real, &small] {
        for (node, name) in c.unfinished() {
            assert!(stream::valid_node_name(&node) && stream::valid_file_name(&name));
        }
    }
    // The sender's side: any bytes cut into frames come back whole.
    let mut c = Collector::default();
    let mut whole = None;
    for f in fleet::stream::Frame::file("np1", "run.json", data) {
        let line = f.line();
        assert!(
            line.len() <= stream::LINE,
            "a sent line of {} bytes",
            line.len()
        );
        if let Some(e) = c.line(line.as_bytes()) {
            match e {
                Event::File { bytes, .. } => whole = Some(bytes),
                Event::Piece(n) => assert_eq!(n, "np1"),
                other => panic!("a frame numaprobe wrote was not taken: {other:?}"),
            }
        }
    }
    assert_eq!(whole.as_deref(), Some(data), "the file came back different");
}
