//! `numaprobe report DIR`: (re)build the self-contained `report.html` of a
//! report folder from the JSON documents in it.
//!
//! This file reads the folder and sorts its documents into the library's
//! model types (`ReportInput`); the page itself is the library's HTML
//! renderer (`numaprobe_core::render::html`). `numaprobe run` calls
//! [`build`] on its own folder as its last step, so both ways give the same
//! page. A document is recognised by its keys, not its file name, so any
//! numaprobe JSON document copied into the folder (a study, a policy or tune
//! result with `rankings`) joins the report; the same value found twice
//! (`latency.json` and the copy inside `run.json`) is shown once.

use crate::output::{usage, write_in_folder};
use anyhow::Context;
use numaprobe_core::model::c2c::C2cResult;
use numaprobe_core::model::infer::Inference;
use numaprobe_core::model::loaded::LoadedResult;
use numaprobe_core::model::locks::LocksResult;
use numaprobe_core::model::matrix::MatrixKind;
use numaprobe_core::model::matrix::MatrixResult;
use numaprobe_core::model::peak::PeakResult;
use numaprobe_core::model::pin::PinReport;
use numaprobe_core::model::provenance::Provenance;
use numaprobe_core::model::ranking::Ranking;
use numaprobe_core::model::shape::Shape;
use numaprobe_core::model::study::StudyReport;
use numaprobe_core::model::sweep::SweepResult;
use numaprobe_core::model::topo::TopoReport;
use numaprobe_core::render::html::{self, Doc, ReportInput};
use serde::de::DeserializeOwned;
use serde_json::Value;
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
page with a newer numaprobe."
)]
pub struct Args {
    /// The report folder (e.g. ./numaprobe-report)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write the page to FILE instead of DIR/report.html (`-` is stdout)
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let input = load(&args.dir)?;
    let page = html::render(&input);
    match args.output.as_deref() {
        Some(p) if p == Path::new("-") => crate::output::Sink::Stdout.write(&page),
        Some(p) => crate::output::Sink::File(p.to_path_buf()).write(&page),
        None => {
            // A run writing into the folder holds its lock: wait for it
            // rather than mix this page with its files.
            let _lock = crate::report_dir::FolderLock::take(&args.dir, false)?;
            write_page(&args.dir, &page)?;
            eprintln!("numaprobe: wrote {}", args.dir.join(REPORT_HTML).display());
            Ok(())
        }
    }
}

/// Read the folder and write its report.html (for `run`, whose folder is
/// already listed in its manifest by the caller).
pub fn build(dir: &Path) -> anyhow::Result<String> {
    Ok(html::render(&load(dir)?))
}

/// Write DIR/report.html; a folder numaprobe owns (it has a manifest) gets
/// the page listed there, so the next run removes it with the rest. Neither
/// is written through a symlink or into a FIFO or device.
fn write_page(dir: &Path, page: &str) -> anyhow::Result<()> {
    let manifest = dir.join(crate::report_dir::MANIFEST);
    if let Some(text) = crate::report_dir::read_manifest(dir)? {
        if !text.lines().any(|l| l.trim() == REPORT_HTML) {
            let mut text = text;
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(REPORT_HTML);
            text.push('\n');
            write_in_folder(&manifest, text.as_bytes())?;
        }
    }
    write_in_folder(&dir.join(REPORT_HTML), page.as_bytes())
}

/// Push `v` unless an equal value is already there (run.json repeats what
/// the single documents hold).
fn push_new<T: PartialEq>(list: &mut Vec<Doc<T>>, file: &str, v: T) {
    if !list.iter().any(|d| d.value == v) {
        list.push(Doc::new(file, v));
    }
}

fn parse<T: DeserializeOwned>(v: &Value, file: &str, what: &str) -> anyhow::Result<T> {
    serde_json::from_value(v.clone())
        .map_err(|e| usage(format!("{file}: not a valid {what} document: {e}")))
}

/// [`parse`], then the document's declared dimensions checked against its
/// data (a renderer sizes the page by them).
fn shaped<T: DeserializeOwned + Shape>(v: &Value, file: &str, what: &str) -> anyhow::Result<T> {
    shape_checked(parse(v, file, what)?, file, what)
}

fn shape_checked<T: Shape>(doc: T, file: &str, what: &str) -> anyhow::Result<T> {
    doc.check_shape()
        .map_err(|e| usage(format!("{file}: not a valid {what} document: {e}")))?;
    Ok(doc)
}

