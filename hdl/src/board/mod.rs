//! `board`: the blocks of the VC709 board top around the core (`constraints/` and
//! `smartnic_contract::board` hold its pins and flow).
//!
//! | module | what |
//! |---|---|
//! | [`si5324_init`] | the SFP+ reference clock's bring-up: the Si5324 start-up sequence over I2C |
//! | [`record`] | the port record's layout: a frame's descriptor and hop stack in one word |
//! | [`port_front`] | `PortFront`: one port's parser and hop capture at its MAC clock, one record per frame, per-port counters |
//! | [`cdc_fifo`] | `CdcFifo<W, N, P>`: a Gray-pointer FIFO from one clock into another, overflow counter and high-water mark |
//! | [`port_merge`] | `PortMerge<W>`: four record streams into one, round-robin, one a core clock at most |
//! | [`front`] | `BoardFront`: four port fronts, their FIFOs into the core clock and the merge |
//! | [`counter_sync`] | `CounterSync<N>`: counters from one clock into another, taken together (a toggle handshake) |
//! | [`nic`] | `BoardNic`: the board's NIC without vendor IP: the four-port front before the sketch half, the ports' counters summed |
pub mod cdc_fifo;
pub mod counter_sync;
pub mod front;
pub mod nic;
pub mod port_front;
pub mod port_merge;
pub mod record;
pub mod si5324_init;
