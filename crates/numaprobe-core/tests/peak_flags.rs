//! A flagged system peak as every format shows it: the star and its reason
//! in text and Markdown, the main job's summary line and JSON. Here rather
//! than beside the peak experiment, which never names the renderers.

use numaprobe_core::experiments::peak::memory_only;
use numaprobe_core::model::peak::SystemPeak;

#[test]
fn a_flagged_system_peak_is_starred_with_its_reason_in_every_format() {
    let mut r = memory_only(Default::default());
    r.system.push(SystemPeak {
        mix: "read".into(),
        threads: 2,
        gbs: 16.2,
        placement: 1.0,
        samples: 5,
        cv: 0.165,
        sum_of_nodes_alone_gbs: None,
        flags: vec!["unstable: CV 16.5 %".into()],
        flagged: true,
        set_aside: Default::default(),
    });
    let text = numaprobe_core::render::peak::render(&r, numaprobe_core::model::Format::Table);
    assert!(text.contains("16.20*"), "{text}");
    assert!(text.contains("system read*: unstable: CV 16.5 %"), "{text}");
    let md = numaprobe_core::render::peak::render(&r, numaprobe_core::model::Format::Markdown);
    assert!(md.contains("system read*: unstable: CV 16.5 %"), "{md}");
    let line = numaprobe_core::render::run_extra::peak_line(&r);
    assert!(line.starts_with("system peak: 16.2 GB/s* read"), "{line}");
    assert!(line.ends_with("; * unstable: CV 16.5 %"), "{line}");
    let v: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(v["system"][0]["flagged"], true);
    let csv = numaprobe_core::render::peak::render(&r, numaprobe_core::model::Format::Csv);
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",theoretical_gbps,flagged,flags"),
        "{csv}"
    );
    assert!(
        lines.next().unwrap().ends_with(",true,unstable: CV 16.5 %"),
        "{csv}"
    );
    r.system[0].flagged = false;
    r.system[0].flags.clear();
    let text = numaprobe_core::render::peak::render(&r, numaprobe_core::model::Format::Table);
    assert!(!text.contains('*') && !text.contains("Flagged"), "{text}");
    let csv = numaprobe_core::render::peak::render(&r, numaprobe_core::model::Format::Csv);
    assert!(csv.lines().nth(1).unwrap().ends_with(",false,"), "{csv}");
}
