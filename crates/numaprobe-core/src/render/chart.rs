//! What the report's pictures share: the font their text is drawn in and the
//! encoding of a drawn RGB buffer as PNG bytes. `graph` (the node graph of
//! `infer`) and `study_chart` (the study's bar charts) draw with plotters
//! and come here for both, so there is one bundled font and one PNG encoder.
//!
//! Text in a PNG needs a font without the system's fontconfig: plotters'
//! `ab_glyph` backend renders from font bytes registered once, here the
//! DejaVu Sans bundled by the `dejavu` crate. Rendering goes to memory; the
//! library never writes files, the caller decides where the bytes go.

use plotters::style::FontStyle;
use std::sync::OnceLock;

/// The family name every chart asks plotters for.
pub const FONT: &str = "sans-serif";

/// Register the bundled font under [`FONT`] (once per process; later calls
/// return the first call's outcome). The error is the message to show.
pub fn register_font() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .map_err(|_| "the bundled DejaVu Sans font did not load".to_string())
    })
    .clone()
}

/// A `width` x `height` RGB buffer (3 bytes a pixel, rows top first, as
/// plotters' `BitMapBackend::with_buffer` fills it) as the bytes of a PNG
/// file. The error is the encoder's message (or says the buffer's length
/// does not match the size, which the encoder would panic on).
pub fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    use image::ImageEncoder;
    let want = width as usize * height as usize * 3;
    if rgb.len() != want {
        return Err(format!(
            "{} bytes of pixels for a {width}x{height} image (want {want})",
            rgb.len()
        ));
    }
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(rgb, width, height, image::ColorType::Rgb8)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_font_registers_and_a_buffer_encodes_as_png() {
        register_font().unwrap();
        register_font().unwrap();
        let png = encode_png(&[255; 2 * 3 * 3], 2, 3).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(encode_png(&[0; 5], 2, 3).is_err(), "short buffer");
    }
}
