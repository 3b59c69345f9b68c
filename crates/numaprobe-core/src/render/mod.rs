//! Renderers: turn result-model values into text (table, CSV, Markdown,
//! JSON), pictures (SVG/PNG) and the HTML report. They sit above everything
//! and read only the model; they never measure and never analyse.
pub mod diff;
