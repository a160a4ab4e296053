//! `readout`: the engines that move an epoch's idle bank to the host faster than one BAR
//! read per counter.
//!
//! | module | what |
//! |---|---|
//! | [`stream`] | the readout-stream engine: every window at once (a lane each), packed, CRC-checked, on a 256-bit AXI-Stream master |
//! | [`lane`] | one window of the stream: its reads, packing, chunks and FIFO |
//! | [`ring`] | the record ring: the record stream as it is produced, on its own AXI-Stream master |
pub mod lane;
pub mod ring;
pub mod stream;
