#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| smartnic::fuzz_bodies::service_server(data));
