//! Fuzz target `smbios_raw`: the bytes go to [`numaprobe_fuzz::smbios_raw`], the entry
//! the corpus replay test calls too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaprobe_fuzz::smbios_raw(data));
