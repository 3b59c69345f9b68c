//! Fuzz target `documents`: the bytes go to [`numaprobe_fuzz::documents`], the entry
//! the corpus replay test calls too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaprobe_fuzz::documents(data));
