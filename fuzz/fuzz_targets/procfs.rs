//! Fuzz target `procfs`: the bytes go to [`numaprobe_fuzz::procfs`], the entry
//! the corpus replay test calls too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaprobe_fuzz::procfs(data));
