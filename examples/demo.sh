#!/bin/sh
# `make demo`: load the bundled example, show it, run it, draw it.
set -eu
SMELT=${1:-build/smelt}
cd "$(dirname "$0")/.."
mkdir -p out/demo

echo "== examples/mlp.ir: a 16-32-4 MLP classifier (text IR, weights inline)"
"$SMELT" print examples/mlp.ir | grep -v ' = const ' | sed 's/^/   /'
echo
echo "== run it on a batch of two inputs (examples/mlp_x.npy)"
"$SMELT" run examples/mlp.ir --input x=examples/mlp_x.npy --output-dir out/demo
echo
echo "== draw it"
if command -v dot >/dev/null 2>&1; then
    "$SMELT" dot examples/mlp.ir --svg out/demo/mlp.svg && echo "wrote out/demo/mlp.svg"
else
    "$SMELT" dot examples/mlp.ir -o out/demo/mlp.dot && echo "wrote out/demo/mlp.dot"
fi
