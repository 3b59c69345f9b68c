//! The fleet stream's reader against what a node (or anything on its
//! output) may send: the round trip, and every hostile line a tester found
//! or the limits name, each skipped with the node named, never fatal.

use super::limits::PIECE_COST;
use super::*;
use std::io::Cursor;

fn file_line(node: &str, name: &str, part: &str, parts: &str, b64: &str) -> Vec<u8> {
    format!(
        "{PREFIX}{{\"kind\":\"file\",\"node\":\"{node}\",\"name\":\"{name}\",\"part\":{part},\"parts\":{parts},\"b64\":\"{b64}\"}}"
    )
    .into_bytes()
}

fn skipped(e: Option<Event>) -> (Option<String>, FrameError) {
    match e {
        Some(Event::Skipped { node, why }) => (node, why),
        other => panic!("not skipped: {other:?}"),
    }
}

#[test]
fn base64_round_trips_every_length() {
    assert_eq!(encode(b"Man"), "TWFu");
    assert_eq!(encode(b"Ma"), "TWE=");
    assert_eq!(encode(b"M"), "TQ==");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    for n in 0..40 {
        assert_eq!(decode(&encode(&bytes[..n])).unwrap(), &bytes[..n]);
    }
    assert!(decode("ab$d").is_err());
}

