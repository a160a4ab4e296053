# Loads the bitstream into the VC709's FPGA over JTAG for a quick try (lost at power off).
#
#   vivado -mode batch -source constraints/load.tcl -tclargs HDL_DIR OUT_DIR
#
# HDL_DIR holds board_params.tcl (from `board-xdc`), OUT_DIR the bitstream build.tcl wrote.
# Without Vivado, `openFPGALoader -b vc709 OUT_DIR/smartnic_vc709.bit` does the same.

if {[llength $argv] != 2} {
    error "usage: vivado -mode batch -source load.tcl -tclargs HDL_DIR OUT_DIR"
}
lassign $argv hdl_dir out_dir
source [file join $hdl_dir board_params.tcl]
set bit [file join $out_dir ${board_top}.bit]
if {![file exists $bit]} {
    error "no bitstream $bit: run `scripts/board build` first"
}

open_hw_manager
connect_hw_server
open_hw_target
set dev [lindex [get_hw_devices ${board_device}*] 0]
current_hw_device $dev
set_property PROGRAM.FILE $bit $dev
program_hw_devices $dev
close_hw_target
