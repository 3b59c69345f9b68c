//! What the main job's pages say of another machine's dump: the terminal
//! summary, summary.md, `topo` and `infer` of a 64-node machine fit a
//! terminal (width bounded, long lists folded, the full detail left to the
//! report and the documents), and the report names the
//! dump's machine, never the host that read it, with no budget or
//! completeness for a measurement that did not happen.

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::numaprobe_in as numaprobe;

#[test]
fn a_64_node_dump_fits_a_terminal_and_its_report_is_the_dumps() {
    let u = common::unpack("256ia64-64n2s2c");
    let root = u.root.to_str().unwrap();
    let o = numaprobe(
        &["run", "--sysfs-root", root, "--report-dir", "r"],
        u.tmp.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 120, "a line of {widest} characters:\n{text}");
    let lines = text.lines().count();
    assert!(lines <= 120, "{lines} lines:\n{text}");
    // Folded parts say where the rest is.
    assert!(
        text.contains("49 more; every node is in `numaprobe topo --format csv --table nodes`"),
        "{text}"
    );
    assert!(
        text.contains("64 x 64 nodes, wider than a terminal"),
        "{text}"
    );
    assert!(text.contains("4 remote levels: 22, 26, 30, 34"), "{text}");
    // summary.md within the same bounds, folded the same way.
    let md = std::fs::read_to_string(u.tmp.path().join("r/summary.md")).unwrap();
    fits(&md, "summary.md", 200);
    assert!(md.contains("49 more; every node is in"), "{md}");
    assert!(md.contains("64 x 64 nodes, wider than a page line"), "{md}");
    // `topo` and `infer` on the same machine fit a terminal too.
    let topo = numaprobe(&["topo", "--sysfs-root", root], u.tmp.path());
    assert!(topo.status.success());
    let topo = String::from_utf8(topo.stdout).unwrap();
    fits(&topo, "topo", 200);
    assert!(
        topo.contains("more; every CPU is in `numaprobe topo --format csv`"),
        "{topo}"
    );
    let infer = numaprobe(&["infer", "--input", "r"], u.tmp.path());
    assert!(
        infer.status.success(),
        "{}",
        String::from_utf8_lossy(&infer.stderr)
    );
    fits(&String::from_utf8(infer.stdout).unwrap(), "infer", 120);
    // The whole binding is still in pin.json.
    let pin = std::fs::read_to_string(u.tmp.path().join("r/pin.json")).unwrap();
    assert!(
        pin.contains("{252}"),
        "the last place of the scatter binding"
    );

    let page = std::fs::read_to_string(u.tmp.path().join("r/report.html")).unwrap();
    let subtitle = page
        .split("</h1>\n<p>")
        .nth(1)
        .and_then(|s| s.split("</p>").next())
        .unwrap_or_else(|| panic!("no subtitle in the page"));
    assert!(
        subtitle.starts_with("256ia64-64n2s2c (a saved description)"),
        "{subtitle}"
    );
    assert!(subtitle.contains("256 CPUs, 64 NUMA nodes"), "{subtitle}");
    assert!(subtitle.contains("read on "), "{subtitle}");
    assert!(page.contains("Read on host"), "the reader is named as such");
    assert!(!page.contains("Ran on host"));
    for absent in ["<th>Budget</th>", "<th>Complete</th>", "--budget 60"] {
        assert!(
            !page.contains(absent),
            "{absent} on a page that measured nothing"
        );
    }
    let run = std::fs::read_to_string(u.tmp.path().join("r/run.json")).unwrap();
    let run: serde_json::Value = serde_json::from_str(&run).unwrap();
    assert!(
        run["provenance"]["budget"].is_null(),
        "{}",
        run["provenance"]
    );
}

/// Every line of `text` within 120 characters, and at most `lines` lines.
fn fits(text: &str, what: &str, lines: usize) {
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(
        widest <= 120,
        "{what}: a line of {widest} characters:\n{text}"
    );
    let n = text.lines().count();
    assert!(n <= lines, "{what}: {n} lines:\n{text}");
}
