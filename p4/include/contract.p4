// Generated from the device contract (smartnic-contract) by smartnic-p4's p4gen.
// Do not edit: regenerate with SMARTNIC_WRITE_P4=1 cargo test -p smartnic-p4 --test p4_sources

#ifndef SMARTNIC_CONTRACT_P4
#define SMARTNIC_CONTRACT_P4

const bit<16> ETHERTYPE_IPV4 = 0x800;
const bit<16> ETHERTYPE_SHIM = 0x88b5;
const bit<8> SHIM_KIND_INT_STACK = 0x1;
const bit<16> SHIM_MAX_HOPS = 0x10;
const bit<8> PROTO_TCP = 0x6;
const bit<8> PROTO_UDP = 0x11;
// The hop stack's depth: the most records a NIC accepts (a switch appends none past it).
#define SHIM_HOP_STACK 16

// The telemetry shim (EtherType 0x88B5): kind, flags, next EtherType, hop count.
header shim_t {
    bit<8> kind;
    bit<8> flags;
    bit<16> next_type;
    bit<16> hop_count;
}

// One INT hop record: switch ID and hop latency in ns.
header hop_t {
    bit<16> switch_id;
    bit<32> latency_ns;
}

#endif
