#!/bin/sh
# What -O3 makes of the real models (the optimizer issue's proof):
# resnet18 keeps no BatchNormalization and no standalone Relu (folded
# into and fused with its convolutions), and the GPT-style decoder has its
# LayerNorms and GELUs recognized: 9 LayerNormalization (4 blocks x 2 and
# the final one) and 4 GELUs, as Gelu nodes or as activation="gelu" on a
# FusedGemm, with no Erf of the decomposed form left.
# usage: test_opt_structure.sh SMELT_BINARY REPO_ROOT CACHE_DIR
# Exits 77 (a ctest skip) when python3 or torch is missing.
set -u
SMELT=$1
ROOT=$2
CACHE=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    echo "SKIP: no python3 to export the models with"
    exit 77
fi
"$PY" "$ROOT/scripts/gen_models.py" --out "$CACHE" resnet18 gpt
rc=$?
if [ "$rc" -eq 77 ]; then
    echo "SKIP: PyTorch is missing (see above)"
    exit 77
elif [ "$rc" -ne 0 ]; then
    echo "FAIL: scripts/gen_models.py exited $rc"
    exit 1
fi

# count OP FILE: how many OP nodes `smelt info` lists (0 when none)
count() {
    awk -v op="$1" '$1 == op { n = $2 } END { print n + 0 }' "$2"
}

# want WHAT GOT EXPECTED
want() {
    if [ "$2" -eq "$3" ]; then
        printf '  %-44s %s\n' "$1" "$2"
    else
        echo "FAIL: $1 is $2, expected $3"
        fail=1
    fi
}

# opt NAME EXT: NAME at -O3 written to $T/NAME.EXT
opt() {
    if ! "$SMELT" opt "$CACHE/$1.onnx" -O3 -o "$T/$1.$2" >"$T/opt.out" 2>&1; then
        echo "FAIL: smelt opt $1 -O3 failed:"
        sed 's/^/  | /' "$T/opt.out"
        exit 1
    fi
    cat "$T/opt.out"
}

# resnet18: `smelt info` of the optimized model (ONNX: quick to write).
opt resnet18 onnx
if ! "$SMELT" info "$CACHE/resnet18.onnx" >"$T/r0.info" ||
    ! "$SMELT" info "$T/resnet18.onnx" >"$T/r3.info"; then
    echo "FAIL: smelt info resnet18"
    exit 1
fi
relu0=$(count Relu "$T/r0.info")
if [ "$relu0" -eq 0 ]; then
    echo "FAIL: resnet18 has no Relu before optimizing: not the model expected"
    fail=1
fi
echo "resnet18 at -O3 (from $relu0 Relu, $(count Conv "$T/r0.info") Conv):"
want "BatchNormalization nodes" "$(count BatchNormalization "$T/r3.info")" 0
want "Relu nodes" "$(count Relu "$T/r3.info")" 0
# 17 convolutions absorb a Relu or a residual Add; the 3 downsample
# convolutions (BatchNorm folded in) stay Conv and feed a residual
want "FusedConv nodes" "$(count FusedConv "$T/r3.info")" 17
want "Conv nodes (downsample)" "$(count Conv "$T/r3.info")" 3

# gpt: the printed IR (its FusedElementwise bodies do not go to ONNX), so
# that a Gelu inside a fused body counts too.
opt gpt ir
ln=$(grep -c '= LayerNormalization(' "$T/gpt.ir")
gelu=$(grep -c '= Gelu(' "$T/gpt.ir")
gemm_gelu=$(grep '= FusedGemm(' "$T/gpt.ir" | grep -c 'activation = "gelu"')
echo "gpt at -O3 ($gelu Gelu nodes, $gemm_gelu FusedGemm with gelu):"
want "LayerNormalization nodes" "$ln" 9
want "GELUs (Gelu + FusedGemm activation=gelu)" $((gelu + gemm_gelu)) 4
want "Erf nodes" "$(grep -c '= Erf(' "$T/gpt.ir")" 0
exit $fail
