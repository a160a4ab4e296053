# Stub Vivado for testing the board scripts without Vivado:
#
#   tclsh constraints/test/stub_vivado.tcl LOG SCRIPT [ARGS...]
#
# Defines every Vivado command build.tcl, flash.tcl and load.tcl use as a proc that appends
# one line to LOG (the command name and its arguments, tab-separated), sets argv/argc as
# `vivado -tclargs ARGS` would, and sources SCRIPT. A command that is not stubbed is an
# error (the `unknown` handler), so a script that calls something new fails until the stub
# and its test know it.

if {[llength $argv] < 2} {
    puts stderr "usage: tclsh stub_vivado.tcl LOG SCRIPT \[ARGS...\]"
    exit 2
}
set stub_log [open [lindex $argv 0] w]
set stub_script [lindex $argv 1]

# Records one call.
proc stub_record {name args} {
    puts $::stub_log [join [concat [list $name] $args] "\t"]
    flush $::stub_log
}

# Commands that only act: recorded, return nothing.
foreach cmd {
    create_project set_property create_ip generate_target synth_ip read_verilog read_xdc
    synth_design opt_design place_design route_design report_utilization
    report_timing_summary write_bitstream write_cfgmem open_hw_manager connect_hw_server
    open_hw_target close_hw_target create_hw_cfgmem create_hw_bitstream program_hw_devices
    refresh_hw_device program_hw_cfgmem
} {
    proc $cmd {args} [format {stub_record %s {*}$args} $cmd]
}

# Commands whose result the scripts use: recorded, return what Vivado would name.
proc current_project {args} { stub_record current_project {*}$args; return project_1 }
proc current_design {args} { stub_record current_design {*}$args; return design_1 }
proc get_ips {args} { stub_record get_ips {*}$args; return [lindex $args end] }
proc get_hw_devices {args} { stub_record get_hw_devices {*}$args; return {xc7vx690t_0} }
proc current_hw_device {args} { stub_record current_hw_device {*}$args; return {xc7vx690t_0} }
proc get_cfgmem_parts {args} { stub_record get_cfgmem_parts {*}$args; return [list [lindex $args end]] }
proc get_property {args} {
    stub_record get_property {*}$args
    switch -- [lindex $args 0] {
        PROGRAM.HW_CFGMEM { return cfgmem_0 }
        PROGRAM.HW_CFGMEM_BITFILE { return cfgmem_loader.bit }
        default { error "stub get_property: no value for [lindex $args 0]" }
    }
}

# Anything else is a command the stubs do not know.
rename unknown stub_tcl_unknown
proc unknown {args} {
    error "stub vivado: unknown command `[lindex $args 0]` (add it to stub_vivado.tcl and its test)"
}

set argv [lrange $argv 2 end]
set argc [llength $argv]
source $stub_script
close $stub_log
