// IPv4 forwarding shared by the switch programs: a ternary ACL (blackholes), the TTL,
// longest-prefix routes to ECMP groups, and the next hop chosen by the contract's ECMP
// hash (CRC-32/ISO-HDLC of the 13-byte flow key: v1model's crc32) as base + hash % count.
#ifndef SMARTNIC_FORWARD_P4
#define SMARTNIC_FORWARD_P4

#include "headers.p4"

control Forward(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action drop() {
        mark_to_drop(std);
    }

    action acl_drop() {
        mark_to_drop(std);
    }

    table acl {
        key = {
            hdr.ipv4.src_addr: ternary;
            hdr.ipv4.dst_addr: ternary;
            meta.l4_src_port: ternary;
            meta.l4_dst_port: ternary;
            hdr.ipv4.protocol: ternary;
        }
        actions = { acl_drop; NoAction; }
        default_action = NoAction();
    }

    action ecmp_group(bit<16> base, bit<16> count) {
        hash(meta.ecmp_select, HashAlgorithm.crc32, base,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, meta.l4_src_port, meta.l4_dst_port,
               hdr.ipv4.protocol },
             count);
    }

    // The same on the reversed key (addresses and ports swapped), for odd tiers: a CRC is
    // linear, so two tiers hashing the same key would make the same choice (polarization).
    action ecmp_group_rev(bit<16> base, bit<16> count) {
        hash(meta.ecmp_select, HashAlgorithm.crc32, base,
             { hdr.ipv4.dst_addr, hdr.ipv4.src_addr, meta.l4_dst_port, meta.l4_src_port,
               hdr.ipv4.protocol },
             count);
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { ecmp_group; ecmp_group_rev; drop; }
        default_action = drop();
    }

    action set_nhop(bit<9> port, mac_addr_t dmac) {
        std.egress_spec = port;
        hdr.ethernet.dst_addr = dmac;
        hdr.ethernet.src_addr = meta.switch_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ecmp_nhop {
        key = { meta.ecmp_select: exact; }
        actions = { set_nhop; drop; }
        default_action = drop();
    }

    apply {
        meta.l4_src_port = 0;
        meta.l4_dst_port = 0;
        if (hdr.l4.isValid()) {
            meta.l4_src_port = hdr.l4.src_port;
            meta.l4_dst_port = hdr.l4.dst_port;
        }
        if (acl.apply().hit) {
            return;
        }
        if (hdr.ipv4.ttl <= 1) {
            mark_to_drop(std);
            return;
        }
        if (ipv4_lpm.apply().hit) {
            ecmp_nhop.apply();
        }
    }
}

#endif
