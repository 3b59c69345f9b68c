//! Reading srun's output a line at a time without holding more of a line
//! than the reader takes.

use std::io::BufRead;

/// One line read with a bound.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// The line is in the buffer (without its newline).
    Read,
    /// A line longer than the bound: this many bytes were read past and dropped.
    TooLong(usize),
    /// The end of the input.
    Eof,
}

/// Read one line into `buf` (cleared first), never holding more than `max`
/// bytes of it: a longer line is read to its end and dropped.
pub fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    let mut total = 0usize;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(match total {
                0 => Line::Eof,
                n if n > max => Line::TooLong(n),
                _ => Line::Read,
            });
        }
        let (take, newline) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if total + take <= max {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            buf.clear();
        }
        total += take;
        r.consume(take + usize::from(newline));
        if newline {
            return Ok(if total > max {
                Line::TooLong(total)
            } else {
                Line::Read
            });
        }
    }
}
