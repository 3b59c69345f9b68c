//! A refusal found while a matrix document is read, kept whole beside
//! serde's error, and the one matrix error a text that did not read gives.

use crate::analysis::matrix::MatrixError;
use serde::de;
use std::cell::RefCell;

/// A refusal found inside the text, kept whole beside serde's error (which
/// would add a position to it).
pub(crate) type Stash = RefCell<Option<MatrixError>>;

pub(super) fn refuse<E: de::Error>(stash: &Stash, e: MatrixError) -> E {
    let msg = e.to_string();
    *stash.borrow_mut() = Some(e);
    E::custom(msg)
}

/// The matrix error for a text that did not read: a refusal found while
/// reading as it is, a document past its memory budget as a shape (it is
/// valid JSON), anything else as invalid JSON.
pub(crate) fn error_of(stash: &Stash, e: serde_json::Error) -> MatrixError {
    if let Some(m) = stash.borrow_mut().take() {
        return m;
    }
    match e.classify() {
        serde_json::error::Category::Data => MatrixError::Shape(e.to_string()),
        _ => MatrixError::Json(e.to_string()),
    }
}
