//! A loaded-latency load thread: pinned (checked), its own buffer bound to
//! the memory node, and on command the mix kernel (reads through the
//! streaming read kernel at the plan's vector width) over that buffer in
//! chunks at the point's delay until told to stop, each chunk's bytes added
//! to the thread's counter. `run.rs` drives it.

use super::loads_held::LoadId;
use super::rig::{setup, LoadCmd, Reply, Shared};
use crate::kernels::mix::{self, Mix, MixBuffers, LINE};
use crate::placement::BufferSpec;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};

/// Lines of traffic per load chunk (64 KiB): between two looks at the stop
/// flag and two updates of the byte counter.
const CHUNK_LINES: usize = 1024;

pub(super) fn load_thread(
    index: usize,
    cpu: u32,
    spec: &BufferSpec,
    shared: &Shared,
    rx: Receiver<LoadCmd>,
    tx: Sender<Reply>,
) {
    let (observed, mut buf) = match setup(cpu, spec) {
        Ok(x) => x,
        Err(e) => {
            let _ = tx.send(Reply::Ready(Err(e)));
            return;
        }
    };
    if let Ok(mut ids) = shared.ids.lock() {
        ids[index] = LoadId::own();
    }
    let _ = tx.send(Reply::Ready(Ok(observed)));
    let len = buf.len().min(spec.len);
    let base = buf.as_mut_ptr();
    while let Ok(cmd) = rx.recv() {
        let reply = match cmd {
            LoadCmd::Run { mix, delay, width } => {
                let chunks = Chunks::new(mix, len);
                shared.active.fetch_add(1, Ordering::SeqCst);
                let mut k = 0usize;
                while shared.running.load(Ordering::Relaxed) {
                    let b = chunks.buffers(base, k);
                    // SAFETY: the chunk lies inside our buffer (Chunks keeps
                    // it there), 64-byte aligned; reads and writes apart.
                    let bytes = unsafe { mix::run(mix, &b, delay, width) };
                    shared.bytes[index].0.fetch_add(bytes, Ordering::Relaxed);
                    k = (k + 1) % chunks.count;
                }
                shared.active.fetch_sub(1, Ordering::SeqCst);
                Reply::Ran
            }
            LoadCmd::Verify => Reply::Checked(buf.verify().map_err(|e| e.to_string())),
            LoadCmd::Quit => break,
        };
        if tx.send(reply).is_err() {
            break;
        }
    }
}

/// A load buffer cut for a mix: a read region and a write region in the
/// mix's proportion (R:W), walked in step, in chunks of about
/// [`CHUNK_LINES`] lines of traffic.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Chunks {
    /// Lines read and written per chunk.
    read_lines: usize,
    write_lines: usize,
    /// Where the write region starts.
    write_offset: usize,
    count: usize,
}

impl Chunks {
    fn new(mix: Mix, len: usize) -> Chunks {
        let (r, w) = mix.group();
        let (r, w) = (r as usize, w as usize);
        let groups = (CHUNK_LINES / (r + w)).max(1);
        let (read_lines, write_lines) = (groups * r, groups * w);
        let count = (len / ((read_lines + write_lines) * LINE)).max(1);
        Chunks {
            read_lines,
            write_lines,
            write_offset: count * read_lines * LINE,
            count,
        }
    }

    fn buffers(&self, base: *mut u8, k: usize) -> MixBuffers {
        let (rl, wl) = (self.read_lines * LINE, self.write_lines * LINE);
        MixBuffers {
            read: base.wrapping_add(k * rl) as *const u8,
            read_len: rl,
            write: base.wrapping_add(self.write_offset + k * wl),
            write_len: wl,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_stay_inside_the_buffer_in_the_mix_proportion() {
        let len = 8 << 20;
        for m in Mix::ALL {
            let c = Chunks::new(m, len);
            let (r, w) = m.group();
            assert_eq!(c.read_lines * w as usize, c.write_lines * r as usize);
            let end = c.write_offset + c.count * c.write_lines * LINE;
            assert!(end <= len, "{}", m.name());
            // The regions fill most of the buffer.
            assert!(end * 10 >= len * 9, "{}", m.name());
            assert!(c.count > 1);
        }
    }
}
