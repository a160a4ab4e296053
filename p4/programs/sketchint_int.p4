// sketchint_int: an IPv4 switch with SketchINT's INT layer, as the device contract defines
// it. Ingress: drop parser errors, non-IPv4 and IPv4 with options; then Forward (ACL, TTL,
// LPM + ECMP). Egress: IntStack (push the shim at the first hop, append one hop record).
// The last switch before a host keeps the shim: the host's NIC strips it.
// Twin: smartnic_p4::twin::sketchint_int. Entries: smartnic_p4::tables.
#include <core.p4>
#include <v1model.p4>

#include "../include/headers.p4"
#include "../include/parser.p4"
#include "../include/forward.p4"
#include "../include/int_stack.p4"

control SwitchIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    Forward() fwd;

    action set_switch(bit<16> switch_id, mac_addr_t mac) {
        meta.switch_id = switch_id;
        meta.switch_mac = mac;
    }

    table switch_config {
        actions = { set_switch; }
        default_action = set_switch(0, 0);
    }

    apply {
        switch_config.apply();
        if (std.parser_error != error.NoError || !hdr.ipv4.isValid() || hdr.ipv4.ihl != 5) {
            mark_to_drop(std);
            return;
        }
        fwd.apply(hdr, meta, std);
    }
}

control SwitchEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    IntStack() int_stack;

    apply {
        int_stack.apply(hdr, meta, std);
    }
}

V1Switch(SwitchParser(), SwitchVerifyChecksum(), SwitchIngress(), SwitchEgress(),
         SwitchComputeChecksum(), SwitchDeparser()) main;
