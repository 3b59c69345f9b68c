//! Fuzz target `matrix_input`: the bytes go to [`numaprobe_fuzz::matrix_input`], the entry
//! the corpus replay test calls too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaprobe_fuzz::matrix_input(data));
