//! The stream's bounds across nodes: the unfinished files of all nodes
//! held within [`Limits::pending`] (the node holding the most dropped,
//! or the node asking when none holds anything), a finished file's bytes
//! given back, and the node names taken without a list.

use super::*;

/// A piece of `file` from `node`, one of many that never complete it.
fn never_done(node: &str, file: &str, part: usize) -> Vec<u8> {
    file_line(node, file, &part.to_string(), "100000", &"QUJD".repeat(200))
}

#[test]
fn the_stream_holds_a_bounded_total_and_drops_the_node_holding_most() {
    let cost = 800 + PIECE_COST;
    let lim = Limits {
        pending: 100 * cost,
        ..Limits::default()
    };
    let mut c = Collector::with_limits(lim);
    // 25 invented names, each with 60 pieces of a file never finished:
    // four times the bound, in turns as a real stream interleaves them.
    let mut skips: Vec<(String, FrameError)> = Vec::new();
    for part in 0..60 {
        for n in 0..25 {
            let node = format!("fake{n}");
            let e = c.line(&never_done(&node, "run.json", part));
            if let Some(e) = e.filter(|e| !matches!(e, Event::Piece(_))) {
                let (who, why) = skipped(Some(e));
                skips.push((who.unwrap(), why));
            }
            assert!(c.held() <= lim.pending, "{} held", c.held());
        }
    }
    assert!(!skips.is_empty());
    let (who, why) = &skips[0];
    assert!(
        matches!(why, FrameError::Dropped { limit, .. } if *limit == lim.pending),
        "{why}"
    );
    let text = why.to_string();
    assert!(
        text == "dropped: the stream reached the 84.4 KiB of unfinished files it holds for all nodes together, this node holding the most of them (3.4 KiB); its files are not taken",
        "{text}"
    );
    // A dropped node stays dropped; the others' complete files still come
    // back whole however full the stream is.
    assert!(matches!(
        c.line(&never_done(who, "other", 0)),
        Some(Event::Skipped {
            why: FrameError::Dropped { .. },
            ..
        })
    ));
    let bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    let mut whole = None;
    for f in Frame::file("np1", "run.json", &bytes) {
        let e = c.line(f.line().as_bytes());
        if let Some(e) = e.filter(|e| !matches!(e, Event::Piece(_))) {
            whole = Some(e);
        }
        assert!(c.held() <= lim.pending);
    }
    assert_eq!(
        whole,
        Some(Event::File {
            node: "np1".into(),
            name: "run.json".into(),
            bytes
        })
    );
    // The invented names were dropped in turn until the last one's 60
    // pieces fit; each said so on its next line.
    let names: std::collections::BTreeSet<&str> = skips.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 24);
    assert!(c.dropped().is_empty());
    assert_eq!(c.unfinished().len(), 1);
    assert_eq!(c.held(), 60 * cost);
}

#[test]
fn a_finished_file_gives_its_bytes_back_to_the_bound() {
    let cost = 800 + PIECE_COST;
    let lim = Limits {
        pending: 3 * cost,
        ..Limits::default()
    };
    let mut c = Collector::with_limits(lim);
    // Ten nodes in turn, each sending a three-piece file whole: the bound
    // is never crossed, nothing is dropped.
    for n in 0..10 {
        let node = format!("np{n}");
        for part in 0..3 {
            let e = c.line(&file_line(
                &node,
                "f",
                &part.to_string(),
                "3",
                &"QUJD".repeat(200),
            ));
            assert_eq!(matches!(e, Some(Event::File { .. })), part == 2, "{e:?}");
            assert!(!matches!(e, Some(Event::Skipped { .. })), "{e:?}");
        }
        assert_eq!(c.held(), 0);
    }
    // One piece over: the node holding the most (np0, two pieces) goes,
    // np1 (one piece) keeps its file.
    c.line(&never_done("np0", "g", 0));
    c.line(&never_done("np0", "g", 1));
    c.line(&never_done("np1", "g", 0));
    assert_eq!(c.held(), 3 * cost);
    assert_eq!(
        c.line(&never_done("np1", "g", 1)),
        Some(Event::Piece("np1".into()))
    );
    assert_eq!(c.held(), 2 * cost);
    assert_eq!(c.dropped().len(), 1);
    assert_eq!(c.dropped()[0].0, "np0");
    assert_eq!(c.unfinished(), [("np1".to_string(), "g".to_string())]);
}

#[test]
fn without_a_node_list_only_the_job_s_node_count_of_names_is_taken() {
    let mut c = Collector::default().at_most(2);
    for n in ["np1", "np2", "np1"] {
        let start = Frame::Start { node: n.into() }.line();
        assert_eq!(c.line(start.as_bytes()), Some(Event::Started(n.into())));
    }
    for n in ["np3", "fake"] {
        let (who, why) = skipped(c.line(never_done(n, "run.json", 0).as_slice()));
        assert_eq!(who.as_deref(), Some(n));
        assert_eq!(why, FrameError::TooManyNames(2));
    }
    assert_eq!(
        FrameError::TooManyNames(2).to_string(),
        "more node names than the job's 2 nodes; the lines of the names after the first 2 are not taken"
    );
    assert_eq!(c.held(), 0);
    // With a list, the list decides, not the count.
    let mut c = Collector::default().only_from(&["np9".into()]).at_most(0);
    let start = Frame::Start { node: "np9".into() }.line();
    assert_eq!(c.line(start.as_bytes()), Some(Event::Started("np9".into())));
}

#[test]
fn a_piece_past_the_bound_while_nothing_is_held_drops_its_own_node() {
    let cost = 800 + PIECE_COST;
    let lim = Limits {
        pending: cost - 1,
        ..Limits::default()
    };
    let mut c = Collector::with_limits(lim);
    // np1 is heard from but holds nothing; np2's first piece alone is past
    // the bound: np2 goes, not a node that holds nothing to give back.
    let start = Frame::Start { node: "np1".into() }.line();
    assert_eq!(c.line(start.as_bytes()), Some(Event::Started("np1".into())));
    let (who, why) = skipped(c.line(&never_done("np2", "run.json", 0)));
    assert_eq!(who.as_deref(), Some("np2"));
    assert_eq!(
        why,
        FrameError::Dropped {
            limit: cost - 1,
            own: 0
        }
    );
    assert_eq!(c.held(), 0);
    assert!(c.dropped().is_empty(), "np2's line said so");
    // np1 still sends a small file whole.
    let mut got = None;
    for f in Frame::file("np1", "run.json", b"{}") {
        got = c.line(f.line().as_bytes());
    }
    assert_eq!(
        got,
        Some(Event::File {
            node: "np1".into(),
            name: "run.json".into(),
            bytes: b"{}".to_vec()
        })
    );
}
