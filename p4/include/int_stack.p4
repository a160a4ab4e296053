// SketchINT's INT layer at egress: push the shim at the first hop, append this switch's
// hop record (switch ID, hop latency in ns from the switch's own clock) while the stack
// is below the contract's limit.
#ifndef SMARTNIC_INT_STACK_P4
#define SMARTNIC_INT_STACK_P4

#include "headers.p4"

control IntStack(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    apply {
        if (!hdr.shim.isValid()) {
            hdr.shim.setValid();
            hdr.shim.kind = SHIM_KIND_INT_STACK;
            hdr.shim.flags = 0;
            hdr.shim.next_type = hdr.ethernet.ether_type;
            hdr.shim.hop_count = 0;
            hdr.ethernet.ether_type = ETHERTYPE_SHIM;
        }
        if (hdr.shim.hop_count < SHIM_MAX_HOPS) {
            hdr.new_hop.setValid();
            hdr.new_hop.switch_id = meta.switch_id;
            // v1model timestamps are in microseconds.
            hdr.new_hop.latency_ns =
                (bit<32>)((std.egress_global_timestamp - std.ingress_global_timestamp) * 1000);
            hdr.shim.hop_count = hdr.shim.hop_count + 1;
        }
    }
}

#endif
