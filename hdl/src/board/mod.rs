//! `board`: the blocks of the VC709 board top around the core (`constraints/` and
//! `smartnic_contract::board` hold its pins and flow).
//!
//! | module | what |
//! |---|---|
//! | [`si5324_init`] | the SFP+ reference clock's bring-up: the Si5324 start-up sequence over I2C |
pub mod si5324_init;
