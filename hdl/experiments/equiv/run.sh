#!/usr/bin/env bash
# Formal equivalence of two generated Verilog files of one block (Yosys equiv_make,
# equiv_simple, equiv_induct on the flattened designs): the check behind "the LUT figure moved
# but the logic did not" (see hdl/README.md, "Synthesis report"). Not a test: a proof run by
# hand when a synthesis figure moves without a design change.
#
# usage: run.sh GOLD.v GATE.v TOP [OLD=NEW ...]
#
# The block RAMs and ROMs (every module with a `reg ... name[...]` memory) become black boxes
# of the same name on both sides, so a RAM's module text must match (compare with `diff`).
# Each OLD=NEW renames a flattened signal-name prefix of GOLD (a sub-block moved in the
# hierarchy: `engine.=tower.engine.`), or, as `+NAME:WIDTH`, adds an input GOLD lacks that GATE
# has but must not use. SEQ (default 2) is how many clocks the proofs look back: raise it when
# a flop chain fed by a constant (a bank bit of a one-bank block) needs that long to settle.
# Prints `equivalent: N cells proven` or the unproven signals (exit 1).
set -euo pipefail
seq=${SEQ:-2}
[ $# -ge 3 ] || { sed -n '2,13p' "$0"; exit 2; }
gold=$(realpath "$1"); gate=$(realpath "$2"); top=$3; shift 3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
memories() { # the modules of $1 that hold a memory
  awk '/^module /{m=$2; sub(/\(.*/, "", m)} /^ *reg/ && /[A-Za-z_0-9] *\[[^]]*\] *;$/{print m}' "$1" | sort -u |
    sed 's/\$/\\$/g' | tr '\n' ' '
}
flat() { # verilog out.il
  local bb; bb=$(memories "$1")
  yosys -q -p "read_verilog $1; hierarchy -top $top; ${bb:+blackbox $bb;} proc; flatten; opt_clean; write_rtlil $2"
}
flat "$gold" "$work/gold.il"
flat "$gate" "$work/gate.il"
python3 - "$work" "$top" "$@" <<'EOF'
import re, sys
work, top, rules = sys.argv[1], sys.argv[2], sys.argv[3:]
def module(text, name):  # the one module `name` of an RTLIL file, renamed to its role
    body = text.split("\nmodule \\" + top + "\n")[1].split("\nend\n")[0]
    return "module \\" + name + "\n" + body + "\nend\n"
gold, gate = (open(f"{work}/{n}.il").read() for n in ("gold", "gate"))
extra = [r[1:] for r in rules if r.startswith("+")]
renames = [r.split("=", 1) for r in rules if not r.startswith("+")]
def rename(m):
    n = m.group(0)
    for old, new in renames:
        if n.startswith("\\" + old):
            return "\\" + new + n[len(old) + 1:]
    return n
g = re.sub(r"\\[^\s]+", rename, module(gold, "gold"))
for e in extra:
    name, width = e.split(":")
    g = g.replace("\nend\n", f"\n  wire width {width} input 100000 \\{name}\nend\n", 1)
boxes = gate.split("\nmodule \\" + top + "\n")[0]  # attributes and black boxes before the top
rest = gate.split("\nmodule \\" + top + "\n")[1].split("\nend\n", 1)[1]
open(f"{work}/both.il", "w").write(boxes + "\n" + g + module(gate, "gate") + rest)
EOF
yosys -p "read_rtlil $work/both.il; equiv_make gold gate eq; hierarchy -top eq;
  equiv_simple -seq $seq; equiv_induct -seq $seq; equiv_status" > "$work/log" 2>&1 || { tail -5 "$work/log"; exit 1; }
if ! grep -q "Of those cells [0-9]* are proven and 0 are unproven" "$work/log"; then
  grep -E "Unproven|Of those" "$work/log" | head -20; exit 1
fi
grep "Of those cells" "$work/log" | tail -1 | sed 's/.*cells \([0-9]*\) are proven.*/equivalent: \1 cells proven/'
