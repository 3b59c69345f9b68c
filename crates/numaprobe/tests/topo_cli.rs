//! `numaprobe topo` as a user runs it: the built binary on unpacked real
//! machines' dumps and on this machine. Checks the JSON contract's keys, the
//! CSV and Markdown shapes, `--output`, and exit status 2 with a one-line
//! error for a bad `--sysfs-root`.

use std::path::{Path, PathBuf};
use std::process::Output;

mod cli;
#[path = "../../numaprobe-core/tests/common/mod.rs"]
mod common;

use cli::{numaprobe, numaprobe_in};
use common::TempDir;

fn tmp() -> TempDir {
    TempDir::new("cli")
}

/// Unpack a dump; returns the folder guard (removed on drop) and its root.
fn unpack(name: &str) -> (TempDir, PathBuf) {
    let u = common::unpack(name);
    (u.tmp, u.root)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn json_has_the_contract_keys() {
    let (_g, root) = unpack("memorysidecaches");
    let o = numaprobe(&[
        "topo",
        "--format",
        "json",
        "--sysfs-root",
        root.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    assert_eq!(v["schema"], "numaprobe/1");
    for k in [
        "cpus",
        "numa_nodes",
        "distances",
        "caches",
        "hmat",
        "pci_devices",
        "numbering",
        "packages",
        "allowed",
        "memory_tiers",
        "warnings",
    ] {
        assert!(v.get(k).is_some(), "missing key {k}");
    }
    let cpu = &v["cpus"][0];
    for k in [
        "os_index",
        "online",
        "allowed",
        "package",
        "core",
        "node",
        "smt_siblings",
    ] {
        assert!(cpu.get(k).is_some(), "cpus[0] lacks {k}");
    }
    assert_eq!(cpu["smt_siblings"], serde_json::json!([0, 40]));
    let node = &v["numa_nodes"][0];
    for k in ["os_index", "cpus", "memory_bytes", "free_bytes", "allowed"] {
        assert!(node.get(k).is_some(), "numa_nodes[0] lacks {k}");
    }
    assert_eq!(v["distances"]["node_ids"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(
        v["distances"]["matrix"][0],
        serde_json::json!([10, 21, 11, 21])
    );
    assert_eq!(v["hmat"].as_array().unwrap().len(), 4);
    assert_eq!(v["numbering"]["packages"], "round-robin");
    assert_eq!(v["numbering"]["smt"], "far");
    assert_eq!(v["numbering"]["smt_stride"], 40);
}

#[test]
fn distances_are_null_when_the_kernel_gives_none() {
    let (_g, root) = unpack("16amd64-8n2c");
    std::fs::remove_file(root.join("sys/devices/system/node/node4/distance")).unwrap();
    let o = numaprobe(&[
        "topo",
        "--format",
        "json",
        "--sysfs-root",
        root.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["distances"].is_null());
    assert!(v["warnings"][0]
        .as_str()
        .unwrap()
        .contains("node4/distance"));
}

fn assert_usage_error(o: &Output, must_name: &str) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("numaprobe: error: "), "{err}");
    assert!(err.contains(must_name), "does not name {must_name}: {err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn bad_roots_exit_2_with_one_line() {
    let o = numaprobe(&["topo", "--sysfs-root", "/nonexistent/numaprobe-root"]);
    assert_usage_error(&o, "/nonexistent/numaprobe-root");

    let t = tmp();
    let o = numaprobe(&["topo", "--sysfs-root", t.0.to_str().unwrap()]);
    assert_usage_error(&o, "not a Linux sysfs tree");

    // The main job reads the same way.
    let o = numaprobe(&["run", "--sysfs-root", t.0.to_str().unwrap()]);
    assert_usage_error(&o, "not a Linux sysfs tree");
}

#[test]
fn a_malformed_file_exits_2_naming_it() {
    let (_g, root) = unpack("16amd64-8n2c");
    let f = root.join("sys/devices/system/node/node3/distance");
    std::fs::write(&f, "20 20 20 10 x 20 20 20\n").unwrap();
    let o = numaprobe(&["topo", "--sysfs-root", root.to_str().unwrap()]);
    assert_usage_error(&o, &f.display().to_string());
}

#[test]
fn an_unreadable_file_is_a_warning_not_a_failure() {
    let (_g, root) = unpack("16amd64-8n2c");
    // A folder where a file belongs cannot be read as one (whatever the
    // user's permissions, unlike chmod 000 which root ignores). hwloc reads
    // such a file as missing; so do we, and say so.
    let f = root.join("sys/devices/system/node/online");
    std::fs::remove_file(&f).unwrap();
    std::fs::create_dir(&f).unwrap();
    let o = numaprobe(&["topo", "--sysfs-root", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains(&format!("{}: empty or unreadable", f.display())),
        "{s}"
    );
    assert!(s.contains("8 NUMA nodes"), "{s}");
}

#[test]
fn csv_gives_one_table_chosen_by_table() {
    let (_g, root) = unpack("40intel64-2g2n4c+pcilocality");
    let csv = |extra: &[&str]| {
        let mut a = vec![
            "topo",
            "--format",
            "csv",
            "--sysfs-root",
            root.to_str().unwrap(),
        ];
        a.extend(extra);
        numaprobe(&a)
    };
    let o = csv(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(!s.contains("\n\n"), "one table");
    let rows: Vec<&str> = s.lines().collect();
    assert_eq!(
        rows[0],
        "cpu,online,allowed,node,package,package_id,die,cluster,capacity,core,thread,smt_siblings,l1d,l1i,l2,l3"
    );
    assert_eq!(rows.len(), 1 + 80, "every possible CPU");
    assert_eq!(rows[2], "1,true,true,1,1,1,-,-,-,0,0,1,1,1,1,1");
    assert_eq!(rows[41], "40,false,false,-,-,-,-,-,-,-,-,-,-,-,-,-");
    let o = csv(&["--table", "distances"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let d = stdout(&o);
    let d: Vec<&str> = d.lines().collect();
    assert_eq!(
        d,
        [
            "node,0,1,2,3",
            "0,10,20,20,20",
            "1,20,10,20,20",
            "2,20,20,10,20",
            "3,20,20,20,10"
        ]
    );
    let o = csv(&["--table", "nodes"]);
    assert!(
        stdout(&o).starts_with("node,cpus,memory_bytes"),
        "{}",
        stdout(&o)
    );
    let o = numaprobe(&[
        "topo",
        "--table",
        "nodes",
        "--sysfs-root",
        root.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "--table without csv");
    assert!(stderr(&o).contains("--table"), "{}", stderr(&o));
}

#[test]
fn markdown_gives_every_table() {
    let (_g, root) = unpack("16amd64-8n2c");
    let o = numaprobe(&[
        "topo",
        "--format",
        "markdown",
        "--sysfs-root",
        root.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains("**Processors**\n\n| processor | thread | core | package | node | allowed |"),
        "{s}"
    );
    assert!(
        s.contains("**Distances (SLIT)**\n\n| node | 0 | 1 |"),
        "{s}"
    );
    assert!(s.contains("\n| 0 | 10 | 20 |"), "{s}");
    assert!(s.contains("**Cache sharing**"), "{s}");
    assert!(s.contains("**NUMA nodes**"), "{s}");
}

#[test]
fn output_writes_the_file_and_nothing_to_stdout() {
    let (g, root) = unpack("16amd64-8n2c");
    let out = g.0.join("topo.json");
    let o = numaprobe(&[
        "topo",
        "--format",
        "json",
        "--sysfs-root",
        root.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["numa_nodes"].as_array().unwrap().len(), 8);
}

#[test]
fn this_machine_reads_and_no_arguments_prints_the_summary() {
    let o = numaprobe(&["topo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.starts_with("Machine (/)"), "{s}");
    assert!(s.contains("Numbering: "), "{s}");

    let o = numaprobe(&["topo", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["allowed"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "sched_getaffinity"));

    // With no arguments the main job runs and writes its report folder into
    // the working directory: give it a private one.
    let cwd = tmp();
    let o = numaprobe_in(&[], cwd.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(cwd.path().join("numaprobe-report/run.json").is_file());
    let s = stdout(&o);
    assert!(s.contains("NUMA nodes"), "{s}");
    assert!(s.contains("numaprobe topo"), "{s}");
}

/// `word` occurs in `text` with no identifier character on either side.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Every key `topo --format json` emits is named in the manual's JSON
/// section: the contract is documented or it is not a contract.
#[test]
fn every_json_key_is_documented_in_the_manual() {
    let manual =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../doc/json.md"))
            .unwrap();
    let start = manual
        .find("<!-- section: json-topo -->")
        .expect("json-topo section");
    let rest = &manual[start + 1..];
    let section = &rest[..rest.find("<!-- section:").unwrap_or(rest.len())];

    fn keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.insert(k.clone());
                    keys(x, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
            _ => {}
        }
    }
    let mut all = std::collections::BTreeSet::new();
    for name in [
        "memorysidecaches",
        "40intel64-2g2n4c+pcilocality",
        "nvidiagpunumanodes",
    ] {
        let (_g, root) = unpack(name);
        let o = numaprobe(&[
            "topo",
            "--format",
            "json",
            "--sysfs-root",
            root.to_str().unwrap(),
        ]);
        keys(&serde_json::from_str(&stdout(&o)).unwrap(), &mut all);
    }
    let missing: Vec<&String> = all.iter().filter(|k| !has_word(section, k)).collect();
    assert!(
        missing.is_empty(),
        "keys missing from doc/json.md: {missing:?}"
    );
}

/// Write `kb` as node `node`'s MemTotal in the dump at `root`.
fn forge_memtotal(root: &Path, node: u32, kb: &str) {
    let meminfo = root.join(format!("sys/devices/system/node/node{node}/meminfo"));
    let old = std::fs::read_to_string(&meminfo).unwrap();
    let forged: String = old
        .lines()
        .map(|l| {
            if l.contains("MemTotal:") {
                format!("Node {node} MemTotal:       {kb} kB")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&meminfo, forged + "\n").unwrap();
}

/// A node's MemTotal past a 64-bit byte count is refused with a note naming
/// its file, in the node's row and the machine's total alike: never
/// 16384 PiB, never a wrapped small figure.
#[test]
fn a_memtotal_past_64_bits_is_refused_not_wrapped() {
    let (_g, root) = unpack("16amd64-8n2c");
    forge_memtotal(&root, 1, "18446744073709551615");
    let o = numaprobe(&["topo", "--sysfs-root", root.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    let all = stdout(&o) + &stderr(&o);
    assert!(!all.contains("PiB") && !all.contains("EiB "), "{all}");
    // The note is folded to the terminal's width; its words are what count.
    let flat = all.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("node1/meminfo: MemTotal larger than a 64-bit byte count"),
        "{all}"
    );
    // The total is the seven other nodes' memory.
    let o = numaprobe(&[
        "topo",
        "--sysfs-root",
        root.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let nodes = v["numa_nodes"].as_array().unwrap();
    let n1 = nodes.iter().find(|n| n["os_index"] == 1).unwrap();
    assert_eq!(n1["memory_bytes"], 0);
    assert!(nodes
        .iter()
        .all(|n| n["memory_bytes"].as_u64().unwrap() < 1 << 40));
}

/// Two nodes whose MemTotal each fits a 64-bit byte count (2^54 - 1 kB, 1
/// KiB under 16 EiB) but whose sum does not: each node keeps its figure,
/// and the machine's total reads as unknown, never as a wrapped figure,
/// in the dump's summary and in the page of its topo.json read back.
#[test]
fn memory_that_adds_up_past_64_bits_is_unknown_not_wrapped() {
    let (g, root) = unpack("16amd64-8n2c");
    let kb = "18014398509481983";
    forge_memtotal(&root, 0, kb);
    forge_memtotal(&root, 1, kb);
    let each = 18014398509481983u64 * 1024;
    let unknown = "memory unknown (the nodes' figures add up past 16 EiB)";
    let o = numaprobe(&["topo", "--sysfs-root", root.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    let flat = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(unknown), "{flat}");
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let saved = g.path().join("topo.json");
    let o = numaprobe(&[
        "topo",
        "--sysfs-root",
        root.to_str().unwrap(),
        "-o",
        saved.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let nodes = v["numa_nodes"].as_array().unwrap();
    for n in [0, 1] {
        let node = nodes.iter().find(|x| x["os_index"] == n).unwrap();
        assert_eq!(node["memory_bytes"].as_u64(), Some(each), "{node}");
    }
    // Read back: the page made of the document says the same.
    let o = numaprobe(&["report", saved.to_str().unwrap(), "-o", "-"]);
    assert!(o.status.success(), "{o:?}");
    let page = stdout(&o).replace("&#39;", "'").replace("&#x27;", "'");
    assert!(page.contains(unknown), "{}", &page[..page.len().min(400)]);
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}
