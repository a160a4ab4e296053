// Parser, deparser and checksum controls shared by the switch programs.
//
// Ethernet, then the shim and its hop records if the EtherType says so, then IPv4, then
// the ports of an option-less, unfragmented TCP or UDP packet. A stack deeper than the
// contract allows is a parser error; ingress drops every packet with a parser error.
#ifndef SMARTNIC_PARSER_P4
#define SMARTNIC_PARSER_P4

#include "headers.p4"

parser SwitchParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t std) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_SHIM: parse_shim;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_shim {
        packet.extract(hdr.shim);
        meta.hops_left = hdr.shim.hop_count;
        transition select(hdr.shim.kind) {
            SHIM_KIND_INT_STACK: check_hops;
            default: accept;
        }
    }

    state check_hops {
        verify(hdr.shim.hop_count <= SHIM_MAX_HOPS, error.HopStackTooDeep);
        transition parse_hops;
    }

    state parse_hops {
        transition select(meta.hops_left) {
            0: after_hops;
            default: parse_hop;
        }
    }

    state parse_hop {
        packet.extract(hdr.hops.next);
        meta.hops_left = meta.hops_left - 1;
        transition parse_hops;
    }

    state after_hops {
        transition select(hdr.shim.next_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, PROTO_TCP): parse_l4;
            (4w5, 13w0, PROTO_UDP): parse_l4;
            default: accept;
        }
    }

    state parse_l4 {
        packet.extract(hdr.l4);
        transition accept;
    }
}

control SwitchVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

// The IPv4 header checksum over the 20-byte header (the programs route option-less IPv4 only).
control SwitchComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum,
            HashAlgorithm.csum16);
    }
}

control SwitchDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.shim);
        packet.emit(hdr.hops);
        packet.emit(hdr.new_hop);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

#endif
