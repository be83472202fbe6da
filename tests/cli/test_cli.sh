#!/bin/sh
# The smelt CLI as a user meets it: help, run, print, dot, and one clear
# error line with a non-zero exit for each kind of bad input.
# usage: test_cli.sh SMELT_BINARY REPO_ROOT
set -u
SMELT=$1
ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE FRAGMENT -- CMD...: exit status CODE and FRAGMENT in stderr+stdout
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

expect 0 "usage: smelt VERB" -- "$SMELT" --help
expect 0 "run a model" -- "$SMELT" --help
expect 0 "--output-dir" -- "$SMELT" run --help
expect 0 "--raw" -- "$SMELT" print --help
expect 0 "--svg" -- "$SMELT" dot --help
expect 2 "unknown verb 'frobnicate'" -- "$SMELT" frobnicate
expect 2 "usage" -- "$SMELT"
expect 2 "unknown option '--bogus'" -- "$SMELT" run --bogus
expect 2 "no FILE given" -- "$SMELT" print

# run: values, files, timing
X="x=$ROOT/examples/mlp_x.npy"
expect 0 "probs: f32[2,4] =" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "$X" --output-dir "$T/o"
[ -f "$T/o/probs.npy" ] && ok || bad "run did not write probs.npy"
expect 0 "probs: f32[2,4] =" -- "$SMELT" run "$ROOT/examples/mlp.ir" -i "$ROOT/examples/mlp_x.npy"

# print is canonical: printing the printed graph gives the same text
"$SMELT" print "$ROOT/examples/mlp.ir" >"$T/a.ir" 2>&1 || bad "print failed"
"$SMELT" print "$T/a.ir" >"$T/b.ir" 2>&1 || bad "print of printed failed"
cmp -s "$T/a.ir" "$T/b.ir" && ok || bad "print is not a fixed point"
grep -q "%h: f32\[batch,32\] = MatMul" "$T/a.ir" && ok || bad "print did not infer shapes"

# dot
expect 0 "" -- "$SMELT" dot "$ROOT/examples/mlp.ir" -o "$T/g.dot"
grep -q "digraph" "$T/g.dot" && ok || bad "dot output is not a digraph"
if command -v dot >/dev/null 2>&1; then
    expect 0 "" -- "$SMELT" dot "$ROOT/examples/mlp.ir" --svg "$T/g.svg"
    grep -q "<svg" "$T/g.svg" && ok || bad "no svg written"
fi

# bad input: one clear line, non-zero exit
expect 1 "nope.ir" -- "$SMELT" print "$T/nope.ir"
printf 'graph g(%%a: f32[2]) {\n  %%b = Relu(%%y)\n  return %%b\n}\n' >"$T/undef.ir"
expect 1 "undef.ir:2:13: error: undefined value %y" -- "$SMELT" print "$T/undef.ir"
printf 'graph g(%%a: f32[2], %%b: f32[3]) {\n  %%c = Add(%%a, %%b)\n  return %%c\n}\n' >"$T/shape.ir"
expect 1 "shape.ir:2:8: Add node defining %c: Add: cannot broadcast" -- "$SMELT" print "$T/shape.ir"
printf 'graph g(%%a: f32[2]) {\n  %%c = Frob(%%a)\n  return %%c\n}\n' >"$T/op.ir"
expect 1 "unknown op 'Frob'" -- "$SMELT" print "$T/op.ir"
printf 'graph g(%%a: f32[2]) {\n  %%c = LeakyRelu(%%a) {alpha = "x"}\n  return %%c\n}\n' >"$T/attr.ir"
expect 1 "attribute 'alpha' must be float, not string" -- "$SMELT" print "$T/attr.ir"
expect 1 "no value for input 'x'" -- "$SMELT" run "$ROOT/examples/mlp.ir"
expect 1 "has no input 'y'" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "y=$ROOT/examples/mlp_x.npy"
expect 1 "input 'x': expected f32[batch,16], got f32[2,4]" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "x=$ROOT/examples/mlp_y.npy"
printf 'not numpy' >"$T/bad.npy"
expect 1 "bad.npy: not an .npy file" -- "$SMELT" run "$ROOT/examples/mlp.ir" --input "x=$T/bad.npy"

# a loader's message names the file once
expect 1 "smelt: $ROOT/tests/onnx/bad/dup_attr.onnx: onnx: node 'sm' (Softmax): attribute 'axis' appears more than once" -- "$SMELT" print "$ROOT/tests/onnx/bad/dup_attr.onnx"
expect 1 "smelt: $ROOT/tests/ir_bad/loop_label.ir:3:32: error: sub-block 0 of Loop" -- "$SMELT" print "$ROOT/tests/ir_bad/loop_label.ir"

# a run that would never end stops at --timeout, naming the Loop
printf 'graph g() {\n  %%t: bool[] = const true\n  %%x: f32[] = const 1.0\n  %%r: f32[] = Loop(_, %%t, %%x) @spin body(%%i: i64[], %%c: bool[], %%v: f32[]) {\n    return %%c, %%v\n  }\n  return %%r\n}\n' >"$T/spin.ir"
expect 1 "node 'spin' (Loop): Loop: after" -- "$SMELT" run "$T/spin.ir" --timeout 0.1
expect 1 "time limit (timeout) of 100 ms" -- "$SMELT" run "$T/spin.ir" --reference --timeout 0.1
expect 1 "time limit (timeout) of 100 ms" -- "$SMELT" bench "$T/spin.ir" --runs 1 --warmup 0 --timeout 0.1
expect 1 "time limit (timeout) of 100 ms" -- "$SMELT" check "$T/spin.ir" --timeout 0.1
expect 2 "--timeout needs a number of seconds" -- "$SMELT" run "$T/spin.ir" --timeout 0

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
