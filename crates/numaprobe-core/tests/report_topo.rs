//! The topology exporters on real machines' dumps: the JSON contract round
//! trips to the model, and the terminal picture shows what the RWTH Aachen blog asks a
//! person to see at a glance (CPU 0 and CPU 1 on different packages, SMT
//! siblings far apart, CPU-less nodes, what is not allowed).

mod common;

use numaprobe_core::model::topo::TopoReport;
use numaprobe_core::render::topo;
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
    // 40 online CPUs: one row per CPU, as in the RWTH Aachen blog.
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
fn csv_is_one_table_with_a_row_per_cpu_and_its_cache_instances() {
    let u = common::unpack("16amd64-8n2c");
    let t = topology::read(&u.root).unwrap();
    let s = topo::to_csv(&t);
    assert!(!s.contains("\n\n"), "one table: {s}");
    let lines: Vec<&str> = s.lines().collect();
    let head: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(
        &head[..12],
        [
            "cpu",
            "online",
            "allowed",
            "node",
            "package",
            "package_id",
            "die",
            "cluster",
            "capacity",
            "core",
            "thread",
            "smt_siblings"
        ]
    );
    assert_eq!(lines.len(), 1 + t.cpus.len());
    // Every row as long as the header, and every cache column names the
    // lowest CPU of an instance that holds the row's CPU.
    for (row, c) in lines[1..].iter().zip(&t.cpus) {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f.len(), head.len(), "{row}");
        assert_eq!(f[0], c.os_index.to_string());
        for (col, name) in head.iter().enumerate().skip(12) {
            let inst: u32 = f[col].parse().unwrap();
            let short = |k: &topology::Cache| {
                let suffix = match k.kind.as_str() {
                    "Data" => "d",
                    "Instruction" => "i",
                    _ => "",
                };
                format!("l{}{suffix}", k.level)
            };
            let k = t
                .caches
                .iter()
                .find(|k| k.cpus.first() == Some(&inst) && short(k) == *name)
                .unwrap_or_else(|| panic!("{name}={inst} of cpu{}", c.os_index));
            assert!(k.cpus.contains(&c.os_index));
        }
    }
    let d = topo::to_csv_table(&t, topo::CsvTable::Distances);
    let d: Vec<&str> = d.lines().collect();
    assert_eq!(d[0], "node,0,1,2,3,4,5,6,7");
    assert_eq!(d.len(), 9);
    let n = topo::to_csv_table(&t, topo::CsvTable::Nodes);
    assert_eq!(n.lines().count(), 1 + t.nodes.len());
    let c = topo::to_csv_table(&t, topo::CsvTable::Caches);
    assert_eq!(c.lines().count(), 1 + t.caches.len());
}

#[test]
fn markdown_has_caches_memory_hmat_and_memory_side_caches() {
    let u = common::unpack("memorysidecaches");
    let t = topology::read(&u.root).unwrap();
    let s = topo::to_markdown(&t);
    for title in [
        "**Processors",
        "**Placement on packages**",
        "**Cache sharing**",
        "**NUMA nodes**",
        "**Distances (SLIT)**",
        "**HMAT",
        "**Memory-side caches",
    ] {
        assert!(s.contains(title), "no {title}: {s}");
    }
    let model = t.cpu_model.clone().expect("the dump has /proc/cpuinfo");
    assert!(s.contains(&model));
    assert!(topo::to_text(&t).contains(&format!("CPU model: {model}")));
    assert!(topo::to_text(&t).contains("Memory-side caches"));
}

#[test]
fn json_packages_carry_the_key_and_the_firmware_id() {
    // Cluster-on-Die halves with their own core_siblings under one id.
    let u = common::unpack("28em64t-2s2n7c-buggycoresiblings");
    let t = topology::read(&u.root).unwrap();
    let v: serde_json::Value = serde_json::from_str(&topo::to_json(&t)).unwrap();
    let pk = v["packages"].as_array().unwrap();
    assert_eq!(pk.len(), 4);
    let ids: Vec<i64> = pk.iter().map(|p| p["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    let fw: Vec<i64> = pk.iter().map(|p| p["os_index"].as_i64().unwrap()).collect();
    let mut sorted = fw.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [0, 0, 1, 1]);
    // -1 everywhere: no firmware id.
    let u = common::unpack("4ia64-4s");
    let t = topology::read(&u.root).unwrap();
    let v: serde_json::Value = serde_json::from_str(&topo::to_json(&t)).unwrap();
    let pk = v["packages"].as_array().unwrap();
    assert_eq!(pk.len(), 4);
    assert!(pk.iter().all(|p| p["os_index"].is_null()));
    assert!(v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["package_id"] == -1));
}
