//! Bit-exact models of the lookup-table arithmetic (in progress).
