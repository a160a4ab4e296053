# Writes the VC709's BPI flash image and programs the flash over JTAG (Vivado 2023.x+).
#
#   vivado -mode batch -source constraints/flash.tcl -tclargs HDL_DIR OUT_DIR
#
# HDL_DIR holds board_params.tcl (from `board-xdc`); OUT_DIR holds the bitstream build.tcl
# wrote and receives the .mcs. The flash is the Micron 28F00AG18F (1 Gbit, BPI x16; UG887
# 'Linear BPI Flash Memory'); write_cfgmem and create_hw_cfgmem as in UG908 'Programming
# Configuration Memory Devices'. The board boots from it on the next power cycle (SW11
# configuration mode switches at BPI, UG887 'FPGA Configuration').

if {[llength $argv] != 2} {
    error "usage: vivado -mode batch -source flash.tcl -tclargs HDL_DIR OUT_DIR"
}
lassign $argv hdl_dir out_dir
source [file join $hdl_dir board_params.tcl]
set bit [file join $out_dir ${board_top}.bit]
set mcs [file join $out_dir ${board_top}.mcs]
if {![file exists $bit]} {
    error "no bitstream $bit: run `scripts/board build` first"
}

write_cfgmem -force -format mcs -size $flash_size_mb -interface $flash_interface \
    -loadbit [list up $flash_load_addr $bit] -file $mcs

open_hw_manager
connect_hw_server
open_hw_target
set dev [lindex [get_hw_devices ${board_device}*] 0]
current_hw_device $dev
refresh_hw_device $dev
create_hw_cfgmem -hw_device $dev -mem_dev [lindex [get_cfgmem_parts $flash_part] 0]
set cfgmem [get_property PROGRAM.HW_CFGMEM $dev]
set_property PROGRAM.FILES [list $mcs] $cfgmem
set_property PROGRAM.ADDRESS_RANGE {use_file} $cfgmem
set_property PROGRAM.BPI_RS_PINS {none} $cfgmem
set_property PROGRAM.UNUSED_PIN_TERMINATION {pull-none} $cfgmem
set_property PROGRAM.BLANK_CHECK 0 $cfgmem
set_property PROGRAM.ERASE 1 $cfgmem
set_property PROGRAM.CFG_PROGRAM 1 $cfgmem
set_property PROGRAM.VERIFY 1 $cfgmem
set_property PROGRAM.CHECKSUM 0 $cfgmem
# The flash is reached through a small loader design Vivado puts into the FPGA first.
create_hw_bitstream -hw_device $dev [get_property PROGRAM.HW_CFGMEM_BITFILE $dev]
program_hw_devices $dev
refresh_hw_device $dev
program_hw_cfgmem -hw_cfgmem $cfgmem
close_hw_target
