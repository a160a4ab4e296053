//! `readout`: the engines that move an epoch's idle bank to the host faster than one BAR
//! read per counter.
//!
//! | module | what |
//! |---|---|
//! | [`stream`] | the readout-stream engine: every window, packed, CRC-checked, on an AXI-Stream master |
//! | [`ring`] | the record ring: the record stream as it is produced, on its own AXI-Stream master |
pub mod ring;
pub mod stream;
