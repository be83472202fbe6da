#!/bin/sh
# Attention as PyTorch exports it (scripts/gen_attention_models.py):
# nn.MultiheadAttention at opsets 13 and 17 with and without masks,
# TransformerEncoderLayer (post- and pre-norm), GPT blocks with a causal
# mask, a grouped-query block, a BERT-style encoder. For each model:
# `smelt opt -O2` makes exactly the expected number of Attention nodes
# (NAME.count; the causal ones with causal = 1) and no Softmax remains;
# the optimized file run on the reference interpreter, and the model run
# as a plan (-O3), both match PyTorch within 1e-4 (max abs error).
# usage: test_attention_models.sh SMELT_BINARY REPO_ROOT CACHE_DIR
# Exits 77 (a ctest skip) when PyTorch is missing.
set -u
SMELT=$1
ROOT=$2
CACHE=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
[ -n "$PY" ] || { echo "SKIP: no python3"; exit 77; }
"$PY" "$ROOT/scripts/gen_attention_models.py" "$CACHE"
rc=$?
[ "$rc" -eq 77 ] && { echo "SKIP: PyTorch is missing"; exit 77; }
[ "$rc" -eq 0 ] || { echo "FAIL: gen_attention_models.py exited $rc"; exit 1; }
pass=0
fail=0
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# same NAME OUT_DIR: every expected output within 1e-4 of OUT_DIR's y.npy
same() {
    "$SMELT" compare "$2/y.npy" "$CACHE/${1}_expected_0.npy" --atol 1e-4 \
        --rtol 0 >"$T/cmp" 2>&1 || { cat "$T/cmp"; return 1; }
}

for onnx in "$CACHE"/*.onnx; do
    name=$(basename "$onnx" .onnx)
    want=$(cat "$CACHE/$name.count")
    set --
    i=0
    while [ -f "$CACHE/${name}_input_$i.npy" ]; do
        set -- "$@" --input "$CACHE/${name}_input_$i.npy"
        i=$((i + 1))
    done
    if ! "$SMELT" opt -O2 "$onnx" -o "$T/$name.ir" >"$T/opt" 2>&1; then
        bad "$name: smelt opt -O2"; cat "$T/opt"; continue
    fi
    got=$(grep -c " = Attention(" "$T/$name.ir")
    if [ "$got" -ne "$want" ] || grep -q " = Softmax(" "$T/$name.ir"; then
        bad "$name: $got Attention nodes, expected $want"
        "$SMELT" opt -O2 "$onnx" --why-not-fused 2>&1 | grep "Attention" | head -5
        continue
    fi
    case $name in
    gpt | gqa | mha_am_bool*)
        n=$(grep " = Attention(" "$T/$name.ir" | grep -c "causal = 1")
        [ "$n" -eq "$want" ] || { bad "$name: $n causal of $want"; continue; } ;;
    esac
    rm -rf "$T/o1" "$T/o2"
    "$SMELT" run "$T/$name.ir" --reference "$@" --output-dir "$T/o1" \
        >/dev/null 2>&1 && same "$name" "$T/o1" ||
        { bad "$name: optimized graph, reference interpreter"; continue; }
    "$SMELT" run "$onnx" "$@" --output-dir "$T/o2" >/dev/null 2>&1 &&
        same "$name" "$T/o2" || { bad "$name: plan"; continue; }
    echo "ok   $name: $got Attention"
    pass=$((pass + 1))
done
echo "attention models: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