#[test]
fn a_file_in_pieces_comes_back_whole_in_any_order() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(LINE * 3).collect();
    let mut frames = Frame::file("np1", "run.json", &bytes);
    assert!(frames.len() > 2);
    frames.reverse();
    let mut c = Collector::default();
    let mut whole = None;
    for f in frames {
        let line = f.line();
        assert!(line.len() <= LINE, "{} bytes", line.len());
        match c.line(format!("0: {line}").as_bytes()) {
            // Each piece but the last is a sign of life of its node.
            Some(Event::Piece(node)) => assert_eq!(node, "np1"),
            Some(Event::File { node, name, bytes }) => {
                assert_eq!((node.as_str(), name.as_str()), ("np1", "run.json"));
                whole = Some(bytes);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(whole.unwrap(), bytes);
    assert!(c.unfinished().is_empty());
    assert_eq!(c.line(b"srun: job 5 queued"), None);
    let start = Frame::Start { node: "np1".into() }.line();
    assert_eq!(c.line(start.as_bytes()), Some(Event::Started("np1".into())));
    let alive = Frame::Alive { node: "np1".into() }.line();
    assert_eq!(
        alive,
        "NUMAPROBE-FLEET {\"kind\":\"alive\",\"node\":\"np1\"}\n"
    );
    assert_eq!(c.line(alive.as_bytes()), Some(Event::Alive("np1".into())));
    let end = Frame::End { node: "np1".into() }.line();
    assert_eq!(c.line(end.as_bytes()), Some(Event::Ended("np1".into())));
    // An empty file is one empty piece.
    let f = Frame::file("np1", "empty", b"");
    assert_eq!(f.len(), 1);
    assert_eq!(
        c.line(f[0].line().as_bytes()),
        Some(Event::File {
            node: "np1".into(),
            name: "empty".into(),
            bytes: vec![]
        })
    );
}

#[test]
fn a_huge_declared_piece_count_is_skipped_without_allocating() {
    let mut c = Collector::default();
    for parts in ["1000000000000", "18446744073709551615", "200000000"] {
        let (node, why) = skipped(c.line(&file_line("np7", "run.json", "0", parts, "QQ==")));
        assert_eq!(node.as_deref(), Some("np7"));
        assert!(matches!(why, FrameError::BadPart { .. }), "{why}");
        assert!(why.to_string().contains(parts), "{why}");
    }
    // Beyond usize and negative: not a frame at all.
    for parts in ["18446744073709551616", "-1"] {
        let (node, why) = skipped(c.line(&file_line("np7", "run.json", "0", parts, "QQ==")));
        assert_eq!(node.as_deref(), Some("np7"));
        assert!(matches!(why, FrameError::Malformed(_)), "{why}");
    }
    assert!(matches!(
        skipped(c.line(&file_line("np7", "a", "0", "0", ""))).1,
        FrameError::BadPart { .. }
    ));
    assert!(matches!(
        skipped(c.line(&file_line("np7", "a", "3", "3", ""))).1,
        FrameError::BadPart { .. }
    ));
    // The largest count allowed holds only what really came.
    assert_eq!(
        c.line(&file_line(
            "np7",
            "big",
            "0",
            &MAX_PARTS.to_string(),
            "QUJD"
        )),
        Some(Event::Piece("np7".into()))
    );
    assert_eq!(c.unfinished(), [("np7".to_string(), "big".to_string())]);
}

#[test]
fn a_node_that_sends_too_much_is_cut_off_and_the_others_kept() {
    let lim = Limits {
        file: 30,
        node: 1000,
        files: 3,
        ..Limits::default()
    };
    let mut c = Collector::with_limits(lim);
    // A file of 40 bytes in pieces of 8 base64 characters (6 bytes).
    let big = encode(&[7u8; 40]);
    let pieces: Vec<&str> = big
        .as_bytes()
        .chunks(8)
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    let n = pieces.len().to_string();
    let mut last = None;
    for (i, p) in pieces.iter().enumerate() {
        last = c.line(&file_line("np1", "run.json", &i.to_string(), &n, p));
        if !matches!(last, Some(Event::Piece(_))) {
            break;
        }
    }
    let (node, why) = skipped(last);
    assert_eq!(node.as_deref(), Some("np1"));
    assert_eq!(
        why,
        FrameError::FileTooLarge {
            name: "run.json".into(),
            limit: 30
        }
    );
    assert!(c.unfinished().is_empty(), "the broken file is dropped");
    // Too many files: the fourth is refused (three were begun).
    for name in ["a", "b"] {
        assert!(matches!(
            c.line(&file_line("np1", name, "0", "1", "QQ==")),
            Some(Event::File { .. })
        ));
    }
    assert_eq!(
        skipped(c.line(&file_line("np1", "c", "0", "1", "QQ=="))).1,
        FrameError::TooManyFiles(3)
    );
    // Another node is not hurt by np1's excess.
    assert!(matches!(
        c.line(&file_line("np2", "a", "0", "1", "QQ==")),
        Some(Event::File { .. })
    ));
    // All a node sends counts: many small files reach the node's limit.
    let mut c = Collector::with_limits(Limits {
        file: 1000,
        node: 300,
        files: 100,
        ..Limits::default()
    });
    let mut refused = None;
    for i in 0..10 {
        let e = c.line(&file_line("np3", &format!("f{i}"), "0", "1", "QUJD"));
        if let Some(Event::Skipped { why, .. }) = e {
            refused = Some((i, why));
            break;
        }
    }
    // Each piece costs its 4 characters and PIECE_COST.
    let fit = 300 / (4 + PIECE_COST);
    assert_eq!(refused, Some((fit, FrameError::NodeTooLarge(300))));
}

#[test]
fn a_piece_twice_or_a_count_that_changes_drops_the_file() {
    let mut c = Collector::default();
    assert_eq!(
        c.line(&file_line("np1", "x", "0", "2", "QUJD")),
        Some(Event::Piece("np1".into()))
    );
    assert_eq!(
        skipped(c.line(&file_line("np1", "x", "0", "2", "QUJD"))).1,
        FrameError::Duplicate {
            name: "x".into(),
            part: 0
        }
    );
    assert!(c.unfinished().is_empty());
    assert_eq!(
        c.line(&file_line("np1", "y", "0", "2", "QUJD")),
        Some(Event::Piece("np1".into()))
    );
    assert_eq!(
        skipped(c.line(&file_line("np1", "y", "1", "3", "QUJD"))).1,
        FrameError::PartsDisagree {
            name: "y".into(),
            was: 2,
            now: 3
        }
    );
    assert!(c.unfinished().is_empty());
}

#[test]
fn non_utf8_and_malformed_lines_are_skipped_with_the_node_named() {
    let mut c = Collector::default();
    let mut line = file_line("np4", "run.json", "0", "1", "QQ==");
    let at = line.len() - 3;
    line.insert(at, 0xff);
    let (node, why) = skipped(c.line(&line));
    assert_eq!(node.as_deref(), Some("np4"));
    assert!(matches!(why, FrameError::NotUtf8(n) if n == at), "{why}");
    // Broken JSON, an unknown kind, an unknown field, bad base64.
    for bad in [
        format!("{PREFIX}{{\"kind\":\"file\",\"node\":\"np4\""),
        format!("{PREFIX}{{\"kind\":\"exec\",\"node\":\"np4\"}}"),
        format!("{PREFIX}{{\"kind\":\"start\",\"node\":\"np4\",\"x\":1}}"),
    ] {
        let (node, why) = skipped(c.line(bad.as_bytes()));
        assert_eq!(node.as_deref(), Some("np4"), "{bad}");
        assert!(matches!(why, FrameError::Malformed(_)), "{why}");
    }
    assert_eq!(
        skipped(c.line(&file_line("np4", "x", "0", "1", "QQ$="))).1,
        FrameError::NotBase64("x".into())
    );
    // No node to name.
    let (node, _) = skipped(c.line(format!("{PREFIX}garbage").as_bytes()));
    assert_eq!(node, None);
    // A line longer than the reader takes.
    let long = [PREFIX.as_bytes(), &[b'x'; MAX_LINE]].concat();
    assert_eq!(
        skipped(c.line(&long)).1,
        FrameError::TooLong(MAX_LINE + PREFIX.len())
    );
}

#[test]
fn names_that_leave_the_folder_or_are_not_host_names_are_refused() {
    for ok in ["np1", "node-001.cluster", "a_b", &"n".repeat(MAX_NODE_NAME)] {
        assert!(valid_node_name(ok), "{ok}");
    }
    for bad in [
        "",
        "..",
        ".hidden",
        "-x",
        "a/b",
        "a b",
        "nœud",
        "a\nb",
        &"n".repeat(MAX_NODE_NAME + 1),
    ] {
        assert!(!valid_node_name(bad), "{bad:?}");
    }
    for ok in [
        "run.json",
        "report.html",
        "fleet-node.json",
        "a..b",
        ".numaprobe-manifest",
    ] {
        assert!(valid_file_name(ok), "{ok}");
    }
    for bad in [
        "",
        ".",
        "..",
        "../x",
        "a/b",
        "a\0b",
        &"f".repeat(MAX_FILE_NAME + 1),
    ] {
        assert!(!valid_file_name(bad), "{bad:?}");
    }
    let mut c = Collector::default();
    let (node, why) = skipped(c.line(&file_line("np1", "../x", "0", "1", "")));
    assert_eq!(node.as_deref(), Some("np1"));
    assert_eq!(why, FrameError::BadFileName("../x".into()));
    let (node, why) = skipped(c.line(&file_line("..", "x", "0", "1", "")));
    assert_eq!(node, None, "a bad name is not named as a node");
    assert_eq!(why, FrameError::BadNode("..".into()));
    // A long bad name is clipped in the message.
    let long = "/".repeat(1000);
    let why = skipped(c.line(&file_line(&long, "x", "0", "1", ""))).1;
    assert!(why.to_string().len() < 400, "{why}");
}

#[test]
fn lines_are_read_with_a_bound_and_a_long_one_dropped() {
    let long = "y".repeat(50);
    let input = format!("short\n{long}\nexact-10ch\nlast");
    let mut r = Cursor::new(input.into_bytes());
    let mut buf = Vec::new();
    // A small buffer in front, so a line spans several fills.
    let mut r = std::io::BufReader::with_capacity(4, &mut r);
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Read);
    assert_eq!(buf, b"short");
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::TooLong(50));
    assert!(buf.len() <= 10);
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Read);
    assert_eq!(buf, b"exact-10ch");
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Read);
    assert_eq!(buf, b"last");
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Eof);
    // An over-long last line without a newline.
    let mut r = Cursor::new(long.into_bytes());
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::TooLong(50));
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Eof);
    // Non-UTF-8 bytes are read like any others.
    let mut r = Cursor::new(b"\xff\xfe\nok\n".to_vec());
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Read);
    assert_eq!(buf, b"\xff\xfe");
    assert_eq!(read_line(&mut r, &mut buf, 10).unwrap(), Line::Read);
    assert_eq!(buf, b"ok");
}

