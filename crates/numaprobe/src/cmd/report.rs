//! `numaprobe report DIR`: (re)build the self-contained `report.html` of a
//! report folder from the JSON documents in it; `numaprobe report FILE`
//! makes the page of one document (`FILE.html` beside it).
//!
//! The library's document reader (`model::document`) says what the folder
//! holds; this file hands each document to its place in the page's input
//! (`ReportInput`), and the page itself is the library's HTML renderer
//! (`numaprobe_core::render::html`). `numaprobe run` calls [`build`] on its
//! own folder as its last step, so both ways give the same page. A document
//! is recognised by its `kind` (or, written without one, its keys), not its
//! file name, so any numaprobe JSON document copied into the folder (a
//! study, a policy or tune result) joins the report; the same value found
//! twice (`latency.json` and the copy inside `run.json`) is shown once.

use crate::output::usage;
use crate::safe_dir::SafeDir;
use numaprobe_core::model::document::{self, Document, DocumentError, Found};
use numaprobe_core::model::matrix::MatrixKind;
use numaprobe_core::model::topo::TopoReport;
use numaprobe_core::render::html::{self, Doc, ReportInput};
use std::path::{Path, PathBuf};
/// The page's file name in the folder.
pub const REPORT_HTML: &str = "report.html";

#[derive(clap::Args, Debug)]
#[command(
    after_long_help = "Reads every numaprobe JSON document in DIR (topo.json, latency.json, \
bandwidth.json, infer-*.json, pin.json, run.json, c2c.json, locks.json, peak.json, loaded-latency.json, a study's JSON, \
and any document with a top-level \
\"rankings\" array such as policy and tune results) and writes DIR/report.html: one file with its \
pictures (inline SVG) and styles inside, no script, nothing fetched from the network. `numaprobe run` \
writes it into every report folder; run this after adding documents to a folder, or to rebuild the \
page with a newer numaprobe.\n\n\
Given one document instead of a folder (any kind numaprobe writes; doc/inputs.md), the page shows that \
document alone and is written beside it with the extension .html (c2c.json gives c2c.html)."
)]
pub struct Args {
    /// The report folder, or one numaprobe document. Default: ./numaprobe-report
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Write the page to FILE instead of DIR/report.html (`-` is stdout)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let dir = args
        .dir
        .unwrap_or_else(|| PathBuf::from(crate::report_dir::DEFAULT_DIR));
    let input = load(&dir)?;
    let page = html::render(&input);
    match args.output.as_deref() {
        Some(p) if p == Path::new("-") => crate::output::Sink::Stdout.write(&page),
        Some(p) => crate::output::Sink::File(p.to_path_buf()).write(&page),
        None if !dir.is_dir() => {
            let p = dir.with_extension("html");
            crate::output::Sink::File(p.clone()).write(&page)?;
            eprintln!("numaprobe: wrote {}", p.display());
            Ok(())
        }
        None => {
            // A run writing into the folder holds its lock: wait for it
            // rather than mix this page with its files.
            let safe = SafeDir::own(&dir, "report", false)?;
            let _lock = crate::report_dir::FolderLock::take(&safe, false)?;
            write_page(&safe, &page)?;
            eprintln!("numaprobe: wrote {}", dir.join(REPORT_HTML).display());
            Ok(())
        }
    }
}

/// Read the folder and write its report.html (for `run`, whose folder is
/// already listed in its manifest by the caller).
/// The folder is read through its handle (`/proc/self/fd/N`), so a folder
/// swapped mid-run is not read either; the page's title is the folder's
/// own name.
pub fn build(dir: &SafeDir) -> anyhow::Result<String> {
    let mut input = load(&dir.handle_path())?;
    input.title = title(dir.path());
    Ok(html::render(&input))
}

/// The page's title: the folder's name.
fn title(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string())
}

/// Write DIR/report.html; a folder numaprobe owns (it has a manifest) gets
/// the page listed there, so the next run removes it with the rest. Neither
/// is written through a symlink or into a FIFO or device.
fn write_page(dir: &SafeDir, page: &str) -> anyhow::Result<()> {
    // One hold over both writes: a stop signal never leaves the manifest
    // naming a page that was not written.
    let _hold = crate::stop_now::Hold::take();
    if let Some(text) = crate::report_dir::read_manifest(dir)? {
        if !text.lines().any(|l| l.trim() == REPORT_HTML) {
            let mut text = text;
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(REPORT_HTML);
            text.push('\n');
            dir.write(crate::report_dir::MANIFEST, text.as_bytes())?;
        }
    }
    dir.write(REPORT_HTML, page.as_bytes())
}

/// Push `v` unless an equal value is already there (run.json repeats what
/// the single documents hold).
fn push_new<T: PartialEq>(list: &mut Vec<Doc<T>>, file: &str, v: T) {
    if !list.iter().any(|d| d.value == v) {
        list.push(Doc::new(file, v));
    }
}

