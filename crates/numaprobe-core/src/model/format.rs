//! The output formats every subcommand offers: which renderer the binary
//! picks. Part of the model so the library's renderers and the binary's flags
//! name them the same way.

/// The output formats every subcommand offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Csv,
    Markdown,
}
