#!/bin/sh
# The sweep's generator and harness (bench/sweep) end to end on two tiny
# models with one timed run at 1 thread: the models export, Smelt's
# outputs match PyTorch's, and the report has its table (one row per
# model, twelve columns) and its summary. It asserts the report's shape,
# never a timing. Exits 77 (a ctest skip) when PyTorch or ONNX Runtime
# is missing.
# usage: test_sweep.sh SMELT_BINARY REPO_ROOT
set -u
SMELT=$1
ROOT=$2
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
"$PY" -c "import torch, torchvision, onnx" 2>/dev/null ||
    { echo "SKIP: PyTorch, torchvision or onnx is missing"; exit 77; }
node "$ROOT/bench/peers/ort_bench.js" --info >/dev/null 2>&1 ||
    { echo "SKIP: ONNX Runtime is missing (sh bench/peers/setup.sh)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if ! "$PY" "$ROOT/bench/sweep/sweep.py" --smelt "$SMELT" --dir "$T" \
    --models tiny --threads 1 --runs 1 --warmup 0 --rounds 1 \
    --markdown "$T/report.md" >"$T/out" 2>"$T/err"; then
    echo "FAIL: sweep.py exited non-zero"
    cat "$T/out" "$T/err"
    exit 1
fi
cat "$T/out"
fail=0
check() {
    if ! eval "$2"; then
        echo "FAIL: $1"
        fail=1
    fi
}
H='| model | opset | GFLOP | vs PyTorch | Smelt ms | ORT ms | Smelt / ORT | min ratio | CPU ratio | Smelt MiB | ORT MiB | Smelt / ORT MiB |'
check "the table's header" 'grep -qxF "$H" "$T/out"'
for m in tiny_cnn_r16_b2 tiny_mlp_b3; do
    row=$(grep "^| $m |" "$T/out")
    check "a row for $m" '[ -n "$row" ]'
    cols=$(printf '%s\n' "$row" | awk -F'|' '{print NF - 2}')
    check "$m's row has 12 columns (has $cols)" '[ "$cols" = 12 ]'
    check "$m matches PyTorch" 'printf "%s\n" "$row" | grep -q "| ok "'
    check "$m has both latencies" '! printf "%s\n" "$row" | grep -q "n/a"'
done
check "the summary's header" 'grep -q "^| models | n | time geomean | time worst | above 0.9 |" "$T/out"'
check "the summary's all row over 2 models" 'grep -q "^| all | 2 |" "$T/out"'
check "each peer's configuration" 'grep -q "^ONNX Runtime: onnxruntime-node" "$T/out" && grep -q "^PyTorch (the outputs. reference): torch .*BLAS" "$T/out"'
check "the Markdown copy" 'cmp -s "$T/out" "$T/report.md"'
[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
