#!/bin/sh
# smelt profile (docs/PROFILING.md): the table, the Chrome trace and the
# memory history of real models checked against their plans
# (check_profile.py), --by op, and bad arguments failing before any run.
# usage: test_profile.sh SMELT_BINARY REPO_ROOT
set -u
SMELT=$1
ROOT=$2
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# the peak probe's cache stays in the test's folder
export XDG_CACHE_HOME="$T/cache"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# profile MODEL THREADS ARGS...: JSON table, trace and memory, all checked
profile() {
    model=$1 threads=$2
    shift 2
    if "$SMELT" profile "$model" -j "$threads" --runs 4 --warmup 1 --json -q \
        --trace "$T/t.json" --memory "$T/m.json" "$@" >"$T/p.json" 2>"$T/err"; then
        if python3 "$ROOT/tests/profile/check_profile.py" "$T/p.json" \
            "$T/t.json" "$T/m.json" "$threads"; then ok; else bad "$model -j $threads"; fi
    else
        bad "smelt profile $model -j $threads failed"; sed 's/^/  | /' "$T/err"
    fi
}

profile "$ROOT/examples/digits_cnn.onnx" 1
profile "$ROOT/examples/digits_cnn.onnx" 2 --dim batch=16
profile "$ROOT/examples/mlp.ir" 2 --dim batch=2048
profile "$ROOT/tests/graphs/cnn_small.ir" 1 --peak-gflops 100 --peak-gbs 10
profile "$ROOT/tests/graphs/tiny.ir" 1 --dim batch=3

# the text table: a row per node, the overhead row, the summary
"$SMELT" profile "$ROOT/examples/digits_cnn.onnx" --runs 3 -q >"$T/out" 2>&1 || bad "text profile failed"
for frag in "(overhead)" "p99" "GFLOP/s" "planned peak" "/0/Conv"; do
    grep -qF -- "$frag" "$T/out" && ok || bad "profile output lacks '$frag'"
done
# --by op: one row per op and kernel
"$SMELT" profile "$ROOT/examples/digits_cnn.onnx" --runs 2 --by op --json -q >"$T/op.json" 2>/dev/null || bad "--by op failed"
python3 -c "
import json, sys
t = json.load(open('$T/op.json'))
keys = [(r['op'], r['kernel']) for r in t['rows']]
sys.exit(t['by'] != 'op' or len(keys) != len(set(keys)) or
         not any(r['steps'] > 1 for r in t['rows']))" && ok || bad "--by op rows"
# the peaks were measured once and cached
ls "$T/cache/smelt/"peaks-*t.txt >/dev/null 2>&1 && ok || bad "no cached peaks"

# --quiet: nothing on stderr (progress goes there, results to stdout)
for verb in "profile" "bench" "check"; do
    "$SMELT" $verb "$ROOT/tests/graphs/cnn_small.ir" --quiet >"$T/out" 2>"$T/err"
    [ -s "$T/out" ] && [ ! -s "$T/err" ] && ok || { bad "$verb --quiet wrote to stderr"; sed 's/^/  | /' "$T/err"; }
done

# bad arguments fail before running anything
expect_fail() {
    code=$1 frag=$2
    shift 2
    "$@" >"$T/out" 2>&1
    got=$?
    if [ "$got" -eq "$code" ] && grep -qF -- "$frag" "$T/out" && ! grep -q latency "$T/out"; then ok; else
        bad "$* exited $got (expected $code with '$frag')"; sed 's/^/  | /' "$T/out"; fi
}
expect_fail 2 "--by layer: expected op or node" "$SMELT" profile "$ROOT/examples/mlp.ir" --by layer
expect_fail 1 "--memory $T/no/dir/m.json" "$SMELT" profile "$ROOT/examples/mlp.ir" --memory "$T/no/dir/m.json"
expect_fail 1 "--trace $T/no/dir/t.json" "$SMELT" profile "$ROOT/examples/mlp.ir" --trace "$T/no/dir/t.json"
expect_fail 2 "takes no --profile option" "$SMELT" profile "$ROOT/examples/mlp.ir" --profile

echo "profile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
