#!/usr/bin/env bash
# Yosys `synth_xilinx -family xc7` LUT / block-RAM cost of parity-packed TowerSketch arrays
# and of the bit-split layout the pipeline uses, against one-memory arrays (see hdl/README.md, "Block RAM
# and the parity bits"). Not a test: a measurement behind a design decision.
set -euo pipefail
cd "$(dirname "$0")"
row() { # file module params...
  local f=$1 m=$2; shift 2
  local out
  out=$(yosys -p "read_verilog $f; chparam $* $m; synth_xilinx -family xc7 -top $m; stat" 2>&1 |
    sed -n '/Printing statistics/,$p')
  local lut ramb36 ramb18
  cells() { echo "$out" | awk -v re="$1" '$1 ~ re && !seen[$0]++ {s += $2} END {print s + 0}'; }
  lut=$(cells '^LUT[1-6]$')
  ramb36=$(cells '^RAMB36E1$')
  ramb18=$(cells '^RAMB18E1$')
  printf '%-10s %-28s %6s LUT %4s RAMB36 %3s RAMB18\n' "$m" "$*" "$lut" "$ramb36" "$ramb18"
}
row unpacked.v unpacked -set W 8 -set A 16
row unpacked.v unpacked -set W 16 -set A 15
row unpacked.v unpacked -set W 32 -set A 14
row unpacked.v unpacked -set W 16 -set A 15 -set SPLIT 1
row unpacked.v unpacked -set W 32 -set A 14 -set SPLIT 1
row sliced.v sliced -set W 8 -set A 16
row sliced.v sliced -set W 16 -set A 15
row sliced.v sliced -set W 32 -set A 14
row packed.v packed -set W 8 -set A 16
row packed.v packed -set W 16 -set A 15
row memory.v memory -set W 72 -set D 7168 -set A 13
row memory.v memory -set W 144 -set D 3584 -set A 12
row memory.v memory -set W 72 -set D 7282 -set A 13