#[test]
fn every_limit_is_inclusive() {
    // A line of exactly the reader's bound is read; one byte more is not.
    let frame = format!("{PREFIX}{{\"kind\":\"start\",\"node\":\"np1\"}}");
    let exact = format!("{frame:<MAX_LINE$}");
    assert_eq!(exact.len(), MAX_LINE);
    assert_eq!(
        parse_line(exact.as_bytes()),
        Some(Ok(Frame::Start { node: "np1".into() }))
    );
    let over = format!("{exact} ");
    assert_eq!(
        parse_line(over.as_bytes()),
        Some(Err(FrameError::TooLong(MAX_LINE + 1)))
    );
    // A node may send exactly its limit: two one-piece files fill it, the
    // third is one piece too many.
    let mut c = Collector::with_limits(Limits {
        file: 1000,
        node: 2 * (4 + PIECE_COST),
        files: 100,
        ..Limits::default()
    });
    for name in ["a", "b"] {
        assert!(
            matches!(
                c.line(&file_line("np1", name, "0", "1", "QUJD")),
                Some(Event::File { .. })
            ),
            "{name}"
        );
    }
    assert_eq!(
        skipped(c.line(&file_line("np1", "c", "0", "1", "QUJD"))).1,
        FrameError::NodeTooLarge(2 * (4 + PIECE_COST))
    );
    // A file of exactly the limit's bytes comes back; one byte more is
    // refused, by its base64 length before it is decoded.
    let mut c = Collector::with_limits(Limits {
        file: 3,
        node: 1000,
        files: 100,
        ..Limits::default()
    });
    assert_eq!(
        c.line(&file_line("np1", "three", "0", "1", "QUJD")),
        Some(Event::File {
            node: "np1".into(),
            name: "three".into(),
            bytes: b"ABC".to_vec()
        })
    );
    assert_eq!(
        skipped(c.line(&file_line("np1", "four", "0", "1", "QUJDRA=="))).1,
        FrameError::FileTooLarge {
            name: "four".into(),
            limit: 3
        }
    );
}

