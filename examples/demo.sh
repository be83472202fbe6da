#!/bin/sh
# `make demo`: a digit classifier trained in PyTorch, imported from ONNX,
# run by Smelt on handwritten digits it never saw, checked against PyTorch,
# drawn; a small MLP written in Smelt's text IR; then a classifier trained
# from random weights by Smelt itself and tried on held-out digits.
set -eu
SMELT=${1:-build/smelt}
BIN=$(dirname "$SMELT")
cd "$(dirname "$0")/.."
OUT=out/demo
mkdir -p "$OUT"
M=examples/digits_cnn.onnx
X=examples/digits_cnn_x.npy

indent() { sed 's/^/   /' "$@"; }

echo "== 1. What the model is (smelt info $M)"
echo "   A CNN trained by scripts/gen_examples.py on scikit-learn's handwritten"
echo "   digits and exported from PyTorch: its inputs, outputs, ops, weights."
"$SMELT" info "$M" >"$OUT/info.out"
indent "$OUT/info.out"
echo
echo "== 2. Classify 32 digits it never saw in training (examples/classify.c)"
echo "   A C program embedding Smelt: load the ONNX file, compile a plan for"
echo "   this CPU, run it, take the most likely class of each image."
"$BIN/classify" "$M" "$X" examples/digits_cnn_labels.npy >"$OUT/classify.out"
indent "$OUT/classify.out"
echo
echo "== 3. The same through the CLI, with timing (smelt run)"
echo "   The optimized, compiled plan; its outputs go to $OUT/probs.npy."
"$SMELT" run "$M" --input "image=$X" --output-dir "$OUT" >"$OUT/run.out" \
    2>"$OUT/run.err"
indent "$OUT/run.out" "$OUT/run.err"
echo
echo "== 4. Does Smelt compute what PyTorch computed? (smelt compare)"
status=0
"$SMELT" compare "$OUT/probs.npy" examples/digits_cnn_probs.npy \
    --atol 1e-5 --rtol 0 >"$OUT/compare.out" || status=$?
indent "$OUT/compare.out"
[ "$status" -eq 0 ] || { echo "demo: the outputs differ from PyTorch's" >&2; exit 1; }
echo
echo "== 5. The graph as a picture (smelt dot)"
if command -v dot >/dev/null 2>&1; then
    "$SMELT" dot "$M" --svg "$OUT/digits_cnn.svg" &&
        echo "   wrote $OUT/digits_cnn.svg (open it in a browser)"
else
    "$SMELT" dot "$M" -o "$OUT/digits_cnn.dot" &&
        echo "   wrote $OUT/digits_cnn.dot (apt-get install graphviz to render it)"
fi
echo
echo "== 6. A model written by hand: examples/mlp.ir, a 16-32-4 MLP in text IR"
echo "   (docs/IR.md describes the format), run on two inputs."
"$SMELT" run examples/mlp.ir --input x=examples/mlp_x.npy >"$OUT/mlp.out" \
    2>"$OUT/mlp.err"
indent "$OUT/mlp.out" "$OUT/mlp.err"
echo
T=examples/digits_train
echo "== 7. Train a digit classifier from random weights, in Smelt (smelt train)"
echo "   $T/init.onnx is a small CNN exported untrained from PyTorch."
echo "   Smelt differentiates it ahead of time, compiles forward, backward and"
echo "   the AdamW update into one plan, and runs it over 1,437 8x8 digits."
"$SMELT" train "$T/init.onnx" --input "x=$T/x_train.npy" \
    --target "$T/y_train.npy" --loss cross_entropy --optimizer adamw \
    --lr 3e-3 --epochs 15 --batch-size 32 --seed 1 --log-every 1000 \
    --save "$OUT/trained.onnx" >"$OUT/train.out"
grep -v '^epoch [0-9]*/[0-9]*  step' "$OUT/train.out" | indent
echo
echo "== 8. Classify 360 held-out digits with the model it just trained"
"$BIN/classify" "$OUT/trained.onnx" "$T/x_test.npy" "$T/y_test.npy" \
    >"$OUT/classify_trained.out"
indent "$OUT/classify_trained.out"
echo
echo "Next: README.md's tour of the CLI; \`make test\` runs the whole suite."
