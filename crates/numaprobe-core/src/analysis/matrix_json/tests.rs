//! The matrix document readers' bounds, seen from the text.

use crate::analysis::{parse, MatrixError};

/// A row or a matrix longer than the nodes it names is refused as it is
/// read, at the first value too many (so "more than"): the values after
/// it are never built.
#[test]
fn arrays_longer_than_their_declared_nodes_are_refused_while_read() {
    let cases = [
        (
            r#"{"unit":"ns","cpu_nodes":[0,1],"mem_nodes":[0,1],"matrix":[[1,2,3,4,5],[1,2]]}"#,
            "row 0 has more than 2 values, expected 2 (one per memory node)",
        ),
        (
            r#"{"unit":"ns","cpu_nodes":[0],"mem_nodes":[0,1],"matrix":[[1,2],[3,4],[5,6]]}"#,
            "the matrix has more than 1 rows but 1 row nodes are named",
        ),
        (
            r#"{"node_ids":[0,1],"slit":[[10,20],[20,10],[1]]}"#,
            "the SLIT must be square over its 2 nodes",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            parse(text, None),
            Err(MatrixError::Shape(want.into())),
            "{text}"
        );
    }
    // Nothing named: no more rows than a matrix may name nodes.
    let long = format!(r#"{{"unit":"ns","matrix":[{}[1]]}}"#, "[1],".repeat(2049));
    let e = parse(&long, None).unwrap_err().to_string();
    assert!(e.starts_with("`matrix` has more than 2048 rows"), "{e}");
}

/// Fields a matrix is not made of are skipped unbuilt: one that would
/// take many times its size as a JSON tree (300,000 empty arrays, past
/// what a document of its size may build) costs nothing.
#[test]
fn a_huge_field_a_matrix_does_not_use_is_skipped_unbuilt() {
    let empties = format!("[{}[]]", "[],".repeat(300_000));
    let text = format!(r#"{{"unit":"ns","trace":{empties},"matrix":[[10,20],[21,11]]}}"#);
    let whole = crate::model::bounded::from_slice::<serde_json::Value>(text.as_bytes());
    assert!(whole.is_err());
    let m = parse(&text, None).unwrap();
    assert_eq!(m.get(1, 0), Some(21.0));
    // A run's other matrix and fields are skipped alike.
    let run = format!(
        r#"{{"topology":{{"distances":{{"node_ids":[0,1],"matrix":[[10,20],[20,10]]}},"pci_devices":{empties}}},
            "bandwidth":{{"unit":"GB/s","matrix":{empties}}},
            "latency":{{"unit":"ns","cpu_nodes":[0,1],"mem_nodes":[0,1],"matrix":[[90,130],[131,91]],
              "cells":[{{"cpu_node":1,"mem_node":0,"flagged":true,"flags":["spread",3]}},{{"cpu_node":0,"mem_node":0,"trace":{empties}}}]}}}}"#
    );
    let m = parse(&run, None).unwrap();
    assert_eq!(m.get(1, 0), Some(131.0));
    assert_eq!(m.slit.as_ref().and_then(|s| s.get(0, 1)), Some(20.0));
    assert_eq!(m.flagged, vec![([1, 0], vec!["spread".to_string()])]);
}

/// Each bound of a grid refuses the first element past it with one line
/// naming the array and what it may hold: the values of a row and the rows
/// of a SLIT, by its named nodes or, with none named, by the most nodes a
/// matrix may name; the firmware's `distances` alike.
#[test]
fn every_grid_bound_refuses_in_one_line_naming_the_array_and_its_limit() {
    let values = |n: usize| vec!["1"; n].join(",");
    let rows = |n: usize| vec!["[10]"; n].join(",");
    let cases = [
        (
            format!(r#"{{"unit":"ns","matrix":[[{}]]}}"#, values(2049)),
            "`matrix` row 0 has more than 2048 values; at most 2048 nodes can be analysed \
             (Linux has at most 1024 NUMA nodes)",
        ),
        (
            r#"{"node_ids":[0,1],"slit":[[10,20,30],[20,10]]}"#.to_string(),
            "the SLIT must be square over its 2 nodes",
        ),
        (
            r#"{"distances":{"node_ids":[0,1],"matrix":[[10,20],[20,10],[10,10]]}}"#.to_string(),
            "the SLIT must be square over its 2 nodes",
        ),
        (
            format!(r#"{{"distances":{{"matrix":[{}]}}}}"#, rows(2049)),
            "`distances.matrix` has more than 2048 rows; at most 2048 nodes can be analysed \
             (Linux has at most 1024 NUMA nodes)",
        ),
        (
            format!(r#"{{"slit":[[{}]]}}"#, values(2049)),
            "`slit` row 0 has more than 2048 values; at most 2048 nodes can be analysed \
             (Linux has at most 1024 NUMA nodes)",
        ),
    ];
    for (text, want) in cases {
        let e = parse(&text, None).unwrap_err();
        assert_eq!(
            e,
            MatrixError::Shape(want.into()),
            "{}",
            &text[..60.min(text.len())]
        );
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    // At the limit itself nothing is refused while reading.
    let at = r#"{"unit":"ns","cpu_nodes":[0],"mem_nodes":[0,1],"matrix":[[1,2]]}"#;
    assert_eq!(parse(at, None).unwrap().get(0, 1), Some(2.0));
}

/// A grid or a row of another shape is refused as soon as it is met, a
/// null grid is none, and a field nested past what may be read
/// ([`crate::model::bounded::MAX_DEPTH`] levels) is one line naming where
/// and the limit, a field a matrix does not use as well.
#[test]
fn a_grid_of_another_shape_or_nested_too_deep_is_one_line() {
    let refused = [
        (
            r#"{"unit":"ns","matrix":{"a":[[1]]}}"#,
            "`matrix` must be an array of rows",
        ),
        (
            r#"{"unit":"ns","matrix":"[[1]]"}"#,
            "`matrix` must be an array of rows",
        ),
        (
            r#"{"unit":"ns","matrix":[[1],2]}"#,
            "`matrix` row 1 is not an array",
        ),
        (
            r#"{"unit":"ns","matrix":[[1],null]}"#,
            "`matrix` row 1 is not an array",
        ),
    ];
    for (text, want) in refused {
        assert_eq!(
            parse(text, None),
            Err(MatrixError::Shape(want.into())),
            "{text}"
        );
    }
    assert_eq!(
        parse(r#"{"unit":"ns","matrix":null}"#, None),
        Err(MatrixError::Empty)
    );
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let e = parse(&format!(r#"{{"unit":{deep},"matrix":[[1]]}}"#), None)
        .unwrap_err()
        .to_string();
    let said = "levels deep at line 1 column 135: at most 127 levels of nesting are allowed";
    assert!(e.contains(said), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let skipped = format!(r#"{{"unit":"ns","trace":{deep},"matrix":[[7]]}}"#);
    let e = parse(&skipped, None).unwrap_err().to_string();
    assert!(
        e.contains("levels deep at line 1 column 148: at most"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}
