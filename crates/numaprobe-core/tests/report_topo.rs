//! The topology exporters on real machines' dumps: the JSON contract round
//! trips to the model, and the terminal picture shows what seed 003 asks a
//! person to see at a glance (CPU 0 and CPU 1 on different packages, SMT
//! siblings far apart, CPU-less nodes, what is not allowed).

mod common;

use numaprobe_core::report::topo::{self, TopoReport};
use numaprobe_core::topology;

#[test]
fn json_round_trips_to_the_model_and_names_nodes_numa_nodes() {
    let u = common::unpack("nvidiagpunumanodes");
    let t = topology::read(&u.root).unwrap();
    let json = topo::to_json(&t);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schema"], "numaprobe/1");
    assert!(v.get("nodes").is_none());
    assert_eq!(v["numa_nodes"].as_array().unwrap().len(), 8);
    assert_eq!(v["numa_nodes"][2]["os_index"], 250);
    assert_eq!(v["numa_nodes"][2]["cpus"], serde_json::json!([]));
    assert_eq!(v["distances"]["node_ids"][1], 8);
    let back: TopoReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.into_topology(), t);
}

#[test]
fn text_makes_round_robin_numbering_visible() {
    let u = common::unpack("40intel64-2g2n4c+pcilocality");
    let t = topology::read(&u.root).unwrap();
    let s = topo::to_text(&t);
    assert!(
        s.contains("Numbering: CPU 0 and CPU 1 are on different packages (0 and 1)"),
        "{s}"
    );
    assert!(s.contains("alternate across 4 packages"), "{s}");
    assert!(s.contains("offline CPUs: 40-79"), "{s}");
    // 40 online CPUs: one row per CPU, as in seed 003.
    assert!(
        s.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["1", "0", "0", "1", "1", "yes"]),
        "{s}"
    );
}

#[test]
fn text_folds_big_machines_and_shows_what_is_not_allowed() {
    let u = common::unpack("32amd64-4s2n4c-cgroup2");
    let t = topology::read(&u.root).unwrap();
    let s = topo::to_text(&t);
    assert!(s.contains("Not allowed for this process (cgroup2:/cgroup/unified/uid_2008/job_15389/step_0/cpuset.cpus.effective"), "{s}");
    assert!(s.contains("  CPUs  6-31\n"), "{s}");
    assert!(s.contains("  nodes 6-7\n"), "{s}");

    let u = common::unpack("256ia64-64n2s2c");
    let t = topology::read(&u.root).unwrap();
    let s = topo::to_text(&t);
    assert!(s.contains("folded: one row per node and thread"), "{s}");
    let rows = s
        .lines()
        .skip_while(|l| !l.starts_with("Processors"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .count();
    assert_eq!(rows, 64, "one row per node");
}

#[test]
fn csv_has_the_cpu_table_then_the_distance_table() {
    let u = common::unpack("16amd64-8n2c");
    let t = topology::read(&u.root).unwrap();
    let s = topo::to_csv(&t);
    let (cpus, dist) = s.split_once("\n\n").unwrap();
    let lines: Vec<&str> = cpus.lines().collect();
    assert_eq!(
        lines[0],
        "cpu,online,allowed,package,die,core,thread,node,smt_siblings"
    );
    assert_eq!(lines.len(), 17);
    assert_eq!(lines[3], "2,true,true,1,-,0,0,1,2");
    let d: Vec<&str> = dist.lines().collect();
    assert_eq!(d[0], "node,0,1,2,3,4,5,6,7");
    assert_eq!(d[1], "0,10,20,20,20,20,20,20,20");
    assert_eq!(d.len(), 9);
}
