//! Fuzz target `fleet_stream`: the bytes go to [`numaprobe_fuzz::fleet_stream`],
//! the entry the corpus replay test calls too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaprobe_fuzz::fleet_stream(data));
