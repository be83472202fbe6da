#!/bin/sh
# One real model against PyTorch: generate it when the cache lacks it
# (scripts/gen_models.py), run it with `smelt run` (ONNX import, then the
# reference interpreter or the default compiled plan), and check every
# output with `smelt compare`: max abs error <= 1e-4 against what PyTorch
# computed. Modes O1, O2 and O3 first optimize the model at that level
# (`smelt opt -ON -o`) and run the result on the reference interpreter, so
# the optimizer is checked against PyTorch without the plan's kernels.
# The optimized model goes through ONNX (quick to write and read: mlp's
# text IR is 380 MB) unless FORMAT is ir, for a model whose optimized
# graph ONNX cannot carry.
# usage: run_model.sh SMELT_BINARY REPO_ROOT CACHE_DIR NAME
#                     [reference|plan|O0|O1|O2|O3] [onnx|ir]
# Exits 77 (a ctest skip) when python3 or torch is missing.
set -u
SMELT=$1
ROOT=$2
CACHE=$3
NAME=$4
MODE=${5:-reference}
FORMAT=${6:-onnx}
case $MODE in
reference) RUN_MODE=--reference ;;
plan) RUN_MODE= ;;
O[0-3]) RUN_MODE=--reference ;;
*) echo "run_model.sh: mode '$MODE' is not reference, plan or O0..O3"; exit 2 ;;
esac
ATOL=1e-4
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    echo "SKIP $NAME: no python3 to export the model with"
    exit 77
fi
"$PY" "$ROOT/scripts/gen_models.py" --out "$CACHE" "$NAME"
rc=$?
if [ "$rc" -eq 77 ]; then
    echo "SKIP $NAME: PyTorch is missing (see above)"
    exit 77
elif [ "$rc" -ne 0 ]; then
    echo "FAIL $NAME: scripts/gen_models.py exited $rc"
    exit 1
fi

set --
i=0
while [ -f "$CACHE/${NAME}_input_$i.npy" ]; do
    set -- "$@" --input "$CACHE/${NAME}_input_$i.npy"
    i=$((i + 1))
done
MODEL="$CACHE/$NAME.onnx"
case $MODE in
O[0-3])
    MODEL="$T/$NAME.$MODE.$FORMAT"
    if ! "$SMELT" opt "$CACHE/$NAME.onnx" "-$MODE" -o "$MODEL" \
        >"$T/opt.out" 2>&1; then
        echo "FAIL $NAME: smelt opt -$MODE failed"
        cat "$T/opt.out"
        exit 1
    fi
    cat "$T/opt.out"
    ;;
esac
# shellcheck disable=SC2086
if ! "$SMELT" run "$MODEL" "$@" $RUN_MODE --output-dir "$T/out" \
    >"$T/run.out" 2>"$T/run.err"; then
    echo "FAIL $NAME: smelt run failed"
    cat "$T/run.out" "$T/run.err"
    exit 1
fi
cat "$T/run.out"
ms=$(sed -n 's/^ran .* in \([0-9.]*\) ms.*/\1/p' "$T/run.err")

# `smelt run` prints one "NAME: dtype[dims] = ..." line per output, in order.
fail=0
i=0
for out in $(sed -n 's/^\([^ :]*\): .*/\1/p' "$T/run.out"); do
    exp="$CACHE/${NAME}_expected_$i.npy"
    if [ ! -f "$exp" ]; then
        echo "FAIL $NAME: output $i ($out) has no expected file $exp"
        fail=1
    elif "$SMELT" compare "$T/out/$out.npy" "$exp" --atol "$ATOL" --rtol 0 \
        >"$T/cmp" 2>&1; then
        err=$(sed -n 's/^max abs error \([^ ]*\).*/\1/p' "$T/cmp")
        printf 'model %-13s %-9s output %-7s max abs error %-9s (<= %s)  run %s ms\n' \
            "$NAME" "$MODE" "$out" "$err" "$ATOL" "$ms"
    else
        echo "FAIL $NAME: output $i ($out) differs from PyTorch's:"
        sed 's/^/  | /' "$T/cmp"
        fail=1
    fi
    i=$((i + 1))
done
if [ "$i" -eq 0 ] || [ -f "$CACHE/${NAME}_expected_$i.npy" ]; then
    echo "FAIL $NAME: the model has $i outputs but the cache has more" \
        "expected files"
    fail=1
fi
exit $fail
