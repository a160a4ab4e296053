// Headers and metadata every switch program shares. The contract's own headers (the
// telemetry shim, the hop record) and constants come from the generated contract.p4.
#ifndef SMARTNIC_HEADERS_P4
#define SMARTNIC_HEADERS_P4

#include "contract.p4"

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      tos;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

// The first four bytes of TCP and UDP: the ports, all the flow key needs.
header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

struct headers_t {
    ethernet_t             ethernet;
    shim_t                 shim;
    hop_t[SHIM_HOP_STACK]  hops;     // the records the packet arrived with
    hop_t                  new_hop;  // this switch's record, emitted after them
    ipv4_t                 ipv4;
    l4_ports_t             l4;
}

struct metadata_t {
    bit<16>    switch_id;
    mac_addr_t switch_mac;
    bit<16>    hops_left;     // parser: hop records still to extract
    bit<16>    l4_src_port;   // 0 unless an unfragmented TCP/UDP packet
    bit<16>    l4_dst_port;
    bit<16>    ecmp_select;   // index into ecmp_nhop
}

error { HopStackTooDeep }

#endif
