#!/bin/sh
# `smelt info`, `run` and `compare` as a user meets them: what they print,
# their exit status, and one clear error line for bad input.
# usage: test_verbs.sh SMELT_BINARY REPO_ROOT
set -u
SMELT=$1
ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE FRAGMENT -- CMD...: exit status CODE and FRAGMENT in the output
expect() {
    code=$1 frag=$2
    shift 3
    "$@" >"$T/out" 2>&1
    got=$?
    if [ "$got" -ne "$code" ]; then
        bad "$* exited $got, expected $code"; sed 's/^/  | /' "$T/out"; return
    fi
    if [ -n "$frag" ] && ! grep -qF -- "$frag" "$T/out"; then
        bad "$* output lacks '$frag'"; sed 's/^/  | /' "$T/out"; return
    fi
    ok
}

# npy FILE SHAPE DATA: a little-endian f32 .npy file, DATA as printf escapes
npy() {
    h="{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
    {
        printf '\223NUMPY\001\000\166\000%s' "$h"
        printf "%$((117 - ${#h}))s\n" ""
        # shellcheck disable=SC2059 # DATA is printf escapes on purpose
        printf "$3"
    } >"$1"
}
ONE='\000\000\200\077' TWO='\000\000\000\100' THREE='\000\000\100\100'
THREE5='\000\000\140\100' NAN='\000\000\300\177'
npy "$T/a.npy" "(3,)" "$ONE$TWO$THREE"
npy "$T/b.npy" "(3,)" "$ONE$TWO$THREE5"
npy "$T/c.npy" "(1, 3)" "$ONE$TWO$THREE"
npy "$T/n1.npy" "(2,)" "$ONE$NAN"
npy "$T/n2.npy" "(2,)" "$ONE$TWO"

# compare: identical, within, outside, shapes, NaN, options
expect 0 "max abs error 0" -- "$SMELT" compare "$T/a.npy" "$T/a.npy"
expect 0 "within tolerance (atol 1e-05, rtol 0.0001)" -- \
    "$SMELT" compare "$T/a.npy" "$T/a.npy"
expect 1 "max abs error 0.5 at [2] (3 vs 3.5)" -- \
    "$SMELT" compare "$T/a.npy" "$T/b.npy"
expect 1 "NOT within tolerance (atol 1e-05, rtol 0.0001): 1 of 3 elements" -- \
    "$SMELT" compare "$T/a.npy" "$T/b.npy"
expect 0 "max rel error 0.143" -- \
    "$SMELT" compare "$T/a.npy" "$T/b.npy" --atol 0.5 --rtol 0
expect 0 "within tolerance" -- \
    "$SMELT" compare "$T/a.npy" "$T/b.npy" --rtol 0.15 --atol 0
expect 1 "NOT within" -- \
    "$SMELT" compare "$T/a.npy" "$T/b.npy" --rtol 0.14 --atol 0
expect 1 "the shapes differ" -- "$SMELT" compare "$T/a.npy" "$T/c.npy"
expect 1 "max abs error inf at [1]" -- "$SMELT" compare "$T/n1.npy" "$T/n2.npy"
expect 1 "NaN in one file or both" -- "$SMELT" compare "$T/n1.npy" "$T/n1.npy"
expect 0 "within tolerance" -- "$SMELT" compare "$T/n1.npy" "$T/n1.npy" --equal-nan
expect 1 "missing.npy" -- "$SMELT" compare "$T/a.npy" "$T/missing.npy"
expect 2 "two .npy files are needed" -- "$SMELT" compare "$T/a.npy"
expect 2 "more than two .npy files" -- \
    "$SMELT" compare "$T/a.npy" "$T/a.npy" "$T/a.npy"
expect 2 "--atol needs a number >= 0, got '-1'" -- \
    "$SMELT" compare "$T/a.npy" "$T/a.npy" --atol -1
expect 2 "--rtol needs a number >= 0, got 'x'" -- \
    "$SMELT" compare "$T/a.npy" "$T/a.npy" --rtol x
expect 2 "option --rtol needs a value" -- \
    "$SMELT" compare "$T/a.npy" "$T/a.npy" --rtol
expect 2 "unknown option '--bogus'" -- "$SMELT" compare --bogus
expect 0 "--atol" -- "$SMELT" compare --help

# info on the bundled ONNX example and on text IR
M="$ROOT/examples/digits_cnn.onnx"
expect 0 "graph: digits_cnn" -- "$SMELT" info "$M"
expect 0 "  image: f32[batch,1,28,28]" -- "$SMELT" info "$M"
expect 0 "  probs: f32[batch,10]" -- "$SMELT" info "$M"
expect 0 "nodes: 11" -- "$SMELT" info "$M"
"$SMELT" info "$M" >"$T/info" 2>&1
grep -Eq '^  Relu +3$' "$T/info" && ok || bad "info: no 'Relu 3' line"
grep -Eq '^  Conv +2$' "$T/info" && ok || bad "info: no 'Conv 2' line"
# 8*1*3*3+8 + 16*8*3*3+16 + 784*64+64 + 64*10+10 weights (BatchNorm folded)
expect 0 "parameters: 52138 values in 8 constants (208.6 kB)" -- \
    "$SMELT" info "$M"
expect 0 "  probs: f32[batch,4]" -- "$SMELT" info "$ROOT/examples/mlp.ir"
expect 0 "  x: f32[batch,16]" -- "$SMELT" info "$ROOT/examples/mlp.ir"
expect 1 "nope.onnx" -- "$SMELT" info "$T/nope.onnx"
expect 2 "no FILE given" -- "$SMELT" info
expect 2 "more than one FILE" -- "$SMELT" info "$M" "$M"
expect 0 "show what a model is" -- "$SMELT" info --help

# the bundled example matches PyTorch through ONNX import
expect 0 "probs: f32[32,10]" -- "$SMELT" run "$M" \
    --input "image=$ROOT/examples/digits_cnn_x.npy" --output-dir "$T/o"
expect 0 "within tolerance (atol 1e-06, rtol 0)" -- "$SMELT" compare \
    "$T/o/probs.npy" "$ROOT/examples/digits_cnn_probs.npy" --atol 1e-6 --rtol 0

# --print-plan: each kernel step with its decision, on the forced ISA
expect 0 "conv_f32_scalar        [direct taps=72 packed]" -- \
    "$SMELT" run "$M" --isa scalar --print-plan \
    --input "image=$ROOT/examples/digits_cnn_x.npy"
expect 0 "[direct taps=9 packed]" -- "$SMELT" run "$M" --print-plan \
    --input "image=$ROOT/examples/digits_cnn_x.npy"
# ... and why the convolution took its path, at the end of its line
expect 0 "(few input channels: taps read straight from the input)" -- \
    "$SMELT" run "$M" --print-plan \
    --input "image=$ROOT/examples/digits_cnn_x.npy"
expect 0 "(32 input channels or fewer: Winograd's transforms and im2col" -- \
    "$SMELT" run "$M" --print-plan \
    --input "image=$ROOT/examples/digits_cnn_x.npy"

echo "test_verbs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
