//! Fuzz target `sysfs_tree`: the bytes go to [`numaprobe_fuzz::sysfs_tree`], the entry
//! the corpus replay test calls too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaprobe_fuzz::sysfs_tree(data));