/// The folder's documents as the renderer's input. Bad input (no folder,
/// no document, a document that claims to be numaprobe's and does not
/// parse) is an error naming the file, exit 2.
pub fn load(dir: &Path) -> anyhow::Result<ReportInput> {
    if !dir.exists() {
        return Err(usage(format!(
            "report {}: no such folder; give a report folder (e.g. one written by `numaprobe run --report-dir DIR`)",
            dir.display()
        )));
    }
    if !dir.is_dir() {
        return Err(usage(format!(
            "report {}: not a folder; give the report folder that holds the JSON documents",
            dir.display()
        )));
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let mut input = ReportInput {
        title: dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string()),
        complete: true,
        ..ReportInput::default()
    };
    let mut topos: Vec<Doc<TopoReport>> = Vec::new();
    let mut documents = 0;
    for name in &names {
        if name == REPORT_HTML {
            continue;
        }
        input.files.push(name.clone());
        if !name.ends_with(".json") {
            continue;
        }
        let path = dir.join(name);
        let text =
            numaprobe_core::model::input::read_text(&path).map_err(|e| usage(e.to_string()))?;
        // Other tools' JSON may sit beside ours: only numaprobe documents count.
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let is_ours = v
            .get("schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("numaprobe/"));
        if !is_ours {
            continue;
        }
        documents += 1;
        classify(&v, name, &mut input, &mut topos)?;
    }
    if documents == 0 {
        return Err(usage(format!(
            "report {}: holds no numaprobe JSON document (topo.json, run.json, latency.json, ...); write one with `numaprobe run --report-dir {}` first",
            dir.display(),
            dir.display()
        )));
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

fn classify(
    v: &Value,
    file: &str,
    input: &mut ReportInput,
    topos: &mut Vec<Doc<TopoReport>>,
) -> anyhow::Result<()> {
    if let Some(p) = v.get("provenance").filter(|p| p.is_object()) {
        if let Ok(p) = serde_json::from_value::<Provenance>(p.clone()) {
            input.provenance.push(Doc::new(file, p));
        }
    }
    if v.get("complete").and_then(Value::as_bool) == Some(false) {
        input.complete = false;
    }
    if let Some(list) = v.get("rankings") {
        let rankings: Vec<Ranking> = parse(list, file, "rankings")?;
        for r in rankings {
            push_new(&mut input.rankings, file, r);
        }
    }
    let has = |k: &str| v.get(k).is_some();
    if has("topology") && has("notes") {
        // run.json: everything in one document.
        if let Some(st) = v.get("status").filter(|s| s.is_object()) {
            input.run_status = Some(parse(st, file, "status")?);
        }
        if let Some(t) = v.get("topology").filter(|t| t.is_object()) {
            let t: TopoReport = shaped(t, file, "topology")?;
            push_new(topos, file, t);
        }
        for key in ["latency", "bandwidth"] {
            if let Some(m) = v.get(key).filter(|m| m.is_object()) {
                push_new(
                    &mut input.matrices,
                    file,
                    shaped::<MatrixResult>(m, file, "matrix")?,
                );
            }
        }
        for key in ["inference", "inference_bandwidth"] {
            if let Some(i) = v.get(key).filter(|i| i.is_object()) {
                push_new(
                    &mut input.inferences,
                    file,
                    shaped::<Inference>(i, file, "inference")?,
                );
            }
        }
        if let Some(b) = v.get("binding").filter(|b| b.is_object()) {
            push_new(
                &mut input.bindings,
                file,
                shaped::<PinReport>(b, file, "binding")?,
            );
        }
        // The main job's system peak and cache sweep, where it holds them
        // (each phase's `result`).
        if let Some(p) = v.pointer("/peak/result").filter(|p| p.is_object()) {
            if let Ok(p) = serde_json::from_value::<PeakResult>(p.clone()) {
                push_new(&mut input.peaks, file, shape_checked(p, file, "peak")?);
            }
        }
        if let Some(s) = v.pointer("/sweep/result").filter(|s| s.is_object()) {
            if let Ok(s) = serde_json::from_value::<SweepResult>(s.clone()) {
                push_new(
                    &mut input.sweeps,
                    file,
                    shape_checked(s, file, "latency sweep")?,
                );
            }
        }
        if let Some(notes) = v.get("notes").and_then(Value::as_array) {
            input
                .notes
                .extend(notes.iter().filter_map(Value::as_str).map(String::from));
        }
    } else if has("numa_nodes") && has("cpus") {
        push_new(topos, file, shaped::<TopoReport>(v, file, "topology")?);
    } else if has("kind") && has("matrix") && has("cells") {
        push_new(
            &mut input.matrices,
            file,
            shaped::<MatrixResult>(v, file, "matrix")?,
        );
    } else if has("levels") && has("hops") {
        push_new(
            &mut input.inferences,
            file,
            shaped::<Inference>(v, file, "inference")?,
        );
    } else if has("experiments") && v.get("command").and_then(Value::as_str) == Some("study") {
        push_new(
            &mut input.studies,
            file,
            shaped::<StudyReport>(v, file, "study")?,
        );
    } else if v.get("command").and_then(Value::as_str) == Some("latency-sweep") {
        push_new(
            &mut input.sweeps,
            file,
            shaped::<SweepResult>(v, file, "latency sweep")?,
        );
    } else if has("hitm") && has("pairs") && has("domains") {
        push_new(&mut input.c2c, file, shaped::<C2cResult>(v, file, "c2c")?);
    } else if has("system") && has("memory") && has("achieved_fraction") {
        push_new(
            &mut input.peaks,
            file,
            shaped::<PeakResult>(v, file, "peak")?,
        );
    } else if has("atomics") && has("runs") {
        // locks.json (`c2c --locks`).
        push_new(
            &mut input.locks,
            file,
            shaped::<LocksResult>(v, file, "lock contention")?,
        );
    } else if has("curves") && has("timer") {
        // loaded-latency.json: curves of points.
        push_new(
            &mut input.loaded,
            file,
            shaped::<LoadedResult>(v, file, "loaded-latency")?,
        );
    } else if has("strategy") && has("commands") {
        push_new(
            &mut input.bindings,
            file,
            shaped::<PinReport>(v, file, "binding")?,
        );
    }
    Ok(())
}
