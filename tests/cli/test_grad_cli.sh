#!/bin/sh
# smelt gradcheck and smelt grad as a user meets them: the per-value lines
# and the summary, exit 1 when a value fails, gradients written under
# sanitized names (the plan and the reference interpreter agreeing), and
# one clear error line for each bad request.
# usage: test_grad_cli.sh SMELT_BINARY REPO_ROOT
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

# A tanh layer whose weight's name needs sanitizing; x is an input.
cat >"$T/layer.ir" <<'IR'
graph layer(%x: f32[3,4]) {
  %"fc1/weight": f32[4,2] = const [0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8]
  %fc1.bias: f32[2] = const [0.05, -0.15]
  %h: f32[3,2] = MatMul(%x, %"fc1/weight")
  %y: f32[3,2] = Add(%h, %fc1.bias)
  %t: f32[3,2] = Tanh(%y)
  return %t
}
IR
X="$ROOT/tests/ops/MatMul_2d/input_0.npy" # f32[3,4]

# gradcheck: one line per value (initializers, then inputs), the summary
expect 0 "gradcheck: 3 passed, 0 failed" -- "$SMELT" gradcheck "$T/layer.ir"
grep -q '^ok    fc1/weight  \[4,2\]  max abs err [0-9.e+-]*  max rel err' "$T/out" && ok || bad "gradcheck line: $(cat "$T/out")"
expect 0 "gradcheck: 3 passed" -- "$SMELT" gradcheck "$T/layer.ir" --input "x=$X" --loss mean --samples 3 --seed 5
expect 0 "gradcheck: 1 passed, 0 failed" -- "$SMELT" gradcheck "$T/layer.ir" --wrt fc1.bias
# no tolerance: rounding alone fails it, naming the element, exit 1
expect 1 "gradcheck: 0 passed, 1 failed" -- "$SMELT" gradcheck "$T/layer.ir" --wrt x --atol 0 --rtol 0
grep -q '^FAIL  x .* element [0-9]*: analytic .*, numeric ' "$T/out" && ok || bad "FAIL line: $(cat "$T/out")"
# a relu at 0 is a kink: left out and said so
cat >"$T/kink.ir" <<'IR'
graph kink() {
  %a: f32[3] = const [0.0, 1.0, -1.0]
  %y: f32[3] = Relu(%a)
  return %y
}
IR
expect 0 "(1 of 3 elements at kinks, left out)" -- "$SMELT" gradcheck "$T/kink.ir"
expect 2 "--loss max: expected sum or mean" -- "$SMELT" gradcheck "$T/layer.ir" --loss max
expect 1 "no graph input or initializer is named 'nope'" -- "$SMELT" gradcheck "$T/layer.ir" --wrt nope
expect 1 "the graph has no input 'y'" -- "$SMELT" gradcheck "$T/layer.ir" --input "y=$X"
expect 0 "--samples" -- "$SMELT" gradcheck --help
# --dim binds a symbolic input dim as run does: without it the input to
# make for the check has no size
sed 's/f32\[3,4\]/f32[batch,4]/; s/f32\[3,2\]/f32[batch,2]/g' "$T/layer.ir" >"$T/sym.ir"
expect 1 "is f32[batch,4]: give a tensor for it" -- "$SMELT" gradcheck "$T/sym.ir"
expect 0 "x           [5,4]" -- "$SMELT" gradcheck "$T/sym.ir" --dim batch=5
expect 0 "gradcheck: 3 passed, 0 failed" -- "$SMELT" gradcheck "$T/sym.ir" --dim batch=5
expect 2 "no input has a dimension named 'seq'" -- "$SMELT" gradcheck "$T/sym.ir" --dim seq=5

# grad: the loss printed, every float initializer written as NAME.npy
expect 0 "loss: " -- "$SMELT" grad "$T/layer.ir" --input "x=$X" --output-dir "$T/g"
[ -f "$T/g/fc1_weight.npy" ] && [ -f "$T/g/fc1.bias.npy" ] && ok || bad "grad files: $(ls "$T/g")"
[ "$(ls "$T/g" | wc -l)" -eq 2 ] && ok || bad "grad wrote $(ls "$T/g")"
expect 0 "loss: " -- "$SMELT" grad "$T/layer.ir" --input "x=$X" --output-dir "$T/r" --reference
for f in fc1_weight fc1.bias; do
    expect 0 "" -- "$SMELT" compare "$T/g/$f.npy" "$T/r/$f.npy" --atol 1e-6 --rtol 1e-5
done
# the mean loss is the sum's divided by the 6 elements
"$SMELT" grad "$T/layer.ir" --input "x=$X" --output-dir "$T/m" --loss mean >"$T/mean" 2>&1 || bad "grad --loss mean failed"
"$SMELT" grad "$T/layer.ir" --input "x=$X" --output-dir "$T/s" >"$T/sum" 2>&1 || bad "grad failed"
ls_=$(sed -n 's/^loss: //p' "$T/sum") lm=$(sed -n 's/^loss: //p' "$T/mean")
awk -v s="$ls_" -v m="$lm" 'BEGIN { d = s / 6 - m; exit !(d < 1e-6 && d > -1e-6) }' && ok || bad "mean loss $lm is not sum $ls_ / 6"

# names that collide once sanitized are refused, naming both
cat >"$T/clash.ir" <<'IR'
graph clash() {
  %"a/b": f32[3] = const [1, 2, 3]
  %a_b: f32[3] = const [1, 2, 3]
  %y: f32[3] = Mul(%a_b, %"a/b")
  return %y
}
IR
expect 1 "initializers 'a/b' and 'a_b' would both write" -- "$SMELT" grad "$T/clash.ir" --output-dir "$T/c"
expect 2 "--output-dir D is required" -- "$SMELT" grad "$T/layer.ir" --input "x=$X"
expect 1 "no value for input 'x'" -- "$SMELT" grad "$T/layer.ir" --output-dir "$T/n"
cat >"$T/nofloat.ir" <<'IR'
graph nofloat(%x: f32[11]) {
  %y: f32[11] = Exp(%x)
  return %y
}
IR
expect 1 "no floating-point initializers" -- "$SMELT" grad "$T/nofloat.ir" --input "x=$ROOT/tests/ops/Exp_1d_odd/input_0.npy" --output-dir "$T/n"
expect 0 "--output-dir" -- "$SMELT" grad --help

echo "cli.grad: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