#[test]
fn a_malformed_line_is_one_line_whatever_it_quotes() {
    // Found by the fleet_stream fuzz target: a kind holding `\n` (a JSON
    // escape) came back as a newline inside the JSON reader's message.
    let line = format!("{PREFIX}{{\"kind\":\"file\\nx\\u0007\",\"node\":\"np1\"}}");
    let (node, why) = skipped(Collector::default().line(line.as_bytes()));
    assert_eq!(node.as_deref(), Some("np1"));
    let msg = why.to_string();
    assert!(matches!(why, FrameError::Malformed(_)), "{msg}");
    assert!(!msg.chars().any(char::is_control), "{msg:?}");
    assert!(msg.contains(r"file\nx\u{7}"), "{msg}");
}

#[test]
fn frames_of_a_node_the_job_did_not_ask_for_are_skipped_naming_it() {
    let asked: Vec<String> = ["np1", "np2"].map(String::from).to_vec();
    let mut c = Collector::default().only_from(&asked);
    // np1 writes a whole file in np3's name, then starts and ends as np9.
    let f = Frame::file("np3", "run.json", b"{}");
    let (node, why) = skipped(c.line(f[0].line().as_bytes()));
    assert_eq!(node.as_deref(), Some("np3"));
    assert_eq!(why, FrameError::NotAsked("np1, np2".into()));
    assert_eq!(
        why.to_string(),
        "not one of the job's nodes (np1, np2); its lines are not taken"
    );
    for f in [
        Frame::Start { node: "np9".into() },
        Frame::Alive { node: "np9".into() },
        Frame::End { node: "np9".into() },
    ] {
        let (node, _) = skipped(c.line(f.line().as_bytes()));
        assert_eq!(node.as_deref(), Some("np9"));
    }
    // Nothing of theirs is kept.
    assert!(c.unfinished().is_empty());
    // The asked nodes' frames are taken as before.
    let f = Frame::file("np2", "run.json", b"{}");
    assert!(matches!(
        c.line(f[0].line().as_bytes()),
        Some(Event::File { node, .. }) if node == "np2"
    ));
    // No list (Slurm picked the nodes): every node is taken.
    let mut any = Collector::default().only_from(&[]);
    let start = Frame::Start { node: "np9".into() }.line();
    assert_eq!(
        any.line(start.as_bytes()),
        Some(Event::Started("np9".into()))
    );
    // A long list is cut in the message.
    let many: Vec<String> = (1..=40).map(|i| format!("np{i}")).collect();
    let mut c = Collector::default().only_from(&many);
    let start = Frame::Start { node: "x1".into() }.line();
    let (_, why) = skipped(c.line(start.as_bytes()));
    assert!(
        why.to_string()
            .contains("np1, np2, np3, np4, ... 40 nodes in all"),
        "{why}"
    );
}

#[path = "bound_tests.rs"]
mod bound;
