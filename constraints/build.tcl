# Vivado non-project build of the VC709 board (Vivado 2023.x or later).
#
#   vivado -mode batch -source constraints/build.tcl -tclargs HDL_DIR OUT_DIR
#
# HDL_DIR holds the generated Verilog (*.v, the board top smartnic_vc709 among them), the
# generated XDC and board_params.tcl (both written by `board-xdc` from the contract);
# OUT_DIR receives the vendor IP, the reports and the bitstream. `scripts/board build`
# fills HDL_DIR and calls this script.

if {[llength $argv] != 2} {
    error "usage: vivado -mode batch -source build.tcl -tclargs HDL_DIR OUT_DIR"
}
lassign $argv hdl_dir out_dir
source [file join $hdl_dir board_params.tcl]
file mkdir $out_dir
set ip_dir [file join $out_dir ip]
file mkdir $ip_dir

# An in-memory project carries the part for create_ip; everything else is non-project.
create_project -in_memory -part $board_part
set_property target_language Verilog [current_project]

# DMA/Bridge Subsystem for PCI Express (XDMA, PG195) on the Virtex-7 XT Gen3 block: x8 at
# 8.0 GT/s from the 100 MHz edge-connector clock, 256-bit AXI-Stream at 250 MHz, two
# card-to-host channels (wnum: the readout stream and the record ring, from the contract;
# the host-to-card side cannot be zero, one channel is left unused), and the AXI4-Lite master on BAR0 onto the register file the driver reads. The
# PCIe block at X0Y1 is the one next to quads 114/115 (Xilinx's VC709 Gen3 x8 example XDC).
# CONFIG names as in PG195's TCL examples and Vivado's xdma component.
proc create_xdma {ip_dir} {
    global pci_vendor_id pci_device_id axil_bar_size axil_bar_scale c2h_channels
    create_ip -name xdma -vendor xilinx.com -library ip -module_name xdma_0 -dir $ip_dir
    set_property -dict [list \
        CONFIG.mode_selection {Advanced} \
        CONFIG.pcie_blk_locn {X0Y1} \
        CONFIG.pl_link_cap_max_link_width {X8} \
        CONFIG.pl_link_cap_max_link_speed {8.0_GT/s} \
        CONFIG.ref_clk_freq {100_MHz} \
        CONFIG.axi_data_width {256_bit} \
        CONFIG.axisten_freq {250} \
        CONFIG.xdma_axi_intf_mm {AXI_Stream} \
        CONFIG.xdma_wnum_chnl $c2h_channels \
        CONFIG.xdma_rnum_chnl {1} \
        CONFIG.axilite_master_en {true} \
        CONFIG.axilite_master_size $axil_bar_size \
        CONFIG.axilite_master_scale $axil_bar_scale \
        CONFIG.vendor_id $pci_vendor_id \
        CONFIG.pf0_device_id $pci_device_id \
        CONFIG.pf0_subsystem_vendor_id $pci_vendor_id \
        CONFIG.pf0_subsystem_id $pci_device_id \
        CONFIG.plltype {QPLL1} \
    ] [get_ips xdma_0]
    generate_target all [get_ips xdma_0]
    synth_ip [get_ips xdma_0]
}

# 10G Ethernet Subsystem (axi_10g_ethernet, PG157): MAC + 10GBASE-R PCS/PMA, no management
# interface, no auto-negotiation or FEC, 156.25 MHz reference. Port 0 carries the shared
# logic (SupportLevel 1: the QPLL and reference clock buffer of quad 113); ports 1..3 use it
# (SupportLevel 0). CONFIG names as in the NetFPGA SUME and other public non-project scripts.
proc create_eth {ip_dir name shared} {
    create_ip -name axi_10g_ethernet -vendor xilinx.com -library ip -module_name $name -dir $ip_dir
    set_property -dict [list \
        CONFIG.Management_Interface {false} \
        CONFIG.base_kr {BASE-R} \
        CONFIG.SupportLevel [expr {$shared ? 1 : 0}] \
        CONFIG.autonegotiation {0} \
        CONFIG.fec {0} \
        CONFIG.Statistics_Gathering {0} \
        CONFIG.RefClkRate {156.25} \
    ] [get_ips $name]
    generate_target all [get_ips $name]
    synth_ip [get_ips $name]
}

create_xdma $ip_dir
create_eth $ip_dir eth_shared 1
create_eth $ip_dir eth_port 0

set verilog [lsort [glob -nocomplain -directory $hdl_dir *.v]]
if {[llength $verilog] == 0} {
    error "no generated Verilog (*.v) in $hdl_dir"
}
read_verilog $verilog
read_xdc [file join $hdl_dir $board_xdc]

synth_design -top $board_top -part $board_part
opt_design
place_design
route_design
report_utilization -file [file join $out_dir utilization.rpt]
report_timing_summary -file [file join $out_dir timing_summary.rpt]
write_bitstream -force [file join $out_dir ${board_top}.bit]
