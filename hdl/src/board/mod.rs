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
//! | [`ns_clock`] | `NsClock`: the ports' shared time in ns at the MACs' 6.4 ns clock |
//! | [`axis_upsize`] | `AxisUpsize`: a 64-bit AXI-Stream into XDMA's 256-bit card-to-host stream |
//! | [`logic`] | `BoardLogic`: everything of ours between the vendor IP: the NIC, the time, the widened channels, the Si5324 bring-up, resets, LEDs |
//! | [`top`] | the board top `smartnic_vc709`: the contract's pins, the vendor IP (XDMA, four 10G subsystems, clock buffers) as black boxes, `BoardLogic` between them |
pub mod axis_upsize;
pub mod cdc_fifo;
pub mod counter_sync;
pub mod front;
pub mod logic;
pub mod nic;
pub mod ns_clock;
pub mod port_front;
pub mod port_merge;
pub mod record;
pub mod si5324_init;
pub mod top;
