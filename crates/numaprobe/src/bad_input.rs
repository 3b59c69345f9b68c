//! Bad input: the error that is shown as one line and exits with status 2.
//! Apart from `output` (which maps errors to exit codes) so that every
//! module, the folder handles too, can raise it without importing the
//! writers.

/// Bad input: shown as one line, exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Build an `anyhow::Error` that exits with status 2.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(msg.into()))
}
