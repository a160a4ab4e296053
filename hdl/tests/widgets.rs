//! What rust-hdl 0.46's memory widgets become in Verilator and Yosys `synth_xilinx -family
//! xc7`. The next blocks (log2/exp2 ROMs, block-RAM sketches) rely on these inferences; the
//! findings are summarised in `hdl/README.md`.
use rust_hdl::prelude::*;
use smartnic_hdl::{flow, synth};

/// SyncROM: registered read, contents from an iterator.
#[derive(LogicBlock)]
struct SyncRomTb<const N: usize> {
    clock: Signal<In, Clock>,
    address: Signal<In, Bits<N>>,
    data: Signal<Out, Bits<16>>,
    rom: SyncROM<Bits<16>, N>,
}

impl<const N: usize> Logic for SyncRomTb<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.rom.clock.next = self.clock.val();
        self.rom.address.next = self.address.val();
        self.data.next = self.rom.data.val();
    }
}

fn sync_rom<const N: usize>() -> SyncRomTb<N> {
    SyncRomTb {
        clock: Default::default(),
        address: Default::default(),
        data: Default::default(),
        rom: (0..1u64 << N).map(|i| (((i * 2654435761) >> 7) & 0xFFFF).to_bits::<16>()).into(),
    }
}

/// ROM: combinational read (a case statement).
#[derive(LogicBlock)]
struct AsyncRomTb {
    address: Signal<In, Bits<8>>,
    data: Signal<Out, Bits<16>>,
    rom: ROM<Bits<16>, 8>,
}

impl Logic for AsyncRomTb {
    #[hdl_gen]
    fn update(&mut self) {
        self.rom.address.next = self.address.val();
        self.data.next = self.rom.data.val();
    }
}

/// RAM: simple dual port, registered read, one clock here.
#[derive(LogicBlock, Default)]
struct RamTb<const N: usize> {
    clock: Signal<In, Clock>,
    read_address: Signal<In, Bits<N>>,
    read_data: Signal<Out, Bits<32>>,
    write_address: Signal<In, Bits<N>>,
    write_data: Signal<In, Bits<32>>,
    write_enable: Signal<In, Bit>,
    ram: RAM<Bits<32>, N>,
}

impl<const N: usize> Logic for RamTb<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.ram.read_address.next = self.read_address.val();
        self.ram.write_address.next = self.write_address.val();
        self.ram.write_data.next = self.write_data.val();
        self.ram.write_enable.next = self.write_enable.val();
        self.read_data.next = self.ram.read_data.val();
    }
}

fn run(name: &str, verilog: Result<String, String>) -> synth::SynthReport {
    let dir = flow::target_dir().join("hdl-test").join("widgets");
    let path = dir.join(format!("{name}.v"));
    flow::write_if_changed(&path, &verilog.unwrap()).unwrap();
    let top = flow::module_name(name);
    flow::lint(&path, &top).unwrap_or_else(|e| panic!("{e}"));
    let r = synth::synth(&path, name, &top, &dir.join("synth")).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", r.table_row());
    r
}

#[test]
fn sync_rom_1k_x16_maps_to_one_ramb18() {
    let r = run("w_sync_rom_1k", flow::to_verilog("w_sync_rom_1k", &mut sync_rom::<10>()));
    eprintln!("{:?}", r.cells);
    assert_eq!((r.ramb18, r.ramb36), (1, 0), "{r:?}");
}

#[test]
fn sync_rom_64_x16_stays_in_luts() {
    let r = run("w_sync_rom_64", flow::to_verilog("w_sync_rom_64", &mut sync_rom::<6>()));
    eprintln!("{:?}", r.cells);
    assert_eq!((r.ramb18, r.ramb36), (0, 0), "{r:?}");
}

#[test]
fn async_rom_is_luts() {
    let mut tb = AsyncRomTb {
        address: Default::default(),
        data: Default::default(),
        rom: (0..256u64).map(|i| (i * i).to_bits::<16>()).into(),
    };
    let r = run("w_async_rom", flow::to_verilog("w_async_rom", &mut tb));
    eprintln!("{:?}", r.cells);
    assert_eq!((r.ramb18, r.ramb36), (0, 0), "{r:?}");
    assert!(r.lut > 0);
}

#[test]
fn ram_16k_x32_maps_to_block_ram() {
    let r = run("w_ram_16k", flow::to_verilog("w_ram_16k", &mut RamTb::<14>::default()));
    eprintln!("{:?}", r.cells);
    assert_eq!(r.ramb36 * 36 + r.ramb18 * 18, 16 * 36, "{r:?}");
}

#[test]
fn ram_64_x32_maps_to_lutram() {
    let r = run("w_ram_64", flow::to_verilog("w_ram_64", &mut RamTb::<6>::default()));
    eprintln!("{:?}", r.cells);
    assert_eq!((r.ramb18, r.ramb36), (0, 0), "{r:?}");
    assert!(r.lutram > 0, "{r:?}");
}