/// The folder's documents (or the one document) as the renderer's input.
/// Bad input (no such path, no document, a document that claims to be
/// numaprobe's and does not parse) is an error naming the file, exit 2.
pub fn load(dir: &Path) -> anyhow::Result<ReportInput> {
    if !dir.exists() {
        return Err(usage(format!(
            "report {}: no such file or folder; give a report folder (e.g. one written by `numaprobe run --report-dir DIR`) or a numaprobe document",
            dir.display()
        )));
    }
    let folder = if dir.is_dir() {
        document::read_folder(dir).map_err(|e| match e {
            DocumentError::Folder { .. } => anyhow::Error::new(e),
            e => usage(e.to_string()),
        })?
    } else {
        one_document(dir)?
    };
    if folder.documents.is_empty() && folder.unknown.is_empty() {
        return Err(usage(format!(
            "report {}: holds no numaprobe JSON document (topo.json, run.json, latency.json, ...); write one with `numaprobe run --report-dir {}` first",
            dir.display(),
            dir.display()
        )));
    }
    let mut input = ReportInput {
        title: title(dir),
        complete: true,
        files: folder
            .files
            .iter()
            .filter(|n| *n != REPORT_HTML)
            .cloned()
            .collect(),
        ..ReportInput::default()
    };
    let mut topos: Vec<Doc<TopoReport>> = Vec::new();
    for found in folder.documents {
        place(found, &mut input, &mut topos);
    }
    // A document of no kind this numaprobe knows still gives its rankings
    // (any list of them joins the page) and its provenance.
    for other in folder.unknown {
        let file = other.file.as_str();
        if let Some(rankings) = other.rankings {
            let rankings = rankings
                .map_err(|e| usage(format!("{file}: not a valid rankings document: {e}")))?;
            for r in rankings {
                push_new(&mut input.rankings, file, r);
            }
        }
        if let Some(p) = other.provenance {
            input.provenance.push(Doc::new(file, p));
        }
        input.complete &= other.complete;
    }
    // The run's provenance describes the whole folder: it comes first.
    if let Some(i) = input.provenance.iter().position(|p| p.file == "run.json") {
        let run = input.provenance.remove(i);
        input.provenance.insert(0, run);
    }
    input.complete &= input.provenance.iter().all(|p| p.value.complete);
    // A main job's folder holds phases' documents that say `complete:
    // false` because their share of the budget was spent (a sweep cut
    // short): run.json's status says whether the run as a whole is
    // complete, so the page says what run.json says.
    if let Some(st) = &input.run_status {
        input.complete = st.complete;
    }
    input.matrices.sort_by_key(|m| match m.value.kind {
        MatrixKind::Latency => 0,
        MatrixKind::Bandwidth => 1,
    });
    input.topology = topos
        .into_iter()
        .next()
        .map(|d| Doc::new(d.file, d.value.into_topology()));
    Ok(input)
}

/// One document as a folder of one: the page of that document alone.
fn one_document(path: &Path) -> anyhow::Result<document::Folder> {
    let text = numaprobe_core::model::input::read_text(path).map_err(|e| usage(e.to_string()))?;
    let (head, doc) =
        document::from_bytes(text.as_bytes(), path).map_err(|e| usage(e.to_string()))?;
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(document::Folder {
        documents: vec![Found {
            file: file.clone(),
            document: doc,
            complete: head.complete != Some(false),
            provenance: head.provenance,
        }],
        unknown: Vec::new(),
        files: vec![file],
    })
}

/// One document's place in the page. Kinds the page has no section for
/// (a diff, a check, a fleet, a study's plan) are listed as files only.
fn place(found: Found, input: &mut ReportInput, topos: &mut Vec<Doc<TopoReport>>) {
    let file = found.file.as_str();
    if let Some(p) = found.provenance {
        input.provenance.push(Doc::new(file, p));
    }
    input.complete &= found.complete;
    match found.document {
        Document::Run(run) => {
            let r = run.report;
            if r.status.is_some() {
                input.run_status = r.status.clone();
            }
            if let Some(t) = r.topology {
                push_new(topos, file, t);
            }
            for m in [r.latency, r.bandwidth].into_iter().flatten() {
                push_new(&mut input.matrices, file, m);
            }
            for i in [r.inference, r.inference_bandwidth].into_iter().flatten() {
                push_new(&mut input.inferences, file, i);
            }
            if let Some(b) = r.binding {
                push_new(&mut input.bindings, file, b);
            }
            // The main job's system peak and cache sweep, where it holds
            // them (each phase's `result`).
            if let Some(p) = r.peak.and_then(|o| o.result) {
                push_new(&mut input.peaks, file, p);
            }
            if let Some(s) = r.sweep.and_then(|o| o.result) {
                push_new(&mut input.sweeps, file, s);
            }
            input.notes.extend(r.notes);
        }
        Document::Topo(t) => push_new(topos, file, *t),
        Document::Matrix(m) => push_new(&mut input.matrices, file, *m),
        Document::Infer(i) => push_new(&mut input.inferences, file, *i),
        Document::Pin(p) => push_new(&mut input.bindings, file, *p),
        Document::Study(s) => push_new(&mut input.studies, file, *s),
        Document::Sweep(s) => push_new(&mut input.sweeps, file, *s),
        Document::C2c(c) => push_new(&mut input.c2c, file, *c),
        Document::Peak(p) => push_new(&mut input.peaks, file, *p),
        Document::Locks(l) => push_new(&mut input.locks, file, *l),
        Document::Loaded(l) => push_new(&mut input.loaded, file, *l),
        // Ranked from its cases, whatever rankings it carries, so every
        // flag of a policy (a page promise broken among them) is drawn.
        Document::Policy(p) => {
            for r in p.rankings() {
                push_new(&mut input.rankings, file, r);
            }
        }
        Document::Tune(t) => {
            for r in t.rankings {
                push_new(&mut input.rankings, file, r);
            }
        }
        Document::StudyPlan(_) | Document::Fleet(_) | Document::Diff(_) | Document::Check(_) => {}
    }
}
